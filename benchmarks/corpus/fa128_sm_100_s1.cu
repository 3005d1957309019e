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
#include <math_constants.h>
#include <tl_templates/cuda/reduce.h>
#include <tl_templates/cuda/scan.h>
#include <tl_templates/cuda/ldsm.h>
#include <tl_templates/cuda/threadblock_swizzle.h>
#include <tl_templates/cuda/debug.h>
#ifdef ENABLE_BF16
#include <tl_templates/cuda/cuda_bf16_fallbacks.cuh>
#endif

extern "C" __global__ void flash_fwd_kernel(__grid_constant__ const CUtensorMap K_desc, __grid_constant__ const CUtensorMap Output_desc, __grid_constant__ const CUtensorMap Q_desc, __grid_constant__ const CUtensorMap V_desc);
extern "C" __global__ void __launch_bounds__(384, 1) flash_fwd_kernel(__grid_constant__ const CUtensorMap K_desc, __grid_constant__ const CUtensorMap Output_desc, __grid_constant__ const CUtensorMap Q_desc, __grid_constant__ const CUtensorMap V_desc) {
  extern __shared__ __align__(1024) uchar buf_dyn_shmem[];
  void* O_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* Q_shared = ((void*)((char*)buf_dyn_shmem + 0));
  void* K_shared = ((void*)((char*)buf_dyn_shmem + 32768));
  void* V_shared = ((void*)((char*)buf_dyn_shmem + 49152));
  __shared__ __align__(16) uint64_t mbarrier_mem[5];
  auto mbarrier = reinterpret_cast<Barrier*>(mbarrier_mem);
  float acc_o[64];
  float logsum[2];
  float scores_max[2];
  float acc_s[32];
  float scores_max_prev[2];
  float scores_max_clear[2];
  float scores_scale[2];
  half_t acc_s_cast[32];
  float scores_sum[2];
  if (tl::tl_shuffle_elect<0>()) {
    tl::prefetch_tma_descriptor(Q_desc);
    tl::prefetch_tma_descriptor(K_desc);
    tl::prefetch_tma_descriptor(V_desc);
    tl::prefetch_tma_descriptor(Output_desc);
  }
  if (tl::tl_shuffle_elect<0>()) {
    mbarrier[0].init(1);
    mbarrier[1].init(1);
    mbarrier[2].init(256);
    mbarrier[3].init(256);
    mbarrier[4].init(1);
  }
  tl::fence_barrier_init();
  __syncthreads();
  if (tl::tl_shuffle_elect<384>()) {
    mbarrier[4].arrive_and_expect_tx(32768);
#line 33 "examples/flash_attention.py"
    #pragma unroll
    for (int i = 0; i < 2; ++i) {
#line 33 "examples/flash_attention.py"
      tl::tma_load(Q_desc, mbarrier[4], (&(((half_t*)Q_shared)[(i * 8192)])), (i * 64), (((int)blockIdx.x) * 128), ((int)blockIdx.y), 0);
    }
  }
  __syncthreads();
  if (((int)threadIdx.x) < 128) {
    tl::warpgroup_reg_dealloc<24>();
    for (int k = 0; k < 16; ++k) {
      mbarrier[2].wait(((k & 1) ^ 1));
      if (tl::tl_shuffle_elect<128>()) {
        mbarrier[0].arrive_and_expect_tx(16384);
        #pragma unroll
        for (int i_1 = 0; i_1 < 2; ++i_1) {
          tl::tma_load(K_desc, mbarrier[0], (&(((half_t*)K_shared)[(i_1 * 4096)])), (i_1 * 64), (k * 64), ((int)blockIdx.y), 0);
        }
      }
      mbarrier[3].wait(((k & 1) ^ 1));
      if (tl::tl_shuffle_elect<128>()) {
        mbarrier[1].arrive_and_expect_tx(16384);
        #pragma unroll
        for (int i_2 = 0; i_2 < 2; ++i_2) {
          tl::tma_load(V_desc, mbarrier[1], (&(((half_t*)V_shared)[(i_2 * 4096)])), (i_2 * 64), (k * 64), ((int)blockIdx.y), 0);
        }
      }
    }
  } else {
    tl::warpgroup_reg_alloc<240>();
#line 34 "examples/flash_attention.py"
    #pragma unroll
    for (int i_3 = 0; i_3 < 16; ++i_3) {
#line 34 "examples/flash_attention.py"
      float broadcast_var = 0x0p+0f/*0.000000e+00*/;
#line 34 "examples/flash_attention.py"
      *(float4*)(acc_o + (i_3 * 4)) = make_float4(broadcast_var, broadcast_var, broadcast_var, broadcast_var);
    }
#line 35 "examples/flash_attention.py"
    float broadcast_var_1 = 0x0p+0f/*0.000000e+00*/;
#line 35 "examples/flash_attention.py"
    *(float2*)(logsum + 0) = make_float2(broadcast_var_1, broadcast_var_1);
#line 36 "examples/flash_attention.py"
    float broadcast_var_2 = -CUDART_INF_F;
#line 36 "examples/flash_attention.py"
    *(float2*)(scores_max + 0) = make_float2(broadcast_var_2, broadcast_var_2);
    for (int k_1 = 0; k_1 < 16; ++k_1) {
#line 39 "examples/flash_attention.py"
      #pragma unroll
      for (int i_4 = 0; i_4 < 8; ++i_4) {
#line 39 "examples/flash_attention.py"
        float broadcast_var_3 = 0x0p+0f/*0.000000e+00*/;
#line 39 "examples/flash_attention.py"
        *(float4*)(acc_s + (i_4 * 4)) = make_float4(broadcast_var_3, broadcast_var_3, broadcast_var_3, broadcast_var_3);
      }
      if (k_1 == 0) {
        mbarrier[4].wait(0);
      }
      mbarrier[0].wait((k_1 & 1));
      {
        half_t A_local[8];
        half_t B_local[32];
#line 122 "tilelang/cuda/op/gemm/gemm_mma.py"
        for (int ki = 0; ki < 8; ++ki) {
#line 378 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          tl::ptx_ldmatrix_x4((&(((half_t*)Q_shared)[(((((((ki >> 2) * 8192) + ((((((int)threadIdx.x) >> 5) + 4) & 7) * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(A_local[0])));
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          #pragma unroll
          for (int i_5 = 0; i_5 < 4; ++i_5) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::ptx_ldmatrix_x4((&(((half_t*)K_shared)[((((((((ki >> 2) * 4096) + (i_5 * 1024)) + (((((int)threadIdx.x) & 31) >> 4) * 512)) + ((((int)threadIdx.x) & 7) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((ki & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (ki & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 15) >> 3) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local[(i_5 * 8)])));
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
      mbarrier[2].arrive();
#line 41 "examples/flash_attention.py"
      *(float2*)(scores_max_prev + 0) = *(float2*)(scores_max + 0);
#line 160 "tilelang/language/reduce_op.py"
      #pragma unroll
      for (int i_6 = 0; i_6 < 2; ++i_6) {
#line 160 "tilelang/language/reduce_op.py"
        scores_max_clear[i_6] = -CUDART_INF_F;
#line 160 "tilelang/language/reduce_op.py"
        #pragma unroll
        for (int rv = 0; rv < 16; ++rv) {
#line 160 "tilelang/language/reduce_op.py"
          scores_max_clear[i_6] = max(scores_max_clear[i_6], acc_s[((((rv & 7) * 4) + (i_6 * 2)) + (rv >> 3))]);
        }
#line 160 "tilelang/language/reduce_op.py"
        scores_max_clear[i_6] = tl::AllReduce<tl::MaxOp, 4, 1, 128, tl::NamedBarrier<256>>::run(scores_max_clear[i_6]);
#line 160 "tilelang/language/reduce_op.py"
        scores_max[i_6] = max(scores_max[i_6], scores_max_clear[i_6]);
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
          *(float2*)(&(__3.x)) = tl::mul2(*(float2*)(&(v_.x)), *(float2*)(&(v__1.x)));
        float2 __4;
          float2 v__2 = *(float2*)(scores_max + 0);
          float2 v__3 = make_float2(broadcast_var_5, broadcast_var_5);
          *(float2*)(&(__4.x)) = tl::mul2(*(float2*)(&(v__2.x)), *(float2*)(&(v__3.x)));
        *(float2*)(&(__2.x)) = tl::sub2(*(float2*)(&(__3.x)), *(float2*)(&(__4.x)));
      __1.x = exp2f(__2.x);
      __1.y = exp2f(__2.y);
      *(float2*)(scores_scale + 0) = __1;
#line 45 "examples/flash_attention.py"
      #pragma unroll
      for (int i_7 = 0; i_7 < 32; ++i_7) {
#line 46 "examples/flash_attention.py"
        float2 __5;
          float2 v__4 = *(float2*)(acc_o + (i_7 * 2));
          float2 v__5 = make_float2(scores_scale[(i_7 & 1)], scores_scale[(i_7 & 1)]);
          *(float2*)(&(__5.x)) = tl::mul2(*(float2*)(&(v__4.x)), *(float2*)(&(v__5.x)));
        *(float2*)(acc_o + (i_7 * 2)) = __5;
      }
#line 47 "examples/flash_attention.py"
      #pragma unroll
      for (int i_8 = 0; i_8 < 16; ++i_8) {
#line 48 "examples/flash_attention.py"
        float broadcast_var_6 = 0x1.0527dbd5cafffp-3f/*1.275174e-01*/;
#line 48 "examples/flash_attention.py"
        float2 __6;
        float2 __7;
          float2 __8;
            float2 v__6 = *(float2*)(acc_s + (i_8 * 2));
            float2 v__7 = make_float2(broadcast_var_6, broadcast_var_6);
            *(float2*)(&(__8.x)) = tl::mul2(*(float2*)(&(v__6.x)), *(float2*)(&(v__7.x)));
          float2 v__8 = make_float2((scores_max[(i_8 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/), (scores_max[(i_8 & 1)] * 0x1.0527dbd5cafffp-3f/*1.275174e-01*/));
          *(float2*)(&(__7.x)) = tl::sub2(*(float2*)(&(__8.x)), *(float2*)(&(v__8.x)));
        __6.x = exp2f(__7.x);
        __6.y = exp2f(__7.y);
        *(float2*)(acc_s + (i_8 * 2)) = __6;
      }
#line 49 "examples/flash_attention.py"
      #pragma unroll
      for (int i_9 = 0; i_9 < 8; ++i_9) {
#line 49 "examples/flash_attention.py"
        uint2 __9;
        float4 v__9 = *(float4*)(acc_s + (i_9 * 4));
        ((half2*)(&__9))[0] = __float22half2_rn(((float2*)(&v__9))[0]);
        ((half2*)(&__9))[1] = __float22half2_rn(((float2*)(&v__9))[1]);
        *(uint2*)(acc_s_cast + (i_9 * 4)) = __9;
      }
      mbarrier[1].wait((k_1 & 1));
      {
        half_t B_local_1[64];
#line 186 "tilelang/cuda/op/gemm/gemm_mma.py"
        for (int ki_1 = 0; ki_1 < 4; ++ki_1) {
#line 482 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
          #pragma unroll
          for (int i_10 = 0; i_10 < 8; ++i_10) {
#line 496 "tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
            tl::ptx_ldmatrix_x4_trans((&(((half_t*)V_shared)[(((((((i_10 >> 2) * 4096) + (ki_1 * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((i_10 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_10 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8))])), (&(B_local_1[(i_10 * 8)])));
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
      mbarrier[3].arrive();
#line 160 "tilelang/language/reduce_op.py"
      #pragma unroll
      for (int i_11 = 0; i_11 < 2; ++i_11) {
#line 160 "tilelang/language/reduce_op.py"
        scores_sum[i_11] = 0x0p+0f/*0.000000e+00*/;
#line 160 "tilelang/language/reduce_op.py"
        #pragma unroll
        for (int rv_1 = 0; rv_1 < 16; ++rv_1) {
#line 160 "tilelang/language/reduce_op.py"
          scores_sum[i_11] = (scores_sum[i_11] + acc_s[((((rv_1 & 7) * 4) + (i_11 * 2)) + (rv_1 >> 3))]);
        }
#line 160 "tilelang/language/reduce_op.py"
        scores_sum[i_11] = tl::AllReduce<tl::SumOp, 4, 1, 128, tl::NamedBarrier<256>>::run(scores_sum[i_11]);
      }
#line 54 "examples/flash_attention.py"
      float2 __10;
        float2 v__10 = *(float2*)(logsum + 0);
        float2 v__11 = *(float2*)(scores_scale + 0);
        float2 v__12 = *(float2*)(scores_sum + 0);
        *(float2*)(&(__10.x)) = tl::fma2(*(float2*)(&(v__10.x)), *(float2*)(&(v__11.x)), *(float2*)(&(v__12.x)));
      *(float2*)(logsum + 0) = __10;
    }
#line 55 "examples/flash_attention.py"
    #pragma unroll
    for (int i_12 = 0; i_12 < 32; ++i_12) {
#line 56 "examples/flash_attention.py"
      float2 __11;
        float2 v__13 = *(float2*)(acc_o + (i_12 * 2));
        float2 v__14 = make_float2(logsum[(i_12 & 1)], logsum[(i_12 & 1)]);
        __11.x = (v__13.x/v__14.x);
        __11.y = (v__13.y/v__14.y);
      *(float2*)(acc_o + (i_12 * 2)) = __11;
    }
    tl::__sync_thread_partial(3, 256);
#line 57 "examples/flash_attention.py"
    #pragma unroll
    for (int i_13 = 0; i_13 < 8; ++i_13) {
#line 57 "examples/flash_attention.py"
      tl::ptx_stmatrix_m8n8_x4((&(((half_t*)O_shared)[((((((((i_13 >> 2) * 8192) + ((((int)threadIdx.x) >> 5) * 1024)) + ((((int)threadIdx.x) & 15) * 64)) + (((((((int)threadIdx.x) & 7) >> 2) + ((i_13 & 3) >> 1)) & 1) * 32)) + (((((((int)threadIdx.x) & 3) >> 1) + (i_13 & 1)) & 1) * 16)) + (((((((int)threadIdx.x) & 31) >> 4) + (((int)threadIdx.x) & 1)) & 1) * 8)) - 4096)])), __pack_half2(((half_t)acc_o[(i_13 * 8)]), ((half_t)acc_o[((i_13 * 8) + 1)])), __pack_half2(((half_t)acc_o[((i_13 * 8) + 2)]), ((half_t)acc_o[((i_13 * 8) + 3)])), __pack_half2(((half_t)acc_o[((i_13 * 8) + 4)]), ((half_t)acc_o[((i_13 * 8) + 5)])), __pack_half2(((half_t)acc_o[((i_13 * 8) + 6)]), ((half_t)acc_o[((i_13 * 8) + 7)])));
    }
    tl::__sync_thread_partial(3, 256);
    if (tl::tl_shuffle_elect<256>()) {
      tl::fence_proxy_async();
#line 58 "examples/flash_attention.py"
      #pragma unroll
      for (int i_14 = 0; i_14 < 2; ++i_14) {
#line 58 "examples/flash_attention.py"
        tl::tma_store(Output_desc, (&(((half_t*)O_shared)[(i_14 * 8192)])), (i_14 * 64), (((int)blockIdx.x) * 128), ((int)blockIdx.y), 0);
      }
#line 58 "examples/flash_attention.py"
      tl::tma_store_arrive();
#line 58 "examples/flash_attention.py"
      tl::tma_store_wait<0, true>();
    }
  }
}

