"""Converters for the command-line flags of numeric settings.

They live with the command-line code rather than in `schema.py`: what makes a bad value a
usage error (exit 2) is argparse's business, and the schema module stays free of it.  The range
itself still comes from config.schema.json (`schema.setting_range`), so a flag and the
`[tool.pipelint]` key of the same setting accept the same numbers (issue 38).
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from ..schema import setting_range


def flag_type(key: str, integer: bool = False) -> Callable[[str], float]:
    """An argparse `type` for the flag of setting `key`: a finite number in the schema's range,
    else argparse's usage error (exit 2) that says the range."""
    low, exclusive, high = setting_range(key)
    kind = "an integer" if integer else "a number"
    expected = f"{kind} {'>' if exclusive else '>='} {low:g} and <= {high:g}"

    def convert(text: str) -> float:
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not math.isfinite(value) or value < low or (exclusive and value == low) or value > high:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    convert.__name__ = key      # argparse names the type in some messages
    return convert
