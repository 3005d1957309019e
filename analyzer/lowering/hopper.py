"""The TMA pipeline of a Hopper variant, for `lower --arch sm_90`'s table (issue 34).

On sm_90 TileLang does not software-pipeline with cp.async: a producer warp group issues TMA
loads into stage slots, each slot has a "full" mbarrier the loads complete (their bytes
announced with `expect_tx`) and an "empty" one the consumers arrive on when they are done
with it, and each side waits with a parity that flips every time the slots wrap around.  The
planner facts (`software_pipeline_stage`, the cp.async wait) do not exist there; these do:

* slots: full and empty mbarriers, with their init counts (arrivals per phase);
* bytes per stage: what one stage's TMA loads write, from the descriptors' boxes (the lowering
  facts), next to what its `expect_tx` announces;
* roles: who produces (issues the TMA loads) and who consumes (waits on the full barriers);
* parity: the wait parity expressions of the consumer and producer, as the CUDA writes them.

Read off the kernel model of the generated CUDA; nothing here fails: a fact that cannot be read
is left out.
"""
from __future__ import annotations

import re
from typing import Any

from ..model.intrinsics import EventKind as K

_WAIT_ARG = re.compile(r"\.wait\((.*)\)\s*;")
_EXPECT = (K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX)


def tma_facts(model: Any, facts: dict, source: str) -> dict | None:
    """The TMA pipeline facts of one lowered variant, or None when it has no TMA loads."""
    try:
        return _facts(model, facts, source)
    except Exception:  # noqa: BLE001 - a table cell, never a failure of the run
        return None


def _facts(model: Any, facts: dict, source: str) -> dict | None:
    if model is None:
        return None
    events = list(model.trace.all_events())
    loads = _on_barriers(events, K.TMA_LOAD)
    if not loads:
        return None
    full = _full_barriers(loads)
    full_set = set(full)
    inits = {key: ev.value for key, ev in model.mbarrier_inits().items()}
    waits = _on_barriers(events, K.MBAR_WAIT)
    empty = _empty_barriers(_on_barriers(events, K.MBAR_ARRIVE), waits, full_set, inits)
    producers, consumers = _roles(loads, waits, full_set)
    boxes = facts.get("tma_box_bytes") or {}
    first, one_slot, per_desc = _one_stage(loads)
    announced_events = _announcements(events, first, one_slot)
    lines = source.split("\n")
    return {
        "slots": len(full),
        "full": [inits.get(b) for b in full],
        "empty": [inits.get(b) for b in empty],
        "stage_bytes": _stage_bytes(per_desc, boxes),
        "boxes": _box_cells(per_desc, boxes),
        "announced": _announced(announced_events),
        "announce_calls": len(announced_events),
        "producer": [_role_name(model, r) for r in producers],
        "consumer": [_role_name(model, r) for r in consumers],
        "consumer_parity": _parity(waits, lines, consumers, full_set),
        "producer_parity": _parity(waits, lines, producers, set(empty)),
    }


def _on_barriers(events: list, kind: K) -> list:
    """The events of `kind` whose mbarrier the model resolved (the others name no slot)."""
    return [ev for ev in events if ev.kind == kind and ev.barrier is not None]


def _slot_order(barrier: tuple) -> tuple[str, int]:
    """Barriers sort by array name, then index (an index that is not a number first)."""
    return str(barrier[0]), _index(barrier[1])


def _full_barriers(loads: list) -> list:
    """The "full" mbarriers: those the TMA loads in the pipelined loop complete (those of all
    the loads when none is in a loop), one per stage slot."""
    return sorted({ev.barrier for ev in loads if ev.iteration} or {ev.barrier for ev in loads}, key=_slot_order)


def _empty_barriers(arrivals: list, waits: list, full_set: set, inits: dict) -> list:
    """The "empty" mbarriers: initialised ones, not full, that someone arrives on; failing
    those, initialised ones, not full, that someone waits on."""
    arrived = {ev.barrier for ev in arrivals}
    return sorted({b for b in arrived if b not in full_set and b in inits} or
                  {ev.barrier for ev in waits if ev.barrier not in full_set and ev.barrier in inits},
                  key=_slot_order)


def _roles(loads: list, waits: list, full_set: set) -> tuple[list[int], list[int]]:
    """(producers, consumers): the roles that issue the TMA loads, and the other roles that
    wait on the full barriers."""
    producers = sorted({ev.role for ev in loads})
    consumers = sorted({ev.role for ev in waits if ev.barrier in full_set} - set(producers))
    return producers, consumers


def _announcements(events: list, first: tuple, one_slot: Any) -> list:
    """The `expect_tx` calls of the stage `_one_stage` picked: same iteration, same slot barrier."""
    return [ev for ev in events if ev.kind in _EXPECT and ev.iteration == first and ev.barrier == one_slot]


def _role_name(model: Any, index: int) -> str:
    roles = model.roles
    return str(roles[index]) if 0 <= index < len(roles) else f"role {index}"


def _one_stage(loads: list) -> tuple[tuple, Any, dict[str, int]]:
    """(iteration, slot barrier, loads per TMA descriptor) of one stage: the first loop
    iteration's loads that complete the slot of its first load; one stage is what the table shows."""
    first = next((ev.iteration for ev in loads if ev.iteration), ())
    stage_loads = [ev for ev in loads if ev.iteration == first]
    one_slot = stage_loads[0].barrier if stage_loads else None
    per_desc: dict[str, int] = {}
    for ev in stage_loads:
        if ev.barrier != one_slot:
            continue
        desc = ev.node.args[0] if getattr(ev.node, "args", None) else None
        name = getattr(desc, "ident", None)
        if name is not None:
            per_desc[name] = per_desc.get(name, 0) + 1
    return first, one_slot, per_desc


def _stage_bytes(per_desc: dict[str, int], boxes: dict) -> int | None:
    """What one stage's loads write, from the boxes of their descriptors; None unless every
    descriptor's box is known (a partial sum would look like a wrong expect_tx)."""
    if not (per_desc and all(d in boxes for d in per_desc)):
        return None
    return sum(boxes[d] * n for d, n in per_desc.items() if d in boxes)


def _box_cells(per_desc: dict[str, int], boxes: dict) -> dict[str, str]:
    """Descriptor -> its box bytes, `N x BYTES` when one stage loads it N times (known boxes only)."""
    return {d: f"{n} x {boxes[d]}" if n > 1 else str(boxes[d]) for d, n in sorted(per_desc.items()) if d in boxes}


def _announced(announced_events: list) -> int | None:
    """The bytes one stage's `expect_tx` calls announce; None unless each is a known integer."""
    if not (announced_events and all(isinstance(ev.value, int) for ev in announced_events)):
        return None
    return sum(ev.value for ev in announced_events)


def _parity(waits: list, lines: list[str], roles: list[int], barriers: set) -> str | None:
    """The parity argument of the first in-loop wait by `roles` on `barriers`, as the CUDA
    line writes it (outer parentheses dropped); None when no such wait's line shows one."""
    for ev in waits:
        if ev.role in roles and ev.barrier in barriers and ev.iteration:
            line = ev.node.span.line
            m = _WAIT_ARG.search(lines[line - 1]) if 0 < line <= len(lines) else None
            if m:
                return _strip_parens(m.group(1))
    return None


def _index(i: object) -> int:
    return i if isinstance(i, int) else -1


def _strip_parens(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _counts(counts: list) -> str:
    """`3 x 1` for three barriers that each expect one arrival per phase."""
    if not counts:
        return "-"
    if len(set(counts)) == 1:
        return f"{len(counts)} x {counts[0] if counts[0] is not None else '?'}"
    return ", ".join("?" if c is None else str(c) for c in counts)


def table_rows(lowered: list) -> list[tuple[str, ...]]:
    """Rows of the TMA table (a header first) for the variants that have TMA facts; [] if none."""
    rows: list[tuple[str, ...]] = []
    for lv in lowered:
        t = getattr(lv, "tma", None)
        if not t:
            continue
        stage = "-" if t["stage_bytes"] is None else str(t["stage_bytes"])
        if t["boxes"]:
            stage += " (" + " + ".join(f"{d} {b}" for d, b in t["boxes"].items()) + ")"
        announced = "-" if t["announced"] is None else str(t["announced"])
        if t["announce_calls"] > 1 and t["announced"] is not None:
            announced += f" (sum of {t['announce_calls']} calls)"
        rows.append((lv.arch, str(lv.num_stages), str(t["slots"]), _counts(t["full"]), _counts(t["empty"]),
                     stage, announced, ", ".join(t["producer"]) or "-", ", ".join(t["consumer"]) or "-",
                     t["consumer_parity"] or "-", t["producer_parity"] or "-"))
    if not rows:
        return []
    return [("arch", "N", "slots", "full mbarriers x arrivals", "empty mbarriers x arrivals",
             "bytes/stage (TMA boxes)", "expect_tx bytes", "producer", "consumer",
             "consumer wait parity", "producer wait parity"), *rows]
