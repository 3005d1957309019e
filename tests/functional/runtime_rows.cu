// Loops bounded by kernel arguments are symbols of the sets, not trip-count scenarios (issue 31,
// item 5), and products of a thread index with an argument are decided as integers (C's signed
// arithmetic does not wrap). Before, `for (x = 0; x < d; ++x)` took the pipeline scenario's
// count (x in [0, 1]) with `d` free: thread t's row `t * d + x` "met" thread t + 1's at d = 1, a
// false race; as 64-bit vectors the product timed out.

// Each thread's own row, for every d: no hazard.
__global__ void own_rows(const float *in, float *out, int d) {
  extern __shared__ float row[];
  int tx = threadIdx.x;
  for (int x = 0; x < d; x++) {
    row[tx * d + x] = in[tx * d + x];
  }
  float acc = 0.0f;
  for (int x = 0; x < d; x++) {
    acc += row[tx * d + x];
  }
  out[tx] = acc;
}

// The next thread's row with no barrier in between: a race for every d >= 1.
__global__ void next_row(const float *in, float *out, int d) {
  extern __shared__ float row[];
  int tx = threadIdx.x;
  for (int x = 0; x < d; x++) {
    row[tx * d + x] = in[tx * d + x];
  }
  float acc = 0.0f;
  for (int x = 0; x < d; x++) {  // expect: shared-race
    acc += row[(tx + 1) * d + x];
  }
  out[tx] = acc;
}

// Tiles of a stride that is an argument: iteration i reads and writes row i of width Br. Two
// iterations meet only if the block has more threads than Br, which a launch that fits the tile
// never has: a note that says so, not a race.
__global__ void argument_tiles(float *m, int Br, int Tr) {
  for (int i = 0; i < Tr; i++) {
    float v = m[Br * i + threadIdx.x];
    m[Br * i + threadIdx.x] = v * 2.0f;  // expect: launch-assumed
  }
}

// The same tiles with a constant stride of 16 under a 128-thread block: thread 16 of iteration 0
// and thread 0 of iteration 1 touch one element, in every launch.
__global__ void __launch_bounds__(128) constant_tiles(float *m, int Tr) {
  for (int i = 0; i < Tr; i++) {
    float v = m[16 * i + threadIdx.x];
    m[16 * i + threadIdx.x] = v * 2.0f;  // expect: global-race
  }
}
