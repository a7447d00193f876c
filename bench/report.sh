#!/bin/sh
# The benchmark report, in one command on a GPU machine with PyTorch: gpuml and PyTorch on the
# same shapes (matmul, conv where bench/bench_conv*.c exist, the memory-bound ops), one after
# the other on the same GPU; then one side-by-side table (op, shape, dtype, gpuml, PyTorch,
# unit, ratio) printed and written to BENCHMARKS.md with the device, the date and this command,
# and a chart of the ratios in docs/benchmarks.png (bench/chart.py; needs matplotlib).
#
#   bench/report.sh                 measure (a few minutes: the quick modes), then write the report
#   FULL=1 bench/report.sh          also the matmul paths the quick mode leaves out (slower)
#   bench/report.sh --from DIR [--md FILE] [--png FILE]
#                                   no measuring: the report from raw outputs saved in DIR
#                                   (what tests/test_report.sh does with tests/fixtures/report)
#
# Raw outputs go to build/report/raw/ (packed into build/report/raw.tgz; REPORT_DIR moves
# build/report), the benchmark programs to build/report/bin/.  Each step has a time limit
# (STEP_TIMEOUT, default 240 s); a step that fails is named in the report and the others still
# run.  GPUML_COMMIT names the gpuml version where there is no git checkout; CC and PYTHON
# choose the compiler and the python3 (that has PyTorch).
cd "$(dirname "$0")/.." || exit 1
FROM=""; MD=BENCHMARKS.md; PNG=docs/benchmarks.png
while [ $# -gt 0 ]; do
    case "$1" in
        --from) FROM=$2; shift 2 ;;
        --md) MD=$2; shift 2 ;;
        --png) PNG=$2; shift 2 ;;
        *) echo "usage: bench/report.sh [--from DIR] [--md FILE] [--png FILE]" >&2; exit 2 ;;
    esac
done
PY=${PYTHON:-python3}
command -v "$PY" > /dev/null 2>&1 || { echo "report: needs python3 (for the table and the PyTorch side)" >&2; exit 1; }
R=${REPORT_DIR:-build/report}
mkdir -p "$R/bin"

if [ -z "$FROM" ]; then
    RAW=$R/raw
    rm -rf "$RAW"; mkdir -p "$RAW"
    T=${STEP_TIMEOUT:-240}
    TO=""; command -v timeout > /dev/null 2>&1 && TO="timeout $T"
    export PYTHONUNBUFFERED=1
    export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
    failed=""
    step() { # name, output file, command...   (sh has no locals: step_* are its own)
        step_name=$1; step_out=$2; shift 2
        step_t0=$(date +%s)
        $TO "$@" > "$step_out" 2>&1; step_rc=$?
        echo "report: $step_name: rc=$step_rc, $(( $(date +%s) - step_t0 )) s"
        [ $step_rc -eq 0 ] || { failed="$failed $step_name(rc=$step_rc)"; tail -n 5 "$step_out" | sed 's/^/    /'; }
    }
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 > "$RAW/device.txt"
    [ -s "$RAW/device.txt" ] || echo "unknown (nvidia-smi gave nothing)" > "$RAW/device.txt"
    echo "report: device: $(cat "$RAW/device.txt")"
    if ! $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' > "$RAW/torch_check.txt" 2>&1; then
        echo "report: PyTorch with CUDA is not usable here (the reference side will be missing):"
        tail -n 3 "$RAW/torch_check.txt" | sed 's/^/    /'
    fi
    # only this tree's own checkout names the commit: an exported copy inside another checkout
    # (a device snapshot) would otherwise report that checkout's HEAD
    gitc=""
    [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ] && gitc=$(git rev-parse --short HEAD 2>/dev/null)
    # tracked files that differ from that commit: the tree measured is not the commit (a device
    # copy of a working tree whose .git is older named the session's first commit on 2026-11-29)
    [ -n "$gitc" ] && ! git diff --quiet HEAD -- . 2>/dev/null && gitc="$gitc with uncommitted changes"
    commit=${GPUML_COMMIT:-$gitc}
    {
        echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "commit=${commit:-unknown (no git checkout; set GPUML_COMMIT)}"
        echo "quick=$([ -n "${FULL:-}" ] && echo 0 || echo 1)"
    } > "$RAW/meta.txt"
    CC=${CC:-cc}
    step "build" "$RAW/build.txt" sh -c "$CC -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o $R/bin/bench_matmul -ldl -lpthread -lm && \
        $CC -std=c99 -O2 -Wall -Wextra bench/bench_ops.c -o $R/bin/bench_ops -ldl -lpthread -lm"
    # matmul: gpuml (every path; the table takes its automatic choice) and cuBLAS through PyTorch
    quick=quick; [ -n "${FULL:-}" ] && quick=""
    step "matmul gpuml" "$RAW/matmul_gpuml.txt" "$R/bin/bench_matmul" gpu $quick
    step "matmul torch" "$RAW/matmul_torch.txt" $PY bench/matmul_torch.py
    # the large matmul shapes again, gpuml and cuBLAS (PyTorch's libcublas, cublasGemmEx) in one process,
    # rounds alternating, so both sides see the same clocks and heat (separate processes differ by up to 15%)
    cublas=$($PY -c "import glob, os, torch; print(sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), '..', 'nvidia', '**', 'libcublas.so*'), recursive=True))[0])" 2>/dev/null)
    step "matmul vs" "$RAW/matmul_vs.txt" env BENCH_CUBLAS="${cublas:-none}" "$R/bin/bench_matmul" vs \
        bf16:2048x2048x2048:NN bf16:4096x4096x4096:NN bf16:8192x8192x8192:NN f16:2048x2048x2048 f16:4096x4096x4096 \
        f16:8192x8192x8192 bf16:4096x4096x4096 bf16:8192x11008x4096 bf16:8192x4096x11008 bf16:16384x14336x4096 \
        tf32:4096x4096x4096 tf32:4096x4096x4096:NN tf32:8192x8192x8192 tf32:8192x8192x8192:NN f32:4096x4096x4096:NN \
        f32:8192x8192x8192:NN
    # conv: each bench/bench_conv*.c on the GPU, and its PyTorch script where there is one
    for src in bench/bench_conv*.c; do
        [ -f "$src" ] || continue
        prog=$(basename "$src" .c); short=${prog#bench_}
        step "$short build" "$RAW/build_$short.txt" $CC -std=c99 -O2 -Wall -Wextra "$src" -o "$R/bin/$prog" -ldl -lpthread -lm
        [ -x "$R/bin/$prog" ] && step "$short gpuml" "$RAW/${short}_gpuml.txt" env GPUML_BACKEND=cuda "$R/bin/$prog"
        for py in "bench/${short}_torch.py" "bench/${prog}_torch.py"; do
            # conv_igemm_torch.py pairs its rows with the gpuml output it is given
            [ -f "$py" ] && { if [ "$short" = conv_igemm ]; then step "$short torch" "$RAW/${short}_torch.txt" $PY "$py" "$RAW/${short}_gpuml.txt"
                              else step "$short torch" "$RAW/${short}_torch.txt" $PY "$py"; fi; break; }
        done
    done
    # memory-bound ops, each side with the copy bandwidth measured in the same run
    step "ops gpuml" "$RAW/ops_gpuml.txt" env GPUML_BACKEND=cuda "$R/bin/bench_ops"
    step "ops torch" "$RAW/ops_torch.txt" $PY bench/bench_ops_torch.py
    [ -n "$failed" ] && echo "failed_steps=$failed" >> "$RAW/meta.txt"
    tar -czf "$R/raw.tgz" -C "$R" raw 2>/dev/null
    cmd="bench/report.sh"; [ -n "${FULL:-}" ] && cmd="FULL=1 bench/report.sh"
else
    RAW=$FROM
    cmd="bench/report.sh"
fi

echo "----"
$PY bench/report.py "$RAW" --md "$MD" --csv "$R/table.csv" --png "$PNG" --command "$cmd"; rc=$?
echo "----"
echo "report: table in $MD, chart in $PNG (if drawn), raw outputs in $RAW"
[ -n "${failed:-}" ] && echo "report: steps that failed:$failed"
exit $rc
