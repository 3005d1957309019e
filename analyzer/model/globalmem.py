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
from typing import TYPE_CHECKING

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
            pending: dict[str, list[Event]] = {}       # accesses since the last barrier, by buffer
            for ev in events:
                if ev.kind in _ORDERS and not ev.guarded:
                    pending.clear()
                    continue
                if ev.kind != K.GLOBAL or ev.space is None:
                    continue
                write = ev.access in ("write", "atomic")
                for old in pending.get(ev.space, ()):
                    old_write = old.access in ("write", "atomic")
                    if not (write or old_write) or (ev.access == "atomic" and old.access == "atomic"):
                        continue
                    if old.node is ev.node and not write:
                        continue
                    verdict = self._between(old, ev, evaluator)
                    if verdict is False:
                        continue
                    kind = H.WAW_PLAIN if write and old_write else (H.RAW_PLAIN if old_write else H.WAR_PLAIN)
                    h = Hazard(kind, old, ev, ev.space, None, certain=verdict is True)
                    prev = found.get(h.key)
                    if prev is None or (h.certain and not prev.certain):
                        found[h.key] = h
                pending.setdefault(ev.space, []).append(ev)
        return list(found.values())

    def _between(self, a: Event, b: Event, evaluator) -> bool | None:
        if a.unknown_footprint or b.unknown_footprint or a.lanes is None or b.lanes is None:
            return None
        return cross_thread(a.lanes, b.lanes, evaluator)
