#!/bin/sh
# bench/report.sh's table, BENCHMARKS.md and chart, made from saved raw outputs
# (tests/fixtures/report: the exact line formats of the benchmark programs and PyTorch
# scripts), so that on a GPU machine only the measuring itself is new.  Each check is one
# test; the last line is "N passed, N failed, N skipped".
cd "$(dirname "$0")/.." || exit 1
O=build/report_test
rm -rf $O; mkdir -p $O
pass=0; fail=0; skip=0
ok()   { pass=$((pass+1)); echo "  ok   $1"; }
bad()  { fail=$((fail+1)); echo "  FAIL $1"; if [ -n "${2:-}" ] && [ -f "$2" ]; then tail -n 15 "$2" | sed 's/^/    /'; fi; }
skipped() { skip=$((skip+1)); echo "  skip $1 ($2)"; }
has() { grep -qF -- "$2" "$1"; }
if ! command -v python3 > /dev/null 2>&1; then
    skipped "report" "python3 is not installed"
    echo "$pass passed, $fail failed, $skip skipped"; exit 0
fi

REPORT_DIR=$O/r bench/report.sh --from tests/fixtures/report --md $O/BENCHMARKS.md --png $O/img/benchmarks.png > $O/out.txt 2>&1; rc=$?
M=$O/BENCHMARKS.md
if [ $rc -eq 0 ] && [ -f $M ]; then ok "report.sh --from the fixture: exit 0, BENCHMARKS.md written"; else bad "report.sh exit $rc" $O/out.txt; fi
# the header: device from nvidia-smi, the date, the gpuml version and the command
if has $M "- Device: NVIDIA H200, 580.95.05, 143771 MiB" && has $M "- Date: 2026-11-21 23:10 UTC" \
    && has $M "- Reproduce: \`bench/report.sh\`" && has $M "2.11.0+cu130"; then ok "header: device, date, command, PyTorch version"
else bad "header" $M; fi
# matmul: gpuml's automatic path against cuBLAS; forced paths and n/a rows left out; no reference -> dashes
if has $M "| matmul | 4096x4096x4096 NN | bf16 | 794.4 | 794.1 | TFLOP/s | 1.00 |" \
    && has $M "| matmul | 4096x4096x4096 NN | f32 | 27.20 | 51.00 | TFLOP/s | 0.53 |" \
    && has $M "| matmul | 1x4096x4096 NT | f16 | 2.20 | 1.40 | TFLOP/s | 1.57 |"; then ok "matmul rows paired (dtype names of both sides matched)"
else bad "matmul rows" $M; fi
if ! has $M "308.3" && ! has $M "n/a" && [ "$(sed '/^### matmul: gpuml and cuBLAS in one process/q' $M | grep -c '| matmul |')" -eq 7 ]; then ok "matmul: forced-path and n/a rows left out"
else bad "matmul: forced-path rows leaked into the table" $M; fi
if has $M "| matmul | 8192x8192x8192 NT | fp8_e4m3 | 21.70 | — | TFLOP/s | — |"; then ok "a row without a reference shows dashes"
else bad "fp8 row" $M; fi
# memory-bound ops; the later CPU figure for the same key does not replace the GPU one
if has $M "| softmax | 65536x1024 | f32 | 4132.2 | 3961.8 | GB/s | 1.04 |" && has $M "| add | 2^26 | f32 | 4004.4 | 4302.6 | GB/s | 0.93 |" \
    && ! has $M "9999" && has $M "| adamw | 2^26 | bf16 | 3919.2 | — | GB/s | — |"; then ok "memory-bound rows (first figure of a key wins)"
else bad "memory-bound rows" $M; fi
# conv: the generic form pairs (with a rate, and time only); another format is kept verbatim
if has $M "| conv2d | 32x56x56x64 k3x3 s1 nhwc | f16 | 352.1 | 390.1 | TFLOP/s | 0.90 |" && has $M "| dwconv | 32x112x112x32 k3x3 s1 | f32 | 95.00 | 120.0 | us | 1.26 |" \
    && has $M "## conv_table.txt (raw output" && has $M "conv1 7x7/2   32x224x224x3 -> 64"; then ok "conv: generic rows paired, other formats kept verbatim"
else bad "conv rows" $M; fi
if has $M "Geometric mean of the ratios, matmul: **0.97** (6 rows)" && has $M "Geometric mean of the ratios, memory-bound: **0.98** (7 rows)"
then ok "geometric means per group"; else bad "geometric means" $M; fi
# matmul in one process (bench_matmul vs): its own table and mean, not in the main table's counts
if has $M "### matmul: gpuml and cuBLAS in one process" && has $M "| matmul | 4096x4096x4096 NT | tf32 | 397.9 | 410.7 | TFLOP/s | 0.97 |" \
    && has $M "| matmul | 4096x4096x4096 NN | bf16 | 776.5 | 787.4 | TFLOP/s | 0.99 |" && has $M "| matmul | 8192x8192x8192 NT | tf32 | 406.5 | 401.5 | TFLOP/s | 1.01 |" \
    && has $M "Geometric mean of the ratios, matmul in one process: **0.99** (3 rows)"
then ok "matmul in one process: its table and mean"; else bad "matmul in one process" $M; fi
# every ratio in the CSV is gpuml / PyTorch (or PyTorch / gpuml for times), to 4 digits
if awk -F, 'NR > 1 && $1 !~ /^#/ && $8 != "" { r = ($7 == "us") ? $6 / $5 : $5 / $6; d = r - $8; if (d < 0) d = -d; if (d > 5e-4) bad++; n++ }
            END { exit !(n == 15 && bad == 0) }' $O/r/table.csv; then ok "ratios recomputed from the CSV (15 rows)"
else bad "ratios in the CSV" $O/r/table.csv; fi
# the printed table: one header and the same rows
if [ "$(grep -cE '^(matmul|conv2d|dwconv|add|gelu|sum|softmax|layernorm|rmsnorm|adamw) ' $O/out.txt)" -eq 17 ] && grep -q '^op  *shape  *dtype  *gpuml  *PyTorch  *unit  *ratio' $O/out.txt
then ok "table printed (17 rows)"; else bad "printed table" $O/out.txt; fi
# the chart
if python3 -c 'import matplotlib' > /dev/null 2>&1; then
    if [ -f $O/img/benchmarks.png ] && [ "$(head -c 4 $O/img/benchmarks.png | tail -c 3)" = "PNG" ] && has $M "](img/benchmarks.png)"
    then ok "chart: PNG written and linked from BENCHMARKS.md"; else bad "chart" $O/out.txt; fi
else
    if has $M "No chart: matplotlib is not installed" && [ ! -f $O/img/benchmarks.png ]; then ok "no matplotlib: BENCHMARKS.md says so, no PNG"
    else bad "no-matplotlib note" $M; fi
    skipped "chart PNG" "matplotlib is not installed (python3 -m pip install matplotlib)"
fi
# nothing measured: an error, and BENCHMARKS.md is left alone
mkdir -p $O/empty; echo keep > $O/keep.md
REPORT_DIR=$O/r bench/report.sh --from $O/empty --md $O/keep.md --png $O/empty.png > $O/empty.txt 2>&1; rc=$?
if [ $rc -ne 0 ] && [ "$(cat $O/keep.md)" = keep ] && grep -q 'no benchmark rows' $O/empty.txt; then ok "no rows: error, BENCHMARKS.md untouched"
else bad "empty raw folder (exit $rc)" $O/empty.txt; fi
# the measuring mode's plumbing (build, each step, raw files, meta, the report) with stand-ins
# for the compiler, python3 and nvidia-smi that print the fixture's saved outputs
S=$PWD/tests/fixtures/report/stand-ins
PATH=$S:$PATH CC=$S/cc PYTHON=$S/fake-python GPUML_COMMIT=stand-in-commit REPORT_DIR=$O/m \
    bench/report.sh --md $O/m.md --png $O/m.png > $O/m.txt 2>&1; rc=$?
if [ $rc -eq 0 ] && has $O/m.md "- Device: NVIDIA Stand-in GPU, 0.0.0, 1024 MiB" && has $O/m.md "- gpuml: stand-in-commit" \
    && has $O/m.md "| matmul | 4096x4096x4096 NN | bf16 | 794.4 | 794.1 | TFLOP/s | 1.00 |" \
    && has $O/m.md "| softmax | 65536x1024 | f32 | 4132.2 | 3961.8 | GB/s | 1.04 |" \
    && has $O/m/raw/matmul_gpuml.txt "stand-in args: gpu quick" && has $O/m/raw/matmul_vs.txt "stand-in args: vs bf16:2048x2048x2048:NN" \
    && has $O/m.md "| matmul | 4096x4096x4096 NT | tf32 | 397.9 | 410.7 | TFLOP/s | 0.97 |" && [ -f $O/m/raw.tgz ] && ! grep -q 'rc=[1-9]' $O/m.txt
then ok "measuring mode with stand-in programs: every step ran, the report is complete"
else bad "measuring mode with stand-ins (exit $rc)" $O/m.txt; fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
