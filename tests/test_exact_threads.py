"""Exact threads and bytes: four real-world patterns on which pipelint 33eecc1 reported false errors.

Each fixture is TileLang 0.1.15 output (tests/fixtures/generate.py, CAUSES) of a kernel of the
project's own in tests/fixtures/causes/ that reproduces what the real-world corpus showed
(`shared/corpus/realworld/triage.json`):

* N1 `elected_guard_sm_90_s2.cu`: `if (threadIdx.x < 1)` (clearing a one-element shared buffer) splits
  warp 0 of the TMA producer; its one `tl_shuffle_elect<128>()` thread was counted once per side
  (33eecc1: 2 mbarrier-arrival-count, 2 mbarrier-release, 2 mbarrier-deadlock errors);
* N4 `thread_private_sm_80_s2.cu`: each thread cp.asyncs 16 bytes per row at `threadIdx.x * 4` and
  reads back exactly those, with TL_DISABLE_THREAD_STORAGE_SYNC (no `__syncthreads`); per-thread
  interval hulls overlapped (33eecc1: 3 missing-barrier errors);
* N5 `warp_lane_sm_80_s2.cu`: the same read spelt `tl::get_warp_idx() * 128 + tl::get_lane_idx() * 4`,
  which 33eecc1 could not evaluate (3 missing-barrier, 1 wait-too-shallow errors);
* N3 `gated_attn_sm_90_s1.cu`: a 64x128 bf16 Q tile loaded by two TMA boxes, whose bytes the planner
  gives to the epilogue's buffers (`O_shared` 1024 bytes after Q's start); 33eecc1 took Q's size
  from that gap (1 mbarrier-tx-bytes error: "write 1024 bytes").

And the check still bites: `handwritten/thread_private_neighbour.cu` is the N4 kernel with one index
changed so that each thread reads its neighbour's bytes, a real race. Last, every thread-index
function of TileLang's templates that pipelint evaluates is compared with its C++ definition
(tl_templates/cuda/intrin.h; cutlass/cutlass.h for the cutlass ones).
"""
from __future__ import annotations

import pytest
from helpers import HANDWRITTEN, KERNELS

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
PATTERNS = {
    "elected_guard_sm_90_s2.cu": "N1: an elected TMA producer thread inside a warp split by threadIdx.x < 1",
    "thread_private_sm_80_s2.cu": "N4: each thread reads back exactly the bytes it cp.asynced, no barrier",
    "warp_lane_sm_80_s2.cu": "N5: offsets through tl::get_warp_idx() / tl::get_lane_idx()",
    "gated_attn_sm_90_s1.cu": "N3: a TMA box split whose buffer is followed by an aliasing one",
}


def _findings(path):
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return report.findings


def _model(name: str) -> KernelModel:
    parsed = parse((KERNELS / name).read_text())
    return KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)


# ------------------------------------------------------------------ the four patterns, whole files
@pytest.mark.parametrize("name", sorted(PATTERNS), ids=lambda n: n)
def test_real_world_pattern_has_no_error_and_no_warning(name):
    serious = [(f.rule, f.location.line, f.message) for f in _findings(KERNELS / name)
               if f.severity.value in ("error", "warning")]
    assert serious == [], PATTERNS[name]


def test_thread_private_neighbour_read_is_the_one_race_reported():
    """One index changed (`threadIdx.x` -> `(threadIdx.x + 1) & 127` in the steady-state read at
    line 56): the read races with the neighbour's copy (RAW: a barrier belongs before the loop
    over rows, line 52) and the next iteration's copy into that slot with the read (WAR, line 43).
    The epilogue's read (line 70) still takes only the thread's own bytes: no finding there."""
    path = HANDWRITTEN / "thread_private_neighbour.cu"
    assert "(((((int)threadIdx.x) + 1) & 127) * 4)" in path.read_text().splitlines()[55]
    errors = sorted((f.rule, f.location.line, f.message) for f in _findings(path) if f.severity.value == "error")
    assert [(rule, line) for rule, line, _ in errors] == [("missing-barrier", 43), ("missing-barrier", 52)]
    war, raw = errors
    assert raw[2].startswith("missing __syncthreads: RAW on x_shared slot 0, read at line 56 (iteration 0)")
    assert war[2].startswith("missing __syncthreads: WAR on x_shared slot 0, cp.async at line 45 (iteration 1)")


# ------------------------------------------------------------------ the model facts behind them
def test_elected_producer_is_one_thread_whatever_the_guard_split():
    model = _model("elected_guard_sm_90_s2.cu")
    # the guard still splits warp 0: threads 0-0 and 1-127 are roles of their own
    assert [(r.lo, r.hi) for r in model.roles] == [(0, 1), (1, 128), (128, 256)]
    arrivals = [(role, e) for role, events in enumerate(model.trace.events) for e in events
                if e.kind == "mbar_arrive_expect_tx"]
    # thread 0 (lane 0 of warp 0) is the elected one: 8 iterations x one arrive_and_expect_tx, by it alone
    assert len(arrivals) == 8
    assert {(role, e.threads, e.mult) for role, e in arrivals} == {(0, 1, 1)}
    loads = [e for events in model.trace.events for e in events if e.kind == "tma_load"]
    assert len(loads) == 16 and {e.threads for e in loads} == {1}


@pytest.mark.parametrize("name", ["thread_private_sm_80_s2.cu", "warp_lane_sm_80_s2.cu"])
def test_each_thread_reads_only_bytes_it_copied(name):
    from pipelint.model.threads import cross_thread

    model = _model(name)
    events = model.trace.events[0]
    reads = [e for e in events if e.kind == "smem" and e.access == "read" and e.buffer == "x_shared"]
    copies = [e for e in events if e.kind == "cp_async" and e.buffer == "x_shared"]
    assert reads and copies
    assert all(e.offset is not None and model.slot(e) is not None and e.lanes is not None for e in reads)
    pairs = [(c, r) for c in copies for r in reads if model.slot(c) == model.slot(r)]
    assert {model.slot(r) for _, r in pairs} == {0, 1}
    assert all(cross_thread(c.lanes, r.lanes, model.index.memo["eval"]) is False for c, r in pairs)


def test_neighbour_read_crosses_threads():
    from pipelint.model.threads import cross_thread

    parsed = parse((HANDWRITTEN / "thread_private_neighbour.cu").read_text())
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    events = model.trace.events[0]
    read = next(e for e in events if e.kind == "smem" and e.access == "read" and e.node.span.line == 56)
    copy = next(e for e in events if e.kind == "cp_async" and model.slot(e) == model.slot(read))
    assert cross_thread(copy.lanes, read.lanes, model.index.memo["eval"]) is True


def test_tma_bytes_of_a_box_split_come_from_the_loads_not_the_layout_gap():
    model = _model("gated_attn_sm_90_s1.cu")
    q, o = model.buffers["Q_shared"], model.buffers["O_shared"]
    assert o.offset - q.offset == 1024                    # the aliasing buffer starts 1 KB into Q
    loads = [e for e in model.trace.all_events() if e.kind == "tma_load" and e.buffer == "Q_shared"]
    sizes = [model.mbarrier.tma_bytes[id(e)] for e in loads]
    assert sizes == [8192, 8192]                          # two 64x64 bf16 boxes = the expect_tx(16384)


# ------------------------------------------------------------------ thread-index functions
# Python transcriptions of the C++ definitions, for a one-dimensional block (TileLang's CUDA):
# tl_templates/cuda/intrin.h (linear_thread_idx_in_block() == threadIdx.x) and cutlass/cutlass.h.
def _tl_lane(t, warp_size=32):
    warp_size = warp_size if warp_size > 0 else 32
    return t % warp_size


def _tl_warp(t, warp_size=32):
    warp_size = warp_size if warp_size > 0 else 32
    return t // warp_size


def _tl_warp_group(t, warp_size=32, warps_per_group=4):
    warp_size = warp_size if warp_size > 0 else 32
    warps_per_group = warps_per_group if warps_per_group > 0 else 4
    threads_per_group = warp_size * warps_per_group
    threads_per_group = threads_per_group if threads_per_group > 0 else warp_size
    return t // threads_per_group


REFERENCE = {
    "tl::detail::linear_thread_idx_in_block": lambda t: t,
    "tl::get_lane_idx": _tl_lane,
    "tl::get_warp_idx_sync": _tl_warp,
    "tl::get_warp_idx": _tl_warp,
    "tl::get_warp_group_idx": _tl_warp_group,
    "cutlass::canonical_lane_idx": lambda t: t % 32,                 # threadIdx.x % NumThreadsPerWarp
    "cutlass::canonical_warp_idx": lambda t: t // 32,                # threadIdx.x / NumThreadsPerWarp
    "cutlass::canonical_warp_idx_sync": lambda t: t // 32,           # __shfl_sync of lane 0's t / 32
    "cutlass::canonical_warp_group_idx": lambda t: t // 128,         # __shfl_sync of lane 0's t / 128
}
CALLS = [
    ("tl::detail::linear_thread_idx_in_block", ()),
    ("tl::get_lane_idx", ()), ("tl::get_lane_idx", (64,)), ("tl::get_lane_idx", (16,)),
    ("tl::get_lane_idx", (0,)), ("tl::get_lane_idx", (-8,)),
    ("tl::get_warp_idx_sync", ()), ("tl::get_warp_idx_sync", (64,)), ("tl::get_warp_idx_sync", (0,)),
    ("tl::get_warp_idx", ()), ("tl::get_warp_idx", (64,)), ("tl::get_warp_idx", (16,)), ("tl::get_warp_idx", (-1,)),
    ("tl::get_warp_group_idx", ()), ("tl::get_warp_group_idx", (32,)), ("tl::get_warp_group_idx", (64,)),
    ("tl::get_warp_group_idx", (32, 2)), ("tl::get_warp_group_idx", (32, 6)), ("tl::get_warp_group_idx", (64, 2)),
    ("tl::get_warp_group_idx", (0, 0)), ("tl::get_warp_group_idx", (16, -1)),
    ("cutlass::canonical_lane_idx", ()), ("cutlass::canonical_warp_idx", ()),
    ("cutlass::canonical_warp_idx_sync", ()), ("cutlass::canonical_warp_group_idx", ()),
]
THREADS = (0, 1, 15, 31, 32, 33, 63, 64, 127, 128, 129, 191, 200, 255, 256, 383, 384, 511, 767, 1023)


def _call_text(name, args):
    return f"{name}({', '.join(str(a) for a in args)})"


def _expr(text: str) -> A.Expr:
    unit = parse(f"__global__ void k(int* o) {{ o[0] = {text}; }}").unit
    return next(n for n in unit.walk() if isinstance(n, A.Assign)).value


def test_every_evaluated_thread_index_function_is_tested_here():
    from pipelint.model.evaluate import THREAD_INDEX_CALLS

    # cute::thread_idx is in pipelint's table but defined in none of the headers TileLang 0.1.15
    # ships (no C++ to compare with); every other entry is checked below
    assert set(THREAD_INDEX_CALLS) - {"cute::thread_idx"} == set(REFERENCE) == {name for name, _ in CALLS}


@pytest.mark.parametrize("name,args", CALLS, ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v)))
def test_thread_index_function_matches_its_cpp_definition(name, args):
    from pipelint.model.evaluate import CompiledEvaluator, evaluate

    e = _expr(_call_text(name, args))
    expected = [REFERENCE[name](t, *args) for t in THREADS]
    assert [evaluate(e, {"threadIdx.x": t}) for t in THREADS] == expected
    compiled = CompiledEvaluator()
    assert [compiled(e, {"threadIdx.x": t}) for t in THREADS] == expected


# every function, `cutlass::canonical_lane_idx()` included (a `%` formula with no argument: the
# modulus is the warp size)
INTERVAL_CALLS = list(CALLS)


@pytest.mark.parametrize("name,args", INTERVAL_CALLS,
                         ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v)))
@pytest.mark.parametrize("lo,hi", [(0, 0), (0, 127), (30, 33), (33, 40), (100, 300), (128, 255), (0, 1023)])
def test_thread_index_function_bounds_over_a_thread_range_are_exact(name, args, lo, hi):
    from pipelint.model.evaluate import interval

    values = [REFERENCE[name](t, *args) for t in range(lo, hi + 1)]
    assert interval(_expr(_call_text(name, args)), {}, {"threadIdx.x": (lo, hi)}) == (min(values), max(values))


def test_offsets_spelt_with_warp_and_lane_are_the_thread_offsets():
    """The N5 fixture's read offset, `warp * 128 + lane * 4` through int64_t casts, is `threadIdx.x * 4`."""
    from pipelint.model.evaluate import evaluate

    e = _expr("((((int64_t)tl::get_warp_idx()) * (int64_t)128) + (((int64_t)tl::get_lane_idx()) * (int64_t)4))")
    assert [evaluate(e, {"threadIdx.x": t}) for t in THREADS] == [4 * t for t in THREADS]
    # a warp size known only at run time is unknown, not the default
    assert evaluate(_expr("tl::get_lane_idx(n)"), {"threadIdx.x": 5}) is None


def test_a_loop_bound_too_large_for_enumeration_is_undecided_not_a_crash():
    """A fuzzed bound (10**20 iterations) makes footprints too costly to enumerate: the analysis
    gives them up and the file is checked like any other (no tool error, no traceback)."""
    from pathlib import Path

    from pipelint.engine import CheckOptions, run_check
    from pipelint.pluginhost import load_plugins

    path = Path(__file__).parent / "fixtures" / "handwritten" / "huge_loop_bound.cu"
    report = run_check([str(path)], load_plugins(), CheckOptions(jobs=1))
    assert report.errors == [] and all(r.parsed for r in report.files)
    assert [f for f in report.findings if f.severity.value == "error"] == []
