"""cuDNN (PyTorch, tf32 allowed, benchmark mode) for bench/c1w_waves.c: NCHW 1x1 conv alone (gpuml fuses
bias + ReLU; conv_torch.py times cuDNN without them too) at any batch, us a call and TFLOP/s, three
input sets rotated.  Usage: python3 bench/c1w_waves_torch.py N C H K [...]"""
import sys
import torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = True
a = [int(v) for v in sys.argv[1:]]
for i in range(0, len(a) - 3, 4):
    n, c, h, k = a[i:i + 4]
    xs = [torch.empty(n, c, h, h, device="cuda").uniform_(-1, 1) for _ in range(3)]
    w = torch.empty(k, c, 1, 1, device="cuda").uniform_(-1, 1)
    b = torch.empty(k, device="cuda").uniform_(-1, 1)
    fn = lambda x: F.conv2d(x, w)
    for r in range(6):
        fn(xs[r % 3])
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ws, it = [], 20
    for r in range(4):
        e0.record()
        for j in range(it):
            fn(xs[j % 3])
        e1.record()
        e1.synchronize()
        t = e0.elapsed_time(e1) * 1e-3 / it
        if r == 0:
            it = max(it, min(4000, int(3e-3 / t)))
        else:
            ws.append(t)
    t = sorted(ws)[1]
    print("cudnn n%d c%d h%d k%d: %8.2f us %7.1f TFLOP/s" % (n, c, h, k, t * 1e6, 2.0 * n * h * h * k * c / t * 1e-12))
