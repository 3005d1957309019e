"""Shared memory as TileLang lays it out: buffers by byte range.

TileLang puts most shared buffers in one dynamic allocation and names them by
pointer aliases (`void* A_shared = ((void*)((char*)buf_dyn_shmem + 24576));`);
buffers with disjoint lifetimes share offsets, so identity is the byte range,
not the name.  Static `__shared__` arrays are their own spaces.  mbarriers are
found by declaration (`__shared__ uint64_t X_mem[N]; auto X =
reinterpret_cast<Barrier*>(X_mem);`), whatever X is called.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..cuda import ast as A
from .evaluate import evaluate
from .intrinsics import type_bytes


@dataclass(frozen=True, slots=True)
class SharedBuffer:
    name: str
    space: str              # "dynamic" for the extern buffer, else the array's own name
    offset: int             # bytes from the start of its space
    size: int | None     # bytes; None when the layout does not say
    elem_type: str
    decl: A.Node


@dataclass(frozen=True, slots=True)
class MBarrierArray:
    name: str
    storage: str
    count: int
    decl: A.Node


@dataclass(frozen=True, slots=True)
class SmemRef:
    """A pointer into shared memory: buffer, element size and element index."""

    buffer: str
    elem_bytes: int
    index: A.Expr | None
    width: int | None = None      # bytes one thread accesses when a cast says (`*(uint4*)(...)`)


def _pointee_bytes(expr: A.Expr) -> int | None:
    """Size of what `*(U*)(...)` reads or writes: the bytes of U."""
    while isinstance(expr, A.Cast) and expr.kind == "c" and "*" not in expr.type:
        expr = expr.operand
    if isinstance(expr, A.Cast) and expr.type.rstrip().endswith("*"):
        from .intrinsics import type_bytes

        return type_bytes(expr.type.rstrip()[:-1])
    return None


def _strip(expr: A.Expr) -> A.Expr:
    while isinstance(expr, A.Cast) and expr.kind == "c" and "*" not in expr.type:
        expr = expr.operand
    return expr


def _dynamic_alias(init: A.Expr, dynamic: set[str]) -> int | None:
    """Offset of `((void*)((char*)buf_dyn_shmem + OFF))`, or None."""
    expr = init
    while isinstance(expr, A.Cast):
        expr = expr.operand
    if isinstance(expr, A.Binary) and expr.op == "+":
        base = expr.left
        while isinstance(base, A.Cast):
            base = base.operand
        if isinstance(base, A.Name) and base.ident in dynamic:
            return evaluate(expr.right, {})
    if isinstance(expr, A.Name) and expr.ident in dynamic:
        return 0
    return None


def _region_of(init: A.Expr, arrays: set[str]) -> bool:
    """Whether a pointer's initialiser is `&X[k]` or `X + k` for a shared array `X` and a `k` that
    is not a constant (the constant ones are rewritten to indices of `X`: `model.pointers`)."""
    init = _strip(init)
    while isinstance(init, A.Cast) and init.type.replace(" ", "").endswith("*"):
        init = init.operand
    if isinstance(init, A.Unary) and init.op == "&" and not init.postfix and isinstance(init.operand, A.Index):
        base, offset = init.operand.base, init.operand.index
    elif isinstance(init, A.Binary) and init.op == "+":
        base, offset = init.left, init.right
    else:
        return False
    return isinstance(base, A.Name) and base.ident in arrays and evaluate(offset, {}) is None


class SharedLayout:
    """Finds shared buffers and mbarrier arrays in a kernel body."""

    def __init__(self, declarations: list[A.Declaration]) -> None:
        self.buffers: dict[str, SharedBuffer] = {}
        self.barriers: dict[str, MBarrierArray] = {}
        self._pointer_types: dict[str, str] = {}
        # pointers at a run-time offset into a shared array (`float *Kj = &sram[tile_size]`): each
        # a space of its own, the pointers taken to partition the array (`model.pointers`)
        self.regions: dict[str, A.Declaration] = {}
        self._refs: dict[int, tuple] = {}
        dynamic: set[str] = set()
        dynamic_types: dict[str, tuple[str, A.Declaration]] = {}
        static: dict[str, tuple[str, A.Declaration, A.Declarator]] = {}
        aliases: list[tuple[str, int, A.Declaration]] = []
        for node in sorted(declarations, key=lambda d: (d.span.line, d.span.column)):
            for d in node.declarators:
                if node.has("__shared__"):
                    if node.has("extern") or (d.dims and d.dims[0] is None):
                        dynamic.add(d.name)
                        dynamic_types[d.name] = (node.type, node)
                    else:
                        static[d.name] = (node.type, node, d)
                elif d.init is not None:
                    self._declare_alias(node, d, dynamic, static, aliases)
        self._declare_static(static)
        self._declare_dynamic(dynamic_types, aliases)

    def _declare_static(self, static: dict[str, tuple[str, A.Declaration, A.Declarator]]) -> None:
        """The static `__shared__` arrays that are not an mbarrier array's storage."""
        for name, (type_text, decl, d) in static.items():
            if name in {b.storage for b in self.barriers.values()}:
                continue
            count: int | None = 1
            for dim in d.dims:
                n = evaluate(dim, {})
                count = count * n if (count is not None and n) else None  # macro sizes stay unknown
            elem = type_bytes(type_text) or 1
            size = count * elem if count is not None else None
            self.buffers[name] = SharedBuffer(name, name, 0, size, type_text, decl)

    def _declare_dynamic(self, dynamic_types: dict[str, tuple[str, A.Declaration]],
                         aliases: list[tuple[str, int, A.Declaration]]) -> None:
        """The buffers in dynamic shared memory: each alias up to the next alias's offset, or the
        extern arrays themselves where no alias names a part of them."""
        if not aliases:  # `extern __shared__ float A_shared[];` used directly
            for name, (type_text, decl) in dynamic_types.items():
                self.buffers[name] = SharedBuffer(name, "dynamic", 0, None, type_text, decl)
        offsets = sorted({off for _, off, _ in aliases})
        for name, off, decl in aliases:
            later = [o for o in offsets if o > off]
            size = later[0] - off if later else None
            self.buffers[name] = SharedBuffer(name, "dynamic", off, size, "", decl)

    def _declare_alias(self, decl: A.Declaration, d: A.Declarator, dynamic: set[str],
                       static: dict, aliases: list) -> None:
        init = d.init
        if isinstance(init, A.Cast) and init.kind == "reinterpret_cast" and "Barrier" in init.type:
            storage = init.operand
            if isinstance(storage, A.Name) and storage.ident in static:
                dims = static[storage.ident][2].dims
                count = evaluate(dims[0], {}) if dims else 1
                self.barriers[d.name] = MBarrierArray(d.name, storage.ident, count or 1, decl)
            return
        off = _dynamic_alias(init, dynamic) if init is not None else None
        if off is not None and (d.pointer or decl.type in ("void", "auto")):
            aliases.append((d.name, off, decl))
        elif d.pointer == "*" and init is not None and _region_of(init, dynamic | set(static)):
            self.regions[d.name] = decl
            self.buffers[d.name] = SharedBuffer(d.name, d.name, 0, None, decl.type, decl)

    # ---------------------------------------------------------------- lookups
    def pointer_base(self, expr: A.Expr) -> tuple[str, int] | None:
        """(buffer, element bytes) if `expr` is a typed pointer to a buffer."""
        elem = None
        while isinstance(expr, A.Cast):
            if "*" in expr.type:
                elem = elem or type_bytes(expr.type)
            expr = expr.operand
        if isinstance(expr, A.Name) and not expr.scope and expr.ident in self.buffers:
            buf = self.buffers[expr.ident]
            return expr.ident, elem or type_bytes(buf.elem_type) or 1
        return None

    def ref(self, expr: A.Expr) -> SmemRef | None:
        """Resolve `&(((T*)buf)[i])`, `((T*)buf) + i`, `*(U*)(...)`, `buf[i]` (memoised per node)."""
        key = id(expr)
        if key in self._refs:
            return self._refs[key][1]
        found = self._ref(expr)
        self._refs[key] = (expr, found)  # the node is kept so its id stays unique
        return found

    def _ref(self, expr: A.Expr) -> SmemRef | None:
        expr = _strip(expr)
        if isinstance(expr, A.Unary) and expr.op in ("&", "*") and not expr.postfix:
            inner = self.ref(expr.operand)
            pointee = _pointee_bytes(expr.operand) if expr.op == "*" else None
            if inner is not None and pointee is not None:
                return SmemRef(inner.buffer, inner.elem_bytes, inner.index, pointee)
            return inner
        if isinstance(expr, A.Index):
            base = self.pointer_base(expr.base)
            if base:
                return SmemRef(base[0], base[1], expr.index)
            inner = self.ref(expr.base)  # multi-dimensional static arrays
            return inner
        if isinstance(expr, A.Binary) and expr.op == "+":
            base = self.pointer_base(expr.left)
            if base:
                return SmemRef(base[0], base[1], expr.right)
        if isinstance(expr, A.Cast):
            inner = self.ref(expr.operand)
            if inner:
                return inner
        base = self.pointer_base(expr)
        if base:
            return SmemRef(base[0], base[1], None)
        return None

    def barrier_ref(self, expr: A.Expr) -> tuple[str, A.Expr] | None:
        """(array, index expression) for `bar[i]`."""
        expr = _strip(expr)
        if isinstance(expr, A.Index) and isinstance(expr.base, A.Name) and expr.base.ident in self.barriers:
            return expr.base.ident, expr.index
        if isinstance(expr, A.Name) and expr.ident in self.barriers:
            return expr.ident, A.Number("0", expr.span)
        return None
