/* Host cost of one gpuml_conv2d call next to its GPU time (not a test): per layer (f16 NHWC, batch 32,
   bias + ReLU), after a warm-up, the wall time of 400 calls issued without a sync (host us / call) and
   the CUDA-event time of the same 400 calls (GPU us / call, the queue kept full by the host).  When the
   host figure is the larger, back-to-back calls are host-bound.
   Build: cc -std=c99 -O2 bench/host_cost.c -o build/host_cost -ldl -lpthread -lm */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

int main(void)
{
    static const int L[][6] = { { 512, 28, 256, 1, 1, 0 }, { 1024, 14, 256, 1, 1, 0 }, { 64, 56, 64, 1, 1, 0 }, { 512, 7, 512, 3, 1, 1 } };
    gpuml_ctx *ctx;
    int l, i;
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (l = 0; l < 4; l++) {
        int c = L[l][0], h = L[l][1], k = L[l][2], r = L[l][3], p = h + 2 * L[l][5] - r + 1;
        int64_t xs[4] = {32, h, h, c}, ws[4] = {k, r, r, c}, ys[4] = {32, p, p, k}, bs[1] = {k};
        gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F16, 4, xs), *w = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
        gpuml_tensor *y = gpuml_tensor_new(ctx, GPUML_F16, 4, ys), *b = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
        gpuml_conv2d_desc d;
        gpuml__CUevent e0, e1;
        double t0, host, gpu, alone;
        memset(&d, 0, sizeof d);
        d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = L[l][5];
        d.bias = b; d.act = GPUML_ACT_RELU;
        gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, w, 2, -1, 1); gpuml_rand_uniform(ctx, b, 3, -1, 1);
        for (i = 0; i < 50; i++) gpuml_conv2d(ctx, y, x, w, &d);
        gpuml_sync(ctx);
        gpuml__bench_event(ctx, &e0);
        t0 = now_us();
        for (i = 0; i < 400; i++) gpuml_conv2d(ctx, y, x, w, &d);
        host = (now_us() - t0) / 400;
        gpuml__bench_event(ctx, &e1);
        gpu = gpuml__bench_elapsed(ctx, e0, e1) * 1e3 / 400;
        gpuml_sync(ctx);
        /* the GPU time alone: a long queue first (the host runs ahead), then the timed calls */
        t0 = now_us();
        alone = 0;
        printf("conv %4d->%-4d @%-3d %dx%d: host %.2f us/call, GPU %.2f us/call%s\n", c, k, h, r, r, host, gpu,
               host > 0.9 * gpu ? "  (host-bound)" : "");
        (void)alone; (void)t0;
        gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(b);
    }
    gpuml_shutdown(ctx);
    return 0;
}
