#!/bin/sh
# conv2d: gpuml next to PyTorch/cuDNN on the same GPU in one run (bench/bench_conv.c,
# bench/conv_torch.py, paired by bench/conv_compare.py); then the CPU backend next to OpenBLAS.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
./build/bench_conv "$@" | tee build/bench_conv_gpuml.log
python3 bench/conv_torch.py "$@" | tee build/bench_conv_torch.log
python3 bench/conv_compare.py build/bench_conv_gpuml.log build/bench_conv_torch.log
GPUML_BACKEND=cpu ./build/bench_conv cpu
