// The same kernel with the first wait one group too shallow: the read after it may see a copy
// still in flight (the empty groups of threads 64-127 do not make the wait deeper for 0-63), and
// threads 64-127 read bytes the copies of threads 0-63 may still be writing (their completion, not
// their issue, is what the barrier would have to follow).
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
  tl::cp_async_wait<2>();  // expect: wait-too-shallow
  __syncthreads();
  out[((int)threadIdx.x)] = s_shared[(127 - ((int)threadIdx.x)) & 63];  // expect: shared-race
  tl::cp_async_wait<0>();
  __syncthreads();
  out[((int)threadIdx.x)] = s_shared[(127 - ((int)threadIdx.x))];
}
