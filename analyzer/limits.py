"""The bounds on one run's work, and who may change them.

A checked repository's `[tool.pipelint]` decides what is *reported*; it must not
decide how much work a hostile kernel may cost the machine that checks it (a pull
request that sets `time-budget = 0` and adds a pathological kernel would otherwise
run unbounded in that PR's CI).  So a configuration file may tighten a bound but not
loosen it: a looser value is ignored with a warning, and only the command line
raises a bound or switches it off.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_FILE_SIZE = DEFAULT_MAX_BYTES / 2**20   # MB, as `--max-file-size` takes it
DEFAULT_TIME_BUDGET = 20.0          # seconds of CPU time per file
DEFAULT_MEMORY_BUDGET = 2048.0      # MB of address space one file's analysis may add
BACKSTOP_FACTOR = 10.0              # wall-clock backstop: this many times the CPU budget ...
BACKSTOP_MINIMUM = 120.0            # ... and never less than this (seconds)


def wall_backstop(cpu_budget: float) -> float:
    """Wall-clock seconds after which a file's analysis is stopped as hung (0: none).  Generous:
    a loaded machine stretches wall time by its load, and the CPU budget is what decides
    verdicts; only a file that waits without computing meets this one."""
    if cpu_budget <= 0:
        return 0.0
    return max(cpu_budget * BACKSTOP_FACTOR, BACKSTOP_MINIMUM)


@dataclass(frozen=True)
class Bound:
    """One bound as the configuration file may set it: `zero` means "no bound", so it loosens."""

    key: str            # the configuration key
    flag: str           # the command-line option that may loosen it
    default: float
    zero_is_none: bool


BOUNDS = (Bound("max-file-size", "--max-file-size", DEFAULT_MAX_FILE_SIZE, False),
          Bound("time-budget", "--time-budget", DEFAULT_TIME_BUDGET, True),
          Bound("memory-budget", "--memory-budget", DEFAULT_MEMORY_BUDGET, True))


def looser(bound: Bound, value: float) -> bool:
    """Whether `value` allows more work than the default."""
    return (bound.zero_is_none and value == 0) or value > bound.default


def from_config(bound: Bound, value: float | None, where: str) -> tuple[float | None, str | None]:
    """The configuration's value where it tightens the bound, else None (the default applies)
    and the warning to print."""
    if value is None or not looser(bound, value):
        return value, None
    shown = "0 (no limit)" if value == 0 else f"{value:g}"
    return None, (f"{where}: `{bound.key} = {shown}` is ignored: a project's configuration may "
                  f"tighten a bound but not loosen it (default {bound.default:g}); pass {bound.flag} "
                  f"on the command line to raise it")


_READ_LIMIT = [DEFAULT_MAX_BYTES]     # the run's --max-file-size, for the reporters' own reads


def set_read_limit(max_bytes: int) -> None:
    """The largest file this run reads (`--max-file-size`); reporters read no larger one."""
    _READ_LIMIT[0] = max_bytes


def readable(st: os.stat_result) -> bool:
    """Whether a reporter may read a file for its source lines or line hashes: a regular file
    within the run's size limit.  A file over it was never analysed (its finding is at line 1)
    and reading a 3 GB file to quote its first line is the unbounded read the limit prevents."""
    return stat.S_ISREG(st.st_mode) and st.st_size <= _READ_LIMIT[0]


__all__ = ["BOUNDS", "DEFAULT_MAX_BYTES", "DEFAULT_MEMORY_BUDGET", "DEFAULT_TIME_BUDGET", "Bound",
           "from_config", "looser", "readable", "set_read_limit", "wall_backstop"]
