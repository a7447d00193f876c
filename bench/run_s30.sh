#!/bin/bash
# Session 30, first call after 128-column tiles became the default: the tests whose assertions now pin 256
# columns (forced_wgmma, forced_wgmma_tf32_fp8, streamk_few, forced_streamk, fp8_scales) and forced_splitk
# under the new default, memcheck on the changed log-softmax / cross-entropy kernel; then the stream-K tail
# forced on 132 CTAs and 128-column tiles at 4096^3 (tf32 and bf16: 512 tiles on 132 SMs, 3.88 waves)
# next to cuBLAS in one process; then the ResNet-50 1x1 layers through each conv path (conv_1x1_paths).
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup s30 build/test_matmul build/test_ops || exit 1
jobs=$O/jobs.txt; : > "$jobs"
for t in forced_wgmma forced_wgmma_tf32_fp8 streamk_few forced_streamk fp8_scales forced_splitk bn128_few; do echo "t test_matmul $t" >> "$jobs"; done
printf 's memcheck test_ops log_softmax_offset\ns memcheck test_ops cross_entropy\ns racecheck test_ops log_softmax_offset\n' >> "$jobs"
T_TIMEOUT=300 gpu_jobs "$jobs"
echo "tests: $(( $(date +%s) - T0 )) s"
gpu_bench_matmul && gpu_cublas
for e in streamk=132 bn=128; do
    BENCH_VS_ENV=$e timeout 100 ./build/bench_matmul vs tf32:4096x4096x4096 bf16:4096x4096x4096 f16:4096x4096x4096 tf32:8192x8192x8192 2>&1
done
echo "matmul: $(( $(date +%s) - T0 )) s"
cc -std=c99 -O2 bench/conv_1x1_paths.c -o build/conv_1x1_paths -ldl -lpthread -lm && timeout 150 ./build/conv_1x1_paths
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s30
