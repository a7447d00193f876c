"""A/B table of bench_conv rows (f32 / f16 / bf16, NCHW / NHWC, tf32) against conv_torch.py's same rows:
one column of microseconds per gpuml log, cuDNN's, and cuDNN's time over the "default" log's (the
first log's where none is called that).  Used by bench/run_1x1.sh and bench/run_bwf1x1.sh.

    python3 bench/ab_table.py resnet|bwd_filter|bwd_data TORCH_LOG LABEL=GPUML_LOG ..."""
import re
import sys


def rows(path, who, kind):
    pat = re.compile(r"%s\s+%s ((?:f32|f16|bf16) (?:NCHW|NHWC)(?: tf32)?) (c\d+\s+\d+ k\d+\s+r\d s\d)\s+([\d.]+) us" % (who, kind))
    d = {}
    for line in open(path):
        m = pat.match(line)
        if m:
            d[(m.group(1), " ".join(m.group(2).split()))] = float(m.group(3))
    return d


kind, torch_log = sys.argv[1], sys.argv[2]
runs = [(a.split("=", 1)[0], rows(a.split("=", 1)[1], "gpuml", kind)) for a in sys.argv[3:]]
ref = dict(runs).get("default", runs[0][1])
torch = rows(torch_log, "torch", kind)
print("| layer | variant | " + " | ".join(n + " us" for n, _ in runs) + " | cuDNN us | ratio (cuDNN / default) |")
print("|---|---|" + "---|" * (len(runs) + 2))
for key in runs[0][1]:
    t = torch.get(key)
    print("| %s | %s | %s | %s | %s |" % (key[1], key[0], " | ".join("%.1f" % r.get(key, float("nan")) for _, r in runs),
                                        "%.1f" % t if t else "-", "%.2f" % (t / ref[key]) if t and key in ref else "-"))
