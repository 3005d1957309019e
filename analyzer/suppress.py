"""`// pipelint: ignore[RULE,...]` comments: found once, when the engine reads a file.

Kept with the file's result (and in the result cache), so applying them later
never reads the file again.
"""
from __future__ import annotations

import re

SUPPRESS = re.compile(r"//\s*pipelint:\s*ignore(?:\[([^\]]*)\])?")

Suppressions = tuple[tuple[int, tuple[str, ...], int], ...]


def suppressions_in(text: str) -> Suppressions:
    """(line, rule ids, column) of each suppression comment; an empty rule tuple for a bare
    `pipelint: ignore` (reported: it must name its rules)."""
    if "pipelint" not in text:
        return ()
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = SUPPRESS.search(line)
        if m:
            rules = tuple(sorted({r.strip() for r in (m.group(1) or "").split(",") if r.strip()}))
            out.append((n, rules, m.start() + 1))
    return tuple(out)
