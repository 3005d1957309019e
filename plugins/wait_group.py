"""Wait-group depth: `cp_async_wait<N>` keeps exactly the groups that may stay in flight.

`N` counts commit groups, not stages (attention commits K and V separately,
two groups per stage).  Too large an N lets compute read a slot whose copy is
still in flight; too small an N (the classic `cp_async_wait<0>` in the loop)
drains the pipeline every iteration and the copy/compute overlap is gone.
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import hazards_for, make_finding, rules_by_id
from pipelint.cuda import ast as A
from pipelint.cuda.parser import ParsedFile
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import KernelModel
from pipelint.model.intrinsics import EventKind as K
from pipelint.model.intrinsics import HazardKind as H
from pipelint.model.placement import point, statement_after, statement_before, statement_of
from pipelint.model.trace import Event

RULES = (
    Rule("wait-too-shallow", "WaitTooShallow",
         "cp.async wait leaves the group a read needs in flight",
         "A shared-memory read happens after `cp_async_wait<N>` but the commit group that fills "
         "the slot it reads is among the N newest groups the wait leaves in flight.",
         Severity.ERROR, "Lower N so the group holding this stage's data has completed "
         "(N = groups committed after it).", ("correctness", "cp.async"),
         rationale="`cp_async_wait<N>` counts commit groups, not stages. One group too many left in flight and "
                   "compute reads a tile that is still being copied: a race that passes most tests."),
    Rule("wait-too-deep", "WaitTooDeep",
         "cp.async wait in the pipelined loop waits for more groups than needed",
         "The steady-state `cp_async_wait<N>` could keep more groups in flight without any read "
         "seeing incomplete data; waiting deeper serialises copy and compute.",
         Severity.WARNING, "Raise N to the reported value (one group per stage in flight).",
         ("performance", "cp.async"),
         rationale="A wait that drains more groups than the reads need turns the pipeline back into "
                   "copy-then-compute; `cp_async_wait<0>` in the loop is the classic case: num_stages buys "
                   "shared memory and no overlap."),
    Rule("redundant-wait", "RedundantWait",
         "cp.async wait orders no read",
         "No read after this `cp_async_wait<N>` depends on the groups it waits for, whatever N is: "
         "it follows another wait with no commit in between (it does nothing), or a later wait "
         "covers every read. Deepening it is not the fix; it can go.",
         Severity.WARNING, "Remove the wait.", ("performance", "cp.async"),
         rationale="A wait with no commit since the previous one waits for nothing new; advising a deeper N for "
                   "it would be wrong (every N is equally useless). It costs an instruction and hides which "
                   "wait actually guards the reads."),
    Rule("uncommitted-copy", "UncommittedCopy",
         "cp.async copy is never committed before its data is used",
         "A `cp_async_gs` is read (or the kernel ends) before any `cp_async_commit` puts it in a "
         "group, so no `cp_async_wait` can ever wait for it.",
         Severity.ERROR, "Add `tl::cp_async_commit()` after the copies of each stage.",
         ("correctness", "cp.async"),
         rationale="Only committed groups can be waited for; an uncommitted copy is never covered by any "
                   "`cp_async_wait`, so its data is read whenever it happens to arrive."),
    Rule("missing-drain", "MissingDrain",
         "cp.async groups still in flight when their shared memory is reused or the kernel ends",
         "Copies in flight are not waited for before the same bytes are written synchronously or "
         "the kernel exits.",
         Severity.WARNING, "Add `tl::cp_async_wait<0>()` before reusing the memory.",
         ("correctness", "cp.async"),
         rationale="Async copies still in flight when the kernel exits or the bytes are reused write into "
                   "memory that now belongs to something else."),
)
_R = rules_by_id(RULES)


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_check_kernel(kernel: KernelModel, parsed: ParsedFile, path: str) -> list[Finding]:
    out = []
    uncommitted_reported = set()
    for h in hazards_for(kernel, RULES):
        if h.kind == H.RAW_INCOMPLETE and h.wait is not None:
            out.append(make_finding(
                _R["wait-too-shallow"], path, kernel, h.wait.node,
                f"cp_async_wait<{h.wait.value}> leaves {h.groups_in_flight} group(s) in flight, "
                f"including group {h.group} that fills {h.buffer} slot {h.slot}, which is read next "
                f"(iteration {h.second.where})",
                [(h.second.node, f"read of {h.buffer} slot {h.slot}"),
                 (h.first.node, f"copy into {h.buffer} slot {h.slot} (group {h.group})")]
                + ([(h.commit.node, f"commit that closes group {h.group}")] if h.commit else []),
                help=_shallow_help(kernel, h)))
        elif h.kind == H.RAW_INCOMPLETE:
            out.append(make_finding(
                _R["wait-too-shallow"], path, kernel, h.second.node,
                f"{h.buffer} slot {h.slot} is read with no cp_async_wait covering group {h.group}",
                [(h.first.node, "the copy into this slot")],
                help=f"insert tl::cp_async_wait<0>(); and __syncthreads(); before line "
                     f"{statement_before(kernel.func, h.first.node, h.second.node).span.line}"))
        elif h.kind in (H.RAW_UNCOMMITTED, H.EXIT_UNCOMMITTED) and id(h.first.node) not in uncommitted_reported:
            uncommitted_reported.add(id(h.first.node))
            tail = ("it is read" if h.kind == H.RAW_UNCOMMITTED else "the kernel ends")
            wait = _next_wait(kernel, h.first)
            spot = wait.node if wait is not None else statement_after(kernel.func, h.first.node)
            related = [(h.first.node, f"the uncommitted cp.async into {h.first.buffer}")]
            if h.kind == H.RAW_UNCOMMITTED:
                related.append((h.second.node, "read of the copied data"))
            out.append(make_finding(
                _R["uncommitted-copy"], path, kernel, h.first.node,
                f"missing cp_async_commit: cp.async into {h.first.buffer} at line {h.first.node.span.line} "
                f"(iteration {h.first.where}) is never committed before {tail}", related,
                help=(f"insert tl::cp_async_commit(); before line {spot.span.line}"
                      + (" (before the wait, after the copies)" if wait is not None else "")
                      if spot is not None else "insert tl::cp_async_commit(); after the last cp.async"),
                at=point(statement_of(kernel.func, spot)) if spot is not None else None))
        elif h.kind == H.WAIT_UNCOMMITTED and id(h.first.node) not in uncommitted_reported:
            uncommitted_reported.add(id(h.first.node))
            assert h.wait is not None
            spot = _commit_spot(kernel, h.first)
            out.append(make_finding(
                _R["uncommitted-copy"], path, kernel, h.first.node,
                f"missing cp_async_commit: cp.async into {h.first.buffer} at line {h.first.node.span.line} "
                f"(iteration {h.first.where}) is still uncommitted when cp_async_wait<{h.wait.value}> at line "
                f"{h.wait.node.span.line} runs, and wait_group never waits for uncommitted copies; it is read "
                f"at line {h.second.node.span.line} (iteration {h.second.where}) before any wait completes it",
                [(h.first.node, f"the copy into {h.first.buffer}, not yet in a group"),
                 (h.wait.node, "the wait that does not wait for it"),
                 (h.second.node, "read of the copied data")],
                help=f"insert tl::cp_async_commit(); after the copies, before line {spot.span.line}",
                at=point(spot)))
        elif h.kind in (H.DRAIN, H.EXIT_IN_FLIGHT):
            what = "the kernel ends" if h.kind == H.EXIT_IN_FLIGHT else "the same bytes are written"
            out.append(make_finding(
                _R["missing-drain"], path, kernel, h.second.node,
                f"cp.async group {h.group} into {h.first.buffer} is still in flight when {what}",
                [(h.first.node, "the in-flight copy")],
                help=f"insert tl::cp_async_wait<0>(); before line {h.second.node.span.line}"))
    _, claims = kernel.cp_async.claims         # verified together with the barrier claims
    for key, best in claims.items():
        ev = kernel.cp_async.wait_depths[key][0]
        if best is None:
            out.append(make_finding(
                _R["redundant-wait"], path, kernel, ev.node,
                f"cp_async_wait<{ev.value}> in the pipelined loop orders no read: no commit since the "
                f"previous wait, or every read after it is covered by a later wait; remove it",
                help=f"remove the cp_async_wait<{ev.value}> at line {ev.node.span.line}"))
        elif ev.value is not None and best > ev.value:
            out.append(make_finding(
                _R["wait-too-deep"], path, kernel, ev.node,
                f"cp_async_wait<{ev.value}> in the pipelined loop drains more than needed: "
                f"cp_async_wait<{best}> keeps every read safe and lets {best - ev.value} more "
                f"group(s) overlap with compute",
                help=f"change cp_async_wait<{ev.value}> to cp_async_wait<{best}> at line {ev.node.span.line}"))
    return out


def _commit_spot(kernel: KernelModel, copy: Event) -> A.Node:
    """Where the missing commit goes: the statement after the copies (after the unrolled copy loop),
    inside the pipelined loop that issues them; at the end of its body, the copy's statement."""
    after = statement_after(kernel.func, copy.node)
    loop = kernel.trace.loops.get(copy.loop_id) if copy.loop_id is not None else None
    if after is not None and (loop is None or after.span.line <= loop.node.span.end_line):
        return after
    return statement_of(kernel.func, copy.node)


def _next_wait(kernel: KernelModel, ev: Event) -> Event | None:
    """The first cp_async_wait its role executes after `ev`: where a missing commit belongs."""
    return next((e for e in kernel.trace.after(ev) if e.kind == K.WAIT), None)


def _shallow_help(kernel: KernelModel, h) -> str:
    """Change the wait to the deepest value that covers the read (from the wait-depth analysis)."""
    found = kernel.cp_async.wait_depths.get(id(h.wait.node))
    best = found[1] if found else None
    line = h.wait.node.span.line
    if best is not None and h.wait.value is not None and best < h.wait.value:
        return f"change cp_async_wait<{h.wait.value}> to cp_async_wait<{best}> at line {line}"
    return f"lower the N of cp_async_wait<{h.wait.value}> at line {line} until group {h.group} is complete"
