#!/bin/bash
# gpuml_conv_dw3f (NCHW depthwise 3x3 stride 1 or 2, a thread a 16-, 8- or 4-byte chunk of columns
# down 2 / 4 / 8 rows) in one device call: `make kernels`, then test_conv depthwise3x3_flat, depthwise3x3 and depthwise3x3_staged (3 parts each),
# memcheck / racecheck of depthwise3x3_flat, then bench/prof_dw f16 and f32 NCHW: chosen (the flat
# kernel wherever it applies: every f32 layer, 16-bit with even output widths), the flat kernel
# with 2 / 4 / 8 rows a thread, the register kernel, the staged kernels; cuDNN in the same call.
. "$(dirname "$0")/dw_setup.sh"
make -s kernels || exit 1
dw_build build/test_conv
dw_tests 3 depthwise3x3_flat depthwise3x3_flat depthwise3x3 depthwise3x3_staged
export PROF_DW_NOCOPY=1
for a in "f16 nchw" "f32 nchw"; do
  echo "== chosen | $a"; ./build/prof_dw $a | grep -E "layer|roof" | cut -c1-60
  for r in 2 4 8; do echo "== flat, $r rows | $a"; GPUML_CONV_DW3F_R=$r ./build/prof_dw $a | grep layer | cut -c1-60; done
  echo "== flat, chunks of at most 8 bytes | $a"; GPUML_CONV_DW3F_B=8 ./build/prof_dw $a | grep layer | cut -c1-60
  echo "== register kernel | $a"; GPUML_CONV_DW=reg ./build/prof_dw $a | grep layer | cut -c1-60
  echo "== staged where it applies | $a"; GPUML_CONV_DW=staged ./build/prof_dw $a | grep layer | cut -c1-60
done
timeout 150 python3 bench/conv_torch.py depthwise 2>&1 | grep -E "NCHW|device"
