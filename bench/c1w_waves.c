/* tf32 NCHW 1x1 conv (allow_tf32, bias + ReLU) at any batch: us a call and TFLOP/s, to see how the
   time follows the tile count (waves of blocks) -- not a test.  Three input / output sets rotated.
   Build: cc -std=c99 -O2 -I. bench/c1w_waves.c -o build/c1w_waves -ldl -lpthread -lm
   Run:   build/c1w_waves N C H K [N C H K]...   (GPUML_CONV_1X1W_CFG etc. as the library reads them)
   bench/c1w_waves_torch.py prints the same lines for cuDNN. */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include "bench_timing.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gpuml_ctx *ctx;
typedef struct { gpuml_tensor *x[3], *y[3], *w, *b; gpuml_conv2d_desc d; } job;
static void run_n(void *arg, int n)
{
    job *j = (job *)arg;
    int i;
    for (i = 0; i < n; i++)
        if (gpuml_conv2d(ctx, j->y[i % 3], j->x[i % 3], j->w, &j->d) != GPUML_SUCCESS) { printf("error: %s\n", gpuml_last_error(ctx)); return; }
}
int main(int argc, char **argv)
{
    int a, i;
    if (argc < 5 || (argc - 1) % 4) { fprintf(stderr, "usage: c1w_waves N C H K [N C H K]...\n"); return 2; }
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 0; }
    for (a = 1; a + 3 < argc; a += 4) {
        int64_t nb = atoi(argv[a]), c = atoi(argv[a + 1]), h = atoi(argv[a + 2]), k = atoi(argv[a + 3]);
        int64_t xc[4] = {nb, c, h, h}, wc[4] = {k, c, 1, 1}, yc[4] = {nb, k, h, h}, bs[1] = {k};
        job j;
        double t, fl = 2.0 * (double)nb * h * h * k * c;
        memset(&j, 0, sizeof j);
        for (i = 0; i < 3; i++) {
            j.x[i] = gpuml_tensor_new(ctx, GPUML_F32, 4, xc); j.y[i] = gpuml_tensor_new(ctx, GPUML_F32, 4, yc);
            gpuml_rand_uniform(ctx, j.x[i], 1 + (uint64_t)i, -1, 1);
        }
        j.w = gpuml_tensor_new(ctx, GPUML_F32, 4, wc); j.b = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
        gpuml_rand_uniform(ctx, j.w, 7, -1, 1); gpuml_rand_uniform(ctx, j.b, 8, -1, 1);
        j.d.layout = GPUML_LAYOUT_NCHW; j.d.allow_tf32 = 1; j.d.bias = j.b; j.d.act = GPUML_ACT_RELU;
        run_n(&j, 6);
        gpuml_sync(ctx);
        t = bench_gpu_seconds(ctx, run_n, &j, 20);
        printf("c1w n%lld c%lld h%lld k%lld: %8.2f us %7.1f TFLOP/s\n", (long long)nb, (long long)c, (long long)h, (long long)k, t * 1e6, fl / t * 1e-12);
        for (i = 0; i < 3; i++) { gpuml_tensor_free(j.x[i]); gpuml_tensor_free(j.y[i]); }
        gpuml_tensor_free(j.w); gpuml_tensor_free(j.b);
    }
    gpuml_shutdown(ctx);
    return 0;
}
