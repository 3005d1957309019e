"""Integer evaluation of index, parity and trip-count expressions.

Generated kernels spell the same stage slot many ways (`(k % 3)`,
`((k + 2) % 3)`, `(k & 3)`, `((k % 6) / 3)`, `(((k & 3) >> 1) ^ 1)`, floor-mod
expansions); rather than matching spellings, pipelint evaluates them with C
semantics for concrete loop variables.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ..cuda import ast as A

Env = Mapping[str, int]


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: _c_div(a, b) if b else None,
    "%": lambda a, b: _c_mod(a, b) if b else None,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None,
    ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
    "&&": lambda a, b: int(bool(a) and bool(b)),
    "||": lambda a, b: int(bool(a) or bool(b)),
}


# Thread-index functions of TileLang's templates (tl_templates/cuda/intrin.h, cutlass, cute),
# as arithmetic on `threadIdx.x` (blocks are one-dimensional in TileLang's CUDA).  Each takes
# its optional arguments with the header's defaults: warp size 32, 4 warps per group, and a
# non-positive argument replaced by the default exactly as the header does.
WARP = 32
THREAD_INDEX_CALLS: dict[str, tuple[str, tuple[int, ...]]] = {
    "tl::detail::linear_thread_idx_in_block": ("t", ()),
    "tl::get_lane_idx": ("t % a0", (WARP,)),
    "tl::get_warp_idx_sync": ("t // a0", (WARP,)),
    "tl::get_warp_idx": ("t // a0", (WARP,)),
    "tl::get_warp_group_idx": ("t // (a0 * a1)", (WARP, 4)),
    "cutlass::canonical_warp_idx": ("t // 32", ()),
    "cutlass::canonical_warp_idx_sync": ("t // 32", ()),
    "cutlass::canonical_lane_idx": ("t % 32", ()),
    "cutlass::canonical_warp_group_idx": ("t // 128", ()),
}


def thread_index_call(expr: A.Expr) -> tuple[str, tuple[A.Expr, ...], tuple[int, ...]] | None:
    """(formula, arguments, defaults) when `expr` calls a thread-index function of the templates."""
    if isinstance(expr, A.Call):
        found = THREAD_INDEX_CALLS.get(expr.name)
        if found is not None and len(expr.args) <= len(found[1]):
            return found[0], expr.args, found[1]
    return None


_FORMULAS: dict[str, object] = {}


def thread_index_value(formula: str, tid: int, args: list[int]) -> int:
    """The value of a thread-index function for thread `tid` (arguments already defaulted)."""
    fn = _FORMULAS.get(formula)
    if fn is None:
        fn = _FORMULAS[formula] = eval(f"lambda t, a0, a1: {formula}", {})  # noqa: S307 - table above
    return fn(tid, args[0] if args else 0, args[1] if len(args) > 1 else 0)  # type: ignore[operator]


def _thread_call_py(expr: A.Expr, default: int | None, opaque: dict | None) -> str | None:
    found = thread_index_call(expr)
    if found is None:
        return None
    formula, args, defaults = found
    t = "env['threadIdx.x']" if default is None else f"env.get('threadIdx.x', {default})"
    values = []
    for i, d in enumerate(defaults):
        given = _py(args[i], default, opaque) if i < len(args) else repr(d)
        values.append(f"_arg({given}, {d})")
    return "_tidx({!r}, {}, [{}])".format(formula, t, ", ".join(values))


def builtin_name(expr: A.Expr) -> str | None:
    """`threadIdx.x` -> "threadIdx.x" (also through `(int)` casts)."""
    while isinstance(expr, A.Cast):
        expr = expr.operand
    if isinstance(expr, A.Member) and isinstance(expr.base, A.Name) and not expr.arrow \
            and expr.base.ident in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
        return f"{expr.base.ident}.{expr.member}"
    return None


def evaluate(expr: A.Expr | None, env: Env, default: int | None = None) -> int | None:
    """Value of `expr` under `env` with C semantics; unknown names take `default` (None: unknown).

    The same translation to Python (`_py`) as `CompiledEvaluator` — one definition of C
    arithmetic — compiled once per distinct source text.
    """
    if expr is None:
        return None
    try:
        source = _py(expr, default)
    except (ValueError, RecursionError):
        return default if default is not None and not _has_call(expr) else None
    try:
        return _compile(source)(env)
    except (KeyError, ZeroDivisionError, TypeError, ValueError, OverflowError):
        return None


@functools.lru_cache(maxsize=8192)
def _compile(source: str):
    return eval(f"lambda env: {source}", dict(_GLOBALS))  # noqa: S307 - generated from the AST


def _has_call(expr: A.Node) -> bool:
    return any(isinstance(n, A.Call) and thread_index_call(n) is None for n in expr.walk())


def mentions(expr: A.Node, names: set[str] | frozenset[str]) -> bool:
    """Whether `expr` reads any of `names` (loop variables, `threadIdx.x`)."""
    for node in expr.walk():
        if isinstance(node, A.Name) and not node.scope and node.ident in names:
            return True
        if isinstance(node, (A.Member, A.Cast)) and builtin_name(node) in names:
            return True
        if "threadIdx.x" in names and isinstance(node, A.Call) and thread_index_call(node) is not None:
            return True
    return False


# ---------------------------------------------------------------- compiled evaluation
# The trace builder evaluates the same index expressions for every unrolled
# iteration; turning each expression into a Python lambda once makes that
# ~10x cheaper than walking the tree each time.  Same C semantics as above.

_PY_OPS = {"+", "-", "*", "&", "|", "^"}
_CMP = {"==", "!=", "<", ">", "<=", ">="}


def shape(node: object) -> object:
    """A hashable key of an expression's structure, ignoring positions.

    Two spellings of the same run-time value at different places of a kernel
    (`max(0, blockIdx.x - 2)` as a loop start and again in a parity) share a shape.
    """
    if isinstance(node, A.Node):
        return (type(node).__name__,) + tuple(
            shape(getattr(node, f)) for f in node.__dataclass_fields__ if f != "span")  # type: ignore[attr-defined,misc]
    if isinstance(node, tuple):
        return tuple(shape(n) for n in node)
    return node


_SHAPES: dict[int, tuple[object, object]] = {}      # id -> (node, shape): the node kept alive
_FROZEN: dict[int, tuple[object, tuple]] = {}


def shape_of(node: A.Node) -> object:
    """`shape(node)`, memoised by node (the solvers look up every subterm of an index among a
    scenario's fixed run-time values; recomputing each subterm's shape made that quadratic)."""
    hit = _SHAPES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    if len(_SHAPES) > 200_000:
        _SHAPES.clear()
    found = shape(node)
    _SHAPES[id(node)] = (node, found)
    return found


def frozen_values(opaque: Mapping[object, int] | None) -> tuple:
    """A scenario's fixed run-time values as a hashable key, computed once per mapping."""
    if not opaque:
        return ()
    hit = _FROZEN.get(id(opaque))
    if hit is not None and hit[0] is opaque and len(hit[1]) == len(opaque):
        return hit[1]
    if len(_FROZEN) > 4096:
        _FROZEN.clear()
    found = tuple(sorted(opaque.items(), key=repr))
    _FROZEN[id(opaque)] = (opaque, found)
    return found


def _py(expr: A.Expr, default: int | None, opaque: dict | None = None) -> str:
    if opaque and not isinstance(expr, (A.Number, A.Name)):
        value = opaque.get(shape(expr))
        if value is not None:
            return repr(value)
    return _py_node(expr, default, opaque)


def _py_node(expr: A.Expr, default: int | None, opaque: dict | None) -> str:
    if isinstance(expr, A.Number):
        return _py_number(expr.value)
    if isinstance(expr, A.Name):
        if expr.scope:
            raise ValueError("scoped")
        return _py_env(repr(expr.ident), default)
    name = builtin_name(expr) if isinstance(expr, (A.Cast, A.Member)) else None
    if name is not None:
        return _py_env(repr(name), default)
    if isinstance(expr, A.Cast):
        return _py(expr.operand, default, opaque)
    found = _call_py(expr, default, opaque) if isinstance(expr, A.Call) else None
    if found is not None:
        return found
    if isinstance(expr, A.Binary):
        return _py_binary(expr, default, opaque)
    if isinstance(expr, A.Unary):
        return _py_unary(expr, default, opaque)
    if isinstance(expr, A.Ternary):
        then, cond = _py(expr.then, default, opaque), _py(expr.cond, default, opaque)
        return f"({then} if {cond} else {_py(expr.other, default, opaque)})"
    if isinstance(expr, A.Index):
        return _py_index(expr, default, opaque)
    raise ValueError(type(expr).__name__)


def _call_py(expr: A.Call, default: int | None, opaque: dict | None) -> str | None:
    """A call the evaluator knows: a thread-index helper, or CUDA's integer max/min (TileLang's
    T.max/T.min of indices: `max(0, bx - 2)`); None for any other."""
    found = _thread_call_py(expr, default, opaque)
    if found is None and expr.name in ("max", "min") and len(expr.args) == 2:
        found = f"{expr.name}({_py(expr.args[0], default, opaque)}, {_py(expr.args[1], default, opaque)})"
    return found


def _py_number(value: int | float) -> str:
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("float")
        value = int(value)
    return repr(value)


def _py_env(key: str, default: int | None) -> str:
    """The source that reads `key` (Python source of a string) from `env`."""
    return f"env[{key}]" if default is None else f"env.get({key}, {default})"


# the source of each binary operator, its operands in `{}`
_PY_BINARY = {**{op: f"({{}} {op} {{}})" for op in _PY_OPS},
              "<<": "_shl({}, {})", ">>": "_shr({}, {})", "/": "_div({}, {})", "%": "_mod({}, {})",
              **{op: f"int({{}} {op} {{}})" for op in _CMP},
              "&&": "int(bool({}) and bool({}))", "||": "int(bool({}) or bool({}))"}


def _py_binary(expr: A.Binary, default: int | None, opaque: dict | None) -> str:
    a, b = _py(expr.left, default, opaque), _py(expr.right, default, opaque)
    form = _PY_BINARY.get(expr.op)
    if form is None:
        raise ValueError(type(expr).__name__)
    return form.format(a, b)


def _py_unary(expr: A.Unary, default: int | None, opaque: dict | None) -> str:
    if expr.postfix or expr.op not in ("-", "+", "~", "!"):
        raise ValueError(type(expr).__name__)
    inner = _py(expr.operand, default, opaque)
    return f"int(not {inner})" if expr.op == "!" else f"({expr.op}{inner})"


def _py_index(expr: A.Index, default: int | None, opaque: dict | None) -> str:
    if not isinstance(expr.base, A.Name) or expr.base.scope:
        raise ValueError(type(expr).__name__)
    return _py_env(f"{expr.base.ident!r} + '[' + str({_py(expr.index, default, opaque)}) + ']'", default)


def _shift(a: int, b: int, left: bool) -> int:
    if not 0 <= b < 64:         # C: undefined; here: unknown, and never a huge Python int
        raise ValueError("shift")
    return a << b if left else a >> b


_GLOBALS = {"_div": _c_div, "_mod": _c_mod, "_shl": lambda a, b: _shift(a, b, True),
            "_shr": lambda a, b: _shift(a, b, False), "_tidx": thread_index_value,
            "_arg": lambda given, d: given if given > 0 else d}


_COMPILED: dict[str, object] = {}


def _compiled(source: str) -> object:
    """The lambda of one generated expression, compiled once per process: kernels repeat the
    same index arithmetic (a layout's swizzle, a tile's offsets) in every variant and scenario."""
    fn = _COMPILED.get(source)
    if fn is None:
        if len(_COMPILED) > 65536:
            _COMPILED.clear()
        fn = _COMPILED[source] = eval(f"lambda env: {source}", dict(_GLOBALS))  # noqa: S307 - generated
    return fn


class CompiledEvaluator:
    """Evaluates expressions through lambdas compiled once per node (and default)."""

    def __init__(self, opaque: dict | None = None) -> None:
        # run-time values fixed by the scenario being simulated, by expression shape
        self.opaque = opaque or {}
        self._cache: dict[tuple[int, int | None], object] = {}
        self._keep: list[A.Expr] = []  # keeps ids valid for the cache's lifetime

    def __call__(self, expr: A.Expr | None, env: Env, default: int | None = None) -> int | None:
        if expr is None:
            return None
        key = (id(expr), default)
        fn = self._cache.get(key)
        if fn is None:
            try:
                fn = _compiled(_py(expr, default, self.opaque))
            except (ValueError, SyntaxError, RecursionError):
                fn = False
            self._cache[key] = fn
            self._keep.append(expr)
        if fn is False:
            return evaluate(expr, env, default)
        try:
            return fn(env)  # type: ignore[operator]
        except (KeyError, ZeroDivisionError, TypeError, ValueError):
            return None


# ---------------------------------------------------------------- intervals
# A shared-memory access is executed by every thread of a role and, in loops
# walked once (the unrolled copy of one tile), for every value of their
# variables; its footprint is the interval its index takes over all of them.
Interval = tuple[int, int]


def interval(expr: A.Expr | None, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    """Bounds [lo, hi] of an integer expression when names range over `ranges`.

    Sound for what generated index arithmetic uses (+ - * / % & | ^ << >> on
    non-negative operands); anything else is unknown (None).
    """
    if expr is None:
        return None
    if isinstance(expr, A.Number):
        value = evaluate(expr, {})
        return (value, value) if value is not None else None
    name = builtin_name(expr) if isinstance(expr, (A.Cast, A.Member)) else (
        expr.ident if isinstance(expr, A.Name) and not expr.scope else None)
    if name is not None:
        if name in ranges:
            return ranges[name]
        value = points.get(name)
        return (value, value) if value is not None else None
    case = _INTERVAL_CASES.get(type(expr))
    return case(expr, points, ranges) if case is not None else None


def _cast_interval(expr: A.Cast, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    return interval(expr.operand, points, ranges)


def _unary_interval(expr: A.Unary, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    if expr.postfix or expr.op not in ("-", "+"):
        return None
    inner = interval(expr.operand, points, ranges)
    if inner is None:
        return None
    return inner if expr.op == "+" else (-inner[1], -inner[0])


def _ternary_interval(expr: A.Ternary, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    a, b = interval(expr.then, points, ranges), interval(expr.other, points, ranges)
    return (min(a[0], b[0]), max(a[1], b[1])) if a and b else None


def _binary_interval(expr: A.Binary, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    a = interval(expr.left, points, ranges)
    b = interval(expr.right, points, ranges) if a is not None else None
    return _interval_op(expr.op, a, b) if a is not None and b is not None else None


def _thread_call_interval(expr: A.Call, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    """Bounds of a thread-index function over the threads `threadIdx.x` ranges over (it is
    monotone in the thread index except the lane, whose bounds are those of `t % w`)."""
    found = thread_index_call(expr)
    if found is None:
        return None
    formula, args, defaults = found
    values = []
    for i, d in enumerate(defaults):
        if i < len(args):
            v = interval(args[i], points, ranges)
            if v is None or v[0] != v[1]:
                return None
            values.append(v[0] if v[0] > 0 else d)
        else:
            values.append(d)
    t = ranges.get("threadIdx.x") or ((points["threadIdx.x"],) * 2 if "threadIdx.x" in points else None)
    if t is None or t[0] < 0:
        return None
    if "%" in formula:
        modulus = values[0] if values else WARP      # `t % 32`: the lane of the canonical forms
        if t[1] - t[0] + 1 >= modulus:
            return 0, modulus - 1
        lo, hi = thread_index_value(formula, t[0], values), thread_index_value(formula, t[1], values)
        return (lo, hi) if lo <= hi else (0, modulus - 1)
    return thread_index_value(formula, t[0], values), thread_index_value(formula, t[1], values)


def _call_interval(expr: A.Call, points: Env, ranges: Mapping[str, Interval]) -> Interval | None:
    """`max(a, b)` / `min(a, b)` (monotone in both: the bounds of the bounds), or a thread-index call."""
    if expr.name not in ("max", "min") or len(expr.args) != 2:
        return _thread_call_interval(expr, points, ranges)
    a = interval(expr.args[0], points, ranges)
    b = interval(expr.args[1], points, ranges) if a is not None else None
    if a is None or b is None:
        return None
    pick = max if expr.name == "max" else min
    return pick(a[0], b[0]), pick(a[1], b[1])


def _interval_op(op: str, a: Interval, b: Interval) -> Interval | None:
    if a[0] == a[1] and b[0] == b[1]:                      # both exact: C semantics
        fn = _BINARY.get(op)
        value = fn(a[0], b[0]) if fn else None
        return (value, value) if value is not None else None
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    if op == "*":
        corners = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
        return min(corners), max(corners)
    if a[0] < 0 or b[0] < 0:
        return None
    return _nonnegative_op(op, a, b)


def _nonnegative_op(op: str, a: Interval, b: Interval) -> Interval | None:
    """`_interval_op` of the operators whose bounds need non-negative operands."""
    if op == "/" and b[0] > 0:
        return a[0] // b[1], a[1] // b[0]
    if op == "%" and b[0] > 0:
        return (a[0], a[1]) if a[1] < b[0] else (0, min(a[1], b[1] - 1))
    if op == ">>" and b[0] == b[1] and b[0] < 64:
        return a[0] >> b[0], a[1] >> b[0]
    if op == "<<" and b[1] < 64:
        return a[0] << b[0], a[1] << b[1]
    if op == "&":
        return 0, min(a[1], b[1])
    if op in ("|", "^"):
        return 0, (1 << max(a[1], b[1]).bit_length()) - 1
    return None


# the structural cases of `interval`, by node type (the AST has no subclasses)
_INTERVAL_CASES: dict[type, Callable[[Any, Env, Mapping[str, Interval]], Interval | None]] = {
    A.Cast: _cast_interval, A.Call: _call_interval, A.Unary: _unary_interval,
    A.Ternary: _ternary_interval, A.Binary: _binary_interval}
