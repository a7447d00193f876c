#!/bin/bash
# Depthwise 3x3 probe, one device call: each MobileNetV2 layer next to a copy of the same bytes
# (bench/prof_dw.c), gpuml_conv_dw3 configurations (GPUML_CONV_DW3_CFG=vec,tp,qt,pf,minb), the
# staged kernels, Nsight Compute on c32 @112 f16 NHWC, then test_conv's depthwise tests.
cd "$(dirname "$0")/.." || exit 1
export GPUML_CACHE_DIR=$PWD/build/cache
mkdir -p build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 -Wall -Wextra bench/prof_dw.c -o build/prof_dw -ldl -lpthread -lm || exit 1
(make -s build/test_conv > build/mk.log 2>&1) &
for a in "f16 nhwc" "f32 nhwc" "f16 nchw" "f32 nchw"; do echo "== reg (new dw3) $a"; GPUML_CONV_DW=reg ./build/prof_dw $a | grep -v device; done
export PROF_DW_NOCOPY=1
for a in "f16 nhwc" "f32 nhwc" "f16 nchw"; do echo "== default selection $a"; ./build/prof_dw $a | grep layer | cut -c1-80; done
for c in ${CFGS:-0,4 0,8 0,16 0,0,1 0,0,1,1 0,0,0,1 8,0,1,0,2 0,0,3 0,8,1}; do
    echo "== f16 nhwc GPUML_CONV_DW3_CFG=$c"
    GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f16 nhwc | grep layer | cut -c1-80
done
for c in 0,0,1 0,8; do echo "== f32 nhwc GPUML_CONV_DW3_CFG=$c"; GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f32 nhwc | grep layer | cut -c1-80; done
for c in 0,0,8 0,8 0,2; do echo "== f16 nchw GPUML_CONV_DW3_CFG=$c"; GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f16 nchw | grep layer | cut -c1-80; done
unset PROF_DW_NOCOPY
N="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats"
echo "== ncu new dw3 f16 nhwc layer ${LAYER:-0}"
GPUML_CONV_DW=reg timeout 100 $N -k regex:gpuml_conv_dw3 -s 8 -c 1 ./build/prof_dw f16 nhwc ${LAYER:-0} 20 2>&1 | grep -E "Duration|Throughput|Registers|Issued Warp|Eligible Warps|Active Warps Per Sch|Achieved Occ|Grid Size|Warp Cycles Per Issued" | head -20
wait
echo "== tests"
timeout ${TT:-300} ./build/test_conv =depthwise3x3 2>&1 | tail -8
timeout 120 ./build/test_conv =depthwise 2>&1 | tail -3
