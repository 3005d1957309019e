"""Issue 34: a finding's Python location is a line that exists.  TileLang emits one `#line N` per
statement, and the CUDA under it is that statement's expansion; counting one Python line per CUDA
line (C's rule) put findings past the end of the user's file."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from helpers import ALL_KERNELS, HANDWRITTEN, ROOT

from pipelint.cuda import parse


def test_every_line_of_a_block_maps_to_its_directive():
    src = '#line 36 "k.py"\nvoid f() {\n  int a = 1;\n  int b = 2;\n  int c = 3;\n}\n'
    lines = parse(src).lines
    assert {lines.origin(n).line for n in range(2, 7)} == {36}


def test_no_python_location_lies_past_the_end_of_its_file(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    kernels = [*ALL_KERNELS, *sorted(HANDWRITTEN.glob("*.cu"))]
    # the session's result cache (tests/conftest.py): the locations are the analysis's, whichever run
    # made them (test_cache proves a cached result is the fresh one)
    res = run_cli("check", *kernels, "--primary-location", "python", "--format", "json")
    report = json.loads(res.out)
    checked = 0
    for f in report["findings"]:
        for loc in [f, *f.get("related", [])]:
            path = ROOT / loc["path"]
            if not loc["path"].endswith(".py") or not path.is_file():
                continue
            n = len(path.read_text().splitlines())
            assert 1 <= loc["line"] <= n, (f["rule"], loc["path"], loc["line"], n)
            checked += 1
    assert checked > 50


def _length(path: Path) -> int:
    return len(path.read_text().splitlines())


def _code(path: Path, line: int) -> str:
    text = path.read_text().splitlines()[line - 1]
    return text.split("#", 1)[0].strip()


def test_no_sarif_region_or_related_location_lies_past_its_file(run_cli, monkeypatch):
    """Every region of every result (primary, related, code-flow steps) in both primary-location
    modes names a line of its file, and a Python line is a statement of the user's kernel (code,
    not a blank line or a comment); prologue/epilogue findings sit at the `T.Pipelined` loop or
    the statement the code was generated from."""
    monkeypatch.chdir(ROOT)
    kernels = [*ALL_KERNELS, *sorted(HANDWRITTEN.glob("*.cu"))]
    checked = outside_loop = 0
    for mode in ("python", "cuda"):
        res = run_cli("check", *kernels, "--primary-location", mode, "--format", "sarif",
                      "--exit-zero", "--project-root", ROOT)       # from the session's cache after the first
        for r in json.loads(res.out)["runs"][0]["results"]:
            locs = [r["locations"][0]["physicalLocation"],
                    *(rel["physicalLocation"] for rel in r.get("relatedLocations", [])),
                    *(step["location"]["physicalLocation"] for flow in r.get("codeFlows", [])
                      for thread in flow["threadFlows"] for step in thread["locations"])]
            for loc in locs:
                path = ROOT / loc["artifactLocation"]["uri"]
                if not path.is_file():
                    continue
                region = loc["region"]
                n = _length(path)
                assert 1 <= region["startLine"] <= region.get("endLine", region["startLine"]) <= n, (r["ruleId"], loc)
                if path.suffix == ".py":
                    assert _code(path, region["startLine"]), (r["ruleId"], loc)
                checked += 1
            primary = r["locations"][0]["physicalLocation"]
            if mode == "python" and primary["artifactLocation"]["uri"].endswith(".py") and \
                    "outside the pipelined loop" in r["message"]["text"]:
                text = _code(ROOT / primary["artifactLocation"]["uri"], primary["region"]["startLine"])
                assert "T." in text or "=" in text, (r["ruleId"], primary, text)
                outside_loop += 1
    assert checked > 200 and outside_loop > 10


def test_jit_hook_warnings_lie_inside_the_kernel_file(monkeypatch):
    """The TileLang JIT hook's warnings (`pipelint.tilelang.lint_cuda`) point at lines that exist."""
    from pipelint.tilelang import lint_cuda

    monkeypatch.chdir(ROOT)
    seen = 0
    for cu in [*ALL_KERNELS[::7], *sorted(HANDWRITTEN.glob("*.cu"))]:
        for f in lint_cuda(cu.read_text()):
            path = ROOT / f.location.path
            if f.location.path.endswith(".py") and path.is_file():
                assert 1 <= f.location.line <= _length(path), (cu.name, f.rule, f.location)
                seen += 1
    assert seen > 10


CORPUS = ROOT.parent / "shared" / "corpus" / "upstream" / "cu"
_DIRECTIVE = re.compile(r'#line (\d+) "([^"]+)"')


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the upstream corpus (../shared/corpus/upstream) is not here")
def test_upstream_corpus_python_lines_are_statements_tilelang_named(run_cli, monkeypatch, tmp_path):
    """TileLang's own examples as lowered in the shared corpus (read in place, never copied): each
    Python location of a finding, primary or related, is a line some `#line` of that kernel names,
    so a statement of the example (the examples' Python files are not in the corpus; where
    $TILELANG_EXAMPLES names a checkout of them, each line is also checked against its file)."""
    examples = os.environ.get("TILELANG_EXAMPLES")
    kernels = sorted(CORPUS.glob("*.cu"))[::6]         # every sixth kernel: each family, in seconds
    monkeypatch.chdir(CORPUS.parent)
    res = run_cli("check", *kernels, "--primary-location", "python", "--format", "json", "--no-cache",
                  "--exit-zero", "--project-root", tmp_path)
    doc = json.loads(res.out)
    named: dict[str, set[tuple[str, int]]] = {}
    for cu in kernels:
        named[cu.name] = {(f, int(n)) for n, f in _DIRECTIVE.findall(cu.read_text())}
    checked = 0
    for f in doc["findings"]:
        cus = [r["path"] for r in f["related"] if r["path"].endswith(".cu")]
        if not cus:
            continue
        lines = named.get(Path(cus[0]).name, set())
        for loc in [f, *f["related"]]:
            if not loc["path"].endswith(".py"):
                continue
            assert any(line == loc["line"] and (file == loc["path"] or file.endswith(loc["path"]))
                       for file, line in lines), (f["rule"], loc, cus[0])
            if examples and (Path(examples) / loc["path"]).is_file():
                assert loc["line"] <= _length(Path(examples) / loc["path"])
            checked += 1
    assert checked > 20
