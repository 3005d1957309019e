"""Issue 26, a user's first hour: named paths are checked, performance findings do not fail the
run, SARIF is placed at the repository root, and the conventions users expect from ruff exist."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
from helpers import ROOT, fixture

SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json"
CORPORA = [ROOT.parent / "shared" / "corpus" / name / "cu" for name in ("upstream", "realworld")]
PERFORMANCE = {"redundant-barrier", "redundant-wait", "wait-too-deep", "stage-trend"}
CLEAN = "gemm_f16_sm_80_s3.cu"         # TileLang's output: no finding
REDUNDANT = "gemv_sm_80_s3.cu"         # TileLang's output: a redundant-barrier warning


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository with a gitignored lowered/ and a build/ folder, each holding a kernel."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("/lowered/\n")
    for folder in ("lowered", "build", "src"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "k.cu").write_text(fixture(CLEAN).read_text())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _paths(res) -> list[str]:
    return [f["path"] for f in res.json["files"]]


# ------------------------------------------------------------------------------ named paths (1)
def test_named_folders_are_checked_even_when_ignored_or_excluded(run_cli, repo):
    assert _paths(run_cli("check", ".", "--format", "json")) == ["src/k.cu"]          # a walk skips both
    assert _paths(run_cli("check", "lowered/", "--format", "json")) == ["lowered/k.cu"]   # .gitignore'd
    assert _paths(run_cli("check", "build", "--format", "json")) == ["build/k.cu"]       # default exclude
    assert _paths(run_cli("check", "lowered/k.cu", "--format", "json")) == ["lowered/k.cu"]
    (repo / "lowered" / "sub" / "build").mkdir(parents=True)
    (repo / "lowered" / "sub" / "build" / "x.cu").write_text(fixture(CLEAN).read_text())
    # inside a named folder the rules that name entries still apply (a nested build/ is skipped)
    assert _paths(run_cli("check", "lowered", "--format", "json")) == ["lowered/k.cu"]


def test_force_exclude_applies_ignores_to_named_paths(run_cli, repo):
    res = run_cli("check", "lowered/", "build/k.cu", "src/k.cu", "--force-exclude", "--format", "json")
    assert _paths(res) == ["src/k.cu"]
    assert run_cli("check", "lowered/", "--force-exclude").code == 0      # nothing left: not an error
    assert run_cli("check", "--show-files", "lowered/").out.split() == ["lowered/k.cu"]


# ------------------------------------------------------------------- performance exit code (4)
def test_performance_findings_alone_exit_zero(run_cli):
    res = run_cli("check", fixture(REDUNDANT))
    assert res.code == 0 and "warning[redundant-barrier]" in res.out
    assert "performance finding(s) do not affect the exit code" in res.err
    assert run_cli("check", fixture(REDUNDANT), "--fail-on-performance").code == 1
    assert run_cli("check", fixture(REDUNDANT), "--fail-on-performance", "--fail-on", "error").code == 0


def test_fail_on_performance_in_the_configuration(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(fixture(REDUNDANT).read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.pipelint]\nfail-on-performance = true\n")
    assert run_cli("check", "k.cu").code == 1
    assert run_cli("check", "k.cu", "--no-fail-on-performance").code == 0


def test_correctness_findings_still_fail(run_cli, tmp_path):
    from mutants.mutate import drop_barrier_after_wait

    race = tmp_path / "race.cu"
    race.write_text(drop_barrier_after_wait().text)
    assert run_cli("check", race).code == 1


def test_rules_list_and_pages_say_the_category(run_cli):
    rules = {r["id"]: r for r in run_cli("rules", "--format", "json").json}
    assert {r for r, d in rules.items() if d["category"] == "performance"} == PERFORMANCE
    assert rules["missing-barrier"]["category"] == "correctness"
    assert "performance" in run_cli("rules").out
    page = run_cli("rule", "redundant-wait").out
    assert "## Exit code" in page and "--fail-on-performance" in page
    assert "Category `correctness`" in run_cli("rule", "wait-too-shallow").out


@pytest.mark.parametrize("corpus", CORPORA, ids=lambda p: p.parent.name)
def test_on_the_corpora_only_non_performance_findings_decide_the_exit_code(run_cli, corpus):
    """Default flags on TileLang's own examples and the real-world corpus: the exit code is decided
    by the correctness findings alone (others are reducing those; the policy is what is tested),
    and the performance findings alone give 0."""
    if not corpus.is_dir():
        pytest.skip(f"{corpus} is not on this machine")
    res = run_cli("check", corpus, "--format", "json")
    doc = res.json
    rules = {r["id"]: r["category"] for r in run_cli("rules", "--format", "json").json}
    failing = [f for f in doc["findings"]
               if f["severity"] in ("error", "warning") and rules[f["rule"]] != "performance"]
    performance = [f for f in doc["findings"] if rules[f["rule"]] == "performance"]
    assert res.code != 3, doc["errors"][:3]
    assert performance, "the corpus has performance findings (the case the policy is about)"
    assert res.code == (1 if failing else 0), [f"{f['rule']} {f['path']}:{f['line']}" for f in failing[:5]]
    only = run_cli("check", corpus, "--format", "json", "--select", ",".join(sorted(PERFORMANCE)))
    assert only.json["findings"] and only.code == 0       # performance warnings alone: exit 0
    warned = any(f["severity"] == "warning" for f in only.json["findings"])
    forced = run_cli("check", corpus, "--select", ",".join(sorted(PERFORMANCE)), "--fail-on-performance")
    assert forced.code == (1 if warned else 0)


# ----------------------------------------------------------------------------------- SARIF (6, 7)
def _uris(doc) -> list[dict]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "artifactLocation" in node:
                found.append(node["artifactLocation"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(doc)
    return found


def test_sarif_from_a_subfolder_is_relative_to_the_repository_root(run_cli, repo, monkeypatch):
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    res = run_cli("check", "../lowered", "../src/k.cu", "--format", "sarif")
    doc = json.loads(res.out)
    jsonschema.validate(doc, json.loads(SARIF_SCHEMA.read_text()))
    run = doc["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    run_doc = json.loads(run_cli("check", "../src/k.cu", "--format", "sarif", "--project-root", "..").out)
    assert run_doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"


def test_sarif_uris_never_climb_and_outside_files_have_no_base(run_cli, repo, tmp_path_factory, monkeypatch):
    outside = tmp_path_factory.mktemp("elsewhere") / "far.cu"
    outside.write_text(fixture(REDUNDANT).read_text())
    (repo / "src" / "r.cu").write_text(fixture(REDUNDANT).read_text())
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    doc = json.loads(run_cli("check", "../src/r.cu", str(outside), "--format", "sarif").out)
    jsonschema.validate(doc, json.loads(SARIF_SCHEMA.read_text()))
    locations = _uris(doc)
    assert locations and not [a for a in locations if a["uri"].startswith("..") or "/../" in a["uri"]]
    inside = [a for a in locations if a.get("uriBaseId") == "%SRCROOT%"]
    assert any(a["uri"] == "src/r.cu" for a in inside)
    far = [a for a in locations if "far.cu" in a["uri"]]
    assert far and all("uriBaseId" not in a and a["uri"].startswith("file://") for a in far)


def test_suppressed_findings_are_in_sarif_as_in_source(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = fixture(REDUNDANT).read_text().splitlines()
    plain = run_cli("check", fixture(REDUNDANT), "--format", "json").json["findings"]
    for line in {f["line"] for f in plain if f["rule"] == "redundant-barrier"}:
        lines[line - 1] += "  // pipelint: ignore[redundant-barrier]"
    (tmp_path / "line.cu").write_text("\n".join(lines) + "\n")
    (tmp_path / "file.cu").write_text("// pipelint: ignore-file[redundant-barrier]\n"
                                      + fixture(REDUNDANT).read_text())
    for name in ("line.cu", "file.cu"):
        doc = json.loads(run_cli("check", name, "--format", "sarif").out)
        results = doc["runs"][0]["results"]
        suppressed = [r for r in results if r.get("suppressions")]
        assert suppressed and all(r["suppressions"][0]["kind"] == "inSource" for r in suppressed), name
        assert not [r for r in results if r["ruleId"] == "unused-suppression"], name
        assert run_cli("check", name, "--format", "json", "--fail-on-performance").code == 0, name


def test_unused_file_level_suppression_is_reported_at_its_line(run_cli, tmp_path):
    k = tmp_path / "k.cu"
    k.write_text(fixture(CLEAN).read_text() + "// pipelint: ignore-file[missing-barrier]\n")
    found = run_cli("check", k, "--format", "json").json["findings"]
    [unused] = [f for f in found if f["rule"] == "unused-suppression"]
    assert unused["line"] == len(k.read_text().splitlines())


def test_python_location_is_never_an_installed_package():
    from pipelint.cuda.linemap import is_tilelang_internal
    from pipelint.findings import Finding, Location, Severity
    from pipelint.relocate import ORIGIN_MESSAGES, python_origin

    for template in ("/usr/local/lib/python3.11/dist-packages/tilelang/language/gemm.py",
                     "/home/u/.venv/lib/python3.11/site-packages/tilelang/intrinsics/mma.py",
                     "/usr/lib/python3/dist-packages/tvm/script/parser.py"):
        assert is_tilelang_internal(template)
        f = Finding("missing-barrier", Severity.ERROR, "m", Location("k.cu", 3),
                    related=(Location(template, 10, message=ORIGIN_MESSAGES[0]),
                             Location("kernels/my_gemm.py", 7, message=ORIGIN_MESSAGES[1])))
        origin = python_origin(f)
        assert origin is not None and origin.path == "kernels/my_gemm.py"
    assert not is_tilelang_internal("/home/u/project/kernels/my_gemm.py")


# ------------------------------------------------------------------------------------- dumps (3)
def test_dump_names_collide_only_across_modules(tmp_path):
    from pipelint.commands.lower import MANIFEST, claim_dump_names
    from pipelint.errors import UsageError

    claim_dump_names(tmp_path, ["make_sm_80_s3.cu"], "../kernels/a.py:make")
    claim_dump_names(tmp_path, ["make_sm_80_s3.cu", "make_sm_90_s3.cu"], "../kernels/a.py:make")
    with pytest.raises(UsageError, match="would overwrite"):
        claim_dump_names(tmp_path, ["make_sm_80_s3.cu"], "../kernels/b.py:make")
    assert json.loads((tmp_path / MANIFEST).read_text()) == {"make_sm_80_s3.cu": "../kernels/a.py:make",
                                                            "make_sm_90_s3.cu": "../kernels/a.py:make"}


# --------------------------------------------------------------------------- JIT hook, editable (5)
def test_editable_wheel_carries_the_tilelang_hook(tmp_path):
    out = subprocess.run([sys.executable, "-c", f"from setuptools import build_meta; "
                          f"print(build_meta.build_editable({str(tmp_path)!r}))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = tmp_path / out.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as z:
        assert "pipelint-tilelang.pth" in z.namelist()
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        assert "pipelint-tilelang.pth,sha256=" in z.read(record).decode()
        assert "PIPELINT_TILELANG" in z.read("pipelint-tilelang.pth").decode()


def test_the_hook_is_armed_in_this_environment_when_installed_editable():
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    if not list(site.glob("__editable__*pipelint*")):
        pytest.skip("pipelint is not installed editable here")
    if not (site / "pipelint-tilelang.pth").exists():
        pytest.skip("installed editable before setup.py added the hook: reinstall with pip install -e .")
    probe = "import sys; print(any(type(f).__name__ == '_AfterTileLang' for f in sys.meta_path))"
    env = {k: v for k, v in os.environ.items() if k != "PIPELINT_TILELANG"}
    off = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    on = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                        env={**env, "PIPELINT_TILELANG": "warn"})
    assert off.stdout.strip() == "False" and on.stdout.strip() == "True"


# ---------------------------------------------------------------------------- smaller defects (8)
def test_prune_takes_a_path(tmp_path):
    from pipelint.tilelang import prune

    verdicts = {"configs": [{"config": {"block_K": 32}, "ruled_out": None},
                            {"config": {"block_K": 64}, "ruled_out": "over the shared-memory budget"}]}
    doc = tmp_path / "verdicts.json"
    doc.write_text(json.dumps(verdicts))
    configs = [{"block_K": 32}, {"block_K": 64}, {"block_K": 128}]
    assert prune(configs, doc) == prune(configs, str(doc)) == prune(configs, verdicts) == [{"block_K": 32},
                                                                                              {"block_K": 128}]


def test_explain_names_producer_and_consumer_roles(run_cli):
    text = run_cli("explain", fixture("gemm_f16_sm_90_s3.cu")).out
    assert "A_shared" in text and "produced by threads 0-127 (TMA); consumed by threads 128-255" in text
    doc = run_cli("explain", fixture("gemm_f16_sm_90_s3.cu"), "--format", "json").json
    kernel = doc[0]["kernels"][0]
    a = next(b for b in kernel["buffers"] if b["name"] == "A_shared")
    assert a["producers"] == ["threads 0-127 (TMA)"] and a["consumers"] == ["threads 128-255"]
    sm80 = run_cli("explain", fixture(CLEAN)).out
    assert "produced by threads 0-127 (cp.async); consumed by threads 0-127" in sm80


# ---------------------------------------------------------------------------------- conventions
def test_show_settings_reflects_configuration_and_flags(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(fixture(CLEAN).read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint]\nselect = ["barriers"]\nfail-on = "error"\n')
    res = run_cli("check", "k.cu", "--show-settings", "--ignore", "redundant-barrier")
    settings = dict(line.split(" = ", 1) for line in res.out.splitlines())
    assert res.code == 0 and settings["configuration"] == json.dumps(str(tmp_path / "pyproject.toml"))
    assert json.loads(settings["enabled-rules"]) == ["barrier-deadlock", "divergent-barrier", "missing-barrier",
                                                    "named-barrier-count"]
    assert json.loads(settings["fail-on"]) == "error" and json.loads(settings["fail-on-performance"]) is False


def test_stdin_with_a_filename(run_cli, monkeypatch, tmp_path):
    import io

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.pipelint.per-file-ignores]\n"lowered/*" = ["redundant-barrier"]\n')
    monkeypatch.setattr(sys, "stdin", io.StringIO(fixture(REDUNDANT).read_text()))
    res = run_cli("check", "-", "--stdin-filename", "src/g.cu", "--format", "json")
    assert {f["path"] for f in res.json["findings"]} == {"src/g.cu"} and res.json["files"][0]["path"] == "src/g.cu"
    monkeypatch.setattr(sys, "stdin", io.StringIO(fixture(REDUNDANT).read_text()))
    ignored = run_cli("check", "-", "--stdin-filename", "lowered/g.cu", "--format", "json")
    assert not ignored.json["findings"]               # the name decides the configuration
    assert run_cli("check", "-", "k.cu").code == 2
    assert run_cli("check", "k.cu", "--stdin-filename", "x.cu").code == 2


def test_verbose_times_each_file(run_cli, tmp_path):
    a, b = tmp_path / "a.cu", tmp_path / "b.cu"
    a.write_text(fixture(CLEAN).read_text())
    b.write_text(fixture(REDUNDANT).read_text())
    res = run_cli("check", a, b, "-v", "--no-cache")
    timed = [line for line in res.err.splitlines() if line.endswith(" s") and ".cu:" in line]
    assert len(timed) == 2 and all(str(tmp_path) in line for line in timed)
    assert "configuration:" in res.err


def test_clean_removes_only_pipelints_caches(run_cli, tmp_path):
    cache = tmp_path / "cache"
    run_cli("check", fixture(CLEAN), "--cache-dir", cache)
    (cache / "lower").mkdir()
    (cache / "mine.txt").write_text("not pipelint's")
    assert any(cache.glob("v*"))
    res = run_cli("clean", "--cache-dir", cache)
    assert res.code == 0 and "removed" in res.err
    assert sorted(p.name for p in cache.iterdir()) == ["CACHEDIR.TAG", "mine.txt"]   # the tag stays with a stranger
    (cache / "mine.txt").unlink()
    run_cli("clean", "--cache-dir", cache)
    assert not cache.exists()


def test_did_you_mean(run_cli, tmp_path, monkeypatch):
    assert "did you mean --select?" in run_cli("check", "--selct", "x", "k.cu").err
    assert "did you mean check?" in run_cli("chekc", "k.cu").err
    assert "did you mean sarif?" in run_cli("check", "k.cu", "--format", "sarf").err
    assert "did you mean redundant-barrier?" in run_cli("check", fixture(CLEAN), "--ignore", "redundant-barier").err
    assert "did you mean missing-barrier?" in run_cli("rule", "missing-barier").err
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(fixture(CLEAN).read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.pipelint]\nextend-selct = []\n")
    res = run_cli("check", "k.cu")
    assert res.code == 2 and "did you mean extend-select?" in res.err


def test_rdjson_for_reviewdog(run_cli):
    doc = run_cli("check", fixture(REDUNDANT), "--format", "rdjson").json
    assert doc["source"]["name"] == "pipelint"
    found = [d for d in doc["diagnostics"] if d["code"]["value"] == "redundant-barrier"]
    assert {d["severity"] for d in found} == {"WARNING", "INFO"}        # in the loop / outside it
    d = found[0]
    assert d["location"]["path"].endswith(REDUNDANT)
    start = d["location"]["range"]["start"]
    assert start["line"] >= 1 and start["column"] >= 1 and d["code"]["url"].endswith("redundant-barrier.md")
    assert all(r["message"] and r["location"]["path"] for r in d.get("related_locations", []))


# ----------------------------------------------------------------------- configuration schema
BAD_CONFIGS = ['cache = "yes"', "jobs = -1", "max-file-size = 0", 'fail-on = "fatal"', "selct = []",
               'primary-location = "rust"', 'path-map = ["nothing"]', 'exclude = "build"',
               "severity = 3", '[tool.pipelint.severity]\nredundant-wait = "loud"', 'cache-dir = ""']


def test_the_schema_is_a_valid_json_schema_and_ships_with_the_package():
    from pipelint import schema

    jsonschema.Draft202012Validator.check_schema(schema.schema())
    assert schema.SCHEMA_PATH.name == "config.schema.json"
    assert "config.schema.json" in (ROOT / "setup.py").read_text()


@pytest.mark.parametrize("text", BAD_CONFIGS)
def test_schema_validation_names_the_key_with_and_without_jsonschema(run_cli, tmp_path, monkeypatch, text):
    import tomllib

    from pipelint import schema

    table = tomllib.loads("[tool.pipelint]\n" + text)["tool"]["pipelint"]
    with_lib = schema.problems(table)
    monkeypatch.setitem(sys.modules, "jsonschema", None)          # as in a core-only install
    without = schema.problems(table)
    assert with_lib and without
    assert schema.message(with_lib[0]) == schema.message(without[0])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pipelint]\n" + text + "\n")
    (tmp_path / "k.cu").write_text(fixture(CLEAN).read_text())
    res = run_cli("check", "k.cu")
    assert res.code == 2 and schema.message(without[0]) in res.err


def test_good_configurations_pass_the_schema():
    import tomllib

    from pipelint import schema

    table = tomllib.loads("""[tool.pipelint]
select = ["barriers", "wait-group"]
ignore = "redundant-barrier"
per-file-ignores = {"lowered/*" = ["redundant-wait"]}
severity = {redundant-wait = "note"}
fail-on = "warning"
fail-on-performance = false
jobs = 0
exclude = ["generated"]
path-map = ["/build/src/=src/"]
primary-location = "python"
[tool.pipelint.plugins.wait-group]
[tool.pipelint.lower]
arch = ["sm_80"]
""")["tool"]["pipelint"]
    assert schema.problems(table) == []


# ------------------------------------------------------------------------------ code conventions
def test_no_private_stdlib_regex_modules():
    for path in (ROOT / "analyzer").rglob("*.py"):
        text = path.read_text()
        assert "re._parser" not in text and "sre_parse" not in text and "sre_compile" not in text, path


def test_first_character_table_is_sound_on_every_terminal():
    import re

    from lark import Lark

    from pipelint.cuda.firstchar import ANY, first_chars

    grammar = Lark((ROOT / "grammars" / "cuda.lark").read_text(), parser="lalr", lexer="basic")
    for term in grammar.terminals:
        pattern = term.pattern.to_regexp()
        firsts = first_chars(pattern)
        compiled = re.compile(pattern)
        for ch in map(chr, range(1, 128)):
            # any string starting with `ch` that matches proves `ch` must be in the table
            for probe in (ch, ch + "a", ch + "0", ch + " ", ch + "x1", ch + "*/", ch + "\n", ch + '"'):
                if compiled.match(probe) and compiled.match(probe).end() > 0:
                    assert ch in firsts or firsts == ANY, (term.name, ch)


def _imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = module.relative_to(ROOT / "analyzer").parent.parts[:len(module.relative_to(ROOT / "analyzer")
                                                                           .parent.parts) - node.level + 1]
            found.add(".".join([*base, *(node.module.split(".") if node.module else [])]))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipelint"):
            found.add(node.module.removeprefix("pipelint").lstrip("."))
    return found


def test_command_modules_do_not_import_the_command_line():
    """cli -> commands.* -> options: the shared option helpers live below both."""
    for module in sorted((ROOT / "analyzer" / "commands").glob("*.py")):
        assert "cli" not in _imports(module), module.name
    assert "options" in _imports(ROOT / "analyzer" / "commands" / "lower.py")
    assert "commands.diff" not in _imports(ROOT / "analyzer" / "commands" / "lower.py")
    assert "commands.lower" not in _imports(ROOT / "analyzer" / "commands" / "diff.py")
