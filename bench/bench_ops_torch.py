"""PyTorch reference for bench/bench_ops.c: the same ops, shapes and byte counts, timed with
CUDA events around back-to-back calls after warm-up, and the fraction of the copy bandwidth
measured in the same run.  Usage: python3 bench/bench_ops_torch.py [filter]"""
import sys
import os
import torch
import torch.nn.functional as F

filt = sys.argv[1] if len(sys.argv) > 1 else None
dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False


def time_it(fn, iters=50):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3 / iters


def want(op):
    return filt is None or filt in op


print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
cn = 1 << 28
src = torch.empty(cn, device=dev).uniform_(-2, 2)
dst = torch.empty_like(src)
roof = 2 * cn * 4 / time_it(lambda: dst.copy_(src), 10) * 1e-9
del src, dst
print("copy roof: %.1f GB/s (read + write)" % roof)


def report(op, dt, shape, sec, nbytes):
    gbs = nbytes / sec * 1e-9
    print("torch  %-10s %-5s %-14s %10.1f us %8.1f GB/s  %5.3f of copy" % (op, dt, shape, sec * 1e6, gbs, gbs / roof), flush=True)


n = 1 << 26
dts = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
names = [d for d in os.environ.get("BENCH_DTYPES", "f32,bf16").split(",") if d in dts]
for dt, dn in [(dts[d], d) for d in names]:
    es = 4 if dt == torch.float32 else 2
    a = torch.empty(n, device=dev, dtype=dt).uniform_(-2, 2)
    b = torch.empty(n, device=dev, dtype=dt).uniform_(-2, 2)
    o = torch.empty_like(a)
    if want("add"):
        report("add", dn, "2^26", time_it(lambda: torch.add(a, b, out=o)), 3 * es * n)
    if want("mul"):
        report("mul", dn, "2^26", time_it(lambda: torch.mul(a, b, out=o)), 3 * es * n)
    if want("gelu"):
        report("gelu", dn, "2^26", time_it(lambda: F.gelu(a)), 2 * es * n)
    if want("sum"):
        report("sum", dn, "2^26", time_it(lambda: torch.sum(a, dtype=torch.float32)), es * n)
        if dt == torch.bfloat16:
            a2 = torch.empty(2 * n, device=dev, dtype=dt).uniform_(-2, 2)
            report("sum", dn, "2^27", time_it(lambda: torch.sum(a2, dtype=torch.float32)), es * 2 * n)
            del a2
    del b, o
    for c in (1024, 4096, 8192, 32768):
        x = a.view(n // c, c)
        w = torch.empty(c, device=dev, dtype=dt).uniform_(-2, 2)
        bb = torch.empty(c, device=dev, dtype=dt).uniform_(-2, 2)
        shp = "%dx%d" % (n // c, c)
        if want("softmax"):
            report("softmax", dn, shp, time_it(lambda: torch.softmax(x, -1)), 2 * es * n)
        if want("layernorm"):
            report("layernorm", dn, shp, time_it(lambda: F.layer_norm(x, (c,), w, bb, 1e-5)), 2 * es * n)
        if want("rmsnorm") and hasattr(F, "rms_norm"):
            report("rmsnorm", dn, shp, time_it(lambda: F.rms_norm(x, (c,), w, 1e-5)), 2 * es * n)
    del a
    if want("adamw") and dt == torch.float32:
        p = torch.nn.Parameter(torch.empty(n, device=dev).uniform_(-1, 1))
        p.grad = torch.empty(n, device=dev).uniform_(-1, 1)
        opt = torch.optim.AdamW([p], lr=1e-4, weight_decay=0.01, fused=True)
        report("adamw", dn, "2^26", time_it(opt.step), (24 + es) * n)
        del p, opt
    torch.cuda.empty_cache()
