"""A scripted first session of a new user, in a scratch git repository: `pipelint check .` at the
root (with a .venv holding TileLang's headers), a pre-commit hook, a baseline written then used,
and the GitLab and GitHub formats CI would upload."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import fixture
from mutants.mutate import drop_barrier_after_wait

PIPELINT = [sys.executable, "-m", "pipelint"]


def _run(cmd: list[str], cwd, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=300, **kw)


@pytest.fixture
def project(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "project"
    (root / "kernels").mkdir(parents=True)
    (root / "kernels" / "gemm.cu").write_text(fixture("gemm_f16_sm_80_s3.cu").read_text())
    (root / "kernels" / "gemv.cu").write_text(fixture("gemv_sm_80_s2.cu").read_text())
    headers = root / ".venv" / "lib" / "python3.11" / "site-packages" / "tilelang" / "src" / "tl_templates" / "cuda"
    headers.mkdir(parents=True)
    for name in ("gemm.h", "copy.cuh", "ldsm.cuh"):
        (headers / name).write_text("#pragma once\ntemplate <typename T> TL_DEVICE void f(T x) { asm volatile(\n")
    (root / "scratch").mkdir()
    (root / "scratch" / "half_written.cu").write_text("__global__ void k( {\n")
    (root / ".gitignore").write_text(".venv/\nscratch/\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "my-kernels"\nversion = "0"\n\n'
        '[tool.pipelint]\nfail-on = "warning"\nignore = ["redundant-barrier"]\n')
    (root / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: pipelint\n        name: pipelint\n"
        f"        entry: {sys.executable} -m pipelint check --force-exclude\n"
        "        language: system\n        files: \\.(cu|cuh)$\n")
    for cmd in (["git", "init", "-q", "."], ["git", "add", "-A"]):
        assert _run(cmd, root).returncode == 0
    return root


def test_a_new_users_first_session(project):
    # 1. lint the whole repository: only the project's kernels, no parse errors from .venv or scratch
    first = _run([*PIPELINT, "check", ".", "--format", "json"], project)
    assert first.returncode == 0, first.stdout + first.stderr
    doc = json.loads(first.stdout)
    assert sorted(f["path"] for f in doc["files"]) == ["kernels/gemm.cu", "kernels/gemv.cu"]
    assert doc["findings"] == []

    # 2. pre-commit with the hook: passes on clean kernels, fails on a planted race
    if shutil.which("pre-commit") is None and not (os.path.dirname(sys.executable) and
                                                    os.path.exists(os.path.join(os.path.dirname(sys.executable), "pre-commit"))):
        pytest.skip("pre-commit (test extra) not installed")
    precommit = shutil.which("pre-commit") or os.path.join(os.path.dirname(sys.executable), "pre-commit")
    ok = _run([precommit, "run", "--all-files"], project)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (project / "kernels" / "gemm.cu").write_text(drop_barrier_after_wait().text)
    _run(["git", "add", "-A"], project)
    failed = _run([precommit, "run", "--all-files"], project)
    assert failed.returncode == 1 and "missing-barrier" in failed.stdout

    # 3. adopt pipelint on existing code: write a baseline (exit 0), then only new findings count
    wrote = _run([*PIPELINT, "check", ".", "--write-baseline", ".pipelint-baseline.json"], project)
    assert wrote.returncode == 0 and "wrote" in wrote.stderr
    again = _run([*PIPELINT, "check", ".", "--baseline", ".pipelint-baseline.json"], project)
    assert again.returncode == 0 and "baselined" in again.stdout

    # 4. what CI uploads: GitLab code quality and GitHub annotations, repository-relative paths
    gitlab = json.loads(_run([*PIPELINT, "check", ".", "--format", "gitlab"], project).stdout)
    assert gitlab and {i["location"]["path"] for i in gitlab} == {"kernels/gemm.cu"}
    assert {i["check_name"] for i in gitlab} >= {"missing-barrier"}
    github = _run([*PIPELINT, "check", ".", "--format", "github"], project)
    assert github.returncode == 1
    assert all(line.startswith("::error file=kernels/gemm.cu,line=") or line.startswith("::")
               for line in github.stdout.splitlines())
    assert "::error file=kernels/gemm.cu" in github.stdout
