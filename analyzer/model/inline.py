"""Calls of the file's own `__device__` functions, inlined before the model is built.

Hand-written kernels put their synchronisation and their shared-memory traffic in helpers:

    __device__ void block_sync() { __syncthreads(); }
    template <typename T> __device__ T blockReduceSum(T val) {
      static __shared__ T shared[32];
      ...; __syncthreads(); ...; return val;
    }
    float sum = blockReduceSum<float>(v);

A call the model cannot see into is a barrier it misses (a false race after `block_sync()`) and
shared accesses it cannot check.  A C++ front end sees the helper's body, and `__forceinline__`
helpers are compiled exactly as if written at the call.  So each call of a helper defined in the
same file, as a statement (`f(a, b);`), an assignment (`x = f(a);`) or an initialiser (`T x =
f(a);`), is replaced by the helper's body: its parameters become locals initialised from the
arguments (a reference parameter names its argument), its locals are renamed apart for each call,
a `static __shared__` array keeps one name for every call (it is one array), template type
parameters take the call's explicit arguments, and the value of a helper's final `return`
becomes the assigned value.  A helper is inlined only where that is exact: the one definition of
its name with a body and as many parameters as the call has arguments, no `return` but a last
one, no recursion (at most `MAX_DEPTH` levels).  Anything else stays a call, which the model
treats as before (an unknown call that receives a shared pointer is a note naming it).
"""
from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import replace

from ..cuda import ast as A
from .aliases import note_write

MAX_DEPTH = 4
_TEMPLATE_PARAM = re.compile(r"\b(?:typename|class)\s+([A-Za-z_]\w*)")


def helpers_of(unit: A.TranslationUnit) -> dict[str, A.FunctionDef]:
    """The functions of a file that can be inlined, by name: not kernels, with a body, the only
    definition of their name (an overload set is left as calls)."""
    found: dict[str, A.FunctionDef | None] = {}
    for func in unit.functions():
        if func.body is None or func.is_kernel or "__global__" in func.specifiers:
            continue
        found[func.name] = None if func.name in found else func
    return {name: func for name, func in found.items() if func is not None and _inlinable(func)}


def _inlinable(func: A.FunctionDef) -> bool:
    """No `return` but as the last statement (with a value where the function returns one)."""
    assert func.body is not None
    body = func.body.body
    returns = [n for n in func.body.walk() if isinstance(n, A.Jump) and n.kind == "return"]
    if not returns:
        return func.return_type.strip() in ("void", "")
    last = body[-1] if body else None
    return len(returns) == 1 and returns[0] is last


def inline_calls(func: A.FunctionDef, helpers: Mapping[str, A.FunctionDef]) -> A.FunctionDef:
    """`func` with its calls of `helpers` replaced by their bodies (the same object where none)."""
    if func.body is None or not helpers:
        return func
    body = _Inliner(helpers).block(func.body, 0)
    return func if body is func.body else A.FunctionDef(
        func.name, func.specifiers, func.return_type, func.params, body, func.span, func.attributes, func.template)


class _Inliner:
    def __init__(self, helpers: Mapping[str, A.FunctionDef]) -> None:
        self.helpers = helpers
        self.sites = 0

    def block(self, body: A.Compound, depth: int) -> A.Compound:
        found = A.transform(body, lambda node: self.statement(node, depth))
        assert isinstance(found, A.Compound)
        return found

    def statement(self, node: A.Node, depth: int) -> A.Node | None:
        """The inlined form of a statement that calls a helper, or None to look inside it."""
        if depth >= MAX_DEPTH:
            return None
        if isinstance(node, A.ExprStmt):
            expr = node.expr
            if isinstance(expr, A.Call):
                return self.expand(expr, None, depth)
            if isinstance(expr, A.Assign) and expr.op == "=" and isinstance(expr.value, A.Call):
                return self.expand(expr.value, expr.target, depth)
        if isinstance(node, A.Declaration) and len(node.declarators) == 1 and not node.has("__shared__"):
            d = node.declarators[0]
            if isinstance(d.init, A.Call) and self.helper(d.init) is not None:
                declared = replace(node, declarators=(replace(d, init=None),))
                inlined = self.expand(d.init, A.Name(d.name, d.span), depth)
                if inlined is not None:
                    return A.Compound((declared, inlined), node.span)
        if isinstance(node, (A.ExprStmt, A.Declaration)):
            return self.hoisted(node, depth)
        return None

    def hoisted(self, node: A.ExprStmt | A.Declaration, depth: int) -> A.Node | None:
        """A statement whose expression calls a helper inside it (`float m = f(s) / C;`): each
        such call, innermost first, inlined into a temporary before the statement, and the
        statement reading the temporary.  Calls under `&&`, `||` or `?:` (evaluated only
        sometimes) stay calls."""
        calls = self.innermost_calls(node)
        if not calls or any(isinstance(n, A.Ternary) or (isinstance(n, A.Binary) and n.op in ("&&", "||"))
                            for n in node.walk()):
            return None
        before: list[A.Stmt] = []
        values: dict[int, A.Expr] = {}
        for call in calls:
            func = self.helper(call)
            assert func is not None
            self.sites += 1
            temp = A.Name(f"__value_{func.name}{self.sites}", call.span)
            inlined = self.expand(call, temp, depth)
            if inlined is None or func.return_type.strip() in ("void", ""):
                return None
            kind = _typed(func.return_type, _template_types(func, call))
            before += [A.Declaration((), kind, (A.Declarator(temp.ident, "", (), None, call.span),), call.span),
                       inlined]
            values[id(call)] = temp
        rest = A.transform(node, lambda n: values.get(id(n)))
        return A.Compound((*before, rest), node.span)      # type: ignore[arg-type]

    def innermost_calls(self, node: A.Node) -> list[A.Call]:
        """The helper calls in a statement whose arguments call no helper."""
        def calls_helper(expr: A.Node) -> bool:
            return any(isinstance(a, A.Call) and self.helper(a) is not None for a in expr.walk())

        return [n for n in node.walk() if isinstance(n, A.Call) and self.helper(n) is not None
                and not any(calls_helper(arg) for arg in n.args)]

    def helper(self, call: A.Call) -> A.FunctionDef | None:
        callee = call.callee
        if not isinstance(callee, A.Name) or callee.scope:
            return None
        func = self.helpers.get(callee.ident)
        return func if func is not None and len(func.params) == len(call.args) else None

    def expand(self, call: A.Call, target: A.Expr | None, depth: int) -> A.Compound | None:
        """The helper's body for this call, its result assigned to `target` (None: dropped)."""
        func = self.helper(call)
        if func is None or func.body is None:
            return None
        self.sites += 1
        site = self.sites
        types = _template_types(func, call)
        names = _locals(func)
        written = _written(func)
        renamed = {n: f"{n}__{func.name}{site}" for n in names}
        references: dict[str, A.Expr] = dict(_template_values(func, call))    # `template <int N>`: N
        prologue: list[A.Stmt] = []
        for param, arg in zip(func.params, call.args):
            if param.name is None:
                continue
            if _named_by_argument(param, arg, written):
                references[param.name] = arg
                renamed.pop(param.name, None)
            else:
                prologue.append(_binding(param, renamed[param.name], arg, types))
        statics = {n: f"{n}__{func.name}" for n in _static_shared(func)}
        renamed.update(statics)
        # a copy per call: each site's statements are nodes of their own (what is keyed by node,
        # a barrier's identity among them, must not merge two calls)
        body: list[A.Stmt] = list(_renamed(copy.deepcopy(func.body), renamed, references, types).body)
        last = body[-1] if body else None
        if isinstance(last, A.Jump) and last.kind == "return":
            body.pop()
            if last.value is not None and target is not None:
                body.append(A.ExprStmt(A.Assign("=", target, last.value, call.span), call.span))
        inlined = _at_call(A.Compound((*prologue, *body), call.span), call.span)
        return self.block(inlined, depth + 1)


def _at_call(body: A.Compound, span: A.Span) -> A.Compound:
    """The inlined statements placed at the call: a finding in them names the call's line (two
    calls of one helper are two places, as a compiler's "in expansion of" says), with columns
    that keep the body's order and nesting (`model.aliases` replaces a local's uses *after* its
    declaration; the walk's index finds kinds by nesting)."""
    counter = [span.column]

    def placed(node: A.Node) -> A.Node:
        start = counter[0]
        counter[0] += 1
        changes: dict[str, object] = {}
        for name in A.child_fields(type(node)):
            old = getattr(node, name)
            if isinstance(old, A.Node):
                changes[name] = placed(old)
            elif type(old) is tuple:
                changes[name] = tuple(placed(x) if isinstance(x, A.Node) else
                                      tuple(placed(i) if isinstance(i, A.Node) else i for i in x)
                                      if type(x) is tuple else x for x in old)
        changes["span"] = A.Span(span.line, start, span.line, counter[0])
        return replace(node, **changes)      # type: ignore[type-var]

    found = placed(body)
    assert isinstance(found, A.Compound)
    return found


def _locals(func: A.FunctionDef) -> set[str]:
    """The names a helper declares: its parameters and its locals."""
    assert func.body is not None
    found = {p.name for p in func.params if p.name}
    for node in func.body.walk():
        if isinstance(node, A.Declaration):
            found.update(d.name for d in node.declarators)
    return found


def _written(func: A.FunctionDef) -> set[str]:
    """The names a helper assigns, increments or takes the address of."""
    assert func.body is not None
    found: set[str] = set()
    for node in func.body.walk():
        note_write(node, found)
    return found


def _named_by_argument(param: A.Param, arg: A.Expr, written: set[str]) -> bool:
    """A reference names its argument; so does a pointer the helper never moves, bound to an
    address (`&sa[s][tid * 4]`): `dst[i]` is then that array's element."""
    assert param.name is not None
    return "&" in param.type or ("*" in param.type and _address(arg) and param.name not in written)


def _address(expr: A.Expr) -> bool:
    """An address with no side effect: a name, `&x[i]`, `p + k`, through casts (no call, no `++`)."""
    return not any(isinstance(n, (A.Call, A.Assign)) or (isinstance(n, A.Unary) and n.op in ("++", "--"))
                   for n in expr.walk())


def _static_shared(func: A.FunctionDef) -> set[str]:
    assert func.body is not None
    return {d.name for node in func.body.walk() if isinstance(node, A.Declaration) and node.has("__shared__")
            for d in node.declarators}


def _template_types(func: A.FunctionDef, call: A.Call) -> dict[str, str]:
    """Template type parameters bound by the call's explicit arguments (`f<float>(x)`: T = float)."""
    if not func.template:
        return {}
    params = _TEMPLATE_PARAM.findall(func.template)
    return dict(zip(params, call.template_args))


_VALUE_PARAM = re.compile(r"\b(?:int|unsigned|unsigned\s+int|long|size_t|bool|short|char|uint32_t|int32_t)\s+"
                          r"([A-Za-z_]\w*)")


def _template_values(func: A.FunctionDef, call: A.Call) -> dict[str, A.Expr]:
    """Non-type template parameters bound by the call's explicit integer arguments
    (`cp_async_wait<1>()` for `template <int N>`: N = 1)."""
    if not func.template:
        return {}
    header = func.template[func.template.find("<") + 1:func.template.rfind(">")]
    params = [p.strip() for p in header.split(",")]
    found: dict[str, A.Expr] = {}
    for param, arg in zip(params, call.template_args):
        match = _VALUE_PARAM.match(param)
        text = arg.strip()
        if match and re.fullmatch(r"-?\d+[uUlL]*", text):
            found[match.group(1)] = A.Number(text, call.span)
    return found


def _binding(param: A.Param, name: str, arg: A.Expr, types: Mapping[str, str]) -> A.Declaration:
    """`T name = arg;` for a value or pointer parameter, at the parameter's place (before every
    use of it in the body, as the propagation of launch values wants: `model.aliases`)."""
    span = param.span
    text = _typed(param.type, types)
    pointer = "*" * text.count("*")
    base = text.replace("*", " ").strip()
    return A.Declaration(tuple(s for s in param.specifiers if s != "__restrict__"), base,
                         (A.Declarator(name, pointer, (), arg, span),), span)


def _typed(text: str, types: Mapping[str, str]) -> str:
    for param, arg in types.items():
        text = re.sub(rf"\b{re.escape(param)}\b", arg, text)
    return text


def _renamed(body: A.Compound, renamed: Mapping[str, str], references: Mapping[str, A.Expr],
             types: Mapping[str, str]) -> A.Compound:
    """The helper's body with its names renamed apart, references replaced by their arguments and
    template types by the call's."""
    def rename(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Name) and not node.scope:
            if node.ident in references:
                return references[node.ident]
            if node.ident in renamed:
                return replace(node, ident=renamed[node.ident])
            if node.template_args and types:      # `warpReduceSum<T>` called with T = float
                return replace(node, template_args=tuple(_typed(t, types) for t in node.template_args))
            return None
        if isinstance(node, A.Declaration):
            declarators = tuple(replace(d, name=renamed.get(d.name, d.name),
                                        init=_expr(d.init, rename) if d.init is not None else None,
                                        dims=tuple(_expr(x, rename) if x is not None else None for x in d.dims))
                                for d in node.declarators)
            return replace(node, type=_typed(node.type, types), declarators=declarators)
        if isinstance(node, A.Cast) and types:
            return replace(node, type=_typed(node.type, types), operand=_expr(node.operand, rename))
        return None

    found = A.transform(body, rename)
    assert isinstance(found, A.Compound)
    return found


def _expr(expr: A.Expr, rename) -> A.Expr:       # type: ignore[no-untyped-def]
    found = A.transform(expr, rename)
    return found      # type: ignore[return-value]
