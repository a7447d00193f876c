#!/bin/bash
# f32 NCHW 1x1 stride-1 convs with x read as it is (gpuml_conv_1x1s: CUDA cores, tf32 and 3xTF32
# mma.sync) in one device call: build; test_conv_tf32 (all), the conv suites' f32 / AUTO tests and
# test_jit's compile_all_families (no spills), 6 at a time; compute-sanitizer memcheck and racecheck
# on simt_1x1; then, alone on the GPU, bench_conv's 1x1 rows (BENCH_CONV_1X1=1: f32 NCHW and tf32)
# under each routing (the default; GPUML_CONV_1X1S=off: the layout pass + implicit GEMM; the tf32
# form's ring depth and pixel tile, GPUML_CONV_1X1S_CFG=stages,pixels for each of $CFGS) and
# conv_torch.py's same rows, tabled.
# Logs go to $OUT (or build/1x1).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/1x1}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv_tf32 build/test_conv build/test_jit > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ "${TESTS:-1}" = 1 ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    printf 's memcheck test_conv_tf32 simt_1x1\ns racecheck test_conv_tf32 simt_1x1\n' >> "$jobs"
    if [ "${FEW:-0}" = 1 ]; then   # FEW=1: the 1x1 kernel's own test and sanitizer runs only
        echo "t test_conv_tf32 simt_1x1" >> "$jobs"
    else
        echo "t test_jit compile_all_families" >> "$jobs"
        for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
        for t in resnet_layers fuzz_forward; do echo "t test_conv $t" >> "$jobs"; done
    fi
    run_job() {
        if [ "$1" = t ]; then
            timeout "${T_TIMEOUT:-400}" ./build/$2 "=$3" > "$O/$2_$3.log" 2>&1
            echo "test $2 $3: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$O/$2_$3.log" | head -n 1 | sed 's/^  //')"
            grep -h "^    FAIL" "$O/$2_$3.log" | head -5
        else
            GPUML_TEST_NO_FAULT=1 timeout "${S_TIMEOUT:-200}" compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$O/san_$2_$4.log" 2>&1
            echo "sanitizer $2 $3 $4: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$2_$4.log" | tail -n 1)"
        fi
    }
    export -f run_job; export O
    xargs -P "${JOBS:-6}" -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
export BENCH_CONV_1X1=1
./build/bench_conv resnet > "$O/b_default.log" 2>&1
GPUML_CONV_1X1S=off ./build/bench_conv resnet > "$O/b_off.log" 2>&1
CFGS=${CFGS:-"2,256 3,256 6,256 2,128 4,128 6,128"}
for c in $CFGS; do GPUML_CONV_1X1S_CFG=$c ./build/bench_conv resnet > "$O/b_cfg_${c/,/_}.log" 2>&1; done
echo "bench: $(( $(date +%s) - T0 )) s"
timeout "${P_TIMEOUT:-100}" python3 bench/conv_torch.py resnet > "$O/b_torch.log" 2>&1
args="default=$O/b_default.log off=$O/b_off.log"
for f in "$O"/b_cfg_*.log; do [ -e "$f" ] && c=${f##*/b_cfg_} && args="$args ${c%.log}=$f"; done
python3 bench/ab_table.py resnet "$O/b_torch.log" $args
echo "all: $(( $(date +%s) - T0 )) s"
