#!/bin/bash
# The row-kernel patches of bench/patches/ in one device call, one after another on the device's
# copy of the tree: apply, run the A/B script the patch carries, revert.  PATCHES: the names to run
# (default: rows_full_xf rows_block1024; rows_ring was run in the nineteenth session and lost).
# Each script builds, runs its tests and sanitizers, then alternates the rule and the patch's knob.
set -u
cd "$(dirname "$0")/.." || exit 1
for p in ${PATCHES:-rows_full_xf rows_block1024}; do
    echo "=== $p"
    git apply "bench/patches/$p.patch" || { echo "cannot apply $p"; continue; }
    s=$(git apply --numstat "bench/patches/$p.patch" | awk '$3 ~ /^bench\/run_.*\.sh$/ {print $3}')
    timeout 400 bash "$s"
    git apply -R "bench/patches/$p.patch"
    make -s kernels
done
