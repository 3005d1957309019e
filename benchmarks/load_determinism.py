"""Same findings under load (issue 35): check one heavy kernel R times while N CPU-bound
processes compete for the cores, and compare the findings of every run.

    python benchmarks/load_determinism.py [FILE] [--spinners 6] [--runs 10]

FILE defaults to the largest .cu in ../shared/corpus/upstream/cu.  Each run is a fresh
`python -m pipelint check FILE --no-cache --format json`, as CI would run it; the time budget is
CPU time of the analysing process (a wall-clock backstop of 10x that, at least 120 s, stops only
hangs), so the load must not change what is reported.  Figures: runs, distinct `findings` lists
(must be 1), runs that hit a budget (analysis-limit / analysis-timeout), exit codes, and seconds
per run (wall and CPU of the pipelint process).  The spinners are killed however the script ends.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "upstream" / "cu"
BUDGET_RULES = {"analysis-limit", "analysis-timeout"}


def largest_corpus_kernel() -> Path:
    files = sorted(CORPUS.glob("*.cu"), key=lambda p: (p.stat().st_size, p.name))
    if not files:
        raise SystemExit(f"no .cu files in {CORPUS}: name a FILE")
    return files[-1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, help="the kernel (default: the largest corpus .cu)")
    parser.add_argument("--spinners", type=int, default=6, help="CPU-bound background processes")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one run may take")
    args = parser.parse_args(argv)
    path = args.file or largest_corpus_kernel()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINT")}
    spinners: list[subprocess.Popen] = []
    results: list[str] = []
    walls: list[float] = []
    cpus: list[float] = []
    codes: Counter[int] = Counter()
    budget_hits = 0
    first: dict = {}
    try:
        for _ in range(args.spinners):
            spinners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        print(f"{path} ({path.stat().st_size} bytes), {args.spinners} spinners on {os.cpu_count()} cores, "
              f"{args.runs} runs", flush=True)
        for r in range(args.runs):
            cpu_before, began = _children_cpu(), time.monotonic()
            out = subprocess.run([sys.executable, "-m", "pipelint", "check", str(path), "--no-cache",
                                  "--format", "json"], capture_output=True, text=True, env=env,
                                 timeout=args.timeout)
            walls.append(time.monotonic() - began)
            cpus.append(_children_cpu() - cpu_before)
            codes[out.returncode] += 1
            try:
                findings = json.loads(out.stdout)["findings"]
            except (ValueError, KeyError):
                findings = [{"no report": out.returncode, "stderr": out.stderr[-300:]}]
            first = first or {"findings": findings}
            hit = any(f.get("rule") in BUDGET_RULES for f in findings)
            budget_hits += hit
            text = json.dumps(findings, sort_keys=True)
            results.append(text)
            print(f"run {r + 1}: exit {out.returncode}, {len(findings)} findings "
                  f"[{hashlib.sha256(text.encode()).hexdigest()[:12]}], {walls[-1]:.1f} s wall, "
                  f"{cpus[-1]:.1f} s CPU{', hit a budget' if hit else ''}", flush=True)
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()
    distinct = len(set(results))
    rules = Counter(f.get("rule") for f in first.get("findings", []))
    print(f"runs: {len(results)}  distinct results: {distinct}  runs that hit a budget: {budget_hits}  "
          f"exit codes: {dict(codes)}")
    print(f"seconds per run: wall {min(walls):.1f}-{max(walls):.1f} (mean {sum(walls) / len(walls):.1f}), "
          f"CPU {min(cpus):.1f}-{max(cpus):.1f} (mean {sum(cpus) / len(cpus):.1f})")
    print(f"findings of run 1 by rule: {dict(sorted(rules.items()))}")
    return 0 if distinct == 1 and not budget_hits and 3 not in codes else 1


if __name__ == "__main__":
    sys.exit(main())
