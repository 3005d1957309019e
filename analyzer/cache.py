"""A per-file result cache, so a run over unchanged kernels costs a few file reads.

Like ruff's: one entry per checked file, keyed by the file's bytes, the path it
was given as (findings carry it), and a *salt* made of everything else that
decides the result — pipelint's version and code, the loaded plugins with their
versions and code, and the analysis options.  Select/ignore/severity settings are
applied after the analysis, so changing them reuses the cache.

Two small indexes make a warm run cheap:

* ``stat/``: ``(path, mtime, size, inode)`` -> the content key, so an unchanged
  file is not even read;
* ``data/``: content key -> the file's result (JSON).

Writes go to a temporary file renamed into place (safe when runs overlap); an
entry that cannot be read or decoded is deleted and recomputed; the directory is
pruned, oldest first, when it grows over its size cap.  Results of a file whose
analysis hit its time or memory budget are not stored: they depend on the machine.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

from .findings import FileResult, Finding, Location, Severity, ToolError

FORMAT = 2                          # bump when the entry layout changes
DEFAULT_MAX_BYTES = 256 * 2**20     # the directory is pruned to this size
ENV_DIR = "PIPELINT_CACHE_DIR"

Result = tuple[FileResult, list[Finding], list[ToolError]]


def default_dir() -> Path:
    """`$PIPELINT_CACHE_DIR`, else the platform's user cache folder (platformdirs)."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    try:
        import platformdirs
    except ImportError:      # pragma: no cover - a core dependency; keep working without it
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pipelint"
    return Path(platformdirs.user_cache_dir("pipelint", appauthor=False))


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
    """Results of `check_file` by file; see the module docstring."""

    def __init__(self, root: Path, salt: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root) / f"v{FORMAT}"
        self.salt = salt
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self.written = 0

    # ----------------------------------------------------------------- keys
    def _stat_key(self, path: str, st: os.stat_result) -> str:
        raw = f"{self.salt}\0{os.path.abspath(path)}\0{path}\0{st.st_mtime_ns}\0{st.st_size}\0{st.st_ino}"
        return hashlib.sha256(raw.encode()).hexdigest()

    def content_key(self, path: str, data: bytes) -> str:
        h = hashlib.sha256(f"{self.salt}\0{path}\0".encode())
        h.update(data)
        return h.hexdigest()

    def _file(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / key[2:]

    # ----------------------------------------------------------------- read
    def get(self, path: str) -> Result | None:
        """The cached result of `path` if the file is unchanged, else None."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):      # FIFOs and devices are never opened (they would block)
            return None
        pointer = self._read(self._file("stat", self._stat_key(path, st)))
        key = pointer.get("key") if isinstance(pointer, dict) else None
        if not isinstance(key, str):
            try:                # touched or freshly cloned: the bytes decide
                with open(path, "rb") as fh:
                    key = self.content_key(path, fh.read())
            except OSError:
                return None
            found = self._decode(self._read(self._file("data", key)))
            if found is not None:
                self._write(self._file("stat", self._stat_key(path, st)), {"key": key})
        else:
            found = self._decode(self._read(self._file("data", key)))
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def _read(self, file: Path) -> Any:
        try:
            with open(file, encoding="utf-8") as fh:
                return json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            _unlink(file)               # corrupt: heal by recomputing
            return None

    def _decode(self, entry: Any) -> Result | None:
        try:
            if not isinstance(entry, dict) or entry.get("format") != FORMAT:
                return None
            return (_file_result(entry["file"]), [_finding(f) for f in entry["findings"]],
                    [ToolError(**e) for e in entry["errors"]])
        except (KeyError, TypeError, ValueError):
            return None

    # ----------------------------------------------------------------- write
    def put(self, path: str, data: bytes, result: Result) -> None:
        """Store a file's result (not one cut short by a budget: that depends on the machine)."""
        from .core_rules import ANALYSIS_LIMIT

        file_result, findings, errors = result
        if any(f.rule == ANALYSIS_LIMIT.id for f in findings) or any(e.internal for e in errors):
            return
        try:
            st = os.stat(path)
        except OSError:
            return
        key = self.content_key(path, data)
        entry = {"format": FORMAT, "file": asdict(file_result), "findings": [asdict(f) for f in findings],
                 "errors": [asdict(e) for e in errors]}
        if self._write(self._file("data", key), entry):
            self._write(self._file("stat", self._stat_key(path, st)), {"key": key})
            self.written += 1

    def _write(self, file: Path, payload: dict) -> bool:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, separators=(",", ":"))
            os.replace(tmp, file)
            return True
        except OSError:
            return False            # a read-only or full cache never fails the run

    def prune(self) -> int:
        """Delete the oldest entries until the cache is under its size cap; returns how many."""
        if not self.written:
            return 0
        entries = []
        for kind in ("data", "stat"):
            base = self.root / kind
            if not base.is_dir():
                continue
            for shard in os.scandir(base):
                if not shard.is_dir():
                    continue
                for e in os.scandir(shard.path):
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    entries.append((st.st_mtime, st.st_size, e.path))
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            _unlink(Path(path))
            total -= size
            removed += 1
        return removed


def _unlink(file: Path) -> None:
    with contextlib.suppress(OSError):
        file.unlink()


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
