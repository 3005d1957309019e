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
    loads = [ev for ev in events if ev.kind == K.TMA_LOAD and ev.barrier is not None]
    if not loads:
        return None
    full = sorted({ev.barrier for ev in loads if ev.iteration} or {ev.barrier for ev in loads},
                  key=lambda b: (str(b[0]), _index(b[1])))
    full_set = set(full)
    inits = {key: ev.value for key, ev in model.mbarrier_inits().items()}
    waits = [ev for ev in events if ev.kind == K.MBAR_WAIT and ev.barrier is not None]
    arrived = {ev.barrier for ev in events if ev.kind == K.MBAR_ARRIVE and ev.barrier is not None}
    empty = sorted({b for b in arrived if b not in full_set and b in inits} or
                   {ev.barrier for ev in waits if ev.barrier not in full_set and ev.barrier in inits},
                   key=lambda b: (str(b[0]), _index(b[1])))

    def role(index: int) -> str:
        roles = model.roles
        return str(roles[index]) if 0 <= index < len(roles) else f"role {index}"

    producers = sorted({ev.role for ev in loads})
    consumers = sorted({ev.role for ev in waits if ev.barrier in full_set} - set(producers))
    boxes = facts.get("tma_box_bytes") or {}
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
    stage_bytes = sum(boxes[d] * n for d, n in per_desc.items() if d in boxes) \
        if per_desc and all(d in boxes for d in per_desc) else None
    announced_events = [ev for ev in events if ev.kind in _EXPECT and ev.iteration == first
                        and ev.barrier == one_slot]
    announced = sum(ev.value for ev in announced_events) \
        if announced_events and all(isinstance(ev.value, int) for ev in announced_events) else None
    lines = source.split("\n")

    def parity(roles: list[int], barriers: set) -> str | None:
        for ev in waits:
            if ev.role in roles and ev.barrier in barriers and ev.iteration:
                line = ev.node.span.line
                m = _WAIT_ARG.search(lines[line - 1]) if 0 < line <= len(lines) else None
                if m:
                    return _strip_parens(m.group(1))
        return None

    return {
        "slots": len(full),
        "full": [inits.get(b) for b in full],
        "empty": [inits.get(b) for b in empty],
        "stage_bytes": stage_bytes,
        "boxes": {d: f"{n} x {boxes[d]}" if n > 1 else str(boxes[d]) for d, n in sorted(per_desc.items())
                  if d in boxes},
        "announced": announced,
        "announce_calls": len(announced_events),
        "producer": [role(r) for r in producers],
        "consumer": [role(r) for r in consumers],
        "consumer_parity": parity(consumers, full_set),
        "producer_parity": parity(producers, set(empty)),
    }


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
