#!/bin/sh
# the wgmma conv chooser's data: bench_conv_igemm's sweep (every configuration at 1-4 k slices,
# measured / modeled, f16 NHWC, no epilogue) on every ResNet-50 layer, for bench/cw_fit.py
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv_igemm.c -o build/bench_conv_igemm -ldl -lpthread -lm || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/cwfit_gpu.txt"
./build/bench_conv_igemm _ split 2>&1 | tee "$O/cwfit_sweep.txt"
