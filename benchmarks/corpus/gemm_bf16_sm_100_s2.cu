#if defined(_MSC_VER) && !defined(__clang__) && _MSC_VER < 1940
#define _tl_orig_alignas alignas
#define alignas(N) _tl_orig_alignas((N) <= 64 ? (N) : 64)
#include <cuda.h>
#undef alignas
#define alignas _tl_orig_alignas
#endif
#include <tl_templates/cuda/instruction/mma.h>
#include <tl_templates/cuda/intrin.h>
#include <tl_templates/cuda/barrier.h>
#include <tl_templates/cuda/copy_sm90.h>
#include <tl_templates/cuda/reduce.h>
#include <tl_templates/cuda/scan.h>
#include <tl_templates/cuda/ldsm.h>
#include <tl_templates/cuda/threadblock_swizzle.h>
#include <tl_templates/cuda/debug.h>
#ifdef ENABLE_BF16
#include <tl_templates/cuda/cuda_bf16_fallbacks.cuh>
#endif

extern "C" __global__ void gemm_kernel(__grid_constant__ const CUtensorMap A_desc, __grid_constant__ const CUtensorMap B_desc, bfloat16_t* __restrict__ C);
extern "C" __global__ void __launch_bounds__(256, 1) gemm_kernel(__grid_constant__ const CUtensorMap A_desc, __grid_constant__ const CUtensorMap B_desc, bfloat16_t* __restrict__ C) {
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* A_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* B_shared = ((void*)((char*)buf_dyn_shmem + 32768));
  __shared__ __align__(16) uint64_t mbarrier_mem[4];
  auto mbarrier = reinterpret_cast<Barrier*>(mbarrier_mem);
  float C_local[128];
  if (tl::tl_shuffle_elect<0>()) {
    tl::prefetch_tma_descriptor(A_desc);
    tl::prefetch_tma_descriptor(B_desc);
  }
  if (tl::tl_shuffle_elect<0>()) {
    mbarrier[0].init(1);
    mbarrier[1].init(1);
    mbarrier[2].init(128);
    mbarrier[3].init(128);
  }
  tl::fence_barrier_init();
  __syncthreads();
  if (((int)threadIdx.x) < 128) {
    tl::warpgroup_reg_dealloc<24>();
    for (int k = 0; k < 16; ++k) {
      mbarrier[((k & 1) + 2)].wait((((k & 3) >> 1) ^ 1));
      if (tl::tl_shuffle_elect<128>()) {
        mbarrier[(k & 1)].expect_transaction(16384);
        tl::tma_load(A_desc, mbarrier[(k & 1)], (&(((bfloat16_t*)A_shared)[((k & 1) * 8192)])), (k * 64), (((int)blockIdx.y) * 128));
        mbarrier[(k & 1)].arrive_and_expect_tx(16384);
        #pragma unroll
        for (int i = 0; i < 2; ++i) {
          tl::tma_load(B_desc, mbarrier[(k & 1)], (&(((bfloat16_t*)B_shared)[(((k & 1) * 8192) + (i * 4096))])), ((((int)blockIdx.x) * 128) + (i * 64)), (k * 64));
        }
      }
    }
  } else {
    tl::warpgroup_reg_alloc<240>();
#line 21 "examples/gemm.py"
    #pragma unroll
    for (int i_1 = 0; i_1 < 32; ++i_1) {
#line 21 "examples/gemm.py"
      float broadcast_var = 0x0p+0f/*0.000000e+00*/;
#line 21 "examples/gemm.py"
      *(float4*)(C_local + (i_1 * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
    }
    for (int k_1 = 0; k_1 < 16; ++k_1) {
      mbarrier[(k_1 & 1)].wait(((k_1 & 3) >> 1));
      {
        bfloat16_t A_local[32];
        bfloat16_t B_local[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
        for (int ki = 0; ki < 4; ++ki) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          #pragma unroll
          for (int i_2 = 0; i_2 < 4; ++i_2) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[((((((((k_1 & 1) * 8192) + (((((int)threadIdx.x) & 63) >> 5) * 4096)) + (i_2 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (ki >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local[(i_2 * 8)])));
          }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          #pragma unroll
          for (int i_3 = 0; i_3 < 4; ++i_3) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::ptx_ldmatrix_x4_trans((&(((bfloat16_t*)B_shared)[((((((((k_1 & 1) * 8192) + (((((int)threadIdx.x) & 127) >> 6) * 4096)) + (ki * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_3 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_3 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local[(i_3 * 8)])));
          }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          for (int i_4 = 0; i_4 < 4; ++i_4) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            for (int j = 0; j < 4; ++j) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
              tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_4 * 32) + (j * 8))), reinterpret_cast<const unsigned*>(A_local + (i_4 * 8)), reinterpret_cast<const unsigned*>(B_local + (j * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
              tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_4 * 32) + (j * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local + (i_4 * 8)), reinterpret_cast<const unsigned*>(B_local + ((j * 8) + 4)));
            }
          }
        }
      }
      mbarrier[((k_1 & 1) + 2)].arrive();
    }
#line 26 "examples/gemm.py"
    #pragma unroll
    for (int i_5 = 0; i_5 < 64; ++i_5) {
      bfloat16_t C_local_cast[2];
#line 26 "examples/gemm.py"
      uint1 __1;
      float2 v_ = *(float2*)(C_local + (i_5 * 2));
      (reinterpret_cast<__nv_bfloat162*>(&__1))[0] = __float22bfloat162_rn(((float2*)(&v_))[0]);
      *(uint1*)(C_local_cast + 0) = __1;
#line 26 "examples/gemm.py"
      *(uint1*)(C + ((((((((((((int)blockIdx.y) * 131072) + (((((int)threadIdx.x) & 63) >> 5) * 65536)) + ((i_5 >> 4) * 16384)) + ((i_5 & 1) * 8192)) + (((((int)threadIdx.x) & 31) >> 2) * 1024)) + (((int)blockIdx.x) * 128)) + ((((int)threadIdx.x) >> 6) * 64)) + (((i_5 & 15) >> 1) * 8)) + ((((int)threadIdx.x) & 3) * 2)) - 128)) = *(uint1*)(C_local_cast + 0);
    }
  }
}

