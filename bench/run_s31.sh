#!/bin/bash
# Session 31, one call (H100): the row kernels and the reduction swept on the H100 where the
# fresh report (e1680d6) left them under 0.95 of copy -- bf16 rows of 32768 layernorm 0.91 /
# softmax 0.94, bf16 sum of 2^27 0.94 -- through BENCH_ROWS_TUNE / BENCH_REDUCE_TUNE, each choice
# next to the rule ("0" first and last: the spread).  Prints the fraction-of-copy tables.
set -u
cd "$(dirname "$0")/.."
mkdir -p build
O=${OUT:-build/s31}; mkdir -p "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
LOG=$O/rows.log; : > "$LOG"
for t in 0 0,0,0,0,0,0,12 0,0,0,0,0,0,48 0,0,0,0,0,0,-1 0,0,0,0,80 0,0,0,0,-1 0,0,0,0,0,0,0,0,0,0,0,2 0,0,0,0,0,0,0,0,0,0,1 0,0,0,0,0,0,0,0,0,2 0,0,0,0,0,0,0,1 00; do
    BENCH_COLS=16384,32768 BENCH_DTYPES=bf16,f16,f32 BENCH_ROWS_TUNE=$t ./build/bench_ops softmax,layernorm,rmsnorm | sed "s/^/$t /" >> "$LOG"
done
table() { awk '/of copy/ { k = $3 " " $4 " " $5; v[k, $1] = $(NF - 2); if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                 if (!($1 in tseen)) { tseen[$1] = 1; tl[++nt] = $1 } }
     END { printf "%-26s", "op dtype shape \\ tune"; for (j = 1; j <= nt; j++) printf " %8s", substr(tl[j], length(tl[j]) > 8 ? length(tl[j]) - 7 : 1); printf "\n"
           for (i = 1; i <= nk; i++) { printf "%-26s", keys[i]; for (j = 1; j <= nt; j++) printf " %8s", v[keys[i], tl[j]]; printf "\n" } }' "$1"; }
table "$LOG"
LOG2=$O/sum.log; : > "$LOG2"
for t in 0 2 8 0,4 0,2 16 0,0,1 00; do
    BENCH_DTYPES=bf16,f16,f32 BENCH_REDUCE_TUNE=$t ./build/bench_ops sum | sed "s/^/$t /" >> "$LOG2"
done
table "$LOG2"
grep -m 3 "copy" "$LOG2" | head -3
