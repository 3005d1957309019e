"""Issue 31, items 5 and 6: a wait is too shallow only if some thread reads bytes that an in-flight
group of some thread writes, decided on the per-thread byte sets, not on the groups' hulls.

Two cp.async groups fill one buffer interleaved (tests/fixtures/handwritten/interleaved_groups*):
both hulls are the whole buffer, so main before the integer sets reported `wait-too-shallow` at
`cp_async_wait<1>` on the clean twin, whose read after it takes only the complete group's chunks.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
HANDWRITTEN = Path(__file__).parent / "fixtures" / "handwritten"


def _findings(name: str) -> list[tuple[str, str, int]]:
    report = run_check([str(HANDWRITTEN / name)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


@pytest.mark.parametrize("name, expected", [
    ("interleaved_groups.cu", []),
    # the read after cp_async_wait<1> (line 15) takes group 2's chunks, still in flight
    ("interleaved_groups_shallow.cu", [("wait-too-shallow", "error", 15)]),
])
def test_a_wait_is_too_shallow_only_where_the_exact_bytes_meet(name, expected):
    assert _findings(name) == expected


def test_a_value_both_branches_of_a_condition_on_data_assign_is_joined_and_the_note_names_it():
    """tests/fixtures/handwritten/branch_join.cu: `off` is 64 or 0 by a condition on data; main took
    the last branch's 0 and passed a possible race in silence.  Joined, it is unknown: a note that
    names `off` (and not `threadIdx`, the base of `threadIdx.x`, as the culprit search used to).
    An `if` with no `else` is read as taken (a first join dropped the parity counters blocksparse
    attention steps under the mask and 12 false mbarrier errors followed): those stay unchanged."""
    report = run_check([str(HANDWRITTEN / "branch_join.cu")], HOST, CheckOptions(jobs=1))
    assert [(f.rule, f.severity.value, f.location.line) for f in report.findings] == [
        ("race-undecided", "note", 19)]
    assert "`off`, a local with no value here" in report.findings[0].message


_ORDERS = """
extern "C" __global__ void __launch_bounds__(64, 1) k(const int* __restrict__ flag, float* __restrict__ out) {
  __shared__ float s[128];
  int slot;
  if (flag[0] > 0) {
    slot = FIRST;
  } else {
    slot = SECOND;
  }
  s[slot + ((int)threadIdx.x)] = 1.0f;
  if (((int)threadIdx.x) < 32) {
    out[((int)threadIdx.x)] = s[((int)threadIdx.x) + 32];
  }
}
"""


@pytest.mark.parametrize("first, second", [("0", "64"), ("64", "0")])
def test_the_join_does_not_depend_on_which_branch_comes_last(first, second):
    """With slot 0 thread t reads what thread t + 32 stored (a race on some inputs), with slot 64
    nothing meets.  Before the join, the verdict was the last branch's: silence in one order, an
    error in the other.  Both orders now give the same note, naming `slot`."""
    from pipelint.engine import analyze_source

    _, findings, errors, _ = analyze_source("k.cu", _ORDERS.replace("FIRST", first).replace("SECOND", second), HOST)
    assert not errors
    assert [(f.rule, f.severity.value) for f in findings] == [("race-undecided", "note")]
    assert "`slot`" in findings[0].message
