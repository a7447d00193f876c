#!/bin/bash
# The kernel patches in bench/patches/ in one device call: bench_conv built from the tree as it is
# (build/bench_conv_old), then every patch applied, the kernels regenerated and the tests that cover
# them run 8 at a time (the tf32 1x1 kernel: test_conv_tf32 all, test_conv resnet_layers /
# fuzz_forward with GPUML_CONV_1X1S=on; the strided backward data: bwd_data_phases, backward_layers,
# fuzz_backward; the depthwise 3x3 kernels: depthwise3x3 / _cfg / _staged / depthwise) with
# memcheck / racecheck beside them; then, alone on the GPU, old and new bench_conv alternated on the
# rows each patch touches (A/B within one call: no PyTorch here, the report run gives the ratios).
# Logs go to $OUT (or build/patches).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/patches}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv_old -ldl -lpthread -lm || exit 1
for p in bench/patches/*.patch; do
    if [ -z "${NO_APPLY:-}" ]; then
        git apply "$p" 2>/dev/null || patch -s -p1 < "$p" || { echo "cannot apply $p"; exit 1; }
    fi
done
make -s kernels || exit 1
make -s -j16 build/test_conv build/test_conv_tf32 > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ -z "${NO_TESTS:-}" ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    for k in 0 1 2; do echo "t test_conv depthwise3x3_cfg $k/3" >> "$jobs"; done
    for k in 0 1 2; do echo "t test_conv depthwise3x3 $k/3" >> "$jobs"; done
    for spec in memcheck:test_conv_tf32:simt_1x1 racecheck:test_conv_tf32:simt_1x1 \
                memcheck:test_conv:bwd_data_phases racecheck:test_conv:bwd_data_phases \
                memcheck:test_conv:depthwise3x3 racecheck:test_conv:depthwise3x3 \
                memcheck:test_conv:depthwise3x3_staged racecheck:test_conv:depthwise3x3_staged; do
        IFS=: read -r tool s t <<< "$spec"; echo "s $tool $s $t" >> "$jobs"
    done
    echo "on test_conv resnet_layers" >> "$jobs"; echo "on test_conv fuzz_forward" >> "$jobs"
    for t in bwd_data_phases backward_layers fuzz_backward depthwise3x3_staged depthwise; do echo "t test_conv $t" >> "$jobs"; done
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    run_job() {
        if [ "$1" = s ]; then
            GPUML_TEST_NO_FAULT=1 TEST_CONV_DW_STEP=5 timeout "${S_TIMEOUT:-240}" compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$O/san_$2_$4.log" 2>&1
            echo "sanitizer $2 $3 $4: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$2_$4.log" | tail -n 1)"
        else
            log=$O/$1_$2_$3${4:+_${4%/*}}.log; s0=$(date +%s)
            if [ "$1" = on ]; then export GPUML_CONV_1X1S=on; fi
            TEST_CONV_DW_PART=${4:-0/1} timeout "${T_TIMEOUT:-240}" ./build/$2 "=$3" > "$log" 2>&1
            echo "test $2 $3${4:+ part $4}${GPUML_CONV_1X1S:+ (1x1s on)}: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$log" | head -n 1 | sed 's/^  //') [$(( $(date +%s) - s0 )) s]"
            grep -h "^    FAIL" "$log" | head -5
        fi
    }
    export -f run_job; export O
    xargs -P "${JOBS:-8}" -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
# benchmarks, alone on the GPU: old and new alternated
b() { timeout 90 "$@" 2>&1; }
for r in 1 2; do
    BENCH_CONV_1X1=1 b ./build/bench_conv_old resnet > "$O/r_old$r.log"
    BENCH_CONV_1X1=1 b ./build/bench_conv resnet > "$O/r_new$r.log"
done
BENCH_CONV_1X1=1 GPUML_CONV_1X1S=on b ./build/bench_conv resnet > "$O/r_new_on.log"
BENCH_CONV_1X1=1 GPUML_CONV_1X1S=on b ./build/bench_conv_old resnet > "$O/r_old_on.log"
BENCH_CONV_1X1=1 GPUML_CONV_1X1S=off b ./build/bench_conv resnet > "$O/r_off.log"
echo "bench resnet 1x1: $(( $(date +%s) - T0 )) s"
python3 bench/ab_table.py resnet /dev/null old=$O/r_old1.log default=$O/r_new1.log old2=$O/r_old2.log new2=$O/r_new2.log old_on=$O/r_old_on.log new_on=$O/r_new_on.log off=$O/r_off.log
for r in 1 2; do
    b ./build/bench_conv_old bwds2 > "$O/s_old$r.log"
    b ./build/bench_conv bwds2 > "$O/s_new$r.log"
done
echo "bench bwds2: $(( $(date +%s) - T0 )) s"
python3 bench/ab_table.py bwd_data /dev/null old=$O/s_old1.log default=$O/s_new1.log old2=$O/s_old2.log new2=$O/s_new2.log
for r in 1 2; do
    b ./build/bench_conv_old depthwise > "$O/d_old$r.log"
    b ./build/bench_conv depthwise > "$O/d_new$r.log"
done
python3 bench/dw_table.py old=$O/d_old1.log new=$O/d_new1.log old2=$O/d_old2.log new2=$O/d_new2.log
echo "all: $(( $(date +%s) - T0 )) s"
