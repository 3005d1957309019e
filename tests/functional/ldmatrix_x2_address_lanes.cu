// ldmatrix .x2 takes its row addresses from lanes 0-15 only (PTX ISA: "threads 0-15 supply the
// addresses"); lanes 16-31 compute an address too, here into the upper half of S, but it touches
// nothing. Those lanes store into that upper half with no barrier before the ldmatrix: no race.
// (Issue 31; at 58e98a9 the rows were taken from every lane and this was a false shared-race.)
#include <cuda.h>
#include <tl_templates/cuda/common.h>
#include <tl_templates/cuda/ldsm.h>
extern "C" __global__ void __launch_bounds__(32, 1) k(half_t* __restrict__ out) {
  extern __shared__ __align__(16) half_t S[];
  uint32_t frag[2];
  if (16 <= ((int)threadIdx.x)) {
    *(uint4*)(S + (512 + ((((int)threadIdx.x) - 16) * 8))) = make_uint4(0, 0, 0, 0);
  }
  tl::ptx_ldmatrix_x2((&(S[(((((int)threadIdx.x) & 15) * 8) + ((((int)threadIdx.x) >> 4) * 512))])), (&(frag[0])));
  out[((int)threadIdx.x)] = ((half_t*)frag)[0];
}
