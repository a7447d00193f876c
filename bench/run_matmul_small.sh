#!/bin/sh
# small-M (decode) matmul in one device call: the matmul tests, compute-sanitizer (memcheck,
# racecheck) on the small-M cases, then gpuml and cuBLAS (PyTorch) on the same shapes in the
# same run; FULL_TEST=1 then runs all of test_matmul.  SWEEP=1 adds the kernel-shape sweep (bench_matmul small sweep).  Logs go to $OUT
# (default build/small_out), packed into $OUT/logs.tgz.
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/small_out}; mkdir -p "$OUT" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache} PYTHONUNBUFFERED=1
L=$OUT/logs; mkdir -p "$L"
run() { t=$1; shift; timeout "$t" "$@"; rc=$?; [ $rc -ne 0 ] && echo "EXIT $rc: $*"; return 0; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$L/build.txt" 2>&1
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
make -s build/test_matmul >> "$L/build.txt" 2>&1 || { cat "$L/build.txt"; exit 1; }
run ${T_TEST:-150} ./build/test_matmul small_m > "$L/test_small.txt" 2>&1
grep -E "FAIL|skip|passed" "$L/test_small.txt" | head -20
run ${T_BENCH:-100} ./build/bench_matmul small ${SWEEP:+sweep} > "$L/bench_gpuml.txt" 2>&1
run ${T_TORCH:-60} python3 bench/matmul_small_torch.py > "$L/bench_torch.txt" 2>&1
grep -E "copy|^small|EXIT" "$L/bench_gpuml.txt" | grep -v "rt[0-9]" ; grep -E "copy|^torch|Error|EXIT" "$L/bench_torch.txt"
grep -E "rt[0-9]" "$L/bench_gpuml.txt" | sort -k5,5n -k6,6n -k7,7n -k12,12g | awk '{k=$5" "$6" "$7; if (k!=p) {print "best: " $0; p=k}}'
if command -v compute-sanitizer > /dev/null 2>&1; then
    run ${T_SAN:-60} compute-sanitizer --tool memcheck --print-limit 10 ./build/test_matmul small_m > "$L/memcheck.txt" 2>&1
    run ${T_SAN:-60} compute-sanitizer --tool racecheck --print-limit 10 ./build/test_matmul small_m_shapes > "$L/racecheck.txt" 2>&1
    grep -HE "ERROR SUMMARY|RACECHECK SUMMARY|passed|EXIT" "$L/memcheck.txt" "$L/racecheck.txt"
else echo "no compute-sanitizer on PATH"; fi
[ -n "$FULL_TEST" ] && { run ${T_FULL:-120} ./build/test_matmul > "$L/test_matmul.txt" 2>&1; grep -E "FAIL|passed|EXIT" "$L/test_matmul.txt" | head; }
tar -czf "$OUT/logs.tgz" -C "$OUT" logs
