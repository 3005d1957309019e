#!/usr/bin/env bash
# `pipelint verify --forced-schedule` on two hazards found in TileLang 0.1.15's own output (issue 31,
# held-out round 7), on the GPU machine from the repository root, carry [".carry"]:
#   benchmarks/validation/verify_tilelang_hazards_device.sh
# * window_range: a pipelined loop with a run-time start, whose epilogue cp_async_wait<0> is under
#   `(bool)0 & (bool)0` (the epilogue reads the last tiles in flight); twin: the wait unconditional;
# * chunked_epilogue: a column-chunked epilogue through one shared tile with no barrier between one
#   chunk's reads of Cs and the next chunk's stores; twin: a __syncthreads at the end of the chunk loop.
# Writes $OUT/verify_<case>.json, .log and an evidence tarball per case.
set -uo pipefail
cd "$(dirname "$0")/../.."
. benchmarks/validation/device_env.sh
H=tests/fixtures/handwritten
C=tests/fixtures/causes
window_ref='lambda A, B: torch.stack([sum(A[k*32:(k+1)*32].float().T @ B[k*32:(k+1)*32].float() for k in range(max(0, b - 3), b + 1)) for b in range(8)])'
run() {  # case, --cu, --kernel-source, stages, twin, reference
  local t0; t0=$(date +%s)
  timeout 280 python3 -m pipelint verify --cu "$2" --kernel-source "$3" --num-stages "$4" --arch sm_80 --tools racecheck \
    --twin "$5" --reference "$6" --forced-schedule --evidence-dir "/tmp/ev_$1" --timeout 60 \
    --format json -o "$out/verify_$1.json" > "$out/verify_$1.log" 2>&1
  echo "verify rc=$? in $(( $(date +%s) - t0 )) s" >> "$out/verify_$1.log"
  tar --exclude='*.pt' -czf "$out/verify_$1_evidence.tgz" -C /tmp "ev_$1" 2>/dev/null
  tail -25 "$out/verify_$1.log"
}
run window_range $H/window_range_sm_80_s3.cu $C/window_range.py:window_range 3 \
  $H/window_range_waited_sm_80_s3.cu "$window_ref"
run chunked_epilogue $H/chunked_epilogue_sm_80_s2.cu $C/chunked_epilogue.py:chunked_epilogue 2 \
  $H/chunked_epilogue_synced_sm_80_s2.cu torch.matmul
