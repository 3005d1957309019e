"""The TMA / mbarrier protocol, checked by running the roles against each other.

An mbarrier completes a phase when the arrivals its `init` asked for have
come and the transaction bytes announced by `expect_tx` have landed; a
`wait(parity)` returns once the phase of that parity is complete.  The roles
of a warp-specialized kernel (TMA producer, MMA consumers) are interleaved
round-robin until each blocks; nobody able to move is a hang.  Along the way:

* a read of a TMA-written slot must come after a wait that observed the
  phase the TMA completes (RAW);
* a TMA write into a slot must come after the producer observed the phase
  in which every reader of the old contents arrived on its release barrier
  (WAR);
* per iteration, arrivals must match `init` counts and `expect_tx` bytes the
  bytes of the TMA loads that signal the barrier.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..cuda import ast as A
from .intrinsics import ARRIVE_KINDS, EXPECT_KINDS, USE_KINDS, K
from .intrinsics import IssueKind as I
from .protocol import BarrierState, ProtocolIssue
from .threads import footprint
from .trace import Event

if TYPE_CHECKING:
    from .kernel import KernelModel
    from .protocol import ProtocolSim

Barrier = tuple[str, int]


def bar_name(b: Barrier | None) -> str:
    return f"{b[0]}[{b[1]}]" if b else "?"



class MBarrierAnalysis:
    """The mbarrier protocol of a kernel: every role's events simulated against each other
    (arrival counts, expect_tx bytes against the TMA bytes that land, parities, who waits on
    whom), so a hang, a race on a slot or a missing release is found as a `ProtocolIssue`."""

    def __init__(self, model: KernelModel, sim: type[ProtocolSim] | None = None) -> None:
        self.model = model
        self._sim_class = sim

    @functools.cached_property
    def pair(self) -> MBarrierAnalysis | None:
        """The analysis of both CTAs of a 2-CTA pair run as one protocol (`model.cluster`), for a
        kernel whose barriers the CTAs of a cluster share; None for a one-CTA kernel, and for a
        cluster kernel the pair does not model (multicast TMA, a remote arrival at a CTA the text
        does not name): that one keeps the `mbarrier-not-analyzed` note."""
        from .cluster import ClusterPair, PairSim

        if not self.model.trace.cluster_barriers or isinstance(self.model, ClusterPair) \
                or ClusterPair.unsupported(self.model) is not None:
            return None
        return MBarrierAnalysis(ClusterPair(self.model), PairSim)     # type: ignore[arg-type]

    @property
    def view(self) -> KernelModel:
        """The model the issues' events and roles belong to: the pair's for a 2-CTA kernel."""
        return self.pair.model if self.pair is not None else self.model

    @functools.cached_property
    def uses_mbarriers(self) -> bool:
        """Whether the kernel declares mbarriers and some role arrives on or waits on one."""
        return bool(self.model.barriers) and any(
            ev.kind in USE_KINDS for ev in self.model.trace.all_events())

    @functools.cached_property
    def issues(self) -> list[ProtocolIssue]:
        """Every protocol issue found, one per kind and place (empty without mbarriers)."""
        if not self.uses_mbarriers:
            return []
        if self.pair is not None:
            return self.pair.issues
        found: dict[tuple, ProtocolIssue] = {}
        # One CTA's interleaving cannot order anything around a barrier other CTAs
        # complete: with cluster barriers only the static checks of the others run.
        simulated = self._simulate() if not self.cluster_barriers else []
        opaque = self.model.trace.opaque_barriers
        for issue in self._counts() + self._init_fence() + simulated + self._cluster_note():
            bar = issue.facts.get("barrier") or issue.event.barrier
            if opaque and issue.kind != I.UNANALYZED and (not bar or bar[0] in opaque):
                continue        # its protocol runs partly in code pipelint does not see
            found.setdefault(issue.key, issue)
        for name, call in sorted(opaque.items()):
            first = self._opaque_first(name, call)
            if first is not None:
                issue = ProtocolIssue(I.UNANALYZED, first, {"opaque": name, "callee": call.name})
                found.setdefault(issue.key, issue)
        return list(found.values())

    def _opaque_first(self, name: str, call: A.Call) -> Event | None:
        """Where to report a barrier array passed to a call pipelint does not model: the call's
        first event, else the array's first use."""
        return next((ev for ev in self.model.trace.all_events() if ev.node is call), None) or next(
            (ev for ev in self.model.trace.all_events() if ev.barrier and ev.barrier[0] == name), None)

    @functools.cached_property
    def cluster_barriers(self) -> frozenset[str]:
        """Barrier arrays other CTAs of the cluster arrive on or complete (remote arrive,
        2-CTA tcgen05 commit, multicast/2-SM TMA): one CTA's trace cannot decide them."""
        return self.model.trace.cluster_barriers

    def _cluster_note(self) -> list[ProtocolIssue]:
        if not self.model.trace.cluster:
            return []
        first = next((ev for ev in self.model.trace.all_events()
                      if ev.barrier and (ev.barrier[0] in self.cluster_barriers or not self.cluster_barriers)),
                     None)
        if first is None:
            return []
        from .cluster import ClusterPair

        return [ProtocolIssue(I.UNANALYZED, first, {"cluster_barriers": sorted(self.cluster_barriers),
                                                    "why": ClusterPair.unsupported(self.model)})]

    # ---------------------------------------------------------------- static per-iteration counts
    def _inits(self) -> dict[Barrier, Event]:
        return self.model.mbarrier_inits()

    @functools.cached_property
    def tma_targets(self) -> frozenset[str]:
        """Buffers only TMA loads write (plain stores would make a first read legitimate)."""
        tma = {ev.buffer for ev in self.model.trace.all_events() if ev.kind == K.TMA_LOAD and ev.buffer}
        plain = {ev.buffer for ev in self.model.trace.all_events()
                 if ev.kind in (K.SMEM, K.CP_ASYNC) and ev.access in ("write", "async") and ev.buffer}
        return frozenset(tma - plain)

    @functools.cached_property
    def tma_bytes(self) -> dict[int, int | None]:
        """Bytes each TMA load writes (by event identity), from the loads themselves.

        A descriptor's box is not in the kernel text (it lives in the host's CUtensorMap), so
        it is read off how the loads tile shared memory: loads into one slot partition it,
        each covering up to the next load's offset, the last up to the end of the slot, where
        the slot is a version of a pipelined buffer (its stride comes from the accesses).  The
        1-D bulk form says its size itself.  A load with no next load and no version end
        takes the size of the other loads of the same call (one call site uses one
        descriptor, hence one box), else it is unknown.  Never the gap to the next buffer in
        the layout: TileLang's planner reuses the bytes of dead buffers, so that gap says
        nothing about a box (a 16 KB Q tile followed at 15 KB by an aliasing `lse_shared`).
        """
        sizes: dict[int, int | None] = {}
        groups: dict[tuple, list[Event]] = {}
        for ev in self.model.trace.all_events():
            if ev.kind != K.TMA_LOAD:
                continue
            if ev.value is not None:
                sizes[id(ev)] = ev.value
                continue
            rng = self.model.byte_range(ev)
            key = (ev.role, ev.iteration, rng)
            groups.setdefault(key, []).append(ev)
        for (_, _, rng), evs in groups.items():
            self._partition(rng, evs, sizes)
        self._same_call(sizes)
        return sizes

    def _partition(self, rng: tuple | None, evs: list[Event], sizes: dict[int, int | None]) -> None:
        """The sizes of loads into one slot (`rng`) of one role and iteration: each covers up to
        the next load's offset, the last up to the end of the slot of a pipelined buffer."""
        buf = self.model.buffers.get(evs[0].buffer or "")
        if rng is None or buf is None or any(e.offset is None for e in evs):
            for e in evs:
                sizes[id(e)] = None
            return
        versioned = evs[0].buffer in self.model.stages
        starts = sorted({buf.offset + (e.offset or 0) for e in evs})
        for e in evs:
            start = buf.offset + (e.offset or 0)
            later = [s for s in starts if s > start]
            sizes[id(e)] = (later[0] - start) if later else (rng[2] - start if versioned else None)

    def _same_call(self, sizes: dict[int, int | None]) -> None:
        """Unknown sizes taken from the other loads of the same call site, where they agree."""
        by_site: dict[int, set[int | None]] = {}
        for ev in self.model.trace.all_events():
            if ev.kind == K.TMA_LOAD and id(ev) in sizes:
                by_site.setdefault(id(ev.node), set()).add(sizes[id(ev)])
        for ev in self.model.trace.all_events():
            if ev.kind == K.TMA_LOAD and sizes.get(id(ev), 0) is None:
                known = by_site.get(id(ev.node), set()) - {None}
                if len(known) == 1:
                    sizes[id(ev)] = next(iter(known))

    def _counts(self) -> list[ProtocolIssue]:
        return self._arrival_counts() + self._tx_bytes()

    @functools.cached_property
    def _uses(self) -> dict[tuple[int, Barrier], list[Event]]:
        """Each role's arrivals on each (non-cluster) barrier, in program order."""
        uses: dict[tuple[int, Barrier], list[Event]] = {}
        for ev in self.model.trace.all_events():
            if ev.kind in ARRIVE_KINDS and ev.barrier is not None and ev.barrier[0] not in self.cluster_barriers:
                uses.setdefault((ev.role, ev.barrier), []).append(ev)
        return uses

    def _arrival_counts(self) -> list[ProtocolIssue]:
        """Arrivals per phase against `init`.

        Matched per phase, not per loop iteration: the k-th arrival of each role
        on a barrier adds up with every other role's k-th, so two consumer warp
        groups arriving one iteration apart, or an unrolled epilogue arriving
        twice, still line up with the phases `init` counts.
        """
        inits = self._inits()
        by_phase: dict[tuple[int, Barrier], list[Event]] = {}
        arrivers: dict[Barrier, set[int]] = {}
        counts: dict[Barrier, set[int]] = {}
        for (role, bar), evs in self._uses.items():
            arrivers.setdefault(bar, set()).add(role)
            counts.setdefault(bar, set()).add(len(evs))
            for k, ev in enumerate(evs):
                by_phase.setdefault((k, bar), []).append(ev)
        issues = []
        for (_, bar), evs in by_phase.items():
            init = inits.get(bar)
            total = sum(e.mult for e in evs)
            if init is None or init.value == total or _undecided(counts[bar], evs, arrivers[bar], init, total) \
                    or self._phases_balance(bar, evs, init.value or 0):
                continue
            issues.append(ProtocolIssue(I.ARRIVAL_COUNT, init, {"barrier": bar, "init": init.value,
                                                                "arrivals": total},
                                        tuple((e, "arrival") for e in evs[:3])))
        return issues

    def _tx_bytes(self) -> list[ProtocolIssue]:
        """`expect_tx` bytes per (iteration, barrier) against the TMA loads that signal it.

        In a cluster kernel a CTA may announce or receive bytes of its peer's loads
        (2-CTA MMA operands, multicast): one CTA's byte balance proves nothing.
        """
        if self.model.trace.cluster:
            return []
        expected, loads = self._tx_phases()
        issues = self._unannounced(expected, loads)
        seen_unknown: set = set()
        for (it, bar), evs in expected.items():
            got_evs = loads.get((it, bar), [])
            if not got_evs:
                continue
            sizes = [self.tma_bytes.get(id(e)) for e in got_evs]
            if any(s is None for s in sizes) or any(e.value is None for e in evs):
                issue = self._tx_unknown(it, bar, evs, got_evs, sizes, seen_unknown)
            else:
                issue = _tx_mismatch(bar, evs, got_evs, sizes)
                if issue is not None and issue.facts["loaded"] > issue.facts["announced"] \
                        and any(e.value is None for e in got_evs):
                    # a box read off the layout (`tma_bytes`) reaches at most to the next load or
                    # the slot's end: an upper bound.  Above the announcement it is no evidence (a
                    # slot may be wider than its box: a 2-CTA GEMM's scale factors fill every other
                    # version), the reads decide (`bytes_read`).  Below it, the announced bytes can
                    # never all land: a hang.
                    issue = self._tx_unknown(it, bar, evs, got_evs, [None] * len(got_evs), seen_unknown)
            if issue is not None:
                issues.append(issue)
        return issues

    def _tx_phases(self) -> tuple[dict[tuple, list[Event]], dict[tuple, list[Event]]]:
        """The expect_tx events and the TMA loads of each (iteration values, barrier)."""
        expected: dict[tuple, list[Event]] = {}
        loads: dict[tuple, list[Event]] = {}
        for ev in self.model.trace.all_events():
            if ev.barrier is None:
                continue
            key = (tuple(v for _, v in ev.iteration), ev.barrier)
            if ev.kind in EXPECT_KINDS:
                expected.setdefault(key, []).append(ev)
            elif ev.kind == K.TMA_LOAD:
                loads.setdefault(key, []).append(ev)
        return expected, loads

    def _unannounced(self, expected: dict[tuple, list[Event]],
                     loads: dict[tuple, list[Event]]) -> list[ProtocolIssue]:
        """TMA loads signalling a barrier nobody announces bytes on: each load's complete_tx
        drives the phase's transaction count negative, and the phase can complete before the
        data lands (or the count underflows)."""
        return [ProtocolIssue(I.TX_BYTES, got_evs[0], {"barrier": bar, "missing": True},
                              tuple((e, "load") for e in got_evs[:3]))
                for (it, bar), got_evs in loads.items()
                if (it, bar) not in expected and not self._expects_somewhere(bar)]

    def _tx_unknown(self, it: tuple, bar: Barrier, evs: list[Event], got_evs: list[Event],
                    sizes: list[int | None], seen_unknown: set) -> ProtocolIssue | None:
        """A phase whose announced or loaded bytes are not all known: a defect where the bytes
        read (`bytes_read`) exceed the announcement, else one unknown note per barrier."""
        announced = sum((e.value or 0) * e.mult for e in evs) if all(e.value is not None for e in evs) \
            else None
        read = self.bytes_read(it, bar, got_evs) if announced is not None else None
        if read is not None and announced is not None and read > announced:
            return ProtocolIssue(I.TX_BYTES, evs[0], {"barrier": bar, "announced": announced, "read": read},
                                 tuple((e, "load") for e in got_evs[:5]))
        if bar in seen_unknown:
            return None
        seen_unknown.add(bar)
        return ProtocolIssue(I.TX_BYTES, evs[0], {
            "barrier": bar, "unknown": True, "announced": announced, "read": read},
            tuple((e, "load") for e, s in zip(got_evs, sizes) if s is None)[:3])

    def bytes_read(self, it: tuple, bar: Barrier, loads: list[Event]) -> int | None:
        """A lower bound on the bytes the TMA loads of one phase write, where their boxes are not
        in the kernel text: the bytes their consumers then read of the slots they fill.

        A slot counts when every TMA load into it signals this barrier and nothing else writes
        its buffer (`tma_targets`): each byte read from it after the phase completed was written
        by one of these loads, or by none (a stale read, a defect of its own).  Reads of the same
        iteration count, or every read where the slot is filled once, before the loops.  Only reads whose
        bytes are exact count (`_exact_bytes`: wgmma operands, per-thread loads); their union per
        slot is measured, never the buffer's size (the planner reuses dead buffers' bytes).  So an
        announcement below this bound is a defect whatever the boxes are: fewer bytes announced
        than land (the phase completes early), or reads of bytes no load of the phase writes.
        None when no read qualifies."""
        slots = self._slots(loads)
        if slots is None:
            return None
        once = self._filled_once(slots, bar)
        if once is None:
            return None
        spans = self._read_spans(slots, it, once)
        return _union_bytes(spans) if spans else None

    def _slots(self, loads: list[Event]) -> dict[tuple, set[str]] | None:
        """The slots the loads fill (each with its buffers); None when one is unknown or a buffer
        something else writes too."""
        slots: dict[tuple, set[str]] = {}
        for ld in loads:
            rng = self.model.byte_range(ld)
            if rng is None or ld.buffer not in self.tma_targets:
                return None
            slots.setdefault(rng, set()).add(ld.buffer or "")
        return slots

    def _filled_once(self, slots: dict[tuple, set[str]], bar: Barrier) -> bool | None:
        """Whether the slots are filled once, before any pipelined loop (a Q tile); None when some
        other barrier's loads fill one of them too."""
        model = self.model
        once = True
        for ev in model.trace.all_events():
            if ev.kind == K.TMA_LOAD and model.byte_range(ev) in slots:
                if ev.barrier != bar:
                    return None
                once = once and not ev.iteration
        return once

    def _read_spans(self, slots: dict[tuple, set[str]], it: tuple, once: bool) -> dict[tuple, list[tuple[int, int]]]:
        """Per slot, the byte spans exact reads take of it (of iteration `it`, or any where the
        slots are filled `once`)."""
        model = self.model
        spans: dict[tuple, list[tuple[int, int]]] = {}
        single = self._single_box(slots)
        for ev in model.trace.all_events():
            if ev.kind != K.SMEM or ev.access != "read" or ev.retired or ev.uncertain or ev.unknown_footprint \
                    or not (once or tuple(v for _, v in ev.iteration) == it):
                continue
            buf = model.buffers.get(ev.buffer or "")
            rng = model.byte_range(ev)
            if buf is None or rng not in slots:
                continue
            spans.setdefault(rng, []).extend(self._spans_of(ev, buf.offset, rng, single.get(rng)))
        return spans

    def _spans_of(self, ev: Event, base: int, rng: tuple, start: int | None) -> list[tuple[int, int]]:
        """The bytes of slot `rng` the read `ev` shows written: those it takes exactly, and where one
        box fills the slot from `start`, everything up to the last byte it takes (a TMA box is
        contiguous in shared memory, swizzled or not)."""
        found = [(max(base + lo, rng[1]), min(base + hi, rng[2])) for lo, hi in self._exact_bytes(ev)]
        if start is not None and ev.extent is not None and base + ev.extent[1] > start:
            found.append((start, min(base + ev.extent[1], rng[2])))
        return found

    def _single_box(self, slots: dict[tuple, set[str]]) -> dict[tuple, int]:
        """The slots one TMA load fills (one call site at one offset), with the load's first byte."""
        starts = self._box_starts
        return {rng: next(iter(starts[rng])) for rng in slots if len(starts.get(rng, ())) == 1}

    @functools.cached_property
    def _box_starts(self) -> dict[tuple, set[int]]:
        """Each slot's TMA load start bytes, over the kernel (walked once, not once per phase)."""
        starts: dict[tuple, set[int]] = {}
        for ev in self.model.trace.all_events():
            if ev.kind == K.TMA_LOAD and ev.offset is not None:
                rng = self.model.byte_range(ev)
                buf = self.model.buffers.get(ev.buffer or "")
                if rng is not None and buf is not None:
                    starts.setdefault(rng, set()).add(buf.offset + ev.offset)
        return starts

    def _exact_bytes(self, ev: Event) -> list[tuple[int, int]]:
        """The bytes (into its buffer) a read certainly touches: a wgmma operand's (its descriptors,
        `model.wgmma`), or a per-thread load's, every thread's bytes where its footprint is known
        exactly (`model.threads.footprint`); nothing for the others (an extent is only a hull)."""
        if isinstance(ev.node, A.Call) and ev.node.name.startswith("tl::wgmma"):
            return [ev.extent] if ev.extent is not None else []
        if ev.lanes is None or ev.lanes.collective:
            return []
        found = footprint(ev.lanes, self.model.index.memo["eval"])
        if found is None:
            return []
        width = ev.lanes.width
        return [(start, start + width) for starts in found.values() for start in starts]

    def _expects_somewhere(self, bar: Barrier) -> bool:
        return bar in self._announced

    @functools.cached_property
    def _announced(self) -> frozenset[Barrier]:
        """Barriers some expect_tx announces bytes on (once per kernel, not once per barrier)."""
        return frozenset(ev.barrier for ev in self.model.trace.all_events()
                         if ev.kind in EXPECT_KINDS and ev.barrier is not None)

    def _init_fence(self) -> list[ProtocolIssue]:
        events = self.model.trace.events[0] if self.model.trace.events else []
        last_init = None
        fenced = synced = False
        for ev in events:
            if ev.kind == K.MBAR_INIT:
                last_init, fenced, synced = ev, False, False
            elif ev.kind == K.FENCE_INIT and last_init is not None:
                fenced = True
            elif ev.kind == K.SYNC and last_init is not None and fenced:
                synced = True
            elif ev.kind in USE_KINDS and last_init is not None:
                if not (fenced and synced):
                    missing = "tl::fence_barrier_init()" if not fenced else "__syncthreads()"
                    return [ProtocolIssue(I.INIT_FENCE, ev, {"barrier": ev.barrier, "missing": missing},
                                          ((last_init, "last-init"),))]
                return []
        return []

    # ---------------------------------------------------------------- concurrent simulation
    def _simulate(self) -> list[ProtocolIssue]:
        return self._sim[1]

    @functools.cached_property
    def _sim(self) -> tuple[ProtocolSim, list[ProtocolIssue]]:
        """The roles run against each other once (`ProtocolSim`), and what it found."""
        from .protocol import ProtocolSim

        tx_known = not any(i.kind == I.TX_BYTES for i in self._tx_bytes()) and all(
            v is not None for v in self.tma_bytes.values())
        sim = (self._sim_class or ProtocolSim)(self, tx_known)
        sim.absent = frozenset(self.model.mixed_named)
        return sim, sim.run()

    @functools.cached_property
    def barrier_hang(self) -> list[Event]:
        """The events at which the roles wait forever when only block and named barriers hold
        them (`bar.sync id, n` for threads that arrive only after a `__syncthreads` the waiters
        never reach): one per blocked role.  Empty where every role runs to its end, where a
        blocked role waits on an mbarrier (`mbarrier-deadlock` says that), or where a blocked
        statement is under a condition pipelint cannot evaluate (unknown is no hang)."""
        model = self.model
        if len(model.roles) < 2 or model.trace.truncated or self.cluster_barriers or not any(
                ev.kind == K.NAMED_SYNC for ev in model.trace.all_events()):
            return []
        sim = self._sim[0]
        if not sim.stuck:
            return []
        blocked = [trace[pc] for trace, pc in zip(sim.traces, sim.pcs) if pc < len(trace)]
        if any(ev.kind not in (K.SYNC, K.NAMED_SYNC) or ev.uncertain or ev.guarded for ev in blocked):
            return []
        return blocked

    @functools.cached_property
    def observed(self) -> tuple[dict[int, tuple[Barrier, int]], dict[int, int]]:
        """By event identity: the phase of its barrier each arrival counted towards, and the phase
        each passed parity wait observed complete (every earlier one too), from the run of the
        roles against each other; empty where the protocol is not simulated (no mbarriers, a
        cluster kernel).  An arrival by every thread of a role releases what those threads did
        before it to whoever observes its phase: the role's own threads after their wait too."""
        if not self.uses_mbarriers or self.cluster_barriers:
            return {}, {}
        sim, _ = self._sim
        return sim.arrival_phase, {id(ev): phase for _, ev, _, phase, *_ in sim.waits}

    def _phases_balance(self, bar: Barrier, evs: list[Event], init: int) -> bool:
        """Whether the simulation refutes pairing the roles' k-th arrivals `evs` into one phase.

        Ping-pong consumers arrive on alternate phases of a release barrier (`empty[(2 * kk + g)
        % 3]`): each group's k-th arrival is a phase of its own.  When the run counted them into
        different phases, every phase of `bar` received exactly `init` threads, none is left
        incomplete at the end, and no wait on `bar` hangs or can be run past
        (`mbarrier-phase-overrun`), the arrivals match `init` phase by phase.  Roles that all
        arrive on every phase with `init` counting only one of them also balance per phase, but
        then the waiters fall a phase behind: the overrun keeps the count an error.  Where the
        run hung before it reached these arrivals (a defect elsewhere), arrivals at different
        iterations may be alternate phases: the pairing is not evidence, and the hang is
        reported.  Cluster kernels are not simulated: the pairing stands."""
        if self.cluster_barriers:
            return False
        sim, issues = self._sim
        phases = {sim.arrival_phase.get(id(e)) for e in evs}
        if None in phases:
            return sim.stuck and len({e.iteration for e in evs}) > 1
        if len(phases) < 2:
            return False
        if any(i.kind in (I.DEADLOCK, I.PHASE_OVERRUN) and i.facts.get("barrier") == bar for i in issues):
            return False
        st = sim.bars.get(bar)
        return st is not None and st.arrivals == 0 and all(
            n == init for (b, _), n in sim.phase_threads.items() if b == bar)

    def _deadlock(self, traces, pcs, bars) -> list[ProtocolIssue]:
        issues = []
        arrivers = {ev.barrier for t in traces for ev in t if ev.kind in ARRIVE_KINDS}
        for r, trace in enumerate(traces):
            if pcs[r] >= len(trace):
                continue
            ev = trace[pcs[r]]
            if ev.kind != K.MBAR_WAIT:
                continue
            st = bars.get(ev.barrier) or BarrierState()
            related = [(e, "init") for e in self._inits().values() if e.barrier == ev.barrier]
            arrivals, neutral = _arrivals(traces, ev.barrier)
            related += [(e, "arrival") for e in arrivals] + \
                [(e, "cp.async arrival without .noinc (no net arrival)") for e in neutral]
            issues.append(ProtocolIssue(
                I.DEADLOCK, ev, {"role": r, "barrier": ev.barrier, "parity": ev.value,
                                 "never_arrived": ev.barrier not in arrivers, "phase": st.completed,
                                 "init": st.init, "holds": st.arrivals,
                                 "neutral": neutral[0].node.span.line if neutral else None}, tuple(related)))
        # a wait on a barrier nothing arrives on first: where two roles hang at one statement (both
        # CTAs of a pair), the one reported is the cause, not the role that waits behind it
        return sorted(issues, key=lambda issue: not issue.facts["never_arrived"])


def _arrivals(traces, barrier) -> tuple[list[Event], list[Event]]:
    """The first two arrival statements on `barrier`, and the first `cp.async.mbarrier.arrive`
    without `.noinc` on it (no net arrival: `ProtocolSim.on_arrive`), for a deadlock's message."""
    firsts = [e for e in _first_per_node(t for t in traces for t in t) if e.barrier == barrier]
    return [e for e in firsts if e.kind in ARRIVE_KINDS][:2], [e for e in firsts if e.kind == K.CP_ASYNC_ARRIVE_INC][:1]


def _first_per_node(events):
    seen = set()
    for e in events:
        if id(e.node) not in seen:
            seen.add(id(e.node))
            yield e


def _union_bytes(spans: dict[tuple, list[tuple[int, int]]]) -> int:
    """The bytes the spans cover, each slot's overlapping spans counted once."""
    total = 0
    for pieces in spans.values():
        end = -1
        for lo, hi in sorted(pieces):
            lo = max(lo, end)
            if hi > lo:
                total += hi - lo
                end = hi
    return total


def _tx_mismatch(bar: Barrier, evs: list[Event], got_evs: list[Event],
                 sizes: list[int | None]) -> ProtocolIssue | None:
    """A phase whose known announced bytes differ from the known bytes its loads write."""
    want = sum((e.value or 0) * e.mult for e in evs)
    got = sum((s or 0) * e.mult for s, e in zip(sizes, got_evs))
    if got == want:
        return None
    return ProtocolIssue(I.TX_BYTES, evs[0], {"barrier": bar, "announced": want, "loaded": got},
                         tuple((e, f"load:{s}") for s, e in zip(sizes, got_evs))[:5])


def _undecided(counts: set[int], evs: list[Event], arrivers: set[int], init: Event, total: int) -> bool:
    """Phases the static count cannot judge; the concurrent simulation decides hangs and races.

    Roles that arrive different numbers of times (groups taking turns on alternate phases)
    cannot be paired by their k-th arrivals; a trailing phase that not every arriving role
    reaches (one group arrives one iteration later and has one arrival left over at the end)
    is never waited for.
    """
    if len(counts) > 1:
        return True
    return {e.role for e in evs} != arrivers and total <= (init.value or 0)
