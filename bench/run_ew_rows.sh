#!/bin/bash
# The contiguous fill (16-byte stores) and the elementwise rows kernel (broadcasts along whole rows)
# in one device call: test_ops and test_core whole, 8 at a time, with compute-sanitizer memcheck and
# racecheck on the tests that run the new kernels; then, alone on the GPU, bench/prof_store.c (fill,
# broadcast add, plain add, copy, and the rest of its routes) and PyTorch's fill_ / broadcast add on
# the same shapes.  Logs to $OUT (or build/ewrows).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/ewrows}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
T0=$(date +%s)
make -s -j16 build/test_ops build/test_core > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/prof_store.c -o build/prof_store -ldl -lpthread -lm || exit 1
# FEW=1: the tests of the two kernels only (a re-check after a small change)
if [ "${FEW:-0}" = 1 ]; then
{ for t in binary_rows binary clamp_where binary_mixed_scalar_inplace; do echo "t test_ops $t"; done; echo "t test_core fill_contig"
  echo "s memcheck:test_ops:binary_rows"; echo "s racecheck:test_ops:binary_rows"; } > "$O/jobs.txt"
else
{ for s in test_ops test_core; do for t in $(./build/$s --list); do echo "t $s $t"; done; done
  for spec in memcheck:test_ops:binary_rows racecheck:test_ops:binary_rows memcheck:test_core:fill_contig racecheck:test_core:fill_contig \
              memcheck:test_ops:binary memcheck:test_ops:clamp_where; do echo "s $spec"; done; } > "$O/jobs.txt"
fi
# the longest first
{ grep -e "row_overrides" -e "^s " "$O/jobs.txt"; grep -v -e "row_overrides" -e "^s " "$O/jobs.txt"; } |
    xargs -P 8 -L 1 bash -c 'if [ "$0" = t ]; then timeout 300 ./build/$1 "=$2" > "build/t_$1_$2.log" 2>&1; echo "test $1 $2: rc=$? $(grep -E "^  (ok|FAIL|skip)" "build/t_$1_$2.log" | head -n 1)"; grep -h "^    FAIL" "build/t_$1_$2.log" | head -5;
      else IFS=: read -r tool s t <<< "$1"; GPUML_TEST_NO_FAULT=1 timeout 240 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 ./build/$s "=$t" > "build/san_${tool}_$t.log" 2>&1; echo "sanitizer $tool $s $t: rc=$? $(grep "ERROR SUMMARY\|RACECHECK SUMMARY" "build/san_${tool}_$t.log" | tail -n 1)"; fi' > "$O/tests.txt"
echo "tests: $(( $(date +%s) - T0 )) s, $(grep -c ': rc=0' "$O/tests.txt") of $(grep -c . "$O/tests.txt") with rc 0"
grep -v ": rc=0" "$O/tests.txt"
./build/prof_store 2>&1 | head -8 | tee "$O/routes.txt"
cat > "$O/t.py" <<'PY'
import sys, torch
sys.path.insert(0, "bench")
from torch_events import t
M = 32 * 56 * 56
ys = [torch.empty(M, 4, 64, device="cuda", dtype=torch.float16) for _ in range(2)]
xs = [torch.randn(M, 1, 64, device="cuda", dtype=torch.float16) for _ in range(2)]
b = torch.randn(4, 64, device="cuda", dtype=torch.float16)
print("torch fill_ y (write 51.4 MB)              %8.2f us" % t(lambda i: ys[i % 2].fill_(0.5)))
print("torch add y[M][4][64] = a[M][1][64] + b    %8.2f us" % t(lambda i: torch.add(xs[i % 2], b, out=ys[i % 2])))
PY
python3 "$O/t.py" 2>&1 | tee "$O/torch.txt"
echo "done: $(( $(date +%s) - T0 )) s"
