"""Mutation testing of pipelint itself: can the test suite fail?

    python benchmarks/self_mutation.py [--rev REV | --worktree] [--exclude tests/FILE.py ...]
                                       [--overlay PATH ...] [--only NAME ...] [--jobs N] [--timeout S]
                                       [--json OUT] [--list]

Each entry of `MUTATIONS` is one plausible breakage of the model or of a plugin: a file, an exact
snippet of its source and the snippet's replacement (a flipped comparison, a dropped condition, a
changed constant, a barrier judged alone, ...).  For each, the script

1. takes a snapshot of the project (by default the committed tree of `--rev HEAD` through
   `git archive`, so that other people's uncommitted edits neither break the baseline nor leak
   into it; `--worktree` copies the working tree instead) into a temporary folder: `analyzer/`,
   `plugins/`, `grammars/` and `docs/rules/` laid out as the `pipelint` package exactly as
   setup.py maps them (`pipelint`, `pipelint.plugins`, `pipelint.grammars`, `pipelint.rule_docs`),
   plus `tests/`, `benchmarks/` (tests import from it) and `pyproject.toml` to run the suite from;
2. applies the mutation to that copy (the snippet must occur exactly once, else the mutation is
   reported `stale`: the source moved on and the entry must be updated);
3. checks that the interpreter imports the COPY: `python -c` imports the mutated module and fails
   unless its `__file__` lies in the copy and its source holds the replacement;
4. runs `pytest -x -p no:cacheprovider -m "not tilelang"` on a fast subset of the suite
   (`TEST_FILES`, those present in the snapshot) from the snapshot's root, with a timeout.

A mutation is *killed* when pytest fails (or times out), *survived* when every selected test
passes.  The unmutated copy is run first: if it does not pass, nothing can be concluded and the
script stops (exit 2).  Exit status 0 otherwise; the survival rate is printed with the table.

Why the copy is what runs: /work/main is installed editable in .venv.  setuptools' editable
install puts a meta-path finder (`__editable___pipelint_*_finder`) at the END of `sys.meta_path`,
behind the standard `PathFinder`, which searches `sys.path` in order, and `PYTHONPATH` entries
come before site-packages there.  So with `PYTHONPATH=<copy>` the `pipelint` package (and through
its `__path__` every submodule, the plugins loaded by entry point name included) is the copy; the
editable finder is never asked.  Step 3 proves it for every mutation rather than trusting it.
`PYTHONDONTWRITEBYTECODE=1` keeps stale bytecode out of the copy (a mutation and its revert can
have the same size and second), `PIPELINT_CACHE_DIR` points at the temporary folder and
`PIPELINT_TILELANG=off` disables the TileLang start-up hook.  Nothing under the repository is
written.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = {                       # folder in the repository -> folder under the copy's root (setup.py)
    "analyzer": "pipelint",
    "plugins": "pipelint/plugins",
    "grammars": "pipelint/grammars",
    "docs/rules": "pipelint/rule_docs",
}
SNAPSHOT = ("analyzer", "plugins", "grammars", "docs/rules", "tests", "benchmarks", "pyproject.toml")
# Fast, analysis-level tests; the new exact-finding tests run first (they fail fastest).
TEST_FILES = (
    "tests/test_exact_findings.py", "tests/test_functional.py", "tests/test_model.py",
    "tests/test_exact_threads.py", "tests/test_rules_fire.py", "tests/test_precision.py",
    "tests/test_every_access.py", "tests/test_defect_sites.py", "tests/test_checks.py",
)


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str            # path in the repository (analyzer/..., plugins/...)
    original: str        # exact snippet; must occur once
    replacement: str
    why: str             # the breakage it stands for

    @property
    def module(self) -> str:
        rel = Path(self.file).with_suffix("")
        for folder, target in sorted(PACKAGE.items(), key=lambda kv: -len(kv[0])):
            if rel.as_posix().startswith(folder + "/"):
                return (target + "/" + rel.as_posix()[len(folder) + 1:]).replace("/", ".")
        raise ValueError(self.file)


M = Mutation
CPASYNC, PROTOCOL, MBARRIER = "analyzer/model/cpasync.py", "analyzer/model/protocol.py", "analyzer/model/mbarrier.py"
THREADS, TRACE, RACES = "analyzer/model/threads.py", "analyzer/model/trace.py", "analyzer/model/races.py"
BARRIERS, WAITS, TMA = "plugins/barriers.py", "plugins/wait_group.py", "plugins/tma_barriers.py"

MUTATIONS: tuple[Mutation, ...] = (
    # ---- the six breakages issue 23 found surviving every test
    M("barrier-judged-alone", CPASYNC,
      "trial = frozenset(disabled | {id(node)})", "trial = frozenset({id(node)})",
      "each barrier's redundancy judged alone: both of two duplicated barriers called removable"),
    M("divergent-ignores-guard", BARRIERS,
      "threads = ev.threads or span(kernel.roles[ev.role].lo, kernel.roles[ev.role].hi)",
      "threads = span(kernel.roles[ev.role].lo, kernel.roles[ev.role].hi)",
      "divergent-barrier takes every barrier as reached by its whole role (the guard ignored)"),
    M("wait-search-1", CPASYNC, "WAIT_SEARCH = 8 ", "WAIT_SEARCH = 1 ",
      "the deeper-wait search cut to 1: a wait that can be 2+ deeper gets the wrong depth"),
    M("wait-too-deep-needs-2", WAITS, "elif ev.value is not None and best > ev.value:",
      "elif ev.value is not None and best > ev.value + 1:",
      "wait-too-deep only when 2+ more groups could stay in flight"),
    M("init-fence-without-sync", MBARRIER, "if not (fenced and synced):", "if not fenced:",
      "the mbarrier init fence no longer needs its __syncthreads"),
    M("arrive-releases-all-roles", PROTOCOL,
      "            for reader in gen.readers:\n                if reader.role == r:\n"
      "                    reader.release((b, phase))",
      "            for reader in gen.readers:\n                if True:\n"
      "                    reader.release((b, phase))",
      "any role's arrive releases every role's reads"),
    # ---- cp.async model (analyzer/model/cpasync.py)
    M("wait-completes-one-more", CPASYNC, "self.complete_upto = max(self.complete_upto, self.group - n)",
      "self.complete_upto = max(self.complete_upto, self.group - n + 1)",
      "cp_async_wait<N> taken to complete one group more than it does (off by one)"),
    M("empty-commit-opens-no-group", CPASYNC, "        self.group += 1\n        self.commits[self.group] = ev",
      "        self.group += 1 if self.pending else 0\n        self.commits[self.group] = ev",
      "a commit with no copy of the thread's own opens no group (PTX: it does)"),
    M("war-never-checked", CPASYNC, "if not fenced and reader.node is not ev.node \\",
      "if False and reader.node is not ev.node \\",
      "a copy over bytes other threads may still read is never a WAR hazard"),
    M("redundant-wait-never", CPASYNC, "best = None      # waits for nothing any read needs",
      "best = best      # waits for nothing any read needs",
      "a wait that orders nothing is never found redundant"),
    M("barrier-trial-ignores-roles", CPASYNC, "if not new and races.relevant:", "if not new and False:",
      "a barrier's trial removal ignores the hazards and hangs between roles"),
    M("claims-not-joint", CPASYNC, "            if not new or not order:\n                break",
      "            if True:\n                break",
      "wait claims are never re-checked together with the barrier claims"),
    M("unsynced-raw-not-checked", CPASYNC, "                elif not w.visible:\n"
      "                    self.hazard(H.RAW_UNSYNCED, w.event, ev, wait=self.last_wait)",
      "                elif False:\n"
      "                    self.hazard(H.RAW_UNSYNCED, w.event, ev, wait=self.last_wait)",
      "a read of completed but not yet visible (no barrier) copies is not a RAW hazard"),
    M("exit-in-flight-ignored", CPASYNC, "if w.is_async and not w.complete and w.group is not None:",
      "if False and w.is_async and not w.complete and w.group is not None:",
      "cp.async groups still in flight when the kernel ends are not reported"),
    # ---- threads (analyzer/model/threads.py)
    M("same-thread-counts-as-cross", THREADS, "                if prev is not None and prev != u:\n"
      "                    return True",
      "                if prev is not None:\n                    return True",
      "a byte touched by the same thread twice counts as a cross-thread conflict"),
    M("unknown-guard-skips", THREADS, "if value is not None and bool(value) != polarity:",
      "if value is None or bool(value) != polarity:",
      "a guard that cannot be evaluated is taken NOT to run the access"),
    M("same-value-always", THREADS, "        return va == vb\n", "        return True\n",
      "a replicated store is always taken to write the same value"),
    M("elect-zero-every-warp", THREADS, "if (extent == 0 and w != 0) or w % warp_extent:",
      "if w % warp_extent:",
      "tl_shuffle_elect<0> elects a lane in every warp, not only in the block's first"),
    # ---- trace (analyzer/model/trace.py)
    M("inclusive-loop-one-short", TRACE, "return var, start, max(0, end - start + (1 if inclusive else 0))",
      "return var, start, max(0, end - start)", "a `k <= N` loop is simulated one iteration short"),
    M("data-condition-certain", TRACE,
      "        self.uncertain += 1\n        self.stmt(s.then, env, mult, it, guarded)\n"
      "        if s.other is not None:\n            self.stmt(s.other, env, mult, it, guarded)\n"
      "        self.uncertain -= 1\n",
      "        self.stmt(s.then, env, mult, it, guarded)\n"
      "        if s.other is not None:\n            self.stmt(s.other, env, mult, it, guarded)\n",
      "accesses under a condition on data are taken as certain (its threads known)"),
    M("parity-mask-period", TRACE, "elif n.op == \"&\" and (c + 1) & c == 0:\n"
      "                period = math.lcm(period, c + 1)",
      "elif n.op == \"&\" and (c + 1) & c == 0:\n                period = math.lcm(period, c)",
      "`k & 1` taken to repeat every iteration (period c, not c + 1)"),
    # ---- mbarrier protocol (analyzer/model/protocol.py, mbarrier.py)
    M("wait-learns-open-phase", PROTOCOL, "self.learn(r, b, st.completed - 1)", "self.learn(r, b, st.completed)",
      "a wait learns the phase still open, not only the completed ones"),
    M("any-release-counts", PROTOCOL, "if any(self.released(r, rel) for rel in reader.releases):",
      "if reader.releases:", "a read counts as released once its reader arrived, observed or not"),
    M("tx-bytes-ignored", PROTOCOL, "while st.init and st.arrivals >= st.init and (st.tx <= 0 or not self.tx_known):",
      "while st.init and st.arrivals >= st.init:",
      "a phase completes at its last arrival, before its TMA bytes land"),
    M("sync-releases-no-read", PROTOCOL, "                        reader.release((\"sync\", key, group[\"n\"]))",
      "                        pass", "a block or named barrier after a read does not release it"),
    M("over-announced-tx-ok", MBARRIER, "            if got != want:", "            if got > want:",
      "an expect_tx that announces more bytes than land is accepted"),
    M("arrival-count-over-ok", MBARRIER, "if init is None or init.value == total or",
      "if init is None or init.value <= total or",
      "more arrivals per phase than init counts are accepted"),
    M("fence-after-sync-ok", MBARRIER, "elif ev.kind == K.SYNC and last_init is not None and fenced:",
      "elif ev.kind == K.SYNC and last_init is not None:",
      "a __syncthreads before fence_barrier_init counts as the sync after it"),
    # ---- cross-role races (analyzer/model/races.py)
    M("vc-off-by-one", RACES, "vc[old.role] >= old.epoch:", "vc[old.role] + 1 >= old.epoch:",
      "an access one clock tick behind counts as ordered"),
    M("atomics-race", RACES,
      "if not (write or old.write) or (ev.access == \"atomic\" and old.event.access == \"atomic\"):",
      "if not (write or old.write):", "two atomics of different roles race"),
    # ---- plugins
    M("barrier-spot-before-read", BARRIERS, "if after is not None and after.span.line <= second.span.line:",
      "if False:", "a missing barrier is placed before the read, not right after the wait"),
    M("release-spot-ignores-wgmma", TMA, "        if e.kind == K.WGMMA_WAIT:\n            anchor = e.node",
      "        if False:\n            anchor = e.node",
      "a consumer's release spot ignores the asynchronous MMA still reading the slot"),
    M("redundant-barrier-in-loop-note", BARRIERS, "severity=None if loop else Severity.NOTE,",
      "severity=Severity.NOTE,", "a redundant barrier in the steady-state loop is only a note"),
    M("divergent-always-balanced", BARRIERS, "balanced = len(set(per_thread)) <= 1", "balanced = True",
      "a barrier some threads skip is taken as balanced (a portability warning, not a hang)"),
)


# ---------------------------------------------------------------- snapshot and run
def snapshot(dest: Path, rev: str | None, exclude: list[str], overlay: list[str]) -> None:
    """The tree to test: `rev`'s committed files (None: the working tree)."""
    tree = dest / "tree"
    tree.mkdir(parents=True)
    if rev is not None:
        present = [p for p in SNAPSHOT if subprocess.run(
            ["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}:{p}"], capture_output=True).returncode == 0]
        data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev, *present],
                              check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tree, filter="data")
    else:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
        for p in SNAPSHOT:
            src = ROOT / p
            if src.is_dir():
                shutil.copytree(src, tree / p, ignore=ignore)
            elif src.exists():
                shutil.copy2(src, tree / p)
    for p in overlay:
        (tree / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / p, tree / p)
    for p in exclude:
        (tree / p).unlink(missing_ok=True)


def package(dest: Path, tree: Path) -> Path:
    """`<dest>/pkg/pipelint...` laid out as setup.py maps the folders; returns the import root."""
    root = dest / "pkg"
    if root.exists():
        shutil.rmtree(root)
    for folder, target in PACKAGE.items():        # "analyzer" first: the others nest inside it
        if (tree / folder).is_dir():
            shutil.copytree(tree / folder, root / target, dirs_exist_ok=True)
    return root


def environment(pkg: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIPELINT", "PYTEST"))}
    env.update(PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1", PIPELINT_CACHE_DIR=str(cache),
               PIPELINT_TILELANG="off", PYTHONHASHSEED="0")
    return env


CHECK_IMPORT = r"""
import importlib, inspect, sys
name, root, needle = sys.argv[1], sys.argv[2], sys.argv[3]
import pipelint
mod = importlib.import_module(name)
for m in (pipelint, mod):
    assert m.__file__.startswith(root), f"{m.__name__} imported from {m.__file__}, not the copy {root}"
assert needle in inspect.getsource(mod), f"{name} does not hold the mutation"
"""


def check_import(python: str, env: dict, pkg: Path, module: str, needle: str, cwd: Path) -> str | None:
    done = subprocess.run([python, "-c", CHECK_IMPORT, module, str(pkg), needle], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    return None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["?"])[-1]


_RUNNING: set[subprocess.Popen] = set()


def _run(cmd: list[str], env: dict, cwd: Path, timeout: float) -> tuple[int | None, str]:
    """(exit status or None on timeout, stdout+stderr); the child is killed on timeout and when
    this script is terminated (`_RUNNING`)."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _RUNNING.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return None, out
    finally:
        _RUNNING.discard(proc)


def run_tests(python: str, env: dict, tree: Path, tests: list[str], timeout: float,
              basetemp: Path) -> tuple[str, str, float]:
    """('pass' | 'fail' | 'timeout' | 'error', first failing test or message, seconds).
    `basetemp` is private to the worker: pytest empties it at start."""
    cmd = [python, "-m", "pytest", "-x", "-q", "-rfE", "-p", "no:cacheprovider", "-m", "not tilelang",
           "--basetemp", str(basetemp), *tests]
    start = time.perf_counter()
    code, out = _run(cmd, env, tree, timeout)
    seconds = time.perf_counter() - start
    if code is None:
        return "timeout", f"over {timeout:.0f} s", seconds
    if code == 0:
        return "pass", "", seconds
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    if code == 1 and failed:
        return "fail", failed[0], seconds
    return "error", (failed[0] if failed else f"pytest exit {code}: "
                     + " | ".join(out.strip().splitlines()[-3:])), seconds


@dataclass
class Result:
    mutation: Mutation
    status: str          # killed | survived | stale | not-imported
    detail: str
    seconds: float


def apply(pkg: Path, m: Mutation) -> tuple[Path, str] | None:
    """Mutate the copy; returns (file, original text) to restore, None when the snippet is stale."""
    path = pkg / m.module.replace(".", "/")
    path = path.with_suffix(".py") if path.with_suffix(".py").exists() else path / "__init__.py"
    text = path.read_text()
    if text.count(m.original) != 1:
        return None
    path.write_text(text.replace(m.original, m.replacement))
    return path, text


def mutate_and_run(m: Mutation, python: str, work: Path, tree: Path, tests: list[str],
                   timeout: float) -> Result:
    pkg = work / "pkg"
    env = environment(pkg, work / "cache")
    applied = apply(pkg, m)
    if applied is None:
        return Result(m, "stale", "snippet not found exactly once: update the entry", 0.0)
    path, original = applied
    try:
        why = check_import(python, env, pkg, m.module, m.replacement, tree)
        if why is not None:
            return Result(m, "not-imported", why, 0.0)
        outcome, detail, seconds = run_tests(python, env, tree, tests, timeout, work / "pytest-tmp")
        status = "survived" if outcome == "pass" else "killed"
        return Result(m, status, detail if outcome != "timeout" else f"timeout ({detail})", seconds)
    finally:
        path.write_text(original)


def _terminate(signum, frame) -> None:
    for proc in list(_RUNNING):
        proc.kill()
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--rev", default="HEAD", help="git revision to snapshot (default HEAD)")
    src.add_argument("--worktree", action="store_true", help="snapshot the working tree instead")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATH",
                        help="leave this file out of the snapshot (e.g. a test file, for a 'before' run)")
    parser.add_argument("--overlay", action="append", default=[], metavar="PATH",
                        help="copy this working-tree file over the snapshot (e.g. a test file not committed yet)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run these mutations only")
    parser.add_argument("--tests", nargs="+", help=f"test files to run (default: those of {TEST_FILES} present)")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python")
                        if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per pytest run (default 300)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="mutations run in parallel (default 1)")
    parser.add_argument("--json", help="write the results as JSON here")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    mutations = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list:
        for m in mutations:
            print(f"{m.name:32} {m.file:30} {m.why}")
        return 0
    unknown = set(args.only) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    rev = None if args.worktree else args.rev
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pipelint-selfmut-") as tmp:
        base = Path(tmp)
        snapshot(base, rev, args.exclude, args.overlay)
        tree = base / "tree"
        tests = args.tests or [t for t in TEST_FILES if (tree / t).exists()]
        workers = [base / f"w{i}" for i in range(max(1, args.jobs))]
        for w in workers:
            package(w, tree)
        python = args.python
        source = ("working tree" if rev is None else f"{rev} ({_rev(rev)})") + "".join(
            f" + {p} from the working tree" for p in args.overlay) + "".join(f" - {p}" for p in args.exclude)
        print(f"snapshot: {source}; tests: {' '.join(tests)}", flush=True)
        env = environment(workers[0] / "pkg", workers[0] / "cache")
        why = check_import(python, env, workers[0] / "pkg", "pipelint.plugins.barriers", "hookimpl", tree)
        if why is not None:
            print(f"the copy is not what gets imported: {why}", file=sys.stderr)
            return 2
        outcome, detail, seconds = run_tests(python, env, tree, tests, args.timeout, workers[0] / "pytest-tmp")
        print(f"baseline (unmutated copy): {outcome} in {seconds:.0f} s {detail}", flush=True)
        if outcome != "pass":
            print("the unmutated suite does not pass: no mutation can be judged", file=sys.stderr)
            return 2
        results: list[Result] = []
        free = list(workers)

        def job(m: Mutation) -> Result:
            w = free.pop()
            try:
                return mutate_and_run(m, python, w, w.parent / "tree", tests, args.timeout)
            finally:
                free.append(w)

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(workers)) as pool:
            for r in pool.map(job, mutations):
                results.append(r)
                print(f"  {r.status:9} {r.mutation.name:32} {r.seconds:5.0f} s  {r.detail}", flush=True)
    judged = [r for r in results if r.status in ("killed", "survived")]
    survived = [r for r in judged if r.status == "survived"]
    rate = len(survived) / len(judged) if judged else 0.0
    print()
    print("| mutation | file | breakage | result | first failing test |")
    print("| --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| `{r.mutation.name}` | {r.mutation.file} | {r.mutation.why} | {r.status} | {r.detail} |")
    print()
    print(f"{len(judged)} mutations judged: {len(judged) - len(survived)} killed, {len(survived)} survived; "
          f"survival rate {rate:.3f} ({len(survived)}/{len(judged)}); "
          f"{len(results) - len(judged)} stale or not imported; {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "source": source, "tests": tests, "survival_rate": rate,
            "killed": len(judged) - len(survived), "survived": len(survived),
            "results": [{"name": r.mutation.name, "file": r.mutation.file, "why": r.mutation.why,
                         "status": r.status, "detail": r.detail, "seconds": round(r.seconds, 1)}
                        for r in results]}, indent=2) + "\n")
    return 0


def _rev(rev: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True)
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    sys.exit(main())
