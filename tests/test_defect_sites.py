"""Planted defects reported at their primary location (rule and line), not just somewhere in the file.

Issue 23: a finding that lands away from the defect sends the user to edit the wrong code.  Each
test plants one defect of a class into a fixture of the project's own (line-stable: a deleted
statement becomes an empty line, so the planted line has the same number in fixture and mutant,
see benchmarks/mutation_sites.py) and asserts where pipelint reports it.  Cases the current model
gets wrong are strict xfails that say what it reports instead: fix the model and remove the mark.
"""
from __future__ import annotations

import json
import re
import sys

import pytest
from helpers import KERNELS, ROOT

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

sys.path.insert(0, str(ROOT / "benchmarks"))
import mutation_sites as ms

HOST = load_plugins()
WINDOW = ms.SITE_WINDOW


def _lines(fixture: str) -> list[str]:
    return (KERNELS / fixture).read_text().split("\n")


def _check(tmp_path, fixture: str, text: str) -> list:
    path = tmp_path / fixture            # the fixture's own name: arch and stages as in the fixture
    path.write_text(text)
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    assert all(r.parsed for r in report.files)
    return [f for f in report.findings if f.location.path == str(path)]


def _planted(op, fixture: str, nth: int) -> ms.Planted:
    return list(op(fixture, _lines(fixture)))[nth]


def _shown(findings) -> list[tuple[str, str, int]]:
    return sorted((f.severity.value, f.rule, f.location.line) for f in findings)


# ---------------------------------------------------------------- (a) a deleted cp_async_commit
def _commit_site_lines(lines: list[str], commit: int) -> set[int]:
    """1-based lines where a deleted commit may be reported: its own place, the copies within the
    window before it (the copies it should have closed), and the statement right after it when
    that is within the window (the commit goes just before it; tests/mutants/mutate.py drop_commit
    reports it at the wait that follows)."""
    sites = {commit} | {i + 1 for i in range(max(0, commit - 1 - WINDOW), commit - 1) if "cp_async_gs" in lines[i]}
    after = ms._next_code(lines, commit - 1)
    if after + 1 - commit <= WINDOW:
        sites.add(after + 1)
    # the criterion: the primary location within WINDOW lines of the planted line
    return sites | set(range(commit - WINDOW, commit + WINDOW + 1))


COMMITS = [
    # (fixture, which commit (0-based, text order), marks)
    pytest.param("gemm_f16_sm_80_s1.cu", 1, id="s1-loop-commit-back-edge"),
    pytest.param("gemm_f16_sm_80_s3.cu", 2, id="s3-loop-commit"),
    pytest.param("gemm_f16_sm_80_s3.cu", 0, id="s3-prologue-commit"),
    pytest.param("flash_attn_fwd_sm_80_s1.cu", 0, id="fa-s1-prologue-commit"),
    pytest.param("flash_attn_fwd_sm_80_s3.cu", 6, id="fa-s3-loop-commit"),
    pytest.param("flash_attn_fwd_sm_80_s3.cu", 0, id="fa-s3-prologue-commit"),
]


@pytest.mark.parametrize(("fixture", "nth"), COMMITS)
def test_deleted_commit_reported_at_the_commit_or_its_copies(tmp_path, fixture, nth):
    planted = _planted(ms.drop_commit, fixture, nth)
    findings = _check(tmp_path, fixture, planted.text)
    sites = _commit_site_lines(_lines(fixture), planted.line)
    at_site = [f for f in findings if f.rule in ("uncommitted-copy", "wait-too-shallow")
               and f.severity.value == "error" and f.location.line in sites]
    assert at_site, (planted.line, sorted(sites), _shown(findings))


def test_deleted_loop_commit_at_s1_is_an_uncommitted_copy_at_its_place(tmp_path):
    """num_stages=1: the copies at the end of iteration k are completed by the wait at the top of
    iteration k+1 (across the back edge); that wait runs while they are still uncommitted."""
    fixture = "gemm_f16_sm_80_s1.cu"
    planted = _planted(ms.drop_commit, fixture, 1)
    assert planted.line == 95
    findings = _check(tmp_path, fixture, planted.text)
    hits = {(f.rule, f.location.line) for f in findings if f.severity.value == "error"}
    # at the missing commit's place: the end of the loop body, after the last copy (lines 92-95)
    assert [h for h in hits if h[0] == "uncommitted-copy" and 92 <= h[1] <= 95] and \
        all(h[0] == "uncommitted-copy" for h in hits), sorted(hits)


# ---------------------------------------------------------------- (b) a deleted consumer release (sm_90)
RELEASES = [
    pytest.param("gemm_f16_sm_90_s1.cu", 0, id="gemm-s1"),
    pytest.param("gemm_f16_sm_90_s3.cu", 0, id="gemm-s3"),
    pytest.param("gemm_tn_f16_sm_90_s4.cu", 0, id="gemm_tn-s4"),
    pytest.param("flash_attn_fwd_sm_90_s2.cu", 0, id="fa-s2-K-release"),
    pytest.param("flash_attn_fwd_sm_90_s2.cu", 1, id="fa-s2-V-release"),
]


@pytest.mark.parametrize(("fixture", "nth"), RELEASES)
def test_deleted_consumer_arrive_reported_where_the_release_is_missing(tmp_path, fixture, nth):
    planted = _planted(ms.drop_consumer_arrive, fixture, nth)
    findings = _check(tmp_path, fixture, planted.text)
    errors = [f for f in findings if f.severity.value == "error"]
    assert errors, _shown(findings)
    at_site = [f for f in errors if f.rule in ("mbarrier-release", "mbarrier-deadlock")
               and abs(f.location.line - planted.line) <= WINDOW]
    assert at_site, (planted.line, _shown(findings))
    # the primary location is in the consumer role, not at the producer's wait
    (consumer,) = ms._consumer_ranges(_lines(fixture))
    assert all(consumer[0] < f.location.line <= consumer[1] + 1 for f in at_site)


# ---------------------------------------------------------------- (c) a deleted expect_tx (sm_90)
EXPECTS = [
    # the boxes are unknown at num_stages=1, but the wgmma read 16384 bytes of what the loads fill
    pytest.param("gemm_f16_sm_90_s1.cu", 0, id="gemm-s1"),
    # the box of A is unknown, but the consumers' loads read all 16384 bytes of A_shared
    pytest.param("gemv_sm_90_s1.cu", 0, id="gemv-s1"),
    pytest.param("gemm_f16_sm_90_s3.cu", 0, id="gemm-s3"),
    pytest.param("row_sum_sm_90_s1.cu", 0, id="row_sum-s1"),
    pytest.param("flash_attn_fwd_sm_90_s1.cu", 1, id="fa-s1-K"),
    pytest.param("flash_attn_fwd_sm_90_s2.cu", 2, id="fa-s2-V"),
]


@pytest.mark.parametrize(("fixture", "nth"), EXPECTS)
def test_deleted_expect_tx_is_a_tx_bytes_finding_at_the_arrive(tmp_path, fixture, nth):
    planted = _planted(ms.expect_tx_to_arrive, fixture, nth)
    assert "arrive()" in planted.text.split("\n")[planted.line - 1]
    findings = _check(tmp_path, fixture, planted.text)
    at_site = [f for f in findings if f.rule == "mbarrier-tx-bytes" and f.severity.value in ("error", "warning")
               and abs(f.location.line - planted.line) <= WINDOW]
    assert at_site, (planted.line, _shown(findings))


# ---------------------------------------------------------------- (d) wait-too-shallow in SARIF
@pytest.mark.parametrize("fixture", ["gemm_f16_sm_80_s1.cu", "gemm_f16_sm_80_s3.cu", "flash_attn_fwd_sm_80_s2.cu"])
def test_wait_too_shallow_in_sarif_has_code_flows_inside_srcroot(tmp_path, run_cli, fixture):
    # the steady-state wait of the pipelined loop, one group too shallow
    lines = _lines(fixture)
    loop = next(i for i, line in enumerate(lines) if re.search(r"for \(int k = 0;", line))
    planted = next(p for p in ms.wait_shallower(fixture, lines) if p.line > loop)
    path = tmp_path / fixture
    path.write_text(planted.text)
    result = run_cli("check", path, "--format", "sarif", "--no-cache", "--project-root", tmp_path)
    assert result.code == 1, result.err
    (run,) = json.loads(result.out)["runs"]
    shallow = [r for r in run["results"] if r["ruleId"] == "wait-too-shallow"]
    assert shallow, [r["ruleId"] for r in run["results"]]
    assert any(r["locations"][0]["physicalLocation"]["region"]["startLine"] == planted.line for r in shallow)
    for r in shallow:
        assert r.get("codeFlows"), r
        steps = r["codeFlows"][0]["threadFlows"][0]["locations"]
        assert len(steps) >= 3          # copy -> wait -> read
        assert planted.line in [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps]
        uris = [s["location"]["physicalLocation"]["artifactLocation"]["uri"] for s in steps]
        uris += [loc["physicalLocation"]["artifactLocation"]["uri"] for loc in r["locations"]]
        assert not any(u.startswith("../") for u in uris), uris
