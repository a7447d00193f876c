#!/bin/sh
# tf32 NT on the 2-CTA cluster (B multicast, GPUML_MM_CLUSTER=2) against the default kernel and
# cuBLAS in one call: test_matmul under the cluster, then bench_matmul tf32nn default / cluster /
# default / cluster and matmul_torch.py tf32nn.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
make -s build/test_matmul || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
GPUML_MM_CLUSTER=2 ./build/test_matmul 2>&1 | grep -E "FAIL|passed" | tee "$O/cl_tests.txt"
for r in 1 2; do
    ./build/bench_matmul tf32nn | grep "^nt" | sed 's/^/default /'
    GPUML_MM_CLUSTER=2 ./build/bench_matmul tf32nn | grep "^nt" | sed 's/^/cluster /'
done | tee "$O/cl_gpuml.txt"
python3 bench/matmul_torch.py tf32nn | tee "$O/cl_torch.txt"
