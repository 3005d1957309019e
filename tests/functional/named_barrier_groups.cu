// Two warp groups each synchronise themselves on named barrier 3 with 128 threads, at the same time:
// bar.sync completes a generation with ANY 128 arrivals, so warps of both groups can pass together
// and neither group's read is ordered after its own stores (model/mixing.py; the same shape on the
// GPU under a forced schedule changed 32 outputs: docs/validation/named_ids_verify.json). Before
// session ten this file was the clean case "each group fills the count alone"; that was wrong.
extern "C" __global__ void __launch_bounds__(256, 1) k(float* __restrict__ out) {
  __shared__ float buf[256];
  if (((int)threadIdx.x) < 128) {
    buf[((int)threadIdx.x)] = 1.0f;
    tl::__sync_thread_partial(3, 128);  // expect: named-barrier-count
    out[((int)threadIdx.x)] = buf[(127 - ((int)threadIdx.x))];  // expect: shared-race
  } else {
    buf[((int)threadIdx.x)] = 2.0f;
    tl::__sync_thread_partial(3, 128);  // expect: named-barrier-count
    out[((int)threadIdx.x)] = buf[(383 - ((int)threadIdx.x))];  // expect: shared-race
  }
}
