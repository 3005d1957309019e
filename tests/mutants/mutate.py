"""Plant known defects in real TileLang output; each mutant says where the finding must be.

Used by tests/test_checks.py, tests/test_precision.py and the rule docs generator, and runnable by hand:

    python tests/mutants/mutate.py OUT_DIR     # writes every mutant and an index.json

Each operator edits one line (or inserts one) of a committed fixture with a
regular expression and reports the 1-based line at which pipelint must
report the expected rule.  Nothing is edited by hand.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

KERNELS = Path(__file__).resolve().parent.parent / "fixtures" / "kernels"
SM80 = "gemm_f16_sm_80_s3.cu"
SM90 = "gemm_f16_sm_90_s3.cu"


@dataclass(frozen=True)
class Mutant:
    name: str
    fixture: str
    rule: str
    text: str
    line: int          # where the finding must be reported: where the fix goes

    def planted(self) -> list[int]:
        """1-based lines of the mutated text where it differs from the fixture (for a deletion, the
        line that now stands where the deleted one was)."""
        import difflib

        before = (KERNELS / self.fixture).read_text().split("\n")
        after = self.text.split("\n")
        ops = difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes()
        return [j1 + 1 for tag, _, _, j1, _ in ops if tag != "equal"]


def _lines(fixture: str) -> list[str]:
    return (KERNELS / fixture).read_text().split("\n")


def _find(lines: list[str], pattern: str, start: int = 0) -> int:
    rx = re.compile(pattern)
    for i in range(start, len(lines)):
        if rx.search(lines[i]):
            return i
    raise LookupError(pattern)


def _statement_at(lines: list[str], i: int) -> int:
    """The first line at or after index `i` that is a statement, not a `#line`/`#pragma`."""
    while i < len(lines) and lines[i].lstrip().startswith("#"):
        i += 1
    return i


def _loop_start(lines: list[str]) -> int:
    return _find(lines, r"for \(int k = 0;")


def drop_barrier_after_wait() -> Mutant:
    lines = _lines(SM80)
    wait = _find(lines, r"cp_async_wait<2>", _loop_start(lines))
    sync = _find(lines, r"__syncthreads\(\);", wait)
    del lines[sync]
    # reported where the barrier goes: right after the wait that completes the copies
    return Mutant("drop-barrier-after-wait", SM80, "missing-barrier", "\n".join(lines),
                  _statement_at(lines, sync) + 1)


def drop_loop_head_barrier() -> Mutant:
    lines = _lines(SM80)
    head = _loop_start(lines)
    sync = _find(lines, r"__syncthreads\(\);", head)
    del lines[sync]
    # reported where the barrier goes: the first statement of the loop body, before the copies
    return Mutant("drop-loop-head-barrier", SM80, "missing-barrier", "\n".join(lines),
                  _statement_at(lines, sync) + 1)


def wait_too_shallow() -> Mutant:
    lines = _lines(SM80)
    wait = _find(lines, r"cp_async_wait<2>", _loop_start(lines))
    lines[wait] = lines[wait].replace("cp_async_wait<2>", "cp_async_wait<3>")
    return Mutant("wait-one-group-too-shallow", SM80, "wait-too-shallow", "\n".join(lines), wait + 1)


def wait_collapsed() -> Mutant:
    lines = _lines(SM80)
    wait = _find(lines, r"cp_async_wait<2>", _loop_start(lines))
    lines[wait] = lines[wait].replace("cp_async_wait<2>", "cp_async_wait<0>")
    return Mutant("steady-state-wait-0", SM80, "wait-too-deep", "\n".join(lines), wait + 1)


def drop_commit() -> Mutant:
    lines = _lines(SM80)
    head = _loop_start(lines)
    commit = _find(lines, r"cp_async_commit", head)
    del lines[commit]
    # reported where the commit goes: before the wait that would complete the copies
    wait = _find(lines, r"cp_async_wait", commit)
    return Mutant("drop-commit", SM80, "uncommitted-copy", "\n".join(lines), wait + 1)


def duplicate_barrier() -> Mutant:
    lines = _lines(SM80)
    sync = _find(lines, r"__syncthreads\(\);", _loop_start(lines))
    lines.insert(sync + 1, lines[sync])
    return Mutant("duplicate-barrier", SM80, "redundant-barrier", "\n".join(lines), sync + 2)


def barrier_in_thread_branch() -> Mutant:
    lines = _lines(SM80)
    sync = _find(lines, r"__syncthreads\(\);", _loop_start(lines))
    indent = lines[sync][: len(lines[sync]) - len(lines[sync].lstrip())]
    lines[sync] = f"{indent}if (((int)threadIdx.x) < 32) {{ __syncthreads(); }}"
    return Mutant("barrier-under-threadidx-branch", SM80, "divergent-barrier", "\n".join(lines), sync + 1)


def halve_init_count() -> Mutant:
    lines = _lines(SM90)
    init = _find(lines, r"\.init\(128\)")
    lines[init] = lines[init].replace(".init(128)", ".init(64)")
    return Mutant("halve-mbarrier-init", SM90, "mbarrier-arrival-count", "\n".join(lines), init + 1)


def halve_expect_tx(fixture: str = SM90, name: str = "halve-expect-tx") -> Mutant:
    lines = _lines(fixture)
    at = _find(lines, r"arrive_and_expect_tx\(\d+\)")
    value = int(re.search(r"arrive_and_expect_tx\((\d+)\)", lines[at]).group(1))
    lines[at] = lines[at].replace(f"arrive_and_expect_tx({value})", f"arrive_and_expect_tx({value // 2})")
    first_expect = _find(lines, r"expect_transaction\(|arrive_and_expect_tx\(")
    return Mutant(name, fixture, "mbarrier-tx-bytes", "\n".join(lines), first_expect + 1)


def halve_expect_tx_single_stage() -> Mutant:
    """num_stages=1: the last dynamic buffer has no end in the CUDA text; its TMA boxes are sized
    by the other loads of the same call."""
    return halve_expect_tx("gemm_f16_sm_90_s1.cu", "halve-expect-tx-single-stage")


def drop_producer_parity_flip() -> Mutant:
    lines = _lines(SM90)
    at = _find(lines, r"\.wait\(.*\^ 1\)\);")
    lines[at] = lines[at].replace(" ^ 1)", ")")
    return Mutant("drop-producer-parity-xor", SM90, "mbarrier-deadlock", "\n".join(lines), at + 1)


def _release_line(lines: list[str], before: int) -> int:
    """Where a consumer's release goes: the statement after its last warpgroup_wait before `before`
    (the asynchronous MMA reads the slot until then), 1-based."""
    wait = max(i for i in range(before) if "warpgroup_wait" in lines[i])
    return _statement_at(lines, wait + 1) + 1


def drop_fence_barrier_init() -> Mutant:
    lines = _lines(SM90)
    at = _find(lines, r"fence_barrier_init")
    del lines[at]
    # reported where the fence goes: right after the inits
    return Mutant("drop-fence-barrier-init", SM90, "mbarrier-init-fence", "\n".join(lines),
                  _statement_at(lines, at) + 1)


def drop_consumer_release() -> Mutant:
    lines = _lines(SM90)
    at = _find(lines, r"\]\.arrive\(\);")
    del lines[at]
    return Mutant("drop-consumer-release", SM90, "mbarrier-deadlock", "\n".join(lines), _release_line(lines, at))


def tma_into_slot_zero() -> Mutant:
    lines = _lines(SM90)
    first = None
    for i, line in enumerate(lines):
        if "tl::tma_load(" in line:
            lines[i] = re.sub(r"\(\(k % (\d+)\) \* (\d+)\)", "0", line)
            first = i if first is None else first
    assert first is not None
    return Mutant("tma-every-iteration-slot-0", SM90, "mbarrier-release", "\n".join(lines), first + 1)


def drop_wgmma_wait() -> Mutant:
    """The consumer's `warpgroup_wait<0>` deleted: no wait retires the wgmma groups, so the slot's
    release frees operands the tensor cores may still read."""
    lines = _lines(SM90)
    at = _find(lines, r"tl::warpgroup_wait<0>\(\);")
    del lines[at]
    # reported where the wait goes: the statement after the group's commit
    return Mutant("drop-wgmma-wait", SM90, "mbarrier-release", "\n".join(lines), _statement_at(lines, at) + 1)


def wgmma_wait_too_deep() -> Mutant:
    """flash attention's first `warpgroup_wait<0>` raised to 1 with one group committed: the
    softmax then reads `acc_s` while the wgmma may still write it (reported at the wait)."""
    fixture = "flash_attn_fwd_sm_90_s2.cu"
    lines = _lines(fixture)
    at = _find(lines, r"tl::warpgroup_wait<0>\(\);")
    lines[at] = lines[at].replace("warpgroup_wait<0>", "warpgroup_wait<1>")
    return Mutant("wgmma-wait-too-deep", fixture, "wgmma-register-race", "\n".join(lines), at + 1)


def drop_tma_store_fence() -> Mutant:
    fixture = "flash_attn_fwd_sm_90_s2.cu"
    lines = _lines(fixture)
    store = _find(lines, r"tl::tma_store\(")
    fence = max(i for i in range(store) if "fence_proxy_async" in lines[i])
    del lines[fence]
    return Mutant("drop-tma-store-fence", fixture, "tma-store-fence", "\n".join(lines), store)


# ---------------------------------------------------------------- shapes of real-world kernels
# Each plants a defect into a kernel of tests/fixtures/causes/ whose clean form the first pipelint
# versions already misread (run-time trip counts, guarded copies, double reads, tcgen05).

def runtime_trip_parity() -> Mutant:
    fixture = "dyn_k_gemm_sm_90_s3.cu"          # for (k = 0; k < ((K + 31) >> 5); ++k)
    lines = _lines(fixture)
    at = _find(lines, r"\.wait\(.*\^ 1\)\);")
    lines[at] = lines[at].replace(" ^ 1)", ")")
    return Mutant("runtime-trip-parity", fixture, "mbarrier-deadlock", "\n".join(lines), at + 1)


def runtime_trip_drop_release() -> Mutant:
    fixture = "causal_attn_sm_90_s2.cu"         # for (k = 0; k < blockIdx.x + 1; ++k)
    lines = _lines(fixture)
    consumer = _find(lines, r"for \(int k_1 = 0;")
    release = _find(lines, r"\]\.arrive\(\);", consumer)
    del lines[release]
    return Mutant("runtime-trip-drop-release", fixture, "mbarrier-deadlock", "\n".join(lines),
                  _release_line(lines, release))


def guarded_copy_wait_shallow() -> Mutant:
    fixture = "scaled_gemm_sm_80_s2.cu"         # S_shared copied under if (threadIdx.x < 64)
    lines = _lines(fixture)
    at = _find(lines, r"cp_async_wait<(\d+)>", _loop_start(lines))
    n = int(re.search(r"cp_async_wait<(\d+)>", lines[at]).group(1))
    lines[at] = lines[at].replace(f"cp_async_wait<{n}>", f"cp_async_wait<{n + 1}>")
    return Mutant("guarded-copy-wait-shallow", fixture, "wait-too-shallow", "\n".join(lines), at + 1)


def double_read_early_release() -> Mutant:
    fixture = "scaled_gemm_sm_90_s2.cu"         # A_shared read by two GEMMs per iteration
    lines = _lines(fixture)
    consumer = _find(lines, r"for \(int k_1 = 0;")
    first_release = _find(lines, r"\]\.arrive\(\);", consumer)
    last_release = _find(lines, r"\]\.arrive\(\);", first_release + 1)   # A's: after the 2nd read
    moved = lines.pop(last_release)
    lines.insert(first_release + 1, moved)
    # reported where the release belongs: after the second GEMM's completion wait
    return Mutant("double-read-early-release", fixture, "mbarrier-release", "\n".join(lines),
                  _release_line(lines, last_release + 1))


def tcgen05_drop_commit() -> Mutant:
    fixture = "tcgen05_gemm_sm_100_s2.cu"
    lines = _lines(fixture)
    at = _find(lines, r"tl::tcgen05_mma_arrive")
    del lines[at]
    wait = _find(lines, r"mbar\[.*\]\.wait\(", at)
    return Mutant("tcgen05-drop-commit", fixture, "mbarrier-deadlock", "\n".join(lines), wait + 1)


# ---------------------------------------------------------------- equivalent mutations (must not fire)
# Deleting a barrier that orders only accesses of each thread to its own bytes changes nothing:
# split-K GEMV's threads read back exactly the 16 bytes each copied.  No error may be reported.

def drop_same_thread_barrier_after_wait() -> Mutant:
    fixture = "splitk_gemv_sm_80_s2.cu"
    lines = _lines(fixture)
    wait = _find(lines, r"cp_async_wait<1>", _loop_start(lines))
    sync = _find(lines, r"__syncthreads\(\);", wait)
    del lines[sync]
    return Mutant("drop-same-thread-barrier-after-wait", fixture, "", "\n".join(lines), sync + 1)


def drop_same_thread_loop_head_barrier() -> Mutant:
    fixture = "splitk_gemv_sm_80_s2.cu"
    lines = _lines(fixture)
    sync = _find(lines, r"__syncthreads\(\);", _loop_start(lines))
    del lines[sync]
    return Mutant("drop-same-thread-loop-head-barrier", fixture, "", "\n".join(lines), sync + 1)


def drop_every_same_thread_barrier() -> Mutant:
    fixture = "splitk_gemv_sm_80_s2.cu"
    lines = [line for line in _lines(fixture) if line.strip() != "__syncthreads();"]
    return Mutant("drop-every-same-thread-barrier", fixture, "", "\n".join(lines), 1)


def splitk_cross_thread_read() -> Mutant:
    """The same kernel with each thread reading its neighbour's bytes: now the barrier matters."""
    fixture = "splitk_gemv_sm_80_s2.cu"
    lines = _lines(fixture)
    wait = _find(lines, r"cp_async_wait<1>", _loop_start(lines))
    sync = _find(lines, r"__syncthreads\(\);", wait)
    read = _find(lines, r"a_s_local_cast \+ 0\) = ", sync)
    lines[read] = lines[read].replace("(((int)threadIdx.x) * 8)", "((((int)threadIdx.x) ^ 1) * 8)")
    del lines[sync]
    return Mutant("splitk-cross-thread-read", fixture, "missing-barrier", "\n".join(lines), sync + 1)


EQUIVALENT_OPERATORS: tuple[Callable[[], Mutant], ...] = (
    drop_same_thread_barrier_after_wait, drop_same_thread_loop_head_barrier, drop_every_same_thread_barrier,
)


BASE_OPERATORS: tuple[Callable[[], Mutant], ...] = (
    drop_barrier_after_wait, drop_loop_head_barrier, wait_too_shallow, wait_collapsed, drop_commit,
    duplicate_barrier, barrier_in_thread_branch, halve_init_count, halve_expect_tx,
    drop_producer_parity_flip, drop_fence_barrier_init, drop_consumer_release, tma_into_slot_zero,
    drop_tma_store_fence, halve_expect_tx_single_stage, drop_wgmma_wait, wgmma_wait_too_deep,
)
REAL_WORLD_OPERATORS: tuple[Callable[[], Mutant], ...] = (
    runtime_trip_parity, runtime_trip_drop_release, guarded_copy_wait_shallow,
    double_read_early_release, tcgen05_drop_commit, splitk_cross_thread_read,
)
OPERATORS = BASE_OPERATORS + REAL_WORLD_OPERATORS


def all_mutants() -> list[Mutant]:
    return [op() for op in OPERATORS]


def main(out: str) -> int:
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    index = []
    for m in all_mutants():
        (target / f"{m.name}.cu").write_text(m.text)
        index.append({"name": m.name, "fixture": m.fixture, "rule": m.rule, "line": m.line})
    (target / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "mutants-out"))
