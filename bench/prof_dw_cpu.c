/* The CPU depthwise 3x3 convolution (multiplier 1) on MobileNetV2's depthwise layers, batch 1 (or
   PROF_N), f32 NHWC: forward, backward data and backward filter, each as ms a call and GB/s of the
   bytes the pass must move (forward and backward data: the input once and the output once; backward
   filter: x and dy once), next to memcpy of the same number of bytes in the same process.  Rounds
   alternate over all of them; the best of the rounds is kept.  Not a test.
   Build: cc -std=c99 -O2 -Wall -Wextra -Werror -I. bench/prof_dw_cpu.c -o build/prof_dw_cpu -ldl -lpthread -lm
   Run:   GPUML_NUM_THREADS=1 build/prof_dw_cpu [rounds]   (PROF_N=n: batch; PROF_NCHW=1: NCHW / KCRS) */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* channels, input size, stride */
static const int L[][3] = { { 32, 112, 1 }, { 96, 112, 2 }, { 144, 56, 1 }, { 144, 56, 2 }, { 192, 28, 1 },
                            { 192, 28, 2 }, { 384, 14, 1 }, { 576, 14, 1 }, { 576, 14, 2 }, { 960, 7, 1 } };
#define NL ((int)(sizeof L / sizeof L[0]))

int main(int argc, char **argv)
{
    gpuml_ctx *ctx;
    gpuml_desc desc;
    int rounds = argc > 1 ? atoi(argv[1]) : 3, rd, l, i, nchw = getenv("PROF_NCHW") && atoi(getenv("PROF_NCHW"));
    int64_t N = getenv("PROF_N") ? atoi(getenv("PROF_N")) : 1;
    double best[NL][4];
    memset(&desc, 0, sizeof desc);
    desc.backend = GPUML_BACKEND_CPU;
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS) { printf("init failed: %s\n", ctx ? gpuml_last_error(ctx) : ""); return 1; }
    if (rounds < 1) rounds = 1;
    printf("%s, depthwise 3x3 pad 1, f32 %s, batch %lld, best of %d rounds\n", gpuml_device_name(ctx), nchw ? "NCHW" : "NHWC",
           (long long)N, rounds);
    for (rd = 0; rd < rounds; rd++)
        for (l = 0; l < NL; l++) {
            const int C = L[l][0], H = L[l][1], S = L[l][2], P = (int)gpuml_conv2d_out_dim(H, 3, S, 1, 1, 1);
            int64_t xs[4] = { N, H, H, C }, ws[4] = { C, 3, 3, 1 }, ys[4] = { N, P, P, C };
            gpuml_tensor *x, *w, *y, *dy, *dx, *dw;
            gpuml_conv2d_desc d;
            const int reps = 5;
            double t0, t[4];
            size_t bytes = sizeof(float) * (size_t)(N * C * ((int64_t)H * H + (int64_t)P * P));
            char *m0 = (char *)malloc(bytes), *m1 = (char *)malloc(bytes);
            if (nchw) { xs[1] = C; xs[3] = H; ys[1] = C; ys[3] = P; ws[1] = 1; ws[3] = 3; }
            x = gpuml_tensor_new(ctx, GPUML_F32, 4, xs); dx = gpuml_tensor_new(ctx, GPUML_F32, 4, xs);
            w = gpuml_tensor_new(ctx, GPUML_F32, 4, ws); dw = gpuml_tensor_new(ctx, GPUML_F32, 4, ws);
            y = gpuml_tensor_new(ctx, GPUML_F32, 4, ys); dy = gpuml_tensor_new(ctx, GPUML_F32, 4, ys);
            if (!x || !dx || !w || !dw || !y || !dy || !m0 || !m1) { printf("out of memory\n"); return 1; }
            gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, w, 2, -1, 1); gpuml_rand_uniform(ctx, dy, 3, -1, 1);
            memset(m0, 1, bytes); memset(m1, 2, bytes);
            memset(&d, 0, sizeof d);
            d.stride[0] = d.stride[1] = S;
            d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1;
            d.groups = C;
            d.layout = nchw ? GPUML_LAYOUT_NCHW : GPUML_LAYOUT_NHWC;
            for (i = 0; i < 4; i++) t[i] = 0;
            for (i = 0; i < reps + 1; i++) {   /* the first call of each: warm-up */
                if (i == 1) t0 = now_s();
                if (gpuml_conv2d(ctx, y, x, w, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
            }
            t[0] = (now_s() - t0) / reps;
            for (i = 0; i < reps + 1; i++) {
                if (i == 1) t0 = now_s();
                if (gpuml_conv2d_backward_data(ctx, dx, dy, w, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
            }
            t[1] = (now_s() - t0) / reps;
            for (i = 0; i < reps + 1; i++) {
                if (i == 1) t0 = now_s();
                if (gpuml_conv2d_backward_filter(ctx, dw, x, dy, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
            }
            t[2] = (now_s() - t0) / reps;
            for (i = 0; i < reps + 1; i++) {   /* memcpy of the same bytes (half each way: the pass reads one tensor, writes the other) */
                if (i == 1) t0 = now_s();
                memcpy(m1, m0, bytes / 2);
                memcpy(m0 + bytes / 2, m1 + bytes / 2, bytes / 2);
            }
            t[3] = (now_s() - t0) / reps;
            for (i = 0; i < 4; i++) if (rd == 0 || t[i] < best[l][i]) best[l][i] = t[i];
            free(m0); free(m1);
            gpuml_tensor_free(x); gpuml_tensor_free(dx); gpuml_tensor_free(w); gpuml_tensor_free(dw);
            gpuml_tensor_free(y); gpuml_tensor_free(dy);
        }
    printf("layer (c h s)     fwd us  GB/s   bwd-data us  GB/s   bwd-filter us  GB/s   memcpy GB/s   fwd / bwdD / bwdF as a fraction of memcpy\n");
    for (l = 0; l < NL; l++) {
        const int C = L[l][0], H = L[l][1], S = L[l][2], P = (int)gpuml_conv2d_out_dim(H, 3, S, 1, 1, 1);
        const double gb = 4e-9 * (double)(N * C * ((int64_t)H * H + (int64_t)P * P)), mc = gb / best[l][3];
        printf("%4d %3d %d   %9.1f %6.1f   %9.1f %6.1f   %11.1f %6.1f   %9.1f      %.2f / %.2f / %.2f\n", C, H, S,
               1e6 * best[l][0], gb / best[l][0], 1e6 * best[l][1], gb / best[l][1], 1e6 * best[l][2], gb / best[l][2], mc,
               gb / best[l][0] / mc, gb / best[l][1] / mc, gb / best[l][2] / mc);
    }
    gpuml_shutdown(ctx);
    return 0;
}
