"""cp.async commit-group and block-barrier simulation.

Every thread of a role runs the same program, so one walk of the role's trace
stands for all of them.  A shared-memory byte range (a stage slot, or a whole
unversioned buffer) holds its last write and the reads since:

* a cp.async write is *pending* until `cp_async_commit` puts it in a group,
  *complete* once `cp_async_wait<N>` leaves at most N newer groups in flight,
  and *visible* to other threads after the next `__syncthreads`;
* a read must see a visible write (RAW), and a write must not hit a range
  other threads may still be reading, i.e. one read since the last barrier
  (WAR).

What each `__syncthreads` orders is read off one more walk per role (`record`): with
every claimable barrier taken as absent, each conflicting pair a barrier could order
is recorded with the barrier instances between its two sides.  A pair is a hazard
without a set of barriers exactly when every instance between its sides belongs to
that set: one query per barrier trial on pairs recorded once, instead of one
simulation per trial.  The same simulation, run with one wait changed, says how deep
each wait needs to be.
"""
from __future__ import annotations

import bisect
import functools
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..cuda import ast as A
from .intrinsics import HazardKind, K, cluster_barrier
from .intrinsics import HazardKind as H
from .threads import cross_thread, different_values, stored_value, touch
from .trace import Event
from .wgmma import retired_before

if TYPE_CHECKING:
    from .kernel import KernelModel


@dataclass(frozen=True, slots=True)
class Hazard:
    """`second` may observe or clobber `first`; `wait`, when set, is the last wait before."""

    kind: HazardKind
    first: Event
    second: Event
    buffer: str
    slot: int | None
    group: int | None = None
    groups_in_flight: int | None = None
    wait: Event | None = None
    commit: Event | None = None    # the cp_async_commit that closed `group`
    certain: bool = True           # False: whether two different threads meet is undecided
    scope: Event | None = None     # a named barrier between them that one side takes no part in
    boundary: Event | None = None  # a merged group: the first copy of the part after the missing commit
    in_flight: bool = False        # `first` is a cp.async's global read, not yet waited for at `second`

    @property
    def key(self) -> tuple:
        """Identity for de-duplication: the kind and the two nodes (unrolled iterations repeat them)."""
        return (self.kind, id(self.first.node), id(self.second.node))


@dataclass
class _Write:
    event: Event
    is_async: bool
    group: int | None = None
    complete: bool = False
    visible: bool = False
    skipped_by: Event | None = None     # a wait that ran while this copy was still uncommitted
    warp: int | None = None             # lanes of a __syncwarp after it (orders that warp's lanes)
    since: int = 0                      # barriers recorded before it completed (`_Sim.log`)


@dataclass
class _Range:
    start: int
    end: int
    write: _Write | None = None
    readers: list = field(default_factory=list)   # [Event, fenced, lanes of a __syncwarp after it,
                                                  #  barriers recorded before it]
    consumed: bool = True


# Hazards a barrier orders between threads: none when every overlap is a thread with itself.
_THREAD_EXACT = frozenset({H.RAW_UNSYNCED, H.WAR_UNSYNCED, H.RAW_PLAIN, H.WAR_PLAIN, H.WAW_PLAIN})
# a copy still in flight (or never committed, or merged into a later group) at a read of its
# bytes: a hazard for any thread, its own included, but only where the exact bytes meet
_BYTE_EXACT = frozenset({H.RAW_INCOMPLETE, H.RAW_UNCOMMITTED, H.WAIT_UNCOMMITTED, H.GROUP_MERGED, H.DRAIN})
# Hazards between plain (non-async) accesses: what only the plain simulation looks for.
PLAIN_KINDS = frozenset({H.RAW_PLAIN, H.WAR_PLAIN, H.WAW_PLAIN})
# A TMA store's read of shared memory still in flight (the plain simulation, `_Sim.on_tma_store`).
BULK_KINDS = frozenset({H.WAR_BULK, H.EXIT_BULK})


class _Sim:
    """One role's walk.  `record`: the barrier nodes whose instances are recorded (`log`)
    instead of applied; each pair of accesses that only such barriers could order is kept in
    `candidates` with the log positions its two sides lie at, and `replay` answers, for any
    set of those barriers gone, the hazards a walk without them would find."""

    def __init__(self, model: KernelModel, plain: bool, disabled: frozenset,
                 waits: dict[int, int], record: frozenset[int] | None = None) -> None:
        self.model = model
        self.plain = plain
        self.disabled = disabled
        self.waits = waits
        self.spaces: dict[str, list[_Range]] = {}
        self.starts: dict[str, list[int]] = {}     # of each space's entries, for bisection
        self.pending: list[_Write] = []
        self.writes: list[_Write] = []
        self.group = 0
        self.complete_upto = 0
        self.last_wait: Event | None = None
        self.barrier_inits: list[_Write] = []
        self.commits: dict[int, Event] = {}
        self.hazards: dict[tuple, Hazard] = {}
        self.own_reads: set[tuple[str | None, int | None]] = set()
        # plain stores inside loops walked once: a later iteration's store by another thread may
        # overwrite what an earlier iteration read (a loop-carried WAR), with no barrier in the loop
        self.once_writes: dict[int, list[tuple[Event, int]]] = {}
        self.merged: dict[int, tuple[Event, Event | None]] = {}   # group -> (last copy before the
                                                                   # missing commit, first one after)
        self.order: dict[int, int] = {}         # event identity -> position in the role's trace
        self.unfenced: list[list] = []          # the readers (`_Range.readers`) since a barrier
        self.record = record
        self.log: list[int] = []                # instances of the recorded barriers, in order
        # (kind, first, second, warp, keywords, log position of the first side, of the second)
        self.candidates: list[tuple] = []
        # TMA stores whose read of shared memory may still be in flight: reader entry (`_Range.
        # readers`) by id -> (entry, its bulk async-group, None until a `tma_store_arrive`)
        self.bulk: dict[int, tuple[list, int | None]] = {}
        self.bulk_group = 0
        self.copies_checked: set[int] = set()     # cp.async statements asked `replicated_store`
        self.arrivals: dict[object, list[Event]] = {}   # every thread's mbarrier arrivals, by barrier

    def ranges(self, ev: Event, create: bool) -> list[_Range]:
        """The pieces of shared memory an event touches.

        Pieces are kept disjoint: an access that covers part of a piece splits
        it, so a copy into bytes 8192-16383 never stands for bytes 0-8191 of
        the same buffer (an unrolled prologue filling two stages of one buffer).
        """
        rng = self.model.byte_range(ev, precise=True)
        if rng is None:
            return []
        space, start, end = rng
        entries = self.spaces.setdefault(space, [])
        starts = self.starts.setdefault(space, [])
        # entries are disjoint and sorted by start: the overlapping ones are one window
        hi_i = bisect.bisect_left(starts, end)
        lo_i = hi_i
        while lo_i > 0 and entries[lo_i - 1].end > start:
            lo_i -= 1
        window = entries[lo_i:hi_i]
        if not create or (len(window) == 1 and window[0].start == start and window[0].end == end):
            return window
        new: list[_Range] = []
        pieces: list[_Range] = []
        cursor = start
        for r in window:
            if r.start < start:
                new.append(_Range(r.start, start, r.write, list(r.readers), r.consumed))
            if cursor < r.start:                 # bytes nobody touched yet
                gap = _Range(cursor, r.start)
                new.append(gap)
                pieces.append(gap)
            piece = _Range(max(r.start, start), min(r.end, end), r.write, list(r.readers), r.consumed)
            new.append(piece)
            pieces.append(piece)
            cursor = piece.end
            if r.end > end:
                new.append(_Range(end, r.end, r.write, list(r.readers), r.consumed))
        if cursor < end:
            gap = _Range(cursor, end)
            new.append(gap)
            pieces.append(gap)
        entries[lo_i:hi_i] = new
        starts[lo_i:hi_i] = [r.start for r in new]
        return pieces

    def hazard(self, kind: HazardKind, first: Event, second: Event, warp: int | None = None,
               since: int | None = None, **kw: Any) -> None:
        """A pair that may race; `since`: the log position of the first side, when a barrier
        between the two sides would order them."""
        if self.record is not None:
            # only what a recorded barrier between them orders: every other pair (and one with
            # no recorded barrier between) is found alike by every trial, so by the base walk
            if since is not None and since < len(self.log):
                self.candidates.append((kind, first, second, warp, kw, since, len(self.log)))
            return
        self._found(kind, first, second, warp, **kw)

    def _found(self, kind: HazardKind, first: Event, second: Event, warp: int | None = None, **kw: Any) -> None:
        if kind in _BYTE_EXACT and self.disjoint(first, second):
            return          # hulls overlap, but no thread's bytes meet any thread's (issue 31, item 6)
        if kind in _THREAD_EXACT:
            between = self.between_threads(first, second, warp)
            if between is False:
                return      # each thread only meets its own bytes: program order suffices
            # two stores whose writers a condition on data selects may never both run
            picked = kind == H.WAW_PLAIN and (first.uncertain or second.uncertain)
            kw["certain"] = between is True and not picked
        h = Hazard(kind, first, second, second.buffer or first.buffer or "", self.model.slot(second), **kw)
        old = self.hazards.get(h.key)
        if old is None or (h.certain and not old.certain):
            self.hazards[h.key] = h

    def replicated_store(self, ev: Event) -> None:
        """One store (or cp.async) that several threads execute onto the same bytes.

        TileLang replicates a store when a tile has fewer elements than threads
        (`A_shared[tk] = A[bk * 128 + tk]` run by every thread): the threads write the
        same value and nothing races.  It is a race when the colliding threads store
        different values (`s[0] = threadIdx.x`); when the value cannot be compared
        (registers, memory) and a condition on data picks the writers (an arg-max), it
        is undecided."""
        assert ev.lanes is not None
        if self.record is not None:
            return          # no barrier orders a store with itself
        memo = self.model.index.memo.setdefault("replicated", {})
        key = (id(ev.node), ev.lanes.points, ev.lanes.ranges, ev.lanes.threads)
        if key not in memo:
            value = stored_value(ev.node)
            if ev.kind == K.CP_ASYNC and value is not None:
                value = A.Unary("*", value, value.span)     # a copy stores what its source holds
            memo[key] = different_values(ev.lanes, ev.lanes, (value, value), self.model.index.memo["eval"],
                                         self.model.registers, definitions=self.model.definitions)
        verdict = memo[key]
        if verdict is False:
            return
        if verdict is True:
            self.hazard(H.WAW_PLAIN, ev, ev)
        else:
            self.hazards.setdefault((H.WAW_PLAIN, id(ev.node), id(ev.node)),
                                    Hazard(H.WAW_PLAIN, ev, ev, ev.buffer or "", self.model.slot(ev),
                                           certain=False))

    def disjoint(self, a: Event, b: Event) -> bool:
        """Whether no byte `a` touches in any thread is touched by `b` in any thread, the same
        thread included: a wait leaves a copy in flight, and it matters to whoever reads its
        bytes, its own thread too.  Decided on the exact per-thread sets (`model.presburger`);
        False where either side's bytes are not per-thread sets (collectives, unknown indices)."""
        if a.unknown_footprint or b.unknown_footprint or a.possible or b.possible:
            return False
        if a.lanes is None or b.lanes is None or a.lanes.collective or b.lanes.collective:
            return False
        return touch(a.lanes, b.lanes, self.model.index.memo["eval"], self.model.shift(a, b)) is False

    def disjoint_rows(self, a: Event, b: Event) -> bool:
        """Whether two accesses, one of them a warp collective, touch no common byte in any
        threads (the sets, guards included: a collective read in a branch no block takes)."""
        assert a.lanes is not None and b.lanes is not None
        return touch(a.lanes, b.lanes, self.model.index.memo["eval"], self.model.shift(a, b)) is False

    def between_threads(self, a: Event, b: Event, warp: int | None = None) -> bool | None:
        """Whether `b` touches bytes a *different* thread touched in `a` (None: undecided), not
        counting the pairs a `__syncwarp(warp)` between them orders (one warp, both lanes in it).

        Warp-collective and single-thread operations (ldmatrix, wgmma, TMA, mbarrier inits)
        hand data between threads by definition; per-thread accesses are decided on their
        exact byte sets (`model.threads`); an access whose index or callee is unknown
        leaves it undecided."""
        if a.unknown_footprint or b.unknown_footprint or a.possible or b.possible:
            return None
        if a.lanes is None or b.lanes is None or a.lanes.collective or b.lanes.collective:
            # a collective's rows reach other lanes, whichever lane names them: a hazard where the
            # two touch a common byte at all, under their guards (any threads), and False where
            # every thread of both lies in one warp the barrier orders
            if a.lanes is not None and b.lanes is not None and self.disjoint_rows(a, b):
                return False
            return warp is None or not _one_warp(a.threads | b.threads, warp)
        return cross_thread(a.lanes, b.lanes, self.model.index.memo["eval"], self.model.shift(a, b),
                            warp_mask=warp)

    def run(self, events: Iterable[Event]) -> dict[tuple, Hazard]:
        handlers = _SIM_HANDLERS
        events = list(events)
        # Buffers this role reads itself in a loop: a slot it only fills there may be consumed
        # by another role (a single MMA-issuing warp, the 32 threads a `T.Parallel` of 32 rows
        # runs on), which this walk cannot see; its reads of the buffer in another loop or after
        # it (an epilogue's copy of the last tile) consume nothing this loop loaded.
        self.own_reads = {(ev.buffer, ev.loop_id) for ev in events if ev.kind == K.SMEM and ev.access == "read"}
        self.order = {id(ev): n for n, ev in enumerate(events)}
        for ev in events:
            handler = handlers.get(ev.kind)
            if handler is not None:
                handler(self, ev)
        self.at_exit()
        return self.hazards

    def replay(self, disabled: frozenset[int], known: Container[tuple]) -> dict[tuple, Hazard]:
        """The hazards a walk with the recorded barriers of `disabled` gone finds, less those
        whose key is in `known` (the walk with every barrier): each recorded pair whose two
        sides no remaining barrier instance lies between, decided in the walk's order (the first
        certain one of a key stands, as in `hazard`)."""
        kept = [0]
        for node in self.log:
            kept.append(kept[-1] + (node not in disabled))
        saved, self.hazards = self.hazards, {}
        try:
            for kind, first, second, warp, kw, lo, hi in self.candidates:
                if kept[hi] != kept[lo]:
                    continue            # a barrier that stays orders them
                key = (kind, id(first.node), id(second.node))
                old = self.hazards.get(key)
                if key in known or (old is not None and old.certain):
                    continue
                self._found(kind, first, second, warp, **kw)
            return self.hazards
        finally:
            self.hazards = saved

    # ---------------------------------------------------------------- events
    def on_cp_async(self, ev: Event) -> None:
        self.write(ev, is_async=True)
        if self.plain and ev.lanes is not None and not ev.lanes.collective and not ev.possible \
                and id(ev.node) not in self.copies_checked:
            # two threads copying into the same bytes: asked at the statement's first walked
            # iteration (the later ones differ by the stage slot, which every thread shares; one
            # question per unrolled copy cost seconds on persistent GEMMs)
            self.copies_checked.add(id(ev.node))
            self.replicated_store(ev)

    def on_tma_load(self, ev: Event) -> None:
        if self.plain:
            self.on_mbar_use(ev)
            self.write(ev, is_async=False, visible=True)

    def on_smem(self, ev: Event) -> None:
        if ev.possible and not self.plain:
            return
        if ev.access == "read":
            self.read(ev)
            if self.plain and ev.once:
                self._loop_carried(ev)
        elif self.plain or ev.access == "async":
            self._store(ev)
        else:
            self._drain(ev)

    def on_tma_store(self, ev: Event) -> None:
        """`tl::tma_store`: the bulk copy reads the shared tile asynchronously, after the call
        returns, until the issuing thread's `tma_store_wait<N>` completes its group (PTX
        `cp.async.bulk.wait_group.read`).  Until then no barrier orders the read before a store
        into those bytes, by any thread, its own included (`H.WAR_BULK`); once complete it is an
        ordinary read that the next barrier fences.  Outside the plain simulation, a read."""
        if not self.plain:
            self.on_smem(ev)
            return
        before = len(self.unfenced)
        self.read(ev)
        for entry in self.unfenced[before:]:
            self.bulk[id(entry)] = (entry, None)
        del self.unfenced[before:]

    def on_tma_store_commit(self, ev: Event) -> None:
        """`tl::tma_store_arrive` (`cp.async.bulk.commit_group`): the TMA stores since the last
        one form a group."""
        self.bulk_group += 1
        for key, (entry, group) in list(self.bulk.items()):
            if group is None:
                self.bulk[key] = (entry, self.bulk_group)

    def on_tma_store_wait(self, ev: Event) -> None:
        """`tl::tma_store_wait<N>`: every committed group but the newest N has read its bytes;
        their reads are ordinary reads from here on (the next barrier fences them)."""
        if ev.value is None:
            return
        done = self.bulk_group - ev.value
        for key, (entry, group) in list(self.bulk.items()):
            if group is not None and group <= done:
                del self.bulk[key]
                entry[3] = len(self.log)
                self.unfenced.append(entry)

    def _loop_carried(self, ev: Event) -> None:
        """A read in loops walked once: a later iteration's store by another thread (recorded
        in `once_writes`) may overwrite what it read."""
        for loop in ev.once:
            for earlier, since in self.once_writes.get(loop, ()):
                if earlier.node is not ev.node and earlier.buffer == ev.buffer:
                    self.hazard(H.WAR_PLAIN, ev, earlier, since=since)

    def _store(self, ev: Event) -> None:
        """A plain store (or, in the cp.async simulation, an async one) to shared memory."""
        if self.plain and ev.once and ev.access == "write":
            for loop in ev.once:
                self.once_writes.setdefault(loop, []).append((ev, len(self.log)))
        self.write(ev, is_async=False)
        if self.plain and ev.access != "atomic" and ev.lanes is not None and not ev.lanes.collective:
            self.replicated_store(ev)

    def _drain(self, ev: Event) -> None:
        """A plain store or atomic, in the cp.async simulation, over a copy still in flight."""
        for r in self.ranges(ev, create=False):
            w = r.write
            if w and w.is_async and not w.complete:
                self.hazard(H.DRAIN, w.event, ev, group=w.group)

    def on_commit(self, ev: Event) -> None:
        # Every commit opens a group, an empty one too: a thread that issued no
        # copy (guarded `if (threadIdx.x < 64)` copies) still counts it in
        # `cp.async.wait_group N` (PTX ISA, cp.async.commit_group).
        self.group += 1
        self.commits[self.group] = ev
        for w in self.pending:
            w.group = self.group
        boundary = self._missing_boundary([w.event for w in self.pending if w.event.kind == K.CP_ASYNC])
        if boundary is not None:
            self.merged[self.group] = boundary
        self.pending = []

    def _missing_boundary(self, copies: list[Event]) -> tuple[Event, Event | None] | None:
        """The last copy before a commit this group lacks, or None when the group is one stage's.

        A group holds copies the pipeline keeps apart: two stage slots of one buffer (a prologue
        that fills stages 0 and 1 under one commit), or buffers the steady-state loop commits in
        different groups (attention's K and V).  The commit belongs after the copies of the part
        issued first."""
        parts: dict[tuple, list[Event]] = {}
        loop_groups = self.model.cp_async.loop_groups
        for e in copies:
            key = (e.buffer, self.model.slot(e)) if e.buffer in self.model.stages else (e.buffer, None)
            parts.setdefault(key, []).append(e)
        by_buffer: dict[str | None, set] = {}
        for buffer, slot in parts:
            by_buffer.setdefault(buffer, set()).add(slot)
        split = [b for b, slots in by_buffer.items() if len(slots) > 1]
        if not split and len({loop_groups.get(b) for b in by_buffer if b in loop_groups}) < 2:
            return None
        return self._first_part_end(copies, split, loop_groups)

    def _first_part_end(self, copies: list[Event], split: list[str | None],
                        loop_groups: dict[str | None, int]) -> tuple[Event, Event | None]:
        """The last copy of the part issued first, and the first copy of the next part (None:
        none): parts are stage slots of the `split` buffers, else the loop's groups."""
        ordered = sorted(copies, key=lambda e: self.order.get(id(e), 0))
        first = next((e for e in ordered if e.buffer in split), ordered[0]) if split else ordered[0]
        if split:
            nxt = next((e for e in ordered
                        if e.buffer == first.buffer and self.model.slot(e) != self.model.slot(first)), None)
        else:
            nxt = next((e for e in ordered if loop_groups.get(e.buffer) != loop_groups.get(first.buffer)), None)
        before = [e for e in ordered if nxt is None or self.order.get(id(e), 0) < self.order.get(id(nxt), 0)]
        return before[-1], nxt

    def on_wait(self, ev: Event) -> None:
        # cp.async.wait_group waits for committed groups only: copies no commit has closed yet
        # are not waited for at all, whatever N is
        for w in self.pending:
            if w.skipped_by is None:
                w.skipped_by = ev
        n = self.waits.get(id(ev.node), ev.value)
        if n is None:
            return
        self.complete_upto = max(self.complete_upto, self.group - n)
        for w in self.writes:
            if w.group is not None and w.group <= self.complete_upto and not w.complete:
                w.complete, w.since = True, len(self.log)
        self.last_wait = ev

    def on_sync(self, ev: Event) -> None:
        if self.record is not None and ev.kind == K.SYNC and id(ev.node) in self.record:
            self.log.append(id(ev.node))
            return
        if id(ev.node) in self.disabled:
            return
        self.once_writes.clear()
        for w in self.writes:
            if w.complete:
                w.visible = True
        self.writes = [w for w in self.writes if not w.visible]
        for reader in self.unfenced:            # every reader recorded since the last barrier
            reader[1] = True
        self.unfenced = []

    def on_named_sync(self, ev: Event) -> None:
        """`bar.sync id, n`: the role's threads that execute it, as a block barrier orders them,
        unless more threads reach it than its count (`model.named.overfull`: the first `n` pass
        together, whichever they are, so it orders no given pair)."""
        if self.model.unordering(ev):
            return              # or two groups' warps may pass it together (`model.mixing`)
        self.on_sync(ev)

    def on_warp_sync(self, ev: Event) -> None:
        """`__syncwarp(mask)`: orders the lanes in the mask of each warp, and no one else.  What
        was written or read before it is marked with the mask; a later conflict counts only the
        pairs of threads it does not order (`between_threads`).  In a one-warp block it is the
        block barrier.  Two warp barriers in a row order a pair only if both lanes are in the
        lanes both barriers share (the intersection: never an order that is not there)."""
        if id(ev.node) in self.disabled:
            return
        mask = FULL_WARP if ev.value is None else ev.value & FULL_WARP
        for w in self.writes:
            if w.complete and not w.visible:
                w.warp = mask if w.warp is None else w.warp & mask
        for reader in self.unfenced:
            reader[2] = mask if reader[2] is None else reader[2] & mask

    def on_cp_async_arrive(self, ev: Event) -> None:
        """cp.async.mbarrier.arrive: the thread's pending copies are tracked by an mbarrier
        phase instead of a commit group; whoever waits on that phase sees them (the mbarrier
        model's business), so they are neither uncommitted nor in flight at exit here.  It tracks
        *every* cp.async the thread issued before it, committed or not (PTX ISA,
        cp.async.mbarrier.arrive: "all prior cp.async operations initiated by the executing
        thread"): a group committed before the arrival is tracked too."""
        for w in self.pending:
            w.group = TRACKED_BY_MBARRIER
            w.complete = w.visible = True
        self.pending = []
        for w in self.writes:
            if w.is_async and not w.complete and w.group is not None:
                w.complete = w.visible = True
        self.writes = [w for w in self.writes if not w.visible]

    # mbarrier initialisation must be visible before any thread uses the barrier
    def on_mbar_init(self, ev: Event) -> None:
        if self.plain:
            self.barrier_inits.append(_Write(ev, is_async=False, complete=True, since=len(self.log)))
            self.writes.append(self.barrier_inits[-1])

    def on_mbar_use(self, ev: Event) -> None:
        if self.plain:
            for w in self.barrier_inits:
                if not w.visible:
                    self.hazard(H.RAW_PLAIN, w.event, ev, since=w.since)
            self.barrier_inits = [w for w in self.barrier_inits if not w.visible]
            if ev.kind in (K.MBAR_ARRIVE, K.MBAR_ARRIVE_EXPECT_TX) and self._whole_role(ev):
                self.arrivals.setdefault(ev.barrier, []).append(ev)
            elif ev.kind == K.MBAR_WAIT and self._whole_role(ev):
                self._mbar_fence(ev)

    on_mbar_wait = on_mbar_arrive = on_mbar_expect_tx = on_mbar_arrive_expect_tx = on_mbar_use

    def _whole_role(self, ev: Event) -> bool:
        return not ev.guarded and ev.mult >= self.model.roles[ev.role].threads

    def _mbar_fence(self, wait: Event) -> None:
        """A wait every thread of the role passes, on a phase that the role's own earlier
        arrival (by every thread) counted towards, orders what the role's threads did before
        that arrival before what they do after the wait: the arrival releases, the wait that
        observes its phase acquires (PTX: mbarrier.arrive is .release, try_wait .acquire).
        `S[t] = ..; bar.arrive(); bar.wait(0); .. = S[t ^ 1]` needs no __syncthreads.  The
        phases are the protocol run's (`MBarrierAnalysis.observed`), asked only of a role that
        arrives on the barrier it waits for (so this analysis runs the mbarrier one only there);
        what the threads did between the arrival and the wait stays unordered."""
        mine = self.arrivals.get(wait.barrier)
        if not mine:
            return
        arrived, waited = self.model.mbarrier.observed
        seen = waited.get(id(wait))
        if seen is None:
            return
        counted = [self.order[id(a)] for a in mine
                   if (found := arrived.get(id(a))) is not None and found[1] <= seen]
        if counted:
            self._fence_before(max(counted))

    def _fence_before(self, pos: int) -> None:
        """`on_sync` for the accesses before position `pos` of the role's trace only."""
        order = self.order
        for w in self.writes:
            if w.complete and order.get(id(w.event), pos) < pos:
                w.visible = True
        self.writes = [w for w in self.writes if not w.visible]
        kept = []
        for reader in self.unfenced:
            if order.get(id(reader[0]), pos) < pos:
                reader[1] = True
            else:
                kept.append(reader)
        self.unfenced = kept

    # ---------------------------------------------------------------- accesses
    def write(self, ev: Event, is_async: bool, visible: bool = False) -> None:
        w = _Write(ev, is_async, complete=not is_async, visible=visible, since=len(self.log))
        versioned = ev.buffer in self.model.stages
        for r in self.ranges(ev, create=True):
            if r.readers:
                self._war(r.readers, ev, is_async)
            if r.write is not None:
                self._overwrite(r, r.write, ev, is_async, versioned)
            r.write, r.readers, r.consumed = w, [], not is_async
        if is_async:
            self.pending.append(w)
        if not w.visible:
            self.writes.append(w)

    def _war(self, readers: list, ev: Event, is_async: bool) -> None:
        """A write over bytes read since: a race with every reader no barrier fenced, and with
        a TMA store still reading (whatever the barriers)."""
        for entry in readers:
            reader, fenced, warp, since = entry
            if id(entry) in self.bulk:
                self.hazard(H.WAR_BULK, reader, ev)
                continue
            if reader.retired and retired_before(reader.threads, ev.threads):
                continue     # the writer's own warpgroup_wait completed the wgmma's reads
            if not fenced and reader.node is not ev.node \
                and not (reader.access == "atomic" and ev.access == "atomic"):
                self.hazard(H.WAR_UNSYNCED if is_async else H.WAR_PLAIN, reader, ev, warp=warp, since=since)

    def _overwrite(self, r: _Range, old: _Write, ev: Event, is_async: bool, versioned: bool) -> None:
        """A write over an earlier write: two plain stores no barrier orders, or a copy into a
        stage slot whose last copy nobody has read yet."""
        if self.plain and not old.visible and not old.is_async \
                and old.event.node is not ev.node and old.event.kind == K.SMEM \
                and not (old.event.access == "atomic" and ev.access == "atomic"):
            self.hazard(H.WAW_PLAIN, old.event, ev, warp=old.warp, since=old.since)
        if is_async and versioned and old.is_async and not r.consumed \
                and old.event.node is not ev.node and (ev.buffer, ev.loop_id) in self.own_reads:
            self.hazard(H.OVERWRITE_UNCONSUMED, old.event, ev)

    def read(self, ev: Event) -> None:
        pieces = self.ranges(ev, create=True)
        vague = self._vague(ev, pieces)
        for r in pieces:
            w = r.write
            if ev.retired:
                pass    # a wgmma's read completing: what it reads was checked at its issue
            elif vague and w is not None and w.is_async and w.group is not None and not w.complete:
                pass    # which of the buffer's copies it reads is unknown: not an error
            elif w is not None and w.is_async:
                self._read_copy(w, ev)
            elif w is not None and not w.visible and self.plain:
                self.hazard(H.RAW_PLAIN, w.event, ev, warp=w.warp, since=w.since)
            r.consumed = True
            reader: list = [ev, False, None, len(self.log)]
            r.readers.append(reader)
            self.unfenced.append(reader)

    def _read_copy(self, w: _Write, ev: Event) -> None:
        """A read of bytes a cp.async wrote: uncommitted, in a merged group, waited for before
        its commit, still in flight, or complete but not yet made visible by a barrier."""
        if w.group is None:
            self.hazard(H.RAW_UNCOMMITTED, w.event, ev)
        elif not w.complete and w.group in self.merged:
            last, nxt = self.merged[w.group]
            self.hazard(H.GROUP_MERGED, last, ev, group=w.group, wait=self.last_wait,
                        commit=self.commits.get(w.group), boundary=nxt)
        elif not w.complete and w.skipped_by is not None:
            # the wait that should complete it ran before any commit closed its group
            self.hazard(H.WAIT_UNCOMMITTED, w.event, ev, group=w.group, wait=w.skipped_by,
                        commit=self.commits.get(w.group))
        elif not w.complete:
            self.hazard(H.RAW_INCOMPLETE, w.event, ev, group=w.group,
                        groups_in_flight=self.group - self.complete_upto, wait=self.last_wait,
                        commit=self.commits.get(w.group))
        elif not w.visible:
            self.hazard(H.RAW_UNSYNCED, w.event, ev, wait=self.last_wait, warp=w.warp, since=w.since)

    def _vague(self, ev: Event, pieces: list[_Range]) -> bool:
        """A read of unknown footprint (an MMA through a descriptor) over an unversioned
        buffer whose parts hold copies in different states: it may read only the
        completed ones (an unrolled prologue reading stage 0 while stage 1 lands)."""
        if ev.extent is not None or ev.buffer in self.model.stages:
            return False
        states = {w.complete for r in pieces for w in [r.write] if w is not None and w.is_async
                  and w.group is not None}
        return len(states) > 1

    def at_exit(self) -> None:
        for entry, _ in self.bulk.values():
            self.hazard(H.EXIT_BULK, entry[0], entry[0])
        for w in self.pending:
            self.hazard(H.EXIT_UNCOMMITTED, w.event, w.event)
        for w in self.writes:
            if w.is_async and not w.complete and w.group is not None:
                self.hazard(H.EXIT_IN_FLIGHT, w.event, w.event, group=w.group)


class CpAsyncAnalysis:
    """Hazards of the cp.async pipeline and what each barrier and wait is for."""

    def __init__(self, model: KernelModel) -> None:
        self.model = model

    def simulate(self, plain: bool = False, disabled: frozenset = frozenset(),
                 waits: dict[int, int] | None = None) -> dict[tuple, Hazard]:
        found: dict[tuple, Hazard] = {}
        for events in self.model.trace.events:
            found.update(_Sim(self.model, plain, disabled, waits or {}).run(events))
        return found

    @functools.cached_property
    def hazards(self) -> list[Hazard]:
        return list(self.simulate().values())

    @functools.cached_property
    def loop_groups(self) -> dict[str | None, int]:
        """Which commit group of a steady-state iteration each buffer's copies go in (empty when
        the loop commits one group per iteration): the partition a prologue should follow."""
        events = self.model.trace.events[0] if self.model.trace.events else []
        middle = self.model._steady_iteration(events)
        if middle is None:
            return {}
        found: dict[str | None, int] = {}
        group = 0
        for ev in events:
            if ev.iteration != middle:
                continue
            if ev.kind == K.COMMIT:
                group += 1
            elif ev.kind == K.CP_ASYNC:
                found.setdefault(ev.buffer, group)
        return found if len(set(found.values())) > 1 else {}

    @functools.cached_property
    def plain_base(self) -> list[dict[tuple, Hazard]]:
        """Each role's hazards with plain accesses modelled and every barrier in place."""
        return [_Sim(self.model, True, frozenset(), {}).run(events) for events in self.model.trace.events]

    @functools.cached_property
    def plain_hazards(self) -> list[Hazard]:
        """Races between plain accesses of different threads of one role (`PLAIN_KINDS`)."""
        return [h for found in self.plain_base for h in found.values() if h.kind in PLAIN_KINDS]

    @functools.cached_property
    def bulk_hazards(self) -> list[Hazard]:
        """Shared memory a TMA store may still be reading, overwritten or left at exit (`BULK_KINDS`)."""
        return [h for found in self.plain_base for h in found.values() if h.kind in BULK_KINDS]

    @functools.cached_property
    def sync_nodes(self) -> list[A.Node]:
        seen: dict[int, A.Node] = {}
        for ev in self.model.trace.all_events():
            # a template's own barrier is not a claim, nor a cluster barrier (it orders the
            # cluster's distributed shared memory too, which is not modelled)
            if ev.kind == K.SYNC and not ev.internal and not cluster_barrier(ev.node) and _removable(ev.node):
                seen.setdefault(id(ev.node), ev.node)
        return sorted(seen.values(), key=lambda n: (n.span.line, n.span.column))

    @functools.cached_property
    def barrier_roles(self) -> dict[int, dict[tuple, Hazard]]:
        """For each needed `__syncthreads` (by node id), the hazards it alone orders.

        Barriers are tried last to first; one whose removal adds no hazard, within a
        role or between roles (`model.races`), and hangs nobody is redundant and stays
        removed, so of two duplicates the later is blamed and the removed set is
        removable *together*.
        """
        roles = self.model.trace.events
        syncs = [{id(ev.node) for ev in events if ev.kind == K.SYNC} for events in roles]
        base_by_role = self.plain_base
        base = {k: h for found in base_by_role for k, h in found.items()}
        races = self.model.races
        cross_base = set(races.simulate()[0]) if races.relevant else set()
        disabled: set[int] = set()
        orders: dict[int, dict[tuple, Hazard]] = {}
        for node in reversed(self.sync_nodes):
            # Only the roles that execute this barrier can change without it: the others
            # run as before (barriers already found redundant added nothing to them).
            trial = frozenset(disabled | {id(node)})
            new = self._role_trial(trial, id(node), roles, syncs, base)
            if not new and (races.relevant or len(roles) > 1 and self.model.mbarrier.uses_mbarriers):
                self._cross_trial(new, trial, node, roles, cross_base)
            if new:
                orders[id(node)] = new
            else:
                disabled.add(id(node))
        return orders

    def _role_trial(self, trial: frozenset, node: int, roles: list[list[Event]], syncs: list[set[int]],
                    base: dict[tuple, Hazard]) -> dict[tuple, Hazard]:
        """The hazards within a role that the barriers of `trial` gone add, in the roles that
        execute barrier `node` (the others run as before): a query on the pairs each role's
        recorded walk kept (`recorded`), not a walk per trial."""
        new: dict[tuple, Hazard] = {}
        for recorded, mine in zip(self.recorded, syncs):
            if node in mine:
                new.update(recorded.replay(trial & mine, base))
        return new

    @functools.cached_property
    def recorded(self) -> list[_Sim]:
        """Each role's plain walk with the claimable barriers recorded, not applied (`_Sim.replay`)."""
        claimable = frozenset(id(n) for n in self.sync_nodes)
        walks = []
        for events in self.model.trace.events:
            walk = _Sim(self.model, True, frozenset(), {}, record=claimable)
            walk.run(events)
            walks.append(walk)
        return walks

    def _cross_trial(self, new: dict[tuple, Hazard], trial: frozenset, node: A.Node, roles: list[list[Event]],
                     cross_base: set[tuple]) -> None:
        """Adds to `new` the races between roles the barriers of `trial` gone add, and a hang
        where the others wait at a barrier `node` no longer meets."""
        races = self.model.races
        found, finished = races.simulate(trial) if races.relevant else ({}, True)
        new.update((k, h) for k, h in found.items() if k not in cross_base)
        if races.protocol_issues(trial) - races.protocol_issues():
            # it hands an observed mbarrier phase on (`CrossRoleRaces.protocol_issues`)
            new[("protocol", id(node))] = Hazard(H.RAW_PLAIN, _first_event(roles, node),
                                                 _first_event(roles, node), "", None)
        if not finished:         # the others wait at a barrier this one no longer meets
            new[("hang", id(node))] = Hazard(H.RAW_PLAIN, _first_event(roles, node),
                                             _first_event(roles, node), "", None)

    @functools.cached_property
    def broken(self) -> bool:
        """Whether the kernel already has a hazard: what a barrier or wait is for changes once it
        is fixed, so nothing is claimed removable in a kernel that is wrong."""
        if any(h.certain for h in self.hazards) or any(h.certain for h in self.plain_hazards):
            return True
        return any(h.certain for h in self.model.races.hazards)

    @functools.cached_property
    def unmodelled(self) -> str | None:
        """Why the kernel's accesses are not all modelled (None: they are): a redundancy claim
        ("this barrier / wait can go") needs every shared access, and every global one that
        threads of a block hand to each other, to be known."""
        model = self.model
        if model.trace.truncated:
            return "the event budget cut the simulation short"
        for ev in model.trace.all_events():
            if ev.possible:
                return f"a call that is not modelled receives a shared pointer (line {ev.node.span.line})"
            if ev.unknown_footprint:
                return f"a shared index that cannot be evaluated (line {ev.node.span.line})"
        if model.trace.unknown:
            return f"an intrinsic that is not modelled ({min(model.trace.unknown)})"
        if model.trace.opaque_barriers:
            name, call = min(model.trace.opaque_barriers.items())
            return f"mbarrier {name} is passed to {call.name}, which is not modelled"
        shared_global = model.global_written_and_read()
        if shared_global:
            return f"global memory {shared_global} is written and read by the block (not modelled)"
        return None

    @functools.cached_property
    def claims(self) -> tuple[frozenset[int], dict[int, int | None]]:
        """(barrier nodes that can go, wait nodes -> the depth they can take, None: the wait can
        go): every claim checked *together*, for the kernel as a whole.  Where the set is not
        safe as a whole, the claims worth least are withdrawn first (barriers outside the
        pipelined loop, then waits, then barriers in the loop) until it is.  Nothing is claimed
        when some access is not modelled (`unmodelled`)."""
        if self.unmodelled is not None or self.broken:
            return frozenset(), {}
        # a barrier or wait in a loop walked once (a run-time stride, a `while`) may order what one
        # iteration does against the next, which that walk does not see: never claimed
        once = {id(ev.node) for ev in self.model.trace.all_events() if ev.once}
        barriers = {id(n) for n in self.sync_nodes if id(n) not in self.barrier_roles and id(n) not in once}
        waits = {key: best for key, (ev, best) in self.wait_depths.items()
                 if (best is None or (ev.value is not None and best > ev.value)) and key not in once}
        self._withdraw(barriers, waits, self._claim_order(barriers, waits))
        return frozenset(barriers), waits

    def _claim_order(self, barriers: set[int], waits: dict[int, int | None]) -> list[tuple[str, int]]:
        """The claims, least valuable last (so they are popped first): barriers in the pipelined
        loop, then waits, then barriers outside it, each by line."""
        in_loop = {id(ev.node) for ev in self.model.trace.all_events() if ev.kind == K.SYNC and ev.iteration}
        lines = {id(n): n.span.line for n in self.sync_nodes}
        lines.update({k: ev.node.span.line for k, (ev, _) in self.wait_depths.items()})

        def line(key: int) -> int:
            return lines.get(key, 0)

        return ([("barrier", k) for k in sorted(barriers & in_loop, key=line)]
                + [("wait", k) for k in sorted(waits, key=line)]
                + [("barrier", k) for k in sorted(barriers - in_loop, key=line)])

    def _withdraw(self, barriers: set[int], waits: dict[int, int | None], order: list[tuple[str, int]]) -> None:
        """Withdraws claims from the end of `order` (in place) until the rest are safe together."""
        base = {k for found in self.plain_base for k in found}
        while True:
            trial = {k: (WAIT_REMOVED if b is None else b) for k, b in waits.items()}
            new = {k for events in self.model.trace.events
                   for k in _Sim(self.model, True, frozenset(barriers), trial).run(events)} - base
            if not new or not order:
                break
            what, key = order.pop()
            (barriers.discard if what == "barrier" else waits.pop)(key)

    def redundant_barriers(self) -> list[A.Node]:
        barriers, _ = self.claims
        return [n for n in self.sync_nodes if id(n) in barriers]

    @functools.cached_property
    def wait_depths(self) -> dict[int, tuple[Event, int | None]]:
        """Deepest safe N for each `cp_async_wait<N>` in a pipelined loop, by node id.

        None: no depth makes any read unsafe, i.e. the wait orders nothing (it
        follows another wait with no commit in between, or every read after it
        is covered by a later wait) and can go.
        """
        base_hazards = self.simulate()
        base = set(base_hazards)
        result: dict[int, tuple[Event, int | None]] = {}
        if any(h.kind in (H.RAW_INCOMPLETE, H.RAW_UNCOMMITTED, H.WAIT_UNCOMMITTED, H.GROUP_MERGED)
               for h in base_hazards.values()):
            return result  # already too shallow or uncommitted: depth advice would mislead
        for ev in self.model.trace.all_events():
            if ev.kind != K.WAIT or ev.value is None or not ev.iteration or id(ev.node) in result:
                continue
            best: int | None = ev.value
            for candidate in range(ev.value + 1, ev.value + WAIT_SEARCH + 1):
                if set(self.simulate(waits={id(ev.node): candidate})) - base:
                    break
                best = candidate
            if best == ev.value + WAIT_SEARCH and \
                    not set(self.simulate(waits={id(ev.node): ev.value + 1000})) - base:
                best = None      # waits for nothing any read needs
            result[id(ev.node)] = (ev, best)
        return result


def _first_event(roles: list[list[Event]], node: A.Node) -> Event:
    return next(ev for events in roles for ev in events if ev.node is node)


WAIT_SEARCH = 8      # deeper waits tried per cp_async_wait
WAIT_REMOVED = 1 << 20   # the depth of a wait that is gone: it waits for nothing
TRACKED_BY_MBARRIER = 0   # the "group" of copies an mbarrier phase tracks (commit groups count from 1)

FULL_WARP = 0xFFFFFFFF


def _one_warp(threads: int, mask: int) -> bool:
    """Whether every thread of the set lies in one warp, at a lane in `mask`."""
    if not threads:
        return False
    low = (threads & -threads).bit_length() - 1
    warp = low // 32
    lanes = threads >> (warp * 32)
    return lanes < (1 << 32) and (lanes & ~mask) == 0


_SIM_HANDLERS = {
    K.CP_ASYNC: _Sim.on_cp_async,
    K.TMA_LOAD: _Sim.on_tma_load,
    K.SMEM: _Sim.on_smem,
    K.TMA_STORE: _Sim.on_tma_store,
    K.TMA_STORE_COMMIT: _Sim.on_tma_store_commit,
    K.TMA_STORE_WAIT: _Sim.on_tma_store_wait,
    K.COMMIT: _Sim.on_commit,
    K.WAIT: _Sim.on_wait,
    K.SYNC: _Sim.on_sync,
    K.NAMED_SYNC: _Sim.on_named_sync,
    K.WARP_SYNC: _Sim.on_warp_sync,
    K.CP_ASYNC_ARRIVE: _Sim.on_cp_async_arrive,
    K.CP_ASYNC_ARRIVE_INC: _Sim.on_cp_async_arrive,
    K.MBAR_INIT: _Sim.on_mbar_init,
    **{k: _Sim.on_mbar_use for k in (K.MBAR_WAIT, K.MBAR_ARRIVE, K.MBAR_EXPECT_TX,
                                     K.MBAR_ARRIVE_EXPECT_TX, K.MMA_ARRIVE)},
}


def _removable(node: A.Node) -> bool:
    """Whether a barrier statement could be deleted: `__syncthreads()` alone, not one that also
    computes a value (`__syncthreads_count(pred)`, `_or`, `_and`)."""
    return not (isinstance(node, A.Call) and node.args)
