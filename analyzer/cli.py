"""The `pipelint` command line.

Exit codes: 0 nothing at or above the fail level, 1 findings, 2 usage error,
3 internal error (a crashed plugin, an unexpected exception).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__, options
from .commands.flags import flag_type
from .errors import UsageError
from .findings import Report
from .options import Parser, add_command, add_output_options, did_you_mean, first, project_root
from .pluginhost import PluginHost, load_plugins
from .report.escape import visible

__all__ = ["add_command", "add_output_options", "build_parser", "first", "main"]


# Shared with the command modules (and plugins that add commands: `from pipelint.cli import add_command`).
_Parser = Parser
FORMATS = options.FORMATS


def build_parser(host: PluginHost | None = None) -> argparse.ArgumentParser:
    """The whole command line: the core subcommands, those of `commands/`, then the plugins'."""
    if host is not None and host.formats:
        options.set_formats(host.formats)
    parser = Parser(prog="pipelint", description="Static analyzer for software pipelines in "
                    "TileLang-generated CUDA.")
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="print pipelint's version and the installed plugins, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for add in (_add_check, _add_rules, _add_explain, _add_plugins, _add_clean):
        add(sub)
    from .commands import diff, lower

    lower.add_parser(sub)
    diff.add_parser(sub)
    from .commands.server import add_parsers as add_editor_commands

    add_editor_commands(sub)        # `server`, and `--watch` on `check` (analyzer/lsp/)
    if host is not None:
        for impl in reversed(host.pm.hook.pipelint_add_commands.get_hookimpls()):   # pluggy's order
            with host.capturing(impl.plugin_name, " while adding commands"):     # stdout may carry a report
                impl.function(subparsers=sub)
    return parser


def _add_check(sub: argparse._SubParsersAction) -> None:
    check = add_command(sub, "check", "lint .cu/.cuh files and folders",
                        "Parse each kernel, model its software pipeline (shared-memory versions, cp.async groups, "
                        "barriers, mbarriers) and report hazards and lost overlap. Settings come from "
                        "[tool.pipelint] in the nearest pyproject.toml; flags override them. Exit code 1 "
                        "only for correctness findings at or above --fail-on (performance findings "
                        "too with --fail-on-performance).",
                        ["pipelint check lowered/",
                         "pipelint check k.cu --format sarif -o pipelint.sarif",
                         "pipelint check . --select barriers,wait-group --ignore redundant-barrier",
                         "pipelint check . --baseline .pipelint-baseline.json",
                         "cat k.cu | pipelint check - --stdin-filename lowered/k.cu",
                         "pipelint check . --show-files"])
    check.add_argument("paths", nargs="+", metavar="PATH",
                       help="files or folders (folders are walked for .cu/.cuh); `-` reads one kernel from stdin")
    add_output_options(check)
    check.add_argument("--verbose", "-v", action="store_true",
                       help="say on stderr which configuration is used and how long each file took")
    check.add_argument("--stdin-filename", default=None, metavar="PATH",
                       help="with `-`: the path the kernel from stdin is reported as (and configured by)")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings this run would use (configuration file, rules, exclusions) and exit")
    check.add_argument("--show-files", action="store_true", help="print the files this run would check and exit")
    # the schema's ranges (issue 38): `--time-budget 1e308` is a usage error, not an OverflowError
    check.add_argument("--jobs", "-j", type=flag_type("jobs", integer=True), default=None,
                       help="worker processes (0: auto; capped at the cores)")
    check.add_argument("--max-file-size", type=flag_type("max-file-size"), default=None, metavar="MB",
                       help="skip files larger than this (default 16 MB)")
    check.add_argument("--time-budget", type=flag_type("time-budget"), default=None, metavar="SECONDS",
                       help="stop analysing a file after this long and report analysis-limit "
                            "(default 20 s; 0: no limit)")
    check.add_argument("--memory-budget", type=flag_type("memory-budget"), default=None, metavar="MB",
                       help="memory one file's analysis may add before it is stopped (default 2048 MB; 0: none)")
    check.add_argument("--exclude", action="append", default=None, metavar="PATTERNS",
                       help="gitignore-style patterns of paths a walk skips, replacing the defaults and the "
                            "configuration's `exclude` (repeatable, comma-separated)")
    check.add_argument("--extend-exclude", action="append", default=None, metavar="PATTERNS",
                       help="patterns to skip on top of the defaults (repeatable, comma-separated)")
    check.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                       help="apply exclusions and .gitignore to paths named on the command line too "
                            "(for pre-commit, which names every staged file)")
    check.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip files that git ignores (default: yes)")
    _cache_options(check)
    check.set_defaults(func=cmd_check)


def _cache_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="analyse every file afresh; neither read nor write the result cache")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="where results of unchanged files are kept (default: $PIPELINT_CACHE_DIR, "
                        "else the platform's user cache folder)")


def _add_rules(sub: argparse._SubParsersAction) -> None:
    rules = add_command(sub, "rules", "list every rule with its plugin, default severity and category",
                        "Every rule of every loaded plugin: the ids select, ignore and suppressions use. "
                        "Rules of the performance category do not make the exit code non-zero unless "
                        "--fail-on-performance.",
                        ["pipelint rules", "pipelint rules --format json"])
    rules.add_argument("--format", choices=("text", "json"), default="text", help="text table or JSON list")
    rules.set_defaults(func=cmd_rules)
    rule = add_command(sub, "rule", "print the documentation of one rule",
                       "A rule's page: what it finds, why it matters for the pipeline, an example and the fix.",
                       ["pipelint rule wait-too-shallow"])
    rule.add_argument("rule_id", help="a rule id (see `pipelint rules`)")
    rule.set_defaults(func=cmd_rule)


def _add_explain(sub: argparse._SubParsersAction) -> None:
    explain = add_command(sub, "explain", "print what the pipeline in each kernel became",
                          "The facts the checks reason with: buffers and their versions, which warp role "
                          "produces and which consumes each, pipelined loops, what each __syncthreads orders, "
                          "how deep each wait may be, the mbarriers.",
                          ["pipelint explain lowered/gemm_sm_80_s3.cu",
                           "pipelint explain k.cu --format json"])
    explain.add_argument("paths", nargs="+", metavar="FILE.cu", help="generated CUDA files")
    explain.add_argument("--format", choices=("text", "json"), default="text", help="text or JSON")
    explain.set_defaults(func=_explain)


def _explain(args: argparse.Namespace, host: PluginHost) -> int:
    from .explain import explain_json, explain_text
    from .session import Session

    session = Session.bare(host)        # explain reads no configuration
    if args.format == "json":
        print(explain_json(args.paths, session.models))
        return 0
    for block in explain_text(args.paths, session.models):
        print(block)
    return 0


def _add_plugins(sub: argparse._SubParsersAction) -> None:
    plugins = add_command(sub, "plugins", "list loaded plugins with versions",
                          "Each loaded plugin, its version and the rules it declares; load failures are "
                          "printed and make the exit code 3.", ["pipelint plugins"])
    plugins.set_defaults(func=cmd_plugins)


def _add_clean(sub: argparse._SubParsersAction) -> None:
    clean = add_command(sub, "clean", "remove pipelint's caches (check results and lowered variants)",
                        "Deletes the result cache and the lowering cache under the cache folder "
                        "(--cache-dir, $PIPELINT_CACHE_DIR, `cache-dir`, else the platform's user cache "
                        "folder). Only a folder carrying pipelint's CACHEDIR.TAG is cleaned, and in it only "
                        "files named like pipelint's entries; links are never followed.",
                        ["pipelint clean", "pipelint clean --dry-run", "pipelint clean --cache-dir .pipelint-cache"])
    clean.add_argument("--cache-dir", default=None, metavar="DIR", help="the cache folder to clean")
    clean.add_argument("--config", default=None, metavar="FILE", help="pyproject.toml to read cache-dir from")
    clean.add_argument("--dry-run", action="store_true", help="list the files that would be removed; remove nothing")
    clean.set_defaults(func=cmd_clean)


def _colour(args, stream) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):       # CI logs (GitHub Actions) are not terminals but show colour
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def emit(args: argparse.Namespace, report: Report, host: PluginHost, root: Path | None = None) -> None:
    from .report import get_reporter

    out_stream = sys.stdout
    colour = not args.output and _colour(args, out_stream)
    where = str(root or project_root(args))
    text = get_reporter(args.format, host)(report, colour=colour, statistics=args.statistics,
                                           quiet=getattr(args, "quiet", False),
                                           host=host, category=args.sarif_category, root=where)
    if args.output:
        write_or_keep(args.output, text, "-o")
    else:
        out_stream.write(text)
    if args.sarif_output:
        sarif = get_reporter("sarif", host)(report, host=host, category=args.sarif_category, root=where)
        write_or_keep(args.sarif_output, sarif, "--sarif-output")


def write_or_keep(path: str, text: str, option: str) -> None:
    """Write a report; if the path cannot be written, keep the finished analysis (in a temporary
    file, named in the message) and make it a usage error."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        import tempfile

        fd, kept = tempfile.mkstemp(prefix="pipelint-report-", suffix=Path(path).suffix or ".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        raise UsageError(f"cannot write {option} {path}: {exc.strerror or exc}; the report was kept "
                         f"in {kept}") from None


STDIN = "-"


def cmd_check(args: argparse.Namespace, host: PluginHost) -> int:
    from .session import Session
    from .settings import Overrides

    stdin = _stdin_paths(args)
    named = [args.stdin_filename] if stdin and args.stdin_filename else args.paths if not stdin else []
    session = Session.open(host, named, args.config, Overrides.from_flags(options.override_fields(args)))
    if args.verbose:
        print(f"pipelint: configuration: {visible(str(session.config.path or '(none: defaults)'))}",
              file=sys.stderr)
    if args.show_settings:
        from .settings import show_settings

        print(show_settings(session.settings, host, session.discovery()))
        return 0
    report = _check_stdin(args, session) if stdin else _check_files(args, session)
    if report is None:
        return 0            # --show-files, or pre-commit named only excluded files
    emit(args, report, host, session.settings.project_root)
    _baseline_notes(args, report)
    if args.exit_zero or args.write_baseline:
        return 3 if any(e.internal for e in report.errors) else 0
    code = session.exit_code(report)
    _performance_note(args, report, session.settings.fail_on, session.settings.fail_on_performance, code)
    return code


def _stdin_paths(args: argparse.Namespace) -> bool:
    """Whether the kernel comes from stdin (`-`); usage errors for `-` mixed with paths and for
    `--stdin-filename` without it."""
    stdin = STDIN in args.paths
    if stdin and args.paths != [STDIN]:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    if args.stdin_filename and not stdin:
        raise UsageError("--stdin-filename needs `-` as the path")
    return stdin


def _check_files(args: argparse.Namespace, session: Any) -> Report | None:
    from .progress import Progress

    files = session.files(args.paths)
    if args.show_files:
        print("\n".join(visible(f) for f in sorted(dict.fromkeys(files))))     # in run_check's order
        return None
    if not files:
        return None
    session.options()
    with Progress("checking", len(files), quiet=args.quiet) as progress:
        return session.check_files(files, progress=_Timed(progress) if args.verbose else progress)


class _Timed:
    """`-v`: a progress that also prints how long each file took (from the cache: 0 s).  With
    worker processes, the time is between results arriving, in path order."""

    def __init__(self, progress: Any) -> None:
        import time

        self._progress, self._clock = progress, time.perf_counter
        self._last = self._clock()

    def advance(self, n: int = 1, label: str = "") -> None:
        now = self._clock()
        if n == 1 and label != "from the cache":
            print(f"pipelint: {visible(label)}: {now - self._last:.3f} s", file=sys.stderr)
        elif n:
            print(f"pipelint: {n} file(s) from the cache", file=sys.stderr)
        self._last = now
        self._progress.advance(n, label)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._progress, name)


def _check_stdin(args: argparse.Namespace, session: Any) -> Report:
    """`pipelint check - --stdin-filename lowered/k.cu`: one kernel read from stdin, reported as
    (and configured by) the name given; nothing is read from disk or cached.  The same bounds
    as a file: at most `--max-file-size` + 1 bytes are read (`- < /dev/zero` ends at once with
    a finding), and the analysis runs within the time and memory budgets."""
    import time

    name = args.stdin_filename or "<stdin>"
    data = _read_stdin(session.options().max_bytes + 1)
    started = time.perf_counter()
    report = session.check_bytes(name, data)
    result = report.files[0] if report.files else None
    if args.verbose and result is not None and (result.digest is not None or result.suppressions is None):
        print(f"pipelint: {visible(name)} (stdin): {time.perf_counter() - started:.3f} s", file=sys.stderr)
    return report


def _read_stdin(limit: int) -> bytes:
    """At most `limit` bytes of stdin (fewer only at its end): never more, whatever is behind it."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:              # a text stream put in place by a caller (tests, an embedding)
        return sys.stdin.read(limit).encode("utf-8")[:limit]
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _performance_note(args: argparse.Namespace, report: Report, fail_on: Any, performance: bool, code: int) -> None:
    """Say when performance findings were left out of the exit code (once, on stderr)."""
    if performance or args.quiet or code == 3 or args.format not in ("text", "concise"):
        return
    from .findings import PERFORMANCE
    from .report.present import shown_findings

    # counted as the reporters show them (one per defect with --primary-location python)
    left_out = sum(1 for f in shown_findings(report)
                   if f.severity.rank >= fail_on.rank and report.category(f) == PERFORMANCE)
    if left_out:
        print(f"pipelint: {left_out} performance finding(s) do not affect the exit code "
              f"(--fail-on-performance makes them count)", file=sys.stderr)


def _baseline_notes(args: argparse.Namespace, report: Report) -> None:
    if report.baseline_written is not None:
        written, pruned = report.baseline_written
        print(f"pipelint: wrote {written} finding(s) to {args.write_baseline}"
              + (f", pruned {pruned} entr{'y' if pruned == 1 else 'ies'} that match nothing" if pruned else ""),
              file=sys.stderr)
    elif report.baseline_stale and not args.quiet:
        print(f"pipelint: {report.baseline_stale} entr{'y' if report.baseline_stale == 1 else 'ies'} of "
              f"{args.baseline} match no finding any more (fixed or changed); "
              f"`--write-baseline {args.baseline}` prunes them", file=sys.stderr)


def cmd_rules(args: argparse.Namespace, host: PluginHost) -> int:
    from .registry import rows

    found = rows(host)
    if args.format == "json":
        keys = ("id", "plugin", "severity", "category", "short")
        print(json.dumps([dict(zip(keys, row)) for row in found], indent=2))
        return 0
    from .report.table import columns

    print("\n".join(columns(found)))        # plugins' text: escaped like any other table
    return 0


def cmd_rule(args: argparse.Namespace, host: PluginHost) -> int:
    from .docs import rule_page

    rule = host.rules.get(args.rule_id)
    if rule is None:
        raise UsageError(f"unknown rule id {args.rule_id!r}{did_you_mean(args.rule_id, host.rules)} "
                         f"(see `pipelint rules`)")
    from .report.escape import visible_lines

    check = host.checks.get(rule.id)
    page = rule_page(rule, host.rule_plugin[rule.id], check.example if check is not None else "")
    print(visible_lines(page.rstrip("\n") + "\n\n" + exit_code_section(rule)))
    return 0


def exit_code_section(rule: Any) -> str:
    """The rule page's last section: whether its findings decide the exit code."""
    if rule.category == "performance":
        return ("## Exit code\n\nCategory `performance`: the kernel is correct, only slower. With default flags "
                "these findings are reported but do not make the exit code non-zero; `--fail-on-performance` "
                "(or `fail-on-performance = true`) makes them count like any other.\n")
    return (f"## Exit code\n\nCategory `correctness`: a finding at or above `--fail-on` (default warning; this "
            f"rule's default severity is {rule.severity.value}) makes the exit code 1.\n")


def cmd_clean(args: argparse.Namespace, host: PluginHost) -> int:
    """Remove the entries of the result cache (`v<N>/`), the lowering caches (`lower/`, the
    editor's `lsp/`) and the grammar cache (`grammar-<uid>/`) — only in a root that carries
    pipelint's `CACHEDIR.TAG`, only files named like entries, never through a link."""
    from . import cachedir
    from .config import load_config
    from .report.escape import visible

    config = load_config([], args.config, host)
    choice = cachedir.choose(args.cache_dir, config.cache_dir, config.path)
    if choice.warning:
        print(f"pipelint: warning: {visible(choice.warning)}; cleaning {visible(str(choice.path))}",
              file=sys.stderr)
    found, refused = cachedir.clean(choice.path, dry_run=args.dry_run)
    if refused:
        print(f"pipelint: {visible(refused)}", file=sys.stderr)
        return 0
    if args.dry_run:
        for e in found:
            print(visible(str(e.path)))
        print(f"pipelint: would remove {len(found)} file(s) from {visible(str(choice.path))}", file=sys.stderr)
        return 0
    size = sum(e.size for e in found)
    print(f"pipelint: removed {len(found)} file(s) ({size / 2**20:.1f} MB) from {visible(str(choice.path))}"
          if found else f"pipelint: no cache entries in {visible(str(choice.path))}", file=sys.stderr)
    return 0


def cmd_plugins(args: argparse.Namespace, host: PluginHost) -> int:
    for name in host.plugin_names():
        rules = sorted(r for r, p in host.rule_plugin.items() if p == name)
        print(visible(f"{name}  {host.versions.get(name, '')}  {', '.join(rules)}"))
    for e in host.errors:
        print(f"{'error' if e.internal else 'note'}: {visible(e.message)}", file=sys.stderr)
    return 3 if any(e.internal for e in host.errors) else 0


def _disable_from_argv(argv: Sequence[str]) -> list[str]:
    names = []
    for i, a in enumerate(argv):
        if a == "--disable-plugin" and i + 1 < len(argv):
            names.append(argv[i + 1])
        elif a.startswith("--disable-plugin="):
            names.append(a.split("=", 1)[1])
    return names


class _VersionAction(argparse.Action):
    """`--version` anywhere on the line: the text is built only when asked for (it scans the
    installed distributions' entry points, a tenth of a second a `check` need not pay)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """`pipelint X` and the installed plugins with their distributions' versions, read from
    package metadata: nothing is imported, so `--version` answers at once."""
    from .pluginhost import installed_entry_points

    lines = [f"pipelint {__version__}"]
    for ep in installed_entry_points():         # what load_plugins would load
        dist = ep.dist
        where = f"{dist.name} {dist.version}" if dist is not None else getattr(ep, "value", "")
        lines.append(f"  plugin {ep.name} ({where})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:          # before any plugin is loaded: a start-up of a few ms
        print(version_text())
        return 0
    try:
        host = load_plugins(_disable_from_argv(argv))
        parser = build_parser(host)
        from .gcpolicy import for_analysis

        for_analysis()          # this process only analyses: collect rarely (gcpolicy's docstring)
        try:
            args = parser.parse_args(argv)
        except SystemExit as stop:  # --help, --version, bad options
            return int(stop.code or 0)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return args.func(args, host)
    except UsageError as err:
        print(f"pipelint: error: {visible(str(err))}", file=sys.stderr)    # may quote a checked repo's config
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("PIPELINT_DEBUG"):
            raise
        print(f"pipelint: internal error: {type(exc).__name__}: {visible(str(exc))} "
              f"(set PIPELINT_DEBUG=1 for a traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
