"""wgmma operand footprints from descriptors (`model.wgmma`), against the PTX ISA's canonical layouts.

Each case is a layout TileLang 0.1.15 emits (tests/fixtures/kernels/gemm_f16_sm_90_s3.cu: A with a
64-byte swizzle, K-major; B with a 128-byte swizzle, MN-major) or a hand-computed small one.
"""
from __future__ import annotations

from pipelint.model.wgmma import (
    Descriptor,
    footprint,
    merged,
    mma_shape,
    operand_chunks,
    retired_before,
    shares_warpgroup,
)


def test_shape_from_template_arguments():
    shape = mma_shape("tl::wgmma_ss", ["tl::DataType::kFloat16", "tl::DataType::kFloat16",
                                       "tl::DataType::kFloat32", "64", "128", "16", "false", "true", "1", "1"])
    assert shape is not None
    assert (shape.m, shape.n, shape.k, shape.a_bytes, shape.tnsp_a, shape.tnsp_b, shape.a_in_smem) == \
        (64, 128, 16, 2, False, True, True)
    rs = mma_shape("tl::wgmma_rs", ["tl::DataType::kFloat16"] * 3 + ["64", "64", "16", "false", "false"])
    assert rs is not None and not rs.a_in_smem
    assert mma_shape("tl::tcgen05mma_ss", ["x"] * 10) is None


def test_k_major_128b_swizzle_one_k_step_reads_32_bytes_of_every_row():
    # 64 rows x 64 halves (128-byte rows), SBO = 1024 bytes (8 rows); one k step: 32 bytes per row
    desc = Descriptor("A", 0, 1, 1, 64)
    chunks = operand_chunks(desc, 0, 64, 16, 2, False)
    assert chunks is not None and len(chunks) == 64 * 2
    # row r's two chunks lie in row r (the swizzle permutes chunks within a 128-byte row)
    assert all(c // 128 in range(64) for c in chunks)
    assert {c // 128 for c in chunks} == set(range(64))
    # row 1's logical chunks 0, 1 are XORed with 1: chunks 1, 0 -> bytes 128..159 still
    assert {c for c in chunks if c // 128 == 1} == {128, 144}
    # row 2: chunks 0, 1 XOR 2 -> 2, 3
    assert {c for c in chunks if c // 128 == 2} == {256 + 32, 256 + 48}
    # the four k steps of a 64-wide tile cover it whole: one interval
    assert footprint(desc, [0, 32, 64, 96], 64, 16, 2, False) == (0, 8192)
    # one k step alone is strided: not claimed as an interval
    assert footprint(desc, [0], 64, 16, 2, False) is None


def test_gemm_sm90_a_operand_64b_swizzle():
    # initialize_wgmma_descriptor<2, 1, 32>: 64-byte swizzle, SBO 512 bytes; M = 64 of 128 rows per
    # i_2 (offset 4096 bytes), k steps ki * 32 bytes: the slot's 8192 bytes
    desc = Descriptor("A_shared", 0, 2, 1, 32)
    starts = [i2 * 4096 + ki * 32 for i2 in range(2) for ki in range(2)]
    assert footprint(desc, starts, 64, 16, 2, False) == (0, 8192)
    assert footprint(desc, [8192 + s for s in starts], 64, 16, 2, False) == (8192, 16384)


def test_gemm_sm90_b_operand_mn_major_128b_swizzle():
    # initialize_wgmma_descriptor<1, 256, 64>: 128-byte swizzle, LBO 4096 bytes between the two
    # 64-half atoms of N = 128, SBO 1024 between groups of 8 K rows; k steps ki * 2048 bytes
    desc = Descriptor("B_shared", 0, 1, 256, 64)
    one = operand_chunks(desc, 0, 128, 16, 2, True)
    assert one is not None and merged(set(one)) == [(0, 2048), (4096, 6144)]
    assert footprint(desc, [0, 2048], 128, 16, 2, True) == (0, 8192)


def test_no_swizzle_k_major_core_matrices():
    # interleave: 8 rows x 16 bytes per core matrix, the second K half LBO bytes away
    desc = Descriptor("A", 0, 0, 8, 16)      # LBO 128 bytes, SBO 256 bytes
    chunks = operand_chunks(desc, 0, 16, 16, 2, False)
    assert chunks == frozenset(range(0, 512, 16))


def test_unknown_layout_is_not_guessed():
    assert operand_chunks(Descriptor("A", 0, 5, 1, 64), 0, 64, 16, 2, False) is None


def test_warpgroups():
    assert shares_warpgroup((0, 64), (64, 128))
    assert not shares_warpgroup((0, 128), (128, 256))
    assert shares_warpgroup((0, 256), (128, 129))
    t0_63, t0, t128 = (1 << 64) - 1, 1, 1 << 128
    assert retired_before(t0_63, t0)          # thread 0 waited for its own warp group's wgmma
    assert not retired_before(t0_63, t128)    # thread 128's wait does not complete group 0's
