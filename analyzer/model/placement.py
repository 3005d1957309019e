"""Where a fix goes: the statement before which a missing barrier, commit or arrive belongs.

A finding is most useful at the place to change.  A RAW race is detected at the
read, but the barrier belongs right after the wait that completes the copy; a
WAR race is detected at the copy that overwrites, and the barrier belongs before
the statement (of the loop body) holding that copy; a missing release is detected
as a hang at the producer's wait, but the consumer's arrive belongs right after
its last read of the slot.  These helpers find those statements from the AST
alone, by span containment, so they work on any kernel the parser reads.
"""
from __future__ import annotations

from ..cuda import ast as A

Step = tuple[A.Compound, int]


def contains(outer: A.Span, inner: A.Span) -> bool:
    """Whether span `inner` lies within span `outer`."""
    return ((outer.line, outer.column) <= (inner.line, inner.column)
            and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column))


def _blocks_of(stmt: A.Node) -> list[A.Node]:
    """The statement bodies directly inside a statement (a loop's body, an if's branches)."""
    if isinstance(stmt, A.Compound):
        return [stmt]
    if isinstance(stmt, (A.For, A.While)):
        return [stmt.body]
    if isinstance(stmt, A.If):
        return [b for b in (stmt.then, stmt.other) if b is not None]
    return []


def statement_path(func: A.FunctionDef, node: A.Node) -> list[Step]:
    """(block, index of the statement holding `node`) from the function body inwards."""
    path: list[Step] = []
    if func.body is None:
        return path
    block: A.Node | None = func.body
    target = node.span
    while isinstance(block, A.Compound):
        index = next((i for i, s in enumerate(block.body) if contains(s.span, target)), None)
        if index is None:
            break
        path.append((block, index))
        stmt = block.body[index]
        if stmt is node:
            break
        inner = next((b for b in _blocks_of(stmt) if contains(b.span, target)), None)
        if inner is None or inner is block:
            break
        block = inner
    return path


def statement_of(func: A.FunctionDef, node: A.Node) -> A.Node:
    """The innermost statement holding `node` (the node itself when it is one)."""
    path = statement_path(func, node)
    return path[-1][0].body[path[-1][1]] if path else node


def statement_after(func: A.FunctionDef, node: A.Node) -> A.Node | None:
    """The statement that follows the one holding `node` in its block (where something goes
    *after* it), climbing out of blocks that end there; None at the end of the function."""
    path = statement_path(func, node)
    for block, index in reversed(path):
        if index + 1 < len(block.body):
            return block.body[index + 1]
    return None


def statement_before(func: A.FunctionDef, first: A.Node, second: A.Node) -> A.Node:
    """The statement before which a barrier orders `first` ahead of `second`: in the innermost
    block holding both, the statement that holds `second`; across a loop's back edge (`second`
    comes first in the text: the next iteration's copy over this iteration's read), the first
    statement of the loop body, where one barrier orders every such pair."""
    a, b = statement_path(func, first), statement_path(func, second)
    for depth, step in enumerate(b):
        if depth >= len(a) or a[depth][0] is not step[0] or a[depth][1] != step[1]:
            block, index = step
            if depth < len(a) and a[depth][0] is block and a[depth][1] > index:
                return block.body[0]
            return block.body[index]
    return b[-1][0].body[b[-1][1]] if b else second


def point(stmt: A.Node) -> A.Span:
    """The first line of a statement, for a finding that says "insert before this"."""
    s = stmt.span
    return s if s.line == s.end_line else A.Span(s.line, s.column, s.line, s.column + 1)


def after_in_loop(func: A.FunctionDef, node: A.Node, loop: A.For | None) -> A.Node | None:
    """The statement after the one holding `node`, out of the inner *loops* around it but not
    out of `loop` (blocks and branches are not climbed out of unless they end there): where
    something that must follow every use of `node` in one iteration of `loop` goes (None at the
    end of the body).  Without a loop, `statement_after`."""
    path = statement_path(func, node)
    start = next((j for j, (b, _) in enumerate(path) if loop is not None and b is loop.body), None)
    if start is None:
        return statement_after(func, node)
    chosen = path[start]
    for step in path[start:]:
        chosen = step
        if isinstance(step[0].body[step[1]], (A.For, A.While)):
            break                    # the use repeats inside an inner loop: after the whole loop
    block, index = chosen
    after = statement_after(func, block.body[index])
    if after is None or loop is None or not contains(loop.body.span, after.span):
        return None
    return after
