"""Locals that only name a value of the launch, propagated into their uses.

Hand-written kernels copy the thread index into a local first: `int tid = threadIdx.x;`, then
`s[tid] += v`, `if (tid == 0) ...`, `const int BM = 64;`.  Such a local is written once, by its
declaration, from values every statement of the kernel can read the same way (the thread and
block indices, the block and grid sizes, the kernel's arguments, numbers, other such locals).
Its every use *is* that expression: a C++ front end folds it in the same way (copy propagation).
So before the model is built, each use is replaced by the initialiser, cast to the local's type:
the thread masks, footprints and loop bounds then read the thread index itself, as they do in
TileLang's output (`((int)threadIdx.x)` everywhere).

A local is propagated only when nothing can change it after its declaration: declared by one
declarator in the whole kernel (no shadowing), no pointer or array, never assigned, incremented,
addressed (`&tid`) or bound to an asm output, and its initialiser reads no memory and calls
nothing but `min`/`max`.  Anything else keeps the model's ordinary treatment of locals.
"""
from __future__ import annotations

from ..cuda import ast as A

_LAUNCH_BASES = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
_PURE_CALLS = frozenset({"min", "max"})
_UNARY = frozenset({"-", "+", "~", "!"})
_EXPRESSIONS = (A.Name, A.Number, A.Member, A.Cast, A.Unary, A.Binary, A.Ternary, A.Call)


def propagate_aliases(func: A.FunctionDef) -> A.FunctionDef:
    """`func` with the uses of its launch-valued locals replaced by their values (the same object
    where it has none)."""
    if func.body is None:
        return func
    declared, decls, written = _scan(func.body)
    params = {p.name for p in func.params if p.name}
    uniform = params - written
    values: dict[str, A.Expr] = {}
    for decl, d in decls:
        if declared[d.name] == 1 and d.name not in written and d.name not in params \
                and _plain_local(decl, d) and _pure(d.init, uniform, values):
            assert d.init is not None
            values[d.name] = A.Cast(decl.type, _substitute(_unshuffled(d.init), values), "c", d.init.span)
    if not values:
        return func
    body = _substitute_after(func.body, values, {name: _declared_at(decls, name) for name in values})
    return func if body is func.body else A.FunctionDef(
        func.name, func.specifiers, func.return_type, func.params, body, func.span, func.attributes, func.template)


def _scan(body: A.Compound) -> tuple[dict[str, int], list[tuple[A.Declaration, A.Declarator]], set[str]]:
    """How many declarators name each local, the declarators in order, and the names written."""
    declared: dict[str, int] = {}
    decls: list[tuple[A.Declaration, A.Declarator]] = []
    written: set[str] = set()
    for node in body.walk():
        if isinstance(node, A.Declaration):
            for d in node.declarators:
                declared[d.name] = declared.get(d.name, 0) + 1
                decls.append((node, d))
        else:
            note_write(node, written)
    return declared, decls, written


def _plain_local(decl: A.Declaration, d: A.Declarator) -> bool:
    """A scalar register with an initialiser (no pointer, array, shared, extern or static)."""
    return not (d.pointer or d.dims or decl.has("__shared__") or decl.has("extern") or decl.has("static")) \
        and isinstance(d.init, _EXPRESSIONS)


def note_write(node: A.Node, written: set[str]) -> None:
    """Names `node` may change: an assignment's target, `++`/`--`, `&name`, an asm operand."""
    target: A.Node | None = None
    if isinstance(node, A.Assign):
        target = node.target
    elif isinstance(node, A.Unary) and node.op in ("++", "--", "&"):
        target = node.operand
    elif isinstance(node, A.AsmOperand):
        written.update(n.ident for n in node.walk() if isinstance(n, A.Name))
        return
    if isinstance(target, A.Name) and not target.scope:
        written.add(target.ident)


def _pure(expr: A.Node | None, uniform: set[str], values: dict[str, A.Expr]) -> bool:
    """Whether `expr` reads only the launch values, unwritten arguments, numbers and propagated
    locals (no memory, no call but min/max)."""
    if isinstance(expr, A.Number):
        return True
    if isinstance(expr, A.Name):
        return not expr.scope and (expr.ident in uniform or expr.ident in values)
    if isinstance(expr, A.Member):
        return isinstance(expr.base, A.Name) and expr.base.ident in _LAUNCH_BASES and expr.member in "xyz"
    parts = _operands(expr)
    return parts is not None and all(_pure(p, uniform, values) for p in parts)


def _operands(expr: A.Node | None) -> tuple[A.Node, ...] | None:
    """The operands of an operator the propagation looks through; None for anything else."""
    if isinstance(expr, A.Cast):
        return (expr.operand,) if expr.kind != "brace" else None
    if isinstance(expr, A.Unary):
        return (expr.operand,) if expr.op in _UNARY else None
    if isinstance(expr, A.Binary):
        return (expr.left, expr.right)
    if isinstance(expr, A.Ternary):
        return (expr.cond, expr.then, expr.other)
    if isinstance(expr, A.Call):
        if _broadcast(expr) is not None:
            return (_broadcast(expr),)      # type: ignore[return-value]
        return expr.args if expr.name in _PURE_CALLS else None
    return None


def _broadcast(call: A.Call) -> A.Expr | None:
    """The value `__shfl_sync(0xffffffff, v, lane)` returns when `v` is the same in every lane of
    the warp (`threadIdx.x / 32`: the idiom that makes a warp index uniform for the compiler): `v`."""
    if call.name != "__shfl_sync" or len(call.args) < 3 or not _warp_uniform(call.args[1]):
        return None
    mask = call.args[0]
    if not isinstance(mask, A.Number) or mask.text.lower().rstrip("u") not in ("0xffffffff", "-1"):
        return None
    return call.args[1]


def _warp_uniform(expr: A.Node) -> bool:
    """Whether `expr` reads the thread index only as its warp (`threadIdx.x / 32`, `>> 5`)."""
    if isinstance(expr, A.Binary) and isinstance(expr.right, A.Number) and _thread_x(expr.left):
        value = expr.right.value
        return isinstance(value, int) and (expr.op == "/" and value % 32 == 0 and value > 0
                                           or expr.op == ">>" and value >= 5)
    if _thread_x(expr):
        return False
    return all(_warp_uniform(child) for child in expr.children())


def _thread_x(expr: A.Node) -> bool:
    while isinstance(expr, A.Cast):
        expr = expr.operand
    return isinstance(expr, A.Member) and isinstance(expr.base, A.Name) and expr.base.ident == "threadIdx" \
        and expr.member == "x"


def _unshuffled(expr: A.Expr) -> A.Expr:
    """`expr` with each warp broadcast of a warp-uniform value replaced by the value."""
    def broadcast(node: A.Node) -> A.Node | None:
        return _broadcast(node) if isinstance(node, A.Call) else None

    found = A.transform(expr, broadcast)
    return found      # type: ignore[return-value]


def _declared_at(decls: list[tuple[A.Declaration, A.Declarator]], name: str) -> tuple[int, int]:
    d = next(d for _, d in decls if d.name == name)
    return (d.span.line, d.span.column)


def _substitute(expr: A.Expr, values: dict[str, A.Expr]) -> A.Expr:
    def use(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Name) and not node.scope and node.ident in values:
            return values[node.ident]
        return None

    found = A.transform(expr, use)
    assert isinstance(found, A.Node)
    return found      # type: ignore[return-value]


def _substitute_after(body: A.Compound, values: dict[str, A.Expr], at: dict[str, tuple[int, int]]) -> A.Compound:
    """The body with each use of a propagated local after its declaration replaced."""
    def use(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Name) and not node.scope and node.ident in values \
                and (node.span.line, node.span.column) > at[node.ident]:
            return values[node.ident]
        return None

    found = A.transform(body, use)
    assert isinstance(found, A.Compound)
    return found
