#!/bin/bash
# Session 29, 128-column tiles (GPUML_MM_BN=128; off by default), first GPU run on one H200 with the
# last ~300 s of the session's device time: test_matmul bn128_few (the stream-K tail and the two-way
# split on 128-column tiles: bf16, f16 -> f32 n-major B, tf32 NT, fp8) with memcheck / racecheck, then
# bench_matmul bn (ABBA against 256 columns) and bench_matmul vs with GPUML_MM_BN=auto next to cuBLAS.
# (forced_bn128, the full case matrices, is left for the next session: ~40 cold kernel variants.)
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup s29g build/test_matmul || exit 1
gpu_bench_matmul || exit 1
timeout 100 ./build/test_matmul =bn128_few > $O/bn128_few.log 2>&1; echo "bn128_few rc=$? $(tail -1 $O/bn128_few.log)"; grep -m5 FAIL $O/bn128_few.log
jobs=$O/jobs.txt; printf 's memcheck test_matmul bn128_few\ns racecheck test_matmul bn128_few\n' > "$jobs"
S_TIMEOUT=100 gpu_jobs "$jobs"
echo "tests: $(( $(date +%s) - T0 )) s"
timeout 90 ./build/bench_matmul bn 2>&1 | grep -v "(stream-K walk"
gpu_cublas
BENCH_VS_ENV=GPUML_MM_BN=auto timeout 60 ./build/bench_matmul vs bf16:1024x2048x4096 bf16:1024x1792x4096 bf16:1024x1024x8192 bf16:512x512x8192 2>&1 | grep -v "^bf16"
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s29g
