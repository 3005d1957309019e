"""The kernel model with the analyses that checks share, each computed once on first use.

`model.kernel` holds the facts (buffers, roles, traces); the analyses read them and are
attached here, one way: the analyses import the model, the model never imports them, so the
facts are built first and independently of what is derived from them.
"""
from __future__ import annotations

import functools

from .cpasync import CpAsyncAnalysis
from .globalmem import GlobalHandoff
from .kernel import KernelModel as KernelFacts
from .mbarrier import MBarrierAnalysis
from .mixing import mixed_statements
from .named import CountMismatch, mismatches, overfull
from .races import CrossRoleRaces
from .trace import Event


class KernelModel(KernelFacts):
    """Everything pipelint knows about one kernel, facts and shared analyses; read-only for checks."""

    @functools.cached_property
    def cp_async(self) -> CpAsyncAnalysis:
        """The cp.async commit-group and block-barrier simulation, per role."""
        return CpAsyncAnalysis(self)

    @functools.cached_property
    def mbarrier(self) -> MBarrierAnalysis:
        """The TMA / mbarrier protocol, the roles run against each other."""
        return MBarrierAnalysis(self)

    @functools.cached_property
    def races(self) -> CrossRoleRaces:
        """Plain-access races between roles (vector clocks over the interleaving)."""
        return CrossRoleRaces(self)

    @functools.cached_property
    def global_handoff(self) -> GlobalHandoff:
        """Global memory handed between threads of one role of a block."""
        return GlobalHandoff(self)

    @functools.cached_property
    def named_barriers(self) -> list[CountMismatch]:
        """Named barriers whose count does not match the threads that reach them (`model.named`)."""
        return mismatches(list(self.trace.all_events()), [(r.lo, r.hi) for r in self.roles], self.trace.truncated)

    @functools.cached_property
    def mixed_named(self) -> dict[int, tuple]:
        """Named-barrier statements whose generations can mix two groups' warps (`model.mixing`),
        by node id, each with an arrival of the other group: they order nothing."""
        return mixed_statements(self)

    def unordering(self, ev: Event) -> bool:
        """Whether a named-barrier statement orders no given pair of threads: more threads reach it
        than its count (`model.named.overfull`), or two groups' warps can pass it together
        (`mixed_named`)."""
        return overfull(ev) or id(ev.node) in self.mixed_named
