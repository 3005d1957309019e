"""GitLab code quality report (a JSON array; `artifacts: reports: codequality:` in .gitlab-ci.yml).

Shape from GitLab's documentation: `description`, `check_name`, `fingerprint`
(unique per issue: GitLab merges equal ones), `severity` (info, minor, major,
critical, blocker) and `location.path` (relative to the repository) with
`location.lines.begin`.  Fingerprints are pipelint's baseline fingerprints with
the path and position, so an issue keeps its identity while unrelated lines move.
"""
from __future__ import annotations

import hashlib
import json

from ..findings import Report, Severity
from .escape import visible
from .present import repo_relative, shown_findings

_SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.NOTE: "info"}


def _relative(path: str, root: object = None) -> str:
    return visible(repo_relative(path, root))


def render(report: Report, root: object = None, **_: object) -> str:
    from ..fingerprint import fingerprint

    issues = []
    seen: dict[str, int] = {}
    for f in shown_findings(report):
        base = fingerprint(f, with_path=True)
        n = seen[base] = seen.get(base, 0) + 1          # the same text twice in a file: still two issues
        issues.append({
            "description": visible(f"{f.message} ({f.rule})"),
            "check_name": visible(f.rule),
            "fingerprint": hashlib.sha256(f"{base}\0{n}".encode()).hexdigest()[:32],
            "severity": _SEVERITY[f.severity],
            "location": {"path": _relative(f.location.path, root), "lines": {"begin": f.location.line}},
        })
    for e in report.errors:
        issues.append({
            "description": visible(f"pipelint tool error: {e.message}"),
            "check_name": "pipelint-tool-error",
            "fingerprint": hashlib.sha256(f"tool\0{e.message}".encode()).hexdigest()[:32],
            "severity": "blocker" if e.internal else "minor",
            "location": {"path": _relative(e.path or ".", root), "lines": {"begin": 1}},
        })
    return json.dumps(issues, indent=2) + "\n"
