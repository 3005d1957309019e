"""Run a manifest of raw-launched kernels on a GPU: control vs edited, racecheck, synccheck.

For every case of the manifest (a TileLang-generated .cu whose Python source we do not have) the
unedited text (the control) and each edit (lines deleted: a planted defect, or barriers/waits
pipelint calls removable) are built with raw_launch.py, run twice (the control must agree with
itself), compared with the control's output, and run under each compute-sanitizer tool with a
per-run timeout.  Everything goes into OUT/raw_launch.json; the sanitizers' report lines into
OUT/raw_launch_logs.txt.

    benchmarks/validation/run_raw.sh MANIFEST.json OUT_DIR [--jobs 8] [--timeout 60]   # on the GPU
    python benchmarks/validation/run_raw.py MANIFEST.json OUT_DIR --dry-run          # build only (no GPU)
    python benchmarks/validation/run_raw.py --table OUT_DIR/raw_launch.json          # the Markdown table

Manifest (paths relative to the working directory, else to the manifest):

    {"cases": [{"id": "gemm", "cu": ".carry/inputs/gemm.cu", "grid": "1,1,1", "params": {"K": 64},
                "fast_math": false, "expect": "clean", "question": "...",
                "edits": [{"id": "drop-barrier-79", "delete_lines": [79], "expect": "race"},
                          {"id": "delay", "replace_lines": {"48": "__nanosleep(1000);"}, "scrub_smem": true}]}]}

`reference` (optional) = {"got": EXPR, "want": EXPR, "atol": .., "rtol": ..}: numpy expressions over
the dumped buffers by parameter name (a manifest is trusted: it is evaluated), checked on each variant.
`expect` is "race" (racecheck must report errors), "clean" (no racecheck/synccheck errors, the
reference if there is one and, for a deletion, the control's exact output), "wrong-output" (an
instrumented schedule, `replace_lines`, must break the output) or omitted; each variant's record says whether it held.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import raw_launch

TOOLS = {
    "racecheck": ["--tool", "racecheck", "--racecheck-report", "analysis", "--print-limit", "100"],
    "racecheck-hazard": ["--tool", "racecheck", "--racecheck-report", "hazard", "--print-limit", "12"],
    "synccheck": ["--tool", "synccheck", "--print-limit", "100"],
}
DEFAULT_TOOLS = ("racecheck", "racecheck-hazard", "synccheck")


def run(cmd: list[str], timeout: float, cwd: Path | None = None) -> dict:
    """One process (in its own session, so a hang is killed with its children)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            cwd=cwd, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        timed_out = True
    return {"rc": None if timed_out else proc.returncode, "timeout": timed_out,
            "seconds": round(time.monotonic() - t0, 2), "output": out or ""}


def parse_sanitizer(tool: str, res: dict, build: Path) -> dict:
    text = res["output"].replace(str(build) + "/", "")
    found: dict = {"rc": res["rc"], "timeout": res["timeout"], "seconds": res["seconds"],
                   "ran_to_end": "RAW_LAUNCH ok" in text}
    race = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    err = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
    if race:
        found.update(hazards_displayed=int(race.group(1)), errors=int(race.group(2)), warnings=int(race.group(3)))
    elif err:
        found.update(errors=int(err.group(1)))
    else:
        found.update(errors=None)
    reports = [ln for ln in text.splitlines() if ln.startswith("=========") and ln.strip("= ")]
    found["report_lines"] = reports[:40]
    found["reports"] = sum(1 for ln in reports if re.match(r"=+ (Error|Warning)", ln))
    # each hazard's .cu lines (the text keeps the .cu's numbering: #line directives are comments)
    found["hazard_counts_by_lines"] = {}
    loc = r"([\w.+-]+\.(?:cu|cuh|h|hpp)):(\d+)"
    first = None
    # "Race reported between W access at ..F:L", then lines "and R access at ..F:L [N hazards]"
    for ln in text.splitlines():
        m = re.search(rf"Race reported between (\w+) access at .*?{loc}", ln)
        if m:
            first = f"{m.group(1)} {m.group(2)}:{m.group(3)}"
            ln = ln[m.end():]
        m = re.search(rf"\band (\w+) access at .*?{loc}(.*)", ln)
        if m and first:
            n = re.search(r"\[(\d+) hazards?\]", m.group(4))
            key = f"{first} vs {m.group(1)} {m.group(2)}:{m.group(3)}"
            counts = found["hazard_counts_by_lines"]
            counts[key] = counts.get(key, 0) + int(n.group(1) if n else 1)
    thread = rf"=+\s+(\w+) Thread \((\d+),\s*\d+,\s*\d+\) at [^\n]*?{loc}"
    hazard = r"Potential (\w+) hazard detected at __shared__ (0x[0-9a-f]+)"
    for m in re.finditer(rf"{hazard}[^\n]*\n{thread}[^\n]*\n{thread}", text):
        if len(found.setdefault("hazard_samples", [])) < 12:
            found["hazard_samples"].append(
                f"{m.group(1)} at smem {m.group(2)}: {m.group(3)} t{m.group(4)} {m.group(5)}:{m.group(6)} / "
                f"{m.group(7)} t{m.group(8)} {m.group(9)}:{m.group(10)}")
    found["cited_lines"] = dict(Counter(f"{f}:{n}" for f, n in re.findall(loc, text)).most_common(20))
    if not race and not err:
        found["tail"] = text[-1500:]
    return found


def _resolve(path: str, manifest: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() or p.exists() else (manifest.parent / p)


def variants_of(case: dict) -> list[dict]:
    control: dict = {"id": "control", "delete_lines": [], "expect": case.get("expect")}
    return [control, *case.get("edits", [])]


def build_variant(case: dict, variant: dict, cu: Path, build: Path, arch: str) -> dict:
    grid = raw_launch._parse_triple(str(case.get("grid", "1,1,1")))
    block = raw_launch._parse_triple(str(case["block"])) if case.get("block") else None
    smem = case.get("smem")
    record: dict = {"delete_lines": variant.get("delete_lines", []), "replace_lines": variant.get("replace_lines"),
                    "scrub_smem": bool(variant.get("scrub_smem", case.get("scrub_smem"))),
                    "expect": variant.get("expect"), "note": variant.get("note")}
    try:
        meta = raw_launch.generate(cu, build, kernel_name=case.get("kernel"), grid=grid, block=block,
                                   scalars={k: str(v) for k, v in case.get("params", {}).items()},
                                   smem=smem, delete_lines=variant.get("delete_lines", []),
                                   seed=case.get("seed", 0), arch=arch, fast_math=bool(case.get("fast_math")),
                                   replace_lines={int(k): v for k, v in variant.get("replace_lines", {}).items()},
                                   scrub_smem=bool(variant.get("scrub_smem", case.get("scrub_smem"))))
    except raw_launch.Refused as exc:
        record["refused"] = str(exc)
        return record
    record["deleted"] = meta["deleted"]
    for want in variant.get("expect_deleted", []):     # guard: the line still holds what the claim named
        if not any(want in d["text"] for d in meta["deleted"]):
            record["warning"] = f"expected a deleted line with {want!r}"
    record["meta"] = {k: meta[k] for k in ("kernel", "threads", "grid", "block", "smem_requested", "scalars")}
    record["build"] = raw_launch.build_binary(build, arch, bool(case.get("fast_math")))
    if record["build"]["ok"]:
        record["build"].pop("log", None)
    return record


def gpu_runs(record: dict, build: Path, tools: tuple[str, ...], timeout: float, pool: ThreadPoolExecutor) -> None:
    exe = str(build / "raw_launch")
    jobs = {f"run{i}": pool.submit(run, [exe, str(build / f"out{i}.bin")], timeout) for i in (1, 2)}
    for tool in tools:
        jobs[tool] = pool.submit(run, ["compute-sanitizer", *TOOLS[tool], exe, str(build / f"{tool}.bin")], timeout)
    results = {k: f.result() for k, f in jobs.items()}
    record["runs"] = []
    for i in (1, 2):
        r = results[f"run{i}"]
        record["runs"].append({"rc": r["rc"], "timeout": r["timeout"], "seconds": r["seconds"],
                               "ok": "RAW_LAUNCH ok" in r["output"],
                               "output": [ln for ln in r["output"].splitlines() if ln.strip()][-4:]})
    for tool in tools:
        record[tool] = parse_sanitizer(tool, results[tool], build)
        record[tool]["_log"] = results[tool]["output"]
    if all(r["ok"] for r in record["runs"]) and (build / "out1.bin").is_file() and (build / "out2.bin").is_file():
        meta = json.loads((build / "meta.json").read_text())
        record["run2_vs_run1"] = raw_launch.compare(meta, build / "out1.bin", build / "out2.bin")
        record["deterministic"] = record["run2_vs_run1"]["identical"]


def verdict(record: dict, control: dict | None) -> None:
    rc = record.get("racecheck", {})
    sc = record.get("synccheck", {})
    race = (rc.get("errors") or 0) > 0
    parts = []
    if record.get("refused"):
        record["verdict"] = "refused: " + record["refused"]
        return
    if not record.get("build", {}).get("ok"):
        record["verdict"] = "build failed"
        return
    if not record.get("runs"):
        record["verdict"] = "built, not run"
        return
    if any(r["timeout"] for r in record.get("runs", [])):
        parts.append("hang (timeout)")
    elif not all(r["ok"] for r in record.get("runs", [])):
        parts.append("run failed")
    parts.append(f"racecheck {rc.get('errors')} errors/{rc.get('warnings')} warnings" if rc else "racecheck not run")
    parts.append(f"synccheck {sc.get('errors')} errors" if sc else "synccheck not run")
    if "vs_control" in record:
        vc = record["vs_control"]
        parts.append("output = control" if vc["identical"] else
                     ("output differs from control" + ("" if vc.get("within_tolerance") else " beyond tolerance")))
    if "reference" in record:
        ref = record["reference"]
        parts.append(f"reference check error {ref['error']}" if "error" in ref else
                     f"{'matches' if ref['matches'] else 'does not match'} the reference "
                     f"(max abs error {ref['max_abs_error']:.3g})")
    if record.get("deterministic") is False:
        parts.append("two plain runs differ")
    record["verdict"] = "; ".join(parts)
    expect = record.get("expect")
    if expect == "race":
        record["expectation_met"] = race
    elif expect == "wrong-output":       # a timing instrumentation: the output must break
        ref = record.get("reference", {})
        record["expectation_met"] = (ref.get("matches") is False
                                     or record.get("vs_control", {}).get("identical") is False)
    elif expect == "clean":
        same = record.get("vs_control", {}).get("identical", True) if not record.get("replace_lines") else True
        if "reference" in record:
            same = same and record["reference"].get("matches", False)
        record["expectation_met"] = (not race and not (sc.get("errors") or 0) and same
                                     and all(r["ok"] for r in record.get("runs", [])))


def environment() -> dict:
    env = {}
    for key, cmd in {"gpu": ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
                     "nvcc": ["nvcc", "--version"], "compute_sanitizer": ["compute-sanitizer", "--version"]}.items():
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()
            env[key] = out[-1] if key != "gpu" else out
        except (OSError, subprocess.TimeoutExpired) as exc:
            env[key] = f"unavailable: {exc}"
    try:
        env["tilelang_include_dirs"] = raw_launch.tilelang_include_dirs()
    except raw_launch.Refused as exc:
        env["tilelang_include_dirs"] = str(exc)
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (plain or sanitized)")
    ap.add_argument("--tools", default=",".join(DEFAULT_TOOLS), help=f"of {', '.join(TOOLS)}")
    ap.add_argument("--only", default=None, help="case ids (comma-separated)")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--build-dir", default=None, help="where builds go (default /tmp/raw_launch_builds)")
    ap.add_argument("--dry-run", action="store_true", help="generate and build only")
    ap.add_argument("--table", default=None, metavar="RECORD.json", help="print a Markdown table of a record")
    ap.add_argument("--static", nargs=2, default=None, metavar=("RECORD.json", "OUT.json"),
                    help="join pipelint's findings on each variant's text into a record (CPU side; MANIFEST "
                         "as the first argument); the reports of raw_launch_logs.txt beside RECORD are re-read")
    ap.add_argument("--pipelint", default=f"{sys.executable} -m pipelint", help="the pipelint command for --static")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return 0
    if args.static:
        if not args.manifest:
            ap.error("--static needs MANIFEST.json")
        record = json.loads(Path(args.static[0]).read_text())
        log_file = Path(args.static[0]).with_name("raw_launch_logs.txt")
        if log_file.is_file():
            print(f"re-read {reparse_logs(record, log_file.read_text())} report(s) from {log_file}", file=sys.stderr)
        static_join(record, Path(args.manifest), args.pipelint.split())
        Path(args.static[1]).write_text(json.dumps(record, indent=2) + "\n")
        print(table(record))
        return 0
    if not args.manifest or not args.out:
        ap.error("MANIFEST.json OUT_DIR")
    manifest_path = Path(args.manifest)
    manifest = json.loads(manifest_path.read_text())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    builds = Path(args.build_dir) if args.build_dir else Path("/tmp/raw_launch_builds")
    tools = tuple(t for t in args.tools.split(",") if t)
    only = set(args.only.split(",")) if args.only else None
    cases = [c for c in manifest["cases"] if only is None or c["id"] in only]
    t0 = time.monotonic()
    doc: dict = {"manifest": str(manifest_path), "description": manifest.get("description"),
                 "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "tools": {t: TOOLS[t] for t in tools},
                 "timeout_s": args.timeout, "arch": args.arch, "environment": environment(), "cases": []}
    print(json.dumps(doc["environment"], indent=1), flush=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending = []
        for case in cases:
            cu = _resolve(case["cu"], manifest_path)
            entry = {k: case.get(k) for k in ("id", "cu", "source", "question", "grid", "params", "fast_math",
                                                  "expect", "reference")}
            entry["sha256"] = hashlib.sha256(cu.read_bytes()).hexdigest() if cu.exists() else None
            entry["variants"] = {}
            doc["cases"].append(entry)
            for v in variants_of(case):
                b = builds / case["id"] / v["id"]
                pending.append((entry, v["id"], b, pool.submit(build_variant, case, v, cu, b, args.arch)))
        for entry, vid, _, fut in pending:
            entry["variants"][vid] = fut.result()
            rec = entry["variants"][vid]
            print(f"built {entry['id']}/{vid}: {rec.get('refused') or rec['build']}", flush=True)
        print(f"builds done at {time.monotonic() - t0:.0f} s", flush=True)
        if not args.dry_run:
            with ThreadPoolExecutor(max_workers=max(1, len(pending))) as outer:
                futs = [outer.submit(gpu_runs, entry["variants"][vid], b, tools, args.timeout, pool)
                        for entry, vid, b, _ in pending if entry["variants"][vid].get("build", {}).get("ok")]
                for f in futs:
                    f.result()
    logs = []
    for entry in doc["cases"]:
        control = entry["variants"].get("control")
        for vid, rec in entry["variants"].items():
            b = builds / entry["id"] / vid
            if vid != "control" and control and rec.get("runs") and control.get("runs") \
                    and (b / "out1.bin").is_file() and (builds / entry["id"] / "control" / "out1.bin").is_file():
                meta = json.loads((b / "meta.json").read_text())
                rec["vs_control"] = raw_launch.compare(meta, builds / entry["id"] / "control" / "out1.bin",
                                                       b / "out1.bin")
            if entry.get("reference") and rec.get("runs") and (b / "out1.bin").is_file():
                meta = json.loads((b / "meta.json").read_text())
                try:
                    rec["reference"] = raw_launch.check_reference(meta, b / "out1.bin", entry["reference"])
                except Exception as exc:  # noqa: BLE001 - a bad expression is recorded, not fatal
                    rec["reference"] = {"error": f"{type(exc).__name__}: {exc}"}
            verdict(rec, control)
            for tool in tools:
                if tool in rec:
                    log = rec[tool].pop("_log", "")
                    logs.append(f"##### {entry['id']}/{vid} {tool} (rc {rec[tool]['rc']})\n"
                                + "\n".join(log.replace(str(b) + "/", "").splitlines()[:150]) + "\n")
            print(f"{entry['id']}/{vid}: {rec.get('verdict')}  expectation_met={rec.get('expectation_met')}",
                  flush=True)
    doc["seconds"] = round(time.monotonic() - t0, 1)
    (out / "raw_launch.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "raw_launch_logs.txt").write_text("\n".join(logs))
    print(f"wrote {out / 'raw_launch.json'} ({doc['seconds']} s)")
    return 0


def static_join(doc: dict, manifest_path: Path, pipelint: list[str]) -> None:
    """pipelint's verdict on each variant's exact text (regenerated here from the manifest: the
    generation is deterministic), joined into the record as `static` (run on the CPU side)."""
    import tempfile

    manifest = json.loads(manifest_path.read_text())
    cases = {c["id"]: c for c in manifest["cases"]}
    for entry in doc["cases"]:
        case = cases.get(entry["id"])
        if case is None:
            continue
        cu = _resolve(case["cu"], manifest_path)
        if entry.get("sha256") and hashlib.sha256(cu.read_bytes()).hexdigest() != entry["sha256"]:
            entry["static_error"] = f"{cu} is not the file the GPU ran (sha256 differs)"
            continue
        for v in variants_of(case):
            rec = entry["variants"].get(v["id"])
            if rec is None:
                continue
            text, _ = raw_launch.edit_text(cu.read_text(encoding="utf-8"), sorted(set(v.get("delete_lines", []))),
                                           False, {int(k): t for k, t in v.get("replace_lines", {}).items()})
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "kernel.cu"
                path.write_text(text, encoding="utf-8")
                proc = subprocess.run([*pipelint, "check", str(path), "--format", "json", "--exit-zero", "--no-cache"],
                                      capture_output=True, text=True)
            try:
                found = json.loads(proc.stdout)["findings"]
            except (ValueError, KeyError):
                rec["static"] = {"error": (proc.stdout + proc.stderr)[-500:]}
                continue
            rec["static"] = [{"rule": f["rule"], "severity": f["severity"], "line": f["line"],
                              "message": f["message"]} for f in found]


def reparse_logs(doc: dict, logs: str) -> int:
    """Re-read the sanitizer reports of OUT/raw_launch_logs.txt with this version's parser (the
    counts by line and the hazard samples; only a tool's log that reached its summary line)."""
    parts = re.split(r"^##### (\S+)/(\S+) (\S+) \(rc [^)]*\)\n", logs, flags=re.M)
    changed = 0
    for i in range(1, len(parts) - 3, 4):
        cid, vid, tool, body = parts[i:i + 4]
        entry = next((c for c in doc["cases"] if c["id"] == cid), None)
        rec = entry["variants"].get(vid, {}).get(tool) if entry else None
        if not rec or not re.search(r"RACECHECK SUMMARY|ERROR SUMMARY", body):
            continue
        new = parse_sanitizer(tool, {"output": body, "rc": rec["rc"], "timeout": rec["timeout"],
                                     "seconds": rec["seconds"]}, Path("/nonexistent"))
        for key in ("hazard_counts_by_lines", "hazard_samples"):
            if new.get(key) and new[key] != rec.get(key):
                rec[key] = new[key]
                rec["reparsed"] = "counts/samples re-read from the log by a later parser"
                changed += 1
    return changed


def table(doc: dict) -> str:
    rows = ["| case | variant | edit | racecheck errors (warnings) | synccheck errors | output vs control | "
            "reference | runs agree | pipelint errors | expected | met |", "|---" * 11 + "|"]
    for entry in doc["cases"]:
        for vid, rec in entry["variants"].items():
            rc, sc = rec.get("racecheck", {}), rec.get("synccheck", {})
            vc = rec.get("vs_control")
            out = "-" if vc is None else ("identical" if vc["identical"] else
                                          ("differs" + ("" if vc.get("within_tolerance") else " (beyond tol.)")))
            dl = ", ".join(("~" if "replaced_by" in d else "-") + str(d["line"]) for d in rec.get("deleted", [])) or "-"
            ref = rec.get("reference")
            refs = "-" if not ref else ("error" if "error" in ref else "matches" if ref["matches"] else
                                        f"{ref['mismatched']} wrong ({ref['nonfinite']} NaN)")
            st = rec.get("static")
            stat = "-" if st is None else ("error" if isinstance(st, dict) else
                                           ", ".join(sorted({f"{f['rule']}@{f['line']}" for f in st
                                                             if f["severity"] == "error"})) or "none")
            rows.append(f"| {entry['id']} | {vid} | {dl} | {rc.get('errors')} ({rc.get('warnings')}) | "
                        f"{sc.get('errors')} | {out} | {refs} | {rec.get('deterministic')} | {stat} | "
                        f"{rec.get('expect') or '-'} | {rec.get('expectation_met', '-')} |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
