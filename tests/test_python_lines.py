"""Issue 34: a finding's Python location is a line that exists.  TileLang emits one `#line N` per
statement, and the CUDA under it is that statement's expansion; counting one Python line per CUDA
line (C's rule) put findings past the end of the user's file."""
from __future__ import annotations

import json

from helpers import ALL_KERNELS, HANDWRITTEN, ROOT

from pipelint.cuda import parse


def test_every_line_of_a_block_maps_to_its_directive():
    src = '#line 36 "k.py"\nvoid f() {\n  int a = 1;\n  int b = 2;\n  int c = 3;\n}\n'
    lines = parse(src).lines
    assert {lines.origin(n).line for n in range(2, 7)} == {36}


def test_no_python_location_lies_past_the_end_of_its_file(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    kernels = [*ALL_KERNELS, *sorted(HANDWRITTEN.glob("*.cu"))]
    res = run_cli("check", *kernels, "--primary-location", "python", "--format", "json", "--no-cache")
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
