#!/bin/sh
# conv2d implicit GEMM: gpuml and cuDNN (PyTorch) on the ResNet-50 layers, one run, one table.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv_igemm.c -o build/bench_conv_igemm -ldl -lpthread -lm || exit 1
./build/bench_conv_igemm "$@" | tee build/conv_igemm_gpuml.txt
python3 bench/conv_igemm_torch.py build/conv_igemm_gpuml.txt
