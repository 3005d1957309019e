// expect: no-kernel
// A header: device helpers, no __global__ kernel with a body.
__device__ int twice(int x) { return 2 * x; }
