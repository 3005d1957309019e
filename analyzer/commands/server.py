"""The command line of the editor integration: `pipelint server` and `check --watch`.

Both need the `lsp` extra (pygls, lsprotocol, watchfiles), imported only when used, so
`pipelint check` never loads them.  The front end lives here, with the other commands' (the
flags are read in `cli.py`, `options.py` and `commands/` only); what it runs is `lsp/`.
"""
from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..options import add_command

# pipelint is not published on PyPI (`pip install 'pipelint[lsp]'` finds nothing): the extras are
# installed from a clone, with the versions CI tests (README); CPU-only machines install torch's
# CPU build first, or TileLang's torch requirement pulls a multi-GB CUDA build
INSTALL = ("pip install torch==2.13.0 && pip install -c constraints.txt -e '.[lsp,tilelang]' "
           "(in the clone's folder; torch first on CPU-only machines)")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    server = add_command(sub, "server", "run the language server (LSP over stdio) for editors",
                         "Findings at the TileLang Python lines as you edit: each kernel of an opened or saved "
                         "TileLang file is lowered (cached, in worker processes) and checked with the "
                         "project's configuration; hovers and inlay hints on T.Pipelined loops; a code action "
                         "inserts `# pipelint: ignore[RULE]`. Opened .cu files are checked too. Needs the lsp "
                         "extra (and tilelang, to lower kernels); pipelint is not on PyPI, so from a clone: "
                         f"{INSTALL}. Editor set-up: docs/editor.md.",
                         ["pipelint server", "pipelint server --cache-dir .pipelint-cache"])
    server.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only "
                        "transport; accepted because clients pass it)")
    server.add_argument("--cache-dir", default=None, metavar="DIR",
                        help="where lowered kernels are cached (default: $PIPELINT_CACHE_DIR, else the "
                             "platform's user cache folder)")
    server.set_defaults(func=cmd_server)
    check = sub.choices.get("check")
    if check is not None:
        check.add_argument("--watch", action="store_true",
                           help="check again whenever a watched file changes (.cu, .cuh, TileLang .py files "
                                "named on the command line, the configuration); needs the lsp extra")
        plain = check.get_default("func")
        check.set_defaults(func=lambda args, host: _check_or_watch(args, host, plain))


def _check_or_watch(args: argparse.Namespace, host: Any, check: Any) -> int:
    if not getattr(args, "watch", False):
        return check(args, host)
    from ..lsp.watch import watch

    return watch(args, host, check)


def cmd_server(args: argparse.Namespace, host: Any) -> int:
    """`pipelint server`: the language server over stdio until the client says exit."""
    # the worker that lowers the first kernel file first: TileLang's import (4.6 s of CPU, the
    # critical path of the first diagnostic) overlaps the server's start-up; the server adopts
    # it, or kills it when the client asks for no lowering (lowerPython or warmWorker false).
    # The analysis processes' forkserver starts after `initialize` (issue 39: `start_up`), so
    # that its preload does not compete with this import and the server's own for two cores.
    from ..lsp.lowering import start_worker_now

    early = start_worker_now()
    try:
        from ..lsp.server import serve
    except ImportError as exc:
        raise UsageError(f"`pipelint server` needs the lsp extra ({exc.name} is missing); from the clone "
                         f"pipelint was installed from: {INSTALL}") from None
    return serve(args.cache_dir, host, early)
