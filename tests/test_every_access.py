"""Every shared access and every barrier (issue 28): one buggy and one clean kernel per bug class,
with the EXACT finding set (rule, severity, primary line) asserted for each.

Every kernel is TileLang 0.1.15 output of a kernel of the project's own (tests/fixtures/causes/, sm_80,
no pipeline): the clean ones lie in tests/fixtures/kernels/ (generate.py, CAUSES), the ones whose
TileLang output itself races, and the hand-edited copies that delete a barrier, in
tests/fixtures/handwritten/ (a header says what was changed). pipelint 33eecc1, before the races
plugin, reported no error on any buggy kernel here, and called the barriers of write_write_synced,
wg_full_sync, wg_full_and_partial_sync and global_flag redundant (notes).

1. conditional writers, all readers (cond_writers.py): threads 0-31 store, every thread reads a
   neighbour's element after the `__syncthreads()`;
2. write-write through different threads (write_write.py): `S[tx]` and `S[tx + 10]`;
3. a barrier out of its guard (guard_loop.py): `if (tx % 4 == 0)` around a loop, or inside it;
4. warp-group barriers (warp_groups.py): `tl::__sync_thread_partial(1, 128)` by one warp group, and a
   named barrier of 256 shared by both groups while a store guard splits one;
5. atomics on shared memory (shared_atomics.py): atomic adds, then a read of the sum;
6. global memory within a block (global_flag.py): the barrier between thread 0's global store and
   every thread's load of it is never redundant (global races themselves are not modelled yet).

benchmarks/validation/classes.json lists the same kernels for racecheck on a GPU.
"""
from __future__ import annotations

from helpers import HANDWRITTEN, KERNELS

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
SYNC = "__syncthreads();"


def _report(path):
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return report.findings


def _set(path) -> list[tuple[str, str, int]]:
    return sorted((f.rule, f.severity.value, f.location.line) for f in _report(path))


def _line(path, n: int) -> str:
    return path.read_text().split("\n")[n - 1].strip()


def _header(path) -> int:
    """Lines of the `//` header a handwritten copy starts with."""
    lines = path.read_text().split("\n")
    return next(i for i, text in enumerate(lines) if not text.startswith("//"))


def _is_copy(edited, original, deleted: list[int], replaced: dict[int, tuple[str, str]] | None = None) -> None:
    """`edited` is `original` with a header prepended, the lines `deleted` (of the original) removed and
    the `replaced` ones changed: nothing else was touched."""
    want = original.read_text().split("\n")
    for n, (old, new) in (replaced or {}).items():
        assert old in want[n - 1]
        want[n - 1] = want[n - 1].replace(old, new)
    for n in sorted(deleted, reverse=True):
        del want[n - 1]
    assert edited.read_text().split("\n")[_header(edited):] == "\n".join(want).split("\n")


def _redundant(path) -> list[int]:
    return sorted(f.location.line for f in _report(path) if f.rule.startswith("redundant-"))


# ------------------------------------------------------------------ 1. conditional writers, all readers
COND = KERNELS / "cond_writers_sm_80_s0.cu"
COND_BUGGY = HANDWRITTEN / "cond_writers_nobarrier.cu"


def test_cond_writers_clean_barrier_is_needed_not_redundant():
    assert _line(COND, 22) == "if (((int)threadIdx.x) < 32) {"
    assert _line(COND, 26) == SYNC
    assert _set(COND) == []
    assert _redundant(COND) == []


def test_cond_writers_without_the_barrier_is_a_shared_race_at_the_read():
    _is_copy(COND_BUGGY, COND, deleted=[26])
    assert _line(COND_BUGGY, 32).endswith("= S[((((int)threadIdx.x) + 1) & 31)];")
    assert _set(COND_BUGGY) == [("shared-race", "error", 32)]
    (f,) = _report(COND_BUGGY)
    assert f.message.startswith("RAW race: threads 0-31 reads S at line 32")
    assert "wrote in S at line 29" in f.message
    assert f.help == "insert __syncthreads(); before line 32"


# ------------------------------------------------------------------ 2. write-write through different threads
WW = HANDWRITTEN / "write_write_sm_80_s0.cu"           # TileLang's own output: no barrier between
WW_SYNCED = KERNELS / "write_write_synced_sm_80_s0.cu"
WW_DISJOINT = KERNELS / "write_disjoint_sm_80_s0.cu"


def test_copy_in_and_overlapping_fill_without_barrier_is_a_write_write_race():
    assert "UNEDITED TileLang 0.1.15 output" in WW.read_text().split("\n")[0]
    assert _line(WW, 28).startswith("S[((int)threadIdx.x)] = A[")
    assert _line(WW, 30).startswith("S[(((int)threadIdx.x) + 10)] = 0x0p+0f")
    assert _line(WW, 31) == SYNC
    assert _set(WW) == [("shared-write-race", "error", 30)]
    (f,) = _report(WW)
    assert f.message.startswith("WAW race: threads 0-127 overwrites S at line 30")
    assert "wrote in S at line 28" in f.message


def test_copy_in_and_fill_with_a_barrier_between_is_clean():
    assert _line(WW_SYNCED, 23) == SYNC and _line(WW_SYNCED, 26) == SYNC
    assert _line(WW_SYNCED, 25).startswith("S[(((int)threadIdx.x) + 10)]")
    assert _set(WW_SYNCED) == []            # 33eecc1: redundant-barrier (note) at line 23


def test_copy_in_and_disjoint_fill_without_barrier_is_clean():
    assert _line(WW_DISJOINT, 24).startswith("S[(((int)threadIdx.x) + 128)]")
    assert SYNC not in WW_DISJOINT.read_text().split("\n")[22]
    assert _set(WW_DISJOINT) == []


# ------------------------------------------------------------------ 3. a barrier out of its guard
HOISTED = HANDWRITTEN / "guard_hoisted_sm_80_s0.cu"    # TileLang's own output: barrier hoisted before the if
SPLIT = KERNELS / "guard_split_sm_80_s0.cu"
SPLIT_BUGGY = HANDWRITTEN / "guard_split_nobarrier.cu"


def test_guard_split_clean_has_the_barrier_between_store_and_read():
    assert [_line(SPLIT, n) for n in (23, 25, 29, 31)] == [
        SYNC, "if ((((int)threadIdx.x) % 4) == 0) {", SYNC, "if ((((int)threadIdx.x) % 4) == 0) {"]
    assert _set(SPLIT) == []


def test_guard_split_with_only_the_barrier_before_the_if_is_a_shared_race():
    _is_copy(SPLIT_BUGGY, SPLIT, deleted=[29])
    assert _line(SPLIT_BUGGY, 30) == SYNC                                   # the loop head's, kept
    assert _line(SPLIT_BUGGY, 37) == "if ((((int)threadIdx.x) % 4) == 0) {"
    assert _line(SPLIT_BUGGY, 39).endswith("= S[(((((int)threadIdx.x) >> 2) + 8) & 31)];")
    # the primary location is where the barrier belongs: before the second `if`, outside the guard
    assert _set(SPLIT_BUGGY) == [("shared-race", "error", 37)]
    (f,) = _report(SPLIT_BUGGY)
    assert f.message.startswith("RAW race: threads 0, 4, 8, ")
    assert "reads S at line 39" in f.message and "wrote in S at line 34" in f.message
    assert f.help == "insert __syncthreads(); before line 37"


def test_guard_hoisted_store_and_cross_warp_read_race():
    assert "UNEDITED TileLang 0.1.15 output" in HOISTED.read_text().split("\n")[0]
    assert _line(HOISTED, 29) == SYNC
    assert _line(HOISTED, 31) == "if ((((int)threadIdx.x) % 4) == 0) {"
    assert _line(HOISTED, 35).startswith("S[(((int)threadIdx.x) >> 2)] = A[")
    assert _line(HOISTED, 37).endswith("= S[(((((int)threadIdx.x) >> 2) + 8) & 31)];")
    found = _set(HOISTED)
    assert ("shared-race", "error", 37) in found
    assert {rule for rule, severity, _ in found if severity == "error"} == {"shared-race"}
    raw = next(f for f in _report(HOISTED) if f.location.line == 37)
    assert raw.message.startswith("RAW race") and "wrote in S at line 35" in raw.message


def test_guard_hoisted_exact_findings_include_the_loop_carried_war():
    war = [f for f in _report(HOISTED) if f.rule == "shared-race" and f.message.startswith("WAR race")]
    assert len(war) == 1 and {35, 37} <= {loc.line for loc in war[0].related}
    # the kernel races, so no barrier is claimed removable (not even line 29's, which orders nothing)
    assert sorted(x for x in _set(HOISTED) if x != ("shared-race", "error", war[0].location.line)) == [
        ("shared-race", "error", 37)]


# ------------------------------------------------------------------ 4. warp-group barriers
PARTIAL = HANDWRITTEN / "wg_partial_sync_sm_80_s0.cu"  # TileLang's own output: the group syncs only itself
FULL = KERNELS / "wg_full_sync_sm_80_s0.cu"
FULL_AND_PARTIAL = HANDWRITTEN / "wg_full_and_partial_sync.cu"
NAMED_ALL = KERNELS / "wg_named_all_sm_80_s0.cu"


def test_warp_group_reading_the_other_groups_stores_after_its_own_barrier_is_barrier_scope():
    assert "UNEDITED TileLang 0.1.15 output" in PARTIAL.read_text().split("\n")[0]
    assert _line(PARTIAL, 29).startswith("S[((int)threadIdx.x)] = A[")
    assert _line(PARTIAL, 31) == "if (128 <= ((int)threadIdx.x)) {"
    assert _line(PARTIAL, 33) == "tl::__sync_thread_partial(1, 128);"
    assert _set(PARTIAL) == [("barrier-scope", "error", 33)]
    (f,) = _report(PARTIAL)
    assert f.message.startswith("RAW race on S/S: the named barrier at line 33 orders only threads 128-255, "
                                "not threads 0-127 that accessed it at line 29")


def test_warp_group_read_after_syncthreads_is_clean():
    assert _line(FULL, 23) == SYNC
    assert _set(FULL) == []                 # 33eecc1: redundant-barrier (note) at line 23


def test_syncthreads_before_a_partial_barrier_is_still_needed():
    _is_copy(FULL_AND_PARTIAL, FULL, deleted=[],
             replaced={27: ("    B[", "    tl::__sync_thread_partial(1, 128);\n    B[")})
    assert _line(FULL_AND_PARTIAL, 28) == SYNC
    assert _line(FULL_AND_PARTIAL, 32) == "tl::__sync_thread_partial(1, 128);"
    assert _set(FULL_AND_PARTIAL) == []     # 33eecc1: redundant-barrier (note) at line 28


def test_named_barrier_of_both_groups_with_a_store_guard_splitting_one_is_clean():
    text = NAMED_ALL.read_text()
    assert text.count("tl::__sync_thread_partial(1, 256);") == 2
    assert _line(NAMED_ALL, 22) == "if (((int)threadIdx.x) < 128) {"
    assert _line(NAMED_ALL, 24) == "if (((int)threadIdx.x) < 64) {"
    assert _set(NAMED_ALL) == []            # no deadlock, no race, no redundant claim


def test_named_barrier_counts_every_thread_once_whatever_the_role_split():
    parsed = parse(NAMED_ALL.read_text())
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    assert len(model.roles) >= 3            # the store guard splits warp group 0: 0-63, 64-127; 128-255
    syncs = [ev for events in model.trace.events for ev in events if ev.kind == "named_sync"]
    assert sorted({ev.node.span.line for ev in syncs}) == [29, 34]
    assert sum(ev.mult for ev in syncs) == 256
    mask = 0
    for ev in syncs:
        assert mask & ev.threads == 0       # no thread arrives twice
        mask |= ev.threads
    assert mask == (1 << 256) - 1


# ------------------------------------------------------------------ 5. atomics on shared memory
ATOMIC = KERNELS / "atomic_sum_sm_80_s0.cu"
ATOMIC_BUGGY = HANDWRITTEN / "atomic_sum_nobarrier.cu"
ATOMIC_TWICE = KERNELS / "atomic_twice_sm_80_s0.cu"
ATOMIC_C = HANDWRITTEN / "atomic_sum_cuda.cu"
ATOMIC_C_BUGGY = HANDWRITTEN / "atomic_sum_nobarrier_cuda.cu"
ATOMIC_C_TWICE = HANDWRITTEN / "atomic_twice_cuda.cu"
UNKNOWN_ATOMIC = ("TileLang 0.1.15 emits the unqualified `AtomicAdd(&S[0], v)` (tl_templates/cuda/atomic.h "
                  "defines AtomicAdd, AtomicAddRet, AtomicAddx2/x4 in the global namespace; the shared corpora "
                  "spell them so too), but analyzer/model/intrinsics.py lists only `tl::AtomicAdd*` (a name "
                  "that does not exist in 0.1.15) and CUDA's `atomicAdd`: the call is an unmodelled call that "
                  "receives a shared pointer, so the races plugin gives a race-undecided note")


def test_atomic_adds_then_barrier_then_read_has_no_error_and_no_redundant_claim():
    assert _line(ATOMIC, 27) == SYNC and _line(ATOMIC, 30) == SYNC
    assert _line(ATOMIC, 29).startswith("AtomicAdd((&(S[0])), ")
    found = _set(ATOMIC)
    assert [x for x in found if x[1] == "error"] == [] and _redundant(ATOMIC) == []


def test_atomic_adds_then_barrier_then_read_exact_findings():
    assert _set(ATOMIC) == []


def test_atomic_adds_then_read_without_barrier_is_a_shared_race():
    _is_copy(ATOMIC_BUGGY, ATOMIC, deleted=[30])
    assert _line(ATOMIC_BUGGY, 35) == "B[((int)threadIdx.x)] = S[0];"
    assert _set(ATOMIC_BUGGY) == [("shared-race", "error", 35)]


def test_two_atomics_on_one_address_without_barrier_exact_findings():
    assert _line(ATOMIC_TWICE, 29).startswith("AtomicAdd((&(S[0])), ")
    assert _line(ATOMIC_TWICE, 31).startswith("AtomicAdd((&(S[0])), ")
    assert _set(ATOMIC_TWICE) == []


def test_two_atomics_on_one_address_without_barrier_have_no_error():
    assert [x for x in _set(ATOMIC_TWICE) if x[1] == "error"] == []


ATOMIC_CUDA = {29: ("  AtomicAdd(", "  atomicAdd(")}


def test_cuda_atomic_adds_then_barrier_then_read_is_clean():
    _is_copy(ATOMIC_C, ATOMIC, deleted=[], replaced=ATOMIC_CUDA)
    assert _line(ATOMIC_C, 36) == SYNC
    assert _set(ATOMIC_C) == []


def test_cuda_atomic_adds_then_read_without_barrier_is_a_shared_race():
    _is_copy(ATOMIC_C_BUGGY, ATOMIC, deleted=[30], replaced=ATOMIC_CUDA)
    assert _line(ATOMIC_C_BUGGY, 36).startswith("atomicAdd((&(S[0])), ")
    assert _line(ATOMIC_C_BUGGY, 38) == "B[((int)threadIdx.x)] = S[0];"
    assert _set(ATOMIC_C_BUGGY) == [("shared-race", "error", 38)]
    (f,) = _report(ATOMIC_C_BUGGY)
    assert f.message.startswith("RAW race") and "wrote in S at line 36" in f.message


def test_cuda_two_atomics_on_one_address_without_barrier_do_not_race():
    _is_copy(ATOMIC_C_TWICE, ATOMIC_TWICE, deleted=[], replaced={**ATOMIC_CUDA, 31: ("  AtomicAdd(", "  atomicAdd(")})
    assert _line(ATOMIC_C_TWICE, 35).startswith("atomicAdd((&(S[0])), A[")
    assert _line(ATOMIC_C_TWICE, 37).startswith("atomicAdd((&(S[0])), 0x1p+0f")
    assert _set(ATOMIC_C_TWICE) == []


# ------------------------------------------------------------------ 6. global memory within a block
GLOBAL = KERNELS / "global_flag_sm_80_s0.cu"


def test_barrier_between_a_global_store_and_other_threads_load_is_not_redundant():
    assert _line(GLOBAL, 21) == "if (((int)threadIdx.x) == 0) {"
    assert _line(GLOBAL, 23).startswith("B[0] = ")
    assert _line(GLOBAL, 25) == SYNC
    assert _line(GLOBAL, 27).endswith("= B[0];")
    assert _redundant(GLOBAL) == []         # 33eecc1: redundant-barrier (note) at line 25
    assert _set(GLOBAL) == []
    parsed = parse(GLOBAL.read_text())
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    assert model.global_written_and_read() is not None


def test_a_global_flag_read_by_other_threads_without_the_barrier_is_a_global_race():
    """global_flag with its barrier deleted: thread 0 stores B[0], threads 1-127 load it at once."""
    path = HANDWRITTEN / "global_flag_nobarrier.cu"
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    errors = sorted((f.rule, f.location.line) for f in report.findings if f.severity.value == "error")
    assert errors == [("global-race", 30)]
    (race,) = [f for f in report.findings if f.rule == "global-race"]
    assert "global memory B" in race.message and "threads 0 wrote at line 27" in race.message
