"""Inline-asm barriers, read as the calls they are.

Hand-written kernels spell the CTA barriers in PTX: `asm volatile("bar.sync 0;")` is
`__syncthreads()`, `asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n))` is named barrier `id`
for `n` threads (TileLang's `tl::__sync_thread_partial(id, n)`), `bar.arrive` its arrival without
a wait (`tl::__named_barrier_arrive`), and `barrier.sync` / `bar.sync.aligned` the same
instructions (PTX ISA, `bar`/`barrier`: `bar.sync` is `barrier.sync.aligned`).  Before the model
is built, each such statement becomes the call: one model of barriers, however they are written.
A template pipelint does not read (anything else, or operands it cannot name) is left as it is.
"""
from __future__ import annotations

import re

from ..cuda import ast as A

_BARRIER = re.compile(r"^\s*(bar|barrier)\.(sync|arrive)(?:\.aligned)?\s+([^;]*?)\s*;?\s*$")
_OPERAND = re.compile(r"^%(\d+)$")


def lower_asm_barriers(func: A.FunctionDef) -> A.FunctionDef:
    """`func` with its inline-asm CTA barriers replaced by the equivalent calls (the same object
    where it has none)."""
    if func.body is None or not any(isinstance(n, A.Asm) for n in func.body.walk()):
        return func

    def barrier(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Asm):
            call = _as_call(node)
            return A.ExprStmt(call, node.span) if call is not None else None
        return None

    body = A.transform(func.body, barrier)
    return func if body is func.body else A.FunctionDef(
        func.name, func.specifiers, func.return_type, func.params, body,     # type: ignore[arg-type]
        func.span, func.attributes, func.template)


def asm_text(asm: A.Asm) -> str:
    """The template as the instructions read: the string literal's `\\n` and `\\t` escapes
    (`"bar.sync 1, 256;\\n"`, as most kernels write it) are white space."""
    return asm.template.replace("\\n", " ").replace("\\t", " ").strip()


def asm_operands(asm: A.Asm) -> list[A.Expr]:
    """The operands' expressions in PTX's numbering (`%0`, `%1`, ...: outputs first)."""
    return [o.expr for section in asm.sections for o in section if o.expr is not None]


def _as_call(asm: A.Asm) -> A.Call | None:
    """The call an asm barrier is: `__syncthreads()` for barrier 0 of the whole block, else the
    named barrier's sync or arrival with its id and thread count."""
    found = _BARRIER.match(asm_text(asm))
    if found is None:
        return None
    _, op, rest = found.groups()
    args = _arguments(asm, rest)
    if not args or len(args) > 2:
        return None
    if op == "sync" and len(args) == 1 and isinstance(args[0], A.Number) and args[0].text == "0":
        return A.Call(A.Name("__syncthreads", asm.span), (), asm.span)
    if len(args) != 2:
        return None        # `bar.sync id` without a count: every thread of the block, of barrier `id`
    name = "__sync_thread_partial" if op == "sync" else "__named_barrier_arrive"
    return A.Call(A.Name(name, asm.span, ("tl",)), tuple(args), asm.span)


def _arguments(asm: A.Asm, rest: str) -> list[A.Expr] | None:
    """The instruction's operands as expressions: immediates, and `%n` read from the operand list
    (PTX numbers the operands in order, outputs first; clobbers have no expression.  The sections
    themselves are not counted: `::` reads as one token where the outputs are empty)."""
    operands = asm_operands(asm)
    args: list[A.Expr] = []
    for text in (part.strip() for part in rest.split(",") if part.strip()):
        operand = _OPERAND.match(text)
        if operand is not None and int(operand.group(1)) < len(operands):
            args.append(operands[int(operand.group(1))])
        elif text.isdigit():
            args.append(A.Number(text, asm.span))
        else:
            return None
    return args
