"""Symbolic execution of a kernel into per-role event traces.

Each *role* is a range of threads that takes the same branches (warp
specialization splits a block into producer and consumer roles on
`threadIdx.x < C`).  For each role the kernel body is walked once; loops that
hold pipeline operations are unrolled over their real trip count with
concrete loop variables, so stage slots, barrier indices and parities come
out as numbers.  Loops without such operations are walked once.  The result is
a list of `Event`s per role, in program order: the input of every
pipeline analysis.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..cuda import ast as A
from .evaluate import CompiledEvaluator, builtin_name, evaluate
from .index import KernelIndex
from .intrinsics import ELECT, PIPELINE_KINDS, SYNC_KINDS, call_kind
from .shared import SharedLayout

CONTROL_KINDS = frozenset({"commit", "wait", "sync", "named_sync", "mbar_init", "mbar_arrive",
                           "mbar_wait", "mbar_expect_tx", "mbar_arrive_expect_tx", "cp_async_arrive",
                           "fence_init", "tma_load"})
MAX_EVENTS = 200_000   # per role; a bigger kernel is analysed up to here


@dataclass(frozen=True, slots=True)
class Role:
    lo: int
    hi: int

    @property
    def threads(self) -> int:
        return self.hi - self.lo

    def __str__(self) -> str:
        return f"threads {self.lo}-{self.hi - 1}"


@dataclass(frozen=True, slots=True)
class Event:
    kind: str
    node: A.Node
    role: int
    mult: int                                   # threads of the role that execute it
    iteration: tuple[tuple[int, int], ...]       # (pipelined loop id, loop variable value)
    access: str = ""                             # read | write | async
    buffer: Optional[str] = None
    offset: Optional[int] = None                 # bytes into the buffer (thread 0)
    site: Optional[tuple] = None                 # what varies only with the pipeline
    barrier: Optional[tuple[str, int]] = None
    value: Optional[int] = None
    guarded: bool = False                        # under a branch that splits the role
    possible: bool = False                       # unknown call with a shared pointer

    @property
    def where(self) -> str:
        """The loop iteration(s) the event belongs to, for messages: "5", "1,3", "prologue"."""
        return ",".join(str(v) for _, v in self.iteration) or "prologue"

    @property
    def loop_id(self) -> Optional[int]:
        return self.iteration[-1][0] if self.iteration else None


@dataclass
class LoopInfo:
    node: A.For
    var: str
    start: int
    trip: int
    simulated: int
    pipelined: bool


@dataclass
class Trace:
    roles: list[Role]
    events: list[list[Event]]
    loops: dict[int, LoopInfo] = field(default_factory=dict)
    truncated: bool = False

    def all_events(self) -> Iterator[Event]:
        for evs in self.events:
            yield from evs



def _loop_header(loop: A.For) -> Optional[tuple[str, int, int]]:
    """(var, start, trip) for `for (int v = a; v < b; ++v)` with constant a, b."""
    init = loop.init
    if not (isinstance(init, A.Declaration) and len(init.declarators) == 1):
        return None
    d = init.declarators[0]
    start = evaluate(d.init, {})
    cond = loop.cond
    if start is None or not (isinstance(cond, A.Binary) and cond.op in ("<", "<=")):
        return None
    if not (isinstance(cond.left, A.Name) and cond.left.ident == d.name):
        return None
    end = evaluate(cond.right, {})
    step = loop.step
    unit = (isinstance(step, A.Unary) and step.op == "++") or (
        isinstance(step, A.Assign) and step.op == "+=" and evaluate(step.value, {}) == 1)
    if end is None or not unit:
        return None
    return d.name, start, end - start + (1 if cond.op == "<=" else 0)


def _period(index: "KernelIndex", var: str) -> int:
    """lcm of the moduli applied to `var`: slots and parities repeat with it."""
    period = 1
    for n in index.modular:
        if index.mentions(n.left, var):
            c = evaluate(n.right, {})
            if not c or c <= 0:
                continue
            if n.op in ("%", "/"):
                period = math.lcm(period, c)
            elif n.op == "&" and (c + 1) & c == 0:
                period = math.lcm(period, c + 1)
        if period > 64:
            return 64
    return period


def find_roles(ifs: list[A.If], threads: int) -> list[Role]:
    """Split [0, threads) at every constant `threadIdx.x` bound an `if` tests."""
    cuts = {0, threads}
    for n in ifs:
        for cmp in n.cond.walk():
            if isinstance(cmp, A.Binary) and cmp.op in ("<", "<=", ">", ">=", "==") \
                    and builtin_name(cmp.left) == "threadIdx.x":
                c = evaluate(cmp.right, {})
                if c is None:
                    continue
                c = c + 1 if cmp.op in ("<=", ">") else c
                if 0 < c < threads:
                    cuts.add(c)
                if cmp.op == "==" and 0 <= c + 1 < threads:
                    cuts.add(c + 1)
    bounds = sorted(cuts)
    return [Role(a, b) for a, b in zip(bounds, bounds[1:])]


def elect_count(role: Role, extent: int, block: int) -> int:
    """Threads of `role` for which `tl_shuffle_elect<extent>()` is true.

    One lane in every warp whose index is a multiple of ceil(extent/32);
    extent 0 means the first warp of the block only (tl_templates intrin.h).
    """
    if extent == 0:
        return 1 if role.lo == 0 else 0
    warp_extent = max(1, (extent + 31) // 32)
    warps = range(role.lo // 32, (role.hi + 31) // 32)
    return sum(1 for w in warps if w % warp_extent == 0)


class TraceBuilder:
    def __init__(self, func: A.FunctionDef, layout: SharedLayout, threads: int, index: "KernelIndex") -> None:
        self.func = func
        self.layout = layout
        self.threads = threads
        self.kinds = index
        self.eval = CompiledEvaluator()
        self._reads: dict[int, list] = {}
        # locals whose values the walker tracks: scalars and arrays declared in the body
        self.local_names = frozenset(
            d.name for decl in index.declarations if not decl.has("__shared__") and not decl.has("extern")
            for d in decl.declarators if not d.pointer and decl.type not in ("auto",))
        self.loops: dict[int, LoopInfo] = {}
        self.truncated = False

    def reads_of(self, e: A.Expr) -> list:
        """Calls and shared-memory reads in an expression, found once per node."""
        found = self._reads.get(id(e))
        if found is not None:
            return found
        found = []
        stack = [e]
        while stack:
            n = stack.pop()
            if isinstance(n, A.Call):
                found.append(n)
                continue
            if isinstance(n, A.Index) or (isinstance(n, A.Unary) and n.op == "*"):
                ref = self.layout.ref(n)
                if ref is not None:
                    found.append((n, ref))
                    continue
            kids = n.children()
            kids.reverse()
            stack.extend(kids)
        self._reads[id(e)] = found
        return found

    @functools.cached_property
    def period(self) -> int:
        """One period for all pipelined loops, so producer and consumer loops stay in step."""
        period = 1
        for node in self.kinds.fors:
            if self.kinds.of(node.body) & PIPELINE_KINDS:
                header = _loop_header(node)
                if header is not None:
                    period = math.lcm(period, _period(self.kinds, header[0]))
        return min(period, 64)

    def build(self) -> Trace:
        assert self.func.body is not None
        roles = find_roles(self.kinds.ifs, self.threads)
        events = []
        for index, role in enumerate(roles):
            walker = _RoleWalker(self, index, role)
            walker.stmt(self.func.body, walker.locals, role.threads, (), False)
            events.append(walker.events)
        return Trace(roles, events, self.loops, self.truncated)


class _RoleWalker:
    def __init__(self, builder: TraceBuilder, index: int, role: Role) -> None:
        self.b = builder
        self.index = index
        self.role = role
        self.events: list[Event] = []
        self.descriptors: dict[str, tuple[str, int]] = {}
        self.desc_sites: dict[str, tuple] = {}
        self.pipeline_vars: set[str] = set()
        # One environment per role, mutated in place: loop variables (restored
        # after their loop), `threadIdx.x` (the role's first thread, a real
        # thread of the role), and values of local scalars and array elements
        # (`phase_cnt[0]`), which persistent kernels count mbarrier phases in.
        self.locals: dict[str, int] = {"threadIdx.x": role.lo}
        self.loop_stack: list[tuple[str, int]] = []

    # -------------------------------------------------------------- statements
    def stmt(self, s: A.Node, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        if len(self.events) > MAX_EVENTS:
            self.b.truncated = True
            return
        if isinstance(s, A.Compound):
            for child in s.body:
                self.stmt(child, env, mult, it, guarded)
        elif isinstance(s, A.ExprStmt):
            self.expr_stmt(s.expr, env, mult, it, guarded)
        elif isinstance(s, A.Declaration):
            for d in s.declarators:
                if d.init is not None and not s.has("__shared__"):
                    self.reads_in(d.init, env, mult, it, guarded)
                    if d.name in self.b.local_names:
                        self.declare_local(d, env)
        elif isinstance(s, A.For):
            self.for_loop(s, env, mult, it, guarded)
        elif isinstance(s, A.If):
            self.if_stmt(s, env, mult, it, guarded)
        elif isinstance(s, A.While):
            self.stmt(s.body, env, mult, it, True if self.b.kinds.mentions(s.cond, "threadIdx.x") else guarded)

    def for_loop(self, loop: A.For, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        kinds = self.b.kinds.of(loop.body)
        header = _loop_header(loop)
        if not (kinds & SYNC_KINDS) or header is None:
            self.stmt(loop.body, env, mult, it, guarded)
            return
        var, start, trip = header
        pipelined = bool(kinds & PIPELINE_KINDS)
        if not (kinds & CONTROL_KINDS):
            # Only data movement (e.g. the unrolled cp.async of one tile): its
            # iterations touch the same stage slot, so one walk stands for all.
            saved = env.get(var, _UNSET)
            env[var] = start
            self.loop_stack.append((var, start))
            self.stmt(loop.body, env, mult, it, guarded)
            self.loop_stack.pop()
            _restore(env, var, saved)
            return
        simulated = trip
        period = self.b.period
        if pipelined and trip > 4 * period + 4:
            # Slots and parities repeat with `period`; a prefix congruent to the
            # trip count ends in the same state as the full loop.
            simulated = 3 * period + (trip % period)
        self.b.loops.setdefault(id(loop), LoopInfo(loop, var, start, trip, simulated, pipelined))
        if pipelined:
            self.pipeline_vars.add(var)
        saved = env.get(var, _UNSET)
        for value in range(start, start + simulated):
            inner_it = it + ((id(loop), value),) if pipelined else it
            env[var] = value
            self.loop_stack.append((var, value))
            self.stmt(loop.body, env, mult, inner_it, guarded)
            self.loop_stack.pop()
        _restore(env, var, saved)

    def if_stmt(self, s: A.If, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        cond = s.cond
        if isinstance(cond, A.Call) and cond.name in ELECT:
            extent = int(cond.template_args[0]) if cond.template_args and cond.template_args[0].isdigit() else 0
            count = elect_count(self.role, extent, self.b.threads)
            if count:
                self.stmt(s.then, env, count, it, guarded)
            if s.other is not None:
                self.stmt(s.other, env, mult, it, guarded)
            return
        if self.b.kinds.mentions(cond, "threadIdx.x"):
            samples = sorted({self.role.lo, self.role.lo + 1, self.role.lo + 31, self.role.lo + 32,
                              (self.role.lo + self.role.hi) // 2, self.role.hi - 1} & set(range(self.role.lo, self.role.hi)))
            values = set()
            for t in samples:
                env["threadIdx.x"] = t
                values.add(self.b.eval(cond, env))
            env["threadIdx.x"] = self.role.lo
            if values == {0}:
                if s.other is not None:
                    self.stmt(s.other, env, mult, it, guarded)
                return
            if None not in values and 0 not in values:
                self.stmt(s.then, env, mult, it, guarded)
                return
            self.stmt(s.then, env, mult, it, True)
            if s.other is not None:
                self.stmt(s.other, env, mult, it, True)
            return
        value = self.b.eval(cond, env)
        if value is not None:
            branch = s.then if value else s.other
            if branch is not None:
                self.stmt(branch, env, mult, it, guarded)
            return
        self.stmt(s.then, env, mult, it, guarded)
        if s.other is not None:
            self.stmt(s.other, env, mult, it, guarded)

    # -------------------------------------------------------------- expressions
    def expr_stmt(self, e: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        if isinstance(e, A.Assign):
            self.access(e.target, "write", e, env, mult, it, guarded)
            if e.op != "=":
                self.access(e.target, "read", e, env, mult, it, guarded)
            self.reads_in(e.value, env, mult, it, guarded)
            self.assign_local(e.target, e.op, e.value, env)
            return
        if isinstance(e, A.Unary) and e.op in ("++", "--"):
            self.assign_local(e.operand, "+=" if e.op == "++" else "-=", A.Number("1", e.span), env)
            return
        if isinstance(e, A.Call):
            self.call(e, env, mult, it, guarded)
            return
        self.reads_in(e, env, mult, it, guarded)

    # -------------------------------------------------------------- local values
    def local_key(self, target: A.Expr, env) -> Optional[str]:
        if isinstance(target, A.Name) and not target.scope and target.ident in self.b.local_names:
            return target.ident
        if isinstance(target, A.Index) and isinstance(target.base, A.Name) \
                and target.base.ident in self.b.local_names:
            i = self.b.eval(target.index, env)
            return f"{target.base.ident}[{i}]" if i is not None else None
        return None

    def declare_local(self, d: A.Declarator, env) -> None:
        if not d.dims:
            self._store(d.name, self.b.eval(d.init, env))
        elif isinstance(d.init, A.InitList):
            for i, item in enumerate(d.init.items):
                self._store(f"{d.name}[{i}]", self.b.eval(item, env))

    def assign_local(self, target: A.Expr, op: str, value: A.Expr, env) -> None:
        key = self.local_key(target, env)
        if key is None:
            return
        new = self.b.eval(value, env)
        if op != "=" and new is not None:
            old = self.locals.get(key)
            new = None if old is None else evaluate(A.Binary(op[:-1], A.Number(str(old), value.span),
                                                             A.Number(str(new), value.span), value.span), {})
        self._store(key, new)

    def _store(self, key: str, value: Optional[int]) -> None:
        if value is None:
            self.locals.pop(key, None)
        else:
            self.locals[key] = value

    def reads_in(self, e: A.Expr, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        """Shared-memory reads and calls inside an expression."""
        for item in self.b.reads_of(e):
            if isinstance(item, A.Call):
                self.call(item, env, mult, it, guarded)
            else:
                node, ref = item
                self.emit_access(ref, "read", node, env, mult, it, guarded)

    def access(self, target: A.Expr, access: str, node: A.Node, env: dict, mult: int,
               it: tuple, guarded: bool) -> None:
        ref = self.b.layout.ref(target)
        if ref is not None:
            self.emit_access(ref, access, node, env, mult, it, guarded)
        else:
            self.reads_in(target, env, mult, it, guarded)

    def emit_access(self, ref, access: str, node: A.Node, env: dict, mult: int, it: tuple,
                    guarded: bool, kind: str = "smem", possible: bool = False, **extra) -> None:
        offset, site = self.offset(ref.index, ref.elem_bytes, env, node)
        self.events.append(Event(kind, node, self.index, mult, it, access, ref.buffer, offset,
                                 site, guarded=guarded, possible=possible, **extra))

    def offset(self, index: Optional[A.Expr], elem: int, env: dict, node: A.Node) -> tuple[Optional[int], tuple]:
        """Byte offset for the role's first thread, and a key of what varies besides the pipeline.

        The first thread of the role is a real thread (consumer indices in
        warp-specialized kernels are offset by the producer's thread count),
        so its offset lies in the slot every thread of the role touches.
        """
        if index is None:
            return 0, (id(node),)
        value = self.b.eval(index, env, default=0)
        inner = tuple(sorted((k, v) for k, v in self.loop_stack if k not in self.pipeline_vars))
        return (value * elem if value is not None else None), (id(node), inner)

    def barrier(self, expr: A.Expr, env: dict) -> Optional[tuple[str, int]]:
        ref = self.b.layout.barrier_ref(expr)
        if ref is None:
            return None
        index = self.b.eval(ref[1], env)
        return (ref[0], index) if index is not None else None

    def call(self, call: A.Call, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        intr = call_kind(call)
        ev = lambda kind, **kw: self.events.append(  # noqa: E731
            Event(kind, call, self.index, mult, it, guarded=guarded, **kw))
        if intr is None:
            for arg in call.args:
                ref = self.b.layout.ref(arg)
                if ref is not None and isinstance(_strip_cast(arg), A.Unary):
                    for access in ("read", "write"):
                        self.emit_access(ref, access, call, env, mult, it, guarded, possible=True)
                else:
                    self.reads_in(arg, env, mult, it, guarded)
            return
        kind = intr.kind
        value = None
        if intr.template_count and call.template_args:
            value = evaluate_text(call.template_args[0])
        elif intr.count is not None and intr.count < len(call.args):
            value = self.b.eval(call.args[intr.count], env)
        if kind.startswith("mbar_") and isinstance(call.callee, A.Member):
            ev(kind, barrier=self.barrier(call.callee.base, env), value=value)
        elif kind == "tma_load":
            self.tma_load(call, env, mult, it, guarded)
        elif kind == "desc_init":
            ref = self.b.layout.ref(call.args[1]) if len(call.args) > 1 else None
            name = call.args[0].ident if call.args and isinstance(call.args[0], A.Name) else None
            if ref is not None and name:
                off, _ = self.offset(ref.index, ref.elem_bytes, env, call)
                self.descriptors[name] = (ref.buffer, off or 0)
        elif kind == "desc_offset":
            name = call.args[0].ident if call.args and isinstance(call.args[0], A.Name) else None
            if name in self.descriptors and value is not None:
                buf, off = self.descriptors[name]
                self.descriptors[name] = (buf, off + value)
                self.desc_sites[name] = (id(call), tuple(sorted(
                    (k, v) for k, v in self.loop_stack if k not in self.pipeline_vars)))
        elif kind == "wgmma":
            for name in _names_in(call.args):
                if name in self.descriptors:
                    buf, off = self.descriptors[name]
                    site = self.desc_sites.get(name, (id(call),))
                    self.events.append(Event("smem", call, self.index, mult, it, "read", buf, off,
                                             site, guarded=guarded))
        elif kind == "cp_async_arrive":
            ev(kind, barrier=self.barrier(call.args[0], env) if call.args else None)
        elif intr.smem is not None and intr.smem < len(call.args):
            ref = self.b.layout.ref(call.args[intr.smem])
            if ref is not None:
                event_kind = "cp_async" if kind == "cp_async" else (
                    "tma_store" if kind == "tma_store" else "smem")
                self.emit_access(ref, intr.access if intr.access != "async" else "async", call,
                                 env, mult, it, guarded, kind=event_kind)
            elif kind == "cp_async":
                ev("cp_async")
        else:
            ev(kind, value=value)

    def tma_load(self, call: A.Call, env: dict, mult: int, it: tuple, guarded: bool) -> None:
        args = call.args
        layout = self.b.layout
        if len(args) >= 4 and layout.ref(args[0]) is not None and layout.barrier_ref(args[2]):
            smem, bar, size = args[0], args[2], self.b.eval(args[3], env)   # 1-D bulk form
        elif len(args) >= 3:
            smem, bar, size = args[2], args[1], None                      # descriptor form
        else:
            return
        ref = layout.ref(smem)
        if ref is None:
            return
        self.emit_access(ref, "async", call, env, mult, it, guarded, kind="tma_load",
                         barrier=self.barrier(bar, env), value=size)


_UNSET = object()


def _restore(env: dict, var: str, saved: object) -> None:
    if saved is _UNSET:
        env.pop(var, None)
    else:
        env[var] = saved


def _strip_cast(e: A.Expr) -> A.Expr:
    while isinstance(e, A.Cast):
        e = e.operand
    return e


def _names_in(args: tuple) -> set[str]:
    return {n.ident for a in args for n in a.walk() if isinstance(n, A.Name) and not n.scope}


def evaluate_text(text: str) -> Optional[int]:
    try:
        return int(text.strip().rstrip("uUlL"), 0)
    except ValueError:
        return None
