"""Fuzz `pipelint check` with N seeded mutants of real kernels and print what went wrong.

    python benchmarks/fuzz.py 10000 [--seed S] [--batch 300] [--jobs J] [--no-hostile]
    python benchmarks/fuzz.py 1000 --walk [--seed S] [--batch 50] [--budget 60]
    python benchmarks/fuzz.py 1000 --cache-tree [--seed S]
    python benchmarks/fuzz.py 10000 --replace [--seed S] [--workers 2] [--minutes M]
    python benchmarks/fuzz.py 1000 --cache-entry [--seed S]

Each batch of mutants is checked by one `pipelint check --format json` process, as a user would
run it. Half of the mutants also name hostile files in their `#line` directives (terminal escape
sequences, C1 controls, bidirectional overrides, paths out of the project: `fuzzing.HOSTILE_NAMES`),
and each batch is then reported again, from the result cache, in every other format and with the
TileLang line first.  Figures: tracebacks (a process that exited 3 or printed one), internal errors
from the core, files missing from a report, control characters in any output (stdout or stderr,
any format), the slowest file, peak RSS of the checking processes.

`--walk` fuzzes what a checked repository decides about the walk instead (issue 38): each case is
a folder with a hostile `.gitignore` (star chains such as `*a*a*...*b`, `**/` chains, brackets,
negations, invalid and 5,000-character lines), 200-character file names, deep folders, and
links (to `/`, to a folder and a file outside the project, to itself, to `..`, dangling); each
batch is listed (`--show-files`) and checked (`--format json`) with hostile `--extend-exclude`
patterns.  Figures: batches past the budget (hangs), tracebacks, names from outside printed.

`--cache-tree` fuzzes what a checked repository can plant in a cache (issue 37): links, FIFOs,
foreign owners, forged tags and entry names outside the root; figures: files deleted or changed
outside the cache's own entries (`benchmarks/fuzz_cache.py`).

`--replace` replaces each kernel file while it is checked with the result cache (issue 35); a cached
and a `--no-cache` run of its current content must then agree: stale results, tracebacks, files
missing (`benchmarks/fuzz_replace.py`).  `--cache-entry` corrupts a filled cache's entries in hostile
ways (deep nesting, truncation, wrong shapes and types, NaN, binary, FIFOs, folders, links to
/dev/zero); the next run must match `--no-cache` and the one after be served from the healed cache
(`benchmarks/fuzz_cache_entry.py`).
"""
from __future__ import annotations

import argparse
import json
import random
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
    parser.add_argument("--walk", action="store_true", help="hostile walks: patterns, links, long names")
    parser.add_argument("--cache-tree", action="store_true",
                        help="hostile cache trees: links, FIFOs, foreign owners, entry names outside the root "
                             "(benchmarks/fuzz_cache.py)")
    parser.add_argument("--replace", action="store_true",
                        help="replace each file while it is analysed, then compare cached and --no-cache "
                             "(benchmarks/fuzz_replace.py)")
    parser.add_argument("--cache-entry", action="store_true",
                        help="hostile cache entries: corrupted, wrong shapes, FIFOs, links "
                             "(benchmarks/fuzz_cache_entry.py)")
    parser.add_argument("--workers", type=int, default=2, help="--replace: cases run side by side")
    parser.add_argument("--minutes", type=float, default=0.0, help="--replace: start no case after this many minutes")
    parser.add_argument("--budget", type=float, default=60.0, help="--walk: seconds a batch may take")
    args = parser.parse_args(argv)
    if args.replace:
        from fuzz_replace import replace_fuzz

        return replace_fuzz(args.n, args.seed, args.workers, args.minutes)
    if args.cache_entry:
        from fuzz_cache_entry import cache_entry_fuzz

        return cache_entry_fuzz(args.n, args.seed)
    if args.cache_tree:
        from fuzz_cache import cache_tree_fuzz

        return cache_tree_fuzz(args.n, args.seed)
    if args.walk:
        return walk_fuzz(args.n, args.seed, 50 if args.batch == 300 else args.batch, args.budget)
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


KERNEL = (Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kernels" / "global_flag_sm_80_s0.cu").read_text(
    encoding="utf-8")
OUTSIDE = "SECRET_OUTSIDE"          # in every name outside the project: printed nowhere


def hostile_pattern(rng: random.Random, valid: bool = False) -> str:
    """One gitignore line chosen to make a backtracking matcher hang, or (unless `valid`) to be
    invalid (git skips such a line in a .gitignore; an --extend-exclude one is a usage error)."""
    kind = rng.choice([0, 1, 2, 3, 5]) if valid else rng.randrange(8)
    if kind == 0:
        return "*a" * rng.randint(4, 40) + "*b"
    if kind == 1:
        return "**/a/" * rng.randint(4, 40) + "b"
    if kind == 2:
        return "/**/" + "a*" * rng.randint(2, 12) + "/**/" + "*a" * rng.randint(2, 12) + "*b/"
    if kind == 3:
        return "[!a]*" * rng.randint(4, 30) + "[b"
    if kind == 4:
        return rng.choice(["trailing\\", "!", "/", "[", "\\", "**", "!**/", "a" * 5000, "*" * 5000])
    if kind == 5:
        return "?" * rng.randint(1, 300) + "*a" * rng.randint(1, 20)
    atoms = ["*", "**", "a", "?", "/", "[ab]", "[!a]", "\\*", "!", " ", "."]
    return "".join(rng.choice(atoms) for _ in range(rng.randint(1, 60)))


def walk_case(root: Path, outside: Path, rng: random.Random) -> None:
    """A project folder a hostile repository could ship: patterns, long names, deep folders, links."""
    root.mkdir()
    (root / ".gitignore").write_text("\n".join(hostile_pattern(rng) for _ in range(rng.randint(1, 6))) + "\n")
    (root / f"{'a' * rng.randint(100, 200)}.cu").write_text(KERNEL)
    deep = root.joinpath(*(["a" * rng.randint(1, 40)] * rng.randint(1, 20)))
    deep.mkdir(parents=True)
    (deep / "k.cu").write_text(KERNEL)
    links = {"to_root": "/", "to_outside": str(outside), "loop.cu": "loop.cu", "up": "..",
             "dangling.cu": "/nonexistent/x.cu", f"{OUTSIDE}_file.cu": str(outside / f"{OUTSIDE}.cu")}
    for name in rng.sample(sorted(links), rng.randint(1, len(links))):
        (root / name).symlink_to(links[name])


def walk_fuzz(n: int, seed: int, batch: int, budget: float) -> int:
    """`--walk`: n hostile project folders, `batch` per pipelint process, each within `budget` s."""
    hangs = tracebacks = leaks = listed = 0
    slowest = 0.0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pipelint-walk-") as tmp:
        outside = Path(tmp) / f"{OUTSIDE}_dir"
        outside.mkdir()
        (outside / f"{OUTSIDE}.cu").write_text("// a file outside the project\n")
        for b in range(0, n, batch):
            project = Path(tmp) / f"b{b}"
            (project / ".git").mkdir(parents=True)
            rng = random.Random(seed * 1_000_003 + b)
            cases = [project / f"c{i}" for i in range(b, min(n, b + batch))]
            for case in cases:
                walk_case(case, outside, rng)
            excludes = ",".join(hostile_pattern(rng, valid=True) for _ in range(3))
            for options in (["--show-files"], ["--format", "json", "--no-cache"]):
                began = time.perf_counter()
                try:
                    out = subprocess.run([sys.executable, "-m", "pipelint", "check", *map(str, cases), *options,
                                          f"--extend-exclude={excludes}"], cwd=project, capture_output=True,
                                         text=True, errors="surrogateescape", timeout=budget)
                except subprocess.TimeoutExpired:
                    hangs += 1
                    print(f"batch {b} {options[0]}: still running after {budget:g} s", file=sys.stderr)
                    continue
                slowest = max(slowest, time.perf_counter() - began)
                tracebacks += _crashed(out, f"batch {b} {options[0]}")
                listed += out.stdout.count(".cu\n") if options == ["--show-files"] else 0
                if OUTSIDE in out.stdout or OUTSIDE in out.stderr:
                    leaks += 1
                    print(f"batch {b} {options[0]}: a name from outside the project was printed", file=sys.stderr)
    print(f"hostile walks: {n} cases in batches of {batch}  seed: {seed}  {time.perf_counter() - start:.0f} s")
    print(f"batches past the {budget:g} s budget (hangs): {hangs}  tracebacks: {tracebacks}  "
          f"names from outside printed: {leaks}  slowest batch: {slowest:.1f} s  files listed: {listed}")
    return 1 if hangs or tracebacks or leaks else 0


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
