// The same addresses with ldmatrix .x4: lanes 16-31 now supply rows too, in the upper half of S
// that those lanes store without a barrier before the ldmatrix: the warp reads rows other lanes
// are writing (a race; the stores of lanes 16-31 reach the other lanes' registers).
#include <cuda.h>
#include <tl_templates/cuda/common.h>
#include <tl_templates/cuda/ldsm.h>
extern "C" __global__ void __launch_bounds__(32, 1) k(half_t* __restrict__ out) {
  extern __shared__ __align__(16) half_t S[];
  uint32_t frag[4];
  if (16 <= ((int)threadIdx.x)) {
    *(uint4*)(S + (512 + ((((int)threadIdx.x) - 16) * 8))) = make_uint4(0, 0, 0, 0);
  }
  tl::ptx_ldmatrix_x4((&(S[(((((int)threadIdx.x) & 15) * 8) + ((((int)threadIdx.x) >> 4) * 512))])), (&(frag[0])));  // expect: shared-race
  out[((int)threadIdx.x)] = ((half_t*)frag)[0];
}
