"""reviewdog's Diagnostic Format (rdjson): `pipelint check ... --format rdjson | reviewdog -f=rdjson`.

One document with every finding as a diagnostic: 1-based line and column (reviewdog's
convention too, UTF-8 columns approximated by code points), severity ERROR/WARNING/INFO,
the rule id with its documentation as `code`, related locations with their messages.
"""
from __future__ import annotations

import json
from typing import Any

from ..docs import help_uri
from ..findings import Finding, Location, Report, Severity
from .present import repo_relative, shown_findings

SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.NOTE: "INFO"}


def _location(loc: Location, root: object = None) -> dict[str, Any]:
    start = {"line": max(1, loc.line), "column": max(1, loc.column)}
    where: dict[str, Any] = {"path": repo_relative(loc.path, root), "range": {"start": start}}
    if loc.end_line or loc.end_column:
        where["range"]["end"] = {"line": loc.end_line or loc.line, "column": loc.end_column or loc.column}
    return where


def diagnostic(f: Finding, report: Report, root: object = None) -> dict[str, Any]:
    rule = report.rules.get(f.rule)
    message = f.message + (f" (help: {f.help})" if f.help else "")
    d: dict[str, Any] = {"message": message, "location": _location(f.location, root), "severity": SEVERITY[f.severity],
                         "code": {"value": f.rule, **({"url": help_uri(rule)} if rule is not None else {})}}
    if f.related:
        d["related_locations"] = [{"message": r.message or "related", "location": _location(r, root)}
                                  for r in f.related]
    return d


def render(report: Report, root: object = None, **_: object) -> str:
    doc = {"source": {"name": "pipelint", "url": "https://github.com/pipelint/pipelint"},
           "diagnostics": [diagnostic(f, report, root) for f in shown_findings(report)]}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
