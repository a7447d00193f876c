#!/bin/bash
# The write-bound 1x1 layer 64->256 @56 (f16 NHWC) and the bias epilogue, in one device call:
# the wgmma conv tests (correctness first, 8 at a time); bench/prof_store.c's routes and the device's
# own write streams; ncu's DRAM figures for gpuml's kernel (bias + ReLU); bench_conv's f16 NHWC
# ResNet-50 rows next to conv_torch.py's (cuDNN), tabled.  Output to stdout and $OUT (or build/store).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/store}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
T0=$(date +%s)
cc -std=c99 -O2 -Wall -Wextra bench/prof_store.c -o build/prof_store -ldl -lpthread -lm || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
make -s -j16 build/test_conv_igemm build/test_conv > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
if [ "${TESTS:-1}" = 1 ]; then
    : > "$O/tests.txt"
    { for t in wgmma_tma_y wgmma_every_cfg wgmma_fuzz wgmma_big_and_split wgmma_im2col resnet_shapes_auto; do echo "test_conv_igemm $t"; done
      for t in forced_wgmma resnet_layers fuzz_forward; do echo "test_conv $t"; done; } |
        xargs -P 8 -L 1 bash -c 'timeout 300 ./build/$0 "=$1" > "build/t_$0_$1.log" 2>&1; echo "test $0 $1: rc=$? $(grep -E "^  (ok|FAIL|skip)" "build/t_$0_$1.log" | head -n 1)"; grep -h "^    FAIL" "build/t_$0_$1.log" | head -5' | tee -a "$O/tests.txt"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
./build/prof_store 2>&1 | tee "$O/routes.txt"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
ncu --clock-control none --metrics $M -k regex:conv_sm90 --launch-skip 4 --launch-count 1 ./build/prof_store ncu > "$O/ncu_gpuml.txt" 2>&1
grep -E '^  [^ ].*\([0-9]+, [0-9]+, [0-9]+\)|  (gpu__|dram__|lts__|sm__)' "$O/ncu_gpuml.txt" | head -20
echo "prof: $(( $(date +%s) - T0 )) s"
BENCH_CONV_F16=1 ./build/bench_conv resnet > "$O/ab.txt" 2>&1
BENCH_CONV_F16=1 python3 bench/conv_torch.py resnet > "$O/torch.txt" 2>&1
echo "bench: $(( $(date +%s) - T0 )) s"
python3 bench/conv_compare.py "$O/ab.txt" "$O/torch.txt"
