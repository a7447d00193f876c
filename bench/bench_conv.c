/* Benchmark of gpuml_conv2d (not a test).  GPU: time per call from CUDA events around
   back-to-back calls after warm-up; depthwise 3x3 (MobileNetV2 layers) as GB/s and the fraction
   of the device copy bandwidth measured in the same run; ResNet-50 layers (batch 32) as TFLOP/s,
   f32 NCHW and f16 NHWC.  bench/conv_torch.py prints the same lines for PyTorch/cuDNN.
   CPU (GPUML_BACKEND=cpu): ResNet-50 layers at batch 1 as GFLOP/s next to OpenBLAS's sgemm on
   the equivalent im2col GEMM (M = N*P*Q, N = K, K = R*S*C), the same machine, the same run.
   Build: cc -std=c99 -O2 -I. bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm
   Run:   build/bench_conv [filter] */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include "bench_timing.h"
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gpuml_ctx *ctx;
static const char *filter;
static int on_gpu;

/* GPUML_BENCH_CPUTIME=1 (CPU part, with GPUML_NUM_THREADS=1): process CPU time instead of the
   wall clock, which a busy shared machine inflates */
static double now_s(void)
{
    static int cpu = -1;
    struct timespec ts;
    if (cpu < 0) cpu = getenv("GPUML_BENCH_CPUTIME") && atoi(getenv("GPUML_BENCH_CPUTIME"));
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* kind: 0 forward, 1 backward data, 2 filter, 3 forward through gpuml__cv_tf32 (f32 on tensor cores)
   with mode (1 tf32, 2 3xTF32, 3 3xTF32 without per-tile sums, 4 3xTF32 split in registers),
   tile configuration cfg and splits (-1 / 0: chosen) */
typedef struct job { gpuml_tensor *y, *x, *w, *bias; gpuml_conv2d_desc d; int copy, kind, mode, cfg, splits; gpuml_pool2d_desc pd; } job;
static gpuml_status run(job *j)
{
    if (j->copy) return gpuml_copy(ctx, j->y, j->x);
    if (j->kind == 1) return gpuml_conv2d_backward_data(ctx, j->x, j->y, j->w, &j->d);
    if (j->kind == 2) return gpuml_conv2d_backward_filter(ctx, j->w, j->x, j->y, &j->d);
    if (j->kind == 4) return gpuml_pool2d(ctx, j->y, j->x, &j->pd);                 /* pooling: y from x */
    if (j->kind == 5) return gpuml_pool2d_backward(ctx, j->w, j->y, j->x, &j->pd);  /* dx (in w) from dy (in y) */
    if (j->kind == 3) {
        gpuml__cv cv;
        gpuml_status st = gpuml__cv_setup(ctx, "bench", 0, j->x, j->w, j->y, &j->d, &cv);
        if (st == GPUML_SUCCESS) st = gpuml__cv_tf32(ctx, &cv, j->mode, j->cfg, j->splits, "bench");
        return st == GPUML_ERROR_NOT_SUPPORTED ? (gpuml_clear_error(ctx), GPUML_ERROR_NOT_SUPPORTED) : st;
    }
    return gpuml_conv2d(ctx, j->y, j->x, j->w, &j->d);
}
/* n calls, the inputs rotating over the jobs */
struct rot { job *js; int nj; };
static void run_rot(void *arg, int n)
{
    const struct rot *r = (const struct rot *)arg;
    int i;
    for (i = 0; i < n; i++) run(&r->js[i % r->nj]);
}
/* seconds per call; inputs rotate over nj jobs (copies of the problem) so that they exceed L2 */
static double time_it(job *js, int nj, int iters)
{
    int i;
    for (i = 0; i < 2 * nj; i++)
        if (run(&js[i % nj]) != GPUML_SUCCESS) { printf("error: %s\n", gpuml_last_error(ctx)); return -1; }
    gpuml_sync(ctx);
#ifndef GPUML_NO_CUDA
    if (on_gpu) {
        struct rot r;
        r.js = js; r.nj = nj;
        return bench_gpu_seconds(ctx, run_rot, &r, iters);
    }
#endif
    {
        double t0 = now_s();
        for (i = 0; i < iters; i++) run(&js[i % nj]);
        return (now_s() - t0) / iters;
    }
}
static gpuml_tensor *rnd(gpuml_dtype dt, int ndim, const int64_t *s, uint64_t seed)
{
    gpuml_tensor *t = gpuml_tensor_new(ctx, dt, ndim, s);
    if (!t) { printf("alloc: %s\n", gpuml_last_error(ctx)); exit(1); }
    gpuml_rand_uniform(ctx, t, seed, -1, 1);
    return t;
}
/* nj jobs of one conv problem */
static int make_jobs(job *js, int nj, int n, int c, int h, int k, int r, int stride, int pad, int groups, int layout, gpuml_dtype dt)
{
    int64_t xs[4], ws[4], ys[4], bs[1];
    int p = (int)gpuml_conv2d_out_dim(h, r, stride, pad, pad, 1), i;
    xs[0] = ys[0] = n; ws[0] = k;
    if (layout) { xs[1] = c; xs[2] = xs[3] = h; ys[1] = k; ys[2] = ys[3] = p; ws[1] = c / groups; ws[2] = ws[3] = r; }
    else { xs[1] = xs[2] = h; xs[3] = c; ys[1] = ys[2] = p; ys[3] = k; ws[1] = ws[2] = r; ws[3] = c / groups; }
    bs[0] = k;
    for (i = 0; i < nj; i++) {
        memset(&js[i], 0, sizeof js[i]);
        js[i].x = rnd(dt, 4, xs, 1 + i); js[i].w = rnd(dt, 4, ws, 100 + i); js[i].y = gpuml_tensor_new(ctx, dt, 4, ys);
        js[i].bias = rnd(GPUML_F32, 1, bs, 200 + i);
        js[i].d.stride[0] = js[i].d.stride[1] = stride;
        js[i].d.pad[0] = js[i].d.pad[1] = js[i].d.pad[2] = js[i].d.pad[3] = pad;
        js[i].d.groups = groups; js[i].d.layout = (gpuml_layout)layout;
    }
    return p;
}
static void free_jobs(job *js, int nj)
{
    int i;
    for (i = 0; i < nj; i++) { gpuml_tensor_free(js[i].x); gpuml_tensor_free(js[i].w); gpuml_tensor_free(js[i].y); gpuml_tensor_free(js[i].bias); }
}
static int want(const char *s) { return !filter || strstr(s, filter) != NULL; }

/* ResNet-50's distinct conv layers: c, h, k, r, stride, pad */
static const int R50[][6] = {
    { 3, 224, 64, 7, 2, 3 },
    { 64, 56, 64, 1, 1, 0 }, { 64, 56, 64, 3, 1, 1 }, { 64, 56, 256, 1, 1, 0 }, { 256, 56, 64, 1, 1, 0 },
    { 256, 56, 128, 1, 1, 0 }, { 128, 56, 128, 3, 2, 1 }, { 128, 28, 512, 1, 1, 0 }, { 256, 56, 512, 1, 2, 0 },
    { 512, 28, 128, 1, 1, 0 }, { 128, 28, 128, 3, 1, 1 },
    { 512, 28, 256, 1, 1, 0 }, { 256, 28, 256, 3, 2, 1 }, { 256, 14, 1024, 1, 1, 0 }, { 512, 28, 1024, 1, 2, 0 },
    { 1024, 14, 256, 1, 1, 0 }, { 256, 14, 256, 3, 1, 1 },
    { 1024, 14, 512, 1, 1, 0 }, { 512, 14, 512, 3, 2, 1 }, { 512, 7, 2048, 1, 1, 0 }, { 1024, 14, 2048, 1, 2, 0 },
    { 2048, 7, 512, 1, 1, 0 }, { 512, 7, 512, 3, 1, 1 },
};
/* MobileNetV2's depthwise 3x3 layers: c, h, stride */
static const int MBV2[][3] = { { 32, 112, 1 }, { 96, 112, 2 }, { 144, 56, 1 }, { 144, 56, 2 }, { 192, 28, 1 }, { 384, 14, 1 },
                               { 576, 14, 1 }, { 960, 7, 1 } };

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
#ifdef GPUML_BENCH_LINK_OPENBLAS
/* a static build for machines without OpenBLAS (the GPU host): link libopenblas.a, e.g.
   cc -std=c99 -O2 -static -DGPUML_BENCH_LINK_OPENBLAS bench/bench_conv.c -o build/bench_conv_static \
      /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -lgfortran -lquadmath -lpthread -ldl -lm
   (the CBLAS enums are ints in the C ABI) */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
void openblas_set_num_threads(int n);
#endif

int main(int argc, char **argv)
{
    gpuml_desc desc;
    double roof = 0;
    unsigned l;
    filter = argc > 1 ? argv[1] : NULL;
    memset(&desc, 0, sizeof desc);
    if (getenv("BENCH_POOL_SPIN_US")) {   /* the CPU pool's idle spin (us; 0: the pool before 2026-11-28) */
        gpuml__pool_spin_us = atoi(getenv("BENCH_POOL_SPIN_US"));
        printf("CPU pool spin: %d us\n", gpuml__pool_spin_us);
    }
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS) { printf("init: %s\n", gpuml_last_error(ctx)); return 1; }
    on_gpu = gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA;
    printf("device: %s\n", gpuml_device_name(ctx));
    if (on_gpu) {
        job c;
        int64_t n = (int64_t)1 << 28;
        memset(&c, 0, sizeof c);
        c.copy = 1; c.x = rnd(GPUML_F32, 1, &n, 7); c.y = gpuml_tensor_new(ctx, GPUML_F32, 1, &n);
        roof = 2.0 * (double)n * 4 / time_it(&c, 1, 10) * 1e-9;
        printf("copy roof: %.1f GB/s (read + write)\n", roof);
        gpuml_tensor_free(c.x); gpuml_tensor_free(c.y);
        /* depthwise: bytes = x + y + w */
        if (want("depthwise"))
            for (l = 0; l < sizeof MBV2 / sizeof MBV2[0]; l++) {
                int layout, di;
                for (di = 0; di < 2; di++)
                    for (layout = 0; layout < 2; layout++) {
                        job js[4], cj[4];
                        gpuml_dtype dt = di ? GPUML_F16 : GPUML_F32;
                        int c0 = MBV2[l][0], h = MBV2[l][1], s = MBV2[l][2], p = make_jobs(js, 4, 32, c0, h, c0, 3, s, 1, c0, layout, dt), i;
                        double es = di ? 2 : 4, bytes = es * (32.0 * h * h * c0 + 32.0 * p * p * c0 + 9.0 * c0), t = time_it(js, 4, 50), tc;
                        /* a copy moving the same bytes, rotated the same way: what these small layers can reach
                           (launch and ramp cost the same fraction of a copy of their size) */
                        int64_t cn = (int64_t)(bytes / 8.0);
                        memset(cj, 0, sizeof cj);
                        for (i = 0; i < 4; i++) { cj[i].copy = 1; cj[i].x = rnd(GPUML_F32, 1, &cn, 40 + (uint64_t)i); cj[i].y = gpuml_tensor_new(ctx, GPUML_F32, 1, &cn); }
                        tc = time_it(cj, 4, 50);
                        printf("gpuml  depthwise %-4s %s c%-4d %3dx%-3d s%d  %9.1f us %8.1f GB/s  %5.3f of copy  same-bytes copy %6.1f us, %5.3f of it\n",
                               di ? "f16" : "f32", layout ? "NCHW" : "NHWC", c0, h, h, s, t * 1e6, bytes / t * 1e-9, bytes / t * 1e-9 / roof,
                               tc * 1e6, tc / t);
                        free_jobs(js, 4);
                        free_jobs(cj, 4);
                    }
            }
        if (want("resnet"))
            for (l = 0; l < sizeof R50 / sizeof R50[0]; l++) {
                int v;
                /* f16 NHWC; f32 NCHW (AUTO: 3xTF32 on the tensor cores, wgmma on sm_90), with allow_tf32.
                   A/B rows (BENCH_CONV_AB=1; the report leaves them out): AUTO as before the wgmma
                   f32 kernel (GPUML_CONV_F32=old), the GEMM path, the wgmma kernel forced (3xTF32 with
                   per-run sums, 3xTF32 in the tensor cores' accumulators), f32 NHWC likewise */
                static const char *const vname[14] = { "f16 NHWC", "f32 NCHW", "f32 NCHW tf32", "f32 NCHW old", "f32 NCHW tf32 old",
                                                       "f32 NCHW gemm", "f32 NCHW 3x-wgmma", "f32 NCHW 3x-wgmma-trunc", "f32 NHWC",
                                                       "f32 NHWC tf32", "f32 NHWC old", "f32 NHWC tf32 old", "f32 NHWC 3x-wgmma",
                                                       "f32 NCHW tf32 gemm" };
                /* BENCH_CONV_F16=1: the f16 NHWC rows only (epilogue A/B runs) */
                const int nv = getenv("BENCH_CONV_F16") && atoi(getenv("BENCH_CONV_F16")) ? 1
                             : getenv("BENCH_CONV_AB") && atoi(getenv("BENCH_CONV_AB")) ? 14 : 3;
                /* BENCH_CONV_1X1=1: the stride-1 1x1 layers' f32 NCHW rows only (A/B runs) */
                const int only1 = getenv("BENCH_CONV_1X1") && atoi(getenv("BENCH_CONV_1X1"));
                if (only1 && (R50[l][3] != 1 || R50[l][4] != 1)) continue;
                for (v = only1 ? 1 : 0; v < (only1 ? 3 : nv); v++) {
                    job js[2];
                    const int *L = R50[l];
                    int nchw = v != 0 && (v < 8 || v == 13), tf = v == 2 || v == 4 || v == 9 || v == 11 || v == 13, old = v == 3 || v == 4 || v == 10 || v == 11;
                    int p = make_jobs(js, 2, 32, L[0], L[1], L[2], L[3], L[4], L[5], 1, nchw, v ? GPUML_F32 : GPUML_F16), i;
                    double flop = 2.0 * 32 * p * p * L[2] * L[0] * L[3] * L[3], t;
                    for (i = 0; i < 2; i++) {
                        js[i].d.bias = js[i].bias;
                        js[i].d.act = GPUML_ACT_RELU;
                        js[i].d.allow_tf32 = tf;
                        if (v == 5 || v == 13) js[i].d.path = GPUML_CONV_GEMM;
                        if (v == 6 || v == 7 || v == 12) { js[i].kind = 3; js[i].mode = (v == 7 ? 3 : 2) | GPUML__CV_WGMMA; js[i].cfg = -1; }
                    }
                    if (old) setenv("GPUML_CONV_F32", "old", 1);
                    t = time_it(js, 2, 10);
                    if (old) unsetenv("GPUML_CONV_F32");
                    if (t < 0) gpuml_clear_error(ctx);
                    printf("gpuml  resnet %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s\n", vname[v], L[0], L[1], L[2], L[3], L[4],
                           t * 1e6, flop / t * 1e-12);
                    free_jobs(js, 2);
                }
            }
        if (filter && strcmp(filter, "tf32prof") == 0) {
            /* for a kernel profiler (nsys): one layer (GPUML_BENCH_LAYER of tf32cfg's), NCHW, tf32 and 3xTF32 */
            static const int LT[4][6] = { { 64, 56, 64, 3, 1, 1 }, { 256, 56, 64, 1, 1, 0 }, { 1024, 14, 256, 1, 1, 0 }, { 512, 7, 512, 3, 1, 1 } };
            const int *L = LT[getenv("GPUML_BENCH_LAYER") ? atoi(getenv("GPUML_BENCH_LAYER")) & 3 : 0];
            int mode, i;
            for (mode = 1; mode <= 2; mode++) {
                job js[2];
                double t;
                make_jobs(js, 2, 32, L[0], L[1], L[2], L[3], L[4], L[5], 1, 1, GPUML_F32);
                for (i = 0; i < 2; i++) { js[i].kind = 3; js[i].mode = mode; js[i].cfg = -1; js[i].splits = 0; }
                t = time_it(js, 2, 10);
                printf("gpuml  tf32prof mode %d c%d %d k%d r%d: %.1f us\n", mode, L[0], L[1], L[2], L[3], t * 1e6);
                free_jobs(js, 2);
            }
        }
        if (filter && strcmp(filter, "tf32cfg") == 0) {   /* a sweep: only when asked for by name */
            /* f32 on tensor cores by mode, layout and tile configuration (splits: 1 and chosen);
               NHWC with modes 1 and 4 reads x and w as they are: the kernel alone */
            static const int LT[4][6] = { { 64, 56, 64, 3, 1, 1 }, { 256, 56, 64, 1, 1, 0 }, { 1024, 14, 256, 1, 1, 0 }, { 512, 7, 512, 3, 1, 1 } };
            static const int cf[3][8] = { { 1, 2, 3, 4, 6, 7, 10, -1 }, { 3, 4, 7, -1 }, { 3, 4, 7, -1 } };
            static const int modes[3] = { 1, 4, 2 };
            int mi, layout, ci, sp;
            for (l = 0; l < 4; l++)
                for (mi = 0; mi < 3; mi++)
                    for (layout = 0; layout < 2; layout++) {
                        job js[2];
                        const int *L = LT[l];
                        int p = make_jobs(js, 2, 32, L[0], L[1], L[2], L[3], L[4], L[5], 1, layout, GPUML_F32), i;
                        double flop = 2.0 * 32 * p * p * L[2] * L[0] * L[3] * L[3], t;
                        for (ci = 0; ci < 8; ci++)
                            for (sp = 0; sp < 2; sp++) {
                                if (ci && cf[mi][ci - 1] == -1) break;
                                if (cf[mi][ci] == -1 && sp) break;
                                for (i = 0; i < 2; i++) { js[i].kind = 3; js[i].mode = modes[mi]; js[i].cfg = cf[mi][ci]; js[i].splits = sp ? 0 : 1; }
                                if (cf[mi][ci] >= 0 && sp) {   /* the model's split for this configuration: skip when it is 1 */
                                    continue;
                                }
                                t = time_it(js, 2, 10);
                                if (t < 0) { gpuml_clear_error(ctx); continue; }
                                printf("gpuml  tf32cfg mode %d %s cfg %2d c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s\n", modes[mi], layout ? "NCHW" : "NHWC",
                                       cf[mi][ci], L[0], L[1], L[2], L[3], L[4], t * 1e6, flop / t * 1e-12);
                            }
                        free_jobs(js, 2);
                    }
        }
        if (filter && strcmp(filter, "bwf1x1") == 0)   /* only when asked for by name: f32 1x1 stride-1 backward filter */
            for (l = 0; l < sizeof R50 / sizeof R50[0]; l++) {
                int v;
                if (R50[l][3] != 1 || R50[l][4] != 1) continue;
                for (v = 0; v < 4; v++) {   /* f32 NCHW, f32 NCHW tf32, f32 NHWC, f32 NHWC tf32 */
                    static const char *const vname[4] = { "f32 NCHW", "f32 NCHW tf32", "f32 NHWC", "f32 NHWC tf32" };
                    const char *only = getenv("BENCH_BWF1X1_V");   /* one variant (0-3) only */
                    job js[2];
                    if (only && *only && atoi(only) != v) continue;
                    const int *L = R50[l];
                    int p = make_jobs(js, 2, 32, L[0], L[1], L[2], L[3], L[4], L[5], 1, v < 2, GPUML_F32);
                    double flop = 2.0 * 32 * p * p * L[2] * L[0], t;
                    gpuml_rand_uniform(ctx, js[0].y, 5, -1, 1); gpuml_rand_uniform(ctx, js[1].y, 6, -1, 1);
                    js[0].kind = js[1].kind = 2;
                    js[0].d.allow_tf32 = js[1].d.allow_tf32 = v & 1;
                    t = time_it(js, 2, 10);
                    if (t < 0) gpuml_clear_error(ctx);
                    printf("gpuml  bwd_filter %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s\n", vname[v],
                           L[0], L[1], L[2], L[3], L[4], t * 1e6, flop / t * 1e-12);
                    free_jobs(js, 2);
                }
            }
        if (filter && strcmp(filter, "pool") == 0)   /* only when asked for by name: pooling forward / backward, batch 32 */
            for (l = 0; l < 8; l++) {
                /* ResNet-50's stem max pool (c64 112 -> 56, 3x3 / 2, pad 1) and head (global average of
                   c2048 7x7), f16 NHWC and f32 NCHW; GB/s of x + y (forward), dy + dx (+ x for max) */
                int head = (l >> 2) & 1, layout = (l >> 1) & 1, bwd = l & 1, c = head ? 2048 : 64, h = head ? 7 : 112, p = head ? 1 : 56, i;
                gpuml_dtype dt = layout ? GPUML_F32 : GPUML_F16;
                int64_t xs[4], ys[4], es = layout ? 4 : 2;
                job js[4];
                double t, bytes;
                xs[0] = ys[0] = 32;
                if (layout) { xs[1] = c; xs[2] = xs[3] = h; ys[1] = c; ys[2] = ys[3] = p; }
                else { xs[1] = xs[2] = h; xs[3] = c; ys[1] = ys[2] = p; ys[3] = c; }
                for (i = 0; i < 4; i++) {
                    memset(&js[i], 0, sizeof js[i]);
                    js[i].x = rnd(dt, 4, xs, 1 + i); js[i].y = rnd(dt, 4, ys, 10 + i); js[i].w = gpuml_tensor_new(ctx, dt, 4, xs);
                    js[i].kind = bwd ? 5 : 4;
                    js[i].pd.layout = (gpuml_layout)layout;
                    if (head) { js[i].pd.op = GPUML_POOL_AVG; js[i].pd.global = 1; }
                    else { js[i].pd.window[0] = js[i].pd.window[1] = 3; js[i].pd.stride[0] = js[i].pd.stride[1] = 2;
                           js[i].pd.pad[0] = js[i].pd.pad[1] = js[i].pd.pad[2] = js[i].pd.pad[3] = 1; }
                }
                t = time_it(js, 4, 10);
                if (t < 0) gpuml_clear_error(ctx);
                bytes = (double)es * 32 * c * ((bwd ? (head ? 1 : 2) : 1) * (double)h * h + (double)p * p);
                printf("gpuml  pool%s %s %s c%-4d %3d -> %-3d %9.1f us %8.1f GB/s\n", bwd ? "_bwd" : "", head ? "avg global" : "max 3x3/2",
                       layout ? "f32 NCHW" : "f16 NHWC", c, h, p, t * 1e6, bytes / t * 1e-9);
                for (i = 0; i < 4; i++) { gpuml_tensor_free(js[i].x); gpuml_tensor_free(js[i].y); gpuml_tensor_free(js[i].w); }
            }
        if (filter && strcmp(filter, "bwds2") == 0)   /* only when asked for by name: backward data of the strided 3x3 layers */
            for (l = 0; l < sizeof R50 / sizeof R50[0]; l++) {
                static const char *const vname[4] = { "f32 NCHW", "f16 NHWC", "f32 NCHW tf32", "f32 NHWC" };
                int v;
                if (R50[l][3] != 3 || R50[l][4] != 2) continue;
                for (v = 0; v < 4; v++) {
                    job js[2];
                    const int *L = R50[l];
                    int p = make_jobs(js, 2, 32, L[0], L[1], L[2], L[3], L[4], L[5], 1, v != 1 && v != 3, v == 1 ? GPUML_F16 : GPUML_F32);
                    double flop = 2.0 * 32 * p * p * L[2] * L[0] * L[3] * L[3], t;
                    gpuml_rand_uniform(ctx, js[0].y, 5, -1, 1); gpuml_rand_uniform(ctx, js[1].y, 6, -1, 1);
                    js[0].kind = js[1].kind = 1;
                    js[0].d.allow_tf32 = js[1].d.allow_tf32 = v == 2;
                    t = time_it(js, 2, 10);
                    if (t < 0) gpuml_clear_error(ctx);
                    printf("gpuml  bwd_data %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s\n", vname[v], L[0], L[1], L[2], L[3], L[4],
                           t * 1e6, flop / t * 1e-12);
                    free_jobs(js, 2);
                }
            }
        if (want("bwd"))
            for (l = 0; l < 5; l++) {
                /* f32 NCHW (3xTF32 / CUDA cores), f16 NHWC, f32 NCHW with allow_tf32, f32 NHWC */
                static const int B[5][6] = { { 64, 56, 64, 3, 1, 1 }, { 256, 14, 256, 3, 1, 1 }, { 256, 56, 64, 1, 1, 0 },
                                             { 256, 56, 512, 1, 2, 0 }, { 128, 56, 128, 3, 2, 1 } };
                static const char *const vname[4] = { "f32 NCHW", "f16 NHWC", "f32 NCHW tf32", "f32 NHWC" };
                int v, kind;
                for (v = 0; v < 4; v++)
                    for (kind = 1; kind <= 2; kind++) {
                        job js[2];
                        const int *L = B[l];
                        int p = make_jobs(js, 2, 32, L[0], L[1], L[2], L[3], L[4], L[5], 1, v != 1 && v != 3, v == 1 ? GPUML_F16 : GPUML_F32);
                        double flop = 2.0 * 32 * p * p * L[2] * L[0] * L[3] * L[3], t;
                        gpuml_rand_uniform(ctx, js[0].y, 5, -1, 1); gpuml_rand_uniform(ctx, js[1].y, 6, -1, 1);
                        js[0].kind = js[1].kind = kind;
                        js[0].d.allow_tf32 = js[1].d.allow_tf32 = v == 2;
                        t = time_it(js, 2, 10);
                        printf("gpuml  %s %s c%-4d %3d k%-4d r%d s%d  %9.1f us %7.1f TFLOP/s\n", kind == 1 ? "bwd_data" : "bwd_filter",
                               vname[v], L[0], L[1], L[2], L[3], L[4], t * 1e6, flop / t * 1e-12);
                        free_jobs(js, 2);
                    }
            }
    } else {
        /* CPU: batch 1, f32 NHWC, against OpenBLAS (as many threads as gpuml's pool) on the im2col
           GEMM.  Alternating rounds (GPUML_BENCH_ROUNDS, default 3): all gpuml layers, a pause,
           all OpenBLAS GEMMs, a pause; the best of the rounds is kept per layer.  The phases are
           apart and paused because OpenBLAS's idle threads spin for a while after each call and
           would steal the cores gpuml's pool runs on. */
        enum { NL = sizeof R50 / sizeof R50[0] };
#ifdef GPUML_BENCH_LINK_OPENBLAS
        void *lib = NULL;   /* a static process must not dlopen a shared OpenBLAS */
#else
        void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
#endif
        sgemm_fn sgemm = NULL;
        void (*set_threads)(int) = NULL;
        double tg[NL], tb[NL], lsum = 0;
        int nth = 1, rounds = getenv("GPUML_BENCH_ROUNDS") ? atoi(getenv("GPUML_BENCH_ROUNDS")) : 3, rd, nr = 0;
        const char *env = getenv("GPUML_NUM_THREADS");
        struct timespec pause = { 0, 200000000 };
        if (lib) {
            void *sym = dlsym(lib, "cblas_sgemm"); memcpy(&sgemm, &sym, sizeof sym);
            sym = dlsym(lib, "openblas_set_num_threads"); memcpy(&set_threads, &sym, sizeof sym);
        }
#ifdef GPUML_BENCH_LINK_OPENBLAS
        sgemm = cblas_sgemm; set_threads = openblas_set_num_threads;
#endif
        if (!sgemm) printf("OpenBLAS not found (apt-get install libopenblas-dev): gpuml figures only\n");
        sscanf(gpuml_device_name(ctx), "CPU (%d", &nth);
        if (set_threads) set_threads(nth);
        printf("threads: %d (GPUML_NUM_THREADS=%s, OPENBLAS_CORETYPE=%s), best of %d alternating rounds, %s\n", nth, env ? env : "",
               getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "auto", rounds,
               getenv("GPUML_BENCH_CPUTIME") && atoi(getenv("GPUML_BENCH_CPUTIME")) ? "process CPU time" : "wall clock");
        for (l = 0; l < NL; l++) tg[l] = tb[l] = 0;
        for (rd = 0; rd < rounds && want("cpu"); rd++) {
            for (l = 0; l < NL; l++) {
                job js[1];
                const int *L = R50[l];
                double t;
                make_jobs(js, 1, 1, L[0], L[1], L[2], L[3], L[4], L[5], 1, 0, GPUML_F32);
                t = time_it(js, 1, 5);
                if (rd == 0 || t < tg[l]) tg[l] = t;
                free_jobs(js, 1);
            }
            nanosleep(&pause, NULL);
            for (l = 0; sgemm && l < NL; l++) {
                const int *L = R50[l];
                int p = (int)gpuml_conv2d_out_dim(L[1], L[3], L[4], L[5], L[5], 1);
                int M = p * p, N = L[2], K = L[0] * L[3] * L[3], i;
                float *A = (float *)malloc(sizeof(float) * (size_t)M * K), *B = (float *)malloc(sizeof(float) * (size_t)K * N),
                      *C = (float *)malloc(sizeof(float) * (size_t)M * N);
                double t0, t;
                for (i = 0; i < M * K; i++) A[i] = (float)((i * 7 % 13) - 6) * 0.1f;
                for (i = 0; i < K * N; i++) B[i] = (float)((i * 5 % 11) - 5) * 0.1f;
                for (i = 0; i < 2; i++) sgemm(101, 111, 112, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);   /* B as [N][K]: weights KRSC */
                t0 = now_s();
                for (i = 0; i < 5; i++) sgemm(101, 111, 112, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);
                t = (now_s() - t0) / 5;
                if (rd == 0 || t < tb[l]) tb[l] = t;
                free(A); free(B); free(C);
            }
            nanosleep(&pause, NULL);
        }
        for (l = 0; l < NL && want("cpu"); l++) {
            const int *L = R50[l];
            int p = (int)gpuml_conv2d_out_dim(L[1], L[3], L[4], L[5], L[5], 1);
            double flop = 2.0 * p * p * L[2] * L[0] * L[3] * L[3];
            printf("cpu    resnet f32 NHWC n1 c%-4d %3d k%-4d r%d s%d  gpuml %7.1f GFLOP/s  openblas-gemm %7.1f GFLOP/s  ratio %.2f\n",
                   L[0], L[1], L[2], L[3], L[4], flop / tg[l] * 1e-9, tb[l] > 0 ? flop / tb[l] * 1e-9 : 0, tb[l] > 0 ? tb[l] / tg[l] : 0);
            if (tb[l] > 0) { lsum += log(tb[l] / tg[l]); nr++; }
        }
        if (nr) printf("cpu    geomean ratio (gpuml conv / OpenBLAS im2col GEMM) over %d layers: %.2f\n", nr, exp(lsum / nr));
    }
    gpuml_shutdown(ctx);
    return 0;
}
