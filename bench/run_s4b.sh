#!/bin/sh
# session 4, the measuring call: bench_conv's f16 NHWC resnet rows (bias + ReLU, rotated) with the
# refitted 16-bit chooser and with GPUML_CW_FIT=old, interleaved twice (new, old, new, old), then
# bench/report.sh (BENCHMARKS.md and docs/benchmarks.png copied to $OUT).
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build/s4b}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
for i in 1 2; do
    BENCH_CONV_F16=1 ./build/bench_conv resnet 2>&1 | sed "s/^gpuml /gpuml-new$i /" >> "$O/s4b_ab.txt"
    GPUML_CW_FIT=old BENCH_CONV_F16=1 ./build/bench_conv resnet 2>&1 | sed "s/^gpuml /gpuml-old$i /" >> "$O/s4b_ab.txt"
done
GPUML_COMMIT=${GPUML_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)} bench/report.sh > "$O/s4b_report.log" 2>&1
cp BENCHMARKS.md "$O/" 2>/dev/null; cp docs/benchmarks.png "$O/" 2>/dev/null
tail -5 "$O/s4b_report.log"
