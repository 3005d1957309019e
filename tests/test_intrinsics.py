"""The intrinsics table knows every TileLang template function that touches the pipeline."""
from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path

import pytest

from pipelint.engine import CheckOptions, run_check
from pipelint.model.intrinsics import INTRINSICS, NOT_PIPELINE, PIPELINE_WORDS, TYPE_BYTES, type_bytes
from pipelint.pluginhost import load_plugins

HOST = load_plugins()


def _templates() -> Path:
    spec = find_spec("tilelang")
    if spec is None or spec.origin is None:
        pytest.skip("TileLang is not installed")
    return Path(spec.origin).parent / "src" / "tl_templates" / "cuda"


@pytest.mark.tilelang
def test_every_template_function_of_the_pipeline_is_classified():
    names = set()
    for header in _templates().rglob("*.h"):
        names |= set(re.findall(r"TL_DEVICE[^(;{]*?\b([A-Za-z_]\w*)\s*\(", header.read_text(errors="replace")))
    assert len(names) > 200
    relevant = {n for n in names if any(word in n.lower() for word in PIPELINE_WORDS)}
    unknown = {n for n in relevant
               if f"tl::{n}" not in INTRINSICS and f".{n}" not in INTRINSICS and n not in NOT_PIPELINE}
    assert unknown == set()


def test_byte_sizes_of_tilelang_types():
    assert type_bytes("tfloat32_t") == 4
    assert type_bytes("fp8_e4_t") == 1 and TYPE_BYTES["fp8_e4_16_t"] == 16
    assert TYPE_BYTES["fp4_e2_32_t"] == 16 and TYPE_BYTES["fp4_e2_t"] == 1


KERNEL = """
extern "C" __global__ void __launch_bounds__(256, 1) k(float* out) {{
  __shared__ float buf[256];
  {body}
}}
"""


def _check(tmp_path, body: str):
    path = tmp_path / "k.cu"
    path.write_text(KERNEL.format(body=body))
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert report.errors == []
    return report.findings


def test_unknown_intrinsic_with_a_shared_pointer_is_a_note_not_an_error(tmp_path):
    findings = _check(tmp_path, "tl::my_new_copy((&(buf[threadIdx.x])), out);\n  out[0] = buf[0];")
    (note,) = [f for f in findings if f.rule == "unknown-intrinsic"]
    assert note.severity.value == "note" and "tl::my_new_copy" in note.message
    assert not [f for f in findings if f.severity.value == "error"]


def test_math_helpers_are_not_reported_as_unknown(tmp_path):
    findings = _check(tmp_path, "out[threadIdx.x] = tl::mul2(out[0], out[1]);")
    assert not [f for f in findings if f.rule == "unknown-intrinsic"]


def test_two_warp_groups_on_one_named_barrier_id_do_not_wait_for_each_other(tmp_path):
    # bar.sync 3, 128 completes once 128 threads arrived: each warp group alone suffices, so no
    # group hangs waiting for the other. But the groups' generations can mix (any 128 arrivals
    # complete one), so the barrier orders neither group: named-barrier-count, never a deadlock
    body = """if (((int)threadIdx.x) < 128) {
    tl::__sync_thread_partial(3, 128);
    buf[threadIdx.x] = 1.0f;
    tl::__sync_thread_partial(3, 128);
  } else {
    tl::__sync_thread_partial(3, 128);
  }"""
    findings = _check(tmp_path, body)
    errors = {f.rule for f in findings if f.severity.value == "error"}
    assert errors == {"named-barrier-count"}


def test_default_arguments_in_device_helpers_parse(tmp_path):
    path = tmp_path / "d.cu"
    path.write_text("template <typename T, bool s = false>\n__device__ void f(T *p, const int N = 8) {}\n"
                    + KERNEL.format(body="tl::Tcgen05SMemDescriptor desc_a;\n  out[0] = buf[0];"))
    report = run_check([str(path)], HOST, CheckOptions(jobs=1))
    assert all(r.parsed for r in report.files)
