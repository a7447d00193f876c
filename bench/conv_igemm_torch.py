# cuDNN (PyTorch, cudnn.benchmark, channels_last f16) on the layers bench_conv_igemm printed,
# timed the same way (events around back-to-back calls after a warm-up, rotating copies of x
# so the working set exceeds L2), then the side-by-side table.  Usage: conv_igemm_torch.py gpuml.txt
# Eager PyTorch costs ~16-26 us of host time a call, which bounds the small layers' cuDNN times
# (bench/NOTES_conv_igemm.md); the "graph" column replays the same calls from a CUDA graph, which
# removes that host time (added after the last device run of its session: not yet run).
import math, sys, torch
import torch.nn.functional as F
torch.backends.cudnn.benchmark = True
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
prop = torch.cuda.get_device_properties(0)
l2 = getattr(prop, "L2_cache_size", 50 << 20)
print(f"cuDNN {torch.backends.cudnn.version()} via PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
hdr = f"{'layer':20s} {'shape (n,h,w,c -> k, rxs/stride)':36s} {'gpuml us':>9s} {'cuDNN us':>9s} {'gpuml TF/s':>10s} {'cuDNN TF/s':>10s} {'ratio':>6s} {'graph us':>8s} {'ratio':>6s} cfg/split  best us  (cfg0..5 unsplit; cfg1 split 2, 4; cfg3 split 2, 4)"
hdr += "  ||  wgmma: us ratio cfg/split best-forced-us ratio (cfg0..4 unsplit; cfg1 split 2, 4; cfg3 split 2, 4; the chosen one with x always gathered, and with TMA im2col)"
wratios, wbratios, bothratios = [], [], []
print(hdr)
ratios, gratios = [], []
for r in rows:
    name = r[0]; n, h, w, c, k, R, S, st, pad, P, Q = map(int, r[1:12]); gflop = float(r[12]); us_g = float(r[13]); cfg = r[14] + "/" + r[15]
    wi = r.index("W") if "W" in r else len(r)
    ucfg = [float(v) for v in r[16:wi]]
    # the wgmma kernel (sm_90): its own choice, then each configuration / split forced
    wg = r[wi + 1:]
    us_w = float(wg[0]) if wg else -1.0
    wcfg = (wg[1] + "/" + wg[2]) if wg else "-"
    wforced = [float(v) for v in wg[3:]]
    xb = 2 * n * h * w * c + 2 * n * P * Q * k
    copies = min(16, int(3 * l2 / xb) + 1)
    xs = [torch.randn(n, c, h, w, device="cuda", dtype=torch.float16).contiguous(memory_format=torch.channels_last) for _ in range(copies)]
    wt = (0.05 * torch.randn(k, c, R, S, device="cuda", dtype=torch.float16)).contiguous(memory_format=torch.channels_last)
    reps = 20 if gflop > 20 else 50 if gflop > 5 else 100
    for i in range(5): y = F.conv2d(xs[i % copies], wt, stride=st, padding=pad)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for i in range(reps): y = F.conv2d(xs[i % copies], wt, stride=st, padding=pad)
    e1.record(); torch.cuda.synchronize()
    us_c = e0.elapsed_time(e1) * 1000 / reps
    assert y.shape == (n, k, P, Q) and y.is_contiguous(memory_format=torch.channels_last)
    us_graph = float("nan")
    try:
        gr = min(reps, 20)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(3): F.conv2d(xs[i % copies], wt, stride=st, padding=pad)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(gr): yg = F.conv2d(xs[i % copies], wt, stride=st, padding=pad)
        g.replay(); torch.cuda.synchronize()
        e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
        us_graph = e0.elapsed_time(e1) * 1000 / gr
        del g, yg
    except Exception as ex:
        print(f"# {name}: CUDA-graph timing failed: {ex}")
    ok = us_g > 0
    ratio = us_c / us_g if ok else float("nan")
    if ok: ratios.append(ratio)
    if ok and us_graph == us_graph: gratios.append(us_graph / us_g)
    best = min([v for v in ucfg if v > 0], default=-1)
    shape = f"{n},{h},{w},{c}->{k} {R}x{S}/{st}"
    wbest = min([v for v in wforced if v > 0], default=-1)
    wtxt = ""
    if us_w > 0:
        wratios.append(us_c / us_w)
        wtxt = f"  ||  {us_w:7.1f} {us_c / us_w:5.2f} {wcfg:>5s} {wbest:7.1f} {us_c / wbest if wbest > 0 else float('nan'):5.2f} ({' '.join(f'{v:.1f}' for v in wforced)})"
    if wbest > 0: wbratios.append(us_c / wbest)
    cands = [v for v in (us_g, us_w) if v > 0]
    if cands: bothratios.append(us_c / min(cands))
    print(f"{name:20s} {shape:36s} {us_g:9.1f} {us_c:9.1f} {gflop/us_g*1e3 if ok else 0:10.1f} {gflop/us_c*1e3:10.1f} {ratio:6.2f} {us_graph:8.1f} {us_graph / us_g if ok else float('nan'):6.2f} {cfg:>5s}  {best:8.1f}  ({' '.join(f'{v:.1f}' for v in ucfg)}){wtxt}", flush=True)
    del xs, wt, y
if ratios:
    print(f"geomean speed ratio (cuDNN time / gpuml time, >1 = gpuml faster): {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} over {len(ratios)} layers; min {min(ratios):.2f}")
if gratios:
    print(f"geomean speed ratio against cuDNN replayed from a CUDA graph: {math.exp(sum(map(math.log, gratios)) / len(gratios)):.3f} over {len(gratios)} layers; min {min(gratios):.2f}")
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))
if wratios:
    print(f"wgmma kernel, its own choice: geomean {gm(wratios):.3f} over {len(wratios)} layers (min {min(wratios):.2f})")
if wbratios:
    print(f"wgmma kernel, best forced configuration per layer: geomean {gm(wbratios):.3f} over {len(wbratios)} layers (min {min(wbratios):.2f})")
if bothratios:
    print(f"faster of the two automatic choices per layer: geomean {gm(bothratios):.3f} over {len(bothratios)} layers (min {min(bothratios):.2f})")
