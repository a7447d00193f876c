#!/bin/bash
# tf32 NCHW 1x1 stride-1 backward filter on the wgmma matmul (gpuml__cv_bwf1x1w: gpuml_matmul_sm90
# split-K over images x pixels with rank-3 tensor maps) in one short device call: build; test_conv
# bwf_1x1_wgmma with memcheck and racecheck beside it, bwf_1x1 and backward_layers; then bench_conv
# bwf1x1's tf32 NCHW rows with the route forced on and off (GPUML_CONV_BWF1X1W=on / off),
# alternated.  TORCH=1 adds conv_torch.py bwf1x1 (all four variants).  Logs go to $OUT (or build/bwf1x1w).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/bwf1x1w}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
./build/test_conv =bwf_1x1_wgmma > "$O/t_bwf_1x1_wgmma.log" 2>&1   # also compiles the kernels once (shared cache)
echo "test_conv bwf_1x1_wgmma: rc=$? $(tail -n 1 "$O/t_bwf_1x1_wgmma.log") [$(( $(date +%s) - T0 )) s]"
grep -h "^    FAIL" "$O/t_bwf_1x1_wgmma.log" | head -5
for tool in memcheck racecheck; do
    GPUML_TEST_NO_FAULT=1 timeout "${S_TIMEOUT:-150}" compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/test_conv =bwf_1x1_wgmma > "$O/san_$tool.log" 2>&1
    echo "$tool bwf_1x1_wgmma: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$tool.log" | tail -n 1)"
done > "$O/san.txt" 2>&1 &
for t in bwf_1x1 backward_layers; do
    timeout 150 ./build/test_conv "=$t" > "$O/t_$t.log" 2>&1
    echo "test_conv $t: rc=$? $(tail -n 1 "$O/t_$t.log")"; grep -h "^    FAIL" "$O/t_$t.log" | head -5
done
wait
cat "$O/san.txt"
echo "tests: $(( $(date +%s) - T0 )) s"
export BENCH_BWF1X1_V=1
for r in 1 2; do
    GPUML_CONV_BWF1X1W=off ./build/bench_conv bwf1x1 > "$O/b_off$r.log" 2>&1
    GPUML_CONV_BWF1X1W=on ./build/bench_conv bwf1x1 > "$O/b_on$r.log" 2>&1
done
unset BENCH_BWF1X1_V
T=/dev/null
if [ -n "${TORCH:-}" ]; then timeout 120 python3 bench/conv_torch.py bwf1x1 > "$O/b_torch.log" 2>&1; T="$O/b_torch.log"; fi
python3 bench/ab_table.py bwd_filter "$T" off="$O/b_off1.log" on="$O/b_on1.log" off2="$O/b_off2.log" on2="$O/b_on2.log"
echo "all: $(( $(date +%s) - T0 )) s"
