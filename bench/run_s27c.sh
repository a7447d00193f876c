#!/bin/bash
# Session 27, third call: the memory-bound tf32 NCHW 1x1 layers (C = 64, and K = 64): every tile
# configuration and form forced (c1w_waves), then ncu on c64 56 k256 and c64 56 k64 (rule).  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/s27c}; mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
cc -std=c99 -O2 -Wall -Wextra -I. bench/c1w_waves.c -o build/c1w_waves -ldl -lpthread -lm || exit 1
S="32 64 56 256 32 64 56 64 32 256 56 64"
echo "rule"; ./build/c1w_waves $S
for c in 1 2 3 4 5 6; do for v in 2,1 2,0; do echo "cfg $c var $v"; GPUML_CONV_1X1W_CFG=$c GPUML_CONV_1X1W_VAR=$v ./build/c1w_waves $S; done; done
echo "pipe on"; GPUML_CONV_1X1W_PIPE=1 ./build/c1w_waves $S
M='sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,dram__bytes_read.sum.per_second,dram__bytes_write.sum.per_second,sm__warps_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
for L in "32 64 56 256" "32 64 56 64"; do
  echo "== ncu $L"
  timeout 120 ncu --clock-control none -k regex:gpuml_conv_1x1w --launch-skip 8 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --metrics "$M" ./build/c1w_waves $L > "$O/ncu.log" 2>&1
  grep -v "^==PROF==" "$O/ncu.log" | grep -E "Duration|dram__|lts__t|warps_active|stalled_(long|barrier|wait|math|short|lg|mio|not_sel|selected|no_inst|membar|sleep|branch|dispatch|drain|tex|imc|misc)|Registers Per|Achieved Occ|Theoretical Occ|Block Limit (Sh|Reg)|Waves|Memory Throughput" | awk '$NF != "0" && $NF != "0.00"'
done
