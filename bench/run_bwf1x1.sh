#!/bin/bash
# f32 1x1 stride-1 backward filter (gpuml_conv_bwf1x1: tf32 and 3xTF32, NCHW and NHWC) in one device call: build; test_conv's
# bwf_1x1, bwf_conv and backward_layers, memcheck and racecheck on bwf_1x1; then bench_conv
# bwf1x1 (every ResNet-50 1x1 stride-1 layer, f32 and tf32) with the rule, with the kernel forced
# (GPUML_CONV_BWF1X1=on) and without it (=off: the swapped-conv route), next to conv_torch.py
# bwf1x1, tabled.  Logs go to $OUT (or build/bwf1x1).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/bwf1x1}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
./build/test_conv =bwf_1x1 > "$O/t_warm.log" 2>&1   # compiles the kernels once (shared cache)
for t in bwf_1x1 bwf_conv backward_layers fuzz_backward; do
    timeout 300 ./build/test_conv "=$t" > "$O/t_$t.log" 2>&1
    echo "test_conv $t: rc=$? $(tail -n 1 "$O/t_$t.log")"; grep -h "^    FAIL" "$O/t_$t.log" | head -5
done &
for tool in memcheck racecheck; do
    GPUML_TEST_NO_FAULT=1 timeout 300 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/test_conv =bwf_1x1 > "$O/san_$tool.log" 2>&1
    echo "$tool bwf_1x1: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$tool.log" | tail -n 1)"
done
wait
echo "tests: $(( $(date +%s) - T0 )) s"
GPUML_CONV_BWF1X1=off ./build/bench_conv bwf1x1 > "$O/b_off.log" 2>&1
GPUML_CONV_BWF1X1=on ./build/bench_conv bwf1x1 > "$O/b_on.log" 2>&1
./build/bench_conv bwf1x1 > "$O/b_default.log" 2>&1
timeout 120 python3 bench/conv_torch.py bwf1x1 > "$O/b_torch.log" 2>&1
python3 bench/ab_table.py bwd_filter "$O/b_torch.log" off="$O/b_off.log" on="$O/b_on.log" default="$O/b_default.log"
echo "all: $(( $(date +%s) - T0 )) s"
