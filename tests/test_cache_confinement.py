"""Issue 37: a checked repository cannot make pipelint delete (or write) the user's files through
its caches.  Each test builds the attack in a sandbox — a victim folder of old, large files the
user cares about, and a checked project that points pipelint's cache at it — runs pipelint as a
user would, and asserts that every victim file is intact.

The attacks, as found at 58e98a9:
* the project's `cache-dir = ".plcache"` with a committed link `.plcache/v2/data/00 -> victim`:
  pruning walked the link and unlinked the oldest files until the cache was under 256 MB;
* `pipelint clean` with `cache-dir = "../.."` or `"src"` removed folders named `v1`, `lower`,
  `lsp`, `grammar*` there.
"""
from __future__ import annotations

import asyncio
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import ROOT

from pipelint import cachedir

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or not hasattr(os, "getuid"), reason="POSIX links")
KERNEL = ROOT / "tests" / "fixtures" / "kernels" / "gemm_f16_sm_80_s3.cu"
OLD = 946684800          # 2000-01-01: older than anything a run writes, first in line for eviction


def _victim(folder: Path, names: list[str] | None = None, big: int = 120 * 2**20) -> dict[Path, int]:
    """Old, large (sparse) files the user wants to keep, named like cache entries and not; their sizes."""
    folder.mkdir(parents=True, exist_ok=True)
    names = names or ["thesis.pdf", "a" * 62, "0" * 40 + ".json", "data.bin"]
    files = {}
    for name in names:
        path = folder / name
        with open(path, "wb") as fh:
            fh.truncate(big)
        os.utime(path, (OLD, OLD))
        files[path] = big
    return files


def _intact(files: dict[Path, int]) -> None:
    for path, size in files.items():
        assert path.is_file() and path.stat().st_size == size, f"{path} was deleted or changed"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPELINT", "XDG_"))}
    env.update(PIPELINT_CACHE_DIR=str(tmp_path / "user-cache"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               NO_COLOR="1")
    return env


def _pipelint(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _hostile_project(tmp_path: Path, tag: bool) -> tuple[Path, dict[Path, int]]:
    """A project whose committed `.plcache/v2/data/00` (and `stat/00`) link to the victim; with
    `tag`, it even commits a valid CACHEDIR.TAG so the root itself passes."""
    victim = _victim(tmp_path / "victim")
    project = tmp_path / "project"
    (project / ".plcache" / "v2" / "data").mkdir(parents=True)
    (project / ".plcache" / "v2" / "stat").mkdir(parents=True)
    os.symlink(tmp_path / "victim", project / ".plcache" / "v2" / "data" / "00")
    os.symlink(tmp_path / "victim", project / ".plcache" / "v2" / "stat" / "aa")
    if tag:
        (project / ".plcache" / cachedir.TAG_NAME).write_bytes(cachedir.TAG_TEXT)
    (project / "pyproject.toml").write_text('[tool.pipelint]\ncache-dir = ".plcache"\n')
    (project / "k.cu").write_text(KERNEL.read_text())
    return project, victim


@pytest.mark.parametrize("tag", [False, True], ids=["untagged", "tagged"])
@pytest.mark.parametrize("jobs", [[], ["-j", "2"]], ids=["j1", "j2"])
def test_a_linked_shard_under_the_projects_cache_dir_deletes_nothing(tmp_path, tag, jobs):
    project, victim = _hostile_project(tmp_path, tag)
    (project / "k2.cu").write_text(KERNEL.read_text().replace("// ", "//  ", 1))
    for _ in range(2):
        res = _pipelint(["check", "k.cu", "k2.cu", *jobs], project, _env(tmp_path))
        assert res.returncode == 0, res.stderr
    _intact(victim)
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == sorted(p.name for p in victim)


def test_a_cache_root_that_is_a_link_is_refused_with_a_warning(tmp_path):
    victim = _victim(tmp_path / "victim")
    project = tmp_path / "project"
    project.mkdir()
    os.symlink(tmp_path / "victim", project / ".plcache")
    (project / "pyproject.toml").write_text('[tool.pipelint]\ncache-dir = ".plcache"\n')
    (project / "k.cu").write_text(KERNEL.read_text())
    res = _pipelint(["check", "k.cu"], project, _env(tmp_path))
    assert res.returncode == 0 and "is a symbolic link" in res.stderr and "cache-dir" in res.stderr
    _intact(victim)
    assert not (tmp_path / "victim" / "v2").exists() and not (tmp_path / "victim" / cachedir.TAG_NAME).exists()
    # the command line names a linked root: refused too, the run goes on without a cache
    res = _pipelint(["check", "k.cu", "--cache-dir", str(project / ".plcache")], project, _env(tmp_path))
    assert res.returncode == 0 and "running without that cache" in res.stderr
    _intact(victim)


@pytest.mark.parametrize("cache_dir", ["../..", "/", "../victim", "sub/../../victim"])
def test_a_project_cannot_place_the_cache_outside_its_folder(tmp_path, cache_dir):
    victim = _victim(tmp_path / "victim", big=2**20)
    project = tmp_path / "deep" / "project"
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text(f'[tool.pipelint]\ncache-dir = "{cache_dir}"\n')
    (project / "k.cu").write_text(KERNEL.read_text())
    env = _env(tmp_path)
    res = _pipelint(["check", "k.cu"], project, env)
    assert res.returncode == 0 and "is not used" in res.stderr, res.stderr
    assert (tmp_path / "user-cache" / "v2").is_dir()        # the user's own cache took the results
    assert not (tmp_path / "victim" / "v2").exists()
    _intact(victim)


def test_clean_with_cache_dir_up_the_tree_removes_nothing_of_the_users(tmp_path):
    """`cache-dir = "../.."`: clean used to remove v1/, lower/, lsp/, grammars-of-my-thesis/ there."""
    home = tmp_path / "home"
    mine = {}
    for name in ("v1", "lower", "lsp", "grammars-of-my-thesis"):
        mine.update(_victim(home / name, ["notes.txt", "b" * 62, "c" * 40 + ".json"], big=4096))
    project = home / "work" / "project"
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.pipelint]\ncache-dir = "../.."\n')
    env = _env(tmp_path)
    for args in (["clean", "--dry-run"], ["clean"]):
        res = _pipelint(args, project, env)
        assert res.returncode == 0, res.stderr
    _intact(mine)
    # and with the folder named on the command line: it holds no CACHEDIR.TAG, so nothing goes
    res = _pipelint(["clean", "--cache-dir", str(home)], project, env)
    assert "CACHEDIR.TAG" in res.stderr
    _intact(mine)


def test_clean_with_cache_dir_src_keeps_the_projects_own_folders(tmp_path):
    project = tmp_path / "project"
    src = {**_victim(project / "src" / "v2", ["module.py", "d" * 62], big=100),
           **_victim(project / "src" / "grammars", ["cuda.lark", "e" * 20], big=100),
           **_victim(project / "src" / "lower", ["f" * 40 + ".json"], big=100)}
    (project / "pyproject.toml").write_text('[tool.pipelint]\ncache-dir = "src"\n')
    (project / "k.cu").write_text(KERNEL.read_text())
    env = _env(tmp_path)
    res = _pipelint(["check", "k.cu"], project, env)
    assert res.returncode == 0 and "did not make" in res.stderr      # src/ is not a cache: not written
    assert not (project / "src" / cachedir.TAG_NAME).exists()
    for args in (["clean", "--dry-run"], ["clean"]):
        res = _pipelint(args, project, env)
        assert res.returncode == 0 and "did not make it" in res.stderr, res.stderr
    _intact(src)


def test_clean_removes_only_entries_and_lists_them_in_a_dry_run(tmp_path):
    env = _env(tmp_path)
    root = tmp_path / "user-cache"
    assert _pipelint(["check", str(KERNEL)], tmp_path, env).returncode == 0
    assert cachedir.has_tag(root)
    planted = _victim(tmp_path / "victim", big=100)
    os.symlink(tmp_path / "victim", root / "v2" / "data" / "ff")          # a link inside the cache
    os.symlink(tmp_path / "victim" / "thesis.pdf", root / "v2" / "stat" / ("9" * 62))
    stranger = root / "lower" / "keep-me.txt"
    stranger.parent.mkdir()
    stranger.write_text("mine")
    dry = _pipelint(["clean", "--dry-run"], tmp_path, env)
    listed = dry.stdout.split()
    assert dry.returncode == 0 and listed and all(str(root) in p for p in listed)
    assert not any("victim" in p or "keep-me" in p or p.endswith("9" * 62) for p in listed)
    assert all(Path(p).exists() for p in listed)                        # a dry run removes nothing
    res = _pipelint(["clean"], tmp_path, env)
    assert res.returncode == 0 and f"removed {len(listed)} file(s)" in res.stderr
    assert not any(Path(p).exists() for p in listed)
    assert stranger.read_text() == "mine" and cachedir.has_tag(root)      # not ours: kept, so the tag stays
    _intact(planted)


def test_the_lowering_caches_never_follow_a_link(tmp_path, monkeypatch):
    """`lower`'s cache and the language server's: a linked `lower/` or `lsp/` in the user's cache
    root is neither written through nor pruned (the server kept 256 entries, deleting the rest)."""
    from pipelint.lowering import driver
    from pipelint.lsp.lowering import Lowerer

    root = tmp_path / "user-cache"
    root.mkdir()
    victim = _victim(tmp_path / "victim", [f"{i:040x}.json" for i in range(300)], big=10)
    os.symlink(tmp_path / "victim", root / "lsp")
    os.symlink(tmp_path / "victim", root / "lower")
    monkeypatch.setenv("PIPELINT_CACHE_DIR", str(root))
    lowerer = Lowerer(cache_dir=root / "lsp")
    lowerer._store(root / "lsp", "1" * 40, {"ok": True})
    assert lowerer.cached("k.py", "x", _settings()) is None
    assert driver._cache_folder(None) is None          # `lower`: a linked lower/ is refused
    _intact(victim)
    assert len(list((tmp_path / "victim").iterdir())) == 300
    asyncio.run(asyncio.sleep(0))


def _settings():
    from pipelint.lsp.settings import LowerSettings

    return LowerSettings(archs=("sm_80",), stages=(2,), params={}, jobs=1, timeout=1.0)


def test_the_servers_project_cache_dir_is_confined(tmp_path):
    from pipelint.lsp.lowering import cache_folder

    project = tmp_path / "project"
    project.mkdir()
    choice = cachedir.choose(None, str(project / "../.."), str(project / "pyproject.toml"))
    assert choice.warning and choice.source != "configuration"
    assert cache_folder(str(choice.path)) != tmp_path / "lsp"


@pytest.mark.skipif(__import__("importlib").util.find_spec("watchfiles") is None, reason="needs the lsp extra")
def test_check_watch_with_a_hostile_cache_dir_deletes_nothing(tmp_path):
    project, victim = _hostile_project(tmp_path, tag=True)
    proc = subprocess.Popen([sys.executable, "-m", "pipelint", "check", "--watch", "k.cu"], cwd=project,
                            env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in iter(proc.stdout.readline, "")], daemon=True).start()
    try:
        deadline, seen = time.monotonic() + 120, ""
        while "watching for changes" not in seen and time.monotonic() < deadline:
            with __import__("contextlib").suppress(queue.Empty):
                seen += lines.get(timeout=0.2)
        assert "watching for changes" in seen, seen
        (project / "k.cu").write_text(KERNEL.read_text() + "\n")
        time.sleep(3)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    _intact(victim)


def test_entries_are_named_by_format_only():
    assert cachedir.ENTRY_FORMATS["result"].fullmatch("v2/data/ab/" + "c" * 62)
    assert not cachedir.ENTRY_FORMATS["result"].fullmatch("v2/data/ab/thesis.pdf")
    assert not cachedir.ENTRY_FORMATS["lower"].fullmatch("lower/notes.json")
    assert cachedir.ENTRY_FORMATS["lsp-cuda"].fullmatch("lsp/cuda/gemm-0123456789/matmul_sm_80_s3.cu")


@pytest.mark.tilelang
@pytest.mark.skipif(__import__("importlib").util.find_spec("tilelang") is None, reason="needs the tilelang extra")
def test_lower_with_a_linked_lowering_cache_writes_and_deletes_nothing_there(tmp_path):
    """`pipelint lower` as a user runs it, its cache root's `lower/` a link to the victim: the
    variant is lowered (the cache refused with a warning), nothing is written into the victim."""
    root = tmp_path / "user-cache"
    root.mkdir()
    victim = _victim(tmp_path / "victim", [f"{i:040x}.json" for i in range(20)], big=10)
    os.symlink(tmp_path / "victim", root / "lower")
    res = _pipelint(["lower", str(ROOT / "examples" / "gemm.py"), "--num-stages", "2", "--arch", "sm_80",
                     "--exit-zero"], tmp_path, _env(tmp_path), timeout=600)
    assert res.returncode == 0, res.stderr
    assert "is a link, not a folder" in res.stderr
    _intact(victim)
    assert len(list((tmp_path / "victim").iterdir())) == 20
