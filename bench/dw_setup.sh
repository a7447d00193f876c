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
