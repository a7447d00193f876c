/* f32 conv layers (batch 32, bias + ReLU), NCHW and NHWC, tf32 (allow_tf32) and f32 (3xTF32 or
   the GEMM path, as AUTO picks), two calls each after a warm-up, for a kernel-by-kernel
   breakdown under ncu (where the NCHW layers' time goes beyond their bytes):
     ncu --clock-control none --metrics gpu__time_duration.sum --csv build/prof_conv_f32
   Prints one line per call ("mark L layout tf32") before it, so the CSV can be split. */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    /* c, h, k, r, stride, pad */
    static const int L[5][6] = { { 64, 56, 64, 1, 1, 0 }, { 256, 56, 64, 1, 1, 0 }, { 64, 56, 64, 3, 1, 1 },
                                 { 1024, 14, 256, 1, 1, 0 }, { 256, 56, 512, 1, 2, 0 } };
    gpuml_ctx *ctx;
    int l, it, lay, t;
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (l = 0; l < 5; l++)
        for (lay = 0; lay < 2; lay++)
            for (t = 0; t < 2; t++) {
                int c = L[l][0], h = L[l][1], k = L[l][2], r = L[l][3], st = L[l][4], pd = L[l][5];
                int p = (h + 2 * pd - r) / st + 1;
                int64_t xs[4] = {32, h, h, c}, ws[4] = {k, r, r, c}, ys[4] = {32, p, p, k}, bs[1] = {k};
                int64_t xc[4] = {32, c, h, h}, wc[4] = {k, c, r, r}, yc[4] = {32, k, p, p};
                gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F32, 4, lay ? xc : xs);
                gpuml_tensor *w = gpuml_tensor_new(ctx, GPUML_F32, 4, lay ? wc : ws);
                gpuml_tensor *y = gpuml_tensor_new(ctx, GPUML_F32, 4, lay ? yc : ys);
                gpuml_tensor *b = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
                gpuml_conv2d_desc d;
                memset(&d, 0, sizeof d);
                d.stride[0] = d.stride[1] = st;
                d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = pd;
                d.layout = lay ? GPUML_LAYOUT_NCHW : GPUML_LAYOUT_NHWC;
                d.bias = b; d.act = GPUML_ACT_RELU; d.allow_tf32 = t;
                gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, w, 2, -1, 1); gpuml_rand_uniform(ctx, b, 3, -1, 1);
                for (it = 0; it < 3; it++)
                    if (gpuml_conv2d(ctx, y, x, w, &d)) printf("error: %s\n", gpuml_last_error(ctx));
                gpuml_sync(ctx);
                printf("done c%d h%d k%d r%d s%d %s %s\n", c, h, k, r, st, lay ? "NCHW" : "NHWC", t ? "tf32" : "f32");
                gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(b);
            }
    gpuml_shutdown(ctx);
    return 0;
}
