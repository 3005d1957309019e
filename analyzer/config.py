"""`[tool.pipelint]` configuration, inline suppressions and baselines.

Precedence: command-line flags over the configuration file over rule
defaults.  Unknown keys and rule ids are usage errors that name them, so a
typo never silently disables a check.
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import UsageError
from .findings import Finding, Location, Report, Severity
from .pluginhost import PluginHost
from .relocate import python_origin
from .selection import Universe, split_words
from .settings import Overrides, Settings
from .suppress import Suppressions, python_suppressed, suppressions_in


@dataclass
class Config:
    path: str | None = None
    select: set[str] | None = None
    ignore: set[str] = field(default_factory=set)
    extend_select: set[str] = field(default_factory=set)
    per_file_ignores: dict[str, set[str]] = field(default_factory=dict)
    per_kernel_ignores: dict[str, set[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    fail_on: Severity | None = None
    fail_on_performance: bool = False       # performance findings decide the exit code too
    jobs: int | None = None
    max_file_size: float | None = None      # MB
    time_budget: float | None = None        # seconds per file
    memory_budget: float | None = None      # MB per file
    cache_dir: str | None = None            # relative to the config file
    cache: bool | None = None               # false: never read or write the result cache
    exclude: tuple[str, ...] | None = None  # replaces the default excludes
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    plugins: dict[str, dict] = field(default_factory=dict)   # [tool.pipelint.plugins.NAME] tables
    primary_location: str | None = None     # "python" or "cuda"
    path_map: tuple[str, ...] = ()          # OLD=NEW prefixes for `#line` paths

    @property
    def root(self) -> Path:
        """Where relative patterns and paths of the configuration start: its folder."""
        return Path(self.path).resolve().parent if self.path else Path.cwd()


def find_pyproject(paths: Sequence[str]) -> Path | None:
    start = Path(os.path.realpath(paths[0])) if paths else Path.cwd()     # a link loop: no RuntimeError
    for d in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            if _links_out(candidate, d):
                continue
            try:
                text = candidate.read_text(encoding="utf-8")
                data = tomllib.loads(text)
            except OSError:
                continue
            except tomllib.TOMLDecodeError as exc:
                if "tool.pipelint" in text:   # ours, and broken: say so instead of ignoring it
                    raise UsageError(f"{candidate}: invalid TOML: {exc}") from None
                continue
            if "pipelint" in data.get("tool", {}):
                return candidate
    return None


def _links_out(candidate: Path, folder: Path) -> bool:
    """Whether `candidate` is a symbolic link to a file outside the project (the git top level
    above `folder`, else `folder` itself): such a file is not the checked repository's own, and
    reading it would let the repository pick any TOML on the machine as its configuration
    (issue 38).  Said once on stderr; `--config FILE` reads a file wherever it lies."""
    if not candidate.is_symlink():
        return False
    top = next((a for a in (folder, *folder.parents) if (a / ".git").exists()), folder)
    target, project = os.path.realpath(candidate), os.path.realpath(top)
    if target == project or target.startswith(project.rstrip(os.sep) + os.sep):
        return False
    from .escape import visible

    print(f"pipelint: warning: {visible(str(candidate))} is a link to a file outside the project "
          f"({visible(target)}): not read as configuration (pass --config to use it)", file=sys.stderr)
    return True


def _ids(value, where: str, host: PluginHost) -> set[str]:
    """Rule ids, plugin names or ALL (see selection.py), each known."""
    return set(Universe(host.rule_plugin).validate(split_words(value), where))


def load_config(paths: Sequence[str], explicit: str | None, host: PluginHost) -> Config:
    """`[tool.pipelint]` of `--config` or of the nearest pyproject.toml that has one, validated
    against config.schema.json, then resolved (rule ids known, paths relative to the file)."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise UsageError(f"config file not found: {explicit}")
    else:
        found = find_pyproject(paths)
        if found is None:
            return Config()
        p = found
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{p}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("pipelint", {})
    where = f"{p} [tool.pipelint]"
    from .schema import message, problems

    found_problems = problems(table)
    if found_problems:
        raise UsageError(f"{where} {message(found_problems[0])}")
    return _resolve(table, p, where, host)


def _resolve(table: dict[str, Any], p: Path, where: str, host: PluginHost) -> Config:
    """A schema-valid table as a `Config`: what the schema cannot know (rule ids and plugin
    names of this run, paths relative to the file) is checked here."""
    cfg = Config(path=str(p))
    if "select" in table:
        cfg.select = _ids(table["select"], where + " select", host)
    cfg.ignore = _ids(table.get("ignore", []), where + " ignore", host)
    cfg.extend_select = _ids(table.get("extend-select", []), where + " extend-select", host)
    cfg.per_file_ignores = {g: _ids(v, f"{where} per-file-ignores", host)
                            for g, v in table.get("per-file-ignores", {}).items()}
    cfg.per_kernel_ignores = {k: _ids(v, f"{where} per-kernel-ignores", host)
                              for k, v in table.get("per-kernel-ignores", {}).items()}
    for rule, level in table.get("severity", {}).items():
        _ids([rule], where + " severity", host)
        cfg.severity[rule] = Severity.parse(level)
    if "fail-on" in table:
        cfg.fail_on = Severity.parse(table["fail-on"])
    for key in ("jobs", "max-file-size", "time-budget", "memory-budget", "cache", "respect-gitignore",
                "force-exclude", "fail-on-performance", "primary-location"):
        if key in table:
            setattr(cfg, key.replace("-", "_"), table[key])
    if "cache-dir" in table:
        # joined to the file's folder, not resolved: cachedir.choose confines it there without links
        cfg.cache_dir = os.path.join(os.path.abspath(p.parent), table["cache-dir"])
    if "exclude" in table:
        cfg.exclude = tuple(table["exclude"])
    cfg.extend_exclude = tuple(table.get("extend-exclude", ()))
    cfg.path_map = tuple(table.get("path-map", ()))
    plugins = table.get("plugins", {})
    unknown = sorted(set(plugins) - set(host.plugin_names()))
    if unknown:
        from .options import did_you_mean

        raise UsageError(f"{where} plugins: no plugin named {', '.join(unknown)} is loaded"
                         f"{did_you_mean(unknown[0], host.plugin_names())} (see `pipelint plugins`)")
    cfg.plugins = plugins
    return cfg


def positive(value: Any, where: str, integer: bool = False, zero: bool = False) -> float:
    """A finite number > 0 (or >= 0), or a usage error that names the setting."""
    import math

    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        kind = "an integer" if integer else "a number"
        raise UsageError(f"{where}: expected {kind} {'>= 0' if zero else '> 0'}, got {value!r}")
    return value


def _file_ignored(rule: str, path: str, kernel: str | None, cfg: Config, u: Universe) -> bool:
    """per-file-ignores (globs relative to the configuration file's folder, or a bare name) and
    per-kernel-ignores."""
    try:
        rel = Path(os.path.realpath(path)).relative_to(cfg.root).as_posix()
    except ValueError:
        rel = path
    for glob, words in cfg.per_file_ignores.items():
        if any(fnmatch.fnmatch(candidate, glob) for candidate in (rel, path, Path(path).name)) \
                and u.matches(rule, frozenset(words)):
            return True
    return bool(kernel and u.matches(rule, frozenset(cfg.per_kernel_ignores.get(kernel, set()))))


def inline_suppressions(path: str) -> dict[int, tuple[set[str], int]]:
    """line -> (rule ids, column) of `// pipelint: ignore[RULE,...]` comments."""
    if not os.path.isfile(path):      # FIFOs and devices are never read (they would block)
        return {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _by_line(suppressions_in(fh.read()))
    except OSError:
        return {}


def _by_line(found: Suppressions) -> dict[int, tuple[set[str], int]]:
    return {line: (set(rules), col) for line, rules, col in found}


def apply_settings(report: Report, settings: Settings, host: PluginHost) -> None:
    """Suppress, select and adjust findings in place, then apply the baseline.  Suppressions
    come first so that the `unused-suppression` findings they produce obey `select`/`ignore`
    like any other rule."""
    from .relocate import confine, parse_path_map, python_first

    cfg, chosen = settings.config, settings.selection
    assert chosen is not None
    u = chosen.universe

    def on(rule: str, path: str, kernel: str | None = None) -> bool:
        return chosen.enabled(rule) and not _file_ignored(rule, path, kernel, cfg, u)

    # `#line` paths rebased and confined first: nothing below opens a file outside the project
    given = list(settings.path_map)
    confine(report, settings.project_root, [*parse_path_map(cfg.path_map), *given],
            [*settings.overrides.named, *(new for _, new in given)])
    _apply_suppressions(report, on)
    kept: list[Finding] = []
    for f in report.findings:
        if not on(f.rule, f.location.path, f.kernel):
            continue
        if f.rule in cfg.severity:
            f = replace(f, severity=cfg.severity[f.rule])
        kept.append(f)
    report.findings = kept
    if settings.primary_location == "python":
        python_first(report)
    _apply_baseline(report, settings.overrides)


def apply_config(report: Report, cfg: Config, given: Any, host: PluginHost) -> Severity:
    """`apply_settings` for a front end that hands its parsed flags (`pipelint lower`): they
    become `Overrides` in `options.overrides`; returns the fail-on level."""
    settings = Settings.resolve(cfg, _overrides(given), host)
    apply_settings(report, settings, host)
    return settings.fail_on


def fail_on_performance(cfg: Config, given: Any) -> bool:
    """Whether performance findings decide the exit code (`--fail-on-performance`)."""
    flag = _overrides(given).fail_on_performance
    return cfg.fail_on_performance if flag is None else bool(flag)


def _overrides(given: Any) -> Overrides:
    if isinstance(given, Overrides):
        return given
    from .options import override_fields

    return Overrides.from_flags(override_fields(given))


def _apply_suppressions(report: Report, on: Callable[..., bool]) -> None:
    """Drop findings a `pipelint: ignore[RULE]` comment names; report comments that suppress
    nothing.  A comment naming a rule that is not enabled for the file is not "unused": it is
    waiting for the rule to be turned on."""
    by_file: dict[str, dict[int, tuple[set[str], int]]] = {}
    known = {r.path: r.suppressions for r in report.files}   # scanned when the engine read them
    used: set[tuple[str, int, str]] = set()
    kept = []
    for f in report.findings:
        path = f.location.path
        if path not in by_file:
            scanned = known.get(path)
            by_file[path] = _by_line(scanned) if scanned is not None else \
                {} if f.location.outside else inline_suppressions(path)     # never opened: relocate.confine
        hit = _comment_for(f, by_file[path])
        origin = python_origin(f)
        if hit is None and origin is not None and not origin.outside and \
                python_suppressed(origin.path, origin.line, f.rule):
            report.suppressed.append(f)         # `# pipelint: ignore[RULE]` on the TileLang line
            continue
        if hit is not None:
            used.add((path, hit, f.rule))
            report.suppressed.append(f)
        else:
            kept.append(f)
    for r in report.files:
        found = by_file.get(r.path)
        if found is None:
            found = _by_line(r.suppressions) if r.suppressions is not None else inline_suppressions(r.path)
        kept.extend(_unused(r.path, found, used, on))
    report.findings = kept


def _comment_for(f: Finding, sup: dict[int, tuple[set[str], int]]) -> int | None:
    """The line of the comment that suppresses `f`: on its line or the line before, else a
    `// pipelint: ignore-file[RULE]` anywhere (kept under minus its line)."""
    for line in (f.location.line, f.location.line - 1):
        if f.rule in sup.get(line, (set(), 0))[0]:
            return line
    return next((line for line, (rules, _) in sup.items() if line < 0 and f.rule in rules), None)


def _unused(path: str, found: dict[int, tuple[set[str], int]], used: set[tuple[str, int, str]],
            on: Callable[..., bool]) -> list[Finding]:
    """`unused-suppression` findings: comments that name no rule, or a rule that matched nothing."""
    from .core_rules import UNUSED_SUPPRESSION

    out = []
    for line, (rules, col) in found.items():
        at = Location(path, abs(line), col)
        if not rules:
            out.append(Finding(UNUSED_SUPPRESSION.id, UNUSED_SUPPRESSION.severity,
                               "suppression comment names no rule: write `pipelint: ignore[RULE]`",
                               at, plugin="pipelint",
                               help=f"name the rule: `// pipelint: ignore[RULE]` on line {abs(line)}"))
        for rule in sorted(rules):
            if (path, line, rule) not in used and on(rule, path):
                out.append(Finding(UNUSED_SUPPRESSION.id, UNUSED_SUPPRESSION.severity,
                                   f"suppression of {rule} matches no finding", at, plugin="pipelint",
                                   help=f"remove `{rule}` from the comment on line {abs(line)}"))
    return out


def _read_baseline(path: str) -> tuple[set[str], bool]:
    """(fingerprints, whether they include the path) of a baseline file."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read baseline {path}: {exc}") from None
    listed = data.get("fingerprints") if isinstance(data, dict) else None
    if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
        raise UsageError(f"baseline {path} is not a pipelint baseline (expected "
                         f'{{"fingerprints": [...strings]}}; write one with --write-baseline)')
    return set(listed), bool(data.get("paths", False))


def _apply_baseline(report: Report, given: Overrides) -> None:
    """`--baseline`: drop findings recorded in it and count its entries that match nothing any
    more (fixed or changed: `--write-baseline` prunes them).  `--write-baseline`: record the
    current findings (with `--baseline-paths`, fingerprints include the file's path, so the
    same defect in two copies of a kernel is two entries)."""
    from .fingerprint import fingerprint

    if given.baseline:
        known, with_paths = _read_baseline(given.baseline)
        prints = [fingerprint(f, with_paths) for f in report.findings]
        kept = [f for f, p in zip(report.findings, prints) if p not in known]
        report.baselined = len(report.findings) - len(kept)
        report.baseline_stale = len(known - set(prints))
        if not given.write_baseline:
            report.findings = kept
    if given.write_baseline:
        _write_baseline(report, given.write_baseline, given.baseline_paths)


def _write_baseline(report: Report, path: str, with_paths: bool) -> None:
    from .fingerprint import fingerprint

    prints = sorted({fingerprint(f, with_paths) for f in report.findings})
    previous: set[str] = set()
    if os.path.isfile(path):
        try:
            previous = _read_baseline(path)[0]
        except UsageError:
            previous = set()
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"tool": "pipelint", "paths": with_paths, "fingerprints": prints}, fh, indent=2)
            fh.write("\n")
    except OSError as exc:
        raise UsageError(f"cannot write baseline {path}: {exc.strerror or exc}") from None
    report.baseline_written = (len(prints), len(previous - set(prints)))
