#!/bin/bash
# The row kernels' FULL (no bounds checks where every thread's vectors lie in the row) and big (f32
# layernorm / rmsnorm rows that would take a cluster, in one block of 1024 threads) in one device
# call: test_ops row_variants and row_overrides, memcheck / racecheck of row_variants, then bench_ops
# softmax / layernorm / rmsnorm on rows of 1024-32768 (f32 and bf16): the rule, no FULL
# (BENCH_ROWS_TUNE [11] = 1), no big ([10] = -1), alternated twice; PyTorch's rows last.
set -u
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s kernels && make -s -j16 build/test_ops || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
for t in row_variants row_overrides; do timeout 300 ./build/test_ops "=$t" > build/t_$t.log 2>&1 & done
for tool in memcheck racecheck; do
    GPUML_TEST_NO_FAULT=1 timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 ./build/test_ops =row_variants > build/san_$tool.log 2>&1 &
done
wait
for t in row_variants row_overrides; do echo "test $t: $(tail -1 build/t_$t.log)"; grep FAIL build/t_$t.log | head -5; done
for tool in memcheck racecheck; do echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' build/san_$tool.log | tail -1)"; done
export BENCH_COLS=${BENCH_COLS:-1024,4096,8192,16384,32768}
for i in 1 2; do
    for tune in 0 0,0,0,0,0,0,0,0,0,0,0,1 0,0,0,0,0,0,0,0,0,0,-1,0; do
        echo "== $tune"; BENCH_ROWS_TUNE=$tune ./build/bench_ops softmax,layernorm,rmsnorm | grep "of copy"
    done
done
for o in softmax layernorm rmsnorm; do timeout 120 python3 bench/bench_ops_torch.py $o 2>&1 | grep -E "of copy"; done
