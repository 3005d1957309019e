"""The rules over lowered variants can fire (the sweep of `pipelint lower`, built from facts here); the
kernel rules' cases are the folders of tests/rules/ (tests/test_rule_cases.py)."""
from __future__ import annotations

import importlib.util

import pytest
from helpers import ROOT, fixture

from pipelint.cuda import parse
from pipelint.lowering.sweep import LoweredVariant
from pipelint.model import KernelModel
from pipelint.pluginhost import load_plugins

HOST = load_plugins()


def _sweep(variants, rule: str) -> list:
    """What the lowering-facts plugin reports through its hook, for one rule."""
    findings, errors = HOST.check_variants(list(variants))
    assert errors == []
    return [f for f in findings if f.rule == rule]


def _planner(v):
    return _sweep([v], "planner-stages")


def _ir_vs_cuda(v):
    return _sweep([v], "ir-cuda-mismatch")


def _trends(variants):
    return _sweep(variants, "stage-trend")


def _budget(v):
    return _sweep([v], "shared-memory-budget")


def _variant(name: str, n: int, facts: dict, model_of: str | None = None) -> LoweredVariant:
    model = None
    if model_of:
        parsed = parse(fixture(model_of).read_text())
        model = KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)
    return LoweredVariant(name, "sm_80", n, True, None, facts, model=model)


def _loop(stage, order, n, producers=None):
    return {"loop_var": "k", "software_pipeline_stage": stage, "software_pipeline_order": order,
            "tl_pipelined_num_stages": n, "software_pipeline_async_producers": producers or [1, 1, 0]}


def test_planner_invariants():
    assert _planner(_variant("g", 3, {"pipelined_loops": [_loop([0, 0, 2], [0, 1, 2], 3)]})) == []
    assert _planner(_variant("g", 1, {"pipelined_loops": [_loop([0, 0, 1], [1, 2, 0], 1)]})) == []
    attention = _loop([0, 2, 2, 2, 2, 2, 2, 2, 2, 0, 2, 2, 2], [2, 0, 1, 3, 4, 5, 6, 7, 8, 10, 9, 11, 12], 2,
                      [1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0])
    assert _planner(_variant("fa", 2, {"pipelined_loops": [attention]})) == []
    bad = [_loop([0, 0, 3], [0, 1, 2], 3), _loop([0, 1, 2], [0, 1, 2], 3), _loop([0, 0, 2], [0, 0, 2], 3),
           _loop([1, 0, 2], [0, 1, 2], 3), _loop([0, 0, 2], [0, 1, 2], 4)]
    for loop in bad:
        assert _planner(_variant("g", 3, {"pipelined_loops": [loop]})), loop
    assert _planner(_variant("g", 0, {"pipelined_loops": [_loop([0, 0, 1], [0, 1, 2], 1)]}))


def test_ir_versions_must_match_the_cuda():
    ok = _variant("g", 3, {"shared_shapes": {"A_shared": [3, 128, 32]}}, "gemm_f16_sm_80_s3.cu")
    assert _ir_vs_cuda(ok) == []
    bad = _variant("g", 3, {"shared_shapes": {"A_shared": [4, 128, 32]}}, "gemm_f16_sm_80_s3.cu")
    (f,) = _ir_vs_cuda(bad)
    assert f.rule == "ir-cuda-mismatch" and "4 versions" in f.message


def test_trends_across_num_stages():
    # labels swapped on purpose: the variant called num_stages=3 has the smaller pipeline
    falling = [_variant("g", 2, {}, "gemm_f16_sm_80_s3.cu"), _variant("g", 3, {}, "gemm_f16_sm_80_s2.cu")]
    messages = [f.message for f in _trends(falling)]
    assert any("versions fall" in m for m in messages) and any("in-flight depth falls" in m for m in messages)
    rising = [_variant("g", n, {}, f"gemm_f16_sm_80_s{n}.cu") for n in (2, 3, 4)]
    assert _trends(rising) == []


def test_shared_memory_budget():
    v = _variant("g", 4, {"shared_shapes": {"A_shared": [4, 128, 32], "A_shared@bytes": [2],
                                           "B_shared": [4, 32, 128], "B_shared@bytes": [2]}},
                 "gemm_f16_sm_80_s4.cu")
    assert _budget(v) == []  # 64 KiB
    v.facts["shared_shapes"].update({"B_shared": [4, 32, 1024]})
    v.arch = "sm_80"
    (f,) = _budget(v)
    assert f.rule == "shared-memory-budget" and "166912" in f.message


@pytest.mark.tilelang
@pytest.mark.skipif(importlib.util.find_spec("tilelang") is None, reason="needs tilelang")
def test_budget_from_a_real_lowering(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PIPELINT_CACHE_DIR", str(tmp_path))
    res = run_cli("lower", ROOT / "examples" / "gemm.py", "--num-stages", "4", "--arch", "sm_80",
                  "--param", "block_M=256", "--param", "block_N=256", "--param", "block_K=64",
                  "--format", "json")
    doc = res.json
    (v,) = doc["variants"]
    if not v["ok"]:
        pytest.skip(f"TileLang did not lower this shape: {v['error']}")
    assert v["shared_bytes"] > 163 * 1024
    assert any(f["rule"] == "shared-memory-budget" for f in v["findings"]) and res.code == 1


