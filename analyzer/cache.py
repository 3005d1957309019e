"""A per-file result cache, so a run over unchanged kernels costs a few file reads.

Like ruff's: one entry per checked file, keyed by the bytes that were analysed, the path
it was given as (findings carry it), and a *salt* made of everything else that decides the
result — pipelint's version and code, the loaded plugins with their versions and code, and
the analysis options.  Ignore and severity settings are applied after the analysis, so
changing them reuses the cache.  A selection (`--select`) runs only its checks and is keyed
apart; where its entry is missing, a run of every rule's entry is narrowed to it
(`PluginHost.narrowed`), so a full run followed by a selection analyses nothing twice.

Two small indexes make a warm run cheap:

* ``stat/``: ``(path, mtime, ctime, size, inode)`` -> the content key, so an unchanged file
  is not even read;
* ``data/``: content key -> the file's result (JSON).

A result is stored under the digest of the bytes its analysis read (`FileResult.digest`),
never of a second read: a file saved while it was analysed keeps no stale result under its
new content.  The stat index is written only when the file's stat before its read equals
its stat after the analysis.  Each entry is written as its file finishes (a killed run keeps
what it finished), atomically; any entry that cannot be read or decoded is deleted and
recomputed; the directory is pruned, oldest first, when it grows over its size cap.  Results
of a file whose analysis hit its time or memory budget are not stored: they depend on the
machine.  Every file operation is `cachedir`'s: no link is followed, nothing outside the
root is touched, and only files named like entries are deleted.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

from . import cachedir
from .findings import FileResult, Finding, Location, Severity, ToolError, Witness, WitnessSide

FORMAT = 2                          # bump when the entry layout changes
DEFAULT_MAX_BYTES = 256 * 2**20     # the directory is pruned to this size
ENV_DIR = cachedir.ENV_DIR
default_dir = cachedir.default_dir
Snapshot = tuple[int, int, int, int]

Result = tuple[FileResult, list[Finding], list[ToolError]]


def digest_of(data: bytes) -> str:
    """What a file's result is keyed by: the sha256 of the bytes that were analysed."""
    return hashlib.sha256(data).hexdigest()


def snapshot(path: str) -> Snapshot | None:
    """(mtime, ctime, size, inode) of `path`, taken before it is read: a result is indexed by
    this only when the file is still the same after its analysis.  None for what is not a
    regular file (FIFOs and devices are never opened: they would block)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def code_stamp(modules: list[object]) -> str:
    """Size and mtime of every source file of the given modules' packages: an edited plugin or
    a development checkout of pipelint invalidates the cache without a version bump."""
    parts: list[str] = []
    seen: set[str] = set()
    for obj in modules:
        module = obj if isinstance(obj, ModuleType) else sys.modules.get(type(obj).__module__)
        path = getattr(module, "__file__", None)
        if not path:
            parts.append(type(obj).__qualname__)
            continue
        folder = os.path.dirname(path)
        top = folder if os.path.basename(path) == "__init__.py" else path
        if top in seen:
            continue
        seen.add(top)
        files = [top] if top == path else sorted(
            os.path.join(d, n) for d, _, names in os.walk(top) for n in names if n.endswith((".py", ".lark")))
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()    # plugin order is a set's


class ResultCache:
    """Results of `check_file` by file; see the module docstring.  Raises `CacheRefused` when
    the root is not one pipelint may use (a link, someone else's, a folder it did not make)."""

    def __init__(self, root: Path, salt: str, max_bytes: int = DEFAULT_MAX_BYTES,
                 wider: tuple[ResultCache, Callable[[Result], Result | None]] | None = None) -> None:
        self.top = cachedir.open_root(Path(root))
        self.root = self.top / f"v{FORMAT}"
        self.salt = salt
        self.max_bytes = max_bytes
        # a run of some rules only (`--select`): the cache of a run of every rule, and how to
        # narrow one of its results to what this run's checks would have given; a full run
        # followed by a selection (CI's second job, a pre-commit hook) costs no analysis
        self.wider = wider
        self.hits = 0
        self.misses = 0
        self.written = 0

    # ----------------------------------------------------------------- keys
    def _stat_key(self, path: str, snap: Snapshot) -> str:
        raw = f"{self.salt}\0{os.path.abspath(path)}\0{path}\0{snap}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def content_key(self, path: str, digest: str) -> str:
        return hashlib.sha256(f"{self.salt}\0{path}\0{digest}".encode()).hexdigest()

    def _entry(self, kind: str, key: str, create: bool = False) -> Path | None:
        """The entry file of a key; None for anything but 64 lowercase hex digits (a stat entry's
        `key` is read from disk: it must never name a path)."""
        if not _HEX64.fullmatch(key):
            return None
        where = cachedir.folder(self.top, f"v{FORMAT}", kind, key[:2], create=create)
        return None if where is None else where / key[2:]

    # ----------------------------------------------------------------- read
    def get(self, path: str) -> Result | None:
        """The cached result of `path` if the file is unchanged, else None."""
        snap = snapshot(path)
        if snap is None:
            return None
        pointer = self._read("stat", self._stat_key(path, snap))
        key = pointer.get("key") if isinstance(pointer, dict) else None
        if isinstance(key, str) and _HEX64.fullmatch(key):
            found = self._decode("data", key, path)
        else:                                   # touched or freshly cloned: the bytes decide
            data = _read_checked(path, snap)
            if data is None:
                return None
            key = self.content_key(path, digest_of(data))
            found = self._decode("data", key, path)
            if found is not None and snapshot(path) == snap:
                self._write("stat", self._stat_key(path, snap), {"key": key})
        if found is None and self.wider is not None:
            cache, narrow = self.wider
            wide = cache.get(path)
            found = narrow(wide) if wide is not None else None
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def _read(self, kind: str, key: str) -> Any:
        file = self._entry(kind, key)
        data = None if file is None else cachedir.read_file(file)
        if file is None or data is None:
            return None
        try:
            return json.loads(data)
        except Exception:       # noqa: BLE001 - any undecodable entry (200,000 nested [: RecursionError) heals
            cachedir.remove_entry(file)
            return None

    def _decode(self, kind: str, key: str, path: str) -> Result | None:
        entry = self._read(kind, key)
        if entry is None:
            return None
        try:
            entry = _fields(entry, ("format", "file", "findings", "errors"))
            if entry["format"] != FORMAT:
                raise _Bad("not an entry of this format")
            found = (_file_result(entry["file"]), [_finding(f) for f in _list(entry["findings"])],
                     [_tool_error(e) for e in _list(entry["errors"])])
            if found[0].path != path:
                raise _Bad("an entry of another path")
            return found
        except Exception:       # noqa: BLE001 - a wrong shape is as corrupt as a wrong syntax: recompute
            file = self._entry(kind, key)
            if file is not None:
                cachedir.remove_entry(file)
            return None

    # ----------------------------------------------------------------- write
    def put(self, path: str, result: Result, before: Snapshot | None = None) -> None:
        """Store a file's result under the digest of the bytes its analysis read
        (`FileResult.digest`; a result without one is not stored).  `before`: the file's
        `snapshot` from before it was read; the stat index points at the result only when the
        file is unchanged since.  Results cut short by a budget are not stored."""
        from .core_rules import ANALYSIS_LIMIT

        file_result, findings, errors = result
        if file_result.digest is None:
            return
        if any(f.rule == ANALYSIS_LIMIT.id for f in findings) or any(e.internal for e in errors):
            return
        key = self.content_key(path, file_result.digest)
        entry = {"format": FORMAT, "file": asdict(file_result), "findings": [asdict(f) for f in findings],
                 "errors": [asdict(e) for e in errors]}
        if self._write("data", key, entry):
            self.written += 1
            if before is not None and snapshot(path) == before:
                self._write("stat", self._stat_key(path, before), {"key": key})

    def _write(self, kind: str, key: str, payload: dict) -> bool:
        file = self._entry(kind, key, create=True)
        if file is None:
            return False
        return cachedir.write_file(file.parent, file.name, json.dumps(payload, separators=(",", ":")).encode())

    def prune(self) -> int:
        """Delete the oldest entries until the cache is under its size cap; returns how many."""
        if not self.written:
            return 0
        return cachedir.evict(self.top, "result", max_bytes=self.max_bytes)


def _read_checked(path: str, snap: Snapshot) -> bytes | None:
    """The file's bytes when it is the file `snap` describes and not over the entry limit."""
    if snap[2] > cachedir.MAX_ENTRY_BYTES:
        return None
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_ino != snap[3]:
                return None
            return fh.read(cachedir.MAX_ENTRY_BYTES + 1)
    except OSError:
        return None


# ------------------------------------------------------------------ strict decoding
# An entry is served only when it has exactly the shape `put` writes: every field present, of its
# type (an int is an int, not a bool, a float or NaN), nothing else.  Anything else is corrupt or
# forged, and is deleted and recomputed (`ResultCache._decode`): a cache entry must never crash a
# run nor stand for findings the analysis did not make.
_HEX64 = re.compile(r"[0-9a-f]{64}")


class _Bad(ValueError):
    """An entry that is not what `put` wrote."""


def _fields(d: Any, names: tuple[str, ...]) -> dict:
    if not isinstance(d, dict) or set(d) != set(names):
        raise _Bad("fields")
    return d


def _int(v: Any) -> int:
    if type(v) is int and -2**62 < v < 2**62:
        return v
    raise _Bad("int")


def _oint(v: Any) -> int | None:
    return None if v is None else _int(v)


def _str(v: Any) -> str:
    if type(v) is str:
        return v
    raise _Bad("str")


def _ostr(v: Any) -> str | None:
    return None if v is None else _str(v)


def _bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    raise _Bad("bool")


def _list(v: Any) -> list:
    if type(v) is list:
        return v
    raise _Bad("list")


_LOCATION = ("path", "line", "column", "end_line", "end_column", "message", "outside")
_FINDING = ("rule", "severity", "message", "location", "related", "kernel", "plugin", "help", "witness")
_WITNESS = ("kind", "buffer", "first", "second", "pair", "path")
_SIDE = ("line", "access", "threads", "statement", "iteration")
_ERROR = ("message", "path", "plugin", "internal", "detail")
_FILE = ("path", "parsed", "kernels", "error", "suppressions", "digest")


def _location(d: Any) -> Location:
    d = _fields(d, _LOCATION)
    return Location(_str(d["path"]), _int(d["line"]), _int(d["column"]), _oint(d["end_line"]),
                    _oint(d["end_column"]), _str(d["message"]), _bool(d["outside"]))


def _finding(d: Any) -> Finding:
    d = _fields(d, _FINDING)
    return Finding(_str(d["rule"]), Severity(_str(d["severity"])), _str(d["message"]),
                   _location(d["location"]), tuple(_location(r) for r in _list(d["related"])),
                   _ostr(d["kernel"]), _ostr(d["plugin"]), _str(d["help"]), _witness(d["witness"]))


def _side(d: Any) -> WitnessSide:
    d = _fields(d, _SIDE)
    return WitnessSide(_int(d["line"]), _str(d["access"]), tuple(_int(t) for t in _list(d["threads"])),
                       _str(d["statement"]), tuple(_loop_value(p) for p in _list(d["iteration"])))


def _loop_value(v: Any) -> tuple[str, int]:
    p = _list(v)
    if len(p) != 2:
        raise _Bad("iteration")
    return _str(p[0]), _int(p[1])


def _witness(d: Any) -> Witness | None:
    """A race finding's witness (`findings.Witness`), as `asdict` wrote it; None when it had none."""
    if d is None:
        return None
    d = _fields(d, _WITNESS)
    pair = None if d["pair"] is None else _list(d["pair"])
    if pair is not None and len(pair) != 2:
        raise _Bad("pair")
    return Witness(_str(d["kind"]), _str(d["buffer"]), _side(d["first"]), _side(d["second"]),
                   None if pair is None else (_int(pair[0]), _int(pair[1])), _str(d["path"]))


def _tool_error(d: Any) -> ToolError:
    d = _fields(d, _ERROR)
    return ToolError(_str(d["message"]), _ostr(d["path"]), _ostr(d["plugin"]), _bool(d["internal"]),
                     _str(d["detail"]))


def _file_result(d: Any) -> FileResult:
    d = _fields(d, _FILE)
    suppressions = None
    if d["suppressions"] is not None:
        suppressions = tuple((_int(line), tuple(_str(r) for r in _list(rules)), _int(col))
                             for line, rules, col in (_triple(x) for x in _list(d["suppressions"])))
    digest = _ostr(d["digest"])
    if digest is not None and not _HEX64.fullmatch(digest):
        raise _Bad("digest")
    return FileResult(_str(d["path"]), _bool(d["parsed"]), tuple(_str(k) for k in _list(d["kernels"])),
                      _ostr(d["error"]), suppressions, digest)


def _triple(x: Any) -> tuple:
    if type(x) is not list or len(x) != 3:
        raise _Bad("suppression")
    return tuple(x)


def salt_for(host_modules: list[object], plugin_versions: dict[str, str], options: object) -> str:
    """Everything besides the file that decides its result."""
    from . import __version__

    parts = [f"pipelint {__version__}", sys.version, repr(sorted(plugin_versions.items())), repr(options),
             code_stamp(host_modules)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
