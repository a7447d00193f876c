#!/bin/bash
# Pooling forward / backward in one device call: test_conv's pool tests and memcheck on
# pool_backward / pool_run, test_jit compile_all_families (the conv module's variants), then
# bench_conv pool (the vector and run forms, and GPUML_POOL_VEC=off / GPUML_POOL_RUN=off) next to
# PyTorch (bench/conv_torch.py pool).  NCU=1 adds ncu sections of the NCHW kernels.
set -u
cd "$(dirname "$0")/.."
mkdir -p build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s -j16 build/test_conv build/test_jit || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
for t in pool pool_resnet pool_backward pool_run pool_ceil_mode errors; do ./build/test_conv =$t 2>&1 | grep -E "^  (ok|FAIL|skip)|FAIL" | head -5; done
timeout 200 ./build/test_jit =compile_all_families 2>&1 | tail -2
for t in pool_backward pool_run; do timeout 200 compute-sanitizer --tool memcheck build/test_conv =$t 2>&1 | tail -2; done
./build/bench_conv pool
GPUML_POOL_RUN=off ./build/bench_conv pool | grep NCHW | sed 's/^gpuml /norun/'
GPUML_POOL_VEC=off ./build/bench_conv pool | grep NHWC | sed 's/^gpuml /scalar/'
timeout 120 python3 bench/conv_torch.py pool 2>&1 | grep -v "^device"
if [ "${NCU:-0}" = 1 ]; then
  S="--section SpeedOfLight --section Occupancy --section SchedulerStats --section MemoryWorkloadAnalysis"
  for k in ${NCU_K:-gpuml_pool_r gpuml_pool_arg_r gpuml_pool_bwd_r}; do
    timeout 100 ncu --clock-control none $S -k regex:"^$k\$" --launch-count 1 ./build/bench_conv pool 2>&1 |
      grep -E "^  gpuml_pool|Duration|Throughput|Issued Warp|Achieved Occ|Hit Rate"
  done
fi
