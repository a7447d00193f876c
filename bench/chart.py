"""Draws the ratios of bench/report.py's table (gpuml / PyTorch, one bar per row) as a PNG.

    python3 bench/chart.py TABLE.csv OUT.png

Exit status 0 written, 1 nothing to draw or bad input, 3 matplotlib is not installed (the
caller says so and goes on without the chart)."""
import csv
import sys


def draw(table_csv, out_png):
    """returns (status, message): 0 written, 1 nothing to draw, 3 no matplotlib"""
    try:
        import matplotlib
        matplotlib.use("Agg")   # no display on a GPU machine
        import matplotlib.pyplot as plt
    except ImportError as e:
        return 3, "matplotlib is not installed (%s); no PNG written" % e

    rows, device, date = [], "", ""
    with open(table_csv, newline="") as f:
        for r in csv.reader(f):
            if not r or r[0] == "group":
                continue
            if r[0] == "#device":
                device, date = r[1], r[2]
                continue
            if len(r) >= 8 and r[7]:
                rows.append((r[0], "%s %s %s" % (r[1], r[3], r[2]), float(r[7])))
    if not rows:
        return 1, "no row of %s has a ratio; no PNG written" % table_csv

    groups = []
    for g, _, _ in rows:
        if g not in groups:
            groups.append(g)
    palette = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
    color = {g: palette[i % len(palette)] for i, g in enumerate(groups)}

    rows = rows[::-1]            # the table's first row at the top
    h = max(3.0, 0.28 * len(rows) + 1.4)
    fig, ax = plt.subplots(figsize=(9.5, h))
    ys = range(len(rows))
    ax.barh(ys, [r[2] for r in rows], color=[color[r[0]] for r in rows], height=0.7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r[1] for r in rows], fontsize=8)
    ax.axvline(1.0, color="black", linewidth=1)
    top = max(r[2] for r in rows)
    for y, r in zip(ys, rows):
        ax.text(r[2] + top * 0.01, y, "%.2f" % r[2], va="center", fontsize=7)
    ax.set_xlim(0, top * 1.12)
    ax.set_xlabel("gpuml / PyTorch (throughput ratio; > 1: gpuml faster)")
    title = "gpuml vs PyTorch"
    if device:
        title += " on " + device.split(",")[0]
    if date:
        title += " (" + date + ")"
    ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[g]) for g in groups]
    ax.legend(handles, groups, fontsize=8, loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return 0, "%s (%d rows)" % (out_png, len(rows))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    st, msg = draw(sys.argv[1], sys.argv[2])
    print("chart: " + msg, file=sys.stderr if st else sys.stdout)
    return st


if __name__ == "__main__":
    sys.exit(main())
