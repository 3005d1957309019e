"""Lark callbacks that build the AST while the LALR parser runs.

The transformer is handed to Lark itself (`Lark(..., transformer=...)`) so no
intermediate parse tree is ever built; that halves parse time.  The price is
that Lark gives no `meta` to inline callbacks, so each node takes its span
from its first and last child (tokens that matter for positions, like `if`
or `)` of a call, are named terminals and reach the callbacks).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lark import Token as _LarkToken
from lark import Transformer

from . import ast as A

try:  # lark-cython (the `fast` extra) brings its own token class
    from lark_cython import Token as _CyToken

    Token: Any = (_LarkToken, _CyToken)
except ImportError:  # pragma: no cover - depends on the install
    Token = _LarkToken


@dataclass(frozen=True, slots=True)
class _Scope:
    parts: tuple[str, ...]
    span: A.Span


@dataclass(frozen=True, slots=True)
class _Type:
    text: str
    span: A.Span


@dataclass(frozen=True, slots=True)
class _Specs:
    specifiers: tuple[str, ...]
    type: str
    attributes: tuple[A.Attribute, ...]
    span: A.Span


@dataclass(frozen=True, slots=True)
class _Declarator:
    name: str
    pointer: str
    span: A.Span


@dataclass(frozen=True, slots=True)
class _Dim:
    expr: A.Expr | None
    span: A.Span


@dataclass(frozen=True, slots=True)
class _Pointer:
    text: str
    span: A.Span


def _tok_span(tok: Any) -> A.Span:
    return A.Span(tok.line, tok.column, tok.end_line, tok.end_column)


def span_of(item: Any) -> A.Span | None:
    if isinstance(item, Token):
        return _tok_span(item)
    return getattr(item, "span", None)


def cover(children: Sequence[Any]) -> A.Span:
    """Span from the first positioned child to the last (hot: called once per node)."""
    try:
        first, last = children[0], children[-1]
        s = getattr(first, "span", None)
        line, column = (s.line, s.column) if s is not None else (first.line, first.column)
        s = getattr(last, "span", None)
        end_line, end_column = (s.end_line, s.end_column) if s is not None else (last.end_line, last.end_column)
        if line and end_line:
            return A.Span(line, column, end_line, end_column)
    except (AttributeError, IndexError, TypeError):
        pass
    return _cover_slow(children)


def _cover_slow(children: Sequence[Any]) -> A.Span:
    first = last = None
    for child in children:
        s = span_of(child)
        if s is not None and s.line:
            first = s
            break
    for child in reversed(children):
        s = span_of(child)
        if s is not None and s.line:
            last = s
            break
    if first is None or last is None:
        return A.NO_SPAN
    return A.Span(first.line, first.column, last.end_line, last.end_column)


def split_template(text: str) -> tuple[str, tuple[str, ...]]:
    """`f<a, g<b, c>>` -> (`f`, (`a`, `g<b, c>`))."""
    base, _, rest = text.partition("<")
    inner = rest[:-1]
    args: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in inner:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return base, tuple(args)


def _name_from(tok: Any, scope: tuple[str, ...], span: A.Span) -> A.Name:
    if tok.type in ("TNAME", "TTYPE"):
        base, targs = split_template(tok.value)
        return A.Name(base, span, scope, targs)
    return A.Name(tok.value, span, scope)


PRECEDENCE = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}


@dataclass(slots=True)
class _Chain:
    items: list


MODULAR = frozenset({"%", "/", "&", ">>"})


def fold(items: list, modular: list | None = None) -> A.Expr:
    """Fold [operand, op, operand, ...] into Binary nodes by C precedence (precedence climbing)."""
    operands = items[0::2]
    ops = [t.value for t in items[1::2]]
    pos = 0

    def climb(min_prec: int) -> A.Expr:
        nonlocal pos
        left = operands[pos]
        while pos < len(ops) and PRECEDENCE[ops[pos]] >= min_prec:
            op = ops[pos]
            pos += 1
            right = climb(PRECEDENCE[op] + 1)
            left = A.Binary(op, left, right, A.Span(left.span.line, left.span.column,
                                                    right.span.end_line, right.span.end_column))
            if modular is not None and op in MODULAR and type(right) is A.Number:
                modular.append(left)
        return left

    return climb(0)


def _exprs(children: Sequence[Any]) -> list[Any]:
    return [c for c in children if not isinstance(c, Token)]


class AstBuilder(Transformer):
    """One method per grammar rule (or alias); see grammars/cuda.lark.

    While building it also files the nodes later stages look up by kind
    (calls, declarations, if/for statements, modular arithmetic) in
    `registry`, so the kernel model never walks the tree to find them.
    """

    registry: dict[str, list] = {}

    def new_registry(self) -> dict[str, list]:
        self.registry = {"calls": [], "declarations": [], "ifs": [], "fors": [], "modular": []}
        return self.registry

    # ---------------------------------------------------------- top level
    def start(self, c: list[Any]) -> Any:
        return A.TranslationUnit(tuple(_exprs(c)), cover(c))

    def namespace_def(self, c: list[Any]) -> Any:
        name = c[0].value if c and isinstance(c[0], Token) else None
        return A.Namespace(name, tuple(_exprs(c)), cover(c))

    def linkage_block(self, c: list[Any]) -> Any:
        return A.Namespace(None, tuple(_exprs(c[1:])), cover(c))

    def template_decl(self, c: list[Any]) -> Any:
        head, inner = c[0], c[1]
        if isinstance(inner, A.FunctionDef):
            return A.FunctionDef(inner.name, inner.specifiers, inner.return_type, inner.params,
                                 inner.body, cover(c), inner.attributes, head.value)
        return inner

    def typedef_decl(self, c: list[Any]) -> Any:
        names = [x.name for x in c if isinstance(x, _Declarator)]
        return A.TypeDecl("typedef", names[0] if names else "", cover(c))

    def typedef_name(self, c: list[Any]) -> Any:
        return self.declarator(c)

    def using_decl(self, c: list[Any]) -> Any:
        tok = next((x for x in c if isinstance(x, Token) and x.type in ("NAME", "TYPE")), None)
        return A.TypeDecl("using", tok.value if tok else "", cover(c))

    def namespace_alias(self, c: list[Any]) -> Any:
        tok = next((x for x in c if isinstance(x, Token) and x.type in ("NAME", "TYPE")), None)
        return A.TypeDecl("namespace", tok.value if tok else "", cover(c))

    def explicit_instantiation(self, c: list[Any]) -> Any:
        """`template __global__ void k<128>(...);`: names an instance, defines nothing."""
        return A.TypeDecl("template", "", cover(c))

    def static_assert_decl(self, c: list[Any]) -> Any:
        return A.TypeDecl("static_assert", "", cover(c))

    def struct_def(self, c: list[Any]) -> Any:
        kind = c[0].value
        name = next((x.value for x in c[1:2] if isinstance(x, Token)), None)
        members = tuple(x for x in c if isinstance(x, A.Node))
        return A.StructDef(kind, name, members, cover(c))

    def base_clause(self, c: list[Any]) -> Any:
        return None

    def access_label(self, c: list[Any]) -> Any:
        return None

    def ctor_inits(self, c: list[Any]) -> Any:
        return None

    def ctor_init(self, c: list[Any]) -> Any:
        return None

    def ctor_def(self, c: list[Any]) -> Any:
        tok = next(x for x in c if isinstance(x, Token) and x.type == "TYPE")
        params = next((x for x in c if isinstance(x, list)), [])
        body = c[-1]
        return A.FunctionDef(tok.value, tuple(x.value for x in c if isinstance(x, Token)
                                              and x.type == "SPECIFIER"),
                             "", tuple(params), body, cover(c))

    def function_def(self, c: list[Any]) -> Any:
        specs: _Specs = c[0]
        decl: _Declarator = c[1]
        params = next((x for x in c if isinstance(x, list)), [])
        attrs = specs.attributes + tuple(x for x in c[2:] if isinstance(x, A.Attribute))
        body = c[-1] if isinstance(c[-1], A.Compound) else None
        return A.FunctionDef(decl.name, specs.specifiers, specs.type + decl.pointer,
                             tuple(params), body, cover(c), attrs)

    def params(self, c: list[Any]) -> Any:
        return list(c)

    def param(self, c: list[Any]) -> Any:
        if isinstance(c[0], Token):  # `...`
            return A.Param((), "...", None, cover(c))
        specs: _Specs = c[0]
        decl = next((x for x in c[1:] if isinstance(x, _Declarator)), None)
        bare = next((x for x in c[1:] if isinstance(x, _Pointer)), None)    # an unnamed `float*`
        pointer = decl.pointer if decl else (bare.text if bare else "")
        # `float (&v)[4]`, `half (*sa)[LDS]`: the name between the parentheses
        named = next((x.value for x in c[1:] if isinstance(x, Token) and x.type in ("NAME", "TNAME")), None)
        return A.Param(specs.specifiers, specs.type + pointer, decl.name if decl else named, cover(c))

    # ---------------------------------------------------------- declarations
    def declaration(self, c: list[Any]) -> Any:
        specs: _Specs = c[0]
        decls = tuple(x for x in c[1:] if isinstance(x, A.Declarator))
        node = A.Declaration(specs.specifiers, specs.type, decls, cover(c), specs.attributes)
        self.registry['declarations'].append(node)
        return node

    def init_declarator(self, c: list[Any]) -> Any:
        decl: _Declarator = c[0]
        dims = tuple(x.expr for x in c if isinstance(x, _Dim))
        init = None
        for i, x in enumerate(c):
            if isinstance(x, Token) and x.type == "ASSIGN":
                init = c[i + 1]
        return A.Declarator(decl.name, decl.pointer, dims, init, cover(c))

    def declarator(self, c: list[Any]) -> Any:
        pointer = c[0].text if isinstance(c[0], _Pointer) else ""
        return _Declarator(c[-1].value.split("<", 1)[0], pointer, cover(c))

    def pointer(self, c: list[Any]) -> Any:
        return _Pointer("".join(t.value for t in c if t.type in ("STAR", "AMP", "ANDAND")), cover(c))

    def array_dim(self, c: list[Any]) -> Any:
        return _Dim(c[0] if c else None, cover(c))

    def init_list(self, c: list[Any]) -> Any:
        return A.InitList(tuple(_exprs(c)), cover(c))

    def decl_specs(self, c: list[Any]) -> Any:
        specs, attrs, type_text = [], [], ""
        for x in c:
            if isinstance(x, _Type):
                type_text = x.text
            elif isinstance(x, A.Attribute):
                attrs.append(x)
            else:
                specs.append(x.value)
        return _Specs(tuple(specs), type_text, tuple(attrs), cover(c))

    def attribute(self, c: list[Any]) -> Any:
        name = c[0].value if isinstance(c[0], Token) else "__attribute__"
        args = next((x for x in c if isinstance(x, list)), [])
        return A.Attribute(name, tuple(args), cover(c))

    def type_spec(self, c: list[Any]) -> Any:
        parts = []
        for x in c:
            if isinstance(x, _Scope):
                parts.append("::".join(x.parts) + "::")
            elif isinstance(x, A.Name):
                parts.append(x.qualified)
            else:
                parts.append(x.value + (" " if x.type == "STRUCT_KW" else ""))
        return _Type("".join(parts), cover(c))

    def type_name(self, c: list[Any]) -> Any:
        text = " ".join(x.value if isinstance(x, Token) else x.text for x in c)
        return _Type(text, cover(c))

    def abstract_ptr(self, c: list[Any]) -> Any:
        return _Type("".join(t.value for t in c), cover(c))

    def scope(self, c: list[Any]) -> Any:
        head = c[0].parts if isinstance(c[0], _Scope) else ()
        return _Scope(head + tuple(t.value for t in c if isinstance(t, Token)), cover(c))

    def scoped_name(self, c: list[Any]) -> Any:
        scope = c[0].parts if isinstance(c[0], _Scope) else ()
        return _name_from(c[-1], scope, cover(c))

    # ---------------------------------------------------------- statements
    def compound(self, c: list[Any]) -> Any:
        return A.Compound(tuple(x for x in c[1:-1] if x is not None), cover(c))

    def expr_stmt(self, c: list[Any]) -> Any:
        return A.ExprStmt(c[0], cover(c))

    def empty_stmt(self, c: list[Any]) -> Any:
        return A.Empty(cover(c))

    def if_stmt(self, c: list[Any]) -> Any:
        other = c[3] if len(c) > 3 else None
        node = A.If(c[1], c[2], other, cover(c))
        self.registry['ifs'].append(node)
        return node

    def for_stmt(self, c: list[Any]) -> Any:
        semi = max(i for i, x in enumerate(c) if isinstance(x, Token) and x.type == "SEMI")
        init = c[1]
        cond = c[2] if semi == 3 else None
        step = c[semi + 1] if len(c) - semi == 3 else None
        node = A.For(init, cond, step, c[-1], cover(c))
        self.registry['fors'].append(node)
        return node

    def while_stmt(self, c: list[Any]) -> Any:
        return A.While(c[1], c[2], cover(c))

    def do_stmt(self, c: list[Any]) -> Any:
        return A.While(c[2], c[1], cover(c), do_while=True)

    def switch_stmt(self, c: list[Any]) -> Any:
        return A.Switch(c[1], c[2], cover(c))

    def case_label(self, c: list[Any]) -> Any:
        return A.Case(c[1] if len(c) > 1 else None, cover(c))

    def return_stmt(self, c: list[Any]) -> Any:
        value = c[1] if len(c) > 2 else None
        return A.Jump("return", value, cover(c))

    def break_stmt(self, c: list[Any]) -> Any:
        return A.Jump("break", None, cover(c))

    def continue_stmt(self, c: list[Any]) -> Any:
        return A.Jump("continue", None, cover(c))

    def asm_stmt(self, c: list[Any]) -> Any:
        template = "".join(t.value[1:-1] for t in c if isinstance(t, Token) and t.type == "STRING")
        sections = tuple(x for x in c if isinstance(x, tuple))
        return A.Asm(template, sections, cover(c))

    def asm_section(self, c: list[Any]) -> Any:
        return tuple(c)

    def asm_operand(self, c: list[Any]) -> Any:
        constraint = next(t.value for t in c if isinstance(t, Token) and t.type == "STRING")
        expr = next((x for x in c if not isinstance(x, Token)), None)
        return A.AsmOperand(constraint, expr, cover(c))

    # ---------------------------------------------------------- expressions
    def comma(self, c: list[Any]) -> Any:
        return A.Comma(c[0], c[1], cover(c))

    def assign_op(self, c: list[Any]) -> Any:
        return A.Assign(c[1].value, c[0], c[2], cover(c))

    def ternary(self, c: list[Any]) -> Any:
        cond = fold(c[0].items, self.registry["modular"]) if type(c[0]) is _Chain else c[0]
        return A.Ternary(cond, c[1], c[2], A.Span(cond.span.line, cond.span.column,
                                                  c[2].span.end_line, c[2].span.end_column))

    def chain(self, c: list[Any]) -> Any:
        """Collect `a op b op c ...` flat; `finish_chain` folds it by precedence."""
        if type(c[0]) is _Chain:
            c[0].items.extend((c[1], c[2]))
            return c[0]
        return _Chain([c[0], c[1], c[2]])

    def finish_chain(self, c: list[Any]) -> Any:
        return fold(c[0].items, self.registry["modular"])

    def c_cast(self, c: list[Any]) -> Any:
        return A.Cast(c[0].text, c[1], "c", cover(c))

    def prefix(self, c: list[Any]) -> Any:
        return A.Unary(c[0].value, c[1], cover(c))

    def postfix_op(self, c: list[Any]) -> Any:
        return A.Unary(c[1].value, c[0], cover(c), postfix=True)

    def sizeof_type(self, c: list[Any]) -> Any:
        return A.SizeOf(c[1].text, cover(c))

    def index(self, c: list[Any]) -> Any:
        return A.Index(c[0], c[1], cover(c))

    def call(self, c: list[Any]) -> Any:
        callee = c[0]
        args = c[1] if len(c) == 3 else []
        if (isinstance(callee, A.Name) and callee.ident.endswith("_cast")
                and callee.template_args and len(args) == 1):
            return A.Cast(callee.template_args[0], args[0], callee.ident, cover(c))
        node = A.Call(callee, tuple(args), cover(c))
        self.registry["calls"].append(node)
        return node

    def member(self, c: list[Any]) -> Any:
        return A.Member(c[0], c[1].value, False, cover(c))

    def arrow(self, c: list[Any]) -> Any:
        return A.Member(c[0], c[1].value, True, cover(c))

    def args(self, c: list[Any]) -> Any:
        return list(c)

    def name(self, c: list[Any]) -> Any:
        return c[0]

    def number(self, c: list[Any]) -> Any:
        return A.Number(c[0].value, _tok_span(c[0]))

    def char(self, c: list[Any]) -> Any:
        return A.StringLit(c[0].value, _tok_span(c[0]))

    def string(self, c: list[Any]) -> Any:
        return A.StringLit("".join(t.value for t in c), cover(c))

    def functional_cast(self, c: list[Any]) -> Any:
        scope = c[0].parts if isinstance(c[0], _Scope) else ()
        toks = [x for x in c if isinstance(x, Token) and x.type != "RPAR"]
        type_name = "::".join(scope + (toks[0].value,))
        args = next((x for x in c if isinstance(x, list)), [])
        operand = args[0] if len(args) == 1 else A.InitList(tuple(args), cover(c))
        return A.Cast(type_name, operand, "functional", cover(c))

    def brace_init(self, c: list[Any]) -> Any:
        scope = c[0].parts if isinstance(c[0], _Scope) else ()
        tok = next(x for x in c if isinstance(x, Token))
        return A.Cast("::".join(scope + (tok.value,)), c[-1], "brace", cover(c))
