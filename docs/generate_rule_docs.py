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

from pipelint.docs import render_page  # noqa: E402
from pipelint.engine import CheckOptions, run_check  # noqa: E402
from pipelint.pluginhost import builtin_plugins, load_plugins  # noqa: E402
from pipelint.registry import README_END, README_START, readme_table  # noqa: E402
from mutants import mutate  # noqa: E402

KERNELS = ROOT / "tests" / "fixtures" / "kernels"
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
    "shared-race": "TileLang 0.1.15's output for FLA's `chunk_bwd_dqkwg` (fla-org/flash-linear-attention, "
                   "`chunk_bwd.py` line 131) runs `s_dg_last_acc[0] += ...` in every consumer thread with no "
                   "guard: a read-modify-write of one shared float by many threads. compute-sanitizer racecheck "
                   "confirms it on an H200 (`docs/validation/raw_launch.md`, case b):\n\n```\n"
                   "fla__chunk_bwd__chunk_bwd_dqkwg_sm_80.cu:240:5: error[shared-race] race on s_dg_last_acc: "
                   "the read-modify-write at line 240 is run by several threads (threads 0-127) on the same "
                   "bytes, so one thread may read before or after another's store (RAW/WAR) with no ordering "
                   "between them\n```\n\nThreads that read back exactly the bytes they stored themselves "
                   "are never reported (a thread sees its own stores in program order), nor are stores that "
                   "several threads repeat with the same value (TileLang's replicated stores).",
    "shared-write-race": "A copy-in that writes `As[tx]` and a fill that writes `As[tx + 10]` with no barrier "
                         "between: thread 10's and thread 0's stores to `As[10]` race, and the final value is "
                         "whichever lands last (`tests/test_every_access.py`).",
    "barrier-scope": "TileLang 0.1.15's own example `warp_specialize/example_warp_specialize_gemm_copy_gemm_0_1.py`: "
                     "all 256 threads store `A_shared`, then each warp group syncs only itself with "
                     "`tl::__sync_thread_partial(3, 128)` and reads rows the other group stored. With the first "
                     "group delayed, the H200 gives NaN in a quarter of the output and racecheck reports the "
                     "cross-group hazard (`docs/validation/real_hazards.md`):\n\n```\n"
                     "copy_gemm_0_1_sm_80.cu:65:7: error[barrier-scope] RAW race on A_shared/A_shared: the named "
                     "barrier at line 65 orders only threads 128-255, not threads 0-127 that accessed it at "
                     "line 52 (outside the pipelined loop)\n```",
    "race-undecided": "One note per kernel, naming the accesses whose race could not be decided and why (an "
                      "index that cannot be evaluated, a call that is not modelled and receives a shared "
                      "pointer, writers that a condition on data selects). DeepSeek's top-k selector in "
                      "TileLang's examples writes `s_threshold_bin_id[0] = tx` under a condition on the "
                      "histogram: which threads take it depends on the data.",
    "launch-assumed": "TileLang's output for `tests/fixtures/causes/tail_rows.py` (a run-time `T_seq` in tiles of "
                      "64 rows) zeroes the rows past the end, then reads the tile's last valid row, "
                      "`max(0, min(64, T_seq - bx * 64) - 1)`, with no barrier between. `T_seq` is a parameter of "
                      "the sets: the two meet only where `64 * blockIdx.x >= T_seq`, a block the guards "
                      "`blockIdx.x * 64 + row < T_seq` put past the data:\n\n```\n"
                      "tail_rows_sm_80_s0.cu:50:56: note[launch-assumed] 1 pair(s) of shared accesses meet only in a "
                      "block past the rows its global accesses are guarded to, taken as not launched: lines 44 and 50 "
                      "where 64*blockIdx.x >= T_seq\n```\n\nReading one row further (`min(63, T_seq - bx * 64)`, "
                      "`tests/fixtures/handwritten/tail_rows_last_row_sm_80_s0.cu`) meets in the last, partial tile, "
                      "which every launch starts: a `shared-race` error.",
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


def _builtin(host, plugin: str) -> bool:
    """Rules of pipelint itself: the core, and plugins whose module ships in the pipelint package
    (registered through the entry points, like any third-party plugin)."""
    module = host.pm.get_plugin(plugin)
    return plugin == "pipelint" or getattr(module, "__name__", "").startswith("pipelint.")


def example_of(host, rule, mutants) -> str:
    """A rule's example: the one its check declares, else computed from the fixtures."""
    check = host.checks.get(rule.id)
    if check is not None and check.example:
        return check.example
    if rule.id in mutants:
        return mutant_example(host, mutants[rule.id])
    if rule.id in VERIFIED:
        return verified_example(rule.id)
    if rule.id in COVERAGE:
        return COVERAGE[rule.id]
    if rule.id == "planner-stages":
        return "The seed document's experiment, which this rule generalises:\n\n" + SEED
    return "Reported by the core on input it cannot analyse; see tests/test_bad_input.py."


def readme_with_table(text: str, table: str) -> str:
    """README with its rule table (between the registry's markers) replaced by `table`."""
    start, end = text.index(README_START), text.index(README_END)
    return text[:start + len(README_START)] + "\n" + table + "\n" + text[end:]


def main() -> int:
    host = load_plugins()
    mutants = {m.rule: m for m in (op() for op in mutate.BASE_OPERATORS)}
    out = ROOT / "docs" / "rules"
    for rule in sorted(host.rules.values(), key=lambda r: r.id):
        plugin = host.rule_plugin[rule.id]
        if not _builtin(host, plugin):
            continue
        (out / f"{rule.id}.md").write_text(render_page(rule, plugin, example_of(host, rule, mutants)))
        print(out / f"{rule.id}.md")
    readme = ROOT / "README.md"
    builtin = [name for name in builtin_plugins()]
    readme.write_text(readme_with_table(readme.read_text(), readme_table(host, builtin)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
