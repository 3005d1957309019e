"""Plugin mechanism: isolation of crashing checks, rule-id clashes, disabling."""
from __future__ import annotations

import types

import pytest

import pipelint.cli as cli
from pipelint import hookimpl
from pipelint.engine import CheckOptions, run_check
from pipelint.findings import Rule, Severity
from pipelint.pluginhost import UsageError, load_plugins
from helpers import fixture
from mutants.mutate import drop_barrier_after_wait


def _module(name: str, **hooks) -> types.ModuleType:
    mod = types.ModuleType(name)
    for key, fn in hooks.items():
        setattr(mod, key, hookimpl(fn))
    return mod


def _crasher():
    def pipelint_check_kernel(kernel, parsed, path):
        raise RuntimeError("boom")

    return _module("crasher", pipelint_check_kernel=pipelint_check_kernel)


def test_crashing_check_is_isolated_and_named(tmp_path):
    path = tmp_path / "m.cu"
    path.write_text(drop_barrier_after_wait().text)
    host = load_plugins(extra_modules=[_crasher()])
    report = run_check([str(path)], host, CheckOptions(jobs=1))
    assert any(f.rule == "missing-barrier" for f in report.findings)  # other checks kept
    (err,) = report.errors
    assert "crasher" in err.message and "boom" in err.message and err.plugin == "crasher"
    assert report.exit_code(Severity.WARNING) == 3


def test_crashing_check_exits_three_from_the_cli(run_cli, monkeypatch):
    real = cli.load_plugins
    monkeypatch.setattr(cli, "load_plugins", lambda disable=(): real(disable, extra_modules=[_crasher()]))
    res = run_cli("check", fixture("gemm_f16_sm_80_s3.cu"))
    assert res.code == 3
    assert "tool error: plugin 'crasher' crashed" in res.out


def test_duplicate_rule_id_names_both_plugins():
    def pipelint_rules():
        return [Rule("wait-too-shallow", "X", "x", "x", Severity.ERROR)]

    with pytest.raises(UsageError) as info:
        load_plugins(extra_modules=[_module("copycat", pipelint_rules=pipelint_rules)])
    assert "wait-group" in str(info.value) and "copycat" in str(info.value)


def test_disable_plugin_by_flag_and_environment(run_cli, monkeypatch, tmp_path):
    path = tmp_path / "m.cu"
    path.write_text(drop_barrier_after_wait().text)
    assert run_cli("check", path).code == 1
    assert run_cli("check", path, "--disable-plugin", "barriers", "--disable-plugin", "wait-group").code == 0
    monkeypatch.setenv("PIPELINT_DISABLE_PLUGINS", "barriers,wait-group")
    assert run_cli("check", path).code == 0
    assert "missing-barrier" not in run_cli("rules").out


def test_plugin_that_fails_to_import_is_reported_and_the_run_goes_on(run_cli, monkeypatch):
    import pipelint.pluginhost as plugins

    class BrokenEntryPoint:
        name, group, dist = "broken-plugin", "pipelint", None

        def load(self):
            raise ImportError("No module named 'missing_dependency'")

    real = plugins.entry_points
    monkeypatch.setattr(plugins, "entry_points",
                        lambda group: list(real(group=group)) + [BrokenEntryPoint()])
    res = run_cli("check", fixture("gemv_sm_80_s3.cu"), "--format", "json")
    assert res.code == 3
    assert any("broken-plugin" in e["message"] and "missing_dependency" in e["message"]
               for e in res.json["errors"])
    assert any(f["rule"] == "redundant-barrier" for f in res.json["findings"])  # the rest still ran


def test_builtins_are_registered_once_from_pyproject():
    from pipelint.pluginhost import builtin_plugins

    names = builtin_plugins()
    assert {"version-dimension", "wait-group", "barriers", "tma-barriers", "lowering-facts", "bench"} <= set(names)
    host = load_plugins()
    assert set(names) <= set(host.plugin_names())
