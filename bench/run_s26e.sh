#!/bin/bash
# Fifth device call (2026-11-29, twenty-sixth session): the long rows' L2 prefetch distance
# (gpuml__rows_tune[6], rows ahead; the rule: 1.5 MB of rows, at most 132) swept on the H200 for rows
# of 16384 / 32768 in bf16, f16 and f32.
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh s26e
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100 BENCH_COLS=16384,32768 BENCH_DTYPES=bf16,f16,f32
for t in 0 32 64 96 132 200 300 0 64 132; do
    echo "== pf $t"; BENCH_ROWS_TUNE=0,0,0,0,0,0,$t ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#\|^device\|overrides\|copy roof' | awk '{print $2, $3, $4, $(NF-2)}' | tr '\n' ';'; echo
done
echo "total: $(( $(date +%s) - T0 )) s"
