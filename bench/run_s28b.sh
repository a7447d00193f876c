#!/bin/bash
# Session 28, last call (2 x H200): the whole GPU suite after the stream-K tail (tests/run_gpu_quick.sh
# NO_SAN=1: every test of every suite; the matmul sanitizer jobs ran in the first calls), then
# bench_matmul streamk in ABBA order (BENCH_SK_ABBA=1: the rule next to the tail off) and with the
# tail forced where the rule declines (BENCH_SK_FORCE=1), and matmul_torch.py streamk.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/s28b}; mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
T0=$(date +%s)
if [ -z "${NO_TESTS:-}" ]; then
    NO_SAN=1 OUT=$O tests/run_gpu_quick.sh > "$O/quick.log" 2>&1
    echo "quick suite rc=$? [$(( $(date +%s) - T0 )) s]"; tail -25 "$O/quick.log"
fi
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
export CUDA_VISIBLE_DEVICES=0
BENCH_SK_ABBA=1 timeout 150 ./build/bench_matmul streamk 2>&1 | grep -v "(tail" | tee "$O/bench_abba.log"
BENCH_SK_FORCE=1 timeout 100 ./build/bench_matmul streamk 2>&1 | grep -v "(tail" | tee "$O/bench_force.log"
timeout 150 python3 bench/matmul_torch.py streamk 2>&1 | tee "$O/torch.log"
echo "all: $(( $(date +%s) - T0 )) s"
