// A 2-CTA kernel: both CTAs arrive on CTA 0's barrier (`arrive(0u)`), 64 + 64 threads for init(128),
// and only CTA 0 waits on it. One CTA's trace sees half the arrivals; the pair run sees them all.
extern "C" __global__ void __launch_bounds__(64, 1) k(float* __restrict__ out) {
  __shared__ __align__(16) uint64_t loaded_mem[1];
  auto loaded = reinterpret_cast<Barrier*>(loaded_mem);
  if (tl::tl_shuffle_elect<0>()) {
    loaded[0].init(128);
  }
  tl::fence_barrier_init();
  tl::cluster_sync();
  loaded[0].arrive(0u);
  if (tl::block_rank_in_cluster() == 0) {
    loaded[0].wait(0);
  }
  out[((int)threadIdx.x)] = 1.0f;
}
