"""Races between roles: plain shared-memory accesses that no synchronisation orders.

The cp.async simulation (`model.cpasync`) walks one role at a time: it sees a
thread race with another thread of the *same* role.  A store by threads 0-31
(`if (threadIdx.x < 32)`) read by every thread after a barrier, a warp group
that syncs only itself (`bar.sync 1, 128`) and then reads what all 256 threads
wrote: those orderings run between roles.  Here the roles are interleaved by
the protocol simulation (`model.protocol`), which matches block barriers, named
barriers by id and thread count, and mbarrier phases, and keeps a vector clock
per role.  An access of role r conflicts with an earlier access of role s != r
(different threads by construction) when they touch a common byte, one of them
writes (two atomics never race), and r's clock has not caught up with s's clock
at that access: no barrier both took part in, and no mbarrier phase handed from
s to r, lies between them.

TMA writes are the mbarrier protocol's business and are not recorded here;
cp.async writes count at their issue, ordered by the barriers that follow it.
"""
from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..cuda import ast as A
from .cpasync import Hazard
from .intrinsics import HazardKind as H
from .intrinsics import IssueKind, K
from .protocol import AccessRecorder, ProtocolSim
from .threads import LaneRecipe, cross_thread, different_values, stored_value, touch
from .trace import Event
from .wgmma import shares_warpgroup

if TYPE_CHECKING:
    from .kernel import KernelModel

MAX_RECORDS = 4096      # accesses kept per space; older ones ordered for everyone are dropped


# protocol issues a missing block barrier can cause (`CrossRoleRaces.protocol_issues`)
_ORDERING = frozenset({IssueKind.RAW, IssueKind.TMA_WAW, IssueKind.WAR_UNRELEASED, IssueKind.WAR_UNOBSERVED,
                       IssueKind.DEADLOCK, IssueKind.TMEM_RAW, IssueKind.TMEM_WAR})


@dataclass(slots=True)
class _Access:
    event: Event
    role: int
    epoch: int          # the role's own clock at the access
    write: bool
    start: int
    end: int
    partial: tuple = ()  # named barriers (event, participants) the role passed before it
    seq: int = 0        # when it was recorded: the order of the accesses of all roles


@dataclass(slots=True)
class _Log:
    """One space's accesses, per role, each list in program order with its epochs beside it.

    A role's own clock only grows, so its accesses that another role's clock has not caught
    up with (the unordered ones) are a suffix of its list: a bisection finds them, instead
    of a scan over every access the space ever had (tens of thousands in the heaviest
    persistent kernels)."""

    accesses: dict[int, list[_Access]] = field(default_factory=dict)
    epochs: dict[int, list[int]] = field(default_factory=dict)
    count: int = 0

    def append(self, access: _Access) -> None:
        self.accesses.setdefault(access.role, []).append(access)
        self.epochs.setdefault(access.role, []).append(access.epoch)
        self.count += 1

    def unordered(self, r: int, vc: list[int]) -> list[_Access]:
        """The accesses of roles other than `r` that r's clock `vc` has not caught up with,
        in the order they were made."""
        found: list[_Access] = []
        lists = 0
        for q, accesses in self.accesses.items():
            if q != r:
                suffix = accesses[bisect.bisect_right(self.epochs[q], vc[q]):]
                if suffix:
                    found.extend(suffix)
                    lists += 1
        if lists > 1:
            found.sort(key=_seq)
        return found

    def keep(self, kept: list[_Access]) -> None:
        """Replace the log by `kept` (in order)."""
        self.accesses, self.epochs, self.count = {}, {}, 0
        for a in kept:
            self.append(a)

    def all(self) -> list[_Access]:
        return sorted((a for accesses in self.accesses.values() for a in accesses), key=_seq)


def _seq(access: _Access) -> int:
    return access.seq


class RaceRecorder(AccessRecorder):
    """Records every plain access to a buffer more than one role touches; reports conflicts."""

    def __init__(self, sim: ProtocolSim, buffers: frozenset[str], barriers: frozenset[str]) -> None:
        self.sim = sim
        self.model = sim.model
        self.buffers = buffers
        self.barriers = barriers
        self.records: dict[str, _Log] = {}
        self.writes: dict[str, _Log] = {}      # the writes among `records`
        self.made = 0                           # accesses recorded so far: their order
        self.hazards: dict[tuple, Hazard] = {}
        self.partials: dict[int, list[tuple[Event, frozenset[int]]]] = {}
        self._warps: tuple[dict[int, int], dict[int, dict[tuple, tuple[int, int]]]] | None = None

    def passed(self, r: int, ev: Event, group: dict) -> None:
        if ev.kind == K.NAMED_SYNC:
            self.partials.setdefault(r, []).append((ev, frozenset(group["roles"])))

    def barrier_use(self, r: int, ev: Event) -> None:
        """An mbarrier's `init` is a store to it, every use a load: a use by a role no barrier
        orders after the init reads an uninitialised barrier."""
        if ev.barrier is None or ev.barrier[0] not in self.barriers:
            return
        init = ev.kind == K.MBAR_INIT
        self.record(r, ev, f"mbarrier:{ev.barrier[0]}", ev.barrier[1] * 8, ev.barrier[1] * 8 + 8, init)

    def access(self, r: int, ev: Event) -> None:
        if ev.kind == K.GLOBAL:
            # global memory the block writes and reads: bytes from the parameter's base
            if ev.space is not None and ev.extent is not None and ev.space in self.model.handoff_params:
                self.record(r, ev, f"global:{ev.space}", ev.extent[0], ev.extent[1],
                            ev.access in ("write", "atomic"))
            return
        if ev.buffer not in self.buffers or ev.kind not in (K.SMEM, K.CP_ASYNC):
            return
        rng = self.model.byte_range(ev, precise=True)
        if rng is None:
            return
        space, start, end = rng
        write = ev.access in ("write", "async", "atomic") or ev.kind == K.CP_ASYNC
        self.record(r, ev, space, start, end, write)

    def record(self, r: int, ev: Event, space: str, start: int, end: int, write: bool) -> None:
        vc = self.sim.vc[r]
        # a tcgen05 MMA's read: checked against what its role knows at the issue, kept as an
        # access of the role's tensor-core unit, which only the commit's phase orders (`ProtocolSim`)
        owner, epoch = (len(self.sim.vc) + r, self.sim.unit[r]) if ev.committed else (r, vc[r])
        # an mbarrier word is 8 bytes every access of it covers exactly: one list per word, so a
        # use is compared with that word's accesses only, not with every barrier's (the heaviest
        # persistent kernels make tens of thousands of barrier uses)
        key = f"{space}@{start}" if space.startswith("mbarrier:") else space
        records = self.records.setdefault(key, _Log())
        writes = self.writes.setdefault(key, _Log())
        # two reads never conflict: a read is compared with the earlier writes only (in the same
        # order as among all accesses, so the same pair is found first)
        # (so one of the two is a write: `writes` holds only writes)
        atomic = ev.access == "atomic"
        for old in (records if write else writes).unordered(r, vc):
            if old.end <= start or end <= old.start:
                continue
            if atomic and old.event.access == "atomic":
                continue
            self.conflict(old, r, ev, write)
        self.made += 1
        access = _Access(ev, owner, epoch, write, start, end, tuple(self.partials.get(r, ())), self.made)
        records.append(access)
        if write:
            writes.append(access)
        if records.count > MAX_RECORDS:
            writes.keep([a for a in self.prune(records) if a.write])

    def conflict(self, old: _Access, r: int, ev: Event, write: bool) -> None:
        kind = H.WAW_PLAIN if write and old.write else (H.RAW_PLAIN if old.write else H.WAR_PLAIN)
        certain = self._certainty(old, r, ev, kind)
        if certain is False:
            return
        first, second = old.event, ev
        reader_partials, writer_role = tuple(self.partials.get(r, ())), old.role
        if kind != H.RAW_PLAIN and _position(ev) < _position(old.event):
            # two unordered stores: named in the program's order.  A load first: nothing orders
            # the two roles either way, so which one the interleaving ran first says nothing:
            # name the race in the program's order (the store, then the load).
            if kind == H.WAR_PLAIN:
                kind = H.RAW_PLAIN
            first, second = ev, old.event
            reader_partials, writer_role = old.partial, r
        # a named barrier the reader passed before its load, which the writer's threads skip
        scope = _skipped_barrier(reader_partials, writer_role) if kind == H.RAW_PLAIN else None
        h = Hazard(kind, first, second, second.buffer or first.buffer or "", self.model.slot(second),
                   certain=certain is True, scope=scope)
        prev = self.hazards.get(h.key)
        if prev is None or (h.certain and not prev.certain):
            self.hazards[h.key] = h

    def _certainty(self, old: _Access, r: int, ev: Event, kind: H) -> bool | None:
        """Whether two unordered accesses of different roles race: True certainly, None maybe,
        False not (no common byte, equal stored values, or one warp group's retired wgmma)."""
        certain: bool | None
        if old.event.kind == K.MBAR_INIT or ev.kind == K.MBAR_INIT:
            certain = True         # one barrier word: the same bytes whoever touches it
        elif kind == H.WAW_PLAIN and old.event.node is ev.node and old.event.iteration == ev.iteration:
            certain = self.replicated(old.event, ev)
        else:
            certain = self.overlap(old.event, ev, self._warp_order(old.event, ev))
        if certain is False:
            return False
        if old.event.retired or ev.retired:
            ra, rb = self.model.roles[old.role], self.model.roles[r]
            if shares_warpgroup((ra.lo, ra.hi), (rb.lo, rb.hi)):
                return False      # one warp group: the other role's own wait completed the wgmma's reads
        if kind == H.WAW_PLAIN and (old.event.uncertain or ev.uncertain):
            return None
        return certain

    def overlap(self, a: Event, b: Event, warp_mask: int | None = None) -> bool | None:
        """Whether the two accesses (of different roles, so of different threads) share a byte;
        `warp_mask`: a `__syncwarp` both roles pass between them orders the pairs of one warp
        whose lanes are both in the mask (`_warp_order`)."""
        if a.unknown_footprint or b.unknown_footprint or a.possible or b.possible:
            return None
        if a.committed or b.committed:
            return self._operand_met(b, a) if a.committed else self._operand_met(a, b)
        if a.lanes is not None and b.lanes is not None:
            return cross_thread(a.lanes, b.lanes, self.model.index.memo["eval"], self.model.shift(a, b),
                                warp_mask=warp_mask)
        return True if a.extent is not None and b.extent is not None else None


    def _warp_order(self, a: Event, b: Event) -> int | None:
        """The lane mask of a `__syncwarp` instance both roles execute between `a` and `b`: after
        `a` in its role's program and before `b` in the other's, or the other way round.  The
        lanes of one warp that two roles split (`if (threadIdx.x == 0)`) meet at the same
        `__syncwarp` statement at the same iteration, its n-th execution in both (a rendezvous of
        the warp's lanes in the mask, PTX `bar.warp.sync`); None where there is none."""
        if a.role == b.role or a.committed or b.committed:
            return None
        index = self._warp_index()
        pa, pb = index[0].get(id(a)), index[0].get(id(b))
        if pa is None or pb is None:
            return None
        mine = index[1].get(a.role, {})
        for key, (pos_b, mask) in index[1].get(b.role, {}).items():
            pos_a = mine.get(key, (None, 0))[0]
            if pos_a is not None and ((pos_a > pa and pos_b < pb) or (pos_a < pa and pos_b > pb)):
                return mask
        return None

    def _warp_index(self) -> tuple[dict[int, int], dict[int, dict[tuple, tuple[int, int]]]]:
        """Each event's position in its role's program, and each role's `__syncwarp` instances
        (statement, iteration, occurrence) with their positions and lane masks; built once."""
        if self._warps is None:
            pos: dict[int, int] = {}
            syncs: dict[int, dict[tuple, tuple[int, int]]] = {}
            for r, events in enumerate(self.sim.traces):
                seen: dict[tuple, int] = {}
                for n, e in enumerate(events):
                    pos[id(e)] = n
                    if e.kind == K.WARP_SYNC:
                        key = (id(e.node), e.iteration)
                        seen[key] = seen.get(key, -1) + 1
                        mask = e.value if e.value is not None else 0xFFFFFFFF
                        syncs.setdefault(r, {})[(*key, seen[key])] = (n, mask & 0xFFFFFFFF)
            self._warps = (pos, syncs)
        return self._warps

    def _operand_met(self, other: Event, mma: Event) -> bool | None:
        """Whether `other` touches the first 16 bytes a tcgen05 MMA's operand descriptor points at
        (the first row of its first core matrix, which the MMA certainly reads): True decides the
        race; otherwise None, since the rest of the operand's layout is not decoded here."""
        if other.lanes is None or mma.offset is None or mma.buffer is None:
            return None
        first = LaneRecipe(A.Number(str(mma.offset), mma.node.span), 1, 16, (), (), mma.threads or 1,
                           launch=other.lanes.launch)
        return True if touch(other.lanes, first, self.model.index.memo["eval"], self.model.shift(other, mma)) else None

    def replicated(self, a: Event, b: Event) -> bool | None:
        """One store run by two roles onto common bytes: a race only where the colliding threads
        store different values (`model.threads.same_value`)."""
        if a.lanes is None or b.lanes is None or a.lanes.collective or b.lanes.collective:
            return self.overlap(a, b)
        evaluator = self.model.index.memo["eval"]
        if cross_thread(a.lanes, b.lanes, evaluator, self.model.shift(a, b)) is False:
            return False
        memo = self.model.index.memo.setdefault("replicated-between", {})
        key = (id(a.node), a.lanes.points, a.lanes.ranges, a.lanes.threads, b.lanes.points, b.lanes.ranges,
               b.lanes.threads)
        if key in memo:
            return memo[key]
        memo[key] = found = self._replicated(a, b, evaluator)
        return found

    def _replicated(self, a: Event, b: Event, evaluator) -> bool | None:
        assert a.lanes is not None and b.lanes is not None
        return different_values(a.lanes, b.lanes, (stored_value(a.node), stored_value(b.node)), evaluator,
                                self.model.registers, self.model.shift(a, b), self.model.definitions)

    def prune(self, records: _Log) -> list[_Access]:
        """Drop the accesses every other role is ordered after, then the oldest beyond
        MAX_RECORDS; the accesses kept, in order."""
        vcs = self.sim.vc
        keep = [a for a in records.all() if any(vcs[q][a.role] < a.epoch for q in range(len(vcs)) if q != a.role)]
        records.keep(keep[-MAX_RECORDS:])
        return keep[-MAX_RECORDS:]


def _skipped_barrier(reader_partials: tuple, writer_role: int) -> Event | None:
    """The last named barrier the reader passed whose participants leave out the writer's role."""
    return next((bar for bar, roles in reversed(reader_partials) if writer_role not in roles), None)


def _position(ev: Event) -> tuple[int, int]:
    return ev.node.span.line, ev.node.span.column


class CrossRoleRaces:
    """Plain-access races between the roles of one kernel, and which block/named barrier each
    barrier trial needs (for the redundancy claims)."""

    def __init__(self, model: KernelModel) -> None:
        self.model = model
        self._protocol: dict[frozenset[int], frozenset[tuple]] = {}   # `protocol_issues`, by trial

    @functools.cached_property
    def shared_buffers(self) -> frozenset[str]:
        """Buffers (and their aliases) that two roles access and some role writes without TMA."""
        model = self.model
        roles: dict[str, set[int]] = {}
        written: set[str] = set()
        for ev in model.trace.all_events():
            if ev.buffer is None or ev.kind not in (K.SMEM, K.CP_ASYNC):
                continue
            roles.setdefault(ev.buffer, set()).add(ev.role)
            if ev.access in ("write", "async", "atomic") or ev.kind == K.CP_ASYNC:
                written.add(ev.buffer)
        by_space: dict[str, set[int]] = {}
        for name, rs in roles.items():
            by_space.setdefault(model.buffers[name].space, set()).update(rs)
        candidates = {n for n in roles if len(by_space[model.buffers[n].space]) > 1}
        if not candidates & written:
            return frozenset()
        return frozenset(candidates)

    @functools.cached_property
    def shared_barriers(self) -> frozenset[str]:
        """mbarrier arrays one role initialises and another uses."""
        init: dict[str, set[int]] = {}
        used: dict[str, set[int]] = {}
        for ev in self.model.trace.all_events():
            if ev.barrier is None or ev.barrier[0] not in self.model.barriers:
                continue
            (init if ev.kind == K.MBAR_INIT else used).setdefault(ev.barrier[0], set()).add(ev.role)
        return frozenset(n for n, roles in init.items() if used.get(n, set()) - roles)

    @property
    def relevant(self) -> bool:
        """Whether roles share anything the per-role simulation cannot order."""
        return len(self.model.roles) > 1 and bool(self.shared_buffers or self.shared_barriers
                                                  or self.model.handoff_params)

    def simulate(self, disabled: frozenset[int] = frozenset()) -> tuple[dict[tuple, Hazard], bool]:
        """(races found, whether every role ran to its end) with the barrier nodes in `disabled`
        treated as absent; a trial that hangs is not a removable barrier."""
        if not self.relevant:
            return {}, True
        sim = self._protocol_sim(disabled)
        recorder = RaceRecorder(sim, self.shared_buffers, self.shared_barriers)
        sim.recorder = recorder
        self._record_protocol(disabled, sim.run())
        finished = all(pc >= len(t) for pc, t in zip(sim.pcs, sim.traces))
        return recorder.hazards, finished

    def _protocol_sim(self, disabled: frozenset[int]) -> ProtocolSim:
        """A run of the roles with the barrier nodes in `disabled` treated as absent."""
        from .mbarrier import MBarrierAnalysis

        analysis = self.model.mbarrier
        assert isinstance(analysis, MBarrierAnalysis)
        sim = ProtocolSim(analysis, tx_known=False)
        sim.disabled = disabled
        sim.absent = frozenset(self.model.mixed_named)
        return sim

    def _record_protocol(self, disabled: frozenset[int], issues: list) -> None:
        self._protocol[disabled] = frozenset((i.kind, id(i.event.node)) for i in issues if i.kind in _ORDERING)

    def protocol_issues(self, disabled: frozenset[int] = frozenset()) -> frozenset[tuple]:
        """The ordering issues of the mbarrier protocol (a read of a TMA-written slot before its
        phase is known, a slot refilled before its release, a hang) in the run with the barriers
        of `disabled` absent, by kind and statement: a block barrier that hands one thread's
        observed phase to the others (`if (tid == 0) full.wait(p); __syncthreads(); read`) is
        needed for what it orders here, not only for plain accesses."""
        if disabled not in self._protocol:
            if self.relevant:
                self.simulate(disabled)
            else:           # no plain access two roles share: the protocol run alone
                self._record_protocol(disabled, self._protocol_sim(disabled).run())
        return self._protocol.get(disabled, frozenset())

    @functools.cached_property
    def hazards(self) -> list[Hazard]:
        return list(self.simulate()[0].values())
