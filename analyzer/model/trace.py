"""Symbolic execution of a kernel into per-role event traces.

Each *role* is a range of threads that takes the same branches (warp
specialization splits a block into producer and consumer roles on
`threadIdx.x < C`).  For each role the kernel body is walked once; loops that
hold pipeline operations are unrolled over their real trip count with
concrete loop variables, so stage slots, barrier indices and parities come
out as numbers.  Loops without such operations are walked once.  The result is
a list of `Event`s per role, in program order: the input of every
pipeline analysis.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..cuda import ast as A
from .evaluate import CompiledEvaluator, builtin_name, evaluate, interval, mentions, shape, shape_of, thread_index_call
from .fragments import FragmentTracker, FragmentUse
from .index import KernelIndex
from .intrinsics import (
    CONTROL_KINDS,
    ELECT,
    HARMLESS_PREFIXES,
    PIPELINE_KINDS,
    SYNC_KINDS,
    EventKind,
    Intrinsic,
    K,
    call_kind,
    type_bytes,
)
from .launch import INT_RANGE, Launch, launch_ranges, uniform_args
from .period import integer_locals
from .period import pipeline_period as period_of
from .shared import SharedLayout, SmemRef
from .symbolic import constant_truth
from .templates import Access, Protocol
from .templates import Sync as TemplateSync
from .templates import protocol as template_protocol
from .threads import LaneRecipe, ThreadSet, count, elect_extent, elected, lowest, members, span
from .wgmma import Descriptor, MmaShape, mma_shape
from .wgmma import footprint as wgmma_footprint
from .wgmma import points as wgmma_points

MAX_EVENTS = 200_000   # per role; a bigger kernel is analysed up to here
MAX_GUARD_POINTS = 1 << 16   # thread x loop-point evaluations of one guard
MAX_WHOLE = 256      # a loop with branches on its variable that cannot be placed is simulated whole up to here


@dataclass(frozen=True, slots=True)
class Role:
    """Threads `lo .. hi-1` of the block, which take the same branches on `threadIdx.x`.

    A plain kernel has one role (every thread); a warp-specialized one has a
    producer and one or more consumers.  Each role's events are simulated on
    their own (`Trace.events[index]`) and against each other (the mbarrier
    protocol); `mult` of an event counts threads of its role.
    """

    lo: int
    hi: int

    @property
    def threads(self) -> int:
        return self.hi - self.lo

    def __str__(self) -> str:
        return f"threads {self.lo}-{self.hi - 1}"


@dataclass(frozen=True, slots=True)
class Event:
    """One pipeline-relevant operation of one role, in program order, loops unrolled.

    * `kind`: what it is (`EventKind`: a cp.async, a commit, a wait, a barrier,
      a shared-memory access, a TMA load, an mbarrier operation, ...).
    * `node`: the AST node (a `Call`, an assignment) for locations and messages.
    * `role`, `mult`: the index of its role and how many of the role's threads
      execute it (an elected thread: 1; the whole role: its size).
    * `iteration`: where in the pipelined loops it happens — a tuple of
      `(loop id, value of the loop variable)`, outermost first, for each
      pipelined loop around it; `()` for the prologue and epilogue.  Events of
      the same steady-state iteration share it; `where` renders it.
    * `access`, `buffer`, `offset`, `extent`: for memory events, `"read"`,
      `"write"` or `"async"`, the shared buffer's name, the byte offset its first
      thread touches, and the bytes `[lo, hi)` every thread of the role touches.
    * `barrier`: `(array, index)` of the mbarrier (or `("bar.sync", id)`).
    * `value`: the event's number — N of `cp_async_wait<N>`, an mbarrier's init
      count, the parity of a wait, the bytes of an `expect_tx` — or None when it
      is only known at run time.
    * `guarded`: under a branch that splits the role (not every thread of it
      executes the event); `possible`: an unknown call that was handed a shared
      pointer (it may read or write it).
    * `lanes`: for accesses each thread makes at its own address (plain loads and
      stores, cp.async), how to compute every thread's bytes (`model.threads`); None
      for warp-collective or single-thread operations.
    * `threads`: the exact set of the block's threads that execute it (`model.threads`);
      `mult` is its size, except for warp-level issue (tcgen05.commit: one per warp).
    * `unknown_footprint`: a per-thread access whose index could not be evaluated, so the
      bytes it touches are unknown (a hazard through it is undecided, never an error).
    * `uncertain`: under a condition on data (`if (hist[tid] < k)`), so which of `threads`
      really execute it is unknown (a hazard between threads through it is undecided).
    """

    kind: EventKind
    node: A.Node
    role: int
    mult: int                                   # threads of the role that execute it
    iteration: tuple[tuple[int, int], ...]       # (pipelined loop id, loop variable value)
    access: str = ""                             # read | write | async
    buffer: str | None = None
    offset: int | None = None                 # bytes into the buffer (thread 0)
    site: tuple | None = None                 # what varies only with the pipeline
    barrier: tuple[str, int] | None = None
    value: int | None = None
    guarded: bool = False                        # under a branch that splits the role
    possible: bool = False                       # unknown call with a shared pointer
    extent: tuple[int, int] | None = None     # bytes [lo, hi) into the buffer, all threads
    lanes: LaneRecipe | None = field(default=None, compare=False)   # per-thread footprints
    threads: ThreadSet = field(default=0, compare=False)   # the block's threads that execute it
    unknown_footprint: bool = False       # a per-thread access whose index could not be evaluated
    uncertain: bool = False               # under a condition on data: its threads are a guess
    space: str | None = None              # global memory: the pointer parameter it accesses
    once: tuple[int, ...] = ()            # loops walked once around it (their iterations run unordered)
    internal: bool = False                # a barrier inside a modelled template: not the user's to remove
    retired: bool = False                 # a wgmma's read again where its group is waited for
    committed: bool = False               # a tcgen05 MMA's read: in flight until a tcgen05.commit's
                                          # mbarrier arrival, which fires when the MMAs complete
    awaited: bool = False                 # a wgmma's read at its issue: in flight until the wait that
                                          # retires its group (its `retired` copy), or the exit
    why: A.Node | None = field(default=None, compare=False)   # what left the footprint or threads unknown
    after_loop: bool = field(default=False, compare=False)    # outside the pipelined loops, after one
                                                              # of them (an epilogue, not a prologue)

    @property
    def where(self) -> str:
        """The loop iteration(s) the event belongs to, for messages: "5", "1,3", "prologue",
        "epilogue"."""
        return ",".join(str(v) for _, v in self.iteration) or ("epilogue" if self.after_loop else "prologue")

    @property
    def loop_id(self) -> int | None:
        return self.iteration[-1][0] if self.iteration else None


@dataclass
class LoopInfo:
    """A simulated loop: `trip` iterations from `start` (the model unrolls `simulated` of them:
    slots and parities repeat with the pipeline's period, so a congruent prefix ends in the
    same state).  `pipelined`: it carries pipeline operations; `runtime`: its trip count is
    only known at run time and `trip` is this scenario's (see `KernelModel.trip_scenarios`)."""

    node: A.For
    var: str
    start: int
    trip: int
    simulated: int
    pipelined: bool
    runtime: bool = False        # trip count known only at run time: `trip` is the scenario's


@dataclass
class Trace:
    """What one simulation of a kernel produced: each role's events (`events[i]` belongs to
    `roles[i]`), the loops walked by AST node id, whether the event budget cut it short,
    `tl::` calls the intrinsics table does not know, and cluster-scope facts."""

    roles: list[Role]
    events: list[list[Event]]
    loops: dict[int, LoopInfo] = field(default_factory=dict)
    truncated: bool = False
    unknown: dict[str, A.Call] = field(default_factory=dict)   # unknown tl:: calls, first use
    cluster: bool = False                                      # cluster-scope operations used
    cluster_barriers: frozenset[str] = frozenset()             # barriers other CTAs arrive on
    opaque_barriers: dict[str, A.Call] = field(default_factory=dict)   # handed to unmodelled calls
    launch: Launch | None = None        # kernel arguments, range guards, pairs met outside the launch
    # each run-time-bound loop's trip count as an expression of the launch values and the kernel
    # arguments (its bound minus its start, through the symbolic locals); None where it reads
    # anything else (a thread, memory, a local with no value)
    trip_exprs: dict[int, A.Expr | None] = field(default_factory=dict)
    # `if`s on the launch values and kernel arguments only (every thread of a block takes the same
    # branch) with a barrier, wait or arrival in a branch: the walk takes both branches in turn,
    # so a barrier in one counts for every block; `KernelModel.with_branches` walks one
    block_ifs: tuple[A.If, ...] = ()
    # statements that touch a wgmma's registers while it may still run (`model.fragments`)
    fragment_uses: tuple[FragmentUse, ...] = ()
    # conditions on the kernel arguments whose both branches were walked (a scenario's exact
    # count may rule one out: `KernelModel.scenario_sensitive`)
    parametric: tuple[A.Expr, ...] = ()
    # block barriers under conditions on arguments or threads: the guards of each walk of them
    barrier_guards: dict[int, list[LaneRecipe]] = field(default_factory=dict)
    # loops holding a barrier or a wait that were walked as one iteration (a step other than 1
    # with a run-time bound, a `while`): hazards between their iterations are not checked
    once_loops: tuple[A.Node, ...] = ()

    def all_events(self) -> Iterator[Event]:
        """Every role's events, role by role."""
        for evs in self.events:
            yield from evs

    def after(self, ev: Event) -> list[Event]:
        """The events `ev`'s role executes after it, in order (empty if `ev` is not in the trace)."""
        events = self.events[ev.role]
        at = next((n for n, e in enumerate(events) if e is ev), None)
        return events[at + 1:] if at is not None else []



def _deref(pointer: A.Expr) -> tuple[A.Expr, int | None]:
    """The operand of `*pointer` that indexes the parameter, and the bytes the load takes where
    a pointer cast says so: `*(uint4*)(P + i)`: the arithmetic is in P's type, 16 bytes."""
    while isinstance(pointer, A.Cast) and "*" not in pointer.type:
        pointer = pointer.operand
    if isinstance(pointer, A.Cast) and pointer.type.rstrip().endswith("*"):
        return pointer.operand, type_bytes(pointer.type.rstrip()[:-1])
    return pointer, None


def _pointer_elem(e: A.Expr) -> int | None:
    """The element bytes of the outermost pointer cast around `e` that has some (None: none)."""
    while isinstance(e, A.Cast):
        elem = type_bytes(e.type) if "*" in e.type else None
        if elem:
            return elem
        e = e.operand
    return None


def _uncast(e: A.Expr) -> A.Expr:
    while isinstance(e, A.Cast):
        e = e.operand
    return e


def _unconditional_pipeline_op(node: A.Node, var: str) -> bool:
    """Whether a pipeline operation (`PIPELINE_KINDS`) in `node` runs without a branch on `var`
    around it."""
    if isinstance(node, A.If) and mentions(node.cond, {var}):
        return False
    if isinstance(node, A.Call):
        intr = call_kind(node)
        if intr is not None and intr.kind in PIPELINE_KINDS:
            return True
    return any(_unconditional_pipeline_op(child, var) for child in node.children() if isinstance(child, A.Node))


_MIN_MAX = ("max", "min")


def _reads_memory_or_calls(value: A.Expr) -> bool:
    """Whether an expression reads memory or calls anything but integer min/max."""
    return any(isinstance(node, A.Index) or isinstance(node, A.Call) and node.name not in _MIN_MAX
               for node in value.walk())


def _branches(node: A.Node) -> Iterator[A.If]:
    """The `if` statements inside a loop body, nested ones included."""
    for n in node.walk():
        if isinstance(n, A.If):
            yield n


def _loop_bounds(loop: A.For) -> tuple[str, A.Expr, A.Expr, bool] | None:
    """(var, start, end, inclusive) for `for (int v = a; v < b; ++v)`, whatever a and b are."""
    found = stepped_bounds(loop)
    return found[:4] if found is not None and found[4] is None else None


def stepped_bounds(loop: A.For) -> tuple[str, A.Expr, A.Expr, bool, A.Expr | None] | None:
    """(var, start, end, inclusive, step) for `for (int v = a; v < b; v += s)`: step None for a
    unit step, else `s` (a block-stride loop's `blockDim.x`, a constant)."""
    init = loop.init
    if not (isinstance(init, A.Declaration) and len(init.declarators) == 1):
        return None
    d = init.declarators[0]
    cond = loop.cond
    if d.init is None or not (isinstance(cond, A.Binary) and cond.op in ("<", "<=")):
        return None
    if not (isinstance(cond.left, A.Name) and cond.left.ident == d.name):
        return None
    step = _step_of(loop.step, d.name)
    if isinstance(step, bool):
        return None
    return d.name, d.init, cond.right, cond.op == "<=", step


def _step_of(step: A.Expr | None, var: str) -> A.Expr | None | bool:
    """A loop's step: None for `++v` and `v += 1`, the expression `s` of `v += s` (not reading
    `v`), False for anything else."""
    if isinstance(step, A.Unary) and step.op == "++":
        return None
    if not (isinstance(step, A.Assign) and step.op == "+="):
        return False
    if evaluate(step.value, {}) == 1:
        return None
    return False if any(isinstance(n, A.Name) and n.ident == var for n in step.value.walk()) else step.value


_GEOMETRIC = {">>=": lambda v, k: v >> k, "<<=": lambda v, k: v << k, "*=": lambda v, k: v * k,
              "/=": lambda v, k: int(v / k), "+=": lambda v, k: v + k, "-=": lambda v, k: v - k}
_LEAST_STEP = {">>=": 0, "<<=": 0, "*=": 1, "/=": 1, "+=": 0, "-=": 0}     # a step that moves the variable
_TESTS = {"<": lambda v, c: v < c, "<=": lambda v, c: v <= c, ">": lambda v, c: v > c,
          ">=": lambda v, c: v >= c, "!=": lambda v, c: v != c}
MAX_GEOMETRIC = 64


def geometric_values(loop: A.For, env: dict) -> tuple[str, list[int]] | None:
    """(var, its values) of `for (v = a; v OP c; v >>= k)` (or `<<=`, `*=`, `/=`, and a constant
    `+=`/`-=` step other than 1) with `a`, `c` and `k` known here and the same in every thread;
    None for any other loop or more than `MAX_GEOMETRIC` values."""
    parts = _geometric_parts(loop)
    if parts is None:
        return None
    var, start_expr, test, bound_expr, op, step_expr = parts
    if any("threadIdx.x" in _names_of(e) for e in (start_expr, bound_expr, step_expr)):
        return None               # one thread's values, not the block's (`i = threadIdx.x; i += 128`)
    start, bound, k = evaluate(start_expr, env), evaluate(bound_expr, env), evaluate(step_expr, env)
    if not (isinstance(start, int) and isinstance(bound, int) and isinstance(k, int)) or k <= _LEAST_STEP[op]:
        return None
    values: list[int] = []
    value = start
    while _TESTS[test](value, bound) and len(values) <= MAX_GEOMETRIC:
        values.append(value)
        value = _GEOMETRIC[op](value, k)
    return (var, values) if len(values) <= MAX_GEOMETRIC else None


def _geometric_parts(loop: A.For) -> tuple[str, A.Expr, str, A.Expr, str, A.Expr] | None:
    """(var, start, test, bound, step operator, step) of a loop that scales its own variable."""
    init, cond, step = loop.init, loop.cond, loop.step
    if not (isinstance(init, A.Declaration) and len(init.declarators) == 1):
        return None
    d = init.declarators[0]
    if d.init is None or not (isinstance(step, A.Assign) and step.op in _GEOMETRIC
                              and isinstance(step.target, A.Name) and step.target.ident == d.name):
        return None
    if not (isinstance(cond, A.Binary) and cond.op in _TESTS and isinstance(cond.left, A.Name)
            and cond.left.ident == d.name):
        return None
    return d.name, d.init, cond.op, cond.right, step.op, step.value


def _loop_header(loop: A.For, runtime_trip: int | None = None) -> tuple[str, int, int] | None:
    """(var, start, trip) of a counted loop.

    Constant bounds give the real trip count.  A bound only known at run time
    (`k < (end - start + 63) >> 6`, causal `k < blockIdx.x + 1`) takes the
    trip count of the scenario being simulated (`runtime_trip`; None: the loop
    is not counted); an unknown start is taken as 0, the same for every role,
    so producer and consumer loops stay in step.
    """
    bounds = _loop_bounds(loop)
    if bounds is None:
        return None
    var, start_expr, end_expr, inclusive = bounds
    start = evaluate(start_expr, {})
    end = evaluate(end_expr, {})
    if start is None and end is None:
        # `k = s; k < s + 2` with a run-time s: the trip count is the difference, a constant
        end = CompiledEvaluator({shape(start_expr): 0})(end_expr, {})
        start = 0 if end is not None else None
    if start is not None and end is not None:
        return var, start, max(0, end - start + (1 if inclusive else 0))
    const = _constant_count(loop, start_expr, end_expr, inclusive)
    if const is not None:
        return var, start if start is not None else 0, const
    if runtime_trip is None:
        return None
    return var, start if start is not None else 0, runtime_trip


_CONSTANT_COUNTS: dict[int, tuple[A.For, int | None]] = {}
_BLOCK_ZERO = {"blockIdx.x": 0, "blockIdx.y": 0, "blockIdx.z": 0}


def _constant_count(loop: A.For, start: A.Expr, end: A.Expr, inclusive: bool) -> int | None:
    """The trip count of a loop whose bounds are known only at run time but whose count is the
    same in every block (`for (k = max(0, bx - 2); k < max(2, bx); ++k)`: 2), or None.  The
    candidate is block 0's count; isl decides that no launch gives another
    (`model.presburger.satisfiable`), so the loop is simulated exactly instead of per scenario."""
    hit = _CONSTANT_COUNTS.get(id(loop))
    if hit is not None and hit[0] is loop:
        return hit[1]
    count: A.Expr = A.Binary("-", end, start, loop.span)
    if inclusive:
        count = A.Binary("+", count, A.Number("1", loop.span), loop.span)
    found = None
    candidate = evaluate(count, _BLOCK_ZERO)
    if candidate is not None and candidate >= 0:
        from .presburger import satisfiable
        from .threads import LaneRecipe

        differs = A.Binary("!=", count, A.Number(str(candidate), loop.span), loop.span)
        if satisfiable(LaneRecipe(A.Number("0", loop.span), 1, 1, (), (), 1, ((differs, True),))) is False:
            found = candidate
    if len(_CONSTANT_COUNTS) > 4096:
        _CONSTANT_COUNTS.clear()
    _CONSTANT_COUNTS[id(loop)] = (loop, found)
    return found


def loop_bounds(loop: A.For) -> tuple[str, A.Expr, A.Expr, bool] | None:
    """(var, start, end, inclusive) of a counted loop (public form of `_loop_bounds`)."""
    return _loop_bounds(loop)


def is_runtime_bound(loop: A.For) -> bool:
    """A counted loop whose trip count is only known at run time."""
    return _loop_bounds(loop) is not None and _loop_header(loop) is None


MAX_ROLE_CUTS = 8   # a condition that splits the block more finely is data-parallel, not a role


def pipeline_period(index: KernelIndex, tracked: frozenset[str] = frozenset(),
                    params: frozenset[str] = frozenset()) -> int:
    """One period for all pipelined loops, so producer and consumer loops stay in step
    (`period.pipeline_period`: what it counts and why)."""
    loops = [(node, header[0]) for node in index.fors
             if index.of(node.body) & PIPELINE_KINDS and (header := _loop_header(node, 0)) is not None]
    return period_of(index, loops, tracked, params)


def find_roles(ifs: list[A.If], threads: int, selectors: tuple[A.Expr, ...] = ()) -> list[Role]:
    """Split [0, threads) wherever an `if` on `threadIdx.x` alone changes its outcome, or a
    `selector` its value.

    Each condition is evaluated for every thread of the block (at most 1024),
    so `threadIdx.x < 128`, `(threadIdx.x >> 5) == 0` and `threadIdx.x / 128 == 1`
    all give exact warp roles.  A condition whose outcome flips more than a few
    times (`threadIdx.x & 1`) partitions data, not roles, and is not a cut.  A selector is
    an mbarrier's index that names a barrier per thread group (`bar[threadIdx.x >> 7].arrive()`,
    `TraceBuilder.barrier_selectors`): like a branch, it gives each group its own barrier.
    """
    cuts = {0, threads}
    evaluator = CompiledEvaluator()
    splits: list[tuple[A.Expr, Callable[[Any], object], tuple[dict[str, int], ...]]] = [
        (n.cond, bool, ({},)) for n in ifs]
    splits += [(e, _same, _selector_bindings(e)) for e in selectors]
    for expr, outcome, bindings in splits:
        if not mentions(expr, {"threadIdx.x"}):
            continue
        for binding in bindings:
            env = {**binding, "threadIdx.x": 0}
            values = []
            for tid in range(threads):
                env["threadIdx.x"] = tid
                values.append(evaluator(expr, env))
            if None in values:
                continue
            flips = [tid for tid in range(1, threads) if outcome(values[tid]) != outcome(values[tid - 1])]
            if len(flips) <= MAX_ROLE_CUTS:
                cuts.update(flips)
    bounds = sorted(cuts)
    return [Role(a, b) for a, b in zip(bounds, bounds[1:])]


# values given to the other names of a barrier selector, each in turn (`_selector_bindings`)
_SELECTOR_SAMPLES = 4


def _selector_bindings(expr: A.Expr) -> tuple[dict[str, int], ...]:
    """Values for the names of a barrier index other than the thread's: the ping-pong consumer's
    `empty[((kk * 2) + (threadIdx.x >> 7)) % 3]` names another barrier per warp group at every
    `kk`.  Which threads share a barrier is read at a few values of the others (all at once), and
    each sample's cuts split the roles, as a branch on the thread would."""
    names = [n for n in _names_of(expr) if n != "threadIdx.x"]
    if not names:
        return ({},)
    return tuple(dict.fromkeys(names, v) for v in range(_SELECTOR_SAMPLES))


def _same(value: object) -> object:
    return value


class TraceBuilder:
    def __init__(self, func: A.FunctionDef, layout: SharedLayout, threads: int, index: KernelIndex,
                 runtime_trip: int | None = None, roles: list[Role] | None = None,
                 global_params: frozenset[str] = frozenset(),
                 assumptions: tuple[tuple[A.Expr, bool], ...] = (),
                 forced: tuple[tuple[int, bool], ...] = (),
                 scenario: tuple[tuple[A.Expr, bool], ...] = ()) -> None:
        self.func = func
        # the scenario's exact count (`KernelModel.scenario_conditions`): which branches on the
        # arguments it rules out (`_RoleWalker._contradicted`); never a guard of an access
        self.scenario = scenario
        # conditions on the launch a trip-count scenario holds under (`KernelModel.with_trip`):
        # guards of every access, so the sets meet only where the scenario's count is real
        self.assumptions = assumptions
        self.contradictions: dict[tuple, bool] = {}     # `_RoleWalker._contradicted`, per condition and values
        self.barrier_guards: dict[int, list[LaneRecipe]] = {}   # `_RoleWalker._record_barrier_guards`
        self.once_loops: dict[int, A.Node] = {}    # loops with a barrier or wait walked as one iteration
        self.parametric: dict[int, A.Expr] = {}         # the conditions on arguments walked (both branches)
        # block-uniform `if`s (by node id) walked down one branch only (`KernelModel.with_branches`)
        self.forced = dict(forced)
        self.block_ifs: dict[int, A.If] = {}
        self._sync_stmts: dict[int, bool] = {}
        self.trip_exprs: dict[int, A.Expr | None] = {}
        self.global_params = global_params    # global buffers the block both writes and reads
        self.runtime_trip = runtime_trip
        self.roles = roles                      # given: the same for every trip-count scenario
        self._headers: dict[int, tuple[str, int, int] | None] = {}
        self.layout = layout
        self.threads = threads
        self.kinds = index
        memo = index.memo
        if "eval" not in memo:
            memo["eval"], memo["reads"], memo["inert"] = CompiledEvaluator(self._runtime_starts()), {}, {}
        self.eval: CompiledEvaluator = memo["eval"]
        self._reads: dict[int, list] = memo["reads"]
        # locals whose values the walker tracks: scalars and arrays declared in the body
        # (integers only: floating-point registers never index memory or count phases)
        self.local_names = integer_locals(index)
        if "local_arrays" not in memo:      # register arrays: a wgmma's operands (`model.fragments`)
            memo["local_arrays"] = frozenset(d.name for n in func.walk() if isinstance(n, A.Declaration)
                                             and not n.has("__shared__") for d in n.declarators if d.dims)
        self.local_arrays: frozenset[str] = memo["local_arrays"]
        self._inert: dict[int, bool] = memo["inert"]
        self._masks: dict[tuple, tuple[ThreadSet, ThreadSet] | None] = memo.setdefault("masks", {})
        self.loops: dict[int, LoopInfo] = {}
        self.truncated = False
        self.unknown: dict[str, A.Call] = {}      # tl:: calls the intrinsics table does not know
        self.cluster = any("cluster" in name for name in index.call_names)   # cluster-scope operations
        self.cluster_barriers: set[str] = set()   # barrier arrays that CTAs of a cluster share
        self.opaque_barriers: dict[str, A.Call] = {}   # barrier arrays handed to calls not modelled
        self.uniform = uniform_args(func)        # integer kernel arguments: parameters of the sets
        self.launch = Launch(self.uniform)       # the blocks a launch covers (its range guards)
        self.pointer_args = frozenset(p.name for p in func.params if p.name and "*" in p.type)
        self._global_stmts: dict[int, bool] = {}
        self._rotating: dict[int, bool] = {}

    def synchronises(self, node: A.Node) -> bool:
        """Whether a statement holds a barrier, a wait or an arrival (a call whose kind orders)."""
        found = self._sync_stmts.get(id(node))
        if found is None:
            found = self._sync_stmts[id(node)] = any(
                isinstance(n, A.Call) and (n.name == "__syncthreads" or _orders(n)) for n in node.walk())
        return found

    def touches_global(self, node: A.Node) -> bool:
        """Whether a statement names a pointer argument of the kernel (global memory)."""
        found = self._global_stmts.get(id(node))
        if found is None:
            pointers = self.pointer_args
            found = self._global_stmts[id(node)] = any(
                isinstance(n, A.Name) and not n.scope and n.ident in pointers for n in node.walk())
        return found

    def _runtime_starts(self) -> dict:
        """Run-time loop starts (`k = max(0, bx - 2)`, `k = by * 4`), taken as 0 wherever spelled.

        Slots and parities are written relative to the start
        (`(k - max(0, bx - 2)) & 1`); binding the start's every occurrence to the
        value the loop variable starts from keeps them exact.
        """
        opaque = {}
        for loop in self.kinds.fors:
            bounds = _loop_bounds(loop)
            if bounds is not None and evaluate(bounds[1], {}) is None:
                opaque[shape(bounds[1])] = 0
        return opaque

    def inert(self, s: A.Node) -> bool:
        """Whether walking a statement can change nothing the model records: no shared-memory
        access, no call, no store to a tracked local (register arithmetic, global stores).
        Decided once per statement; unrolled compute is then skipped in every simulated
        iteration instead of being re-walked."""
        found = self._inert.get(id(s))
        if found is None:
            found = self._inert[id(s)] = self._decide_inert(s)
        return found

    def _decide_inert(self, s: A.Node) -> bool:
        if isinstance(s, A.Compound):
            return all(self.inert(c) for c in s.body)
        if isinstance(s, A.ExprStmt):
            return self._inert_expr(s.expr)
        if isinstance(s, A.Declaration):
            return not s.has("__shared__") and all(
                d.init is None or (d.name not in self.local_names and not self.reads_of(d.init))
                for d in s.declarators)
        if isinstance(s, A.For):
            return self.inert(s.body) and not self.kinds.of(s)
        return False

    def _inert_expr(self, e: A.Expr) -> bool:
        """An expression statement that touches no shared memory, calls nothing and stores to no
        local the walk tracks."""
        if isinstance(e, A.Assign):
            return (self.layout.ref(e.target) is None and not self.reads_of(e.target)
                    and not self.reads_of(e.value) and not self._stores_local(e.target))
        if isinstance(e, A.Unary) and e.op in ("++", "--"):
            return not self._stores_local(e.operand) and not self.reads_of(e.operand)
        return not isinstance(e, A.Call) and not self.reads_of(e)

    def _stores_local(self, target: A.Expr) -> bool:
        base = target.base if isinstance(target, A.Index) else target
        return isinstance(base, A.Name) and base.ident in self.local_names

    def reads_of(self, e: A.Expr) -> list:
        """Calls and memory reads in an expression, found once per node: each read with the
        conditions of the `?:` branches it is in."""
        cached = self._reads.get(id(e))
        if cached is not None:
            return cached
        found: list = []
        stack: list[tuple[A.Node, tuple]] = [(e, ())]
        while stack:
            n, guards = stack.pop()
            if isinstance(n, A.Call):
                found.append(n)
                continue
            if isinstance(n, A.Index) or (isinstance(n, A.Unary) and n.op == "*"):
                ref = self.layout.ref(n)
                if ref is not None:
                    found.append((n, ref, guards))
                    continue
                gref = self.global_ref(n)
                if gref is not None:
                    found.append((n, gref, guards))
            if isinstance(n, A.Ternary):
                # `c ? s[t + 1] : v`: each branch's reads happen only where it is taken
                stack.extend([(n.other, (*guards, (n.cond, False))), (n.then, (*guards, (n.cond, True))),
                              (n.cond, guards)])
                continue
            stack.extend((kid, guards) for kid in reversed(n.children()))
        self._reads[id(e)] = found
        return found

    def thread_masks(self, cond: A.Expr, env: dict, active: ThreadSet,
                     loop_vars: dict[str, tuple[int, int]]) -> tuple[ThreadSet, ThreadSet] | None:
        """(threads of `active` for which `cond` holds for some value of `loop_vars`, those for
        which it fails for some value), or None when it cannot be evaluated for some thread.

        Evaluated for every thread (and every combination of the once-walked loop variables
        it reads), once per condition, thread set and values of the other names it reads (a
        guard inside an unrolled loop is re-evaluated only when they change).
        """
        names = tuple(n for n in _names_of(cond) if n != "threadIdx.x" and n not in loop_vars)
        key = (id(cond), active, tuple(env.get(n) for n in names), tuple(sorted(loop_vars.items())))
        memo = self._masks
        if key in memo:
            return memo[key]
        local = dict(env)
        axes = [range(lo, hi + 1) for lo, hi in loop_vars.values()]
        if math.prod(max(0, a.stop - a.start) for a in axes) * active.bit_count() > MAX_GUARD_POINTS:
            memo[key] = None
            return None
        taken = skipped = 0
        found: tuple[ThreadSet, ThreadSet] | None = None
        ok = True
        for t in members(active):
            local["threadIdx.x"] = t
            for combo in itertools.product(*axes):
                local.update(zip(loop_vars, combo))
                value = self.eval(cond, local)
                if value is None:
                    ok = False
                    break
                if value:
                    taken |= 1 << t
                else:
                    skipped |= 1 << t
            if not ok:
                break
        if ok:
            found = (taken, skipped)
        memo[key] = found
        return found

    def global_ref(self, e: A.Expr) -> SmemRef | None:
        """`P[i]`, `*(T*)(P + i)`, `((T*)P)[i]` for a tracked global pointer parameter P, as a
        reference whose buffer is `global:P` (an address space of its own, never shared memory)."""
        if not self.global_params:
            return None
        width = None
        base = e
        if isinstance(base, A.Unary) and base.op == "*":
            base, width = _deref(base.operand)
        elem, index = _pointer_elem(base), None
        base = _uncast(base)
        if isinstance(base, A.Index):
            index, base = base.index, base.base
        elif isinstance(base, A.Binary) and base.op == "+":
            index, base = base.right, base.left
        elem = elem or _pointer_elem(base)
        base = _uncast(base)
        if not (isinstance(base, A.Name) and not base.scope and base.ident in self.global_params):
            return None
        elem = elem or type_bytes(self.param_types.get(base.ident, "")) or 1
        return SmemRef(f"global:{base.ident}", elem, index, width)

    @functools.cached_property
    def param_types(self) -> dict[str, str]:
        return {p.name: p.type for p in self.func.params if p.name}

    @functools.cached_property
    def period(self) -> int:
        """One period for all pipelined loops, so producer and consumer loops stay in step."""
        return pipeline_period(self.kinds, self.global_params, frozenset(p.name for p in self.func.params if p.name))

    @functools.cached_property
    def breakpoints(self) -> dict[int, frozenset[int] | None]:
        """Per trip count, the iterations (counted from each loop's start) at which a branch inside
        a loop of that count changes its outcome (`if (k != 25)`, `if (k_1 < 31)`): the simulation
        must run them with their own values, since the pipeline state after them need not repeat
        with the period.  Keyed by the count, so that a producer loop and its consumer loop (the
        same count) are simulated at the same iterations and stay in step.  None for a count where
        a branch on a loop variable cannot be evaluated from the variable alone (it also reads a
        block index, a register or memory): such loops are simulated whole, up to `MAX_WHOLE`."""
        found: dict[int, frozenset[int] | None] = {}
        for loop in self.kinds.fors:
            header = self.header(loop)
            if header is None or not (self.kinds.of(loop.body) & CONTROL_KINDS):
                continue
            var, start, trip = header
            points = found.setdefault(trip, frozenset())
            if points is None:
                continue
            for branch in _branches(loop.body):
                if not (mentions(branch.cond, {var}) and self.kinds.of(branch) & CONTROL_KINDS):
                    continue
                outcomes = [self.eval(branch.cond, {var: start + n}) for n in range(min(trip, MAX_WHOLE) + 1)]
                if None in outcomes:
                    found[trip] = points = None
                    break
                points = points | {n for n in range(1, len(outcomes)) if bool(outcomes[n]) != bool(outcomes[n - 1])}
            if points is not None:
                found[trip] = points
        return found

    def iterations(self, trip: int) -> list[int] | None:
        """The iterations (from the loop's start) a loop of `trip` iterations is simulated at, or
        None for all of them.  Slots and parities repeat with the period, so a prefix of three
        periods congruent to the trip count ends in the state of the whole loop.  Where a branch
        changes at some iteration (`breakpoints`), the walk takes three periods, the periods around
        each breakpoint and the last period, entering each stretch at an iteration congruent to
        where it left off: every skipped stretch is a whole number of periods in which no branch
        changes."""
        period = self.period
        if trip <= 4 * period + 4:
            return None
        points = self.breakpoints.get(trip, frozenset())
        if points is None:
            return None if trip <= MAX_WHOLE else list(range(3 * period + trip % period))
        if not any(b < trip for b in points):
            return list(range(3 * period + trip % period))      # the prefix congruent to the count
        keep = set(range(3 * period)) | set(range(trip - period, trip))
        for b in points:
            if b < trip:
                keep.update(range(max(0, b - period), min(trip, b + 2 * period)))
        values: list[int] = []
        for n in sorted(keep):
            if values and n - values[-1] > 1:
                gap = n - values[-1] - 1
                values.extend(range(values[-1] + 1, values[-1] + 1 + gap % period))   # whole periods skipped
            values.append(n)
        return values

    def rotates(self, loop: A.For, var: str) -> bool:
        """Whether a loop inside a pipelined loop is a pipeline dimension of its own: some pipeline
        operation in it runs at every iteration.  An inner loop over a tile's k-chunks that
        arrives on the outer iteration's barrier at one of its steps only (`if (ki == 1)
        bar[k & 1].arrive()`) releases the outer iteration's slot once; its variable selects no
        slot (its chunks are offsets within one)."""
        found = self._rotating.get(id(loop))
        if found is None:
            found = self._rotating[id(loop)] = _unconditional_pipeline_op(loop.body, var)
        return found

    def header(self, loop: A.For) -> tuple[str, int, int] | None:
        """`_loop_header` of a loop under this build's trip count, once per loop (loops inside
        unrolled loops are reached many times)."""
        key = id(loop)
        if key not in self._headers:
            # the scenario's count is the count of the loops that synchronise (`KernelModel.
            # runtime_loops`); a data loop with a run-time bound (`for (x = 0; x < d; ++x)`) is a
            # symbol: its variable ranges over [start, end) in the sets (`_Walk.walk_symbolic`)
            trip = self.runtime_trip if self.kinds.of(loop.body) & SYNC_KINDS else None
            self._headers[key] = _loop_header(loop, trip)
        return self._headers[key]

    def barrier_selectors(self) -> tuple[A.Expr, ...]:
        """The indices of mbarrier arrays that depend on the thread (`bar[threadIdx.x >> 7]`):
        each thread uses the barrier its own index names, so they split the roles."""
        found = []
        for call in self.kinds.calls:
            callee = call.callee
            target = callee.base if isinstance(callee, A.Member) else (
                _strip_address(call.args[0]) if call.args else None)
            ref = self.layout.barrier_ref(target) if target is not None else None
            if ref is not None and mentions(ref[1], {"threadIdx.x"}):
                found.append(ref[1])
        return tuple(found)

    def build(self) -> Trace:
        assert self.func.body is not None
        roles = self.roles if self.roles is not None else find_roles(self.kinds.ifs, self.threads,
                                                                     self.barrier_selectors())
        events = []
        uses: list[FragmentUse] = []
        for index, role in enumerate(roles):
            walker = _RoleWalker(self, index, role)
            walker.stmt(self.func.body, walker.locals, role.threads, (), False)
            walker.retire_at_exit()
            _mark_epilogue(walker.events)
            events.append(walker.events)
            uses.extend(walker.fragments.uses.values())
        return Trace(roles, events, self.loops, self.truncated, dict(self.unknown), self.cluster,
                     frozenset(self.cluster_barriers), dict(self.opaque_barriers), self.launch,
                     dict(self.trip_exprs), tuple(self.block_ifs.values()), tuple(uses),
                     tuple(self.parametric.values()), dict(self.barrier_guards), tuple(self.once_loops.values()))


def _mark_epilogue(events: list[Event]) -> None:
    """Mark the events outside the pipelined loops that come after one of them (`Event.where`
    says "epilogue" for them).  Set in place, before anything holds the events: the flag takes no
    part in an event's equality or hash."""
    seen = False
    for ev in events:
        if ev.iteration:
            seen = True
        elif seen:
            object.__setattr__(ev, "after_loop", True)


class _RoleWalker:
    def __init__(self, builder: TraceBuilder, index: int, role: Role) -> None:
        self.b = builder
        self.index = index
        self.role = role
        self.events: list[Event] = []
        self.descriptors: dict[str, tuple[str, int]] = {}
        self.desc_layouts: dict[str, tuple[int, int, int] | None] = {}
        self._operand_extents: dict[tuple, tuple[int, int] | None] = {}
        self.wgmma_open: list[Event] = []            # wgmma reads issued since the last commit
        self.wgmma_groups: list[list[Event]] = []    # committed groups not yet waited for
        self.fragments = FragmentTracker(index)      # their register arrays (`model.fragments`)
        self.desc_sites: dict[str, tuple] = {}
        self.pipeline_vars: set[str] = set()
        # One environment per role, mutated in place: loop variables (restored
        # after their loop), `threadIdx.x` (the role's first thread, a real
        # thread of the role), and values of local scalars and array elements
        # (`phase_cnt[0]`), which persistent kernels count mbarrier phases in.
        # the block is the model's threads: `blockDim.x` is their count (a block-stride loop's
        # `i += blockDim.x` steps over exactly them)
        self.locals: dict[str, int] = {"threadIdx.x": role.lo, "blockDim.x": builder.threads}
        # The block's threads that reach the statement being walked, as far as conditions on
        # the thread index go (every role's, so an election sees the whole warp); the events
        # of this role are executed by `active & role_mask`.
        self.role_mask: ThreadSet = span(role.lo, role.hi)
        self.active: ThreadSet = span(0, builder.threads)
        # Conditions on the thread index or on once-walked loop variables around the statement
        # (each with the branch taken): they select which (thread, iteration) points run it,
        # so footprints are enumerated over those points only.
        self.guards: list[tuple[A.Expr, bool]] = list(builder.assumptions)
        self.uncertain = 0        # > 0: under a condition on data (which threads run it is unknown)
        self.uncertain_conds: list[A.Expr] = []    # those conditions, innermost last
        # locals with no number here whose value is an expression of the launch values and the
        # kernel arguments (`condval = bx < 2 ? bx : bx - 2`): substituted into indices and
        # guards, so the sets take them exactly (issue 31, item 1: locals as expressions)
        self.symbolic: dict[str, A.Expr] = {}
        self.thread_locals: set[str] = set()      # locals whose value differs between threads (`_per_thread`)
        self._substituted: dict[tuple, A.Expr] = {}
        self.once_stack: list[int] = []    # loops walked once (no barrier inside) around the statement
        self.loop_stack: list[tuple[str, int]] = []
        # Value ranges for footprints: every thread of the role, and the variables
        # of loops walked once for all their iterations.
        self.ranges: dict[str, tuple[int, int]] = {"threadIdx.x": (role.lo, role.hi - 1)}
        self._extents: dict[tuple, tuple[int, int] | None] = {}

    # -------------------------------------------------------------- statements
    def stmt(self, s: A.Node, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        if len(self.events) > MAX_EVENTS:
            self.b.truncated = True
            return
        if isinstance(s, A.Compound):
            self.block(s, env, mult, it, guarded)
        elif isinstance(s, A.ExprStmt):
            self.fragments.visit(s)
            self.expr_stmt(s.expr, env, mult, it, guarded)
        elif isinstance(s, A.Declaration):
            self.fragments.visit(s)
            self.declaration(s, env, mult, it, guarded)
        elif isinstance(s, A.For):
            self.for_loop(s, env, mult, it, guarded)
        elif isinstance(s, A.If):
            self.if_stmt(s, env, mult, it, guarded)
        elif isinstance(s, A.While):
            if self.b.kinds.of(s.body) & SYNC_KINDS:
                self.b.once_loops.setdefault(id(s), s)
            self.once_stack.append(id(s))        # walked once for every iteration it may run
            self.stmt(s.body, env, mult, it, True if self.b.kinds.mentions(s.cond, "threadIdx.x") else guarded)
            self.once_stack.pop()

    def block(self, s: A.Compound, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        """A compound statement's statements; the inert ones (register arithmetic) are skipped,
        except that they may touch a wgmma's registers in flight (`model.fragments`)."""
        inert = self.b.inert
        for child in s.body:
            if not inert(child):
                self.stmt(child, env, mult, it, guarded)
            else:
                self.fragments.visit(child)

    def declaration(self, s: A.Declaration, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        for d in s.declarators:
            if d.init is not None and not s.has("__shared__"):
                self.reads_in(d.init, env, mult, it, guarded)
                if d.name in self.b.local_names:
                    self.declare_local(d, env)

    def for_loop(self, loop: A.For, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        kinds = self.b.kinds.of(loop.body)
        header = self.b.header(loop)
        if is_runtime_bound(loop):
            self._record_trip(loop, env)
        if header is None and self._without_header(loop, kinds, env, mult, it, guarded):
            return
        if not (kinds & SYNC_KINDS) or header is None:
            self.walk_once(loop, header, env, mult, it, guarded)
            return
        var, start, trip = header
        pipelined = bool(kinds & PIPELINE_KINDS) and (not it or self.b.rotates(loop, var))
        if not (kinds & CONTROL_KINDS):
            # Only data movement (e.g. the unrolled cp.async of one tile): its
            # iterations touch the same stage slot, so one walk stands for all.
            saved = env.get(var, _UNSET)
            env[var] = start
            self.loop_stack.append((var, start))
            self.walk_once(loop, header, env, mult, it, guarded)
            self.loop_stack.pop()
            _restore(env, var, saved)
            return
        # Slots and parities repeat with the period: a prefix, the breakpoints' neighbourhoods and
        # the last iterations stand for the whole loop (`TraceBuilder.iterations`).  The work is
        # bounded by the period and the branches, never by a count read from the input.
        steps = self.b.iterations(trip)
        values = range(start, start + trip) if steps is None else [start + n for n in steps]
        self.b.loops.setdefault(id(loop), LoopInfo(
            loop, var, start, trip, len(values), pipelined, runtime=is_runtime_bound(loop)))
        if pipelined:
            self.pipeline_vars.add(var)
        saved = env.get(var, _UNSET)
        for value in values:
            if self.b.truncated:
                break
            inner_it = it + ((id(loop), value),) if pipelined else it
            env[var] = value
            self.loop_stack.append((var, value))
            self.stmt(loop.body, env, mult, inner_it, guarded)
            self.loop_stack.pop()
        _restore(env, var, saved)

    def _record_trip(self, loop: A.For, env: dict) -> None:
        """The loop's trip count as an expression of the launch (`Trace.trip_exprs`), the same at
        every walk of it, or None (issue 31, item 5: trip counts as symbols of the sets)."""
        bounds = loop_bounds(loop)
        expr: A.Expr | None = None
        if bounds is not None:
            _, start, end, inclusive = bounds
            span = loop.span
            count: A.Expr = A.Binary("-", end, start, span)
            if inclusive:
                count = A.Binary("+", count, A.Number("1", span), span)
            expr = self.launch_expr(count, env)
        key = id(loop)
        if key not in self.b.trip_exprs:
            self.b.trip_exprs[key] = expr
        elif (old := self.b.trip_exprs[key]) is not None and (expr is None or shape_of(old) != shape_of(expr)):
            self.b.trip_exprs[key] = None

    def walk_once(self, loop: A.For, header: tuple[str, int, int] | None, env: dict, mult: int,
                  it: tuple, guarded: bool) -> None:
        """One walk stands for every iteration; footprints range over all of them."""
        if header is None and self.walk_symbolic(loop, env, mult, it, guarded):
            return
        if header is None or header[2] <= 0:
            self.stmt(loop.body, env, mult, it, guarded)
            return
        var, start, trip = header
        saved = self.ranges.get(var)
        self.ranges[var] = (start, start + trip - 1)
        if trip > 1:
            self.once_stack.append(id(loop))
        self.stmt(loop.body, env, mult, it, guarded)
        if trip > 1:
            self.once_stack.pop()
        if saved is None:
            self.ranges.pop(var, None)
        else:
            self.ranges[var] = saved

    def _without_header(self, loop: A.For, kinds: frozenset[str], env: dict, mult: int, it: tuple,
                        guarded: bool) -> bool:
        """A loop with no counted header: walked at each value where they are known here (True);
        else, holding a barrier or a wait, recorded as walked once (its iterations' hazards are
        not checked: `Trace.once_loops`)."""
        if self.walk_geometric(loop, env, mult, it, guarded):
            return True
        if kinds & SYNC_KINDS:
            self.b.once_loops.setdefault(id(loop), loop)
        return False

    def walk_geometric(self, loop: A.For, env: dict, mult: int, it: tuple, guarded: bool) -> bool:
        """A loop whose variable doubles or halves (`for (s = blockDim.x / 2; s > 0; s >>= 1)`, the
        reduction and scan trees) with bounds known here: walked at each of its values, a
        handful (False where it is not such a loop)."""
        found = geometric_values(loop, env)
        if found is None:
            return False
        var, values = found
        saved = env.get(var, _UNSET)
        for value in values:
            env[var] = value
            self.loop_stack.append((var, value))
            self.stmt(loop.body, env, mult, it, guarded)
            self.loop_stack.pop()
        _restore(env, var, saved)
        return True

    def walk_symbolic(self, loop: A.For, env: dict, mult: int, it: tuple, guarded: bool) -> bool:
        """A loop whose count is only known at run time, walked once with its variable as a symbol
        (issue 31, item 5): it ranges over the interval its bounds allow, under the guards
        `start <= v` and `v < end`, so that `Qi[tx * d + x]` with `x < d` is one row per thread
        for every `d`.  False where a bound has no interval (it reads memory)."""
        bounds = stepped_bounds(loop)
        if bounds is None or (bounds[4] is not None and (evaluate(bounds[4], {}) or 1) <= 0):
            return False
        var, start, end, inclusive = (bounds[0], self.substituted(bounds[1]), self.substituted(bounds[2]),
                                      bounds[3])
        found = self._symbol_range(start, end, inclusive, env)
        if found is None or var in env:
            return False
        if found[1] < found[0]:
            return True           # no launch runs it
        saved = self.ranges.get(var)
        self.ranges[var] = found
        guards = self._loop_guards(loop, var, start, end, inclusive, bounds[4])
        self.guards.extend(guards)
        self.once_stack.append(id(loop))
        try:
            self.stmt(loop.body, env, mult, it, guarded)
        finally:
            self.once_stack.pop()
            del self.guards[len(self.guards) - len(guards):]
            if saved is None:
                self.ranges.pop(var, None)
            else:
                self.ranges[var] = saved
        return True

    def _symbol_range(self, start: A.Expr, end: A.Expr, inclusive: bool, env: dict) -> tuple[int, int] | None:
        """The values a loop's variable can take, from the intervals of its bounds (None: a bound
        reads memory)."""
        names = set(_names_of(start)) | set(_names_of(end))
        ranges = launch_ranges({n for n in names if n not in env and n not in self.ranges}, self.b.uniform)
        ranges.update((n, self.ranges[n]) for n in names if n in self.ranges)
        low, high = interval(start, env, ranges), interval(end, env, ranges)
        if low is None or high is None:
            return None
        return low[0], high[1] - (0 if inclusive else 1)

    def _loop_guards(self, loop: A.For, var: str, start: A.Expr, end: A.Expr, inclusive: bool,
                     step: A.Expr | None) -> list[tuple[A.Expr, bool]]:
        """`start <= v`, `v < end` and, for `v += s`, `(v - start) % s == 0`."""
        span = loop.span
        guards: list[tuple[A.Expr, bool]] = [(A.Binary(">=", A.Name(var, span), start, span), True),
                  (A.Binary("<=" if inclusive else "<", A.Name(var, span), end, span), True)]
        if step is not None:
            offset = A.Binary("-", A.Name(var, span), start, span)
            guards.append((A.Binary("==", A.Binary("%", offset, self.substituted(step), span),
                                    A.Number("0", span), span), True))
        return guards

    def if_stmt(self, s: A.If, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        cond = self.substituted(s.cond)
        if isinstance(cond, A.Call) and cond.name in ELECT:
            chosen = elected(self.active, elect_extent(cond))
            self.branch(s.then, chosen, env, it, guarded)
            if s.other is not None:
                self.branch(s.other, self.active & ~chosen, env, it, guarded)
            return
        kinds = self.b.kinds
        loop_vars = {n: r for n, r in self.ranges.items() if n != "threadIdx.x" and kinds.mentions(cond, n)}
        if loop_vars or kinds.mentions(cond, "threadIdx.x"):
            self._thread_if(s, cond, env, mult, it, guarded, loop_vars)
            return
        value = self.b.eval(cond, env)
        if value is None and self._parametric(cond, env):
            self._parametric_if(s, cond, env, mult, it, guarded)
            return
        if value is None:       # a condition on data: decided where no data can change it
            value = constant_truth(cond, env, self.b.eval.opaque)
        if value is not None:
            branch = s.then if value else s.other
            if branch is not None:
                self.stmt(branch, env, mult, it, guarded)
            return
        self._data_if(s, cond, env, mult, it, guarded)

    def _data_if(self, s: A.If, cond: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        """A condition on data: which threads take which branch is unknown."""
        self.uncertain += 1
        self.uncertain_conds.append(cond)
        self._joined([lambda body=body: self.stmt(body, env, mult, it, guarded)
                      for body in (s.then, s.other) if body is not None])
        self.uncertain_conds.pop()
        self.uncertain -= 1

    def _thread_if(self, s: A.If, cond: A.Expr, env: dict, mult: int, it: tuple, guarded: bool,
                   loop_vars: dict[str, tuple[int, int]]) -> None:
        """An `if` on the thread index or once-walked loop variables: each branch walked by the
        threads that take it, under the condition as a guard."""
        masks = self.b.thread_masks(cond, env, self.active, loop_vars)
        if masks is None and self._parametric(cond, env):
            self._parametric_if(s, cond, env, mult, it, guarded)
            return
        if masks is None:          # undecidable per thread (reads memory): some threads, unknown
            self.uncertain += 1
            self.uncertain_conds.append(cond)
            self._joined([lambda body=body, pol=pol: self.guarded_walk(body, cond, pol, env, mult, it)
                          for body, pol in ((s.then, True), (s.other, False)) if body is not None])
            self.uncertain_conds.pop()
            self.uncertain -= 1
            return
        taken, skipped = masks
        self.guards.append((cond, True))
        self.branch(s.then, taken, env, it, guarded)
        self.guards.pop()
        if s.other is not None:
            self.guards.append((cond, False))
            self.branch(s.other, skipped, env, it, guarded)
            self.guards.pop()

    def _parametric(self, cond: A.Expr, env: dict) -> bool:
        """Whether a condition's only values unknown here are kernel arguments (`model.launch`):
        which threads take it is then exact in the sets, for every value of the arguments."""
        uniform = self.b.uniform
        names = _names_of(cond)
        if not any(n in uniform or n in _LAUNCH_VALUES for n in names):
            return False
        return _culprit(cond, env, {**self.ranges, **{n: INT_RANGE for n in uniform}}) is None

    def _parametric_if(self, s: A.If, cond: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        """Both branches, each under the condition as a guard, by the threads that reach the `if`:
        the guard, not a thread set, says which of them run it (no condition on data).  A branch
        that touches global memory records the condition's range guards (`model.launch`)."""
        loops = {n: r for n, r in self.ranges.items() if n != "threadIdx.x"}
        # on the launch values and arguments only, every thread of the block takes one branch:
        # the guard narrows the sets, and the statements stay unguarded (a barrier in them is
        # every thread's)
        thread_free = "threadIdx.x" not in _names_of(cond) and not any(n in self.ranges for n in _names_of(cond))
        if thread_free and self._block_branch(s, cond, env, mult, it, guarded):
            return
        walks: list[Callable[[], None]] = []
        for branch, polarity in ((s.then, True), (s.other, False)):
            if branch is None or self._contradicted(cond, polarity, env):
                continue
            if self.b.touches_global(branch):
                self.b.launch.add([*self.guards, (cond, polarity)], self.mask, loops)
            walks.append(functools.partial(self._uniform_walk if thread_free else self.guarded_walk,
                                           branch, cond, polarity, env, mult, it, guarded))
        if thread_free and s.other is None:
            # the blocks that skip the branch keep the values from before it: a local the branch
            # sets is the select of the two (`if (bx >= 2) c = bx - 2;`), not the branch's value
            walks.append(_skip)
        self._joined(walks, cond if thread_free else None)

    def _contradicted(self, cond: A.Expr, polarity: bool, env: dict) -> bool:
        """Whether the scenario being simulated rules a branch out: its trip count fixes an argument
        the condition reads (`if (it + 1 < iters)` at `it = 0` in the scenario `iters == 1`), and no
        launch meets both (`KernelModel.with_trip`).  Asked only where the condition reads a name
        of the scenario's conditions; the other branches are walked as before."""
        self.b.parametric.setdefault(id(cond), cond)
        assumed = self.b.scenario
        if not assumed:
            return False
        names = set(_names_of(cond))
        if not names & {n for a, _ in assumed for n in _names_of(a)}:
            return False
        key = (id(cond), polarity, tuple(sorted((n, env[n]) for n in names if n in env)), id(assumed))
        found = self.b.contradictions.get(key)
        if found is None:
            found = self.b.contradictions[key] = self._unsatisfiable((*assumed, (cond, polarity)), names, env)
        return found

    def _unsatisfiable(self, conditions: tuple[tuple[A.Expr, bool], ...], names: set[str], env: dict) -> bool:
        """Whether no launch meets all `conditions` at this point of the walk (its values of `names`)."""
        from .presburger import satisfiable

        fixed = tuple((n, env[n]) for n in sorted(names) if isinstance(env.get(n), int) and n != "threadIdx.x")
        ranges = tuple((n, r) for n, r in self.ranges.items() if n in names and n != "threadIdx.x")
        recipe = LaneRecipe(A.Number("0", conditions[-1][0].span), 1, 1, fixed, ranges, self.mask or 1,
                            conditions, uniform=self.b.uniform, launch=self.b.launch)
        return satisfiable(recipe) is False

    def _block_branch(self, s: A.If, cond: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> bool:
        """A block-uniform `if` around a barrier, wait or arrival: in a scenario that fixes its
        branch (`KernelModel.with_branches`) only that branch is walked (True); otherwise it is
        recorded (`Trace.block_ifs`) and both are walked as before (False)."""
        if not any(b is not None and self.b.synchronises(b) for b in (s.then, s.other)):
            return False
        uniform = self.b.uniform
        if not all(n in uniform or n in _LAUNCH_VALUES or n in ("blockIdx", "gridDim") for n in _names_of(s.cond)):
            return False        # a loop's counter too (a persistent kernel's tail): not one branch per block
        forced = self.b.forced.get(id(s))
        if forced is None:
            self.b.block_ifs.setdefault(id(s), s)
            return False
        branch = s.then if forced else s.other
        if branch is not None:
            self._uniform_walk(branch, cond, forced, env, mult, it, guarded)
        return True

    def _uniform_walk(self, body: A.Node, cond: A.Expr, polarity: bool, env: dict, mult: int, it: tuple,
                      guarded: bool) -> None:
        self.guards.append((cond, polarity))
        self.stmt(body, env, mult, it, guarded)
        self.guards.pop()

    def _joined(self, walks: list, cond: A.Expr | None = None) -> None:
        """Walk the branches of an `if` whose outcome is not known here, each from the values
        before it, and keep afterwards only the locals both leave alike: the join, not the last
        branch's values (issue 31, item 5).  A local the two branches set differently has no
        value after the `if`.  An `if` with no `else` is read as taken, as its guard is (the one
        execution the walk follows: a phase counter stepped under a data condition stays in step
        with the waits under the same condition).  `cond`: a condition on the launch values and
        the kernel arguments only, under which a local the branches set to two expressions is
        the select of them (`cond ? a : b`), exact in the sets."""
        if len(walks) < 2:
            for walk in walks:
                walk()
            return
        before, symbolic = dict(self.locals), dict(self.symbolic)
        outcomes = []
        for walk in walks:
            self.locals.clear()
            self.locals.update(before)
            self.symbolic = dict(symbolic)
            walk()
            outcomes.append((dict(self.locals), self.symbolic))
        self.locals.clear()
        self.locals.update(before)
        self.symbolic = symbolic
        # every local known before or after some branch: one that every branch made unknown
        # (`c = X[0]` / `c = X[1]`) must not keep its value from before the `if`
        for key in set(before) | set(symbolic) | set().union(*(set(o) | set(e) for o, e in outcomes)):
            self.locals.pop(key, None)
            self.symbolic.pop(key, None)
            self._join_one(key, outcomes, cond)

    def _join_one(self, key: str, outcomes: list[tuple[dict, dict]], cond: A.Expr | None) -> None:
        """One local after the branches: their common number or expression, else the select of
        the two under a condition on the launch, else no value."""
        values = [o.get(key) for o, _ in outcomes]
        exprs = [e.get(key) for _, e in outcomes]
        if values[0] is not None and all(v == values[0] for v in values):
            self.locals[key] = values[0]
        elif exprs[0] is not None and all(x is exprs[0] for x in exprs) and all(v is None for v in values):
            self.symbolic[key] = exprs[0]
        elif cond is not None:          # a condition on launch values: the select of the two
            then, other = (_value_expr(o, e, key, cond.span) for o, e in outcomes)
            if then is not None and other is not None:
                self.symbolic[key] = A.Ternary(cond, then, other, cond.span)

    def guarded_walk(self, body: A.Node, cond: A.Expr, polarity: bool, env: dict, mult: int,
                     it: tuple, _guarded: bool = True) -> None:
        self.guards.append((cond, polarity))
        self.stmt(body, env, mult, it, True)
        self.guards.pop()

    def branch(self, body: A.Node, threads: ThreadSet, env: dict, it: tuple, guarded: bool) -> None:
        """Walk `body` as executed by `threads` (block-level): this role's part of them runs it.

        `threadIdx.x` is bound to the lowest of this role's threads that run it, and footprints
        range over exactly those threads."""
        mine = threads & self.role_mask
        if not mine:
            return
        saved = self.active, env.get("threadIdx.x"), self.ranges.get("threadIdx.x")
        self.active = threads
        first = lowest(mine)
        assert first is not None
        env["threadIdx.x"] = first
        self.ranges["threadIdx.x"] = (first, mine.bit_length() - 1)
        partial = guarded or mine != (saved[0] & self.role_mask)
        self.stmt(body, env, count(mine), it, partial)
        self.active = saved[0]
        env["threadIdx.x"] = saved[1] if saved[1] is not None else self.role.lo
        self.ranges["threadIdx.x"] = saved[2] or (self.role.lo, self.role.hi - 1)

    @property
    def mask(self) -> ThreadSet:
        """This role's threads that execute the statement being walked."""
        return self.active & self.role_mask

    # -------------------------------------------------------------- expressions
    def expr_stmt(self, e: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        if isinstance(e, A.Assign):
            self.access(e.target, "write", e, env, mult, it, guarded)
            if e.op != "=":
                self.access(e.target, "read", e, env, mult, it, guarded)
            self.reads_in(e.value, env, mult, it, guarded)
            self.assign_local(e.target, e.op, e.value, env)
            return
        if isinstance(e, A.Unary) and e.op in ("++", "--"):
            self.assign_local(e.operand, "+=" if e.op == "++" else "-=", A.Number("1", e.span), env)
            return
        if isinstance(e, A.Call):
            self.call(e, env, mult, it, guarded)
            return
        self.reads_in(e, env, mult, it, guarded)

    # -------------------------------------------------------------- local values
    def local_key(self, target: A.Expr, env: dict) -> str | None:
        if isinstance(target, A.Name) and not target.scope and target.ident in self.b.local_names:
            return target.ident
        if isinstance(target, A.Index) and isinstance(target.base, A.Name) \
                and target.base.ident in self.b.local_names:
            i = self.b.eval(target.index, env)
            return f"{target.base.ident}[{i}]" if i is not None else None
        return None

    def declare_local(self, d: A.Declarator, env: dict) -> None:
        if not d.dims:
            if isinstance(d.init, A.Expr) and self._per_thread(d.init):
                self._store(d.name, None)
                self._store_thread_expr(d.name, d.init, env)
                return
            value = self.b.eval(d.init, env)
            self._store(d.name, value)
            if value is None and isinstance(d.init, A.Expr) and d.name in self.b.local_names:
                self._store_symbolic(d.name, d.init, env)
        elif isinstance(d.init, A.InitList):
            for i, item in enumerate(d.init.items):
                self._store(f"{d.name}[{i}]", self.b.eval(item, env))

    def assign_local(self, target: A.Expr, op: str, value: A.Expr, env: dict) -> None:
        key = self.local_key(target, env)
        if key is None:
            return
        if self._per_thread(value) or (op != "=" and key in self.symbolic and self._per_thread(target)):
            self._store(key, None)
            if op == "=" and isinstance(target, A.Name):
                self._store_thread_expr(key, value, env)
            return
        new = self.b.eval(value, env)
        if op != "=" and new is not None:
            old = self.locals.get(key)
            new = None if old is None else evaluate(A.Binary(op[:-1], A.Number(str(old), value.span),
                                                             A.Number(str(new), value.span), value.span), {})
        self._store(key, new)
        if new is None and op == "=" and isinstance(target, A.Name):
            self._store_symbolic(key, value, env)

    def _per_thread(self, value: A.Expr) -> bool:
        """Whether a value differs between the threads that run the statement: it reads the thread
        index, or a local that does, and more than one thread runs it.  Such a local has no one
        number (the walk's `threadIdx.x` is only the lowest of them: `int bi = offset * (2 * tid +
        2) - 1` evaluated there gave every thread thread 0's `bi`, a false race)."""
        if count(self.mask) <= 1:
            return False
        names = _names_of(value)
        return "threadIdx.x" in names or any(n in self.thread_locals for n in names)

    def _store_thread_expr(self, key: str, value: A.Expr, env: dict) -> None:
        """A per-thread local as an expression of the thread index and of numbers known here (the
        uniform locals' values put in): every index that reads it is then exact per thread."""
        self.thread_locals.add(key)
        if _reads_memory_or_calls(value):
            return
        substituted = self.substituted(value)
        names = [n for n in _names_of(substituted) if n != "threadIdx.x"]
        if not all(self._known_here(n, env) for n in names):
            return
        numbers = {n: A.Number(str(env[n]), value.span) for n in names if n in env and isinstance(env[n], int)
                   and n not in _LAUNCH_VALUES}
        self.symbolic[key] = _substitute(substituted, numbers) if numbers else substituted

    def _known_here(self, name: str, env: dict) -> bool:
        """A name a per-thread expression may keep or take the number of: a launch value, an
        argument, or a uniform local with a value here (not a walked loop's, not another thread's)."""
        if name in _LAUNCH_VALUES or name in self.b.uniform or name in _BUILTIN_BASES:
            return True
        return name in env and name not in self.ranges and name not in self.thread_locals

    def _store_symbolic(self, key: str, value: A.Expr, env: dict) -> None:
        """Keep a local's value as an expression where it is one of the launch values, the
        kernel arguments and numbers known here (no thread, no walked loop, no memory)."""
        found = self.launch_expr(value, env)
        if found is not None:
            self.symbolic[key] = found

    def launch_expr(self, value: A.Expr, env: dict) -> A.Expr | None:
        """`value` as an expression of the launch values and the kernel arguments alone: the
        symbolic locals it reads substituted, the numbers known here put in; None where it reads
        a thread, a walked loop, memory or a call other than min/max."""
        launch = _LAUNCH_VALUES | self.b.uniform | {"blockIdx", "gridDim"}     # and the members' bases
        if _reads_memory_or_calls(value) or any(n in self.thread_locals for n in _names_of(value)):
            return None
        names = [n for n in _names_of(value) if n not in self.symbolic and n not in _MIN_MAX]
        if any(n not in launch and (n not in env or n == "threadIdx.x" or n in self.ranges) for n in names):
            return None
        numbers = {n: A.Number(str(env[n]), value.span) for n in names if n not in launch}
        return _substitute(self.substituted(value), numbers) if numbers else self.substituted(value)

    def substituted(self, expr: A.Expr) -> A.Expr:
        """`expr` with the symbolic locals it reads replaced by their expressions (one node per
        expression and values, so that the caches keyed by node stay warm)."""
        if not self.symbolic:
            return expr
        used = tuple(n for n in _names_of(expr) if n in self.symbolic)
        if not used:
            return expr
        key = (id(expr), tuple(id(self.symbolic[n]) for n in used))
        found = self._substituted.get(key)
        if found is None:
            found = self._substituted[key] = _substitute(expr, {n: self.symbolic[n] for n in used})
        return found

    def substituted_ref(self, ref: SmemRef) -> SmemRef:
        """`ref` with its index read through the symbolic locals (`substituted`)."""
        if ref.index is None or not self.symbolic:
            return ref
        index = self.substituted(ref.index)
        return ref if index is ref.index else replace(ref, index=index)

    def _store(self, key: str, value: int | None) -> None:
        self.symbolic.pop(key, None)
        self.thread_locals.discard(key)
        if value is None:
            self.locals.pop(key, None)
        else:
            self.locals[key] = value

    def reads_in(self, e: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        """Shared-memory reads and calls inside an expression."""
        for item in self.b.reads_of(e):
            if isinstance(item, A.Call):
                self.call(item, env, mult, it, guarded)
                continue
            node, ref, conds = item
            kind = K.GLOBAL if ref.buffer.startswith("global:") else K.SMEM
            if conds:
                self.guards.extend((self.substituted(c), polarity) for c, polarity in conds)
            try:
                self.emit_access(ref, "read", node, env, mult, it, guarded or bool(conds), kind=kind, lanes=True)
            finally:
                if conds:
                    del self.guards[len(self.guards) - len(conds):]

    def access(self, target: A.Expr, access: str, node: A.Node, env: dict, mult: int,
               it: tuple, guarded: bool) -> None:
        ref = self.b.layout.ref(target)
        if ref is not None:
            self.emit_access(ref, access, node, env, mult, it, guarded, lanes=True)
            if ref.index is not None:       # `S[idx_s[t]] = v` reads idx_s to find its address
                self.reads_in(ref.index, env, mult, it, guarded)
            return
        gref = self.b.global_ref(target)
        if gref is not None:
            self.emit_access(gref, access, node, env, mult, it, guarded, kind=K.GLOBAL, lanes=True)
            if gref.index is not None:
                self.reads_in(gref.index, env, mult, it, guarded)
        else:
            self.reads_in(target, env, mult, it, guarded)

    def emit_access(self, ref: SmemRef, access: str, node: A.Node, env: dict, mult: int, it: tuple,
                    guarded: bool, kind: EventKind = K.SMEM, possible: bool = False,
                    width: int | None = None, lanes: bool = False, **extra: Any) -> None:
        """An access to shared memory; `lanes`: each thread accesses its own address (a plain load
        or store, a cp.async), so per-thread footprints can be computed (not for warp-collective
        instructions such as ldmatrix, whose data other lanes receive)."""
        is_global = kind == K.GLOBAL
        buffer: str | None = ref.buffer
        space: str | None = None
        if is_global:      # one block: its index is the same for every thread (any value will do)
            env = {**env, "blockIdx.x": 0, "blockIdx.y": 0, "blockIdx.z": 0}
            buffer, space = None, ref.buffer[len("global:"):]
        ref = self.substituted_ref(ref)
        offset, site = self.offset(ref.index, ref.elem_bytes, env, node)
        width = width or ref.width or ref.elem_bytes
        extent = None if possible else self._kind_extent(ref, kind, width, env)
        recipe = None
        indexed = not possible and ref.index is not None
        per_thread = (lanes or kind == K.CP_ASYNC) and indexed
        collective = kind == K.SMEM and not per_thread and indexed
        unknown = per_thread and extent is None
        if (per_thread or collective) and extent is not None:
            recipe = self._lane_recipe(ref, width, env, node, collective, is_global)
            if collective:
                extent = self._rows(recipe, extent)
        self.events.append(Event(kind, node, self.index, mult, it, access, buffer,
                                 offset, site, guarded=guarded, possible=possible, extent=extent,
                                 lanes=recipe, threads=self.mask, unknown_footprint=unknown,
                                 uncertain=self.uncertain > 0, once=tuple(self.once_stack),
                                 space=space, why=self._why(ref.index, unknown, env), **extra))

    def _kind_extent(self, ref: SmemRef, kind: EventKind, width: int, env: dict) -> tuple[int, int] | None:
        """The bytes a definite access of this kind touches (`extent`); TMA boxes: unknown."""
        if kind not in (K.SMEM, K.CP_ASYNC, K.GLOBAL):
            return None
        return self.extent(ref.index, ref.elem_bytes, width, env)

    def _rows(self, recipe: LaneRecipe, extent: tuple[int, int]) -> tuple[int, int]:
        """A warp-collective access's extent: ldmatrix/stmatrix .x1/.x2: only lanes 0-7 / 0-15 give
        row addresses; the others' address operands touch nothing, so the rows are those lanes'
        (exact where they can be enumerated; else the interval over every lane, which holds them)."""
        if recipe.threads != _whole_warps(self.mask):
            return _rows_extent(recipe, self.b.eval) or extent
        return extent

    def _lane_recipe(self, ref: SmemRef, width: int, env: dict, node: A.Node, collective: bool,
                     is_global: bool) -> LaneRecipe:
        """How each thread's bytes of an indexed access are computed (`emit_access`)."""
        index = ref.index
        assert index is not None
        guards = tuple(self.guards)
        names = sorted(set(_names_of(index)).union(*(_names_of(g) for g, _ in guards)))
        block = (("blockIdx.x", 0), ("blockIdx.y", 0), ("blockIdx.z", 0)) if is_global else ()
        # a warp-collective instruction is the whole warp's, whatever role split the warp: its
        # rows are named by the addressing lanes of every warp the role's threads are in
        addressing = _whole_warps(self.mask) & _address_lanes(node) if collective else self.mask
        return LaneRecipe(index, ref.elem_bytes, width,
                          tuple((n, env[n]) for n in names if n in env and n not in self.ranges
                                and n != "threadIdx.x") + block,
                          tuple((n, self.ranges[n]) for n in names if n in self.ranges
                                and n != "threadIdx.x"),
                          addressing, guards, collective, self._arguments(names, env), self.b.launch)

    def _arguments(self, names: list[str], env: dict) -> frozenset[str]:
        """The kernel arguments among an access's names that have no value here: parameters."""
        uniform = self.b.uniform
        return frozenset(n for n in names if n in uniform and n not in env and n not in self.ranges)

    def _why(self, index: A.Expr | None, unknown: bool, env: dict) -> A.Node | None:
        """What the note of an undecided pair names: the index part with no value, or the
        condition on data (the plugin names the memory read in it)."""
        if unknown and index is not None:
            return _culprit(index, env, self.ranges)
        return self.uncertain_conds[-1] if self.uncertain_conds else None

    def extent(self, index: A.Expr | None, elem: int, width: int, env: dict) -> tuple[int, int] | None:
        """Bytes [lo, hi) the access touches over all threads of the role and once-walked loops."""
        if index is None:
            return (0, width)
        names = _names_of(index)
        key = (id(index), elem, width, tuple(self.ranges.get(n) or env.get(n) for n in names))
        if key in self._extents:
            return self._extents[key]
        ranges = launch_ranges({n for n in names if n not in env and n not in self.ranges}, self.b.uniform)
        ranges.update((n, self.ranges[n]) for n in names if n in self.ranges)
        bounds = interval(index, env, ranges)
        found = None if bounds is None else (bounds[0] * elem, bounds[1] * elem + width)
        self._extents[key] = found
        return found

    def offset(self, index: A.Expr | None, elem: int, env: dict, node: A.Node) -> tuple[int | None, tuple]:
        """Byte offset for the role's first thread, and a key of what varies besides the pipeline.

        The first thread of the role is a real thread (consumer indices in
        warp-specialized kernels are offset by the producer's thread count),
        so its offset lies in the slot every thread of the role touches.
        """
        if index is None:
            return 0, (id(node),)
        value = self.b.eval(index, env, default=0)
        inner = tuple(sorted((k, v) for k, v in self.loop_stack if k not in self.pipeline_vars))
        return (value * elem if value is not None else None), (id(node), inner)

    def barrier(self, expr: A.Expr, env: dict) -> tuple[str, int] | None:
        ref = self.b.layout.barrier_ref(expr)
        if ref is None:
            return None
        index = self.b.eval(ref[1], env)
        return (ref[0], index) if index is not None else None

    def call(self, call: A.Call, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        intr = call_kind(call)
        if intr is None:
            found = template_protocol(call) if "<" in call.name else None
            if found is not None and len(call.args) > found.pointer and self.on_template(call, found, env, mult, it,
                                                                                          guarded):
                return
            self.unknown_call(call, env, mult, it, guarded)
            return
        value = None
        if intr.template_count and call.template_args:
            value = evaluate_text(call.template_args[0])
        elif intr.count is not None and intr.count < len(call.args):
            value = self.b.eval(call.args[intr.count], env)
        if intr.cluster:
            self.b.cluster = True
        handler = _CALL_HANDLERS.get(intr.kind, _RoleWalker.on_plain)
        handler(self, _Call(call, intr, env, mult, it, guarded, value))

    def event(self, c: _Call, kind: EventKind, **kw: Any) -> None:
        # under a condition on data, which threads run a barrier or an arrival is a guess too
        self.events.append(Event(kind, c.node, self.index, c.mult, c.it, guarded=c.guarded,
                                 threads=self.mask, uncertain=self.uncertain > 0,
                                 once=tuple(self.once_stack), **kw))
        if kind == K.SYNC and c.guarded and not self.uncertain:
            self._record_barrier_guards(c)

    def _record_barrier_guards(self, c: _Call) -> None:
        """A block barrier under conditions on the arguments or the thread index (not on data):
        its guards as the sets take them, so that whether a block's threads split at it is asked of
        them (`KernelFacts.barrier_split`), not guessed."""
        guards = tuple(self.guards[len(self.b.assumptions):])
        if not guards:
            return
        names = {n for g, _ in guards for n in _names_of(g)}
        points = tuple((n, c.env[n]) for n in sorted(names)
                       if isinstance(c.env.get(n), int) and n != "threadIdx.x" and n not in self.ranges)
        ranges = tuple((n, r) for n, r in self.ranges.items() if n in names and n != "threadIdx.x")
        self.b.barrier_guards.setdefault(id(c.node), []).append(
            LaneRecipe(A.Number("0", c.node.span), 1, 1, points, ranges, self.mask, guards,
                       uniform=self.b.uniform, launch=self.b.launch))

    def on_template(self, call: A.Call, proto: Protocol, env: dict, mult: int, it: tuple, guarded: bool) -> bool:
        """A TileLang template whose shared-memory protocol is modelled (`model.templates`): its
        barriers and its per-thread accesses to the pointer arguments, as the header runs them.
        False when a pointer is not into a shared buffer pipelint knows (an unknown call then)."""
        refs = self._template_refs(call, proto)
        if refs is None:
            return False
        for n, arg in enumerate(call.args):
            if n not in refs:
                self.reads_in(arg, env, mult, it, guarded)
        for n, step in enumerate(proto.steps):
            if isinstance(step, TemplateSync):
                named = step.count is not None
                self.events.append(Event(K.NAMED_SYNC if named else K.SYNC, call, self.index, mult, it,
                                         barrier=("bar.sync", step.phase) if named else None,
                                         value=step.count, guarded=guarded, threads=self.mask, internal=True))
            else:
                ref = refs[proto.pointer if step.pointer is None else step.pointer]
                self._template_access(call, n, step, ref, env, mult, it, guarded)
        return True

    def _template_refs(self, call: A.Call, proto: Protocol) -> dict[int, SmemRef] | None:
        """The shared buffer each pointer argument of the template's steps points into, by
        argument position; None when one is not a shared buffer pipelint knows."""
        pointers = {proto.pointer} | {s.pointer for s in proto.steps if isinstance(s, Access) and s.pointer is not None}
        refs: dict[int, SmemRef] = {}
        for n in pointers:
            ref = self.b.layout.ref(call.args[n]) if n < len(call.args) else None
            if ref is None:
                return None
            refs[n] = ref
        return refs

    def _template_access(self, call: A.Call, n: int, step: Access, ref: SmemRef, env: dict, mult: int, it: tuple,
                         guarded: bool) -> None:
        """Step `n` of a template: an access to element `step.index` of the pointer's buffer, under
        the step's guards.  Each step is a site of its own (`offset`): the stage stride is what
        the pipeline moves one step by, never the distance between two steps of the template."""
        index = step.index if ref.index is None else A.Binary("+", ref.index, step.index, call.span)
        if step.guards and not self._some_thread_passes(step.guards, env):
            return          # a step no thread of the role performs touches nothing (its address is moot)
        self.guards.extend((g, True) for g in step.guards)
        self.loop_stack.append(("<template step>", n))
        try:
            self.emit_access(SmemRef(ref.buffer, ref.elem_bytes, index), step.access, call, env, mult, it,
                             guarded or bool(step.guards), lanes=True)
        finally:
            self.loop_stack.pop()
            del self.guards[len(self.guards) - len(step.guards):]

    def _some_thread_passes(self, guards: tuple[A.Expr, ...], env: dict) -> bool:
        """Whether some thread of the role may pass every guard of a template step: the threads each
        guard lets through for some value of the once-walked loops it reads, intersected (a guard
        that cannot be evaluated per thread lets every thread through)."""
        passing = self.role_mask
        for guard in guards:    # each guard a node of the call's protocol: `thread_masks` memoises by node
            loop_vars = {n: r for n, r in self.ranges.items() if n != "threadIdx.x" and n in _names_of(guard)}
            masks = self.b.thread_masks(guard, env, self.active, loop_vars)
            if masks is not None:
                passing &= masks[0]
        return bool(passing)

    def unknown_call(self, call: A.Call, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        """A call the table does not know: a shared pointer passed to it may be read or written
        (not an address conversion such as `__cvta_generic_to_shared`, which touches nothing)."""
        name = call.name
        if name.rsplit("::", 1)[-1] in ADDRESS_ONLY:
            for arg in call.args:
                self.reads_in(arg, env, mult, it, guarded)
            return
        if name.startswith("tl::") and not name.startswith(HARMLESS_PREFIXES) \
                and any(word in name for word in SYNC_WORDS):
            self.b.unknown.setdefault(name, call)
        for arg in call.args:
            bar = self.b.layout.barrier_ref(_strip_address(arg))
            if bar is not None:
                # an mbarrier handed to code pipelint does not model may be arrived on or armed there
                self.b.opaque_barriers.setdefault(bar[0], call)
                continue
            ref = self.b.layout.ref(arg)
            # `&s[i]`, `s + i`, and an array that decays to its pointer (`load_row(s, ...)`)
            if ref is not None and isinstance(_strip_cast(arg), (A.Unary, A.Binary, A.Name)):
                if name.startswith("tl::") and not name.startswith(HARMLESS_PREFIXES):
                    self.b.unknown.setdefault(name, call)
                for access in ("read", "write"):
                    self.emit_access(ref, access, call, env, mult, it, guarded, possible=True)
            else:
                self.reads_in(arg, env, mult, it, guarded)

    # ---------------------------------------------------------- one handler per kind of call
    def on_plain(self, c: _Call) -> None:
        self.event(c, c.intr.kind, value=c.value)

    def on_mbarrier_method(self, c: _Call) -> None:
        callee = c.node.callee
        if not isinstance(callee, A.Member):
            self.on_mbarrier_function(c)
            return
        bar = self.barrier(callee.base, c.env)
        if c.intr.kind == K.MBAR_ARRIVE and c.node.args:
            # `bar.arrive(cta_id)`: an arrival on another CTA's barrier of the cluster
            self.b.cluster = True
            self.b.cluster_barriers.add(bar[0] if bar else "")
        self.event(c, c.intr.kind, barrier=bar, value=c.value)

    def on_mbarrier_function(self, c: _Call) -> None:
        """`tl::mbarrier_wait(bar, phase)`: the free-function forms name the barrier first."""
        args = c.node.args
        bar = self.barrier(_strip_address(args[0]), c.env) if args and c.intr.barrier == 0 else None
        if c.intr.kind == K.MBAR_ARRIVE and len(args) > 1:      # (bar, cta_id, pred): remote
            self.b.cluster = True
            self.b.cluster_barriers.add(bar[0] if bar else "")
        self.event(c, c.intr.kind, barrier=bar, value=c.value)

    def on_block_barrier(self, c: _Call) -> None:
        """`__syncthreads()`, and `__syncthreads_count(pred)` whose predicate each thread evaluates
        (its reads happen) before it arrives."""
        for arg in c.node.args:
            self.reads_in(arg, c.env, c.mult, c.it, c.guarded)
        self.event(c, c.intr.kind, value=c.value)

    def on_named_barrier(self, c: _Call) -> None:
        """`bar.sync id, n`: barrier `id` completes when `n` threads have arrived."""
        args = c.node.args
        ident = self.b.eval(args[0], c.env) if args else None
        self.event(c, c.intr.kind, barrier=("bar.sync", ident if ident is not None else -1),
                   value=c.value)

    def on_barrier_arg(self, c: _Call) -> None:
        """cp.async-tracking and tcgen05 commit arrivals name their barrier as argument 0."""
        args = c.node.args
        bar = self.barrier(_strip_address(args[0]), c.env) if args else None
        mult = c.mult
        if c.intr.kind == K.MMA_ARRIVE:
            # tcgen05.commit is issued by one elected lane of each warp that calls it
            mult = max(1, (c.mult + 31) // 32)
            if c.node.template_args and c.node.template_args[0] == "true":   # 2-CTA multicast
                self.b.cluster = True
                self.b.cluster_barriers.add(bar[0] if bar else "")
        self.events.append(Event(c.intr.kind, c.node, self.index, mult, c.it, guarded=c.guarded,
                                 barrier=bar, threads=self.mask))

    def on_tma_load(self, c: _Call) -> None:
        self.tma_load(c.node, c.env, c.mult, c.it, c.guarded, cluster=c.intr.cluster)

    def on_desc_init(self, c: _Call) -> None:
        args = c.node.args
        ref = self.b.layout.ref(args[1]) if len(args) > 1 else None
        name = args[0].ident if args and isinstance(args[0], A.Name) else None
        if ref is not None and name:
            off, _ = self.offset(ref.index, ref.elem_bytes, c.env, c.node)
            self.descriptors[name] = (ref.buffer, off or 0)
            # `initialize_wgmma_descriptor<layout, LBO, SBO>`: what the operand footprint needs
            layout = [evaluate_text(t) for t in c.node.template_args] if off is not None else []
            known = [v for v in layout if v is not None]
            self.desc_layouts[name] = (known[0], known[1], known[2]) if len(known) == len(layout) == 3 else None

    def on_desc_offset(self, c: _Call) -> None:
        """`increase_descriptor_offset(desc, n)`: the descriptor moves `n` bytes.  Where `n` reads
        a loop walked once (`(ko & 1) * 8192 + kk * 2048`: sub-tiles of one stage), it moves by
        that loop's first value here, and has no one footprint (`desc_layouts`): its slot is the
        stage's, not slot 0's."""
        args = c.node.args
        name = args[0].ident if args and isinstance(args[0], A.Name) else None
        value = c.value if c.value is not None or len(args) < 2 else self._at_first_point(args[1], c.env)
        if name in self.descriptors and value is not None:
            buf, off = self.descriptors[name]
            self.descriptors[name] = (buf, off + value)
            if any(n in self.ranges for n in _names_of(c.node.args[1])) if len(c.node.args) > 1 else True:
                self.desc_layouts[name] = None     # moved by a loop walked once: no one footprint
            self.desc_sites[name] = (id(c.node), tuple(sorted(
                (k, v) for k, v in self.loop_stack if k not in self.pipeline_vars)))

    def _at_first_point(self, expr: A.Expr, env: dict) -> int | None:
        """`expr`'s value with the loops walked once that it reads at their first value (None
        where it reads none of them, or has no value there either)."""
        walked = {n: self.ranges[n][0] for n in _names_of(expr) if n in self.ranges and n != "threadIdx.x"}
        return self.b.eval(expr, {**env, **walked}) if walked else None

    def on_mma(self, c: _Call) -> None:
        """wgmma / tcgen05 MMA: reads the shared memory its descriptors point at.

        A wgmma's reads are asynchronous: they may happen at any time until a
        `warpgroup_wait<N>` retires its commit group, so each read is recorded twice, at the
        issue (what must be written before it) and where it is retired (what may be written
        only after it: an mbarrier arrival between the two releases a slot still being read).
        A tcgen05 MMA's (and `tcgen05_cp`'s) reads last until the MMAs complete, which only a
        `tcgen05.commit` arrival (`tcgen05_mma_arrive`) announces: `committed` (`model.protocol`)."""
        shape = mma_shape(c.node.name, c.node.template_args)
        operands = [(0, True), (1, False)] if shape is not None and shape.a_in_smem else \
            [(1, False)] if shape is not None else [(n, None) for n in range(len(c.node.args))]
        for pos, is_a in operands:
            if pos >= len(c.node.args):
                continue
            for name in _names_of(c.node.args[pos]):      # memoised per node; sorted, hash-seed free
                if name not in self.descriptors:
                    continue
                buf, off = self.descriptors[name]
                site = self.desc_sites.get(name, (id(c.node),))
                extent = None
                if shape is not None and is_a is not None:
                    extent = self.operand_extent(c, pos, name, shape, is_a)
                ev = Event(K.SMEM, c.node, self.index, c.mult, c.it, "read", buf, off,
                           site, guarded=c.guarded, threads=self.mask, extent=extent,
                           committed=c.node.name.startswith("tl::tcgen05"),
                           awaited=shape is not None and not c.node.name.startswith("tl::tcgen05"))
                self.events.append(ev)
                if shape is not None:
                    self.wgmma_open.append(ev)
        self._mma_registers(c)

    def _mma_registers(self, c: _Call) -> None:
        """The registers an MMA writes: a wgmma's accumulators and A fragment (`model.fragments`),
        a tcgen05 MMA's Tensor Memory accumulator."""
        if c.node.name.startswith("tl::wgmma"):
            self.fragments.issue(c.node, self.b.local_arrays)
        if c.node.name.startswith("tl::tcgen05mma") and len(c.node.args) > 2:
            self.tmem_access(c, c.node.args[2], "write")

    def on_tmem_ld(self, c: _Call) -> None:
        """`tcgen05_ld_*<N>(start, offset, dst)`: N columns of the allocation from `offset`."""
        if len(c.node.args) > 1:
            self.tmem_access(c, c.node.args[0], "read", c.node.args[1], c.value)

    def tmem_access(self, c: _Call, address: A.Expr, access: str, offset: A.Expr | None = None,
                    columns: int | None = None) -> None:
        """A Tensor Memory access (`K.TMEM`): the allocation is the shared word `tmem_allocate`
        wrote its address into (`C_tmem`), named `tmem:C_tmem`; `offset`/`extent` are the columns
        [lo, hi) where known over the role's threads (an MMA's accumulator: its first column,
        `extent` None: its width is in the instruction descriptor)."""
        names = [n for n in _names_of(address) if n in self.b.layout.buffers]
        if len(names) != 1:
            return
        if offset is None:             # an MMA: `(*reinterpret_cast<uint32_t*>(C_tmem)) + col`
            base = _strip_cast(address)
            offset = base.right if isinstance(base, A.Binary) and base.op == "+" else None
            col = self.b.eval(offset, c.env) if offset is not None else 0
            extent = None
        else:
            col, extent = self._tmem_columns(offset, c.env, columns)
        self.events.append(Event(K.TMEM, c.node, self.index, c.mult, c.it, access, f"tmem:{names[0]}",
                                 col, guarded=c.guarded, threads=self.mask, extent=extent))

    def _tmem_columns(self, offset: A.Expr, env: dict,
                      columns: int | None) -> tuple[int | None, tuple[int, int] | None]:
        """The columns a tcgen05_ld reads over the role's threads: the offset at its first and last
        thread (TileLang's offsets are `(threadIdx.x >> 7) * N`-like steps), plus N."""
        mask = self.mask
        if not mask or columns is None:
            return None, None
        ends = [self.b.eval(offset, {**env, "threadIdx.x": t}) for t in ((mask & -mask).bit_length() - 1,
                                                                        mask.bit_length() - 1)]
        known = [v for v in ends if v is not None]
        if len(known) != len(ends):
            return None, None
        lo, hi = min(known), max(known) + columns
        return lo, (lo, hi)

    def operand_extent(self, c: _Call, pos: int, name: str, shape: MmaShape, is_a: bool) -> tuple[int, int] | None:
        """The bytes of its buffer one wgmma operand reads over the once-walked loops around it
        (`model.wgmma`), or None where the descriptor's layout or the offset is not known."""
        layout = self.desc_layouts.get(name)
        buf, off = self.descriptors[name]
        if layout is None:
            return None
        arg = c.node.args[pos]
        while isinstance(arg, A.Cast):
            arg = arg.operand
        addend: A.Expr | None = None
        if isinstance(arg, A.Binary) and arg.op == "+" and isinstance(arg.left, A.Name) and arg.left.ident == name:
            addend = arg.right
        elif not (isinstance(arg, A.Name) and arg.ident == name):
            return None
        names = _names_of(addend) if addend is not None else ()
        loops = [(n, self.ranges[n]) for n in names if n in self.ranges]
        key = (id(c.node), pos, off, layout, tuple(loops), tuple((n, c.env.get(n)) for n in names))
        if key in self._operand_extents:
            return self._operand_extents[key]
        found = self._operand_extent(c, addend, loops, off, layout, buf, shape, is_a)
        self._operand_extents[key] = found
        return found

    def _operand_extent(self, c: _Call, addend: A.Expr | None, loops: list, off: int, layout: tuple,
                        buf: str, shape: MmaShape, is_a: bool) -> tuple[int, int] | None:
        starts = self._operand_starts(c, addend, loops, off)
        if starts is None:
            return None
        buffer = self.b.layout.buffers.get(buf)
        base = buffer.offset if buffer is not None else 0
        desc = Descriptor(buf, off, *layout)
        return wgmma_footprint(desc, starts, shape.m if is_a else shape.n, shape.k,
                               shape.a_bytes if is_a else shape.b_bytes, shape.tnsp_a if is_a else shape.tnsp_b,
                               base)

    def _operand_starts(self, c: _Call, addend: A.Expr | None, loops: list, off: int) -> list[int] | None:
        """The operand's start bytes (from its descriptor's `off`) at every point of the once-walked
        loops, or None where the descriptor's addend has no value at one of them."""
        # a descriptor is uniform over its warp group (one operation): one thread of each will do
        loops = [(n, r) for n, r in loops if n != "threadIdx.x"]
        threads = self.ranges.get("threadIdx.x") or (self.role.lo, self.role.hi - 1)
        combos = wgmma_points(loops)
        if combos is None:
            return None
        if addend is not None and "threadIdx.x" in _names_of(addend):
            firsts = sorted({threads[0]} | {t for t in range(threads[0], threads[1] + 1) if t % 128 == 0})
            combos = [{**p, "threadIdx.x": t} for p in combos for t in firsts]
        starts = []
        for point in combos:
            units = self.b.eval(addend, {**c.env, **point}) if addend is not None else 0
            if units is None:
                return None
            starts.append(off + units * 16)
        return starts

    def on_wgmma_commit(self, c: _Call) -> None:
        """`warpgroup_commit_batch`: the wgmmas issued since the last commit form a group."""
        self.on_plain(c)
        # in a loop walked once, this one commit is each iteration's: as many groups
        trips = math.prod(hi - lo + 1 for name, (lo, hi) in self.ranges.items() if name != "threadIdx.x")
        copies = max(1, min(trips, 1024))
        self.fragments.commit(c.node, copies)
        if self.wgmma_open:
            self.wgmma_groups.extend([self.wgmma_open] * copies)
            self.wgmma_open = []

    def on_wgmma_wait(self, c: _Call) -> None:
        """`warpgroup_wait<N>` / `wait_wgmma<N>`: every group but the newest N has completed its
        shared-memory reads here (for the whole warp group); an unknown N retires nothing.  The
        retired reads come just before the wait in the trace: nothing lies between them, and
        what follows the wait (a release) follows the reads' completion."""
        self.fragments.wait(c.node, c.value)
        if c.value is not None and c.value >= 0:
            keep = c.value
            done = self.wgmma_groups[:max(0, len(self.wgmma_groups) - keep)]
            self.wgmma_groups = self.wgmma_groups[len(done):]
            pending = {id(ev) for group in self.wgmma_groups for ev in group}
            seen: set[int] = set()
            for group in done:
                for ev in group:
                    if id(ev) not in pending and id(ev) not in seen:    # every iteration's group retired
                        seen.add(id(ev))
                        self.events.append(replace(ev, retired=True))
        self.on_plain(c)

    def retire_at_exit(self) -> None:
        """wgmma groups no `warpgroup_wait` retires: their reads may last until the thread exits.
        Each is recorded again at the end of the role's program, as a wait would have retired it,
        so a slot released (an mbarrier arrival) or rewritten after the issue is still being read
        (a deleted wait is otherwise invisible: the read would complete at its issue)."""
        seen: set[int] = set()
        for group in self.wgmma_groups:
            for ev in group:
                if id(ev) not in seen:
                    seen.add(id(ev))
                    self.events.append(replace(ev, retired=True))
        self.wgmma_groups = []

    def on_shared_pointer(self, c: _Call) -> None:
        """PTX wrappers and copies that take a shared-memory pointer at a known argument."""
        intr = c.intr
        if intr.smem is None or intr.smem >= len(c.node.args):
            self.on_plain(c)
            return
        ref = self.b.layout.ref(c.node.args[intr.smem])
        if ref is not None:
            self._shared_operand(c, ref, intr.smem)
        elif intr.kind == K.CP_ASYNC:
            self.event(c, K.CP_ASYNC)
        elif intr.access == "atomic":
            self._global_atomic(c, intr.smem)

    def _shared_operand(self, c: _Call, ref: SmemRef, smem: int) -> None:
        """The access to the shared pointer argument, and what the others read (a cp.async's
        global source: the same bytes per thread as its target)."""
        intr = c.intr
        event_kind = intr.kind if intr.kind in (K.CP_ASYNC, K.TMA_STORE) else K.SMEM
        width = intr.bytes or (intr.elems * ref.elem_bytes if intr.access == "atomic"
                               else _access_width(c.node, intr))
        self.emit_access(ref, intr.access, c.node, c.env, c.mult, c.it, c.guarded, kind=event_kind,
                         width=width, lanes=intr.per_thread)
        if ref.index is not None:       # the address reads what its index reads: `AtomicAdd(&S[idx_s[t]], 1)`
            self.reads_in(ref.index, c.env, c.mult, c.it, c.guarded)
        for n, arg in enumerate(c.node.args[smem + 1:]):
            src = self.b.global_ref(_strip_address_of(arg)) if intr.kind == K.CP_ASYNC and n == 0 else None
            if src is not None:      # the copy's global source: the same bytes per thread as its target
                self.emit_access(src, "read", c.node, c.env, c.mult, c.it, c.guarded, kind=K.GLOBAL,
                                 width=width, lanes=True)
                if src.index is not None:
                    self.reads_in(src.index, c.env, c.mult, c.it, c.guarded)
            else:
                self.reads_in(arg, c.env, c.mult, c.it, c.guarded)

    def _global_atomic(self, c: _Call, smem: int) -> None:
        """An atomic whose pointer argument is not shared memory: a global one where it names a
        tracked parameter; the value operands may read shared memory."""
        gref = self.b.global_ref(_strip_address_of(c.node.args[smem]))
        if gref is not None:
            self.emit_access(gref, "atomic", c.node, c.env, c.mult, c.it, c.guarded, kind=K.GLOBAL,
                             width=c.intr.elems * gref.elem_bytes, lanes=True)
        # the address reads what its index reads: `AtomicAdd(&H[Xs[i] & 63], 1)` loads Xs[i] first
        address = gref.index if gref is not None else c.node.args[smem]
        if address is not None:
            self.reads_in(address, c.env, c.mult, c.it, c.guarded)
        # the value operands: `AtomicAddx4(&dV[..], *(float4*)(dv_shared + ..))` reads shared memory
        for arg in c.node.args[smem + 1:]:
            self.reads_in(arg, c.env, c.mult, c.it, c.guarded)

    def tma_load(self, call: A.Call, env: dict, mult: int, it: tuple, guarded: bool,
                 cluster: bool = False) -> None:
        args = call.args
        layout = self.b.layout
        if len(args) >= 4 and layout.ref(args[0]) is not None and layout.barrier_ref(args[2]):
            smem, bar, size = args[0], args[2], self.b.eval(args[3], env)   # 1-D bulk form
        elif len(args) >= 3:
            smem, bar, size = args[2], args[1], None                      # descriptor form
        else:
            return
        ref = layout.ref(smem)
        if ref is None:
            return
        barrier = self.barrier(bar, env)
        if cluster and barrier is not None:
            self.b.cluster_barriers.add(barrier[0])
        self.emit_access(ref, "async", call, env, mult, it, guarded, kind=K.TMA_LOAD,
                         barrier=barrier, value=size)


@dataclass(frozen=True, slots=True)
class _Call:
    """One call being walked, with what the table and the environment say about it."""

    node: A.Call
    intr: Intrinsic
    env: dict
    mult: int
    it: tuple
    guarded: bool
    value: int | None


_CALL_HANDLERS = {
    **{k: _RoleWalker.on_mbarrier_method for k in (
        K.MBAR_INIT, K.MBAR_ARRIVE, K.MBAR_WAIT, K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX)},
    K.NAMED_SYNC: _RoleWalker.on_named_barrier,
    K.NAMED_ARRIVE: _RoleWalker.on_named_barrier,
    K.SYNC: _RoleWalker.on_block_barrier,
    K.CP_ASYNC_ARRIVE: _RoleWalker.on_barrier_arg,
    K.CP_ASYNC_ARRIVE_INC: _RoleWalker.on_barrier_arg,
    K.MMA_ARRIVE: _RoleWalker.on_barrier_arg,
    K.TMA_LOAD: _RoleWalker.on_tma_load,
    K.DESC_INIT: _RoleWalker.on_desc_init,
    K.DESC_OFFSET: _RoleWalker.on_desc_offset,
    K.WGMMA: _RoleWalker.on_mma,
    K.TMEM: _RoleWalker.on_tmem_ld,
    K.WGMMA_COMMIT: _RoleWalker.on_wgmma_commit,
    K.WGMMA_WAIT: _RoleWalker.on_wgmma_wait,
    K.CP_ASYNC: _RoleWalker.on_shared_pointer,
    K.READ: _RoleWalker.on_shared_pointer,
    K.WRITE: _RoleWalker.on_shared_pointer,
    K.TMA_STORE: _RoleWalker.on_shared_pointer,
}

def _orders(call: A.Call) -> bool:
    """A call whose intrinsic kind orders (a barrier, a wait, an arrival, a commit)."""
    intr = call_kind(call)
    return intr is not None and intr.kind in _ORDER_KINDS


_ORDER_KINDS = frozenset({K.SYNC, K.NAMED_SYNC, K.NAMED_ARRIVE, K.WAIT, K.COMMIT, K.MBAR_ARRIVE, K.MBAR_WAIT,
                          K.MBAR_ARRIVE_EXPECT_TX, K.MBAR_EXPECT_TX, K.CP_ASYNC_ARRIVE, K.CP_ASYNC_ARRIVE_INC,
                          K.MMA_ARRIVE, K.WGMMA_WAIT, K.TMA_STORE_WAIT, K.WARP_SYNC})
_UNSET = object()
# An unknown call whose name says it synchronises is worth a note even without a shared pointer.
SYNC_WORDS = ("sync", "barrier", "arrive", "wait", "commit", "fence", "mbarrier")


_NAMES: dict[int, tuple[A.Expr, tuple[str, ...]]] = {}


_BUILTIN_BASES = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})   # `x` of `threadIdx.x` is a member
_LAUNCH_VALUES = frozenset({"blockIdx.x", "blockIdx.y", "blockIdx.z", "gridDim.x", "gridDim.y", "gridDim.z"})


def _substitute(expr: A.Expr, mapping: Mapping[str, A.Expr]) -> A.Expr:
    """`expr` with each name of `mapping` replaced (a new node only where something changed)."""
    if isinstance(expr, A.Name) and not expr.scope and expr.ident in mapping:
        return mapping[expr.ident]
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(expr):
        if isinstance(expr, A.Call) and f.name == "callee":
            continue
        value = getattr(expr, f.name)
        new = _substitute_field(value, mapping)
        if new is not value:
            changes[f.name] = new
    return replace(expr, **changes) if changes else expr


def _substitute_field(value: Any, mapping: Mapping[str, A.Expr]) -> Any:
    """One field of a node, substituted: a child expression, or a tuple of them (the arguments)."""
    if isinstance(value, A.Expr):
        return _substitute(value, mapping)
    if isinstance(value, tuple) and any(isinstance(v, A.Expr) for v in value):
        items = tuple(_substitute(v, mapping) if isinstance(v, A.Expr) else v for v in value)
        return items if any(a is not b for a, b in zip(items, value)) else value
    return value


def _skip() -> None:
    """The walk of an absent `else`: nothing runs."""


def _value_expr(locals_: dict, symbolic: dict, key: str, span: A.Span) -> A.Expr | None:
    """A local's value after one branch, as an expression (a number, or its symbolic value)."""
    if key in locals_:
        return A.Number(str(locals_[key]), span)
    return symbolic.get(key)


def _names_of(expr: A.Expr) -> tuple[str, ...]:
    """Variables (and `threadIdx.x`) an index expression reads, memoised per node."""
    found = _NAMES.get(id(expr))
    if found is None or found[0] is not expr:
        names: set[str] = set()
        for n in expr.walk():           # one walk: names, builtins (`threadIdx.x`), thread-index calls
            if isinstance(n, A.Name):
                if not n.scope:
                    names.add(n.ident)
            elif isinstance(n, (A.Member, A.Cast)):
                b = builtin_name(n)
                if b:
                    names.add(b)
            elif isinstance(n, A.Call) and thread_index_call(n):
                names.add("threadIdx.x")
        found = _NAMES[id(expr)] = (expr, tuple(sorted(names)))
    return found[1]


_ROW_LANES = re.compile(r"tl::ptx_(?:ldmatrix|stmatrix)_(?:m8n8_)?x([124])(?:_trans)?$")   # 8x8 rows only


def _address_lanes(node: A.Node) -> ThreadSet:
    """The lanes of each warp whose address operand an ldmatrix/stmatrix reads: lanes 0-7 for .x1,
    0-15 for .x2, all 32 for .x4 (PTX ISA, ldmatrix: "threads 0-7 / 0-15 / 0-31 supply the
    addresses"); every lane for any other collective access."""
    m = _ROW_LANES.match(node.name) if isinstance(node, A.Call) else None
    lanes = 8 * int(m.group(1)) if m else 32
    return sum(((1 << lanes) - 1) << (32 * w) for w in range(32))


def _whole_warps(threads: ThreadSet) -> ThreadSet:
    """Every thread of the warps that `threads` touch."""
    out = 0
    for w in range((threads.bit_length() + 31) // 32):
        if (threads >> (32 * w)) & 0xFFFFFFFF:
            out |= 0xFFFFFFFF << (32 * w)
    return out


def _rows_extent(recipe: LaneRecipe, evaluator: Any) -> tuple[int, int] | None:
    """Bytes [lo, hi) the addressing lanes' rows cover, from their exact footprints."""
    from .threads import footprint

    found = footprint(recipe, evaluator)
    starts = [s for starts in (found or {}).values() for s in starts]
    return (min(starts), max(starts) + recipe.width) if starts else None


def _access_width(call: A.Call, intr: Intrinsic) -> int | None:
    """Bytes one thread moves: `cp_async_gs<16>`, a 16-byte ldmatrix/stmatrix row."""
    if intr.kind == K.CP_ASYNC and call.template_args:
        return evaluate_text(call.template_args[0])
    if intr.kind in (K.READ, K.WRITE):
        bits = call.name.rsplit("_", 1)[-1]
        if call.name.startswith(("tl::load_shared_", "tl::store_shared_")) and bits.isdigit():
            return int(bits) // 8
        return 16
    return None


def _strip_address(e: A.Expr) -> A.Expr:
    """`&(bar[i])` -> `bar[i]` (barriers passed by address)."""
    e = _strip_cast(e)
    if isinstance(e, A.Unary) and e.op == "&":
        return _strip_cast(e.operand)
    return e


def _strip_address_of(e: A.Expr) -> A.Expr:
    """`&(P[i])` -> `P[i]` (a pointer argument to the element it points at)."""
    e = _strip_cast(e)
    if isinstance(e, A.Unary) and e.op == "&":
        return e.operand
    return A.Unary("*", e, e.span) if isinstance(e, A.Binary) else e


def _restore(env: dict, var: str, saved: object) -> None:
    if saved is _UNSET:
        env.pop(var, None)
    else:
        env[var] = saved


ADDRESS_ONLY = frozenset({"__cvta_generic_to_shared", "__cvta_generic_to_shared_u32", "cvta_to_shared",
                          "__cvta_shared_to_generic", "__isShared", "__isGlobal"})


def _strip_cast(e: A.Expr) -> A.Expr:
    while isinstance(e, A.Cast):
        e = e.operand
    return e


def _culprit(index: A.Expr, env: dict, ranges: dict) -> A.Node | None:
    """The part of an index that has no value here, for the note that says what was not decided:
    a read of memory (`idx[i]`), a call that is not index arithmetic, or a name with no value (a
    kernel argument, a local computed from data).  Outermost first, in source order."""
    # not themselves parts with a value: a callee's name, and `threadIdx` of `threadIdx.x`
    skipped = {id(n.callee) for n in index.walk() if isinstance(n, A.Call)}
    skipped |= {id(n.base) for n in index.walk() if isinstance(n, A.Member) and builtin_name(n)}
    return next((node for node in index.walk() if id(node) not in skipped and _valueless(node, env, ranges)), None)


def _valueless(node: A.Node, env: dict, ranges: dict) -> bool:
    if isinstance(node, A.Index):
        return True
    if isinstance(node, A.Call):
        return thread_index_call(node) is None and node.name not in ("max", "min")
    if isinstance(node, (A.Member, A.Cast)) and (name := builtin_name(node)):
        # `threadIdx.y` of a 2-D block: the model's threads are `threadIdx.x` only
        return name in ("threadIdx.y", "threadIdx.z") and name not in env and name not in ranges
    return isinstance(node, A.Name) and not node.scope and node.ident not in env and node.ident not in ranges


def evaluate_text(text: str) -> int | None:
    try:
        return int(text.strip().rstrip("uUlL"), 0)
    except ValueError:
        return None
