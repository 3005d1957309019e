"""Named barriers whose count does not match the threads that reach them.

`bar.sync id, n` and `bar.arrive id, n` (TileLang's `T.sync_threads(id, n)`,
`tl::__sync_thread_partial`, the `NamedBarrier<n>` of its reduction templates) count arrivals on
hardware barrier `id` of the CTA.  The barrier completes a *generation* as soon as `n` threads have
arrived and is reset at once, so later arrivals start the next generation (PTX ISA, "bar,
barrier": "the barrier is reinitialized so that it can be immediately reused").  Two consequences,
both decided from the trace's exact thread sets without simulation:

* **more threads than the count** reach one statement: which `n` of them pass together depends on
  timing (any warps may be first), so the barrier orders no thread after any *particular* other;
  the analyses treat such a barrier as absent (`overfull`), and the remainder of a count that does
  not divide the threads waits for arrivals that never come;
* **fewer threads than the count** can ever arrive at barrier `id` (the union of the threads of every
  statement that names it): no generation completes and every thread that reaches it hangs.

A count or an id that is not a constant, or an event whose threads are a guess (a condition on
data), decides nothing here.
"""
from __future__ import annotations

from dataclasses import dataclass

from .intrinsics import K
from .threads import ThreadSet, count, span
from .trace import Event

NAMED_KINDS = frozenset({K.NAMED_SYNC, K.NAMED_ARRIVE})


def event_threads(ev: Event, lo: int, hi: int) -> ThreadSet:
    """The threads that execute `ev` (its role's `lo..hi-1` where the exact set is unknown)."""
    return ev.threads or span(lo, hi)


def overfull(ev: Event) -> bool:
    """Whether more threads execute this named-barrier statement than the barrier's count: the
    first `count` to arrive pass together, in an order nobody controls, so it orders no given
    pair of threads (see the module docstring).  False where the count or the threads are unknown."""
    if ev.kind not in NAMED_KINDS or not ev.value or ev.uncertain:
        return False
    arriving = count(ev.threads) if ev.threads else ev.mult
    return arriving > ev.value


@dataclass(frozen=True, slots=True)
class CountMismatch:
    """A named barrier whose count `needed` does not match the threads that reach it.

    `kind`: "overfull" (`threads`, the threads of one statement, exceed the count) or "hang" (the
    arrivals at barrier `barrier` with this count, `arrivals` in all, are not a whole number of
    generations: `threads` are those of a generation that never completes, `event` where they wait)."""

    kind: str
    event: Event
    barrier: int
    needed: int
    threads: ThreadSet
    arrivals: int = 0            # "hang": every arrival with this count, and by how many threads
    distinct: int = 0


def mismatches(events: list[Event], role_spans: list[tuple[int, int]],
               truncated: bool = False) -> list[CountMismatch]:
    """Every count mismatch of the kernel's named barriers, in program order.

    `events`: every role's events, role by role in program order; `role_spans`: `(lo, hi)` of each
    role, for events whose exact thread set is unknown; `truncated`: the trace was cut short (then
    no arrivals are counted: the missing ones may complete a generation)."""
    out: list[CountMismatch] = []
    seen: set[int] = set()
    per_id: dict[int, list[list[tuple[Event, ThreadSet]]]] = {}
    unsure: set[int] = set()
    for ev in events:
        ident = _constant_id(ev)
        if ident is None:
            continue
        threads = event_threads(ev, *role_spans[ev.role])
        if overfull(ev) and id(ev.node) not in seen:
            seen.add(id(ev.node))
            out.append(CountMismatch("overfull", ev, ident, ev.value or 0, threads))
        if not ev.value or ev.uncertain or ev.once:
            unsure.add(ident)          # an unknown count, a guess of the threads, a loop walked once
        per_id.setdefault(ident, [[] for _ in role_spans])[ev.role].append((ev, threads))
    if not truncated:
        for ident, sequences in per_id.items():
            if ident not in unsure:
                out.extend(_hangs(ident, sequences))
    return out


def _constant_id(ev: Event) -> int | None:
    """The barrier id of a named-barrier event, where it is a constant."""
    if ev.kind not in NAMED_KINDS or ev.barrier is None or not isinstance(ev.barrier[1], int):
        return None
    return ev.barrier[1] if ev.barrier[1] >= 0 else None


def _hangs(ident: int, sequences: list[list[tuple[Event, ThreadSet]]]) -> list[CountMismatch]:
    """A generation of barrier `ident` that can never complete, where one exists.

    Proof: the arrivals with some count `n` are not a multiple of `n`, or fewer than `n` distinct
    threads ever arrive with it (a thread arrives once per generation): whatever the schedule, a
    generation is left short.  Place: `_stuck_generation`."""
    totals: dict[int, int] = {}
    union: dict[int, ThreadSet] = {}
    for seq in sequences:
        for ev, threads in seq:
            n = ev.value or 0
            totals[n] = totals.get(n, 0) + count(threads)
            union[n] = union.get(n, 0) | threads
    short = {n for n, total in totals.items() if n and (total % n or count(union[n]) < n)}
    if not short:
        return []
    stuck = _stuck_generation(sequences)
    if stuck is None or stuck.needed not in short:
        return []
    ev, _ = stuck.events[-1]
    return [CountMismatch("hang", ev, ident, stuck.needed, stuck.threads, totals[stuck.needed],
                          count(union[stuck.needed]))]


@dataclass
class _Generation:
    """The arrivals of one generation of a named barrier while it forms."""

    events: list[tuple[Event, ThreadSet]]
    threads: ThreadSet = 0
    arrived: int = 0
    needed: int = 0

    def takes(self, n: int, threads: ThreadSet) -> bool:
        """Whether an arrival of `threads` with count `n` may join: an empty generation takes
        anyone; else one count per generation, each thread once, never past the count."""
        return not self.events or (n == self.needed and not threads & self.threads
                                   and self.arrived + count(threads) <= n)


def _stuck_generation(sequences: list[list[tuple[Event, ThreadSet]]]) -> _Generation | None:
    """The roles' arrivals formed into generations in program order (each role's next arrival
    joins the open generation when it may, `_Generation.takes`); the generation left open when
    no role can move, or None when every arrival found a complete one."""
    heads = [0] * len(sequences)
    gen = _Generation([])
    moved = True
    while moved:
        moved = False
        for r, seq in enumerate(sequences):
            while heads[r] < len(seq) and gen.takes(seq[heads[r]][0].value or 0, seq[heads[r]][1]):
                ev, threads = seq[heads[r]]
                heads[r] += 1
                moved = True
                n, c = ev.value or 0, count(threads)
                rest = c % n if not gen.events else c
                if not rest:
                    continue               # whole generations of its own (overfull: reported apart)
                gen.events.append((ev, threads))
                gen.threads, gen.arrived, gen.needed = gen.threads | threads, gen.arrived + rest, n
                if gen.arrived == n:
                    gen = _Generation([])
    return gen if gen.events else None
