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

Initialization options (all optional): `{"lintOnChange": true, "debounce": 0.8, "lowerPython": true,
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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
from .analysis import Diagnostic, FileAnalysis, analyze_cuda, analyze_python
from .lowering import Lowerer, cache_folder, dump_folder
from .pysource import scan
from .settings import lower_settings

log = logging.getLogger("pipelint.lsp")
SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
            Severity.NOTE: lsp.DiagnosticSeverity.Information}
CUDA_SUFFIXES = (".cu", ".cuh")
WAIT_FOR_ANALYSIS = 300.0           # a hover or hint waits this long for a run in flight


@dataclass
class DocState:
    task: asyncio.Task | None = None
    analysis: FileAnalysis | None = None
    version: int | None = None


class PipelintServer(LanguageServer):
    def __init__(self, cache_dir: Path | None = None) -> None:
        super().__init__("pipelint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        from ..pluginhost import load_plugins

        self.host = load_plugins()
        self.cache_dir = cache_dir          # --cache-dir: over [tool.pipelint] cache-dir
        self.lowerer = Lowerer(cache_dir, warm=True)
        self.docs: dict[str, DocState] = {}
        self.lint_on_change = True
        self.debounce = 0.8
        self.lower_python = True            # false: only .cu/.cuh buffers (no kernel file is run)
        self.warm_worker = True             # a lowering worker waits with TileLang imported
        self.analysis_pool = ThreadPoolExecutor(1, thread_name_prefix="pipelint-analysis")
        from .cudajob import warm_up

        warm_up()                           # the processes that analyse .cu buffers fork from it
        self._tokens = itertools.count(1)

    # -------------------------------------------------------------- runs
    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Analyse `uri` after `delay` seconds, cancelling the run in flight for it."""
        state = self.docs.setdefault(uri, DocState())
        if state.task is not None and not state.task.done():
            state.task.cancel()
        state.task = asyncio.ensure_future(self._run(uri, delay))

    def recheck(self, importing: str | None = None) -> None:
        """Check the open buffers again: all of them (the configuration changed), or those that
        import the module `importing` (saved); a check in flight read the old one: restarted."""
        from .pysource import local_imports

        for uri in list(self.docs):
            path = to_fs_path(uri) or uri
            if importing is not None:
                if not path.endswith(".py") or path == importing:
                    continue
                text = self.workspace.get_text_document(uri).source
                if not any(_same_file(m, importing) for m in local_imports(text, os.path.dirname(path))):
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
        if delay:
            await asyncio.sleep(delay)
        doc = self.workspace.get_text_document(uri)
        path, text, version = to_fs_path(uri) or uri, doc.source, doc.version
        if path.endswith(".py") and scan(text).syntax_error is not None:
            return          # mid-edit: the Python server says where; the last diagnostics stay
        try:
            analysis = await self.analyse(path, text)
        except asyncio.CancelledError:
            raise
        except UsageError as exc:       # a broken configuration: say so where the user looks
            analysis = FileAnalysis(path, [Diagnostic(1, 0, 1, Severity.ERROR, "configuration", str(exc))])
        except Exception as exc:       # a server must outlive a bug in one analysis: logged
            log.exception("analysis of %s failed", visible(path))      # stderr: maybe a terminal
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error,
                                                         visible(f"pipelint: analysis of {path} failed: {exc}")))
            return
        for error in analysis.errors:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning,
                                                         visible(f"pipelint: {path}: {error}")))
        state = self.docs.setdefault(uri, DocState())
        state.analysis, state.version = analysis, version
        self.publish(uri, analysis, version)

    async def analyse(self, path: str, text: str) -> FileAnalysis:
        loop = asyncio.get_running_loop()
        if path.endswith(CUDA_SUFFIXES):
            return await self._cuda_bounded(path, text)
        if not path.endswith(".py") or not self.lower_python or not scan(text).uses_tilelang:
            return FileAnalysis(path)
        config = self._config(path)
        settings = lower_settings(config)
        folder = self.cache_dir or self._cache_of(config)
        lowered = await self._lower(path, text, settings, folder, config.cache is not False)
        dump = dump_folder(folder, path)
        analysis = await loop.run_in_executor(self.analysis_pool, self._python, path, text, lowered.result,
                                              config, dump)
        analysis.seconds, analysis.cached = lowered.seconds, lowered.cached
        self.window_log_message(lsp.LogMessageParams(
            lsp.MessageType.Info, visible(f"pipelint: {Path(path).name}: {len(analysis.diagnostics)} diagnostic(s); "
                                          f"lowering {'cached' if lowered.cached else f'{lowered.seconds:.1f} s'}")))
        return analysis

    def _cache_of(self, config: Any) -> Path:
        """The project's `cache-dir` when `cachedir.choose` allows it (inside the configuration's
        folder, no links), else the server's own; a refused one is logged."""
        from .. import cachedir

        choice = cachedir.choose(None, config.cache_dir, config.path)
        if choice.warning:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning,
                                                         visible(f"pipelint: {choice.warning}")))
        return cache_folder(str(choice.path)) if choice.source == "configuration" else self.lowerer.cache_dir

    async def _lower(self, path: str, text: str, settings: Any, folder: Path, use_cache: bool) -> Any:
        """Lower with a progress report in the client (when it shows them and this is no cache hit)."""
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
            return await self.lowerer.lower(path, text, settings, folder, use_cache=use_cache)
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
        checked = await check_in_child(path, text, config.plugins, budgets)
        self.host.configure(config.plugins)
        return analyze_cuda(path, text, self.host, config, checked)

    def _cuda(self, path: str, text: str) -> FileAnalysis:
        config = self._config(path)
        self.host.configure(config.plugins)
        return analyze_cuda(path, text, self.host, config)

    def _python(self, path: str, text: str, lowered: dict, config: Any, dump: Path) -> FileAnalysis:
        self.host.configure(config.plugins)
        return analyze_python(path, text, lowered, self.host, config, dump)

    def publish(self, uri: str, analysis: FileAnalysis, version: int | None) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=[to_lsp(d, uri) for d in analysis.diagnostics], version=version))
        caps = self.client_capabilities.workspace
        if caps and caps.inlay_hint and caps.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)


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
def build_server(cache_dir: Path | None = None) -> PipelintServer:
    server = PipelintServer(cache_dir)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: PipelintServer, params: lsp.InitializeParams) -> None:
        opts = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        ls.lint_on_change = bool(opts.get("lintOnChange", True))
        ls.debounce = float(opts.get("debounce", 0.8))
        ls.lower_python = bool(opts.get("lowerPython", True))
        ls.warm_worker = bool(opts.get("warmWorker", True))

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: PipelintServer, params: lsp.InitializedParams) -> None:
        ls.lowerer.warm = ls.lower_python and ls.warm_worker
        await ls.lowerer.prepare()          # TileLang imported before the first kernel file opens
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
        analysis = await ls.wait(params.text_document.uri)
        if analysis is None:
            return None
        text = analysis.hover(params.position.line + 1, params.position.character)
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(ls: PipelintServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        analysis = await ls.wait(params.text_document.uri)
        if analysis is None:
            return []
        r = params.range
        return [lsp.InlayHint(position=lsp.Position(line - 1, col), label=label, padding_left=True,
                              tooltip="pipelint: from the lowered variants")
                for line, col, label in analysis.inlay_hints(r.start.line + 1, r.end.line + 1)]

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


def serve(cache_dir: str | None = None) -> int:
    """Run the server over stdin/stdout until the client says exit."""
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("PIPELINT_LSP_LOG", "WARNING").upper())
    build_server(cache_folder(cache_dir) if cache_dir else None).start_io()
    return 0
