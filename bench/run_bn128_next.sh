#!/bin/bash
# For the next session (2 x H200): 128-column tiles by default, and the session-29 GPU changes not yet run.  Runs test_matmul forced_bn128 (the
# case matrices on 128-column tiles, never run yet) and bn128_few with memcheck / racecheck, then the
# whole GPU suite with GPUML_MM_BN=auto (the rule on: most test shapes are few-tile ones, so every
# suite exercises it), then bench_matmul bn.  If all pass, make the rule the default in gpuml__sm90_bn
# (mode -1 without the variable) and note it.
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup bn128 build/test_matmul || exit 1
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_matmul bn128_few\ns racecheck test_matmul bn128_few\nt test_matmul forced_bn128\n' >> "$jobs"
# also the session-29 changes that never ran on a GPU: log_softmax_offset (norm.cu's (x - max) - log(sum)),
# residual_is_c (desc.residual = C on every GPU path), with the sanitizers on the changed norm kernel
printf 't test_ops log_softmax_offset\nt test_matmul residual_is_c\ns memcheck test_ops log_softmax_offset\nt test_ops f16_rows_specials\nt test_ops cross_entropy\n' >> "$jobs"
T_TIMEOUT=400 gpu_jobs "$jobs"
GPUML_MM_BN=auto NO_SAN=1 OUT=$O/quick tests/run_gpu_quick.sh > $O/quick.log 2>&1
echo "quick suite (GPUML_MM_BN=auto) rc=$? [$(( $(date +%s) - T0 )) s]"; tail -22 $O/quick.log
gpu_bench_matmul && CUDA_VISIBLE_DEVICES=0 timeout 90 ./build/bench_matmul bn 2>&1 | grep -v "(stream-K walk"
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build bn128
