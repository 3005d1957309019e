"""One buffer's findings, hovers and inlay hints, in pipelint's own terms (no LSP types here).

A Python buffer: every kernel the workers lowered is checked per variant (the same engine,
plugins and `[tool.pipelint]` as `check`, the variant checks of `lower`), each finding moved
to the user's line through `#line` and grouped per (rule, line) over variants (sm_80 and
sm_90 finding the same race is one diagnostic), with the other Python lines involved as
related locations.  Findings that have no line of their own (a variant's shared-memory
budget) go to the kernel's `T.Pipelined` line, a kernel that does not lower gets one
diagnostic on its factory's `def` line.  A `.cu` buffer is checked as `check` would.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..findings import Finding, Report, Severity
from ..lowering.sweep import LoweredVariant
from ..relocate import python_first
from .pysource import PipelinedLoop, PySource, SharedAlloc, scan

# Findings about a whole variant (no line of their own): shown on the kernel's T.Pipelined line.
LOWERING_FAILED = "lowering-failed"
MAX_RELATED = 8


@dataclass(frozen=True)
class Related:
    path: str
    line: int               # 1-based
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic: 1-based `line`, 0-based columns over the line's text."""

    line: int
    col: int
    end_col: int
    severity: Severity
    rule: str
    message: str
    related: tuple[Related, ...] = ()
    help: str = ""
    doc: str = ""           # the rule's documentation page
    variants: tuple[str, ...] = ()


@dataclass
class VariantFacts:
    """What one lowered variant of a kernel became (for hovers and inlay hints)."""

    arch: str
    num_stages: int | None
    ok: bool
    error: str | None = None
    stage: list[int] | None = None
    order: list[int] | None = None
    versions: dict[str, int] = field(default_factory=dict)
    buffer_bytes: dict[str, int] = field(default_factory=dict)
    wait: tuple[int, int] | None = None
    in_flight: int | None = None
    barriers: int | None = None
    smem: int | None = None
    tma: bool = False
    findings: int = 0

    @property
    def label(self) -> str:
        return f"{self.arch} s{self.num_stages}" if self.num_stages is not None else self.arch


@dataclass
class FileAnalysis:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    loops: list[tuple[PipelinedLoop, list[VariantFacts]]] = field(default_factory=list)
    allocs: list[tuple[SharedAlloc, list[VariantFacts]]] = field(default_factory=list)
    lowered: bool = False       # whether any kernel was lowered (else: no hovers, no hints)
    errors: list[str] = field(default_factory=list)     # tool errors (a crashed plugin): logged
    seconds: float = 0.0
    cached: bool = False

    def hover(self, line: int, col: int) -> str | None:
        """Markdown for a position (1-based line, 0-based column) on a `T.Pipelined` loop."""
        for loop, facts in self.loops:
            if loop.span.line <= line <= loop.span.end_line:
                return hover_text(loop, facts)
        for alloc, facts in self.allocs:
            if alloc.span.line <= line <= alloc.span.end_line:
                return alloc_hover(alloc, facts)
        return None

    def inlay_hints(self, first: int, last: int) -> list[tuple[int, int, str]]:
        """(1-based line, 0-based column, label) after each T.Pipelined(...) and T.alloc_shared(...)."""
        hints = []
        for loop, facts in self.loops:
            label = side_by_side(facts, loop_label)
            if label and first <= loop.span.end_line <= last:
                hints.append((loop.span.end_line, loop.span.end_col, label))
        for alloc, facts in self.allocs:
            label = side_by_side(facts, lambda v, a=alloc: alloc_label(v, a.name))
            if label and first <= alloc.span.end_line <= last:
                hints.append((alloc.span.end_line, alloc.span.end_col, label))
        return hints


# ------------------------------------------------------------------ Python buffers
def analyze_python(path: str, text: str, lowered: dict, host: Any, config: Any,
                   dump_dir: Path | None = None) -> FileAnalysis:
    """Findings, hovers and hints of a TileLang buffer from the workers' result (`lsp.worker`)."""
    src = scan(text)
    out = FileAnalysis(path)
    if not lowered.get("ok"):
        line = lowered.get("line") or 1
        message = f"pipelint could not lower this file: {lowered.get('error')}"
        out.diagnostics.append(_failure(text, line, host, message))
        return out
    report, per_kernel = _check_kernels(lowered, src, host, config, dump_dir)
    out.errors = [e.message for e in report.errors]
    out.lowered = any(lv.ok for _, vs in per_kernel for lv in vs)
    kept = _kept(report, path, src, per_kernel, text, host)
    out.diagnostics = _group(kept, text, host, path)
    for name, variants in per_kernel:
        _attach_facts(out, src, name, variants, kept, len(per_kernel) == 1)
    return out


def _check_kernels(lowered: dict, src: PySource, host: Any, config: Any,
                   dump_dir: Path | None) -> tuple[Report, list[tuple[str, list[LoweredVariant]]]]:
    """Every kernel's variants checked, then the sweep checks over each kernel's variants; the
    report finished as `check` finishes it, with the Python lines first."""
    session = _session(host, config)
    report = Report(rules=dict(host.rules), errors=[])
    per_kernel: list[tuple[str, list[LoweredVariant]]] = []
    for kernel in lowered["kernels"]:
        written = next((lp.num_stages for lp in src.loops if lp.kernel == kernel["name"] and lp.num_stages is not None),
                       None)
        variants = [_variant(kernel["name"], v, session, report, dump_dir, written) for v in kernel["variants"]]
        per_kernel.append((kernel["name"], variants))
        found, errors = host.check_variants(variants, session.enabled)
        report.findings.extend(found)
        report.errors.extend(errors)
    session.finish(report)
    python_first(report)
    return report, per_kernel


def _kept(report: Report, path: str, src: PySource, per_kernel: list[tuple[str, list[LoweredVariant]]],
          text: str, host: Any) -> list[tuple[int, Finding, Any]]:
    """Each finding at its buffer line with its variant, less those a `# pipelint: ignore`
    on that line suppresses."""
    from ..registry import variant_rules

    by_file = {lv.location_path: lv for _, vs in per_kernel for lv in vs}
    count = text.count("\n") + 1
    at_loop = variant_rules(host)
    placed = [_place(f, path, src, by_file, count, at_loop) for f in report.findings]
    return [(line, f, lv) for line, f, lv in placed if f.rule not in src.suppressions.get(line, set())]


def _attach_facts(out: FileAnalysis, src: PySource, name: str, variants: list[LoweredVariant],
                  kept: list[tuple[int, Finding, Any]], only: bool) -> None:
    """One kernel's variant facts on its `T.Pipelined` loops and `T.alloc_shared` buffers
    (`only`: the file's one kernel, which also takes loops outside any function)."""
    facts = [_facts(lv, len({(line, f.rule) for line, f, owner in kept if owner is lv})) for lv in variants]
    loops = [lp for lp in src.loops if lp.kernel == name or (lp.kernel is None and only)]
    for i, loop in enumerate(loops):
        out.loops.append((loop, [_loop_facts(f, lv, loop, i) for f, lv in zip(facts, variants)]))
    for alloc in src.allocs:
        if alloc.kernel == name or (alloc.kernel is None and only):
            out.allocs.append((alloc, facts))


def _variant(kernel: str, v: dict, session: Any, report: Report, dump_dir: Path | None,
             written: int | None) -> LoweredVariant:
    """A worker's variant, checked.  Its num_stages: the one lowered with, else the planner's,
    else the `num_stages=` literal of the kernel's T.Pipelined (None: unknown, 0 for the checks)."""
    n = v.get("num_stages")
    if n is None:
        n = next((lp.get("tl_pipelined_num_stages") for lp in v.get("pipelined_loops", [])
                  if lp.get("tl_pipelined_num_stages") is not None), written)
    v = {**v, "num_stages_shown": n}
    lv = LoweredVariant(kernel, v["arch"], n or 0, bool(v.get("ok")), v.get("error"), v,
                        error_kind=v.get("kind"))
    if not lv.ok:
        return lv
    cuda = v["cuda"]
    if dump_dir is not None:           # the generated CUDA, for "go to" on a related location
        lv.path = _dump(dump_dir, lv.filename, cuda)
    result, findings, errors, models = session.analyze_text(lv.location_path, cuda)
    lv.model = models[0] if models else None
    lv.facts = {**v, "linemap": getattr(lv.model, "lines", None)}
    report.files.append(replace(result, suppressions=_cu_suppressions(cuda)))
    report.findings.extend(findings)
    report.errors.extend(errors)
    return lv


def _dump(folder: Path, name: str, cuda: str) -> str:
    """Write a variant's CUDA into its dump folder (`<cache root>/lsp/cuda/<file>`, through
    `cachedir`: no link followed); the bare name when it cannot be written."""
    from .. import cachedir

    where = cachedir.prepared(folder, 3)
    if where is None:
        return name
    data = cuda.encode()
    if cachedir.read_file(where / name) != data and not cachedir.write_file(where, name, data):
        return name
    return str(where / name)


def _cu_suppressions(text: str) -> tuple:
    from ..suppress import suppressions_in

    return suppressions_in(text)


def _session(host: Any, config: Any) -> Any:
    """The run layer with `[tool.pipelint]` as `check` applies it: selection, per-file/per-kernel
    ignores, severities, `// pipelint: ignore` comments; the primary location stays where the
    buffer is."""
    from ..session import Session
    from ..settings import Overrides

    return Session.open(host, config=config, overrides=Overrides(primary_location="cuda"))


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _place(f: Finding, path: str, src: PySource, by_file: dict[str, LoweredVariant],
           count: int, at_loop: frozenset[str] = frozenset()) -> tuple[int, Finding, Any]:
    """The buffer line a finding belongs to, the finding, and its variant: the line
    `check --primary-location python` gives (the core maps a `#line` block to its directive's
    line, `cuda.linemap`); a variant-level finding at its `T.Pipelined` loop; else the kernel's
    first line."""
    lv = next((by_file[r.path] for r in (f.location, *f.related) if r.path in by_file), None)
    kernel = f.kernel or (lv.kernel if lv else None)
    lo, _ = src.kernels.get(kernel or "", (1, count))
    if _same(f.location.path, path) and 1 <= f.location.line <= count:
        return f.location.line, f, lv
    if f.rule in at_loop:          # a variant's pipeline plan: at the T.Pipelined loop
        loop = next((lp for lp in src.loops if lp.kernel == kernel), None)
        if loop is not None:
            return loop.span.line, f, lv
    return lo, f, lv


def _group(placed: list[tuple[int, Finding, Any]], text: str, host: Any, path: str) -> list[Diagnostic]:
    """One diagnostic per (rule, line): the first message, how many more, the variants, the lines."""
    from ..docs import help_uri

    groups: dict[tuple[str, int], list[tuple[Finding, Any]]] = {}
    for line, f, lv in sorted(placed, key=lambda t: (t[0], t[1].rule, t[1].message)):
        groups.setdefault((f.rule, line), []).append((f, lv))
    lines = text.split("\n")
    out = []
    for (rule, line), members in groups.items():
        first = members[0][0]
        labels = tuple(dict.fromkeys(_label(lv) for _, lv in members if lv is not None))
        severity = max((f.severity for f, _ in members), key=lambda s: s.rank)
        if rule == LOWERING_FAILED:
            message = _failed_message(first.kernel, [f for f, _ in members])
        else:
            message = first.message
            more = len({f.message for f, _ in members}) - 1
            if more:
                message += f" (and {more} more like it)"
            if labels:
                message += f" [{', '.join(labels)}]"
        related = _related(members, path)
        col, end = _line_span(lines, line)
        r = host.rules.get(rule)
        out.append(Diagnostic(line, col, end, severity, rule, message, related, first.help,
                              help_uri(r) if r is not None else "", labels))
    return out


def _label(lv: LoweredVariant) -> str:
    return f"{lv.arch} num_stages={lv.num_stages}"


def _failed_message(kernel: str | None, members: list[Finding]) -> str:
    what = "; ".join(f.message for f in members[:3])
    more = f"; and {len(members) - 3} more" if len(members) > 3 else ""
    return f"TileLang cannot lower {kernel or 'this kernel'}: {what}{more}"


def _related(members: list[tuple[Finding, Any]], path: str) -> tuple[Related, ...]:
    """The other Python lines involved (the copy, the wait, the read) and the generated CUDA.
    A line several roles map to says each kind once ("the wait ...; read of A_shared ...")."""
    cuda: dict[tuple[str, int], Related] = {}
    lines: dict[int, list[str]] = {}
    for f, lv in members:
        for r in f.related:
            if _generated(r, lv):
                if os.path.isabs(r.path):
                    cuda.setdefault((r.path, r.line), Related(r.path, r.line, f"generated CUDA ({lv.arch} "
                                                              f"num_stages={lv.num_stages})"))
                continue
            line = _python_line(r, lv, path)
            if line is not None:
                said = lines.setdefault(line, [])
                if len(said) < 2 and all(_kind(m) != _kind(r.message) for m in said):
                    said.append(r.message)
    out = [*cuda.values(), *(Related(path, line, "; ".join(said)) for line, said in lines.items())]
    return tuple(out[:MAX_RELATED])


def _generated(r: Any, lv: Any) -> bool:
    """Whether a related location is the variant's generated CUDA itself (its file link)."""
    return lv is not None and r.path == lv.location_path and r.message == "generated CUDA"


def _python_line(r: Any, lv: Any, path: str) -> int | None:
    """The buffer line a related location stands for: a line of the variant's CUDA through its
    `#line` map, or a line of this Python file; None for anything else."""
    if lv is not None and r.path == lv.location_path:
        linemap = lv.facts.get("linemap")
        origin = linemap.user_origin(r.line) if linemap else None
        return origin.line if origin is not None and _same(origin.file, path) else None
    if r.path.endswith(".py") and _same(r.path, path):
        return r.line
    return None


def _kind(message: str) -> str:
    """"async copy into A_shared slot 1" and "... slot 2" say the same kind of thing."""
    return " ".join(message.split()[:2])


def _line_span(lines: list[str], line: int) -> tuple[int, int]:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    code = text.split("#", 1)[0].rstrip() if "#" in text else text.rstrip()
    start = len(text) - len(text.lstrip())
    return start, max(len(code), start + 1)


def _failure(text: str, line: int, host: Any, message: str) -> Diagnostic:
    from ..docs import help_uri

    col, end = _line_span(text.split("\n"), line)
    rule = host.rules.get(LOWERING_FAILED)
    return Diagnostic(line, col, end, Severity.ERROR, LOWERING_FAILED, message,
                      doc=help_uri(rule) if rule is not None else "")


def _facts(lv: LoweredVariant, diagnostics: int) -> VariantFacts:
    """`diagnostics`: how many of the buffer's diagnostics this variant has a part in."""
    shown = lv.facts.get("num_stages_shown")
    if not lv.ok:
        return VariantFacts(lv.arch, shown, False, error=lv.error)
    model = lv.model
    tma = model is not None and any(e.kind.value.startswith("tma") for e in model.trace.all_events())
    return VariantFacts(lv.arch, shown, True, versions=lv.versions, buffer_bytes=lv.ir_buffer_bytes(),
                        wait=lv.steady_wait(), in_flight=lv.in_flight, barriers=lv.barriers_per_iteration,
                        smem=lv.shared_bytes, tma=tma,
                        findings=diagnostics)


def _loop_facts(facts: VariantFacts, lv: LoweredVariant, loop: PipelinedLoop, index: int) -> VariantFacts:
    """The variant's facts with this loop's plan (matched by loop variable, else by position)."""
    plans = lv.pipelined_loops
    plan = next((p for p in plans if p.get("loop_var") == loop.var), None)
    if plan is None and index < len(plans):
        plan = plans[index]
    if plan is None:
        return facts
    return replace(facts, stage=plan.get("software_pipeline_stage"), order=plan.get("software_pipeline_order"))


# ------------------------------------------------------------------ words
def kib(n: int | None) -> str:
    if n is None:
        return "?"
    text = f"{n / 1024:.1f}".removesuffix(".0")
    return f"{text} KB"


def loop_label(v: VariantFacts) -> str:
    if not v.ok:
        return "does not lower"
    parts = [f"{v.num_stages} stages" if v.num_stages is not None else "", f"{kib(v.smem)} smem"]
    if v.wait is not None:
        parts.append(f"{v.wait[0]} group{'s' if v.wait[0] != 1 else ''} in flight")
    elif v.tma:
        parts.append("TMA + mbarriers")
    return " · ".join(p for p in parts if p)


def alloc_label(v: VariantFacts, name: str | None) -> str:
    if not v.ok or name is None or name not in v.buffer_bytes:
        return ""
    versions = v.versions.get(name, 1)
    return f"× {versions} version{'s' if versions != 1 else ''} = {kib(v.buffer_bytes[name])}"


def side_by_side(facts: list[VariantFacts], label: Any) -> str:
    """One label when every arch agrees, else `sm_80: ... │ sm_90: ...` (first num_stages of each)."""
    shown: dict[str, str] = {}
    for v in facts:
        shown.setdefault(v.arch, label(v))
    values = [t for t in shown.values() if t]
    if not values:
        return ""
    if len(set(shown.values())) == 1:
        return values[0]
    return " │ ".join(f"{arch}: {t or '-'}" for arch, t in shown.items())


def _cell(x: Any) -> str:
    return "–" if x is None or x == [] or x == {} else str(x)


def _versions_cell(v: VariantFacts) -> str:
    return ", ".join(f"{b} ×{n}" for b, n in sorted(v.versions.items())) or "–"


def _waits_cell(v: VariantFacts) -> str:
    if v.wait:
        return f"cp_async_wait<{v.wait[0]}>, {v.wait[1]} group(s)/stage → {v.in_flight} stage(s)"
    return "TMA + mbarriers" if v.tma else "–"


def _smem_cell(v: VariantFacts) -> str:
    return f"{kib(v.smem)} ({v.smem} B)" if v.smem is not None else "–"


def _diagnostics_cell(v: VariantFacts) -> str:
    return str(v.findings) if v.ok else "does not lower"


# The rows of a loop's hover table: a name and the cell of each variant.
_HOVER_ROWS: tuple[tuple[str, Any], ...] = (
    ("stage", lambda v: _cell(v.stage)),
    ("order", lambda v: _cell(v.order)),
    ("versions", _versions_cell),
    ("waits in flight", _waits_cell),
    ("barriers / iteration", lambda v: _cell(v.barriers)),
    ("shared memory", _smem_cell),
    ("diagnostics", _diagnostics_cell),
)


def hover_text(loop: PipelinedLoop, facts: list[VariantFacts]) -> str:
    """A `T.Pipelined` loop's facts, one column per variant, and the variants that failed."""
    head = f"**pipelint** · `T.Pipelined` loop over `{loop.var or '?'}` of `{loop.kernel or '?'}`"
    if loop.num_stages:
        head += f" (num_stages={loop.num_stages})"
    cols = [v.label for v in facts]
    lines = [head, "", "| | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    lines += [f"| {name} | " + " | ".join(cell(v) for v in facts) + " |" for name, cell in _HOVER_ROWS]
    errors = [f"- {v.label}: {v.error}" for v in facts if not v.ok]
    if errors:
        lines += ["", "Lowering failed:", *errors]
    return "\n".join(lines)


def alloc_hover(alloc: SharedAlloc, facts: list[VariantFacts]) -> str | None:
    rows = [f"- {v.label}: {alloc_label(v, alloc.name)}" for v in facts if alloc_label(v, alloc.name)]
    if not rows:
        return None
    return "\n".join([f"**pipelint** · shared buffer `{alloc.name}`", "", *rows])


# ------------------------------------------------------------------ .cu buffers
def analyze_cuda(path: str, text: str, host: Any, config: Any, checked: tuple | None = None) -> FileAnalysis:
    """A `.cu` buffer, checked as `check` checks the file (its `// pipelint: ignore` comments
    from the buffer), with the TileLang lines as related locations.  `checked`: what
    `engine.check_text` found, when that ran elsewhere (the server's analysis process)."""
    from ..engine import dedupe
    from ..suppress import suppressions_in

    session = _session(host, config)
    if checked is None:
        result, findings, errors, _ = session.analyze_text(path, text)
    else:
        result, findings, errors = checked
    report = Report(files=[replace(result, suppressions=suppressions_in(text))], findings=dedupe(findings),
                    errors=list(errors), rules=dict(host.rules))
    session.finish(report)
    lines = text.split("\n")
    out = FileAnalysis(path, errors=[e.message for e in report.errors])
    from ..docs import help_uri

    for f in sorted(report.findings, key=lambda f: f.sort_key):
        if not _same(f.location.path, path):
            continue
        loc = f.location
        line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
        col = max(0, loc.column - 1)
        end = (loc.end_column - 1) if loc.end_column and loc.end_line == loc.line else len(line.rstrip())
        related = tuple(Related(r.path, r.line, r.message) for r in f.related if r.line)
        r = host.rules.get(f.rule)
        out.diagnostics.append(Diagnostic(loc.line, col, max(end, col + 1), f.severity, f.rule, f.message,
                                          related[:MAX_RELATED], f.help, help_uri(r) if r is not None else ""))
    return out

