"""Speed of `pipelint check` against a tree-sitter-cuda parse of the same files, in one run.

    python benchmarks/bench_check.py [--repeat 3]

Corpus: tests/fixtures/kernels + benchmarks/corpus (real TileLang output; run
benchmarks/make_corpus.py first if the latter is empty).  Every figure is a
whole process (interpreter start, imports, grammar load included) timed with
`time.perf_counter` around `subprocess.run`, median of --repeat runs:

* tree-sitter-cuda: parse every file, nothing else (the peer);
* pipelint, 1 core: `pipelint check --jobs 1` (parse + model + all checks);
* pipelint, all cores: `pipelint check --jobs N` (processes across cores).

Also printed: in-process parse-only and parse+check throughput on one core.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE_SITTER = """
import sys, tree_sitter, tree_sitter_cuda
parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
errors = 0
for path in sys.argv[1:]:
    with open(path, 'rb') as fh:
        errors += parser.parse(fh.read()).root_node.has_error
print(errors)
"""


def corpus() -> list[str]:
    files = sorted((ROOT / "tests" / "fixtures" / "kernels").glob("*.cu"))
    files += sorted((ROOT / "benchmarks" / "corpus").glob("*.cu"))
    return [str(f) for f in files]


def timed(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return statistics.median(times)


def in_process(files: list[str]) -> tuple[float, float]:
    sys.path.insert(0, str(ROOT))
    from pipelint.cuda import parse
    from pipelint.engine import CheckOptions, run_check
    from pipelint.pluginhost import load_plugins

    texts = [Path(f).read_text() for f in files]
    parse(texts[0])
    start = time.perf_counter()
    for t in texts:
        parse(t)
    parse_s = time.perf_counter() - start
    host = load_plugins()
    start = time.perf_counter()
    run_check(files, host, CheckOptions(jobs=1))
    return parse_s, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = corpus()
    mb = sum(os.path.getsize(f) for f in files) / 2**20
    cores = os.cpu_count() or 1
    exe = [sys.executable, "-m", "pipelint.cli", "check", "--format", "json", "-o", os.devnull]
    ts = timed([sys.executable, "-c", TREE_SITTER, *files], args.repeat)
    one = timed([*exe, "--jobs", "1", *files], args.repeat)
    many = timed([*exe, "--jobs", str(cores), *files], args.repeat)
    parse_s, check_s = in_process(files)
    print(f"corpus: {len(files)} files, {mb:.2f} MB of TileLang-generated CUDA; {cores} cores")
    print(f"{'measurement':<44}{'seconds':>9}{'MB/s':>9}{'vs tree-sitter':>16}")
    rows = [("tree-sitter-cuda parse only (process)", ts),
            ("pipelint check, 1 core (process)", one),
            (f"pipelint check, {cores} processes (process)", many),
            ("pipelint parse only, 1 core (in process)", parse_s),
            ("pipelint parse+check, 1 core (in process)", check_s)]
    for name, sec in rows:
        ratio = f"{sec / ts:.1f}x" if "tree-sitter" not in name else "1.0x"
        print(f"{name:<44}{sec:>9.2f}{mb / sec:>9.2f}{ratio:>16}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
