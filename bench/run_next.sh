#!/bin/bash
# Session 31's device calls (one H200), warm one after the other:
#   bench/run_next.sh tests   the GPU tests of what session 30 left unrun (test_conv_igemm stem_tma, its
#                             GPUML_CONV_STEM_TMA=off assertion) and of session 31's refactors: copy / fill /
#                             rand on the one iteration helper (gpuml__xiter), one tensor-map helper
#                             (gpuml__tmap_rank); memcheck on the copies, fill and the stem
#   bench/run_next.sh report  a fresh bench/report.sh under a 540 s limit; BENCHMARKS.md, docs/benchmarks.png
#                             and the raw outputs (bench/report.sh --from DIR redraws the table from them) in $OUT
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
if [ "${1:-tests}" = tests ]; then
    OUT= gpu_setup next build/test_conv_igemm build/test_core build/test_ops build/test_conv build/test_matmul || exit 1
    printf '%s\n' "t test_conv_igemm stem_tma" "t test_core copy_strided" "t test_core copy_transpose" "t test_core cast_all_pairs" \
        "t test_core fill" "t test_core fill_contig" "t test_core rand" "t test_core views" "t test_ops binary" \
        "t test_conv bwf_1x1_wgmma" "t test_matmul bf16_gpu" "t test_matmul forced_wgmma" \
        "s memcheck test_core copy_strided" "s memcheck test_core fill" "s memcheck test_conv_igemm stem_tma" > $O/jobs.txt
    gpu_jobs $O/jobs.txt
    echo "tests: $(( $(date +%s) - T0 )) s"
    [ -n "$OUTDIR" ] && tar czf "$OUTDIR/tests.tgz" -C build next 2>/dev/null
else
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    STEP_TIMEOUT=150 GPUML_COMMIT=${GPUML_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)} timeout 540 bench/report.sh > build/report.log 2>&1
    echo "report rc=$?"; grep "^report:\|geometric mean" build/report.log | tail -40
    [ -n "$OUTDIR" ] && { cp BENCHMARKS.md docs/benchmarks.png build/report.log "$OUTDIR/" 2>/dev/null; tar czf "$OUTDIR/raw.tgz" -C build/report raw 2>/dev/null; }
fi
true
