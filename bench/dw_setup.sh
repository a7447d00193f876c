# Sourced by the depthwise device scripts (bench/run_dw3s.sh, run_dw_f32s.sh, run_dw_bands.sh,
# run_dw3f.sh): the repo root, build/, the kernel cache, the device's name; dw_build [TARGET...]
# makes those targets, then bench/prof_dw.
set -u
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
dw_build() {
    [ $# -eq 0 ] || make -s -j16 "$@" || exit 1
    cc -std=c99 -O2 -Wall -Wextra bench/prof_dw.c -o build/prof_dw -ldl -lpthread -lm || exit 1
}
# dw_tests STEP SANTEST TEST...: test_conv's TESTs, 3 processes each (TEST_CONV_DW_PART), their
# results, then memcheck and racecheck of SANTEST on every STEP-th case; nothing where NOTEST is set
dw_tests() {
    [ -n "${NOTEST:-}" ] && return 0
    local step=$1 san=$2 t k f tool; shift 2
    for t in "$@"; do for k in 0 1 2; do
        TEST_CONV_DW_PART=$k/3 timeout 240 ./build/test_conv =$t > build/t_${t}_$k.log 2>&1 &
    done; done; wait
    for t in "$@"; do for k in 0 1 2; do
        f=build/t_${t}_$k.log; echo "$f: $(grep -E '^  (ok|FAIL)' $f | head -1) $(grep -c FAIL $f)"; grep FAIL $f | head -3
    done; done
    for tool in memcheck racecheck; do
        GPUML_TEST_NO_FAULT=1 TEST_CONV_DW_STEP=$step timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 ./build/test_conv =$san 2>&1 | tail -2 &
    done; wait
}
