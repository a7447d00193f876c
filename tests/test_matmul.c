/* matmul tests: every dtype, transposed and strided operands, batches with broadcasting,
   alpha/beta, the fused epilogue, odd and round sizes, every forced GPU path; against a
   float64 reference, with outputs poisoned first; CPU and GPU. */
#define GPUML_IMPLEMENTATION
#include "harness.h"

typedef struct mcase {
    gpuml_dtype at, bt, ct;
    int64_t M, N, K;
    int ta, tb;              /* operand given as a transposed view */
    int batch, bcast_b;      /* batch count (0 = none); b shared by every batch */
    float alpha, beta;
    int bias, act, resid;
    gpuml_matmul_path path;
    int tf32;                /* desc.allow_tf32 */
    int pos;                 /* operands in [0, 1) instead of [-1, 1): no cancellation, the accumulator grows */
    double tol;              /* when > 0: the bound relative to sum|a*b| instead of the dtype's */
    float a_scale, b_scale;  /* fp8 per-tensor scales (0: 1) */
    int resid_is_c;          /* desc.residual = C itself (C filled with the residual's values first) */
} mcase;
static int g_tf32;           /* matrix_of_cases: allow tf32 */
static double g_worst;       /* run_case: the largest |err| / sum|a*b| of the last case */

static double act_ref(int act, double x)
{
    if (act == 1) return x > 0 ? x : 0;
    if (act == 2) return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    if (act == 3) return x / (1 + exp(-x));
    return x;
}
static double out_tol(gpuml_dtype d) { return d == GPUML_F32 || d == GPUML_I32 ? 2e-6 : d == GPUML_F16 ? 1e-3 : 8e-3; }

/* fills t (any view) with random values representable in its dtype; returns them as doubles */
static int g_pos;   /* fill_random: values in [0, scale) */
static double *fill_random(gpuml_ctx *ctx, gpuml_tensor *t, double scale)
{
    int64_t n = gpuml_tensor_numel(t), i;
    gpuml_dtype d = gpuml_tensor_dtype(t);
    size_t es = gpuml_dtype_size(d);
    unsigned char *buf = (unsigned char *)malloc((size_t)n * es + 1);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    for (i = 0; i < n; i++) {
        double x = (g_pos ? fabs(tu_rand()) : tu_rand()) * scale;
        if (d == GPUML_I8) { int8_t q = (int8_t)(int)(x * 100); buf[i] = (unsigned char)q; v[i] = q; continue; }
        gpuml__st_f32(d, buf + i * (int64_t)es, (float)x);
        v[i] = gpuml__ld_f32(d, buf + i * (int64_t)es);
    }
    CHECK(gpuml_tensor_write(t, buf, (size_t)n * es) == GPUML_SUCCESS, "write: %s", gpuml_last_error(ctx));
    free(buf);
    return v;
}
static double *read_all(gpuml_tensor *t)
{
    int64_t n = gpuml_tensor_numel(t), i;
    gpuml_dtype d = gpuml_tensor_dtype(t);
    size_t es = gpuml_dtype_size(d);
    unsigned char *buf = (unsigned char *)malloc((size_t)n * es + 1);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    CHECK(gpuml_tensor_read(t, buf, (size_t)n * es) == GPUML_SUCCESS, "read: %s", gpuml_last_error(gpuml_tensor_ctx(t)));
    for (i = 0; i < n; i++) {
        if (d == GPUML_I32) { int32_t q; memcpy(&q, buf + 4 * i, 4); v[i] = q; }
        else v[i] = gpuml__ld_f32(d, buf + i * (int64_t)es);
    }
    free(buf);
    return v;
}
/* a [r, c] operand, optionally stored transposed ([c, r] then viewed as [r, c]) */
static gpuml_tensor *operand(gpuml_ctx *ctx, gpuml_dtype d, int batch, int64_t r, int64_t c, int trans, gpuml_tensor **base)
{
    int64_t sh[3];
    int nd = 0;
    if (batch) sh[nd++] = batch;
    sh[nd++] = trans ? c : r;
    sh[nd++] = trans ? r : c;
    *base = gpuml_tensor_new(ctx, d, nd, sh);
    if (!*base) return NULL;
    return trans ? gpuml_tensor_transpose(*base, -1, -2) : gpuml_tensor_contiguous(*base);
}

/* runs one case; returns 1 when it ran (0 = the path is not available: a skip) */
static int run_case(gpuml_ctx *ctx, const mcase *mc, const char *label)
{
    gpuml_tensor *ab, *bb, *a, *b, *c, *bias = NULL, *res = NULL;
    double *av, *bv, *cin, *biasv = NULL, *rv = NULL, *got;
    int nb = mc->batch ? mc->batch : 1, z;
    int64_t M = mc->M, N = mc->N, K = mc->K, m, n, k, csh[3];
    gpuml_matmul_desc d;
    gpuml_status st;
    int cnd = 0, ran = 1, fp8 = mc->at == GPUML_FP8_E4M3 || mc->at == GPUML_FP8_E5M2;
    double worst = 0;
    a = operand(ctx, mc->at, mc->batch, M, K, mc->ta, &ab);
    b = operand(ctx, mc->bt, mc->bcast_b ? 0 : mc->batch, K, N, mc->tb, &bb);
    if (mc->batch) csh[cnd++] = mc->batch;
    csh[cnd++] = M; csh[cnd++] = N;
    c = gpuml_tensor_new(ctx, mc->ct, cnd, csh);
    CHECK(a && b && c, "alloc: %s", gpuml_last_error(ctx));
    if (!a || !b || !c) return 1;
    g_pos = mc->pos;
    av = fill_random(ctx, a, 1.0);
    bv = fill_random(ctx, b, 1.0);
    g_pos = 0;
    if (mc->beta != 0 || mc->resid_is_c) cin = fill_random(ctx, c, 1.0);
    else {
        cin = NULL;
        gpuml_fill(ctx, c, NAN);   /* poison: beta = 0 must not read it, every element must be written */
        if (mc->ct == GPUML_I32) gpuml_fill(ctx, c, -12345);
    }
    if (mc->bias) { int64_t bs[1]; bs[0] = N; bias = gpuml_tensor_new(ctx, GPUML_F32, 1, bs); biasv = fill_random(ctx, bias, 1.0); }
    if (mc->resid && !mc->resid_is_c) { res = gpuml_tensor_new(ctx, mc->ct, cnd, csh); rv = fill_random(ctx, res, 1.0); }
    if (mc->resid_is_c) {   /* the residual's values are C's before the call */
        rv = (double *)malloc(sizeof(double) * (size_t)(nb * M * N));
        if (rv) memcpy(rv, cin, sizeof(double) * (size_t)(nb * M * N));
    }
    memset(&d, 0, sizeof d);
    d.alpha = mc->alpha; d.beta = mc->beta; d.bias = bias; d.act = (gpuml_activation)mc->act; d.residual = mc->resid_is_c ? c : res; d.path = mc->path;
    d.allow_tf32 = mc->tf32;
    d.a_scale = mc->a_scale; d.b_scale = mc->b_scale;
    st = gpuml_matmul(ctx, c, a, b, &d);
    if (st == GPUML_ERROR_NOT_SUPPORTED && mc->path != GPUML_MATMUL_AUTO) { ran = 0; goto done; }
    CHECK(st == GPUML_SUCCESS, "%s: matmul: %s", label, gpuml_last_error(ctx));
    got = read_all(c);
    for (z = 0; z < nb; z++)
        for (m = 0; m < M; m++)
            for (n = 0; n < N; n++) {
                double s = 0, sa = 0, ref, err, bound;
                int64_t ci = (z * M + m) * N + n;
                for (k = 0; k < K; k++) {
                    double x = av[(z * M + m) * K + k] * bv[((mc->bcast_b ? 0 : z) * K + k) * N + n];
                    /* fill_random wrote each operand in its logical (view) order */
                    s += x; sa += fabs(x);
                }
                ref = (mc->alpha ? mc->alpha : 1.0) * (mc->a_scale ? mc->a_scale : 1.0) * (mc->b_scale ? mc->b_scale : 1.0) * s;
                sa *= (mc->a_scale ? fabs(mc->a_scale) : 1.0) * (mc->b_scale ? fabs(mc->b_scale) : 1.0);
                if (cin) ref += mc->beta * cin[ci];
                if (biasv) ref += biasv[n];
                ref = act_ref(mc->act, ref);
                if (rv) ref += rv[ci];
                err = fabs(got[ci] - ref);
                /* tf32 keeps 10 of f32's 23 mantissa bits: up to 2^-10 per operand, so each product
                   may be off by ~2e-3 of its magnitude (the CPU and SIMT paths compute in f32) */
                /* fp8 on Hopper's tensor cores accumulates with ~14 mantissa bits (as cuBLAS's fast
                   accumulation does): up to ~2^-13 of the sum of |products| */
                /* f32 (the SIMT kernel, or 3xTF32 on Hopper: ~2^-21 of |a*b| per product) */
                bound = (mc->ct == GPUML_I32 ? 0 : (mc->tol > 0 ? mc->tol : mc->tf32 ? 2.5e-3 : fp8 ? 1.25e-4 : 4e-6) * (sa + 1) * (mc->act ? 2 : 1)) + out_tol(mc->ct) * fabs(ref) + (mc->ct == GPUML_I32 ? 0 : 1e-6);
                /* and fp8's truncated accumulator: up to ~2^-13 of the running sum at each of the K / 32
                   additions, which for a sum large against sum|products| exceeds the term above
                   (fp8_scales, H200: 300 x 520 x 1000, |sum| ~ sum|a*b| / 6, err 1.9x that term) */
                if (fp8) bound += ldexp(1.0, -13) * ceil((double)K / 32.0) * fabs((mc->alpha ? mc->alpha : 1.0) * (mc->a_scale ? mc->a_scale : 1.0) * (mc->b_scale ? mc->b_scale : 1.0) * s) * (mc->act ? 2 : 1);
                if (!(err <= bound)) {
                    CHECK(0, "%s: [%d,%lld,%lld] got %.9g want %.9g (err %.3g > %.3g)", label, z, (long long)m, (long long)n, got[ci], ref, err, bound);
                    z = nb; m = M; break;
                }
                if (sa > 0 && err / (sa + 1e-30) > worst) worst = err / sa;
            }
    free(got);
    g_worst = worst;
done:
    free(av); free(bv); free(cin); free(biasv); free(rv);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(ab); gpuml_tensor_free(bb);
    gpuml_tensor_free(c); gpuml_tensor_free(bias); gpuml_tensor_free(res);
    return ran;
}

static const int64_t sizes[][3] = { {1, 1, 1}, {3, 5, 7}, {17, 33, 65}, {64, 64, 64}, {127, 129, 255}, {1, 257, 300}, {200, 1, 31}, {130, 70, 1}, {257, 131, 77}, {129, 128, 9}, {1, 333, 256}, {16, 130, 1024}, {5, 77, 4104} };

/* the same kinds of shapes with N % 4 == 0: f32 C rows 16-byte aligned, as the Hopper kernel's
   epilogue needs (3xTF32 takes no other) */
static const int64_t sizes_n4[][3] = { {1, 4, 1}, {3, 8, 7}, {17, 36, 65}, {64, 64, 64}, {127, 132, 255}, {1, 260, 300}, {200, 4, 31}, {130, 68, 1}, {257, 132, 77}, {129, 128, 9}, {1, 336, 256}, {16, 132, 1024}, {5, 76, 4104}, {300, 516, 1029} };
static int g_n4;   /* matrix_of_cases: use sizes_n4 */

/* returns how many cases ran (a forced path refuses the rest) */
static int matrix_of_cases(gpuml_ctx *ctx, gpuml_dtype at, gpuml_dtype ct, gpuml_matmul_path path)
{
    const int64_t (*sz)[3] = g_n4 ? sizes_n4 : sizes;
    size_t s, ns = g_n4 ? sizeof sizes_n4 / sizeof sizes_n4[0] : sizeof sizes / sizeof sizes[0];
    char label[400];
    int skipped = 0, ran = 0;
    for (s = 0; s < ns; s++) {
        int t;
        for (t = 0; t < 4; t++) {
            mcase mc;
            memset(&mc, 0, sizeof mc);
            mc.at = mc.bt = at; mc.ct = ct;
            if (at == GPUML_FP8_E4M3) mc.bt = GPUML_FP8_E5M2;
            mc.M = sz[s][0]; mc.N = sz[s][1]; mc.K = sz[s][2];
            mc.ta = t & 1; mc.tb = (t >> 1) & 1;
            mc.path = path;
            mc.tf32 = g_tf32;
            if (at != GPUML_I8 && s % 2 == 1) { mc.alpha = 0.5f; mc.beta = 0.75f; mc.bias = 1; mc.act = 1 + (int)(s / 2) % 3; mc.resid = (t == 3); }
            if (s == 3 && t == 0) { mc.batch = 3; mc.bcast_b = 1; }
            if (s == 2 && t == 1) mc.batch = 2;
            snprintf(label, sizeof label, "%s %s->%s %lldx%lldx%lld ta%d tb%d batch%d path%d on %.60s", gpuml_dtype_name(mc.at),
                     gpuml_dtype_name(mc.bt), gpuml_dtype_name(ct), (long long)mc.M, (long long)mc.N, (long long)mc.K, mc.ta, mc.tb,
                     mc.batch, (int)path, gpuml_device_name(ctx));
            if (run_case(ctx, &mc, label)) ran++; else skipped++;
        }
    }
    if (path != GPUML_MATMUL_AUTO && ran == 0) tu_skip("path %d is not available for %s on %s", (int)path, gpuml_dtype_name(at), gpuml_device_name(ctx));
    return ran;
}

#define DT_TEST(fname, at, ct) \
    static void fname##_cpu(void) { matrix_of_cases(tu_cpu, at, ct, GPUML_MATMUL_AUTO); } \
    static void fname##_gpu(void) { NEED_GPU(); matrix_of_cases(tu_gpu, at, ct, GPUML_MATMUL_AUTO); }
DT_TEST(f32, GPUML_F32, GPUML_F32)
DT_TEST(bf16, GPUML_BF16, GPUML_BF16)
DT_TEST(bf16_f32out, GPUML_BF16, GPUML_F32)
DT_TEST(f16, GPUML_F16, GPUML_F16)
DT_TEST(fp8, GPUML_FP8_E4M3, GPUML_BF16)
DT_TEST(i8, GPUML_I8, GPUML_I32)

static void forced_simt(void) { NEED_GPU(); matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_BF16, GPUML_MATMUL_SIMT); matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_SIMT); }
static void forced_mma(void) { NEED_GPU(); matrix_of_cases(tu_gpu, GPUML_F16, GPUML_F16, GPUML_MATMUL_MMA); matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_F32, GPUML_MATMUL_MMA); }
static void forced_small_m(void) { NEED_GPU(); matrix_of_cases(tu_gpu, GPUML_F16, GPUML_F16, GPUML_MATMUL_SMALL_M); matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_F32, GPUML_MATMUL_SMALL_M); }
/* the small-M path (M = 1..16, B stored N x K): every M, odd N (partial row tiles, one row),
   K multiples of 8 that are not multiples of 64 (the partial last chunk), every epilogue, f16
   and bf16 into f16/bf16/f32, batches with and without a shared B; forced and automatic */
static void small_m(void)
{
    static const int64_t ns[] = { 1, 7, 33, 100, 257, 129, 1000, 64 }, ks[] = { 8, 24, 64, 72, 520, 1096, 4104, 136, 4096 };
    static const gpuml_dtype outs[] = { GPUML_F16, GPUML_BF16, GPUML_F32 };
    int64_t m;
    int ran = 0, skipped = 0;
    char label[300];
    NEED_GPU();
    for (m = 1; m <= 16; m++) {
        int v;
        for (v = 0; v < 2; v++) {
            mcase mc;
            int i = (int)(m * 2 + v);
            memset(&mc, 0, sizeof mc);
            mc.at = mc.bt = (i % 3 == 1) ? GPUML_BF16 : GPUML_F16;
            mc.ct = outs[i % 3];
            mc.M = m; mc.N = ns[i % 8]; mc.K = ks[i % 9];
            mc.tb = 1;
            mc.path = v ? GPUML_MATMUL_AUTO : GPUML_MATMUL_SMALL_M;
            if (i % 2) { mc.alpha = 0.5f; mc.beta = 0.75f; mc.bias = 1; mc.act = 1 + (i / 2) % 3; mc.resid = (i % 4 == 1); }
            else if (i % 4 == 2) { mc.bias = 1; mc.act = 3; }
            if (i % 5 == 0) { mc.batch = 2; mc.bcast_b = (i % 10 == 0); }
            snprintf(label, sizeof label, "small-M %s->%s %lldx%lldx%lld batch%d%s alpha%g beta%g bias%d act%d resid%d path%d",
                     gpuml_dtype_name(mc.at), gpuml_dtype_name(mc.ct), (long long)mc.M, (long long)mc.N, (long long)mc.K, mc.batch,
                     mc.bcast_b ? " (b shared)" : "", mc.alpha, mc.beta, mc.bias, mc.act, mc.resid, (int)mc.path);
            if (run_case(tu_gpu, &mc, label)) ran++; else skipped++;
        }
    }
    {   /* the decode shapes themselves, once each */
        mcase mc;
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = GPUML_BF16; mc.ct = GPUML_BF16; mc.tb = 1; mc.path = GPUML_MATMUL_SMALL_M;
        mc.M = 16; mc.N = 4096; mc.K = 4096; mc.bias = 1; mc.act = 3;
        if (run_case(tu_gpu, &mc, "small-M bf16 16x4096x4096 bias silu")) ran++; else skipped++;
        mc.at = mc.bt = GPUML_F16; mc.ct = GPUML_F16; mc.M = 1; mc.N = 14336; mc.K = 4096; mc.bias = 0; mc.act = 0;
        if (run_case(tu_gpu, &mc, "small-M f16 1x14336x4096")) ran++; else skipped++;
        mc.M = 5; mc.N = 4096; mc.K = 14336; mc.ct = GPUML_F32;
        if (run_case(tu_gpu, &mc, "small-M f16 5x4096x14336 f32 out")) ran++; else skipped++;
    }
    if (ran == 0) SKIP("the small-M path is not available on %s (%d cases)", gpuml_device_name(tu_gpu), skipped);
    CHECK(skipped == 0, "%d small-M cases were refused on %s", skipped, gpuml_device_name(tu_gpu));
    {   /* what it cannot take, forced: a clear error */
        int64_t as[2] = {17, 64}, bs[2] = {32, 64}, cs[2] = {17, 32};
        gpuml_tensor *a = gpuml_tensor_new(tu_gpu, GPUML_F16, 2, as), *b = gpuml_tensor_new(tu_gpu, GPUML_F16, 2, bs);
        gpuml_tensor *bt = gpuml_tensor_transpose(b, 0, 1), *c = gpuml_tensor_new(tu_gpu, GPUML_F16, 2, cs);
        gpuml_matmul_desc d;
        memset(&d, 0, sizeof d);
        d.path = GPUML_MATMUL_SMALL_M;
        gpuml_fill(tu_gpu, a, 1); gpuml_fill(tu_gpu, b, 1);
        CHECK_STATUS(tu_gpu, gpuml_matmul(tu_gpu, c, a, bt, &d), GPUML_ERROR_NOT_SUPPORTED, "M <= 16");
        gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(bt); gpuml_tensor_free(c);
    }
}
/* other shapes of the small-M kernel than the automatic ones (rows a block, warps, chunks in
   flight, cluster size on sm_90) */
static void small_m_shapes(void)
{
    int ran = 0, skipped = 0;
    char label[300];
    NEED_GPU();
    {   /* other shapes of the kernel (rows a block, warps, chunks in flight, cluster size on sm_90) */
        static const int cfgs[][4] = { {1, 8, 4, 2}, {4, 4, 1, 4}, {2, 8, 2, 8}, {1, 4, 3, 1}, {4, 8, 1, 2}, {2, 4, 1, 3} };
        size_t ci;
        for (ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++) {
            mcase mc;
            memset(&mc, 0, sizeof mc);
            mc.at = mc.bt = ci % 2 ? GPUML_BF16 : GPUML_F16; mc.ct = ci % 3 ? GPUML_F32 : mc.at; mc.tb = 1;
            mc.path = GPUML_MATMUL_SMALL_M;
            mc.M = ci % 2 ? 13 : 3; mc.N = ci % 3 == 1 ? 257 : 100; mc.K = ci % 2 ? 1096 : 2056;
            mc.alpha = 0.5f; mc.beta = ci % 2 ? 0.25f : 0.0f; mc.bias = 1; mc.act = 1 + (int)ci % 3; mc.resid = ci % 2 == 0;
            if (ci == 2) { mc.batch = 3; mc.bcast_b = 0; }
            memcpy(gpuml__mm_small_cfg, cfgs[ci], sizeof gpuml__mm_small_cfg);
            snprintf(label, sizeof label, "small-M cfg rt%d w%d u%d cl%d %s->%s %lldx%lldx%lld", cfgs[ci][0], cfgs[ci][1], cfgs[ci][2], cfgs[ci][3],
                     gpuml_dtype_name(mc.at), gpuml_dtype_name(mc.ct), (long long)mc.M, (long long)mc.N, (long long)mc.K);
            if (run_case(tu_gpu, &mc, label)) ran++; else skipped++;
            memset(gpuml__mm_small_cfg, 0, sizeof gpuml__mm_small_cfg);
        }
    }
    if (ran == 0) SKIP("the small-M path is not available on %s (%d cases)", gpuml_device_name(tu_gpu), skipped);
    CHECK(skipped == 0, "%d small-M cases were refused on %s", skipped, gpuml_device_name(tu_gpu));
}
/* the wgmma kernels on 128 x 256 tiles (the rule would take 128 columns for most of these small
   shapes: forced_bn128 runs the same matrices on those) */
static void forced_wgmma(void)
{
    NEED_GPU();
    gpuml__mm_bn = 256;
    matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_BF16, GPUML_MATMUL_WGMMA);
    matrix_of_cases(tu_gpu, GPUML_F16, GPUML_F32, GPUML_MATMUL_WGMMA);
    gpuml__mm_bn = 0;
}
/* a few forced split-K shapes (for the sanitizers): odd sizes, epilogue, both B layouts */
static void splitk_few(void)
{
    /* the wgmma kernel reads B along k (tb = 1: K % 8 == 0) or along n (N % 8 == 0); C may be
       unaligned (N = 70 in bf16): the split epilogue writes it */
    static const int64_t shp[][3] = { {129, 70, 1032}, {64, 260, 640}, {3, 304, 200} };
    long before;
    int i;
    char label[200];
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    before = gpuml__mm_splitk_runs;
    gpuml__mm_splitk = 5;
    for (i = 0; i < 3; i++) {
        mcase mc;
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = GPUML_BF16; mc.ct = i == 1 ? GPUML_F32 : GPUML_BF16;
        mc.M = shp[i][0]; mc.N = shp[i][1]; mc.K = shp[i][2]; mc.tb = i != 2;
        mc.bias = 1; mc.act = 2; mc.resid = i == 0; mc.beta = i == 2 ? 0.5f : 0.0f; mc.alpha = 0.75f;
        mc.path = GPUML_MATMUL_WGMMA;
        snprintf(label, sizeof label, "split-K 5 %lldx%lldx%lld", (long long)mc.M, (long long)mc.N, (long long)mc.K);
        run_case(tu_gpu, &mc, label);
    }
    /* 9 splits of a few outputs: the epilogue kernel's 8 y-lanes share each output's splits; C's
       last float4 group ragged (N = 70) */
    {
        mcase mc;
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = GPUML_BF16; mc.ct = GPUML_F32; mc.M = 37; mc.N = 70; mc.K = 2000; mc.tb = 1;
        mc.bias = 1; mc.act = 3; mc.resid = 1; mc.alpha = 1.5f;
        mc.path = GPUML_MATMUL_WGMMA;
        gpuml__mm_splitk = 9;
        run_case(tu_gpu, &mc, "split-K 9 37x70x2000 (lanes)");
    }
    gpuml__mm_splitk = 0;
    CHECK(gpuml__mm_splitk_runs >= before + 4, "the split-K kernel ran %ld times (4 expected)", gpuml__mm_splitk_runs - before);
}
/* split-K on the wgmma kernel, forced to 3 and 7 splits (capped at the k blocks) over the whole
   case matrix (epilogues, transposes, batches, odd sizes), and a few shapes that the automatic
   rule splits (few output tiles, long K); the split kernel must have run */
static void forced_splitk(void)
{
    static const int64_t shp[][3] = { {64, 576, 100352}, {200, 70, 5000}, {129, 264, 4104}, {1000, 300, 2048}, {130, 300, 2600}, {100, 520, 4100} };
    static const int ways[] = { 3, 7, 0 };
    long before;
    int w, i;
    char label[300];
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    before = gpuml__mm_splitk_runs;
    for (w = 0; w < 2; w++) {
        gpuml__mm_splitk = ways[w];
        matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_BF16, GPUML_MATMUL_WGMMA);
        matrix_of_cases(tu_gpu, GPUML_F16, GPUML_F32, GPUML_MATMUL_WGMMA);
    }
    /* tf32 (NT: the NN kernel is never split) and fp8 with its scales, 3 ways */
    gpuml__mm_splitk = 3;
    g_tf32 = 1;
    matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_WGMMA);
    g_tf32 = 0;
    matrix_of_cases(tu_gpu, GPUML_FP8_E4M3, GPUML_BF16, GPUML_MATMUL_WGMMA);
    gpuml__mm_splitk = 0;
    CHECK(gpuml__mm_splitk_runs > before, "the split-K kernel never ran");
    for (i = 0; i < (int)(sizeof shp / sizeof shp[0]); i++) {
        mcase mc;
        long b0 = gpuml__mm_splitk_runs;
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = i & 1 ? GPUML_F16 : GPUML_BF16; mc.ct = i == 0 ? GPUML_F32 : mc.at;
        mc.M = shp[i][0]; mc.N = shp[i][1]; mc.K = shp[i][2];
        mc.tb = i & 1; mc.bias = i >= 2; mc.act = i % 4; mc.resid = i == 3; mc.beta = i == 2 ? 0.5f : 0.0f;
        if (i == 4) { mc.at = mc.bt = mc.ct = GPUML_F32; mc.tf32 = 1; mc.tb = 1; mc.resid = 1; }   /* tf32 NT, 4 tiles of 82 k blocks */
        if (i == 5) { mc.at = GPUML_FP8_E4M3; mc.bt = GPUML_FP8_E5M2; mc.ct = GPUML_BF16; mc.tb = 1; }   /* fp8, 3 tiles of 33 */
        snprintf(label, sizeof label, "auto split-K %lldx%lldx%lld", (long long)mc.M, (long long)mc.N, (long long)mc.K);
        run_case(tu_gpu, &mc, label);
        CHECK(gpuml__mm_splitk_runs > b0, "%s: the automatic rule did not split", label);
    }
}
/* cases for the stream-K walk, forced: g > 0 the tail on a grid of g CTAs (gpuml__mm_streamk), g == 0
   the two-way split of few tiles (gpuml__mm_split2), g < 0 neither forced (the rules decide); taken:
   whether the launch must take the walk */
typedef struct skcase { gpuml_dtype at, bt, ct; int tf32, tb, g; int64_t M, N, K; int taken; } skcase;
/* runs them with split-K off (few tiles, long K: it would take the bf16 / f16 ones), epilogues (alpha,
   beta, bias, activation, residual) on every other case, C poisoned; returns the cases run */
static int run_sk_cases(const skcase *cs, int n, const char *what)
{
    int i, ran = 0;
    char label[300];
    for (i = 0; i < n; i++) {
        mcase mc;
        long before = gpuml__mm_streamk_runs;
        memset(&mc, 0, sizeof mc);
        mc.at = cs[i].at; mc.bt = cs[i].bt; mc.ct = cs[i].ct; mc.tf32 = cs[i].tf32; mc.tb = cs[i].tb;
        mc.M = cs[i].M; mc.N = cs[i].N; mc.K = cs[i].K;
        mc.path = GPUML_MATMUL_WGMMA;
        if (i % 2) { mc.alpha = 0.5f; mc.beta = 0.75f; mc.bias = 1; mc.act = 1 + i % 3; mc.resid = 1; }
        if (cs[i].g > 0) gpuml__mm_streamk = cs[i].g;
        else if (cs[i].g == 0) gpuml__mm_split2 = 1;   /* g < 0: the rule decides */
        gpuml__mm_splitk = -1;
        snprintf(label, sizeof label, "%s (%d CTAs) %s->%s %lldx%lldx%lld tb%d", what, cs[i].g, mc.tf32 ? "tf32" : gpuml_dtype_name(mc.at),
                 gpuml_dtype_name(mc.ct), (long long)mc.M, (long long)mc.N, (long long)mc.K, mc.tb);
        if (run_case(tu_gpu, &mc, label)) ran++;
        gpuml__mm_streamk = 0; gpuml__mm_split2 = 0; gpuml__mm_splitk = 0;
        CHECK((gpuml__mm_streamk_runs > before) == (cs[i].taken != 0), "%s: the launch %s the stream-K walk", label,
              gpuml__mm_streamk_runs > before ? "took" : "did not take");
    }
    return ran;
}
/* the stream-K tail of the wgmma kernels (gpuml__sm90_streamk), forced on small grids: whole tiles
   round robin, then the tail's k ranges with pieces meeting at seams; 1 to 33 k blocks a tile,
   ranges of 1-2 tiles, no whole-tile part (g 13); bf16, f16 into f32 with B n-major, tf32 NT and NN
   (gpuml_matmul_sm90_nn), fp8.  few: the first three (for the sanitizers) */
static int streamk_cases(int few)
{
    static const skcase cs[] = {
        { GPUML_BF16, GPUML_BF16, GPUML_BF16, 0, 1, 3, 600, 776, 1000, 1 },   /* 20 tiles: 15 whole, 5 in 3 ranges of 26-27 k blocks */
        { GPUML_F16, GPUML_F16, GPUML_F32, 0, 0, 7, 600, 776, 72, 1 },        /* 2 k blocks: 7 whole, 13 tiles in 7 ranges of 3-4 */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 0, 5, 600, 776, 500, 1 },       /* tf32 NN, 21 tiles of 256 x 128: 15 whole, 6 in 5 ranges */
        { GPUML_BF16, GPUML_BF16, GPUML_F32, 0, 1, 2, 300, 520, 2104, 1 },    /* 9 tiles, 33 k blocks: 6 whole, 3 in 2 ranges */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 1, 13, 600, 776, 999, 1 },      /* tf32 NT (A copied): 20 tiles all in 13 ranges */
        { GPUML_FP8_E4M3, GPUML_FP8_E5M2, GPUML_BF16, 0, 1, 3, 600, 776, 1000, 1 },
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 0, 7, 520, 1028, 97, 1 },       /* tf32 NN: 27 tiles, ragged edges, 4 k blocks */
        { GPUML_F16, GPUML_F16, GPUML_F16, 0, 1, 5, 257, 1000, 64, 1 },       /* one k block a tile: ranges of whole tiles */
    };
    int n;
    gpuml__mm_bn = 256;   /* the tile counts above are of 128 x 256 tiles (bn128_sk_cases: 128 x 128) */
    n = run_sk_cases(cs, few ? 3 : (int)(sizeof cs / sizeof cs[0]), "stream-K");
    gpuml__mm_bn = 0;
    return n;
}
static void forced_streamk(void)
{
    int64_t as[2] = {600, 1000}, bs[2] = {776, 1000}, cs[2] = {600, 776}, units, g, nkb, iters;
    gpuml_tensor *a, *b, *bt, *c[2];
    double *r[2];
    long before;
    int i, same = 1;
    mcase mc;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernels need sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    printf("    %d forced cases ran\n", streamk_cases(0));
    /* the seams' sums do not depend on which piece finishes first: two runs, the same bits */
    a = gpuml_tensor_new(tu_gpu, GPUML_BF16, 2, as); b = gpuml_tensor_new(tu_gpu, GPUML_BF16, 2, bs); bt = gpuml_tensor_transpose(b, 0, 1);
    gpuml_rand_normal(tu_gpu, a, 3, 0, 1); gpuml_rand_normal(tu_gpu, b, 4, 0, 1);
    for (i = 0; i < 2; i++) {
        gpuml_matmul_desc d;
        memset(&d, 0, sizeof d);
        d.path = GPUML_MATMUL_WGMMA;
        c[i] = gpuml_tensor_new(tu_gpu, GPUML_F32, 2, cs);
        gpuml_fill(tu_gpu, c[i], NAN);
        gpuml__mm_streamk = 3; gpuml__mm_splitk = -1;
        before = gpuml__mm_streamk_runs;
        CHECK(gpuml_matmul(tu_gpu, c[i], a, bt, &d) == GPUML_SUCCESS, "stream-K repeat: %s", gpuml_last_error(tu_gpu));
        CHECK(gpuml__mm_streamk_runs > before, "stream-K repeat: the launch did not take the tail");
        gpuml__mm_streamk = 0; gpuml__mm_splitk = 0;
        r[i] = read_all(c[i]);
    }
    for (i = 0; i < 600 * 776; i++) if (memcmp(&r[0][i], &r[1][i], sizeof(double)) != 0) { same = 0; break; }
    CHECK(same, "stream-K: two runs of the same product differ at element %d (%.9g vs %.9g)", i, r[0][i], r[1][i]);
    free(r[0]); free(r[1]);
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(bt); gpuml_tensor_free(c[0]); gpuml_tensor_free(c[1]);
    /* a shape the automatic rule gives a tail on this device: one tile more than the SMs (12 x 12
       tiles on 132 SMs), 5 k blocks; or the rule leaves it alone, as it must say */
    memset(&mc, 0, sizeof mc);
    mc.at = mc.bt = GPUML_BF16; mc.ct = GPUML_BF16; mc.tb = 1; mc.bias = 1; mc.act = 3;
    g = tu_gpu->sm_count; units = g + 12; nkb = 5;
    mc.M = 128 * 12; mc.N = 256 * ((units + 11) / 12); mc.K = 64 * nkb;
    units = 12 * ((units + 11) / 12);
    gpuml__sm90_streamk(units, g, nkb, 0, &iters);
    before = gpuml__mm_streamk_runs;
    run_case(tu_gpu, &mc, "stream-K by the rule");
    CHECK((gpuml__mm_streamk_runs > before) == (iters > 0), "the rule gave %s tail (%lld tiles on %lld SMs) but the launch %s",
          iters > 0 ? "a" : "no", (long long)units, (long long)g, gpuml__mm_streamk_runs > before ? "took one" : "did not");
    printf("    the rule on %lld tiles, %lld SMs: %s\n", (long long)units, (long long)g, iters > 0 ? "tail" : "no tail");
}
/* one grid's pieces (see streamk_partition); 0 when they are wrong (after a CHECK) */
static int partition_ok(int g, int64_t units, int nkb, int64_t dp, int64_t iters)
{
    enum { MAXG = 140 };
    static unsigned char seen[5 * MAXG * 128];
    int seam_n[MAXG + 1], seam_tile[MAXG + 1], head_end[MAXG + 1], tail_start[MAXG + 1], cid, s, bad = 0;
    const int64_t whole_each = units / g >= 1 ? units / g - 1 : 0;
    int64_t i;
    if (g > MAXG || units * nkb > (int64_t)sizeof seen) { CHECK(0, "partition_ok: %d CTAs, %lld x %d blocks: too large here", g, (long long)units, nkb); return 0; }
    memset(seen, 0, (size_t)(units * nkb));
    for (s = 0; s <= g; s++) seam_n[s] = 0, seam_tile[s] = head_end[s] = tail_start[s] = -1;
    for (cid = 0; cid < g && !bad; cid++) {
        gpuml__mm_walk w;
        int u = -1, kb0 = -1, kb1 = -1, whole = 0, work = 0, k;
        gpuml__walk_init(&w, (int)iters, cid, g);
        while (gpuml__walk_next(&w, (int)dp, (int)iters, g, (int)units, nkb, &u, &kb0, &kb1)) {
            const int seam = gpuml__walk_seam(&w, cid);
            if (u < 0 || u >= units || kb0 < 0 || kb0 >= kb1 || kb1 > nkb) { bad = 1; break; }
            for (k = kb0; k < kb1; k++) { if (seen[u * nkb + k]) bad = 1; seen[u * nkb + k] = 1; }
            if (u < dp) { whole++; if (kb0 || kb1 != nkb || seam >= 0 || u % g != cid) bad = 1; continue; }
            work += kb1 - kb0;
            if (seam < 0) { if (kb0 || kb1 != nkb) bad = 1; continue; }
            if (seam < 1 || seam >= g || (kb0 == 0) == (kb1 == nkb) || (seam_tile[seam] >= 0 && seam_tile[seam] != u)) { bad = 1; break; }
            seam_tile[seam] = u;
            seam_n[seam]++;
            if (kb0 == 0) { if (seam != cid + 1) bad = 1; head_end[seam] = kb1; }
            else { if (seam != cid) bad = 1; tail_start[seam] = kb0; }
        }
        if (!bad && (whole != whole_each || work != (int)((cid + 1) * iters / g - cid * iters / g))) bad = 1;
        if (bad) CHECK(0, "g %d, %lld tiles, %d k blocks: CTA %d's pieces (tile %d, k %d..%d; %d whole, %d tail blocks)", g,
                       (long long)units, nkb, cid, u, kb0, kb1, whole, work);
    }
    for (i = 0; i < units * nkb && !bad; i++)
        if (!seen[i]) { CHECK(0, "g %d, %lld tiles, %d k blocks: tile %lld k block %lld not computed", g, (long long)units, nkb, (long long)(i / nkb), (long long)(i % nkb)); bad = 1; }
    for (s = 1; s < g && !bad; s++)
        if (seam_n[s] && (seam_n[s] != 2 || head_end[s] != tail_start[s])) {
            CHECK(0, "g %d, %lld tiles, %d k blocks: seam %d has %d pieces (head to %d, tail from %d)", g, (long long)units, nkb, s, seam_n[s], head_end[s], tail_start[s]);
            bad = 1;
        }
    return !bad;
}
/* the stream-K tail's partition, on the CPU: gpuml__walk_init / _next / _seam (kernels/shared.h, the
   code both Hopper matmul kernels run) for grids of 2-139 CTAs, one wave and a tile to five waves of
   tiles, 1-128 k blocks a tile: every k block of every tile is computed exactly once; the round-robin
   tiles are whole, (waves - 1) a CTA, its own; a tile cut in two has a head (from k block 0) at the end
   of CTA s - 1's work and a tail (to the last k block) at the end of CTA s's, meeting, on seam s, and
   no other piece; each CTA's tail work is its range.  The same for the two-way split of few tiles
   (gpuml__sm90_split2: 1-69 tiles on twice as many CTAs, every tile a head and a tail where it has two
   k blocks or more).  Then the rule's decisions on the shapes measured (bench/NOTES_matmul_sm90.md
   "Stream-K tail", 132 SMs). */
static void streamk_partition(void)
{
    static const int nkbs[] = { 1, 2, 3, 5, 8, 16, 33, 64, 128 };
    static const int64_t rule[][3] = {   /* tiles, k blocks, tail wanted */
        { 512, 64, 0 }, { 512, 128, 0 }, { 2048, 128, 1 }, { 1152, 96, 1 }, { 2752, 64, 0 }, { 7168, 64, 1 },
        { 168, 64, 1 }, { 288, 64, 1 }, { 128, 32, 0 }, { 264, 64, 0 }, { 140, 2, 0 } };
    int g, ki, bad = 0;
    long cases = 0, cases2 = 0;
    for (g = 2; g < 140 && !bad; g += g < 20 ? 1 : 7)
        for (ki = 0; ki < (int)(sizeof nkbs / sizeof nkbs[0]) && !bad; ki++) {
            int64_t units, iters, dp;
            const int nkb = nkbs[ki];
            for (units = g + 1; units <= 5 * g && !bad; units += g / 3 > 1 ? g / 3 : 1) {
                dp = gpuml__sm90_streamk(units, g, nkb, 1, &iters);
                cases++;
                if (units % g == 0) { if (iters != 0) { CHECK(0, "g %d, %lld tiles: a tail on whole waves", g, (long long)units); bad = 1; } continue; }
                if (iters <= 0 || dp != (units / g - 1) * g) {
                    CHECK(0, "g %d, %lld tiles, %d k blocks: forced tail gave dp %lld, iters %lld", g, (long long)units, nkb, (long long)dp, (long long)iters);
                    bad = 1; break;
                }
                if (!partition_ok(g, units, nkb, dp, iters)) bad = 1;
            }
        }
    for (g = 1; g < 70 && !bad; g++)   /* g: tiles here */
        for (ki = 0; ki < (int)(sizeof nkbs / sizeof nkbs[0]) && !bad; ki++) {
            int64_t iters, g2 = gpuml__sm90_split2(g, 132, nkbs[ki], 1, &iters);
            cases2++;
            if (nkbs[ki] < 2 || 2 * g > 132) { if (g2 != 0) { CHECK(0, "split2 of %d tiles of %d k blocks taken", g, nkbs[ki]); bad = 1; } continue; }
            if (g2 != 2 * g || iters != (int64_t)g * nkbs[ki]) { CHECK(0, "split2 of %d tiles: grid %lld, iters %lld", g, (long long)g2, (long long)iters); bad = 1; break; }
            if (!partition_ok((int)g2, g, nkbs[ki], 0, iters)) bad = 1;
        }
    printf("    %ld grids x tiles x k blocks partitioned, %ld two-way splits\n", cases, cases2);
    for (ki = 0; ki < (int)(sizeof rule / sizeof rule[0]); ki++) {
        int64_t iters;
        gpuml__sm90_streamk(rule[ki][0], 132, rule[ki][1], 0, &iters);
        CHECK((iters > 0) == (rule[ki][2] != 0), "the rule on %lld tiles of %lld k blocks, 132 SMs: %s tail", (long long)rule[ki][0],
              (long long)rule[ki][1], iters > 0 ? "a" : "no");
    }
}
/* the two-way split of few tiles (gpuml__sm90_split2), forced: every tile a head and a tail on twice
   as many CTAs as tiles (bf16, f16 -> f32 with B n-major, tf32 NT and NN, fp8; 2-47 k blocks, odd and
   even; one tile); one k block a tile is not split (the launch must say so).  Then the rule: tf32
   (which split-K leaves alone) on 4 tiles takes it at 17 k blocks, not at 15. */
static void forced_split2(void)
{
    static const skcase cs[] = {
        { GPUML_BF16, GPUML_BF16, GPUML_BF16, 0, 1, 0, 300, 520, 1000, 1 },   /* 9 tiles of 16 k blocks on 18 CTAs */
        { GPUML_F16, GPUML_F16, GPUML_F32, 0, 0, 0, 200, 776, 200, 1 },       /* 8 tiles of 4 (3 + a partial) */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 1, 0, 257, 516, 999, 1 },       /* tf32 NT: 9 tiles of 32 */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 0, 0, 300, 260, 97, 1 },        /* tf32 NN: 6 tiles of 256 x 128, 4 k blocks */
        { GPUML_FP8_E4M3, GPUML_FP8_E5M2, GPUML_BF16, 0, 1, 0, 100, 200, 1000, 1 },   /* one tile of 8 k blocks on 2 CTAs */
        { GPUML_BF16, GPUML_BF16, GPUML_F32, 0, 1, 0, 129, 300, 3000, 1 },    /* 4 tiles of 47 (odd) */
        { GPUML_BF16, GPUML_BF16, GPUML_BF16, 0, 1, 0, 300, 520, 64, 0 },     /* one k block a tile: not split */
    };
    static const skcase rule[] = {
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 1, -1, 200, 300, 520, 1 },      /* 4 tiles of 17 k blocks: split */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 1, -1, 200, 300, 480, 0 },      /* 15: not */
    };
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernels need sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    printf("    %d cases ran\n", run_sk_cases(cs, (int)(sizeof cs / sizeof cs[0]), "two-way split"));
    if (tu_gpu->sm_count >= 8) printf("    %d by the rule\n", run_sk_cases(rule, 2, "two-way split, the rule"));
}
static void streamk_few(void)
{
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernels need sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    printf("    %d cases ran\n", streamk_cases(1));
}
/* 128-column tiles (GPUML_MM_BN=128, gpuml__mm_bn 128; by default where few tiles): the stream-K tail,
   the two-way split, forced, on bf16, f16 -> f32 with B n-major, tf32 NT and fp8 (tile counts with 128
   columns; each case's launch must take the walk) */
static int bn128_sk_cases(void)
{
    static const skcase cs[] = {
        { GPUML_BF16, GPUML_BF16, GPUML_BF16, 0, 1, 3, 600, 600, 1000, 1 },   /* 25 tiles on 3 CTAs */
        { GPUML_F16, GPUML_F16, GPUML_F32, 0, 0, 4, 300, 520, 640, 1 },       /* 15 tiles, B n-major (2 boxes a stage) */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 1, 4, 257, 516, 999, 1 },       /* tf32 NT, 15 tiles */
        { GPUML_FP8_E4M3, GPUML_FP8_E5M2, GPUML_BF16, 0, 1, 3, 600, 776, 1000, 1 },   /* 35 tiles */
        { GPUML_BF16, GPUML_BF16, GPUML_F32, 0, 1, 0, 300, 520, 1000, 1 },    /* two-way split: 15 tiles on 30 CTAs */
        { GPUML_F32, GPUML_F32, GPUML_F32, 1, 1, 0, 257, 300, 999, 1 },       /* tf32 NT, 9 tiles on 18 */
    };
    int n;
    gpuml__mm_bn = 128;
    n = run_sk_cases(cs, (int)(sizeof cs / sizeof cs[0]), "128-column tiles, stream-K");
    gpuml__mm_bn = 0;
    return n;
}
static void bn128_few(void)
{
    long before = gpuml__mm_bn128_runs;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernels need sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    printf("    %d cases ran\n", bn128_sk_cases());
    CHECK(gpuml__mm_bn128_runs >= before + 6, "128-column tiles ran %ld times (6 expected)", gpuml__mm_bn128_runs - before);
}
/* 128-column tiles forced over the case matrices (bf16, f16 -> f32, tf32 NT, fp8: every transpose,
   epilogue and odd size), split-K 3 ways on them, the stream-K cases above, and the rule
   (gpuml__mm_bn -1: 128 columns where 128 x 256 tiles fill at most half the SMs) */
static void forced_bn128(void)
{
    static const int64_t rule[][3] = { {300, 520, 1000}, {1100, 4200, 64} };
    long before = gpuml__mm_bn128_runs;
    int i;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernels need sm_90 (this is sm_%d)", gpuml_device_arch(tu_gpu));
    gpuml__mm_bn = 128;
    matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_BF16, GPUML_MATMUL_WGMMA);
    matrix_of_cases(tu_gpu, GPUML_F16, GPUML_F32, GPUML_MATMUL_WGMMA);
    g_tf32 = 1;
    matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_WGMMA);
    g_tf32 = 0;
    matrix_of_cases(tu_gpu, GPUML_FP8_E4M3, GPUML_BF16, GPUML_MATMUL_WGMMA);
    gpuml__mm_splitk = 3;
    matrix_of_cases(tu_gpu, GPUML_BF16, GPUML_F32, GPUML_MATMUL_WGMMA);
    gpuml__mm_splitk = 0;
    gpuml__mm_bn = 0;
    CHECK(gpuml__mm_bn128_runs > before, "128-column tiles never ran");
    printf("    %d stream-K cases ran\n", bn128_sk_cases());
    for (i = 0; i < 2; i++) {
        mcase mc;
        long b0 = gpuml__mm_bn128_runs;
        char label[200];
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = GPUML_BF16; mc.ct = GPUML_BF16; mc.tb = 1; mc.bias = 1; mc.act = 1 + i;
        mc.M = rule[i][0]; mc.N = rule[i][1]; mc.K = rule[i][2]; mc.path = GPUML_MATMUL_WGMMA;
        gpuml__mm_bn = -1;
        snprintf(label, sizeof label, "128-column rule %lldx%lldx%lld", (long long)mc.M, (long long)mc.N, (long long)mc.K);
        run_case(tu_gpu, &mc, label);
        gpuml__mm_bn = 0;
        CHECK((gpuml__mm_bn128_runs > b0) == (i == 0 && 2 * 3 * 3 <= tu_gpu->sm_count), "%s: %s 128 columns", label,
              gpuml__mm_bn128_runs > b0 ? "took" : "did not take");
    }
}
/* desc.residual = C itself (the header allows it): every element's residual is read before its result
   is written, on the CPU and on each GPU path (automatic, SIMT, mma.sync, wgmma unsplit and split-K,
   small-M); with beta = 0.5 too (C read twice) */
static void residual_is_c(void)
{
    static const int64_t shp[][3] = { {37, 72, 200}, {8, 512, 1024}, {129, 264, 1040}, {300, 520, 1000} };
    static const gpuml_matmul_path paths[] = { GPUML_MATMUL_AUTO, GPUML_MATMUL_SIMT, GPUML_MATMUL_MMA, GPUML_MATMUL_WGMMA, GPUML_MATMUL_SMALL_M };
    int g, pi, i;
    char label[200];
    for (g = 0; g < 2; g++) {
        gpuml_ctx *ctx = g ? tu_gpu : tu_cpu;
        if (!ctx) { tu_skip("GPU part: no usable GPU: %.200s", tu_gpu_reason); break; }
        for (pi = 0; pi < (g ? 6 : 1); pi++) {
            int ran = 0;
            for (i = 0; i < 4; i++) {   /* the last in f32 (3xTF32 on Hopper by the automatic choice) */
                mcase mc;
                memset(&mc, 0, sizeof mc);
                mc.at = mc.bt = i == 3 ? GPUML_F32 : GPUML_BF16; mc.ct = i == 1 || i == 3 ? GPUML_F32 : GPUML_BF16;
                mc.M = shp[i][0]; mc.N = shp[i][1]; mc.K = shp[i][2]; mc.tb = 1;
                mc.resid = 1; mc.resid_is_c = 1; mc.bias = 1; mc.act = 1 + i % 3; mc.beta = i == 2 ? 0.5f : 0.0f; mc.alpha = 0.75f;
                mc.path = paths[pi < 5 ? pi : 3];
                if (pi == 5) gpuml__mm_splitk = 3;   /* wgmma split-K: C through the epilogue kernel */
                snprintf(label, sizeof label, "residual = C, %s path %d%s %lldx%lldx%lld", g ? "GPU" : "CPU", (int)mc.path, pi == 5 ? " split-K" : "",
                         (long long)mc.M, (long long)mc.N, (long long)mc.K);
                ran += run_case(ctx, &mc, label);
                gpuml__mm_splitk = 0;
                gpuml_clear_error(ctx);
            }
            if (pi == 0 || pi == 1 || (pi >= 3 && gpuml__sm90_device(ctx)) || (pi == 2 && gpuml_device_arch(ctx) >= 80))
                CHECK(ran > 0, "residual = C: path %d ran no case", pi);
        }
    }
}
/* fp8's per-tensor scales (desc.a_scale, b_scale: y = alpha a_scale b_scale A B + ...): on the CPU, and
   on the GPU by the automatic choice, the unsplit wgmma kernel, split-K (forced 3 ways and by the rule),
   the stream-K tail and the two-way split; e4m3 x e5m2 and e4m3 x e4m3, with and without alpha */
static void fp8_scales(void)
{
    static const int64_t shp[][3] = { {37, 70, 200}, {129, 264, 1040}, {300, 520, 1000}, {100, 520, 4100} };
    int g, i;
    char label[200];
    for (g = 0; g < 2; g++) {
        gpuml_ctx *ctx = g ? tu_gpu : tu_cpu;
        if (!ctx) { tu_skip("GPU part: no usable GPU: %.200s", tu_gpu_reason); break; }
        for (i = 0; i < 4 * (g ? 5 : 1); i++) {
            const int mode = g ? i / 4 : 0;   /* 0 auto, 1 wgmma unsplit, 2 split-K 3, 3 stream-K tail on 3 CTAs, 4 two-way split */
            long before = gpuml__mm_splitk_runs, sk_before = gpuml__mm_streamk_runs;
            mcase mc;
            memset(&mc, 0, sizeof mc);
            mc.at = GPUML_FP8_E4M3; mc.bt = i & 1 ? GPUML_FP8_E5M2 : GPUML_FP8_E4M3; mc.ct = i & 2 ? GPUML_F32 : GPUML_BF16;
            mc.M = shp[i % 4][0]; mc.N = shp[i % 4][1]; mc.K = shp[i % 4][2]; mc.tb = 1;
            mc.a_scale = 0.375f; mc.b_scale = i & 1 ? 5.0f : -2.5f; mc.alpha = i & 2 ? 0.5f : 0.0f;
            mc.bias = i & 1; mc.act = i % 3; mc.beta = i == 2 ? 0.5f : 0.0f;
            if (mode >= 1) {
                if (g && !gpuml__sm90_device(ctx)) { tu_skip("the wgmma forms need sm_90 (this is sm_%d)", gpuml_device_arch(ctx)); break; }
                mc.path = GPUML_MATMUL_WGMMA;
                gpuml__mm_splitk = mode == 2 ? 3 : -1;
                if (mode == 3) { gpuml__mm_streamk = 3; gpuml__mm_split2 = -1; gpuml__mm_bn = 256; }   /* the tile count below */
                if (mode == 4) gpuml__mm_split2 = 1;
                if (mode != 2) mc.N = (mc.N + 7) / 8 * 8;   /* unsplit, C's rows by TMA: 16-byte multiples */
            }
            snprintf(label, sizeof label, "fp8 scales %s mode %d %lldx%lldx%lld", g ? "GPU" : "CPU", mode, (long long)mc.M, (long long)mc.N, (long long)mc.K);
            CHECK(run_case(ctx, &mc, label), "%s: the path declined it", label);
            gpuml__mm_splitk = 0; gpuml__mm_streamk = 0; gpuml__mm_split2 = 0; gpuml__mm_bn = 0;
            if (mode == 2) CHECK(gpuml__mm_splitk_runs > before, "%s: split-K did not run", label);
            if (mode >= 3) {   /* the tail on 3 CTAs needs a partial wave past the first; the split, 2 k blocks (128 fp8 each) */
                const int64_t tiles = (mc.M + 127) / 128 * ((mc.N + 255) / 256);
                const int want = mode == 3 ? tiles > 3 && tiles % 3 != 0 : mc.K > 128;
                CHECK((gpuml__mm_streamk_runs > sk_before) == want, "%s: the stream-K walk %s", label, want ? "did not run" : "ran");
            }
        }
    }
}
/* tf32 and fp8 (e4m3 x e5m2) on wgmma: every transpose (copied to k-major where needed) */
static void forced_wgmma_tf32_fp8(void)
{
    NEED_GPU();
    gpuml__mm_bn = 256;   /* as forced_wgmma: forced_bn128 has these on 128-column tiles */
    g_tf32 = 1;
    matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_WGMMA);
    g_tf32 = 0;
    matrix_of_cases(tu_gpu, GPUML_FP8_E4M3, GPUML_BF16, GPUML_MATMUL_WGMMA);
    matrix_of_cases(tu_gpu, GPUML_FP8_E4M3, GPUML_F32, GPUML_MATMUL_WGMMA);
    gpuml__mm_bn = 0;
}
/* tf32 NN with C and B column slices (N = 130 of 132 columns): the chunk at the ragged right edge
   is stored with masks; columns 130 and 131 of C must keep their values */
static void tf32_nn_column_slices(int mode)
{
    const int64_t M = 300, N = 130, K = 200, W = 132;
    int64_t as[2], bs[2], cs[2], m, n, k;
    gpuml_tensor *a, *bb, *cb, *b, *c;
    float *A = (float *)malloc(sizeof(float) * M * K), *B = (float *)malloc(sizeof(float) * K * W), *C = (float *)malloc(sizeof(float) * M * W);
    gpuml_matmul_desc d;
    as[0] = M; as[1] = K; bs[0] = K; bs[1] = W; cs[0] = M; cs[1] = W;
    a = gpuml_tensor_new(tu_gpu, GPUML_F32, 2, as); bb = gpuml_tensor_new(tu_gpu, GPUML_F32, 2, bs); cb = gpuml_tensor_new(tu_gpu, GPUML_F32, 2, cs);
    for (k = 0; k < M * K; k++) A[k] = (float)tu_rand();
    for (k = 0; k < K * W; k++) B[k] = (float)tu_rand();
    gpuml_tensor_write(a, A, sizeof(float) * M * K); gpuml_tensor_write(bb, B, sizeof(float) * K * W);
    gpuml_fill(tu_gpu, cb, 7.0);
    b = gpuml_tensor_slice(bb, 1, 0, N, 1); c = gpuml_tensor_slice(cb, 1, 0, N, 1);
    memset(&d, 0, sizeof d);
    d.path = GPUML_MATMUL_WGMMA; d.allow_tf32 = 1;
    gpuml__mm_tf32_nn = mode;
    CHECK(gpuml_matmul(tu_gpu, c, a, b, &d) == GPUML_SUCCESS, "tf32 NN column slices: %s", gpuml_last_error(tu_gpu));
    gpuml__mm_tf32_nn = 0;
    gpuml_tensor_read(cb, C, sizeof(float) * M * W);
    for (m = 0; m < M; m++)
        for (n = 0; n < W; n++) {
            double ref = 7.0, sa = 0, err;
            if (n < N) for (ref = 0, k = 0; k < K; k++) { ref += (double)A[m * K + k] * B[k * W + n]; sa += fabs((double)A[m * K + k] * B[k * W + n]); }
            err = fabs(C[m * W + n] - ref);
            if (!(err <= 2.5e-3 * (sa + 1) + 2e-6 * fabs(ref))) {
                CHECK(0, "tf32 NN column slices mode %d: [%lld,%lld] got %g want %g", mode, (long long)m, (long long)n, C[m * W + n], ref);
                m = M; break;
            }
        }
    free(A); free(B); free(C);
    gpuml_tensor_free(b); gpuml_tensor_free(c); gpuml_tensor_free(a); gpuml_tensor_free(bb); gpuml_tensor_free(cb);
}
/* shapes with several tiles, ragged edges (M % 256, N % 128, K % 32), a wrapping persistent grid,
   every epilogue; 'few' keeps the small ones (for the sanitizers) */
static int tf32_nn_shapes(int mode, int few)
{
    static const int64_t shp[][3] = { {257, 132, 77}, {300, 1028, 77}, {129, 128, 9}, {513, 260, 4100}, {1000, 1000, 1000}, {2048, 384, 1056}, {257, 516, 33} };
    int s, ran = 0, ns = few ? 3 : (int)(sizeof shp / sizeof shp[0]);
    char label[300];
    gpuml__mm_tf32_nn = mode;
    for (s = 0; s < ns; s++) {
        mcase mc;
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = mc.ct = GPUML_F32; mc.tf32 = 1; mc.path = GPUML_MATMUL_WGMMA;
        mc.M = shp[s][0]; mc.N = shp[s][1]; mc.K = shp[s][2];
        if (s % 2 == 0) { mc.alpha = -0.5f; mc.beta = 0.25f; mc.bias = 1; mc.act = 1 + (s / 2) % 3; mc.resid = 1; }
        else if (s == 1) { mc.bias = 1; mc.act = 2; }
        mc.ta = s == 6;
        snprintf(label, sizeof label, "tf32 NN %s %lldx%lldx%lld ta%d", mode == 1 ? "in-kernel" : "copied", (long long)mc.M,
                 (long long)mc.N, (long long)mc.K, mc.ta);
        if (run_case(tu_gpu, &mc, label)) ran++;
    }
    {   /* a batch of 3 sharing B (one launch per batch element; K = 96: 16-byte A rows, no copy) */
        mcase mc;
        memset(&mc, 0, sizeof mc);
        mc.at = mc.bt = mc.ct = GPUML_F32; mc.tf32 = 1; mc.path = GPUML_MATMUL_WGMMA;
        mc.M = 200; mc.N = 68; mc.K = 96; mc.batch = 3; mc.bcast_b = 1; mc.bias = 1; mc.act = 3;
        if (run_case(tu_gpu, &mc, "tf32 NN batch 3, b shared")) ran++;
    }
    gpuml__mm_tf32_nn = 0;
    tf32_nn_column_slices(mode);
    return ran + 1;
}
/* tf32 with B stored K x N on Hopper: the kernel that reads B as stored (gpuml_matmul_sm90_nn, the
   transposed problem; _copy: the k-major copy of B and the NT kernel), forced: every transpose and
   epilogue, N % 4 shapes (16-byte B and C rows: the NN kernel) and odd N (B copied), then the
   shapes above, against float64 with C poisoned */
static void tf32_nn_forced(int mode)
{
    int ran;
    NEED_GPU();
    g_tf32 = 1;
    gpuml__mm_tf32_nn = mode;
    g_n4 = 1;
    ran = matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_WGMMA);
    g_n4 = 0;
    ran += matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_WGMMA);
    gpuml__mm_tf32_nn = 0;
    g_tf32 = 0;
    ran += tf32_nn_shapes(mode, 0);
    printf("    tf32 NN %s: %d cases ran\n", mode == 1 ? "in-kernel (gpuml_matmul_sm90_nn)" : "k-major copy of B", ran);
}
static void forced_wgmma_tf32_nn(void) { tf32_nn_forced(1); }
static void forced_wgmma_tf32_nn_copy(void) { tf32_nn_forced(2); }
/* a few of those, small enough for compute-sanitizer */
static void tf32_nn_few(void) { NEED_GPU(); printf("    %d cases ran\n", tf32_nn_shapes(1, 1)); }
/* f32 without allow_tf32 forced onto Hopper's tensor cores: 3xTF32 (split operands), held to
   the f32 bound; every transpose and epilogue (batched operands are refused: not counted) */
static void forced_wgmma_f32x3(void)
{
    NEED_GPU();
    g_tf32 = 0;
    g_n4 = 1;
    printf("    3xTF32 forced: %d cases ran (batched ones are refused)\n", matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_WGMMA));
    matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_AUTO);   /* 3xTF32 where large enough */
    g_n4 = 0;
}

/* f32 at large K against float64: the automatic choice (3xTF32 on Hopper) and the SIMT kernel,
   mixed-sign operands (f32 bound) and all-positive ones (no cancellation: the accumulator grows
   with k, so the rounding of every addition counts); prints each one's worst |err| / sum|a*b| */
static void f32_large_k(void)
{
    static const int64_t shp[][3] = { {128, 192, 8192}, {67, 129, 4100} };
    static const char *const pn[] = { "auto", "simt" };
    int s, pos, pi;
    char label[200];
    NEED_GPU();
    for (s = 0; s < 2; s++)
        for (pos = 0; pos < 2; pos++)
            for (pi = 0; pi < 2; pi++) {
                mcase mc;
                memset(&mc, 0, sizeof mc);
                mc.at = mc.bt = mc.ct = GPUML_F32;
                mc.M = shp[s][0]; mc.N = shp[s][1]; mc.K = shp[s][2];
                mc.tb = s; mc.pos = pos;
                mc.path = pi ? GPUML_MATMUL_SIMT : GPUML_MATMUL_AUTO;
                /* same-sign sums at K = 8192: SIMT measured 4.7e-6; 3xTF32 sums k-chunks (gpuml.h) */
                mc.tol = pos ? 1.5e-5 : 0;
                snprintf(label, sizeof label, "f32 %s %lldx%lldx%lld tb%d %s", pn[pi], (long long)mc.M, (long long)mc.N,
                         (long long)mc.K, mc.tb, pos ? "[0,1)" : "[-1,1)");
                g_worst = -1;
                run_case(tu_gpu, &mc, label);
                printf("    %s: worst |err| / sum|a*b| = %.3g\n", label, g_worst);
            }
}

/* Inf, NaN, FLT_MAX (whose tf32 rounding would overflow) and denormals through f32 matmul on
   every backend and GPU path: IEEE results (inf * b stays inf also where b is exact in tf32, so
   that 3xTF32's cross terms have zero small parts; NaN propagates), f32 accuracy elsewhere.
   Denormal inputs keep 2^-136 absolute precision in 3xTF32 (tf32's denormal step, halved). */
static void f32_special_values(void)
{
    enum { M = 70, N = 132, K = 1100 };   /* N % 4 == 0 (3xTF32), K over several 3xTF32 k-chunks */
    int64_t as[2] = {M, K}, bs[2] = {K, N}, cs[2] = {M, N};
    float *A = (float *)malloc(sizeof(float) * M * K), *B = (float *)malloc(sizeof(float) * K * N), *C = (float *)malloc(sizeof(float) * M * N);
    double *sumb = (double *)calloc(N, sizeof(double));
    int64_t m, n, k;
    int g;
    for (k = 0; k < M * K; k++) A[k] = (float)tu_rand();
    for (k = 0; k < K * N; k++) B[k] = (float)(int)(tu_rand() * 256) / 256.0f;   /* exact in tf32 */
    for (k = 0; k < K; k++) B[k * N + 60] = (float)(1e30 * (tu_rand() + 1.5));
    for (n = 0; n < N; n++) B[n] = 0.25f;
    A[3 * K + 5] = INFINITY; A[10 * K + 7] = NAN; A[12 * K + 9] = -INFINITY; B[4 * N + 50] = -INFINITY; B[8 * N + 90] = NAN;
    A[30 * K + 0] = FLT_MAX;
    for (k = 0; k < K; k++) A[40 * K + k] = (float)(1e-39 * (tu_rand() + 1.5));   /* denormals */
    for (k = 0; k < K; k++) for (n = 0; n < N; n++) sumb[n] += isfinite(B[k * N + n]) ? fabs(B[k * N + n]) : 0;
    for (g = 0; g < 3; g++) {
        gpuml_ctx *ctx = g ? tu_gpu : tu_cpu;
        gpuml_tensor *a, *b, *c;
        gpuml_matmul_desc d;
        gpuml_status st;
        int bad = 0;
        if (!ctx) { tu_skip("GPU part: no usable GPU: %.200s", tu_gpu_reason); break; }
        a = gpuml_tensor_new(ctx, GPUML_F32, 2, as); b = gpuml_tensor_new(ctx, GPUML_F32, 2, bs); c = gpuml_tensor_new(ctx, GPUML_F32, 2, cs);
        gpuml_tensor_write(a, A, sizeof(float) * M * K);
        gpuml_tensor_write(b, B, sizeof(float) * K * N);
        gpuml_fill(ctx, c, 12345.0f);
        memset(&d, 0, sizeof d);
        d.path = g == 1 ? GPUML_MATMUL_WGMMA : g == 2 ? GPUML_MATMUL_SIMT : GPUML_MATMUL_AUTO;
        st = gpuml_matmul(ctx, c, a, b, &d);
        if (g == 1 && st == GPUML_ERROR_NOT_SUPPORTED && !gpuml__sm90_device(ctx)) { printf("    (no wgmma path on %s)\n", gpuml_device_name(ctx)); gpuml_clear_error(ctx); }
        else {
            CHECK(st == GPUML_SUCCESS, "path %d: %s", (int)d.path, gpuml_last_error(ctx));
            gpuml_tensor_read(c, C, sizeof(float) * M * N);
            for (m = 0; m < M && !bad; m++)
                for (n = 0; n < N && !bad; n++) {
                    double s = 0, sa = 0, got = C[m * N + n];
                    for (k = 0; k < K; k++) { double x = (double)A[m * K + k] * (double)B[k * N + n]; s += x; sa += fabs(x); }
                    if (s != s) bad = got == got;
                    else if (isinf(s)) bad = got != s;
                    else bad = !(fabs(got - s) <= 4e-6 * sa + ldexp(sumb[n], -135) + 1e-38);
                    if (bad) CHECK(0, "%s path %d [%lld,%lld]: got %.9g want %.9g (sum|a*b| %.3g)", g ? "GPU" : "CPU", (int)d.path, (long long)m, (long long)n, got, s, sa);
                }
        }
        gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c);
    }
    free(A); free(B); free(C); free(sumb);
}

/* allow_tf32 with the automatic choice, on both backends (the CPU computes in f32) */
static void tf32_auto(void)
{
    mcase mc;
    g_tf32 = 1;
    matrix_of_cases(tu_cpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_AUTO);
    if (tu_gpu) matrix_of_cases(tu_gpu, GPUML_F32, GPUML_F32, GPUML_MATMUL_AUTO);
    g_tf32 = 0;
    if (!tu_gpu) return;
    /* large enough for the automatic choice to take the tensor cores; b transposed (n-major) */
    memset(&mc, 0, sizeof mc);
    mc.at = mc.bt = mc.ct = GPUML_F32; mc.tf32 = 1;
    mc.M = 301; mc.N = 515; mc.K = 1029; mc.tb = 0;
    run_case(tu_gpu, &mc, "tf32 auto 301x515x1029");
    mc.at = mc.bt = GPUML_FP8_E4M3; mc.ct = GPUML_BF16; mc.tf32 = 0; mc.tb = 1; mc.act = 2; mc.bias = 1;
    run_case(tu_gpu, &mc, "fp8 auto 301x515x1029 tb gelu bias");
}

/* large shapes: sampled check against float64 */
static void large_gpu(void)
{
    mcase mc;
    NEED_GPU();
    memset(&mc, 0, sizeof mc);
    mc.at = mc.bt = mc.ct = GPUML_BF16;
    mc.M = 1000; mc.N = 1000; mc.K = 1000;
    run_case(tu_gpu, &mc, "bf16 1000^3");
    mc.M = 512; mc.N = 2048; mc.K = 1024; mc.tb = 1; mc.ct = GPUML_F32;
    run_case(tu_gpu, &mc, "bf16 512x2048x1024 tb");
}

/* CPU and GPU agree on the same inputs (f32, tolerance of f32 accumulation) */
static void cpu_gpu_agree(void)
{
    int64_t as[2] = {77, 301}, bs[2] = {301, 45}, cs[2] = {77, 45};
    gpuml_tensor *a[2], *b[2], *c[2];
    double *r[2];
    int g, i;
    NEED_GPU();
    for (g = 0; g < 2; g++) {
        gpuml_ctx *ctx = g ? tu_gpu : tu_cpu;
        a[g] = gpuml_tensor_new(ctx, GPUML_F32, 2, as);
        b[g] = gpuml_tensor_new(ctx, GPUML_F32, 2, bs);
        c[g] = gpuml_tensor_new(ctx, GPUML_F32, 2, cs);
        gpuml_rand_normal(ctx, a[g], 7, 0, 1);
        gpuml_rand_normal(ctx, b[g], 8, 0, 1);
        CHECK(gpuml_matmul(ctx, c[g], a[g], b[g], NULL) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        r[g] = read_all(c[g]);
    }
    for (i = 0; i < 77 * 45; i++) if (fabs(r[0][i] - r[1][i]) > 1e-4 * (1 + fabs(r[0][i]))) { CHECK(0, "elem %d: %g vs %g", i, r[0][i], r[1][i]); break; }
    for (g = 0; g < 2; g++) { gpuml_tensor_free(a[g]); gpuml_tensor_free(b[g]); gpuml_tensor_free(c[g]); free(r[g]); }
}

static void bad_input(void)
{
    gpuml_ctx *ctx = tu_cpu;
    int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s24[2] = {2, 4}, s44[2] = {4, 4}, s5[1] = {5};
    gpuml_tensor *a = gpuml_tensor_new(ctx, GPUML_F32, 2, s23), *b = gpuml_tensor_new(ctx, GPUML_F32, 2, s34);
    gpuml_tensor *c = gpuml_tensor_new(ctx, GPUML_F32, 2, s24), *wrong = gpuml_tensor_new(ctx, GPUML_F32, 2, s44);
    gpuml_tensor *h = gpuml_tensor_new(ctx, GPUML_F16, 2, s34), *v = gpuml_tensor_new(ctx, GPUML_F32, 1, s5);
    gpuml_matmul_desc d;
    CHECK(gpuml_matmul(ctx, c, a, b, NULL) == GPUML_SUCCESS, "valid");
    CHECK_STATUS(ctx, gpuml_matmul(ctx, wrong, a, b, NULL), GPUML_ERROR_SHAPE, "[2,3]");
    CHECK_STATUS(ctx, gpuml_matmul(ctx, c, a, wrong, NULL), GPUML_ERROR_SHAPE, "does not give");
    CHECK_STATUS(ctx, gpuml_matmul(ctx, c, a, h, NULL), GPUML_ERROR_DTYPE, "f32 x f16");
    CHECK_STATUS(ctx, gpuml_matmul(ctx, c, v, b, NULL), GPUML_ERROR_SHAPE, "at least 2 dims");
    CHECK_STATUS(ctx, gpuml_matmul(ctx, c, NULL, b, NULL), GPUML_ERROR_INVALID_ARGUMENT, "a is NULL");
    memset(&d, 0, sizeof d);
    d.bias = v;
    CHECK_STATUS(ctx, gpuml_matmul(ctx, c, a, b, &d), GPUML_ERROR_SHAPE, "bias");
    memset(&d, 0, sizeof d);
    d.path = GPUML_MATMUL_WGMMA;
    CHECK_STATUS(ctx, gpuml_matmul(ctx, c, a, b, &d), GPUML_ERROR_NOT_SUPPORTED, "GPU kernel");
    {   /* c overlapping a */
        gpuml_tensor *big = gpuml_tensor_new(ctx, GPUML_F32, 2, s44);
        gpuml_tensor *a2 = gpuml_tensor_slice(big, 0, 0, 2, 1), *a23 = gpuml_tensor_slice(a2, 1, 0, 3, 1);
        gpuml_tensor *c2 = gpuml_tensor_slice(big, 0, 0, 2, 1);
        CHECK_STATUS(ctx, gpuml_matmul(ctx, c2, a23, b, NULL), GPUML_ERROR_ALIAS, "overlaps");
        gpuml_tensor_free(big); gpuml_tensor_free(a2); gpuml_tensor_free(a23); gpuml_tensor_free(c2);
    }
    gpuml_tensor_free(a); gpuml_tensor_free(b); gpuml_tensor_free(c); gpuml_tensor_free(wrong); gpuml_tensor_free(h); gpuml_tensor_free(v);
}

static const tu_test tests[] = {
    { "f32_cpu", f32_cpu }, { "bf16_cpu", bf16_cpu }, { "bf16_f32out_cpu", bf16_f32out_cpu }, { "f16_cpu", f16_cpu },
    { "fp8_cpu", fp8_cpu }, { "i8_cpu", i8_cpu }, { "fp8_scales", fp8_scales }, { "residual_is_c", residual_is_c }, { "bn128_few", bn128_few }, { "forced_bn128", forced_bn128 },
    { "f32_gpu", f32_gpu }, { "bf16_gpu", bf16_gpu }, { "bf16_f32out_gpu", bf16_f32out_gpu }, { "f16_gpu", f16_gpu },
    { "fp8_gpu", fp8_gpu }, { "i8_gpu", i8_gpu },
    { "forced_simt", forced_simt }, { "forced_mma", forced_mma }, { "forced_wgmma", forced_wgmma }, { "forced_splitk", forced_splitk }, { "splitk_few", splitk_few }, { "forced_streamk", forced_streamk }, { "streamk_few", streamk_few }, { "streamk_partition", streamk_partition }, { "forced_split2", forced_split2 }, { "forced_wgmma_tf32_fp8", forced_wgmma_tf32_fp8 }, { "forced_wgmma_tf32_nn", forced_wgmma_tf32_nn },
    { "forced_wgmma_tf32_nn_copy", forced_wgmma_tf32_nn_copy }, { "tf32_nn_few", tf32_nn_few }, { "tf32_auto", tf32_auto },
    { "forced_wgmma_f32x3", forced_wgmma_f32x3 }, { "f32_large_k", f32_large_k }, { "f32_special_values", f32_special_values },
    { "forced_small_m", forced_small_m }, { "small_m", small_m }, { "small_m_shapes", small_m_shapes },
    { "large_gpu", large_gpu }, { "cpu_gpu_agree", cpu_gpu_agree }, { "bad_input", bad_input },
};

int main(int argc, char **argv) { return TU_RUN("test_matmul", tests, argc, argv); }
