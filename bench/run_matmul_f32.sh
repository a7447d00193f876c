#!/bin/sh
# f32 matmul on the GPU machine (3xTF32 on Hopper): the f32 tests, compute-sanitizer on the
# split kernel, gpuml's f32 rows and accuracy next to cuBLAS f32 (PyTorch) in the same run.
# Logs go to build/f32, packed into $OUT/f32_logs.tgz (or build/); a summary is printed.
cd "$(dirname "$0")/.." || exit 1
O=build/f32
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
make -s -j8 build/test_matmul > "$O/build.log" 2>&1 &
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm >> "$O/build.log" 2>&1 || { cat "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm >> "$O/build.log" 2>&1
wait
timeout 120 ./build/bench_matmul f32 > "$O/bench_f32.log" 2>&1; echo "bench_matmul f32: rc=$?"
timeout 90 python3 bench/matmul_torch.py f32 > "$O/torch_f32.log" 2>&1; echo "matmul_torch f32: rc=$?"
cat "$O/bench_f32.log" "$O/torch_f32.log"
for f in ${TESTS:-f32 tf32}; do
    timeout ${T_TIMEOUT:-120} ./build/test_matmul $f > "$O/test_matmul_$f.log" 2>&1
    echo "test_matmul $f: rc=$? $(tail -n 1 "$O/test_matmul_$f.log")"; grep -E "FAIL|skip|worst" "$O/test_matmul_$f.log" | head -30
done
for tool in memcheck racecheck; do
    GPUML_TEST_NO_FAULT=1 timeout 60 compute-sanitizer --tool $tool --report-api-errors no ./build/test_matmul f32_special > "$O/san_$tool.log" 2>&1
    echo "$tool f32_special: rc=$? $(grep 'ERROR SUMMARY' "$O/san_$tool.log" | tail -n 1) $(tail -n 1 "$O/san_$tool.log")"
done
[ -n "$CONV" ] && { timeout 60 ./build/bench_conv resnet > "$O/conv.log" 2>&1; grep "f32 NCHW" "$O/conv.log"; }
tar -czf "${OUT:-build}/f32_logs.tgz" -C "$O" . 2>/dev/null
