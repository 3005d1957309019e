"""The result cache: identical findings, only changed files re-analysed, self-healing, bounded."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ALL_KERNELS, ROOT

from pipelint import cache as cache_mod
from pipelint.findings import FileResult, Finding, Location, Severity

FUNCTIONAL = sorted((ROOT / "tests" / "functional").glob("*.cu"))


def _findings(out: str) -> list:
    doc = json.loads(out)
    return [doc["files"], doc["findings"], doc["errors"], doc["summary"]]


def test_findings_identical_with_and_without_cache_over_all_fixtures(run_cli, tmp_path):
    paths = [*ALL_KERNELS, *FUNCTIONAL]
    cold = run_cli("check", *paths, "--format", "json", "--no-cache", "-j", "1")
    fill = run_cli("check", *paths, "--format", "json", "--cache-dir", tmp_path)
    warm = run_cli("check", *paths, "--format", "json", "--cache-dir", tmp_path)
    summary = run_cli("check", *paths, "--cache-dir", tmp_path)
    assert cold.code == fill.code == warm.code == 1        # the functional cases have findings
    assert _findings(cold.out) == _findings(fill.out) == _findings(warm.out)
    assert f"({len(paths)} file(s) unchanged, from the cache)" in summary.out


@pytest.mark.parametrize("select", ["redundant-barrier,redundant-wait,wait-too-deep,stage-trend",
                                    "shared-race,version-overwrite", "wait-too-shallow"])
def test_a_selection_after_a_full_run_is_served_from_its_results(run_cli, tmp_path, monkeypatch, select):
    """A run of every rule caches results a later `--select` run narrows (`PluginHost.narrowed`)
    instead of analysing again: the same report as that selection computed from scratch."""
    paths = [*ALL_KERNELS[::6], *FUNCTIONAL]
    run_cli("check", *paths, "--cache-dir", tmp_path)
    cold = run_cli("check", *paths, "--format", "json", "--no-cache", "-j", "1", "--select", select)
    from pipelint import engine

    analysed: list[str] = []
    real = engine.check_file
    monkeypatch.setattr(engine, "check_file", lambda path, *a, **k: analysed.append(path) or real(path, *a, **k))
    warm = run_cli("check", *paths, "--format", "json", "--cache-dir", tmp_path, "-j", "1", "--select", select)
    assert analysed == []                   # every file from the full run's results
    assert cold.code == warm.code
    assert _findings(cold.out) == _findings(warm.out)
    assert json.loads(cold.out)["findings"], "the selection has findings on the fixtures (a case that can differ)"


def _copies(tmp_path: Path, names: list[str]) -> list[Path]:
    out = []
    for name in names:
        dest = tmp_path / "kernels" / name
        dest.parent.mkdir(exist_ok=True)
        shutil.copyfile(ROOT / "tests" / "fixtures" / "kernels" / name, dest)
        out.append(dest)
    return out


def test_only_the_edited_file_is_analysed_again(run_cli, tmp_path, monkeypatch):
    files = _copies(tmp_path, ["gemm_f16_sm_80_s3.cu", "gemv_sm_80_s2.cu", "gemm_f16_sm_90_s3.cu"])
    cache_dir = tmp_path / "cache"
    run_cli("check", *files, "--cache-dir", cache_dir)
    analysed: list[str] = []
    from pipelint import engine

    real = engine.check_file
    monkeypatch.setattr(engine, "check_file", lambda path, *a, **k: analysed.append(path) or real(path, *a, **k))
    with open(files[1], "a") as fh:
        fh.write("// an edit\n")
    result = run_cli("check", *files, "--cache-dir", cache_dir, "-j", "1")
    assert analysed == [str(files[1])]
    assert "(2 file(s) unchanged, from the cache)" in result.out
    analysed.clear()
    run_cli("check", *files, "--cache-dir", cache_dir, "-j", "1")
    assert analysed == []


def test_an_edit_that_changes_findings_is_seen(run_cli, tmp_path):
    [kernel] = _copies(tmp_path, ["gemm_f16_sm_80_s3.cu"])
    cache_dir = tmp_path / "cache"
    before = run_cli("check", kernel, "--format", "json", "--cache-dir", cache_dir).json
    text = kernel.read_text().replace("__syncthreads();", "", 1)      # plant a missing barrier
    kernel.write_text(text)
    after = run_cli("check", kernel, "--format", "json", "--cache-dir", cache_dir).json
    assert after["findings"] != before["findings"]
    fresh = run_cli("check", kernel, "--format", "json", "--no-cache").json
    assert after["findings"] == fresh["findings"]


def test_touched_file_is_found_by_its_bytes(run_cli, tmp_path):
    [kernel] = _copies(tmp_path, ["gemv_sm_80_s2.cu"])
    cache_dir = tmp_path / "cache"
    run_cli("check", kernel, "--cache-dir", cache_dir)
    st = kernel.stat()
    os.utime(kernel, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert "(1 file(s) unchanged, from the cache)" in run_cli("check", kernel, "--cache-dir", cache_dir).out


def test_corrupt_entries_heal(run_cli, tmp_path):
    files = _copies(tmp_path, ["gemm_f16_sm_80_s3.cu", "gemv_sm_80_s2.cu"])
    cache_dir = tmp_path / "cache"
    first_run = run_cli("check", *files, "--format", "json", "--cache-dir", cache_dir)
    first = first_run.json
    entries = [p for p in cache_dir.rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG"]
    assert entries
    deep = b"[" * 200_000                   # json.loads: RecursionError, not ValueError
    for i, p in enumerate(entries):
        p.write_bytes((b"\x00garbage", b'{"format": 1, "file": 3}', deep)[i % 3])
    again = run_cli("check", *files, "--format", "json", "--cache-dir", cache_dir)
    assert again.code == first_run.code and not again.err
    assert again.json["findings"] == first["findings"]
    healed = run_cli("check", *files, "--cache-dir", cache_dir)
    assert "(2 file(s) unchanged, from the cache)" in healed.out


def test_no_cache_writes_nothing_and_config_can_turn_it_off(run_cli, tmp_path):
    [kernel] = _copies(tmp_path, ["gemv_sm_80_s2.cu"])
    run_cli("check", kernel, "--no-cache", "--cache-dir", tmp_path / "c1")
    assert not (tmp_path / "c1").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint]\ncache-dir = "c2"\n')
    run_cli("check", kernel)
    assert any((tmp_path / "c2").rglob("*"))
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint]\ncache = false\ncache-dir = "c3"\n')
    run_cli("check", kernel)
    assert not (tmp_path / "c3").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint]\ncache = "yes"\n')
    bad = run_cli("check", kernel)
    assert bad.code == 2 and "cache: expected true or false" in bad.err


def test_concurrent_runs_share_a_cache(tmp_path):
    files = [str(p) for p in _copies(tmp_path, ["gemm_f16_sm_80_s3.cu", "gemv_sm_80_s2.cu",
                                                  "gemm_f16_sm_90_s3.cu"])]
    cmd = [sys.executable, "-m", "pipelint", "check", "--format", "json", "--cache-dir", str(tmp_path / "c"), *files]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode in (0, 1) for p in procs)
    assert len({json.dumps(_findings(o)) for o in outs}) == 1
    assert not list((tmp_path / "c").rglob(".tmp-*"))


def _result(path: str) -> tuple:
    f = Finding("missing-barrier", Severity.ERROR, "m", Location(path, 3, 1, 3, 5),
                (Location("k.py", 7, message="TileLang source"),), kernel="k", plugin="barriers")
    return FileResult(path, True, ("k",), suppressions=((3, ("x",), 5),),
                      digest=cache_mod.digest_of(Path(path).read_bytes())), [f], []


def test_round_trip_and_prune(tmp_path):
    src = tmp_path / "a.cu"
    src.write_text("x")
    c = cache_mod.ResultCache(tmp_path / "c", salt="s", max_bytes=10**9)
    c.put(str(src), _result(str(src)), cache_mod.snapshot(str(src)))
    got = c.get(str(src))
    assert got is not None and (got[0], got[1]) == (_result(str(src))[0], _result(str(src))[1])
    assert cache_mod.ResultCache(tmp_path / "c", salt="other").get(str(src)) is None   # salt is part of the key
    for i in range(20):
        p = tmp_path / f"f{i}.cu"
        p.write_text(str(i))
        c.put(str(p), _result(str(p)), cache_mod.snapshot(str(p)))
    size = sum(p.stat().st_size for p in (tmp_path / "c").rglob("*") if p.is_file())
    c.max_bytes = size // 2
    assert c.prune() > 0
    assert sum(p.stat().st_size for p in (tmp_path / "c").rglob("*") if p.is_file()) <= size // 2


def test_budget_cut_results_are_not_cached(tmp_path):
    src = tmp_path / "a.cu"
    src.write_text("x")
    c = cache_mod.ResultCache(tmp_path / "c", salt="s")
    fr, _, errors = _result(str(src))
    cut = Finding("analysis-limit", Severity.WARNING, "stopped", Location(str(src), 1))
    c.put(str(src), (fr, [cut], errors), cache_mod.snapshot(str(src)))
    assert c.get(str(src)) is None


def test_code_stamp_follows_plugin_edits(tmp_path, monkeypatch):
    mod = tmp_path / "myplugin_for_stamp.py"
    mod.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("myplugin_for_stamp")
    before = cache_mod.code_stamp([module])
    assert cache_mod.code_stamp([module]) == before
    mod.write_text("X = 22\n")
    assert cache_mod.code_stamp([module]) != before


@pytest.mark.parametrize("env", ["PIPELINT_CACHE_DIR"])
def test_default_dir_honours_the_environment(monkeypatch, tmp_path, env):
    monkeypatch.setenv(env, str(tmp_path / "here"))
    assert cache_mod.default_dir() == tmp_path / "here"
    monkeypatch.delenv(env)
    assert "pipelint" in str(cache_mod.default_dir())


def test_a_file_saved_while_it_is_analysed_keeps_no_stale_result(run_cli, tmp_path, monkeypatch):
    """Issue 35: the result of the bytes that were analysed is stored under those bytes, never under
    a second read.  At 58e98a9 a save during the analysis stored the old content's "0 errors" under
    the new content's key, and every later cached run repeated it while `--no-cache` found the race."""
    import sys as _sys

    _sys.path.insert(0, str(ROOT / "tests" / "mutants"))
    from mutate import drop_barrier_after_wait

    [kernel] = _copies(tmp_path, ["gemm_f16_sm_80_s3.cu"])
    racy = drop_barrier_after_wait().text
    from pipelint import engine

    real = engine.check_file

    def save_meanwhile(path, *a, **k):
        result = real(path, *a, **k)           # the old content analysed...
        Path(path).write_text(racy)            # ...and the editor saves the new one before the put
        return result

    monkeypatch.setattr(engine, "check_file", save_meanwhile)
    first = run_cli("check", kernel, "--cache-dir", tmp_path / "cache", "-j", "1", "--format", "json")
    assert first.json["summary"]["error"] == 0                  # the old content: clean
    monkeypatch.setattr(engine, "check_file", real)
    fresh = run_cli("check", kernel, "--no-cache", "--format", "json")
    cached = run_cli("check", kernel, "--cache-dir", tmp_path / "cache", "--format", "json")
    assert fresh.json["summary"]["error"] > 0
    assert cached.json["findings"] == fresh.json["findings"]


def test_a_killed_run_keeps_the_entries_of_the_files_it_finished(tmp_path):
    """Issue 35: entries are written as each file finishes; at 58e98a9 only after every file."""
    files = _copies(tmp_path, ["gemv_sm_80_s0.cu", "gemv_sm_80_s1.cu", "gemv_sm_80_s2.cu", "gemv_sm_80_s3.cu"])
    cache_dir = tmp_path / "cache"
    script = ("import os, signal, sys\n"
              "from pipelint import engine\n"
              "from pipelint.cli import main\n"
              "real = engine.check_file\n"
              "def dying(path, *a, **k):\n"
              "    if path.endswith('gemv_sm_80_s3.cu'):\n"
              "        os.kill(os.getpid(), signal.SIGKILL)\n"
              "    return real(path, *a, **k)\n"
              "engine.check_file = dying\n"
              "sys.exit(main(sys.argv[1:]))\n")
    res = subprocess.run([sys.executable, "-c", script, "check", *map(str, files), "--cache-dir", str(cache_dir),
                          "-j", "1"], capture_output=True, text=True, timeout=300)
    assert res.returncode == -9
    data = [p for p in (cache_dir / "v2" / "data").rglob("*") if p.is_file()]
    assert len(data) == 3                                        # s0, s1, s2 finished before the kill
