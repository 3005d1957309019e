"""Issues 34 and 39 without TileLang: findings in the user's terms, one per defect, in every format;
failures that fail; colour and progress that fit their stream; cache keys that cover what a
lowering depends on.  Each test fails at the commit before this file was added."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
from collections import Counter

import pytest
from helpers import ALL_KERNELS, HANDWRITTEN, KERNELS, ROOT

FORMATS = ("json", "sarif", "github", "gitlab", "junit", "rdjson", "concise", "text")


def _python_json(run_cli, *paths):
    res = run_cli("check", *paths, "--primary-location", "python", "--format", "json", "--no-cache")
    return json.loads(res.out)


# ---------------------------------------------------------------- messages that fit their location
def test_python_location_messages_name_python_lines_and_keep_the_cuda(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = _python_json(run_cli, HANDWRITTEN / "atomic_tile_nobarrier.cu")
    (race,) = [f for f in doc["findings"] if f["rule"] == "shared-race"]
    assert race["path"].endswith("atomic_tile.py")
    # the CUDA lines 59 and 53 of the message are the Python statements they came from
    assert "line 59" not in race["message"] and "line 53" not in race["message"]
    assert "at line 22 (`T.atomic_add`)" in race["message"] and "at line 21 (`T.copy`)" in race["message"]
    assert "line 57" not in race["help"] and "T.sync_threads()" in race["help"]
    # ... the CUDA terms stay on the finding and its related CUDA locations
    assert "at line 59" in race["cuda_message"] and race["cuda_help"] == "insert __syncthreads(); before line 57"
    assert race["related"][0]["message"] == "generated CUDA"
    py_related = {(r["line"], r["message"]) for r in race["related"] if r["path"].endswith(".py")}
    assert {(21, "store of S by threads 0-127"), (22, "load of S by threads 0-127")} <= py_related
    # a CUDA-primary report is unchanged
    cuda = json.loads(run_cli("check", HANDWRITTEN / "atomic_tile_nobarrier.cu", "--format", "json",
                              "--no-cache").out)
    assert any("at line 59" in f["message"] for f in cuda["findings"])


def test_a_barrier_tilelang_inserted_says_the_fix_belongs_in_tilelang(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = _python_json(run_cli, KERNELS / "gemv_sm_80_s2.cu")
    barriers = [f for f in doc["findings"] if f["rule"] == "redundant-barrier"]
    assert barriers and all("the fix belongs in TileLang" in f["help"] for f in barriers)
    assert all("remove the __syncthreads() at line" in f["cuda_help"] for f in barriers)


# ---------------------------------------------------------------- one finding per defect
def test_concise_python_prints_no_duplicate_line_and_names_the_variants(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    res = run_cli("check", *ALL_KERNELS, "--primary-location", "python", "--format", "concise")   # session cache
    lines = res.out.splitlines()
    assert lines and not [line for line, n in Counter(lines).items() if n > 1]
    # gemv's steady-state barrier: one line for the four variants that have it
    gemv = [line for line in lines if line.startswith("examples/gemv.py:16:1: warning[redundant-barrier]")]
    assert gemv == [gemv[0]] and gemv[0].endswith("[sm_80 s1, s2, s3, s4]"), gemv
    # in CUDA terms nothing is merged: every variant's file has its own finding
    cuda = run_cli("check", *ALL_KERNELS, "--format", "concise").out.splitlines()
    assert len(cuda) > len(lines)


def test_every_format_shows_and_counts_the_same_findings(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    kernels = [KERNELS / f"gemv_sm_80_s{n}.cu" for n in (1, 2)]
    args = ("--primary-location", "python", "--no-cache", "--exit-zero")
    out = {fmt: run_cli("check", *kernels, *args, "--format", fmt).out for fmt in FORMATS}
    assert "[sm_80 s1, s2]" in out["concise"]
    concise = len(out["concise"].splitlines())
    doc = json.loads(out["json"])
    assert len(doc["findings"]) == concise == sum(doc["summary"][s] for s in ("error", "warning", "note"))
    assert len(json.loads(out["sarif"])["runs"][0]["results"]) == concise
    assert out["github"].count("\n::") + out["github"].startswith("::") == concise
    assert len(json.loads(out["gitlab"])) == concise
    assert out["junit"].count("<failure ") == concise
    assert len(json.loads(out["rdjson"])["diagnostics"]) == concise
    summary = out["text"].strip().splitlines()[-1]
    counts = [int(n) for n in re.findall(r"(\d+) (?:error|warning|note)\(s\)", summary)]
    assert sum(counts) == concise, summary
    sarif = json.loads(out["sarif"])["runs"][0]["results"]
    assert any(r["properties"].get("variants") == ["sm_80 s1", "sm_80 s2"] for r in sarif)


# ---------------------------------------------------------------- relative paths in every CI format
def test_ci_formats_write_repository_relative_python_paths(run_cli, tmp_path, monkeypatch):
    """TileLang writes the kernel file's absolute path in `#line`; GitHub, GitLab and reviewdog
    match annotation paths relative to the repository (issue 39)."""
    (tmp_path / "kernels").mkdir()
    (tmp_path / "lowered").mkdir()
    shutil.copy(ROOT / "examples" / "gemv.py", tmp_path / "kernels" / "gemv.py")
    text = (KERNELS / "gemv_sm_80_s2.cu").read_text()
    absolute = str(tmp_path / "kernels" / "gemv.py")
    (tmp_path / "lowered" / "gemv_sm_80_s2.cu").write_text(text.replace('"examples/gemv.py"', json.dumps(absolute)))
    monkeypatch.chdir(tmp_path)
    args = ("check", "lowered/", "--primary-location", "python", "--no-cache", "--exit-zero",
            "--project-root", str(tmp_path))
    github = run_cli(*args, "--format", "github").out
    assert "file=kernels/gemv.py," in github and absolute not in github
    gitlab = json.loads(run_cli(*args, "--format", "gitlab").out)
    assert {i["location"]["path"] for i in gitlab} == {"kernels/gemv.py"}
    rdjson = json.loads(run_cli(*args, "--format", "rdjson").out)
    assert {d["location"]["path"] for d in rdjson["diagnostics"]} == {"kernels/gemv.py"}
    junit = run_cli(*args, "--format", "junit").out
    assert 'name="kernels/gemv.py"' in junit and absolute not in junit
    sarif = json.loads(run_cli(*args, "--format", "sarif").out)
    assert {loc["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]
            for loc in r["locations"]} == {"kernels/gemv.py"}
    doc = json.loads(run_cli(*args, "--format", "json").out)
    assert doc["findings"] and {f["path"] for f in doc["findings"]} == {"kernels/gemv.py"}
    text = run_cli(*args, "--format", "text").out
    assert text.startswith("kernels/gemv.py:") and absolute not in text


# ---------------------------------------------------------------- failures that fail
def _record(folder, py_rel, line, arch="sm_90", n=2):
    from pipelint.lowering.failures import record_text

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"softmax_{arch}_s{n}.cu"
    path.write_text(record_text(py_rel, "softmax", arch, n, "InternalError: Check failed: (a == b) is false",
                                "lower", line))
    return path


def test_check_reports_a_recorded_lowering_failure_at_the_python_line(run_cli, tmp_path, monkeypatch):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "softmax.py").write_text("import tilelang.language as T\n\n\ndef softmax(M=128):\n"
                                                     "    pass\n")
    _record(tmp_path / "lowered", "../kernels/softmax.py", 4)
    monkeypatch.chdir(tmp_path)
    res = run_cli("check", "lowered/", "--no-cache", "--format", "json")
    assert res.code == 1
    (f,) = [f for f in res.json["findings"] if f["rule"] == "lowering-failed"]
    assert (f["path"], f["line"], f["severity"]) == ("kernels/softmax.py", 4, "error")
    assert "Check failed" in f["message"] and "an internal check of a tilelang pass failed" in f["message"].lower()
    assert "--trace terminal" in f["help"]
    github = run_cli("check", "lowered/", "--no-cache", "--format", "github", "--primary-location", "python")
    assert github.code == 1 and "::error file=kernels/softmax.py,line=4," in github.out
    assert run_cli("check", "lowered/", "--no-cache", "--ignore", "lowering-failed").code == 0


@pytest.mark.parametrize("kind,error,said", [
    ("timeout", "lowering did not finish in 300 s (hang?)", "did not finish"),
    ("crash", "lowering worker crashed (signal 6)", "native code"),
    ("lower", "TypeError: make() missing 1 required positional argument: 'M'", "--param NAME=VALUE"),
    ("lower", "ValueError: (32, 256)", "a shape TileLang could not map"),
    ("lower", "RuntimeError: something else", "--trace terminal"),
])
def test_lowering_errors_come_with_what_they_usually_mean(kind, error, said):
    from pipelint.lowering.failures import meaning

    assert said in meaning(kind, error)


def test_failure_is_at_the_line_the_traceback_names_else_the_def(tmp_path):
    from pipelint.lowering.failures import failure_finding

    py = tmp_path / "k.py"
    py.write_text("import os\n\n\ndef make(num_stages=2):\n    raise ValueError('no')\n")
    detail = f'Traceback (most recent call last):\n  File "/x/worker.py", line 3, in main\n' \
             f'  File "{py}", line 5, in make\n    raise ValueError("no")\nValueError: no\n'
    assert failure_finding(str(py), "make", "sm_80", 2, "ValueError: no", "lower", detail).location.line == 5
    assert failure_finding(str(py), "make", "sm_80", 2, "InternalError: x", "lower").location.line == 4


# ---------------------------------------------------------------- good citizenship
def test_progress_writes_one_plain_line_per_note_to_a_log():
    from pipelint.progress import Progress

    stream = io.StringIO()          # not a terminal: a CI log
    with Progress("lowering", 2, stream=stream, log=True) as p:
        p.note("  sm_80 num_stages=2: lowered in 1.0 s", "pipelint lower: k.py sm_80 num_stages=2: lowered in 1.0 s")
        p.advance(1)
    assert stream.getvalue() == "pipelint lower: k.py sm_80 num_stages=2: lowered in 1.0 s\n"
    quiet = io.StringIO()
    with Progress("lowering", 2, stream=quiet, log=True, quiet=True) as p:
        p.note("x")
    assert quiet.getvalue() == ""


def test_trace_colour_reaches_a_file_only_when_asked(monkeypatch, capsys):
    from pipelint.lowering import driver

    coloured = "\x1b[1;32m+ InjectSoftwarePipeline\x1b[0m\n"

    class Child:
        returncode = 0

        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def communicate(self, *a, **k):
            return coloured + driver.MARKER + json.dumps({"ok": True}), ""

    monkeypatch.setattr(driver.subprocess, "Popen", Child)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    env = {"TL_LOWER_TRACE": "terminal"}
    driver.run_worker({}, 5, env)                   # stderr is captured: not a terminal
    assert capsys.readouterr().err == "+ InjectSoftwarePipeline\n"
    driver.run_worker({}, 5, env, colour=True)      # --color always
    assert "\x1b[1;32m" in capsys.readouterr().err
    monkeypatch.setenv("FORCE_COLOR", "1")
    driver.run_worker({}, 5, env)
    assert "\x1b[" in capsys.readouterr().err
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    assert driver.colour_wanted() is False


def test_readme_outputs_are_gitignored():
    import pathspec

    spec = pathspec.PathSpec.from_lines("gitignore", (ROOT / ".gitignore").read_text().splitlines())
    readme = (ROOT / "README.md").read_text()
    outputs = set(re.findall(r"(?:-o|--output|--sarif-output|--plot) (\S+)", readme))
    assert {"report.json", "pipelint.sarif", "pipelint.rdjson"} <= outputs
    for out in outputs:
        assert spec.match_file(out), out


# ---------------------------------------------------------------- the lowering cache key
def test_cache_key_covers_imports_copies_parameters_pass_environment_and_versions(tmp_path, monkeypatch):
    from pipelint.lowering.driver import KernelRef, cache_key

    (tmp_path / "tiles.py").write_text("BLOCK_K = 64\n")
    kernel = tmp_path / "k.py"
    kernel.write_text("from tiles import BLOCK_K\n\n\ndef make(num_stages=2, block_M=64):\n    pass\n")
    ref = KernelRef(str(kernel), "make")
    monkeypatch.delenv("TL_DISABLE_WARP_SPECIALIZED", raising=False)
    base = cache_key(ref, {}, "sm_80", 2, "0.1.15")
    assert base == cache_key(ref, {}, "sm_80", 2, "0.1.15")
    assert cache_key(ref, {"block_M": 128}, "sm_80", 2, "0.1.15") != base          # a factory parameter
    assert cache_key(ref, {}, "sm_80", 2, "0.1.16") != base                         # TileLang's version
    monkeypatch.setenv("TL_DISABLE_WARP_SPECIALIZED", "1")                          # a pass switch
    assert cache_key(ref, {}, "sm_80", 2, "0.1.15") != base
    monkeypatch.delenv("TL_DISABLE_WARP_SPECIALIZED")
    monkeypatch.setenv("TL_LOWER_TRACE", "terminal")                                # output only
    assert cache_key(ref, {}, "sm_80", 2, "0.1.15") == base
    (tmp_path / "tiles.py").write_text("BLOCK_K = 32\n")                           # an imported module
    assert cache_key(ref, {}, "sm_80", 2, "0.1.15") != base
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(kernel, copy / "k.py")
    shutil.copy(tmp_path / "tiles.py", copy / "tiles.py")
    assert cache_key(KernelRef(str(copy / "k.py"), "make"), {}, "sm_80", 2, "0.1.15") != \
        cache_key(ref, {}, "sm_80", 2, "0.1.15")                                    # a copied file


# ---------------------------------------------------------------- Hopper facts
def test_tma_facts_of_a_hopper_gemm():
    from pipelint.explain import load_models
    from pipelint.lowering.hopper import table_rows, tma_facts
    from pipelint.lowering.sweep import LoweredVariant

    path = KERNELS / "gemm_f16_sm_90_s3.cu"
    model = load_models(str(path))[0]
    facts = {"tma_box_bytes": {"A_desc": 8192, "B_desc": 4096}}
    tma = tma_facts(model, facts, path.read_text())
    assert tma["slots"] == 3 and tma["full"] == [1, 1, 1] and tma["empty"] == [128, 128, 128]
    assert tma["stage_bytes"] == 16384 and tma["announced"] == 16384 and tma["announce_calls"] == 2
    assert tma["producer"] == ["threads 0-127"] and tma["consumer"] == ["threads 128-255"]
    assert tma["consumer_parity"] == "(k_1 % 6) / 3" and tma["producer_parity"] == "((k % 6) / 3) ^ 1"
    lv = LoweredVariant("gemm", "sm_90", 3, True, None, facts, tma=tma)
    header, row = table_rows([lv])
    assert row[:5] == ("sm_90", "3", "3", "3 x 1", "3 x 128")
    assert row[5] == "16384 (A_desc 8192 + B_desc 2 x 4096)" and row[6] == "16384 (sum of 2 calls)"
    assert tma_facts(load_models(str(KERNELS / "gemm_f16_sm_80_s3.cu"))[0], {}, "") is None


def test_variant_labels_and_their_text():
    from pipelint.report.present import variant_label, variants_text

    assert variant_label("lowered/matmul_sm_80_s2.cu") == "sm_80 s2"
    assert variant_label(os.path.join("x", "k_sm_90a_s10.cu")) == "sm_90a s10"
    assert variant_label("race.cu") is None
    assert variants_text(["sm_90 s3", "sm_80 s3", "sm_80 s2"]) == "sm_80 s2, s3, sm_90 s3"


def test_the_jit_hooks_findings_are_in_the_users_terms():
    """`pipelint.tilelang.lint_cuda` (what the JIT hook warns with) renders as the reporters do with
    --primary-location python: the Python line first, and no bare CUDA line number in the message
    (a number with no file under a `.py` location reads as a line of the user's file)."""
    from pipelint.tilelang import lint_cuda

    src = (HANDWRITTEN / "cond_writers_nobarrier.cu").read_text()
    found = lint_cuda(src)
    assert found and all(f.location.path.endswith("cond_writers.py") for f in found)
    for f in found:
        assert not re.search(r"(?<!CUDA )\bline (29|32)\b", f.message), f.message
