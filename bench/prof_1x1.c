/* The tf32 NCHW 1x1 conv (allow_tf32: gpuml_conv_1x1w on sm_90, gpuml_conv_1x1s elsewhere or with
   GPUML_CONV_1X1W=off) on ResNet-50 layers at batch 32, bias + ReLU, four calls each (the first
   compiles), for a profiler:
     ncu -k regex:gpuml_conv_1x1 --launch-skip 3 --launch-count 1 --section SpeedOfLight ... build/prof_1x1 [C H K]...
   Layers: the C H K triples given, else c512 28 k128 (compute side) and c256 56 k64 (bytes side).
   (bench/NOTES_conv.md profiled the wgmma kernel with `512 28 256 1024 14 256`.) */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int L[8][3] = { { 512, 28, 128 }, { 256, 56, 64 } };   /* c, h, k */
    int nl = 2, l, it;
    gpuml_ctx *ctx;
    if (argc > 1) {
        if ((argc - 1) % 3 || argc - 1 > 24) { fprintf(stderr, "usage: prof_1x1 [C H K]... (up to 8 layers)\n"); return 2; }
        for (nl = 0; nl < 8 && 1 + 3 * nl + 2 < argc; nl++)
            for (it = 0; it < 3; it++) L[nl][it] = atoi(argv[1 + 3 * nl + it]);
        for (l = 0; l < nl; l++)
            if (L[l][0] < 1 || L[l][1] < 1 || L[l][2] < 1) { fprintf(stderr, "usage: prof_1x1 [C H K]...\n"); return 2; }
    }
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (l = 0; l < nl; l++) {
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
