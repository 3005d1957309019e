"""`PIPELINT_LSP_TRACE=FILE`: where the editor's time goes, one line per step appended to FILE.

Shared by the server, its lowering client and the lowering worker process (a module of its own,
so that the lowering client need not import the server, nor the worker either of them).
"""
from __future__ import annotations

import contextlib
import os
import time

_TRACE = os.environ.get("PIPELINT_LSP_TRACE")


def trace(what: str, origin: str = "") -> None:
    """Append `<monotonic seconds> <pid> [origin: ]<what>` to the trace file, if one is set."""
    if _TRACE:
        with contextlib.suppress(OSError), open(_TRACE, "a", encoding="utf-8") as fh:
            fh.write(f"{time.monotonic():.3f} {os.getpid()} {origin + ': ' if origin else ''}{what}\n")
