"""`pipelint check --watch`: check again whenever a watched file changes (watchfiles).

For people without an LSP client.  `.cu`/`.cuh` files and folders are checked exactly as
`check` checks them; TileLang `.py` files named on the command line are lowered and checked
as the server does (the same cache, `[tool.pipelint.lower]`), findings at the Python lines.
"""
from __future__ import annotations

import asyncio
import copy
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..report.escape import visible
from .analysis import Diagnostic

WATCHED = (".cu", ".cuh", ".py", ".toml")


def watch(args: Any, host: Any, check: Callable[[Any, Any], int]) -> int:
    """Run `check` now and after every change under the named paths; Ctrl-C ends it.

    The folders are watched one by one (not recursively), as `check` walks them: a link to a
    folder is never entered, so a link to `/tmp` or `/` in the tree neither reports names from
    outside nor makes the watcher walk the whole machine (issue 38). After each batch of changes
    the folders are listed again, so that a new subfolder is watched too."""
    try:
        import watchfiles
    except ImportError:
        raise UsageError("--watch needs watchfiles: pip install 'pipelint[lsp]'") from None
    if "-" in args.paths:
        raise UsageError("--watch cannot read stdin (`-`): name files or folders")
    for p in args.paths:
        if not os.path.exists(p):
            raise UsageError(f"path not found: {p}")
    run_once(args, host, check)
    folders = watched_folders(args.paths)
    while True:
        try:
            for changes in watchfiles.watch(*folders, watch_filter=_interesting, debounce=300, recursive=False,
                                            raise_interrupt=False, ignore_permission_denied=True):
                names = sorted({visible(os.path.relpath(path)) for _, path in changes if path.endswith(WATCHED)})
                if names:
                    print(f"\npipelint: changed: {', '.join(names[:5])}{' ...' if len(names) > 5 else ''}",
                          file=sys.stderr, flush=True)
                    run_once(args, host, check)
                again = watched_folders(args.paths)
                if again != folders:
                    folders = again
                    break
            else:
                return 0            # Ctrl-C
        except OSError as exc:      # the system's limit on watches, a folder that vanished
            raise UsageError(f"--watch: cannot watch {len(folders)} folder(s): {exc}") from None


def _interesting(_change: Any, path: str) -> bool:
    """A watched kind of file, or a folder (its creation changes what is watched); never a link."""
    return path.endswith(WATCHED) or (os.path.isdir(path) and not os.path.islink(path))


def watched_folders(paths: list[str]) -> list[str]:
    """The folders to watch: each named folder and the folders below it, walked without following
    links nor entering the default-excluded folders (`.git`, `.venv`, ...); a named file's folder."""
    from ..discovery import DEFAULT_EXCLUDES
    from ..ignorespec import IgnoreSpec

    skip = IgnoreSpec.from_lines(DEFAULT_EXCLUDES)
    folders: set[str] = set()
    for p in paths:
        top = os.path.abspath(p)
        if not os.path.isdir(top):
            folders.add(os.path.dirname(top))
            continue
        for folder, dirs, _names in os.walk(top):       # followlinks=False: links are not entered
            folders.add(folder)
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))
                       and not skip.match_file(d + "/")]
    return sorted(folders)


def run_once(args: Any, host: Any, check: Callable[[Any, Any], int]) -> int:
    started = time.perf_counter()
    python = [p for p in args.paths if p.endswith(".py")]
    other = [p for p in args.paths if not p.endswith(".py")]
    code = 0
    if other:
        once = copy.copy(args)
        once.paths, once.watch = other, False
        try:
            code = check(once, host)
        except UsageError as exc:
            print(f"pipelint: error: {exc}", file=sys.stderr)
            code = 2
    if python:
        from ..options import override_fields
        from ..settings import Overrides

        given = Overrides.from_flags(override_fields(args))
        for path in python:
            code = max(code, check_python(path, host, args.config, given))
    sys.stdout.flush()
    print(f"pipelint: checked at {time.strftime('%H:%M:%S')} in {time.perf_counter() - started:.1f} s "
          f"(exit code {code}); watching for changes (Ctrl-C to stop)", file=sys.stderr, flush=True)
    return code


def check_python(path: str, host: Any, config_file: str | None, given: Any) -> int:
    """Lower and check one TileLang file as the server does; print its diagnostics (`given`:
    the command line's `settings.Overrides`, for the cache)."""
    from .. import cachedir
    from ..config import load_config
    from .analysis import analyze_python
    from .lowering import Lowerer, cache_folder, dump_folder
    from .settings import lower_settings

    try:
        config = load_config([path], config_file, host)
        settings = lower_settings(config)
    except UsageError as exc:
        print(f"pipelint: error: {exc}", file=sys.stderr)
        return 2
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    choice = cachedir.choose(given.cache_dir, config.cache_dir, config.path)
    if choice.warning:
        cachedir.warn_fallback(choice)
    cache = cache_folder(str(choice.path))
    use_cache = not given.no_cache and config.cache is not False
    lowered = asyncio.run(Lowerer(cache).lower(path, text, settings, use_cache=use_cache))
    host.configure(config.plugins)
    analysis = analyze_python(path, text, lowered.result, host, config, dump_folder(cache, path))
    for d in analysis.diagnostics:
        print("\n".join(format_diagnostic(path, d)))
    return 1 if any(d.severity.rank >= 2 for d in analysis.diagnostics) else 0


def format_diagnostic(path: str, d: Diagnostic) -> list[str]:
    lines = [f"{path}:{d.line}:{d.col + 1}: {d.severity.value}[{d.rule}] {d.message}"]
    lines += [f"    {_shown(r.path)}:{r.line}: note: {r.message}" for r in d.related]
    if d.help:
        lines.append(f"    help: {d.help}")
    return lines


def _shown(path: str) -> str:
    """A path relative to the current folder when it is below it, else as it is."""
    if not os.path.isabs(path):
        return path
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
