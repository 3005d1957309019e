"""Machine-readable report (stable: sorted keys, findings in position order)."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from .. import __version__
from ..findings import Finding, Location, Report


def _loc(loc: Location) -> dict[str, Any]:
    return {k: v for k, v in asdict(loc).items() if v is not None and v != "" and v is not False}


def finding_dict(f: Finding) -> dict[str, Any]:
    d: dict[str, Any] = {
        "rule": f.rule,
        "severity": f.severity.value,
        "message": f.message,
        "path": f.location.path,
        "line": f.location.line,
        "column": f.location.column,
        "end_line": f.location.end_line,
        "end_column": f.location.end_column,
        "related": [_loc(r) for r in f.related],
    }
    if f.location.outside:
        d["outside"] = True     # a `#line` file outside the project, never opened
    if f.kernel:
        d["kernel"] = f.kernel
    if f.plugin:
        d["plugin"] = f.plugin
    if f.help:
        d["help"] = f.help
    return d


def render(report: Report, **_: object) -> str:
    doc = {
        "tool": {"name": "pipelint", "version": __version__},
        "files": [{"path": r.path, "parsed": r.parsed, "kernels": list(r.kernels),
                   **({"error": r.error} if r.error else {})} for r in report.files],
        "findings": [{**finding_dict(f), "category": report.category(f)} for f in report.sorted_findings()],
        "errors": [{"message": e.message, "path": e.path, "plugin": e.plugin,
                    **({"detail": e.detail} if e.detail else {})} for e in report.errors],
        "summary": {**{sev: sum(1 for f in report.findings if f.severity.value == sev)
                       for sev in ("error", "warning", "note")},
                    "undecided": len(report.undecided())},
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
