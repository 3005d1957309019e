"""Issue 33: the numeric flags' converter lives in `commands/flags.py` (argparse stays out of
`schema.py`), with the schema's ranges and the same usage errors as before the move."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest
from helpers import ROOT

from pipelint import schema
from pipelint.commands.flags import flag_type

SETTINGS = [("jobs", True), ("max-file-size", False), ("time-budget", False), ("memory-budget", False),
            ("lower.num-stages", True), ("lower.jobs", True), ("lower.timeout", False)]


def _outcome(convert, text: str) -> tuple[str, object]:
    try:
        return "ok", convert(text)
    except argparse.ArgumentTypeError as exc:
        return "usage", str(exc)


@pytest.mark.parametrize("key, integer", SETTINGS)
def test_the_converter_takes_the_schema_range(key, integer):
    low, exclusive, high = schema.setting_range(key)
    convert = flag_type(key, integer)
    assert convert.__name__ == key           # argparse names the type by it
    kind = "an integer" if integer else "a number"
    for text in ("x", "nan", "inf", "-1", str(int(high) + 1), "2.5", "1", str(int(low)), "1e308"):
        got = _outcome(convert, text)
        if got[0] == "usage":
            assert got[1] == (f"expected {kind} {'>' if exclusive else '>='} {low:g} and <= {high:g}, "
                              f"got {text!r}")
    assert _outcome(convert, "1") == ("ok", 1)


def test_an_out_of_range_flag_is_one_line_exit_two(run_cli):
    res = run_cli("check", "--time-budget", "inf", str(ROOT / "tests" / "fixtures"))
    assert res.code == 2
    assert res.err == "pipelint: error: argument --time-budget: expected a number >= 0 and <= 86400, got 'inf'\n"


def test_schema_imports_no_command_line_module():
    """`schema.py` is read by the configuration loader and the server: it needs no argparse."""
    tree = ast.parse(Path(schema.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "argparse" not in imported
