#if defined(_MSC_VER) && !defined(__clang__) && _MSC_VER < 1940
#define _tl_orig_alignas alignas
#define alignas(N) _tl_orig_alignas((N) <= 64 ? (N) : 64)
#include <cuda.h>
#undef alignas
#define alignas _tl_orig_alignas
#endif
#include <tl_templates/cuda/instruction/mma.h>
#include <tl_templates/cuda/copy.h>
#include <math_constants.h>
#include <tl_templates/cuda/reduce.h>
#include <tl_templates/cuda/scan.h>
#include <tl_templates/cuda/ldsm.h>
#include <tl_templates/cuda/threadblock_swizzle.h>
#include <tl_templates/cuda/debug.h>
#ifdef ENABLE_BF16
#include <tl_templates/cuda/cuda_bf16_fallbacks.cuh>
#endif

extern "C" __global__ void flash_fwd_kernel(const half_t* __restrict__ K, half_t* __restrict__ Output, const half_t* __restrict__ Q, const half_t* __restrict__ V);
extern "C" __global__ void __launch_bounds__(128, 1) flash_fwd_kernel(const half_t* __restrict__ K, half_t* __restrict__ Output, const half_t* __restrict__ Q, const half_t* __restrict__ V) {
#line 13 "examples/flash_attention.py"
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* O_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* Q_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* K_shared = ((void*)((char*)buf_dyn_shmem + 16384));
  void* V_shared = ((void*)((char*)buf_dyn_shmem + 65536));
  float acc_o[64];
  float logsum[2];
  float scores_max[2];
  float acc_s[32];
  float scores_max_prev[2];
  float scores_scale[2];
  half_t acc_s_cast[32];
  float scores_sum[2];
  float scores_max_clear[2];
  float scores_max_clear_1[2];
  float scores_max_clear_2[2];
  float scores_max_clear_3[2];
#line 33 "examples/flash_attention.py"
  #pragma unroll
  for (int i = 0; i < 8; ++i) {
#line 33 "examples/flash_attention.py"
    *(uint4*)(((half_t*)Q_shared) + ((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))) = *(uint4*)(Q + (((((((int)blockIdx.x) * 65536) + (i * 8192)) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)));
  }
#line 34 "examples/flash_attention.py"
  #pragma unroll
  for (int i_1 = 0; i_1 < 16; ++i_1) {
#line 34 "examples/flash_attention.py"
    float broadcast_var = 0x0p+0f/*0.000000e+00*/;
#line 34 "examples/flash_attention.py"
    *(float4*)(acc_o + (i_1 * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
  }
#line 35 "examples/flash_attention.py"
  float broadcast_var_1 = 0x0p+0f/*0.000000e+00*/;
#line 35 "examples/flash_attention.py"
  *(float2*)(logsum + 0) = make_float2(broadcast_var_1, broadcast_var_1);
#line 36 "examples/flash_attention.py"
  float broadcast_var_2 = -CUDART_INF_F;
#line 36 "examples/flash_attention.py"
  *(float2*)(scores_max + 0) = make_float2(broadcast_var_2, broadcast_var_2);
  __syncthreads();
#line 38 "examples/flash_attention.py"
  #pragma unroll
  for (int i_2 = 0; i_2 < 8; ++i_2) {
#line 38 "examples/flash_attention.py"
    tl::cp_async_gs<16>((&(((half_t*)K_shared)[((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_2 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(K[((((i_2 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8))])));
  }
  tl::cp_async_commit();
#line 50 "examples/flash_attention.py"
  #pragma unroll
  for (int i_3 = 0; i_3 < 8; ++i_3) {
#line 50 "examples/flash_attention.py"
    tl::cp_async_gs<16>((&(((half_t*)V_shared)[((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_3 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(V[((((i_3 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8))])));
  }
  tl::cp_async_commit();
#line 38 "examples/flash_attention.py"
  #pragma unroll
  for (int i_4 = 0; i_4 < 8; ++i_4) {
#line 38 "examples/flash_attention.py"
    tl::cp_async_gs<16>((&(((half_t*)K_shared)[(((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_4 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(K[(((((i_4 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 65536)])));
  }
  tl::cp_async_commit();
#line 50 "examples/flash_attention.py"
  #pragma unroll
  for (int i_5 = 0; i_5 < 8; ++i_5) {
#line 50 "examples/flash_attention.py"
    tl::cp_async_gs<16>((&(((half_t*)V_shared)[(((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_5 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(V[(((((i_5 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 65536)])));
  }
  tl::cp_async_commit();
#line 38 "examples/flash_attention.py"
  #pragma unroll
  for (int i_6 = 0; i_6 < 8; ++i_6) {
#line 38 "examples/flash_attention.py"
    tl::cp_async_gs<16>((&(((half_t*)K_shared)[(((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_6 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(K[(((((i_6 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 131072)])));
  }
  tl::cp_async_commit();
#line 50 "examples/flash_attention.py"
  #pragma unroll
  for (int i_7 = 0; i_7 < 8; ++i_7) {
#line 50 "examples/flash_attention.py"
    tl::cp_async_gs<16>((&(((half_t*)V_shared)[(((((((((((int)threadIdx.x) & 15) >> 3) * 4096) + (i_7 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(V[(((((i_7 * 8192) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 131072)])));
  }
  tl::cp_async_commit();
#line 37 "examples/flash_attention.py"
  for (int k = 0; k < 13; ++k) {
#line 39 "examples/flash_attention.py"
    #pragma unroll
    for (int i_8 = 0; i_8 < 8; ++i_8) {
#line 39 "examples/flash_attention.py"
      float broadcast_var_3 = 0x0p+0f/*0.000000e+00*/;
#line 39 "examples/flash_attention.py"
      *(float4*)(acc_s + (i_8 * 4)) = make_float4(broadcast_var_3, broadcast_var_3, broadcast_var_3, broadcast_var_3);
    }
#line 37 "examples/flash_attention.py"
    tl::cp_async_wait<5>();
    __syncthreads();
    {
      half_t A_local[8];
      half_t B_local[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
      for (int ki = 0; ki < 8; ++ki) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((half_t*)Q_shared)[(((((((ki >> 2) * 4096) + ((((int)threadIdx.x) >> 5) * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local[0])));
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_9 = 0; i_9 < 4; ++i_9) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4((&(((half_t*)K_shared)[(((((((((k % 3) * 8192) + ((ki >> 2) * 4096)) + (i_9 * 1024)) + (((((int)threadIdx.x) & 31) >> 4) * 512)) + ((((int)threadIdx.x) & 7) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local[(i_9 * 8)])));
        }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j = 0; j < 4; ++j) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + (j * 8)), reinterpret_cast<const unsigned*>(A_local + 0), reinterpret_cast<const unsigned*>(B_local + (j * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + ((j * 8) + 4)), reinterpret_cast<const unsigned*>(A_local + 0), reinterpret_cast<const unsigned*>(B_local + ((j * 8) + 4)));
        }
      }
    }
    __syncthreads();
#line 38 "examples/flash_attention.py"
    #pragma unroll
    for (int i_10 = 0; i_10 < 8; ++i_10) {
#line 38 "examples/flash_attention.py"
      tl::cp_async_gs<16>((&(((half_t*)K_shared)[((((((((k % 3) * 8192) + (((((int)threadIdx.x) & 15) >> 3) * 4096)) + (i_10 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(K[((((((k * 65536) + (i_10 * 8192)) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 196608)])));
    }
#line 37 "examples/flash_attention.py"
    tl::cp_async_commit();
#line 41 "examples/flash_attention.py"
    *(float2*)(scores_max_prev + 0) = *(float2*)(scores_max + 0);
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int i_11 = 0; i_11 < 2; ++i_11) {
#line 160 "tilelang/language/reduce_op.py"
      scores_max_clear[i_11] = -CUDART_INF_F;
#line 160 "tilelang/language/reduce_op.py"
      #pragma unroll
      for (int rv = 0; rv < 16; ++rv) {
#line 160 "tilelang/language/reduce_op.py"
        scores_max_clear[i_11] = max(scores_max_clear[i_11], acc_s[((((rv & 7) * 4) + (i_11 * 2)) + (rv >> 3))]);
      }
#line 160 "tilelang/language/reduce_op.py"
      scores_max_clear[i_11] = tl::AllReduce<tl::MaxOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_max_clear[i_11]);
#line 160 "tilelang/language/reduce_op.py"
      scores_max[i_11] = max(scores_max[i_11], scores_max_clear[i_11]);
    }
#line 44 "examples/flash_attention.py"
    float broadcast_var_4 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
    float broadcast_var_5 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
    float2 __1;
    float2 __2;
      float2 __3;
        float2 v_ = *(float2*)(scores_max_prev + 0);
        float2 v__1 = make_float2(broadcast_var_4, broadcast_var_4);
        __3.x = (v_.x*v__1.x);
        __3.y = (v_.y*v__1.y);
      float2 __4;
        float2 v__2 = *(float2*)(scores_max + 0);
        float2 v__3 = make_float2(broadcast_var_5, broadcast_var_5);
        __4.x = (v__2.x*v__3.x);
        __4.y = (v__2.y*v__3.y);
      __2.x = (__3.x-__4.x);
      __2.y = (__3.y-__4.y);
    __1.x = exp2f(__2.x);
    __1.y = exp2f(__2.y);
    *(float2*)(scores_scale + 0) = __1;
#line 45 "examples/flash_attention.py"
    #pragma unroll
    for (int i_12 = 0; i_12 < 32; ++i_12) {
#line 46 "examples/flash_attention.py"
      float2 __5;
        float2 v__4 = *(float2*)(acc_o + (i_12 * 2));
        float2 v__5 = make_float2(scores_scale[(i_12 & 1)], scores_scale[(i_12 & 1)]);
        __5.x = (v__4.x*v__5.x);
        __5.y = (v__4.y*v__5.y);
      *(float2*)(acc_o + (i_12 * 2)) = __5;
    }
#line 47 "examples/flash_attention.py"
    #pragma unroll
    for (int i_13 = 0; i_13 < 16; ++i_13) {
#line 48 "examples/flash_attention.py"
      float broadcast_var_6 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 48 "examples/flash_attention.py"
      float2 __6;
      float2 __7;
        float2 __8;
          float2 v__6 = *(float2*)(acc_s + (i_13 * 2));
          float2 v__7 = make_float2(broadcast_var_6, broadcast_var_6);
          __8.x = (v__6.x*v__7.x);
          __8.y = (v__6.y*v__7.y);
        float2 v__8 = make_float2((scores_max[(i_13 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/), (scores_max[(i_13 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/));
        __7.x = (__8.x-v__8.x);
        __7.y = (__8.y-v__8.y);
      __6.x = exp2f(__7.x);
      __6.y = exp2f(__7.y);
      *(float2*)(acc_s + (i_13 * 2)) = __6;
    }
#line 49 "examples/flash_attention.py"
    #pragma unroll
    for (int i_14 = 0; i_14 < 8; ++i_14) {
#line 49 "examples/flash_attention.py"
      uint2 __9;
      float4 v__9 = *(float4*)(acc_s + (i_14 * 4));
      ((half2*)(&__9))[0] = __float22half2_rn(((float2*)(&v__9))[0]);
      ((half2*)(&__9))[1] = __float22half2_rn(((float2*)(&v__9))[1]);
      *(uint2*)(acc_s_cast + (i_14 * 4)) = __9;
    }
#line 37 "examples/flash_attention.py"
    tl::cp_async_wait<5>();
    __syncthreads();
    {
      half_t B_local_1[64];
#line 186 "tilelang/cuda/op/gemm/gemm_mma.py"
      for (int ki_1 = 0; ki_1 < 4; ++ki_1) {
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        #pragma unroll
        for (int i_15 = 0; i_15 < 8; ++i_15) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4_trans((&(((half_t*)V_shared)[((((((((k % 3) * 8192) + ((i_15 >> 2) * 4096)) + (ki_1 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((i_15 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_15 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local_1[(i_15 * 8)])));
        }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        for (int j_1 = 0; j_1 < 8; ++j_1) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + (j_1 * 8)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_1 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + (j_1 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + ((j_1 * 8) + 4)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_1 * 8)), reinterpret_cast<const unsigned*>(B_local_1 + ((j_1 * 8) + 4)));
        }
      }
    }
    __syncthreads();
#line 50 "examples/flash_attention.py"
    #pragma unroll
    for (int i_16 = 0; i_16 < 8; ++i_16) {
#line 50 "examples/flash_attention.py"
      tl::cp_async_gs<16>((&(((half_t*)V_shared)[((((((((k % 3) * 8192) + (((((int)threadIdx.x) & 15) >> 3) * 4096)) + (i_16 * 512)) + ((((int)threadIdx.x) >> 4) * 64)) + ((((((int)threadIdx.x) >> 6) + ((((int)threadIdx.x) & 7) >> 2)) & 1) * 32)) + (((((((int)threadIdx.x) & 63) >> 5) + ((((int)threadIdx.x) & 3) >> 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(V[((((((k * 65536) + (i_16 * 8192)) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8)) + 196608)])));
    }
#line 37 "examples/flash_attention.py"
    tl::cp_async_commit();
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int i_17 = 0; i_17 < 2; ++i_17) {
#line 160 "tilelang/language/reduce_op.py"
      scores_sum[i_17] = 0x0p+0f/*0.000000e+00*/;
#line 160 "tilelang/language/reduce_op.py"
      #pragma unroll
      for (int rv_1 = 0; rv_1 < 16; ++rv_1) {
#line 160 "tilelang/language/reduce_op.py"
        scores_sum[i_17] = (scores_sum[i_17] + acc_s[((((rv_1 & 7) * 4) + (i_17 * 2)) + (rv_1 >> 3))]);
      }
#line 160 "tilelang/language/reduce_op.py"
      scores_sum[i_17] = tl::AllReduce<tl::SumOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_sum[i_17]);
    }
#line 54 "examples/flash_attention.py"
    float2 __10;
      float2 __11;
        float2 v__10 = *(float2*)(logsum + 0);
        float2 v__11 = *(float2*)(scores_scale + 0);
        __11.x = (v__10.x*v__11.x);
        __11.y = (v__10.y*v__11.y);
      float2 v__12 = *(float2*)(scores_sum + 0);
      __10.x = (__11.x+v__12.x);
      __10.y = (__11.y+v__12.y);
    *(float2*)(logsum + 0) = __10;
  }
#line 39 "examples/flash_attention.py"
  #pragma unroll
  for (int i_18 = 0; i_18 < 8; ++i_18) {
#line 39 "examples/flash_attention.py"
    float broadcast_var_7 = 0x0p+0f/*0.000000e+00*/;
#line 39 "examples/flash_attention.py"
    *(float4*)(acc_s + (i_18 * 4)) = make_float4(broadcast_var_7, broadcast_var_7, broadcast_var_7, broadcast_var_7);
  }
  tl::cp_async_wait<5>();
  __syncthreads();
  {
    half_t A_local_1[8];
    half_t B_local_2[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_2 = 0; ki_2 < 8; ++ki_2) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      tl::ptx_ldmatrix_x4((&(((half_t*)Q_shared)[(((((((ki_2 >> 2) * 4096) + ((((int)threadIdx.x) >> 5) * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki_2 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_2 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local_1[0])));
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_19 = 0; i_19 < 4; ++i_19) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((half_t*)K_shared)[(((((((((ki_2 >> 2) * 4096) + (i_19 * 1024)) + (((((int)threadIdx.x) & 31) >> 4) * 512)) + ((((int)threadIdx.x) & 7) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki_2 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_2 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(B_local_2[(i_19 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int j_2 = 0; j_2 < 4; ++j_2) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + (j_2 * 8)), reinterpret_cast<const unsigned*>(A_local_1 + 0), reinterpret_cast<const unsigned*>(B_local_2 + (j_2 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + ((j_2 * 8) + 4)), reinterpret_cast<const unsigned*>(A_local_1 + 0), reinterpret_cast<const unsigned*>(B_local_2 + ((j_2 * 8) + 4)));
      }
    }
  }
#line 41 "examples/flash_attention.py"
  *(float2*)(scores_max_prev + 0) = *(float2*)(scores_max + 0);
#line 160 "tilelang/language/reduce_op.py"
  #pragma unroll
  for (int i_20 = 0; i_20 < 2; ++i_20) {
#line 160 "tilelang/language/reduce_op.py"
    scores_max_clear_1[i_20] = -CUDART_INF_F;
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int rv_2 = 0; rv_2 < 16; ++rv_2) {
#line 160 "tilelang/language/reduce_op.py"
      scores_max_clear_1[i_20] = max(scores_max_clear_1[i_20], acc_s[((((rv_2 & 7) * 4) + (i_20 * 2)) + (rv_2 >> 3))]);
    }
#line 160 "tilelang/language/reduce_op.py"
    scores_max_clear_1[i_20] = tl::AllReduce<tl::MaxOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_max_clear_1[i_20]);
#line 160 "tilelang/language/reduce_op.py"
    scores_max[i_20] = max(scores_max[i_20], scores_max_clear_1[i_20]);
  }
#line 44 "examples/flash_attention.py"
  float broadcast_var_8 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
  float broadcast_var_9 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
  float2 __12;
  float2 __13;
    float2 __14;
      float2 v__13 = *(float2*)(scores_max_prev + 0);
      float2 v__14 = make_float2(broadcast_var_8, broadcast_var_8);
      __14.x = (v__13.x*v__14.x);
      __14.y = (v__13.y*v__14.y);
    float2 __15;
      float2 v__15 = *(float2*)(scores_max + 0);
      float2 v__16 = make_float2(broadcast_var_9, broadcast_var_9);
      __15.x = (v__15.x*v__16.x);
      __15.y = (v__15.y*v__16.y);
    __13.x = (__14.x-__15.x);
    __13.y = (__14.y-__15.y);
  __12.x = exp2f(__13.x);
  __12.y = exp2f(__13.y);
  *(float2*)(scores_scale + 0) = __12;
#line 45 "examples/flash_attention.py"
  #pragma unroll
  for (int i_21 = 0; i_21 < 32; ++i_21) {
#line 46 "examples/flash_attention.py"
    float2 __16;
      float2 v__17 = *(float2*)(acc_o + (i_21 * 2));
      float2 v__18 = make_float2(scores_scale[(i_21 & 1)], scores_scale[(i_21 & 1)]);
      __16.x = (v__17.x*v__18.x);
      __16.y = (v__17.y*v__18.y);
    *(float2*)(acc_o + (i_21 * 2)) = __16;
  }
#line 47 "examples/flash_attention.py"
  #pragma unroll
  for (int i_22 = 0; i_22 < 16; ++i_22) {
#line 48 "examples/flash_attention.py"
    float broadcast_var_10 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 48 "examples/flash_attention.py"
    float2 __17;
    float2 __18;
      float2 __19;
        float2 v__19 = *(float2*)(acc_s + (i_22 * 2));
        float2 v__20 = make_float2(broadcast_var_10, broadcast_var_10);
        __19.x = (v__19.x*v__20.x);
        __19.y = (v__19.y*v__20.y);
      float2 v__21 = make_float2((scores_max[(i_22 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/), (scores_max[(i_22 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/));
      __18.x = (__19.x-v__21.x);
      __18.y = (__19.y-v__21.y);
    __17.x = exp2f(__18.x);
    __17.y = exp2f(__18.y);
    *(float2*)(acc_s + (i_22 * 2)) = __17;
  }
#line 49 "examples/flash_attention.py"
  #pragma unroll
  for (int i_23 = 0; i_23 < 8; ++i_23) {
#line 49 "examples/flash_attention.py"
    uint2 __20;
    float4 v__22 = *(float4*)(acc_s + (i_23 * 4));
    ((half2*)(&__20))[0] = __float22half2_rn(((float2*)(&v__22))[0]);
    ((half2*)(&__20))[1] = __float22half2_rn(((float2*)(&v__22))[1]);
    *(uint2*)(acc_s_cast + (i_23 * 4)) = __20;
  }
  tl::cp_async_wait<4>();
  __syncthreads();
  {
    half_t B_local_3[64];
#line 186 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_3 = 0; ki_3 < 4; ++ki_3) {
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_24 = 0; i_24 < 8; ++i_24) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((half_t*)V_shared)[((((((((i_24 >> 2) * 4096) + (ki_3 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((i_24 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_24 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 8192)])), (&(B_local_3[(i_24 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int j_3 = 0; j_3 < 8; ++j_3) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + (j_3 * 8)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_3 * 8)), reinterpret_cast<const unsigned*>(B_local_3 + (j_3 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + ((j_3 * 8) + 4)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_3 * 8)), reinterpret_cast<const unsigned*>(B_local_3 + ((j_3 * 8) + 4)));
      }
    }
  }
#line 160 "tilelang/language/reduce_op.py"
  #pragma unroll
  for (int i_25 = 0; i_25 < 2; ++i_25) {
#line 160 "tilelang/language/reduce_op.py"
    scores_sum[i_25] = 0x0p+0f/*0.000000e+00*/;
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int rv_3 = 0; rv_3 < 16; ++rv_3) {
#line 160 "tilelang/language/reduce_op.py"
      scores_sum[i_25] = (scores_sum[i_25] + acc_s[((((rv_3 & 7) * 4) + (i_25 * 2)) + (rv_3 >> 3))]);
    }
#line 160 "tilelang/language/reduce_op.py"
    scores_sum[i_25] = tl::AllReduce<tl::SumOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_sum[i_25]);
  }
#line 54 "examples/flash_attention.py"
  float2 __21;
    float2 __22;
      float2 v__23 = *(float2*)(logsum + 0);
      float2 v__24 = *(float2*)(scores_scale + 0);
      __22.x = (v__23.x*v__24.x);
      __22.y = (v__23.y*v__24.y);
    float2 v__25 = *(float2*)(scores_sum + 0);
    __21.x = (__22.x+v__25.x);
    __21.y = (__22.y+v__25.y);
  *(float2*)(logsum + 0) = __21;
#line 39 "examples/flash_attention.py"
  #pragma unroll
  for (int i_26 = 0; i_26 < 8; ++i_26) {
#line 39 "examples/flash_attention.py"
    float broadcast_var_11 = 0x0p+0f/*0.000000e+00*/;
#line 39 "examples/flash_attention.py"
    *(float4*)(acc_s + (i_26 * 4)) = make_float4(broadcast_var_11, broadcast_var_11, broadcast_var_11, broadcast_var_11);
  }
  tl::cp_async_wait<3>();
  __syncthreads();
  {
    half_t A_local_2[8];
    half_t B_local_4[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_4 = 0; ki_4 < 8; ++ki_4) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      tl::ptx_ldmatrix_x4((&(((half_t*)Q_shared)[(((((((ki_4 >> 2) * 4096) + ((((int)threadIdx.x) >> 5) * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki_4 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_4 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local_2[0])));
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_27 = 0; i_27 < 4; ++i_27) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((half_t*)K_shared)[(((((((((ki_4 >> 2) * 4096) + (i_27 * 1024)) + (((((int)threadIdx.x) & 31) >> 4) * 512)) + ((((int)threadIdx.x) & 7) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki_4 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_4 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(B_local_4[(i_27 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int j_4 = 0; j_4 < 4; ++j_4) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + (j_4 * 8)), reinterpret_cast<const unsigned*>(A_local_2 + 0), reinterpret_cast<const unsigned*>(B_local_4 + (j_4 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + ((j_4 * 8) + 4)), reinterpret_cast<const unsigned*>(A_local_2 + 0), reinterpret_cast<const unsigned*>(B_local_4 + ((j_4 * 8) + 4)));
      }
    }
  }
#line 41 "examples/flash_attention.py"
  *(float2*)(scores_max_prev + 0) = *(float2*)(scores_max + 0);
#line 160 "tilelang/language/reduce_op.py"
  #pragma unroll
  for (int i_28 = 0; i_28 < 2; ++i_28) {
#line 160 "tilelang/language/reduce_op.py"
    scores_max_clear_2[i_28] = -CUDART_INF_F;
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int rv_4 = 0; rv_4 < 16; ++rv_4) {
#line 160 "tilelang/language/reduce_op.py"
      scores_max_clear_2[i_28] = max(scores_max_clear_2[i_28], acc_s[((((rv_4 & 7) * 4) + (i_28 * 2)) + (rv_4 >> 3))]);
    }
#line 160 "tilelang/language/reduce_op.py"
    scores_max_clear_2[i_28] = tl::AllReduce<tl::MaxOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_max_clear_2[i_28]);
#line 160 "tilelang/language/reduce_op.py"
    scores_max[i_28] = max(scores_max[i_28], scores_max_clear_2[i_28]);
  }
#line 44 "examples/flash_attention.py"
  float broadcast_var_12 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
  float broadcast_var_13 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
  float2 __23;
  float2 __24;
    float2 __25;
      float2 v__26 = *(float2*)(scores_max_prev + 0);
      float2 v__27 = make_float2(broadcast_var_12, broadcast_var_12);
      __25.x = (v__26.x*v__27.x);
      __25.y = (v__26.y*v__27.y);
    float2 __26;
      float2 v__28 = *(float2*)(scores_max + 0);
      float2 v__29 = make_float2(broadcast_var_13, broadcast_var_13);
      __26.x = (v__28.x*v__29.x);
      __26.y = (v__28.y*v__29.y);
    __24.x = (__25.x-__26.x);
    __24.y = (__25.y-__26.y);
  __23.x = exp2f(__24.x);
  __23.y = exp2f(__24.y);
  *(float2*)(scores_scale + 0) = __23;
#line 45 "examples/flash_attention.py"
  #pragma unroll
  for (int i_29 = 0; i_29 < 32; ++i_29) {
#line 46 "examples/flash_attention.py"
    float2 __27;
      float2 v__30 = *(float2*)(acc_o + (i_29 * 2));
      float2 v__31 = make_float2(scores_scale[(i_29 & 1)], scores_scale[(i_29 & 1)]);
      __27.x = (v__30.x*v__31.x);
      __27.y = (v__30.y*v__31.y);
    *(float2*)(acc_o + (i_29 * 2)) = __27;
  }
#line 47 "examples/flash_attention.py"
  #pragma unroll
  for (int i_30 = 0; i_30 < 16; ++i_30) {
#line 48 "examples/flash_attention.py"
    float broadcast_var_14 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 48 "examples/flash_attention.py"
    float2 __28;
    float2 __29;
      float2 __30;
        float2 v__32 = *(float2*)(acc_s + (i_30 * 2));
        float2 v__33 = make_float2(broadcast_var_14, broadcast_var_14);
        __30.x = (v__32.x*v__33.x);
        __30.y = (v__32.y*v__33.y);
      float2 v__34 = make_float2((scores_max[(i_30 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/), (scores_max[(i_30 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/));
      __29.x = (__30.x-v__34.x);
      __29.y = (__30.y-v__34.y);
    __28.x = exp2f(__29.x);
    __28.y = exp2f(__29.y);
    *(float2*)(acc_s + (i_30 * 2)) = __28;
  }
#line 49 "examples/flash_attention.py"
  #pragma unroll
  for (int i_31 = 0; i_31 < 8; ++i_31) {
#line 49 "examples/flash_attention.py"
    uint2 __31;
    float4 v__35 = *(float4*)(acc_s + (i_31 * 4));
    ((half2*)(&__31))[0] = __float22half2_rn(((float2*)(&v__35))[0]);
    ((half2*)(&__31))[1] = __float22half2_rn(((float2*)(&v__35))[1]);
    *(uint2*)(acc_s_cast + (i_31 * 4)) = __31;
  }
  tl::cp_async_wait<2>();
  __syncthreads();
  {
    half_t B_local_5[64];
#line 186 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_5 = 0; ki_5 < 4; ++ki_5) {
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_32 = 0; i_32 < 8; ++i_32) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((half_t*)V_shared)[((((((((i_32 >> 2) * 4096) + (ki_5 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((i_32 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_32 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) + 16384)])), (&(B_local_5[(i_32 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int j_5 = 0; j_5 < 8; ++j_5) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + (j_5 * 8)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_5 * 8)), reinterpret_cast<const unsigned*>(B_local_5 + (j_5 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + ((j_5 * 8) + 4)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_5 * 8)), reinterpret_cast<const unsigned*>(B_local_5 + ((j_5 * 8) + 4)));
      }
    }
  }
#line 160 "tilelang/language/reduce_op.py"
  #pragma unroll
  for (int i_33 = 0; i_33 < 2; ++i_33) {
#line 160 "tilelang/language/reduce_op.py"
    scores_sum[i_33] = 0x0p+0f/*0.000000e+00*/;
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int rv_5 = 0; rv_5 < 16; ++rv_5) {
#line 160 "tilelang/language/reduce_op.py"
      scores_sum[i_33] = (scores_sum[i_33] + acc_s[((((rv_5 & 7) * 4) + (i_33 * 2)) + (rv_5 >> 3))]);
    }
#line 160 "tilelang/language/reduce_op.py"
    scores_sum[i_33] = tl::AllReduce<tl::SumOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_sum[i_33]);
  }
#line 54 "examples/flash_attention.py"
  float2 __32;
    float2 __33;
      float2 v__36 = *(float2*)(logsum + 0);
      float2 v__37 = *(float2*)(scores_scale + 0);
      __33.x = (v__36.x*v__37.x);
      __33.y = (v__36.y*v__37.y);
    float2 v__38 = *(float2*)(scores_sum + 0);
    __32.x = (__33.x+v__38.x);
    __32.y = (__33.y+v__38.y);
  *(float2*)(logsum + 0) = __32;
#line 39 "examples/flash_attention.py"
  #pragma unroll
  for (int i_34 = 0; i_34 < 8; ++i_34) {
#line 39 "examples/flash_attention.py"
    float broadcast_var_15 = 0x0p+0f/*0.000000e+00*/;
#line 39 "examples/flash_attention.py"
    *(float4*)(acc_s + (i_34 * 4)) = make_float4(broadcast_var_15, broadcast_var_15, broadcast_var_15, broadcast_var_15);
  }
  tl::cp_async_wait<1>();
  __syncthreads();
  {
    half_t A_local_3[8];
    half_t B_local_6[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_6 = 0; ki_6 < 8; ++ki_6) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      tl::ptx_ldmatrix_x4((&(((half_t*)Q_shared)[(((((((ki_6 >> 2) * 4096) + ((((int)threadIdx.x) >> 5) * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki_6 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_6 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local_3[0])));
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_35 = 0; i_35 < 4; ++i_35) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4((&(((half_t*)K_shared)[((((((((ki_6 >> 2) * 4096) + (i_35 * 1024)) + (((((int)threadIdx.x) & 31) >> 4) * 512)) + ((((int)threadIdx.x) & 7) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki_6 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki_6 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local_6[(i_35 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int j_6 = 0; j_6 < 4; ++j_6) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + (j_6 * 8)), reinterpret_cast<const unsigned*>(A_local_3 + 0), reinterpret_cast<const unsigned*>(B_local_6 + (j_6 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_s + ((j_6 * 8) + 4)), reinterpret_cast<const unsigned*>(A_local_3 + 0), reinterpret_cast<const unsigned*>(B_local_6 + ((j_6 * 8) + 4)));
      }
    }
  }
#line 41 "examples/flash_attention.py"
  *(float2*)(scores_max_prev + 0) = *(float2*)(scores_max + 0);
#line 160 "tilelang/language/reduce_op.py"
  #pragma unroll
  for (int i_36 = 0; i_36 < 2; ++i_36) {
#line 160 "tilelang/language/reduce_op.py"
    scores_max_clear_3[i_36] = -CUDART_INF_F;
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int rv_6 = 0; rv_6 < 16; ++rv_6) {
#line 160 "tilelang/language/reduce_op.py"
      scores_max_clear_3[i_36] = max(scores_max_clear_3[i_36], acc_s[((((rv_6 & 7) * 4) + (i_36 * 2)) + (rv_6 >> 3))]);
    }
#line 160 "tilelang/language/reduce_op.py"
    scores_max_clear_3[i_36] = tl::AllReduce<tl::MaxOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_max_clear_3[i_36]);
#line 160 "tilelang/language/reduce_op.py"
    scores_max[i_36] = max(scores_max[i_36], scores_max_clear_3[i_36]);
  }
#line 44 "examples/flash_attention.py"
  float broadcast_var_16 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
  float broadcast_var_17 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 44 "examples/flash_attention.py"
  float2 __34;
  float2 __35;
    float2 __36;
      float2 v__39 = *(float2*)(scores_max_prev + 0);
      float2 v__40 = make_float2(broadcast_var_16, broadcast_var_16);
      __36.x = (v__39.x*v__40.x);
      __36.y = (v__39.y*v__40.y);
    float2 __37;
      float2 v__41 = *(float2*)(scores_max + 0);
      float2 v__42 = make_float2(broadcast_var_17, broadcast_var_17);
      __37.x = (v__41.x*v__42.x);
      __37.y = (v__41.y*v__42.y);
    __35.x = (__36.x-__37.x);
    __35.y = (__36.y-__37.y);
  __34.x = exp2f(__35.x);
  __34.y = exp2f(__35.y);
  *(float2*)(scores_scale + 0) = __34;
#line 45 "examples/flash_attention.py"
  #pragma unroll
  for (int i_37 = 0; i_37 < 32; ++i_37) {
#line 46 "examples/flash_attention.py"
    float2 __38;
      float2 v__43 = *(float2*)(acc_o + (i_37 * 2));
      float2 v__44 = make_float2(scores_scale[(i_37 & 1)], scores_scale[(i_37 & 1)]);
      __38.x = (v__43.x*v__44.x);
      __38.y = (v__43.y*v__44.y);
    *(float2*)(acc_o + (i_37 * 2)) = __38;
  }
#line 47 "examples/flash_attention.py"
  #pragma unroll
  for (int i_38 = 0; i_38 < 16; ++i_38) {
#line 48 "examples/flash_attention.py"
    float broadcast_var_18 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 48 "examples/flash_attention.py"
    float2 __39;
    float2 __40;
      float2 __41;
        float2 v__45 = *(float2*)(acc_s + (i_38 * 2));
        float2 v__46 = make_float2(broadcast_var_18, broadcast_var_18);
        __41.x = (v__45.x*v__46.x);
        __41.y = (v__45.y*v__46.y);
      float2 v__47 = make_float2((scores_max[(i_38 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/), (scores_max[(i_38 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/));
      __40.x = (__41.x-v__47.x);
      __40.y = (__41.y-v__47.y);
    __39.x = exp2f(__40.x);
    __39.y = exp2f(__40.y);
    *(float2*)(acc_s + (i_38 * 2)) = __39;
  }
#line 49 "examples/flash_attention.py"
  #pragma unroll
  for (int i_39 = 0; i_39 < 8; ++i_39) {
#line 49 "examples/flash_attention.py"
    uint2 __42;
    float4 v__48 = *(float4*)(acc_s + (i_39 * 4));
    ((half2*)(&__42))[0] = __float22half2_rn(((float2*)(&v__48))[0]);
    ((half2*)(&__42))[1] = __float22half2_rn(((float2*)(&v__48))[1]);
    *(uint2*)(acc_s_cast + (i_39 * 4)) = __42;
  }
  tl::cp_async_wait<0>();
  __syncthreads();
  {
    half_t B_local_7[64];
#line 186 "tilelang/cuda/op/gemm/gemm_mma.py"
    for (int ki_7 = 0; ki_7 < 4; ++ki_7) {
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      #pragma unroll
      for (int i_40 = 0; i_40 < 8; ++i_40) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::ptx_ldmatrix_x4_trans((&(((half_t*)V_shared)[(((((((i_40 >> 2) * 4096) + (ki_7 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((i_40 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_40 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local_7[(i_40 * 8)])));
      }
#line 521 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
      for (int j_7 = 0; j_7 < 8; ++j_7) {
#line 591 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + (j_7 * 8)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_7 * 8)), reinterpret_cast<const unsigned*>(B_local_7 + (j_7 * 8)));
#line 608 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
        tl::mma_sync<tl::DataType::kFloat16, tl::DataType::kFloat16, tl::DataType::kFloat32, 16, 8, 16, false, true>(reinterpret_cast<float*>(acc_o + ((j_7 * 8) + 4)), reinterpret_cast<const unsigned*>(acc_s_cast + (ki_7 * 8)), reinterpret_cast<const unsigned*>(B_local_7 + ((j_7 * 8) + 4)));
      }
    }
  }
#line 160 "tilelang/language/reduce_op.py"
  #pragma unroll
  for (int i_41 = 0; i_41 < 2; ++i_41) {
#line 160 "tilelang/language/reduce_op.py"
    scores_sum[i_41] = 0x0p+0f/*0.000000e+00*/;
#line 160 "tilelang/language/reduce_op.py"
    #pragma unroll
    for (int rv_7 = 0; rv_7 < 16; ++rv_7) {
#line 160 "tilelang/language/reduce_op.py"
      scores_sum[i_41] = (scores_sum[i_41] + acc_s[((((rv_7 & 7) * 4) + (i_41 * 2)) + (rv_7 >> 3))]);
    }
#line 160 "tilelang/language/reduce_op.py"
    scores_sum[i_41] = tl::AllReduce<tl::SumOp, 4, 1, 0, tl::NamedBarrier<128>>::run(scores_sum[i_41]);
  }
#line 54 "examples/flash_attention.py"
  float2 __43;
    float2 __44;
      float2 v__49 = *(float2*)(logsum + 0);
      float2 v__50 = *(float2*)(scores_scale + 0);
      __44.x = (v__49.x*v__50.x);
      __44.y = (v__49.y*v__50.y);
    float2 v__51 = *(float2*)(scores_sum + 0);
    __43.x = (__44.x+v__51.x);
    __43.y = (__44.y+v__51.y);
  *(float2*)(logsum + 0) = __43;
#line 55 "examples/flash_attention.py"
  #pragma unroll
  for (int i_42 = 0; i_42 < 32; ++i_42) {
#line 56 "examples/flash_attention.py"
    float2 __45;
      float2 v__52 = *(float2*)(acc_o + (i_42 * 2));
      float2 v__53 = make_float2(logsum[(i_42 & 1)], logsum[(i_42 & 1)]);
      __45.x = (v__52.x/v__53.x);
      __45.y = (v__52.y/v__53.y);
    *(float2*)(acc_o + (i_42 * 2)) = __45;
  }
  __syncthreads();
#line 57 "examples/flash_attention.py"
  #pragma unroll
  for (int i_43 = 0; i_43 < 32; ++i_43) {
    half_t O_shared_local_cast[2];
#line 57 "examples/flash_attention.py"
    uint1 __46;
    float2 v__54 = *(float2*)(acc_o + (i_43 * 2));
    ((half2*)(&__46))[0] = __float22half2_rn(((float2*)(&v__54))[0]);
    *(uint1*)(O_shared_local_cast + 0) = __46;
#line 57 "examples/flash_attention.py"
    *(uint1*)(((half_t*)O_shared) + ((((((((int)threadIdx.x) >> 5) * 2048) + ((i_43 & 1) * 1024)) + (((((int)threadIdx.x) & 31) >> 2) * 128)) + ((i_43 >> 1) * 8)) + ((((int)threadIdx.x) & 3) * 2))) = *(uint1*)(O_shared_local_cast + 0);
  }
  __syncthreads();
#line 58 "examples/flash_attention.py"
  #pragma unroll
  for (int i_44 = 0; i_44 < 8; ++i_44) {
#line 58 "examples/flash_attention.py"
    *(uint4*)(Output + (((((((int)blockIdx.x) * 65536) + (i_44 * 8192)) + ((((int)threadIdx.x) >> 4) * 1024)) + (((int)blockIdx.y) * 128)) + ((((int)threadIdx.x) & 15) * 8))) = *(uint4*)(((half_t*)O_shared) + ((i_44 * 1024) + (((int)threadIdx.x) * 8)));
  }
}

