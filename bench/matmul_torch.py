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
import sys
if sys.argv[1:] == ["f32"]:
    # bench_matmul f32's shapes: cuBLAS f32 (allow_tf32 False) and tf32, and the f32 accuracy of
    # cuBLAS against float64 on the same kind of inputs (512 sampled entries)
    torch.backends.cuda.matmul.allow_tf32 = False
    for M, N, K in ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 11008, 4096), (8192, 4096, 11008)):
        t(M, N, K, torch.float32)
    t(4096, 4096, 4096, torch.float32, nt=True); t(2048, 2048, 2048, torch.float32, nt=True)
    for M, N, K in ((256, 256, 256), (384, 384, 384), (512, 512, 512), (768, 768, 768), (1024, 1024, 1024), (1536, 1536, 1536),
                    (16, 4096, 4096), (32, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (256, 4096, 4096), (4096, 4096, 256),
                    (512, 512, 8192), (128, 128, 16384)):
        t(M, N, K, torch.float32)
    torch.backends.cuda.matmul.allow_tf32 = True
    t(4096, 4096, 4096, torch.float32, tag="tf32")
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda"); g.manual_seed(5)
    for pos in (0, 1):
        for M, N, K in ((4096, 4096, 4096), (512, 512, 16384)):
            if pos: a = torch.rand(M, K, device="cuda", generator=g); b = torch.rand(K, N, device="cuda", generator=g)
            else: a = torch.randn(M, K, device="cuda", generator=g); b = torch.randn(K, N, device="cuda", generator=g)
            c = a @ b
            i = torch.arange(512, device="cuda")
            m, n = (i * 7919) % M, (i * 104729 + 17) % N
            ref = (a[m].double() * b[:, n].t().double()).sum(1)
            sa = (a[m].double().abs() * b[:, n].t().double().abs()).sum(1)
            e = (c[m, n].double() - ref).abs()
            print(f"f32acc torch {M:6d} {N:6d} {K:6d} {'uniform' if pos else 'normal':7s} max|err|/|ref| {(e / ref.abs()).max().item():.3g}  "
                  f"max|err|/sum|a*b| {(e / sa).max().item():.3g}  (512 samples vs float64)", flush=True)
    sys.exit(0)
if sys.argv[1:] == ["splitk"]:
    # bench_matmul splitk's shapes (the last three NN with f32 out: conv backward-filter GEMMs)
    for M, N, K, nt in ((256, 256, 16384, 1), (512, 512, 8192, 1), (1024, 1024, 8192, 1), (128, 4096, 8192, 1),
                        (1024, 2048, 4096, 1), (64, 576, 100352, 0), (64, 256, 100352, 0), (256, 2304, 6272, 0)):
        t(M, N, K, torch.bfloat16, nt=bool(nt))
    sys.exit(0)
if sys.argv[1:] == ["streamk"]:
    # bench_matmul streamk's shapes, each twice
    torch.backends.cuda.matmul.allow_tf32 = True
    for M, N, K, dt, nt in ((4096, 4096, 4096, "bf16", 1), (8192, 8192, 8192, "bf16", 1), (6144, 6144, 6144, "bf16", 1),
                            (8192, 11008, 4096, "bf16", 1), (16384, 14336, 4096, "bf16", 1), (2048, 2048, 2048, "bf16", 1),
                            (4096, 4096, 4096, "f16", 1), (4096, 4096, 4096, "tf32", 1), (4096, 4096, 4096, "tf32", 0),
                            (8192, 8192, 8192, "tf32", 1), (8192, 8192, 8192, "tf32", 0), (3072, 1792, 4096, "bf16", 1),
                            (4096, 2304, 4096, "bf16", 1), (3072, 1792, 4096, "tf32", 1), (4096, 2304, 8192, "f16", 1)):
        for _ in range(2):
            t(M, N, K, {"bf16": torch.bfloat16, "f16": torch.float16, "tf32": torch.float32}[dt], nt=bool(nt), tag=dt)
    sys.exit(0)
if sys.argv[1:] == ["split2"]:
    # bench_matmul split2's shapes, each twice
    torch.backends.cuda.matmul.allow_tf32 = True
    for M, N, K, dt in ((1024, 2048, 4096, "bf16"), (1024, 1792, 4096, "bf16"), (768, 2048, 8192, "bf16"), (1024, 2048, 4096, "tf32"),
                        (512, 2048, 4096, "tf32")):
        for _ in range(2):
            t(M, N, K, {"bf16": torch.bfloat16, "tf32": torch.float32}[dt], nt=True, tag=dt)
    sys.exit(0)
if sys.argv[1:2] == ["shapes"]:
    # bench_matmul shapes MxNxK ...: bf16 NT, each twice
    for a in sys.argv[2:]:
        M, N, K = map(int, a.split("x"))
        for _ in range(2):
            t(M, N, K, torch.bfloat16, nt=True, tag="bf16")
    sys.exit(0)
if sys.argv[1:] == ["tf32nn"]:
    # bench_matmul tf32nn's shapes, NN and NT, each twice
    torch.backends.cuda.matmul.allow_tf32 = True
    for M, N, K in ((4096, 4096, 4096), (8192, 8192, 8192), (8192, 4096, 14336), (8192, 14336, 4096), (2048, 2048, 2048)):
        for _ in range(2):
            t(M, N, K, torch.float32, tag="tf32"); t(M, N, K, torch.float32, nt=True, tag="tf32")
    sys.exit(0)
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
