"""Fuzz `pipelint check` with N seeded mutants of real kernels and print what went wrong.

    python benchmarks/fuzz.py 10000 [--seed S] [--batch 300] [--jobs J]

Each batch of mutants is checked by one `pipelint check --format json` process, as a user would
run it. Figures: tracebacks (a process that exited 3 or printed one), internal errors from the
core, files missing from a report, the slowest file, peak RSS of the checking processes.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fuzzing import mutants  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=0)
    args = parser.parse_args(argv)
    tracebacks = internal = missing = 0
    slowest = (0.0, "")
    start = time.perf_counter()
    all_mutants = mutants(args.n, args.seed)
    with tempfile.TemporaryDirectory(prefix="pipelint-fuzz-") as tmp:
        for b in range(0, len(all_mutants), args.batch):
            folder = Path(tmp) / f"b{b}"
            folder.mkdir()
            names = []
            for name, text in all_mutants[b:b + args.batch]:
                (folder / name).write_text(text)
                names.append(str(folder / name))
            out = subprocess.run([sys.executable, "-m", "pipelint", "check", str(folder), "--format", "json",
                                  "-j", str(args.jobs)],
                                 capture_output=True, text=True)
            if out.returncode == 3 or "Traceback" in out.stderr:
                tracebacks += 1
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
    print(f"mutants: {len(all_mutants)}  seed: {args.seed}  {time.perf_counter() - start:.0f} s")
    print(f"tracebacks: {tracebacks}  internal errors: {internal}  files missing from a report: {missing}")
    print(f"files stopped by the time budget: {'none' if not slowest[1] else slowest}")
    print(f"peak RSS of a checking process: {rss_mb:.0f} MB")
    return 1 if tracebacks or internal or missing else 0


if __name__ == "__main__":
    sys.exit(main())
