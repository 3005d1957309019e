"""Loading plugins and calling their checks one by one.

Built-in checks are registered exactly like third-party ones, through the
entry-point group `pipelint`; if pipelint runs from a source tree without
being installed, the same modules are read from pyproject.toml.  pluggy stops
at the first exception, so checks are called implementation by implementation
and a crash becomes a `ToolError` naming the plugin (flake8 does the same).
What a plugin prints while pipelint calls it (`print` in a hook, a subprocess it
runs) is captured per call and reported as a notification naming the plugin:
stdout may be carrying a JSON or SARIF report.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import io
import os
import re
import sys
import tempfile
import threading
import tomllib
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from importlib.metadata import Distribution, EntryPoint, distributions, entry_points
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .checks import Check
    from .cuda.parser import ParsedFile
    from .model import KernelModel

from . import hookspecs
from .errors import UsageError
from .findings import Finding, Location, Rule, Severity, ToolError
from .report.escape import visible

GROUP = "pipelint"
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def builtin_plugins() -> dict[str, str]:
    """The built-in entry points, read from pyproject.toml: the one place a check is registered.

    Used when pipelint runs from a source tree that is not installed (no
    entry-point metadata); installed, the same names come from the metadata.
    """
    try:
        data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return dict(data.get("project", {}).get("entry-points", {}).get(GROUP, {}))
DISABLE_ENV = "PIPELINT_DISABLE_PLUGINS"
Enabled = frozenset[str] | None      # the rule ids a run selects (None: every rule)




@dataclass
class PluginHost:
    pm: pluggy.PluginManager
    rules: dict[str, Rule] = field(default_factory=dict)
    rule_plugin: dict[str, str] = field(default_factory=dict)
    errors: list[ToolError] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    formats: dict[str, Callable[..., str]] = field(default_factory=dict)
    checks: dict[str, Check] = field(default_factory=dict)     # rule id -> the check that reports it

    def plugin_names(self) -> list[str]:
        return sorted(name for name, _ in self.pm.list_name_plugin())

    def configure(self, tables: dict[str, dict]) -> None:
        """Hand each plugin its `[tool.pipelint.plugins.NAME]` table (`{}` when absent); a plugin
        that rejects its table is a usage error naming it."""
        for impl in self.pm.hook.pipelint_configure.get_hookimpls():
            table = tables.get(impl.plugin_name, {})
            try:
                with self.capturing(impl.plugin_name, " while configuring"):
                    impl.function(config=dict(table))
            except (ValueError, TypeError, KeyError) as exc:
                raise UsageError(f"[tool.pipelint.plugins.{impl.plugin_name}]: {exc}") from None

    @contextlib.contextmanager
    def capturing(self, plugin: str, where: str = "", path: str | None = None,
                  errors: list[ToolError] | None = None) -> Iterator[None]:
        """Run plugin code with its output captured; what it printed becomes a notification in
        `errors` (the host's own when None)."""
        printed: dict[str, str] = {}
        try:
            with captured_output() as printed, refusing_exit():
                yield
        finally:            # also when the plugin crashed after printing
            note = output_note(plugin, printed, where, path)
            if note is not None:
                (self.errors if errors is None else errors).append(note)

    def check_kernel(self, kernel: KernelModel, parsed: ParsedFile, path: str,
                     enabled: Enabled = None) -> tuple[list[Finding], list[ToolError]]:
        """Every selected check of one kernel (`enabled`: the rule ids selected, None: all)."""
        where = f" in kernel {kernel.name}"
        found = self._call("pipelint_check_kernel", dict(kernel=kernel, parsed=parsed, path=path), enabled, where)
        return self._run_checks("kernel", lambda c: c.check(kernel, path), enabled, found, where, path)

    def check_file(self, parsed: ParsedFile, path: str,
                   enabled: Enabled = None) -> tuple[list[Finding], list[ToolError]]:
        return self._call("pipelint_check_file", dict(parsed=parsed, path=path), enabled)

    def check_variants(self, variants: list, enabled: Enabled = None) -> tuple[list[Finding], list[ToolError]]:
        found = self._call("pipelint_check_variants", dict(variants=variants), enabled)
        return self._run_checks("variants", lambda c: c.check(variants), enabled, found)

    def narrowed(self, result: tuple, enabled: frozenset[str]) -> tuple | None:
        """A file's result of every rule, narrowed to what a run of the `enabled` rules gives: the
        findings and errors of the hooks that run (`_wanted`) and of the selected declared checks,
        and pipelint's own.  Exact because a check's output does not depend on which others run;
        None (analyse the file again) where a plugin left a note, which may be a check's not run."""
        file_result, findings, errors = result
        if any(e.plugin not in (None, "pipelint") for e in errors):
            return None         # a plugin's note (it printed) may come from a check not selected: analyse

        def kept(rule: str | None, plugin: str | None) -> bool:
            if rule is not None and rule in self.checks:
                return rule in enabled
            return plugin in (None, "pipelint") or self._wanted(plugin, enabled)

        return (file_result, [f for f in findings if kept(f.rule, f.plugin)],
                [e for e in errors if kept(None, e.plugin)])

    def _wanted(self, plugin: str, enabled: Enabled) -> bool:
        """Whether a plugin's hook runs: it declares a selected rule (or no rule at all)."""
        if enabled is None:
            return True
        declared = [r for r, p in self.rule_plugin.items() if p == plugin]
        return not declared or any(r in enabled for r in declared)

    def _call(self, hook: str, kwargs: dict, enabled: Enabled = None,
              where: str = "") -> tuple[list[Finding], list[ToolError]]:
        findings: list[Finding] = []
        errors: list[ToolError] = []
        for impl in getattr(self.pm.hook, hook).get_hookimpls():
            if self._wanted(impl.plugin_name, enabled):
                call = functools.partial(impl.function, **{a: kwargs[a] for a in impl.argnames})
                self._isolated(impl.plugin_name, call, where, kwargs.get("path"), findings, errors)
        return findings, errors

    def _run_checks(self, scope: str, run: Callable, enabled: Enabled, found: tuple[list[Finding], list[ToolError]],
                    where: str = "", path: str | None = None) -> tuple[list[Finding], list[ToolError]]:
        """The declared checks of `scope` whose rule is selected, each isolated like a hook."""
        findings, errors = found
        for check in self.checks.values():
            if check.scope == scope and (enabled is None or check.id in enabled):
                self._isolated(self.rule_plugin[check.id], functools.partial(run, check), where, path, findings, errors)
        return findings, errors

    def _isolated(self, plugin: str, call: Callable, where: str, path: str | None,
                  findings: list[Finding], errors: list[ToolError]) -> None:
        """Run one plugin call with its output captured; a crash becomes a `ToolError` naming
        the plugin, a malformed finding fails that call only."""
        try:
            with self.capturing(plugin, where, path, errors):
                result = call()
            findings.extend(_checked(f, plugin, self.rules) for f in list(result or ()))
        except (MemoryError, RecursionError):
            raise               # the file's budget, not the plugin's bug: analysis-limit
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - isolation is the point
            errors.append(ToolError(
                f"plugin {plugin!r} crashed{where}: {type(exc).__name__}: {exc}",
                path=path, plugin=plugin, detail="".join(traceback.format_exception(exc))))


EXCERPT = 100        # characters of captured output quoted in the notification (all of it in `detail`)


def output_note(plugin: str, printed: dict[str, str], where: str = "", path: str | None = None) -> ToolError | None:
    """A notification (not an internal error: the exit code stays) for what a plugin printed."""
    streams = [name for name in ("stdout", "stderr") if printed.get(name)]
    if not streams:
        return None
    text = printed[streams[0]]
    excerpt = visible(text[:EXCERPT]) + ("..." if len(text) > EXCERPT else "")
    return ToolError(f"plugin {plugin!r} printed to {' and '.join(streams)}{where} (kept out of the report): "
                     f"{excerpt}", path=path, plugin=plugin, internal=False,
                     detail="".join(f"--- {name} ---\n{printed[name]}" for name in streams))


class ExitRefused(RuntimeError):
    """A plugin called `os._exit`: refused, so that the run still writes its report (issue 38:
    `os._exit(0)` used to leave empty output and exit 0).  An Exception, so each place that
    runs plugin code reports it as that plugin's crash (an internal error, exit 3)."""


_EXIT_GUARD = threading.Lock()      # one patch of os._exit at a time, whatever thread runs plugins
_EXIT_STATE: dict[str, object] = {"depth": 0, "real": os._exit}


@contextlib.contextmanager
def refusing_exit() -> Iterator[None]:
    """While plugin code runs, `os._exit(n)` raises ExitRefused instead of ending the process.
    (Code that kills its process by other means, a signal or a C `exit`, is caught where files
    run in worker processes: the engine reports the dead worker.)"""

    def refuse(code: int) -> None:
        raise ExitRefused(f"called os._exit({code}): refused, the run goes on")

    with _EXIT_GUARD:
        depth = int(_EXIT_STATE["depth"])      # type: ignore[call-overload]
        if depth == 0:
            _EXIT_STATE["real"] = os._exit
            os._exit = refuse  # type: ignore[assignment]
        _EXIT_STATE["depth"] = depth + 1
    try:
        yield
    finally:
        with _EXIT_GUARD:
            depth = int(_EXIT_STATE["depth"]) - 1      # type: ignore[call-overload]
            _EXIT_STATE["depth"] = depth
            if depth == 0:
                os._exit = _EXIT_STATE["real"]  # type: ignore[assignment]


@contextlib.contextmanager
def captured_output() -> Iterator[dict[str, str]]:
    """Capture what the code in the block prints: `sys.stdout` and `sys.stderr` swapped for
    buffers, and in the main thread file descriptor 1 pointed at a private temporary file (a
    subprocess, `os.write(1, ...)`, `sys.__stdout__`).  The dict it yields holds `stdout` and
    `stderr` once the block is left."""
    printed: dict[str, str] = {}
    out, err = io.StringIO(), io.StringIO()
    saved = [sys.stdout, sys.stderr, _divert_fd1()]
    sys.stdout, sys.stderr = out, err
    try:
        yield printed
    finally:
        raw = _restore(saved)
        printed.update(stdout=out.getvalue() + raw, stderr=err.getvalue())


_SPOOL: list = []            # the process's capture file for descriptor 1, made on first use


def _divert_fd1() -> int | None:
    """Point descriptor 1 at the capture file; the saved descriptor, or None where that is not
    done (another thread: the main one may be writing its own output meanwhile)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        for stream in (sys.stdout, sys.__stdout__):
            if stream is not None:
                stream.flush()      # what pipelint wrote before stays its own
        if not _SPOOL:
            _SPOOL.append(tempfile.TemporaryFile())  # noqa: SIM115 - open for the process's life
        saved = os.dup(1)
    except (OSError, ValueError):   # no descriptor 1, a closed stream
        return None
    os.dup2(_SPOOL[0].fileno(), 1)
    return saved


def _restore(saved: list) -> str:
    """Put the streams back and return what reached descriptor 1.  An alarm (the time budget)
    arriving meanwhile is held until the streams are back: a report written into the capture
    file afterwards would be lost."""
    pending: BaseException | None = None
    raw = ""
    for _ in range(8):
        try:
            raw += _restore_once(saved)
            break
        except Exception:
            raise
        except BaseException as exc:   # noqa: BLE001 - an alarm or ^C: finish, then re-raise
            pending = exc
    if pending is not None:
        raise pending
    return raw


def _restore_once(saved: list) -> str:
    """One attempt; each step done is recorded in `saved`, so a retry does only what is left."""
    sys.stdout, sys.stderr = saved[0], saved[1]
    fd = saved[2]
    if fd is None:
        return ""
    with contextlib.suppress(OSError, ValueError):
        if sys.__stdout__ is not None:
            sys.__stdout__.flush()      # a plugin's write past the swap, still in Python's buffer
    os.dup2(fd, 1)
    saved[2] = None
    spool = _SPOOL[0].fileno()
    size = os.lseek(spool, 0, os.SEEK_END)
    os.lseek(spool, 0, os.SEEK_SET)
    data = os.read(spool, size) if size else b""
    os.ftruncate(spool, 0)
    os.lseek(spool, 0, os.SEEK_SET)
    os.close(fd)
    return data.decode("utf-8", "replace")


class MalformedFinding(Exception):
    """A plugin returned something that is not a `Finding` of a declared rule."""


def _checked(f: object, plugin: str, rules: dict[str, Rule]) -> Finding:
    """The plugin's finding, stamped with its name; anything malformed fails that plugin only."""
    if not isinstance(f, Finding):
        raise MalformedFinding(f"returned {type(f).__name__} {f!r:.80}, not a pipelint Finding")
    if not isinstance(f.location, Location) or not isinstance(f.severity, Severity):
        raise MalformedFinding(f"returned a Finding without a Location and Severity: {f!r:.120}")
    if f.rule not in rules:
        raise MalformedFinding(f"reported rule {f.rule!r}, which no plugin declares in pipelint_rules")
    return _stamp(f, plugin, rules[f.rule])


def _stamp(f: Finding, plugin: str, rule: Rule) -> Finding:
    """The plugin's name, and the rule's general fix where the check gave no specific one."""
    if f.plugin and f.help:
        return f
    return replace(f, plugin=f.plugin or plugin, help=f.help or rule.help)


def _disabled(extra: Iterable[str]) -> set[str]:
    names = {n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()}
    return names | set(extra)


def installed_entry_points(notes: list[ToolError] | None = None) -> list[EntryPoint]:
    """The `pipelint` entry points of installed distributions, by name, without those whose
    distribution lies in the current folder (a note for each in `notes`).

    Entry points are scanned over `sys.path`; pipelint runs from inside the repository it
    checks, and a `*.dist-info/entry_points.txt` committed there would otherwise be loaded as
    a plugin whenever the current folder is on the path (an embedding program's `sys.path`,
    `PYTHONPATH=.`).  A distribution of the running environment (`sys.prefix`, the user's
    site-packages) is installed even where that environment is a `.venv` inside the project."""
    found: list[EntryPoint] = []
    refused: list[tuple[EntryPoint, str]] = []
    for ep in entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        where = None if dist is None else _checked_tree_location(dist)
        if where is None:
            found.append(ep)
        else:
            refused.append((ep, where))
    if refused:
        found += _hidden_installs({_dist_name(ep.dist) for ep, _ in refused})
    found = sorted({ep.name: ep for ep in reversed(found)}.values(), key=lambda e: e.name)
    names = {ep.name for ep in found}
    for ep, where in refused:
        # the same plugin installed too (a source checkout's own egg-info on the path): no news
        if notes is not None and ep.name not in names:
            notes.append(ToolError(f"plugin {ep.name!r} not loaded: its distribution lies in the current "
                                   f"folder ({visible(where)}), not in an installed environment; "
                                   f"install it (`pip install`) to use it", plugin=ep.name, internal=False))
    return found


def _version(ep: EntryPoint) -> str:
    """The version of an entry point's distribution; pipelint's own built-in plugins carry
    pipelint's `__version__` without parsing its METADATA (an email-format parse per plugin, and
    the `email` package's import, were a tenth of a one-file check's start-up)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ""
    if _dist_name(dist) == "pipelint":
        from . import __version__

        return __version__
    return dist.version


def _dist_name(dist: Distribution | None) -> str:
    """The distribution's normalised name (PEP 503), read from its folder's name where it has one
    (`foo_bar-1.0.dist-info`, `foo_bar.egg-info`): parsing every installed METADATA file
    would cost a one-file check a fifth of a second."""
    if dist is None:
        return ""
    name = getattr(dist, "_normalized_name", None)   # importlib.metadata: the folder's stem, no parsing
    if not isinstance(name, str) or not name:
        name = dist.metadata["Name"] or ""
    return re.sub(r"[-_.]+", "-", name).lower()


def _hidden_installs(names: set[str]) -> list[EntryPoint]:
    """Entry points of installed distributions named `names`: `entry_points()` keeps only the
    first distribution of a name on the path, so a copy in the current folder (a checkout's
    own `*.egg-info`) hides the installed one."""
    return [ep for dist in distributions() if _dist_name(dist) in names and _checked_tree_location(dist) is None
            for ep in dist.entry_points.select(group=GROUP)]


def _checked_tree_location(dist: Distribution) -> str | None:
    """Where `dist` lies when that is inside the current folder and outside the running
    environment, else None (its plugins may be loaded)."""
    try:
        location = os.path.realpath(str(dist.locate_file("")))
        here = os.path.realpath(os.getcwd())
    except (OSError, ValueError):
        return None
    if not _within(location, here):
        return None
    import site

    environment = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    with contextlib.suppress(AttributeError, OSError):
        environment.add(site.getusersitepackages())
    if any(_within(location, os.path.realpath(root)) for root in environment if root):
        return None
    return location


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def load_plugins(disable: Iterable[str] = (), extra_modules: Iterable[object] = ()) -> PluginHost:
    """Register built-in and installed plugins; check rule ids are unique."""
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    host = PluginHost(pm)
    off = _disabled(disable)
    seen_modules: set[str] = set()
    for ep in installed_entry_points(host.errors):
        if ep.name in off or ep.name in seen_modules:
            continue
        try:
            with host.capturing(ep.name, " while loading"):
                module = ep.load()
        except Exception as exc:  # noqa: BLE001
            host.errors.append(ToolError(f"plugin {ep.name!r} failed to load: {type(exc).__name__}: {exc}",
                                         plugin=ep.name))
            continue
        seen_modules.add(ep.name)
        _register(host, module, ep.name, _version(ep))
    for name, modname in builtin_plugins().items():
        if name in off or name in seen_modules:
            continue
        try:
            module = importlib.import_module(modname)
        except ImportError:
            continue
        from . import __version__
        _register(host, module, name, __version__)
    for module in extra_modules:
        _register(host, module, getattr(module, "__name__", repr(module)), "")
    from .report import builtin as builtin_formats

    _register(host, builtin_formats, "pipelint-formats", "")
    pm.check_pending()
    from .core_rules import CORE_RULES

    for rule in CORE_RULES:
        host.rules[rule.id] = rule
        host.rule_plugin[rule.id] = "pipelint"
    _collect_rules(host)
    _collect_checks(host)
    _collect_formats(host)
    return host


def _collect_formats(host: PluginHost) -> None:
    """Output formats by name, built-in first; a plugin may not replace another's format."""
    impls = sorted(host.pm.hook.pipelint_output_formats.get_hookimpls(),
                   key=lambda i: i.plugin_name != "pipelint-formats")
    owner: dict[str, str] = {}
    for impl in impls:
        try:
            with host.capturing(impl.plugin_name, " while declaring output formats"):
                formats: dict[str, Callable[..., str]] = dict(impl.function() or {})  # type: ignore[call-overload]
        except Exception as exc:  # noqa: BLE001
            host.errors.append(ToolError(f"plugin {impl.plugin_name!r} failed to declare output formats: {exc}",
                                         plugin=impl.plugin_name))
            continue
        for name, render in formats.items():
            if name in owner:
                raise UsageError(f"output format {name!r} is declared by both {owner[name]!r} and "
                                 f"{impl.plugin_name!r}")
            if not callable(render):
                host.errors.append(ToolError(f"plugin {impl.plugin_name!r} declares output format {name!r} "
                                             f"that is not callable", plugin=impl.plugin_name))
                continue
            owner[name] = impl.plugin_name
            host.formats[name] = render


def _register(host: PluginHost, module: object, name: str, version: str) -> None:
    if host.pm.get_plugin(name) is None and not host.pm.is_registered(module):
        host.pm.register(module, name=name)
        host.versions[name] = version


def _collect_rules(host: PluginHost) -> None:
    for impl in host.pm.hook.pipelint_rules.get_hookimpls():
        try:
            with host.capturing(impl.plugin_name, " while declaring rules"):
                rules: list[Rule] = list(impl.function() or ())  # type: ignore[call-overload]
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            host.errors.append(ToolError(f"plugin {impl.plugin_name!r} failed to declare rules: {exc}",
                                         plugin=impl.plugin_name))
            continue
        bad = [r for r in rules if not isinstance(r, Rule)]
        if bad:
            host.errors.append(ToolError(f"plugin {impl.plugin_name!r} declares {type(bad[0]).__name__} "
                                         f"{bad[0]!r:.80} in pipelint_rules, not a pipelint Rule",
                                         plugin=impl.plugin_name))
            rules = [r for r in rules if isinstance(r, Rule)]
        for rule in rules:
            other = host.rule_plugin.get(rule.id)
            if other is not None:
                raise UsageError(f"rule id {rule.id!r} is declared by both plugin {other!r} and "
                                 f"plugin {impl.plugin_name!r}")
            host.rules[rule.id] = rule
            host.rule_plugin[rule.id] = impl.plugin_name


def _collect_checks(host: PluginHost) -> None:
    """Each plugin's `pipelint_checks`: the check of each rule, and its rule declared (unless the
    plugin's `pipelint_rules` declares it too)."""
    from .checks import Check

    for impl in host.pm.hook.pipelint_checks.get_hookimpls():
        plugin = impl.plugin_name
        try:
            with host.capturing(plugin, " while declaring checks"):
                checks = list(impl.function() or ())  # type: ignore[call-overload]
        except (Exception, SystemExit) as exc:  # noqa: BLE001
            host.errors.append(ToolError(f"plugin {plugin!r} failed to declare checks: {exc}", plugin=plugin))
            continue
        for check in checks:
            rule = getattr(check, "rule", None)
            if not isinstance(check, Check) or not isinstance(rule, Rule):
                host.errors.append(ToolError(f"plugin {plugin!r} declares {type(check).__name__} {check!r:.80} "
                                             f"in pipelint_checks, not a pipelint Check with a Rule", plugin=plugin))
                continue
            _declare_check(host, plugin, check, rule)


def _declare_check(host: PluginHost, plugin: str, check: Check, rule: Rule) -> None:
    other = host.rule_plugin.get(rule.id)
    if other is not None and (other != plugin or rule.id in host.checks):
        raise UsageError(f"rule id {rule.id!r} is declared by both plugin {other!r} and plugin {plugin!r}")
    host.rules[rule.id] = rule
    host.rule_plugin[rule.id] = plugin
    host.checks[rule.id] = check


def get_rule(host: PluginHost, rule_id: str) -> Rule | None:
    return host.rules.get(rule_id)
