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

The same simulation, run with one barrier removed or one wait changed, says
which hazard each barrier orders and how deep each wait needs to be.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Optional

from ..cuda import ast as A
from .trace import Event

if TYPE_CHECKING:
    from .kernel import KernelModel


@dataclass(frozen=True, slots=True)
class Hazard:
    """`second` may observe or clobber `first`; `wait`, when set, is the last wait before."""

    kind: str
    first: Event
    second: Event
    buffer: str
    slot: Optional[int]
    group: Optional[int] = None
    groups_in_flight: Optional[int] = None
    wait: Optional[Event] = None
    commit: Optional[Event] = None    # the cp_async_commit that closed `group`

    @property
    def key(self) -> tuple:
        return (self.kind, id(self.first.node), id(self.second.node))


@dataclass
class _Write:
    event: Event
    is_async: bool
    group: Optional[int] = None
    complete: bool = False
    visible: bool = False


@dataclass
class _Range:
    start: int
    end: int
    write: Optional[_Write] = None
    readers: list = field(default_factory=list)   # [Event, fenced]
    consumed: bool = True


class _Sim:
    def __init__(self, model: "KernelModel", plain: bool, disabled: frozenset,
                 waits: dict[int, int]) -> None:
        self.model = model
        self.plain = plain
        self.disabled = disabled
        self.waits = waits
        self.spaces: dict[str, list[_Range]] = {}
        self.pending: list[_Write] = []
        self.writes: list[_Write] = []
        self.group = 0
        self.complete_upto = 0
        self.last_wait: Optional[Event] = None
        self.barrier_inits: list[_Write] = []
        self.commits: dict[int, Event] = {}
        self.hazards: dict[tuple, Hazard] = {}

    def ranges(self, ev: Event, create: bool) -> list[_Range]:
        rng = self.model.byte_range(ev)
        if rng is None:
            return []
        space, start, end = rng
        entries = self.spaces.setdefault(space, [])
        hits = [r for r in entries if r.start < end and start < r.end]
        if create and not any(r.start == start and r.end == end for r in hits):
            entry = _Range(start, end)
            entries.append(entry)
            # a new range inherits what overlapping ones hold
            for r in hits:
                if r.write and (entry.write is None or r.write.event is not None):
                    entry.write = r.write
                entry.readers.extend(r.readers)
            hits.append(entry)
        return hits

    def hazard(self, kind: str, first: Event, second: Event, **kw) -> None:
        h = Hazard(kind, first, second, second.buffer or first.buffer or "", self.model.slot(second), **kw)
        self.hazards.setdefault(h.key, h)

    def run(self, events: Iterable[Event]) -> dict[tuple, Hazard]:
        for ev in events:
            handler = getattr(self, "on_" + ev.kind, None)
            if handler is not None:
                handler(ev)
        self.at_exit()
        return self.hazards

    # ---------------------------------------------------------------- events
    def on_cp_async(self, ev: Event) -> None:
        self.write(ev, is_async=True)

    def on_tma_load(self, ev: Event) -> None:
        if self.plain:
            self.on_mbar_use(ev)
            self.write(ev, is_async=False, visible=True)

    def on_smem(self, ev: Event) -> None:
        if ev.possible and not self.plain:
            return
        if ev.access == "read":
            self.read(ev)
        elif self.plain or ev.access == "async":
            self.write(ev, is_async=False)
        else:
            for r in self.ranges(ev, create=False):
                w = r.write
                if w and w.is_async and not w.complete:
                    self.hazard("drain", w.event, ev, group=w.group)

    on_tma_store = on_smem

    def on_commit(self, ev: Event) -> None:
        if self.pending:
            self.group += 1
            self.commits[self.group] = ev
            for w in self.pending:
                w.group = self.group
            self.pending = []

    def on_wait(self, ev: Event) -> None:
        n = self.waits.get(id(ev.node), ev.value)
        if n is None:
            return
        self.complete_upto = max(self.complete_upto, self.group - n)
        for w in self.writes:
            if w.group is not None and w.group <= self.complete_upto:
                w.complete = True
        self.last_wait = ev

    def on_sync(self, ev: Event) -> None:
        if id(ev.node) in self.disabled:
            return
        for w in self.writes:
            if w.complete:
                w.visible = True
        self.writes = [w for w in self.writes if not w.visible]
        for entries in self.spaces.values():
            for r in entries:
                for reader in r.readers:
                    reader[1] = True

    on_named_sync = on_sync

    # mbarrier initialisation must be visible before any thread uses the barrier
    def on_mbar_init(self, ev: Event) -> None:
        if self.plain:
            self.barrier_inits.append(_Write(ev, is_async=False, complete=True))
            self.writes.append(self.barrier_inits[-1])

    def on_mbar_use(self, ev: Event) -> None:
        if self.plain:
            for w in self.barrier_inits:
                if not w.visible:
                    self.hazard("raw-plain", w.event, ev)
            self.barrier_inits = [w for w in self.barrier_inits if not w.visible]

    on_mbar_wait = on_mbar_arrive = on_mbar_expect_tx = on_mbar_arrive_expect_tx = on_mbar_use

    # ---------------------------------------------------------------- accesses
    def write(self, ev: Event, is_async: bool, visible: bool = False) -> None:
        w = _Write(ev, is_async, complete=not is_async, visible=visible)
        versioned = ev.buffer in self.model.stages
        for r in self.ranges(ev, create=True):
            for reader, fenced in r.readers:
                if not fenced and reader.node is not ev.node:
                    self.hazard("war-unsynced" if is_async else "war-plain", reader, ev)
            old = r.write
            if is_async and versioned and old and old.is_async and not r.consumed \
                    and old.event.node is not ev.node:
                self.hazard("overwrite-unconsumed", old.event, ev)
            r.write, r.readers, r.consumed = w, [], not is_async
        if is_async:
            self.pending.append(w)
        if not w.visible:
            self.writes.append(w)

    def read(self, ev: Event) -> None:
        for r in self.ranges(ev, create=True):
            w = r.write
            if w is not None and w.is_async:
                if w.group is None:
                    self.hazard("raw-uncommitted", w.event, ev)
                elif not w.complete:
                    self.hazard("raw-incomplete", w.event, ev, group=w.group,
                                groups_in_flight=self.group - self.complete_upto, wait=self.last_wait,
                                commit=self.commits.get(w.group))
                elif not w.visible:
                    self.hazard("raw-unsynced", w.event, ev, wait=self.last_wait)
            elif w is not None and not w.visible and self.plain:
                self.hazard("raw-plain", w.event, ev)
            r.consumed = True
            r.readers.append([ev, False])

    def at_exit(self) -> None:
        for w in self.pending:
            self.hazard("exit-uncommitted", w.event, w.event)
        for w in self.writes:
            if w.is_async and not w.complete and w.group is not None:
                self.hazard("exit-in-flight", w.event, w.event, group=w.group)


class CpAsyncAnalysis:
    """Hazards of the cp.async pipeline and what each barrier and wait is for."""

    def __init__(self, model: "KernelModel") -> None:
        self.model = model

    def simulate(self, plain: bool = False, disabled: frozenset = frozenset(),
                 waits: Optional[dict[int, int]] = None) -> dict[tuple, Hazard]:
        found: dict[tuple, Hazard] = {}
        for events in self.model.trace.events:
            found.update(_Sim(self.model, plain, disabled, waits or {}).run(events))
        return found

    @functools.cached_property
    def hazards(self) -> list[Hazard]:
        return list(self.simulate().values())

    @functools.cached_property
    def sync_nodes(self) -> list[A.Node]:
        seen: dict[int, A.Node] = {}
        for ev in self.model.trace.all_events():
            if ev.kind == "sync":
                seen.setdefault(id(ev.node), ev.node)
        return sorted(seen.values(), key=lambda n: (n.span.line, n.span.column))

    @functools.cached_property
    def barrier_roles(self) -> dict[int, dict[tuple, Hazard]]:
        """For each needed `__syncthreads` (by node id), the hazards it alone orders.

        Barriers are tried last to first; one whose removal adds no hazard is
        redundant and stays removed, so of two duplicates the later is blamed.
        """
        base = self.simulate(plain=True)
        disabled: set[int] = set()
        orders: dict[int, dict[tuple, Hazard]] = {}
        for node in reversed(self.sync_nodes):
            trial = frozenset(disabled | {id(node)})
            found = self.simulate(plain=True, disabled=trial)
            new = {k: h for k, h in found.items() if k not in base}
            if new:
                orders[id(node)] = new
            else:
                disabled.add(id(node))
        return orders

    def redundant_barriers(self) -> list[A.Node]:
        return [n for n in self.sync_nodes if id(n) not in self.barrier_roles]

    @functools.cached_property
    def wait_depths(self) -> dict[int, tuple[Event, int]]:
        """Deepest safe N for each `cp_async_wait<N>` in a pipelined loop, by node id."""
        base_hazards = self.simulate()
        base = set(base_hazards)
        result: dict[int, tuple[Event, int]] = {}
        if any(h.kind in ("raw-incomplete", "raw-uncommitted") for h in base_hazards.values()):
            return result  # already too shallow or uncommitted: depth advice would mislead
        for ev in self.model.trace.all_events():
            if ev.kind != "wait" or ev.value is None or not ev.iteration or id(ev.node) in result:
                continue
            best = ev.value
            for candidate in range(ev.value + 1, ev.value + 9):
                if set(self.simulate(waits={id(ev.node): candidate})) - base:
                    break
                best = candidate
            result[id(ev.node)] = (ev, best)
        return result
