/* Tests of the memory-bound ops (gpuml.h: "elementwise, reduction, normalization and training ops"): every op against a float64 reference on
   fresh random inputs, odd and large shapes, strided views, each dtype, poisoned outputs,
   on the CPU and (where present) the GPU; NaN/Inf propagation; gradients against finite
   differences; bad arguments. */
#define GPUML_IMPLEMENTATION
#include "harness.h"
#define TT_PI 3.14159265358979323846

/* ---------------------------------------------------------------- helpers ---- */
static const gpuml_dtype FDT[3] = { GPUML_F32, GPUML_F16, GPUML_BF16 };
static double tol_of(gpuml_dtype d) { return d == GPUML_F32 ? 1e-5 : d == GPUML_F16 ? 4e-3 : 2e-2; }

static double round_to(gpuml_dtype d, double v)
{
    unsigned char b[4];
    gpuml__st_f32(d, b, (float)v);
    return gpuml__ld_f32(d, b);
}
static long long numel_of(int ndim, const int64_t *s) { long long n = 1; int i; for (i = 0; i < ndim; i++) n *= s[i]; return n; }

/* a tensor of the given shape: layout 0 contiguous, 1 a transposed view (last two dims),
   2 every other element of a wider tensor (sliced) */
static gpuml_tensor *tt_new(gpuml_ctx *ctx, gpuml_dtype dt, int ndim, const int64_t *shape, int layout)
{
    int64_t s[GPUML_MAX_DIMS];
    gpuml_tensor *base, *v;
    int i;
    for (i = 0; i < ndim; i++) s[i] = shape[i];
    if (layout == 0 || ndim == 0 || (layout == 1 && ndim < 2)) return gpuml_tensor_new(ctx, dt, ndim, shape);
    if (layout == 1) {
        s[ndim - 1] = shape[ndim - 2]; s[ndim - 2] = shape[ndim - 1];
        base = gpuml_tensor_new(ctx, dt, ndim, s);
        v = gpuml_tensor_transpose(base, ndim - 2, ndim - 1);
    } else if (layout == 2) {
        s[ndim - 1] = shape[ndim - 1] * 2 + 1;
        base = gpuml_tensor_new(ctx, dt, ndim, s);
        v = gpuml_tensor_slice(base, ndim - 1, 1, s[ndim - 1], 2);
    } else {   /* 3: rows padded by 8 elements, starting 8 in (16-byte aligned for 16-bit); 4: by 1, 1 in */
        const int pad = layout == 3 ? 8 : 1;
        s[ndim - 1] = shape[ndim - 1] + pad;
        base = gpuml_tensor_new(ctx, dt, ndim, s);
        v = gpuml_tensor_slice(base, ndim - 1, pad, s[ndim - 1], 1);
    }
    gpuml_tensor_free(base);
    return v;
}
/* host bytes <-> doubles */
static void to_bytes(gpuml_dtype d, const double *v, long long n, void *out)
{
    long long i;
    size_t es = gpuml_dtype_size(d);
    for (i = 0; i < n; i++) {
        if (d == GPUML_I32) { int32_t x = (int32_t)v[i]; memcpy((char *)out + i * 4, &x, 4); }
        else gpuml__st_f32(d, (char *)out + (size_t)i * es, (float)v[i]);
    }
}
static void tt_write(gpuml_tensor *t, const double *v)
{
    long long n = gpuml_tensor_numel(t);
    size_t nb = (size_t)n * gpuml_dtype_size(gpuml_tensor_dtype(t));
    void *buf = calloc(nb + 1, 1);
    to_bytes(gpuml_tensor_dtype(t), v, n, buf);
    CHECK(gpuml_tensor_write(t, buf, nb) == GPUML_SUCCESS, "write: %s", gpuml_last_error(gpuml_tensor_ctx(t)));
    free(buf);
}
static double *tt_read(const gpuml_tensor *t)
{
    long long n = gpuml_tensor_numel(t), i;
    gpuml_dtype d = gpuml_tensor_dtype(t);
    size_t es = gpuml_dtype_size(d);
    unsigned char *buf = (unsigned char *)malloc((size_t)n * es + 1);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    gpuml_status st = gpuml_tensor_read(t, buf, (size_t)n * es);
    CHECK(st == GPUML_SUCCESS, "read: %s", gpuml_last_error(gpuml_tensor_ctx(t)));
    for (i = 0; i < n; i++) {
        if (d == GPUML_I32) { int32_t x; memcpy(&x, buf + i * 4, 4); v[i] = x; }
        else v[i] = gpuml__ld_f32(d, buf + (size_t)i * es);
    }
    free(buf);
    return v;
}
/* fresh random values in [lo, hi), never zero, rounded to the dtype; returned as doubles */
static double *tt_rand(gpuml_tensor *t, double lo, double hi)
{
    long long n = gpuml_tensor_numel(t), i;
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    for (i = 0; i < n; i++) {
        double x = lo + (hi - lo) * (tu_rand() + 1.0) * 0.5;
        if (x == 0.0) x = 0.125;
        v[i] = round_to(gpuml_tensor_dtype(t), x);
    }
    tt_write(t, v);
    return v;
}
static void poison(gpuml_ctx *ctx, gpuml_tensor *t)
{
    CHECK(gpuml_fill(ctx, t, gpuml_tensor_dtype(t) == GPUML_I32 ? -7.0 : NAN) == GPUML_SUCCESS, "fill: %s", gpuml_last_error(ctx));
}
/* the contexts to run on: CPU, and the GPU where there is one */
static int nctx(void) { return tu_gpu ? 2 : 1; }
static gpuml_ctx *ctx_at(int i) { return i == 0 ? tu_cpu : tu_gpu; }
static const char *cname(int i) { return i == 0 ? "cpu" : "gpu"; }

/* row-major index helpers for references */
static void unravel(long long i, int ndim, const int64_t *s, int64_t *idx)
{
    int d;
    for (d = ndim - 1; d >= 0; d--) { idx[d] = i % s[d]; i /= s[d]; }
}
/* index into a (row-major dense) operand of shape os broadcast to shape s */
static long long bcast_index(const int64_t *idx, int ndim, int ondim, const int64_t *os)
{
    long long k = 0;
    int d;
    for (d = 0; d < ondim; d++) {
        int j = d + ndim - ondim;
        k = k * os[d] + (os[d] == 1 ? 0 : idx[j]);
    }
    return k;
}

/* ---------------------------------------------------------------- elementwise ---- */
static double ref_binary(int op, double a, double b)
{
    switch (op) {
    case GPUML_BINARY_ADD: return a + b;
    case GPUML_BINARY_SUB: return a - b;
    case GPUML_BINARY_MUL: return a * b;
    case GPUML_BINARY_DIV: return a / b;
    case GPUML_BINARY_MAXIMUM: return (a != a || b != b) ? NAN : a > b ? a : b;
    case GPUML_BINARY_MINIMUM: return (a != a || b != b) ? NAN : a < b ? a : b;
    default: return pow(a, b);
    }
}
static double ref_unary(int op, double x)
{
    switch (op) {
    case GPUML_UNARY_NEG: return -x;
    case GPUML_UNARY_ABS: return fabs(x);
    case GPUML_UNARY_EXP: return exp(x);
    case GPUML_UNARY_LOG: return log(x);
    case GPUML_UNARY_SQRT: return sqrt(x);
    case GPUML_UNARY_RSQRT: return 1.0 / sqrt(x);
    case GPUML_UNARY_SIN: return sin(x);
    case GPUML_UNARY_COS: return cos(x);
    case GPUML_UNARY_TANH: return tanh(x);
    case GPUML_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case GPUML_UNARY_RELU: return x != x ? x : x > 0 ? x : 0;
    /* 1 + erf(x/sqrt2) = erfc(-x/sqrt2) and 1 + tanh(u) = 2/(1 + exp(-2u)), exactly, without
       the cancellation that would make the float64 reference 0 in the negative tail */
    case GPUML_UNARY_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case GPUML_UNARY_GELU_TANH: return x / (1.0 + exp(-2.0 * sqrt(2.0 / TT_PI) * (x + 0.044715 * x * x * x)));
    default: return x / (1.0 + exp(-x));
    }
}

/* one binary case: shapes of a, b (broadcast), layouts, dtype */
static void binary_case(gpuml_ctx *ctx, const char *cn, int op, gpuml_dtype dt, int na, const int64_t *sa, int nb,
                        const int64_t *sb, int la, int lb)
{
    int64_t so[GPUML_MAX_DIMS], idx[GPUML_MAX_DIMS];
    int no = na > nb ? na : nb, d;
    gpuml_tensor *a, *b, *o;
    double *va, *vb, *vo, *ref, alo = -2, ahi = 2, blo = -2, bhi = 2;
    long long n, i;
    char what[200];
    for (d = 0; d < no; d++) {
        int ja = d - (no - na), jb = d - (no - nb);
        int64_t x = ja >= 0 ? sa[ja] : 1, y = jb >= 0 ? sb[jb] : 1;
        so[d] = x == 1 ? y : x;
    }
    if (op == GPUML_BINARY_DIV) { blo = 0.5; bhi = 2; }
    if (op == GPUML_BINARY_POW) { alo = 0.1; ahi = 2; }
    a = tt_new(ctx, dt, na, sa, la);
    b = tt_new(ctx, dt, nb, sb, lb);
    o = tt_new(ctx, dt, no, so, 0);
    va = tt_rand(a, alo, ahi);
    vb = tt_rand(b, blo, bhi);
    poison(ctx, o);
    CHECK(gpuml_binary(ctx, (gpuml_binary_op)op, o, a, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    vo = tt_read(o);
    n = numel_of(no, so);
    ref = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    for (i = 0; i < n; i++) {
        unravel(i, no, so, idx);
        ref[i] = ref_binary(op, va[bcast_index(idx, no, na, sa)], vb[bcast_index(idx, no, nb, sb)]);
    }
    snprintf(what, sizeof what, "%s binary op %d %s layouts %d/%d n=%lld", cn, op, gpuml_dtype_name(dt), la, lb, n);
    tu_close(what, vo, ref, n, tol_of(dt), tol_of(dt) * 1e-1);
    free(va); free(vb); free(vo); free(ref);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o);
}

static void test_binary(void)
{
    int c, op, t;
    static const int64_t s1[1] = {1023}, s2[3] = {3, 1, 5}, s3[2] = {4, 1}, s4[1] = {1}, s5[2] = {33, 65}, s6[2] = {1, 65};
    static const int64_t s7[1] = {4097};
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (op = 0; op <= GPUML_BINARY_POW; op++) {
                binary_case(ctx_at(c), cname(c), op, FDT[t], 1, s1, 1, s1, 0, 0);
                binary_case(ctx_at(c), cname(c), op, FDT[t], 3, s2, 2, s3, 0, 0);
                binary_case(ctx_at(c), cname(c), op, FDT[t], 1, s7, 1, s4, 0, 0);
                binary_case(ctx_at(c), cname(c), op, FDT[t], 2, s5, 2, s5, 1, 2);
                binary_case(ctx_at(c), cname(c), op, FDT[t], 2, s5, 2, s6, 2, 0);
            }
}

/* broadcasts along whole rows (the GPU's gpuml_ew_rows: inner dim a multiple of the 16-byte vector,
   stride 1 in the output, 1 or 0 in each input) and the shapes next to it that take the strided
   kernel: a bias row, [M][1][C] with [4][C], a column broadcast along the row (inner stride 0) on
   either side, padded rows (row stride 72), rows one element off alignment, and 60 columns
   (a whole number of f32 vectors, not of 16-bit ones) */
static void test_binary_rows(void)
{
    static const int64_t m64[2] = {37, 64}, b64[1] = {64}, a3[3] = {33, 1, 64}, b3[2] = {4, 64}, m40[2] = {37, 40}, c40[2] = {37, 1};
    static const int64_t m60[2] = {9, 60}, b60[1] = {60}, a4[4] = {2, 1, 3, 16}, b4[3] = {5, 1, 16};
    int c, t;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++) {
            gpuml_ctx *ctx = ctx_at(c);
            binary_case(ctx, cname(c), GPUML_BINARY_ADD, FDT[t], 2, m64, 1, b64, 0, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_MUL, FDT[t], 3, a3, 2, b3, 0, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_SUB, FDT[t], 2, m40, 2, c40, 0, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_DIV, FDT[t], 2, c40, 2, m40, 0, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_ADD, FDT[t], 2, m64, 1, b64, 3, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_MAXIMUM, FDT[t], 2, m64, 1, b64, 4, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_MINIMUM, FDT[t], 2, m60, 1, b60, 0, 0);
            binary_case(ctx, cname(c), GPUML_BINARY_POW, FDT[t], 4, a4, 3, b4, 0, 0);
        }
    if (tu_gpu) {   /* the re-read inputs streamed past L1 too (gpuml__ew_tune[4]), not only kept there */
        gpuml__ew_tune[4] = 2;
        for (t = 0; t < 3; t++) {
            binary_case(tu_gpu, "gpu (rows streamed)", GPUML_BINARY_ADD, FDT[t], 2, m64, 1, b64, 0, 0);
            binary_case(tu_gpu, "gpu (rows streamed)", GPUML_BINARY_MUL, FDT[t], 3, a3, 2, b3, 0, 0);
        }
        gpuml__ew_tune[4] = 0;
    }
}

/* f16 through the broadcast rows kernel (the GPU converts whole vectors, with one NaN test a vector
   and a per-element path for vectors that hold one): a [9][64] of f16 bit patterns -- every
   16-element run a different mix of normals, subnormals, +-0, +-inf and NaNs of either sign and
   several payloads -- times a row of ones and plus a row of zeros.  Results: the same bits for every
   non-NaN (subnormals and -0 kept), a NaN for every NaN, on each context, and an f16 -> f32
   maximum: the f16 values exactly (f32 bits), NaN for NaN. */
static void test_f16_rows_specials(void)
{
    static const int64_t sa[2] = {9, 64}, sb[1] = {64};
    static const uint16_t special[12] = { 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x0001, 0x83ff, 0x0000, 0x8000,
                                          0x7bff, 0x0400 };
    uint16_t in[9 * 64], out[9 * 64], row[64];
    int c, i, k;
    for (i = 0; i < 9 * 64; i++) {   /* normals of magnitude [0.5, 2), a third negative; then specials in most runs */
        uint16_t h = (uint16_t)(0x3800 + (unsigned)((tu_rand() + 1.0) * 0.5 * 2047.0));
        in[i] = (uint16_t)(h | (i % 3 == 0 ? 0x8000 : 0));
    }
    for (k = 0; k < 9 * 64 / 16; k++)
        if (k % 3 != 1)   /* every third run stays all finite normals: the vector fast path */
            for (i = 0; i < 1 + k % 4; i++) in[k * 16 + (k * 5 + i * 7) % 16] = special[(k + i) % 12];
    for (c = 0; c < nctx(); c++) {
        gpuml_ctx *ctx = ctx_at(c);
        gpuml_tensor *a = gpuml_tensor_new(ctx, GPUML_F16, 2, sa), *b = gpuml_tensor_new(ctx, GPUML_F16, 1, sb);
        gpuml_tensor *o = gpuml_tensor_new(ctx, GPUML_F16, 2, sa), *o32 = gpuml_tensor_new(ctx, GPUML_F32, 2, sa);
        gpuml_tensor *b32 = gpuml_tensor_new(ctx, GPUML_F32, 1, sb);
        float f32row[64], got32[9 * 64];
        int op, bad = 0, first = -1;
        CHECK(gpuml_tensor_write(a, in, sizeof in) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        for (op = 0; op < 2; op++) {
            for (i = 0; i < 64; i++) row[i] = op == 0 ? 0x3c00 : 0x8000;   /* * 1, + (-0): exact, keeps -0 */
            CHECK(gpuml_tensor_write(b, row, sizeof row) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            poison(ctx, o);
            CHECK(gpuml_binary(ctx, op == 0 ? GPUML_BINARY_MUL : GPUML_BINARY_ADD, o, a, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            CHECK(gpuml_tensor_read(o, out, sizeof out) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            for (i = 0, bad = 0, first = -1; i < 9 * 64; i++) {
                const int nan_in = (in[i] & 0x7fff) > 0x7c00, nan_out = (out[i] & 0x7fff) > 0x7c00;
                if (nan_in ? !nan_out : out[i] != in[i]) { bad++; if (first < 0) first = i; }
            }
            CHECK(bad == 0, "%s f16 rows %s: %d of %d off (first at %d: in 0x%04x, out 0x%04x)", cname(c), op == 0 ? "* 1" : "+ -0",
                  bad, 9 * 64, first, first >= 0 ? in[first] : 0, first >= 0 ? out[first] : 0);
        }
        /* max(f16, a row of f32 -inf) -> f32: the f16 value itself (bits), a NaN for a NaN */
        for (i = 0; i < 64; i++) f32row[i] = -INFINITY;
        CHECK(gpuml_tensor_write(b32, f32row, sizeof f32row) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        poison(ctx, o32);
        CHECK(gpuml_maximum(ctx, o32, a, b32) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        CHECK(gpuml_tensor_read(o32, got32, sizeof got32) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        for (i = 0, bad = 0, first = -1; i < 9 * 64; i++) {
            float want = gpuml__f16_to_f32(in[i]);
            uint32_t wb, gb;
            memcpy(&wb, &want, 4); memcpy(&gb, &got32[i], 4);
            if ((in[i] & 0x7fff) > 0x7c00 ? !(got32[i] != got32[i]) : wb != gb) { bad++; if (first < 0) first = i; }
        }
        CHECK(bad == 0, "%s f16 rows max -> f32: %d of %d off (first at %d: in 0x%04x)", cname(c), bad, 9 * 64, first,
              first >= 0 ? in[first] : 0);
        gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o); gpuml_tensor_free(o32); gpuml_tensor_free(b32);
    }
}

/* short rows (the CPU gathers up to 512 elements of whole rows of <= 128 into one tile,
   gpuml__ew_row_block): gelu of a transposed view (rows of 40, input stride 33), 3 - x and x - 3 on
   a sliced view (rows of 33, every other element), clamp on rows of 8, where with a mask row and a
   column broadcast (rows of 24), each against float64 on each context and dtype */
static void test_short_rows(void)
{
    static const int64_t st[2] = {33, 40}, ss[2] = {50, 33}, sc[2] = {70, 8}, sw[2] = {45, 24}, smk[1] = {24}, scol[2] = {45, 1};
    int c, t, k;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++) {
            gpuml_ctx *ctx = ctx_at(c);
            gpuml_dtype dt = FDT[t];
            char what[120];
            long long n, i;
            gpuml_tensor *x, *o, *m, *a, *b;
            double *vx, *vo, *ref, *va, *vb, vm[24];
            /* gelu, input transposed: out [33][40] contiguous, x a [40][33] tensor's transpose */
            x = tt_new(ctx, dt, 2, st, 1); o = tt_new(ctx, dt, 2, st, 0); n = 33 * 40;
            vx = tt_rand(x, -3, 3); ref = (double *)malloc(sizeof(double) * (size_t)n);
            poison(ctx, o);
            CHECK(gpuml_gelu(ctx, o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vo = tt_read(o);
            for (i = 0; i < n; i++) ref[i] = ref_unary(GPUML_UNARY_GELU, vx[i]);
            snprintf(what, sizeof what, "%s short rows gelu %s", cname(c), gpuml_dtype_name(dt));
            tu_close(what, vo, ref, n, dt == GPUML_F32 ? 2e-5 : tol_of(dt), dt == GPUML_F32 ? 1e-6 : 1e-3);
            free(vx); free(vo); free(ref); gpuml_tensor_free(x); gpuml_tensor_free(o);
            /* x - 3 and 3 - x, x every other element of wider rows */
            x = tt_new(ctx, dt, 2, ss, 2); o = tt_new(ctx, dt, 2, ss, 0); n = 50 * 33;
            vx = tt_rand(x, -2, 2); ref = (double *)malloc(sizeof(double) * (size_t)n);
            for (k = 0; k < 2; k++) {
                poison(ctx, o);
                CHECK((k ? gpuml_scalar_binary(ctx, GPUML_BINARY_SUB, o, 3.0, x) : gpuml_binary_scalar(ctx, GPUML_BINARY_SUB, o, x, 3.0))
                      == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                vo = tt_read(o);
                for (i = 0; i < n; i++) ref[i] = k ? 3.0 - vx[i] : vx[i] - 3.0;
                snprintf(what, sizeof what, "%s short rows %s %s", cname(c), k ? "3 - x" : "x - 3", gpuml_dtype_name(dt));
                tu_close(what, vo, ref, n, tol_of(dt), tol_of(dt) * 1e-1);
                free(vo);
            }
            free(vx); free(ref); gpuml_tensor_free(x); gpuml_tensor_free(o);
            /* clamp, rows of 8 of a padded view */
            x = tt_new(ctx, dt, 2, sc, 3); o = tt_new(ctx, dt, 2, sc, 0); n = 70 * 8;
            vx = tt_rand(x, -2, 2); ref = (double *)malloc(sizeof(double) * (size_t)n);
            poison(ctx, o);
            CHECK(gpuml_clamp(ctx, o, x, -0.5, 0.75) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vo = tt_read(o);
            for (i = 0; i < n; i++) ref[i] = vx[i] < -0.5 ? -0.5 : vx[i] > 0.75 ? 0.75 : vx[i];
            snprintf(what, sizeof what, "%s short rows clamp %s", cname(c), gpuml_dtype_name(dt));
            tu_close(what, vo, ref, n, 0, 0);
            free(vx); free(vo); free(ref); gpuml_tensor_free(x); gpuml_tensor_free(o);
            /* where(mask[24], a[45][24], b[45][1]) */
            m = tt_new(ctx, GPUML_U8, 1, smk, 0); a = tt_new(ctx, dt, 2, sw, 0); b = tt_new(ctx, dt, 2, scol, 0); o = tt_new(ctx, dt, 2, sw, 0);
            for (i = 0; i < 24; i++) vm[i] = tu_rand() > 0 ? 1 : 0;
            tt_write(m, vm);
            va = tt_rand(a, -2, 2); vb = tt_rand(b, 5, 6); n = 45 * 24; ref = (double *)malloc(sizeof(double) * (size_t)n);
            poison(ctx, o);
            CHECK(gpuml_where(ctx, o, m, a, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vo = tt_read(o);
            for (i = 0; i < n; i++) ref[i] = vm[i % 24] != 0 ? va[i] : vb[i / 24];
            snprintf(what, sizeof what, "%s short rows where %s", cname(c), gpuml_dtype_name(dt));
            tu_close(what, vo, ref, n, 0, 0);
            free(va); free(vb); free(vo); free(ref);
            gpuml_tensor_free(m); gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o);
        }
}

/* mixed dtypes promote; scalar forms; in place */
static void test_binary_mixed_scalar_inplace(void)
{
    int c;
    for (c = 0; c < nctx(); c++) {
        gpuml_ctx *ctx = ctx_at(c);
        int64_t s[2] = {17, 129};
        long long n = 17 * 129, i;
        gpuml_tensor *a = tt_new(ctx, GPUML_BF16, 2, s, 0), *b = tt_new(ctx, GPUML_F16, 2, s, 1), *o = tt_new(ctx, GPUML_F32, 2, s, 0);
        gpuml_tensor *o16 = tt_new(ctx, GPUML_F16, 2, s, 0);
        double *va = tt_rand(a, -2, 2), *vb = tt_rand(b, -2, 2), *vo, *ref = (double *)malloc(sizeof(double) * (size_t)n);
        poison(ctx, o);
        CHECK(gpuml_mul(ctx, o, a, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        for (i = 0; i < n; i++) ref[i] = va[i] * vb[i];
        tu_close("bf16*f16 -> f32", vo, ref, n, 1e-6, 1e-7);
        free(vo);
        CHECK_STATUS(ctx, gpuml_mul(ctx, o16, a, b), GPUML_ERROR_DTYPE, "result is f32");
        /* a - 3 and 3 / a */
        poison(ctx, o16);
        CHECK(gpuml_binary_scalar(ctx, GPUML_BINARY_SUB, o16, b, 3.0) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o16);
        for (i = 0; i < n; i++) ref[i] = vb[i] - 3.0;
        tu_close("f16 - 3", vo, ref, n, 4e-3, 1e-3);
        free(vo);
        CHECK(gpuml_scalar_binary(ctx, GPUML_BINARY_DIV, o16, 3.0, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o16);
        for (i = 0; i < n; i++) {   /* rounded to f16: from 65520 up (max + half an ulp) it is inf */
            ref[i] = 3.0 / vb[i];
            if (fabs(ref[i]) >= 65520.0) ref[i] = ref[i] > 0 ? INFINITY : -INFINITY;
        }
        tu_close("3 / f16", vo, ref, n, 4e-3, 1e-3);
        free(vo);
        /* in place: b = b + b (b is a transposed view) */
        CHECK(gpuml_add(ctx, b, b, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(b);
        for (i = 0; i < n; i++) ref[i] = 2 * vb[i];
        tu_close("in place add", vo, ref, n, 0, 0);
        free(vo);
        CHECK(gpuml_mul_scalar(ctx, a, a, 0.5) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(a);
        for (i = 0; i < n; i++) ref[i] = 0.5 * va[i];
        tu_close("in place mul_scalar", vo, ref, n, 0, 0);
        free(vo); free(va); free(vb); free(ref);
        gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o); gpuml_tensor_free(o16);
    }
}

static void test_unary(void)
{
    int c, t, op, lay;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (op = 0; op < GPUML_UNARY_COUNT; op++)
                for (lay = 0; lay < 3; lay++) {
                    gpuml_ctx *ctx = ctx_at(c);
                    int64_t s[2] = {lay == 0 ? 1 : 3, lay == 0 ? 4097 : 1023};
                    long long n = s[0] * s[1], i;
                    double lo = -4, hi = 4, *vx, *vo, *ref = (double *)malloc(sizeof(double) * (size_t)n);
                    gpuml_tensor *x = tt_new(ctx, FDT[t], 2, s, lay), *o = tt_new(ctx, FDT[t], 2, s, lay == 1 ? 2 : 0);
                    char what[160];
                    if (op == GPUML_UNARY_LOG || op == GPUML_UNARY_SQRT || op == GPUML_UNARY_RSQRT) { lo = 0.05; hi = 8; }
                    vx = tt_rand(x, lo, hi);
                    poison(ctx, o);
                    CHECK(gpuml_unary(ctx, (gpuml_unary_op)op, o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                    vo = tt_read(o);
                    for (i = 0; i < n; i++) ref[i] = ref_unary(op, vx[i]);
                    snprintf(what, sizeof what, "%s unary %d %s layout %d", cname(c), op, gpuml_dtype_name(FDT[t]), lay);
                    tu_close(what, vo, ref, n, FDT[t] == GPUML_F32 ? 2e-5 : tol_of(FDT[t]), FDT[t] == GPUML_F32 ? 1e-6 : 1e-3);
                    free(vx); free(vo); free(ref);
                    gpuml_tensor_free(x); gpuml_tensor_free(o);
                }
}

static void test_clamp_where(void)
{
    int c, t, mk;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++) {
            gpuml_ctx *ctx = ctx_at(c);
            int64_t s[2] = {5, 1023}, sm[2] = {1, 1023}, sb[1] = {1};
            long long n = 5 * 1023, i;
            gpuml_tensor *x = tt_new(ctx, FDT[t], 2, s, 2), *o = tt_new(ctx, FDT[t], 2, s, 0);
            double *vx = tt_rand(x, -2, 2), *vo, *ref = (double *)malloc(sizeof(double) * (size_t)n);
            poison(ctx, o);
            CHECK(gpuml_clamp(ctx, o, x, -0.5, 0.75) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vo = tt_read(o);
            for (i = 0; i < n; i++) ref[i] = vx[i] < -0.5 ? -0.5 : vx[i] > 0.75 ? 0.75 : vx[i];
            tu_close("clamp", vo, ref, n, 0, 0);
            free(vo);
            for (mk = 0; mk < 2; mk++) {
                gpuml_tensor *m = tt_new(ctx, mk ? GPUML_I32 : GPUML_U8, 2, sm, 0), *b = tt_new(ctx, FDT[t], 1, sb, 0);
                double *vm = (double *)malloc(sizeof(double) * 1023), *vb;
                for (i = 0; i < 1023; i++) vm[i] = tu_rand() > 0 ? (mk ? -3 : 2) : 0;
                tt_write(m, vm);
                vb = tt_rand(b, -9, -8);
                poison(ctx, o);
                CHECK(gpuml_where(ctx, o, m, x, b) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                vo = tt_read(o);
                for (i = 0; i < n; i++) ref[i] = vm[i % 1023] != 0 ? vx[i] : vb[0];
                tu_close("where", vo, ref, n, 0, 0);
                free(vo); free(vm); free(vb);
                gpuml_tensor_free(m); gpuml_tensor_free(b);
            }
            free(vx); free(ref);
            gpuml_tensor_free(x); gpuml_tensor_free(o);
        }
}

/* NaN and Inf go through elementwise ops, reductions and softmax as they should */
static void test_nan_inf(void)
{
    int c;
    for (c = 0; c < nctx(); c++) {
        gpuml_ctx *ctx = ctx_at(c);
        int64_t s[2] = {4, 9}, s1[1] = {4};
        double v[36], *vo;
        int i;
        gpuml_tensor *x = tt_new(ctx, GPUML_F32, 2, s, 0), *o = tt_new(ctx, GPUML_F32, 2, s, 0), *r = tt_new(ctx, GPUML_F32, 1, s1, 0);
        gpuml_tensor *ai = tt_new(ctx, GPUML_I32, 1, s1, 0);
        int ax = 1;
        for (i = 0; i < 36; i++) v[i] = 0.5 + i * 0.01;
        v[3] = NAN; v[9 + 4] = INFINITY; v[18 + 2] = -INFINITY; v[27 + 5] = NAN; v[27 + 6] = INFINITY;
        tt_write(x, v);
        CHECK(gpuml_add(ctx, o, x, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        CHECK(vo[3] != vo[3] && vo[13] == INFINITY && vo[20] == -INFINITY, "add: %g %g %g", vo[3], vo[13], vo[20]);
        free(vo);
        CHECK(gpuml_maximum(ctx, o, x, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        CHECK(vo[3] != vo[3] && vo[13] == INFINITY, "maximum: %g %g", vo[3], vo[13]);
        free(vo);
        CHECK(gpuml_relu(ctx, o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        CHECK(vo[3] != vo[3] && vo[13] == INFINITY && vo[20] == 0, "relu: %g %g %g", vo[3], vo[13], vo[20]);
        free(vo);
        CHECK(gpuml_exp(ctx, o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        CHECK(vo[3] != vo[3] && vo[13] == INFINITY && vo[20] == 0, "exp: %g %g %g", vo[3], vo[13], vo[20]);
        free(vo);
        CHECK(gpuml_reduce(ctx, GPUML_REDUCE_SUM, r, x, &ax, 1, 0) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(r);
        CHECK(vo[0] != vo[0] && vo[1] == INFINITY && vo[2] == -INFINITY && vo[3] != vo[3], "sum: %g %g %g %g", vo[0], vo[1], vo[2], vo[3]);
        free(vo);
        CHECK(gpuml_reduce(ctx, GPUML_REDUCE_MAX, r, x, &ax, 1, 0) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(r);
        CHECK(vo[0] != vo[0] && vo[1] == INFINITY && vo[2] == (double)(float)(0.5 + 26 * 0.01) && vo[3] != vo[3], "max: %g %g %g %g", vo[0], vo[1], vo[2], vo[3]);
        free(vo);
        CHECK(gpuml_reduce(ctx, GPUML_REDUCE_ARGMAX, ai, x, &ax, 1, 0) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(ai);
        CHECK(vo[0] == 3 && vo[1] == 4 && vo[2] == 8 && vo[3] == 5, "argmax: %g %g %g %g", vo[0], vo[1], vo[2], vo[3]);
        free(vo);
        CHECK(gpuml_softmax(ctx, o, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        CHECK(vo[0] != vo[0] && vo[2 * 9 + 2] == 0 && vo[2 * 9 + 3] > 0, "softmax: %g %g %g", vo[0], vo[20], vo[21]);
        free(vo);
        gpuml_tensor_free(x); gpuml_tensor_free(o); gpuml_tensor_free(r); gpuml_tensor_free(ai);
    }
}

/* ---------------------------------------------------------------- reductions ---- */
static void ref_reduce(int kind, const double *x, int ndim, const int64_t *s, const int *red, double corr, double *out, long long nout)
{
    long long n = numel_of(ndim, s), i, o;
    int64_t idx[GPUML_MAX_DIMS];
    double *acc = (double *)calloc((size_t)nout + 1, sizeof(double)), *acc2 = (double *)calloc((size_t)nout + 1, sizeof(double));
    long long *cnt = (long long *)calloc((size_t)nout + 1, sizeof(long long)), *arg = (long long *)calloc((size_t)nout + 1, sizeof(long long));
    for (i = 0; i < n; i++) {
        long long ri = 0;
        int d;
        unravel(i, ndim, s, idx);
        o = 0;
        for (d = 0; d < ndim; d++) {
            if (!red[d]) o = o * s[d] + idx[d];
            else ri = ri * s[d] + idx[d];
        }
        if (cnt[o] == 0) { acc[o] = x[i]; arg[o] = ri; acc2[o] = x[i] * x[i]; }
        else {
            if (kind == GPUML_REDUCE_SUM || kind == GPUML_REDUCE_MEAN || kind == GPUML_REDUCE_VAR) acc[o] += x[i];
            if (kind == GPUML_REDUCE_VAR) acc2[o] += x[i] * x[i];
            if (kind == GPUML_REDUCE_MAX && x[i] > acc[o]) acc[o] = x[i];
            if (kind == GPUML_REDUCE_MIN && x[i] < acc[o]) acc[o] = x[i];
            if (kind == GPUML_REDUCE_ARGMAX && x[i] > acc[o]) { acc[o] = x[i]; arg[o] = ri; }
        }
        cnt[o]++;
    }
    for (o = 0; o < nout; o++) {
        if (kind == GPUML_REDUCE_MEAN) out[o] = acc[o] / (double)cnt[o];
        else if (kind == GPUML_REDUCE_VAR) {
            double m = acc[o] / (double)cnt[o];
            out[o] = (acc2[o] - cnt[o] * m * m) / ((double)cnt[o] - corr);
        } else if (kind == GPUML_REDUCE_ARGMAX) out[o] = (double)arg[o];
        else out[o] = acc[o];
    }
    free(acc); free(acc2); free(cnt); free(arg);
}

static void reduce_case(gpuml_ctx *ctx, const char *cn, int kind, gpuml_dtype dt, int ndim, const int64_t *s, int lay,
                        const int *axes, int naxes, int keepdim, gpuml_dtype odt)
{
    int red[GPUML_MAX_DIMS] = {0}, i, no = 0;
    int64_t os[GPUML_MAX_DIMS];
    long long nout = 1, n = numel_of(ndim, s);
    gpuml_tensor *x = tt_new(ctx, dt, ndim, s, lay), *o;
    double *vx = tt_rand(x, -1, 1), *vo, *ref, sumabs = 0, corr = kind == GPUML_REDUCE_VAR ? 1.0 : 0.0;
    char what[200];
    for (i = 0; i < naxes; i++) red[axes[i] < 0 ? axes[i] + ndim : axes[i]] = 1;
    if (naxes == 0) for (i = 0; i < ndim; i++) red[i] = 1;
    for (i = 0; i < ndim; i++) {
        if (!red[i]) { os[no++] = s[i]; nout *= s[i]; }
        else if (keepdim) os[no++] = 1;
    }
    if (kind == GPUML_REDUCE_ARGMAX) odt = GPUML_I32;
    o = tt_new(ctx, odt, no, os, 0);
    poison(ctx, o);
    CHECK(gpuml_reduce(ctx, (gpuml_reduce_op)kind, o, x, axes, naxes, keepdim) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    vo = tt_read(o);
    ref = (double *)malloc(sizeof(double) * (size_t)(nout + 1));
    ref_reduce(kind, vx, ndim, s, red, corr, ref, nout);
    for (i = 0; i < n; i++) sumabs += fabs(vx[i]);
    snprintf(what, sizeof what, "%s reduce %d %s->%s layout %d naxes %d n=%lld", cn, kind, gpuml_dtype_name(dt), gpuml_dtype_name(odt), lay, naxes, n);
    if (kind == GPUML_REDUCE_ARGMAX || kind == GPUML_REDUCE_MAX || kind == GPUML_REDUCE_MIN) tu_close(what, vo, ref, nout, 0, 0);
    else {
        /* sums: error relative to the sum of magnitudes per output, plus the output's rounding */
        double per = sumabs / (double)nout / (kind == GPUML_REDUCE_SUM ? 1.0 : (double)(n / nout));
        tu_close(what, vo, ref, nout, odt == GPUML_F32 ? 1e-5 : tol_of(odt), per * 2e-6 + (kind == GPUML_REDUCE_VAR ? 1e-6 : 0));
    }
    free(vx); free(vo); free(ref);
    gpuml_tensor_free(x); gpuml_tensor_free(o);
}

static void test_reduce(void)
{
    int c, t, k;
    static const int64_t s3[3] = {3, 1023, 5}, s2[2] = {37, 4097}, s1[1] = {1}, sl[1] = {(1 << 22) + 3}, sc[2] = {4099, 3};
    static const int a0[1] = {0}, a1[1] = {1}, a2[2] = {0, 2}, am[1] = {-1};
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (k = 0; k <= GPUML_REDUCE_VAR; k++) {
                gpuml_ctx *ctx = ctx_at(c);
                const char *cn = cname(c);
                reduce_case(ctx, cn, k, FDT[t], 3, s3, 0, a1, 1, 0, FDT[t]);
                reduce_case(ctx, cn, k, FDT[t], 3, s3, 1, a2, 2, 1, GPUML_F32);
                reduce_case(ctx, cn, k, FDT[t], 2, s2, 0, am, 1, 1, FDT[t]);
                reduce_case(ctx, cn, k, FDT[t], 2, s2, 2, a0, 1, 0, FDT[t]);
                reduce_case(ctx, cn, k, FDT[t], 2, s2, 1, NULL, 0, 0, GPUML_F32);
                reduce_case(ctx, cn, k, FDT[t], 1, s1, 0, a0, 1, 0, FDT[t]);
                reduce_case(ctx, cn, k, FDT[t], 2, sc, 0, a0, 1, 0, GPUML_F32);
                if (t == 0 || k == 0) reduce_case(ctx, cn, k, FDT[t], 1, sl, 0, NULL, 0, 0, GPUML_F32);
            }
}

static void test_var_correction_sum_to_shape(void)
{
    int c;
    for (c = 0; c < nctx(); c++) {
        gpuml_ctx *ctx = ctx_at(c);
        int64_t s[3] = {6, 5, 129}, so[2] = {1, 129}, sv[1] = {129};
        long long i, j, k;
        int ax[2] = {0, 1};
        gpuml_tensor *g = tt_new(ctx, GPUML_F32, 3, s, 1), *o = tt_new(ctx, GPUML_BF16, 2, so, 0), *v = tt_new(ctx, GPUML_F32, 1, sv, 0);
        double *vg = tt_rand(g, -1, 1), *vo, ref[129];
        poison(ctx, o);
        CHECK(gpuml_sum_to_shape(ctx, o, g) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(o);
        for (k = 0; k < 129; k++) { ref[k] = 0; for (i = 0; i < 30; i++) ref[k] += vg[i * 129 + k]; }
        tu_close("sum_to_shape", vo, ref, 129, 1e-2, 1e-2);
        free(vo);
        poison(ctx, v);
        CHECK(gpuml_var(ctx, v, g, ax, 2, 0, 0.0) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        vo = tt_read(v);
        for (k = 0; k < 129; k++) {
            double m = 0, q = 0;
            for (i = 0; i < 30; i++) m += vg[i * 129 + k];
            m /= 30;
            for (j = 0; j < 30; j++) q += (vg[j * 129 + k] - m) * (vg[j * 129 + k] - m);
            ref[k] = q / 30;
        }
        tu_close("var correction 0", vo, ref, 129, 1e-5, 1e-6);
        free(vo); free(vg);
        gpuml_tensor_free(g); gpuml_tensor_free(o); gpuml_tensor_free(v);
    }
}

/* ---------------------------------------------------------------- row ops ---- */
/* reference for rows of x [R, n] (dense row-major doubles) */
static void ref_rows(int kind, const double *x, long long R, long long n, const double *w, const double *b, double eps, double *y)
{
    long long r, i;
    for (r = 0; r < R; r++) {
        const double *xr = x + r * n;
        double *yr = y + r * n, mx = -INFINITY, s = 0, mean = 0, q = 0;
        if (kind <= 1) {
            for (i = 0; i < n; i++) if (xr[i] > mx) mx = xr[i];
            for (i = 0; i < n; i++) s += exp(xr[i] - mx);
            for (i = 0; i < n; i++) yr[i] = kind == 0 ? exp(xr[i] - mx) / s : xr[i] - mx - log(s);
        } else {
            if (kind == 2) { for (i = 0; i < n; i++) mean += xr[i]; mean /= (double)n; }
            for (i = 0; i < n; i++) q += (xr[i] - mean) * (xr[i] - mean);
            q = 1.0 / sqrt(q / (double)n + eps);
            for (i = 0; i < n; i++) yr[i] = (xr[i] - mean) * q * (w ? w[i] : 1) + (b ? b[i] : 0);
        }
    }
}
/* x as dense row-major [R, n] along `axis` of a 2-d [d0, d1] (axis 0: columns become rows) */
static void gather_rows(const double *x, long long d0, long long d1, int axis, double *rows)
{
    long long i, j;
    for (i = 0; i < d0; i++) for (j = 0; j < d1; j++) {
        if (axis == 1) rows[i * d1 + j] = x[i * d1 + j];
        else rows[j * d0 + i] = x[i * d1 + j];
    }
}

static void softmax_case(gpuml_ctx *ctx, const char *cn, int logsm, gpuml_dtype dt, long long d0, long long d1, int axis, int lay)
{
    int64_t s[2] = {d0, d1};
    long long n = d0 * d1;
    gpuml_tensor *x = tt_new(ctx, dt, 2, s, lay), *y = tt_new(ctx, dt, 2, s, lay == 2 ? 1 : 0);
    double *vx = tt_rand(x, -4, 4), *vy, *rows = (double *)calloc((size_t)n + 1, sizeof(double)), *ry = (double *)malloc(sizeof(double) * (size_t)n);
    double *ref = (double *)malloc(sizeof(double) * (size_t)n);
    char what[200];
    long long R = axis == 1 ? d0 : d1, L = axis == 1 ? d1 : d0;
    poison(ctx, y);
    CHECK((logsm ? gpuml_log_softmax : gpuml_softmax)(ctx, y, x, axis) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    vy = tt_read(y);
    gather_rows(vx, d0, d1, axis, rows);
    ref_rows(logsm, rows, R, L, NULL, NULL, 0, ry);
    /* back to [d0, d1] order */
    if (axis == 1) memcpy(ref, ry, sizeof(double) * (size_t)n);
    else { long long i, j; for (i = 0; i < d0; i++) for (j = 0; j < d1; j++) ref[i * d1 + j] = ry[j * d0 + i]; }
    snprintf(what, sizeof what, "%s %s %s [%lld,%lld] axis %d layout %d", cn, logsm ? "log_softmax" : "softmax", gpuml_dtype_name(dt), d0, d1, axis, lay);
    tu_close(what, vy, ref, n, dt == GPUML_F32 ? 2e-5 : tol_of(dt), logsm ? 1e-4 + tol_of(dt) : 1e-7);
    free(vx); free(vy); free(rows); free(ry); free(ref);
    gpuml_tensor_free(x); gpuml_tensor_free(y);
}
static void test_softmax(void)
{
    int c, t, l;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (l = 0; l < 2; l++) {
                const char *cn = cname(c);
                gpuml_ctx *ctx = ctx_at(c);
                softmax_case(ctx, cn, l, FDT[t], 7, 1023, 1, 0);
                softmax_case(ctx, cn, l, FDT[t], 3, 4096, 1, 0);
                softmax_case(ctx, cn, l, FDT[t], 5, 1, 1, 0);
                softmax_case(ctx, cn, l, FDT[t], 33, 65, 0, 0);
                softmax_case(ctx, cn, l, FDT[t], 65, 33, 1, 1);
                softmax_case(ctx, cn, l, FDT[t], 9, 301, 1, 2);
                softmax_case(ctx, cn, l, FDT[t], 2, 40000, 1, 0);
                if (t == 0) softmax_case(ctx, cn, l, FDT[t], 256, 8192, 1, 0);
            }
}

static void norm_case(gpuml_ctx *ctx, const char *cn, int rms, gpuml_dtype dt, gpuml_dtype wdt, long long R, long long n, int hw, int hb, int lay)
{
    int64_t s[2] = {R, n}, sw[1] = {n};
    long long N = R * n;
    gpuml_tensor *x = tt_new(ctx, dt, 2, s, lay), *y = tt_new(ctx, dt, 2, s, 0);
    gpuml_tensor *w = hw ? tt_new(ctx, wdt, 1, sw, 0) : NULL, *b = hb && !rms ? tt_new(ctx, wdt, 1, sw, 0) : NULL;
    double *vx = tt_rand(x, -3, 5), *vw = w ? tt_rand(w, -2, 2) : NULL, *vb = b ? tt_rand(b, -1, 1) : NULL, *vy;
    double *ref = (double *)malloc(sizeof(double) * (size_t)N);
    char what[200];
    poison(ctx, y);
    if (rms) CHECK(gpuml_rmsnorm(ctx, y, x, w, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    else CHECK(gpuml_layernorm(ctx, y, x, w, b, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    vy = tt_read(y);
    ref_rows(rms ? 3 : 2, vx, R, n, vw, vb, 1e-5, ref);
    snprintf(what, sizeof what, "%s %s %s w %s [%lld,%lld] w%d b%d layout %d", cn, rms ? "rmsnorm" : "layernorm", gpuml_dtype_name(dt),
             gpuml_dtype_name(wdt), R, n, hw, hb, lay);
    tu_close(what, vy, ref, N, dt == GPUML_F32 ? 3e-5 : tol_of(dt), dt == GPUML_F32 ? 3e-5 : 2 * tol_of(dt));
    free(vx); free(vw); free(vb); free(vy); free(ref);
    gpuml_tensor_free(x); gpuml_tensor_free(y); gpuml_tensor_free(w); gpuml_tensor_free(b);
}
static void test_norms(void)
{
    int c, t, r;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (r = 0; r < 2; r++) {
                const char *cn = cname(c);
                gpuml_ctx *ctx = ctx_at(c);
                norm_case(ctx, cn, r, FDT[t], FDT[t], 7, 1023, 1, 1, 0);
                norm_case(ctx, cn, r, FDT[t], GPUML_F32, 3, 4096, 1, 1, 0);
                norm_case(ctx, cn, r, FDT[t], FDT[t], 5, 3, 0, 0, 0);
                norm_case(ctx, cn, r, FDT[t], FDT[t], 65, 33, 1, 0, 1);
                norm_case(ctx, cn, r, FDT[t], FDT[t], 9, 301, 0, 1, 2);
                norm_case(ctx, cn, r, FDT[t], FDT[t], 2, 40000, 1, 1, 0);
                if (t == 0) norm_case(ctx, cn, r, FDT[t], FDT[t], 512, 8192, 1, 1, 0);
            }
}

/* The GPU row kernels by shape: a warp per row (short rows: 1, 3, 1024 f16/bf16, strided),
   a block per row (1023, 1024 f32, 4097, 8192; f32 layernorm / rmsnorm 32768 in a block of 1024
   threads), a row over a cluster (32768, 40000 on sm_90),
   rows re-read from memory (200000); then each variant forced through gpuml__rows_tune (the
   old rule, no clusters, no warp rows, more bytes per thread, no register cap, clusters
   wherever a row needs over 256 threads, weight and bias held in registers, a persistent grid, x
   read past L1 with y stored streaming, bounds checks kept where every vector is in the row,
   blocks of 1024 threads forced or never) on the same
   shapes; and rows holding NaN, +inf and -inf.  Softmax, log_softmax, layernorm, rmsnorm,
   f32/f16/bf16, against float64. */
/* rows of n along the last axis; lay 1: x a transposed view (the rows strided) */
static void rows_one(int kind, gpuml_dtype dt, long long R, long long n, int lay, const char *tag, int special)
{
    int64_t s[2], sw[1];
    long long N = R * n, i;
    gpuml_tensor *x, *y, *w = NULL, *b = NULL;
    double *vx, *vw = NULL, *vb = NULL, *vy, *ref;
    gpuml_status st;
    char what[240];
    s[0] = R; s[1] = n; sw[0] = n;
    x = tt_new(tu_gpu, dt, 2, s, lay); y = tt_new(tu_gpu, dt, 2, s, 0);
    vx = tt_rand(x, -4, 4);
    if (special == 2) {
        /* rows far from 0 against their spread: 1000 + U(-1, 1) */
        double *v2;
        for (i = 0; i < N; i++) vx[i] = 1000.0 + vx[i] / 4;
        tt_write(x, vx);
        v2 = tt_read(x);   /* as stored */
        free(vx);
        vx = v2;
    } else if (special) {
        /* row 0: a NaN; row 1: +inf; row 2: one -inf; row 3: all -inf (rows along axis 1) */
        for (i = 0; i < n && R >= 4; i++) {
            if (i == n / 2) { vx[0 * n + i] = NAN; vx[1 * n + i] = INFINITY; vx[2 * n + i] = -INFINITY; }
            vx[3 * n + i] = -INFINITY;
        }
        tt_write(x, vx);
    }
    if (kind >= 2) {
        w = tt_new(tu_gpu, dt, 1, sw, 0); vw = tt_rand(w, -2, 2);
        if (kind == 2) { b = tt_new(tu_gpu, dt, 1, sw, 0); vb = tt_rand(b, -1, 1); }
    }
    poison(tu_gpu, y);
    if (kind == 0) st = gpuml_softmax(tu_gpu, y, x, 1);
    else if (kind == 1) st = gpuml_log_softmax(tu_gpu, y, x, 1);
    else if (kind == 2) st = gpuml_layernorm(tu_gpu, y, x, w, b, 1e-5);
    else st = gpuml_rmsnorm(tu_gpu, y, x, w, 1e-5);
    CHECK(st == GPUML_SUCCESS, "%s", gpuml_last_error(tu_gpu));
    vy = tt_read(y);
    ref = (double *)malloc(sizeof(double) * (size_t)N);
    ref_rows(kind, vx, R, n, vw, vb, 1e-5, ref);
    snprintf(what, sizeof what, "gpu %s %s [%lld rows of %lld]%s%s (%s)",
             kind == 0 ? "softmax" : kind == 1 ? "log_softmax" : kind == 2 ? "layernorm" : "rmsnorm", gpuml_dtype_name(dt), R, n,
             lay ? " strided" : "", special == 2 ? " rows around 1000" : special ? " NaN/inf rows" : "", tag);
    if (kind <= 1) tu_close(what, vy, ref, N, dt == GPUML_F32 ? 2e-5 : tol_of(dt), kind == 1 ? 1e-4 + tol_of(dt) : 1e-7);
    else if (kind == 2 && special == 2 && dt == GPUML_F32)
        /* f32 layernorm of rows near 1000 with spread ~0.6: the f32 mean itself carries up to half an ulp
           of 1000 (3e-5), which (x - mean) * rstd turns into ~5e-5 of the output (PyTorch's f32 layernorm
           the same); the bound is the conditioning, 2^-24 * |x| / std * |w| ~ 2e-4 */
        tu_close(what, vy, ref, N, 2e-4, 2e-4);
    else tu_close(what, vy, ref, N, dt == GPUML_F32 ? 3e-5 : tol_of(dt), dt == GPUML_F32 ? 3e-5 : 2 * tol_of(dt));
    free(vx); free(vw); free(vb); free(vy); free(ref);
    gpuml_tensor_free(x); gpuml_tensor_free(y); gpuml_tensor_free(w); gpuml_tensor_free(b);
}
/* t = 0: the rule; 1..5: the overrides, on the widths where each changes the kernel */
static void row_variants(int t0, int t1)
{
    static const long long widths[] = { 1, 3, 1023, 1024, 4097, 8192, 32768, 40000 };
    static const int tunes[20][12] = { {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0, 0, 0},
                                      {0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, {128, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, -1, 0, 0, 0, 0, 0},
                                      {64, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {64, 0, 0, 0, 40, 64, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, -1, 0, 0, 0},
                                      {0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 1, 2, 0},
                                      {0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                                      {0, 0, 0, 0, 0, 0, 0, -1, 0, 0},
                                      {0, 0, 0, 0, 0, 0, 0, 0, 0, 3},
                                      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                                      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
                                      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0},
                                      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2} };
    static const int tw[20] = { 0xff, 0x68, 0xc0, 0x0c, 0x68, 0x2c, 0xc0, 0xe0, 0xf0, 0xff, 0xe8, 0xe8, 0xff, 0xe8, 0xe8, 0xe8, 0xff, 0xe0, 0x40, 0x68 };   /* bits of widths[] */
    static const char *const tnames[20] = { "rule", "old rule", "no clusters", "no warp rows", "128 bytes a thread", "no register cap",
                                            "clusters for every long row", "clusters of 64 bytes a thread, 40 registers",
                                            "no L2 prefetch", "L2 prefetch of the next row", "weight and bias in registers",
                                            "weight and bias in registers, persistent 2 a SM", "persistent 1 a SM",
                                            "x past L1", "weight never in registers",
                                            "x past L1, y streaming", "bounds checked where every vector is in the row",
                                            "one block of up to 1024 threads", "never one block of 1024 threads",
                                            "no bounds checks wherever every vector is in the row" };
    int t, d, k, wi;
    if (!tu_gpu) SKIP("no GPU: %s", tu_gpu_reason);
    for (t = t0; t <= t1; t++) {
        memcpy(gpuml__rows_tune, tunes[t], sizeof gpuml__rows_tune);
        for (d = 0; d < 3; d++)
            for (k = 0; k < 4; k++) {
                for (wi = 0; wi < 8; wi++) {
                    long long n = widths[wi], R = n >= 32768 ? 3 : n >= 4097 ? 5 : 19;
                    if (tw[t] & (1 << wi)) rows_one(k, FDT[d], R, n, 0, tnames[t], 0);
                }
                if (t == 0 || t == 3) {
                    rows_one(k, FDT[d], 5, 1030, 1, tnames[t], 0);       /* strided rows of 1030 */
                    rows_one(k, FDT[d], 5, 33, 0, tnames[t], 1);         /* a thread holding only -inf */
                    rows_one(k, FDT[d], 5, 1024, 0, tnames[t], 1);
                }
                if (t == 0 || t == 2) rows_one(k, FDT[d], 4, 32768, 0, tnames[t], 1);
                if (t == 0 || t == 16 || t == 19) {   /* NaN / inf rows where every vector lies in the row (FULL on sm_90) */
                    rows_one(k, FDT[d], 5, 4096, 0, tnames[t], 1);
                    rows_one(k, FDT[d], 5, 8192, 0, tnames[t], 1);
                }
                if (t == 0) {
                    rows_one(k, FDT[d], 3, 16384, 0, tnames[t], 0);    /* f32: one block, not a cluster */
                    rows_one(k, FDT[d], 3, 20000, 0, tnames[t], 0);
                    /* rows far from 0 (layernorm with the tolerance of its f32 conditioning there:
                       rows_one; bench/NOTES_ops.md, issue 3, "Left") */
                    if (d == 0)
                        for (wi = 2; wi < 8; wi++) rows_one(k, FDT[d], 3, widths[wi], 0, tnames[t], 2);
                }
            }
    }
    memset(gpuml__rows_tune, 0, sizeof gpuml__rows_tune);
    if (t0 == 0)
        for (d = 0; d < 3; d += 2)
            for (k = 0; k < 4; k++) rows_one(k, FDT[d], 2, 200000, 0, "rule", 0);
}
static void test_row_variants(void) { row_variants(0, 0); }
static void test_row_overrides(void) { row_variants(1, 19); }

/* ---------------------------------------------------------------- training ---- */
/* float64 forward of the norms on one row and its analytic gradients; the analytic ones are
   checked against finite differences of the forward first */
static void ref_norm_bwd(int rms, const double *x, const double *dy, const double *w, long long R, long long n, double eps,
                         double *dx, double *dw, double *db)
{
    long long r, i;
    for (i = 0; i < n; i++) { dw[i] = 0; db[i] = 0; }
    for (r = 0; r < R; r++) {
        const double *xr = x + r * n, *dr = dy + r * n;
        double mean = 0, q = 0, rstd, sg = 0, sgx = 0;
        if (!rms) { for (i = 0; i < n; i++) mean += xr[i]; mean /= (double)n; }
        for (i = 0; i < n; i++) q += (xr[i] - mean) * (xr[i] - mean);
        rstd = 1.0 / sqrt(q / (double)n + eps);
        for (i = 0; i < n; i++) {
            double g = dr[i] * (w ? w[i] : 1), xh = (xr[i] - mean) * rstd;
            sg += g; sgx += g * xh;
            dw[i] += dr[i] * xh; db[i] += dr[i];
        }
        sg = rms ? 0 : sg / (double)n; sgx /= (double)n;
        for (i = 0; i < n; i++) {
            double g = dr[i] * (w ? w[i] : 1), xh = (xr[i] - mean) * rstd;
            dx[r * n + i] = rstd * (g - sg - xh * sgx);
        }
    }
}
static void test_norm_backward_fd(void)
{
    /* the float64 analytic gradient against central differences of sum(dy * y) */
    int rms;
    for (rms = 0; rms < 2; rms++) {
        long long n = 7, i;
        double x[7], dy[7], w[7], b[7], dx[7], dw[7], db[7], y1[7], y2[7], h = 1e-6;
        for (i = 0; i < n; i++) { x[i] = tu_rand() * 2; dy[i] = tu_rand(); w[i] = 1 + tu_rand() * 0.5; b[i] = tu_rand(); }
        ref_norm_bwd(rms, x, dy, w, 1, n, 1e-5, dx, dw, db);
        for (i = 0; i < n; i++) {
            double save = x[i], f1 = 0, f2 = 0, fd;
            long long k;
            x[i] = save + h; ref_rows(rms ? 3 : 2, x, 1, n, w, rms ? NULL : b, 1e-5, y1);
            x[i] = save - h; ref_rows(rms ? 3 : 2, x, 1, n, w, rms ? NULL : b, 1e-5, y2);
            x[i] = save;
            for (k = 0; k < n; k++) { f1 += dy[k] * y1[k]; f2 += dy[k] * y2[k]; }
            fd = (f1 - f2) / (2 * h);
            CHECK(fabs(fd - dx[i]) < 1e-6 * (1 + fabs(fd)), "norm %d dx[%lld]: fd %g analytic %g", rms, i, fd, dx[i]);
            save = w[i]; f1 = f2 = 0;
            w[i] = save + h; ref_rows(rms ? 3 : 2, x, 1, n, w, rms ? NULL : b, 1e-5, y1);
            w[i] = save - h; ref_rows(rms ? 3 : 2, x, 1, n, w, rms ? NULL : b, 1e-5, y2);
            w[i] = save;
            for (k = 0; k < n; k++) { f1 += dy[k] * y1[k]; f2 += dy[k] * y2[k]; }
            fd = (f1 - f2) / (2 * h);
            CHECK(fabs(fd - dw[i]) < 1e-6 * (1 + fabs(fd)), "norm %d dw[%lld]: fd %g analytic %g", rms, i, fd, dw[i]);
        }
    }
}
static void norm_bwd_case(gpuml_ctx *ctx, const char *cn, int rms, gpuml_dtype dt, long long R, long long n, int hw, int lay)
{
    int64_t s[2] = {R, n}, sw[1] = {n};
    long long N = R * n, i;
    gpuml_tensor *x = tt_new(ctx, dt, 2, s, lay), *dy = tt_new(ctx, dt, 2, s, 0), *dx = tt_new(ctx, dt, 2, s, lay == 1 ? 2 : 0);
    gpuml_tensor *w = hw ? tt_new(ctx, GPUML_F32, 1, sw, 0) : NULL;
    gpuml_tensor *dw = tt_new(ctx, GPUML_F32, 1, sw, 0), *db = rms ? NULL : tt_new(ctx, GPUML_F32, 1, sw, 2);
    double *vx = tt_rand(x, -3, 5), *vdy = tt_rand(dy, -1, 1), *vw = w ? tt_rand(w, 0.5, 1.5) : NULL, *gx, *gw, *gb = NULL;
    double *rx = (double *)malloc(sizeof(double) * (size_t)N), *rw = (double *)malloc(sizeof(double) * (size_t)n), *rb = (double *)malloc(sizeof(double) * (size_t)n);
    double mw = 0, mb = 0, mx = 0;
    char what[200];
    poison(ctx, dx); poison(ctx, dw); if (db) poison(ctx, db);
    if (rms) CHECK(gpuml_rmsnorm_backward(ctx, dx, dw, dy, x, w, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    else CHECK(gpuml_layernorm_backward(ctx, dx, dw, db, dy, x, w, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    gx = tt_read(dx); gw = tt_read(dw); if (db) gb = tt_read(db);
    ref_norm_bwd(rms, vx, vdy, vw, R, n, 1e-5, rx, rw, rb);
    for (i = 0; i < N; i++) mx = fmax(mx, fabs(rx[i]));
    for (i = 0; i < n; i++) { mw = fmax(mw, fabs(rw[i])); mb = fmax(mb, fabs(rb[i])); }
    snprintf(what, sizeof what, "%s %s backward %s [%lld,%lld] w%d layout %d: dx", cn, rms ? "rmsnorm" : "layernorm", gpuml_dtype_name(dt), R, n, hw, lay);
    tu_close(what, gx, rx, N, dt == GPUML_F32 ? 1e-4 : 3 * tol_of(dt), mx * (dt == GPUML_F32 ? 1e-5 : tol_of(dt)));
    snprintf(what, sizeof what, "%s %s backward %s [%lld,%lld]: dweight", cn, rms ? "rmsnorm" : "layernorm", gpuml_dtype_name(dt), R, n);
    tu_close(what, gw, rw, n, 1e-4, mw * (dt == GPUML_F32 ? 1e-5 : tol_of(dt)));
    if (gb) tu_close("dbias", gb, rb, n, 1e-4, mb * 1e-5 + 1e-5);
    free(vx); free(vdy); free(vw); free(gx); free(gw); free(gb); free(rx); free(rw); free(rb);
    gpuml_tensor_free(x); gpuml_tensor_free(dy); gpuml_tensor_free(dx); gpuml_tensor_free(w); gpuml_tensor_free(dw); gpuml_tensor_free(db);
}
static void test_norm_backward(void)
{
    int c, t, r;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (r = 0; r < 2; r++) {
                gpuml_ctx *ctx = ctx_at(c);
                norm_bwd_case(ctx, cname(c), r, FDT[t], 37, 1023, 1, 0);
                norm_bwd_case(ctx, cname(c), r, FDT[t], 5, 3, 0, 0);
                norm_bwd_case(ctx, cname(c), r, FDT[t], 65, 33, 1, 1);
                norm_bwd_case(ctx, cname(c), r, FDT[t], 3, 9000, 1, 0);
                if (t == 0) norm_bwd_case(ctx, cname(c), r, FDT[t], 1000, 4096, 1, 0);
            }
}

static double ref_act_grad(int op, double x)
{
    double s;
    switch (op) {
    case GPUML_UNARY_RELU: return x > 0 ? 1 : 0;
    case GPUML_UNARY_GELU: return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * TT_PI);
    case GPUML_UNARY_GELU_TANH: {
        /* with s = sigmoid(2u): 0.5(1 + tanh u) = s and 1 - tanh(u)^2 = 4s(1 - s) */
        double k = sqrt(2.0 / TT_PI), sg = 1 / (1 + exp(-2 * k * (x + 0.044715 * x * x * x)));
        return sg + 2 * x * sg * (1 - sg) * k * (1 + 3 * 0.044715 * x * x);
    }
    default: s = 1 / (1 + exp(-x)); return s * (1 + x * (1 - s));
    }
}
static void test_activation_backward(void)
{
    static const int ops[4] = { GPUML_UNARY_RELU, GPUML_UNARY_GELU, GPUML_UNARY_GELU_TANH, GPUML_UNARY_SILU };
    int c, t, k;
    long long i;
    /* the analytic float64 gradients against central differences of the float64 forward */
    for (k = 0; k < 4; k++)
        for (i = 0; i < 50; i++) {
            double x = tu_rand() * 4, h = 1e-6;
            double fd = (ref_unary(ops[k], x + h) - ref_unary(ops[k], x - h)) / (2 * h);
            if (fabs(x) < 1e-3) continue;
            CHECK(fabs(fd - ref_act_grad(ops[k], x)) < 1e-6, "op %d at %g: fd %g analytic %g", ops[k], x, fd, ref_act_grad(ops[k], x));
        }
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++)
            for (k = 0; k < 4; k++) {
                gpuml_ctx *ctx = ctx_at(c);
                int64_t s[2] = {3, 1025};
                long long n = 3 * 1025;
                gpuml_tensor *x = tt_new(ctx, FDT[t], 2, s, 1), *dy = tt_new(ctx, FDT[t], 2, s, 0), *dx = tt_new(ctx, FDT[t], 2, s, 2);
                double *vx = tt_rand(x, -4, 4), *vd = tt_rand(dy, -1, 1), *g, *ref = (double *)malloc(sizeof(double) * (size_t)n);
                char what[100];
                poison(ctx, dx);
                CHECK(gpuml_activation_backward(ctx, (gpuml_unary_op)ops[k], dx, dy, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                g = tt_read(dx);
                for (i = 0; i < n; i++) ref[i] = vd[i] * ref_act_grad(ops[k], vx[i]);
                snprintf(what, sizeof what, "%s activation backward %d %s", cname(c), ops[k], gpuml_dtype_name(FDT[t]));
                tu_close(what, g, ref, n, FDT[t] == GPUML_F32 ? 2e-5 : tol_of(FDT[t]), FDT[t] == GPUML_F32 ? 1e-6 : 1e-3);
                free(vx); free(vd); free(g); free(ref);
                gpuml_tensor_free(x); gpuml_tensor_free(dy); gpuml_tensor_free(dx);
            }
}

/* the vectorized CPU math (exp, sigmoid, silu, gelu in both forms and their gradients) over
   a wide range: overflow, underflow, the far tails where erfc is tiny, and inf / NaN */
static void test_activations_wide(void)
{
    static const int ops[5] = { GPUML_UNARY_EXP, GPUML_UNARY_SIGMOID, GPUML_UNARY_SILU, GPUML_UNARY_GELU, GPUML_UNARY_GELU_TANH };
    int c, k;
    long long i, n = 4099;
    for (c = 0; c < nctx(); c++)
        for (k = 0; k < 5; k++) {
            gpuml_ctx *ctx = ctx_at(c);
            int64_t s[1] = {n};
            gpuml_tensor *x = tt_new(ctx, GPUML_F32, 1, s, 0), *o = tt_new(ctx, GPUML_F32, 1, s, 0);
            gpuml_tensor *dy = tt_new(ctx, GPUML_F32, 1, s, 0), *dx = tt_new(ctx, GPUML_F32, 1, s, 0);
            double *vx = (double *)malloc(sizeof(double) * (size_t)n), *ref = (double *)malloc(sizeof(double) * (size_t)n), *vo, *vd;
            double lo = ops[k] == GPUML_UNARY_EXP ? -100 : -40, hi = ops[k] == GPUML_UNARY_EXP ? 95 : 40;
            char what[100];
            for (i = 0; i < n; i++) vx[i] = (double)(float)(lo + (hi - lo) * (double)i / (double)(n - 6));
            vx[n - 5] = NAN; vx[n - 4] = INFINITY; vx[n - 3] = -INFINITY; vx[n - 2] = 0.0; vx[n - 1] = -1e-30;
            tt_write(x, vx);
            poison(ctx, o);
            CHECK(gpuml_unary(ctx, (gpuml_unary_op)ops[k], o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vo = tt_read(o);
            /* the reference rounded to f32 (overflow to inf); atol 1e-37: the CPU flushes results
               (and intermediates) below the normal range to zero.  The GPU kernels compute 1 + erff(x/sqrt2) and
               1 + tanhf(u), which lose the far negative tail below ~1e-7 |x|: absolute 1e-6 there. */
            for (i = 0; i < n; i++) ref[i] = (double)(float)ref_unary(ops[k], vx[i]);
            snprintf(what, sizeof what, "%s wide-range unary %d", cname(c), ops[k]);
            tu_close(what, vo, ref, n, 2e-5, ctx == tu_cpu ? 1e-37 : 1e-6);
            free(vo);
            if (ops[k] == GPUML_UNARY_GELU || ops[k] == GPUML_UNARY_GELU_TANH || ops[k] == GPUML_UNARY_SILU) {
                vd = tt_rand(dy, -1, 1);
                poison(ctx, dx);
                n -= 5;   /* the gradients at +-inf are not defined; NaN is checked by the forward */
                CHECK(gpuml_activation_backward(ctx, (gpuml_unary_op)ops[k], dx, dy, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                vo = tt_read(dx);
                /* only |x| > 4 here: test_activation_backward covers [-4, 4], where the two terms of
                   the gradient cancel near its zero (absolute tolerance there); atol 1e-35: an f32
                   sigmoid that underflowed (~1e-39) is scaled by up to ~300 in the tanh form */
                for (i = 0; i < n; i++) {
                    ref[i] = (double)(float)(vd[i] * ref_act_grad(ops[k], vx[i]));
                    if (fabs(vx[i]) <= 4) ref[i] = vo[i];
                }
                snprintf(what, sizeof what, "%s wide-range activation backward %d", cname(c), ops[k]);
                tu_close(what, vo, ref, n, 2e-5, ctx == tu_cpu ? 1e-35 : 1e-6);
                n += 5;
                free(vo); free(vd);
            }
            free(vx); free(ref);
            gpuml_tensor_free(x); gpuml_tensor_free(o); gpuml_tensor_free(dy); gpuml_tensor_free(dx);
        }
}

static void xent_case(gpuml_ctx *ctx, const char *cn, gpuml_dtype dt, long long B, long long C, int lay, int bad)
{
    int64_t s[2] = {B, C}, sb[1] = {B}, s1[1] = {1};
    gpuml_tensor *x = tt_new(ctx, dt, 2, s, lay), *d = tt_new(ctx, dt, 2, s, 0), *lab = tt_new(ctx, GPUML_I32, 1, sb, 0);
    gpuml_tensor *loss = tt_new(ctx, GPUML_F32, 1, s1, 0);
    double *vx = tt_rand(x, -4, 4), *vl = (double *)malloc(sizeof(double) * (size_t)B), *g, *lv;
    double *ref = (double *)malloc(sizeof(double) * (size_t)(B * C)), rl = 0;
    long long r, i;
    char what[200];
    for (r = 0; r < B; r++) vl[r] = (double)((long long)((tu_rand() + 1) * 0.5 * (double)C) % C);
    if (bad) vl[B / 2] = (double)C;
    tt_write(lab, vl);
    poison(ctx, d); poison(ctx, loss);
    CHECK(gpuml_cross_entropy(ctx, loss, d, x, lab) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
    g = tt_read(d); lv = tt_read(loss);
    for (r = 0; r < B; r++) {
        double mx = -INFINITY, s = 0;
        long long L = (long long)vl[r];
        for (i = 0; i < C; i++) mx = fmax(mx, vx[r * C + i]);
        for (i = 0; i < C; i++) s += exp(vx[r * C + i] - mx);
        if (L >= C) { rl = NAN; for (i = 0; i < C; i++) ref[r * C + i] = NAN; continue; }
        rl += mx + log(s) - vx[r * C + L];
        for (i = 0; i < C; i++) ref[r * C + i] = (exp(vx[r * C + i] - mx) / s - (i == L)) / (double)B;
    }
    rl /= (double)B;
    snprintf(what, sizeof what, "%s cross_entropy %s [%lld,%lld] layout %d: loss", cn, gpuml_dtype_name(dt), B, C, lay);
    tu_close(what, lv, &rl, 1, dt == GPUML_F32 ? 1e-5 : 1e-3, 1e-6);
    snprintf(what, sizeof what, "%s cross_entropy %s [%lld,%lld] layout %d: dlogits", cn, gpuml_dtype_name(dt), B, C, lay);
    tu_close(what, g, ref, B * C, dt == GPUML_F32 ? 2e-5 : tol_of(dt), 1e-7);
    free(vx); free(vl); free(g); free(lv); free(ref);
    gpuml_tensor_free(x); gpuml_tensor_free(d); gpuml_tensor_free(lab); gpuml_tensor_free(loss);
}
/* log_softmax and the cross-entropy loss on f32 rows far from 0 (a large max against log(sum)): the
   vector CPU paths and the GPU kernel once formed max + log(sum) in f32 and lost log(sum): rows at 1e4
   were off by ~1e-4 relative, at 1e10 by 100%.  Against float64 at f32's tolerance, on each context */
static void test_log_softmax_offset(void)
{
    static const double offs[] = { 1e4, -3e4, 1e7, 1e10 };
    const long long n = 1000, R = 4;
    int c, o;
    for (c = 0; c < nctx(); c++)
        for (o = 0; o < 4; o++) {
            int64_t sh[2] = {R, n}, one[1] = {1}, lsh[1] = {R};
            gpuml_ctx *ctx = ctx_at(c);
            gpuml_tensor *x = tt_new(ctx, GPUML_F32, 2, sh, 0), *y = tt_new(ctx, GPUML_F32, 2, sh, 0);
            gpuml_tensor *loss = tt_new(ctx, GPUML_F32, 1, one, 0), *lab = tt_new(ctx, GPUML_I32, 1, lsh, 0);
            double *vx = (double *)malloc(sizeof(double) * (size_t)(R * n)), *vy, *vl, lref = 0, labs[4];
            long long r, i, bad = -1;
            for (i = 0; i < R * n; i++) vx[i] = (double)(float)(offs[o] * (1.0 + 1e-7 * (double)(i % 7)) + 3.0 * tu_rand());
            tt_write(x, vx);
            for (r = 0; r < R; r++) labs[r] = (double)((r * 397 + 11) % n);
            tt_write(lab, labs);
            poison(ctx, y);
            CHECK(gpuml_log_softmax(ctx, y, x, -1) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            CHECK(gpuml_cross_entropy(ctx, loss, NULL, x, lab) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vy = tt_read(y); vl = tt_read(loss);
            for (r = 0; r < R; r++) {
                double m = -HUGE_VAL, sum = 0;
                for (i = 0; i < n; i++) m = fmax(m, vx[r * n + i]);
                for (i = 0; i < n; i++) sum += exp(vx[r * n + i] - m);
                for (i = 0; i < n; i++) {
                    const double ref = (vx[r * n + i] - m) - log(sum);
                    if (bad < 0 && !(fabs(vy[r * n + i] - ref) <= 2e-6 + 1e-5 * fabs(ref))) bad = r * n + i;
                }
                lref += ((m - vx[r * n + (long long)labs[r]]) + log(sum)) / (double)R;
            }
            if (bad >= 0) {
                r = bad / n;
                CHECK(0, "%s log_softmax offset %g: [%lld] got %.9g (x %.9g)", cname(c), offs[o], bad, vy[bad], vx[bad]);
            }
            CHECK(fabs(vl[0] - lref) <= 2e-6 + 1e-5 * fabs(lref), "%s cross-entropy offset %g: loss %.9g, want %.9g", cname(c), offs[o], vl[0], lref);
            free(vx); free(vy); free(vl);
            gpuml_tensor_free(x); gpuml_tensor_free(y); gpuml_tensor_free(loss); gpuml_tensor_free(lab);
        }
}
static void test_cross_entropy(void)
{
    int c, t;
    /* the float64 gradient against finite differences of the float64 loss */
    {
        double x[5] = {0.3, -1.2, 2.0, 0.1, -0.4}, h = 1e-6;
        int lab = 2, i, k;
        for (i = 0; i < 5; i++) {
            double f[2], mx = 2.0, s, an;
            for (k = 0; k < 2; k++) {
                int j;
                double save = x[i];
                x[i] += k ? -h : h;
                s = 0;
                for (j = 0; j < 5; j++) s += exp(x[j] - mx);
                f[k] = mx + log(s) - x[lab];
                x[i] = save;
            }
            s = 0;
            for (k = 0; k < 5; k++) s += exp(x[k] - mx);
            an = exp(x[i] - mx) / s - (i == lab);
            CHECK(fabs((f[0] - f[1]) / (2 * h) - an) < 1e-7, "xent grad %d", i);
        }
    }
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 3; t++) {
            xent_case(ctx_at(c), cname(c), FDT[t], 37, 1023, 0, 0);
            xent_case(ctx_at(c), cname(c), FDT[t], 65, 33, 1, 0);
            xent_case(ctx_at(c), cname(c), FDT[t], 4, 50000, 0, 0);
            xent_case(ctx_at(c), cname(c), FDT[t], 9, 17, 2, 1);
        }
}

/* three steps of AdamW (kind 0, 1: weight decay, 3: strided views) or SGD (kind 2) on [r, cols] */
static void optim_case(gpuml_ctx *ctx, const char *cn, int gt, int kind, int64_t r, int64_t cols)
{
    {
        {
            {
                gpuml_dtype gdt = gt ? GPUML_BF16 : GPUML_F32;
                int64_t s[2];
                long long n = (long long)r * cols, i;
                int step, lay = kind == 3 ? 1 : 0;
                gpuml_tensor *p, *g;
                gpuml_tensor *m, *v;
                double *vp, *rm = (double *)calloc((size_t)n, sizeof(double)), *rv = (double *)calloc((size_t)n, sizeof(double));
                double *gp, *gm;
                char what[160];
                s[0] = r; s[1] = cols;
                p = tt_new(ctx, GPUML_F32, 2, s, lay); g = tt_new(ctx, gdt, 2, s, lay);
                m = tt_new(ctx, GPUML_F32, 2, s, lay); v = tt_new(ctx, GPUML_F32, 2, s, lay);
                vp = tt_rand(p, -1, 1);
                CHECK(gpuml_fill(ctx, m, 0) == 0 && gpuml_fill(ctx, v, 0) == 0, "fill");
                for (step = 1; step <= 3; step++) {
                    double *vg = tt_rand(g, -1, 1);
                    if (kind < 2 || kind == 3) {
                        gpuml_adamw_desc d;
                        memset(&d, 0, sizeof d);
                        d.lr = 1e-2; d.weight_decay = kind == 1 ? 0.1 : 0; d.step = step;
                        CHECK(gpuml_adamw_step(ctx, p, g, m, v, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                        for (i = 0; i < n; i++) {
                            double b1 = 0.9, b2 = 0.999;
                            vp[i] *= 1 - 1e-2 * d.weight_decay;
                            rm[i] = b1 * rm[i] + (1 - b1) * vg[i];
                            rv[i] = b2 * rv[i] + (1 - b2) * vg[i] * vg[i];
                            vp[i] -= 1e-2 * (rm[i] / (1 - pow(b1, step))) / (sqrt(rv[i] / (1 - pow(b2, step))) + 1e-8);
                        }
                    } else {
                        gpuml_sgd_desc d;
                        memset(&d, 0, sizeof d);
                        d.lr = 0.1; d.momentum = 0.9; d.weight_decay = 0.01; d.nesterov = 1;
                        CHECK(gpuml_sgd_step(ctx, p, g, m, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                        for (i = 0; i < n; i++) {
                            double gg = vg[i] + 0.01 * vp[i];
                            rm[i] = 0.9 * rm[i] + gg;
                            gg = gg + 0.9 * rm[i];
                            vp[i] -= 0.1 * gg;
                        }
                    }
                    free(vg);
                }
                gp = tt_read(p); gm = tt_read(m);
                snprintf(what, sizeof what, "%s %s grad %s [%lld x %lld]: param", cn, kind == 2 ? "sgd" : "adamw", gpuml_dtype_name(gdt),
                         (long long)r, (long long)cols);
                tu_close(what, gp, vp, n, 1e-5, 1e-6);
                snprintf(what, sizeof what, "%s %s grad %s [%lld x %lld]: state", cn, kind == 2 ? "sgd" : "adamw", gpuml_dtype_name(gdt),
                         (long long)r, (long long)cols);
                tu_close(what, gm, rm, n, 1e-5, 1e-6);
                free(vp); free(rm); free(rv); free(gp); free(gm);
                gpuml_tensor_free(p); gpuml_tensor_free(g); gpuml_tensor_free(m); gpuml_tensor_free(v);
            }
        }
    }
}
static void test_optimizers(void)
{
    int c, gt, kind;
    for (c = 0; c < nctx(); c++)
        for (gt = 0; gt < 2; gt++)
            for (kind = 0; kind < 4; kind++) optim_case(ctx_at(c), cname(c), gt, kind, 33, 1025);
}

/* The GPU contiguous elementwise and optimizer kernels forced into each shape of
   gpuml__ew_tune (block size, vectors a thread, one-shot or grid-stride grid, streaming
   hints), and the reduction split rule through gpuml__reduce_tune, at sizes that leave
   partial chunks, a tail past the last whole vector and several chunks per block: add, mul,
   gelu (f32, f16, bf16), AdamW and SGD (f32 and bf16 gradients), sum and max. */
static void test_ew_shapes(void)
{
    static const int tunes[7][5] = { {0, 0, 0, 0, 0}, {128, 1, 1, 1, 0}, {128, 4, 1, 1, 0}, {256, 2, 2, 1, 0}, {512, 8, 1, 2, 0},
                                     {64, 3, 2, 1, 0}, {1024, 1, 1, 2, 0} };
    static const int64_t sizes[5] = { 1, 7, 4097, 100003, (1 << 20) + 5 };
    static const int rtunes[5][3] = { {0, 0, 0}, {0, 0, 1}, {2, 1, 0}, {64, 3, 0}, {5, 8, 1} };
    static const int64_t sl[1] = {(1 << 22) + 3}, sr[2] = {3, (1 << 20) + 1};
    static const int a1[1] = {1};
    int t, d, z, k;
    if (!tu_gpu) SKIP("no GPU: %s", tu_gpu_reason);
    for (t = 0; t < 7; t++) {
        char tag[64];
        memcpy(gpuml__ew_tune, tunes[t], sizeof gpuml__ew_tune);
        snprintf(tag, sizeof tag, "gpu (ew shape %d,%d,%d,%d)", tunes[t][0], tunes[t][1], tunes[t][2], tunes[t][3]);
        for (z = 0; z < 5; z++) {
            for (d = 0; d < 3; d++) {
                gpuml_ctx *ctx = tu_gpu;
                int64_t s[1];
                long long n = sizes[z], i;
                gpuml_tensor *x, *o;
                double *vx, *vo, *ref;
                char what[200];
                s[0] = sizes[z];
                binary_case(ctx, tag, GPUML_BINARY_ADD, FDT[d], 1, s, 1, s, 0, 0);
                binary_case(ctx, tag, GPUML_BINARY_MUL, FDT[d], 1, s, 1, s, 0, 0);
                x = tt_new(ctx, FDT[d], 1, s, 0); o = tt_new(ctx, FDT[d], 1, s, 0);
                vx = tt_rand(x, -4, 4);
                poison(ctx, o);
                CHECK(gpuml_gelu(ctx, o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                vo = tt_read(o);
                ref = (double *)malloc(sizeof(double) * (size_t)n);
                for (i = 0; i < n; i++) ref[i] = ref_unary(GPUML_UNARY_GELU, vx[i]);
                snprintf(what, sizeof what, "%s gelu %s n=%lld", tag, gpuml_dtype_name(FDT[d]), n);
                tu_close(what, vo, ref, n, FDT[d] == GPUML_F32 ? 2e-5 : tol_of(FDT[d]), FDT[d] == GPUML_F32 ? 1e-6 : 1e-3);
                free(vx); free(vo); free(ref);
                gpuml_tensor_free(x); gpuml_tensor_free(o);
            }
            if (z == 2 || z == 4)
                for (k = 0; k < 3; k++) optim_case(tu_gpu, tag, k == 1, k, 1, sizes[z]);
        }
    }
    memset(gpuml__ew_tune, 0, sizeof gpuml__ew_tune);
    for (t = 0; t < 5; t++) {
        char tag[80];
        memcpy(gpuml__reduce_tune, rtunes[t], sizeof gpuml__reduce_tune);
        snprintf(tag, sizeof tag, "gpu (reduce split %d a SM, %d in flight, %s)", rtunes[t][0], rtunes[t][1],
                 rtunes[t][2] ? "finish kernel" : "last block merges");
        for (d = 0; d < 3; d += 2) {
            reduce_case(tu_gpu, tag, GPUML_REDUCE_SUM, FDT[d], 1, sl, 0, NULL, 0, 0, GPUML_F32);
            reduce_case(tu_gpu, tag, GPUML_REDUCE_MAX, FDT[d], 1, sl, 0, NULL, 0, 0, FDT[d]);
            for (k = 0; k <= GPUML_REDUCE_VAR; k++)   /* three outputs, each split */
                reduce_case(tu_gpu, tag, k, FDT[d], 2, sr, 0, a1, 1, 0, k == GPUML_REDUCE_ARGMAX ? GPUML_I32 : GPUML_F32);
        }
    }
    memset(gpuml__reduce_tune, 0, sizeof gpuml__reduce_tune);
}

/* ---------------------------------------------------------------- errors ---- */
static void test_errors(void)
{
    int c;
    for (c = 0; c < nctx(); c++) {
        gpuml_ctx *ctx = ctx_at(c);
        int64_t s34[2] = {3, 4}, s35[2] = {3, 5}, s3[1] = {3}, s8[1] = {8}, s1[1] = {1}, s4[1] = {4};
        gpuml_tensor *a = gpuml_tensor_new(ctx, GPUML_F32, 2, s34), *b = gpuml_tensor_new(ctx, GPUML_F32, 2, s35);
        gpuml_tensor *o = gpuml_tensor_new(ctx, GPUML_F32, 2, s34), *i32 = gpuml_tensor_new(ctx, GPUML_I32, 2, s34);
        gpuml_tensor *h = gpuml_tensor_new(ctx, GPUML_F16, 2, s34), *v8 = gpuml_tensor_new(ctx, GPUML_F32, 1, s8);
        gpuml_tensor *p1 = gpuml_tensor_slice(v8, 0, 0, 4, 1), *p2 = gpuml_tensor_slice(v8, 0, 2, 6, 1);
        gpuml_tensor *r3 = gpuml_tensor_new(ctx, GPUML_F32, 1, s3), *l1 = gpuml_tensor_new(ctx, GPUML_F32, 1, s1);
        gpuml_tensor *lab = gpuml_tensor_new(ctx, GPUML_I32, 1, s3), *w4 = gpuml_tensor_new(ctx, GPUML_F32, 1, s4);
        int ax = 2, ax0[2] = {0, 0};
        gpuml_fill(ctx, a, 1); gpuml_fill(ctx, b, 1); gpuml_fill(ctx, v8, 1);
        CHECK_STATUS(ctx, gpuml_add(ctx, o, a, b), GPUML_ERROR_SHAPE, "[3,4] (a) and [3,5] (b) do not broadcast");
        CHECK_STATUS(ctx, gpuml_add(ctx, b, a, a), GPUML_ERROR_SHAPE, "out is [3,5] but the inputs broadcast to [3,4]");
        CHECK_STATUS(ctx, gpuml_add(ctx, o, a, i32), GPUML_ERROR_DTYPE, "b is i32");
        CHECK_STATUS(ctx, gpuml_add(ctx, h, a, a), GPUML_ERROR_DTYPE, "out is f16 but the result is f32");
        CHECK_STATUS(ctx, gpuml_add(ctx, NULL, a, a), GPUML_ERROR_INVALID_ARGUMENT, "out is NULL");
        CHECK_STATUS(ctx, gpuml_add(ctx, o, NULL, a), GPUML_ERROR_INVALID_ARGUMENT, "a is NULL");
        CHECK_STATUS(ctx, gpuml_add(ctx, p2, p1, p1), GPUML_ERROR_ALIAS, "partially overlaps");
        CHECK(gpuml_add(ctx, p1, p1, p1) == GPUML_SUCCESS, "in place: %s", gpuml_last_error(ctx));
        CHECK_STATUS(ctx, gpuml_binary(ctx, (gpuml_binary_op)99, o, a, a), GPUML_ERROR_INVALID_ARGUMENT, "not a gpuml_binary_op");
        CHECK_STATUS(ctx, gpuml_unary(ctx, (gpuml_unary_op)99, o, a), GPUML_ERROR_INVALID_ARGUMENT, "not a gpuml_unary_op");
        CHECK_STATUS(ctx, gpuml_exp(ctx, b, a), GPUML_ERROR_SHAPE, "out is [3,5] but x is [3,4]");
        CHECK_STATUS(ctx, gpuml_exp(ctx, i32, i32), GPUML_ERROR_DTYPE, "x is i32");
        CHECK_STATUS(ctx, gpuml_where(ctx, o, a, a, a), GPUML_ERROR_DTYPE, "mask is f32");
        CHECK_STATUS(ctx, gpuml_clamp(ctx, o, a, 2, 1), GPUML_ERROR_INVALID_ARGUMENT, "lo 2 > hi 1");
        CHECK_STATUS(ctx, gpuml_reduce(ctx, GPUML_REDUCE_SUM, r3, a, &ax, 1, 0), GPUML_ERROR_SHAPE, "axis 2 is out of range for x [3,4]");
        CHECK_STATUS(ctx, gpuml_reduce(ctx, GPUML_REDUCE_SUM, r3, a, ax0, 2, 0), GPUML_ERROR_SHAPE, "given twice");
        ax = 0;
        CHECK_STATUS(ctx, gpuml_reduce(ctx, GPUML_REDUCE_SUM, r3, a, &ax, 1, 0), GPUML_ERROR_SHAPE, "out is [3] but reducing x [3,4]");
        ax = 1;
        CHECK_STATUS(ctx, gpuml_reduce(ctx, GPUML_REDUCE_ARGMAX, r3, a, &ax, 1, 0), GPUML_ERROR_DTYPE, "must be i32");
        CHECK_STATUS(ctx, gpuml_reduce(ctx, GPUML_REDUCE_SUM, r3, a, NULL, 1, 0), GPUML_ERROR_INVALID_ARGUMENT, "NULL");
        CHECK_STATUS(ctx, gpuml_sum_to_shape(ctx, r3, a), GPUML_ERROR_SHAPE, "out [3] does not broadcast to grad [3,4]");
        CHECK_STATUS(ctx, gpuml_softmax(ctx, o, a, 2), GPUML_ERROR_SHAPE, "axis 2 is out of range");
        CHECK_STATUS(ctx, gpuml_softmax(ctx, h, a, 1), GPUML_ERROR_DTYPE, "y is f16 but must be f32");
        CHECK_STATUS(ctx, gpuml_layernorm(ctx, o, a, r3, NULL, 1e-5), GPUML_ERROR_SHAPE, "weight is [3] but must be [4]");
        CHECK_STATUS(ctx, gpuml_layernorm(ctx, o, a, w4, i32, 1e-5), GPUML_ERROR_DTYPE, "bias is i32");
        CHECK_STATUS(ctx, gpuml_rmsnorm(ctx, o, a, NULL, -1), GPUML_ERROR_INVALID_ARGUMENT, "eps");
        CHECK_STATUS(ctx, gpuml_cross_entropy(ctx, l1, NULL, a, r3), GPUML_ERROR_DTYPE, "labels is f32 but must be i32");
        CHECK_STATUS(ctx, gpuml_cross_entropy(ctx, l1, NULL, a, w4), GPUML_ERROR_DTYPE, "labels");
        CHECK_STATUS(ctx, gpuml_cross_entropy(ctx, r3, NULL, a, lab), GPUML_ERROR_SHAPE, "one element");
        CHECK_STATUS(ctx, gpuml_activation_backward(ctx, GPUML_UNARY_EXP, o, a, a), GPUML_ERROR_INVALID_ARGUMENT, "no backward");
        {
            gpuml_adamw_desc d;
            gpuml_sgd_desc sd;
            memset(&d, 0, sizeof d);
            memset(&sd, 0, sizeof sd);
            CHECK_STATUS(ctx, gpuml_adamw_step(ctx, o, a, b, b, &d), GPUML_ERROR_INVALID_ARGUMENT, "steps count from 1");
            d.step = 1;
            CHECK_STATUS(ctx, gpuml_adamw_step(ctx, o, a, b, b, &d), GPUML_ERROR_SHAPE, "[3,5]");
            CHECK_STATUS(ctx, gpuml_adamw_step(ctx, h, h, o, o, &d), GPUML_ERROR_DTYPE, "param is f16");
            CHECK_STATUS(ctx, gpuml_adamw_step(ctx, o, a, o, a, &d), GPUML_ERROR_ALIAS, "overlap");
            CHECK_STATUS(ctx, gpuml_sgd_step(ctx, o, a, NULL, &sd), GPUML_ERROR_INVALID_ARGUMENT, "lr");
            sd.lr = 0.1; sd.momentum = 0.9;
            CHECK_STATUS(ctx, gpuml_sgd_step(ctx, o, a, NULL, &sd), GPUML_ERROR_INVALID_ARGUMENT, "momentum_buf");
        }
        gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o); gpuml_tensor_free(i32); gpuml_tensor_free(h);
        gpuml_tensor_free(v8); gpuml_tensor_free(p1); gpuml_tensor_free(p2); gpuml_tensor_free(r3); gpuml_tensor_free(l1);
        gpuml_tensor_free(lab); gpuml_tensor_free(w4);
    }
}

/* the CPU and the GPU give the same numbers on one big input */
static void test_cpu_gpu_agree(void)
{
    int64_t s[2] = {1024, 4096};
    long long n = 1024 * 4096;
    gpuml_tensor *xc, *yc, *xg, *yg;
    double *vx, *a, *b;
    NEED_GPU();
    xc = gpuml_tensor_new(tu_cpu, GPUML_BF16, 2, s); yc = gpuml_tensor_new(tu_cpu, GPUML_BF16, 2, s);
    xg = gpuml_tensor_new(tu_gpu, GPUML_BF16, 2, s); yg = gpuml_tensor_new(tu_gpu, GPUML_BF16, 2, s);
    vx = tt_rand(xc, -3, 3);
    tt_write(xg, vx);
    CHECK(gpuml_softmax(tu_cpu, yc, xc, -1) == 0 && gpuml_softmax(tu_gpu, yg, xg, -1) == 0, "softmax");
    a = tt_read(yc); b = tt_read(yg);
    tu_close("softmax bf16 cpu vs gpu", b, a, n, 1e-2, 1e-6);
    free(a); free(b);
    CHECK(gpuml_gelu(tu_cpu, yc, xc) == 0 && gpuml_gelu(tu_gpu, yg, xg) == 0, "gelu");
    a = tt_read(yc); b = tt_read(yg);
    tu_close("gelu bf16 cpu vs gpu", b, a, n, 1e-2, 1e-6);
    free(a); free(b); free(vx);
    gpuml_tensor_free(xc); gpuml_tensor_free(yc); gpuml_tensor_free(xg); gpuml_tensor_free(yg);
}


/* CPU row edge cases that the AVX-512 softmax's blocks (512 elements) and the one-pass norms must
   get right: leading -inf blocks, NaN or +inf in a later block, a row of -inf (NaN, as the
   scalar path gives), and a layernorm of values far from 0 (the variance must not cancel) */
static void test_cpu_rows_edges(void)
{
    const long long R = 7, n = 1500;
    int64_t s[2] = {7, 1500};
    int l, t;
    for (t = 0; t < 2; t++) {
        gpuml_dtype dt = t ? GPUML_BF16 : GPUML_F32;
        gpuml_tensor *x = tt_new(tu_cpu, dt, 2, s, 0), *y = tt_new(tu_cpu, dt, 2, s, 0);
        double *vx = tt_rand(x, -4, 4), *vy, *ref = (double *)malloc(sizeof(double) * (size_t)(R * n));
        long long i;
        char what[100];
        for (i = 0; i < 1100; i++) vx[i] = -INFINITY;          /* row 0: two blocks and a part of -inf */
        for (i = 0; i < n; i++) vx[n + i] = -INFINITY;         /* row 1: all -inf */
        vx[2 * n + 1200] = NAN;                                 /* row 2: NaN late */
        vx[3 * n + 900] = INFINITY;                             /* row 3: +inf in the second block */
        for (i = 0; i < n; i++) vx[4 * n + i] -= 60.0 * (double)(i < 700);   /* row 4: the max late */
        for (i = 0; i < n; i++) vx[5 * n + i] += 1000.0 + 3.0 * (double)(i >= 1100);   /* row 5: large logits, max late */
        for (i = 0; i < n; i++) vx[6 * n + i] = i % 3 ? -3e38 : 3e38;         /* row 6: near FLT_MAX */
        tt_write(x, vx);
        vx = (free(vx), tt_read(x));
        for (l = 0; l < 2; l++) {
            poison(tu_cpu, y);
            CHECK((l ? gpuml_log_softmax : gpuml_softmax)(tu_cpu, y, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            vy = tt_read(y);
            ref_rows(l, vx, R, n, NULL, NULL, 0, ref);
            for (i = 0; i < n; i++) {
                CHECK(vy[n + i] != vy[n + i] && vy[2 * n + i] != vy[2 * n + i] && vy[3 * n + i] != vy[3 * n + i],
                      "%s %s: rows of -inf, with NaN, with +inf give NaN (%lld: %g %g %g)", l ? "log_softmax" : "softmax",
                      gpuml_dtype_name(dt), i, vy[n + i], vy[2 * n + i], vy[3 * n + i]);
                if (tu_failed_now) break;
            }
            snprintf(what, sizeof what, "%s %s leading -inf", l ? "log_softmax" : "softmax", gpuml_dtype_name(dt));
            tu_close(what, vy, ref, n, t ? 2e-2 : 2e-5, l ? 1e-4 : 1e-7);
            snprintf(what, sizeof what, "%s %s late max, large logits", l ? "log_softmax" : "softmax", gpuml_dtype_name(dt));
            tu_close(what, vy + 4 * n, ref + 4 * n, 2 * n, t ? 2e-2 : 2e-5, l ? 1e-4 + (t ? 2e-2 : 0) : 1e-7);
            if (!l) {
                snprintf(what, sizeof what, "softmax %s near FLT_MAX", gpuml_dtype_name(dt));
                tu_close(what, vy + 6 * n, ref + 6 * n, n, t ? 2e-2 : 2e-5, 1e-7);
            }
            free(vy);
        }
        for (i = 0; i < R * n; i++) vx[i] = 1e4 + (double)((i * 7919) % 2001 - 1000) * 1e-3 * (t ? 8.0 : 1.0);
        tt_write(x, vx);
        vx = (free(vx), tt_read(x));
        for (l = 0; l < 2; l++) {
            poison(tu_cpu, y);
            if (l) CHECK(gpuml_rmsnorm(tu_cpu, y, x, NULL, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            else CHECK(gpuml_layernorm(tu_cpu, y, x, NULL, NULL, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            vy = tt_read(y);
            ref_rows(l ? 3 : 2, vx, R, n, NULL, NULL, 1e-5, ref);
            snprintf(what, sizeof what, "%s %s of 1e4 + small", l ? "rmsnorm" : "layernorm", gpuml_dtype_name(dt));
            tu_close(what, vy, ref, R * n, t ? 2e-2 : 3e-4, t ? 4e-2 : 3e-4);
            free(vy);
        }
        free(vx); free(ref);
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
}


/* the AVX-512 elementwise path's bf16 conversions give the bits of the scalar ones (x * 1 keeps x;
   NaN stays NaN), with and without non-temporal stores */
static void test_cpu_bf16_avx512_bits(void)
{
#if GPUML__HAVE_AVX2_PATH
    enum { N = 4099 };
    static float v[N], one[N], back[N + 16];
    static unsigned char o[2 * N + 64];
    unsigned long long x;
    int i = 0, bad = 0, nt;
    if (gpuml__cpu_simd() < 2) SKIP("no AVX-512 on this CPU (or GPUML_CPU_SIMD caps it)");
    for (x = 0; x < 0x100000000ULL && i < N; x += 1048573ULL, i++) { unsigned u = (unsigned)x; memcpy(&v[i], &u, 4); one[i] = 1.0f; }
    v[0] = NAN; v[1] = -INFINITY; v[2] = 3.3895314e38f; v[3] = -0.0f; v[4] = 1.00390625f; v[5] = 1.01171875f;   /* ties */
    for (nt = 0; nt < 2; nt++) {
        unsigned char *op = o + 2 + 2 * nt;   /* not aligned: the stream path stores a head first */
        gpuml__ew_avx512(GPUML_BINARY_MUL, i, (char *)op, 1, (const char *)v, 0, (const char *)one, 0, nt);
        gpuml__ew_avx512(GPUML_BINARY_MUL, i, (char *)(back + 1), 0, (const char *)op, 1, (const char *)one, 0, nt);
        for (x = 0; (int)x < i; x++) {
            unsigned short h;
            float f;
            memcpy(&h, op + 2 * x, 2);
            f = gpuml__bf16_to_f32(h);
            bad += h != gpuml__f32_to_bf16(v[x]) || memcmp(&f, &back[x + 1], 4) != 0;
        }
    }
    CHECK(bad == 0, "%d of %d AVX-512 bf16 conversions differ from the scalar ones", bad, 2 * i);
#else
    SKIP("no x86 SIMD paths in this build");
#endif
}

/* the AVX-512 loops' f16 (gpuml__v16_ld / gpuml__v16_st, kind 2) bit for bit against the scalar
   converters: every f16 pattern through an f16 * 1 -> f32 (NaNs as sign | 0x7fc00000) and f32 patterns
   across the range, with NaNs of both signs and payloads, the overflow edge, subnormals and ties,
   through f32 * 1 -> f16 (NaNs as 0x7fff), stored plainly and streamed; then an f16 sum of 64K + 5
   values against the scalar sum in double */
static void test_cpu_f16_avx512_bits(void)
{
#if GPUML__HAVE_AVX2_PATH
    enum { N = 4099 + 16 };
    static float v[N], one[65536], got32[65536 + 16];
    static unsigned short h16[65536 + 8], one16[65536];
    static unsigned char o[2 * N + 64];
    static const float spec[16] = { 65504.0f, 65519.996f, 65520.0f, -65520.0f, 5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 8.940697e-8f,
                                    6.1035156e-5f, 6.1035152e-5f, 1.00048828125f, 1.00146484375f, -0.0f, INFINITY, -INFINITY, 1e-30f };
    unsigned long long x;
    int i = 0, bad = 0, nt;
    double ref = 0, got;
    if (gpuml__cpu_simd() < 2) SKIP("no AVX-512 on this CPU (or GPUML_CPU_SIMD caps it)");
    for (i = 0; i < 65536; i++) { h16[i] = (unsigned short)i; one16[i] = 0x3c00; one[i] = 1.0f; }
    gpuml__ew_avx512(GPUML_BINARY_MUL, 65536 - 3, (char *)(got32 + 1), 0, (const char *)h16, 2, (const char *)one16, 2, 0);
    for (i = 0; i < 65536 - 3; i++) {
        float w = gpuml__f16_to_f32(h16[i]);
        if (w == w) w = w * 1.0f;
        bad += memcmp(&w, &got32[i + 1], 4) != 0;
    }
    CHECK(bad == 0, "%d of 65533 AVX-512 f16 loads differ from the scalar conversion", bad);
    bad = 0;
    for (x = 0, i = 0; x < 0x100000000ULL && i < 4099; x += 1048573ULL, i++) { unsigned u = (unsigned)x; memcpy(&v[i], &u, 4); }
    for (x = 0; x < 16; x++) v[i++] = spec[x];
    { unsigned u = 0xffc00001u; memcpy(&v[0], &u, 4); u = 0x7f800001u; memcpy(&v[1], &u, 4); }   /* -qNaN with payload, sNaN */
    for (nt = 0; nt < 2; nt++) {
        unsigned char *op = o + 2 + 2 * nt;   /* not aligned: the stream path stores a head first */
        gpuml__ew_avx512(GPUML_BINARY_MUL, i, (char *)op, 2, (const char *)v, 0, (const char *)one, 0, nt);
        for (x = 0; (int)x < i; x++) {
            unsigned short h;
            memcpy(&h, op + 2 * x, 2);
            bad += h != gpuml__f32_to_f16(v[x] == v[x] ? v[x] * 1.0f : v[x]);
        }
    }
    _mm_sfence();
    CHECK(bad == 0, "%d of %d AVX-512 f32 -> f16 stores differ from the scalar conversion", bad, 2 * i);
    for (i = 0; i < 65536; i++) h16[i] = (unsigned short)(0x3000 + (i * 7919) % 0x1800 + (i % 3 == 0 ? 0x8000 : 0));   /* finite */
    for (i = 0; i < 65536 - 5; i++) ref += (double)gpuml__f16_to_f32(h16[i]);
    got = gpuml__vsum_avx512((const char *)h16, 2, 65536 - 5);
    CHECK(fabs(got - ref) <= 1e-5 * (1.0 + fabs(ref)), "AVX-512 f16 sum %.9g, scalar %.9g", got, ref);
#else
    SKIP("no x86 SIMD paths in this build");
#endif
}

/* the CPU's F16C conversions (gpuml__cpu_ld / gpuml__cpu_st of dense f16) bit for bit against the scalar
   gpuml__f16_to_f32 / gpuml__f32_to_f16: every f16 pattern loaded; f32 patterns across the whole range
   stored, with NaNs of both signs and payloads, infinities, the overflow edge (65504, 65519.996, 65520),
   subnormal results and ties; then an f16 add through gpuml_add against the scalar reference */
static void test_cpu_f16_f16c_bits(void)
{
#if GPUML__HAVE_AVX2_PATH
    enum { N = 4099 + 16 };
    static float v[N], got32[65536 + 8];
    static unsigned short h16[65536 + 8], out16[N + 8];
    static const float spec[16] = { 65504.0f, 65519.996f, 65520.0f, -65520.0f, 5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 8.940697e-8f,
                                    6.1035156e-5f, 6.1035152e-5f, 1.00048828125f, 1.00146484375f, -0.0f, INFINITY, -INFINITY, 1e-30f };
    unsigned long long x;
    int i = 0, bad = 0, n;
    if (gpuml__cpu_simd() < 1 || !gpuml__cpu_has_f16c()) SKIP("no AVX2 + F16C on this CPU (or GPUML_CPU_SIMD caps it)");
    for (i = 0; i < 65536; i++) h16[i] = (unsigned short)i;
    n = (int)gpuml__f16_ld_f16c((const char *)h16, 65536, got32);
    CHECK(n == 65536, "loaded %d of 65536", n);
    for (i = 0; i < n; i++) {
        float w = gpuml__f16_to_f32(h16[i]);
        bad += memcmp(&w, &got32[i], 4) != 0;
    }
    CHECK(bad == 0, "%d of 65536 f16 -> f32 F16C conversions differ from the scalar ones", bad);
    bad = 0;   /* the CPU GEMM's inline packing conversions (its F16C runs are gpuml__f16_ld_f16c, above) */
    for (i = 0; i < 65536; i++) {
        float w = gpuml__f16_to_f32(h16[i]), w2 = gpuml__gemm_h2f(h16[i]);
        bad += memcmp(&w, &w2, 4) != 0;
        w = gpuml__bf16_to_f32(h16[i]); w2 = gpuml__gemm_b2f(h16[i]);
        bad += memcmp(&w, &w2, 4) != 0;
    }
    CHECK(bad == 0, "%d of 65536 f16 / bf16 patterns convert differently in the GEMM's packing", bad);
    bad = 0;
    for (x = 0, i = 0; x < 0x100000000ULL && i < 4099; x += 1048573ULL, i++) { unsigned u = (unsigned)x; memcpy(&v[i], &u, 4); }
    for (x = 0; x < 16; x++) v[i++] = spec[x];
    { unsigned u = 0xffc00001u; memcpy(&v[0], &u, 4); u = 0x7f800001u; memcpy(&v[1], &u, 4); }   /* -qNaN with payload, sNaN */
    n = (int)gpuml__f16_st_f16c((char *)out16, i, v);
    CHECK(n == i - i % 8, "stored %d of %d", n, i);
    for (x = 0; (int)x < n; x++) bad += out16[x] != gpuml__f32_to_f16(v[x]);
    CHECK(bad == 0, "%d of %d f32 -> f16 F16C conversions differ from the scalar ones", bad, n);
    {   /* through the op: rows of 13 (a vector and a tail each) */
        int64_t s2[2] = {37, 13};
        gpuml_tensor *a = gpuml_tensor_new(tu_cpu, GPUML_F16, 2, s2), *b = gpuml_tensor_new(tu_cpu, GPUML_F16, 2, s2), *o = gpuml_tensor_new(tu_cpu, GPUML_F16, 2, s2);
        unsigned short *pa = (unsigned short *)gpuml_tensor_data(a), *pb = (unsigned short *)gpuml_tensor_data(b), *po = (unsigned short *)gpuml_tensor_data(o);
        bad = 0;
        for (i = 0; i < 37 * 13; i++) { pa[i] = (unsigned short)(i * 2654435761u >> 16); pb[i] = (unsigned short)(i * 40503u + 7u); }
        CHECK(gpuml_add(tu_cpu, o, a, b) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
        for (i = 0; i < 37 * 13; i++) bad += po[i] != gpuml__f32_to_f16(gpuml__f16_to_f32(pa[i]) + gpuml__f16_to_f32(pb[i]));
        CHECK(bad == 0, "%d of %d f16 sums differ from the scalar reference", bad, 37 * 13);
        gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(o);
    }
#else
    SKIP("no x86 SIMD paths in this build");
#endif
}

/* the CPU activations against float64 over a dense sweep of [-10, 10] (2^20 + 1 points, every SIMD level
   through cpu_simd_paths) plus the extremes: gelu (erf form) to 1e-6 relative (the vector erfc: ~5 ulp at
   worst, 80 before), exp and sigmoid to 3e-7; the tanh form's argument 2u = 2 sqrt(2/pi)(x + 0.044715 x^3)
   is rounded in f32, so its error grows with |2u|: 3e-7 (1 + |2u|).  Results below 1e-36 may be flushed
   to 0.  bf16 outputs: within 4e-3 (half a bf16 ulp at the bottom of a binade is 3.9e-3; gelu into bf16
   takes a cheaper Phi, ~2e-5, which moves 0.007% of the results by one bf16 ulp, all near a midpoint). */
static void test_cpu_act_ulp(void)
{
    static const int ops[5] = { GPUML_UNARY_GELU, GPUML_UNARY_GELU_TANH, GPUML_UNARY_EXP, GPUML_UNARY_SIGMOID, GPUML_UNARY_SILU };
    static const double ext[] = { 13.0, 13.2, 14.0, 20.0, 88.0, 1e30, 3.4e38, 1e-30, 1.2e-38, 0.0 };
    const long long m = 1 << 20, ne = (long long)(sizeof ext / sizeof ext[0]), n = m + 1 + 2 * ne + 3;
    int64_t s[1] = {m + 1 + 2 * (int64_t)(sizeof ext / sizeof ext[0]) + 3};
    int k, t;
    long long i;
    for (t = 0; t < 2; t++)
        for (k = 0; k < 5; k++) {
            gpuml_dtype dt = t ? GPUML_BF16 : GPUML_F32;
            gpuml_tensor *x = tt_new(tu_cpu, dt, 1, s, 0), *o = tt_new(tu_cpu, dt, 1, s, 0);
            double *vx = (double *)malloc(sizeof(double) * (size_t)n), *vo, worst = 0, wx = 0;
            long long bad = 0, first = -1;
            for (i = 0; i <= m; i++) vx[i] = (double)(float)(-10.0 + 20.0 * (double)i / (double)m);
            for (i = 0; i < ne; i++) { vx[m + 1 + 2 * i] = ext[i]; vx[m + 2 + 2 * i] = -ext[i]; }
            vx[n - 3] = NAN; vx[n - 2] = INFINITY; vx[n - 1] = -INFINITY;
            tt_write(x, vx);
            vx = (free(vx), tt_read(x));   /* as stored (bf16: rounded) */
            poison(tu_cpu, o);
            CHECK(gpuml_unary(tu_cpu, (gpuml_unary_op)ops[k], o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            vo = tt_read(o);
            for (i = 0; i < n; i++) {
                double r = ref_unary(ops[k], vx[i]), u = 1.5957691216057308 * (vx[i] + 0.044715 * vx[i] * vx[i] * vx[i]), tol, e;
                if (vx[i] != vx[i] || isinf(vx[i])) {
                    /* NaN in, NaN out; exp(-inf) = 0, sigmoid(+-inf) = 1, 0; gelu(+inf) = +inf (x * erfc(-inf)/2 and
                       the float64 reference agree on the rest: NaN for -inf * 0) */
                    int ok = r != r ? vo[i] != vo[i] : vo[i] == r;
                    if (!ok) { bad++; if (first < 0) first = i; }
                    continue;
                }
                r = (double)(float)r;   /* as an f32 result: overflow to inf */
                if (isinf(r)) { if (vo[i] != r) { bad++; if (first < 0) first = i; } continue; }
                tol = t ? 4e-3 : ops[k] == GPUML_UNARY_GELU ? 1e-6 : ops[k] == GPUML_UNARY_GELU_TANH ? 3e-7 * (1 + fabs(u)) : 3e-7;
                if (ops[k] == GPUML_UNARY_SILU) tol = t ? 4e-3 : 3e-7 * (1 + fabs(vx[i]));   /* x sigmoid(x): exp(-x) of a rounded x */
                e = fabs(vo[i] - r);
                if (e > 1e-36 + tol * fabs(r)) { bad++; if (first < 0) first = i; }
                if (fabs(r) > 1e-30 && e / fabs(r) > worst) { worst = e / fabs(r); wx = vx[i]; }
            }
            CHECK(bad == 0, "unary %d %s: %lld of %lld off, first x = %.9g: got %.9g want %.9g", ops[k], gpuml_dtype_name(dt), bad, n,
                  vx[first < 0 ? 0 : first], vo[first < 0 ? 0 : first], ref_unary(ops[k], vx[first < 0 ? 0 : first]));
            if (t == 0 && !tu_failed_now && getenv("TEST_VERBOSE"))
                printf("    unary %d f32, CPU SIMD level %d: max relative error %.3g at x = %.9g\n", ops[k], gpuml__cpu_simd(), worst, wx);
            free(vx); free(vo);
            gpuml_tensor_free(x); gpuml_tensor_free(o);
        }
}

/* gelu from f16 into f16 and bf16 into bf16 over every 16-bit value (NaNs, infinities, subnormals
   included), on each context: within half an ulp of the float64 result plus the approximation's
   error (bf16 4e-3 relative, f16 5.2e-4; results below the f16 normals within 3.1e-8, f32-level
   tiny ones may flush: 1e-36), NaN where the reference is NaN (NaN in, gelu(-inf) = -inf * 0),
   +inf for +inf, and at most 1% of the results one ulp off the correctly rounded value (the
   GPU's 16-bit GELU takes a cheaper Phi than f32, ~8e-6 relative for |x| < 5: on the H200 382 f16
   and 135 bf16 results of 65536 are one ulp off, nearly all at |x| < 1, where f16 values are
   densest; the CPU's 7 and 6 with AVX-512 (f16 1 before its own loop of 2026-12-07); a float64
   emulation of the GPU's steps gives the same 384 f16) */
static void test_gelu_16bit_all(void)
{
    const int64_t n = 65536;
    int64_t s[1];
    int c, t;
    s[0] = n;
    for (c = 0; c < nctx(); c++)
        for (t = 0; t < 2; t++) {
            gpuml_ctx *ctx = ctx_at(c);
            gpuml_dtype dt = t ? GPUML_BF16 : GPUML_F16;
            gpuml_tensor *x = tt_new(ctx, dt, 1, s, 0), *o = tt_new(ctx, dt, 1, s, 0);
            uint16_t *h = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)n);
            double *vx, *vo;
            int64_t i, bad = 0, first = -1, off = 0;
            for (i = 0; i < n; i++) h[i] = (uint16_t)i;
            CHECK(gpuml_tensor_write(x, h, (size_t)n * 2) == GPUML_SUCCESS, "write");
            free(h);
            vx = tt_read(x);
            poison(ctx, o);
            CHECK(gpuml_unary(ctx, GPUML_UNARY_GELU, o, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
            vo = tt_read(o);
            for (i = 0; i < n; i++) {
                double r = ref_unary(GPUML_UNARY_GELU, vx[i]), rr;
                int ok;
                if (vx[i] != vx[i] || isinf(vx[i])) ok = r != r ? vo[i] != vo[i] : vo[i] == r;
                else {
                    rr = round_to(dt, r);
                    if (isinf(rr)) ok = vo[i] == rr || fabs(vo[i]) >= 65504.0;
                    else ok = fabs(vo[i] - r) <= (t ? 4e-3 : 5.2e-4) * fabs(r) + (t ? 1e-36 : 3.1e-8);
                    off += vo[i] != rr;
                }
                if (!ok) { bad++; if (first < 0) first = i; }
            }
            CHECK(bad == 0, "%s gelu %s: %lld of %lld off, first x = %.9g: got %.9g want %.9g", cname(c), gpuml_dtype_name(dt),
                  (long long)bad, (long long)n, vx[first < 0 ? 0 : first], vo[first < 0 ? 0 : first], ref_unary(GPUML_UNARY_GELU, vx[first < 0 ? 0 : first]));
            CHECK(off <= n / 100, "%s gelu %s: %lld of %lld results not the correctly rounded value", cname(c), gpuml_dtype_name(dt),
                  (long long)off, (long long)n);
            if (getenv("TEST_VERBOSE")) printf("    %s gelu %s: %lld of %lld not correctly rounded\n", cname(c), gpuml_dtype_name(dt), (long long)off, (long long)n);
            free(vx); free(vo);
            gpuml_tensor_free(x); gpuml_tensor_free(o);
        }
}

/* CPU softmax and log-softmax over rows large enough in all (>= 16 MiB of output) that the rows
   store their results streaming: f32 and bf16 against float64, and an f32 softmax in place equal
   bit for bit to the same softmax out of place (the AVX2 f32 rows put the exponentials in the row
   buffer there and stream y, instead of writing them into y itself; cpu_simd_paths runs this at
   each SIMD level) */
static void test_cpu_softmax_streamed(void)
{
    const long long R = 4099, n = 1025;
    int64_t s[2];
    int l, t;
    s[0] = R; s[1] = n;
    for (t = 0; t < 2; t++)
        for (l = 0; l < 2; l++) softmax_case(tu_cpu, "cpu (streamed)", l, t ? GPUML_BF16 : GPUML_F32, R, n, 1, 0);
    {
        gpuml_tensor *x = tt_new(tu_cpu, GPUML_F32, 2, s, 0), *y = tt_new(tu_cpu, GPUML_F32, 2, s, 0);
        double *vx = tt_rand(x, -4, 4), *vy, *vi;
        long long i, diff = 0;
        poison(tu_cpu, y);
        CHECK(gpuml_softmax(tu_cpu, y, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
        CHECK(gpuml_softmax(tu_cpu, x, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
        vy = tt_read(y); vi = tt_read(x);
        for (i = 0; i < R * n; i++) diff += vy[i] != vi[i];
        CHECK(diff == 0, "softmax f32 in place: %lld of %lld results differ from out of place", diff, R * n);
        free(vx); free(vy); free(vi);
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
}

/* CPU gelu from bf16 into bf16 and from f16 into f16: the loop made for them (AVX-512: a rebased
   table, degree 3 for bf16 and 5 for f16, one FMA for x Phi(x), rounding without a NaN fix-up)
   against the generic loop, on every 16-bit value in order (vectors of like magnitudes: the fast
   path where all are below 4, the generic one at the tails, inf and NaN) and on scrambled values
   below 4 (the fast path, with +-0 among them), at an odd length: both within half an ulp of
   float64 plus the approximation's error (bf16 4e-3, f16 5.2e-4 relative; NaN where it is NaN,
   +inf as +inf), at most 0.1% of the results one ulp apart, -0 kept.  Without AVX-512 (or off x86)
   both runs take the same portable code and the checks still hold. */
static void test_gelu_bf16_paths(void)
{
    const int64_t n = 2 * 65536 + 5;
    int t;
    for (t = 0; t < 2; t++) {
        const gpuml_dtype dt = t ? GPUML_F16 : GPUML_BF16;
        const double rel = t ? 5.2e-4 : 4e-3, tiny = t ? 3.1e-8 : 1e-36, ulp = t ? 1024.0 : 128.0;
        const uint32_t below4 = t ? 0x4400u : 0x4080u;   /* 4.0's bits */
        int64_t s[1], i, diff = 0, bad[2] = { 0, 0 }, first[2] = { -1, -1 };
        gpuml_tensor *x, *o[2];
        double *vx, *vo[2];
        int k;
        s[0] = n;
        x = tt_new(tu_cpu, dt, 1, s, 0); o[0] = tt_new(tu_cpu, dt, 1, s, 0); o[1] = tt_new(tu_cpu, dt, 1, s, 0);
        {
            uint16_t *h = (uint16_t *)malloc(sizeof(uint16_t) * (size_t)n);
            /* every 16-bit value in order, then values below 4 in magnitude in a scrambled order (whole
               vectors for the fast path: within one, either sign, denormals, +-0 every 997th) */
            for (i = 0; i < n; i++) {
                const uint32_t r = (uint32_t)i * 2654435761u >> 8;
                h[i] = (uint16_t)(i < 65536 ? i : i % 997 == 0 ? (i / 997 % 2 ? 0x8000u : 0u) : (r & 0x8000u) | (r % below4));
            }
            CHECK(gpuml_tensor_write(x, h, (size_t)n * 2) == GPUML_SUCCESS, "write");
            free(h);
        }
        vx = tt_read(x);
        for (k = 0; k < 2; k++) {
            poison(tu_cpu, o[k]);
#if GPUML__HAVE_AVX2_PATH
            gpuml__gelu_bf16_generic = k;
#endif
            CHECK(gpuml_unary(tu_cpu, GPUML_UNARY_GELU, o[k], x) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            vo[k] = tt_read(o[k]);
        }
#if GPUML__HAVE_AVX2_PATH
        gpuml__gelu_bf16_generic = 0;
#endif
        for (i = 0; i < n; i++) {
            const double r = (double)(float)ref_unary(GPUML_UNARY_GELU, vx[i]);
            for (k = 0; k < 2; k++) {
                /* NaN where the reference is NaN (NaN in; -inf: -inf * 0); f16 overflow past 65504 is inf */
                int ok = r != r ? vo[k][i] != vo[k][i] : isinf(r) ? vo[k][i] == r : fabs(vo[k][i] - r) <= tiny + rel * fabs(r) ||
                         (t && fabs(r) >= 65504.0 && isinf(vo[k][i]));
                if (vx[i] == 0 && signbit(vx[i]) != signbit(vo[k][i])) ok = 0;
                if (!ok && bad[k]++ == 0) first[k] = i;
            }
            if (vo[0][i] != vo[1][i] && !(vo[0][i] != vo[0][i] && vo[1][i] != vo[1][i])) {
                diff++;
                CHECK(fabs(vo[0][i] - vo[1][i]) <= fabs(vo[1][i]) / ulp + (t ? 6e-8 : 0.0), "%s x = %.9g: %.9g vs the generic loop's %.9g (over one ulp)",
                      gpuml_dtype_name(dt), vx[i], vo[0][i], vo[1][i]);
            }
        }
        for (k = 0; k < 2; k++)
            CHECK(bad[k] == 0, "%s %s loop: %lld of %lld off, first x = %.9g: got %.9g want %.9g", gpuml_dtype_name(dt), k ? "generic" : "16-bit",
                  (long long)bad[k], (long long)n, vx[first[k] < 0 ? 0 : first[k]], vo[k][first[k] < 0 ? 0 : first[k]],
                  ref_unary(GPUML_UNARY_GELU, vx[first[k] < 0 ? 0 : first[k]]));
        CHECK(diff * 1000 <= n, "%s: %lld of %lld results differ between the loops", gpuml_dtype_name(dt), (long long)diff, (long long)n);
        if (getenv("TEST_VERBOSE")) printf("    %s: %lld of %lld results differ between the loops\n", gpuml_dtype_name(dt), (long long)diff, (long long)n);
        free(vx); free(vo[0]); free(vo[1]);
        gpuml_tensor_free(x); gpuml_tensor_free(o[0]); gpuml_tensor_free(o[1]);
    }
}

/* the CPU row ops at odd lengths (vector tails, one short block, a block and a bit) in f32 and bf16:
   softmax, log-softmax, layernorm, rmsnorm and their backward passes, cross-entropy */
static void test_cpu_rows_odd(void)
{
    static const long long lens[6] = { 1, 3, 15, 17, 1023, 4097 };
    int t, k, r;
    for (t = 0; t < 2; t++)
        for (k = 0; k < 6; k++) {
            gpuml_dtype dt = t ? GPUML_BF16 : GPUML_F32;
            for (r = 0; r < 2; r++) {
                softmax_case(tu_cpu, "cpu", r, dt, 5, lens[k], 1, 0);
                norm_case(tu_cpu, "cpu", r, dt, GPUML_F32, 5, lens[k], 1, 1, 0);
                norm_case(tu_cpu, "cpu", r, dt, dt, 3, lens[k], 0, 0, 0);
                norm_bwd_case(tu_cpu, "cpu", r, dt, 6, lens[k], 1, 0);
                norm_bwd_case(tu_cpu, "cpu", r, dt, 2, lens[k], 0, 0);
            }
            xent_case(tu_cpu, "cpu", dt, 5, lens[k], 0, 0);
        }
}

/* layernorm rows whose first elements or first blocks sit far from the rest (the AVX-512 and AVX2
   statistics sum in f32 around a shift: the first 64 elements' mean, then the running mean), a ramp, and
   a row far from 0 (1000 + U(-1, 1): summed around 0 in f32 its squares would cancel) */
static void test_cpu_layernorm_shift(void)
{
    const long long R = 5, n = 3000;
    int64_t s[2] = {5, 3000};
    gpuml_tensor *x = tt_new(tu_cpu, GPUML_F32, 2, s, 0), *y = tt_new(tu_cpu, GPUML_F32, 2, s, 0);
    double *vx = tt_rand(x, -1, 1), *vy, *ref = (double *)malloc(sizeof(double) * (size_t)(R * n));
    long long i;
    for (i = 0; i < 64; i++) vx[i] += 1000.0;                 /* row 0: the first 64 far out */
    for (i = 0; i < 16; i++) vx[n + i] = 3e4 + vx[n + i];     /* row 1: the first 16 far out */
    for (i = 0; i < 1024; i++) vx[2 * n + i] += 1e4;          /* row 2: the first block far from the others */
    for (i = 0; i < n; i++) vx[3 * n + i] = 0.01 * (double)i + 1e-3 * vx[3 * n + i];   /* row 3: a ramp */
    for (i = 0; i < n; i++) vx[4 * n + i] += 1000.0;                                     /* row 4: far from 0 */
    tt_write(x, vx);
    vx = (free(vx), tt_read(x));
    poison(tu_cpu, y);
    CHECK(gpuml_layernorm(tu_cpu, y, x, NULL, NULL, 1e-5) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
    vy = tt_read(y);
    ref_rows(2, vx, R, n, NULL, NULL, 1e-5, ref);
    tu_close("layernorm f32, outlying first elements / blocks, a ramp, a row far from 0", vy, ref, R * n, 3e-5, 3e-5);
    free(vx); free(vy); free(ref);
    gpuml_tensor_free(x); gpuml_tensor_free(y);
}

/* 16-bit softmax and log-softmax outputs against the correctly rounded double reference (the AVX2
   exp of degree 5 for 16-bit results, 1.8e-7, must round the same almost everywhere: an exp off by
   5e-4 leaves a quarter of the bf16 outputs and half the f16 ones off), and f32 rows of logits near
   1e4 - 1.3e5 (the exponentials in the max's frame; a log-softmax's x + (-max - log sum) rounds in f32
   to about an ulp of the logits, which also bounds what the frame's 2^c could change there) */
static void test_cpu_softmax_rounded(void)
{
    const long long R = 4, n = 3000;
    int64_t s[2] = {4, 3000};
    static const double offs[4] = { 1e4, 3.1e4, 7.7e4, 1.3e5 };
    int t, l;
    long long i;
    for (t = 0; t < 3; t++) {
        gpuml_dtype dt = t == 0 ? GPUML_BF16 : t == 1 ? GPUML_F16 : GPUML_F32;
        gpuml_tensor *x = tt_new(tu_cpu, dt, 2, s, 0), *y = tt_new(tu_cpu, dt, 2, s, 0), *q = tt_new(tu_cpu, dt, 2, s, 0);
        double *vx = tt_rand(x, -6, 6), *vy, *rr, *ref = (double *)malloc(sizeof(double) * (size_t)(R * n));
        char what[100];
        if (dt == GPUML_F32) for (i = 0; i < R * n; i++) vx[i] += offs[i / n];
        else for (i = 0; i < n; i++) {
            vx[n + i] = 3.0 * vx[n + i] + 40.0;   /* a row of larger logits */
            /* ramps down from 7 by 85.2 and by 87 (every 100th by 134: exp 0 in bf16 too): the AVX2 exponentials
               without their clamp (range log2e <= 123) and with it, the smallest results near 2^-123 and 2^-125.5 */
            vx[2 * n + i] = 7.0 - 85.2 * (double)i / (double)(n - 1);
            vx[3 * n + i] = i % 100 == 3 ? -127.0 : 7.0 - 87.0 * (double)((i * 7) % n) / (double)(n - 1);
        }
        tt_write(x, vx);
        vx = (free(vx), tt_read(x));
        for (l = 0; l < 2; l++) {
            long long off = 0;
            poison(tu_cpu, y);
            CHECK((l ? gpuml_log_softmax : gpuml_softmax)(tu_cpu, y, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            vy = tt_read(y);
            ref_rows(l, vx, R, n, NULL, NULL, 0, ref);
            snprintf(what, sizeof what, "%s %s%s", l ? "log_softmax" : "softmax", gpuml_dtype_name(dt), dt == GPUML_F32 ? " of 1e4 - 1.3e5" : "");
            tu_close(what, vy, ref, R * n, dt == GPUML_F32 ? 1e-5 : 1e-2, dt != GPUML_F32 ? 1e-6 : l ? offs[R - 1] / 4194304.0 : 1e-7);
            if (dt != GPUML_F32) {
                tt_write(q, ref);
                rr = tt_read(q);
                for (i = 0; i < R * n; i++) off += vy[i] != rr[i];
                CHECK(off <= R * n / 100, "%s: %lld of %lld not correctly rounded (at most 1%%)", what, off, R * n);
                free(rr);
            }
            free(vy);
        }
        free(vx); free(ref);
        gpuml_tensor_free(x); gpuml_tensor_free(y); gpuml_tensor_free(q);
    }
    /* 16-bit rows with a NaN, a +inf, one finite element among -inf, all -inf: the bits of this level's
       softmax against the scalar path's (a row whose sum is not finite must keep the stores' NaN
       fix-up: NaN as 0x7fff) */
    for (t = 0; t < 2; t++) {
        gpuml_dtype dt = t == 0 ? GPUML_BF16 : GPUML_F16;
        gpuml_tensor *x = tt_new(tu_cpu, dt, 2, s, 0), *y = tt_new(tu_cpu, dt, 2, s, 0);
        double *vx = tt_rand(x, -6, 6);
        unsigned short *b[2];
        const int lv = gpuml__cpu_simd();
        int k;
        vx[1234] = NAN;
        vx[n + 100] = INFINITY;
        for (i = 0; i < n; i++) vx[2 * n + i] = vx[3 * n + i] = -INFINITY;
        vx[2 * n + 7] = 1.0;
        tt_write(x, vx);
        for (k = 0; k < 2; k++) {
            b[k] = (unsigned short *)malloc(sizeof(unsigned short) * (size_t)(R * n));
            if (k) gpuml__cpu_simd_ctl(0);
            poison(tu_cpu, y);
            CHECK(gpuml_softmax(tu_cpu, y, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
            gpuml_tensor_read(y, b[k], sizeof(unsigned short) * (size_t)(R * n));
        }
        gpuml__cpu_simd_ctl(lv);
        for (i = 0; i < R * n; i++)
            if (b[0][i] != b[1][i]) {
                CHECK(0, "softmax %s, row %lld with NaN / inf: element %lld is 0x%04x on this path, 0x%04x on the scalar one", gpuml_dtype_name(dt),
                      i / n, i % n, b[0][i], b[1][i]);
                break;
            }
        free(vx); free(b[0]); free(b[1]);
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
}

/* softmax (f32 and bf16) of rows far from 0 (1e10, -1e10, 1e30, -3e36) against the double reference: the
   vector paths' exp frame (gpuml__sm_frame) carried 2^c with |c| up to half an ulp of M log2e (-488 at
   1.5e10) and such rows came out NaN.  (Not the log-softmax: the vector paths add -max - log(sum) to x
   as one f32, which at |max| 1e10 loses log(sum) (-6144 for -6148.5); open, bench/NOTES_ops.md.) */
static void test_cpu_softmax_far(void)
{
    const long long R = 4, n = 1500;
    int64_t s[2] = {4, 1500};
    static const double base[4] = { 1e10, -1e10, 1e30, -3e36 };
    int t;
    long long i;
    for (t = 0; t < 2; t++) {
        gpuml_dtype dt = t ? GPUML_BF16 : GPUML_F32;
        gpuml_tensor *x = tt_new(tu_cpu, dt, 2, s, 0), *y = tt_new(tu_cpu, dt, 2, s, 0);
        double *vx = tt_rand(x, -1, 1), *vy, *ref = (double *)malloc(sizeof(double) * (size_t)(R * n));
        char what[100];
        for (i = 0; i < R * n; i++) vx[i] = base[i / n] * (1.0 + (dt == GPUML_F32 ? 4e-7 : 0.03) * vx[i]);
        tt_write(x, vx);
        vx = (free(vx), tt_read(x));
        poison(tu_cpu, y);
        CHECK(gpuml_softmax(tu_cpu, y, x, 1) == GPUML_SUCCESS, "%s", gpuml_last_error(tu_cpu));
        vy = tt_read(y);
        ref_rows(0, vx, R, n, NULL, NULL, 0, ref);
        snprintf(what, sizeof what, "softmax %s of rows far from 0", gpuml_dtype_name(dt));
        tu_close(what, vy, ref, R * n, dt == GPUML_F32 ? 1e-5 : 1e-2, 1e-6);
        free(vy);
        free(vx); free(ref);
        gpuml_tensor_free(x); gpuml_tensor_free(y);
    }
}

/* 16-bit layernorm / rmsnorm rows with a NaN, a +inf, a -inf, values whose squares overflow f32, a
   constant row at eps 0 (rstd inf: 0 * inf), then a weight with an inf and a bias with a NaN: which
   elements are NaN and the bits of every NaN and inf, on this level against the scalar path, and every
   NaN stored as 0x7fff (the AVX2 norms store without the NaN fix-up only where a row's statistics,
   rstd, weight and bias are finite) */
static void test_cpu_norm_specials(void)
{
    const long long R = 6, n = 3000;
    int64_t s[2] = {6, 3000}, ws[1] = {3000};
    const int lv = gpuml__cpu_simd();
    int t, op, wb, k;
    long long i;
    for (t = 0; t < 2; t++)
        for (op = 0; op < 2; op++)
            for (wb = 0; wb < 2; wb++) {
                gpuml_dtype dt = t == 0 ? GPUML_BF16 : GPUML_F16;
                gpuml_tensor *x = tt_new(tu_cpu, dt, 2, s, 0), *y = tt_new(tu_cpu, dt, 2, s, 0);
                gpuml_tensor *w = tt_new(tu_cpu, dt, 1, ws, 0), *b = tt_new(tu_cpu, dt, 1, ws, 0);
                double *vx = tt_rand(x, -4, 4), *vw = tt_rand(w, 0.5, 2), *vb = tt_rand(b, -1, 1);
                unsigned short *o[2];
                vx[1234] = NAN;
                vx[n + 100] = INFINITY;
                vx[2 * n + 2000] = -INFINITY;
                for (i = 0; i < n; i++) vx[3 * n + i] = (i % 3 ? -1.0 : 1.0) * (dt == GPUML_BF16 ? 3e38 : 6e4);   /* bf16: squares overflow */
                for (i = 0; i < n; i++) vx[4 * n + i] = 1.5;   /* mean 1.5, variance 0 */
                if (wb) { vw[77] = INFINITY; vb[2500] = NAN; }
                tt_write(x, vx); tt_write(w, vw); tt_write(b, vb);
                for (k = 0; k < 2; k++) {
                    o[k] = (unsigned short *)malloc(sizeof(unsigned short) * (size_t)(R * n));
                    if (k) gpuml__cpu_simd_ctl(0);
                    poison(tu_cpu, y);
                    CHECK((op ? gpuml_rmsnorm(tu_cpu, y, x, w, 0.0) : gpuml_layernorm(tu_cpu, y, x, w, b, 0.0)) == GPUML_SUCCESS, "%s",
                          gpuml_last_error(tu_cpu));
                    gpuml_tensor_read(y, o[k], sizeof(unsigned short) * (size_t)(R * n));
                }
                gpuml__cpu_simd_ctl(lv);
                for (i = 0; i < R * n; i++) {
                    /* row 3 as the vector paths (AVX-512 too) have it: the squares of 3e38 overflow the f32
                       statistics (NaN where the scalar path's double sums do not): only that every NaN is stored as
                       0x7fff.  (Row 0, a NaN: rstd's clamp of m2 was (m2 > 0 ? m2 : 0), which turned a NaN m2 into 0,
                       so rmsnorm's other elements came out finite; now (m2 < 0 ? 0 : m2), as the scalar path) */
                    const unsigned e = dt == GPUML_BF16 ? 0x7f80u : 0x7c00u, a0 = o[0][i] & 0x7fffu, a1 = o[1][i] & 0x7fffu;
                    const int any = i / n == 3;
                    if ((a0 > e && o[0][i] != 0x7fff) || (!any && ((a0 > e) != (a1 > e) || ((a0 >= e || a1 >= e) && o[0][i] != o[1][i])))) {
                        CHECK(0, "%s %s%s, row %lld: element %lld is 0x%04x on this path, 0x%04x on the scalar one", op ? "rmsnorm" : "layernorm",
                              gpuml_dtype_name(dt), wb ? " (weight with inf, bias with NaN)" : "", i / n, i % n, o[0][i], o[1][i]);
                        break;
                    }
                }
                free(vx); free(vw); free(vb); free(o[0]); free(o[1]);
                gpuml_tensor_free(x); gpuml_tensor_free(y); gpuml_tensor_free(w); gpuml_tensor_free(b);
            }
}

/* the CPU ops again on each lower SIMD path this machine has (AVX2, scalar; the default run above
   takes the best one, AVX-512 where present); GPUML_CPU_SIMD=avx2|scalar does the same from outside */
static void test_cpu_simd_paths(void)
{
    static void (*const fns[])(void) = { test_binary, test_binary_mixed_scalar_inplace, test_unary, test_activations_wide,
                                         test_nan_inf, test_reduce, test_softmax, test_norms, test_activation_backward,
                                         test_optimizers, test_cpu_rows_edges, test_norm_backward, test_cross_entropy,
                                         test_cpu_act_ulp, test_gelu_16bit_all, test_gelu_bf16_paths, test_cpu_rows_odd,
                                         test_cpu_layernorm_shift, test_cpu_softmax_rounded, test_cpu_norm_specials,
                                         test_cpu_softmax_far, test_cpu_softmax_streamed };
    static const char *const names[3] = { "scalar", "AVX2", "AVX-512" };
    int best = gpuml__cpu_simd(), lv;
    unsigned k;
    gpuml_ctx *gpu = tu_gpu;
    tu_gpu = NULL;   /* the GPU paths do not change with the level */
    for (lv = best - 1; lv >= 0; lv--) {
        CHECK(gpuml__cpu_simd_ctl(lv) == lv, "level %d", lv);
        for (k = 0; k < sizeof fns / sizeof fns[0] && !tu_failed_now; k++) fns[k]();
        if (tu_failed_now) { printf("    (the failure above is on the CPU %s path)\n", names[lv]); break; }
    }
    gpuml__cpu_simd_ctl(-1);
    tu_gpu = gpu;
    if (best < 2 && !tu_failed_now)
        SKIP("AVX-512 path not run: the CPU lacks AVX-512 (F, BW, VL, DQ) or GPUML_CPU_SIMD caps it; tested: %s",
             best < 1 ? "scalar" : "scalar and AVX2");
}

static const tu_test tests[] = {
    {"binary", test_binary},
    {"binary_mixed_scalar_inplace", test_binary_mixed_scalar_inplace},
    {"unary", test_unary},
    {"activations_wide", test_activations_wide},
    {"clamp_where", test_clamp_where},
    {"nan_inf", test_nan_inf},
    {"cpu_softmax_streamed", test_cpu_softmax_streamed},
    {"reduce", test_reduce},
    {"var_correction_sum_to_shape", test_var_correction_sum_to_shape},
    {"softmax", test_softmax},
    {"norms", test_norms},
    {"row_variants", test_row_variants},
    {"row_overrides", test_row_overrides},
    {"norm_backward_fd", test_norm_backward_fd},
    {"norm_backward", test_norm_backward},
    {"activation_backward", test_activation_backward},
    {"cross_entropy", test_cross_entropy}, {"log_softmax_offset", test_log_softmax_offset},
    {"optimizers", test_optimizers},
    {"ew_shapes", test_ew_shapes}, {"binary_rows", test_binary_rows}, {"f16_rows_specials", test_f16_rows_specials}, {"short_rows", test_short_rows},
    {"errors", test_errors},
    {"cpu_gpu_agree", test_cpu_gpu_agree},
    {"cpu_rows_edges", test_cpu_rows_edges},
    {"cpu_bf16_avx512_bits", test_cpu_bf16_avx512_bits}, {"cpu_f16_avx512_bits", test_cpu_f16_avx512_bits}, {"cpu_f16_f16c_bits", test_cpu_f16_f16c_bits},
    {"cpu_act_ulp", test_cpu_act_ulp},
    {"gelu_bf16_paths", test_gelu_bf16_paths},
    {"gelu_16bit_all", test_gelu_16bit_all},
    {"cpu_rows_odd", test_cpu_rows_odd},
    {"cpu_layernorm_shift", test_cpu_layernorm_shift},
    {"cpu_softmax_rounded", test_cpu_softmax_rounded},
    {"cpu_norm_specials", test_cpu_norm_specials},
    {"cpu_softmax_far", test_cpu_softmax_far},
    {"cpu_simd_paths", test_cpu_simd_paths},
};
int main(int argc, char **argv) { return TU_RUN("test_ops", tests, argc, argv); }
