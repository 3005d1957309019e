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

Only what the header does is modelled; a template that touches shared memory and is not here
stays an unknown call, and its note names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..cuda import ast as A

_ALL_REDUCE = re.compile(
    r"tl::AllReduce<\s*(?P<op>[\w:]+)\s*,\s*(?P<threads>\d+)\s*,\s*(?P<scale>\d+)"
    r"(?:\s*,\s*(?P<offset>\d+))?"
    r"(?:\s*,\s*(?P<barrier>tl::NamedBarrier<\s*(?P<count>\d+)\s*>|tl::SyncThreadsBarrier))?"
    r"(?:\s*,\s*(?P<batch>\d+))?(?:\s*,\s*(?P<stride>\d+))?\s*>::(?P<method>run|run_batch)")
WARP = 32


@dataclass(frozen=True)
class Sync:
    """A barrier of the template: `bar.sync phase, count` (count None: `__syncthreads()`)."""

    phase: int
    count: int | None


@dataclass(frozen=True)
class Access:
    """An access of each calling thread to element `index` (relative to the pointer argument)."""

    access: str                     # "read" | "write"
    index: A.Expr


@dataclass(frozen=True)
class Protocol:
    """What a template call does to its shared pointer argument `pointer` (argument position)."""

    name: str
    pointer: int
    steps: tuple[Sync | Access, ...]


def protocol(call: A.Call) -> Protocol | None:
    """The steps of a modelled template call, or None (not a modelled template)."""
    m = _ALL_REDUCE.fullmatch(call.name)
    if m is None:
        return None
    threads, scale = int(m["threads"]), int(m["scale"])
    offset = int(m["offset"] or 0)
    count = int(m["count"]) if m["count"] else None
    batch = int(m["batch"] or 1)
    stride = int(m["stride"] or 0)
    pointer = 1
    if threads <= 0 or scale <= 0 or threads % scale:
        return None
    span = call.span
    tid = A.Binary("-", A.Member(A.Name("threadIdx", span), "x", False, span), A.Number(str(offset), span), span)
    steps: list[Sync | Access] = []
    while threads != scale:
        half = threads // 2
        if half >= WARP:
            steps.append(Sync(1, count))
            for i in range(batch):
                steps.append(Access("write", _plus(tid, i * stride, span)))
            steps.append(Sync(2, count))
            for i in range(batch):
                partner = A.Binary("^", tid, A.Number(str(half), span), span)
                steps.append(Access("read", _plus(partner, i * stride, span)))
        if half == scale or half == 0:
            break
        threads = half
    return Protocol(call.name, pointer, tuple(steps))


def _plus(expr: A.Expr, k: int, span: A.Span) -> A.Expr:
    return expr if k == 0 else A.Binary("+", expr, A.Number(str(k), span), span)


def modelled(name: str) -> bool:
    """Whether calls of this name are modelled here (for the unknown-call note)."""
    return _ALL_REDUCE.fullmatch(name) is not None
