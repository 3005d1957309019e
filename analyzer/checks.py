"""Helpers for check plugins: findings at AST nodes, with `#line` origins.

A check says *what* is wrong at *which node*; this module turns that into a
`Finding` with the .cu span, the related locations the check names, and the
TileLang Python line the node came from (a related location too, so SARIF
viewers and the text reporter show both).
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from .cuda import ast as A
from .findings import Finding, Location, Rule, Severity


def location(path: str, node: A.Node, message: str = "") -> Location:
    s = node.span
    return Location(path, s.line, s.column, s.end_line, s.end_column, message)


def origin_location(model, node: A.Node, message: str = "") -> Optional[Location]:
    origin = model.origin(node) if model is not None else None
    if origin is None or not origin.file:
        return None
    return Location(origin.file, origin.line, 1, None, None, message or "TileLang source of this line")


def make_finding(rule: Rule, path: str, model, node: A.Node, message: str,
                 related: Iterable[tuple[A.Node, str]] = (),
                 severity: Optional[Severity] = None) -> Finding:
    rel: list[Location] = [location(path, n, msg) for n, msg in related]
    src = origin_location(model, node)
    if src is not None:
        rel.append(src)
    return Finding(rule.id, severity or rule.severity, message, location(path, node), tuple(rel[:9]),
                   kernel=getattr(model, "name", None))


def rules_by_id(rules: Sequence[Rule]) -> dict[str, Rule]:
    return {r.id: r for r in rules}
