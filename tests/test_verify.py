"""`pipelint verify`'s joining and reporting, on the recorded H200 run of the mutation suite
(docs/validation/mutation_suite.json); no GPU needed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ROOT

from pipelint.plugins.verify import _parse, make_row, render
from pipelint.plugins.verify_join import failures, join, render_table

RECORD = json.loads((ROOT / "docs" / "validation" / "mutation_suite.json").read_text())
ROWS = RECORD["rows"]


def _rejoined(row):
    severities = {f["rule"]: f["severity"] for f in row["findings"]}
    return join([f["rule"] for f in row["findings"]], row["dynamic"], severities)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["variant"])
def test_recorded_verdicts_follow_from_the_recorded_data(row):
    assert _rejoined(row) == row["join"]


def test_the_recorded_run_has_no_dynamic_only_gap_and_no_false_alarm():
    assert [r["variant"] for r in ROWS if r["join"]["verdict"] == "dynamic only"] == []
    clean = [r for r in ROWS if r["kind"] in ("clean", "equivalent")]
    assert clean and all(not r["join"]["static_errors"] and not r["join"]["dynamic_failures"] for r in clean)
    defects = [r for r in ROWS if r["kind"] == "defect"]
    assert len(defects) >= 20 and {r["planted_rule"] for r in defects} >= {"missing-barrier", "mbarrier-deadlock"}
    # every planted defect is reported by pipelint (errors, or the performance rule it plants)
    assert all(r["planted_rule"] in r["join"]["static_errors"] + r["join"]["static_other"] for r in defects)
    # what the dynamic tools alone miss: the fence defects (static only)
    assert {r["variant"] for r in defects if r["join"]["verdict"] == "static only"} == {
        "drop-fence-barrier-init", "drop-tma-store-fence"}


def test_failures_are_read_from_each_tool():
    assert failures({"run": {"timeout": True}}) == ["hang"]
    assert failures({"run": {"correct": False}, "racecheck": {"errors": 3}}) == ["output", "racecheck"]
    assert failures({"run": {"crashed": True}, "synccheck": {"errors": 0}}) == ["crash"]
    assert failures({"run": {"correct": True}, "racecheck": {"timeout": True, "reports": 2}}) == ["racecheck"]


def test_join_matches_kinds():
    sev = {"missing-barrier": "error", "mbarrier-deadlock": "error", "redundant-barrier": "warning"}
    assert join(["missing-barrier"], {"racecheck": {"errors": 1}}, sev)["verdict"] == "confirmed"
    assert join(["mbarrier-deadlock"], {"run": {"correct": False}}, sev)["verdict"] == "confirmed (different kind)"
    assert join(["missing-barrier"], {}, sev)["verdict"] == "static only"
    assert join([], {"run": {"timeout": True}}, sev)["verdict"] == "dynamic only"
    assert join(["redundant-barrier"], {}, sev)["verdict"] == "static only (performance)"
    table = render_table([{"variant": "v", "join": join([], {"run": {"timeout": True}}, sev)}])
    assert "DYNAMIC ONLY (a gap in pipelint): v" in table


def test_sanitizer_summaries_are_parsed():
    race = "========= RACECHECK SUMMARY: 12 hazards displayed (10 errors, 2 warnings)\nRESULT {\"ran\": true}"
    assert _parse("racecheck", race, 1, False)["errors"] == 10
    assert _parse("synccheck", "========= ERROR SUMMARY: 0 errors\nRESULT {}", 0, False)["errors"] == 0
    assert _parse("run", "boom", 1, False)["crashed"] is True
    assert _parse("run", "", None, True)["timeout"] is True


def test_reports_in_json_and_sarif_with_the_gpu_verdict_as_property():
    from pipelint.findings import Finding, Location, Severity
    from pipelint.pluginhost import load_plugins

    host = load_plugins()
    f = Finding("missing-barrier", Severity.ERROR, "race", Location("num_stages=2", 79, 5))
    row = make_row("num_stages=2", [f], {"run": {"correct": False}, "racecheck": {"errors": 4}}, host)
    doc = json.loads(render("json", [row], host))
    assert doc["variants"][0]["join"]["verdict"] == "confirmed"
    sarif = json.loads(render("sarif", [row], host))
    [result] = sarif["runs"][0]["results"]
    assert result["properties"]["gpu"]["verdict"] == "confirmed"


def test_verify_without_a_gpu_says_so_in_one_line(run_cli):
    res = run_cli("verify", "examples/gemm.py", "--num-stages", "2")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "no CUDA GPU" in res.err


def test_sanitizers_run_the_kernel_without_the_reference(monkeypatch):
    """A reference such as torch.matmul runs cuBLAS kernels: under racecheck their reports would be
    blamed on the kernel (seen on the H200: 1 'error' on TileLang's clean GEMM until this)."""
    import subprocess

    from pipelint.plugins import verify

    seen = {}

    def fake_run(cmd, **kw):
        spec = json.loads(Path(cmd[-1]).read_text())
        seen[cmd[2] if cmd[0] == "compute-sanitizer" else "run"] = spec
        out = "RESULT {\"ran\": true}\n========= ERROR SUMMARY: 0 errors\n"
        return subprocess.CompletedProcess(cmd, 0, out, "")

    monkeypatch.setattr(verify.subprocess, "run", fake_run)
    result = verify.dynamic_runs({"file": "k.py", "cuda": "k.cu", "reference_expr": "torch.matmul",
                                  "reference": "ref.pt", "out": "out.pt"}, ("racecheck", "synccheck"), 5)
    assert seen["run"]["reference_expr"] == "torch.matmul"
    assert all("reference_expr" not in seen[t] and "reference" not in seen[t] for t in ("racecheck", "synccheck"))
    assert result["synccheck"]["errors"] == 0 and result["run"]["ran"] is True


# ---------------------------------------------------------------- --forced-schedule (issue 36), GPU runs faked
def _forced_args(**kw):
    import argparse

    base = {"forced_schedule": True, "twin": None, "evidence_dir": None, "jobs": 4}
    return argparse.Namespace(**{**base, **kw})


def test_forced_schedule_options_are_checked_before_anything_runs(tmp_path):
    from pipelint.errors import UsageError
    from pipelint.plugins.verify import _forced_options

    with pytest.raises(UsageError, match="--twin .*missing.cu"):
        _forced_options(_forced_args(twin=str(tmp_path / "missing.cu")))
    with pytest.raises(UsageError, match="go with --forced-schedule"):
        _forced_options(_forced_args(forced_schedule=False, evidence_dir=str(tmp_path)))
    with pytest.raises(UsageError, match="--jobs 0"):
        _forced_options(_forced_args(jobs=0))
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="--evidence-dir"):
        _forced_options(_forced_args(evidence_dir=str(tmp_path / "file" / "sub")))


def test_forced_runs_confirm_with_the_delay_and_keep_the_evidence(monkeypatch, tmp_path):
    """A delay that changes the buggy kernel's output and not the twin's confirms the finding; the
    verdict is a SARIF property; the variants' CUDA lies in the evidence folder."""
    from pipelint.pluginhost import load_plugins
    from pipelint.plugins import verify

    hand = ROOT / "tests" / "fixtures" / "handwritten" / "wg_partial_sync_sm_80_s0.cu"
    twin = (ROOT / "tests" / "fixtures" / "kernels" / "wg_full_sync_sm_80_s0.cu").read_text()
    seen = []

    def fake_dynamic_runs(spec, tools, timeout, env=None):
        text = Path(spec["cuda"]).read_text()
        seen.append(spec["cuda"])
        # the buggy kernel breaks when warps 0-3 are late before their store; the twin never does
        late_writers = "(0 <= ((int)threadIdx.x) && ((int)threadIdx.x) < 128)" in text
        buggy = not Path(spec["cuda"]).name.startswith("twin")   # the twin runs as twin*.cu
        return {"run": {"ran": True, "mismatches": 128 if late_writers and buggy else 0}}

    monkeypatch.setattr(verify, "dynamic_runs", fake_dynamic_runs)
    host = load_plugins()
    out, seconds = verify.forced_runs(host, {"file": "x.py"}, hand.read_text(), twin, {"run": {"ran": True}},
                                      tmp_path, tmp_path / "evidence", 10, 2, "num_stages=0")
    [f] = out
    assert f["rule"] == "barrier-scope" and f["verify"]["verdict"] == "confirmed by forced schedule"
    assert f["verify"]["mismatches"] == 128 and "warps 0-3" in f["verify"]["delay"]
    assert f["verify"]["harness_error"] is None and seconds >= 0
    files = {p.name for p in (tmp_path / "evidence").iterdir()}
    assert {"delay_1.cu", "delay_2.cu", "twin.cu", "twin_delay_1.cu", "forced_schedule.json"} <= files
    from pipelint.findings import Finding, Location, Severity

    row = make_row("num_stages=0", [Finding("barrier-scope", Severity.ERROR, "race", Location("num_stages=0", 33))],
                   {"run": {"correct": True}}, host)
    row["forced"] = out
    sarif = json.loads(render("sarif", [row], host))
    props = sarif["runs"][0]["results"][0]["properties"]
    assert props["verify.verdict"] == "confirmed by forced schedule" and props["verify.mismatches"] == 128
    assert props["witness"]["second"]["threads"] == "128-255"
    assert "forced schedules:" in render("text", [row], host)


def test_arch_names_the_target_the_kernel_was_lowered_for(monkeypatch):
    """`--arch sm_80` on a Hopper GPU: the variants are lowered and launched as sm_80's (warp
    specialisation and TMA off), so that an sm_80 kernel's 128 threads are what the launch asks
    for (on the H100, TileLang's sm_90 launcher asked for 256 and the launch failed)."""
    import argparse

    import torch

    from pipelint.errors import UsageError
    from pipelint.plugins import verify

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    seen = []
    monkeypatch.setattr(verify, "verify_variant", lambda host, file, name, params, n, arch, *a, **k: seen.append(arch))
    args = argparse.Namespace(param=[], config=[], cu=None, tools="racecheck", timeout=1.0, reference=None,
                              num_stages=[2], forced_schedule=False, twin=None, evidence_dir=None, jobs=1, arch=None)
    verify._verify_all(args, None, "examples/gemm.py:matmul")
    verify._verify_all(argparse.Namespace(**{**vars(args), "arch": "sm_80"}), None, "examples/gemm.py:matmul")
    assert seen == ["sm_90", "sm_80"]
    assert verify.SM80_ON_HOPPER == {"tl.disable_warp_specialized": True, "tl.disable_tma_lower": True}
    with pytest.raises(UsageError, match="--arch 80"):
        verify._verify_all(argparse.Namespace(**{**vars(args), "arch": "80"}), None, "examples/gemm.py:matmul")
