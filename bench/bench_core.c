/* Foundation figures (a benchmark, not a test):
   - process start to first result (init, a random fill, a cast, a read), cold or warm cache;
   - NVRTC compile time of each kernel family/variant (cache off);
   - host-side cost of one small op (many back-to-back gpuml_fill calls on a tiny tensor).
   Usage: bench_core first | compile | launch */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int first_result(void)
{
    double t0 = now(), t1, t2;
    gpuml_ctx *ctx;
    int64_t sh[2] = {256, 256};
    gpuml_tensor *a, *b;
    float out[4];
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS) { printf("init: %s\n", gpuml_last_error(ctx)); return 1; }
    t1 = now();
    a = gpuml_tensor_new(ctx, GPUML_F32, 2, sh);
    b = gpuml_tensor_new(ctx, GPUML_BF16, 2, sh);
    gpuml_rand_normal(ctx, a, 1, 0, 1);
    gpuml_copy(ctx, b, a);
    gpuml_copy(ctx, a, b);
    {
        gpuml_tensor *s = gpuml_tensor_slice(a, 1, 0, 4, 1), *r = gpuml_tensor_slice(s, 0, 0, 1, 1);
        if (gpuml_tensor_read(r, out, sizeof out) != GPUML_SUCCESS) printf("read: %s\n", gpuml_last_error(ctx));
        gpuml_tensor_free(s); gpuml_tensor_free(r);
    }
    t2 = now();
    printf("first result on %s: init %.1f ms, ops to first result %.1f ms, total %.1f ms (value %.4f)\n",
           gpuml_device_name(ctx), 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t2 - t0), out[0]);
    gpuml_tensor_free(a); gpuml_tensor_free(b);
    gpuml_shutdown(ctx);
    return 0;
}

static int compile_times(void)
{
#ifndef GPUML_NO_CUDA
    char why[2048];
    gpuml__nvrtc *rtc = gpuml__nvrtc_get(NULL, why, sizeof why);
    int v, arch = 90;
    gpuml_ctx *ctx;
    if (!rtc) { printf("no NVRTC: %s\n", why); return 1; }
    if (gpuml_init(&ctx, NULL) == GPUML_SUCCESS && gpuml_device_arch(ctx)) arch = gpuml_device_arch(ctx);
    gpuml_shutdown(ctx);
    printf("NVRTC %d.%d compile times for sm_%d (cache off):\n", rtc->major, rtc->minor, arch);
    for (v = 0; gpuml__family_variants[v][0]; v++) {
        const gpuml__family *f = NULL;
        int i;
        for (i = 0; gpuml__all_families[i]; i++)
            if (strcmp(gpuml__all_families[i]->name, gpuml__family_variants[v][0]) == 0) f = gpuml__all_families[i];
        if (f && arch >= f->min_arch) {
            char *src = gpuml__family_source(f);
            unsigned char *bin = NULL;
            size_t size = 0;
            int is_ptx = 0;
            gpuml__hash key;
            gpuml__str log = {0, 0, 0, 0};
            double t0 = now();
            gpuml_status st = gpuml__jit_get(rtc, NULL, src, f->name, gpuml__family_variants[v][1], arch, f->hopper,
                                             f->exact, &bin, &size, &is_ptx, &key, &log);
            printf("  %-12s %-44s %7.1f ms  %7zu bytes%s\n", f->name, gpuml__family_variants[v][1], 1e3 * (now() - t0), size,
                   st == GPUML_SUCCESS ? "" : "  FAILED");
            gpuml__free(bin); gpuml__free(src); gpuml__str_free(&log);
        }
    }
    return 0;
#else
    printf("built with GPUML_NO_CUDA\n");
    return 0;
#endif
}

static int launch_cost(void)
{
    gpuml_ctx *ctx;
    int64_t sh[1] = {1};
    gpuml_tensor *t;
    int i, n = 20000;
    double t0, t1, t2;
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS) { printf("init: %s\n", gpuml_last_error(ctx)); return 1; }
    t = gpuml_tensor_new(ctx, GPUML_F32, 1, sh);
    for (i = 0; i < 100; i++) gpuml_fill(ctx, t, i);   /* warm-up: JIT and first launch */
    gpuml_sync(ctx);
    t0 = now();
    for (i = 0; i < n; i++) gpuml_fill(ctx, t, i);
    t1 = now();
    gpuml_sync(ctx);
    t2 = now();
    printf("small op (gpuml_fill of 1 element) on %s: %.2f us host time per call, %.2f us per op including the device\n",
           gpuml_device_name(ctx), 1e6 * (t1 - t0) / n, 1e6 * (t2 - t0) / n);
    gpuml_tensor_free(t);
    gpuml_shutdown(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "first";
    if (strcmp(what, "first") == 0) return first_result();
    if (strcmp(what, "compile") == 0) return compile_times();
    if (strcmp(what, "launch") == 0) return launch_cost();
    printf("usage: %s first|compile|launch\n", argv[0]);
    return 2;
}
