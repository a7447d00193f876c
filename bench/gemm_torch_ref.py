"""torch.matmul reference for bench/gemm_sm90_standalone.cu: same shapes, same timing method
(warm-up, then 5 x 20 back-to-back launches between two CUDA events, inputs rotated over
enough sets to exceed L2, median and best of the 5 reported).
Usage: python3 bench/gemm_torch_ref.py [--dtype bf16|f16] [--layout tn|nn] [--quick]"""
import sys
import torch

dtype = torch.float16 if "f16" in sys.argv else torch.bfloat16
layout = "nn" if "nn" in sys.argv else "tn"
quick = "--quick" in sys.argv
shapes = [(4096, 4096, 4096), (8192, 8192, 8192)] if quick else [
    (2048, 2048, 2048), (4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192),
    (4096, 11008, 4096), (16384, 4096, 14336)]
tags = {(4096, 11008, 4096): "mlp-up", (16384, 4096, 14336): "mlp-dn"}
print(f"== torch {torch.__version__} {torch.cuda.get_device_name()} dtype={dtype} layout={layout}", flush=True)
for M, N, K in shapes:
    per_set = (M * K + N * K + M * N) * 2
    sets = min(8, max(1, int(150e6 // per_set) + 1))
    A = [torch.rand(M, K, device="cuda", dtype=dtype) * 2 - 1 for _ in range(sets)]
    if layout == "tn":  # B stored N x K, C = A @ B^T
        B = [(torch.rand(N, K, device="cuda", dtype=dtype) * 2 - 1).t() for _ in range(sets)]
    else:               # B stored K x N
        B = [torch.rand(K, N, device="cuda", dtype=dtype) * 2 - 1 for _ in range(sets)]
    C = [torch.empty(M, N, device="cuda", dtype=dtype) for _ in range(sets)]
    for i in range(3):
        torch.mm(A[i % sets], B[i % sets], out=C[i % sets])
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    iters, tf = 20, []
    for rep in range(5):
        e0.record()
        for i in range(iters):
            torch.mm(A[i % sets], B[i % sets], out=C[i % sets])
        e1.record()
        e1.synchronize()
        tf.append(2.0 * M * N * K * iters / (e0.elapsed_time(e1) * 1e-3) / 1e12)
    tf.sort()
    tag = tags.get((M, N, K), "square")
    print(f"TORCH {tag:<6} {M:5d}x{N:5d}x{K:5d}  median {tf[2]:7.1f}  best {tf[-1]:7.1f} TFLOP/s   (sets={sets})", flush=True)
    del A, B, C
    torch.cuda.empty_cache()
