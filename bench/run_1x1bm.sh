#!/bin/bash
# gpuml_conv_1x1s tile heights (64 x 256 against 128 x 128) in one device call: its test and
# sanitizers, then bench_conv resnet with the rule and with each tile forced (GPUML_CONV_1X1S=on,
# every f32 NCHW 1x1 layer), next to cuDNN.  Logs to $OUT.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/bm}; mkdir -p "$O"
export GPUML_CACHE_DIR=$PWD/build/cache
make -s -j16 build/test_conv_tf32 build/test_conv > /dev/null 2>&1 || exit 1
cc -std=c99 -O2 bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
./build/test_conv_tf32 =simt_1x1 2>&1 | tail -3
for tool in memcheck racecheck; do GPUML_TEST_NO_FAULT=1 compute-sanitizer --tool $tool ./build/test_conv_tf32 =simt_1x1 2>&1 | grep "ERROR SUMMARY\|RACECHECK SUMMARY"; done
for t in shapes_gpu_auto resnet_accuracy; do ./build/test_conv_tf32 =$t 2>&1 | tail -1; done
./build/test_conv =resnet_layers 2>&1 | tail -1
: > "$O/g.log"
./build/bench_conv resnet | grep "f32 NCHW " | grep -v tf32 | sed "s/f32 NCHW/f32 NCHW rule/" >> "$O/g.log"
for bm in 64 128; do GPUML_CONV_1X1S=on GPUML_CONV_1X1S_BM=$bm ./build/bench_conv resnet | grep "f32 NCHW " | grep -v tf32 | sed "s/f32 NCHW/f32 NCHW bm$bm/" >> "$O/g.log"; done
python3 bench/conv_torch.py resnet > "$O/t.log" 2>&1
python3 - "$O/g.log" "$O/t.log" <<'PY'
import re, sys, math
pat = re.compile(r"^(gpuml|torch)\s+resnet\s+(.*?)\s+(c\d+\s+\d+\s+k\d+\s+r\d+\s+s\d+)\s+(-?[0-9.]+) us")
g, t = {}, {}
for f, d in ((sys.argv[1], g), (sys.argv[2], t)):
    for l in open(f):
        m = pat.match(l)
        if m: d.setdefault(" ".join(m.group(3).split()), {})[m.group(2)] = float(m.group(4))
rs = {}
for L in g:
    ref = t.get(L, {}).get("f32 NCHW")
    row = [L, "%.1f" % ref]
    for v in ("rule", "bm64", "bm128"):
        x = g[L].get("f32 NCHW " + v)
        row.append("%s %.1f (%.2f)" % (v, x, ref / x)); rs.setdefault(v, []).append(ref / x)
    print(" | ".join(row))
for v in rs: print(v, "geomean %.3f min %.2f" % (math.exp(sum(map(math.log, rs[v])) / len(rs[v])), min(rs[v])))
PY
