#!/bin/bash
# One device call (2026-11-29, twenty-fifth session): the 16-bit GELU's base-2 Phi against the
# previous kernels (build/old_kernels.cu.inc, carried: `git show <commit>:kernels.cu.inc`), builds
# alternated; the contiguous kernel's shape swept for GELU on the H200; bf16 rows of 16384 / 32768
# in one block of 1024 (gpuml__rows_tune[10] = 1) against the rule; then the tests the changes touch.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh gelu_rows_ab
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/test_ops build/test_conv > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
if [ -f build/old_kernels.cu.inc ]; then
    cc -std=c99 -O2 -DGPUML_KERNELS_INC='"build/old_kernels.cu.inc"' bench/bench_ops.c -o build/bench_ops_old -ldl -lpthread -lm || exit 1
fi
export BENCH_ITERS=100
{
for r in 1 2; do
    for b in bench_ops bench_ops_old; do
        [ -x build/$b ] || continue
        echo "== $b round $r"; ./build/$b gelu | grep -v '^#'
    done
done
for t in 128,1,1,1 512,1,1,1 256,2,1,1 1024,1,1,1 256,4,1,1; do
    echo "== bench_ops BENCH_EW_TUNE=$t"; BENCH_EW_TUNE=$t ./build/bench_ops gelu | grep -v '^#'
done
for r in 1 2; do
    echo "== rows rule"; BENCH_COLS=16384,32768 ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#'
    echo "== rows one block of 1024"; BENCH_COLS=16384,32768 BENCH_ROWS_TUNE=0,0,0,0,0,0,0,0,0,0,1 ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#'
done
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
{
for t in gelu_16bit_all f16_rows_specials short_rows =unary cpu_gpu_agree binary_rows; do ./build/test_ops $t 2>&1 | grep -v '^test_ops:' | grep -v ' passed, '; done
for t in residual_one_rounding residual_in_place fuzz_forward; do ./build/test_conv $t 2>&1 | grep -v '^test_conv:' | grep -v ' passed, '; done
} > "$O/tests.log" 2>&1
cat "$O/tests.log"
echo "total: $(( $(date +%s) - T0 )) s"
