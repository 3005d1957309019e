#!/usr/bin/env bash
# `pipelint verify --forced-schedule` (plugins/verify.py, TileLang's callback) on the early mbarrier
# release, on the GPU machine from the repository root, carry [".carry"]:
#   benchmarks/validation/verify_release_early_device.sh [--jobs 16]
# Its STRETCH delays are compared with the stretched twin (forced_schedule_verdict.comparisons).
# Writes $OUT/verify_release_early.json, .log and the evidence tarball.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/site
[ -d /tmp/site/tilelang ] || tar -C /tmp/site -xJf .carry/site312.tar.xz || exit 2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 PIPELINT_CACHE_DIR=/tmp/pipelint-cache
rm -rf /tmp/plpkg && mkdir -p /tmp/plpkg/pipelint          # the package as setup.py maps it
cp -r analyzer/. /tmp/plpkg/pipelint/
ln -s "$PWD/plugins" /tmp/plpkg/pipelint/plugins
ln -s "$PWD/grammars" /tmp/plpkg/pipelint/grammars
ln -s "$PWD/docs/rules" /tmp/plpkg/pipelint/rule_docs
cp pyproject.toml /tmp/plpkg/
export PYTHONPATH=/tmp/plpkg:$PYTHONPATH
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
timeout 560 python3 -m pipelint verify --cu tests/fixtures/handwritten/release_early_sm_90_s3.cu \
  --kernel-source examples/gemm.py:matmul --num-stages 3 --tools racecheck \
  --twin tests/fixtures/kernels/gemm_f16_sm_90_s3.cu --forced-schedule --evidence-dir /tmp/ev \
  --timeout 120 "$@" --format json -o "$out/verify_release_early.json" > "$out/verify_release_early.log" 2>&1
echo "verify rc=$? in $(( $(date +%s) - t0 )) s" >> "$out/verify_release_early.log"
tar --exclude='*.pt' -czf "$out/verify_release_early_evidence.tgz" -C /tmp ev 2>/dev/null
tail -20 "$out/verify_release_early.log"
