"""Where the pipeline-relevant nodes of one kernel are, without re-walking its tree."""
from __future__ import annotations

import bisect
from typing import Any

from ..cuda import ast as A
from .evaluate import mentions
from .intrinsics import call_kind


class KernelIndex:
    """Where the pipeline-relevant nodes of one function are, without re-walking it.

    The parser files calls, declarations, if/for statements and modular
    arithmetic as it builds them (`ParsedFile.registry`); a statement's
    intrinsic kinds are then the kinds of the calls inside its span, found by
    bisection.  Long index expressions are never traversed again.
    """

    def __init__(self, root: A.Node, registry: dict | None = None) -> None:
        # a tree rewritten before the model (inlined helpers keep their own lines, so spans no
        # longer nest as the tree does): its nodes are found, and kinds computed, by walking it
        self._walked = not registry
        if not registry:
            registry = _walk_registry(root)
        span = root.span

        def inside(nodes: list) -> list:
            return list(nodes) if self._walked else [n for n in nodes if _within(n.span, span)]

        calls = sorted(inside(registry["calls"]), key=lambda n: (n.span.line, n.span.column))
        self.root = root
        self.calls: list[A.Call] = calls
        self._call_starts = [(n.span.line, n.span.column) for n in calls]
        self._call_kinds = [(n.span.end_line, n.span.end_column, _kind_of(n)) for n in calls]
        self.call_names = frozenset(n.name for n in calls)
        self.ifs: list[A.If] = inside(registry["ifs"])
        self.fors: list[A.For] = inside(registry["fors"])
        self.declarations: list[A.Declaration] = inside(registry["declarations"])
        self.modular: list[A.Binary] = inside(registry["modular"])
        self._kinds: dict[int, frozenset[str]] = {}
        self._mentions: dict[tuple[int, str], bool] = {}
        # What the trace builder learns about nodes independently of the trip count
        # (compiled index expressions, reads and inertness of statements), shared by
        # every run-time trip-count scenario of the kernel.
        self.memo: dict[str, Any] = {}

    def of(self, node: A.Node) -> frozenset[str]:
        found = self._kinds.get(id(node))
        if found is None and self._walked:
            found = self._kinds[id(node)] = self._walked_kinds(node)
        if found is None:
            s = node.span
            i = bisect.bisect_left(self._call_starts, (s.line, s.column))
            kinds = set()
            while i < len(self._call_starts) and self._call_starts[i] < (s.end_line, s.end_column):
                end_line, end_col, kind = self._call_kinds[i]
                if kind and (end_line, end_col) <= (s.end_line, s.end_column):
                    kinds.add(kind)
                i += 1
            found = self._kinds[id(node)] = frozenset(kinds)
        return found

    def _walked_kinds(self, node: A.Node) -> frozenset[str]:
        """The kinds of the calls in `node`'s subtree, from its children's (memoised per node)."""
        kinds: set[str] = set()
        if isinstance(node, A.Call):
            kind = _kind_of(node)
            if kind:
                kinds.add(kind)
        for child in node.children():
            found = self._kinds.get(id(child))
            if found is None:
                found = self._kinds[id(child)] = self._walked_kinds(child)
            kinds |= found
        return frozenset(kinds)

    def mentions(self, node: A.Node, name: str) -> bool:
        key = (id(node), name)
        found = self._mentions.get(key)
        if found is None:
            found = self._mentions[key] = mentions(node, {name})
        return found


def _within(inner: A.Span, outer: A.Span) -> bool:
    return ((outer.line, outer.column) <= (inner.line, inner.column)
            and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column))


def _kind_of(call: A.Call) -> str | None:
    intr = call_kind(call)
    return intr.kind if intr else None


def _walk_registry(root: A.Node) -> dict:
    """The registry the parser would have filed, for trees built some other way."""
    reg: dict[str, list] = {"calls": [], "declarations": [], "ifs": [], "fors": [], "modular": []}
    for n in root.walk():
        if isinstance(n, A.Call):
            reg["calls"].append(n)
        elif isinstance(n, A.Declaration):
            reg["declarations"].append(n)
        elif isinstance(n, A.If):
            reg["ifs"].append(n)
        elif isinstance(n, A.For):
            reg["fors"].append(n)
        elif isinstance(n, A.Binary) and n.op in ("%", "/", "&", ">>") and isinstance(n.right, A.Number):
            reg["modular"].append(n)
    return reg
