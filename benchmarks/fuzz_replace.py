"""Replace while analysing (issue 35): does a file saved while pipelint analyses it leave a
stale result in the cache?

    python benchmarks/fuzz.py 10000 --replace [--seed S] [--workers 2] [--minutes M]
    python benchmarks/fuzz_replace.py 10000 [--seed S] [--workers 2] [--minutes M]

Each case is a sandbox with one kernel file `k.cu` (version A: a mutant of a fixture from
`tests/fuzzing.py`, half of them with hostile `#line` names, a fixture itself, or a fixture with a
planted defect from `tests/mutants/mutate.py`) and an empty result cache (one case in five: a
cache already filled with A).  `pipelint check k.cu --cache-dir cache` runs in a forked child while
a second child, after a random delay (uniform over about the time such a check takes), replaces
the file: `os.replace` of a new version written next to it, an in-place rewrite (truncate and
write), an in-place overwrite of the same size (one digit changed: size and inode stay), or two
replacements (A -> B -> A, or A -> B -> C) at two random moments.  The new version B is the
fixture's planted-defect twin (or the fixture for a planted mutant), another random mutant of the
same fixture, the fixture itself, or A with one digit changed.

Then `check k.cu --cache-dir cache` (cached) and `check k.cu --no-cache` must give identical
`findings` for the file's current content.  The `--no-cache` result of each distinct content is
computed once per worker and reused (one reuse in twenty is run again and compared: a mismatch
there is nondeterminism, counted apart).

Figures: stale results (cached != --no-cache, must be 0), tracebacks or exit 3 (must be 0), files
missing from a report (must be 0), commands past the timeout, and how many replacements landed
while the check was running.

pipelint runs forked from a parent that has it imported, the grammar built and the plugins
loaded (benchmarks/fuzz_cache.py's `_run`), so a case costs its analyses and not interpreter starts.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "mutants"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_cache import _run  # noqa: E402
from fuzzing import KERNELS, _edit, hostile_mutants  # noqa: E402

TIMEOUT = 60.0
FIGURES = ("cases", "stale", "tracebacks", "missing", "timeouts", "landed", "nondeterministic", "commands")
METHODS = ("replace", "inplace", "same-size", "twice")


def sandbox_env(sandbox: Path) -> dict[str, str]:
    """The environment of every pipelint command: no PIPELINT_* or XDG_* of ours, no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPELINT", "XDG_"))}
    env.update(XDG_CACHE_HOME=str(sandbox / "xdg"), NO_COLOR="1")
    return env


def warm_up() -> None:
    """Import pipelint, build the grammar and load the plugins in this process, so that every
    forked command starts where a long-running one would be (the first run costs 0.25 s)."""
    from pipelint.cli import main as pipelint_main

    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="pipelint-warm-") as tmp:
        shutil.copyfile(KERNELS / "global_flag_sm_80_s0.cu", Path(tmp) / "k.cu")
        os.chdir(tmp)
        try:
            for extra in (["--no-cache"], ["--cache-dir", "cache"]):
                pipelint_main(["check", "k.cu", "--format", "json", "-o", "out.json", *extra])
        finally:
            os.chdir(here)


class Checker:
    """Runs `pipelint check FILE --format json` in a sandbox and judges its report."""

    def __init__(self, figures: dict[str, int], label: str) -> None:
        self.figures = figures
        self.label = label

    def check(self, sandbox: Path, what: str, *options: str, name: str = "k.cu",
              timeout: float = TIMEOUT) -> tuple[dict | None, str, float]:
        """(the JSON report or None, stderr, seconds); counts tracebacks, timeouts, missing files."""
        out = sandbox / f"report-{what}.json"
        with _suppress_missing():
            out.unlink()
        began = time.monotonic()
        code, err = _run(["check", name, "--format", "json", "-o", str(out), *options], sandbox,
                         sandbox_env(sandbox), timeout)
        seconds = time.monotonic() - began
        self.figures["commands"] += 1
        if code is None:
            self.figures["timeouts"] += 1
            print(f"{self.label} {what}: past {timeout:g} s", file=sys.stderr)
            return None, err, seconds
        if code == 3 or "Traceback" in err:
            self.figures["tracebacks"] += 1
            print(f"{self.label} {what}: exit {code}\n    {err.strip()[-600:]}", file=sys.stderr)
        try:
            report = json.loads(out.read_text(encoding="utf-8", errors="surrogateescape"))
        except (OSError, ValueError):
            self.figures["missing"] += 1
            print(f"{self.label} {what}: exit {code}, no JSON report\n    {err.strip()[-300:]}", file=sys.stderr)
            return None, err, seconds
        if name not in {f.get("path") for f in report.get("files", [])}:
            self.figures["missing"] += 1
            print(f"{self.label} {what}: {name} missing from the report", file=sys.stderr)
        return report, err, seconds


class _suppress_missing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], FileNotFoundError)   # type: ignore[arg-type]


# ------------------------------------------------------------------------------- versions
def _sources() -> tuple[dict[str, str], dict[str, list[str]]]:
    """The fixtures' texts by name, and by fixture the texts of its planted-defect mutants."""
    from mutate import all_mutants

    fixtures = {p.name: p.read_text() for p in sorted(KERNELS.glob("*.cu"))}
    planted: dict[str, list[str]] = {}
    for m in all_mutants():
        planted.setdefault(m.fixture, []).append(m.text)
    return fixtures, planted


def _fuzz_edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        if lines:
            _edit(lines, rng)
    return "\n".join(lines)


def _same_size(text: str, rng: random.Random) -> str | None:
    """`text` with one digit changed to another digit (same length, same size in bytes)."""
    digits = [m.start() for m in re.finditer(r"\d", text)]
    if not digits:
        return None
    i = rng.choice(digits)
    return text[:i] + rng.choice([d for d in "0123456789" if d != text[i]]) + text[i + 1:]


def make_case(i: int, seed: int, fuzzed: list[tuple[str, str]], fixtures: dict[str, str],
              planted: dict[str, list[str]]) -> dict:
    """Version A, the versions written over it in order, the method, and whether the cache is
    filled with A first: the same for a seed whatever the number of workers."""
    rng = random.Random(seed * 1_000_003 + i)
    roll = rng.random()
    if roll < 0.5:
        name, a = fuzzed[i % len(fuzzed)]
        fixture = name.split("_", 3)[3]               # fuzz_SEED_K_<fixture stem>.cu
        origin = "fuzz mutant"
    elif roll < 0.75:
        fixture = rng.choice(sorted(fixtures))
        a, origin = fixtures[fixture], "fixture"
    else:
        fixture = rng.choice(sorted(planted))
        a, origin = rng.choice(planted[fixture]), "planted mutant"
    method = rng.choice(METHODS)

    def another(current: str) -> str:
        kind = rng.randrange(4)
        if kind == 0:                   # the planted-defect twin: findings differ for sure
            twins = [t for t in [fixtures[fixture], *planted.get(fixture, [])] if t != current]
            if twins:
                return rng.choice(twins)
        if kind <= 1:
            return _fuzz_edit(fixtures[fixture], rng)
        if kind == 2 and fixtures[fixture] != current:
            return fixtures[fixture]
        return _same_size(current, rng) or _fuzz_edit(current, rng)

    if method == "same-size":
        b = _same_size(a, rng)
        method, writes = ("same-size", [b]) if b is not None else ("inplace", [another(a)])
    elif method == "twice":
        b = another(a)
        writes = [b, a if rng.random() < 0.5 else another(b)]
    else:
        writes = [another(a)]
    return {"i": i, "fixture": fixture, "origin": origin, "a": a, "writes": writes, "method": method,
            "prefill": rng.random() < 0.2, "fractions": [rng.random() for _ in writes], "slack": rng.uniform(0.0, 1.3)}


def _write_version(path: Path, text: str, method: str) -> None:
    data = text.encode("utf-8", errors="surrogateescape")
    if method in ("replace", "twice"):
        tmp = path.with_name(f".{path.name}.new")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    elif method == "same-size":          # no truncation: the inode and the size stay, mtime moves
        with open(path, "r+b") as fh:
            fh.write(data)
    else:
        with open(path, "wb") as fh:     # truncate, then write: a reader may see it half written
            fh.write(data)


def _replacer(path: Path, writes: list[str], delays: list[float], method: str) -> tuple[int, int]:
    """Fork a child that sleeps and writes each version; (pid, read end of a pipe that gets the
    monotonic time of each write)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            for text, delay in zip(writes, delays):
                time.sleep(delay)
                _write_version(path, text, method)
                os.write(write, f"{time.monotonic()!r}\n".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def run_case(case: dict, base: Path, figures: dict[str, int], memo: dict[str, list],
             estimate: dict[str, float], by_method: dict[str, list[int]]) -> None:
    i = case["i"]
    checker = Checker(figures, f"case {i} ({case['origin']} {case['fixture']}, {case['method']})")
    sandbox = base / f"c{i}"
    sandbox.mkdir()
    target = sandbox / "k.cu"
    target.write_text(case["a"], encoding="utf-8", errors="surrogateescape")
    if case["prefill"]:
        checker.check(sandbox, "prefill", "--cache-dir", "cache")
    span = estimate.get(case["fixture"], 0.15) * case["slack"]
    delays = [f * span for f in case["fractions"]]
    if len(delays) == 2:
        delays = [min(delays), abs(delays[1] - delays[0])]
    pid, pipe = _replacer(target, case["writes"], delays, case["method"])
    began = time.monotonic()
    _, _, seconds = checker.check(sandbox, "during", "--cache-dir", "cache")
    ended = time.monotonic()
    _, status = os.waitpid(pid, 0)
    with os.fdopen(pipe) as fh:
        stamps = [float(line) for line in fh.read().split()]
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"case {i}: the replacing child failed", file=sys.stderr)
    landed = any(began <= t <= ended for t in stamps)
    figures["landed"] += landed
    by_method.setdefault(case["method"], [0, 0])
    by_method[case["method"]][0] += 1
    by_method[case["method"]][1] += landed
    current = target.read_bytes()
    key = hashlib.sha256(current).hexdigest()
    cached, _, _ = checker.check(sandbox, "cached", "--cache-dir", "cache")
    again = key in memo and random.Random(i).random() < 0.05
    if key not in memo or again:
        reference, _, ref_seconds = checker.check(sandbox, "reference", "--no-cache")
        estimate[case["fixture"]] = max(seconds, ref_seconds)
        if reference is not None:
            if again and reference["findings"] != memo[key]:
                figures["nondeterministic"] += 1
                print(f"case {i}: two --no-cache runs of the same content differ", file=sys.stderr)
            memo[key] = reference["findings"]
    if cached is not None and key in memo and cached["findings"] != memo[key]:
        figures["stale"] += 1
        keep = base.parent / f"pipelint-stale-case-{i}"
        print(f"case {i} ({case['method']}): the cached run's findings differ from --no-cache's "
              f"({len(cached['findings'])} vs {len(memo[key])}); sandbox kept at {keep}", file=sys.stderr)
        shutil.copytree(sandbox, keep, symlinks=True, dirs_exist_ok=True)
    figures["cases"] += 1
    shutil.rmtree(sandbox, ignore_errors=True)


def _worker(w: int, workers: int, n: int, seed: int, deadline: float, base: Path, out: Path) -> None:
    fixtures, planted = _sources()
    fuzzed = hostile_mutants(min(n, 20000), seed)
    figures = dict.fromkeys(FIGURES, 0)
    memo: dict[str, list] = {}
    estimate: dict[str, float] = {}
    by_method: dict[str, list[int]] = {}
    for i in range(w, n, workers):
        if time.monotonic() > deadline:
            break
        run_case(make_case(i, seed, fuzzed, fixtures, planted), base, figures, memo, estimate, by_method)
        if figures["cases"] % 100 == 0:
            out.write_text(json.dumps({"figures": figures, "by_method": by_method}))
    out.write_text(json.dumps({"figures": figures, "by_method": by_method}))


def replace_fuzz(n: int, seed: int = 0, workers: int = 2, minutes: float = 0.0) -> int:
    warm_up()
    start = time.monotonic()
    deadline = start + minutes * 60 if minutes > 0 else float("inf")
    with tempfile.TemporaryDirectory(prefix="pipelint-replacefuzz-") as tmp:
        pids = []
        for w in range(workers):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    _worker(w, workers, n, seed, deadline, Path(tmp), Path(tmp) / f"worker{w}.json")
                    code = 0
                except BaseException:                 # noqa: BLE001 - said, then the figures are short
                    import traceback

                    traceback.print_exc()
                finally:
                    os._exit(code)
            pids.append(pid)
        failed = sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in pids)
        totals = dict.fromkeys(FIGURES, 0)
        by_method: dict[str, list[int]] = {}
        for w in range(workers):
            try:
                done = json.loads((Path(tmp) / f"worker{w}.json").read_text())
            except (OSError, ValueError):
                continue
            for k, v in done["figures"].items():
                totals[k] += v
            for k, (cases, landed) in done["by_method"].items():
                by_method.setdefault(k, [0, 0])
                by_method[k][0] += cases
                by_method[k][1] += landed
    seconds = time.monotonic() - start
    cut = f" (stopped after {minutes:g} min: {totals['cases']} of {n})" if totals["cases"] < n else ""
    print(f"replace while analysing: {totals['cases']} cases{cut}  seed: {seed}  workers: {workers}  "
          f"{seconds:.0f} s  {totals['commands']} pipelint processes")
    print(f"stale results: {totals['stale']}  tracebacks/exit 3: {totals['tracebacks']}  "
          f"files missing from a report: {totals['missing']}  past the {TIMEOUT:g} s timeout: {totals['timeouts']}  "
          f"--no-cache runs that differ: {totals['nondeterministic']}")
    print(f"replacements that landed while the check ran: {totals['landed']} of {totals['cases']}  " +
          "  ".join(f"{k}: {landed}/{cases}" for k, (cases, landed) in sorted(by_method.items())))
    if failed:
        print(f"{failed} worker(s) failed", file=sys.stderr)
    bad = sum(totals[k] for k in ("stale", "tracebacks", "missing", "timeouts", "nondeterministic")) + failed
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="cases run side by side (forked workers)")
    parser.add_argument("--minutes", type=float, default=0.0, help="start no case after this many minutes")
    args = parser.parse_args(argv)
    return replace_fuzz(args.n, args.seed, args.workers, args.minutes)


if __name__ == "__main__":
    sys.exit(main())
