// The file's own __device__ functions are inlined at their calls (model/inline.py), as a C++
// front end compiles a __forceinline__ helper. Before, a barrier inside a helper was missed (a
// false race after `block_sync()`), and a helper's shared accesses went unchecked, silently.
__device__ __forceinline__ void block_sync() { __syncthreads(); }

__device__ __forceinline__ void load_row(float *dst, const float *src, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    dst[i] = src[i];
  }
}

template <typename T>
__device__ T warp_sum(T val) {
  for (int mask = 16; mask > 0; mask >>= 1) {
    val += __shfl_xor_sync(0xffffffff, val, mask, 32);
  }
  return val;
}

// The reduction of the classic layer-norm kernels: a static shared array, one per program (so
// one for both calls below), written by lane 0 of each warp and read by the first warp.
template <typename T>
__device__ T block_sum(T val) {
  static __shared__ T partial[32];
  int lane = threadIdx.x & 31;
  int wid = threadIdx.x >> 5;
  val = warp_sum<T>(val);
  if (lane == 0) partial[wid] = val;
  __syncthreads();
  val = (threadIdx.x < 32) ? partial[lane] : (T)(0.0f);
  val = warp_sum<T>(val);
  return val;
}

// A helper's barrier orders the fill against the neighbour's read.
__global__ void __launch_bounds__(128) synced_by_helper(const float *in, float *out) {
  __shared__ float s[1024];
  load_row(s, in, 1024);
  block_sync();
  out[threadIdx.x] = s[(threadIdx.x + 1) % 128];
}

// Without it, the read races with another thread's store inside the helper. A finding inside an
// inlined helper is reported at its call (two calls of one helper are two places).
__global__ void __launch_bounds__(128) unsynced(const float *in, float *out) {
  __shared__ float s[1024];
  load_row(s, in, 1024);
  out[threadIdx.x] = s[(threadIdx.x + 1) % 128];  // expect: shared-race
}

// Two reductions separated by a barrier: clean.
__global__ void __launch_bounds__(1024) two_sums_synced(const float *x, float *y) {
  float v = x[threadIdx.x];
  float sum = block_sum<float>(v);
  __syncthreads();
  float sq = block_sum<float>(v * v);
  y[threadIdx.x] = sum + sq;
}

// Back to back, the second call's lane-0 stores into `partial` race with the first warp still
// reading it from the first call.
__global__ void __launch_bounds__(1024) two_sums(const float *x, float *y) {
  float v = x[threadIdx.x];
  float sum = block_sum<float>(v);
  float sq = block_sum<float>(v * v);  // expect: shared-race
  y[threadIdx.x] = sum + sq;
}
