// Loops whose variable halves or doubles (`s >>= 1`, `offset *= 2`), the reduction and scan
// trees, are walked at each of their values (model/trace.py, walk_geometric), and a local that
// differs between threads (`int bi = offset * (2 * tid + 2) - 1`) is an expression of the thread
// index, not thread 0's number (`_per_thread`). Before, every such loop was undecided: races in
// it were notes, and correct trees notes too.
#define N 256

// Tree reduction with a barrier per level: clean.
__global__ void __launch_bounds__(N) reduce(const float *in, float *out) {
  __shared__ float s[N];
  unsigned tid = threadIdx.x;
  s[tid] = in[tid];
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
    if (tid < k) s[tid] += s[tid + k];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// In-place Hillis-Steele scan: a thread reads s[tid - offset] while its owner updates it.
__global__ void __launch_bounds__(N) scan_in_place(const int *in, int *out) {
  __shared__ int s[N];
  int tid = threadIdx.x;
  s[tid] = in[tid];
  __syncthreads();
  for (int offset = 1; offset < N; offset *= 2) {
    if (tid >= offset) s[tid] += s[tid - offset];  // expect: shared-race
    __syncthreads();
  }
  out[tid] = s[tid];
}

// Blelloch up-sweep: indices computed per thread from a counter the loop doubles. Clean.
__global__ void __launch_bounds__(N / 2) up_sweep(float *data) {
  __shared__ float temp[N];
  int thid = threadIdx.x;
  int offset = 1;
  temp[2 * thid] = data[2 * thid];
  temp[2 * thid + 1] = data[2 * thid + 1];
  for (int d = N >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  __syncthreads();
  data[2 * thid] = temp[2 * thid + 1];
}
