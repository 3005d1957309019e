extern "C" __global__ void __launch_bounds__(128, 1) k(const float* __restrict__ X, float* __restrict__ Y) {
  __shared__ float s[512];
  tl::cp_async_gs<16>((&(s[(((int)threadIdx.x) * 4)])), (&(X[(((int)threadIdx.x) * 4)])));
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  __syncthreads();
  Y[((int)threadIdx.x)] = s[((int)threadIdx.x)];
}
