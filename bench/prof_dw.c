/* Depthwise 3x3 probe (not a test; GPU only): for each MobileNetV2 layer at batch 32, the conv's
   time next to a device copy that moves the same bytes ((x + y) / 2 read and written, 4 rotating
   buffers, like the conv's 4 rotating jobs), each as a fraction of the large-copy roof measured in
   the same run: the copy at the layer's own size is the ceiling a memory-bound kernel of that size
   can reach (launch gap, ramp and tail included).  With a layer index, runs only that layer's conv
   'iters' times (for ncu).
   Build: cc -std=c99 -O2 -I. bench/prof_dw.c -o build/prof_dw -ldl -lpthread -lm
   Run:   build/prof_dw [f16|f32] [nhwc|nchw] [layer iters] */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include "bench_timing.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gpuml_ctx *ctx;
static const int MBV2[][3] = { { 32, 112, 1 }, { 96, 112, 2 }, { 144, 56, 1 }, { 144, 56, 2 }, { 192, 28, 1 }, { 384, 14, 1 },
                               { 576, 14, 1 }, { 960, 7, 1 } };
typedef struct job { gpuml_tensor *x, *w, *y; gpuml_conv2d_desc d; int copy; } job;
static gpuml_status run(job *j)
{
    return j->copy ? gpuml_copy(ctx, j->y, j->x) : gpuml_conv2d(ctx, j->y, j->x, j->w, &j->d);
}
/* n calls, the inputs rotating over the jobs */
struct rot { job *js; int nj; };
static void run_rot(void *arg, int n)
{
    const struct rot *r = (const struct rot *)arg;
    int i;
    for (i = 0; i < n; i++) run(&r->js[i % r->nj]);
}
/* seconds per call (bench/bench_timing.h), after a warm-up */
static double time_it(job *js, int nj)
{
    struct rot r;
    int i;
    for (i = 0; i < 2 * nj; i++)
        if (run(&js[i % nj]) != GPUML_SUCCESS) { printf("error: %s\n", gpuml_last_error(ctx)); return -1; }
    r.js = js; r.nj = nj;
    return bench_gpu_seconds(ctx, run_rot, &r, 50);
}
static gpuml_tensor *rnd(gpuml_dtype dt, int ndim, const int64_t *s, uint64_t seed)
{
    gpuml_tensor *t = gpuml_tensor_new(ctx, dt, ndim, s);
    if (!t) { printf("alloc: %s\n", gpuml_last_error(ctx)); exit(1); }
    gpuml_rand_uniform(ctx, t, seed, -1, 1);
    return t;
}
static void free_jobs(job *js, int nj)
{
    int i;
    for (i = 0; i < nj; i++) { gpuml_tensor_free(js[i].x); gpuml_tensor_free(js[i].w); gpuml_tensor_free(js[i].y); }
}
int main(int argc, char **argv)
{
    gpuml_desc desc;
    gpuml_dtype dt = argc > 1 && strcmp(argv[1], "f32") == 0 ? GPUML_F32 : GPUML_F16;
    int layout = argc > 2 && strcmp(argv[2], "nchw") == 0, only = argc > 3 ? atoi(argv[3]) : -1, iters = argc > 4 ? atoi(argv[4]) : 20;
    double roof, es = gpuml_dtype_size(dt);
    unsigned l;
    job c;
    int64_t n = (int64_t)1 << 28;
    memset(&desc, 0, sizeof desc);
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("no GPU\n"); return 1; }
    memset(&c, 0, sizeof c);
    c.copy = 1; c.x = rnd(GPUML_F32, 1, &n, 7); c.y = gpuml_tensor_new(ctx, GPUML_F32, 1, &n);
    roof = 2.0 * (double)n * 4 / time_it(&c, 1) * 1e-9;
    gpuml_tensor_free(c.x); gpuml_tensor_free(c.y);
    printf("device: %s, copy roof %.1f GB/s; %s %s\n", gpuml_device_name(ctx), roof, dt == GPUML_F16 ? "f16" : "f32", layout ? "NCHW" : "NHWC");
    for (l = 0; l < sizeof MBV2 / sizeof MBV2[0]; l++) {
        job js[4], cp[4];
        int64_t xs[4], ws[4], ys[4], half;
        int c0 = MBV2[l][0], h = MBV2[l][1], s = MBV2[l][2], p = (h + 2 - 3) / s + 1, i;
        double bytes, tc, tp;
        if (only >= 0 && (int)l != only) continue;
        xs[0] = ys[0] = 32; ws[0] = c0;
        if (layout) { xs[1] = c0; xs[2] = xs[3] = h; ys[1] = c0; ys[2] = ys[3] = p; ws[1] = 1; ws[2] = ws[3] = 3; }
        else { xs[1] = xs[2] = h; xs[3] = c0; ys[1] = ys[2] = p; ys[3] = c0; ws[1] = ws[2] = 3; ws[3] = 1; }
        for (i = 0; i < 4; i++) {
            memset(&js[i], 0, sizeof js[i]);
            js[i].x = rnd(dt, 4, xs, 1 + i); js[i].w = rnd(dt, 4, ws, 100 + i); js[i].y = gpuml_tensor_new(ctx, dt, 4, ys);
            js[i].d.stride[0] = js[i].d.stride[1] = s;
            js[i].d.pad[0] = js[i].d.pad[1] = js[i].d.pad[2] = js[i].d.pad[3] = 1;
            js[i].d.groups = c0; js[i].d.layout = (gpuml_layout)layout;
        }
        if (only >= 0) {   /* for the profiler: warm-up (JIT) then 'iters' calls */
            for (i = 0; i < iters; i++)
                if (run(&js[i % 4]) != GPUML_SUCCESS) { printf("error: %s\n", gpuml_last_error(ctx)); return 1; }
            gpuml_sync(ctx);
            free_jobs(js, 4);
            continue;
        }
        bytes = es * (32.0 * h * h * c0 + 32.0 * p * p * c0 + 9.0 * c0);
        half = (int64_t)(bytes / 2 / 4);
        for (i = 0; i < 4; i++) {
            memset(&cp[i], 0, sizeof cp[i]);
            cp[i].copy = 1; cp[i].x = rnd(GPUML_F32, 1, &half, 50 + i); cp[i].y = gpuml_tensor_new(ctx, GPUML_F32, 1, &half);
        }
        tc = time_it(js, 4);
        tp = getenv("PROF_DW_NOCOPY") ? tc : time_it(cp, 4);   /* PROF_DW_NOCOPY=1: the conv alone */
        printf("layer %u c%-4d %3dx%-3d s%d  %6.2f MB  conv %7.1f us %5.3f of roof | copy same bytes %7.1f us %5.3f of roof | conv/copy %5.3f\n",
               l, c0, h, h, s, bytes * 1e-6, tc * 1e6, bytes / tc * 1e-9 / roof, tp * 1e6, bytes / tp * 1e-9 / roof, tp / tc);
        free_jobs(js, 4);
        for (i = 0; i < 4; i++) { gpuml_tensor_free(cp[i].x); gpuml_tensor_free(cp[i].y); }
    }
    gpuml_shutdown(ctx);
    return 0;
}
