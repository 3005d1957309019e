"""Reporters: pure functions from a `Report` to text."""
from __future__ import annotations

from typing import Callable

from ..findings import Report

Reporter = Callable[..., str]


def get_reporter(name: str) -> Reporter:
    if name == "text":
        from .text import render
    elif name == "json":
        from .json_report import render
    elif name == "sarif":
        from .sarif import render
    elif name == "github":
        from .github import render
    else:
        raise ValueError(f"unknown format {name!r}")
    return render


__all__ = ["Report", "get_reporter"]
