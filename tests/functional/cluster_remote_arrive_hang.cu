// A 2-CTA kernel: both CTAs arrive on CTA 0's barrier (`arrive(0u)`), but both wait on their own:
// CTA 1's loaded[0] never receives an arrival, and its threads wait forever.
extern "C" __global__ void __launch_bounds__(64, 1) k(float* __restrict__ out) {
  __shared__ __align__(16) uint64_t loaded_mem[1];
  auto loaded = reinterpret_cast<Barrier*>(loaded_mem);
  if (tl::tl_shuffle_elect<0>()) {
    loaded[0].init(128);
  }
  tl::fence_barrier_init();
  tl::cluster_sync();
  loaded[0].arrive(0u);
  loaded[0].wait(0);  // expect: mbarrier-deadlock
  out[((int)threadIdx.x)] = 1.0f;
}
