"""Every finding knows its quantifier, and what pipelint flags can be removed together.

* A hazard is reported when some feasible trip count of a run-time-bound loop shows it; one
  that only a zero-trip loop shows is a warning naming that condition, and counts the kernel's
  own bounds rule out (`k < blockIdx.x + 1`) are not simulated at all.
* A claim that a barrier or wait can go holds for every feasible count, and the whole set of
  claims in a kernel is safe to apply at once: applying every claim of every fixture together
  gives a kernel pipelint finds nothing wrong with.
* Barrier arrivals are counted per thread: a `__syncthreads` in each warp-role branch is a
  portability warning (pre-sm_70), one that some threads skip is an error.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

HOST = load_plugins()
KERNELS = Path(__file__).parent / "fixtures" / "kernels"
CLAIMS = ("redundant-barrier", "redundant-wait", "wait-too-deep")
_DEEPER = re.compile(r"cp_async_wait<(\d+)> keeps every read safe")

# A store before a run-time-bound loop, read (by other threads) after it; the only barrier is
# inside the loop. Only a loop that runs zero times leaves the two unordered.
_HANDOFF = """extern "C" __global__ void __launch_bounds__(128) k(float* __restrict__ out, int n) {{
  __shared__ float buf[128];
  buf[((int)threadIdx.x)] = 1.0f;
  for (int k = 0; k < {bound}; ++k) {{
    __syncthreads();
    out[((k * 128) + ((int)threadIdx.x))] = 2.0f;
  }}
  out[((int)threadIdx.x)] = buf[(127 - ((int)threadIdx.x))];
}}
"""


def _check(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return sorted((f.rule, f.severity.value, f.location.line) for f in report.findings
                  if f.severity.value != "note")


def test_a_hazard_only_a_zero_trip_loop_shows_is_a_warning_that_says_so(tmp_path):
    report = run_check([str(_write(tmp_path, "zero.cu", _HANDOFF.format(bound="((n + 63) >> 6)")))],
                       HOST, CheckOptions(jobs=1))
    races = [f for f in report.findings if f.rule == "shared-race"]
    assert [(f.severity.value, f.location.line) for f in races] == [("warning", 8)]
    assert "if the run-time-bound loop can run zero times" in races[0].message


def test_a_loop_bounded_by_block_index_plus_one_never_runs_zero_times(tmp_path):
    assert _check(tmp_path, "never_zero.cu", _HANDOFF.format(bound="(((int)blockIdx.x) + 1)")) == []


def test_a_hazard_some_positive_count_shows_stays_an_error_and_names_the_counts(tmp_path):
    # the read after the loop is of a slot the loop's last iteration rewrites without a barrier
    text = """extern "C" __global__ void __launch_bounds__(128) k(float* __restrict__ out, int n) {
  __shared__ float buf[128];
  for (int k = 0; k < ((n + 63) >> 6); ++k) {
    __syncthreads();
    buf[((int)threadIdx.x)] = out[((k * 128) + ((int)threadIdx.x))];
  }
  out[((int)threadIdx.x)] = buf[(127 - ((int)threadIdx.x))];
}
"""
    report = run_check([str(_write(tmp_path, "positive.cu", text))], HOST, CheckOptions(jobs=1))
    races = [f for f in report.findings if f.rule == "shared-race"]
    assert [(f.severity.value, f.location.line) for f in races] == [("error", 7)]
    assert "only when the run-time-bound loop runs 1 or more iterations" in races[0].message


def test_barriers_in_each_warp_role_branch_rendezvous_on_sm70_and_later(tmp_path):
    text = """extern "C" __global__ void __launch_bounds__(256) k(float* __restrict__ out) {
  __shared__ float buf[256];
  buf[((int)threadIdx.x)] = 1.0f;
  if (((int)threadIdx.x) < 128) {
    __syncthreads();
    out[((int)threadIdx.x)] = buf[(255 - ((int)threadIdx.x))];
  } else {
    __syncthreads();
    out[((int)threadIdx.x)] = buf[(255 - ((int)threadIdx.x))];
  }
}
"""
    assert _check(tmp_path, "split.cu", text) == [("divergent-barrier", "warning", 5),
                                                  ("divergent-barrier", "warning", 8)]


def test_a_barrier_some_threads_skip_is_an_error(tmp_path):
    text = """extern "C" __global__ void __launch_bounds__(256) k(float* __restrict__ out) {
  __shared__ float buf[256];
  buf[((int)threadIdx.x)] = 1.0f;
  if (((int)threadIdx.x) < 128) {
    __syncthreads();
  }
  out[((int)threadIdx.x)] = buf[(255 - ((int)threadIdx.x))];
}
"""
    found = _check(tmp_path, "skip.cu", text)
    assert ("divergent-barrier", "error", 5) in found


def test_a_local_variable_may_be_called_like_a_type(tmp_path):
    text = """extern "C" __global__ void __launch_bounds__(128) k(float* __restrict__ A) {
  int half = ((int)threadIdx.x) >> 1;
  A[half] = (float)half;
}
"""
    path = _write(tmp_path, "half.cu", text)
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert [f.rule for f in report.findings] == [] and all(r.parsed for r in report.files)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _fixtures() -> list[Path]:
    return sorted(p for p in KERNELS.glob("*.cu") if re.search(r"_s[1-4]\.cu$|_s2\.cu$", p.name))


def _apply(text: str, findings) -> str:
    """Every claim at once: claimed barriers and waits deleted, deeper waits rewritten."""
    lines = text.split("\n")
    for f in findings:
        i = f.location.line - 1
        if f.rule == "wait-too-deep":
            m = _DEEPER.search(f.message)
            assert m is not None, f.message
            lines[i] = re.sub(r"cp_async_wait<\d+>", f"cp_async_wait<{m.group(1)}>", lines[i])
        else:
            assert re.search(r"__syncthreads|cp_async_wait", lines[i]), (f.rule, lines[i])
            lines[i] = "// removed: " + lines[i].strip()
    return "\n".join(lines)


@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda p: p.stem)
def test_every_claim_of_a_kernel_can_be_applied_together(fixture, tmp_path):
    report = run_check([str(fixture)], HOST, CheckOptions(jobs=1))
    claims = [f for f in report.findings if f.rule in CLAIMS]
    for f in claims:
        assert "only when" not in f.message, f.message      # a claim holds for every trip count
    if not claims:
        return
    before = {(f.rule, f.severity.value) for f in report.findings if f.severity.value == "error"}
    edited = _write(tmp_path, fixture.name, _apply(fixture.read_text(), claims))
    after = run_check([str(edited)], HOST, CheckOptions(jobs=1))
    assert after.errors == []
    new = [(f.rule, f.location.line, f.message) for f in after.findings
           if f.severity.value == "error" and (f.rule, f.severity.value) not in before]
    assert new == []
