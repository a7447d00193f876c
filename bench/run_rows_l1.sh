#!/bin/bash
# The rows kernel's L1-kept loads for re-read inputs and the GPU's f16 conversions by cvt
# (2026-11-29) in one device call: the elementwise tests that run the kernel and the conversion tests,
# memcheck / racecheck of binary_rows, bench/prof_rows.c (rule, streamed, no hints, against copy and a
# plain add), PyTorch on the same shapes, ncu of the f16 broadcast by both load rules; with CONV=1 also
# bench_conv's depthwise (with cuDNN's) and ResNet-50 lines.  Logs to $OUT (or build/rowsl1).
cd "$(dirname "$0")/.." || exit 1
. bench/run_env.sh rowsl1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s -j16 build/test_ops build/test_core build/test_conv > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/prof_rows.c -o build/prof_rows -ldl -lpthread -lm || exit 1
# the sanitizers first (the longest), then test_ops and test_core whole and the conv tests that read f16
{ for spec in memcheck:test_ops:binary_rows racecheck:test_ops:binary_rows memcheck:test_ops:ew_shapes memcheck:test_ops:row_variants memcheck:test_ops:cpu_gpu_agree; do echo "s $spec"; done
  for s in test_ops test_core; do for t in $(./build/$s --list); do echo "t $s $t"; done; done
  for t in residual_in_place depthwise pool resnet_layers; do echo "t test_conv $t"; done; } > build/rows_jobs.txt
xargs -P 8 -L 1 bash -c 'if [ "$0" = t ]; then timeout 300 ./build/$1 "=$2" > "build/t_$1_$2.log" 2>&1; echo "test $1 $2: rc=$? $(tail -n 1 "build/t_$1_$2.log")"; grep -h "^    FAIL" "build/t_$1_$2.log" | head -5;
      else IFS=: read -r tool s t <<< "$1"; GPUML_TEST_NO_FAULT=1 timeout 240 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/$s "=$t" > "build/san_${tool}_$t.log" 2>&1; echo "sanitizer $tool $s $t: rc=$? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" "build/san_${tool}_$t.log" | tail -n 1)"; fi' < build/rows_jobs.txt > "$O/tests.txt"
for f in build/t_*.log; do grep -q "FAIL" "$f" && { echo "== $f"; grep -B2 -A4 "FAIL" "$f" | head -60; }; done > "$O/fails.txt" 2>&1
grep -v ": rc=0" "$O/tests.txt"; echo "$(grep -c ': rc=0' "$O/tests.txt") of $(grep -c '^test\|^sanitizer' "$O/tests.txt") jobs with rc 0"
echo "tests: $(( $(date +%s) - T0 )) s"
./build/prof_rows 2>&1 | tee "$O/prof.txt"
cat > build/rows_t.py <<'PY'
import sys, torch
sys.path.insert(0, "bench")
from torch_events import t
M = 32 * 56 * 56
def case(name, dt, so, sa, sb):
    os_ = [torch.empty(*so, device="cuda", dtype=dt) for _ in range(2)]
    as_ = [torch.randn(*sa, device="cuda", dtype=dt) for _ in range(2)]
    bs_ = [torch.randn(*sb, device="cuda", dtype=dt) for _ in range(2)]
    by = sum(x[0].numel() for x in (os_, as_, bs_)) * os_[0].element_size()
    us = t(lambda i: torch.add(as_[i % 2], bs_[i % 2], out=os_[i % 2]))
    print("torch %-42s %8.2f us %8.1f GB/s" % (name, us, by / us * 1e-3))
case("add f16 [M][256] + [M][256]", torch.float16, (M, 256), (M, 256), (M, 256))
case("add f16 [M][4][64] = [M][1][64] + [4][64]", torch.float16, (M, 4, 64), (M, 1, 64), (4, 64))
case("add f32 [M][4][64] = [M][1][64] + [4][64]", torch.float32, (M, 4, 64), (M, 1, 64), (4, 64))
case("add f16 [M][256] + bias [256]", torch.float16, (M, 256), (M, 256), (256,))
case("add f32 [M][256] + bias [256]", torch.float32, (M, 256), (M, 256), (256,))
case("add bf16 [8192][8192] + bias [8192]", torch.bfloat16, (8192, 8192), (8192, 8192), (8192,))
case("add f32 [8192][8192] + bias [8192]", torch.float32, (8192, 8192), (8192, 8192), (8192,))
PY
python3 build/rows_t.py 2>&1 | tee "$O/torch.txt"
timeout 120 ncu --kernel-name gpuml_ew_rows --launch-count 4 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables ./build/prof_rows ncu > "$O/ncu.txt" 2>&1
grep -E "gpuml_ew_rows|Duration|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|L2 Cache Throughput|L1/TEX Cache Throughput|Bank|imbalance|Slice" "$O/ncu.txt" | head -60
if [ "${CONV:-0}" = 1 ]; then
    cc -std=c99 -O2 -I. bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
    ./build/bench_conv depthwise > "$O/dw.txt" 2>&1; python3 bench/conv_torch.py depthwise > "$O/dw_torch.txt" 2>&1
    cat "$O/dw.txt" "$O/dw_torch.txt" | grep -v "^$"
    ./build/bench_conv resnet 2>&1 | tee "$O/resnet.txt" | grep -i "f16\|stem\|device"
fi
echo "done: $(( $(date +%s) - T0 )) s"
