#!/bin/sh
# Rows of 32768 (issue 3): what the norms' weight / bias reads cost (BENCH_NORM_NOWB rows), and
# the weight / bias held in registers (BENCH_ROWS_TUNE [7]) with and without a persistent grid
# ([8] blocks a SM), next to the rule, in one device call; the row tests first.  Logs to ${OUT:-build}.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
make -s build/test_ops || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
for t in ${ROW_TESTS:-row_variants row_overrides}; do
    s=$(date +%s); timeout 240 ./build/test_ops "=$t" > "$O/t_$t.txt" 2>&1; echo "test $t rc=$? $(( $(date +%s) - s )) s"
    grep -E "FAIL|passed" "$O/t_$t.txt" | head -6
done
export BENCH_COLS=${BENCH_COLS:-32768,8192,1024}
run() { tag=$1; shift; echo "== $tag"; env "$@" ./build/bench_ops softmax,layernorm,rmsnorm | grep -v "^#" | tee "$O/rows_$tag.txt"; }
# RUNS: tag:tune entries -- tune a BENCH_ROWS_TUNE value or "-" for the rule; a tag ending in
# "nowb" adds the norms' rows without weight and bias
for spec in ${RUNS:-rule_nowb:- rule2:- wbe:0,0,0,0,0,0,0,1,0,0 wbe_off:0,0,0,0,0,0,0,-1,0,0}; do
    tag=${spec%%:*}; tune=${spec#*:}; [ "$tune" = "-" ] && tune=
    case $tag in *nowb) run "$tag" BENCH_ROWS_TUNE="$tune" BENCH_NORM_NOWB=1 ;; *) run "$tag" BENCH_ROWS_TUNE="$tune" ;; esac
done
