// Barriers written in PTX: `bar.sync 0` is __syncthreads(); `bar.sync id, n` / `bar.arrive id, n` a
// named barrier for n threads. The producer half arrives, the consumer half waits: 128 + 128 = 256.
// Without __launch_bounds__, the block is as large as the text needs (the named barrier's 256 threads).
__global__ void handoff(float *out) {
  __shared__ float s[256];
  if (threadIdx.x < 128) {
    s[threadIdx.x] = out[threadIdx.x];
    asm volatile("bar.arrive 1, 256;" ::: "memory");
  } else {
    asm volatile("bar.sync %0, %1;" :: "r"(1), "r"(256) : "memory");
    out[threadIdx.x] = s[threadIdx.x - 128];
  }
}

__global__ void consumers_only(float *out) {
  __shared__ float s[256];
  if (threadIdx.x < 128) {
    s[threadIdx.x] = out[threadIdx.x];
  } else {
    asm volatile("bar.sync %0, %1;" :: "r"(1), "r"(128) : "memory");  // expect: barrier-scope
    out[threadIdx.x] = s[threadIdx.x - 128];
  }
}

__global__ void whole_block(float *out) {
  __shared__ float s[128];
  s[threadIdx.x] = out[threadIdx.x];
  asm volatile("bar.sync 0;" ::: "memory");
  out[threadIdx.x] = s[(threadIdx.x + 1) % 128];
  int any = __syncthreads_or(out[threadIdx.x] > 0.f);
  s[threadIdx.x] = any;
}
