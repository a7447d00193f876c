#!/bin/bash
# One device call for the profiler / graphs work: build, GPU tests, benchmarks, sample table,
# compute-sanitizer memcheck on test_profile.  Logs under build/dev, packed into $OUT/logs.tgz.
# QUICK=1 skips the PyTorch reference and the sample table.
cd "$(dirname "$0")/.." || exit 1
export GPUML_CACHE_DIR=$PWD/build/cache
D=$PWD/build/dev
mkdir -p "$D"
OUT=${OUT:-$D}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( make -s -j16 build/test_core build/test_ops build/test_matmul build/test_profile > "$D/build.log" 2>&1 ) &
cc -std=c99 -O2 -Wall -Wextra -Werror bench/bench_graphs.c -o build/bench_graphs -ldl -lpthread -lm 2>> "$D/build.log" &
cc -std=c99 -O2 -Wall -Wextra -Werror bench/profile_sample.c -o build/profile_sample -ldl -lpthread -lm 2>> "$D/build.log" &
wait
[ -x build/test_profile ] || { tail -30 "$D/build.log"; exit 1; }
pack() { tar -czf "$OUT/logs.tgz" -C "$D" . 2>/dev/null; }
timeout 45 ./build/test_profile > "$D/test_profile.log" 2>&1; echo "test_profile rc=$?"
grep -E 'FAIL|^    |passed' "$D/test_profile.log" | head -40
timeout 25 ./build/bench_graphs > "$D/bench_graphs.log" 2>&1; cat "$D/bench_graphs.log"
if [ -z "$QUICK" ]; then
    timeout 40 python3 bench/bench_graphs_torch.py > "$D/bench_graphs_torch.log" 2>&1; tail -3 "$D/bench_graphs_torch.log"
    timeout 20 ./build/profile_sample "$D/trace.json" > "$D/profile_sample.log" 2>&1; cat "$D/profile_sample.log"
fi
pack
# the other suites and the sanitizer side by side (independent processes)
T=${SUITE_TIMEOUT:-170}
for t in test_core test_ops test_matmul; do timeout $T ./build/$t > "$D/$t.log" 2>&1 & done
GPUML_TEST_NO_FAULT=1 timeout $T compute-sanitizer --tool memcheck --error-exitcode 9 ./build/test_profile > "$D/memcheck.log" 2>&1 &
wait
for t in test_core test_ops test_matmul; do echo "$t: $(tail -n 1 "$D/$t.log")"; grep -E 'FAIL' "$D/$t.log" | head -5; done
echo "memcheck test_profile: $(grep 'ERROR SUMMARY' "$D/memcheck.log" | tail -n 1) | $(grep -E 'passed' "$D/memcheck.log" | tail -n 1)"
pack
