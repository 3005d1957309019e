"""`pipelint server` end to end, issue 39's editor items and issue 38's bounds (the real server
over stdio, driven by pytest-lsp's client, as tests/test_lsp.py):

* progressive publishing: the first lowered variant's diagnostics before the complete set;
* staleness: while a buffer does not parse, the diagnostics (and the hover) say they belong to
  the last version that did, for `.py` and `.cu` buffers;
* inlay hints from the source alone while the lowering is still running (the static fallback);
* a factory without a num_stages parameter is lowered as written, with a note that only that
  stage count was checked (it was skipped: 0 diagnostics and no message);
* a raw TileLang error at the `def` line gets a line on what it usually means;
* a Python buffer over max-file-size is neither lowered nor analysed.

Each fails on the server as it was before (58e98a9 and the session before this one).
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
LINES = GEMM.splitlines()
PIPELINED = next(i for i, t in enumerate(LINES) if "T.Pipelined(" in t)         # 0-based
LAUNCH = next(i for i, t in enumerate(LINES) if "T.Kernel(" in t)
FACTORY = next(i for i, t in enumerate(LINES) if t.startswith("def matmul("))
PLANT = '''

def _drop_barrier_after_wait(code, target):
    head = code.find("for (int k = 0;")
    wait = code.find("cp_async_wait<", head)
    sync = code.find("__syncthreads();", wait)
    if min(head, wait, sync) < 0:
        return code
    return code[:sync] + code[sync + len("__syncthreads();"):]


tilelang.engine.callback.register_cuda_postproc(_drop_barrier_after_wait)
'''
ONE = '[tool.pipelint.lower]\narch = ["sm_80"]\n'
# two kernels in one file: the second one a copy of the first under another name
TWO = GEMM + "\n\n" + GEMM[GEMM.index("def matmul("):].replace("def matmul(", "def matmul_b(")
PUBLISHED: list = []


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("lsp-editor")
    (ws / "pyproject.toml").write_text(ONE)
    (ws / "race.py").write_text(GEMM + PLANT)
    (ws / "busy.py").write_text(GEMM)
    # no num_stages parameter: the stage count is a literal of its T.Pipelined
    (ws / "fixed.py").write_text(GEMM.replace("           num_stages=3, threads=128,", "           threads=128,")
                                 .replace("num_stages=num_stages)", "num_stages=3)") + PLANT)
    (ws / "bad.py").write_text(GEMM.replace("B_shared = T.alloc_shared((block_K, block_N)",
                                            "B_shared = T.alloc_shared((block_K, block_N // 2)"))
    both = ws / "both"
    both.mkdir()
    (both / "pyproject.toml").write_text('[tool.pipelint.lower]\narch = ["sm_80", "sm_90"]\n')
    (both / "race.py").write_text(GEMM + PLANT)
    (ws / "two.py").write_text(TWO)
    small = ws / "small"
    small.mkdir()
    (small / "pyproject.toml").write_text("[tool.pipelint]\nmax-file-size = 0.001\n")     # 1 KB
    (small / "gemm.py").write_text(GEMM)
    sys.path.insert(0, str(ROOT / "tests" / "mutants"))
    from mutate import drop_barrier_after_wait

    mutant = drop_barrier_after_wait()
    (ws / "mutant.cu").write_text(mutant.text)
    (ws / "mutant.line").write_text(str(mutant.line))
    return ws


def make_client():
    """The shared test client, also keeping every publishDiagnostics (with its version)."""
    return lsp_test_client(lambda ls, params: PUBLISHED.append(params))


if pytest_lsp is not None:
    @pytest_lsp.fixture(scope="module", config=ClientServerConfig(
        server_command=[sys.executable, "-m", "pipelint", "server"], client_factory=make_client))
    async def client(lsp_client: LanguageClient):
        await lsp_client.initialize_session(lsp.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            initialization_options={"debounce": 0.2}))
        yield
        await lsp_client.shutdown_session()


def mine(uri: str, version: int) -> list:
    return [p for p in PUBLISHED if p.uri == uri and p.version == version]


async def diagnostics(uri: str, version: int, timeout: float = 240.0, count: int = 1) -> list:
    """The `count`-th publish of `uri` at `version` (waiting for it)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        found = mine(uri, version)
        if len(found) >= count:
            return list(found[count - 1].diagnostics)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri} version {version} in {timeout} s")


def open_file(client, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="cuda" if path.suffix == ".cu" else "python", version=1, text=path.read_text())))
    return uri


def change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def hover(client, uri: str, line: int, col: int = 20) -> str:
    found = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri),
                                                                   lsp.Position(line, col)))
    return found.contents.value if found is not None else ""


async def test_inlay_hints_from_the_source_while_the_kernel_is_lowered(client, workspace):
    """Before: the hint request waited for the lowering (seconds) and gave nothing without TileLang."""
    uri = open_file(client, workspace / "busy.py")
    hints = await asyncio.wait_for(client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(len(LINES), 0)))), 3.0)
    assert not mine(uri, 1), "the lowering finished before the hints were asked for: nothing tested"
    by_line = {h.position.line: h.label for h in hints}
    assert by_line[PIPELINED] == "3 stages (as written)"
    assert by_line[LAUNCH] == "grid 8×8 · 128 threads"
    shared = [by_line[i] for i, t in enumerate(LINES) if "T.alloc_shared(" in t]
    assert shared == ["float16 128×32 = 8 KB", "float16 32×128 = 8 KB"]
    assert all(h.tooltip == "pipelint: as written (no lowering yet)" for h in hints)
    await diagnostics(uri, 1)


async def test_first_variant_published_before_the_complete_set(client, workspace):
    """sm_90 lowers first (0.4 s against sm_80's 2.5 s) and has no cp.async wait to lose its
    barrier: its diagnostics (none) come first, the sm_80 race with the complete set."""
    uri = open_file(client, workspace / "both" / "race.py")
    complete = await diagnostics(uri, 1, count=2)
    first = mine(uri, 1)[0].diagnostics
    assert [d.code for d in first if d.code == "missing-barrier"] == []
    race = [d for d in complete if d.code == "missing-barrier"]
    assert len(race) == 1 and "sm_80 num_stages=3" in race[0].message
    text = await hover(client, uri, LAUNCH)
    assert "| sm_80 s3 | grid 8×8 · 128 threads · 48 KB smem |" in text
    assert "| sm_90 s3 | grid 8×8 · 256 threads · 48 KB smem |" in text     # warp-specialized on sm_90


async def test_diagnostics_of_a_buffer_that_does_not_parse_say_they_are_stale(client, workspace):
    """Before: nothing was published for a version with a syntax error; the old race stayed, as
    if it were the current version's, and so did the hover."""
    uri = open_file(client, workspace / "race.py")
    [race] = [d for d in await diagnostics(uri, 1) if d.code == "missing-barrier"]
    broken = (GEMM + PLANT).replace("def matmul(", "def matmul((", 1)
    change(client, uri, 2, broken)
    stale = await diagnostics(uri, 2, timeout=30)
    marked = [d for d in stale if d.code == "missing-barrier"]
    assert len(marked) == 1 and marked[0].message.startswith(race.message.split("\nhelp:")[0])
    assert "[stale: from version 1, the last that parsed]" in marked[0].message
    [note] = [d for d in stale if d.code == "stale"]
    assert note.range.start.line == FACTORY and note.severity == lsp.DiagnosticSeverity.Information
    assert "does not parse" in note.message and "version 1" in note.message
    assert "stale" in await hover(client, uri, PIPELINED)
    change(client, uri, 3, GEMM + PLANT)                 # parses again: fresh, nothing stale
    fresh = await diagnostics(uri, 3)
    assert [d.code for d in fresh if d.code == "missing-barrier"] == ["missing-barrier"]
    assert not [d for d in fresh if d.code == "stale" or "[stale" in d.message]


async def test_cu_buffer_that_does_not_parse_keeps_its_findings_marked_stale(client, workspace):
    uri = open_file(client, workspace / "mutant.cu")
    line = int((workspace / "mutant.line").read_text())
    assert [d.range.start.line for d in await diagnostics(uri, 1) if d.code == "missing-barrier"] == [line - 1]
    text = (workspace / "mutant.cu").read_text()
    change(client, uri, 2, text.replace("__syncthreads();", "__syncthreads(;", 1))
    found = await diagnostics(uri, 2, timeout=60)
    assert [d.code for d in found if d.code == "parse-error"] == ["parse-error"]
    assert [d.range.start.line for d in found if d.code == "missing-barrier"] == [line - 1]
    assert all("[stale: from version 1" in d.message for d in found if d.code == "missing-barrier")
    assert [d.code for d in found if d.code == "stale"] == ["stale"]


async def test_factory_without_num_stages_is_lowered_as_written_and_says_so(client, workspace):
    """Before: such a factory was not a kernel: seconds of "lowering", 0 diagnostics, no word."""
    uri = open_file(client, workspace / "fixed.py")
    found = await diagnostics(uri, 1)
    assert [d.code for d in found if d.code == "missing-barrier"] == ["missing-barrier"]
    [note] = [d for d in found if d.code == "stages-as-written"]
    assert note.range.start.line == FACTORY and note.severity == lsp.DiagnosticSeverity.Information
    assert "takes no num_stages parameter" in note.message and "num_stages=3" in note.message


async def test_tilelang_error_at_the_def_line_is_explained(client, workspace):
    uri = open_file(client, workspace / "bad.py")
    [d] = await diagnostics(uri, 1)
    assert d.code == "lowering-failed" and d.range.start.line == FACTORY
    assert "\nhelp: usually: the shapes of a T.gemm's or T.copy's operands disagree" in d.message
    assert "pipelint lower FILE --trace terminal" in d.message


async def test_python_buffer_over_max_file_size_is_not_lowered(client, workspace):
    uri = open_file(client, workspace / "small" / "gemm.py")
    [d] = await diagnostics(uri, 1, timeout=30)
    assert d.code == "unreadable-file" and "max-file-size" in d.message


async def test_an_edit_inside_one_kernel_lowers_only_that_kernel_again(client, workspace):
    """Before: any code edit lowered every kernel of the file again."""
    async def said(count: int) -> str:           # the server's log message once the file is checked
        for _ in range(4000):
            found = [m.message for m in client.log_messages if "two.py:" in m.message and "diagnostic(s)" in m.message]
            if len(found) >= count:
                return found[count - 1]
            await asyncio.sleep(0.05)
        raise AssertionError("no log message for two.py")

    uri = open_file(client, workspace / "two.py")
    first = await said(1)
    assert "matmul sm_80" in first and "matmul_b sm_80" in first, first
    edited = TWO.replace("def matmul_b(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32,",
                         "def matmul_b(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=64,")
    assert edited != TWO
    change(client, uri, 2, edited)
    again = await said(2)
    assert "matmul_b sm_80" in again and "matmul sm_80" not in again, again
    assert "unchanged, not lowered again: matmul" in again
    await diagnostics(uri, 2)
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(len(edited.splitlines()), 0))))
    loops = [h.label for h in hints if "T.Pipelined(" in edited.splitlines()[h.position.line]]
    assert loops == ["3 stages · 48 KB smem · 2 groups in flight", "3 stages · 96 KB smem · 2 groups in flight"]
