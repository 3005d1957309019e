"""wgmma registers touched while the MMA may still run (`pipelint.model.fragments`).

A `wgmma.mma_async` writes its accumulator registers, and reads a `wgmma_rs`'s A fragment,
asynchronously, until a `wgmma.wait_group` retires its group.  Shared-memory analyses cannot see
a read of those registers: it is a race inside each thread, between the thread and its own
tensor-core operation.  TileLang's output waits (`tl::warpgroup_wait<0>()`) before its softmax or
epilogue touches the accumulators; a wait whose depth leaves the group in flight, or none, reads
values the MMA has not finished writing.
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import KernelCheck
from pipelint.cuda import ast as A
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import KernelModel
from pipelint.model.fragments import FragmentUse


class WgmmaRegisters(KernelCheck):
    """Each statement that touches a wgmma's accumulators (or writes its A fragment) before a
    wait retires the wgmma's group."""

    rule = Rule(
        "wgmma-register-race", "WgmmaRegisterRace",
        "wgmma accumulator or A-fragment registers touched before the wait that retires the wgmma",
        "A `wgmma.mma_async` (`tl::wgmma_ss`, `tl::wgmma_rs`) writes its accumulators and reads a "
        "register A fragment asynchronously until `wgmma.wait_group N` (`tl::warpgroup_wait<N>`, "
        "`tl::wait_wgmma<N>`) retires its commit group. PTX makes any other access to those registers "
        "before that wait undefined: a read sees a partial sum, a write may be lost or corrupt the MMA.",
        Severity.ERROR, "Wait for the group first: `tl::warpgroup_wait<N>` with N no more than the groups "
        "committed after it, before the statement.", ("correctness", "wgmma"),
        rationale="A wait depth one too high (`warpgroup_wait<1>` with a single group in flight) still "
                  "passes every shared-memory check; the softmax or epilogue then reads accumulators the "
                  "tensor cores are still writing, and the output is wrong only on some runs.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self._finding(kernel, path, use) for use in _first_per_statement(kernel.trace.fragment_uses)]

    def _finding(self, kernel: KernelModel, path: str, use: FragmentUse) -> Finding:
        who = kernel.roles[use.role] if use.role < len(kernel.roles) else "the threads"
        what = "its accumulator" if use.accumulator else "its A fragment"
        verb = "touch" if use.accumulator else "write"
        related: list[tuple[A.Node, str]] = [(use.wgmma, "the wgmma")]
        if use.commit is not None:
            related.append((use.commit, "the commit of its group"))
        line = use.node.span.line
        if use.wait is not None:
            # the fix is the wait's depth: reported there, the access named
            related.append((use.node, f"the first access of {use.name} while the group is in flight"))
            return self.finding(
                path, kernel, use.wait,
                f"this warpgroup_wait leaves the group of the wgmma at line {use.wgmma.span.line} in flight, and "
                f"{who} then {verb} {use.name}, {what}, at line {line} while the MMA may still run", related,
                help=f"lower the wait's depth so that it retires that group (tl::warpgroup_wait<0>()), or wait "
                     f"again before line {line}")
        why = "it is not even committed yet" if use.commit is None else \
            "no warpgroup_wait retires its group before this line"
        return self.finding(
            path, kernel, use.node,
            f"{who} {verb} {use.name}, {what} of the wgmma at line {use.wgmma.span.line}, while the MMA may "
            f"still run: {why}", related,
            help=f"insert tl::warpgroup_wait<0>() (or a depth that leaves only later groups in flight) before "
                 f"line {line}")


def _first_per_statement(uses: tuple[FragmentUse, ...]) -> list[FragmentUse]:
    """The first statement (in source order) that touches each array of each wgmma left in flight
    by one wait: the place to wait before; the later ones are the same defect."""
    first: dict[tuple, FragmentUse] = {}
    for use in sorted(uses, key=lambda u: (u.node.span.line, u.node.span.column, u.name)):
        first.setdefault((id(use.wgmma), use.name, id(use.wait)), use)
    return list(first.values())


CHECKS = (WgmmaRegisters(),)
RULES = tuple(c.rule for c in CHECKS)


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[KernelCheck, ...]:
    return CHECKS
