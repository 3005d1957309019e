"""Coverage: say which calls the kernel model does not understand, instead of guessing.

The intrinsics table (`pipelint.model.intrinsics`) knows every `tl::` function
of TileLang 0.1.15's templates that touches shared memory or synchronises.  A
`tl::` call outside it (a newer TileLang, a user's own helper) may read or
write shared memory or complete a barrier phase the model does not see: it is
named in a note, never turned into an error.
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import KernelCheck
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import KernelModel


class UnknownIntrinsic(KernelCheck):
    """Each `tl::` call the intrinsics table does not describe."""

    rule = Rule(
        "unknown-intrinsic", "UnknownIntrinsic",
        "TileLang intrinsic unknown to the kernel model",
        "The kernel calls a `tl::` function that pipelint's intrinsics table does not describe. "
        "If it touches shared memory or synchronises, the pipeline checks cannot see it; shared "
        "pointers passed to it are treated as possible reads and writes.",
        Severity.NOTE, "Nothing to fix in the kernel; report the intrinsic so pipelint learns it.",
        ("coverage",),
        rationale="A linter that silently skips what it does not understand gives a clean report on a kernel "
                  "it never checked. Naming the call says exactly where the analysis has a hole.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self.finding(path, kernel, node,
                             f"{name} is not in pipelint's intrinsics table: its effect on shared memory "
                             f"and barriers is not modelled")
                for name, node in sorted(kernel.trace.unknown.items())]


class ImplausibleValue(KernelCheck):
    """Each value the model bounded because CUDA does not allow it."""

    rule = Rule(
        "implausible-value", "ImplausibleValue",
        "A count in the kernel is outside what CUDA allows",
        "A thread count, mbarrier arrival count or similar value read from the kernel is negative, "
        "zero or beyond the hardware's limits. pipelint analyses the kernel with the value bounded "
        "(and says so) instead of simulating what cannot run.",
        Severity.WARNING, "Fix the value; the kernel cannot launch or its barrier never completes.",
        ("correctness", "coverage"),
        rationale="Simulating a 100-million-thread block or a barrier that needs -1 arrivals would only "
                  "hang the analysis; saying what was bounded keeps the rest of the report exact.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self.finding(path, kernel, node, message) for node, message in kernel.implausible]


CHECKS = (UnknownIntrinsic(), ImplausibleValue())
RULES = tuple(c.rule for c in CHECKS)


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[KernelCheck, ...]:
    return CHECKS
