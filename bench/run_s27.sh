#!/bin/bash
# Session 27 probe: how the tf32 NCHW 1x1 conv's time follows its tile waves (bench/c1w_waves.c at
# several batches, cuDNN beside it), and ncu on c512 28 k256 at batch 32.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/s27}; mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cc -std=c99 -O2 -Wall -Wextra -I. bench/c1w_waves.c -o build/c1w_waves -ldl -lpthread -lm || exit 1
S="32 512 28 256 21 512 28 256 16 512 28 256 11 512 28 256 42 512 28 256 32 256 14 1024 21 256 14 1024 32 1024 14 256 64 1024 14 256 32 256 56 128 32 64 56 64"
./build/c1w_waves $S | tee "$O/gpuml.log"
for c in 3 6; do echo "cfg $c"; GPUML_CONV_1X1W_CFG=$c ./build/c1w_waves 32 512 28 256 32 256 14 1024; done | tee "$O/cfg.log"
python3 bench/c1w_waves_torch.py $S 2>&1 | tee "$O/torch.log"
timeout 200 ncu --clock-control none -k regex:gpuml_conv_1x1w --launch-skip 8 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
  --metrics 'sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
  ./build/c1w_waves 32 512 28 256 > "$O/ncu.log" 2>&1
grep -v "^==PROF==" "$O/ncu.log" | grep -E "Duration|Throughput|gmma|lts__t_bytes|dram__bytes|stalled_(long|barrier|wait|math|short|lg|mio|not_sel|selected|no_inst|membar|sleep|branch|dispatch|drain|tex|imc|misc)|Registers|Achieved Occ|Theoretical Occ|Block Limit|Waves" | head -60
