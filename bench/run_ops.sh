#!/bin/sh
# memory-bound ops: gpuml next to PyTorch on the same GPU in one run, as fractions of the copy
# bandwidth measured in the same run; then the CPU backend next to memcpy.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
./build/bench_ops
python3 bench/bench_ops_torch.py
GPUML_BACKEND=cpu ./build/bench_ops
