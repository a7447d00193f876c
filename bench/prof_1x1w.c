/* The wgmma tf32 NCHW 1x1 kernel (gpuml_conv_1x1w, allow_tf32 on sm_90) on two ResNet-50 layers at
   batch 32 with bias + ReLU, four calls each (the first compiles), for a profiler:
     ncu -k regex:gpuml_conv_1x1w --launch-skip 3 --launch-count 1 --section SpeedOfLight ... build/prof_1x1w
   Layers: c512 28 k256 and c1024 14 k256 (the two furthest under cuDNN). */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>

int main(void)
{
    static const int L[2][3] = { { 512, 28, 256 }, { 1024, 14, 256 } };   /* c, h, k */
    gpuml_ctx *ctx;
    int l, it;
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (l = 0; l < 2; l++) {
        int c = L[l][0], h = L[l][1], k = L[l][2];
        int64_t xc[4] = {32, c, h, h}, wc[4] = {k, c, 1, 1}, yc[4] = {32, k, h, h}, bs[1] = {k};
        gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F32, 4, xc), *w = gpuml_tensor_new(ctx, GPUML_F32, 4, wc);
        gpuml_tensor *y = gpuml_tensor_new(ctx, GPUML_F32, 4, yc), *b = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
        gpuml_conv2d_desc d;
        memset(&d, 0, sizeof d);
        d.layout = GPUML_LAYOUT_NCHW; d.allow_tf32 = 1; d.bias = b; d.act = GPUML_ACT_RELU;
        gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, w, 2, -1, 1); gpuml_rand_uniform(ctx, b, 3, -1, 1);
        for (it = 0; it < 4; it++)
            if (gpuml_conv2d(ctx, y, x, w, &d) != GPUML_SUCCESS) printf("error: %s\n", gpuml_last_error(ctx));
        gpuml_sync(ctx);
        gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(b);
    }
    printf("done\n");
    gpuml_shutdown(ctx);
    return 0;
}
