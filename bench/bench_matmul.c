/* matmul benchmark (not a test): gpuml on the GPU per dtype, shape and forced path, timed with
   device events around back-to-back launches after a warm-up; the CPU GEMM next to OpenBLAS.
   Usage: bench_matmul gpu [quick] | small [sweep] | f32 | tf32nn | splitk | streamk | split2 | shapes MxNxK... | vs DT:MxNxK... | skx | bn | cpu
   (bench/run_matmul.sh runs gpu and cpu with the references, bench/run_matmul_small.sh small;
   f32: the f32 rows, 3xTF32 vs SIMT, and accuracy against float64, next to matmul_torch.py f32) */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <dlfcn.h>
#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifndef GPUML_NO_CUDA
static int g_tf32;   /* desc.allow_tf32 for the next rows */
/* mean time of `reps` back-to-back launches between two device events, after a warm-up */
static double gpu_time_ms(gpuml_ctx *ctx, gpuml_tensor *c, gpuml_tensor *a, gpuml_tensor *b, const gpuml_matmul_desc *d, int reps, gpuml_status *st)
{
    gpuml__CUevent e0, e1;
    double ms;
    int i;
    *st = gpuml_matmul(ctx, c, a, b, d);
    if (*st != GPUML_SUCCESS) return 0;
    for (i = 0; i < 2; i++) gpuml_matmul(ctx, c, a, b, d);
    gpuml_sync(ctx);
    gpuml__bench_event(ctx, &e0);
    for (i = 0; i < reps; i++) gpuml_matmul(ctx, c, a, b, d);
    gpuml__bench_event(ctx, &e1);
    ms = gpuml__bench_elapsed(ctx, e0, e1);
    *st = gpuml_sync(ctx);
    return ms / reps;
}

static void gpu_row(gpuml_ctx *ctx, gpuml_dtype dt, gpuml_dtype ct, int64_t M, int64_t N, int64_t K, int tb, gpuml_matmul_path path)
{
    int64_t as[2], bs[2], cs[2];
    gpuml_tensor *a, *b, *bv, *c;
    gpuml_matmul_desc d;
    gpuml_status st;
    double ms, flops = 2.0 * (double)M * (double)N * (double)K;
    static const char *pn[] = { "auto", "simt", "mma", "wgmma", "small" };
    as[0] = M; as[1] = K; bs[0] = tb ? N : K; bs[1] = tb ? K : N; cs[0] = M; cs[1] = N;
    a = gpuml_tensor_new(ctx, dt, 2, as);
    b = gpuml_tensor_new(ctx, dt, 2, bs);
    c = gpuml_tensor_new(ctx, ct, 2, cs);
    if (!a || !b || !c) { printf("%s\n", gpuml_last_error(ctx)); return; }
    bv = tb ? gpuml_tensor_transpose(b, 0, 1) : gpuml_tensor_contiguous(b);
    gpuml_rand_normal(ctx, a, 1, 0, 1);
    gpuml_rand_normal(ctx, b, 2, 0, 1);
    memset(&d, 0, sizeof d);
    d.path = path;
    d.allow_tf32 = g_tf32;
    ms = gpu_time_ms(ctx, c, a, bv, &d, flops > 1e11 ? 10 : 50, &st);
    if (st != GPUML_SUCCESS) printf("%-6s %-5s %6lld %6lld %6lld %s  n/a (%s)\n", g_tf32 ? "tf32" : gpuml_dtype_name(dt), pn[path], (long long)M, (long long)N, (long long)K, tb ? "NT" : "NN", gpuml_last_error(ctx));
    else printf("%-6s %-5s %6lld %6lld %6lld %s %10.3f ms %8.1f TFLOP/s\n", g_tf32 ? "tf32" : gpuml_dtype_name(dt), pn[path], (long long)M, (long long)N, (long long)K, tb ? "NT" : "NN", ms, flops / ms / 1e9);
    fflush(stdout);
    gpuml_clear_error(ctx);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(bv); gpuml_tensor_free(c);
}

/* f32 accuracy on one shape: `samples` entries of C against float64 sums of the same inputs
   (normal, or uniform [0,1) when pos); prints the largest |err|/|ref| and |err|/sum|a*b| */
static void f32_accuracy(gpuml_ctx *ctx, int64_t M, int64_t N, int64_t K, int pos, gpuml_matmul_path path)
{
    int64_t as[2], bs[2], cs[2], i, k;
    gpuml_tensor *a, *b, *c;
    gpuml_matmul_desc d;
    float *A, *B, *C;
    double worst_rel = 0, worst_abs = 0;
    as[0] = M; as[1] = K; bs[0] = K; bs[1] = N; cs[0] = M; cs[1] = N;
    a = gpuml_tensor_new(ctx, GPUML_F32, 2, as); b = gpuml_tensor_new(ctx, GPUML_F32, 2, bs); c = gpuml_tensor_new(ctx, GPUML_F32, 2, cs);
    A = (float *)malloc(sizeof(float) * (size_t)(M * K)); B = (float *)malloc(sizeof(float) * (size_t)(K * N)); C = (float *)malloc(sizeof(float) * (size_t)(M * N));
    if (!a || !b || !c || !A || !B || !C) { printf("f32 accuracy: out of memory\n"); return; }
    if (pos) { gpuml_rand_uniform(ctx, a, 11, 0, 1); gpuml_rand_uniform(ctx, b, 12, 0, 1); }
    else { gpuml_rand_normal(ctx, a, 11, 0, 1); gpuml_rand_normal(ctx, b, 12, 0, 1); }
    memset(&d, 0, sizeof d);
    d.path = path;
    gpuml_fill(ctx, c, NAN);
    if (gpuml_matmul(ctx, c, a, b, &d) != GPUML_SUCCESS) { printf("f32 accuracy: %s\n", gpuml_last_error(ctx)); gpuml_clear_error(ctx); }
    gpuml_tensor_read(a, A, sizeof(float) * (size_t)(M * K)); gpuml_tensor_read(b, B, sizeof(float) * (size_t)(K * N));
    gpuml_tensor_read(c, C, sizeof(float) * (size_t)(M * N));
    for (i = 0; i < 512; i++) {
        int64_t m = (i * 7919) % M, n = (i * 104729 + 17) % N;
        double s = 0, sa = 0, e;
        for (k = 0; k < K; k++) { double x = (double)A[m * K + k] * (double)B[k * N + n]; s += x; sa += fabs(x); }
        e = fabs((double)C[m * N + n] - s);
        if (!(e / fabs(s) <= worst_rel)) worst_rel = e / fabs(s);
        if (!(e / sa <= worst_abs)) worst_abs = e / sa;
    }
    printf("f32acc %-5s %6lld %6lld %6lld %-7s max|err|/|ref| %.3g  max|err|/sum|a*b| %.3g  (512 samples vs float64; 3xTF32 k-chunk %d)\n",
           path == GPUML_MATMUL_SIMT ? "simt" : "auto", (long long)M, (long long)N, (long long)K, pos ? "uniform" : "normal", worst_rel, worst_abs, gpuml__mm3x_chunk);
    fflush(stdout);
    free(A); free(B); free(C);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c);
}

/* f32 without allow_tf32: the default (3xTF32 on Hopper) next to the SIMT kernel, the sizes where
   the automatic choice switches, and the accuracy of both */
static int gpu_f32(void)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    static const int64_t big[][3] = { {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 11008, 4096}, {8192, 4096, 11008} };
    static const int64_t sweep[][3] = { {256, 256, 256}, {384, 384, 384}, {512, 512, 512}, {768, 768, 768}, {1024, 1024, 1024},
                                        {1536, 1536, 1536}, {16, 4096, 4096}, {32, 4096, 4096}, {64, 4096, 4096}, {128, 4096, 4096},
                                        {256, 4096, 4096}, {4096, 4096, 256}, {512, 512, 8192}, {128, 128, 16384} };
    int i, pos;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("no GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
    printf("gpuml f32 matmul on %s (auto = 3xTF32 on Hopper when large enough; TFLOP/s count 2MNK)\n", gpuml_device_name(ctx));
    for (i = 0; i < 5; i++) {
        gpu_row(ctx, GPUML_F32, GPUML_F32, big[i][0], big[i][1], big[i][2], 0, GPUML_MATMUL_AUTO);
        if (i < 2) gpu_row(ctx, GPUML_F32, GPUML_F32, big[i][0], big[i][1], big[i][2], 1, GPUML_MATMUL_AUTO);
        if (i < 4) gpu_row(ctx, GPUML_F32, GPUML_F32, big[i][0], big[i][1], big[i][2], 0, GPUML_MATMUL_SIMT);
    }
    g_tf32 = 1;
    gpu_row(ctx, GPUML_F32, GPUML_F32, 4096, 4096, 4096, 0, GPUML_MATMUL_AUTO);
    g_tf32 = 0;
    for (i = 0; i < (int)(sizeof sweep / sizeof sweep[0]); i++) {
        gpu_row(ctx, GPUML_F32, GPUML_F32, sweep[i][0], sweep[i][1], sweep[i][2], 0, GPUML_MATMUL_WGMMA);
        gpu_row(ctx, GPUML_F32, GPUML_F32, sweep[i][0], sweep[i][1], sweep[i][2], 0, GPUML_MATMUL_SIMT);
    }
    /* 3xTF32's k-chunk (gpuml.h): speed and accuracy for each (0 = one launch, no chunks) */
    {
        static const int chunks[] = { 0, 2048, 1024, 512, 256 };
        int def = gpuml__mm3x_chunk;
        for (i = 0; i < 5; i++) {
            gpuml__mm3x_chunk = chunks[i];
            printf("3xTF32 k-chunk %d:\n", chunks[i]);
            gpu_row(ctx, GPUML_F32, GPUML_F32, 4096, 4096, 4096, 0, GPUML_MATMUL_AUTO);
            gpu_row(ctx, GPUML_F32, GPUML_F32, 8192, 8192, 8192, 0, GPUML_MATMUL_AUTO);
            for (pos = 0; pos < 2; pos++) {
                f32_accuracy(ctx, 4096, 4096, 4096, pos, GPUML_MATMUL_AUTO);
                f32_accuracy(ctx, 512, 512, 16384, pos, GPUML_MATMUL_AUTO);
            }
        }
        gpuml__mm3x_chunk = def;
    }
    for (pos = 0; pos < 2; pos++) {
        f32_accuracy(ctx, 4096, 4096, 4096, pos, GPUML_MATMUL_AUTO);
        f32_accuracy(ctx, 4096, 4096, 4096, pos, GPUML_MATMUL_SIMT);
        f32_accuracy(ctx, 512, 512, 16384, pos, GPUML_MATMUL_AUTO);
        f32_accuracy(ctx, 512, 512, 16384, pos, GPUML_MATMUL_SIMT);
    }
    gpuml_shutdown(ctx);
    return 0;
}

/* tf32 with B stored K x N: the kernel that reads B as stored (gpuml_matmul_sm90_nn), the k-major
   copy of B + the NT kernel, NT itself, and the automatic choice; each shape twice (next to
   matmul_torch.py tf32nn) */
static int gpu_tf32nn(void)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    static const int64_t shp[][3] = { {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 4096, 14336}, {8192, 14336, 4096}, {2048, 2048, 2048} };
    int i, rep;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("no GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
    printf("gpuml tf32 matmul on %s (TFLOP/s; rows: NN in-kernel | NN copy of B | NT | NN auto)\n", gpuml_device_name(ctx));
    g_tf32 = 1;
    for (i = 0; i < 5; i++)
        for (rep = 0; rep < 2; rep++) {
            gpuml__mm_tf32_nn = 1; printf("nn-in-kernel "); gpu_row(ctx, GPUML_F32, GPUML_F32, shp[i][0], shp[i][1], shp[i][2], 0, GPUML_MATMUL_AUTO);
            gpuml__mm_tf32_nn = 2; printf("nn-copy      "); gpu_row(ctx, GPUML_F32, GPUML_F32, shp[i][0], shp[i][1], shp[i][2], 0, GPUML_MATMUL_AUTO);
            gpuml__mm_tf32_nn = 0; printf("nt           "); gpu_row(ctx, GPUML_F32, GPUML_F32, shp[i][0], shp[i][1], shp[i][2], 1, GPUML_MATMUL_AUTO);
            printf("nn-auto      "); gpu_row(ctx, GPUML_F32, GPUML_F32, shp[i][0], shp[i][1], shp[i][2], 0, GPUML_MATMUL_AUTO);
        }
    g_tf32 = 0;
    gpuml_shutdown(ctx);
    return 0;
}
#endif

static int gpu(int quick)
{
#ifndef GPUML_NO_CUDA
    gpuml_ctx *ctx;
    gpuml_desc d;
    static const int64_t sq[] = { 2048, 4096, 8192 };
    static const int64_t tf[][3] = { {4096, 4096, 4096}, {8192, 11008, 4096}, {8192, 4096, 11008}, {16384, 14336, 4096} };
    int p, i;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("no GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
    printf("gpuml matmul on %s (TFLOP/s; A row-major; NN: B KxN, NT: B given as a transposed NxK view)\n", gpuml_device_name(ctx));
    for (i = 0; i < 3; i++)
        for (p = 0; p <= 3; p++) {
            if (quick && p == 1 && sq[i] > 4096) continue;
            gpu_row(ctx, GPUML_BF16, GPUML_BF16, sq[i], sq[i], sq[i], 0, (gpuml_matmul_path)p);
        }
    for (i = 0; i < 3; i++) gpu_row(ctx, GPUML_F16, GPUML_F16, sq[i], sq[i], sq[i], 1, GPUML_MATMUL_AUTO);
    for (i = 0; i < 4; i++) gpu_row(ctx, GPUML_BF16, GPUML_BF16, tf[i][0], tf[i][1], tf[i][2], 1, GPUML_MATMUL_AUTO);
    gpu_row(ctx, GPUML_F32, GPUML_F32, 4096, 4096, 4096, 0, GPUML_MATMUL_AUTO);
    gpu_row(ctx, GPUML_F32, GPUML_F32, 8192, 8192, 8192, 0, GPUML_MATMUL_AUTO);
    /* f32 inputs on tensor cores (tf32): NT reads B as stored, NN copies it k-major first */
    g_tf32 = 1;
    for (i = 1; i < 3; i++) { gpu_row(ctx, GPUML_F32, GPUML_F32, sq[i], sq[i], sq[i], 1, GPUML_MATMUL_AUTO); gpu_row(ctx, GPUML_F32, GPUML_F32, sq[i], sq[i], sq[i], 0, GPUML_MATMUL_AUTO); }
    g_tf32 = 0;
    /* fp8 e4m3 -> bf16 next to bf16 on the same shape (the target is >= 1.6x bf16 at 8192^3) */
    for (i = 1; i < 3; i++) {
        gpu_row(ctx, GPUML_FP8_E4M3, GPUML_BF16, sq[i], sq[i], sq[i], 1, GPUML_MATMUL_AUTO);
        gpu_row(ctx, GPUML_BF16, GPUML_BF16, sq[i], sq[i], sq[i], 1, GPUML_MATMUL_AUTO);
    }
    gpu_row(ctx, GPUML_FP8_E4M3, GPUML_BF16, 8192, 8192, 8192, 0, GPUML_MATMUL_AUTO);
    /* small M (decode; weights not rotated here: bench_matmul small has the rotated, graph-timed rows) */
    for (i = 1; i <= 16; i *= 2) {
        if (i == 2) continue;
        gpu_row(ctx, GPUML_F16, GPUML_F16, i, 4096, 4096, 1, GPUML_MATMUL_AUTO);
        gpu_row(ctx, GPUML_F16, GPUML_F16, i, 8192, 8192, 1, GPUML_MATMUL_AUTO);
        gpu_row(ctx, GPUML_F16, GPUML_F16, i, 14336, 4096, 1, GPUML_MATMUL_AUTO);
    }
    gpuml_shutdown(ctx);
    return 0;
#else
    (void)quick;
    return 1;
#endif
}

#ifndef GPUML_NO_CUDA
/* ---- small M (decode): weights larger than the L2 in rotation, eager and graph-replayed ---- */
typedef struct sm_set { gpuml_tensor *a[16], *b[16], *bv[16], *c[16]; int nbuf, reps; gpuml_matmul_desc d; } sm_set;
static void sm_body(gpuml_ctx *ctx, void *u)
{
    sm_set *s = (sm_set *)u;
    int i;
    for (i = 0; i < s->reps; i++) gpuml_matmul(ctx, s->c[i % s->nbuf], s->a[i % s->nbuf], s->bv[i % s->nbuf], &s->d);
}
static double g_copy_tbs;   /* device-to-device copy bandwidth measured in this run (TB/s, read + write) */
static void copy_bw(gpuml_ctx *ctx)
{
    int64_t n = (int64_t)1 << 29;   /* 1 GiB of f16 each way */
    gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F16, 1, &n), *y = gpuml_tensor_new(ctx, GPUML_F16, 1, &n);
    gpuml__CUevent e0, e1;
    double ms;
    int i;
    if (!x || !y) { printf("copy: %s\n", gpuml_last_error(ctx)); gpuml_clear_error(ctx); return; }
    gpuml_fill(ctx, x, 1.5);
    for (i = 0; i < 2; i++) gpuml_copy(ctx, y, x);
    gpuml_sync(ctx);
    gpuml__bench_event(ctx, &e0);
    for (i = 0; i < 10; i++) gpuml_copy(ctx, y, x);
    gpuml__bench_event(ctx, &e1);
    ms = gpuml__bench_elapsed(ctx, e0, e1) / 10;
    g_copy_tbs = 2.0 * (double)n * 2 / (ms * 1e-3) / 1e12;
    printf("copy bandwidth (gpuml_copy, 1 GiB f16, read + write): %.2f TB/s\n", g_copy_tbs);
    gpuml_tensor_free(x); gpuml_tensor_free(y);
}
/* one row: M x N x K, B stored N x K; path and (rt, w, u) of the small kernel (0 = its choice) */
static void sm_row(gpuml_ctx *ctx, gpuml_dtype dt, int64_t M, int64_t N, int64_t K, gpuml_matmul_path path, int rt, int w, int u, int cl)
{
    static const char *pn[] = { "auto", "simt", "mma", "wgmma", "small" };
    sm_set s;
    int64_t as[2], bs[2], cs[2];
    double wbytes = (double)N * (double)K * 2, eager = 0, graph = 0;
    gpuml__CUevent e0, e1;
    gpuml_graph *g = NULL;
    gpuml_status st = GPUML_SUCCESS;
    int i;
    char cfg[32];
    memset(&s, 0, sizeof s);
    s.nbuf = (int)GPUML__MIN(16, GPUML__MAX(2, (int64_t)(3.0 * 64e6 / wbytes) + 1));   /* > 3 x the L2 in rotation */
    as[0] = M; as[1] = K; bs[0] = N; bs[1] = K; cs[0] = M; cs[1] = N;
    for (i = 0; i < s.nbuf; i++) {
        s.a[i] = gpuml_tensor_new(ctx, dt, 2, as); s.b[i] = gpuml_tensor_new(ctx, dt, 2, bs); s.c[i] = gpuml_tensor_new(ctx, dt, 2, cs);
        if (!s.a[i] || !s.b[i] || !s.c[i]) { printf("%s\n", gpuml_last_error(ctx)); gpuml_clear_error(ctx); s.nbuf = i + 1; goto done; }
        s.bv[i] = gpuml_tensor_transpose(s.b[i], 0, 1);
        gpuml_rand_normal(ctx, s.a[i], 11 + i, 0, 1);
        gpuml_rand_normal(ctx, s.b[i], 101 + i, 0, 1);
    }
    s.d.path = path;
    gpuml__mm_small_cfg[0] = rt; gpuml__mm_small_cfg[1] = w; gpuml__mm_small_cfg[2] = u; gpuml__mm_small_cfg[3] = cl;
    s.reps = s.nbuf;                                   /* warm-up (compiles) */
    sm_body(ctx, &s);
    st = gpuml_sync(ctx);
    if (st != GPUML_SUCCESS) goto done;
    s.reps = 20 * s.nbuf;
    gpuml__bench_event(ctx, &e0);
    sm_body(ctx, &s);
    gpuml__bench_event(ctx, &e1);
    eager = gpuml__bench_elapsed(ctx, e0, e1) * 1e3 / s.reps;
    st = gpuml_graph_capture(ctx, sm_body, &s, &g);
    if (st == GPUML_SUCCESS) {
        gpuml_graph_launch(ctx, g);
        gpuml_sync(ctx);
        gpuml__bench_event(ctx, &e0);
        for (i = 0; i < 5; i++) gpuml_graph_launch(ctx, g);
        gpuml__bench_event(ctx, &e1);
        graph = gpuml__bench_elapsed(ctx, e0, e1) * 1e3 / (5.0 * s.reps);
        gpuml_graph_free(g);
    }
    st = gpuml_sync(ctx);
done:
    memset(gpuml__mm_small_cfg, 0, sizeof gpuml__mm_small_cfg);
    snprintf(cfg, sizeof cfg, rt || w || u || cl ? "rt%d,w%d,u%d,c%d" : "-", rt, w, u, cl);
    if (st != GPUML_SUCCESS || eager <= 0) printf("small  %-5s %-5s %-11s %3lld %6lld %6lld  n/a (%s)\n", gpuml_dtype_name(dt), pn[path], cfg, (long long)M, (long long)N, (long long)K, gpuml_last_error(ctx));
    else printf("small  %-5s %-5s %-11s %3lld %6lld %6lld  eager %8.2f us  graph %8.2f us  weights %5.2f TB/s = %.2f of copy\n", gpuml_dtype_name(dt), pn[path], cfg,
                (long long)M, (long long)N, (long long)K, eager, graph, wbytes / (graph > 0 ? graph : eager) / 1e6,
                g_copy_tbs > 0 ? wbytes / (graph > 0 ? graph : eager) / 1e6 / g_copy_tbs : 0.0);
    fflush(stdout);
    gpuml_clear_error(ctx);
    for (i = 0; i < s.nbuf; i++) { gpuml_tensor_free(s.a[i]); gpuml_tensor_free(s.bv[i]); gpuml_tensor_free(s.b[i]); gpuml_tensor_free(s.c[i]); }
}
#endif
/* bench_matmul small [sweep]: M = 1..16 against N x K weights (bench/run_matmul_small.sh) */
static int small(int sweep)
{
#ifndef GPUML_NO_CUDA
    gpuml_ctx *ctx;
    gpuml_desc d;
    static const int64_t ms[] = { 1, 2, 4, 8, 12, 16 }, nk[][2] = { {4096, 4096}, {8192, 8192}, {14336, 4096}, {4096, 14336}, {1024, 4096} };
    int i, j;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("no GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
    printf("gpuml small-M matmul on %s (B stored N x K; per call: eager launches, and graph replay; weights rotated over > 3x the L2)\n", gpuml_device_name(ctx));
    copy_bw(ctx);
    for (j = 0; j < 5; j++)
        for (i = 0; i < 6; i++) sm_row(ctx, GPUML_F16, ms[i], nk[j][0], nk[j][1], GPUML_MATMUL_AUTO, 0, 0, 0, 0);
    for (j = 0; j < 2; j++) { sm_row(ctx, GPUML_BF16, 1, nk[j][0], nk[j][1], GPUML_MATMUL_AUTO, 0, 0, 0, 0); sm_row(ctx, GPUML_BF16, 16, nk[j][0], nk[j][1], GPUML_MATMUL_AUTO, 0, 0, 0, 0); }
    for (j = 0; j < 2; j++) sm_row(ctx, GPUML_F16, 16, nk[j][0], nk[j][1], GPUML_MATMUL_WGMMA, 0, 0, 0, 0);   /* what M = 16 ran on before */
    if (sweep) {   /* the kernel's shape: rows a block (16 rt), warps a block, chunks in flight a warp, cluster size */
        static const int c1[][4] = { {1, 8, 4, 1}, {2, 8, 2, 1}, {1, 8, 4, 2}, {2, 8, 2, 2}, {1, 4, 4, 2}, {2, 4, 2, 4} };
        static const int c2[][4] = { {4, 4, 1, 1}, {4, 4, 1, 2}, {4, 4, 1, 4}, {4, 8, 1, 1}, {4, 8, 1, 2}, {2, 4, 2, 1},
                                     {2, 4, 2, 2}, {2, 4, 2, 4}, {2, 8, 2, 1}, {2, 8, 2, 2}, {1, 4, 3, 1}, {1, 4, 3, 2} };
        for (j = 0; j < 5; j++) {
            for (i = 0; i < 6; i++) sm_row(ctx, GPUML_F16, 1, nk[j][0], nk[j][1], GPUML_MATMUL_SMALL_M, c1[i][0], c1[i][1], c1[i][2], c1[i][3]);
            for (i = 0; i < 12; i++) sm_row(ctx, GPUML_F16, 16, nk[j][0], nk[j][1], GPUML_MATMUL_SMALL_M, c2[i][0], c2[i][1], c2[i][2], c2[i][3]);
        }
    }
    gpuml_shutdown(ctx);
    return 0;
#else
    (void)sweep;
    return 1;
#endif
}

/* the CPU GEMM next to OpenBLAS: square row-major f32 at each size and thread count (argv:
   "cpu [T,T,...] [N,N,...]", default 1 and all cores, 256-2048).  Every gpuml configuration and
   OpenBLAS take turns over the rounds (BENCH_CPU_ROUNDS, default 3; each >= 0.15 s) and the best
   of each is kept.  BENCH_CPU_SPINS="us,us,..." gives a gpuml column per spin time of the
   pool's idle workers (gpuml__pool_spin_us; 0 = block at once), e.g. "0,200"; the ratio is
   OpenBLAS's time over the last column's.  BENCH_CPU_SMALL="r,r,..." instead gives a column per
   value of gpuml__gemm_small_rule (0: unpacked AVX-512 path only at <= 30^3, -1: the default
   rule), at the default spin.  On Xeons newer than OpenBLAS 0.3.21 knows, set
   OPENBLAS_CORETYPE (SkylakeX for its AVX-512 sgemm), else it runs SSE3 kernels. */
static int parse_list(const char *s, int *v, int max)
{
    int n = 0;
    while (s && *s && n < max) {
        v[n++] = atoi(s);
        s = strchr(s, ',');
        if (s) s++;
    }
    return n;
}

/* seconds a call of C = A B (row-major f32, shapes from the tensors) takes: gpuml, or OpenBLAS on
   nthr threads (blas), repeated for at least min_s and 3 calls */
static double cpu_time_one(gpuml_ctx *ctx, gpuml_tensor *c, gpuml_tensor *a, gpuml_tensor *b, int blas, int nthr, double min_s)
{
    double t0 = now(), el;
    int reps = 0;
    int m = (int)gpuml_tensor_dim(a, 0), k = (int)gpuml_tensor_dim(a, 1), n = (int)gpuml_tensor_dim(b, 1);
#ifdef HAVE_OPENBLAS
    if (blas) openblas_set_num_threads(nthr);
#else
    (void)nthr; (void)m; (void)k; (void)n;
#endif
    do {
        if (!blas) gpuml_matmul(ctx, c, a, b, NULL);
#ifdef HAVE_OPENBLAS
        else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, (const float *)gpuml_tensor_data(a), k,
                         (const float *)gpuml_tensor_data(b), n, 0.0f, (float *)gpuml_tensor_data(c), n);
#endif
        reps++; el = now() - t0;
    } while (el < min_s || reps < 3);
    return el / reps;
}

static int cpu(int argc, char **argv)
{
    int sizes[8] = { 256, 512, 1024, 2048 }, thr[8], ns = 4, nt = 2, i, t, r, k, ncfg = 1, rounds = 3;
    int spin[8], small[8], by_small = 0;
    const char *cf = getenv("BENCH_CPU_SPINS"), *cs = getenv("BENCH_CPU_SMALL");
    thr[0] = 1; thr[1] = gpuml__num_cores();
    if (argc > 2) nt = parse_list(argv[2], thr, 8);
    if (argc > 3) ns = parse_list(argv[3], sizes, 8);
    if (getenv("BENCH_CPU_ROUNDS")) rounds = atoi(getenv("BENCH_CPU_ROUNDS"));
    spin[0] = gpuml__pool_spin_us;   /* the default */
    if (cf && *cf) ncfg = parse_list(cf, spin, 8);
    if (cs && *cs) {
        ncfg = parse_list(cs, small, 8);
        by_small = 1;
        for (k = 0; k < ncfg; k++) spin[k] = gpuml__pool_spin_us;
    }
    printf("CPU sgemm GFLOP/s, gpuml vs OpenBLAS (best of %d alternating rounds, >= 0.15 s each)\n  size threads", rounds);
    for (k = 0; k < ncfg; k++)
        if (by_small) printf(" gpuml sm%3d", small[k]);
        else printf(" gpuml %4dus", spin[k]);
    printf("  openblas  ratio\n");
    for (t = 0; t < nt; t++) {
        gpuml_ctx *ctx;
        gpuml_desc d;
        memset(&d, 0, sizeof d);
        d.backend = GPUML_BACKEND_CPU;
        d.num_threads = thr[t];
        if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("init: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
        for (i = 0; i < ns; i++) {
            int64_t n = sizes[i], sh[2];
            gpuml_tensor *a, *b, *c;
            double best[9], fl = 2.0 * n * n * n;
            sh[0] = sh[1] = n;
            a = gpuml_tensor_new(ctx, GPUML_F32, 2, sh); b = gpuml_tensor_new(ctx, GPUML_F32, 2, sh); c = gpuml_tensor_new(ctx, GPUML_F32, 2, sh);
            gpuml_rand_normal(ctx, a, 1, 0, 1); gpuml_rand_normal(ctx, b, 2, 0, 1);
            gpuml_matmul(ctx, c, a, b, NULL);
            for (k = 0; k <= ncfg; k++) best[k] = 1e9;
            for (r = 0; r < rounds; r++)
                for (k = 0; k <= ncfg; k++) {
                    double el;
                    if (k < ncfg && ctx->pool) ctx->pool->spin_us = spin[k];   /* workers read it racily: a bench knob */
                    if (k < ncfg && by_small) gpuml__gemm_small_rule = small[k];
#ifndef HAVE_OPENBLAS
                    if (k == ncfg) continue;
#endif
                    el = cpu_time_one(ctx, c, a, b, k == ncfg, thr[t], 0.15);
                    if (el < best[k]) best[k] = el;
                }
            printf("  %4lld %7d", (long long)n, thr[t]);
            for (k = 0; k < ncfg; k++) printf(" %11.1f", fl / best[k] / 1e9);
            printf(" %9.1f %6.2f\n", best[ncfg] < 1e9 ? fl / best[ncfg] / 1e9 : 0.0, best[ncfg] < 1e9 ? best[ncfg] / best[ncfg - 1] : 0.0);
            fflush(stdout);
            gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c);
        }
        gpuml_shutdown(ctx);
    }
    return 0;
}

/* thin CPU products (small M, the decode case): M = 1..64 times N = K = 1024 / 4096, row-major f32,
   on T threads (argv: "cpu_thin [T]", default all cores); gpuml with the thread count from FLOPs
   only (gpuml__gemm_pack_madds = 0, the rule before 2026-11-28) and with packing counted, and
   OpenBLAS, alternated over 3 rounds of >= 0.2 s, best kept.  GB/s = f32 B bytes over the time. */
static int cpu_thin(int argc, char **argv)
{
    static const int ms[] = { 1, 2, 4, 8, 16, 64 }, nk[] = { 1024, 4096 };
    int nthr = argc > 2 ? atoi(argv[2]) : gpuml__num_cores(), i, q, r, k;
    gpuml_ctx *ctx;
    gpuml_desc d;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CPU;
    d.num_threads = nthr;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("init: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
    printf("CPU thin sgemm, %d threads: us (GB/s of B)\n     M     N     K   packed path          gpuml            openblas   ratio\n", nthr);
    for (q = 0; q < 2; q++)
        for (i = 0; i < 6; i++) {
            int64_t M = ms[i], N = nk[q], K = nk[q], sa[2], sb[2], sc[2];
            gpuml_tensor *a, *b, *c;
            double best[3] = { 1e9, 1e9, 1e9 };
            sa[0] = M; sa[1] = K; sb[0] = K; sb[1] = N; sc[0] = M; sc[1] = N;
            a = gpuml_tensor_new(ctx, GPUML_F32, 2, sa); b = gpuml_tensor_new(ctx, GPUML_F32, 2, sb); c = gpuml_tensor_new(ctx, GPUML_F32, 2, sc);
            gpuml_rand_normal(ctx, a, 1, 0, 1); gpuml_rand_normal(ctx, b, 2, 0, 1);
            for (r = 0; r < 3; r++)
                for (k = 0; k < 3; k++) {
                    double el;
#ifndef HAVE_OPENBLAS
                    if (k == 2) continue;
#endif
                    gpuml__gemm_small_rule = k == 0 ? 0 : -1;   /* 0: the packed path (the default before 2026-11-29) */
                    el = cpu_time_one(ctx, c, a, b, k == 2, nthr, 0.2);
                    if (el < best[k]) best[k] = el;
                }
            gpuml__gemm_small_rule = -1;
            printf("  %4lld %5lld %5lld", (long long)M, (long long)N, (long long)K);
            for (k = 0; k < 3; k++)
                printf(" %8.1f (%5.1f)", best[k] < 1e9 ? best[k] * 1e6 : 0.0, best[k] < 1e9 ? 4.0 * N * K / best[k] * 1e-9 : 0.0);
            printf(" %6.2f\n", best[2] < 1e9 ? best[2] / best[1] : 0.0);
            fflush(stdout);
            gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c);
        }
    gpuml_shutdown(ctx);
    return 0;
}

/* split-K: few output tiles, long K (bf16 in and out; the conv backward-filter shape NN with f32
   out), the automatic choice (split) next to split-K off, same process; matmul_torch.py splitk */
static const int64_t g_sk[][4] = { {256, 256, 16384, 1}, {512, 512, 8192, 1}, {1024, 1024, 8192, 1}, {128, 4096, 8192, 1},
                                   {1024, 2048, 4096, 1}, {64, 576, 100352, 0}, {64, 256, 100352, 0}, {256, 2304, 6272, 0} };
#ifndef GPUML_NO_CUDA
static gpuml_ctx *gpu_open(void);   /* below */
#endif
static int gpu_splitk(void)
{
#ifndef GPUML_NO_CUDA
    gpuml_ctx *ctx = gpu_open();
    int i, r;
    if (!ctx) return 1;
    printf("gpuml matmul split-K on %s (auto = split where the rule says; 'nosplit' = gpuml__mm_splitk -1)\n", gpuml_device_name(ctx));
    for (r = 0; r < 2; r++)
        for (i = 0; i < (int)(sizeof g_sk / sizeof g_sk[0]); i++) {
            gpuml__mm_splitk = r ? -1 : 0;
            if (r) printf("nosplit ");
            gpu_row(ctx, GPUML_BF16, g_sk[i][3] ? GPUML_BF16 : GPUML_F32, g_sk[i][0], g_sk[i][1], g_sk[i][2], (int)g_sk[i][3], GPUML_MATMUL_AUTO);
        }
    gpuml__mm_splitk = 0;
    gpuml_shutdown(ctx);
    return 0;
#else
    return 1;
#endif
}

#ifndef GPUML_NO_CUDA
/* the stream-K tail (gpuml__sm90_streamk): the automatic choice next to the tail off
   (gpuml__mm_streamk -1), alternated, two rounds; matmul_torch.py streamk has the same shapes.
   Tiles of 128 x 256 on 132 SMs: 4096^2 512 (3.88 waves), 8192^2 2048 (15.5), 6144^2 1152 (8.7),
   8192 x 11008 2752 (20.8), 16384 x 14336 7168 (54.3); 2048^2 128 (one partial wave: no tail);
   3072 x 1792 168 (1.27), 4096 x 2304 288 (2.18) */
static const int64_t g_stk[][5] = { {4096, 4096, 4096, GPUML_BF16, 1}, {8192, 8192, 8192, GPUML_BF16, 1}, {6144, 6144, 6144, GPUML_BF16, 1},
                                    {8192, 11008, 4096, GPUML_BF16, 1}, {16384, 14336, 4096, GPUML_BF16, 1}, {2048, 2048, 2048, GPUML_BF16, 1},
                                    {4096, 4096, 4096, GPUML_F16, 1}, {4096, 4096, 4096, GPUML_F32, 1}, {4096, 4096, 4096, GPUML_F32, 0},
                                    {8192, 8192, 8192, GPUML_F32, 1}, {8192, 8192, 8192, GPUML_F32, 0}, {4096, 4096, 4096, GPUML_FP8_E4M3, 1},
                                    {3072, 1792, 4096, GPUML_BF16, 1}, {4096, 2304, 4096, GPUML_BF16, 1}, {3072, 1792, 4096, GPUML_F32, 1},
                                    {4096, 2304, 8192, GPUML_F16, 1} };
/* rows of (M, N, K, dtype, NT) next to the same rows with a feature off, `rounds` a shape: alternated
   (abba 0) or in the order on off off on on off (abba 1: the first of two back-to-back large runs
   runs cooler, so an alternation that always starts with one side favours it); set(off) switches
   the feature before each row.  Prints how many launches took the stream-K walk on the first. */
static void ab_rows(gpuml_ctx *ctx, const int64_t (*t)[5], int n, int rounds, int abba, void (*set)(gpuml_ctx *, int),
                    const char *on_tag, const char *off_tag)
{
    int i, r;
    for (i = 0; i < n; i++)
        for (r = 0; r < rounds; r++) {
            gpuml_dtype dt = (gpuml_dtype)t[i][3];
            const int off = abba ? (0x26 >> (r % 6)) & 1 : r % 2;
            long before = gpuml__mm_streamk_runs;
            set(ctx, off);
            g_tf32 = dt == GPUML_F32;
            printf("%-5s", off ? off_tag : on_tag);
            gpu_row(ctx, dt, dt == GPUML_FP8_E4M3 ? GPUML_BF16 : dt, t[i][0], t[i][1], t[i][2], (int)t[i][4], GPUML_MATMUL_AUTO);
            if (r == 0) printf("     (stream-K walk in %ld of the launches)\n", gpuml__mm_streamk_runs - before);
        }
    g_tf32 = 0;
}
static gpuml_ctx *gpu_open(void)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("no GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return NULL; }
    return ctx;
}
static int g_sk_force;
static void set_streamk(gpuml_ctx *ctx, int off) { gpuml__mm_streamk = off ? -1 : g_sk_force ? ctx->sm_count : 0; }
static void set_split2(gpuml_ctx *ctx, int off) { (void)ctx; gpuml__mm_split2 = off ? -1 : 0; }
/* BENCH_SK_ABBA=1: six rounds in ABBA order; BENCH_SK_FORCE=1: 'sk' forces the tail wherever there is
   a partial wave (gpuml__mm_streamk = #SMs) */
static int gpu_streamk(void)
{
    gpuml_ctx *ctx = gpu_open();
    const int abba = getenv("BENCH_SK_ABBA") != NULL;
    if (!ctx) return 1;
    g_sk_force = getenv("BENCH_SK_FORCE") != NULL;
    printf("gpuml matmul stream-K tail on %s ('sk' = the rule, 'nosk' = gpuml__mm_streamk -1; f32 rows are tf32)\n", gpuml_device_name(ctx));
    ab_rows(ctx, g_stk, (int)(sizeof g_stk / sizeof g_stk[0]), abba ? 6 : 4, abba, set_streamk, "sk", "nosk");
    gpuml__mm_streamk = 0;
    gpuml_shutdown(ctx);
    return 0;
}

/* the two-way split of few tiles (gpuml__sm90_split2): each shape with the rule ('s2') and with
   gpuml__mm_split2 = -1 ('off'), ABBA order; matmul_torch.py split2 has the same
   shapes.  Tiles of 128 x 256: 1024 x 2048 64, 1024 x 1792 56, 768 x 2048 48 (all under half of 132
   SMs, over a third: split-K leaves them) */
static const int64_t g_s2[][5] = { {1024, 2048, 4096, GPUML_BF16, 1}, {1024, 1792, 4096, GPUML_BF16, 1}, {768, 2048, 8192, GPUML_BF16, 1},
                                   {1024, 2048, 4096, GPUML_F32, 1}, {1024, 2048, 4096, GPUML_FP8_E4M3, 1}, {512, 2048, 4096, GPUML_F32, 1} };
/* one feature's A/B on a table of shapes: title (its %s the device), six ABBA rounds of set(ctx, 0) 'on'
   and set(ctx, 1) 'off' a shape; with counter, how many launches took the feature.  The caller resets
   the knob. */
static int ab_bench(const char *title, const int64_t (*t)[5], int n, void (*set)(gpuml_ctx *, int), const char *on, const char *off,
                    const long *counter, const char *what)
{
    gpuml_ctx *ctx = gpu_open();
    long before = counter ? *counter : 0;
    if (!ctx) return 1;
    printf(title, gpuml_device_name(ctx));
    ab_rows(ctx, t, n, 6, 1, set, on, off);
    if (counter) printf("(%s: %ld)\n", what, *counter - before);
    gpuml_shutdown(ctx);
    return 0;
}
static int gpu_split2(void)
{
    const int r = ab_bench("gpuml matmul two-way split on %s ('s2' = the rule, 'off' = gpuml__mm_split2 -1; f32 rows are tf32)\n",
                           g_s2, (int)(sizeof g_s2 / sizeof g_s2[0]), set_split2, "s2", "off", NULL, NULL);
    gpuml__mm_split2 = 0;
    return r;
}

/* split-K for tf32 and fp8 ('skx': the rule; before session 29 it took f16 / bf16 only) next to split-K
   off ('off', gpuml__mm_splitk -1: the two-way split or nothing), ABBA */
static const int64_t g_skx[][5] = { {512, 2048, 4096, GPUML_F32, 1}, {1024, 1024, 8192, GPUML_F32, 1}, {256, 2048, 8192, GPUML_F32, 1},
                                    {256, 256, 16384, GPUML_F32, 1}, {512, 2048, 8192, GPUML_FP8_E4M3, 1}, {256, 256, 16384, GPUML_FP8_E4M3, 1},
                                    {1024, 1024, 8192, GPUML_FP8_E4M3, 1} };
static void set_skx(gpuml_ctx *ctx, int off) { (void)ctx; gpuml__mm_splitk = off ? -1 : 0; }
static int gpu_skx(void)
{
    const int r = ab_bench("gpuml matmul split-K for tf32 / fp8 on %s ('skx' = the rule, 'off' = gpuml__mm_splitk -1; f32 rows are tf32)\n",
                           g_skx, (int)(sizeof g_skx / sizeof g_skx[0]), set_skx, "skx", "off", &gpuml__mm_splitk_runs, "split-K launches");
    gpuml__mm_splitk = 0;
    return r;
}
/* 128-column tiles by the rule (gpuml__mm_bn -1, 'b128': where 128 x 256 tiles fill at most half of the
   SMs, the default) next to 256 ('b256'), ABBA; bench_matmul vs with BENCH_VS_ENV=GPUML_MM_BN=256 puts
   both next to cuBLAS */
static const int64_t g_bn[][5] = { {1024, 2048, 4096, GPUML_BF16, 1}, {1024, 1792, 4096, GPUML_BF16, 1}, {768, 2048, 8192, GPUML_BF16, 1},
                                   {1024, 1024, 8192, GPUML_BF16, 1}, {512, 512, 8192, GPUML_BF16, 1}, {128, 4096, 8192, GPUML_BF16, 1},
                                   {1024, 2048, 4096, GPUML_F32, 1}, {1024, 2048, 4096, GPUML_FP8_E4M3, 1} };
static void set_bn(gpuml_ctx *ctx, int off) { (void)ctx; gpuml__mm_bn = off ? 256 : -1; }
static int gpu_bn(void)
{
    const int r = ab_bench("gpuml matmul 128-column tiles on %s ('b128' = the rule, 'b256' = 256 columns; f32 rows are tf32)\n",
                           g_bn, (int)(sizeof g_bn / sizeof g_bn[0]), set_bn, "b128", "b256", &gpuml__mm_bn128_runs, "launches with 128 columns");
    gpuml__mm_bn = 0;
    return r;
}
/* shapes MxNxK ...: bf16 NT at each tile-order group height of BENCH_GROUPS (default "8"), the list
   forward then backward (ABBA across the list); matmul_torch.py shapes takes the same arguments */
static int gpu_shapes(int argc, char **argv)
{
    gpuml_ctx *ctx = gpu_open();
    const char *gs = getenv("BENCH_GROUPS");
    int groups[16], ng = 0, i, r;
    char buf[128], *tok;
    if (!ctx) return 1;
    snprintf(buf, sizeof buf, "%s", gs ? gs : "8");
    for (tok = strtok(buf, ","); tok && ng < 16; tok = strtok(NULL, ",")) groups[ng++] = atoi(tok);
    printf("gpuml matmul bf16 NT by tile-order group height on %s\n", gpuml_device_name(ctx));
    for (i = 2; i < argc; i++) {
        long long M, N, K;
        if (sscanf(argv[i], "%lldx%lldx%lld", &M, &N, &K) != 3) { printf("bad shape %s\n", argv[i]); continue; }
        for (r = 0; r < 2 * ng; r++) {
            const int g = groups[r < ng ? r : 2 * ng - 1 - r];
            gpuml__mm_group = g;
            printf("g%-4d", g);
            gpu_row(ctx, GPUML_BF16, GPUML_BF16, M, N, K, 1, GPUML_MATMUL_AUTO);
        }
    }
    gpuml__mm_group = 0;
    gpuml_shutdown(ctx);
    return 0;
}

/* vs DT:MxNxK[:NN] ...: gpuml next to cuBLAS (cublasGemmEx from BENCH_CUBLAS, a libcublas.so path) in one
   process, on the same buffers and stream, NT (B stored N x K) or NN (B stored K x N), C in the input
   dtype (f32 for tf32 and f32):
   4 rounds, each timing gpuml, cuBLAS and (with BENCH_VS_ENV=NAME=VALUE) gpuml under that variable
   (group=N: the tile order's group height, gpuml__mm_group; splitk=N: gpuml__mm_splitk; streamk=G: the
   stream-K tail forced on a grid of G CTAs, gpuml__mm_streamk; bn=128 / 256: gpuml__mm_bn),
   the order reversed every other round, so all see the same clocks and heat.  DT: bf16, f16, tf32,
   f32 (no tensor cores on either side: cuBLAS's CUBLAS_COMPUTE_32F).  bench/report.sh runs it on the
   table's large shapes. */
typedef int (*cublas_create_fn)(void **);
typedef int (*cublas_stream_fn)(void *, void *);
typedef int (*cublas_gemmex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                                const void *, void *, int, int, int, int);
static double vs_time(gpuml_ctx *ctx, int who, void *h, cublas_gemmex_fn gemm, gpuml_tensor *c, gpuml_tensor *a, gpuml_tensor *b,
                      gpuml_tensor *bv, const gpuml_matmul_desc *d, int cdt, int ctype, int reps)
{
    const float one = 1.0f, zero = 0.0f;
    const int M = (int)a->shape[0], K = (int)a->shape[1], N = (int)c->shape[1], nn = b == bv;   /* NN: B is K x N */
    gpuml__CUevent e0, e1;
    int i, bad = 0;
    for (i = 0; i < reps + 3; i++) {
        if (i == 3) { gpuml_sync(ctx); gpuml__bench_event(ctx, &e0); }
        if (who == 1) bad |= gemm(h, !nn, 0, N, M, K, &one, (const void *)gpuml__dptr(b), cdt, nn ? N : K, (const void *)gpuml__dptr(a), cdt, K,
                                 &zero, (void *)gpuml__dptr(c), cdt, N, ctype, -1) != 0;
        else bad |= gpuml_matmul(ctx, c, a, bv, d) != GPUML_SUCCESS;
    }
    gpuml__bench_event(ctx, &e1);
    if (bad) { gpuml__bench_elapsed(ctx, e0, e1); return -1.0; }
    return gpuml__bench_elapsed(ctx, e0, e1) / reps;
}
static int gpu_vs(int argc, char **argv)
{
    const char *lib = getenv("BENCH_CUBLAS"), *venv = getenv("BENCH_VS_ENV");
    static const char *names[3] = { "gpuml", "cuBLAS", "gpuml+env" };
    char ename[64] = "", evalue[64] = "";
    void *dl, *h = NULL;
    cublas_create_fn create; cublas_stream_fn set_stream; cublas_gemmex_fn gemm;
    gpuml_ctx *ctx;
    int i, r, k;
    if (!lib || !(dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) { printf("vs: no cuBLAS (BENCH_CUBLAS=%s): %s\n", lib ? lib : "unset", dlerror()); return 1; }
    create = (cublas_create_fn)dlsym(dl, "cublasCreate_v2");
    set_stream = (cublas_stream_fn)dlsym(dl, "cublasSetStream_v2");
    gemm = (cublas_gemmex_fn)dlsym(dl, "cublasGemmEx");
    if (!create || !set_stream || !gemm) { printf("vs: cuBLAS symbols missing\n"); return 1; }
    if (venv) sscanf(venv, "%63[^=]=%63s", ename, evalue);
    if (!(ctx = gpu_open())) return 1;
    if (create(&h) != 0 || set_stream(h, (void *)ctx->stream) != 0) { printf("vs: cublasCreate failed\n"); gpuml_shutdown(ctx); return 1; }
    printf("gpuml next to cuBLAS (%s) in one process on %s; TFLOP/s per round%s%s\n", lib, gpuml_device_name(ctx), ename[0] ? "; gpuml+env: " : "", ename[0] ? venv : "");
    for (i = 2; i < argc; i++) {
        char dts[16], lay[8] = "NT";
        long long M, N, K;
        int64_t as[2], bs[2], cs[2];
        gpuml_tensor *a, *b, *bv, *c;
        gpuml_matmul_desc d;
        gpuml_dtype dt;
        int cdt, ctype, nwho = ename[0] ? 3 : 2, nn;
        double flops, best[3] = { 0, 0, 0 };
        if (sscanf(argv[i], "%15[^:]:%lldx%lldx%lld:%3s", dts, &M, &N, &K, lay) < 4) { printf("bad shape %s (DT:MxNxK[:NN])\n", argv[i]); continue; }
        nn = !strcmp(lay, "NN");
        if (!strcmp(dts, "bf16")) { dt = GPUML_BF16; cdt = 14; ctype = 68; }
        else if (!strcmp(dts, "f16")) { dt = GPUML_F16; cdt = 2; ctype = 68; }
        else if (!strcmp(dts, "tf32")) { dt = GPUML_F32; cdt = 0; ctype = 77; }
        else if (!strcmp(dts, "f32")) { dt = GPUML_F32; cdt = 0; ctype = 68; }
        else { printf("bad dtype %s\n", dts); continue; }
        as[0] = M; as[1] = K; bs[0] = nn ? K : N; bs[1] = nn ? N : K; cs[0] = M; cs[1] = N;
        a = gpuml_tensor_new(ctx, dt, 2, as); b = gpuml_tensor_new(ctx, dt, 2, bs); c = gpuml_tensor_new(ctx, dt, 2, cs);
        if (!a || !b || !c) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
        bv = nn ? b : gpuml_tensor_transpose(b, 0, 1);
        gpuml_rand_normal(ctx, a, 1, 0, 1); gpuml_rand_normal(ctx, b, 2, 0, 1);
        memset(&d, 0, sizeof d);
        d.allow_tf32 = !strcmp(dts, "tf32");
        flops = 2.0 * (double)M * (double)N * (double)K;
        printf("%-5s %6lld %6lld %6lld %s", dts, M, N, K, nn ? "NN" : "NT");
        for (r = 0; r < 4; r++)
            for (k = 0; k < nwho; k++) {
                const int who = r % 2 ? nwho - 1 - k : k;
                double ms;
                if (who == 2 && !strcmp(ename, "group")) gpuml__mm_group = atoi(evalue);
                else if (who == 2 && !strcmp(ename, "splitk")) gpuml__mm_splitk = atoi(evalue);
                else if (who == 2 && !strcmp(ename, "streamk")) gpuml__mm_streamk = atoi(evalue);
                else if (who == 2 && !strcmp(ename, "bn")) gpuml__mm_bn = atoi(evalue);
                else if (who == 2) setenv(ename, evalue, 1);
                ms = vs_time(ctx, who, h, gemm, c, a, b, bv, &d, cdt, ctype, flops > 1e12 ? 10 : flops > 1e11 ? 30 : 100);
                if (who == 2) { unsetenv(ename); gpuml__mm_group = 0; gpuml__mm_splitk = 0; gpuml__mm_streamk = 0; gpuml__mm_bn = 0; }
                printf("  %s %.1f", who == 0 ? "g" : who == 1 ? "c" : "e", ms > 0 ? flops / ms / 1e9 : -1.0);
                if (ms > 0 && flops / ms / 1e9 > best[who]) best[who] = flops / ms / 1e9;
            }
        {   /* the two products agree (a check on the cuBLAS call's arguments) */
            gpuml_tensor *c32 = gpuml_tensor_new(ctx, GPUML_F32, 2, cs);
            float *x = (float *)malloc(sizeof(float) * (size_t)(M * N)), *y = (float *)malloc(sizeof(float) * (size_t)(M * N));
            double worst = 0;
            int64_t e;
            if (c32 && x && y) {
                vs_time(ctx, 0, h, gemm, c, a, b, bv, &d, cdt, ctype, 1);
                gpuml_copy(ctx, c32, c); gpuml_tensor_read(c32, x, sizeof(float) * (size_t)(M * N));
                vs_time(ctx, 1, h, gemm, c, a, b, bv, &d, cdt, ctype, 1);
                gpuml_copy(ctx, c32, c); gpuml_tensor_read(c32, y, sizeof(float) * (size_t)(M * N));
                for (e = 0; e < M * N; e++) {
                    double t = fabs((double)x[e] - (double)y[e]) / (1.0 + fabs((double)y[e]));
                    if (!(t <= worst)) worst = t;
                }
                printf("  (max |g - c| / (1 + |c|) %.2g)", worst);
            }
            free(x); free(y); gpuml_tensor_free(c32);
        }
        printf("\n      best: %s %.1f, %s %.1f", names[0], best[0], names[1], best[1]);
        if (nwho == 3) printf(", %s %.1f", names[2], best[2]);
        printf("  ratio %.3f\n", best[1] > 0 ? best[0] / best[1] : 0.0);
        fflush(stdout);
        gpuml_tensor_free(a); gpuml_tensor_free(b); if (!nn) gpuml_tensor_free(bv); gpuml_tensor_free(c);
    }
    gpuml_shutdown(ctx);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "cpu") == 0) return cpu(argc, argv);
    if (argc > 1 && strcmp(argv[1], "cpu_thin") == 0) return cpu_thin(argc, argv);
    if (argc > 1 && strcmp(argv[1], "small") == 0) return small(argc > 2 && strcmp(argv[2], "sweep") == 0);
#ifndef GPUML_NO_CUDA
    if (argc > 1 && strcmp(argv[1], "f32") == 0) return gpu_f32();
    if (argc > 1 && strcmp(argv[1], "tf32nn") == 0) return gpu_tf32nn();
    if (argc > 1 && strcmp(argv[1], "splitk") == 0) return gpu_splitk();
    if (argc > 1 && strcmp(argv[1], "streamk") == 0) return gpu_streamk();
    if (argc > 1 && strcmp(argv[1], "split2") == 0) return gpu_split2();
    if (argc > 1 && strcmp(argv[1], "shapes") == 0) return gpu_shapes(argc, argv);
    if (argc > 1 && strcmp(argv[1], "vs") == 0) return gpu_vs(argc, argv);
    if (argc > 1 && strcmp(argv[1], "skx") == 0) return gpu_skx();
    if (argc > 1 && strcmp(argv[1], "bn") == 0) return gpu_bn();
#endif
    return gpu(argc > 2 && strcmp(argv[2], "quick") == 0);
}
