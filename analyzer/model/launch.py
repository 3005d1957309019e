"""Kernel arguments as parameters of the sets, and the blocks a launch covers (issue 31, item 5).

An integer argument of the kernel (`int T_seq`) has one value for every thread of every block:
in an index or a guard it is a *parameter* of the access relations (`model.presburger`), not a
value to guess.  A pair of accesses then meets for some assignment of the parameters or for
none, and isl says which, with a sample assignment as the witness.

What the kernel text does not say is the launch: how many blocks run for a given `T_seq`.
TileLang tiles a tensor of `T_seq` rows into `ceildiv(T_seq, 64)` blocks and guards the last,
partial tile's global accesses with `blockIdx.x * 64 + row < T_seq`.  Such a guard (a *range
guard*: the block index, scaled, plus non-negative thread and loop terms, below an argument)
states where the tensor ends, and a launch that covers the tensor starts no block wholly past
it.  So a pair of accesses that meets only in a block where every range guard fails for every
thread and iteration is taken as not launched, and said so in a note (`launch-assumed`), never
silently: a kernel launched with more blocks than its data would race there.  A pair that meets
in a block that has a row in range is a hazard like any other, with the argument's value in its
witness.  Without range guards nothing is assumed.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..cuda import ast as A
from .evaluate import builtin_name
from .period import _INTEGER_TYPE

INT_RANGE = (-(1 << 31), (1 << 31) - 1)      # an `int` argument's values
BLOCK_RANGE = (0, (1 << 31) - 1)             # blockIdx.* and gridDim.*
_BLOCK = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
_LAUNCH = _BLOCK + ("gridDim.x", "gridDim.y", "gridDim.z", "blockDim.x", "blockDim.y", "blockDim.z")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def uniform_args(func: A.FunctionDef) -> frozenset[str]:
    """The kernel's integer scalar arguments that the body never assigns: one value everywhere."""
    names = {p.name for p in func.params
             if p.name and "*" not in p.type and "&" not in p.type and _INTEGER_TYPE.fullmatch(p.type.strip())}
    if not names or func.body is None:
        return frozenset(names)
    for node in func.body.walk():
        target = node.target if isinstance(node, A.Assign) else (
            node.operand if isinstance(node, A.Unary) and node.op in ("++", "--") else None)
        if isinstance(target, A.Name) and not target.scope:
            names.discard(target.ident)
    return frozenset(names)


def launch_ranges(names: set[str] | frozenset[str], uniform: frozenset[str]) -> dict[str, tuple[int, int]]:
    """Bounds of the launch values and arguments among `names` (for byte extents)."""
    out = {n: INT_RANGE for n in names if n in uniform}
    out.update((n, BLOCK_RANGE) for n in names if n in _LAUNCH)
    return out


@dataclass(frozen=True)
class RangeGuard:
    """`lesser < greater` (or `<=`), where the block index is in `lesser` and an argument in
    `greater`, with the threads and once-walked loop ranges of the access it guards."""

    lesser: A.Expr
    greater: A.Expr
    strict: bool
    threads: int
    ranges: tuple[tuple[str, tuple[int, int]], ...]


@dataclass(frozen=True)
class Outside:
    """A pair of accesses that meets only in a block no range guard admits."""

    first: A.Expr         # the two accesses' indices, in line order
    second: A.Expr
    condition: str        # where it meets: the arguments and the block index (isl's words, C's names)


@dataclass(eq=False)
class Launch:
    """One kernel's range guards, and the pairs decided by them (read by the races plugin).

    Shared by every access recipe of one trace (compared by identity); the set of covered blocks
    is built at the first question that needs it (`model.presburger.covered`)."""

    uniform: frozenset[str]
    outside: dict[tuple[int, int], Outside] = field(default_factory=dict)
    _seen: dict[tuple, RangeGuard] = field(default_factory=dict)
    _covered: Any = None
    _built: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, guards: list[tuple[A.Expr, bool]] | tuple[tuple[A.Expr, bool], ...], threads: int,
            ranges: dict[str, tuple[int, int]]) -> None:
        """Record the range guards among the conditions around a global access, by the threads
        that reach it (one guard walked by several roles is one guard of all their threads)."""
        for cond, polarity in guards:
            for lesser, greater, strict in _atoms(cond, polarity):
                if _mentions_any(lesser, _BLOCK) and not _mentions_any(lesser, self.uniform) \
                        and _mentions_any(greater, self.uniform) and not _mentions_any(greater, _BLOCK):
                    key = (id(lesser), id(greater), strict, tuple(sorted(ranges.items())))
                    old = self._seen.get(key)
                    if old is None or old.threads | threads != old.threads:
                        merged = RangeGuard(lesser, greater, strict, threads | (old.threads if old else 0), key[3])
                        self._seen[key] = merged
                        self._built = False

    @property
    def guards(self) -> list[RangeGuard]:
        return list(self._seen.values())

    def covered(self) -> Any:
        """The blocks the range guards admit, as an isl parameter set (None: nothing assumed)."""
        with self._lock:
            if not self._built:      # guards are added while the trace is built, asked after
                from .presburger import covered

                self._covered = covered(self.guards, self.uniform) if self.guards else None
                self._built = True
            return self._covered

    def record(self, a: A.Expr, b: A.Expr, condition: str) -> None:
        """A pair decided by the launch's range guards (`model.threads.cross_thread`)."""
        if b.span.line < a.span.line:
            a, b = b, a
        self.outside.setdefault((a.span.line, b.span.line), Outside(a, b, condition))


def _atoms(cond: A.Expr, polarity: bool) -> list[tuple[A.Expr, A.Expr, bool]]:
    """The comparisons a condition asserts when it is `polarity`, as (lesser, greater, strict)."""
    while isinstance(cond, A.Cast):
        cond = cond.operand
    if isinstance(cond, A.Unary) and cond.op == "!" and not cond.postfix:
        return _atoms(cond.operand, not polarity)
    if isinstance(cond, A.Binary):
        if cond.op in ("&&", "&") and polarity or cond.op == "||" and not polarity:
            return _atoms(cond.left, polarity) + _atoms(cond.right, polarity)
        op = cond.op if polarity else _NEGATE.get(cond.op)
        if op in ("<", "<="):
            return [(cond.left, cond.right, op == "<")]
        if op in (">", ">="):
            return [(cond.right, cond.left, _FLIP[op] == "<")]
    return []


def _mentions_any(expr: A.Expr, names: frozenset[str] | tuple[str, ...]) -> bool:
    for node in expr.walk():
        name = builtin_name(node) if isinstance(node, (A.Cast, A.Member)) else (
            node.ident if isinstance(node, A.Name) and not node.scope else None)
        if name is not None and name in names:
            return True
    return False
