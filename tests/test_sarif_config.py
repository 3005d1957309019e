"""SARIF for code scanning, configuration precedence, suppressions and baselines."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from helpers import ROOT, fixture
from mutants.mutate import drop_barrier_after_wait, duplicate_barrier

# The official OASIS SARIF 2.1.0 schema, committed so CI validates without network or ../shared.
SCHEMA_PATH = ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA_PATH.read_text())


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernels").mkdir()
    mutant = tmp_path / "kernels" / "race.cu"
    mutant.write_text(drop_barrier_after_wait().text)
    clean = tmp_path / "kernels" / "clean.cu"
    clean.write_text(fixture("gemm_f16_sm_80_s3.cu").read_text())
    bad = tmp_path / "kernels" / "broken.cu"
    bad.write_text("__global__ void k() { int x = ; }\n")
    return tmp_path


def _sarif(run_cli, *args):
    res = run_cli("check", *args, "--format", "sarif", "--sarif-category", "pipelint/tilelang")
    return res, json.loads(res.out)


def test_sarif_is_schema_valid_and_has_what_github_reads(run_cli, workdir, schema):
    res, doc = _sarif(run_cli, "kernels")
    jsonschema.validate(doc, schema)
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "pipelint" and driver["semanticVersion"] and driver["informationUri"]
    rules = {r["id"]: r for r in driver["rules"]}
    for rule in rules.values():
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"] and rule["helpUri"].endswith(f"{rule['id']}.md")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert rule["properties"]["tags"] and rule["properties"]["precision"]
    assert run["automationDetails"]["id"] == "pipelint/tilelang/"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")
    results = run["results"]
    assert any(r["ruleId"] == "missing-barrier" for r in results)
    for r in results:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not loc["artifactLocation"]["uri"].startswith(("/", "file:"))
        assert {"startLine", "startColumn", "endLine", "endColumn"} <= set(loc["region"])
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["partialFingerprints"]["primaryLocationLineHash"]
        assert all(rel["message"]["text"] for rel in r.get("relatedLocations", []))
    race = next(r for r in results if r["ruleId"] == "missing-barrier")
    assert any(rel["physicalLocation"]["artifactLocation"]["uri"].endswith(".py")
               for rel in race["relatedLocations"])
    # the message links its related locations (code scanning shows only linked ones) ...
    assert "[the wait that completes the copy](0)" in race["message"]["text"]
    # ... and the copy -> wait -> read chain is a code flow, in program order
    flow = race["codeFlows"][0]["threadFlows"][0]["locations"]
    lines = [step["location"]["physicalLocation"]["region"]["startLine"] for step in flow]
    assert len(flow) >= 3 and lines == sorted(lines)
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is True
    assert any("broken.cu" in n["message"]["text"] for n in inv["toolExecutionNotifications"])


def test_python_line_first_path_map_and_python_suppressions(run_cli, workdir):
    res = run_cli("check", "kernels/race.cu", "--format", "json", "--primary-location", "python")
    race = next(f for f in json.loads(res.out)["findings"] if f["rule"] == "missing-barrier")
    assert race["path"] == "examples/gemm.py"
    assert race["related"][0]["path"] == "kernels/race.cu" and race["related"][0]["message"] == "generated CUDA"
    github = run_cli("check", "kernels/race.cu", "--format", "github", "--primary-location", "python").out
    assert "::error file=examples/gemm.py,line=" in github
    moved = run_cli("check", "kernels/race.cu", "--format", "json", "--path-map", "examples/=src/kernels/")
    paths = {r["path"] for f in json.loads(moved.out)["findings"] for r in f["related"]}
    assert "src/kernels/gemm.py" in paths and "examples/gemm.py" not in paths
    _write_config(workdir, 'primary-location = "python"\npath-map = ["examples/=src/"]\n')
    configured = json.loads(run_cli("check", "kernels/race.cu", "--format", "json").out)["findings"]
    assert any(f["path"] == "src/gemm.py" for f in configured)
    # `# pipelint: ignore[RULE]` on the TileLang Python line the finding maps to
    (workdir / "pyproject.toml").unlink()
    line = race["line"]
    (workdir / "examples").mkdir()
    py = (workdir / "examples" / "gemm.py")
    py.write_text("".join("# pipelint: ignore[missing-barrier]\n" if n == line else "\n" for n in range(1, line + 2)))
    after = json.loads(run_cli("check", "kernels/race.cu", "--format", "json").out)["findings"]
    assert not [f for f in after if f["rule"] == "missing-barrier" and f["related"] and
                any(r["path"] == "examples/gemm.py" and r["line"] == line for r in f["related"])]


def test_fingerprints_are_stable_across_runs_and_when_lines_move(run_cli, workdir):
    def prints():
        _, doc = _sarif(run_cli, "kernels/race.cu")
        return sorted((r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"])
                      for r in doc["runs"][0]["results"])

    first = prints()
    assert first == prints()
    race = workdir / "kernels" / "race.cu"
    race.write_text("// a comment\n// another\n\n" + race.read_text())
    _, doc = _sarif(run_cli, "kernels/race.cu")
    lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in doc["runs"][0]["results"]}
    assert prints() == first and lines  # same identities although every line number moved by 3


def _window_hash(text: str, start: int) -> str:
    """GitHub's hash written directly: base-37 polynomial over the 100 characters
    (spaces and tabs skipped, EOF = 65535, then zeros) from a line's start."""
    chars = [ord(c) for c in text[start:] if c not in " \t"] + [65535]
    chars = (chars + [0] * 100)[:100]
    value = sum(c * pow(37, 99 - i, 1 << 64) for i, c in enumerate(chars)) % (1 << 64)
    return format(value, "x")


def test_line_hash_matches_githubs_algorithm():
    from pipelint.fingerprint import line_hashes

    text = "__syncthreads();\n  tl::cp_async_wait<2>();\nx = 1;\nx = 1;\n"
    hashes = line_hashes(text)
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"][:-1]
    for n, start in enumerate(starts, 1):
        assert hashes[n].split(":")[0] == _window_hash(text, start)
    assert hashes[3].split(":")[0] != hashes[4].split(":")[0]  # the window reaches past the line
    assert line_hashes("  int a;\n")[1] == line_hashes("int a;\n")[1]  # leading blanks do not count


def test_tool_errors_mark_execution_unsuccessful(run_cli, workdir, monkeypatch, schema):
    import pipelint.cli as cli
    import types

    from pipelint import hookimpl

    mod = types.ModuleType("crasher")
    mod.pipelint_check_kernel = hookimpl(lambda kernel, parsed, path: 1 / 0)
    real = cli.load_plugins
    monkeypatch.setattr(cli, "load_plugins", lambda disable=(): real(disable, extra_modules=[mod]))
    res, doc = _sarif(run_cli, "kernels/clean.cu")
    jsonschema.validate(doc, schema)
    inv = doc["runs"][0]["invocations"][0]
    assert res.code == 3 and inv["executionSuccessful"] is False
    assert any("crasher" in n["message"]["text"] for n in inv["toolExecutionNotifications"])


def test_sarif_output_alongside_text(run_cli, workdir):
    res = run_cli("check", "kernels/race.cu", "--sarif-output", "out.sarif")
    assert "error[missing-barrier]" in res.out
    assert json.loads((workdir / "out.sarif").read_text())["runs"][0]["results"]


def test_github_annotations(run_cli, workdir):
    res = run_cli("check", "kernels/race.cu", "--format", "github")
    assert res.out.startswith("::error file=kernels/race.cu,line=")
    assert "title=pipelint missing-barrier::missing __syncthreads: RAW on" in res.out
    assert "%0Ahelp: insert __syncthreads(); before line" in res.out


# ---------------------------------------------------------------- configuration
def _write_config(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text("[tool.pipelint]\n" + body)


def _rules(res):
    return {f["rule"] for f in res.json["findings"]}


def test_config_select_ignore_severity_and_fail_on(run_cli, workdir):
    _write_config(workdir, 'ignore = ["missing-barrier"]\n')
    assert "missing-barrier" not in _rules(run_cli("check", "kernels/race.cu", "--format", "json"))
    _write_config(workdir, 'select = ["parse-error"]\n')
    assert _rules(run_cli("check", "kernels", "--format", "json")) == {"parse-error"}
    _write_config(workdir, '[tool.pipelint.severity]\nmissing-barrier = "note"\n')
    res = run_cli("check", "kernels/race.cu", "--format", "json")
    assert {f["severity"] for f in res.json["findings"] if f["rule"] == "missing-barrier"} == {"note"}
    assert res.code == 0  # notes are below the default fail level
    _write_config(workdir, 'fail-on = "note"\n[tool.pipelint.severity]\nmissing-barrier = "note"\n')
    assert run_cli("check", "kernels/race.cu").code == 1


def test_cli_flags_override_the_file(run_cli, workdir):
    _write_config(workdir, 'ignore = ["missing-barrier"]\nfail-on = "error"\n')
    res = run_cli("check", "kernels/race.cu", "--select", "missing-barrier", "--format", "json")
    assert _rules(res) == set()  # ignore from the file still applies ...
    res = run_cli("check", "kernels/race.cu", "--extend-select", "missing-barrier", "--format", "json",
                  "--config", "other.toml")
    assert res.code == 2  # a --config that does not exist is a usage error
    (workdir / "other.toml").write_text("[tool.pipelint]\nselect = ['missing-barrier']\n")
    res = run_cli("check", "kernels/race.cu", "--config", "other.toml", "--format", "json", "--fail-on", "warning")
    assert _rules(res) == {"missing-barrier"} and res.code == 1


def test_per_file_and_per_kernel_ignores(run_cli, workdir):
    _write_config(workdir, '[tool.pipelint.per-file-ignores]\n"kernels/race*.cu" = ["missing-barrier"]\n')
    assert "missing-barrier" not in _rules(run_cli("check", "kernels/race.cu", "--format", "json"))
    _write_config(workdir, '[tool.pipelint.per-kernel-ignores]\ngemm_kernel = ["missing-barrier"]\n')
    assert "missing-barrier" not in _rules(run_cli("check", "kernels/race.cu", "--format", "json"))


@pytest.mark.parametrize("body,name", [
    ('selekt = ["x"]\n', "selekt"),
    ('ignore = ["no-such-rule"]\n', "no-such-rule"),
    ('[tool.pipelint.severity]\nmissing-barrier = "fatal"\n', "fatal"),
])
def test_unknown_keys_and_rules_are_usage_errors(run_cli, workdir, body, name):
    _write_config(workdir, body)
    res = run_cli("check", "kernels/race.cu")
    assert res.code == 2 and name in res.err


# ---------------------------------------------------------------- suppressions and baselines
def _insert(path: Path, before_line: int, text: str) -> None:
    lines = path.read_text().split("\n")
    lines.insert(before_line - 1, text)
    path.write_text("\n".join(lines))


def test_inline_suppression_on_the_line_and_the_line_before(run_cli, workdir, schema):
    m = duplicate_barrier()
    path = workdir / "kernels" / "dup.cu"
    path.write_text(m.text)
    _insert(path, m.line, "    // pipelint: ignore[redundant-barrier]")
    res = run_cli("check", "kernels/dup.cu", "--format", "json")
    assert "redundant-barrier" not in _rules(res) and res.code == 0
    path.write_text(m.text)
    lines = path.read_text().split("\n")
    lines[m.line - 1] += "  // pipelint: ignore[redundant-barrier]"
    path.write_text("\n".join(lines))
    assert "redundant-barrier" not in _rules(run_cli("check", "kernels/dup.cu", "--format", "json"))
    res, doc = _sarif(run_cli, "kernels/dup.cu")
    jsonschema.validate(doc, schema)
    sup = [r for r in doc["runs"][0]["results"] if r.get("suppressions")]
    assert [r["ruleId"] for r in sup] == ["redundant-barrier"]


def test_unused_or_ruleless_suppression_is_reported(run_cli, workdir):
    path = workdir / "kernels" / "clean.cu"
    text = path.read_text().split("\n")
    text.insert(5, "// pipelint: ignore[missing-barrier]")
    text.insert(6, "// pipelint: ignore")
    path.write_text("\n".join(text))
    res = run_cli("check", "kernels/clean.cu", "--format", "json")
    notes = [f for f in res.json["findings"] if f["rule"] == "unused-suppression"]
    assert len(notes) == 2 and {f["line"] for f in notes} == {6, 7}


def test_baseline_write_then_report_only_new(run_cli, workdir):
    written = run_cli("check", "kernels/race.cu", "--write-baseline", "base.json")
    assert written.code == 0 and "wrote" in written.err          # recording findings is a success
    res = run_cli("check", "kernels/race.cu", "--baseline", "base.json")
    assert res.code == 0 and "baselined" in res.out
    race = workdir / "kernels" / "race.cu"
    race.write_text("// moved\n" + race.read_text())
    assert run_cli("check", "kernels/race.cu", "--baseline", "base.json").code == 0
    dup = workdir / "kernels" / "dup.cu"
    dup.write_text(duplicate_barrier().text)
    res = run_cli("check", "kernels/race.cu", "kernels/dup.cu", "--baseline", "base.json", "--format", "json")
    assert _rules(res) == {"redundant-barrier"}
    assert run_cli("check", "kernels/race.cu", "--baseline", "missing.json").code == 2


def test_stale_baseline_entries_are_reported_and_pruned(run_cli, workdir):
    dup = workdir / "kernels" / "dup.cu"
    dup.write_text(duplicate_barrier().text)
    assert run_cli("check", "kernels/race.cu", "kernels/dup.cu", "--write-baseline", "base.json").code == 0
    entries = len(json.loads((workdir / "base.json").read_text())["fingerprints"])
    dup.unlink()                                     # its findings are gone: their entries are stale
    res = run_cli("check", "kernels/race.cu", "--baseline", "base.json")
    assert res.code == 0 and "match no finding any more" in res.err
    pruned = run_cli("check", "kernels/race.cu", "--write-baseline", "base.json")
    assert pruned.code == 0 and "pruned" in pruned.err
    assert len(json.loads((workdir / "base.json").read_text())["fingerprints"]) < entries
    assert "match no finding" not in run_cli("check", "kernels/race.cu", "--baseline", "base.json").err


def test_baseline_with_paths_tells_copies_apart(run_cli, workdir):
    race = workdir / "kernels" / "race.cu"
    (workdir / "kernels" / "copy.cu").write_text(race.read_text())
    run_cli("check", "kernels/race.cu", "--write-baseline", "plain.json")
    run_cli("check", "kernels/race.cu", "--write-baseline", "paths.json", "--baseline-paths")
    assert json.loads((workdir / "paths.json").read_text())["paths"] is True
    both = ["check", "kernels/race.cu", "kernels/copy.cu", "--format", "json"]
    assert run_cli(*both, "--baseline", "plain.json").json["findings"] == []       # same text: same print
    left = run_cli(*both, "--baseline", "paths.json").json["findings"]
    assert left and {f["path"] for f in left} == {"kernels/copy.cu"}


def test_every_builtin_rule_has_a_documentation_page_and_rule_prints_it(run_cli):
    from pipelint.pluginhost import load_plugins

    host = load_plugins()
    builtin = [r for r, p in host.rule_plugin.items() if p in ("pipelint", "version-dimension", "wait-group",
                                                              "barriers", "tma-barriers", "wgmma-registers",
                                                              "lowering-facts")]
    for rule_id in builtin:
        page = ROOT / "docs" / "rules" / f"{rule_id}.md"
        assert page.is_file(), rule_id
        text = page.read_text()
        assert "## Why it matters for the pipeline" in text and "## Example" in text and "## How to fix" in text
    res = run_cli("rule", "wait-too-shallow")
    assert res.code == 0 and "cp_async_wait<3>" in res.out
    assert run_cli("rule", "nope").code == 2


def test_sarif_respects_githubs_result_limit(monkeypatch, schema):
    import pipelint.report.sarif as sarif
    from pipelint.findings import Finding, Location, Report, Severity
    from pipelint.pluginhost import load_plugins

    host = load_plugins()
    monkeypatch.setattr(sarif, "MAX_RESULTS", 50)
    findings = [Finding("redundant-barrier", Severity.NOTE, f"note {i}", Location("k.cu", i + 1)) for i in range(60)]
    findings += [Finding("missing-barrier", Severity.ERROR, f"race {i}", Location("k.cu", i + 1)) for i in range(5)]
    doc = json.loads(sarif.render(Report(findings=findings, rules=dict(host.rules)), host=host))
    jsonschema.validate(doc, schema)
    run = doc["runs"][0]
    assert len(run["results"]) == 50
    assert sum(r["ruleId"] == "missing-barrier" for r in run["results"]) == 5  # errors kept first
    assert any("dropped" in n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"])
    assert all(len(r.get("relatedLocations", [])) <= 10 for r in run["results"])
