"""Killing a lowering worker with everything it started, whatever session those started.

A lowering worker executes the user's kernel file.  Its helpers die with the worker's process
group (`killpg`), but a helper that calls `setsid()` (or daemonizes with a double fork) leaves
that group, and before issue 38 five such processes outlived the timeout and the server.

On Linux the worker makes itself a *child subreaper* (`become_subreaper`), so that a descendant
orphaned by a double fork is re-parented to the worker instead of to init and stays findable
by parent pid.  `kill_tree` then stops the whole tree first (so nothing forks while it is being
killed), collects it again until no new process appears, and kills it.  Elsewhere only the
process group is killed.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); whether that worked."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process this user can see (/proc), empty without /proc."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            parents[int(name)] = int(fields[1])
    return parents


def descendants(pid: int) -> set[int]:
    """Every living descendant of `pid` (not `pid` itself)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def kill_descendants(pid: int, rounds: int = 20) -> int:
    """Stop, then kill, every descendant of `pid` (a process forking meanwhile is caught by the
    next round); how many were killed."""
    stopped: set[int] = set()
    for _ in range(rounds):
        fresh = descendants(pid) - stopped
        if not fresh:
            break
        for p in fresh:
            _signal(p, signal.SIGSTOP)
        stopped |= fresh
    for p in stopped:
        _signal(p, signal.SIGKILL)
    return len(stopped)


def kill_tree(pid: int) -> None:
    """Kill `pid`, its process group and every descendant, wherever their sessions are."""
    kill_descendants(pid)
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    _signal(pid, signal.SIGKILL)
