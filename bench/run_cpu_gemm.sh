#!/bin/sh
# The CPU GEMM alone: its exhaustive correctness harness and the benchmark against OpenBLAS.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
sed -n '/BEGIN cpu_gemm/,/END cpu_gemm/p' gpuml.h > build/cpu_gemm.inc.h
cc -std=c99 -O2 -Wall -Wextra -Werror -pedantic bench/cpu_gemm_standalone.c -o build/cpu_gemm_bench -lpthread -ldl -lm || exit 1
./build/cpu_gemm_bench "$@"
