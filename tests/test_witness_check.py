"""`pipelint check` carries each race finding's witness (issue 36) end to end: the engine derives it
(`pipelint.witness`, called by `engine.analyze_source`), JSON and SARIF show it, the result cache
keeps it across runs, and `--path-map` rebases its path as it rebases the finding's own.

The exact witnesses of the hidden-race twins are `tests/test_witness.py`'s table; here they come
through the command line, so nothing but `check` itself fills them in."""
from __future__ import annotations

import json

import pytest
from helpers import HANDWRITTEN, ROOT
from test_witness import HIDDEN

from pipelint.findings import FileResult, Finding, Location, Report, Severity, Witness, WitnessSide
from pipelint.relocate import map_paths


def _witnessed(doc: dict) -> dict[tuple[str, int], dict]:
    return {(f["rule"], f["line"]): f["witness"] for f in doc["findings"] if "witness" in f}


def _rel(name: str) -> str:
    return str((HANDWRITTEN / name).relative_to(ROOT))


@pytest.mark.parametrize("name, rule, line, expected", HIDDEN, ids=[h[0] for h in HIDDEN])
def test_check_json_gives_the_exact_witness(run_cli, monkeypatch, name, rule, line, expected):
    monkeypatch.chdir(ROOT)
    res = run_cli("check", _rel(name), "--format", "json", "--no-cache", "-j", "1")
    assert res.code == 1
    w = _witnessed(res.json)[(rule, line)]
    kind, buffer, first, second, pair = expected
    assert (w["kind"], w["buffer"], w["pair"], w["path"]) == (kind, buffer, pair, _rel(name))
    for side, (at, access, threads, iteration) in (("first", first), ("second", second)):
        assert (w[side]["line"], w[side]["access"], w[side]["threads"], w[side]["iteration"]) == (
            at, access, threads, iteration)


def test_the_cache_round_trip_keeps_the_witness(run_cli, monkeypatch, tmp_path):
    """A cold run fills the cache; the warm run reads every finding back from it, witness and all."""
    monkeypatch.chdir(ROOT)
    paths = [_rel(h[0]) for h in HIDDEN]
    cache = tmp_path / "cache"
    cold = run_cli("check", *paths, "--format", "json", "--no-cache", "-j", "1")
    fill = run_cli("check", *paths, "--format", "json", "--cache-dir", cache, "-j", "1")
    warm = run_cli("check", *paths, "--format", "json", "--cache-dir", cache, "-j", "1")
    summary = run_cli("check", *paths, "--cache-dir", cache)
    assert f"({len(paths)} file(s) unchanged, from the cache)" in summary.out
    assert len(_witnessed(cold.json)) == len(HIDDEN)
    assert cold.json["findings"] == fill.json["findings"] == warm.json["findings"]


def test_check_sarif_carries_the_witness_property(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    res = run_cli("check", _rel("release_early_sm_90_s3.cu"), "--format", "sarif", "--no-cache")
    [result] = json.loads(res.out)["runs"][0]["results"]
    w = result["properties"]["witness"]
    assert (w["kind"], w["first"]["line"], w["second"]["line"], w["second"]["iteration"]) == ("WAR", 98, 56, {"k": 3})


def test_path_map_rebases_the_witness_with_the_location(run_cli, monkeypatch):
    """The witness names the CUDA file the finding's `.cu` location names: after `--path-map` too."""
    monkeypatch.chdir(ROOT)
    name = "counter_syncwarp_nobarrier.cu"
    res = run_cli("check", _rel(name), "--format", "json", "--no-cache", "--path-map", "tests/fixtures/=/ci/src/")
    [f] = [f for f in res.json["findings"] if "witness" in f]
    assert f["path"] == f["witness"]["path"] == f"/ci/src/handwritten/{name}"


def test_map_paths_rewrites_the_witness_path_and_keeps_the_rest():
    side = WitnessSide(30, "store", (32, 33), "C[0] = 0;")
    witness = Witness("WAW", "C", side, side, (32, 0), "/build/k.cu")
    racy = Finding("shared-write-race", Severity.ERROR, "race", Location("/build/k.cu", 40), witness=witness)
    plain = Finding("redundant-wait", Severity.WARNING, "wait", Location("/build/k.cu", 12))
    report = Report(files=[FileResult("/build/k.cu", True)], findings=[racy, plain])
    map_paths(report, [("/build/", "/src/")])
    mapped, other = report.findings
    assert mapped.witness is not None and mapped.witness.path == "/src/k.cu" == mapped.location.path
    assert mapped.witness == Witness("WAW", "C", side, side, (32, 0), "/src/k.cu")
    assert other.witness is None and other.location.path == "/src/k.cu"
    untouched = Report(findings=[racy])
    map_paths(untouched, [("/elsewhere/", "/src/")])
    assert untouched.findings[0].witness == witness
