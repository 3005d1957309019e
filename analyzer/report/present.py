"""What a reporter shows: findings as the user reads them (issue 34).

With `--primary-location python` (`relocate.python_first`) a finding's primary location is the
user's TileLang line, but the checks wrote its message in CUDA terms ("read at line 75", "insert
`__syncthreads();` before line 66"), and the same defect is one finding per variant and slot.  A
rendering step, not the checks, turns that into what a person reads at a `.py` location:

* CUDA line numbers in the message and help become the Python statements they came from
  ("line 22 (`T.copy`)"; a CUDA line with no statement of the user's file behind it is named
  "CUDA line 75"); the CUDA message stays on the finding (`cuda_message` in JSON, SARIF's
  properties) and its related CUDA locations stay, next to the Python statements they map to;
* help says what to change in the TileLang program where that is known (a `num_stages`, where a
  `T.copy` or barrier goes), or that the fix belongs in TileLang (a barrier or wait TileLang
  inserted);
* identical findings at one Python line (the same rule and message up to its numbers: slots,
  mbarrier indices, byte counts) become one that names its variants (`[sm_80 s2, s3]`) from the
  generated files' names (`<kernel>_<arch>_s<N>.cu`).

Findings at CUDA locations are shown as the checks wrote them.  Every reporter takes its findings
from `shown`, so text, concise, JSON, SARIF, GitHub, GitLab, JUnit and rdjson agree, and their
counts are the counts of what they show.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..findings import Finding, Location, Report

CUDA = "generated CUDA"
_LINE_REF = re.compile(r"\bline (\d+)\b")
_VARIANT = re.compile(r"(?:^|[_/\\])(sm_\d+[a-z]?)_s(\d+)\.cu$")
_NUMBER = re.compile(r"\d+")
_STATEMENT = re.compile(r"\bT\.[A-Za-z_][A-Za-z0-9_.]*")
_MESSAGE_VARIANT = re.compile(r"^(sm_\d+[a-z]?) num_stages=(\d+): ")


@dataclass(frozen=True, slots=True)
class Shown:
    """A finding as shown: the finding (its message in the primary location's terms), the
    variants it stands for, and the message and help in CUDA terms when they were rewritten."""

    finding: Finding
    variants: tuple[str, ...] = ()
    cuda_message: str = ""
    cuda_help: str = ""
    members: int = 1                          # findings of the checks it stands for
    extra: dict = field(default_factory=dict, compare=False)


def python_primary(report: Report) -> bool:
    return getattr(report, "primary_location", "cuda") == "python"


def shown(report: Report) -> list[Shown]:
    """The findings a reporter shows, in report order."""
    findings = report.sorted_findings()
    if not python_primary(report):
        return [Shown(f) for f in findings]
    sources = _Sources()
    rendered = [_in_python_terms(_near(f), sources) for f in findings]
    return _grouped(rendered)


def _near(f: Finding) -> Finding:
    """The Python locations of a finding relative to the current folder when they lie under it:
    TileLang writes the kernel file's absolute path in `#line`."""
    def near(loc: Location) -> Location:
        if not loc.path.endswith(".py") or not os.path.isabs(loc.path):
            return loc
        try:
            rel = os.path.relpath(loc.path)
        except ValueError:
            return loc
        return loc if rel.startswith(os.pardir) else replace(loc, path=rel)

    located = near(f.location)
    related = tuple(near(r) for r in f.related)
    return f if located is f.location and related == f.related else replace(f, location=located, related=related)


def shown_findings(report: Report) -> list[Finding]:
    return [s.finding for s in shown(report)]


def variant_label(path: str) -> str | None:
    """`sm_80 s2` for `matmul_sm_80_s2.cu` (the name `pipelint lower` gives a variant)."""
    m = _VARIANT.search(path)
    return f"{m.group(1)} s{m.group(2)}" if m else None


def variants_text(labels: Iterable[str]) -> str:
    """`sm_80 s2, s3, sm_90 s3`: each arch once, its num_stages after it, in order."""
    by_arch: dict[str, list[str]] = {}
    for label in labels:
        arch, _, stage = label.partition(" ")
        by_arch.setdefault(arch, [])
        if stage and stage not in by_arch[arch]:
            by_arch[arch].append(stage)
    parts = []
    for arch, stages in sorted(by_arch.items(), key=lambda kv: _arch_key(kv[0])):
        stages.sort(key=lambda s: int(s[1:]) if s[1:].isdigit() else 0)
        parts.append(" ".join([arch, stages[0]]) if stages else arch)
        parts.extend(stages[1:])
    return ", ".join(parts)


def _arch_key(arch: str) -> tuple[int, str]:
    digits = "".join(ch for ch in arch if ch.isdigit())
    return (int(digits) if digits else 0, arch)


# ---------------------------------------------------------------- sources read once per report
class _Sources:
    """`#line` maps of the generated files and lines of the Python files, read at most once."""

    def __init__(self) -> None:
        self._maps: dict[str, object] = {}
        self._lines: dict[str, list[str]] = {}

    def linemap(self, loc: Location):
        if loc.outside:
            return None
        if loc.path not in self._maps:
            from ..cuda.linemap import LineMap

            self._maps[loc.path] = LineMap.from_text(_read(loc.path))
        return self._maps[loc.path]

    def python_line(self, loc: Location, line: int) -> str:
        if loc.outside:
            return ""
        if loc.path not in self._lines:
            from ..cuda.newlines import split_lines

            self._lines[loc.path] = split_lines(_read(loc.path))
        lines = self._lines[loc.path]
        return lines[line - 1] if 0 < line <= len(lines) else ""


def _read(path: str) -> str:
    from ..limits import readable

    try:
        st = os.stat(path)
        if not os.path.isfile(path) or not readable(st):
            return ""
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except (OSError, ValueError):
        return ""


def statement_name(text: str) -> str:
    """What a Python line is, in a few characters: its first `T.` call (`T.copy`, `T.Pipelined`),
    else its first words."""
    code = text.split("#", 1)[0].strip()
    m = _STATEMENT.search(code)
    if m and (code.startswith("T.") or " in T." in code or code.startswith("with T.")):
        return m.group().rstrip(".")
    return code if len(code) <= 32 else code[:29] + "..."


# ---------------------------------------------------------------- rewriting one finding
def _cuda_location(f: Finding) -> Location | None:
    return next((r for r in f.related if r.message == CUDA and not r.path.endswith(".py")), None)


def _in_python_terms(f: Finding, sources: _Sources) -> Shown:
    cu = _cuda_location(f)
    label = variant_label(cu.path) if cu is not None else None
    if label is None:       # `lowering-failed`: no CUDA, its message names the variant
        m = _MESSAGE_VARIANT.match(f.message)
        label = f"{m.group(1)} s{m.group(2)}" if m else None
    variants = (label,) if label else ()
    if cu is None or not f.location.path.endswith(".py"):
        return Shown(f, variants)
    linemap = sources.linemap(cu)
    py = f.location

    def python_of(line: int) -> int | None:
        origin = linemap.user_origin(line) if linemap else None
        if origin is None or not _same_file(origin.file, py.path, cu.path):
            return None
        return origin.line

    def rewrite(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            line = python_of(int(m.group(1)))
            if line is None:
                return f"CUDA line {m.group(1)}"
            name = statement_name(sources.python_line(py, line))
            return f"line {line} (`{name}`)" if name else f"line {line}"

        return _LINE_REF.sub(one, text)

    message = rewrite(f.message)
    help_text = _python_help(f, py, rewrite)
    extra: list[Location] = []
    said: set[tuple[int, str]] = set()
    for r in f.related:
        if r.path != cu.path or r.message == CUDA:
            continue
        line = python_of(r.line)
        key = (line or 0, " ".join(r.message.split()[:2]))
        if line is not None and key not in said:
            said.add(key)
            extra.append(Location(py.path, line, 1, line, None, r.message, outside=py.outside))
    related = list(f.related)
    at = related.index(cu) + 1
    related[at:at] = extra
    changed = replace(f, message=message, help=help_text, related=tuple(related))
    return Shown(changed, variants, cuda_message=f.message if message != f.message else "",
                 cuda_help=f.help if help_text != f.help else "")


def _same_file(origin: str, py: str, cu: str) -> bool:
    if origin == py:
        return True
    candidates = {os.path.normpath(origin), os.path.normpath(os.path.join(os.path.dirname(cu), origin))}
    try:
        target = os.path.realpath(py)
        return any(os.path.realpath(c) == target for c in candidates)
    except (OSError, ValueError):
        return False


# What to change in the TileLang program, by rule: the checks' help names CUDA statements, which
# the user does not edit.  `{line}` is the finding's Python line.
PYTHON_HELP = {
    "redundant-barrier": "TileLang inserted this barrier (the generated CUDA lines above): nothing in the "
                         "kernel at line {line} needs changing; the fix belongs in TileLang's barrier insertion "
                         "(`# pipelint: ignore[redundant-barrier]` on line {line} silences it)",
    "redundant-wait": "TileLang's software pipeline placed this wait: try another `num_stages` for the "
                      "`T.Pipelined` loop, else the fix belongs in TileLang",
    "wait-too-deep": "TileLang's software pipeline chose this wait depth: try another `num_stages` for the "
                     "`T.Pipelined` loop, else the fix belongs in TileLang",
    "wait-too-shallow": "a copy is read before its group completes: lower `num_stages` of the `T.Pipelined` "
                        "loop or move the `T.copy` of line {line} earlier; if the kernel is as intended, the fix "
                        "belongs in TileLang",
    "version-overwrite": "a stage's buffer is overwritten while it is read: raise `num_stages` (more versions) "
                         "or move the read of line {line} before the next `T.copy` into it; if the kernel is as "
                         "intended, the fix belongs in TileLang",
    "version-mismatch": "the copy and the read use different stages of the buffer: check the `T.copy` and the "
                        "read at line {line}; if the kernel is as intended, the fix belongs in TileLang",
    "missing-barrier": "order the statements: a `T.sync_threads()` before line {line} (or keep the read and the "
                       "next `T.copy` into the buffer in one `T.Pipelined` stage); if TileLang made this code "
                       "from one statement, the fix belongs in TileLang",
    "shared-race": "order the write and the read: a `T.sync_threads()` between them, before line {line}; if "
                   "TileLang made both from one statement, the fix belongs in TileLang",
    "shared-write-race": "give each thread its own element, or a `T.sync_threads()` between the two writes "
                         "(line {line})",
    "shared-memory-budget": "lower `num_stages` or the tile sizes (block_M, block_N, block_K) of the kernel",
}


def _python_help(f: Finding, py: Location, rewrite) -> str:
    template = PYTHON_HELP.get(f.rule)
    if template is not None:
        return template.format(line=py.line)
    return rewrite(f.help) if f.help else f.help


# ---------------------------------------------------------------- one finding per defect
def _grouped(items: list[Shown]) -> list[Shown]:
    groups: dict[tuple, list[Shown]] = {}
    for s in items:
        f = s.finding
        loc = f.location
        key = (f.rule, f.severity, loc.path, loc.line, loc.column, _NUMBER.sub("#", f.message))
        groups.setdefault(key, []).append(s)
    out = []
    for members in groups.values():
        out.append(members[0] if len(members) == 1 and not members[0].variants else _merge(members))
    return out


def _merge(members: list[Shown]) -> Shown:
    first = members[0].finding
    labels = tuple(dict.fromkeys(v for s in members for v in s.variants))
    message = first.message
    others = len({s.finding.message for s in members}) - 1
    if others:
        message += f" (and {others} more like it)"
    if labels:
        message += f" [{variants_text(labels)}]"
    related: dict[tuple, Location] = {}
    for s in members:
        for r in s.finding.related:
            related.setdefault((r.path, r.line, r.column, r.message), r)
    merged = replace(first, message=message, related=tuple(related.values()))
    return Shown(merged, labels, members[0].cuda_message, members[0].cuda_help, len(members))


__all__ = ["PYTHON_HELP", "Shown", "python_primary", "repo_relative", "shown", "shown_findings", "statement_name",
           "variant_label", "variants_text"]


def repo_relative(path: str, root: object = None) -> str:
    """`path` relative to the repository root (`root`: the reporter's `root` option, else the
    current folder), `/`-separated: CI systems match annotation paths to the checkout (GitHub,
    GitLab, reviewdog).  A path outside the root, or on another drive, stays as it is."""
    if not path:
        return path
    base = os.path.abspath(str(root)) if root else os.getcwd()
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full, base)
    except ValueError:          # another drive (Windows)
        return path.replace(os.sep, "/")
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return path.replace(os.sep, "/") if not os.path.isabs(path) else full.replace(os.sep, "/")
    return rel.replace(os.sep, "/")
