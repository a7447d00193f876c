#!/bin/bash
# Session 30, last call (2 x H200): the suites the stem's TMA form can reach (test_conv, test_conv_igemm,
# test_conv_tf32, test_profile, test_jit: every registry variant through NVRTC) and the examples, NO_SAN
# (the sanitizers ran on stem_tma in run_s30b.sh); then bench_matmul vs on NN and plain f32 (new in
# this session, for bench/report.sh's one-process matmul table) next to cuBLAS.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
mkdir -p build
SUITES="test_conv test_conv_igemm test_conv_tf32 test_profile test_jit" NO_SAN=1 OUT=build/s30c tests/run_gpu_quick.sh > build/s30c.log 2>&1
echo "suites rc=$?"; tail -12 build/s30c.log
gpu_bench_matmul && gpu_cublas
CUDA_VISIBLE_DEVICES=0 timeout 120 ./build/bench_matmul vs bf16:4096x4096x4096:NN f16:4096x4096x4096 tf32:4096x4096x4096:NN f32:4096x4096x4096:NN bf16:2048x2048x2048:NN 2>&1
[ -n "$OUTDIR" ] && cp build/s30c/quick.tgz "$OUTDIR/" 2>/dev/null
true
