#!/bin/sh
# conv split-K summed inside the wgmma kernel (GPUML_CW_FIX): the wgmma / split tests, compute-sanitizer
# on the new test, the split sweep of bench_conv_igemm on the stage 3-4 layers, and bench_conv's resnet
# rows (f16 NHWC, f32 NCHW, tf32 NCHW; bias + ReLU, rotated) next to cuDNN.  PART=tests|sweep|bench|all.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
PART=${PART:-all}
SAN=/usr/local/cuda/bin/compute-sanitizer
make -s build/test_conv build/test_conv_igemm build/test_conv_tf32 || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv_igemm.c -o build/bench_conv_igemm -ldl -lpthread -lm || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/fix_gpu.txt"
if [ "$PART" = all ] || [ "$PART" = tests ]; then
{ timeout 200 ./build/test_conv_igemm 2>&1 | grep -E "FAIL|passed|split-K runs"
  for t in every_cfg_wgmma shapes_gpu_wgmma specials; do timeout 150 ./build/test_conv_tf32 "=$t" 2>&1 | grep -E "FAIL|passed|runs" | head -4; done
  for t in forced_wgmma resnet_layers; do timeout 150 ./build/test_conv "=$t" 2>&1 | grep -E "FAIL|fail|passed" | head -4; done
  timeout 200 $SAN --tool memcheck --print-limit 5 ./build/test_conv_igemm =wgmma_split_fix 2>&1 | grep -E "ERROR SUMMARY|Invalid|passed" | head -6
  timeout 200 $SAN --tool racecheck --print-limit 5 ./build/test_conv_igemm =wgmma_split_fix 2>&1 | grep -E "RACECHECK SUMMARY|Hazard|passed" | head -6
} 2>&1 | tee "$O/fix_tests.txt"
fi
if [ "$PART" = all ] || [ "$PART" = sweep ]; then
{ ./build/bench_conv_igemm l4_ split; ./build/bench_conv_igemm l3_3x3 split; ./build/bench_conv_igemm l3_1x1_1024 split; ./build/bench_conv_igemm l3_1x1_256 split; } 2>&1 | tee "$O/fix_sweep.txt"
fi
if [ "$PART" = all ] || [ "$PART" = bench ]; then
./build/bench_conv resnet > "$O/fix_bench_conv.txt" 2>&1
GPUML_CW_FIX=0 ./build/bench_conv resnet 2>&1 | sed 's/^gpuml /gpuml-red /' > "$O/fix_bench_conv_red.txt"
python3 bench/conv_torch.py resnet > "$O/fix_torch.txt" 2>&1
tail -3 "$O/fix_torch.txt"
fi
