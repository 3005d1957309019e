"""Paths and small helpers the tests share (imported by the tests, not a pytest plugin)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "fixtures" / "kernels"
HANDWRITTEN = ROOT / "tests" / "fixtures" / "handwritten"
ALL_KERNELS = sorted(KERNELS.glob("*.cu"))


def fixture(name: str) -> Path:
    return KERNELS / name
