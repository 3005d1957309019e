"""A variant TileLang cannot lower: where it is reported, what it usually means, and its record.

* **At the user's line** (issue 34): the line of the user's file that TileLang's message or
  traceback names (the deepest frame in the kernel's file, a `--> file:line` diagnostic), else
  the kernel's `def` line; never the CUDA file that was not made.
* **Explained** (issue 39): TileLang's message, then one line on what such an error usually
  means and where to look (`--trace terminal`).
* **Recorded** (issue 39): `lower --dump-dir` writes a record in place of the variant's CUDA
  (`<kernel>_<arch>_s<N>.cu`, a comment block with the failure as JSON), so that `check` on the
  dump folder reports `lowering-failed` at the same Python line, with exit 1, as `lower` does.
  `check --ignore lowering-failed` opts out.  The record is a `.cu` file so that the walk, the
  result cache and every format take it like any other kernel file; `pipelint_check_file`
  (registered with the built-in formats) reads it.
"""
from __future__ import annotations

import ast
import json
import os
import re
from typing import Any

from .. import hookimpl
from ..findings import Finding, Location, Severity

RULE = "lowering-failed"
RECORD_MARK = "// pipelint-lowering-failed: "
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_ARROW = re.compile(r"-->\s*(.+?):(\d+)(?::\d+)?\s*$", re.MULTILINE)

# (pattern over "kind: error", what it usually means); the first that matches is said
MEANINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), m) for p, m in (
    (r"^timeout:", "TileLang did not finish: a pass loops or blows up, often layout inference or unrolling "
                   "over a large tile; `--trace terminal` shows the last pass that ran"),
    (r"^crash:", "the compiler died in native code (a failed assertion or a segfault inside a TVM/TileLang "
                 "pass), usually on a shape or layout it does not support for this target; `--trace terminal` "
                 "shows the pass it was in"),
    (r"^import:", "the file raises when it is imported, before any kernel is built: fix that Python error first"),
    (r"missing \d+ required (positional|keyword)", "the factory has parameters without defaults: give each one "
                                                   "with `--param NAME=VALUE`"),
    (r"unexpected keyword argument", "a `--param` names a parameter the factory does not take"),
    (r"layout", "TileLang could not infer or fit a layout: a fragment's or buffer's shape does not match the "
                "threads or the MMA's shape (check the block sizes and `threads`); `--trace terminal` names the "
                "pass"),
    (r"(InternalError|Check failed)", "an internal check of a TileLang pass failed: the kernel combines a "
                                      "shape, layout, num_stages or target the pass does not handle; `--trace "
                                      "terminal` names the pass, and the way out is another tile shape or "
                                      "num_stages, or a fix in TileLang"),
    (r"ValueError: \(\d+(, ?\d+)*\)", "a shape TileLang could not map: usually a tile size that does not divide "
                                      "the threads or the MMA's shape (check block_M/block_N/block_K and "
                                      "`threads`)"),
    (r"(shared memory|smem)", "the variant needs more shared memory than the target allows: lower num_stages "
                              "or the tile sizes"),
))
FALLBACK = ("TileLang rejected this variant; `pipelint lower ... --trace terminal` prints TileLang's IR after "
            "each pass, so the last one shown is the pass that failed")


def meaning(kind: str | None, error: str | None) -> str:
    """One line on what a lowering error of this kind usually means, and where to look."""
    text = f"{kind or 'lower'}: {error or ''}"
    for pattern, said in MEANINGS:
        if pattern.search(text):
            return said
    return FALLBACK


def def_line(path: str, name: str | None) -> int:
    """The line of `def name` in `path` (the first function when no name is given), else 1."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return 1
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for func in funcs:
        if func.name == name:
            return func.lineno
    for stmt in tree.body:          # `kernel = make_kernel(...)`: the assignment's line
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return stmt.lineno
    return funcs[0].lineno if funcs and name is None else 1


def named_line(path: str, *texts: str | None) -> int | None:
    """The line of `path` a traceback or diagnostic names last (the deepest frame of the user's
    own code), or None."""
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    found = None
    for text in texts:
        if not text:
            continue
        for m in [*_FRAME.finditer(text), *_ARROW.finditer(text)]:
            try:
                same = os.path.realpath(m.group(1).strip()) == target
            except (OSError, ValueError):
                same = False
            if same:
                found = int(m.group(2))
    return found


def failure_finding(py_path: str, kernel: str | None, arch: str, num_stages: int, error: str | None,
                    kind: str | None, detail: str | None = None, related: tuple[Location, ...] = (),
                    line: int | None = None, command: str = "") -> Finding:
    """`lowering-failed` at the Python line (`line`, else the one the message names, else the
    kernel's `def`), its message TileLang's with what it usually means."""
    at = line or named_line(py_path, error, detail) or def_line(py_path, kernel)
    how = meaning(kind, error)
    message = f"{arch} num_stages={num_stages}: TileLang cannot lower {kernel or 'the kernel'}: {error or kind}"
    where = command or f"pipelint lower {py_path}{':' + kernel if kernel else ''} --num-stages {num_stages} " \
                       f"--arch {arch} --trace terminal"
    return Finding(RULE, Severity.ERROR, f"{message}. {how[0].upper()}{how[1:]}", Location(py_path, at, 1),
                   related, kernel=kernel, help=f"`{where}` shows the pass that failed")


# ---------------------------------------------------------------- the record in a dump folder
def record_text(py_rel: str, kernel: str | None, arch: str, num_stages: int, error: str | None,
                kind: str | None, line: int) -> str:
    """The `.cu` a failed variant leaves in the dump folder: comments only (no kernel), the
    failure as JSON on the marked line; `py_rel` is the kernel file relative to the folder."""
    doc = {"file": py_rel, "kernel": kernel, "arch": arch, "num_stages": num_stages, "error": error,
           "kind": kind, "line": line}
    first = (error or kind or "").split("\n")[0]
    return ("// pipelint: TileLang could not lower this variant; no CUDA was generated.\n"
            f"// {first}\n"
            "// `pipelint check` reports it as lowering-failed at the kernel's Python line\n"
            "// (`--ignore lowering-failed` to accept it).  A later `pipelint lower` replaces this file.\n"
            f"{RECORD_MARK}{json.dumps(doc, sort_keys=True)}\n"
            "// pipelint: ignore-file[no-kernel]\n")


def read_record(source: str) -> dict[str, Any] | None:
    """The failure a record holds, or None when `source` is not one."""
    for line in source.split("\n")[:8]:
        if line.startswith(RECORD_MARK):
            try:
                doc = json.loads(line[len(RECORD_MARK):])
            except ValueError:
                return None
            return doc if isinstance(doc, dict) else None
    return None


def finding_from_record(path: str, source: str) -> Finding | None:
    """The `lowering-failed` finding a record in `path` stands for, located at the kernel's
    Python line (the record's path is relative to its folder)."""
    doc = read_record(source)
    if doc is None:
        return None
    rel = doc.get("file")
    line = doc.get("line")
    stages = doc.get("num_stages")
    if not isinstance(rel, str) or not isinstance(line, int) or not isinstance(stages, int):
        return None
    py = os.path.normpath(os.path.join(os.path.dirname(path), rel)) if not os.path.isabs(rel) else rel
    full = os.path.abspath(py)
    try:
        near = os.path.relpath(full)
    except ValueError:          # another drive
        near = full
    # as `lower` names it: relative to the current folder when it lies under it, else absolute
    py = full if near == os.pardir or near.startswith(os.pardir + os.sep) else near
    kernel = doc.get("kernel") if isinstance(doc.get("kernel"), str) else None
    arch = str(doc.get("arch"))
    error = doc.get("error") if isinstance(doc.get("error"), str) else None
    kind = doc.get("kind") if isinstance(doc.get("kind"), str) else None
    return failure_finding(py, kernel, arch, stages, error, kind, line=max(1, line),
                           related=(Location(path, 5, 1, message="recorded by `pipelint lower`"),))


@hookimpl
def pipelint_check_file(parsed: Any, path: str) -> list[Finding]:
    """A record of a failed lowering is a `lowering-failed` error at the kernel's Python line."""
    source = getattr(parsed, "source", "") or ""
    if RECORD_MARK not in source[:4096]:
        return []
    f = finding_from_record(path, source)
    return [f] if f is not None else []
