#!/bin/bash
# Session 29, first call (one H200): the two-way split's first GPU run (formerly bench/run_split2.sh:
# test_matmul forced_split2 with memcheck / racecheck, forced_streamk, streamk_few, streamk_partition;
# bench_matmul split2 next to matmul_torch.py split2), test_ops' row tests (norm.cu's gpuml__vword
# refactor, SASS identical), and the bf16 6144^3 question: bench_matmul shapes at tile-order group
# heights 8 / 4 / 16 on shapes that take 6144 in one dimension at a time, next to cuBLAS.
# Logs under build/s29, packed into $OUT/logs.tgz.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup s29 build/test_matmul build/test_ops || exit 1
gpu_bench_matmul || exit 1
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_matmul forced_split2\ns racecheck test_matmul forced_split2\n' >> "$jobs"
for t in forced_split2 forced_streamk streamk_few streamk_partition; do echo "t test_matmul $t" >> "$jobs"; done
for t in softmax norms row_variants row_overrides norm_backward norm_backward_fd cross_entropy f16_rows_specials short_rows; do
    echo "t test_ops $t" >> "$jobs"
done
gpu_jobs "$jobs"
echo "tests: $(( $(date +%s) - T0 )) s"
timeout 120 ./build/bench_matmul split2 2>&1 | grep -v "(split in" | tee "$O/bench_split2.log"
timeout 120 python3 bench/matmul_torch.py split2 2>&1 | tee "$O/torch_split2.log"
S="6144x6144x6144 8192x8192x8192 6144x8192x8192 8192x6144x8192 8192x8192x6144 4096x4096x6144"
BENCH_GROUPS=8,4,16 timeout 150 ./build/bench_matmul shapes $S 2>&1 | tee "$O/bench_shapes.log"
timeout 120 python3 bench/matmul_torch.py shapes $S 2>&1 | tee "$O/torch_shapes.log"
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s29
