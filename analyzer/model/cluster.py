"""The two CTAs of a 2-CTA pair, run as one protocol.

A `cta_group::2` kernel (Blackwell's 2-SM MMA) completes mbarrier phases across the pair:

* `bar.arrive(cta_id)` (`mapa` + `mbarrier.arrive.shared::cluster`) arrives on the barrier at
  the same offset in CTA `cta_id`;
* `tl::tma_load_2sm` is executed by both CTAs; each writes its own shared memory, and the
  transaction bytes go to the leader's barrier (`Sm100MmaPeerBitMask` clears the peer bit of
  the barrier's address: CTA rank 0 of the pair);
* `tl::tcgen05_mma_arrive<true>(bar, mask)` is `tcgen05.commit.cta_group::2 ...
  multicast::cluster`: one arrival on the barrier of every CTA in `mask` (default 0b11), when
  the pair's MMAs so far have completed;
* a `cta_group::2` MMA (`tl::tcgen05mma_*<T, true>`, `tl::tcgen05_cp<true>`) issued by one CTA
  reads the operands in the shared memory of both CTAs and writes the accumulator in both
  CTAs' Tensor Memory;
* `tl::cluster_sync()` is a barrier of the cluster's threads; `__syncthreads()` and named
  barriers stay per CTA.

So the kernel is instantiated once per rank (`tl::block_rank_in_cluster()` bound to 0 and 1:
the branches the rank selects, the coordinates it offsets), the ranks' events are renamed into
one namespace (CTA 1's barriers and buffers carry the prefix `CTA1:`), each remote or multicast
operation is pointed at its target CTA's barrier, and the result is one model whose roles are
both CTAs' roles.  The mbarrier analysis then runs on it unchanged: arrival counts per phase,
transaction bytes, hangs and overruns, and the slots' RAW/WAR with the peer's reads.

The pair is two CTAs: the `cta_group::2` instructions pair rank 0 with rank 1, and TileLang's
2-CTA kernels are launched with `cluster_dims=2` (their masks and `arrive(0u)` name ranks 0 and 1
explicitly).  Multicast TMA (`tl::tma_load_multicast`, any cluster size) and remote arrivals at a
CTA the kernel text does not name as a constant are not modelled: those kernels keep the
`mbarrier-not-analyzed` note (`ClusterPair.unsupported`).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

from ..cuda import ast as A
from .evaluate import evaluate
from .intrinsics import INTRINSICS, K, cluster_barrier
from .kernel import BufferStages
from .kernel import KernelModel as Facts
from .protocol import Barrier, ProtocolSim
from .shared import MBarrierArray, SharedBuffer
from .trace import Event, Role, Trace

RANK_CALL = "tl::block_rank_in_cluster"
PAIR = 2
# tcgen05 operations that take `cta_group::2` (their `use_2cta` template argument): the table's
_TWO_CTA_OPS = frozenset(n for n in INTRINSICS if n.startswith(("tl::tcgen05mma", "tl::tcgen05_cp")))


def rank_prefix(rank: int) -> str:
    """How CTA `rank`'s barriers and buffers are named in the pair (rank 0 keeps the text's names)."""
    return f"CTA{rank}:" if rank else ""


def cta_of(name: str | None) -> int:
    """The CTA a renamed barrier or buffer belongs to."""
    if name and name.startswith("CTA") and ":" in name:
        head = name[3:name.index(":")]
        if head.isdigit():
            return int(head)
    return 0


@dataclass(frozen=True, slots=True)
class PairRole(Role):
    """A role of one CTA of the pair: its threads, and the CTA's rank."""

    rank: int = 0

    def __str__(self) -> str:
        return f"threads {self.lo}-{self.hi - 1} of CTA {self.rank}"


def bind_rank(func: A.FunctionDef, rank: int) -> A.FunctionDef:
    """`func` with every `tl::block_rank_in_cluster()` replaced by `rank` (new nodes only along the
    paths to a replaced call: every other statement keeps its identity)."""
    def rank_call(node: A.Node) -> A.Node | None:
        if isinstance(node, A.Call) and node.name == RANK_CALL and not node.args:
            return A.Number(str(rank), node.span)
        return None

    bound = A.transform(func, rank_call)
    assert isinstance(bound, A.FunctionDef)
    return bound


def _constant(expr: A.Expr) -> int | None:
    value = evaluate(expr, {})
    return value if isinstance(value, int) else None


def _two_cta(node: A.Node) -> bool:
    """A `cta_group::2` tensor-core operation: it reads both CTAs' operands, writes both TMEMs."""
    return isinstance(node, A.Call) and node.name in _TWO_CTA_OPS and "true" in node.template_args


class ClusterPair:
    """Both CTAs of a 2-CTA pair as one model of the mbarrier protocol (see the module's text).

    It answers what `MBarrierAnalysis` and `ProtocolSim` ask of a kernel model: the roles (rank
    0's, then rank 1's), their traces with barriers and buffers renamed per CTA, the buffers,
    stages and barriers of both CTAs, and each event's slot and byte range from its own rank's
    model.  `rank_of[r]` is the CTA of role `r`."""

    def __init__(self, model: Facts) -> None:
        self.base = model
        self.ranks = tuple(Facts(bind_rank(model.func, rank), model.lines) for rank in range(PAIR))
        self.roles: list[Role] = []
        self.rank_of: list[int] = []
        self._origin: dict[int, tuple[int, Event]] = {}
        events: list[list[Event]] = []
        for rank, facts in enumerate(self.ranks):
            offset = len(self.roles)
            self.rank_of.extend([rank] * len(facts.roles))
            self.roles.extend(PairRole(role.lo, role.hi, rank) for role in facts.roles)
            for trace in facts.trace.events:
                events.append([new for ev in trace for new in self._renamed(rank, offset, ev)])
        first = self.ranks[0].trace
        self.trace = Trace(self.roles, events, loops=first.loops,
                           truncated=any(f.trace.truncated for f in self.ranks), unknown=first.unknown,
                           opaque_barriers={rank_prefix(r) + name: call for r, f in enumerate(self.ranks)
                                            for name, call in f.trace.opaque_barriers.items()},
                           launch=first.launch)
        self.name = model.name
        self.func = model.func
        self.lines = model.lines
        self.index = self.ranks[0].index
        self.threads = model.threads
        self.mixed_named: dict[int, tuple] = {}

    def __getattr__(self, name: str) -> Any:
        """Facts of the kernel text the pair does not change (its layout, its definitions, the
        wgmma descriptors): rank 0's."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.ranks[0], name)

    # ---------------------------------------------------------------- what cannot be paired
    @staticmethod
    def unsupported(model: Facts) -> str | None:
        """Why a cluster kernel is not run as a pair: a multicast TMA load, or a remote arrival at
        a CTA that is not a constant of the text; None when it can be."""
        for ev in model.trace.all_events():
            node = ev.node
            if not isinstance(node, A.Call):
                continue
            if node.name == "tl::tma_load_multicast":
                return "multicast TMA"
            target = _remote_target(node, ev.kind)
            if target is not None and _constant(target) not in range(PAIR):
                return "a remote arrival at a CTA the text does not name"
        return None

    # ---------------------------------------------------------------- renaming
    def _renamed(self, rank: int, offset: int, ev: Event) -> list[Event]:
        """Event `ev` of CTA `rank` in the pair's namespace: one event per barrier it reaches (a
        multicast commit reaches both CTAs'), and a 2-CTA MMA's operands and accumulator in both."""
        local = rank_prefix(rank)
        buffer = local + ev.buffer if ev.buffer and ev.kind != K.GLOBAL else ev.buffer
        out = []
        for target in self._targets(rank, ev):
            barrier = ev.barrier
            if barrier is not None and ev.kind not in (K.NAMED_SYNC, K.NAMED_ARRIVE):
                barrier = (rank_prefix(target) + barrier[0], barrier[1])
            out.append(dataclasses.replace(ev, role=ev.role + offset, buffer=buffer, barrier=barrier))
        if ev.buffer and ev.kind in (K.SMEM, K.TMEM) and _two_cta(ev.node):
            peer = rank_prefix(rank ^ 1) + ev.buffer
            out.append(dataclasses.replace(ev, role=ev.role + offset, buffer=peer))
        for new in out:
            self._origin[id(new)] = (rank, ev)
        return out

    def _targets(self, rank: int, ev: Event) -> list[int]:
        """The CTAs whose copy of the event's barrier it acts on."""
        node = ev.node
        if ev.barrier is None or not isinstance(node, A.Call):
            return [rank]
        if node.name == "tl::tma_load_2sm":
            return [rank & ~1]                       # the pair's leader counts the bytes
        if ev.kind == K.MMA_ARRIVE and "true" in node.template_args:
            mask = _constant(node.args[1]) if len(node.args) > 1 else 0b11
            return [t for t in range(PAIR) if (mask or 0) >> t & 1]
        target = _remote_target(node, ev.kind)
        if target is not None:
            value = _constant(target)
            return [value] if value is not None else [rank]
        return [rank]

    # ---------------------------------------------------------------- the model's questions
    def _own(self, ev: Event) -> tuple[Facts, Event] | None:
        found = self._origin.get(id(ev))
        return (self.ranks[found[0]], found[1]) if found is not None else None

    def byte_range(self, ev: Event, precise: bool = False) -> tuple[str, int, int] | None:
        own = self._own(ev)
        if own is None or ev.buffer is None:
            return None
        rng = own[0].byte_range(own[1], precise)
        if rng is None:
            return None
        prefix = ev.buffer[:len(ev.buffer) - len(own[1].buffer or "")]
        return (prefix + rng[0], rng[1], rng[2])

    def slot(self, ev: Event) -> int | None:
        own = self._own(ev)
        return own[0].slot(own[1]) if own is not None else None

    @functools.cached_property
    def buffers(self) -> dict[str, SharedBuffer]:
        return {rank_prefix(r) + name: buf for r, f in enumerate(self.ranks) for name, buf in f.buffers.items()}

    @functools.cached_property
    def stages(self) -> dict[str, BufferStages]:
        return {rank_prefix(r) + name: st for r, f in enumerate(self.ranks) for name, st in f.stages.items()}

    @functools.cached_property
    def barriers(self) -> dict[str, MBarrierArray]:
        return {rank_prefix(r) + name: arr for r, f in enumerate(self.ranks) for name, arr in f.barriers.items()}

    def mbarrier_inits(self) -> dict[tuple[str, int], Event]:
        return Facts.mbarrier_inits(self)        # type: ignore[arg-type]

    def origin(self, node: A.Node) -> Any:
        return self.base.origin(node)

    def unordering(self, ev: Event) -> bool:
        return False


def _remote_target(node: A.Call, kind: Any) -> A.Expr | None:
    """The CTA argument of a remote arrival: `bar.arrive(cta_id[, pred])`,
    `tl::mbarrier_arrive(bar, cta_id, pred)`, `arrive_and_expect_tx(bytes, cta_id[, pred])`."""
    if kind not in (K.MBAR_ARRIVE, K.MBAR_ARRIVE_EXPECT_TX):
        return None
    # a method names the barrier before the call (`bar.arrive(cta)`), a function as argument 0;
    # `arrive_and_expect_tx` takes the bytes before the CTA
    index = (0 if kind == K.MBAR_ARRIVE else 1) + (0 if isinstance(node.callee, A.Member) else 1)
    return node.args[index] if len(node.args) > index else None



class PairSim(ProtocolSim):
    """The protocol run over both CTAs: `__syncthreads` and named barriers gather one CTA's roles,
    `tl::cluster_sync()` both CTAs'; a warp group belongs to one CTA; a multicast tcgen05.commit
    completes, in each CTA, the MMAs that write that CTA's Tensor Memory."""

    def __init__(self, analysis: Any, tx_known: bool) -> None:
        super().__init__(analysis, tx_known)
        pair = self.model
        assert isinstance(pair, ClusterPair)
        self.rank_of: list[int] = list(pair.rank_of)

    def peers(self, r: int, key: object) -> range | list[int]:
        if key == "cluster":
            return range(len(self.traces))
        return [o for o, rank in enumerate(self.rank_of) if rank == self.rank_of[r]]

    def barrier_key(self, r: int, ev: Event) -> object:
        if ev.kind == K.SYNC:
            return "cluster" if cluster_barrier(ev.node) else ("block", self.rank_of[r])
        assert ev.barrier is not None
        return (ev.barrier[0], ev.barrier[1], self.rank_of[r])

    def one_warpgroup(self, a: int, b: int) -> bool:
        return self.rank_of[a] == self.rank_of[b] and super().one_warpgroup(a, b)

    def commit_covers(self, buffer: str | None, b: Barrier) -> bool:
        return cta_of(buffer) == cta_of(b[0])
