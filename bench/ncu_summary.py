"""One line per profiled kernel from ncu --csv output (gpu__time_duration.sum): id, kernel, grid,
block, time in us; lines of the program's own stdout (markers) kept in place.

    python3 bench/ncu_summary.py NCU_CSV_OUTPUT"""
import csv
import io
import sys

text = open(sys.argv[1]).read().splitlines()
rows = [l for l in text if l.startswith('"')]
for l in text:
    if not l.startswith('"') and not l.startswith("==PROF=="):
        if l.strip():
            print("#", l)
if rows:
    for r in csv.DictReader(io.StringIO("\n".join(rows))):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "")
        us = v / 1000.0 if unit.startswith("n") else v * 1000.0 if unit.startswith("m") else v
        print("%4s %-44s %-16s %-12s %9.1f us" % (r["ID"], r["Kernel Name"][:44], r["Grid Size"], r["Block Size"], us))
