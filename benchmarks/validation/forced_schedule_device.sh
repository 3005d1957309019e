#!/usr/bin/env bash
# The device calls of docs/validation/forced_schedule.md, from the repository root, carry [".carry"]
# (.carry/site312.tar.xz: the bundle; .carry/plans.tar.xz: PLAN_DIRs written by `forced_schedule.py
# plan` on the CPU side; .carry/corpus/: the corpus kernels of benchmarks/known_hazards.json):
#   benchmarks/validation/forced_schedule_device.sh classes   # the class twins, early releases, known hazards
#                                                             # and `pipelint verify --forced-schedule`
#   benchmarks/validation/forced_schedule_device.sh mutants   # the planted-defect run
# Everything lands in $OUT as at most 8 files (the device's limit): JSON records, logs, tarballs.
set -uo pipefail
step=${1:?classes or mutants}
mkdir -p /tmp/site /tmp/fsplans
[ -d /tmp/site/tilelang ] || tar -C /tmp/site -xJf .carry/site312.tar.xz || exit 2
tar -C /tmp/fsplans -xJf .carry/plans.tar.xz || exit 2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nvcc --version | tail -1
  compute-sanitizer --version | tail -1; date -u; } > "$OUT/environment.txt" 2>&1
if [ "$step" = classes ]; then
  (timeout 520 benchmarks/validation/forced_schedule.sh run /tmp/fsplans/fs_plan "$OUT/classes" --jobs 16 \
     --timeout 150 > "$OUT/classes.log" 2>&1; echo "driver rc=$?" >> "$OUT/classes.log") &
  sleep 30                                   # forced_schedule.sh has mapped the package into /tmp/plpkg
  t0=$(date +%s)
  PYTHONPATH=/tmp/plpkg:$PYTHONPATH timeout 430 python3 -m pipelint verify \
    --cu tests/fixtures/handwritten/cond_writers_nobarrier.cu \
    --kernel-source tests/fixtures/causes/cond_writers.py:cond_writers --num-stages 0 \
    --forced-schedule --evidence-dir /tmp/ev --jobs 4 --timeout 150 --format json -o "$OUT/verify.json" \
    > "$OUT/verify.log" 2>&1
  echo "verify rc=$? in $(( $(date +%s) - t0 )) s" >> "$OUT/verify.log"
  wait
  tar -czf "$OUT/verify_evidence.tgz" -C /tmp ev 2>/dev/null
  dir=classes
else
  timeout 560 benchmarks/validation/forced_schedule.sh run /tmp/fsplans/fs_mut "$OUT/mutants" --jobs 16 \
    --timeout 60 > "$OUT/mutants.log" 2>&1; echo "driver rc=$?" >> "$OUT/mutants.log"
  dir=mutants
fi
[ -d "$OUT/$dir/logs" ] && tar -czf "$OUT/${dir}_logs.tgz" -C "$OUT/$dir" logs && rm -rf "$OUT/$dir/logs"
[ -f "$OUT/$dir/forced_schedule.json" ] && mv "$OUT/$dir/forced_schedule.json" "$OUT/$dir.json" && rmdir "$OUT/$dir"
tail -30 "$OUT/$dir.log"; [ -f "$OUT/verify.log" ] && tail -15 "$OUT/verify.log"
ls -la "$OUT"
