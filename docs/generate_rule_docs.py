"""Write docs/rules/<id>.md for every built-in rule (run from the repo root).

    python docs/generate_rule_docs.py

Examples are real TileLang 0.1.15 output from tests/fixtures/kernels: for
rules that tests/mutants/mutate.py plants, the planted change and the finding
pipelint reports on it (computed now, not pasted); for the others, the lines
of correct output the rule verifies.
"""
from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from pipelint.engine import CheckOptions, run_check  # noqa: E402
from pipelint.pluginhost import load_plugins  # noqa: E402
from mutants import mutate  # noqa: E402

KERNELS = ROOT / "tests" / "fixtures" / "kernels"
WHY = {
    "version-overwrite": "The version dimension is what lets iteration k+d's copy run while iteration k computes. "
                         "With too few versions (or a wrong slot index) the prefetch lands on data that has not "
                         "been consumed: results are silently wrong, and only for some tile sizes.",
    "version-mismatch": "Producer and consumer must agree which slot holds which iteration; rotating over "
                        "different counts makes them drift apart after the first wrap-around.",
    "shared-overlap": "TileLang packs buffers with disjoint lifetimes into the same bytes of dynamic shared "
                      "memory; if both are live in the pipelined loop, one clobbers the other.",
    "wait-too-shallow": "`cp_async_wait<N>` counts commit groups, not stages. One group too many left in flight "
                        "and compute reads a tile that is still being copied: a race that passes most tests.",
    "wait-too-deep": "A wait that drains more groups than the reads need turns the pipeline back into "
                     "copy-then-compute; `cp_async_wait<0>` in the loop is the classic case: num_stages buys "
                     "shared memory and no overlap.",
    "redundant-wait": "A wait with no commit since the previous one waits for nothing new; advising a deeper "
                      "N for it would be wrong (every N is equally useless). It costs an instruction and "
                      "hides which wait actually guards the reads.",
    "uncommitted-copy": "Only committed groups can be waited for; an uncommitted copy is never covered by any "
                        "`cp_async_wait`, so its data is read whenever it happens to arrive.",
    "missing-drain": "Async copies still in flight when the kernel exits or the bytes are reused write into "
                     "memory that now belongs to something else.",
    "missing-barrier": "cp.async completion is per thread; other threads see the data only after a block barrier "
                       "that follows the wait (RAW). Before re-filling a slot, every thread must be done reading "
                       "it (WAR). Each of these needs a `__syncthreads` in the right place.",
    "divergent-barrier": "`__syncthreads` must be reached by every thread of the block; under a `threadIdx` "
                         "branch it hangs or corrupts the barrier state.",
    "redundant-barrier": "Every `__syncthreads` in the steady-state loop stalls the whole block once per "
                         "iteration. A barrier that orders no hazard is pure latency on the critical path; the "
                         "seed document's criterion is that barriers per iteration must not grow with num_stages.",
    "mbarrier-arrival-count": "A phase completes after exactly `init(n)` arrivals. If a whole warp group arrives "
                              "where one elected thread was expected (or the reverse), phases complete early "
                              "(race) or never (hang).",
    "mbarrier-tx-bytes": "The full barrier's phase completes when the announced transaction bytes have landed. "
                         "Announcing fewer bytes than the TMA boxes deliver releases consumers before the tile "
                         "is complete; announcing more hangs.",
    "mbarrier-deadlock": "Parities encode which phase a wait expects. The producer's first wait on an empty slot "
                         "must pass on the initial phase (`^ 1`); an off-by-one parity or a missing arrive makes "
                         "both roles wait for each other forever.",
    "tma-read-before-wait": "TMA writes shared memory asynchronously; only a wait that observed the phase the "
                            "load completes makes the tile safe to read.",
    "mbarrier-release": "In a warp-specialized pipeline the consumers' arrive on the empty barrier is the only "
                        "thing that tells the producer a slot can be overwritten.",
    "tma-store-fence": "The epilogue of a warp-specialized kernel gathers the tile in shared memory with "
                       "ordinary stores (stmatrix) and hands it to the TMA unit; without a proxy fence the "
                       "async proxy may read the tile before those stores are visible to it.",
    "mbarrier-init-fence": "mbarrier initialisation is a generic-proxy write; the TMA unit (async proxy) and the "
                           "other threads see it only after `fence_barrier_init` and a block barrier.",
    "planner-stages": "The stage/order annotations are what InjectSoftwarePipeline materialises; a plan outside "
                      "the planner's own shape means the lowering is not what num_stages asked for.",
    "ir-cuda-mismatch": "The generated CUDA must implement the IR's pipeline: as many slots as versions and a "
                        "wait that keeps versions-1 stages in flight.",
    "stage-trend": "More stages should buy more versions and more groups in flight, at a flat barrier count; "
                   "anything else means num_stages is not doing what it should.",
    "shared-memory-budget": "Each stage multiplies the pipelined buffers; past the per-block limit the kernel "
                            "cannot launch at all.",
    "lowering-failed": "A variant that does not lower cannot be compared or benchmarked.",
    "parse-error": "pipelint checks nothing in a file it cannot parse, so it says so instead of passing it.",
    "unreadable-file": "Binary, non-UTF-8, unreadable or oversized inputs are reported, not skipped silently.",
    "no-kernel": "A dump without a `__global__` body (a header, a host stub) has no pipeline to check.",
    "unused-suppression": "A suppression that matches nothing hides nothing today and may hide a real finding "
                          "tomorrow.",
    "unknown-intrinsic": "A linter that silently skips what it does not understand gives a clean report on a "
                         "kernel it never checked. Naming the call says exactly where the analysis has a hole.",
    "mbarrier-not-analyzed": "2-CTA (cluster) kernels complete mbarrier phases from both CTAs; simulating one CTA "
                             "would turn every peer arrival into a false hang. The note records what was not "
                             "checked instead of guessing.",
}
# Rules without a planted mutant that fire on correct TileLang output, and rules that say what
# pipelint could not analyse: how they show up.
COVERAGE = {
    "redundant-wait": "TileLang 0.1.15's own output for `tests/fixtures/causes/scaled_gemm.py` on sm_80 "
                      "(`tests/fixtures/kernels/scaled_gemm_sm_80_s2.cu`): in the pipelined loop "
                      "`cp_async_wait<3>` (line 100) is followed by `cp_async_wait<5>` (line 141) with no "
                      "`cp_async_commit` between, so the second one waits for nothing:\n\n```\n"
                      "scaled_gemm_sm_80_s2.cu:141:5: warning[redundant-wait] cp_async_wait<5> in the "
                      "pipelined loop orders no read: no commit since the previous wait, or every read after "
                      "it is covered by a later wait; remove it\n```",
    "unknown-intrinsic": "A `tl::` call with a shared-memory pointer argument (or a name that says it "
                         "synchronises) that `pipelint/model/intrinsics.py` does not list:\n\n```\n"
                         "k.cu:88:7: note[unknown-intrinsic] tl::my_copy is not in pipelint's intrinsics table: "
                         "its effect on shared memory and barriers is not modelled\n```",
    "mbarrier-not-analyzed": "On TileLang's 2-CTA tcgen05 GEMMs (`T.gemm(..., use_2cta=True)` on sm_100), where "
                             "`loaded[k].arrive(0u)` arrives on CTA 0's barrier from both CTAs.",
}
# Rules without a planted mutant: the lines of correct TileLang output the rule verifies.
VERIFIED = {
    "version-mismatch": ("gemm_f16_sm_80_s3.cu", r"\(k \+ 2\) % 3|\(k % 3\) \* 4096"),
    "shared-overlap": ("flash_attn_fwd_sm_80_s2.cu", r"void\* [A-Z]_shared = "),
    "missing-drain": ("gemm_f16_sm_80_s3.cu", r"cp_async_wait<[01]>"),
    "tma-read-before-wait": ("gemm_f16_sm_90_s3.cu", r"\.wait\(|tma_load\(A_desc"),
    "ir-cuda-mismatch": ("gemm_f16_sm_80_s3.cu", r"cp_async_wait<2>|\(k % 3\) \* 4096\)\) \+ \(\(\(\(\(int\)threadIdx.x\) & 63"),
    "stage-trend": ("gemm_f16_sm_80_s4.cu", r"cp_async_wait<3>|__syncthreads"),
    "shared-memory-budget": ("gemm_f16_sm_80_s4.cu", r"buf_dyn_shmem \+ "),
}
SEED = """```
$ pipelint lower examples/gemm.py --num-stages 3 --arch sm_80
software_pipeline_stage = [0, 0, 2]
software_pipeline_order = [0, 1, 2]
tl_pipelined_num_stages = 3
```"""


def _short(line: str, width: int = 150) -> str:
    line = line.rstrip()
    return line if len(line) <= width else line[:width] + " ..."


def mutant_example(host, m) -> str:
    original = (KERNELS / m.fixture).read_text().split("\n")
    changed = m.text.split("\n")
    diff = [_short(d) for d in difflib.unified_diff(original, changed, m.fixture, m.name + ".cu", n=1, lineterm="")]
    tmp = ROOT / "build" / "rule-docs"
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"{m.name}.cu"
    path.write_text(m.text)
    report = run_check([str(path)], host, CheckOptions(jobs=1))
    hits = [f for f in report.findings if f.rule == m.rule and f.location.line == m.line]
    msg = f"{m.name}.cu:{hits[0].location.line}:{hits[0].location.column}: " \
          f"{hits[0].severity.value}[{m.rule}] {hits[0].message}" if hits else "(no finding)"
    return (f"Planted in real TileLang output (`tests/fixtures/kernels/{m.fixture}`, operator "
            f"`{m.name}` in `tests/mutants/mutate.py`):\n\n```diff\n" + "\n".join(diff) +
            f"\n```\n\npipelint reports:\n\n```\n{msg}\n```")


def verified_example(rule_id: str) -> str:
    fixture, pattern = VERIFIED[rule_id]
    lines = (KERNELS / fixture).read_text().split("\n")
    picked = [f"{n:4d}  {_short(l.strip(), 140)}" for n, l in enumerate(lines, 1) if re.search(pattern, l)][:6]
    return (f"What the rule verifies in correct TileLang output (`tests/fixtures/kernels/{fixture}`), "
            f"where it reports nothing:\n\n```cuda\n" + "\n".join(picked) + "\n```")


def main() -> int:
    host = load_plugins()
    mutants = {m.rule: m for m in (op() for op in mutate.BASE_OPERATORS)}
    out = ROOT / "docs" / "rules"
    for rule in sorted(host.rules.values(), key=lambda r: r.id):
        plugin = host.rule_plugin[rule.id]
        if plugin not in ("pipelint", "version-dimension", "wait-group", "barriers", "tma-barriers",
                          "lowering-facts", "coverage"):
            continue
        if rule.id in mutants:
            example = mutant_example(host, mutants[rule.id])
        elif rule.id in VERIFIED:
            example = verified_example(rule.id)
        elif rule.id in COVERAGE:
            example = COVERAGE[rule.id]
        elif rule.id == "planner-stages":
            example = "The seed document's experiment, which this rule generalises:\n\n" + SEED
        else:
            example = "Reported by the core on input it cannot analyse; see tests/test_bad_input.py."
        page = f"""# {rule.id}

**{rule.short}** — plugin `{plugin}`, default severity `{rule.severity.value}`, tags: {', '.join(rule.tags)}.

## What

{rule.full}

## Why it matters for the pipeline

{WHY.get(rule.id, rule.full)}

## Example

{example}

## How to fix

{rule.help}

Suppress one occurrence with `// pipelint: ignore[{rule.id}]` on the line or the line before, or
configure it in `[tool.pipelint]` (`ignore`, `per-file-ignores`, `severity`).
"""
        (out / f"{rule.id}.md").write_text(page)
        print(out / f"{rule.id}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
