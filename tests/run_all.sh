#!/bin/bash
# Runs every test program (and the compile checks), sums their "N passed, N failed, N skipped"
# lines and prints the total as the last line.  Usage: tests/run_all.sh
# Programs run from build/ (plain) and, when built, build/asan/ (AddressSanitizer + UBSan).
# The suites run side by side, up to TEST_JOBS at once (default: the number of CPUs), longest
# first; each writes build/<name>.log, printed in a fixed order as each finishes.
cd "$(dirname "$0")/.." || exit 1
P=0; F=0; S=0
JOBS=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $JOBS in ''|*[!0-9]*|0) JOBS=1 ;; esac
NAMES=(); PIDS=()
tally() { # the summary line of one suite
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -z "$line" ]; then echo "  (no summary from $2: counted as 1 failure)"; F=$((F+1)); return; fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    P=$((P+p)); F=$((F+f)); S=$((S+${s:-0}))
}
start() { # name, command...: runs in the background once a slot is free
    name=$1; shift
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    rm -f build/$name.rc
    ( "$@" > build/$name.log 2>&1; echo $? > build/$name.rc ) &
    NAMES+=("$name"); PIDS+=($!)
}
ASAN_ENV=(env ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:protect_shadow_gap=0 LSAN_OPTIONS=suppressions=tests/lsan.supp
          UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
# test_jit compiles every kernel variant through NVRTC (minutes): it goes first
[ -x build/test_jit ] && start test_jit ./build/test_jit
[ -x build/asan/test_jit ] && start asan_test_jit "${ASAN_ENV[@]}" ./build/asan/test_jit
start compile tests/compile_checks.sh
start examples tests/test_examples.sh
start report tests/test_report.sh
start cpu_gemm bench/run_cpu_gemm.sh --test
for f in tests/test_*.c; do t=$(basename "$f" .c)
    [ $t = test_jit ] && continue
    [ -x build/$t ] && start $t ./build/$t
    [ -x build/asan/$t ] && start asan_$t "${ASAN_ENV[@]}" ./build/asan/$t
done
# in a fixed order, each as soon as it is done (a run cut short still shows the suites before)
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]}
    wait "${PIDS[$i]}" 2>/dev/null
    echo "== $name"
    cat build/$name.log
    tally build/$name.log $name
    rc=$(cat build/$name.rc 2>/dev/null || echo 1)
    if [ "$rc" != 0 ] && ! grep -qE '^[0-9]+ passed, [1-9]' build/$name.log; then
        echo "  ($name exited $rc)"; F=$((F+1))
    fi
done
echo "$P passed, $F failed, $S skipped"
[ $F -eq 0 ]
