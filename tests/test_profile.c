/* Profiler, traces and CUDA graphs.  CPU always; GPU where CUDA works.
   Each test opens its own contexts so that records and graphs of one test do not leak into
   the next. */
#define _POSIX_C_SOURCE 200809L   /* setenv, getpid */
#define GPUML_IMPLEMENTATION
#include "harness.h"
#include <stdint.h>
#include <ctype.h>
#include <unistd.h>

/* ---- helpers ---- */
static gpuml_ctx *open_ctx(int gpu, int profile, int graphs_off)
{
    gpuml_desc d;
    gpuml_ctx *ctx = NULL;
    memset(&d, 0, sizeof d);
    d.backend = gpu ? GPUML_BACKEND_CUDA : GPUML_BACKEND_CPU;
    d.profile = profile;
    d.graphs_off = graphs_off;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) {
        printf("    cannot open a %s context: %s\n", gpu ? "GPU" : "CPU", gpuml_last_error(ctx));
        gpuml_shutdown(ctx);
        return NULL;
    }
    return ctx;
}

static gpuml_tensor *upload(gpuml_ctx *ctx, gpuml_dtype dt, int ndim, const int64_t *shape, const double *v)
{
    gpuml_tensor *t = gpuml_tensor_new(ctx, dt, ndim, shape), *f;
    int64_t n = gpuml_tensor_numel(t), i;
    float *h = (float *)malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (i = 0; i < n; i++) h[i] = (float)v[i];
    f = gpuml_tensor_new(ctx, GPUML_F32, ndim, shape);
    gpuml_tensor_write(f, h, sizeof(float) * (size_t)n);
    gpuml_copy(ctx, t, f);
    gpuml_tensor_free(f);
    free(h);
    return t;
}
static gpuml_tensor *rand_tensor(gpuml_ctx *ctx, gpuml_dtype dt, int ndim, const int64_t *shape)
{
    int64_t n = 1, i;
    double *v;
    gpuml_tensor *t;
    for (i = 0; i < ndim; i++) n *= shape[i];
    v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (i = 0; i < n; i++) v[i] = tu_rand();
    t = upload(ctx, dt, ndim, shape, v);
    free(v);
    return t;
}
/* f32 contents as raw bits (for bit-identical comparisons) */
static uint32_t *bits_of(const gpuml_tensor *t)
{
    size_t n = (size_t)gpuml_tensor_numel(t);
    uint32_t *h = (uint32_t *)malloc(4 * (n ? n : 1));
    if (gpuml_tensor_read(t, h, 4 * n) != GPUML_SUCCESS) memset(h, 0xff, 4 * n);
    return h;
}
static void poison(gpuml_tensor *t) { gpuml_fill(gpuml_tensor_ctx(t), t, NAN); }

/* user kernel for the kernel-launch record */
static const char scale_src[] =
    "extern \"C\" __global__ void scale2(float *x, int n)"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2.0f * x[i]; }";
static gpuml_status scale_cpu(const gpuml_launch *l, void *user)
{
    float *x = *(float **)l->args[0];
    int n = *(int *)l->args[1], i;
    (void)user;
    for (i = 0; i < n; i++) x[i] *= 2.0f;
    return GPUML_SUCCESS;
}

/* ---- records ---- */
static void check_records(int gpu)
{
    gpuml_ctx *ctx = open_ctx(gpu, 1, 0);
    int64_t sa[2] = {37, 53}, sm_a[3] = {2, 37, 29}, sm_b[2] = {29, 41}, sm_c[3] = {2, 37, 41}, sr[1] = {37};
    int axes[1] = {1};
    gpuml_tensor *a, *b, *o, *bf, *ma, *mb, *mc, *red, *p, *g, *m, *v;
    gpuml_profile_record r;
    gpuml_adamw_desc ad;
    gpuml_kernel_desc kd;
    gpuml_kernel *k;
    gpuml_launch l;
    void *px, *args[2];
    int n = 37 * 53, i, count;
    const double nb = 37.0 * 53.0 * 4.0;
    if (!ctx) { CHECK(0, "context"); return; }
    a = gpuml_tensor_new(ctx, GPUML_F32, 2, sa);
    b = rand_tensor(ctx, GPUML_F32, 2, sa);
    o = gpuml_tensor_new(ctx, GPUML_F32, 2, sa);
    bf = gpuml_tensor_new(ctx, GPUML_BF16, 2, sa);
    ma = rand_tensor(ctx, GPUML_F32, 3, sm_a);
    mb = rand_tensor(ctx, GPUML_F32, 2, sm_b);
    mc = gpuml_tensor_new(ctx, GPUML_F32, 3, sm_c);
    red = gpuml_tensor_new(ctx, GPUML_F32, 1, sr);
    p = rand_tensor(ctx, GPUML_F32, 2, sa); g = rand_tensor(ctx, GPUML_F32, 2, sa);
    m = rand_tensor(ctx, GPUML_F32, 2, sa); v = rand_tensor(ctx, GPUML_F32, 2, sa);
    gpuml_fill(ctx, v, 0.25);
    gpuml_sync(ctx);
    gpuml_profile_reset(ctx);
    CHECK(gpuml_profile_count(ctx) == 0, "reset leaves %d records", gpuml_profile_count(ctx));
    memset(&kd, 0, sizeof kd);
    kd.source = scale_src; kd.name = "scale2"; kd.cpu_fn = scale_cpu;
    k = gpuml_kernel_compile(ctx, &kd);
    CHECK(k != NULL, "compile: %s", gpuml_last_error(ctx));

    CHECK(gpuml_rand_normal(ctx, a, 7, 0.0, 1.0) == GPUML_SUCCESS, "rand");
    CHECK(gpuml_fill(ctx, o, 1.5) == GPUML_SUCCESS, "fill");
    CHECK(gpuml_copy(ctx, bf, a) == GPUML_SUCCESS, "copy");
    CHECK(gpuml_add(ctx, o, a, b) == GPUML_SUCCESS, "add");
    CHECK(gpuml_gelu(ctx, o, o) == GPUML_SUCCESS, "gelu");
    CHECK(gpuml_reduce(ctx, GPUML_REDUCE_SUM, red, a, axes, 1, 0) == GPUML_SUCCESS, "reduce");
    CHECK(gpuml_softmax(ctx, o, a, 1) == GPUML_SUCCESS, "softmax");
    CHECK(gpuml_matmul(ctx, mc, ma, mb, NULL) == GPUML_SUCCESS, "matmul: %s", gpuml_last_error(ctx));
    memset(&ad, 0, sizeof ad);
    ad.step = 1;
    CHECK(gpuml_adamw_step(ctx, p, g, m, v, &ad) == GPUML_SUCCESS, "adamw: %s", gpuml_last_error(ctx));
    px = gpuml_tensor_data(o);
    args[0] = &px; args[1] = &n;
    memset(&l, 0, sizeof l);
    l.grid[0] = (unsigned)(n + 127) / 128; l.block[0] = 128; l.args = args; l.nargs = 2;
    l.flops = n; l.bytes = 2.0 * nb;
    if (k) CHECK(gpuml_kernel_launch(ctx, k, &l) == GPUML_SUCCESS, "launch: %s", gpuml_last_error(ctx));
    /* a failing op records nothing */
    CHECK(gpuml_add(ctx, red, a, b) == GPUML_ERROR_SHAPE, "shape error expected");

    count = gpuml_profile_count(ctx);
    CHECK(count == (k ? 10 : 9), "%d records", count);
    {
        static const char *const names[10] = { "rand_normal", "fill", "copy", "add", "gelu", "reduce_sum", "softmax", "matmul",
                                                "adamw_step", "kernel:scale2" };
        for (i = 0; i < count && i < 10; i++) {
            CHECK(gpuml_profile_get(ctx, i, &r) == GPUML_SUCCESS, "get %d: %s", i, gpuml_last_error(ctx));
            CHECK(strcmp(r.name, names[i]) == 0, "record %d is %s, wanted %s", i, r.name, names[i]);
            CHECK(r.time_us > 0 && r.time_us < 1e7, "record %d (%s) time %g us", i, r.name, r.time_us);
            CHECK(r.start_us >= 0, "record %d start %g", i, r.start_us);
            CHECK(r.peak_gbps > 0, "record %d peak bandwidth %g", i, r.peak_gbps);
            CHECK(r.bytes > 0 && r.gbps > 0 && r.frac_of_peak > 0, "record %d (%s): bytes %g, GB/s %g, fraction %g", i, r.name,
                  r.bytes, r.gbps, r.frac_of_peak);
            CHECK(fabs(r.gbps - r.bytes / r.time_us * 1e-3) <= 1e-9 * r.gbps, "record %d GB/s %g", i, r.gbps);
            /* on the GPU each op is at least a launch, so at most at the roof; on the CPU
               small arrays live in cache and can beat the measured memory bandwidth */
            if (gpu) CHECK(r.frac_of_peak <= 1.5, "record %d (%s) at %g of the peak", i, r.name, r.frac_of_peak);
            if (gpu) CHECK(r.peak_tflops > 0, "record %d peak %g", i, r.peak_tflops);
            else CHECK(r.peak_tflops == 0, "CPU compute peak should be unknown (%g)", r.peak_tflops);
        }
    }
    if (gpuml_profile_get(ctx, 2, &r) == GPUML_SUCCESS) {
        CHECK(r.bytes == nb + nb / 2, "copy f32 -> bf16 bytes %g", r.bytes);
        CHECK(strcmp(r.shapes, "f32 [37,53] -> bf16 [37,53]") == 0, "copy shapes \"%s\"", r.shapes);
    }
    if (gpuml_profile_get(ctx, 3, &r) == GPUML_SUCCESS) {
        CHECK(r.bytes == 3 * nb && r.flops == 37.0 * 53.0, "add bytes %g flops %g", r.bytes, r.flops);
        CHECK(strcmp(r.shapes, "f32 [37,53],[37,53] -> [37,53]") == 0, "add shapes \"%s\"", r.shapes);
    }
    if (gpuml_profile_get(ctx, 5, &r) == GPUML_SUCCESS)
        CHECK(r.bytes == nb + 37 * 4, "reduce bytes %g", r.bytes);
    if (gpuml_profile_get(ctx, 7, &r) == GPUML_SUCCESS) {
        CHECK(r.flops == 2.0 * 2 * 37 * 41 * 29, "matmul flops %.17g", r.flops);
        CHECK(r.bytes == 4.0 * (2 * 37 * 29 + 29 * 41 + 2 * 37 * 41), "matmul bytes %g", r.bytes);
        CHECK(strcmp(r.shapes, "f32 [2,37,29]x[29,41] -> [2,37,41]") == 0, "matmul shapes \"%s\"", r.shapes);
        CHECK(r.unit == GPUML_UNIT_FP32, "f32 matmul unit %d", (int)r.unit);
        CHECK(fabs(r.tflops - r.flops / r.time_us * 1e-6) <= 1e-9 * r.tflops, "TFLOP/s %g", r.tflops);
    }
    if (gpuml_profile_get(ctx, 8, &r) == GPUML_SUCCESS)
        CHECK(r.bytes == 7 * nb, "adamw bytes %g", r.bytes);
    if (k && gpuml_profile_get(ctx, 9, &r) == GPUML_SUCCESS)
        CHECK(r.bytes == 2 * nb && r.flops == n, "kernel figures %g %g", r.bytes, r.flops);
    if (gpu) {   /* a bf16 matmul is measured against the tensor-core roof */
        int64_t s2[2] = {64, 64};
        gpuml_tensor *x = rand_tensor(ctx, GPUML_BF16, 2, s2), *y = gpuml_tensor_new(ctx, GPUML_BF16, 2, s2);
        double tc = 0, fp = 0;
        gpuml_profile_reset(ctx);
        CHECK(gpuml_matmul(ctx, y, x, x, NULL) == GPUML_SUCCESS, "bf16 matmul");
        CHECK(gpuml_profile_get(ctx, 0, &r) == GPUML_SUCCESS && r.unit == GPUML_UNIT_F16_TENSOR, "bf16 unit %d", (int)r.unit);
        gpuml_profile_peak(ctx, GPUML_UNIT_F16_TENSOR, &tc, NULL);
        gpuml_profile_peak(ctx, GPUML_UNIT_FP32, &fp, NULL);
        CHECK(r.peak_tflops == tc && tc > 4 * fp, "tensor peak %g vs fp32 %g", tc, fp);
        printf("    %s: fp32 %.1f, f16/bf16 tensor %.1f TFLOP/s, copy %.0f GB/s\n", gpuml_device_name(ctx), fp, tc, r.peak_gbps);
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
    gpuml_kernel_free(k);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o); gpuml_tensor_free(bf);
    gpuml_tensor_free(ma); gpuml_tensor_free(mb); gpuml_tensor_free(mc); gpuml_tensor_free(red);
    gpuml_tensor_free(p); gpuml_tensor_free(g); gpuml_tensor_free(m); gpuml_tensor_free(v);
    gpuml_shutdown(ctx);
}
/* conv2d, its backward passes and pooling make records with the convolution's FLOPs */
static void check_conv_records(int gpu)
{
    gpuml_ctx *ctx = open_ctx(gpu, 1, 0);
    int64_t xs[4] = {2, 9, 7, 16}, ws[4] = {24, 3, 3, 16}, ys[4] = {2, 9, 7, 24}, ps[4] = {2, 4, 3, 24};
    gpuml_tensor *x, *w, *y, *dx, *dw, *py;
    gpuml_conv2d_desc d;
    gpuml_pool2d_desc pd;
    gpuml_profile_record r;
    double fl = 2.0 * 2 * 9 * 7 * 24 * (3 * 3 * 16);
    static const char *const names[4] = { "conv2d", "conv2d_backward_data", "conv2d_backward_filter", "pool2d" };
    int i;
    if (!ctx) return;
    x = rand_tensor(ctx, GPUML_F16, 4, xs); w = rand_tensor(ctx, GPUML_F16, 4, ws);
    y = gpuml_tensor_new(ctx, GPUML_F16, 4, ys); dx = gpuml_tensor_new(ctx, GPUML_F16, 4, xs); dw = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
    py = gpuml_tensor_new(ctx, GPUML_F16, 4, ps);
    memset(&d, 0, sizeof d);
    d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1;
    memset(&pd, 0, sizeof pd);
    pd.op = GPUML_POOL_MAX; pd.window[0] = pd.window[1] = 2;
    gpuml_profile_reset(ctx);
    CHECK(gpuml_conv2d(ctx, y, x, w, &d) == GPUML_SUCCESS, "conv2d: %s", gpuml_last_error(ctx));
    CHECK(gpuml_conv2d_backward_data(ctx, dx, y, w, &d) == GPUML_SUCCESS, "bwd data: %s", gpuml_last_error(ctx));
    CHECK(gpuml_conv2d_backward_filter(ctx, dw, x, y, &d) == GPUML_SUCCESS, "bwd filter: %s", gpuml_last_error(ctx));
    CHECK(gpuml_pool2d(ctx, py, y, &pd) == GPUML_SUCCESS, "pool: %s", gpuml_last_error(ctx));
    CHECK(gpuml_profile_count(ctx) == 4, "%d records for 4 ops", gpuml_profile_count(ctx));
    for (i = 0; i < 4 && i < gpuml_profile_count(ctx); i++) {
        CHECK(gpuml_profile_get(ctx, i, &r) == GPUML_SUCCESS, "get %d", i);
        CHECK(strcmp(r.name, names[i]) == 0, "record %d is \"%s\", want %s", i, r.name, names[i]);
        CHECK(r.time_us > 0, "%s time %g", r.name, r.time_us);
        if (i < 3) CHECK(r.flops == fl && r.unit == GPUML_UNIT_F16_TENSOR, "%s flops %.17g unit %d", r.name, r.flops, (int)r.unit);
        else CHECK(r.flops == 2.0 * 4 * 3 * 24 * 4 && r.bytes == 2.0 * (2 * 9 * 7 * 24 + 2 * 4 * 3 * 24), "pool flops %g bytes %g", r.flops, r.bytes);
    }
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(dx); gpuml_tensor_free(dw); gpuml_tensor_free(py);
    gpuml_shutdown(ctx);
}
static void test_conv_records_cpu(void) { check_conv_records(0); }
static void test_conv_records_gpu(void) { NEED_GPU(); check_conv_records(1); }
static void test_records_cpu(void) { check_records(0); }
static void test_records_gpu(void) { NEED_GPU(); check_records(1); }

static void test_off_records_nothing(void)
{
    int gpu;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx;
        int64_t s[1] = {1000};
        gpuml_tensor *a;
        if (gpu && !tu_gpu) continue;
        ctx = open_ctx(gpu, 0, 0);
        if (!ctx) { CHECK(0, "context"); continue; }
        a = gpuml_tensor_new(ctx, GPUML_F32, 1, s);
        gpuml_fill(ctx, a, 1.0);
        gpuml_relu(ctx, a, a);
        CHECK(gpuml_profile_count(ctx) == 0, "profiling off recorded %d", gpuml_profile_count(ctx));
        gpuml_profile_enable(ctx, 1);
        gpuml_relu(ctx, a, a);
        gpuml_profile_enable(ctx, 0);
        gpuml_relu(ctx, a, a);
        CHECK(gpuml_profile_count(ctx) == 1, "one profiled op, %d records", gpuml_profile_count(ctx));
        gpuml_tensor_free(a);
        gpuml_shutdown(ctx);
    }
}

static void test_misuse(void)
{
    gpuml_ctx *ctx = open_ctx(0, 1, 0);
    gpuml_profile_record r;
    double t;
    if (!ctx) { CHECK(0, "context"); return; }
    CHECK_STATUS(ctx, gpuml_profile_get(ctx, 0, &r), GPUML_ERROR_INVALID_ARGUMENT, "record 0 of 0");
    CHECK_STATUS(ctx, gpuml_profile_get(ctx, 0, NULL), GPUML_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK_STATUS(ctx, gpuml_profile_print(ctx, NULL), GPUML_ERROR_INVALID_ARGUMENT, "file is NULL");
    CHECK_STATUS(ctx, gpuml_profile_write_trace(ctx, "/nonexistent-dir/x/trace.json"), GPUML_ERROR_IO, "cannot open");
    CHECK_STATUS(ctx, gpuml_profile_peak(ctx, (gpuml_profile_unit)9, &t, NULL), GPUML_ERROR_INVALID_ARGUMENT, "unit 9");
    CHECK(gpuml_profile_count(NULL) == 0, "count of NULL");
    CHECK(gpuml_profile_enable(NULL, 1) == GPUML_ERROR_INVALID_ARGUMENT, "enable NULL");
    gpuml_shutdown(ctx);
}

/* profile of a copy of known size vs an independent event timing of the same copy */
static void test_copy_vs_events_gpu(void)
{
    gpuml_ctx *ctx;
    int64_t s[1] = {(int64_t)32 << 20};   /* 128 MiB of f32: past any L2 */
    gpuml_tensor *x, *y;
    gpuml__CUevent e0, e1;
    gpuml_profile_record r;
    double ev_us, prof_us = 0, bytes = 2.0 * 4.0 * (double)s[0];
    int i, reps = 5;
    NEED_GPU();
    ctx = open_ctx(1, 0, 0);
    if (!ctx) { CHECK(0, "context"); return; }
    x = gpuml_tensor_new(ctx, GPUML_F32, 1, s);
    y = gpuml_tensor_new(ctx, GPUML_F32, 1, s);
    CHECK(x && y, "alloc: %s", gpuml_last_error(ctx));
    if (!x || !y) { gpuml_tensor_free(x); gpuml_tensor_free(y); gpuml_shutdown(ctx); return; }
    gpuml_rand_uniform(ctx, x, 3, -1, 1);
    gpuml_copy(ctx, y, x);   /* warm-up */
    gpuml__bench_event(ctx, &e0);
    for (i = 0; i < reps; i++) gpuml_copy(ctx, y, x);
    gpuml__bench_event(ctx, &e1);
    ev_us = gpuml__bench_elapsed(ctx, e0, e1) * 1e3 / reps;
    gpuml_profile_enable(ctx, 1);
    for (i = 0; i < reps; i++) gpuml_copy(ctx, y, x);
    CHECK(gpuml_profile_count(ctx) == reps, "%d records", gpuml_profile_count(ctx));
    for (i = 0; i < reps && i < gpuml_profile_count(ctx); i++) {
        CHECK(gpuml_profile_get(ctx, i, &r) == GPUML_SUCCESS, "get");
        CHECK(r.bytes == bytes, "copy bytes %.17g, wanted %.17g", r.bytes, bytes);
        CHECK(r.frac_of_peak > 0.2 && r.frac_of_peak <= 1.5, "copy at %g of the measured bandwidth", r.frac_of_peak);
        prof_us += r.time_us / reps;
    }
    /* the events bracket the same work; allow launch gaps and clock jitter */
    CHECK(prof_us > 0.67 * ev_us && prof_us < 1.5 * ev_us, "profiled copy %.1f us vs event timing %.1f us", prof_us, ev_us);
    printf("    128 MiB copy: profiler %.1f us, independent events %.1f us (%.0f GB/s; roof %.0f GB/s)\n", prof_us, ev_us,
           bytes / prof_us * 1e-3, r.peak_gbps);
    gpuml_tensor_free(x); gpuml_tensor_free(y);
    gpuml_shutdown(ctx);
}

/* ---- a small strict JSON checker: returns the number of elements of the top-level
   object's "traceEvents" array, or -1 if the text is not valid JSON ---- */
typedef struct js { const char *p; int depth, events, in_events; } js;
static void js_ws(js *j) { while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t') j->p++; }
static int js_value(js *j);
static int js_string(js *j)
{
    if (*j->p != '"') return 0;
    for (j->p++; *j->p != '"'; j->p++) {
        if ((unsigned char)*j->p < 0x20) return 0;
        if (*j->p == '\\') {
            j->p++;
            if (*j->p == 'u') { int i; for (i = 1; i <= 4; i++) if (!isxdigit((unsigned char)j->p[i])) return 0; j->p += 4; }
            else if (!strchr("\"\\/bfnrt", *j->p) || !*j->p) return 0;
        }
    }
    j->p++;
    return 1;
}
static int js_number(js *j)
{
    const char *s = j->p;
    if (*j->p == '-') j->p++;
    if (*j->p == '0') j->p++;
    else if (*j->p >= '1' && *j->p <= '9') while (isdigit((unsigned char)*j->p)) j->p++;
    else return 0;
    if (*j->p == '.') { j->p++; if (!isdigit((unsigned char)*j->p)) return 0; while (isdigit((unsigned char)*j->p)) j->p++; }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-') j->p++;
        if (!isdigit((unsigned char)*j->p)) return 0;
        while (isdigit((unsigned char)*j->p)) j->p++;
    }
    return j->p > s;
}
static int js_value(js *j)
{
    js_ws(j);
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';
        int obj = *j->p == '{', counting = !obj && j->in_events, events_here = 0;
        j->in_events = 0;
        j->p++;
        j->depth++;
        js_ws(j);
        if (*j->p == close) { j->p++; j->depth--; return 1; }
        for (;;) {
            js_ws(j);
            if (obj) {
                const char *key = j->p;
                if (!js_string(j)) return 0;
                events_here = j->depth == 1 && strncmp(key, "\"traceEvents\"", 13) == 0;
                js_ws(j);
                if (*j->p++ != ':') return 0;
                j->in_events = events_here;
                if (!js_value(j)) return 0;
                j->in_events = 0;
            } else {
                if (counting) j->events++;
                if (!js_value(j)) return 0;
            }
            js_ws(j);
            if (*j->p == ',') { j->p++; continue; }
            if (*j->p == close) { j->p++; j->depth--; return 1; }
            return 0;
        }
    }
    if (*j->p == '"') return js_string(j);
    if (strncmp(j->p, "true", 4) == 0) { j->p += 4; return 1; }
    if (strncmp(j->p, "false", 5) == 0) { j->p += 5; return 1; }
    if (strncmp(j->p, "null", 4) == 0) { j->p += 4; return 1; }
    return js_number(j);
}
static int json_trace_events(const char *text)
{
    js j;
    j.p = text; j.depth = 0; j.events = 0; j.in_events = 0;
    if (!js_value(&j)) return -1;
    js_ws(&j);
    return *j.p ? -1 : j.events;
}
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *s;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = (char *)malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    s[n] = 0;
    fclose(f);
    return s;
}
static int count_sub(const char *s, const char *sub)
{
    int n = 0;
    for (s = strstr(s, sub); s; s = strstr(s + 1, sub)) n++;
    return n;
}

static void test_json_checker(void)   /* the checker itself must reject bad JSON */
{
    CHECK(json_trace_events("{\"traceEvents\":[{\"a\":1},{\"b\":[1,2,{\"c\":-0.5e3}]}],\"x\":\"\\u0041\"}") == 2, "valid");
    CHECK(json_trace_events("{\"traceEvents\":[]}") == 0, "empty");
    CHECK(json_trace_events("{\"traceEvents\":[{\"a\":1},]}") == -1, "trailing comma");
    CHECK(json_trace_events("{\"traceEvents\":[{\"a\":nan}]}") == -1, "nan");
    CHECK(json_trace_events("{\"traceEvents\":[{\"a\":\"x\ny\"}]}") == -1, "raw newline in a string");
    CHECK(json_trace_events("{\"traceEvents\":[{\"a\":01}]}") == -1, "leading zero");
    CHECK(json_trace_events("{\"traceEvents\":[{\"a\":1}]} x") == -1, "trailing text");
}

static void check_trace(int gpu)
{
    gpuml_ctx *ctx = open_ctx(gpu, 1, 0);
    int64_t s[2] = {129, 77};
    gpuml_tensor *a, *b;
    char path[256];
    char *text;
    int n, i;
    if (!ctx) { CHECK(0, "context"); return; }
    a = rand_tensor(ctx, GPUML_F32, 2, s);
    b = gpuml_tensor_new(ctx, GPUML_F32, 2, s);
    gpuml_profile_reset(ctx);
    for (i = 0; i < 3; i++) { gpuml_exp(ctx, b, a); gpuml_mul(ctx, b, b, a); gpuml_copy(ctx, a, b); }
    gpuml_sigmoid(ctx, b, a);
    n = gpuml_profile_count(ctx);
    CHECK(n == 10, "%d records", n);
    /* the pid keeps the plain and the sanitizer build apart when tests/run_all.sh runs them side by side */
    snprintf(path, sizeof path, "build/test_profile_trace_%s_%ld.json", gpu ? "gpu" : "cpu", (long)getpid());
    CHECK(gpuml_profile_write_trace(ctx, path) == GPUML_SUCCESS, "write: %s", gpuml_last_error(ctx));
    text = slurp(path);
    CHECK(text != NULL, "read %s back", path);
    if (text) {
        int events = json_trace_events(text);
        CHECK(events == n, "trace has %d events (-1: invalid JSON), %d records", events, n);
        CHECK(count_sub(text, "\"ph\":\"X\"") == n, "complete events: %d", count_sub(text, "\"ph\":\"X\""));
        CHECK(count_sub(text, "\"name\":\"exp\"") == 3 && strstr(text, "\"shapes\":\"f32 [129,77] -> [129,77]\""), "names and shapes");
        CHECK(strstr(text, "\"flops\":") && strstr(text, "\"bytes\":") && strstr(text, "\"GB/s\":") && strstr(text, "\"TFLOP/s\":"), "args");
        free(text);
    }
    /* python's parser too, where there is one */
    if (system("python3 -c 'import json' > /dev/null 2>&1") == 0) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "python3 -c \"import json,sys; d=json.load(open('%s')); sys.exit(0 if len(d['traceEvents'])==%d "
                 "and all(e['ph']=='X' and e['dur']>=0 for e in d['traceEvents']) else 1)\"", path, n);
        CHECK(system(cmd) == 0, "python3 json.load rejects %s or counts differently", path);
    } else {
        printf("    (python3 not found: the C checker alone validated the trace)\n");
    }
    remove(path);
    gpuml_tensor_free(a); gpuml_tensor_free(b);
    gpuml_shutdown(ctx);
}
static void test_trace_cpu(void) { check_trace(0); }
static void test_trace_gpu(void) { NEED_GPU(); check_trace(1); }

/* GPUML_TRACE writes the trace at shutdown */
static void test_trace_env(void)
{
    gpuml_ctx *ctx = NULL;
    gpuml_desc d;
    int64_t s[1] = {333};
    gpuml_tensor *a;
    char *text;
    char path[256];
    snprintf(path, sizeof path, "build/test_profile_env_trace_%ld.json", (long)getpid());
    remove(path);
    setenv("GPUML_TRACE", path, 1);
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CPU;
    gpuml_init(&ctx, &d);
    unsetenv("GPUML_TRACE");
    a = gpuml_tensor_new(ctx, GPUML_F32, 1, s);
    gpuml_fill(ctx, a, 2.0);
    gpuml_sqrt(ctx, a, a);
    CHECK(gpuml_profile_count(ctx) == 2, "GPUML_TRACE turns profiling on (%d records)", gpuml_profile_count(ctx));
    gpuml_tensor_free(a);
    gpuml_shutdown(ctx);
    text = slurp(path);
    CHECK(text && json_trace_events(text) == 2, "trace written at shutdown: %s", text ? text : "(none)");
    free(text);
    remove(path);
}

static void check_summary(int gpu)
{
    gpuml_ctx *ctx = open_ctx(gpu, 1, 0);
    int64_t big[1] = {1 << 20}, small[1] = {1000};
    gpuml_tensor *a, *b, *c, *d;
    FILE *f = tmpfile();
    char line[512], first[512] = "";
    int lines = 0, header = 0;
    if (!ctx || !f) { CHECK(0, "context / tmpfile"); gpuml_shutdown(ctx); if (f) fclose(f); return; }
    a = rand_tensor(ctx, GPUML_F32, 1, big); b = gpuml_tensor_new(ctx, GPUML_F32, 1, big);
    c = rand_tensor(ctx, GPUML_F32, 1, small); d = gpuml_tensor_new(ctx, GPUML_F32, 1, small);
    gpuml_profile_reset(ctx);
    gpuml_tanh(ctx, b, a); gpuml_tanh(ctx, b, a); gpuml_tanh(ctx, b, a);   /* the most time */
    gpuml_neg(ctx, d, c);
    CHECK(gpuml_profile_print(ctx, f) == GPUML_SUCCESS, "print: %s", gpuml_last_error(ctx));
    rewind(f);
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (strncmp(line, "op ", 3) == 0) { header = lines; continue; }
        if (header && lines == header + 1) snprintf(first, sizeof first, "%s", line);
    }
    fclose(f);
    CHECK(header > 0 && strstr(first, "tanh") && strstr(first, "      3 "), "first row should be tanh x3: \"%s\"", first);
    CHECK(lines == header + 2, "%d lines (header at %d)", lines, header);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c); gpuml_tensor_free(d);
    gpuml_shutdown(ctx);
}
static void test_summary_cpu(void) { check_summary(0); }
static void test_summary_gpu(void) { NEED_GPU(); check_summary(1); }

/* ---- graphs ---- */
typedef struct chain {
    gpuml_tensor *x, *w, *bias, *h, *y, *s;   /* y = gelu(x @ w + bias) * x0 + 0.5; s = sum(y, axis 1) */
    int alloc_tmp;                            /* also make and free a temporary */
    int bad;                                  /* 1: a shape error, 2: a host read, 3: a sync, 4: nested capture */
} chain;
static void chain_fn(gpuml_ctx *ctx, void *user)
{
    chain *c = (chain *)user;
    int axes[1] = {1};
    gpuml_matmul(ctx, c->h, c->x, c->w, NULL);
    gpuml_add(ctx, c->h, c->h, c->bias);
    gpuml_gelu(ctx, c->h, c->h);
    if (c->alloc_tmp) {
        int64_t sh[2];
        gpuml_tensor *t;
        sh[0] = gpuml_tensor_dim(c->h, 0); sh[1] = gpuml_tensor_dim(c->h, 1);
        t = gpuml_tensor_new(ctx, GPUML_F32, 2, sh);
        gpuml_mul_scalar(ctx, t, c->h, 3.0);
        gpuml_mul_scalar(ctx, c->h, t, 1.0 / 3.0);
        gpuml_tensor_free(t);
    }
    gpuml_mul(ctx, c->y, c->h, c->x);
    gpuml_add_scalar(ctx, c->y, c->y, 0.5);
    gpuml_reduce(ctx, GPUML_REDUCE_SUM, c->s, c->y, axes, 1, 0);
    if (c->bad == 1) gpuml_add(ctx, c->s, c->y, c->x);
    if (c->bad == 2) { float v[67]; gpuml_tensor_read(c->bias, v, sizeof v); }
    if (c->bad == 3) gpuml_sync(ctx);
    if (c->bad == 4) { gpuml_graph *g2 = NULL; gpuml_graph_capture(ctx, chain_fn, user, &g2); gpuml_graph_free(g2); }
}
static void chain_make(gpuml_ctx *ctx, chain *c)
{
    int64_t sx[2] = {67, 67}, sb[1] = {67}, ss[1] = {67};
    memset(c, 0, sizeof *c);
    c->x = rand_tensor(ctx, GPUML_F32, 2, sx);
    c->w = rand_tensor(ctx, GPUML_F32, 2, sx);
    c->bias = rand_tensor(ctx, GPUML_F32, 1, sb);
    c->h = gpuml_tensor_new(ctx, GPUML_F32, 2, sx);
    c->y = gpuml_tensor_new(ctx, GPUML_F32, 2, sx);
    c->s = gpuml_tensor_new(ctx, GPUML_F32, 1, ss);
}
static void chain_free(chain *c)
{
    gpuml_tensor_free(c->x); gpuml_tensor_free(c->w); gpuml_tensor_free(c->bias);
    gpuml_tensor_free(c->h); gpuml_tensor_free(c->y); gpuml_tensor_free(c->s);
}
/* the chain run eagerly on the same context, as bits */
static void chain_eager(gpuml_ctx *ctx, chain *c, uint32_t **y, uint32_t **s)
{
    poison(c->y); poison(c->s);
    chain_fn(ctx, c);
    *y = bits_of(c->y);
    *s = bits_of(c->s);
}
static void new_inputs(chain *c)
{
    int64_t n = gpuml_tensor_numel(c->x), i;
    float *h = (float *)malloc(sizeof(float) * (size_t)n);
    for (i = 0; i < n; i++) h[i] = (float)tu_rand();
    gpuml_tensor_write(c->x, h, sizeof(float) * (size_t)n);   /* same buffer, new contents */
    free(h);
}

static void check_graph(int gpu, int graphs_off)
{
    gpuml_ctx *ctx = open_ctx(gpu, 0, graphs_off);
    chain c;
    gpuml_graph *g = NULL;
    gpuml_tensor *keep = NULL;
    uint32_t *ey, *es, *gy, *gs, *before;
    int round, want_cuda = gpu && !graphs_off;
    gpuml_memory_stats m0, m1, m2;
    if (!ctx) { CHECK(0, "context"); return; }
    chain_make(ctx, &c);
    c.alloc_tmp = 1;
    gpuml_sync(ctx);
    gpuml_memory_stats_get(ctx, &m0);
    /* capture first, on a fresh context: the kernels are compiled and loaded inside the capture */
    poison(c.y); poison(c.s);
    before = bits_of(c.y);
    CHECK(gpuml_graph_capture(ctx, chain_fn, &c, &g) == GPUML_SUCCESS, "capture: %s", gpuml_last_error(ctx));
    CHECK(gpuml_graph_is_cuda(g) == want_cuda, "is_cuda %d", gpuml_graph_is_cuda(g));
    gy = bits_of(c.y);
    CHECK(memcmp(gy, before, 4 * 67 * 67) == 0, "capture must not run the ops");
    free(gy); free(before);
    if (want_cuda) {
        /* the temporary freed inside the capture belongs to the graph: a tensor made now (of
           its size) must not get its memory, or every replay would write into it */
        int64_t sx[2] = {67, 67};
        keep = gpuml_tensor_new(ctx, GPUML_F32, 2, sx);
        gpuml_memory_stats_get(ctx, &m1);
        CHECK(m1.in_use > m0.in_use, "graph-owned memory stays in use (%llu vs %llu)", (unsigned long long)m1.in_use, (unsigned long long)m0.in_use);
        gpuml_fill(ctx, keep, 5.0);
    }
    for (round = 0; round < 3; round++) {
        if (round) new_inputs(&c);
        chain_eager(ctx, &c, &ey, &es);
        poison(c.y); poison(c.s);
        CHECK(gpuml_graph_launch(ctx, g) == GPUML_SUCCESS, "launch: %s", gpuml_last_error(ctx));
        if (want_cuda) {   /* more work between launch and read: nothing of the graph's may be reused */
            int64_t sx[2] = {67, 67};
            gpuml_tensor *t = gpuml_tensor_new(ctx, GPUML_F32, 2, sx);
            gpuml_fill(ctx, t, -7.0);
            gpuml_tensor_free(t);
        }
        gy = bits_of(c.y);
        gs = bits_of(c.s);
        CHECK(memcmp(gy, ey, 4 * 67 * 67) == 0, "round %d: replayed y differs from eager", round);
        CHECK(memcmp(gs, es, 4 * 67) == 0, "round %d: replayed s differs from eager", round);
        CHECK(gy[0] != 0xffffffffu && (gy[0] & 0x7f800000u) != 0x7f800000u, "round %d: y[0] not computed", round);
        free(ey); free(es); free(gy); free(gs);
    }
    if (keep) {
        uint32_t *k = bits_of(keep);
        float five = 5.0f;
        uint32_t fb;
        int i, bad = 0;
        memcpy(&fb, &five, 4);
        for (i = 0; i < 67 * 67; i++) bad += k[i] != fb;
        CHECK(bad == 0, "%d elements of a live tensor changed by graph replays", bad);
        free(k);
        gpuml_tensor_free(keep);
    }
    gpuml_graph_free(g);
    gpuml_sync(ctx);
    gpuml_memory_stats_get(ctx, &m2);
    CHECK(m2.in_use == m0.in_use, "in use after graph_free %llu, before %llu", (unsigned long long)m2.in_use, (unsigned long long)m0.in_use);
    CHECK_STATUS(ctx, gpuml_graph_launch(ctx, g), GPUML_ERROR_FREED, "freed");
    chain_free(&c);
    gpuml_shutdown(ctx);
}
static void test_graph_cpu(void) { check_graph(0, 0); }
static void test_graph_gpu(void) { NEED_GPU(); check_graph(1, 0); }
static void test_graph_off_gpu(void) { NEED_GPU(); check_graph(1, 1); }

static void check_graph_errors(int gpu)
{
    gpuml_ctx *ctx = open_ctx(gpu, 0, 0);
    chain c;
    gpuml_graph *g = NULL;
    int bad;
    static const char *const why[5] = { "", "broadcast to", "gpuml_tensor_read: not allowed inside a graph",
                                         "gpuml_sync: not allowed inside a graph", "graphs do not nest" };
    static const gpuml_status want[5] = { GPUML_SUCCESS, GPUML_ERROR_SHAPE, GPUML_ERROR_NOT_SUPPORTED, GPUML_ERROR_NOT_SUPPORTED,
                                          GPUML_ERROR_NOT_SUPPORTED };
    gpuml_memory_stats m0, m1;
    if (!ctx) { CHECK(0, "context"); return; }
    chain_make(ctx, &c);
    gpuml_sync(ctx);
    gpuml_memory_stats_get(ctx, &m0);
    CHECK_STATUS(ctx, gpuml_graph_capture(ctx, NULL, &c, &g), GPUML_ERROR_INVALID_ARGUMENT, "fn is NULL");
    CHECK_STATUS(ctx, gpuml_graph_capture(ctx, chain_fn, &c, NULL), GPUML_ERROR_INVALID_ARGUMENT, "graph is NULL");
    CHECK_STATUS(ctx, gpuml_graph_launch(ctx, NULL), GPUML_ERROR_INVALID_ARGUMENT, "graph is NULL");
    for (bad = 1; bad <= 4; bad++) {
        gpuml_status st;
        uint32_t *ey, *es, *gy;
        c.bad = bad;
        c.alloc_tmp = 1;
        st = gpuml_graph_capture(ctx, chain_fn, &c, &g);
        if (gpu) {   /* the capture runs fn: it fails there, cleanly */
            CHECK_STATUS(ctx, st, want[bad], why[bad]);
            CHECK(g == NULL, "no graph after a failed capture");
        } else {     /* eager: fn runs at launch, which fails the same way */
            CHECK(st == GPUML_SUCCESS && g, "eager capture");
            CHECK_STATUS(ctx, gpuml_graph_launch(ctx, g), want[bad], why[bad]);
            gpuml_graph_free(g);
            g = NULL;
        }
        CHECK(strstr(gpuml_last_error(ctx), "inside the graph") != NULL, "message names the graph: %s", gpuml_last_error(ctx));
        /* the context still works: the stream is out of capture mode */
        c.bad = 0;
        chain_eager(ctx, &c, &ey, &es);
        CHECK(gpuml_sync(ctx) == GPUML_SUCCESS, "sync after a failed capture: %s", gpuml_last_error(ctx));
        CHECK(gpuml_graph_capture(ctx, chain_fn, &c, &g) == GPUML_SUCCESS && g, "capture again: %s", gpuml_last_error(ctx));
        poison(c.y);
        CHECK(gpuml_graph_launch(ctx, g) == GPUML_SUCCESS, "launch: %s", gpuml_last_error(ctx));
        gy = bits_of(c.y);
        CHECK(memcmp(gy, ey, 4 * 67 * 67) == 0, "bad %d: replay after a failed capture differs", bad);
        free(ey); free(es); free(gy);
        gpuml_graph_free(g);
        g = NULL;
    }
    gpuml_sync(ctx);
    gpuml_memory_stats_get(ctx, &m1);
    CHECK(m1.in_use == m0.in_use, "in use %llu after, %llu before", (unsigned long long)m1.in_use, (unsigned long long)m0.in_use);
    chain_free(&c);
    gpuml_shutdown(ctx);
}
static void test_graph_errors_cpu(void) { check_graph_errors(0); }
static void test_graph_errors_gpu(void) { NEED_GPU(); check_graph_errors(1); }

/* the profiler sees each graph launch as one record with the captured ops' figures */
static void check_graph_profile(int gpu)
{
    gpuml_ctx *ctx = open_ctx(gpu, 0, 0);
    chain c;
    gpuml_graph *g = NULL;
    gpuml_profile_record r;
    double flops = 0, bytes = 0;
    int i, n;
    if (!ctx) { CHECK(0, "context"); return; }
    chain_make(ctx, &c);
    gpuml_profile_enable(ctx, 1);
    gpuml_profile_reset(ctx);
    chain_fn(ctx, &c);   /* eager: one record per op */
    n = gpuml_profile_count(ctx);
    CHECK(n == 6, "%d eager records", n);
    for (i = 0; i < n; i++) if (gpuml_profile_get(ctx, i, &r) == GPUML_SUCCESS) { flops += r.flops; bytes += r.bytes; }
    gpuml_profile_reset(ctx);
    CHECK(gpuml_graph_capture(ctx, chain_fn, &c, &g) == GPUML_SUCCESS, "capture: %s", gpuml_last_error(ctx));
    CHECK(gpuml_profile_count(ctx) == 0, "capture records nothing (%d)", gpuml_profile_count(ctx));
    gpuml_graph_launch(ctx, g);
    gpuml_graph_launch(ctx, g);
    CHECK(gpuml_profile_count(ctx) == 2, "%d records for 2 launches", gpuml_profile_count(ctx));
    for (i = 0; i < 2 && i < gpuml_profile_count(ctx); i++) {
        CHECK(gpuml_profile_get(ctx, i, &r) == GPUML_SUCCESS && strcmp(r.name, "graph") == 0, "record %s", r.name);
        CHECK(r.flops == flops && r.bytes == bytes, "graph figures %g %g, ops %g %g", r.flops, r.bytes, flops, bytes);
        CHECK(strcmp(r.shapes, "6 ops") == 0, "graph shapes \"%s\"", r.shapes);
        CHECK(r.time_us > 0, "graph time %g", r.time_us);
    }
    gpuml_graph_free(g);
    chain_free(&c);
    gpuml_shutdown(ctx);
}
static void test_graph_profile_cpu(void) { check_graph_profile(0); }
static void test_graph_profile_gpu(void) { NEED_GPU(); check_graph_profile(1); }

static const tu_test tests[] = {
    { "records_cpu", test_records_cpu }, { "conv_records_cpu", test_conv_records_cpu }, { "conv_records_gpu", test_conv_records_gpu },
    { "records_gpu", test_records_gpu },
    { "off_records_nothing", test_off_records_nothing },
    { "misuse", test_misuse },
    { "copy_vs_events_gpu", test_copy_vs_events_gpu },
    { "json_checker", test_json_checker },
    { "trace_cpu", test_trace_cpu },
    { "trace_gpu", test_trace_gpu },
    { "trace_env", test_trace_env },
    { "summary_cpu", test_summary_cpu },
    { "summary_gpu", test_summary_gpu },
    { "graph_cpu", test_graph_cpu },
    { "graph_gpu", test_graph_gpu },
    { "graph_off_gpu", test_graph_off_gpu },
    { "graph_errors_cpu", test_graph_errors_cpu },
    { "graph_errors_gpu", test_graph_errors_gpu },
    { "graph_profile_cpu", test_graph_profile_cpu },
    { "graph_profile_gpu", test_graph_profile_gpu },
};

int main(int argc, char **argv) { return TU_RUN("test_profile", tests, argc, argv); }
