#!/bin/bash
# For the next session with device time (one H200): the things session 30 left unrun on a GPU --
# test_conv_igemm stem_tma (its GPUML_CONV_STEM_TMA=off assertion) -- then a fresh bench/report.sh
# (BENCHMARKS.md and docs/benchmarks.png come back in $OUT; the new one-process matmul table included).
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup next build/test_conv_igemm build/test_core build/test_ops || exit 1
# session 31: copy / fill / rand on the one iteration helper (gpuml__xiter): test_core whole, memcheck on its copies
printf 't test_conv_igemm stem_tma\nt test_core copy_strided\nt test_core copy_transpose\nt test_core cast_all_pairs\nt test_core fill\nt test_core fill_contig\nt test_core rand\nt test_core views\ns memcheck test_core copy_strided\ns memcheck test_core fill\nt test_ops binary\n' > $O/jobs.txt
gpu_jobs $O/jobs.txt
STEP_TIMEOUT=150 GPUML_COMMIT=${GPUML_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)} bench/report.sh > $O/report.log 2>&1
echo "report rc=$?"; grep "^report:\|geometric mean" $O/report.log | tail -30
[ -n "$OUTDIR" ] && { cp BENCHMARKS.md docs/benchmarks.png "$OUTDIR/" 2>/dev/null; tar czf "$OUTDIR/logs.tgz" -C build next report/raw 2>/dev/null; }
true
