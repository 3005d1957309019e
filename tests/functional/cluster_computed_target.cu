// A cluster kernel whose remote arrival names its CTA by a value of the launch (`blockIdx.x & 1`):
// which barrier it reaches is not in the text, so the cluster's barriers are left unanalysed.
extern "C" __global__ void __launch_bounds__(64, 1) k(float* __restrict__ out) {
  __shared__ __align__(16) uint64_t loaded_mem[1];
  auto loaded = reinterpret_cast<Barrier*>(loaded_mem);
  if (tl::tl_shuffle_elect<0>()) {
    loaded[0].init(128);  // expect: mbarrier-not-analyzed
  }
  tl::fence_barrier_init();
  tl::cluster_sync();
  loaded[0].arrive((uint)(((int)blockIdx.x) & 1));
  loaded[0].wait(0);
  out[((int)threadIdx.x)] = 1.0f;
}
