"""Precision on TileLang's own output, and every planted defect found at its line."""
from __future__ import annotations

import pytest

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins
from helpers import ALL_KERNELS
from mutants.mutate import OPERATORS

HOST = load_plugins()


@pytest.fixture(scope="module")
def clean_report():
    return run_check([str(p) for p in ALL_KERNELS], HOST, CheckOptions(jobs=1))


def test_zero_errors_on_every_clean_fixture(clean_report):
    assert all(r.parsed for r in clean_report.files)
    errors = [f for f in clean_report.findings if f.severity.value == "error"]
    assert errors == []
    assert clean_report.errors == []


def test_known_redundant_barriers_and_waits_are_the_only_warnings(clean_report):
    warnings = [f for f in clean_report.findings if f.severity.value == "warning"]
    # one correctness warning on TileLang's own output: the tcgen05 GEMM's consumers wait on `mbar`
    # again after releasing the slot, a wait the barrier can run two phases past (unproven on
    # hardware: sm_100; tests/rules/mbarrier-phase-overrun/tcgen05_wait_after_release.ref)
    overrun = [(f.location.path.split("/")[-1], f.location.line) for f in warnings
               if f.rule == "mbarrier-phase-overrun"]
    assert overrun == [("tcgen05_gemm_sm_100_s2.cu", 102)]
    warnings = [f for f in warnings if f.rule != "mbarrier-phase-overrun"]
    assert warnings and all(f.rule in ("redundant-barrier", "redundant-wait") for f in warnings)
    assert {f.location.path.split("/")[-1] for f in warnings} == {
        f"gemv_sm_80_s{n}.cu" for n in (1, 2, 3, 4)} | {"scaled_gemm_sm_80_s2.cu", "splitk_gemv_sm_80_s2.cu"} | {
        f"row_sum_sm_80_s{n}.cu" for n in (1, 2, 3, 4)} | {"cumsum_rows_sm_80_s1.cu", "split_parts_sm_80_s2.cu",
                                                           "column_counter_sm_80_s2.cu", "loaded_scales_sm_80_s2.cu",
                                                           "vote_count_sm_80_s2.cu"}
    # vote_count: each thread cp.asyncs Xs[slot*256 + tx] and reads back that element; the block vote
    # (`__syncthreads_count`, line 39) is a barrier of its own and never claimed: the loop's two
    # `__syncthreads` (lines 30, 37) order nothing
    vote = {f.location.line for f in warnings if f.location.path.endswith("vote_count_sm_80_s2.cu")}
    assert vote == {30, 37}
    # loaded_scales: each thread cp.asyncs As[i*1024 + tx*8 .. +8] and reads back those bytes, and the
    # scales stored before the loop are ordered by the barrier before the prologue (line 42): the
    # loop's two barriers (lines 48, 59) order nothing
    scales = {f.location.line for f in warnings if f.location.path.endswith("loaded_scales_sm_80_s2.cu")}
    assert scales == {48, 59}
    # column_counter: the barrier after the B copy's commit (line 108) stands between a copy into Bs
    # and the read of the A slot the wait before the GEMM completed; the one after that read (line
    # 112's) orders it before the next copy into A
    counter = {f.location.line for f in warnings if f.location.path.endswith("column_counter_sm_80_s2.cu")}
    assert counter == {108}
    # split_parts: the barrier before each split's prologue (line 38) and the one after its
    # epilogue reads (line 135) are both covered by the drain's barrier (line 105, after the last
    # reads of slot 0) and the loop-head barrier (line 55, before the copy into slot 1): P_s, which
    # the epilogue then writes, shares no byte with A_s/B_s
    split = {f.location.line for f in warnings if f.location.path.endswith("split_parts_sm_80_s2.cu")}
    assert split == {38, 135}
    # cumsum_rows: of the two barriers between the scan's writes of S_s and the epilogue's reads,
    # the second (line 54) orders nothing the first (line 45) does not
    cumsum = {f.location.line for f in warnings if f.location.path.endswith("cumsum_rows_sm_80_s1.cu")}
    assert cumsum == {54}
    # row_sum: each thread cp.asyncs A_shared[i*512 + tx*4 .. +4] and reads back exactly those
    # 16 bytes (float4): exact per-thread byte sets show the loop's barriers order nothing
    row_sum = {f.location.line for f in warnings if f.location.path.endswith("row_sum_sm_80_s2.cu")}
    assert row_sum == {51, 58}
    # split-K GEMV: each thread reads back only the bytes it copied, so no barrier orders a hazard
    splitk = {f.location.line for f in warnings if f.location.path.endswith("splitk_gemv_sm_80_s2.cu")}
    assert splitk == {36, 43}
    # scaled_gemm's second cp_async_wait<5> follows cp_async_wait<3> with no commit between
    (wait,) = [f for f in warnings if f.rule == "redundant-wait"]
    assert "cp_async_wait<5>" in wait.message and "remove it" in wait.message


@pytest.mark.parametrize("operator", OPERATORS, ids=lambda op: op.__name__)
def test_mutant_is_reported_at_the_right_line(operator, tmp_path):
    mutant = operator()
    path = tmp_path / f"{mutant.name}.cu"
    path.write_text(mutant.text)
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    hits = {(f.rule, f.location.line) for f in report.findings}
    assert (mutant.rule, mutant.line) in hits, sorted(hits)
    assert report.errors == []
    # the primary location is the place to change: within a couple of lines of the planted defect
    assert min(abs(mutant.line - p) for p in mutant.planted()) <= 2, (mutant.line, mutant.planted())
    [finding] = [f for f in report.findings if (f.rule, f.location.line) == (mutant.rule, mutant.line)]
    assert finding.help and any(word in finding.help for word in ("insert", "remove", "change", "move",
                                                                  "release", "announce", "make", "check",
                                                                  "lower", "wait"))


def test_help_lines_say_what_to_insert_and_where(tmp_path):
    from mutants.mutate import drop_barrier_after_wait, drop_commit, drop_consumer_release

    def found(m):
        path = tmp_path / f"{m.name}.cu"
        path.write_text(m.text)
        report = run_check([str(path)], HOST, CheckOptions(jobs=1))
        return next(f for f in report.findings if (f.rule, f.location.line) == (m.rule, m.line))

    barrier = found(drop_barrier_after_wait())
    assert barrier.help.startswith(f"insert __syncthreads(); before line {barrier.location.line}")
    assert {"the wait that completes the copy"} <= {r.message for r in barrier.related}
    assert any(r.message.startswith("read of") for r in barrier.related)
    commit = found(drop_commit())
    assert commit.help.startswith(f"insert tl::cp_async_commit(); before line {commit.location.line}")
    release = found(drop_consumer_release())
    assert "never arrives" in release.message and release.help.startswith("insert mbarrier[")
    assert "the wait that hangs" in {r.message for r in release.related}


def test_findings_carry_related_locations_and_python_origin(tmp_path):
    mutant = next(op() for op in OPERATORS if op.__name__ == "wait_too_shallow")
    path = tmp_path / "m.cu"
    path.write_text(mutant.text)
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    (f,) = [f for f in report.findings if f.rule == "wait-too-shallow"]
    assert "cp_async_wait<3>" in f.message and ("A_shared" in f.message or "B_shared" in f.message)
    paths = [r.path for r in f.related]
    assert "examples/gemm.py" in paths
    assert any(r.message.startswith("read of") for r in f.related)


def test_worker_processes_give_the_same_report_as_one_process():
    files = [str(p) for p in ALL_KERNELS if "gemv" in p.name or "sm_90_s2" in p.name]
    serial = run_check(files, HOST, CheckOptions(jobs=1))
    parallel = run_check(files, HOST, CheckOptions(jobs=2))
    assert serial.sorted_findings() == parallel.sorted_findings()
    assert [r.path for r in serial.files] == [r.path for r in parallel.files]
    assert any(f.rule == "redundant-barrier" for f in parallel.findings)
