"""What each TileLang/CUDA intrinsic does to the pipeline, as data.

One table instead of scattered `if name == ...`: the trace builder looks a
call up here and records an event of the given kind, reading shared memory,
barrier and count arguments from the listed positions.  Member calls on an
mbarrier array element (`bar[i].wait(p)`) are keyed by method name with a
leading dot.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True, slots=True)
class Intrinsic:
    kind: str
    smem: Optional[int] = None       # argument index of a shared-memory pointer
    access: str = ""                 # "read" | "write" | "async" (cp.async/TMA write)
    barrier: Optional[int] = None    # argument index of an mbarrier reference
    count: Optional[int] = None      # argument index of a count/bytes/parity value
    template_count: bool = False     # the count is template argument 0


INTRINSICS: dict[str, Intrinsic] = {
    # cp.async (sm_80+)
    "tl::cp_async_gs": Intrinsic("cp_async", smem=0, access="async"),
    "tl::cp_async_gs_conditional": Intrinsic("cp_async", smem=0, access="async"),
    "tl::cp_async_commit": Intrinsic("commit"),
    "tl::cp_async_wait": Intrinsic("wait", template_count=True),
    "tl::mbarrier_cp_async_arrive_noinc": Intrinsic("cp_async_arrive", barrier=0),
    "tl::mbarrier_cp_async_arrive": Intrinsic("cp_async_arrive", barrier=0),
    # block and named barriers
    "__syncthreads": Intrinsic("sync"),
    "tl::__sync_thread_partial": Intrinsic("named_sync", count=1),
    "__syncwarp": Intrinsic("warp_sync"),
    # shared-memory reads/writes through PTX wrappers
    "tl::ptx_ldmatrix_x1": Intrinsic("read", smem=0, access="read"),
    "tl::ptx_ldmatrix_x2": Intrinsic("read", smem=0, access="read"),
    "tl::ptx_ldmatrix_x4": Intrinsic("read", smem=0, access="read"),
    "tl::ptx_ldmatrix_x1_trans": Intrinsic("read", smem=0, access="read"),
    "tl::ptx_ldmatrix_x2_trans": Intrinsic("read", smem=0, access="read"),
    "tl::ptx_ldmatrix_x4_trans": Intrinsic("read", smem=0, access="read"),
    # every stmatrix flavour in tl_templates/cuda/ldsm.h writes shared memory (argument 0)
    **{f"tl::ptx_stmatrix_{shape}{n}{trans}": Intrinsic("write", smem=0, access="write")
       for shape in ("", "m8n8_", "m16n8_") for n in ("x1", "x2", "x4") for trans in ("", "_trans")},
    # TMA (sm_90+): loads are decoded by trace.py (descriptor vs 1-D bulk form)
    "tl::tma_load": Intrinsic("tma_load"),
    "tl::tma_load_im2col": Intrinsic("tma_load"),
    "tl::tma_store": Intrinsic("tma_store", smem=1, access="read"),
    "tl::tma_store_add": Intrinsic("tma_store", smem=1, access="read"),
    "tl::tma_store_arrive": Intrinsic("tma_store_commit"),
    "tl::tma_store_wait": Intrinsic("tma_store_wait", template_count=True),
    "tl::fence_barrier_init": Intrinsic("fence_init"),
    "tl::fence_proxy_async": Intrinsic("fence_proxy"),
    "tl::prefetch_tma_descriptor": Intrinsic("prefetch"),
    # wgmma: operands are descriptors bound to shared memory
    "tl::initialize_wgmma_descriptor": Intrinsic("desc_init", smem=1),
    "tl::increase_descriptor_offset": Intrinsic("desc_offset", count=1),
    "tl::wgmma_ss": Intrinsic("wgmma", smem=None),
    "tl::wgmma_rs": Intrinsic("wgmma", smem=None),
    "tl::warpgroup_arrive": Intrinsic("wgmma_fence"),
    "tl::warpgroup_commit_batch": Intrinsic("wgmma_commit"),
    "tl::warpgroup_wait": Intrinsic("wgmma_wait", template_count=True),
    # mbarrier methods (Barrier in tl_templates/cuda/barrier.h)
    ".init": Intrinsic("mbar_init", count=0),
    ".arrive": Intrinsic("mbar_arrive"),
    ".wait": Intrinsic("mbar_wait", count=0),
    ".expect_transaction": Intrinsic("mbar_expect_tx", count=0),
    ".arrive_and_expect_tx": Intrinsic("mbar_arrive_expect_tx", count=0),
}

# Calls that make a branch run on one elected thread per group.
ELECT = frozenset({"tl::tl_shuffle_elect", "cute::elect_one_sync"})

# Kinds that make a loop part of the pipeline skeleton (it is unrolled).
SYNC_KINDS = frozenset({
    "cp_async", "commit", "wait", "sync", "named_sync", "tma_load", "tma_store",
    "tma_store_commit", "tma_store_wait", "mbar_init", "mbar_arrive", "mbar_wait",
    "mbar_expect_tx", "mbar_arrive_expect_tx", "cp_async_arrive", "fence_init",
})
# Kinds that make a loop a pipelined (steady-state) loop.
PIPELINE_KINDS = frozenset({"commit", "wait", "mbar_wait", "mbar_arrive"})

TYPE_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1,
    "bool": 1, "fp8_e4_t": 1, "fp8_e5_t": 1, "fp8_e8_t": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1, "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2,
    "half_t": 2, "half": 2, "__half": 2, "bfloat16_t": 2, "nv_bfloat16": 2,
    "__nv_bfloat16": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4,
    "uint32_t": 4, "uint": 4, "float": 4, "half2": 4, "__half2": 4, "nv_bfloat162": 4,
    "bfloat162": 4, "uint1": 4, "int1": 4, "float1": 4, "long long": 8, "int64_t": 8,
    "uint64_t": 8, "unsigned long long": 8, "double": 8, "float2": 8, "uint2": 8, "int2": 8,
    "float4": 16, "uint4": 16, "int4": 16, "double2": 16,
}


def type_bytes(type_text: str) -> Optional[int]:
    base = type_text.replace("const", "").replace("*", "").replace("volatile", "").strip()
    return TYPE_BYTES.get(" ".join(base.split()))


def call_kind(call) -> Optional[Intrinsic]:
    """The table entry for a call: `tl::cp_async_wait<2>()`, or `.wait` for `bar[i].wait(p)`."""
    from ..cuda import ast as A

    callee = call.callee
    if type(callee) is A.Name:
        return INTRINSICS.get(callee.qualified)
    if type(callee) is A.Member:
        return INTRINSICS.get("." + callee.member)
    return None
