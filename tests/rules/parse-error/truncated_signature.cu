// A kernel cut off mid-signature: nothing in the file is checked.
extern "C" __global__ void k(float* out {  // expect: parse-error
  out[0] = 1.0f;
}
