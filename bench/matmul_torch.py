# cuBLAS through PyTorch on the same shapes as bench_matmul.c, timed the same way
# (events around back-to-back calls after a warm-up).
import torch
def t(M, N, K, dt, nt=False, reps=None, tag=None):
    a = torch.randn(M, K, device="cuda").to(dt)
    b = torch.randn(N, K, device="cuda").to(dt).t() if nt else torch.randn(K, N, device="cuda").to(dt)
    flops = 2.0 * M * N * K
    reps = reps or (10 if flops > 1e11 else 50)
    for _ in range(3): c = a @ b
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps): c = a @ b
    e1.record(); torch.cuda.synchronize()
    ms = e0.elapsed_time(e1) / reps
    print(f"torch  {tag or str(dt).split('.')[-1]:8s} {M:6d} {N:6d} {K:6d} {'NT' if nt else 'NN'} {ms:10.3f} ms {flops/ms/1e9:8.1f} TFLOP/s", flush=True)
print("cuBLAS via PyTorch", torch.__version__, torch.cuda.get_device_name())
for s in (2048, 4096, 8192): t(s, s, s, torch.bfloat16)
for s in (2048, 4096, 8192): t(s, s, s, torch.float16, nt=True)
for M, N, K in ((4096, 4096, 4096), (8192, 11008, 4096), (8192, 4096, 11008), (16384, 14336, 4096)): t(M, N, K, torch.bfloat16, nt=True)
torch.backends.cuda.matmul.allow_tf32 = False
t(4096, 4096, 4096, torch.float32); t(8192, 8192, 8192, torch.float32)
for m in (1, 4, 8, 16):
    t(m, 4096, 4096, torch.float16, nt=True); t(m, 8192, 8192, torch.float16, nt=True); t(m, 14336, 4096, torch.float16, nt=True)
torch.backends.cuda.matmul.allow_tf32 = True
for s in (4096, 8192):
    t(s, s, s, torch.float32, nt=True, tag="tf32"); t(s, s, s, torch.float32, tag="tf32")
torch.backends.cuda.matmul.allow_tf32 = False
# fp8 e4m3 -> bf16 with per-tensor scales (torch._scaled_mm takes B column-major, i.e. "NT")
def t8(M, N, K, reps=10):
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device="cuda")
    f = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    for _ in range(3): f()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps): f()
    e1.record(); torch.cuda.synchronize()
    ms = e0.elapsed_time(e1) / reps
    flops = 2.0 * M * N * K
    print(f"torch  {'fp8_e4m3':8s} {M:6d} {N:6d} {K:6d} NT {ms:10.3f} ms {flops/ms/1e9:8.1f} TFLOP/s", flush=True)
for s in (4096, 8192):
    try: t8(s, s, s)
    except Exception as e: print("torch fp8 _scaled_mm unavailable:", e)
