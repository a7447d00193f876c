#!/bin/sh
# CUDA graphs vs eager, gpuml and PyTorch side by side in one call (GPU machine).
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
${CC:-cc} -std=c99 -O2 -Wall -Wextra -Werror bench/bench_graphs.c -o build/bench_graphs -ldl -lpthread -lm || exit 1
./build/bench_graphs 4096 65536
python3 bench/bench_graphs_torch.py 4096 65536 2>&1 || echo "(no PyTorch reference)"
