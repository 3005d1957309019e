"""The settings of one run, resolved once: the configuration file with a front end's overrides.

A front end (the command line, the language server, the TileLang hook) says what it sets in
`Overrides`; `Settings.resolve` applies it over `[tool.pipelint]` (`config.Config`) and the
defaults, and everything below reads the typed, frozen result.  Nothing below the front ends
sees the command line's parsed flags (`options.overrides` turns them into `Overrides`).
`show_settings` prints it (`pipelint check --show-settings`, after ruff's).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .findings import Severity
from .selection import Selection, Universe, split_words

if TYPE_CHECKING:
    from .discovery import Discovery
    from .pluginhost import PluginHost


@dataclass(frozen=True, slots=True)
class Overrides:
    """What a front end sets over the configuration; None (or empty) leaves the configuration's
    value.  Rule words are ids, plugin names or ALL; `named` are the paths the user named (always
    project files, whatever `#line` says)."""

    select: tuple[str, ...] = ()            # replaces the configuration's select when not empty
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    fail_on: str | None = None
    fail_on_performance: bool | None = None
    primary_location: str | None = None     # "cuda" or "python"
    path_map: tuple[str, ...] = ()          # OLD=NEW
    baseline: str | None = None
    write_baseline: str | None = None
    baseline_paths: bool = False
    project_root: str | None = None
    named: tuple[str, ...] = ()
    jobs: int | None = None
    max_file_size: float | None = None
    time_budget: float | None = None
    memory_budget: float | None = None
    disable: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()           # replaces the configuration's exclude when not empty
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool | None = None
    respect_gitignore: bool | None = None
    no_cache: bool = False
    cache_dir: str | None = None

    @classmethod
    def from_flags(cls, fields: dict[str, Any]) -> Overrides:
        """From flag values (`options.override_fields`): repeatable comma lists split into words,
        lists made tuples, flags not given (None) left unset."""
        words = ("select", "ignore", "extend_select", "exclude", "extend_exclude")
        given: dict[str, Any] = {}
        for name, value in fields.items():
            if value is None:
                continue
            given[name] = tuple(split_words(value)) if name in words else \
                tuple(value) if isinstance(value, list) else value
        return cls(**given)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a run decides before it reads a kernel."""

    config: Any                 # config.Config: the resolved `[tool.pipelint]`
    overrides: Overrides = field(default_factory=Overrides)
    selection: Selection | None = None
    fail_on: Severity = Severity.WARNING
    fail_on_performance: bool = False
    primary_location: str | None = None
    path_map: tuple[tuple[str, str], ...] = ()      # given on top of the configuration's
    project_root: Path = field(default_factory=Path.cwd)

    @classmethod
    def resolve(cls, config: Any, overrides: Overrides, host: PluginHost) -> Settings:
        """Overrides over configuration over defaults; unknown rule words are usage errors."""
        from .options import root_of
        from .relocate import parse_path_map

        return cls(config=config, overrides=overrides, selection=_selection(config, overrides, host),
                   fail_on=Severity.parse(overrides.fail_on) if overrides.fail_on else
                   config.fail_on or Severity.WARNING,
                   fail_on_performance=config.fail_on_performance if overrides.fail_on_performance is None
                   else bool(overrides.fail_on_performance),
                   primary_location=overrides.primary_location or config.primary_location,
                   path_map=tuple(parse_path_map(list(overrides.path_map))),
                   project_root=root_of(overrides.project_root, config))

    def enabled(self, rules: dict[str, Any]) -> frozenset[str]:
        """The rule ids of `rules` this run reports (per-file ignores aside)."""
        assert self.selection is not None
        return frozenset(r for r in rules if self.selection.enabled(r))


def _selection(config: Any, o: Overrides, host: PluginHost) -> Selection:
    """The command line's `--select` replaces the configuration's; `--ignore` and
    `--extend-select` add to it (flags repeat and take comma lists)."""
    u = Universe(host.rule_plugin)
    given = {"select": split_words(o.select), "ignore": split_words(o.ignore),
             "extend_select": split_words(o.extend_select)}
    for name, words in given.items():
        u.validate(words, f"--{name.replace('_', '-')}")
    select = frozenset(given["select"]) if given["select"] else (
        frozenset(config.select) if config.select is not None else None)
    return Selection(u, select, frozenset(config.extend_select) | frozenset(given["extend_select"]),
                     frozenset(config.ignore) | frozenset(given["ignore"]))


def show_settings(settings: Settings, host: Any, found: Discovery) -> str:
    """`key = value` lines a person can read and diff."""
    from . import cachedir

    config, o, chosen = settings.config, settings.overrides, settings.selection
    assert chosen is not None
    rows: list[tuple[str, Any]] = [
        ("configuration", config.path or "(none: defaults)"),
        ("project-root", str(settings.project_root)),
        ("select", sorted(chosen.select) if chosen.select is not None else "(all rules)"),
        ("extend-select", sorted(chosen.extend)),
        ("ignore", sorted(chosen.ignore)),
        ("enabled-rules", sorted(settings.enabled(host.rules))),
        ("per-file-ignores", {k: sorted(v) for k, v in sorted(config.per_file_ignores.items())}),
        ("per-kernel-ignores", {k: sorted(v) for k, v in sorted(config.per_kernel_ignores.items())}),
        ("severity", {k: v.value for k, v in sorted(config.severity.items())}),
        ("fail-on", settings.fail_on.value),
        ("fail-on-performance", settings.fail_on_performance),
        ("exclude", list(found.exclude)),
        ("extend-exclude", list(found.extend_exclude)),
        ("respect-gitignore", found.respect_gitignore),
        ("force-exclude", found.force_exclude),
        ("cache", not o.no_cache and config.cache is not False),
        ("cache-dir", str(cachedir.choose(o.cache_dir, config.cache_dir, config.path).path)),
        ("primary-location", settings.primary_location or "cuda"),
        ("path-map", [*config.path_map, *o.path_map]),
        ("plugins", {name: config.plugins.get(name, {}) for name in host.plugin_names()}),
    ]
    return "\n".join(f"{key} = {json.dumps(value, sort_keys=True)}" for key, value in rows)
