// A complete kernel: it parses.
extern "C" __global__ void k(float* out) {
  out[0] = 1.0f;
}
