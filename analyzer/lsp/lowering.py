"""Lowering for the editor: worker processes with a timeout, a cache, and cancellation.

One buffer's kernels are lowered by `python -m pipelint.lsp.worker` processes (the variants
spread over up to `jobs` of them, each in its own session so that a timeout or a newer
version of the buffer kills TileLang's helpers too).  Results are cached on disk under the
buffer's code digest (comments do not count: adding `# pipelint: ignore[...]` re-checks
without re-lowering), the modules beside it that it imports, its path, the settings, and the
TileLang and pipelint versions.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import __version__, cachedir
from ..lowering.driver import MARKER, default_cache_dir
from ..lowering.imports import imports_digest
from .pysource import code_digest
from .settings import LowerSettings

_CODE = [Path(__file__).with_name("worker.py"), Path(__file__).parent.parent / "lowering" / "worker.py"]


@dataclass
class Lowered:
    """What the workers said about one buffer (the worker's JSON), and how it was obtained."""

    result: dict
    cached: bool
    seconds: float


def tilelang_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("tilelang")
    except metadata.PackageNotFoundError:
        return None


def cache_key(path: str, text: str, settings: LowerSettings, tl_version: str) -> str:
    """The buffer's code (not its comments), the modules beside it that it imports, its path,
    the settings, TileLang's and pipelint's versions and the workers' code."""
    code = [hashlib.sha256(p.read_bytes()).hexdigest() for p in _CODE if p.is_file()]
    helpers = imports_digest(path, text)          # the project's modules it imports, transitively
    raw = json.dumps([code_digest(text), os.path.abspath(path), settings.key(), tl_version, __version__, code,
                      helpers], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:40]


def cache_folder(base: str | None = None) -> Path:
    return (Path(base) / "lower" if base else default_cache_dir()).parent / "lsp"


def dump_folder(cache: Path, path: str) -> Path:
    """Where a buffer's generated CUDA is written (one folder per kernel file: two files with a
    `matmul` factory do not share `matmul_sm_80_s3.cu`)."""
    digest = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:10]
    return cache / "cuda" / f"{Path(path).stem}-{digest}"


KEEP_ENTRIES = 256                  # cached buffers kept (each edit of the code makes one)


class Lowerer:
    """Lowers buffers; `lower` is cancellable (the worker processes are killed).  At most
    `processes` workers run at once over all buffers (2 cores, several files open).

    `warm`: keep one worker started ahead of need, TileLang already imported (2 s of a cold
    lowering on this machine), to take the next buffer; the server does, after each lowering."""

    def __init__(self, cache_dir: Path | None = None, use_cache: bool = True, processes: int = 0,
                 warm: bool = False) -> None:
        self.cache_dir = cache_dir or cache_folder()
        self.use_cache = use_cache
        self.tl_version = tilelang_version()
        self.slots = asyncio.Semaphore(processes or min(os.cpu_count() or 1, 2))
        self.warm = warm
        self._standby: asyncio.subprocess.Process | None = None

    async def prepare(self) -> None:
        """Start the standby worker if there is none (it imports TileLang, then waits)."""
        if self.warm and self.tl_version is not None and (self._standby is None
                                                          or self._standby.returncode is not None):
            self._standby = await spawn_worker()

    def close(self) -> None:
        if self._standby is not None:
            _kill(self._standby)
            self._standby = None

    async def _worker(self) -> asyncio.subprocess.Process:
        child, self._standby = self._standby, None
        if child is None or child.returncode is not None:
            child = await spawn_worker()
        return child

    def cached(self, path: str, text: str, settings: LowerSettings, folder: Path | None = None) -> dict | None:
        if not self.use_cache or self.tl_version is None:
            return None
        where = cachedir.prepared(folder or self.cache_dir, 1, create=False)
        data = None if where is None else cachedir.read_file(
            where / f"{cache_key(path, text, settings, self.tl_version)}.json")
        try:
            entry = json.loads(data) if data is not None else None
        except Exception:       # noqa: BLE001 - an undecodable entry is a miss (and is rewritten)
            return None
        return entry if isinstance(entry, dict) and entry.get("ok") in (True, False) else None

    async def lower(self, path: str, text: str, settings: LowerSettings, folder: Path | None = None,
                    use_cache: bool = True) -> Lowered:
        """Lower every kernel of the buffer (`folder`: the cache to use, `[tool.pipelint]`
        cache-dir; `use_cache=False`: `cache = false`)."""
        started = time.perf_counter()
        folder = folder or self.cache_dir
        use_cache = use_cache and self.use_cache
        if self.tl_version is None:
            return Lowered({"ok": False, "kind": "tilelang", "line": 1, "error": "TileLang is not installed: "
                            "pip install 'pipelint[tilelang]' (CPU-only: pip install torch==2.13.0 first)"},
                           False, 0.0)
        hit = self.cached(path, text, settings, folder) if use_cache else None
        if hit is not None:
            return Lowered(hit, True, time.perf_counter() - started)
        pairs = [[a, n] for a in settings.archs for n in settings.stages]
        jobs = max(1, min(settings.jobs or 1, len(pairs)))
        chunks = [pairs[i::jobs] for i in range(jobs)]
        specs = [{"path": os.path.abspath(path), "text": text, "variants": c, "params": settings.params}
                 for c in chunks]
        parts = await asyncio.gather(*(self._run(s, settings.timeout) for s in specs))
        result = merge(parts, pairs)
        if all(p.get("kind") not in ("timeout", "crash") for p in parts) and use_cache:
            self._store(folder, cache_key(path, text, settings, self.tl_version), result)
        return Lowered(result, False, time.perf_counter() - started)

    async def _run(self, spec: dict, timeout: float) -> dict:
        async with self.slots:
            try:
                return await run_worker(spec, timeout, await self._worker())
            finally:
                if self.warm:       # the next buffer's worker, once this one no longer needs the CPU
                    asyncio.ensure_future(self.prepare())

    def _store(self, folder: Path, key: str, result: dict) -> None:
        """Write the entry and keep the newest KEEP_ENTRIES (editing makes one per version of
        the code); through `cachedir`: no link followed, only entries deleted."""
        where = cachedir.prepared(folder, 1)
        if where is not None and cachedir.write_file(where, f"{key}.json", json.dumps(result).encode()):
            cachedir.evict(where.parent, "lsp", keep=KEEP_ENTRIES)


def merge(parts: list[dict], pairs: list[list]) -> dict:
    """One result from the workers' parts: kernels by name, variants in (arch, num_stages) order."""
    failed = next((p for p in parts if not p.get("ok")), None)
    if failed is not None:
        return failed
    order = {(a, n): i for i, (a, n) in enumerate(pairs)}
    kernels: dict[str, dict] = {}
    for part in parts:
        for k in part["kernels"]:
            kernels.setdefault(k["name"], {**k, "variants": []})["variants"].extend(k["variants"])
    for k in kernels.values():
        k["variants"].sort(key=lambda v: order.get((v["arch"], None if v.get("as_written") else v["num_stages"]), 0))
    return {"ok": True, "kernels": list(kernels.values())}


async def spawn_worker() -> asyncio.subprocess.Process:
    """A worker process in its own session (it imports TileLang at once, then reads its spec)."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pipelint.lsp.worker", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)


async def run_worker(spec: dict, timeout: float, child: asyncio.subprocess.Process | None = None) -> dict:
    """One worker process (`child`: one started before); a timeout, a crash or a cancellation
    kills its whole process group."""
    if child is None:
        child = await spawn_worker()
    try:
        out, err = await asyncio.wait_for(child.communicate(json.dumps(spec).encode()), timeout)
    except TimeoutError:
        _kill(child)
        return {"ok": False, "kind": "timeout", "line": 1,
                "error": f"lowering did not finish in {timeout:g} s (hang?); raise [tool.pipelint.lower] timeout"}
    except BaseException:           # cancelled: a newer version of the buffer is being lowered
        _kill(child)
        raise
    text = out.decode(errors="replace")
    if MARKER in text:
        return json.loads(text.rsplit(MARKER, 1)[1])
    tail = " | ".join((err.decode(errors="replace") or text).strip().splitlines()[-3:])
    return {"ok": False, "kind": "crash", "line": 1,
            "error": f"lowering worker crashed (exit status {child.returncode}): {tail}"}


def _kill(child: asyncio.subprocess.Process) -> None:
    """Kill the worker, its process group and every descendant, also those that started a
    session of their own (the worker is their subreaper: `procs`)."""
    from .procs import kill_tree

    if hasattr(os, "killpg"):
        kill_tree(child.pid)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        child.kill()
