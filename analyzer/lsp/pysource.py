"""What a TileLang Python buffer says, read with `ast` and `tokenize` (nothing is executed).

Kernels (top-level functions and their line ranges: a lowering failure is reported on the
factory's `def` line), `T.Pipelined` loops and `T.alloc_shared` buffers (where hovers and
inlay hints go), `# pipelint: ignore[RULE]` comments, and a digest of the code that ignores
comments, so that adding a suppression does not lower the kernel again.
"""
from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any

from ..lowering.imports import local_imports as local_imports  # re-exported (it lives with the lowering)
from ..suppress import PYTHON_SUPPRESS


@dataclass(frozen=True)
class Span:
    """A call in the buffer: 1-based lines, 0-based columns in characters."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class PipelinedLoop:
    span: Span            # the `T.Pipelined(...)` call
    var: str | None       # the loop variable (`k`), matched with the planner's facts
    kernel: str | None    # the top-level function it is in
    num_stages: int | None = None   # num_stages=<literal> as written (None: an expression)


@dataclass(frozen=True)
class SharedAlloc:
    span: Span            # the `T.alloc_shared(...)` call
    name: str | None      # the variable it is assigned to (the CUDA buffer's name)
    kernel: str | None


@dataclass(frozen=True)
class BufferAlloc:
    """Any `T.alloc_shared/alloc_fragment/alloc_local(...)` call (inlay hints of its facts)."""

    span: Span
    name: str | None
    kernel: str | None
    call: str             # alloc_shared, alloc_fragment, alloc_local
    shape: ast.expr | None = None
    dtype: ast.expr | None = None


@dataclass(frozen=True)
class KernelLaunch:
    """A `T.Kernel(...)` call: its grid and threads arguments, unevaluated."""

    span: Span
    kernel: str | None
    grid: tuple[ast.expr, ...] = ()
    threads: ast.expr | None = None


@dataclass
class PySource:
    kernels: dict[str, tuple[int, int]] = field(default_factory=dict)   # name -> (def line, end line)
    loops: list[PipelinedLoop] = field(default_factory=list)
    allocs: list[SharedAlloc] = field(default_factory=list)
    suppressions: dict[int, set[str]] = field(default_factory=dict)
    uses_tilelang: bool = False
    syntax_error: tuple[int, str] | None = None
    buffers: list[BufferAlloc] = field(default_factory=list)
    launches: list[KernelLaunch] = field(default_factory=list)
    tree: ast.Module | None = None

    def kernel_at(self, line: int) -> str | None:
        return next((n for n, (lo, hi) in self.kernels.items() if lo <= line <= hi), None)


_TILELANG = re.compile(r"^\s*(?:import|from)\s+tilelang\b", re.M)


def scan(text: str) -> PySource:
    """What the buffer says: kernels, loops, allocations, launches and suppressions (a syntax
    error instead of the rest while it does not parse)."""
    src = PySource(uses_tilelang=bool(_TILELANG.search(text)), suppressions=suppressions(text))
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        src.syntax_error = (exc.lineno or 1, exc.msg)
        return src
    except (ValueError, RecursionError, MemoryError):
        src.syntax_error = (1, "the file cannot be parsed")
        return src
    src.tree = tree
    _top_level(src, tree)
    lines = text.split("\n")
    for n in ast.walk(tree):
        visit = _VISIT.get(type(n))
        if visit is not None:
            visit(src, n, lines)
    for found in (src.loops, src.allocs, src.buffers, src.launches):
        found.sort(key=lambda a: (a.span.line, a.span.col))
    return src


def _top_level(src: PySource, tree: ast.Module) -> None:
    """The kernels' line ranges: top-level functions, and `kernel = matmul(...)` at module
    level (the line of the assignment)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            src.kernels[node.name] = (node.lineno, node.end_lineno or node.lineno)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call):
            src.kernels.setdefault(node.targets[0].id, (node.lineno, node.end_lineno or node.lineno))


def _on_for(src: PySource, n: ast.For, lines: list[str]) -> None:
    """`for k in T.Pipelined(..., num_stages=3)`: the loop, its variable, its literal stages."""
    if not (isinstance(n.iter, ast.Call) and _is_call(n.iter, "Pipelined")):
        return
    var = n.target.id if isinstance(n.target, ast.Name) else None
    stages = next((k.value.value for k in n.iter.keywords if k.arg == "num_stages"
                   and isinstance(k.value, ast.Constant) and isinstance(k.value.value, int)), None)
    src.loops.append(PipelinedLoop(_span(n.iter, lines), var, src.kernel_at(n.lineno), stages))


def _on_assign(src: PySource, n: ast.Assign, lines: list[str]) -> None:
    """`A_shared = T.alloc_shared(...)` (and the fragment and local allocations)."""
    if not isinstance(n.value, ast.Call):
        return
    call = next((c for c in ALLOCS if _is_call(n.value, c)), None)
    if call is None:
        return
    target = n.targets[0]
    name = target.id if isinstance(target, ast.Name) else None
    if call == "alloc_shared":
        src.allocs.append(SharedAlloc(_span(n.value, lines), name, src.kernel_at(n.lineno)))
    src.buffers.append(BufferAlloc(_span(n.value, lines), name, src.kernel_at(n.lineno), call,
                                   _arg(n.value, 0, "shape"), _arg(n.value, 1, "dtype")))


def _on_with(src: PySource, n: ast.With, lines: list[str]) -> None:
    """`with T.Kernel(grid..., threads=...)`: the launch, unevaluated."""
    for item in n.items:
        launch = item.context_expr
        if isinstance(launch, ast.Call) and _is_call(launch, "Kernel"):
            grid = tuple(a for a in launch.args if not isinstance(a, ast.Starred))
            threads = next((k.value for k in launch.keywords if k.arg == "threads"), None)
            src.launches.append(KernelLaunch(_span(launch, lines), src.kernel_at(n.lineno), grid, threads))


# What `scan` reads from each kind of node (one `ast.walk` over the tree).
_VISIT: dict[type, Any] = {ast.For: _on_for, ast.Assign: _on_assign, ast.With: _on_with}


ALLOCS = ("alloc_shared", "alloc_fragment", "alloc_local")


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    if index < len(call.args) and not isinstance(call.args[index], ast.Starred):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_call(node: ast.AST, attr: str) -> bool:
    """`T.<attr>(...)` (or any `<x>.<attr>(...)`, or a bare `<attr>(...)`)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == attr) or (isinstance(func, ast.Name) and func.id == attr)


def _span(node: ast.AST, lines: list[str]) -> Span:
    """`ast` counts columns in UTF-8 bytes; editors count characters."""
    line = getattr(node, "lineno", 1)
    end = getattr(node, "end_lineno", None) or line
    return Span(line, _chars(lines, line, getattr(node, "col_offset", 0)), end,
                _chars(lines, end, getattr(node, "end_col_offset", None) or 0))


def _chars(lines: list[str], line: int, offset: int) -> int:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text.encode()[:offset].decode(errors="ignore"))


def suppressions(text: str) -> dict[int, set[str]]:
    """line -> rule ids of `# pipelint: ignore[RULE,...]` on it (the same syntax `check` reads)."""
    found: dict[int, set[str]] = {}
    if "pipelint" not in text:
        return found
    for n, line in enumerate(text.splitlines(), 1):
        m = PYTHON_SUPPRESS.search(line)
        if m:
            found[n] = {r.strip() for r in m.group(1).split(",") if r.strip()}
    return found


def code_digest(text: str) -> str:
    """A digest of what the lowering depends on: the code without comments or trailing blanks,
    line for line (line numbers stay: `#line` directives carry them)."""
    lines = text.split("\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                lines[row - 1] = lines[row - 1][:col]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return hashlib.sha256(text.encode()).hexdigest()
    return hashlib.sha256("\n".join(line.rstrip() for line in lines).encode()).hexdigest()
