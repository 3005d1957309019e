"""A race finding's witness (issue 36) on the project's own TileLang twins: the threads of each
side, both statements, the iteration and one concrete pair of threads, filled in from the model's
hazards (`pipelint.witness.attach_witnesses`, which `engine.analyze_source` calls), carried by
`Finding.witness` and written as the `witness` key of JSON output and the `witness` property of
SARIF results.  The witness is evidence about a finding, never part of its identity: equality,
fingerprints and deduplication ignore it."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from helpers import HANDWRITTEN, KERNELS, ROOT

from pipelint.engine import analyze_source, dedupe
from pipelint.findings import FileResult, Report
from pipelint.fingerprint import fingerprint
from pipelint.pluginhost import load_plugins
from pipelint.report import json_report, sarif
from pipelint.witness import attach_witnesses

HOST = load_plugins()
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text())


def _checked(path: Path) -> tuple[str, list]:
    rel = str(path.relative_to(ROOT))
    text = path.read_text()
    _, findings, errors, _ = analyze_source(rel, text, HOST)        # the engine attaches the witnesses
    assert errors == []
    return text, dedupe(findings)


def _line(text: str, n: int) -> str:
    return " ".join(text.split("\n")[n - 1].split())


# (file, rule, line) -> the witness's kind, buffer, (line, access, threads, iteration) of each side, pair
HIDDEN = [
    # warp group 0 stores A_s (line 38); warp group 1's wgmma (line 72) reads it after a barrier of its own
    ("wg_wgmma_partial_sm_90_s0.cu", "barrier-scope", 47,
     ("RAW", "A_s", (38, "store", "0-127", {}), (72, "load", "128-255", {}), None)),
    # the consumer's wgmma of k_1=0 (line 98) still reads A_shared when the release lets iteration
    # k=3's TMA (line 56, the elected thread 0) load over the same slot
    ("release_early_sm_90_s3.cu", "mbarrier-release", 104,
     ("WAR", "A_shared", (98, "load", "128-255", {"k_1": 0}), (56, "tma", "0", {"k": 3}), None)),
    # warps 1's zero stores (threads 32-35, line 30) and warp 0's AtomicAdd (threads 0-3, line 40):
    # only a __syncwarp between; thread 32 zeroes C[0], which thread 0 increments
    ("counter_syncwarp_nobarrier.cu", "shared-write-race", 40,
     ("WAW", "C", (30, "store", "32-35", {}), (40, "atomic", "0-3", {}), [32, 0])),
    # warp 0 stores S (line 29), warps 1-3 read a neighbour's element with no barrier; thread 32
    # reads S[1], which thread 1 stores
    ("cond_writers_nobarrier.cu", "shared-race", 32,
     ("RAW", "S", (29, "store", "0-31", {}), (32, "load", "32-127", {}), [1, 32])),
]


@pytest.mark.parametrize("name, rule, line, expected", HIDDEN, ids=[h[0] for h in HIDDEN])
def test_the_witness_of_each_hidden_race_is_exact(name, rule, line, expected):
    text, findings = _checked(HANDWRITTEN / name)
    [f] = [f for f in findings if f.rule == rule and f.location.line == line]
    assert f.witness is not None
    w = f.witness.to_json()
    kind, buffer, first, second, pair = expected
    assert (w["kind"], w["buffer"], w["pair"]) == (kind, buffer, pair)
    assert w["path"] == f"tests/fixtures/handwritten/{name}"
    for side, (at, access, threads, iteration) in (("first", first), ("second", second)):
        got = w[side]
        assert (got["line"], got["access"], got["threads"], got["iteration"]) == (at, access, threads, iteration)
        assert got["statement"] == _line(text, at), "the statement is the text of the witness's line"
    if pair:
        # the pair's threads belong to their sides
        assert pair[0] in f.witness.first.threads and pair[1] in f.witness.second.threads


@pytest.mark.parametrize("name", ["wg_wgmma_full_sm_90_s0.cu", "counter_syncwarp_sm_80_s0.cu",
                                  "gemm_f16_sm_90_s3.cu", "cond_writers_sm_80_s0.cu"])
def test_clean_twins_have_no_finding_and_so_no_witness(name):
    _, findings = _checked(KERNELS / name)
    assert [f for f in findings if f.witness is not None] == []


def test_findings_without_a_hazard_keep_no_witness():
    """A performance finding (no race) passes through unchanged: the same object."""
    path = KERNELS / "gemm_f16_sm_80_s3.cu"
    text = path.read_text()
    _, findings, _, models = analyze_source(str(path), text, HOST)
    bare = [replace(f, witness=None) for f in findings]
    out = attach_witnesses(bare, models, text)
    assert all(a is b for a, b in zip(bare, out) if a.severity.value != "error")
    assert all(f.witness is None for f in out if f.severity.value != "error")


@pytest.mark.parametrize("name", [h[0] for h in HIDDEN])
def test_attaching_again_gives_the_engines_witnesses(name):
    """`attach_witnesses` on the engine's findings stripped of their witness gives them back exactly:
    the engine's call is this function, over the same models (nothing else fills the field)."""
    path = HANDWRITTEN / name
    text = path.read_text()
    _, findings, _, models = analyze_source(str(path.relative_to(ROOT)), text, HOST)
    assert any(f.witness is not None for f in findings)
    again = attach_witnesses([replace(f, witness=None) for f in findings], models, text)
    assert [f.witness for f in again] == [f.witness for f in findings]


def test_the_witness_is_not_part_of_a_findings_identity():
    _, findings = _checked(HANDWRITTEN / "cond_writers_nobarrier.cu")
    [f] = findings
    bare = replace(f, witness=None)
    assert f == bare and hash(f) == hash(bare)
    assert fingerprint(f) == fingerprint(bare) and fingerprint(f, True) == fingerprint(bare, True)
    assert dedupe([f, bare]) == [f]


def _report(findings) -> Report:
    paths = sorted({f.location.path for f in findings})
    return Report(files=[FileResult(p, True) for p in paths], findings=list(findings), rules=dict(HOST.rules))


def test_json_output_has_the_witness_key_only_where_there_is_one():
    _, racy = _checked(HANDWRITTEN / "counter_syncwarp_nobarrier.cu")
    bare = [replace(f, witness=None) for f in racy]
    doc = json.loads(json_report.render(_report(racy)))
    [item] = doc["findings"]
    assert item["witness"] == racy[0].witness.to_json()
    assert item["witness"]["first"]["statement"] == "C[(((int)threadIdx.x) - 32)] = 0;"
    atomic = "AtomicAdd((&(C[(((int)threadIdx.x) & 3)])), A[((int)threadIdx.x)]);"
    assert item["witness"]["second"]["statement"] == atomic
    # without a witness the output is what it was before the field existed
    plain = json.loads(json_report.render(_report(bare)))
    assert "witness" not in plain["findings"][0]
    del item["witness"]
    assert doc == plain


def test_sarif_results_carry_the_witness_property_and_stay_schema_valid(tmp_path):
    findings = []
    for name in ("release_early_sm_90_s3.cu", "wg_wgmma_partial_sm_90_s0.cu", "counter_syncwarp_nobarrier.cu"):
        findings += _checked(HANDWRITTEN / name)[1]
    text = sarif.render(_report(findings), host=HOST, root=str(ROOT))
    doc = json.loads(text)
    jsonschema.validate(doc, SCHEMA)
    results = doc["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    early = by_rule["mbarrier-release"]["properties"]["witness"]
    assert (early["kind"], early["first"]["line"], early["second"]["line"], early["second"]["threads"]) == (
        "WAR", 98, 56, "0")
    assert early["first"]["iteration"] == {"k_1": 0} and early["second"]["iteration"] == {"k": 3}
    assert by_rule["shared-write-race"]["properties"]["witness"]["pair"] == [32, 0]
    # fingerprints of code scanning do not move with the witness
    bare = json.loads(sarif.render(_report([replace(f, witness=None) for f in findings]), host=HOST,
                                   root=str(ROOT)))
    assert [r["partialFingerprints"] for r in results] == [r["partialFingerprints"] for r in bare["runs"][0]["results"]]
    assert all("witness" not in r.get("properties", {}) for r in bare["runs"][0]["results"])


def test_the_result_cache_keeps_the_witness():
    """An entry is `asdict` of each finding as JSON; the decoder rebuilds the witness exactly (and
    an entry whose witness has the wrong shape is refused, so it is recomputed)."""
    from dataclasses import asdict

    from pipelint import cache

    _, findings = _checked(HANDWRITTEN / "counter_syncwarp_nobarrier.cu")
    for f in [*findings, replace(findings[0], witness=None)]:
        back = cache._finding(json.loads(json.dumps(asdict(f))))
        assert back == f and back.witness == f.witness
    bad = json.loads(json.dumps(asdict(findings[0])))
    bad["witness"]["pair"] = [32]
    with pytest.raises(ValueError):
        cache._finding(bad)
