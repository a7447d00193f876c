#!/bin/bash
# Session 29, second call (one H200): bench_matmul vs, gpuml next to cuBLAS (cublasGemmEx from PyTorch's
# wheel) in one process, ABBA rounds, so heat and clocks are shared: the large target shapes, with the
# 2-CTA cluster (GPUML_MM_CLUSTER=2) and group heights 4 / 16 as third contestants.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
mkdir -p build
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
gpu_bench_matmul || exit 1
gpu_cublas
echo "cuBLAS: $BENCH_CUBLAS"
T0=$(date +%s)
BIG="bf16:16384x14336x4096 bf16:8192x8192x8192 bf16:8192x11008x4096 bf16:4096x4096x4096 bf16:6144x6144x6144 f16:8192x8192x8192"
BENCH_VS_ENV=GPUML_MM_CLUSTER=2 timeout 200 ./build/bench_matmul vs $BIG bf16:1024x2048x4096 bf16:2048x2048x2048 tf32:4096x4096x4096 tf32:8192x8192x8192
BENCH_VS_ENV=group=16 timeout 100 ./build/bench_matmul vs bf16:16384x14336x4096 bf16:8192x8192x8192
BENCH_VS_ENV=group=4 timeout 100 ./build/bench_matmul vs bf16:16384x14336x4096 bf16:8192x8192x8192
echo "all: $(( $(date +%s) - T0 )) s"
