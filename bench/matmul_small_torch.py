# cuBLAS through PyTorch on the small-M shapes of `bench_matmul small`, timed the same way:
# B stored N x K (a @ w.t(), the weight layout), weights rotated over more than 3x the L2, events
# around back-to-back calls after a warm-up; "eager" is plain calls (PyTorch's host cost per
# call, ~20 us, can exceed the GPU time), "graph" replays the same calls from a CUDA graph.
import torch

def copy_bw():
    n = 1 << 29
    x = torch.full((n,), 1.5, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    for _ in range(2): y.copy_(x)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(10): y.copy_(x)
    e1.record(); torch.cuda.synchronize()
    ms = e0.elapsed_time(e1) / 10
    tbs = 2.0 * n * 2 / (ms * 1e-3) / 1e12
    print(f"copy bandwidth (torch copy_, 1 GiB f16, read + write): {tbs:.2f} TB/s", flush=True)
    return tbs

def t(M, N, K, dt, copy):
    wbytes = N * K * 2
    nbuf = min(16, max(2, int(3.0 * 64e6 / wbytes) + 1))
    a = [torch.randn(M, K, device="cuda").to(dt) for _ in range(nbuf)]
    w = [torch.randn(N, K, device="cuda").to(dt) for _ in range(nbuf)]
    c = [torch.empty(M, N, device="cuda", dtype=dt) for _ in range(nbuf)]
    reps = 20 * nbuf
    def body():
        for i in range(reps): torch.matmul(a[i % nbuf], w[i % nbuf].t(), out=c[i % nbuf])
    body(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); body(); e1.record(); torch.cuda.synchronize()
    eager = e0.elapsed_time(e1) * 1e3 / reps
    graph = 0.0
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s): body()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g): body()
        g.replay(); torch.cuda.synchronize()
        e0.record()
        for _ in range(5): g.replay()
        e1.record(); torch.cuda.synchronize()
        graph = e0.elapsed_time(e1) * 1e3 / (5 * reps)
    except Exception as e:
        print("graph capture failed:", e)
    best = graph if graph > 0 else eager
    print(f"torch  {str(dt).split('.')[-1]:8s} {M:3d} {N:6d} {K:6d}  eager {eager:8.2f} us  graph {graph:8.2f} us  "
          f"weights {wbytes / best / 1e6:5.2f} TB/s = {wbytes / best / 1e6 / copy:.2f} of copy", flush=True)

print("cuBLAS via PyTorch", torch.__version__, torch.cuda.get_device_name())
copy = copy_bw()
for N, K in ((4096, 4096), (8192, 8192), (14336, 4096), (4096, 14336), (1024, 4096)):
    for M in (1, 2, 4, 8, 12, 16): t(M, N, K, torch.float16, copy)
for N, K in ((4096, 4096), (8192, 8192)):
    for M in (1, 16): t(M, N, K, torch.bfloat16, copy)
