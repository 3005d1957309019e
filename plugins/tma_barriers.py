"""TMA and mbarrier protocol (sm_90+): arrivals, transaction bytes, parities, release.

Warp-specialized TileLang kernels hand stage slots between a TMA producer and
MMA consumers through two mbarriers per slot: "full" (the producer's
`expect_tx` plus the TMA bytes) and "empty" (the consumers' release
arrivals).  A wrong count, byte total or parity hangs the kernel or lets a
load race with the reads of the slot it overwrites.
"""
from __future__ import annotations

from dataclasses import replace
from typing import cast

from pipelint import hookimpl
from pipelint.checks import KernelCheck, make_finding
from pipelint.cuda import ast as A
from pipelint.findings import Finding, Rule, Severity
from pipelint.lowering.sweep import LoweredVariant
from pipelint.model import Event, KernelModel
from pipelint.model.intrinsics import EXPECT_KINDS
from pipelint.model.intrinsics import EventKind as K
from pipelint.model.intrinsics import HazardKind as H
from pipelint.model.intrinsics import IssueKind as I
from pipelint.model.mbarrier import ProtocolIssue
from pipelint.model.placement import after_in_loop, point, statement_after, statement_of


class _ProtocolCheck(KernelCheck):
    """A rule that reports the mbarrier protocol simulation's issues of its `hazards` kinds:
    `message` and `help` word one issue; `report` may move the finding to where the fix goes."""

    analyses = ("mbarrier",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        # a 2-CTA kernel's issues name the pair's roles (`model.cluster.ClusterPair`, which answers
        # what the messages ask of a kernel model)
        view = cast(KernelModel, kernel.mbarrier.view)
        return [self.report(view, path, i) for i in kernel.mbarrier.issues if i.kind in self.hazards]

    def report(self, kernel: KernelModel, path: str, issue: ProtocolIssue) -> Finding:
        related = [(e.node, _related(kernel, e, what)) for e, what in issue.related]
        return self.finding(path, kernel, issue.event.node, self.message(kernel, issue), related,
                            help=self.help(kernel, issue))

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        raise NotImplementedError

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        raise NotImplementedError


class ArrivalCount(_ProtocolCheck):
    """`init(n)` against the threads that arrive per phase."""

    rule = Rule(
        "mbarrier-arrival-count", "MBarrierArrivalCount",
        "mbarrier init count differs from the arrivals per phase",
        "`bar.init(n)` says how many arrivals complete a phase; the threads that arrive per use "
        "(one elected thread, or a whole warp group) do not add up to n, so phases complete "
        "early (race) or never (hang).",
        Severity.ERROR, "Initialise the barrier with the number of threads that arrive per phase.",
        ("correctness", "mbarrier"),
        rationale="A phase completes after exactly `init(n)` arrivals. If a whole warp group arrives where one "
                  "elected thread was expected (or the reverse), phases complete early (race) or never (hang).")
    hazards = (I.ARRIVAL_COUNT,)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, roles = issue.facts, kernel.roles
        who = "; ".join(f"{e.mult} of {roles[e.role]} at line {e.node.span.line}" for e, _ in issue.related)
        return (f"{_bar(f['barrier'])} is initialised for {f['init']} arrivals per phase, but "
                f"{f['arrivals']} threads arrive on it per use ({who})")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        return f"make init({f['init']}) of {_bar(f['barrier'])} count the {f['arrivals']} arriving threads"


class TxBytes(_ProtocolCheck):
    """The bytes `expect_tx` announces per phase against the bytes the TMA loads write; a note
    where the loads' bytes are not in the kernel text."""

    rule = Rule(
        "mbarrier-tx-bytes", "MBarrierTxBytes",
        "expect_tx bytes differ from the bytes the TMA loads deliver",
        "The transaction count announced with `expect_transaction`/`arrive_and_expect_tx` must "
        "equal the bytes of the TMA copies that signal the barrier in that phase.",
        Severity.ERROR, "Announce exactly the bytes of the TMA boxes loaded per stage.",
        ("correctness", "tma"),
        rationale="The full barrier's phase completes when the announced transaction bytes have landed. "
                  "Announcing fewer bytes than the TMA boxes deliver releases consumers before the tile is "
                  "complete; announcing more hangs.")
    hazards = (I.TX_BYTES,)

    def report(self, kernel: KernelModel, path: str, issue: ProtocolIssue) -> Finding:
        f = issue.facts
        related = [(e.node, _related(kernel, e, what)) for e, what in issue.related]
        return self.finding(path, kernel, issue.event.node, self.message(kernel, issue), related,
                            help=self.help(kernel, issue), severity=Severity.NOTE if f.get("unknown") else None,
                            at=point(statement_of(kernel.func, issue.event.node)) if f.get("missing") else None)

    def refine(self, finding: Finding, variant: LoweredVariant) -> Finding | None:
        """In `pipelint lower` the descriptors' boxes are known (`tma_box_bytes`): a byte count the
        kernel text could not check is checked against them; it goes when it holds, and is an
        error naming the boxes when it does not."""
        boxes, kernel = (variant.facts or {}).get("tma_box_bytes") or {}, variant.model
        issue = _unchecked(kernel, finding) if boxes and kernel is not None else None
        if issue is None:
            return finding
        want, loads = issue.facts["announced"], _phase_loads(kernel, issue.event)
        names = [n for ev in loads if (n := _descriptor(ev)) is not None and n in boxes]
        if not loads or len(names) != len(loads):
            return finding
        got = sum(boxes[n] * ev.mult for n, ev in zip(names, loads))
        if got == want:
            return None         # checked against the boxes: it holds
        line = issue.event.node.span.line
        return replace(finding, severity=self.rule.severity,
                       message=f"expect_tx on {_bar(issue.facts['barrier'])} announces {want} bytes"
                               f"{_calls(kernel, issue.event)} per phase, but the TMA loads that signal it write "
                               f"{got} bytes (the boxes of {', '.join(sorted(set(names)))}, from the lowering)",
                       help=f"announce {got} bytes in the expect_tx at line {line} (the bytes the TMA boxes deliver)")

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        if f.get("missing"):
            return (f"TMA loads signal {_bar(f['barrier'])}, but no expect_tx announces their bytes: the phase "
                    f"can complete before the data lands")
        if f.get("unknown"):
            announced = (f"{f['announced']} bytes{_calls(kernel, issue.event)}" if f.get("announced") is not None
                         else "a run-time byte count")
            seen = (f"; the reads after the phase (wgmma operands, per-thread loads) take {f['read']} bytes of "
                    f"what they write, no more than announced" if f.get("read") is not None else "")
            return (f"expect_tx on {_bar(f['barrier'])} announces {announced} per phase; the bytes its TMA loads "
                    f"write could not be checked (a descriptor's box is not in the kernel text and the loads do "
                    f"not tile a known slot){seen}")
        if f.get("read") is not None:
            return (f"expect_tx on {_bar(f['barrier'])} announces {f['announced']} bytes{_calls(kernel, issue.event)} "
                    f"per phase, but the reads after the phase (wgmma operands, per-thread loads) take "
                    f"{f['read']} bytes that only its TMA "
                    f"loads write: either fewer bytes are announced than land, or reads see bytes no load wrote")
        return (f"expect_tx on {_bar(f['barrier'])} announces {f['announced']} bytes{_calls(kernel, issue.event)} "
                f"per phase, but the TMA loads that signal it write {f['loaded']} bytes")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, line = issue.facts, issue.event.node.span.line
        if f.get("missing"):
            return (f"announce the loads' bytes with {_bar(f['barrier'], generic=True)}.arrive_and_expect_tx(BYTES) "
                    f"before the TMA load at line {line}")
        if f.get("unknown"):
            return ("nothing to change if the announced count is the bytes of the TMA boxes loaded per stage (each "
                    "box is the tensor map's box size times the element size); once checked, "
                    "`// pipelint: ignore[mbarrier-tx-bytes]` on the expect_tx line records it")
        if f.get("read") is not None:
            return (f"announce the bytes of the TMA boxes loaded per phase (at least the {f['read']} bytes read) "
                    f"in the expect_tx at line {line}")
        return f"announce {f['loaded']} bytes in the expect_tx at line {line} (the bytes the TMA loads write)"


class Deadlock(_ProtocolCheck):
    """A wait whose phase never completes; where no one arrives after reading the slot, the
    missing release is named and placed."""

    rule = Rule(
        "mbarrier-deadlock", "MBarrierDeadlock",
        "mbarrier wait can never complete",
        "Simulating the producer and consumer roles, a `wait(parity)` blocks forever: the parity "
        "is off by one phase (the producer's first wait on an empty slot must pass on the initial "
        "phase, `^ 1`), or nobody arrives on the barrier.",
        Severity.ERROR, "Flip the parity, or add the missing arrive.", ("correctness", "hang"),
        rationale="Parities encode which phase a wait expects. The producer's first wait on an empty slot must "
                  "pass on the initial phase (`^ 1`); an off-by-one parity or a missing arrive makes both "
                  "roles wait for each other forever.")
    hazards = (I.DEADLOCK,)

    def report(self, kernel: KernelModel, path: str, issue: ProtocolIssue) -> Finding:
        missing = _missing_release(kernel, issue.event) if issue.facts.get("never_arrived") else None
        if missing is None:
            return super().report(kernel, path, issue)
        reader, spot = missing
        who, slot = kernel.roles[reader.role], f"{reader.buffer} slot {kernel.slot(reader)}"
        related = [(issue.event.node, "the wait that hangs"), (reader.node, f"last read of {slot} by {who}")]
        related += [(e.node, _related(kernel, e, what)) for e, what in issue.related]
        return self.finding(
            path, kernel, issue.event.node,
            f"{who} never arrives on {_bar(issue.event.barrier)} after reading {slot}: " + self.message(kernel, issue),
            related, at=point(spot),
            help=(f"insert {_bar(issue.event.barrier, generic=True)}.arrive(); before line {spot.span.line} "
                  f"(after {who}'s last read of {reader.buffer})"))

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, roles = issue.facts, kernel.roles
        why = ("no thread ever arrives on it" if f["never_arrived"] else
               f"wait(parity {f['parity']}) needs phase {f['phase']} to complete, which needs {f['init']} "
               f"arrivals (it holds {f['holds']}), and every role that could arrive is blocked")
        if f.get("neutral") is not None:
            why += (f"; the cp.async arrival at line {f['neutral']} has no .noinc, so it raises the count it "
                    f"arrives on (no net arrival): use tl::mbarrier_cp_async_arrive_noinc")
        return (f"{roles[f['role']]} hangs in wait on {_bar(f['barrier'])} (parity {f['parity']}, "
                f"iteration {issue.event.where}): {why}")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, line = issue.facts, issue.event.node.span.line
        return (f"check the parity of the wait at line {line} (phase {f['phase']} completes with parity "
                f"{f['phase'] & 1}) and that every role arrives on {_bar(f['barrier'])} once per phase")


class PhaseOverrun(_ProtocolCheck):
    """A parity wait whose barrier can complete the next phase before the wait runs."""

    rule = Rule(
        "mbarrier-phase-overrun", "MBarrierPhaseOverrun",
        "mbarrier can run a phase past a parity wait",
        "A `wait(parity)` observed phase P of a barrier, but no event that completes phase P + 1 "
        "is ordered after the waiting role reaches the wait: the other roles can complete P + 1 "
        "first. The parity then names the current, incomplete phase, so the wait blocks until "
        "P + 2 (a hang when that phase needs the waiting role) or returns a phase late.",
        Severity.WARNING, "Make each phase of the barrier depend on the waiting role's progress: arrive "
                        "on the slot this role consumed, and wait on the barrier of the slot it fills.",
        ("correctness", "hang", "mbarrier"),
        rationale="`try_wait.parity` tells only the current phase from the one before it. A protocol is "
                  "sound when a barrier cannot get two phases ahead of any role that waits on it, which holds "
                  "when every phase after the one a role waits for needs that role's own arrival or release. "
                  "An off-by-one slot in a release or in a producer's wait breaks that chain, and whether the "
                  "kernel hangs then depends on the schedule.")
    hazards = (I.PHASE_OVERRUN,)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        who, phase = kernel.roles[f["role"]], f["phase"]
        by = ", ".join(f"line {e.node.span.line}" for e, _ in issue.related) or "the other roles"
        seen = "passes on the barrier's initial phase" if phase < 0 else f"observes phase {phase} complete"
        return (f"{who} waits on {_bar(f['barrier'])} with parity {f['parity']} (iteration {issue.event.where}) "
                f"and {seen}, but phase {phase + 1} can complete before this wait runs: none of the events "
                f"that complete it ({by}) is ordered after {who} reaches the wait. The wait then blocks "
                f"until phase {phase + 2} completes: a hang if that phase needs {who}, else it returns a phase late")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        return (f"check which slot the wait at line {issue.event.node.span.line} and the arrivals on "
                f"{_bar(f['barrier'], generic=True)} index: each phase of {_bar(f['barrier'])} after the one this "
                f"role waits for must need this role's own arrival or release (the slot it consumed, or the "
                f"slot it fills)")


class ReadBeforeWait(_ProtocolCheck):
    """A read of a TMA-loaded slot before the wait on the phase its load completes."""

    rule = Rule(
        "tma-read-before-wait", "TmaReadBeforeWait",
        "Shared memory read before the TMA load into it is waited for",
        "A slot written by a TMA load is read before a wait that observed the mbarrier phase the "
        "load completes.",
        Severity.ERROR, "Wait on the slot's full barrier with the right parity before reading.",
        ("correctness", "tma"),
        rationale="TMA writes shared memory asynchronously; only a wait that observed the phase the load "
                  "completes makes the tile safe to read.")
    hazards = (I.RAW,)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        where = f"{kernel.roles[f['role']]} reads {f['buffer']} slot {f['slot']}"
        if f.get("never_loaded"):
            return f"{where} before any TMA load into it has been issued, let alone waited for"
        return (f"{where} before waiting for phase {f['phase']} of {_bar(f['barrier'])}, which the TMA load "
                f"into it completes")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        return (f"wait on the barrier the TMA load into {issue.facts['buffer']} signals before the read at line "
                f"{issue.event.node.span.line}")


class Release(_ProtocolCheck):
    """A TMA load that overwrites a slot its readers have not released; the release is placed
    after the reader's last read where that read is known."""

    rule = Rule(
        "mbarrier-release", "MBarrierRelease",
        "TMA load overwrites a slot its readers have not released",
        "Before the producer reuses a slot, every consumer must arrive on the slot's empty "
        "barrier after its last read, and the producer must wait for that phase.",
        Severity.ERROR, "Arrive on the empty barrier after the last read; wait on it before the "
        "next load into the slot.", ("correctness", "tma"),
        rationale="In a warp-specialized pipeline the consumers' arrive on the empty barrier is the only thing "
                  "that tells the producer a slot can be overwritten.")
    hazards = (I.WAR_UNRELEASED, I.WAR_UNOBSERVED, I.WAR_UNCONSUMED)

    def report(self, kernel: KernelModel, path: str, issue: ProtocolIssue) -> Finding:
        read = next((e for e, what in issue.related if what in ("released-read", "read")), None) \
            if issue.kind != I.WAR_UNCONSUMED else None
        release_at = _release_spot(kernel, read) if read is not None else None
        if read is None or release_at is None:
            return super().report(kernel, path, issue)
        if read.committed:
            early = _before_completion(kernel, read)
            if early is not None:
                return self._in_flight(kernel, path, issue, read, *early)
        if issue.facts.get("wgmma_in_flight"):
            return self._unretired(kernel, path, issue, read)
        f = issue.facts
        related = [(issue.event.node, "the TMA load that overwrites the slot")]
        related += [(e.node, _related(kernel, e, what)) for e, what in issue.related]
        return self.finding(
            path, kernel, issue.event.node, self.message(kernel, issue), related, at=point(release_at),
            help=(f"release {f['buffer']} slot {f['slot']} only after {kernel.roles[read.role]}'s last read of it "
                  f"(line {read.node.span.line}): its arrive goes before line {release_at.span.line}"))

    def _in_flight(self, kernel: KernelModel, path: str, issue: ProtocolIssue, read: Event,
                   commit: Event, release: Event) -> Finding:
        """A slot released while the tcgen05 MMA reading it may still run: reported at the release,
        which must wait for the phase the MMAs' commit arrives on."""
        f = issue.facts
        related = [(issue.event.node, "the TMA load that overwrites the slot"), (read.node, "the tcgen05 MMA's read"),
                   (commit.node, "the tcgen05.commit that arrives when the MMAs complete")]
        return self.finding(
            path, kernel, release.node,
            f"{kernel.roles[read.role]} release {f['buffer']} slot {f['slot']} before the tcgen05 MMA at line "
            f"{read.node.span.line} has read it: the MMAs run asynchronously until the phase their "
            f"tcgen05.commit (line {commit.node.span.line}) arrives on {_bar(commit.barrier)}, and nothing "
            f"orders this arrival after that phase, so the TMA load at line {issue.event.node.span.line} may "
            f"overwrite the operands", related,
            help=f"wait on {_bar(commit.barrier)} (the commit's phase) before this arrive")

    def _unretired(self, kernel: KernelModel, path: str, issue: ProtocolIssue, read: Event) -> Finding:
        """A slot released while the wgmma reading it may still run: no `warpgroup_wait` retires
        its commit group before the arrival (or at all), so the arrival frees operands the tensor
        cores are still reading.  Reported at the arrival after the read."""
        f = issue.facts
        arrive, commit = _next_of(kernel, read, K.MBAR_ARRIVE), _next_of(kernel, read, K.WGMMA_COMMIT)
        related = [(issue.event.node, "the TMA load that overwrites the slot"), (read.node, "the wgmma's read")]
        if commit is not None:
            related.append((commit.node, "the commit of its group"))
        where = f"the arrival at line {arrive.node.span.line}" if arrive is not None else "its release"
        late = _next_of(kernel, read, K.WGMMA_WAIT, arrive.node.span.line if arrive is not None else 0)
        if late is not None:
            related.append((late.node, "the wait that retires the group, after the arrival"))
        retired = (f"the warpgroup_wait at line {late.node.span.line} retires it only after the arrival"
                   if late is not None else "none does before the arrival")
        spot, fix = _wait_spot(kernel, commit if late is None else None, where)
        return self.finding(
            path, kernel, (arrive or read).node,
            f"{kernel.roles[read.role]} release {f['buffer']} slot {f['slot']} ({where}) while the wgmma at line "
            f"{read.node.span.line} may still read it: a wgmma reads its operands asynchronously until a "
            f"warpgroup_wait retires its commit group, and {retired}, so the TMA load "
            f"at line {issue.event.node.span.line} may overwrite the operands", related,
            help=fix, at=point(spot) if spot is not None else None)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, ev, roles = issue.facts, issue.event, kernel.roles
        if issue.kind == I.WAR_UNCONSUMED:
            prev = issue.related[0][0]
            return (f"TMA load overwrites {f['buffer']} slot {f['slot']} (iteration {ev.where}) before anyone "
                    f"read the data loaded there at iteration {prev.where}")
        if issue.kind == I.WAR_UNRELEASED:
            return (f"TMA load overwrites {f['buffer']} slot {f['slot']} while {roles[f['reader_role']]} may "
                    f"still read it: the reader never arrives on a release barrier after its read")
        what = (f"phase {f['phase']} of {_bar(f['barrier'])}" if f.get("barrier") else "the barrier after the read")
        return (f"TMA load overwrites {f['buffer']} slot {f['slot']} before {roles[f['role']]} observed "
                f"{what}, in which the readers of the old contents release it")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        return (f"before the TMA load at line {issue.event.node.span.line}, wait on the barrier the readers of "
                f"{f['buffer']} slot {f['slot']} arrive on after their last read")


class LoadUnwaited(_ProtocolCheck):
    """A TMA load whose completion nobody observes before its bytes are stored over, or at all."""

    rule = Rule(
        "tma-load-unwaited", "TmaLoadUnwaited",
        "TMA load still landing when its slot is stored into, or never waited for",
        "A TMA load writes its slot until the mbarrier phase it completes; a thread that stores into "
        "the slot without having observed that phase may have its bytes overwritten by the load, and a "
        "load whose phase no thread ever waits for may still be landing when the block exits.",
        Severity.ERROR, "Wait on the load's barrier before storing into its slot; issue no load the "
        "consumers never wait for (producer and consumer loops must run the same trips).",
        ("correctness", "tma"),
        rationale="When the producer's loop runs more iterations than the consumers', the last loads land "
                  "in shared memory nobody waits on: an epilogue that reuses the same bytes (a C tile "
                  "aliasing the A stages) is overwritten under it, and the block may exit with the copy in "
                  "flight.")
    hazards = (I.TMA_WAW, I.TMA_UNWAITED)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        if issue.kind == I.TMA_WAW:
            load = issue.related[0][0]
            if issue.event.kind == K.TMA_LOAD:
                return (f"{kernel.roles[f['role']]} issue a TMA load into {f['buffer']} (iteration "
                        f"{issue.event.where}) while the TMA load at line {load.node.span.line} (iteration "
                        f"{load.where}) into the same bytes may still be landing: they never observed phase "
                        f"{f['phase']} of {_bar(f['barrier'])}, which it completes, and two loads in flight "
                        f"land in any order")
            return (f"{kernel.roles[f['role']]} store into {f['buffer']} while the TMA load at line "
                    f"{load.node.span.line} (iteration {load.where}) into the same bytes may still be landing: "
                    f"they never observed phase {f['phase']} of {_bar(f['barrier'])}, which it completes")
        return (f"the TMA load into {f['buffer']} slot {f['slot']} (iteration {issue.event.where}) completes phase "
                f"{f['phase']} of {_bar(f['barrier'])}, which no thread ever waits for: its bytes may land after "
                f"the block reuses the slot or exits")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        if issue.kind == I.TMA_WAW:
            return f"wait on {_bar(issue.facts['barrier'])} before the store at line {issue.event.node.span.line}"
        return ("make the consumers wait for every load the producer issues (the same trip count), or do not "
                "issue this one")


class TmemOrder(_ProtocolCheck):
    """Tensor Memory between the MMAs that write an accumulator and the tcgen05_ld that read it."""

    rule = Rule(
        "tmem-order", "TmemOrder",
        "Tensor Memory read before its MMAs complete, or overwritten under a read",
        "A tcgen05 MMA writes its accumulator in Tensor Memory asynchronously: the columns hold the "
        "result only once the phase its tcgen05.commit arrives in has been observed. A tcgen05_ld "
        "before that reads a partial sum; an MMA into columns another role's tcgen05_ld may still "
        "read overwrites them under it.",
        Severity.ERROR, "Wait on the barrier the MMAs' tcgen05.commit arrives on before the tcgen05_ld; "
        "have the readers release the accumulator (an arrive the MMA issuer waits on) before the next MMAs "
        "into it.", ("correctness", "tcgen05"),
        rationale="tcgen05.mma and its accumulator are asynchronous (PTX ISA 9.7.16.6): issuing the MMA is not "
                  "finishing it, and only the commit's mbarrier arrival says the accumulator is final. Epilogue "
                  "warps that load it earlier, or a next tile's MMAs that start while they load it, give wrong "
                  "results without any shared-memory race a sanitizer sees.")
    hazards = (I.TMEM_RAW, I.TMEM_WAR)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, roles = issue.facts, kernel.roles
        tmem = (issue.event.buffer or "tmem:?").removeprefix("tmem:")
        if issue.kind == I.TMEM_WAR:
            read = issue.related[0][0]
            return (f"{roles[f['role']]} issue a tcgen05 MMA into the Tensor Memory of {tmem} (iteration "
                    f"{issue.event.where}) while {roles[f['reader_role']]}'s tcgen05_ld at line "
                    f"{read.node.span.line} may still read those columns: nothing orders that read before it")
        mma = issue.related[0][0]
        if f.get("committed") is False:
            return (f"{roles[f['role']]} read the Tensor Memory of {tmem} with tcgen05_ld while the MMA at line "
                    f"{mma.node.span.line} (iteration {mma.where}) that writes those columns is not yet covered by "
                    f"a tcgen05.commit: its result is not there yet")
        return (f"{roles[f['role']]} read the Tensor Memory of {tmem} with tcgen05_ld before observing phase "
                f"{f['phase']} of {_bar(f['barrier'])}, which the tcgen05.commit after the MMA at line "
                f"{mma.node.span.line} (iteration {mma.where}) arrives in when the MMAs complete")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        if issue.kind == I.TMEM_WAR:
            return ("have the tcgen05_ld's threads arrive on a barrier after the load and wait on it before the "
                    f"MMA at line {issue.event.node.span.line}")
        return f"wait on the commit's barrier before the tcgen05_ld at line {issue.event.node.span.line}"


class StoreFence(KernelCheck):
    """Each TMA store must follow a proxy fence that follows the generic writes it reads."""

    rule = Rule(
        "tma-store-fence", "TmaStoreFence",
        "TMA store reads shared memory written without fence_proxy_async",
        "Stores into shared memory by threads (st.shared, stmatrix) belong to the generic proxy; a "
        "TMA store reads through the async proxy and may see stale bytes unless a "
        "`fence.proxy.async` orders the two after the writes.", Severity.ERROR,
        "Emit `tl::fence_proxy_async()` after the writes (and the barrier that gathers them) and "
        "before `tl::tma_store`.", ("correctness", "tma"),
        rationale="The epilogue of a warp-specialized kernel gathers the tile in shared memory with ordinary "
                  "stores (stmatrix) and hands it to the TMA unit; without a proxy fence the async proxy may "
                  "read the tile before those stores are visible to it.")
    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return _store_fences(kernel, path)


class StoreWait(KernelCheck):
    """Shared memory a TMA store may still be reading: written over, or left at exit, before the
    issuing thread's `tma_store_wait` (`model.cpasync`, `H.WAR_BULK` / `H.EXIT_BULK`)."""

    rule = Rule(
        "tma-store-wait", "TmaStoreWait",
        "Shared memory reused or released while a TMA store may still read it",
        "`tl::tma_store` (cp.async.bulk) reads its shared-memory tile after the call returns, until "
        "`tl::tma_store_arrive()` has committed it and the issuing thread's `tl::tma_store_wait<N>()` "
        "has waited for that group. A store into the tile before then (the next tile's epilogue, by "
        "any thread, the issuing one included), or the end of the kernel, may change or free bytes "
        "the copy has not read yet.",
        Severity.ERROR, "Commit the stores (`tl::tma_store_arrive()`), wait for them "
        "(`tl::tma_store_wait<0>()`) in the issuing thread, and put a barrier between that wait and "
        "the other threads' next stores into the tile.", ("correctness", "tma"),
        rationale="A persistent kernel's epilogue reuses one shared tile for every output tile; without the "
                  "wait, the next tile's stmatrix can overwrite the rows the previous TMA store is still "
                  "sending to global memory, which corrupts the output only under some timings.")
    hazards = (H.WAR_BULK, H.EXIT_BULK)
    analyses = ("cp_async",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        out = []
        for h in kernel.cp_async.bulk_hazards:
            store = h.first
            if h.kind == H.EXIT_BULK:
                out.append(self.finding(
                    path, kernel, store.node,
                    f"the TMA store at line {store.node.span.line} may still be reading {h.buffer} when the "
                    f"kernel ends: no tl::tma_store_wait completes its group",
                    help=f"after line {store.node.span.line}: tl::tma_store_arrive(); tl::tma_store_wait<0>();"))
                continue
            out.append(self.finding(
                path, kernel, h.second.node,
                f"store into {h.buffer} at line {h.second.node.span.line} (iteration {h.second.where}) while the "
                f"TMA store at line {store.node.span.line} (iteration {store.where}) may still be reading it: no "
                f"tl::tma_store_wait of the issuing thread completes that store before it",
                [(store.node, f"TMA store reading {h.buffer}")],
                help=f"wait for the TMA store (tl::tma_store_wait<0>() after tl::tma_store_arrive()) and put a "
                     f"barrier before line {h.second.node.span.line}"))
        return out


class MmaFence(KernelCheck):
    """Each wgmma / tcgen05 MMA that reads a shared operand must follow a proxy fence that follows
    the generic writes of that operand."""

    rule = Rule(
        "mma-proxy-fence", "MmaProxyFence",
        "wgmma/tcgen05 MMA reads shared memory written without fence_proxy_async",
        "`wgmma.mma_async` and `tcgen05.mma` read their shared-memory operands through the async "
        "proxy. Operands written by threads with ordinary stores (st.shared, stmatrix, a register "
        "tile copied to shared memory) belong to the generic proxy; without a `fence.proxy.async` "
        "after those stores and before the MMA, the MMA may read stale bytes.",
        Severity.ERROR, "Emit `tl::fence_proxy_async()` after the stores into the operand (and the "
        "barrier that gathers them) and before the MMA, as TileLang does.", ("correctness", "tma"),
        rationale="A GEMM whose operand tile is produced by threads (a dequantised or rescaled tile, "
                  "attention's P tile) hands it from the generic proxy to the async proxy; TMA-filled "
                  "operands need no fence, thread-written ones do.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return _mma_fences(kernel, path)


class WgmmaCommit(KernelCheck):
    """A wgmma whose group no `warpgroup_commit_batch` closes before a `warpgroup_wait` (or the
    end of the kernel): the wait does not wait for it (`_wgmma_sync`)."""

    rule = Rule(
        "wgmma-commit", "WgmmaCommit",
        "warpgroup_wait does not wait for an uncommitted wgmma",
        "`wgmma.wait_group N` (`tl::warpgroup_wait<N>`, `tl::wait_wgmma<N>`) waits for committed "
        "wgmma groups only. A `wgmma.mma_async` issued after the last `wgmma.commit_group` "
        "(`tl::warpgroup_commit_batch`) is in no group: the wait returns while it may still read "
        "its shared-memory operands and write its accumulators, so a release of the operand's "
        "slot or a read of the accumulators after the wait races with it.",
        Severity.ERROR, "Emit `tl::warpgroup_commit_batch()` after the wgmmas and before the wait.",
        ("correctness", "wgmma"),
        rationale="The commit is what makes a batch of wgmmas waitable; without it a consumer releases a "
                  "TMA slot, or reads its accumulators, while the tensor cores are still working on them.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [f for f in _wgmma_sync(kernel, path) if f.rule == self.id]


class WgmmaFence(KernelCheck):
    """A wgmma with no `warpgroup_arrive` (wgmma.fence) before it since the kernel's start or the
    last `warpgroup_wait` (`_wgmma_sync`)."""

    rule = Rule(
        "wgmma-fence", "WgmmaFence",
        "wgmma issued without warpgroup_arrive (wgmma.fence) before it",
        "PTX requires `wgmma.fence` (`tl::warpgroup_arrive()`) before the first `wgmma.mma_async` of "
        "a warp group and between any access of the accumulator or A-fragment registers by the "
        "threads and a wgmma that uses them. After a `warpgroup_wait` the threads may read and write "
        "the accumulators, so the next wgmma needs a fence again; without it the wgmma may read "
        "registers before the threads' writes to them.",
        Severity.ERROR, "Emit `tl::warpgroup_arrive()` before each batch of wgmmas, as TileLang does.",
        ("correctness", "wgmma"),
        rationale="The fence orders the warp group's register accesses before the asynchronous MMA; "
                  "a missing one lets the MMA see stale accumulators (cleared, rescaled) or A fragments.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [f for f in _wgmma_sync(kernel, path) if f.rule == self.id]


class NotAnalyzed(_ProtocolCheck):
    """Barriers the protocol simulation does not check (cluster scope, an unmodelled callee)."""

    rule = Rule(
        "mbarrier-not-analyzed", "MBarrierNotAnalyzed",
        "mbarrier protocol shared across the CTAs of a cluster is not checked",
        "A 2-CTA pair (`cta_group::2`: remote `bar.arrive(cta_id)`, 2-SM TMA loads, multicast "
        "tcgen05 commits) is run as one protocol of both CTAs and checked like any other kernel. "
        "Multicast TMA loads (`tl::tma_load_multicast`), remote arrivals at a CTA the kernel text "
        "does not name as a constant, and barriers handed to a call pipelint does not model are "
        "not: pipelint assumes those barriers' counts, bytes and parities hold instead of guessing.",
        Severity.NOTE, "Nothing to fix: review cluster-scope barriers by hand or run "
        "compute-sanitizer synccheck.", ("coverage", "mbarrier"),
        rationale="Cluster kernels complete mbarrier phases from several CTAs; simulating one CTA would turn every "
                  "peer arrival into a false hang. Where the CTAs cannot be instantiated from the text, the note "
                  "records what was not checked instead of guessing.")
    hazards = (I.UNANALYZED,)

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        if f.get("opaque"):
            return (f"mbarrier {f['opaque']} is passed to {f['callee']}, which pipelint does not model: it may "
                    f"arrive on it or arm it, so its arrival counts, transaction bytes and phases are not checked")
        shared = (f"mbarriers {', '.join(f['cluster_barriers'])} are shared by the CTAs of the cluster (remote "
                  f"arrivals, 2-CTA commits or multicast TMA): their arrival counts and phases are not checked; "
                  if f.get("cluster_barriers") else "")
        why = f" ({f['why']}: the CTAs are not run as a pair)" if f.get("why") else ""
        return (f"cluster kernel{why}: {shared}transaction bytes are not balanced per CTA, since a CTA may "
                f"announce or receive its peer's TMA bytes")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        return "nothing to change: pipelint does not analyse these barriers"


class InitFence(_ProtocolCheck):
    """A barrier used before `fence_barrier_init` and a block barrier publish its init; the
    missing statement is placed after the last init (or after the fence)."""

    rule = Rule(
        "mbarrier-init-fence", "MBarrierInitFence",
        "mbarrier used before fence_barrier_init and a block barrier",
        "mbarrier initialisation must be made visible to the async proxy "
        "(`fence_barrier_init`) and to all threads (`__syncthreads`) before first use.",
        Severity.ERROR, "Emit `tl::fence_barrier_init(); __syncthreads();` after the inits.",
        ("correctness", "mbarrier"),
        rationale="mbarrier initialisation is a generic-proxy write; the TMA unit (async proxy) and the other "
                  "threads see it only after `fence_barrier_init` and a block barrier.")
    hazards = (I.INIT_FENCE,)

    def report(self, kernel: KernelModel, path: str, issue: ProtocolIssue) -> Finding:
        no_sync = issue.facts.get("missing") == "__syncthreads()"
        last = next((e for e, what in issue.related if what == "last-init"), None)
        anchor = last
        if no_sync and last is not None:        # the fence is there: the barrier goes after it
            anchor = next((e for e in kernel.trace.after(last) if e.kind == K.FENCE_INIT), last)
        fence_at = statement_after(kernel.func, anchor.node) if anchor is not None else None
        if fence_at is None or fence_at.span.line > issue.event.node.span.line:
            return super().report(kernel, path, issue)
        related = [(issue.event.node, "first use of the barrier")]
        related += [(e.node, _related(kernel, e, what)) for e, what in issue.related]
        help_line = (f"insert __syncthreads(); before line {fence_at.span.line} (after tl::fence_barrier_init())"
                     if no_sync else self.help(kernel, issue))
        return self.finding(path, kernel, issue.event.node, self.message(kernel, issue), related,
                            help=help_line, at=point(fence_at))

    def message(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f = issue.facts
        return (f"{_bar(f['barrier'])} is used before {f['missing']} makes the mbarrier initialisation "
                f"visible to all threads and to the async proxy")

    def help(self, kernel: KernelModel, issue: ProtocolIssue) -> str:
        f, line = issue.facts, issue.event.node.span.line
        if f["missing"] == "__syncthreads()":
            return f"insert __syncthreads(); after tl::fence_barrier_init(), before line {line}"
        return f"insert tl::{f['missing']}(); (then __syncthreads()) after the mbarrier inits, before line {line}"


CHECKS = (ArrivalCount(), TxBytes(), Deadlock(), PhaseOverrun(), ReadBeforeWait(), LoadUnwaited(), Release(),
          TmemOrder(), StoreFence(), StoreWait(), MmaFence(), WgmmaCommit(), WgmmaFence(), NotAnalyzed(), InitFence())
RULES = tuple(c.rule for c in CHECKS)
_R = {c.id: c.rule for c in CHECKS}


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[KernelCheck, ...]:
    return CHECKS


def _unchecked(kernel: KernelModel, finding: Finding) -> ProtocolIssue | None:
    """The protocol issue behind a `mbarrier-tx-bytes` note whose announced count is known but
    whose loads' bytes are not (None for any other finding)."""
    if finding.severity != Severity.NOTE:
        return None
    return next((i for i in kernel.mbarrier.issues if i.kind == I.TX_BYTES and i.facts.get("unknown")
                 and i.facts.get("announced") is not None and i.event.node.span.line == finding.location.line),
                None)


def _phase_key(ev: Event) -> tuple:
    return (tuple(v for _, v in ev.iteration), ev.barrier)


def _phase_loads(kernel: KernelModel, expect: Event) -> list[Event]:
    """The TMA loads that signal the barrier of an expect_tx in its phase (the same iteration)."""
    key = _phase_key(expect)
    return [ev for ev in kernel.trace.all_events()
            if ev.kind == K.TMA_LOAD and ev.barrier is not None and _phase_key(ev) == key]


def _descriptor(load: Event) -> str | None:
    """The tensor map a TMA load reads through (its first argument), by name."""
    args = getattr(load.node, "args", None)
    return getattr(args[0], "ident", None) if args else None


def _calls(kernel: KernelModel, expect: Event) -> str:
    """` (2 calls of 8192)` when the announced count is the sum of several expect_tx calls in
    the phase (the same barrier, the same iteration), else nothing."""
    key = (tuple(v for _, v in expect.iteration), expect.barrier)
    values = [ev.value * ev.mult for ev in kernel.trace.all_events()
              if ev.kind in EXPECT_KINDS and ev.barrier is not None and ev.value is not None
              and (tuple(v for _, v in ev.iteration), ev.barrier) == key]
    if len(values) < 2:
        return ""
    if len(set(values)) == 1:
        return f" ({len(values)} calls of {values[0]})"
    return f" ({' + '.join(map(str, values))})"


def _missing_release(kernel: KernelModel, wait: Event) -> tuple[Event, A.Node] | None:
    """For a wait on a barrier no one arrives on: the read whose release is missing, and where
    its arrive belongs.  The waiting role next overwrites slots (TMA loads, stores) until its
    next wait: the barrier guards all of them.  The other roles' last read of *any* of those
    slots in one iteration is what the barrier should release; the arrive goes after it, in
    the body of the reader's pipelined loop (out of the inner loops around the read)."""
    targets = set()
    for e in kernel.trace.after(wait):
        if e.kind == K.MBAR_WAIT:
            break                   # only what this wait guards: the writes before the next wait
        if e.buffer and e.access in ("async", "write"):
            targets.add((e.buffer, kernel.slot(e)))
    if not targets:
        return None
    reads = [e for role, evs in enumerate(kernel.trace.events) if role != wait.role for e in evs
             if e.access == "read" and (e.buffer, kernel.slot(e)) in targets]
    if not reads:
        return None
    first_it = reads[0].iteration
    last = [e for e in reads if e.iteration == first_it][-1]
    spot = _release_spot(kernel, last)
    return (last, spot) if spot is not None else None


def _before_completion(kernel: KernelModel, read: Event) -> tuple[Event, Event] | None:
    """For a tcgen05 MMA's read: its role's commit after it and the first arrival on another
    barrier that follows the commit before any wait on the commit's barrier (None if none)."""
    commit = None
    for e in kernel.trace.after(read):
        if commit is None:
            if e.kind == K.MMA_ARRIVE:
                commit = e
            continue
        if e.kind == K.MBAR_WAIT and e.barrier == commit.barrier:
            return None
        if e.kind in (K.MBAR_ARRIVE, K.MBAR_ARRIVE_EXPECT_TX) and e.barrier != commit.barrier:
            return commit, e
    return None


def _release_spot(kernel: KernelModel, read: Event) -> A.Node | None:
    """The statement before which the reader's release (arrive) goes: after the read (or after the
    completion wait of an asynchronous MMA that reads until then), in the body of the reader's
    pipelined loop."""
    anchor = read.node
    for e in kernel.trace.after(read):
        if e.kind in (K.MBAR_WAIT, K.MBAR_ARRIVE):
            break
        if e.kind == K.WGMMA_WAIT:
            anchor = e.node
            break
    loop = kernel.trace.loops.get(read.loop_id) if read.loop_id is not None else None
    return after_in_loop(kernel.func, anchor, loop.node if loop is not None else None) or \
        statement_after(kernel.func, anchor)


def _next_of(kernel: KernelModel, ev: Event, kind: K, below: int = 0) -> Event | None:
    """The first event of `kind` after `ev` in its role's trace, on a line below `below`."""
    return next((e for e in kernel.trace.after(ev) if e.kind == kind and e.node.span.line > below), None)


def _wait_spot(kernel: KernelModel, commit: Event | None, where: str) -> tuple[A.Node | None, str]:
    """Where the fix of a wgmma read still in flight at its slot's release goes, and its help: a
    wait after the group's commit where no wait retires it at all (`commit`), else the arrival
    moves after the wait that retires the group."""
    spot = statement_after(kernel.func, commit.node) if commit is not None else None
    if spot is None or commit is None:
        return None, "move the arrive after the warpgroup_wait that retires the group (or insert one before the arrive)"
    return spot, (f"insert tl::warpgroup_wait<0>() here, after the commit at line {commit.node.span.line} and "
                  f"before {where} (or a depth that leaves only later groups in flight)")


# ---------------------------------------------------------------- wording of the model's facts
def _bar(b, generic: bool = False) -> str:
    return f"{b[0]}[{b[1]}]" if b else ("mbarrier[...]" if generic else "?")


def _related(kernel: KernelModel, ev: Event, what: str) -> str:
    if what.startswith("load:"):
        return f"TMA load of {what[5:]} bytes into {ev.buffer}"
    return {
        "init": f"init({ev.value})",
        "last-init": "last mbarrier init",
        "arrival": f"arrival by {ev.mult} thread(s) of {kernel.roles[ev.role]}",
        "load": "the TMA load that writes this slot",
        "earlier-load": "the earlier load into this slot",
        "read": "the unreleased read",
        "released-read": "the read of the old contents",
        "tmem-read": "the tcgen05_ld that reads the columns",
        "tmem-write": "the MMA that writes the columns",
    }.get(what, what)


def _store_fences(kernel, path):
    """Each TMA store must follow a proxy fence that follows the generic writes it reads."""
    return _unfenced_async_reads(kernel, path, "tma-store-fence",
                                 lambda ev: "tl::tma_store" if ev.kind == K.TMA_STORE else None)


_MMA_PREFIXES = ("tl::wgmma_", "tl::tcgen05mma_")


def _mma_fences(kernel, path):
    """An MMA's read of a buffer the role wrote with generic-proxy stores since its last
    `fence_proxy_async` (the role's own writes: the stores every thread of the block makes before
    the warp roles split are in each role's trace)."""
    def mma(ev: Event) -> str | None:
        node = ev.node
        if ev.kind == K.SMEM and ev.access == "read" and isinstance(node, A.Call) \
                and node.name.startswith(_MMA_PREFIXES):
            return node.name
        return None

    return _unfenced_async_reads(kernel, path, "mma-proxy-fence", mma)


def _unfenced_async_reads(kernel, path, rule: str, reader) -> list[Finding]:
    """Per role, in program order: each async-proxy read (`reader(ev)` names its instruction, None
    for other events) of a buffer with generic-proxy writes of the role since its last
    `fence_proxy_async`, once per statement."""
    out, seen = [], set()
    for events in kernel.trace.events:
        unfenced: dict[str, Event] = {}
        for ev in events:
            if ev.kind == K.FENCE_PROXY:
                unfenced.clear()
                continue
            if ev.possible or not ev.buffer:
                continue
            if ev.kind == K.SMEM and ev.access == "write":
                unfenced[ev.buffer] = ev
                continue
            name = reader(ev) if ev.buffer in unfenced and id(ev.node) not in seen else None
            if name is None:
                continue
            seen.add(id(ev.node))
            write = unfenced[ev.buffer]
            out.append(make_finding(
                _R[rule], path, kernel, ev.node,
                f"{name} reads {ev.buffer} through the async proxy, but the generic-proxy writes into it "
                f"(line {write.node.span.line}) are not followed by fence_proxy_async",
                [(write.node, f"generic write into {ev.buffer}")],
                help=f"insert tl::fence_proxy_async(); before line "
                     f"{statement_of(kernel.func, ev.node).span.line} (after the writes into {ev.buffer} "
                     f"and the barrier that gathers them)"))
    return out


def _callee(node: A.Node, default: str) -> str:
    """The name a call statement calls (`tl::warpgroup_wait`), for messages."""
    return node.name if isinstance(node, A.Call) else default


def _is_wgmma(ev: Event) -> bool:
    return (ev.kind == K.SMEM and ev.access == "read" and not ev.retired and isinstance(ev.node, A.Call)
            and ev.node.name.startswith("tl::wgmma_"))


def _wgmma_sync(kernel, path):
    """Per role, in program order: each wgmma needs a `warpgroup_arrive` since the start or the
    last `warpgroup_wait` (wgmma-fence), and a `warpgroup_commit_batch` before the next wait and
    before the end (wgmma-commit).  Found once per statement; memoised on the model (both rules
    read it)."""
    memo = kernel.index.memo.setdefault("wgmma_sync", {})
    key = (path, id(kernel.trace))
    if key in memo and memo[key][0] is kernel.trace:
        return memo[key][1]
    out: list[Finding] = []
    seen: set[tuple] = set()
    for events in kernel.trace.events:
        fenced, waited = False, False
        open_: list[Event] = []
        for ev in events:
            if ev.kind == K.WGMMA_FENCE:
                fenced = True
            elif ev.kind == K.WGMMA_COMMIT:
                open_ = []
            elif ev.kind == K.WGMMA_WAIT:
                if open_ and _first(seen, "commit", ev):
                    out.append(_uncommitted_at_wait(kernel, path, ev, open_[0]))
                fenced, waited = False, True
            elif _is_wgmma(ev):
                open_.append(ev)
                if not fenced and _first(seen, "fence", ev):
                    out.append(_unfenced(kernel, path, ev, waited))
        if open_ and _first(seen, "end", open_[0]):
            out.append(_never_committed(kernel, path, open_[0]))
    memo[key] = (kernel.trace, out)
    return out


def _first(seen: set[tuple], what: str, ev: Event) -> bool:
    """Whether this is the first time `what` is found at `ev`'s statement (and remember it)."""
    key = (what, id(ev.node))
    if key in seen:
        return False
    seen.add(key)
    return True


def _uncommitted_at_wait(kernel, path, wait: Event, first: Event) -> Finding:
    return make_finding(
        _R["wgmma-commit"], path, kernel, wait.node,
        f"{_callee(wait.node, 'warpgroup_wait')} does not wait for the wgmma at line {first.node.span.line}: no "
        f"warpgroup_commit_batch closes its group before the wait, so it may still read "
        f"{first.buffer} and write its accumulators after it",
        [(first.node, "wgmma in no committed group")],
        help=f"insert tl::warpgroup_commit_batch(); before line {wait.node.span.line}")


def _unfenced(kernel, path, ev: Event, waited: bool) -> Finding:
    return make_finding(
        _R["wgmma-fence"], path, kernel, ev.node,
        f"{_callee(ev.node, 'the wgmma')} is issued with no tl::warpgroup_arrive() (wgmma.fence) since "
        f"{'the last warpgroup_wait' if waited else 'the start of the kernel'}: "
        f"the threads' accesses to its accumulator and fragment registers are not ordered before it",
        help=f"insert tl::warpgroup_arrive(); before line {statement_of(kernel.func, ev.node).span.line}")


def _never_committed(kernel, path, ev: Event) -> Finding:
    return make_finding(
        _R["wgmma-commit"], path, kernel, ev.node,
        f"the wgmma at line {ev.node.span.line} is never committed (warpgroup_commit_batch) nor waited "
        f"for: nothing orders its reads of {ev.buffer} and its accumulator writes before what follows",
        help="commit the batch (tl::warpgroup_commit_batch()) and wait for it (tl::warpgroup_wait<0>())")
