#!/bin/bash
# f32 NHWC depthwise 3x3 through the streamed staged kernel (GPUML_CONV_DW_STREAM=1: 1 column a
# thread, 2: 2 columns; the staged kernel from 8 output rows as for 16-bit), one device call:
# test_conv depthwise3x3_staged and depthwise3x3 with GPUML_CONV_DW_STREAM=$TEST_STREAM (3 processes
# each, the chosen path streamed), then bench/prof_dw f32 NHWC as chosen today, streamed 1 / 2
# columns (and ring / register-bound variants), the register kernel, and cuDNN in the same call.
. "$(dirname "$0")/dw_setup.sh"
dw_build build/test_conv
export PROF_DW_NOCOPY=1
b() { echo "== $1"; shift; env "$@" ./build/prof_dw f32 nhwc | grep -E "layer|roof" | cut -c1-60; }
if [ -z "${NOTEST:-}" ]; then
  for t in depthwise3x3_staged depthwise3x3; do for k in 0 1 2; do
    GPUML_CONV_DW_STREAM=${TEST_STREAM:-2} TEST_CONV_DW_PART=$k/3 timeout 200 ./build/test_conv =$t > build/t_${t}_$k.log 2>&1 &
  done; done
  b "chosen (today)" A=1   # beside the tests: JIT of the variants below shared through the cache
  wait
  for f in build/t_depthwise3x3*.log; do echo "$f: $(grep -E '^  (ok|FAIL)' $f | head -1) $(grep -c FAIL $f)"; grep FAIL $f | head -3; done
fi
b "chosen (today), quiet GPU" A=1
b "streamed, 1 column" GPUML_CONV_DW_STREAM=1
b "streamed, 2 columns" GPUML_CONV_DW_STREAM=2
b "streamed, 2 columns, 8-slot ring" GPUML_CONV_DW_STREAM=2 GPUML_CONV_DW_CFG=0,0,8,0,0,0
b "streamed, 1 column, 8-slot ring" GPUML_CONV_DW_STREAM=1 GPUML_CONV_DW_CFG=0,0,8,0,0,0
b "streamed, 2 columns, 16-row bands" GPUML_CONV_DW_STREAM=2 GPUML_CONV_DW_CFG=16,0,0,0,0,0
b "one block a band, 2 columns" GPUML_CONV_DW_CFG=0,0,0,0,0,2
b "register kernel" GPUML_CONV_DW=reg
b "streamed, 2 columns (again)" GPUML_CONV_DW_STREAM=2
b "chosen (today, again)" A=1
timeout 100 python3 bench/conv_torch.py depthwise 2>&1 | grep -E "f32  NHWC|device"
