// A kernel with a body: there is something to check.
extern "C" __global__ void k(float* out) {
  out[0] = 1.0f;
}
