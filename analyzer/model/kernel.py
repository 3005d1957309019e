"""The kernel model: what the software pipeline in one kernel became.

Built from the AST of one `__global__` function: shared buffers by byte
range, mbarrier arrays, thread roles, and per-role event traces with
concrete stage slots.  The facts only: the analyses that several checks share
(the cp.async simulation, the mbarrier protocol, races between roles, global
hand-offs) read this model and hang off its subclass in `model.analysed`, so
the model never imports them and a check that needs none of them costs nothing.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Self

from ..cuda import ast as A
from ..cuda.linemap import LineMap, Origin
from .aliases import propagate_aliases
from .asm_barriers import lower_asm_barriers
from .async_copies import lower_async_copies
from .coop_groups import lower_cooperative_groups
from .definitions import Definitions
from .evaluate import evaluate, interval, mentions
from .index import KernelIndex
from .intrinsics import INTRINSICS, SYNC_KINDS, K
from .pointers import resolve_pointers
from .shared import MBarrierArray, SharedBuffer, SharedLayout
from .symbolic import Witness
from .trace import Event, LoopInfo, Role, Trace, TraceBuilder, is_runtime_bound, loop_bounds, pipeline_period
from .unit import UnitFacts

MAX_THREADS = 1024    # CUDA's limit of threads per block


_INDEX_RANGES = {f"{b}.{d}": (0, 2**31 - 1) for b in ("blockIdx", "threadIdx") for d in "xyz"}


def _pointer_base(expr: A.Expr) -> str | None:
    """`C` of `C[i]`, `*(float4*)(C + i)`, `&(C[i])` (casts and address-of stripped)."""
    while True:
        if isinstance(expr, A.Cast) or isinstance(expr, A.Unary) and expr.op in ("&", "*"):
            expr = expr.operand
        elif isinstance(expr, A.Index):
            expr = expr.base
        elif isinstance(expr, A.Binary) and expr.op in ("+", "-"):
            expr = expr.left
        else:
            break
    return expr.ident if isinstance(expr, A.Name) and not expr.scope else None


def _at_least_once(loop: A.For) -> bool:
    """Whether a counted loop's trip count is at least 1 for every block and thread: the bound
    minus the start, evaluated over the index ranges, is positive (unknown: False)."""
    bounds = loop_bounds(loop)
    if bounds is None:
        return False
    _, start, end, inclusive = bounds
    lo_end = interval(end, {}, _INDEX_RANGES)
    hi_start = interval(start, {}, _INDEX_RANGES)
    if lo_end is None or hi_start is None:
        return False
    return lo_end[0] - hi_start[1] + (1 if inclusive else 0) >= 1


_BLOCK_ZERO = (("blockIdx", "x"), ("blockIdx", "y"), ("blockIdx", "z"))


def _trip_conditions(counts: list[A.Expr], trip: int) -> tuple[tuple[A.Expr, bool], ...]:
    """A scenario's conditions on the loops' counts: each at most 0 (`trip` 0), else at least 1."""
    return tuple((A.Binary("<=" if trip == 0 else ">=", c, A.Number("0" if trip == 0 else "1", c.span), c.span), True)
                 for c in counts)


@dataclass(frozen=True, slots=True)
class BufferStages:
    """How a pipelined buffer is versioned: stage stride and slot count."""

    buffer: str
    stride: int          # bytes between consecutive versions
    versions: int        # slots the buffer's accesses rotate over
    span: int = 0        # bytes of a slot its accesses touch (from its start; 0: the whole stride)

    @property
    def slot_bytes(self) -> int:
        """The bytes of one slot: what the accesses touch, never past the next version."""
        return self.span or self.stride


class KernelModel:
    """The facts pipelint knows about one kernel; read-only for checks."""

    # The shared analyses, attached by `model.analysed` (declared here, untyped, so analyses that
    # use one another need not import the module that attaches them: no import cycle)
    cp_async: Any
    mbarrier: Any
    races: Any
    global_handoff: Any
    mixed_named: Any
    unordering: Any

    def __init__(self, func: A.FunctionDef, lines: LineMap | None = None,
                 registry: dict | None = None, runtime_trip: int | None = None,
                 index: KernelIndex | None = None,
                 stages: dict[str, BufferStages] | None = None, roles: list[Role] | None = None,
                 handoff_params: frozenset[str] | None = None,
                 assumptions: tuple[tuple[A.Expr, bool], ...] = (),
                 forced: tuple[tuple[int, bool], ...] = (),
                 unit: UnitFacts | None = None,
                 scenario: tuple[tuple[A.Expr, bool], ...] = ()) -> None:
        assert func.body is not None
        if index is None:
            # `int tid = threadIdx.x;`: its uses read the index; `asm("bar.sync 0;")`: a barrier
            expanded = unit.apply(func) if unit is not None else func
            # cooperative groups first: `int lane = tile.thread_rank();` is then a launch value
            bound = lower_async_copies(lower_asm_barriers(resolve_pointers(propagate_aliases(
                lower_cooperative_groups(expanded)))))
            if bound is not func:
                func, registry = bound, None
        self.func = func
        self.name = func.name
        self._byte_ranges: dict[tuple[int, bool], tuple[Event, tuple[str, int, int] | None]] = {}
        self.lines = lines
        self.implausible: list[tuple[A.Node, str]] = []   # input values analysed in a bounded way
        assert func.body is not None
        self.index = index or KernelIndex(func.body, registry)
        self.threads = self._threads()
        # kernel parameters: the same value in every thread (pointers to global memory, sizes)
        self.params = frozenset(p.name for p in func.params if p.name)
        self.layout = SharedLayout(self.index.declarations)
        self.registers = self._registers()
        self.runtime_loops = self._runtime_loops()
        # a fact of the text, not of a trip count: a scenario's model reuses its base's
        self.handoff_params = handoff_params if handoff_params is not None else self._handoff_params()
        self.period = pipeline_period(self.index, self.handoff_params, self.params)   # of the slot/parity arithmetic
        if runtime_trip is None and self.runtime_loops:
            runtime_trip = self.trip_scenarios()[-1]   # a steady-state representative
        self.runtime_trip = runtime_trip if self.runtime_loops else None
        self.assumptions = assumptions
        self._conditions: dict[bool, tuple[tuple[A.Expr, bool], ...]] = {}
        self.forced = forced
        self.trace: Trace = TraceBuilder(func, self.layout, self.threads, self.index, self.runtime_trip,
                                         roles, self.handoff_params, assumptions, forced, scenario).build()
        # The version dimension is a property of the buffers, not of one trip
        # count: a one-iteration scenario touches one slot and could not see it.
        self.stages = stages if stages is not None else self._stages()
        self._check_init_counts()

    @functools.cached_property
    def definitions(self) -> Definitions:
        """The registers' reaching definitions, built at the first stored value that needs one."""
        return Definitions.of(self.func)

    def _registers(self) -> frozenset[str]:
        """Variables declared in the body that may hold a different value in every thread
        (registers), as opposed to loop counters, which every thread steps alike."""
        counters = {b[0] for loop in self.index.fors for b in [loop_bounds(loop)] if b}
        return frozenset(
            d.name for decl in self.index.declarations if not decl.has("__shared__")
            for d in decl.declarators) - counters - set(self.layout.buffers)

    def _runtime_loops(self) -> list[A.For]:
        """The loops with a bound known only at run time that hold a barrier or pipeline operation."""
        return [loop for loop in self.index.fors
                if is_runtime_bound(loop) and self.index.of(loop.body) & SYNC_KINDS]

    def _check_init_counts(self) -> None:
        """An mbarrier `init` count that can never complete a phase (the first one) is implausible."""
        for ev in self.trace.all_events():
            if ev.kind == K.MBAR_INIT and ev.value is not None and ev.value <= 0:
                self.implausible.append((ev.node, f"mbarrier init count {ev.value} can never complete a phase"))
                break

    # ---------------------------------------------------------------- run-time trip counts
    def trip_scenarios(self) -> list[int]:
        """Trip counts to simulate for loops whose count is only known at run time.

        Every count from 0 to a little over one period of the slot/parity
        arithmetic (prologue- and drain-like short runs), then one whole period
        more (every residue of the moduli, in steady state): a property that
        holds for all of these holds for every trip count.  Kernels without
        such loops have no scenarios.
        """
        if not self.runtime_loops:
            return []
        period = self.period
        small = range(0, min(period, 16) + 3)
        steady = range(2 * period, 3 * period) if period <= 16 else range(2 * period, 2 * period + 1)
        return sorted(set(small) | set(steady))

    def feasible_trips(self) -> list[int]:
        """The trip scenarios the kernel's own bounds allow: zero iterations is ruled out when some
        run-time-bound loop provably runs at least once (`k < blockIdx.x + 1`: block indices are
        never negative), since all of them take the scenario's count."""
        trips = self.trip_scenarios()
        if trips and trips[0] == 0 and any(_at_least_once(loop) for loop in self.runtime_loops):
            trips = trips[1:]
        if trips and trips[0] == 0 and self._scenario_holds(0) is False:
            trips = trips[1:]         # `s < (bx < 2 ? bx + 2 : bx - 1)`: at least once in every block
        if trips and trips[-1] > 0 and self._scenario_holds(1) is False:
            trips = [t for t in trips if t == 0]     # no launch runs the loops at all
        return self._launchable(trips)

    def _launchable(self, trips: list[int]) -> list[int]:
        """`k_1 < min(bx, 2) - 1`: no launch runs the loop twice; each scenario is kept only if
        some launch has a count it stands for (`_represented`)."""
        if len(trips) < 2:
            return trips
        return [t for t in trips if self._represented(t) is not False]

    def _represented(self, trip: int) -> bool | None:
        """Whether some launch gives the run-time-bound loops a count scenario `trip` stands for:
        exactly `trip` for the short scenarios, any count past them with the same residue modulo
        the period for the steady-state ones (`trip_scenarios`).  None where a count is not an
        expression of the launch."""
        conditions = self.scenario_conditions(trip)
        if not conditions:
            return None
        span = self.func.span
        from .presburger import satisfiable
        from .threads import LaneRecipe

        uniform = self.trace.launch.uniform if self.trace.launch is not None else frozenset()
        return satisfiable(LaneRecipe(A.Number("0", span), 1, 1, (), (), 1, tuple(conditions), uniform=uniform))

    def barrier_split(self, node: A.Node) -> Witness | None:
        """Two threads of one block, in some launch, of which one reaches the block barrier `node`
        and the other does not, where its guards are conditions on the arguments and the thread
        index (`if (blockIdx.x * 256 + threadIdx.x < n) { ...; __syncthreads(); }`: the last, partial
        block); None where no such pair exists or it cannot be decided."""
        from dataclasses import replace

        from .presburger import decide

        for recipe in self.trace.barrier_guards.get(id(node), ()):
            for i, (cond, polarity) in enumerate(recipe.guards):
                skipped = replace(recipe, guards=(*recipe.guards[:i], (cond, not polarity)))
                verdict, witness = decide(recipe, skipped)
                if verdict is True and witness is not None:
                    return witness
        return None

    def scenario_sensitive(self) -> bool:
        """Whether a condition on the arguments that the walk took both ways reads a name of the
        run-time-bound loops' counts: a scenario's exact count may then rule a branch out, so the
        scenario is walked with its conditions (`with_trip`) rather than as this model."""
        counts = self.trip_counts()
        if not counts or not self.trace.parametric:
            return False
        names = {n.ident for c in counts for n in c.walk() if isinstance(n, A.Name)}
        return any(isinstance(n, A.Name) and n.ident in names for cond in self.trace.parametric for n in cond.walk())

    def scenario_conditions(self, trip: int) -> tuple[tuple[A.Expr, bool], ...]:
        """The counts scenario `trip` stands for, as conditions on the launch: `count == trip` for
        the short ones, `count > small` with `trip`'s residue modulo the period for the steady
        ones; () where a count is not an expression of the launch."""
        counts = self.trip_counts()
        small = min(self.period, 16) + 2
        span = self.func.span
        conditions: list[tuple[A.Expr, bool]] = []
        for c in counts:
            if trip == 0:             # no iteration: any count at most 0
                conditions.append((A.Binary("<=", c, A.Number("0", span), span), True))
            elif trip <= small:
                conditions.append((A.Binary("==", c, A.Number(str(trip), span), span), True))
            else:
                conditions.append((A.Binary(">", c, A.Number(str(small), span), span), True))
                residue = A.Binary("%", A.Binary("-", c, A.Number(str(trip), span), span),
                                   A.Number(str(self.period), span), span)
                conditions.append((A.Binary("==", residue, A.Number("0", span), span), True))
        return tuple(conditions)

    def _scenario_holds(self, trip: int) -> bool | None:
        """Whether some launch gives the run-time-bound loops a count of `trip` (0) or of at least
        1 (`trip` > 0), decided on the sets from their counts as expressions (`trip_counts`)."""
        recipe = self._scenario_recipe(trip)
        if recipe is None:
            return None
        from .presburger import satisfiable

        return satisfiable(recipe)

    def zero_trip_condition(self) -> str | None:
        """Where (block indices, kernel arguments) the run-time-bound loops run zero times, in
        C's names (`blockIdx.x == 2`), for a finding only that scenario shows; None if unknown."""
        recipe = self._scenario_recipe(0)
        if recipe is None:
            return None
        from .presburger import condition

        found = condition(recipe)
        return None if found in (None, "always") else found

    def _scenario_recipe(self, trip: int) -> Any:
        """A scenario's conditions as the guards of an access (`model.threads.LaneRecipe`) that
        touches nothing: what the set questions about a scenario take."""
        conditions = _trip_conditions(self.trip_counts(), trip)
        return self._conditions_recipe(conditions) if conditions else None

    def _conditions_recipe(self, conditions: tuple[tuple[A.Expr, bool], ...]) -> Any:
        """Conditions on the launch as the guards of an access (`model.threads.LaneRecipe`) that
        touches nothing: what the set questions about a scenario take."""
        from .threads import LaneRecipe

        return LaneRecipe(A.Number("0", self.func.span), 1, 1, (), (), 1, conditions,
                          uniform=self.trace.launch.uniform if self.trace.launch is not None else frozenset())

    def with_trip(self, trip: int, in_block_zero: bool = False) -> Self:
        """The same kernel simulated with its run-time-bound loops running `trip` times.

        Where every such loop's count is an expression of the launch (`Trace.trip_exprs`), the
        scenario holds under it as guards of every access: zero iterations where the count is at
        most 0, some where it is at least 1, so the sets meet only in blocks (and for arguments)
        where the scenario is real (issue 31, item 5).  `in_block_zero`: the scenario is block 0's
        (`block_zero_runs_zero`), the block every launch starts."""
        assumptions: tuple[tuple[A.Expr, bool], ...] = ()
        counts = self.trip_counts()
        if in_block_zero:
            assumptions = tuple((A.Binary("==", A.Member(A.Name(b, s), f, False, s), A.Number("0", s), s), True)
                                for s in [self.func.span] for b, f in _BLOCK_ZERO)
        elif counts:      # one tuple per kind of scenario: the solver's caches are keyed by node
            assumptions = self._conditions.setdefault(trip == 0, _trip_conditions(counts, trip))
        return type(self)(self.func, self.lines, runtime_trip=trip, index=self.index, stages=self.stages,
                          roles=self.roles, handoff_params=self.handoff_params, assumptions=assumptions,
                          scenario=() if in_block_zero or not counts else self.scenario_conditions(trip))

    def with_branches(self, forced: tuple[tuple[A.If, bool], ...]) -> Self:
        """The same kernel in the blocks where each block-uniform `if` of `forced` takes the given
        branch (`Trace.block_ifs`): only that branch is walked, and its condition guards every
        access, so a barrier in the other branch orders nothing here."""
        assumptions = self.assumptions + tuple((node.cond, polarity) for node, polarity in forced)
        return type(self)(self.func, self.lines, runtime_trip=self.runtime_trip, index=self.index, stages=self.stages,
                          roles=self.roles, handoff_params=self.handoff_params, assumptions=assumptions,
                          forced=tuple((id(node), polarity) for node, polarity in forced))

    def branches_hold(self, forced: tuple[tuple[A.If, bool], ...]) -> bool | None:
        """Whether some launch has a block where every `if` of `forced` takes the given branch."""
        from .presburger import satisfiable

        return satisfiable(self._conditions_recipe(tuple((node.cond, polarity) for node, polarity in forced)))

    def branches_condition(self, forced: tuple[tuple[A.If, bool], ...]) -> str | None:
        """Those blocks, as a condition on the block index and the arguments (`blockIdx.x >= 1`)."""
        from .presburger import condition

        found = condition(self._conditions_recipe(tuple((node.cond, polarity) for node, polarity in forced)))
        return None if found in (None, "always") else found

    def trip_counts(self) -> list[A.Expr]:
        """The run-time-bound loops' trip counts as expressions of the launch, or [] when one of
        them is not one (then no scenario has conditions: each is simulated as before)."""
        exprs = self.trace.trip_exprs
        found = [exprs.get(id(loop)) for loop in self.runtime_loops]
        counts = [e for e in found if e is not None]
        if not found or len(counts) < len(found):
            return []
        # every loop takes the scenario's count: conditions only where the loops count alike (`n`
        # and `n - 1`, or `bx` and `1 - bx`, would make a scenario's conditions contradict)
        from .evaluate import shape_of

        return counts if len({shape_of(e) for e in counts}) == 1 else []

    def block_zero_runs_zero(self) -> bool:
        """Whether block 0, which every launch starts, runs each run-time-bound loop zero times:
        their counts read only block indices and are at most 0 there (causal attention's first
        query tile).  A hazard of the zero-trip scenario in block 0 is then a hazard of every
        launch, not a condition on a count."""
        counts = self.trip_counts()
        zero = {f"{b}.{f}": 0 for b, f in _BLOCK_ZERO}
        for c in counts:
            value = evaluate(c, zero)
            if value is None or value > 0:
                return False
        return bool(counts)

    # ---------------------------------------------------------------- facts
    @property
    def buffers(self) -> dict[str, SharedBuffer]:
        return self.layout.buffers

    @property
    def barriers(self) -> dict[str, MBarrierArray]:
        return self.layout.barriers

    @property
    def roles(self) -> list[Role]:
        return self.trace.roles

    @property
    def loops(self) -> list[LoopInfo]:
        return list(self.trace.loops.values())

    @property
    def pipelined_loops(self) -> list[LoopInfo]:
        """The loops that carry pipeline operations, in the order the simulation met them."""
        return [loop for loop in self.trace.loops.values() if loop.pipelined]

    def _threads(self) -> int:
        """Threads per block from `__launch_bounds__` (128 without), within CUDA's 1..1024."""
        bounds = self.func.attribute("__launch_bounds__")
        if bounds and bounds.args:
            value = evaluate(bounds.args[0], {})
            if value is not None and MAX_THREADS < value <= 4 * MAX_THREADS:
                # the roles and barrier counts are written for the declared block (TileLang's warp
                # specialisation adds a producer group to a 1024-thread kernel): analysed as declared,
                # since clamped, a cascade of false count errors followed
                self.implausible.append((bounds, f"__launch_bounds__({value}) is above CUDA's {MAX_THREADS} threads "
                                                 f"per block: no launch of this kernel can succeed; analysed as "
                                                 f"declared"))
                return value
            if value is not None and not 1 <= value <= MAX_THREADS:
                self.implausible.append((bounds, f"__launch_bounds__({value}) is outside CUDA's 1..{MAX_THREADS} "
                                                 f"threads per block; analysed as {MAX_THREADS if value > 0 else 128}"))
                return MAX_THREADS if value > 0 else 128
            if value:
                return value
        return max(128, self._threads_the_text_needs())

    def _threads_the_text_needs(self) -> int:
        """Without `__launch_bounds__`, the block size the kernel's own text implies: a named
        barrier's thread count (`bar.sync 1, 256` waits for 256 threads), and a branch on
        `threadIdx.x < C` with an `else` (threads on both sides of C: the next power of two above
        C).  Hand-written producer/consumer kernels split a block this way; taken as 128 threads,
        their second half did not exist and a barrier both halves meet was a false count error."""
        need = max((self._named_count(call) for call in self.index.calls), default=0)
        need = max([need] + [self._split_at(branch) for branch in self.index.ifs if branch.other is not None])
        return min(need, MAX_THREADS)

    @staticmethod
    def _named_count(call: A.Call) -> int:
        intr = INTRINSICS.get(call.name)
        if intr is None or intr.kind not in (K.NAMED_SYNC, K.NAMED_ARRIVE) or intr.count is None \
                or len(call.args) <= intr.count:
            return 0
        value = evaluate(call.args[intr.count], {})
        return value if isinstance(value, int) and 0 < value <= MAX_THREADS else 0

    @staticmethod
    def _split_at(branch: A.If) -> int:
        cond = branch.cond
        if not isinstance(cond, A.Binary) or cond.op not in ("<", "<=", ">", ">="):
            return 0
        if not mentions(cond.left, {"threadIdx.x"}):
            return 0
        bound = evaluate(cond.right, {})
        if not isinstance(bound, int) or not 0 < bound < MAX_THREADS:
            return 0
        return 1 << bound.bit_length() if bound & (bound - 1) else 2 * bound

    def _stages(self) -> dict[str, BufferStages]:
        """Stride = gcd of offset changes caused by the pipeline variable alone, at the sites that
        rotate over the versions, of the buffers written inside a pipelined loop.

        A site rotates when some walked trips repeat an offset (the walk covers three periods of
        the slot arithmetic).  One whose offset never repeats moves inside the slot as well
        (`As[(k & 1) * 2048 + tx * 32 + k]`: 4096 bytes a version, 2 bytes a trip; a column
        chosen by a counter): its changes would make the gcd 2 bytes and thousands of "slots".
        It is left out where another site of the buffer rotates; a buffer no site of which
        rotates keeps the gcd of all."""
        strides: dict[str, int] = {}
        # the version dimension belongs to buffers the pipeline writes: a vector loaded once
        # before the loop and read there by the loop variable (`scs[k]`) has one version
        rewritten = {ev.buffer for ev in self.trace.all_events()
                     if ev.iteration and ev.buffer is not None and ev.access in ("write", "async")}
        for buffer, offsets in self._rotating_sites():
            if buffer not in rewritten:
                continue
            ordered = sorted(offsets)
            for a, b in zip(ordered, ordered[1:]):
                strides[buffer] = math.gcd(strides.get(buffer, 0), b - a)
        result = {}
        for buffer, stride in strides.items():
            if stride <= 0:
                continue
            slots = {ev.offset // stride for ev in self.trace.all_events()
                     if ev.buffer == buffer and ev.offset is not None}
            result[buffer] = BufferStages(buffer, stride, max(slots) + 1 if slots else 1,
                                          self._slot_span(buffer, stride))
        return result

    def _slot_span(self, buffer: str, stride: int) -> int:
        """The bytes from a slot's start that the buffer's accesses reach (at most the stride;
        0, the whole stride, where an access's bytes are unknown, a TMA box).

        The planner may space the versions wider than a version's tile: a pipelined loop nested
        in another spaces `As`'s two 4096-byte slots 12288 bytes apart, and the last slot ends
        where `Bs` begins.  Taken as the stride, the last slot overlapped `Bs`: a false
        `shared-overlap`, and `Bs`'s copies counted against `As`'s slot (held-out round 7)."""
        reach = 0
        for ev in self.trace.all_events():
            if ev.buffer != buffer:
                continue
            if ev.offset is None or ev.extent is None or ev.unknown_footprint or ev.possible:
                return 0
            reach = max(reach, ev.extent[1] - (ev.offset // stride) * stride)
        return reach if 0 < reach < stride else 0

    def _rotating_sites(self) -> list[tuple[str, set[int]]]:
        """Each access site's distinct offsets over the walked trips (by buffer, role, site),
        without the sites that never repeat one in a buffer where another site does (`_stages`)."""
        per_site: dict[tuple, dict[tuple, int]] = {}
        for ev in self.trace.all_events():
            if ev.buffer is None or ev.offset is None or not ev.iteration or ev.site is None:
                continue
            per_site.setdefault((ev.buffer, ev.role, ev.site), {})[ev.iteration] = ev.offset
        sites = [(key[0], set(points.values()), len(points)) for key, points in per_site.items()]
        rotating = {buffer for buffer, offsets, trips in sites if len(offsets) < trips}
        return [(buffer, offsets) for buffer, offsets, trips in sites
                if buffer not in rotating or len(offsets) < trips]

    def slot(self, ev: Event) -> int | None:
        """The stage slot an event touches (0 for unversioned buffers)."""
        if ev.buffer is None or ev.offset is None:
            return None
        stages = self.stages.get(ev.buffer)
        return ev.offset // stages.stride if stages else 0

    def byte_range(self, ev: Event, precise: bool = False) -> tuple[str, int, int] | None:
        """(space, start, end) an event may touch: its slot, or its whole buffer.

        `precise` narrows an unversioned buffer to the bytes the access's threads
        really touch (its footprint), for analyses that handle partial overlaps.
        Memoised per event (each simulation asks it of every access, every barrier trial).
        """
        key = (id(ev), precise)
        hit = self._byte_ranges.get(key)
        if hit is not None and hit[0] is ev:
            return hit[1]
        found = self._byte_range(ev, precise)
        self._byte_ranges[key] = (ev, found)
        return found

    def _byte_range(self, ev: Event, precise: bool) -> tuple[str, int, int] | None:
        buf = self.buffers.get(ev.buffer or "")
        if buf is None:
            return None
        stages = self.stages.get(buf.name)
        if stages and ev.offset is not None:
            start = buf.offset + (ev.offset // stages.stride) * stages.stride
            return buf.space, start, start + stages.slot_bytes
        if precise and ev.extent is not None and ev.extent[0] >= 0:
            # an unversioned buffer touched in parts (an unrolled two-stage prologue)
            return buf.space, buf.offset + ev.extent[0], buf.offset + ev.extent[1]
        end = buf.offset + buf.size if buf.size is not None else 1 << 40
        return buf.space, buf.offset, end

    def global_written_and_read(self) -> str | None:
        """A pointer parameter the kernel both stores to (or updates atomically) and loads from
        (the first, or None): redundancy claims are not made around such hand-offs."""
        # the in-block analysis finds races; a barrier's removal is not re-checked against it
        return min(self.handoff_params) if self.handoff_params else None

    def _handoff_params(self) -> frozenset[str]:
        """Pointer parameters the kernel both stores to (or updates atomically) and loads from:
        threads of one block may hand data to each other through them.  A name used more often
        than as the base of its stores is read somewhere (a load, a copy source, an argument)."""
        if self.func.body is None:
            return frozenset()
        uses: dict[str, int] = {}
        stores: dict[str, int] = {}
        for node in self.func.body.walk():
            if isinstance(node, A.Name) and not node.scope and node.ident in self.params:
                uses[node.ident] = uses.get(node.ident, 0) + 1
            target = None
            if isinstance(node, A.Assign):
                target = node.target
            elif isinstance(node, A.Call) and node.name.lower().startswith(("atomic", "tl::atomic")) and node.args:
                target = node.args[0]
            base = _pointer_base(target) if target is not None else None
            if base in self.params:
                stores[base] = stores.get(base, 0) + 1
        return frozenset(n for n, k in stores.items() if uses.get(n, 0) > k)

    def shift(self, a: Event, b: Event) -> int:
        """Where `b`'s buffer starts relative to `a`'s (aliases of one allocation; 0 for one buffer)."""
        ba, bb = self.buffers.get(a.buffer or ""), self.buffers.get(b.buffer or "")
        return bb.offset - ba.offset if ba is not None and bb is not None else 0

    def extent(self, name: str) -> tuple[str, int, int | None]:
        """(space, start, end) a buffer really occupies: all its versions, not just the gap
        to the next alias (None: unknown end)."""
        buf = self.buffers[name]
        st = self.stages.get(name)
        size = buf.size
        if st is not None:
            size = max(size or 0, st.stride * (st.versions - 1) + st.slot_bytes)
        return buf.space, buf.offset, (buf.offset + size) if size is not None else None

    def overlap(self, a: str, b: str) -> bool:
        sa, a0, a1 = self.extent(a)
        sb, b0, b1 = self.extent(b)
        if sa != sb or a == b:
            return False
        return (a1 is None or b0 < a1) and (b1 is None or a0 < b1)

    def _steady_iteration(self, events: list[Event]) -> tuple | None:
        """The middle iteration of the outermost pipelined loop: neither prologue- nor drain-like."""
        its = sorted({e.iteration for e in events if e.iteration and len(e.iteration) == 1},
                     key=lambda it: it[0][1])
        return its[len(its) // 2] if its else None

    def steady_wait(self) -> tuple[int, int] | None:
        """(N of the first `cp_async_wait<N>` in a steady-state iteration, cp.async commit groups
        per iteration), or None without a cp.async pipeline.

        The steady-state iteration is the middle one of the innermost loop whose iterations both
        commit and wait (`_steady_group_iteration`: a pipeline inside a plain loop over heads
        has its prologue commits and drain waits in the outer loop's iterations); N // groups is
        the number of stages in flight."""
        events = self.trace.events[0] if self.trace.events else []
        middle = _steady_group_iteration(events)
        if middle is None:
            return None
        in_it = [e for e in events if e.iteration == middle]
        waits = [e.value for e in in_it if e.kind == K.WAIT and e.value is not None]
        commits = sum(1 for e in in_it if e.kind == K.COMMIT)
        return (waits[0], commits) if waits and commits else None

    def barriers_per_iteration(self) -> int | None:
        """`__syncthreads` one steady-state iteration executes (the most over roles), or None
        without a pipelined loop: each is a stall of the whole block on the critical path."""
        counts = []
        for events in self.trace.events:
            middle = self._steady_iteration(events)
            if middle is not None:
                counts.append(sum(1 for e in events if e.iteration == middle and e.kind == K.SYNC))
        return max(counts) if counts else None

    def mbarrier_inits(self) -> dict[tuple[str, int], Event]:
        """The first `init` of each mbarrier (array, index), with its count in `.value`."""
        inits: dict[tuple[str, int], Event] = {}
        for ev in self.trace.all_events():
            if ev.kind == K.MBAR_INIT and ev.barrier and ev.value is not None:
                inits.setdefault(ev.barrier, ev)
        return inits

    def buffer_bytes(self, name: str, known: dict[str, int] | None = None) -> int | None:
        """Bytes a shared buffer occupies: a size known from elsewhere (the IR's shapes), its
        declaration, else all its versions (stride x versions)."""
        if known and name in known:
            return known[name]
        buf = self.buffers[name]
        if buf.size is not None:
            return buf.size
        st = self.stages.get(name)
        return st.stride * st.versions if st else None

    def dynamic_shared_bytes(self, known: dict[str, int] | None = None) -> int | None:
        """The end of the extern (dynamic) shared buffer: what the launch must request."""
        end = 0
        for buf in self.buffers.values():
            if buf.space != "dynamic":
                continue
            size = self.buffer_bytes(buf.name, known)
            if size is None:
                return None
            end = max(end, buf.offset + size)
        return end

    def shared_bytes(self, known: dict[str, int] | None = None) -> int | None:
        """Shared memory per block: dynamic end + static buffers + mbarriers (8 bytes each)."""
        dynamic = self.dynamic_shared_bytes(known)
        static = [self.buffer_bytes(b.name, known) for b in self.buffers.values() if b.space != "dynamic"]
        if dynamic is None or None in static:
            return None
        return dynamic + sum(s or 0 for s in static) + sum(8 * b.count for b in self.barriers.values())

    def origin(self, node: A.Node) -> Origin | None:
        """The TileLang Python position of a node, through `#line`."""
        return self.lines.origin(node.span.line) if self.lines else None


def _steady_group_iteration(events: list[Event]) -> tuple | None:
    """The middle iteration of the innermost loop whose iterations hold both a commit and a wait
    of their own (events at exactly that iteration): with the outer loops at their middle value,
    the middle one of its own values."""
    kinds: dict[tuple, set] = {}
    for e in events:
        if e.iteration and e.kind in (K.COMMIT, K.WAIT):
            kinds.setdefault(e.iteration, set()).add(e.kind)
    its = [it for it, found in kinds.items() if len(found) == 2]
    if not its:
        return None
    depth = max(len(it) for it in its)
    its = sorted((it for it in its if len(it) == depth), key=lambda it: [v for _, v in it])
    prefixes = sorted({it[:-1] for it in its}, key=lambda p: [v for _, v in p])
    outer = prefixes[len(prefixes) // 2]
    inner = [it for it in its if it[:-1] == outer]
    return inner[len(inner) // 2]
