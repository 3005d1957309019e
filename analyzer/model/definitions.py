"""Reaching definitions of a kernel's registers, where a stored value needs one.

Why: a store run by many threads is a race only where two colliding threads store different
values (`model.threads.different_values`).  TileLang often computes the value in a register a
few statements earlier (`indices_local = Indices[(tx >> 3) + ...]; valid[tx >> 3] =
indices_local <= q_i`, DeepSeek's sparse MLA).  The register itself says nothing; its
definition does: a read of a read-only input at an address of `tx >> 3`, which is the same for
every pair of colliding threads.  This module gives that definition, as an expression, and only
where it is exact:

* the definition dominates the use in the structured code TileLang emits: it is a statement of
  a block that encloses the use, before the statement that holds the use;
* nothing assigns the register, or a variable the definition reads, between the two: neither a
  statement after the definition in that block, nor anything inside a loop that encloses the
  use but not the definition (a later iteration would see that assignment's value);
* its memory reads are of read-only inputs (a `const` pointee kernel parameter): the same
  address gives the same value at any time, so the value is a function of its address.

A register assigned in both branches of an `if` whose condition is not decided here (TileLang's
`int condval; if (c) { condval = 1; } else { condval = 0; }`) is defined at the `if` by the join
of the two values, `c ? a : b` (issue 31, item 5: not the last branch's value).  Only where that
is exact: each branch is a run of expression statements, the variable's last assignment in each
is a plain `=`, and neither the condition nor the two values read a variable either branch
assigns.

Anything else is no definition (None), and the caller stays undecided as before.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..cuda import ast as A
from .placement import contains

_KILLS = ("++", "--")
MAX_DEPTH = 4           # registers defined through registers, at most this deep


@dataclass(frozen=True)
class _Site:
    """Where one assignment sits: the chain of (block, position) from the body down to it."""

    path: tuple[tuple[int, int], ...]
    value: A.Expr | None          # the assigned expression; None: not a plain `=` (a kill only)
    node: A.Node


@dataclass
class Definitions:
    """The register definitions of one kernel body (built once, asked per stored value)."""

    body: A.Compound
    readonly: frozenset[str]                  # `const` pointee pointer parameters
    _sites: dict[str, list[_Site]] = field(default_factory=dict)
    _blocks: dict[int, A.Compound] = field(default_factory=dict)

    @classmethod
    def of(cls, func: A.FunctionDef) -> Definitions:
        assert func.body is not None
        readonly = frozenset(p.name for p in func.params if p.name and "const" in p.specifiers
                             and p.type.endswith("*"))
        out = cls(func.body, readonly)
        out._collect(func.body, ())
        return out

    def _collect(self, block: A.Compound, path: tuple[tuple[int, int], ...]) -> None:
        """Each statement of a block: its own assignments are definitions at its position; those
        of the statements nested in it (not in a block of their own) are kills only."""
        self._blocks[id(block)] = block
        for n, child in enumerate(block.body):
            here = (*path, (id(block), n))
            for name, value, node in _assignments(child) + _joined(child):
                self._sites.setdefault(name, []).append(_Site(here, value, node))
            self._descend(child, here)

    def _descend(self, stmt: A.Node, path: tuple[tuple[int, int], ...]) -> None:
        for child in stmt.children():
            if isinstance(child, A.Compound):
                self._collect(child, path)
            elif isinstance(child, (A.If, A.For, A.While, A.Switch, A.ExprStmt, A.Declaration)):
                for name, _, node in _assignments(child):
                    self._sites.setdefault(name, []).append(_Site(path, None, node))
                self._descend(child, path)

    # ------------------------------------------------------------------ questions
    def value_at(self, name: str, use: A.Node, depth: int = 0) -> A.Expr | None:
        """The expression the register `name` holds at `use`, with the registers it reads
        replaced by theirs; None where that is not exact (see the module docstring)."""
        if depth > MAX_DEPTH:
            return None
        where = self._path_to(use)
        if where is None:
            return None
        site = self._reaching(name, where)
        if site is None or site.value is None or not self._pure(site.value):
            return None
        for var in _names(site.value):
            if var in self._sites and not self._unchanged(var, site, where):
                return None
        return site.value

    def _reaching(self, name: str, where: tuple[tuple[int, int], ...]) -> _Site | None:
        """The nearest assignment that dominates `where`, with no other one of `name` between."""
        sites = self._sites.get(name, [])
        best: _Site | None = None
        for site in sites:
            k = len(site.path) - 1
            dominates = k < len(where) and site.path[:k] == where[:k] and site.path[k][0] == where[k][0] \
                and site.path[k][1] < where[k][1]
            if dominates and (best is None or (len(site.path), site.path[-1][1]) > (len(best.path), best.path[-1][1])):
                best = site
        if best is None or any(s is not best and self._between(s, best, where) for s in sites):
            return None
        return best

    def _unchanged(self, var: str, site: _Site, where: tuple[tuple[int, int], ...]) -> bool:
        return not any(self._between(s, site, where) for s in self._sites.get(var, []))

    def _between(self, other: _Site, site: _Site, where: tuple[tuple[int, int], ...]) -> bool:
        """Whether `other` may run after `site` and before the use at `where`: it lies after the
        definition inside the region from there to the use's statement, or anywhere inside a loop
        that encloses the use below the definition's block (a later iteration)."""
        k = len(site.path) - 1
        path = other.path
        if len(path) <= k or path[:k] != where[:k] or path[k][0] != where[k][0]:
            return False
        pos = path[k][1]
        if site.path[k][1] < pos < where[k][1]:
            return True
        if pos != where[k][1]:
            return False
        # inside the statement that holds the use: before it on the way down, or in a loop
        for level in range(k + 1, min(len(path), len(where))):
            if path[level][0] != where[level][0]:
                return True     # another branch of a loop body or `if` on the way: be safe
            if path[level][1] != where[level][1]:
                return path[level][1] < where[level][1] or self._in_loop(where, k, level)
        return len(path) != len(where) or path != where

    def _in_loop(self, where: tuple[tuple[int, int], ...], k: int, level: int) -> bool:
        """Whether a loop encloses the use below the definition's block (level `k`) and above
        `level` (loops around both run the definition again before the use)."""
        for block_id, pos in where[k:level]:
            stmt = self._blocks[block_id].body[pos]
            if isinstance(stmt, (A.For, A.While)):
                return True
        return False

    def _pure(self, value: A.Expr) -> bool:
        """Only reads of read-only inputs, arithmetic and pure conversions."""
        from .threads import pure_call

        for n in value.walk():
            if isinstance(n, A.Index) and _base_name(n.base) not in self.readonly:
                return False
            if isinstance(n, A.Call) and not pure_call(n):
                return False
            if isinstance(n, (A.Assign, A.Comma)) or (isinstance(n, A.Unary) and n.op in _KILLS):
                return False
        return True

    def _path_to(self, use: A.Node) -> tuple[tuple[int, int], ...] | None:
        """The (block, position) chain down to the statement that holds `use`."""
        path: list[tuple[int, int]] = []
        node: A.Node = self.body
        span = use.span
        while True:
            if isinstance(node, A.Compound):
                for n, child in enumerate(node.body):
                    if contains(child.span, span):
                        path.append((id(node), n))
                        node = child
                        break
                else:
                    return tuple(path) if path else None
                continue
            inner: A.Node | None = next((c for c in node.children() if isinstance(c, A.Compound)
                                         and contains(c.span, span)), None)
            if inner is None:
                inner = next((c for c in node.children() if isinstance(c, (A.If, A.For, A.While))
                              and contains(c.span, span)), None)
            if inner is None:
                return tuple(path)
            node = inner


def _is_statement(node: A.Node) -> bool:
    return isinstance(node, (A.ExprStmt, A.Declaration, A.Jump))


def _assignments(stmt: A.Node) -> list[tuple[str, A.Expr | None, A.Node]]:
    """The variables a statement itself assigns (not its nested statements'): declarations with
    an initialiser, `x = e`, and kills (`x += e`, `x++`, an address taken)."""
    out: list[tuple[str, A.Expr | None, A.Node]] = []
    if isinstance(stmt, A.Declaration):
        for d in stmt.declarators:
            out.append((d.name, d.init if not d.dims else None, d))
        return out
    if isinstance(stmt, A.For) and stmt.init is not None:
        return _assignments(stmt.init) + [(n, None, stmt) for n, _, _ in _expr_assignments(stmt.step)]
    if isinstance(stmt, A.ExprStmt):
        return _expr_assignments(stmt.expr)
    return out


def _joined(stmt: A.Node) -> list[tuple[str, A.Expr | None, A.Node]]:
    """The registers both branches of an `if`/`else` assign, each defined at the `if` by
    `cond ? then-value : else-value` (see the module docstring for where that is exact)."""
    if not isinstance(stmt, A.If) or stmt.other is None:
        return []
    then, other = _branch_values(stmt.then), _branch_values(stmt.other)
    if then is None or other is None:
        return []
    assigned = then[1] | other[1]
    if _names(stmt.cond) & assigned:
        return []
    out: list[tuple[str, A.Expr | None, A.Node]] = []
    for name in sorted(then[0].keys() & other[0].keys()):
        a, b = then[0][name], other[0][name]
        if not (_names(a) | _names(b)) & assigned:
            out.append((name, A.Ternary(stmt.cond, a, b, stmt.span), stmt))
    return out


def _branch_values(branch: A.Node) -> tuple[dict[str, A.Expr], set[str]] | None:
    """A branch's final plain values by variable, and every variable it assigns; None when the
    branch is not a run of expression statements (a nested statement: not joined)."""
    stmts = branch.body if isinstance(branch, A.Compound) else (branch,)
    values: dict[str, A.Expr] = {}
    assigned: set[str] = set()
    for s in stmts:
        if not isinstance(s, A.ExprStmt):
            return None
        for name, value, _ in _expr_assignments(s.expr):
            assigned.add(name)
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
    return values, assigned


def _expr_assignments(expr: A.Node | None) -> list[tuple[str, A.Expr | None, A.Node]]:
    out: list[tuple[str, A.Expr | None, A.Node]] = []
    if expr is None:
        return out
    for n in expr.walk():
        if isinstance(n, A.Assign) and isinstance(n.target, A.Name):
            out.append((n.target.ident, n.value if n.op == "=" and n is expr else None, n))
        elif isinstance(n, A.Unary) and n.op in (*_KILLS, "&") and isinstance(n.operand, A.Name):
            out.append((n.operand.ident, None, n))
    return out


def _names(value: A.Expr) -> set[str]:
    return {n.ident for n in value.walk() if isinstance(n, A.Name) and not n.scope}


def _base_name(base: A.Expr) -> str | None:
    while isinstance(base, A.Cast):
        base = base.operand
    return base.ident if isinstance(base, A.Name) else None
