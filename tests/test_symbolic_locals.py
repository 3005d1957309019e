"""Locals whose value is an expression of the launch, in the sets (issue 31, item 1).

TileLang prints `T.if_then_else` as a local assigned in both branches of an `if` on the block
index (`tests/fixtures/causes/paired_halves.py`).  The local has no number in the walk (the block
index is a parameter), but it has a value: the select `bx < 2 ? bx : bx - 2`, which the sets take
exactly.  Before, an index or a guard that read it was "a local with no value here": undecided.
"""
from __future__ import annotations

from pathlib import Path

from pipelint.engine import CheckOptions, analyze_source, run_check
from pipelint.pluginhost import load_plugins

FIXTURES = Path(__file__).parent / "fixtures"


def _findings(path: Path) -> list[tuple[str, str, int, str]]:
    report = run_check([str(path)], load_plugins(), CheckOptions(jobs=1))
    return sorted((f.rule, f.severity.value, f.location.line, f.message) for f in report.findings)


def test_a_half_chosen_by_the_block_index_is_decided_clean() -> None:
    for name in ("paired_halves_sm_80_s0.cu", "paired_halves_sm_90_s0.cu"):
        assert _findings(FIXTURES / "kernels" / name) == [], name


def test_reading_another_threads_row_of_the_half_is_a_race() -> None:
    found = _findings(FIXTURES / "handwritten" / "paired_halves_mirror_sm_80_s0.cu")
    assert [(r, s, line) for r, s, line, _ in found] == [("shared-race", "error", 54)]
    assert "at line 40" in found[0][3]


_GUARDED = """
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ Out, const float* __restrict__ X) {
  __shared__ float s[128];
  int condval_2;
  if ((((int)blockIdx.x) < 2)) {
    condval_2 = ((int)blockIdx.x);
  } else {
    condval_2 = (((int)blockIdx.x) - 2);
  }
  int condval_1;
  if ((condval_2 < LIMIT)) {
    condval_1 = 1;
  } else {
    condval_1 = 0;
  }
  if (condval_1 != 0) {
    s[((int)threadIdx.x)] = X[((int)threadIdx.x)];
  }
  Out[((int)threadIdx.x)] = s[(127 - ((int)threadIdx.x))];
}
"""


def _rules(source: str) -> list[tuple[str, str]]:
    _, findings, errors, _ = analyze_source("guarded.cu", source, load_plugins())
    assert not errors
    return sorted((f.rule, f.severity.value) for f in findings)


def test_a_flag_set_from_a_select_on_the_block_index_guards_exactly() -> None:
    """The causal attention's prologue: `condval_1 = condval_2 < 0`, with `condval_2` the select;
    no block index makes it negative, so the guarded store never runs and the mirrored read meets
    nothing.  With `condval_2 < 1` block 0 (and 2) store, and the read races with them."""
    assert _rules(_GUARDED.replace("LIMIT", "0")) == []
    assert _rules(_GUARDED.replace("LIMIT", "1")) == [("shared-race", "error")]


_SKIPPED = """
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ Out, const float* __restrict__ X) {
  __shared__ float s[1024];
  int c = 1;
  if ((((int)blockIdx.x) >= 2)) {
    c = (((int)blockIdx.x) - 1);
  }
  s[((c * 128) + ((int)threadIdx.x))] = X[((int)threadIdx.x)];
  Out[((int)threadIdx.x)] = s[(READ - ((int)threadIdx.x))];
}
"""


def test_a_local_set_in_an_if_without_else_keeps_its_old_value_where_the_branch_is_skipped() -> None:
    """`c` is 1 in blocks 0 and 1, `bx - 1` from block 2 on: never 0, so the store never reaches
    the first 128 floats the mirrored read takes.  Read as the branch's value everywhere
    (`bx - 1`), block 1 would have `c = 0`: a race no block has.  The select of the branch's value
    and the value before it is exact; a read of the second 128 floats does race (block 0)."""
    assert _rules(_SKIPPED.replace("READ", "127")) == []
    assert _rules(_SKIPPED.replace("READ", "255")) == [("shared-race", "error")]


_FROM_DATA = """
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ Out, const int* __restrict__ I) {
  __shared__ float s[512];
  int c = (((int)blockIdx.x) + 200);
  if ((((int)blockIdx.x) < 2)) {
    c = I[0];
  } else {
    c = I[1];
  }
  if (((int)threadIdx.x) < 64) {
    s[(c + ((int)threadIdx.x))] = 1.000000e+00f;
  } else {
    s[((int)threadIdx.x)] = 2.000000e+00f;
  }
  __syncthreads();
  Out[((int)threadIdx.x)] = s[((int)threadIdx.x)];
}
"""


def test_a_local_both_branches_load_from_memory_has_no_value_after_the_if() -> None:
    """Both branches set `c` from memory: after the `if` it is unknown, not `bx + 200` from before
    it (which put the store out of the other threads' reach: a race decided away)."""
    assert ("race-undecided", "note") in _rules(_FROM_DATA)
