"""`pipelint check` end to end: formats, exit codes, output files, bad input."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import HANDWRITTEN, fixture
from mutants.mutate import drop_barrier_after_wait

CLEAN = fixture("gemm_f16_sm_80_s3.cu")


@pytest.fixture
def mutant(tmp_path):
    m = drop_barrier_after_wait()
    path = tmp_path / "mutant.cu"
    path.write_text(m.text)
    return path, m


def test_clean_file_exits_zero_with_summary(run_cli):
    res = run_cli("check", CLEAN)
    assert res.code == 0
    assert "1 file(s), 1 parsed, 1 kernel(s): 0 error(s)" in res.out


def test_findings_exit_one_and_text_shows_source_line_and_origin(run_cli, mutant):
    path, m = mutant
    res = run_cli("check", path, "--color", "never")
    assert res.code == 1
    head = f"{path}:{m.line}:"
    assert head in res.out and "error[missing-barrier]" in res.out
    lines = res.out.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith(head))
    source = (ROOT_TEXT := open(path).read().splitlines())[m.line - 1].strip()
    assert lines[i + 1].strip() == source and lines[i + 2].strip() == "^"   # where the barrier goes
    block = lines[i:next((n for n in range(i + 1, len(lines)) if not lines[n].startswith("    ")), len(lines))]
    assert any("ptx_ldmatrix" in ROOT_TEXT[int(x.split(":")[1]) - 1] for x in block
               if x.strip().startswith(f"{path}:"))                        # the read, as a related location
    assert any(x.startswith(f"    help: insert __syncthreads(); before line {m.line}") for x in block)
    assert "examples/gemm.py" in res.out and "\033[" not in res.out


def test_colour_when_forced(run_cli, mutant):
    res = run_cli("check", mutant[0], "--color", "always")
    assert "\033[1;31m" in res.out


def test_json_report_shape(run_cli, mutant, tmp_path):
    path, m = mutant
    res = run_cli("check", path, CLEAN, "--format", "json")
    doc = res.json
    assert doc["tool"]["name"] == "pipelint" and doc["tool"]["version"]
    assert {f["path"] for f in doc["files"]} == {str(path), str(CLEAN)}
    assert all(f["parsed"] for f in doc["files"])
    f = next(f for f in doc["findings"] if f["rule"] == "missing-barrier")
    assert {"rule", "severity", "message", "path", "line", "column", "end_line", "end_column",
            "related"} <= set(f)
    assert f["line"] == m.line and f["severity"] == "error"


def test_output_file_and_fail_on(run_cli, tmp_path):
    out = tmp_path / "report.json"
    gemv = fixture("gemv_sm_80_s3.cu")  # carries a redundant-barrier warning (performance: exit 0)
    assert run_cli("check", gemv, "--format", "json", "--output", out).code == 0
    assert '"redundant-barrier"' in out.read_text()
    assert run_cli("check", gemv, "--fail-on-performance").code == 1
    assert run_cli("check", gemv, "--fail-on-performance", "--fail-on", "error").code == 0


def test_folder_recursion(run_cli, tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "k.cuh").write_text(CLEAN.read_text())
    (tmp_path / "a" / "k.cu").write_text(CLEAN.read_text())
    (tmp_path / "a" / "notes.txt").write_text("ignore me")
    doc = run_cli("check", tmp_path, "--format", "json").json
    assert len(doc["files"]) == 2


def test_rules_and_plugins_listing(run_cli):
    res = run_cli("rules")
    assert res.code == 0
    for rule, plugin in [("wait-too-shallow", "wait-group"), ("redundant-barrier", "barriers"),
                         ("mbarrier-deadlock", "tma-barriers"), ("version-overwrite", "version-dimension"),
                         ("parse-error", "pipelint")]:
        assert any(line.split()[:2] == [rule, plugin] for line in res.out.splitlines())
    assert run_cli("plugins").code == 0


def test_usage_errors_exit_two(run_cli, tmp_path):
    assert run_cli("check", tmp_path / "missing.cu").code == 2
    assert run_cli("check", CLEAN, "--format", "xml").code == 2
    res = run_cli("check", tmp_path)  # empty folder
    assert res.code == 2 and "no .cu or .cuh files" in res.err
    assert run_cli("check", CLEAN, "--select", "no-such-rule").code == 2


def test_console_script_runs_without_tilelang_or_torch():
    code = ("import sys, runpy; sys.argv=['pipelint','check',%r]\n"
            "try:\n runpy.run_module('pipelint.cli', run_name='__main__')\n"
            "except SystemExit as e: code=e.code\n"
            "bad=[m for m in ('tilelang','torch','tvm') if m in sys.modules]\n"
            "print('IMPORTED', bad); sys.exit(code)") % str(CLEAN)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "IMPORTED []" in proc.stdout


def test_handwritten_file_with_macros_is_checked(run_cli):
    res = run_cli("check", HANDWRITTEN / "constructs.cu", "--format", "json")
    assert res.code == 0 and res.json["files"][0]["kernels"] == ["hand_kernel"]


def test_explain_says_what_each_barrier_orders(run_cli):
    res = run_cli("explain", fixture("gemv_sm_80_s2.cu"), fixture("gemm_f16_sm_90_s3.cu"))
    assert res.code == 0
    lines = res.out.splitlines()
    assert any("in the loop): orders nothing (redundant)" in l for l in lines)
    assert "  __syncthreads per steady-state iteration: 3" in lines  # gemv: one of the three is redundant
    assert any("cp_async_wait<1> with 1 commit group(s) per iteration: 1 stage(s) in flight" in l for l in lines)
    assert any("orders WAR (read -> async copy) on A_shared" in l for l in lines)
    assert any("orders RAW (async copy -> read) on A_shared" in l for l in lines)
    assert any("mbarrier initialisation visible" in l for l in lines)
    assert any("init counts [0]=1, [1]=1, [2]=1, [3]=128" in l for l in lines)
    assert run_cli("explain", "missing.cu").code == 2


def test_walks_skip_virtualenvs_and_build_folders_but_explicit_paths_are_checked(run_cli, tmp_path):
    kernel = fixture("gemv_sm_80_s2.cu").read_text()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.cu").write_text(kernel)
    for hidden in (".venv/lib/python3.11/site-packages/tilelang/src", "build", "node_modules/x"):
        (tmp_path / hidden).mkdir(parents=True)
        (tmp_path / hidden / "header.cuh").write_text("template <int N> struct broken {")
    res = run_cli("check", tmp_path, "--format", "json")
    assert [f["path"] for f in res.json["files"]] == [str(tmp_path / "kernels" / "k.cu")]
    explicit = tmp_path / "build" / "header.cuh"
    res = run_cli("check", explicit, "--format", "json")
    assert [f["path"] for f in res.json["files"]] == [str(explicit)]


def test_exit_zero_quiet_output_format_alias_and_force_color(run_cli, monkeypatch):
    kernel = fixture("gemv_sm_80_s2.cu")
    loud = run_cli("check", kernel, "--fail-on", "note", "--fail-on-performance")
    assert loud.code == 1 and "file(s)" in loud.out
    quiet = run_cli("check", kernel, "--fail-on", "note", "--exit-zero", "--quiet")
    assert quiet.code == 0 and "file(s)" not in quiet.out and "redundant-barrier" in quiet.out
    assert run_cli("check", kernel, "--output-format", "json").json["files"]
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in run_cli("check", kernel).out
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run_cli("check", kernel).out
