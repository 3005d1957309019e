"""The kernel model recovers what the pipeline became, from real TileLang output."""
from __future__ import annotations

import pytest

from pipelint.cuda import parse
from pipelint.cuda import ast as A
from pipelint.model import KernelModel
from pipelint.model.evaluate import evaluate
from pipelint.model.threads import elected, span
from helpers import fixture


def model(name: str) -> KernelModel:
    parsed = parse(fixture(name).read_text())
    return KernelModel(parsed.unit.kernels()[0], parsed.lines)


def expr(text: str) -> A.Expr:
    unit = parse(f"void f() {{ x = {text}; }}").unit
    return next(n for n in unit.walk() if isinstance(n, A.Assign)).value


@pytest.mark.parametrize("text,k,value", [
    ("(k % 3)", 4, 1), ("((k + 2) % 3)", 2, 1), ("(k & 3)", 6, 2), ("((k + 3) & 3)", 2, 1),
    ("((k % 6) / 3)", 4, 1), ("(((k & 3) >> 1) ^ 1)", 2, 0),
    ("((((k + 1) & 3) >> 1) + 1) & 1", 1, 0),
    ("((3 & ((c % 3) >> 31)) + (c % 3))", None, 2),
    ("(-7 % 3)", 0, -1), ("(-7 / 2)", 0, -3),
])
def test_stage_and_parity_spellings_evaluate_with_c_semantics(text, k, value):
    env = {"k": k} if k is not None else {"c": -4}
    assert evaluate(expr(text), env) == value


@pytest.mark.parametrize("stages,versions", [(2, 2), (3, 3), (4, 4)])
def test_version_dimension_follows_num_stages_on_sm80(stages, versions):
    m = model(f"gemm_f16_sm_80_s{stages}.cu")
    assert m.stages["A_shared"].versions == versions
    assert m.stages["A_shared"].stride == 128 * 32 * 2  # one block_M x block_K fp16 tile
    assert m.stages["B_shared"].versions == versions


def test_dynamic_shared_aliases_are_byte_ranges_and_may_overlap():
    m = model("flash_attn_fwd_sm_80_s2.cu")
    q, o, k = m.buffers["Q_shared"], m.buffers["O_shared"], m.buffers["K_shared"]
    assert (q.offset, o.offset, k.offset) == (0, 0, 8192)
    assert m.overlap("Q_shared", "O_shared") and not m.overlap("K_shared", "V_shared")
    assert m.stages["K_shared"].versions == 2 and m.stages["V_shared"].versions == 2


def test_warp_specialized_kernel_has_producer_and_consumer_roles_and_mbarriers():
    m = model("gemm_f16_sm_90_s3.cu")
    assert m.threads == 256
    assert [(r.lo, r.hi) for r in m.roles] == [(0, 128), (128, 256)]
    assert m.barriers["mbarrier"].count == 6
    producer, consumer = m.trace.events
    assert any(e.kind == "tma_load" for e in producer) and not any(e.kind == "tma_load" for e in consumer)
    waits = [e for e in producer if e.kind == "mbar_wait"]
    assert [w.value for w in waits[:4]] == [1, 1, 1, 0]  # first use of each empty slot passes at once
    assert [w.barrier[1] for w in waits[:4]] == [3, 4, 5, 3]


def test_elected_threads_follow_tl_shuffle_elect():
    """One real thread per eligible warp: the lowest lane of that warp among the threads that
    reach the election (tl_templates intrin.h), whatever roles the block is split into."""
    block = span(0, 256)
    assert elected(block, 128) == (1 << 0) | (1 << 128)           # warps 0 and 4
    assert elected(block, 0) == 1                                  # the block's first warp only
    assert elected(span(0, 128), 32) == sum(1 << (32 * w) for w in range(4))
    assert elected(span(128, 256), 0) == 0                         # warp 0 does not reach it
    # threads 0-2 took another branch: warp 0's lowest lane that reaches it is thread 3
    assert elected(span(3, 256), 128) == (1 << 3) | (1 << 128)
    # one election, counted once however a guard splits warp 0 into roles
    assert (elected(block, 128) & span(0, 1)).bit_count() + (elected(block, 128) & span(1, 128)).bit_count() == 1


def test_cp_async_groups_and_barriers_per_iteration():
    m = model("gemm_f16_sm_80_s3.cu")
    assert m.cp_async.hazards == []
    loop = m.pipelined_loops[0]
    assert loop.trip == 30 and loop.var == "k"
    syncs = [e for e in m.trace.events[0] if e.kind == "sync" and e.iteration and e.iteration[0][1] == 5]
    assert len(syncs) == 2
    roles = m.cp_async.barrier_roles
    assert len(roles) == len(m.cp_async.sync_nodes)  # every barrier orders a hazard
    kinds = {h.kind for hs in roles.values() for h in hs.values()}
    assert {"raw-unsynced", "war-unsynced"} <= kinds


def test_shared_memory_estimate():
    assert model("gemm_f16_sm_80_s3.cu").shared_bytes() == 3 * 2 * 128 * 32 * 2


PERSISTENT = fixture("gemm_f16_sm_80_s3.cu").parent.parent / "handwritten" / "persistent_phase.cu"


def _persistent(text: str) -> KernelModel:
    parsed = parse(text)
    return KernelModel(parsed.unit.kernels()[0], parsed.lines, parsed.registry)


def test_phase_counters_in_local_arrays_drive_slots_and_parities():
    m = _persistent(PERSISTENT.read_text())
    producer, consumer = m.trace.events
    waits = [e for e in producer if e.kind == "mbar_wait"]
    assert len(waits) == 32  # 4 tiles x 8 k-steps, counted across the tile loop
    assert [w.value for w in waits[:6]] == [1, 1, 0, 0, 1, 1]
    assert [w.barrier for w in waits[:3]] == [("consumed", 0), ("consumed", 1), ("consumed", 0)]
    reads = [e for e in consumer if e.kind == "smem"]
    assert {m.slot(e) for e in reads} == {0, 1} and m.stages["A_shared"].versions == 2
    assert m.mbarrier.issues == [] and m.cp_async.hazards == []


def test_phase_counter_bugs_are_found():
    text = PERSISTENT.read_text()
    hang = text.replace("wait((((c & 3) >> 1) ^ 1))", "wait(((c & 3) >> 1))")
    assert {i.kind for i in _persistent(hang).mbarrier.issues} == {"deadlock"}
    skip = text.replace("producer_phase_cnt[0] = (producer_phase_cnt[0] + 1);",
                        "producer_phase_cnt[0] = (producer_phase_cnt[0] + 2);")
    kinds = {i.kind for i in _persistent(skip).mbarrier.issues}
    assert kinds & {"deadlock", "raw", "war-unconsumed", "war-unobserved", "arrival-count"}


def test_tma_slot_layout_estimate_is_checked_against_descriptor_boxes():
    from pipelint.lowering.sweep import LoweredVariant
    from pipelint.pluginhost import load_plugins

    host = load_plugins()

    def _tma_boxes(v):
        return [f for f in host.check_variants([v])[0] if "TMA" in f.message and f.rule == "ir-cuda-mismatch"]

    m = model("gemm_f16_sm_90_s3.cu")
    exact = {"A_desc": 128 * 32 * 2, "B_desc": 32 * 64 * 2}  # what TileLang's host code says
    ok = LoweredVariant("gemm", "sm_90", 3, True, None, {"tma_box_bytes": exact}, model=m)
    assert _tma_boxes(ok) == []
    wrong = LoweredVariant("gemm", "sm_90", 3, True, None,
                           {"tma_box_bytes": dict(exact, B_desc=2048)}, model=m)
    (f,) = _tma_boxes(wrong)
    assert f.rule == "ir-cuda-mismatch" and "B_desc" in f.message and "4096" in f.message
