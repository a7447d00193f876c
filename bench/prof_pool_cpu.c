/* The CPU pooling passes: ResNet's 3x3 / 2 max pool (64 @112) and its average twin, a 256 @56 max
   pool, and the head's global average (2048 @7), batch 1 (or PROF_N), in f32 / bf16 / f16 and NHWC /
   NCHW: forward and backward as ms a call and GB/s of the tensors each pass must move (forward: x and
   y; backward: dy, dx, and x for max).  Rounds alternate over all of them; the best is kept.  Not a test.
   Build: cc -std=c99 -O2 -Wall -Wextra -Werror -I. bench/prof_pool_cpu.c -o build/prof_pool_cpu -ldl -lpthread -lm
   Run:   GPUML_NUM_THREADS=1 build/prof_pool_cpu [rounds] */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* channels, size, op (0 max 3x3 / 2 pad 1, 1 average 3x3 / 2 pad 1, 2 global average) */
static const int L[][3] = { { 64, 112, 0 }, { 64, 112, 1 }, { 256, 56, 0 }, { 2048, 7, 2 } };
static const gpuml_dtype DT[] = { GPUML_F32, GPUML_BF16, GPUML_F16 };
#define NL ((int)(sizeof L / sizeof L[0]))
#define NCASE (NL * 3 * 2)

int main(int argc, char **argv)
{
    gpuml_ctx *ctx;
    gpuml_desc desc;
    int rounds = argc > 1 ? atoi(argv[1]) : 3, rd, cs, i;
    int64_t N = getenv("PROF_N") ? atoi(getenv("PROF_N")) : 1;
    double best[NCASE][2];
    memset(&desc, 0, sizeof desc);
    desc.backend = GPUML_BACKEND_CPU;
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS) { printf("init failed: %s\n", ctx ? gpuml_last_error(ctx) : ""); return 1; }
    if (rounds < 1) rounds = 1;
    for (rd = 0; rd < rounds; rd++)
        for (cs = 0; cs < NCASE; cs++) {
            const int *l = L[cs / 6], nchw = cs % 2;
            const gpuml_dtype dt = DT[(cs / 2) % 3];
            const int C = l[0], H = l[1], P = l[2] == 2 ? 1 : (H + 2 - 3) / 2 + 1, reps = 5;
            int64_t xs[4] = { N, H, H, C }, ys[4] = { N, P, P, C };
            gpuml_pool2d_desc d;
            gpuml_tensor *x, *y, *dx;
            double t0 = 0, t[2];
            if (nchw) { xs[1] = C; xs[3] = H; ys[1] = C; ys[3] = P; }
            memset(&d, 0, sizeof d);
            d.op = l[2] ? GPUML_POOL_AVG : GPUML_POOL_MAX;
            d.global = l[2] == 2;
            if (!d.global) { d.window[0] = d.window[1] = 3; d.stride[0] = d.stride[1] = 2; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1; }
            d.layout = nchw ? GPUML_LAYOUT_NCHW : GPUML_LAYOUT_NHWC;
            x = gpuml_tensor_new(ctx, dt, 4, xs); dx = gpuml_tensor_new(ctx, dt, 4, xs); y = gpuml_tensor_new(ctx, dt, 4, ys);
            if (!x || !dx || !y) { printf("out of memory\n"); return 1; }
            gpuml_rand_uniform(ctx, x, 1, -1, 1); gpuml_rand_uniform(ctx, y, 2, -1, 1);
            for (i = 0; i < reps + 1; i++) {   /* the first call: warm-up */
                if (i == 1) t0 = now_s();
                if (gpuml_pool2d(ctx, y, x, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
            }
            t[0] = (now_s() - t0) / reps;
            for (i = 0; i < reps + 1; i++) {
                if (i == 1) t0 = now_s();
                if (gpuml_pool2d_backward(ctx, dx, y, x, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); return 1; }
            }
            t[1] = (now_s() - t0) / reps;
            for (i = 0; i < 2; i++) if (rd == 0 || t[i] < best[cs][i]) best[cs][i] = t[i];
            gpuml_tensor_free(x); gpuml_tensor_free(dx); gpuml_tensor_free(y);
        }
    printf("%s, batch %lld, best of %d rounds\n", gpuml_device_name(ctx), (long long)N, rounds);
    printf("pool                 dtype layout    fwd us   GB/s     bwd us   GB/s\n");
    for (cs = 0; cs < NCASE; cs++) {
        const int *l = L[cs / 6], nchw = cs % 2;
        const gpuml_dtype dt = DT[(cs / 2) % 3];
        const int C = l[0], H = l[1], P = l[2] == 2 ? 1 : (H + 2 - 3) / 2 + 1;
        const double es = (double)gpuml_dtype_size(dt), xb = es * (double)(N * C * H * H), yb = es * (double)(N * C * P * P);
        const double bb = yb + xb + (l[2] == 0 ? xb : 0);   /* dy, dx, and x for max */
        printf("%-7s %4d @%-4d %-5s %-6s %9.1f %6.1f  %9.1f %6.1f\n", l[2] == 0 ? "max" : l[2] == 1 ? "avg" : "global", C, H,
               gpuml_dtype_name(dt), nchw ? "NCHW" : "NHWC", 1e6 * best[cs][0], 1e-9 * (xb + yb) / best[cs][0], 1e6 * best[cs][1],
               1e-9 * bb / best[cs][1]);
    }
    gpuml_shutdown(ctx);
    return 0;
}
