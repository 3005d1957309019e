"""Install the example plugin into a throw-away venv and see its findings in JSON and SARIF."""
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

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]
KERNEL = ROOT / "tests" / "fixtures" / "kernels" / "gemm_f16_sm_80_s3.cu"


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
    path.write_text(re.sub(r"cp_async_gs<16>", "cp_async_gs<8>", KERNEL.read_text()))
    return path


def _pipelint(py: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(py), "-m", "pipelint.cli", *args], capture_output=True, text=True, cwd=ROOT)


def test_plugin_is_listed_with_its_version(plugin_python):
    proc = _pipelint(plugin_python, "plugins")
    assert proc.returncode == 0, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("cpasync-width"))
    assert "0.1.0" in line and "narrow-cp-async" in line


def test_findings_in_json(plugin_python, narrow_kernel):
    proc = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "json")
    doc = json.loads(proc.stdout)
    hits = [f for f in doc["findings"] if f["rule"] == "narrow-cp-async"]
    assert hits and all(f["plugin"] == "cpasync-width" for f in hits)
    assert proc.returncode == 1
    clean = json.loads(_pipelint(plugin_python, "check", str(KERNEL), "--format", "json").stdout)
    assert not [f for f in clean["findings"] if f["rule"] == "narrow-cp-async"]


def test_findings_and_rules_in_sarif(plugin_python, narrow_kernel):
    proc = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "sarif")
    run = json.loads(proc.stdout)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "narrow-cp-async" in rules
    assert any(e["name"] == "cpasync-width" and e["version"] == "0.1.0" for e in run["tool"]["extensions"])
    results = [r for r in run["results"] if r["ruleId"] == "narrow-cp-async"]
    assert results and all(rules[r["ruleIndex"]] == "narrow-cp-async" for r in results)


def test_third_party_output_format_is_a_format_choice(plugin_python, narrow_kernel):
    import csv

    proc = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "csv")
    rows = list(csv.DictReader(proc.stdout.splitlines()))
    assert rows and {"path", "line", "rule", "message"} <= set(rows[0])
    assert any(r["rule"] == "narrow-cp-async" for r in rows)
    helped = _pipelint(plugin_python, "check", "--help").stdout
    assert "csv" in helped
    unknown = _pipelint(plugin_python, "check", str(narrow_kernel), "--format", "xml")
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
