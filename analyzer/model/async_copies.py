"""Hand-written cp.async, read as the TileLang calls it is.

TileLang emits `tl::cp_async_gs<16>(dst, src)`, `tl::cp_async_commit()` and
`tl::cp_async_wait<N>()`.  Hand-written kernels write the same instructions as PTX or with the
CUDA pipeline primitives:

    unsigned s = __cvta_generic_to_shared(&buf[i]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(s), "l"(src));
    asm volatile("cp.async.commit_group;\\n" ::);
    asm volatile("cp.async.wait_group 1;\\n" ::);

    __pipeline_memcpy_async(&tile[i], &in[i], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);

PTX ISA: `cp.async` copies `cp-size` bytes (4, 8 or 16) to the shared address; `commit_group`
closes the thread's group; `wait_group N` waits until at most N of its groups are pending, and
`wait_all` is `wait_group 0`.  The primitives are defined as these instructions
(`cuda_pipeline_primitives.h`).  Before the model is built, each becomes the TileLang call, so the
cp.async groups, wait depths and races are decided by one model however they are written.  An
instruction whose shared address the text does not name (an address register computed in a way
not read here, a size that is not a constant) is left as it is.
"""
from __future__ import annotations

import re

from ..cuda import ast as A
from .aliases import note_write
from .asm_barriers import asm_operands, asm_text
from .evaluate import evaluate
from .intrinsics import type_bytes

_COPY = re.compile(r"^\s*cp\.async\.c[ag]\.shared(?:::cta)?\.global(?:\.L2::\w+)*\s+"
                   r"\[\s*(%\d+)\s*\]\s*,\s*\[\s*(%\d+)\s*\]\s*,\s*(%\d+|\d+)\s*(?:,\s*%\d+\s*)?;?\s*$")
_COMMIT = re.compile(r"^\s*cp\.async\.commit_group\s*;?\s*$")
_WAIT = re.compile(r"^\s*cp\.async\.wait_group\s+(%\d+|\d+)\s*;?\s*$")
_WAIT_ALL = re.compile(r"^\s*cp\.async\.wait_all\s*;?\s*$")
_TO_SHARED = frozenset({"__cvta_generic_to_shared", "cvta_to_shared", "__cvta_generic_to_shared_u32"})


def lower_async_copies(func: A.FunctionDef) -> A.FunctionDef:
    """`func` with its PTX cp.async statements and pipeline primitives replaced by the TileLang
    calls (the same object where it has none)."""
    if func.body is None or not any(_candidate(n) for n in func.body.walk()):
        return func
    addresses = _shared_addresses(func.body)

    def lowered(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Asm):
            call = _from_asm(node, addresses)
            return A.ExprStmt(call, node.span) if call is not None else None
        if isinstance(node, A.Call):
            return _from_primitive(node)
        return None

    body = A.transform(func.body, lowered)
    return func if body is func.body else A.FunctionDef(
        func.name, func.specifiers, func.return_type, func.params, body,     # type: ignore[arg-type]
        func.span, func.attributes, func.template)


def _candidate(node: A.Node) -> bool:
    return (isinstance(node, A.Asm) and "cp.async" in node.template) or (
        isinstance(node, A.Call) and node.name.startswith("__pipeline_"))


def _shared_addresses(body: A.Compound) -> dict[str, A.Expr]:
    """Locals that hold a shared address, never changed: `unsigned s = __cvta_generic_to_shared(p);`
    -> `p`."""
    found: dict[str, A.Expr] = {}
    counts: dict[str, int] = {}
    written: set[str] = set()
    for node in body.walk():
        if isinstance(node, A.Declaration):
            for d in node.declarators:
                counts[d.name] = counts.get(d.name, 0) + 1
                pointer = _converted(d.init) if d.init is not None else None
                if pointer is not None:
                    found[d.name] = pointer
        elif isinstance(node, A.AsmOperand):
            if "=" in node.constraint or "+" in node.constraint:       # an output; `"r"(s)` only reads
                written.update(n.ident for n in node.walk() if isinstance(n, A.Name))
        else:
            note_write(node, written)
    return {n: p for n, p in found.items() if counts.get(n) == 1 and n not in written}


def _converted(expr: A.Expr) -> A.Expr | None:
    """`p` of `__cvta_generic_to_shared(p)` (through casts), else None."""
    while isinstance(expr, A.Cast):
        expr = expr.operand
    if isinstance(expr, A.Call) and expr.name.rsplit("::", 1)[-1] in _TO_SHARED and len(expr.args) == 1:
        return expr.args[0]
    return None


def _from_asm(asm: A.Asm, addresses: dict[str, A.Expr]) -> A.Call | None:
    text, operands = asm_text(asm), asm_operands(asm)
    span = asm.span
    if _COMMIT.match(text):
        return _tl("cp_async_commit", (), (), span)
    if _WAIT_ALL.match(text):
        return _tl("cp_async_wait", ("0",), (), span)
    wait = _WAIT.match(text)
    if wait:
        depth = _value(wait.group(1), operands)
        return _tl("cp_async_wait", (str(depth),), (), span) if depth is not None else None
    copy = _COPY.match(text)
    if copy is None:
        return None
    dst, src = _operand(copy.group(1), operands), _operand(copy.group(2), operands)
    size = _value(copy.group(3), operands)
    pointer = _shared_pointer(dst, addresses) if dst is not None else None
    if pointer is None or src is None or size not in (4, 8, 16):
        return None
    return _tl("cp_async_gs", (str(size),), (pointer, src), span)


def _shared_pointer(dst: A.Expr, addresses: dict[str, A.Expr]) -> A.Expr | None:
    """The pointer a `cp.async`'s shared address operand converts: `__cvta_generic_to_shared(p)`
    itself, or a local that holds it."""
    pointer = _converted(dst)
    if pointer is not None:
        return pointer
    while isinstance(dst, A.Cast):
        dst = dst.operand
    return addresses.get(dst.ident) if isinstance(dst, A.Name) else None


def _operand(text: str, operands: list[A.Expr]) -> A.Expr | None:
    index = int(text[1:])
    return operands[index] if index < len(operands) else None


def _value(text: str, operands: list[A.Expr]) -> int | None:
    if text.isdigit():
        return int(text)
    operand = _operand(text, operands)
    value = evaluate(operand, {}) if operand is not None else None
    return value if isinstance(value, int) else None


def _from_primitive(call: A.Call) -> A.Call | None:
    """`__pipeline_memcpy_async(dst, src, size)`, `__pipeline_commit()`, `__pipeline_wait_prior(N)`."""
    name, span = call.name, call.span
    if name == "__pipeline_commit" and not call.args:
        return _tl("cp_async_commit", (), (), span)
    if name == "__pipeline_wait_prior" and len(call.args) == 1:
        depth = evaluate(call.args[0], {})
        return _tl("cp_async_wait", (str(depth),), (), span) if isinstance(depth, int) else None
    if name == "__pipeline_memcpy_async" and len(call.args) >= 3:
        size = _size(call.args[2])
        if size in (4, 8, 16):
            return _tl("cp_async_gs", (str(size),), (call.args[0], call.args[1]), span)
    return None


def _size(expr: A.Expr) -> int | None:
    if isinstance(expr, A.SizeOf):
        found = type_bytes(expr.type) if isinstance(getattr(expr, "type", None), str) else None
        return found
    value = evaluate(expr, {})
    return value if isinstance(value, int) else None


def _tl(name: str, template: tuple[str, ...], args: tuple[A.Expr, ...], span: A.Span) -> A.Call:
    return A.Call(A.Name(name, span, ("tl",), template or None), args, span)
