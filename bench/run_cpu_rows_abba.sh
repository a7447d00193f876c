#!/bin/sh
# A/B of two bench_ops builds on the CPU rows, alternated A B B A per round (a shared 2-core VM: another
# job's compile takes a core at times), at 1 and 2 threads.  Prints per line the range over rounds of ms
# a call and of the fraction of the same run's 2-thread memcpy, and the load average before each run.
# Usage: bench/run_cpu_rows_abba.sh OLD_BIN NEW_BIN [rounds] [filter]   (env: GPUML_CPU_SIMD, BENCH_DTYPES,
# BENCH_COLS, BENCH_ITERS are passed through; defaults avx2, bf16, 1024,4096,8192,32768, 10)
old=$1; new=$2; rounds=${3:-3}; filter=${4:-softmax,layernorm,rmsnorm}
: "${GPUML_CPU_SIMD:=avx2}" "${BENCH_DTYPES:=bf16}" "${BENCH_ITERS:=10}"
export GPUML_BACKEND=cpu GPUML_CPU_SIMD BENCH_DTYPES BENCH_ITERS
raw=${RAW:-/tmp/rows_abba.txt}; : > "$raw"
one() {   # tag binary threads
    echo "load $(cut -d' ' -f1 /proc/loadavg)" | sed "s/^/$1 $3 /" >> "$raw"
    GPUML_NUM_THREADS=$3 "$2" "$filter" 2>&1 | sed "s/^/$1 $3 /" >> "$raw"
}
r=0
while [ $r -lt "$rounds" ]; do
    for t in 1 2; do one old "$old" $t; one new "$new" $t; one new "$new" $t; one old "$old" $t; done
    r=$((r + 1))
done
python3 - "$raw" <<'PY'
import sys, collections
res = collections.OrderedDict(); loads = []
for l in open(sys.argv[1]):
    w = l.split()
    if len(w) > 3 and w[2] == 'load': loads.append(float(w[3]))
    if len(w) > 9 and w[2] == 'gpuml':
        us = float(w[6]); fr = float(w[10])
        d = res.setdefault((w[1], w[3], w[4], w[5]), {}).setdefault(w[0], [])
        d.append((us / 1000.0, fr))
print("load averages before runs: %.2f-%.2f" % (min(loads), max(loads)))
for k, d in res.items():
    s = "%sT %-10s %-5s %-12s" % k
    for tag in ('old', 'new'):
        v = d.get(tag, [])
        if v: s += "  %s %.2f-%.2f ms (%.2f-%.2f)" % (tag, min(x[0] for x in v), max(x[0] for x in v), min(x[1] for x in v), max(x[1] for x in v))
    print(s)
PY
