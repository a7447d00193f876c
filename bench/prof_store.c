/* Dev harness (issue 5, 2026-11-29): what the write-bound 1x1 layer 64->256 @56 (f16 NHWC, batch 32:
   12.8 MB of x in, 51.4 MB of y out) costs through each route, next to the device's own write-bound
   streams in the same process: gpuml_conv2d with and without bias / ReLU; the wgmma kernel called
   directly (gpuml__conv2d_sm90_cfg, every configuration, the TMA-store and slab epilogues); a fill
   of y alone (write only); a broadcast add with the layer's traffic (y[M][4][64] = a[M][1][64] +
   b[4][64]: 12.8 MB in, 51.4 MB out); a copy.  Two rotated copies of x and y (128 MB > L2).
   Build: cc -std=c99 -O2 bench/prof_store.c -o build/prof_store -ldl -lpthread -lm */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include "bench_timing.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 2
static gpuml_ctx *ctx;
static gpuml_tensor *X[NC], *Y[NC], *W, *B, *A3[NC], *Y3[NC], *B3, *CP[NC], *CQ[NC];
static gpuml_tensor *SX[NC], *SY[NC], *SW, *SB, *MA[NC], *MB, *MC[NC], *ZY[NC], *ZA[NC];
static gpuml_conv2d_desc D;
static gpuml_matmul_desc MD;
static gpuml__conv_problem P;
static int mode, cfg;
static gpuml_status bad;

static void run_n(void *arg, int n)
{
    int i;
    (void)arg;
    for (i = 0; i < n; i++) {
        const int c = i % NC;
        gpuml_status st = GPUML_SUCCESS;
        switch (mode) {
        case 0: st = gpuml_conv2d(ctx, Y[c], X[c], W, &D); break;
        case 1: P.x = X[c]; P.y = Y[c]; st = gpuml__conv2d_sm90_cfg(ctx, &P, cfg, 1); break;
        case 2: st = gpuml_fill(ctx, Y[c], 0.5); break;
        case 3: st = gpuml_add(ctx, Y3[c], A3[c], B3); break;
        case 4: st = gpuml_copy(ctx, CQ[c], CP[c]); break;
        case 5: st = gpuml_conv2d(ctx, SY[c], SX[c], SW, &D); break;
        case 6: st = gpuml_matmul(ctx, MC[c], MA[c], MB, &MD); break;
        case 7: st = gpuml_add(ctx, ZY[c], ZA[c], Y[c]); break;
        }
        if (st != GPUML_SUCCESS) bad = st;
    }
}
static void line(const char *name, double bytes)
{
    double t;
    bad = GPUML_SUCCESS;
    run_n(NULL, 4);
    if (gpuml_sync(ctx) != GPUML_SUCCESS || bad != GPUML_SUCCESS) {
        printf("%-44s  declined: %s\n", name, gpuml_last_error(ctx));
        gpuml_clear_error(ctx);
        return;
    }
    t = bench_gpu_seconds(ctx, run_n, NULL, 20);
    printf("%-44s %8.2f us %8.1f GB/s\n", name, t * 1e6, bytes / t * 1e-9);
}
int main(int argc, char **argv)
{
    static const char *const an[4] = { "none", "relu", "gelu", "silu" };
    int64_t xs[4] = { 32, 56, 56, 64 }, ws[4] = { 256, 1, 1, 64 }, ys[4] = { 32, 56, 56, 256 }, bs[1] = { 256 };
    int64_t as3[3] = { 32 * 56 * 56, 1, 64 }, ys3[3] = { 32 * 56 * 56, 4, 64 }, bs3[3] = { 1, 4, 64 }, cs[1] = { 32 * 56 * 56 * 160 };
    const double M = 32.0 * 56 * 56, xb = M * 64 * 2, yb = M * 256 * 2;
    gpuml_desc desc;
    char name[96];
    int i, bias, act;
    memset(&desc, 0, sizeof desc);
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("needs a GPU\n"); return 0; }
    printf("device: %s\n", gpuml_device_name(ctx));
    W = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
    B = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
    B3 = gpuml_tensor_new(ctx, GPUML_F16, 3, bs3);
    gpuml_rand_uniform(ctx, W, 1, -0.1, 0.1);
    gpuml_rand_uniform(ctx, B, 2, -1, 1);
    gpuml_rand_uniform(ctx, B3, 3, -1, 1);
    for (i = 0; i < NC; i++) {
        X[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, xs); Y[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, ys);
        A3[i] = gpuml_tensor_new(ctx, GPUML_F16, 3, as3); Y3[i] = gpuml_tensor_new(ctx, GPUML_F16, 3, ys3);
        CP[i] = gpuml_tensor_new(ctx, GPUML_F32, 1, cs); CQ[i] = gpuml_tensor_new(ctx, GPUML_F32, 1, cs);   /* 2 x 64 MB */
        if (!X[i] || !Y[i] || !A3[i] || !Y3[i] || !CP[i] || !CQ[i]) { printf("alloc: %s\n", gpuml_last_error(ctx)); return 1; }
        gpuml_rand_uniform(ctx, X[i], 10 + (uint64_t)i, -1, 1);
        gpuml_rand_uniform(ctx, A3[i], 20 + (uint64_t)i, -1, 1);
        gpuml_rand_uniform(ctx, CP[i], 30 + (uint64_t)i, -1, 1);
    }
    if (argc > 1 && strcmp(argv[1], "ncu") == 0) {   /* for a profiler: the benchmark's call, bias + ReLU, 8 times */
        memset(&D, 0, sizeof D);
        D.stride[0] = D.stride[1] = 1; D.groups = 1; D.bias = B; D.act = GPUML_ACT_RELU;
        mode = 0; run_n(NULL, 8);
        gpuml_sync(ctx);
        gpuml_shutdown(ctx);
        return 0;
    }
    mode = 4; line("copy 64 MB (read + write)", 2.0 * 4 * (double)cs[0]);
    mode = 2; line("fill y (write 51.4 MB)", yb);
    mode = 3; line("add y[M][4][64] = a[M][1][64] + b[4][64]", xb + yb);
    for (i = 0; i < NC; i++) {
        ZY[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, ys); ZA[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, ys);
        gpuml_rand_uniform(ctx, ZA[i], 40 + (uint64_t)i, -1, 1);
        gpuml_rand_uniform(ctx, Y[i], 50 + (uint64_t)i, -1, 1);
    }
    mode = 7; line("add y = a + b, all [M][256] f16", 3 * yb);
    for (i = 0; i < NC; i++) { gpuml_tensor_free(ZY[i]); gpuml_tensor_free(ZA[i]); }
    {   /* the stem (7x7/2, C = 3) and matmuls, with and without a bias */
        int64_t sxs[4] = { 32, 224, 224, 3 }, sws[4] = { 64, 7, 7, 3 }, sys[4] = { 32, 112, 112, 64 }, sbs[1] = { 64 };
        static const int64_t mm[2][3] = { { 32 * 56 * 56, 256, 64 }, { 8192, 4096, 4096 } };
        int m;
        SW = gpuml_tensor_new(ctx, GPUML_F16, 4, sws); SB = gpuml_tensor_new(ctx, GPUML_F32, 1, sbs);
        gpuml_rand_uniform(ctx, SW, 60, -0.1, 0.1); gpuml_rand_uniform(ctx, SB, 61, -1, 1);
        for (i = 0; i < NC; i++) {
            SX[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, sxs); SY[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, sys);
            gpuml_rand_uniform(ctx, SX[i], 62 + (uint64_t)i, -1, 1);
        }
        mode = 5;
        for (bias = 0; bias < 2; bias++) {
            memset(&D, 0, sizeof D);
            D.stride[0] = D.stride[1] = 2; D.pad[0] = D.pad[1] = D.pad[2] = D.pad[3] = 3; D.groups = 1;
            D.bias = bias ? SB : NULL; D.act = GPUML_ACT_RELU;
            snprintf(name, sizeof name, "stem 7x7/2 f16 NHWC bias %d relu", bias);
            line(name, 2.0 * 32 * (224.0 * 224 * 3 + 112.0 * 112 * 64));
        }
        for (i = 0; i < NC; i++) { gpuml_tensor_free(SX[i]); gpuml_tensor_free(SY[i]); }
        mode = 6;
        for (m = 0; m < 2; m++) {
            int64_t as[2] = { mm[m][0], mm[m][2] }, bs2[2] = { mm[m][2], mm[m][1] }, csh[2] = { mm[m][0], mm[m][1] }, bb[1] = { mm[m][1] };
            gpuml_tensor *mbias = gpuml_tensor_new(ctx, GPUML_F32, 1, bb);
            MB = gpuml_tensor_new(ctx, GPUML_BF16, 2, bs2);
            gpuml_rand_uniform(ctx, MB, 70, -0.1, 0.1); gpuml_rand_uniform(ctx, mbias, 71, -1, 1);
            for (i = 0; i < NC; i++) {
                MA[i] = gpuml_tensor_new(ctx, GPUML_BF16, 2, as); MC[i] = gpuml_tensor_new(ctx, GPUML_BF16, 2, csh);
                gpuml_rand_uniform(ctx, MA[i], 72 + (uint64_t)i, -1, 1);
            }
            for (bias = 0; bias < 2; bias++) {
                memset(&MD, 0, sizeof MD);
                MD.bias = bias ? mbias : NULL;
                snprintf(name, sizeof name, "matmul bf16 %lldx%lldx%lld bias %d", (long long)mm[m][0], (long long)mm[m][1], (long long)mm[m][2], bias);
                line(name, 2.0 * (double)(mm[m][0] * mm[m][2] + mm[m][2] * mm[m][1] + mm[m][0] * mm[m][1]));
            }
            for (i = 0; i < NC; i++) { gpuml_tensor_free(MA[i]); gpuml_tensor_free(MC[i]); }
            gpuml_tensor_free(MB); gpuml_tensor_free(mbias);
        }
    }
    mode = 0;
    for (bias = 0; bias < 2; bias++)
        for (act = 0; act < 2; act++) {
            memset(&D, 0, sizeof D);
            D.stride[0] = D.stride[1] = 1; D.groups = 1;
            D.bias = bias ? B : NULL; D.act = (gpuml_activation)act;
            snprintf(name, sizeof name, "gpuml_conv2d bias %d act %s", bias, an[act]);
            line(name, xb + yb);
        }
    mode = 1;
    memset(&P, 0, sizeof P);
    P.n = 32; P.h = P.w = P.p = P.q = 56; P.c = 64; P.k = 256; P.r = P.s = 1;
    P.stride_h = P.stride_w = P.dil_h = P.dil_w = P.groups = 1;
    P.wt = W;
    for (bias = 0; bias < 2; bias++)
        for (cfg = -1; cfg < GPUML__CW_NCFG; cfg++) {
            int f;
            for (f = 0; f < 2; f++) {
                static const int fl[2] = { 0, GPUML__CW_NO_TMA_Y };
                static const char *const fn[2] = { "", " slab" };
                const int c0 = cfg;
                if (cfg < 0 && f) continue;
                P.bias = bias ? B : NULL; P.act = bias ? GPUML_ACT_RELU : GPUML_ACT_NONE;
                if (cfg >= 0) cfg |= fl[f];
                snprintf(name, sizeof name, "sm90 cfg %2d%s bias+relu %d", c0, fn[f], bias);
                line(name, xb + yb);
                cfg = c0;
            }
        }
    gpuml_shutdown(ctx);
    return 0;
}
