/* Dev harness (lead, 2026-11-22): ResNet-50's stride-1 1x1 layers (C >= 512 since session 30), f16 NHWC, bias + ReLU,
   through each forced path (AUTO, GEMM = the wgmma matmul, IGEMM = mma.sync implicit GEMM, WGMMA =
   the Hopper implicit GEMM), 4 copies rotated (> L2), windows of >= 3 ms, median of 3.
   Build: cc -std=c99 -O2 bench/conv_1x1_paths.c -o conv_1x1_paths -ldl -lpthread -lm */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
static gpuml_ctx *ctx;
static double run_paths(gpuml_tensor **y, gpuml_tensor **x, gpuml_tensor *w, gpuml_conv2d_desc *d)
{
    double ws[3], t = 0;
    int k, i, n = 10;
    for (i = 0; i < 8; i++) if (gpuml_conv2d(ctx, y[i % 4], x[i % 4], w, d) != GPUML_SUCCESS) { gpuml_clear_error(ctx); return -1; }
    gpuml_sync(ctx);
    for (k = -1; k < 3; k++) {
        gpuml__CUevent a, b;
        gpuml__bench_event(ctx, &a);
        for (i = 0; i < n; i++) gpuml_conv2d(ctx, y[i % 4], x[i % 4], w, d);
        gpuml__bench_event(ctx, &b);
        t = gpuml__bench_elapsed(ctx, a, b) * 1e-3 / n;
        if (k < 0) n = 3e-3 / t > n ? (int)(3e-3 / t) : n; else ws[k] = t;
    }
    if (ws[0] > ws[1]) { t = ws[0]; ws[0] = ws[1]; ws[1] = t; }
    if (ws[1] > ws[2]) { t = ws[1]; ws[1] = ws[2]; ws[2] = t; }
    if (ws[0] > ws[1]) { t = ws[0]; ws[0] = ws[1]; ws[1] = t; }
    return ws[1];
}
int main(void)
{
    static const int L[][3] = { { 64, 56, 64 }, { 64, 56, 256 }, { 256, 56, 64 }, { 256, 56, 128 }, { 128, 28, 512 }, { 256, 14, 1024 },
                                { 512, 28, 128 }, { 512, 28, 256 }, { 1024, 14, 256 }, { 1024, 14, 512 }, { 512, 7, 2048 }, { 2048, 7, 512 } };
    static const char *pn[5] = { "auto", "direct", "gemm", "igemm", "wgmma" };
    unsigned l;
    gpuml_desc desc;
    memset(&desc, 0, sizeof desc);
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("needs a GPU\n"); return 0; }
    for (l = 0; l < sizeof L / sizeof L[0]; l++) {
        int64_t xs[4] = { 32, L[l][1], L[l][1], L[l][0] }, wsh[4] = { L[l][2], 1, 1, L[l][0] }, ys[4] = { 32, L[l][1], L[l][1], L[l][2] }, bs[1] = { L[l][2] };
        gpuml_tensor *x[4], *y[4], *w = gpuml_tensor_new(ctx, GPUML_F16, 4, wsh), *bias = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
        double flop = 2.0 * 32 * L[l][1] * L[l][1] * L[l][0] * L[l][2], bytes = 2.0 * 32 * L[l][1] * L[l][1] * (L[l][0] + L[l][2]);
        int i, p;
        gpuml_rand_uniform(ctx, w, 1, -1, 1); gpuml_rand_uniform(ctx, bias, 2, -1, 1);
        for (i = 0; i < 4; i++) { x[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, xs); y[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, ys); gpuml_rand_uniform(ctx, x[i], 3 + i, -1, 1); }
        for (p = 0; p < 5; p++) {
            gpuml_conv2d_desc d;
            double t;
            if (p == 1) continue;
            memset(&d, 0, sizeof d);
            d.bias = bias; d.act = GPUML_ACT_RELU; d.path = (gpuml_conv_path)p;
            t = run_paths(y, x, w, &d);
            if (t < 0) printf("1x1 c%-4d %2d k%-4d %-6s n/a\n", L[l][0], L[l][1], L[l][2], pn[p]);
            else printf("1x1 c%-4d %2d k%-4d %-6s %7.1f us %6.1f TFLOP/s %7.1f GB/s\n", L[l][0], L[l][1], L[l][2], pn[p], t * 1e6, flop / t * 1e-12, bytes / t * 1e-9);
        }
        for (i = 0; i < 4; i++) { gpuml_tensor_free(x[i]); gpuml_tensor_free(y[i]); }
        gpuml_tensor_free(w); gpuml_tensor_free(bias);
    }
    gpuml_shutdown(ctx);
    return 0;
}
