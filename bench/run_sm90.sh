#!/bin/bash
# One device call: build every specialization of the sm90 GEMM harness, check, benchmark
# against torch (same device, same run), memcheck small cases.  Logs go to $OUT (or ./out).
# Usage: bash bench/run_sm90.sh [quick]
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"; B=/tmp/sm90b; mkdir -p $B
NV="nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -Xcompiler -fopenmp bench/gemm_sm90_standalone.cu -lcuda"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/build.log"
declare -A CFG=(
  [tn]="-DGPUML_IN_T=bf16 -DGPUML_OUT=bf16 -DGPUML_B_KMAJOR=1"
  [nn]="-DGPUML_IN_T=bf16 -DGPUML_OUT=bf16 -DGPUML_B_KMAJOR=0"
  [tn2]="-DGPUML_IN_T=bf16 -DGPUML_OUT=bf16 -DGPUML_B_KMAJOR=1 -DGPUML_MM_CLUSTER=2"
  [f32relu]="-DGPUML_IN_T=bf16 -DGPUML_OUT=f32 -DGPUML_B_KMAJOR=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1"
  [f16gelu]="-DGPUML_IN_T=f16 -DGPUML_OUT=f16 -DGPUML_B_KMAJOR=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1"
  [f32silud]="-DGPUML_IN_T=bf16 -DGPUML_OUT=f32 -DGPUML_B_KMAJOR=0 -DGPUML_EPI=3 -DGPUML_HAS_RESID=1 -DGPUML_MM_TMA_STORE=0"
  [f16gelud]="-DGPUML_IN_T=f16 -DGPUML_OUT=f16 -DGPUML_B_KMAJOR=1 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_MM_TMA_STORE=0 -DGPUML_MM_CLUSTER=2"
  [f32silu2]="-DGPUML_IN_T=f16 -DGPUML_OUT=f32 -DGPUML_B_KMAJOR=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_MM_CLUSTER=2"
  [f16tn]="-DGPUML_IN_T=f16 -DGPUML_OUT=f16 -DGPUML_B_KMAJOR=1"
  [bgelu]="-DGPUML_IN_T=bf16 -DGPUML_OUT=bf16 -DGPUML_B_KMAJOR=1 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1"
)
for k in "${!CFG[@]}"; do ( $NV ${CFG[$k]} -o $B/$k >> "$OUT/build.log" 2>&1 || echo "BUILD FAIL $k" | tee -a "$OUT/build.log" ) & done; wait
cuobjdump -sass $B/tn > "$OUT/sass_tn.txt" 2>&1; echo "HGMMA in tn: $(grep -c HGMMA "$OUT/sass_tn.txt")"

run() { local t=$1; shift; timeout $t "$@"; local rc=$?; [ $rc -ne 0 ] && echo "EXIT $rc: $*"; return 0; }
{
for k in tn nn tn2 f32relu f16gelu f32silud f16gelud f32silu2 f16tn bgelu; do run 120 $B/$k --check; done
for c in .sm90_cubins/*.cubin; do k=$(basename $c .cubin); [ -x $B/$k ] && run 120 $B/$k --cubin $c --check; done
} 2>&1 | tee "$OUT/check.log" | grep -E "^==|FAIL|EXIT|RESULT"
{
run 150 $B/tn --bench
PYTHONUNBUFFERED=1 run 150 python3 bench/gemm_torch_ref.py tn
run 150 $B/nn --bench
PYTHONUNBUFFERED=1 run 150 python3 bench/gemm_torch_ref.py nn
run 60 $B/f16tn --bench --quick
PYTHONUNBUFFERED=1 run 60 python3 bench/gemm_torch_ref.py f16 --quick
run 60 $B/tn2 --bench --quick; GROUP_M=16 run 60 $B/tn --bench --quick; run 60 $B/bgelu --bench --quick
run 150 $B/tn --bench
} 2>&1 | tee "$OUT/bench.log" | grep -E "^==|BENCH|TORCH|EXIT|FAIL"
{
for k in tn nn f16gelu f32silud f32silu2; do run 120 compute-sanitizer --tool memcheck --print-limit 10 $B/$k --small; done
run 120 compute-sanitizer --tool synccheck --print-limit 10 $B/tn2 --small
run 120 compute-sanitizer --tool racecheck --print-limit 10 $B/tn --small
} > "$OUT/sanitizer.log" 2>&1
grep -E "ERROR SUMMARY|RESULT|EXIT" "$OUT/sanitizer.log"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
