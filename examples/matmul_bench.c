/* matmul_bench: time and TFLOP/s of C = A @ B for a shape given on the command line.

       make examples
       ./build/matmul_bench M N K [dtype] [iters] [--nt] [--backend auto|cpu|cuda]

   dtype: f32 (default), f16, bf16, fp8_e4m3, fp8_e5m2 (C in bf16), i8 (C in i32).
   A is M x K row-major; B is K x N row-major, or with --nt the transposed view of an N x K
   tensor (the layout of a linear layer's weight; `1 8192 8192 f16 --nt` is a decode step, which
   runs the small-M kernel on sm_80+).  The time is the wall clock between two
   gpuml_sync calls around `iters` back-to-back launches, after a warm-up (which includes the
   kernel's JIT compile); without `iters` it runs about half a second of launches.  On the
   GPU that is the device time plus whatever host time the launches do not hide; on the CPU
   backend it is plain wall time.  A few elements of C are then checked against float64 dot
   products.  The last line is machine-readable:
       result: ms=... tflops=... check=ok|FAILED
   Exit status: 0 done, 1 a gpuml call failed or the check failed, 2 bad arguments, 77 the
   asked-for backend is not usable here. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gpuml_ctx *ctx;

static double now_s(void)
{
#if defined(_WIN32)
    return (double)clock() / CLOCKS_PER_SEC;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

#define CHECK_OK(call) do { gpuml_status s_ = (call); if (s_ != GPUML_SUCCESS) { \
    fprintf(stderr, "matmul_bench: %s failed: %s\n", #call, gpuml_last_error(ctx)); goto done; } } while (0)
#define CHECK_NEW(t, expr) do { if (((t) = (expr)) == NULL) { \
    fprintf(stderr, "matmul_bench: %s failed: %s\n", #expr, gpuml_last_error(ctx)); goto done; } } while (0)

/* element (i, j) of a 2-d tensor as a double, through a one-element view (any dtype) */
static gpuml_status element(gpuml_tensor *t, int64_t i, int64_t j, double *v)
{
    gpuml_tensor *r = gpuml_tensor_slice(t, 0, i, i + 1, 1), *e = r ? gpuml_tensor_slice(r, 1, j, j + 1, 1) : NULL, *f = NULL;
    gpuml_status st = GPUML_SUCCESS;
    if (!e) st = gpuml_last_status(ctx);
    else if (gpuml_tensor_dtype(t) == GPUML_I32) {    /* exact: i8 products can exceed f32's 24 bits */
        int32_t x;
        if ((st = gpuml_tensor_read(e, &x, sizeof x)) == GPUML_SUCCESS) *v = x;
    } else {
        float x;
        int64_t one[2] = {1, 1};
        if ((f = gpuml_tensor_new(ctx, GPUML_F32, 2, one)) == NULL) st = gpuml_last_status(ctx);
        else if ((st = gpuml_copy(ctx, f, e)) == GPUML_SUCCESS && (st = gpuml_tensor_read(f, &x, sizeof x)) == GPUML_SUCCESS)
            *v = x;
    }
    gpuml_tensor_free(f); gpuml_tensor_free(e); gpuml_tensor_free(r);
    return st;
}

/* one row (dim = 0) or column (dim = 1) of a 2-d tensor, as floats (every input dtype is exact in f32) */
static gpuml_status line(gpuml_tensor *t, int dim, int64_t idx, float *out, int64_t n)
{
    gpuml_tensor *v = gpuml_tensor_slice(t, dim, idx, idx + 1, 1), *f = NULL;
    int64_t s[2];
    gpuml_status st;
    s[0] = dim == 0 ? 1 : n; s[1] = dim == 0 ? n : 1;
    if (!v || (f = gpuml_tensor_new(ctx, GPUML_F32, 2, s)) == NULL) st = gpuml_last_status(ctx);
    else if ((st = gpuml_copy(ctx, f, v)) == GPUML_SUCCESS) st = gpuml_tensor_read(f, out, (size_t)n * sizeof(float));
    gpuml_tensor_free(f); gpuml_tensor_free(v);
    return st;
}

/* normal(0, std) numbers; integer tensors get them rounded (gpuml_copy rounds and saturates) */
static gpuml_status fill_random(gpuml_tensor *t, uint64_t seed, double std)
{
    gpuml_tensor *f;
    gpuml_status st;
    int64_t s[2];
    if (gpuml_tensor_dtype(t) != GPUML_I8) return gpuml_rand_normal(ctx, t, seed, 0.0, std);
    s[0] = gpuml_tensor_dim(t, 0); s[1] = gpuml_tensor_dim(t, 1);
    if ((f = gpuml_tensor_new(ctx, GPUML_F32, 2, s)) == NULL) return gpuml_last_status(ctx);
    st = gpuml_rand_normal(ctx, f, seed, 0.0, std);
    if (st == GPUML_SUCCESS) st = gpuml_copy(ctx, t, f);
    gpuml_tensor_free(f);
    return st;
}

static int usage(const char *why)
{
    fprintf(stderr, "matmul_bench: %s\nusage: matmul_bench M N K [f32|f16|bf16|fp8_e4m3|fp8_e5m2|i8] [iters] [--nt] "
                    "[--backend auto|cpu|cuda]\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; gpuml_dtype in, out; double tol; } types[] = {
        /* tolerance on |C - ref| / sum|a*b|: f32 accumulation over K, plus C's own rounding
           (f16/bf16: 2^-11 / 2^-8 relative); i8 -> i32 is exact */
        { "f32", GPUML_F32, GPUML_F32, 1e-5 }, { "f16", GPUML_F16, GPUML_F16, 1e-2 }, { "bf16", GPUML_BF16, GPUML_BF16, 1e-2 },
        { "fp8_e4m3", GPUML_FP8_E4M3, GPUML_BF16, 1e-2 }, { "fp8_e5m2", GPUML_FP8_E5M2, GPUML_BF16, 1e-2 },
        { "i8", GPUML_I8, GPUML_I32, 0.0 }
    };
    gpuml_desc desc;
    gpuml_matmul_desc md;
    gpuml_tensor *a = NULL, *b = NULL, *bv = NULL, *c = NULL;
    int64_t dims[3] = {0, 0, 0}, as[2], bs[2], cs[2], i;
    int ndims = 0, type = 0, have_type = 0, nt = 0, iters = 0, k, rc = 1, warm = 3, checked = 0, check_ok = 1;
    float *arow = NULL, *bcol = NULL;
    double t0, sec = 0, flops, worst = 0, tol;
    uint64_t pick = 0x9e3779b97f4a7c15ULL;
    gpuml_status st;

    memset(&desc, 0, sizeof desc);
    for (k = 1; k < argc; k++) {
        const char *s = argv[k];
        char *end;
        if (strcmp(s, "--nt") == 0) { nt = 1; continue; }
        if (strcmp(s, "--backend") == 0 && k + 1 < argc) {
            const char *v = argv[++k];
            desc.backend = strcmp(v, "cpu") == 0 ? GPUML_BACKEND_CPU : strcmp(v, "cuda") == 0 ? GPUML_BACKEND_CUDA
                         : strcmp(v, "auto") == 0 ? GPUML_BACKEND_AUTO : GPUML_BACKEND_DEFAULT;
            if (desc.backend == GPUML_BACKEND_DEFAULT) return usage("--backend takes auto, cpu or cuda");
            continue;
        }
        if (ndims < 3) {
            long long v = strtoll(s, &end, 10);
            if (*end || v < 1) return usage("M, N and K must be positive integers");
            dims[ndims++] = v;
        } else if (!have_type) {
            for (type = 0; type < (int)(sizeof types / sizeof types[0]); type++)
                if (strcmp(s, types[type].name) == 0) break;
            if (type == (int)(sizeof types / sizeof types[0])) return usage("unknown dtype");
            have_type = 1;
        } else if (iters == 0) {
            long v = strtol(s, &end, 10);
            if (*end || v < 1 || v > 1000000) return usage("iters must be a positive integer");
            iters = (int)v;
        } else return usage("too many arguments");
    }
    if (ndims < 3) return usage("M, N and K are required");

    if ((st = gpuml_init(&ctx, &desc)) != GPUML_SUCCESS) {
        fprintf(stderr, "matmul_bench: gpuml_init: %s\n", gpuml_last_error(ctx));
        gpuml_shutdown(ctx);
        return st == GPUML_ERROR_BACKEND_UNAVAILABLE || st == GPUML_ERROR_LIBRARY_NOT_FOUND ? 77 : 1;
    }
    as[0] = dims[0]; as[1] = dims[2];
    bs[0] = nt ? dims[1] : dims[2]; bs[1] = nt ? dims[2] : dims[1];
    cs[0] = dims[0]; cs[1] = dims[1];
    CHECK_NEW(a, gpuml_tensor_new(ctx, types[type].in, 2, as));
    CHECK_NEW(b, gpuml_tensor_new(ctx, types[type].in, 2, bs));
    CHECK_NEW(c, gpuml_tensor_new(ctx, types[type].out, 2, cs));
    CHECK_NEW(bv, nt ? gpuml_tensor_transpose(b, 0, 1) : gpuml_tensor_reshape(b, 2, bs));   /* the K x N operand */
    CHECK_OK(fill_random(a, 1, types[type].in == GPUML_I8 ? 40.0 : 1.0));
    CHECK_OK(fill_random(b, 2, types[type].in == GPUML_I8 ? 40.0 : 1.0));
    memset(&md, 0, sizeof md);
    printf("matmul_bench: %lld x %lld x %lld, %s -> %s, B %s, on %s (%s)\n", (long long)dims[0], (long long)dims[1],
           (long long)dims[2], types[type].name, gpuml_dtype_name(types[type].out), nt ? "NT (transposed N x K view)" : "NN (K x N)",
           gpuml_backend_name(gpuml_get_backend(ctx)), gpuml_device_name(ctx));
    fflush(stdout);

    /* warm-up (the first call JIT-compiles the kernel on a GPU), then one timed call to size the run */
    t0 = now_s();
    CHECK_OK(gpuml_matmul(ctx, c, a, bv, &md));
    CHECK_OK(gpuml_sync(ctx));
    printf("first   : %.1f ms (includes the kernel's compile or cache load on a GPU)\n", 1e3 * (now_s() - t0));
    for (k = 1; k < warm; k++) CHECK_OK(gpuml_matmul(ctx, c, a, bv, &md));
    CHECK_OK(gpuml_sync(ctx));
    if (iters == 0) {
        t0 = now_s();
        CHECK_OK(gpuml_matmul(ctx, c, a, bv, &md));
        CHECK_OK(gpuml_sync(ctx));
        sec = now_s() - t0;
        iters = sec > 0.25 ? 2 : (int)(0.5 / (sec > 1e-6 ? sec : 1e-6));
        if (iters < 2) iters = 2;
        if (iters > 10000) iters = 10000;
    }
    t0 = now_s();
    for (k = 0; k < iters; k++) CHECK_OK(gpuml_matmul(ctx, c, a, bv, &md));
    CHECK_OK(gpuml_sync(ctx));
    sec = (now_s() - t0) / iters;
    flops = 2.0 * (double)dims[0] * (double)dims[1] * (double)dims[2];
    printf("time    : %.4f ms per call (mean of %d back-to-back calls between two gpuml_sync, after %d warm-up)\n", 1e3 * sec,
           iters, warm);
    printf("rate    : %.3f TFLOP/s = %.1f GFLOP/s (2*M*N*K / time%s)\n", flops / sec * 1e-12, flops / sec * 1e-9,
           types[type].in == GPUML_I8 ? "; integer ops" : "");

    /* spot check: 8 elements of C against float64 dot products of A's row and B's column */
    /* f32 sums of K terms: rounding grows like sqrt(K) (1e-5 covers K = 1024 with a wide margin) */
    tol = types[type].tol * (types[type].in == GPUML_F32 && dims[2] > 1024 ? sqrt((double)dims[2] / 1024.0) : 1.0);
    arow = (float *)malloc((size_t)dims[2] * sizeof(float));
    bcol = (float *)malloc((size_t)dims[2] * sizeof(float));
    if (!arow || !bcol) { fprintf(stderr, "matmul_bench: out of host memory\n"); goto done; }
    for (k = 0; k < 8; k++) {
        int64_t r, col;
        double ref = 0, mag = 0, got = 0, err;
        pick = pick * 6364136223846793005ULL + 1442695040888963407ULL;
        r = k == 0 ? 0 : k == 1 ? dims[0] - 1 : (int64_t)((pick >> 33) % (uint64_t)dims[0]);     /* corners included */
        col = k == 0 ? 0 : k == 1 ? dims[1] - 1 : (int64_t)((pick >> 13) % (uint64_t)dims[1]);
        CHECK_OK(line(a, 0, r, arow, dims[2]));
        CHECK_OK(line(bv, 1, col, bcol, dims[2]));
        CHECK_OK(element(c, r, col, &got));
        for (i = 0; i < dims[2]; i++) { ref += (double)arow[i] * bcol[i]; mag += fabs((double)arow[i] * bcol[i]); }
        err = fabs(got - ref) / (mag > 0 ? mag : 1.0);
        if (!(err <= tol)) check_ok = 0;
        if (err > worst || err != err) worst = err;
        checked++;
    }
    printf("check   : %d elements of C vs float64 dot products: max |C - ref| / sum|a*b| = %.1e (tolerance %.0e) %s\n", checked,
           worst, tol, check_ok ? "ok" : "WRONG");
    printf("result: ms=%.6f tflops=%.4f check=%s\n", 1e3 * sec, flops / sec * 1e-12, check_ok ? "ok" : "FAILED");
    rc = check_ok ? 0 : 1;
done:
    free(arow); free(bcol);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(bv); gpuml_tensor_free(c);
    gpuml_shutdown(ctx);
    return rc;
}
