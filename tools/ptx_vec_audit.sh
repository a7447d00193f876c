#!/bin/bash
# PTX audit for split vector accesses (no GPU needed; nvcc from the CUDA toolkit): dumps every
# kernel variant test_jit compiles, builds each to PTX for sm_90 (sm_90a for the Hopper families),
# and lists scalar global loads / stores at adjacent offsets (tools/ptx_vec_audit.py).
#   tools/ptx_vec_audit.sh [filter]     filter: a kernel-name substring for the listing
# Work files go to build/ptx_audit.
set -eu
cd "$(dirname "$0")/.."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
D=build/ptx_audit
rm -rf "$D"; mkdir -p "$D"
cc -std=c99 -O0 tools/ptx_dump_variants.c -o "$D/dump" -ldl -lpthread -lm
(cd "$D" && ./dump)
while IFS= read -r line; do
    id=${line%% *}; rest=${line#* }; rest=${rest#* }; hop=${rest%%|*}; opts=${rest#*|}
    arch=sm_90; [ "$hop" = 1 ] && arch=sm_90a
    echo "$NVCC -ptx -arch=$arch -std=c++17 -w -x cu $id.cu $opts -o $id.ptx"
done < "$D/list.txt" > "$D/cmds.txt"
(cd "$D" && xargs -P "$(nproc)" -I{} bash -c '{} || echo "failed: {}" >&2' < cmds.txt)
(cd "$D" && python3 ../../tools/ptx_vec_audit.py) | grep -e "${1:-.}"
