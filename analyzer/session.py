"""The run layer: one way to run a check, below every front end.

A `Session` holds the loaded plugins and the resolved `Settings` of one run.  It checks files,
a text (stdin, an editor's buffer, a kernel TileLang just generated) or the lowered variants of
a kernel, and returns the finished `Report`: configuration applied (selection, per-file and
inline suppressions, severities, `#line` paths confined to the project, the baseline).  `check`,
`lower`, `explain`, `diff`, the language server, `check --watch` and the TileLang hook all run
through it; only the checks of selected rules run, so a run that selects one rule computes
only the analyses that rule needs.
"""
from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .findings import FileResult, Finding, Report
from .report.escape import visible
from .settings import Overrides, Settings

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .cache import ResultCache
    from .config import Config
    from .discovery import Discovery
    from .engine import CheckOptions
    from .lowering.sweep import LoweredVariant
    from .model import KernelModel
    from .pluginhost import PluginHost


@dataclass
class Session:
    """The plugins and settings of one run, and the operations every front end shares."""

    host: PluginHost
    settings: Settings
    _options: CheckOptions | None = field(default=None, repr=False)

    @classmethod
    def open(cls, host: PluginHost, paths: Sequence[str] = (), config_file: str | None = None,
             overrides: Overrides | None = None, config: Config | None = None) -> Session:
        """A session for checking `paths` (the first finds find the pyproject.toml whose `[tool.pipelint]`
        applies, unless `config_file` names one or `config` is given)."""
        from .config import load_config

        if config is None:
            config = load_config(list(paths), config_file, host)
        return cls(host, Settings.resolve(config, overrides or Overrides(), host))

    @classmethod
    def bare(cls, host: PluginHost) -> Session:
        """A session with the defaults, reading no configuration (explain, diff)."""
        from .config import Config

        return cls(host, Settings.resolve(Config(), Overrides(), host))

    @property
    def config(self) -> Config:
        return self.settings.config

    @property
    def enabled(self) -> frozenset[str] | None:
        """The rule ids whose checks run (None: every rule)."""
        chosen = self.settings.enabled(self.host.rules)
        return None if chosen == frozenset(self.host.rules) else chosen

    # ---------------------------------------------------------------- what a run takes
    def discovery(self) -> Discovery:
        """Which files a walk takes: overrides over configuration over defaults."""
        from .discovery import DEFAULT_EXCLUDES, Discovery
        from .options import first
        from .selection import split_words

        o, config = self.settings.overrides, self.config
        exclude = tuple(split_words(o.exclude)) if o.exclude else (
            config.exclude if config.exclude is not None else DEFAULT_EXCLUDES)
        return Discovery(root=config.root, exclude=exclude,
                         extend_exclude=tuple(config.extend_exclude) + tuple(split_words(o.extend_exclude)),
                         respect_gitignore=first(o.respect_gitignore, config.respect_gitignore),
                         force_exclude=first(o.force_exclude, config.force_exclude))

    def files(self, paths: Sequence[str]) -> list[str]:
        """The .cu/.cuh files under `paths` (notes on stderr); a usage error when there are none
        (unless exclusions apply to named paths: pre-commit may name only excluded files)."""
        from .discovery import collect_files

        found = self.discovery()
        files, notes = collect_files(list(paths), found)
        for note in notes:
            print(f"pipelint: {visible(note)}", file=sys.stderr)
        if not files and not found.force_exclude:
            raise UsageError("nothing to check: no .cu or .cuh files in the given paths")
        return files

    def options(self) -> CheckOptions:
        """The bounds and workers of a check (resolved once; a configuration that would loosen a
        bound is ignored, with a warning); the plugins get their configuration tables."""
        if self._options is None:
            self.host.configure(self.config.plugins)
            self._options = _check_options(self.settings, self.enabled)
        return self._options

    # ---------------------------------------------------------------- checking
    def check_files(self, files: Iterable[str], progress: Any = None, cache: bool = True) -> Report:
        """Check files (each once, in path order, unchanged ones from the result cache)."""
        from .engine import run_check

        options = self.options()
        report = run_check(files, self.host, options, cache=self.cache(options) if cache else None,
                           progress=progress)
        return self.finish(report)

    def check_bytes(self, name: str, data: bytes) -> Report:
        """One kernel read from stdin (at most max-file-size + 1 bytes of it), reported as `name`."""
        from .engine import decode_source

        options = self.options()
        source, problem = decode_source(name, data, options.max_bytes)
        if problem is not None:
            return self.finish(Report(files=[FileResult(name, False, error=problem.message, suppressions=())],
                                      findings=[problem], errors=list(self.host.errors), rules=dict(self.host.rules)))
        return self.check_text(name, source or "")

    def check_text(self, name: str, text: str, suppressions: bool = True) -> Report:
        """One kernel's text, checked within the time and memory budgets; its `// pipelint:
        ignore` comments apply unless `suppressions` is false (a text with no file behind it)."""
        from .engine import check_text, dedupe

        options = self.options()
        result, findings, errors = check_text(name, text, self.host, options.time_budget, options.memory_budget,
                                              options.enabled)
        if not suppressions:
            result = replace(result, suppressions=())
        return self.finish(Report(files=[result], findings=dedupe(findings), errors=[*self.host.errors, *errors],
                                  rules=dict(self.host.rules)))

    def analyze_text(self, name: str, text: str) -> tuple[FileResult, list, list, list[KernelModel]]:
        """The unfinished analysis of one text, without the budgets (a caller that runs it in its
        own process, or inside the user's program): its result, findings, errors and models."""
        from .engine import analyze_source

        return analyze_source(name, text, self.host, self.enabled)

    def lint_text(self, name: str, text: str) -> Report:
        """A generated kernel with no file behind it (the TileLang hook): analysed without the
        budgets, no `// pipelint: ignore` comments read, the configuration applied."""
        return self.lint_text_models(name, text)[0]

    def lint_text_models(self, name: str, text: str) -> tuple[Report, list[KernelModel]]:
        """`lint_text`'s report and the kernel models it was found on (the hook's `checked`)."""
        result, findings, errors, models = self.analyze_text(name, text)
        report = Report(rules=dict(self.host.rules), errors=list(errors), findings=findings)
        report.files.append(FileResult(result.path, result.parsed, result.kernels, result.error, suppressions=()))
        return self.finish(report), models

    def check_variants(self, kernel: str, variants: list, dump: Path, report: Report,
                       keep_paths: bool = True) -> list[LoweredVariant]:
        """Write each lowered variant's CUDA and facts under `dump`, check it, then run the sweep
        checks over the variants together; findings and errors go into `report` (unfinished)."""
        return analyze_variants(kernel, variants, self.host, dump, report, keep_paths, enabled=self.enabled)

    def models(self, path: str) -> list[KernelModel]:
        """The kernel models of one .cu file (explain, diff): a usage error when it cannot be read,
        parsed, or holds no kernel."""
        from .explain import load_models

        return load_models(path)

    # ---------------------------------------------------------------- the finished report
    def finish(self, report: Report) -> Report:
        """The configuration applied to a report, in place (and returned)."""
        from .config import apply_settings

        apply_settings(report, self.settings, self.host)
        return report

    def exit_code(self, report: Report) -> int:
        """0, 1 (findings at or above the fail level that count) or 3 (an internal error)."""
        return report.exit_code(self.settings.fail_on, self.settings.fail_on_performance)

    def cache(self, options: CheckOptions) -> ResultCache | None:
        """The result cache for this run, or None (`--no-cache`, `cache = false`, no usable folder)."""
        if self.settings.overrides.no_cache or self.config.cache is False:
            return None
        import importlib

        from . import cache, cachedir

        root = cachedir.usable(cachedir.choose(self.settings.overrides.cache_dir, self.config.cache_dir,
                                               self.config.path))
        if root is None:
            return None
        modules = [sys.modules[__package__ or "pipelint"], importlib.import_module("pipelint.grammars"),
                   *self.host.pm.get_plugins()]
        key: tuple = (options.max_bytes, tuple(sorted(options.disable)), options.plugin_config)
        try:
            wider = None
            if options.enabled is not None:         # a result of some rules only is not one of all
                full = cache.ResultCache(root, cache.salt_for(modules, self.host.versions, key))
                wider = (full, functools.partial(self.host.narrowed, enabled=options.enabled))
                key += (tuple(sorted(options.enabled)),)
            return cache.ResultCache(root, cache.salt_for(modules, self.host.versions, key), wider=wider)
        except cachedir.CacheRefused as exc:
            cachedir.warn(str(exc))
            return None


def _bound(settings: Settings, key: str) -> float:
    """One bound: the override, else the configuration's where it tightens the default, else
    the default.  A configuration that would loosen it (`time-budget = 0`, a `max-file-size`
    over 16 MB) is the checked repository deciding how much work its own input may cost:
    ignored, with a warning."""
    from . import limits

    bound = next(b for b in limits.BOUNDS if b.key == key)
    attr = key.replace("-", "_")
    given = getattr(settings.overrides, attr)
    if given is not None:
        return float(given)
    config = settings.config
    value, warning = limits.from_config(bound, getattr(config, attr), f"{config.path} [tool.pipelint]")
    if warning:
        print(f"pipelint: warning: {visible(warning)}", file=sys.stderr)
    return bound.default if value is None else value


def _check_options(settings: Settings, enabled: frozenset[str] | None) -> CheckOptions:
    from .config import positive
    from .engine import CheckOptions
    from .limits import set_read_limit
    from .options import first

    o, config = settings.overrides, settings.config
    size = positive(_bound(settings, "max-file-size"), "--max-file-size")
    budget = positive(_bound(settings, "time-budget"), "--time-budget", zero=True)
    jobs = int(positive(first(o.jobs, config.jobs, 0), "--jobs", integer=True, zero=True))
    memory = positive(_bound(settings, "memory-budget"), "--memory-budget", zero=True)
    tables = tuple(sorted((name, json.dumps(table, sort_keys=True, default=str))
                          for name, table in config.plugins.items()))
    set_read_limit(int(size * 1024 * 1024))        # the reporters' reads obey the same limit
    return CheckOptions(max_bytes=int(size * 1024 * 1024), jobs=jobs, disable=tuple(o.disable),
                        time_budget=budget, memory_budget=memory, plugin_config=tables, enabled=enabled)


def analyze_variants(kernel: str, variants: list, host: PluginHost, dump: Path, report: Report,
                     keep_paths: bool = True, enabled: frozenset[str] | None = None) -> list[LoweredVariant]:
    """Write each variant's CUDA and facts, check it, then run the sweep checks (only the
    checks of `enabled` rules; None: all)."""
    from .engine import analyze_source
    from .lowering.driver import variant_filename
    from .lowering.sweep import LoweredVariant

    lowered: list[LoweredVariant] = []
    dump.mkdir(parents=True, exist_ok=True)
    for v in variants:
        lv = LoweredVariant(kernel, v.arch, v.num_stages, v.ok, v.error, v.result,
                            error_kind=v.error_kind, cached=v.cached, seconds=round(v.seconds, 2))
        if v.ok:
            path = dump / variant_filename(kernel, v)
            path.write_text(v.result["cuda"])
            facts = {k: val for k, val in v.result.items() if k != "cuda"}
            path.with_suffix(".json").write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
            lv.path = str(path) if keep_paths else path.name
            lv.dumped = keep_paths
            result, findings, errors, models = analyze_source(str(path), v.result["cuda"], host, enabled)
            lv.model = models[0] if models else None
            lv.findings = _refined(host, lv, [_rename(f, lv.path) for f in findings])
            report.files.append(result)
            report.errors.extend(errors)
        lowered.append(lv)
    sweep_findings, errors = host.check_variants(lowered, enabled)
    report.errors.extend(errors)
    for f in sweep_findings:
        owner = next((lv for lv in lowered if f.location.path in (lv.path, lv.filename)), None)
        (owner.findings if owner else report.findings).append(f)
    for lv in lowered:
        report.findings.extend(lv.findings)
    return lowered


def _refined(host: PluginHost, lv: LoweredVariant, findings: list) -> list:
    """Each finding as its check refines it with the lowering's facts (`Check.refine`); a check
    that fails to refine keeps its finding."""
    out = []
    for f in findings:
        check = host.checks.get(f.rule)
        refined: Finding | None = f
        try:
            refined = check.refine(f, lv) if check is not None else f
        except Exception:  # noqa: BLE001 - the finding as the kernel check gave it
            refined = f
        if refined is not None:
            out.append(refined)
    return out


def _rename(f, path):
    from dataclasses import replace

    return replace(f, location=replace(f.location, path=path)) if f.location.path != path else f


