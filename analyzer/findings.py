"""What checks report: rules, findings and tool errors.

The shapes follow SARIF 2.1.0 so the SARIF reporter is a plain mapping:
1-based lines and columns with an exclusive end column, related locations
that carry their own message, and rule metadata with default levels.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

PERFORMANCE = "performance"


class Severity(enum.StrEnum):
    """How bad a finding is; `--fail-on` and `severity` settings compare `rank`s.  SARIF levels
    and GitHub annotation levels are the same words."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "note": 1}[self.value]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(text.lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or note)") from None


@dataclass(frozen=True, slots=True)
class Rule:
    """A check's rule: its id is what users select, ignore and suppress."""

    id: str
    name: str
    short: str
    full: str
    severity: Severity
    help: str = ""
    tags: tuple[str, ...] = ()
    precision: str = "high"
    rationale: str = ""          # why it matters for the pipeline (the rule page's second section)
    help_uri: str = ""           # documentation of a third-party rule (pipelint's own pages otherwise)

    @property
    def category(self) -> str:
        """`performance` (lost overlap, a barrier or wait that orders nothing: the kernel is correct)
        or `correctness` (everything else); performance findings do not decide the exit code
        unless `--fail-on-performance`.  Declared by the rule's `performance` tag."""
        return PERFORMANCE if PERFORMANCE in self.tags else "correctness"


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a file: 1-based line and column, exclusive end column (SARIF's convention);
    `message` says what the place is when it is a related location ("the wait", "the copy");
    `outside` marks a path the input named (`#line`) outside the project root: reported, never
    opened (`pipelint.relocate.confine`)."""

    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    message: str = ""
    outside: bool = False


def thread_ranges(threads: tuple[int, ...]) -> str:
    """`0-127, 256` for a set of thread numbers (how witnesses write their sides' threads)."""
    out: list[str] = []
    xs = sorted(set(threads))
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(f"{xs[i]}-{xs[j]}" if j > i else str(xs[i]))
        i = j + 1
    return ", ".join(out) or "none"


@dataclass(frozen=True, slots=True)
class WitnessSide:
    """One access of a race's witness: the statement (`line` of the CUDA file and its text), what
    it does (`access`: store, load, atomic, copy, tma), the block's `threads` that make it and the
    pipelined loop `iteration` (loop variable -> value; empty outside a pipelined loop)."""

    line: int
    access: str
    threads: tuple[int, ...]
    statement: str = ""
    iteration: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "statement": self.statement, "access": self.access,
                "threads": thread_ranges(self.threads), "iteration": dict(self.iteration)}


@dataclass(frozen=True, slots=True)
class Witness:
    """Why a race finding is a race, in terms a run can reproduce: `first` may happen after
    `second` (or the reverse) because nothing orders them (`kind`: RAW, WAR or WAW on `buffer`),
    and `pair` is one concrete (thread of first, thread of second) that touch a common byte, when
    the model can name one.  Lines are those of the analysed CUDA file (`path`), also where a
    report shows the finding at its TileLang line.  `pipelint verify --forced-schedule` delays the
    side that must come late (`pipelint.plugins.forced_schedule`)."""

    kind: str
    buffer: str
    first: WitnessSide
    second: WitnessSide
    pair: tuple[int, int] | None = None
    path: str = ""

    def to_json(self) -> dict[str, object]:
        """The `witness` key of JSON output and the `witness` result property of SARIF."""
        return {"kind": self.kind, "buffer": self.buffer, "path": self.path, "first": self.first.to_json(),
                "second": self.second.to_json(), "pair": list(self.pair) if self.pair else None}


@dataclass(frozen=True, slots=True)
class Finding:
    """One result: a `rule` id, its severity, a message, the primary `location` and `related`
    ones (each with its message), the kernel it is in, the plugin (stamped by pipelint) and
    `help`, the fix in one line (the rule's general advice when the check gives none).

    `witness` is the schedule that shows a race (`Witness`), where the model names it.  It is
    evidence about the finding, not part of what the finding is: it takes no part in equality,
    and fingerprints, baselines and deduplication never read it."""

    rule: str
    severity: Severity
    message: str
    location: Location
    related: tuple[Location, ...] = ()
    kernel: str | None = None
    plugin: str | None = None
    help: str = ""               # the one-line fix: what to insert, remove or change, and where
    witness: Witness | None = field(default=None, compare=False)

    @property
    def sort_key(self) -> tuple:
        """Report order: path, line, column, rule, message."""
        loc = self.location
        return (loc.path, loc.line, loc.column, self.rule, self.message)


@dataclass(frozen=True, slots=True)
class ToolError:
    """A failure of the tool, not of the kernel: crashed plugin, unreadable file."""

    message: str
    path: str | None = None
    plugin: str | None = None
    internal: bool = True
    detail: str = ""


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    parsed: bool
    kernels: tuple[str, ...] = ()
    error: str | None = None
    # `pipelint: ignore[...]` comments found while reading the file: (line, rule ids, column);
    # None when the file was not read (the suppression pass then reads it itself)
    suppressions: tuple[tuple[int, tuple[str, ...], int], ...] | None = None
    # sha256 of the text the analysis read (the result cache keys by it, never by a second read);
    # None when the file was not analysed
    digest: str | None = None


@dataclass
class Report:
    """Everything one run produced; reporters turn it into text, JSON, SARIF."""

    files: list[FileResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[ToolError] = field(default_factory=list)
    rules: dict[str, Rule] = field(default_factory=dict)
    suppressed: list[Finding] = field(default_factory=list)
    baselined: int = 0
    cached: int = 0              # files whose results came from the result cache
    baseline_stale: int = 0      # baseline entries no current finding matches
    baseline_written: tuple[int, int] | None = None   # (entries written, stale entries pruned)
    # "python" once `relocate.python_first` made the TileLang lines primary: reporters then show
    # messages in Python terms and one finding per defect (`pipelint.report.present`)
    primary_location: str = "cuda"

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: f.sort_key)

    def category(self, f: Finding) -> str:
        rule = self.rules.get(f.rule)
        return rule.category if rule is not None else "correctness"

    def undecided(self) -> list[Finding]:
        """What pipelint could not decide: notes of correctness rules (a check that could not say
        whether a hazard exists says so as a note, never as an error or in silence)."""
        return [f for f in self.findings if f.severity == Severity.NOTE and self.category(f) != PERFORMANCE]

    def failing(self, fail_on: Severity, performance: bool = False) -> list[Finding]:
        """The findings that make the exit code 1: at or above `fail_on`, and not of the
        performance category unless `performance` (`--fail-on-performance`)."""
        return [f for f in self.findings if f.severity.rank >= fail_on.rank
                and (performance or self.category(f) != PERFORMANCE)]

    def exit_code(self, fail_on: Severity, performance: bool = False) -> int:
        if any(e.internal for e in self.errors):
            return 3
        if self.failing(fail_on, performance):
            return 1
        return 0
