#!/bin/bash
# f32 conv on the tensor cores in one device call: build; every test_conv_tf32 test and the conv
# suites' wgmma / f32 / AUTO tests, 6 at a time; compute-sanitizer memcheck on the wgmma f32
# configurations and racecheck on the special-value runs (both kernels); then, alone on the GPU,
# bench_conv's ResNet-50 rows with the f32 A/B variants (BENCH_CONV_AB=1) and conv_torch.py in the
# same run, tabled by bench/conv_f32_table.py.  Logs go to $OUT (or build/f32).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/f32}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv_tf32 build/test_conv build/test_conv_igemm > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ "${TESTS:-1}" = 1 ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    [ "${SAN:-1}" = 1 ] && printf 's memcheck test_conv_tf32 every_cfg_wgmma\ns racecheck test_conv_tf32 specials\n' >> "$jobs"
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    for t in forced_wgmma resnet_layers fuzz_forward forced_igemm; do echo "t test_conv $t" >> "$jobs"; done
    for t in wgmma_every_cfg wgmma_fuzz wgmma_im2col wgmma_big_and_split resnet_shapes_auto; do echo "t test_conv_igemm $t" >> "$jobs"; done
    run_job() {
        if [ "$1" = t ]; then
            timeout "${T_TIMEOUT:-150}" ./build/$2 "=$3" > "$O/$2_$3.log" 2>&1
            echo "test $2 $3: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$O/$2_$3.log" | head -n 1 | sed 's/^  //')"
        else
            GPUML_TEST_NO_FAULT=1 timeout "${S_TIMEOUT:-200}" compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$O/san_$2_$4.log" 2>&1
            echo "sanitizer $2 $3 $4: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$2_$4.log" | tail -n 1)"
        fi
    }
    export -f run_job; export O
    xargs -P "${JOBS:-6}" -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    grep -h "K_gemm\|wgmma:" "$O/test_conv_tf32_resnet_accuracy.log" 2>/dev/null
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
BENCH_CONV_AB=1 timeout "${B_TIMEOUT:-150}" ./build/bench_conv resnet > "$O/bench_gpuml.log" 2>&1
echo "bench: $(( $(date +%s) - T0 )) s"
timeout "${P_TIMEOUT:-100}" python3 bench/conv_torch.py resnet > "$O/bench_torch.log" 2>&1
python3 bench/conv_f32_table.py "$O/bench_gpuml.log" "$O/bench_torch.log" | tee "$O/table.txt"
echo "all: $(( $(date +%s) - T0 )) s"
