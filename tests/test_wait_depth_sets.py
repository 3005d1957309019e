"""Issue 31, item 6: a wait is too shallow only if some thread reads bytes that an in-flight
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
