"""Global memory that threads of one block hand to each other.

A kernel that stores to a global buffer and loads from it again (a workspace, an in-place
update, atomics followed by reads) may pass data between its threads through global memory.
Within one block that needs the same ordering as shared memory: `__syncthreads` orders the
block's global accesses too, a named barrier those of its participants.  Accesses whose index
is affine in the thread index and the loop variables are evaluated per thread (`model.threads`),
with the block index fixed (it is the same for every thread of a block); two threads of one role
conflict when some byte is touched by both, one of them writes, and no barrier lies between them.

Different blocks are out of scope: nothing inside a kernel orders them, and whether two blocks
touch the same bytes depends on the launch (the rule documentation says so).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .cpasync import Hazard
from .intrinsics import HazardKind as H
from .intrinsics import K
from .threads import cross_thread

if TYPE_CHECKING:
    from .kernel import KernelModel
    from .trace import Event

_ORDERS = frozenset({K.SYNC, K.NAMED_SYNC})


class GlobalHandoff:
    """Races on global memory between threads of one role of one block."""

    def __init__(self, model: KernelModel) -> None:
        self.model = model

    @functools.cached_property
    def hazards(self) -> list[Hazard]:
        if not self.model.handoff_params:
            return []
        found: dict[tuple, Hazard] = {}
        evaluator = self.model.index.memo["eval"]
        for events in self.model.trace.events:
            self._role(events, evaluator, found)
        return list(found.values())

    def _role(self, events: list[Event], evaluator: Any, found: dict[tuple, Hazard]) -> None:
        """One role's global accesses, each against those of its buffer since the last barrier."""
        pending: dict[str, list[Event]] = {}       # accesses since the last barrier, by buffer
        copies = _InFlight()
        for ev in events:
            copies.step(ev)
            if ev.kind in _ORDERS and not ev.guarded and not self.model.unordering(ev):
                pending.clear()
                continue
            if ev.kind != K.GLOBAL or ev.space is None:
                continue
            write = ev.access in ("write", "atomic")
            if write:
                self._in_flight(ev, copies, found)
            elif _is_copy(ev):
                copies.issue(ev)
            for old in pending.get(ev.space, ()):
                self._pair(old, ev, write, evaluator, found)
            pending.setdefault(ev.space, []).append(ev)

    def _pair(self, old: Event, ev: Event, write: bool, evaluator: Any, found: dict[tuple, Hazard]) -> None:
        """Two accesses no barrier orders: a hazard where one writes and two threads meet."""
        old_write = old.access in ("write", "atomic")
        if not (write or old_write) or (ev.access == "atomic" and old.access == "atomic"):
            return
        if old.node is ev.node and not write:
            return
        verdict = self._between(old, ev, evaluator)
        if verdict is False:
            return
        kind = H.WAW_PLAIN if write and old_write else (H.RAW_PLAIN if old_write else H.WAR_PLAIN)
        _keep(found, Hazard(kind, old, ev, ev.space or "", None, certain=verdict is True))

    def _in_flight(self, ev: Event, copies: _InFlight, found: dict[tuple, Hazard]) -> None:
        """A store or atomic to bytes a cp.async of the role is still reading (issued, its group not
        yet waited for): the copy may read the old or the new value, whichever thread it is, and
        no barrier orders an asynchronous copy (only its wait does).  Decided by the solver over
        any two threads, the same one included."""
        from .presburger import decide

        for group, copy in copies.reading(ev.space):
            if copy.lanes is None or ev.lanes is None or copy.unknown_footprint or ev.unknown_footprint:
                verdict: bool | None = None
            else:
                verdict = decide(copy.lanes, ev.lanes, 0, getattr(self.model.index.memo["eval"], "opaque", None),
                                 any_threads=True)[0]
            if verdict is False:
                continue
            _keep(found, Hazard(H.WAR_PLAIN, copy, ev, ev.space or "", None, group=group, wait=copies.last_wait,
                                certain=verdict is True, in_flight=True))

    def _between(self, a: Event, b: Event, evaluator) -> bool | None:
        if a.unknown_footprint or b.unknown_footprint or a.lanes is None or b.lanes is None:
            return None
        return cross_thread(a.lanes, b.lanes, evaluator)


def _keep(found: dict[tuple, Hazard], h: Hazard) -> None:
    """Records a hazard, a certain one replacing an undecided one of the same key."""
    prev = found.get(h.key)
    if prev is None or (h.certain and not prev.certain):
        found[h.key] = h


def _is_copy(ev: Event) -> bool:
    """The global source read of a cp.async (`tl::cp_async_gs<N>(smem, gmem)`)."""
    name = getattr(ev.node, "name", "")
    return isinstance(name, str) and "cp_async" in name


class _InFlight:
    """A role's cp.async global reads by commit group, as its commits and waits go (what a thread's
    `cp_async_wait<N>` leaves in flight: the newest N groups)."""

    def __init__(self) -> None:
        self.open: list[Event] = []                       # issued since the last commit
        self.groups: list[tuple[int, list[Event]]] = []   # committed, not yet waited for
        self.count = 0
        self.last_wait: Event | None = None

    def issue(self, ev: Event) -> None:
        self.open.append(ev)

    def step(self, ev: Event) -> None:
        if ev.kind == K.COMMIT:
            self.count += 1
            if self.open:
                self.groups.append((self.count, self.open))
                self.open = []
        elif ev.kind == K.WAIT:
            self.last_wait = ev
            if ev.value is not None:
                keep = max(0, ev.value)
                self.groups = [g for g in self.groups if g[0] > self.count - keep]

    def reading(self, space: str | None) -> list[tuple[int | None, Event]]:
        out: list[tuple[int | None, Event]] = [(None, e) for e in self.open if e.space == space]
        return out + [(n, e) for n, evs in self.groups for e in evs if e.space == space]
