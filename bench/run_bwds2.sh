#!/bin/bash
# Strided backward data as one forward conv per output phase (gpuml__cv_bwd_data_sub) in one
# device call: build; test_conv's bwd_data_phases, backward_layers and fuzz_backward, memcheck and
# racecheck on bwd_data_phases; then bench_conv bwds2 (ResNet-50's strided 3x3 layers, backward
# data, f32 / f16 / tf32, NCHW / NHWC) with the phase route (default) and without it
# (GPUML_CONV_BWD_SUB=off: the zero-upsampled route), next to conv_torch.py bwds2, tabled.
# NO_TESTS=1: the benchmarks only; NO_SAN=1: no sanitizers.  Logs go to $OUT (or build/bwds2).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/bwds2}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
if [ -z "${NO_TESTS:-}" ]; then
./build/test_conv =bwd_data_phases > "$O/t_warm.log" 2>&1   # compiles the kernels once (shared cache)
for t in bwd_data_phases backward_layers fuzz_backward; do
    timeout 300 ./build/test_conv "=$t" > "$O/t_$t.log" 2>&1
    echo "test_conv $t: rc=$? $(tail -n 1 "$O/t_$t.log")"; grep -h "^    FAIL" "$O/t_$t.log" | head -5
done &
if [ -z "${NO_SAN:-}" ]; then
    for tool in memcheck racecheck; do
        GPUML_TEST_NO_FAULT=1 timeout 300 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/test_conv =bwd_data_phases > "$O/san_$tool.log" 2>&1
        echo "$tool bwd_data_phases: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$tool.log" | tail -n 1)"
    done
fi
wait
echo "tests: $(( $(date +%s) - T0 )) s"
fi
GPUML_CONV_BWD_SUB=off ./build/bench_conv bwds2 > "$O/b_off.log" 2>&1
./build/bench_conv bwds2 > "$O/b_default.log" 2>&1
timeout 120 python3 bench/conv_torch.py bwds2 > "$O/b_torch.log" 2>&1
python3 bench/ab_table.py bwd_data "$O/b_torch.log" upsampled="$O/b_off.log" default="$O/b_default.log"
echo "all: $(( $(date +%s) - T0 )) s"
