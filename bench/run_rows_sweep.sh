#!/bin/sh
# GPU: the row-kernel choices of gpuml__cuda_rows swept through BENCH_ROWS_TUNE (see
# gpuml__rows_tune in gpuml.h) on the bench_ops row shapes, each next to the rule in the same
# run, then a table of the fractions of the copy bandwidth per choice ("0,0,0,0,00" is the
# rule again, for the spread).
#   bench/run_rows_sweep.sh [log]          (default build/rows_sweep.log)
#   TUNES="t1 t2 ..." the choices (distinct strings; default below), BENCH_COLS the row lengths
cd "$(dirname "$0")/.." || exit 1
LOG=${1:-build/rows_sweep.log}
mkdir -p build
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
: > "$LOG"
for t in ${TUNES:-0,0,0,0,0 0,0,0,1,0 0,1,0,0,0 0,0,1,0,0 128,0,0,0,0 0,0,0,0,-1 0,0,0,0,80 0,0,0,0,00}; do
    BENCH_ROWS_TUNE=$t ./build/bench_ops softmax,layernorm,rmsnorm | sed "s/^/$t /" >> "$LOG"
done
# one column per choice: "op dt shape" -> fraction of copy
awk '/of copy/ { k = $3 " " $4 " " $5; v[k, $1] = $(NF - 2); if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                 if (!($1 in tseen)) { tseen[$1] = 1; tl[++nt] = $1 } }
     END { printf "%-28s", "op dtype shape \\ tune"; for (j = 1; j <= nt; j++) printf " %11s", tl[j]; printf "\n"
           for (i = 1; i <= nk; i++) { printf "%-28s", keys[i]; for (j = 1; j <= nt; j++) printf " %11s", v[keys[i], tl[j]]; printf "\n" } }' "$LOG"
