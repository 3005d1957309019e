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
* whether two accesses conflict between threads is decided on the accesses as integer sets
  (`cross_thread`, through `model.presburger`: isl, and z3 bit-vectors for what is not
  Presburger), for any number of threads and loop points, never by enumerating them; a byte
  touched by two *different* threads is a conflict.  "Undecided" (None) is left only where an
  index, a guard or a stored value depends on memory or an unknown call; callers treat it as
  "cannot say", never as a conflict proven;
* the exact bytes of one access (`footprint`) are still enumerated where a byte count or an
  extent is wanted (the bytes an mbarrier's consumers read, an ldmatrix's rows), never for a
  cross-thread verdict.

GPUVerify and Faial decide races the same way: a race needs two distinct threads
and one common byte.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..cuda import ast as A
from .evaluate import builtin_name, thread_index_call
from .symbolic import literal

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
    uniform: frozenset[str] = frozenset()   # kernel arguments the index or a guard reads (parameters)
    launch: Any = None           # the kernel's `model.launch.Launch`: the blocks a launch covers


Footprint = dict[int, frozenset[int]]      # thread -> element offsets (bytes) it starts at

_CACHE: dict[tuple, Footprint | None] = {}
_KEEP: list[object] = []          # keeps cached index nodes alive, so their ids stay unique


def _key(recipe: LaneRecipe) -> tuple:
    return (id(recipe.index), recipe.elem, recipe.width, recipe.points, recipe.ranges, recipe.threads,
            tuple((id(g), p) for g, p in recipe.guards))


_CROSS: dict[tuple, tuple[bool | None, str | None]] = {}   # verdict, and where it met outside the launch


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


def warp_ordered(t: int, u: int, mask: int) -> bool:
    """Whether a `__syncwarp(mask)` both threads passed orders them: one warp, both lanes in the mask."""
    return t // WARP == u // WARP and bool((mask >> (t % WARP)) & 1) and bool((mask >> (u % WARP)) & 1)


def cross_thread(a: LaneRecipe, b: LaneRecipe, evaluator, shift: int = 0, warp_mask: int | None = None) -> bool | None:
    """Whether some byte is touched by one thread in `a` and by a *different* thread in `b`;
    `shift` is where `b`'s buffer starts relative to `a`'s (two aliases of one allocation).

    `warp_mask`: a `__syncwarp(mask)` both passed in between; the pairs it orders (one warp,
    both lanes in the mask) do not count.

    Decided on the accesses as integer sets (`model.presburger`: isl, the bit-vector solver
    where an index is not Presburger), for any number of threads and points; None only where
    an index or a guard depends on memory or an unknown call, or the solver times out.
    """
    return _decided(a, b, evaluator, shift, warp_mask, any_threads=False)


def touch(a: LaneRecipe, b: LaneRecipe, evaluator, shift: int = 0) -> bool | None:
    """Whether some byte is touched by a thread in `a` and by any thread in `b`, the same one
    included (an asynchronous copy in flight and a read of its bytes); decided as `cross_thread`."""
    return _decided(a, b, evaluator, shift, None, any_threads=True)


def _decided(a: LaneRecipe, b: LaneRecipe, evaluator, shift: int, warp_mask: int | None,
             any_threads: bool) -> bool | None:
    """The question, asked once per pair of accesses and scenario (`model.presburger.decide`)."""
    key = (_key(a), _key(b), shift, warp_mask, any_threads, _opaque_key(evaluator))
    found = _CROSS.get(key)
    if found is None:
        from .presburger import decide

        opaque = getattr(evaluator, "opaque", None)
        if _apart_for_all_threads(a, b, key, opaque):
            found = (False, None)
        else:
            verdict, witness = decide(a, b, shift, opaque, warp_mask=warp_mask, any_threads=any_threads)
            found = (verdict, witness.outside if witness is not None and verdict is False else None)
            if verdict is True and a.launch is not None:
                tiled = tile_assumption(a, b, shift, opaque, warp_mask, any_threads)
                if tiled is not None:
                    found = (False, tiled)
        if len(_CROSS) > 1 << 17:
            _CROSS.clear()
        _CROSS[key] = found
        _KEEP.append((a.index, a.guards, b.index, b.guards))     # the nodes behind the ids stay alive
    if found[1] is not None and a.launch is not None:
        a.launch.record(a.index, b.index, found[1])     # every model that asks says what it assumed
    return found[0]


TILED = "tiled: "          # an `Outside` condition that is the tiling assumption, not a range guard


def tile_assumption(a: LaneRecipe, b: LaneRecipe, shift: int, opaque: Any, warp_mask: int | None,
                    any_threads: bool) -> str | None:
    """Where two accesses meet only at two different iterations of a loop whose stride is a
    kernel argument (`m[Br * i + tx]`, `O[Bc * d * i + tx * d + x]`), the words of that
    assumption; else None.

    Such a loop walks tiles: iteration `i` covers rows `[Br * i, Br * i + Br)` and the thread
    index is the column, so two iterations touch common bytes only where the stride is smaller
    than what one iteration's threads touch (`blockDim.x > Br`).  The kernel text does not say
    how the host relates the block size to `Br`, any more than it says how many blocks it
    launches (`model.launch`): pipelint takes the launch to fit the tile, and says so in a note
    (`launch-assumed`), never silently.  A stride that is a constant is checked, not assumed."""
    loops = _strided(a) & _strided(b)
    if not loops:
        return None
    from .symbolic import cross_thread as solve

    verdict, _ = solve(a, b, shift, opaque, None, warp_mask, any_threads, shared=frozenset(loops))
    if verdict is not False:
        return None
    return TILED + ", ".join(f"`{n}`" for n in sorted(loops))


def _strided(recipe: LaneRecipe) -> set[str]:
    """The walked loops whose variable an index multiplies by a value that is not a constant."""
    names = {n for n, _ in recipe.ranges}
    found: set[str] = set()
    if not names:
        return found
    for node in recipe.index.walk():
        if isinstance(node, A.Binary) and node.op == "*" and not literal(node.left) and not literal(node.right):
            found |= names & (_loop_names(node.left) | _loop_names(node.right))
    return found


def _loop_names(expr: A.Expr) -> set[str]:
    return {n.ident for n in expr.walk() if isinstance(n, A.Name) and not n.scope}


_WIDE: dict[tuple, tuple] = {}


def _apart_for_all_threads(a: LaneRecipe, b: LaneRecipe, key: tuple, opaque: Any) -> bool:
    """Whether the two statements meet for no threads at all, asked once a statement pair comes
    back with other thread sets or guards (a block split by a thread-dependent guard into groups,
    each group's accesses an event of its own: 4 groups ask 16 questions).  Every thread up to
    the highest either names, unguarded, is a larger set, so "apart" there is "apart" for every
    pair of groups within it; "they meet" (or a meeting outside the launch, whose witness the
    message needs) asks the groups one by one."""
    (ka, kb), rest = key[:2], key[2:]
    wide = (ka[:5], kb[:5], *rest)
    seen = _WIDE.get(wide)
    asked = (a.threads, b.threads, a.guards, b.guards)
    if seen is None or seen == ("first", asked):
        if len(_WIDE) > 16384:
            _WIDE.clear()
        _WIDE[wide] = ("first", asked)
        return False
    block = (1 << max(a.threads.bit_length(), b.threads.bit_length())) - 1
    if seen[0] == "block":
        _, covered, apart = seen
        if block & ~covered == 0:
            return apart
        block |= covered
    from .presburger import decide

    shift, warp_mask, any_threads = rest[:3]
    verdict, witness = decide(replace(a, threads=block, guards=()), replace(b, threads=block, guards=()),
                              shift, opaque, warp_mask=warp_mask, any_threads=any_threads)
    apart = verdict is False and witness is None
    _WIDE[wide] = ("block", block, apart)
    return apart


def _opaque_key(evaluator) -> tuple:
    """The run-time values a scenario fixes (they change what an index evaluates to)."""
    from .evaluate import frozen_values

    return frozen_values(getattr(evaluator, "opaque", None))


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


def _runs(guards: tuple[tuple[A.Expr, bool], ...], env: dict, evaluator) -> bool:
    """Whether a (thread, loop point) runs the access: every guard takes its branch (a guard
    that cannot be evaluated is taken to run it)."""
    for cond, polarity in guards:
        value = evaluator(cond, env)
        if value is not None and bool(value) != polarity:
            return False
    return True


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


def different_values(a: LaneRecipe, b: LaneRecipe, values: tuple[A.Expr | None, A.Expr | None], evaluator,
                     registers: frozenset[str], shift: int = 0, definitions: Any = None) -> bool | None:
    """Whether a thread of store `a` and a *different* thread of store `b` write a common byte
    with different values (True), never (False), or cannot be said (None).  The two are one
    statement at one point of the kernel (run by two threads, or by two roles at one iteration).

    Two threads storing the same value do not race: TileLang replicates a store when a tile has
    fewer elements than threads.  Decided over every pair of colliding threads at once: no
    collision at all, or values that are the same at every point (an expression of neither the
    thread nor the walked loops nor a register), is False; otherwise the question "some
    collision with different values" goes to the solver with the values as terms
    (`model.presburger.decide`), which leaves it undecided only for values it cannot express
    (registers, memory)."""
    if cross_thread(a, b, evaluator, shift) is False:
        return False
    va, vb = values
    if va is not None and vb is not None and _shape_equal(va, vb) and uniform_value(va, a, registers) \
            and uniform_value(vb, b, registers):
        return False
    from .presburger import decide

    opaque = getattr(evaluator, "opaque", None)
    verdict = decide(a, b, shift, opaque, values=values)[0]
    if verdict is None and va is not None and vb is not None:
        verdict = _differ_through_memory(a, b, va, vb, opaque, registers, shift, definitions)
    if verdict is None and va is not None and vb is not None:
        verdict = _copies_of_different_elements(a, b, va, vb, opaque, registers, shift)
    return verdict


def copied_address(value: A.Expr, registers: frozenset[str]) -> tuple[object, A.Expr] | None:
    """Where a stored value is copied from when it is one element of memory and nothing else:
    `A[i]` (the base's shape and the index), `*(uint4*)(A + i)` (the pointer), casts around
    either; None for anything computed, and for a base held in a register."""
    from .evaluate import shape

    while isinstance(value, A.Cast):
        value = value.operand
    if isinstance(value, A.Index):
        base = value.base
        while isinstance(base, A.Cast):
            base = base.operand
        if isinstance(base, A.Name) and base.ident not in registers:
            return shape(base), value.index
        return None
    if isinstance(value, A.Unary) and value.op == "*":
        return _pointed(value.operand, registers)
    return None


def _pointed(pointer: A.Expr, registers: frozenset[str]) -> tuple[object, A.Expr] | None:
    """`A + i`, `i + A`, `&A[i]` (casts around them): the base's shape and the index."""
    from .evaluate import shape

    while isinstance(pointer, A.Cast):
        pointer = pointer.operand
    if isinstance(pointer, A.Unary) and pointer.op == "&":
        return copied_address(pointer.operand, registers)
    if isinstance(pointer, A.Binary) and pointer.op == "+":
        for base, index in ((pointer.left, pointer.right), (pointer.right, pointer.left)):
            while isinstance(base, A.Cast):
                base = base.operand
            if isinstance(base, A.Name) and base.ident not in registers and not (
                    isinstance(index, A.Name) and index.ident == base.ident):
                return shape(base), index
    return None


def _copies_of_different_elements(a: LaneRecipe, b: LaneRecipe, va: A.Expr, vb: A.Expr, opaque,
                                  registers: frozenset[str], shift: int) -> bool | None:
    """Two threads that store *copies* of memory into a common byte: a copy of one element each
    (`S[tx >> 1] = A[tx]`, a cp.async whose source is `A + 8 * tx`).  Where, at some collision, the
    two copy *different* elements (different addresses of one array), the bytes end up holding
    whichever lands last: a write-write race (True), since no tiling copies two elements into one
    place; the same element at every collision is a replicated copy (`_differ_through_memory`).
    None where either value is not such a copy, or the addresses do not translate."""
    from .presburger import decide

    ca, cb = copied_address(va, registers), copied_address(vb, registers)
    if ca is None or cb is None or ca[0] != cb[0]:
        return None
    found = decide(a, b, shift, opaque, values=(ca[1], cb[1]), same_point=registers)[0]
    if found is None:       # not Presburger (a swizzle): the bit-vector solver, names as parameters
        found = decide(a, b, shift, opaque, values=(ca[1], cb[1]))[0]
    return True if found else None


def _differ_through_memory(a: LaneRecipe, b: LaneRecipe, va: A.Expr, vb: A.Expr, opaque, registers: frozenset[str],
                           shift: int, definitions: Any = None) -> bool | None:
    """Values that read memory (`A[bk * 128 + tk]`, `lse[(tx >> 5) * 16 + ...]`): one expression,
    which at every collision reads the same addresses and the same variables, stores the same
    value (False); None where that cannot be shown.  A memory read is taken as a function of its
    address (a race on the memory read is the other accesses' question), so each address and each
    variable outside them must be equal at every collision: one solver question each."""
    from .evaluate import shape
    from .presburger import decide

    if shape(va) != shape(vb):
        return None
    varying = frozenset(n for r in (a, b) for n, _ in (*r.ranges, *r.points))
    kinds: list[bool] = []          # per atom of `va`: whether it is a memory read's address
    atoms_a, atoms_b = _atoms(va, registers, varying, definitions, kinds), _atoms(vb, registers, varying, definitions)
    if atoms_a is None or atoms_b is None or len(atoms_a) != len(atoms_b):
        return None
    unequal = [k for k, (x, y) in enumerate(zip(atoms_a, atoms_b))
               if decide(a, b, shift, opaque, values=(x, y), same_point=registers)[0] is not False]
    if not unequal:
        return False
    # Some atom differs between the colliding threads.  Where every memory read's address is still
    # the same on both sides, each read is one value for both (a parameter), and the solver
    # decides the values themselves: `condval + threadIdx.x`, with `condval` from one load, differ.
    if any(kinds[k] for k in unequal):
        return None
    reads = _Reads()
    ea = _expanded(va, registers, definitions, reads)
    reads.mirror = True
    eb = _expanded(vb, registers, definitions, reads)
    if ea is None or eb is None or reads.used != len(reads.names):
        return None
    return decide(a, b, shift, opaque, values=(ea, eb), same_point=registers)[0]


@dataclass
class _Reads:
    """The names standing for one value's memory reads, in order (`pl_read0`, ...); the other
    side (`mirror`) takes the k-th name for its k-th read, whose address is the same at every
    collision."""

    names: list[str] = field(default_factory=list)
    used: int = 0
    mirror: bool = False

    def next(self) -> str | None:
        if not self.mirror:
            self.names.append(f"pl_read{len(self.names)}")
            return self.names[-1]
        self.used += 1
        return self.names[self.used - 1] if self.used <= len(self.names) else None


def _expanded(value: A.Node, registers: frozenset[str], definitions: Any, reads: _Reads,
              depth: int = 0) -> A.Expr | None:
    """`value` with each register replaced by its reaching definition and each memory read by
    the name `reads` gives it; None where a register has no exact definition."""
    if isinstance(value, A.Index):
        name = reads.next()
        return A.Name(name, value.span) if name is not None else None
    if isinstance(value, A.Name) and not value.scope and value.ident in registers:
        found = definitions.value_at(value.ident, value) if definitions is not None and depth < 4 else None
        return _expanded(found, registers, definitions, reads, depth + 1) if found is not None else None
    out = _rebuilt(value, lambda child: _expanded(child, registers, definitions, reads, depth))
    return out if isinstance(out, A.Expr) else None


def _rebuilt(node: A.Node, child_of: Any) -> A.Node | None:
    """`node` with each child node replaced by `child_of(child)`; None if any of those is None."""
    from dataclasses import fields, replace

    changes: dict[str, Any] = {}
    for f in fields(node):  # type: ignore[arg-type]
        v = getattr(node, f.name)
        if isinstance(v, A.Node):
            changes[f.name] = child_of(v)
            if changes[f.name] is None:
                return None
        elif isinstance(v, tuple) and any(isinstance(x, A.Node) for x in v):
            items = tuple(child_of(x) if isinstance(x, A.Node) else x for x in v)
            if any(x is None for x in items):
                return None
            changes[f.name] = items
    return replace(node, **changes) if changes else node  # type: ignore[type-var]


def _atoms(value: A.Expr, registers: frozenset[str], varying: frozenset[str],
           definitions: Any = None, kinds: list[bool] | None = None) -> list[A.Expr] | None:
    """What a stored value is a function of: the addresses of its memory reads and its variables
    outside them, the thread's and the loops' (`varying`; kernel parameters are the same for every
    thread); None: it reads a register or calls something impure.  `kinds` gets, per atom,
    whether it is a memory read's address."""
    out: list[A.Expr] = []
    kinds = kinds if kinds is not None else []

    def visit(node: A.Node) -> bool:
        if isinstance(node, A.Index):
            if any(isinstance(n, A.Name) and n.ident in registers for n in node.base.walk()):
                return False
            out.append(node.index)
            kinds.append(True)
            return True
        if isinstance(node, A.Call) and thread_index_call(node) is not None:
            out.append(node)
            kinds.append(False)
            return True
        if isinstance(node, A.Call):
            return pure_call(node) and all(visit(arg) for arg in node.args)
        if isinstance(node, (A.Member, A.Cast)) and builtin_name(node) is not None:
            out.append(node)
            kinds.append(False)
            return True
        if isinstance(node, A.Name):
            if node.ident in registers:      # a register: its reaching definition, where it is exact
                found = definitions.value_at(node.ident, node) if definitions is not None else None
                return found is not None and visit(found)
            if not node.scope and node.ident in varying:
                out.append(node)
                kinds.append(False)
            return True
        return all(visit(child) for child in node.children() if isinstance(child, A.Node))

    return out if visit(value) else None


def uniform_value(value: A.Expr, recipe: LaneRecipe, registers: frozenset[str]) -> bool:
    """Whether a stored value is the same for every thread and walked-loop point of an access:
    it reads no thread index, no per-thread register, no variable of the walked loops and calls
    nothing impure (kernel parameters, constants and the outer loops' fixed values are uniform)."""
    walked = {name for name, _ in recipe.ranges}
    for n in value.walk():
        if isinstance(n, A.Call) and not pure_call(n):
            return False
        if isinstance(n, A.Name) and not n.scope and (n.ident in registers or n.ident in walked):
            return False
        if (isinstance(n, (A.Member, A.Cast)) and builtin_name(n) == "threadIdx.x") or (
                isinstance(n, A.Call) and thread_index_call(n) is not None):
            return False
    return True


def _shape_equal(a: A.Expr, b: A.Expr) -> bool:
    from .evaluate import shape

    return a is b or shape(a) == shape(b)


def pure_call(call: A.Call) -> bool:
    """Conversions and math that compute a value from their arguments alone."""
    name = call.name
    return name.startswith(("__float2", "__half2", "__bfloat162", "__int2", "__uint2", "__pack", "__")) \
        or name in ("max", "min", "fmaxf", "fminf", "expf", "exp2f", "sqrtf", "rsqrtf", "abs", "fabsf")


