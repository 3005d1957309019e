"""Cross-thread questions decided by a solver, not by enumerating threads x loop points.

`model.threads` answers "does some byte of access `a` belong to one thread and of access `b`
to a *different* thread?" by enumerating every thread and every combination of the loop
variables walked once.  Where that product is large (a 256-thread warp-group tile stored over
an unrolled 64-step loop) enumeration gives up and the pair used to be *undecided*.  Here the
same question is one satisfiability query, the way GPUVerify and Faial encode two arbitrary
threads:

    exists t1 in threads(a), t2 in threads(b), t1 != t2, loop points p1, p2 in their ranges,
           guards(a)(t1, p1), guards(b)(t2, p2):
        [elem_a * idx_a(t1, p1), + width_a)  meets  [elem_b * idx_b(t2, p2) + shift, + width_b)

The index expressions are translated to 64-bit bit-vector terms of z3 with the C semantics
`model.evaluate` gives them (truncating `/` and `%`, arithmetic `>>`, `&`, `|`, `^` — the XOR
swizzles of TileLang's layouts are native bit-vector operations here), so the
answer is the enumerator's answer, for any size.  UNSAT: no two different threads meet (False);
SAT: they meet (True), with a witness (`Witness`: the two threads and loop points); a solver
timeout or an index that does not translate (memory contents, an unknown call): None,
undecided.  A guard that does not translate (a condition on data) is left free, as
`model.presburger` leaves it: the pair meets whenever the condition holds for its threads.

Per-thread values are the thread index and the loop variables; the block index is one symbol
shared by both threads (they are in one block).  Kernel parameters and other names that the
recipe does not fix are not guessed: they leave the pair undecided.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..cuda import ast as A
from .evaluate import builtin_name, frozen_values, shape_of, thread_index_call
from .launch import INT_RANGE


class LaneRecipe(Protocol):
    """What this module needs of `model.threads.LaneRecipe` (named here, so that `threads`, which
    asks this module, is not imported by it)."""

    @property
    def index(self) -> A.Expr: ...
    @property
    def elem(self) -> int: ...
    @property
    def width(self) -> int: ...
    @property
    def points(self) -> tuple[tuple[str, int], ...]: ...
    @property
    def ranges(self) -> tuple[tuple[str, tuple[int, int]], ...]: ...
    @property
    def threads(self) -> int: ...
    @property
    def guards(self) -> tuple[tuple[A.Expr, bool], ...]: ...
    @property
    def uniform(self) -> frozenset[str]: ...
    @property
    def launch(self) -> Any: ...

BITS = 64
TIMEOUT_MS = 2000              # per query; a timeout is "undecided", never a verdict
MAX_BLOCK = 1024
_UNIFORM = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "blockDim.x", "blockDim.y", "blockDim.z",
            "gridDim.x", "gridDim.y", "gridDim.z")
_LOCK = threading.Lock()       # z3's global context is not thread-safe (the editor's server has threads)


def on_data(cond: A.Expr) -> bool:
    """Whether a condition reads memory or calls something (`0 < A[tx]`, `f(x) > 0`): the guards
    the sets may leave free (the pair meets whenever the data let both threads through).  A guard
    of arithmetic only is exact or undecided, never free."""
    return any(isinstance(n, A.Index) or (isinstance(n, A.Call) and thread_index_call(n) is None
                                           and n.name not in ("min", "max"))
               for n in cond.walk())


class Untranslatable(Exception):
    """An expression with no bit-vector meaning here (a memory read, an unknown call, a float)."""


class _Concrete(Exception):
    """A term that needs the outer loops' values as constants (a local array's slot)."""


@functools.cache
def _z3() -> Any:
    import z3

    return z3


def available() -> bool:
    """Whether z3 is importable (a core dependency; a broken install degrades to "undecided")."""
    try:
        _z3()
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Witness:
    """Two different threads and their loop points at which the accesses share a byte."""

    threads: tuple[int, int]
    points: tuple[dict[str, int], dict[str, int]]
    offset: int                # the first common byte, from the start of `a`'s buffer
    outside: str | None = None  # met only in a block the launch does not start (`model.launch`):
                                # the arguments and block index where, in words; the verdict is False


class _Side:
    """One access's terms: its thread, its loop variables (fresh per side) and its constants."""

    def __init__(self, recipe: LaneRecipe, tag: str, opaque: Mapping[object, int],
                 symbolic_points: bool = False, ints: bool = False, shared: frozenset[str] = frozenset()) -> None:
        self.recipe = recipe
        self.tag = tag
        self.opaque = opaque
        self.ints = ints          # integers (no overflow: C's signed arithmetic), not bit-vectors
        self.t = self.var(f"t{tag}")
        # a loop in `shared` is at one iteration on both sides (one variable for both)
        self.loops = {name: self.var(f"{name}#{'=' if name in shared else tag}") for name, _ in recipe.ranges}
        self.fixed = dict(recipe.points)
        # the outer loops' values as symbols, fixed per question (`_side`): one translation serves
        # every iteration of a statement; a local array's slot (`x[3]`) stays a constant
        self.points = {name: self.var(f"{name}@{tag}") for name in self.fixed
                       if symbolic_points and name.isidentifier()} if symbolic_points else {}
        self.params: dict[str, Any] = {}    # launch values and kernel arguments the terms read

    def var(self, name: str) -> Any:
        z3 = _z3()
        return z3.Int(name) if self.ints else z3.BitVec(name, BITS)

    def const(self, value: int) -> Any:
        z3 = _z3()
        return z3.IntVal(value) if self.ints else z3.BitVecVal(value, BITS)

    def param(self, name: str) -> Any:
        """A launch value (`blockIdx.x`: 0 and up) or a kernel argument (`k_T`: an `int`), in
        its range as isl has it (`model.presburger`): a 64-bit vector unconstrained would let a
        block index be negative, and `bx < 2 ? bx : bx - 2` reach below zero."""
        found = self.params.get(name)
        if found is None:
            found = self.params[name] = self.var(name)
        return found

    def constraints(self) -> list[Any]:
        z3 = _z3()
        out = [_member(self.t, self.recipe.threads, self.ints)]
        for name, v in self.params.items():
            lo, hi = INT_RANGE if name.startswith("k_") else (0, INT_RANGE[1])
            out.append(z3.And(v >= lo, v <= hi))
        for name, (lo, hi) in self.recipe.ranges:
            v = self.loops[name]
            out.append(z3.And(v >= lo, v <= hi))
        return out

    def term(self, expr: A.Expr) -> Any:
        return _Translator(self).term(expr)


class _Translator:
    def __init__(self, side: _Side) -> None:
        self.side = side

    def term(self, expr: A.Expr) -> Any:
        side = self.side
        if side.opaque and not isinstance(expr, (A.Number, A.Name)):
            fixed = side.opaque.get(shape_of(expr))
            if fixed is not None:
                return side.const(fixed)
        name = builtin_name(expr) if isinstance(expr, (A.Cast, A.Member)) else (
            expr.ident if isinstance(expr, A.Name) and not expr.scope else None)
        if name is not None:
            return self.name(name)
        handler = _TERMS.get(type(expr))
        if handler is None:
            raise Untranslatable(type(expr).__name__)
        return handler(self, expr)

    def number(self, expr: A.Number) -> Any:
        number = expr.value
        if isinstance(number, float):
            if not number.is_integer():
                raise Untranslatable("float")
            number = int(number)
        return self.side.const(number)

    def cast(self, expr: A.Cast) -> Any:
        return self.term(expr.operand)

    def binary_node(self, expr: A.Binary) -> Any:
        a, b = self.term(expr.left), self.term(expr.right)
        if self.side.ints:
            return _int_binary(expr.op, a, b)
        return self.binary(expr.op, a, b)

    def unary(self, expr: A.Unary) -> Any:
        if expr.postfix or expr.op not in ("-", "+", "~", "!"):
            raise Untranslatable("Unary")
        inner = self.term(expr.operand)
        if expr.op == "!":
            return _z3().If(inner == 0, self.side.const(1), self.side.const(0))
        if expr.op == "~":
            return -inner - 1 if self.side.ints else ~inner     # two's complement: ~a == -a - 1
        return -inner if expr.op == "-" else inner

    def ternary(self, expr: A.Ternary) -> Any:
        return _z3().If(self.term(expr.cond) != 0, self.term(expr.then), self.term(expr.other))

    def index(self, expr: A.Index) -> Any:
        """A local array's slot whose value the point fixes (`x[3]`); memory is not a term."""
        z3 = _z3()
        if isinstance(expr.base, A.Name) and not expr.base.scope:
            index = _constant(z3.simplify(self.term(expr.index)))
            if index is None and self.side.points:
                raise _Concrete()              # a slot chosen by an outer loop: translate per iteration
            key = f"{expr.base.ident}[{index}]" if index is not None else None
            if key in self.side.fixed:
                return self.side.const(self.side.fixed[key])
        raise Untranslatable("Index")

    def name(self, name: str) -> Any:
        side = self.side
        if name == "threadIdx.x":
            return side.t
        if name in side.loops:
            return side.loops[name]
        if name in side.points:
            return side.points[name]
        if name in side.fixed:
            return side.const(side.fixed[name])
        if name in _UNIFORM:
            return side.param(name)                # one symbol for both threads: one block
        if name in side.recipe.uniform:
            return side.param(f"k_{name}")         # a kernel argument: one value everywhere
        raise Untranslatable(name)

    def call(self, expr: A.Call) -> Any:
        z3 = _z3()
        found = thread_index_call(expr)
        if found is None:
            if expr.name in ("max", "min") and len(expr.args) == 2:
                a, b = self.term(expr.args[0]), self.term(expr.args[1])
                return z3.If(a >= b, a, b) if expr.name == "max" else z3.If(a <= b, a, b)
            raise Untranslatable(expr.name)
        formula, args, defaults = found
        values = []
        for i, d in enumerate(defaults):
            if i < len(args):
                n = _constant(z3.simplify(self.term(args[i])))
                if n is None:
                    raise Untranslatable("a thread-index argument that is not a constant")
                values.append(n if n > 0 else d)
            else:
                values.append(d)
        t = self.side.t
        a0 = values[0] if values else 0
        a1 = values[1] if len(values) > 1 else 0
        rem = (lambda a, b: a % b) if self.side.ints else z3.SRem      # t >= 0: one meaning
        table = {"t": lambda: t, "t % a0": lambda: rem(t, a0), "t // a0": lambda: t / a0,
                 "t // (a0 * a1)": lambda: t / (a0 * a1), "t // 32": lambda: t / 32, "t % 32": lambda: rem(t, 32),
                 "t // 128": lambda: t / 128}
        if formula not in table:
            raise Untranslatable(formula)
        return table[formula]()

    @staticmethod
    def binary(op: str, a: Any, b: Any) -> Any:
        z3 = _z3()
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b                      # bvsdiv: truncates toward zero, as C
        if op == "%":
            return z3.SRem(a, b)              # the sign of the dividend, as C
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if op == "<<":
            return a << b
        if op == ">>":
            return a >> b                     # arithmetic, as `model.evaluate` (Python ints)
        cmp = {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, ">": lambda: a > b,
               "<=": lambda: a <= b, ">=": lambda: a >= b,
               "&&": lambda: z3.And(a != 0, b != 0), "||": lambda: z3.Or(a != 0, b != 0)}
        if op in cmp:
            return z3.If(cmp[op](), _one(), _zero())
        raise Untranslatable(op)


def _int_binary(op: str, a: Any, b: Any) -> Any:
    """C's integer operators on unbounded integers (signed overflow is undefined behaviour, so a
    kernel's index arithmetic never wraps): truncating `/` and `%`, shifts by constants as
    products and floor divisions, `&` by a mask 2^k - 1 as the residue modulo 2^k (exact in two's
    complement).  Other bitwise operations raise `Untranslatable` (the bit-vectors take them)."""
    z3 = _z3()
    if op in ("+", "-", "*"):
        return a + b if op == "+" else (a - b if op == "-" else a * b)
    if op in ("/", "%"):
        q = _trunc_div(a, b)
        return q if op == "/" else a - b * q
    if op in ("<<", ">>", "&"):
        return _int_bits(op, a, b)
    cmp = _INT_COMPARISONS.get(op)
    if cmp is None:
        raise Untranslatable(op)
    return z3.If(cmp(a, b), z3.IntVal(1), z3.IntVal(0))


_INT_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
    "&&": lambda a, b: _z3().And(a != 0, b != 0), "||": lambda a, b: _z3().Or(a != 0, b != 0)}


def _int_bits(op: str, a: Any, b: Any) -> Any:
    """Shifts by a constant and `&` by a mask, as integers."""
    z3 = _z3()
    k = _constant(z3.simplify(b))
    if op in ("<<", ">>"):
        if k is None or not 0 <= k < 63:
            raise Untranslatable(f"`{op}` by a variable")
        return a * (1 << k) if op == "<<" else a / (1 << k)      # z3's div floors for a positive divisor
    mask = k if k is not None else _constant(z3.simplify(a))
    other = a if k is not None else b
    if mask is None or mask < 0 or mask & (mask + 1):
        raise Untranslatable("`&` by a value that is not a mask")
    return other % (mask + 1)


def _trunc_div(a: Any, b: Any) -> Any:
    """C's `a / b` (toward zero) from z3's integer division (the remainder is never negative)."""
    z3 = _z3()
    k = _constant(z3.simplify(b))
    if k is not None and k > 0:
        return z3.If(a >= 0, a / k, -((-a) / k))
    return z3.If((a >= 0) == (b > 0), abs_(a) / abs_(b), -(abs_(a) / abs_(b)))


def abs_(a: Any) -> Any:
    return _z3().If(a >= 0, a, -a)


def _constant(term: Any) -> int | None:
    """The value of a simplified term that is a constant (either sort), else None."""
    z3 = _z3()
    if z3.is_bv_value(term):
        return int(term.as_signed_long())
    if z3.is_int_value(term):
        return int(term.as_long())
    return None


_TERMS: dict[type, Callable[[_Translator, Any], Any]] = {
    A.Number: _Translator.number, A.Cast: _Translator.cast, A.Call: _Translator.call,
    A.Binary: _Translator.binary_node, A.Unary: _Translator.unary, A.Ternary: _Translator.ternary,
    A.Index: _Translator.index}


def _one() -> Any:
    return _z3().BitVecVal(1, BITS)


def _zero() -> Any:
    return _z3().BitVecVal(0, BITS)


def runs(threads: int) -> list[tuple[int, int]]:
    """A thread set (bitmask) as its maximal runs [lo, hi)."""
    out: list[tuple[int, int]] = []
    t = 0
    while threads >> t:
        rest = threads >> t
        if not rest & 1:
            t += (rest & -rest).bit_length() - 1          # skip the trailing zeros
            continue
        ones = (rest ^ (rest + 1)).bit_length() - 1       # the trailing ones
        out.append((t, t + ones))
        t += ones
    return out


def _member(t: Any, threads: int, ints: bool = False) -> Any:
    """`t` is one of the threads of a set: a union of runs, or a residue pattern when the set is
    periodic (`threadIdx.x % 4 == 0` is one constraint, not 256 runs)."""
    z3 = _z3()
    spans = runs(threads)
    if not spans:
        return z3.BoolVal(False)
    lo, hi = spans[0][0], spans[-1][1]
    bounded = z3.And(t >= lo, t < hi)
    if len(spans) <= 16:
        return z3.Or(*[z3.And(t >= a, t < b) for a, b in spans])
    for period in (2, 4, 8, 16, 32, 64, 128, 256, 512):
        if (hi - lo) % period:
            continue
        pattern = (threads >> lo) & ((1 << period) - 1)
        if all(((threads >> (lo + k)) & ((1 << period) - 1)) == pattern for k in range(0, hi - lo, period)):
            residues = [r for r in range(period) if (pattern >> r) & 1]
            rel = (t - lo) % period if ints else z3.URem(t - lo, period)
            return z3.And(bounded, z3.Or(*[rel == r for r in residues]))
    return z3.Or(*[z3.And(t >= a, t < b) for a, b in spans])


def _guards(side: _Side) -> tuple[list[Any], bool]:
    """The guards as constraints, and whether one had to be dropped (it did not translate)."""
    out, dropped = [], False
    for cond, polarity in side.recipe.guards:
        try:
            term = side.term(cond)
        except Untranslatable:
            if not on_data(cond):
                raise              # a guard of arithmetic left free would make a false meeting
            dropped = True
            continue
        out.append(term != 0 if polarity else term == 0)
    return out, dropped


def cross_thread(a: LaneRecipe, b: LaneRecipe, shift: int = 0, opaque: Mapping[object, int] | None = None,
                 values: tuple[A.Expr | None, A.Expr | None] | None = None,
                 warp_mask: int | None = None, any_threads: bool = False,
                 shared: frozenset[str] = frozenset()) -> tuple[bool | None, Witness | None]:
    """Whether a byte of `a` belongs to one thread and of `b` to a different one (see the module
    docstring), with a witness when it does; `any_threads`: or to the same one (an asynchronous
    copy still in flight races with its own thread's later store).  `values`: the stored values of two writes; then
    only collisions whose values differ count (two threads storing the same value do not race).
    `warp_mask`: a `__syncwarp(mask)` both passed in between orders the pairs of one warp whose
    lanes are both in the mask; they do not count.  `shared`: loops both accesses are in, asked
    at one iteration for both (`model.threads.tile_assumption`).
    """
    if not available():
        return None, None
    with _LOCK:
        try:
            return _decide(a, b, shift, opaque or {}, values, warp_mask, any_threads, shared)
        except (Untranslatable, _Concrete):     # a value at a slot no constant names: undecided
            return None, None
        except _z3().Z3Exception:
            return None, None


_SIDES: dict[tuple, tuple[_Side, Any, list[Any]] | Untranslatable] = {}
_KEEP: list[object] = []          # keeps the nodes behind cached ids alive


def _side(recipe: LaneRecipe, tag: str, opaque: Mapping[object, int],
          ints: bool = False, shared: frozenset[str] = frozenset()) -> tuple[_Side, Any, list[Any]]:
    """One access's terms: its side, the first byte it touches and its constraints (threads,
    walked ranges, guards, the outer loops' values), translated once per statement and side (a
    statement meets many others, at every iteration: the values are constraints, not terms)."""
    base = (id(recipe.index), recipe.elem, recipe.width, recipe.ranges, recipe.threads,
            tuple((id(g), p) for g, p in recipe.guards), tag, frozen_values(opaque), ints, shared)
    slots = tuple(p for p in recipe.points if not p[0].isidentifier())
    found = _SIDES.get((base, slots)) or _SIDES.get((base, recipe.points))
    if found is None:
        try:
            try:
                found = _translate(recipe, tag, opaque, True, ints, shared)
                key = (base, slots)
            except _Concrete:
                found = _translate(recipe, tag, opaque, False, ints, shared)
                key = (base, recipe.points)
        except Untranslatable as exc:
            found, key = exc, (base, slots)
        if len(_SIDES) > 8192:
            _SIDES.clear()
            _KEEP.clear()
        _SIDES[key] = found
        _KEEP.append((recipe.index, recipe.guards))
    if isinstance(found, Untranslatable):
        raise found
    side, start, fixed = found
    if side.points:
        values = dict(recipe.points)
        fixed = fixed + [v == values[name] for name, v in side.points.items()]
    return side, start, fixed


def _translate(recipe: LaneRecipe, tag: str, opaque: Mapping[object, int],
               symbolic_points: bool, ints: bool = False,
               shared: frozenset[str] = frozenset()) -> tuple[_Side, Any, list[Any]]:
    side = _Side(recipe, tag, opaque, symbolic_points, ints, shared)
    start = side.term(recipe.index) * recipe.elem
    guards, _ = _guards(side)          # a guard that does not translate is left free
    fixed = [*side.constraints(), *guards, side.t >= 0, side.t < MAX_BLOCK]
    fixed += [c for v in side.loops.values() for c in (v > -(1 << 40), v < (1 << 40))]
    return side, start, fixed


def _nonlinear(recipes: tuple[LaneRecipe, ...], values: tuple[A.Expr | None, A.Expr | None] | None) -> bool:
    """Whether an index, guard or value multiplies (or divides by) two values that are not
    constants (`tx * d` with a kernel argument `d`).  Bit-blasting such a product of two 64-bit
    vectors takes z3 seconds; as integers (nonlinear arithmetic) it takes milliseconds, and C's
    signed arithmetic has no overflow to model."""
    exprs = [e for r in recipes for e in (r.index, *(g for g, _ in r.guards))]
    exprs += [v for v in values or () if v is not None]
    for expr in exprs:
        for node in expr.walk():
            if isinstance(node, A.Binary) and node.op in ("*", "/", "%") and not literal(node.right) and (
                    node.op != "*" or not literal(node.left)):
                return True
    return False


def literal(expr: A.Expr) -> bool:
    """A number, through casts and parentheses."""
    while isinstance(expr, A.Cast):
        expr = expr.operand
    return isinstance(expr, A.Number)


def _decide(a: LaneRecipe, b: LaneRecipe, shift: int, opaque: Mapping[object, int],
            values: tuple[A.Expr | None, A.Expr | None] | None,
            warp_mask: int | None = None, any_threads: bool = False,
            shared: frozenset[str] = frozenset()) -> tuple[bool | None, Witness | None]:
    if _nonlinear((a, b), values):
        try:
            return _decide_in(a, b, shift, opaque, values, warp_mask, any_threads, True, shared)
        except Untranslatable:           # a bitwise operation besides: the bit-vectors take it
            pass
    return _decide_in(a, b, shift, opaque, values, warp_mask, any_threads, False, shared)


def _decide_in(a: LaneRecipe, b: LaneRecipe, shift: int, opaque: Mapping[object, int],
               values: tuple[A.Expr | None, A.Expr | None] | None,
               warp_mask: int | None, any_threads: bool, ints: bool,
               shared: frozenset[str] = frozenset()) -> tuple[bool | None, Witness | None]:
    z3 = _z3()
    sa, start_a, fixed_a = _side(a, "a", opaque, ints, shared)
    sb, start_b, fixed_b = _side(b, "b", opaque, ints, shared)
    start_b = start_b + shift
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    if not any_threads:
        solver.add(sa.t != sb.t)
    solver.add(*fixed_a, *fixed_b, start_a < start_b + b.width, start_b < start_a + a.width)
    if warp_mask is not None:
        solver.add(z3.Not(_warp_ordered(sa.t, sb.t, warp_mask, ints)))
    if values is not None:
        va, vb = values
        if va is None or vb is None:
            raise Untranslatable("a stored value")
        solver.add(sa.term(va) != sb.term(vb))
    verdict = solver.check()
    if verdict == z3.unsat:
        return False, None
    if verdict != z3.sat:
        return None, None
    m = solver.model()

    def val(x: Any) -> int:
        found = _constant(m.eval(x, model_completion=True))
        assert found is not None
        return found

    witness = Witness((val(sa.t), val(sb.t)),
                      ({n: val(v) for n, v in sa.loops.items()}, {n: val(v) for n, v in sb.loops.items()}),
                      max(val(start_a), val(start_b)))
    return True, witness


def _warp_ordered(t: Any, u: Any, mask: int, ints: bool) -> Any:
    """Threads `t` and `u` are lanes of one warp that are both in a `__syncwarp(mask)`'s mask."""
    z3 = _z3()
    if ints:
        lanes = [lane for lane in range(32) if (mask >> lane) & 1]
        return z3.And(t / 32 == u / 32, z3.Or(*[t % 32 == lane for lane in lanes]),
                      z3.Or(*[u % 32 == lane for lane in lanes]))
    bits = z3.BitVecVal(mask, BITS)
    return z3.And(t / 32 == u / 32, z3.LShR(bits, z3.URem(t, 32)) & 1 == 1, z3.LShR(bits, z3.URem(u, 32)) & 1 == 1)


class _FreeSide(_Side):
    """The terms of a condition whose unknown parts are free: each memory load, unknown call and
    name with no value here is one symbol (by its text), an `int` of any value."""

    def __init__(self, env: Mapping[str, int], opaque: Mapping[object, int]) -> None:
        z3 = _z3()
        self.recipe = None  # type: ignore[assignment]
        self.tag = "c"
        self.opaque = opaque
        self.ints = False
        self.t = z3.BitVec("t#c", BITS)
        self.loops = {}
        self.fixed = {k: v for k, v in env.items() if isinstance(v, int)}
        self.points = {}
        self.params = {}
        self.free: dict[object, Any] = {}

    def leaf(self, expr: A.Expr) -> Any:
        key = shape_of(expr)
        found = self.free.get(key)
        if found is None:
            found = self.free[key] = _z3().BitVec(f"free{len(self.free)}", BITS)
        return found

    def term(self, expr: A.Expr) -> Any:
        return _FreeTranslator(self).term(expr)


class _FreeTranslator(_Translator):
    side: _FreeSide

    def term(self, expr: A.Expr) -> Any:
        try:
            return super().term(expr)
        except (Untranslatable, _Concrete):
            if isinstance(expr, (A.Index, A.Call, A.Name, A.Member, A.Cast)):
                return self.side.leaf(expr)
            raise

    def name(self, name: str) -> Any:
        side = self.side
        if name in side.fixed:
            return _z3().BitVecVal(side.fixed[name], BITS)
        raise Untranslatable(name)


_TRUTH_TIMEOUT_MS = 500
_truths: dict[tuple, bool | None] = {}


def constant_truth(cond: A.Expr, env: Mapping[str, int], opaque: Mapping[object, int] | None = None) -> bool | None:
    """The value a condition on data has whatever the data: False when no value of its unknown
    parts (memory loads, unknown calls, names with no value in `env`, each an `int`) makes it
    true, True when none makes it false, None when the data decide (or the solver cannot say).

    TileLang's epilogue for a run-time range guards its copies with `lo <= hi + k - lo && hi + k
    - lo < hi`, `lo` and `hi` loaded from memory and `k` walked from `lo`: the second conjunct is
    `k - lo < 0`, never true.  Walked as "maybe taken", those dead copies gave false
    version-overwrite errors (held-out round 7 of issue 31, cause 9).  Memoised by the
    condition's text and the values of `env` it reads."""
    if not available():
        return None
    names = _names_read(cond)
    key = (shape_of(cond), frozen_values(opaque),
           tuple(sorted((k, v) for k, v in env.items() if k in names and isinstance(v, int))))
    if key in _truths:
        return _truths[key]
    z3 = _z3()
    side = _FreeSide(env, opaque or {})
    try:
        with _LOCK:
            term = side.term(cond)
            found: bool | None = None
            if not _both_values(term, list(side.free.values())):
                found = _truth_by_solver(term, side)
    except (Untranslatable, _Concrete, z3.Z3Exception):
        found = None
    if len(_truths) > 4096:
        _truths.clear()
    _truths[key] = found
    return found


def _names_read(cond: A.Expr) -> frozenset[str]:
    """The names (and `threadIdx.x`-style members) a condition reads: what of `env` its value
    can depend on, so that the memo is not keyed by every loop variable of the walk."""
    found = set()
    for node in cond.walk():
        if isinstance(node, A.Name):
            found.add(node.qualified)
        elif isinstance(node, A.Member) and isinstance(node.base, A.Name):
            found.add(f"{node.base.ident}.{node.member}")
    return frozenset(found)


_PROBES = (0, 1, -1, 2, 7, 1 << 20, -(1 << 20))


def _both_values(term: Any, free: list[Any]) -> bool:
    """Whether some values of the free parts make the condition true and others false, found by
    evaluating it at a few assignments (each a witness, so the answer is exact when it is yes):
    a condition on data usually is one, and two solver calls cost a hundred times more."""
    z3 = _z3()
    seen = set()
    for i in range(len(_PROBES)):
        pairs = [(v, z3.BitVecVal(_PROBES[(i + j) % len(_PROBES)], BITS)) for j, v in enumerate(free)]
        value = z3.simplify(z3.substitute(term, *pairs) if pairs else term)
        if not z3.is_bv_value(value):
            return False
        seen.add(value.as_long() != 0)
        if len(seen) == 2:
            return True
    return False


def _truth_by_solver(term: Any, side: _FreeSide) -> bool | None:
    """False (True) when no value of the free parts makes the condition true (false)."""
    z3 = _z3()
    ranges = [z3.And(v >= INT_RANGE[0], v <= INT_RANGE[1]) for v in side.free.values()]
    for value, holds in ((False, term != 0), (True, term == 0)):
        solver = z3.Solver()
        solver.set("timeout", _TRUTH_TIMEOUT_MS)
        solver.add(*ranges, holds)
        if solver.check() == z3.unsat:
            return value
    return None
