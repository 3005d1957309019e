"""Speed of `pipelint check` against a tree-sitter-cuda parse of the same files, in one run.

    python benchmarks/bench_check.py [--repeat 3]

Corpus: tests/fixtures/kernels + benchmarks/corpus (real TileLang output; run
benchmarks/make_corpus.py first if the latter is empty) + ../shared/corpus/upstream/cu
(TileLang's own examples) when present.  Every figure is a whole process
(interpreter start, imports, grammar load included) timed with
`time.perf_counter` around `subprocess.run`, median of --repeat runs:

* tree-sitter-cuda: parse every file, nothing else (the peer);
* pipelint cold, 1 core: `pipelint check --no-cache --jobs 1` (parse + model + all checks);
* pipelint cold, -j auto: `pipelint check --no-cache` (processes across the cores);
* pipelint warm: `pipelint check` with a result cache filled by one earlier run,
  nothing changed;
* pipelint after one edit: the same cache, one file changed (only it is analysed);
* one kernel: `pipelint check --no-cache FILE` as its own process, for --one files spread evenly
  over the corpus (median and 90th percentile; issue 32's goal is 0.3 s, process start included),
  beside a bare `python -c pass` start-up measured the same way.

Before timing, pipelint's own modules are compiled to bytecode (`compileall`), as `pip install`
does for an installed wheel: a checkout run with PYTHONDONTWRITEBYTECODE set (this project's
machines set it) would otherwise compile about 80 modules from source in every process, 0.15 s
that no installed pipelint pays.

Also printed: in-process parse-only and parse+check throughput on one core.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
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
    files += sorted((ROOT.parent / "shared" / "corpus" / "upstream" / "cu").glob("*.cu"))
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
    run_check(files, host, CheckOptions(jobs=1))        # no cache: cold
    return parse_s, time.perf_counter() - start


def one_kernel(exe: list[str], files: list[str], count: int) -> tuple[float, float, float]:
    """(median, 90th percentile) seconds of one-file `pipelint check` processes over `count`
    files spread evenly over the corpus, and the interpreter's own start-up (the peer)."""
    step = max(1, len(files) // max(1, count))
    chosen = files[::step][:count]
    times = sorted(timed([*exe, "--no-cache", "--jobs", "1", f], 1) for f in chosen)
    bare = timed([sys.executable, "-c", "pass"], 5)
    return statistics.median(times), times[min(len(times) - 1, int(0.9 * len(times)))], bare


def compile_bytecode() -> None:
    """Write the `__pycache__` of the checkout's packages, as pip does at install time (see the
    module docstring): every process timed below reads bytecode, as an installed pipelint does."""
    import compileall

    for folder in ("analyzer", "plugins"):
        compileall.compile_dir(str(ROOT / folder), quiet=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--one", type=int, default=40, help="files timed one per process (0: skip)")
    args = ap.parse_args()
    files = corpus()
    compile_bytecode()
    mb = sum(os.path.getsize(f) for f in files) / 2**20
    cores = os.cpu_count() or 1
    exe = [sys.executable, "-m", "pipelint.cli", "check", "--format", "json", "-o", os.devnull]
    ts = timed([sys.executable, "-c", TREE_SITTER, *files], args.repeat)
    one = timed([*exe, "--no-cache", "--jobs", "1", *files], args.repeat)
    many = timed([*exe, "--no-cache", *files], args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        # a copy, so the edit below touches no file of the checkout
        copies = []
        for i, f in enumerate(files):
            copies.append(os.path.join(tmp, f"{i:04d}_{Path(f).name}"))
            shutil.copyfile(f, copies[-1])
        cached = [*exe, "--cache-dir", os.path.join(tmp, "cache"), *copies]
        timed(cached, 1)                                   # fill the cache
        warm = timed(cached, args.repeat)
        edits = []
        for n in range(args.repeat):
            with open(copies[0], "a") as fh:
                fh.write(f"// edit {n}\n")
            edits.append(timed(cached, 1))
        edited = statistics.median(edits)
    single = one_kernel(exe, files, args.one) if args.one else None
    parse_s, check_s = in_process(files)
    print(f"corpus: {len(files)} files, {mb:.2f} MB of TileLang-generated CUDA; {cores} cores")
    print(f"{'measurement':<44}{'seconds':>9}{'MB/s':>9}{'vs tree-sitter':>16}{'vs cold 1 core':>16}")
    rows = [("tree-sitter-cuda parse only (process)", ts),
            ("pipelint cold, 1 core (process)", one),
            ("pipelint cold, -j auto (process)", many),
            ("pipelint warm, nothing changed (process)", warm),
            ("pipelint warm, one file edited (process)", edited),
            ("pipelint parse only, 1 core (in process)", parse_s),
            ("pipelint parse+check, 1 core (in process)", check_s)]
    for name, sec in rows:
        print(f"{name:<44}{sec:>9.2f}{mb / sec:>9.2f}{sec / ts:>15.1f}x{one / sec:>15.1f}x")
    if single is not None:
        median, p90, bare = single
        print(f"one kernel per process ({args.one} files): median {median:.2f} s, 90th percentile {p90:.2f} s "
              f"(python start-up alone {bare:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
