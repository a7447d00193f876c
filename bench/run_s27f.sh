#!/bin/bash
# Session 27, sixth call: backward data of a stride-2 1x1 tf32 NCHW conv as one gpuml_conv_1x1w whose
# epilogue spreads dx (C1W_UP).  Build; test_conv bwd_data_up2 / backward_layers / bwd_data_phases,
# test_conv_tf32 wgmma_1x1_split, memcheck / racecheck of bwd_data_up2; then bench_conv's bwd rows
# with the route on / off and conv_torch.py's.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
gpu_setup s27f build/test_conv_tf32 build/test_conv || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_conv bwd_data_up2\ns racecheck test_conv bwd_data_up2\n' >> "$jobs"
for t in bwd_data_up2 backward_layers ${MORE_TESTS:-bwd_data_phases}; do echo "t test_conv $t" >> "$jobs"; done
[ -n "${SPLIT_TEST:-}" ] && echo "t test_conv_tf32 wgmma_1x1_split" >> "$jobs"
gpu_jobs "$jobs"
echo "tests: $(( $(date +%s) - T0 )) s"
for r in 1 2; do
  echo "round $r on"; timeout 90 ./build/bench_conv bwd 2>&1 | grep "tf32"
  echo "round $r off"; GPUML_CONV_BWD_UP2=off timeout 90 ./build/bench_conv bwd 2>&1 | grep "tf32"
done | tee "$O/bench.log"
timeout 120 python3 bench/conv_torch.py bwd 2>&1 | grep "tf32" | tee "$O/torch.log"
echo "all: $(( $(date +%s) - T0 )) s"
