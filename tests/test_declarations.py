"""Issue 31, item 7: declarations decide type names.  An identifier that names a local variable or a
parameter is a value inside an expression (`(half * x)`, `(a * g[0])`), as a C++ front end decides it
from the declarations in scope; outside that scope the same word is a type again."""
from __future__ import annotations

from helpers import HANDWRITTEN, KERNELS

from pipelint.cuda import ast as A
from pipelint.cuda import parse
from pipelint.cuda.typenames import variable_declarations
from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
CLEAN = KERNELS / "type_named_local_sm_80_s0.cu"
BUGGY = HANDWRITTEN / "type_named_local_nobarrier.cu"


def _set(path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def test_tilelang_locals_named_half_and_a_are_values_in_their_products():
    text = CLEAN.read_text()
    assert "float half = " in text and "float a = " in text and "(half * g[" in text and "(a * g[0])" in text
    products = [n for n in parse(text).unit.walk() if isinstance(n, A.Binary) and n.op == "*"
                and isinstance(n.left, A.Name) and n.left.ident in ("half", "a")]
    assert sorted(p.left.ident for p in products) == ["a", "half"]       # at 58e98a9: a parse error
    assert _set(CLEAN) == []                       # the barrier orders the products' reads: needed


def test_without_the_barrier_the_products_reads_race():
    lines = BUGGY.read_text().split("\n")
    header = next(i for i, t in enumerate(lines) if not t.startswith("//"))
    original = CLEAN.read_text().split("\n")
    gone = original.index("  __syncthreads();")
    assert lines[header:] == original[:gone] + original[gone + 1:]
    assert _set(BUGGY) == [("shared-race", "error", header + 30)]


def test_the_type_is_a_type_again_outside_the_variables_block():
    src = """extern "C" __global__ void k(float* out) {
  {
    float half = 1.0f;
    out[0] = (half * out[1]);
  }
  half x = out[2];
  out[3] = (float)x;
}"""
    unit = parse(src).unit
    assert any(isinstance(n, A.Binary) and n.op == "*" for n in unit.walk())
    decl = [n for n in unit.walk() if isinstance(n, A.Declarator) and n.name == "x"]
    assert decl, "`half x` after the block is a declaration of x with type half"
    assert sorted(variable_declarations(src, frozenset({"half"}))) == ["half", "out", "x"]


def test_typedefs_declare_types_not_variables():
    assert variable_declarations("typedef float half; half y = 1;", frozenset({"half"})) == {"y": [26]}
