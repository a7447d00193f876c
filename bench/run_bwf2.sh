#!/bin/sh
# f32 backward filter as a forward conv (gpuml__cv_bwf_conv): its tests, then bench_conv bwd with
# the new route, with GPUML_CONV_BWF=gemm (the route before) and PyTorch/cuDNN, one after the other
# in one device call.  Logs to ${OUT:-build}.
cd "$(dirname "$0")/.." || exit 1
O=${OUT:-build}
mkdir -p build "$O"
export GPUML_CACHE_DIR=${GPUML_CACHE_DIR:-$PWD/build/cache}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
make -s build/test_conv build/test_conv_tf32 || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm || exit 1
for t in ${BWF_TESTS:-bwf_conv backward_layers fuzz_backward}; do
    s=$(date +%s); timeout 300 ./build/test_conv "=$t" > "$O/t_$t.txt" 2>&1; echo "test $t rc=$? $(( $(date +%s) - s )) s"
    grep -E "FAIL|passed" "$O/t_$t.txt" | head -8
done
[ -n "${BWF_TF32:-}" ] && { s=$(date +%s); timeout 300 ./build/test_conv_tf32 > "$O/t_tf32.txt" 2>&1; echo "test_conv_tf32 rc=$? $(( $(date +%s) - s )) s"; grep -E "FAIL|passed" "$O/t_tf32.txt" | head -8; }
./build/bench_conv bwd | tee "$O/bwd_gpuml.txt"
GPUML_CONV_BWF=gemm ./build/bench_conv bwd | grep "f32" | sed 's/^gpuml /gpuml-gemm /' | tee "$O/bwd_gpuml_gemm.txt"
python3 bench/conv_torch.py bwd | tee "$O/bwd_torch.txt"
python3 bench/conv_compare.py "$O/bwd_gpuml.txt" "$O/bwd_torch.txt" 2>&1 | tail -45
