#!/bin/bash
# One device call for the f32 NCHW conv prep / epilogue changes and the row-kernel knobs
# (2026-11-26, third session).  PART=tests: the f32 conv and row tests by name (6 at a time),
# compute-sanitizer on them, the ncu per-kernel breakdown of f32 layers, and the rows sweep
# (BENCH_ROWS_TUNE: L2 prefetch distances).  PART=bench: bench_conv
# resnet with the f32 A/B rows and conv_torch.py resnet in the same call.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/s3}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T0=$(date +%s)
make -s -j16 build/test_conv_tf32 build/test_conv build/test_conv_igemm build/test_ops > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
# "t SUITE TEST" runs a test by name, "s TOOL SUITE TEST" one under compute-sanitizer
run_job() {
    if [ "$1" = t ]; then
        timeout 200 ./build/$2 "=$3" > "$O/$2_$3.log" 2>&1
        echo "test $2 $3: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$O/$2_$3.log" | head -n 1 | sed 's/^  //')"
    else
        GPUML_TEST_NO_FAULT=1 timeout 240 compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$O/san_$2_$3_$4.log" 2>&1
        echo "sanitizer $2 $3 $4: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$2_$3_$4.log" | tail -n 1)"
    fi
}
export -f run_job; export O
if [ "${PART:-tests}" = tests ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    printf 's memcheck test_conv_tf32 every_cfg_wgmma\ns memcheck test_conv_tf32 shapes_gpu_wgmma\ns racecheck test_conv_tf32 shapes_gpu_wgmma\n' >> "$jobs"
    printf 's memcheck test_ops row_overrides\ns racecheck test_ops row_overrides\ns memcheck test_conv_tf32 shapes_gpu_forced\n' >> "$jobs"
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    for t in forced_wgmma resnet_layers fuzz_forward forced_igemm backward_layers; do echo "t test_conv $t" >> "$jobs"; done
    for t in wgmma_every_cfg resnet_shapes_auto; do echo "t test_conv_igemm $t" >> "$jobs"; done
    for t in row_variants row_overrides; do echo "t test_ops $t" >> "$jobs"; done
    xargs -P 8 -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    grep -h "FAIL" "$O"/test_*.log | head -20
    echo "tests: $(( $(date +%s) - T0 )) s"
    OUT=$O bench/run_prof_f32.sh > /dev/null 2>&1; grep -v rand "$O/prof_f32_ncu.txt" | grep -v "^done" > "$O/prof_f32_kernels.txt"
    echo "ncu: $(( $(date +%s) - T0 )) s"
fi
if [ "${PART:-tests}" = tests ] || [ "${ROWS:-0}" = 1 ]; then
    : > "$O/rows_sweep.log"
    for t in ${ROWS_TUNES:-"0,0,0,0,0,0,0,0" "0,0,0,0,0,0,16,0" "0,0,0,0,0,0,66,0" "0,0,0,0,0,0,132,0" "0,0,0,0,0,0,264,0" "0,0,0,0,0,0,0,0"}; do
        BENCH_ROWS_TUNE=$t timeout 40 ./build/bench_ops softmax,layernorm,rmsnorm | sed "s/^/$t /" >> "$O/rows_sweep.log"
    done
    awk '/of copy/ { k = $3 " " $4 " " $5; v[k, $1] = $(NF - 2); if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                     if (!($1 in tseen)) { tseen[$1] = 1; tl[++nt] = $1 } }
         END { printf "%-28s", "op dtype shape \\ tune"; for (j = 1; j <= nt; j++) printf " %17s", tl[j]; printf "\n"
               for (i = 1; i <= nk; i++) { printf "%-28s", keys[i]; for (j = 1; j <= nt; j++) printf " %17s", v[keys[i], tl[j]]; printf "\n" } }' "$O/rows_sweep.log" | tee "$O/rows_table.txt"
    echo "rows: $(( $(date +%s) - T0 )) s"
fi
if [ "${PART:-tests}" = simt ]; then
    # the f32 NCHW 1x1 CUDA-core kernel: its tests (+ sanitizers), then bench_conv resnet with the
    # rule, with GPUML_CONV_1X1S=on (every 1x1 layer) and =off, and cuDNN, in the same call
    jobs=$O/jobs.txt; : > "$jobs"
    printf 's memcheck test_conv_tf32 simt_1x1\ns racecheck test_conv_tf32 simt_1x1\ns memcheck test_conv_tf32 shapes_gpu_wgmma\ns memcheck test_conv_tf32 shapes_gpu_forced\ns racecheck test_conv_tf32 shapes_gpu_wgmma\n' >> "$jobs"
    for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    for t in resnet_layers fuzz_forward forced_wgmma; do echo "t test_conv $t" >> "$jobs"; done
    xargs -P 8 -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    grep -h "FAIL" "$O"/test_*.log | head -20
    echo "tests: $(( $(date +%s) - T0 )) s"
    timeout 100 ./build/bench_conv resnet > "$O/bench_rule.log" 2>&1
    GPUML_CONV_1X1S=on timeout 100 ./build/bench_conv resnet | sed 's/f32 NCHW/f32 NCHW 1x1s-on/' > "$O/bench_on.log" 2>&1
    GPUML_CONV_1X1S=off timeout 100 ./build/bench_conv resnet | sed 's/f32 NCHW/f32 NCHW 1x1s-off/' > "$O/bench_off.log" 2>&1
    echo "bench: $(( $(date +%s) - T0 )) s"
    timeout 150 python3 bench/conv_torch.py resnet > "$O/bench_torch.log" 2>&1
    echo "torch: $(( $(date +%s) - T0 )) s"
    cat "$O/bench_rule.log" "$O/bench_on.log" "$O/bench_off.log" > "$O/bench_gpuml.log"
    # the 1x1 kernel on c256 @56 -> 64 (the 4th to 6th gpuml_conv_1x1s launches of prof_conv_f32)
    cc -std=c99 -O2 bench/prof_conv_f32.c -o build/prof_conv_f32 -ldl -lpthread -lm
    timeout 120 ncu --set full -k gpuml_conv_1x1s --launch-skip 4 --launch-count 1 ./build/prof_conv_f32 > "$O/ncu_1x1s.txt" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Issue Slots Busy|No Eligible|Stall|L1/TEX Hit|Executed Ipc A|Bank" "$O/ncu_1x1s.txt" | head -40
    python3 bench/conv_f32_table.py "$O/bench_gpuml.log" "$O/bench_torch.log" > "$O/f32_table.txt" 2>&1; tail -40 "$O/f32_table.txt"
fi
if [ "${PART:-tests}" = bench ]; then
    BENCH_CONV_AB=1 timeout 200 ./build/bench_conv resnet > "$O/bench_gpuml.log" 2>&1
    echo "bench: $(( $(date +%s) - T0 )) s"
    timeout 150 python3 bench/conv_torch.py resnet > "$O/bench_torch.log" 2>&1
    echo "torch: $(( $(date +%s) - T0 )) s"
    python3 bench/conv_f32_table.py "$O/bench_gpuml.log" "$O/bench_torch.log" > "$O/f32_table.txt" 2>&1; tail -40 "$O/f32_table.txt"
fi
