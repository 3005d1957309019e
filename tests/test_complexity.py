"""Issue 33: no function of the shipped code above cyclomatic complexity 15 (radon's measure).

A function that branches more than that is several concerns in one place, which is what made a
rule touch nine files; the limit is checked here so that it stays met.
"""
from __future__ import annotations

from pathlib import Path

import pytest

radon = pytest.importorskip("radon.complexity")

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 15


def test_no_function_of_the_core_or_the_plugins_is_above_the_limit():
    over = []
    for folder in ("analyzer", "plugins"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for block in radon.cc_visit(path.read_text(encoding="utf-8")):
                if block.complexity > LIMIT:
                    over.append(f"{path.relative_to(ROOT)}:{block.lineno} {block.fullname} {block.complexity}")
    assert over == []
