#!/bin/bash
# Depthwise 3x3 probe, one device call: test_conv's depthwise tests (split over processes), then
# each MobileNetV2 layer next to a copy of the same bytes (bench/prof_dw.c), the previous code
# (.old/: gpuml.h and kernels.cu.inc of an earlier commit, carried -- mkdir -p .old/bench; git show
# REV:gpuml.h > .old/gpuml.h; git show REV:kernels.cu.inc > .old/kernels.cu.inc; cp bench/prof_dw.c
# bench/bench_timing.h .old/bench/; echo /.old/ >> .git/info/exclude) as chosen and with its register
# kernel, and gpuml_conv_dw3 configurations (GPUML_CONV_DW3_CFG=vec,tp,qt,pf,minb,ws).  Logs in $OUT.
cd "$(dirname "$0")/.." || exit 1
export GPUML_CACHE_DIR=$PWD/build/cache
OUT=${OUT:-build/out}; mkdir -p build "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 -Wall -Wextra bench/prof_dw.c -o build/prof_dw -ldl -lpthread -lm || exit 1
[ -f .old/bench/prof_dw.c ] && cc -std=c99 -O2 -Wall -Wextra .old/bench/prof_dw.c -o build/prof_dw_old -ldl -lpthread -lm
make -s build/test_conv > build/mk.log 2>&1 || { tail build/mk.log; exit 1; }
NP=${NP:-8}
if [ -z "$NOTEST" ]; then
for k in $(seq 0 $((NP - 1))); do TEST_CONV_DW_PART=$k/$NP timeout 300 ./build/test_conv =depthwise3x3 > "$OUT/t_dw3_$k.log" 2>&1 & done
timeout 300 ./build/test_conv =depthwise > "$OUT/t_dw.log" 2>&1 &
wait
for f in "$OUT"/t_*.log; do echo "$(basename $f): $(tail -n 1 $f)"; grep FAIL "$f" | head -3; done > "$OUT/tests.txt"
cat "$OUT/tests.txt"
fi
run() {   # tag prog combo [env...]
    local tag=$1 prog=$2 a=$3; shift 3
    echo "== $tag | $a"
    env "$@" $prog $a | grep layer | cut -c1-80
}
{
for a in "f16 nhwc" "f32 nhwc" "f16 nchw" "f32 nchw"; do
    echo "== copy | $a"; ./build/prof_dw $a | grep layer
    export PROF_DW_NOCOPY=1
    [ -x build/prof_dw_old ] && run old_default build/prof_dw_old "$a" && { [ -n "${SKIPOLDREG:-}" ] || run old_reg build/prof_dw_old "$a" GPUML_CONV_DW=reg; }
    run new_default build/prof_dw "$a"
    case "$a" in
        "f16 nhwc") V=${V16H-"4,16,2,0,0,1 2,16,2,0,6,1"} ;;
        "f32 nhwc") V=${V32H-"0,16,2,0,0,2"} ;;
        *) V=${VC-"0,0,2 0,16,2 0,4,2 0,8,2 0,0,2,0,6 0,0,3"} ;;
    esac
    for c in $V; do run "new_dw3:$c" build/prof_dw "$a" GPUML_CONV_DW=reg GPUML_CONV_DW3_CFG=$c; done
    unset PROF_DW_NOCOPY
done
} 2>&1 | tee "$OUT/bench.log"
