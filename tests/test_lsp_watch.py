"""`pipelint check --watch`: a real process checks again when a watched `.cu` file changes."""
from __future__ import annotations

import importlib.util
import os
import queue
import subprocess
import sys
import threading
import time

import pytest
from helpers import ROOT

pytestmark = pytest.mark.skipif(importlib.util.find_spec("watchfiles") is None, reason="needs the lsp extra")
FIXTURE = ROOT / "tests" / "fixtures" / "kernels" / "gemm_f16_sm_80_s3.cu"


def _lines(stream, out: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        out.put(line)


def _wait_for(out: queue.Queue, word: str, timeout: float = 60.0) -> str:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = out.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        if word in line:
            return "".join(seen)
    raise AssertionError(f"{word!r} not printed in {timeout} s; got:\n{''.join(seen)}")


def test_watch_checks_again_after_a_change(tmp_path):
    sys.path.insert(0, str(ROOT / "tests" / "mutants"))
    from mutate import drop_barrier_after_wait

    kernel = tmp_path / "gemm_sm_80_s3.cu"
    kernel.write_text(FIXTURE.read_text())
    proc = subprocess.Popen([sys.executable, "-m", "pipelint", "check", "--watch", "--no-cache", str(kernel)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, NO_COLOR="1"))
    out: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    try:
        first = _wait_for(out, "watching for changes")
        assert "missing-barrier" not in first and "(exit code 0)" in first
        mutant = drop_barrier_after_wait()
        second = ""
        for _ in range(12):         # the watcher starts just after the first check's last line
            kernel.write_text(mutant.text)
            try:
                second = _wait_for(out, "changed:", timeout=5.0)
                break
            except AssertionError:
                continue
        second += _wait_for(out, "watching for changes")
        assert "changed: gemm_sm_80_s3.cu" in second
        assert f"gemm_sm_80_s3.cu:{mutant.line}:" in second and "missing-barrier" in second
        assert "(exit code 1)" in second
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.tilelang
@pytest.mark.skipif(importlib.util.find_spec("tilelang") is None, reason="needs the tilelang extra")
def test_watch_lowers_named_tilelang_files_and_reports_at_python_lines(tmp_path):
    """A TileLang file named on the command line is lowered as the server lowers it (the same
    `[tool.pipelint.lower]`), its findings printed at the Python line; fixing it clears them."""
    src = (ROOT / "tests" / "test_lsp.py").read_text()
    plant = src.split("PLANT = '''", 1)[1].split("'''", 1)[0]
    gemm = (ROOT / "examples" / "gemm.py").read_text()
    pipelined = next(i for i, t in enumerate(gemm.splitlines(), 1) if "T.Pipelined(" in t)
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint.lower]\narch = ["sm_80"]\nnum-stages = [3]\n')
    kernel = tmp_path / "gemm_race.py"
    kernel.write_text(gemm + plant)
    proc = subprocess.Popen([sys.executable, "-m", "pipelint", "check", "--watch", kernel.name], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, NO_COLOR="1"))
    out: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    try:
        first = _wait_for(out, "watching for changes", timeout=180)
        assert f"gemm_race.py:{pipelined}:13: error[missing-barrier]" in first and "(exit code 1)" in first
        second = ""
        for _ in range(12):
            kernel.write_text(gemm)             # the defect removed
            try:
                second = _wait_for(out, "changed:", timeout=5.0)
                break
            except AssertionError:
                continue
        second += _wait_for(out, "watching for changes", timeout=180)
        assert "missing-barrier" not in second and "(exit code 0)" in second
    finally:
        proc.terminate()
        proc.wait(10)
