#!/bin/bash
# A shorter GPU pass for a tight device budget: plain builds (no ASan), every suite with its GPU
# tests, compute-sanitizer memcheck on the newest kernels, then the conv benchmark next to cuDNN.
# Each step has a time limit and writes its log straight to $OUT (so a cut-off run still reports).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/quick}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
# most recently changed first (a cut-off run reports what matters most)
tests="build/test_conv build/test_conv_igemm build/test_matmul build/test_core build/test_profile build/test_ops"
make -s -j16 $tests examples > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
for t in $tests; do
    n=$(basename $t)
    timeout ${T_TIMEOUT:-70} ./$t > "$O/$n.log" 2>&1
    echo "$n: rc=$? $(tail -n 1 "$O/$n.log")"; grep -E "FAIL" "$O/$n.log" | head -8
done
timeout 90 tests/test_examples.sh > "$O/examples.log" 2>&1
echo "examples: $(tail -n 1 "$O/examples.log")"; grep -E "FAIL|cuda" "$O/examples.log" | head -12
for spec in "test_conv:fuzz_forward" "test_conv_igemm:" "test_core:copy_transpose" "test_matmul:forced_wgmma_tf32_fp8" "test_profile:"; do
    t=${spec%%:*}; f=${spec#*:}
    GPUML_TEST_NO_FAULT=1 timeout 40 compute-sanitizer --tool memcheck --report-api-errors no ./build/$t $f > "$O/memcheck_$t$f.log" 2>&1
    echo "memcheck $t $f: rc=$? $(grep 'ERROR SUMMARY' "$O/memcheck_$t$f.log" | tail -n 1)"
done
