"""Lowering for the editor: worker processes with a timeout, a cache, and cancellation.

One buffer's kernels are lowered by `python -m pipelint.lsp.worker` processes (the variants
spread over up to `jobs` of them, each in its own session so that a timeout or a newer
version of the buffer kills TileLang's helpers too).  A worker reports each variant as soon as
it is lowered (`progress`: the server publishes the first variant's findings while the others
are still being lowered), and the variants are lowered cheapest first: by what each target
cost the last time in this server, else targets from sm_90 on before the older ones (TileLang
0.1.15 lowers examples/gemm.py for sm_90 in 0.4 s, for sm_80 in 2.5 s: its MMA path's
LowerTileOp and LayoutInference).  Results are cached on disk under the
buffer's code digest (comments do not count: adding `# pipelint: ignore[...]` re-checks
without re-lowering), the modules beside it that it imports, its path, the settings, and the
TileLang and pipelint versions; each kernel's variants also under a key of its own code
(`kernel_keys`), so that an edit inside one kernel lowers that one again and reuses the others.
"""
from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    timings: dict | None = None     # where the time went: import_s, wait_s, variants [(label, s)]


Progress = Callable[[dict], None]   # gets the result so far (`"partial": true`) after each variant

NO_TILELANG = {"ok": False, "kind": "tilelang", "line": 1, "error": "TileLang is not installed: from pipelint's "
               "clone, pip install -c constraints.txt -e '.[tilelang]' (CPU-only: pip install torch==2.13.0 first)"}


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


def kernel_keys(path: str, text: str, settings: LowerSettings, tl_version: str) -> dict[str, str]:
    """name -> cache key of each top-level function that can be a kernel (it builds one, or
    takes num_stages): `cache_key` of the buffer with the bodies of the *other* such functions
    blanked line for line (unless this one names them), so that an edit inside one kernel
    leaves the others' keys, and their lowerings, as they were.  Helpers and module-level code
    stay in every key; a line moved above a kernel changes its key (its `#line` numbers)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    funcs = _kernel_functions(tree, text)
    lines = text.split("\n")
    keys = {}
    for f in funcs:
        named = {n.id for n in ast.walk(f) if isinstance(n, ast.Name)}
        mine = _blanked(lines, [g for g in funcs if g is not f and g.name not in named])
        keys[f.name] = hashlib.sha256(json.dumps(["kernel", f.name, cache_key(path, "\n".join(mine), settings,
                                                                                tl_version)]).encode()).hexdigest()[:40]
    return keys


_STAGE_ARGS = ("num_stages", "stages")


def _kernel_functions(tree: ast.Module, text: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The top-level functions that can be kernels: they build one (`worker.builders_in`), are
    decorated, or take a num_stages parameter."""
    from .worker import builders_in

    builders = builders_in(text)

    def takes_stages(n: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        return any(a.arg in _STAGE_ARGS for a in [*n.args.args, *n.args.kwonlyargs])

    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (n.name in builders or n.decorator_list or takes_stages(n))]


def _blanked(lines: list[str], others: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> list[str]:
    """`lines` with the lines of `others` (decorators included) made empty: the line count kept."""
    mine = list(lines)
    for g in others:
        first = min([g.lineno, *(d.lineno for d in g.decorator_list)])
        for i in range(first - 1, (g.end_lineno or g.lineno)):
            mine[i] = ""
    return mine


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
        self.costs: dict[str, float] = {}       # arch -> CPU seconds its last variant took to lower
        self._preparing: asyncio.Lock | None = None
        self.running: dict[int, str] = {}       # pid -> the buffer its worker lowers
        self.shown: set[str] = set()            # buffers whose lowering under way delivered a variant
        self._holding: list[tuple[str, list[int]]] = []     # analyses awaited: (buffer, workers stopped)

    async def prepare(self) -> None:
        """Start the standby worker if there is none (it imports TileLang, then waits)."""
        if self._preparing is None:
            self._preparing = asyncio.Lock()
        async with self._preparing:         # one standby, however many ask at once
            if self.warm and self.tl_version is not None and (self._standby is None
                                                              or self._standby.returncode is not None):
                self._standby = await spawn_worker()

    async def adopt(self, popen: subprocess.Popen | None) -> None:
        """Take a worker started before the event loop ran (`start_worker_now`) as the standby;
        kill it when no standby is wanted."""
        if popen is None:
            return
        if not self.warm or self.tl_version is None or (self._standby is not None and self._standby.returncode is None):
            with contextlib.suppress(OSError):
                from .procs import kill_tree

                kill_tree(popen.pid)
            return
        self._standby = await _Adopted.of(popen)        # type: ignore[assignment]

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
                    use_cache: bool = True, progress: Progress | None = None,
                    budgets: dict | None = None) -> Lowered:
        """Lower every kernel of the buffer (`folder`: the cache to use, `[tool.pipelint]`
        cache-dir; `use_cache=False`: `cache = false`; `progress`: called with the result so
        far after each variant; `budgets`: `{"time": s, "memory": MB}` per variant)."""
        started = time.perf_counter()
        folder = folder or self.cache_dir
        use_cache = use_cache and self.use_cache
        if self.tl_version is None:
            return Lowered(dict(NO_TILELANG), False, 0.0)
        hit = self.cached(path, text, settings, folder) if use_cache else None
        if hit is not None:
            return Lowered(hit, True, time.perf_counter() - started)
        pairs = [[a, n] for a in settings.archs for n in settings.stages]
        keys = kernel_keys(path, text, settings, self.tl_version) if use_cache else {}
        reused = {name: k for name, key in keys.items() if (k := self._kernel_entry(folder, key, name)) is not None}
        specs = self._specs(path, text, settings, pairs, budgets, reused)
        sofar = _Partial(pairs, progress, reused)
        self.shown.discard(os.path.abspath(path))       # this lowering has shown nothing yet
        timings: dict = {"import_s": None, "wait_s": None, "variants": [], "reused": sorted(reused)}
        parts = await asyncio.gather(*(self._run(s, settings.timeout, sofar, timings) for s in specs))
        result = merge(parts, pairs, reused)
        if use_cache and not any(_interrupted(p) for p in parts):
            self._store_lowering(folder, cache_key(path, text, settings, self.tl_version), result, keys, reused)
        return Lowered(result, False, time.perf_counter() - started, timings)

    def _specs(self, path: str, text: str, settings: LowerSettings, pairs: list[list], budgets: dict | None,
               reused: dict[str, dict]) -> list[dict]:
        """One spec per worker: the variants cheapest first, dealt out over `jobs` workers; the
        kernels whose lowering is reused are skipped."""
        jobs = max(1, min(settings.jobs or 1, len(pairs)))
        ordered = self.cheapest_first(pairs)
        return [{"path": os.path.abspath(path), "text": text, "variants": ordered[i::jobs], "params": settings.params,
                 "budgets": budgets or {}, "skip": sorted(reused)} for i in range(jobs)]

    def _store_lowering(self, folder: Path, key: str, result: dict, keys: dict[str, str],
                        reused: dict[str, dict]) -> None:
        """The buffer's result under its key, and each kernel lowered now under its own."""
        self._store(folder, key, result)
        for k in result.get("kernels", []) if result.get("ok") else []:
            if k.get("name") in keys and k.get("name") not in reused:
                self._store(folder, keys[k["name"]], {"ok": True, "kernel": k})

    def _kernel_entry(self, folder: Path, key: str, name: str) -> dict | None:
        """One kernel's variants, lowered before from code its key says is unchanged."""
        where = cachedir.prepared(folder, 1, create=False)
        data = None if where is None else cachedir.read_file(where / f"{key}.json")
        try:
            entry = json.loads(data) if data is not None else None
        except Exception:       # noqa: BLE001 - an undecodable entry is a miss (and is rewritten)
            return None
        kernel = entry.get("kernel") if isinstance(entry, dict) and entry.get("ok") is True else None
        if not isinstance(kernel, dict) or kernel.get("name") != name or not isinstance(kernel.get("variants"), list) \
                or not kernel["variants"] or not all(isinstance(v, dict) for v in kernel["variants"]):
            return None
        return kernel

    def cheapest_first(self, pairs: list[list]) -> list[list]:
        """The variants in the order to lower them: the targets this server saw lower fastest
        first, and, for targets not seen yet, sm_90 and later before older ones."""
        def cost(pair: list) -> float:
            seen = self.costs.get(pair[0])
            if seen is not None:
                return seen
            return 0.0 if _arch_number(pair[0]) >= 90 else math.inf

        return sorted(pairs, key=cost)

    def pause_others(self, path: str) -> list[int]:
        """Stop (SIGSTOP) the workers lowering buffers other than `path`, so that `path`'s short
        analysis does not share two loaded cores with them (a second file's check took 3 s
        beside a first file's sm_80 lowering at a load of 8, 0.5 s alone); `resume` them.
        Only workers whose buffer already has its first variant are stopped, now or when it
        arrives (`_first_variant`): what they lower is the rest of the set, in the background.
        A first variant (the cheapest, under a second of CPU) is waited for by the user as much
        as `path` is: stopping it for 2 s put a code edit's diagnostics at 4.7 s at a load of 5."""
        owner_path = os.path.abspath(path)
        paused = [pid for pid, owner in list(self.running.items())
                  if owner != owner_path and owner in self.shown and _signal(pid, signal.SIGSTOP)]
        self._holding.append((owner_path, paused))
        return paused

    def resume(self, pids: list[int]) -> None:
        """Let the workers `pause_others` stopped go on (and stop no more for that analysis)."""
        self._holding = [(p, held) for p, held in self._holding if held is not pids]
        for pid in pids:
            _signal(pid, signal.SIGCONT)

    def _first_variant(self, pid: int, owner: str) -> None:
        """`owner`'s lowering delivered a variant: its worker is background work from now on,
        stopped while another buffer's analysis is awaited (within that analysis' pause)."""
        self.shown.add(owner)
        for path, pids in self._holding:
            if path != owner and pid not in pids and _signal(pid, signal.SIGSTOP):
                pids.append(pid)

    async def _run(self, spec: dict, timeout: float, sofar: _Partial | None = None,
                   timings: dict | None = None) -> dict:
        asked = time.perf_counter()
        async with self.slots:
            child = await self._worker()
            self.running[child.pid] = spec["path"]
            if timings is not None and timings.get("wait_s") is None:
                timings["wait_s"] = round(time.perf_counter() - asked, 3)

            def event(e: dict) -> None:
                if e.get("event") == "variant":
                    self._first_variant(child.pid, spec["path"])
                    v = e["variant"]
                    if v.get("ok") and isinstance(v.get("cpu_seconds"), (int, float)):
                        self.costs[v["arch"]] = float(v["cpu_seconds"])
                    if timings is not None:
                        timings["variants"].append((f"{e['kernel']} {v['arch']}", v.get("seconds")))
                elif e.get("event") == "done" and timings is not None:
                    timings["import_s"] = e.get("import_s")
                if sofar is not None:
                    sofar.add(e)

            try:
                return await run_worker(spec, timeout, child, event)
            finally:
                self.running.pop(child.pid, None)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child.pid, signal.SIGCONT)      # never left stopped
                if self.warm:       # the next buffer's worker, once this one no longer needs the CPU
                    asyncio.ensure_future(self.prepare())

    def _store(self, folder: Path, key: str, result: dict) -> None:
        """Write the entry and keep the newest KEEP_ENTRIES (editing makes one per version of
        the code); through `cachedir`: no link followed, only entries deleted."""
        where = cachedir.prepared(folder, 1)
        if where is not None and cachedir.write_file(where, f"{key}.json", json.dumps(result).encode()):
            cachedir.evict(where.parent, "lsp", keep=KEEP_ENTRIES)


def merge(parts: list[dict], pairs: list[list], reused: dict[str, dict] | None = None) -> dict:
    """One result from the workers' parts: kernels by name, variants in (arch, num_stages) order;
    `reused`: kernels the workers skipped (their code is unchanged), with their cached variants."""
    failed = next((p for p in parts if not p.get("ok")), None)
    if failed is not None:
        return failed
    order = {(a, n): i for i, (a, n) in enumerate(pairs)}
    kernels = _by_name(parts)
    for name, k in (reused or {}).items():
        if name in kernels and not kernels[name]["variants"]:
            kernels[name]["variants"] = [dict(v) for v in k["variants"]]
    crashed = next((p["crashed"] for p in parts if p.get("crashed")), None)
    for k in kernels.values():
        k["variants"].sort(key=lambda v: order.get((v["arch"], None if v.get("as_written") else v["num_stages"]), 0))
    return {"ok": True, "kernels": list(kernels.values()), **({"crashed": crashed} if crashed else {})}


def _by_name(parts: list[dict]) -> dict[str, dict]:
    """The kernels of every part, each once, with the variants of all parts."""
    kernels: dict[str, dict] = {}
    for part in parts:
        for k in part["kernels"]:
            kernels.setdefault(k["name"], {**k, "variants": []})["variants"].extend(k["variants"])
    return kernels


def _interrupted(part: dict) -> bool:
    """A worker's part that timed out or crashed: its result is not cached."""
    return part.get("kind") in ("timeout", "crash") or bool(part.get("crashed"))


def start_worker_now() -> subprocess.Popen | None:
    """A worker started before the server's event loop runs (`pipelint server` does this first
    thing, so that TileLang's import overlaps the server's own start-up: pygls, lsprotocol and
    the plugins take 1.5 s on a quiet machine, 4.5 s at a load of 6); `Lowerer.adopt` takes it.
    None without TileLang."""
    if tilelang_version() is None:
        return None
    try:
        return subprocess.Popen([sys.executable, "-m", "pipelint.lsp.worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError:
        return None


class _Adopted:
    """A `subprocess.Popen` worker seen as an `asyncio.subprocess.Process` (what run_worker uses)."""

    def __init__(self, popen: subprocess.Popen, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 stderr: asyncio.StreamReader) -> None:
        self.popen, self.stdin, self.stdout, self.stderr = popen, stdin, stdout, stderr
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        return await asyncio.get_running_loop().run_in_executor(None, self.popen.wait)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()

    @classmethod
    async def of(cls, popen: subprocess.Popen) -> _Adopted:
        loop = asyncio.get_running_loop()
        readers = []
        for pipe in (popen.stdout, popen.stderr):
            reader = asyncio.StreamReader(limit=1 << 20)
            await loop.connect_read_pipe(functools.partial(asyncio.StreamReaderProtocol, reader), pipe)
            readers.append(reader)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, popen.stdin)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return cls(popen, writer, readers[0], readers[1])


async def spawn_worker() -> asyncio.subprocess.Process:
    """A worker process in its own session (it imports TileLang at once, then reads its spec)."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pipelint.lsp.worker", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)


async def run_worker(spec: dict, timeout: float, child: asyncio.subprocess.Process | None = None,
                     on_event: Callable[[dict], None] | None = None) -> dict:
    """One worker process (`child`: one started before); its events (`on_event`: the kernels,
    each variant as it is lowered) as they come; a timeout, a crash or a cancellation kills
    its whole process group."""
    if child is None:
        child = await spawn_worker()
    events: list[dict] = []
    err = bytearray()

    def got(event: dict) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    async def drain() -> None:
        assert child.stderr is not None
        while chunk := await child.stderr.read(65536):
            err.extend(chunk[: max(0, 65536 - len(err))])

    async def talk() -> None:
        assert child.stdin is not None and child.stdout is not None
        from .trace import trace

        trace(f"spec sent to {child.pid}")
        child.stdin.write(json.dumps(spec).encode())
        with contextlib.suppress(ConnectionError):
            await child.stdin.drain()
        child.stdin.close()
        reader = _Events(got)
        while not any(e.get("event") == "done" for e in events[-1:]) and (chunk := await child.stdout.read(1 << 16)):
            reader.feed(chunk)
        reader.close()
        if events and events[-1].get("event") == "done":
            # the result is in: the worker's own exit (an interpreter with TileLang loaded, 1-3 s
            # on a loaded machine) is not waited for; it is ended with what it started
            asyncio.get_running_loop().run_in_executor(None, _kill, child)
            return
        await child.wait()

    drainer = asyncio.ensure_future(drain())
    try:
        await asyncio.wait_for(talk(), timeout)
    except TimeoutError:
        _kill(child)
        drainer.cancel()
        return {"ok": False, "kind": "timeout", "line": 1,
                "error": f"lowering did not finish in {timeout:g} s (hang?); raise [tool.pipelint.lower] timeout"}
    except BaseException:           # cancelled: a newer version of the buffer is being lowered
        _kill(child)
        drainer.cancel()
        raise
    with contextlib.suppress(asyncio.CancelledError, TimeoutError):
        await asyncio.wait_for(drainer, 5)
    done = next((e for e in reversed(events) if e.get("event") == "done"), None)
    if done is not None:
        return {k: v for k, v in done.items() if k not in ("event", "import_s")}
    return _crashed(events, spec, _crash_message(child.returncode, spec, err))


def _crash_message(returncode: int | None, spec: dict, err: bytes | bytearray) -> str:
    """Why a worker ended without its result: its last lines of stderr, or the budget that
    most likely ended it (SIGXCPU: the CPU backstop; another signal under a memory budget)."""
    tail = " | ".join(err.decode(errors="replace").strip().splitlines()[-3:])
    signalled = returncode is not None and returncode < 0
    xcpu = getattr(signal, "SIGXCPU", None)
    if signalled and xcpu is not None and returncode == -xcpu:
        tail = "it went over its CPU time (time-budget for every variant)"
    elif signalled and (spec.get("budgets") or {}).get("memory"):
        # TVM's C++ does not survive a failed allocation: over RLIMIT_AS it dies by a signal
        tail += (f" (killed by a signal: most likely over its memory budget of {spec['budgets']['memory']:g} MB, "
                 "memory-budget)")
    return f"lowering worker crashed (exit status {returncode}): {tail}"


def _crashed(events: list[dict], spec: dict, message: str) -> dict:
    """A worker that died: the variants it finished (they were streamed), the others failed
    with `message`; the whole file failed when it died before it found the kernels."""
    kernels = next((e["kernels"] for e in events if e.get("event") == "kernels"), None)
    if not kernels:
        return {"ok": False, "kind": "crash", "line": 1, "error": message}
    got: dict[str, list[dict]] = {}
    for e in events:
        if e.get("event") == "variant":
            got.setdefault(e.get("kernel", ""), []).append(e["variant"])
    skip = set(spec.get("skip") or ())
    out = []
    for k in kernels:
        variants = list(got.get(k["name"], []))
        if k["name"] not in skip:
            variants += _unfinished(k, variants, spec.get("variants", []), message)
        out.append({**k, "variants": variants})
    return {"ok": True, "kernels": out, "crashed": message}


def _unfinished(kernel: dict, done: list[dict], asked: list, message: str) -> list[dict]:
    """The variants of `asked` a crashed worker did not finish for `kernel`, failed with
    `message`.  A kernel lowered as written (no num_stages parameter) has one per target."""
    per_target = kernel.get("stage_param") is None and kernel.get("kind") != "prim_func"

    def key(arch: Any, n: Any) -> Any:          # JSON values of the worker's events
        return arch if per_target else (arch, n)

    seen = {key(v.get("arch"), None if v.get("as_written") else v.get("num_stages")) for v in done}
    out = []
    for arch, n in asked:
        if key(arch, n) not in seen:
            seen.add(key(arch, n))
            out.append({"arch": arch, "num_stages": n, "as_written": n is None, "ok": False,
                        "kind": "crash", "error": message})
    return out


class _Events:
    """Splits a worker's stdout into its `MARKER`-led JSON lines (anything else, such as what
    the kernel file prints, is skipped)."""

    def __init__(self, got: Callable[[dict], None]) -> None:
        self.got = got
        self.buffer = ""
        self.marker = MARKER.lstrip("\n")

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk.decode(errors="replace")
        while True:
            at = self.buffer.find(self.marker)
            if at < 0:
                self.buffer = self.buffer[-len(self.marker):]
                return
            end = self.buffer.find("\n", at)
            if end < 0:
                self.buffer = self.buffer[at:]
                return
            line, self.buffer = self.buffer[at + len(self.marker):end], self.buffer[end + 1:]
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self.got(event)

    def close(self) -> None:
        self.feed(b"\n")


class _Partial:
    """The result so far, over the workers of one buffer, for `progress`."""

    def __init__(self, pairs: list[list], progress: Progress | None, reused: dict[str, dict] | None = None) -> None:
        self.pairs = pairs
        self.progress = progress
        self.reused = reused or {}
        self.kernels: dict[str, dict] = {}

    def add(self, event: dict) -> None:
        if event.get("event") == "kernels":
            for k in event.get("kernels", []):
                old = self.reused.get(k["name"])
                self.kernels.setdefault(k["name"], {**k, "variants": [dict(v) for v in old["variants"]] if old else []})
        elif event.get("event") == "variant" and event.get("kernel") in self.kernels:
            self.kernels[event["kernel"]]["variants"].append(event["variant"])
            done = sum(len(k["variants"]) for k in self.kernels.values())
            if self.progress is not None and done < len(self.pairs) * len(self.kernels):   # the last: the result
                result = merge([{"ok": True, "kernels": list(self.kernels.values())}], self.pairs)
                self.progress({**result, "partial": True})


def _signal(pid: int, signum: int) -> bool:
    """Send `signum` to `pid`; whether it was delivered (the worker may have exited)."""
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _arch_number(arch: str) -> int:
    digits = "".join(c for c in arch if c.isdigit())
    return int(digits) if digits else 0


def _kill(child: asyncio.subprocess.Process) -> None:
    """Kill the worker, its process group and every descendant, also those that started a
    session of their own (the worker is their subreaper: `procs`)."""
    from .procs import kill_tree

    if hasattr(os, "killpg"):
        kill_tree(child.pid)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        child.kill()
