"""Which physical threads run a statement, and which bytes each of them touches.

Every analysis of pipelint asks two questions of an access or a barrier: *which
threads* execute it, and *which bytes* does each of those threads touch.  Both are
answered here, once, exactly where the kernel text allows it:

* a set of threads is a Python int used as a bitmask over the block's threads
  (`ThreadSet`, at most 1024 bits): guards on `threadIdx.x` (and on the
  templates' warp and lane indices) are evaluated for every thread they apply
  to, so `if (threadIdx.x % 4 == 0)` inside a loop is the 32 threads it selects,
  not "some of the role";
* an election (`tl_shuffle_elect<E>()`, `cute::elect_one_sync()`) is one real
  thread per eligible warp: the lowest lane of the warp among the threads that
  reach it.  Whatever the role split around it, that thread is counted once;
* a thread's footprint is the exact set of bytes it touches over the loops walked
  once (every combination of their variables enumerated), not an interval hull.
  Two accesses conflict between threads only if some byte is touched by two
  *different* threads.  Where enumeration would be too costly the answer is
  "undecided" (None), which callers treat as "cannot say", never as a conflict
  proven.

GPUVerify and Faial decide races the same way: a race needs two distinct threads
and one common byte.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..cuda import ast as A
from .evaluate import interval

ThreadSet = int          # bit t set: thread t of the block
WARP = 32
MAX_POINTS = 1 << 17     # thread x loop-point evaluations one footprint may cost


def span(lo: int, hi: int) -> ThreadSet:
    """Threads lo .. hi-1."""
    return ((1 << hi) - 1) ^ ((1 << lo) - 1) if hi > lo else 0


def members(threads: ThreadSet) -> Iterator[int]:
    """The thread indices of a set, ascending."""
    while threads:
        low = threads & -threads
        yield low.bit_length() - 1
        threads ^= low


def count(threads: ThreadSet) -> int:
    return threads.bit_count()


def lowest(threads: ThreadSet) -> int | None:
    return (threads & -threads).bit_length() - 1 if threads else None


def describe(threads: ThreadSet) -> str:
    """`threads 0-31, 64`: contiguous runs, for messages."""
    runs: list[str] = []
    start = prev = None
    for t in members(threads):
        if start is None:
            start = prev = t
        elif t == prev + 1:
            prev = t
        else:
            runs.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = t
    if start is not None:
        runs.append(f"{start}-{prev}" if start != prev else str(start))
    return "threads " + ", ".join(runs) if runs else "no thread"


def elect_extent(call: A.Call) -> int:
    """The group size of an election: `tl_shuffle_elect<E>` (0: the block's first warp only),
    `cute::elect_one_sync()` one lane per warp (E = 32)."""
    if call.name == "cute::elect_one_sync":
        return WARP
    args = call.template_args
    return int(args[0]) if args and args[0].isdigit() else 0


def elected(active: ThreadSet, extent: int) -> ThreadSet:
    """The threads an election picks among `active` (the threads that reach it).

    `elect.sync` picks one lane of each warp that runs it, the lowest active lane;
    `tl_shuffle_elect<E>` keeps the warps whose canonical index is a multiple of
    ceil(E/32), and E = 0 the first warp of the block only (tl_templates intrin.h).
    """
    picked = 0
    warp_extent = max(1, (extent + WARP - 1) // WARP)
    top = active.bit_length()
    for w in range((top + WARP - 1) // WARP):
        if (extent == 0 and w != 0) or w % warp_extent:
            continue
        lane = lowest(active & span(w * WARP, (w + 1) * WARP))
        if lane is not None:
            picked |= 1 << lane
    return picked


# ---------------------------------------------------------------- per-thread footprints
@dataclass(frozen=True, slots=True, eq=False)
class LaneRecipe:
    """How to compute the bytes each thread touches in one access: the index expression
    (elements of `elem` bytes, `width` bytes per thread), the values of the loop variables it
    reads, the ranges of those walked once, and the threads that execute it.  Evaluated lazily:
    only accesses in a candidate hazard need it."""

    index: A.Expr
    elem: int
    width: int
    points: tuple[tuple[str, int], ...]
    ranges: tuple[tuple[str, tuple[int, int]], ...]
    threads: ThreadSet


Footprint = dict[int, frozenset[int]]      # thread -> element offsets (bytes) it starts at

_CACHE: dict[tuple, Footprint | None] = {}
_KEEP: list[object] = []          # keeps cached index nodes alive, so their ids stay unique


def footprint(recipe: LaneRecipe, evaluator) -> Footprint | None:
    """Byte offsets at which each thread's `width`-byte accesses start, every combination of the
    once-walked loop variables enumerated (None: an index is unknown, or too costly)."""
    key = (id(recipe.index), recipe.elem, recipe.width, recipe.points, recipe.ranges, recipe.threads)
    if key in _CACHE:
        return _CACHE[key]
    names = [n for n, _ in recipe.ranges]
    axes = [range(lo, hi + 1) for _, (lo, hi) in recipe.ranges]
    points = math.prod(len(a) for a in axes) if axes else 1
    out: Footprint | None = None
    if points * count(recipe.threads) <= MAX_POINTS:
        out = {}
        env: dict[str, int] = dict(recipe.points)
        for t in members(recipe.threads):
            env["threadIdx.x"] = t
            starts = set()
            for combo in itertools.product(*axes):
                env.update(zip(names, combo))
                v = evaluator(recipe.index, env)
                if v is None:
                    out = None
                    break
                starts.add(v * recipe.elem)
            if out is None:
                break
            out[t] = frozenset(starts)
    if len(_CACHE) > 4096:
        _CACHE.clear()
        _KEEP.clear()
    _CACHE[key] = out
    _KEEP.append(recipe.index)
    return out


def _hulls(recipe: LaneRecipe) -> dict[int, tuple[int, int]] | None:
    """Each thread's bytes as an interval (a sound over-approximation of its footprint)."""
    env: dict[str, int] = dict(recipe.points)
    ranges: Mapping[str, tuple[int, int]] = dict(recipe.ranges)
    out = {}
    for t in members(recipe.threads):
        env["threadIdx.x"] = t
        b = interval(recipe.index, env, ranges)
        if b is None:
            return None
        out[t] = (b[0] * recipe.elem, b[1] * recipe.elem + recipe.width)
    return out


def cross_thread(a: LaneRecipe, b: LaneRecipe, evaluator) -> bool | None:
    """Whether some byte is touched by one thread in `a` and by a *different* thread in `b`.

    Exact on enumerated footprints; where they cannot be enumerated, interval hulls can still
    prove that no two different threads meet (False); otherwise None (undecided).
    """
    fa, fb = footprint(a, evaluator), footprint(b, evaluator)
    if fa is not None and fb is not None:
        return _cross_exact(fa, a.width, fb, b.width)
    ha, hb = _hulls(a), _hulls(b)
    if ha is None or hb is None:
        return None
    return None if _cross_hulls(ha, hb) else False


def _cross_exact(fa: Footprint, wa: int, fb: Footprint, wb: int) -> bool:
    g = math.gcd(wa, wb)
    for starts in itertools.chain(fa.values(), fb.values()):
        for s in starts:
            g = math.gcd(g, s)
        if g == 1:
            break
    g = g or 1
    owner: dict[int, int] = {}          # granule -> the one thread of `a` touching it (-1: several)
    for t, starts in fa.items():
        for s in starts:
            for q in range(s // g, (s + wa) // g):
                prev = owner.get(q)
                owner[q] = t if prev is None or prev == t else -1
    for u, starts in fb.items():
        for s in starts:
            for q in range(s // g, (s + wb) // g):
                prev = owner.get(q)
                if prev is not None and prev != u:
                    return True
    return False


def _cross_hulls(ha: dict[int, tuple[int, int]], hb: dict[int, tuple[int, int]]) -> bool:
    """Whether some thread's hull in `a` overlaps a different thread's hull in `b`."""
    order = sorted(ha, key=lambda t: ha[t][0])
    starts = [ha[t][0] for t in order]
    reach, furthest = [], -1
    for t in order:
        furthest = max(furthest, ha[t][1])
        reach.append(furthest)
    import bisect

    for u, (lo, hi) in hb.items():
        j = bisect.bisect_left(starts, hi) - 1
        while j >= 0 and reach[j] > lo:
            t = order[j]
            if t != u and ha[t][1] > lo:
                return True
            j -= 1
    return False
