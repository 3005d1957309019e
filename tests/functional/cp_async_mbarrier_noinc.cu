// cp.async completion tracked by an mbarrier (`cp.async.mbarrier.arrive.noinc`) instead of commit
// groups: the copies are not "uncommitted", and each thread's noinc arrival counts towards init(128).
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ src, float* __restrict__ out) {
  __shared__ float buf[128];
  __shared__ __align__(16) uint64_t bar_mem[1];
  auto bar = reinterpret_cast<Barrier*>(bar_mem);
  if (tl::tl_shuffle_elect<0>()) {
    bar[0].init(128);
  }
  tl::fence_barrier_init();
  __syncthreads();
  tl::cp_async_gs<4>((&(buf[((int)threadIdx.x)])), (&(src[((int)threadIdx.x)])));
  tl::mbarrier_cp_async_arrive_noinc(bar[0]);
  bar[0].wait(0);
  out[((int)threadIdx.x)] = buf[((int)threadIdx.x)];
}
