"""GitHub Actions workflow commands: one `::error file=...::message` annotation per finding."""
from __future__ import annotations

from ..findings import Report, Severity
from .escape import visible

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _data(text: str) -> str:
    """A workflow command's message: LF and `%` encoded (GitHub's escapes; the help line stays a
    line of its own), every other control character made visible (the runner logs it raw)."""
    return "%0A".join(visible(part).replace("%", "%25") for part in text.split("\n"))


def _prop(text: str) -> str:
    return visible(text).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")


def render(report: Report, **_: object) -> str:
    out = []
    for f in report.sorted_findings():
        loc = f.location
        props = [f"file={_prop(loc.path)}", f"line={loc.line}", f"col={loc.column}"]
        if loc.end_line:
            props.append(f"endLine={loc.end_line}")
        if loc.end_column and (loc.end_line or loc.line) == loc.line:
            props.append(f"endColumn={loc.end_column}")
        props.append(f"title={_prop('pipelint ' + f.rule)}")
        text = f.message + (f"\nhelp: {f.help}" if f.help else "")
        out.append(f"::{_LEVEL[f.severity]} {','.join(props)}::{_data(text)}")
    for e in report.errors:
        out.append(f"::error title=pipelint tool error::{_data(e.message)}")
    return "\n".join(out) + ("\n" if out else "")
