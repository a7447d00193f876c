#!/bin/bash
# Third device call (2026-11-29, twenty-sixth session): rows without bounds checks wherever every
# vector lies in the row (gpuml__rows_tune[11] = 2: also with WBE and at 128 bytes a thread, where
# the rule keeps the checks) against the rule, rows of 8192 / 16384 / 32768 in f32, bf16 and f16, two
# rounds alternated; then the GPU tests of the conv suites and test_ops (common.cuh changed for every
# family; the CPU f16 paths changed under test_ops' CPU context).
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh s26c
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100 BENCH_COLS=8192,16384,32768 BENCH_DTYPES=f32,bf16,f16
{
for r in 1 2; do
    echo "== rule, round $r"; ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#\|^device'
    echo "== [11]=2, round $r"; BENCH_ROWS_TUNE=0,0,0,0,0,0,0,0,0,0,0,2 ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#\|^device\|overrides'
done
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
OUT=$O/t SUITES="test_conv test_conv_igemm test_conv_tf32 test_ops" JOBS=10 T_TIMEOUT=300 tests/run_gpu_quick.sh 2>&1 | tail -25
echo "total: $(( $(date +%s) - T0 )) s"
