"""The roles of a kernel run against each other: mbarrier phases, block and named barriers.

The roles' traces are interleaved round-robin until each blocks (a wait whose
phase has not completed, a barrier not every participant reached); nobody
able to move is a hang.  What a role knows is kept as a *happens-before*
frontier, like a vector clock: for each mbarrier, the latest phase it knows
complete.  An arrival hands the arriving role's frontier to whoever later
observes that phase; a block or named barrier merges the frontiers of its
participants.  So an ordering that runs through a chain of barriers between
warp groups (FlashMLA-style schedules: WG0 waits on X, arrives on Y; WG1
waits on Y, then reuses a slot WG0 released through X) is seen as an
ordering, not as a race.

Along the way:

* a read of a TMA-written slot must come after its role knows the phase the
  TMA load completes (RAW);
* a TMA write into a slot must come after the producer knows a phase in which
  every reader of the old contents had arrived after its read (WAR).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .intrinsics import ARRIVE_KINDS, EventKind, IssueKind, K
from .named import overfull
from .trace import Event
from .wgmma import shares_warpgroup

if TYPE_CHECKING:
    from .kernel import KernelModel

Barrier = tuple[str, int]
Frontier = dict[Barrier, int]
MBAR_EVENT_KINDS = frozenset({K.MBAR_INIT, K.MBAR_ARRIVE, K.MBAR_WAIT, K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX,
                              K.TMA_LOAD, K.CP_ASYNC_ARRIVE, K.CP_ASYNC_ARRIVE_INC, K.MMA_ARRIVE})
MAX_RELEASES = 64     # releases remembered per read (one per barrier): the first ones matter
MAX_STEPS = 10_000_000
# Events another role cannot observe: a role whose remaining events are all of these only waits
_INERT = frozenset({K.MBAR_WAIT, K.FENCE_PROXY, K.FENCE_INIT, K.PREFETCH, K.DESC_INIT, K.DESC_OFFSET})


@dataclass(frozen=True, slots=True)
class ProtocolIssue:
    """A fact about the mbarrier protocol; the plugin that reports it owns the wording.

    `facts` holds what was found (barrier, phase, counts, roles by index, buffer and
    slot, ...) and `related` the other events involved, each with what it is
    ("init", "arrival", "load", "earlier-load", "read", "released-read").
    """

    kind: IssueKind
    event: Event              # where to report
    facts: dict = field(default_factory=dict)
    related: tuple[tuple[Event, str], ...] = ()

    @property
    def key(self) -> tuple:
        """Identity for de-duplication: the kind and the node it is reported at."""
        return (self.kind, id(self.event.node))


class ProtocolContext(Protocol):
    """What the simulation needs of the mbarrier analysis that runs it (`mbarrier.MBarrierAnalysis`):
    named here so that this module does not import that one."""

    @property
    def model(self) -> KernelModel: ...

    @property
    def cluster_barriers(self) -> frozenset[str]: ...

    @property
    def tma_bytes(self) -> dict[int, int | None]: ...

    @property
    def tma_targets(self) -> frozenset[str]: ...

    def _deadlock(self, traces, pcs, bars) -> list[ProtocolIssue]: ...


@dataclass
class BarrierState:
    """One mbarrier: what `init` asked for and what has arrived in the current phase."""

    init: int | None = None
    arrivals: int = 0
    tx: int = 0
    completed: int = 0
    completed_at: tuple | None = None   # (role, iteration) of the last completion
    announced: bool = False             # an expect_tx of the current phase came before its completion
    held_open: bool = False             # the last completed phase had one (its loads' bytes held it)


@dataclass
class Reader:
    """A read of a TMA-written slot and the arrivals/barriers after it that release it."""

    role: int
    event: Event
    releases: list[tuple] = field(default_factory=list)   # (barrier, phase) | ("sync", key, group)
    _seen: set = field(default_factory=set)
    _syncs: int = 0                  # how many of `releases` are barrier rendezvous
    dead: bool = False               # its slot was overwritten: no longer anyone's to release
    in_flight: bool = False          # a tcgen05 MMA's read not yet covered by a tcgen05.commit,
                                     # or a wgmma's read whose group no wait has retired yet
    early: bool = False              # an arrival came while the wgmma still read (released nothing)
    _commit: object = None           # the tcgen05.commit that released it (a multicast arrives on
                                     # several barriers: each of its arrivals releases the read)

    def __post_init__(self) -> None:
        ev = self.event
        self.in_flight = ev is not None and (ev.committed or (ev.awaited and not ev.retired))

    def release(self, rel: tuple, commit: bool = False, node: object = None) -> None:
        """Record a release after the read; the first arrival on each barrier is the one
        that matters (later phases of it are stronger, never weaker, orderings).  Barrier
        rendezvous and mbarrier arrivals are capped apart: a template's named barriers
        (six per `tl::AllReduce` call) must not crowd out the arrival that releases the slot.

        A tcgen05 MMA's read (`Event.committed`) is released by its role's first
        `tcgen05.commit` arrival after it (`commit`) and by nothing else: that arrival fires
        when the MMAs have read their operands, while any other arrival or barrier of the role
        may come first.  What is ordered after the commit's phase (a consumer that waited on it,
        then arrived on the slot's empty barrier) reaches the writer through the phase itself
        (`ProtocolSim.released`: the frontier)."""
        if self.event is not None and self.event.committed:
            if not commit:
                return
            if self.in_flight:
                self.in_flight, self._commit = False, node
            elif node is None or node is not self._commit:
                return          # a later commit: the first one's phase already orders the read
        elif self.in_flight:
            self.early = self.early or rel[0] != "sync"
            return          # a wgmma still reading: an arrival now releases nothing (`retire`)
        key = rel[0] if rel[0] != "sync" else rel
        if key in self._seen:
            return
        sync = rel[0] == "sync"
        if (self._syncs if sync else len(self.releases) - self._syncs) < MAX_RELEASES:
            self._seen.add(key)
            self.releases.append(rel)
            self._syncs += sync


@dataclass
class Generation:
    """A slot's contents: the TMA loads of one (role, iteration) into it, and their readers."""

    writes: dict[int | None, tuple[Barrier | None, int, Event]]
    context: tuple
    readers: list[Reader] = field(default_factory=list)


class AccessRecorder:
    """What a simulation tells about plain accesses as it interleaves the roles (`model.races`)."""

    def access(self, r: int, ev: Event) -> None:
        """Role `r` performs the memory access `ev` now."""

    def passed(self, r: int, ev: Event, group: dict) -> None:
        """Role `r` passed the block or named barrier `ev` (instance `group`)."""

    def barrier_use(self, r: int, ev: Event) -> None:
        """Role `r` initialises (`init`) or uses (arrive, wait, expect_tx, TMA) an mbarrier."""


def vc_max(into: list[int], other: list[int]) -> None:
    for i, v in enumerate(other):
        if into[i] < v:
            into[i] = v


def merge(into: Frontier, other: Frontier) -> None:
    for bar, phase in other.items():
        if into.get(bar, -1) < phase:
            into[bar] = phase


class ProtocolSim:
    """One run of the roles against each other; `run()` returns the protocol issues."""

    def __init__(self, analysis: ProtocolContext, tx_known: bool) -> None:
        self.a = analysis
        self.model = analysis.model
        self.tx_known = tx_known
        self.traces = self.model.trace.events
        n = len(self.traces)
        self.bars: dict[Barrier, BarrierState] = {}
        self.known: list[Frontier] = [dict() for _ in range(n)]     # happens-before frontier per role
        self.handed: dict[tuple[Barrier, int], Frontier] = {}     # what the arrivers of a phase knew
        self.pcs = [0] * n
        # block and named barriers: the group of roles gathering at each, and who passed which
        self.open_group: dict[object, dict] = {}
        self.at_barrier: dict[int, tuple[object, dict]] = {}
        self.groups = 0                                  # barrier instances opened so far
        self.members: dict[int, set[int]] = {}           # instance -> roles that passed it
        self.ranges: dict[tuple, Generation] = {}
        self.readers_of: dict[int, list[Reader]] = {}     # each role's live readers (releases go to them)
        self.retired: dict[int, set[tuple]] = {}          # each role's wgmma reads its waits retired
        self.issues: list[ProtocolIssue] = []
        # Vector clocks (one component per role) for ordering plain accesses across roles:
        # a role ticks its own component after each synchronisation it takes part in.
        # ... and one more component per role for its tensor-core unit (`n + r`): a tcgen05 MMA's
        # read of shared memory lasts until its commit's arrival, so only the commit's phase, not
        # the role's program order, hands it on (`unit`: the epoch of the role's uncommitted MMAs)
        self.vc: list[list[int]] = [[1 if q == r else 0 for q in range(2 * n)] for r in range(n)]
        self.unit = [1] * n
        self.handed_vc: dict[tuple[Barrier, int], list[int]] = {}
        # Progress clocks: the same components, but an elected thread's arrival hands on its role's
        # whole progress (every thread of the role passed what came before it in program order),
        # where `published` hands on only what orders the role's accesses; they decide which
        # events are ordered after a role reaches a wait (`overruns`), never an access pair
        self.progress: list[list[int]] = [list(clock) for clock in self.vc]
        self.handed_progress: dict[tuple[Barrier, int], list[int]] = {}
        self.disabled: frozenset[int] = frozenset()      # barrier nodes treated as absent
        self.recorder: AccessRecorder | None = None
        # each role's cp.async copies not yet complete, with their commit group (None: none yet):
        # a copy's write is recorded where it completes, not where it is issued (`on_copy`)
        self.copies: list[list[list]] = [[] for _ in range(n)]
        self.commits = [0] * n
        # per role, the clock before its last barrier that all its threads passed (`published`)
        self.full_sync = [0] * n
        # Tensor Memory (`on_tmem`): each role's MMAs not yet covered by a tcgen05.commit, the
        # latest committed MMA per (allocation, issuing role) with the phase its commit arrives
        # in, and the tcgen05_ld reads with their role's clock
        self.tmem_open: list[list[Event]] = [[] for _ in range(n)]
        self.tmem_done: dict[tuple[str, int], list[tuple[Barrier, int, Event]]] = {}
        self.tmem_reads: dict[str, list[tuple[int, int, Event]]] = {}
        # named barriers two groups share (`model.mixing`): the ids watched, each arrival's role,
        # clock, event and barrier instance, and the statements found arriving concurrently with
        # another group's arrival at the same id; `absent`: statements that order nothing
        self.watch: frozenset[int] = frozenset()
        self.named_log: dict[int, list[tuple[int, list[int], Event, int]]] = {}
        self.mixed: dict[int, tuple[Event, Event]] = {}
        self.absent: frozenset[int] = frozenset()
        # Phase overrun (`overruns`): each passed parity wait (role, event, barrier, the phase it
        # observed, the role's clock there), and per phase the join of the clocks of the events
        # that complete it (its arrivals and the TMA loads whose bytes it counts), with the first
        # of those events.  Not `handed_progress`: a load does not tick its role's clock, so what the
        # waiters learn from it would order the issuing role's next wait after the load itself
        self.waits: list[tuple[int, Event, Barrier, int, int, int]] = []
        self.phase_clock: dict[tuple[Barrier, int], list[int]] = {}
        self.phase_events: dict[tuple[Barrier, int], list[Event]] = {}
        # The phase each arrival counted towards (by event identity), and the threads each phase
        # received: where roles arrive on alternate phases (ping-pong consumers), this is what
        # pairs arrivals with phases (`MBarrierAnalysis._arrival_counts`)
        self.stuck = False      # no role could move while some had not finished: a hang
        self.arrival_phase: dict[int, tuple[Barrier, int]] = {}
        self.phase_threads: dict[tuple[Barrier, int], int] = {}

    # ------------------------------------------------------------------ driver
    def run(self) -> list[ProtocolIssue]:
        steps = 0
        traces, pcs = self.traces, self.pcs
        while any(pc < len(t) for pc, t in zip(pcs, traces)) and steps < MAX_STEPS:
            progress = False
            for r, trace in enumerate(traces):
                while pcs[r] < len(trace):
                    steps += 1
                    if not self.step(r, trace[pcs[r]]):
                        break
                    pcs[r] += 1
                    progress = True
            if not progress:
                self.stuck = True
                self.issues.extend(self.a._deadlock(traces, pcs, self.bars))
                break
        if all(pc >= len(t) for pc, t in zip(pcs, traces)):
            self.unwaited_loads()
        self.overruns()
        for r in range(len(traces)):
            self.complete_copies(r, None)       # never waited for: complete at the role's end
        return self.issues

    def unwaited_loads(self) -> None:
        """TMA loads whose phase no role observed by the end: they may still be landing when the
        block exits (the shared memory may already belong to the next block on the SM)."""
        for gen in self.ranges.values():
            for wb, phase, wev in gen.writes.values():
                if wb is not None and all(known.get(wb, -1) < phase for known in self.known):
                    self.issues.append(ProtocolIssue(IssueKind.TMA_UNWAITED, wev,
                                                     {"barrier": wb, "phase": phase, "buffer": wev.buffer,
                                                      "slot": self.model.slot(wev)}))

    def overruns(self) -> None:
        """Parity waits the barrier can run two phases past.

        `try_wait.parity(p)` tells only the current phase from the one before it.  A wait that
        observed phase P is sound only if phase P + 1 cannot complete before the wait runs: some
        event that completes P + 1 must be ordered after the waiting role's progress at the wait
        (its clock component there).  Where none is, a schedule in which the other roles run
        ahead completes P + 1 first; the wait then blocks until phase P + 2, a hang where that
        phase needs the waiting role, or returns a phase late.  One schedule (this simulation's)
        cannot show it; the clocks of the phase's events decide it for every schedule.

        A role that between the wait and its next wait on the same barrier only waits is left
        out: its lag changes nothing another role sees until that next wait, and it is the idiom
        of every TMA producer (CUTLASS's `producer_acquire` too), whose lanes besides the elected
        one wait on the empty barriers and issue nothing."""
        seen: set[int] = set()
        for r, ev, b, phase, clock, pc in self.waits:
            later = self.phase_clock.get((b, phase + 1))
            if later is None or id(ev.node) in seen or self.bars[b].completed <= phase + 1:
                continue
            if later[r] < clock and not self._only_waits(r, pc, b):
                seen.add(id(ev.node))
                self.issues.append(ProtocolIssue(
                    IssueKind.PHASE_OVERRUN, ev,
                    {"role": r, "barrier": b, "parity": ev.value, "phase": phase},
                    tuple((e, "arrival") if e.kind in ARRIVE_KINDS else (e, "TMA load")
                          for e in self.phase_events.get((b, phase + 1), ()))))

    def _only_waits(self, r: int, pc: int, b: Barrier) -> bool:
        """Whether role `r` does nothing another role can observe after its event `pc` up to its
        next wait on `b` (or its end)."""
        for ev in self.traces[r][pc + 1:]:
            if ev.kind == K.MBAR_WAIT and ev.barrier == b:
                return True
            if ev.kind not in _INERT:
                return False
        return True

    def _completes(self, r: int, ev: Event, b: Barrier, phase: int) -> None:
        """Event `ev` of role `r` counts towards phase `phase` of `b` (`overruns`)."""
        key = (b, phase)
        clock = self.phase_clock.get(key)
        if clock is None:
            clock = self.phase_clock[key] = [0] * len(self.vc[r])
        vc_max(clock, self.progress[r])
        events = self.phase_events.setdefault(key, [])
        if len(events) < 2 and all(e.node is not ev.node for e in events):
            events.append(ev)

    # ------------------------------------------------------------------ cp.async completion
    def on_copy(self, r: int, ev: Event) -> bool:
        """A cp.async: its write may land at any time from its issue until it completes: at the
        issuing thread's `cp_async_wait` that covers its group, at a `cp.async.mbarrier.arrive`
        (which tracks every earlier copy of the thread), or, with neither, at the role's end.  So
        it is recorded twice: at the issue (what it may overwrite: reads not ordered before the
        issue) and at the completion (what reads it: only those ordered after the completion).
        An mbarrier arrival or a barrier between the two orders nothing about the write (a plain
        `arrive()` after an unwaited copy)."""
        self.on_access(r, ev)
        if self.recorder is not None:
            self.copies[r].append([None, ev])
        return True

    def on_commit(self, r: int, ev: Event) -> bool:
        self.commits[r] += 1
        for copy in self.copies[r]:
            if copy[0] is None:
                copy[0] = self.commits[r]
        return True

    def on_copy_wait(self, r: int, ev: Event) -> bool:
        if ev.value is not None:
            self.complete_copies(r, self.commits[r] - ev.value)
        return True

    def on_copy_arrive(self, r: int, ev: Event) -> bool:
        self.complete_copies(r, None)
        return self.on_arrive(r, ev)

    def complete_copies(self, r: int, upto: int | None) -> None:
        """Record the writes of role `r`'s copies in groups up to `upto` (None: every copy)."""
        if self.recorder is None or not self.copies[r]:
            return
        done = [c for c in self.copies[r] if upto is None or (c[0] is not None and c[0] <= upto)]
        if not done:
            return
        gone = {id(c) for c in done}
        self.copies[r] = [c for c in self.copies[r] if id(c) not in gone]
        for _, ev in done:
            self.recorder.access(r, ev)

    def step(self, r: int, ev: Event) -> bool:
        """Execute one event of role `r`; False when the role must wait."""
        b = ev.barrier
        if b is not None and b[0] in self.a.cluster_barriers and ev.kind != K.TMA_LOAD:
            # decided by the whole cluster: assume the protocol holds (see the cluster note)
            if ev.kind == K.MBAR_WAIT:
                self.known[r][b] = 1 << 30
            elif ev.kind == K.MMA_ARRIVE:       # and the role's MMAs complete by its next step
                self._hand_unit(r, self.vc[r])
            return True
        if self.recorder is not None and ev.kind in MBAR_EVENT_KINDS:
            self.recorder.barrier_use(r, ev)
        handler = _HANDLERS.get(ev.kind)
        return handler(self, r, ev) if handler is not None else True

    def state(self, ev: Event) -> BarrierState | None:
        return self.bars.setdefault(ev.barrier, BarrierState()) if ev.barrier else None

    def complete(self, bar: Barrier, ev: Event) -> None:
        st = self.bars[bar]
        while st.init and st.arrivals >= st.init and (st.tx <= 0 or not self.tx_known):
            st.arrivals -= st.init
            st.completed += 1
            st.tx = 0
            st.completed_at = (ev.role, ev.iteration)
            st.held_open, st.announced = st.announced, False

    # ------------------------------------------------------------------ mbarrier events
    def on_init(self, r: int, ev: Event) -> bool:
        st = self.state(ev)
        if st is not None:
            if ev.value is not None and ev.value <= 0:
                return True          # a count that can never complete: reported statically
            st.init = ev.value
        return True

    def on_arrive(self, r: int, ev: Event) -> bool:
        st = self.state(ev)
        if st is None:
            return True
        b = ev.barrier
        assert b is not None
        phase = st.completed
        self._completes(r, ev, b, phase)
        # Any arrive after a read releases it: a role that learns this phase is
        # ordered after the read.  A slot read twice is released only by
        # arrivals after its last read.
        for reader in self.live_readers(r):
            reader.release((b, phase), commit=ev.kind == K.MMA_ARRIVE, node=ev.node)
        if ev.kind == K.MMA_ARRIVE:
            self._commit_tmem(r, b, phase)
        handed = self.handed.setdefault((b, phase), {})
        merge(handed, self.known[r])
        handed_vc = self.handed_vc.setdefault((b, phase), [0] * (2 * len(self.vc)))
        vc_max(handed_vc, self.published(r, ev))
        if ev.kind == K.MMA_ARRIVE:         # fires when the role's MMAs so far have completed
            self._hand_unit(r, handed_vc)
        vc_max(self.handed_progress.setdefault((b, phase), [0] * (2 * len(self.vc))), self.progress[r])
        self.vc[r][r] += 1
        self.progress[r][r] += 1
        if ev.kind == K.MBAR_ARRIVE_EXPECT_TX:
            st.tx += (ev.value or 0) * ev.mult
            st.announced = True
        if ev.kind != K.CP_ASYNC_ARRIVE_INC:
            # `cp.async.mbarrier.arrive` without `.noinc` raises the pending count by one before
            # its asynchronous arrival (PTX): no net arrival.  It still publishes the role's
            # accesses and copies to the phase, which cannot complete before the copies land.
            st.arrivals += ev.mult
            self.arrival_phase[id(ev)] = (b, phase)
            self.phase_threads[(b, phase)] = self.phase_threads.get((b, phase), 0) + ev.mult
        self.complete(b, ev)
        return True

    def _commit_tmem(self, r: int, b: Barrier, phase: int) -> None:
        """A tcgen05.commit of role `r` arrives on `b` in `phase` once every earlier tcgen05
        operation of its thread has completed (PTX ISA, `tcgen05.commit`): its MMAs not yet
        committed, and those an earlier commit covered too, so either commit's phase orders
        a read of their columns (`tmem_done` keeps each commit since the columns' last MMA).
        Only the MMAs the barrier's CTA holds (`commit_covers`: a 2-CTA pair's)."""
        covered = [m for m in self.tmem_open[r] if self.commit_covers(m.buffer, b)]
        for (buffer, w), commits in self.tmem_done.items():
            if w == r and self.commit_covers(buffer, b) and len(commits) < MAX_RELEASES:
                commits.append((b, phase, commits[0][2]))
        for mma in covered:
            self.tmem_done[(mma.buffer or "", r)] = [(b, phase, mma)]
        self.tmem_open[r] = [m for m in self.tmem_open[r] if not any(m is c for c in covered)]

    def commit_covers(self, buffer: str | None, b: Barrier) -> bool:
        """Whether a commit's arrival on `b` tells that MMAs into `buffer` completed."""
        return True

    def _hand_unit(self, r: int, clock: list[int]) -> None:
        """A tcgen05.commit of role `r`: `clock` learns that the role's MMAs so far completed
        (its tensor-core unit's component), and later MMAs start a new epoch."""
        unit = len(self.vc) + r
        clock[unit] = max(clock[unit], self.unit[r])
        self.unit[r] += 1

    def published(self, r: int, ev: Event) -> list[int]:
        """The clock an arrival of role `r` hands to the waiters of its phase.  An arrival by all
        of the role's threads hands everything the role did; one by some of them (an elected
        thread) orders only what every thread of the role had done before the role's last barrier
        of all its threads (`full_sync`): the other threads' accesses since are not before it."""
        role = self.model.roles[r]
        if ev.mult >= role.threads:
            return self.vc[r]
        clock = list(self.vc[r])
        clock[r] = min(clock[r], self.full_sync[r])
        return clock

    def on_expect_tx(self, r: int, ev: Event) -> bool:
        st = self.state(ev)
        if st is not None:
            st.tx += (ev.value or 0) * ev.mult
            st.announced = True
        return True

    def on_wait(self, r: int, ev: Event) -> bool:
        st = self.state(ev)
        if st is None or ev.value is None:
            return True
        if (st.completed & 1) == (ev.value & 1):       # try_wait.parity reads bit 0
            return False
        b = ev.barrier
        assert b is not None
        self.waits.append((r, ev, b, st.completed - 1, self.vc[r][r], self.pcs[r]))
        self.learn(r, b, st.completed - 1)
        return True

    def learn(self, r: int, b: Barrier, phase: int) -> None:
        """Role `r` observed phase `phase` of `b` (and so every earlier one) complete."""
        known = self.known[r]
        start = known.get(b, -1) + 1
        if phase < start:
            return
        known[b] = phase
        for p in range(max(start, phase - 64), phase + 1):
            handed = self.handed.get((b, p))
            if handed:
                merge(known, handed)
            hvc = self.handed_vc.get((b, p))
            if hvc:
                vc_max(self.vc[r], hvc)
            progress = self.handed_progress.get((b, p))
            if progress:
                vc_max(self.progress[r], progress)

    # ------------------------------------------------------------------ block and named barriers
    def rendezvous(self, r: int, key: object, threads: int, needed: int | None,
                   blocking: bool = True, ev: Event | None = None) -> bool:
        """A barrier that completes once `needed` threads have arrived (None: every role).

        `__syncthreads` waits for every role; `bar.sync id, n` for any `n` threads,
        so two warp groups that each use barrier 3 with 128 threads do not wait
        for each other.  The participants' frontiers are merged.
        """
        level = self.at_barrier.get(r)
        if level is None or level[0] != key:
            level = self._join(r, key, threads, needed, ev)
        group = level[1]
        if not blocking:                 # bar.arrive: counted, and on its way
            del self.at_barrier[r]
            return True
        if not group.get("done"):
            return False
        del self.at_barrier[r]
        merge(self.known[r], group["known"])
        vc_max(self.vc[r], group["vc"])
        vc_max(self.progress[r], group["progress"])
        if threads >= self.model.roles[r].threads:
            self.full_sync[r] = group["vc"][r]      # every thread of the role passed it
        self.members.setdefault(group["n"], set()).update(group["roles"])
        if self.recorder is not None and ev is not None:
            self.recorder.passed(r, ev, group)
        return True

    def _join(self, r: int, key: object, threads: int, needed: int | None, ev: Event | None) -> tuple:
        """Role `r` arrives at barrier `key`: it joins (or opens) the barrier's open instance,
        which completes once `needed` threads (None: every live role) have joined."""
        group = self.open_group.get(key)
        if group is None:
            self.groups += 1
            group = self.open_group[key] = {"roles": [], "threads": 0, "known": {}, "n": self.groups}
        group["roles"].append(r)
        group["threads"] += threads
        merge(group["known"], self.known[r])
        vc_max(group.setdefault("vc", [0] * (2 * len(self.vc))), self.vc[r])
        vc_max(group.setdefault("progress", [0] * (2 * len(self.vc))), self.progress[r])
        if ev is not None and isinstance(key, tuple) and key[1] in self.watch:
            self._concurrent_arrival(r, key[1], ev, group["n"])
        self.vc[r][r] += 1
        self.progress[r][r] += 1
        for reader in self.live_readers(r):
            reader.release(("sync", key, group["n"]))
        self.at_barrier[r] = level = (key, group)
        live = [o for o in self.peers(r, key) if self.pcs[o] < len(self.traces[o])]
        full = (group["threads"] >= needed if needed else set(group["roles"]) >= set(live))
        if full:
            group["done"] = True
            del self.open_group[key]
        return level

    def _concurrent_arrival(self, r: int, ident: int, ev: Event, instance: int) -> None:
        """Role `r` arrives at named barrier `ident` (in barrier instance `instance`): an arrival
        of another role at the same id in another instance that this one is not ordered after
        (its clock component not past it) could have been counted in the same generation."""
        clock = list(self.vc[r])
        log = self.named_log.setdefault(ident, [])
        for q, other, earlier, n in log:
            if q != r and n != instance and clock[q] <= other[q]:
                self.mixed.setdefault(id(ev.node), (ev, earlier))
                self.mixed.setdefault(id(earlier.node), (earlier, ev))
        log.append((r, clock, ev, instance))
        if len(log) > 64:
            del log[:len(log) - 64]

    def peers(self, r: int, key: object) -> range | list[int]:
        """The roles a barrier `key` that role `r` reaches waits for when it counts no threads
        (`__syncthreads`: every live role of the block)."""
        return range(len(self.traces))

    def barrier_key(self, r: int, ev: Event) -> object:
        """Which barrier instance a block or named barrier event of role `r` gathers at."""
        return "block" if ev.kind == K.SYNC else ev.barrier

    def one_warpgroup(self, a: int, b: int) -> bool:
        """Whether roles `a` and `b` share a warp group (one wgmma's threads)."""
        return _one_warpgroup(self.model, a, b)

    def on_sync(self, r: int, ev: Event) -> bool:
        if id(ev.node) in self.disabled:
            return True
        return self.rendezvous(r, self.barrier_key(r, ev), ev.mult, None, ev=ev)

    def on_named_sync(self, r: int, ev: Event) -> bool:
        if id(ev.node) in self.disabled or id(ev.node) in self.absent or overfull(ev):
            return True         # an overfull count orders no given pair (`model.named`, `model.mixing`)
        return self.rendezvous(r, self.barrier_key(r, ev), ev.mult, ev.value or None, ev=ev)

    def on_named_arrive(self, r: int, ev: Event) -> bool:
        if overfull(ev) or id(ev.node) in self.absent:
            return True
        return self.rendezvous(r, self.barrier_key(r, ev), ev.mult, ev.value or None, blocking=False, ev=ev)

    # ------------------------------------------------------------------ Tensor Memory
    def on_tmem(self, r: int, ev: Event) -> bool:
        """A tcgen05 MMA writes its accumulator columns asynchronously, until the phase its
        role's next tcgen05.commit arrives in; a tcgen05_ld reads them.  The MMAs into one
        accumulator run in issue order (PTX ISA 9.7.16.6.2), so the latest commit's phase stands
        for every earlier MMA of that role.  A read needs that phase known (RAW); an MMA needs
        every other role's read of its columns ordered before it (WAR)."""
        if ev.access == "write":
            for q, clock, read in self.tmem_reads.get(ev.buffer or "", ()):
                if q != r and self.vc[r][q] < clock and _tmem_overlap(ev, read):
                    self.issues.append(ProtocolIssue(IssueKind.TMEM_WAR, ev, {"role": r, "reader_role": q},
                                                     ((read, "tmem-read"),)))
            self.tmem_open[r].append(ev)
        else:
            self._tmem_read(r, ev)
        return True

    def _tmem_read(self, r: int, ev: Event) -> None:
        """A tcgen05_ld: every role's MMAs into its columns must be committed in a phase `r` knows."""
        for w in range(len(self.traces)):
            pending = next((m for m in self.tmem_open[w] if m.buffer == ev.buffer and _tmem_overlap(m, ev)), None)
            if pending is not None:
                self.issues.append(ProtocolIssue(IssueKind.TMEM_RAW, ev, {"role": r, "writer_role": w,
                                                                          "committed": False},
                                                 ((pending, "tmem-write"),)))
                continue
            commits = self.tmem_done.get((ev.buffer or "", w))
            if commits and _tmem_overlap(commits[0][2], ev) and all(
                    self.known[r].get(bar, -1) < phase for bar, phase, _ in commits):
                done = commits[0]
                self.issues.append(ProtocolIssue(IssueKind.TMEM_RAW, ev, {"role": r, "writer_role": w,
                                                                          "barrier": done[0], "phase": done[1]},
                                                 ((done[2], "tmem-write"),)))
        self.tmem_reads.setdefault(ev.buffer or "", []).append((r, self.vc[r][r], ev))

    def live_readers(self, r: int) -> list[Reader]:
        """Role `r`'s readers of slots still holding what they read (the dead ones dropped)."""
        readers = self.readers_of.get(r)
        if not readers:
            return []
        if any(x.dead for x in readers):
            readers[:] = [x for x in readers if not x.dead]
        return readers

    def released(self, r: int, release: tuple) -> bool:
        """Whether role `r` is ordered after one release of a read."""
        if release[0] == "sync":
            return r in self.members.get(release[2], ())
        bar, phase = release
        return self.known[r].get(bar, -1) >= phase

    # ------------------------------------------------------------------ shared memory
    def on_tma_load(self, r: int, ev: Event) -> bool:
        st = self.state(ev)
        if st is None:
            return True
        # Without byte counts the phase completes at the arrive; loads the same
        # thread issues after it in the same iteration still count towards that
        # phase (the hardware holds it open for their bytes) if an expect_tx announced
        # them before the phase completed: an `arrive()` before its `expect_tx` completes the
        # phase on arrivals alone (tx-count 0), and the loads land in the next one.
        late = not self.tx_known and st.completed_at == (r, ev.iteration) and st.held_open
        self.tma_write(r, ev, st.completed - (1 if late else 0))
        if ev.barrier is not None:
            self._completes(r, ev, ev.barrier, st.completed - (1 if late else 0))
        size = self.a.tma_bytes.get(id(ev))
        if self.tx_known and size is not None and ev.barrier is not None:
            st.tx -= size * ev.mult
            self.complete(ev.barrier, ev)
        return True

    def on_global(self, r: int, ev: Event) -> bool:
        if self.recorder is not None:
            self.recorder.access(r, ev)
        return True

    def on_access(self, r: int, ev: Event) -> bool:
        if self.recorder is not None:
            self.recorder.access(r, ev)
        if ev.possible:
            # a call that is not modelled receives a pointer into the slot: it may read it, so the
            # load is consumed there and its release is tracked; what it reads is not checked
            # (never an error: `read`, `_unreleased`)
            if ev.access == "read" and ev.kind == K.SMEM:
                self.read(r, ev)
            return True
        if ev.access in ("write", "async"):
            # Threads (or their cp.async) overwrite the bytes: what is there now is
            # no longer a TMA load's, and reading it needs no mbarrier wait (the
            # block-barrier rules of the cp.async model apply instead).
            rng = self.model.byte_range(ev)
            if rng is not None:
                for key in [k for k in self.ranges if k[0] == rng[0] and k[1] < rng[2] and rng[1] < k[2]]:
                    gen = self.ranges.pop(key)
                    self._landing(r, ev, gen)
                    for reader in gen.readers:
                        reader.dead = True
        elif ev.access == "read" and ev.kind == K.SMEM:
            self.read(r, ev)
        return True

    def _landing(self, r: int, ev: Event, gen: Generation) -> None:
        """A store of role `r` over a slot a TMA load writes: the load must be known complete
        (its phase observed), else its bytes may land after, or under, the store (WAW)."""
        for wb, phase, wev in gen.writes.values():
            if wb is not None and self.known[r].get(wb, -1) < phase:
                self.issues.append(ProtocolIssue(IssueKind.TMA_WAW, ev, {"role": r, "buffer": ev.buffer,
                                                                         "barrier": wb, "phase": phase},
                                                 ((wev, "load"),)))
                return

    def read(self, r: int, ev: Event) -> None:
        model = self.model
        if ev.retired:
            self.retire(r, ev)
        rng = model.byte_range(ev)
        gen = self.ranges.get(rng) if rng else None
        if gen is None and rng is not None and ev.buffer in self.a.tma_targets and not ev.possible:
            self.issues.append(ProtocolIssue(IssueKind.RAW, ev, {"role": r, "buffer": ev.buffer,
                                                                 "slot": model.slot(ev), "never_loaded": True}))
        if gen is None:
            return
        for wb, phase, wev in gen.writes.values():
            if wb is not None and self.known[r].get(wb, -1) < phase and not ev.possible:
                self.issues.append(ProtocolIssue(
                    IssueKind.RAW, ev, {"role": r, "buffer": ev.buffer, "slot": model.slot(ev),
                                        "barrier": wb, "phase": phase}, ((wev, "load"),)))
                break
        reader = Reader(r, ev)
        gen.readers.append(reader)
        self.readers_of.setdefault(r, []).append(reader)

    def _retired_for(self, r: int, reader: Reader) -> bool:
        """Whether role `r`'s own `warpgroup_wait` completed the wgmma read of `reader`: one warp
        group, and the read is the retired copy or one whose group `r` has retired (a wgmma is
        one instruction of its warp group; any of its threads' waits completes it for all)."""
        ev = reader.event
        done = ev.retired or (ev.awaited and _wgmma_key(ev) in self.retired.get(r, ()))
        return done and self.one_warpgroup(reader.role, r)

    def retire(self, r: int, ev: Event) -> None:
        """A wait retired the wgmma group of the read `ev` (its `retired` copy): the read at its
        issue is complete, and an arrival from now on releases it.  An arrival between the issue
        and here released a slot the tensor cores were still reading."""
        self.retired.setdefault(r, set()).add(_wgmma_key(ev))
        for reader in self.readers_of.get(r, ()):
            old = reader.event
            if reader.in_flight and old.awaited and not old.retired and _wgmma_key(old) == _wgmma_key(ev):
                reader.in_flight = False

    def tma_write(self, r: int, ev: Event, phase: int) -> None:
        """Record a TMA write; loads of one iteration into one slot form one generation."""
        model = self.model
        rng = model.byte_range(ev)
        if rng is None:
            return
        old = self.ranges.get(rng)
        context = (r, ev.iteration)
        if old is not None and old.context == context:
            old.writes[ev.offset] = (ev.barrier, phase, ev)
            return
        if old is not None:
            self._overwrite(r, ev, old)
        self.ranges[rng] = Generation({ev.offset: (ev.barrier, phase, ev)}, context)

    def _overwrite(self, r: int, ev: Event, old: Generation) -> None:
        """A TMA write of a new generation over a slot: the old one's loads never read, and its
        readers that did not release it in a phase the writer observed; its readers end there."""
        if not old.readers and any(w[2].node is ev.node for w in old.writes.values()):
            prev = next(iter(old.writes.values()))[2]
            self.issues.append(ProtocolIssue(
                IssueKind.WAR_UNCONSUMED, ev, {"buffer": ev.buffer, "slot": self.model.slot(ev)},
                ((prev, "earlier-load"),)))
        else:
            self._landing(r, ev, old)       # two loads in flight into one slot land in any order
        for reader in old.readers:
            self._unreleased(r, ev, reader)
        for reader in old.readers:
            reader.dead = True

    def _unreleased(self, r: int, ev: Event, reader: Reader) -> None:
        """A WAR issue where role `r` overwrites what `reader` read before observing its release."""
        model = self.model
        if reader.event.possible or any(self.released(r, rel) for rel in reader.releases):
            return          # a call that may not read at all is no reason for an error
        if self._retired_for(r, reader):
            return        # the writer's own warpgroup_wait completed the wgmma's reads
        arrivals = [rel for rel in reader.releases if rel[0] != "sync"]
        facts = {"buffer": ev.buffer, "slot": model.slot(ev), "role": r, "reader_role": reader.role,
                 "wgmma_in_flight": reader.event.awaited and (reader.in_flight or reader.early)}
        if not reader.releases:
            self.issues.append(ProtocolIssue(IssueKind.WAR_UNRELEASED, ev, facts,
                                             ((reader.event, "read"),)))
            return
        rel = arrivals[0] if arrivals else None
        self.issues.append(ProtocolIssue(
            IssueKind.WAR_UNOBSERVED, ev,
            {**facts, "barrier": rel[0] if rel else None, "phase": rel[1] if rel else None},
            ((reader.event, "released-read"),)))


def _tmem_overlap(mma: Event, read: Event) -> bool:
    """Whether an MMA's accumulator may hold columns a tcgen05_ld reads: its first column inside
    the read's [lo, hi).  Where either is unknown the pair is not judged (the width of an MMA's
    accumulator is in its instruction descriptor, which is not decoded here)."""
    return mma.offset is not None and read.extent is not None and read.extent[0] <= mma.offset < read.extent[1]


def _wgmma_key(ev: Event) -> tuple:
    """One wgmma read at one iteration, whichever copy (issue or retired) and role names it: a
    wgmma is one instruction of its whole warp group, retired by any of its threads' waits."""
    return (id(ev.node), ev.iteration, ev.offset)


def _one_warpgroup(model: KernelModel, a: int, b: int) -> bool:
    ra, rb = model.roles[a], model.roles[b]
    return shares_warpgroup((ra.lo, ra.hi), (rb.lo, rb.hi))


_HANDLERS: dict[EventKind, Callable[[ProtocolSim, int, Event], bool]] = {
    K.MBAR_INIT: ProtocolSim.on_init,
    **{kind: ProtocolSim.on_arrive for kind in ARRIVE_KINDS},
    K.MBAR_EXPECT_TX: ProtocolSim.on_expect_tx,
    K.MBAR_WAIT: ProtocolSim.on_wait,
    K.SYNC: ProtocolSim.on_sync,
    K.NAMED_SYNC: ProtocolSim.on_named_sync,
    K.NAMED_ARRIVE: ProtocolSim.on_named_arrive,
    K.TMA_LOAD: ProtocolSim.on_tma_load,
    K.SMEM: ProtocolSim.on_access,
    K.GLOBAL: ProtocolSim.on_global,
    K.CP_ASYNC: ProtocolSim.on_copy,
    K.COMMIT: ProtocolSim.on_commit,
    K.WAIT: ProtocolSim.on_copy_wait,
    K.CP_ASYNC_ARRIVE: ProtocolSim.on_copy_arrive,
    K.CP_ASYNC_ARRIVE_INC: ProtocolSim.on_copy_arrive,
    K.TMEM: ProtocolSim.on_tmem,
}
