"""What users of ruff, flake8 and semgrep expect from a linter's command line, through the real CLI:
file discovery, selection, output formats, help, progress, plugin configuration and CI recipes."""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import ROOT, fixture
from mutants.mutate import drop_barrier_after_wait, duplicate_barrier


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A project: kernels/ with a race and a clean kernel, a .venv holding a TileLang header."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "race.cu").write_text(drop_barrier_after_wait().text)
    (tmp_path / "kernels" / "clean.cu").write_text(fixture("gemm_f16_sm_80_s3.cu").read_text())
    header = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "tilelang" / "src" / "copy.cuh"
    header.parent.mkdir(parents=True)
    header.write_text("template <int N> __device__ void cp(  // not standalone CUDA\n")
    return tmp_path


def _json(res) -> dict:
    return json.loads(res.out)


def _rules(res) -> set[str]:
    return {f["rule"] for f in _json(res)["findings"]}


def _paths(res) -> set[str]:
    return {f["path"] for f in _json(res)["files"]}


# ---------------------------------------------------------------- discovery
def test_walks_skip_default_excludes_config_excludes_and_gitignore(run_cli, repo):
    assert _paths(run_cli("check", ".", "--format", "json")) == {"kernels/clean.cu", "kernels/race.cu"}
    (repo / "generated").mkdir()
    (repo / "generated" / "old.cu").write_text("__global__ void k( {\n")
    (repo / ".gitignore").write_text("generated/\n")
    assert "generated/old.cu" not in _paths(run_cli("check", ".", "--format", "json"))
    assert "generated/old.cu" in _paths(run_cli("check", ".", "--format", "json", "--no-respect-gitignore"))
    (repo / "pyproject.toml").write_text('[tool.pipelint]\nextend-exclude = ["race.cu"]\n')
    assert _paths(run_cli("check", ".", "--format", "json")) == {"kernels/clean.cu"}
    (repo / "pyproject.toml").write_text('[tool.pipelint]\nexclude = ["kernels/clean.cu", ".venv"]\n')
    assert _paths(run_cli("check", ".", "--format", "json")) == {"kernels/race.cu"}


def test_extend_exclude_flag_and_exclude_replacing_defaults(run_cli, repo):
    assert _paths(run_cli("check", ".", "--format", "json", "--extend-exclude", "clean.cu")) == {"kernels/race.cu"}
    walked_venv = run_cli("check", ".", "--format", "json", "--exclude", "nothing-matches-this")
    assert any(".venv" in p for p in _paths(walked_venv))       # the defaults are replaced


def test_explicit_paths_are_checked_unless_force_exclude(run_cli, repo):
    (repo / "pyproject.toml").write_text('[tool.pipelint]\nextend-exclude = ["kernels/race.cu"]\n')
    assert _paths(run_cli("check", "kernels/race.cu", "--format", "json")) == {"kernels/race.cu"}
    forced = run_cli("check", "kernels/race.cu", "--force-exclude", "--format", "json")
    assert forced.code == 0 and forced.out == ""                # nothing left: success, as pre-commit wants
    both = run_cli("check", "kernels/race.cu", "kernels/clean.cu", "--force-exclude", "--format", "json")
    assert _paths(both) == {"kernels/clean.cu"}


# ---------------------------------------------------------------- selection
def test_select_by_plugin_name_all_and_repeated_flags(run_cli, repo):
    race = ["check", "kernels/race.cu", "kernels/clean.cu", "--format", "json"]
    everything = _rules(run_cli(*race))
    assert "missing-barrier" in everything
    assert _rules(run_cli(*race, "--select", "ALL")) == everything
    by_plugin = _rules(run_cli(*race, "--select", "barriers"))
    assert by_plugin and all(r in {"missing-barrier", "redundant-barrier", "barrier-in-branch",
                                   "barrier-on-critical-path"} or r.endswith("barrier") for r in by_plugin)
    repeated = _rules(run_cli(*race, "--select", "missing-barrier", "--select", "redundant-barrier"))
    assert repeated == everything & {"missing-barrier", "redundant-barrier"} and "missing-barrier" in repeated
    assert _rules(run_cli(*race, "--select", "barriers", "--ignore", "missing-barrier")) == by_plugin - {
        "missing-barrier"}                                       # the rule is more specific than its plugin
    assert _rules(run_cli(*race, "--ignore", "barriers", "--extend-select", "missing-barrier")) >= {
        "missing-barrier"}
    assert _rules(run_cli(*race, "--ignore", "ALL")) == set()
    bad = run_cli(*race, "--select", "barriers,no-such-thing")
    assert bad.code == 2 and "no-such-thing" in bad.err


def test_core_rules_are_selectable_like_any_other(run_cli, repo):
    (repo / "kernels" / "broken.cu").write_text("__global__ void k() { int x = ; }\n")
    res = run_cli("check", "kernels", "--format", "json", "--select", "pipelint")
    assert _rules(res) == {"parse-error"}
    assert "parse-error" not in _rules(run_cli("check", "kernels", "--format", "json", "--ignore", "parse-error"))


def test_per_file_ignores_are_relative_to_the_config_file(run_cli, repo, monkeypatch):
    (repo / "pyproject.toml").write_text('[tool.pipelint.per-file-ignores]\n"kernels/race.cu" = ["barriers"]\n')
    assert "missing-barrier" not in _rules(run_cli("check", ".", "--format", "json"))
    monkeypatch.chdir(repo / "kernels")
    assert "missing-barrier" not in _rules(run_cli("check", ".", "--format", "json"))
    (repo / "pyproject.toml").write_text('[tool.pipelint.per-file-ignores]\n"other/*.cu" = ["barriers"]\n')
    assert "missing-barrier" in _rules(run_cli("check", ".", "--format", "json"))


def test_suppressions_of_disabled_rules_are_not_unused_and_unused_can_be_ignored(run_cli, repo):
    m = duplicate_barrier()
    path = repo / "kernels" / "dup.cu"
    lines = m.text.split("\n")
    lines.insert(m.line - 1, "    // pipelint: ignore[redundant-barrier]")
    lines.insert(5, "// pipelint: ignore[missing-barrier]")       # suppresses nothing in this file
    path.write_text("\n".join(lines))
    res = run_cli("check", "kernels/dup.cu", "--format", "json")
    assert [f["line"] for f in _json(res)["findings"] if f["rule"] == "unused-suppression"] == [6]
    quiet = run_cli("check", "kernels/dup.cu", "--format", "json", "--ignore", "unused-suppression")
    assert "unused-suppression" not in _rules(quiet)
    off = run_cli("check", "kernels/dup.cu", "--format", "json", "--ignore", "missing-barrier")
    assert "unused-suppression" not in _rules(off)          # waiting for a rule that is off: not unused


# ---------------------------------------------------------------- output formats
def test_concise_gitlab_and_junit_formats(run_cli, repo):
    args = ["check", "kernels/race.cu", "kernels/clean.cu"]
    concise = run_cli(*args, "--format", "concise").out.splitlines()
    assert concise and all(re.match(r"kernels/\w+\.cu:\d+:\d+: (error|warning|note)\[[\w-]+\] .+", line)
                           for line in concise)
    findings = _json(run_cli(*args, "--format", "json"))["findings"]
    issues = json.loads(run_cli(*args, "--format", "gitlab").out)
    assert len(issues) == len(findings)
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert issue["location"]["path"].startswith("kernels/") and issue["location"]["lines"]["begin"] >= 1
    assert any(i["check_name"] == "missing-barrier" and i["severity"] == "critical" for i in issues)
    suite = ET.fromstring(run_cli(*args, "--format", "junit").out)
    assert suite.tag == "testsuites" and suite.get("tests") == "2" and suite.get("failures") == "1"
    failures = suite.findall(".//testcase[@name='kernels/race.cu']/failure")
    assert {f.get("type") for f in failures} >= {"missing-barrier"}
    assert run_cli(*args, "--output-format", "concise").out.splitlines() == concise


def test_explain_and_diff_speak_json(run_cli):
    a, b = fixture("gemm_f16_sm_80_s2.cu"), fixture("gemm_f16_sm_80_s3.cu")
    [doc] = json.loads(run_cli("explain", b, "--format", "json").out)
    [kernel] = doc["kernels"]
    assert {buf["versions"] for buf in kernel["buffers"] if "versions" in buf} == {3}
    assert kernel["steady_wait"] == {"wait": 2, "commits_per_iteration": 1}
    assert all({"line", "in_loop", "orders"} <= set(bar) for bar in kernel["barriers"])
    diff = json.loads(run_cli("diff", a, b, "--format", "json").out)
    changed = {f["fact"] for f in diff["facts"] if f["changed"]}
    assert "stages in flight" in changed and "kernel" not in changed


# ---------------------------------------------------------------- help, version, progress
def test_every_subcommand_has_a_description_examples_and_help_for_each_option():
    from pipelint.cli import build_parser
    from pipelint.pluginhost import load_plugins

    parser = build_parser(load_plugins())
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"check", "lower", "diff", "explain", "rules", "rule", "plugins", "bench"} <= set(sub.choices)
    for name, command in sub.choices.items():
        assert command.description and "examples:" in (command.epilog or ""), name
        for action in command._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help and action.help != argparse.SUPPRESS, (name, action.option_strings or action.dest)


def test_version_lists_plugins_without_loading_them():
    code = ("import sys; from pipelint.cli import main; main(['--version']); "
            "assert not [m for m in sys.modules if m.startswith('pipelint.plugins.')], 'plugins were imported'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("pipelint ") and "plugin barriers (pipelint " in out.stdout


class _Terminal:
    """A stand-in for stderr that says it is a terminal."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s
        return len(s)

    def flush(self):
        pass

    def isatty(self):
        return True


def test_progress_only_on_a_terminal_and_never_when_quiet(run_cli, repo, monkeypatch):
    from pipelint import progress

    files = ["check", "kernels/race.cu", "kernels/clean.cu", "--no-cache", "-j", "1"]
    term = _Terminal()
    monkeypatch.setattr(progress.sys, "stderr", term)
    run_cli(*files)
    assert "checking" in term.text and "2/2" in term.text
    term.text = ""
    run_cli(*files, "--quiet")
    assert term.text == ""
    monkeypatch.undo()
    assert "checking" not in run_cli(*files).err              # pytest's capture is not a terminal


# ---------------------------------------------------------------- plugin configuration
def test_plugin_tables_are_validated(run_cli, repo):
    (repo / "pyproject.toml").write_text('[tool.pipelint.plugins.no-such-plugin]\nx = 1\n')
    res = run_cli("check", "kernels/clean.cu")
    assert res.code == 2 and "no plugin named no-such-plugin" in res.err
    (repo / "pyproject.toml").write_text('[tool.pipelint]\nplugins = 3\n')
    assert run_cli("check", "kernels/clean.cu").code == 2


# ---------------------------------------------------------------- CI recipes
def _yaml_blocks(markdown: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", markdown, flags=re.S)


@pytest.mark.skipif(shutil.which("check-jsonschema") is None and not (Path(sys.executable).parent /
                    "check-jsonschema").exists(), reason="check-jsonschema (test extra) not installed")
def test_ci_recipes_validate_against_github_and_gitlab_schemas(tmp_path):
    github, gitlab = _yaml_blocks((ROOT / "docs" / "ci.md").read_text())
    [precommit] = _yaml_blocks((ROOT / "docs" / "pre-commit.md").read_text())
    assert "actions: read" in github and "upload-sarif@v4" in github and "if: always()" in github
    assert "[ -f .pipelint-baseline.json ]" in github and "codequality:" in gitlab and "--format gitlab" in gitlab
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    for text, schema, name in ((github, "vendor.github-workflows", "pipelint.yml"),
                               (gitlab, "vendor.gitlab-ci", ".gitlab-ci.yml")):
        path = tmp_path / name
        path.write_text(text)
        out = subprocess.run([tool, "--builtin-schema", schema, str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
    assert "id: pipelint" in precommit
