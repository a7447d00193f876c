#!/bin/bash
# tf32 NCHW 1x1 on wgmma (gpuml_conv_1x1w) in one device call: build; test_conv_tf32 (all), test_conv
# resnet_layers / fuzz_forward, test_jit compile_all_families, memcheck / racecheck on wgmma_1x1,
# 8 at a time (NO_JIT=1 leaves compile_all_families out); then, alone on the GPU, bench_conv's 1x1
# rows (BENCH_CONV_1X1=1) with the rule, without the one-image-a-block form (GPUML_CONV_1X1W_IMG=off),
# the kernel's four forms (GPUML_CONV_1X1W_VAR=tma,eps; VARS= none),
# each tile configuration forced (GPUML_CONV_1X1W_CFG=1..6), without the kernel
# (GPUML_CONV_1X1W=off: the previous routes), and conv_torch.py's same rows, tabled.
# NO_TESTS=1: benchmarks only.  Logs go to $OUT (or build/1x1w).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/1x1w}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv_tf32 build/test_conv build/test_jit > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ -z "${NO_TESTS:-}" ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    printf 's memcheck test_conv_tf32 wgmma_1x1\ns racecheck test_conv_tf32 wgmma_1x1\n' >> "$jobs"
    [ -z "${NO_JIT:-}" ] && echo "t test_jit compile_all_families" >> "$jobs"
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    for t in resnet_layers fuzz_forward; do echo "t test_conv $t" >> "$jobs"; done
    run_job() {
        if [ "$1" = t ]; then
            s0=$(date +%s)
            timeout "${T_TIMEOUT:-400}" ./build/$2 "=$3" > "$O/$2_$3.log" 2>&1
            echo "test $2 $3: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$O/$2_$3.log" | head -n 1 | sed 's/^  //') [$(( $(date +%s) - s0 )) s]"
            grep -h "^    FAIL" "$O/$2_$3.log" | head -5
        else
            GPUML_TEST_NO_FAULT=1 timeout "${S_TIMEOUT:-300}" compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$O/san_$2_$4.log" 2>&1
            echo "sanitizer $2 $3 $4: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$2_$4.log" | tail -n 1)"
            grep -m 5 "Invalid\|Race\|Error" "$O/san_$2_$4.log"
        fi
    }
    export -f run_job; export O
    xargs -P "${JOBS:-8}" -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
export BENCH_CONV_1X1=1
b() { timeout 90 "$@" 2>&1; }
b ./build/bench_conv resnet > "$O/b_default.log"
GPUML_CONV_1X1W=off b ./build/bench_conv resnet > "$O/b_off.log"
args="default=$O/b_default.log off=$O/b_off.log"
GPUML_CONV_1X1W_IMG=off b ./build/bench_conv resnet > "$O/b_imgoff.log"; args="$args imgoff=$O/b_imgoff.log"
for v in ${VARS-0,0 1,0 0,1 1,1}; do GPUML_CONV_1X1W_VAR=$v b ./build/bench_conv resnet > "$O/b_var${v/,/}.log"; args="$args var${v/,/}=$O/b_var${v/,/}.log"; done
for c in ${CFGS:-1 2 3 4 5 6}; do GPUML_CONV_1X1W_CFG=$c b ./build/bench_conv resnet > "$O/b_cfg$c.log"; args="$args cfg$c=$O/b_cfg$c.log"; done
echo "bench: $(( $(date +%s) - T0 )) s"
timeout 120 python3 bench/conv_torch.py resnet > "$O/b_torch.log" 2>&1
python3 bench/ab_table.py resnet "$O/b_torch.log" $args | grep -v "f32 NCHW |"
echo "all: $(( $(date +%s) - T0 )) s"
