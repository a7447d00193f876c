#!/bin/sh
# Runs every test program (and the compile checks), sums their "N passed, N failed, N skipped"
# lines and prints the total as the last line.  Usage: tests/run_all.sh [build-dir-suffix...]
# Programs run from build/ (plain) and, when built, build/asan/ (AddressSanitizer + UBSan).
cd "$(dirname "$0")/.." || exit 1
P=0; F=0; S=0
tally() { # the summary line of one suite
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -z "$line" ]; then echo "  (no summary from $2: counted as 1 failure)"; F=$((F+1)); return; fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    P=$((P+p)); F=$((F+f)); S=$((S+${s:-0}))
}
run() { # name, command...
    name=$1; shift
    echo "== $name"
    "$@" > build/$name.log 2>&1
    rc=$?
    cat build/$name.log
    tally build/$name.log $name
    if [ $rc -ne 0 ] && ! grep -qE '^[0-9]+ passed, [1-9]' build/$name.log; then
        echo "  ($name exited $rc)"; F=$((F+1))
    fi
}
run compile tests/compile_checks.sh
run cpu_gemm bench/run_cpu_gemm.sh --test
for t in test_core test_jit test_ops test_matmul test_conv; do
    [ -x build/$t ] && run $t ./build/$t
done
for t in test_core test_jit test_ops test_matmul test_conv; do
    [ -x build/asan/$t ] && run asan_$t env ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:protect_shadow_gap=0 LSAN_OPTIONS=suppressions=tests/lsan.supp \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./build/asan/$t
done
echo "$P passed, $F failed, $S skipped"
[ $F -eq 0 ]
