// Threads 64-127 copy nothing but still commit: their groups are empty and count for the wait.
// cp_async_wait<1> after two commits completes the first group for every thread; the barrier
// makes thread 0-63's copies visible; nothing to report.
#include <tl_templates/cuda/gemm.h>
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ S, float* __restrict__ out) {
  __shared__ float s_shared[128];
  if (((int)threadIdx.x) < 64) {
    tl::cp_async_gs<4>((&(s_shared[((int)threadIdx.x)])), (&(S[((int)threadIdx.x)])));
  }
  tl::cp_async_commit();
  if (((int)threadIdx.x) < 64) {
    tl::cp_async_gs<4>((&(s_shared[(((int)threadIdx.x) + 64)])), (&(S[(((int)threadIdx.x) + 64)])));
  }
  tl::cp_async_commit();
  tl::cp_async_wait<1>();
  __syncthreads();
  out[((int)threadIdx.x)] = s_shared[(127 - ((int)threadIdx.x)) & 63];
  tl::cp_async_wait<0>();
  __syncthreads();
  out[((int)threadIdx.x)] = s_shared[(127 - ((int)threadIdx.x))];
}
