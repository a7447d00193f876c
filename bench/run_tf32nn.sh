#!/bin/sh
# tf32 NN without the copy of B (bench/NOTES_matmul_sm90.md): in one device call, the benchmark next to
# cuBLAS (bench_matmul tf32nn, matmul_torch.py tf32nn), then the tests (forced_wgmma_tf32*: the NN
# kernel, the copy path, the NT/fp8 regression) and compute-sanitizer memcheck + racecheck on
# tf32_nn_few, side by side.  Logs to $OUT (or build/tf32nn).  Prebuilt build/test_matmul and
# build/bench_matmul are used when present.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build/tf32nn}; mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
[ -x build/test_matmul ] || make -s -j16 build/test_matmul || exit 1
[ -x build/bench_matmul ] || cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
timeout ${BENCH_TIMEOUT:-110} ./build/bench_matmul tf32nn > "$O/bench.log" 2>&1
timeout 60 python3 bench/matmul_torch.py tf32nn > "$O/torch.log" 2>&1
T=${TEST_TIMEOUT:-140}
(timeout $T ./build/test_matmul forced_wgmma_tf32 > "$O/tests.log" 2>&1; echo "rc=$?" >> "$O/tests.log") &
for tool in memcheck racecheck; do
    (GPUML_TEST_NO_FAULT=1 timeout $T compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 \
        ./build/test_matmul =tf32_nn_few > "$O/san_$tool.log" 2>&1; echo "rc=$?" >> "$O/san_$tool.log") &
done
wait
cat "$O/bench.log" "$O/torch.log"
grep -E "passed|FAIL|fail|cases ran|rc=" "$O/tests.log" | head -40
for tool in memcheck racecheck; do echo "== $tool"; grep -E "SUMMARY|passed|FAIL|rc=" "$O/san_$tool.log" | head; done
