"""Command-line building blocks shared by `cli.py` and the command modules in `commands/`.

`cli.py` assembles the parser from the command modules; the modules take what they
need from here, never from `cli.py`, so the import graph has no cycle: `cli` ->
`commands.*` -> `options`.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

SubParsers = argparse._SubParsersAction     # what `pipelint_add_commands` receives

FORMATS: list[str] = ["text", "json", "sarif", "github"]   # filled from the plugin host's registry


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """` (did you mean X?)` for the closest candidate, or nothing."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


class Parser(argparse.ArgumentParser):
    """argparse with pipelint's exit code for usage errors (2) and suggestions for misspelt
    options, subcommands and choices."""

    def error(self, message: str) -> NoReturn:
        # A value out of range is one line (the flag and its range say it all); a mistake about
        # the command line's shape (an unknown option, a missing argument) gets the usage too.
        if not re.match(r"argument [^:]+: expected ", message):
            self.print_usage(sys.stderr)
        self.exit(2, f"pipelint: error: {message}{self._suggestion(message)}\n")

    def _suggestion(self, message: str) -> str:
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        unknown = re.search(r"unrecognized arguments: (.*)", message)
        if unknown:
            for word in unknown.group(1).split():
                if word.startswith("--"):
                    hint = did_you_mean(word.split("=", 1)[0], self.all_option_strings())
                    if hint:
                        return hint
        return ""

    def all_option_strings(self) -> set[str]:
        """Every long option of this parser and of its subcommands."""
        found: set[str] = set()
        for action in self._actions:
            found.update(s for s in action.option_strings if s.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    if isinstance(sub, Parser):
                        found |= sub.all_option_strings()
        return found


def add_command(sub: argparse._SubParsersAction, name: str, summary: str, description: str,
                examples: Sequence[str]) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (in `pipelint --help`), a description and examples
    (in `pipelint NAME --help`).  Plugins adding commands use it too."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(name, help=summary, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def set_formats(names: Iterable[str]) -> None:
    """The `--format` choices: every registered output format."""
    FORMATS[:] = sorted(names)


def add_output_options(p: argparse.ArgumentParser) -> None:
    """Output, selection and exit-code options of `check` and `lower`."""
    p.add_argument("--format", "--output-format", dest="format", choices=tuple(FORMATS), default="text",
                   help="output format: " + ", ".join(FORMATS) + " (plugins add more)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--quiet", "-q", action="store_true", help="print the findings only, no summary line")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--sarif-output", metavar="FILE", help="also write SARIF here")
    p.add_argument("--sarif-category", metavar="ID", help="SARIF automationDetails.id")
    p.add_argument("--project-root", metavar="DIR", default=None,
                   help="the repository root SARIF URIs are relative to (%%SRCROOT%%; default: the git "
                        "top level of the current folder, else the configuration's folder, else the current one)")
    p.add_argument("--fail-on", choices=("error", "warning", "note"), default=None,
                   help="lowest severity that makes the exit code 1 (default warning; performance "
                        "findings count only with --fail-on-performance)")
    p.add_argument("--fail-on-performance", action=argparse.BooleanOptionalAction, default=None,
                   help="let performance findings (redundant-barrier, redundant-wait, wait-too-deep, stage-trend: "
                        "the kernel is correct but slower) make the exit code 1 too (default: no)")
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


def first(*values: Any) -> Any:
    """The first value that is set: command line, then configuration, then default."""
    return next(v for v in values if v is not None)


def fmt_fact(x: object) -> str:
    """A fact in a table: `-` when there is none."""
    return "-" if x is None or x == [] else str(x)


def project_root(args: argparse.Namespace, config: Any = None) -> Path:
    """%SRCROOT% of SARIF for the flags `args` (`root_of` their `--project-root`)."""
    return root_of(getattr(args, "project_root", None), config)


def root_of(explicit: str | None, config: Any = None) -> Path:
    """%SRCROOT% of SARIF: `--project-root`, else the git top level above the current folder,
    else the configuration's folder, else the current folder."""
    if explicit:
        root = Path(explicit)
        if not root.is_dir():
            from .errors import UsageError

            raise UsageError(f"--project-root {explicit}: not a folder")
        return root.resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return config.root if config is not None and config.path else here


def override_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command line sets, as `settings.Overrides.from_flags` takes them: the one
    place the core's settings are read off parsed flags (a command without a flag leaves the
    configuration's)."""
    names = ("select", "ignore", "extend_select", "fail_on", "fail_on_performance", "primary_location",
             "path_map", "baseline", "write_baseline", "baseline_paths", "project_root", "jobs", "max_file_size",
             "time_budget", "memory_budget", "exclude", "extend_exclude", "force_exclude", "respect_gitignore",
             "no_cache", "cache_dir")
    fields = {name: getattr(args, name, None) for name in names}
    fields.update(disable=getattr(args, "disable_plugin", None), named=named_paths(args))
    return fields


def named_paths(args: argparse.Namespace) -> list[str]:
    """Files and folders the user named on the command line: `check`'s paths, and `lower`'s kernel
    file (the TileLang Python the `#line`s of its lowered CUDA name)."""
    named = [p for p in getattr(args, "paths", None) or () if isinstance(p, str) and p != "-"]
    kernel = getattr(args, "kernel", None)
    if isinstance(kernel, str):
        from .lowering.driver import KernelRef

        named.append(KernelRef.parse(kernel).file)
    return named
