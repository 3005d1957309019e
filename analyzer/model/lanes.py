"""Which thread touches which bytes: hazards only between *different* threads.

GPUVerify and Faial decide a race by asking whether two different threads can
touch the same bytes.  pipelint's simulation decides hazards per buffer range;
this module refines a candidate hazard between two accesses of one role by
evaluating each access's index for every thread of the role (block sizes are at
most 1024 threads; index arithmetic is affine-ish and cheap to evaluate):

* each thread's bytes are an interval (over the loops walked once, by interval
  arithmetic: an over-approximation);
* the hazard is between different threads only if some thread's interval in one
  access overlaps another thread's interval in the other.

When every overlap is a thread with itself — split-K GEMV's `a_s`, where each
thread reads back exactly the 16 bytes it copied — no barrier is needed: a
thread sees its own writes (and its own completed cp.async) in program order.
Only accesses each thread makes at its own address carry a recipe (plain loads
and stores, cp.async); warp-collective instructions (ldmatrix, wgmma, TMA) never
take this shortcut, so the answer errs towards keeping a hazard.
"""
from __future__ import annotations

import bisect

from .evaluate import interval
from .trace import Event, LaneRecipe

_CACHE: dict[tuple, list[tuple[int, int]] | None] = {}
_KEEP: list[object] = []          # keeps cached index nodes alive, so their ids stay unique


def footprints(recipe: LaneRecipe) -> list[tuple[int, int]] | None:
    """Bytes [lo, hi) each thread `recipe.lo + i` touches (None: some index is unknown)."""
    key = (id(recipe.index), recipe.elem, recipe.width, recipe.points, recipe.ranges, recipe.lo, recipe.hi)
    if key in _CACHE:
        return _CACHE[key]
    env: dict[str, int] = dict(recipe.points)
    ranges = dict(recipe.ranges)
    spans: list[tuple[int, int]] = []
    out: list[tuple[int, int]] | None = spans
    for t in range(recipe.lo, recipe.hi):
        env["threadIdx.x"] = t
        bounds = interval(recipe.index, env, ranges)
        if bounds is None:
            out = None
            break
        spans.append((bounds[0] * recipe.elem, bounds[1] * recipe.elem + recipe.width))
    if len(_CACHE) > 4096:
        _CACHE.clear()
        _KEEP.clear()
    _CACHE[key] = out
    _KEEP.append(recipe.index)
    return out


def same_thread_only(a: Event, b: Event) -> bool:
    """True when no thread touches, in `b`, bytes another thread touches in `a`: every overlap of
    the two accesses is a thread with itself.  False whenever that is not certain."""
    if a.lanes is None or b.lanes is None or a.role != b.role:
        return False
    if (a.lanes.lo, a.lanes.hi) != (b.lanes.lo, b.lanes.hi):
        return False
    fa, fb = footprints(a.lanes), footprints(b.lanes)
    if fa is None or fb is None:
        return False
    order = sorted(range(len(fa)), key=lambda i: fa[i][0])
    starts = [fa[i][0] for i in order]
    reach = []                       # the furthest end among intervals sorted up to here
    furthest = -1
    for i in order:
        furthest = max(furthest, fa[i][1])
        reach.append(furthest)
    for t, (lo, hi) in enumerate(fb):
        j = bisect.bisect_left(starts, hi) - 1      # intervals of `a` starting before `hi`
        while j >= 0 and reach[j] > lo:
            u = order[j]
            if u != t and fa[u][1] > lo:
                return False
            j -= 1
    return True
