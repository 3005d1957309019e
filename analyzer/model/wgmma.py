"""The shared-memory bytes a wgmma reads, from its matrix descriptors (PTX ISA, "Matrix Descriptor
Format" and "Shared Memory Matrix Layout" of `wgmma.mma_async`).

A `wgmma.mma_async` names its shared operands by 64-bit descriptors, not by addresses: a start
address, a layout (no swizzle, or a 32/64/128-byte swizzle), a leading and a stride byte offset.
TileLang builds them with `tl::initialize_wgmma_descriptor<layout, LBO, SBO>(desc, &buf[i])`
(LBO and SBO in 16-byte units, as the descriptor's bit fields hold them), moves them with
`tl::increase_descriptor_offset(desc, bytes)` and adds a per-instruction offset at the call,
`tl::wgmma_ss<A, B, C, M, N, K, tnspA, tnspB, ...>(desc_a + (off >> 4), desc_b + ..., ...)`.

Without this module a wgmma read "somewhere in the buffer": a race between every thread's
stores of a tile and a warp group's wgmma over it could not be decided (issue 31's warp-group
barrier race).  Here the bytes are computed exactly, in 16-byte units (a swizzle permutes whole
16-byte chunks within a 128-byte row, so chunks are the exact grain), for every value of the
loop variables the operand's offset depends on:

* K-major (`tnsp` false), swizzle width W: row r (of M for A, of N for B) at
  `(r % 8) * W + (r // 8) * SBO`, its K bytes (`K * sizeof(elem)`, 32 for every dtype) contiguous;
  without swizzle the rows of a core matrix are 16 bytes apart and the two 16-byte halves of K
  are LBO apart;
* MN-major (`tnsp` true): the MN bytes in W-byte atoms LBO apart, K row k at `(k % 8) * W +
  (k // 8) * SBO`; without swizzle 16-byte MN chunks SBO apart and K groups of 8 LBO apart;
* the swizzle XORs address bits [4, 4 + log2(W / 16)) with bits [7, ...) of the absolute
  shared address (buffers are 1024-byte aligned for it).

The result is the union as sorted disjoint byte intervals; a footprint with more than one
interval, or an offset that does not evaluate, is not given (the read stays "the slot or the
buffer", as before).
"""
from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

SWIZZLE_BYTES = {1: 128, 2: 64, 3: 32}       # the descriptor's layout_type on sm_90 (0: interleave)
ELEM_BYTES = {"kFloat16": 2, "kBFloat16": 2, "kFloat32": 4, "kTensorFloat32": 4, "kFloat8_e4m3": 1,
              "kFloat8_e5m2": 1, "kInt8": 1, "kUInt8": 1, "kInt32": 4}
MAX_POINTS = 4096          # values of the offset's loop variables combined; beyond: not given
_CALL = re.compile(r"tl::wgmma_(ss|rs|sp_ss|sp_rs)$")


@dataclass(frozen=True, slots=True)
class Descriptor:
    """One descriptor as its init and offset calls left it: the buffer, the byte offset into it,
    the layout type and the leading/stride byte offsets (16-byte units)."""

    buffer: str
    offset: int
    layout: int
    lbo: int
    sbo: int


@dataclass(frozen=True, slots=True)
class MmaShape:
    """`wgmma_ss<A, B, C, M, N, K, tnspA, tnspB, ...>`'s template arguments that decide footprints."""

    m: int
    n: int
    k: int
    a_bytes: int
    b_bytes: int
    tnsp_a: bool
    tnsp_b: bool
    a_in_smem: bool          # `wgmma_ss`: A from shared memory; `wgmma_rs`: A from registers


def mma_shape(name: str, template_args: tuple[str, ...] | list[str]) -> MmaShape | None:
    """The shape of a `tl::wgmma_*` call, or None (tcgen05, a form not known here)."""
    m = _CALL.match(name)
    if m is None or len(template_args) < 8:
        return None
    a, b = (ELEM_BYTES.get(t.strip().rsplit("::", 1)[-1]) for t in template_args[:2])
    try:
        mm, nn, kk = (int(t) for t in template_args[3:6])
    except ValueError:
        return None
    flags = [t.strip() for t in template_args[6:8]]
    if a is None or b is None or any(f not in ("true", "false") for f in flags):
        return None
    return MmaShape(mm, nn, kk, a, b, flags[0] == "true", flags[1] == "true", m.group(1) in ("ss", "sp_ss"))


@functools.lru_cache(maxsize=4096)
def operand_chunks(desc: Descriptor, start: int, rows: int, k: int, elem: int, mn_major: bool,
                   base: int = 0) -> frozenset[int] | None:
    """The 16-byte chunks (byte offsets into the buffer) one instruction's operand reads, whose
    descriptor starts `start` bytes into the buffer; `base`: the buffer's offset in shared memory
    (the swizzle acts on absolute addresses).  None for a layout this does not know."""
    kbytes = k * elem
    if kbytes % 16 or (rows * elem) % 16 and mn_major:
        return None
    if desc.layout == 0:
        width = 16
        logical = _interleaved(desc, rows, k, elem, mn_major)
    elif desc.layout in SWIZZLE_BYTES:
        width = SWIZZLE_BYTES[desc.layout]
        if not mn_major and kbytes > width:
            return None
        logical = _swizzled(desc, width, rows, k, elem, mn_major)
    else:
        return None
    out: set[int] = set()
    mask = width // 16 - 1
    for rel in logical:
        a = base + start + rel
        if mask:
            a ^= ((a >> 7) & mask) << 4
        out.add((a - base) // 16 * 16)
    return frozenset(out)


def _interleaved(desc: Descriptor, rows: int, k: int, elem: int, mn_major: bool) -> list[int]:
    """The operand's chunk offsets (from its start) in the interleaved layout (no swizzle)."""
    lbo, sbo = desc.lbo * 16, desc.sbo * 16
    if mn_major:
        return [(x // 16) * sbo + (kk % 8) * 16 + (kk // 8) * lbo
                for x in range(0, rows * elem, 16) for kk in range(k)]
    return [(r % 8) * 16 + (r // 8) * sbo + (kb // 16) * lbo
            for r in range(rows) for kb in range(0, k * elem, 16)]


def _swizzled(desc: Descriptor, width: int, rows: int, k: int, elem: int, mn_major: bool) -> list[int]:
    """The operand's chunk offsets (from its start, before the XOR) in a `width`-byte swizzle."""
    lbo, sbo = desc.lbo * 16, desc.sbo * 16
    if mn_major:
        return [(x % width) + (x // width) * lbo + (kk % 8) * width + (kk // 8) * sbo
                for x in range(0, rows * elem, 16) for kk in range(k)]
    return [(r % 8) * width + (r // 8) * sbo + kb for r in range(rows) for kb in range(0, k * elem, 16)]


def merged(chunks: set[int] | frozenset[int]) -> list[tuple[int, int]]:
    """16-byte chunks as sorted disjoint intervals [lo, hi)."""
    out: list[tuple[int, int]] = []
    for c in sorted(chunks):
        if out and out[-1][1] >= c:
            out[-1] = (out[-1][0], max(out[-1][1], c + 16))
        else:
            out.append((c, c + 16))
    return out


def footprint(desc: Descriptor, starts: list[int], rows: int, k: int, elem: int, mn_major: bool,
              base: int = 0) -> tuple[int, int] | None:
    """The bytes [lo, hi) (into the buffer) that the instructions at `starts` read together, when
    they are one interval; None otherwise (a strided footprint is not claimed as an interval)."""
    chunks: set[int] = set()
    for s in dict.fromkeys(starts):
        found = operand_chunks(desc, s, rows, k, elem, mn_major, base)
        if found is None:
            return None
        chunks |= found
    spans = merged(chunks)
    return spans[0] if len(spans) == 1 and spans[0][0] >= 0 else None


def points(ranges: list[tuple[str, tuple[int, int]]]) -> list[dict[str, int]] | None:
    """Every combination of the loop variables' values (inclusive ranges), or None past MAX_POINTS."""
    total = 1
    for _, (lo, hi) in ranges:
        total *= max(0, hi - lo + 1)
    if total > MAX_POINTS:
        return None
    names = [n for n, _ in ranges]
    return [dict(zip(names, combo)) for combo in
            itertools.product(*(range(lo, hi + 1) for _, (lo, hi) in ranges))]


def shares_warpgroup(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two roles' thread ranges [lo, hi) have a warp group (128 threads) in common.

    A wgmma is one operation of its whole warp group: when any of its threads passes the
    `warpgroup_wait` that retires it, its shared-memory reads are complete for all of them.  So a
    read retired in one role of a warp group is ordered before what another role of the same warp
    group does after its own wait; only other warp groups need a barrier or an mbarrier phase."""
    return max(a[0] // 128, b[0] // 128) <= min((a[1] - 1) // 128, (b[1] - 1) // 128)


def warpgroups(threads: int) -> int:
    """The warp groups (bit g: threads 128g .. 128g+127) a thread set (bitmask) touches."""
    out, g = 0, 0
    while threads >> (128 * g):
        if (threads >> (128 * g)) & ((1 << 128) - 1):
            out |= 1 << g
        g += 1
    return out


def retired_before(read_threads: int, writer_threads: int) -> bool:
    """A retired wgmma read and a later write of the same role: the writer's threads passed the
    wait that completed the reads when each lies in a warp group of the read's."""
    w = warpgroups(writer_threads)
    return w != 0 and w & ~warpgroups(read_threads) == 0
