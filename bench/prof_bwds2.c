/* Backward data of ResNet-50's strided 3x3 layers (batch 32; f16 NHWC, then f32 NCHW with
   allow_tf32), one warm-up call and one profiled call each, for a kernel-by-kernel breakdown of
   the route GPUML_CONV_BWD_SUB picks (on: the phase route, off: the zero-upsampled one):
     GPUML_CONV_BWD_SUB=on ncu --clock-control none --metrics gpu__time_duration.sum --csv build/prof_bwds2
   The markers "layer ..." go to stdout between the calls (ncu's CSV follows at the end). */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    static const int L[3][3] = { { 128, 56, 128 }, { 256, 28, 256 }, { 512, 14, 512 } };
    gpuml_ctx *ctx;
    int l, v, it;
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (v = 0; v < 2; v++)
        for (l = 0; l < 3; l++) {
            const int c = L[l][0], h = L[l][1], k = L[l][2], p = h / 2;
            const gpuml_dtype dt = v ? GPUML_F32 : GPUML_F16;
            int64_t xs[4] = {32, h, h, c}, ws[4] = {k, 3, 3, c}, ys[4] = {32, p, p, k};
            gpuml_tensor *w, *dy, *dx;
            gpuml_conv2d_desc d;
            if (v) { xs[1] = c; xs[2] = xs[3] = h; ws[1] = c; ws[2] = ws[3] = 3; ys[1] = k; ys[2] = ys[3] = p; }
            w = gpuml_tensor_new(ctx, dt, 4, ws); dy = gpuml_tensor_new(ctx, dt, 4, ys); dx = gpuml_tensor_new(ctx, dt, 4, xs);
            memset(&d, 0, sizeof d);
            d.stride[0] = d.stride[1] = 2;
            d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1;
            d.layout = v ? GPUML_LAYOUT_NCHW : GPUML_LAYOUT_NHWC;
            d.allow_tf32 = v;
            gpuml_rand_uniform(ctx, w, 2, -1, 1); gpuml_rand_uniform(ctx, dy, 3, -1, 1);
            for (it = 0; it < 2; it++)
                if (gpuml_conv2d_backward_data(ctx, dx, dy, w, &d)) printf("error: %s\n", gpuml_last_error(ctx));
            gpuml_sync(ctx);
            printf("layer %s c%d %d k%d done\n", v ? "tf32 NCHW" : "f16 NHWC", c, h, k);
            gpuml_tensor_free(w); gpuml_tensor_free(dy); gpuml_tensor_free(dx);
        }
    gpuml_shutdown(ctx);
    return 0;
}
