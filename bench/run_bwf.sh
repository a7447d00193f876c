#!/bin/sh
# The Hopper implicit-GEMM backward filter (gpuml_conv_bwf_sm90): its tests (with compute-sanitizer),
# the other backward tests, then gpuml (default, GPUML_CONV_BWD=gemm = the one-GEMM route before
# it) next to PyTorch/cuDNN in one run, and an ncu kernel breakdown.  Logs to ${OUT:-build}.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
make -s build/test_conv || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
for t in bwf_sm90 backward_layers fuzz_backward finite_differences resnet_layers; do
    ./build/test_conv "=$t" 2>&1 | grep -E "FAIL|fail|passed|skip" | head -12
done | tee "$O/bwf_tests.txt"
SAN=/usr/local/cuda/bin/compute-sanitizer
[ -x $SAN ] || SAN=compute-sanitizer
for tool in memcheck racecheck; do
    $SAN --tool $tool --print-limit 5 ./build/test_conv =bwf_sm90 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|passed" | head -6
done | tee "$O/bwf_sanitizer.txt"
./build/bench_conv bwd | tee "$O/bwf_gpuml.txt"
GPUML_CONV_BWD=gemm ./build/bench_conv bwd | sed 's/^gpuml /gpuml-gemm /' | tee "$O/bwf_gpuml_gemm.txt"
python3 bench/conv_torch.py bwd | tee "$O/bwf_torch.txt"
cc -std=c99 -O2 bench/prof_bwd.c -o build/prof_bwd -ldl -lpthread -lm && \
ncu --clock-control none --metrics gpu__time_duration.sum --csv ./build/prof_bwd > "$O/bwf_ncu.csv" 2>&1
python3 - "$O/bwf_ncu.csv" <<'PY' | tee "$O/bwf_ncu.txt"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value")
for r in rows[1:]:
    print("%10s us  %s" % (r[vi], r[ki][:90]))
PY
