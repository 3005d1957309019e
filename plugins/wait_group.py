"""Wait-group depth: `cp_async_wait<N>` keeps exactly the groups that may stay in flight.

`N` counts commit groups, not stages (attention commits K and V separately,
two groups per stage).  Too large an N lets compute read a slot whose copy is
still in flight; too small an N (the classic `cp_async_wait<0>` in the loop)
drains the pipeline every iteration and the copy/compute overlap is gone.
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import KernelCheck
from pipelint.cuda import ast as A
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import KernelModel
from pipelint.model.cpasync import Hazard
from pipelint.model.intrinsics import EventKind as K
from pipelint.model.intrinsics import HazardKind as H
from pipelint.model.placement import (
    after_in_loop,
    contains,
    point,
    statement_after,
    statement_before,
    statement_of,
    statement_path,
)
from pipelint.model.trace import Event


class WaitTooShallow(KernelCheck):
    """A read after a `cp_async_wait<N>` that leaves the group filling its slot in flight (or
    after no wait at all)."""

    rule = Rule(
        "wait-too-shallow", "WaitTooShallow",
        "cp.async wait leaves the group a read needs in flight",
        "A shared-memory read happens after `cp_async_wait<N>` but the commit group that fills "
        "the slot it reads is among the N newest groups the wait leaves in flight.",
        Severity.ERROR, "Lower N so the group holding this stage's data has completed "
        "(N = groups committed after it).", ("correctness", "cp.async"),
        rationale="`cp_async_wait<N>` counts commit groups, not stages. One group too many left in flight and "
                  "compute reads a tile that is still being copied: a race that passes most tests.")
    hazards = (H.RAW_INCOMPLETE,)
    analyses = ("cp_async",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self._at_wait(kernel, path, h) if h.wait is not None else self._no_wait(kernel, path, h)
                for h in self.hazards_in(kernel)]

    def _at_wait(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        assert h.wait is not None
        return self.finding(
            path, kernel, h.wait.node,
            f"cp_async_wait<{h.wait.value}> leaves {h.groups_in_flight} group(s) in flight, "
            f"including group {h.group} that fills {h.buffer} slot {h.slot}, which is read next "
            f"(iteration {h.second.where})",
            [(h.second.node, f"read of {h.buffer} slot {h.slot}"),
             (h.first.node, f"copy into {h.buffer} slot {h.slot} (group {h.group})")]
            + ([(h.commit.node, f"commit that closes group {h.group}")] if h.commit else []),
            help=_shallow_help(kernel, h))

    def _no_wait(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        return self.finding(
            path, kernel, h.second.node,
            f"{h.buffer} slot {h.slot} is read with no cp_async_wait covering group {h.group}",
            [(h.first.node, "the copy into this slot")],
            help=f"insert tl::cp_async_wait<0>(); and __syncthreads(); before line "
                 f"{statement_before(kernel.func, h.first.node, h.second.node).span.line}")


class WaitTooDeep(KernelCheck):
    """A steady-state wait that could keep more groups in flight (the wait-depth analysis)."""

    rule = Rule(
        "wait-too-deep", "WaitTooDeep",
        "cp.async wait in the pipelined loop waits for more groups than needed",
        "The steady-state `cp_async_wait<N>` could keep more groups in flight without any read "
        "seeing incomplete data; waiting deeper serialises copy and compute.",
        Severity.WARNING, "Raise N to the reported value (one group per stage in flight).",
        ("performance", "cp.async"),
        rationale="A wait that drains more groups than the reads need turns the pipeline back into "
                  "copy-then-compute; `cp_async_wait<0>` in the loop is the classic case: num_stages buys "
                  "shared memory and no overlap.")
    analyses = ("cp_async", "races", "mbarrier")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        out = []
        for ev, best in _wait_claims(kernel):
            if best is not None and ev.value is not None and best > ev.value:
                out.append(self.finding(
                    path, kernel, ev.node,
                    f"cp_async_wait<{ev.value}> in the pipelined loop drains more than needed: "
                    f"cp_async_wait<{best}> keeps every read safe and lets {best - ev.value} more "
                    f"group(s) overlap with compute",
                    help=f"change cp_async_wait<{ev.value}> to cp_async_wait<{best}> at line {ev.node.span.line}"))
        return out


class RedundantWait(KernelCheck):
    """A wait in the pipelined loop that orders no read, whatever its N."""

    rule = Rule(
        "redundant-wait", "RedundantWait",
        "cp.async wait orders no read",
        "No read after this `cp_async_wait<N>` depends on the groups it waits for, whatever N is: "
        "it follows another wait with no commit in between (it does nothing), or a later wait "
        "covers every read. Deepening it is not the fix; it can go.",
        Severity.WARNING, "Remove the wait.", ("performance", "cp.async"),
        rationale="A wait with no commit since the previous one waits for nothing new; advising a deeper N for "
                  "it would be wrong (every N is equally useless). It costs an instruction and hides which "
                  "wait actually guards the reads.")
    analyses = ("cp_async", "races", "mbarrier")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self.finding(
            path, kernel, ev.node,
            f"cp_async_wait<{ev.value}> in the pipelined loop orders no read: no commit since the "
            f"previous wait, or every read after it is covered by a later wait; remove it",
            help=f"remove the cp_async_wait<{ev.value}> at line {ev.node.span.line}")
            for ev, best in _wait_claims(kernel) if best is None]


class UncommittedCopy(KernelCheck):
    """A copy no commit puts in a group before it is read, waited for or the kernel ends; or a
    stage's copies merged into the next stage's group.  Each copy is reported once."""

    rule = Rule(
        "uncommitted-copy", "UncommittedCopy",
        "cp.async copy is never committed before its data is used",
        "A `cp_async_gs` is read (or the kernel ends) before any `cp_async_commit` puts it in a "
        "group, so no `cp_async_wait` can ever wait for it.",
        Severity.ERROR, "Add `tl::cp_async_commit()` after the copies of each stage.",
        ("correctness", "cp.async"),
        rationale="Only committed groups can be waited for; an uncommitted copy is never covered by any "
                  "`cp_async_wait`, so its data is read whenever it happens to arrive.")
    hazards = (H.RAW_UNCOMMITTED, H.EXIT_UNCOMMITTED, H.WAIT_UNCOMMITTED, H.GROUP_MERGED)
    analyses = ("cp_async",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        out, reported = [], set()
        for h in self.hazards_in(kernel):
            if id(h.first.node) in reported:
                continue
            reported.add(id(h.first.node))
            say = {H.WAIT_UNCOMMITTED: self._at_wait, H.GROUP_MERGED: self._merged}.get(h.kind, self._never)
            out.append(say(kernel, path, h))
        return out

    def _never(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        tail = ("it is read" if h.kind == H.RAW_UNCOMMITTED else "the kernel ends")
        wait = _next_wait(kernel, h.first)
        related = [(h.first.node, f"the uncommitted cp.async into {h.first.buffer}")]
        if h.kind == H.RAW_UNCOMMITTED:
            related.append((h.second.node, "read of the copied data"))
        return self.finding(
            path, kernel, h.first.node,
            f"missing cp_async_commit: cp.async into {h.first.buffer} at line {h.first.node.span.line} "
            f"(iteration {h.first.where}) is never committed before {tail}", related,
            help=_commit_help(kernel, h.first) + (" (after the copies, before the wait)"
                                                 if wait is not None else " (after the copies)"),
            at=_commit_spot(kernel, h.first))

    def _at_wait(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        assert h.wait is not None
        return self.finding(
            path, kernel, h.first.node,
            f"missing cp_async_commit: cp.async into {h.first.buffer} at line {h.first.node.span.line} "
            f"(iteration {h.first.where}) is still uncommitted when cp_async_wait<{h.wait.value}> at line "
            f"{h.wait.node.span.line} runs, and wait_group never waits for uncommitted copies; it is read "
            f"at line {h.second.node.span.line} (iteration {h.second.where}) before any wait completes it",
            [(h.first.node, f"the copy into {h.first.buffer}, not yet in a group"),
             (h.wait.node, "the wait that does not wait for it"),
             (h.second.node, "read of the copied data")],
            help=_commit_help(kernel, h.first) + " (after the copies)",
            at=_commit_spot(kernel, h.first))

    def _merged(self, kernel: KernelModel, path: str, h: Hazard) -> Finding:
        slot = kernel.slot(h.first)
        return self.finding(
            path, kernel, h.first.node,
            f"missing cp_async_commit: the copies into {h.first.buffer} slot {slot} (last at "
            f"line {h.first.node.span.line}) share commit group {h.group} with the next stage's copies, so "
            f"cp_async_wait<{h.wait.value if h.wait else '?'}> counts one group too few and the read at line "
            f"{h.second.node.span.line} (iteration {h.second.where}) finds them in flight",
            [(h.first.node, f"last copy into {h.first.buffer} slot {slot}")]
            + ([(h.commit.node, f"the commit that closes group {h.group}")] if h.commit else [])
            + ([(h.wait.node, "the wait that counts groups")] if h.wait else [])
            + [(h.second.node, "read of the copied data")],
            help=_commit_help(kernel, h.first, h.boundary) + f" (after the copies into {h.first.buffer} slot "
                                                 f"{slot})",
            at=_commit_spot(kernel, h.first, h.boundary))


class MissingDrain(KernelCheck):
    """Copies still in flight when their bytes are written again or the kernel ends."""

    rule = Rule(
        "missing-drain", "MissingDrain",
        "cp.async groups still in flight when their shared memory is reused or the kernel ends",
        "Copies in flight are not waited for before the same bytes are written synchronously or "
        "the kernel exits.",
        Severity.WARNING, "Add `tl::cp_async_wait<0>()` before reusing the memory.",
        ("correctness", "cp.async"),
        rationale="Async copies still in flight when the kernel exits or the bytes are reused write into "
                  "memory that now belongs to something else.")
    hazards = (H.DRAIN, H.EXIT_IN_FLIGHT)
    analyses = ("cp_async",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        out = []
        for h in self.hazards_in(kernel):
            what = "the kernel ends" if h.kind == H.EXIT_IN_FLIGHT else "the same bytes are written"
            out.append(self.finding(
                path, kernel, h.second.node,
                f"cp.async group {h.group} into {h.first.buffer} is still in flight when {what}",
                [(h.first.node, "the in-flight copy")],
                help=f"insert tl::cp_async_wait<0>(); before line {h.second.node.span.line}"))
        return out


CHECKS = (WaitTooShallow(), WaitTooDeep(), RedundantWait(), UncommittedCopy(), MissingDrain())
RULES = tuple(c.rule for c in CHECKS)


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[KernelCheck, ...]:
    return CHECKS


def _wait_claims(kernel: KernelModel) -> list[tuple[Event, int | None]]:
    """Each steady-state wait and the deepest N that keeps its reads safe (None: it orders no
    read), verified together with the barrier claims."""
    _, claims = kernel.cp_async.claims
    return [(kernel.cp_async.wait_depths[key][0], best) for key, best in claims.items()]


def _commit_spot(kernel: KernelModel, copy: Event, boundary: Event | None = None) -> A.Span:
    span, _ = _commit_place(kernel, copy, boundary)
    return span


def _commit_help(kernel: KernelModel, copy: Event, boundary: Event | None = None) -> str:
    span, before = _commit_place(kernel, copy, boundary)
    return f"insert tl::cp_async_commit(); {'before' if before else 'after'} line {span.line}"


def _commit_place(kernel: KernelModel, copy: Event, boundary: Event | None = None) -> tuple[A.Span, bool]:
    """Where the missing commit goes, and whether the span is the statement to insert *before*.

    A group that merges two stages (`boundary`: the first copy of the second one): before the
    statement holding that copy.  Otherwise after the copies: past the unrolled copy loops and
    the statements that only finish loading the stage (a barrier, plain stores into shared
    memory), before the first statement that reads, waits, commits or copies again; at the end
    of the pipelined loop's body when the iteration ends first (the next iteration's wait, round
    the back edge, does not see the copies)."""
    if boundary is not None and (boundary.node.span.line, boundary.node.span.column) > \
            (copy.node.span.line, copy.node.span.column):
        return point(statement_before(kernel.func, copy.node, boundary.node)), True
    # (a second stage that starts round the loop's back edge: the commit ends the first one's copies)
    last = copy
    for e in kernel.trace.after(copy):
        if e.kind in (K.COMMIT, K.WAIT):
            break
        if e.kind == K.CP_ASYNC and e.iteration == copy.iteration:
            last = e
    info = kernel.trace.loops.get(last.loop_id) if last.loop_id is not None else None
    loop = info.node if info is not None else _issuing_loop(kernel, last.node)
    stmt = _past_loading(kernel, after_in_loop(kernel.func, last.node, loop), loop)
    if stmt is not None:
        return point(stmt), True
    if loop is not None and isinstance(loop.body, A.Compound) and loop.body.body:
        s = loop.body.body[-1].span
        return A.Span(s.end_line, 1, s.end_line, 2), False
    return point(statement_of(kernel.func, last.node)), False


def _past_loading(kernel: KernelModel, stmt: A.Node | None, loop: A.For | None) -> A.Node | None:
    """The first statement from `stmt` on that does more than finish loading the stage; None
    when the loop's body (or the function) ends first."""
    while stmt is not None and _finishes_loading(kernel, stmt):
        nxt = statement_after(kernel.func, stmt)
        if nxt is None or (loop is not None and not contains(loop.body.span, nxt.span)):
            return None
        stmt = nxt
    return stmt


def _issuing_loop(kernel: KernelModel, node: A.Node) -> A.For | None:
    """The loop whose iterations issue a copy when the model walked it once (a loop without a wait
    or commit): the innermost enclosing loop that does more than copy."""
    loops: list[A.For] = []
    for block, i in statement_path(kernel.func, node):
        stmt = block.body[i]
        if isinstance(stmt, A.For):
            loops.append(stmt)
    for loop in reversed(loops):
        if isinstance(loop.body, A.Compound) and len(loop.body.body) > 1:
            return loop
    return None


def _finishes_loading(kernel: KernelModel, stmt: A.Node) -> bool:
    """A statement that only ends a stage's loading: barriers and plain stores into shared memory,
    no read of it, no copy, wait or commit."""
    if kernel.index.of(stmt) - {K.SYNC}:
        return False
    span = stmt.span
    inside = [e for e in kernel.trace.events[0] if contains(span, e.node.span)] if kernel.trace.events else []
    return bool(inside) and all(e.kind == K.SYNC or (e.kind == K.SMEM and e.access == "write") for e in inside)


def _next_wait(kernel: KernelModel, ev: Event) -> Event | None:
    """The first cp_async_wait its role executes after `ev`: where a missing commit belongs."""
    return next((e for e in kernel.trace.after(ev) if e.kind == K.WAIT), None)


def _dead_wait(kernel: KernelModel, h) -> tuple[A.Call, A.If] | None:
    """A `cp_async_wait` between the wait and the read in the text that the walk did not execute,
    under an `if` whose condition was false there: the wait the code meant to cover the read
    (TileLang's epilogue for a pipelined loop with a run-time start guards its `cp_async_wait<0>`
    with `(bool)0 & (bool)0`, or with `hi + k - lo < hi`)."""
    run = {id(ev.node) for ev in kernel.trace.all_events() if ev.kind == K.WAIT}
    lo, hi = h.wait.node.span.line, h.second.node.span.line
    assert kernel.func.body is not None
    for node in kernel.func.body.walk():
        if not isinstance(node, A.If) or not lo < node.span.line < hi:
            continue
        for call in node.then.walk():
            if isinstance(call, A.Call) and id(call) not in run and call.name == "tl::cp_async_wait":
                return call, node
    return None


def _shallow_help(kernel: KernelModel, h) -> str:
    """Change the wait to the deepest value that covers the read (from the wait-depth analysis),
    or take the wait a never-true condition skips."""
    dead = _dead_wait(kernel, h)
    if dead is not None:
        call, branch = dead
        return (f"the wait at line {call.span.line} would complete group {h.group}, but the `if` at line "
                f"{branch.span.line} around it is false on this path: make that wait unconditional")
    found = kernel.cp_async.wait_depths.get(id(h.wait.node))
    best = found[1] if found else None
    line = h.wait.node.span.line
    if best is not None and h.wait.value is not None and best < h.wait.value:
        return f"change cp_async_wait<{h.wait.value}> to cp_async_wait<{best}> at line {line}"
    return f"lower the N of cp_async_wait<{h.wait.value}> at line {line} until group {h.group} is complete"
