# Sourced by the bench/run_*.sh device scripts once they are in the repository root:
#   . bench/run_env.sh NAME
# sets -u, O (the log folder: $OUT where the device runner gives one, else build/NAME, created),
# GPUML_CACHE_DIR (build/cache unless set: one NVRTC cache for every test and benchmark of a
# call) and T0 (the start, for "... s" lines).
set -u
O=${OUT:-build/$1}
mkdir -p "$O" build
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
T0=$(date +%s)
