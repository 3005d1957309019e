// Hand-written kernels copy the thread index into a local (`int tid = threadIdx.x;`). Its uses are the
// index itself: `s[tid] += v` is each thread's own element, `if (tid == 0)` one thread, `tid < stride`
// the lower half (a tree reduction with a barrier per step). Before, `tid` was a value shared by all
// threads: three false races here, and the real one below was missed.
__global__ void reduce(const float *in, float *out) {
  __shared__ float s[128];
  int tid = threadIdx.x;
  s[tid] = 0.f;
  s[tid] += in[tid];
  __syncthreads();
  for (int stride = 64; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) {
    float total = s[0];
    s[0] = total * 2.f;
  }
}

__global__ void shifted(const float *in, float *out) {
  __shared__ float s[256];
  const int tid = threadIdx.x;
  s[tid] = in[tid];
  out[tid] = s[tid + 1];  // expect: shared-race
}
