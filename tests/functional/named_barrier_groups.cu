// Two warp groups each synchronise on named barrier 3 with 128 threads: bar.sync completes per
// 128 arrivals, so neither waits for the other, and no block barrier is divergent.
extern "C" __global__ void __launch_bounds__(256, 1) k(float* __restrict__ out) {
  __shared__ float buf[256];
  if (((int)threadIdx.x) < 128) {
    buf[((int)threadIdx.x)] = 1.0f;
    tl::__sync_thread_partial(3, 128);
    out[((int)threadIdx.x)] = buf[(127 - ((int)threadIdx.x))];
  } else {
    buf[((int)threadIdx.x)] = 2.0f;
    tl::__sync_thread_partial(3, 128);
    out[((int)threadIdx.x)] = buf[(383 - ((int)threadIdx.x))];
  }
}
