"""The project's Python modules a kernel file imports: part of what a lowering depends on.

A kernel's tile size may live in a module beside it (`from tiles import BLOCK_K`); lowering runs
the file with its folder on `sys.path`, so an edit of that module changes the CUDA although the
kernel file's bytes did not.  Both lowering caches (`pipelint lower`'s and the editor's) key their
entries by the sources of these modules, transitively (issue 39).
"""
from __future__ import annotations

import ast
import hashlib
import os

MAX_MODULES = 256                 # modules followed from one file
MAX_BYTES = 4 * 2**20             # a module larger than this is keyed by its size and mtime only


def local_imports(text: str, folder: str) -> list[str]:
    """Modules beside the file that it imports (`import helpers`, `from helpers import x`):
    the worker puts the file's folder on `sys.path`, so they are part of what is lowered."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    found = []
    for name in sorted(names):
        for candidate in (os.path.join(folder, f"{name}.py"), os.path.join(folder, name, "__init__.py")):
            if os.path.isfile(candidate):
                found.append(candidate)
    return found


def project_imports(path: str, text: str | None = None) -> list[str]:
    """The modules beside `path` it imports, and the ones those import, transitively (at most
    MAX_MODULES), sorted; `text`: the file's current text when it is not what is on disk (an
    editor buffer)."""
    start = os.path.abspath(path)
    seen: set[str] = set()
    todo = [(start, text)]
    while todo and len(seen) < MAX_MODULES:
        current, source = todo.pop()
        if source is None:
            try:
                if os.path.getsize(current) > MAX_BYTES:
                    continue
                with open(current, encoding="utf-8", errors="replace") as fh:
                    source = fh.read()
            except OSError:
                continue
        for module in local_imports(source, os.path.dirname(current)):
            module = os.path.abspath(module)
            if module != start and module not in seen:
                seen.add(module)
                todo.append((module, None))
    return sorted(seen)


def imports_digest(path: str, text: str | None = None) -> list[list[str]]:
    """(module, sha256 of its bytes) for every project module `path` imports (`project_imports`)."""
    out = []
    for module in project_imports(path, text):
        try:
            if os.path.getsize(module) > MAX_BYTES:
                st = os.stat(module)
                out.append([module, f"{st.st_size}:{st.st_mtime_ns}"])
                continue
            with open(module, "rb") as fh:
                out.append([module, hashlib.sha256(fh.read()).hexdigest()])
        except OSError:
            continue
    return out
