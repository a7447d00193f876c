#!/bin/bash
# Sixth device call (2026-11-29, twenty-sixth session): the new prefetch distance for 16-bit rmsnorm
# rows of 16384 / 32768 (4 MB ahead) against the old one (BENCH_ROWS_TUNE [6] = 1.5 MB in rows), two
# rounds, and the rows tests.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh s26f
make -s -j16 build/test_ops > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100
for r in 1 2; do
    for c in 16384 32768; do
        old=$(( 1536 * 1024 / (c * 2) ))
        echo "== rows of $c, rule: $(BENCH_COLS=$c BENCH_DTYPES=bf16,f16 ./build/bench_ops rmsnorm | grep '^gpuml' | awk '{print $3, $(NF-2)}' | tr '\n' ' ')"
        echo "== rows of $c, old ($old rows): $(BENCH_ROWS_TUNE=0,0,0,0,0,0,$old BENCH_COLS=$c BENCH_DTYPES=bf16,f16 ./build/bench_ops rmsnorm | grep '^gpuml' | awk '{print $3, $(NF-2)}' | tr '\n' ' ')"
    done
done
for t in row_variants norms; do ./build/test_ops "=$t" 2>&1 | tail -1; done
GPUML_TEST_NO_FAULT=1 timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 ./build/test_ops =norms 2>&1 | grep 'ERROR SUMMARY'
echo "total: $(( $(date +%s) - T0 )) s"
