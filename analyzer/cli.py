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
from typing import Any, NoReturn

from . import __version__
from .errors import UsageError
from .findings import Report
from .pluginhost import PluginHost, load_plugins


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own exit code is 2 as well
        self.print_usage(sys.stderr)
        self.exit(2, f"pipelint: error: {message}\n")


FORMATS: tuple[str, ...] = ("text", "json", "sarif", "github")   # replaced by the host's registry


def add_command(sub: argparse._SubParsersAction, name: str, summary: str, description: str,
                examples: Sequence[str]) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (in `pipelint --help`), a description and examples
    (in `pipelint NAME --help`).  Plugins adding commands use it too."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(name, help=summary, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser(host: PluginHost | None = None) -> argparse.ArgumentParser:
    global FORMATS
    if host is not None and host.formats:
        FORMATS = tuple(sorted(host.formats))
    parser = _Parser(prog="pipelint", description="Static analyzer for software pipelines in "
                     "TileLang-generated CUDA.")
    parser.add_argument("--version", action="version", version=version_text(),
                        help="print pipelint's version and the installed plugins, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    check = add_command(sub, "check", "lint .cu/.cuh files and folders",
                        "Parse each kernel, model its software pipeline (shared-memory versions, cp.async groups, "
                        "barriers, mbarriers) and report hazards and lost overlap. Settings come from "
                        "[tool.pipelint] in the nearest pyproject.toml; flags override them.",
                        ["pipelint check lowered/",
                         "pipelint check k.cu --format sarif -o pipelint.sarif",
                         "pipelint check . --select barriers,wait-group --ignore redundant-barrier",
                         "pipelint check . --baseline .pipelint-baseline.json"])
    check.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (folders are walked for .cu/.cuh)")
    add_output_options(check)
    check.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (0: auto; capped at the cores)")
    check.add_argument("--max-file-size", type=float, default=None, metavar="MB",
                       help="skip files larger than this (default 16 MB)")
    check.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                       help="stop analysing a file after this long and report analysis-limit "
                            "(default 20 s; 0: no limit)")
    check.add_argument("--memory-budget", type=float, default=None, metavar="MB",
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
    check.add_argument("--no-cache", action="store_true",
                       help="analyse every file afresh; neither read nor write the result cache")
    check.add_argument("--cache-dir", default=None, metavar="DIR",
                       help="where results of unchanged files are kept (default: $PIPELINT_CACHE_DIR, "
                            "else the platform's user cache folder)")
    check.set_defaults(func=cmd_check)
    rules = add_command(sub, "rules", "list every rule with its plugin and default severity",
                        "Every rule of every loaded plugin: the ids select, ignore and suppressions use.",
                        ["pipelint rules", "pipelint rules --format json"])
    rules.add_argument("--format", choices=("text", "json"), default="text", help="text table or JSON list")
    rules.set_defaults(func=cmd_rules)
    rule = add_command(sub, "rule", "print the documentation of one rule",
                       "A rule's page: what it finds, why it matters for the pipeline, an example and the fix.",
                       ["pipelint rule wait-too-shallow"])
    rule.add_argument("rule_id", help="a rule id (see `pipelint rules`)")
    rule.set_defaults(func=cmd_rule)
    explain = add_command(sub, "explain", "print what the pipeline in each kernel became",
                          "The facts the checks reason with: buffers and their versions, pipelined loops, "
                          "what each __syncthreads orders, how deep each wait may be, the mbarriers.",
                          ["pipelint explain lowered/gemm_sm_80_s3.cu",
                           "pipelint explain k.cu --format json"])
    explain.add_argument("paths", nargs="+", metavar="FILE.cu", help="generated CUDA files")
    explain.add_argument("--format", choices=("text", "json"), default="text", help="text or JSON")
    explain.set_defaults(func=lambda args, host: __import__("pipelint.explain", fromlist=["x"]).cmd_explain(args, host))
    plugins = add_command(sub, "plugins", "list loaded plugins with versions",
                          "Each loaded plugin, its version and the rules it declares; load failures are "
                          "printed and make the exit code 3.", ["pipelint plugins"])
    plugins.set_defaults(func=cmd_plugins)
    from .commands.lower import add_parsers

    add_parsers(sub, add_output_options)
    if host is not None:
        host.pm.hook.pipelint_add_commands(subparsers=sub)
    return parser


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default="text",
                   help="output format: " + ", ".join(FORMATS) + " (plugins add more)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--quiet", "-q", action="store_true", help="print the findings only, no summary line")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--sarif-output", metavar="FILE", help="also write SARIF here")
    p.add_argument("--sarif-category", metavar="ID", help="SARIF automationDetails.id")
    p.add_argument("--fail-on", choices=("error", "warning", "note"), default=None,
                   help="lowest severity that makes the exit code 1 (default warning)")
    p.add_argument("--statistics", action="store_true", help="print counts per rule")
    p.add_argument("--primary-location", choices=("cuda", "python"), default=None,
                   help="where findings point first: the .cu line (default) or the user's TileLang line "
                        "(from #line; the .cu line becomes related)")
    p.add_argument("--path-map", action="append", default=None, metavar="OLD=NEW",
                   help="rebase #line paths starting with OLD (written on another machine) to NEW (repeatable)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text output (auto: on terminals and with FORCE_COLOR; NO_COLOR turns it off)")
    p.add_argument("--disable-plugin", action="append", default=[], metavar="NAME",
                   help="do not load this plugin (repeatable; also PIPELINT_DISABLE_PLUGINS=a,b)")
    p.add_argument("--select", action="append", default=None, metavar="RULES",
                   help="report only these: rule ids, plugin names or ALL (repeatable, comma-separated; "
                        "replaces the configuration's select)")
    p.add_argument("--ignore", action="append", default=None, metavar="RULES",
                   help="drop these rule ids, plugin names or ALL (repeatable; added to the configuration's)")
    p.add_argument("--extend-select", action="append", default=None, metavar="RULES",
                   help="report these on top of select (repeatable, comma-separated)")
    p.add_argument("--config", default=None, metavar="FILE", help="pyproject.toml to read [tool.pipelint] from")
    p.add_argument("--baseline", default=None, metavar="FILE", help="report only findings not in FILE")
    p.add_argument("--write-baseline", default=None, metavar="FILE",
                   help="record the current findings (pruning entries that match nothing) and exit 0")
    p.add_argument("--baseline-paths", action="store_true",
                   help="with --write-baseline: fingerprints include the file's path")


def _colour(args, stream) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):       # CI logs (GitHub Actions) are not terminals but show colour
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def emit(args: argparse.Namespace, report: Report, host: PluginHost) -> None:
    from .report import get_reporter

    out_stream = sys.stdout
    colour = not args.output and _colour(args, out_stream)
    text = get_reporter(args.format, host)(report, colour=colour, statistics=args.statistics,
                                           quiet=getattr(args, "quiet", False),
                                     host=host, category=args.sarif_category)
    if args.output:
        write_or_keep(args.output, text, "-o")
    else:
        out_stream.write(text)
    if args.sarif_output:
        sarif = get_reporter("sarif", host)(report, host=host, category=args.sarif_category)
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


def cmd_check(args: argparse.Namespace, host: PluginHost) -> int:
    from .config import apply_config, load_config
    from .discovery import collect_files
    from .engine import CheckOptions, run_check

    config = load_config(args.paths, args.config, host)
    found = discovery(args, config)
    files, notes = collect_files(args.paths, found)
    for note in notes:
        print(f"pipelint: {note}", file=sys.stderr)
    if not files and found.force_exclude:
        return 0            # pre-commit named only excluded files: nothing to do is a success
    if not files:
        raise UsageError("nothing to check: no .cu or .cuh files in the given paths")
    from .config import positive

    size = positive(first(args.max_file_size, config.max_file_size, 16.0), "--max-file-size")
    budget = positive(first(args.time_budget, config.time_budget, 20.0), "--time-budget", zero=True)
    jobs = int(positive(first(args.jobs, config.jobs, 0), "--jobs", integer=True, zero=True))
    memory = positive(first(args.memory_budget, config.memory_budget, 2048.0), "--memory-budget", zero=True)
    tables = tuple(sorted((name, json.dumps(table, sort_keys=True, default=str))
                          for name, table in config.plugins.items()))
    host.configure(config.plugins)
    options = CheckOptions(max_bytes=int(size * 1024 * 1024), jobs=jobs, disable=tuple(args.disable_plugin),
                           time_budget=budget, memory_budget=memory, plugin_config=tables)
    from .progress import Progress

    with Progress("checking", len(files), quiet=args.quiet) as progress:
        report = run_check(files, host, options, cache=_cache(args, config, host, options), progress=progress)
    fail_on = apply_config(report, config, args, host)
    emit(args, report, host)
    _baseline_notes(args, report)
    if args.exit_zero or args.write_baseline:
        return 3 if any(e.internal for e in report.errors) else 0
    return report.exit_code(fail_on)


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


def discovery(args: argparse.Namespace, config: Any) -> Any:
    """Which files a walk takes: command line over configuration over defaults."""
    from .discovery import DEFAULT_EXCLUDES, Discovery
    from .selection import split_words

    exclude = tuple(split_words(args.exclude)) if args.exclude else (
        config.exclude if config.exclude is not None else DEFAULT_EXCLUDES)
    return Discovery(root=config.root, exclude=exclude,
                     extend_exclude=tuple(config.extend_exclude) + tuple(split_words(args.extend_exclude)),
                     respect_gitignore=first(args.respect_gitignore, config.respect_gitignore),
                     force_exclude=first(args.force_exclude, config.force_exclude))


def _cache(args: argparse.Namespace, config: Any, host: PluginHost, options: Any) -> Any:
    """The result cache for this run, or None (`--no-cache`, `cache = false`)."""
    if args.no_cache or config.cache is False:
        return None
    from . import cache

    root = Path(args.cache_dir or config.cache_dir or cache.default_dir())
    import importlib

    modules = [sys.modules[__package__ or "pipelint"], importlib.import_module("pipelint.grammars"),
               *host.pm.get_plugins()]
    salt = cache.salt_for(modules, host.versions,
                          (options.max_bytes, tuple(sorted(options.disable)), options.plugin_config))
    return cache.ResultCache(root, salt)


def cmd_rules(args: argparse.Namespace, host: PluginHost) -> int:
    rules = sorted(host.rules.values(), key=lambda r: (host.rule_plugin[r.id], r.id))
    if args.format == "json":
        import json

        print(json.dumps([{"id": r.id, "plugin": host.rule_plugin[r.id], "severity": r.severity.value,
                           "short": r.short} for r in rules], indent=2))
        return 0
    width = max(len(r.id) for r in rules)
    pw = max(len(host.rule_plugin[r.id]) for r in rules)
    for r in rules:
        print(f"{r.id:<{width}}  {host.rule_plugin[r.id]:<{pw}}  {r.severity.value:<7}  {r.short}")
    return 0


def cmd_rule(args: argparse.Namespace, host: PluginHost) -> int:
    from .docs import rule_page

    rule = host.rules.get(args.rule_id)
    if rule is None:
        raise UsageError(f"unknown rule id {args.rule_id!r} (see `pipelint rules`)")
    print(rule_page(rule, host.rule_plugin[rule.id]))
    return 0


def cmd_plugins(args: argparse.Namespace, host: PluginHost) -> int:
    for name in host.plugin_names():
        rules = sorted(r for r, p in host.rule_plugin.items() if p == name)
        print(f"{name}  {host.versions.get(name, '')}  {', '.join(rules)}")
    for e in host.errors:
        print(f"error: {e.message}", file=sys.stderr)
    return 3 if host.errors else 0


def _disable_from_argv(argv: Sequence[str]) -> list[str]:
    names = []
    for i, a in enumerate(argv):
        if a == "--disable-plugin" and i + 1 < len(argv):
            names.append(argv[i + 1])
        elif a.startswith("--disable-plugin="):
            names.append(a.split("=", 1)[1])
    return names


def first(*values: Any) -> Any:
    """The first value that is set: command line, then configuration, then default."""
    return next(v for v in values if v is not None)


def version_text() -> str:
    """`pipelint X` and the installed plugins with their distributions' versions, read from
    package metadata: nothing is imported, so `--version` answers at once."""
    from importlib.metadata import entry_points

    lines = [f"pipelint {__version__}"]
    for ep in sorted(entry_points(group="pipelint"), key=lambda e: e.name):
        dist = ep.dist
        where = f"{dist.name} {dist.version}" if dist is not None else ep.value
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
        try:
            args = parser.parse_args(argv)
        except SystemExit as stop:  # --help, --version, bad options
            return int(stop.code or 0)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return args.func(args, host)
    except UsageError as err:
        print(f"pipelint: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("PIPELINT_DEBUG"):
            raise
        print(f"pipelint: internal error: {type(exc).__name__}: {exc} "
              f"(set PIPELINT_DEBUG=1 for a traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
