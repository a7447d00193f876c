#!/bin/sh
# session 4: the wgmma conv chooser refitted for 16-bit (bench/cw_fit.py), the GEMM path with
# allow_tf32: tests on both, then bench_conv resnet with every A/B variant (incl. "f32 NCHW tf32
# gemm") next to cuDNN.  PART=tests|bench|all.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
PART=${PART:-all}
make -s build/test_conv build/test_conv_igemm build/test_conv_tf32 || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/s4_gpu.txt"
if [ "$PART" = all ] || [ "$PART" = tests ]; then
{ for t in resnet_shapes_auto wgmma_big_and_split wgmma_every_cfg; do timeout 150 ./build/test_conv_igemm "=$t" 2>&1 | grep -E "FAIL|passed" | head -6; done
  for t in shapes_gpu_gemm shapes_gpu_auto; do timeout 150 ./build/test_conv_tf32 "=$t" 2>&1 | grep -E "FAIL|passed|cases" | head -6; done
  for t in forced_wgmma resnet_layers fuzz_forward; do timeout 150 ./build/test_conv "=$t" 2>&1 | grep -E "FAIL|passed" | head -6; done
} 2>&1 | tee "$O/s4_tests.txt"
fi
if [ "$PART" = all ] || [ "$PART" = bench ]; then
BENCH_CONV_AB=1 ./build/bench_conv resnet > "$O/s4_bench_conv.txt" 2>&1
python3 bench/conv_torch.py resnet > "$O/s4_torch.txt" 2>&1
tail -2 "$O/s4_torch.txt"
fi
