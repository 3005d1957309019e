// Held-out round 11 (issue 31): a read under `?:` happens only where its branch is taken; a
// local pointer into a global argument names that argument's elements; a loop with a constant
// step other than 1 is walked at each value; a loop walked as one iteration is said so, and no
// barrier in it is advised away.

// Thread 255 never reads s[0][256] (the first element of row 1): the guard decides it. Clean.
__global__ void __launch_bounds__(256) ternary_guarded(int *out) {
  __shared__ int s[2][256];
  const int t = threadIdx.x;
  s[0][t] = t;
  __syncthreads();
  const int r = (t < 255) ? s[0][t + 1] : 0;
  s[1][t] = r;
  __syncthreads();  // expect: redundant-barrier
  out[t] = s[1][t];
}

// Without the guard the last thread reads row 1's first element while thread 0 stores it.
__global__ void __launch_bounds__(256) unguarded(int *out) {
  __shared__ int s[2][256];
  const int t = threadIdx.x;
  s[0][t] = t;
  __syncthreads();
  const int r = s[0][t + 1];
  s[1][t] = r;  // expect: shared-race
  out[t] = r;
}

// Partial sums through a local pointer into the workspace argument, read with no barrier.
__global__ void __launch_bounds__(256) workspace_pointer(float *workspace, float *y) {
  float *ws = workspace + blockIdx.x * 256;
  ws[threadIdx.x] = 1.0f;
  if (threadIdx.x < 64) y[threadIdx.x] = ws[threadIdx.x + 64];  // expect: global-race
}

// Two tiles per step of 2: walked at base = 0, 2, 4, 6; the trailing barrier keeps the next
// step's store after this step's neighbour read. Clean, and the barriers are needed.
__global__ void __launch_bounds__(128) stepped_tiles(const float *in, float *out) {
  __shared__ float s[128];
  for (int base = 0; base < 8; base += 2) {
    s[threadIdx.x] = in[base * 128 + threadIdx.x];
    __syncthreads();
    out[base * 128 + threadIdx.x] = s[(threadIdx.x + 1) % 128];
    __syncthreads();
  }
}

// The same without the trailing barrier: the next step's store races with the neighbour read.
__global__ void __launch_bounds__(128) stepped_tiles_racy(const float *in, float *out) {
  __shared__ float s[128];
  for (int base = 0; base < 8; base += 2) {
    s[threadIdx.x] = in[base * 128 + threadIdx.x];  // expect: shared-race
    __syncthreads();
    out[base * 128 + threadIdx.x] = s[(threadIdx.x + 1) % 128];
  }
}

// A run-time bound with a step of 128 is walked as one iteration: a note says so (the race
// between one iteration's read and the next one's store is not checked), and the barrier in it
// is not claimed redundant.
__global__ void __launch_bounds__(128) runtime_stride(const float *in, float *out, int n) {
  __shared__ float s[128];
  for (int base = 0; base < n; base += 128) {  // expect: race-undecided
    s[threadIdx.x] = in[base + threadIdx.x];
    __syncthreads();
    out[base + threadIdx.x] = s[(threadIdx.x + 1) % 128];
  }
}

// Array-reference and pointer-to-array parameters parse (they were parse errors), and a helper's
// pointer-to-rows parameter names the array it is given.
__device__ __forceinline__ float sum4(const float (&v)[4]) { return v[0] + v[1] + v[2] + v[3]; }

__device__ __forceinline__ void fill_row(float (*rows)[32], int r) { rows[r][threadIdx.x % 32] = 1.0f; }

__global__ void __launch_bounds__(128) array_params(const float *in, float *out) {
  __shared__ float tile[4][32];
  float r[4] = {in[0], in[1], in[2], in[3]};
  fill_row(tile, threadIdx.x / 32);
  __syncthreads();
  out[threadIdx.x] = sum4(r) + tile[(threadIdx.x / 32 + 1) % 4][threadIdx.x % 32];
}

// Without the barrier, another warp's row is read while it is filled.
__global__ void __launch_bounds__(128) array_params_racy(const float *in, float *out) {
  __shared__ float tile[4][32];
  fill_row(tile, threadIdx.x / 32);
  out[threadIdx.x] = tile[(threadIdx.x / 32 + 1) % 4][threadIdx.x % 32];  // expect: shared-race
}
