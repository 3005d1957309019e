#if defined(_MSC_VER) && !defined(__clang__) && _MSC_VER < 1940
#define _tl_orig_alignas alignas
#define alignas(N) _tl_orig_alignas((N) <= 64 ? (N) : 64)
#include <cuda.h>
#undef alignas
#define alignas _tl_orig_alignas
#endif
#include <tl_templates/cuda/instruction/mma.h>
#include <tl_templates/cuda/copy.h>
#include <tl_templates/cuda/reduce.h>
#include <tl_templates/cuda/scan.h>
#include <tl_templates/cuda/ldsm.h>
#include <tl_templates/cuda/threadblock_swizzle.h>
#include <tl_templates/cuda/debug.h>
#ifdef ENABLE_BF16
#include <tl_templates/cuda/cuda_bf16_fallbacks.cuh>
#endif

extern "C" __global__ void gemm_nt_kernel(const bfloat16_t* __restrict__ A, const bfloat16_t* __restrict__ B, bfloat16_t* __restrict__ C);
extern "C" __global__ void __launch_bounds__(256, 1) gemm_nt_kernel(const bfloat16_t* __restrict__ A, const bfloat16_t* __restrict__ B, bfloat16_t* __restrict__ C) {
#line 8 "examples/gemm_variants.py"
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* A_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* B_shared = ((void*)((char*)buf_dyn_shmem + 8192));
  float C_local[128];
#line 17 "examples/gemm_variants.py"
  #pragma unroll
  for (int i = 0; i < 32; ++i) {
#line 17 "examples/gemm_variants.py"
    float broadcast_var = 0x0p+0f/*0.000000e+00*/;
#line 17 "examples/gemm_variants.py"
    *(float4*)(C_local + (i * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
  }
#line 19 "examples/gemm_variants.py"
  #pragma unroll
  for (int i_1 = 0; i_1 < 2; ++i_1) {
#line 19 "examples/gemm_variants.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)A_shared)[((((i_1 * 2048) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A[((((((int)blockIdx.y) * 131072) + (i_1 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + ((((int)threadIdx.x) & 3) * 8))])));
  }
#line 20 "examples/gemm_variants.py"
  #pragma unroll
  for (int i_2 = 0; i_2 < 4; ++i_2) {
#line 20 "examples/gemm_variants.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)B_shared)[((((i_2 * 2048) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B[((((((int)blockIdx.x) * 262144) + (i_2 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + ((((int)threadIdx.x) & 3) * 8))])));
  }
  tl::cp_async_commit();
#line 18 "examples/gemm_variants.py"
  for (int k = 0; k < 31; ++k) {
#line 18 "examples/gemm_variants.py"
    tl::cp_async_wait<0>();
    __syncthreads();
    {
      bfloat16_t A_local[32];
      bfloat16_t B_local[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
      for (int ki = 0; ki < 2; ++ki) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_3 = 0; i_3 < 4; ++i_3) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[(((((((((int)threadIdx.x) & 63) >> 5) * 2048) + (i_3 * 512)) + ((((int)threadIdx.x) & 15) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8))])), (&(A_local[(i_3 * 8)])));
        }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_4 = 0; i_4 < 4; ++i_4) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4((&(((bfloat16_t*)B_shared)[(((((((((int)threadIdx.x) >> 6) * 2048) + (i_4 * 512)) + (((((int)threadIdx.x) & 31) >> 4) * 256)) + ((((int)threadIdx.x) & 7) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8))])), (&(B_local[(i_4 * 8)])));
        }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int i_5 = 0; i_5 < 4; ++i_5) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          for (int j = 0; j < 4; ++j) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_5 * 32) + (j * 8))), reinterpret_cast<const unsigned*>(A_local + (i_5 * 8)), reinterpret_cast<const unsigned*>(B_local + (j * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_5 * 32) + (j * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local + (i_5 * 8)), reinterpret_cast<const unsigned*>(B_local + ((j * 8) + 4)));
          }
        }
      }
    }
    __syncthreads();
#line 19 "examples/gemm_variants.py"
    #pragma unroll
    for (int i_6 = 0; i_6 < 2; ++i_6) {
#line 19 "examples/gemm_variants.py"
      tl::cp_async_gs<16>((&(((bfloat16_t*)A_shared)[((((i_6 * 2048) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A[((((((((int)blockIdx.y) * 131072) + (i_6 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + (k * 32)) + ((((int)threadIdx.x) & 3) * 8)) + 32)])));
    }
#line 20 "examples/gemm_variants.py"
    #pragma unroll
    for (int i_7 = 0; i_7 < 4; ++i_7) {
#line 20 "examples/gemm_variants.py"
      tl::cp_async_gs<16>((&(((bfloat16_t*)B_shared)[((((i_7 * 2048) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B[((((((((int)blockIdx.x) * 262144) + (i_7 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + (k * 32)) + ((((int)threadIdx.x) & 3) * 8)) + 32)])));
    }
#line 18 "examples/gemm_variants.py"
    tl::cp_async_commit();
  }
  tl::cp_async_wait<0>();
  __syncthreads();
  {
    bfloat16_t A_local_1[32];
    bfloat16_t B_local_1[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_1 = 0; ki_1 < 2; ++ki_1) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_8 = 0; i_8 < 4; ++i_8) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[(((((((((int)threadIdx.x) & 63) >> 5) * 2048) + (i_8 * 512)) + ((((int)threadIdx.x) & 15) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki_1) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8))])), (&(A_local_1[(i_8 * 8)])));
      }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_9 = 0; i_9 < 4; ++i_9) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((bfloat16_t*)B_shared)[(((((((((int)threadIdx.x) >> 6) * 2048) + (i_9 * 512)) + (((((int)threadIdx.x) & 31) >> 4) * 256)) + ((((int)threadIdx.x) & 7) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki_1) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8))])), (&(B_local_1[(i_9 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int i_10 = 0; i_10 < 4; ++i_10) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_1 = 0; j_1 < 4; ++j_1) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_10 * 32) + (j_1 * 8))), reinterpret_cast<const unsigned*>(A_local_1 + (i_10 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + (j_1 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_10 * 32) + (j_1 * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local_1 + (i_10 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + ((j_1 * 8) + 4)));
        }
      }
    }
  }
#line 22 "examples/gemm_variants.py"
  #pragma unroll
  for (int i_11 = 0; i_11 < 64; ++i_11) {
    bfloat16_t C_local_cast[2];
#line 22 "examples/gemm_variants.py"
    uint1 __1;
    float2 v_ = *(float2*)(C_local + (i_11 * 2));
    (reinterpret_cast<__nv_bfloat162*>(&__1))[0] = __float22bfloat162_rn(((float2*)(&v_))[0]);
    *(uint1*)(C_local_cast + 0) = __1;
#line 22 "examples/gemm_variants.py"
    *(uint1*)(C + (((((((((((int)blockIdx.y) * 131072) + (((((int)threadIdx.x) & 63) >> 5) * 65536)) + ((i_11 >> 4) * 16384)) + ((i_11 & 1) * 8192)) + (((((int)threadIdx.x) & 31) >> 2) * 1024)) + (((int)blockIdx.x) * 256)) + ((((int)threadIdx.x) >> 6) * 64)) + (((i_11 & 15) >> 1) * 8)) + ((((int)threadIdx.x) & 3) * 2))) = *(uint1*)(C_local_cast + 0);
  }
}

