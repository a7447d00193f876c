#!/bin/sh
# The CPU GEMM at 1-16 threads next to OpenBLAS (AVX-512 kernels), with the pool's idle spin
# off (the pool before 2026-11-28) and on (one device call; static binary, since the GPU host
# has no OpenBLAS). Build here first:
#   gcc -std=c99 -O2 -static -DHAVE_OPENBLAS -I/usr/include/x86_64-linux-gnu bench/bench_matmul.c \
#       -o build/bench_matmul_cpu_static /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a \
#       -lgfortran -lquadmath -lpthread -ldl -lm
# then run with build/bench_matmul_cpu_static carried. Output: $OUT/cpu_threads.txt (or stdout).
cd "$(dirname "$0")/.." || exit 1
B=build/bench_matmul_cpu_static
O=${OUT:-/tmp}/cpu_threads.txt
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
{
lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\)"
# columns: workers block at once (the pool before 2026-11-28), spin 200 us (the default)
export BENCH_CPU_SPINS=${BENCH_CPU_SPINS:-0,200} BENCH_CPU_ROUNDS=${BENCH_CPU_ROUNDS:-4}
$B cpu 1 64,128,256,512,1024,2048
$B cpu 4,8,16 64,96,128,256,512,1024,2048,4096
# thin products (M = 1-64): the thread count from FLOPs only vs with packing counted
$B cpu_thin 16
$B cpu_thin 8
} 2>&1 | tee "$O"
