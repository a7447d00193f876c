"""Joins the raw outputs of the gpuml benchmarks and their PyTorch twins (written by
bench/report.sh into one folder) into one side-by-side table: op, shape, dtype, gpuml, PyTorch,
unit, ratio.  Prints the table, writes BENCHMARKS.md and a CSV that bench/chart.py draws.

    python3 bench/report.py RAW_DIR --md BENCHMARKS.md --csv table.csv [--command CMD] [--png PATH]

Files read from RAW_DIR (each optional; what is missing is left out and said so):
  device.txt          nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  meta.txt            key=value lines from report.sh (date, commit, quick, ...)
  matmul_gpuml.txt    build/bench_matmul gpu [quick]       rows "bf16  auto  M N K NN  0.173 ms  794.4 TFLOP/s"
  matmul_torch.txt    bench/matmul_torch.py                rows "torch  bfloat16  M N K NN  0.173 ms  794.1 TFLOP/s"
  matmul_vs.txt       build/bench_matmul vs DT:MxNxK[:NN]...  gpuml and cuBLAS in one process: a shape line
                      "bf16  4096  4096  4096 NT  g 776.5  c 785.8 ..." then "best: gpuml 776.5, cuBLAS 787.4  ratio 0.986"
                      (its own table in BENCHMARKS.md, not in the CSV or the chart)
  ops_gpuml.txt       build/bench_ops (CUDA)               rows "gpuml  add  f32  2^26  302.1 us  2666.0 GB/s  0.940 of copy"
  ops_torch.txt       bench/bench_ops_torch.py             the same rows with "torch"
  conv*.txt           any conv benchmark output: rows in the generic form below are paired;
                      when none pair up the output is kept verbatim in BENCHMARKS.md

Generic form (what a benchmark prints to join the table without changes here):
  gpuml|torch|cudnn|cublas  OP  DTYPE  SHAPE...  TIME us|ms  [RATE TFLOP/s|GB/s]
Rows pair up when everything between the first word and the time is the same.  The ratio is
gpuml's rate over PyTorch's (or PyTorch's time over gpuml's when there is no rate): above 1,
gpuml is faster.  Only gpuml's own (auto) matmul path is compared; forced paths are left out."""
import argparse
import csv
import math
import os
import re
import sys

DTYPES = {"bfloat16": "bf16", "float16": "f16", "half": "f16", "float32": "f32", "float": "f32",
          "float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2", "int8": "i8"}
KNOWN_DTYPES = {"f32", "f16", "bf16", "tf32", "fp8_e4m3", "fp8_e5m2", "i8", "i32", "u8"}
REFS = ("torch", "pytorch", "cudnn", "cublas")

NUM = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
MM_GPUML = re.compile(r"^(\S+)\s+auto\s+(\d+)\s+(\d+)\s+(\d+)\s+(NN|NT)\s+" + NUM + r"\s*ms\s+" + NUM + r"\s*TFLOP/s")
MM_TORCH = re.compile(r"^torch\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(NN|NT)\s+" + NUM + r"\s*ms\s+" + NUM + r"\s*TFLOP/s")
VS_SHAPE = re.compile(r"^(bf16|f16|tf32|f32)\s+(\d+)\s+(\d+)\s+(\d+)\s+(NN|NT)\b")
VS_BEST = re.compile(r"^best:\s+gpuml\s+" + NUM + r",\s+cuBLAS\s+" + NUM)
GENERIC = re.compile(r"^(gpuml|torch|pytorch|cudnn|cublas)\s+(.+?)\s+" + NUM + r"\s*(us|ms)\b(?:\s+" + NUM +
                     r"\s*(TFLOP/s|GB/s))?", re.IGNORECASE)


def norm_dtype(d):
    return DTYPES.get(d.lower(), d.lower())


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return None


class Row:
    def __init__(self, group, op, shape, dtype):
        self.group, self.op, self.shape, self.dtype = group, op, shape, dtype
        self.g = self.r = None          # (time_us, rate or None, unit or None)

    def unit(self):
        """the rate's unit when every side present has one (the same), else "us" (time)"""
        sides = [x for x in (self.g, self.r) if x]
        units = set(x[2] for x in sides)
        if sides and all(x[1] is not None for x in sides) and len(units) == 1:
            return units.pop()
        return "us"

    def value(self, side):
        if not side:
            return None
        return side[0] if self.unit() == "us" else side[1]

    def ratio(self):
        """above 1: gpuml is faster (rates: gpuml / PyTorch; times: PyTorch / gpuml)"""
        if not self.g or not self.r:
            return None
        g, r = self.value(self.g), self.value(self.r)
        if not g or not r:
            return None
        return r / g if self.unit() == "us" else g / r


class Table:
    def __init__(self):
        self.rows, self.index = [], {}

    def get(self, group, op, shape, dtype):
        key = (group, op, shape, dtype)
        if key not in self.index:
            self.index[key] = Row(group, op, shape, dtype)
            self.rows.append(self.index[key])
        return self.index[key]

    def put(self, group, op, shape, dtype, ref, time_us, rate, unit):
        row = self.get(group, op, shape, dtype)
        if ref:
            if row.r is None:           # the first figure wins (later ones are CPU or repeats)
                row.r = (time_us, rate, unit)
        elif row.g is None:
            row.g = (time_us, rate, unit)


def parse_matmul(table, gl, tl):
    for line in gl or []:
        m = MM_GPUML.match(line.strip())
        if m:
            dt, M, N, K, lay, ms, tf = m.groups()
            table.put("matmul", "matmul", "%sx%sx%s %s" % (M, N, K, lay), norm_dtype(dt), False, float(ms) * 1e3, float(tf), "TFLOP/s")
    for line in tl or []:
        m = MM_TORCH.match(line.strip())
        if m:
            dt, M, N, K, lay, ms, tf = m.groups()
            table.put("matmul", "matmul", "%sx%sx%s %s" % (M, N, K, lay), norm_dtype(dt), True, float(ms) * 1e3, float(tf), "TFLOP/s")


def parse_vs(lines):
    """bench_matmul vs: [(dtype, "MxNxK LAY", gpuml TFLOP/s, cuBLAS TFLOP/s)], best of its rounds"""
    rows, cur = [], None
    for line in lines or []:
        s = line.strip()
        m = VS_SHAPE.match(s)
        if m:
            dt, M, N, K, lay = m.groups()
            cur = (dt, "%sx%sx%s %s" % (M, N, K, lay))
            continue
        m = VS_BEST.match(s)
        if m and cur:
            g, c = float(m.group(1)), float(m.group(2))
            if g > 0 and c > 0:
                rows.append((cur[0], cur[1], g, c))
            cur = None
    return rows


def parse_generic(table, group, lines):
    """rows of the generic form; returns how many were read"""
    n = 0
    for line in lines or []:
        m = GENERIC.match(line.strip())
        if not m:
            continue
        who, key, t, tu, rate, ru = m.groups()
        toks = key.split()
        op = toks[0]
        dtype, rest = "", toks[1:]
        if rest and norm_dtype(rest[0]) in KNOWN_DTYPES:
            dtype, rest = norm_dtype(rest[0]), rest[1:]
        time_us = float(t) * (1e3 if tu.lower() == "ms" else 1.0)
        table.put(group, op, " ".join(rest), dtype, who.lower() in REFS, time_us,
                  float(rate) if rate else None, ru if ru else None)
        n += 1
    return n


def header_value(lines, prefix):
    for line in lines or []:
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return None


def fmt(v):
    if v is None:
        return "—"
    if v >= 100:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.3g" % v


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw")
    ap.add_argument("--md", default="BENCHMARKS.md")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--command", default="bench/report.sh")
    ap.add_argument("--png", default="docs/benchmarks.png", help="where the chart goes (drawn by bench/chart.py)")
    a = ap.parse_args()
    raw = a.raw
    if not os.path.isdir(raw):
        print("report: %s is not a folder of raw outputs" % raw, file=sys.stderr)
        return 1

    meta = {}
    for line in read(os.path.join(raw, "meta.txt")) or []:
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k.strip()] = v.strip()
    device = (read(os.path.join(raw, "device.txt")) or ["unknown (no nvidia-smi output)"])[0].strip()

    table = Table()
    missing, verbatim = [], []
    mg, mt = read(os.path.join(raw, "matmul_gpuml.txt")), read(os.path.join(raw, "matmul_torch.txt"))
    og, ot = read(os.path.join(raw, "ops_gpuml.txt")), read(os.path.join(raw, "ops_torch.txt"))
    for name, lines in (("matmul_gpuml.txt", mg), ("matmul_torch.txt", mt), ("ops_gpuml.txt", og), ("ops_torch.txt", ot)):
        if lines is None:
            missing.append(name)
    parse_matmul(table, mg, mt)
    conv_files = sorted(f for f in os.listdir(raw) if f.startswith("conv") and f.endswith(".txt"))
    conv_lines = [(f, read(os.path.join(raw, f)) or []) for f in conv_files]
    generic_rows = [parse_generic(table, "conv", lines) for f, lines in conv_lines]
    conv_paired = any(r.g and r.r for r in table.rows if r.group == "conv")
    for (f, lines), n in zip(conv_lines, generic_rows):
        if n == 0 or not conv_paired:   # a format of its own, or nothing paired: keep it as printed
            verbatim.append((f, lines))
    parse_generic(table, "memory-bound", og)
    parse_generic(table, "memory-bound", ot)

    vs_rows = parse_vs(read(os.path.join(raw, "matmul_vs.txt")))
    torch_version = header_value(mt, "cuBLAS via PyTorch") or header_value(ot, "device:")
    roof_g, roof_t = header_value(og, "copy roof:"), header_value(ot, "copy roof:")

    # ---- the table ----
    cols = ("op", "shape", "dtype", "gpuml", "PyTorch", "unit", "ratio")
    body = []
    for r in table.rows:
        ratio = r.ratio()
        body.append((r.op, r.shape, r.dtype or "—", fmt(r.value(r.g)), fmt(r.value(r.r)), r.unit(),
                     "%.2f" % ratio if ratio else "—"))
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for b in body:
        print("  ".join(x.ljust(w) for x, w in zip(b, widths)))
    groups = []
    for r in table.rows:
        if r.group not in groups:
            groups.append(r.group)
    means = [(g, geomean([r.ratio() for r in table.rows if r.group == g]),
              sum(1 for r in table.rows if r.group == g and r.ratio())) for g in groups]
    for g, gm, n in means:
        if gm:
            print("geometric mean of the ratios, %s: %.2f (%d rows)" % (g, gm, n))
    vs_mean = geomean([g / c for _, _, g, c in vs_rows])
    if vs_rows:
        print("matmul, gpuml and cuBLAS in one process (best of alternating rounds):")
        for dt, shape, g, c in vs_rows:
            print("  %-22s %-5s %8s %8s TFLOP/s  %.2f" % (shape, dt, fmt(g), fmt(c), g / c))
        print("geometric mean of the ratios, matmul in one process: %.2f (%d rows)" % (vs_mean, len(vs_rows)))
    if not body:
        print("report: no benchmark rows found in %s; %s and the chart are left as they were" % (raw, a.md),
              file=sys.stderr)
        return 1

    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(("group", "op", "shape", "dtype", "gpuml", "pytorch", "unit", "ratio"))
            for r in table.rows:
                ratio = r.ratio()
                w.writerow((r.group, r.op, r.shape, r.dtype, r.value(r.g) or "", r.value(r.r) or "", r.unit(),
                            "%.4f" % ratio if ratio else ""))
            w.writerow(("#device", device, meta.get("date", ""), "", "", "", "", ""))

    # ---- the chart (bench/chart.py), linked from the markdown when it was drawn ----
    chart_note = None
    if a.csv and a.png:
        import chart
        d = os.path.dirname(os.path.abspath(a.png))
        if not os.path.isdir(d):
            os.makedirs(d)
        st, msg = chart.draw(a.csv, a.png)
        print("chart: " + msg)
        if st != 0:
            chart_note = "No chart: " + msg + "."
    else:
        chart_note = "No chart (report.py was run without --csv)."

    # ---- BENCHMARKS.md ----
    md = []
    md.append("# Benchmarks\n")
    md.append("gpuml next to PyTorch on the same GPU, the same shapes and the same dtypes, measured in one run "
              "by `bench/report.sh`. ratio = gpuml's throughput / PyTorch's: above 1, gpuml is faster.\n")
    md.append("- Device: %s" % device)
    md.append("- Date: %s" % meta.get("date", "unknown"))
    md.append("- gpuml: %s" % meta.get("commit", "unknown"))
    if torch_version:
        md.append("- Reference: PyTorch (cuBLAS, cuDNN and its own kernels): %s" % torch_version)
    if roof_g or roof_t:
        md.append("- Copy bandwidth measured in the same run: gpuml %s; PyTorch %s" % (roof_g or "—", roof_t or "—"))
    md.append("- Reproduce: `%s`" % a.command)
    md.append("")
    md.append("| " + " | ".join(cols) + " |")
    md.append("|" + "|".join("---" for _ in cols) + "|")
    for b in body:
        md.append("| " + " | ".join(b) + " |")
    md.append("")
    for g, gm, n in means:
        if gm:
            md.append("Geometric mean of the ratios, %s: **%.2f** (%d rows)  " % (g, gm, n))
    md.append("")
    if vs_rows:
        md.append("### matmul: gpuml and cuBLAS in one process\n")
        md.append("The large matmul shapes again, timed by `bench_matmul vs`: gpuml and cuBLAS (`cublasGemmEx` from "
                  "PyTorch's libcublas) in one process on the same buffers and stream, 4 rounds in alternating order, "
                  "best round of each side (so both see the same clocks and heat; the table above times them in "
                  "separate processes). C is in the input dtype; f32 is plain f32 on both sides.\n")
        md.append("| op | shape | dtype | gpuml | cuBLAS | unit | ratio |")
        md.append("|---|---|---|---|---|---|---|")
        for dt, shape, g, c in vs_rows:
            md.append("| matmul | %s | %s | %s | %s | TFLOP/s | %.2f |" % (shape, dt, fmt(g), fmt(c), g / c))
        md.append("")
        md.append("Geometric mean of the ratios, matmul in one process: **%.2f** (%d rows)\n" % (vs_mean, len(vs_rows)))
    if chart_note:
        md.append(chart_note + "\n")
    else:
        link = os.path.relpath(os.path.abspath(a.png), os.path.dirname(os.path.abspath(a.md))).replace(os.sep, "/")
        md.append("![gpuml / PyTorch, per row of the table](%s)\n" % link)
    md.append("## Method\n")
    md.append("- Every figure comes from the same machine in the same `bench/report.sh` run: the gpuml programs "
              "(`bench/bench_matmul.c`, `bench/bench_ops.c`%s) and the PyTorch scripts (`bench/matmul_torch.py`, "
              "`bench/bench_ops_torch.py`%s) one after the other." %
              (", `bench/bench_conv*.c`" if conv_files else "", ", the conv scripts" if conv_files else ""))
    md.append("- GPU time: CUDA events around back-to-back launches after a warm-up (10-50 matmuls, 20 calls of the "
              "memory-bound ops), the same way on both sides; the first call (gpuml's JIT compile) is not timed.")
    md.append("- matmul: TFLOP/s = 2·M·N·K / time; A is row-major, NN: B is K×N row-major, NT: B is the transposed "
              "view of an N×K tensor. gpuml's automatic path choice only. f32 is plain f32 on both sides "
              "(PyTorch's TF32 switched off). fp8 has no PyTorch matmul to compare with.")
    md.append("- memory-bound ops: GB/s = bytes read + written once / time, the same byte count on both sides "
              "(2^26 elements; rows of 1024-32768 for softmax and the norms; AdamW: param, m, v read and written, grad read).")
    if conv_files:
        md.append("- conv: as printed by the conv benchmarks (see their notes in bench/).")
    else:
        md.append("- conv: no conv benchmark (bench/bench_conv*.c) in this checkout; none measured.")
    md.append("- Rows without a rate (times only, unit us): ratio = PyTorch's time / gpuml's. Tiny shapes "
              "(M <= 16 matmuls) measure launch-bound times on both sides.")
    md.append("- Matmul ratios measured in separate processes move with the GPU's temperature (large shapes hit the "
              "power limit after a few runs, on both sides): `bench_matmul vs DT:MxNxK ...` (with BENCH_CUBLAS naming "
              "PyTorch's libcublas) times gpuml and cuBLAS in one process on the same buffers in alternating rounds%s." %
              ("; its figures are the table \"matmul: gpuml and cuBLAS in one process\" above" if vs_rows else ""))
    md.append("- Single runs, not averages over runs: expect a few percent of run-to-run noise; rows where either "
              "side is missing show —. The raw outputs are in build/report/raw/ on the machine that ran it.")
    if missing:
        md.append("- Missing outputs (a step failed or was skipped): %s." % ", ".join(missing))
    if meta.get("failed_steps"):
        md.append("- Steps that failed in this run (exit status): %s." % meta["failed_steps"].strip())
    for f, lines in verbatim:
        md.append("\n## %s (raw output; its rows are not in the generic form, so not in the table)\n" % f)
        md.append("```")
        md.extend(lines[-80:])
        md.append("```")
    md.append("")
    with open(a.md, "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
