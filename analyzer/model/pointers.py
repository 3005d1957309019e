"""Pointers into shared arrays, and arrays of several dimensions, read as element indices.

Hand-written kernels name parts of a shared array with local pointers and index arrays of two or
three dimensions:

    extern __shared__ float sram[];           __shared__ float tile[32][33];
    float *Kj = &sram[tile_size];             tile[threadIdx.y + j][threadIdx.x] = ...;
    Kj[y * d + x] = ...;

A C++ front end resolves both to one address: `Kj[e]` is `sram[tile_size + e]`, and `tile[a][b]`
is element `a * 33 + b` of `tile`.  Before the model is built, each use is rewritten so: the model
then sees every access as an element index into the declared array (what TileLang's output
always is), whatever the kernel named it.  Without it, a pointer's accesses were no access at
all (silently), and `tile[a][b]` was read as element `a`.

A pointer is rewritten only where nothing can change it after its declaration: declared by one
declarator in the whole kernel, of the array's element type, never assigned, incremented or
addressed, and initialised to the array, `&array[k]`, `array + k` or another such pointer plus an
offset, with `k` a constant.  A pointer at a run-time offset (`&sram[tile_size]`, `tile_size = Bc
* d`) is a region of the array of its own (`SharedLayout.regions`): the kernel's pointers
partition the array, as TileLang's aliases of its dynamic buffer do, and the note that lists
them says so.  A multi-dimensional array is flattened only where every inner dimension is a
constant.  Anything else keeps the model's ordinary treatment.
"""
from __future__ import annotations

from dataclasses import replace

from ..cuda import ast as A
from .aliases import note_write
from .evaluate import evaluate

_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "__restrict", "restrict"})


def resolve_pointers(func: A.FunctionDef) -> A.FunctionDef:
    """`func` with its shared-array pointers and multi-dimensional indices rewritten as element
    indices of the declared arrays (the same object where it has none)."""
    if func.body is None:
        return func
    arrays, pointers = _scan(func.body, _block_size(func), _global_arrays(func))
    if not pointers and not any(len(strides) != 1 for _, strides in arrays.values()):
        return func
    body = A.transform(func.body, lambda node: _rewrite(node, arrays, pointers))
    return func if body is func.body else A.FunctionDef(
        func.name, func.specifiers, func.return_type, func.params, body,     # type: ignore[arg-type]
        func.span, func.attributes, func.template)


Target = tuple[str, A.Expr | None]      # the array, and the element offset (None: 0)
SCALAR: tuple[int, ...] = ()              # the strides of a shared scalar: element 0 of itself
DEFAULT_BLOCK = 128                       # the model's block without `__launch_bounds__` (`KernelModel`)


def _block_size(func: A.FunctionDef) -> dict[str, int]:
    """`blockDim.x` as the model takes it (`TraceBuilder`: the block's threads, from
    `__launch_bounds__`, else the model's 128), so that an offset `smem + blockDim.x - 1` is the
    constant it is for every access the model checks."""
    bounds = func.attribute("__launch_bounds__")
    value = evaluate(bounds.args[0], {}) if bounds is not None and bounds.args else None
    return {"blockDim.x": value if isinstance(value, int) and 0 < value <= 1024 else DEFAULT_BLOCK}


def _global_arrays(func: A.FunctionDef) -> dict[str, str]:
    """The kernel's pointer parameters (global memory), by name, with their element types."""
    return {p.name: _base_type(p.type) for p in func.params if p.name and p.type.count("*") == 1}


def _scan(body: A.Compound, launch: dict[str, int], globals_: dict[str, str]) -> tuple[
        dict[str, tuple[str, tuple[int, ...]]], dict[str, Target]]:
    """The shared arrays (element type, the stride of each dimension in elements, outermost first)
    and the pointers that name a fixed element of one of them; a pointer parameter the body never
    moves is an array too (global memory), and a local pointer into it at an offset that nothing
    changes (`float *ws = workspace + blockIdx.x * n;`) names its elements."""
    arrays: dict[str, tuple[str, tuple[int, ...]]] = {}
    candidates: list[tuple[A.Declaration, A.Declarator]] = []
    declared, written = _declarations(body, arrays, candidates)
    shared = {n for n in arrays if declared.get(n) == 1}
    arrays.update((n, (t, (1,))) for n, t in globals_.items() if n not in written and n not in declared)
    pointers: dict[str, Target] = {}
    for decl, d in sorted(candidates, key=lambda c: (c[1].span.line, c[1].span.column)):
        if declared.get(d.name) == 1 and d.name not in written and d.name not in arrays:
            target = _pointer_target(decl, d, arrays, pointers, launch, shared, written)
            if target is not None:
                pointers[d.name] = target
    return {n: a for n, a in arrays.items() if n in shared or n in globals_}, pointers


def _declarations(body: A.Compound, arrays: dict, candidates: list) -> tuple[dict[str, int], set[str]]:
    """How many declarators name each local, and the names the body writes; the shared arrays
    and the candidate pointers are filed on the way."""
    declared: dict[str, int] = {}
    written: set[str] = set()
    for node in body.walk():
        if not isinstance(node, A.Declaration):
            note_write(node, written)
            continue
        for d in node.declarators:
            declared[d.name] = declared.get(d.name, 0) + 1
            _declared(node, d, arrays, candidates)
    return declared, written


def _pointer_target(decl: A.Declaration, d: A.Declarator, arrays: dict, pointers: dict[str, Target],
                    launch: dict[str, int], shared: set[str], written: set[str]) -> Target | None:
    """A shared pointer at a constant offset, else a global one at an offset nothing changes."""
    found = _fixed_target(decl, d, arrays, pointers, launch)
    if found is None and d.init is not None:
        found = _global_target(decl, d.init, arrays, pointers, shared, written)
    return found


def _global_target(decl: A.Declaration, init: A.Expr, arrays: dict, pointers: dict[str, Target],
                   shared: set[str], written: set[str]) -> Target | None:
    """A pointer into global memory at an offset whose names nothing assigns (the same address
    wherever it is used)."""
    target = _target(init, arrays, pointers)
    if target is None or target[0] in shared or arrays[target[0]][0] != _base_type(decl.type):
        return None
    offset = target[1]
    if offset is not None and any(isinstance(n, A.Name) and n.ident in written for n in offset.walk()):
        return None
    return target


def _declared(node: A.Declaration, d: A.Declarator, arrays: dict, candidates: list) -> None:
    """A shared array (with its strides) or a pointer that may name a part of one."""
    if node.has("__shared__") and not d.pointer and not d.dims and not node.has("extern"):
        arrays[d.name] = (_base_type(node.type), SCALAR)     # `__shared__ float s_mean;`
    elif node.has("__shared__") and not d.pointer:
        strides = _strides(d.dims)
        if strides is not None:
            arrays[d.name] = (_base_type(node.type), strides)
    elif d.pointer == "*" and not d.dims and d.init is not None and len(node.declarators) == 1:
        candidates.append((node, d))


def _fixed_target(decl: A.Declaration, d: A.Declarator, arrays: dict, pointers: dict[str, Target],
                  launch: dict[str, int]) -> Target | None:
    """The element a pointer names, where it is of the array's type at a constant offset (a
    run-time offset is a region of its own: `SharedLayout.regions`)."""
    assert d.init is not None
    target = _target(d.init, arrays, pointers)
    if target is None or arrays[target[0]][0] != _base_type(decl.type):
        return None
    return target if target[1] is None or isinstance(evaluate(target[1], launch), int) else None


def _strides(dims: tuple[A.Expr | None, ...]) -> tuple[int, ...] | None:
    """Elements per step of each dimension (`[32][33]`: (33, 1)); None where an inner one is not
    a constant (the outermost may be anything: `extern ... x[]`)."""
    if not dims:
        return None
    sizes = [evaluate(d, {}) if d is not None else None for d in dims[1:]]
    if any(not isinstance(s, int) or s <= 0 for s in sizes):
        return None
    strides = [1]
    for size in reversed(sizes):
        strides.insert(0, strides[0] * size)      # type: ignore[operator]
    return tuple(strides)


def _base_type(text: str) -> str:
    return " ".join(w for w in text.replace("*", " ").split() if w not in _QUALIFIERS)


def _target(init: A.Expr, arrays: dict, pointers: dict[str, Target]) -> Target | None:
    """What an initialiser points at: `s`, `&s[k]`, `s + k`, `s - k`, `p + k` for a known pointer `p`."""
    while isinstance(init, A.Cast) and init.kind == "c" and init.type.replace(" ", "").endswith("*"):
        init = init.operand        # `(float *)s`: the type is checked against the declaration
    if isinstance(init, A.Name) and not init.scope:
        return (init.ident, None) if init.ident in arrays else pointers.get(init.ident)
    if isinstance(init, A.Unary) and init.op == "&" and not init.postfix and isinstance(init.operand, A.Index):
        return _flat(init.operand, arrays, pointers)
    if isinstance(init, A.Binary) and init.op in ("+", "-"):
        return _moved(init, arrays, pointers)
    return None


def _moved(init: A.Binary, arrays: dict, pointers: dict[str, Target]) -> Target | None:
    """`p + k` / `p - k` of a pointer into a one-dimensional array."""
    base = _target(init.left, arrays, pointers)
    if base is None or len(arrays[base[0]][1]) != 1:
        return None
    step = init.right if init.op == "+" else A.Unary("-", init.right, init.right.span)
    return (base[0], _plus(base[1], step))


def _flat(node: A.Index, arrays: dict, pointers: dict[str, Target]) -> Target | None:
    """`s[a][b]` (all of its dimensions) or `p[e]` as the array and the element offset."""
    indices: list[A.Expr] = []
    base: A.Expr = node
    while isinstance(base, A.Index):
        indices.insert(0, base.index)
        base = base.base
    if not isinstance(base, A.Name) or base.scope:
        # `(&sa[s][k])[i]`, `(s + k)[i]`: an address expression indexed (a helper's pointer
        # parameter bound to its argument, `model.inline`)
        target = _target(base, arrays, pointers) if len(indices) == 1 else None
        return (target[0], _plus(target[1], indices[0])) if target is not None else None
    if base.ident in pointers:
        name, offset = pointers[base.ident]
        if len(indices) != 1:
            return None
        return (name, _plus(offset, indices[0]))     # a pointer into a 2-D array steps elements
    if base.ident not in arrays:
        return None
    strides = arrays[base.ident][1]
    if len(indices) != len(strides):
        return None          # a row of a 2-D array (`tile[a]`) is not an element
    flat: A.Expr | None = None
    for index, stride in zip(indices, strides):
        term = index if stride == 1 else A.Binary("*", index, A.Number(str(stride), index.span), index.span)
        flat = _plus(flat, term)
    return (base.ident, flat)


def _plus(offset: A.Expr | None, term: A.Expr) -> A.Expr:
    return term if offset is None else A.Binary("+", offset, term, term.span)


def _rewrite(node: A.Node, arrays: dict, pointers: dict[str, Target]) -> A.Node | None:
    """The replacement of one node, or None to look inside it."""
    if isinstance(node, A.Index):
        return _rewrite_index(node, arrays, pointers)
    if isinstance(node, A.Declaration):
        return _rewrite_declaration(node, arrays, pointers)
    if isinstance(node, A.Unary) and node.op == "*" and not node.postfix:
        target = _target(node.operand, arrays, pointers)
        if target is None or (isinstance(node.operand, A.Name) and node.operand.ident not in pointers):
            return None          # `*s` of an array itself stays as written
        name, offset = target
        return A.Index(A.Name(name, node.span), offset or A.Number("0", node.span), node.span)
    if isinstance(node, A.Name) and not node.scope:
        if node.ident in pointers:
            name, offset = pointers[node.ident]
            array = A.Name(name, node.span)
            return array if offset is None else A.Binary("+", array, offset, node.span)
        if _scalar(arrays, node.ident):
            return A.Index(node, A.Number("0", node.span), node.span)
    return None


def _scalar(arrays: dict, name: str) -> bool:
    found = arrays.get(name)
    return found is not None and found[1] == SCALAR


def _rewrite_declaration(node: A.Declaration, arrays: dict, pointers: dict[str, Target]) -> A.Node | None:
    """A rewritten pointer's declaration goes; a shared scalar is the one element of an array, so
    that every analysis of arrays sees it."""
    if len(node.declarators) == 1 and node.declarators[0].name in pointers:
        return A.Empty(node.span)
    if any(_scalar(arrays, d.name) for d in node.declarators):
        one = (A.Number("1", node.span),)
        return replace(node, declarators=tuple(replace(d, dims=one) if _scalar(arrays, d.name) else d
                                               for d in node.declarators))
    return None


def _rewrite_index(node: A.Index, arrays: dict, pointers: dict[str, Target]) -> A.Node | None:
    """`p[e]` and `s[a][b]` as one index of the array; a plain `s[e]` only inside its index."""
    flat = _flat(node, arrays, pointers)
    if flat is None:
        return None
    if flat[0] == _root(node) and len(arrays[flat[0]][1]) == 1:
        return _inner(node, arrays, pointers)
    index = _inner_expr(flat[1] or A.Number("0", node.span), arrays, pointers)
    return A.Index(A.Name(flat[0], node.span), index, node.span)


def _root(node: A.Index) -> str | None:
    base: A.Expr = node
    while isinstance(base, A.Index):
        base = base.base
    return base.ident if isinstance(base, A.Name) else None


def _inner(node: A.Index, arrays: dict, pointers: dict[str, Target]) -> A.Node | None:
    """A one-dimensional access of the array itself: only its index may need rewriting."""
    index = _inner_expr(node.index, arrays, pointers)
    return None if index is node.index else A.Index(node.base, index, node.span)


def _inner_expr(expr: A.Expr, arrays: dict, pointers: dict[str, Target]) -> A.Expr:
    found = A.transform(expr, lambda n: _rewrite(n, arrays, pointers))
    return found      # type: ignore[return-value]
