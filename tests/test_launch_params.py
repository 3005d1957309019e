"""Kernel arguments as parameters of the access sets, and the blocks a launch starts (issue 31, item 5).

The fixture is TileLang's output for `tests/fixtures/causes/tail_rows.py`: a run-time sequence
length `T_seq` in tiles of 64 rows, the rows past the end zeroed, and the tile's last valid row,
`max(0, min(64, T_seq - bx * 64) - 1)`, read with no barrier after the zeroing.  Before, the
read's index named a kernel argument and the pair was left undecided.  Now `T_seq` is a parameter:
the pair meets only where `64 * blockIdx.x >= T_seq`, a block wholly past the rows the kernel's
global accesses are guarded to, which TileLang's `ceildiv(T_seq, 64)` grid never starts: a note
says so (`launch-assumed`).  The buggy twin reads one row further, which the last, partial tile
zeroes: a race in a block every launch starts.
"""
from __future__ import annotations

from pathlib import Path

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, analyze_source, run_check
from pipelint.model.launch import _atoms, uniform_args
from pipelint.pluginhost import load_plugins

FIXTURES = Path(__file__).parent / "fixtures"


def _findings(path: Path) -> list[tuple[str, str, int, str]]:
    report = run_check([str(path)], load_plugins(), CheckOptions(jobs=1))
    return sorted((f.rule, f.severity.value, f.location.line, f.message) for f in report.findings)


def test_a_read_indexed_by_a_kernel_argument_is_decided_with_the_launch_stated() -> None:
    for name, read in (("tail_rows_sm_80_s0.cu", 50), ("tail_rows_sm_90_s0.cu", 49)):
        found = _findings(FIXTURES / "kernels" / name)
        assert [(r, s, line) for r, s, line, _ in found] == [("launch-assumed", "note", read)], name
        assert f"lines 44 and {read} where 64*blockIdx.x >= T_seq" in found[0][3]


def test_reading_the_row_the_partial_tile_zeroes_is_a_race() -> None:
    found = _findings(FIXTURES / "handwritten" / "tail_rows_last_row_sm_80_s0.cu")
    errors = [(r, line) for r, s, line, _ in found if s == "error"]
    assert errors == [("shared-race", 52)]
    assert "at line 54" in found[0][3] and "at line 48" in found[0][3]
    # the argument values it needs, from the sets: the last, partial tile
    assert "64*blockIdx.x < T_seq <= 63 + 64*blockIdx.x" in found[0][3]
    assert not [r for r, *_ in found if r in ("race-undecided", "launch-assumed")]


_NO_GUARDS = """
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ Out, int n) {
  __shared__ float s[8192];
  #pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (n <= ((((int)blockIdx.x) * 64) + (i * 8)) + (((int)threadIdx.x) >> 4)) {
      *(float4*)(s + ((i * 512) + (((int)threadIdx.x) * 4))) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
  if (((int)threadIdx.x) < 64) {
    Out[((int)threadIdx.x)] = s[((max(0, (min(64, (n - (((int)blockIdx.x) * 64))) - 1)) * 64) + ((int)threadIdx.x))];
  }
}
"""


def test_without_range_guards_nothing_is_assumed_and_the_pair_is_a_race() -> None:
    # the same zeroing and read, but no global access says where the rows end: a block with
    # n <= 64 * blockIdx.x is as much a launch as any other, and its race is reported
    _, findings, errors, _ = analyze_source("k.cu", _NO_GUARDS, load_plugins())
    assert not errors
    assert sorted((f.rule, f.severity.value) for f in findings) == [("shared-race", "error")]


def test_integer_arguments_never_assigned_are_the_parameters() -> None:
    func = parse("__global__ void k(float* p, int n, const int m, float s, int64_t q, uint32_t* c, int r) "
                 "{ r = r + 1; p[n] = s; }").unit.kernels()[0]
    assert uniform_args(func) == frozenset({"n", "m", "q"})


def test_range_guards_are_read_in_either_polarity() -> None:
    func = parse("__global__ void k(int n) { if (n <= blockIdx.x * 64 + threadIdx.x) { } "
                 "if (blockIdx.x * 64 < n && threadIdx.x < 3) { } }").unit.kernels()[0]
    ifs = [s for s in func.body.walk() if type(s).__name__ == "If"]
    # `n <= x` asserts n <= x; its else branch asserts x < n (the block's row in range)
    (lesser, greater, strict), = _atoms(ifs[0].cond, False)
    assert (type(lesser).__name__, getattr(greater, "ident", None), strict) == ("Binary", "n", True)
    assert [strict for _, _, strict in _atoms(ifs[1].cond, True)] == [True, True]
    assert _atoms(ifs[1].cond, False) == []      # `!(a && b)`: neither is asserted
