"""Issue 31: `__syncwarp(mask)` orders the lanes in its mask of each warp, and nothing else.

TileLang 0.1.15 lowers `T.sync_warp()` to `__syncwarp()` (and adds a `__syncthreads()` after it).
At 58e98a9 the warp barrier was ignored: a same-warp exchange without the block barrier was a
false `shared-race`."""
from __future__ import annotations

from helpers import HANDWRITTEN, KERNELS

from pipelint.engine import CheckOptions, run_check
from pipelint.model.threads import span, warp_ordered
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
CLEAN = KERNELS / "warp_exchange_sm_80_s0.cu"
WARP_ONLY = HANDWRITTEN / "warp_exchange_warponly.cu"
CROSS = HANDWRITTEN / "warp_exchange_cross.cu"


def _set(path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def _body(path) -> list[str]:
    lines = path.read_text().split("\n")
    return lines[next(i for i, t in enumerate(lines) if not t.startswith("//")):]


def test_the_block_barrier_after_a_same_warp_exchange_is_redundant():
    lines = CLEAN.read_text().split("\n")
    assert lines[23].strip() == "__syncwarp();" and lines[24].strip() == "__syncthreads();"
    assert "S[(((int)threadIdx.x) ^ 16)]" in lines[26]
    assert _set(CLEAN) == [("redundant-barrier", "note", 25)]


def test_a_same_warp_exchange_ordered_by_syncwarp_alone_is_clean():
    original = CLEAN.read_text().split("\n")
    assert _body(WARP_ONLY) == original[:24] + original[25:]
    assert _set(WARP_ONLY) == []                     # at 58e98a9: shared-race (the warp barrier ignored)


def test_a_cross_warp_exchange_is_not_ordered_by_syncwarp():
    original = CLEAN.read_text().split("\n")
    want = original[:24] + original[25:]
    want[25] = want[25].replace("^ 16)]", "^ 32)]")
    assert _body(CROSS) == want
    header = len(CROSS.read_text().split("\n")) - len(want)
    assert _set(CROSS) == [("shared-race", "error", header + 26)]


def test_warp_ordered_needs_one_warp_and_both_lanes_in_the_mask():
    assert warp_ordered(3, 19, 0xFFFFFFFF) and not warp_ordered(3, 35, 0xFFFFFFFF)
    assert not warp_ordered(3, 19, 0x0000FFFF) and warp_ordered(3, 9, 0x0000FFFF)
    assert span(0, 32) == 0xFFFFFFFF
