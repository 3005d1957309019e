"""Helpers for check plugins: findings at AST nodes, with `#line` origins.

A check says *what* is wrong at *which node*; this module turns that into a
`Finding` with the .cu span, the related locations the check names, and the
TileLang Python line the node came from (a related location too, so SARIF
viewers and the text reporter show both).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .cuda import ast as A
from .cuda.linemap import is_tilelang_internal
from .findings import Finding, Location, Rule, Severity

if TYPE_CHECKING:
    from .model import KernelModel
    from .model.cpasync import Hazard


def location(path: str, node: A.Node, message: str = "") -> Location:
    s = node.span
    return Location(path, s.line, s.column, s.end_line, s.end_column, message)


def origin_locations(model: KernelModel, node: A.Node) -> list[Location]:
    """Where the node came from: the `#line` origin, and the user's line if that is TileLang's own."""
    lines = getattr(model, "lines", None)
    if not lines:
        return []
    out = []
    origin = lines.origin(node.span.line)
    if origin is not None and origin.file:
        if is_tilelang_internal(origin.file):
            # TileLang's own frames (its macro generators) are not where anyone edits: the
            # user's kernel statement stands for them
            user = lines.user_origin(node.span.line)
            if user is not None:
                out.append(Location(user.file, user.line, 1, None, None,
                                    "kernel statement this code was generated from"))
        else:
            out.append(Location(origin.file, origin.line, 1, None, None, "TileLang source of this line"))
    return out


def make_finding(rule: Rule, path: str, model: KernelModel, node: A.Node, message: str,
                 related: Iterable[tuple[A.Node, str]] = (),
                 severity: Severity | None = None, help: str = "", at: A.Span | None = None) -> Finding:
    """A finding of `rule` at `node` of `model`'s kernel in `path`, with `related` (node, message)
    locations and the TileLang Python line (through `#line`) as a related location too;
    `severity` overrides the rule's default, `help` is the one-line fix (the rule's general
    advice when empty), and `at` moves the primary location to where the fix goes (the
    statement before which a barrier belongs; see `pipelint.model.placement`)."""
    rel: list[Location] = [location(path, n, msg) for n, msg in related]
    rel = rel[:8] + origin_locations(model, node)
    primary = location(path, node) if at is None else Location(path, at.line, at.column, at.end_line,
                                                                 at.end_column)
    return Finding(rule.id, severity or rule.severity, message, primary, tuple(rel[:9]),
                   kernel=getattr(model, "name", None), help=help)


def rules_by_id(rules: Sequence[Rule]) -> dict[str, Rule]:
    return {r.id: r for r in rules}


def hazards_for(model: KernelModel, kinds: Iterable[str]) -> list[Hazard]:
    """The cp.async hazards of a kernel of the given kinds (`HazardKind`), in order."""
    wanted = frozenset(kinds)
    return [h for h in model.cp_async.hazards if h.kind in wanted]


# ---------------------------------------------------------------- a rule as one unit
#: The analyses of `pipelint.model.KernelModel` a rule may read (each computed once, on first
#: use): a rule declares those it needs, so a run that selects it computes only those.
ANALYSES = ("cp_async", "mbarrier", "races", "global_handoff")


class Check:
    """One rule and the code that reports it: a plugin returns instances from
    `pipelint_checks`, and pipelint calls a check only when its rule is selected.

    Subclasses set `rule` (the declaration: id, severity, category tags, documentation), and
    optionally `hazards` (the model's hazard kinds it reports), `analyses` (the
    `KernelModel` analyses it reads, from `ANALYSES`) and `example` (its documentation page's
    example, in Markdown)."""

    rule: Rule
    hazards: tuple[str, ...] = ()
    analyses: tuple[str, ...] = ()
    example: str = ""
    scope = "kernel"

    @property
    def id(self) -> str:
        return self.rule.id

    def refine(self, finding: Finding, variant: Any) -> Finding | None:
        """One of this rule's findings on a variant `pipelint lower` produced, given what the
        lowering knows besides the CUDA (`variant.facts`: the IR's shapes, the TMA boxes): the
        finding kept, changed, or None when the facts settle it.  By default it is kept."""
        return finding


class KernelCheck(Check):
    """A rule about one kernel: `check(kernel, path)` returns its findings."""

    scope = "kernel"

    def check(self, kernel: KernelModel, path: str) -> Iterable[Finding]:
        raise NotImplementedError

    def hazards_in(self, kernel: KernelModel) -> list[Hazard]:
        """The kernel's cp.async hazards of this rule's `hazards` kinds, in order."""
        return hazards_for(kernel, self.hazards)

    def finding(self, path: str, kernel: KernelModel, node: A.Node, message: str,
                related: Iterable[tuple[A.Node, str]] = (), severity: Severity | None = None,
                help: str = "", at: A.Span | None = None) -> Finding:
        """`make_finding` of this rule."""
        return make_finding(self.rule, path, kernel, node, message, related, severity, help, at)


class VariantCheck(Check):
    """A rule about the lowered variants of one kernel (`pipelint lower`), checked together:
    `check(variants)` returns its findings.  `at_loop`: its findings are about the pipeline's
    plan, so the editor shows them at the `T.Pipelined` loop."""

    scope = "variants"
    at_loop = True

    def check(self, variants: list) -> Iterable[Finding]:
        raise NotImplementedError
