// Plain UTF-8 text: read and checked.
extern "C" __global__ void k(float* out) {
  out[0] = 1.0f;
}
