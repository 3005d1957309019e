"""What each TileLang/CUDA intrinsic does to the pipeline, as data.

One table instead of scattered `if name == ...`: the trace builder looks a
call up here and records an event of the given kind, reading shared memory,
barrier and count arguments from the listed positions.  Member calls on an
mbarrier array element (`bar[i].wait(p)`) are keyed by method name with a
leading dot.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cuda import ast as A


class EventKind(StrEnum):
    """Every kind of event a role's trace holds: the closed set the analyses dispatch on."""

    SMEM = "smem"                          # a shared-memory access (Event.access says which)
    GLOBAL = "global"                      # a global-memory access to a buffer the block writes and reads
    CP_ASYNC = "cp_async"                  # cp.async global -> shared copy
    COMMIT = "commit"                      # cp.async.commit_group
    WAIT = "wait"                          # cp.async.wait_group N
    CP_ASYNC_ARRIVE = "cp_async_arrive"    # cp.async.mbarrier.arrive.noinc: counts as an arrival
    CP_ASYNC_ARRIVE_INC = "cp_async_arrive_inc"  # without .noinc: tracks copies, no net arrival
    SYNC = "sync"                          # __syncthreads / cluster barrier
    NAMED_SYNC = "named_sync"              # bar.sync id, n (tl::__sync_thread_partial)
    WARP_SYNC = "warp_sync"
    READ = "read"                          # table-only: PTX wrappers that read shared memory
    WRITE = "write"                        # table-only: PTX wrappers that write shared memory
    TMA_LOAD = "tma_load"
    TMA_STORE = "tma_store"
    TMA_STORE_COMMIT = "tma_store_commit"
    TMA_STORE_WAIT = "tma_store_wait"
    FENCE_INIT = "fence_init"
    FENCE_PROXY = "fence_proxy"
    PREFETCH = "prefetch"
    DESC_INIT = "desc_init"                # wgmma/tcgen05 shared-memory descriptor bound to a buffer
    DESC_OFFSET = "desc_offset"
    WGMMA = "wgmma"                        # MMA reading shared memory through descriptors
    WGMMA_FENCE = "wgmma_fence"
    WGMMA_COMMIT = "wgmma_commit"
    WGMMA_WAIT = "wgmma_wait"
    MBAR_INIT = "mbar_init"
    MBAR_ARRIVE = "mbar_arrive"
    MBAR_WAIT = "mbar_wait"
    MBAR_EXPECT_TX = "mbar_expect_tx"
    MBAR_ARRIVE_EXPECT_TX = "mbar_arrive_expect_tx"
    MMA_ARRIVE = "mma_arrive"              # tcgen05.commit: one arrival per issuing warp
    NAMED_ARRIVE = "named_arrive"          # bar.arrive id, n: counts towards a named barrier, no wait
    TMEM = "tmem"                          # Tensor Memory: a tcgen05 MMA's accumulator (write, asynchronous
                                           # until its tcgen05.commit) or a tcgen05_ld (read)


K = EventKind


class HazardKind(StrEnum):
    """What the cp.async / block-barrier simulation can find (`cpasync.Hazard.kind`)."""

    RAW_INCOMPLETE = "raw-incomplete"        # read of a copy its wait left in flight
    RAW_UNCOMMITTED = "raw-uncommitted"      # read of a copy no commit put in a group
    GROUP_MERGED = "group-merged"            # one commit group holds copies into two stage slots of a
                                             # buffer (a commit between them is missing), and a read
                                             # of the earlier slot finds its group in flight
    WAIT_UNCOMMITTED = "wait-uncommitted"    # a wait ran while the copy was uncommitted; it is read
                                             # before any later wait completes it
    RAW_UNSYNCED = "raw-unsynced"            # read of other threads' completed copy, no barrier
    RAW_PLAIN = "raw-plain"                  # read of other threads' plain store, no barrier
    WAR_UNSYNCED = "war-unsynced"            # copy over bytes other threads may still read
    WAR_PLAIN = "war-plain"                  # store over bytes other threads may still read
    WAW_PLAIN = "waw-plain"                  # store over other threads' store, no barrier between
    OVERWRITE_UNCONSUMED = "overwrite-unconsumed"   # a stage slot refilled before it was read
    DRAIN = "drain"                          # synchronous write over a copy still in flight
    EXIT_UNCOMMITTED = "exit-uncommitted"
    EXIT_IN_FLIGHT = "exit-in-flight"
    WAR_BULK = "war-bulk"                    # store over bytes a TMA store may still be reading
    EXIT_BULK = "exit-bulk"                  # the kernel ends while a TMA store may still read


class IssueKind(StrEnum):
    """What the mbarrier protocol simulation can find (`mbarrier.ProtocolIssue.kind`)."""

    ARRIVAL_COUNT = "arrival-count"
    TX_BYTES = "tx-bytes"
    DEADLOCK = "deadlock"
    RAW = "raw"
    WAR_UNRELEASED = "war-unreleased"
    WAR_UNOBSERVED = "war-unobserved"
    WAR_UNCONSUMED = "war-unconsumed"
    INIT_FENCE = "init-fence"
    UNANALYZED = "unanalyzed"
    TMA_WAW = "tma-waw"                      # a plain store into a slot whose TMA load was not waited for
    TMA_UNWAITED = "tma-unwaited"            # a TMA load whose phase no role ever waits for
    TMEM_RAW = "tmem-raw"                    # a tcgen05_ld before the MMAs writing those columns completed
    TMEM_WAR = "tmem-war"                    # an MMA into columns another role's tcgen05_ld may still read
    PHASE_OVERRUN = "phase-overrun"          # a parity wait the barrier can run two phases past


@dataclass(frozen=True, slots=True)
class Intrinsic:
    kind: EventKind
    smem: int | None = None       # argument index of a shared-memory pointer
    access: str = ""                 # "read" | "write" | "async" (cp.async/TMA write)
    barrier: int | None = None    # argument index of an mbarrier reference
    count: int | None = None      # argument index of a count/bytes/parity value
    template_count: bool = False     # the count is template argument 0
    cluster: bool = False            # acts across the CTAs of a cluster
    per_thread: bool = False         # each thread accesses its own address (not warp-collective)
    elems: int = 1                   # elements one thread accesses (AtomicAddx4: 4)
    bytes: int | None = None         # bytes one thread accesses when the instruction fixes them


INTRINSICS: dict[str, Intrinsic] = {
    # cp.async (sm_80+)
    "tl::cp_async_gs": Intrinsic(K.CP_ASYNC, smem=0, access="async"),
    "tl::cp_async_gs_conditional": Intrinsic(K.CP_ASYNC, smem=0, access="async"),
    "tl::cp_async_commit": Intrinsic(K.COMMIT),
    "tl::cp_async_wait": Intrinsic(K.WAIT, template_count=True),
    "tl::mbarrier_cp_async_arrive_noinc": Intrinsic(K.CP_ASYNC_ARRIVE, barrier=0),
    "tl::mbarrier_cp_async_arrive": Intrinsic(K.CP_ASYNC_ARRIVE_INC, barrier=0),
    # tcgen05 (sm_100): `tl::tmem_deallocate(tmem_ptr, ncols)` reads the 4-byte TMEM address
    # `*tmem_ptr` in every thread of the warp (tl_templates/cuda/tcgen_05.h); tmem_allocate's write
    # of it by the tcgen05 unit is not modelled (it stays among the harmless tl::tmem_ calls)
    "tl::tmem_deallocate": Intrinsic(K.READ, smem=0, access="read", per_thread=True, bytes=4),
    # `tcgen05_ld_<dp>x<bits>Nx<N, pack16>(tmem_start_col, tmem_col_offset, dst)`: N columns of
    # Tensor Memory from the allocation's address plus an offset (tl_templates/cuda/copy_sm100.h;
    # the template waits for the load itself: `fence_view_async_tmem_load`)
    **{f"tl::tcgen05_ld_{shape}": Intrinsic(K.TMEM, access="read", template_count=True) for shape in (
        "32dp32bNx", "32dp64bNx", "32dp128bNx", "32dp256bNx", "16dp64bNx", "16dp128bNx", "16dp256bNx")},
    # block, cluster and named barriers
    "__syncthreads": Intrinsic(K.SYNC),
    # the barrier with a reduction of a predicate over the block (CUDA C++ guide, 7.6)
    "__syncthreads_or": Intrinsic(K.SYNC),
    "__syncthreads_and": Intrinsic(K.SYNC),
    "__syncthreads_count": Intrinsic(K.SYNC),
    "tl::cluster_sync": Intrinsic(K.SYNC, cluster=True),
    "tl::__sync_thread_partial": Intrinsic(K.NAMED_SYNC, count=1),   # (barrier id, threads)
    "__syncwarp": Intrinsic(K.WARP_SYNC, count=0),     # the lane mask (none: every lane)
    "tl::__named_barrier_arrive": Intrinsic(K.NAMED_ARRIVE, count=1),
    "tl::cluster_wait": Intrinsic(K.SYNC, cluster=True),
    "tl::cluster_arrive": Intrinsic(K.PREFETCH, cluster=True),          # no ordering until the wait
    "tl::cluster_arrive_relaxed": Intrinsic(K.PREFETCH, cluster=True),
    # free-function forms of the mbarrier methods (barrier.h): the barrier is argument 0
    "tl::mbarrier_init": Intrinsic(K.MBAR_INIT, barrier=0, count=1),
    "tl::mbarrier_wait": Intrinsic(K.MBAR_WAIT, barrier=0, count=1),
    "tl::mbarrier_arrive": Intrinsic(K.MBAR_ARRIVE, barrier=0),
    "tl::mbarrier_expect_tx": Intrinsic(K.MBAR_EXPECT_TX, barrier=0, count=1),
    "tl::mbarrier_arrive_expect_tx": Intrinsic(K.MBAR_ARRIVE_EXPECT_TX, barrier=0, count=1),
    # plain shared-memory loads and stores through helpers (copy.h, common.h, tcgen_05.h)
    **{f"tl::load_shared_{bits}": Intrinsic(K.READ, smem=0, access="read", per_thread=True)
       for bits in (32, 64, 128)},
    **{f"tl::store_shared_{bits}": Intrinsic(K.WRITE, smem=0, access="write", per_thread=True)
       for bits in (32, 64, 128)},
    # atomics (CUDA's and tl_templates/cuda/atomic.h): a write for ordering purposes, except that
    # two atomics never race with each other; on a pointer outside shared memory they are global
    **{name: Intrinsic(K.WRITE, smem=0, access="atomic", per_thread=True) for name in (
        "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc", "atomicDec",
        "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "atomicAdd_block", "atomicMax_block",
        "atomicMin_block", "tl::AtomicAdd", "tl::AtomicAddRet", "tl::AtomicMax", "tl::AtomicMaxRet",
        "tl::AtomicMin", "tl::AtomicMinRet", "tl::AtomicOr", "tl::AtomicStore", "tl::AtomicLoad",
        "tl::AtomicAddx2Scalar", "tl::AtomicAddx2ScalarRet", "tl::AtomicAddx4Scalar",
        "tl::AtomicAddx4ScalarRet",
        # tl_templates/cuda/atomic.h defines them in the global namespace: TileLang 0.1.15 emits
        # `AtomicAdd((&(S[0])), v)` unqualified
        "AtomicAdd", "AtomicAddRet", "AtomicMax", "AtomicMaxRet", "AtomicMin", "AtomicMinRet", "AtomicOr",
        "AtomicStore", "AtomicLoad", "AtomicAddx2Scalar", "AtomicAddx2ScalarRet", "AtomicAddx4Scalar",
        "AtomicAddx4ScalarRet")},
    **{f"{ns}AtomicAddx{n}": Intrinsic(K.WRITE, smem=0, access="atomic", per_thread=True, elems=n)
       for ns in ("", "tl::") for n in (2, 4)},
    "tl::st_bulk_shared": Intrinsic(K.WRITE, smem=0, access="write"),
    "tl::tcgen05_sf_warp_transpose": Intrinsic(K.WRITE, smem=0, access="write"),
    # shared-memory reads/writes through PTX wrappers
    **{f"tl::ptx_ldmatrix_{n}{trans}": Intrinsic(K.READ, smem=0, access="read")
       for n in ("x1", "x2", "x4") for trans in ("", "_trans")},
    # every stmatrix flavour in tl_templates/cuda/ldsm.h writes shared memory (argument 0)
    **{f"tl::ptx_stmatrix_{shape}{n}{trans}": Intrinsic(K.WRITE, smem=0, access="write")
       for shape in ("", "m8n8_", "m16n8_") for n in ("x1", "x2", "x4") for trans in ("", "_trans")},
    # TMA (sm_90+): loads are decoded by trace.py (descriptor vs 1-D bulk form)
    "tl::tma_load": Intrinsic(K.TMA_LOAD),
    "tl::tma_load_im2col": Intrinsic(K.TMA_LOAD),
    "tl::tma_load_gather4": Intrinsic(K.TMA_LOAD),
    "tl::tma_load_2sm": Intrinsic(K.TMA_LOAD, cluster=True),
    "tl::tma_load_multicast": Intrinsic(K.TMA_LOAD, cluster=True),
    "tl::tma_store": Intrinsic(K.TMA_STORE, smem=1, access="read"),
    "tl::tma_store_add": Intrinsic(K.TMA_STORE, smem=1, access="read"),
    "tl::tma_store_cluster": Intrinsic(K.TMA_STORE, cluster=True),
    "tl::tma_store_scatter4": Intrinsic(K.TMA_STORE, smem=1, access="read"),
    "tl::tma_store_arrive": Intrinsic(K.TMA_STORE_COMMIT),
    "tl::tma_store_wait": Intrinsic(K.TMA_STORE_WAIT, template_count=True),
    "tl::fence_barrier_init": Intrinsic(K.FENCE_INIT),
    "tl::fence_proxy_async": Intrinsic(K.FENCE_PROXY),
    "tl::prefetch_tma_descriptor": Intrinsic(K.PREFETCH),
    # wgmma / tcgen05: operands are descriptors bound to shared memory
    "tl::initialize_wgmma_descriptor": Intrinsic(K.DESC_INIT, smem=1),
    "tl::initialize_tcgen05_descriptor": Intrinsic(K.DESC_INIT, smem=1),
    "tl::increase_descriptor_offset": Intrinsic(K.DESC_OFFSET, count=1),
    **{f"tl::{name}": Intrinsic(K.WGMMA) for name in (
        "wgmma_ss", "wgmma_rs", "wgmma_sp_ss", "wgmma_sp_rs", "tcgen05mma_ss", "tcgen05mma_ts",
        "tcgen05mma_ws_ss", "tcgen05mma_blockscaled_ss", "tcgen05_cp")},
    "tl::warpgroup_arrive": Intrinsic(K.WGMMA_FENCE),
    "tl::warpgroup_commit_batch": Intrinsic(K.WGMMA_COMMIT),
    "tl::warpgroup_wait": Intrinsic(K.WGMMA_WAIT, template_count=True),
    "tl::wait_wgmma": Intrinsic(K.WGMMA_WAIT, template_count=True),
    "tl::tcgen05_mma_arrive": Intrinsic(K.MMA_ARRIVE, barrier=0),
    # mbarrier methods (Barrier in tl_templates/cuda/barrier.h); `.arrive(cta_id)` is remote
    ".init": Intrinsic(K.MBAR_INIT, count=0),
    ".arrive": Intrinsic(K.MBAR_ARRIVE),
    ".wait": Intrinsic(K.MBAR_WAIT, count=0),
    ".expect_transaction": Intrinsic(K.MBAR_EXPECT_TX, count=0),
    ".arrive_and_expect_tx": Intrinsic(K.MBAR_ARRIVE_EXPECT_TX, count=0),
}

# Calls that make a branch run on one elected thread per group.
ELECT = frozenset({"tl::tl_shuffle_elect", "cute::elect_one_sync"})

# Calls known to touch neither shared memory nor synchronisation the model tracks
# (register/TMEM traffic, math, fences with no shared-memory effect).
HARMLESS_PREFIXES = ("tl::warpgroup_reg_", "tl::warpgroup_fence_operand", "tl::tcgen05_before",
                     "tl::tcgen05_after", "tl::tcgen05_ld", "tl::tcgen05_st", "tl::tmem_",
                     "tl::rasterization", "tl::block_rank_in_cluster", "tl::tl_shuffle_elect",
                     "tl::mma_sync", "tl::mma_sp_sync", "tl::AllReduce", "tl::CumSum",
                     "tl::ptx_", "tl::fence_", "tl::atomic", "tl::Atomic")

# TL_DEVICE functions of tl_templates/cuda whose names mention shared memory, barriers or
# waiting but that neither access pipelined shared memory nor order it (pointer conversions,
# register shuffles, TMEM bookkeeping, polling forms the codegen does not emit in pipelines).
NOT_PIPELINE = frozenset({
    "smem_ptr_to_uint", "cast_smem_ptr_to_int", "make_sf_smem_desc", "tmem_allocate", "tmem_deallocate",
    "fence_view_async_tmem_load", "fence_view_async_tmem_store", "warpgroup_fence_operand",
    "__shfl_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "shfl_sync", "shfl_down_sync",
    "shfl_up_sync", "shfl_xor_sync", "get_warp_idx_sync", "clc_fence_proxy_async_shared_cta",
    "mbarrier_try_wait", "mbarrier_test_wait", "try_wait", "test_wait", "sync", "syncthreads_partial",
    "block_rank_in_cluster", "block_id_in_cluster", "cluster_id_in_grid", "cluster_shape", "cluster_grid_dims",
    "rasterization2DColumnWithCluster", "rasterization2DRowWithCluster", "clc_try_cancel_multicast",
    # register-only MMAs and tcgen05 thread-sync fences (no shared memory, no barrier phase)
    "mma_sync", "mma_sp_sync", "mma_sync_sm70", "sm120_mma_sync_blockscaled",
    "tcgen05_after_thread_sync", "tcgen05_before_thread_sync", "tl_atomic_add_v2_bf16_fenced",
})
# Words that make a function name worth classifying (see tests/test_intrinsics.py).
PIPELINE_WORDS = ("sync", "barrier", "arrive", "wait", "commit", "fence", "shared", "smem", "tma", "mbar",
                  "cp_async", "ldmatrix", "stmatrix", "tmem", "cluster", "wgmma", "tcgen05")

# Kinds that make a loop part of the pipeline skeleton (it is unrolled).
SYNC_KINDS = frozenset({
    K.CP_ASYNC, K.COMMIT, K.WAIT, K.SYNC, K.NAMED_SYNC, K.TMA_LOAD, K.TMA_STORE,
    K.TMA_STORE_COMMIT, K.TMA_STORE_WAIT, K.MBAR_INIT, K.MBAR_ARRIVE, K.MBAR_WAIT,
    K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX, K.CP_ASYNC_ARRIVE, K.CP_ASYNC_ARRIVE_INC,
    K.FENCE_INIT, K.MMA_ARRIVE, K.NAMED_ARRIVE,
})
# Kinds that make a loop a pipelined (steady-state) loop.
PIPELINE_KINDS = frozenset({K.COMMIT, K.WAIT, K.MBAR_WAIT, K.MBAR_ARRIVE, K.MMA_ARRIVE})
# Kinds whose every iteration must be walked (control flow of the pipeline protocol).
CONTROL_KINDS = frozenset({K.COMMIT, K.WAIT, K.SYNC, K.NAMED_SYNC, K.MBAR_INIT, K.MBAR_ARRIVE,
                           K.MBAR_WAIT, K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX,
                           K.CP_ASYNC_ARRIVE, K.CP_ASYNC_ARRIVE_INC, K.FENCE_INIT, K.TMA_LOAD,
                           K.MMA_ARRIVE, K.NAMED_ARRIVE})
# mbarrier protocol: arrivals that count towards `init`, transaction announcements, and uses.
ARRIVE_KINDS = frozenset({K.MBAR_ARRIVE, K.MBAR_ARRIVE_EXPECT_TX, K.CP_ASYNC_ARRIVE, K.MMA_ARRIVE})
EXPECT_KINDS = frozenset({K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX})
USE_KINDS = frozenset({K.MBAR_WAIT, K.MBAR_ARRIVE, K.MBAR_EXPECT_TX, K.MBAR_ARRIVE_EXPECT_TX,
                       K.TMA_LOAD, K.CP_ASYNC_ARRIVE, K.CP_ASYNC_ARRIVE_INC, K.MMA_ARRIVE})

TYPE_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1,
    "bool": 1, "fp8_e4_t": 1, "fp8_e5_t": 1, "fp8_e8_t": 1, "__nv_fp8_e4m3": 1,
    "__nv_fp8_e5m2": 1, "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2,
    "half_t": 2, "half": 2, "__half": 2, "bfloat16_t": 2, "nv_bfloat16": 2,
    "__nv_bfloat16": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4,
    "uint32_t": 4, "uint": 4, "float": 4, "half2": 4, "__half2": 4, "nv_bfloat162": 4,
    "bfloat162": 4, "uint1": 4, "int1": 4, "float1": 4, "long long": 8, "int64_t": 8,
    "uint64_t": 8, "unsigned long long": 8, "double": 8, "float2": 8, "uint2": 8, "int2": 8,
    "float4": 16, "uint4": 16, "int4": 16, "double2": 16, "tfloat32_t": 4, "float_e4m3_t": 1,
    "float_e5m2_t": 1, "__nv_fp8_e8m0": 1, "ushort": 2, "ulong": 8, "size_t": 8,
    "long": 8, "unsigned long": 8, "longlong": 8, "half4": 8, "bfloat164": 8,
}
# TileLang's packed vector types (tl_templates/cuda/cuda_fp8.h, cuda_fp4.h): fp8 x N is N bytes,
# fp4 x N is N/2 bytes (`fp4_e2_t` itself is stored in one byte).
TYPE_BYTES.update({f"fp8_{kind}_{n}_t": n for kind in ("e4", "e5", "e8") for n in (2, 4, 8, 16, 32)})
TYPE_BYTES.update({f"fp4_e2_{n}_t": n // 2 for n in (2, 4, 8, 16, 32, 64)})
TYPE_BYTES["fp4_e2_t"] = 1


def type_bytes(type_text: str) -> int | None:
    base = type_text.replace("const", "").replace("*", "").replace("volatile", "").strip()
    return TYPE_BYTES.get(" ".join(base.split()))


def call_kind(call: A.Call) -> Intrinsic | None:
    """The table entry for a call: `tl::cp_async_wait<2>()`, or `.wait` for `bar[i].wait(p)`."""
    from ..cuda import ast as A

    callee = call.callee
    if type(callee) is A.Name:
        return INTRINSICS.get(callee.qualified)
    if type(callee) is A.Member:
        return INTRINSICS.get("." + callee.member)
    return None


def cluster_barrier(node: object) -> bool:
    """Whether `node` is a cluster barrier (`tl::cluster_sync`, `tl::cluster_wait`: PTX's
    `barrier.cluster.*.aligned`): a hardware barrier of its own, not the block's barrier 0, which
    waits only for the cluster's non-exited threads and also orders the cluster's distributed
    shared memory, which pipelint does not model."""
    from ..cuda import ast as A

    if not isinstance(node, A.Call):
        return False
    intr = call_kind(node)
    return intr is not None and intr.cluster and intr.kind == EventKind.SYNC
