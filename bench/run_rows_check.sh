#!/bin/bash
# GPU, one call (~4-5 min on an H200): the memory-bound-op kernels checked and measured.
#  1. build/test_ops, its tests run side by side by name (the GPU parts included), with
#     compute-sanitizer memcheck/racecheck over the row kernels, GELU and the reductions;
#  2. bench/run_rows_sweep.sh (the row-kernel choices against the rule, same run);
#  3. bench_ops (add, mul, gelu, sum, adamw) and bench/bench_ops_torch.py (everything).
# Logs under build/rows_check (packed into $OUT/rows_check.tgz when OUT is set); a summary last.
cd "$(dirname "$0")/.." || exit 1
L=build/rows_check
mkdir -p "$L"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache} PYTHONUNBUFFERED=1
make -s build/test_ops > "$L/build.log" 2>&1 || { tail -20 "$L/build.log"; exit 1; }
T0=$(date +%s)
for f in row_variants row_overrides softmax norms norm_backward cross_entropy unary activation reduce binary nan_inf \
         clamp_where var_correction optimizers errors cpu_gpu_agree; do
    ( timeout 170 ./build/test_ops $f > "$L/t_$f.log" 2>&1; echo "test $f: rc=$? $(tail -n 1 "$L/t_$f.log")"
      grep -h FAIL "$L/t_$f.log" | head -4 ) &
done
for s in memcheck:row_variants racecheck:row_variants memcheck:unary memcheck:reduce racecheck:reduce memcheck:softmax; do
    t=${s%%:*}; f=${s#*:}
    ( GPUML_TEST_NO_FAULT=1 timeout 170 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 ./build/test_ops $f \
          > "$L/san_${t}_$f.log" 2>&1
      echo "compute-sanitizer $t $f: rc=$? $(grep 'ERROR SUMMARY' "$L/san_${t}_$f.log" | tail -n 1)" ) &
done
wait
echo "tests and sanitizers: $(( $(date +%s) - T0 )) s"
timeout 90 bench/run_rows_sweep.sh "$L/sweep.log" > "$L/sweep_table.txt" 2>&1
cat "$L/sweep_table.txt"
timeout 40 ./build/bench_ops add,mul,gelu,sum,adamw > "$L/ops_gpuml.txt" 2>&1
timeout 60 python3 bench/bench_ops_torch.py > "$L/ops_torch.txt" 2>&1
grep -h "of copy\|roof" "$L/ops_gpuml.txt" "$L/ops_torch.txt" | sed 's/  */ /g'
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
[ -n "${OUT:-}" ] && tar -czf "$OUT/rows_check.tgz" "$L"
exit 0
