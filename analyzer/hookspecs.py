"""pipelint's hook specifications, grouped by the phase in which they run.

Built-in checks in `plugins/` and third-party packages implement these with
`@pipelint.hookimpl` and register through the entry-point group `pipelint`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .checks import Check
    from .cuda.parser import ParsedFile
    from .findings import Finding, Rule
    from .model import KernelModel
    from .options import SubParsers

hookspec = pluggy.HookspecMarker("pipelint")


# ---------------------------------------------------------------- load time
@hookspec
def pipelint_rules() -> Iterable[Rule]:  # type: ignore[empty-body]
    """Declare the rules this plugin can report.

    Called once when plugins are loaded.  Rule ids must be unique across all
    plugins; a clash is a usage error naming both plugins.
    """


@hookspec
def pipelint_checks() -> Iterable[Check]:  # type: ignore[empty-body]
    """Declare rules together with the code that reports them: one `pipelint.checks.Check`
    (a `KernelCheck` or a `VariantCheck`) per rule.

    Called once when plugins are loaded; each check's `rule` is declared as if returned by
    `pipelint_rules`.  pipelint calls a check only when its rule is selected, so a run that
    selects one rule computes only the analyses that rule needs.
    """


@hookspec
def pipelint_configure(config: dict[str, Any]) -> None:
    """Receive this plugin's own configuration table, `[tool.pipelint.plugins.NAME]`.

    Called once per process before any check runs (in every worker process
    too), with the table of the plugin's registered name, or `{}` when the
    project has none.  Validate it here: raise `ValueError` (or `TypeError`)
    with a message and pipelint stops with exit code 2, naming the plugin and
    the table.  Keep what you need on the module; values are plain TOML data.
    """


@hookspec
def pipelint_add_commands(subparsers: SubParsers) -> None:
    """Add subcommands to the `pipelint` CLI (the GPU bench plugin adds `bench`).

    A command sets `func=callable(args, host) -> int` as a parser default; `host`
    is the loaded `PluginHost` (rules, checks).
    """


@hookspec
def pipelint_output_formats() -> dict[str, Callable[..., str]]:  # type: ignore[empty-body]
    """Output formats this plugin adds, by name: `render(report, **options) -> str`.

    `report` is the finished `pipelint.findings.Report`; options the CLI passes
    are `colour`, `statistics`, `host` (the `PluginHost`) and `category`; accept
    `**_` for the rest.  The name becomes a choice of `--format` for `check`
    and `lower` (flake8's `flake8.report` entry points play the same role).
    """


# ---------------------------------------------------------------- check time
@hookspec
def pipelint_check_kernel(kernel: KernelModel, parsed: ParsedFile, path: str) -> Iterable[Finding]:  # type: ignore[empty-body]
    """Check one `__global__` kernel and return findings.

    :param kernel: the kernel model (shared buffers, pipelined loops, async
        operations, barriers, mbarriers) built from the AST.
    :param parsed: the parsed file: AST (`parsed.unit`), `#line` map
        (`parsed.lines`) and source text.
    :param path: the file's path as the user gave it.

    Each implementation runs isolated: an exception becomes a tool error that
    names the plugin, and the other checks' findings are kept.
    """


@hookspec
def pipelint_check_file(parsed: ParsedFile, path: str) -> Iterable[Finding]:  # type: ignore[empty-body]
    """Check a whole parsed file (rules that are not about one kernel)."""


# ---------------------------------------------------------------- lowering sweeps
@hookspec
def pipelint_check_variants(variants: list) -> Iterable[Finding]:  # type: ignore[empty-body]
    """Check the variants of one kernel that `pipelint lower` produced, together.

    :param variants: `pipelint.lowering.sweep.LoweredVariant` objects, one per
        (arch, num_stages): the planner's IR facts, the dumped CUDA path, and
        the kernel model of the generated CUDA (None when lowering failed).

    Runs after the per-kernel checks; used for the planner invariants, IR vs
    CUDA agreement, trends across num_stages and shared-memory budgets.
    """
