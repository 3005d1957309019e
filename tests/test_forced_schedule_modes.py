"""Forced schedules (issue 36), the STRETCH and STRESS forcings and the `not run` verdict, CPU only.

STRETCH issues the wgmma batch N times on both kernels, so a stretched run's right answer is the
stretched twin, never the unstretched one (round 8 compared those two and flagged every stretched
control as a harness error).  STRESS changes no kernel text: the host starts a bandwidth hog.  A
twin that did not run gives `not run` with a harness error, never `not reproduced`."""
from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path

from helpers import ROOT

from pipelint.plugins import forced_schedule as fs
from pipelint.plugins.forced_schedule_verdict import (
    CONFIRMED_FORCED,
    CONFIRMED_OUTPUT,
    NOT_REPRODUCED,
    NOT_RUN,
    STRETCH_VOID,
    comparisons,
    control_changes,
    finding_verdict,
)

HAND = ROOT / "tests" / "fixtures" / "handwritten"
KERNELS = ROOT / "tests" / "fixtures" / "kernels"
VALIDATION = ROOT / "benchmarks" / "validation"
RECORDS = ROOT / "docs" / "validation"
sys.path.insert(0, str(VALIDATION))
sys.path.insert(0, str(ROOT / "benchmarks"))

OK = {"timeout": False, "crashed": False}
NATURAL_RIGHT = {"runs": [{**OK, "mismatches": 0}, {**OK, "mismatches": 0}], "wrong": 0, "wrong_runs": [0, 0],
                 "poisoned": 0, "twin_poisoned": 0}
N = 1048576


# ------------------------------------------------------------------ STRETCH: which run is the baseline
def _stretch_rows():
    """release_early's delays as the plan numbers them: two spins, two refills, stretch 8, stretch
    32, and stretch 32 with each refill."""
    return [{"number": 1, "mode": "spin", "repeat": 0, "joint": []},
            {"number": 2, "mode": "spin", "repeat": 0, "joint": []},
            {"number": 3, "mode": "refill", "repeat": 0, "joint": []},
            {"number": 4, "mode": "refill", "repeat": 0, "joint": []},
            {"number": 5, "mode": "stretch", "repeat": 8, "joint": []},
            {"number": 6, "mode": "stretch", "repeat": 32, "joint": []},
            {"number": 7, "mode": "stretch", "repeat": 32, "joint": ["refill"]},
            {"number": 8, "mode": "stretch", "repeat": 32, "joint": ["refill"]}]


def test_a_stretch_is_compared_with_the_stretched_twin_never_the_unstretched_one():
    c = comparisons(_stretch_rows())
    plain = {"wrong": "twin", "changed": "v0", "control": "t1", "control_base": "t0", "twin_repeat": False}
    assert c[1] == plain and c[3]["wrong"] == "twin" and c[3]["control_base"] == "t0"
    # the stretch alone: the stretched twin is the answer, and its control is a second run of itself
    assert c[5] == {"wrong": "t5", "changed": "t5", "control": "t5r", "control_base": "t5", "twin_repeat": True}
    assert c[6]["wrong"] == "t6" and c[6]["control"] == "t6r"
    # the stretch with a refill: the stretch alone (same N, number 6) is the base on both sides
    assert c[7] == {"wrong": "t6", "changed": "v6", "control": "t7", "control_base": "t6", "twin_repeat": False}
    assert c[8]["control_base"] == "t6" and c[8]["wrong"] == "t6"
    assert all(c[k]["control_base"] != "t0" and c[k]["wrong"] != "twin" for k in (5, 6, 7, 8))
    # a joint stretch whose stretch alone is not in the plan is its own baseline
    lone = comparisons([{"number": 3, "mode": "stretch", "repeat": 32, "joint": ["refill"]}])
    assert lone[3]["wrong"] == "t3" and lone[3]["twin_repeat"]


def _stretch_delay(number, variant, control, joint=False, describe=None):
    return {"number": number, "describe": describe or f"stretch {number}", "mode": "stretch",
            "repeat": 32, "joint": ["refill"] if joint else [], "variant": variant, "control": control}


def test_a_stretched_kernel_wrong_against_the_stretched_twin_confirms_and_the_twin_is_no_harness_error():
    # what round 8 measured against the unstretched twin: all 1048576 elements differ on both sides
    # (N x A.B); against the stretched twin the controls are 0 and only the buggy kernel is wrong
    stretched = {**OK, "mismatches": 512, "vs_poisoned": 512, "wrong": 512, "wrong_repeat": 498, "baseline": "t6"}
    control = {**OK, "mismatches": 0, "vs_poisoned": 0, "baseline": "t6"}
    f = {"delays": [_stretch_delay(6, stretched, control)]}
    v = finding_verdict(f, NATURAL_RIGHT, {"racecheck": {"errors": 0}})
    assert v["harness_error"] is None
    assert v["verdict"] == CONFIRMED_FORCED and v["delay"] == "stretch 6" and v["mismatches"] == 498
    assert "(against t6, twin against t6)" in v["tried"][0]
    assert control_changes([{"findings": [f]}]) == (0, 1)


def test_a_stretched_twin_that_differs_from_its_own_repeat_is_a_harness_error():
    right = {**OK, "mismatches": 0, "vs_poisoned": 0, "wrong": 0, "wrong_repeat": 0, "baseline": "t6"}
    f = {"delays": [_stretch_delay(6, right, {**OK, "mismatches": 7, "vs_poisoned": 7, "baseline": "t6"})]}
    v = finding_verdict(f, NATURAL_RIGHT, {})
    assert v["verdict"] == NOT_REPRODUCED and "changed the fixed twin's output (7 elements)" in v["harness_error"]
    assert control_changes([{"findings": [f]}]) == (1, 1)
    # a refill that changes the stretched twin beyond the stretch alone is the harness's too
    joint = _stretch_delay(7, {**right, "baseline": "v6"}, {**OK, "mismatches": 9, "vs_poisoned": 9, "baseline": "t6"},
                           joint=True)
    v = finding_verdict({"delays": [joint]}, NATURAL_RIGHT, {})
    assert v["harness_error"] and v["verdict"] == NOT_REPRODUCED


def test_a_stretch_that_changes_nothing_is_not_reproduced_with_what_was_tried():
    right = {**OK, "mismatches": 0, "vs_poisoned": 0, "wrong": 0, "wrong_repeat": 0, "baseline": "t6"}
    f = {"delays": [_stretch_delay(6, right, {**OK, "mismatches": 0, "vs_poisoned": 0, "baseline": "t6"})]}
    v = finding_verdict(f, NATURAL_RIGHT, {"racecheck": {"errors": 0}})
    assert v["verdict"] == NOT_REPRODUCED and v["harness_error"] is None
    assert v["tried"] == ["stretch 6: 0 changed, twin 0 changed (against t6, twin against t6); "
                          "right (the twin's output) in both runs"]


def test_round_8s_stretch_records_are_void_not_a_harness_error():
    """Recorded data: round 8's release_early compared each stretched twin with the unstretched one
    (1048576 of 1048576 'changed'): the verdict says those comparisons mean nothing, and the
    controls count only the delays whose comparisons hold."""
    doc = json.loads((RECORDS / "forced_schedule_round8.json").read_text())
    case = next(c for c in doc["cases"] if c["id"] == "release_early")
    [f] = case["findings"]
    stretched = [d for d in f["delays"] if d["mode"] == "stretch"]
    assert len(stretched) == 4 and all(d["control"]["vs_poisoned"] == N for d in stretched)
    v = finding_verdict(f, case["natural"], case["sanitizers"])
    assert v["harness_error"] is None and v["verdict"] == NOT_REPRODUCED
    assert sum(STRETCH_VOID in t for t in v["tried"]) == 4
    assert control_changes([case]) == (0, 4)        # the two spins and the two refills
    changed, compared = control_changes(doc["cases"])
    assert changed == 0 and compared > 4


def test_the_plan_records_each_stretchs_repeat_and_joint_modes(tmp_path):
    """The plan's rows carry what `comparisons` needs (mode, repeat, joint), for release_early."""
    import forced_schedule as driver

    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"cases": [{
        "id": "release_early", "backend": "tilelang", "cu": str(HAND / "release_early_sm_90_s3.cu"),
        "twin": str(KERNELS / "gemm_f16_sm_90_s3.cu"),
        "spec": {"file": "examples/gemm.py", "name": "matmul", "params": {}, "arch": "sm_90", "num_stages": 3}}]}))
    assert driver.plan(manifest, tmp_path / "p", 0, max_findings=1) == 0
    [case] = json.loads((tmp_path / "p" / "plan.json").read_text())["cases"]
    rows = case["findings"][0]["delays"]
    assert [(r["mode"], r["repeat"], r["joint"]) for r in rows if r["mode"] == "stretch"] == [
        ("stretch", 8, []), ("stretch", 32, []), ("stretch", 32, ["refill"]), ("stretch", 32, ["refill"])]
    assert not any(r["stress"] for r in rows), "TileLang cases get no STRESS (no host program of ours)"
    c = comparisons(rows)
    stretched = [r["number"] for r in rows if r["mode"] == "stretch"]
    assert [c[k]["twin_repeat"] for k in stretched] == [True, True, False, False]
    # every stretched twin variant exists, so the harness can run it (and its repeat)
    assert all((tmp_path / "p" / "release_early" / "variants" / f"twin_{k}.cu").is_file() for k in stretched)


# ------------------------------------------------------------------ STRESS
def _row_sum_mutant(klass, line):
    import mutation_sites

    fixture = "row_sum_sm_80_s3.cu"
    lines = (mutation_sites.KERNELS / fixture).read_text().split("\n")
    gen = {"wait-shallower": mutation_sites.wait_shallower, "drop-commit": mutation_sites.drop_commit}[klass]
    return next(p for p in gen(fixture, lines) if p.line == line).text, mutation_sites.KERNELS / fixture


def test_a_same_thread_copy_gets_one_stress_run_that_changes_no_kernel_text(tmp_path):
    import forced_schedule as driver

    text, twin = _row_sum_mutant("wait-shallower", 57)
    plans, _ = fs.analyze(text, "row_sum_ws.cu")
    stress = [d for p in plans for d in p.delays if d.mode == fs.STRESS]
    assert stress, "a witness with one thread on both sides of a cp.async gets STRESS"
    for p in plans:
        w = p.witness
        if any(d.mode == fs.STRESS for d in p.delays):
            assert w.first.access == "copy" and set(w.first.threads) == set(w.second.threads)
    # the kernel text under STRESS is the poison-only text: the host does it
    assert fs.render(text, [stress[0]]) == fs.render(text, [])
    assert fs.delay_code(stress[0]) == ""
    # two different thread sets, or an early side that is not a copy, get none
    w = next(p.witness for p in plans if any(d.mode == fs.STRESS for d in p.delays))
    assert len(fs.stress_for(w)) == 1
    other = w.second.threads[1:]                                     # one thread left out
    assert fs.stress_for(replace(w, second=replace(w.second, threads=other))) == []
    assert fs.stress_for(replace(w, first=replace(w.first, access="read"))) == []
    # the plan: every finding's STRESS is one and the same run (one number), flagged `stress`
    mutant = tmp_path / "ws.cu"
    mutant.write_text(text)
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"cases": [{"id": "ws", "cu": str(mutant), "twin": str(twin)}]}))
    assert driver.plan(manifest, tmp_path / "p", 0, max_findings=4) == 0
    [case] = json.loads((tmp_path / "p" / "plan.json").read_text())["cases"]
    rows = [r for f in case["findings"] for r in f["delays"]]
    numbers = {r["number"] for r in rows if r["stress"]}
    assert len(numbers) == 1 and sum(r["stress"] for r in rows) == len(
        [d for p in plans[:4] for d in p.delays if d.mode == fs.STRESS])
    k = numbers.pop()
    folder = tmp_path / "p" / "ws" / "variants"
    assert (folder / f"{k}.cu").read_text() == (folder / "0.cu").read_text()
    assert comparisons(rows)[k]["wrong"] == "twin", "a stress run's answer is the unedited twin"


def test_the_raw_host_gets_the_selector_and_the_stress_hog_around_the_launch(tmp_path):
    import forced_schedule as driver
    import raw_launch

    raw_launch.generate(KERNELS / "row_sum_sm_80_s3.cu", tmp_path, smem="max", arch="sm_80")
    host = (tmp_path / "host.cu").read_text()
    hooked = driver.hook_host(host)
    assert hooked is not None
    launch = hooked.index("row_sum_kernel_kernel<<<")
    assert hooked.index("pl_stress_kernel<<<") < hooked.index("while (*(volatile int*)pl_sf == 0)") < launch
    assert hooked.index("cudaMemcpyToSymbol(pl_fs_select") < launch
    # the hog leaves room in its SMs for a kernel with shared memory (round 9: never overlapped without)
    assert hooked.index("cudaSharedmemCarveoutMaxShared") < hooked.index("pl_stress_kernel<<<")
    assert launch < hooked.index("RAW_LAUNCH stress overlapped=") < hooked.index("double ms")
    assert hooked.index("__global__ void __launch_bounds__(512) pl_stress_kernel") < hooked.index("int main(")
    assert driver.hook_host(host.replace("auto t0 = std::chrono::steady_clock::now();", "")) is None


def test_stress_verdicts_the_overlap_is_said_and_the_twin_under_stress_is_the_control():
    wrong = {**OK, "mismatches": 16, "vs_poisoned": 16, "wrong": 16, "wrong_repeat": 16, "stress_overlapped": True}
    quiet = {**OK, "mismatches": 0, "vs_poisoned": 0, "stress_overlapped": True}
    d = {"number": 3, "describe": "stress", "mode": "stress", "stress": True, "variant": wrong, "control": quiet}
    v = finding_verdict({"delays": [d]}, NATURAL_RIGHT, {})
    assert v["verdict"] == CONFIRMED_FORCED and v["delay"] == "stress" and v["harness_error"] is None
    v = finding_verdict({"delays": [{**d, "control": {**quiet, "mismatches": 3, "vs_poisoned": 3}}]}, NATURAL_RIGHT, {})
    assert v["verdict"] != CONFIRMED_FORCED and "changed the fixed twin" in v["harness_error"]
    late = {**d, "variant": {**OK, "mismatches": 0, "vs_poisoned": 0, "wrong": 0, "wrong_repeat": 0,
                             "stress_overlapped": False}}
    v = finding_verdict({"delays": [late]}, NATURAL_RIGHT, {})
    assert v["verdict"] == NOT_REPRODUCED and "the bandwidth hog had ended before the kernel did" in v["tried"][0]
    # every natural run wrong and both stressed runs wrong: the natural output is the evidence
    v = finding_verdict({"delays": [d]}, {**NATURAL_RIGHT, "wrong": 16, "wrong_runs": [16, 16]}, {})
    assert v["verdict"] == CONFIRMED_OUTPUT


# ------------------------------------------------------------------ not run
def test_a_twin_that_did_not_run_is_not_run_with_a_harness_error_whatever_the_delays_show():
    changed = {**OK, "mismatches": 40, "vs_poisoned": 40, "wrong": None}
    f = {"delays": [{"number": 1, "describe": "d1", "variant": changed, "control": {"not_run": True}}]}
    natural = {"runs": [{**OK, "mismatches": 0}], "twin_failed": "CUDA error  cudaErrorIllegalAddress\n at host.cu:88"}
    v = finding_verdict(f, natural, {"racecheck": {"errors": 3}})
    assert v["verdict"] == NOT_RUN and v["mismatches"] is None and v["delay"] is None
    why = "the fixed twin did not run (CUDA error cudaErrorIllegalAddress at host.cu:88)"
    assert v["harness_error"].startswith(why)
    assert v["verdict"] != NOT_REPRODUCED
    # without the failed twin the same evidence is a confirmation: the `not run` comes from the twin
    del natural["twin_failed"]
    assert finding_verdict(f, natural, {"racecheck": {"errors": 3}})["verdict"] == CONFIRMED_FORCED


def test_the_report_counts_a_case_that_never_ran_as_not_run(capsys):
    import forced_schedule as driver

    doc = {"cases": [
        {"id": "m1", "class": "wait-shallower", "suite": "mutation_sites.py", "planted_rule": "wait-too-shallow",
         "static_errors": ["wait-too-shallow"], "findings": [{"rule": "wait-too-shallow", "line": 57, "delays": []}]},
        {"id": "m2", "class": "wait-shallower", "suite": "mutation_sites.py", "planted_rule": "wait-too-shallow",
         "static_errors": ["wait-too-shallow"], "findings": [{"rule": "wait-too-shallow", "line": 57, "delays": []}],
         "natural": {"runs": [OK], "twin_failed": "no output"}, "sanitizers": {}}]}
    rows = driver.verdicts(doc)
    assert [r["verify"]["verdict"] for r in rows] == [NOT_RUN, NOT_RUN]
    table = driver.mutant_table(doc, rows)
    head, _, line = table.splitlines()[:3]
    cells = dict(zip([h.strip() for h in head.strip("|").split("|")], [x.strip() for x in line.strip("|").split("|")]))
    assert cells["not run (harness)"] == "2" and cells["not reproduced"] == "0" and cells["mutants"] == "2"


# ------------------------------------------------------------------ `pipelint verify --forced-schedule`
def test_verify_compares_a_stretch_with_the_stretched_twin_and_confirms_by_the_refill(monkeypatch, tmp_path):
    """`pipelint verify`'s own runner (not the validation driver) on release_early: each run is
    compared with the run `comparisons` names.  A fake GPU: a run's output is N times the product
    (N the stretch), wrong only on the buggy kernel stretched 32 times with the hot refill.  Before
    the runner used `comparisons`, every stretched twin was compared with the unstretched one, so
    the controls changed and the run reported a harness error instead of the confirmation."""
    import torch

    from pipelint.pluginhost import load_plugins
    from pipelint.plugins import verify

    text = (HAND / "release_early_sm_90_s3.cu").read_text()
    twin = (KERNELS / "gemm_f16_sm_90_s3.cu").read_text()
    outputs: dict[str, tuple[int, bool]] = {}
    stretch = re.compile(r"for \(int pl_r = 0; pl_r < (\d+)")

    def output(path: str) -> tuple[int, bool]:
        cuda = Path(path).read_text()
        n = int(m.group(1)) if (m := stretch.search(cuda)) else 1
        buggy = not Path(path).name.startswith("twin")
        return n, buggy and n >= 32 and "unsigned pl_d = " in cuda       # (the product's multiple, wrong)

    def fake_dynamic_runs(spec, tools, timeout, env=None):
        got = output(spec["cuda"])
        outputs[spec["out"]] = got
        torch.save([torch.zeros(1)], spec["out"])
        run = {"ran": True}
        for key, field in (("natural", "mismatches"), ("poisoned", "vs_poisoned")):
            if spec.get(key):
                run[field] = 0 if outputs.get(spec[key], (1, False)) == got else 1000
        return {"run": run}

    monkeypatch.setattr(verify, "dynamic_runs", fake_dynamic_runs)
    natural = tmp_path / "variant.pt"
    outputs[str(natural)] = (1, False)
    out, _ = verify.forced_runs(load_plugins(), {"file": "x.py"}, text, twin, {"run": {"ran": True}},
                                tmp_path, tmp_path / "evidence", 10, 2, "num_stages=3")
    release = [f for f in out if f["rule"] == "mbarrier-release"]
    assert release, [f["rule"] for f in out]
    v = release[0]["verify"]
    assert v["harness_error"] is None, v["harness_error"]
    assert v["verdict"] == CONFIRMED_FORCED and "issued 32 times" in v["delay"] and v["mismatches"] == 1000
    assert any("issued 8 times" in t and ": 0 changed, twin 0 changed" in t for t in v["tried"]), v["tried"]
    files = {p.name for p in (tmp_path / "evidence").iterdir()}
    assert any(n.endswith("_repeat.cu") for n in files), "the stretched twin's control is a repeat of itself"
