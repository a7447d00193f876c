#!/bin/bash
# One device call (2026-11-29, twenty-fifth session): 16-bit layernorm statistics in one pass against
# the previous kernels (build/old_kernels.cu.inc, carried), alternated twice; then the row tests and
# memcheck / racecheck of row_variants, in parallel.  The change it measured lost 2-8% and was
# reverted (bench/NOTES_ops.md); run against a tree that carries it again.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh ln_onepass
make -s build/test_ops > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -DGPUML_KERNELS_INC='"build/old_kernels.cu.inc"' bench/bench_ops.c -o build/bench_ops_old -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100 BENCH_COLS=1024,8192,16384,32768
for r in 1 2; do for b in bench_ops bench_ops_old; do echo "== $b round $r"; ./build/$b layernorm | grep bf16; done; done
echo "bench: $(( $(date +%s) - T0 )) s"
printf '%s\n' "t =norms" "t =row_variants" "t =norm_backward" "t =nan_inf" "t =row_overrides" "t =cpu_gpu_agree" "s memcheck" "s racecheck" |
    xargs -P 8 -L 1 bash -c 'if [ "$0" = t ]; then timeout 200 ./build/test_ops "$1" 2>&1 | grep -E "^  (ok|FAIL|skip)|FAIL"; else GPUML_TEST_NO_FAULT=1 timeout 200 compute-sanitizer --tool $1 --report-api-errors no --error-exitcode 9 ./build/test_ops =row_variants 2>&1 | grep -E "SUMMARY" | sed "s/^/$1 row_variants: /"; fi'
echo "total: $(( $(date +%s) - T0 )) s"
