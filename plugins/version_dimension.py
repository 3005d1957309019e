"""Version dimension: multi-buffered shared memory rotates over enough slots.

`InjectSoftwarePipeline` gives each pipelined buffer a leading version
dimension so the copy for iteration k+d and the compute of iteration k touch
different slots.  Too few versions, producers and consumers rotating with
different moduli, or two buffers sharing bytes while both live all let the
next copy clobber data before it is used.
"""
from __future__ import annotations

from pipelint import hookimpl
from pipelint.checks import KernelCheck, make_finding
from pipelint.findings import Finding, Rule, Severity
from pipelint.model import Event, KernelModel
from pipelint.model.intrinsics import HazardKind as H


class VersionOverwrite(KernelCheck):
    """A copy refills a stage slot before the data put there earlier was read."""

    rule = Rule(
        "version-overwrite", "VersionOverwrite",
        "Pipelined slot overwritten before its data was consumed",
        "An async copy writes a stage slot of a multi-buffered shared array while the data an "
        "earlier copy put there has not been read yet: the version dimension is too small for "
        "the prefetch distance, or the slot index is wrong.",
        Severity.ERROR, "Give the buffer as many versions as stages in flight (num_stages), and "
        "index producer and consumer with the same stage expression.", ("correctness", "pipeline"),
        rationale="The version dimension is what lets iteration k+d's copy run while iteration k computes. "
                  "With too few versions (or a wrong slot index) the prefetch lands on data that has not been "
                  "consumed: results are silently wrong, and only for some tile sizes.")
    hazards = (H.OVERWRITE_UNCONSUMED,)
    analyses = ("cp_async",)

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return [self.finding(
            path, kernel, h.second.node,
            f"cp.async overwrites {h.buffer} slot {h.slot} (iteration {h.second.where}) before the "
            f"data copied there at iteration {h.first.where} was read; the buffer has "
            f"{_versions(kernel, h.buffer)} version(s)",
            [(h.first.node, "earlier copy into the same slot")]) for h in self.hazards_in(kernel)]


class VersionMismatch(KernelCheck):
    """Accesses to one pipelined buffer in one loop that rotate over different slot counts."""

    rule = Rule(
        "version-mismatch", "VersionMismatch",
        "Accesses to one pipelined buffer rotate over different slot counts",
        "Inside the pipelined loop, the copies into a buffer and the reads from it cycle through "
        "different numbers of stage slots, so producer and consumer disagree about which slot "
        "holds which iteration.",
        Severity.ERROR, "Use the same modulus (number of versions) for every access.",
        ("correctness", "pipeline"),
        rationale="Producer and consumer must agree which slot holds which iteration; rotating over different "
                  "counts makes them drift apart after the first wrap-around.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return _mismatches(kernel, path)


class SharedOverlap(KernelCheck):
    """Two shared buffers whose bytes overlap, both used in one pipelined loop."""

    rule = Rule(
        "shared-overlap", "SharedOverlap",
        "Two shared buffers share bytes while both are live in a pipelined loop",
        "TileLang reuses shared-memory offsets for buffers with disjoint lifetimes; two buffers "
        "whose byte ranges overlap are both accessed inside the same pipelined loop.",
        Severity.ERROR, "Give the buffers disjoint offsets or end one lifetime before the loop.",
        ("correctness", "memory"),
        rationale="TileLang packs buffers with disjoint lifetimes into the same bytes of dynamic shared "
                  "memory; if both are live in the pipelined loop, one clobbers the other.")

    def check(self, kernel: KernelModel, path: str) -> list[Finding]:
        return _overlaps(kernel, path)


CHECKS = (VersionOverwrite(), VersionMismatch(), SharedOverlap())
RULES = tuple(c.rule for c in CHECKS)
_R = {c.id: c.rule for c in CHECKS}


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[KernelCheck, ...]:
    return CHECKS


def _versions(kernel, buffer) -> int:
    st = kernel.stages.get(buffer)
    return st.versions if st else 1


def _mismatches(kernel, path):
    """Sites of one buffer in one loop that rotate over different numbers of slots.  Counted in
    the steady state only: a short run of a run-time-bound loop shows a guarded copy (`if (t + 2
    < n) copy(sa[(t + 2) % 3])`) in fewer slots than its modulus, which is the count, not the code."""
    if kernel.runtime_trip is not None and kernel.runtime_trip < 2 * kernel.period:
        return []
    per_site: dict[tuple, tuple] = {}
    for ev in kernel.trace.all_events():
        if ev.buffer in kernel.stages and ev.iteration and ev.offset is not None and not ev.possible:
            key = (ev.buffer, id(ev.node), ev.loop_id)
            slots = per_site.setdefault(key, (ev, set()))[1]
            slots.add(kernel.slot(ev))
    by_loop: dict[tuple, list] = {}
    for (buffer, _, loop), (ev, slots) in per_site.items():
        if len(slots) > 1:
            by_loop.setdefault((buffer, loop), []).append((ev, len(slots)))
    out = []
    for (buffer, _), sites in by_loop.items():
        counts = {n for _, n in sites}
        if len(counts) > 1:
            sites.sort(key=lambda s: s[0].node.span.line)
            first, n0 = sites[0]
            other, n1 = next((ev, n) for ev, n in sites if n != n0)
            out.append(make_finding(
                _R["version-mismatch"], path, kernel, other.node,
                f"{buffer} is accessed here over {n1} stage slot(s) but over {n0} at line "
                f"{first.node.span.line}", [(first.node, f"rotates over {n0} slot(s)")]))
    return out


def _overlaps(kernel, path):
    out = []
    loops: dict[int, set[str]] = {}
    first_use: dict[tuple, Event] = {}
    for ev in kernel.trace.all_events():
        if ev.buffer and ev.loop_id is not None and not ev.possible:
            loops.setdefault(ev.loop_id, set()).add(ev.buffer)
            first_use.setdefault((ev.loop_id, ev.buffer), ev)
    seen = set()
    for loop, names in loops.items():
        for a in sorted(names):
            for b in sorted(names):
                ba, bb = kernel.buffers.get(a), kernel.buffers.get(b)
                if a < b and ba and bb and kernel.overlap(a, b) and (a, b) not in seen:
                    seen.add((a, b))
                    ev = first_use[(loop, b)]
                    out.append(make_finding(
                        _R["shared-overlap"], path, kernel, ev.node,
                        f"{a} (bytes {ba.offset}..) and {b} (bytes {bb.offset}..) overlap in shared "
                        f"memory but are both used inside the pipelined loop",
                        [(first_use[(loop, a)].node, f"use of {a}"), (ba.decl, f"{a} declared"),
                         (bb.decl, f"{b} declared")]))
    return out
