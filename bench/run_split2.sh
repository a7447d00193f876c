#!/bin/bash
# For the next device session: the two-way split of few tiles (gpuml__sm90_split2, off by default,
# GPUML_MM_STREAMK=split2), written at the end of session 28 without device time.  Build; test_matmul
# forced_split2 (its first run on a GPU), forced_streamk, streamk_partition; memcheck / racecheck of
# forced_split2; then bench_matmul split2 (ABBA against the split off) and matmul_torch.py split2.
# If the split wins, the default goes on in gpuml__mm_cuda_sm90 (split2 = 1 without the variable).
set -u
cd "$(dirname "$0")/.."
. bench/gpu_jobs.sh
gpu_setup split2 build/test_matmul || exit 1
cc -std=c99 -O2 -Wall -Wextra bench/bench_matmul.c -o build/bench_matmul -ldl -lpthread -lm || exit 1
jobs=$O/jobs.txt; : > "$jobs"
printf 's memcheck test_matmul forced_split2\ns racecheck test_matmul forced_split2\n' >> "$jobs"
for t in forced_split2 forced_streamk streamk_few streamk_partition; do echo "t test_matmul $t" >> "$jobs"; done
gpu_jobs "$jobs"
echo "tests: $(( $(date +%s) - T0 )) s"
timeout 120 ./build/bench_matmul split2 2>&1 | grep -v "(split in" | tee "$O/bench.log"
timeout 120 python3 bench/matmul_torch.py split2 2>&1 | tee "$O/torch.log"
echo "all: $(( $(date +%s) - T0 )) s"
