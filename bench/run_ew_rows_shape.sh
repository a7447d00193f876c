#!/bin/bash
# One device call (2026-11-29, twenty-fifth session): the contiguous elementwise kernel's block of
# 128 threads against the rule's 256 (add, mul, gelu, AdamW; f32 and bf16), and long rows in one
# block of 1024 at 64 bytes a thread (gpuml__rows_tune[10] = 1, [5] = 64: FULL for 16-bit rows of
# 32768) against the rule, alternated twice; then test_ops gelu_16bit_all.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh ew_rows_shape
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/test_ops > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100
{
for r in 1 2; do
    for t in 0,0,0,0 128,1,1,1; do
        echo "== BENCH_EW_TUNE=$t"; BENCH_EW_TUNE=$t ./build/bench_ops add,mul,gelu,adamw | grep -v '^#'
    done
done
for r in 1 2; do
    echo "== rows rule"; BENCH_COLS=8192,16384,32768 ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#'
    echo "== rows one block of up to 1024, 64 bytes a thread"; BENCH_COLS=8192,16384,32768 BENCH_ROWS_TUNE=0,0,0,0,0,64,0,0,0,0,1 ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#'
done
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
./build/test_ops gelu_16bit_all 2>&1 | tail -n 3
echo "total: $(( $(date +%s) - T0 )) s"
