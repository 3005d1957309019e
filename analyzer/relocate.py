"""Report transforms on locations: Python-line-first findings and `#line` path rebasing.

People edit the TileLang Python, not the regenerated `.cu`.  With
`--primary-location python` a finding's primary location becomes the user's
kernel statement (from `#line`) and the `.cu` position a related one; GitHub
annotations and code scanning then point at the line to change.
`--path-map OLD=NEW` rebases `#line` paths written on another machine.

A `#line` name is whatever the analysed file says (`"../../../../etc/passwd"`).
`confine` marks each location outside the project (`Location.outside`): such a
file is reported by name and never opened, not for its source line, a
`# pipelint: ignore` comment or a line hash.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from typing import TypeVar

from .cuda.linemap import is_tilelang_internal
from .findings import Finding, Location, Report, Witness

_Placed = TypeVar("_Placed", Location, Witness)     # what names a file: a location, a race's witness

ORIGIN_MESSAGES = ("kernel statement this code was generated from", "TileLang source of this line")


def python_origin(f: Finding) -> Location | None:
    """The user's TileLang line a finding maps to (never a line of TileLang's own files)."""
    for wanted in ORIGIN_MESSAGES:
        for rel in f.related:
            if rel.message == wanted and rel.path.endswith(".py") and not is_tilelang_internal(rel.path):
                return rel
    return None


def python_first(report: Report) -> None:
    """Make each finding's Python origin its primary location; the `.cu` span becomes related.
    Reporters then show the findings in Python terms, one per defect (`pipelint.report.present`)."""
    report.findings = [_python_first(f) for f in report.findings]
    report.primary_location = "python"


def _python_first(f: Finding) -> Finding:
    origin = python_origin(f)
    if origin is None:
        return f
    cu = replace(f.location, message="generated CUDA")
    rest = tuple(r for r in f.related if r is not origin and r.message not in ORIGIN_MESSAGES)
    return replace(f, location=Location(origin.path, origin.line, 1, origin.line, None, outside=origin.outside),
                   related=(cu, *rest))


def parse_path_map(items: Iterable[str]) -> list[tuple[str, str]]:
    from .errors import UsageError

    pairs = []
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old:
            raise UsageError(f"--path-map: expected OLD=NEW, got {item!r}")
        pairs.append((old, new))
    return pairs


def map_paths(report: Report, pairs: list[tuple[str, str]]) -> None:
    """Rebase every location whose path starts with an OLD prefix (the first that matches), and
    a race's witness path with them: it names the CUDA file the finding's `.cu` location names,
    and must keep naming the same file after the rebase."""
    if not pairs:
        return

    def rebased(path: str) -> str:
        for old, new in pairs:
            if path.startswith(old):
                return new + path[len(old):]
        return path

    def fix(at: _Placed) -> _Placed:
        return replace(at, path=rebased(at.path))

    report.findings = [replace(f, location=fix(f.location), related=tuple(fix(r) for r in f.related),
                               witness=fix(f.witness) if f.witness is not None else None)
                       for f in report.findings]


def confine(report: Report, root: str | os.PathLike[str], pairs: list[tuple[str, str]],
            trusted: Iterable[str] = ()) -> None:
    """Rebase `#line` paths (`map_paths`), then mark every location outside the project.

    Inside are files under `root`, the files checked (named by the user or found by the walk)
    and files under a `trusted` path: what the user named on the command line (`options.named_paths`)
    and the NEW of a `--path-map` given there (the user said where those sources are; a checked
    repository's own `path-map` rebases paths but cannot make pipelint read out of the
    project).  Paths are resolved as `open` would resolve them, symbolic links included.
    """
    map_paths(report, pairs)
    inside = ProjectFiles(root, [r.path for r in report.files], trusted)

    def mark(loc: Location) -> Location:
        outside = not inside.contains(loc.path)
        return loc if loc.outside == outside else replace(loc, outside=outside)

    report.findings = [replace(f, location=mark(f.location), related=tuple(mark(r) for r in f.related))
                       for f in report.findings]


class ProjectFiles:
    """Which paths pipelint may open: under the project's folders or one of the checked files."""

    def __init__(self, root: str | os.PathLike[str], files: Iterable[str] = (), folders: Iterable[str] = ()) -> None:
        self._folders = [_real(root), *(_real(f) for f in folders if f)]
        self._files = {_real(f) for f in files}
        self._seen: dict[str, bool] = {}

    def contains(self, path: str) -> bool:
        known = self._seen.get(path)
        if known is None:
            real = _real(path)
            known = self._seen[path] = real in self._files or any(
                real == folder or real.startswith(folder.rstrip(os.sep) + os.sep) for folder in self._folders)
        return known


def _real(path: str | os.PathLike[str]) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):       # a NUL byte, a loop of links: not a path to open
        return "\0"
