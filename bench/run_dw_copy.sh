#!/bin/bash
# Depthwise 3x3 against a copy of the same bytes (2026-11-29): bench_conv's depthwise lines (each with
# a copy moving the layer's bytes, rotated the same way) and cuDNN's through bench/conv_torch.py; then
# ncu's pipe and warp-state view of the rows kernel's f16 broadcast (bench/prof_rows.c ncu), for the
# next step there.  Logs to $OUT (or build/dwcopy).
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh dwcopy
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 -I. bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 bench/prof_rows.c -o build/prof_rows -ldl -lpthread -lm || exit 1
{ ./build/bench_conv depthwise; python3 bench/conv_torch.py depthwise; } > "$O/dw.txt" 2>&1
grep -v "^$" "$O/dw.txt"
echo "dw: $(( $(date +%s) - T0 )) s"
timeout 150 ncu --kernel-name gpuml_ew_rows --launch-count 1 --section ComputeWorkloadAnalysis --section InstructionStats \
    --section WarpStateStats --section SpeedOfLight ./build/prof_rows ncu > "$O/ncu_rows.txt" 2>&1
grep -E "Pipe|Issue|Stall|Warp Cycles|Executed Ipc|Duration|Compute \(SM\)|Memory Through|Inst" "$O/ncu_rows.txt" | head -40
echo "done: $(( $(date +%s) - T0 )) s"
