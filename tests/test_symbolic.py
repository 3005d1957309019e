"""Issue 31: cross-thread questions decided by a solver (`model.symbolic`).

The solver must give the enumerator's answer exactly: random index expressions, guards and
thread sets small enough to enumerate are decided both ways and compared.  Where enumeration
gives up (too many threads x loop points), the solver still decides.
"""
from __future__ import annotations

import random

import pytest

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.model import symbolic
from pipelint.model.evaluate import CompiledEvaluator
from pipelint.model.threads import MAX_POINTS, LaneRecipe, cross_thread, footprint, span

pytestmark = pytest.mark.skipif(not symbolic.available(), reason="z3 is a core dependency")
EVAL = CompiledEvaluator()


def _expr(text: str) -> A.Expr:
    """An expression parsed by pipelint's own grammar (`x = <text>;` in a kernel body)."""
    unit = parse(f'extern "C" __global__ void k(int* p) {{ int x = {text}; }}').unit
    decl = next(n for n in unit.walk() if isinstance(n, A.Declarator))
    assert decl.init is not None
    return decl.init


def _recipe(index: str, threads: int, ranges=(), guards=(), elem=4, width=4, points=()) -> LaneRecipe:
    return LaneRecipe(_expr(index), elem, width, tuple(points), tuple(ranges), threads,
                      tuple((_expr(g), p) for g, p in guards))


def _enumerated(a: LaneRecipe, b: LaneRecipe, shift: int = 0) -> bool:
    """The oracle: every thread's bytes enumerated, some byte of `a`'s thread t in `b`'s thread u != t."""
    fa, fb = footprint(a, EVAL), footprint(b, EVAL)
    assert fa is not None and fb is not None
    owners: dict[int, set[int]] = {}
    for t, starts in fa.items():
        for s in starts:
            for q in range(s, s + a.width):
                owners.setdefault(q, set()).add(t)
    return any(owners.get(q, set()) - {u} for u, starts in fb.items() for s in starts
               for q in range(s + shift, s + shift + b.width))


_ATOMS = ["threadIdx.x", "((int)threadIdx.x)", "i", "3", "8", "32", "7"]
_OPS = ["+", "-", "*", "/", "%", "&", "|", "^", ">>", "<<"]


def _random_index(rng: random.Random, depth: int = 3) -> str:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(_ATOMS)
    op = rng.choice(_OPS)
    left = _random_index(rng, depth - 1)
    right = str(rng.choice([1, 2, 3, 4, 5])) if op in ("/", "%", ">>", "<<") else _random_index(rng, depth - 1)
    return f"({left} {op} {right})"


def test_the_solver_gives_the_enumerators_answer_on_random_accesses():
    rng = random.Random(31)
    compared = agree = 0
    for _ in range(150):
        threads = rng.choice([span(0, 64), span(0, 32) | span(64, 96), sum(1 << t for t in range(0, 64, 3))])
        other = rng.choice([threads, span(0, 64), span(32, 64)])
        ranges = (("i", (0, rng.randint(0, 3))),)
        guards = [(f"((int)threadIdx.x % {rng.choice([2, 4])}) == 0", rng.random() < 0.5)] if rng.random() < 0.3 else []
        a = _recipe(_random_index(rng), threads, ranges, guards, width=rng.choice([4, 8]))
        b = _recipe(_random_index(rng), other, ranges, width=rng.choice([4, 16]))
        shift = rng.choice([0, 0, 4, 64])
        try:
            want = _enumerated(a, b, shift)
        except (AssertionError, ZeroDivisionError):
            continue            # an index the evaluator cannot compute everywhere: not comparable
        got, witness = symbolic.cross_thread(a, b, shift)
        if got is None:
            continue
        compared += 1
        agree += got == want
        if got:
            assert witness is not None and witness.threads[0] != witness.threads[1]
    assert compared >= 100 and agree == compared


def test_a_tile_too_large_to_enumerate_is_decided_disjoint():
    # 256 threads x 1024 loop points: past MAX_POINTS, which used to leave the pair undecided
    a = _recipe("((int)threadIdx.x) + (i * 256)", span(0, 256), (("i", (0, 1023)),))
    assert MAX_POINTS < 256 * 1024 and footprint(a, EVAL) is None
    assert cross_thread(a, a, EVAL) is False


def test_a_tile_too_large_to_enumerate_is_decided_racing_with_a_witness():
    # the other warp group reads the first group's row: threads 128-255 meet threads 0-127
    a = _recipe("((int)threadIdx.x) + (i * 256)", span(0, 256), (("i", (0, 1023)),))
    b = _recipe("((((int)threadIdx.x) + 128) % 256) + (i * 256)", span(0, 256), (("i", (0, 1023)),))
    assert cross_thread(a, b, EVAL) is True
    found, witness = symbolic.cross_thread(a, b)
    assert found is True and witness is not None and witness.threads[0] != witness.threads[1]


def test_an_xor_swizzle_over_a_large_tile_is_decided_exactly():
    # 1024 threads each store a 256-half row in 32 chunks of 8, the chunk index XOR-swizzled by the
    # thread's low bits: a permutation of each row, so no two threads meet
    index = "(((int)threadIdx.x) * 256) + ((((i >> 3) ^ (((int)threadIdx.x) & 7)) << 3) | (i & 7))"
    a = _recipe(index, span(0, 1024), (("i", (0, 255)),), elem=2, width=2)
    assert footprint(a, EVAL) is None
    assert symbolic.cross_thread(a, a)[0] is False
    # the same swizzle onto rows of 128: rows overlap by half, threads t and t+1 meet
    overlapping = _recipe(index.replace("* 256", "* 128"), span(0, 1024), (("i", (0, 255)),), elem=2, width=2)
    assert symbolic.cross_thread(overlapping, overlapping)[0] is True


def test_an_index_that_does_not_translate_stays_undecided():
    a = _recipe("p[((int)threadIdx.x)]", span(0, 256), (("i", (0, 1023)),))
    assert symbolic.cross_thread(a, a) == (None, None)


def test_periodic_thread_sets_are_one_constraint():
    every_fourth = sum(1 << t for t in range(0, 1024, 4))
    a = _recipe("((int)threadIdx.x) / 4", every_fourth)
    assert symbolic.cross_thread(a, a)[0] is False
    b = _recipe("((int)threadIdx.x) / 8", every_fourth)
    assert symbolic.cross_thread(b, b)[0] is True


def test_a_block_index_is_not_negative_for_the_bit_vector_solver_either():
    """`blockIdx.x` is 0 and up in isl's sets (`model.presburger`); a 64-bit vector without that
    bound let `bx < 2 ? bx : bx - 2` fall below zero, and a guard never true in any block (TileLang's
    causal attention: `condval_2 < 0`) let a store every block skips meet a read."""
    half = "((((int)blockIdx.x) < 2) ? ((int)blockIdx.x) : (((int)blockIdx.x) - 2))"
    store = _recipe("(int)threadIdx.x", span(0, 64), guards=[(f"{half} < 0", True)])
    read = _recipe("63 - (int)threadIdx.x", span(0, 64))
    assert symbolic.cross_thread(store, read)[0] is False
    # the same guard's other polarity holds in every block: the mirrored read meets the store
    store_kept = _recipe("(int)threadIdx.x", span(0, 64), guards=[(f"{half} < 0", False)])
    assert symbolic.cross_thread(store_kept, read)[0] is True
    # a kernel argument keeps the range of its `int` type: `T + 1 < T` is false (no wrap-around)
    wrap = LaneRecipe(_expr("(int)threadIdx.x"), 4, 4, (), (), span(0, 64), ((_expr("T + 1 < T"), True),),
                      uniform=frozenset({"T"}))
    assert symbolic.cross_thread(wrap, read)[0] is False
