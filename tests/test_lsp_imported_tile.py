"""Issue 39's done-when, in the server: a user's kernel whose tile size lives in a module it
imports (through another module: `k.py` imports `config`, which imports `tiles`) reports the new
shared-memory size after that module changes and is saved, with no edit of the kernel file.

The real server over stdio, driven by pytest-lsp's client (as tests/test_lsp.py); the keys alone
are tested in tests/test_lsp_imports.py, `pipelint lower` in tests/test_lower.py.  Before this
test the server re-checked, on a save, only the open kernels that import the saved module
directly: a tile size two imports away stayed at its old value until the kernel itself changed.
"""
from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest
from helpers import ROOT, lsp_test_client

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
KERNEL = GEMM.replace("import tilelang.language as T\n", "import tilelang.language as T\nfrom config import TILE_K\n",
                      1).replace("block_K=32", "block_K=TILE_K", 1)
LINES = KERNEL.splitlines()
LAUNCH = next(i for i, t in enumerate(LINES) if "T.Kernel(" in t)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    assert KERNEL.count("TILE_K") == 2, "examples/gemm.py changed: the tile size is no longer block_K=32"
    ws = tmp_path_factory.mktemp("lsp-imported-tile")
    (ws / "pyproject.toml").write_text('[tool.pipelint.lower]\narch = ["sm_80"]\nnum-stages = [2]\n')
    (ws / "tiles.py").write_text("BLOCK_K = 64\n")
    (ws / "config.py").write_text("from tiles import BLOCK_K\n\nTILE_K = BLOCK_K\n")
    (ws / "k.py").write_text(KERNEL)
    return ws


if pytest_lsp is not None:
    @pytest_lsp.fixture(scope="module", config=ClientServerConfig(
        server_command=[sys.executable, "-m", "pipelint", "server"], client_factory=lsp_test_client))
    async def client(lsp_client: LanguageClient):
        await lsp_client.initialize_session(lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            initialization_options={"debounce": 0.2}))
        yield
        await lsp_client.shutdown_session()


def checks(client, name: str) -> list[str]:
    """The server's log messages for file `name` once it is checked (sent once every variant is
    lowered and analysed, just before the complete diagnostics: a request sent after it is
    answered from that check)."""
    return [m.message for m in client.log_messages if f"pipelint: {name}: " in m.message
            and "diagnostic(s)" in m.message]


async def checked(client, name: str, count: int, timeout: float = 240.0) -> str:
    """The `count`-th such message, waiting for it."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        said = checks(client, name)
        if len(said) >= count:
            return said[count - 1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name}: fewer than {count} complete checks in {timeout} s")


async def launch_hint(client, uri: str) -> str:
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(len(LINES), 0))))
    return next(h.label for h in hints if h.position.line == LAUNCH)


async def test_a_tile_size_two_imports_away_reaches_the_servers_shared_memory(client, workspace):
    uri = (workspace / "k.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=KERNEL)))
    await checked(client, "k.py", 1)
    # block_M = block_N = 128, block_K 64, float16, 2 stages: (128*64 + 64*128) * 2 B * 2 = 64 KB
    assert await launch_hint(client, uri) == "grid 8×8 · 128 threads · 64 KB smem"
    before = len(checks(client, "k.py"))

    (workspace / "tiles.py").write_text("BLOCK_K = 32\n")     # the user edits and saves tiles.py
    tiles = (workspace / "tiles.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=tiles, language_id="python", version=2, text="BLOCK_K = 32\n")))
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(tiles)))
    said = await checked(client, "k.py", before + 1, timeout=120)
    assert "matmul sm_80" in said, said          # lowered again, not read back from the cache
    assert await launch_hint(client, uri) == "grid 8×8 · 128 threads · 32 KB smem"
