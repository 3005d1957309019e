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

extern "C" __global__ void gemm_kernel(const half_t* __restrict__ A, const half_t* __restrict__ B, half_t* __restrict__ C);
extern "C" __global__ void __launch_bounds__(256, 1) gemm_kernel(const half_t* __restrict__ A, const half_t* __restrict__ B, half_t* __restrict__ C) {
#line 12 "examples/gemm.py"
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* A_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* B_shared = ((void*)((char*)buf_dyn_shmem + 24576));
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
  for (int i_1 = 0; i_1 < 2; ++i_1) {
#line 23 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((half_t*)A_shared)[((((i_1 * 2048) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A[((((((int)blockIdx.y) * 131072) + (i_1 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + ((((int)threadIdx.x) & 3) * 8))])));
  }
#line 24 "examples/gemm.py"
  #pragma unroll
  for (int i_2 = 0; i_2 < 4; ++i_2) {
#line 24 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((half_t*)B_shared)[((((((((((int)threadIdx.x) & 31) >> 3) * 2048) + (i_2 * 512)) + ((((int)threadIdx.x) >> 5) * 64)) + ((((((int)threadIdx.x) >> 7) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 127) >> 6) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 63) >> 5) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B[((((i_2 * 8192) + ((((int)threadIdx.x) >> 5) * 1024)) + (((int)blockIdx.x) * 256)) + ((((int)threadIdx.x) & 31) * 8))])));
  }
  tl::cp_async_commit();
#line 23 "examples/gemm.py"
  #pragma unroll
  for (int i_3 = 0; i_3 < 2; ++i_3) {
#line 23 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((half_t*)A_shared)[(((((i_3 * 2048) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 4096)])), (&(A[(((((((int)blockIdx.y) * 131072) + (i_3 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + ((((int)threadIdx.x) & 3) * 8)) + 32)])));
  }
#line 24 "examples/gemm.py"
  #pragma unroll
  for (int i_4 = 0; i_4 < 4; ++i_4) {
#line 24 "examples/gemm.py"
    tl::cp_async_gs<16>((&(((half_t*)B_shared)[(((((((((((int)threadIdx.x) & 31) >> 3) * 2048) + (i_4 * 512)) + ((((int)threadIdx.x) >> 5) * 64)) + ((((((int)threadIdx.x) >> 7) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 127) >> 6) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 63) >> 5) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(B[(((((i_4 * 8192) + ((((int)threadIdx.x) >> 5) * 1024)) + (((int)blockIdx.x) * 256)) + ((((int)threadIdx.x) & 31) * 8)) + 32768)])));
  }
  tl::cp_async_commit();
#line 22 "examples/gemm.py"
  for (int k = 0; k < 30; ++k) {
    __syncthreads();
#line 23 "examples/gemm.py"
    #pragma unroll
    for (int i_5 = 0; i_5 < 2; ++i_5) {
#line 23 "examples/gemm.py"
      tl::cp_async_gs<16>((&(((half_t*)A_shared)[(((((((k + 2) % 3) * 4096) + (i_5 * 2048)) + ((((int)threadIdx.x) >> 2) * 32)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A[((((((((int)blockIdx.y) * 131072) + (i_5 * 65536)) + ((((int)threadIdx.x) >> 2) * 1024)) + (k * 32)) + ((((int)threadIdx.x) & 3) * 8)) + 64)])));
    }
#line 24 "examples/gemm.py"
    #pragma unroll
    for (int i_6 = 0; i_6 < 4; ++i_6) {
#line 24 "examples/gemm.py"
      tl::cp_async_gs<16>((&(((half_t*)B_shared)[(((((((((k + 2) % 3) * 8192) + (((((int)threadIdx.x) & 31) >> 3) * 2048)) + (i_6 * 512)) + ((((int)threadIdx.x) >> 5) * 64)) + ((((((int)threadIdx.x) >> 7) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 127) >> 6) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 63) >> 5) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B[((((((k * 32768) + (i_6 * 8192)) + ((((int)threadIdx.x) >> 5) * 1024)) + (((int)blockIdx.x) * 256)) + ((((int)threadIdx.x) & 31) * 8)) + 65536)])));
    }
#line 22 "examples/gemm.py"
    tl::cp_async_commit();
#line 22 "examples/gemm.py"
    tl::cp_async_wait<2>();
    __syncthreads();
    {
      half_t A_local[32];
      half_t B_local[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
      for (int ki = 0; ki < 2; ++ki) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_7 = 0; i_7 < 4; ++i_7) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4((&(((half_t*)A_shared)[(((((((k % 3) * 4096) + (((((int)threadIdx.x) & 63) >> 5) * 2048)) + (i_7 * 512)) + ((((int)threadIdx.x) & 15) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8))])), (&(A_local[(i_7 * 8)])));
        }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_8 = 0; i_8 < 4; ++i_8) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4_trans((&(((half_t*)B_shared)[((((((((k % 3) * 8192) + ((((int)threadIdx.x) >> 6) * 2048)) + (ki * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_8 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_8 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local[(i_8 * 8)])));
        }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int i_9 = 0; i_9 < 4; ++i_9) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          for (int j = 0; j < 4; ++j) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_9 * 32) + (j * 8))), reinterpret_cast<const unsigned*>(A_local + (i_9 * 8)), reinterpret_cast<const unsigned*>(B_local + (j * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_9 * 32) + (j * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local + (i_9 * 8)), reinterpret_cast<const unsigned*>(B_local + ((j * 8) + 4)));
          }
        }
      }
    }
  }
  tl::cp_async_wait<1>();
  __syncthreads();
  {
    half_t A_local_1[32];
    half_t B_local_1[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_1 = 0; ki_1 < 2; ++ki_1) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_10 = 0; i_10 < 4; ++i_10) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((half_t*)A_shared)[(((((((((int)threadIdx.x) & 63) >> 5) * 2048) + (i_10 * 512)) + ((((int)threadIdx.x) & 15) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki_1) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8))])), (&(A_local_1[(i_10 * 8)])));
      }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_11 = 0; i_11 < 4; ++i_11) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((half_t*)B_shared)[(((((((((int)threadIdx.x) >> 6) * 2048) + (ki_1 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_11 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_11 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local_1[(i_11 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int i_12 = 0; i_12 < 4; ++i_12) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_1 = 0; j_1 < 4; ++j_1) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_12 * 32) + (j_1 * 8))), reinterpret_cast<const unsigned*>(A_local_1 + (i_12 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + (j_1 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_12 * 32) + (j_1 * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local_1 + (i_12 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + ((j_1 * 8) + 4)));
        }
      }
    }
  }
  tl::cp_async_wait<0>();
  __syncthreads();
  {
    half_t A_local_2[32];
    half_t B_local_2[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_2 = 0; ki_2 < 2; ++ki_2) {
#line 367 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_13 = 0; i_13 < 4; ++i_13) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((half_t*)A_shared)[((((((((((int)threadIdx.x) & 63) >> 5) * 2048) + (i_13 * 512)) + ((((int)threadIdx.x) & 15) * 32)) + (((((((int)threadIdx.x) & 7) >> 2) + ki_2) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 8)) + 4096)])), (&(A_local_2[(i_13 * 8)])));
      }
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_14 = 0; i_14 < 4; ++i_14) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((half_t*)B_shared)[((((((((((int)threadIdx.x) >> 6) * 2048) + (ki_2 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + (i_14 >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_14 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(B_local_2[(i_14 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int i_15 = 0; i_15 < 4; ++i_15) {
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_2 = 0; j_2 < 4; ++j_2) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + ((i_15 * 32) + (j_2 * 8))), reinterpret_cast<const unsigned*>(A_local_2 + (i_15 * 8)), reinterpret_cast<const unsigned*>(B_local_2 + (j_2 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(C_local + (((i_15 * 32) + (j_2 * 8)) + 4)), reinterpret_cast<const unsigned*>(A_local_2 + (i_15 * 8)), reinterpret_cast<const unsigned*>(B_local_2 + ((j_2 * 8) + 4)));
        }
      }
    }
  }
#line 26 "examples/gemm.py"
  #pragma unroll
  for (int i_16 = 0; i_16 < 64; ++i_16) {
    half_t C_local_cast[2];
#line 26 "examples/gemm.py"
    uint1 __1;
    float2 v_ = *(float2*)(C_local + (i_16 * 2));
    ((half2*)(&__1))[0] = __float22half2_rn(((float2*)(&v_))[0]);
    *(uint1*)(C_local_cast + 0) = __1;
#line 26 "examples/gemm.py"
    *(uint1*)(C + (((((((((((int)blockIdx.y) * 131072) + (((((int)threadIdx.x) & 63) >> 5) * 65536)) + ((i_16 >> 4) * 16384)) + ((i_16 & 1) * 8192)) + (((((int)threadIdx.x) & 31) >> 2) * 1024)) + (((int)blockIdx.x) * 256)) + ((((int)threadIdx.x) >> 6) * 64)) + (((i_16 & 15) >> 1) * 8)) + ((((int)threadIdx.x) & 3) * 2))) = *(uint1*)(C_local_cast + 0);
  }
}

