"""`pipelint server`: a Language Server over stdio (pygls, lsprotocol types).

* Diagnostics: a TileLang Python buffer is lowered (`lsp.lowering`: cached, worker
  processes with a timeout) and checked on open, on save and, after a pause in typing, on
  change; a newer version cancels the run in flight.  `.cu`/`.cuh` buffers are checked as
  `check` checks files.  Each diagnostic carries the rule id (linked to its page), the help
  line and `relatedInformation` at the other Python lines involved.
* Hover on a `T.Pipelined` loop (or a `T.alloc_shared`): that loop's facts per variant.
* Inlay hints after `T.Pipelined(...)` and `T.alloc_shared(...)`.
* Code action: `# pipelint: ignore[RULE]` (`// ...` in CUDA) on the diagnostic's line.
* Progress (`$/progress`) while a buffer is being lowered, where the client shows it.
* Progressive: the first lowered variant's findings are published as soon as they exist, the
  complete set when every variant is lowered (the variants are lowered cheapest first).
* Stale: while a buffer does not parse, the last diagnostics stay, each saying it belongs to the
  last version that parsed, with one more at the syntax error; hovers say so too.
* Bounded (issue 38): every analysis runs in a process of its own with `check`'s CPU and memory
  budgets (`cudajob`), lowering workers get the same budgets per variant, and a buffer over
  max-file-size is neither lowered nor analysed.

Initialization options (all optional): `{"lintOnChange": true, "debounce": 0.5, "lowerPython": true,
"warmWorker": true}` (`lowerPython: false`: check `.cu` buffers only, lowering runs the kernel
file's Python; `warmWorker: false`: no lowering worker waits with TileLang imported).
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..errors import UsageError
from ..findings import Severity
from ..report.escape import visible
from .analysis import Diagnostic, FileAnalysis, analyze_cuda
from .lowering import Lowerer, cache_folder, dump_folder
from .pysource import scan
from .settings import lower_settings
from .trace import trace

log = logging.getLogger("pipelint.lsp")
SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
            Severity.NOTE: lsp.DiagnosticSeverity.Information}
CUDA_SUFFIXES = (".cu", ".cuh")
WAIT_FOR_ANALYSIS = 300.0           # a code action waits this long for a run in flight
WAIT_FOR_HOVER = 1.0                # a hover waits this long, then answers from the source alone
# The pause in typing before a change is checked: clangd's (its fixed default was 500 ms; its
# adaptive policy now waits 50-500 ms, as long as the last rebuild took, never more than 500 ms).
# Clients debounce too (Neovim 150 ms, VS Code's clients about 300 ms).  A typing burst still
# costs one lowering: each change cancels the run that is still waiting.
DEBOUNCE = 0.5
PAUSE_OTHERS = 2.0                  # seconds another buffer's lowering may be stopped for an analysis
STALE = "stale"                     # the code of the diagnostic that says the others are stale


@dataclass
class DocState:
    task: asyncio.Task | None = None
    analysis: FileAnalysis | None = None
    version: int | None = None
    lowered: dict | None = None         # the worker's result the analysis came from (facts)
    text: str | None = None             # the text it was made from
    params: dict | None = None          # the `lower` table's params (the static facts use them)
    stale: str | None = None            # why the analysis is of an older version (it does not parse)
    complete: bool = True               # false while later variants are still being lowered


class PipelintServer(LanguageServer):
    def __init__(self, cache_dir: Path | None = None, host: Any = None) -> None:
        super().__init__("pipelint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        from ..pluginhost import load_plugins

        self.host = host if host is not None else load_plugins()    # the command line's: loaded once
        self.cache_dir = cache_dir          # --cache-dir: over [tool.pipelint] cache-dir
        self.lowerer = Lowerer(cache_dir, warm=True)
        self.docs: dict[str, DocState] = {}
        self.lint_on_change = True
        self.debounce = DEBOUNCE
        self.lower_python = True            # false: only .cu/.cuh buffers (no kernel file is run)
        self.warm_worker = True             # a lowering worker waits with TileLang imported
        self._tokens = itertools.count(1)
        self.early_worker: Any = None       # a worker `pipelint server` started before the loop ran
        self._lowered: dict[str, tuple[dict | None, dict]] = {}    # path -> its last lowering, params
        self.adopted: asyncio.Future | None = None     # the early worker adopted, the standby asked for
        self.forked: asyncio.Future | None = None      # the analysis processes' forkserver answers

    def start_up(self) -> None:
        """Start what `initialize` used to wait for, without waiting: the worker `pipelint server`
        started (TileLang importing) becomes the standby, and the forkserver is started and made
        to answer off the event loop (`cudajob.ready`).  The forkserver starts here, not at the
        spawn: its preload (0.3 s of CPU alone) competed on two cores with the server's own
        start-up and the worker's TileLang import, which is the first diagnostic's critical path;
        the first analysis process is needed only once the first variant is lowered."""
        from .cudajob import ready

        early, self.early_worker = self.early_worker, None

        async def adopt() -> None:
            await self.lowerer.adopt(early)     # started before the event loop ran, TileLang importing
            await self.lowerer.prepare()

        async def fork() -> None:
            await ready()
            trace("forkserver ready")

        self.adopted = asyncio.ensure_future(adopt())
        self.forked = asyncio.ensure_future(fork())

    async def started(self, what: asyncio.Future | None) -> None:
        """Wait for a part of the start-up (`adopted`, `forked`); one that failed is not waited for
        (a lowering then spawns its own worker, an analysis starts the forkserver itself)."""
        if what is not None and not what.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(what)

    # -------------------------------------------------------------- runs
    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Analyse `uri` after `delay` seconds, cancelling the run in flight for it."""
        state = self.docs.setdefault(uri, DocState())
        if state.task is not None and not state.task.done():
            state.task.cancel()
        state.task = asyncio.ensure_future(self._run(uri, delay))

    def recheck(self, importing: str | None = None) -> None:
        """Check the open buffers again: all of them (the configuration changed), or those that
        import the module `importing` (saved), directly or through other project modules; a check
        in flight read the old one: restarted."""
        from ..lowering.imports import project_imports

        for uri in list(self.docs):
            path = to_fs_path(uri) or uri
            if importing is not None:
                if not path.endswith(".py") or path == importing:
                    continue
                text = self.workspace.get_text_document(uri).source
                # transitively, as the lowering cache's key does (a tile size two imports away)
                if not any(_same_file(m, importing) for m in project_imports(path, text)):
                    continue
            self.schedule(uri)

    async def wait(self, uri: str) -> FileAnalysis | None:
        state = self.docs.get(uri)
        if state is None:
            return None
        if state.task is not None and not state.task.done():
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(state.task), WAIT_FOR_ANALYSIS)
        return state.analysis

    async def _run(self, uri: str, delay: float) -> None:
        """Analyse the buffer's current text and publish it (partial results as they come; the
        last good diagnostics, marked stale, while it does not parse)."""
        if delay:
            await asyncio.sleep(delay)
        doc = self.workspace.get_text_document(uri)
        path, text, version = to_fs_path(uri) or uri, doc.source, doc.version
        trace(f"run {Path(path).name} v{version}")
        state = self.docs.setdefault(uri, DocState())
        if path.endswith(".py"):
            src = scan(text)
            if src.syntax_error is not None:    # mid-edit: the last good diagnostics, marked stale
                self._publish_stale(uri, state, version, src.syntax_error, [])
                return

        def partial(analysis: FileAnalysis, lowered: dict | None) -> None:
            state.analysis, state.version, state.lowered, state.text = analysis, version, lowered, text
            state.stale, state.complete = None, False
            self.publish(uri, analysis, version)

        analysis = await self._analysis_or_error(path, text, partial)
        if analysis is None:
            return
        for error in analysis.errors:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning,
                                                         visible(f"pipelint: {path}: {error}")))
        broken = [d for d in analysis.diagnostics if d.rule == "parse-error"]
        if broken and path.endswith(CUDA_SUFFIXES) and _parsed(state.analysis):
            self._publish_stale(uri, state, version, (broken[0].line, broken[0].message), broken)
            return
        state.analysis, state.version, state.text, state.stale, state.complete = analysis, version, text, None, True
        state.lowered, state.params = self._lowered.pop(path, (None, state.params))
        self.publish(uri, analysis, version)
        trace(f"published {Path(path).name} v{version}")
        if path.endswith(".py") and self.lower_python and state.lowered is not None:
            asyncio.ensure_future(self.lowerer.prepare())   # the next lowering's worker, TileLang imported

    async def _analysis_or_error(self, path: str, text: str, partial: Any) -> FileAnalysis | None:
        """`analyse`, with a broken configuration as a diagnostic on line 1 (where the user
        looks); None after a bug in the analysis, which is logged (the server outlives it)."""
        try:
            return await self.analyse(path, text, partial)
        except asyncio.CancelledError:
            raise
        except UsageError as exc:
            return FileAnalysis(path, [Diagnostic(1, 0, 1, Severity.ERROR, "configuration", str(exc))])
        except Exception as exc:
            log.exception("analysis of %s failed", visible(path))      # stderr: maybe a terminal
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error,
                                                         visible(f"pipelint: analysis of {path} failed: {exc}")))
            return None

    def _publish_stale(self, uri: str, state: DocState, version: int | None, error: tuple[int, str],
                       current: list[Diagnostic]) -> None:
        """While a buffer does not parse: the last diagnostics of the version that did, each
        saying so, the parse error's own (`current`, for CUDA; the Python server gives Python's),
        and one informational diagnostic at the error."""
        line, message = error
        good = state.version
        state.stale = (f"this version does not parse (line {line}: {message}); these facts are of version "
                       f"{good}, the last one that did")
        old = state.analysis.diagnostics if state.analysis is not None else []
        marked = [replace(d, message=f"{d.message} [stale: from version {good}, the last that parsed]")
                  for d in old if d.rule != STALE]
        lines = (state.text or "").split("\n")
        note = Diagnostic(line, 0, max(1, len(lines[line - 1]) if 0 < line <= len(lines) else 1),
                          Severity.NOTE, STALE,
                          f"pipelint: this version does not parse (line {line}: {message}); the other pipelint "
                          f"diagnostics are those of version {good}, the last that parsed"
                          if old else f"pipelint: this version does not parse (line {line}: {message}); "
                                      "nothing is checked until it does")
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=[to_lsp(d, uri) for d in [*current, *marked, note]], version=version))

    async def analyse(self, path: str, text: str, partial: Any = None) -> FileAnalysis:
        """The buffer's FileAnalysis; `partial(analysis, lowered)` gets the first variants'
        while later ones are still being lowered."""
        if path.endswith(CUDA_SUFFIXES):
            return await self._cuda_bounded(path, text)
        if not path.endswith(".py") or not self.lower_python or not scan(text).uses_tilelang:
            return FileAnalysis(path)
        from .cudajob import Budgets, analyse_python_in_child, buffer_too_large

        config = self._config(path)
        budgets = Budgets.of(config)
        too_large = buffer_too_large(text, budgets)
        if too_large is not None:
            return FileAnalysis(path, [Diagnostic(1, 0, 1, Severity.WARNING, "unreadable-file", too_large)])
        settings = lower_settings(config)
        trace(f"configured {Path(path).name}")
        folder = self.cache_dir or self._cache_of(config)
        dump = dump_folder(folder, path)
        src = scan(text)
        use_cache = config.cache is not False
        stored = self._stored_analysis(path, text, settings, config, budgets, folder, dump) if use_cache else None
        if stored is not None:
            key, hit, lowered_hit = stored
            if hit is not None and lowered_hit is not None:
                analysis = self._finish(hit, src, lowered_hit, settings)
                analysis.cached = True
                self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info, visible(
                    f"pipelint: {Path(path).name}: {len(analysis.diagnostics)} diagnostic(s); lowering cached; "
                    "analysis cached")))
                return analysis
        trace(f"analysis cache missed {Path(path).name}")
        latest: list[dict] = []
        ready = asyncio.Event()

        def progress(result: dict) -> None:
            trace(f"variant lowered {Path(path).name}")
            latest[:] = [result]
            ready.set()

        async def publish_partial() -> None:
            while True:
                await ready.wait()
                ready.clear()
                result = latest[0]
                analysis = await self._first(path, analyse_python_in_child(path, text, result, config, dump,
                                                                             budgets))
                if partial is not None:
                    partial(self._finish(analysis, src, result, settings), result)
                    trace(f"published the first variants of {Path(path).name}")

        publisher = asyncio.ensure_future(publish_partial())
        try:
            lowered = await self._lower(path, text, settings, folder, config.cache is not False, progress,
                                        {"time": budgets.time, "memory": budgets.memory})
        finally:
            publisher.cancel()
        started = time.perf_counter()
        analysis = await self._first(path, analyse_python_in_child(path, text, lowered.result, config, dump,
                                                                     budgets))
        if stored is not None and lowered.result.get("kind") not in ("timeout", "crash") and \
                not lowered.result.get("crashed"):
            from . import store

            store.store(folder, stored[0], analysis)
        analysis = self._finish(analysis, src, lowered.result, settings)
        analysis.seconds, analysis.cached = lowered.seconds, lowered.cached
        self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Info, visible(
            f"pipelint: {Path(path).name}: {len(analysis.diagnostics)} diagnostic(s); "
            f"lowering {'cached' if lowered.cached else f'{lowered.seconds:.1f} s'}{_timings(lowered.timings)}; "
            f"analysis {time.perf_counter() - started:.2f} s")))
        return analysis

    def _stored_analysis(self, path: str, text: str, settings: Any, config: Any, budgets: Any, folder: Path,
                         dump: Path) -> tuple[str, FileAnalysis | None, dict | None] | None:
        """The analysis cache's key for this buffer, its entry and the cached lowering (`store`);
        None without TileLang (nothing is lowered, nothing stored)."""
        from . import store
        from .lowering import cache_key

        if self.lowerer.tl_version is None:
            return None
        key = store.key(cache_key(path, text, settings, self.lowerer.tl_version), text, config, self.host,
                        budgets, dump)
        hit = store.load(folder, key)
        return key, hit, self.lowerer.cached(path, text, settings, folder) if hit is not None else None

    def _finish(self, analysis: FileAnalysis, src: Any, lowered: dict, settings: Any) -> FileAnalysis:
        """The analysis with what the server adds: the notes (a kernel lowered only as written,
        no kernel found), TileLang's errors explained, and the lowering result (for facts)."""
        from .analysis import LOWERING_FAILED
        from .facts import explain, notes

        out = []
        for d in analysis.diagnostics:
            if d.rule == LOWERING_FAILED:      # the rule's generic help, made specific
                d = replace(d, help=explain(d.message))
            out.append(d)
        for note in notes(src, lowered):
            out.append(Diagnostic(note.line, 0, 1, Severity.NOTE, "stages-as-written" if not note.information
                                  else "no-kernel", note.message))
        analysis.diagnostics = out
        self._lowered[analysis.path] = (lowered, dict(settings.params))
        return analysis

    async def _first(self, path: str, analysis: Any) -> Any:
        """Await a buffer's analysis with the other buffers' lowering workers stopped for at
        most PAUSE_OTHERS seconds (`Lowerer.pause_others`): one file's lowering does not hold
        another's diagnostics back."""
        await self.started(self.forked)        # no Process.start blocking the loop on the forkserver
        paused = self.lowerer.pause_others(path)
        resume = asyncio.get_running_loop().call_later(PAUSE_OTHERS, self.lowerer.resume, paused)
        try:
            return await analysis
        finally:
            resume.cancel()
            self.lowerer.resume(paused)

    def _cache_of(self, config: Any) -> Path:
        """The project's `cache-dir` when `cachedir.choose` allows it (inside the configuration's
        folder, no links), else the server's own; a refused one is logged."""
        from .. import cachedir

        choice = cachedir.choose(None, config.cache_dir, config.path)
        if choice.warning:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning,
                                                         visible(f"pipelint: {choice.warning}")))
        return cache_folder(str(choice.path)) if choice.source == "configuration" else self.lowerer.cache_dir

    async def _lower(self, path: str, text: str, settings: Any, folder: Path, use_cache: bool,
                     progress: Any = None, budgets: dict | None = None) -> Any:
        """Lower with a progress report in the client (when it shows them and this is no cache hit)."""
        await self.started(self.adopted)       # the worker importing TileLang since the spawn takes it
        window = self.client_capabilities.window
        token: str | None = None
        if window is not None and window.work_done_progress and \
                not (use_cache and self.lowerer.cached(path, text, settings, folder)):
            token = f"pipelint-lower-{next(self._tokens)}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), 5.0)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                    title="pipelint", message=f"lowering {Path(path).name} for {', '.join(settings.archs)}"))
            except (TimeoutError, JsonRpcException):   # refused: no progress bar, same diagnostics
                token = None
        try:
            return await self.lowerer.lower(path, text, settings, folder, use_cache=use_cache, progress=progress,
                                            budgets=budgets)
        finally:
            if token is not None:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd())

    def _config(self, path: str) -> Any:
        from ..config import load_config

        return load_config([path], None, self.host)

    async def _cuda_bounded(self, path: str, text: str) -> FileAnalysis:
        """A CUDA buffer within `check`'s bounds (issue 38): over max-file-size it is not analysed;
        otherwise it is checked in a process of its own with the CPU and memory budgets, so a
        pathological buffer delays no other file, and a newer version (which cancels this task)
        kills the run."""
        from .cudajob import Budgets, buffer_too_large, check_in_child

        config = self._config(path)
        budgets = Budgets.of(config)
        too_large = buffer_too_large(text, budgets)
        if too_large is not None:
            return FileAnalysis(path, [Diagnostic(1, 0, 1, Severity.WARNING, "unreadable-file", too_large)])
        trace(f"child for {Path(path).name}")
        checked = await self._first(path, check_in_child(path, text, config.plugins, budgets))
        trace(f"child done {Path(path).name}")
        self.host.configure(config.plugins)
        return analyze_cuda(path, text, self.host, config, checked)

    def hover_text(self, uri: str, line: int, col: int) -> str | None:
        """The analysis' hover and the lowering's facts at a position (1-based line); from the
        source alone while there is no lowering of this text (TileLang missing, or busy)."""
        from .facts import lowered_hover, static_hover

        state = self.docs.get(uri)
        current = self.workspace.get_text_document(uri).source
        if state is None or state.analysis is None or (state.text != current and state.stale is None):
            if not uri.endswith(".py"):
                return None
            why = "TileLang is not installed" if self.lowerer.tl_version is None else "still lowering"
            return static_hover(scan(current), state.params if state else None, line, why)
        src = scan(state.text or current)
        parts = [state.analysis.hover(line, col), lowered_hover(src, state.lowered, line)]
        if uri.endswith(".py") and not state.analysis.lowered:      # TileLang missing, or the lowering failed
            parts.append(static_hover(src, state.params, line, self._not_lowered(state)))
        text = "\n\n".join(p for p in parts if p)
        return _marked(text, state) if text else None

    def _not_lowered(self, state: Any) -> str:
        """Why a checked Python buffer has no lowering, in a hover's words."""
        if self.lowerer.tl_version is None:
            return "TileLang is not installed"
        lowered = state.lowered or {}
        return "TileLang could not lower it: see the diagnostic" if lowered.get("ok") is False else "still lowering"

    def hints(self, uri: str, first: int, last: int) -> list[tuple[int, int, str, bool]]:
        """(line, col, label, from the lowering) for lines first..last (1-based)."""
        from .facts import lowered_hints, merge_hints, static_hints

        state = self.docs.get(uri)
        current = self.workspace.get_text_document(uri).source
        if not uri.endswith(".py"):
            return []
        if state is None or state.analysis is None or state.text != current or not state.analysis.lowered:
            if state is not None and state.stale is not None and state.analysis is not None:
                return []       # lines have moved since the version that parsed: no hint is placed
            return [(ln, c, label, False) for ln, c, label in
                    static_hints(scan(current), state.params if state else None, first, last)]
        src = scan(current)
        merged = merge_hints(lowered_hints(src, state.lowered, first, last), state.analysis.inlay_hints(first, last))
        return [(ln, c, label, True) for ln, c, label in merged]

    def publish(self, uri: str, analysis: FileAnalysis, version: int | None) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=[to_lsp(d, uri) for d in analysis.diagnostics], version=version))
        caps = self.client_capabilities.workspace
        if caps and caps.inlay_hint and caps.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)


def _timings(timings: dict | None) -> str:
    """` (TileLang import 2.1 s, waited 0.0 s, matmul sm_90 0.4 s, ...)`: where a lowering's time went."""
    if not timings:
        return ""
    parts = []
    if timings.get("import_s") is not None:
        parts.append(f"worker's TileLang import {timings['import_s']:.1f} s")
    if timings.get("wait_s") is not None:
        parts.append(f"waited for a worker {timings['wait_s']:.1f} s")
    parts += [f"{label} {sec:.1f} s" for label, sec in timings.get("variants", []) if sec is not None]
    if timings.get("reused"):
        parts.append(f"unchanged, not lowered again: {', '.join(timings['reused'])}")
    return f" ({', '.join(parts)})" if parts else ""


def _marked(text: str, state: DocState) -> str:
    """A hover's text with what it is of: a stale version, or the first variants only."""
    if state.stale:
        return f"*stale: {state.stale}*\n\n{text}"
    if not state.complete:
        return f"*the other variants are still being lowered*\n\n{text}"
    return text


def _parsed(analysis: FileAnalysis | None) -> bool:
    """Whether there is an analysis of a version that parsed (to keep, marked stale)."""
    return analysis is not None and not any(d.rule == "parse-error" for d in analysis.diagnostics)


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def to_lsp(d: Diagnostic, uri: str) -> lsp.Diagnostic:
    line = d.line - 1
    message = d.message + (f"\nhelp: {d.help}" if d.help else "")
    related = [lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=from_fs_path(r.path) or r.path if os.path.isabs(r.path) else uri,
                              range=lsp.Range(lsp.Position(r.line - 1, 0), lsp.Position(r.line, 0))),
        message=r.message) for r in d.related]
    return lsp.Diagnostic(
        range=lsp.Range(lsp.Position(line, d.col), lsp.Position(line, d.end_col)), message=message,
        severity=SEVERITY[d.severity], code=d.rule, source="pipelint",
        code_description=lsp.CodeDescription(href=d.doc) if d.doc else None,
        related_information=related or None, data={"rule": d.rule})


# ------------------------------------------------------------------ suppression edits
_PY_IGNORE = re.compile(r"#\s*pipelint:\s*ignore\[([^\]]*)\]")
_CU_IGNORE = re.compile(r"//\s*pipelint:\s*ignore\[([^\]]*)\]")


def suppression_edit(text: str, line: int, rule: str, cuda: bool) -> lsp.TextEdit | None:
    """Add `rule` to the line's `pipelint: ignore[...]` comment, or append one (0-based `line`)."""
    lines = text.split("\n")
    if not 0 <= line < len(lines):
        return None
    current = lines[line]
    m = (_CU_IGNORE if cuda else _PY_IGNORE).search(current)
    if m:
        rules = [r.strip() for r in m.group(1).split(",") if r.strip()]
        if rule in rules:
            return None
        start, end = m.span(1)
        return lsp.TextEdit(lsp.Range(lsp.Position(line, start), lsp.Position(line, end)),
                            ", ".join([*rules, rule]))
    code = current.rstrip()
    comment = f"  {'//' if cuda else '#'} pipelint: ignore[{rule}]"
    return lsp.TextEdit(lsp.Range(lsp.Position(line, len(code)), lsp.Position(line, len(current))), comment)


# ------------------------------------------------------------------ features
def build_server(cache_dir: Path | None = None, host: Any = None) -> PipelintServer:
    server = PipelintServer(cache_dir, host)

    @server.feature(lsp.INITIALIZE)
    async def initialize(ls: PipelintServer, params: lsp.InitializeParams) -> None:
        opts = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        ls.lint_on_change = bool(opts.get("lintOnChange", True))
        ls.debounce = float(opts.get("debounce", DEBOUNCE))
        ls.lower_python = bool(opts.get("lowerPython", True))
        ls.warm_worker = bool(opts.get("warmWorker", True))
        ls.lowerer.warm = ls.lower_python and ls.warm_worker
        # Issue 39: initialize answers at once; the start-up (adopting the worker that imports
        # TileLang, the analysis processes' forkserver) goes on in the background, and a buffer's
        # run waits only for the part it needs (`adopted` before a lowering, `forked` before an
        # analysis process).  Awaiting them here made the editor wait 1.2-6 s for initialize.
        ls.start_up()
        trace("initialize")

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: PipelintServer, params: lsp.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps else None
        if watched and watched.dynamic_registration:     # the configuration: check again when it changes
            ls.client_register_capability(lsp.RegistrationParams([lsp.Registration(
                id="pipelint-configuration", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[lsp.FileSystemWatcher(glob_pattern="**/pyproject.toml")]))]))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: PipelintServer, params: None) -> None:
        ls.lowerer.close()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: PipelintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.recheck()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PipelintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        trace(f"didOpen {params.text_document.uri.rsplit('/', 1)[-1]}")
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PipelintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        if ls.lint_on_change:
            ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PipelintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)
        saved = to_fs_path(params.text_document.uri)
        if saved and saved.endswith(".py"):
            ls.recheck(importing=saved)             # kernels that import the saved module: lowered again

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PipelintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        state = ls.docs.pop(params.text_document.uri, None)
        if state is not None and state.task is not None:
            state.task.cancel()
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri,
                                                                          diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: PipelintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        state = ls.docs.get(params.text_document.uri)
        if state is not None and state.task is not None and not state.task.done():
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(state.task), WAIT_FOR_HOVER)
        text = ls.hover_text(params.text_document.uri, params.position.line + 1, params.position.character)
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(ls: PipelintServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        r = params.range
        return [lsp.InlayHint(position=lsp.Position(line - 1, col), label=label, padding_left=True,
                              tooltip="pipelint: from the lowered variants" if lowered else
                              "pipelint: as written (no lowering yet)")
                for line, col, label, lowered in ls.hints(params.text_document.uri, r.start.line + 1, r.end.line + 1)]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def code_actions(ls: PipelintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        text = ls.workspace.get_text_document(uri).source
        cuda = uri.endswith(CUDA_SUFFIXES)
        actions = []
        for diag in params.context.diagnostics:
            if diag.source != "pipelint" or not isinstance(diag.code, str) or diag.code == "configuration":
                continue
            edit = suppression_edit(text, diag.range.start.line, diag.code, cuda)
            if edit is None:
                continue
            actions.append(lsp.CodeAction(
                title=f"Suppress {diag.code} on this line ({'//' if cuda else '#'} pipelint: ignore[{diag.code}])",
                kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
        return actions

    return server


def serve(cache_dir: str | None = None, host: Any = None, worker: Any = None) -> int:
    """Run the server over stdin/stdout until the client says exit (`host`: the plugins the
    command line loaded; `worker`: a lowering worker it started, `lowering.start_worker_now`)."""
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("PIPELINT_LSP_LOG", "WARNING").upper())
    trace("serve")
    server = build_server(cache_folder(cache_dir) if cache_dir else None, host)
    server.early_worker = worker
    try:
        server.start_io()
    finally:
        if worker is not None and worker.poll() is None and server.early_worker is worker:
            from .procs import kill_tree

            kill_tree(worker.pid)      # never adopted (no initialize came)
    return 0
