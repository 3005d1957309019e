// A block-stride loop (`for (i = threadIdx.x; i < n; i += blockDim.x)`) is a symbol of the sets:
// `i - threadIdx.x` a multiple of the block's thread count (model/trace.py, walk_symbolic), so each
// thread fills its own elements. Before, the loop was not walked as a loop at all (`i` a local with
// no value): the race below was an undecided note, and the clean fill one more.

// The neighbour's element right after the fill, with no barrier.
__global__ void __launch_bounds__(128) fill_then_neighbour(const float *in, float *out) {
  __shared__ float s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) {
    s[i] = in[i];
  }
  out[threadIdx.x] = s[(threadIdx.x + 1) % 128];  // expect: shared-race
}

// A thread's own elements need no barrier: thread t wrote s[t + 128] itself (i = t + blockDim.x).
__global__ void __launch_bounds__(128) fill_then_own(const float *in, float *out) {
  __shared__ float s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) {
    s[i] = in[i];
  }
  out[threadIdx.x] = s[threadIdx.x + 128];
}
