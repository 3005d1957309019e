#!/usr/bin/env bash
# GPU evidence for the named-barrier mixing semantics (model/mixing.py), from the repository root on
# the device, carry [".carry"] (.carry/site312.tar.xz: ../shared/device/make-bundle.sh):
#   benchmarks/validation/named_ids_device.sh
# `pipelint verify --forced-schedule` on the shared-id twin (tests/fixtures/handwritten/
# named_ids_shared_sm_80_s0.cu: two warp groups, both `bar.sync 1, 128`) against TileLang's own
# CUDA for ids 1 and 2 as the twin; racecheck and synccheck; the record and evidence land in $OUT.
set -uo pipefail
mkdir -p /tmp/site
[ -d /tmp/site/tilelang ] || tar -C /tmp/site -xJf .carry/site312.tar.xz || exit 2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
if ! python3 -c "import pipelint.cuda.parser" 2>/dev/null; then
  rm -rf /tmp/plpkg && mkdir -p /tmp/plpkg/pipelint
  cp -r analyzer/. /tmp/plpkg/pipelint/
  ln -s "$PWD/plugins" /tmp/plpkg/pipelint/plugins
  ln -s "$PWD/grammars" /tmp/plpkg/pipelint/grammars
  ln -s "$PWD/docs/rules" /tmp/plpkg/pipelint/rule_docs
  cp pyproject.toml /tmp/plpkg/
  export PYTHONPATH=/tmp/plpkg:$PYTHONPATH
fi
export PIPELINT_CACHE_DIR=/tmp/pipelint-cache
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nvcc --version | tail -1
  compute-sanitizer --version | tail -1; date -u; } > "$OUT/environment.txt" 2>&1
t0=$(date +%s)
timeout 500 python3 -m pipelint verify \
  --cu tests/fixtures/handwritten/named_ids_shared_sm_80_s0.cu \
  --kernel-source tests/fixtures/causes/named_ids.py:named_ids_shared --num-stages 0 \
  --twin tests/fixtures/kernels/named_ids_sm_80_s0.cu --reference "lambda A: A[torch.arange(A.shape[0], device=A.device) ^ 64]" \
  --forced-schedule --evidence-dir /tmp/ev --jobs 8 --timeout 120 --format json -o "$OUT/verify_named_ids.json" \
  > "$OUT/verify_named_ids.log" 2>&1
echo "verify rc=$? in $(( $(date +%s) - t0 )) s" >> "$OUT/verify_named_ids.log"
tar -czf "$OUT/verify_named_ids_evidence.tgz" -C /tmp ev 2>/dev/null
tail -30 "$OUT/verify_named_ids.log"
