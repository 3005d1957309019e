"""Issue 39's code-edit path, without TileLang or an LSP client: which lowering workers another
buffer's analysis stops (not one still lowering its buffer's first variant), the warm-up giving
way to a buffer that arrives, the order the worker lowers variants in, the typing pause, and the
server's command line living with the other commands (issue 33)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from helpers import ROOT

from pipelint.lsp import worker
from pipelint.lsp.lowering import Lowerer

posix = pytest.mark.skipif(not hasattr(os, "killpg") or not os.path.isdir("/proc"), reason="needs /proc and signals")


def _state(pid: int) -> str:
    """The process state letter from /proc (T: stopped)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


def _settled(pid: int, want: str) -> str:
    deadline = time.monotonic() + 5
    while (state := _state(pid)) != want and time.monotonic() < deadline:
        time.sleep(0.01)
    return state


@pytest.fixture
def sleepers():
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(2)]
    yield [p.pid for p in procs]
    for p in procs:
        p.kill()
        p.wait()


@posix
def test_a_worker_lowering_its_buffers_first_variant_is_not_stopped(sleepers, tmp_path):
    """The first variant is what the user waits for (a code edit's diagnostics): another buffer's
    analysis does not stop it; once it is delivered, the rest of that buffer's lowering is
    background work, stopped for that analysis (now, and for a worker whose first variant comes
    during it), and let go when the analysis ends."""
    first, rest = sleepers
    lowerer = Lowerer(tmp_path)
    a, b = str(tmp_path / "a.py"), str(tmp_path / "b.py")
    lowerer.running = {first: a, rest: os.path.abspath(b)}
    lowerer.shown = {os.path.abspath(b)}
    held = lowerer.pause_others(str(tmp_path / "c.py"))
    assert held == [rest] and _settled(rest, "T") == "T"
    assert _state(first) != "T"
    lowerer._first_variant(first, a)         # a's first variant arrives during c's analysis
    assert held == [rest, first] and _settled(first, "T") == "T"
    lowerer.resume(held)
    assert _settled(first, "S") != "T" and _settled(rest, "S") != "T"
    lowerer._first_variant(first, a)         # after the analysis: nothing is stopped any more
    time.sleep(0.05)
    assert _state(first) != "T"


@posix
def test_a_buffers_own_workers_are_never_stopped_for_its_analysis(sleepers, tmp_path):
    own, _ = sleepers
    lowerer = Lowerer(tmp_path)
    path = os.path.abspath(tmp_path / "a.py")
    lowerer.running = {own: path}
    lowerer.shown = {path}
    held = lowerer.pause_others(path)
    lowerer._first_variant(own, path)
    assert held == [] and _state(own) != "T"
    lowerer.resume(held)


def test_the_warm_up_gives_way_to_a_buffer_that_arrives(monkeypatch):
    """sm_90 is warmed up first (the server lowers it first); a spec that arrives during it
    is not kept waiting for sm_80's warm-up as well."""
    lowered: list[str] = []
    monkeypatch.setattr(worker, "lower_one", lambda obj, kind, params, arch, n: lowered.append(arch))
    monkeypatch.setattr(worker, "exec", lambda code, scope: scope.update(warm_up=None), raising=False)
    worker.warm_up()
    assert lowered == ["sm_90", "sm_80"]
    lowered.clear()
    worker.warm_up(lambda: bool(lowered))
    assert lowered == ["sm_90"]
    lowered.clear()
    worker.warm_up(lambda: True)
    assert lowered == []


def test_variants_are_lowered_in_the_specs_order_once_per_target_when_written_as_is():
    """Every kernel of one variant before the next; a kernel without a num_stages parameter once
    per target (None: as written); a kernel the server reuses is not lowered."""
    found = [("gemm", None, "factory", {}, 3), ("plain", None, "factory", {}, None),
             ("prim", None, "prim_func", {}, None), ("kept", None, "factory", {}, 2)]
    kernels = [{"name": "gemm", "stage_param": "num_stages"}, {"name": "plain", "stage_param": None},
               {"name": "prim", "stage_param": None}, {"name": "kept", "stage_param": "num_stages"}]
    asked = [(arch, [(entry[0], n) for entry, _, n in stages])
             for arch, stages in worker._asked([["sm_90", 2], ["sm_90", 3], ["sm_80", 2]], found, kernels, {"kept"})]
    assert asked == [("sm_90", [("gemm", 2), ("plain", None), ("prim", 2)]),
                     ("sm_90", [("gemm", 3), ("prim", 3)]),
                     ("sm_80", [("gemm", 2), ("plain", None), ("prim", 2)])]


def test_the_typing_pause_is_no_longer_than_clangds():
    """clangd waits 50-500 ms after a change (its adaptive policy; 500 ms fixed before it):
    the server's default pause is within that, and the documented one is the same."""
    from pipelint.lsp import server

    assert 0.05 <= server.DEBOUNCE <= 0.5
    assert f'"debounce": {server.DEBOUNCE}' in (server.__doc__ or "")
    assert f"({server.DEBOUNCE} s)" in (ROOT / "docs" / "editor.md").read_text()


def test_the_server_command_line_lives_with_the_other_commands():
    """Issue 33: flags are read only by `cli.py`, `options.py` and `commands/`; the server's
    front end is `commands/server.py`, and `pipelint server` and `check --watch` still parse."""
    from pipelint.cli import build_parser
    from pipelint.commands import server as command

    lsp = ROOT / "analyzer" / "lsp"
    assert not (lsp / "cli.py").exists()
    assert all("argparse" not in p.read_text() and "getattr(args" not in p.read_text() for p in lsp.glob("*.py"))
    parser = build_parser()
    args = parser.parse_args(["server", "--stdio", "--cache-dir", "c"])
    assert args.func is command.cmd_server and args.cache_dir == "c"
    assert parser.parse_args(["check", "x.cu", "--watch"]).watch is True


def _session_of(conn, _: int) -> None:
    conn.send((os.getsid(0), os.getpid()))


@pytest.mark.skipif(not hasattr(os, "setsid"), reason="needs sessions")
def test_each_analysis_process_has_a_session_of_its_own():
    """Linux shares the CPU between sessions first (autogroup): an analysis in the server's
    session shared one share with the server and every other analysis, while a lowering worker
    (a session of its own) had a whole one."""
    import asyncio

    from pipelint.lsp import cudajob

    sid, pid = asyncio.run(cudajob._in_child(_session_of, (0,), "x"))
    assert sid == pid != os.getsid(0)
