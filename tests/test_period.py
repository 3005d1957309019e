"""The pipeline period (`pipelint.model.period`): after how many iterations slots and parities repeat.

The trace simulates a long loop by a prefix congruent to its trip count modulo the period, and a
run-time-bound loop by scenario counts spread over one period, so a period that is too small
hides every state past the prefix, and one that is too large costs simulation for nothing.
The kernels are TileLang 0.1.15's own output (tests/fixtures/causes/persistent_gemm.py).
"""
from __future__ import annotations

from pathlib import Path

from helpers import KERNELS

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.model.period import stepped
from pipelint.model.trace import loop_bounds
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
HANDWRITTEN = Path(__file__).parent / "fixtures" / "handwritten"


def _model(path: Path) -> KernelModel:
    parsed = parse(path.read_text())
    return KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)


def _findings(path: Path) -> list[tuple[str, str, int]]:
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings)


def test_phase_counters_set_the_period_when_no_loop_variable_names_a_slot():
    """One wave: the k loops' slots and parities are `consumer_phase_cnt[0] % 3` and `% 6 / 3`;
    the loop variable only forms TMA coordinates.  The period is lcm(3, 6) = 6, so 20 of the 128
    iterations are simulated (20 = 128 mod 6 + 3 periods), not 3 (a period of 1)."""
    m = _model(KERNELS / "persistent_gemm_one_sm_90_s3.cu")
    assert m.period == 6
    assert [(loop.var, loop.trip, loop.simulated) for loop in m.pipelined_loops] == [("k", 128, 20), ("k_1", 128, 20)]
    waits = [e for e in m.trace.events[0] if e.kind == "mbar_wait"]
    assert {e.barrier for e in waits} == {("mbarrier", 3), ("mbarrier", 4), ("mbarrier", 5)}
    assert {e.value for e in waits} == {0, 1}      # both parities of the empty barriers are waited on


def test_an_early_release_that_needs_the_fourth_iteration_is_found():
    """The consumer's release moved before `warpgroup_wait<0>`: the TMA load that overwrites slot 0
    is the fourth k iteration's.  With a period of 1, three iterations were simulated and the
    kernel was reported clean."""
    assert _findings(HANDWRITTEN / "persistent_release_early_sm_90_s3.cu") == [("mbarrier-release", "error", 118)]
    assert _findings(KERNELS / "persistent_gemm_one_sm_90_s3.cu") == []


def test_tma_coordinates_do_not_lengthen_the_period():
    """Up to 4 tiles per block: `(w * 132 + blockIdx.x) % 512 / 8` picks global tiles, not slots; the
    persistent loop's own state is the phase counters it carries.  The period stays 6 (not the cap
    of 64 that the coordinates' moduli gave), and the kernel is clean."""
    m = _model(KERNELS / "persistent_gemm_sm_90_s3.cu")
    assert m.period == 6
    assert [(loop.var, loop.trip, loop.simulated) for loop in m.pipelined_loops] == [
        ("w", 4, 4), ("k", 128, 20), ("k_1", 128, 20)]
    assert _findings(KERNELS / "persistent_gemm_sm_90_s3.cu") == []


def _loop(text: str, var: str):
    parsed = parse(text)
    func = parsed.unit.kernels()[0]
    return next(n for n in func.body.walk() if type(n).__name__ == "For" and loop_bounds(n)[0] == var)


def test_stepped_registers_follow_counters_and_their_copies_not_nested_loops():
    text = """
extern "C" __global__ void f(float* out) {
  int cnt[1];
  int fixed[1];
  float acc[1];
  cnt[0] = 0;
  for (int k = 0; k < 64; ++k) {
    int c = cnt[0];
    int s = c % 3;
    fixed[0] = 7;
    acc[0] = (acc[0] / 7168.0f);
    for (int i = 0; i < 4; ++i) {
      out[i] = acc[0];
    }
    for (int j = 0; j < k; ++j) {
      out[j] = acc[0];
    }
    cnt[0] = (cnt[0] + 1);
  }
}
"""
    from pipelint.model.index import KernelIndex
    from pipelint.model.period import integer_locals

    loop = _loop(text, "k")
    parsed = parse(text)
    registers = integer_locals(KernelIndex(parsed.unit.kernels()[0].body, parsed.registry))
    # the counter, its copy and what is computed from it; the nested loop whose bounds change
    # with k (j); not the constant store, the float register or the nested loop with fixed bounds
    assert stepped(loop, "k", registers) == {"k", "cnt", "c", "s", "j"}


def test_a_branch_on_the_loop_variable_past_the_prefix_is_simulated_with_its_own_values() -> None:
    """Held-out planted defects: `if (k != 25) __syncthreads();` in a 32-iteration loop of period 3
    was never walked at k = 25 (a prefix of 3 periods stood for the loop).  The walk now takes the
    prefix, the periods around every point where such a branch changes, and the last period, and
    skips only whole periods in which no branch changes (the state repeats)."""
    from pipelint.cuda import parse
    from pipelint.model import KernelModel

    text = (KERNELS / "gemm_f16_sm_80_s3.cu").read_text().splitlines()
    assert text[61].strip() == "__syncthreads();"
    text[61] = "    if (k != 25) { __syncthreads(); }"
    parsed = parse("\n".join(text) + "\n")
    [func] = parsed.unit.kernels()
    model = KernelModel(func, parsed.lines, parsed.registry)
    [loop] = [info for info in model.trace.loops.values() if info.var == "k"]
    walked = sorted({v for ev in model.trace.events[0] for lid, v in ev.iteration if lid == id(loop.node)})
    assert {24, 25, 26, 29} <= set(walked) and loop.simulated == len(walked) < loop.trip
    period = model.period
    for a, b in zip(walked, walked[1:]):
        assert (b - a - 1) % period == 0          # only whole periods are skipped
