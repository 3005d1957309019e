"""Shared helpers: the committed fixture corpus and an in-process CLI runner."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelint.cli import main

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "fixtures" / "kernels"
HANDWRITTEN = ROOT / "tests" / "fixtures" / "handwritten"
ALL_KERNELS = sorted(KERNELS.glob("*.cu"))


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def json(self):
        return json.loads(self.out)


@pytest.fixture
def run_cli(capsys):
    def run(*args: str) -> CliResult:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def fixture(name: str) -> Path:
    return KERNELS / name
