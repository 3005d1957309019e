"""What a `__syncthreads` orders within a role is a query on pairs recorded by one walk
(`model.cpasync._Sim.replay`), not a walk per barrier trial.  The query must give exactly what
the walk with those barriers gone gives (the old method), hazard by hazard and in the same
order: checked on every fixture kernel with a barrier, for each barrier alone, all of them, and
random sets of them, and on a kernel whose two barriers each alone order nothing."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipelint.cuda import parse
from pipelint.model import KernelModel
from pipelint.model.cpasync import _Sim
from pipelint.model.intrinsics import K

FIXTURES = Path(__file__).parent / "fixtures"
KERNELS = sorted((FIXTURES / "kernels").glob("*.cu")) + sorted((FIXTURES / "handwritten").glob("*.cu"))


def _models(path: Path) -> list[KernelModel]:
    parsed = parse(path.read_text())
    return [KernelModel(f, parsed.lines, parsed.registry) for f in parsed.unit.kernels()]


def _shown(hazards: dict) -> list[tuple]:
    return [(k, id(h.first), id(h.second), h.certain) for k, h in hazards.items()]


def _walked(model: KernelModel, events: list, gone: frozenset[int], base: dict) -> dict:
    """The old method: a walk of the role with the barriers of `gone` absent."""
    return {k: h for k, h in _Sim(model, True, gone, {}).run(events).items() if k not in base}


@pytest.mark.parametrize("path", [p for p in KERNELS if "__syncthreads" in p.read_text()], ids=lambda p: p.stem)
def test_a_barrier_trial_query_equals_the_walk_without_those_barriers(path: Path) -> None:
    rng = random.Random(path.stem)
    for model in _models(path):
        analysis = model.cp_async
        nodes = [id(n) for n in analysis.sync_nodes]
        if not nodes:
            continue
        base = {k: h for found in analysis.plain_base for k, h in found.items()}
        trials = [frozenset([n]) for n in nodes] + [frozenset(nodes)]
        trials += [frozenset(rng.sample(nodes, rng.randint(1, len(nodes)))) for _ in range(2)]
        for events, recorded in zip(model.trace.events, analysis.recorded):
            mine = frozenset(id(ev.node) for ev in events if ev.kind == K.SYNC)
            for gone in trials:
                assert _shown(recorded.replay(gone & mine, base)) == _shown(_walked(model, events, gone & mine, base))


def test_two_barriers_that_order_the_same_pair_are_each_redundant_alone_but_not_together() -> None:
    """A store, two barriers, a read by another thread: either barrier alone suffices, so the
    query for one gone finds nothing and the query for both gone finds the race."""
    source = """
__global__ void __launch_bounds__(128) k(float* out) {
  __shared__ float s[128];
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  __syncthreads();
  out[threadIdx.x] = s[127 - threadIdx.x];
}
"""
    parsed = parse(source)
    model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    analysis = model.cp_async
    first, second = (id(n) for n in analysis.sync_nodes)
    (recorded,) = analysis.recorded
    base = {k: h for found in analysis.plain_base for k, h in found.items()}
    assert not base
    assert recorded.replay(frozenset([first]), base) == {}
    assert recorded.replay(frozenset([second]), base) == {}
    both = recorded.replay(frozenset([first, second]), base)
    assert [h.kind.name for h in both.values()] == ["RAW_PLAIN"]
    assert analysis.redundant_barriers() == [analysis.sync_nodes[1]]    # the later one is blamed
