"""After how many iterations a kernel's pipeline state repeats: its *period*.

The trace simulates a long pipelined loop by a prefix congruent to its trip count, and a loop
whose count is only known at run time by a few scenario counts (`KernelModel.trip_scenarios`).
Both rest on one fact: everything the simulation keeps between iterations (which stage slot a
copy fills, which mbarrier and parity a wait names, which commit group is in flight) is a
function of the iteration *modulo* the period.  The period is therefore the lcm of the moduli
(`% m`, `/ m`, `& (2^k - 1)`, `>> s`) applied to what changes from one iteration to the next:

* the loop variable itself;
* a register the loop body steps (`cnt = cnt + 1`, `cnt += 2`, `++cnt`): TileLang's persistent
  kernels name their slots and parities by such phase counters (`producer_phase_cnt[0] % 3`),
  never by the loop variable;
* a register assigned in the body from either of these (`int s = k; ... buf[s % 3]`).

Moduli that only form *global* addresses are left out: a TMA load's or store's tile
coordinates (`(w * 132 + blockIdx.x) % 512 / 8 * 128`) and the index of a global buffer the
block does not also read back pick which bytes of global memory a copy moves, not which slot
or phase it uses, so they never change the simulated state.  A global buffer that threads of a
block hand to each other (written and read: `tracked`) is simulated byte by byte, and the
moduli of its addresses stay in.  So does any global index that itself reads memory or calls a
function (`P[idx[k % 2]]`): it may be a shared read.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable

from ..cuda import ast as A
from .evaluate import evaluate, mentions
from .index import KernelIndex
from .intrinsics import K, call_kind

_INTEGER_TYPE = re.compile(r"(?:const\s+|volatile\s+)*(?:(?:unsigned|signed)\s+)?"
                           r"(?:int|uint|long|short|char|uchar|ushort|bool|size_t|u?int\d+_t)\b")
MAX_PERIOD = 64      # beyond it a prefix is no shorter than most loops: simulate them whole

# TMA forms whose arguments after the shared pointer are tile coordinates, by where they start
# (`tma_load(desc, bar, smem, c0, c1, ...)`, `tma_store(desc, smem, c0, ...)`).  The multicast
# load's last argument is a CTA mask, not a coordinate, so it is not listed.
_COORDINATES_FROM = {
    "tl::tma_load": 3, "tl::tma_load_im2col": 3, "tl::tma_load_2sm": 3,
    "tl::tma_store": 2, "tl::tma_store_add": 2,
}


def pipeline_period(index: KernelIndex, loops: Iterable[tuple[A.For, str]],
                    tracked: frozenset[str] = frozenset(), params: frozenset[str] = frozenset()) -> int:
    """One period for all pipelined `loops` (each with its variable), so producer and consumer
    loops stay in step.

    `tracked`: global pointer parameters the block both writes and reads (their addresses are
    state); `params`: every kernel parameter (the others' addresses are global-only)."""
    memo = index.memo.setdefault("period", {})
    found = memo.get((tracked, params))
    if found is None:
        moduli = [n for n in index.modular if not _global_only(n, index, tracked, params)]
        registers = integer_locals(index)
        period = 1
        for loop, var in loops:
            period = math.lcm(period, _period(moduli, stepped(loop, var, registers)))
        found = memo[(tracked, params)] = min(period, MAX_PERIOD)
    return found


def _period(moduli: Iterable[A.Binary], names: frozenset[str]) -> int:
    """lcm of the moduli applied to any of `names`: slots and parities repeat with it."""
    period = 1
    for n in moduli:
        if not mentions(n.left, names):
            continue
        c = evaluate(n.right, {})
        if not isinstance(c, int) or c <= 0:
            continue            # `x / 7168.0f` is floating-point arithmetic, no modulus
        if n.op in ("%", "/"):
            period = math.lcm(period, c)
        elif n.op == "&" and (c + 1) & c == 0:
            period = math.lcm(period, c + 1)
        elif n.op == ">>" and c < 6:
            # `(k >> s)` as a parity flips every 2**s iterations
            period = math.lcm(period, 2 << c)
        if period > MAX_PERIOD:
            return MAX_PERIOD
    return period


def integer_locals(index: KernelIndex) -> frozenset[str]:
    """Scalars and arrays of integer type declared in the body: the only registers that can
    index memory or count phases (floating-point ones never do)."""
    found = index.memo.get("integer-locals")
    if found is None:
        found = index.memo["integer-locals"] = frozenset(
            d.name for decl in index.declarations if not decl.has("__shared__") and not decl.has("extern")
            for d in decl.declarators if not d.pointer and _INTEGER_TYPE.match(decl.type))
    return found


def stepped(loop: A.For, var: str, registers: frozenset[str]) -> frozenset[str]:
    """The loop variable and the integer `registers` that change with it in the body: those
    the body steps (assigned from themselves) and those assigned from a name already in the set.

    A nested loop's own variable runs through the same values in every iteration of this one,
    so it is no state of this loop, unless the nested loop's bounds change with it."""
    updates, nested = _updates(loop.body)
    updates = [u for u in updates if u[0] in registers]
    names = {var}
    names.update(name for name, value, steps in updates
                 if steps or (value is not None and mentions(value, {name})))
    # (name, what it is computed from): a register assignment's value, a nested loop's header
    sources = [(name, value) for name, value, _ in updates if value is not None]
    sources += [(name, part) for name, header in nested for part in (header.init, header.cond) if part is not None]
    return _closure(names, sources)


def _closure(names: set[str], sources: list[tuple[str, A.Node]]) -> frozenset[str]:
    """`names` and every name computed from one of them, to a fixed point."""
    changed = True
    while changed:
        changed = False
        for name, source in sources:
            if name not in names and mentions(source, frozenset(names)):
                names.add(name)
                changed = True
    return frozenset(names)


def _updates(body: A.Node) -> tuple[list[tuple[str, A.Node | None, bool]], list[tuple[str, A.For]]]:
    """The assignments in `body` as (name, value or None, whether it steps itself), and the
    nested loops as (variable, loop); a nested loop's own init and step are not assignments."""
    updates: list[tuple[str | None, A.Node | None, bool]] = []
    nested: list[tuple[str, A.For]] = []
    headers: set[int] = set()
    for node in body.walk():
        if id(node) in headers:
            continue
        if isinstance(node, A.For):
            inner = _target_name(node.step) if isinstance(node.step, (A.Unary, A.Assign)) else None
            if inner is not None:
                nested.append((inner, node))
                headers.update(id(n) for part in (node.init, node.step) if part is not None for n in part.walk())
        else:
            updates.append(_update(node))
    return [(n, v, st) for n, v, st in updates if n is not None], nested


def _update(node: A.Node) -> tuple[str | None, A.Node | None, bool]:
    """(name, value, steps itself) of an assignment, increment or initialised declarator; a
    name of None for any other node."""
    if isinstance(node, A.Assign):
        return _target_name(node.target), node.value, node.op != "="
    if isinstance(node, A.Unary) and node.op in ("++", "--"):
        return _target_name(node.operand), None, True
    if isinstance(node, A.Declarator) and node.init is not None:
        return node.name, node.init, False
    return None, None, False


def _target_name(target: A.Node) -> str | None:
    """`x` of `x`, `x[0]`, `++x`, `x += 1`: the register an assignment or increment changes."""
    if isinstance(target, A.Unary):
        target = target.operand
    elif isinstance(target, A.Assign):
        target = target.target
    while isinstance(target, A.Index):
        target = target.base
    if isinstance(target, A.Name) and not target.scope:
        return target.ident
    return None


def _global_only(node: A.Binary, index: KernelIndex, tracked: frozenset[str], params: frozenset[str]) -> bool:
    """Whether `node` lies in an expression that only forms a global address (module docstring)."""
    memo = index.memo.setdefault("global-only", {})
    spans = memo.get((tracked, params))
    if spans is None:
        spans = memo[(tracked, params)] = _global_only_spans(index, tracked, params)
    s = node.span
    start, end = (s.line, s.column), (s.end_line, s.end_column)
    return any(lo <= start and end <= hi for lo, hi in spans)


def _global_only_spans(index: KernelIndex, tracked: frozenset[str],
                       params: frozenset[str]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) spans of the TMA coordinate arguments and the untracked global indices."""
    spans = [_span(arg) for arg in _coordinates(index, params) if _plain(arg)]
    if params - tracked and index.root is not None:
        addresses = (_global_index(node, params - tracked) for node in index.root.walk())
        spans += [_span(a) for a in addresses if a is not None and _plain(a)]
    return spans


def _coordinates(index: KernelIndex, params: frozenset[str]) -> list[A.Node]:
    """The tile-coordinate arguments of the kernel's TMA loads and stores (descriptor form: the
    first argument is a kernel parameter, the CUtensorMap)."""
    found: list[A.Node] = []
    for call in index.calls:
        first = _COORDINATES_FROM.get(call.name)
        intr = call_kind(call) if first is not None and call.args else None
        if intr is None or intr.kind not in (K.TMA_LOAD, K.TMA_STORE):
            continue
        desc = call.args[0]
        if isinstance(desc, A.Name) and not desc.scope and desc.ident in params:
            found.extend(call.args[first:])
    return found


def _global_index(node: A.Node, untracked: frozenset[str]) -> A.Node | None:
    """The index of `P[i]` or `P + i` for an untracked global pointer parameter P (casts
    around P allowed), else None."""
    if isinstance(node, A.Index):
        base, address = node.base, node.index
    elif isinstance(node, A.Binary) and node.op == "+":
        base, address = node.left, node.right
    else:
        return None
    while isinstance(base, A.Cast):
        base = base.operand
    if isinstance(base, A.Name) and not base.scope and base.ident in untracked:
        return address
    return None


def _plain(expr: A.Node) -> bool:
    """Arithmetic on names, numbers and the built-in indices only: no memory read, no call
    (either may read shared memory, whose index would then be state)."""
    for n in expr.walk():
        if isinstance(n, A.Member):
            if not (isinstance(n.base, A.Name) and n.base.ident in _BUILTINS and not n.arrow):
                return False
        elif isinstance(n, (A.Index, A.Call)) or (isinstance(n, A.Unary) and n.op == "*"):
            return False
    return True


_BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})


def _span(node: A.Node) -> tuple[tuple[int, int], tuple[int, int]]:
    s = node.span
    return (s.line, s.column), (s.end_line, s.end_column)
