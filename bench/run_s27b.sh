#!/bin/bash
# Session 27, second call: the split tail of gpuml_conv_1x1w.  Build; test_conv_tf32 (all), test_conv
# resnet_layers / fuzz_forward, memcheck / racecheck of wgmma_1x1_split and wgmma_1x1; then alone on
# the GPU: c1w_waves with the split off / on alternated, cuDNN beside it, and bench_conv's 1x1 rows
# (default / split off) with conv_torch.py's, tabled.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
gpu_setup s27b build/test_conv_tf32 build/test_conv || exit 1
cc -std=c99 -O2 -Wall -Wextra -I. bench/c1w_waves.c -o build/c1w_waves -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ -z "${NO_TESTS:-}" ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    printf 's memcheck test_conv_tf32 wgmma_1x1_split\ns racecheck test_conv_tf32 wgmma_1x1_split\ns memcheck test_conv_tf32 wgmma_1x1\n' >> "$jobs"
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    for t in resnet_layers fuzz_forward; do echo "t test_conv $t" >> "$jobs"; done
    gpu_jobs "$jobs"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
S="32 512 28 256 32 256 14 1024 42 512 28 256 21 512 28 256 32 1024 14 256 32 256 56 128 32 128 28 512"
for r in 1 2; do
    echo "round $r: split off"; GPUML_CONV_1X1W_SPLIT=off ./build/c1w_waves $S
    echo "round $r: default"; ./build/c1w_waves $S
done 2>&1 | tee "$O/waves.log"
python3 bench/c1w_waves_torch.py $S 2>&1 | tee "$O/waves_torch.log"
export BENCH_CONV_1X1=1
timeout 90 ./build/bench_conv resnet > "$O/b_default.log" 2>&1
GPUML_CONV_1X1W_SPLIT=off timeout 90 ./build/bench_conv resnet > "$O/b_off.log" 2>&1
timeout 120 python3 bench/conv_torch.py resnet > "$O/b_torch.log" 2>&1
python3 bench/ab_table.py resnet "$O/b_torch.log" default="$O/b_default.log" off="$O/b_off.log" | grep -v "f32 NCHW |"
echo "all: $(( $(date +%s) - T0 )) s"
