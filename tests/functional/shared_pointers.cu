// Pointers into shared arrays and arrays of two dimensions are element indices of the declared
// array (model/pointers.py), as a C++ front end resolves them. Before, an access through
// `float *dst = &s[128]` was no access at all (the races below went unreported, silently), and
// `tile[a][b]` was read as element `a`.

// A pointer at a constant offset: the neighbour's element with no barrier.
__global__ void __launch_bounds__(128) offset_pointer(const float *in, float *out) {
  __shared__ float s[256];
  float *dst = &s[128];
  dst[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = s[128 + (threadIdx.x + 1) % 128];  // expect: shared-race
}

// The same through `s + 128` and read back through a second pointer, ordered by a barrier.
__global__ void __launch_bounds__(128) offset_pointer_synced(const float *in, float *out) {
  __shared__ float s[256];
  float *dst = s + 128;
  const float *src = dst;
  dst[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = src[(threadIdx.x + 1) % 128];
}

// A 2-D tile written by rows and read by columns: a race without the barrier ...
__global__ void __launch_bounds__(1024) transpose_racy(const float *in, float *out) {
  __shared__ float tile[32][33];
  tile[threadIdx.x / 32][threadIdx.x % 32] = in[threadIdx.x];
  out[threadIdx.x] = tile[threadIdx.x % 32][threadIdx.x / 32];  // expect: shared-race
}

// ... and none with it; the padding column (33) is never touched, so rows never meet.
__global__ void __launch_bounds__(1024) transpose(const float *in, float *out) {
  __shared__ float tile[32][33];
  tile[threadIdx.x / 32][threadIdx.x % 32] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x % 32][threadIdx.x / 32];
}

// A pointer at a run-time offset is a region of its own, said in a note; a race inside it is
// still found.
__global__ void __launch_bounds__(128) runtime_region(const float *in, float *out, int n) {
  extern __shared__ float sm[];
  float *a = &sm[n];  // expect: launch-assumed
  a[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = a[(threadIdx.x + 1) % 128];  // expect: shared-race
}

// A shared scalar is the one element of an array. Before, it was no access at all: the race below
// went unreported and the barrier of `scalar_synced` was advised away as ordering nothing.
__global__ void __launch_bounds__(128) scalar_racy(const float *x, float *y) {
  __shared__ float mean;
  float v = x[threadIdx.x];
  if (threadIdx.x == 0) mean = v;
  y[threadIdx.x] = v - mean;  // expect: shared-race
}

__global__ void __launch_bounds__(128) scalar_synced(const float *x, float *y) {
  __shared__ float mean;
  float v = x[threadIdx.x];
  if (threadIdx.x == 0) mean = v;
  __syncthreads();
  y[threadIdx.x] = v - mean;
}

// A barrier that orders nothing, for contrast: each thread reads the element it stored itself.
// (This file expects redundant-barrier here only: the barrier of `scalar_synced` is needed.)
__global__ void __launch_bounds__(128) own_element(const float *x, float *y) {
  __shared__ float s[128];
  float *mine = &s[0];
  mine[threadIdx.x] = x[threadIdx.x];
  __syncthreads();  // expect: redundant-barrier
  y[threadIdx.x] = s[threadIdx.x];
}
