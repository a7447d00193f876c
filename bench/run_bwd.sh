#!/bin/sh
# conv backward passes: the correctness tests of the backward routes, then gpuml (new routes and
# GPUML_CONV_BWD=old) next to PyTorch/cuDNN on the same GPU in one run.  Logs to ${OUT:-build}.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
make -s build/test_conv || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
for t in backward_layers fuzz_backward resnet_layers finite_differences; do ./build/test_conv "=$t" 2>&1 | grep -E "FAIL|fail|passed" | head -8; done | tee "$O/bwd_tests.txt"
./build/bench_conv bwd | tee "$O/bwd_gpuml.txt"
GPUML_CONV_BWD=old ./build/bench_conv bwd | sed 's/^gpuml /gpuml-old /' | tee "$O/bwd_gpuml_old.txt"
python3 bench/conv_torch.py bwd | tee "$O/bwd_torch.txt"
GPUML_PROFILE=1 ./build/bench_conv bwd > /dev/null 2> "$O/bwd_profile.txt"; head -8 "$O/bwd_profile.txt"
# kernel-by-kernel (ncu; the second of two calls per layer is the timed one)
cc -std=c99 -O2 bench/prof_bwd.c -o build/prof_bwd -ldl -lpthread -lm && \
ncu --clock-control none --metrics gpu__time_duration.sum --csv ./build/prof_bwd > "$O/bwd_ncu.csv" 2>&1
python3 - "$O/bwd_ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value")
for r in rows[1:]:
    print("%10s us  %s" % (r[vi], r[ki][:90]))
PY
