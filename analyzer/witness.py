"""A race finding's witness (issue 36): the two accesses, the threads of each side, the loop
iteration and one concrete pair of threads, derived from the kernel model's hazards.

It lives in the core because it needs nothing but the kernel models and the CUDA text, and because
`pipelint check` must carry it: `engine.analyze_source` calls `attach_witnesses` once a file's
findings and models are both known, so JSON and SARIF output, the result cache and every front end
(`check`, the editor, `lower`'s variants) see the same `Finding.witness`.  Forced scheduling
(`pipelint.plugins.forced_schedule`) reads the fuller form, `Witness` with each statement's column
and occurrence, to place its delays: one derivation, two readers.

A finding names a rule and lines, never a hazard object, so the match is by lines: the hazards
whose two statements are the finding's primary and related lines (`match_witnesses`).  Only errors
of the race rules (`RACE_RULES`) get one; the others pass through untouched, so a file without a
race error costs a set lookup per finding.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .cuda import ast as A
from .findings import Finding, WitnessSide
from .findings import Witness as PublicWitness

if TYPE_CHECKING:
    from .model import KernelModel
    from .model.cpasync import Hazard
    from .model.protocol import ProtocolIssue
    from .model.trace import Event

# The rules whose errors a hazard of the model witnesses: the cross-thread races (shared, global,
# barrier scope), the cp.async completions a read outruns, an early mbarrier release and an
# overwritten buffer version.  Rule ids, not hazard kinds: a finding carries only its rule.
RACE_RULES = frozenset({"shared-race", "shared-write-race", "barrier-scope", "missing-barrier", "global-race",
                        "wait-too-shallow", "uncommitted-copy", "mbarrier-release", "version-overwrite"})
WARP = 32


@dataclass(frozen=True)
class Side:
    """One access of a race: where (`line`, the statement's text `anchor` and which occurrence of
    that text it is), who (`threads` of the block that make it) and when (`iteration`: pipelined
    loop variable -> value; empty outside a pipelined loop).  The anchor and occurrence find the
    statement again in an edited copy of the text (forced scheduling's variants and twins)."""

    line: int
    column: int
    access: str                        # store | load | atomic | copy | tma
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

    def public(self, path: str = "") -> PublicWitness:
        """The witness as findings carry it (`pipelint.findings.Witness`): no anchors or columns."""
        def side(x: Side) -> WitnessSide:
            return WitnessSide(x.line, x.access, x.threads, x.anchor, x.iteration)
        return PublicWitness(self.kind, self.buffer, side(self.first), side(self.second), self.pair, path)

    def to_json(self) -> dict[str, object]:
        """The `witness` property of a finding in JSON/SARIF output (`Witness.to_json` of findings)."""
        return self.public().to_json()


def witnessed(f: Finding) -> bool:
    """Whether a finding gets a witness: an error of a race rule (a warning or note claims no
    race that a schedule could show)."""
    return f.rule in RACE_RULES and f.severity.value == "error"


def attach_witnesses(findings: list[Finding], models: list[KernelModel], text: str) -> list[Finding]:
    """`findings` with each race finding's `witness` filled in from the model's hazards (the
    others, and findings no hazard matches, are the same objects).  `engine.analyze_source` runs
    it where a file's findings and its kernel models meet; the witness takes no part in a
    finding's identity, so nothing that compares, fingerprints or deduplicates findings moves."""
    matched = match_witnesses(findings, models, text)
    return [replace(f, witness=matched[i].public(f.location.path)) if i in matched else f
            for i, f in enumerate(findings)]


def match_witnesses(findings: list[Finding], models: list[KernelModel], text: str) -> dict[int, Witness]:
    """For each race error of `findings` (by index) whose lines a hazard of `models` names, that
    hazard's witness.  The one place findings meet the model's hazards: `attach_witnesses`
    (`check`'s output) and forced scheduling's plans both read it.  The analyses are the models'
    memoised ones (already run by the rules that reported the race); nothing is computed for a
    file without a race error."""
    wanted = [i for i, f in enumerate(findings) if witnessed(f)]
    if not wanted:
        return {}
    lines = text.split("\n")
    pool = [c for model in models for c in _candidates(model, lines)]
    out: dict[int, Witness] = {}
    for i in wanted:
        w = _witness_of(findings[i], pool)
        if w is not None:
            out[i] = w
    return out


# ------------------------------------------------------------------ statements of the CUDA text
def statements(func: A.FunctionDef) -> list[A.Node]:
    """Every statement of the body that sits in a block's statement list, in source order."""
    out: list[A.Node] = []
    if func.body is None:
        return out
    for node in func.body.walk():
        if isinstance(node, A.Compound):
            out.extend(node.body)
    return sorted(out, key=lambda s: (s.span.line, s.span.column))


def statement_column(lines: list[str], stmt: A.Node) -> int:
    """Where a statement's text starts: the first character of its line (TileLang writes one
    statement a line; the parser's column can sit inside a leading cast), unless the line starts
    by closing an earlier block."""
    line = lines[stmt.span.line - 1]
    first = len(line) - len(line.lstrip()) + 1
    return stmt.span.column if line.lstrip().startswith("}") or first > stmt.span.column else first


def statement_anchor(lines: list[str], stmt: A.Node) -> str:
    """A statement's anchor: the text of its first line from its start (a loop's header, an if's
    condition, a whole one-line statement), whitespace collapsed."""
    return " ".join(lines[stmt.span.line - 1][statement_column(lines, stmt) - 1:].split())


def anchor_occurrence(lines: list[str], stmts: list[A.Node], stmt: A.Node) -> int:
    """Which appearance of its anchor text `stmt` is among `stmts` (0: the first)."""
    anchor = statement_anchor(lines, stmt)
    same = [s for s in stmts if statement_anchor(lines, s) == anchor]
    return next(i for i, s in enumerate(same) if s is stmt)


# ------------------------------------------------------------------ witnesses from the model
def _members(threads: int) -> tuple[int, ...]:
    from .model.threads import members

    return tuple(members(threads)) if threads else ()


def _side(model: KernelModel, lines: list[str], stmts: list[A.Node], ev: Event, access: str) -> Side:
    from .model.placement import statement_of

    stmt = statement_of(model.func, ev.node)
    loops = model.trace.loops
    iteration = tuple((loops[lid].var, value) for lid, value in ev.iteration if lid in loops)
    return Side(stmt.span.line, statement_column(lines, stmt), access, _members(ev.threads), iteration,
                statement_anchor(lines, stmt), anchor_occurrence(lines, stmts, stmt))


def _pair(model: KernelModel, a: Event, b: Event) -> tuple[int, int] | None:
    """Threads (of a, of b) that touch a common byte, preferring two in different warps.

    The enumeration of both footprints is most of a witness's cost (about 10 ms for 128 threads
    times 8 iterations of 16 bytes), and findings of several rules at the same lines and forced
    scheduling's second match (`forced_schedule.analyze`, over the same models) ask for the same
    pair: kept in the model's memo, by the events' identity (the entry holds the events, so an
    identity is never reused under it)."""
    memo = model.index.memo.setdefault("witness-pairs", {})
    hit = memo.get((id(a), id(b)))
    if hit is not None and hit[0] is a and hit[1] is b:
        return hit[2]
    pair = _collision_pair(model, a, b)
    memo[(id(a), id(b))] = (a, b, pair)
    return pair


def _collision_pair(model: KernelModel, a: Event, b: Event) -> tuple[int, int] | None:
    from .model.threads import collisions_between

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


def _access(ev: Event) -> str:
    from .model.intrinsics import EventKind as K

    if ev.kind == K.CP_ASYNC:
        return "copy"
    if ev.kind == K.TMA_LOAD:
        return "tma"
    return _ACCESS.get(ev.access or "", ev.access or ev.kind.value)


def _hazard_witness(model: KernelModel, lines: list[str], stmts: list[A.Node], h: Hazard) -> Witness:
    kind = h.kind.value.split("-")[0].upper()
    kind = kind if kind in ("RAW", "WAR", "WAW") else "RAW"
    return Witness("", 0, kind, _side(model, lines, stmts, h.first, _access(h.first)),
                   _side(model, lines, stmts, h.second, _access(h.second)), h.buffer or "",
                   _pair(model, h.first, h.second))


def _issue_witness(model: KernelModel, lines: list[str], stmts: list[A.Node], issue: ProtocolIssue) -> Witness | None:
    """mbarrier-release: the read the early release lets through, then the load over its slot."""
    if not issue.related:
        return None
    ev, what = issue.related[0]
    first = _side(model, lines, stmts, ev, "load" if "read" in what else "tma")
    second = _side(model, lines, stmts, issue.event, "tma")
    return Witness("", 0, "WAR", first, second, str(issue.facts.get("buffer", "")))


@dataclass(frozen=True)
class _Candidate:
    """A hazard of the model that may be a finding's witness: its two statements' lines (cheap to
    match) and how to build the witness (the collision pair is computed only for a match)."""

    lines: tuple[int, int]
    build: Callable[[], Witness | None]


def _candidates(model: KernelModel, lines: list[str]) -> list[_Candidate]:
    from .model.intrinsics import IssueKind as I
    from .model.placement import statement_of

    stmts = statements(model.func)
    out: list[_Candidate] = []

    def line_of(ev: Event) -> int:
        return int(statement_of(model.func, ev.node).span.line)

    hazards: Iterable[Hazard] = [*model.cp_async.plain_hazards, *model.races.hazards,
                                 *model.global_handoff.hazards, *model.cp_async.hazards]
    for h in hazards:
        if getattr(h, "certain", True):
            with contextlib.suppress(StopIteration, IndexError, KeyError, AttributeError):
                out.append(_Candidate((line_of(h.first), line_of(h.second)),
                                      functools.partial(_hazard_witness, model, lines, stmts, h)))
    for issue in model.mbarrier.issues:
        if issue.kind in (I.WAR_UNRELEASED, I.WAR_UNOBSERVED, I.WAR_UNCONSUMED) and issue.related:
            with contextlib.suppress(StopIteration, IndexError, KeyError, AttributeError):
                out.append(_Candidate((line_of(issue.related[0][0]), line_of(issue.event)),
                                      functools.partial(_issue_witness, model, lines, stmts, issue)))
    return out


def _score(w: Witness) -> tuple[int, int]:
    """Prefer witnesses whose sides a warp-level delay can separate."""
    wa = {t // WARP for t in w.first.threads}
    wb = {t // WARP for t in w.second.threads}
    apart = bool(wa - wb) or bool(wb - wa) or (w.pair is not None and w.pair[0] // WARP != w.pair[1] // WARP)
    return (0 if apart else 1, 0 if w.pair else 1)


def _witness_of(f: Finding, pool: list[_Candidate]) -> Witness | None:
    """The best witness among the model's hazards whose statements are the finding's lines (its
    primary and related lines of the same file; failing both, one of them), or None."""
    near = {r.line for r in f.related if r.path == f.location.path} | {f.location.line}
    match = [c for c in pool if c.lines[0] in near and c.lines[1] in near]
    match = match or [c for c in pool if c.lines[0] in near or c.lines[1] in near]
    best = _best(match)
    if best is None:
        return None
    return replace(best, rule=f.rule, line=f.location.line, message=f.message)


def _best(match: list[_Candidate]) -> Witness | None:
    """The first of the best-scoring witnesses the candidates build; (0, 0) is the best there is:
    the search stops there."""
    best: Witness | None = None
    for c in match:
        w = None
        with contextlib.suppress(StopIteration, IndexError, KeyError, AttributeError):
            w = c.build()
        if w is not None and (best is None or _score(w) < _score(best)):
            best = w
            if _score(w) == (0, 0):
                break
    return best

