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

import bisect
import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..cuda import ast as A
from .evaluate import builtin_name, interval, thread_index_call

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
    start = prev = -2
    for t in members(threads):
        if start < 0:
            start = prev = t
        elif t == prev + 1:
            prev = t
        else:
            runs.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = t
    if start >= 0:
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
    guards: tuple[tuple[A.Expr, bool], ...] = ()    # conditions (and branch) around the access
    collective: bool = False     # a warp-collective instruction (ldmatrix/stmatrix): each lane names
                                 # a row the whole warp moves, so data crosses the warp's lanes


Footprint = dict[int, frozenset[int]]      # thread -> element offsets (bytes) it starts at

_CACHE: dict[tuple, Footprint | None] = {}
_KEEP: list[object] = []          # keeps cached index nodes alive, so their ids stay unique


def _key(recipe: LaneRecipe) -> tuple:
    return (id(recipe.index), recipe.elem, recipe.width, recipe.points, recipe.ranges, recipe.threads,
            tuple((id(g), p) for g, p in recipe.guards))


_CROSS: dict[tuple, bool | None] = {}


def footprint(recipe: LaneRecipe, evaluator) -> Footprint | None:
    """Byte offsets at which each thread's `width`-byte accesses start, every combination of the
    once-walked loop variables enumerated (None: an index is unknown, or too costly)."""
    key = _key(recipe)
    if key in _CACHE:
        return _CACHE[key]
    names = [n for n, _ in recipe.ranges]
    axes = [range(lo, hi + 1) for _, (lo, hi) in recipe.ranges]
    points = math.prod(max(0, a.stop - a.start) for a in axes) if axes else 1
    out: Footprint | None = None
    if points * count(recipe.threads) <= MAX_POINTS:
        out = {}
        env: dict[str, int] = dict(recipe.points)
        for t in members(recipe.threads):
            env["threadIdx.x"] = t
            starts = set()
            for combo in itertools.product(*axes):
                env.update(zip(names, combo))
                if not _runs(recipe.guards, env, evaluator):
                    continue
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


def _runs(guards: tuple[tuple[A.Expr, bool], ...], env: dict, evaluator) -> bool:
    """Whether a (thread, loop point) runs the access: every guard takes its branch (a guard
    that cannot be evaluated is taken to run it)."""
    for cond, polarity in guards:
        value = evaluator(cond, env)
        if value is not None and bool(value) != polarity:
            return False
    return True


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


def warp_ordered(t: int, u: int, mask: int) -> bool:
    """Whether a `__syncwarp(mask)` both threads passed orders them: one warp, both lanes in the mask."""
    return t // WARP == u // WARP and bool((mask >> (t % WARP)) & 1) and bool((mask >> (u % WARP)) & 1)


def cross_thread(a: LaneRecipe, b: LaneRecipe, evaluator, shift: int = 0, warp_mask: int | None = None) -> bool | None:
    """Whether some byte is touched by one thread in `a` and by a *different* thread in `b`;
    `shift` is where `b`'s buffer starts relative to `a`'s (two aliases of one allocation).

    `warp_mask`: a `__syncwarp(mask)` both passed in between; the pairs it orders (one warp,
    both lanes in the mask) do not count.

    Exact on enumerated footprints; where they cannot be enumerated, interval hulls can still
    prove that no two different threads meet (False), and otherwise the question is one
    bit-vector query (`model.symbolic`: exact for any size); None only where an index or a
    guard does not translate or the solver times out (undecided).
    """
    key = (_key(a), _key(b), shift, warp_mask)
    if key in _CROSS:
        return _CROSS[key]
    fa, fb = footprint(a, evaluator), footprint(b, evaluator)
    found: bool | None
    if fa is not None and fb is not None:
        if shift:
            fb = {t: frozenset(x + shift for x in starts) for t, starts in fb.items()}
        found = _cross_exact(fa, a.width, fb, b.width) if warp_mask is None else \
            _cross_exact_unordered(fa, a.width, fb, b.width, warp_mask)
    else:
        ha, hb = _hulls(a), _hulls(b)
        if hb is not None and shift:
            hb = {t: (lo + shift, hi + shift) for t, (lo, hi) in hb.items()}
        found = None if ha is None or hb is None or _cross_hulls(ha, hb) else False
        if found is None:       # too many points to enumerate: one solver query decides it
            from .symbolic import cross_thread as decide

            found = decide(a, b, shift, getattr(evaluator, "opaque", None), warp_mask=warp_mask)[0]
    if len(_CROSS) > 16384:
        _CROSS.clear()
    _CROSS[key] = found        # the nodes behind the ids are kept alive by `_KEEP` (footprint)
    return found


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


def _cross_exact_unordered(fa: Footprint, wa: int, fb: Footprint, wb: int, mask: int) -> bool:
    """`_cross_exact` where pairs of threads a `__syncwarp(mask)` orders do not count."""
    owners: dict[int, set[int]] = {}
    for t, starts in fa.items():
        for s in starts:
            for q in range(s, s + wa):
                owners.setdefault(q, set()).add(t)
    for u, starts in fb.items():
        for s in starts:
            for q in range(s, s + wb):
                if any(t != u and not warp_ordered(t, u, mask) for t in owners.get(q, ())):
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
    for u, (lo, hi) in hb.items():
        j = bisect.bisect_left(starts, hi) - 1
        while j >= 0 and reach[j] > lo:
            t = order[j]
            if t != u and ha[t][1] > lo:
                return True
            j -= 1
    return False


def collisions(recipe: LaneRecipe, evaluator, limit: int = 8) -> list[tuple[dict, dict]] | None:
    """Points (environments: thread and loop variables) at which two *different* threads of one
    access touch a common byte, at most `limit` of them (None: cannot be enumerated).  Empty
    when every byte of the access belongs to one thread: a store no other thread repeats."""
    names = [n for n, _ in recipe.ranges]
    axes = [range(lo, hi + 1) for _, (lo, hi) in recipe.ranges]
    if math.prod(max(0, a.stop - a.start) for a in axes) * count(recipe.threads) > MAX_POINTS:
        return None
    owner: dict[int, tuple[int, dict]] = {}
    found: list[tuple[dict, dict]] = []
    env: dict[str, int] = dict(recipe.points)
    g = recipe.width
    for t in members(recipe.threads):
        env["threadIdx.x"] = t
        for combo in itertools.product(*axes):
            env.update(zip(names, combo))
            if not _runs(recipe.guards, env, evaluator):
                continue
            v = evaluator(recipe.index, env)
            if v is None:
                return None
            start = v * recipe.elem
            for q in range(start, start + recipe.width, g) if start % g == 0 else [start]:
                prev = owner.get(q)
                if prev is None:
                    owner[q] = (t, dict(env))
                elif prev[0] != t:
                    found.append((prev[1], dict(env)))
                    if len(found) >= limit:
                        return found
    return found


def collisions_between(a: LaneRecipe, b: LaneRecipe, evaluator, limit: int = 8,
                       shift: int = 0) -> list[tuple[dict, dict]] | None:
    """Points at which a thread of `a` and a different thread of `b` touch a common byte (`b`'s
    buffer starting `shift` bytes after `a`'s)."""
    owners: dict[int, tuple[int, dict]] = {}
    for t, env in _points(a, evaluator) or ():
        v = evaluator(a.index, env)
        if v is None:
            return None
        for q in range(v * a.elem, v * a.elem + a.width):
            owners.setdefault(q, (t, env))
    found: list[tuple[dict, dict]] = []
    points = _points(b, evaluator)
    if points is None:
        return None
    for u, env in points:
        v = evaluator(b.index, env)
        if v is None:
            return None
        for q in range(v * b.elem + shift, v * b.elem + b.width + shift):
            hit = owners.get(q)
            if hit is not None and hit[0] != u:
                found.append((hit[1], env))
                if len(found) >= limit:
                    return found
                break
    return found


def _points(recipe: LaneRecipe, evaluator) -> list[tuple[int, dict]] | None:
    names = [n for n, _ in recipe.ranges]
    axes = [range(lo, hi + 1) for _, (lo, hi) in recipe.ranges]
    if math.prod(max(0, x.stop - x.start) for x in axes) * count(recipe.threads) > MAX_POINTS:
        return None
    out = []
    for t in members(recipe.threads):
        for combo in itertools.product(*axes):
            env = dict(recipe.points)
            env["threadIdx.x"] = t
            env.update(zip(names, combo))
            if _runs(recipe.guards, env, evaluator):
                out.append((t, env))
    return out


# ---------------------------------------------------------------- replicated stores
def stored_value(node: A.Node) -> A.Expr | None:
    """The value a store writes: `x` of `s[i] = x`, argument 1 of `tl::store_shared_*(p, x)`."""
    if isinstance(node, A.Assign) and node.op == "=":
        return node.value
    if isinstance(node, A.Call) and len(node.args) > 1:
        return node.args[1]
    return None


def same_value(value: A.Expr | None, a: dict, b: dict, evaluator, registers: frozenset[str]) -> bool | None:
    """Whether one store writes the same value at two of its points (True / False / None: cannot
    say).  The points differ only in the thread and the once-walked loop variables.

    Equal when the value evaluates to the same integer at both, or when it reads no thread
    index, no per-thread register and no variable that differs between the points (kernel
    parameters, global memory through them, constants and the unrolled loops' variables are
    the same for every thread); different when it evaluates to different integers."""
    if value is None:
        return None
    va, vb = evaluator(value, a), evaluator(value, b)
    if va is not None and vb is not None:
        return va == vb
    for n in value.walk():
        if isinstance(n, A.Call) and not pure_call(n):
            return None
        if isinstance(n, A.Name) and not n.scope and (n.ident in registers or a.get(n.ident) != b.get(n.ident)):
            return None
        if (isinstance(n, (A.Member, A.Cast)) and builtin_name(n) == "threadIdx.x") or (
                isinstance(n, A.Call) and thread_index_call(n) is not None):
            return None
    return True


def pure_call(call: A.Call) -> bool:
    """Conversions and math that compute a value from their arguments alone."""
    name = call.name
    return name.startswith(("__float2", "__half2", "__bfloat162", "__int2", "__uint2", "__pack", "__")) \
        or name in ("max", "min", "fmaxf", "fminf", "expf", "exp2f", "sqrtf", "rsqrtf", "abs", "fabsf")


