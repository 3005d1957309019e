"""The shared-memory protocol of TileLang's own device templates, read from the installed headers.

A call such as `tl::AllReduce<tl::SumOp, 128, 1, 0, tl::NamedBarrier<128>>::run(x, red_buf)`
hands a shared pointer to code that is not in the kernel text.  Treated as an unknown call it
"may read or write" the whole buffer and every pair through it is undecided.  Its body is
fixed, though (tilelang 0.1.15, `src/tl_templates/cuda/reduce.h`, `AllReduce::
butterfly_reduce_scalar` / `butterfly_reduce_batch`): for each butterfly level whose `offset =
threads / 2^k` is at least 32 it runs

    Barrier::sync<1>();                      // bar.sync 1, N   (NamedBarrier<N>) | __syncthreads()
    red_buf[(t - thread_offset) + i * workspace_stride] = x[i];          // i < batch_size
    Barrier::sync<2>();                      // bar.sync 2, N
    x[i] = op(x[i], red_buf[((t - thread_offset) ^ offset) + i * workspace_stride]);

and levels below 32 are warp shuffles (registers only); it stops after the level whose offset
equals `scale`.  `protocol` returns those steps for a call, with the index expressions built as
AST nodes at the call's position, so the kernel model walks them exactly as it walks the
kernel's own statements (per-thread footprints, named barriers by id and count).

The scans (`src/tl_templates/cuda/scan.h`: `CumSum1D/2D`, `CumMax1D/2D<threads[, Axis],
reverse>::run(src, dst, ...)`) are warp-local: each warp scans whole lines with shuffles, so
each thread reads `src` and writes `dst` at its own positions, with no barrier.  Which lines a
warp takes comes from the *raw* `threadIdx.x` (`item = threadIdx.x / 32`, `lane = threadIdx.x %
32`), not from the caller's thread range: in a warp-specialised consumer (threads 128-255 of a
`CumSum2D<128, ...>`) the rows of the first warps are never scanned, and the model says so
exactly because it uses the same expressions.  Their sizes must be constants; the line loops
are unrolled (`MAX_SCAN_STEPS`).

Only what the header does is modelled; a template that touches shared memory and is not here
stays an unknown call, and its note names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..cuda import ast as A
from .evaluate import evaluate

_ALL_REDUCE = re.compile(
    r"tl::AllReduce<\s*(?P<op>[\w:]+)\s*,\s*(?P<threads>\d+)\s*,\s*(?P<scale>\d+)"
    r"(?:\s*,\s*(?P<offset>\d+))?"
    r"(?:\s*,\s*(?P<barrier>tl::NamedBarrier<\s*(?P<count>\d+)\s*>|tl::SyncThreadsBarrier))?"
    r"(?:\s*,\s*(?P<batch>\d+))?(?:\s*,\s*(?P<stride>\d+))?\s*>::(?P<method>run|run_batch)")
_SCAN = re.compile(
    r"tl::Cum(?:Sum|Max)(?P<dims>[12])D<\s*(?P<threads>\d+)\s*(?:,\s*(?P<axis>[01])\s*)?"
    r"(?:,\s*(?P<reverse>true|false)\s*)?>::run")
WARP = 32
MAX_SCAN_STEPS = 4096     # unrolled line steps of one scan call; more: an unknown call


@dataclass(frozen=True)
class Sync:
    """A barrier of the template: `bar.sync phase, count` (count None: `__syncthreads()`)."""

    phase: int
    count: int | None


@dataclass(frozen=True)
class Access:
    """An access of each calling thread to element `index` (relative to the pointer argument
    `pointer`, the protocol's own when None), made only where every condition of `guards` holds."""

    access: str                     # "read" | "write"
    index: A.Expr
    pointer: int | None = None
    guards: tuple[A.Expr, ...] = ()


@dataclass(frozen=True)
class Protocol:
    """What a template call does to its shared pointer argument `pointer` (argument position)."""

    name: str
    pointer: int
    steps: tuple[Sync | Access, ...]


_MEMO: dict[int, tuple[A.Call, Protocol | None]] = {}


def protocol(call: A.Call) -> Protocol | None:
    """The steps of a modelled template call, or None (not a modelled template).  Built once per
    call node: its index and guard nodes are then the same objects at every visit (every
    simulated iteration, every trip scenario), so the questions asked about them are cached by
    node identity (`model.threads`) instead of re-asked per visit (a scan in a pipelined loop
    asked one statement pair 64 000 times)."""
    found = _MEMO.get(id(call))
    if found is None or found[0] is not call:
        if len(_MEMO) > 4096:
            _MEMO.clear()
        found = _MEMO[id(call)] = (call, _protocol(call))
    return found[1]


def _protocol(call: A.Call) -> Protocol | None:
    scan = _SCAN.fullmatch(call.name)
    if scan is not None:
        return _scan(call, scan)
    m = _ALL_REDUCE.fullmatch(call.name)
    return _all_reduce(call, m) if m is not None else None


def _all_reduce(call: A.Call, m: re.Match) -> Protocol | None:
    """`AllReduce::run` / `run_batch`: the butterfly levels of at least a warp (module docstring)."""
    threads, scale = int(m["threads"]), int(m["scale"])
    offset = int(m["offset"] or 0)
    count = int(m["count"]) if m["count"] else None
    batch = int(m["batch"] or 1)
    stride = int(m["stride"] or 0)
    pointer = 1
    if threads <= 0 or scale <= 0 or threads % scale:
        return None
    span = call.span
    e = _Exprs(span)
    tid = e.op(e.tid, "-", e.num(offset))
    steps: list[Sync | Access] = []
    while threads != scale:
        half = threads // 2
        if half >= WARP:
            steps.append(Sync(1, count))
            for i in range(batch):
                steps.append(Access("write", _plus(tid, i * stride, span)))
            steps.append(Sync(2, count))
            for i in range(batch):
                partner = e.op(tid, "^", e.num(half))
                steps.append(Access("read", _plus(partner, i * stride, span)))
        if half == scale or half == 0:
            break
        threads = half
    return Protocol(call.name, pointer, tuple(steps))


def _scan(call: A.Call, m: re.Match) -> Protocol | None:
    """`InclusiveScan1D/2D::run` as the header runs it (see the module docstring): per line
    and segment of 32, the thread at `lane` reads `src[line + idx * src_stride]` and writes
    `dst[line + idx * dst_stride]` where `idx = seg * 32 + lane < extent`."""
    sizes = [evaluate(a, {}) for a in call.args[2:]]
    two = m["dims"] == "2"
    threads = int(m["threads"])
    if len(sizes) != (4 if two else 1) or None in sizes or threads not in (32, 64, 128, 256, 512, 1024):
        return None
    e = _Exprs(call.span)
    if two:
        outer, extent, line_step, elem_step = _lines_2d(e, [int(v) for v in sizes], m["axis"] == "1",  # type: ignore[arg-type]
                                                        threads // WARP)
    else:
        extent = int(sizes[0])                                          # type: ignore[arg-type]
        line_step, elem_step = (0, 0), (1, 1)
        outer = [(e.num(0), e.op(e.tid, "<", e.num(WARP)))] if extent > 0 else []
    segments = (extent + WARP - 1) // WARP
    if len(outer) * segments * 2 > MAX_SCAN_STEPS:
        return None
    steps: list[Sync | Access] = []
    for line, line_guard in outer:
        for seg in range(segments):
            idx = e.op(e.num(seg * WARP), "+", e.lane)
            guards = (line_guard, e.op(idx, "<", e.num(extent)))
            for pointer, access in ((0, "read"), (1, "write")):
                at = e.op(e.op(line, "*", e.num(line_step[pointer])), "+", e.op(idx, "*", e.num(elem_step[pointer])))
                steps.append(Access(access, at, pointer, guards))
    return Protocol(call.name, 0, tuple(steps))


def _lines_2d(e: _Exprs, sizes: list[int], along_rows: bool, tile: int) -> tuple[list, int, tuple, tuple]:
    """`InclusiveScan2D`'s lines: (each warp's line expression and its guard per block of `tile`
    lines, the line length, the line strides of src and dst, the element strides)."""
    h, w, src_stride, dst_stride = sizes
    lines, extent = (h, w) if along_rows else (w, h)
    strides = (src_stride, dst_stride)
    line_step, elem_step = (strides, (1, 1)) if along_rows else ((1, 1), strides)
    blocks = (lines + tile - 1) // tile if lines > 0 and extent > 0 else 0
    outer = []
    for b in range(blocks):
        line = e.op(e.num(b * tile), "+", e.item)
        outer.append((line, e.op(line, "<", e.num(lines))))
    return outer, extent, line_step, elem_step


class _Exprs:
    """AST nodes at a call's position: numbers, binary operations, the header's thread terms
    (`item = threadIdx.x / 32`, `lane = threadIdx.x % 32`, from the raw thread index)."""

    def __init__(self, span: A.Span) -> None:
        self.span = span
        self.tid = A.Member(A.Name("threadIdx", span), "x", False, span)
        self.item = self.op(self.tid, "/", self.num(WARP))
        self.lane = self.op(self.tid, "%", self.num(WARP))

    def num(self, v: int) -> A.Expr:
        return A.Number(str(v), self.span)

    def op(self, a: A.Expr, o: str, b: A.Expr) -> A.Expr:
        return A.Binary(o, a, b, self.span)


def _plus(expr: A.Expr, k: int, span: A.Span) -> A.Expr:
    return expr if k == 0 else A.Binary("+", expr, A.Number(str(k), span), span)


def modelled(name: str) -> bool:
    """Whether calls of this name are modelled here (for the unknown-call note)."""
    return _ALL_REDUCE.fullmatch(name) is not None or _SCAN.fullmatch(name) is not None
