"""The three races of issue 31 that hid behind "undecided" notes, on the project's own TileLang twins.

Each buggy twin is an error with an exact finding set, and its clean twin (TileLang 0.1.15's own
output, tests/fixtures/kernels) has no finding at all:

* a warp-group named barrier (`bar.sync 1, 128`) before a wgmma that reads tiles every thread of
  the block stored: the wgmma's operand bytes come from its descriptors (`model.wgmma`), so the
  pair is decided, not "footprints too large to enumerate";
* a consumer's mbarrier release moved before `warpgroup_wait<0>`: a wgmma reads until its group is
  retired, so the producer's next TMA load into the slot overwrites bytes still being read;
* counters zeroed by warps 1-3, then incremented by warp 0's atomics after only `__syncwarp()`.
"""
from __future__ import annotations

from pathlib import Path

import pytest
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


@pytest.mark.parametrize("name, expected", [
    # the partial barrier at line 47 orders warp group 1 only; warp group 0 stored A_s at line 38
    ("wg_wgmma_partial_sm_90_s0.cu", [("barrier-scope", "error", 47)]),
    # the release (line 104) precedes the wait (105) that retires the wgmma reading the slot
    ("release_early_sm_90_s3.cu", [("mbarrier-release", "error", 104)]),
    # no wait retires the wgmma groups at all: the release (107) frees operands still read; the wait goes after the commit (105)
    ("wgmma_unwaited_sm_90_s3.cu", [("mbarrier-release", "error", 105), ("wgmma-register-race", "error", 115)]),
    # warp 0's AtomicAdd (line 40) and warps 1-3's zero stores (line 30): only a __syncwarp between
    ("counter_syncwarp_nobarrier.cu", [("shared-write-race", "error", 40)]),
])
def test_buggy_twin_is_an_error(name, expected):
    assert _findings(HANDWRITTEN / name) == expected


@pytest.mark.parametrize("name", ["wg_wgmma_full_sm_90_s0.cu", "counter_syncwarp_sm_80_s0.cu",
                                  "counter_synced_sm_80_s0.cu", "gemm_f16_sm_90_s3.cu"])
def test_clean_twin_has_no_finding(name):
    assert _findings(KERNELS / name) == []


def _wgmma_reads(path: Path) -> list:
    parsed = parse(path.read_text())
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    return [e for evs in model.trace.events for e in evs if e.access == "read" and e.node.name.startswith("tl::wgmma")]


def test_wgmma_operands_are_their_tiles():
    """gemm_f16_sm_90_s3: per k step, warp group 1's wgmmas read the whole 8 KiB slot of A_shared
    (128x32 halves, 64-byte swizzle) and of B_shared (32x128, MN-major, 128-byte swizzle): the
    extents come from the descriptors, not from the buffer."""
    reads = _wgmma_reads(KERNELS / "gemm_f16_sm_90_s3.cu")
    issued = [e for e in reads if not e.retired]
    assert issued and all(e.extent is not None for e in issued)
    for e in issued:
        lo, hi = e.extent
        assert hi - lo == 8192 and lo % 8192 == 0, (e.buffer, e.extent)
    # every issued read is retired by the warpgroup_wait<0> of its k step, once
    assert len([e for e in reads if e.retired]) == len(issued)


def test_an_index_read_from_memory_is_undecided_and_named():
    """`S[Idx[tx]] = ...` then `... = S[tx]` without the barrier TileLang put between them: whether
    two threads meet depends on Idx's contents, so it is a note, never an error, and the note names
    the expression and what it is (issue 31: "the note names that expression")."""
    report = run_check([str(HANDWRITTEN / "scatter_gather_nobarrier.cu")], HOST, CheckOptions(jobs=1))
    found = [(f.rule, f.severity.value, f.location.line) for f in report.findings]
    assert found == [("race-undecided", "note", 27)]
    assert "`Idx[((int64_t)((int)threadIdx.x))]`, memory contents" in report.findings[0].message
    assert _findings(KERNELS / "scatter_gather_sm_80_s0.cu") == []


def test_a_copy_in_flight_against_the_blocks_own_atomics_is_a_global_race():
    """Issue 31, item 8: TileLang's num_stages=2 prefetches row r + 1 with cp.async at iteration r,
    then adds into row r + 1 atomically while the copy is in flight (the wait at line 40 leaves the
    newest group pending).  Each thread races with itself: no barrier orders an asynchronous copy,
    only its wait.  num_stages=0, the copy and the atomics alternating, is clean."""
    report = run_check([str(HANDWRITTEN / "global_prefetch_sm_80_s2.cu")], HOST, CheckOptions(jobs=1))
    assert sorted((f.rule, f.severity.value, f.location.line) for f in report.findings) == \
        [("global-race", "error", 43)]
    assert "cp.async at line 36 may still be reading" in report.findings[0].message
    assert _findings(KERNELS / "global_prefetch_sm_80_s0.cu") == []
