#!/bin/sh
# conv split-K with the vectorized reduce: the split tests, memcheck, bench_conv_igemm on the stage
# 3-4 layers (split columns) next to cuDNN, and bench_conv's f16 rows (default and GPUML_CW_TMA_Y=0).
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
make -s build/test_conv build/test_conv_igemm build/test_conv_tf32 || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv_igemm.c -o build/bench_conv_igemm -ldl -lpthread -lm || exit 1
{ ./build/test_conv_igemm 2>&1 | grep -E "FAIL|passed"
  ./build/test_conv_tf32 2>&1 | grep -E "FAIL|passed"
  for t in forced_wgmma forced_igemm resnet_layers fuzz_forward bwf_sm90; do ./build/test_conv "=$t" 2>&1 | grep -E "FAIL|fail|passed" | head -4; done
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck ./build/test_conv_igemm =wgmma_big_and_split 2>&1 | grep -E "ERROR SUMMARY|passed"
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck ./build/test_conv_igemm =split_k 2>&1 | grep -E "ERROR SUMMARY|passed"
} | tee "$O/sr_tests.txt"
{ ./build/bench_conv_igemm l3_; ./build/bench_conv_igemm l4_; } > "$O/sr_igemm.txt"
python3 bench/conv_igemm_torch.py "$O/sr_igemm.txt" > "$O/sr_igemm_table.txt" 2>&1
cut -c1-200 "$O/sr_igemm_table.txt"
BENCH_CONV_F16=1 ./build/bench_conv resnet | tee "$O/sr_bench_conv.txt"
GPUML_CW_TMA_Y=0 BENCH_CONV_F16=1 ./build/bench_conv resnet | sed 's/^gpuml /gpuml-slab /' | tee "$O/sr_bench_conv_slab.txt"
python3 bench/conv_torch.py resnet | grep -E "device|f16" | tee "$O/sr_torch.txt"
