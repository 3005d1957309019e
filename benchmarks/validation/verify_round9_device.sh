#!/usr/bin/env bash
# `pipelint verify` on two defects of TileLang 0.1.15's own output found by held-out round 9 (issue
# 31), on the GPU machine from the repository root, carry [".carry"]:
#   benchmarks/validation/verify_round9_device.sh
# * vote_count (sm_90): `__syncthreads_count` in the consumers' branch of the warp-specialised loop,
#   which the producer never reaches: pipelint reports divergent-barrier and mbarrier-deadlock (a hang);
# * wide_block (sm_90): `__launch_bounds__(1152)`, above CUDA's 1024 threads per block: no launch succeeds.
# Writes $OUT/verify_<case>.json and .log.
set -uo pipefail
cd "$(dirname "$0")/../.."
. benchmarks/validation/device_env.sh
C=tests/fixtures/causes
run() {  # case, kernel, reference, tools
  local t0; t0=$(date +%s)
  timeout 250 python3 -m pipelint verify "$2" --num-stages 2 --arch sm_90 --tools "$4" --reference "$3" \
    --timeout 30 --format json -o "$out/verify_$1.json" > "$out/verify_$1.log" 2>&1
  echo "verify rc=$? in $(( $(date +%s) - t0 )) s" >> "$out/verify_$1.log"
  tail -30 "$out/verify_$1.log"
}
run vote_count $C/vote_count.py:vote_count 'lambda X: (X > 0).sum(1).int()' synccheck
run wide_block $C/wide_block.py:wide_block 'lambda x: x.view(8, 1024).sum(0)' racecheck
