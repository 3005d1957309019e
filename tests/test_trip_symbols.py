"""Trip counts as expressions of the launch (issue 31, item 5).

The kernels are the shape of TileLang's block causal attention backward (upstream corpus,
`bwd_dq` sm_80): block `bx` runs a main loop of `(bx < 2 ? bx + 2 : bx - 1) - 2` steps, with the
barriers inside it; the prologue stores before it, the epilogue reads after it.  The count is a
select on the block index through a local (`condval`), so it is a symbol of the sets:

* block 0 runs the loop zero times in every launch: the epilogue's read of another thread's
  prologue store is a race there, an error, not a condition on a count (proved on the H200 for
  the causal example: docs/validation/zero_trip.md);
* where only blocks past 0 can run it zero times, the race is conditional: a warning;
* where no block can, the zero-trip scenario is not simulated at all.
"""
from __future__ import annotations

from pipelint.engine import analyze_source
from pipelint.pluginhost import load_plugins

_KERNEL = """
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ Out, const float* __restrict__ X) {
  __shared__ float s[256];
  s[((int)threadIdx.x)] = X[((int)threadIdx.x)];
  int condval;
  if ((((int)blockIdx.x) < 2)) {
    condval = (((int)blockIdx.x) + FIRST);
  } else {
    condval = (((int)blockIdx.x) - LATER);
  }
  for (int k = 0; k < (condval - 2); ++k) {
    __syncthreads();
    s[(((k & 1) * 128) + 128) + ((int)threadIdx.x)] = s[(127 - ((int)threadIdx.x))];
    __syncthreads();
  }
  Out[((int)threadIdx.x)] = s[(127 - ((int)threadIdx.x))];
}
"""


def _found(first: int, later: int) -> list[tuple[str, str, int, str]]:
    source = _KERNEL.replace("FIRST", str(first)).replace("LATER", str(later))
    _, findings, errors, _ = analyze_source("k.cu", source, load_plugins())
    assert not errors
    return sorted((f.rule, f.severity.value, f.location.line, f.message) for f in findings
                  if f.rule in ("shared-race", "race-undecided"))


def test_block_zero_running_the_loop_zero_times_is_a_race_of_every_launch() -> None:
    found = _found(2, 1)                    # block 0: 2 - 2 = 0 steps
    assert [(r, s) for r, s, _, _ in found] == [("shared-race", "error")]
    assert "in block 0, whose run-time-bound loop runs zero times in every launch" in found[0][3]
    # its witness comes from the block-0 scenario's hazard: the prologue store, the epilogue load
    _, findings, _, _ = analyze_source("k.cu", _KERNEL.replace("FIRST", "2").replace("LATER", "1"), load_plugins())
    [race] = [f for f in findings if f.rule == "shared-race"]
    assert race.witness is not None
    assert (race.witness.first.line, race.witness.second.line) == (4, 16)


def test_zero_steps_only_past_block_0_is_a_condition_on_the_count() -> None:
    found = _found(3, 0)                    # blocks 0, 1: 1 and 2 steps; block 2: 0
    assert [(r, s) for r, s, _, _ in found] == [("shared-race", "warning")]
    assert "if the run-time-bound loop can run zero times, as it does where blockIdx.x = 2" in found[0][3]


def test_a_count_at_least_one_in_every_block_has_no_zero_trip_scenario() -> None:
    assert _found(3, -3) == []              # bx + 3 - 2 >= 1 and bx + 3 - 2 >= 1
