#!/bin/bash
# Fourth device call (2026-11-29, twenty-sixth session), for the next session's planning: the long
# rows' knobs swept once more on the H200 (L2 prefetch distance [6], persistent blocks [8]) for rows of
# 16384 / 32768 in bf16 and f32, and ncu at the run's own clocks (--clock-control none) with the
# warp stall reasons per issued instruction for layernorm (bf16 8192 / 32768, f32 32768).
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh s26d
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
export BENCH_ITERS=100 BENCH_COLS=16384,32768 BENCH_DTYPES=bf16,f32
{
for t in 0 0,0,0,0,0,0,-1 0,0,0,0,0,0,8 0,0,0,0,0,0,64 0,0,0,0,0,0,0,0,2 0; do
    echo "== BENCH_ROWS_TUNE=$t"; BENCH_ROWS_TUNE=$t ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#\|^device\|overrides'
done
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
for cfg in "bf16 8192" "bf16 32768" "f32 32768"; do
    set -- $cfg
    echo "== ncu layernorm $1 rows of $2"
    BENCH_ITERS=3 BENCH_DTYPES=$1 BENCH_COLS=$2 timeout 120 ncu --clock-control none --kernel-name gpuml_rows --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section SchedulerStats --section Occupancy \
        --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
        ./build/bench_ops layernorm > "$O/ncu_$1_$2.txt" 2>&1
    grep -E "SM Frequency|Duration|DRAM Throughput|Compute \(SM\)|Issued Warp|No Eligible|Active Warps Per|Achieved Occupancy|stalled" "$O/ncu_$1_$2.txt" |
        awk '{ if ($0 ~ /stalled/) { v = $NF; gsub(",", "", v); if (v + 0 >= 0.05) print } else print }' | head -40
done
echo "total: $(( $(date +%s) - T0 )) s"
