"""The server's analysis of one buffer, in a process of its own: a `.cu`/`.cuh` buffer's check,
and a TileLang buffer's check of its lowered variants (`analyse_python_in_child`).

Before issue 38 the server analysed buffers in one thread of its own process: a slow 10 MB
buffer held every other file's diagnostics back for 155 s, used 2.46 GB, and an edit did not
stop it.  Now each analysis is a child process (forked from a forkserver that has pipelint
imported, so a job starts in milliseconds) that runs `engine.check_text` with `check`'s CPU
and memory budgets; several run side by side, so one buffer never waits for another, and
cancelling the job (a newer version of the buffer, the buffer closed) kills its process.
Buffers over `max-file-size` are not analysed at all (`buffer_too_large`).  A Python buffer's
lowered variants are checked the same way, each variant within the time budget (as `check
lowered/` checks one file per variant), all of them within the memory budget.
"""
from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sys
from dataclasses import dataclass
from typing import Any

from ..limits import BOUNDS, DEFAULT_MAX_BYTES, from_config

# plugins loaded, grammar built: cudawarm
_PRELOAD = ["pipelint.engine", "pipelint.lsp.analysis", "pipelint.lsp.cudawarm"]


@dataclass(frozen=True)
class Budgets:
    """What one buffer's analysis may cost: `check`'s bounds, as the configuration tightens them."""

    time: float
    memory: float
    max_bytes: int

    @classmethod
    def of(cls, config: Any) -> Budgets:
        values = {}
        for bound in BOUNDS:
            value, _warning = from_config(bound, getattr(config, bound.key.replace("-", "_"), None), "")
            values[bound.key] = bound.default if value is None else value
        return cls(float(values.get("time-budget", 20.0)), float(values.get("memory-budget", 2048.0)),
                   int(values.get("max-file-size", DEFAULT_MAX_BYTES / 2**20) * 2**20))


def buffer_too_large(text: str, budgets: Budgets) -> str | None:
    """The message for a buffer over the size limit (what `check` says of such a file), else None."""
    size = len(text.encode("utf-8", errors="surrogateescape"))
    if size <= budgets.max_bytes:
        return None
    return (f"buffer is {size / 2**20:.1f} MB, over the {budgets.max_bytes / 2**20:g} MB limit "
            f"(max-file-size): not analysed")


def _context() -> Any:
    if sys.platform.startswith("linux"):
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


_CTX = _context()


def warm_up() -> None:
    """Start the forkserver now (it imports pipelint and loads the plugins, about half a
    second), not when the first buffer is opened."""
    if _CTX.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with contextlib.suppress(OSError, ValueError):
            forkserver.ensure_running()


def _noop() -> None:
    pass


async def ready(timeout: float = 30.0) -> bool:
    """Wait (off the event loop) until the forkserver has pipelint imported and answers: the
    first `Process.start` otherwise blocks the server's event loop until the forkserver's
    preload is done (1.7 s on the loaded 2-core machine), and no other file's message is read
    meanwhile.  The server awaits this in `initialize`."""
    def start_one() -> bool:
        proc = _CTX.Process(target=_noop, daemon=True)
        proc.start()
        proc.join(timeout)
        return proc.exitcode == 0

    try:
        return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, start_one), timeout)
    except (TimeoutError, OSError, ValueError):
        return False


# A lowered buffer's check takes 0.2-1 s (a load of 6 stretches it): niced after 0.3 s, it waited
# behind every other process on the machine (4.9 s instead of 0.6 s); only one that runs far past
# that yields the CPU.
_QUICK_PYTHON = 5.0
_QUICK = 0.3        # seconds an analysis runs at normal priority; longer ones continue niced
# A long analysis' scheduler group: nice 15 there starved a pathological buffer's analysis (175 s
# instead of 25 s at a load of 6, behind every other session); 5 still lets a small file's check by
# (0.5 s beside it).
_GROUP_NICE = 5


def _background(pid: int) -> None:
    """Lower a long analysis' CPU priority (nice 15): on a 2-core machine a pathological buffer
    would otherwise keep a newly opened small file waiting for a core (1.4 s instead of 0.1 s).
    The analysis has a session of its own (`_own_session`), so its scheduler group is niced
    too (to `_GROUP_NICE`): with autogroup, a process's nice value only ranks it within its group,
    and the group's ranks it against the other sessions (other analyses, the lowering workers,
    everything else on the machine)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, pid, 15)
    with contextlib.suppress(OSError), open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as fh:
        fh.write(str(_GROUP_NICE))


def _own_session() -> None:
    """Put this analysis process in a session of its own, as the lowering workers are.  Linux
    shares the CPU between sessions first (autogroup, on by default on desktop distributions):
    in the server's session every analysis shared one group's share with the server and each
    other (a second file's check beside a code edit's took 1.7 s at a load of 3.5), while one
    lowering worker had a whole group's.  It is killed by its pid as before."""
    with contextlib.suppress(OSError, AttributeError):
        os.setsid()


def _job(conn: Any, path: str, text: str, disable: tuple[str, ...], tables: dict, budgets: Budgets) -> None:
    """In the child: load the plugins, check the text within the budgets, send the result back."""
    from ..engine import check_text
    from ..pluginhost import load_plugins

    if disable:
        host = load_plugins(disable)
    else:       # loaded in the forkserver: this job's own copy
        from .cudawarm import HOST as host
    host.configure(tables)
    conn.send(check_text(path, text, host, budgets.time, budgets.memory))
    conn.close()


def _python_job(conn: Any, path: str, text: str, lowered: dict, config: Any, dump: Any,
                budgets: Budgets) -> None:
    """In the child: check a TileLang buffer's lowered variants within the budgets."""
    from ..engine import _OverBudget, memory_budget, time_budget
    from ..findings import Severity
    from .analysis import Diagnostic, FileAnalysis, analyze_python
    from .cudawarm import HOST as host

    variants = sum(len(k.get("variants", ())) for k in lowered.get("kernels", ())) if lowered.get("ok") else 0
    host.configure(config.plugins if config is not None else {})
    try:
        with time_budget(budgets.time * max(1, variants)), memory_budget(budgets.memory):
            analysis = analyze_python(path, text, lowered, host, config, dump)
    except (_OverBudget, MemoryError, RecursionError) as exc:
        what = ("went over its time budget" if isinstance(exc, _OverBudget) else
                "went over its memory budget" if isinstance(exc, MemoryError) else "recursed too deeply")
        analysis = FileAnalysis(path, [Diagnostic(
            1, 0, 1, Severity.WARNING, "analysis-limit",
            f"the check of this file's lowered CUDA {what} ({budgets.time:g} s of CPU per variant, "
            f"{budgets.memory:g} MB; time-budget, memory-budget): its findings are missing")])
    conn.send(analysis)
    conn.close()


async def check_in_child(path: str, text: str, tables: dict, budgets: Budgets,
                         disable: tuple[str, ...] = ()) -> tuple:
    """`engine.check_text(path, text)` in a child process: (FileResult, findings, errors).
    Cancelling the awaiting task kills the child; a child that dies early raises RuntimeError."""
    return await _in_child(_job, (path, text, disable, tables, budgets), path)


async def analyse_python_in_child(path: str, text: str, lowered: dict, config: Any, dump: Any,
                                  budgets: Budgets) -> Any:
    """`analysis.analyze_python` in a child process (its FileAnalysis), within the budgets."""
    return await _in_child(_python_job, (path, text, lowered, config, dump, budgets), path, _QUICK_PYTHON)


SPILL_BYTES = 256 * 1024    # a text argument larger than this goes to the child through a file


@dataclass(frozen=True)
class _Spilled:
    """A large text argument, written to a private temporary file: `Process.start` pickles its
    arguments and writes them down a 64 KB pipe from the event loop, and on a loaded machine a
    5.8 MB buffer took 1.4 s of that, during which no other file's message was read."""

    path: str


def _spill(value: Any) -> Any:
    import tempfile

    if not isinstance(value, str) or len(value) <= SPILL_BYTES:
        return value
    fd, name = tempfile.mkstemp(prefix="pipelint-buffer-", suffix=".txt")     # 0600, ours
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass", newline="") as fh:
        fh.write(value)
    return _Spilled(name)


def _unspill(value: Any) -> Any:
    if not isinstance(value, _Spilled):
        return value
    with open(value.path, encoding="utf-8", errors="surrogatepass", newline="") as fh:
        text = fh.read()
    with contextlib.suppress(OSError):
        os.unlink(value.path)
    return text


def _run_spilled(conn: Any, target: Any, *args: Any) -> None:
    _own_session()
    target(conn, *(_unspill(a) for a in args))


async def _in_child(target: Any, args: tuple, path: str, quick: float | None = None) -> Any:
    parent, child = _CTX.Pipe(duplex=False)
    spilled = tuple(_spill(a) for a in args)
    proc = _CTX.Process(target=_run_spilled, args=(child, target, *spilled), daemon=True)
    try:
        proc.start()
    finally:
        child.close()
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()
    loop.add_reader(parent.fileno(), ready.set)
    try:
        try:
            await asyncio.wait_for(asyncio.shield(ready.wait()), _QUICK if quick is None else quick)
        except TimeoutError:
            _background(proc.pid)           # a long run yields the CPU to buffers opened after it
            await ready.wait()
        try:
            return parent.recv()
        except EOFError:
            raise RuntimeError(f"the analysis process of {path} died (exit status {proc.exitcode})") from None
    finally:
        loop.remove_reader(parent.fileno())
        parent.close()
        if proc.is_alive():
            proc.kill()
        with contextlib.suppress(Exception):
            proc.join(1)
        for a in spilled:
            if isinstance(a, _Spilled):
                with contextlib.suppress(OSError):
                    os.unlink(a.path)
