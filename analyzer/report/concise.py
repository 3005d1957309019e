"""One line per finding, `path:line:col: severity[rule] message` (ruff's and flake8's shape):
for editors' problem matchers, grep and quick terminal use."""
from __future__ import annotations

from ..findings import Report
from .escape import visible
from .present import shown_findings


def render(report: Report, **_: object) -> str:
    out = [visible(f"{f.location.path}:{f.location.line}:{f.location.column}: {f.severity.value}[{f.rule}] "
                   f"{f.message}") for f in shown_findings(report)]
    out += [visible(f"{e.path or 'pipelint'}: tool error: {e.message}") for e in report.errors]
    return "\n".join(out) + ("\n" if out else "")
