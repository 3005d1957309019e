"""False findings found on held-out TileLang kernels (kernels of patterns the corpora do not have),
each reproduced with a kernel of the project's own (tests/fixtures/causes/) and fixed in the model:

* `gather_gemm` (sm_90, warp-specialised): cp.async committed, then handed to the consumers with
  `mbarrier_cp_async_arrive_noinc`, which tracks every earlier cp.async of the thread, committed
  or not: nothing is in flight at exit (was a `missing-drain` warning);
* `heads_gemm` (sm_80): a pipelined K loop inside a plain loop over heads: its steady-state wait is
  the inner loop's, not the outer loop's drain (was an `ir-cuda-mismatch` error under `lower`);
* an author's own `order`/`stage` with no `num_stages` is not TileLang's planner's plan (was a
  `planner-stages` error under `lower`): `tests/rules/planner-stages/authors_own_order_and_stage`.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import KERNELS

from pipelint.cuda import parse
from pipelint.engine import CheckOptions, run_check
from pipelint.model import KernelModel
from pipelint.pluginhost import load_plugins

HOST = load_plugins()


def _model(path: Path) -> KernelModel:
    parsed = parse(path.read_text())
    [func] = parsed.unit.kernels()
    return KernelModel(func, parsed.lines, parsed.registry)


@pytest.mark.parametrize("name", ["gather_gemm_sm_90_s1.cu", "gather_gemm_sm_90_s2.cu"])
def test_copies_committed_then_tracked_by_an_mbarrier_are_not_in_flight_at_exit(name: str) -> None:
    report = run_check([str(KERNELS / name)], HOST, CheckOptions(jobs=1))
    assert [f.rule for f in report.findings if f.severity.value != "note"] == []


def test_the_tracking_arrival_still_matters(tmp_path: Path) -> None:
    # without the arrival the committed group really is in flight when the producer ends
    lines = (KERNELS / "gather_gemm_sm_90_s1.cu").read_text().splitlines()
    assert lines[52].strip() == "tl::mbarrier_cp_async_arrive_noinc(mbarrier[0]);"
    del lines[52]
    path = tmp_path / "k.cu"
    path.write_text("\n".join(lines) + "\n")
    rules = {f.rule for f in run_check([str(path)], HOST, CheckOptions(jobs=1)).findings}
    assert "missing-drain" in rules


@pytest.mark.parametrize("stages, wait", [(2, (1, 1)), (3, (2, 1))])
def test_the_steady_state_of_a_pipeline_inside_a_plain_loop_is_the_inner_loops(stages: int, wait: tuple) -> None:
    # (N of cp_async_wait<N>, commit groups per iteration): num_stages - 1 stages in flight
    assert _model(KERNELS / f"heads_gemm_sm_80_s{stages}.cu").steady_wait() == wait


def test_a_single_loop_pipeline_keeps_its_steady_state() -> None:
    assert _model(KERNELS / "gemm_f16_sm_80_s3.cu").steady_wait() == (2, 1)
