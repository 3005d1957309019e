"""The editor server's new parts without an LSP client (issues 38, 39): the analysis cache's
entries (served only in exactly the shape they are written), the static facts, TileLang's errors
explained, the notes, the worker's event stream, large buffers spilled to a file, the order
variants are lowered in, and (with TileLang) a lowering stopped by its CPU budget."""
from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys

import pytest
from helpers import ROOT

from pipelint.config import load_config
from pipelint.lsp import facts, store
from pipelint.lsp.analysis import analyze_python
from pipelint.lsp.pysource import scan
from pipelint.pluginhost import load_plugins

GEMM = (ROOT / "examples" / "gemm.py").read_text()
LINES = GEMM.splitlines()


@pytest.fixture(scope="module")
def host():
    return load_plugins()


def _analysis(tmp_path, host):
    sys.path.insert(0, str(ROOT / "tests"))
    from test_lsp_units import _lowered, _mutant

    py = tmp_path / "gemm.py"
    py.write_text(GEMM)
    config = load_config([str(py)], None, host)
    return analyze_python(str(py), GEMM, _lowered(str(py), _mutant().text), host, config,
                          tmp_path / "cache" / "lsp" / "cuda" / "gemm-0123456789")


def test_the_analysis_cache_gives_back_what_it_stored(tmp_path, host):
    analysis = _analysis(tmp_path, host)
    folder = tmp_path / "cache" / "lsp"
    assert analysis.diagnostics and analysis.loops
    assert store.store(folder, "a" * 40, analysis)
    assert store.load(folder, "a" * 40) == analysis
    assert store.load(folder, "b" * 40) is None


@pytest.mark.parametrize("forge", ["severity", "line", "extra", "missing", "format", "nan", "not-json"])
def test_a_forged_analysis_entry_is_a_miss(tmp_path, host, forge):
    analysis = _analysis(tmp_path, host)
    folder = tmp_path / "cache" / "lsp"
    store.store(folder, "c" * 40, analysis)
    entry = folder / f"{'c' * 40}.json"
    data = json.loads(entry.read_text())
    d = data["analysis"]["diagnostics"][0]
    if forge == "severity":
        d["severity"] = "fatal"
    elif forge == "line":
        d["line"] = True                      # a bool is no line number
    elif forge == "extra":
        d["command"] = "rm -rf ~"
    elif forge == "missing":
        del d["help"]
    elif forge == "format":
        data["format"] = "pickle"
    elif forge == "nan":
        data["analysis"]["seconds"] = float("nan")
    text = "{not json" if forge == "not-json" else json.dumps(data)
    entry.write_text(text)
    assert store.load(folder, "c" * 40) is None


def test_an_entry_that_names_a_deleted_cuda_file_is_a_miss(tmp_path, host):
    analysis = _analysis(tmp_path, host)
    folder = tmp_path / "cache" / "lsp"
    store.store(folder, "d" * 40, analysis)
    cuda = {r.path for d in analysis.diagnostics for r in d.related if r.path.endswith(".cu")}
    assert cuda
    for path in cuda:
        os.unlink(path)
    assert store.load(folder, "d" * 40) is None


def test_static_facts_from_literals_constants_and_defaults():
    src = scan(GEMM)
    hints = {line: label for line, _, label in facts.static_hints(src, None, 1, len(LINES))}
    line = next(i for i, t in enumerate(LINES, 1) if "T.Pipelined(" in t)
    assert hints[line] == "3 stages (as written)"
    assert hints[next(i for i, t in enumerate(LINES, 1) if "T.Kernel(" in t)] == "grid 8×8 · 128 threads"
    assert hints[next(i for i, t in enumerate(LINES, 1) if "T.alloc_fragment(" in t)] == "float32 128×128 = 64 KB"
    # the `lower` table's params over the defaults
    again = {ln: label for ln, _, label in facts.static_hints(src, {"block_K": 64, "num_stages": 2}, 1, len(LINES))}
    assert again[line] == "2 stages (as written)"
    assert again[next(i for i, t in enumerate(LINES, 1) if "A_shared = T.alloc_shared(" in t)] == \
        "float16 128×64 = 16 KB"
    hover = facts.static_hover(src, None, line, "still lowering") or ""
    assert "num_stages = 3 as written" in hover and "still lowering" in hover


def test_static_evaluation_refuses_what_it_cannot_bound():
    src = scan("import tilelang\nN = 10 ** 400\ndef k(a=2 ** 10000, b=open('x')):\n"
               "    with T.Kernel(T.ceildiv(N, a), b, threads=f()) as bx:\n"
               "        S = T.alloc_shared((a, a, a, a, a, a, a, a), 'float16')\n")
    assert facts.static_hints(src, None, 1, 10) == []


def test_tilelang_errors_explained():
    assert facts.explain("AssertionError: T.gemm N shape check failed: N_B = 64").startswith(
        "usually: the shapes of a T.gemm's")
    assert "[tool.pipelint.lower] params" in facts.explain("TypeError: matmul() missing 1 required positional argument")
    assert facts.explain("RuntimeError: something new").startswith("TileLang raised this while lowering")
    assert all("--trace" in facts.explain(m) for m in ("ValueError: (32, 256)", "InternalError: Check failed: x"))


def test_notes_for_a_kernel_lowered_only_as_written_and_a_file_without_kernels():
    src = scan(GEMM.replace("num_stages=num_stages)", "num_stages=4)"))
    lowered = {"ok": True, "kernels": [{"name": "matmul", "kind": "factory", "stage_param": None, "variants": []}]}
    [note] = facts.notes(src, lowered)
    assert note.line == src.kernels["matmul"][0] and "num_stages=4" in note.message
    assert facts.notes(src, {**lowered, "partial": True}) == []
    with_param = {"ok": True, "kernels": [{"name": "matmul", "kind": "factory", "stage_param": "num_stages",
                                           "variants": []}]}
    assert facts.notes(src, with_param) == []
    [none] = facts.notes(src, {"ok": True, "kernels": []})
    assert none.line == 1 and "no kernel" in none.message


def test_factories_are_found_by_what_their_body_builds():
    from pipelint.lsp.worker import builders_in

    text = ("import tilelang\nimport tilelang.language as T\n"
            "def kernel(M=64):\n    @T.prim_func\n    def k(A: T.Tensor((M,), 'float16')):\n"
            "        pass\n    return k\n"
            "def launcher(n):\n    with T.Kernel(n) as bx:\n        pass\n"
            "def helper(x):\n    return x * 2\n")
    assert builders_in(text) == {"kernel", "launcher"}
    assert builders_in("def f(:\n") == set()


def test_worker_events_are_split_from_what_the_kernel_prints():
    from pipelint.lowering.driver import MARKER
    from pipelint.lsp.lowering import _Events

    got: list = []
    reader = _Events(got.append)
    stream = ("user print\n" + MARKER + json.dumps({"event": "kernels"}) + "\n" + "no newline"
              + MARKER + json.dumps({"event": "variant", "cuda": "x" * 100000}) + "\n" + MARKER + "{broken\n").encode()
    for i in range(0, len(stream), 777):          # in pieces, as the pipe gives them
        reader.feed(stream[i:i + 777])
    reader.close()
    assert [e["event"] for e in got] == ["kernels", "variant"] and len(got[1]["cuda"]) == 100000


def test_variants_are_lowered_cheapest_first():
    from pipelint.lsp.lowering import Lowerer

    lowerer = Lowerer.__new__(Lowerer)
    lowerer.costs = {}
    pairs = [["sm_80", None], ["sm_90", None], ["sm_100", None]]
    assert lowerer.cheapest_first(pairs) == [["sm_90", None], ["sm_100", None], ["sm_80", None]]
    lowerer.costs = {"sm_80": 0.1, "sm_90": 0.9}
    assert lowerer.cheapest_first(pairs) == [["sm_100", None], ["sm_80", None], ["sm_90", None]]


def test_a_large_buffer_goes_to_its_analysis_process_through_a_private_file(tmp_path):
    from pipelint.lsp import cudajob

    text = "x" * (cudajob.SPILL_BYTES + 1) + "é\r\n"
    spilled = cudajob._spill(text)
    assert isinstance(spilled, cudajob._Spilled)
    assert os.stat(spilled.path).st_mode & 0o077 == 0
    assert cudajob._unspill(spilled) == text and not os.path.exists(spilled.path)
    assert cudajob._spill("small") == "small"


@pytest.mark.tilelang
@pytest.mark.skipif(importlib.util.find_spec("tilelang") is None, reason="needs TileLang")
def test_a_lowering_over_its_cpu_budget_fails_that_variant_only(tmp_path):
    from pipelint.lsp.lowering import run_worker

    spec = {"path": str(tmp_path / "gemm.py"), "text": GEMM, "variants": [["sm_80", None], ["sm_90", None]],
            "params": {}, "budgets": {"time": 0.05, "memory": 2048}}
    result = asyncio.run(run_worker(spec, 300))
    variants = result["kernels"][0]["variants"]
    assert [v["kind"] for v in variants] == ["budget", "budget"], variants
    assert "time-budget" in variants[0]["error"]


def test_server_help_gives_the_install_line_that_works_from_a_clone():
    """pipelint is not on PyPI: `pip install 'pipelint[lsp]'` (what the help said) finds nothing."""
    import subprocess
    import tomllib

    out = subprocess.run([sys.executable, "-m", "pipelint", "server", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "pip install 'pipelint[lsp]'" not in out
    assert "pip install -c constraints.txt -e '.[lsp,tilelang]'" in " ".join(out.split())
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"lsp", "tilelang"} <= set(extras)
    pinned = (ROOT / "constraints.txt").read_text()
    assert all(f"{name}==" in pinned for name in ("pygls", "lsprotocol", "tilelang"))


@pytest.mark.tilelang
@pytest.mark.skipif(importlib.util.find_spec("tilelang") is None, reason="needs TileLang")
def test_a_worker_that_dies_keeps_the_variants_it_finished(tmp_path):
    """Issue 38: the sm_90 variant was streamed before the kernel file ended the worker while
    lowering sm_80; it is kept, sm_80 is a crash, and nothing of it is cached."""
    from pipelint.lsp.lowering import run_worker

    text = GEMM + ("\nimport os\n\n\ndef _die_on_sm_80(code, target):\n"
                   "    if 'sm_80' in str(target):\n        os._exit(3)\n    return code\n\n\n"
                   "tilelang.engine.callback.register_cuda_postproc(_die_on_sm_80)\n")
    spec = {"path": str(tmp_path / "gemm.py"), "text": text, "variants": [["sm_90", None], ["sm_80", None]],
            "params": {}, "budgets": {"time": 20, "memory": 2048}}
    result = asyncio.run(run_worker(spec, 300))
    assert result["ok"] and "exit status 3" in result["crashed"]
    variants = result["kernels"][0]["variants"]
    assert [(v["arch"], v["ok"], v.get("kind")) for v in variants] == [("sm_90", True, "factory"),
                                                                       ("sm_80", False, "crash")]


@pytest.mark.tilelang
@pytest.mark.skipif(importlib.util.find_spec("tilelang") is None, reason="needs TileLang")
def test_a_lowering_over_its_memory_budget_is_reported_as_such(tmp_path):
    from pipelint.lsp.lowering import run_worker

    spec = {"path": str(tmp_path / "gemm.py"), "text": GEMM, "variants": [["sm_90", None]], "params": {},
            "budgets": {"time": 20, "memory": 20}}
    result = asyncio.run(run_worker(spec, 300))
    [variant] = result["kernels"][0]["variants"]
    assert not variant["ok"] and "memory budget of 20 MB" in variant["error"] + result.get("crashed", "") or \
        variant["kind"] == "budget", variant
