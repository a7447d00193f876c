"""CUDA-event timing for the PyTorch side of the bench/run_*.sh scripts (not part of the library).

t(fn, n): microseconds a call of fn(i), i = 0 .. n-1 back to back between two events, after 10
warm-up calls (fn picks its rotated operands by i)."""
import torch


def t(fn, n=200):
    for _ in range(10):
        fn(0)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for i in range(n):
        fn(i)
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / n
