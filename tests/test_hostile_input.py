"""The second round of hostile input (issue 35): bounds on every input, bounds a checked
repository cannot loosen, budgets in CPU time, line ends as nvcc reads them, link loops."""
from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
import time
import types

import pytest

from pipelint import hookimpl, limits
from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins
from helpers import HANDWRITTEN, KERNELS

RACY = HANDWRITTEN / "cond_writers_nobarrier.cu"     # one shared-race error, with `#line` directives


def _cli(*args: object, stdin: object = None, cwd: object = None,
         timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelint", *map(str, args)], capture_output=True, text=True,
                          stdin=stdin, cwd=cwd, timeout=timeout,
                          env={**os.environ, "PIPELINT_CACHE_DIR": str(cwd or os.getcwd()) + "/.c"})


def _findings(report) -> list[tuple]:
    return sorted((f.rule, f.location.line, f.location.column, f.message) for f in report.findings)


# ---------------------------------------------------------------- line ends and the BOM
@pytest.mark.parametrize("style", ["crlf", "cr", "bom", "bom-cr", "mixed"])
def test_line_ends_as_the_preprocessor_takes_them(tmp_path, style):
    text = RACY.read_text()
    lines = text.split("\n")
    converted = {
        "crlf": "\r\n".join(lines),
        "cr": "\r".join(lines),
        "bom": "\ufeff" + text,
        "bom-cr": "\ufeff" + "\r".join(lines),
        "mixed": "".join(line + ("\r", "\n", "\r\n")[i % 3] for i, line in enumerate(lines)),
    }[style]
    path = tmp_path / "k.cu"
    path.write_bytes(converted.encode("utf-8"))
    host = load_plugins()
    want = _findings(run_check([str(RACY)], host, CheckOptions(jobs=1)))
    got = run_check([str(path)], host, CheckOptions(jobs=1))
    assert want and any(rule == "shared-race" for rule, *_ in want)
    assert _findings(got) == want                      # same rules, lines and columns
    assert got.files[0].parsed and got.files[0].kernels


def test_cr_only_file_quotes_the_right_line_and_honours_its_suppression(tmp_path):
    lines = RACY.read_text().split("\n")
    host = load_plugins()
    (race,) = [f for f in run_check([str(RACY)], host, CheckOptions(jobs=1)).findings if f.rule == "shared-race"]
    n = race.location.line
    path = tmp_path / "k.cu"
    path.write_bytes("\r".join(lines).encode())
    res = _cli("check", path, "--no-cache", cwd=tmp_path)
    assert f"k.cu:{n}:" in res.stdout and lines[n - 1].strip() in res.stdout, res.stdout
    # a form feed is blank to the lexer, not a line end: the suppression on the line before still applies
    lines.insert(n - 1, "  // pipelint: ignore[shared-race]\f")
    path.write_bytes("\r".join(lines).encode())
    res = _cli("check", path, "--no-cache", "--format", "json", cwd=tmp_path)
    assert [f["rule"] for f in json.loads(res.stdout)["findings"]] == [], res.stdout


# ---------------------------------------------------------------- symbolic link loops
def test_symlink_loop_named_on_the_command_line_is_unreadable_file(tmp_path):
    (tmp_path / "loop.cu").symlink_to("loop.cu")
    (tmp_path / "a.cu").symlink_to("b.cu")
    (tmp_path / "b.cu").symlink_to("a.cu")
    for fmt in ("text", "json", "sarif"):
        res = _cli("check", "loop.cu", "a.cu", KERNELS / "gemv_sm_80_s2.cu", "--format", fmt, cwd=tmp_path)
        assert res.returncode == 1, res.stderr
        assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    doc = json.loads(_cli("check", "loop.cu", "a.cu", "--format", "json", cwd=tmp_path).stdout)
    assert {f["path"]: f["rule"] for f in doc["findings"]} == {"loop.cu": "unreadable-file", "a.cu": "unreadable-file"}
    assert all("symbolic link loop" in f["message"] for f in doc["findings"])


# ---------------------------------------------------------------- bounded reads
def test_stdin_is_bounded_by_max_file_size():
    start = time.monotonic()
    with open("/dev/zero", "rb") as zero:
        res = _cli("check", "-", "--max-file-size", "1", "--format", "json", stdin=zero, timeout=60)
    assert time.monotonic() - start < 60
    (f,) = json.loads(res.stdout)["findings"]
    assert f["rule"] == "unreadable-file" and "over the 1 MB limit" in f["message"]
    assert res.returncode == 1 and "Traceback" not in res.stderr


def test_stdin_gets_the_time_budget(tmp_path):
    with open(KERNELS / "flash_attn_fwd_sm_90_s4.cu", "rb") as kernel:
        res = _cli("check", "-", "--time-budget", "0.0001", "--format", "json", stdin=kernel, cwd=tmp_path)
    assert [f["rule"] for f in json.loads(res.stdout)["findings"]] == ["analysis-limit"]


def test_file_over_the_limit_is_never_opened(run_cli, tmp_path, monkeypatch):
    big = tmp_path / "big.cu"
    with open(big, "wb") as fh:
        fh.truncate(40 * 2**20)
    opened: list[str] = []
    real_open = builtins.open

    def spy(file, *args, **kwargs):
        opened.append(os.fspath(file) if isinstance(file, (str, os.PathLike)) else "")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    for fmt in ("text", "json", "sarif"):
        res = run_cli("check", big, "--no-cache", "--format", fmt, "--write-baseline", tmp_path / "b.json")
        assert "40.0 MB" in res.out + res.err or fmt == "text"
    assert str(big) not in opened
    res = run_cli("check", big, "--no-cache")
    assert "file is 40.0 MB, over the 16 MB limit (--max-file-size): not read" in res.out


# ---------------------------------------------------------------- bounds the checked repo cannot loosen
def _project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.pipelint]\n{table}\n")
    return tmp_path


def test_configuration_cannot_loosen_the_size_limit(tmp_path):
    _project(tmp_path, "max-file-size = 1000000")
    with open(tmp_path / "big.cu", "wb") as fh:
        fh.truncate(20 * 2**20)
    res = _cli("check", "big.cu", "--format", "json", cwd=tmp_path)
    (f,) = json.loads(res.stdout)["findings"]
    assert "over the 16 MB limit" in f["message"]
    assert "`max-file-size = 1e+06` is ignored" in res.stderr and "--max-file-size" in res.stderr
    res = _cli("check", "big.cu", "--max-file-size", "32", "--format", "json", cwd=tmp_path)
    assert "is ignored" not in res.stderr                       # the command line may raise it
    assert json.loads(res.stdout)["findings"][0]["rule"] != "unreadable-file" or \
        "over the" not in json.loads(res.stdout)["findings"][0]["message"]


@pytest.mark.parametrize("key", ["time-budget", "memory-budget"])
def test_configuration_cannot_switch_a_budget_off(tmp_path, key):
    _project(tmp_path, f"{key} = 0")
    (tmp_path / "k.cu").write_text((KERNELS / "gemv_sm_80_s2.cu").read_text())
    res = _cli("check", "k.cu", cwd=tmp_path)
    assert f"`{key} = 0 (no limit)` is ignored" in res.stderr
    res = _cli("check", "k.cu", f"--{key}", "0", cwd=tmp_path)
    assert "is ignored" not in res.stderr


def test_configuration_may_tighten_a_budget(tmp_path):
    _project(tmp_path, "time-budget = 0.0001")
    (tmp_path / "k.cu").write_text((KERNELS / "flash_attn_fwd_sm_90_s4.cu").read_text())
    res = _cli("check", "k.cu", "--format", "json", "--no-cache", cwd=tmp_path)
    assert "is ignored" not in res.stderr
    assert [f["rule"] for f in json.loads(res.stdout)["findings"]] == ["analysis-limit"]


def test_only_looser_values_are_refused():
    time_bound = next(b for b in limits.BOUNDS if b.key == "time-budget")
    assert limits.from_config(time_bound, 5.0, "w") == (5.0, None)
    assert limits.from_config(time_bound, 20.0, "w") == (20.0, None)
    assert limits.from_config(time_bound, 21.0, "w")[0] is None
    assert limits.from_config(time_bound, 0.0, "w")[0] is None
    assert limits.from_config(time_bound, None, "w") == (None, None)


# ---------------------------------------------------------------- budgets in CPU time
def _plugin(body):
    module = types.ModuleType("budget_probe")

    @hookimpl
    def pipelint_check_kernel(kernel, parsed, path):
        body()
        return []

    module.pipelint_check_kernel = pipelint_check_kernel  # type: ignore[attr-defined]
    return load_plugins(extra_modules=[module])


def test_waiting_does_not_use_up_the_cpu_budget():
    host = _plugin(lambda: time.sleep(1.5))        # a loaded machine: wall time passes, CPU time does not
    report = run_check([str(KERNELS / "gemv_sm_80_s2.cu")], host, CheckOptions(jobs=1, time_budget=1.0))
    assert not [f for f in report.findings if f.rule.startswith("analysis-")], _findings(report)


def test_computing_uses_up_the_cpu_budget():
    def spin() -> None:
        end = time.process_time() + 5
        while time.process_time() < end:
            pass

    report = run_check([str(KERNELS / "gemv_sm_80_s2.cu")], _plugin(spin), CheckOptions(jobs=1, time_budget=0.5))
    (f,) = [f for f in report.findings if f.rule.startswith("analysis-")]
    assert f.rule == "analysis-limit" and "s of CPU time (time budget 0.5 s)" in f.message


def test_a_hang_meets_the_wall_clock_backstop(monkeypatch):
    monkeypatch.setattr(limits, "BACKSTOP_MINIMUM", 0.5)
    monkeypatch.setattr(limits, "BACKSTOP_FACTOR", 1.0)
    assert limits.wall_backstop(0.5) == 0.5
    report = run_check([str(KERNELS / "gemv_sm_80_s2.cu")], _plugin(lambda: time.sleep(30)),
                       CheckOptions(jobs=1, time_budget=0.5))
    (f,) = [f for f in report.findings if f.rule.startswith("analysis-")]
    assert f.rule == "analysis-timeout" and "waiting, not computing" in f.message


def test_backstop_is_generous():
    assert limits.wall_backstop(20.0) == 200.0 and limits.wall_backstop(1.0) == 120.0
    assert limits.wall_backstop(0) == 0


# ---------------------------------------------------------------- nothing loaded from the checked tree
def _planted(tmp_path):
    """A checked repository that plants a plugin (a dist-info over its own module) and a
    `pathspec.py`; each writes a marker file when imported."""
    repo = tmp_path / "repo"
    info = repo / "evil_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pipelint]\nevil = evil_plugin\n")
    for module in ("evil_plugin", "pathspec"):
        (repo / f"{module}.py").write_text(
            f"import pathlib\npathlib.Path({str(tmp_path / (module + '.ran'))!r}).write_text('ran')\n")
    (repo / "k.cu").write_text((KERNELS / "gemv_sm_80_s2.cu").read_text())
    return repo


def _script() -> str:
    return os.path.join(os.path.dirname(sys.executable), "pipelint")


@pytest.mark.parametrize("how", ["module", "script", "script-empty-pythonpath", "module-empty-pythonpath"])
def test_nothing_is_imported_from_the_current_folder(tmp_path, how):
    repo = _planted(tmp_path)
    command = [sys.executable, "-m", "pipelint"] if how.startswith("module") else [_script()]
    env = {**os.environ, "PIPELINT_CACHE_DIR": str(tmp_path / "c")}
    if how.endswith("empty-pythonpath"):
        env["PYTHONPATH"] = os.pathsep + env.get("PYTHONPATH", "")    # an empty entry: the current folder
    for args in (["check", "k.cu", "--no-cache"], ["plugins"], ["--version"], ["rules"]):
        res = subprocess.run([*command, *args], cwd=repo, capture_output=True, text=True, env=env, timeout=120)
        assert "evil" not in res.stdout, (args, res.stdout)
        assert "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "evil_plugin.ran").exists()
    assert not (tmp_path / "pathspec.ran").exists()


def test_a_distribution_in_the_current_folder_is_not_loaded_in_process(tmp_path, monkeypatch):
    repo = _planted(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.syspath_prepend(str(repo))            # an embedding program's path, `PYTHONPATH=.`
    host = load_plugins()
    assert "evil" not in host.plugin_names()
    assert not (tmp_path / "evil_plugin.ran").exists()
    (note,) = [e for e in host.errors if e.plugin == "evil"]
    assert not note.internal and "not loaded" in note.message


def test_path_is_left_alone_when_pipelint_is_a_library(tmp_path):
    out = subprocess.run([sys.executable, "-c", "import sys; import pipelint; print(repr(sys.path[0]))"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip() == "''"


# ---------------------------------------------------------------- one escaping function on every output
HOSTILE = "k\x1b]0;PWNED\x07\x9b31m\u202e"      # OSC retitle, BEL, C1 CSI, a bidi override
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _clean(text: str) -> bool:
    return not any(ch in text for ch in RAW)


@pytest.mark.parametrize("args", [
    ["check", "{a}", "--no-cache"], ["check", "{a}", "--no-cache", "--format", "concise"],
    ["check", "{a}", "--no-cache", "--format", "github"], ["check", "{a}", "--no-cache", "-v"],
    ["check", ".", "--show-files"], ["explain", "{a}"], ["diff", "{a}", "{b}"],
    ["explain", "{missing}"], ["diff", "{a}", "{missing}"],
])
def test_hostile_file_names_are_printed_visibly(tmp_path, args):
    a = tmp_path / f"{HOSTILE}a.cu"
    b = tmp_path / f"{HOSTILE}b.cu"
    a.write_text((KERNELS / "gemv_sm_80_s3.cu").read_text())      # a redundant-barrier warning
    b.write_text((KERNELS / "gemv_sm_80_s2.cu").read_text())
    names = {"a": a.name, "b": b.name, "missing": f"{HOSTILE}none.cu"}
    res = _cli(*[arg.format(**names) for arg in args], cwd=tmp_path)
    assert res.returncode in (0, 1, 2), res.stderr
    assert _clean(res.stdout) and _clean(res.stderr), (res.stdout[-500:], res.stderr[-500:])
    assert "\\x1b]0;PWNED\\x07\\x9b31m" in res.stdout + res.stderr


def test_rules_rule_and_plugins_print_a_plugins_text_visibly(run_cli, capsys, monkeypatch):
    from pipelint import Rule, Severity
    from pipelint import cli

    module = types.ModuleType("hostile_rules")

    @hookimpl
    def pipelint_rules():
        return [Rule("hostile-rule", "Hostile", f"short {HOSTILE}", f"full {HOSTILE}\nsecond line",
                     Severity.WARNING, help=f"help {HOSTILE}")]

    module.pipelint_rules = pipelint_rules  # type: ignore[attr-defined]
    host = load_plugins(extra_modules=[module])
    monkeypatch.setattr(cli, "load_plugins", lambda *a, **k: host)
    for args in (["rules"], ["rule", "hostile-rule"], ["plugins"]):
        res = run_cli(*args)
        assert _clean(res.out) and _clean(res.err), args
    assert "short k\\x1b]0;PWNED" in run_cli("rules").out
    assert "second line" in run_cli("rule", "hostile-rule").out          # line ends kept


def test_tables_escape_their_cells():
    from pipelint.report.table import columns

    lines = columns([("fact", "a"), (HOSTILE, "x")])
    assert all(_clean(line) for line in lines)
    assert lines[1].startswith("k\\x1b]0;PWNED\\x07\\x9b31m\\u202e  x")
    assert len(lines[0]) == len(lines[1])          # the second column aligned on what is shown
