#!/bin/bash
# The header must build cleanly as C99 and C++17 with gcc and clang (-Wall -Wextra -Werror
# -pedantic), in one and in two translation units, with GPUML_STATIC and GPUML_NO_CUDA, and
# for Windows with MinGW.  Each build is one test; the last line is the summary.  The builds run
# side by side (TEST_JOBS at once, default: the number of CPUs); results print in a fixed order.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build/cc
pass=0; fail=0; skip=0
W="-Wall -Wextra -Werror -pedantic"
JOBS=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $JOBS in ''|*[!0-9]*|0) JOBS=1 ;; esac
NAMES=()
check() { # name, command...: started in the background, reported by report below
    name=$1; shift
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    rm -f build/cc/$name.rc
    ( "$@" >build/cc/$name.log 2>&1; echo $? > build/cc/$name.rc ) &
    NAMES+=("$name")
}
report() {
    wait
    for name in "${NAMES[@]}"; do
        if [ "$(cat build/cc/$name.rc 2>/dev/null)" = 0 ]; then pass=$((pass+1)); echo "  ok   $name"
        else fail=$((fail+1)); echo "  FAIL $name"; sed 's/^/    /' build/cc/$name.log | head -20; fi
    done
}
for cc in gcc clang; do
    if ! command -v $cc >/dev/null 2>&1; then skip=$((skip+1)); echo "  skip $cc (not installed)"; continue; fi
    cxx=g++; [ $cc = clang ] && cxx=clang++
    check "$cc-c99-two-tu" sh -c "$cc -std=c99 $W -O1 tests/two_tu_a.c tests/two_tu_b.c -o build/cc/$cc-c99 -ldl -lpthread -lm && ./build/cc/$cc-c99"
    check "$cc-cxx17-two-tu" sh -c "$cxx -x c++ -std=c++17 $W -O1 tests/two_tu_a.c tests/two_tu_b.c -o build/cc/$cc-cxx -ldl -lpthread -lm && ./build/cc/$cc-cxx"
    check "$cc-c99-static" $cc -std=c99 $W -DGPUML_STATIC -c examples/demo.c -o build/cc/$cc-static.o
    check "$cc-cxx17-static" $cxx -x c++ -std=c++17 $W -DGPUML_STATIC -c examples/demo.c -o build/cc/$cc-static-cxx.o
    check "$cc-c99-no-cuda" sh -c "$cc -std=c99 $W -DGPUML_NO_CUDA examples/demo.c -o build/cc/$cc-nocuda -ldl -lpthread -lm && ./build/cc/$cc-nocuda"
    check "$cc-gnu11-O3-march-native" $cc -std=gnu11 $W -O3 -march=native -c examples/demo.c -o build/cc/$cc-native.o
done
if command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    check "mingw-c99-demo" x86_64-w64-mingw32-gcc -std=c99 $W -O1 examples/demo.c -o build/cc/demo.exe
    check "mingw-two-tu" x86_64-w64-mingw32-gcc -std=c99 $W -O1 tests/two_tu_a.c tests/two_tu_b.c -o build/cc/two.exe
else
    skip=$((skip+1)); echo "  skip mingw (x86_64-w64-mingw32-gcc not installed: apt-get install gcc-mingw-w64)"
fi
# kernels.cu.inc must be what tools/gen_kernels.sh makes from kernels/
check "kernels-inc-fresh" sh -c "tools/gen_kernels.sh > build/cc/kernels.cu.inc && cmp build/cc/kernels.cu.inc kernels.cu.inc"
report
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
