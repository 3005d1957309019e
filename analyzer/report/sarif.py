"""SARIF 2.1.0 for GitHub code scanning (and any other SARIF consumer).

What GitHub reads is filled in: every enabled rule with help text, markdown and
a help URI; results with rule index, level, a URI relative to `%SRCROOT%` = the
repository root (`--project-root`, else the git top level; never `..`; files outside
it get an absolute URI and no base),
a full region, related locations with messages and a
`primaryLocationLineHash` computed here (so alerts keep their identity when
lines above move, also for kernels dumped outside the checkout).  Tool errors
go to `toolExecutionNotifications` and `executionSuccessful` says whether
there were any.  GitHub's upload limits are respected by dropping the least
severe results first, with a notification saying so.
"""
from __future__ import annotations

import contextlib
import gzip
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..docs import help_uri
from ..findings import Finding, Location, Report, Rule, Severity
from ..fingerprint import line_hash
from .present import Shown, shown

INFORMATION_URI = "https://github.com/pipelint/pipelint"
MAX_RESULTS = 25_000
MAX_RULES = 25_000
MAX_RELATED = 10
MAX_TAGS = 20
MAX_GZIP_BYTES = 10 * 1024 * 1024
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def _artifact(path: str, root: Path) -> dict[str, str]:
    """A file's `artifactLocation`: relative to %SRCROOT% (the repository root) when the file is
    inside it, so the URI never starts with `..`; an absolute `file:` URI with no base when it
    is outside (a kernel dumped to /tmp, a TileLang template), which code scanning then lists
    without placing it in the tree rather than placing it wrongly."""
    p = Path(path)
    absolute = Path(os.path.abspath(p))
    with contextlib.suppress(OSError, RuntimeError):
        absolute = absolute.resolve()
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(rel.as_posix(), safe="/._-~"), "uriBaseId": "%SRCROOT%"}


def _region(loc: Location) -> dict[str, int]:
    region = {"startLine": max(1, loc.line), "startColumn": max(1, loc.column)}
    if loc.end_line:
        region["endLine"] = loc.end_line
    if loc.end_column:
        region["endColumn"] = max(loc.end_column, region["startColumn"] + 1) \
            if (loc.end_line or loc.line) == loc.line else loc.end_column
    return region


def _physical(loc: Location, root: Path) -> dict[str, Any]:
    if loc.outside:     # a `#line` file outside the project (never opened): absolute, not under %SRCROOT%
        return {"artifactLocation": {"uri": Path(os.path.abspath(loc.path)).as_uri()}, "region": _region(loc)}
    return {"artifactLocation": _artifact(loc.path, root), "region": _region(loc)}


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.short},
        "fullDescription": {"text": rule.full},
        "help": {"text": f"{rule.full}\n\nHow to fix: {rule.help}",
                 "markdown": f"**{rule.short}**\n\n{rule.full}\n\n**How to fix.** {rule.help}\n\n"
                             f"[Documentation]({help_uri(rule)})"},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": list(rule.tags)[:MAX_TAGS], "precision": rule.precision,
                       "problem.severity": "recommendation" if rule.severity == Severity.NOTE
                       else LEVEL[rule.severity]},
    }


def _result(f: Finding, index: int, root: Path, suppressed: bool, view: Shown | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": f.message},
        "locations": [{"physicalLocation": _physical(f.location, root)}],
    }
    related = [{"id": i, "physicalLocation": _physical(r, root), "message": {"text": r.message or "related"}}
               for i, r in enumerate(f.related[:MAX_RELATED])]
    if related:
        result["relatedLocations"] = related
        result["message"]["text"] = _linked_message(f)
    flows = _code_flows(f, root)
    if flows:
        result["codeFlows"] = flows
    lh = None if f.location.outside else line_hash(f.location.path, f.location.line)
    if lh:
        result["partialFingerprints"] = {"primaryLocationLineHash": lh}
    props = _properties(f, view)
    if props:
        result["properties"] = props
    if suppressed:
        result["suppressions"] = [{"kind": "inSource", "justification": "pipelint: ignore comment"}]
    return result


def _linked_message(f: Finding) -> str:
    """Code scanning shows related locations only when the message links them: `(see [the wait](0))`."""
    links = [f"[{r.message}]({i})" for i, r in enumerate(f.related[:MAX_RELATED]) if r.message]
    return f"{f.message} (see {', '.join(links)})" if links else f.message


def _code_flows(f: Finding, root: Path) -> list[dict[str, Any]]:
    """The chain that makes the hazard (copy -> wait -> read, arrive -> wait), in program text
    order, when at least two related steps lie in the finding's own file."""
    steps = [r for r in f.related[:MAX_RELATED] if r.path == f.location.path]
    if len(steps) < 2:
        return []
    chain = sorted([*steps, f.location], key=lambda loc: (loc.line, loc.column))
    return [{"threadFlows": [{"locations": [
        {"location": {"physicalLocation": _physical(loc, root),
                      "message": {"text": loc.message or f.message}}} for loc in chain]}]}]


def _properties(f: Finding, view: Shown | None) -> dict[str, Any]:
    """The result's property bag: kernel, plugin, help, the shown variants and CUDA-terms text,
    and the race's `witness` (`findings.Witness.to_json`) where the model names one."""
    props: dict[str, Any] = {k: v for k, v in (("kernel", f.kernel), ("plugin", f.plugin), ("help", f.help)) if v}
    if view is not None:
        props.update({k: v for k, v in (("variants", list(view.variants)), ("cudaMessage", view.cuda_message),
                                        ("cudaHelp", view.cuda_help)) if v})
    if f.witness is not None:
        props["witness"] = f.witness.to_json()
    return props


def _notification(message: str, level: str = "error", path: str | None = None,
                  root: Path | None = None) -> dict[str, Any]:
    note: dict[str, Any] = {"level": level, "message": {"text": message}}
    if path and root is not None:
        note["locations"] = [{"physicalLocation": {"artifactLocation": _artifact(path, root)}}]
    return note


def _notifications(report: Report, base: Path) -> list[dict[str, Any]]:
    """Files not analysed and tool errors (internal ones as errors, the rest as warnings)."""
    out = [_notification(f"{fr.path}: not analysed: {fr.error}", "error", fr.path, base)
           for fr in report.files if not fr.parsed and fr.error]
    out += [_notification(e.message, "error" if e.internal else "warning", e.path, base) for e in report.errors]
    return out


def _ranked(report: Report, notifications: list[dict[str, Any]]) -> list[tuple[Finding, bool, Shown | None]]:
    """Shown findings most severe first, then the suppressed ones, cut to GitHub's result limit
    (with a notification saying how many were dropped)."""
    ranked: list[tuple[Finding, bool, Shown | None]] = sorted(
        ((s.finding, False, s) for s in shown(report)), key=lambda x: (-x[0].severity.rank, x[0].sort_key))
    ranked += [(f, True, None) for f in report.suppressed]
    if len(ranked) > MAX_RESULTS:
        notifications.append(_notification(
            f"{len(ranked) - MAX_RESULTS} of {len(ranked)} results dropped (least severe first) to stay within "
            f"GitHub's limit of {MAX_RESULTS} results per run", "warning"))
        ranked = ranked[:MAX_RESULTS]
    return ranked


def _extensions(host: Any) -> list[dict[str, str]]:
    if host is None:
        return []
    return [{"name": name, "version": host.versions.get(name) or __version__} for name in host.plugin_names()]


def _within_upload_limit(doc: dict[str, Any], run: dict[str, Any]) -> str:
    """The document as text, dropping a tenth of the results at a time (a notification each
    time) until it gzips under GitHub's 10 MB."""
    text = json.dumps(doc, indent=2, sort_keys=True)
    while len(gzip.compress(text.encode())) > MAX_GZIP_BYTES and run["results"]:
        drop = max(1, len(run["results"]) // 10)
        run["results"] = run["results"][:-drop]
        run["invocations"][0]["toolExecutionNotifications"].append(_notification(
            f"{drop} results dropped to keep the file under GitHub's 10 MB (gzipped) upload limit", "warning"))
        text = json.dumps(doc, indent=2, sort_keys=True)
    return text


def render(report: Report, host: Any = None, category: str | None = None, root: str | None = None,
           **_: object) -> str:
    base = Path(root or os.getcwd()).resolve()
    rules = sorted(report.rules.values(), key=lambda r: r.id)[:MAX_RULES]
    index = {r.id: i for i, r in enumerate(rules)}
    notifications = _notifications(report, base)
    ranked = _ranked(report, notifications)
    results = [_result(f, index.get(f.rule, 0), base, sup, s) for f, sup, s in ranked if f.rule in index]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "pipelint", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI,
                            "rules": [rule_descriptor(r) for r in rules]},
                 "extensions": _extensions(host)},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
        "results": results,
        "invocations": [{"executionSuccessful": not any(e.internal for e in report.errors),
                         "toolExecutionNotifications": notifications}],
        "columnKind": "unicodeCodePoints",
    }
    if category:
        run["automationDetails"] = {"id": category if category.endswith("/") else category + "/"}
    doc = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return _within_upload_limit(doc, run) + "\n"
