"""`pipelint server` end to end: the real server process over stdio, driven by pytest-lsp's client.

The workspace is the seed's GEMM (examples/gemm.py) as written, the same kernel with a planted
defect, one whose T.gemm shapes do not match (TileLang cannot lower it) and a mutant `.cu`.
The defect is planted the way TileLang lets a user edit generated CUDA, with a post-processing
callback registered by the kernel file: it deletes the `__syncthreads()` after the steady-state
`cp_async_wait` (tests/mutants' drop-barrier-after-wait, on the CUDA TileLang generates for
this very file), so the race is real and maps through `#line` to the `T.Pipelined` line.
The workspace's pyproject.toml lowers for sm_80 with num_stages 3 only (one variant per file).
"""
from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest
from helpers import ROOT

pytestmark = [
    pytest.mark.tilelang,
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("tilelang", "pygls", "pytest_lsp")),
                       reason="needs the tilelang and lsp extras"),
]

if importlib.util.find_spec("pytest_lsp") is not None:
    import pytest_lsp
    from lsprotocol import types as lsp
    from pytest_lsp import ClientServerConfig, LanguageClient

    pytestmark.append(pytest.mark.asyncio(loop_scope="module"))
else:                                               # collected, then skipped
    pytest_lsp = None

GEMM = (ROOT / "examples" / "gemm.py").read_text()
PLANT = '''

# Planted defect: drop the __syncthreads() that follows the steady-state cp.async wait.
def _drop_barrier_after_wait(code, target):
    head = code.find("for (int k = 0;")
    wait = code.find("cp_async_wait<", head)
    sync = code.find("__syncthreads();", wait)
    if min(head, wait, sync) < 0:
        return code
    return code[:sync] + code[sync + len("__syncthreads();"):]


tilelang.engine.callback.register_cuda_postproc(_drop_barrier_after_wait)
'''
PYPROJECT = """[tool.pipelint.lower]
arch = ["sm_80"]
num-stages = [3]
"""
PIPELINED = next(i for i, t in enumerate(GEMM.splitlines()) if "T.Pipelined(" in t)     # 0-based
COPIES = {i for i, t in enumerate(GEMM.splitlines()) if "T.copy(A[" in t or "T.copy(B[" in t}
FACTORY = next(i for i, t in enumerate(GEMM.splitlines()) if t.startswith("def matmul("))
PUBLISHED: list = []                                # every publishDiagnostics the client received
REGISTERED: list = []                               # what the server asked the client to watch


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("lsp-workspace")
    (ws / "pyproject.toml").write_text(PYPROJECT)
    (ws / "gemm.py").write_text(GEMM)
    (ws / "gemm_race.py").write_text(GEMM + PLANT)
    (ws / "gemm_race_edit.py").write_text(GEMM + PLANT)
    (ws / "gemm_bad_shapes.py").write_text(GEMM.replace("B_shared = T.alloc_shared((block_K, block_N)",
                                                        "B_shared = T.alloc_shared((block_K, block_N // 2)"))
    sys.path.insert(0, str(ROOT / "tests" / "mutants"))
    from mutate import drop_barrier_after_wait

    mutant = drop_barrier_after_wait()
    (ws / "mutant.cu").write_text(mutant.text)
    (ws / "mutant.line").write_text(str(mutant.line))
    return ws


def make_client():
    """pytest-lsp's test client, also keeping every publishDiagnostics (with its version) and
    answering the server's inlay-hint refresh requests."""
    from pygls.protocol import default_converter
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

    def published(ls: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        ls.diagnostics[params.uri] = params.diagnostics
        PUBLISHED.append(params)

    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: published,
                                   lsp.WORKSPACE_INLAY_HINT_REFRESH: lambda ls, params: None,
                                   lsp.CLIENT_REGISTER_CAPABILITY: lambda ls, params: REGISTERED.extend(
                                       params.registrations)})
    return client


if pytest_lsp is not None:
    @pytest_lsp.fixture(scope="module", config=ClientServerConfig(
        server_command=[sys.executable, "-m", "pipelint", "server"], client_factory=make_client))
    async def client(lsp_client: LanguageClient):
        await lsp_client.initialize_session(lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            initialization_options={"debounce": 0.2}))
        yield
        await lsp_client.shutdown_session()


async def diagnostics(uri: str, version: int, timeout: float = 180.0) -> list:
    """The diagnostics the server publishes for `uri` at `version` (waiting for them)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        for p in reversed(PUBLISHED):
            if p.uri == uri and p.version == version:
                return list(p.diagnostics)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri} version {version} in {timeout} s")


async def next_publish(uri: str, before: int, timeout: float = 60.0) -> list:
    """The diagnostics of the first publish for `uri` after the first `before` ones."""
    for _ in range(int(timeout / 0.05)):
        mine = [p for p in PUBLISHED if p.uri == uri]
        if len(mine) > before:
            return list(mine[before].diagnostics)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no new diagnostics for {uri} in {timeout} s")


def published_for(uri: str) -> int:
    return sum(p.uri == uri for p in PUBLISHED)


def open_file(client, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="cuda" if path.suffix == ".cu" else "python", version=1, text=path.read_text())))
    return uri


def change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def apply(text: str, edits: list) -> str:
    """A client applying TextEdits (last first, so earlier positions stay valid)."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[e.range.start.line] + e.range.start.character
        end = offsets[e.range.end.line] + e.range.end.character
        text = text[:start] + e.new_text + text[end:]
    return text


def races(diags: list) -> list:
    return [d for d in diags if d.code == "missing-barrier"]


async def test_planted_race_at_the_pipelined_line(client, workspace):
    uri = open_file(client, workspace / "gemm_race.py")
    found = races(await diagnostics(uri, 1))
    assert len(found) == 1, found            # six slot/buffer races, one per rule and line
    d = found[0]
    assert d.range.start.line == PIPELINED
    assert d.severity == lsp.DiagnosticSeverity.Error and d.source == "pipelint"
    assert d.code_description.href.endswith("/docs/rules/missing-barrier.md")
    assert "sm_80 num_stages=3" in d.message and "help: insert __syncthreads();" in d.message
    lines = {r.location.range.start.line for r in d.related_information if r.location.uri == uri}
    assert lines >= COPIES, d.related_information                  # the copies, on their own lines
    cuda = [r for r in d.related_information if r.location.uri.endswith("matmul_sm_80_s3.cu")]
    assert cuda and Path(lsp_path(cuda[0].location.uri)).is_file()      # the generated CUDA, to open
    for _ in range(100):                    # a progress bar while lowering, ended once lowered
        reports = [r for rs in client.progress_reports.values() for r in rs]
        if any(r.kind == "end" for r in reports):
            break
        await asyncio.sleep(0.1)
    assert any(getattr(r, "message", "") == "lowering gemm_race.py for sm_80" for r in reports)
    assert any(r.kind == "end" for r in reports)


def lsp_path(uri: str) -> str:
    from pygls.uris import to_fs_path

    return to_fs_path(uri) or uri


async def test_clean_kernel_has_no_diagnostics(client, workspace):
    uri = open_file(client, workspace / "gemm.py")
    assert await diagnostics(uri, 1) == []


async def test_hover_and_inlay_hints_on_the_pipelined_line(client, workspace):
    uri = open_file(client, workspace / "gemm.py")
    await diagnostics(uri, 1)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(PIPELINED, 22)))
    text = hover.contents.value
    for fact in ("sm_80 s3", "| stage | [0, 0, 2] |", "| order | [0, 1, 2] |", "A_shared ×3",
                 "cp_async_wait<2>", "| barriers / iteration |", "48 KB (49152 B)"):
        assert fact in text, text
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(len(GEMM.splitlines()), 0))))
    by_line = {h.position.line: h.label for h in hints}
    assert by_line[PIPELINED] == "3 stages · 48 KB smem · 2 groups in flight"
    at = next(h for h in hints if h.position.line == PIPELINED)
    assert at.position.character == GEMM.splitlines()[PIPELINED].rindex(")") + 1     # after T.Pipelined(...)
    shared = [label for line, label in by_line.items() if "T.alloc_shared" in GEMM.splitlines()[line]]
    assert shared == ["float16 128×32 shared · × 3 versions = 24 KB", "float16 32×128 shared · × 3 versions = 24 KB"]
    launch = next(i for i, t in enumerate(GEMM.splitlines()) if "T.Kernel(" in t)
    assert by_line[launch] == "grid 8×8 · 128 threads · 48 KB smem"          # launch geometry (issue 39)
    fragment = next(i for i, t in enumerate(GEMM.splitlines()) if "T.alloc_fragment(" in t)
    assert by_line[fragment] == "float32 128×128 fragment · 128 threads"
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(fragment, 30)))
    assert "| sm_80 s3 | float32 128×128 fragment · Fragment (128, 128) -> (128,) · 128 threads" in hover.contents.value


async def test_suppression_code_action_removes_the_diagnostic(client, workspace):
    path = workspace / "gemm_race_edit.py"
    uri = open_file(client, path)
    race = races(await diagnostics(uri, 1))[0]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), race.range, lsp.CodeActionContext(diagnostics=[race])))
    fix = next(a for a in actions if a.kind == lsp.CodeActionKind.QuickFix)
    text = apply(path.read_text(), fix.edit.changes[uri])
    assert text.splitlines()[PIPELINED].endswith(":  # pipelint: ignore[missing-barrier]")
    change(client, uri, 2, text)
    assert races(await diagnostics(uri, 2)) == []

    # an edit that moves the kernel down a line: lowered again, the race is back one line lower;
    # the edit before it (version 3) was still lowering when version 4 came: that run is killed,
    # only the last version is published
    moved = "# a comment line above the kernel\n" + GEMM + PLANT
    change(client, uri, 3, "\n" + moved)
    await asyncio.sleep(1.5)                # past the 0.2 s pause: version 3's worker is running
    change(client, uri, 4, moved)
    again = races(await diagnostics(uri, 4))
    assert [d.range.start.line for d in again] == [PIPELINED + 1]
    assert not any(p.uri == uri and p.version == 3 for p in PUBLISHED)


async def test_kernel_that_does_not_lower_gets_one_diagnostic_on_its_factory(client, workspace):
    uri = open_file(client, workspace / "gemm_bad_shapes.py")
    found = await diagnostics(uri, 1)
    assert [(d.code, d.range.start.line) for d in found] == [("lowering-failed", FACTORY)]
    assert "TileLang cannot lower matmul" in found[0].message and "shape check failed" in found[0].message


async def test_opened_cu_file_is_checked(client, workspace):
    uri = open_file(client, workspace / "mutant.cu")
    line = int((workspace / "mutant.line").read_text())
    found = races(await diagnostics(uri, 1))
    assert [d.range.start.line for d in found] == [line - 1]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), found[0].range, lsp.CodeActionContext(diagnostics=found)))
    assert actions[0].edit.changes[uri][0].new_text == "  // pipelint: ignore[missing-barrier]"

    # checked again on save
    before = published_for(uri)
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    assert races(await next_publish(uri, before)) == found


async def test_configuration_change_checks_open_buffers_again(client, workspace):
    """The same `[tool.pipelint]` as `check`: ignoring the rule there (the editor reports the file
    change through the watcher the server registered) takes the race away without re-lowering."""
    assert any(r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in REGISTERED)
    uri = (workspace / "gemm_race.py").as_uri()
    assert races(await diagnostics(uri, 1))
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text('[tool.pipelint]\nignore = ["missing-barrier"]\n\n' + PYPROJECT)
    try:
        before = published_for(uri)
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(pyproject.as_uri(), lsp.FileChangeType.Changed)]))
        assert races(await next_publish(uri, before)) == []
    finally:
        pyproject.write_text(PYPROJECT)
