#!/bin/sh
# matmul: gpuml and cuBLAS (PyTorch) on the same GPU in one run; the CPU GEMM next to OpenBLAS.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
./build/bench_matmul gpu ${QUICK:+quick}
python3 bench/matmul_torch.py 2>&1 | tail -n 30
if [ -f /usr/include/x86_64-linux-gnu/cblas.h ] || [ -f /usr/include/cblas.h ] || [ -f /usr/include/openblas/cblas.h ]; then
    cc -std=c99 -O2 -DHAVE_OPENBLAS -I/usr/include/openblas bench/bench_matmul.c -o build/bench_matmul_cpu -ldl -lpthread -lm -lopenblas && ./build/bench_matmul_cpu cpu
else
    ./build/bench_matmul cpu
fi
