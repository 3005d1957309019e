"""The cross-role race recorder finds the unordered accesses of a space by bisecting each
role's log on its epochs (`model.races._Log`).  It must give exactly what a scan of every
access gives (the old method), in the same order, since the first pair found names a race:
checked here on random interleavings with growing vector clocks, and with pruning."""
from __future__ import annotations

import random

from pipelint.model.races import _Access, _Log


def _scan(accesses: list[_Access], r: int, vc: list[int]) -> list[_Access]:
    """The reference: every access of another role that r's clock has not caught up with."""
    return [a for a in accesses if a.role != r and vc[a.role] < a.epoch]


def test_bisection_finds_the_same_unordered_accesses_in_the_same_order_as_a_scan() -> None:
    rng = random.Random(31)
    for trial in range(200):
        roles = rng.randint(2, 5)
        vcs = [[1 if q == r else 0 for q in range(roles)] for r in range(roles)]
        log, every = _Log(), []
        for seq in range(1, rng.randint(5, 120)):
            r = rng.randrange(roles)
            step = rng.random()
            if step < 0.2:                          # a release: the role's own clock moves on
                vcs[r][r] += 1
            elif step < 0.35:                       # an acquire: r learns another role's clock
                q = rng.randrange(roles)
                vcs[r] = [max(a, b) for a, b in zip(vcs[r], vcs[q])]
            got = log.unordered(r, vcs[r])
            assert got == _scan(every, r, vcs[r]), (trial, seq)
            access = _Access(None, r, vcs[r][r], rng.random() < 0.5, 0, 4, (), seq)  # type: ignore[arg-type]
            log.append(access)
            every.append(access)
            if rng.random() < 0.05:                 # a prune keeps a subset, in order
                every = [a for a in every if rng.random() < 0.7]
                log.keep(every)
                assert log.all() == every and log.count == len(every)
