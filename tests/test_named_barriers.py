"""Named barriers whose count does not match the threads that reach them (`model.named`, rule
`named-barrier-count`), found on held-out planted defects: `bar.sync id, n` was taken as ordering
every thread of the role that executes it whatever `n`, and a count no thread set could fill hung
in silence.

Fixtures are TileLang's own output for `tests/fixtures/causes/named_count.py` (the author's count
is taken as given): `named_exact` (clean), `named_generations` (count 64 for 128 threads: a race the
barrier does not order) and `named_never` (count 256 for 128 threads: a hang); the reduction
template's `NamedBarrier<n>` is checked on `block_reduce` with its count edited.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, check_text, run_check
from pipelint.model import KernelModel
from pipelint.model.named import overfull
from pipelint.pluginhost import load_plugins

FIXTURES = Path(__file__).parent / "fixtures"
HOST = load_plugins()


def _errors(path: Path) -> list[tuple[str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    return sorted((f.rule, f.location.line) for f in report.findings if f.severity.value == "error")


def _text_errors(text: str) -> list[tuple[str, int, str]]:
    _, findings, _ = check_text("k.cu", text, HOST)
    return sorted((f.rule, f.location.line, f.message) for f in findings if f.severity.value == "error")


def _model(text: str) -> KernelModel:
    parsed = parse(text)
    [func] = parsed.unit.kernels()
    return KernelModel(func, parsed.lines, parsed.registry)


def test_a_count_equal_to_the_threads_that_arrive_orders_them() -> None:
    assert _errors(FIXTURES / "kernels" / "named_exact_sm_80_s0.cu") == []


def test_a_count_below_the_threads_that_arrive_orders_nothing() -> None:
    # the first 64 of the 128 pass together: the read of S[tx ^ 64] races with the other half's store
    assert _errors(FIXTURES / "handwritten" / "named_generations_sm_80_s0.cu") == [
        ("named-barrier-count", 31), ("shared-race", 33)]


def test_a_count_no_thread_set_can_fill_hangs() -> None:
    assert _errors(FIXTURES / "handwritten" / "named_never_sm_80_s0.cu") == [("named-barrier-count", 30)]


def test_overfull_is_decided_per_statement_from_its_exact_threads() -> None:
    text = (FIXTURES / "handwritten" / "named_generations_sm_80_s0.cu").read_text()
    model = _model(text)
    named = [ev for ev in model.trace.all_events() if ev.kind.value == "named_sync"]
    assert named and all(overfull(ev) for ev in named)
    exact = _model((FIXTURES / "kernels" / "named_exact_sm_80_s0.cu").read_text())
    assert not any(overfull(ev) for ev in exact.trace.all_events())


def test_a_second_barrier_only_one_warp_group_reaches_hangs_there() -> None:
    # both groups meet at the first `bar.sync 1, 256`; group 1 alone reaches the second: 384
    # arrivals with count 256 are not a whole number of generations, and the short one is line 35
    text = (FIXTURES / "kernels" / "wg_named_all_sm_80_s0.cu").read_text()
    lines = text.splitlines()
    assert lines[33].strip() == "tl::__sync_thread_partial(1, 256);"
    lines[33] += " tl::__sync_thread_partial(1, 256);"
    found = _text_errors("\n".join(lines) + "\n")
    assert [(r, line) for r, line, _ in found if r == "named-barrier-count"] == [("named-barrier-count", 34)]
    assert "384 arrivals with that count" in found[0][2]


@pytest.mark.parametrize("count, expected", [(128, []), (64, ["named-barrier-count"]), (256, ["named-barrier-count"])])
def test_a_reduction_templates_named_barrier_is_checked_like_the_users(count: int, expected: list[str]) -> None:
    # `tl::AllReduce<..., 128, ..., tl::NamedBarrier<N>>` run by 128 threads: N = 128 is exact
    text = (FIXTURES / "kernels" / "block_reduce_sm_80_s0.cu").read_text()
    text = text.replace("tl::NamedBarrier<128>", f"tl::NamedBarrier<{count}>")
    rules = sorted({r for r, _, _ in _text_errors(text) if r == "named-barrier-count"})
    assert rules == expected


def test_two_groups_with_barriers_of_their_own_are_each_ordered() -> None:
    assert _errors(FIXTURES / "kernels" / "named_ids_sm_80_s0.cu") == []


def test_one_id_for_two_concurrent_groups_orders_neither() -> None:
    # both warp groups `bar.sync 1, 128` with nothing ordering one group's arrival before the
    # other's: a generation may take warps of both, so neither group's read of S[tx ^ 64] is
    # ordered after the store it reads (`model.mixing`, decided on the simulation's vector clocks)
    path = FIXTURES / "handwritten" / "named_ids_shared_sm_80_s0.cu"
    errors = _errors(path)
    assert [e for e in errors if e[0] == "named-barrier-count"] == [("named-barrier-count", 35),
                                                                     ("named-barrier-count", 40)]
    assert ("shared-race", 33) in errors
    model = _model(path.read_text())
    assert sorted(model.mixed_named) == sorted(id(ev.node) for ev in model.trace.all_events()
                                               if ev.kind.value == "named_sync")


def test_one_id_for_two_groups_in_turn_is_not_mixed() -> None:
    # the same shared id, but a __syncthreads between the groups' uses orders one before the other
    text = (FIXTURES / "handwritten" / "named_ids_shared_sm_80_s0.cu").read_text()
    lines = text.splitlines()
    i = next(n for n, line in enumerate(lines) if line.strip() == "} else {")
    lines[i] = "  }  __syncthreads();  if (((int)threadIdx.x) >= 128) {"
    found = _text_errors("\n".join(lines) + "\n")
    assert [r for r, _, _ in found if r == "named-barrier-count"] == []


def test_a_hang_names_the_other_count_of_the_same_barrier():
    """Group 0 counts itself on barrier 1 (128) while group 1 waits for 256 on the same id (planted
    D25 of the eleventh session): the hang at line 34 names line 29's count, the likely slip."""
    text = (FIXTURES / "kernels" / "wg_named_all_sm_80_s0.cu").read_text().split("\n")
    assert text[28].strip() == "tl::__sync_thread_partial(1, 256);"
    text[28] = text[28].replace("(1, 256)", "(1, 128)")
    _, findings, _ = check_text("k.cu", "\n".join(text), HOST)
    [hang] = [f for f in findings if f.rule == "named-barrier-count"]
    assert hang.location.line == 34 and "line 29 names barrier 1 with count 128" in hang.message
    assert [r.line for r in hang.related if r.message == "barrier 1 with count 128"] == [29]
