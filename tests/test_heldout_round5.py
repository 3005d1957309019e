"""Causes found by the eleventh session's held-out and planted rounds 5 and 6 (issue 31), each on a kernel
of the project's own (TileLang 0.1.15 output, tests/fixtures/causes/) with its buggy twin:

* a wgmma per K slice of the stage (`for kk in T.serial(...)`: `T.gemm` on `A_s[:, kk*16:...]`):
  the descriptor moves by `(ko & 1) * 8192 + kk * 2048`, `kk` a loop walked once.  The move was
  dropped (no single value), every stage's reads were booked to slot 0, and the clean kernel had
  three false `mbarrier-release` errors;
* a wgmma group no `warpgroup_wait` retires (the wait deleted): its operands are read until the
  thread exits, so the slot's release frees bytes still being read.  It had no finding at all;
* a stage slot every thread fills and a subset reads (round 6): the others' read of the buffer
  after the loop made each refill a false `version-overwrite`;
* (the twelfth session's round 7) a stage slot read only inside an atomic's address.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import KERNELS

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.model.kernel import BufferStages
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
HANDWRITTEN = Path(__file__).parent / "fixtures" / "handwritten"


def _findings(path: Path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def _model(path: Path) -> KernelModel:
    parsed = parse(path.read_text())
    return KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)


@pytest.mark.parametrize("name", ["subtile_gemm_sm_90_s2.cu", "subtile_gemm_sm_80_s2.cu"])
def test_a_wgmma_per_slice_of_the_stage_reads_the_stages_slot(name):
    assert _findings(KERNELS / name) == []


def test_slices_that_always_read_slot_0_are_an_error():
    # slot 1's loads (lines 56, 59) are never read; slot 0's next load overwrites what the odd trip
    # reads before its release (reported where that release is, line 99)
    assert _findings(HANDWRITTEN / "subtile_gemm_slot0_sm_90_s2.cu") == [
        ("mbarrier-release", "error", 56), ("mbarrier-release", "error", 59), ("mbarrier-release", "error", 99)]


def test_a_wgmma_group_no_wait_retires_is_read_until_the_exit():
    found = run_check([str(HANDWRITTEN / "wgmma_unwaited_sm_90_s3.cu")], HOST, CheckOptions(jobs=1)).findings
    assert [(f.rule, f.location.line) for f in found] == [("mbarrier-release", 105), ("wgmma-register-race", 115)]
    assert "none does before the arrival" in found[0].message and "insert tl::warpgroup_wait<0>()" in found[0].help
    # and the epilogue reads the accumulators the last group may still write
    assert "C_local" in found[1].message and "no warpgroup_wait retires its group" in found[1].message


def test_a_wait_one_too_deep_leaves_the_accumulators_in_flight(tmp_path):
    """flash attention's first `warpgroup_wait<0>` raised to 1 with one group committed (planted D51):
    the softmax reads `acc_s` while the wgmma may still write it, reported at the wait."""
    text = (KERNELS / "flash_attn_fwd_sm_90_s2.cu").read_text().replace(
        "tl::warpgroup_wait<0>();", "tl::warpgroup_wait<1>();", 1)
    path = tmp_path / "deep.cu"
    path.write_text(text)
    found = [f for f in run_check([str(path)], HOST, CheckOptions(jobs=1)).findings if f.rule == "wgmma-register-race"]
    access = [r.line for f in found for r in f.related if r.message.startswith("the first access of acc_s")]
    assert [f.location.line for f in found] == [133] and access == [149]
    assert "acc_s" in found[0].message and "leaves the group of the wgmma at line 128 in flight" in found[0].message


def test_a_race_inside_a_warp_group_branch_is_fixed_by_a_barrier_of_that_group(tmp_path):
    """The consumers' `bar.sync 3, 128` before the elected thread's TMA store deleted (planted D45):
    the fix is a barrier of the consumer warp group; a `__syncthreads()` in their branch would wait
    for the producer, which never comes (the advice used to be `__syncthreads()`)."""
    text = (KERNELS / "flash_attn_fwd_sm_90_s2.cu").read_text()
    assert text.count("    tl::__sync_thread_partial(3, 128);\n    if (tl::tl_shuffle_elect<128>()) {") == 1
    path = tmp_path / "d45.cu"
    path.write_text(text.replace("    tl::__sync_thread_partial(3, 128);\n    if (tl::tl_shuffle_elect", "    if (tl::tl_shuffle_elect", 1))
    [race] = [f for f in run_check([str(path)], HOST, CheckOptions(jobs=1)).findings if f.rule == "shared-race"]
    assert race.help.startswith("insert tl::__sync_thread_partial(1, 128);") and "threads 128-255" in race.help
    # a race between threads every thread of the block reaches keeps __syncthreads()
    [plain] = [f for f in run_check([str(HANDWRITTEN / "cond_writers_nobarrier.cu")], HOST,
                                    CheckOptions(jobs=1)).findings if f.rule == "shared-race"]
    assert plain.help == f"insert __syncthreads(); before line {plain.location.line}"


def test_a_commit_missing_at_the_end_of_the_loop_body_goes_back_there(tmp_path):
    """The V copy's commit at the end of flash attention's loop body deleted: its copies share a
    group with the next iteration's K copies, across the back edge.  The commit goes after the V
    copies (the statement after them, line 233), not at the top of the body (line 79, where the
    mutation suite counted it as a miss at the site)."""
    lines = (KERNELS / "flash_attn_fwd_sm_80_s1.cu").read_text().split("\n")
    assert lines[229].strip() == "tl::cp_async_commit();"
    lines[229] = ""
    path = tmp_path / "dc.cu"
    path.write_text("\n".join(lines))
    [found] = [f for f in run_check([str(path)], HOST, CheckOptions(jobs=1)).findings if f.rule == "uncommitted-copy"]
    assert found.location.line == 233 and "last at line 227" in found.message


@pytest.mark.parametrize("name", ["subset_reader_sm_80_s2.cu", "subset_reader_sm_80_s3.cu"])
def test_a_slot_filled_by_every_thread_and_read_by_32_is_consumed(name):
    """Held-out round 6: threads 32-127 fill each slot that threads 0-31 read; their own read of
    the buffer after the loop made the refill a false `version-overwrite`."""
    assert _findings(KERNELS / name) == []


def test_a_subset_reading_the_slot_in_flight_is_still_an_overwrite_and_a_race():
    assert _findings(HANDWRITTEN / "subset_reader_next_slot_sm_80_s2.cu") == [
        ("shared-race", "error", 55), ("version-overwrite", "error", 41), ("wait-too-shallow", "error", 46)]


def test_a_syncwarp_orders_the_lanes_of_warp_0_that_two_roles_split():
    """Planted round 6, benign control B23, as TileLang's own output: a tree reduction whose last
    halvings stay in warp 0 and are ordered by `__syncwarp()`; thread 0 (which stores the result)
    and threads 1-255 are two roles, and the warp barrier orders lanes across them."""
    assert _findings(KERNELS / "tree_reduce_sm_80_s0.cu") == []


def test_a_syncwarp_between_steps_that_span_two_warps_orders_nothing_across_them():
    # step 1's adds by threads 32-63 are read at step 2 by warp 0 with only a __syncwarp between
    assert _findings(HANDWRITTEN / "tree_reduce_cross_warp_sm_80_s0.cu") == [("shared-race", "error", 33)]


# ---------------------------------------------------------------- round 7
@pytest.mark.parametrize("name", ["atomic_index_global_sm_80_s2.cu", "atomic_index_global_sm_90_s2.cu",
                                  "atomic_index_shared_sm_80_s2.cu", "atomic_index_shared_sm_90_s2.cu"])
def test_a_shared_load_in_an_atomics_address_reads_the_slot(name):
    """`AtomicAdd((&(H[(Xs[...] & 63)])), 1)` loads Xs to find its address (causes/atomic_index.py).
    Before, the slot looked never read: a false `mbarrier-release` on sm_90, and on sm_80
    `redundant-wait`/`redundant-barrier` claims whose removal makes the race."""
    text = (KERNELS / name).read_text()
    assert "AtomicAdd((&(" in text and ("[(Xs[" in text or "[(((int*)Xs)[" in text)
    assert _findings(KERNELS / name) == []


def test_the_atomics_address_read_needs_the_cp_async_wait(tmp_path):
    """The buggy twin: without the loop's `cp_async_wait<1>` the address reads a slot in flight."""
    lines = (KERNELS / "atomic_index_global_sm_80_s2.cu").read_text().split("\n")
    assert lines[41].strip() == "tl::cp_async_wait<1>();"
    twin = tmp_path / "atomic_index_global_nowait.cu"
    twin.write_text("\n".join(lines[:41] + lines[42:]))
    found = _findings(twin)
    assert ("wait-too-shallow", "error", 47) in found
    assert "AtomicAdd" in twin.read_text().split("\n")[46]


def test_an_mbarrier_chosen_by_the_thread_index_splits_the_roles():
    """`bar[(((int)threadIdx.x) >> 7)].arrive()`: each warp group arrives on its own barrier
    (causes/group_barriers.py).  Evaluated for the role's first thread, all 256 threads arrived on
    `bar[0]`: a false `mbarrier-arrival-count` and `mbarrier-deadlock`."""
    clean = KERNELS / "group_barriers_sm_90_s0.cu"
    assert "bar[(((int)threadIdx.x) >> 7)].arrive();" in clean.read_text()
    # the __syncthreads after the wait is redundant: each group's phase already orders its stores
    # before its reads (test_an_mbarrier_phase_orders_the_arriving_threads_before_the_waiters)
    assert _findings(clean) == [("redundant-barrier", "note", 37)]


def test_barriers_per_group_counted_for_the_whole_block_hang():
    """The buggy twin: both barriers initialised for 256 arrivals, which only 128 threads give."""
    twin = HANDWRITTEN / "group_barriers_counted_twice_sm_90_s0.cu"
    lines = twin.read_text().split("\n")
    assert lines[28].strip() == "bar[0].init(256);" and lines[29].strip() == "bar[1].init(256);"
    assert _findings(twin) == [("mbarrier-arrival-count", "error", 29), ("mbarrier-arrival-count", "error", 30),
                               ("mbarrier-deadlock", "error", 39)]


def test_a_template_step_no_thread_performs_touches_nothing():
    """`tl::CumSum2D<128, 0, false>::run(slot, slot, 1, 256, 256, 256)` run by threads 128-255: its
    last column block is guarded out for every one of them (causes/scan_consumer.py).  Its
    unguarded address, in the next slot, gave three false errors."""
    kernel = KERNELS / "scan_consumer_sm_90_s2.cu"
    assert "tl::CumSum2D<128, 0, false>::run((&(Xs[((k_1 & 1) * 256)]))" in kernel.read_text()
    assert _findings(kernel) == []


def test_the_steps_threads_perform_are_still_checked(tmp_path):
    """The buggy twin: the scan on slot 0 at every trip leaves slot 1's loads unread before reuse."""
    text = (KERNELS / "scan_consumer_sm_90_s2.cu").read_text()
    twin = tmp_path / "scan_consumer_slot0.cu"
    twin.write_text(text.replace("::run((&(Xs[((k_1 & 1) * 256)])), (&(Xs[((k_1 & 1) * 256)]))",
                                 "::run((&(Xs[0])), (&(Xs[0]))"))
    assert twin.read_text() != text
    assert _findings(twin) == [("mbarrier-release", "error", 40)]


@pytest.mark.parametrize("name", ["column_walk_sm_80_s2.cu", "column_walk_sm_90_s2.cu"])
def test_an_offset_growing_inside_the_slot_is_no_stage_stride(name):
    """`As[(k & 1) * 2048 + tx * 32 + k]` (causes/column_walk.py): the stage stride is the version
    term's 4096 bytes, not the 2 bytes the column moves a trip.  Before: 2056 "slots" and false
    errors of every slot rule (version-mismatch on sm_80; tx-bytes, release, read-before-wait on sm_90)."""
    kernel = KERNELS / name
    assert "* 2048) + (((int)threadIdx.x) * 32)) + k" in kernel.read_text()
    model = _model(kernel)
    assert (model.stages["As"].stride, model.stages["As"].versions) == (4096, 2)
    assert _findings(kernel) == []


def test_reading_the_slot_being_filled_is_still_found(tmp_path):
    """The buggy twin: the read takes the other slot, `((k + 1) & 1)`, the one the copy fills."""
    text = (KERNELS / "column_walk_sm_80_s2.cu").read_text()
    twin = tmp_path / "column_walk_next_slot.cu"
    twin.write_text(text.replace("= As[((((k & 1) * 2048)", "= As[(((((k + 1) & 1) * 2048)"))
    assert twin.read_text() != text
    assert _findings(twin) == [("version-overwrite", "error", 36), ("wait-too-shallow", "error", 41)]


def test_a_column_chosen_by_a_counter_is_no_stage_stride():
    """`As[tx, cnt % bK]` with `cnt += 3` a trip (causes/column_walk.py, `column_counter`): the
    swizzled offset mixes the counter's bits and never repeats; the copies into As rotate over two
    versions of 4096 bytes.  Before: 30 "slots", a false version-mismatch and version-overwrite."""
    kernel = KERNELS / "column_counter_sm_80_s2.cu"
    assert "(cnt & 7))]" in kernel.read_text()
    model = _model(kernel)
    assert (model.stages["As"].stride, model.stages["As"].versions) == (4096, 2)
    assert [f for f in _findings(kernel) if f[1] == "error"] == []


def test_a_cluster_barrier_the_exited_producers_skip_completes():
    """`tl::cluster_sync()` after a warp-specialised loop, in the consumer branch only
    (causes/cluster_sync_after_ws.py): `barrier.cluster.wait` waits for the cluster's non-exited
    threads, and the producers run to the end of the kernel.  Modelled as `__syncthreads` it was a
    false `divergent-barrier` error; nor is it a redundancy claim (it orders the cluster's
    distributed shared memory, which is not modelled)."""
    kernel = KERNELS / "cluster_sync_after_ws_sm_90_s2.cu"
    lines = kernel.read_text().split("\n")
    assert lines[42].strip() == "if (((int)threadIdx.x) < 128) {" and lines[96].strip() == "tl::cluster_sync();"
    assert _findings(kernel) == [("mbarrier-not-analyzed", "note", 36)]


def test_a_cluster_barrier_some_lanes_of_a_warp_skip_is_an_error():
    """The buggy twin: the barrier under `tx % 64 < 16`; `.aligned` binds the lanes of a warp."""
    twin = HANDWRITTEN / "cluster_sync_lane_split_sm_90_s2.cu"
    assert "if ((((int)threadIdx.x) & 63) < 16) {" in twin.read_text()
    found = run_check([str(twin)], HOST, CheckOptions(jobs=1)).findings
    assert sorted((f.rule, f.severity.value, f.location.line) for f in found) == [
        ("divergent-barrier", "error", 101), ("mbarrier-not-analyzed", "note", 39)]
    [div] = [f for f in found if f.rule == "divergent-barrier"]
    assert "lanes of warp 4 (threads 128-143)" in div.message


def test_a_slot_is_the_bytes_its_accesses_reach():
    """A pipelined loop nested in another (causes/nested_pipeline.py): on sm_90 `As`'s two 4096-byte
    slots lie 12288 bytes apart and the second ends where `Bs` begins.  A slot taken as its whole
    stride overlapped `Bs`: a false shared-overlap, version-overwrite and wait-too-shallow."""
    kernel = KERNELS / "nested_pipeline_sm_90_s2.cu"
    text = kernel.read_text()
    assert "void* As = ((void*)((char*)buf_dyn_shmem + 1024));" in text
    assert "void* Bs = ((void*)((char*)buf_dyn_shmem + 17408));" in text
    model = _model(kernel)
    assert model.stages["As"] == BufferStages("As", 12288, 2, 4096)
    assert model.extent("As") == ("dynamic", 1024, 17408) and not model.overlap("As", "Bs")
    assert _findings(kernel) == []
    assert _findings(KERNELS / "nested_pipeline_sm_80_s2.cu") == []


def test_reading_the_slot_being_filled_in_a_nested_pipeline_is_still_found(tmp_path):
    """The buggy twin: the wgmma reads the slot the copies of this trip fill, `((k + 1) & 1)`."""
    text = (KERNELS / "nested_pipeline_sm_90_s2.cu").read_text()
    twin = tmp_path / "nested_pipeline_next_slot.cu"
    twin.write_text(text.replace("increase_descriptor_offset<int>(desc_a, ((k & 1) * 12288))",
                                 "increase_descriptor_offset<int>(desc_a, (((k + 1) & 1) * 12288))"))
    assert twin.read_text() != text
    assert _findings(twin) == [("version-overwrite", "error", 79), ("wait-too-shallow", "error", 90)]


def test_ping_pong_consumers_release_alternate_phases():
    """`empty[((kk * 2) + (threadIdx.x >> 7)) % 3].arrive()` (causes/pingpong_release.py): the index
    names the loop variable too, and still gives each consumer warp group its own barrier at every
    `kk`, so the groups are roles of their own.  Each group's k-th release is a phase of its own: the
    run counts 128 threads into every phase.  Before: three false arrival-count errors (the k-th
    arrivals of both groups paired, 256 threads) and two false deadlocks."""
    kernel = KERNELS / "pingpong_release_sm_90_s0.cu"
    assert "empty[(((kk * 2) + (((int)threadIdx.x) >> 7)) % 3)].arrive();" in kernel.read_text()
    assert [(r.lo, r.hi) for r in _model(kernel).roles] == [(0, 128), (128, 256), (256, 384)]
    assert _findings(kernel) == []


def test_both_groups_releasing_every_phase_still_miscount():
    """The buggy twin: both groups consume every step, so 256 threads release each phase that
    counts 128; each step completes two phases, and the producer hangs a round later."""
    twin = HANDWRITTEN / "pingpong_release_every_step_sm_90_s0.cu"
    assert "empty[(ko_1 % 3)].arrive();" in twin.read_text()
    assert _findings(twin) == [("mbarrier-arrival-count", "error", 35), ("mbarrier-arrival-count", "error", 36),
                               ("mbarrier-arrival-count", "error", 37), ("mbarrier-deadlock", "error", 45),
                               ("mbarrier-deadlock", "error", 57)]


def test_a_condition_no_data_can_make_true_is_decided():
    """`model.symbolic.constant_truth`: the unknown parts of a condition (memory loads, names with
    no value) are free `int`s; the condition is decided only where none of their values changes it."""
    from pipelint.model.evaluate import shape_of
    from pipelint.model.symbolic import constant_truth

    def cond(text: str) -> A.Expr:
        unit = parse(f"__global__ void k(const int* offs) {{ if ({text}) {{ }} }}").unit
        [stmt] = unit.kernels()[0].body.body
        return stmt.cond

    dead = ("((offs[0] >> 6) <= ((offs[1] >> 6) + k) - (offs[0] >> 6)) && "
            "(((offs[1] >> 6) + k) - (offs[0] >> 6) < (offs[1] >> 6))")
    # the walk binds a run-time loop start (`lo`) to 0 wherever it is spelled, and `k` counts from it
    start = {shape_of(cond("offs[0] >> 6")): 0}
    assert constant_truth(cond(dead), {"k": 0}, start) is False    # hi + k - lo < hi with k >= lo
    assert constant_truth(cond(dead), {"k": 1}, start) is False
    assert constant_truth(cond(dead), {"k": -1}, start) is None    # 0 <= hi - 1 < hi: the data decide
    assert constant_truth(cond(dead), {"k": 0}) is None            # lo free: 2 lo <= hi and lo > 0
    assert constant_truth(cond("offs[2] < offs[2] + 1"), {}) is True
    assert constant_truth(cond("offs[2] < 5"), {}) is None


def test_a_pipelined_range_loaded_from_memory_has_a_dead_epilogue():
    """TileLang's output for `T.Pipelined(offs[b] // bM, offs[b + 1] // bM, num_stages=3)`
    (causes/runtime_range.py): the epilogue's copies and its `cp_async_wait<0>` are under a guard
    no value of `offs` makes true.  Before: false version-overwrite errors from the dead copies;
    now the real hazard, the last tiles read with their groups in flight."""
    kernel = HANDWRITTEN / "runtime_range_sm_80_s3.cu"
    lines = kernel.read_text().split("\n")
    assert "+ k_2) - (offs[((int)blockIdx.x)] >> 5)) < (offs[(((int)blockIdx.x) + 1)] >> 5)))" in lines[165]
    assert lines[167].strip() == "tl::cp_async_wait<0>();"
    assert _findings(kernel) == [("missing-drain", "warning", 102), ("missing-drain", "warning", 107),
                                 ("wait-too-shallow", "error", 112)]


def test_the_epilogue_with_its_wait_taken_is_clean(tmp_path):
    """The fixed twin: the epilogue's wait unconditional; nothing else changed."""
    lines = (HANDWRITTEN / "runtime_range_sm_80_s3.cu").read_text().split("\n")
    assert lines[165].startswith("    if (")
    lines[165] = "    {"
    fixed = tmp_path / "runtime_range_waited.cu"
    fixed.write_text("\n".join(lines))
    assert _findings(fixed) == []


def test_a_block_dependent_start_leaves_the_epilogue_unwaited():
    """TileLang's output for `T.Pipelined(T.max(0, bx - 3), bx + 1, num_stages=3)`
    (causes/window_range.py, unedited): the epilogue's `cp_async_wait<0>` is under
    `(bool)0 & (bool)0`, so the last tiles are read with their groups in flight."""
    kernel = HANDWRITTEN / "window_range_sm_80_s3.cu"
    lines = kernel.read_text().split("\n")
    assert lines[145].strip() == "if ((bool)0 & (bool)0) {" and lines[147].strip() == "tl::cp_async_wait<0>();"
    assert _findings(kernel) == [("missing-drain", "warning", 45), ("missing-drain", "warning", 51),
                                 ("missing-drain", "warning", 100), ("missing-drain", "warning", 106),
                                 ("wait-too-shallow", "error", 111), ("wait-too-shallow", "warning", 58)]
    assert _findings(HANDWRITTEN / "window_range_waited_sm_80_s3.cu") == []


def test_a_chunked_epilogue_overwrites_the_tile_the_last_chunk_reads():
    """TileLang's output for a column-chunked epilogue through one shared tile
    (causes/chunked_epilogue.py, unedited): no barrier between a chunk's copy out of `Cs` (every
    thread) and the next chunk's stores into it (threads 64-127 for chunk 1)."""
    kernel = HANDWRITTEN / "chunked_epilogue_sm_80_s2.cu"
    assert _findings(kernel) == [("shared-race", "error", 136)]
    synced = HANDWRITTEN / "chunked_epilogue_synced_sm_80_s2.cu"
    assert "    __syncthreads();\n  }\n}" in synced.read_text()
    assert [f for f in _findings(synced) if f[1] != "note"] == []


@pytest.mark.parametrize("name, wait, branch", [("window_range_sm_80_s3.cu", 148, 146),
                                                ("runtime_range_sm_80_s3.cu", 168, 166)])
def test_the_advice_names_the_wait_a_false_condition_skips(name, wait, branch):
    """The epilogue's `cp_async_wait<0>` is the wait the code meant; the advice is to take it, not
    to lower the main loop's N."""
    [shallow] = [f for f in run_check([str(HANDWRITTEN / name)], HOST, CheckOptions(jobs=1)).findings
                 if f.rule == "wait-too-shallow" and f.severity.value == "error"]
    assert shallow.help == (f"the wait at line {wait} would complete group 3, but the `if` at line {branch} "
                            f"around it is false on this path: make that wait unconditional")


def _group_barriers_edit(tmp_path: Path, name: str, edit) -> Path:
    lines = (KERNELS / "group_barriers_sm_90_s0.cu").read_text().split("\n")
    assert lines[36].strip() == "__syncthreads();" and lines[31].strip() == "S[((int)threadIdx.x)] = A[((int)threadIdx.x)];"
    assert lines[33].strip() == "bar[(((int)threadIdx.x) >> 7)].arrive();"
    edit(lines)
    out = tmp_path / name
    out.write_text("\n".join(lines))
    return out


def test_an_mbarrier_phase_orders_the_arriving_threads_before_the_waiters(tmp_path):
    """`S[t] = ..; bar[t >> 7].arrive(); bar[t >> 7].wait(0); .. = S[t ^ 1]` with the __syncthreads
    after the wait deleted (planted round 8, b/04): every thread of the group arrives, so phase 0
    completes after every store, and the wait that observes it orders them before the reads
    (PTX: arrive is .release, try_wait .acquire).  It was a false shared-race."""
    no_sync = _group_barriers_edit(tmp_path, "no_sync.cu", lambda lines: lines.__setitem__(36, ""))
    assert _findings(no_sync) == []


def test_a_store_after_the_arrival_is_not_released(tmp_path):
    """The buggy twin: the store moved after the arrival (and the __syncthreads deleted)."""
    def edit(lines):
        lines[31], lines[33] = lines[33], lines[31]
        lines[36] = ""
    late = _group_barriers_edit(tmp_path, "late_store.cu", edit)
    assert _findings(late) == [("shared-race", "error", 39)]


def test_a_vector_the_loop_only_reads_has_no_versions():
    """`scs[k]` read in the pipelined loop, `scs` loaded once before it (causes/loaded_scales.py):
    the loop never writes `scs`, so it is no ring.  Taken as 4 versions of 4 bytes, the reads of
    `scs[1..3]` were four false tma-read-before-wait errors on sm_90."""
    kernel = KERNELS / "loaded_scales_sm_90_s2.cu"
    assert "make_float4(((float*)scs)[k_1], ((float*)scs)[k_1]" in kernel.read_text()
    model = _model(kernel)
    assert "scs" not in model.stages and model.stages["As"] == BufferStages("As", 8192, 2)
    assert _findings(kernel) == [("redundant-barrier", "note", 46)]


def test_reading_the_scales_before_their_load_is_still_found(tmp_path):
    """The buggy twin: the consumer's wait for the scales' barrier deleted."""
    text = (KERNELS / "loaded_scales_sm_90_s2.cu").read_text()
    twin = tmp_path / "loaded_scales_unwaited.cu"
    twin.write_text(text.replace("      if (k_1 == 0) {\n        mbarrier[4].wait(0);\n      }\n", ""))
    assert twin.read_text() != text
    assert [f for f in _findings(twin) if f[1] == "error"] == [("tma-load-unwaited", "error", 44)] + [
        ("tma-read-before-wait", "error", 84)] * 4


def test_a_named_hand_off_behind_a_block_barrier_hangs():
    """TileLang's output for a named-barrier hand-off between two `T.ws` blocks
    (causes/named_handoff.py, unedited): threads 0-127 wait at `bar.sync 2, 256` for threads 128-255,
    held at the `__syncthreads` between the blocks for threads 0-127.  No finding before: the roles
    were run against each other for mbarriers only."""
    kernel = HANDWRITTEN / "named_handoff_sm_90_s0.cu"
    found = run_check([str(kernel)], HOST, CheckOptions(jobs=1)).findings
    [hang] = [f for f in found if f.rule == "barrier-deadlock"]
    assert hang.location.line == 26 and "threads 128-255 at __syncthreads (line 30)" in hang.message


def test_the_hand_off_without_the_block_barrier_completes(tmp_path):
    """The fixed twin: the `__syncthreads` between the blocks deleted; the named barrier orders the
    stores before the reads of the other group."""
    lines = (HANDWRITTEN / "named_handoff_sm_90_s0.cu").read_text().split("\n")
    assert lines[29].strip() == "__syncthreads();"
    del lines[29]
    fixed = tmp_path / "named_handoff_fixed.cu"
    fixed.write_text("\n".join(lines))
    assert _findings(fixed) == []


def test_a_hang_elsewhere_is_no_evidence_for_pairing_alternate_arrivals(tmp_path):
    """Planted round 8, d/13: `empty[0]` initialised for 256 (a hang: one group arrives a phase).
    The run stops before the groups reach `empty[2]`, whose k-th arrivals are at different
    iterations (alternate phases): no arrival-count error on the barrier nobody edited."""
    text = (KERNELS / "pingpong_release_sm_90_s0.cu").read_text()
    twin = tmp_path / "pingpong_empty0_256.cu"
    twin.write_text(text.replace("empty[0].init(128);", "empty[0].init(256);"))
    assert twin.read_text() != text
    assert _findings(twin) == [("mbarrier-deadlock", "error", 42), ("mbarrier-deadlock", "error", 54)]


def test_an_epilogue_read_is_named_as_the_epilogue_s(tmp_path):
    """Planted round 8, d/03: the split-K GEMV's epilogue wait deleted; the read that then sees a
    group in flight comes after the loop, and the message says so (it said "iteration prologue")."""
    text = (KERNELS / "splitk_gemv_sm_80_s2.cu").read_text()
    lines = text.split("\n")
    [n] = [i for i, line in enumerate(lines) if line.strip() == "tl::cp_async_wait<0>();"]
    del lines[n]
    twin = tmp_path / "splitk_no_epilogue_wait.cu"
    twin.write_text("\n".join(lines))
    [shallow] = [f for f in run_check([str(twin)], HOST, CheckOptions(jobs=1)).findings if f.rule == "wait-too-shallow"]
    assert shallow.message.endswith("which is read next (iteration epilogue)")
