"""Issue 39's start-up and second-file mechanisms, without TileLang or an LSP client: `initialize`
answers before the worker the server adopts is warm and before the forkserver answers (what a
run needs waits for it there, not in `initialize`), `pipelint server` does not start the
forkserver beside TileLang's import, and a second buffer's analysis does not wait for a first
buffer's lowering still in flight."""
from __future__ import annotations

import asyncio

import pytest

from pipelint.commands import server as command
from pipelint.lsp import cudajob
from pipelint.lsp import server as lsp_server
from pipelint.lsp.analysis import FileAnalysis
from pipelint.pluginhost import load_plugins


@pytest.fixture(scope="module")
def host():
    return load_plugins()


def test_start_up_returns_before_the_worker_and_the_forkserver_are_ready(host, tmp_path, monkeypatch):
    """`start_up` (what `initialize` calls) does not wait; a lowering waits for the adoption,
    an analysis process for the forkserver, each only for its own part."""
    async def go() -> list[str]:
        server = lsp_server.PipelintServer(tmp_path, host)
        adopt_gate, fork_gate = asyncio.Event(), asyncio.Event()
        order: list[str] = []

        async def adopt(popen: object) -> None:
            await adopt_gate.wait()
            order.append("adopted")

        async def ready(timeout: float = 30.0) -> bool:
            await fork_gate.wait()
            order.append("forked")
            return True

        async def prepare() -> None:
            pass

        monkeypatch.setattr(server.lowerer, "adopt", adopt)
        monkeypatch.setattr(server.lowerer, "prepare", prepare)
        monkeypatch.setattr(cudajob, "ready", ready)
        server.start_up()
        assert server.adopted is not None and server.forked is not None
        assert not server.adopted.done() and not server.forked.done()

        async def analysis() -> str:
            order.append("analysed")
            return "done"

        first = asyncio.ensure_future(server._first("a.cu", analysis()))
        await asyncio.sleep(0.05)
        assert order == []                  # the analysis waits for the forkserver
        fork_gate.set()
        assert await first == "done"
        assert order == ["forked", "analysed"]
        waiting = asyncio.ensure_future(server.started(server.adopted))
        await asyncio.sleep(0.05)
        assert not waiting.done()           # a lowering waits for the worker being adopted
        adopt_gate.set()
        await waiting
        return order

    assert asyncio.run(go()) == ["forked", "analysed", "adopted"]


def test_a_failed_start_up_part_is_not_waited_for_again(host, tmp_path):
    async def go() -> None:
        server = lsp_server.PipelintServer(tmp_path, host)

        async def broken() -> None:
            raise OSError("no forkserver")

        server.forked = asyncio.ensure_future(broken())
        await server.started(server.forked)         # no exception: the analysis starts one itself
        await server.started(server.forked)

    asyncio.run(go())


def test_pipelint_server_starts_the_worker_but_not_the_forkserver_before_serving(monkeypatch):
    """The worker importing TileLang is the first diagnostic's critical path: at the spawn only it
    starts; the forkserver's preload would compete with it (and the server's own imports) for
    the cores, and it is started after `initialize` (`start_up`)."""
    calls: list[str] = []

    def called(what: str, value: object) -> object:
        calls.append(what)
        return value

    monkeypatch.setattr(cudajob, "warm_up", lambda: called("forkserver", None))
    monkeypatch.setattr("pipelint.lsp.lowering.start_worker_now", lambda: called("worker", None))
    monkeypatch.setattr(lsp_server, "serve", lambda cache_dir, host, worker: called("serve", 0))

    class Args:
        cache_dir = None

    assert command.cmd_server(Args(), None) == 0    # type: ignore[arg-type]
    assert calls == ["worker", "serve"]


def test_a_second_buffers_analysis_does_not_wait_for_a_first_buffers_lowering(host, tmp_path):
    """While a first buffer's lowering is in flight (here: it never ends), a second buffer is
    analysed and its analysis returns: nothing it does queues behind the first's job."""
    async def go() -> FileAnalysis:
        server = lsp_server.PipelintServer(tmp_path, host)
        server.lower_python = True
        never = asyncio.Event()

        async def lowering() -> None:       # a first buffer's lowering: every worker slot held
            async with server.lowerer.slots, server.lowerer.slots:
                await never.wait()

        first = asyncio.ensure_future(lowering())
        await asyncio.sleep(0.05)
        cu = tmp_path / "b.cu"
        cu.write_text("__global__ void k() {}\n")
        analysis = await asyncio.wait_for(server.analyse(str(cu), cu.read_text()), 60)
        assert not first.done()
        first.cancel()
        return analysis

    analysis = asyncio.run(go())
    assert analysis.path.endswith("b.cu")
