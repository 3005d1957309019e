"""The rule registry and the run layer: what lists rules is derived, a selection runs only the
analyses its rules need, a rule added through the public API is everywhere at once, and every
output format has a test."""
from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path

import pytest
from helpers import ROOT, fixture
from rulecases import gaps

import pipelint.model.analysed as analysed
from pipelint import registry
from pipelint.cli import cmd_rule, cmd_rules
from pipelint.docs import rule_page
from pipelint.findings import Report
from pipelint.pluginhost import builtin_plugins, load_plugins
from pipelint.session import Session
from pipelint.settings import Overrides

HOST = load_plugins()


def test_readme_rule_table_is_the_registry_s():
    text = (ROOT / "README.md").read_text()
    start, end = text.index(registry.README_START), text.index(registry.README_END)
    table = text[start + len(registry.README_START):end].strip("\n")
    assert table == registry.readme_table(HOST, builtin_plugins())
    for rule in HOST.rules:
        if HOST.rule_plugin[rule] in (*builtin_plugins(), registry.CORE):
            assert f"`{rule}`" in table, rule       # global-race was missing from the hand-kept table


def test_the_editor_s_variant_rules_are_the_lowering_plan_rules():
    assert registry.variant_rules(HOST) == {"planner-stages", "ir-cuda-mismatch", "stage-trend",
                                            "shared-memory-budget"}


def test_the_model_names_no_rule_id():
    import pipelint.model.intrinsics as intrinsics

    assert not hasattr(intrinsics, "HAZARD_RULES")
    text = "\n".join(p.read_text() for p in (ROOT / "analyzer" / "model").glob("*.py"))
    for rule in HOST.rules:
        assert f'"{rule}"' not in text, rule


def test_every_kernel_check_declares_known_analyses_and_hazards():
    from pipelint.checks import ANALYSES

    for check in HOST.checks.values():
        assert set(check.analyses) <= set(ANALYSES), check.id
        assert len(set(check.hazards)) == len(check.hazards), check.id
    kinds = [k for c in HOST.checks.values() for k in c.hazards]
    assert len(kinds) == len(set(kinds))        # each hazard kind is reported by one rule


# ---------------------------------------------------------------- a selection runs what it needs
@pytest.fixture
def analyses_run(monkeypatch):
    """The analyses of `KernelModel` constructed while the test runs, by name."""
    ran: list[str] = []
    for name, cls in (("cp_async", analysed.CpAsyncAnalysis), ("mbarrier", analysed.MBarrierAnalysis),
                      ("races", analysed.CrossRoleRaces), ("global_handoff", analysed.GlobalHandoff)):
        def counted(model, _cls=cls, _name=name):
            ran.append(_name)
            return _cls(model)
        monkeypatch.setattr(analysed, cls.__name__, counted)
    return ran


def _check(paths: list[Path], select: tuple[str, ...] = ()) -> Report:
    session = Session.open(HOST, [str(p) for p in paths], overrides=Overrides(select=select, no_cache=True, jobs=1))
    return session.check_files([str(p) for p in paths])


KERNELS = ["gemm_f16_sm_80_s3.cu", "gemm_f16_sm_90_s3.cu"]


def test_selecting_one_rule_runs_only_the_analyses_it_needs(analyses_run):
    everything = _check([fixture(k) for k in KERNELS])
    assert set(analyses_run) == {"cp_async", "mbarrier", "races", "global_handoff"}
    analyses_run.clear()
    one = _check([fixture(k) for k in KERNELS], select=("wait-too-shallow",))
    assert set(analyses_run) == {"cp_async"}
    assert registry.analyses(HOST, {"wait-too-shallow"}) == {"cp_async"}
    assert [f for f in everything.findings if f.rule == "wait-too-shallow"] == one.findings
    analyses_run.clear()
    _check([fixture(k) for k in KERNELS], select=("mbarrier-deadlock",))
    assert set(analyses_run) == {"mbarrier"}
    analyses_run.clear()
    _check([fixture(k) for k in KERNELS], select=("tma-store-fence", "divergent-barrier", "unknown-intrinsic"))
    assert analyses_run == []                   # rules over the model's facts alone


@pytest.mark.parametrize("rule", sorted(HOST.checks))
def test_a_selected_rule_runs_no_analysis_it_does_not_declare(rule, analyses_run):
    check = HOST.checks[rule]
    if check.scope != "kernel":
        pytest.skip("a rule over lowered variants")
    _check([fixture(k) for k in KERNELS], select=(rule,))
    assert set(analyses_run) <= set(check.analyses)


# ---------------------------------------------------------------- a new rule in one module
PLUGIN = '''
from pipelint import KernelCheck, Rule, Severity, hookimpl


class EveryKernel(KernelCheck):
    """A rule for the test: one note at each kernel."""

    rule = Rule("tmp-every-kernel", "TmpEveryKernel", "Every kernel is noted",
                "A rule added by a test, in a plugin of one module.", Severity.NOTE,
                "Nothing to fix.", ("coverage",), rationale="It shows the registry derives everything.")
    example = "`k.cu:2:1: note[tmp-every-kernel] kernel k`"

    def check(self, kernel, path):
        return [self.finding(path, kernel, kernel.func, f"kernel {kernel.name}")]


@hookimpl
def pipelint_checks():
    return [EveryKernel()]
'''


def test_a_rule_added_through_the_public_api_is_in_rules_its_page_and_the_registry_test(tmp_path, capsys):
    module = types.ModuleType("tmp_rule_plugin")
    exec(compile(PLUGIN, str(tmp_path / "tmp_rule_plugin.py"), "exec"), module.__dict__)
    host = load_plugins(extra_modules=[module])
    assert "tmp-every-kernel" in host.rules and host.rule_plugin["tmp-every-kernel"] == "tmp_rule_plugin"
    cmd_rules(argparse.Namespace(format="json"), host)
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed["tmp-every-kernel"]["category"] == "correctness"
    cmd_rule(argparse.Namespace(rule_id="tmp-every-kernel"), host)
    page = capsys.readouterr().out
    assert "# tmp-every-kernel" in page and "kernel k`" in page and "It shows the registry" in page
    assert page.startswith(rule_page(host.rules["tmp-every-kernel"], "tmp_rule_plugin",
                                     host.checks["tmp-every-kernel"].example).rstrip("\n"))
    cases = tmp_path / "rules"
    assert gaps(["tmp-every-kernel"], cases) == {"tmp-every-kernel": "positive and negative"}
    (cases / "tmp-every-kernel").mkdir(parents=True)
    (cases / "tmp-every-kernel" / "one.cu").write_text(
        '// one kernel\nextern "C" __global__ void k(float* out) {  // expect: tmp-every-kernel\n  out[0] = 1.0f;\n}\n')
    (cases / "tmp-every-kernel" / "none.cu").write_text("// no kernel\n__device__ int f() { return 1; }\n")
    assert gaps(["tmp-every-kernel"], cases) == {}
    path = tmp_path / "one.cu"
    path.write_text((cases / "tmp-every-kernel" / "one.cu").read_text())
    report = Session.open(host, [str(path)], overrides=Overrides(select=("tmp-every-kernel",), no_cache=True)) \
        .check_files([str(path)])
    assert [(f.rule, f.location.line) for f in report.findings] == [("tmp-every-kernel", 2)]


# ---------------------------------------------------------------- the run layer
def test_check_text_and_check_files_give_the_same_report(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(fixture("scaled_gemm_sm_80_s2.cu").read_text())
    session = Session.open(HOST, [str(path)], overrides=Overrides(no_cache=True))
    a = session.check_files([str(path)]).sorted_findings()
    b = session.check_text(str(path), path.read_text()).sorted_findings()
    assert a == b and any(f.rule == "redundant-wait" for f in a)


def test_lowering_facts_check_the_byte_count_the_kernel_text_could_not(tmp_path):
    """`mbarrier-tx-bytes` on a variant of `pipelint lower`: the descriptors' boxes settle the note."""
    from pipelint.session import analyze_variants

    cuda = fixture("causal_attn_sm_90_s2.cu").read_text()

    class Lowered:          # what the lowering driver hands over for one variant
        arch, num_stages, ok, error, error_kind, cached, seconds = "sm_90", 2, True, None, None, False, 0.0

        def __init__(self, boxes: dict[str, int]) -> None:
            self.result = {"cuda": cuda, "tma_box_bytes": boxes}

    def tx(boxes: dict[str, int]) -> list:
        lowered = analyze_variants("causal", [Lowered(boxes)], HOST, tmp_path, Report(rules=dict(HOST.rules)))
        return [f for f in lowered[0].findings if f.rule == "mbarrier-tx-bytes"]

    (note,) = tx({})                            # no facts: the kernel text alone, a note
    assert note.severity.value == "note" and "could not be checked" in note.message
    assert "pipelint lower" not in note.help    # nothing that contradicts itself in lower's output
    assert tx({"Q_desc": 8192, "K_desc": 8192, "V_desc": 8192}) == []     # the boxes add up: checked
    (wrong,) = tx({"Q_desc": 4096, "K_desc": 4096, "V_desc": 4096})
    assert wrong.severity.value == "error" and "write 4096 bytes (the boxes of Q_desc" in wrong.message


def test_settings_are_resolved_once_and_frozen():
    session = Session.open(HOST, overrides=Overrides(select=("barriers",), ignore=("redundant-barrier",),
                                                     fail_on="error"))
    s = session.settings
    assert s.fail_on.value == "error"
    assert session.enabled == {"missing-barrier", "divergent-barrier", "named-barrier-count", "barrier-deadlock"}
    with pytest.raises(AttributeError):
        s.fail_on = None  # type: ignore[misc]


def test_no_front_end_forges_flags_below_the_command_line():
    offenders = []
    for path in (ROOT / "analyzer").rglob("*.py"):
        rel = path.relative_to(ROOT / "analyzer").as_posix()
        if rel in ("cli.py", "options.py") or rel.startswith("commands/"):     # issue 33's front ends
            continue
        text = path.read_text()
        if "argparse" in text or "getattr(args" in text:
            offenders.append(rel)
    assert offenders == []


# ---------------------------------------------------------------- every output format has a test
def _parse_json(text: str) -> None:
    json.loads(text)


def _parse_xml(text: str) -> None:
    import xml.etree.ElementTree as ET

    ET.fromstring(text)


def _lines_with(prefix: str):
    def check(text: str) -> None:
        assert all(line.startswith(prefix) for line in text.splitlines() if line.strip()), text[:200]
    return check


def _names_the_rule(text: str) -> None:
    assert "redundant-wait" in text


FORMAT_TESTS = {"text": _names_the_rule, "concise": _names_the_rule, "json": _parse_json, "sarif": _parse_json,
                "github": _lines_with("::"), "gitlab": _parse_json, "junit": _parse_xml, "rdjson": _parse_json}


def test_every_output_format_has_a_test():
    assert set(HOST.formats) == set(FORMAT_TESTS)


@pytest.mark.parametrize("name", sorted(FORMAT_TESTS))
def test_an_output_format_renders_a_report(name, tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(fixture("scaled_gemm_sm_80_s2.cu").read_text())
    report = _check([path])
    text = HOST.formats[name](report, host=HOST, colour=False, statistics=False, category=None, root=str(tmp_path))
    FORMAT_TESTS[name](text)
    if name not in ("text", "concise"):
        assert "redundant-wait" in text


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
