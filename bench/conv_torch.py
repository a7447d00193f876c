"""PyTorch/cuDNN reference for bench/bench_conv.c: the same layers, timed with CUDA events around
back-to-back calls after warm-up (inputs rotated like the gpuml side), bias + ReLU included as
in gpuml's fused epilogue (cuDNN runs them as separate ops unless it fuses).  f32 is measured
with torch.backends.cudnn.allow_tf32 = False (true f32), then again with tf32 allowed.
Usage: python3 bench/conv_torch.py [filter]"""
import sys
import os
import torch
import torch.nn.functional as F

filt = sys.argv[1] if len(sys.argv) > 1 else None
dev = "cuda"
torch.backends.cudnn.benchmark = True


def want(s):
    return filt is None or filt in s


def time_it(fns, iters):
    for i in range(2 * len(fns)):
        fns[i % len(fns)]()
    torch.cuda.synchronize()
    # as bench_conv.c: one window of 'iters' calls estimates the time, then windows of >= 3 ms, median of 3
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    n, ws = iters, []
    for k in range(4):
        a.record()
        for i in range(n):
            fns[i % len(fns)]()
        b.record()
        b.synchronize()
        t = a.elapsed_time(b) * 1e-3 / n
        if k == 0:
            n = max(n, min(4000, int(3e-3 / t))) if t > 0 else n
        else:
            ws.append(t)
    return sorted(ws)[1]


print("device:", torch.cuda.get_device_name(), "torch", torch.__version__, "cudnn", torch.backends.cudnn.version())
cn = 1 << 28
src = torch.empty(cn, device=dev).uniform_(-1, 1)
dst = torch.empty_like(src)
roof = 2 * cn * 4 / time_it([lambda: dst.copy_(src)], 10) * 1e-9
del src, dst
print("copy roof: %.1f GB/s (read + write)" % roof)

R50 = [(3, 224, 64, 7, 2, 3),
       (64, 56, 64, 1, 1, 0), (64, 56, 64, 3, 1, 1), (64, 56, 256, 1, 1, 0), (256, 56, 64, 1, 1, 0),
       (256, 56, 128, 1, 1, 0), (128, 56, 128, 3, 2, 1), (128, 28, 512, 1, 1, 0), (256, 56, 512, 1, 2, 0),
       (512, 28, 128, 1, 1, 0), (128, 28, 128, 3, 1, 1),
       (512, 28, 256, 1, 1, 0), (256, 28, 256, 3, 2, 1), (256, 14, 1024, 1, 1, 0), (512, 28, 1024, 1, 2, 0),
       (1024, 14, 256, 1, 1, 0), (256, 14, 256, 3, 1, 1),
       (1024, 14, 512, 1, 1, 0), (512, 14, 512, 3, 2, 1), (512, 7, 2048, 1, 1, 0), (1024, 14, 2048, 1, 2, 0),
       (2048, 7, 512, 1, 1, 0), (512, 7, 512, 3, 1, 1)]
MBV2 = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1), (384, 14, 1), (576, 14, 1), (960, 7, 1)]


def jobs(n, c, h, k, r, s, p, groups, dt, nhwc, nj):
    out = []
    for _ in range(nj):
        x = torch.empty(n, c, h, h, device=dev, dtype=dt).uniform_(-1, 1)
        w = torch.empty(k, c // groups, r, r, device=dev, dtype=dt).uniform_(-1, 1)
        if nhwc:
            x = x.to(memory_format=torch.channels_last)
            w = w.to(memory_format=torch.channels_last)
        out.append((x, w, torch.empty(k, device=dev, dtype=dt).uniform_(-1, 1)))
    return out


if want("depthwise"):
    for c, h, s in MBV2:
        for dt, dn, es in ((torch.float32, "f32", 4), (torch.float16, "f16", 2)):
            for nhwc in (True, False):
                js = jobs(32, c, h, c, 3, s, 1, c, dt, nhwc, 4)
                p = (h + 2 - 3) // s + 1
                fns = [lambda x=x, w=w: F.conv2d(x, w, None, s, 1, 1, c) for x, w, _ in js]
                t = time_it(fns, 50)
                nbytes = es * (32.0 * h * h * c + 32.0 * p * p * c + 9.0 * c)
                print("torch  depthwise %-4s %s c%-4d %3dx%-3d s%d  %9.1f us %8.1f GB/s  %5.3f of copy" % (
                    dn, "NHWC" if nhwc else "NCHW", c, h, h, s, t * 1e6, nbytes / t * 1e-9, nbytes / t * 1e-9 / roof), flush=True)
                del js, fns

if want("resnet"):
    for tf32 in (False, True):
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        variants = ((torch.float32, "f32 NCHW" + (" tf32" if tf32 else ""), False),) + \
            (((torch.float16, "f16 NHWC", True),) if not tf32 else ())
        for c, h, k, r, s, p in R50:
            if os.environ.get("BENCH_CONV_1X1", "0") != "0" and (r != 1 or s != 1):
                continue   # the stride-1 1x1 layers' f32 NCHW rows only (A/B runs)
            for dt, name, nhwc in variants:
                if os.environ.get("BENCH_CONV_1X1", "0") != "0" and nhwc:
                    continue
                if os.environ.get("BENCH_CONV_F16", "0") != "0" and not nhwc:
                    continue   # the f16 NHWC rows only, as bench_conv.c's BENCH_CONV_F16=1
                js = jobs(32, c, h, k, r, s, p, 1, dt, nhwc, 2)
                # the convolution alone: gpuml's rows include a fused bias + ReLU, PyTorch would
                # add an unfused bias and ReLU pass (timed before 2026-11-22, it inflated the
                # cuDNN times of the small layers by up to 5x)
                fns = [lambda x=x, w=w: F.conv2d(x, w, None, s, p) for x, w, b in js]
                t = time_it(fns, 10)
                q = (h + 2 * p - r) // s + 1
                flop = 2.0 * 32 * q * q * k * c * r * r
                print("torch  resnet %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s" % (name, c, h, k, r, s, t * 1e6, flop / t * 1e-12),
                      flush=True)
                del js, fns

if len(sys.argv) > 1 and sys.argv[1] == "bwf1x1":   # only when asked for by name (A/B runs)
    for c, h, k, r, s, p in R50:
        if r != 1 or s != 1:
            continue
        for nhwc in (False, True):
            for tf32 in (False, True):
                torch.backends.cudnn.allow_tf32 = tf32
                js = jobs(32, c, h, k, r, s, p, 1, torch.float32, nhwc, 2)
                dys = [torch.empty(32, k, h, h, device=dev, dtype=torch.float32).uniform_(-1, 1) for _ in js]
                if nhwc:
                    dys = [d.to(memory_format=torch.channels_last) for d in dys]
                ff = [lambda x=x, w=w, d=d: torch.nn.grad.conv2d_weight(x, w.shape, d, s, p) for (x, w, _), d in zip(js, dys)]
                t = time_it(ff, 10)
                flop = 2.0 * 32 * h * h * k * c
                print("torch  bwd_filter %s%s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s" % ("f32 NHWC" if nhwc else "f32 NCHW", " tf32" if tf32 else "",
                      c, h, k, r, s, t * 1e6, flop / t * 1e-12), flush=True)
            del js, dys, ff

if len(sys.argv) > 1 and sys.argv[1] == "pool":   # only when asked for by name: bench_conv.c's pool rows
    for head in (0, 1):
        for nchw in (0, 1):
            for bwd in (0, 1):
                dt, c, h = (torch.float32 if nchw else torch.float16), (2048 if head else 64), (7 if head else 112)
                xs = [torch.empty(32, c, h, h, device=dev, dtype=dt).uniform_(-1, 1) for _ in range(4)]
                if not nchw:
                    xs = [x.to(memory_format=torch.channels_last) for x in xs]
                if head:
                    fwd = lambda x: F.adaptive_avg_pool2d(x, 1)
                else:
                    fwd = lambda x: F.max_pool2d(x, 3, 2, 1)
                if bwd:
                    xs = [x.requires_grad_() for x in xs]
                    ys = [fwd(x) for x in xs]
                    gs = [torch.empty_like(y).uniform_(-1, 1) for y in ys]
                    fns = [lambda x=x, y=y, g=g: torch.autograd.grad(y, x, g, retain_graph=True) for x, y, g in zip(xs, ys, gs)]
                else:
                    fns = [lambda x=x: fwd(x) for x in xs]
                t = time_it(fns, 10)
                p = 1 if head else 56
                es = 4 if nchw else 2
                nb = es * 32 * c * ((1 if head else 2) * h * h + p * p) if bwd else es * 32 * c * (h * h + p * p)
                print("torch  pool%s %s %s c%-4d %3d -> %-3d %9.1f us %8.1f GB/s" % ("_bwd" if bwd else "", "avg global" if head else "max 3x3/2",
                      "f32 NCHW" if nchw else "f16 NHWC", c, h, p, t * 1e6, nb / t * 1e-9), flush=True)
                del xs, fns

if len(sys.argv) > 1 and sys.argv[1] == "bwds2":   # only when asked for by name: backward data of the strided 3x3 layers
    for c, h, k, r, s, p in R50:
        if r != 3 or s != 2:
            continue
        for dt, name, nhwc in ((torch.float32, "f32 NCHW", False), (torch.float16, "f16 NHWC", True),
                               (torch.float32, "f32 NCHW tf32", False), (torch.float32, "f32 NHWC", True)):
            torch.backends.cudnn.allow_tf32 = name.endswith("tf32")
            q = (h + 2 * p - r) // s + 1
            js = jobs(32, c, h, k, r, s, p, 1, dt, nhwc, 2)
            dys = [torch.empty(32, k, q, q, device=dev, dtype=dt).uniform_(-1, 1) for _ in js]
            if nhwc:
                dys = [d.to(memory_format=torch.channels_last) for d in dys]
            fd = [lambda x=x, w=w, d=d: torch.nn.grad.conv2d_input(x.shape, w, d, s, p) for (x, w, _), d in zip(js, dys)]
            t = time_it(fd, 10)
            flop = 2.0 * 32 * q * q * k * c * r * r
            print("torch  bwd_data %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s" % (name, c, h, k, r, s, t * 1e6, flop / t * 1e-12),
                  flush=True)
            del js, dys, fd
    torch.backends.cudnn.allow_tf32 = False

if want("bwd"):
    torch.backends.cudnn.allow_tf32 = False
    for c, h, k, r, s, p in ((64, 56, 64, 3, 1, 1), (256, 14, 256, 3, 1, 1), (256, 56, 64, 1, 1, 0),
                             (256, 56, 512, 1, 2, 0), (128, 56, 128, 3, 2, 1)):
        for dt, name, nhwc in ((torch.float32, "f32 NCHW", False), (torch.float16, "f16 NHWC", True),
                               (torch.float32, "f32 NCHW tf32", False), (torch.float32, "f32 NHWC", True)):
            torch.backends.cudnn.allow_tf32 = name.endswith("tf32")
            q = (h + 2 * p - r) // s + 1
            js = jobs(32, c, h, k, r, s, p, 1, dt, nhwc, 2)
            dys = [torch.empty(32, k, q, q, device=dev, dtype=dt).uniform_(-1, 1) for _ in js]
            if nhwc:
                dys = [d.to(memory_format=torch.channels_last) for d in dys]
            flop = 2.0 * 32 * q * q * k * c * r * r
            fd = [lambda x=x, w=w, d=d: torch.nn.grad.conv2d_input(x.shape, w, d, s, p) for (x, w, _), d in zip(js, dys)]
            ff = [lambda x=x, w=w, d=d: torch.nn.grad.conv2d_weight(x, w.shape, d, s, p) for (x, w, _), d in zip(js, dys)]
            for kind, fns in (("bwd_data", fd), ("bwd_filter", ff)):
                t = time_it(fns, 10)
                print("torch  %s %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s" % (kind, name, c, h, k, r, s, t * 1e6, flop / t * 1e-12),
                      flush=True)
            del js, dys, fd, ff
