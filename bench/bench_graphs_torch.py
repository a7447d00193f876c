"""Reference for bench_graphs.c: the same 100-op chain (y += x; y *= 0.5; y = gelu(y)) in
PyTorch eager and replayed from a torch.cuda.CUDAGraph.  Per-op device time from events
around 200 back-to-back chains after a warm-up."""
import sys
import torch

NOPS, REPS = 100, 200


def chain(x, y):
    for i in range(NOPS):
        if i % 3 == 0:
            y.add_(x)
        elif i % 3 == 1:
            y.mul_(0.5)
        else:
            y.copy_(torch.nn.functional.gelu(y))


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps):
        fn()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1e3


def run(n):
    x = torch.rand(n, device="cuda") * 2 - 1
    y = torch.zeros(n, device="cuda")
    eager = timed(lambda: chain(x, y), REPS) / (REPS * NOPS)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        chain(x, y)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        chain(x, y)
    graph = timed(g.replay, REPS) / (REPS * NOPS)
    print(f"torch {torch.__version__} {torch.cuda.get_device_name()} n={n:<8d} eager {eager:6.2f} us/op   "
          f"graph {graph:6.2f} us/op   ({eager / graph:.1f}x)")


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [4096, 65536]:
        run(n)
