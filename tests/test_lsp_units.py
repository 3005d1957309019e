"""The editor integration's parts without TileLang or an LSP client: what the Python buffer says,
the code digest that lets a suppression skip the lowering, `[tool.pipelint.lower]`, the
analysis of lowered CUDA at Python lines (on committed TileLang output), and the edit the
suppression code action makes."""
from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from helpers import ROOT

from pipelint.config import load_config
from pipelint.errors import UsageError
from pipelint.lsp.analysis import analyze_cuda, analyze_python
from pipelint.lsp.lowering import dump_folder
from pipelint.lsp.pysource import code_digest, scan
from pipelint.lsp.settings import LowerSettings, lower_settings, parse_lower_table
from pipelint.pluginhost import load_plugins

GEMM = (ROOT / "examples" / "gemm.py").read_text()
LINES = GEMM.splitlines()
PIPELINED = next(i for i, t in enumerate(LINES, 1) if "T.Pipelined(" in t)
FIXTURE = ROOT / "tests" / "fixtures" / "kernels" / "gemm_f16_sm_80_s3.cu"


@pytest.fixture(scope="module")
def host():
    return load_plugins()


def test_scan_finds_kernels_loops_buffers_and_suppressions():
    src = scan(GEMM.replace("num_stages=num_stages):", "num_stages=num_stages):  # pipelint: ignore[a, b]"))
    assert src.uses_tilelang and src.syntax_error is None
    assert src.kernels["matmul"][0] == next(i for i, t in enumerate(LINES, 1) if t.startswith("def matmul("))
    [loop] = src.loops
    assert (loop.span.line, loop.var, loop.kernel) == (PIPELINED, "k", "matmul")
    assert loop.span.end_col == LINES[PIPELINED - 1].rindex(")") + 1
    assert [a.name for a in src.allocs] == ["A_shared", "B_shared"]
    assert src.suppressions == {PIPELINED: {"a", "b"}}
    assert scan("def f(:\n").syntax_error is not None
    wide = scan("def k():\n    for é in T.Pipelined(4):\n        pass\n").loops[0].span
    assert (wide.col, wide.end_col) == (13, 27)                 # characters, not UTF-8 bytes
    assert not scan("import numpy\n").uses_tilelang


def test_code_digest_ignores_comments_but_not_code_or_lines():
    base = code_digest(GEMM)
    commented = GEMM.replace("num_stages=num_stages):", "num_stages=num_stages):  # pipelint: ignore[x]")
    assert code_digest(commented) == base
    assert code_digest(GEMM.replace("block_K=32", "block_K=64")) != base
    assert code_digest("# a new line\n" + GEMM) != base          # `#line` numbers move
    assert code_digest(GEMM.replace("'#'", "'#'")) == base
    assert code_digest('x = "# not a comment"\n') != code_digest('x = ""\n')


def test_lower_table_is_validated():
    s = parse_lower_table({"arch": "sm_90", "num-stages": [2, 3, 3], "params": {"block_K": 64}, "timeout": 30},
                          "t")
    assert s == LowerSettings(("sm_90",), (2, 3), {"block_K": 64}, 30.0)
    assert parse_lower_table({}, "t") == LowerSettings()
    for bad, word in [({"arch": ["sm_99"]}, "unknown arch"), ({"num-stages": [-1]}, "num-stages"),
                      ({"stages": 3}, "unknown key"), ({"timeout": 0}, "timeout"), ({"params": []}, "params")]:
        with pytest.raises(UsageError, match=word):
            parse_lower_table(bad, "t")


def test_lower_settings_come_from_the_configuration_check_reads(tmp_path, host):
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint]\nignore = ["redundant-barrier"]\n'
                                             '[tool.pipelint.lower]\narch = ["sm_80"]\nnum-stages = 2\n')
    (tmp_path / "k.py").write_text("import tilelang\n")
    config = load_config([str(tmp_path / "k.py")], None, host)
    assert lower_settings(config) == LowerSettings(("sm_80",), (2,))
    assert lower_settings(load_config([str(ROOT / "examples" / "gemm.py")], None, host)) == LowerSettings()


def _lowered(py_path: str, cuda: str) -> dict:
    """What the workers return for examples/gemm.py at sm_80 num_stages=3, from committed output
    (the planner's facts as TileLang 0.1.15 gives them for it)."""
    return {"ok": True, "kernels": [{"name": "matmul", "kind": "factory", "variants": [{
        "arch": "sm_80", "num_stages": 3, "ok": True, "kind": "factory",
        "cuda": cuda.replace('"examples/gemm.py"', json.dumps(py_path)),
        "pipelined_loops": [{"loop_var": "k", "extent": 32, "software_pipeline_stage": [0, 0, 2],
                             "software_pipeline_order": [0, 1, 2], "tl_pipelined_num_stages": 3,
                             "software_pipeline_async_producers": [1, 1, 0],
                             "software_pipeline_async_stages": [0]}],
        "shared_shapes": {"A_shared": [3, 128, 32], "A_shared@bytes": [2],
                          "B_shared": [3, 32, 128], "B_shared@bytes": [2]}}]}]}


def _mutant():
    sys.path.insert(0, str(ROOT / "tests" / "mutants"))
    from mutate import drop_barrier_after_wait

    return drop_barrier_after_wait()


def test_findings_of_lowered_cuda_land_on_the_python_line(tmp_path, host):
    py = tmp_path / "gemm.py"
    py.write_text(GEMM)
    mutant = _mutant()
    config = load_config([str(py)], None, host)
    dump = dump_folder(tmp_path / "cache" / "lsp", str(py))     # the server's: <cache root>/lsp/cuda/<file>
    analysis = analyze_python(str(py), GEMM, _lowered(str(py), mutant.text), host, config, dump)
    races = [d for d in analysis.diagnostics if d.rule == "missing-barrier"]
    assert [d.line for d in races] == [PIPELINED]
    assert races[0].variants == ("sm_80 num_stages=3",) and "more like it" in races[0].message
    assert races[0].doc.endswith("docs/rules/missing-barrier.md")
    assert {r.line for r in races[0].related if r.path == str(py)} >= {PIPELINED + 1, PIPELINED + 2}
    assert (dump / "matmul_sm_80_s3.cu").is_file()
    clean = analyze_python(str(py), GEMM, _lowered(str(py), FIXTURE.read_text()), host, config, None)
    assert clean.diagnostics == []
    assert clean.inlay_hints(1, len(LINES))[0] == (PIPELINED, LINES[PIPELINED - 1].rindex(")") + 1,
                                                    "3 stages · 48 KB smem · 2 groups in flight")
    assert "| stage | [0, 0, 2] |" in (clean.hover(PIPELINED, 20) or "")


def test_suppression_in_the_buffer_applies_before_it_is_saved(tmp_path, host):
    py = tmp_path / "gemm.py"
    py.write_text(GEMM)
    text = GEMM.replace("num_stages=num_stages):", "num_stages=num_stages):  # pipelint: ignore[missing-barrier]")
    config = load_config([str(py)], None, host)
    analysis = analyze_python(str(py), text, _lowered(str(py), _mutant().text), host, config, None)
    assert not [d for d in analysis.diagnostics if d.rule == "missing-barrier"]


def test_import_failure_is_one_diagnostic_on_its_line(host):
    analysis = analyze_python("k.py", GEMM, {"ok": False, "kind": "import", "line": 9,
                                             "error": "raises on import: ValueError: x"}, host, None, None)
    assert [(d.line, d.rule) for d in analysis.diagnostics] == [(9, "lowering-failed")]


def test_cu_buffer_is_checked_with_its_own_suppressions(tmp_path, host):
    mutant = _mutant()
    path = str(tmp_path / "k.cu")
    config = load_config([path], None, host)
    found = analyze_cuda(path, mutant.text, host, config).diagnostics
    assert [d.line for d in found if d.rule == "missing-barrier"] == [mutant.line]
    lines = mutant.text.split("\n")
    lines[mutant.line - 1] += "  // pipelint: ignore[missing-barrier]"
    again = analyze_cuda(path, "\n".join(lines), host, config).diagnostics
    assert not [d for d in again if d.rule == "missing-barrier"]


@pytest.mark.skipif(importlib.util.find_spec("pygls") is None, reason="needs the lsp extra")
def test_suppression_edit_appends_or_extends_the_comment():
    from pipelint.lsp.server import suppression_edit

    edit = suppression_edit("x = 1\nfor k in T.Pipelined(4):\n", 1, "missing-barrier", cuda=False)
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == \
        (1, 24, "  # pipelint: ignore[missing-barrier]")
    edit = suppression_edit("for k in T.Pipelined(4):  # pipelint: ignore[a]\n", 0, "b", cuda=False)
    assert edit.new_text == "a, b"
    assert suppression_edit("f();  // pipelint: ignore[b]\n", 0, "b", cuda=True) is None


def test_findings_never_land_past_the_kernel(tmp_path, host):
    """Counting CUDA lines past the last `#line` (C's rule) puts row_sum's epilogue barriers on
    lines 30 and 31 of a 23-line file: the editor takes the statement's own `#line` instead."""
    py = tmp_path / "reduction.py"
    text = (ROOT / "examples" / "reduction.py").read_text()
    py.write_text(text)
    cuda = (ROOT / "tests" / "fixtures" / "kernels" / "row_sum_sm_80_s2.cu").read_text()
    lowered = {"ok": True, "kernels": [{"name": "row_sum", "kind": "factory", "variants": [{
        "arch": "sm_80", "num_stages": 2, "ok": True, "kind": "factory", "pipelined_loops": [], "shared_shapes": {},
        "cuda": cuda.replace('"examples/reduction.py"', json.dumps(str(py)))}]}]}
    found = analyze_python(str(py), text, lowered, host, load_config([str(py)], None, host), None).diagnostics
    lo, hi = scan(text).kernels["row_sum"]
    assert found and all(lo <= d.line <= hi for d in found), [(d.line, d.rule) for d in found]


def test_lowering_cache_key_follows_the_modules_beside_the_kernel(tmp_path):
    from pipelint.lsp.lowering import cache_key
    from pipelint.lsp.pysource import local_imports

    (tmp_path / "tiles.py").write_text("BLOCK_K = 32\n")
    kernel = tmp_path / "k.py"
    text = "import tilelang\nfrom tiles import BLOCK_K\nimport os\n"
    assert local_imports(text, str(tmp_path)) == [str(tmp_path / "tiles.py")]
    before = cache_key(str(kernel), text, LowerSettings(), "0.1.15")
    assert cache_key(str(kernel), text + "# note\n", LowerSettings(), "0.1.15") != before   # a new line
    assert cache_key(str(kernel), text.replace("\n", "  # c\n", 1), LowerSettings(), "0.1.15") == before
    (tmp_path / "tiles.py").write_text("BLOCK_K = 64\n")
    assert cache_key(str(kernel), text, LowerSettings(), "0.1.15") != before


def test_lowering_cache_keys_follow_imported_modules_transitively_and_the_path(tmp_path):
    """Issue 39: an edit of a module the kernel imports (through another one) changes both lowering
    caches' keys; so does a copy of the file at another path (its CUDA's `#line` names the path)."""
    from pipelint.lowering.driver import KernelRef, cache_key
    from pipelint.lowering.imports import project_imports

    (tmp_path / "kernel.py").write_text("from config import TILE\nimport tilelang\n")
    (tmp_path / "config.py").write_text("from tiles import BLOCK_K\nTILE = BLOCK_K\n")
    (tmp_path / "tiles.py").write_text("BLOCK_K = 64\n")
    assert project_imports(str(tmp_path / "kernel.py")) == [str(tmp_path / "config.py"), str(tmp_path / "tiles.py")]
    ref = KernelRef(str(tmp_path / "kernel.py"), "matmul")
    before = cache_key(ref, {}, "sm_80", 2, "0.1.15")
    (tmp_path / "tiles.py").write_text("BLOCK_K = 32\n")
    assert cache_key(ref, {}, "sm_80", 2, "0.1.15") != before
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("kernel.py", "config.py", "tiles.py"):
        (copy / name).write_text((tmp_path / name).read_text())
    assert cache_key(KernelRef(str(copy / "kernel.py"), "matmul"), {}, "sm_80", 2, "0.1.15") != \
        cache_key(ref, {}, "sm_80", 2, "0.1.15")
