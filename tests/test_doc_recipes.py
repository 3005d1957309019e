"""Every command block of README.md, docs/ci.md and docs/pre-commit.md, run as written on a fresh
clone of this repository (issue 26: a user's first hour).

Slow (fresh virtualenvs, wheels built from the clone, pre-commit environments, a few TileLang
lowerings): marked `recipes`, so `-m "not recipes"` skips it in a quick loop; CI runs it.

What is substituted, and why:

* `PIPELINT_REPO` / `PIPELINT_REF` (the CI recipes' variables, pre-commit's `repo`/`rev`) point at
  the fresh clone and its commit instead of GitHub: nothing outside this machine can be reached.
* README's setup command (torch + the editable install) is what `.ci/run` runs verbatim before the
  suite; the test checks that, then reuses the `.venv` it made (symlinked into the clone) instead of
  installing torch and TileLang a second time.
* The GitHub recipe's "regenerate" step installs torch from PyTorch's CPU index, which cannot be
  reached here; its `pipelint lower` loop runs with the `.venv` that has TileLang (the same
  versions), and is skipped with pre-dumped TileLang output when TileLang is not installed.
* `uses:` steps: checkout is the scratch repository itself, setup-python is this Python, and
  upload-sarif is replaced by validating the file against the SARIF 2.1.0 schema (and checking
  that no URI climbs out of the repository with `..`).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers import ROOT

pytestmark = pytest.mark.recipes

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
VENV_BIN = Path(sys.executable).parent
KERNELS = ROOT / "tests" / "fixtures" / "kernels"
SETUP_LOWER = ".venv/bin/pipelint lower examples/gemm.py --num-stages 0 1 2 3 4 --arch sm_80 sm_90 --dump-dir lowered"
SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json"


def blocks(doc: str, lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall((ROOT / doc).read_text()) if kind == lang]


def commands(block: str) -> list[str]:
    """The block's commands: continuation lines joined, blank lines dropped."""
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.strip() and not c.lstrip().startswith("#")]


def have_tilelang() -> bool:
    return subprocess.run([sys.executable, "-c", "import tilelang"], capture_output=True).returncode == 0


def sh(cmd: str, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"`{cmd}` exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("recipes")


@pytest.fixture(scope="module")
def clone(scratch) -> Path:
    """A fresh clone of this repository (its committed HEAD, as CI's checkout is)."""
    target = scratch / "pipelint"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    return target


@pytest.fixture(scope="module")
def env(scratch) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PIPELINT_TILELANG", "VIRTUAL_ENV"))}
    (scratch / "tmp").mkdir(exist_ok=True)
    base.update(TMPDIR=str(scratch / "tmp"), PIPELINT_CACHE_DIR=str(scratch / "cache"),
                PRE_COMMIT_HOME=str(scratch / "pre-commit-home"),
                PIP_DISABLE_PIP_VERSION_CHECK="1", GIT_AUTHOR_NAME="ci", GIT_AUTHOR_EMAIL="ci@localhost",
                GIT_COMMITTER_NAME="ci", GIT_COMMITTER_EMAIL="ci@localhost", NO_COLOR="1")
    return base


@pytest.fixture(scope="module")
def user_venv(scratch) -> Path:
    """A bare virtualenv standing for the CI runner's Python (`pip` of the recipes)."""
    venv = scratch / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return venv / "bin"


def _path(*bins: Path, env: dict[str, str]) -> dict[str, str]:
    return {**env, "PATH": os.pathsep.join([*map(str, bins), env.get("PATH", "")])}


def _project(root: Path, clone: Path, modules: bool) -> Path:
    """A user's repository: kernels/ with two TileLang modules whose factory is called `make`, a
    gitignored lowered/ (filled by the recipe, or with TileLang output when TileLang is absent)."""
    root.mkdir()
    (root / "kernels").mkdir()
    gemm = (ROOT / "examples" / "gemm.py").read_text().replace("def matmul(", "def make(")
    (root / "kernels" / "a.py").write_text(gemm)
    (root / "kernels" / "b.py").write_text(gemm.replace("block_K=32", "block_K=64"))
    if not modules:     # no TileLang here: what the loop would have dumped
        for module in ("a", "b"):
            (root / "lowered" / module).mkdir(parents=True)
            for name in ("gemm_f16_sm_80_s3.cu", "gemm_f16_sm_90_s3.cu"):
                shutil.copy(KERNELS / name, root / "lowered" / module / name.replace("gemm_f16", "make"))
    (root / ".gitignore").write_text("/lowered/\n/.pipelint/\n")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=ci", "-c", "user.email=ci@localhost", "commit", "-qm", "kernels"],
                   cwd=root, check=True)
    return root


def _repo_vars(clone: Path) -> dict[str, str]:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True)
    return {"PIPELINT_REPO": str(clone), "PIPELINT_REF": head.stdout.strip()}


def _check_sarif(path: Path) -> dict:
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, json.loads(SARIF_SCHEMA.read_text()))
    uris = re.findall(r'"uri": "([^"]*)"', path.read_text())
    assert uris and not [u for u in uris if u.startswith("..") or "/../" in u], uris
    return doc


# ------------------------------------------------------------------------------------------ README
def test_readme_setup_is_what_ci_runs():
    """README's first block is the setup `.ci/run` performs before the suite (so this file may use
    the `.venv` it made), and its test command is the one `.ci/run` runs."""
    ci = (ROOT / ".ci" / "run").read_text().replace(" --disable-pip-version-check", "")
    setup, tests = blocks("README.md", "bash")[:2]
    *install, lower = commands(setup)[0].split(" && ")
    for cmd in install:
        assert cmd in ci, cmd
    assert lower == SETUP_LOWER         # run by test_readme_usage_block_in_the_clone
    # "Run the tests": the quick set, then the full set (issue 34); `.ci/run` runs both, quick first
    assert commands(tests) == [QUICK_TESTS, FULL_TESTS]
    assert ci.index(QUICK_TESTS + "\n") < ci.index(FULL_TESTS + "\n")


QUICK_TESTS = '.venv/bin/python -m pytest -p tests.testsets -n 2 -m "not slow and not tilelang and not recipes"'
FULL_TESTS = ".venv/bin/python -m pytest -p tests.testsets -n 2"


def test_the_quick_set_leaves_out_exactly_the_long_tests():
    """`tests/testsets.py` marks what it lists `slow`; every listed test still exists (a renamed
    slow test would silently join the quick set)."""
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.testsets", "-o", "addopts=",
                          "--collect-only", "-q", "-m", "slow"], cwd=ROOT, capture_output=True, text=True)
    collected = {line.strip() for line in out.stdout.splitlines() if "::" in line}
    sys.path.insert(0, str(ROOT))
    from tests.testsets import SLOW

    for node in SLOW:
        assert node in collected or any(c.startswith(node + "[") for c in collected), node


def test_readme_wheel_from_a_clone(clone, env):
    """The install line for `pipelint check` alone: a wheel `pip wheel` builds from the clone."""
    [block] = [b for b in blocks("README.md", "bash") if "pip wheel" in b]
    for cmd in commands(block):
        out = sh(cmd, clone, env)
    assert out.stdout.startswith("pipelint ")


def test_readme_usage_block_in_the_clone(clone, env):
    """README's "Using it" block, line by line, in the clone after the setup command; lowered/ is
    gitignored there and checked all the same; clean TileLang output exits 0."""
    assert "/lowered/" in (clone / ".gitignore").read_text()
    venv = clone / ".venv"
    if not venv.exists():
        venv.symlink_to(VENV_BIN.parent)
    tilelang = have_tilelang()
    lowered = clone / "lowered"
    if tilelang:      # the main job of README's setup command: it dumps lowered/
        out = sh(SETUP_LOWER, clone, env)
        assert "software_pipeline_stage = [0, 0, 2]" in out.stdout
    else:
        lowered.mkdir(exist_ok=True)
        for arch, n in (("sm_80", 2), ("sm_80", 3), ("sm_90", 3)):
            shutil.copy(KERNELS / f"gemm_f16_{arch}_s{n}.cu", lowered / f"matmul_{arch}_s{n}.cu")
    [block] = [b for b in blocks("README.md", "bash") if "pipelint check lowered/" in b]
    ran = 0
    for cmd in commands(block):
        if "needs a GPU" in cmd or (" lower " in cmd and not tilelang):
            continue
        out = sh(cmd, clone, env)
        ran += 1
        if "--show-files" in cmd:
            assert "lowered/matmul_sm_80_s3.cu" in out.stdout.split()
        if "--format sarif" in cmd:
            _check_sarif(clone / "pipelint.sarif")
    assert ran >= 12


# ----------------------------------------------------------------------------------------- docs/ci
def _workflow() -> dict:
    [text] = [b for b in blocks("docs/ci.md", "yaml") if "jobs:" in b]
    return yaml.safe_load(text)


def test_github_actions_recipe(scratch, clone, env, user_venv):
    """The workflow's steps in a scratch repository: install from the clone, lower two modules with
    a factory called `make` (one folder each), check the gitignored lowered/, validate the SARIF."""
    flow = _workflow()
    tilelang = have_tilelang()
    project = _project(scratch / "gh-user", clone, modules=tilelang)
    variables = {**flow.get("env", {}), **_repo_vars(clone)}
    user = _path(user_venv, env={**env, **variables})
    for step in flow["jobs"]["lint-kernels"]["steps"]:
        if "upload-sarif" in step.get("uses", ""):
            doc = _check_sarif(project / step["with"]["sarif_file"])
            assert doc["runs"][0]["automationDetails"]["id"] == step["with"]["category"] + "/"
        if "run" not in step:
            continue
        if step["name"].startswith("Regenerate"):
            if not tilelang:
                continue
            # torch and TileLang as README's setup installed them (PyTorch's index is out of reach)
            loop = "\n".join(line for line in step["run"].splitlines() if not line.strip().startswith("pip install"))
            sh(loop, project, _path(VENV_BIN, env={**env, **variables}))
            continue
        sh(step["run"], project, user)
    # one folder per module: the two `make` factories did not overwrite each other
    a, b = (project / "lowered" / m / "make_sm_80_s3.cu" for m in ("a", "b"))
    assert a.is_file() and b.is_file() and a.read_text() != b.read_text()
    assert (user_venv / "pipelint").exists()    # the check step ran the wheel built from the clone


def test_github_actions_recipe_fails_on_a_kernel_that_does_not_lower(scratch, env):
    """Issue 39 (failures that fail): the workflow's own `lower` loop and check step, as docs/ci.md
    writes them, on a repository whose one kernel TileLang 0.1.15 cannot lower for sm_90 (the
    two-loop softmax: an InternalError).  `lower --exit-zero` lets the job go on, the check step
    fails (exit 1) and its SARIF holds a `lowering-failed` result at the kernel's Python file."""
    if not have_tilelang():
        pytest.skip("needs TileLang (the tilelang extra)")
    flow = _workflow()
    steps = {s["name"]: s for s in flow["jobs"]["lint-kernels"]["steps"] if "name" in s}
    regenerate = next(s["run"] for n, s in steps.items() if n.startswith("Regenerate"))
    check = next(s["run"] for n, s in steps.items() if n.startswith("Check"))
    project = scratch / "gh-fails"
    (project / "kernels").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "fixtures" / "causes" / "two_loop_softmax.py", project / "kernels")
    user = _path(VENV_BIN, env={**env, **flow.get("env", {})})
    sh("\n".join(line for line in regenerate.splitlines() if not line.strip().startswith("pip install")), project, user)
    record = project / "lowered" / "two_loop_softmax" / "online_softmax_sm_90_s3.cu"
    assert record.read_text().startswith("// pipelint: TileLang could not lower")
    failed = subprocess.run(["bash", "-eo", "pipefail", "-c", check], cwd=project, env=user, capture_output=True,
                            text=True, timeout=600)
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    doc = _check_sarif(project / "pipelint.sarif")
    hits = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "lowering-failed"]
    assert hits and all(r["level"] == "error" for r in hits)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in hits for loc in r["locations"]}
    assert any(u.endswith("two_loop_softmax.py") for u in uris), uris


def test_dump_name_collision_is_a_usage_error(scratch, env):
    """Two modules, one dump folder, one factory name: the second lowering refuses (exit 2)."""
    if not have_tilelang():
        pytest.skip("needs TileLang (the tilelang extra)")
    project = scratch / "collide"
    project.mkdir()
    gemm = (ROOT / "examples" / "gemm.py").read_text().replace("def matmul(", "def make(")
    (project / "a.py").write_text(gemm)
    (project / "b.py").write_text(gemm.replace("block_K=32", "block_K=64"))
    pl = f"{VENV_BIN / 'pipelint'} lower {{}} --num-stages 3 --arch sm_80 --dump-dir lowered -q"
    sh(pl.format("a.py"), project, env)
    sh(pl.format("a.py"), project, env)          # the same module again: its own files, no error
    second = subprocess.run(["bash", "-c", pl.format("b.py")], cwd=project, env=env, capture_output=True, text=True)
    assert second.returncode == 2 and "would overwrite" in second.stderr, second.stderr


def test_gitlab_recipe(scratch, clone, env, user_venv):
    [text] = [b for b in blocks("docs/ci.md", "yaml") if "codequality" in b]
    job = yaml.safe_load(text)["pipelint"]
    project = _project(scratch / "gl-user", clone, modules=False)
    user = _path(user_venv, env={**env, **job["variables"], **_repo_vars(clone)})
    for line in job["script"]:
        sh(line, project, user)
    report = json.loads((project / "gl-code-quality-report.json").read_text())
    assert isinstance(report, list)
    _check_sarif(project / "pipelint.sarif")


# ------------------------------------------------------------------------------------- pre-commit
def test_pre_commit_recipe(scratch, clone, env):
    """docs/pre-commit.md: try-repo from a clone, then the config with `rev` = that clone's commit."""
    project = _project(scratch / "pc-user", clone, modules=False)
    shutil.copy(KERNELS / "gemm_f16_sm_80_s3.cu", project / "kernels" / "gemm.cu")
    subprocess.run(["git", "add", "kernels/gemm.cu"], cwd=project, check=True)
    variables = _repo_vars(clone)
    tools = _path(VENV_BIN, env={**env, **variables})      # pre-commit comes with the test extra
    try_it, run_it = blocks("docs/pre-commit.md", "bash")
    for cmd in commands(try_it):
        out = sh(cmd, project, tools)
    assert "pipelint" in out.stdout and "Passed" in out.stdout
    [config] = blocks("docs/pre-commit.md", "yaml")
    assert not re.search(r"rev: v\d", config)          # no tag that does not exist
    config = config.replace("https://github.com/pipelint/pipelint", str(clone))
    config = re.sub(r"rev: [0-9a-f]{40}", f"rev: {variables['PIPELINT_REF']}", config)
    (project / ".pre-commit-config.yaml").write_text(config)
    for cmd in commands(run_it):
        out = sh(cmd, project, tools)
    assert "Passed" in out.stdout


def test_no_doc_installs_from_pypi_or_a_missing_tag():
    for doc in ("README.md", "docs/ci.md", "docs/pre-commit.md"):
        text = (ROOT / doc).read_text()
        assert not re.search(r"pip install (-q )?['\"]?pipelint\b", text), doc
        assert "rev: v0.1.0" not in text, doc
