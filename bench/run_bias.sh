#!/bin/bash
# After the bias-epilogue change (conv_sm90, matmul_sm90, conv_stem), one device call: compute-sanitizer
# memcheck and racecheck on the tests that run those kernels with a bias (8 at a time, each capped at
# $SAN_TIMEOUT s), then alone on the GPU bench/prof_store.c (bias on / off through each route) and
# bench_conv's f16 NHWC ResNet-50 rows next to conv_torch.py's (cuDNN), tabled.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/bias}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
T0=$(date +%s)
make -s -j16 build/test_conv_igemm build/test_conv build/test_matmul > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/prof_store.c -o build/prof_store -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
for spec in memcheck:test_conv_igemm:wgmma_tma_y racecheck:test_conv_igemm:wgmma_tma_y memcheck:test_conv_igemm:wgmma_every_cfg \
            racecheck:test_conv_igemm:wgmma_every_cfg memcheck:test_conv:forced_wgmma memcheck:test_matmul:forced_wgmma \
            racecheck:test_matmul:forced_wgmma memcheck:test_conv_igemm:stem_kernel racecheck:test_conv_igemm:stem_kernel; do echo "$spec"; done |
    xargs -P 8 -I{} bash -c 'IFS=: read -r tool s t <<< "{}"; GPUML_TEST_NO_FAULT=1 timeout ${SAN_TIMEOUT:-300} compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/$s "=$t" > "build/san_${tool}_$t.log" 2>&1; echo "sanitizer $tool $s $t: rc=$? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" "build/san_${tool}_$t.log" | tail -n 1) $(grep -E "^[0-9]+ passed" "build/san_${tool}_$t.log")"' | tee "$O/san.txt"
echo "sanitizers: $(( $(date +%s) - T0 )) s"
./build/prof_store 2>&1 | tee "$O/routes.txt"
BENCH_CONV_F16=1 ./build/bench_conv resnet > "$O/ab.txt" 2>&1
BENCH_CONV_F16=1 python3 bench/conv_torch.py resnet > "$O/torch.txt" 2>&1
echo "bench: $(( $(date +%s) - T0 )) s"
python3 bench/conv_compare.py "$O/ab.txt" "$O/torch.txt"
