"""Cooperative groups' synchronisation, read as the barriers it is.

`cooperative_groups` spells the CTA barrier `block.sync()` (or `cg::sync(block)`,
`this_thread_block().sync()`) and a warp's `__syncwarp()` `tile.sync()` for a
`thread_block_tile<32>`; its ranks are the thread index in other words (`block.thread_rank()`,
`tile.thread_rank()`, `tile.meta_group_rank()`).  The CUDA programming guide defines them so:
`thread_block::sync()` is `__syncthreads()`, a 32-thread tile's `sync()` is `__syncwarp()`, and in
a one-dimensional block `thread_rank()` is `threadIdx.x`.  Before the model is built each becomes
the call or expression it is, as `model.asm_barriers` does for PTX: one model of barriers, however
they are written.  A grid's `sync()` (`this_grid()`) is left as it is: TileLang's persistent
kernels call it from their consumer threads only, after the producers have finished, and what
the CTA barrier inside it expects of exited threads is not modelled.  A tile of fewer than 32
threads, a coalesced group and anything whose group the text does not say are left as they are
(an unknown call).
"""
from __future__ import annotations

import re

from ..cuda import ast as A

_BLOCK_TYPE = re.compile(r"(?:^|::)thread_block$")
_TILE_TYPE = re.compile(r"(?:^|::)thread_block_tile\s*<\s*32\s*>$")
_BLOCK_CALLS = frozenset({"this_thread_block"})


def lower_cooperative_groups(func: A.FunctionDef) -> A.FunctionDef:
    """`func` with its cooperative-groups syncs and ranks replaced (the same object where none)."""
    if func.body is None or not any(isinstance(n, A.Call) and n.name in ("sync", "cg::sync",
                                                                        "cooperative_groups::sync",
                                                                        "thread_rank", "meta_group_rank")
                                    for n in func.body.walk()):
        return func
    groups = _groups(func)
    body = A.transform(func.body, lambda node: _lowered(node, groups))
    return func if body is func.body else A.FunctionDef(
        func.name, func.specifiers, func.return_type, func.params, body,     # type: ignore[arg-type]
        func.span, func.attributes, func.template)


def _groups(func: A.FunctionDef) -> dict[str, str]:
    """The kernel's group variables: name -> "block" or "warp" (declared once, by type or by the
    call that makes them)."""
    assert func.body is not None
    found: dict[str, str] = {}
    seen: set[str] = set()
    for node in func.body.walk():
        if not isinstance(node, A.Declaration):
            continue
        for d in node.declarators:
            kind = _kind(node.type, d.init)
            if d.name in seen or kind is None:
                found.pop(d.name, None)
            else:
                found[d.name] = kind
            seen.add(d.name)
    return found


def _kind(type_text: str, init: A.Expr | None) -> str | None:
    text = " ".join(type_text.replace("const", " ").split())
    if _BLOCK_TYPE.search(text):
        return "block"
    if _TILE_TYPE.search(text):
        return "warp"
    if text in ("auto",) and isinstance(init, A.Call):
        if _plain(init.name) in _BLOCK_CALLS:
            return "block"
        if _plain(init.name) == "tiled_partition" and init.template_args == ("32",):
            return "warp"
    return None


def _plain(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def _group_of(expr: A.Expr, groups: dict[str, str]) -> str | None:
    """The kind of group an expression names: a group variable, or `this_thread_block()`."""
    if isinstance(expr, A.Name) and not expr.scope:
        return groups.get(expr.ident)
    if isinstance(expr, A.Call) and not expr.args and _plain(expr.name) in _BLOCK_CALLS:
        return "block"
    return None


def _method(member: str, kind: str, span: A.Span) -> A.Node | None:
    """`group.sync()`, `group.thread_rank()`, `tile.meta_group_rank()` of a block or a 32-thread tile."""
    thread = A.Member(A.Name("threadIdx", span), "x", False, span)
    if member == "sync":
        return A.Call(A.Name("__syncthreads" if kind == "block" else "__syncwarp", span), (), span)
    if member == "thread_rank":
        return thread if kind == "block" else A.Binary("%", thread, A.Number("32", span), span)
    if member == "meta_group_rank" and kind == "warp":
        return A.Binary("/", thread, A.Number("32", span), span)
    return None


def _lowered(node: A.Node, groups: dict[str, str]) -> A.Node | None:
    if not isinstance(node, A.Call):
        return None
    callee = node.callee
    span = node.span
    if isinstance(callee, A.Member) and not node.args:
        kind = _group_of(callee.base, groups)
        return _method(callee.member, kind, span) if kind is not None else None
    if _plain(node.name) == "sync" and len(node.args) == 1 and isinstance(callee, A.Name) \
            and callee.scope in ((), ("cg",), ("cooperative_groups",)):
        kind = _group_of(node.args[0], groups)
        if kind is not None:
            return A.Call(A.Name("__syncthreads" if kind == "block" else "__syncwarp", span), (), span)
    return None
