"""Races on shared memory through plain accesses: every store, load and atomic, not only the pipeline's.

A thread's plain store becomes visible to *other* threads only through a barrier
that both take part in (`__syncthreads`, or a named barrier `bar.sync id, n` that
counts both), or an mbarrier phase handed from one to the other.  The cp.async
rules cover the pipeline's copies; these cover everything else: a flag written by
threads 0-31 and read by all, an epilogue tile written by one warp and stored by
another, a read-modify-write of one shared scalar by every thread.

Two threads conflict only if some byte is really touched by both (exact
per-thread byte sets, `pipelint.model.threads`); a store that several threads
repeat with the same value (TileLang's replicated stores) is not a race.  Where
the model cannot decide (an index it cannot evaluate, a call it does not know
that receives a shared pointer, writers picked by a condition on data) it says
so in one note per kernel, never an error.
"""
from __future__ import annotations

from collections.abc import Iterator

from pipelint import hookimpl
from pipelint.checks import make_finding, rules_by_id
from pipelint.cuda import ast as A
from pipelint.cuda.parser import ParsedFile
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import KernelModel
from pipelint.model.cpasync import Hazard
from pipelint.model.intrinsics import EventKind as K
from pipelint.model.intrinsics import HazardKind as H
from pipelint.model.placement import contains, point, statement_before, statement_of
from pipelint.model.presburger import meeting_condition
from pipelint.model.threads import TILED, describe
from pipelint.model.trace import Event

RULES = (
    Rule("shared-race", "SharedRace",
         "Plain shared-memory store and load of different threads with no barrier between",
         "One thread reads bytes another thread stored (RAW), or stores over bytes another thread "
         "may still be reading (WAR), and no barrier that both threads take part in orders the two "
         "accesses. The value read depends on timing.",
         Severity.ERROR, "Put `__syncthreads()` (or a named barrier that counts both threads) between "
         "the store and the load.", ("correctness", "race"),
         rationale="A store to shared memory is visible to other threads only after a barrier both take part "
                   "in. Kernels often pass flags, reductions and epilogue tiles between warps through plain "
                   "stores; a missing or misplaced barrier there races exactly like a pipeline's."),
    Rule("shared-write-race", "SharedWriteRace",
         "Two threads store different values to the same shared bytes with no barrier between",
         "Two different threads write a common byte (WAW) and nothing orders the writes, so the "
         "final value is whichever lands last. Stores that several threads repeat with the same "
         "value are not reported.",
         Severity.ERROR, "Let one thread write (guard the store), or separate the writes with a barrier.",
         ("correctness", "race"),
         rationale="An unguarded scalar store run by every thread, or a copy-in and a fill that overlap, leaves "
                   "shared memory in an order-dependent state."),
    Rule("barrier-scope", "BarrierScope",
         "A named barrier orders the access, but not the threads that made the other one",
         "A partial barrier (`bar.sync id, n`, TileLang's `__sync_thread_partial`) lies between the two "
         "accesses in program order, but the threads of the other access do not take part in it, so "
         "it orders nothing between them.",
         Severity.ERROR, "Use a barrier that both sets of threads take part in (`__syncthreads()`, or a "
         "named barrier whose count includes them).", ("correctness", "race"),
         rationale="A warp-group barrier orders only the threads that execute it. Data written by the whole "
                   "block and read by one warp group after its own barrier is still racing with the others."),
    Rule("global-race", "GlobalRace",
         "Threads of one block hand data through global memory with no barrier between",
         "A thread of the block stores to (or atomically updates) global memory that another thread of "
         "the same block loads or stores, with no barrier both take part in between. `__syncthreads` "
         "orders a block's global accesses as it orders its shared ones. Threads of different blocks "
         "are out of scope: nothing inside a kernel orders them.",
         Severity.ERROR, "Put `__syncthreads()` between the store and the load (and, across blocks, use "
         "a grid-wide synchronisation or separate kernels).", ("correctness", "race"),
         rationale="Workspaces, in-place updates and atomics followed by reads pass data between threads "
                   "through global memory; within a block they need the same barrier as shared memory."),
    Rule("race-undecided", "RaceUndecided",
         "Whether some shared accesses race could not be decided",
         "The model could not decide whether two threads meet on some shared bytes: an index it "
         "cannot evaluate, a call it does not model that receives a shared pointer, or writers "
         "that a condition on data selects. Nothing is claimed about these pairs.",
         Severity.NOTE, "Nothing to fix; the note says which accesses were not checked.", ("coverage",),
         rationale="Unknown is never a reason for an error, and never silent: the note names what was not "
                   "checked so a clean report is not mistaken for a proof."),
    Rule("launch-assumed", "LaunchAssumed",
         "Accesses that meet only under a launch that does not fit the data: taken as not launched",
         "Two threads touch common bytes only for argument values and block indices that put "
         "the whole block past the rows the kernel's global accesses are guarded to (`blockIdx.x * 64 "
         "+ row < T_seq`), or only at two iterations of a loop whose stride is a kernel argument "
         "(`m[Br * i + threadIdx.x]`), which needs the stride below what one iteration's threads "
         "touch (`blockDim.x > Br`). TileLang launches `ceildiv(T_seq, 64)` blocks, and a kernel "
         "tiled by `Br` is launched with blocks that fit the tile, so neither happens; pipelint takes "
         "the launch to fit the data and no more, and says where it did.",
         Severity.NOTE, "Nothing to fix for a launch that fits the data; a launch with more blocks, or "
         "with more threads than a tile's stride, races at the lines named.", ("coverage",),
         rationale="Kernel arguments are parameters of the access sets, and the launch grid is not in the "
                   "kernel text: the guards of its global accesses are what the text says about it. An "
                   "assumption the verdict rests on is stated, never silent."),
)
_R = rules_by_id(RULES)
_KIND = {H.RAW_PLAIN: "RAW", H.WAR_PLAIN: "WAR", H.WAW_PLAIN: "WAW"}


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_check_kernel(kernel: KernelModel, parsed: ParsedFile, path: str) -> list[Finding]:
    hazards = list(kernel.cp_async.plain_hazards) + list(kernel.races.hazards)
    handoff = list(kernel.global_handoff.hazards)
    out: list[Finding] = []
    undecided: list[Hazard] = []
    for h in _distinct(hazards):
        if not h.certain:
            undecided.append(h)
        elif h.first.kind == K.GLOBAL:
            out.append(_global_finding(kernel, path, h))
        else:
            out.append(_finding(kernel, path, h))
    for h in handoff:
        if h.certain:
            out.append(_global_finding(kernel, path, h))
        else:
            undecided.append(h)
    undecided = _not_moot(undecided, hazards)
    if undecided:
        out.append(_undecided(kernel, path, undecided, parsed.source))
    for loop in kernel.trace.once_loops:
        out.append(make_finding(
            _R["race-undecided"], path, kernel, loop,
            f"the loop at line {loop.span.line} holds a barrier or a wait but is walked as one iteration (a "
            f"`while`, or a step other than 1 with a bound known only at run time): hazards between one "
            f"iteration and the next are not checked, and no barrier in it is claimed redundant"))
    launch = kernel.trace.launch
    pairs = list(launch.outside.values()) if launch is not None else []
    if pairs or kernel.layout.regions:
        out.append(_assumed(kernel, path, pairs))
    return out


def _assumed(kernel: KernelModel, path: str, pairs: list) -> Finding:
    """One note for what the verdicts assumed about the launch: the pairs decided by its range
    guards (`model.launch`) or by the tiles it fits (`model.threads.tile_assumption`), and the
    shared regions at run-time offsets taken as disjoint (`SharedLayout.regions`)."""
    regions = kernel.layout.regions
    if not pairs:
        names = ", ".join(f"`{name}`" for name in regions)
        first = next(iter(regions.values()))
        return make_finding(_R["launch-assumed"], path, kernel, first,
                            f"{len(regions)} pointer(s) into shared memory at a run-time offset ({names}) are "
                            f"taken as disjoint regions of their array, each the tile its accesses stay in",
                            [(d, "region") for d in list(regions.values())[1:3]])
    pairs.sort(key=lambda o: (o.first.span.line, o.second.span.line))
    tiled = [o for o in pairs if o.condition.startswith(TILED)]
    ranged = [o for o in pairs if not o.condition.startswith(TILED)]
    parts = []
    if ranged:
        parts.append(f"{len(ranged)} pair(s) of accesses meet only in a block past the rows its global accesses "
                     f"are guarded to, taken as not launched: {_lines(ranged)}")
    if tiled:
        parts.append(f"{len(tiled)} pair(s) of accesses meet only at two iterations of a loop whose stride is a "
                     f"kernel argument, where the stride is below what one iteration's threads touch; taken as "
                     f"tiles the block fits: {_lines(tiled, len(TILED), '(loop over ', ')')}")
    if regions:
        parts.append(f"{len(regions)} pointer(s) into shared memory at a run-time offset "
                     f"({', '.join(f'`{name}`' for name in regions)}) are taken as disjoint regions of their array")
    return make_finding(_R["launch-assumed"], path, kernel, pairs[0].second, "; ".join(parts),
                        [(o.first, "other access") for o in pairs[:3]])


def _lines(pairs: list, skip: int = 0, where: str = "where ", end: str = "") -> str:
    shown = "; ".join(f"lines {o.first.span.line} and {o.second.span.line} {where}{o.condition[skip:]}{end}"
                      for o in pairs[:4])
    return shown + (f"; and {len(pairs) - 4} more" if len(pairs) > 4 else "")


def _distinct(hazards: list[Hazard]) -> Iterator[Hazard]:
    """The hazards to report, each defect once: a read-modify-write statement (`s[0] += x`)
    races with itself through its load and its store, one finding at the statement; any other
    pair once per kind.  A hazard whose first access is an mbarrier init is left out: an
    uninitialised barrier is mbarrier-init-fence's business."""
    seen: set[tuple] = set()
    for h in hazards:
        if h.first.kind == K.MBAR_INIT:
            continue
        key = _defect(h)
        if key not in seen:
            seen.add(key)
            yield h


def _defect(h: Hazard) -> tuple:
    """What tells one reported defect from another (see `_distinct`)."""
    if not (_same_statement(h.first.node, h.second.node) and h.kind != H.WAW_PLAIN):
        return h.kind, id(h.first.node), id(h.second.node)
    outer = max((h.first.node, h.second.node), key=lambda n: (n.span.end_line - n.span.line,
                                                             n.span.end_column - n.span.column))
    return "rmw", outer.span.line, outer.span.column


def _not_moot(undecided: list[Hazard], hazards: list[Hazard]) -> list[Hazard]:
    """The undecided hazards worth a note: a store whose writers' values could not be compared
    is moot where its own statement is already a certain read-modify-write race (`s[0] = s[0] + x`
    by many threads)."""
    racing = {id(n) for h in hazards if h.certain and h.kind != H.WAW_PLAIN
              and _same_statement(h.first.node, h.second.node) for n in (h.first.node, h.second.node)}
    return [h for h in undecided if not (h.kind == H.WAW_PLAIN and h.first.node is h.second.node
                                         and id(h.first.node) in racing)]


def _global_finding(kernel: KernelModel, path: str, h: Hazard) -> Finding:
    a, b = h.first, h.second
    who_a, who_b = _who(kernel, h)
    if h.in_flight:
        waited = f" (the wait at line {h.wait.node.span.line} leaves it in flight)" if h.wait is not None else ""
        return make_finding(
            _R["global-race"], path, kernel, b.node,
            f"race on global memory {a.space or h.buffer} within a block: {who_b} write it at line "
            f"{b.node.span.line} while the cp.async at line {a.node.span.line} may still be reading those "
            f"bytes{waited}; the copy gets the old or the new values, and no barrier orders an asynchronous copy",
            [(a.node, f"cp.async reading {a.space or h.buffer} by {who_a}"),
             (b.node, f"store of {b.space or h.buffer} by {who_b}")],
            help=f"wait for the copy (cp_async_wait<0>) before line {b.node.span.line}; in the TileLang program, "
                 f"a pipelined T.copy prefetches what the loop body then writes: do not pipeline that copy "
                 f"(num_stages) or move the update out of the loop")
    kind = _KIND[h.kind]
    spot = statement_before(kernel.func, a.node, b.node) if a.role == b.role else statement_of(kernel.func, b.node)
    return make_finding(
        _R["global-race"], path, kernel, b.node,
        f"{kind} race on global memory {a.space or h.buffer} within a block: {who_b} access it at line "
        f"{b.node.span.line} "
        f"bytes that {who_a} {'wrote' if h.kind != H.WAR_PLAIN else 'read'} at line {a.node.span.line}, "
        f"with no barrier between",
        [(a.node, f"{'store' if h.kind != H.WAR_PLAIN else 'load'} of {a.space or h.buffer} by {who_a}"),
         (b.node, f"{'load' if h.kind == H.RAW_PLAIN else 'store'} of {b.space or h.buffer} by {who_b}")],
        help=f"insert __syncthreads(); before line {spot.span.line}", at=point(spot))


def _who(kernel: KernelModel, h: Hazard) -> tuple[str, str]:
    return describe(h.first.threads) if h.first.threads else str(kernel.roles[h.first.role]), \
        describe(h.second.threads) if h.second.threads else str(kernel.roles[h.second.role])


def _where(a: Event, b: Event) -> str:
    """When the second access happens, and the first's where it is another iteration (a producer
    that ran ahead: its store of iteration 2 against the load of iteration 0)."""
    where = f"iteration {b.where}" if b.iteration else "outside the pipelined loop"
    if a.where != b.where:
        where += f"; line {a.node.span.line} in {'iteration ' + a.where if a.iteration else 'the ' + a.where}"
    return where


def _finding(kernel: KernelModel, path: str, h: Hazard) -> Finding:
    a, b = h.first, h.second
    wrote, other = a.buffer or h.buffer, b.buffer or h.buffer
    who_a, who_b = _who(kernel, h)
    kind = _KIND[h.kind]
    where = _where(a, b)
    related = [(a.node, f"{'store' if h.kind != H.WAR_PLAIN else 'load'} of {wrote} by {who_a}"),
               (b.node, f"{'load' if h.kind == H.RAW_PLAIN else 'store'} of {other} by {who_b}")]
    one = _one_statement(kernel, path, h, related, who_b)
    if one is not None:
        return one
    if h.scope is not None:
        bar = h.scope.node
        related.append((bar, f"named barrier that {who_a} do not take part in"))
        message = (f"{kind} race on {wrote}/{other}: the named barrier at line {bar.span.line} orders only "
                   f"{describe(h.scope.threads) if h.scope.threads else 'its own threads'}, not {who_a} that "
                   f"accessed it at line {a.node.span.line} ({where})")
        return make_finding(_R["barrier-scope"], path, kernel, b.node, message, related,
                            help=f"replace the barrier at line {bar.span.line} by one that {who_a} also take part "
                                 f"in (__syncthreads())", at=point(bar))
    if h.kind == H.WAR_PLAIN and a.committed:
        return _under_mma(kernel, path, h, related, who_b, where)
    # across roles (different branches) the barrier goes before the second access, in its branch
    spot = statement_before(kernel.func, a.node, b.node) if a.role == b.role else statement_of(kernel.func, b.node)
    rule = _R["shared-write-race"] if h.kind == H.WAW_PLAIN else _R["shared-race"]
    verb = {"RAW": "reads", "WAR": "overwrites", "WAW": "overwrites"}[kind]
    message = (f"{kind} race: {who_b} {verb} {other} at line {b.node.span.line} ({where}) bytes that {who_a} "
               f"{'wrote' if h.kind != H.WAR_PLAIN else 'read'} in {wrote} at line {a.node.span.line}, with no "
               f"barrier both take part in between{_for_arguments(kernel, h)}")
    return make_finding(rule, path, kernel, b.node, message, related,
                        help=_barrier_advice(kernel, h, spot), at=point(spot))


def _barrier_advice(kernel: KernelModel, h: Hazard, spot: A.Node) -> str:
    """What orders the pair: `__syncthreads()` where every thread of the block reaches the spot;
    where only a branch's threads do (a warp-specialised role, an `if` on the thread index), a
    barrier of those threads: `__syncwarp()` within one warp, else a named barrier of their warps
    (a `__syncthreads()` there waits for threads that never come).  When the first access is in
    another branch, its threads arrive on the named barrier after it and the second's sync on it."""
    a, b = h.first, h.second
    plain = f"insert __syncthreads(); before line {spot.span.line}"
    block = (1 << kernel.threads) - 1 if kernel.threads else 0
    # the spot is b's statement, or one around it (the `if` of an elected thread): the role's
    reach = _reach(kernel, spot if spot is not b.node and contains(spot.span, b.node.span) else b.node)
    if not (a.threads and reach and block) or reach & block == block:
        return plain
    ident = _free_barrier_id(kernel)
    if a.threads & ~reach == 0:
        warps = _warps_of(reach)
        if bin(warps).count("1") <= 32:
            lanes = (reach >> ((warps & -warps).bit_length() - 1)) & 0xFFFFFFFF
            call = "__syncwarp()" if lanes == 0xFFFFFFFF else f"__syncwarp({lanes:#010x})"
            return f"insert {call}; before line {spot.span.line} (both accesses are in the warp of {describe(reach)})"
        count = bin(warps).count("1")
        return (f"insert tl::__sync_thread_partial({ident}, {count}); (bar.sync {ident}, {count}) before line "
                f"{spot.span.line}: only {describe(reach)} run it, and a __syncthreads() there would wait for "
                f"threads that never come")
    first, second = _warps_of(_reach(kernel, a.node)), _warps_of(reach)
    count = bin(first | second).count("1")
    return (f"{describe(a.threads)} and {describe(b.threads)} run in different branches: a named barrier of "
            f"both, bar.arrive/bar.sync {ident}, {count}: tl::__named_barrier_arrive({ident}, {count}); by "
            f"{describe(first)} after line {a.node.span.line} (where their whole warps run it) and "
            f"tl::__sync_thread_partial({ident}, {count}); by {describe(second)} before line {spot.span.line}")


def _reach(kernel: KernelModel, stmt: A.Node) -> int:
    """The threads that run `stmt`: for an access, every role's threads of its events (a statement
    after a branch joins is every role's); for a statement around accesses (the `if` of an elected
    thread), the roles with events in the innermost branch that holds it, or the whole block."""
    own = [e.threads for e in kernel.trace.all_events() if e.node is stmt and e.threads]
    if own:
        out = 0
        for threads in own:
            out |= threads
        return out
    branches = [part for n in kernel.func.walk() if isinstance(n, A.If)
                for part in (n.then, n.other) if part is not None and part is not stmt
                and contains(part.span, stmt.span)]
    if not branches:
        return (1 << kernel.threads) - 1
    inner = min(branches, key=lambda part: (part.span.end_line - part.span.line, part.span.end_column))
    out = 0
    for e in kernel.trace.all_events():
        if contains(inner.span, e.node.span):
            role = kernel.roles[e.role]
            out |= ((1 << role.hi) - 1) ^ ((1 << role.lo) - 1)
    return out


def _warps_of(threads: int) -> int:
    """The threads of every warp `threads` has one of (a named barrier counts whole warps)."""
    out, t = 0, threads
    while t:
        low = (t & -t).bit_length() - 1
        warp = ((1 << 32) - 1) << (low // 32 * 32)
        out |= warp
        t &= ~warp
    return out


def _free_barrier_id(kernel: KernelModel) -> int:
    """The lowest named-barrier id (1-15; 0 is __syncthreads) no barrier of the kernel uses."""
    used = {ev.barrier[1] for ev in kernel.trace.all_events()
            if ev.kind in (K.NAMED_SYNC, K.NAMED_ARRIVE) and ev.barrier is not None}
    return next((i for i in range(1, 16) if i not in used), 15)


def _one_statement(kernel: KernelModel, path: str, h: Hazard, related: list, who_b: str) -> Finding | None:
    """A race of one statement with itself: a read-modify-write several threads run on the same
    bytes, or one store several threads run with different values (None for two statements)."""
    a, b = h.first, h.second
    wrote = a.buffer or h.buffer
    if _same_statement(a.node, b.node) and h.kind != H.WAW_PLAIN:
        both = describe(a.threads | b.threads) if a.threads | b.threads else who_b
        message = (f"race on {wrote}: the read-modify-write at line {a.node.span.line} is run by several "
                   f"threads ({both}) on the same bytes, so one thread may read before or after another's "
                   f"store (RAW/WAR) with no ordering between them")
        return make_finding(_R["shared-race"], path, kernel, b.node, message, related,
                            help=f"let one thread update {wrote} (guard line {a.node.span.line}), or use an atomic")
    if a.node is b.node:
        message = (f"WAW race on {wrote}: the store at line {a.node.span.line} is run by several threads that "
                   f"write different values to the same bytes")
        return make_finding(_R["shared-write-race"], path, kernel, a.node, message, related,
                            help=f"guard the store at line {a.node.span.line} so one thread writes")
    return None


def _under_mma(kernel: KernelModel, path: str, h: Hazard, related: list, who: str, where: str) -> Finding:
    """A store into an operand a tcgen05 MMA may still be reading: its reads last until the phase
    its tcgen05.commit arrives in, which the writers have not observed (a barrier does not wait
    for it)."""
    a, b = h.first, h.second
    message = (f"WAR race: {who} overwrite {b.buffer or h.buffer} at line {b.node.span.line} ({where}) while the "
               f"tcgen05 MMA at line {a.node.span.line} may still be reading those bytes: an MMA reads its shared "
               f"operands asynchronously, until the phase its tcgen05.commit arrives in, and nothing orders the "
               f"store after that phase{_for_arguments(kernel, h)}")
    return make_finding(_R["shared-race"], path, kernel, b.node, message, related,
                        help=f"wait on the barrier the MMAs' tcgen05.commit arrives on before line {b.node.span.line}",
                        at=point(statement_of(kernel.func, b.node)))


def _for_arguments(kernel: KernelModel, h: Hazard) -> str:
    """`, where T_seq < 64*blockIdx.x + 64`: the argument values at which the two meet, when
    their indices or guards read kernel arguments (`model.launch`); empty otherwise."""
    a, b = h.first.lanes, h.second.lanes
    if a is None or b is None or not (a.uniform or b.uniform):
        return ""
    found = meeting_condition(a, b, kernel.shift(h.first, h.second),
                              getattr(kernel.index.memo.get("eval"), "opaque", None))
    if not found:
        return ""
    return f", {found}" if found.startswith("for some") else f", where {found}"


def _same_statement(a: A.Node, b: A.Node) -> bool:
    """One access inside the other's statement (`s[0] = s[0] + x`: the store and its own load)."""
    return a is b or contains(b.span, a.span) or contains(a.span, b.span)


def _undecided(kernel: KernelModel, path: str, hazards: list[Hazard], source: str = "") -> Finding:
    first = min(hazards, key=lambda h: (h.second.node.span.line, h.second.node.span.column))
    reasons = sorted({_reason(h, kernel, source) for h in hazards})
    lines = sorted({h.second.node.span.line for h in hazards})
    shown = ", ".join(map(str, lines[:8])) + (", ..." if len(lines) > 8 else "")
    return make_finding(_R["race-undecided"], path, kernel, first.second.node,
                        f"{len(hazards)} pair(s) of shared accesses not decided ({'; '.join(reasons)}): "
                        f"lines {shown}", [(h.first.node, "other access") for h in hazards[:3]])


def _reason(h: Hazard, kernel: KernelModel, source: str = "") -> str:
    for ev in (h.first, h.second):
        if ev.unknown_footprint:
            return "an index that cannot be evaluated" + _why(ev, kernel, source)
        if ev.possible:
            return f"a call that receives a shared pointer ({_callee(ev.node)})"
    for ev in (h.first, h.second):
        if ev.uncertain:
            return "accesses under a condition on data" + _why(ev, kernel, source)
    if h.kind == H.WAW_PLAIN and h.first.node is h.second.node:
        return "one store by several threads whose values cannot be compared (per-thread registers or memory)"
    return "footprints the solver could not decide (an index or guard it cannot translate, or its time limit)"


def _why(ev: Event, kernel: KernelModel, source: str) -> str:
    """What the note names: the expression with no value, and what kind of value it is."""
    node = ev.why
    if node is None:
        return ""
    if ev.uncertain and not ev.unknown_footprint:      # a condition: the memory read or call in it
        node = next((n for n in node.walk() if isinstance(n, A.Index) or (
            isinstance(n, A.Call) and n.name not in ("max", "min"))), node)
    text = " ".join(_text(source, node.span).split())
    if not text:
        return ""
    if len(text) > 60:
        text = text[:57] + "..."
    return f": `{text}`, {_kind_of_value(kernel, node, text)}"


def _kind_of_value(kernel: KernelModel, node: A.Node, text: str) -> str:
    """What kind of value the expression a note names is."""
    if isinstance(node, A.Index):
        return "memory contents"
    if isinstance(node, A.Call):
        return f"the value of a call to {node.name}"
    if isinstance(node, A.Name):
        return "a kernel argument" if node.ident in kernel.params else "a local with no value here"
    if "threadIdx.y" in text or "threadIdx.z" in text:
        return "the thread index of a 2-D or 3-D block, which pipelint does not model"
    return "a value computed from data"


def _text(source: str, span: A.Span) -> str:
    """The source text of an expression on one line (lines and columns 1-based, the end exclusive).
    A node's span leaves out the parentheses around its parts (`((int*)s)[i]` starts at `int`), so
    the text is widened until its brackets balance."""
    lines = source.splitlines()
    if not 0 < span.line == span.end_line <= len(lines):
        return ""
    line = lines[span.line - 1]
    lo, hi = span.column - 1, span.end_column - 1
    for _ in range(len(line)):
        text = line[lo:hi]
        if text.count("(") < text.count(")") and lo > 0:
            lo -= 1
        elif (text.count("(") > text.count(")") or text.count("[") > text.count("]")) and hi < len(line):
            hi += 1
        else:
            break
    return line[lo:hi]


def _callee(node: A.Node) -> str:
    return node.name if isinstance(node, A.Call) else "?"
