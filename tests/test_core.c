/* Foundation tests: tensors, views, transfers, copy/cast/fill/rand, errors, memory,
   user kernels, threads.  CPU always; GPU where CUDA works (CPU and GPU must agree). */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#define GPUML_IMPLEMENTATION
#include "harness.h"
#include <stdint.h>
#if !defined(_WIN32)
#include <pthread.h>
#endif

static const gpuml_dtype all_dtypes[] = { GPUML_F32, GPUML_F16, GPUML_BF16, GPUML_I32, GPUML_I8, GPUML_U8, GPUML_FP8_E4M3, GPUML_FP8_E5M2 };
#define NDT ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

/* ---- float64 reference of every dtype's rounding (written independently of the library:
   frexp/ldexp/nearbyint instead of bit manipulation) ---- */
typedef struct fmt { int mbits, emin; double maxf; int sat; int is_int; double imin, imax; } fmt;
static fmt fmt_of(gpuml_dtype d)
{
    fmt f;
    memset(&f, 0, sizeof f);
    switch (d) {
    case GPUML_F16: f.mbits = 10; f.emin = -14; f.maxf = 65504.0; break;
    case GPUML_BF16: f.mbits = 7; f.emin = -126; f.maxf = 3.3895313892515355e38; break;
    case GPUML_FP8_E4M3: f.mbits = 3; f.emin = -6; f.maxf = 448.0; f.sat = 1; break;
    case GPUML_FP8_E5M2: f.mbits = 2; f.emin = -14; f.maxf = 57344.0; f.sat = 1; break;
    case GPUML_I32: f.is_int = 1; f.imin = -2147483648.0; f.imax = 2147483647.0; break;
    case GPUML_I8: f.is_int = 1; f.imin = -128; f.imax = 127; break;
    case GPUML_U8: f.is_int = 1; f.imin = 0; f.imax = 255; break;
    default: f.mbits = 23; f.emin = -126; f.maxf = 3.4028234663852886e38; break;
    }
    return f;
}
/* x (already an f32 value) rounded to dtype d, as a double */
static double ref_round(gpuml_dtype d, double x)
{
    fmt f = fmt_of(d);
    double q, r, a;
    int e;
    if (x != x) return f.is_int ? 0.0 : x;
    if (f.is_int) {
        if (isinf(x)) return x > 0 ? f.imax : f.imin;
        r = nearbyint(x);
        return r < f.imin ? f.imin : r > f.imax ? f.imax : r;
    }
    if (isinf(x)) return f.sat ? (x > 0 ? f.maxf : -f.maxf) : x;
    a = fabs(x);
    if (a == 0) return x;
    frexp(a, &e);                    /* a = m * 2^e, m in [0.5,1): exponent e-1 */
    e -= 1;
    if (e < f.emin) e = f.emin;
    q = ldexp(1.0, e - f.mbits);     /* spacing of representable values near a */
    r = nearbyint(a / q) * q;
    if (r > f.maxf) {
        /* IEEE: beyond max + half an ulp of max rounds to inf; satfinite clamps */
        r = f.sat ? f.maxf : INFINITY;
    }
    return x < 0 ? -r : r;
}

/* host buffer of n elements of dtype d -> doubles */
static void to_double(gpuml_dtype d, const void *buf, double *out, long long n, gpuml_ctx *any)
{
    long long i;
    (void)any;
    for (i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)buf + i * (long long)gpuml_dtype_size(d);
        switch (d) {
        case GPUML_I32: { int32_t v; memcpy(&v, p, 4); out[i] = v; break; }
        case GPUML_I8: out[i] = *(const int8_t *)p; break;
        case GPUML_U8: out[i] = *p; break;
        default: out[i] = gpuml__ld_f32(d, p); break;   /* decoding is exact */
        }
    }
}
/* doubles -> host buffer of dtype d through the library's CPU rounding (for inputs) */
static void from_double(gpuml_dtype d, const double *in, void *buf, long long n)
{
    long long i;
    for (i = 0; i < n; i++) {
        unsigned char *p = (unsigned char *)buf + i * (long long)gpuml_dtype_size(d);
        if (d == GPUML_I32) { int32_t v = (int32_t)in[i]; memcpy(p, &v, 4); }
        else gpuml__st_f32(d, p, (float)in[i]);
    }
}

static gpuml_tensor *upload(gpuml_ctx *ctx, gpuml_dtype d, int nd, const int64_t *sh, const double *vals)
{
    gpuml_tensor *t = gpuml_tensor_new(ctx, d, nd, sh);
    long long n = gpuml_tensor_numel(t);
    void *buf = malloc((size_t)n * gpuml_dtype_size(d) + 1);
    from_double(d, vals, buf, n);
    CHECK(gpuml_tensor_write(t, buf, (size_t)n * gpuml_dtype_size(d)) == GPUML_SUCCESS, "write: %s", gpuml_last_error(ctx));
    free(buf);
    return t;
}
/* reads t into doubles (row-major logical order) */
static double *download(gpuml_tensor *t)
{
    long long n = gpuml_tensor_numel(t);
    gpuml_dtype d = gpuml_tensor_dtype(t);
    void *buf = malloc((size_t)n * gpuml_dtype_size(d) + 1);
    double *out = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    gpuml_status st = gpuml_tensor_read(t, buf, (size_t)n * gpuml_dtype_size(d));
    CHECK(st == GPUML_SUCCESS, "read: %s", gpuml_last_error(gpuml_tensor_ctx(t)));
    to_double(d, buf, out, n, NULL);
    free(buf);
    return out;
}
static gpuml_ctx *ctx_of(int gpu) { return gpu ? tu_gpu : tu_cpu; }

/* ------------------------------------------------------------------ tests ---- */
static void test_dtypes_and_status_strings(void)
{
    int i;
    CHECK(gpuml_dtype_size(GPUML_F32) == 4 && gpuml_dtype_size(GPUML_BF16) == 2 && gpuml_dtype_size(GPUML_FP8_E5M2) == 1, "sizes");
    CHECK(gpuml_dtype_size((gpuml_dtype)99) == 0, "invalid dtype size");
    CHECK(strcmp(gpuml_dtype_name(GPUML_BF16), "bf16") == 0, "name");
    for (i = 0; i >= -15; i--) CHECK(strcmp(gpuml_status_string((gpuml_status)i), "unknown status") != 0, "status %d has a string", i);
    CHECK(strcmp(gpuml_status_string((gpuml_status)-99), "unknown status") == 0, "unknown");
}

static void test_tensor_metadata(void)
{
    int64_t sh[3] = {3, 4, 5};
    gpuml_tensor *t = gpuml_tensor_new(tu_cpu, GPUML_BF16, 3, sh), *s;
    CHECK(t != NULL, "%s", gpuml_last_error(tu_cpu));
    CHECK(gpuml_tensor_ndim(t) == 3 && gpuml_tensor_numel(t) == 60, "ndim/numel");
    CHECK(gpuml_tensor_stride(t, 0) == 20 && gpuml_tensor_stride(t, -1) == 1, "strides");
    CHECK(gpuml_tensor_dim(t, -1) == 5 && gpuml_tensor_is_contiguous(t), "dims");
    s = gpuml_tensor_new(tu_cpu, GPUML_F32, 0, NULL);
    CHECK(s && gpuml_tensor_numel(s) == 1 && gpuml_tensor_ndim(s) == 0, "scalar");
    gpuml_tensor_free(s);
    sh[1] = 0;
    s = gpuml_tensor_new(tu_cpu, GPUML_F32, 3, sh);
    CHECK(s && gpuml_tensor_numel(s) == 0, "empty tensor");
    gpuml_tensor_free(s);
    gpuml_tensor_free(t);
}

/* write then read back, every dtype, both backends, exact bits */
static void test_roundtrip_all_dtypes(void)
{
    int gpu, k;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        if (!ctx) continue;
        for (k = 0; k < NDT; k++) {
            int64_t sh[2] = {37, 129};
            size_t nb = 37 * 129 * gpuml_dtype_size(all_dtypes[k]), i;
            unsigned char *a = (unsigned char *)malloc(nb), *b = (unsigned char *)malloc(nb);
            gpuml_tensor *t = gpuml_tensor_new(ctx, all_dtypes[k], 2, sh);
            for (i = 0; i < nb; i++) { a[i] = (unsigned char)(tu_rand() * 127 + 128); b[i] = 0xAB; }
            CHECK(gpuml_tensor_write(t, a, nb) == GPUML_SUCCESS, "write");
            CHECK(gpuml_tensor_read(t, b, nb) == GPUML_SUCCESS, "read");
            CHECK(memcmp(a, b, nb) == 0, "%s roundtrip on %s", gpuml_dtype_name(all_dtypes[k]), gpu ? "GPU" : "CPU");
            gpuml_tensor_free(t);
            free(a); free(b);
        }
    }
}

/* views: contents through reshape / permute / slice / expand match a host reference */
static void test_views(void)
{
    int gpu;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        int64_t sh[3] = {5, 6, 7}, rs[2] = {30, -1}, ex[4] = {2, 5, 6, 7}, bsh[2] = {1, 7}, bex[2] = {4, 7};
        double vals[210], *got;
        int i, j, k, perm[3] = {2, 0, 1};
        gpuml_tensor *t, *r, *p, *s, *c, *e, *b, *be;
        if (!ctx) continue;
        for (i = 0; i < 210; i++) vals[i] = tu_rand() * 100;
        t = upload(ctx, GPUML_F32, 3, sh, vals);
        r = gpuml_tensor_reshape(t, 2, rs);
        CHECK(r && gpuml_tensor_dim(r, 1) == 7, "reshape -1: %s", gpuml_last_error(ctx));
        got = download(r);
        for (i = 0; i < 210; i++) CHECK(got[i] == (double)(float)vals[i], "reshape elem %d", i);
        free(got);
        p = gpuml_tensor_permute(t, perm);           /* [7,5,6] */
        CHECK(p && !gpuml_tensor_is_contiguous(p), "permute");
        got = download(p);
        for (i = 0; i < 7; i++) for (j = 0; j < 5; j++) for (k = 0; k < 6; k++)
            CHECK(got[(i * 5 + j) * 6 + k] == (double)(float)vals[(j * 6 + k) * 7 + i], "permute elem");
        free(got);
        /* reshape of a permuted view is refused; contiguous() then reshape works */
        CHECK(gpuml_tensor_reshape(p, 2, rs) == NULL, "reshape of non-viewable");
        CHECK(gpuml_last_status(ctx) == GPUML_ERROR_SHAPE && strstr(gpuml_last_error(ctx), "contiguous"), "message");
        c = gpuml_tensor_contiguous(p);
        CHECK(c && gpuml_tensor_is_contiguous(c), "contiguous");
        s = gpuml_tensor_slice(t, 2, 1, -1, 2);      /* [5,6,3]: k = 1,3,5 */
        CHECK(s && gpuml_tensor_dim(s, 2) == 3, "slice");
        got = download(s);
        for (i = 0; i < 5; i++) for (j = 0; j < 6; j++) for (k = 0; k < 3; k++)
            CHECK(got[(i * 6 + j) * 3 + k] == (double)(float)vals[(i * 6 + j) * 7 + 1 + 2 * k], "slice elem");
        free(got);
        e = gpuml_tensor_expand(t, 4, ex);
        CHECK(e && gpuml_tensor_stride(e, 0) == 0, "expand");
        got = download(e);
        for (i = 0; i < 210; i++) CHECK(got[i] == got[i + 210], "expand copies");
        free(got);
        b = gpuml_tensor_slice(t, 0, 2, 3, 1);       /* [1,6,7] */
        gpuml_tensor_free(b);
        b = upload(ctx, GPUML_F32, 2, bsh, vals);
        be = gpuml_tensor_expand(b, 2, bex);
        CHECK(gpuml_tensor_write(be, vals, 4 * 7 * 4) == GPUML_ERROR_ALIAS, "write into expanded view refused");
        /* a view outlives its base */
        gpuml_tensor_free(t);
        got = download(s);
        CHECK(got[0] == (double)(float)vals[1], "view after base freed");
        free(got);
        gpuml_tensor_free(r); gpuml_tensor_free(p); gpuml_tensor_free(s); gpuml_tensor_free(c);
        gpuml_tensor_free(e); gpuml_tensor_free(b); gpuml_tensor_free(be);
    }
}

/* 2-D transposes larger than one 64 x 64 tile (the GPU's tiled transpose kernel), both ways:
   a transposed view into a contiguous tensor, and a contiguous tensor into a transposed view */
static void test_copy_transpose(void)
{
    static const gpuml_dtype dts[3] = { GPUML_F32, GPUML_BF16, GPUML_U8 };
    int gpu, kd, way, i, j;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        if (!ctx) continue;
        for (kd = 0; kd < 3; kd++)
            for (way = 0; way < 2; way++) {
                int64_t R = 130, C = 67, sh[2], th[2];
                double *vals = (double *)malloc(sizeof(double) * (size_t)(R * C)), *got;
                gpuml_tensor *src, *dst, *view;
                for (i = 0; i < R * C; i++) vals[i] = (double)((i * 37 + 11) % 200);
                sh[0] = R; sh[1] = C; th[0] = C; th[1] = R;
                src = upload(ctx, dts[kd], 2, sh, vals);                 /* [R, C] */
                if (way == 0) {                                          /* contiguous [C, R] <- view */
                    view = gpuml_tensor_transpose(src, 0, 1);
                    dst = gpuml_tensor_new(ctx, dts[kd], 2, th);
                    CHECK(gpuml_copy(ctx, dst, view) == GPUML_SUCCESS, "copy: %s", gpuml_last_error(ctx));
                    got = download(dst);
                } else {                                                 /* view of [C, R] <- contiguous */
                    dst = gpuml_tensor_new(ctx, dts[kd], 2, th);
                    view = gpuml_tensor_transpose(dst, 0, 1);
                    CHECK(gpuml_copy(ctx, view, src) == GPUML_SUCCESS, "copy: %s", gpuml_last_error(ctx));
                    got = download(dst);
                }
                for (i = 0; i < C; i++)
                    for (j = 0; j < R; j++)
                        if (got[i * R + j] != vals[j * C + i]) {
                            CHECK(0, "%s transpose way %d at %d,%d: %g vs %g", gpuml_dtype_name(dts[kd]), way, i, j, got[i * R + j], vals[j * C + i]);
                            i = (int)C; break;
                        }
                free(vals); free(got);
                gpuml_tensor_free(src); gpuml_tensor_free(dst); gpuml_tensor_free(view);
            }
    }
}

/* strided copies and strided writes/reads, same dtype: exact */
static void test_copy_strided(void)
{
    int gpu;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        int64_t sh[3] = {9, 17, 33};
        double vals[9 * 17 * 33], *got, *buf;
        int i, j, k, perm[3] = {1, 2, 0}, kd;
        if (!ctx) continue;
        for (i = 0; i < 9 * 17 * 33; i++) vals[i] = tu_rand() * 1000;
        for (kd = 0; kd < NDT; kd++) {
            gpuml_dtype d = all_dtypes[kd];
            gpuml_tensor *t = upload(ctx, d, 3, sh, vals), *p = gpuml_tensor_permute(t, perm), *dst, *dv, *ds;
            int64_t dsh[3] = {17, 33, 9}, big[3] = {17, 40, 9};
            double *ref = download(t);
            dst = gpuml_tensor_new(ctx, d, 3, big);
            gpuml_fill(ctx, dst, 7);
            ds = gpuml_tensor_slice(dst, 1, 3, 36, 1);          /* non-contiguous destination */
            CHECK(gpuml_tensor_dim(ds, 1) == 33, "slice");
            CHECK(gpuml_copy(ctx, ds, p) == GPUML_SUCCESS, "copy: %s", gpuml_last_error(ctx));
            got = download(ds);
            for (i = 0; i < 17; i++) for (j = 0; j < 33; j++) for (k = 0; k < 9; k++)
                if (got[(i * 33 + j) * 9 + k] != ref[(k * 17 + i) * 33 + j]) { CHECK(0, "%s permuted copy at %d,%d,%d", gpuml_dtype_name(d), i, j, k); i = 17; j = 33; break; }
            free(got);
            got = download(dst);                                  /* untouched margins keep 7 */
            for (i = 0; i < 17; i++) for (k = 0; k < 9; k++) CHECK(got[(i * 40 + 0) * 9 + k] == 7 && got[(i * 40 + 39) * 9 + k] == 7, "margin");
            free(got);
            /* write through a strided view, read back */
            dv = gpuml_tensor_permute(t, perm);
            buf = (double *)malloc(sizeof(double) * 9 * 17 * 33);
            {
                size_t es = gpuml_dtype_size(d), nb = es * 9 * 17 * 33;
                unsigned char *hb = (unsigned char *)malloc(nb), *hb2 = (unsigned char *)malloc(nb);
                for (i = 0; i < (int)nb; i++) hb[i] = (unsigned char)(i * 7 + 3);
                CHECK(gpuml_tensor_write(dv, hb, nb) == GPUML_SUCCESS, "strided write");
                CHECK(gpuml_tensor_read(dv, hb2, nb) == GPUML_SUCCESS, "strided read");
                CHECK(memcmp(hb, hb2, nb) == 0, "strided roundtrip %s", gpuml_dtype_name(d));
                free(hb); free(hb2);
            }
            (void)dsh;
            free(buf); free(ref);
            gpuml_tensor_free(t); gpuml_tensor_free(p); gpuml_tensor_free(dst); gpuml_tensor_free(ds); gpuml_tensor_free(dv);
        }
    }
}

/* value set that exercises rounding: random magnitudes over the whole range, ties, specials */
static void cast_inputs(double *v, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        double m = tu_rand();
        int kind = i % 8;
        if (kind == 0) v[i] = m * 4;
        else if (kind == 1) v[i] = m * ldexp(1.0, (int)(tu_rand() * 40));        /* up to 2^40 */
        else if (kind == 2) v[i] = m * ldexp(1.0, -(int)((tu_rand() + 1) * 12)); /* tiny: subnormals */
        else if (kind == 3) v[i] = (double)(int)(m * 300) + 0.5;                 /* integer ties */
        else if (kind == 4) v[i] = (1.0 + ldexp((double)(int)((m + 1) * 8), -4) + ldexp(1.0, -11)) * (m < 0 ? -1 : 1); /* f16/fp8 ties */
        else if (kind == 5) v[i] = m * 70000;
        else if (kind == 6) v[i] = m * 1e9;
        else v[i] = m * 500;
        v[i] = (double)(float)v[i];
    }
    v[0] = NAN; v[1] = INFINITY; v[2] = -INFINITY; v[3] = 65520.0; v[4] = 65519.0; v[5] = 464.0; v[6] = -1e30;
    v[7] = 2147483648.0; v[8] = -0.0; v[9] = 5.960464477539063e-08; v[10] = 2.980232238769531e-08; v[11] = 240.5;
}

static void test_cast_all_pairs(void)
{
    enum { N = 4099 };
    static double in[N], expect[N];
    int a, b, gpu, i;
    cast_inputs(in, N);
    for (a = 0; a < NDT; a++) for (b = 0; b < NDT; b++) {
        gpuml_dtype sd = all_dtypes[a], dd = all_dtypes[b];
        double *res[2] = {0, 0}, *src_vals;
        int64_t sh[1] = {N};
        gpuml_tensor *probe = upload(tu_cpu, sd, 1, sh, in);
        src_vals = download(probe);             /* the inputs as sd holds them */
        gpuml_tensor_free(probe);
        for (i = 0; i < N; i++) {
            double x = src_vals[i];
            if (sd == GPUML_I32 && (dd == GPUML_I8 || dd == GPUML_U8)) expect[i] = ref_round(dd, x);
            else if (sd == dd) expect[i] = x;
            else expect[i] = ref_round(dd, (double)(float)x);   /* through f32, as documented */
        }
        for (gpu = 0; gpu < 2; gpu++) {
            gpuml_ctx *ctx = ctx_of(gpu);
            gpuml_tensor *s, *d;
            if (!ctx) continue;
            s = upload(ctx, sd, 1, sh, in);
            d = gpuml_tensor_new(ctx, dd, 1, sh);
            gpuml_fill(ctx, d, 3);            /* poison */
            CHECK(gpuml_copy(ctx, d, s) == GPUML_SUCCESS, "cast: %s", gpuml_last_error(ctx));
            res[gpu] = download(d);
            for (i = 0; i < N; i++) {
                int ok = (expect[i] != expect[i]) ? res[gpu][i] != res[gpu][i] : res[gpu][i] == expect[i];
                if (!ok) { CHECK(0, "%s->%s on %s: in %.17g got %.17g want %.17g", gpuml_dtype_name(sd), gpuml_dtype_name(dd), gpu ? "GPU" : "CPU", src_vals[i], res[gpu][i], expect[i]); break; }
            }
            gpuml_tensor_free(s); gpuml_tensor_free(d);
        }
        if (res[0] && res[1]) {
            for (i = 0; i < N; i++)
                if (memcmp(&res[0][i], &res[1][i], sizeof(double)) != 0 && !(res[0][i] != res[0][i] && res[1][i] != res[1][i])) {
                    CHECK(0, "%s->%s CPU and GPU differ at %d", gpuml_dtype_name(sd), gpuml_dtype_name(dd), i); break;
                }
        }
        free(res[0]); free(res[1]); free(src_vals);
    }
}

static void test_fill(void)
{
    int gpu, k;
    static const double vals[] = { 1.5, -3.25, 1e10, -1e10, 300.7, 2.5, 3.5 };
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        if (!ctx) continue;
        for (k = 0; k < NDT; k++) {
            int64_t sh[2] = {13, 11};
            size_t v;
            for (v = 0; v < sizeof vals / sizeof vals[0]; v++) {
                gpuml_tensor *t = gpuml_tensor_new(ctx, all_dtypes[k], 2, sh), *sl = gpuml_tensor_slice(t, 1, 0, 11, 3);
                double *got, want = ref_round(all_dtypes[k], all_dtypes[k] == GPUML_I32 ? vals[v] : (double)(float)vals[v]);
                int i;
                CHECK(gpuml_fill(ctx, t, -1) == GPUML_SUCCESS && gpuml_fill(ctx, sl, vals[v]) == GPUML_SUCCESS, "fill");
                got = download(t);
                for (i = 0; i < 13 * 11; i++) {
                    double w = (i % 11) % 3 == 0 ? want : ref_round(all_dtypes[k], -1);
                    if (got[i] != w) { CHECK(0, "fill %s %g: elem %d got %g want %g", gpuml_dtype_name(all_dtypes[k]), vals[v], i, got[i], w); break; }
                }
                free(got);
                gpuml_tensor_free(t); gpuml_tensor_free(sl);
            }
        }
    }
}

/* contiguous fills (16-byte stores from the first 16-byte boundary; element stores before it and
   after the last whole vector): 1-D views starting 0-17 elements into a buffer, of lengths around the
   vector width and a large odd one, every dtype; the elements around the view keep their value */
static void test_fill_contig(void)
{
    static const int64_t lens[] = { 1, 2, 7, 8, 15, 16, 17, 33, 1000003 };
    const int nl = (int)(sizeof lens / sizeof lens[0]);
    int gpu, k;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        if (!ctx) continue;
        for (k = 0; k < NDT; k++) {
            int li, off;
            for (li = 0; li < nl; li++)
                for (off = 0; off < 18; off += li == nl - 1 ? 5 : 1) {
                    int64_t total = lens[li] + 40, i;
                    gpuml_tensor *t = gpuml_tensor_new(ctx, all_dtypes[k], 1, &total), *sl = gpuml_tensor_slice(t, 0, off, off + lens[li], 1);
                    double *got, want = ref_round(all_dtypes[k], 5.0), old = ref_round(all_dtypes[k], -1);
                    CHECK(gpuml_tensor_is_contiguous(sl), "the slice is contiguous");
                    CHECK(gpuml_fill(ctx, t, -1) == GPUML_SUCCESS && gpuml_fill(ctx, sl, 5.0) == GPUML_SUCCESS, "fill: %s", gpuml_last_error(ctx));
                    got = download(t);
                    for (i = 0; i < total; i++) {
                        double w = i >= off && i < off + lens[li] ? want : old;
                        if (got[i] != w) {
                            CHECK(0, "%s fill %s len %lld at +%d: elem %lld got %g want %g", gpu ? "GPU" : "CPU", gpuml_dtype_name(all_dtypes[k]),
                                  (long long)lens[li], off, (long long)i, got[i], w);
                            break;
                        }
                    }
                    free(got);
                    gpuml_tensor_free(t); gpuml_tensor_free(sl);
                }
        }
    }
}

static void test_rand(void)
{
    enum { N = 1 << 20 };
    int64_t sh[2] = {1024, 1024};
    double *u[2] = {0, 0}, *g[2] = {0, 0}, s1 = 0, s2 = 0, mn = 1e9, mx = -1e9;
    int gpu, i, perm[2] = {1, 0};
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        gpuml_tensor *t, *tt, *c;
        double *a, *b;
        if (!ctx) continue;
        t = gpuml_tensor_new(ctx, GPUML_F32, 2, sh);
        CHECK(gpuml_rand_uniform(ctx, t, 1234, -2, 3) == GPUML_SUCCESS, "uniform: %s", gpuml_last_error(ctx));
        u[gpu] = download(t);
        CHECK(gpuml_rand_normal(ctx, t, 99, 0, 1) == GPUML_SUCCESS, "normal");
        g[gpu] = download(t);
        /* layout independence: filling a transposed view gives the transposed numbers */
        tt = gpuml_tensor_permute(t, perm);
        CHECK(gpuml_rand_normal(ctx, tt, 99, 0, 1) == GPUML_SUCCESS, "normal on a view");
        c = gpuml_tensor_contiguous(tt);
        a = download(c);
        for (i = 0; i < N; i++) if (a[i] != g[gpu][i]) { CHECK(0, "layout-dependent at %d", i); break; }
        free(a);
        /* another seed differs */
        CHECK(gpuml_rand_normal(ctx, t, 100, 0, 1) == GPUML_SUCCESS, "normal");
        b = download(t);
        {
            int same = 0;
            for (i = 0; i < 1000; i++) same += b[i] == g[gpu][i];
            CHECK(same < 5, "seeds 99 and 100 agree on %d of 1000", same);
        }
        free(b);
        gpuml_tensor_free(t); gpuml_tensor_free(tt); gpuml_tensor_free(c);
    }
    for (i = 0; i < N; i++) { s1 += u[0][i]; mn = u[0][i] < mn ? u[0][i] : mn; mx = u[0][i] > mx ? u[0][i] : mx; }
    CHECK(mn >= -2 && mx < 3 && fabs(s1 / N - 0.5) < 0.01, "uniform range/mean: %g %g %g", mn, mx, s1 / N);
    s1 = 0;
    for (i = 0; i < N; i++) { s1 += g[0][i]; s2 += g[0][i] * g[0][i]; }
    CHECK(fabs(s1 / N) < 0.005 && fabs(s2 / N - 1) < 0.01, "normal mean %g var %g", s1 / N, s2 / N);
    {   /* tail mass: P(|z| > 2) = 0.0455 */
        int tail = 0;
        for (i = 0; i < N; i++) tail += fabs(g[0][i]) > 2;
        CHECK(fabs((double)tail / N - 0.0455) < 0.002, "normal tail %g", (double)tail / N);
    }
    if (u[1]) {
        CHECK(memcmp(u[0], u[1], sizeof(double) * N) == 0, "uniform: CPU and GPU differ");
        CHECK(memcmp(g[0], g[1], sizeof(double) * N) == 0, "normal: CPU and GPU differ");
    }
    free(u[0]); free(u[1]); free(g[0]); free(g[1]);
}

static void test_misuse(void)
{
    gpuml_ctx *ctx = tu_cpu, *other;
    int64_t sh[2] = {4, 5}, bad[2] = {5, 4}, neg[1] = {-1}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    gpuml_tensor *a = gpuml_tensor_new(ctx, GPUML_F32, 2, sh), *b = gpuml_tensor_new(ctx, GPUML_F32, 2, bad), *c, *f;
    gpuml_desc d;
    int perm_bad[2] = {0, 0};
    float host[20];
    gpuml_kernel_desc kd;
    gpuml_kernel *k;
    gpuml_launch l;
    CHECK_STATUS(ctx, gpuml_copy(ctx, a, b), GPUML_ERROR_SHAPE, "[5,4]");
    CHECK_STATUS(ctx, gpuml_copy(ctx, NULL, b), GPUML_ERROR_INVALID_ARGUMENT, "dst is NULL");
    CHECK_STATUS(ctx, gpuml_fill(ctx, NULL, 1), GPUML_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK(gpuml_tensor_new(ctx, (gpuml_dtype)42, 2, sh) == NULL, "bad dtype");
    CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_DTYPE, "dtype");
    CHECK(gpuml_tensor_new(ctx, GPUML_F32, 1, neg) == NULL, "negative dim");
    CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_SHAPE, "negative");
    CHECK(gpuml_tensor_new(ctx, GPUML_F32, 9, nine) == NULL, "9 dims");
    CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_SHAPE, "ndim");
    CHECK(gpuml_tensor_new(ctx, GPUML_F32, 2, NULL) == NULL, "NULL shape");
    f = gpuml_tensor_reshape(a, 2, bad);
    CHECK(f != NULL, "compatible reshape");
    gpuml_tensor_free(f);
    gpuml_clear_error(ctx);
    CHECK(gpuml_tensor_reshape(a, 1, sh) == NULL, "reshape 20 -> 4");
    CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_SHAPE, "elements");
    CHECK(gpuml_tensor_permute(a, perm_bad) == NULL, "bad perm");
    CHECK(gpuml_tensor_slice(a, 5, 0, 1, 1) == NULL && gpuml_tensor_slice(a, 0, 0, 1, 0) == NULL, "bad slice");
    CHECK(gpuml_tensor_expand(a, 2, bad) == NULL, "bad expand");
    CHECK_STATUS(ctx, gpuml_tensor_write(a, host, 12), GPUML_ERROR_SHAPE, "80 bytes");
    CHECK_STATUS(ctx, gpuml_tensor_write(a, NULL, 80), GPUML_ERROR_INVALID_ARGUMENT, "NULL");
    CHECK_STATUS(ctx, gpuml_rand_uniform(ctx, a, 1, 2, 1), GPUML_ERROR_INVALID_ARGUMENT, "bad parameters");
    /* overlapping copy */
    c = gpuml_tensor_new(ctx, GPUML_F32, 1, bad);
    {
        gpuml_tensor *x = gpuml_tensor_slice(c, 0, 0, 4, 1), *y = gpuml_tensor_slice(c, 0, 1, 5, 1);
        CHECK_STATUS(ctx, gpuml_copy(ctx, y, x), GPUML_ERROR_ALIAS, "overlap");
        CHECK(gpuml_copy(ctx, x, x) == GPUML_SUCCESS, "copy onto itself is a no-op");
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
    /* freed tensor */
    f = gpuml_tensor_new(ctx, GPUML_F32, 2, sh);
    gpuml_tensor_free(f);
    CHECK_STATUS(ctx, gpuml_copy(ctx, a, f), GPUML_ERROR_FREED, "freed");
    gpuml_tensor_free(f);   /* double free is harmless */
    /* another context's tensor */
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CPU;
    CHECK(gpuml_init(&other, &d) == GPUML_SUCCESS, "second context");
    {
        gpuml_tensor *o = gpuml_tensor_new(other, GPUML_F32, 2, sh);
        CHECK_STATUS(ctx, gpuml_copy(ctx, a, o), GPUML_ERROR_WRONG_CONTEXT, "another context");
        gpuml_tensor_free(o);
    }
    gpuml_shutdown(other);
    /* user kernel without CPU function on the CPU */
    memset(&kd, 0, sizeof kd);
    kd.source = "extern \"C\" __global__ void k(float *x) { x[0] = 1; }";
    kd.name = "k";
    k = gpuml_kernel_compile(ctx, &kd);
    CHECK(k != NULL, "compile on CPU keeps the kernel for its CPU function");
    memset(&l, 0, sizeof l);
    CHECK_STATUS(ctx, gpuml_kernel_launch(ctx, k, &l), GPUML_ERROR_NEEDS_GPU, "needs a GPU");
    gpuml_kernel_free(k);
    CHECK_STATUS(ctx, gpuml_kernel_launch(ctx, k, &l), GPUML_ERROR_FREED, "freed");
    kd.name = NULL;
    CHECK(gpuml_kernel_compile(ctx, &kd) == NULL, "no name");
    CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_INVALID_ARGUMENT, "name");
    /* bad desc / environment */
    d.backend = (gpuml_backend)17;
    CHECK(gpuml_init(&other, &d) == GPUML_ERROR_INVALID_ARGUMENT, "bad backend");
    CHECK(strstr(gpuml_last_error(other), "17") != NULL, "message: %s", gpuml_last_error(other));
    gpuml_shutdown(other);
    CHECK(gpuml_init(NULL, &d) == GPUML_ERROR_INVALID_ARGUMENT, "NULL out");
    CHECK(gpuml_sync(NULL) == GPUML_ERROR_INVALID_ARGUMENT, "NULL ctx");
    gpuml_tensor_free(NULL);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c);
}

static void test_env_backend(void)
{
    gpuml_ctx *c;
    gpuml_status st;
#if defined(_WIN32)
    SKIP("setenv not available");
#else
    setenv("GPUML_BACKEND", "bogus", 1);
    st = gpuml_init(&c, NULL);
    CHECK_STATUS(c, st, GPUML_ERROR_INVALID_ARGUMENT, "GPUML_BACKEND=bogus");
    gpuml_shutdown(c);
    setenv("GPUML_BACKEND", "cpu", 1);
    st = gpuml_init(&c, NULL);
    CHECK(st == GPUML_SUCCESS && gpuml_get_backend(c) == GPUML_BACKEND_CPU, "GPUML_BACKEND=cpu");
    CHECK(strstr(gpuml_backend_reason(c), "GPUML_BACKEND") != NULL, "reason: %s", gpuml_backend_reason(c));
    gpuml_shutdown(c);
    unsetenv("GPUML_BACKEND");
    /* an explicit library path that does not exist is an error, never a silent CPU run */
    setenv("GPUML_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    st = gpuml_init(&c, NULL);
    CHECK_STATUS(c, st, GPUML_ERROR_LIBRARY_NOT_FOUND, "/nonexistent/libcuda.so.1");
    gpuml_shutdown(c);
    unsetenv("GPUML_CUDA_LIB");
    if (!tu_gpu && getenv("GPUML_TEST_NO_GPU")) {
        /* the GPU tests are off by request, not because CUDA is unusable: auto may take a GPU */
        st = gpuml_init(&c, NULL);
        CHECK(st == GPUML_SUCCESS, "auto with GPUML_TEST_NO_GPU set: %s", gpuml_last_error(c));
        gpuml_shutdown(c);
    } else if (!tu_gpu) {
        /* no usable CUDA here: auto falls back to the CPU and says why; cuda is an error */
        st = gpuml_init(&c, NULL);
        CHECK(st == GPUML_SUCCESS && gpuml_get_backend(c) == GPUML_BACKEND_CPU, "auto -> CPU");
        CHECK(strncmp(gpuml_backend_reason(c), "CPU: ", 5) == 0 && strlen(gpuml_backend_reason(c)) > 10, "reason: %s", gpuml_backend_reason(c));
        gpuml_shutdown(c);
        setenv("GPUML_BACKEND", "cuda", 1);
        st = gpuml_init(&c, NULL);
        CHECK_STATUS(c, st, GPUML_ERROR_BACKEND_UNAVAILABLE, "CUDA backend unavailable");
        gpuml_shutdown(c);
        unsetenv("GPUML_BACKEND");
    } else {
        st = gpuml_init(&c, NULL);
        CHECK(st == GPUML_SUCCESS && gpuml_get_backend(c) == GPUML_BACKEND_CUDA, "auto -> CUDA");
        CHECK(strncmp(gpuml_backend_reason(c), "CUDA: ", 6) == 0, "reason: %s", gpuml_backend_reason(c));
        gpuml_shutdown(c);
        setenv("GPUML_NVRTC_LIB", "/nonexistent/libnvrtc.so", 1);
        /* the process-wide NVRTC is already loaded: an explicit path must still load itself */
        st = gpuml_init(&c, NULL);
        CHECK_STATUS(c, st, GPUML_ERROR_LIBRARY_NOT_FOUND, "/nonexistent/libnvrtc.so");
        gpuml_shutdown(c);
        unsetenv("GPUML_NVRTC_LIB");
    }
#endif
}

static void test_memory(void)
{
    int gpu;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        gpuml_memory_stats s0, s1, s2, s3;
        int64_t sh[1] = {1 << 20}, huge[2] = {INT64_C(1) << 22, INT64_C(1) << 23};
        gpuml_tensor *t, *u;
        if (!ctx) continue;
        CHECK(gpuml_memory_stats_get(ctx, &s0) == GPUML_SUCCESS, "stats");
        t = gpuml_tensor_new(ctx, GPUML_F32, 1, sh);
        gpuml_memory_stats_get(ctx, &s1);
        CHECK(s1.in_use >= s0.in_use + (4u << 20) && s1.peak >= s1.in_use, "in_use grows");
        gpuml_tensor_free(t);
        gpuml_memory_stats_get(ctx, &s2);
        CHECK(s2.in_use == s0.in_use, "in_use back");
        u = gpuml_tensor_new(ctx, GPUML_F32, 1, sh);
        gpuml_memory_stats_get(ctx, &s3);
        if (gpu) {
            CHECK(s2.cached >= (4u << 20), "freed block cached");
            CHECK(s3.device_allocs == s2.device_allocs, "same-size allocation reused the cached block");
        }
        gpuml_tensor_free(u);
        CHECK(gpuml_memory_release_cache(ctx) == GPUML_SUCCESS, "release");
        gpuml_memory_stats_get(ctx, &s3);
        CHECK(s3.cached == 0, "cache released");
        /* 128 TiB: a clean out-of-memory error */
        t = gpuml_tensor_new(ctx, GPUML_F32, 2, huge);
        CHECK(t == NULL, "huge allocation must fail");
        CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_OUT_OF_MEMORY, "out of");
        gpuml_tensor_free(t);
    }
}

/* a user kernel: saxpy, with a CPU version; compile errors return the NVRTC log */
static gpuml_status saxpy_cpu(const gpuml_launch *l, void *user)
{
    float a = *(float *)l->args[0];
    float *x = *(float **)l->args[1], *y = *(float **)l->args[2];
    int n = *(int *)l->args[3], i;
    (void)user;
    for (i = 0; i < n; i++) y[i] = a * x[i] + y[i];
    return GPUML_SUCCESS;
}
static const char saxpy_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";

static void test_user_kernel(void)
{
    int gpu;
    for (gpu = 0; gpu < 2; gpu++) {
        gpuml_ctx *ctx = ctx_of(gpu);
        gpuml_kernel_desc kd;
        gpuml_kernel *k;
        gpuml_launch l;
        int64_t sh[1] = {1001};
        double xv[1001], yv[1001], *got;
        float a = 2.5f;
        int n = 1001, i;
        void *px, *py, *args[4];
        gpuml_tensor *x, *y;
        if (!ctx) continue;
        for (i = 0; i < n; i++) { xv[i] = tu_rand(); yv[i] = tu_rand(); }
        x = upload(ctx, GPUML_F32, 1, sh, xv);
        y = upload(ctx, GPUML_F32, 1, sh, yv);
        memset(&kd, 0, sizeof kd);
        kd.source = saxpy_src; kd.name = "saxpy"; kd.cpu_fn = saxpy_cpu;
        k = gpuml_kernel_compile(ctx, &kd);
        CHECK(k != NULL, "compile: %s", gpuml_last_error(ctx));
        px = gpuml_tensor_data(x); py = gpuml_tensor_data(y);
        args[0] = &a; args[1] = &px; args[2] = &py; args[3] = &n;
        memset(&l, 0, sizeof l);
        l.grid[0] = (unsigned)(n + 127) / 128; l.block[0] = 128; l.args = args; l.nargs = 4;
        CHECK(gpuml_kernel_launch(ctx, k, &l) == GPUML_SUCCESS, "launch: %s", gpuml_last_error(ctx));
        got = download(y);
        for (i = 0; i < n; i++) {
            double want = (double)(float)((float)a * (float)xv[i] + (float)yv[i]);
            if (fabs(got[i] - want) > 1e-6) { CHECK(0, "saxpy[%d] %g vs %g", i, got[i], want); break; }
        }
        free(got);
        gpuml_kernel_free(k);
        if (gpu) {
            kd.source = "extern \"C\" __global__ void broken(float *x) { x[0] = undefined_name; }";
            kd.name = "broken";
            CHECK(gpuml_kernel_compile(ctx, &kd) == NULL, "compile error");
            CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_COMPILE, "undefined_name");
            kd.source = saxpy_src; kd.name = "not_there";
            CHECK(gpuml_kernel_compile(ctx, &kd) == NULL, "missing kernel");
            CHECK_STATUS(ctx, gpuml_last_status(ctx), GPUML_ERROR_COMPILE, "not_there");
            l.block[0] = 2048;
            kd.name = "saxpy";
            k = gpuml_kernel_compile(ctx, &kd);
            CHECK_STATUS(ctx, gpuml_kernel_launch(ctx, k, &l), GPUML_ERROR_INVALID_ARGUMENT, "threads per block");
            gpuml_kernel_free(k);
        }
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
}

/* several contexts on several threads at once (the shared caches are locked) */
#if !defined(_WIN32)
typedef struct thr_arg { int gpu; double sum; int ok; } thr_arg;
static void *thr_main(void *p)
{
    thr_arg *a = (thr_arg *)p;
    gpuml_ctx *ctx;
    gpuml_desc d;
    int64_t sh[2] = {300, 301};
    memset(&d, 0, sizeof d);
    d.backend = a->gpu ? GPUML_BACKEND_CUDA : GPUML_BACKEND_CPU;
    d.num_threads = 2;
    a->ok = 0;
    if (gpuml_init(&ctx, &d) == GPUML_SUCCESS) {
        gpuml_tensor *t = gpuml_tensor_new(ctx, GPUML_F32, 2, sh), *h = gpuml_tensor_new(ctx, GPUML_F16, 2, sh);
        int perm[2] = {1, 0}, i;
        gpuml_tensor *tt = gpuml_tensor_permute(t, perm), *hh = gpuml_tensor_permute(h, perm);
        static float buf[8][300 * 301];
        float *b = buf[a->sum > 0 ? (int)a->sum : 0];
        int slot = a->sum > 0 ? (int)a->sum : 0;
        if (gpuml_rand_normal(ctx, t, 5, 0, 1) == GPUML_SUCCESS && gpuml_copy(ctx, hh, tt) == GPUML_SUCCESS &&
            gpuml_copy(ctx, tt, hh) == GPUML_SUCCESS && gpuml_tensor_read(t, b, sizeof(float) * 300 * 301) == GPUML_SUCCESS) {
            a->sum = 0;
            for (i = 0; i < 300 * 301; i++) a->sum += b[i];
            a->ok = 1;
        }
        (void)slot;
        gpuml_tensor_free(t); gpuml_tensor_free(h); gpuml_tensor_free(tt); gpuml_tensor_free(hh);
    }
    gpuml_shutdown(ctx);
    return NULL;
}
#endif
static void test_threads(void)
{
#if defined(_WIN32)
    SKIP("pthreads test");
#else
    int gpu, i;
    for (gpu = 0; gpu < 2; gpu++) {
        pthread_t th[4];
        thr_arg a[4];
        if (gpu && !tu_gpu) continue;
        for (i = 0; i < 4; i++) { a[i].gpu = gpu; a[i].sum = i; pthread_create(&th[i], NULL, thr_main, &a[i]); }
        for (i = 0; i < 4; i++) pthread_join(th[i], NULL);
        for (i = 0; i < 4; i++) CHECK(a[i].ok && a[i].sum == a[0].sum, "thread %d on %s: ok %d sum %g vs %g", i, gpu ? "GPU" : "CPU", a[i].ok, a[i].sum, a[0].sum);
    }
#endif
}

/* The CPU pool itself: back-to-back jobs (workers still spinning), jobs after a pause longer
   than the spin (workers asleep), spin off, a nested call (runs serially), more threads than
   cores; every item runs exactly once, on a valid thread index. */
#if defined(__GNUC__) || defined(__clang__)
typedef struct pool_job { int *count; int nthreads, bad_tid, nested; gpuml__pool *pool; } pool_job;
static void pool_inner(void *arg, int64_t b, int64_t e, int tid)
{
    pool_job *j = (pool_job *)arg;
    int64_t i;
    if (tid != 0) __atomic_fetch_add(&j->bad_tid, 1, __ATOMIC_RELAXED);   /* serial: the caller's thread */
    for (i = b; i < e; i++) __atomic_fetch_add(&j->count[1000 + i], 1, __ATOMIC_RELAXED);
}
static void pool_task(void *arg, int64_t b, int64_t e, int tid)
{
    pool_job *j = (pool_job *)arg;
    int64_t i;
    if (tid < 0 || tid >= j->nthreads) __atomic_fetch_add(&j->bad_tid, 1, __ATOMIC_RELAXED);
    for (i = b; i < e; i++) __atomic_fetch_add(&j->count[i], 1, __ATOMIC_RELAXED);
    if (j->nested && b == 0) {
        pool_job k = *j;
        k.nested = 0;
        gpuml__parallel_for(j->pool, 7, 1, pool_inner, &k);
        __atomic_fetch_add(&j->bad_tid, k.bad_tid - j->bad_tid, __ATOMIC_RELAXED);
    }
}
#endif
static void test_pool(void)
{
#if defined(__GNUC__) || defined(__clang__)
    static const int spins[3] = { 200, 0, 20000 };
    int s, saved = gpuml__pool_spin_us;
    static int count[1007];
    for (s = 0; s < 3; s++) {
        gpuml__pool *pool;
        pool_job j;
        int r, i, wrong = 0;
        gpuml__pool_spin_us = spins[s];   /* read by gpuml__pool_new */
        pool = gpuml__pool_new(5);
        CHECK(gpuml__pool_size(pool) == 5, "pool of %d threads", gpuml__pool_size(pool));
        memset(&j, 0, sizeof j);
        j.count = count; j.nthreads = gpuml__pool_size(pool); j.pool = pool;
        for (r = 0; r < 600; r++) {
            int n = 1 + (r * 37) % 1000, nested = r % 50 == 7;
            memset(count, 0, sizeof count);
            j.nested = nested;
            if (r % 100 == 99) {   /* a pause longer than the spin: the workers go to sleep */
                double t0 = gpuml__now_us();
                while (gpuml__now_us() - t0 < (spins[s] > 1000 ? 1000 : spins[s] + 2000)) {}
            }
            gpuml__parallel_for(pool, n, 1 + r % 3, pool_task, &j);
            for (i = 0; i < n; i++) wrong += count[i] != 1;
            for (i = n; i < 1000; i++) wrong += count[i] != 0;
            for (i = 0; i < 7; i++) wrong += count[1000 + i] != (nested ? 1 : 0);
        }
        CHECK(wrong == 0 && j.bad_tid == 0, "spin %d us: %d items ran the wrong number of times, %d bad thread indices",
              spins[s], wrong, j.bad_tid);
        gpuml__pool_free(pool);   /* workers may be spinning: they must stop */
    }
    gpuml__pool_spin_us = saved;
#else
    SKIP("needs GCC / clang atomics in the test");
#endif
}

/* a kernel that faults: the error surfaces at the next sync and the context is marked
   failed.  Runs in a child process (the fault poisons the CUDA context of the process). */
static int fault_child(void)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    gpuml_kernel_desc kd;
    gpuml_kernel *k;
    gpuml_launch l;
    void *bad = (void *)(uintptr_t)0x10, *args[1];
    gpuml_status st;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("child: no GPU\n"); return 2; }
    memset(&kd, 0, sizeof kd);
    kd.source = "extern \"C\" __global__ void boom(float *p) { p[threadIdx.x] = 1.0f; }";
    kd.name = "boom";
    k = gpuml_kernel_compile(ctx, &kd);
    memset(&l, 0, sizeof l);
    args[0] = &bad;
    l.grid[0] = 1; l.block[0] = 32; l.args = args; l.nargs = 1;
    st = gpuml_kernel_launch(ctx, k, &l);
    if (st != GPUML_SUCCESS) { printf("child: launch failed early: %s\n", gpuml_last_error(ctx)); return 3; }
    st = gpuml_sync(ctx);
    printf("child: sync -> %d: %s\n", (int)st, gpuml_last_error(ctx));
    if (st != GPUML_ERROR_CUDA || !strstr(gpuml_last_error(ctx), "CUDA_ERROR_")) return 4;
    st = gpuml_fill(ctx, NULL, 0);
    if (st != GPUML_ERROR_CONTEXT_FAILED) return 5;
    gpuml_kernel_free(k);
    gpuml_shutdown(ctx);
    return 0;
}
static const char *self_path;
static void test_async_fault(void)
{
    char cmd[1024];
    int rc;
    NEED_GPU();
    if (getenv("GPUML_TEST_NO_FAULT")) SKIP("GPUML_TEST_NO_FAULT set (under compute-sanitizer the planted fault is reported as an error)");
    snprintf(cmd, sizeof cmd, "%s --fault-child", self_path);
    rc = system(cmd);
    CHECK(rc == 0, "fault child exited %d", rc);
}


/* the vectorized CPU bf16 row conversions give the same bits as the scalar ones (shared.h) */
static void test_bf16_row_conversions(void)
{
    enum { N = 4099 };
    static float v[N], back[N];
    static unsigned char o[2 * N];
    unsigned long long x;
    int i = 0, bad = 0;
    for (x = 0; x < 0x100000000ULL && i < N; x += 1048573ULL, i++) { unsigned u = (unsigned)x; memcpy(&v[i], &u, 4); }
    v[0] = NAN; v[1] = -INFINITY; v[2] = 3.3895314e38f; v[3] = -0.0f;
    gpuml__cpu_st(GPUML_BF16, (char *)o, 2, i, v);
    gpuml__cpu_ld(GPUML_BF16, (const char *)o, 2, i, back);
    for (x = 0; (int)x < i; x++) {
        unsigned short h;
        float f;
        memcpy(&h, o + 2 * x, 2);
        f = gpuml__bf16_to_f32(h);
        bad += h != gpuml__f32_to_bf16(v[x]) || memcmp(&f, &back[x], 4) != 0;
    }
    CHECK(bad == 0, "%d of %d bf16 conversions differ from the scalar ones", bad, i);
}

static const tu_test tests[] = {
    { "dtypes_and_status_strings", test_dtypes_and_status_strings },
    { "tensor_metadata", test_tensor_metadata },
    { "roundtrip_all_dtypes", test_roundtrip_all_dtypes },
    { "views", test_views },
    { "copy_strided", test_copy_strided }, { "copy_transpose", test_copy_transpose },
    { "cast_all_pairs", test_cast_all_pairs },
    { "bf16_row_conversions", test_bf16_row_conversions },
    { "fill", test_fill },
    { "fill_contig", test_fill_contig },
    { "rand", test_rand },
    { "misuse", test_misuse },
    { "env_backend", test_env_backend },
    { "memory", test_memory },
    { "user_kernel", test_user_kernel },
    { "threads", test_threads },
    { "pool", test_pool },
    { "async_fault", test_async_fault },
};

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--fault-child") == 0) return fault_child();
    return TU_RUN("test_core", tests, argc, argv);
}
