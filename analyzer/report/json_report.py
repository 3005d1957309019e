"""Machine-readable report (stable: sorted keys, findings in position order)."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from .. import __version__
from ..findings import PERFORMANCE, Finding, Location, Report
from .present import Shown, shown


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
    if f.witness is not None:
        d["witness"] = f.witness.to_json()   # the schedule that shows the race (findings.Witness)
    return d


def shown_dict(s: Shown) -> dict[str, Any]:
    """A shown finding (`present.shown`): its fields, the variants it stands for and, when the
    message was rewritten in Python terms, the checks' message and help in CUDA terms."""
    d = finding_dict(s.finding)
    if s.variants:
        d["variants"] = list(s.variants)
    if s.cuda_message:
        d["cuda_message"] = s.cuda_message
    if s.cuda_help:
        d["cuda_help"] = s.cuda_help
    return d


def render(report: Report, **_: object) -> str:
    items = shown(report)
    doc = {
        "tool": {"name": "pipelint", "version": __version__},
        "files": [{"path": r.path, "parsed": r.parsed, "kernels": list(r.kernels),
                   **({"error": r.error} if r.error else {})} for r in report.files],
        "findings": [{**shown_dict(s), "category": report.category(s.finding)} for s in items],
        "errors": [{"message": e.message, "path": e.path, "plugin": e.plugin,
                    **({"detail": e.detail} if e.detail else {})} for e in report.errors],
        "summary": {**{sev: sum(1 for s in items if s.finding.severity.value == sev)
                       for sev in ("error", "warning", "note")},
                    "undecided": sum(1 for s in items if s.finding.severity.value == "note"
                                     and report.category(s.finding) != PERFORMANCE)},
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
