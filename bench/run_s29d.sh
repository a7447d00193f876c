#!/bin/bash
# Session 29: where the few-tile bf16 shapes' time goes: ncu kernel durations (gpuml's split-K kernel
# and its epilogue kernel, the two-way split, cuBLAS's kernels) for bench_matmul vs on one shape at a
# time; then the GPU tests of the session's split-K change (tf32 / fp8) with memcheck / racecheck.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup s29d build/test_matmul || exit 1
gpu_bench_matmul || exit 1
gpu_cublas
for s in bf16:512x512x8192 bf16:1024x1024x8192 bf16:128x4096x8192 bf16:1024x2048x4096 bf16:256x256x16384; do
    echo "== $s"
    ./build/bench_matmul vs $s 2>&1 | grep best
    timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv ./build/bench_matmul vs $s 2>/dev/null | python3 bench/ncu_by_name.py | head -6
done
echo "ncu: $(( $(date +%s) - T0 )) s"
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_matmul fp8_scales\ns racecheck test_matmul fp8_scales\n' >> "$jobs"
for t in fp8_scales forced_splitk splitk_few forced_split2 fp8_gpu f32_gpu forced_wgmma_tf32_fp8; do echo "t test_matmul $t" >> "$jobs"; done
gpu_jobs "$jobs"
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s29d
