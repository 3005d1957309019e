"""`// pipelint: ignore[RULE,...]` comments: found once, when the engine reads a file.

Kept with the file's result (and in the result cache), so applying them later
never reads the file again.
"""
from __future__ import annotations

import os
import re
import stat

from .cuda.newlines import split_lines

SUPPRESS = re.compile(r"//\s*pipelint:\s*ignore(-file)?(?:\[([^\]]*)\])?")

Suppressions = tuple[tuple[int, tuple[str, ...], int], ...]


PYTHON_SUPPRESS = re.compile(r"#\s*pipelint:\s*ignore\[([^\]]*)\]")
_PYTHON: dict[tuple, dict[int, set[str]]] = {}


def python_suppressed(path: str, line: int, rule: str) -> bool:
    """Whether `# pipelint: ignore[RULE]` on line `line` of a TileLang Python file names `rule`
    (the `.cu` is regenerated; the Python is what people edit).  Read once per file version."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if key not in _PYTHON:
        found: dict[int, set[str]] = {}
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for n, text in enumerate(fh, 1):
                    m = PYTHON_SUPPRESS.search(text)
                    if m:
                        found[n] = {r.strip() for r in m.group(1).split(",") if r.strip()}
        except OSError:
            pass
        if len(_PYTHON) > 256:
            _PYTHON.clear()
        _PYTHON[key] = found
    return rule in _PYTHON[key].get(line, set())


def suppressions_in(text: str) -> Suppressions:
    """(line, rule ids, column) of each suppression comment; an empty rule tuple for a bare
    `pipelint: ignore` (reported: it must name its rules).  A file-level one,
    `// pipelint: ignore-file[RULE,...]` (anywhere in the file), is kept under minus its line."""
    if "pipelint" not in text:
        return ()
    out = []
    for n, line in enumerate(split_lines(text), 1):     # numbered as the parser numbers them
        m = SUPPRESS.search(line)
        if m:
            rules = tuple(sorted({r.strip() for r in (m.group(2) or "").split(",") if r.strip()}))
            out.append((-n if m.group(1) else n, rules, m.start() + 1))
    return tuple(out)
