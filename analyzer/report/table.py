"""Plain-text tables: columns padded to their widest cell, trailing spaces trimmed.

Cells hold input-derived text (file names, kernel and buffer names, `#line` paths), so each
is passed through `visible` first: a table is as safe to print as a text report, and its
columns line up on what the terminal shows.
"""
from __future__ import annotations

from collections.abc import Sequence

from .escape import visible


def columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """One line per row, each column as wide as its widest cell, two spaces between columns."""
    if not rows:
        return []
    rows = [[visible(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
