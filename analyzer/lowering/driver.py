"""Sweep (arch, num_stages) variants of one kernel through worker processes, with a cache.

Each variant is one `python -m pipelint.lowering.worker` process with a
timeout, run in parallel up to `jobs`; a failure, hang or crash becomes that
variant's error, never the run's.  Results are cached on disk under a key of
the kernel file's content, the kernel name, parameters, target, num_stages,
and the TileLang and pipelint versions.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import UsageError

KNOWN_ARCHS = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100",
               "sm_100a", "sm_101", "sm_103", "sm_120")
MARKER = "\n@@PIPELINT@@"


@dataclass(frozen=True)
class KernelRef:
    file: str
    name: str | None

    @classmethod
    def parse(cls, text: str) -> KernelRef:
        path, sep, name = text.rpartition(":")
        if sep and path.endswith(".py") and name.isidentifier():
            return cls(path, name)
        return cls(text, None)


@dataclass
class Variant:
    arch: str
    num_stages: int
    ok: bool = False
    error: str | None = None
    error_kind: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    seconds: float = 0.0
    as_written: bool = False        # the kernel takes no num_stages: lowered with the stages it is written with

    @property
    def label(self) -> str:
        return f"{self.arch}_s{self.num_stages}"


def tilelang_version() -> str:
    try:
        return metadata.version("tilelang")
    except metadata.PackageNotFoundError:
        raise UsageError("TileLang is not installed: install the extra with "
                         "`pip install 'pipelint[tilelang]'` (CPU-only machines: "
                         "`pip install torch==2.13.0` first)") from None


def validate(ref: KernelRef, archs: list[str], stages: list[int]) -> None:
    if not Path(ref.file).is_file():
        raise UsageError(f"kernel file not found: {ref.file}")
    for arch in archs:
        if arch not in KNOWN_ARCHS:
            raise UsageError(f"unknown arch {arch!r} (known: {', '.join(KNOWN_ARCHS)})")
    for n in stages:
        if n < 0:
            raise UsageError(f"num_stages must be >= 0, got {n}")


def parse_params(items: list[str]) -> dict[str, Any]:
    import ast

    params: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--param expects name=value, got {item!r}")
        try:
            params[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[name] = value
    return params


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences (SGR colours, cursor moves, OSC titles)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def colour_wanted(stream=None) -> bool:
    """Colour for `stream` (stderr): NO_COLOR turns it off, FORCE_COLOR on, else only a terminal."""
    stream = stream or sys.stderr
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def run_worker(payload: dict, timeout: float, env: dict | None = None, colour: bool | None = None) -> dict:
    """Run one worker process; crashes and timeouts come back as error results.  TileLang's
    terminal trace is passed to stderr with its colours only where `colour` (default:
    `colour_wanted`): a CI log or a file gets plain text (issue 34)."""
    cmd = [sys.executable, "-m", "pipelint.lowering.worker"]
    root = str(Path(__file__).resolve().parents[2])
    penv = dict(os.environ, **(env or {}))
    penv["PYTHONPATH"] = root + os.pathsep + penv.get("PYTHONPATH", "")
    # Its own session, so that a timeout kills TileLang's helper processes too, not just Python.
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=penv, start_new_session=True) as child:
        try:
            stdout, stderr = child.communicate(json.dumps(payload), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            return {"ok": False, "kind": "timeout", "error": f"lowering did not finish in {timeout:g} s (hang?)"}
    proc = subprocess.CompletedProcess(cmd, child.returncode, stdout, stderr)
    out = proc.stdout
    if (env or {}).get("TL_LOWER_TRACE") in ("terminal", "both"):
        # TileLang prints its per-pass IR diff to the worker's stdout: pass it on
        passed = out.rsplit(MARKER, 1)[0] + proc.stderr
        sys.stderr.write(passed if (colour_wanted() if colour is None else colour) else strip_ansi(passed))
    if MARKER in out:
        result = json.loads(out.rsplit(MARKER, 1)[1])
        if not result.get("ok"):
            result["log"] = (out.rsplit(MARKER, 1)[0] + proc.stderr)[-2000:]
        return result
    tail = (proc.stderr or out).strip().splitlines()[-3:]
    how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
    return {"ok": False, "kind": "crash", "error": f"lowering worker crashed ({how}): {' | '.join(tail)}"}


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.communicate()


CACHE_KEYS = frozenset({"ok", "name", "kind", "cuda", "pipelined_loops", "shared_shapes"})


def valid_cache_entry(entry: object) -> bool:
    """Exactly what `worker.lower` returns: anything else (old, partial, edited) is re-lowered."""
    return (isinstance(entry, dict) and entry.get("ok") is True and set(entry) >= CACHE_KEYS
            and isinstance(entry.get("cuda"), str) and isinstance(entry.get("pipelined_loops"), list))


def discover(ref: KernelRef, timeout: float) -> dict:
    result = run_worker({"mode": "discover", "file": ref.file, "name": ref.name}, timeout)
    if not result.get("ok"):
        raise UsageError(result.get("error", "cannot find the kernel"))
    return result


# Environment variables TileLang and TVM read while lowering (pass switches such as
# TL_DISABLE_WARP_SPECIALIZED, TILELANG_* settings): part of the pass configuration a result
# depends on.  The trace switches only add output.
PASS_ENV_PREFIXES = ("TL_", "TILELANG_", "TVM_")
PASS_ENV_IGNORED = frozenset({"TL_LOWER_TRACE", "TL_LOWER_TRACE_DIR"})


def pass_environment(environ: dict[str, str] | None = None) -> list[list[str]]:
    """The `TL_*`/`TILELANG_*`/`TVM_*` variables of the environment the workers inherit, sorted."""
    env = os.environ if environ is None else environ
    return sorted([k, v] for k, v in env.items() if k.startswith(PASS_ENV_PREFIXES) and k not in PASS_ENV_IGNORED)


def cache_key(ref: KernelRef, params: dict, arch: str, stages: int, tl_version: str) -> str:
    """Everything the lowering depends on: the file's bytes *and path* (the CUDA's `#line` names
    it; two copies of one file are two entries), the project modules it imports, transitively
    (a tile size in `tiles.py`), the kernel, the factory's parameters (`--param`; its defaults are
    the file's bytes), the target and num_stages, the pass configuration (the worker's own, in its
    code, and the `TL_*`/`TILELANG_*`/`TVM_*` environment: `pass_environment`), TileLang's version
    and pipelint's."""
    from .imports import imports_digest

    digest = hashlib.sha256(Path(ref.file).read_bytes()).hexdigest()
    worker = hashlib.sha256(Path(__file__).with_name("worker.py").read_bytes()).hexdigest()
    raw = json.dumps([digest, os.path.abspath(ref.file), imports_digest(ref.file), ref.name, params, arch, stages,
                      pass_environment(), tl_version, __version__, worker], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:40]


def default_cache_dir() -> Path:
    """`lower/` of the user's cache root (`$PIPELINT_CACHE_DIR` or the platform's)."""
    from ..cachedir import default_dir

    return default_dir() / "lower"


def _cache_folder(cache_dir: Path | None) -> Path | None:
    """The folder entries are read from and written to: a caller's private scratch folder as it
    is, else `lower/` of the user's cache root opened by `cachedir` (no links, tagged root);
    None, with a warning, when that root is refused."""
    from .. import cachedir

    if cache_dir is not None:
        return cache_dir if cache_dir.is_dir() or not cache_dir.exists() else None
    return cachedir.usable(cachedir.choose(None), "lower")


def _cached_entry(folder: Path, key: str) -> dict | None:
    from ..cachedir import read_file

    data = read_file(folder / f"{key}.json")
    try:
        entry = json.loads(data) if data is not None else None
    except Exception:       # noqa: BLE001 - an undecodable entry is a miss (and is rewritten)
        return None
    return entry if valid_cache_entry(entry) else None


def _store_entry(folder: Path, key: str, result: dict) -> None:
    from ..cachedir import write_file

    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)     # a scratch folder; the user's exists already
    write_file(folder, f"{key}.json", json.dumps(result).encode())


def lower_variants(ref: KernelRef, archs: list[str], stages: list[int], params: dict, *,
                   jobs: int = 0, timeout: float = 300.0, cache_dir: Path | None = None,
                   trace: str | None = None, trace_dir: Path | None = None,
                   on_done: Callable[[Variant], None] | None = None,
                   known: dict | None = None, colour: bool | None = None) -> tuple[dict, list[Variant]]:
    """Lower every arch x num_stages variant (cached, in parallel worker processes); `on_done`
    is called once per variant as it finishes (a cached one at once), from worker threads."""
    validate(ref, archs, stages)
    done = on_done or (lambda v: None)
    tl_version = tilelang_version()
    cache = _cache_folder(cache_dir)
    variants = [Variant(a, n) for a in archs for n in stages]
    # a traced run lowers every variant: the trace is what it is for
    pending = _take_cached(variants, ref, params, tl_version, cache if trace is None else None, done)
    info = _info(ref, tl_version, variants)
    extra_keys: dict[str, list[str]] = {}
    if pending:
        pending, variants, extra_keys = _plan(info, known or discover(ref, timeout), pending, variants, stages)
    job = _Lowering(ref, info["name"], params, timeout, colour, trace, trace_dir, cache, extra_keys, done)
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        list(pool.map(job, pending))
    if not info.get("kind"):
        info["name"] = next((v.result.get("name") for v in variants if v.ok), ref.name)
    if info.get("as_written"):
        variants = _one_per_arch(variants)
    return info, variants


def _take_cached(variants: list[Variant], ref: KernelRef, params: dict, tl_version: str, cache: Path | None,
                 done: Callable[[Variant], None]) -> list[tuple[Variant, str]]:
    """Fill the variants the cache holds (`done` is called for each at once) and return the
    others with their cache keys: what is left to lower.  With no cache every variant is left."""
    pending = []
    for v in variants:
        key = cache_key(ref, params, v.arch, v.num_stages, tl_version)
        entry = _cached_entry(cache, key) if cache is not None else None
        if entry is None:
            pending.append((v, key))
            continue
        v.result = entry
        v.ok, v.cached = True, True
        done(v)
    return pending


def _info(ref: KernelRef, tl_version: str, variants: list[Variant]) -> dict[str, Any]:
    """The run's facts about the kernel before any worker says more: the name asked for, and
    whether a cached result was lowered as written (then the sweep is one variant per arch)."""
    info: dict[str, Any] = {"name": ref.name, "tilelang": tl_version}
    if any(v.result.get("as_written") for v in variants if v.cached):
        info["as_written"] = True
    return info


def _plan(info: dict[str, Any], found: dict, pending: list[tuple[Variant, str]],
          variants: list[Variant], stages: list[int]
          ) -> tuple[list[tuple[Variant, str]], list[Variant], dict[str, list[str]]]:
    """What the worker's discovery `found` about the kernel goes into the run's `info`; and
    (pending, variants, extra keys by arch): as they are, unless the kernel has no num_stages
    to sweep (issue 39): then one lowering per arch, as written, stored under every requested
    key so that the next run finds it without importing TileLang."""
    info.update(name=found["name"], kind=found["kind"], stage_param=found.get("stage_param"),
                line=found.get("line"))
    if "configs" in found:
        info["configs"] = found["configs"]
    if found["kind"] in ("factory", "jit") and not found.get("stage_param"):
        info["as_written"] = True
        return _as_written(pending, variants, stages)
    return pending, variants, {}


def _as_written(pending: list[tuple[Variant, str]], variants: list[Variant],
                stages: list[int]) -> tuple[list[tuple[Variant, str]], list[Variant], dict[str, list[str]]]:
    """A kernel without a stage parameter: one variant per arch left to lower, in place of the
    arch's pending ones (under the first of their keys), and every pending key by arch, under
    which its result is stored."""
    keys: dict[str, list[str]] = {}
    for v, key in pending:
        keys.setdefault(v.arch, []).append(key)
    pending = [(Variant(arch, stages[0], as_written=True), arch_keys[0]) for arch, arch_keys in keys.items()]
    variants = [v for v in variants if v.cached and v.arch not in keys] + [v for v, _ in pending]
    return pending, variants, keys


@dataclass
class _Lowering:
    """One variant's lowering in a worker process, as the pool runs it (`job((variant, key))`):
    everything but the variant is the same for the whole sweep."""

    ref: KernelRef
    name: str | None
    params: dict
    timeout: float
    colour: bool | None
    trace: str | None
    trace_dir: Path | None
    cache: Path | None
    extra_keys: dict[str, list[str]]
    done: Callable[[Variant], None]

    def __call__(self, item: tuple[Variant, str]) -> None:
        v, key = item
        start = time.perf_counter()
        res = run_worker({"mode": "lower", "file": self.ref.file, "name": self.name, "params": self.params,
                          "arch": v.arch, "num_stages": v.num_stages, "as_written": v.as_written}, self.timeout,
                         self._trace_env(v), self.colour)
        v.seconds = time.perf_counter() - start
        if res.get("ok"):
            v.ok, v.result = True, res
            if v.as_written:
                v.num_stages = written_stages(res)
            self._store(v, key, res)
        else:
            v.error, v.error_kind, v.result = res.get("error"), res.get("kind"), res
        self.done(v)

    def _trace_env(self, v: Variant) -> dict | None:
        """TileLang's trace switches for `--trace`, a folder of its own per variant."""
        if not self.trace:
            return None
        tdir = (self.trace_dir or Path("pipelint-trace")) / f"{self.name}_{v.label}"
        return {"TL_LOWER_TRACE": self.trace, "TL_LOWER_TRACE_DIR": str(tdir)}

    def _store(self, v: Variant, key: str, res: dict) -> None:
        """Cache a result under its key; one lowered as written under every key of its arch."""
        if self.cache is None:
            return
        for k in self.extra_keys.get(v.arch, [key]) if v.as_written else [key]:
            _store_entry(self.cache, k, res)


def written_stages(result: dict) -> int:
    """The num_stages a kernel lowered as written was written with: its pipelined loops' (the
    deepest), 0 when none is pipelined."""
    stages = [lp.get("tl_pipelined_num_stages") or 0 for lp in result.get("pipelined_loops") or ()]
    return max(stages, default=0)


def _one_per_arch(variants: list[Variant]) -> list[Variant]:
    """A kernel lowered as written has one variant per arch, whichever num_stages were asked for."""
    seen: dict[str, Variant] = {}
    for v in variants:
        if v.ok and v.result.get("as_written"):
            v.as_written = True
            v.num_stages = written_stages(v.result)
        seen.setdefault(v.arch, v)
    return list(seen.values())


def variant_filename(kernel: str, v: Variant) -> str:
    from .sweep import variant_filename as name

    return name(kernel, v.arch, v.num_stages)
