#!/bin/bash
# Session 29, after run_s29e.sh (one H200): the split-K epilogue's lane mode up to 2^20 outputs: the
# split-K tests, memcheck / racecheck of splitk_few, ncu durations of the epilogue kernel (512^2 x 8192,
# 256^2 x 16384, 1024^2 x 8192), and the split-K shapes next to cuBLAS in one process.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup s29f build/test_matmul || exit 1
gpu_bench_matmul || exit 1
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_matmul splitk_few\ns racecheck test_matmul splitk_few\n' >> "$jobs"
for t in splitk_few forced_splitk fp8_scales; do echo "t test_matmul $t" >> "$jobs"; done
gpu_jobs "$jobs"
gpu_cublas
for s in bf16:512x512x8192 bf16:256x256x16384 bf16:1024x1024x8192; do
    echo "== ncu $s"
    timeout 100 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv ./build/bench_matmul vs $s 2>/dev/null | python3 bench/ncu_by_name.py | grep -i "splitk\|sm90\|nvjet\|reduce"
done
timeout 100 ./build/bench_matmul vs bf16:512x512x8192 bf16:1024x1024x8192 bf16:128x4096x8192 bf16:256x256x16384 tf32:256x256x16384 2>&1 | grep -v "^bf16\|^tf32"
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s29f
