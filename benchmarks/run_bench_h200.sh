#!/usr/bin/env bash
# The seed experiment on a GPU (run on the H200 device; see DEVELOPERS notes in README):
#   seed GEMM M=N=K=8192, fp16 in / fp32 accumulate, num_stages {1,2,3,4,6}, three tile configs,
#   against torch.matmul (cuBLAS); plus one non-GEMM kernel (GEMV, memory-bound) against torch.mv.
# Usage: benchmarks/run_bench_h200.sh OUT_DIR [smoke]
set -euo pipefail
OUT=${1:?output dir}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
if [ "${2:-}" = smoke ]; then
  $PY -m analyzer.cli bench examples/gemm.py:matmul --param M=1024 --param N=1024 --param K=1024 \
    --num-stages 2 3 --config block_M=128,block_N=128,block_K=32 --reference torch.matmul \
    --output "$OUT/smoke.json" --plot "$OUT/smoke.png"
  exit 0
fi
$PY -m analyzer.cli bench examples/gemm.py:matmul --param M=8192 --param N=8192 --param K=8192 \
  --num-stages 1 2 3 4 6 \
  --config block_M=128,block_N=128,block_K=32 \
  --config block_M=128,block_N=256,block_K=32,threads=256 \
  --config block_M=128,block_N=128,block_K=64 \
  --reference torch.matmul --output "$OUT/gemm_8192.json" --plot "$OUT/gemm_8192.png"
$PY -m analyzer.cli bench examples/gemv.py:gemv --param N=16384 --param K=16384 \
  --num-stages 1 2 3 4 6 --config block_N=128,block_K=64 --config block_N=64,block_K=128 \
  --bytes "N*K*2+K*2+N*2" --reference torch.mv --output "$OUT/gemv_16384.json" --plot "$OUT/gemv_16384.png"
