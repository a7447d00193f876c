#!/bin/bash
# One device call (2026-11-29, twenty-fifth session): the row kernels with bf16 elements taken from
# their 32-bit words against the previous kernels (build/old_kernels.cu.inc, carried), builds
# alternated twice; the contiguous elementwise kernel at 64 / 96 / 128 threads for GELU; then the
# row tests.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh rows_words
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/test_ops > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -DGPUML_KERNELS_INC='"build/old_kernels.cu.inc"' bench/bench_ops.c -o build/bench_ops_old -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100
{
for r in 1 2; do
    for b in bench_ops bench_ops_old; do
        echo "== $b round $r"; ./build/$b softmax,layernorm,rmsnorm | grep -v '^#' | grep bf16
    done
done
for t in 64,1,1,1 96,1,1,1 0,0,0,0; do
    echo "== BENCH_EW_TUNE=$t"; BENCH_EW_TUNE=$t ./build/bench_ops gelu | grep -v '^#'
done
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
for t in =row_variants =row_overrides =softmax =norms norm_backward =cross_entropy =cpu_gpu_agree; do ./build/test_ops $t 2>&1 | grep -v '^test_ops:'; done
echo "total: $(( $(date +%s) - T0 )) s"
