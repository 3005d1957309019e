"""The GPU-free half of the bench plugin, on data recorded on an H200 (docs/bench/)."""
from __future__ import annotations

import copy
import json

import pytest

from helpers import ROOT
from pipelint.plugins.bench_analysis import agreement, annotate, explain, knee, render_table

GEMM = ROOT / "docs" / "bench" / "gemm_8192.json"
GEMV = ROOT / "docs" / "bench" / "gemv_16384.json"


@pytest.fixture
def gemm():
    return json.loads(GEMM.read_text())


def test_knee_is_the_smallest_stage_count_within_tolerance(gemm):
    knees = [knee(cfg, 0.05)["num_stages"] for cfg in gemm["configs"]]
    assert knees == [4, 4, 3]
    assert [knee(cfg, 0.0)["num_stages"] for cfg in gemm["configs"]] == [4, 6, 4]  # strict best
    assert knee({"variants": [{"num_stages": 2, "status": "compile-failed"}]}, 0.05) is None


def test_static_estimate_agrees_with_the_compiled_kernel(gemm):
    variants = [v for cfg in gemm["configs"] for v in cfg["variants"]]
    assert variants and all(agreement(v) is None for v in variants)
    assert all(v["smem_bytes_compiled"] == v["smem_bytes_static"] for v in variants)
    broken = dict(variants[0], smem_bytes_static=variants[0]["smem_bytes_compiled"] // 2)
    assert "!=" in agreement(broken)


def test_explanations_come_from_static_facts():
    assert explain({"status": "ok", "latency_ms": 7.0, "static": {"versions": 1}}, 2.0, 0) == [
        "250% slower than the best", "single-buffered (1 version): each load waits for the previous compute"]
    reasons = explain({"status": "ok", "latency_ms": 3.0,
                       "static": {"in_flight": 0, "rules": ["wait-too-deep", "redundant-barrier"],
                                  "barriers_per_iteration": 3}}, 2.0, 2)
    assert any("cp_async_wait<0>" in r for r in reasons) and any("critical path" in r for r in reasons)
    assert "3 barriers per iteration (best variant: 2)" in reasons
    smem = explain({"status": "smem-exceeded", "static": {"rules": ["shared-memory-budget"]}}, None, None)
    assert smem == ["does not fit in shared memory (predicted: shared-memory-budget)"]


def test_noticeably_slower_variants_are_flagged_even_without_a_static_reason():
    # a variant 19% slower than the best used to get no note (the threshold was 1.25x)
    assert explain({"status": "ok", "latency_ms": 1.19, "static": {}}, 1.0, 0) == [
        "19% slower than the best, with no static explanation"]
    assert explain({"status": "ok", "latency_ms": 1.03, "static": {}}, 1.0, 0) == []     # within the tolerance


def test_recorded_runs_carry_no_machine_paths():
    from pipelint.plugins.bench import portable_command

    for record in (ROOT / "docs" / "bench").glob("*.json"):
        text = record.read_text()
        assert not any(p in text for p in ("/root/", "/home/", "/tmp/", "/work/")), record.name
    assert portable_command(["k.py", "--output", "/root/out/run.json"]) == "pipelint bench k.py --output run.json"


def test_annotated_record_fractions_and_table(gemm):
    doc = annotate(copy.deepcopy(gemm))
    best = min(v["latency_ms"] for cfg in doc["configs"] for v in cfg["variants"])
    frac = max(v["fraction_of_reference"] for cfg in doc["configs"] for v in cfg["variants"])
    assert 0.85 < frac < 0.95 and frac == pytest.approx(doc["configs"][1]["reference_ms"] / best)
    text = render_table(doc)
    assert "knee: num_stages=4" in text and "knee: num_stages=3" in text
    assert "single-buffered" in text


def test_bench_renders_recorded_runs_and_plots_without_a_gpu(run_cli, tmp_path):
    png = tmp_path / "gemv.png"
    res = run_cli("bench", "--from-json", GEMV, "--plot", png)
    assert res.code == 0 and "knee: num_stages=2" in res.out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_without_a_gpu_says_so_in_one_line(run_cli):
    res = run_cli("bench", ROOT / "examples" / "gemm.py")
    assert res.code == 2
    assert res.err.count("\n") == 1 and "GPU" in res.err


@pytest.mark.tilelang
@pytest.mark.skipif(__import__("importlib").util.find_spec("tilelang") is None, reason="needs tilelang")
def test_static_side_of_a_bench_variant_runs_on_cpu(tmp_path, monkeypatch):
    """What bench puts beside each measurement comes from compile-only lowering (no GPU)."""
    import argparse

    from pipelint.lowering.driver import KernelRef
    from pipelint.pluginhost import load_plugins
    from pipelint.plugins.bench import _static_side

    monkeypatch.setenv("PIPELINT_CACHE_DIR", str(tmp_path))
    facts = _static_side(argparse.Namespace(jobs=2), load_plugins(), KernelRef(str(ROOT / "examples" / "gemm.py"), "matmul"),
                         "sm_90", {"M": 8192, "N": 8192, "K": 8192, "block_K": 64}, [1, 3])
    assert facts[1]["versions"] == 1 and facts[3]["versions"] == 3
    # the recorded H200 run compiled this very variant with 98304 bytes of dynamic shared memory
    recorded = json.loads(GEMM.read_text())["configs"][2]["variants"][2]
    assert recorded["num_stages"] == 3 and facts[3]["smem_dynamic"] == recorded["smem_bytes_compiled"] == 98304
    assert facts[3]["rules"] == []


def test_measure_config_wiring_with_a_fake_gpu(monkeypatch):
    """The timing loop's bookkeeping (statuses, throughput, reference timing) without a GPU."""
    import types

    import torch

    import pipelint.plugins.bench as bench

    class Profiler:
        def assert_allclose(self, reference, atol, rtol):
            if reference == "wrong":
                raise AssertionError("mismatch\nmore")

    class Kernel:
        def get_profiler(self):
            return Profiler()

    def compile_(file, name, params, n, out_idx):
        if n == 4:
            raise RuntimeError("ptxas: too many resources requested for launch\nshared memory")
        return Kernel()

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(bench, "_compile", compile_)
    monkeypatch.setattr(bench, "compiled_dyn_smem", lambda kernel, again: (49152, "attr"))
    monkeypatch.setattr(bench, "_static_side", lambda *a: {2: {"smem_dynamic": 49152}})
    monkeypatch.setattr(bench, "_time", lambda profiler, func=None, args=None: (0.5, 0.01, 7))
    args = types.SimpleNamespace(num_stages=[2, 3, 4], flops=None, bytes=None, out_idx=None)
    ref = types.SimpleNamespace(file="k.py", name="k")
    params = {"M": 1024, "N": 1024, "K": 1024}
    entry = bench._measure_config(args, None, ref, "sm_90", params, {}, {(repr(params), 3): "compile boom"},
                                  reference="ok")
    v2, v3, v4 = entry["variants"]
    assert v2["status"] == "ok" and v2["correct"] and v2["smem_bytes_static"] == 49152
    assert abs(v2["throughput"] - 2 * 1024 ** 3 / 0.5e-3 / 1e12) < 1e-9
    assert v3["status"] == "compile-failed" and v3["error"] == "compile boom"
    assert v4["status"] == "smem-exceeded"
    assert entry["reference_ms"] == 0.5
    wrong = bench._measure_config(args, None, ref, "sm_90", params, {}, {}, reference="wrong")
    assert wrong["variants"][0]["status"] == "incorrect" and wrong["variants"][0]["error"] == "mismatch"
