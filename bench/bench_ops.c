/* Benchmark of the memory-bound ops (not a test).  On the GPU: time per call from CUDA events
   around back-to-back launches after warm-up, GB/s (bytes read + written), and the fraction
   of the device-to-device copy bandwidth measured in the same run.  On the CPU: wall-clock
   GB/s against memcpy on the same machine, run on as many threads as the library uses (each
   thread copies its share; one thread's memcpy is printed too).  bench/bench_ops_torch.py prints the same lines
   for PyTorch.
   Build: gcc -std=c99 -O2 -I. bench/bench_ops.c -o build/bench_ops -ldl -lpthread -lm
   Run:   build/bench_ops [filter]            (GPUML_BACKEND=cpu for the CPU; filter: parts of op
          names, comma-separated; BENCH_ROWS_TUNE=a,b,c,d,e[,f,g,h,i,j,k,l] sets gpuml__rows_tune,
          BENCH_NORM_NOWB=1 adds layernorm- / rmsnorm- rows without weight and bias,
          BENCH_EW_TUNE=block,vectors,grid,hints[,rows] gpuml__ew_tune, BENCH_REDUCE_TUNE=per_sm,vectors,nofuse
          gpuml__reduce_tune; BENCH_ITERS=n timed calls, default 50; BENCH_COLS=a,b,.. the row
          lengths, default 1024,4096,8192,32768; BENCH_DTYPES=f32,bf16,f16 the dtypes, default
          f32,bf16) */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

static gpuml_ctx *ctx;
static double roof_gbs;
static const char *filter;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef gpuml_status (*bench_fn)(void *arg);

/* seconds per call of fn */
typedef struct cpjob { char *d; const char *s; size_t n; } cpjob;
static void *cp_thread(void *arg) { cpjob *j = (cpjob *)arg; memcpy(j->d, j->s, j->n); return NULL; }
/* seconds for one memcpy of bytes, split over nt threads */
static double mt_memcpy(char *d, const char *s, size_t bytes, int nt)
{
    pthread_t th[64];
    cpjob jobs[64];
    double t0 = now_s();
    int i;
    for (i = 0; i < nt; i++) {
        size_t lo = bytes / (size_t)nt * (size_t)i, hi = i == nt - 1 ? bytes : bytes / (size_t)nt * (size_t)(i + 1);
        jobs[i].d = d + lo; jobs[i].s = s + lo; jobs[i].n = hi - lo;
        if (i > 0) pthread_create(&th[i], NULL, cp_thread, &jobs[i]);
    }
    cp_thread(&jobs[0]);
    for (i = 1; i < nt; i++) pthread_join(th[i], NULL);
    return now_s() - t0;
}

static double time_it(bench_fn fn, void *arg, int iters)
{
    int i;
    for (i = 0; i < 3; i++) if (fn(arg) != GPUML_SUCCESS) { printf("error: %s\n", gpuml_last_error(ctx)); exit(1); }
    gpuml_sync(ctx);
#ifndef GPUML_NO_CUDA
    if (gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA) {
        gpuml__CUevent a, b;
        gpuml__bench_event(ctx, &a);
        for (i = 0; i < iters; i++) fn(arg);
        gpuml__bench_event(ctx, &b);
        return gpuml__bench_elapsed(ctx, a, b) * 1e-3 / iters;
    }
#endif
    {
        double t0 = now_s();
        for (i = 0; i < iters; i++) fn(arg);
        return (now_s() - t0) / iters;
    }
}

typedef struct args { gpuml_tensor *o, *a, *b, *c, *d; int kind; } args;
static gpuml_status f_copy(void *p) { args *x = (args *)p; return gpuml_copy(ctx, x->o, x->a); }
static gpuml_status f_add(void *p) { args *x = (args *)p; return gpuml_add(ctx, x->o, x->a, x->b); }
static gpuml_status f_mul(void *p) { args *x = (args *)p; return gpuml_mul(ctx, x->o, x->a, x->b); }
static gpuml_status f_gelu(void *p) { args *x = (args *)p; return gpuml_gelu(ctx, x->o, x->a); }
static gpuml_status f_sum(void *p) { args *x = (args *)p; return gpuml_reduce(ctx, GPUML_REDUCE_SUM, x->o, x->a, NULL, 0, 0); }
static gpuml_status f_softmax(void *p) { args *x = (args *)p; return gpuml_softmax(ctx, x->o, x->a, -1); }
static gpuml_status f_layernorm(void *p) { args *x = (args *)p; return gpuml_layernorm(ctx, x->o, x->a, x->b, x->c, 1e-5); }
static gpuml_status f_rmsnorm(void *p) { args *x = (args *)p; return gpuml_rmsnorm(ctx, x->o, x->a, x->b, 1e-5); }
static gpuml_status f_adamw(void *p)
{
    args *x = (args *)p;
    gpuml_adamw_desc d;
    memset(&d, 0, sizeof d);
    d.lr = 1e-4; d.weight_decay = 0.01; d.step = 10;
    return gpuml_adamw_step(ctx, x->o, x->a, x->b, x->c, &d);
}

static void report(const char *op, const char *dt, const char *shape, double sec, double bytes)
{
    double gbs = bytes / sec * 1e-9;
    printf("gpuml  %-10s %-5s %-14s %10.1f us %8.1f GB/s  %5.3f of copy\n", op, dt, shape, sec * 1e6, gbs, gbs / roof_gbs);
    fflush(stdout);
}
/* the filter: comma-separated parts of op names */
static int want(const char *op)
{
    const char *f = filter;
    if (!f) return 1;
    while (*f) {
        size_t l = strcspn(f, ",");
        if (l > 0 && l <= strlen(op)) {
            size_t i;
            for (i = 0; i + l <= strlen(op); i++) if (strncmp(op + i, f, l) == 0) return 1;
        }
        f += l;
        if (*f == ',') f++;
    }
    return 0;
}

static gpuml_tensor *rnd(gpuml_dtype dt, int ndim, const int64_t *s)
{
    gpuml_tensor *t = gpuml_tensor_new(ctx, dt, ndim, s);
    if (!t) { printf("alloc: %s\n", gpuml_last_error(ctx)); exit(1); }
    gpuml_rand_uniform(ctx, t, 7, -2.0, 2.0);
    return t;
}

int main(int argc, char **argv)
{
    int gpu, t, iters;
    int64_t n;
    gpuml_dtype dts[3] = { GPUML_F32, GPUML_BF16, GPUML_F16 };
    int ndts = 2;
    int64_t cols[8] = { 1024, 4096, 8192, 32768 };
    int ncols = 4;
    filter = argc > 1 ? argv[1] : NULL;
#ifndef GPUML_NO_CUDA
    {   /* BENCH_ROWS_TUNE=a,b,c,d,e[,f[,g]]: the row-kernel overrides (gpuml__rows_tune in gpuml.h) */
        const char *e = getenv("BENCH_ROWS_TUNE");
        if (e && *e) {
            int *t = gpuml__rows_tune;
            if (sscanf(e, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7], &t[8], &t[9], &t[10], &t[11]) < 1) { printf("bad BENCH_ROWS_TUNE\n"); return 1; }
            printf("row-kernel overrides: %d %d %d %d %d %d %d %d %d %d %d %d\n", t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11]);
        }
        e = getenv("BENCH_EW_TUNE");
        if (e && *e) {
            int *t = gpuml__ew_tune;
            if (sscanf(e, "%d,%d,%d,%d,%d", &t[0], &t[1], &t[2], &t[3], &t[4]) < 1) { printf("bad BENCH_EW_TUNE\n"); return 1; }
            printf("elementwise-kernel overrides: %d %d %d %d %d\n", t[0], t[1], t[2], t[3], t[4]);
        }
        e = getenv("BENCH_REDUCE_TUNE");
        if (e && *e) {
            int *t = gpuml__reduce_tune;
            if (sscanf(e, "%d,%d,%d", &t[0], &t[1], &t[2]) < 1) { printf("bad BENCH_REDUCE_TUNE\n"); return 1; }
            printf("reduce overrides: %d %d %d\n", t[0], t[1], t[2]);
        }
    }
#endif
    /* BENCH_POOL_SPIN_US: the CPU pool's idle spin (us; 0 = workers block at once, the pool before
       2026-11-28), read when the context makes its pool */
    if (getenv("BENCH_POOL_SPIN_US")) {
        gpuml__pool_spin_us = atoi(getenv("BENCH_POOL_SPIN_US"));
        printf("CPU pool spin: %d us\n", gpuml__pool_spin_us);
    }
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS) { printf("init: %s\n", gpuml_last_error(ctx)); return 1; }
    gpu = gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA;
    printf("device: %s (%s)\n", gpuml_device_name(ctx), gpuml_backend_reason(ctx));
    n = gpu ? (int64_t)1 << 26 : (int64_t)1 << 24;
    iters = gpu ? 50 : 5;
    if (getenv("BENCH_ITERS") && atoi(getenv("BENCH_ITERS")) > 0) iters = atoi(getenv("BENCH_ITERS"));
    if (getenv("BENCH_COLS") && *getenv("BENCH_COLS")) {
        const char *e = getenv("BENCH_COLS");
        ncols = 0;
        while (*e && ncols < 8) {
            long long c = atoll(e);
            if (c > 0 && c <= n && n % c == 0) cols[ncols++] = c;
            e += strcspn(e, ",");
            if (*e == ',') e++;
        }
    }
    /* the roof: copy of a 1 GiB buffer on the GPU (read + write), memcpy of 256 MiB on the CPU */
    if (gpu) {
        int64_t cn = (int64_t)1 << 28;
        args a;
        memset(&a, 0, sizeof a);
        a.a = rnd(GPUML_F32, 1, &cn);
        a.o = gpuml_tensor_new(ctx, GPUML_F32, 1, &cn);
        roof_gbs = 2.0 * (double)cn * 4 / time_it(f_copy, &a, 10) * 1e-9;
        gpuml_tensor_free(a.a); gpuml_tensor_free(a.o);
    } else {
        size_t bytes = (size_t)256 << 20;
        char *s = (char *)malloc(bytes), *d = (char *)malloc(bytes);
        double best = 1e9, best1 = 1e9;
        const char *env = getenv("GPUML_NUM_THREADS");
        int i, nt = env && atoi(env) > 0 ? atoi(env) : (int)sysconf(_SC_NPROCESSORS_ONLN);
        nt = GPUML__MAX(1, GPUML__MIN(nt, 64));
        memset(s, 1, bytes); memset(d, 2, bytes);
        for (i = 0; i < 5; i++) best1 = GPUML__MIN(best1, mt_memcpy(d, s, bytes, 1));
        for (i = 0; i < 5; i++) best = GPUML__MIN(best, mt_memcpy(d, s, bytes, nt));
        roof_gbs = 2.0 * (double)bytes / best * 1e-9;
        printf("memcpy: %.1f GB/s on 1 thread, %.1f GB/s on %d threads (the roof below)\n", 2.0 * (double)bytes / best1 * 1e-9, roof_gbs, nt);
        free(s); free(d);
    }
    printf("copy roof: %.1f GB/s (read + write)\n", roof_gbs);
    if (getenv("BENCH_DTYPES") && *getenv("BENCH_DTYPES")) {   /* e.g. f16 or bf16,f16 */
        char buf[64], *tok;
        snprintf(buf, sizeof buf, "%s", getenv("BENCH_DTYPES"));
        ndts = 0;
        for (tok = strtok(buf, ","); tok && ndts < 3; tok = strtok(NULL, ","))
            if (!strcmp(tok, "f32") || !strcmp(tok, "bf16") || !strcmp(tok, "f16"))
                dts[ndts++] = !strcmp(tok, "f32") ? GPUML_F32 : !strcmp(tok, "bf16") ? GPUML_BF16 : GPUML_F16;
    }
    for (t = 0; t < ndts; t++) {
        gpuml_dtype dt = dts[t];
        const char *dn = gpuml_dtype_name(dt);
        double es = (double)gpuml_dtype_size(dt);
        char shp[64];
        args a;
        int c;
        memset(&a, 0, sizeof a);
        snprintf(shp, sizeof shp, "2^%d", gpu ? 26 : 24);
        a.a = rnd(dt, 1, &n); a.b = rnd(dt, 1, &n); a.o = gpuml_tensor_new(ctx, dt, 1, &n);
        if (want("add")) report("add", dn, shp, time_it(f_add, &a, iters), 3 * es * (double)n);
        if (want("mul")) report("mul", dn, shp, time_it(f_mul, &a, iters), 3 * es * (double)n);
        if (want("gelu")) report("gelu", dn, shp, time_it(f_gelu, &a, iters), 2 * es * (double)n);
        if (!gpu && want("gelu")) {
            /* the CPU's gelu cost could depend on the inputs' range: N(0, 1) inputs too */
            gpuml_rand_normal(ctx, a.a, 9, 0.0, 1.0);
            report("gelu_n01", dn, shp, time_it(f_gelu, &a, iters), 2 * es * (double)n);
            gpuml_rand_uniform(ctx, a.a, 7, -2.0, 2.0);
        }
        gpuml_tensor_free(a.o);
        a.o = gpuml_tensor_new(ctx, GPUML_F32, 0, NULL);
        if (want("sum")) report("sum", dn, shp, time_it(f_sum, &a, iters), es * (double)n);
        if (want("sum") && gpu && dt == GPUML_BF16) {   /* bf16 at 2^26 moves only 134 MB: also 2^27 */
            int64_t n2 = n * 2;
            args s2;
            memset(&s2, 0, sizeof s2);
            s2.a = rnd(dt, 1, &n2); s2.o = a.o;
            report("sum", dn, "2^27", time_it(f_sum, &s2, iters), es * (double)n2);
            gpuml_tensor_free(s2.a);
        }
        gpuml_tensor_free(a.o); gpuml_tensor_free(a.b);
        for (c = 0; c < ncols; c++) {
            int64_t s[2], ws[1];
            args r;
            s[1] = cols[c]; s[0] = n / cols[c]; ws[0] = cols[c];
            snprintf(shp, sizeof shp, "%lldx%lld", (long long)s[0], (long long)s[1]);
            memset(&r, 0, sizeof r);
            r.a = gpuml_tensor_reshape(a.a, 2, s);
            r.o = gpuml_tensor_new(ctx, dt, 2, s);
            r.b = rnd(dt, 1, ws); r.c = rnd(dt, 1, ws);
            if (want("softmax")) report("softmax", dn, shp, time_it(f_softmax, &r, iters), 2 * es * (double)n);
            if (want("layernorm")) report("layernorm", dn, shp, time_it(f_layernorm, &r, iters), 2 * es * (double)n);
            if (want("rmsnorm")) report("rmsnorm", dn, shp, time_it(f_rmsnorm, &r, iters), 2 * es * (double)n);
            if (getenv("BENCH_NORM_NOWB")) {   /* the norms without weight and bias (what their L2 reads cost) */
                args r0 = r;
                r0.b = r0.c = NULL;
                if (want("layernorm")) report("layernorm-", dn, shp, time_it(f_layernorm, &r0, iters), 2 * es * (double)n);
                if (want("rmsnorm")) report("rmsnorm-", dn, shp, time_it(f_rmsnorm, &r0, iters), 2 * es * (double)n);
            }
            gpuml_tensor_free(r.a); gpuml_tensor_free(r.o); gpuml_tensor_free(r.b); gpuml_tensor_free(r.c);
        }
        gpuml_tensor_free(a.a);
        if (want("adamw") && dt != GPUML_F16) {   /* (gradients are f32 or bf16) */
            args o;
            memset(&o, 0, sizeof o);
            o.o = rnd(GPUML_F32, 1, &n); o.a = rnd(dt, 1, &n); o.b = rnd(GPUML_F32, 1, &n); o.c = rnd(GPUML_F32, 1, &n);
            gpuml_fill(ctx, o.c, 0.5);
            snprintf(shp, sizeof shp, "2^%d", gpu ? 26 : 24);
            /* param, m, v read and written (f32), grad read */
            report("adamw", dn, shp, time_it(f_adamw, &o, iters), (24 + es) * (double)n);
            gpuml_tensor_free(o.o); gpuml_tensor_free(o.a); gpuml_tensor_free(o.b); gpuml_tensor_free(o.c);
        }
    }
    gpuml_shutdown(ctx);
    return 0;
}
