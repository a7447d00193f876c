#!/bin/sh
# The CPU conv next to OpenBLAS's sgemm on the equivalent im2col GEMM (ResNet-50 layers, f32 NHWC,
# batch 1): bench/bench_conv.c's "cpu" part run several times, 1 thread timed by process CPU time
# (robust on a busy shared box) and all threads by the wall clock; the best figure of every run and
# round is kept per layer and library.  Usage: bench/run_conv_cpu.sh [runs, default 3] [old-binary]
# (old-binary: a bench_conv built from another gpuml.h, printed as a column next to the new one).
cd "$(dirname "$0")/.." || exit 1
mkdir -p build/conv_cpu
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
runs=${1:-3}; old=$2
: "${OPENBLAS_CORETYPE:=SkylakeX}"; export OPENBLAS_CORETYPE GPUML_BACKEND=cpu
rm -f build/conv_cpu/*.txt
i=1
while [ $i -le "$runs" ]; do
    for b in $old build/bench_conv; do
        tag=$(basename "$b")
        GPUML_BENCH_CPUTIME=1 GPUML_NUM_THREADS=1 GPUML_BENCH_ROUNDS=3 "$b" cpu > build/conv_cpu/1t_${tag}_$i.txt
        GPUML_BENCH_ROUNDS=4 "$b" cpu > build/conv_cpu/nt_${tag}_$i.txt
    done
    i=$((i + 1))
done
cat /proc/loadavg
for t in 1t nt; do
    echo "== $t (1t: 1 thread, CPU time; nt: all threads, wall clock)"
    python3 - "$t" "$old" <<'PY'
import sys, re, math, glob, collections
t, old = sys.argv[1], sys.argv[2]
def load(tag):
    g = collections.OrderedDict(); b = {}
    for f in sorted(glob.glob("build/conv_cpu/%s_%s_[0-9]*.txt" % (t, tag))):
        for line in open(f):
            m = re.match(r'cpu\s+resnet f32 NHWC n1 (c\d+\s+\d+ k\d+\s+r\d s\d)\s+gpuml\s+([\d.]+) GFLOP/s\s+openblas-gemm\s+([\d.]+)', line)
            if m:
                k = re.sub(r'\s+', ' ', m.group(1))
                g[k] = max(g.get(k, 0), float(m.group(2))); b[k] = max(b.get(k, 0), float(m.group(3)))
    return g, b
gn, bn = load("bench_conv")
go, bo = load(old.split("/")[-1]) if old else ({}, {})
print("| layer (C H K RxR stride) |%s gpuml | OpenBLAS |%s ratio |" % (" old gpuml | new" if old else "", " old ratio | new" if old else ""))
lo = ln = 0.0
for k in gn:
    ob = max(bo.get(k, 0), bn[k])
    rn = gn[k] / ob; ln += math.log(rn)
    if old:
        ro = go[k] / ob; lo += math.log(ro)
        print("| %s | %.1f | %.1f | %.1f | %.2f | %.2f |" % (k, go[k], gn[k], ob, ro, rn))
    else:
        print("| %s | %.1f | %.1f | %.2f |" % (k, gn[k], ob, rn))
n = len(gn)
if n:
    print("geomean ratio: %s%.2f, min %.2f" % ("old %.2f, new " % math.exp(lo / n) if old else "", math.exp(ln / n),
          min(gn[k] / max(bo.get(k, 0), bn[k]) for k in gn)))
PY
done
