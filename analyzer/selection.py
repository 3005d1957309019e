"""Which rules are on: rule ids, plugin names and `ALL`, resolved by specificity.

The same words work in `select`, `extend-select`, `ignore` and
`per-file-ignores`, in the configuration and on the command line: a rule id
(`missing-barrier`), the name of the plugin that declares rules (`barriers`,
`pipelint` for the core rules such as `parse-error`), or `ALL`.

As in ruff, the more specific selector wins: `select = ["barriers"]` with
`ignore = ["redundant-barrier"]` turns one rule of the plugin off, and
`ignore = ["barriers"]` with `extend-select = ["missing-barrier"]` keeps that one
on.  At equal specificity, ignoring wins.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import UsageError

ALL = "ALL"


@dataclass(frozen=True)
class Universe:
    """The rules a run knows and the plugin that declares each."""

    rule_plugin: dict[str, str]

    def validate(self, words: Iterable[str], where: str) -> frozenset[str]:
        words = frozenset(w.strip() for w in words if w and w.strip())
        plugins = set(self.rule_plugin.values())
        unknown = sorted(w for w in words if w != ALL and w not in self.rule_plugin and w not in plugins)
        if unknown:
            from .options import did_you_mean

            hints = "".join(did_you_mean(w, [*self.rule_plugin, *plugins, ALL]) for w in unknown[:1])
            raise UsageError(f"unknown rule id(s) or plugin name(s) in {where}: {', '.join(unknown)}{hints} "
                             f"(see `pipelint rules`)")
        return words

    def specificity(self, rule: str, words: frozenset[str]) -> int:
        """2: the rule is named; 1: its plugin is; 0: ALL; -1: not selected by these words."""
        if rule in words:
            return 2
        if self.rule_plugin.get(rule) in words:
            return 1
        return 0 if ALL in words else -1

    def matches(self, rule: str, words: frozenset[str]) -> bool:
        return self.specificity(rule, words) >= 0


@dataclass(frozen=True)
class Selection:
    """select (None: every rule) + extend-select, minus ignore, by specificity."""

    universe: Universe
    select: frozenset[str] | None = None
    extend: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()

    def enabled(self, rule: str) -> bool:
        u = self.universe
        chosen = max(u.specificity(rule, self.select) if self.select is not None else 0,
                     u.specificity(rule, self.extend))
        if chosen < 0:
            return False
        return u.specificity(rule, self.ignore) < chosen


def split_words(values: Iterable[str] | str | None) -> list[str]:
    """Words of repeatable, comma-separated flags (`--select a,b --select c`) or a TOML list/string."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [w.strip() for v in values for w in str(v).split(",") if w.strip()]
