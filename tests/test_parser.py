"""The grammar parses all TileLang output and the common hand-written constructs."""
from __future__ import annotations

import pytest

from pipelint.cuda import CudaSyntaxError, parse
from pipelint.cuda import ast as A
from helpers import ALL_KERNELS, HANDWRITTEN, KERNELS


def test_corpus_covers_archs_and_stages():
    names = {p.name for p in ALL_KERNELS}
    for arch in ("sm_80", "sm_90", "sm_100"):
        for stages in range(5):
            assert f"gemm_f16_{arch}_s{stages}.cu" in names
    assert len(ALL_KERNELS) >= 90


@pytest.mark.parametrize("path", ALL_KERNELS, ids=lambda p: p.name)
def test_every_fixture_parses(path):
    parsed = parse(path.read_text())
    kernels = parsed.unit.kernels()
    assert len(kernels) == 1
    assert kernels[0].attribute("__launch_bounds__") is not None


def _calls(unit, name):
    return [n for n in unit.walk() if isinstance(n, A.Call) and n.name == name]


def test_template_arguments_are_split_including_nested_closing():
    unit = parse((HANDWRITTEN / "constructs.cu").read_text()).unit
    (allreduce,) = [n for n in unit.walk() if isinstance(n, A.Call) and n.name.endswith("::run")]
    scope = allreduce.callee.scope
    assert scope[0] == "tl" and scope[1] == "AllReduce<tl::SumOp, 4, 1, 0, tl::NamedBarrier<128>>"
    gemm = parse(KERNELS.joinpath("gemm_f16_sm_80_s3.cu").read_text()).unit
    waits = _calls(gemm, "tl::cp_async_wait")
    assert [w.template_args for w in waits] == [("2",), ("1",), ("0",)]
    mma = _calls(gemm, "tl::mma_sync")[0]
    assert mma.template_args[:3] == ("tl::DataType::kFloat16", "tl::DataType::kFloat16", "tl::DataType::kFloat32")


def test_index_arithmetic_is_an_expression_tree_with_spans():
    unit = parse(KERNELS.joinpath("gemm_f16_sm_80_s3.cu").read_text()).unit
    copy = _calls(unit, "tl::cp_async_gs")[4]  # first copy inside the loop
    dst = copy.args[0]
    assert isinstance(dst, A.Unary) and dst.op == "&"
    index = dst.operand.index
    assert isinstance(index, A.Binary) and index.op == "+"
    mods = [n for n in index.walk() if isinstance(n, A.Binary) and n.op == "%"]
    assert mods and isinstance(mods[0].left, A.Binary) and mods[0].left.op == "+"
    assert copy.span.line > 1 and copy.span.column >= 1 and copy.span.end_column > copy.span.column


def test_precedence_folds_like_c():
    unit = parse("void f() { x = a + b * c - d << 2 & m; }").unit
    (assign,) = [n for n in unit.walk() if isinstance(n, A.Assign)]
    top = assign.value
    assert top.op == "&" and top.left.op == "<<" and top.left.left.op == "-"
    assert top.left.left.left.right.op == "*"


def test_shadowing_blockidx_hex_floats_casts_and_member_calls():
    src = KERNELS.joinpath("gemm_f16_sm_90_s3.cu").read_text()
    unit = parse(src).unit
    waits = [n for n in unit.walk() if isinstance(n, A.Call) and n.name == "wait"]
    assert waits and all(isinstance(w.callee.base, A.Index) for w in waits)
    casts = [n for n in unit.walk() if isinstance(n, A.Cast) and n.kind == "functional"]
    assert any(c.type == "uint64_t" for c in casts)
    hand = parse((HANDWRITTEN / "constructs.cu").read_text()).unit
    decls = [n for n in hand.walk() if isinstance(n, A.Declaration)]
    assert any(d.declarators[0].name == "blockIdx" and d.type == "dim3" for d in decls)
    numbers = {n.text: n.value for n in hand.walk() if isinstance(n, A.Number)}
    assert numbers["0x1.8p+1f"] == 3.0 and numbers["0xFFu"] == 255 and numbers["07"] == 7


def test_handwritten_constructs_parse_into_functions_structs_and_asm():
    parsed = parse((HANDWRITTEN / "constructs.cu").read_text())
    names = [f.name for f in parsed.unit.functions()]
    assert {"clamp_add", "smem_addr", "fence", "hand_kernel", "Pair", "sum"} <= set(names)
    asm = [n for n in parsed.unit.walk() if isinstance(n, A.Asm)]
    assert len(asm) == 2 and asm[0].sections[0][0].constraint == '"=r"'
    assert any(d.text.startswith("#define MAX") and "\\\n" in d.text for d in parsed.unit.directives)


def test_line_map_resolves_absolute_and_relative_paths():
    src = ('#line 10 "/abs/path/kernel.py"\nvoid f() {\n  int a = 1;\n'
           '#line 3 "rel/other.py"\n  int b = 2;\n}\n')
    parsed = parse(src)
    assert parsed.lines.origin(2).file == "/abs/path/kernel.py" and parsed.lines.origin(2).line == 10
    assert parsed.lines.origin(3).line == 10        # the statement's expansion: its directive's line (issue 34)
    assert parsed.lines.origin(5).file == "rel/other.py" and parsed.lines.origin(5).line == 3
    assert parsed.lines.origin(1) is None


def test_fixture_line_directives_point_at_relative_python():
    parsed = parse(KERNELS.joinpath("gemm_f16_sm_80_s3.cu").read_text())
    files = parsed.lines.files()
    assert "examples/gemm.py" in files
    assert all(not f.startswith("/") for f in files)


@pytest.mark.parametrize("src,line", [
    ("void f() { int a = ; }", 1),
    ("void f() {\n  x = (1 + ;\n}", 2),
    ("__global__ void k() {\n  for (int i = 0; i < 4; ++i) {\n", 2),
])
def test_syntax_errors_report_position_and_expectation(src, line):
    with pytest.raises(CudaSyntaxError) as info:
        parse(src)
    assert info.value.line == line
    assert "expected" in info.value.message


def test_pure_python_lark_and_lark_cython_build_the_same_ast():
    """The `fast` extra only swaps Lark's parser loop; the AST must not change."""
    from pipelint.cuda.parser import _Parser

    pure = _Parser(fast=False)
    assert not pure.fast
    for name in ("gemm_f16_sm_80_s3.cu", "flash_attn_fwd_sm_90_s2.cu"):
        text = KERNELS.joinpath(name).read_text()
        a, b = pure.parse(text), parse(text)
        assert a.unit == b.unit and a.unit.directives == b.unit.directives
    assert pure.parse((HANDWRITTEN / "constructs.cu").read_text()).unit == parse(
        (HANDWRITTEN / "constructs.cu").read_text()).unit
    with pytest.raises(CudaSyntaxError) as info:
        pure.parse("void f() { int a = ; }")
    assert info.value.line == 1 and "expected" in info.value.message


@pytest.mark.tilelang
@pytest.mark.skipif(__import__("importlib").util.find_spec("tilelang") is None, reason="needs tilelang")
@pytest.mark.parametrize("job", [("gemm.py", "matmul", "gemm_f16", {}, "sm_80", 3),
                                 ("flash_attention.py", "flash_attention", "flash_attn_fwd", {}, "sm_90", 2)])
def test_committed_fixtures_are_what_the_generator_produces(job, tmp_path):
    import sys

    sys.path.insert(0, str(KERNELS.parent))
    import generate

    name = generate.lower_one(job, tmp_path)
    assert (tmp_path / name).read_text() == (KERNELS / name).read_text()
