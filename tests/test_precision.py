"""What real-world TileLang kernels do, reproduced by kernels of the project's own.

Each kernel under tests/fixtures/causes/ was lowered by tests/fixtures/generate.py into
tests/fixtures/kernels/; the first pipelint versions reported false errors on every one of them.
Here the clean kernels must give no error, and the defect planted into each shape
(tests/mutants/mutate.py) must be found — at its line, for the trip counts where it holds.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.pluginhost import load_plugins
from helpers import KERNELS
from mutants import mutate

HOST = load_plugins()
CAUSES = {
    "causal_attn_sm_90_s2.cu": "run-time trip count (causal: k < blockIdx.x + 1), TMA + mbarriers",
    "causal_attn_sm_100_s2.cu": "run-time trip count on sm_100",
    "dyn_k_gemm_sm_90_s3.cu": "run-time trip count ((K + 31) >> 5) with mod-3 slots and mod-6 parities",
    "scaled_gemm_sm_80_s2.cu": "cp.async under if (threadIdx.x < 64) with an unguarded commit",
    "scaled_gemm_sm_90_s2.cu": "a TMA-loaded slot read by two GEMMs per iteration",
    "tcgen05_gemm_sm_100_s2.cu": "tcgen05 MMA whose commit arrives on an mbarrier",
    "splitk_gemv_sm_80_s2.cu": "each thread reads back exactly the bytes it copied (split-K GEMV)",
}


def _check(path: Path):
    return run_check([str(path)], HOST, CheckOptions(jobs=1))


def _model(name: str) -> KernelModel:
    parsed = parse((KERNELS / name).read_text())
    return KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)


@pytest.mark.parametrize("name", sorted(CAUSES), ids=lambda n: n)
def test_clean_real_world_shape_has_no_error(name):
    report = _check(KERNELS / name)
    assert report.errors == []
    assert [f for f in report.findings if f.severity.value == "error"] == [], CAUSES[name]


def _mutant(op_name: str) -> mutate.Mutant:
    return next(op() for op in mutate.OPERATORS if op.__name__ == op_name)


def _run_mutant(m: mutate.Mutant, tmp_path: Path):
    path = tmp_path / f"{m.name}.cu"
    path.write_text(m.text)
    return [f for f in _check(path).findings if f.rule == m.rule and f.location.line == m.line]


def test_runtime_trip_defect_says_for_which_trip_counts(tmp_path):
    (hit,) = _run_mutant(_mutant("runtime_trip_drop_release"), tmp_path)
    # the consumer never releases K's slot: the producer hangs once it wraps around the 2 slots
    assert hit.message.endswith("(only when the run-time-bound loop runs 3 or more iterations)")


def test_runtime_trip_defect_present_from_the_first_iteration(tmp_path):
    (hit,) = _run_mutant(_mutant("runtime_trip_parity"), tmp_path)
    assert "1 or more iterations" in hit.message


def test_guarded_copy_wait_still_too_shallow_when_one_deeper(tmp_path):
    (hit,) = _run_mutant(_mutant("guarded_copy_wait_shallow"), tmp_path)
    assert hit.severity.value == "error"


def test_release_before_the_second_read_is_a_race(tmp_path):
    (hit,) = _run_mutant(_mutant("double_read_early_release"), tmp_path)
    assert "A_shared" in hit.message


def test_tcgen05_without_its_commit_hangs(tmp_path):
    assert _run_mutant(_mutant("tcgen05_drop_commit"), tmp_path)


# ---------------------------------------------------------------- the model facts behind them
def test_runtime_bound_loops_get_trip_scenarios_covering_every_residue():
    model = _model("dyn_k_gemm_sm_90_s3.cu")
    trips = model.trip_scenarios()
    assert trips[:3] == [0, 1, 2]                     # short runs: prologue/drain-like
    assert {t % 6 for t in trips if t >= 12} == set(range(6))   # slots mod 3, parities mod 6
    assert all(loop.runtime for loop in model.with_trip(5).loops if loop.trip == 5)


def test_constant_trip_kernels_have_no_scenarios():
    assert _model("gemm_f16_sm_90_s3.cu").trip_scenarios() == []


def test_guarded_copy_splits_roles_and_every_role_commits():
    model = _model("scaled_gemm_sm_80_s2.cu")
    assert [(r.lo, r.hi) for r in model.roles][:2] == [(0, 64), (64, 128)]
    commits = [sum(1 for e in evs if e.kind == "commit") for evs in model.trace.events]
    assert len(set(commits)) == 1 and commits[0] > 0    # threads without a copy commit too


def test_tcgen05_commit_is_one_arrival_per_warp():
    model = _model("tcgen05_gemm_sm_100_s2.cu")
    arrivals = [e for e in model.trace.all_events() if e.kind == "mma_arrive"]
    assert arrivals and {e.mult for e in arrivals} == {1}


@pytest.mark.parametrize("op", mutate.EQUIVALENT_OPERATORS, ids=lambda op: op.__name__)
def test_equivalent_mutations_give_no_error(op, tmp_path):
    """Deleting barriers that order only a thread's accesses to its own bytes is no race
    (confirmed on an H200 with compute-sanitizer racecheck: docs/validation/)."""
    m = op()
    path = tmp_path / f"{m.name}.cu"
    path.write_text(m.text)
    report = _check(path)
    assert report.errors == []
    assert [f for f in report.findings if f.severity.value == "error"] == []


def test_same_thread_footprints_only_when_every_overlap_is_one_thread():
    from pipelint.model.threads import cross_thread

    def same_thread_only(a, b, model):
        return cross_thread(a.lanes, b.lanes, model.index.memo["eval"]) is False

    model = _model("splitk_gemv_sm_80_s2.cu")
    events = model.trace.events[0]
    copy = next(e for e in events if e.kind == "cp_async" and e.iteration)
    read = next(e for e in events if e.kind == "smem" and e.access == "read" and e.buffer == copy.buffer
                and model.slot(e) == model.slot(copy) and e.iteration)
    assert copy.lanes is not None and read.lanes is not None
    assert same_thread_only(copy, read, model)
    # the GEMV of examples/ reads 64 halves per thread that 8 different threads copied
    gemv_model = _model("gemv_sm_80_s2.cu")
    gemv = gemv_model.trace.events[0]
    gcopy = next(e for e in gemv if e.kind == "cp_async" and e.buffer == "A_shared")
    gread = next(e for e in gemv if e.kind == "smem" and e.access == "read" and e.buffer == "A_shared")
    assert cross_thread(gcopy.lanes, gread.lanes, gemv_model.index.memo["eval"]) is True
    # warp-collective reads (ldmatrix) never take the shortcut
    gemm = _model("gemm_f16_sm_80_s3.cu").trace.events[0]
    assert all(e.lanes is None or e.lanes.collective for e in gemm if e.kind == "smem" and e.access == "read")


def test_mutation_suite_covers_every_real_world_shape():
    fixtures = {m.fixture for m in mutate.all_mutants()}
    assert set(CAUSES) - fixtures <= {"causal_attn_sm_100_s2.cu"}


def test_trip_count_is_the_difference_when_start_and_end_share_a_runtime_term():
    from pipelint.cuda import parse as parse_cuda
    from pipelint.model.trace import _loop_header, is_runtime_bound

    unit = parse_cuda("__global__ void k(int* o) { for (int k = (((int)blockIdx.y) * 4); "
                      "k < ((((int)blockIdx.y) * 4) + 2); ++k) { __syncthreads(); } }").unit
    loop = next(n for n in unit.walk() if type(n).__name__ == "For")
    assert _loop_header(loop) == ("k", 0, 2) and not is_runtime_bound(loop)
