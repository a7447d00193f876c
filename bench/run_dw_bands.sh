#!/bin/bash
# Band heights of the streamed NHWC depthwise kernel (gpuml_conv_dw3s), one device call: bench/prof_dw
# f16 and f32 NHWC as chosen, then with the band height forced (GPUML_CONV_DW_CFG=tp,0,0,0,0,0: every
# layer on the staged kernel, streamed, the other choices as chosen) for each of BANDS, to fit the
# band model (bench/NOTES_conv.md "f32 NHWC streamed": the rounds x rows model ignores how units
# land on SMs and each unit's set-up; c960 @7 picked 4 rows where 7 measured 20% faster).  A height
# above a layer's rows is that layer's whole plane.  Prints one table per dtype (us per call).
. "$(dirname "$0")/dw_setup.sh"
dw_build
export PROF_DW_NOCOPY=1
for a in "f32 nhwc" "f16 nhwc"; do
  echo "== chosen | $a"; ./build/prof_dw $a | grep -E "layer|roof" | cut -c1-60
  for t in ${BANDS:-2 4 7 8 14 16 28 56 112}; do
    echo "== $t-row bands | $a"; GPUML_CONV_DW_CFG=$t,0,0,0,0,0 ./build/prof_dw $a | grep layer | cut -c1-60
  done
done
