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
    from ..lowering.driver import KNOWN_ARCHS

    if not isinstance(table, dict):
        raise UsageError(f"{where}: expected a table [tool.pipelint.lower], got {table!r}")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(KEYS)})")
    archs = _words(table.get("arch", list(DEFAULT_ARCHS)), f"{where} arch")
    for arch in archs:
        if arch not in KNOWN_ARCHS:
            raise UsageError(f"{where} arch: unknown arch {arch!r} (known: {', '.join(KNOWN_ARCHS)})")
    stages: tuple[int | None, ...] = (None,)
    if "num-stages" in table:
        raw = table["num-stages"]
        values = raw if isinstance(raw, list) else [raw]
        if not values or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in values):
            raise UsageError(f"{where} num-stages: expected integers >= 0, got {raw!r}")
        stages = tuple(dict.fromkeys(values))
    params = table.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(k, str) and k.isidentifier() for k in params):
        raise UsageError(f"{where} params: expected a table of parameter = value, got {params!r}")
    timeout = table.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise UsageError(f"{where} timeout: expected seconds > 0, got {timeout!r}")
    jobs = table.get("jobs", 0)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise UsageError(f"{where} jobs: expected an integer >= 0, got {jobs!r}")
    return LowerSettings(tuple(dict.fromkeys(archs)), stages, dict(params), float(timeout), jobs)


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
