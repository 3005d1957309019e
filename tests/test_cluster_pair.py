"""Issue 31: the two CTAs of a 2-CTA (`cta_group::2`) pair run as one mbarrier protocol
(`model.cluster`), on TileLang 0.1.15's output of tests/fixtures/causes/cluster_pair.py and its
edited twins.  Before, every such kernel had one `mbarrier-not-analyzed` note and nothing else:
its barriers' counts, phases and bytes were not checked at all."""
from __future__ import annotations

from pathlib import Path

from helpers import KERNELS

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.model.cluster import ClusterPair, PairRole, bind_rank, cta_of
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
HANDWRITTEN = Path(__file__).parent / "fixtures" / "handwritten"
PAIR = KERNELS / "cluster_pair_sm_100_s2.cu"


def _findings(path: Path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def _model(path: Path) -> KernelModel:
    parsed = parse(path.read_text())
    return KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)


def test_the_pair_protocol_of_tilelang_output_is_clean_and_decided():
    assert _findings(PAIR) == []
    model = _model(PAIR)
    assert model.mbarrier.pair is not None
    assert not any(i.kind.value == "unanalyzed" for i in model.mbarrier.issues)


def test_both_ranks_roles_and_the_remote_targets():
    pair = ClusterPair(_model(PAIR))
    assert [str(r) for r in pair.roles] == [
        "threads 0-31 of CTA 0", "threads 32-63 of CTA 0", "threads 64-127 of CTA 0",
        "threads 0-31 of CTA 1", "threads 32-127 of CTA 1"]     # rank 1 has no MMA warp
    assert all(isinstance(r, PairRole) for r in pair.roles)
    events = list(pair.trace.all_events())
    # each CTA's producer arrives on the leader's loaded[]; the 2-SM loads count there too
    arrivals = {(pair.rank_of[e.role], e.barrier[0]) for e in events if e.kind.value == "mbar_arrive"}
    assert arrivals == {(0, "loaded"), (1, "loaded")}
    loads = {(pair.rank_of[e.role], e.barrier[0], e.buffer) for e in events if e.kind.value == "tma_load"}
    assert loads == {(0, "loaded", "A_s"), (0, "loaded", "B_s"), (1, "loaded", "CTA1:A_s"), (1, "loaded", "CTA1:B_s")}
    # the multicast commit arrives on both CTAs' consumed[] and tmem_full[]
    commits = {e.barrier[0] for e in events if e.kind.value == "mma_arrive"}
    assert commits == {"consumed", "CTA1:consumed", "tmem_full", "CTA1:tmem_full"}
    # the pair's MMA reads both CTAs' operand slots
    reads = {e.buffer for e in events if e.kind.value == "smem" and e.access == "read"}
    assert {"A_s", "B_s", "CTA1:A_s", "CTA1:B_s"} <= reads


def test_the_rank_is_bound_in_the_text():
    func = _model(PAIR).func
    for rank in (0, 1):
        bound = bind_rank(func, rank)
        assert "block_rank_in_cluster" not in repr(bound)
        assert bound.span == func.span
    assert bind_rank(func, 0).body.body[0] is func.body.body[0]     # untouched statements are shared
    assert cta_of("CTA1:loaded") == 1 and cta_of("loaded") == 0 and cta_of(None) == 0


def test_an_arrival_on_the_own_cta_hangs_the_leader():
    # arrive() for arrive(0u): the leader's loaded[] gets 32 of its 64 arrivals per phase
    assert _findings(HANDWRITTEN / "cluster_pair_local_arrive_sm_100_s2.cu") == [
        ("mbarrier-arrival-count", "error", 46), ("mbarrier-arrival-count", "error", 47),
        ("mbarrier-deadlock", "error", 64), ("mbarrier-deadlock", "error", 91), ("mbarrier-deadlock", "error", 120)]


def test_a_commit_not_multicast_never_frees_the_peers_slots():
    found = run_check([str(HANDWRITTEN / "cluster_pair_unicast_release_sm_100_s2.cu")], HOST,
                      CheckOptions(jobs=1)).findings
    assert sorted((f.rule, f.location.line) for f in found) == [
        ("mbarrier-deadlock", 91), ("mbarrier-deadlock", 112), ("mbarrier-deadlock", 120)]
    cause = next(f for f in found if f.location.line == 112)
    assert "never arrives on CTA1:consumed[0]" in cause.message and "of CTA 1 hangs" in cause.message


def test_a_multicast_tma_kernel_keeps_its_note():
    text = PAIR.read_text().replace("tl::tma_load_2sm(A_desc", "tl::tma_load_multicast(A_desc")
    parsed = parse(text)
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    assert ClusterPair.unsupported(model) == "multicast TMA"
    assert model.mbarrier.pair is None
    assert [i.kind.value for i in model.mbarrier.issues] == ["unanalyzed"]
