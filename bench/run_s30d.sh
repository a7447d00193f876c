#!/bin/bash
# Session 30: the small-C kernel's epilogue straight from the accumulators (GPUML_STEM_DIRECT: channel
# pairs stored from the mma fragments, no slab) on the TMA form.  The stem tests (stem_tma now also runs
# the slab epilogue on odd cases), memcheck / racecheck, then the stem next to cuDNN (bench_conv_igemm
# stem quick: pf0, pf1, tma, tma with the slab epilogue, tma again, in one process).
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
OUTDIR=${OUT:-}
OUT= gpu_setup s30d build/test_conv_igemm build/test_conv || exit 1
jobs=$O/jobs.txt; : > "$jobs"
for t in stem_tma stem_kernel stem_7x7_c3 resnet_shapes_auto not_supported_gpu gather_any_c; do echo "t test_conv_igemm $t" >> "$jobs"; done
for t in resnet_layers fuzz_forward; do echo "t test_conv $t" >> "$jobs"; done
printf 's memcheck test_conv_igemm stem_tma\ns racecheck test_conv_igemm stem_tma\ns memcheck test_conv_igemm stem_kernel\n' >> "$jobs"
T_TIMEOUT=300 gpu_jobs "$jobs"
grep -h "FAIL" $O/*.log | head -20
echo "tests: $(( $(date +%s) - T0 )) s"
cc -std=c99 -O2 bench/bench_conv_igemm.c -o build/bench_conv_igemm -ldl -lpthread -lm
for round in 1 2; do
    timeout 60 ./build/bench_conv_igemm stem quick > $O/stem_g$round.txt 2>&1; cat $O/stem_g$round.txt | grep -v "^#.*name"
    timeout 90 python3 bench/conv_igemm_torch.py $O/stem_g$round.txt 2>&1 | grep -v "^layer" | cut -c1-150
done
echo "all: $(( $(date +%s) - T0 )) s"
[ -n "$OUTDIR" ] && tar czf "$OUTDIR/logs.tgz" -C build s30d
