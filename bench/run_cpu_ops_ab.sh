#!/bin/sh
# A/B of the CPU memory-bound ops on a shared machine: runs build/bench_ops REPS times, alternately
# with GPUML_CPU_SIMD=avx2 and with the default path (AVX-512 where present), and prints the best
# GB/s of each line against the best 2-thread memcpy roof seen.  Usage: bench/run_cpu_ops_ab.sh [reps] [filter]
cd "$(dirname "$0")/.." || exit 1
reps=${1:-4}; filter=${2:-}
mkdir -p build
cc -std=c99 -O2 -I. bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm || exit 1
raw=build/cpu_ops_ab.txt; : > $raw
i=0
while [ $i -lt "$reps" ]; do
    GPUML_BACKEND=cpu GPUML_CPU_SIMD=avx2 build/bench_ops $filter | sed 's/^/avx2 /' >> $raw
    GPUML_BACKEND=cpu build/bench_ops $filter | sed 's/^/best /' >> $raw
    i=$((i + 1))
done
python3 - "$raw" <<'PY'
import sys, collections
best = collections.OrderedDict(); roof = 0.0
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) > 7 and w[1] == 'memcpy:': roof = max(roof, float(w[7]))
    if len(w) > 7 and w[1] == 'gpuml':
        d = best.setdefault((w[2], w[3], w[4]), {}); d[w[0]] = max(d.get(w[0], 0.0), float(w[7]))
print("roof: best 2-thread memcpy %.1f GB/s" % roof)
for k, d in best.items():
    a, b = d.get('avx2', 0.0), d.get('best', 0.0)
    print("%-10s %-5s %-12s avx2 %6.1f GB/s (%.2f)  default %6.1f GB/s (%.2f)" % (k[0], k[1], k[2], a, a / roof, b, b / roof))
PY
