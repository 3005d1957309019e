"""Gitignore-style matching that cannot backtrack exponentially.

pathspec translates `*a*a*a*b` into `[^/]*a[^/]*a[^/]*a[^/]*b`, and Python's backtracking `re`
needs time exponential in the number of stars to reject a long name: a checked repository's own
`.gitignore` could hang the walk (issue 38: 8.7 s for one match with four stars, > 100 s with
more). This module keeps pathspec's gitignore semantics (`GitIgnoreSpec`: the same normalisation
of `**`, anchoring, directory patterns, negation and the priority of file over directory matches;
`tests/test_walk_bounds.py` compares the two on thousands of random patterns) but writes each
pattern as a regular expression whose backtracking is bounded:

* inside a path segment, every star-free chunk between two stars is matched at its leftmost
  place and committed (an atomic group, `(?>[^/]*?CHUNK)`, as `fnmatch` does): a later star can
  absorb whatever an earlier chunk left, so the leftmost place is never worse;
* every `**` but the last is committed the same way to the first place where the segments after
  it match (each segment matches a whole path segment, so that place is fixed); the last `**`
  stays greedy, which is what decides pathspec's directory marker (`ps_d`).

A match then costs at most about (path length)^2 x (pattern length) steps, not an exponential.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_DIR_MARK = "ps_d"
_DIR_MARK_CG = f"(?P<{_DIR_MARK}>/)"
_DIR_MARK_OPT = f"(?:{_DIR_MARK_CG}|$)"
_SEGMENT_END = "(?=/|$)"
_STAR = object()          # a `*` token of a segment glob


class IgnorePatternError(ValueError):
    """A pattern that git itself would reject (a trailing backslash, a bare `!`)."""


class _RangeError(ValueError):
    """An unclosed `[`: git discards the whole pattern."""


@dataclass(frozen=True)
class IgnorePattern:
    """One compiled line: `include` True ignores what it matches, False (`!`) re-includes it."""

    source: str
    include: bool
    regex: re.Pattern[str]


class IgnoreSpec:
    """The lines of a `.gitignore` (or `exclude` patterns), matched as `git check-ignore` would."""

    def __init__(self, patterns: Iterable[IgnorePattern]) -> None:
        self.patterns = tuple(patterns)

    @classmethod
    def from_lines(cls, lines: Iterable[str], *, skip_invalid: bool = False) -> IgnoreSpec:
        """Compile `lines`; an invalid line raises IgnorePatternError unless `skip_invalid`
        (a `.gitignore`, where git ignores such a line)."""
        patterns = []
        for line in lines:
            try:
                compiled = compile_pattern(line)
            except IgnorePatternError:
                if skip_invalid:
                    continue
                raise
            if compiled is not None:
                patterns.append(compiled)
        return cls(patterns)

    def match_file(self, path: str) -> bool:
        """Whether `path` (POSIX, relative; a trailing `/` for a folder) is ignored.

        As pathspec's GitIgnoreSpec: the last pattern that matches the path itself decides;
        failing that, the last one that matches a folder above it."""
        file = path[1:] if path.startswith("/") else path[2:] if path.startswith("./") else path
        folder_verdict: bool | None = None
        for pattern in reversed(self.patterns):
            match = pattern.regex.search(file)
            if match is None:
                continue
            if not match.groupdict().get(_DIR_MARK):
                return pattern.include
            if folder_verdict is None:
                folder_verdict = pattern.include
        return bool(folder_verdict)


def compile_pattern(line: str) -> IgnorePattern | None:
    """One gitignore line as a bounded regex; None for blank lines, comments and lines git drops."""
    text = line if line.endswith("\\ ") else line.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    include = not text.startswith("!")
    body = text if include else text[1:]
    segments = body.split("/")
    is_dir = not segments[-1]
    try:
        normalized, override = _normalize(is_dir, segments)
        regex = override if override is not None else "".join(_translate(is_dir, normalized))
    except _RangeError:
        return None
    except ValueError as exc:
        raise IgnorePatternError(f"invalid gitignore pattern {line!r}: {exc}") from None
    return IgnorePattern(line, include, re.compile(regex))


def _normalize(is_dir: bool, segs: list[str]) -> tuple[list[str], str | None]:
    """pathspec's segment normalisation: anchoring, implied `**/`, `/**` for folders, `**/**`;
    and the regex of a pattern that matches everything of a kind (`**`, `*`, `*/`), which
    pathspec writes as a whole rather than segment by segment."""
    _anchor(segs)
    if not segs:
        raise ValueError("the pattern is empty")
    if not segs[-1]:
        segs[-1] = "**"
    for i in range(len(segs) - 1, 0, -1):
        if segs[i - 1] == "**" and segs[i] == "**":
            del segs[i]
    whole = _WHOLE.get(tuple(segs))
    if whole is None:
        return segs, None
    return segs, whole[0] if is_dir else whole[1]


# Normalised segments that pathspec matches as a whole: (regex of a folder pattern, of any other).
_WHOLE: dict[tuple[str, ...], tuple[str, str]] = {
    ("**",): (_DIR_MARK_CG, "."),
    ("**", "*"): (".", "."),
    ("**", "*", "**"): (_DIR_MARK_CG, "/"),
}


def _anchor(segs: list[str]) -> None:
    """A leading `/` anchors the pattern at the root (the empty first segment goes); a pattern
    of one segment (a trailing `/` aside) matches at any depth, as if written `**/NAME`."""
    if not segs[0]:
        del segs[0]
    elif (len(segs) == 1 or (len(segs) == 2 and not segs[1])) and segs[0] != "**":
        segs.insert(0, "**")


def _translate(is_dir: bool, segs: list[str]) -> list[str]:
    """Regex parts for normalised segments; `**` gaps before the last one are committed."""
    gaps = [i for i, seg in enumerate(segs) if seg == "**" and i < len(segs) - 1]
    out = _Regex(last_gap=gaps[-1] if gaps else -1)
    end = len(segs) - 1
    for i, seg in enumerate(segs):
        if seg == "**" and i == end:
            out.close_group()
            out.parts.append(_DIR_MARK_CG if is_dir else "/")
        elif seg == "**":
            out.gap(i)
        else:
            out.segment(i, seg, follows_gap=i > 0 and segs[i - 1] == "**", last=i == end)
    out.close_group()
    return out.parts


class _Regex:
    """The regex of one pattern as it is written, segment by segment.

    A committed `**` gap opens an atomic group that must close only after the segment that
    follows it (the group commits to the first place where that segment matches), so whether
    a group is open is state carried from one segment to the next."""

    def __init__(self, last_gap: int) -> None:
        self.parts: list[str] = []
        self.last_gap = last_gap        # the last `**` before the end stays greedy (`ps_d`)
        self.open_group = False

    def close_group(self) -> None:
        if self.open_group:
            self.parts.append(_SEGMENT_END + ")")
            self.open_group = False

    def gap(self, i: int) -> None:
        """A `**` that is not the last segment: any number of folders, committed unless it is the last gap."""
        self.close_group()
        committed = i != self.last_gap
        if i == 0:
            self.parts.append("^(?>(?:.+?/)??" if committed else "^(?:.+/)?")
        else:
            self.parts.append("(?>(?:/.+?)??/" if committed else "(?:/.+)?/")
        self.open_group = committed

    def segment(self, i: int, seg: str, follows_gap: bool, last: bool) -> None:
        """One segment glob; a gap before it already wrote the `/`; the last one may be a folder."""
        if i == 0:
            self.parts.append("^")
        elif not follows_gap:
            self.parts.append("/")
        self.parts.append("[^/]+" if seg == "*" else _segment_regex(seg))
        if last:
            self.close_group()
            self.parts.append(_DIR_MARK_OPT)


def _segment_regex(glob: str) -> str:
    """One segment's glob: star-free chunks between stars matched leftmost and committed."""
    tokens = _tokens(glob)
    chunks: list[list[str]] = [[]]
    for token in tokens:
        if token is _STAR:
            if chunks[-1] or len(chunks) == 1:
                chunks.append([])
            continue
        chunks[-1].append(str(token))
    if len(chunks) == 1:
        return "".join(chunks[0])
    first, *middle, last = ("".join(chunk) for chunk in chunks)
    return first + "".join(f"(?>[^/]*?{chunk})" for chunk in middle if chunk) + "[^/]*" + last


def _tokens(glob: str) -> list[object]:
    """The glob as `_STAR` and one-character regexes (literal, `?`, bracket expression), read as
    pathspec reads it (`\\` escapes, `[!...]`/`[^...]` negate, `]` first is literal)."""
    out: list[object] = []
    i, end = 0, len(glob)
    while i < end:
        char = glob[i]
        i += 1
        if char == "\\":
            if i == end:
                raise ValueError("a backslash with nothing to escape")
            out.append(re.escape(glob[i]))
            i += 1
        elif char == "*":
            out.append(_STAR)
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            expr, i = _bracket(glob, i)
            out.append(expr)
        else:
            out.append(re.escape(char))
    return out


def _bracket(glob: str, i: int) -> tuple[str, int]:
    """The bracket expression that starts after the `[` at `i - 1`, and the index past it."""
    end = len(glob)
    j = i
    if j < end and glob[j] in "!^":
        j += 1
    if j < end and glob[j] == "]":
        j += 1
    while j < end and glob[j] != "]":
        j += 1
    if j >= end:
        raise _RangeError(glob)
    j += 1
    expr = "(?!/)["         # git's wildmatch: a bracket expression never matches `/` (pathspec's can)
    if glob[i] in "!^":
        expr += "^"
        i += 1
    return expr + glob[i:j].replace("\\", "\\\\"), j
