#!/bin/bash
# GPU, one call (~4.5 min on an H100): the elementwise / optimizer / reduction kernel shapes
# checked and swept next to PyTorch.
#  1. build/test_ops, its tests run side by side by name (GPU parts included), compute-sanitizer
#     memcheck over the forced shapes (ew_shapes) and binary/unary/optimizers, racecheck over
#     ew_shapes; meanwhile the sweeps' kernels are compiled into the cache (BENCH_ITERS=1 runs);
#  2. the sweeps, one process at a time: BENCH_EW_TUNE (add, mul, gelu, adamw), BENCH_REDUCE_TUNE
#     (sum), BENCH_ROWS_TUNE (rows of 4096-32768);
#  3. bench_ops (the rule: every op) and bench/bench_ops_torch.py, copy roof in each.
# Logs under build/ew_check (packed into $OUT/ew_check.tgz when OUT is set); a summary printed.
#   bench/run_ew_check.sh [ew tunes...]   (each "block,vectors,grid,hints"; default: the list below)
#   EW_RD="per_sm,vectors,nofuse ..." EW_RW="rows tune ..." EW_COLS=1024,... choose the other sweeps
cd "$(dirname "$0")/.." || exit 1
L=build/ew_check
mkdir -p "$L"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache} PYTHONUNBUFFERED=1
# the rule, the former rule (one wave walking the array, no hints), neighbours, the rule again
EW=${*:-"0,0,0,0 256,1,2,2 128,1,1,1 512,1,1,1 256,2,1,1 0,0,0,0"}
# the rule (4 a SM, last block merges), without the merge, the former rule (16 a SM + finish kernel)
RD=${EW_RD:-"0,0,0 0,0,1 16,8,1 4,4,0 8,8,0 2,8,0"}
# the rule, clusters wherever a row needs over 256 threads (the former rule), a register cap of
# 80, 256 bytes a thread (f32 rows of 32768: a cluster of 2 x 256)
RW=${EW_RW:-"0,0,0,0,0 64,0,0,0,0 0,0,0,0,80 256,0,0,0,0"}
export BENCH_COLS=${EW_COLS:-1024,4096,8192,16384,32768}
T0=$(date +%s)
( make -s build/test_ops > "$L/build.log" 2>&1 ) &
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm >> "$L/build.log" 2>&1 || { tail "$L/build.log"; exit 1; }
wait
[ -x build/test_ops ] || { tail -20 "$L/build.log"; exit 1; }
echo "built: $(( $(date +%s) - T0 )) s"
for f in ew_shapes binary unary activation reduce optimizers nan_inf clamp_where softmax norms row_variants row_overrides \
         norm_backward cross_entropy var_correction cpu_gpu_agree errors; do
    ( timeout 110 ./build/test_ops $f > "$L/t_$f.log" 2>&1; echo "test $f: rc=$? $(tail -n 1 "$L/t_$f.log")"
      grep -h FAIL "$L/t_$f.log" | head -4 ) &
done
for s in memcheck:ew_shapes racecheck:ew_shapes memcheck:row_variants racecheck:row_variants memcheck:reduce memcheck:optimizers; do
    t=${s%%:*}; f=${s#*:}
    ( GPUML_TEST_NO_FAULT=1 timeout 110 compute-sanitizer --tool $t --report-api-errors no --error-exitcode 9 ./build/test_ops $f \
          > "$L/san_${t}_$f.log" 2>&1
      echo "compute-sanitizer $t $f: rc=$? $(grep 'ERROR SUMMARY' "$L/san_${t}_$f.log" | tail -n 1)" ) &
done
# compile the sweeps' kernels into the cache meanwhile, a few chains at a time (timings discarded)
warm() { local v=$1 f=$2; shift 2; for t in "$@"; do env BENCH_ITERS=1 $v=$t timeout 60 ./build/bench_ops $f > /dev/null 2>&1; done; }
set -- $EW
warm BENCH_EW_TUNE add,mul,gelu,adamw $1 $5 $9 ${13} &
warm BENCH_EW_TUNE add,mul,gelu,adamw $2 $6 ${10} &
warm BENCH_EW_TUNE add,mul,gelu,adamw $3 $7 ${11} &
warm BENCH_EW_TUNE add,mul,gelu,adamw $4 $8 ${12} &
warm BENCH_REDUCE_TUNE sum $RD &
set -- $RW
warm BENCH_ROWS_TUNE softmax,layernorm,rmsnorm $1 $3 &
warm BENCH_ROWS_TUNE softmax,layernorm,rmsnorm $2 $4 &
wait
echo "tests, sanitizers, compiles: $(( $(date +%s) - T0 )) s"
table() {   # "tune op dt shape ... of copy" lines -> one column per tune
    awk '/of copy/ { k = $3 " " $4 " " $5; v[k, $1] = $(NF - 2); if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                     if (!($1 in tseen)) { tseen[$1] = 1; tl[++nt] = $1 } }
         END { printf "%-26s", "op dtype shape \\ tune"; for (j = 1; j <= nt; j++) printf " %10s", tl[j]; printf "\n"
               for (i = 1; i <= nk; i++) { printf "%-26s", keys[i]; for (j = 1; j <= nt; j++) printf " %10s", v[keys[i], tl[j]]; printf "\n" } }' "$1"
}
: > "$L/sweep_ew.log"; i=0
for t in $EW; do i=$((i + 1)); BENCH_EW_TUNE=$t timeout 30 ./build/bench_ops add,mul,gelu,adamw | sed "s/^/$t#$i /" >> "$L/sweep_ew.log"; done
echo "sweeps: $(( $(date +%s) - T0 )) s"
grep -h "roof" "$L/sweep_ew.log" | head -3
table "$L/sweep_ew.log"
BENCH_COLS= timeout 40 ./build/bench_ops > "$L/ops_gpuml.txt" 2>&1
timeout 80 python3 bench/bench_ops_torch.py > "$L/ops_torch.txt" 2>&1
grep -h "of copy\|roof\|device" "$L/ops_gpuml.txt" "$L/ops_torch.txt" | sed 's/  */ /g'
echo "bench: $(( $(date +%s) - T0 )) s"
: > "$L/sweep_rd.log"
for t in $RD; do BENCH_REDUCE_TUNE=$t timeout 30 ./build/bench_ops sum | sed "s/^/$t /" >> "$L/sweep_rd.log"; done
: > "$L/sweep_rows.log"
for t in $RW; do BENCH_ROWS_TUNE=$t timeout 30 ./build/bench_ops softmax,layernorm,rmsnorm | sed "s/^/$t /" >> "$L/sweep_rows.log"; done
table "$L/sweep_rd.log"; table "$L/sweep_rows.log"
# profiles of two row kernels (bench_ops at the default row lengths) (bf16 layernorm 16384x4096, f32 layernorm 2048x32768: the 21st and
# the 13th gpuml_rows launch of "bench_ops layernorm" at BENCH_ITERS=1)
if command -v ncu > /dev/null; then
    for sk in 20 12; do   # (the default row lengths)
        BENCH_COLS= \
        BENCH_ITERS=1 timeout 60 ncu -k regex:gpuml_rows --launch-skip $sk -c 1 --section SpeedOfLight --section Occupancy \
            --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
            ./build/bench_ops layernorm > "$L/ncu_ln_$sk.txt" 2>&1
    done
    grep -h -E "gpuml_rows|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Cluster|Warp Cycles Per Issued|Issued Warp|No Eligible|Stall|Block Limit" "$L"/ncu_ln_*.txt | sed 's/  */ /g' | head -60
fi
echo "profiles: $(( $(date +%s) - T0 )) s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
echo "total: $(( $(date +%s) - T0 )) s"
[ -n "${OUT:-}" ] && tar -czf "$OUT/ew_check.tgz" "$L"
exit 0
