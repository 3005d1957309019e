"""Start-up and first-diagnostic latency of `pipelint server`, driven over stdio by pygls's client.

    python benchmarks/bench_lsp.py [KERNEL.py] [--runs 3] [--transcript FILE.json]
    python benchmarks/bench_lsp.py --pathological [--runs 3]

For each run a fresh server process is started and the kernel (default: examples/gemm.py) is
opened; these numbers are taken:

* start-up: spawning the server until it answers `initialize` (issue 39: it answers at once;
  what it starts, TileLang's import in the first worker and the forkserver, goes on behind);
* cold from the spawn (the goal's measure: a user counts from the moment the editor starts the
  server): spawning the server until the first `publishDiagnostics`;
* cold: `didOpen` until the first `publishDiagnostics` with an empty lowering cache (the
  kernel is lowered for the configured targets: by default sm_80 and sm_90, as written; the
  server publishes the first lowered variant's findings at once, cheapest variant first), and
  until the complete set (every variant: `cold complete`);
* cached: the same in a new server process once the lowering is cached;
* after a comment edit: `didChange` appending a comment to the `T.Pipelined` line until the
  new diagnostics (the code digest is unchanged: no lowering; includes the server's pause in
  typing, 0.5 s; 0.8 s before issue 39's code-edit work);
* after a code edit: a blank line inserted at the top (lowered again, by the worker the server
  keeps waiting with TileLang imported; includes the debounce), first and complete;
* second file: while that code edit is being lowered, a second kernel file (examples/reduction.py,
  lowered and cached by the cold server, opened with a comment added so that its analysis is not
  cached) is opened; the time to its diagnostics (`second file`), and the same file's time
  opened alone once that lowering is done (`alone`, another comment: analysis not cached).
  "Unaffected" means: within 1 s, and within 0.5 s of `alone`.

The server's log message for each checked file says where the lowering time went (the worker's
TileLang import, waiting for a worker, each variant); the cold run's is printed.

Goals (issue 39, on the 2-core development machine, medians of 3 fresh servers): first
diagnostic cold <= 5 s from the server's spawn, after a code edit <= 2 s, cached <= 0.3 s, and a second file's
diagnostics unaffected by the first's lowering (<= 1 s).  `--transcript` writes one session
(the requests, the diagnostics, a hover, the inlay hints) as JSON.

`--pathological` (issue 38): a 5.8 MB `.cu` buffer whose analysis runs into the 20 s CPU budget
is opened, then, 0.5 s later, a small `.cu` file; the goal is that the small file's diagnostics
arrive within 1 s of its open while the big one is still being analysed (each buffer is checked
in a process of its own).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

ROOT = Path(__file__).resolve().parent.parent


class Session:
    """One server process and a client that records what it sent and received."""

    def __init__(self, cache: str, options: dict | None = None) -> None:
        self.client = LanguageClient("pipelint-bench", "1")
        self.cache = cache
        self.options = options or {}
        self.diagnostics: asyncio.Queue = asyncio.Queue()
        self.messages: list[tuple[float, str]] = []
        self.published: list[tuple[float, lsp.PublishDiagnosticsParams]] = []
        self.log: list[dict] = []
        self.convert = default_converter()
        self.spawned = 0.0                  # when the server process was spawned

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(_: object, params: lsp.PublishDiagnosticsParams) -> None:
            self.record("server → client", "textDocument/publishDiagnostics", params)
            self.diagnostics.put_nowait((time.perf_counter(), params))
            self.published.append((time.perf_counter(), params))

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def logged(_: object, params: lsp.LogMessageParams) -> None:
            self.record("server → client", "window/logMessage", params)
            self.messages.append((time.perf_counter(), params.message))

    def record(self, direction: str, method: str, payload: object) -> None:
        self.log.append({"direction": direction, "method": method,
                         "params": self.convert.unstructure(payload) if payload is not None else None})

    async def start(self) -> float:
        started = self.spawned = time.perf_counter()
        env = dict(os.environ, PIPELINT_CACHE_DIR=self.cache)
        await self.client.start_io(sys.executable, "-m", "pipelint", "server", env=env)
        params = lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=ROOT.as_uri(), process_id=os.getpid(),
            initialization_options=self.options)
        self.record("client → server", "initialize", params)
        await self.client.initialize_async(params)
        self.client.initialized(lsp.InitializedParams())
        return time.perf_counter() - started

    async def open(self, path: Path) -> tuple[float, lsp.PublishDiagnosticsParams]:
        params = lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=path.as_uri(), language_id="python", version=1, text=path.read_text()))
        self.record("client → server", "textDocument/didOpen", params)
        started = time.perf_counter()
        self.client.text_document_did_open(params)
        when, diags = await asyncio.wait_for(self.diagnostics.get(), 300)
        return when - started, diags

    async def complete(self, path: Path, since: float, timeout: float = 300) -> tuple[float, str]:
        """When the complete diagnostics of `path` arrived after `since` (the publish that follows
        the server's log message for the file), and that message."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            said = next(((t, m) for t, m in self.messages if t >= since and f"pipelint: {path.name}: " in m
                         and "diagnostic(s)" in m), None)
            if said is not None:
                after = [t for t, p in self.published if t >= said[0] and p.uri == path.as_uri()]
                if after:
                    return after[0] - since, said[1]
            await asyncio.sleep(0.02)
        raise TimeoutError(f"no complete diagnostics for {path}")

    async def comment_edit(self, path: Path) -> float:
        lines = path.read_text().splitlines()
        line = next(i for i, t in enumerate(lines) if "T.Pipelined(" in t)
        end = lsp.Position(line, len(lines[line]))
        params = lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(end, end), text="  # edited")])
        self.record("client → server", "textDocument/didChange", params)
        started = time.perf_counter()
        self.client.text_document_did_change(params)
        when, _ = await asyncio.wait_for(self.diagnostics.get(), 300)
        return when - started

    async def code_edit(self, path: Path, second: Path | None = None) -> tuple[float, float, float | None]:
        """A blank line inserted at the top: the code digest changes (lines move), so the buffer
        is lowered again, by the worker the server keeps waiting with TileLang imported.  The
        first and the complete diagnostics' times, and (`second`: a file opened while this one
        is being lowered) the second file's."""
        params = lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=3),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                                                  text="\n")])
        self.record("client → server", "textDocument/didChange", params)
        await asyncio.sleep(5.0)            # the standby worker has imported TileLang by now
        started = time.perf_counter()
        self.client.text_document_did_change(params)
        other = None
        if second is not None:
            await asyncio.sleep(1.0)        # past the typing pause (0.5 s): the edit is being lowered
            # a comment on its first line: its lowering is cached (comments do not count) but its
            # analysis is not (they do: suppressions), so it is checked beside this lowering
            lines = second.read_text().split("\n")
            lines[0] += "  # opened during another file's lowering"
            opened = self.send_open(second, "\n".join(lines), "python")
            other = await self.published_for(second.as_uri()) - opened
        first = next(t for t, p in self.published if t >= started and p.uri == path.as_uri()) \
            if any(t >= started and p.uri == path.as_uri() for t, p in self.published) else \
            await self.published_for(path.as_uri())
        done, _ = await self.complete(path, started)
        while not self.diagnostics.empty():
            self.diagnostics.get_nowait()
        return first - started, done, other

    async def alone(self, second: Path) -> float:
        """The second file's open-to-diagnostics with nothing else running (closed, then opened
        with another comment: its lowering cached, its analysis not): what `second` is held to."""
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(second.as_uri())))
        await self.published_for(second.as_uri())       # the close's empty diagnostics
        lines = second.read_text().split("\n")
        lines[0] += "  # opened alone"
        opened = self.send_open(second, "\n".join(lines), "python")
        return await self.published_for(second.as_uri()) - opened

    async def hover_and_hints(self, path: Path, shift: int = 0) -> None:
        """Hover and inlay hints on the T.Pipelined line (`shift`: lines the edits inserted above it)."""
        line = next(i for i, t in enumerate(path.read_text().splitlines()) if "T.Pipelined(" in t) + shift
        hover = lsp.HoverParams(lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(line, 20))
        self.record("client → server", "textDocument/hover", hover)
        result = await self.client.text_document_hover_async(hover)
        self.record("server → client", "textDocument/hover (result)", result)
        hints = lsp.InlayHintParams(lsp.TextDocumentIdentifier(path.as_uri()),
                                    lsp.Range(lsp.Position(0, 0), lsp.Position(line + 10, 0)))
        self.record("client → server", "textDocument/inlayHint", hints)
        found = await self.client.text_document_inlay_hint_async(hints)
        self.record("server → client", "textDocument/inlayHint (result)", found)

    def send_open(self, path: Path, text: str, language: str = "cuda-cpp") -> float:
        params = lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=path.as_uri(), language_id=language, version=1, text=text))
        self.record("client → server", "textDocument/didOpen", params)
        self.client.text_document_did_open(params)
        return time.perf_counter()

    async def published_for(self, uri: str, timeout: float = 300) -> float:
        """When the next diagnostics of `uri` arrived (those of other files are dropped)."""
        while True:
            when, params = await asyncio.wait_for(self.diagnostics.get(), timeout)
            if params.uri == uri:
                return when

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


SECOND = ROOT / "examples" / "reduction.py"


async def one_run(kernel: Path, transcript: Path | None, options: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="pipelint-bench-lsp-") as cache:
        cold = Session(cache, options)
        startup = await cold.start()
        opened = time.perf_counter()
        first, diags = await cold.open(kernel)
        from_spawn = opened + first - cold.spawned
        complete, breakdown = await cold.complete(kernel, opened)
        await cold.open(SECOND)             # lowered and cached for the second-file measure
        await cold.complete(SECOND, opened)
        await cold.stop()
        warm = Session(cache, options)
        await warm.start()
        cached, _ = await warm.open(kernel)
        while not warm.diagnostics.empty():
            warm.diagnostics.get_nowait()
        edit = await warm.comment_edit(kernel)
        relower, relower_done, second = await warm.code_edit(kernel, SECOND)
        alone = await warm.alone(SECOND)
        if transcript is not None:
            await warm.hover_and_hints(kernel, shift=1)      # the code edit added a line on top
            transcript.write_text(json.dumps(cold.log + warm.log, indent=1, ensure_ascii=False) + "\n")
        await warm.stop()
    return {"startup_s": startup, "cold_from_spawn_s": from_spawn, "first_diagnostic_cold_s": first,
            "cold_complete_s": complete, "first_diagnostic_cached_s": cached, "after_comment_edit_s": edit,
            "after_code_edit_s": relower, "code_edit_complete_s": relower_done, "second_file_s": second,
            "second_file_alone_s": alone, "diagnostics": len(diags.diagnostics), "breakdown": breakdown}


async def pathological_run() -> dict:
    """The small file's latency while a pathological buffer is analysed, and the big one's."""
    fixtures = ROOT / "tests" / "fixtures" / "kernels"
    with tempfile.TemporaryDirectory(prefix="pipelint-bench-lsp-") as tmp:
        big, small = Path(tmp) / "pathological.cu", Path(tmp) / "small.cu"
        session = Session(str(Path(tmp) / "cache"))
        await session.start()
        opened_big = session.send_open(big, (fixtures / "flash_attn_fwd_sm_90_s4.cu").read_text() * 400)
        await asyncio.sleep(0.5)
        opened_small = session.send_open(small, (fixtures / "gemm_f16_sm_80_s3.cu").read_text())
        small_at = await session.published_for(small.as_uri())
        big_at = await session.published_for(big.as_uri())
        await session.stop()
    return {"second_file_s": small_at - opened_small, "pathological_s": big_at - opened_big,
            "second_before_pathological": small_at < big_at}


def pathological(runs: int) -> int:
    results = []
    for i in range(runs):
        r = asyncio.run(pathological_run())
        results.append(r)
        print(f"run {i + 1}: second file's diagnostics {r['second_file_s']:.2f} s after its open; "
              f"the pathological buffer's {r['pathological_s']:.1f} s after its own", flush=True)
    median = statistics.median(r["second_file_s"] for r in results)
    ok = median < 1 and all(r["second_before_pathological"] for r in results)
    print(f"median: second file {median:.2f} s; goal (< 1 s, before the pathological buffer): "
          f"{'met' if ok else 'NOT met'} on {os.cpu_count()} core(s)")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", nargs="?", default=str(ROOT / "examples" / "gemm.py"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--transcript", default=None, help="write one session's messages here (JSON)")
    parser.add_argument("--no-warm-worker", action="store_true",
                        help="initialization option warmWorker: false (no worker waits with TileLang imported)")
    parser.add_argument("--pathological", action="store_true",
                        help="a second file's latency while a pathological buffer is analysed")
    args = parser.parse_args()
    if args.pathological:
        return pathological(args.runs)
    kernel = Path(args.kernel).resolve()
    runs = []
    for i in range(args.runs):
        options = {"warmWorker": False} if args.no_warm_worker else {}
        r = asyncio.run(one_run(kernel, Path(args.transcript) if args.transcript and i == 0 else None, options))
        runs.append(r)
        print(f"run {i + 1} (load {os.getloadavg()[0]:.1f}): start-up {r['startup_s']:.2f} s, "
              f"first diagnostic cold {r['cold_from_spawn_s']:.2f} s from the spawn, "
              f"{r['first_diagnostic_cold_s']:.2f} s from didOpen (complete {r['cold_complete_s']:.2f} s), "
              f"cached {r['first_diagnostic_cached_s']:.2f} s, "
              f"after a comment edit {r['after_comment_edit_s']:.2f} s, "
              f"after a code edit {r['after_code_edit_s']:.2f} s (complete {r['code_edit_complete_s']:.2f} s), "
              f"second file during that lowering {r['second_file_s']:.2f} s (alone {r['second_file_alone_s']:.2f} s) "
              f"({r['diagnostics']} diagnostic(s))\n    cold: {r['breakdown']}", flush=True)
    keys = ("startup_s", "cold_from_spawn_s", "first_diagnostic_cold_s", "cold_complete_s", "first_diagnostic_cached_s",
            "after_comment_edit_s", "after_code_edit_s", "code_edit_complete_s", "second_file_s", "second_file_alone_s")
    median = {k: statistics.median(r[k] for r in runs) for k in keys}
    print("median: " + ", ".join(f"{k} {v:.2f}" for k, v in median.items()))
    goals = {"cold_from_spawn_s": 5.0, "after_code_edit_s": 2.0, "first_diagnostic_cached_s": 0.3,
             "second_file_s": 1.0}
    missed = [k for k, limit in goals.items() if median[k] > limit]
    if median["second_file_s"] > median["second_file_alone_s"] + 0.5:
        missed.append("second_file_s (more than 0.5 s over the same file opened alone)")
    print(f"goals (cold <= 5 s from the server's spawn, code edit <= 2 s, cached <= 0.3 s, second file <= 1 s "
          f"and within 0.5 s of the same file opened alone): "
          f"{'met' if not missed else 'NOT met: ' + ', '.join(missed)} on {os.cpu_count()} core(s), "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
