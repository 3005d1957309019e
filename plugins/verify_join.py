"""Join static findings to what a GPU run showed (pure: tested on recorded H200 data, no GPU).

For one variant, the static side is pipelint's findings on the exact CUDA that ran; the
dynamic side is the run against a reference (wrong output, a hang past the timeout, a crash)
and compute-sanitizer racecheck / synccheck.  Findings and failures are matched by kind:
a race-kind rule is confirmed by a racecheck error or a wrong output, a hang-kind rule by a
timeout or a synccheck error.  Performance rules have no dynamic symptom to expect.
"""
from __future__ import annotations

from typing import Any

from pipelint.report.table import columns

RACE_RULES = frozenset({"missing-barrier", "wait-too-shallow", "uncommitted-copy", "missing-drain",
                        "version-overwrite", "version-mismatch", "shared-overlap", "tma-read-before-wait",
                        "mbarrier-release", "mbarrier-init-fence", "tma-store-fence"})
HANG_RULES = frozenset({"mbarrier-deadlock", "divergent-barrier", "mbarrier-arrival-count", "mbarrier-tx-bytes"})
RACE_FAILURES = frozenset({"racecheck", "output"})
HANG_FAILURES = frozenset({"hang", "synccheck"})


def failures(dynamic: dict[str, Any]) -> list[str]:
    """What the GPU run showed wrong: output, hang, crash, racecheck, synccheck (sorted)."""
    out = set()
    run = dynamic.get("run") or {}
    if run.get("timeout"):
        out.add("hang")
    elif run.get("crashed"):
        out.add("crash")
    elif run.get("correct") is False:
        out.add("output")
    for tool in ("racecheck", "synccheck"):
        result = dynamic.get(tool) or {}
        if result.get("errors"):
            out.add(tool)
        elif result.get("timeout") and result.get("reports"):
            out.add(tool)           # reports printed, stopped before the summary
    return sorted(out)


def join(static_rules: list[str], dynamic: dict[str, Any], severities: dict[str, str]) -> dict[str, Any]:
    """The verdict of one variant: confirmed / static only / dynamic only / clean, and why."""
    errors = sorted({r for r in static_rules if severities.get(r) == "error"})
    perf = sorted({r for r in static_rules if severities.get(r) != "error"})
    failed = failures(dynamic)
    matched = [r for r in errors if _expects(r, set(failed))]
    return {"verdict": _verdict(bool(errors), bool(failed), bool(matched), bool(perf)), "static_errors": errors,
            "static_other": perf, "dynamic_failures": failed, "matched": matched}


def _expects(rule: str, failed: set[str]) -> bool:
    """Whether a failure of the run is of the kind the rule predicts (a race: wrong output or
    racecheck; a hang: a timeout or synccheck)."""
    return bool((rule in RACE_RULES and RACE_FAILURES & failed) or (rule in HANG_RULES and HANG_FAILURES & failed))


def _verdict(errors: bool, failed: bool, matched: bool, perf: bool) -> str:
    if errors and failed:
        return "confirmed" if matched else "confirmed (different kind)"
    if errors:
        return "static only"
    if failed:
        return "dynamic only"
    if perf:
        return "static only (performance)"     # a stall or lost overlap: nothing to see in a run
    return "clean"


def render_table(rows: list[dict[str, Any]]) -> str:
    """One line per variant: what pipelint said, what the GPU showed, the verdict."""
    table = [("variant", "pipelint errors", "pipelint warnings/notes", "GPU failures", "verdict")]
    for r in rows:
        j = r["join"]
        table.append((r["variant"], ", ".join(j["static_errors"]) or "-", ", ".join(j["static_other"]) or "-",
                      ", ".join(j["dynamic_failures"]) or "-",
                      j["verdict"].upper() if j["verdict"] == "dynamic only" else j["verdict"]))
    lines = columns(table)
    gaps = [r["variant"] for r in rows if r["join"]["verdict"] == "dynamic only"]
    if gaps:
        lines.append(f"DYNAMIC ONLY (a gap in pipelint): {', '.join(gaps)}")
    return "\n".join(lines) + "\n"
