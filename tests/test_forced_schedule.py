"""Witness-directed schedule forcing (issue 36), CPU side: the witness, where each delay goes and
under which guard, that the variants still parse with every line at its number, the controls on
the fixed twin, and the verdicts from recorded run results.  No GPU."""
from __future__ import annotations

import sys

import pytest
from helpers import ROOT

from pipelint.cuda.parser import parse
from pipelint.plugins import forced_schedule as fs
from pipelint.plugins.forced_schedule_verdict import (
    CONFIRMED_FORCED,
    CONFIRMED_HANG,
    CONFIRMED_OUTPUT,
    CONFIRMED_RACECHECK,
    NOT_REPRODUCED,
    control_changes,
    finding_verdict,
    properties,
    render_table,
)

HAND = ROOT / "tests" / "fixtures" / "handwritten"
KERNELS = ROOT / "tests" / "fixtures" / "kernels"


def _plans(path):
    text = path.read_text()
    return text, fs.witnesses(text, str(path))


def _changed_lines(a: str, b: str) -> list[int]:
    la, lb = a.split("\n"), b.split("\n")
    assert len(la) == len(lb), "a variant must keep every line at its number"
    return [i + 1 for i, (x, y) in enumerate(zip(la, lb)) if x != y]


def test_warp_group_barrier_witness_delays_the_other_group_before_its_store():
    text, plans = _plans(HAND / "wg_partial_sync_sm_80_s0.cu")
    [p] = plans
    assert p.rule == "barrier-scope" and p.witness is not None
    w = p.witness
    assert (w.kind, w.first.line, w.second.line) == ("RAW", 29, 35)
    assert w.first.threads == tuple(range(0, 256)) or set(w.first.threads) >= set(range(128))
    assert set(w.second.threads) == set(range(128, 256))
    first, second = p.delays
    # the writers that the readers' barrier does not order: warps 0-3, before the store of line 29
    assert (first.side, first.line, first.warps) == ("first", 29, (0, 1, 2, 3))
    assert (second.side, second.line, second.warps) == ("second", 35, (4, 5, 6, 7))
    out = fs.render(text, [first])
    changed = _changed_lines(text, out)
    poison_line = 27                       # after `__shared__ float S[256];`, the kernel's shared declaration
    assert 29 in changed and set(changed) <= {29, poison_line}
    line = out.split("\n")[28]
    assert line.lstrip().startswith("if (((0 <= ((int)threadIdx.x) && ((int)threadIdx.x) < 128)))")
    assert line.endswith(text.split("\n")[28].lstrip()), "the statement itself is kept, after the delay"
    assert "clock64()" in line and "__nanosleep" in line
    parse(out)


def test_conditional_writers_delay_only_the_writers_warp():
    text, [p] = _plans(HAND / "cond_writers_nobarrier.cu")
    assert p.rule == "shared-race"
    first = p.delays[0]
    assert first.warps == (0,) and first.line == 29 and first.separable
    out = fs.render(text, [first])
    assert "(0 <= ((int)threadIdx.x) && ((int)threadIdx.x) < 32)" in out.split("\n")[28]
    # poisoned dynamic shared memory, sized by the launch
    assert "%%dynamic_smem_size" in out.split("\n")[24] and "((volatile unsigned char*)S)" in out


def test_write_write_gets_both_orders():
    text, [p] = _plans(HAND / "write_write_sm_80_s0.cu")
    assert p.rule == "shared-write-race" and p.witness.kind == "WAW"
    assert {d.side for d in p.delays} == {"first", "second"}
    assert {d.line for d in p.delays} == {28, 30}
    a, b, heal = p.delays
    assert a.warps != b.warps, "each order delays the other thread's warp"
    # and every warp of the second side late: the barrier's order emulated
    assert (heal.mode, heal.side, heal.line, heal.warps) == (fs.HEAL, "second", 30, (0, 1, 2, 3))
    assert "every warp of the side" in heal.describe()


def _mutant(name):
    sys.path.insert(0, str(ROOT / "tests"))
    from mutants import mutate

    return next(m for m in mutate.all_mutants() if m.name == name)


def test_iteration_guard_inside_the_pipelined_loop_only():
    m = _mutant("drop-loop-head-barrier")
    plans = fs.witnesses(m.text, "m.cu")
    assert plans and all(p.rule == "missing-barrier" for p in plans)
    d_read, d_copy, *_ = plans[0].delays
    # WAR: the read of iteration 0 must come late; the copy that overwrites it is iteration 1's
    assert d_read.iteration == (("k", 0),) and d_copy.iteration == (("k", 1),)
    out = fs.render(m.text, [d_read, d_copy])
    assert "(k == 0)" in out.split("\n")[d_read.line - 1] and "(k == 1)" in out.split("\n")[d_copy.line - 1]
    # a copy of the prologue (outside the loop) has no iteration guard
    m2 = _mutant("drop-barrier-after-wait")
    prologue = next(d for p in fs.witnesses(m2.text, "m.cu") for d in p.delays if not d.iteration)
    line = fs.render(m2.text, [prologue]).split("\n")[prologue.line - 1]
    assert "k ==" not in line and "threadIdx.x" in line


def test_selector_build_numbers_every_delay_and_declares_the_variable_once():
    text, [p] = _plans(HAND / "cond_writers_nobarrier.cu")
    delays = fs.number(p.delays)
    assert [d.number for d in delays] == [1, 2]
    out = fs.render(text, delays, select=True)
    assert out.count(f"__device__ int {fs.SELECT_VAR} = 0;") == 1
    assert f"({fs.SELECT_VAR} == 1) &&" in out.split("\n")[28] and f"({fs.SELECT_VAR} == 2) &&" in out.split("\n")[31]
    parse(out)


def test_controls_put_the_same_delay_on_the_fixed_twin():
    text, [p] = _plans(HAND / "cond_writers_nobarrier.cu")
    twin = (KERNELS / "cond_writers_sm_80_s0.cu").read_text()
    moved = [fs.relocate(d, twin) for d in p.delays]
    assert all(moved)
    for d, t in zip(p.delays, moved):
        assert twin.split("\n")[t.line - 1].strip().startswith(d.anchor[:40])
    out = fs.render(twin, moved)
    assert _changed_lines(twin, out) and parse(out)
    # a twin without the statement: no control for that delay, said as None
    other = (KERNELS / "wg_full_sync_sm_80_s0.cu").read_text()
    assert fs.relocate(p.delays[0], other) is None


STATIC = """extern "C" __global__ void __launch_bounds__(64, 1) k(float* __restrict__ B) {
  __shared__ float T[64];
  T[((int)threadIdx.x)] = 1.0f;
  B[((int)threadIdx.x)] = T[(63 - ((int)threadIdx.x))];
}
"""


def test_static_shared_arrays_are_poisoned_by_their_size():
    out = fs.render(STATIC, [])
    assert _changed_lines(STATIC, out) == [2]
    assert "sizeof(T)" in out.split("\n")[1] and out.split("\n")[1].endswith("__syncthreads();")
    assert fs.render(STATIC, [], poison=False) == STATIC
    [p] = fs.witnesses(STATIC, "k.cu")
    assert p.rule == "shared-race" and p.delays[0].line == 3 and p.delays[0].warps == (1,)


def test_bad_cuda_is_one_clear_error():
    with pytest.raises(fs.PlanError, match="does not parse"):
        fs.render("__global__ void k( {", [])
    d = fs.Delay("first", 3, "no such statement;", 0, (0,))
    with pytest.raises(fs.PlanError, match="no statement"):
        fs.render((HAND / "cond_writers_nobarrier.cu").read_text(), [d])


def test_witness_json_names_both_sides():
    _, [p] = _plans(HAND / "wg_partial_sync_sm_80_s0.cu")
    j = p.witness.to_json()
    assert j["first"]["line"] == 29 and j["second"]["threads"] == "128-255" and j["kind"] == "RAW"


# ------------------------------------------------------------------ verdicts
RUN_OK = {"mismatches": 0, "timeout": False, "crashed": False}


def _finding(*delays):
    return {"delays": [{"describe": f"d{i}", "number": i + 1, "variant": v, "control": c}
                       for i, (v, c) in enumerate(delays)]}


def test_a_delay_that_breaks_the_buggy_kernel_and_not_the_twin_confirms():
    f = _finding(({"mismatches": 0}, RUN_OK), ({"mismatches": 199}, RUN_OK))
    v = finding_verdict(f, {"runs": [RUN_OK, RUN_OK]}, {"racecheck": {"errors": 0}})
    assert v["verdict"] == CONFIRMED_FORCED and v["delay"] == "d1" and v["mismatches"] == 199
    assert v["harness_error"] is None
    assert properties(v) == {"verify.verdict": CONFIRMED_FORCED, "verify.delay": "d1", "verify.mismatches": 199}


def test_a_delay_that_changes_the_twin_is_a_harness_error_not_a_confirmation():
    f = _finding(({"mismatches": 50}, {"mismatches": 3}))
    v = finding_verdict(f, {"runs": [RUN_OK]}, {})
    assert v["verdict"] == NOT_REPRODUCED and "changed the fixed twin" in v["harness_error"]
    table = render_table([{"case": "c", "rule": "shared-race", "line": 3, "verify": v}])
    assert "HARNESS ERROR" in table
    assert control_changes([{"findings": [f]}]) == (1, 1)


def test_fallbacks_output_racecheck_hang_and_never_false():
    none = _finding((RUN_OK, RUN_OK))
    assert finding_verdict(none, {"runs": [RUN_OK], "wrong": 7}, {})["verdict"] == CONFIRMED_OUTPUT
    assert finding_verdict(none, {"runs": [RUN_OK]}, {"racecheck": {"errors": 2}})["verdict"] == CONFIRMED_RACECHECK
    hang = _finding(({"timeout": True}, None))
    assert finding_verdict(hang, {"runs": [RUN_OK]}, {})["verdict"] == CONFIRMED_HANG
    v = finding_verdict(none, {"runs": [RUN_OK]}, {"racecheck": {"errors": 0}})
    assert v["verdict"] == NOT_REPRODUCED and v["tried"] == ["d0: 0 changed, twin 0 changed"]
    assert "false" not in v["verdict"]


def test_a_twin_from_another_function_takes_the_buggy_kernels_name():
    buggy = (HAND / "wg_partial_sync_sm_80_s0.cu").read_text()
    twin = (KERNELS / "wg_full_sync_sm_80_s0.cu").read_text()
    renamed = fs.rename_kernel(twin, buggy)
    assert "wg_full_sync_k_kernel" not in renamed and renamed.count("wg_partial_sync_k_kernel") == twin.count(
        "wg_full_sync_k_kernel")
    assert fs.rename_kernel(buggy, buggy) == buggy


def test_a_delay_counts_by_what_it_changed_beyond_the_poison():
    # the poison alone changes 5 elements; the delay changes nothing more: not a forced schedule
    f = _finding(({"mismatches": 5, "vs_poisoned": 0}, {"mismatches": 0, "vs_poisoned": 0}))
    v = finding_verdict(f, {"runs": [RUN_OK, RUN_OK], "poisoned": 5, "twin_poisoned": 0}, {})
    assert v["verdict"] == CONFIRMED_OUTPUT and v["delay"] == "none (shared memory poisoned at entry)"
    f = _finding(({"mismatches": 9, "vs_poisoned": 4}, {"mismatches": 0, "vs_poisoned": 0}))
    assert finding_verdict(f, {"runs": [RUN_OK], "poisoned": 5}, {})["mismatches"] == 4


def test_a_twin_that_reads_unwritten_shared_memory_is_said_not_blamed_on_the_harness():
    f = _finding(({"mismatches": 0, "vs_poisoned": 0}, {"mismatches": 1, "vs_poisoned": 0}))
    v = finding_verdict(f, {"runs": [RUN_OK], "poisoned": 1, "twin_poisoned": 1}, {})
    assert v["harness_error"] is None and "reads shared memory nothing wrote" in v["twin_note"]
    f = _finding(({"mismatches": 0, "vs_poisoned": 0}, {"mismatches": 3, "vs_poisoned": 2}))
    assert finding_verdict(f, {"runs": [RUN_OK], "twin_poisoned": 1}, {})["harness_error"]


def test_noisy_natural_runs_confirm_by_output_whatever_the_delays_do():
    f = _finding(({"mismatches": 900, "vs_poisoned": 900}, None))
    v = finding_verdict(f, {"runs": [RUN_OK, {"mismatches": 17}]}, {})
    assert v["verdict"] == CONFIRMED_OUTPUT and v["mismatches"] == 17 and "natural runs differ" in v["delay"]


def test_a_delay_whose_two_runs_are_wrong_against_the_twin_forces_the_failure():
    """The natural runs are right once in three; the delay is wrong in both its runs and leaves the
    twin alone: the forced schedule reproduces what the natural one shows only sometimes."""
    ok = {"mismatches": 0}
    run = {"mismatches": 40, "vs_poisoned": 40, "wrong": 40, "wrong_repeat": 38}
    f = _finding((run, {"mismatches": 0, "vs_poisoned": 0}), ({"mismatches": 0, "wrong": 0, "wrong_repeat": 0}, ok))
    natural = {"runs": [ok, {"mismatches": 12}, ok], "wrong_runs": [0, 12, 0]}
    v = finding_verdict(f, natural, {})
    assert v["verdict"] == CONFIRMED_FORCED and v["mismatches"] == 38 and v["natural_wrong_runs"] == "1 of 3"
    # every natural run already wrong, and the second delay right in both its runs (twin unchanged):
    # forcing the late side after the early one heals the kernel, so the order is the cause
    v = finding_verdict(f, {**natural, "wrong_runs": [5, 12, 7]}, {})
    assert v["verdict"] == CONFIRMED_FORCED and v["delay"].startswith("d1 (heals:") and v["mismatches"] == 5
    assert "right (the twin's output) in both runs" in v["tried"][1]
    # no delay heals: every natural run wrong is the evidence, no delay needed
    f2 = _finding((run, {"mismatches": 0, "vs_poisoned": 0}))
    v = finding_verdict(f2, {**natural, "wrong_runs": [5, 12, 7]}, {})
    assert v["verdict"] == CONFIRMED_OUTPUT and "every natural run wrong" in v["delay"]
    # a heal whose control was not run proves nothing
    f3 = _finding(({"mismatches": 0, "wrong": 0, "wrong_repeat": 0}, None))
    assert finding_verdict(f3, {**natural, "wrong_runs": [5, 12, 7]}, {})["verdict"] == CONFIRMED_OUTPUT
    # one of the delay's two runs right: not reproducible, so the noise decides
    f = _finding(({**run, "wrong_repeat": 0}, {"mismatches": 0}))
    assert finding_verdict(f, natural, {})["verdict"] == CONFIRMED_OUTPUT


def test_the_driver_says_what_is_wrong_with_a_manifest_in_one_line(tmp_path):
    import subprocess

    bad = tmp_path / "m.json"
    bad.write_text('{"cases": [{"id": "x"}]}')
    script = ROOT / "benchmarks" / "validation" / "forced_schedule.py"
    out = str(tmp_path / "p")
    for args in (["plan", str(tmp_path / "missing.json"), out], ["plan", str(bad), out]):
        res = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_an_early_release_gets_a_refill_by_the_loading_group_and_its_control():
    """The wgmma's read window is its own execution: no spin stretches it, so the loading group
    overwrites the released slot with 0xff at once (then a named barrier, then the TMA)."""
    text, plans = _plans(HAND / "release_early_sm_90_s3.cu")
    p = plans[0]
    assert p.rule == "mbarrier-release" and p.witness.second.access == "tma"
    refill, hot = [d for d in p.delays if d.mode == fs.REFILL]
    assert (refill.line, refill.group, refill.refill) == (54, 128, ("(&(((half_t*)A_shared)[((k % 3) * 4096)]))", 8192))
    assert refill.anchor == "if (tl::tl_shuffle_elect<128>()) {"
    out = fs.render(text, [refill])
    assert _changed_lines(text, out) == [33, 54]     # the poison after the shared declarations, the refill
    line = out.split("\n")[53]
    assert "8176 - 16 * (((int)threadIdx.x) % 128)" in line and "pl_i -= 2048" in line
    assert line.index("fence.proxy.async.shared::cta") < line.index("bar.sync 15, 128") < line.index("tl_shuffle_elect")
    parse(out)
    # the B loads sit in a loop under one transaction count: poisoning them could clobber a live slot
    assert all(d.line != 60 for q in plans for d in q.delays if d.mode == fs.REFILL)
    twin = (KERNELS / "gemm_f16_sm_90_s3.cu").read_text()
    moved = fs.relocate(refill, twin)
    assert moved is not None
    assert twin.split("\n")[moved.line - 1].lstrip().startswith("if (tl::tl_shuffle_elect<128>())")
    assert "refilled with 0xff at its release by threads 0-127" in refill.describe()
    # the hot form: before the slot's own wait (line 53), polling it with test_wait while loading the slot
    assert (hot.line, hot.group, hot.hot) == (53, 128, ("mbarrier[((k % 3) + 3)]", "(((k % 6) / 3) ^ 1)"))
    line = fs.render(text, [hot]).split("\n")[52]
    assert line.index("mbarrier.test_wait.parity") < line.index("st.shared.v4.u32") < line.index("bar.sync 15, 128")
    assert line.endswith("mbarrier[((k % 3) + 3)].wait((((k % 6) / 3) ^ 1));"), "the kernel's own wait follows"
    assert fs.relocate(hot, twin) is not None
