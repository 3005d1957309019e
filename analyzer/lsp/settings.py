"""What the editor lowers: `[tool.pipelint.lower]` of the pyproject.toml `check` reads.

    [tool.pipelint.lower]
    arch = ["sm_80", "sm_90"]      # targets (default: these two, shown side by side)
    num-stages = [3]               # default: what the kernel says (its factory's default)
    params = { block_K = 64 }      # factory parameters (each kernel takes those it accepts)
    timeout = 120                  # seconds one lowering worker may take
    jobs = 1                       # lowering processes per file (more: variants in parallel)

The same table as `check` reads its other settings from, so the server, `check --watch`
and CI agree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError

KEYS = ("arch", "num-stages", "params", "timeout", "jobs")
DEFAULT_ARCHS = ("sm_80", "sm_90")
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class LowerSettings:
    """Targets, num_stages (None: as written) and parameters every kernel is lowered with."""

    archs: tuple[str, ...] = DEFAULT_ARCHS
    stages: tuple[int | None, ...] = (None,)
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    # lowering processes per buffer (0: one).  One process imports TileLang once for every
    # variant: on 2 busy cores it gives the first diagnostic sooner than one per variant.
    jobs: int = 0

    def key(self) -> list:
        return [list(self.archs), list(self.stages), sorted(self.params.items(), key=lambda kv: kv[0])]


def parse_lower_table(table: Any, where: str) -> LowerSettings:
    """Validate a `lower` table; a wrong key or value is a usage error that names it."""
    if not isinstance(table, dict):
        raise UsageError(f"{where}: expected a table [tool.pipelint.lower], got {table!r}")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(KEYS)})")
    return LowerSettings(_archs(table, where), _stages(table, where), _params(table, where),
                         _timeout(table, where), _jobs(table, where))


# One checker per key of the table: each raises the usage error that names the key.
def _archs(table: dict, where: str) -> tuple[str, ...]:
    from ..lowering.driver import KNOWN_ARCHS

    archs = _words(table.get("arch", list(DEFAULT_ARCHS)), f"{where} arch")
    for arch in archs:
        if arch not in KNOWN_ARCHS:
            raise UsageError(f"{where} arch: unknown arch {arch!r} (known: {', '.join(KNOWN_ARCHS)})")
    return tuple(dict.fromkeys(archs))


def _stages(table: dict, where: str) -> tuple[int | None, ...]:
    if "num-stages" not in table:
        return (None,)
    raw = table["num-stages"]
    values = raw if isinstance(raw, list) else [raw]
    if not values or not all(_is_int(n) and n >= 0 for n in values):
        raise UsageError(f"{where} num-stages: expected integers >= 0, got {raw!r}")
    return tuple(dict.fromkeys(values))


def _params(table: dict, where: str) -> dict[str, Any]:
    params = table.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(k, str) and k.isidentifier() for k in params):
        raise UsageError(f"{where} params: expected a table of parameter = value, got {params!r}")
    return dict(params)


def _timeout(table: dict, where: str) -> float:
    timeout = table.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise UsageError(f"{where} timeout: expected seconds > 0, got {timeout!r}")
    return float(timeout)


def _jobs(table: dict, where: str) -> int:
    jobs = table.get("jobs", 0)
    if not _is_int(jobs) or jobs < 0:
        raise UsageError(f"{where} jobs: expected an integer >= 0, got {jobs!r}")
    return jobs


def _is_int(value: Any) -> bool:
    """An integer that is not a bool (TOML's `true` is no stage count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _words(value: Any, where: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise UsageError(f"{where}: expected a list of targets such as [\"sm_80\", \"sm_90\"], got {value!r}")
    return values


def lower_settings(config: Any) -> LowerSettings:
    """The `lower` table of the configuration file a loaded `Config` came from (the schema
    admits it; defaults when there is none)."""
    import tomllib

    if not getattr(config, "path", None):
        return LowerSettings()
    try:
        with open(config.path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return LowerSettings()          # load_config already said what is wrong with the file
    table = data.get("tool", {}).get("pipelint", {}).get("lower")
    if table is None:
        return LowerSettings()
    return parse_lower_table(table, f"{config.path} [tool.pipelint.lower]")
