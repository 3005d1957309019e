"""Hand-written CUDA cases whose expected findings are written next to the offending line.

Each `tests/functional/*.cu` marks a line with `// expect: RULE[, RULE]`; the findings of severity
warning and error, plus any rule a file expects, must be exactly those. A new case is one file.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

CASES = sorted((Path(__file__).parent / "functional").glob("*.cu"))
EXPECT = re.compile(r"//\s*expect:\s*([\w\-, ]+)")
HOST = load_plugins()


def expected(path: Path) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            found |= {(number, rule.strip()) for rule in m.group(1).split(",") if rule.strip()}
    return found


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_case_reports_exactly_what_it_expects(case):
    want = expected(case)
    report = run_check([str(case)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    wanted_rules = {rule for _, rule in want}
    got = {(f.location.line, f.rule) for f in report.findings
           if f.severity.value in ("error", "warning") or f.rule in wanted_rules}
    assert got == want


def test_there_are_cases():
    assert len(CASES) >= 4
