"""Stable finding identity: GitHub's `primaryLocationLineHash`, computed here.

GitHub's upload action hashes the first 100 non-blank characters from the
start of each line (a rolling base-37 hash over UTF-16 code units, 64-bit
wrap-around, line endings normalised) and appends `:n` for the n-th line with
the same hash.  pipelint computes the same value itself, so results keep
their identity when lines above them move, and also when the dumped kernel is
not part of the checkout the SARIF is uploaded from.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re

from .findings import Finding
from .limits import readable

_BLOCK = 100
_MOD = 37
_MASK = (1 << 64) - 1
_FIRST_MOD = pow(_MOD, _BLOCK, 1 << 64)
_TAB, _SPACE, _LF, _CR, _EOF = 9, 32, 10, 13, 65535


def line_hashes(text: str) -> dict[int, str]:
    """1-based line number -> primaryLocationLineHash for every line of `text`."""
    units = memoryview(text.encode("utf-16-le")).cast("H")
    window = [0] * _BLOCK
    starts = [-1] * _BLOCK
    value = 0
    index = 0
    line = 0
    line_start = True
    prev_cr = False
    counts: dict[str, int] = {}
    out: dict[int, str] = {}

    def emit() -> None:
        key = format(value & _MASK, "x")
        counts[key] = counts.get(key, 0) + 1
        out[starts[index]] = f"{key}:{counts[key]}"
        starts[index] = -1

    def update(current: int) -> None:
        nonlocal value, index
        begin = window[index]
        window[index] = current
        value = (_MOD * value + current - _FIRST_MOD * begin) & _MASK
        index = (index + 1) % _BLOCK

    def feed(current: int) -> None:
        nonlocal line, line_start, prev_cr
        if current in (_SPACE, _TAB) or (prev_cr and current == _LF):
            prev_cr = False
            return
        if current == _CR:
            current, prev_cr = _LF, True
        else:
            prev_cr = False
        if starts[index] != -1:
            emit()
        if line_start:
            line_start = False
            line += 1
            starts[index] = line
        if current == _LF:
            line_start = True
        update(current)

    for unit in units:
        feed(unit)
    feed(_EOF)
    for _ in range(_BLOCK):
        if starts[index] != -1:
            emit()
        update(0)
    return out


@functools.lru_cache(maxsize=128)
def _cached_hashes(path: str, mtime_ns: int, size: int) -> dict[int, str]:
    if not os.path.isfile(path):      # FIFOs and devices are never read (they would block)
        return {}
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return line_hashes(fh.read())


def file_line_hashes(path: str) -> dict[int, str]:
    """Hashes of a file's lines, cached while the file is unchanged."""
    try:
        st = os.stat(path)
        if not readable(st):        # over --max-file-size: never read (its finding is at line 1)
            return {}
        return _cached_hashes(path, st.st_mtime_ns, st.st_size)
    except OSError:
        return {}


def line_hash(path: str, line: int) -> str | None:
    return file_line_hashes(path).get(line)


_LINE_REFERENCE = re.compile(r"\blines? \d+")


def fingerprint(f: Finding, with_path: bool = False) -> str:
    """Baseline identity: rule, kernel and the line hash (not the line number), and with
    `with_path` the file's path as well."""
    loc = f.location        # a file outside the project is never opened (`relocate.confine`)
    anchor = (None if loc.outside else line_hash(loc.path, loc.line)) or f"line{loc.line}"
    # messages name other lines ("read at line 88"): an edit above them must not change identity
    message = _LINE_REFERENCE.sub("line", f.message)
    raw = f"{f.rule}\0{f.kernel or ''}\0{anchor}\0{message}"
    if with_path:
        raw += f"\0{f.location.path}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]
