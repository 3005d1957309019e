// A suppression on a line where its rule reports nothing, and one that names no rule.
extern "C" __global__ void __launch_bounds__(128, 1) k(float* __restrict__ out) {
  out[((int)threadIdx.x)] = 1.0f;  // pipelint: ignore[missing-barrier]  // expect: unused-suppression
  out[((int)threadIdx.x) + 128] = 2.0f;  // pipelint: ignore[]  // expect: unused-suppression
}
