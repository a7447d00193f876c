/* Where the CPU conv's time goes, per ResNet-50 layer (f32 NHWC, batch 1): the whole
   gpuml_conv2d call, and -- the same problem -- the im2col pass alone, the GEMM on the
   im2col matrix alone (gpuml's packed GEMM, as the im2col path calls it), the weight
   transpose-pack, and OpenBLAS's sgemm on the same GEMM.  Rounds alternate over all of
   them (the box is shared); the best of the rounds is kept.  Not a test.
   Build: cc -std=c99 -O2 -I. bench/prof_conv_cpu.c -o build/prof_conv_cpu -ldl -lpthread -lm
   Run:   GPUML_BACKEND=cpu OPENBLAS_CORETYPE=SkylakeX build/prof_conv_cpu [rounds] [layer] */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <dlfcn.h>
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

int main(int argc, char **argv)
{
    gpuml_ctx *ctx;
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    sgemm_fn sgemm = NULL;
    void (*set_threads)(int) = NULL;
    int rounds = argc > 1 ? atoi(argv[1]) : 3, only = argc > 2 ? atoi(argv[2]) : -1, nth = 1, l, rd, i;
    static double best[NL][5];
    cputime = getenv("PROF_CPUTIME") && atoi(getenv("PROF_CPUTIME"));
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS) { printf("init failed\n"); return 1; }
    if (lib) {
        void *sym = dlsym(lib, "cblas_sgemm"); memcpy(&sgemm, &sym, sizeof sym);
        sym = dlsym(lib, "openblas_set_num_threads"); memcpy(&set_threads, &sym, sizeof sym);
    }
    sscanf(gpuml_device_name(ctx), "CPU (%d", &nth);
    if (set_threads) set_threads(nth);
    printf("%s, OpenBLAS %s, OPENBLAS_CORETYPE=%s, timer %s, best of %d rounds\n", gpuml_device_name(ctx), sgemm ? "found" : "missing",
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "auto", cputime ? "process CPU time" : "wall clock", rounds);
    for (rd = 0; rd < rounds; rd++)
        for (l = 0; l < NL; l++) {
            const int *L = R50[l];
            int64_t xs[4] = { 1, L[1], L[1], L[0] }, ws[4] = { L[2], L[3], L[3], L[0] }, ys[4];
            int p = (int)gpuml_conv2d_out_dim(L[1], L[3], L[4], L[5], L[5], 1);
            gpuml_tensor *x, *w, *y;
            gpuml_conv2d_desc d;
            gpuml__cv cv;
            gpuml__cv_cpu j;
            int64_t M, K, N;
            float *col, *wt, *c;
            double t[5];
            if (only >= 0 && l != only) continue;
            ys[0] = 1; ys[1] = ys[2] = p; ys[3] = L[2];
            x = gpuml_tensor_new(ctx, GPUML_F32, 4, xs); w = gpuml_tensor_new(ctx, GPUML_F32, 4, ws); y = gpuml_tensor_new(ctx, GPUML_F32, 4, ys);
            gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, w, 2, -1, 1);
            memset(&d, 0, sizeof d);
            d.stride[0] = d.stride[1] = L[4];
            d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = L[5];
            if (gpuml__cv_setup(ctx, "prof", 0, x, w, y, &d, &cv) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
            M = cv.n * cv.p * cv.q; K = cv.ncol; N = cv.k;
            col = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(M * K));
            wt = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(K * N));
            c = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(M * N));
            memset(&j, 0, sizeof j);
            j.cv = &cv; j.col = col;
            gpuml__parallel_for(ctx->pool, M, 16, gpuml__cv_im2col_rows, &j);
            gpuml__cv_pack(ctx, &cv, wt, 0);
            for (i = 0; i < 5; i++) t[i] = 0;
            /* 0: whole conv; 1: im2col; 2: gemm on col; 3: weight pack; 4: OpenBLAS */
            for (i = 0; i < 2; i++) gpuml_conv2d(ctx, y, x, w, &d);
            { double t0 = now_s(); for (i = 0; i < REPS; i++) gpuml_conv2d(ctx, y, x, w, &d); t[0] = (now_s() - t0) / REPS; }
            { double t0 = now_s(); for (i = 0; i < REPS; i++) gpuml__parallel_for(ctx->pool, M, 16, gpuml__cv_im2col_rows, &j); t[1] = (now_s() - t0) / REPS; }
            {
                double t0 = 0;
                int sm = M < N;
                for (i = 0; i < REPS + 1; i++) {
                    if (i == 1) t0 = now_s();
                    if (sm) gpuml__cpu_gemm(ctx->pool, N, M, K, 1.0f, gpuml_tensor_data(w), GPUML__GEMM_F32, K, 1, col, GPUML__GEMM_F32, 1, K, 0.0f, c, M, 1);
                    else gpuml__cpu_gemm(ctx->pool, M, N, K, 1.0f, col, GPUML__GEMM_F32, K, 1, wt, GPUML__GEMM_F32, 1, K, 0.0f, c, N, 1);
                }
                t[2] = (now_s() - t0) / REPS;
            }
            { double t0 = now_s(); for (i = 0; i < REPS; i++) gpuml__cv_pack(ctx, &cv, wt, 0); t[3] = (now_s() - t0) / REPS; }
            if (sgemm) {
                double t0 = 0;
                for (i = 0; i < REPS + 1; i++) {
                    if (i == 1) t0 = now_s();
                    sgemm(101, 111, 112, (int)M, (int)N, (int)K, 1.0f, col, (int)K, (const float *)gpuml_tensor_data(w), (int)K, 0.0f, c, (int)N);
                }
                t[4] = (now_s() - t0) / REPS;
            }
            for (i = 0; i < 5; i++) if (rd == 0 || t[i] < best[l][i]) best[l][i] = t[i];
            gpuml__aligned_free(col); gpuml__aligned_free(wt); gpuml__aligned_free(c);
            gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y);
        }
    printf("layer (c h k r s)       conv_us  im2col_us  gemm_us  wpack_us  blas_us   conv GF  blas GF  ratio  gemm/blas\n");
    for (l = 0; l < NL; l++) {
        const int *L = R50[l];
        int p = (int)gpuml_conv2d_out_dim(L[1], L[3], L[4], L[5], L[5], 1);
        double fl = 2.0 * p * p * L[2] * L[0] * L[3] * L[3];
        if (only >= 0 && l != only) continue;
        printf("%4d %3d %4d %d %d  %9.1f %9.1f %9.1f %9.1f %9.1f  %8.1f %8.1f  %5.2f  %5.2f\n", L[0], L[1], L[2], L[3], L[4],
               best[l][0] * 1e6, best[l][1] * 1e6, best[l][2] * 1e6, best[l][3] * 1e6, best[l][4] * 1e6,
               fl / best[l][0] * 1e-9, best[l][4] > 0 ? fl / best[l][4] * 1e-9 : 0, best[l][4] / best[l][0], best[l][4] / best[l][2]);
    }
    gpuml_shutdown(ctx);
    return 0;
}
