# Sourced by the device scripts (bench/run_s27*.sh and later): gpu_jobs FILE runs the job lines of FILE, JOBS
# (default 8) at a time, and prints their results sorted:
#   t BIN TEST          build/BIN =TEST (timeout T_TIMEOUT, default 300 s), log $O/BIN_TEST.log
#   s TOOL BIN TEST     compute-sanitizer --tool TOOL on it (timeout S_TIMEOUT, default 300 s)
# Needs O (the log folder).
gpu_job() {
    local s0=$(date +%s)
    if [ "$1" = t ]; then
        timeout "${T_TIMEOUT:-300}" ./build/$2 "=$3" > "$O/$2_$3.log" 2>&1
        echo "test $2 $3: rc=$? $(grep -E '^  (ok|FAIL|skip)' "$O/$2_$3.log" | head -n 1 | sed 's/^  //') [$(( $(date +%s) - s0 )) s]"
        grep -h "^    FAIL\|^    [0-9]* shapes" "$O/$2_$3.log" | head -5
    else
        GPUML_TEST_NO_FAULT=1 timeout "${S_TIMEOUT:-300}" compute-sanitizer --tool $2 --report-api-errors no --error-exitcode 9 ./build/$3 "=$4" > "$O/san_$2_$4.log" 2>&1
        echo "sanitizer $2 $3 $4: rc=$? $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' "$O/san_$2_$4.log" | tail -n 1) [$(( $(date +%s) - s0 )) s]"
        grep -m 5 "Invalid\|Race\|Error\|FAIL" "$O/san_$2_$4.log"
    fi
}
gpu_jobs() {
    export -f gpu_job; export O
    xargs -P "${JOBS:-8}" -L 1 bash -c 'gpu_job "$@"' _ < "$1" > "$O/results.txt" 2>&1
    sort "$O/results.txt"
}
# gpu_setup NAME TARGET...: the scripts' preamble: O (the log folder: $OUT, else build/NAME), the kernel
# cache under build/, the GPU's name, T0 (seconds), and make TARGET... (log in $O/build.log; 1 on failure)
gpu_setup() {
    local name=$1; shift
    O=${OUT:-build/$name}; mkdir -p "$O" build
    export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
    T0=$(date +%s)
    make -s -j16 "$@" > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; return 1; }
}
# gpu_bench_matmul: build/bench_matmul; gpu_cublas: BENCH_CUBLAS, PyTorch's libcublas (for bench_matmul vs)
gpu_bench_matmul() { cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm; }
gpu_cublas() {
    export BENCH_CUBLAS=$(python3 -c "import glob, os, torch; print(sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), '..', 'nvidia', '**', 'libcublas.so*'), recursive=True))[0])")
}
