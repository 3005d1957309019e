"""Verdicts of forced-schedule runs (issue 36): pure, tested on recorded data without a GPU.

For one finding the evidence is: the unedited kernel's natural-schedule runs, one run per delay
variant (its output compared with the natural one: how many elements changed), the same delay on
the fixed twin (the control: must change nothing), compute-sanitizer racecheck/synccheck on the
unedited kernel and hang timeouts.  The verdict is the strongest evidence, in this order:

1. `confirmed by output` when the two natural runs already differ (a delay's effect could not be
   told from the noise);
2. `confirmed by forced schedule` — a delay changed the output while the same delay left the
   twin's output alone (or there is no twin); with the delay and the mismatch count.  Every run
   poisons shared memory at entry, so a delay counts by what it changed beyond the poison-only
   run (`vs_poisoned`);
3. `confirmed by output` — the natural schedule's output is already wrong (against the twin's
   output or `--reference`), or poisoning shared memory alone changes it (a read of bytes no
   thread of the launch wrote), with no delay needed;
4. `confirmed by racecheck` / `confirmed by synccheck` — the sanitizer reported errors;
5. `confirmed by a hang` — a run timed out (an mbarrier waiting for a phase that never comes);
6. `not reproduced` — with what was tried.  Never "false": a schedule not found is not a proof.

A delay that changes the *twin's* output is a bug in the harness (a delay must not change a
correct kernel), reported as `harness_error` on the run and never counted as a confirmation.  A
twin whose own output the poison changes reads shared memory nothing wrote: it is not a correct
kernel, and the run says so (`twin_note`) instead of blaming the harness.
"""
from __future__ import annotations

from typing import Any

CONFIRMED_FORCED = "confirmed by forced schedule"
CONFIRMED_OUTPUT = "confirmed by output"
CONFIRMED_RACECHECK = "confirmed by racecheck"
CONFIRMED_SYNCCHECK = "confirmed by synccheck"
CONFIRMED_HANG = "confirmed by a hang"
NOT_REPRODUCED = "not reproduced"


def _changed(run: dict[str, Any] | None) -> int | None:
    """Elements a run's output changed against its natural output (None: not compared)."""
    if not run or run.get("timeout") or run.get("crashed"):
        return None
    return run["vs_poisoned"] if run.get("vs_poisoned") is not None else run.get("mismatches")


def finding_verdict(finding: dict[str, Any], natural: dict[str, Any], sanitizers: dict[str, Any]) -> dict[str, Any]:
    """`finding`: {"delays": [{"describe", "number", "variant": RUN, "control": RUN|None}]};
    `natural`: {"runs": [RUN, ...], "wrong": N|None (vs the twin or reference), "wrong_runs": [N per
    natural run vs the twin], "poisoned", "twin_poisoned", "timeout": bool}; `sanitizers`:
    {"racecheck": {"errors"}, "synccheck": {"errors"}}.  RUN: {"mismatches" (vs natural),
    "vs_poisoned", "wrong"/"wrong_repeat" (two runs vs the twin's output), "timeout", "crashed"}.

    With a correct twin the strongest evidence is a delay whose two runs both differ from the
    twin's output while the same delay leaves the twin alone: the schedule reproduces the failure
    (unless every natural run is already wrong: then no delay is needed).  Without one, a delay
    counts by what it changed beyond the poison-only run.  Returns the verdict, the delay and
    mismatches behind it, what was tried and any harness error."""
    tried: list[str] = []
    harness: list[str] = []
    best: tuple[int, str] | None = None
    repro: tuple[int, str] | None = None           # a delay whose repeated runs were both wrong
    hang = bool(natural.get("timeout"))
    twin_ok = not natural.get("twin_poisoned")     # the twin's output is a correct answer to compare with
    for d in finding.get("delays", []):
        run, control = d.get("variant"), d.get("control")
        changed, twin = _changed(run), _changed(control)
        if run and run.get("timeout"):
            hang = True
        note = d["describe"] + (": timeout" if run and run.get("timeout") else
                                ": crashed" if run and run.get("crashed") else
                                f": {changed} changed" if changed is not None else ": not run")
        if control is not None:
            note += f", twin {twin} changed" if twin is not None else ", twin not run"
        tried.append(note)
        if twin:
            if not natural.get("twin_poisoned") or control.get("vs_poisoned") is not None:
                harness.append(f"{d['describe']} changed the fixed twin's output ({twin} elements)")
            continue
        if changed and (best is None or changed > best[0]):
            best = (changed, d["describe"])
        wrong = [int(run.get(k) or 0) for k in ("wrong", "wrong_repeat")] if run and not run.get("crashed") else []
        if twin_ok and len(wrong) == 2 and all(wrong) and twin is not None:
            tried[-1] += f"; wrong against the twin in both runs ({wrong[0]}, {wrong[1]})"
            if repro is None or min(wrong) > repro[0]:
                repro = (min(wrong), d["describe"])
    out: dict[str, Any] = {"tried": tried, "harness_error": "; ".join(harness) or None}
    if natural.get("twin_poisoned"):
        out["twin_note"] = (f"the twin's instrumented build without a delay already differs from the unedited twin "
                            f"({natural['twin_poisoned']} elements): the twin reads shared memory nothing wrote, or "
                            f"the build changes its result; its delayed runs are compared with that build instead")
    if best is not None:        # the outcome depends on the schedule (also where every natural run fails)
        out["schedule_dependent"] = f"{best[1]}: {best[0]} changed"
    rc = (sanitizers.get("racecheck") or {}).get("errors") or 0
    sc = (sanitizers.get("synccheck") or {}).get("errors") or 0
    runs = natural.get("runs") or []
    noise = max((r.get("mismatches") or 0 for r in runs[1:]), default=0)
    wrong_runs = natural.get("wrong_runs") or []
    if twin_ok and wrong_runs and all(wrong_runs):
        out.update(verdict=CONFIRMED_OUTPUT, delay=f"none (every natural run wrong: {len(wrong_runs)} runs)",
                   mismatches=min(wrong_runs))
    elif repro is not None:
        out.update(verdict=CONFIRMED_FORCED, delay=repro[1], mismatches=repro[0],
                   natural_wrong_runs=f"{sum(1 for w in wrong_runs if w)} of {len(wrong_runs)}")
    elif noise:
        out.update(verdict=CONFIRMED_OUTPUT, delay="none (natural runs differ)", mismatches=noise)
    elif best is not None:
        out.update(verdict=CONFIRMED_FORCED, delay=best[1], mismatches=best[0])
    elif natural.get("wrong"):
        out.update(verdict=CONFIRMED_OUTPUT, delay="none (natural schedule)", mismatches=natural["wrong"])
    elif natural.get("poisoned") and not natural.get("twin_poisoned"):
        out.update(verdict=CONFIRMED_OUTPUT, delay="none (shared memory poisoned at entry)",
                   mismatches=natural["poisoned"])
    elif rc:
        out.update(verdict=CONFIRMED_RACECHECK, delay=None, mismatches=None, racecheck_errors=rc)
    elif sc:
        out.update(verdict=CONFIRMED_SYNCCHECK, delay=None, mismatches=None, synccheck_errors=sc)
    elif hang:
        out.update(verdict=CONFIRMED_HANG, delay=None, mismatches=None)
    else:
        out.update(verdict=NOT_REPRODUCED, delay=None, mismatches=0)
    out["racecheck_errors"], out["synccheck_errors"] = rc, sc
    return out


def control_changes(cases: list[dict[str, Any]]) -> tuple[int, int]:
    """(twin runs under a delay that changed the twin's output, twin runs compared) over cases."""
    changed = compared = 0
    for case in cases:
        for f in case.get("findings", []):
            for d in f.get("delays", []):
                n = _changed(d.get("control"))
                if n is not None:
                    compared += 1
                    changed += bool(n)
    return changed, compared


def properties(v: dict[str, Any]) -> dict[str, Any]:
    """The JSON/SARIF properties of a finding: `verify.verdict`, `verify.delay`, `verify.mismatches`."""
    return {"verify.verdict": v["verdict"], "verify.delay": v.get("delay"), "verify.mismatches": v.get("mismatches")}


def render_table(rows: list[dict[str, Any]]) -> str:
    """One line per finding: case, rule, line, verdict, the delay and mismatches behind it."""
    from pipelint.report.table import columns

    table = [("case", "rule", "line", "verdict", "delay", "mismatches", "racecheck")]
    for r in rows:
        v = r["verify"]
        mism = "-" if v.get("mismatches") is None else str(v["mismatches"])
        table.append((r["case"], r["rule"], str(r["line"]), v["verdict"], v.get("delay") or "-", mism,
                      str(v.get("racecheck_errors", "-"))))
    lines = columns(table)
    errors = [f"{r['case']}:{r['line']}: {r['verify']['harness_error']}" for r in rows
              if r["verify"].get("harness_error")]
    if errors:
        lines.append("HARNESS ERROR (a delay changed a correct kernel's output): " + "; ".join(errors))
    return "\n".join(lines) + "\n"
