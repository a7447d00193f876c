#!/bin/sh
# The unpacked AVX-512 CPU GEMM path (2026-11-29) against the packed path and OpenBLAS at 1-16
# threads, one device call (static binaries: the GPU host has no OpenBLAS). Build here first:
#   gcc -std=c99 -O2 -static -DHAVE_OPENBLAS -I/usr/include/x86_64-linux-gnu bench/bench_matmul.c \
#       -o build/bench_matmul_cpu_static /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a \
#       -lgfortran -lquadmath -lpthread -ldl -lm
#   sed -n '/BEGIN cpu_gemm/,/END cpu_gemm/p' gpuml.h > build/cpu_gemm.inc.h
#   gcc -std=c99 -O2 -static bench/cpu_gemm_standalone.c -o build/cpu_gemm_bench_static -lpthread -ldl -lm
# then run with both carried. Output: $OUT/cpu_small.txt (or /tmp).
cd "$(dirname "$0")/.." || exit 1
B=build/bench_matmul_cpu_static
O=${OUT:-/tmp}/cpu_small.txt
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
{
lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\)"
# the harness on this CPU (AVX-512 paths forced and chosen, 1-3 threads)
./build/cpu_gemm_bench_static --test 2>&1 | tail -n 3
# columns: the unpacked path only at <= 30^3 (before), the default rule
export BENCH_CPU_SMALL=0,-1 BENCH_CPU_ROUNDS=${BENCH_CPU_ROUNDS:-3}
$B cpu 1 16,32,48,64,100,128,256,512
$B cpu 4,8,16 32,64,100,128,192,256,384,512
unset BENCH_CPU_SMALL
# thin products (M = 1-64): the packed path vs the default
$B cpu_thin 16
$B cpu_thin 8
} 2>&1 | tee "$O"
