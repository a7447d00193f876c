#!/bin/sh
# conv forward on Hopper with configuration 5 (192 x 128, three consumer warpgroups): the wgmma
# tests (every configuration), compute-sanitizer, bench_conv_igemm (every configuration forced, next
# to cuDNN) and bench_conv's f16 resnet rows (bias + ReLU, rotated inputs) next to cuDNN.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
make -s build/test_conv build/test_conv_igemm build/test_conv_tf32 || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
{ ./build/test_conv_igemm 2>&1 | tail -3
  ./build/test_conv_tf32 =every_cfg_wgmma 2>&1 | tail -2
  for t in bwf_sm90 backward_layers forced_wgmma resnet_layers; do ./build/test_conv "=$t" 2>&1 | grep -E "FAIL|fail|passed" | head -8; done
} | tee "$O/cw5_tests.txt"
SAN=/usr/local/cuda/bin/compute-sanitizer
[ -x $SAN ] || SAN=compute-sanitizer
{ $SAN --tool memcheck --print-limit 5 ./build/test_conv_igemm =wgmma_every_cfg 2>&1 | grep -E "ERROR SUMMARY|Invalid|passed" | head -4
  $SAN --tool racecheck --print-limit 5 ./build/test_conv_igemm =wgmma_tma_y 2>&1 | grep -E "RACECHECK SUMMARY|Hazard|passed" | head -4
  $SAN --tool memcheck --print-limit 5 ./build/test_conv =bwf_sm90 2>&1 | grep -E "ERROR SUMMARY|Invalid|passed" | head -4
} | tee "$O/cw5_sanitizer.txt"
BENCH_CONV_F16=1 ./build/bench_conv resnet | tee "$O/cw5_bench_conv.txt"
python3 bench/conv_torch.py resnet | grep -E "device|f16" | tee "$O/cw5_torch.txt"
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv_igemm.c -o build/bench_conv_igemm -ldl -lpthread -lm && \
./build/bench_conv_igemm > "$O/cw5_igemm.txt" && python3 bench/conv_igemm_torch.py "$O/cw5_igemm.txt" > "$O/cw5_igemm_table.txt" 2>&1
tail -8 "$O/cw5_igemm_table.txt"
