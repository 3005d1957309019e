"""Nothing is imported from the folder pipelint is run in.

`python -m pipelint` puts the current folder first on `sys.path`, a console script its
own folder, and an empty entry of `PYTHONPATH` (`PYTHONPATH=$PYTHONPATH:` with the
variable unset) the current folder again.  pipelint is run from inside the repository it
checks, so a `pathspec.py` or a `*.dist-info/entry_points.txt` there would be imported
or loaded as a plugin: code from the checked tree running in CI.  When pipelint is the
program being run, those entries are dropped before anything else is imported (this
module imports only what the interpreter has already loaded: `os`, `sys`).  Imported as a
library (`pipelint.testing` in a plugin's tests), `sys.path` is the caller's and is left
alone.  (No `from __future__` import here: it is a real import, and `__future__.py` in the
current folder would be found first.)
"""
import os
import sys

SCRIPT_NAMES = ("pipelint", "pipelint.exe", "pipelint-script.py")


def running_as() -> str | None:
    """"module" for `python -m pipelint`, "script" for the console script, None when pipelint
    is imported by another program."""
    orig = list(getattr(sys, "orig_argv", ()))
    for i, arg in enumerate(orig[1:], 1):
        if arg == "-m":
            return "module" if orig[i + 1:i + 2] == ["pipelint"] else None
        if arg.startswith("-m") and not arg.startswith("--"):
            return "module" if arg[2:] == "pipelint" else None
        if arg in ("-c", "-") or not arg.startswith("-"):
            break                   # a command string or a script: not `-m`
    script = sys.argv[0] if sys.argv else ""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None) or ""
    if os.path.basename(script) in SCRIPT_NAMES and main_file and _same(main_file, script):
        return "script"
    return None


def _same(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def unsafe_entries(kind: str, path: list[str], cwd: str, script: str) -> list[str]:
    """The entries of `path` that name the current folder (`''`, `.`, the folder itself) or,
    for a console script, the script's folder."""
    unsafe = {os.path.realpath(cwd)}
    if kind == "script" and script:
        unsafe.add(os.path.realpath(os.path.dirname(os.path.abspath(script))))
    return [entry for entry in path if entry in ("", ".") or os.path.realpath(entry) in unsafe]


def drop_unsafe_path() -> list[str]:
    """Remove the current folder and the script's folder from `sys.path` when pipelint is the
    program; return what was removed (nothing when imported as a library)."""
    kind = running_as()
    if kind is None:
        return []
    try:
        cwd = os.getcwd()
    except OSError:                 # the folder was removed under us: nothing there to import
        cwd = ""
    dropped = unsafe_entries(kind, sys.path, cwd, sys.argv[0] if sys.argv else "") if cwd else \
        [e for e in sys.path if e in ("", ".")]
    for entry in dropped:
        while entry in sys.path:
            sys.path.remove(entry)
    if dropped:
        import importlib

        importlib.invalidate_caches()
    return dropped


__all__ = ["drop_unsafe_path", "running_as", "unsafe_entries"]
