#!/bin/bash
# Session 29, third call (one H200): split-K for tf32 / fp8 (then behind a knob, gpuml__mm_splitk_any; on by default
# since) against split-K off (bench_matmul skx, ABBA), and the few-tile shapes next to cuBLAS in one process
# (bench_matmul vs; the third contestant: then split-K for tf32 allowed).
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
mkdir -p build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gpu_bench_matmul || exit 1
gpu_cublas
T0=$(date +%s)
timeout 150 ./build/bench_matmul skx 2>&1 | grep -v "(stream-K walk"
BENCH_VS_ENV=splitk_any=1 timeout 150 ./build/bench_matmul vs tf32:512x2048x4096 tf32:1024x1024x8192 tf32:256x2048x8192 tf32:256x256x16384 \
    bf16:512x512x8192 bf16:1024x1024x8192 bf16:128x4096x8192 bf16:256x256x16384 bf16:1024x2048x4096 bf16:1024x1792x4096 bf16:768x2048x8192
echo "all: $(( $(date +%s) - T0 )) s"
