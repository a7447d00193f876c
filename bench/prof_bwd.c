/* One backward data and one backward filter call per layer (f16 NHWC, batch 32), after a
   warm-up call, for a kernel-by-kernel breakdown under ncu:
     ncu --clock-control none --metrics gpu__time_duration.sum --csv build/prof_bwd */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    static const int L[3][6] = { { 64, 56, 64, 3, 1, 1 }, { 256, 14, 256, 3, 1, 1 }, { 256, 56, 64, 1, 1, 0 } };
    gpuml_ctx *ctx;
    int l, it;
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (l = 0; l < 3; l++) {
        int c = L[l][0], h = L[l][1], k = L[l][2], r = L[l][3], p = h + 2 * L[l][5] - r + 1;
        int64_t xs[4] = {32, h, h, c}, ws[4] = {k, r, r, c}, ys[4] = {32, p, p, k};
        gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F16, 4, xs), *w = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
        gpuml_tensor *dy = gpuml_tensor_new(ctx, GPUML_F16, 4, ys), *dx = gpuml_tensor_new(ctx, GPUML_F16, 4, xs);
        gpuml_tensor *dw = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
        gpuml_conv2d_desc d;
        memset(&d, 0, sizeof d);
        d.stride[0] = d.stride[1] = 1;
        d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = L[l][5];
        gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, w, 2, -1, 1); gpuml_rand_uniform(ctx, dy, 3, -1, 1);
        for (it = 0; it < 2; it++) {
            if (gpuml_conv2d_backward_filter(ctx, dw, x, dy, &d) || gpuml_conv2d_backward_data(ctx, dx, dy, w, &d))
                printf("error: %s\n", gpuml_last_error(ctx));
        }
        gpuml_sync(ctx);
        printf("layer %d done\n", l);
        gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(dy); gpuml_tensor_free(dx); gpuml_tensor_free(dw);
    }
    gpuml_shutdown(ctx);
    return 0;
}
