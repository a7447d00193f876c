#!/bin/bash
# One device call (2026-11-29, twenty-sixth session): f16 rows with their elements converted from the
# words (gpuml__vel) and FULL allowed for them, against the same build with FULL off and the previous
# kernels (build/old_kernels.cu.inc, carried: `git show <commit>:kernels.cu.inc`; FULL off there, as
# the previous rule had it for f16); the bf16 GELU with 2 vectors a thread at 128 threads and with the
# per-block L2 prefetch of the chunk ahead (gpuml__ew_tune[5], quarter waves); PyTorch's f16 ops; ncu
# stall reasons of the bf16 layernorm (rows of 8192 / 32768) and the f16 one; then the tests the
# changes touch, with memcheck / racecheck of the rows.  (The prefetch knob, ew_tune[5], was reverted
# after this call: its BENCH_EW_TUNE lines now run the rule.)
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh s26
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s -j16 build/test_ops build/test_jit > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
cc -std=c99 -O2 bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
[ -f build/old_kernels.cu.inc ] && { cc -std=c99 -O2 -DGPUML_KERNELS_INC='"build/old_kernels.cu.inc"' bench/bench_ops.c -o build/bench_ops_old -ldl -lpthread -lm || exit 1; }
echo "build: $(( $(date +%s) - T0 )) s"
export BENCH_ITERS=100
NOFULL=0,0,0,0,0,0,0,0,0,0,0,1
{
for r in 1 2; do
    echo "== f16 rows, new, rule (FULL), round $r"; BENCH_DTYPES=f16 ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#'
    echo "== f16 rows, new, FULL off, round $r"; BENCH_DTYPES=f16 BENCH_ROWS_TUNE=$NOFULL ./build/bench_ops softmax,layernorm,rmsnorm | grep -v '^#\|overrides'
    [ -x build/bench_ops_old ] && { echo "== f16 rows, old kernels, FULL off, round $r"; BENCH_DTYPES=f16 BENCH_ROWS_TUNE=$NOFULL ./build/bench_ops_old softmax,layernorm,rmsnorm | grep -v '^#\|overrides'; }
done
for r in 1 2; do
    for t in 0 128,2,1,1 0,0,0,0,0,2 0,0,0,0,0,4 0,0,0,0,0,8; do
        echo "== gelu,add BENCH_EW_TUNE=$t round $r"; BENCH_EW_TUNE=$t BENCH_DTYPES=bf16,f32 ./build/bench_ops gelu,add | grep -v '^#\|overrides'
    done
done
echo "== torch f16"; BENCH_DTYPES=f16 timeout 120 python3 bench/bench_ops_torch.py 2>&1 | grep -v '^#'
} > "$O/bench.log" 2>&1
cat "$O/bench.log"
echo "bench: $(( $(date +%s) - T0 )) s"
for cfg in "bf16 8192" "bf16 32768" "f16 8192"; do
    set -- $cfg
    echo "== ncu layernorm $1 rows of $2"
    BENCH_ITERS=3 BENCH_DTYPES=$1 BENCH_COLS=$2 timeout 90 ncu --kernel-name gpuml_rows --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats \
        ./build/bench_ops layernorm > "$O/ncu_$1_$2.txt" 2>&1
    grep -E "Duration|Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Stall|stall" "$O/ncu_$1_$2.txt" | head -40
done > "$O/ncu.log" 2>&1
cat "$O/ncu.log"
echo "ncu: $(( $(date +%s) - T0 )) s"
{ for t in row_variants row_overrides norms softmax norm_backward cross_entropy nan_inf f16_rows_specials cpu_gpu_agree gelu_16bit_all ew_shapes; do echo "t test_ops $t"; done
  echo "t test_jit compile_all_families"
  for spec in memcheck:test_ops:row_variants racecheck:test_ops:row_variants memcheck:test_ops:norms; do echo "s $spec"; done; } > build/s26_jobs.txt
xargs -P 8 -L 1 bash -c 'if [ "$0" = t ]; then s0=$(date +%s); timeout 400 ./build/$1 "=$2" > "build/t_$1_$2.log" 2>&1; echo "test $1 $2: rc=$? $(grep -E "^  (ok|FAIL|skip)" "build/t_$1_$2.log" | head -n 1) [$(( $(date +%s) - s0 )) s]"; grep -h "FAIL" "build/t_$1_$2.log" | head -5;
      else IFS=: read -r tool s t <<< "$1"; GPUML_TEST_NO_FAULT=1 timeout 300 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/$s "=$t" > "build/san_${tool}_$t.log" 2>&1; echo "sanitizer $tool $s $t: rc=$? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" "build/san_${tool}_$t.log" | tail -n 1)"; fi' < build/s26_jobs.txt > "$O/tests.txt"
cat "$O/tests.txt"
echo "total: $(( $(date +%s) - T0 )) s"
