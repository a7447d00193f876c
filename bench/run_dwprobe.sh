#!/bin/bash
# Depthwise 3x3 probe, one device call: test_conv's depthwise tests (split over processes), then
# each MobileNetV2 layer next to a copy of the same bytes (bench/prof_dw.c), gpuml_conv_dw3
# configurations (GPUML_CONV_DW3_CFG=vec,tp,qt,pf,minb) and the default selection.  Logs in $OUT.
cd "$(dirname "$0")/.." || exit 1
export GPUML_CACHE_DIR=$PWD/build/cache
OUT=${OUT:-build/out}; mkdir -p build "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 -Wall -Wextra bench/prof_dw.c -o build/prof_dw -ldl -lpthread -lm || exit 1
make -s build/test_conv > build/mk.log 2>&1 || { tail build/mk.log; exit 1; }
NP=${NP:-8}
for k in $(seq 0 $((NP - 1))); do TEST_CONV_DW_PART=$k/$NP timeout 300 ./build/test_conv =depthwise3x3 > "$OUT/t_dw3_$k.log" 2>&1 & done
timeout 300 ./build/test_conv =depthwise > "$OUT/t_dw.log" 2>&1 &
wait
for f in "$OUT"/t_*.log; do echo "$(basename $f): $(tail -n 1 $f)"; grep FAIL "$f" | head -3; done
{
for a in "f16 nhwc" "f32 nhwc" "f16 nchw"; do echo "== reg (new dw3) $a"; GPUML_CONV_DW=reg ./build/prof_dw $a | grep -v device; done
export PROF_DW_NOCOPY=1
for a in "f16 nhwc" "f32 nhwc" "f16 nchw"; do echo "== default selection $a"; ./build/prof_dw $a | grep layer | cut -c1-80; done
for c in ${CFGS:-4,0,1 2,0,2 2,0,2,0,6 2,0,1,0,6 2,0,4 4,0,2,1 4,16 4,4 2,16,2,0,6}; do
    echo "== f16 nhwc GPUML_CONV_DW3_CFG=$c"
    GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f16 nhwc | grep layer | cut -c1-80
done
for c in 0,0,1 0,16; do echo "== f32 nhwc GPUML_CONV_DW3_CFG=$c"; GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f32 nhwc | grep layer | cut -c1-80; done
for c in 0,0,2 0,16; do echo "== f16 nchw GPUML_CONV_DW3_CFG=$c"; GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c ./build/prof_dw f16 nchw | grep layer | cut -c1-80; done
} 2>&1 | tee "$OUT/bench.log"
