"""What the editor shows beside the pipeline facts (issue 39), in pipelint's own terms.

* From the lowering (the worker's `buffers` and `launch` of each variant): every buffer's
  dtype, shape, scope and inferred layout, and the launch geometry (grid, threads, dynamic
  shared memory), as inlay hints after `T.Kernel(...)` and the `T.alloc_*` calls and as hover.
* Static, with no lowering (TileLang missing, or still lowering): the stage count a
  `T.Pipelined` is written with, each buffer's dtype, shape and bytes, and the grid and
  threads of `T.Kernel`, evaluated from literals, the module's constants and the factory's
  parameter defaults (`[tool.pipelint.lower] params` over them); what cannot be evaluated
  is left out.
* Notes: a kernel lowered only as written (no num_stages parameter), a file with no kernel.
* `explain`: one line on what a raw TileLang error usually means.
"""
from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from typing import Any

from .pysource import BufferAlloc, KernelLaunch, PySource

DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
               "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float8_e4m3": 1, "float8_e5m2": 1,
               "float8_e4m3fn": 1, "bool": 1}
SCOPES = {"shared.dyn": "shared", "shared": "shared", "local.fragment": "fragment", "local": "local",
          "shared.barrier": "barrier"}


# ------------------------------------------------------------------ static evaluation
_BINOPS: dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                            ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Div: operator.truediv}
_BIG = 1 << 62


class _Unknown(Exception):
    pass


def evaluate(node: ast.expr | None, env: dict[str, Any], depth: int = 0) -> Any:
    """The value of a small expression (numbers, strings, names in `env`, + - * // % /,
    tuples, `T.ceildiv`, `T.float16`-style dtypes); raises _Unknown for anything else.
    One evaluator per kind of node (`_EVALUATE`); `depth` bounds the recursion."""
    if node is None or depth > 40:
        raise _Unknown
    rule = _EVALUATE.get(type(node))
    if rule is None:
        raise _Unknown
    return rule(node, env, depth + 1)


def _constant(node: ast.Constant, env: dict[str, Any], depth: int) -> Any:
    if isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool):
        return node.value
    raise _Unknown


def _name(node: ast.Name, env: dict[str, Any], depth: int) -> Any:
    if node.id in env:
        return env[node.id]
    raise _Unknown


def _sequence(node: ast.Tuple | ast.List, env: dict[str, Any], depth: int) -> tuple:
    return tuple(evaluate(e, env, depth) for e in node.elts)


def _unary(node: ast.UnaryOp, env: dict[str, Any], depth: int) -> Any:
    if isinstance(node.op, ast.USub):
        return -_number(evaluate(node.operand, env, depth))
    raise _Unknown


def _binary(node: ast.BinOp, env: dict[str, Any], depth: int) -> Any:
    """+ - * // % / of two numbers; no division by zero, nothing beyond 2**62."""
    op = _BINOPS.get(type(node.op))
    if op is None:
        raise _Unknown
    a, b = _number(evaluate(node.left, env, depth)), _number(evaluate(node.right, env, depth))
    if isinstance(node.op, (ast.FloorDiv, ast.Mod, ast.Div)) and b == 0:
        raise _Unknown
    value = op(a, b)
    if abs(value) > _BIG:
        raise _Unknown
    return value


def _call(node: ast.Call, env: dict[str, Any], depth: int) -> Any:
    """`T.ceildiv(a, b)`, the one call evaluated."""
    if node.keywords or len(node.args) != 2 or _called(node) != "ceildiv":
        raise _Unknown
    a, b = (_number(evaluate(x, env, depth)) for x in node.args)
    if b == 0:
        raise _Unknown
    return -(-a // b)


def _attribute(node: ast.Attribute, env: dict[str, Any], depth: int) -> Any:
    if node.attr in DTYPE_BYTES:      # T.float16
        return node.attr
    raise _Unknown


_EVALUATE: dict[type, Any] = {ast.Constant: _constant, ast.Name: _name, ast.Tuple: _sequence, ast.List: _sequence,
                              ast.UnaryOp: _unary, ast.BinOp: _binary, ast.Call: _call, ast.Attribute: _attribute}


def _number(value: Any) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    raise _Unknown


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _try(node: ast.expr | None, env: dict[str, Any]) -> Any:
    try:
        return evaluate(node, env)
    except (_Unknown, ArithmeticError, TypeError, ValueError, RecursionError):
        return None


def environments(src: PySource, params: dict | None = None) -> dict[str, dict[str, Any]]:
    """Per top-level function: the names its kernel's expressions can use statically: the
    module's constants, then its parameters' defaults, then `params` (the `lower` table),
    then the simple assignments at the top of its body (`block_K = 32`)."""
    tree = src.tree
    if tree is None:
        return {}
    module: dict[str, Any] = {}
    _assigned(tree.body, module)
    out: dict[str, dict[str, Any]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env = {**module, **_defaults(node.args, module), **_plain(params)}
            _assigned(node.body, env)
            out[node.name] = env
    return out


def _assigned(body: list[ast.stmt], env: dict[str, Any]) -> None:
    """Add `name = <evaluable>` statements of `body` to `env`, in order (each may use the last)."""
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = _try(stmt.value, env)
            if value is not None:
                env[stmt.targets[0].id] = value


def _defaults(args: ast.arguments, module: dict[str, Any]) -> dict[str, Any]:
    """The parameters' evaluable defaults (positional and keyword-only), from module constants."""
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
             *zip(args.kwonlyargs, args.kw_defaults)]
    found = {}
    for arg, default in pairs:
        value = _try(default, module)
        if value is not None:
            found[arg.arg] = value
    return found


def _plain(params: dict | None) -> dict[str, Any]:
    """The `lower` table's params that are numbers or strings (those expressions can use)."""
    return {k: v for k, v in (params or {}).items() if isinstance(v, (int, float, str)) and not isinstance(v, bool)}


def _dims(shape: Any) -> tuple[int, ...] | None:
    if isinstance(shape, (int, float)) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, tuple) and shape and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                  for d in shape):
        return tuple(shape)
    return None


def times(dims: Any) -> str:
    return "×".join(str(d) for d in dims)


def kib(n: int) -> str:
    return f"{n / 1024:.1f}".removesuffix(".0") + " KB" if n >= 1024 else f"{n} B"


@dataclass(frozen=True)
class StaticBuffer:
    dtype: str | None
    dims: tuple[int, ...] | None

    @property
    def bytes(self) -> int | None:
        if self.dims is None or self.dtype not in DTYPE_BYTES:
            return None
        return math.prod(self.dims) * DTYPE_BYTES[self.dtype]

    def words(self) -> str:
        if self.dims is None:
            return ""
        parts = [self.dtype or "", times(self.dims)]
        text = " ".join(p for p in parts if p)
        return f"{text} = {kib(self.bytes)}" if self.bytes is not None else text


def static_buffer(buf: BufferAlloc, envs: dict[str, dict[str, Any]]) -> StaticBuffer:
    env = envs.get(buf.kernel or "", {})
    dtype = _try(buf.dtype, env)
    return StaticBuffer(dtype if isinstance(dtype, str) else None, _dims(_try(buf.shape, env)))


def static_launch(launch: KernelLaunch, envs: dict[str, dict[str, Any]]) -> tuple[tuple[int, ...] | None, int | None]:
    env = envs.get(launch.kernel or "", {})
    grid = _dims(tuple(_try(g, env) for g in launch.grid)) if launch.grid else None
    threads = _try(launch.threads, env)
    return grid, threads if isinstance(threads, int) and not isinstance(threads, bool) else None


def static_stages(src: PySource, envs: dict[str, dict[str, Any]], line: int) -> int | None:
    """The num_stages of the T.Pipelined call on `line`, as written (a literal or a name)."""
    tree = src.tree
    if tree is None:
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n, "lineno", 0) == line and _called(n) == "Pipelined":
            expr = next((k.value for k in n.keywords if k.arg == "num_stages"), None)
            if expr is None:
                return None
            value = _try(expr, envs.get(src.kernel_at(line) or "", {}))
            return value if isinstance(value, int) and not isinstance(value, bool) else None
    return None


def static_hints(src: PySource, params: dict | None, first: int, last: int) -> list[tuple[int, int, str]]:
    """Inlay hints that need no lowering (marked `as written`): the pipeline's stage count,
    each buffer's dtype, shape and bytes, the grid and threads."""
    envs = environments(src, params)
    hints = []
    for loop in src.loops:
        stages = static_stages(src, envs, loop.span.line)
        if stages is not None and first <= loop.span.end_line <= last:
            hints.append((loop.span.end_line, loop.span.end_col, f"{stages} stages (as written)"))
    for buf in src.buffers:
        words = static_buffer(buf, envs).words()
        if words and first <= buf.span.end_line <= last:
            hints.append((buf.span.end_line, buf.span.end_col, words))
    for launch in src.launches:
        grid, threads = static_launch(launch, envs)
        text = " · ".join(p for p in (f"grid {times(grid)}" if grid else "",
                                      f"{threads} threads" if threads else "") if p)
        if text and first <= launch.span.end_line <= last:
            hints.append((launch.span.end_line, launch.span.end_col, text))
    return sorted(hints)


def static_hover(src: PySource, params: dict | None, line: int, why: str) -> str | None:
    """Markdown for a line with a T.Pipelined, T.alloc_* or T.Kernel, from the source alone."""
    envs = environments(src, params)
    rows = []
    for loop in src.loops:
        if loop.span.line <= line <= loop.span.end_line:
            stages = static_stages(src, envs, loop.span.line)
            rows.append(f"`T.Pipelined` over `{loop.var or '?'}`: num_stages = {stages if stages is not None else '?'}"
                        " as written")
    for buf in src.buffers:
        if buf.span.line <= line <= buf.span.end_line:
            rows.append(f"`{buf.name or '?'}` ({buf.call}): {static_buffer(buf, envs).words() or '?'}")
    for launch in src.launches:
        if launch.span.line <= line <= launch.span.end_line:
            grid, threads = static_launch(launch, envs)
            rows.append(f"launch: grid {times(grid) if grid else '?'}, {threads or '?'} threads")
    if not rows:
        return None
    return "\n".join([f"**pipelint** · as written ({why})", "", *(f"- {r}" for r in rows)])


# ------------------------------------------------------------------ from the lowering
def _variants(lowered: dict | None, kernel: str | None) -> list[dict]:
    if not lowered or not lowered.get("ok"):
        return []
    kernels = lowered.get("kernels") or []
    mine = [k for k in kernels if k.get("name") == kernel] or (kernels if len(kernels) == 1 else [])
    return [v for k in mine for v in k.get("variants", []) if v.get("ok")]


def _label(v: dict) -> str:
    n = v.get("num_stages")
    return f"{v.get('arch')} s{n}" if n is not None else str(v.get("arch"))


def launch_words(v: dict) -> str:
    launch = v.get("launch") or {}
    grid, threads = launch.get("grid"), launch.get("threads")
    smem = launch.get("dyn_shared_memory_bytes")
    parts = [f"grid {times(_trimmed(grid))}" if grid else "",
             f"{math.prod(threads)} threads" if threads else "",
             f"{kib(smem)} smem" if smem else ""]
    return " · ".join(p for p in parts if p)


def _trimmed(dims: list) -> list:
    """[8, 8, 1] -> [8, 8]: the trailing dimensions of 1 a launch does not write."""
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return dims


def buffer_words(v: dict, name: str | None, long: bool = False, rank: int | None = None) -> str:
    """`float16 128×32 shared`: the buffer as lowered; `rank`: the dimensions it is written
    with (the pipeline adds one in front, its versions: the hint after it says how many)."""
    buf = (v.get("buffers") or {}).get(name or "")
    if not buf:
        return ""
    scope = SCOPES.get(buf.get("scope", ""), buf.get("scope", ""))
    shape = list(buf.get("shape") or [])
    if not long and rank and len(shape) == rank + 1:
        shape = shape[1:]
    text = f"{buf.get('dtype')} {times(shape)} {scope}".strip()
    if long and buf.get("layout"):
        text += f" · {buf['layout']}"
    elif buf.get("layout", "").startswith("Fragment") and "thread" in buf.get("layout", ""):
        text += " · " + buf["layout"].split("· ")[1].strip()
    return text


def _side_by_side(variants: list[dict], words: Any) -> str:
    shown: dict[str, str] = {}
    for v in variants:
        shown.setdefault(str(v.get("arch")), words(v))
    values = [t for t in shown.values() if t]
    if not values:
        return ""
    if len(set(shown.values())) == 1:
        return values[0]
    return " │ ".join(f"{arch}: {t or '-'}" for arch, t in shown.items())


def lowered_hints(src: PySource, lowered: dict | None, first: int, last: int) -> list[tuple[int, int, str]]:
    """After `T.Kernel(...)`: the launch per target; after `T.alloc_fragment/alloc_local`: the
    buffer's dtype, shape, scope; after `T.alloc_shared`: its dtype, shape and scope (the
    pipeline's versions and bytes are the hint `analysis` gives there: `merge_hints`)."""
    hints = []
    for launch in src.launches:
        label = _side_by_side(_variants(lowered, launch.kernel), launch_words)
        if label and first <= launch.span.end_line <= last:
            hints.append((launch.span.end_line, launch.span.end_col, label))
    for buf in src.buffers:
        rank = len(buf.shape.elts) if isinstance(buf.shape, (ast.Tuple, ast.List)) else None
        label = _side_by_side(_variants(lowered, buf.kernel), lambda v, b=buf, r=rank: buffer_words(v, b.name, rank=r))
        if label and first <= buf.span.end_line <= last:
            hints.append((buf.span.end_line, buf.span.end_col, label))
    return hints


def merge_hints(*groups: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """One label per position: the labels of the groups joined with ` · ` (first group first)."""
    at: dict[tuple[int, int], list[str]] = {}
    for group in groups:
        for line, col, label in group:
            said = at.setdefault((line, col), [])
            if label and label not in said:
                said.append(label)
    return sorted((line, col, " · ".join(labels)) for (line, col), labels in at.items() if labels)


def lowered_hover(src: PySource, lowered: dict | None, line: int) -> str | None:
    """Markdown of the lowering facts at `line`: a buffer's dtype, shape, scope and layout per
    variant; the launch per variant on the `T.Kernel` line (and on a `T.Pipelined` line)."""
    parts = [_buffer_table(buf, lowered) for buf in src.buffers if buf.span.line <= line <= buf.span.end_line]
    on_launch = [lc.kernel for lc in src.launches if lc.span.line <= line <= lc.span.end_line]
    on_loop = [lp.kernel for lp in src.loops if lp.span.line <= line <= lp.span.end_line]
    parts += [_launch_table(kernel, lowered) for kernel in dict.fromkeys(on_launch + on_loop)]
    return "\n\n".join(p for p in parts if p) or None


def _buffer_table(buf: BufferAlloc, lowered: dict | None) -> str:
    """One buffer as each variant lowered it (empty: no variant has it lowered)."""
    rows = [f"| {_label(v)} | {buffer_words(v, buf.name, long=True) or '–'} |" for v in _variants(lowered, buf.kernel)]
    return "\n".join([f"`{buf.name}` as lowered", "", "| variant | dtype, shape, scope, layout |", "|---|---|",
                      *rows]) if rows else ""


def _launch_table(kernel: str | None, lowered: dict | None) -> str:
    """A kernel's launch per variant (empty: no variant lowered)."""
    rows = [f"| {_label(v)} | {launch_words(v) or '–'} |" for v in _variants(lowered, kernel)]
    return "\n".join(["launch", "", "| variant | grid · threads · dynamic shared memory |", "|---|---|",
                      *rows]) if rows else ""


# ------------------------------------------------------------------ notes
@dataclass(frozen=True)
class Note:
    line: int
    message: str
    information: bool = False    # else a hint (the faintest severity)


def notes(src: PySource, lowered: dict | None) -> list[Note]:
    """A kernel factory lowered only as written because it has no num_stages parameter (the
    worker lowers it once per target, whatever `num-stages` the `lower` table asks for, as
    `pipelint lower` does), and a TileLang file in which no kernel was found."""
    if not lowered or not lowered.get("ok") or lowered.get("partial"):
        return []
    kernels = lowered.get("kernels") or []
    out = []
    if not kernels:
        out.append(Note(1, "pipelint found no kernel to lower in this file: it lowers @T.prim_func, "
                           "@tilelang.jit and @autotune objects, and public functions whose body builds one "
                           "(a T.prim_func or T.Kernel)", information=True))
    for k in kernels:
        if k.get("kind") in ("factory", "jit", "autotune") and not k.get("stage_param"):
            out.append(_as_written(src, k))
    return out


def _as_written(src: PySource, kernel: dict) -> Note:
    """The note on a kernel without a num_stages parameter, at its `def` line."""
    name = kernel.get("name", "")
    line = src.kernels.get(name, (1, 1))[0]
    written = _written_stages(src, kernel)
    shown = f" (num_stages={written} in its T.Pipelined)" if written is not None else ""
    return Note(line, f"{kernel.get('name')} takes no num_stages parameter: lowered as written{shown}, so only "
                      "that stage count was checked (a num_stages parameter lets [tool.pipelint.lower] "
                      "num-stages set others)")


def _written_stages(src: PySource, kernel: dict) -> int | None:
    """The stage count a kernel is written with: its T.Pipelined's literal, else the planner's."""
    written = next((lp.num_stages for lp in src.loops if lp.kernel == kernel.get("name") and lp.num_stages is not None),
                   None)
    if written is not None:
        return written
    return next((lp.get("tl_pipelined_num_stages") for v in kernel.get("variants", [])
                 for lp in v.get("pipelined_loops") or [] if lp.get("tl_pipelined_num_stages") is not None), None)


# ------------------------------------------------------------------ TileLang's errors, explained
_EXPLAINED: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.I), m) for p, m in [
    (r"shape check failed|ValueError: \(\d+, \d+\)|shape mismatch|mismatch.*shape",
     "usually: the shapes of a T.gemm's or T.copy's operands disagree (a tile allocated with other block_M/N/K "
     "than the operation uses); compare the T.alloc_* shapes with the T.gemm/T.copy lines"),
    (r"layout",
     "usually: LayoutInference cannot give a buffer one layout (a fragment used by operations that need "
     "different layouts, or a tile shape the instruction does not support)"),
    (r"shared memory|smem|exceed",
     "usually: the tiles and stages need more shared memory than the target has; lower num_stages or the tile "
     "sizes"),
    (r"missing \d+ required|required positional argument|unexpected keyword argument",
     "usually: the factory needs arguments the server does not pass: give them in [tool.pipelint.lower] params"),
    (r"not supported|unsupported|no .* for target|cannot be lowered",
     "usually: this combination (target arch, dtype, tile shape) is not supported by this TileLang version; "
     "try the other target"),
    (r"InternalError|Check failed",
     "usually: an internal check of TileLang failed on this kernel, most often an unsupported tile shape or "
     "dtype for the target"),
]]
TRACE_HINT = "`pipelint lower FILE --trace terminal` prints TileLang's passes up to the failure"


def explain(message: str) -> str:
    """One line on what a raw TileLang lowering error usually means, and where to look."""
    for pattern, meaning in _EXPLAINED:
        if pattern.search(message):
            return f"{meaning}; {TRACE_HINT}"
    return f"TileLang raised this while lowering the kernel; {TRACE_HINT}"
