"""Depthwise table from bench_conv / conv_torch.py logs: one row per layer, each log's time and
fraction of its own copy roof, and each gpuml log's speed ratio against the torch log (torch time /
gpuml time: above 1 means gpuml is faster).
Usage: python3 bench/dw_table.py label=path ... torch=path  (the log named torch is the reference)"""
import re
import sys

pat = re.compile(r"^(gpuml|torch)\s+depthwise\s+(.*?)\s+([0-9.]+) us\s+[0-9.]+ GB/s\s+([0-9.]+) of copy")
logs = []
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    rows = {}
    for line in open(path):
        m = pat.match(line)
        if m:
            rows[" ".join(m.group(2).split())] = (float(m.group(3)), float(m.group(4)))
    logs.append((label, rows))
ref = dict(logs).get("torch", {})
keys = [k for k in logs[0][1]]
print("| layer | " + " | ".join("%s us / of copy" % l for l, _ in logs) + " | " +
      " | ".join("%s vs torch" % l for l, _ in logs if l != "torch") + " |")
print("|---" * (1 + len(logs) + sum(1 for l, _ in logs if l != "torch")) + "|")
for k in keys:
    cells = ["%.1f / %.3f" % r[k] if k in r else "-" for _, r in logs]
    ratios = ["%.2fx" % (ref[k][0] / r[k][0]) if k in r and k in ref else "-" for l, r in logs if l != "torch"]
    print("| %s | %s | %s |" % (k, " | ".join(cells), " | ".join(ratios)))
