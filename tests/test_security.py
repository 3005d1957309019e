"""Safe on untrusted input (issue 25): the kernels, the `#line` names inside them and the folder
being checked may come from anyone.

- a grammar-cache pickle planted where another user can write it is never loaded;
- a hostile `#line` name (or file name) yields no control character in any output format;
- no file outside the project root is opened because a `#line` names it;
- a plugin that prints leaves `--format json` valid (its output becomes a notification).
"""
from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import pipelint.cli as cli
from pipelint import hookimpl
from pipelint.pluginhost import load_plugins
from helpers import ROOT, fixture
from fuzzing import CONTROL, HOSTILE_NAMES
from mutants.mutate import drop_barrier_after_wait

# every registered output format, built-in or a plugin's: a new one is tested here without an edit
FORMATS = tuple(sorted(load_plugins().formats))
SGR = re.compile("\x1b\\[[0-9;]*m")      # pipelint's own colours (--color always)
LINE = re.compile(r'(#line \d+ ")examples/gemm.py(")')


def control_characters(text: str) -> list[str]:
    return sorted({repr(m.group()) for m in CONTROL.finditer(text)})


def with_line_names(names: list[str]) -> str:
    """The missing-barrier mutant with its `#line` names of the user's file cycled over `names`.
    A raw CR ends the directive (nvcc and pipelint take a lone CR as a line end, issue 35), so a
    name holding one cannot reach a `#line` of a kernel that compiles: such names are left out."""
    names = [n for n in names if "\r" not in n]
    count = iter(range(10**6))

    def rename(m: re.Match[str]) -> str:
        name = names[next(count) % len(names)].replace("\\", "\\\\").replace('"', '\\"')
        return m.group(1) + name + m.group(2)

    text, n = LINE.subn(rename, drop_barrier_after_wait().text)
    assert n >= len(names)
    return text


def _subprocess_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPELINT", "XDG_", "TMP"))}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env.update(TMPDIR=str(tmp_path / "tmp"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               PIPELINT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join([*path, str(ROOT / "tests")]))
    return env


# ------------------------------------------------------------------------------ 1. grammar cache
class _Planted:
    """A pickle that, when loaded, creates a folder: proof that the planted cache ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def _plant(path: Path, marker: Path) -> None:
    """What another user on the machine would leave there: any first line, then a pickle."""
    path.write_bytes(b"whatever\n" + pickle.dumps(_Planted(marker)))
    os.chmod(path, 0o666)
    if os.getuid() == 0:
        os.chown(path, 65534, 65534)        # owned by nobody, as an attacker's file would be


def _check(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelint", "check", str(fixture("gemm_f16_sm_80_s3.cu")),
                           "--format", "json", "--no-cache"], env=env, cwd=cwd, capture_output=True, text=True)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_a_planted_grammar_cache_pickle_is_not_loaded(tmp_path):
    env = _subprocess_env(tmp_path)
    first = _check(env, tmp_path)
    assert first.returncode in (0, 1), first.stderr
    caches = [p for p in tmp_path.rglob("*lark*") if p.is_file()]
    assert caches, "the grammar cache was not written anywhere under the test's folders"
    marker = tmp_path / "PLANTED-PICKLE-RAN"
    for path in caches:
        _plant(path, marker)
    second = _check(env, tmp_path)
    assert not marker.exists(), f"pipelint unpickled a planted grammar cache: {caches}"
    assert second.returncode in (0, 1) and json.loads(second.stdout)["files"], second.stderr


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_grammar_cache_is_private_and_nothing_is_written_to_the_temp_folder(tmp_path):
    env = _subprocess_env(tmp_path)
    assert _check(env, tmp_path).returncode in (0, 1)
    assert list((tmp_path / "tmp").iterdir()) == []         # Lark's cache=True would write there
    (folder,) = (tmp_path / "cache").glob("grammar-*")
    assert folder.stat().st_mode & 0o777 == 0o700 and folder.stat().st_uid == os.getuid()
    # a folder of ours that others could write: what is inside is not trusted, the folder is closed
    (cache,) = folder.iterdir()
    marker = tmp_path / "PLANTED-PICKLE-RAN"
    os.chmod(folder, 0o777)
    cache.write_bytes(b"whatever\n" + pickle.dumps(_Planted(marker)))
    assert _check(env, tmp_path).returncode in (0, 1)
    assert not marker.exists()
    assert folder.stat().st_mode & 0o777 == 0o700
    # under a folder others may write (and rename in), no grammar cache is kept at all
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert _check({**env, "PIPELINT_CACHE_DIR": str(shared / "cache")}, tmp_path).returncode in (0, 1)
    assert not list(shared.rglob("*.lark"))
    os.chmod(shared, 0o1777)            # sticky, like /tmp: others cannot swap what is ours
    assert _check({**env, "PIPELINT_CACHE_DIR": str(shared / "cache")}, tmp_path).returncode in (0, 1)
    assert list(shared.rglob("*.lark"))
    # the grammar cache does not follow a project's `cache-dir`: a checked repository cannot plant it
    project = tmp_path / "project"
    (project / "cache").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.pipelint]\ncache-dir = "cache"\n')
    (project / "k.cu").write_text(fixture("gemm_f16_sm_80_s3.cu").read_text())
    subprocess.run([sys.executable, "-m", "pipelint", "check", "k.cu"], env=env, cwd=project, capture_output=True)
    assert not [p for p in (project / "cache").rglob("*") if "lark" in p.name or p.name.startswith("grammar")]


def test_clean_removes_the_grammar_cache(tmp_path):
    env = _subprocess_env(tmp_path)
    assert _check(env, tmp_path).returncode in (0, 1)
    assert list((tmp_path / "cache").glob("grammar-*"))
    subprocess.run([sys.executable, "-m", "pipelint", "clean"], env=env, cwd=tmp_path, capture_output=True)
    assert not (tmp_path / "cache").exists()


# ------------------------------------------------------------------------- 2. escape sequences
@pytest.fixture
def hostile_project(tmp_path, monkeypatch):
    """A project whose kernel names hostile `#line` files, in a file whose own name is hostile."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pipelint]\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "race\x1b]0;NAME\x07.cu").write_text(with_line_names(list(HOSTILE_NAMES)))
    return tmp_path


@pytest.mark.parametrize("primary", ["cuda", "python"])
def test_a_hostile_line_name_yields_no_control_character_in_any_format(run_cli, hostile_project, primary):
    for fmt in FORMATS:
        res = run_cli("check", "kernels", "--format", fmt, "--primary-location", primary)
        assert res.code == 1, (fmt, res.err)
        assert control_characters(res.out) == [], fmt
        assert control_characters(res.err) == [], fmt
    coloured = run_cli("check", "kernels", "--color", "always", "--primary-location", primary)
    assert SGR.search(coloured.out)
    assert control_characters(SGR.sub("", coloured.out)) == []
    for extra in (["-v"], ["--show-files"], ["--statistics"]):
        res = run_cli("check", "kernels", "--no-cache", *extra)
        assert control_characters(res.out + res.err) == [], extra
    text = run_cli("check", "kernels", "--primary-location", primary).out
    assert "race\\x1b]0;NAME\\x07.cu:" in text and '.py:' in text       # shown, not run


def test_github_annotations_cannot_inject_workflow_commands(run_cli, hostile_project):
    out = run_cli("check", "kernels", "--format", "github", "--primary-location", "python").out
    # each annotation is one line starting with `::`; data cannot start another command
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in out.splitlines())


@pytest.mark.parametrize("table", ['select = ["\\u001b]0;PWNED\\u0007"]', '"\\u001b[31mkey" = 1',
                                   'per-file-ignores = {"k.cu" = ["\\u009b31m"]}'])
def test_a_checked_repository_s_configuration_cannot_write_escape_sequences(run_cli, tmp_path, monkeypatch, table):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f"[tool.pipelint]\n{table}\n")
    (tmp_path / "k.cu").write_text(fixture("gemm_f16_sm_80_s3.cu").read_text())
    res = run_cli("check", "k.cu")
    assert res.code == 2 and "\\x" in res.err
    assert control_characters(res.err) == []


def test_visible_escapes_controls_and_leaves_text_alone():
    from pipelint.report.escape import visible

    assert visible("evil\x1b]0;T\x07\x9b\u202e\n\t") == "evil\\x1b]0;T\\x07\\x9b\\u202e\\n\\t"
    assert visible("gemm_sm_80 — é 中 ✓ C:\\dir") == "gemm_sm_80 — é 中 ✓ C:\\dir"


# ------------------------------------------------------------------ 3. files outside the project
_OPENED: list[list[str]] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _OPENED and isinstance(args[0], str | bytes):
        _OPENED[-1].append(os.fsdecode(args[0]))


@pytest.fixture(scope="module")
def opened_files():
    """Every path the process opens while the test's list is active (an audit hook: `open`,
    `io.open`, `os.open` all raise the `open` event)."""
    sys.addaudithook(_audit)
    return _OPENED


@pytest.fixture
def leaky_project(tmp_path, monkeypatch):
    """A project whose kernel's `#line` names a file outside it (relative, absolute and through a
    symbolic link inside the project).  The outside file would suppress every finding if read.
    A linked `.cu` in the project points out of it too (the walk must not follow it)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.py"
    secret.write_text("# pipelint: ignore[missing-barrier]\n" * 400)
    (outside / "credentials").write_text("AWS_SECRET=hunter2\n")
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "link.py").symlink_to(secret)
    (project / "kernels" / "leak.cu").symlink_to(outside / "credentials")
    (project / "pyproject.toml").write_text("[tool.pipelint]\n")
    (project / "kernels" / "race.cu").write_text(with_line_names(
        ["../outside/secret.py", str(secret), "src/link.py", "../../../../../../../../" + str(secret)]))
    monkeypatch.chdir(project)
    return project, outside


def test_no_file_outside_the_project_root_is_opened(run_cli, leaky_project, opened_files, tmp_path):
    project, outside = leaky_project
    runs = [(fmt, primary) for fmt in FORMATS for primary in ("cuda", "python")]
    opened: list[str] = []
    opened_files.append(opened)
    try:
        results = {run: run_cli("check", "kernels", "--no-cache", "--format", run[0], "--primary-location", run[1])
                   for run in runs}
        run_cli("check", "kernels", "--primary-location", "python", "--write-baseline", tmp_path / "b.json")
        run_cli("check", "kernels", "--primary-location", "python", "--baseline", tmp_path / "b.json")
    finally:
        opened_files.remove(opened)
    leaked = sorted({p for p in opened if os.path.realpath(p).startswith(str(outside))})
    assert leaked == []
    assert opened, "the audit hook saw no open at all"
    for (fmt, _), res in results.items():
        assert res.code == 1, (fmt, res.err)      # the outside file's ignore comments were not read
        assert "hunter2" not in res.out and "leak.cu" not in res.out
    # the outside locations are reported, and marked: JSON says so, SARIF has no `..` and no %SRCROOT%
    doc = json.loads(results[("json", "cuda")].out)
    related = [r for f in doc["findings"] for r in f["related"]]
    python = [r for r in related if r["path"].endswith(".py")]
    assert python and all(r.get("outside") for r in python)
    assert not [r for r in related if r["path"].endswith(".cu") and r.get("outside")]
    for primary in ("cuda", "python"):
        sarif = results[("sarif", primary)].out
        uris = re.findall(r'"uri": "([^"]*)"', sarif)
        assert uris and not [u for u in uris if ".." in u]
        for loc in _artifact_locations(json.loads(sarif)):
            if "outside" in loc["uri"]:
                assert loc["uri"].startswith("file:///") and "uriBaseId" not in loc


def test_a_path_map_names_where_the_sources_are(run_cli, leaky_project, opened_files):
    """The user's `--path-map OLD=NEW` trusts NEW: the mapped file is read (its ignore comment
    applies) even though it lies outside the project; a `path-map` in the checked project's
    configuration does not."""
    project, outside = leaky_project
    (project / "kernels" / "race.cu").write_text(with_line_names(["elsewhere/secret.py"]))
    assert run_cli("check", "kernels").code == 1
    res = run_cli("check", "kernels", "--path-map", f"elsewhere/={outside}/", "--format", "json")
    assert not [f for f in res.json["findings"] if f["rule"] == "missing-barrier"]
    # the checked repository's own `path-map` rebases the path but does not open the way out
    (project / "pyproject.toml").write_text(f'[tool.pipelint]\npath-map = ["elsewhere/={outside}/"]\n')
    res = run_cli("check", "kernels", "--format", "json")
    race = [f for f in res.json["findings"] if f["rule"] == "missing-barrier"]
    assert race and {r["path"] for r in race[0]["related"] if r.get("outside")} == {f"{outside}/secret.py"}


def test_a_plugin_finding_outside_the_project_is_not_opened_either(run_cli, leaky_project, opened_files,
                                                                   monkeypatch):
    """A plugin may report at any path (one it read from `#line`): it is confined like the rest."""
    from pipelint import Finding, Location, Rule, Severity

    project, outside = leaky_project
    rule = Rule("far-away", "far-away", "a finding elsewhere", "a finding elsewhere", Severity.WARNING)
    mod = types.ModuleType("far")
    mod.pipelint_rules = hookimpl(lambda: [rule])                               # type: ignore[attr-defined]
    mod.pipelint_check_kernel = hookimpl(lambda kernel, parsed, path: [          # type: ignore[attr-defined]
        Finding(rule.id, rule.severity, "here", Location(str(outside / "secret.py"), 3))])
    real = cli.load_plugins
    monkeypatch.setattr(cli, "load_plugins", lambda disable=(): real(disable, extra_modules=[mod]))
    opened: list[str] = []
    opened_files.append(opened)
    try:
        outputs = [run_cli("check", "kernels", "--no-cache", "--format", fmt).out for fmt in FORMATS]
    finally:
        opened_files.remove(opened)
    assert not [p for p in opened if os.path.realpath(p).startswith(str(outside))]
    assert all("secret.py" in out for out in outputs)           # reported by name


def _artifact_locations(node: object) -> list[dict]:
    if isinstance(node, dict):
        found = [node["artifactLocation"]] if "artifactLocation" in node else []
        return found + [a for v in node.values() for a in _artifact_locations(v)]
    if isinstance(node, list):
        return [a for v in node for a in _artifact_locations(v)]
    return []


# --------------------------------------------------------------------- 4. plugins that print
NOISE = "NOISE FROM A PLUGIN"


def _noisy_module() -> types.ModuleType:
    mod = types.ModuleType("noisy")

    def pipelint_check_kernel(kernel, parsed, path):
        print(NOISE, "stdout")
        print(NOISE, "stderr \x1b]0;PWNED\x07", file=sys.stderr)
        return []

    def pipelint_add_commands(subparsers):
        print(NOISE, "while the command line is built")

    def pipelint_rules():
        print(NOISE, "while rules are declared")
        return []

    mod.pipelint_check_kernel = hookimpl(pipelint_check_kernel)   # type: ignore[attr-defined]
    mod.pipelint_add_commands = hookimpl(pipelint_add_commands)   # type: ignore[attr-defined]
    mod.pipelint_rules = hookimpl(pipelint_rules)                 # type: ignore[attr-defined]
    return mod


@pytest.fixture
def noisy(monkeypatch):
    real = cli.load_plugins
    monkeypatch.setattr(cli, "load_plugins", lambda disable=(): real(disable, extra_modules=[_noisy_module()]))


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_printing_plugin_leaves_machine_output_valid(run_cli, noisy, fmt):
    res = run_cli("check", fixture("gemm_f16_sm_80_s3.cu"), "--format", fmt, "--no-cache")
    doc = json.loads(res.out)                       # the report alone on stdout
    assert NOISE not in res.err
    assert res.code != 3                            # printing is not a crash
    if fmt == "json":
        notes = {e["message"].split(" (kept")[0]: e for e in doc["errors"] if e["plugin"] == "noisy"}
        assert set(notes) == {"plugin 'noisy' printed to stdout and stderr in kernel gemm_kernel",
                              "plugin 'noisy' printed to stdout while declaring rules",
                              "plugin 'noisy' printed to stdout while adding commands"}
        for note in notes.values():
            assert NOISE in note["detail"] and "\x1b" not in note["message"]
    else:
        notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        noisy = [n for n in notes if "'noisy'" in n["message"]["text"]]
        assert len(noisy) == 3 and {n["level"] for n in noisy} == {"warning"}
        assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_a_plugin_writing_to_the_descriptor_or_a_child_process_is_captured_too(tmp_path):
    """Outside the test's capture: the real descriptor 1 of a `pipelint check` process."""
    script = tmp_path / "run.py"
    script.write_text(f'''
import os, subprocess, sys, types
import pipelint.cli as cli
from pipelint import hookimpl

mod = types.ModuleType("noisy")

@hookimpl
def pipelint_check_kernel(kernel, parsed, path):
    print("{NOISE} print")
    sys.__stdout__.write("{NOISE} __stdout__\\n")
    os.write(1, b"{NOISE} fd 1\\n")
    subprocess.run([sys.executable, "-c", "print('{NOISE} child')"])
    return []

mod.pipelint_check_kernel = pipelint_check_kernel
real = cli.load_plugins
cli.load_plugins = lambda disable=(): real(disable, extra_modules=[mod])
sys.exit(cli.main(sys.argv[1:]))
''')
    out = subprocess.run([sys.executable, str(script), "check", str(fixture("gemm_f16_sm_80_s3.cu")),
                          "--format", "json", "--no-cache"], env=_subprocess_env(tmp_path),
                         capture_output=True, text=True)
    doc = json.loads(out.stdout)
    assert NOISE not in out.stderr
    (note,) = [e for e in doc["errors"] if e["plugin"] == "noisy"]
    for what in ("print", "__stdout__", "fd 1", "child"):
        assert f"{NOISE} {what}" in note["detail"]


def test_capture_restores_the_streams_when_the_plugin_raises():
    from pipelint.pluginhost import captured_output

    before = (sys.stdout, sys.stderr, os.fstat(1).st_ino)
    with pytest.raises(RuntimeError), captured_output() as printed:
        print("lost?")
        raise RuntimeError
    assert (sys.stdout, sys.stderr, os.fstat(1).st_ino) == before
    assert printed["stdout"] == "lost?\n"


def test_progress_lines_show_file_names_escaped():
    """The progress line on a terminal (rich's or the plain one) shows walk file names escaped."""
    import io

    from pipelint.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    with Progress("checking", 2, stream=term) as progress:
        progress.advance(1, "kernels/a\x1b]0;PWNED\x07.cu")
        progress.note("lowered b\x1b]52;c;eA==\x07.cu")
    shown = term.getvalue()
    assert "\x07" not in shown and "\x1b]" not in shown      # no OSC: rich's own CSI redraws are fine


def test_what_the_user_names_is_readable_wherever_it_lies():
    """`pipelint lower /elsewhere/k.py` names the TileLang file the lowered CUDA's `#line`s point
    at: its `# pipelint: ignore` comments and lines are read although it is outside the root."""
    import argparse

    from pipelint.options import named_paths
    from pipelint.relocate import ProjectFiles

    args = argparse.Namespace(kernel="/elsewhere/k.py:matmul")
    assert named_paths(args) == ["/elsewhere/k.py"]
    assert named_paths(argparse.Namespace(paths=["-", "lowered/"])) == ["lowered/"]
    inside = ProjectFiles("/project", folders=named_paths(args))
    assert inside.contains("/elsewhere/k.py") and not inside.contains("/elsewhere/other.py")
    assert inside.contains("/project/src/x.py") and not inside.contains("/project/../etc/passwd")
