"""The seed's criteria, generalised: what the planner and the generated CUDA must agree on.

Runs on the variants of one kernel that `pipelint lower` produced:

* planner invariants, read from `src/transform/pipeline_planning.cc`: copies
  that feed a consumer sit at stage 0, every other statement at one stage S,
  where S = N, or N - 1 when all copies were ordered last and N >= 2 (the
  "move copies to the front" step); order is a permutation; N = 0 leaves no
  annotation at all, and N = 1 is still a two-stage plan ([0, 0, 1]);
* IR vs CUDA: the version dimension `InjectSoftwarePipeline` gave each buffer
  is the number of slots the CUDA rotates over, and the steady-state
  `cp_async_wait` keeps versions - 1 stages of commit groups in flight;
* across num_stages: versions and in-flight depth grow, block barriers per
  steady-state iteration stay flat;
* shared memory per variant within the arch's per-block limit.
"""
from __future__ import annotations

from collections import defaultdict

from pipelint import hookimpl
from pipelint.checks import VariantCheck
from pipelint.findings import Finding, Location, Rule, Severity
from pipelint.lowering.sweep import LoweredVariant
from pipelint.model.intrinsics import EventKind as K

SMEM_LIMIT = {"sm_80": 163 * 1024, "sm_86": 99 * 1024, "sm_87": 163 * 1024, "sm_89": 99 * 1024,
              "sm_90": 227 * 1024, "sm_90a": 227 * 1024, "sm_100": 227 * 1024, "sm_100a": 227 * 1024,
              "sm_120": 99 * 1024}

class PlannerStages(VariantCheck):
    """Each loop's stage/order plan against the shape the planner produces for its num_stages."""

    rule = Rule(
        "planner-stages", "PlannerStages", "Pipeline plan breaks the planner's invariants",
        "The software_pipeline_stage / order annotations PipelinePlanning wrote do not have the shape "
        "its algorithm produces for this num_stages.", Severity.ERROR,
        "Report it with the kernel: the lowering is not what TileLang's planner intends.",
        ("correctness", "planner"),
        rationale="The stage/order annotations are what InjectSoftwarePipeline materialises; a plan outside "
                  "the planner's own shape means the lowering is not what num_stages asked for.")
    def check(self, variants: list[LoweredVariant]) -> list[Finding]:
        return [f for v in variants if v.ok for f in _planner(v)]


class IrCudaMismatch(VariantCheck):
    """The IR's versions, wait depth and TMA boxes against what the CUDA does."""

    rule = Rule(
        "ir-cuda-mismatch", "IrCudaMismatch", "Generated CUDA disagrees with the IR's pipeline",
        "The version dimension or wait depth in the CUDA is not what the IR's pipeline says.",
        Severity.ERROR, "Compare the IR after InjectSoftwarePipeline with the CUDA (--trace).",
        ("correctness", "pipeline"),
        rationale="The generated CUDA must implement the IR's pipeline: as many slots as versions and a wait "
                  "that keeps versions-1 stages in flight.")
    def check(self, variants: list[LoweredVariant]) -> list[Finding]:
        return [f for v in variants if v.ok for f in _ir_vs_cuda(v)]


class StageTrend(VariantCheck):
    """Versions, in-flight depth and barriers per iteration across the num_stages of one arch."""

    rule = Rule(
        "stage-trend", "StageTrend", "A pipeline fact moves the wrong way as num_stages grows",
        "Across variants of one kernel, versions and in-flight depth should grow with num_stages and "
        "block barriers per steady-state iteration stay flat; a barrier count that grows means a "
        "barrier landed on the critical path.", Severity.WARNING,
        "Diff the variants (`pipelint diff`) and look at the barriers in the loop.",
        ("performance", "pipeline"),
        rationale="More stages should buy more versions and more groups in flight, at a flat barrier count; "
                  "anything else means num_stages is not doing what it should.")
    def check(self, variants: list[LoweredVariant]) -> list[Finding]:
        return _trends(variants)


class SharedMemoryBudget(VariantCheck):
    """Each variant's shared memory against its arch's per-block limit."""

    rule = Rule(
        "shared-memory-budget", "SharedMemoryBudget", "Variant needs more shared memory than a block may have",
        "The static shared-memory footprint exceeds the architecture's per-block limit (sm_80: 163 KB, "
        "sm_90: 227 KB), so the kernel cannot launch.", Severity.ERROR,
        "Lower num_stages or the tile sizes.", ("resources",),
        rationale="Each stage multiplies the pipelined buffers; past the per-block limit the kernel cannot "
                  "launch at all.")
    def check(self, variants: list[LoweredVariant]) -> list[Finding]:
        return [f for v in variants if v.ok for f in _budget(v)]


class LoweringFailed(VariantCheck):
    """A variant TileLang could not lower, with TileLang's message."""

    rule = Rule(
        "lowering-failed", "LoweringFailed", "TileLang could not lower this variant",
        "Lowering failed, hung or crashed; the message is TileLang's own.", Severity.ERROR,
        "Read TileLang's message; try --trace to see the pass that failed.", ("tool",),
        rationale="A variant that does not lower cannot be compared or benchmarked.")
    at_loop = False         # about the kernel, not its pipeline plan

    def check(self, variants: list[LoweredVariant]) -> list[Finding]:
        return [_finding("lowering-failed", v, f"{v.arch} num_stages={v.num_stages}: {v.error}")
                for v in variants if not v.ok]


RULES = tuple(c.rule for c in (PlannerStages, IrCudaMismatch, StageTrend, SharedMemoryBudget, LoweringFailed))
# each variant's findings in the order the sweep always gave them: plan, IR vs CUDA, budget, then trends
CHECKS = (LoweringFailed(), PlannerStages(), IrCudaMismatch(), SharedMemoryBudget(), StageTrend())
_R = {r.id: r for r in RULES}


@hookimpl
def pipelint_rules() -> tuple[Rule, ...]:
    return RULES


@hookimpl
def pipelint_checks() -> tuple[VariantCheck, ...]:
    return CHECKS


def _finding(rule_id: str, v, message: str, severity=None) -> Finding:
    rule = _R[rule_id]
    return Finding(rule.id, severity or rule.severity, message, Location(v.location_path, 1, 1), kernel=v.kernel)


def _planner(v):
    n = v.num_stages
    # A loop whose `T.Pipelined` names its own `order`/`stage` and no `num_stages` is the author's
    # plan: TileLang's planner does not run on it (`tl_pipelined_num_stages` is unset) and the
    # sweep's num_stages does not reach it, so there is nothing to compare it with.
    loops = [lp for lp in v.pipelined_loops
             if lp.get("tl_pipelined_num_stages") is not None or not lp.get("software_pipeline_stage")
             or "tl_pipelined_num_stages" not in lp]
    if n == 0:
        return [_finding("planner-stages", v, f"num_stages=0 but the loop over {lp['loop_var']} still has "
                         f"a pipeline plan {lp['software_pipeline_stage']}") for lp in loops]
    out = []
    for lp in loops:
        stage, order = lp["software_pipeline_stage"] or [], lp["software_pipeline_order"] or []
        where = f"loop over {lp['loop_var']} (num_stages={n})"
        for p in _plan_problems(lp, n, stage, order):
            out.append(_finding("planner-stages", v, f"{where}: {p} (stage={stage}, order={order})"))
    return out


def _copy_flags(lp: dict, stage: list[int]) -> list[int]:
    """Which statements are the planner's async copies.

    The planner records no async producers when the body's statements are not bare copies
    (user warp specialization: a `T.ws` producer block and a consumer block); its copy-like
    statements are then the stage-0 ones.
    """
    producers = lp.get("software_pipeline_async_producers") or []
    if len(producers) == len(stage):
        return producers
    return [1 if s == 0 else 0 for s in stage] if any(stage) else [0] * len(stage)


def _plan_problems(lp: dict, n: int, stage: list[int], order: list[int]) -> list[str]:
    """What in one loop's plan differs from what the planner itself would produce."""
    producers = _copy_flags(lp, stage)
    problems = []
    if lp.get("tl_pipelined_num_stages") not in (None, n):
        problems.append(f"tl_pipelined_num_stages is {lp['tl_pipelined_num_stages']}, not {n}")
    if sorted(order) != list(range(len(stage))):
        problems.append(f"order {order} is not a permutation of the {len(stage)} statements")
    rest = {s for s, p in zip(stage, producers) if not p and s != 0}
    problems += _stage_shape(n, rest, order, producers)
    bad_copies = [i for i, (s, p) in enumerate(zip(stage, producers)) if p and s != 0]
    if bad_copies:
        problems.append(f"async copies {bad_copies} are not at stage 0")
    if not rest and stage:
        problems.append("every statement is at stage 0: nothing overlaps")
    return problems


def _stage_shape(n: int, rest: set[int], order: list[int], producers: list[int]) -> list[str]:
    """The planner orders each copy right after its last consumer, then, if all copies ended
    up last and N >= 2, moves them to the front and lowers every other statement by one stage."""
    copy_orders = [o for o, p in zip(order, producers) if p]
    other_orders = [o for o, p in zip(order, producers) if not p]
    shifted = bool(copy_orders and other_orders) and max(copy_orders) < min(other_orders)
    expected = n - 1 if shifted else n
    if shifted and n < 2:
        return ["copies were moved ahead of their consumers, which the planner only does for num_stages >= 2"]
    if len(rest) > 1 or (rest and rest != {expected}):
        return [f"non-copy statements sit at stages {sorted(rest)}; with the copies ordered "
                f"{'first' if shifted else 'after their consumers'} the planner puts them all at stage {expected}"]
    return []



def _ir_vs_cuda(v):
    out = []
    shapes = v.facts.get("shared_shapes", {})
    versions = v.versions
    for name, cuda_versions in versions.items():
        shape = shapes.get(name)
        if shape and len(shape) >= 2 and shape[0] > 1 and not _implements(v, name, shape[0], cuda_versions):
            out.append(_finding("ir-cuda-mismatch", v, f"{name}: the IR gives it {shape[0]} versions "
                                f"(shape {shape}) but the CUDA rotates over {cuda_versions} slots"))
    out.extend(_tma_boxes(v))
    wait = v.steady_wait()
    # the stages a cp_async_wait keeps in flight are those of the buffers cp.async fills: a tile
    # indexed by an outer loop's variable (one slice per KV split) has versions no copy rotates
    copied = {ev.buffer for ev in v.model.trace.all_events() if ev.kind == K.CP_ASYNC} if v.model else set()
    rotated = {name: n for name, n in versions.items() if name in copied}
    if wait and rotated:
        n, groups = wait
        expected = max(rotated.values()) - 1
        if n // groups != expected:
            out.append(_finding("ir-cuda-mismatch", v, f"steady-state cp_async_wait<{n}> with {groups} commit "
                                f"group(s) per stage keeps {n // groups} stage(s) in flight, but the buffers "
                                f"have {expected + 1} versions (expected {expected} in flight)"))
    return out


def _implements(v, name: str, ir_versions: int, cuda_slots: int) -> bool:
    """Whether the CUDA's rotation over `cuda_slots` slots of `name` implements the IR's versions:
    the same number, or, for a pipelined loop that runs fewer times than there are versions, as
    many slots as the loop has trips (TileLang folds `k % 3` into `k` for a two-trip loop), with the
    declaration holding every version where its size is known."""
    if cuda_slots == ir_versions:
        return True
    model = v.model
    trips = [loop.trip for loop in model.trace.loops.values() if loop.pipelined and not loop.runtime]
    if not trips or cuda_slots != max(trips) or cuda_slots > ir_versions:
        return False
    buf, stages = model.buffers.get(name), model.stages.get(name)
    return buf is None or buf.size is None or stages is None or buf.size >= ir_versions * stages.stride


def _tma_boxes(v):
    """Bytes each TMA load writes, as the CUDA's slot layout implies, vs the descriptor's box."""
    boxes = v.facts.get("tma_box_bytes") or {}
    if v.model is None or not boxes:
        return []
    estimates = v.model.mbarrier.tma_bytes
    out, seen = [], set()
    for ev in v.model.trace.all_events():
        if ev.kind != K.TMA_LOAD or not ev.node.args:
            continue
        desc = ev.node.args[0]
        name = desc.ident if hasattr(desc, "ident") else None
        est = estimates.get(id(ev))
        if name in boxes and est is not None and est != boxes[name] and (name, est) not in seen:
            seen.add((name, est))
            out.append(_finding("ir-cuda-mismatch", v, f"TMA load through {name} into {ev.buffer} (line "
                                f"{ev.node.span.line}) covers {est} bytes of the slot, but the descriptor's "
                                f"box is {boxes[name]} bytes"))
    return out


def _budget(v):
    need = v.shared_bytes
    limit = SMEM_LIMIT.get(v.arch)
    if need is None or limit is None or need <= limit:
        return []
    return [_finding("shared-memory-budget", v, f"{v.arch} num_stages={v.num_stages} needs {need} bytes of "
                     f"shared memory per block; the limit is {limit} ({limit // 1024} KB)")]


def _has_pipelined_loop(v) -> bool:
    """Whether a pipelined loop is left in the CUDA: with as many trips as stages TileLang unrolls it
    away (every copy into its own slot, drained by waits), and no rotation says how many versions."""
    return any(loop.pipelined for loop in v.model.trace.loops.values())


def _trends(variants):
    by_arch = defaultdict(list)
    for v in variants:
        if v.ok and v.model is not None and v.num_stages >= 1:
            by_arch[v.arch].append(v)
    return [f for arch, vs in by_arch.items() for f in _arch_trends(arch, sorted(vs, key=lambda v: v.num_stages))]


def _arch_trends(arch: str, vs: list) -> list[Finding]:
    """The trends of one arch's variants, in num_stages order."""
    out = []
    for a, b in zip(vs, vs[1:]):
        if b.max_versions < a.max_versions and _has_pipelined_loop(b):
            out.append(_finding("stage-trend", b, f"{arch}: versions fall from {a.max_versions} at "
                                f"num_stages={a.num_stages} to {b.max_versions} at {b.num_stages}"))
        if a.in_flight is not None and b.in_flight is not None and b.in_flight < a.in_flight:
            out.append(_finding("stage-trend", b, f"{arch}: in-flight depth falls from {a.in_flight} to "
                                f"{b.in_flight} as num_stages goes {a.num_stages} -> {b.num_stages}"))
    counted = [v for v in vs if v.barriers_per_iteration is not None]
    if len(counted) >= 3:
        counts = [v.barriers_per_iteration for v in counted]
        if all(x < y for x, y in zip(counts, counts[1:])):
            last = counted[-1]
            out.append(_finding("stage-trend", last, f"{arch}: block barriers per steady-state iteration "
                                f"grow with num_stages ({counts} for num_stages "
                                f"{[v.num_stages for v in counted]}): a barrier is on the critical path"))
    return out
