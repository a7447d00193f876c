/* A sample of the profiler's output (a demo, not a test): a few steps of an MLP-like block
   with the profiler on, a graph of small ops, the summary table on stdout and a Chrome trace.
   Usage: profile_sample [trace.json]   (GPU if there is one, else the CPU with smaller sizes) */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>

typedef struct small { gpuml_tensor *a, *b; } small;
static void small_ops(gpuml_ctx *ctx, void *user)
{
    small *s = (small *)user;
    int i;
    for (i = 0; i < 30; i++) { gpuml_add(ctx, s->b, s->b, s->a); gpuml_silu(ctx, s->b, s->b); }
}

int main(int argc, char **argv)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    int gpu, step;
    int64_t n, sx[2], sw[2], sv[1] = {4096}, big[1];
    gpuml_tensor *x, *w, *h, *y, *lw, *lb, *f32a, *f32b;
    gpuml_graph *g = NULL;
    small s;
    memset(&d, 0, sizeof d);
    d.profile = 1;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
    gpu = gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA;
    n = gpu ? 4096 : 512;
    sx[0] = n; sx[1] = n; sw[0] = n; sw[1] = n; big[0] = gpu ? (int64_t)64 << 20 : (int64_t)1 << 22;
    x = gpuml_tensor_new(ctx, GPUML_BF16, 2, sx);
    w = gpuml_tensor_new(ctx, GPUML_BF16, 2, sw);
    h = gpuml_tensor_new(ctx, GPUML_BF16, 2, sx);
    y = gpuml_tensor_new(ctx, GPUML_BF16, 2, sx);
    lw = gpuml_tensor_new(ctx, GPUML_BF16, 1, sx + 1);
    lb = gpuml_tensor_new(ctx, GPUML_BF16, 1, sx + 1);
    f32a = gpuml_tensor_new(ctx, GPUML_F32, 1, big);
    f32b = gpuml_tensor_new(ctx, GPUML_F32, 1, big);
    s.a = gpuml_tensor_new(ctx, GPUML_F32, 1, sv);
    s.b = gpuml_tensor_new(ctx, GPUML_F32, 1, sv);
    gpuml_rand_normal(ctx, x, 1, 0, 1);
    gpuml_rand_normal(ctx, w, 2, 0, 0.02);
    gpuml_fill(ctx, lw, 1.0); gpuml_fill(ctx, lb, 0.0);
    gpuml_rand_uniform(ctx, f32a, 3, -1, 1);
    gpuml_rand_uniform(ctx, s.a, 4, -1, 1); gpuml_fill(ctx, s.b, 0.0);
    gpuml_graph_capture(ctx, small_ops, &s, &g);
    for (step = 0; step < 5; step++) {
        gpuml_matmul(ctx, h, x, w, NULL);
        gpuml_gelu(ctx, h, h);
        gpuml_layernorm(ctx, y, h, lw, lb, 1e-5);
        gpuml_softmax(ctx, h, y, 1);
        gpuml_add(ctx, x, x, h);
        gpuml_copy(ctx, f32b, f32a);
        gpuml_graph_launch(ctx, g);
    }
    gpuml_sync(ctx);
    gpuml_profile_print(ctx, stdout);
    if (argc > 1) {
        if (gpuml_profile_write_trace(ctx, argv[1]) == GPUML_SUCCESS) printf("trace: %s (open in https://ui.perfetto.dev)\n", argv[1]);
        else printf("%s\n", gpuml_last_error(ctx));
    }
    gpuml_graph_free(g);
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(h); gpuml_tensor_free(y);
    gpuml_tensor_free(lw); gpuml_tensor_free(lb); gpuml_tensor_free(f32a); gpuml_tensor_free(f32b);
    gpuml_tensor_free(s.a); gpuml_tensor_free(s.b);
    gpuml_shutdown(ctx);
    return 0;
}
