#!/bin/bash
# The staged NHWC depthwise kernel with fewer blocks than bands (each block streaming several bands
# through one ring: GPUML_CONV_DW_CFG's fifth value) and
# two output columns a thread (its sixth), one device call: test_conv's staged and
# register-kernel depthwise tests (3 processes each), memcheck / racecheck of the staged one, then
# bench/prof_dw (MobileNetV2 layers at batch 32, f16 and f32 NHWC) as chosen and for each CFGS
# entry, cuDNN (bench/conv_torch.py depthwise) in the same call.  NCU=1 adds ncu of f16 c144 @56.
. "$(dirname "$0")/dw_setup.sh"
dw_build build/test_conv
dw_tests 5 depthwise3x3_staged depthwise3x3_staged depthwise3x3
export PROF_DW_NOCOPY=1
for a in "f16 nhwc" "f32 nhwc"; do
  echo "== chosen | $a"; ./build/prof_dw $a | grep -E "layer|roof" | cut -c1-60
  case "$a" in f16*) C=${CFGS16:-0,0,0,0,0,1 0,0,8,0,0,2 16,0,0,0,0,2};;
               *) C=${CFGS32:-};; esac
  for c in $C; do
    echo "== $c | $a"; GPUML_CONV_DW_CFG=$c ./build/prof_dw $a | grep layer | cut -c1-60
  done
  echo "== reg (gpuml_conv_dw3) | $a"; GPUML_CONV_DW=reg ./build/prof_dw $a | grep layer | cut -c1-60
done
timeout 150 python3 bench/conv_torch.py depthwise 2>&1 | grep -E "NHWC|nhwc|device"
if [ "${NCU:-0}" = 1 ]; then
  S="--section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats"
  for c in 0,0,0,0,0,1 0,0,0,0,0,2; do  # f16 c144 @56: 1 / 2 columns a thread, streamed
    echo "== ncu $c"
    GPUML_CONV_DW_CFG=$c timeout 100 ncu --clock-control none $S -k regex:gpuml_conv_dw3s --launch-skip 5 --launch-count 1 ./build/prof_dw f16 nhwc 2 10 2>&1 |
      grep -E "Duration|Throughput|Issued Warp|Achieved Occ|Stall|Warp Cycles"
  done
fi
