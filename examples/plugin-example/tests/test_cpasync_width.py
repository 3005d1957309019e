"""The example plugin, tested the way a plugin author would: `pipelint.testing` on real TileLang
output, then once installed for real (entry point, JSON, SARIF, its output format, its config)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import pipelint_cpasync_width as plugin
from pipelint.errors import UsageError
from pipelint.testing import assert_findings, kernel_models, lint

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]
KERNEL = ROOT / "tests" / "fixtures" / "kernels" / "gemm_f16_sm_80_s3.cu"
NARROW = re.sub(r"cp_async_gs<16>", "cp_async_gs<8>", KERNEL.read_text())
NARROW_LINES = {i for i, line in enumerate(NARROW.splitlines(), 1) if "cp_async_gs<8>" in line}


# ---------------------------------------------------------------- unit tests on pipelint.testing
def test_each_narrow_copy_in_the_loop_is_reported():
    findings = lint(NARROW, plugin, only=True, config={})
    in_loop = {f.location.line for f in findings}
    assert in_loop and in_loop <= NARROW_LINES          # the prologue's copies are not in the loop
    assert_findings(findings, {("narrow-cp-async", line) for line in in_loop})
    assert all("8 bytes per instruction" in f.message for f in findings)


def test_sixteen_byte_copies_are_clean():
    assert lint(KERNEL, plugin, only=True, config={}) == []


def test_min_bytes_setting_lowers_the_bar():
    assert lint(NARROW, plugin, only=True, config={"min-bytes": 8}) == []
    with pytest.raises(UsageError, match=r"\[tool.pipelint.plugins.pipelint_cpasync_width\]: min-bytes must be"):
        lint(NARROW, plugin, only=True, config={"min-bytes": 12})
    lint(NARROW, plugin, only=True, config={})         # back to the default for the other tests


def test_model_the_plugin_reads():
    [model] = kernel_models(NARROW)
    widths = {ev.node.template_args[0] for ev in model.trace.all_events() if ev.kind == "cp_async"}
    assert widths == {"8"}


def test_assert_findings_explains_a_mismatch():
    findings = lint(NARROW, plugin, only=True, config={})
    with pytest.raises(AssertionError, match="unexpected: narrow-cp-async at line"):
        assert_findings(findings, set(), rules={"narrow-cp-async"})


# ---------------------------------------------------------------- installed for real
@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory) -> Path:
    env_dir = tmp_path_factory.mktemp("plugin-venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    # The new venv sees pipelint and its dependencies from the running environment ...
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    site.joinpath("parent.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    # ... and gets the plugin installed into it for real (metadata, entry point), built from a
    # copy so that setuptools' build/ folder never lands in the source tree.
    source = tmp_path_factory.mktemp("plugin-src") / "pkg"
    shutil.copytree(HERE, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                    "--no-build-isolation", str(source)], check=True)
    return py


@pytest.fixture(scope="module")
def narrow_kernel(tmp_path_factory) -> Path:
    """Real TileLang output with its 16-byte copies narrowed to 8 bytes."""
    path = tmp_path_factory.mktemp("kernels") / "narrow.cu"
    path.write_text(NARROW)
    return path


def _pipelint(py: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(py), "-m", "pipelint.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_plugin_is_listed_with_its_version(plugin_python):
    proc = _pipelint(plugin_python, "plugins")
    assert proc.returncode == 0, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("cpasync-width"))
    assert "0.1.0" in line and "narrow-cp-async" in line
    assert "plugin cpasync-width (pipelint-cpasync-width 0.1.0)" in _pipelint(plugin_python, "--version").stdout


def test_findings_in_json_and_sarif_with_its_own_help_link(plugin_python, narrow_kernel):
    proc = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "json")
    hits = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "narrow-cp-async"]
    # a performance rule (its `performance` tag): reported, but it fails only with --fail-on-performance
    assert proc.returncode == 0 and hits and all(f["plugin"] == "cpasync-width" for f in hits)
    assert all(f["category"] == "performance" for f in hits)
    assert _pipelint(plugin_python, "check", str(narrow_kernel), "--fail-on-performance").returncode == 1
    run = json.loads(_pipelint(plugin_python, "check", str(narrow_kernel), "--format", "sarif").stdout)["runs"][0]
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "narrow-cp-async")
    assert rule["helpUri"] == plugin.NARROW.help_uri
    assert any(e["name"] == "cpasync-width" and e["version"] == "0.1.0" for e in run["tool"]["extensions"])


def test_its_configuration_table_reaches_it(plugin_python, narrow_kernel, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint.plugins.cpasync-width]\nmin-bytes = 8\n')
    shutil.copy(narrow_kernel, tmp_path / "narrow.cu")
    quiet = _pipelint(plugin_python, "check", "narrow.cu", "--format", "json", "-j", "2", cwd=tmp_path)
    assert not [f for f in json.loads(quiet.stdout)["findings"] if f["rule"] == "narrow-cp-async"]
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint.plugins.cpasync-width]\nmin-bytes = "x"\n')
    bad = _pipelint(plugin_python, "check", "narrow.cu", cwd=tmp_path)
    assert bad.returncode == 2 and "[tool.pipelint.plugins.cpasync-width]: min-bytes must be" in bad.stderr


def test_third_party_output_format_is_a_format_choice(plugin_python, narrow_kernel):
    import csv

    proc = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "csv")
    rows = list(csv.DictReader(proc.stdout.splitlines()))
    assert rows and {"path", "line", "rule", "message"} <= set(rows[0])
    assert any(r["rule"] == "narrow-cp-async" for r in rows)
    assert "csv" in _pipelint(plugin_python, "check", "--help").stdout
    unknown = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "xml")
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
