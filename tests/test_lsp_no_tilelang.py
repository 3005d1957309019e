"""Issue 39's static fallback, in the real server over stdio, as a user without the tilelang
extra has it (tests/fixtures/no_tilelang/sitecustomize.py hides TileLang from the server and its
workers): the kernel file gets one diagnostic that says TileLang is missing and how to install it,
and the inlay hints and the hover still give what the source alone decides (stage count, launch
geometry, buffer shapes), marked as written."""
from __future__ import annotations

import asyncio
import importlib.util
import os
import sys

import pytest
from helpers import ROOT, lsp_test_client

pytestmark = [
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("pygls", "pytest_lsp")),
                       reason="needs the lsp extra"),
]

if importlib.util.find_spec("pytest_lsp") is not None:
    import pytest_lsp
    from lsprotocol import types as lsp
    from pytest_lsp import ClientServerConfig, LanguageClient

    pytestmark.append(pytest.mark.asyncio(loop_scope="module"))
else:                                               # collected, then skipped
    pytest_lsp = None

HIDE = ROOT / "tests" / "fixtures" / "no_tilelang"
GEMM = (ROOT / "examples" / "gemm.py").read_text()
LINES = GEMM.splitlines()
PIPELINED = next(i for i, t in enumerate(LINES) if "T.Pipelined(" in t)
LAUNCH = next(i for i, t in enumerate(LINES) if "T.Kernel(" in t)


if pytest_lsp is not None:
    ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HIDE), os.environ.get("PYTHONPATH", "")])}

    @pytest_lsp.fixture(scope="module", config=ClientServerConfig(
        server_command=[sys.executable, "-m", "pipelint", "server"], client_factory=lsp_test_client, server_env=ENV))
    async def client(lsp_client: LanguageClient):
        await lsp_client.initialize_session(lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            initialization_options={"debounce": 0.2}))
        yield
        await lsp_client.shutdown_session()


async def _published(client, uri: str, timeout: float = 60.0) -> list:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if client.diagnostics.get(uri):
            return client.diagnostics[uri]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri} in {timeout} s")


async def test_without_tilelang_the_source_still_gives_hints_and_hover(client, tmp_path):
    path = tmp_path / "gemm.py"
    path.write_text(GEMM)
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=GEMM)))
    diags = await _published(client, uri)
    assert len(diags) == 1 and "TileLang is not installed" in diags[0].message, [d.message for d in diags]
    assert "pip install" in diags[0].message
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(len(LINES), 0))))
    by_line = {h.position.line: h.label for h in hints}
    assert by_line[PIPELINED] == "3 stages (as written)"
    assert by_line[LAUNCH] == "grid 8×8 · 128 threads"
    assert [by_line[i] for i, t in enumerate(LINES) if "T.alloc_shared(" in t] == [
        "float16 128×32 = 8 KB", "float16 32×128 = 8 KB"]
    assert all(h.tooltip == "pipelint: as written (no lowering yet)" for h in hints)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(PIPELINED, LINES[PIPELINED].index("T.Pipelined") + 2)))
    assert hover is not None, "no hover on T.Pipelined without TileLang"
    assert "as written (TileLang is not installed)" in hover.contents.value
    assert "num_stages = 3 as written" in hover.contents.value
