"""Human-readable report: `path:line:col: severity[rule] message`, the source
line with a caret, related locations underneath, and a summary."""
from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Iterator

from ..cuda.newlines import split_lines
from ..findings import PERFORMANCE, Finding, Report, Severity
from ..limits import readable
from .escape import visible
from .present import shown_findings

_COLOURS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m", Severity.NOTE: "\033[1;36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


@functools.lru_cache(maxsize=64)
def _cached_lines(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    if not os.path.isfile(path):      # FIFOs and devices are never read (they would block)
        return ()
    with open(path, encoding="utf-8", errors="replace") as fh:
        return tuple(split_lines(fh.read()))     # numbered as the parser numbers them


def _lines(path: str) -> tuple[str, ...]:
    try:
        st = os.stat(path)
        if not readable(st):        # over --max-file-size: never read, not even for one line
            return ()
        return _cached_lines(path, st.st_mtime_ns, st.st_size)
    except OSError:
        return ()


def _source_line(path: str, line: int, column: int, colour: bool) -> list[str]:
    lines = _lines(path)
    if not 0 < line <= len(lines):
        return []
    text = lines[line - 1]
    stripped = text.lstrip()
    cut = len(text) - len(stripped)
    if len(stripped) > 160:
        start = max(0, column - 1 - cut - 60)
        stripped = ("..." if start else "") + stripped[start:start + 140] + "..."
        cut += start - (3 if start else 0)
    # the caret goes under the same character once tabs are spaces and control bytes escapes
    before = visible(stripped[:max(0, column - 1 - cut)].expandtabs(4))
    caret = " " * len(before) + "^"
    if colour:
        caret = _COLOURS[Severity.ERROR] + caret + _RESET
    return [f"    {visible(stripped.expandtabs(4))}", f"    {caret}"]


def format_finding(f: Finding, colour: bool = False, source: bool = True) -> list[str]:
    """The lines of one finding; everything that comes from the input is passed through `visible`
    (a `#line` name or a message may hold ESC/BEL: terminal sequences)."""
    loc = f.location
    sev = f.severity.value
    where, rule, message = f"{visible(loc.path)}:{loc.line}:{loc.column}:", visible(f.rule), visible(f.message)
    if colour:
        head = f"{_BOLD}{where}{_RESET} {_COLOURS[f.severity]}{sev}{_RESET}[{rule}] {message}"
    else:
        head = f"{where} {sev}[{rule}] {message}"
    out = [head]
    if source and not loc.outside:      # a file outside the project is named, never opened
        out.extend(_source_line(loc.path, loc.line, loc.column, colour))
    for rel in f.related:
        text = f"    {visible(rel.path)}:{rel.line}:{rel.column}: note: {visible(rel.message)}"
        out.append(f"{_DIM}{text}{_RESET}" if colour else text)
    if f.help:
        out.append(f"    {_BOLD}help{_RESET}: {visible(f.help)}" if colour else f"    help: {visible(f.help)}")
    return out


def render(report: Report, colour: bool = False, statistics: bool = False, quiet: bool = False,
           **_: object) -> str:
    out: list[str] = []
    findings = shown_findings(report)
    for f in findings:
        out.extend(format_finding(f, colour))
    for e in report.errors:
        where = f"{visible(e.path)}: " if e.path else ""
        out.append(f"{where}tool error: {visible(e.message)}")
    if statistics:
        out.extend(_statistics(findings))
    if not quiet:
        out.append(_summary(report, findings))
    return "\n".join(out) + "\n" if out else ""


def _statistics(findings: list[Finding]) -> list[str]:
    """`--statistics`: a blank line, then the count of each rule, the most frequent first."""
    by_rule = Counter(f.rule for f in findings)
    return ["", *(f"{n:6d}  {visible(rule)}" for rule, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])))]


def _summary(report: Report, findings: list[Finding]) -> str:
    """The last line: files, kernels and findings by severity, then only the counts that are not zero."""
    counts = Counter(f.severity for f in findings)
    parsed = sum(1 for r in report.files if r.parsed)
    summary = (f"{len(report.files)} file(s), {parsed} parsed, "
               f"{sum(len(r.kernels) for r in report.files)} kernel(s): "
               f"{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s), "
               f"{counts[Severity.NOTE]} note(s)")
    return summary + "".join(_summary_extras(report, findings))


def _summary_extras(report: Report, findings: list[Finding]) -> Iterator[str]:
    """The summary's optional parts, in their order; a zero count says nothing, so it is left out."""
    undecided = sum(1 for f in findings if f.severity == Severity.NOTE and report.category(f) != PERFORMANCE)
    if undecided:
        yield f" ({undecided} about what could not be decided)"
    if report.errors:
        yield f", {len(report.errors)} tool error(s)"
    if report.suppressed:
        yield f", {len(report.suppressed)} suppressed"
    if getattr(report, "baselined", 0):
        yield f", {report.baselined} baselined"
    if getattr(report, "cached", 0):
        yield f" ({report.cached} file(s) unchanged, from the cache)"
