#!/bin/sh
# f32 matmul on the GPU machine (3xTF32 on Hopper): the f32 tests, compute-sanitizer on the
# split kernel, gpuml's f32 rows and accuracy next to cuBLAS f32 (PyTorch) in the same run.
# Logs go to build/f32, packed into $OUT/f32_logs.tgz (or build/); a summary is printed.
cd "$(dirname "$0")/.." || exit 1
O=build/f32
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
make -s -j8 build/test_matmul ${CONV:+build/test_conv} > "$O/build.log" 2>&1 &
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm >> "$O/build.log" 2>&1 || { cat "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm >> "$O/build.log" 2>&1
wait
timeout 120 ./build/bench_matmul f32 > "$O/bench_f32.log" 2>&1; echo "bench_matmul f32: rc=$?"
timeout 90 python3 bench/matmul_torch.py f32 > "$O/torch_f32.log" 2>&1; echo "matmul_torch f32: rc=$?"
cat "$O/bench_f32.log" "$O/torch_f32.log"
# TESTS: test_matmul filters ("all": the whole program)
for f in ${TESTS:-f32 tf32}; do
    [ "$f" = all ] && a= || a=$f
    timeout ${T_TIMEOUT:-120} ./build/test_matmul $a > "$O/test_matmul_$f.log" 2>&1
    echo "test_matmul $f: rc=$? $(tail -n 1 "$O/test_matmul_$f.log")"; grep -E "FAIL|skip|worst|3xTF32" "$O/test_matmul_$f.log" | head -30
done
for tool in memcheck racecheck; do
    GPUML_TEST_NO_FAULT=1 timeout 60 compute-sanitizer --tool $tool --report-api-errors no ./build/test_matmul f32_special > "$O/san_$tool.log" 2>&1
    echo "$tool f32_special: rc=$? $(grep 'ERROR SUMMARY' "$O/san_$tool.log" | tail -n 1) $(tail -n 1 "$O/san_$tool.log")"
done
GPUML_TEST_NO_FAULT=1 timeout 90 compute-sanitizer --tool memcheck --report-api-errors no ./build/test_matmul forced_wgmma_f32x3 > "$O/san_memcheck_forced.log" 2>&1
echo "memcheck forced_wgmma_f32x3: rc=$? $(grep 'ERROR SUMMARY' "$O/san_memcheck_forced.log" | tail -n 1) $(tail -n 1 "$O/san_memcheck_forced.log")"
# CONV=1: the conv tests (f32 convs whose GEMM is 2-D take 3xTF32) and the f32 NCHW ResNet layers
if [ -n "$CONV" ]; then
    timeout 100 ./build/test_conv > "$O/test_conv.log" 2>&1
    echo "test_conv: rc=$? $(tail -n 1 "$O/test_conv.log")"; grep FAIL "$O/test_conv.log" | head
    timeout 60 ./build/bench_conv resnet > "$O/conv.log" 2>&1; grep "f32 NCHW" "$O/conv.log"
fi
tar -czf "${OUT:-build}/f32_logs.tgz" -C "$O" . 2>/dev/null
