"""Reaching definitions of registers (`model.definitions`): a stored value's register is
replaced by its definition only where that is exact (it dominates the use, nothing assigns the
register or what it reads in between, its memory reads are of read-only inputs)."""
from __future__ import annotations

import pytest

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.model.definitions import Definitions

KERNEL = """
extern "C" __global__ void k(const int* __restrict__ idx, int* __restrict__ out, int n) {
  __shared__ signed char valid[64];
  int q = (((int)blockIdx.x) >> 1) + idx[0];
  int v = 0;
  int w = 0;
  for (int i = 0; i < 4; ++i) {
    v = idx[(i * 16) + (((int)threadIdx.x) >> 3)];
    valid[(i * 16) + (((int)threadIdx.x) >> 3)] = (signed char)(v <= q);
    w = out[i];
    valid[i] = (signed char)w;
  }
  valid[1] = (signed char)v;
  for (int j = 0; j < 4; ++j) {
    valid[2] = (signed char)v;
    v = v + 1;
  }
  if (n > 0) { v = 3; }
  valid[3] = (signed char)v;
}
"""


def _kernel() -> A.FunctionDef:
    unit = parse(KERNEL).unit
    return next(d for d in unit.items if isinstance(d, A.FunctionDef) and d.is_kernel)


def _use(func: A.FunctionDef, name: str, line: int) -> A.Name:
    assert func.body is not None
    return next(n for n in func.body.walk() if isinstance(n, A.Name) and n.ident == name and n.span.line == line)


@pytest.fixture(scope="module")
def defs() -> tuple[A.FunctionDef, Definitions]:
    func = _kernel()
    return func, Definitions.of(func)


def test_definition_in_the_same_iteration(defs) -> None:
    func, d = defs
    value = d.value_at("v", _use(func, "v", 9))
    assert isinstance(value, A.Index) and value.span.line == 8


def test_initialiser_outside_the_loops(defs) -> None:
    func, d = defs
    value = d.value_at("q", _use(func, "q", 9))
    assert isinstance(value, A.Binary) and value.span.line == 4


def test_a_read_of_a_written_buffer_is_no_definition(defs) -> None:
    func, d = defs
    assert d.value_at("w", _use(func, "w", 11)) is None      # `out` is not read-only


def test_after_the_loop_the_definition_may_not_have_run(defs) -> None:
    func, d = defs
    assert d.value_at("v", _use(func, "v", 13)) is None      # zero trips leave `v = 0`


def test_an_assignment_later_in_an_enclosing_loop_kills(defs) -> None:
    func, d = defs
    assert d.value_at("v", _use(func, "v", 15)) is None      # `v = v + 1` of the previous iteration


def test_an_assignment_in_a_branch_kills(defs) -> None:
    func, d = defs
    assert d.value_at("v", _use(func, "v", 19)) is None


JOIN = """
extern "C" __global__ void k(const int* __restrict__ idx, int* __restrict__ out) {
  __shared__ int m[16];
  int v = idx[((int)threadIdx.x) >> 3];
  int c;
  if (v <= ((int)blockIdx.x)) {
    c = 1;
  } else {
    c = 0;
  }
  m[((int)threadIdx.x) >> 3] = c;
  int d;
  if (v < 3) {
    d = 1;
    v = 2;
  } else {
    d = v;
  }
  m[1] = d;
  int e;
  if (v < 3) {
    e = 1;
  }
  m[2] = e;
}
"""


def test_a_register_assigned_in_both_branches_is_their_join() -> None:
    """Issue 31, item 5: `c` after `if (v <= bx) c = 1; else c = 0;` is `v <= bx ? 1 : 0`, not
    the last branch's value; not where a branch assigns what the join reads (`v`), nor where only
    one branch assigns (`e`: its value before the `if` may remain)."""
    func = next(d for d in parse(JOIN).unit.items if isinstance(d, A.FunctionDef) and d.is_kernel)
    d = Definitions.of(func)
    joined = d.value_at("c", _use(func, "c", 11))
    assert isinstance(joined, A.Ternary) and isinstance(joined.cond, A.Binary) and joined.cond.op == "<="
    assert (joined.then.value, joined.other.value) == (1, 0)
    assert d.value_at("d", _use(func, "d", 19)) is None
    assert d.value_at("e", _use(func, "e", 24)) is None
