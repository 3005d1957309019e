// The same kind of comment where its rule does report: the suppression is used.
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ out) {
  __shared__ float s[128];
  s[((int)threadIdx.x)] = 1.0f;
  out[((int)threadIdx.x)] = s[(127 - ((int)threadIdx.x))];  // pipelint: ignore[shared-race]
}
