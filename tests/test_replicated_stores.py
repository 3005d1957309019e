"""Issue 31, item 4: a store every thread runs onto the same bytes is a race only where the
threads store different values, decided over every colliding pair of threads symbolically.

TileLang's naive GEMV copies the vector tile with a serial loop that every thread runs
(`A_shared[tk] = A[bk * 1024 + tk]`): 256 threads x 1024 iterations, more pairs than pipelint
ever enumerated, which on main before the integer sets was passed over in silence.  Its twin
stores the thread index instead, a real write-write race.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import KERNELS

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
HANDWRITTEN = Path(__file__).parent / "fixtures" / "handwritten"


def _findings(path: Path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


@pytest.mark.parametrize("path, expected", [
    # the same value, global memory read at an address of the loop alone: no finding, no note
    (KERNELS / "replicated_copy_sm_80_s0.cu", []),
    # (half_t)threadIdx.x into A_shared[tk] by 256 threads: different values into one word (line 30
    # of TileLang's output, 34 below the 4-line header)
    (HANDWRITTEN / "replicated_tid_sm_80_s0.cu", [("shared-write-race", "error", 34)]),
    # `idx = Indices[bx * 16 + (tx >> 3)]`, then `condval` from both branches of `if (idx <= bx)`,
    # stored by the 8 threads of a slot into mask[tx >> 3]: one load, so one value (before: undecided,
    # the join of the two branches was not a definition and memory reads were not compared as values)
    (KERNELS / "register_mask_sm_80_s0.cu", []),
    # `condval + threadIdx.x`: the same load, different values (line 31, 35 below the header)
    (HANDWRITTEN / "register_mask_tid_sm_80_s0.cu", [("shared-write-race", "error", 35)]),
])
def test_replicated_stores_are_decided_on_their_values(path, expected):
    assert _findings(path) == expected


def _edited(name: str, line: int, old: str, new: str) -> str:
    lines = (KERNELS / name).read_text().splitlines()
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, line, old, new", [
    # a plain vector store whose XOR swizzle lost `threadIdx.x & 1`: threads 2k and 2k+1 store
    # *(uint4*)(Q + ...) of different rows into the same 16 bytes (held-out planted defect; a note
    # "values cannot be compared" before)
    ("flash_attn_fwd_sm_80_s3.cu", 44, "+ (((int)threadIdx.x) & 1)) & 1) * 8)))", "+ 0) & 1) * 8)))"),
    # the same through cp.async: the copy's source `&A[...]` differs between the two (silent before)
    ("gemm_f16_sm_80_s3.cu", 67, "+ (((int)threadIdx.x) & 1)) & 1) * 8))]))", "+ 0) & 1) * 8))]))"),
])
def test_copies_of_different_elements_into_one_place_race(tmp_path: Path, name: str, line: int, old: str,
                                                           new: str) -> None:
    path = tmp_path / name
    path.write_text(_edited(name, line, old, new))
    assert [f for f in _findings(path) if f[1] == "error"] == [("shared-write-race", "error", line)]


def test_copied_address_is_the_element_copied_or_nothing() -> None:
    from pipelint.cuda import parse
    from pipelint.model.threads import copied_address

    text = ("extern \"C\" __global__ void k(half_t* __restrict__ A, float* r) {\n"
            "  float x = 0; s[0] = A[t]; s[1] = *(uint4*)(A + t); s[2] = (float)A[t] + 1.0f;"
            " s[3] = *(uint4*)(&A[t]); s[4] = x;\n}\n")
    [func] = parse(text).unit.kernels()
    values = [n.value for n in func.body.walk() if type(n).__name__ == "Assign"]
    found = [copied_address(v, frozenset({"x"})) for v in values]
    assert [f is not None for f in found] == [True, True, False, True, False]
    assert {f[0] for f in found if f is not None} == {found[0][0]}      # one array, A, each time
