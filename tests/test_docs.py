"""Rule pages are generated, never hand-edited: regenerating them changes nothing."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_rule_pages_are_what_the_generator_writes(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "build", "lowered", ".carry",
                                                               "__pycache__", "*.egg-info"))
    out = subprocess.run([sys.executable, "docs/generate_rule_docs.py"], cwd=copy, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for page in sorted((ROOT / "docs" / "rules").glob("*.md")):
        assert (copy / "docs" / "rules" / page.name).read_text() == page.read_text(), page.name
    generated = {p.name for p in (copy / "docs" / "rules").glob("*.md")}
    assert generated == {p.name for p in (ROOT / "docs" / "rules").glob("*.md")}


def test_precision_script_counts_a_folder(tmp_path):
    kernels = tmp_path / "k"
    kernels.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "kernels" / "scaled_gemm_sm_80_s2.cu", kernels)
    (kernels / "broken.cu").write_text("__global__ void k( {")
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "precision.py"), str(kernels),
                          "--fail-on-error"], capture_output=True, text=True)
    assert out.returncode == 1                       # the broken file does not parse
    assert "files: 2   parsed: 1 (50.0%)" in out.stdout
    assert "warning   redundant-wait" in out.stdout
    assert "[parse-error]" in out.stdout


def test_api_reference_is_generated_from_the_current_docstrings():
    out = subprocess.run([sys.executable, str(ROOT / "docs" / "generate_api_docs.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    text = (ROOT / "docs" / "api.md").read_text()
    for name in ("KernelModel", "Event", "steady_wait", "barriers_per_iteration", "pipelint_configure",
                 "pipelint.testing.lint"):
        assert name in text
    assert "*(undocumented)*" not in text
