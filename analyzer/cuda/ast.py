"""A light CUDA AST: frozen dataclasses with 1-based spans.

Only what a pipeline analyzer reads is a node of its own (calls, indexing,
arithmetic, declarations, control flow); types stay as their source text.
Spans follow Lark's (and SARIF's) convention: 1-based line and column, the end
column exclusive.  Nodes carry physical positions in the .cu file; the
`#line` map of the `TranslationUnit` turns them into TileLang Python positions.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace


@dataclass(frozen=True, slots=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    def cover(self, other: Span) -> Span:
        """The smallest span holding both."""
        start = min((self.line, self.column), (other.line, other.column))
        end = max((self.end_line, self.end_column), (other.end_line, other.end_column))
        return Span(start[0], start[1], end[0], end[1])


NO_SPAN = Span(0, 0, 0, 0)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f for f, spec in cls.__dataclass_fields__.items()  # type: ignore[attr-defined]
                      if f != "span" and spec.type not in ("str", "bool", "int", "Optional[str]",
                                                           "tuple[str, ...]", "Optional[tuple[str, ...]]"))
        _CHILD_FIELDS[cls] = names
    return names


def _fetcher(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """The child fields' values of a node in one call (the AST walk is the hottest loop of the
    model: a `getattr` per field per node cost a tenth of a check's time)."""
    if not names:
        return lambda _node: ()
    get = operator.attrgetter(*names)
    return get if len(names) > 1 else (lambda node: (get(node),))


_FETCH: dict[type, Callable[[object], tuple]] = {}


class Node:
    """Base of every AST node; subclasses are frozen dataclasses with `span`."""

    __slots__ = ()
    span: Span

    def children(self) -> list[Node]:
        fetch = _FETCH.get(type(self))
        if fetch is None:
            fetch = _FETCH[type(self)] = _fetcher(_child_fields(type(self)))
        out: list[Node] = []
        for value in fetch(self):
            if value is None or type(value) is str:
                continue
            if isinstance(value, Node):
                out.append(value)
            elif type(value) is tuple:
                for item in value:
                    if isinstance(item, Node):
                        out.append(item)
                    elif type(item) is tuple:  # asm sections
                        out.extend(i for i in item if isinstance(i, Node))
        return out

    def walk(self) -> Iterator[Node]:
        """Pre-order traversal of this node and everything below it."""
        stack: list[Node] = [self]
        pop, extend = stack.pop, stack.extend
        while stack:
            node = pop()
            yield node
            kids = node.children()
            kids.reverse()
            extend(kids)



def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that hold nodes (or tuples of them)."""
    return _child_fields(cls)


def transform(node: Node, replace_node: Callable[[Node], Node | None]) -> Node:
    """`node` with each node for which `replace_node` returns a replacement replaced (not looked
    into), new nodes only along the paths to a replacement: every other subtree keeps its
    identity, so that what is keyed by node (the caches, the registry's lists) stays valid for it."""
    new = replace_node(node)
    if new is not None:
        return new
    changes: dict[str, object] = {}
    for name in _child_fields(type(node)):
        old = getattr(node, name)
        if isinstance(old, Node):
            value: object = transform(old, replace_node)
        elif type(old) is tuple:
            items = tuple(transform(x, replace_node) if isinstance(x, Node) else
                          tuple(transform(i, replace_node) if isinstance(i, Node) else i for i in x)
                          if type(x) is tuple else x for x in old)
            value = items if any(a is not b for a, b in zip(items, old)) else old
        else:
            continue
        if value is not old:
            changes[name] = value
    return replace(node, **changes) if changes else node     # type: ignore[type-var]

# ------------------------------------------------------------------ expressions
@dataclass(frozen=True, slots=True)
class Name(Node):
    """An identifier, possibly qualified (`tl::x`) and templated (`f<2>`)."""

    ident: str
    span: Span
    scope: tuple[str, ...] = ()
    template_args: tuple[str, ...] | None = None

    @property
    def qualified(self) -> str:
        return "::".join(self.scope + (self.ident,))


@dataclass(frozen=True, slots=True)
class Number(Node):
    text: str
    span: Span

    @property
    def value(self) -> int | float:
        return parse_number(self.text)


@dataclass(frozen=True, slots=True)
class StringLit(Node):
    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Call(Node):
    callee: Expr
    args: tuple[Expr, ...]
    span: Span

    @property
    def name(self) -> str:
        """The callee's name: `tl::tma_load`, `wait` for `bar[i].wait(p)`."""
        callee = self.callee
        if isinstance(callee, Name):
            return callee.qualified
        if isinstance(callee, Member):
            return callee.member
        return ""

    @property
    def template_args(self) -> tuple[str, ...]:
        callee = self.callee
        if isinstance(callee, Name) and callee.template_args:
            return callee.template_args
        return ()


@dataclass(frozen=True, slots=True)
class Index(Node):
    base: Expr
    index: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Member(Node):
    base: Expr
    member: str
    arrow: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str
    operand: Expr
    span: Span
    postfix: bool = False


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Ternary(Node):
    cond: Expr
    then: Expr
    other: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Assign(Node):
    op: str
    target: Expr
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Cast(Node):
    """`(T)x`, `T(x)` or `reinterpret_cast<T>(x)`; `kind` says which."""

    type: str
    operand: Expr
    kind: str
    span: Span


@dataclass(frozen=True, slots=True)
class InitList(Node):
    items: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class SizeOf(Node):
    type: str
    span: Span


@dataclass(frozen=True, slots=True)
class Comma(Node):
    left: Expr
    right: Expr
    span: Span


Expr = (Name | Number | StringLit | Call | Index | Member | Unary | Binary | Ternary
        | Assign | Cast | InitList | SizeOf | Comma)


# ------------------------------------------------------------------ statements
@dataclass(frozen=True, slots=True)
class Declarator(Node):
    name: str
    pointer: str
    dims: tuple[Expr | None, ...]
    init: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Declaration(Node):
    specifiers: tuple[str, ...]
    type: str
    declarators: tuple[Declarator, ...]
    span: Span
    attributes: tuple[Attribute, ...] = ()

    def has(self, specifier: str) -> bool:
        return specifier in self.specifiers


@dataclass(frozen=True, slots=True)
class Attribute(Node):
    name: str
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Compound(Node):
    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ExprStmt(Node):
    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Empty(Node):
    span: Span


@dataclass(frozen=True, slots=True)
class If(Node):
    cond: Expr
    then: Stmt
    other: Stmt | None
    span: Span


@dataclass(frozen=True, slots=True)
class For(Node):
    init: Stmt | None
    cond: Expr | None
    step: Expr | None
    body: Stmt
    span: Span


@dataclass(frozen=True, slots=True)
class While(Node):
    cond: Expr
    body: Stmt
    span: Span
    do_while: bool = False


@dataclass(frozen=True, slots=True)
class Switch(Node):
    cond: Expr
    body: Stmt
    span: Span


@dataclass(frozen=True, slots=True)
class Case(Node):
    value: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Jump(Node):
    """`return`, `break` or `continue`."""

    kind: str
    value: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class AsmOperand(Node):
    constraint: str
    expr: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Asm(Node):
    template: str
    sections: tuple[tuple[AsmOperand, ...], ...]
    span: Span


@dataclass(frozen=True, slots=True)
class TypeDecl(Node):
    """typedef, using, static_assert: kept for completeness, rarely analyzed."""

    kind: str
    name: str
    span: Span


Stmt = (Compound | Declaration | ExprStmt | Empty | If | For | While | Switch | Case | Jump
        | Asm | TypeDecl)


# ------------------------------------------------------------------ top level
@dataclass(frozen=True, slots=True)
class Param(Node):
    specifiers: tuple[str, ...]
    type: str
    name: str | None
    span: Span


@dataclass(frozen=True, slots=True)
class FunctionDef(Node):
    name: str
    specifiers: tuple[str, ...]
    return_type: str
    params: tuple[Param, ...]
    body: Compound | None
    span: Span
    attributes: tuple[Attribute, ...] = ()
    template: str | None = None

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.specifiers and self.body is not None

    def attribute(self, name: str) -> Attribute | None:
        return next((a for a in self.attributes if a.name == name), None)


@dataclass(frozen=True, slots=True)
class StructDef(Node):
    kind: str
    name: str | None
    members: tuple[Node, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Namespace(Node):
    name: str | None
    items: tuple[Node, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Directive:
    """A preprocessor line (`#line`, `#pragma`, `#include`, ...)."""

    text: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class TranslationUnit(Node):
    items: tuple[Node, ...]
    span: Span
    directives: tuple[Directive, ...] = field(default=())

    def functions(self) -> Iterator[FunctionDef]:
        """Every function definition, also inside namespaces, linkage blocks and structs."""
        stack: list[Node] = list(reversed(self.items))
        while stack:
            node = stack.pop()
            if isinstance(node, FunctionDef):
                yield node
            elif isinstance(node, Namespace):
                stack.extend(reversed(node.items))
            elif isinstance(node, StructDef):
                stack.extend(reversed(node.members))

    def kernels(self) -> list[FunctionDef]:
        return [f for f in self.functions() if f.is_kernel]


_NUMBERS: dict[str, int | float] = {}


def parse_number(text: str) -> int | float:
    """Value of a C literal: `16`, `0x1F`, `8u`, `1.5f`, `0x0p+0f`; NaN (unknown) if malformed (`028`).
    Memoised: generated kernels repeat a few hundred literals hundreds of thousands of times."""
    value = _NUMBERS.get(text)
    if value is None:
        try:
            value = _parse_number(text)
        except (ValueError, OverflowError):
            value = float("nan")
        if len(_NUMBERS) < 65536:
            _NUMBERS[text] = value
    return value


def _parse_number(text: str) -> int | float:
    t = text.lower()
    if t.startswith("0x") and "p" in t:
        return float.fromhex(t.rstrip("fl"))
    if t.startswith("0x"):
        return int(t.rstrip("ul"), 16)
    stripped = t.rstrip("ulf") if not ("e" in t or "." in t) else t.rstrip("fl")
    if any(c in stripped for c in ".e"):
        return float(stripped)
    if len(stripped) > 1 and stripped.startswith("0"):
        return int(stripped, 8)
    return int(stripped)
