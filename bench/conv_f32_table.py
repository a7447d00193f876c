"""f32 conv on tensor cores: one table per ResNet-50 layer from bench_conv (BENCH_CONV_AB=1) and
conv_torch.py logs of the same run: gpuml's f32 variants next to cuDNN f32 and tf32 (us), the
speed ratios (cuDNN time / gpuml time: above 1 means gpuml is faster) and their geomeans.
Usage: python3 bench/conv_f32_table.py gpuml.log torch.log"""
import math
import re
import sys

pat = re.compile(r"^(gpuml|torch)\s+resnet\s+(.*?)\s+(c\d+\s+\d+\s+k\d+\s+r\d+\s+s\d+)\s+(-?[0-9.]+) us")


def load(path):
    out = {}
    for line in open(path):
        m = pat.match(line)
        if m:
            out.setdefault(" ".join(m.group(3).split()), {})[m.group(2)] = float(m.group(4))
    return out


g, t = load(sys.argv[1]), load(sys.argv[2])
cols = [("f32 NCHW", "f32 NCHW", "f32 NCHW"), ("f32 NCHW old", "f32 NCHW old", "f32 NCHW"),
        ("f32 NCHW gemm", "gemm", "f32 NCHW"), ("f32 NCHW 3x-wgmma", "3x-wg", "f32 NCHW"),
        ("f32 NCHW 3x-wgmma-trunc", "3x-wg-tr", "f32 NCHW"), ("f32 NCHW tf32", "tf32", "f32 NCHW tf32"),
        ("f32 NCHW tf32 old", "tf32 old", "f32 NCHW tf32"), ("f32 NHWC", "NHWC", "f32 NCHW"),
        ("f32 NHWC 3x-wgmma", "NHWC 3x-wg", "f32 NCHW"), ("f32 NHWC tf32", "NHWC tf32", "f32 NCHW tf32"),
        ("f32 NHWC tf32 old", "NHWC tf32 old", "f32 NCHW tf32"),
        ("f32 NCHW 1x1s-on", "1x1s on", "f32 NCHW"), ("f32 NCHW 1x1s-off", "1x1s off", "f32 NCHW")]
print("| layer | cuDNN f32 | cuDNN tf32 | " + " | ".join(c[1] for c in cols) + " |")
print("|---" * (3 + len(cols)) + "|")
ratios = {c[0]: [] for c in cols}
for layer, gv in g.items():
    tv = t.get(layer, {})
    row = [layer, "%.1f" % tv.get("f32 NCHW", float("nan")), "%.1f" % tv.get("f32 NCHW tf32", float("nan"))]
    for name, short, ref in cols:
        v = gv.get(name)
        if v is None or v <= 0:
            row.append("-")
            continue
        r = tv.get(ref)
        row.append("%.1f" % v + (" (%.2f)" % (r / v) if r else ""))
        if r:
            ratios[name].append(r / v)
    print("| " + " | ".join(row) + " |")
for name, short, ref in cols:
    rs = ratios[name]
    if rs:
        print("geomean %-26s vs cuDNN %-13s %.3f over %d layers (min %.2f, max %.2f)" %
              (name, ref.replace("f32 NCHW", "f32").replace("f32 tf32", "tf32"), math.exp(sum(map(math.log, rs)) / len(rs)), len(rs), min(rs), max(rs)))
