"""Helpers for testing pipelint plugins: run them on CUDA text and assert what they find.

    from pipelint.testing import assert_findings, lint

    def test_narrow_copy_is_reported():
        findings = lint(NARROW_KERNEL, my_plugin, only=True)
        assert_findings(findings, {("narrow-cp-async", 44)})

`lint` runs the same engine as `pipelint check` (parse, kernel model, every
run-time trip-count scenario, plugin isolation), on text instead of a file, with
your plugin module registered even when it is not installed.  A plugin that
crashes fails the test with its traceback instead of becoming a tool error.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .findings import Finding, ToolError
from .model import KernelModel
from .model.unit import unit_facts

if TYPE_CHECKING:
    from .pluginhost import PluginHost

__all__ = ["PluginCrashed", "assert_findings", "kernel_models", "lint", "rules_and_lines"]


class PluginCrashed(AssertionError):
    """A plugin raised while checking: the test fails with the plugin's traceback."""


def lint(source: str | Path, *plugins: object, only: bool = False, path: str = "kernel.cu",
         config: dict[str, Any] | None = None, keep_tool_errors: bool = False) -> list[Finding]:
    """Findings of checking CUDA `source` (text, or a `Path` to read) with the installed plugins
    plus `plugins` (modules or objects with hook implementations).

    `only=True` keeps the findings of `plugins` alone (the built-in checks still run, as in a real
    run, but their findings are dropped).  `config` is the plugin's `[tool.pipelint.plugins.NAME]`
    table, handed to every given plugin through `pipelint_configure`.
    """
    from .engine import analyze_source, dedupe
    from .pluginhost import load_plugins

    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    host = load_plugins(extra_modules=plugins)
    names = _names_of(host, plugins)
    if config is not None:
        host.configure({name: config for name in names})
    _, findings, errors, _ = analyze_source(path, text, host)
    if not keep_tool_errors:
        _raise_crashes(errors, names if only else None)
    found = dedupe(findings)
    if only:
        found = [f for f in found if f.plugin in names]
    return sorted(found, key=lambda f: f.sort_key)


def _names_of(host: PluginHost, plugins: tuple[object, ...]) -> set[str]:
    """The names the plugin manager registered `plugins` under: findings and tool errors carry
    the plugin's name, not the module, so `only` and `config` go by these."""
    return {name for name, plugin in host.pm.list_name_plugin() if any(plugin is p for p in plugins)}


def _raise_crashes(errors: Iterable[ToolError], names: set[str] | None) -> None:
    """Fail the test with the tracebacks of the plugins that raised (of `names` alone when given):
    in a unit test a crash is the plugin's bug, not a tool error to report and carry on."""
    crashed = [e for e in errors if e.internal and (names is None or e.plugin in names)]
    if crashed:
        raise PluginCrashed("\n".join(f"{e.message}\n{e.detail}" for e in crashed))


def kernel_models(source: str | Path) -> list[KernelModel]:
    """The kernel models of CUDA text: what `pipelint_check_kernel` receives, to explore in a test."""
    from .cuda import parse

    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    parsed = parse(text)
    unit = unit_facts(parsed.unit)
    return [KernelModel(func, parsed.lines, parsed.registry, unit=unit) for func in parsed.unit.kernels()]


def rules_and_lines(findings: Iterable[Finding]) -> set[tuple[str, int]]:
    return {(f.rule, f.location.line) for f in findings}


def assert_findings(findings: Iterable[Finding], expected: Iterable[tuple[str, int]],
                    rules: Iterable[str] | None = None) -> None:
    """Assert the findings are exactly `expected` as (rule id, line) pairs, among the rules of
    `expected` (or `rules`); the failure lists what is missing and what is unexpected, with
    the messages."""
    findings = list(findings)
    expected = set(expected)
    chosen = set(rules) if rules is not None else {rule for rule, _ in expected}
    actual = {(f.rule, f.location.line): f for f in findings if not chosen or f.rule in chosen}
    missing = sorted(expected - set(actual))
    unexpected = sorted(set(actual) - expected)
    if missing or unexpected:
        lines = [f"missing:    {rule} at line {line}" for rule, line in missing]
        lines += [f"unexpected: {rule} at line {line}: {actual[(rule, line)].message}"
                  for rule, line in unexpected]
        raise AssertionError("findings differ from the expected ones:\n" + "\n".join(lines))
