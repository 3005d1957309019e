// A barrier under a condition on the arguments and the thread index is asked of the sets (a
// pair of threads of one block, one passing the guard and one not: KernelFacts.barrier_split),
// not left as "cannot evaluate per thread". The classic tail-block bug: the last block of a launch
// over `n` elements has threads past `n` that skip the barrier.
__global__ void __launch_bounds__(256) tail_barrier(const float *in, float *out, int n) {
  __shared__ float s[256];
  int g = blockIdx.x * 256 + threadIdx.x;
  if (g < n) {
    s[threadIdx.x] = in[g];
    __syncthreads();  // expect: divergent-barrier
    out[g] = s[threadIdx.x ^ 1];
  }
}

// The fix: every thread reaches the barrier; the guard is on the memory accesses.
__global__ void __launch_bounds__(256) tail_guarded(const float *in, float *out, int n) {
  __shared__ float s[256];
  int g = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = g < n ? in[g] : 0.0f;
  __syncthreads();
  if (g < n) out[g] = s[threadIdx.x ^ 1];
}

// A guard the whole block agrees on (the block index against the argument): no split.
__global__ void __launch_bounds__(256) whole_blocks(const float *in, float *out, int n) {
  __shared__ float s[256];
  if (blockIdx.x * 256 < n) {
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = s[threadIdx.x ^ 1];
  }
}
