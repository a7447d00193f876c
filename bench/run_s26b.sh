#!/bin/bash
# Second device call (2026-11-29, twenty-sixth session): the contiguous elementwise kernel's inputs
# converted from their 32-bit words (gpuml__vec_to_f: f16 with one NaN test a vector) against the
# previous kernels (build/old_kernels.cu.inc, carried), f32 / bf16 / f16 gelu, add, mul, two rounds
# alternated; then the GPU tests of test_ops, test_jit, test_core, test_profile and test_matmul
# (tests/run_gpu_quick.sh; common.cuh changed, so every family recompiles) and the elementwise /
# rows sanitizer jobs.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh s26b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -DGPUML_KERNELS_INC='"build/old_kernels.cu.inc"' bench/bench_ops.c -o build/bench_ops_old -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100
{
for r in 1 2; do
    for b in bench_ops bench_ops_old; do
        echo "== $b round $r"; BENCH_DTYPES=f32,bf16,f16 ./build/$b gelu,add,mul | grep -v '^#\|^device'
    done
done
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
OUT=$O/t SUITES="test_ops test_jit test_core test_profile test_matmul" JOBS=10 tests/run_gpu_quick.sh 2>&1 | tail -25
echo "tests: $(( $(date +%s) - T0 )) s"
OUT=$O/s SAN_ONLY=1 SAN_SPECS="memcheck:test_ops:unary memcheck:test_ops:binary racecheck:test_ops:binary memcheck:test_ops:ew_shapes racecheck:test_ops:ew_shapes memcheck:test_ops:gelu_16bit_all memcheck:test_ops:f16_rows_specials memcheck:test_ops:activations_wide memcheck:test_ops:row_overrides memcheck:test_ops:optimizers" tests/run_gpu_quick.sh 2>&1 | tail -14
echo "total: $(( $(date +%s) - T0 )) s"
