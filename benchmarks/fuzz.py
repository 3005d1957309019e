"""Fuzz `pipelint check` with N seeded mutants of real kernels and print what went wrong.

    python benchmarks/fuzz.py 10000 [--seed S] [--batch 300] [--jobs J] [--no-hostile]

Each batch of mutants is checked by one `pipelint check --format json` process, as a user would
run it. Half of the mutants also name hostile files in their `#line` directives (terminal escape
sequences, C1 controls, bidirectional overrides, paths out of the project: `fuzzing.HOSTILE_NAMES`),
and each batch is then reported again, from the result cache, in every other format and with the
TileLang line first.  Figures: tracebacks (a process that exited 3 or printed one), internal errors
from the core, files missing from a report, control characters in any output (stdout or stderr,
any format), the slowest file, peak RSS of the checking processes.
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fuzzing import CONTROL, hostile_mutants, mutants

# the reports a person reads (and the machine ones), each from the cache the json run filled
REPORTS = [(fmt, "python") for fmt in ("text", "concise", "github", "gitlab", "junit", "sarif", "json")] + \
          [("text", "cuda"), ("github", "cuda"), ("junit", "cuda")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--no-hostile", action="store_true", help="no hostile #line names, json only")
    args = parser.parse_args(argv)
    tracebacks = internal = missing = hostile = 0
    controls: dict[str, int] = {}
    slowest = (0.0, "")
    start = time.perf_counter()
    all_mutants = mutants(args.n, args.seed) if args.no_hostile else hostile_mutants(args.n, args.seed)
    with tempfile.TemporaryDirectory(prefix="pipelint-fuzz-") as tmp:
        cache = ["--cache-dir", str(Path(tmp) / "cache")]
        for b in range(0, len(all_mutants), args.batch):
            folder = Path(tmp) / f"b{b}"
            folder.mkdir()
            names = []
            for name, text in all_mutants[b:b + args.batch]:
                (folder / name).write_text(text)
                names.append(str(folder / name))
                hostile += any(CONTROL.search(n) or ".." in n for n in re.findall(r'#\s*line\s+\d+\s+"([^"]*)"', text))
            out = _check(folder, ["--format", "json", "-j", str(args.jobs), *cache])
            tracebacks += _crashed(out, f"batch {b} json")
            if not args.no_hostile:
                for fmt, primary in REPORTS:
                    again = _check(folder, ["--format", fmt, "--primary-location", primary, *cache])
                    tracebacks += _crashed(again, f"batch {b} {fmt}/{primary}")
                    n = len(CONTROL.findall(again.stdout)) + len(CONTROL.findall(again.stderr))
                    if n:
                        controls[f"{fmt}/{primary}"] = controls.get(f"{fmt}/{primary}", 0) + n
            try:
                report = json.loads(out.stdout)
            except ValueError:
                missing += len(names)
                continue
            internal += sum(1 for e in report["errors"] if e.get("plugin") == "pipelint")
            seen = {f["path"] for f in report["files"]}
            missing += sum(1 for n in names if n not in seen)
            for f in report["findings"]:
                if f["rule"] == "analysis-limit":
                    slowest = max(slowest, (float(f["message"].split(" s ")[0].split()[-1]), f["path"]))
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"mutants: {len(all_mutants)} ({hostile} with hostile #line names)  seed: {args.seed}  "
          f"{time.perf_counter() - start:.0f} s")
    print(f"tracebacks: {tracebacks}  internal errors: {internal}  files missing from a report: {missing}")
    if not args.no_hostile:
        print(f"control characters in {len(REPORTS) + 1} outputs per batch: {sum(controls.values())} "
              f"{controls or ''}".rstrip())
    print(f"files stopped by the time budget: {'none' if not slowest[1] else slowest}")
    print(f"peak RSS of a checking process: {rss_mb:.0f} MB")
    return 1 if tracebacks or internal or missing or controls else 0


def _check(folder: Path, options: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelint", "check", str(folder), *options],
                          capture_output=True, text=True, errors="surrogateescape")


def _crashed(out: subprocess.CompletedProcess, what: str) -> int:
    """1 when the process exited 3 or printed a traceback (said on stderr, with its last lines)."""
    if out.returncode != 3 and "Traceback" not in out.stderr:
        return 0
    errors = [line for line in out.stdout.splitlines() if "tool error" in line or '"message"' in line][:3]
    tail = "\n    ".join([*out.stderr.strip().splitlines()[-3:], *errors])
    print(f"{what}: exit {out.returncode}\n    {tail}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
