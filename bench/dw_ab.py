"""Table of bench/run_dwprobe.sh's bench.log: one block per dtype/layout, one row per variant (us per
call for each MobileNetV2 layer), then the copy of the same bytes (us) and the large-copy roof fractions.
Usage: python3 bench/dw_ab.py bench.log"""
import collections
import re
import sys

cur = None
data = collections.OrderedDict()
copy = {}
for line in open(sys.argv[1]):
    if line.startswith("== "):
        tag, combo = line[3:].strip().split(" | ")
        cur = (combo, tag)
        continue
    m = re.match(r"layer (\d) .*conv\s+([\d.]+) us\s+([\d.]+) of roof(.*copy same bytes\s+([\d.]+) us\s+([\d.]+))?", line)
    if m and cur:
        l = int(m.group(1))
        data.setdefault(cur[0], collections.OrderedDict()).setdefault(cur[1], {})[l] = float(m.group(2))
        if m.group(5):
            copy[(cur[0], l)] = (float(m.group(5)), float(m.group(6)))
for combo, tags in data.items():
    print("## " + combo)
    print("| variant | " + " | ".join("L%d" % l for l in range(8)) + " |")
    print("|---" * 9 + "|")
    for t, row in tags.items():
        if t == "copy":
            continue
        print("| %s | " % t + " | ".join("%.1f" % row[l] if l in row else "-" for l in range(8)) + " |")
    if (combo, 0) in copy:
        print("| copy of the same bytes | " + " | ".join("%.1f" % copy[(combo, l)][0] for l in range(8)) + " |")
        print("| that copy, of the large-copy roof | " + " | ".join("%.3f" % copy[(combo, l)][1] for l in range(8)) + " |")
    print()
