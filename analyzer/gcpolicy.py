"""The garbage collector's policy for a process that only analyses.

An analysis allocates millions of small, acyclic objects (AST nodes, events, solver terms) and
keeps large caches alive (`model.presburger`'s decided questions, the sides of `model.symbolic`).
With CPython's default thresholds (700, 10, 10) a long run spends a sixth of its CPU in the
collector re-scanning those caches (`benchmarks/bench_check.py`; an in-process run over 120
upstream files: 27.4 s, 22.9 s with the collector off).  mypy meets the same cost and answers it
the same way: collect the young generation rarely, and move what start-up built (modules, the
grammar, the plugins) out of the collector's sight.

Only the command line and its worker processes call this: a library user (TileLang's JIT hook,
an editor) keeps its own process's policy.
"""
from __future__ import annotations

import gc

YOUNG = 200_000       # allocations before a young collection (CPython: 700)
OLDER = 30            # young collections before a middle one, middle before a full one (CPython: 10)


def for_analysis() -> None:
    """Collect rarely, and freeze what exists now (start-up's objects live as long as the process)."""
    gc.freeze()
    gc.set_threshold(YOUNG, OLDER, OLDER)
