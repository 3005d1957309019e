"""Issue 31: what TileLang's templates and atomics do to shared memory, as the headers say.

* `tl::AllReduce<Op, threads, scale, offset, Barrier>::run(x, red_buf)` (tl_templates/cuda/reduce.h):
  its butterfly levels of offset >= 32 write `red_buf[t - offset]` and read the partner's slot
  between `bar.sync 1, N` and `bar.sync 2, N` (`model.templates`); it used to be an unknown call that
  "may read or write" the workspace, leaving every pair through it undecided.
* `AtomicAdd*(&global[..], value)`: the value operand may read shared memory (`S[..]`,
  `*(float4*)(S + ..)`); it used to be dropped when the destination is global, so the barrier that
  orders that read was called redundant and a missing one went unseen.
"""
from __future__ import annotations

from helpers import HANDWRITTEN, KERNELS

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import templates
from pipelint.pluginhost import load_plugins

HOST = load_plugins()


# ------------------------------------------------------------------------------ tl::AllReduce
def _call(name: str) -> A.Call:
    return next(n for n in parse(f'extern "C" __global__ void k(float* p) {{ float x = {name}(x, p); }}').unit.walk()
                if isinstance(n, A.Call))


def _shape(p: templates.Protocol) -> list[str]:
    out = []
    for s in p.steps:
        if isinstance(s, templates.Sync):
            out.append(f"sync{s.phase}/{s.count}")
        else:
            out.append(s.access)
    return out


def test_all_reduce_levels_follow_the_header():
    full = templates.protocol(_call("tl::AllReduce<tl::SumOp, 128, 1, 0, tl::NamedBarrier<128>>::run"))
    assert full is not None and _shape(full) == ["sync1/128", "write", "sync2/128", "read"] * 2   # offsets 64, 32
    assert "64" in repr(full.steps[3]) and "32" in repr(full.steps[7])
    warp = templates.protocol(_call("tl::AllReduce<tl::SumOp, 4, 1, 0, tl::NamedBarrier<128>>::run"))
    assert warp is not None and warp.steps == ()                      # shuffles only
    group = templates.protocol(_call("tl::AllReduce<tl::SumOp, 128, 64, 128, tl::NamedBarrier<128>>::run"))
    assert group is not None and _shape(group) == ["sync1/128", "write", "sync2/128", "read"]  # one level
    plain = templates.protocol(_call("tl::AllReduce<tl::MaxOp, 256, 1>::run"))
    assert plain is not None and _shape(plain)[:4] == ["sync1/None", "write", "sync2/None", "read"]
    assert len(_shape(plain)) == 12                                    # offsets 128, 64, 32
    assert templates.protocol(_call("tl::CumSum2D<128>::run")) is None


BLOCK_REDUCE = KERNELS / "block_reduce_sm_80_s0.cu"
BLOCK_REDUCE_BUGGY = HANDWRITTEN / "block_reduce_reuse.cu"


def _set(path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def test_block_reduce_clean_is_decided_and_its_barrier_between_the_reductions_is_redundant():
    lines = BLOCK_REDUCE.read_text().split("\n")
    assert "tl::NamedBarrier<128>>::run(s[0], (&(((float*)workspace_1)[0])))" in lines[33]
    assert lines[38].strip() == "__syncthreads();"
    # the max's first level starts with `bar.sync 1, 128` of all 128 threads, which orders the sum's
    # last reads of the aliased workspace: TileLang's __syncthreads between the two is redundant
    assert _set(BLOCK_REDUCE) == [("redundant-barrier", "note", 39)]


def test_block_reduce_store_into_the_workspace_after_the_sum_races_with_its_last_level():
    original = BLOCK_REDUCE.read_text().split("\n")
    edited = BLOCK_REDUCE_BUGGY.read_text().split("\n")
    header = next(i for i, t in enumerate(edited) if not t.startswith("//"))
    body = edited[header:]
    assert body[:33] == original[:33] and body[34:] == original[34:]
    assert body[33] == original[33] + " ((float*)workspace_1)[((int)threadIdx.x)] = s[0];"
    assert _set(BLOCK_REDUCE_BUGGY) == [("shared-race", "error", header + 34)]


def _copy_of(edited, original) -> tuple[list[str], list[str], int]:
    lines = edited.read_text().split("\n")
    header = next(i for i, t in enumerate(lines) if not t.startswith("//"))
    return lines[header:], original.read_text().split("\n"), header


ATOMIC_TILE = KERNELS / "atomic_tile_sm_80_s0.cu"
ATOMIC_TILE_BUGGY = HANDWRITTEN / "atomic_tile_nobarrier.cu"


def test_the_barrier_before_atomics_reading_a_shared_tile_is_needed():
    lines = ATOMIC_TILE.read_text().split("\n")
    assert lines[49].strip() == "__syncthreads();"
    assert "AtomicAdd((&(B[" in lines[54] and "S[((i_3 * 128) + ((int)threadIdx.x))]" in lines[54]
    assert _set(ATOMIC_TILE) == []              # at 58e98a9: redundant-barrier at line 50


def test_atomics_reading_a_shared_tile_without_the_barrier_race():
    body, original, header = _copy_of(ATOMIC_TILE_BUGGY, ATOMIC_TILE)
    assert body == original[:49] + original[50:]
    assert _set(ATOMIC_TILE_BUGGY) == [("shared-race", "error", header + 52)]   # at 58e98a9: nothing


def test_a_reads_releases_keep_the_arrival_whatever_the_barriers_before_it():
    """A consumer reads a TMA-written stage, passes a template's many named barriers (six per
    `tl::AllReduce` call, dozens per iteration) and only then arrives on the stage's empty barrier.
    The read's releases are bounded; the barriers must not crowd the arrival out (at 080c783 they
    did, and the producer's reload of the stage became a false `mbarrier-release` error)."""
    from pipelint.model.protocol import MAX_RELEASES, Reader

    reader = Reader(role=1, event=None)  # type: ignore[arg-type]
    reader.release((("mbarrier", 6), 0))                     # an arrival that does not release this slot
    for n in range(3 * MAX_RELEASES):
        reader.release(("sync", ("bar.sync", 1 + n % 2), n))
    reader.release((("mbarrier", 4), 0))                     # the one that does
    arrivals = [r for r in reader.releases if r[0] != "sync"]
    assert arrivals == [(("mbarrier", 6), 0), (("mbarrier", 4), 0)]
    assert sum(1 for r in reader.releases if r[0] == "sync") == MAX_RELEASES


def test_tmem_deallocate_reads_the_address_word_and_decides_the_pair():
    """`tl::tmem_deallocate(&C_tmem[0], n)` reads the 4-byte TMEM address in every thread of the warp
    (tcgen_05.h: `"r"(*tmem_ptr)`); at 58e98a9 it "may read or write" C_tmem and the pair with the
    epilogue's reads of C_tmem[0] was undecided."""
    kernel = KERNELS / "tcgen05_gemm_sm_100_s2.cu"
    assert "tl::tmem_deallocate((&(C_tmem[0]))" in kernel.read_text()
    # nothing on C_tmem; the one finding is the consumers' second wait on `mbar` after their release
    # (tests/rules/mbarrier-phase-overrun/tcgen05_wait_after_release.ref)
    assert _set(kernel) == [("mbarrier-phase-overrun", "warning", 102)]
