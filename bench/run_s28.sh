#!/bin/bash
# Session 28, first call: the stream-K tail of the wgmma matmul kernels.  Build; every test_matmul
# test, test_conv_tf32 wgmma_1x1_split and test_conv bwd_data_up2 (they share the tail counters),
# memcheck / racecheck of streamk_few, memcheck of splitk_few and tf32_nn_few; then bench_matmul
# streamk (the rule and the tail off, alternated) and matmul_torch.py streamk (NO_TORCH=1: not).
# TESTS="a b": those test_matmul tests only.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
gpu_setup s28 build/test_matmul build/test_conv_tf32 build/test_conv || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_matmul streamk_few\ns racecheck test_matmul streamk_few\ns memcheck test_matmul splitk_few\ns memcheck test_matmul tf32_nn_few\n' >> "$jobs"
for t in ${TESTS:-$(./build/test_matmul --list)}; do echo "t test_matmul $t" >> "$jobs"; done
[ -z "${TESTS:-}" ] && printf 't test_conv_tf32 wgmma_1x1_split\nt test_conv bwd_data_up2\n' >> "$jobs"
[ -z "${NO_TESTS:-}" ] && gpu_jobs "$jobs"
echo "tests: $(( $(date +%s) - T0 )) s"
timeout 200 ./build/bench_matmul streamk 2>&1 | tee "$O/bench.log"
[ -z "${NO_TORCH:-}" ] && timeout 150 python3 bench/matmul_torch.py streamk 2>&1 | tee "$O/torch.log"
echo "all: $(( $(date +%s) - T0 )) s"
