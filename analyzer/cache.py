"""A per-file result cache, so a run over unchanged kernels costs a few file reads.

Like ruff's: one entry per checked file, keyed by the bytes that were analysed, the path
it was given as (findings carry it), and a *salt* made of everything else that decides the
result — pipelint's version and code, the loaded plugins with their versions and code, and
the analysis options.  Select/ignore/severity settings are applied after the analysis, so
changing them reuses the cache.

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
import stat
import sys
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

from . import cachedir
from .findings import FileResult, Finding, Location, Severity, ToolError

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

    def __init__(self, root: Path, salt: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.top = cachedir.open_root(Path(root))
        self.root = self.top / f"v{FORMAT}"
        self.salt = salt
        self.max_bytes = max_bytes
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
        if isinstance(key, str) and len(key) == 64:
            found = self._decode("data", key)
        else:                                   # touched or freshly cloned: the bytes decide
            data = _read_checked(path, snap)
            if data is None:
                return None
            key = self.content_key(path, digest_of(data))
            found = self._decode("data", key)
            if found is not None and snapshot(path) == snap:
                self._write("stat", self._stat_key(path, snap), {"key": key})
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

    def _decode(self, kind: str, key: str) -> Result | None:
        entry = self._read(kind, key)
        if entry is None:
            return None
        try:
            if not isinstance(entry, dict) or entry.get("format") != FORMAT:
                raise ValueError("not an entry of this format")
            return (_file_result(entry["file"]), [_finding(f) for f in entry["findings"]],
                    [ToolError(**e) for e in entry["errors"]])
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


def _location(d: dict) -> Location:
    return Location(**d)


def _finding(d: dict) -> Finding:
    return Finding(d["rule"], Severity(d["severity"]), d["message"], _location(d["location"]),
                   tuple(_location(r) for r in d["related"]), d.get("kernel"), d.get("plugin"), d.get("help", ""))


def _file_result(d: dict) -> FileResult:
    fields = dict(d)
    fields["kernels"] = tuple(fields.get("kernels", ()))
    if fields.get("suppressions") is not None:
        fields["suppressions"] = tuple((line, tuple(rules), col) for line, rules, col in fields["suppressions"])
    return FileResult(**fields)


def salt_for(host_modules: list[object], plugin_versions: dict[str, str], options: object) -> str:
    """Everything besides the file that decides its result."""
    from . import __version__

    parts = [f"pipelint {__version__}", sys.version, repr(sorted(plugin_versions.items())), repr(options),
             code_stamp(host_modules)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
