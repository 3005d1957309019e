// The warp index made uniform for the compiler with a broadcast from lane 0 (`__shfl_sync(full,
// threadIdx.x / 32, 0)`, as hand-written warp-specialised kernels write it) is the warp index: warps
// 4-7 run the branch and their 128 threads meet at named barrier 1. Before, the index was a value
// with no thread: all 256 threads "ran" the branch, a false overfull count and a false race.
__global__ void __launch_bounds__(256, 1) k(float *out) {
  __shared__ float s[256];
  const unsigned warp = __shfl_sync(0xffffffff, threadIdx.x / 32, 0);
  if (warp >= 4) {
    s[threadIdx.x] = out[threadIdx.x];
    asm volatile("bar.sync 1, 128;" ::: "memory");
    out[threadIdx.x] = s[(threadIdx.x + 1) % 128 + 128];
  }
}

// A barrier under a condition on data: which threads reach it is a guess, never a count error.
__global__ void __launch_bounds__(256, 1) guessed(const int *flags, float *out) {
  __shared__ float s[256];
  if (flags[threadIdx.x / 32] > 0) {
    s[threadIdx.x] = out[threadIdx.x];
    asm volatile("bar.sync 2, 128;" ::: "memory");
  }
}
