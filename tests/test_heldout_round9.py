"""Causes found by the fourteenth session's held-out round 9 (issue 31): fifty new TileLang kernels
and seventy published hand-written ones, each cause on a kernel of the project's own with its twin.

* one thread waits on the TMA load's mbarrier and a block barrier hands the phase on: the barrier
  was claimed redundant (its removal adds no plain race, only a protocol one);
* a 1024-thread kernel whose warp specialisation adds a producer group (`__launch_bounds__(1152)`):
  clamped to 1024 threads, its counts fell short (13 false errors);
* hand-written idioms: `int tid = threadIdx.x;` (a value shared by all threads, before), inline-asm
  `bar.sync` / `bar.arrive`, `__syncthreads_or`, a block size the text implies
  (tests/functional/local_thread_index.cu, asm_barriers.cu), and a solver exception that escaped.
"""
from __future__ import annotations

from pathlib import Path

from helpers import KERNELS

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
HANDWRITTEN = Path(__file__).parent / "fixtures" / "handwritten"


def _findings(path: Path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def test_a_barrier_that_hands_one_threads_observed_phase_on_is_needed():
    assert _findings(KERNELS / "one_waiter_sm_90_s0.cu") == []
    parsed = parse((KERNELS / "one_waiter_sm_90_s0.cu").read_text())
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    assert [n.span.line for n in model.cp_async.redundant_barriers()] == []


def test_without_that_barrier_the_other_threads_read_before_the_phase():
    assert _findings(HANDWRITTEN / "one_waiter_unpublished_sm_90_s0.cu") == [
        ("mbarrier-release", "error", 54), ("tma-read-before-wait", "error", 53),
        ("tma-read-before-wait", "error", 53)]


def test_a_block_above_1024_threads_is_analysed_as_declared():
    report = run_check([str(HANDWRITTEN / "wide_block_sm_90_s2.cu")], HOST, CheckOptions(jobs=1))
    assert [(f.rule, f.location.line) for f in report.findings] == [("implausible-value", 24)]
    assert "no launch of this kernel can succeed" in report.findings[0].message
    parsed = parse((HANDWRITTEN / "wide_block_sm_90_s2.cu").read_text())
    assert KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry).threads == 1152


def test_an_index_at_a_slot_no_constant_names_is_undecided_not_a_crash(tmp_path):
    # `tid` assigned again is not propagated: the solver met a local array's slot it cannot name
    path = tmp_path / "slot.cu"
    path.write_text("__global__ void k(float *out) {\n  __shared__ float red[32];\n  int tid = threadIdx.x;\n"
                    "  tid += 0;\n  if (tid % 32 == 0) red[tid / 32] = out[tid];\n  __syncthreads();\n"
                    "  out[tid] = red[0];\n}\n")
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    assert [f.severity.value for f in report.findings if f.severity.value == "error"] == []


def test_a_thread_index_local_reads_as_the_index():
    parsed = parse("__global__ void k(float *o) {\n  __shared__ float s[128];\n  int tid = threadIdx.x;\n"
                   "  const int half = 64;\n  if (tid < half) s[tid] = o[tid];\n}\n")
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    writes = [e for e in model.trace.all_events() if e.buffer == "s"]
    assert [(e.mult, e.offset) for e in writes] == [(64, 0)]


def test_a_block_vote_in_the_consumers_branch_hangs():
    # TileLang 0.1.15 puts `__syncthreads_count` in the consumers' branch on sm_90
    report = run_check([str(HANDWRITTEN / "vote_count_sm_90_s2.cu")], HOST, CheckOptions(jobs=1))
    assert sorted((f.rule, f.location.line) for f in report.findings if f.severity.value == "error") == [
        ("divergent-barrier", 54), ("mbarrier-deadlock", 41)]
    vote = next(f for f in report.findings if f.rule == "divergent-barrier")
    assert vote.message.startswith("__syncthreads_count is reached only by some threads")


def test_the_vote_reads_its_predicate_before_the_barrier_and_is_never_claimed():
    parsed = parse((KERNELS / "vote_count_sm_80_s2.cu").read_text())
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    vote = [e for e in model.trace.events[0] if e.node.span.line == 39]
    assert [e.kind.value for e in vote][-2:] == ["smem", "sync"]       # the read, then the barrier
    assert 39 not in {n.span.line for n in model.cp_async.redundant_barriers()}


def _edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (KERNELS / name).read_text()
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


def test_a_read_deep_into_a_one_box_slot_bounds_the_box(tmp_path):
    # column_walk: one box fills each 4096-byte slot of As, and the consumers read a column of it
    # down to byte 4034: the box has at least 4034 bytes, more than the 2048 announced
    path = _edited(tmp_path, "column_walk_sm_90_s2.cu", "arrive_and_expect_tx(4096)", "arrive_and_expect_tx(2048)")
    found = run_check([str(path)], HOST, CheckOptions(jobs=1)).findings
    assert [(f.rule, f.severity.value) for f in found if f.rule == "mbarrier-tx-bytes"] == [("mbarrier-tx-bytes", "error")]
    assert "take 4034 bytes" in next(f for f in found if f.rule == "mbarrier-tx-bytes").message


def test_a_box_guessed_from_the_layout_above_the_announcement_is_no_evidence(tmp_path):
    # subtile_gemm: the last load's box is guessed up to the slot's end (8192 bytes); the slot may be
    # wider than the box, and the wgmma slices' bytes are not known one by one: not decided (a note)
    path = _edited(tmp_path, "subtile_gemm_sm_90_s2.cu", "expect_transaction(8192)", "expect_transaction(6144)")
    found = [f for f in run_check([str(path)], HOST, CheckOptions(jobs=1)).findings if f.rule == "mbarrier-tx-bytes"]
    assert [f.severity.value for f in found] == ["note"] and "could not be checked" in found[0].message


def test_an_announcement_above_the_guessed_boxes_is_still_a_hang(tmp_path):
    # the boxes cannot be wider than the slot: announcing more than the slot holds never completes
    path = _edited(tmp_path, "column_walk_sm_90_s2.cu", "arrive_and_expect_tx(4096)", "arrive_and_expect_tx(8192)")
    found = [f for f in run_check([str(path)], HOST, CheckOptions(jobs=1)).findings if f.rule == "mbarrier-tx-bytes"]
    assert [f.severity.value for f in found] == ["error"]
