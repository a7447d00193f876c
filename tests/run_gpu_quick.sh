#!/bin/bash
# The GPU test pass in one device call (~9.5 min on an H100 at 213 jobs, 562 s on 2026-11-27: near the 10-minute call
# limit; each test line ends with its seconds, to find the next job to split): plain builds (no ASan), every test
# of every suite run by name, 8 at a time (the GPU parts included), tests/test_examples.sh, and
# compute-sanitizer memcheck / racecheck over the newest kernels, side by side with the tests
# (correctness only: nothing here is timed). Logs go to $OUT (or build/quick), packed into
# quick.tgz; a summary is printed last: one line per failing test or sanitizer finding.
#   tests/run_gpu_quick.sh                     everything
#   SUITES="test_ops test_matmul" tests/run_gpu_quick.sh   some suites (no sanitizers)
#   NO_SAN=1 tests/run_gpu_quick.sh            every test, no sanitizers; SAN_ONLY=1: the sanitizer jobs only
#   SAN_ONLY=1 SAN_SPECS="memcheck:test_ops:unary racecheck:test_ops:unary" tests/run_gpu_quick.sh   some sanitizer jobs
#   (at ~220 jobs the whole pass is near the 10-minute call limit: two calls, NO_SAN=1 then SAN_ONLY=1,
#   or JOBS=10, keep it inside; 552 s at 217 jobs on 2026-11-27, one racecheck at its 240 s limit;
#   NO_SAN 567 s and SAN_ONLY 505 s from a cold kernel cache on 2026-11-28)
# On a machine of several GPUs the jobs spread over them (each job sees one GPU through
# CUDA_VISIBLE_DEVICES, by its xargs slot) and JOBS defaults to 8 a GPU: the NVRTC compiles and the
# GPU work both scale (2 x H200, 32 cores, cold kernel cache, 2026-11-28: NO_SAN=1 289 s for 173 jobs,
# SAN_ONLY=1 208 s for 61 sanitizer jobs; about half the one-GPU times).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/quick}
L=build/quick_logs
rm -rf "$L"; mkdir -p "$O" "$L" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$L/gpu.txt"
NGPU=$(grep -c . "$L/gpu.txt"); [ "$NGPU" -ge 1 ] 2>/dev/null || NGPU=1
suites=${SUITES:-"test_conv test_conv_igemm test_conv_tf32 test_matmul test_core test_profile test_ops test_jit"}
make -s -j16 $(for s in $suites; do echo build/$s; done) examples > "$L/build.log" 2>&1 || { tail -30 "$L/build.log"; exit 1; }
T0=$(date +%s)
# warm the kernel cache once (NVRTC compiles are shared through GPUML_CACHE_DIR)
jobs_file=$L/jobs.txt; : > "$jobs_file"
for s in $suites; do
    for t in $(./build/$s --list); do echo "$s $t" >> "$jobs_file"; done
done
cp "$jobs_file" "$L/all_tests.txt"   # (the sanitizer specs below run only tests that exist)
# the longest jobs first: every kernel variant through NVRTC (in three parts, TEST_JIT_PART), then the depthwise 3x3 sweeps (each
# case's kernel configurations compiled on first use: depthwise3x3_cfg ran past 200 s beside the
# sanitizers; depthwise3x3_staged ran past its 200 s in one process on 2026-11-27), split three ways
# through TEST_CONV_DW_PART (a third field "k/n")
dw="depthwise3x3 depthwise3x3_cfg depthwise3x3_staged depthwise3x3_flat"
{ grep -q '^test_jit compile_all_families$' "$jobs_file" && for k in 0 1 2; do echo "test_jit compile_all_families $k/3"; done
  for t in $dw; do grep -q "^test_conv $t\$" "$jobs_file" && for k in 0 1 2; do echo "test_conv $t $k/3"; done; done
  grep -v ' compile_all_families$' "$jobs_file" | grep -v -x -e "test_conv depthwise3x3" -e "test_conv depthwise3x3_cfg" -e "test_conv depthwise3x3_staged" -e "test_conv depthwise3x3_flat"; } > "$jobs_file.tmp" && mv "$jobs_file.tmp" "$jobs_file"
if [ -n "${SAN_ONLY:-}" ]; then : > "$jobs_file"; fi
if [ -z "${SUITES:-}" ] && [ -z "${NO_SAN:-}" ]; then
    # sanitizer jobs: "san TOOL SUITE TEST"
    for spec in ${SAN_SPECS:-memcheck:test_conv_igemm:wgmma racecheck:test_conv_igemm:wgmma_fuzz racecheck:test_conv_igemm:wgmma_tma_y memcheck:test_conv:forced_wgmma \
                memcheck:test_matmul:small_m racecheck:test_matmul:small_m_shapes memcheck:test_matmul:f32_special_values \
                racecheck:test_matmul:f32_special_values memcheck:test_ops:row_variants racecheck:test_ops:row_variants \
                memcheck:test_ops:unary memcheck:test_ops:reduce racecheck:test_ops:reduce memcheck:test_ops:softmax \
                memcheck:test_conv:fuzz_forward memcheck:test_profile:conv_records \
                memcheck:test_conv_igemm:stem_kernel racecheck:test_conv_igemm:stem_kernel memcheck:test_conv_tf32:every_cfg \
                racecheck:test_conv_tf32:specials memcheck:test_ops:ew_shapes racecheck:test_ops:ew_shapes \
                memcheck:test_conv:depthwise3x3 racecheck:test_conv:depthwise3x3 memcheck:test_conv:depthwise3x3_cfg racecheck:test_conv:depthwise3x3_cfg memcheck:test_conv_tf32:every_cfg_wgmma \
                memcheck:test_conv_igemm:wgmma_tma_y memcheck:test_matmul:tf32_nn_few racecheck:test_matmul:tf32_nn_few \
                memcheck:test_conv:depthwise3x3_staged racecheck:test_conv:depthwise3x3_staged memcheck:test_conv:backward_layers memcheck:test_matmul:splitk_few racecheck:test_matmul:splitk_few \
                memcheck:test_conv:bwf_sm90 racecheck:test_conv:bwf_sm90 racecheck:test_conv_igemm:wgmma_every_cfg \
                memcheck:test_conv_tf32:simt_1x1 racecheck:test_conv_tf32:simt_1x1 memcheck:test_conv_tf32:shapes_gpu_wgmma \
                racecheck:test_conv_tf32:shapes_gpu_wgmma memcheck:test_ops:row_overrides memcheck:test_conv:bwf_conv racecheck:test_conv:bwf_conv \
                memcheck:test_conv:bwd_data_phases racecheck:test_conv:bwd_data_phases \
                memcheck:test_conv:bwd_data_wflip racecheck:test_conv:bwd_data_wflip \
                memcheck:test_conv_tf32:wgmma_1x1 racecheck:test_conv_tf32:wgmma_1x1 memcheck:test_conv:bwf_1x1 racecheck:test_conv:bwf_1x1 \
                memcheck:test_conv:bwf_1x1_wgmma racecheck:test_conv:bwf_1x1_wgmma \
                memcheck:test_conv:bwf_1x1_specials racecheck:test_conv:bwf_1x1_specials memcheck:test_conv:pool_backward memcheck:test_conv:pool_run \
                memcheck:test_conv:depthwise3x3_flat racecheck:test_conv:depthwise3x3_flat \
                memcheck:test_ops:binary_rows racecheck:test_ops:binary_rows memcheck:test_ops:f16_rows_specials \
                memcheck:test_ops:short_rows racecheck:test_ops:short_rows memcheck:test_ops:gelu_16bit_all \
                memcheck:test_conv:residual_one_rounding racecheck:test_conv:residual_one_rounding \
                memcheck:test_matmul:streamk_few racecheck:test_matmul:streamk_few memcheck:test_matmul:fp8_scales racecheck:test_matmul:fp8_scales}; do
        IFS=: read -r tool s t <<< "$spec"
        # (the test programs take the name as a substring: wgmma runs every wgmma_* test)
        if awk -v s="$s" -v t="$t" '$1 == s && index($2, t) { f = 1 } END { exit !f }' "$L/all_tests.txt"; then echo "san $tool $s $t" >> "$jobs_file"
        else echo "sanitizer $tool $s $t: rc=0 skip (no such test in this build)" >> "$L/san_missing.txt"; fi
    done
    # racecheck of bwd_data_phases runs ~300 s beside 7 other jobs (past the 240 s limit twice):
    # first in the queue, with 480 s
    { grep -x 'san racecheck test_conv bwd_data_phases' "$jobs_file"; grep -v -x 'san racecheck test_conv bwd_data_phases' "$jobs_file"; } > "$jobs_file.tmp" && mv "$jobs_file.tmp" "$jobs_file"
fi
run_job() {
    [ "$NGPU" -gt 1 ] && export CUDA_VISIBLE_DEVICES=$(( ${SLOT:-0} % NGPU ))
    if [ "$1" = san ]; then
        log=$L/san_$2_$3_$4.log
        st=${SAN_TIMEOUT:-240}; [ "$2 $4" = "racecheck bwd_data_phases" ] && st=${SAN_TIMEOUT:-480}
        GPUML_TEST_NO_FAULT=1 TEST_CONV_DW_STEP=5 timeout $st compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 $4 > "$log" 2>&1
        rc=$?; echo "sanitizer $2 $3 $4: rc=$rc $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log" | tail -n 1)"
    else
        log=$L/$1_$2${3:+_${3%/*}}.log; s0=$(date +%s)
        # compile_all_families NVRTC-compiles every kernel variant (320): over 200 s beside 7 other jobs
        t=${T_TIMEOUT:-200}; [ "$2" = compile_all_families ] && t=${T_TIMEOUT:-480}
        TEST_CONV_DW_PART=${3:-0/1} TEST_JIT_PART=${3:-0/1} timeout $t ./build/$1 "=$2" > "$log" 2>&1
        rc=$?; echo "test $1 $2${3:+ part $3}: rc=$rc $(grep -E '^  (ok|FAIL|skip)' "$log" | head -n 1 | sed 's/^  //') [$(( $(date +%s) - s0 )) s]"
    fi
}
export -f run_job; export L NGPU
xargs -P ${JOBS:-$((8 * NGPU))} --process-slot-var=SLOT -L 1 bash -c 'run_job "$@"' _ < "$jobs_file" > "$L/results.txt" 2>&1
[ -f "$L/san_missing.txt" ] && cat "$L/san_missing.txt" >> "$L/results.txt"
[ -z "${SAN_ONLY:-}" ] && ( timeout 150 tests/test_examples.sh > "$L/examples.log" 2>&1; echo "examples: rc=$? $(tail -n 1 "$L/examples.log")" ) >> "$L/results.txt"
echo "tests and sanitizers: $(( $(date +%s) - T0 )) s"
sort "$L/results.txt" > "$O/results.txt"
tar -czf "$O/quick.tgz" -C build quick_logs 2>/dev/null
echo "passed: $(grep -c ': rc=0 ok' "$O/results.txt"), skipped: $(grep -c ': rc=0 skip' "$O/results.txt"), sanitizer clean: $(grep '^sanitizer' "$O/results.txt" | grep -c 'rc=0 =')"
grep -v ': rc=0 ok\|: rc=0 skip' "$O/results.txt" | grep -v '^sanitizer.*rc=0' 
grep 'rc=0 skip' "$O/results.txt" | head -20
grep '^sanitizer\|^examples' "$O/results.txt"
exit 0
