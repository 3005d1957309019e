"""TileLang's scan templates (`tl::CumSum2D<...>::run`, scan.h) as the header runs them, and an
unmodelled template's pointer argument as a possible read (issue 31, item 3).

The fixture is TileLang's own output for `tests/fixtures/causes/cumsum_rows.py`, and its two
handwritten twins:
* on sm_90 the scan consumes each TMA load the consumers then release on mbarrier[1]. As an
  unknown call it read nothing, so the next load was a false `mbarrier-release` error ("before
  anyone read the data") and every pair through it was undecided;
* `cumsum_rows_release_early`: the consumers arrive before the scan reads: a real early release;
* `cumsum_rows_opaque`: the same kernel with a template pipelint does not model: the load counts
  as consumed (a call handed the slot may read it), and the notes name the call.
"""
from __future__ import annotations

from pathlib import Path

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model.templates import Access, protocol
from pipelint.pluginhost import load_plugins

FIXTURES = Path(__file__).parent / "fixtures"


def _findings(path: Path) -> list[tuple[str, str, int, str]]:
    report = run_check([str(path)], load_plugins(), CheckOptions(jobs=1))
    return sorted((f.rule, f.severity.value, f.location.line, f.message) for f in report.findings)


def test_a_scan_consumes_the_tma_load_it_reads_and_decides_its_pairs() -> None:
    found = _findings(FIXTURES / "kernels" / "cumsum_rows_sm_90_s1.cu")
    assert [(r, s) for r, s, _, _ in found] == [("mbarrier-tx-bytes", "note"), ("redundant-barrier", "note")]
    # the header's rows come from the raw threadIdx.x: threads 128-255 scan rows 4-15 of the 16,
    # 12 rows of 128 floats read of each load; one box fills the buffer, densely from its start, so
    # it reaches at least the last byte read: 8192 bytes, the announcement (no more: a note)
    assert "take 8192 bytes" in found[0][3] and "no more than announced" in found[0][3]


def test_the_scan_on_sm_80_leaves_nothing_undecided_and_its_second_barrier_is_redundant() -> None:
    found = _findings(FIXTURES / "kernels" / "cumsum_rows_sm_80_s1.cu")
    assert [(r, s, line) for r, s, line, _ in found] == [("redundant-barrier", "note", 30),
                                                         ("redundant-barrier", "warning", 54)]


def test_a_release_before_the_scan_reads_is_an_early_release() -> None:
    found = _findings(FIXTURES / "handwritten" / "cumsum_rows_release_early_sm_90_s1.cu")
    assert [(r, s, line) for r, s, line, _ in found if s != "note"] == [("mbarrier-release", "error", 63)]


def test_an_unmodelled_template_handed_the_slot_consumes_the_load_and_is_named() -> None:
    found = _findings(FIXTURES / "handwritten" / "cumsum_rows_opaque_sm_90_s1.cu")
    assert [(r, s) for r, s, _, _ in found if s != "note"] == []
    notes = {r: m for r, _, _, m in found}
    assert "tl::RowScan<128>::run" in notes["race-undecided"]
    assert "tl::RowScan<128>::run" in notes["unknown-intrinsic"]


def _call(text: str) -> A.Call:
    parsed = parse(f"__global__ void k(float* a) {{ __shared__ float s[4096]; {text}; }}")
    return next(n for n in parsed.unit.walk() if isinstance(n, A.Call) and "run" in n.name)


def test_the_scan_protocol_reads_src_and_writes_dst_per_line_and_segment() -> None:
    rows = protocol(_call("tl::CumSum2D<128, 1, false>::run(&s[0], &s[2048], 16, 128, 128, 128)"))
    assert rows is not None
    steps = [s for s in rows.steps if isinstance(s, Access)]
    # 4 warps: 16 rows in 4 blocks, 128 columns in 4 segments, a read of src and a write of dst each
    assert len(steps) == 4 * 4 * 2
    assert {(s.pointer, s.access) for s in steps} == {(0, "read"), (1, "write")}
    assert all(len(s.guards) == 2 for s in steps)
    cols = protocol(_call("tl::CumMax2D<64, 0, true>::run(&s[0], &s[0], 32, 8, 8, 8)"))
    assert cols is not None and len(cols.steps) == 4 * 1 * 2       # 8 columns over 2 warps, 32 rows: 1 segment
    line = protocol(_call("tl::CumSum1D<256, false>::run(&s[0], &s[1024], 100)"))
    assert line is not None and len(line.steps) == 4 * 2            # one warp, 4 segments of 32
    assert protocol(_call("tl::CumSum2D<128, 1, false>::run(&s[0], &s[2048], n, 128, 128, 128)")) is None
