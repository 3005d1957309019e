"""Verdicts of forced-schedule runs (issue 36): pure, tested on recorded data without a GPU.

For one finding the evidence is: the unedited kernel's natural-schedule runs, one run per delay
variant (its output compared with the natural one: how many elements changed), the same delay on
the fixed twin (the control: must change nothing), compute-sanitizer racecheck/synccheck on the
unedited kernel and hang timeouts.  The verdict is the strongest evidence, in this order:

1. `confirmed by output` when the two natural runs already differ (a delay's effect could not be
   told from the noise);
2. `confirmed by forced schedule` — a delay changed the output while the same delay left the
   twin's output alone (or there is no twin); with the delay and the mismatch count.  Where
   every natural run is wrong, a delay whose two runs are both right (the late side forced after
   the early one: the missing order emulated) confirms by forced schedule before rule 1: the
   schedule, not some other defect, decides the output.  Every run
   poisons shared memory at entry, so a delay counts by what it changed beyond the poison-only
   run (`vs_poisoned`);
3. `confirmed by output` — the natural schedule's output is already wrong (against the twin's
   output or `--reference`), or poisoning shared memory alone changes it (a read of bytes no
   thread of the launch wrote), with no delay needed;
4. `confirmed by racecheck` / `confirmed by synccheck` — the sanitizer reported errors;
5. `confirmed by a hang` — a run timed out (an mbarrier waiting for a phase that never comes);
6. `not reproduced` — with what was tried.  Never "false": a schedule not found is not a proof.

Before all of these: a fixed twin that did not run (it crashed or hung) is `not run` with a
`harness_error`, never `not reproduced`: nothing was compared.  (Round 2's six row_sum mutants
were "not reproduced" because every launch, the twin's too, faulted on too little dynamic shared
memory.)

A STRETCH delay (the wgmma batch issued N times, buggy kernel and twin alike) changes what a correct
kernel computes (N times the product), so its runs have their own baselines (`comparisons`): a
stretch alone is compared with the *stretched twin* (the buggy kernel's wrong count) and the
stretched twin with a repeat of itself (the control); a stretch with a refill with the stretch
alone, on each side.  Records made before that (round 8) compared the stretched twin with the
unstretched one; such a delay is said to be void (`STRETCH_VOID`), never a harness error and
never a confirmation.

A delay that changes the *twin's* output is a bug in the harness (a delay must not change a
correct kernel), reported as `harness_error` on the run and never counted as a confirmation.  A
twin whose own output the poison changes reads shared memory nothing wrote: it is not a correct
kernel, and the run says so (`twin_note`) instead of blaming the harness.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONFIRMED_FORCED = "confirmed by forced schedule"
CONFIRMED_OUTPUT = "confirmed by output"
CONFIRMED_RACECHECK = "confirmed by racecheck"
CONFIRMED_SYNCCHECK = "confirmed by synccheck"
CONFIRMED_HANG = "confirmed by a hang"
NOT_REPRODUCED = "not reproduced"
NOT_RUN = "not run"
STRETCH = "stretch"
STRETCH_VOID = ("not compared: the record compares the stretched twin with the unstretched one "
                "(round 8's harness), so neither the control nor the wrong count means anything")


def comparisons(rows: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The runs each delay of a case is compared with, by delay number (the harness's run tags:
    `twin`, `v0`/`t0` the poison-only builds, `vK`/`tK` delay K on the buggy kernel/the twin,
    `tKr` a second run of `tK`).  `rows` are the plan's delay rows of every finding of the case
    (`number`, `mode`, `repeat`, `joint`: the modes of the delays active with it).

    - `wrong`: the twin run whose output is the right answer for this delay's runs;
    - `changed`: the buggy run whose output the delay is measured against (what it changed);
    - `control`, `control_base`: the twin run under the delay and the run it must equal;
    - `twin_repeat`: whether the control needs a second run of the stretched twin.

    A plain delay (spin, heal, refill, stress): the unedited twin, the poison-only build, the twin
    under the delay against the twin's poison-only build.  A STRETCH alone computes N times the
    product on both sides: the stretched twin is the answer, the control is its repeat.  A STRETCH
    with a joint refill (same N): the stretch alone is the base on both sides, so the control asks
    whether the refill changes the stretched twin."""
    alone = {int(r.get("repeat") or 0): int(r["number"]) for r in rows
             if r.get("mode") == STRETCH and not r.get("joint") and r.get("repeat")}
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        k = int(r["number"])
        if r.get("mode") != STRETCH:
            out[k] = {"wrong": "twin", "changed": "v0", "control": f"t{k}", "control_base": "t0", "twin_repeat": False}
            continue
        base = alone.get(int(r.get("repeat") or 0))
        if r.get("joint") and base is not None and base != k:
            out[k] = {"wrong": f"t{base}", "changed": f"v{base}", "control": f"t{k}", "control_base": f"t{base}",
                      "twin_repeat": False}
        else:          # the stretch alone (or a joint one without its stretch alone in the plan)
            out[k] = {"wrong": f"t{k}", "changed": f"t{k}", "control": f"t{k}r", "control_base": f"t{k}",
                      "twin_repeat": True}
    return out


def _void_stretch(d: dict[str, Any]) -> bool:
    """A STRETCH delay of a record whose comparisons predate `comparisons` (no `baseline` on its
    control): its control compared the stretched twin with the unstretched one."""
    control = d.get("control")
    return d.get("mode") == STRETCH and control is not None and "baseline" not in control


def _changed(run: dict[str, Any] | None) -> int | None:
    """Elements a run's output changed against its natural output (None: not compared)."""
    if not run or run.get("timeout") or run.get("crashed"):
        return None
    return run["vs_poisoned"] if run.get("vs_poisoned") is not None else run.get("mismatches")


@dataclass
class _Tally:
    """What the delays of one finding showed, gathered before any verdict is chosen."""

    tried: list[str] = field(default_factory=list)
    harness: list[str] = field(default_factory=list)
    best: tuple[int, str] | None = None        # the delay that changed the most (twin unchanged)
    repro: tuple[int, str] | None = None       # a delay whose repeated runs were both wrong
    heal: str | None = None                    # a delay whose repeated runs were both right
    hang: bool = False


def _wrong(run: dict[str, Any] | None) -> list[int]:
    """A delay's two runs compared with the twin's output ([] when not both compared)."""
    if not run or run.get("crashed") or run.get("timeout"):
        return []
    got = [run.get(k) for k in ("wrong", "wrong_repeat")]
    return [int(x) for x in got if x is not None] if all(x is not None for x in got) else []


def _note(d: dict[str, Any], changed: int | None, twin: int | None) -> str:
    run, control = d.get("variant"), d.get("control")
    note = d["describe"] + (": timeout" if run and run.get("timeout") else
                            ": crashed" if run and run.get("crashed") else
                            f": {changed} changed" if changed is not None else ": not run")
    if control is not None:
        note += f", twin {twin} changed" if twin is not None else ", twin not run"
    if run and run.get("baseline") and run["baseline"] != "v0":
        note += f" (against {run['baseline']}, twin against {(control or {}).get('baseline')})"
    if run and run.get("stress_overlapped") is False:
        note += "; the bandwidth hog had ended before the kernel did"
    return note


def _tally(finding: dict[str, Any], natural: dict[str, Any]) -> _Tally:
    t = _Tally(hang=bool(natural.get("timeout")))
    for d in finding.get("delays", []):
        _count(t, d, natural)
    return t


def _count(t: _Tally, d: dict[str, Any], natural: dict[str, Any]) -> None:
    """One delay into the tally: what it changed, whether it broke the twin (the harness), and
    whether its two runs were both wrong (a reproduction) or both right (a heal)."""
    run, control = d.get("variant"), d.get("control")
    if _void_stretch(d):
        t.tried.append(f"{d['describe']}: {STRETCH_VOID}")
        return
    changed, twin = _changed(run), _changed(control)
    t.hang = t.hang or bool(run and run.get("timeout"))
    t.tried.append(_note(d, changed, twin))
    if twin:       # a twin changed: `control` was run
        if not natural.get("twin_poisoned") or (control or {}).get("vs_poisoned") is not None:
            t.harness.append(f"{d['describe']} changed the fixed twin's output ({twin} elements)")
        return
    if changed and (t.best is None or changed > t.best[0]):
        t.best = (changed, d["describe"])
    twin_ok = not natural.get("twin_poisoned")     # the twin's output is a correct answer to compare with
    if twin_ok and twin is not None:
        _repeats(t, d, _wrong(run))


def _repeats(t: _Tally, d: dict[str, Any], wrong: list[int]) -> None:
    """A delay's two runs against the twin's output: both wrong reproduce, both right heal."""
    if len(wrong) != 2:
        return
    if all(wrong):
        t.tried[-1] += f"; wrong against the twin in both runs ({wrong[0]}, {wrong[1]})"
        if t.repro is None or min(wrong) > t.repro[0]:
            t.repro = (min(wrong), d["describe"])
    elif not any(wrong):
        t.tried[-1] += "; right (the twin's output) in both runs"
        t.heal = t.heal or d["describe"]


def _natural_facts(natural: dict[str, Any]) -> tuple[bool, list[int], int]:
    """(the twin is a correct answer, each natural run's wrong count vs the twin, the noise
    between natural runs)."""
    runs = natural.get("runs") or []
    noise = max((r.get("mismatches") or 0 for r in runs[1:]), default=0)
    return not natural.get("twin_poisoned"), list(natural.get("wrong_runs") or []), noise


def _decide(t: _Tally, natural: dict[str, Any], rc: int, sc: int) -> dict[str, Any]:
    """The strongest evidence, in the module's order (first match wins)."""
    twin_ok, wrong_runs, noise = _natural_facts(natural)
    every_wrong = twin_ok and bool(wrong_runs) and all(wrong_runs)
    if every_wrong and t.heal is not None:
        return {"verdict": CONFIRMED_FORCED, "mismatches": min(wrong_runs),
                "delay": f"{t.heal} (heals: every natural run wrong, both delayed runs right, twin unchanged)"}
    if every_wrong:
        return {"verdict": CONFIRMED_OUTPUT, "delay": f"none (every natural run wrong: {len(wrong_runs)} runs)",
                "mismatches": min(wrong_runs)}
    if t.repro is not None:
        return {"verdict": CONFIRMED_FORCED, "delay": t.repro[1], "mismatches": t.repro[0],
                "natural_wrong_runs": f"{sum(1 for w in wrong_runs if w)} of {len(wrong_runs)}"}
    ladder: list[tuple[Any, str, Any, Any, dict[str, Any]]] = [
        (noise, CONFIRMED_OUTPUT, "none (natural runs differ)", noise, {}),
        (t.best, CONFIRMED_FORCED, t.best and t.best[1], t.best and t.best[0], {}),
        (natural.get("wrong"), CONFIRMED_OUTPUT, "none (natural schedule)", natural.get("wrong"), {}),
        (natural.get("poisoned") and not natural.get("twin_poisoned"), CONFIRMED_OUTPUT,
         "none (shared memory poisoned at entry)", natural.get("poisoned"), {}),
        (rc, CONFIRMED_RACECHECK, None, None, {"racecheck_errors": rc}),
        (sc, CONFIRMED_SYNCCHECK, None, None, {"synccheck_errors": sc}),
        (t.hang, CONFIRMED_HANG, None, None, {}),
    ]
    for when, verdict, delay, mismatches, extra in ladder:
        if when:
            return {"verdict": verdict, "delay": delay, "mismatches": mismatches, **extra}
    return {"verdict": NOT_REPRODUCED, "delay": None, "mismatches": 0}


def finding_verdict(finding: dict[str, Any], natural: dict[str, Any], sanitizers: dict[str, Any]) -> dict[str, Any]:
    """`finding`: {"delays": [{"describe", "number", "variant": RUN, "control": RUN|None}]};
    `natural`: {"runs": [RUN, ...], "wrong": N|None (vs the twin or reference), "wrong_runs": [N per
    natural run vs the twin], "poisoned", "twin_poisoned", "timeout": bool}; `sanitizers`:
    {"racecheck": {"errors"}, "synccheck": {"errors"}}.  RUN: {"mismatches" (vs natural),
    "vs_poisoned", "wrong"/"wrong_repeat" (two runs vs the twin's output), "timeout", "crashed"}.

    With a correct twin the strongest evidence is a delay whose two runs both differ from the
    twin's output while the same delay leaves the twin alone: the schedule reproduces the failure
    (unless every natural run is already wrong: then a delay whose two runs are both *right*, the
    late side forced after the early one, shows that the order is the cause).  Without one, a
    delay counts by what it changed beyond the poison-only run.  Returns the verdict, the delay
    and mismatches behind it, what was tried and any harness error."""
    t = _tally(finding, natural)
    out: dict[str, Any] = {"tried": t.tried, "harness_error": "; ".join(t.harness) or None}
    if natural.get("twin_failed"):      # the harness could not run the fixed kernel: nothing was compared
        tail = " ".join(str(natural["twin_failed"]).split())[-200:]
        return {**out, "verdict": NOT_RUN, "delay": None, "mismatches": None,
                "harness_error": f"the fixed twin did not run ({tail}): the harness, not the kernel"}
    if natural.get("twin_poisoned"):
        out["twin_note"] = (f"the twin's instrumented build without a delay already differs from the unedited twin "
                            f"({natural['twin_poisoned']} elements): the twin reads shared memory nothing wrote, or "
                            f"the build changes its result; its delayed runs are compared with that build instead")
    if t.best is not None:        # the outcome depends on the schedule (also where every natural run fails)
        out["schedule_dependent"] = f"{t.best[1]}: {t.best[0]} changed"
    rc = (sanitizers.get("racecheck") or {}).get("errors") or 0
    sc = (sanitizers.get("synccheck") or {}).get("errors") or 0
    out.update(_decide(t, natural, rc, sc))
    out["racecheck_errors"], out["synccheck_errors"] = rc, sc
    return out


def control_changes(cases: list[dict[str, Any]]) -> tuple[int, int]:
    """(twin runs under a delay that changed the twin's output, twin runs compared) over cases."""
    changed = compared = 0
    for case in cases:
        for f in case.get("findings", []):
            for d in f.get("delays", []):
                n = None if _void_stretch(d) else _changed(d.get("control"))
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
