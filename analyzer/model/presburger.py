"""Cross-thread questions as Presburger sets (isl), decided without enumerating threads or points.

An access is a relation from (thread, loop iterations) to bytes.  Generated index arithmetic is
almost all Presburger: affine terms, floor division and modulo by constants, shifts by constants,
masks, min/max and selects on guards.  Each of those becomes linear constraints over one fresh
integer variable, exactly, with C semantics:

* `a / c` and `a % c` truncate toward zero: `c*q <= a <= c*q + c - 1` where `a` is known to be
  non-negative (its interval), the disjunction of both signs otherwise;
* `a >> k` is `floor(a / 2^k)` (arithmetic shift), `a << k` is `a * 2^k`;
* a bitwise operation with a constant is decomposed exactly by bits: bit j of `a` is
  `floor(a / 2^j) - 2 * floor(a / 2^(j+1))`;
* `min`, `max`, `?:`, comparisons and `&&`/`||`/`!` are disjunctions (isl keeps unions).

Each access is one isl map from (thread, loop variables) to the bytes it touches, built once
and reused for every access it meets.  The question "does one thread of `a` and a *different*
thread of `b` touch a common byte" is the emptiness of `a . b^-1` restricted to different
threads, which isl decides in about a millisecond; a sample point of it is the witness.  What is
not Presburger (a product of two variables, a shift by a variable, a value read from memory, an
unknown call), and the XOR swizzles of TileLang's layouts (two variable fields: exact by bits
in Presburger arithmetic too, but isl's emptiness over such nested floors takes seconds), raise
`Untranslatable`, and the caller asks the bit-vector solver (`model.symbolic`) instead.  So does
a question that exceeds isl's operation budget (`MAX_OPERATIONS`).  A guard that does not
translate (a condition on data: `0 < A[tx]`) is left free: it can hold for any thread, so an
empty set is a proof, and a non-empty one is a pair that meets whenever the condition holds for
its two threads, which is how the enumerator always read such guards ("taken").  Where which
threads run matters beyond that (two stores whose writers data picks may never both run), the
caller knows it (`Event.uncertain`) and says so.

Values a query compares (two stores of the same value do not race) are terms of the same
language.
"""
from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..cuda import ast as A
from .evaluate import builtin_name, frozen_values, interval, shape_of, thread_index_call
from .launch import INT_RANGE, RangeGuard
from .symbolic import LaneRecipe, Untranslatable, Witness, on_data, runs

MAX_BLOCK = 1024
_UNIFORM = {"blockIdx.x": "bix", "blockIdx.y": "biy", "blockIdx.z": "biz", "blockDim.x": "bdx",
            "blockDim.y": "bdy", "blockDim.z": "bdz", "gridDim.x": "gdx", "gridDim.y": "gdy", "gridDim.z": "gdz"}
_LOCK = threading.Lock()          # one isl context for the process; the editor's server has threads
MAX_OPERATIONS = 20000            # isl's work per question (about 0.2 s) before it goes to the bit-vector solver
MEET_OPERATIONS = 4000            # of which the meeting of two built accesses (below)
MAX_DIVISIONS = 10                # divisions and selects of one access; more (bit-level layouts): z3 at once


@functools.cache
def _isl() -> Any:
    import islpy

    return islpy


def available() -> bool:
    """Whether islpy is importable (optional: without it every query goes to the bit-vector solver)."""
    try:
        _isl()
    except ImportError:
        return False
    return True


class _Side:
    """One access's variables and constraints, as isl text."""

    def __init__(self, recipe: LaneRecipe, tag: str, opaque: Mapping[object, int], query: _Query) -> None:
        self.recipe = recipe
        self.tag = tag
        self.opaque = opaque
        self.query = query
        self.t = query.fresh(f"t{tag}")
        self.loops = {name: query.fresh(f"l{tag}") for name, _ in recipe.ranges}
        self.fixed = dict(recipe.points)
        lo_t = recipe.threads & -recipe.threads
        self.ranges: dict[str, tuple[int, int]] = dict(recipe.ranges)
        self.ranges["threadIdx.x"] = (lo_t.bit_length() - 1, recipe.threads.bit_length() - 1)
        query.cons.append(_member(self.t, recipe.threads))
        for name, (lo, hi) in recipe.ranges:
            query.cons.append(f"{lo} <= {self.loops[name]} <= {hi}")

    # ------------------------------------------------------------ terms
    def term(self, expr: A.Expr) -> str:
        """An affine isl expression equal to `expr` under the constraints added to the query."""
        if self.opaque and not isinstance(expr, (A.Number, A.Name)):
            fixed = self.opaque.get(shape_of(expr))
            if fixed is not None:
                return _num(fixed)
        name = builtin_name(expr) if isinstance(expr, (A.Cast, A.Member)) else (
            expr.ident if isinstance(expr, A.Name) and not expr.scope else None)
        if name is not None:
            return self.name(name)
        handler = _TERMS.get(type(expr))
        if handler is None:
            raise Untranslatable(type(expr).__name__)
        return handler(self, expr)

    def number(self, expr: A.Number) -> str:
        value = expr.value
        if isinstance(value, float):
            if not value.is_integer():
                raise Untranslatable("float")
            value = int(value)
        return _num(value)

    def cast(self, expr: A.Cast) -> str:
        return self.term(expr.operand)

    def unary(self, expr: A.Unary) -> str:
        if expr.postfix or expr.op not in ("-", "+", "~", "!"):
            raise Untranslatable(f"unary `{expr.op}`")
        if expr.op == "!":
            return self.truth(expr)
        inner = self.term(expr.operand)
        return f"-({inner})" if expr.op == "-" else (f"(-({inner}) - 1)" if expr.op == "~" else inner)

    def ternary(self, expr: A.Ternary) -> str:
        v = self.query.fresh("s")
        cond = self.cond(expr.cond, True)
        other = self.cond(expr.cond, False)
        self.query.cons.append(f"(({cond}) and {v} = {self.term(expr.then)}) or "
                               f"(({other}) and {v} = {self.term(expr.other)})")
        return v

    def index(self, expr: A.Index) -> str:
        """A local array's slot whose value the point fixes (`x[3]`); memory is not a term."""
        if isinstance(expr.base, A.Name) and not expr.base.scope:
            index = self.constant(expr.index)
            key = f"{expr.base.ident}[{index}]"
            if index is not None and key in self.fixed:
                return _num(self.fixed[key])
        raise Untranslatable("Index")

    def name(self, name: str) -> str:
        if name == "threadIdx.x":
            return self.t
        if name in self.loops:
            return self.loops[name]
        if name in self.fixed:
            return _num(self.fixed[name])
        if name in _UNIFORM:
            return self.query.param(_UNIFORM[name])
        if name in self.recipe.uniform:
            return self.query.argument(name)       # a kernel argument: one value everywhere
        if self.query.shared is not None and name not in self.query.shared and name.isidentifier():
            return self.query.param(f"u_{name}")        # one value for both sides (see `decide`)
        raise Untranslatable(name)

    def constant(self, expr: A.Expr) -> int | None:
        """The value of `expr` when it is the same at every point (no thread, loop or uniform)."""
        while isinstance(expr, A.Cast):
            expr = expr.operand
        if isinstance(expr, A.Number):
            return expr.value if isinstance(expr.value, int) else None
        if isinstance(expr, A.Name):
            fixed = not expr.scope and expr.ident in self.fixed and expr.ident not in self.loops
            return self.fixed[expr.ident] if fixed else None
        if isinstance(expr, A.Member):           # `blockDim.x`, where the point fixes it
            name = builtin_name(expr)
            return self.fixed.get(name) if name is not None else None
        value = self.opaque.get(shape_of(expr)) if self.opaque else None
        return value if value is not None else self._folded(expr)

    def _folded(self, expr: A.Expr) -> int | None:
        """A negation or a `+ - * <<` of two constants."""
        if isinstance(expr, A.Unary) and expr.op == "-" and not expr.postfix:
            inner = self.constant(expr.operand)
            return -inner if inner is not None else None
        if isinstance(expr, A.Binary) and expr.op in _CONSTANT_OPS:
            a, b = self.constant(expr.left), self.constant(expr.right)
            return _CONSTANT_OPS[expr.op](a, b) if a is not None and b is not None else None
        return None

    def bounds(self, expr: A.Expr) -> tuple[int, int] | None:
        return interval(expr, self.fixed, self.ranges)

    def call(self, expr: A.Call) -> str:
        found = thread_index_call(expr)
        if found is None:
            if expr.name in ("max", "min") and len(expr.args) == 2:
                a, b = self.term(expr.args[0]), self.term(expr.args[1])
                v = self.query.fresh("m")
                rel = ">=" if expr.name == "max" else "<="
                self.query.cons.append(f"({a} {rel} {b} and {v} = {a}) or ({b} {rel} {a} and {v} = {b})")
                return v
            raise Untranslatable(expr.name)
        formula, args, defaults = found
        values = []
        for i, d in enumerate(defaults):
            if i < len(args):
                n = self.constant(args[i])
                if n is None:
                    raise Untranslatable("a thread-index argument that is not a constant")
                values.append(n if n > 0 else d)
            else:
                values.append(d)
        a0 = values[0] if values else 0
        a1 = values[1] if len(values) > 1 else 0
        t = self.t                        # a thread index is non-negative: floor is truncation
        table = {"t": lambda: t, "t % a0": lambda: self.floor_mod(t, a0), "t // a0": lambda: self.floor_div(t, a0),
                 "t // (a0 * a1)": lambda: self.floor_div(t, a0 * a1), "t // 32": lambda: self.floor_div(t, 32),
                 "t % 32": lambda: self.floor_mod(t, 32), "t // 128": lambda: self.floor_div(t, 128)}
        if formula not in table:
            raise Untranslatable(formula)
        return table[formula]()

    # ------------------------------------------------------------ arithmetic
    def floor_div(self, a: str, c: int) -> str:
        key = ("div", a, c)
        memo = self.query.memo
        if key not in memo:
            q = self.query.fresh("q")
            self.query.cons.append(f"{c} * {q} <= {a} <= {c} * {q} + {c - 1}")
            memo[key] = q
        return memo[key]

    def floor_mod(self, a: str, c: int) -> str:
        return f"(({a}) - {c} * {self.floor_div(a, c)})"

    def trunc_div(self, expr: A.Expr, a: str, c: int) -> str:
        """C's `a / c` for a constant c > 0."""
        b = self.bounds(expr)
        if b is not None and b[0] >= 0:
            return self.floor_div(a, c)
        if b is not None and b[1] <= 0:
            return f"-({self.floor_div(f'-({a})', c)})"
        q = self.query.fresh("q")
        self.query.cons.append(f"({a} >= 0 and {c} * {q} <= {a} <= {c} * {q} + {c - 1}) or "
                               f"({a} < 0 and {c} * {q} - {c - 1} <= {a} <= {c} * {q})")
        return q

    def bit(self, a: str, j: int) -> str:
        return f"({self.floor_div(a, 1 << j) if j else a} - 2 * {self.floor_div(a, 1 << (j + 1))})"

    def and_const(self, a: str, m: int) -> str:
        """`a & m` for a constant m, exact for any sign of `a` (two's complement)."""
        if m < 0:
            return f"(({a}) - {self.and_const(a, ~m)})"
        if m == 0:
            return "0"
        if m & (m + 1) == 0:                          # 2^k - 1
            return self.floor_mod(a, m + 1)
        terms = [f"{1 << j} * {self.bit(a, j)}" for j in range(m.bit_length()) if (m >> j) & 1]
        return "(" + " + ".join(terms) + ")"

    def binary(self, expr: A.Binary) -> str:
        op = expr.op
        if op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            return self.truth(expr)
        if op in ("+", "-"):
            return f"({self.term(expr.left)} {op} {self.term(expr.right)})"
        ca, cb = self.constant(expr.left), self.constant(expr.right)
        if op == "*":
            return self.product(expr, ca, cb)
        if op in ("&", "|", "^"):
            return self.bitwise(expr, op, ca, cb)
        if op not in ("/", "%", "<<", ">>"):
            raise Untranslatable(op)
        if cb is None or (cb == 0 if op in ("/", "%") else not 0 <= cb < 63):
            raise Untranslatable(f"`{op}` by a variable")
        a = self.term(expr.left)
        if op == "<<":
            return f"{1 << cb} * {a}"
        if op == ">>":
            return self.floor_div(a, 1 << cb)
        q = f"-({self.trunc_div(expr.left, a, -cb)})" if cb < 0 else self.trunc_div(expr.left, a, cb)
        return q if op == "/" else f"(({a}) - {_num(cb)} * {q})"

    def product(self, expr: A.Binary, ca: int | None, cb: int | None) -> str:
        if ca is not None:
            return f"{_num(ca)} * {self.term(expr.right)}"
        if cb is not None:
            return f"{_num(cb)} * {self.term(expr.left)}"
        if self.uniform(expr):      # `blockIdx.y * seq_len`: one value for both sides, one parameter
            digest = hashlib.sha1(repr(shape_of(expr)).encode()).hexdigest()[:12]
            return self.query.param(f"p_{digest}")
        raise Untranslatable("a product of two variables")

    def uniform(self, expr: A.Expr) -> bool:
        """Whether an expression has one value for both sides: it reads only block indices,
        fixed values and (at one point of the kernel) names that are not per-thread registers."""
        for n in expr.walk():
            if isinstance(n, (A.Index, A.Call, A.Assign, A.Unary)) and not (
                    isinstance(n, A.Unary) and n.op in ("-", "+")):
                return False
            if isinstance(n, A.Name) and not n.scope:
                name = n.ident
                if name == "threadIdx" or name in self.loops:
                    return False
                if name in ("blockIdx", "blockDim", "gridDim") or name in self.fixed:
                    continue
                if self.query.shared is None or name in self.query.shared or not name.isidentifier():
                    return False
        return True

    def bitwise(self, expr: A.Binary, op: str, ca: int | None, cb: int | None) -> str:
        if ca is not None or cb is not None:
            m = ca if ca is not None else cb
            assert m is not None
            a = self.term(expr.right if ca is not None else expr.left)
            if op == "&":
                return self.and_const(a, m)
            if m < 0:            # a | m = ~(~a & ~m);  a ^ m = ~(a ^ ~m)
                inner = f"(-({a}) - 1)" if op == "|" else a
                core = self.and_const(inner, ~m) if op == "|" else \
                    f"({a} + {~m} - 2 * {self.and_const(a, ~m)})"
                return f"(-({core}) - 1)"
            both = self.and_const(a, m)
            return f"({a} + {m} - {both})" if op == "|" else f"({a} + {m} - 2 * {both})"
        # Two variable operands (an XOR swizzle): exact by bits, but isl's emptiness over the
        # nested floors of a bit decomposition costs seconds, where bit-vectors take milliseconds.
        raise Untranslatable(f"`{op}` of two variables: bit-vectors")

    # ------------------------------------------------------------ conditions
    def truth(self, expr: A.Expr) -> str:
        """0 or 1, as C gives a comparison's or a logical operator's value."""
        v = self.query.fresh("b")
        self.query.cons.append(f"(({self.cond(expr, True)}) and {v} = 1) or (({self.cond(expr, False)}) and {v} = 0)")
        return v

    def cond(self, expr: A.Expr, positive: bool) -> str:
        """A formula that holds exactly where `expr` is non-zero (`positive`) or zero."""
        while isinstance(expr, A.Cast):
            expr = expr.operand
        if isinstance(expr, A.Unary) and expr.op == "!" and not expr.postfix:
            return self.cond(expr.operand, not positive)
        if isinstance(expr, A.Binary) and expr.op in ("&&", "||"):
            left, right = self.cond(expr.left, positive), self.cond(expr.right, positive)
            conj = (expr.op == "&&") == positive
            return f"(({left}) {'and' if conj else 'or'} ({right}))"
        if isinstance(expr, A.Binary) and expr.op in _NEGATE:
            op = expr.op if positive else _NEGATE[expr.op]
            a, b = self.term(expr.left), self.term(expr.right)
            if op == "!=":
                return f"({a} < {b} or {a} > {b})"
            return f"{a} {'=' if op == '==' else op} {b}"
        value = self.term(expr)
        return f"({value} < 0 or {value} > 0)" if positive else f"{value} = 0"


_NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_TERMS: dict[type, Callable[[_Side, Any], str]] = {
    A.Number: _Side.number, A.Cast: _Side.cast, A.Call: _Side.call, A.Binary: _Side.binary,
    A.Unary: _Side.unary, A.Ternary: _Side.ternary, A.Index: _Side.index}
_CONSTANT_OPS: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None}


def _num(n: int) -> str:
    return f"({n})" if n < 0 else str(n)


class _Query:
    """The variables, parameters and constraints of one access's relation."""

    def __init__(self, shared: frozenset[str] | None = None) -> None:
        self.dims: list[str] = []
        self.params: list[str] = []
        self.cons: list[str] = []
        self.memo: dict[tuple, str] = {}
        self.shared = shared         # other names are one symbol for both sides, except these

    def fresh(self, stem: str) -> str:
        name = f"{stem}{len(self.dims)}"
        self.dims.append(name)
        return name

    def param(self, name: str) -> str:
        if name not in self.params:
            self.params.append(name)
            if not name.startswith("u_"):
                self.cons.append(f"{name} >= 0")     # block indices and sizes
        return name

    def argument(self, name: str) -> str:
        """A kernel argument's parameter, in the range of its type (`model.launch`)."""
        param = f"k_{name}"
        if param not in self.params:
            self.params.append(param)
            self.cons.append(f"{INT_RANGE[0]} <= {param} <= {INT_RANGE[1]}")
        return param

    def text(self, domain: list[str], out: list[str]) -> str:
        """`[params] -> { [domain] -> [out] : exists (the other variables : constraints) }`."""
        body = " and ".join(f"({c})" for c in self.cons) or "true"
        hidden = [d for d in self.dims if d not in domain and d not in out]
        if hidden:
            body = f"exists ({', '.join(hidden)} : {body})"
        return f"[{', '.join(self.params)}] -> {{ [{', '.join(domain)}] -> [{', '.join(out)}] : {body} }}"


def _member(t: str, threads: int) -> str:
    """`t` is one of a set of threads: a union of runs, or a residue pattern when it is periodic."""
    spans = runs(threads)
    if not spans:
        return "false"
    lo, hi = spans[0][0], spans[-1][1]
    if len(spans) > 8:
        for period in (2, 4, 8, 16, 32, 64, 128, 256, 512):
            if (hi - lo) % period:
                continue
            pattern = (threads >> lo) & ((1 << period) - 1)
            if all(((threads >> (lo + k)) & ((1 << period) - 1)) == pattern for k in range(0, hi - lo, period)):
                residues = [r for r in range(period) if (pattern >> r) & 1]
                mods = " or ".join(f"({t} - {lo}) mod {period} = {r}" for r in residues)
                return f"{lo} <= {t} < {hi} and ({mods})"
    return " or ".join(f"{a} <= {t} < {b}" for a, b in spans)


def _lanes_outside(lane: str, mask: int) -> str:
    """`lane` (0..31) is not in the mask."""
    outside = ~mask & 0xFFFFFFFF
    spans = runs(outside)
    return " or ".join(f"{a} <= {lane} < {b}" for a, b in spans) if spans else "false"


@dataclass(frozen=True)
class _Access:
    """One access as an isl map from (thread, loop variables[, stored value]) to the bytes it
    touches; `dropped`: a guard did not translate, so the map over-approximates the access."""

    relation: Any
    loops: tuple[str, ...]
    dropped: bool
    valued: bool
    hull: tuple[int, int] | None        # [lo, hi) of every byte it touches (None: unbounded or empty)


_ACCESSES: dict[tuple, _Access | Untranslatable] = {}
_KEEP: list[object] = []            # keeps the nodes behind cached ids alive


def _access(recipe: LaneRecipe, shift: int, opaque: Mapping[object, int], value: A.Expr | None,
            shared: frozenset[str] | None = None) -> _Access:
    """The relation of one access, built once per recipe (most accesses meet many others)."""
    key = (shared, id(recipe.index), recipe.elem, recipe.width, recipe.points, recipe.ranges, recipe.threads,
           tuple((id(g), p) for g, p in recipe.guards), shift, frozen_values(opaque),
           id(value) if value is not None else None)
    found = _ACCESSES.get(key)
    if found is None:
        try:
            found = _build(recipe, shift, opaque, value, shared)
        except Untranslatable as exc:
            found = exc
        if len(_ACCESSES) > 8192:
            _ACCESSES.clear()
            _KEEP.clear()
        _ACCESSES[key] = found
        _KEEP.append((recipe.index, recipe.guards, value))
    if isinstance(found, Untranslatable):
        raise found
    return found


def _build(recipe: LaneRecipe, shift: int, opaque: Mapping[object, int], value: A.Expr | None,
           shared: frozenset[str] | None) -> _Access:
    query = _Query(shared)
    side = _Side(recipe, "", opaque, query)
    byte, start = query.fresh("byte"), query.fresh("start")
    query.cons.append(f"{start} = {recipe.elem} * ({side.term(recipe.index)}) + {shift}")
    query.cons.append(f"{start} <= {byte} < {start} + {recipe.width}")
    query.cons.append(f"0 <= {side.t} < {MAX_BLOCK}")
    dropped = False
    for cond, polarity in recipe.guards:
        mark = len(query.cons)
        try:
            query.cons.append(side.cond(cond, polarity))
        except Untranslatable:
            if not on_data(cond):
                raise              # arithmetic isl does not take (`% blockDim.x`): the solver's, not free
            del query.cons[mark:]               # nothing of a guard on data that did not translate
            dropped = True
    divisions = sum(1 for d in query.dims if d[0] in "qsmb" and d[1:].isdigit())   # divisions, selects
    if divisions > MAX_DIVISIONS:
        # a layout computed bit by bit (`((tx & 31) >> 4) + (i & 1)) & 1` ...): each bit is a
        # division for isl, whose emptiness then costs its whole budget; bit-vectors take it
        raise Untranslatable(f"{divisions} integer divisions: bit-vectors")
    domain = [side.t, *side.loops.values()]
    if value is not None:
        v = query.fresh("value")
        query.cons.append(f"{v} = {side.term(value)}")
        domain.append(v)
    isl = _isl()
    try:
        relation = isl.Map(query.text(domain, [byte])).coalesce()
    except isl.Error as exc:           # a formula isl does not take: not a verdict
        raise Untranslatable(f"isl: {exc}") from None
    return _Access(relation, tuple(side.loops), dropped, value is not None, _hull(recipe, shift))


_PAIRS: dict[tuple, Any] = {}


def _pairs(a: _Access, b: _Access, warp_mask: int | None, any_threads: bool) -> Any:
    key = (len(a.loops), len(b.loops), a.valued, b.valued, warp_mask, any_threads)
    found = _PAIRS.get(key)
    if found is None:
        found = _PAIRS[key] = _pairs_map(a, b, warp_mask, any_threads)
    return found


def _pairs_map(a: _Access, b: _Access, warp_mask: int | None, any_threads: bool) -> Any:
    """The (thread of a, its point) -> (thread of b, its point) pairs the question excludes or
    keeps: different threads (unless `any_threads`), not ordered by the warp barrier, and
    different stored values where values are compared."""
    left = ["t", *(f"la{i}" for i in range(len(a.loops)))] + (["va"] if a.valued else [])
    right = ["u", *(f"lb{i}" for i in range(len(b.loops)))] + (["vb"] if b.valued else [])
    cons = []
    if not any_threads:
        cons.append("(t < u or t > u)")
    if warp_mask is not None:
        cons.append(f"(floor(t/32) < floor(u/32) or floor(u/32) < floor(t/32) or "
                    f"({_lanes_outside('(t mod 32)', warp_mask)}) or ({_lanes_outside('(u mod 32)', warp_mask)}))")
    if a.valued and b.valued:
        cons.append("(va < vb or va > vb)")
    body = " and ".join(cons) or "true"
    return _isl().Map(f"{{ [{', '.join(left)}] -> [{', '.join(right)}] : {body} }}")


def cross_thread(a: LaneRecipe, b: LaneRecipe, shift: int = 0, opaque: Mapping[object, int] | None = None,
                 values: tuple[A.Expr | None, A.Expr | None] | None = None,
                 warp_mask: int | None = None, any_threads: bool = False,
                 same_point: frozenset[str] | None = None) -> tuple[bool | None, Witness | None]:
    """Whether a byte of `a` belongs to one thread and of `b` to a different one, as
    `model.symbolic.cross_thread` (same arguments, same answers).  Raises `Untranslatable` where
    an index, a value or a mask is not Presburger, so that the caller can ask the bit-vector solver."""
    if not available():
        raise Untranslatable("islpy is not installed")
    if values is not None and (values[0] is None or values[1] is None):
        raise Untranslatable("a stored value")
    launch = a.launch if a.uniform or b.uniform else None
    covered = launch.covered() if launch is not None else None      # built under the lock itself
    with _LOCK:
        _budget()
        sa = _access(a, 0, opaque or {}, values[0] if values else None, same_point)
        sb = _access(b, shift, opaque or {}, values[1] if values else None, same_point)
        if _apart(sa.hull, sb.hull):
            return False, None
        return _meet(sa, sb, warp_mask, any_threads, covered)


def meeting_condition(a: LaneRecipe, b: LaneRecipe, shift: int = 0,
                      opaque: Mapping[object, int] | None = None) -> str | None:
    """Where two different threads of `a` and `b` meet, as a condition on the kernel arguments
    and the block index (in C's names, within the blocks the launch covers): what a race's message
    says when its accesses read kernel arguments.  None where they read none, where the pair
    meets for every value, or where the sets are not Presburger."""
    if not (a.uniform or b.uniform) or not available():
        return None
    covered = a.launch.covered() if a.launch is not None else None
    with _LOCK:
        _budget()
        try:
            sa, sb = _access(a, 0, opaque or {}, None), _access(b, shift, opaque or {}, None)
            meet = sa.relation.apply_range(sb.relation.reverse()).intersect(_pairs(sa, sb, None, False))
            if covered is not None:
                meet = meet.intersect_params(covered)
            if meet.is_empty():
                return None
            found = _assignment(meet)
        except Exception:  # noqa: BLE001 - words added to a message never cost the finding
            return None
    return None if found == "always" else found


def _hull(recipe: LaneRecipe, shift: int) -> tuple[int, int] | None:
    """[lo, hi) of every byte an access can touch, from its index's bounds over its threads and
    walked ranges (guards left out: a larger set), as `_Access.hull`; None where unbounded."""
    threads = recipe.threads
    if threads <= 0:
        return None
    ranges = dict(recipe.ranges)
    ranges["threadIdx.x"] = ((threads & -threads).bit_length() - 1, threads.bit_length() - 1)
    bounds = interval(recipe.index, dict(recipe.points), ranges)
    if bounds is None:
        return None
    return recipe.elem * bounds[0] + shift, recipe.elem * bounds[1] + recipe.width + shift


def _apart(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    """Two accesses whose bytes' bounds do not overlap (a filter before the sets)."""
    return a is not None and b is not None and (a[1] <= b[0] or b[1] <= a[0])


def _meet(sa: _Access, sb: _Access, warp_mask: int | None, any_threads: bool,
          covered: Any = None) -> tuple[bool, Witness | None]:
    """The question on two built accesses: empty, or a witness from a sample point.

    `covered`: the blocks a launch covers (`model.launch`); a pair that meets only outside them
    is False, with the witness of where it meets (`Witness.outside`: the assignment, in words)."""
    isl = _isl()
    outside = None
    try:
        pairs = _pairs(sa, sb, warp_mask, any_threads)
        # emptiness on a small budget: a swizzled relation isl cannot decide quickly costs its
        # whole budget before the bit-vector solver answers in milliseconds; the witness of a
        # non-empty meeting has the full one
        _budget(MEET_OPERATIONS)
        meet = sa.relation.apply_range(sb.relation.reverse()).intersect(pairs)
        if meet.is_empty():
            return False, None
        _budget()
        if covered is not None and meet.intersect_params(covered).is_empty():
            outside = _assignment(meet)
        point = meet.wrap().sample_point()
        coords = [int(point.get_coordinate_val(isl.dim_type.set, i).to_python())
                  for i in range(meet.dim(isl.dim_type.in_) + meet.dim(isl.dim_type.out))]
        split = meet.dim(isl.dim_type.in_)
        offset = _first_common(sa.relation, coords[:split], sb.relation, coords[split:])
    except isl.Error as exc:
        raise Untranslatable(f"isl: {exc}") from None
    except (TypeError, ValueError) as exc:
        # a sample point isl leaves void (a coordinate with no value: int(None)) is no answer, and
        # never a crash of the check that asked: the bit-vector solver or "undecided" takes over
        raise Untranslatable(f"isl: no sample point ({exc})") from None
    na, nb = len(sa.loops), len(sb.loops)
    witness = Witness((coords[0], coords[split]),
                      (dict(zip(sa.loops, coords[1:1 + na])), dict(zip(sb.loops, coords[split + 1:split + 1 + nb]))),
                      offset, outside)
    return outside is None, witness


_PARAM_NAMES = {v: k for k, v in _UNIFORM.items()}


def _assignment(meet: Any) -> str:
    """Where (arguments, launch values) the pair meets, as the condition isl gives, in C's names:
    simplified against what every launch has (block values >= 0, arguments in their type).  A
    condition with divisions or several pieces is given by its bounds and one point of it."""
    isl = _isl()
    params = meet.params()
    names = [params.get_dim_name(isl.dim_type.param, i) for i in range(params.dim(isl.dim_type.param))]
    known = " and ".join(f"{INT_RANGE[0]} <= {n} <= {INT_RANGE[1]}" if n.startswith("k_") else f"{n} >= 0"
                         for n in names) or "true"
    context = isl.Set(f"[{', '.join(names)}] -> {{ [] : {known} }}").params()
    exact = _c_names(str(params.gist(context).coalesce()))
    if "floor" not in exact and " or " not in exact:
        return exact
    point = params.sample_point()
    values = ", ".join(f"{_c_names(n)} = {int(point.get_coordinate_val(isl.dim_type.param, i).to_python())}"
                       for i, n in enumerate(names) if n.startswith("k_") or n in _PARAM_NAMES)
    bounds = _c_names(str(isl.Set.from_basic_set(params.simple_hull()).gist(context).coalesce()))
    return f"for some values with {bounds} (for example {values})" if bounds != "always" else \
        f"for some values (for example {values})"


def _c_names(text: str) -> str:
    """An isl parameter set's condition (or one name) with C's names: `64*blockIdx.x >= T_seq`."""
    body = text.split(":", 1)[1].rsplit("}", 1)[0].strip() if "{" in text and ":" in text else (
        "always" if "{" in text else text)
    for param, name in _PARAM_NAMES.items():
        body = re.sub(rf"(?<![A-Za-z_]){param}\b", name, body)
    body = re.sub(r"(?<![A-Za-z_])k_(\w+)", r"\1", body)
    return re.sub(r"(\d)([A-Za-z_])", r"\1*\2", body)


def covered(guards: list[RangeGuard], uniform: frozenset[str]) -> Any:
    """The parameter set of blocks in which some range guard holds for some thread and iteration
    (`model.launch`): the weakest assumption, a block with one row in range of one guarded access.
    A guard over a sparse thread set that exceeds isl's budget is taken over the threads' hull (a
    larger set: a weaker assumption).  None (nothing assumed) when a guard does not translate."""
    found = None
    with _LOCK:
        for g in guards:
            hull = ((1 << g.threads.bit_length()) - 1) & ~((g.threads & -g.threads) - 1)
            one = _guard_set(g, g.threads, uniform)
            if one is None and hull != g.threads:
                one = _guard_set(g, hull, uniform)
            if one is None:
                return None
            try:
                _budget()
                found = one if found is None else found.union(one).coalesce()     # islpy aligns the parameters
            except _isl().Error:          # isl's operation budget: assume nothing
                return None
    return found


def _guard_set(g: RangeGuard, threads: int, uniform: frozenset[str]) -> Any:
    """The blocks in which `g` holds for one of `threads` at some iteration (None: not translated)."""
    from .threads import LaneRecipe as Recipe

    isl = _isl()
    _budget()
    query = _Query()
    side = _Side(Recipe(g.lesser, 1, 1, (), g.ranges, threads, uniform=uniform), "", {}, query)
    try:
        query.cons.append(f"{side.term(g.lesser)} {'<' if g.strict else '<='} {side.term(g.greater)}")
        body = " and ".join(f"({c})" for c in query.cons)
        return isl.Set(f"[{', '.join(query.params)}] -> {{ [] : exists ({', '.join(query.dims)} : {body}) }}").params()
    except (Untranslatable, isl.Error):
        return None


def _budget(operations: int = MAX_OPERATIONS) -> None:
    """A fresh operation budget for one question (an exhausted one raises `isl.Error`)."""
    ctx = _isl().DEFAULT_CONTEXT
    if ctx.get_max_operations() != operations:
        ctx.set_max_operations(operations)
    ctx.reset_operations()


def _first_common(ra: Any, pa: list[int], rb: Any, pb: list[int]) -> int:
    """The lowest byte both accesses touch at the witness's two points."""
    isl = _isl()

    def at(relation: Any, point: list[int]) -> Any:
        here = isl.Set("{ [" + ", ".join(str(c) for c in point) + "] }").align_params(relation.get_space())
        return relation.intersect_domain(here).range()

    common = at(ra, pa).intersect(at(rb, pb)).lexmin()
    return int(common.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python())


_DECIDED: dict[tuple, tuple[bool | None, Witness | None]] = {}


def decide(a: LaneRecipe, b: LaneRecipe, shift: int = 0, opaque: Mapping[object, int] | None = None,
           values: tuple[A.Expr | None, A.Expr | None] | None = None,
           warp_mask: int | None = None, any_threads: bool = False,
           same_point: frozenset[str] | None = None) -> tuple[bool | None, Witness | None]:
    """`_decide`, once per question: the simulations ask one pair of statements again at every
    visit (each barrier trial, each role that meets it), by the same nodes."""
    key = (_recipe_key(a), _recipe_key(b), shift, frozen_values(opaque),
           None if values is None else tuple(id(v) for v in values), warp_mask, any_threads, same_point)
    found = _DECIDED.get(key)
    if found is None:
        found = _decide(a, b, shift, opaque, values, warp_mask, any_threads, same_point)
        if len(_DECIDED) > 1 << 17:
            _DECIDED.clear()
            _KEEP_DECIDED.clear()
        _DECIDED[key] = found
        _KEEP_DECIDED.append((a.index, a.guards, a.launch, b.index, b.guards, b.launch, values))
    return found


_KEEP_DECIDED: list[object] = []      # the nodes behind the cached ids stay alive


def _recipe_key(recipe: LaneRecipe) -> tuple:
    return (id(recipe.index), recipe.elem, recipe.width, recipe.points, recipe.ranges, recipe.threads,
            tuple((id(g), p) for g, p in recipe.guards), recipe.uniform, id(recipe.launch))


def _decide(a: LaneRecipe, b: LaneRecipe, shift: int = 0, opaque: Mapping[object, int] | None = None,
            values: tuple[A.Expr | None, A.Expr | None] | None = None,
            warp_mask: int | None = None, any_threads: bool = False,
            same_point: frozenset[str] | None = None) -> tuple[bool | None, Witness | None]:
    """The cross-thread question, decided symbolically: as integer sets (isl) where every index,
    guard and value is Presburger, else by the bit-vector solver (`model.symbolic`: products of
    variables, shifts by variables); None, undecided, only where neither can say (memory contents,
    an unknown call, a solver timeout).  Never by enumerating threads or points.

    `same_point`: the two accesses are at one point of the kernel (one statement at one iteration
    of the loops simulated around it), so a name that is neither the thread, a walked loop nor a
    fixed value (an outer loop's counter, a kernel parameter) has one value for both; the names
    given are the exceptions, the per-thread registers.  Without it such a name is untranslatable."""
    try:
        return cross_thread(a, b, shift, opaque, values, warp_mask, any_threads, same_point)
    except Untranslatable:
        if same_point is not None:
            return None, None
        if _apart(_hull(a, 0), _hull(b, shift)):     # bounds first: the solver costs milliseconds
            return False, None
        from . import symbolic

        return symbolic.cross_thread(a, b, shift, opaque, values, warp_mask, any_threads)


def satisfiable(recipe: LaneRecipe) -> bool | None:
    """Whether some launch (block indices >= 0, `int` arguments in their range) makes every guard
    of `recipe` hold (guards on launch values and arguments only; its index is not asked about): a
    trip-count scenario's conditions (`KernelModel.feasible_trips`).  None where a guard does not
    translate or isl cannot say."""
    found = _guard_relation(recipe)
    if found is None:
        return None
    with _LOCK:
        _budget()
        try:
            return not found.is_empty()
        except _isl().Error:          # over isl's operation budget: not a verdict
            return None


def condition(recipe: LaneRecipe) -> str | None:
    """Where the guards of `recipe` hold, as a condition on the block indices and the kernel
    arguments in C's names (`blockIdx.x >= 2`), simplified against what every launch has; None
    where a guard does not translate, or the set is empty."""
    found = _guard_relation(recipe)
    if found is None or found.is_empty():
        return None
    with _LOCK:
        try:
            return _assignment(found)
        except Exception:  # noqa: BLE001 - words added to a message never cost the finding
            return None


def _guard_relation(recipe: LaneRecipe) -> Any:
    """The access relation of `recipe` with every guard in it (None: islpy missing, a guard that
    does not translate, or a formula isl does not take)."""
    if not available():
        return None
    with _LOCK:
        _budget()
        try:
            access = _build(recipe, 0, {}, None, None)
        except Exception:  # noqa: BLE001 - an unknown answer keeps the scenario
            return None
    return None if access.dropped else access.relation
