"""`#line` mapping: physical .cu lines to the TileLang Python that made them.

`#line N "file"` says the *next* physical line is line N of `file`.  TileLang
emits one before most statements, pointing at the user's kernel or at
TileLang's own Python (gemm macros); paths may be absolute or relative.  The
lines after it until the next directive are that statement's expansion, so they
all map to line N (not N + 1, N + 2, ... as C counts: see `LineMap.origin`).
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .ast import Directive

_LINE = re.compile(r'#\s*line\s+(\d+)(?:\s+"((?:[^"\\]|\\.)*)")?')


@dataclass(frozen=True, slots=True)
class Origin:
    """A position in the source that generated a .cu line."""

    file: str
    line: int


class LineMap:
    """Maps physical lines to `Origin`s; empty when the file has no `#line`."""

    def __init__(self, directives: Iterable[Directive]) -> None:
        self._at: list[int] = []
        self._origin: list[tuple[str, int]] = []
        current_file = ""
        for d in directives:
            m = _LINE.match(d.text.strip())
            if not m:
                continue
            current_file = m.group(2) if m.group(2) is not None else current_file
            self._at.append(d.line)
            self._origin.append((current_file, int(m.group(1))))

    @classmethod
    def from_text(cls, text: str) -> LineMap:
        """The map of a source's `#line` directives read off its text, without parsing it (a
        reporter mapping a finding's CUDA lines back to Python)."""
        from .ast import Directive
        from .newlines import split_lines

        found = []
        for number, line in enumerate(split_lines(text), 1):
            stripped = line.lstrip()
            if stripped.startswith("#") and _LINE.match(stripped):
                found.append(Directive(stripped, number, 1))
        return cls(found)

    def __bool__(self) -> bool:
        return bool(self._at)

    def origin(self, line: int) -> Origin | None:
        """The origin of physical `line`, or None before the first `#line`.

        Every line of a `#line` block maps to the directive's own line.  C's rule counts one
        source line per physical line after the directive, but TileLang emits one directive per
        *statement* of the Python program and the block under it is that statement's expansion
        (a 35-line unrolled epilogue under `#line 36`): counting would land on Python lines that
        do not exist (line 69 of a 43-line file) or on unrelated statements."""
        i = bisect.bisect_left(self._at, line) - 1
        if i < 0:
            return None
        file, start = self._origin[i]
        return Origin(file, start)

    def user_origin(self, line: int) -> Origin | None:
        """The nearest origin at or before `line` outside TileLang's own package.

        Code TileLang expands from its own macros (`T.gemm` becomes
        `gemm_mma.py` lines) still belongs to a statement of the user's kernel:
        the last `#line` that points outside `tilelang/`.
        """
        i = bisect.bisect_left(self._at, line) - 1
        while i >= 0:
            file, start = self._origin[i]
            if not is_tilelang_internal(file):
                return Origin(file, start)
            i -= 1
        return None

    def files(self) -> list[str]:
        return sorted({f for f, _ in self._origin})


INSTALLED = ("site-packages", "dist-packages")     # pip's and Debian's folders of installed packages


def is_tilelang_internal(path: str) -> bool:
    """Whether a `#line` path is TileLang's own (its templates and macros) or any installed
    package's (site-packages, Debian's dist-packages), rather than the user's kernel."""
    parts = path.replace("\\", "/").split("/")
    return (path.startswith("tilelang/") or "/tilelang/tilelang/" in path
            or any(p in INSTALLED for p in parts[:-1]))
