"""expect_tx below the bytes the consumers read (`MBarrierAnalysis.bytes_read`), on TileLang 0.1.15 output.

Where a TMA descriptor's box is not in the kernel text, a phase's byte count cannot be checked
exactly; but the wgmma operands after the phase have exact bytes (their descriptors), and those
bytes were written by the phase's loads or by none.  Announcing fewer is a defect either way.
"""
from __future__ import annotations

import pytest
from helpers import KERNELS

from pipelint.engine import CheckOptions, run_check
from pipelint.pluginhost import load_plugins

HOST = load_plugins()


def _tx(tmp_path, name: str, old: str, new: str):
    text = (KERNELS / name).read_text()
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    return [f for f in report.findings if f.rule == "mbarrier-tx-bytes"]


def test_clean_single_stage_gemm_stays_a_note(tmp_path):
    found = _tx(tmp_path, "gemm_f16_sm_90_s1.cu", "expect_transaction(8192)", "expect_transaction(8192)")
    assert [(f.severity.value, f.location.line) for f in found] == [("note", 45)]


@pytest.mark.parametrize("name, old, new, line, announced", [
    # A 8192 + B 8192 bytes read by the wgmma; one announcement halved
    ("gemm_f16_sm_90_s1.cu", "expect_transaction(8192)", "expect_transaction(4096)", 45, 12288),
    # the Q tile, loaded once before the loops and read by every k step's wgmma
    ("flash_attn_fwd_sm_90_s2.cu", "mbarrier[8].arrive_and_expect_tx(8192)",
     "mbarrier[8].arrive_and_expect_tx(4096)", 61, 4096),
])
def test_announcing_less_than_the_wgmma_read_is_an_error(tmp_path, name, old, new, line, announced):
    found = _tx(tmp_path, name, old, new)
    assert [(f.severity.value, f.location.line) for f in found] == [("error", line)]
    assert f"announces {announced} bytes" in found[0].message and "read" in found[0].message
