"""Witness-directed schedule forcing (issue 36): from a static race finding to CUDA variants that
delay one side of the race.

Dynamic tools see only the schedule that happens to run: a warp-group barrier that orders only its
own group gives 0/200 wrong outputs naturally and 199/200 once the other group is late.  pipelint
knows both accesses of a race, the threads on each side and the iteration, so it can build the
schedule that breaks the kernel instead of waiting for it:

* `witnesses(text)` — for every race-kind finding (shared-race, shared-write-race, barrier-scope,
  missing-barrier, global-race, wait-too-shallow, mbarrier-release, version-overwrite) the two
  sides: statement, threads, loop iteration (from the model's hazards, not from message text).
  The derivation is the core's (`pipelint.witness`, which also fills `Finding.witness` for
  `check`); this module reads its fuller `Witness`, whose sides carry each statement's column and
  occurrence, to place the delays.
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
from pipelint.findings import thread_ranges
from pipelint.witness import (
    WARP,
    Side,
    Witness,
    anchor_occurrence,
    match_witnesses,
    statement_anchor,
    statement_column,
    statements,
    witnessed,
)

DELAY_CYCLES = 4_000_000           # ~2 ms at the H200's 1.98 GHz: far beyond any copy's or barrier's latency
SELECT_VAR = "pl_fs_select"
SPIN, HEAL, REFILL = "spin", "heal", "refill"
STRETCH, STRESS = "stretch", "stress"
STRETCH_REPEATS = (8, 32)          # the wgmma batch issued this many times before its commit (STRETCH)
REFILL_BARRIER = 15                # the named barrier a poisoning group meets at (TileLang numbers its own from 1 up)


class PlanError(Exception):
    """A witness or a delay that cannot be turned into CUDA (said in one line, never a traceback)."""


def _ranges(items: tuple[int, ...] | list[int]) -> str:
    return thread_ranges(tuple(items))


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
    mode: str = SPIN                   # SPIN | HEAL (a spin of every warp of the side) | REFILL
    refill: tuple[str, int] | None = None   # REFILL: (the load's destination expression, its bytes)
    group: int = 0                     # REFILL: the threads that poison (0: the loading thread alone)
    hot: tuple[str, str] | None = None  # REFILL before the slot's wait: (its mbarrier, its parity), polled
    repeat: int = 0                    # STRETCH: the batch statement (`anchor`) issued this many times
    joint: tuple[Delay, ...] = ()      # delays active together with this one (the same variant, the same number)

    def describe(self) -> str:
        """`warps 0-3 (threads 0-127) before line 29, k=2, 2.0 ms`: for tables and the `verify.delay` property."""
        own = self._describe_one()
        return " + ".join([own, *(j.describe() for j in self.joint)])

    def _describe_one(self) -> str:
        if self.mode == STRETCH:
            return (f"the wgmma batch at line {self.line} issued {self.repeat} times on the same operands before its "
                    f"commit (buggy and twin alike), every iteration")
        if self.mode == STRESS:
            return ("memory stress: a bandwidth hog on another stream (one 512-thread block per SM, streaming "
                    "read-modify-write over 2 GiB) co-running with the launch")
        if self.mode == REFILL and self.refill is not None:
            who = f"threads 0-{self.group - 1} (mod {self.group}) of the loading group" if self.group \
                else "the loading thread"
            hot = ", the group polling the release while it loads the slot" if self.hot else ""
            return (f"slot refilled with 0xff at its release by {who}{hot}: {self.refill[1]} bytes at "
                    f"{self.refill[0]}, before line {self.line}, every iteration")
        threads = tuple(t for w in self.warps for t in range(w * WARP, (w + 1) * WARP))
        it = "".join(f", {v}={n}" for v, n in self.iteration) or ", every iteration"
        heal = " (every warp of the side: the missing order emulated)" if self.mode == HEAL else ""
        return (f"{'warp' if len(self.warps) == 1 else 'warps'} {_ranges(self.warps)} ({_ranges(threads)}) before "
                f"line {self.line}{it}, {self.cycles / 1.98e6:.1f} ms{heal}")


@dataclass
class FindingPlan:
    """What forced scheduling will try for one finding."""

    rule: str
    line: int
    message: str
    witness: Witness | None
    delays: list[Delay] = field(default_factory=list)
    why_none: str = ""                 # no witness or no delay: why


# ------------------------------------------------------------------ plans
def witnesses(text: str, path: str = "kernel.cu", host: Any = None) -> list[FindingPlan]:
    """pipelint's findings on `text` that forced scheduling addresses, each with its witness and
    delays (`why_none` says why a finding has none)."""
    return analyze(text, path, host)[0]


def _plan(f: Any, w: Witness | None, lines: list[str]) -> FindingPlan:
    if w is None:
        return FindingPlan(f.rule, f.location.line, f.message, None,
                           why_none="no hazard of the model matches the finding's lines")
    plan = FindingPlan(f.rule, f.location.line, f.message, w)
    plan.delays = delays_for(w) + refills_for(w, lines) + stress_for(w)
    if not plan.delays:
        plan.why_none = "neither side has threads to delay"
    return plan


def analyze(text: str, path: str = "kernel.cu", host: Any = None) -> tuple[list[FindingPlan], list[Any]]:
    """`witnesses`, and every finding pipelint reports on `text` (for tables of static vs dynamic).
    The findings carry the public witness already (`engine.analyze_source`); the plans need the
    fuller one, matched again from the same memoised analyses (a few milliseconds)."""
    from pipelint.engine import analyze_source
    from pipelint.pluginhost import load_plugins

    _, findings, _, models = analyze_source(path, text, host or load_plugins())
    findings = sorted(findings, key=lambda f: f.sort_key)
    matched = match_witnesses(findings, models, text)
    lines = text.split("\n")
    plans = [_plan(f, matched.get(i), lines) for i, f in enumerate(findings) if witnessed(f)]
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
    (the other order).  Empty sides give no delay.  Then, where the second side has warps the
    second delay left out, a HEAL delay of every warp of the second side: it emulates the missing
    order (every late access after every early one), so a kernel whose natural runs are all wrong
    gives the right output under it when the race is the cause, and only then."""
    out: list[Delay] = []
    for name, late, other in (("first", w.first, w.second), ("second", w.second, w.first)):
        if not late.threads or not late.anchor:
            continue
        warps, separable = _warps_to_delay(late, other, w.pair, name == "first")
        if warps:
            out.append(Delay(name, late.line, late.anchor, late.occurrence, warps, late.iteration, cycles, separable))
    late = w.second
    every = tuple(sorted({t // WARP for t in late.threads}))
    if late.anchor and every and all(d.warps != every for d in out if d.side == "second"):
        out.append(Delay("second", late.line, late.anchor, late.occurrence, every, late.iteration, cycles, True,
                         mode=HEAL))
    return out


_TX = re.compile(r"(?:expect_transaction|arrive_and_expect_tx|expect_tx)\s*\(\s*(\d+)\s*\)")


def refills_for(w: Witness, lines: list[str]) -> list[Delay]:
    """REFILL for a witness whose late side is a TMA load over a slot another side still reads (an
    early mbarrier release): the loading thread fills the load's destination with 0xff the moment
    the release lets it through, before the load itself.  The read's window is the asynchronous
    wgmma's own read time, which no thread delay stretches; the store is the earliest overwrite
    the protocol allows, so a read still in flight reads NaN.  The bytes are those an
    `expect_transaction(N)` on the line right above the load announces (for that load alone);
    without one (a load in a loop, several loads under one count) no refill: poisoning more than
    the load writes would clobber a slot still legitimately read."""
    late = w.second
    if late.access != "tma" or not late.anchor.startswith("tl::tma_load("):
        return []
    dest = _tma_destination(late.anchor)
    above = _TX.search(lines[late.line - 2]) if late.line >= 2 else None
    size = int(above.group(1)) if above else 0
    if dest is None or size <= 0 or size % 16:
        return []
    group = _elect_group(lines, late.line)
    if group is not None:
        (anchor, occurrence, line, n), wait = group
        out = [Delay("second", line, anchor, occurrence, (), (), 0, True, mode=REFILL, refill=(dest, size), group=n)]
        if wait is not None:
            w_anchor, w_occurrence, w_line, hot = wait
            out.append(Delay("second", w_line, w_anchor, w_occurrence, (), (), 0, True, mode=REFILL,
                             refill=(dest, size), group=n, hot=hot))
    else:
        out = [Delay("second", late.line, late.anchor, late.occurrence, (), (), 0, True, mode=REFILL,
                     refill=(dest, size))]
    return out + stretches_for(w, lines, out)


def stretches_for(w: Witness, lines: list[str], refills: list[Delay]) -> list[Delay]:
    """STRETCH for a witness whose early side is a wgmma read (`tl::wgmma_*`) of a slot an early
    release hands to a TMA load: the batch of wgmma between `tl::warpgroup_arrive();` and
    `tl::warpgroup_commit_batch();` issued N times on the same operands (a `for` prefixed on the
    batch's outermost statement, its line kept), so the reads still in flight when the release
    lets the producer through last N times longer.  The protocol is unchanged (the same arrive,
    commit, wait); only the duration of the asynchronous read is stretched, and the twin gets the
    same stretch, so its output (N times the product) is the answer to compare with.  Each N
    alone (the natural TMA overwrite) and, for the largest N, together with each refill."""
    early = w.first
    if not early.anchor.startswith("tl::wgmma"):
        return []
    batch = _wgmma_batch(lines, early.line)
    if batch is None:
        return []
    anchor, occurrence, line = batch
    out = [Delay("first", line, anchor, occurrence, (), (), 0, True, mode=STRETCH, repeat=n) for n in STRETCH_REPEATS]
    top = out[-1]
    out += [replace(top, joint=(r,)) for r in refills]
    return out


def _wgmma_batch(lines: list[str], line: int) -> tuple[str, int, int] | None:
    """The outermost statement holding `line` that lies between the closest
    `tl::warpgroup_arrive();` above it and the closest `tl::warpgroup_commit_batch();` below
    it: (anchor, occurrence, line)."""
    from pipelint.cuda.parser import CudaSyntaxError, parse

    try:
        func = _kernel(parse("\n".join(lines)).unit)
    except (CudaSyntaxError, PlanError):
        return None
    stmts = statements(func)
    anchors = [statement_anchor(lines, s) for s in stmts]
    arrive = max((s.span.line for s, a in zip(stmts, anchors)
                  if a == "tl::warpgroup_arrive();" and s.span.line < line), default=None)
    commit = min((s.span.line for s, a in zip(stmts, anchors)
                  if a == "tl::warpgroup_commit_batch();" and s.span.line > line), default=None)
    if arrive is None or commit is None:
        return None
    inside = [s for s in stmts if arrive < s.span.line <= line <= s.span.end_line < commit]
    if not inside:
        return None
    top = min(inside, key=lambda s: (s.span.line, s.span.column))
    return statement_anchor(lines, top), anchor_occurrence(lines, stmts, top), top.span.line


def stress_for(w: Witness) -> list[Delay]:
    """STRESS for a witness whose two sides are one and the same threads and whose early side is
    an asynchronous copy (`cp.async` read back by the thread that issued it: a too-shallow wait,
    an uncommitted copy): no thread delay separates a thread from its own copy, so the copy's
    flight time is what must stretch.  The run starts a memory-bandwidth hog on another stream
    first (the host program, `PL_FS_STRESS=1`); the kernel's text is unchanged."""
    if w.first.access != "copy" or not w.first.threads or set(w.first.threads) != set(w.second.threads):
        return []
    return [Delay("first", w.first.line, w.first.anchor, w.first.occurrence, (), (), 0, False, mode=STRESS)]


_ELECT = re.compile(r"^if \(tl::tl_shuffle_elect<(\d+)>\(\)\)")
_WAIT = re.compile(r"^(\w+\[[^;]*\])\.wait\((.*)\);$")

_Place = tuple[str, int, int, int]                  # anchor, occurrence, line, group size


def _elect_group(lines: list[str], line: int) -> tuple[_Place, tuple[str, int, int, tuple[str, str]] | None] | None:
    """The `if (tl::tl_shuffle_elect<N>())` right around a load (within three lines above it):
    its anchor, occurrence and line, and N, the group whose one elected thread issues the load.
    The whole group then poisons the slot (N threads store at once: the slot is covered within
    a few stores of the release, while one thread would need hundreds), then meets at a named
    barrier so that the elected thread's load comes after every poison store.  Also the slot's
    `mbarrier[i].wait(parity);` on the line above the `if`, when there is one (anchor,
    occurrence, line, (barrier, parity)): a hot refill polls it instead of sleeping in it."""
    from pipelint.cuda.parser import CudaSyntaxError, parse

    try:
        func = _kernel(parse("\n".join(lines)).unit)
    except (CudaSyntaxError, PlanError):
        return None
    stmts = statements(func)
    for i, stmt in enumerate(stmts):
        m = _ELECT.match(statement_anchor(lines, stmt))
        if not (isinstance(stmt, A.If) and m and line - 3 <= stmt.span.line < line <= stmt.span.end_line
                and int(m.group(1)) % WARP == 0 and int(m.group(1)) > 0):
            continue
        place = (statement_anchor(lines, stmt), anchor_occurrence(lines, stmts, stmt), stmt.span.line, int(m.group(1)))
        before = stmts[i - 1] if i > 0 else None
        w = _WAIT.match(statement_anchor(lines, before)) if before is not None else None
        if before is None or w is None or before.span.line != stmt.span.line - 1:
            return place, None
        return place, (statement_anchor(lines, before), anchor_occurrence(lines, stmts, before), before.span.line,
                       (w.group(1), w.group(2)))
    return None


def _tma_destination(call: str) -> str | None:
    """The third argument of a one-line `tl::tma_load(desc, barrier, DEST, ...)` call (split at
    the commas outside brackets)."""
    args: list[str] = []
    depth, cur = 0, ""
    for ch in call[call.index("(") + 1:]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                args.append(cur.strip())
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return args[2] if len(args) >= 3 and args[2] else None


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


def _hot_wait(delay: Delay) -> str:
    """For a hot refill: poll the slot's mbarrier (`test_wait`, which never suspends the thread,
    where the kernel's own `wait` sleeps in `try_wait`) while loading the slot's bytes (reads:
    they change nothing, and they compete with the reads still in flight), so the poison lands
    the moment the release completes.  The kernel's own wait, right after, then passes at once."""
    if delay.hot is None or delay.refill is None:
        return ""
    barrier, parity = delay.hot
    n, size = max(1, delay.group), delay.refill[1]
    return (f"unsigned pl_b = (unsigned)__cvta_generic_to_shared((const void*)(&({barrier}))); unsigned pl_done = 0; "
            f"while (!pl_done) {{ for (int pl_j = 0; pl_j < {max(1, size // (16 * n))}; ++pl_j) {{ unsigned pl_x, "
            f"pl_y, pl_z, pl_w; asm volatile(\"ld.shared.v4.u32 {{%0, %1, %2, %3}}, [%4];\" : \"=r\"(pl_x), "
            f"\"=r\"(pl_y), \"=r\"(pl_z), \"=r\"(pl_w) : \"r\"(pl_d + ((16 * (((int)threadIdx.x) % {n}) + "
            f"pl_j * {16 * n}) % {size})) : \"memory\"); }} asm volatile(\"{{ .reg .pred P1; "
            f"mbarrier.test_wait.parity.shared::cta.b64 P1, [%1], %2; selp.b32 %0, 1, 0, P1; }}\" : "
            f"\"=r\"(pl_done) : \"r\"(pl_b), \"r\"((unsigned)({parity})) : \"memory\"); }} ")


def delay_code(delay: Delay, select: bool = False, declared: frozenset[str] = frozenset()) -> str:
    """The one-line spin inserted before the statement (no newline: line numbers stay); for a
    REFILL, the poison stores of the load's destination, last bytes first (the last wgmma of a
    batch reads them), then the proxy fence that orders them before the TMA's own writes."""
    if delay.mode == STRESS:
        return ""                      # the host program's doing (PL_FS_STRESS), not the kernel's
    if delay.mode == STRETCH:
        times = f"(({SELECT_VAR} == {delay.number}) ? {delay.repeat} : 1)" if select else str(delay.repeat)
        return f"for (int pl_r = 0; pl_r < {times}; ++pl_r) "
    if delay.mode == REFILL and delay.refill is not None:
        dest, size = delay.refill
        cond = f"if ({SELECT_VAR} == {delay.number}) " if select else ""
        n = max(1, delay.group)
        start = f"{size - 16} - 16 * (((int)threadIdx.x) % {n})" if delay.group else str(size - 16)
        meet = f" asm volatile(\"bar.sync {REFILL_BARRIER}, {n};\" ::: \"memory\");" if delay.group else ""
        return (f"{cond}{{ unsigned pl_d = (unsigned)__cvta_generic_to_shared((const void*)({dest})); "
                f"{_hot_wait(delay)}"
                f"for (int pl_i = {start}; pl_i >= 0; pl_i -= {16 * n}) {{ asm volatile(\"st.shared.v4.u32 [%0], "
                f"{{%1, %1, %1, %1}};\" :: \"r\"(pl_d + pl_i), \"r\"(~0u) : \"memory\"); }} "
                f"asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");{meet} }} ")
    return (f"if ({_guard(delay, select, declared)}) {{ long long pl_t0 = clock64(); "
            f"while (clock64() - pl_t0 < {delay.cycles}ll) {{ __nanosleep(1000); }} }} ")


def _kernel(unit: A.TranslationUnit, name: str | None = None) -> A.FunctionDef:
    kernels = [f for f in unit.kernels() if name is None or f.name == name]
    if not kernels:
        raise PlanError("no __global__ kernel with a body in the text")
    return kernels[0]


def _locate(lines: list[str], func: A.FunctionDef, anchor: str, occurrence: int) -> A.Node:
    same = [s for s in statements(func) if statement_anchor(lines, s) == anchor]
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


def _poison_insert(func: A.FunctionDef, lines: list[str]) -> list[tuple[int, int, str]]:
    """Where the poison goes: after the last `__shared__` declaration of the kernel's leading
    declarations (before a trailing `//` comment on its line); nothing without one."""
    lead = []
    for s in func.body.body if func.body is not None else ():
        if not isinstance(s, A.Declaration):
            break
        lead.append(s)
    shared = [s for s in lead if s.has("__shared__")]
    code = poison_code(_shared_arrays(shared))
    if not code:
        return []
    at = shared[-1].span.line
    end = lines[at - 1].find("//", lines[at - 1].rfind(";"))
    return [(at, end + 1 if end >= 0 else len(lines[at - 1]) + 1, " " + code)]


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
        for part in (d, *(replace(j, number=d.number) for j in d.joint)):
            if part.mode == STRESS:
                continue
            stmt = _locate(lines, func, part.anchor, part.occurrence)
            inserts.append((stmt.span.line, statement_column(lines, stmt),
                            delay_code(part, select, _loop_vars(func, stmt))))
    if poison:
        inserts.extend(_poison_insert(func, lines))
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
    joint = []
    for j in delay.joint:
        moved = relocate(j, twin, kernel)
        if moved is None:
            return None
        joint.append(moved)
    if delay.mode == STRESS:
        return replace(delay, joint=tuple(joint))
    try:
        stmt = _locate(lines, func, delay.anchor, delay.occurrence)
    except PlanError:
        return None
    return replace(delay, line=stmt.span.line, joint=tuple(joint))


def rename_kernel(twin: str, like: str) -> str:
    """`twin` with its kernel named as `like`'s: a twin lowered from another TileLang function
    (`wg_full_sync` for `wg_partial_sync`) must carry the name the host code of `like` launches."""
    from pipelint.cuda.parser import parse

    old, new = _kernel(parse(twin).unit).name, _kernel(parse(like).unit).name
    return twin if old == new else re.sub(rf"\b{re.escape(old)}\b", new, twin)
