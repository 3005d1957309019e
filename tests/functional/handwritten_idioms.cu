// Spellings of hand-written kernels that a C++ front end resolves and the model now reads as
// TileLang's (held-out round 10, issue 31): constant macros, cooperative groups, PTX and
// pipeline-primitive cp.async, template helpers with value parameters, an asm barrier whose
// string ends in "\n", a helper called inside an expression, a pointer at blockDim.x.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define NB 128
#define HALF (NB / 2)

// A macro sizes the block and the tile: the neighbour's element before the barrier races.
__global__ void __launch_bounds__(NB) macro_sized(const float *in, float *out) {
  __shared__ float s[NB];
  s[threadIdx.x] = in[threadIdx.x];
  float nb = s[(threadIdx.x + HALF) % NB];  // expect: shared-race
  __syncthreads();
  out[threadIdx.x] = nb;
}

// block.sync() is __syncthreads(); tile.sync() of a 32-thread tile is __syncwarp().
__global__ void __launch_bounds__(128) groups_synced(const float *in, float *out) {
  __shared__ float s[128];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int lane = tile.thread_rank();
  s[threadIdx.x] = in[threadIdx.x];
  tile.sync();
  float v = s[threadIdx.x - lane + ((lane + 1) & 31)];
  block.sync();
  s[threadIdx.x] = v;
  block.sync();
  out[threadIdx.x] = s[127 - threadIdx.x];
}

// Without the block barrier the read of another warp's element races.
__global__ void __launch_bounds__(128) groups_unsynced(const float *in, float *out) {
  __shared__ float s[128];
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  s[threadIdx.x] = in[threadIdx.x];
  tile.sync();
  out[threadIdx.x] = s[127 - threadIdx.x];  // expect: shared-race
}

template <int N>
__device__ __forceinline__ void wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void copy16(float *dst, const float *src) {
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
}

// cp.async in PTX: `wait_group 1` with one group committed leaves it in flight at the read (and
// at the end of the kernel, a warning reported at the copy's call).
__global__ void __launch_bounds__(128) ptx_copy_too_shallow(const float *in, float *out) {
  __shared__ __align__(16) float buf[512];
  copy16(&buf[threadIdx.x * 4], in + threadIdx.x * 4);  // expect: missing-drain
  asm volatile("cp.async.commit_group;\n" ::);
  wait_groups<1>();  // expect: wait-too-shallow
  __syncthreads();
  out[threadIdx.x] = buf[(threadIdx.x * 4 + 4) & 511];
}

// The same with `wait_group 0` and the barrier: clean.
__global__ void __launch_bounds__(128) ptx_copy(const float *in, float *out) {
  __shared__ __align__(16) float buf[512];
  copy16(&buf[threadIdx.x * 4], in + threadIdx.x * 4);
  asm volatile("cp.async.commit_group;\n" ::);
  wait_groups<0>();
  __syncthreads();
  out[threadIdx.x] = buf[(threadIdx.x * 4 + 4) & 511];
}

// The pipeline primitives are the same instructions: the wait covers only the thread's own copy.
__global__ void __launch_bounds__(128) primitives(const float *in, float *out) {
  __shared__ float tile[128];
  __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], sizeof(float));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[threadIdx.x] = tile[(threadIdx.x + 1) & 127];  // expect: missing-barrier
}

// A named barrier written "bar.sync 1, 256;\n", as most kernels write it, pairs the two halves.
__global__ void __launch_bounds__(256) asm_newline(const float *in, float *out) {
  __shared__ float buf[128];
  if (threadIdx.x < 128) {
    buf[threadIdx.x] = in[threadIdx.x];
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
  } else {
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    out[threadIdx.x] = buf[255 - threadIdx.x];
  }
}

// A pointer one element short of blockDim.x overlaps the first array's last element.
__global__ void __launch_bounds__(128) overlapping_halves(const float *x, const float *y, float *out) {
  extern __shared__ float smem[];
  float *sx = smem;
  float *sy = smem + blockDim.x - 1;
  sx[threadIdx.x] = x[threadIdx.x];
  sy[threadIdx.x] = y[threadIdx.x];  // expect: shared-write-race
  __syncthreads();
  out[threadIdx.x] = sx[threadIdx.x] + sy[threadIdx.x];
}

// Producers and consumers hand a buffer over named barriers 1 (full) and 2 (empty): the
// consumers' arrival on 2 in iteration `it` pairs with the producers' wait in `it + 1`, and the
// arrival is guarded by `it + 1 < iters`, which the scenario's exact count decides.
__global__ void __launch_bounds__(256) loop_carried_pairs(const float *in, float *out, int iters) {
  __shared__ float buf[128];
  for (int it = 0; it < iters; ++it) {
    if (threadIdx.x < 128) {
      if (it > 0) asm volatile("bar.sync 2, 256;" ::: "memory");
      buf[threadIdx.x] = in[it * 128 + threadIdx.x];
      asm volatile("bar.arrive 1, 256;" ::: "memory");
    } else {
      asm volatile("bar.sync 1, 256;" ::: "memory");
      out[it * 128 + threadIdx.x - 128] = buf[255 - threadIdx.x];
      if (it + 1 < iters) asm volatile("bar.arrive 2, 256;" ::: "memory");
    }
  }
}
