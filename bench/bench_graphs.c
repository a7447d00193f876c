/* CUDA graphs vs eager launches (a benchmark, not a test): a chain of 100 small ops
   (add, scale, gelu on n f32 elements) issued eagerly, and the same chain captured once and
   replayed.  Device time from events around R back-to-back chains after a warm-up, per op.
   Also the profiler's cost per op when it is on (eager), and a check that the replay gives
   the eager result bit for bit.  Usage: bench_graphs [n ...]   (default 4096 65536) */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOPS 100
#define REPS 200

typedef struct chain { gpuml_tensor *x, *y; } chain;
static void chain_fn(gpuml_ctx *ctx, void *user)
{
    chain *c = (chain *)user;
    int i;
    for (i = 0; i < NOPS; i++) {
        switch (i % 3) {
        case 0: gpuml_add(ctx, c->y, c->y, c->x); break;
        case 1: gpuml_mul_scalar(ctx, c->y, c->y, 0.5); break;
        default: gpuml_gelu(ctx, c->y, c->y); break;
        }
    }
}

static double time_us(gpuml_ctx *ctx, void (*body)(gpuml_ctx *, void *), void *arg, int reps)
{
    gpuml__CUevent e0, e1;
    int r;
    body(ctx, arg);   /* warm-up (JIT, first launch) */
    gpuml_sync(ctx);
    gpuml__bench_event(ctx, &e0);
    for (r = 0; r < reps; r++) body(ctx, arg);
    gpuml__bench_event(ctx, &e1);
    return gpuml__bench_elapsed(ctx, e0, e1) * 1e3;
}
typedef struct glaunch { gpuml_graph *g; } glaunch;
static void launch_fn(gpuml_ctx *ctx, void *arg) { gpuml_graph_launch(ctx, ((glaunch *)arg)->g); }

static int run(gpuml_ctx *ctx, int64_t n)
{
    chain c;
    glaunch gl;
    int64_t sh[1];
    float *h = (float *)malloc(sizeof(float) * (size_t)n);
    unsigned char *ey = (unsigned char *)malloc(4 * (size_t)n), *gy = (unsigned char *)malloc(4 * (size_t)n);
    double eager, graph, prof_on;
    int64_t i;
    sh[0] = n;
    c.x = gpuml_tensor_new(ctx, GPUML_F32, 1, sh);
    c.y = gpuml_tensor_new(ctx, GPUML_F32, 1, sh);
    gpuml_rand_uniform(ctx, c.x, 1, -1, 1);
    for (i = 0; i < n; i++) h[i] = (float)((i % 17) * 0.1 - 0.8);
    /* bit-identical check: eager and replay from the same start */
    gpuml_tensor_write(c.y, h, 4 * (size_t)n);
    chain_fn(ctx, &c);
    gpuml_tensor_read(c.y, ey, 4 * (size_t)n);
    if (gpuml_graph_capture(ctx, chain_fn, &c, &gl.g) != GPUML_SUCCESS) { printf("capture: %s\n", gpuml_last_error(ctx)); return 1; }
    gpuml_tensor_write(c.y, h, 4 * (size_t)n);
    gpuml_graph_launch(ctx, gl.g);
    gpuml_tensor_read(c.y, gy, 4 * (size_t)n);
    eager = time_us(ctx, chain_fn, &c, REPS) / (REPS * NOPS);
    graph = time_us(ctx, launch_fn, &gl, REPS) / (REPS * NOPS);
    gpuml_profile_enable(ctx, 1);
    prof_on = time_us(ctx, chain_fn, &c, REPS / 4) / (REPS / 4 * NOPS);
    gpuml_profile_enable(ctx, 0);
    gpuml_profile_reset(ctx);
    printf("%-28s n=%-8lld eager %6.2f us/op   graph %6.2f us/op   (%.1fx)   eager+profiler %6.2f us/op   replay %s eager\n",
           gpuml_device_name(ctx), (long long)n, eager, graph, eager / graph, prof_on,
           memcmp(ey, gy, 4 * (size_t)n) == 0 ? "bit-identical to" : "DIFFERS from");
    gpuml_graph_free(gl.g);
    gpuml_tensor_free(c.x); gpuml_tensor_free(c.y);
    free(h); free(ey); free(gy);
    return 0;
}

int main(int argc, char **argv)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    int i, rc = 0;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("needs a GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 0; }
    printf("chain of %d ops (add, mul_scalar, gelu; f32), %d chains timed with events after a warm-up\n", NOPS, REPS);
    if (argc > 1) for (i = 1; i < argc; i++) rc |= run(ctx, atoll(argv[i]));
    else { rc |= run(ctx, 4096); rc |= run(ctx, 65536); }
    gpuml_shutdown(ctx);
    return rc;
}
