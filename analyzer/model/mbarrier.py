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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from .trace import Event

if TYPE_CHECKING:
    from .kernel import KernelModel

Barrier = tuple[str, int]
ARRIVE_KINDS = frozenset({"mbar_arrive", "mbar_arrive_expect_tx", "cp_async_arrive"})
EXPECT_KINDS = frozenset({"mbar_expect_tx", "mbar_arrive_expect_tx"})
USE_KINDS = frozenset({"mbar_wait", "mbar_arrive", "mbar_expect_tx", "mbar_arrive_expect_tx",
                       "tma_load", "cp_async_arrive"})


@dataclass(frozen=True, slots=True)
class ProtocolIssue:
    kind: str                 # arrival-count | tx-bytes | deadlock | raw | war-unreleased | war-unobserved | init-fence
    event: Event              # where to report
    message: str
    related: tuple[tuple[Event, str], ...] = ()

    @property
    def key(self) -> tuple:
        return (self.kind, id(self.event.node))


def bar_name(b: Optional[Barrier]) -> str:
    return f"{b[0]}[{b[1]}]" if b else "?"


@dataclass
class _Bar:
    init: Optional[int] = None
    arrivals: int = 0
    tx: int = 0
    completed: int = 0
    completed_at: Optional[tuple] = None   # (role, iteration) of the last completion


class MBarrierAnalysis:
    def __init__(self, model: "KernelModel") -> None:
        self.model = model

    @functools.cached_property
    def uses_mbarriers(self) -> bool:
        return bool(self.model.barriers) and any(
            ev.kind in USE_KINDS for ev in self.model.trace.all_events())

    @functools.cached_property
    def issues(self) -> list[ProtocolIssue]:
        if not self.uses_mbarriers:
            return []
        found: dict[tuple, ProtocolIssue] = {}
        for issue in self._counts() + self._init_fence() + self._simulate():
            found.setdefault(issue.key, issue)
        return list(found.values())

    # ---------------------------------------------------------------- static per-iteration counts
    def _inits(self) -> dict[Barrier, Event]:
        inits: dict[Barrier, Event] = {}
        for ev in self.model.trace.all_events():
            if ev.kind == "mbar_init" and ev.barrier and ev.value is not None:
                inits.setdefault(ev.barrier, ev)
        return inits

    @functools.cached_property
    def tma_targets(self) -> frozenset[str]:
        """Buffers only TMA loads write (plain stores would make a first read legitimate)."""
        tma = {ev.buffer for ev in self.model.trace.all_events() if ev.kind == "tma_load" and ev.buffer}
        plain = {ev.buffer for ev in self.model.trace.all_events()
                 if ev.kind in ("smem", "cp_async") and ev.access in ("write", "async") and ev.buffer}
        return frozenset(tma - plain)

    @functools.cached_property
    def tma_bytes(self) -> dict[int, Optional[int]]:
        """Bytes each TMA load writes (by event identity), from the slot layout.

        Loads into one slot partition it: each covers up to the next load's
        offset, the last up to the end of the slot.  The 1-D bulk form says
        its size itself.
        """
        sizes: dict[int, Optional[int]] = {}
        groups: dict[tuple, list[Event]] = {}
        for ev in self.model.trace.all_events():
            if ev.kind != "tma_load":
                continue
            if ev.value is not None:
                sizes[id(ev)] = ev.value
                continue
            rng = self.model.byte_range(ev)
            key = (ev.role, ev.iteration, rng)
            groups.setdefault(key, []).append(ev)
        for (_, _, rng), evs in groups.items():
            buf = self.model.buffers.get(evs[0].buffer or "")
            if rng is None or buf is None or rng[2] >= 1 << 40 or any(e.offset is None for e in evs):
                for e in evs:
                    sizes[id(e)] = None
                continue
            starts = sorted({buf.offset + (e.offset or 0) for e in evs})
            for e in evs:
                start = buf.offset + (e.offset or 0)
                later = [s for s in starts if s > start]
                sizes[id(e)] = (later[0] if later else rng[2]) - start
        return sizes

    def _counts(self) -> list[ProtocolIssue]:
        inits = self._inits()
        arrivals: dict[tuple, list[Event]] = {}
        expected: dict[tuple, list[Event]] = {}
        loads: dict[tuple, list[Event]] = {}
        for ev in self.model.trace.all_events():
            if ev.barrier is None:
                continue
            key = (tuple(v for _, v in ev.iteration), ev.barrier)
            if ev.kind in ARRIVE_KINDS:
                arrivals.setdefault(key, []).append(ev)
            if ev.kind in EXPECT_KINDS:
                expected.setdefault(key, []).append(ev)
            if ev.kind == "tma_load":
                loads.setdefault(key, []).append(ev)
        issues = []
        for (_, bar), evs in arrivals.items():
            init = inits.get(bar)
            total = sum(e.mult for e in evs)
            if init is not None and init.value != total:
                issues.append(ProtocolIssue(
                    "arrival-count", init,
                    f"{bar_name(bar)} is initialised for {init.value} arrivals per phase, but "
                    f"{total} threads arrive on it per use ({_who(self.model, evs)})",
                    tuple((e, f"arrival by {e.mult} thread(s) of {self.model.roles[e.role]}") for e in evs[:3])))
        for (it, bar), evs in expected.items():
            want = sum((e.value or 0) * e.mult for e in evs)
            got_evs = loads.get((it, bar), [])
            sizes = [self.tma_bytes.get(id(e)) for e in got_evs]
            if not got_evs or None in sizes or any(e.value is None for e in evs):
                continue
            got = sum(s * e.mult for s, e in zip(sizes, got_evs))
            if got != want:
                issues.append(ProtocolIssue(
                    "tx-bytes", evs[0],
                    f"expect_tx on {bar_name(bar)} announces {want} bytes per phase, but the TMA loads "
                    f"that signal it write {got} bytes",
                    tuple((e, f"TMA load of {s} bytes into {e.buffer}") for s, e in zip(sizes, got_evs))[:5]))
        return issues

    def _init_fence(self) -> list[ProtocolIssue]:
        events = self.model.trace.events[0] if self.model.trace.events else []
        last_init = None
        fenced = synced = False
        for ev in events:
            if ev.kind == "mbar_init":
                last_init, fenced, synced = ev, False, False
            elif ev.kind == "fence_init" and last_init is not None:
                fenced = True
            elif ev.kind == "sync" and last_init is not None and fenced:
                synced = True
            elif ev.kind in USE_KINDS and last_init is not None:
                if not (fenced and synced):
                    missing = "tl::fence_barrier_init()" if not fenced else "__syncthreads()"
                    return [ProtocolIssue(
                        "init-fence", ev,
                        f"{bar_name(ev.barrier)} is used before {missing} makes the mbarrier "
                        f"initialisation visible to all threads and to the async proxy",
                        ((last_init, "last mbarrier init"),))]
                return []
        return []

    # ---------------------------------------------------------------- concurrent simulation
    def _simulate(self) -> list[ProtocolIssue]:
        model = self.model
        tx_known = not any(i.kind == "tx-bytes" for i in self._counts()) and all(
            v is not None for v in self.tma_bytes.values())
        traces = model.trace.events
        bars: dict[Barrier, _Bar] = {}
        observed: list[dict[Barrier, int]] = [dict() for _ in traces]
        pcs = [0] * len(traces)
        arrived = [0] * len(traces)       # block barriers reached, for the rendezvous
        waiting = [False] * len(traces)
        ranges: dict[tuple, dict] = {}
        issues: list[ProtocolIssue] = []

        def complete(bar: Barrier, ev: Event) -> None:
            st = bars[bar]
            while st.init and st.arrivals >= st.init and (st.tx <= 0 or not tx_known):
                st.arrivals -= st.init
                st.completed += 1
                st.tx = 0
                st.completed_at = (ev.role, ev.iteration)

        def step(r: int, ev: Event) -> bool:
            b = ev.barrier
            st = bars.setdefault(b, _Bar()) if b else None
            if ev.kind == "mbar_init" and st is not None:
                st.init = ev.value
            elif ev.kind in ARRIVE_KINDS and st is not None:
                for info in ranges.values():
                    for reader in info["readers"]:
                        if reader["role"] == r and reader["release"] is None:
                            reader["release"] = (b, st.completed)
                if ev.kind == "mbar_arrive_expect_tx":
                    st.tx += (ev.value or 0) * ev.mult
                st.arrivals += ev.mult
                complete(b, ev)
            elif ev.kind == "mbar_expect_tx" and st is not None:
                st.tx += (ev.value or 0) * ev.mult
            elif ev.kind == "mbar_wait" and st is not None:
                if ev.value is None:
                    return True
                if (st.completed & 1) == ev.value:
                    return False
                observed[r][b] = max(observed[r].get(b, -1), st.completed - 1)
            elif ev.kind == "sync":
                if not waiting[r]:
                    arrived[r] += 1
                    waiting[r] = True
                if any(arrived[o] < arrived[r] and pcs[o] < len(traces[o]) for o in range(len(traces))):
                    return False
                waiting[r] = False
                for info in ranges.values():
                    for reader in info["readers"]:
                        reader["release"] = ("sync", 0)
            elif ev.kind == "tma_load" and st is not None:
                # Without byte counts the phase completes at the arrive; loads the
                # same thread issues after it in the same iteration still count
                # towards that phase (the hardware holds it open for their bytes).
                late = not tx_known and st.completed_at == (r, ev.iteration)
                self._tma_write(r, ev, st.completed - (1 if late else 0), ranges, observed, issues)
                size = self.tma_bytes.get(id(ev))
                if tx_known and size is not None:
                    st.tx -= size * ev.mult
                    complete(b, ev)
            elif ev.kind == "smem" and ev.access == "read":
                rng = model.byte_range(ev)
                info = ranges.get(rng) if rng else None
                if info is None and rng is not None and ev.buffer in self.tma_targets:
                    issues.append(ProtocolIssue(
                        "raw", ev,
                        f"{model.roles[r]} reads {ev.buffer} slot {model.slot(ev)} before any TMA load "
                        f"into it has been issued, let alone waited for"))
                if info is not None:
                    for wb, phase, wev in info["writes"].values():
                        if observed[r].get(wb, -1) < phase:
                            issues.append(ProtocolIssue(
                                "raw", ev,
                                f"{model.roles[r]} reads {ev.buffer} slot {model.slot(ev)} before waiting "
                                f"for phase {phase} of {bar_name(wb)}, which the TMA load into it completes",
                                ((wev, "the TMA load that writes this slot"),)))
                            break
                    info["readers"].append({"role": r, "event": ev, "release": None})
            return True

        guard = 0
        while any(pc < len(t) for pc, t in zip(pcs, traces)) and guard < 10_000_000:
            progress = False
            for r, trace in enumerate(traces):
                while pcs[r] < len(trace):
                    guard += 1
                    if not step(r, trace[pcs[r]]):
                        break
                    pcs[r] += 1
                    progress = True
            if not progress:
                issues.extend(self._deadlock(traces, pcs, bars))
                break
        return issues

    def _tma_write(self, r: int, ev: Event, phase: int, ranges: dict, observed: list, issues: list) -> None:
        """Record a TMA write; loads of one iteration into one slot form one generation."""
        model = self.model
        rng = model.byte_range(ev)
        if rng is None:
            return
        old = ranges.get(rng)
        context = (r, ev.iteration)
        if old is not None and old["context"] == context:
            old["writes"][ev.offset] = (ev.barrier, phase, ev)
            return
        where = f"{ev.buffer} slot {model.slot(ev)}"
        if old is not None:
            if not old["readers"] and any(w[2].node is ev.node for w in old["writes"].values()):
                prev = next(iter(old["writes"].values()))[2]
                issues.append(ProtocolIssue(
                    "war-unconsumed", ev,
                    f"TMA load overwrites {where} (iteration {ev.where}) before anyone read the "
                    f"data loaded there at iteration {prev.where}",
                    ((prev, "the earlier load into this slot"),)))
            for reader in old["readers"]:
                rel = reader["release"]
                rev = reader["event"]
                if rel is None:
                    issues.append(ProtocolIssue(
                        "war-unreleased", ev,
                        f"TMA load overwrites {where} while {model.roles[reader['role']]} may still read "
                        f"it: the reader never arrives on a release barrier after its read",
                        ((rev, "the unreleased read"),)))
                elif rel[0] != "sync" and observed[r].get(rel[0], -1) < rel[1]:
                    issues.append(ProtocolIssue(
                        "war-unobserved", ev,
                        f"TMA load overwrites {where} before {model.roles[r]} observed phase {rel[1]} "
                        f"of {bar_name(rel[0])}, in which the readers of the old contents release it",
                        ((rev, "the read of the old contents"),)))
        ranges[rng] = {"writes": {ev.offset: (ev.barrier, phase, ev)}, "readers": [], "context": context}

    def _deadlock(self, traces, pcs, bars) -> list[ProtocolIssue]:
        issues = []
        arrivers = {ev.barrier for t in traces for ev in t if ev.kind in ARRIVE_KINDS}
        for r, trace in enumerate(traces):
            if pcs[r] >= len(trace):
                continue
            ev = trace[pcs[r]]
            if ev.kind != "mbar_wait":
                continue
            st = bars.get(ev.barrier, _Bar())
            why = ("no thread ever arrives on it" if ev.barrier not in arrivers else
                   f"wait(parity {ev.value}) needs phase {st.completed} to complete, which needs {st.init} "
                   f"arrivals (it holds {st.arrivals}), and every role that could arrive is blocked")
            related = [(e, f"init({e.value})") for e in self._inits().values() if e.barrier == ev.barrier]
            related += [(e, f"arrive by {e.mult} thread(s) of {self.model.roles[e.role]}")
                        for e in _first_per_node(t for t in traces for t in t)
                        if e.kind in ARRIVE_KINDS and e.barrier == ev.barrier][:2]
            issues.append(ProtocolIssue(
                "deadlock", ev,
                f"{self.model.roles[r]} hangs in wait on {bar_name(ev.barrier)} "
                f"(parity {ev.value}, iteration {ev.where}): {why}", tuple(related)))
        return issues


def _first_per_node(events):
    seen = set()
    for e in events:
        if id(e.node) not in seen:
            seen.add(id(e.node))
            yield e



def _who(model: "KernelModel", evs: list[Event]) -> str:
    return "; ".join(f"{e.mult} of {model.roles[e.role]} at line {e.node.span.line}" for e in evs[:3])
