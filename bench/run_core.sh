#!/bin/sh
# Foundation figures: first result (cold and warm cache, GPU and CPU), compile times, launch cost.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
${CC:-cc} -std=c99 -O2 -Wall -Wextra -Werror bench/bench_core.c -o build/bench_core -ldl -lpthread -lm || exit 1
dir=$(mktemp -d)
echo "== cold cache";  GPUML_CACHE_DIR=$dir ./build/bench_core first
echo "== warm cache";  GPUML_CACHE_DIR=$dir ./build/bench_core first
echo "== CPU backend"; GPUML_BACKEND=cpu ./build/bench_core first
./build/bench_core compile
./build/bench_core launch
GPUML_BACKEND=cpu ./build/bench_core launch
rm -rf "$dir"
