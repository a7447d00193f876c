"""Reads bench_conv_igemm's "split" lines (bench/run_cwfit.sh) and reports, per layer, the
configuration / split the chooser's model picks, its measured time, and the best measured one.
Usage: python3 bench/cw_fit.py sweep.txt"""
import math
import sys

rows = []
for line in open(sys.argv[1]):
    if not line.startswith("split "):
        continue
    head, *groups = line.split("|")
    f = head.split()
    name, auto = f[1], float(f[3])
    cells = {}
    for cfg, g in enumerate(groups[:6]):
        for s, cell in enumerate(g.split(), 1):
            us, model = map(float, cell.split("/"))
            if us > 0:
                cells[(cfg, s)] = (us, model)
    if cells:
        rows.append((name, auto, cells))

lp = lb = 0.0
print("| layer | AUTO us | model's pick | its us | best | best us | pick / best |")
print("|---|---|---|---|---|---|---|")
for name, auto, cells in rows:
    pick = min(cells, key=lambda k: cells[k][1])
    best = min(cells, key=lambda k: cells[k][0])
    r = cells[pick][0] / cells[best][0]
    lp += math.log(cells[pick][0]); lb += math.log(cells[best][0])
    print("| %s | %.2f | cfg %d s %d | %.2f | cfg %d s %d | %.2f | %.3f |" % (name, auto, pick[0], pick[1], cells[pick][0], best[0], best[1], cells[best][0], r))
print("geomean pick / best over %d layers: %.4f" % (len(rows), math.exp((lp - lb) / len(rows))))
