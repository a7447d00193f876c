#!/bin/bash
# The kernel patches in bench/patches/ (or those PATCHES names) in one device call: bench_conv built
# from the tree as it is (build/bench_conv_old), then the patches applied, the kernels regenerated
# and the tests that cover them run 8 at a time: test_conv bwf_1x1, bwf_1x1_specials, bwf_1x1_wgmma,
# bwf_conv, backward_layers, fuzz_backward with memcheck / racecheck on bwf_1x1 and
# bwf_1x1_specials; unless BWF_ONLY=1 also test_conv_tf32 (all) with memcheck / racecheck on its
# simt_1x1 and wgmma_1x1, and test_conv resnet_layers / fuzz_forward with the mma.sync 1x1 kernel
# forced (GPUML_CONV_1X1W=off GPUML_CONV_1X1S=on); with c1w_pipelined.patch applied also wgmma_1x1
# and resnet_layers with GPUML_CONV_1X1W_PIPE=1 and memcheck / racecheck on wgmma_1x1 with it.
# Then, alone on the GPU, old and new bench_conv alternated: unless BWF_ONLY, the ResNet-50 1x1
# rows (BENCH_CONV_1X1=1; default route, the pipelined loop, the mma.sync kernel forced); always
# the 1x1 backward filter rows (bwf1x1).  No PyTorch here: the
# report run gives the ratios.  Logs go to $OUT (or build/patches).  NO_APPLY=1: the tree as it is
# is also "new" (patches applied by hand beforehand).
set -u
cd "$(dirname "$0")/.."
O=${OUT:-build/patches}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv_old -ldl -lpthread -lm || exit 1
for p in ${PATCHES:-bench/patches/*.patch}; do
    if [ -z "${NO_APPLY:-}" ]; then
        git apply "$p" 2>/dev/null || patch -s -p1 < "$p" || { echo "cannot apply $p"; exit 1; }
    fi
done
make -s kernels || exit 1
make -s -j16 build/test_conv build/test_conv_tf32 > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
echo "built: $(( $(date +%s) - T0 )) s"
if [ -z "${NO_TESTS:-}" ]; then
    jobs=$O/jobs.txt; : > "$jobs"
    if [ -z "${BWF_ONLY:-}" ]; then
        for spec in memcheck:test_conv_tf32:simt_1x1 racecheck:test_conv_tf32:simt_1x1 \
                    memcheck:test_conv_tf32:wgmma_1x1 racecheck:test_conv_tf32:wgmma_1x1; do
            IFS=: read -r tool s t <<< "$spec"; echo "s $tool $s $t" >> "$jobs"
        done
        echo "on test_conv resnet_layers" >> "$jobs"; echo "on test_conv fuzz_forward" >> "$jobs"
        if grep -q C1W_PIPE gpuml.h; then   # c1w_pipelined.patch: its A/B knob, tests and sanitizers with it on
            echo "pipe test_conv_tf32 wgmma_1x1" >> "$jobs"; echo "pipe test_conv resnet_layers" >> "$jobs"
            echo "sp memcheck test_conv_tf32 wgmma_1x1" >> "$jobs"; echo "sp racecheck test_conv_tf32 wgmma_1x1" >> "$jobs"
        fi
        for t in $(./build/test_conv_tf32 --list); do echo "t test_conv_tf32 $t" >> "$jobs"; done
    fi
    for t in bwf_1x1 bwf_1x1_specials bwf_1x1_wgmma bwf_conv backward_layers fuzz_backward; do echo "t test_conv $t" >> "$jobs"; done
    for tool in memcheck racecheck; do for t in bwf_1x1 bwf_1x1_specials; do echo "s $tool test_conv $t" >> "$jobs"; done; done
    run_job() {
        if [ "$1" = s ] || [ "$1" = sp ]; then
            [ "$1" = sp ] && export GPUML_CONV_1X1W_PIPE=1
            slog=$O/san_$1_$2_$4.log
            GPUML_TEST_NO_FAULT=1 timeout "${S_TIMEOUT:-240}" compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$slog" 2>&1
            echo "sanitizer $2 $3 $4${GPUML_CONV_1X1W_PIPE:+ (pipelined)}: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$slog" | tail -n 1)"
        else
            log=$O/$1_$2_$3.log; s0=$(date +%s)
            if [ "$1" = on ]; then export GPUML_CONV_1X1W=off GPUML_CONV_1X1S=on; fi
            if [ "$1" = pipe ]; then export GPUML_CONV_1X1W_PIPE=1; fi
            timeout "${T_TIMEOUT:-240}" ./build/$2 "=$3" > "$log" 2>&1
            echo "test $2 $3${GPUML_CONV_1X1S:+ (1x1s on)}${GPUML_CONV_1X1W_PIPE:+ (pipelined)}: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$log" | head -n 1 | sed 's/^  //') [$(( $(date +%s) - s0 )) s]"
            grep -h "^    FAIL" "$log" | head -5
        fi
    }
    export -f run_job; export O
    xargs -P "${JOBS:-8}" -L 1 bash -c 'run_job "$@"' _ < "$jobs" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
    echo "tests: $(( $(date +%s) - T0 )) s"
fi
# benchmarks, alone on the GPU: old and new alternated
export BENCH_CONV_1X1=1
b() { timeout 90 "$@" 2>&1; }
for r in 1 2; do
    [ -n "${BWF_ONLY:-}" ] && break
    b ./build/bench_conv_old resnet > "$O/r_old$r.log"
    b ./build/bench_conv resnet > "$O/r_new$r.log"
done
if [ -z "${BWF_ONLY:-}" ]; then
    GPUML_CONV_1X1W_PIPE=1 b ./build/bench_conv resnet > "$O/r_pipe.log"
    GPUML_CONV_1X1W=off GPUML_CONV_1X1S=on b ./build/bench_conv_old resnet > "$O/r_old_1x1s.log"
    GPUML_CONV_1X1W=off GPUML_CONV_1X1S=on b ./build/bench_conv resnet > "$O/r_new_1x1s.log"
fi
for r in 1 2; do   # the 1x1 backward filter (3xTF32 rows: the non-finite patch's rolled k8 loop)
    b ./build/bench_conv_old bwf1x1 > "$O/bwf_old$r.log"
    b ./build/bench_conv bwf1x1 > "$O/bwf_new$r.log"
done
python3 bench/ab_table.py bwd_filter /dev/null old=$O/bwf_old1.log new=$O/bwf_new1.log old2=$O/bwf_old2.log new2=$O/bwf_new2.log
[ -z "${BWF_ONLY:-}" ] && python3 bench/ab_table.py resnet /dev/null old=$O/r_old1.log default=$O/r_new1.log old2=$O/r_old2.log new2=$O/r_new2.log \
    pipe=$O/r_pipe.log old_1x1s=$O/r_old_1x1s.log new_1x1s=$O/r_new_1x1s.log | grep -v "f32 NCHW |"
echo "all: $(( $(date +%s) - T0 )) s"
