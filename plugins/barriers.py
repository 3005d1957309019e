"""`__syncthreads` on the critical path: every block barrier orders a hazard.

A barrier is needed when removing it lets some thread read data another
thread's copy has not made visible (RAW) or overwrite data another thread may
still read (WAR).  A barrier that orders nothing costs a full block stall per
iteration in the steady-state loop; a hazard with no barrier is a race; a
barrier only some threads reach is a hang.
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import KernelCheck, make_finding
from pipelint.cuda import ast as A
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import KernelModel
from pipelint.model.cpasync import Hazard
from pipelint.model.evaluate import mentions
from pipelint.model.intrinsics import EventKind as K
from pipelint.model.intrinsics import HazardKind as H
from pipelint.model.intrinsics import cluster_barrier
from pipelint.model.placement import point, statement_after, statement_before
from pipelint.model.threads import count, describe, members, span
from pipelint.model.trace import Event


class MissingBarrier(KernelCheck):
    """A cross-thread RAW or WAR on a pipelined slot with no block barrier between."""

    rule = Rule(
        "missing-barrier", "MissingBarrier",
        "Cross-thread shared-memory hazard with no __syncthreads between",
        "A thread reads data that other threads' async copies filled with no block barrier "
        "after the wait (RAW), or a copy overwrites a slot other threads may still read with "
        "no barrier after their reads (WAR).",
        Severity.ERROR, "Put `__syncthreads()` after `cp_async_wait<N>` and before the next copy "
        "into a slot that was just read.", ("correctness", "race"),
        rationale="cp.async completion is per thread; other threads see the data only after a block barrier "
                  "that follows the wait (RAW). Before re-filling a slot, every thread must be done reading it "
                  "(WAR). Each of these needs a `__syncthreads` in the right place.")
    hazards = (H.RAW_UNSYNCED, H.WAR_UNSYNCED)
    analyses = ("cp_async",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self._raw(kernel, path, h) if h.kind == H.RAW_UNSYNCED else self._war(kernel, path, h)
                for h in self.hazards_in(kernel)]

    def _raw(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        related = [(h.second.node, f"read of {h.buffer} slot {h.slot} (iteration {h.second.where})"),
                   (h.first.node, f"async copy into {h.buffer} slot {h.slot}")]
        if h.wait is not None:
            related.insert(0, (h.wait.node, "the wait that completes the copy"))
        spot = _barrier_spot(kernel, h.first.node, h.second.node, h.wait)
        return self.finding(
            path, kernel, h.second.node,
            f"missing __syncthreads: RAW on {h.buffer} slot {h.slot}, read at line "
            f"{h.second.node.span.line} (iteration {h.second.where}) with no barrier after the cp.async "
            f"wait, so other threads' copies may not be visible", related,
            help=f"insert __syncthreads(); before line {spot.span.line}"
                 + (f" (after the wait at line {h.wait.node.span.line})" if h.wait is not None else ""),
            at=point(spot), severity=_undecided(h))

    def _war(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        spot = _barrier_spot(kernel, h.first.node, h.second.node, None)
        return self.finding(
            path, kernel, h.second.node,
            f"missing __syncthreads: WAR on {h.buffer} slot {h.slot}, cp.async at line "
            f"{h.second.node.span.line} (iteration {h.second.where}) overwrites data other threads "
            f"may still be reading, with no barrier since the read",
            [(h.second.node, f"the overwriting cp.async into {h.buffer} slot {h.slot}"),
             (h.first.node, f"read of {h.buffer} slot {h.slot} (iteration {h.first.where})")],
            help=f"insert __syncthreads(); before line {spot.span.line} (after the last read of "
                 f"{h.buffer} at line {h.first.node.span.line}, before the copy)",
            at=point(spot), severity=_undecided(h))


class DivergentBarrier(KernelCheck):
    """A block barrier that not every thread of the block reaches (see `_divergent`)."""

    rule = Rule(
        "divergent-barrier", "DivergentBarrier",
        "__syncthreads under thread-dependent control flow",
        "A block barrier that only some threads of the block reach never completes "
        "(undefined behaviour; in practice a hang or silent corruption). A cluster barrier "
        "(`tl::cluster_sync`) waits only for the cluster's non-exited threads and binds the lanes "
        "of a warp: it is reported where some lanes of a warp skip it.",
        Severity.ERROR, "Hoist the barrier out of the branch, or use a named barrier "
        "(`bar.sync id, n`) for the participating threads.", ("correctness", "hang"),
        rationale="`__syncthreads` must be reached by every thread of the block; under a `threadIdx` branch it "
                  "hangs or corrupts the barrier state.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return _divergent(kernel, path) + _counted_by_thread(kernel, path)


class RedundantBarrier(KernelCheck):
    """A block barrier whose removal adds no hazard (one that is also divergent is reported as
    that, not as this)."""

    rule = Rule(
        "redundant-barrier", "RedundantBarrier",
        "__syncthreads orders no shared-memory hazard",
        "Removing this barrier creates no RAW or WAR hazard on shared memory that another barrier "
        "does not already order. In the steady-state loop it stalls the block every iteration: "
        "a barrier on the critical path.",
        Severity.WARNING, "Remove it, or merge it with the neighbouring barrier.",
        ("performance", "pipeline"),
        rationale="Every `__syncthreads` in the steady-state loop stalls the whole block once per iteration. A "
                  "barrier that orders no hazard is pure latency on the critical path; the seed document's "
                  "criterion is that barriers per iteration must not grow with num_stages.")
    analyses = ("cp_async", "races", "mbarrier")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        skip = {(f.location.line, f.location.column) for f in _divergent(kernel, path)}
        return _redundant(kernel, path, skip)


class NamedBarrierCount(KernelCheck):
    """A `bar.sync id, n` whose count `n` is not the number of threads that reach it (`model.named`)."""

    rule = Rule(
        "named-barrier-count", "NamedBarrierCount",
        "Named barrier count does not match the threads that reach it",
        "`bar.sync id, n` (`T.sync_threads(id, n)`, `tl::__sync_thread_partial`, a template's "
        "`NamedBarrier<n>`) completes as soon as `n` threads have arrived and starts over with the "
        "rest. With more threads than `n` at the statement, which of them pass together depends on "
        "timing, so it orders no thread after any particular other; with fewer than `n` threads "
        "naming the barrier anywhere in the kernel, it never completes and they hang.",
        Severity.ERROR, "Give the barrier the number of threads that execute it (every warp group "
        "that takes part, counted once), or split them over barriers with ids of their own.",
        ("correctness", "hang"),
        rationale="A warp-group barrier written for one group and reached by two, or sized for two groups "
                  "and reached by one, compiles and often runs: the first kind races only when warps arrive "
                  "in an unlucky order, the second hangs the block.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        out = []
        for m in kernel.named_barriers:
            who = describe(m.threads)
            if m.kind == "overfull":
                message = (f"named barrier {m.barrier} counts {m.needed} threads but {count(m.threads)} ({who}) "
                           f"execute this statement: the first {m.needed} to arrive pass together and the rest "
                           f"start the next generation, so it orders no thread after any particular other")
                help = f"count {count(m.threads)} threads in the barrier at line {m.event.node.span.line}"
            else:
                why = (f"only {m.distinct} distinct threads ever arrive with that count" if m.distinct < m.needed
                       else f"{m.arrivals} arrivals with that count in all are not a whole number of generations")
                message = (f"named barrier {m.barrier} waits for {m.needed} threads, but {count(m.threads)} ({who}) "
                           f"arrive here and no other thread arrives with them ({why}), so these threads hang")
                help = (f"count the threads that reach the barrier at line {m.event.node.span.line}, or let the "
                        f"missing threads take part")
            others = _other_counts(kernel, m.event)
            if others:
                message += "; " + ", ".join(f"line {ev.node.span.line} names barrier {m.barrier} with count {ev.value}"
                                            for ev in others)
            out.append(self.finding(path, kernel, m.event.node, message,
                                    [(ev.node, f"barrier {m.barrier} with count {ev.value}") for ev in others],
                                    help=help))
        return out + _mixed(self, kernel, path)


def _other_counts(kernel: KernelModel, ev: Event) -> list[Event]:
    """The first statement of each other count that names `ev`'s named barrier id (a count written
    for one group where another group's count was meant), in line order."""
    seen: dict[object, Event] = {}
    for e in kernel.trace.all_events():
        if e.kind in (K.NAMED_SYNC, K.NAMED_ARRIVE) and e.barrier == ev.barrier and e.value is not None \
                and e.value != ev.value and e.value not in seen:
            seen[e.value] = e
    return sorted(seen.values(), key=lambda e: (e.node.span.line, e.node.span.column))


def _mixed(check: NamedBarrierCount, kernel: KernelModel, path: str) -> list[Finding]:
    """Statements of one group whose barrier another group's arrivals at the same id can complete
    (`model.mixing`), in line order."""
    out = []
    for ev, other in sorted(kernel.mixed_named.values(), key=lambda p: (p[0].node.span.line, p[0].node.span.column)):
        ident, n = ev.barrier[1] if ev.barrier else "?", ev.value
        mine, theirs = kernel.roles[ev.role], kernel.roles[other.role]
        message = (f"named barrier {ident} counts {n} threads, and {mine} arrive here while {theirs} may arrive at "
                   f"the same barrier (line {other.node.span.line}) with nothing ordering one arrival before the "
                   f"other: a generation completes with any {n} of them, so warps of both groups can pass together "
                   f"and the barrier orders neither group's threads")
        out.append(check.finding(path, kernel, ev.node, message, [(other.node, "the other group's arrival")],
                                 help=f"give {mine} and {theirs} barrier ids of their own"))
    return out


class BarrierDeadlock(KernelCheck):
    """Roles that wait at block and named barriers for each other (`MBarrierAnalysis.barrier_hang`)."""

    rule = Rule(
        "barrier-deadlock", "BarrierDeadlock",
        "Block and named barriers wait for each other",
        "Running the roles against each other, every role that has not finished waits at a block "
        "or named barrier whose other threads wait at another one: the block hangs. The usual case "
        "is a named barrier (`bar.sync id, n`) whose other participants reach their `bar.arrive` "
        "only after a `__syncthreads` that the waiting threads never reach.",
        Severity.ERROR, "Order the barriers so that the threads a barrier waits for get to it: move the "
        "`__syncthreads` after the other group's arrival, or the `bar.sync` after it.", ("correctness", "hang"),
        rationale="`bar.sync 0` waits for every thread of the block that has not exited, and `bar.sync id, n` "
                  "for n arrivals; a group held at one of them cannot arrive at the other. TileLang emits a "
                  "`__syncthreads` between two `T.ws` blocks, which makes this hang when the first block "
                  "waits for the second.")
    analyses = ("mbarrier",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        blocked = kernel.mbarrier.barrier_hang
        counted = {m.barrier for m in kernel.named_barriers if m.kind == "hang"}
        if not blocked or any(ev.kind == K.NAMED_SYNC and ev.barrier and ev.barrier[1] in counted for ev in blocked):
            return []           # a count no number of arrivals completes: named-barrier-count says so
        blocked = sorted(blocked, key=lambda ev: (ev.kind != K.NAMED_SYNC, ev.node.span.line))
        first, roles = blocked[0], kernel.roles
        waits = "; ".join(f"{roles[ev.role]} at {_barrier_name(ev)} (line {ev.node.span.line})" for ev in blocked)
        return [self.finding(
            path, kernel, first.node,
            f"the block hangs: every unfinished role waits at a barrier that threads held at another "
            f"one must reach ({waits})",
            [(ev.node, f"{roles[ev.role]} wait here") for ev in blocked[1:]],
            help=f"the threads that {_barrier_name(first)} at line {first.node.span.line} waits for are held "
                 f"at the {_barrier_name(blocked[-1])} at line {blocked[-1].node.span.line}: move that barrier "
                 f"below their arrival, or remove it")]


def _barrier_name(ev: Event) -> str:
    if ev.kind == K.NAMED_SYNC and ev.barrier is not None:
        return f"bar.sync {ev.barrier[1]}, {ev.value}"
    return "__syncthreads"


CHECKS = (MissingBarrier(), DivergentBarrier(), RedundantBarrier(), NamedBarrierCount(), BarrierDeadlock())
RULES = tuple(c.rule for c in CHECKS)
_R = {c.id: c.rule for c in CHECKS}


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[KernelCheck, ...]:
    return CHECKS


def _undecided(h: Hazard) -> Severity | None:
    """A note where whether other threads meet is unknown."""
    return None if h.certain else Severity.NOTE


def _barrier_spot(kernel: KernelModel, first: A.Node, second: A.Node, wait: Event | None) -> A.Node:
    """The statement before which the missing barrier goes: right after the wait that completes
    the copy (RAW), else before the statement holding the second access (WAR, plain RAW)."""
    if wait is not None:
        after = statement_after(kernel.func, wait.node)
        if after is not None and after.span.line <= second.span.line:
            return after
    return statement_before(kernel.func, first, second)


def _divergent_cluster(kernel: KernelModel, path: str, node: A.Node, threads: int, unsure: bool) -> list[Finding]:
    """A cluster barrier only some threads reach.

    `barrier.cluster.wait` waits for the *non-exited* threads of the cluster (PTX ISA,
    barrier.cluster), so threads that skip it and run to the end of the kernel do not hang it:
    the consumer warp group's `T.cluster_sync()` after a warp-specialised loop, whose producer
    has exited, completes.  A skipping thread that instead blocks forever is a hang of the
    mbarrier protocol, reported there.  What remains is the `.aligned` qualifier, whose scope
    is the warp: a warp some of whose lanes reach the barrier and others skip it is undefined
    behaviour.
    """
    split = [w for w in range((kernel.threads + 31) // 32)
             if 0 < count(threads & span(32 * w, 32 * w + 32)) < min(32, kernel.threads - 32 * w)]
    if unsure:
        return [make_finding(
            _R["divergent-barrier"], path, kernel, node,
            "cluster barrier under a condition pipelint cannot evaluate per thread: whether whole warps "
            "reach it is not decided", severity=Severity.NOTE,
            help="nothing to change if the condition is the same for every lane of a warp")]
    if not split:
        return []
    lanes = describe(threads & span(32 * split[0], 32 * split[0] + 32))
    return [make_finding(
        _R["divergent-barrier"], path, kernel, node,
        f"cluster barrier reached by only some lanes of warp {split[0]} ({lanes}): barrier.cluster is "
        f"`.aligned`, which requires every lane of a warp to execute it (undefined behaviour)",
        help=f"make the condition around line {node.span.line} the same for every lane of a warp")]


def _barrier_arrivals(kernel):
    """Per `__syncthreads` node: the node, the threads that reach it, whether its guard could
    not be evaluated per thread; and per distinct thread set, how many barrier events it
    executes (so that the per-thread count is a sum over sets, not over events)."""
    nodes: dict[int, A.Node] = {}
    reached: dict[int, int] = {}            # node -> threads (block-level) that execute it
    unsure: set[int] = set()
    arrivals: dict[int, int] = {}           # thread set -> how many barrier events it executes
    for ev in kernel.trace.all_events():
        if ev.kind != K.SYNC:
            continue
        nodes[id(ev.node)] = ev.node
        whole = span(kernel.roles[ev.role].lo, kernel.roles[ev.role].hi)
        threads = ev.threads or whole
        reached[id(ev.node)] = reached.get(id(ev.node), 0) | threads
        if ev.guarded and (ev.uncertain or ev.mult == kernel.roles[ev.role].threads and ev.threads == whole):
            unsure.add(id(ev.node))     # a guard that could not be evaluated per thread
        if not cluster_barrier(ev.node):       # another hardware barrier than the block's
            arrivals[threads] = arrivals.get(threads, 0) + 1
    return nodes, reached, unsure, arrivals


def _balanced(arrivals: dict[int, int], threads: int) -> bool:
    """Whether every thread of the block executes the same number of barrier events."""
    per_thread = [0] * threads
    for members_, times in arrivals.items():    # once per distinct set, not per event
        for t in members(members_):
            if t < threads:
                per_thread[t] += times
    return len(set(per_thread)) <= 1


def _divergent(kernel, path):
    """Barriers some thread of the block skips while others wait at them.

    Arrivals are counted per thread: thread t executes every `__syncthreads` event of its role
    whose thread set holds t.  When every thread executes the same number, the block
    rendezvouses even if the barriers sit at different program points (one in each warp-role
    branch): on sm_70 and later any `__syncthreads` counts towards the same barrier, so that is
    a portability warning naming the older arches.  When counts differ some thread skips a
    barrier the others wait at: an error at the barrier that not every thread reaches.  A
    barrier under a condition on data (which threads take it is unknown) is a note.
    """
    nodes, reached, unsure, arrivals = _barrier_arrivals(kernel)
    block = span(0, kernel.threads)
    balanced = _balanced(arrivals, kernel.threads)
    out = []
    for key, threads in reached.items():
        if threads == block and key not in unsure:
            continue
        node = nodes[key]
        who = describe(threads)
        if cluster_barrier(node):
            out += _divergent_cluster(kernel, path, node, threads, key in unsure)
        elif key in unsure and (split := kernel.barrier_split(node)) is not None:
            out.append(make_finding(
                _R["divergent-barrier"], path, kernel, node,
                f"__syncthreads under a condition on the arguments and the thread index that splits a "
                f"block: thread {split.threads[0]} reaches it while thread {split.threads[1]} of the same "
                f"block does not (a block at the end of the data, for some arguments); that block hangs, "
                f"or passes by undefined behaviour",
                help=f"move the __syncthreads() at line {node.span.line} out of the guarded branch (guard "
                     f"the memory accesses instead)"))
        elif key in unsure:
            out.append(make_finding(
                _R["divergent-barrier"], path, kernel, node,
                "__syncthreads under a condition pipelint cannot evaluate per thread: whether every "
                "thread of the block reaches it is not decided", severity=Severity.NOTE,
                help="nothing to change if the condition is the same for every thread of the block"))
        elif balanced:
            out.append(make_finding(
                _R["divergent-barrier"], path, kernel, node,
                f"__syncthreads reached only by {who}, while the other threads of the block reach another "
                f"__syncthreads at the same point of their program: every thread arrives the same number "
                f"of times, which completes on sm_70 and later but hangs before sm_70 (sm_60 and older)",
                severity=Severity.WARNING,
                help="use one __syncthreads() outside the branches, or named barriers, to support pre-sm_70 GPUs"))
        else:
            out.append(make_finding(
                _R["divergent-barrier"], path, kernel, node,
                f"{_barrier_call(node)} is reached only by some threads of the block ({who} of "
                f"{kernel.threads}); the others never arrive: the block hangs, or, once they have exited, "
                f"passes by undefined behaviour (`bar.sync 0` is `.aligned` over the whole block)",
                help=f"move the __syncthreads() at line {node.span.line} out of the thread-dependent "
                     f"branch, or use a named barrier for the threads that reach it"))
    return out


def _redundant(kernel, path, skip):
    in_loop = {id(ev.node) for ev in kernel.trace.all_events() if ev.kind == K.SYNC and ev.iteration}
    out = []
    for node in kernel.cp_async.redundant_barriers():
        if (node.span.line, node.span.column) in skip:
            continue
        loop = id(node) in in_loop
        out.append(make_finding(
            _R["redundant-barrier"], path, kernel, node,
            ("__syncthreads in the steady-state loop orders no shared-memory hazard: it stalls "
             "the block every iteration (critical path)") if loop else
            "__syncthreads outside the pipelined loop orders no shared-memory hazard",
            severity=None if loop else Severity.NOTE,
            help=f"remove the __syncthreads() at line {node.span.line} (`pipelint explain` shows what each "
                 f"barrier orders)"))
    return out


def _counted_by_thread(kernel, path):
    """`__syncthreads` in a loop whose trip count depends on the thread
    (`for (s = 0; s < (threadIdx.x >> 6) + 1; ++s) __syncthreads();`): the threads arrive different
    numbers of times, so the barriers pair up out of step or the block hangs.  Decided on the sets:
    two different threads of those that reach the barrier with different counts
    (`model.presburger.decide` with the count as the value both store)."""
    from pipelint.model.presburger import decide
    from pipelint.model.threads import LaneRecipe
    from pipelint.model.trace import loop_bounds

    syncs: dict[int, int] = {}
    for ev in kernel.trace.all_events():
        if ev.kind == K.SYNC and not ev.internal:
            syncs[id(ev.node)] = syncs.get(id(ev.node), 0) | (ev.threads or span(
                kernel.roles[ev.role].lo, kernel.roles[ev.role].hi))
    out = []
    for loop in kernel.index.fors:
        bounds = loop_bounds(loop)
        if bounds is None or not any(mentions(e, {"threadIdx.x"}) for e in bounds[1:3]):
            continue
        inside = [n for n in loop.body.walk() if isinstance(n, A.Call) and id(n) in syncs]
        if not inside:
            continue
        threads = 0
        for n in inside:
            threads |= syncs[id(n)]
        trip: A.Expr = A.Binary("-", bounds[2], bounds[1], loop.span)
        who = LaneRecipe(A.Number("0", loop.span), 1, 1, (), (), threads)
        if decide(who, who, values=(trip, trip))[0] is not True:
            continue
        out.append(make_finding(
            _R["divergent-barrier"], path, kernel, inside[0],
            f"__syncthreads in the loop at line {loop.span.line}, whose trip count depends on the thread: "
            f"{describe(threads)} arrive at it different numbers of times, so the block's "
            f"barriers pair up out of step (or the block hangs)",
            help=f"give the loop at line {loop.span.line} the same count in every thread, or move the "
                 f"__syncthreads() out of it"))
    return out


def _barrier_call(node: A.Node) -> str:
    """How the barrier is written: `__syncthreads`, `__syncthreads_count`, ..."""
    return node.name if isinstance(node, A.Call) and node.name.startswith("__syncthreads") else "__syncthreads"
