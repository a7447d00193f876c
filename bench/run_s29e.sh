#!/bin/bash
# Session 29, last call (2 x H200): the whole GPU suite (tests/run_gpu_quick.sh NO_SAN=1), the sanitizers
# on this session's matmul changes (split-K epilogue kernel, split-K for tf32 / fp8, the two-way split,
# the fp8 scales), then the split-K shapes next to cuBLAS in one process and ncu durations of the
# split-K epilogue kernel.  Summaries printed; logs packed into $OUT/logs.tgz.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
mkdir -p build/s29e
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
T0=$(date +%s)
NO_SAN=1 OUT=build/s29e/quick tests/run_gpu_quick.sh > build/s29e/quick.log 2>&1
echo "quick suite rc=$? [$(( $(date +%s) - T0 )) s]"; tail -22 build/s29e/quick.log
SAN_ONLY=1 SAN_SPECS="memcheck:test_matmul:splitk_few racecheck:test_matmul:splitk_few memcheck:test_matmul:fp8_scales racecheck:test_matmul:fp8_scales memcheck:test_matmul:forced_split2 racecheck:test_matmul:forced_split2 memcheck:test_matmul:streamk_few" \
    OUT=build/s29e/san tests/run_gpu_quick.sh > build/s29e/san.log 2>&1
echo "sanitizers rc=$? [$(( $(date +%s) - T0 )) s]"; tail -12 build/s29e/san.log
gpu_bench_matmul || exit 1
export CUDA_VISIBLE_DEVICES=0
gpu_cublas
timeout 100 ./build/bench_matmul vs bf16:512x512x8192 bf16:1024x1024x8192 bf16:128x4096x8192 bf16:256x256x16384 tf32:256x2048x8192 tf32:256x256x16384 2>&1 | grep -v "^bf16\|^tf32" | tee build/s29e/vs.log
for s in bf16:512x512x8192 bf16:256x256x16384; do
    echo "== ncu $s"
    timeout 100 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv ./build/bench_matmul vs $s 2>/dev/null | python3 bench/ncu_by_name.py | grep -i "splitk\|sm90\|nvjet\|reduce"
done
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s29e
