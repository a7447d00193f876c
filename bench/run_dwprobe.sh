#!/bin/bash
# Depthwise 3x3 probe, one device call: each MobileNetV2 layer next to a copy of the same bytes
# (bench/prof_dw.c), register-kernel configurations (GPUML_CONV_DW3_CFG=vec,pt,qt,minb) and
# Nsight Compute on c32 @112 f16 NHWC (the register kernel, the staged one, 16-byte vectors).
cd "$(dirname "$0")/.." || exit 1
export GPUML_CACHE_DIR=$PWD/build/cache
mkdir -p build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 -Wall -Wextra bench/prof_dw.c -o build/prof_dw -ldl -lpthread -lm || exit 1
for a in "f16 nhwc" "f32 nhwc" "f16 nchw"; do ./build/prof_dw $a; done
for c in ${CFGS:-8,1,2,4 8,2,2,2 8,2,1,3 8,4,1,2 8,1,1,4 4,4,2,2}; do
    echo "== GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c"
    GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f16 nhwc | grep layer
done
N="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis"
for v in "reg:" "staged:" "reg:8,1,2,4"; do
    m=${v%%:*}; c=${v#*:}
    echo "== ncu GPUML_CONV_DW=$m GPUML_CONV_DW3_CFG=$c"
    GPUML_CONV_DW=$m GPUML_CONV_DW3_CFG=$c timeout 120 $N -k regex:gpuml_conv_dw3 -s 8 -c 1 ./build/prof_dw f16 nhwc ${LAYER:-0} 20 2>&1 | grep -v "^==PROF==" | grep -E "^  [A-Za-z]|Duration|Throughput|Occupancy|Registers|Stall|Warp Cycles|Issued|Eligible|Active Warps|L1|L2|DRAM|Block Size|Grid Size|Waves|Theoretical|Achieved|Mem " | head -60
done
