"""Witness-directed schedule forcing (issue 36): from a static race finding to CUDA variants that
delay one side of the race.

Dynamic tools see only the schedule that happens to run: a warp-group barrier that orders only its
own group gives 0/200 wrong outputs naturally and 199/200 once the other group is late.  pipelint
knows both accesses of a race, the threads on each side and the iteration, so it can build the
schedule that breaks the kernel instead of waiting for it:

* `witnesses(text)` — for every race-kind finding (shared-race, shared-write-race, barrier-scope,
  missing-barrier, global-race, wait-too-shallow, mbarrier-release, version-overwrite) the two
  sides: statement, threads, loop iteration (from the model's hazards, not from message text).
* `delays_for(witness)` — one `Delay` per side: a clock64/__nanosleep spin, guarded to whole
  warps of that side (warp-uniform, so no divergence before warp-collective code) and, inside a
  pipelined loop, to the witness's iteration, placed before the statement that must come late.
  Delaying the first side exposes RAW/WAR (the writer, or the reader of a slot, arrives last);
  delaying the second side is the other order, which WAW needs too.
* `render(text, delays)` — the exact CUDA with the delays prefixed on the statements' own lines
  (every line keeps its number, so sanitizer reports and `#line` mapping stay valid) and shared
  memory poisoned (0xff: NaN in f16/bf16/f32) at kernel entry, so a read of bytes not yet stored
  shows in the output.  With `select=True` every delay is active only when the device variable
  `pl_fs_select` equals its number: one build serves every variant (set by the host).
* `relocate(delay, twin_text)` — the same delay on the fixed twin, found by the statement's text:
  the control, which must not change the twin's output.

Pure and CPU-only (pipelint's parser and model); the GPU side is `plugins/verify.py`
(`--forced-schedule`) and `benchmarks/validation/forced_schedule.py`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from pipelint.cuda import ast as A

FORCED_RULES = frozenset({"shared-race", "shared-write-race", "barrier-scope", "missing-barrier", "global-race",
                          "wait-too-shallow", "uncommitted-copy", "mbarrier-release", "version-overwrite"})
WARP = 32
DELAY_CYCLES = 4_000_000           # ~2 ms at the H200's 1.98 GHz: far beyond any copy's or barrier's latency
SELECT_VAR = "pl_fs_select"


class PlanError(Exception):
    """A witness or a delay that cannot be turned into CUDA (said in one line, never a traceback)."""


@dataclass(frozen=True)
class Side:
    """One access of a race: where (`line`, the statement's text `anchor` and which occurrence of
    that text it is), who (`threads` of the block that make it) and when (`iteration`: pipelined
    loop variable -> value; empty outside a pipelined loop)."""

    line: int
    column: int
    access: str                        # store | load | copy | tma
    threads: tuple[int, ...]
    iteration: tuple[tuple[str, int], ...] = ()
    anchor: str = ""
    occurrence: int = 0


@dataclass(frozen=True)
class Witness:
    """A finding's schedule witness: `first` must happen before `second` and nothing orders them.
    `pair` is one concrete (thread of first, thread of second) touching a common byte, when known."""

    rule: str
    line: int                          # the finding's primary line
    kind: str                          # RAW | WAR | WAW
    first: Side
    second: Side
    buffer: str = ""
    pair: tuple[int, int] | None = None
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        """The `witness` property of a finding in JSON/SARIF output."""
        def side(s: Side) -> dict[str, Any]:
            return {"line": s.line, "access": s.access, "threads": _ranges(s.threads),
                    "iteration": dict(s.iteration)}
        return {"kind": self.kind, "buffer": self.buffer, "first": side(self.first), "second": side(self.second),
                "pair": list(self.pair) if self.pair else None}


@dataclass(frozen=True)
class Delay:
    """Delay `warps` (whole warps, threadIdx.x / 32) before the statement `anchor` (its
    `occurrence`-th appearance), on iteration `iteration` of the loops named there, `cycles` long.
    `side` says which access of the witness comes late; `separable` is False when the witness's two
    threads share a warp, so no warp-level delay can separate them."""

    side: str                          # "first" | "second"
    line: int
    anchor: str
    occurrence: int
    warps: tuple[int, ...]
    iteration: tuple[tuple[str, int], ...] = ()
    cycles: int = DELAY_CYCLES
    separable: bool = True
    number: int = 0                    # its selector value in an instrumented build (1, 2, ...)

    def describe(self) -> str:
        """`warps 0-3 (threads 0-127) before line 29, k=2, 2.0 ms`: for tables and the `verify.delay` property."""
        threads = tuple(t for w in self.warps for t in range(w * WARP, (w + 1) * WARP))
        it = "".join(f", {v}={n}" for v, n in self.iteration) or ", every iteration"
        return (f"{'warp' if len(self.warps) == 1 else 'warps'} {_ranges(self.warps)} ({_ranges(threads)}) before "
                f"line {self.line}{it}, {self.cycles / 1.98e6:.1f} ms")


@dataclass
class FindingPlan:
    """What forced scheduling will try for one finding."""

    rule: str
    line: int
    message: str
    witness: Witness | None
    delays: list[Delay] = field(default_factory=list)
    why_none: str = ""                 # no witness or no delay: why


# ------------------------------------------------------------------ witnesses from the model
def _ranges(items: tuple[int, ...] | list[int]) -> str:
    out: list[str] = []
    xs = sorted(set(items))
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(f"{xs[i]}-{xs[j]}" if j > i else str(xs[i]))
        i = j + 1
    return ", ".join(out) or "none"


def _members(threads: int) -> tuple[int, ...]:
    from pipelint.model.threads import members

    return tuple(members(threads)) if threads else ()


def _statements(func: A.FunctionDef) -> list[A.Node]:
    """Every statement of the body that sits in a block's statement list, in source order."""
    out: list[A.Node] = []
    if func.body is None:
        return out
    for node in func.body.walk():
        if isinstance(node, A.Compound):
            out.extend(node.body)
    return sorted(out, key=lambda s: (s.span.line, s.span.column))


def _source(lines: list[str], span: A.Span) -> str:
    """The text of `span` (1-based lines and columns), whitespace collapsed."""
    if span.line == span.end_line:
        text = lines[span.line - 1][span.column - 1:span.end_column]
    else:
        text = "\n".join([lines[span.line - 1][span.column - 1:], *lines[span.line:span.end_line - 1],
                          lines[span.end_line - 1][:span.end_column]])
    return " ".join(text.split())


def _column(lines: list[str], stmt: A.Node) -> int:
    """Where a statement's text starts: the first character of its line (TileLang writes one
    statement a line; the parser's column can sit inside a leading cast), unless the line starts
    by closing an earlier block."""
    line = lines[stmt.span.line - 1]
    first = len(line) - len(line.lstrip()) + 1
    return stmt.span.column if line.lstrip().startswith("}") or first > stmt.span.column else first


def _first_line(lines: list[str], stmt: A.Node) -> str:
    """A statement's anchor: the text of its first line from its start (a loop's header, an if's
    condition, a whole one-line statement), whitespace collapsed."""
    return " ".join(lines[stmt.span.line - 1][_column(lines, stmt) - 1:].split())


def _occurrence(lines: list[str], stmts: list[A.Node], stmt: A.Node) -> int:
    anchor = _first_line(lines, stmt)
    same = [s for s in stmts if _first_line(lines, s) == anchor]
    return next(i for i, s in enumerate(same) if s is stmt)


def _side(model: Any, lines: list[str], stmts: list[A.Node], ev: Any, access: str) -> Side:
    from pipelint.model.placement import statement_of

    stmt = statement_of(model.func, ev.node)
    loops = model.trace.loops
    iteration = tuple((loops[lid].var, value) for lid, value in ev.iteration if lid in loops)
    return Side(stmt.span.line, _column(lines, stmt), access, _members(ev.threads), iteration,
                _first_line(lines, stmt), _occurrence(lines, stmts, stmt))


def _pair(model: Any, a: Any, b: Any) -> tuple[int, int] | None:
    """Threads (of a, of b) that touch a common byte, preferring two in different warps."""
    from pipelint.model.threads import collisions_between

    if a.lanes is None or b.lanes is None or getattr(a.lanes, "collective", False) \
            or getattr(b.lanes, "collective", False):
        return None
    try:
        points = collisions_between(a.lanes, b.lanes, model.index.memo["eval"], limit=512,
                                    shift=model.shift(a, b))
    except Exception:  # noqa: BLE001 - a witness pair is an optimisation; the warp sets still work
        return None
    pairs = [(x["threadIdx.x"], y["threadIdx.x"]) for x, y in points or ()]
    return next((p for p in pairs if p[0] // WARP != p[1] // WARP), pairs[0] if pairs else None)


_ACCESS = {"write": "store", "read": "load", "async": "copy"}


def _hazard_witness(model: Any, lines: list[str], stmts: list[A.Node], h: Any) -> Witness:
    from pipelint.model.intrinsics import EventKind as K

    kind = h.kind.value.split("-")[0].upper()
    kind = {"RAW": "RAW", "WAR": "WAR", "WAW": "WAW"}.get(kind, "RAW")

    def access(ev: Any) -> str:
        if ev.kind == K.CP_ASYNC:
            return "copy"
        if ev.kind == K.TMA_LOAD:
            return "tma"
        return _ACCESS.get(ev.access, ev.access or ev.kind.value)

    return Witness("", 0, kind, _side(model, lines, stmts, h.first, access(h.first)),
                   _side(model, lines, stmts, h.second, access(h.second)), h.buffer or "", _pair(model, h.first,
                                                                                               h.second))


def _issue_witness(model: Any, lines: list[str], stmts: list[A.Node], issue: Any) -> Witness | None:
    """mbarrier-release: the read the early release lets through, then the load over its slot."""
    if not issue.related:
        return None
    ev, what = issue.related[0]
    first = _side(model, lines, stmts, ev, "load" if "read" in what else "tma")
    second = _side(model, lines, stmts, issue.event, "tma")
    return Witness("", 0, "WAR", first, second, str(issue.facts.get("buffer", "")))


def _candidates(model: Any, lines: list[str]) -> list[Witness]:
    from pipelint.model.intrinsics import IssueKind as I

    stmts = _statements(model.func)
    out: list[Witness] = []
    hazards = [*model.cp_async.plain_hazards, *model.races.hazards, *model.global_handoff.hazards,
               *model.cp_async.hazards]
    for h in hazards:
        if getattr(h, "certain", True):
            try:
                out.append(_hazard_witness(model, lines, stmts, h))
            except (StopIteration, IndexError, KeyError):
                continue
    for issue in model.mbarrier.issues:
        if issue.kind in (I.WAR_UNRELEASED, I.WAR_UNOBSERVED, I.WAR_UNCONSUMED):
            w = _issue_witness(model, lines, stmts, issue)
            if w is not None:
                out.append(w)
    return out


def _score(w: Witness) -> tuple[int, int]:
    """Prefer witnesses whose sides a warp-level delay can separate."""
    wa = {t // WARP for t in w.first.threads}
    wb = {t // WARP for t in w.second.threads}
    apart = bool(wa - wb) or bool(wb - wa) or (w.pair is not None and w.pair[0] // WARP != w.pair[1] // WARP)
    return (0 if apart else 1, 0 if w.pair else 1)


def witnesses(text: str, path: str = "kernel.cu", host: Any = None) -> list[FindingPlan]:
    """pipelint's findings on `text` that forced scheduling addresses, each with its witness and
    delays (`why_none` says why a finding has none)."""
    return analyze(text, path, host)[0]


def analyze(text: str, path: str = "kernel.cu", host: Any = None) -> tuple[list[FindingPlan], list[Any]]:
    """`witnesses`, and every finding pipelint reports on `text` (for tables of static vs dynamic)."""
    from pipelint.engine import analyze_source
    from pipelint.pluginhost import load_plugins

    host = host or load_plugins()
    _, findings, _, models = analyze_source(path, text, host)
    lines = text.split("\n")
    pool: list[Witness] = []
    for model in models:
        pool.extend(_candidates(model, lines))
    plans: list[FindingPlan] = []
    for f in sorted(findings, key=lambda f: f.sort_key):
        if f.rule not in FORCED_RULES or f.severity.value != "error":
            continue
        near = {r.line for r in f.related if r.path == f.location.path} | {f.location.line}
        match = [w for w in pool if w.first.line in near and w.second.line in near]
        match = match or [w for w in pool if w.second.line in near or w.first.line in near]
        if not match:
            plans.append(FindingPlan(f.rule, f.location.line, f.message, None,
                                     why_none="no hazard of the model matches the finding's lines"))
            continue
        best = replace(min(match, key=_score), rule=f.rule, line=f.location.line, message=f.message)
        plan = FindingPlan(f.rule, f.location.line, f.message, best)
        plan.delays = delays_for(best)
        if not plan.delays:
            plan.why_none = "neither side has threads to delay"
        plans.append(plan)
    return plans, findings


# ------------------------------------------------------------------ delays
def _warps_to_delay(late: Side, other: Side, pair: tuple[int, int] | None, late_is_first: bool) -> tuple[
        tuple[int, ...], bool]:
    """Whole warps of `late`'s threads that do not hold the other side's witness thread."""
    mine = sorted({t // WARP for t in late.threads})
    theirs = {t // WARP for t in other.threads}
    only = [w for w in mine if w not in theirs]
    if only:
        return tuple(only), True
    if pair is not None:
        t_late, t_other = (pair[0], pair[1]) if late_is_first else (pair[1], pair[0])
        return (t_late // WARP,), t_late // WARP != t_other // WARP
    if len(mine) > 1:
        return (mine[0],), True        # some thread of another warp of this side is on the other side
    return tuple(mine[:1]), False


def delays_for(w: Witness, cycles: int = DELAY_CYCLES) -> list[Delay]:
    """Delay the first side (RAW: the writer; WAR: the reader; WAW: one order), then the second
    (the other order).  Empty sides give no delay."""
    out: list[Delay] = []
    for name, late, other in (("first", w.first, w.second), ("second", w.second, w.first)):
        if not late.threads or not late.anchor:
            continue
        warps, separable = _warps_to_delay(late, other, w.pair, name == "first")
        if warps:
            out.append(Delay(name, late.line, late.anchor, late.occurrence, warps, late.iteration, cycles, separable))
    return out


def _guard(delay: Delay, select: bool, declared: frozenset[str]) -> str:
    tid = "((int)threadIdx.x)"
    runs: list[tuple[int, int]] = []
    for wp in sorted(delay.warps):
        if runs and runs[-1][1] == wp * WARP:
            runs[-1] = (runs[-1][0], (wp + 1) * WARP)
        else:
            runs.append((wp * WARP, (wp + 1) * WARP))
    who = " || ".join(f"({lo} <= {tid} && {tid} < {hi})" for lo, hi in runs)
    parts = [f"({who})"]
    parts += [f"({var} == {value})" for var, value in delay.iteration if var in declared]
    if select:
        parts.insert(0, f"({SELECT_VAR} == {delay.number})")
    return " && ".join(parts)


def delay_code(delay: Delay, select: bool = False, declared: frozenset[str] = frozenset()) -> str:
    """The one-line spin inserted before the statement (no newline: line numbers stay)."""
    return (f"if ({_guard(delay, select, declared)}) {{ long long pl_t0 = clock64(); "
            f"while (clock64() - pl_t0 < {delay.cycles}ll) {{ __nanosleep(1000); }} }} ")


def _kernel(unit: A.TranslationUnit, name: str | None = None) -> A.FunctionDef:
    kernels = [f for f in unit.kernels() if name is None or f.name == name]
    if not kernels:
        raise PlanError("no __global__ kernel with a body in the text")
    return kernels[0]


def _locate(lines: list[str], func: A.FunctionDef, anchor: str, occurrence: int) -> A.Node:
    same = [s for s in _statements(func) if _first_line(lines, s) == anchor]
    if occurrence >= len(same):
        raise PlanError(f"no statement {anchor[:60]!r} (occurrence {occurrence + 1}) in the kernel")
    return same[occurrence]


def _loop_vars(func: A.FunctionDef, stmt: A.Node) -> frozenset[str]:
    """Variables of the `for` loops around `stmt` (an iteration guard may name only those)."""
    out: set[str] = set()
    for node in func.body.walk() if func.body is not None else ():
        if isinstance(node, A.For) and isinstance(node.init, A.Declaration) \
                and (node.body.span.line, node.body.span.column) <= (stmt.span.line, stmt.span.column) \
                and (stmt.span.end_line, stmt.span.end_column) <= (node.body.span.end_line, node.body.span.end_column):
            out.update(d.name for d in node.init.declarators)
    return frozenset(out)


def poison_code(arrays: list[tuple[str, bool]]) -> str:
    """Fill every shared array (name, dynamic?) with 0xff bytes, then a barrier: a read of bytes
    no thread has stored yet reads NaN (f16/bf16/f32) instead of a stale plausible value.  The
    dynamic array's size is the launch's (`%dynamic_smem_size`), a static one's its `sizeof`."""
    parts = []
    for name, dynamic in arrays:
        size = "pl_n" if dynamic else f"sizeof({name})"
        head = ("unsigned pl_n; asm volatile(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(pl_n)); "
                if dynamic else "")
        parts.append(f"{{ {head}for (unsigned pl_i = threadIdx.x; pl_i < {size}; pl_i += blockDim.x) "
                     f"((volatile unsigned char*){name})[pl_i] = 0xff; }}")
    return " ".join(parts) + " __syncthreads();" if parts else ""


def _shared_arrays(decls: list[A.Declaration]) -> list[tuple[str, bool]]:
    return [(d.name, decl.has("extern")) for decl in decls if decl.has("__shared__") for d in decl.declarators]


def render(text: str, delays: list[Delay], *, select: bool = False, poison: bool = True,
           kernel: str | None = None) -> str:
    """The variant: `text` with each delay before its statement, shared memory poisoned at entry
    (after the kernel's leading shared declarations), and, with `select`, the `pl_fs_select`
    device variable the host sets.  Every line keeps its number."""
    from pipelint.cuda.parser import CudaSyntaxError, parse

    try:
        unit = parse(text).unit
    except CudaSyntaxError as err:
        raise PlanError(f"the CUDA does not parse: {err.message}") from err
    func = _kernel(unit, kernel)
    lines = text.split("\n")
    inserts: list[tuple[int, int, str]] = []        # (line, column, text) inserted before that column
    for d in delays:
        stmt = _locate(lines, func, d.anchor, d.occurrence)
        inserts.append((stmt.span.line, _column(lines, stmt), delay_code(d, select, _loop_vars(func, stmt))))
    if poison and func.body is not None and func.body.body:
        lead = []
        for s in func.body.body:
            if not isinstance(s, A.Declaration):
                break
            lead.append(s)
        shared = [s for s in lead if isinstance(s, A.Declaration) and s.has("__shared__")]
        code = poison_code(_shared_arrays(shared))
        if code:
            at = shared[-1].span.line
            end = lines[at - 1].find("//", lines[at - 1].rfind(";"))
            inserts.append((at, end + 1 if end >= 0 else len(lines[at - 1]) + 1, " " + code))
    if select:
        inserts.append((func.span.line, 1, f"__device__ int {SELECT_VAR} = 0; "))
    for line, col, code in sorted(inserts, key=lambda x: (x[0], x[1]), reverse=True):
        text = lines[line - 1]
        lines[line - 1] = text[:col - 1] + code + text[col - 1:]
    out = "\n".join(lines)
    try:
        parse(out)
    except CudaSyntaxError as err:       # a bug here, not the user's: say where
        raise PlanError(f"the instrumented CUDA does not parse (line {err.line}): {err.message}") from err
    return out


def number(delays: list[Delay]) -> list[Delay]:
    """The delays numbered 1, 2, ... (their selector values in one instrumented build)."""
    return [replace(d, number=i + 1) for i, d in enumerate(delays)]


def relocate(delay: Delay, twin: str, kernel: str | None = None) -> Delay | None:
    """The same delay on the fixed twin (same statement text, same occurrence), or None when the
    twin has no such statement; its `line` is the twin's."""
    from pipelint.cuda.parser import parse

    lines = twin.split("\n")
    func = _kernel(parse(twin).unit, kernel)
    try:
        stmt = _locate(lines, func, delay.anchor, delay.occurrence)
    except PlanError:
        return None
    return replace(delay, line=stmt.span.line)


def rename_kernel(twin: str, like: str) -> str:
    """`twin` with its kernel named as `like`'s: a twin lowered from another TileLang function
    (`wg_full_sync` for `wg_partial_sync`) must carry the name the host code of `like` launches."""
    from pipelint.cuda.parser import parse

    old, new = _kernel(parse(twin).unit).name, _kernel(parse(like).unit).name
    return twin if old == new else re.sub(rf"\b{re.escape(old)}\b", new, twin)
