#!/bin/sh
# Kernel-by-kernel times (ncu, no clock control) of f32 conv layers, NCHW against NHWC, tf32 and
# f32 (bench/prof_conv_f32.c).  Logs to ${OUT:-build}.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
cc -std=c99 -O2 -Wall -Wextra bench/prof_conv_f32.c -o build/prof_conv_f32 -ldl -lpthread -lm || exit 1
./build/prof_conv_f32 > /dev/null   # warm the kernel cache outside the profiler
ncu --clock-control none --metrics gpu__time_duration.sum --csv ./build/prof_conv_f32 > "$O/prof_f32_ncu.csv" 2>&1
python3 - "$O/prof_f32_ncu.csv" <<'PY' | tee "$O/prof_f32_ncu.txt"
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
for l in lines:
    if l.startswith("done") or l.startswith("error"): print(l)
rows = [r for r in csv.reader([l for l in lines if l.startswith('"')]) if len(r) > 10]
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value"); gi = hdr.index("Grid Size"); bi = hdr.index("Block Size")
for r in rows[1:]:
    print("%10s  %-16s %-12s %s" % (r[vi], r[gi], r[bi], r[ki][:80]))
PY
