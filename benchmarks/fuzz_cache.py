"""Hostile cache trees (issue 37): can a checked repository make pipelint delete, or write to,
anything that is not one of its own cache entries?

    python benchmarks/fuzz.py 1000 --cache-tree [--seed S]
    python benchmarks/fuzz_cache.py 1000 [--seed S]

Each case builds a sandbox with a *victim* folder (files named like cache entries and not, old
and large so that eviction would take them first) and a checked project whose configuration
names a `cache-dir` (inside the project, `..`, `/`, the victim, a path through a link), and
plants in the cache root a random tree: shards and top folders that are links to the victim,
entries that are links to victim files, FIFOs named like entries (opening one would block),
files and folders of another owner (when run as root), a valid or a forged `CACHEDIR.TAG`, and
the victim's files named like entries outside the root.  pipelint then runs as a user would —
`check` (cached, `-j 1` and `-j 2`), `clean --dry-run`, `clean`, and, when the configured folder
lies in the project, `check --cache-dir ROOT` and `clean --cache-dir ROOT` (the user naming the
project's cache folder) — each in its own process with a timeout.  What the user names on the
command line outside the project is theirs to choose and is not an attack.

Figures: victim files deleted or changed (must be 0), project files deleted or changed outside
the cache root (must be 0), tracebacks or internal errors (exit 3), commands past the timeout.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "tests" / "fixtures" / "kernels" / "global_flag_sm_80_s0.cu"     # small: the cache is the point
SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
OLD = 946684800
HEX = "0123456789abcdef"
CACHE_DIRS = [".plcache", ".plcache", "cache/deep", "..", "../..", "/", "src", "sub/../..", "../victim",
              "VICTIM", "linked", "linked/inner", "."]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(HEX) for _ in range(n))


def _entry_names(rng: random.Random) -> list[str]:
    """Relative paths shaped like the caches' own entries (so a format match alone is no licence)."""
    return [f"v2/data/{_hex(rng, 2)}/{_hex(rng, 62)}", f"v2/stat/{_hex(rng, 2)}/{_hex(rng, 62)}",
            f"lower/{_hex(rng, 40)}.json", f"lsp/{_hex(rng, 40)}.json", f"grammar-0/cuda-{_hex(rng, 20)}.lark",
            f"lsp/cuda/k-{_hex(rng, 10)}/matmul_sm_80_s3.cu"]


def _victim(root: Path, rng: random.Random) -> None:
    root.mkdir(parents=True)
    names = ["thesis.pdf", "notes.txt", *(n.rsplit("/", 1)[-1] for n in _entry_names(rng))]
    for rel in [*names, *_entry_names(rng), "CACHEDIR.TAG"]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(SIGNATURE + b"\n" if rel == "CACHEDIR.TAG" else rel.encode())
            fh.truncate(rng.choice([64, 4096, 300 * 2**20]))        # sparse: large without the disk
        os.utime(path, (OLD, OLD))


def _snapshot(top: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every file and link under `top` (not entering links), with what identifies its content."""
    found: dict[str, tuple] = {}
    for here, dirs, files in os.walk(top, followlinks=False):
        if skip is not None and Path(here).resolve() == skip.resolve():
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if skip is None or Path(here, d) != skip]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(here, d))]:
            path = os.path.join(here, name)
            st = os.lstat(path)
            found[path] = (st.st_size, st.st_mtime_ns, st.st_mode,
                           os.readlink(path) if os.path.islink(path) else None)
    return found


def _plant(root: Path, victim: Path, rng: random.Random) -> None:
    """A random hostile tree at the cache root `root` (which may already exist, or be a link)."""
    if rng.random() < 0.15 and not root.exists():
        root.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(victim, root)                                   # the root itself is a link
        return
    root.mkdir(parents=True, exist_ok=True)
    tag = rng.random()
    if tag < 0.5:
        (root / "CACHEDIR.TAG").write_bytes(SIGNATURE + b"\n")
    elif tag < 0.6:
        with _suppress():
            os.symlink(victim / "CACHEDIR.TAG", root / "CACHEDIR.TAG")  # a tag that is a link
    elif tag < 0.7:
        (root / "CACHEDIR.TAG").write_bytes(b"forged")
    for rel in _entry_names(rng):
        kind = rng.choice(["link-dir", "link-file", "fifo", "file", "foreign", "dir", "none"])
        path = root / rel
        if kind == "none":
            continue
        if kind == "link-dir":                                      # a shard or top folder is a link
            parts = rel.split("/")
            cut = rng.randrange(1, len(parts))
            target = root.joinpath(*parts[:cut])
            if not target.exists() and not target.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(victim, target)
            continue
        with _suppress():
            path.parent.mkdir(parents=True, exist_ok=True)
        if not path.parent.is_dir() or path.exists() or path.is_symlink():
            continue
        if kind == "link-file":
            os.symlink(victim / rng.choice(["thesis.pdf", "notes.txt"]), path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir()
        else:
            path.write_text("{}")
            os.utime(path, (OLD, OLD))
            if kind == "foreign" and os.geteuid() == 0:
                os.chown(path, 12345, 12345)
                os.chown(path.parent, 12345, 12345)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], OSError)   # type: ignore[arg-type]


def _case(base: Path, i: int, rng: random.Random, timeout: float) -> dict[str, int]:
    sandbox = base / f"c{i}"
    victim = sandbox / "victim"
    _victim(victim, rng)
    project = sandbox / "home" / "work" / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "module.py").write_text("x = 1\n")
    (project / "src" / "v2").mkdir()
    (project / "src" / "v2" / ("d" * 62)).write_text("mine")
    (project / "k.cu").write_text(KERNEL.read_text())
    os.symlink(victim, project / "linked")
    choice = rng.choice(CACHE_DIRS).replace("VICTIM", str(victim))
    (project / "pyproject.toml").write_text(f'[tool.pipelint]\ncache-dir = "{choice}"\n')
    configured = Path(os.path.normpath(project / choice))
    user_root = sandbox / "user-cache"
    for root in {configured, user_root}:
        if root.is_relative_to(sandbox) and not root.is_relative_to(victim) and not victim.is_relative_to(root) \
                and not any(p.is_symlink() for p in [root, *root.parents]):
            _plant(root, victim, rng)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPELINT", "XDG_"))}
    env.update(PIPELINT_CACHE_DIR=str(user_root), XDG_CACHE_HOME=str(sandbox / "xdg"), NO_COLOR="1")
    before_victim = _snapshot(victim)
    before_project = _snapshot(project, skip=configured if configured.is_relative_to(project) else None)
    figures = {"victim_changed": 0, "project_changed": 0, "tracebacks": 0, "timeouts": 0, "commands": 0}
    commands = [["check", "k.cu"], ["check", "k.cu", "-j", "2"], ["clean", "--dry-run"], ["clean"]]
    if configured.is_relative_to(project) and configured != project:
        # the user names the project's cache folder on the command line (what docs/ci.md does)
        commands += [["check", "k.cu", "--cache-dir", str(configured)], ["clean", "--cache-dir", str(configured)]]
    if i % 10:
        commands = [c for c in commands if "-j" not in c]        # worker processes: one case in ten
    for args in commands:
        figures["commands"] += 1
        code, err = _run(args, project, env, timeout)
        if code is None:
            figures["timeouts"] += 1
            print(f"case {i}: {' '.join(args)} past {timeout} s (cache-dir {choice!r})", file=sys.stderr)
        elif code == 3 or "Traceback" in err:
            figures["tracebacks"] += 1
            print(f"case {i}: {' '.join(args)}: exit {code}\n{err[-800:]}", file=sys.stderr)
    after_victim = _snapshot(victim)
    lost = {p for p, v in before_victim.items() if after_victim.get(p) != v}
    figures["victim_changed"] = len(lost)
    after_project = _snapshot(project, skip=configured if configured.is_relative_to(project) else None)
    changed = {p for p, v in before_project.items() if after_project.get(p) != v}
    figures["project_changed"] = len(changed)
    for p in sorted(lost | changed)[:5]:
        print(f"case {i}: {p} deleted or changed (cache-dir {choice!r})", file=sys.stderr)
    shutil.rmtree(sandbox, ignore_errors=True)
    return figures


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """One pipelint command as a user runs it, in a process of its own: forked from this one,
    which has pipelint imported (an interpreter start per command would be most of the run);
    (exit code, stderr), exit None past the timeout (the child is killed)."""
    import signal

    from pipelint.cli import main as pipelint_main

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child: cwd, environment, stderr, then pipelint
        code = 3
        try:
            os.close(read)
            os.dup2(write, 2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            code = pipelint_main(args)
        except BaseException:                       # noqa: BLE001 - a traceback is what is counted
            import traceback

            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code if isinstance(code, int) else 3)
    os.close(write)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    import select

    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return None, b"".join(chunks).decode(errors="replace")
        ready, _, _ = select.select([read], [], [], min(left, 1.0))
        if ready:
            data = os.read(read, 65536)
            if not data:
                break
            chunks.append(data)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def cache_tree_fuzz(n: int, seed: int = 0, timeout: float = 60.0) -> int:
    rng = random.Random(seed)
    totals: dict[str, int] = {}
    from pipelint.cuda import parse

    parse(KERNEL.read_text())          # the grammar built once, before the forks (it is not what is fuzzed)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pipelint-cachefuzz-") as tmp:
        for i in range(n):
            for key, value in _case(Path(tmp), i, rng, timeout).items():
                totals[key] = totals.get(key, 0) + value
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(repr(sorted(totals.items())).encode()).hexdigest()[:8]
    print(f"{n} hostile cache trees (seed {seed}), {totals.get('commands', 0)} pipelint processes, "
          f"{seconds:.0f} s: victim files deleted or changed {totals.get('victim_changed', 0)}, project files "
          f"changed outside the cache {totals.get('project_changed', 0)}, tracebacks {totals.get('tracebacks', 0)}, "
          f"past the timeout {totals.get('timeouts', 0)} [{digest}]")
    bad = sum(totals.get(k, 0) for k in ("victim_changed", "project_changed", "tracebacks", "timeouts"))
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one pipelint process may take")
    args = parser.parse_args(argv)
    return cache_tree_fuzz(args.n, args.seed, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
