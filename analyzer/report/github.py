"""GitHub Actions workflow commands: one `::error file=...::message` annotation per finding."""
from __future__ import annotations

from ..findings import Report, Severity
from .escape import visible
from .present import repo_relative, shown_findings

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _data(text: str) -> str:
    """A workflow command's message: LF and `%` encoded (GitHub's escapes; the help line stays a
    line of its own), every other control character made visible (the runner logs it raw)."""
    return "%0A".join(visible(part).replace("%", "%25") for part in text.split("\n"))


def _prop(text: str) -> str:
    return visible(text).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")


def render(report: Report, root: object = None, **_: object) -> str:
    """Paths are relative to the repository root (`root`), as GitHub matches them."""
    out = []
    for f in shown_findings(report):
        loc = f.location
        props = [f"file={_prop(repo_relative(loc.path, root))}", f"line={loc.line}", f"col={loc.column}"]
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
