"""Named barriers two groups of threads use at the same time.

`bar.sync id, n` completes a generation with the first `n` arrivals at barrier `id`, whoever they
are (`model.named`).  When two groups of threads that each fill the count alone (warp group 0 and
warp group 2, each `bar.sync 3, 128`) can reach the same id without one group's arrival ordered
before the other's, the warps that pass together may come from both groups: warps 0-1 of one and
8-9 of the other complete a generation, and warps 2-3 of the first are left for the next.  The
barrier then orders neither group's threads among themselves, so the analyses treat such
statements as absent, like an overfull count (`KernelModel.mixed_named`).

Decided on the happens-before relation of the protocol simulation (`model.protocol`): every
arrival at a watched id is compared with the earlier arrivals of the other groups, by their
vector clocks.  Only ids that two statements with disjoint thread sets, each at least the count,
name are watched, so a kernel without them runs no simulation here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .named import NAMED_KINDS, event_threads
from .protocol import ProtocolSim
from .threads import count
from .trace import Event

if TYPE_CHECKING:
    from .analysed import KernelModel


def shared_ids(model: KernelModel) -> frozenset[int]:
    """Named-barrier ids that two statements of different roles name with the same constant count,
    each executed by at least that many threads, on disjoint thread sets."""
    by_id: dict[int, dict[tuple, tuple[Event, int]]] = {}
    for ev in model.trace.all_events():
        ident = _decided_id(ev)
        if ident is not None:
            role = model.roles[ev.role]
            threads = event_threads(ev, role.lo, role.hi)
            # one entry per statement, role, count and threads: a loop unrolls a statement into
            # thousands of events that are all the same question
            by_id.setdefault(ident, {}).setdefault((id(ev.node), ev.role, ev.value, threads), (ev, threads))
    return frozenset(ident for ident, uses in by_id.items()
                     if any(_apart(a, ta, b, tb) for a, ta in uses.values() for b, tb in uses.values()))


def _decided_id(ev: Event) -> int | None:
    """The constant id of a named-barrier statement with a known count and known threads."""
    if ev.kind not in NAMED_KINDS or not ev.value or ev.uncertain or ev.barrier is None:
        return None
    ident = ev.barrier[1]
    return ident if isinstance(ident, int) and ident >= 0 else None


def _apart(a: Event, ta: int, b: Event, tb: int) -> bool:
    """Two statements of different roles, the same count, disjoint threads, each filling it alone."""
    n = a.value or 0
    return a.role != b.role and a.value == b.value and not ta & tb and count(ta) >= n and count(tb) >= n


def mixed_statements(model: KernelModel) -> dict[int, tuple[Event, Event]]:
    """Named-barrier statements (by node id) another group's arrival at the same id can meet in one
    generation, each with such an arrival; empty where no id is shared (`shared_ids`)."""
    ids = shared_ids(model)
    if not ids or len(model.roles) < 2:
        return {}
    sim = ProtocolSim(model.mbarrier, tx_known=False)
    sim.watch = ids
    sim.run()
    return sim.mixed
