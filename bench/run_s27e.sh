#!/bin/bash
# Session 27, fourth and fifth calls: gpuml_conv_1x1w with the whole ring loaded before the first wait
# (where it holds every step, in the fifth), cfg 9 (64 x 64, two slots, six blocks an SM) for K <= 64
# or C <= 64.  (The fourth call ran the sweep below with S2="32 64 56 64 32 64 56 256 32 256 56 64
# 32 256 56 128" CFGS="1 6 7 8 9" SWEEP_AB=1: each configuration also with the previous kernels and
# with the 4-byte-store epilogue.)  Build; test_conv_tf32 (all), test_conv
# resnet_layers / fuzz_forward, memcheck / racecheck of wgmma_1x1 and wgmma_1x1_split; then alone:
# c1w_waves on ResNet-50's 1x1 layers, the previous kernels (build/old_kernels.cu.inc, split off)
# against these, each configuration forced, cuDNN beside.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
: "${T_TIMEOUT:=400}" "${S_TIMEOUT:=420}" "${JOBS:=10}"; export T_TIMEOUT S_TIMEOUT
gpu_setup s27e build/test_conv_tf32 build/test_conv || exit 1
cc -std=c99 -O2 -Wall -Wextra -I. bench/c1w_waves.c -o build/c1w_waves -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra -I. '-DGPUML_KERNELS_INC="build/old_kernels.cu.inc"' bench/c1w_waves.c -o build/c1w_waves_old -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ -z "${NO_TESTS:-}" ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    printf 's memcheck test_conv_tf32 wgmma_1x1_split\ns racecheck test_conv_tf32 wgmma_1x1_split\ns memcheck test_conv_tf32 wgmma_1x1\ns racecheck test_conv_tf32 wgmma_1x1\n' >> "$jobs"
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    for t in resnet_layers fuzz_forward; do echo "t test_conv $t" >> "$jobs"; done
    gpu_jobs "$jobs"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
S="32 64 56 64 32 64 56 256 32 256 56 64 32 256 56 128 32 128 28 512 32 512 28 128 32 512 28 256 32 256 14 1024 32 1024 14 256 32 1024 14 512 32 512 7 2048 32 2048 7 512"
for r in 1 2; do
    echo "round $r: old"; GPUML_CONV_1X1W_SPLIT=off ./build/c1w_waves_old $S
    echo "round $r: new"; ./build/c1w_waves $S
done 2>&1 | tee "$O/ab.log"
S2=${S2:-32 1024 14 256 32 256 14 1024}
for c in ${CFGS:-3 5 7 8 9}; do
    [ -n "${SWEEP_AB:-}" ] && { echo "cfg $c old"; GPUML_CONV_1X1W_SPLIT=off GPUML_CONV_1X1W_CFG=$c ./build/c1w_waves_old $S2; }
    echo "cfg $c"; GPUML_CONV_1X1W_CFG=$c ./build/c1w_waves $S2
    [ -n "${SWEEP_AB:-}" ] && { echo "cfg $c eps0"; GPUML_CONV_1X1W_VAR=1,0 GPUML_CONV_1X1W_CFG=$c ./build/c1w_waves $S2; }
done 2>&1 | tee "$O/cfg.log"
python3 bench/c1w_waves_torch.py $S 2>&1 | tee "$O/torch.log"
echo "all: $(( $(date +%s) - T0 )) s"
