"""Issue 38: bounded work everywhere a checked repository decides the input.

Gitignore/exclude matching in linear time (a hostile pattern against a long name), `--watch`
staying inside the project, a plugin that exits the process, numeric settings out of range and
configuration files linked out of the project.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pathspec
import pytest
from helpers import ROOT, fixture

from pipelint.ignorespec import IgnorePatternError, IgnoreSpec

HOSTILE = "*a" * 12 + "*b"            # backtracking regexes need ~ n^12 steps on "aaaa...a"
LONG_NAME = "a" * 200
KERNEL = "atomic_sum_sm_80_s0.cu"


def _pipelint(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINT")}
    env["PIPELINT_CACHE_DIR"] = str(cwd / ".cache-dir")
    return subprocess.run([sys.executable, "-m", "pipelint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


# ------------------------------------------------------------------------------ 1. matching
def test_a_hostile_pattern_against_a_long_name_is_fast():
    spec = IgnoreSpec.from_lines([HOSTILE, f"/**/x{HOSTILE}/**/{HOSTILE}/", "**/a/" * 30 + "b"])
    start = time.perf_counter()
    for path in (LONG_NAME, LONG_NAME + "/", "/".join([LONG_NAME] * 20), "a/" * 1000 + "c"):
        assert not spec.match_file(path)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("where", ["gitignore", "extend-exclude"])
def test_a_hostile_pattern_does_not_hang_the_walk(tmp_path, where):
    (tmp_path / ".git").mkdir()
    (tmp_path / f"{LONG_NAME}.cu").write_bytes(fixture(KERNEL).read_bytes())
    if where == "gitignore":
        (tmp_path / ".gitignore").write_text(f"{HOSTILE}\n{HOSTILE}/\n")
    else:
        (tmp_path / "pyproject.toml").write_text(f'[tool.pipelint]\nextend-exclude = ["{HOSTILE}"]\n')
    done = _pipelint(["check", ".", "--show-files"], tmp_path, timeout=30)
    assert done.returncode == 0, done.stderr
    assert f"{LONG_NAME}.cu" in done.stdout


def _random_pattern(rng: random.Random) -> str:
    # No bracket expression that could match "/": git's never does, pathspec's `[!a]` can.
    atoms = ["/**/", "**/", "/**", "a", "b", "*", "?", "/", "**", "[ab]", "[!a/]", "\\*", "[]a]", ".", "[a", "x"]
    text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 6)))
    return ("!" if rng.random() < 0.2 else "") + ("/" if rng.random() < 0.1 else "") + text


def test_the_same_answers_as_pathspec_on_random_patterns():
    rng = random.Random(38)
    compared = 0
    for _ in range(3000):
        lines = [_random_pattern(rng) for _ in range(rng.randint(1, 3))]
        try:
            reference = pathspec.GitIgnoreSpec.from_lines(lines)
        except ValueError:
            with pytest.raises(IgnorePatternError):
                IgnoreSpec.from_lines(lines)
            continue
        ours = IgnoreSpec.from_lines(lines)
        for _ in range(8):
            path = "/".join("".join(rng.choice("ab.x") for _ in range(rng.randint(1, 4)))
                            for _ in range(rng.randint(1, 4))) + ("/" if rng.random() < 0.3 else "")
            assert ours.match_file(path) == reference.match_file(path), (lines, path)
            compared += 1
    assert compared > 15000


def test_gitignore_semantics_kept():
    spec = IgnoreSpec.from_lines(["build/", "*.cu", "!keep.cu", "/anchored", "a/**/z", "# comment", ""])
    assert spec.match_file("build/") and spec.match_file("x/build/k.cu")
    assert not spec.match_file("build")                         # a file called build
    assert spec.match_file("k.cu") and not spec.match_file("keep.cu")
    assert spec.match_file("anchored") and not spec.match_file("x/anchored")
    assert spec.match_file("a/z") and spec.match_file("a/b/c/z")
    assert not IgnoreSpec.from_lines(["[!a]b"]).match_file("x/b")   # a bracket never matches "/"


def test_an_invalid_pattern_is_a_usage_error_in_config_and_skipped_in_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_bytes(fixture(KERNEL).read_bytes())
    (tmp_path / ".gitignore").write_text("trailing\\\n!\n")
    done = _pipelint(["check", ".", "--show-files"], tmp_path)
    assert done.returncode == 0 and "k.cu" in done.stdout, done.stderr
    done = _pipelint(["check", ".", "--show-files", "--extend-exclude", "oops\\"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "invalid gitignore pattern" in done.stderr


# ------------------------------------------------------------------------------ 2. --watch
@pytest.mark.skipif(importlib.util.find_spec("watchfiles") is None, reason="needs the lsp extra")
def test_watch_stays_in_the_project_and_follows_no_link(tmp_path):
    from test_lsp_watch import _lines, _wait_for

    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".git").mkdir(parents=True)
    outside.mkdir()
    kernel = project / "k.cu"
    kernel.write_bytes(fixture(KERNEL).read_bytes())
    (project / "to_outside").symlink_to(outside, target_is_directory=True)
    (project / "to_root").symlink_to("/", target_is_directory=True)
    proc = subprocess.Popen([sys.executable, "-m", "pipelint", "check", "--watch", "--no-cache", "."], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, NO_COLOR="1"))
    out: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    try:
        seen = _wait_for(out, "watching for changes")
        for i in range(6):                      # changes outside, through the link: not reported
            (outside / "secret_outside.cu").write_text(f"// {i}\n")
            time.sleep(0.3)
        (project / "sub").mkdir()               # a new folder inside is watched once it exists
        for _ in range(12):
            kernel.write_bytes(kernel.read_bytes() + b"\n")
            try:
                seen += _wait_for(out, "changed:", timeout=3.0)
                break
            except AssertionError:
                continue
        seen += _wait_for(out, "watching for changes")
        assert "changed: k.cu" in seen
        assert "secret_outside" not in seen and "internal error" not in seen and proc.poll() is None, seen
    finally:
        proc.terminate()
        proc.wait(10)


def test_watched_folders_do_not_enter_links_or_excluded_folders(tmp_path):
    from pipelint.lsp.watch import watched_folders

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / "link").symlink_to("/", target_is_directory=True)
    (tmp_path / "k.py").write_text("")
    assert watched_folders([str(tmp_path)]) == [str(tmp_path), str(tmp_path / "a"), str(tmp_path / "a" / "b")]
    assert watched_folders([str(tmp_path / "k.py")]) == [str(tmp_path)]


# ------------------------------------------------------------------------------ 3. a plugin ends the process
_EXIT_PLUGIN = '''
import os
import signal

from pipelint import hookimpl


@hookimpl
def pipelint_check_kernel(kernel, parsed, path):
    name = os.path.basename(path)
    if name.startswith("die"):
        os._exit(0)
    if name.startswith("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    return []
'''

_DRIVER = '''
import sys
sys.path.insert(0, sys.argv.pop(1))
import exit_plugin
import pipelint.cli as cli
import pipelint.engine as engine
from pipelint.pluginhost import load_plugins


def with_plugin(disable=(), extra_modules=()):
    return load_plugins(disable, extra_modules=[exit_plugin, *extra_modules])


cli.load_plugins = engine.load_plugins = with_plugin      # workers are forked: they inherit it
sys.exit(cli.main(sys.argv[1:]))
'''


@pytest.mark.parametrize(("victim", "jobs"), [("die", "1"), ("die", "2"), ("kill", "2")])
def test_a_plugin_that_ends_the_process_is_an_error_and_other_results_are_kept(tmp_path, victim, jobs):
    (tmp_path / ".git").mkdir()
    (tmp_path / "exit_plugin.py").write_text(_EXIT_PLUGIN)
    (tmp_path / "driver.py").write_text(_DRIVER)
    source = fixture(KERNEL).read_bytes()
    for name in ("a.cu", f"{victim}.cu", "z.cu"):
        (tmp_path / name).write_bytes(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINT")}
    done = subprocess.run([sys.executable, "driver.py", str(tmp_path), "check", "a.cu", f"{victim}.cu", "z.cu",
                           "--no-cache", "--format", "json", "-j", jobs], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, (done.stdout, done.stderr)
    report = json.loads(done.stdout)
    parsed = {f["path"] for f in report["files"] if f["parsed"]}
    assert {"a.cu", "z.cu"} <= parsed, report["files"]
    messages = " ".join(e["message"] for e in report["errors"])
    assert ("os._exit(0)" in messages) if victim == "die" else ("died" in messages), messages


# ------------------------------------------------------------------------------ 4. settings in range
@pytest.mark.parametrize("table", ["time-budget = 1e308", "memory-budget = 1e30", "max-file-size = 1e300",
                                   "jobs = 99999999999", "lower = { timeout = 1e300 }",
                                   "lower = { num-stages = [100000000000] }", "lower = { jobs = 100000 }"])
def test_a_setting_out_of_range_is_a_usage_error(tmp_path, table):
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_bytes(fixture(KERNEL).read_bytes())
    (tmp_path / "pyproject.toml").write_text(f"[tool.pipelint]\n{table}\n")
    done = _pipelint(["check", "k.cu", "--no-cache"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "expected a number <=" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("flag", ["--time-budget=1e308", "--memory-budget=1e30", "--max-file-size=1e300",
                                  "--jobs=99999999999", "--time-budget=nan", "--memory-budget=-1"])
def test_a_flag_out_of_range_is_a_usage_error(tmp_path, flag):
    (tmp_path / "k.cu").write_bytes(fixture(KERNEL).read_bytes())
    done = _pipelint(["check", "k.cu", "--no-cache", flag], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "expected a" in done.stderr and "<=" in done.stderr and "Traceback" not in done.stderr


def test_every_number_of_the_schema_has_a_range():
    from pipelint.schema import schema

    def numbers(node, where=""):
        if isinstance(node, dict):
            kinds = node.get("type")
            kinds = kinds if isinstance(kinds, list) else [kinds]
            if {"number", "integer"} & set(kinds):
                yield where, node
            for key, value in node.items():
                yield from numbers(value, f"{where}.{key}")

    found = list(numbers(schema()))
    assert len(found) >= 8
    for where, node in found:
        assert "maximum" in node and ("minimum" in node or "exclusiveMinimum" in node), where


def test_the_fallback_validator_knows_maximum(monkeypatch):
    import pipelint.schema as schema_module

    monkeypatch.setitem(sys.modules, "jsonschema", None)          # the core install has no jsonschema
    (problem,) = schema_module.problems({"time-budget": 1e308})
    assert schema_module.message(problem) == "time-budget: expected a number <= 86400, got 1e+308"


def test_a_configuration_linked_out_of_the_project_is_not_read(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / ".git").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text('[tool.pipelint]\nselect = ["no-such-rule-anywhere"]\n')
    (project / "pyproject.toml").symlink_to(elsewhere / "pyproject.toml")
    (project / "k.cu").write_bytes(fixture(KERNEL).read_bytes())
    done = _pipelint(["check", "k.cu", "--no-cache"], project)
    assert done.returncode == 0, done.stderr
    assert "link to a file outside the project" in done.stderr and "no-such-rule" not in done.stderr
    (project / "shared").mkdir()                     # a link inside the repository is read
    (project / "shared" / "pyproject.toml").write_text('[tool.pipelint]\nselect = ["no-such-rule-anywhere"]\n')
    (project / "pyproject.toml").unlink()
    (project / "pyproject.toml").symlink_to(project / "shared" / "pyproject.toml")
    assert _pipelint(["check", "k.cu", "--no-cache"], project).returncode == 2


# ------------------------------------------------------------------------------ 6. a reproducible install
def _requirements() -> list[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["fast"],
            *project["build-system"]["requires"]]


def test_core_dependencies_are_capped_and_the_constraints_file_pins_them():
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, pinned = line.partition("==")
            pins[name.strip().lower().replace("_", "-")] = pinned.strip()
    for text in _requirements():
        req = Requirement(text)
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), f"{text}: no upper bound"
        name = req.name.lower()
        assert name in pins, f"{name} not in constraints.txt"
        assert req.specifier.contains(pins[name]), f"constraints.txt pins {name}=={pins[name]} outside {text}"
        with contextlib.suppress(PackageNotFoundError):           # what .venv holds is what is pinned
            assert version(name) == pins[name] or name == "setuptools", f"{name}: installed {version(name)}"
    assert "-c constraints.txt" in (ROOT / ".ci" / "run").read_text()


def test_ci_recipes_pin_a_tag_or_commit_and_install_with_the_constraints():
    text = (ROOT / "docs" / "ci.md").read_text()
    refs = re.findall(r"PIPELINT_REF: (\S+)", text)
    assert refs and all(ref != "main" and (ref.startswith("v") or re.fullmatch("[0-9a-f]{40}", ref)) for ref in refs)
    installs = re.findall(r"pip install [^\n]*\./\.pipelint[^\n]*", text)
    assert installs and all("-c ./.pipelint/constraints.txt" in line for line in installs), installs


# ------------------------------------------------------------------------------ 7. the editor's pipelint
def test_the_documented_vs_code_extension_never_runs_the_workspace_s_pipelint():
    text = (ROOT / "docs" / "editor.md").read_text()
    extension = text[text.index("`extension.js`"):text.index("## Neovim")]
    assert ".venv" not in extension.split("```js")[1].split("```")[0].replace("<workspace>/.venv", "")
    assert 'getConfiguration("pipelint").get("path")' in extension
    assert "lowerPython: trusted" in extension and "vscode.workspace.isTrusted" in extension
    assert '"restrictedConfigurations": ["pipelint.path"]' in text and '"untrustedWorkspaces"' in text


# ------------------------------------------------------------------------------ 5. the server's lowering workers
_DAEMON = '''
import os, subprocess, sys, time
# a helper in a session of its own that daemonizes (double fork): it leaves the worker's group
subprocess.Popen([sys.executable, "-c", """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
""", "MARK"], start_new_session=True)
time.sleep(1)
'''


def _marked(mark: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if mark.encode() in Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0"):
                    found.append(int(name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux: the worker is its descendants' subreaper")
@pytest.mark.parametrize("hang", [True, False])
def test_a_lowering_worker_is_killed_with_every_process_it_started(tmp_path, hang):
    import asyncio

    from pipelint.lsp.lowering import run_worker

    mark = f"pipelint-test-{os.getpid()}-{hang}"
    text = _DAEMON.replace("MARK", mark) + ("time.sleep(120)\n" if hang else "")
    spec = {"path": str(tmp_path / "k.py"), "text": text, "variants": [["sm_80", None]], "params": {}}
    async def lower() -> dict:
        result = await run_worker(spec, timeout=20 if hang else 120)
        await asyncio.sleep(0.5)            # the killed worker's pipes close inside the loop
        return result

    try:
        result = asyncio.run(lower())
        assert result.get("kind") == "timeout" if hang else result.get("ok"), result
        deadline = time.monotonic() + 5
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _marked(mark), "a process the kernel file started outlived its lowering worker"
    finally:
        for pid in _marked(mark):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)


def _server_analysis(tmp_path: Path, text: str, table: str = "") -> tuple:
    import asyncio

    from pipelint.lsp.server import PipelintServer

    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(f"[tool.pipelint]\n{table}\n")
    server = PipelintServer(tmp_path / "cache")
    started = time.perf_counter()
    analysis = asyncio.run(server.analyse(str(tmp_path / "k.cu"), text))
    return analysis, time.perf_counter() - started


def test_a_buffer_over_the_size_limit_is_not_analysed(tmp_path):
    analysis, seconds = _server_analysis(tmp_path, "// x\n" * (4 * 2**20 // 5 + 10), "max-file-size = 4")
    (d,) = analysis.diagnostics
    assert d.rule == "unreadable-file" and "over the 4 MB limit" in d.message and seconds < 5


def test_a_buffer_is_analysed_in_a_child_with_the_check_budgets(tmp_path):
    text = fixture("flash_attn_fwd_sm_90_s4.cu").read_text()
    analysis, _ = _server_analysis(tmp_path, text, "time-budget = 0.0001")
    assert [d.rule for d in analysis.diagnostics] == ["analysis-limit"]
    clean, _ = _server_analysis(tmp_path, fixture(KERNEL).read_text())
    assert "analysis-limit" not in [d.rule for d in clean.diagnostics]


def test_cancelling_a_buffer_s_analysis_kills_its_process(tmp_path):
    import asyncio
    import multiprocessing

    from pipelint.lsp.cudajob import Budgets, check_in_child

    async def cancelled() -> None:
        text = fixture("flash_attn_fwd_sm_90_s4.cu").read_text() * 40       # a long analysis
        task = asyncio.ensure_future(check_in_child(str(tmp_path / "k.cu"), text, {}, Budgets(60, 0, 2**30)))
        await asyncio.sleep(1.0)
        assert multiprocessing.active_children()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]
