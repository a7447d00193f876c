#!/bin/bash
# On a GPU machine: build everything, run the whole suite (GPU included) and compute-sanitizer
# memcheck and racecheck over the GPU tests ("test"), then the benchmarks next to their
# references ("bench": bench/report.sh -> BENCHMARKS.md and docs/benchmarks.png, plus the
# foundation and graph benchmarks).  No argument: both.  The two halves fit one 10-minute
# device call each.  Logs go to build/gpu, packed into $OUT/gpu_logs.tgz (or build/); a
# summary is printed last.
set -u
cd "$(dirname "$0")/.."
part=${1:-all}
RESULT=${OUT:-build}
OUT=build/gpu
mkdir -p "$OUT" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "GPU: $(cat "$OUT/gpu.txt")"
make -s tests examples build/demo > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
summary=""
if [ "$part" = test ] || [ "$part" = all ]; then
    # demo twice: cold and warm disk cache
    rm -rf "$GPUML_CACHE_DIR"
    ( time ./build/demo ) > "$OUT/demo_cold.log" 2>&1
    ( time ./build/demo ) > "$OUT/demo_warm.log" 2>&1
    summary+="demo cold: $(grep -E '^(total|real)' "$OUT/demo_cold.log" | tr '\n' ' ')\n"
    summary+="demo warm: $(grep -E '^(total|real)' "$OUT/demo_warm.log" | tr '\n' ' ')\n"
    tests/run_all.sh > "$OUT/tests.log" 2>&1
    summary+="tests: $(tail -n 1 "$OUT/tests.log")\n"
    # sanitizers over the GPU tests (the plain builds): (program, test filter); the foundation
    # tests whole, the kernel-heavy suites on the tests that exercise each kernel family
    for spec in "test_core:" "test_profile:" "test_ops:softmax" "test_ops:norms" "test_ops:binary" "test_ops:reduce" \
                "test_ops:optimizers" "test_matmul:bf16_gpu" "test_matmul:f32_gpu" "test_matmul:forced_wgmma_tf32_fp8" \
                "test_conv_igemm:" "test_conv:fuzz_forward" "test_conv:fuzz_backward" "test_conv:depthwise" "test_conv:pool"; do
        t=${spec%%:*}; f=${spec#*:}
        [ -x build/$t ] || continue
        for tool in memcheck racecheck; do
            GPUML_TEST_NO_FAULT=1 timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/$t $f > "$OUT/san_${tool}_$t$f.log" 2>&1
            summary+="compute-sanitizer $tool $t $f: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/san_${tool}_$t$f.log" | tail -n 1) $(tail -n 1 "$OUT/san_${tool}_$t$f.log")\n"
        done
    done
    grep -E "FAIL|skip|exited" "$OUT/tests.log" | head -60
fi
if [ "$part" = bench ] || [ "$part" = all ]; then
    REPORT_DIR=build/report bench/report.sh > "$OUT/report.log" 2>&1
    summary+="bench report.sh: rc=$?\n"
    for b in bench/run_core.sh bench/run_graphs.sh; do
        [ -x "$b" ] || continue
        timeout 120 "$b" > "$OUT/$(basename "$b" .sh).log" 2>&1
        summary+="bench $(basename "$b"): rc=$?\n"
    done
    cp BENCHMARKS.md "$OUT/" 2>/dev/null; cp docs/benchmarks.png "$OUT/" 2>/dev/null
fi
cp build/*.log "$OUT/" 2>/dev/null
tar -czf "$RESULT/gpu_logs.tgz" -C "$OUT" . 2>/dev/null
echo "----"
printf "$summary"
