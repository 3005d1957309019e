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

extern "C" __global__ void gemm_kernel(const bfloat16_t* __restrict__ A, const bfloat16_t* __restrict__ B, bfloat16_t* __restrict__ C);
extern "C" __global__ void __launch_bounds__(128, 1) gemm_kernel(const bfloat16_t* __restrict__ A, const bfloat16_t* __restrict__ B, bfloat16_t* __restrict__ C) {
#line 12 "examples/gemm.py"
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* A_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* B_shared = ((void*)((char*)buf_dyn_shmem + 65536));
  float C_local[128];
#line 21 "examples/gemm.py"
  #pragma unroll
  for (int i = 0; i < 32; ++i) {
#line 21 "examples/gemm.py"
    float broadcast_var = 0x0p+0f/*0.000000e+00*/;
#line 21 "examples/gemm.py"
    *(float4*)(C_local + (i * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
  }
#line 23 "examples/gemm.py"
  #pragma unroll
  for (int i_1 = 0; i_1 < 8; ++i_1) {
#line 23 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)A_shared)[(((((i_1 * 1024) + ((((int)threadIdx.x) >> 3) * 64)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A[((((((int)blockIdx.y) * 131072) + (i_1 * 16384)) + ((((int)threadIdx.x) >> 3) * 1024)) + ((((int)threadIdx.x) & 7) * 8))])));
  }
#line 24 "examples/gemm.py"
  #pragma unroll
  for (int i_2 = 0; i_2 < 8; ++i_2) {
#line 24 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)B_shared)[((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_2 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B[((((i_2 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.x) * 128)) + ((((int)threadIdx.x) & 15) * 8))])));
  }
  tl::cp_async_commit();
#line 23 "examples/gemm.py"
  #pragma unroll
  for (int i_3 = 0; i_3 < 8; ++i_3) {
#line 23 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)A_shared)[((((((i_3 * 1024) + ((((int)threadIdx.x) >> 3) * 64)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(A[(((((((int)blockIdx.y) * 131072) + (i_3 * 16384)) + ((((int)threadIdx.x) >> 3) * 1024)) + ((((int)threadIdx.x) & 7) * 8)) + 64)])));
  }
#line 24 "examples/gemm.py"
  #pragma unroll
  for (int i_4 = 0; i_4 < 8; ++i_4) {
#line 24 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)B_shared)[(((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_4 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(B[(((((i_4 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.x) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 65536)])));
  }
  tl::cp_async_commit();
#line 23 "examples/gemm.py"
  #pragma unroll
  for (int i_5 = 0; i_5 < 8; ++i_5) {
#line 23 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)A_shared)[((((((i_5 * 1024) + ((((int)threadIdx.x) >> 3) * 64)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(A[(((((((int)blockIdx.y) * 131072) + (i_5 * 16384)) + ((((int)threadIdx.x) >> 3) * 1024)) + ((((int)threadIdx.x) & 7) * 8)) + 128)])));
  }
#line 24 "examples/gemm.py"
  #pragma unroll
  for (int i_6 = 0; i_6 < 8; ++i_6) {
#line 24 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((bfloat16_t*)B_shared)[(((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_6 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(B[(((((i_6 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.x) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 131072)])));
  }
  tl::cp_async_commit();
#line 22 "examples/gemm.py"
  for (int k = 0; k < 13; ++k) {
    __syncthreads();
#line 23 "examples/gemm.py"
    #pragma unroll
    for (int i_7 = 0; i_7 < 8; ++i_7) {
#line 23 "examples/gemm.py"
      tl::cp_async_gs<16>((&(((bfloat16_t*)A_shared)[((((((((k + 3) & 3) * 8192) + (i_7 * 1024)) + ((((int)threadIdx.x) >> 3) * 64)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A[((((((((int)blockIdx.y) * 131072) + (i_7 * 16384)) + ((((int)threadIdx.x) >> 3) * 1024)) + (k * 64)) + ((((int)threadIdx.x) & 7) * 8)) + 192)])));
    }
#line 24 "examples/gemm.py"
    #pragma unroll
    for (int i_8 = 0; i_8 < 8; ++i_8) {
#line 24 "examples/gemm.py"
      tl::cp_async_gs<16>((&(((bfloat16_t*)B_shared)[(((((((((k + 3) & 3) * 8192) + (((((int)threadIdx.x) & 15) >> 3) * 4096)) + (i_8 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B[((((((k * 65536) + (i_8 * 8192)) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.x) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 196608)])));
    }
#line 22 "examples/gemm.py"
    tl::cp_async_commit();
#line 22 "examples/gemm.py"
    tl::cp_async_wait<3>();
    __syncthreads();
    {
      bfloat16_t A_local[32];
      bfloat16_t B_local[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
      for (int ki = 0; ki < 4; ++ki) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_9 = 0; i_9 < 4; ++i_9) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[((((((((k & 3) * 8192) + (((((int)threadIdx.x) & 63) >> 5) * 4096)) + (i_9 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (ki >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local[(i_9 * 8)])));
        }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_10 = 0; i_10 < 4; ++i_10) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4_trans((&(((bfloat16_t*)B_shared)[((((((((k & 3) * 8192) + ((((int)threadIdx.x) >> 6) * 4096)) + (ki * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_10 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_10 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local[(i_10 * 8)])));
        }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int i_11 = 0; i_11 < 4; ++i_11) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          for (int j = 0; j < 4; ++j) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_11 * 32) + (j * 8))), reinterpret_cast<const unsigned*>(A_local + (i_11 * 8)), reinterpret_cast<const unsigned*>(B_local + (j * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_11 * 32) + (j * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local + (i_11 * 8)), reinterpret_cast<const unsigned*>(B_local + ((j * 8) + 4)));
          }
        }
      }
    }
  }
  tl::cp_async_wait<2>();
  __syncthreads();
  {
    bfloat16_t A_local_1[32];
    bfloat16_t B_local_1[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_1 = 0; ki_1 < 4; ++ki_1) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_12 = 0; i_12 < 4; ++i_12) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[(((((((((((int)threadIdx.x) & 63) >> 5) * 4096) + (i_12 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (ki_1 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_1 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(A_local_1[(i_12 * 8)])));
      }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_13 = 0; i_13 < 4; ++i_13) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((bfloat16_t*)B_shared)[((((((((((int)threadIdx.x) >> 6) * 4096) + (ki_1 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_13 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_13 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(B_local_1[(i_13 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int i_14 = 0; i_14 < 4; ++i_14) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_1 = 0; j_1 < 4; ++j_1) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_14 * 32) + (j_1 * 8))), reinterpret_cast<const unsigned*>(A_local_1 + (i_14 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + (j_1 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_14 * 32) + (j_1 * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local_1 + (i_14 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + ((j_1 * 8) + 4)));
        }
      }
    }
  }
  tl::cp_async_wait<1>();
  __syncthreads();
  {
    bfloat16_t A_local_2[32];
    bfloat16_t B_local_2[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_2 = 0; ki_2 < 4; ++ki_2) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_15 = 0; i_15 < 4; ++i_15) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[(((((((((((int)threadIdx.x) & 63) >> 5) * 4096) + (i_15 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (ki_2 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_2 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(A_local_2[(i_15 * 8)])));
      }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_16 = 0; i_16 < 4; ++i_16) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((bfloat16_t*)B_shared)[((((((((((int)threadIdx.x) >> 6) * 4096) + (ki_2 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_16 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_16 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(B_local_2[(i_16 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int i_17 = 0; i_17 < 4; ++i_17) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_2 = 0; j_2 < 4; ++j_2) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_17 * 32) + (j_2 * 8))), reinterpret_cast<const unsigned*>(A_local_2 + (i_17 * 8)), reinterpret_cast<const unsigned*>(B_local_2 + (j_2 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_17 * 32) + (j_2 * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local_2 + (i_17 * 8)), reinterpret_cast<const unsigned*>(B_local_2 + ((j_2 * 8) + 4)));
        }
      }
    }
  }
  tl::cp_async_wait<0>();
  __syncthreads();
  {
    bfloat16_t A_local_3[32];
    bfloat16_t B_local_3[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_3 = 0; ki_3 < 4; ++ki_3) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_18 = 0; i_18 < 4; ++i_18) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((bfloat16_t*)A_shared)[(((((((((((int)threadIdx.x) & 63) >> 5) * 4096) + (i_18 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (ki_3 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_3 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 24576)])), (&(A_local_3[(i_18 * 8)])));
      }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_19 = 0; i_19 < 4; ++i_19) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((bfloat16_t*)B_shared)[((((((((((int)threadIdx.x) >> 6) * 4096) + (ki_3 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_19 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_19 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 24576)])), (&(B_local_3[(i_19 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int i_20 = 0; i_20 < 4; ++i_20) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_3 = 0; j_3 < 4; ++j_3) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_20 * 32) + (j_3 * 8))), reinterpret_cast<const unsigned*>(A_local_3 + (i_20 * 8)), reinterpret_cast<const unsigned*>(B_local_3 + (j_3 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kBFloat16, tl::DataType::kBFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_20 * 32) + (j_3 * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local_3 + (i_20 * 8)), reinterpret_cast<const unsigned*>(B_local_3 + ((j_3 * 8) + 4)));
        }
      }
    }
  }
#line 26 "examples/gemm.py"
  #pragma unroll
  for (int i_21 = 0; i_21 < 64; ++i_21) {
    bfloat16_t C_local_cast[2];
#line 26 "examples/gemm.py"
    uint1 __1;
    float2 v_ = *(float2*)(C_local + (i_21 * 2));
    (reinterpret_cast<__nv_bfloat162*>(&__1))[0] = __float22bfloat162_rn(((float2*)(&v_))[0]);
    *(uint1*)(C_local_cast + 0) = __1;
#line 26 "examples/gemm.py"
    *(uint1*)(C + (((((((((((int)blockIdx.y) * 131072) + (((((int)threadIdx.x) & 63) >> 5) * 65536)) + ((i_21 >> 4) * 16384)) + ((i_21 & 1) * 8192)) + (((((int)threadIdx.x) & 31) >> 2) * 1024)) + (((int)blockIdx.x) * 128)) + ((((int)threadIdx.x) >> 6) * 64)) + (((i_21 & 15) >> 1) * 8)) + ((((int)threadIdx.x) & 3) * 2))) = *(uint1*)(C_local_cast + 0);
  }
}

