// Values the model bounds instead of simulating, and a call it does not know.
extern "C" __global__ void __launch_bounds__(100000000, 1) k(float* __restrict__ out) {  // expect: implausible-value
  __shared__ float buf[1024];
  tl::my_custom_copy((&(buf[((int)threadIdx.x)])), out);  // expect: unknown-intrinsic
  __syncthreads();
  out[((int)threadIdx.x)] = buf[((int)threadIdx.x)];
}
