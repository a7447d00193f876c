# Reads `ncu --csv --metrics gpu__time_duration.sum` output on stdin; prints, per kernel name, the
# launch count and the median / min duration in us (names cut at 60 characters).
import csv, sys, statistics
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith('"'))]
if not rows: sys.exit("no ncu rows")
h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value"); ui = h.index("Metric Unit")
d = {}
for r in rows[1:]:
    try: v = float(r[vi].replace(",", ""))
    except ValueError: continue
    u = r[ui]
    v = v / 1000.0 if u in ("nsecond", "ns") else v * 1000.0 if u in ("msecond", "ms") else v
    d.setdefault(r[ki][:60], []).append(v)
for k, v in sorted(d.items(), key=lambda kv: -statistics.median(kv[1])):
    print(f"  {k:60s} n={len(v):3d} median {statistics.median(v):8.2f} us  min {min(v):8.2f}")
