"""Pairs the lines of bench_conv (gpuml) and conv_torch.py (PyTorch) by layer and prints each
speed ratio (torch time / gpuml time: above 1 means gpuml is faster) and the geomeans.
Usage: python3 bench/conv_compare.py gpuml.log torch.log"""
import math
import re
import sys

pat = re.compile(r"^(gpuml|torch)\s+(resnet|depthwise|bwd_data|bwd_filter)\s+(.*?)\s+([0-9.]+) us")


def load(path):
    out = {}
    for line in open(path):
        m = pat.match(line)
        if m:
            out[(m.group(2), " ".join(m.group(3).split()))] = float(m.group(4))
    return out


g, t = load(sys.argv[1]), load(sys.argv[2])
groups = {}
for key, tg in g.items():
    kind, rest = key
    ab = re.match(r"f32 NCHW (gemm|3x-trunc|3x-reg) ", rest)   # A/B rows: against cuDNN f32
    if ab:
        key = (kind, rest.replace(" " + ab.group(1), ""))
    for suffix in ("", " tf32"):
        if suffix and ("f32 NCHW tf32" in rest or ab):
            continue
        ref_key = (kind, rest.replace("f32 NCHW", "f32 NCHW" + suffix)) if suffix else key
        if suffix and "f32 NCHW" not in rest:
            continue
        if ref_key in t:
            r = t[ref_key] / tg
            name = kind + " " + rest.split(" c")[0] + (" vs tf32" if suffix else "")
            groups.setdefault(name, []).append(r)
            print("%-60s gpuml %9.1f us  torch %9.1f us  speed ratio %.3f" % (kind + " " + rest + (" (vs tf32)" if suffix else ""), tg, t[ref_key], r))
for name, rs in sorted(groups.items()):
    print("geomean %-40s %.3f over %d layers" % (name, math.exp(sum(math.log(x) for x in rs) / len(rs)), len(rs)))
