#!/usr/bin/env bash
# The device calls of docs/validation/forced_schedule.md, from the repository root, carry [".carry"]
# (.carry/site312.tar.xz: the bundle; .carry/plans.tar.xz: PLAN_DIRs written by `forced_schedule.py
# plan` on the CPU side; .carry/corpus/: the corpus kernels of benchmarks/known_hazards.json):
#   benchmarks/validation/forced_schedule_device.sh PLAN NAME [--verify] [driver options]
#     PLAN: a folder of plans.tar.xz (fs_plan, fs_round2); NAME: what the record is called in $OUT;
#     --verify: meanwhile, `pipelint verify --forced-schedule` on the conditional-writers fixture.
# Everything lands in $OUT as at most 8 files (the device's limit): JSON records, logs, tarballs.
set -uo pipefail
plan=${1:?PLAN}; name=${2:?NAME}; shift 2
verify=0; if [ "${1:-}" = --verify ]; then verify=1; shift; fi
mkdir -p /tmp/site /tmp/fsplans
[ -d /tmp/site/tilelang ] || tar -C /tmp/site -xJf .carry/site312.tar.xz || exit 2
tar -C /tmp/fsplans -xJf .carry/plans.tar.xz || exit 2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nvcc --version | tail -1
  compute-sanitizer --version | tail -1; date -u; } > "$OUT/environment.txt" 2>&1
(timeout 540 benchmarks/validation/forced_schedule.sh run "/tmp/fsplans/$plan" "$OUT/$name" "$@" \
   > "$OUT/$name.log" 2>&1; echo "driver rc=$?" >> "$OUT/$name.log") &
if [ $verify = 1 ]; then
  sleep 30                                   # forced_schedule.sh has mapped the package into /tmp/plpkg
  t0=$(date +%s)
  PYTHONPATH=/tmp/plpkg:$PYTHONPATH timeout 480 python3 -m pipelint verify \
    --cu tests/fixtures/handwritten/cond_writers_nobarrier.cu \
    --kernel-source tests/fixtures/causes/cond_writers.py:cond_writers --num-stages 0 \
    --forced-schedule --evidence-dir /tmp/ev --jobs 4 --timeout 150 --format json -o "$OUT/verify.json" \
    > "$OUT/verify.log" 2>&1
  echo "verify rc=$? in $(( $(date +%s) - t0 )) s" >> "$OUT/verify.log"
  tar -czf "$OUT/verify_evidence.tgz" -C /tmp ev 2>/dev/null
fi
wait
[ -d "$OUT/$name/logs" ] && tar -czf "$OUT/${name}_logs.tgz" -C "$OUT/$name" logs && rm -rf "$OUT/$name/logs"
[ -f "$OUT/$name/forced_schedule.json" ] && mv "$OUT/$name/forced_schedule.json" "$OUT/$name.json" && rmdir "$OUT/$name"
tail -12 "$OUT/$name.log"; [ -f "$OUT/verify.log" ] && tail -15 "$OUT/verify.log"
ls -la "$OUT"
