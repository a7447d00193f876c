/* The CPU conv's backward passes, per ResNet-50 layer (f32 NHWC, batch 1): the forward
   gpuml_conv2d call (the reference point), gpuml_conv2d_backward_data and
   gpuml_conv2d_backward_filter, and -- the same problems -- OpenBLAS's sgemm on the GEMM each
   backward pass is built on: backward data dY [NPQ x K] @ W [K x CRS] -> the column matrix
   [NPQ x CRS] (the GEMM before col2im), backward filter dY^T [K x NPQ] @ im2col(x) [NPQ x CRS]
   -> dW [K x CRS].  Only the sgemm is timed (its operands are built outside the timed region).
   Every figure is GFLOP/s of the conv's count, 2*N*P*Q*K*C*R*S; a ratio is gpuml / OpenBLAS
   (> 1: gpuml's whole pass is faster than OpenBLAS's GEMM alone).  Rounds alternate over all
   of them (the box is shared); the best of the rounds is kept.  Not a test.
   Threads: gpuml's come from GPUML_NUM_THREADS (else the core count); OpenBLAS is set to the
   same number (read back from gpuml_device_name).
   Build: cc -std=c99 -O2 -Wall -Wextra -Werror -I. bench/prof_conv_cpu_bwd.c -o build/prof_conv_cpu_bwd -ldl -lpthread -lm
   Run:   GPUML_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX build/prof_conv_cpu_bwd [rounds] [layer]
          (layer: an index into R50, also PROF_LAYER=i; PROF_CPUTIME=1: process CPU time) */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int);
static int cputime;   /* PROF_CPUTIME=1: process CPU time (use with 1 thread: immune to a busy box) */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(cputime ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* c, h (= w), k, r (= s), stride, pad */
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
#define NL ((int)(sizeof R50 / sizeof R50[0]))
#define REPS 5
#define NT 5   /* 0: forward; 1: backward data; 2: its sgemm; 3: backward filter; 4: its sgemm */

static gpuml_ctx *ctx;
static void check(gpuml_status st, const char *what, int layer)
{
    if (st == GPUML_SUCCESS) return;
    fprintf(stderr, "layer %d: %s failed (status %d): %s\n", layer, what, (int)st, gpuml_last_error(ctx));
    exit(1);
}
/* x NHWC [1][h][h][c] -> col [p*p][(r*R + s)*c + ci], the order gpuml's im2col uses */
static void im2col(const float *x, float *col, int c, int h, int R, int st, int pad, int p)
{
    int oy, ox, r, s;
    for (oy = 0; oy < p; oy++)
        for (ox = 0; ox < p; ox++) {
            float *row = col + ((size_t)oy * p + ox) * (size_t)R * R * c;
            for (r = 0; r < R; r++)
                for (s = 0; s < R; s++) {
                    int iy = oy * st - pad + r, ix = ox * st - pad + s;
                    float *o = row + (size_t)(r * R + s) * c;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= h) memset(o, 0, sizeof(float) * (size_t)c);
                    else memcpy(o, x + ((size_t)iy * h + ix) * c, sizeof(float) * (size_t)c);
                }
        }
}

int main(int argc, char **argv)
{
    gpuml_desc desc;
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    sgemm_fn sgemm = NULL;
    void (*set_threads)(int) = NULL;
    int rounds = argc > 1 ? atoi(argv[1]) : 3, only = -1, nth = 1, l, rd, i, nmean = 0;
    static double best[NL][NT];
    double lsum[2] = { 0, 0 };
    if (argc > 2) only = atoi(argv[2]);
    else if (getenv("PROF_LAYER")) only = atoi(getenv("PROF_LAYER"));
    if (rounds < 1) rounds = 1;
    if (only >= NL) { fprintf(stderr, "layer %d: the table has %d (0..%d)\n", only, NL, NL - 1); return 1; }
    cputime = getenv("PROF_CPUTIME") && atoi(getenv("PROF_CPUTIME"));
    memset(&desc, 0, sizeof desc);
    desc.backend = GPUML_BACKEND_CPU;
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS) { printf("init failed: %s\n", ctx ? gpuml_last_error(ctx) : ""); return 1; }
    if (lib) {
        void *sym = dlsym(lib, "cblas_sgemm"); memcpy(&sgemm, &sym, sizeof sym);
        sym = dlsym(lib, "openblas_set_num_threads"); memcpy(&set_threads, &sym, sizeof sym);
    }
    sscanf(gpuml_device_name(ctx), "CPU (%d", &nth);
    if (set_threads) set_threads(nth);
    printf("%s, OpenBLAS %s, OPENBLAS_CORETYPE=%s, timer %s, best of %d rounds of %d calls\n", gpuml_device_name(ctx),
           sgemm ? "found" : "missing", getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "auto",
           cputime ? "process CPU time" : "wall clock", rounds, REPS);
    for (rd = 0; rd < rounds; rd++)
        for (l = 0; l < NL; l++) {
            const int *L = R50[l];
            int p = (int)gpuml_conv2d_out_dim(L[1], L[3], L[4], L[5], L[5], 1);
            int64_t xs[4] = { 1, L[1], L[1], L[0] }, ws[4] = { L[2], L[3], L[3], L[0] }, ys[4] = { 1, p, p, L[2] };
            int M = p * p, K = L[2], NC = L[3] * L[3] * L[0];
            gpuml_tensor *x, *w, *y, *dy, *dx, *dw;
            gpuml_conv2d_desc d;
            float *colx, *colo, *dwo;
            double t[NT];
            if (only >= 0 && l != only) continue;
            x = gpuml_tensor_new(ctx, GPUML_F32, 4, xs); w = gpuml_tensor_new(ctx, GPUML_F32, 4, ws);
            y = gpuml_tensor_new(ctx, GPUML_F32, 4, ys); dy = gpuml_tensor_new(ctx, GPUML_F32, 4, ys);
            dx = gpuml_tensor_new(ctx, GPUML_F32, 4, xs); dw = gpuml_tensor_new(ctx, GPUML_F32, 4, ws);
            if (!x || !w || !y || !dy || !dx || !dw) check(GPUML_ERROR_OUT_OF_MEMORY, "gpuml_tensor_new", l);
            /* random inputs in [-1, 1], none zero (|v| < 1/16 moved to +-1/16) */
            check(gpuml_rand_uniform(ctx, x, 1 + 10 * (uint64_t)l, -1, 1), "gpuml_rand_uniform", l);
            check(gpuml_rand_uniform(ctx, w, 2 + 10 * (uint64_t)l, -1, 1), "gpuml_rand_uniform", l);
            check(gpuml_rand_uniform(ctx, dy, 3 + 10 * (uint64_t)l, -1, 1), "gpuml_rand_uniform", l);
            {
                float *v[3];
                size_t n[3], e;
                int a;
                v[0] = (float *)gpuml_tensor_data(x); n[0] = (size_t)L[1] * L[1] * L[0];
                v[1] = (float *)gpuml_tensor_data(w); n[1] = (size_t)K * NC;
                v[2] = (float *)gpuml_tensor_data(dy); n[2] = (size_t)M * K;
                for (a = 0; a < 3; a++)
                    for (e = 0; e < n[a]; e++)
                        if (fabsf(v[a][e]) < 0.0625f) v[a][e] = v[a][e] < 0 ? -0.0625f : 0.0625f;
            }
            memset(&d, 0, sizeof d);
            d.stride[0] = d.stride[1] = L[4];
            d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = L[5];
            colx = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)M * NC);
            colo = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)M * NC);
            dwo = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)K * NC);
            if (!colx || !colo || !dwo) check(GPUML_ERROR_OUT_OF_MEMORY, "host buffers", l);
            im2col((const float *)gpuml_tensor_data(x), colx, L[0], L[1], L[3], L[4], L[5], p);
            for (i = 0; i < NT; i++) t[i] = 0;
            {
                double t0 = 0;
                for (i = 0; i < REPS + 2; i++) {
                    if (i == 2) t0 = now_s();
                    check(gpuml_conv2d(ctx, y, x, w, &d), "gpuml_conv2d", l);
                }
                t[0] = (now_s() - t0) / REPS;
                for (i = 0; i < REPS + 2; i++) {
                    if (i == 2) t0 = now_s();
                    check(gpuml_conv2d_backward_data(ctx, dx, dy, w, &d), "gpuml_conv2d_backward_data", l);
                }
                t[1] = (now_s() - t0) / REPS;
                if (sgemm) {
                    /* col [M x NC] = dY [M x K] @ W [K x NC] (W = w, KRSC row-major) */
                    for (i = 0; i < REPS + 1; i++) {
                        if (i == 1) t0 = now_s();
                        sgemm(101, 111, 111, M, NC, K, 1.0f, (const float *)gpuml_tensor_data(dy), K,
                              (const float *)gpuml_tensor_data(w), NC, 0.0f, colo, NC);
                    }
                    t[2] = (now_s() - t0) / REPS;
                }
                for (i = 0; i < REPS + 2; i++) {
                    if (i == 2) t0 = now_s();
                    check(gpuml_conv2d_backward_filter(ctx, dw, x, dy, &d), "gpuml_conv2d_backward_filter", l);
                }
                t[3] = (now_s() - t0) / REPS;
                if (sgemm) {
                    /* dW [K x NC] = dY^T [K x M] @ im2col(x) [M x NC] */
                    for (i = 0; i < REPS + 1; i++) {
                        if (i == 1) t0 = now_s();
                        sgemm(101, 112, 111, K, NC, M, 1.0f, (const float *)gpuml_tensor_data(dy), K, colx, NC, 0.0f, dwo, NC);
                    }
                    t[4] = (now_s() - t0) / REPS;
                }
            }
            for (i = 0; i < NT; i++) if (rd == 0 || t[i] < best[l][i]) best[l][i] = t[i];
            gpuml__aligned_free(colx); gpuml__aligned_free(colo); gpuml__aligned_free(dwo);
            gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y);
            gpuml_tensor_free(dy); gpuml_tensor_free(dx); gpuml_tensor_free(dw);
        }
    printf("layer (c h k r s)      fwd GF   bwdD GF  blasD GF  bwdD/blas   bwdF GF  blasF GF  bwdF/blas   fwd us  bwdD us  bwdF us\n");
    for (l = 0; l < NL; l++) {
        const int *L = R50[l];
        int p = (int)gpuml_conv2d_out_dim(L[1], L[3], L[4], L[5], L[5], 1);
        double fl = 2.0 * p * p * L[2] * L[0] * L[3] * L[3], rD = 0, rF = 0;
        if (only >= 0 && l != only) continue;
        if (best[l][2] > 0 && best[l][4] > 0) {
            rD = best[l][2] / best[l][1]; rF = best[l][4] / best[l][3];
            lsum[0] += log(rD); lsum[1] += log(rF); nmean++;
        }
        printf("%4d %3d %4d %d %d  %8.1f  %8.1f  %8.1f  %9.2f  %8.1f  %8.1f  %9.2f  %7.0f  %7.0f  %7.0f\n", L[0], L[1], L[2], L[3], L[4],
               fl / best[l][0] * 1e-9, fl / best[l][1] * 1e-9, best[l][2] > 0 ? fl / best[l][2] * 1e-9 : 0, rD,
               fl / best[l][3] * 1e-9, best[l][4] > 0 ? fl / best[l][4] * 1e-9 : 0, rF,
               best[l][0] * 1e6, best[l][1] * 1e6, best[l][3] * 1e6);
    }
    if (nmean)
        printf("geomean over %d layers: bwd-data / OpenBLAS GEMM %.2f, bwd-filter / OpenBLAS GEMM %.2f\n", nmean,
               exp(lsum[0] / nmean), exp(lsum[1] / nmean));
    gpuml_shutdown(ctx);
    return 0;
}
