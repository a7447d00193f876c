/* The tensor-core implicit-GEMM conv2d forward (gpuml__conv2d_igemm, kernels/conv_igemm.cu),
   called directly: every tile configuration, f16/bf16 in, f16/bf16/f32 out, bias / activation /
   residual, strides, padding (top/left only too), dilation, 1x1 / 3x3 / 7x7 / rectangular
   windows, the stem (C = 3) gather variant, odd sizes; against a float64 direct convolution on
   fresh random data with the output poisoned first.  The NOT_SUPPORTED answers are checked too.
   Without a GPU the kernel tests skip (the CUDA-context checks still run). */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#define GPUML_IMPLEMENTATION
#include "harness.h"

typedef struct ccase {
    int n, h, w, c, k, r, s;
    int sh, sw, ph, pw, dh, dw;
    int pb, pr;                   /* bottom / right padding implied by P and Q */
    gpuml_dtype xt, yt;
    int bias, act, resid;
    int cfg;                      /* -1: the kernel's own choice (configuration and split) */
    int splits;                   /* split-K ways with an explicit cfg */
    int misalign;                 /* x starts 1 element into its buffer */
    int wg;                       /* 1: the Hopper wgmma kernel (gpuml__conv2d_sm90_cfg) */
    int stem;                     /* the small-C kernel (gpuml__conv2d_stem_pf, kernels/conv_stem.cu): 1 its
                                     default, 2 without and 3 with the next window loaded during the mma,
                                     4 its TMA form (sm_90) */
} ccase;

static double act_ref(int act, double x)
{
    if (act == 1) return x > 0 ? x : 0;
    if (act == 2) return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    if (act == 3) return x / (1 + exp(-x));
    return x;
}

/* fills t with random values representable in its dtype; returns them as doubles */
static double *fill_random(gpuml_ctx *ctx, gpuml_tensor *t)
{
    int64_t n = gpuml_tensor_numel(t), i;
    gpuml_dtype d = gpuml_tensor_dtype(t);
    size_t es = gpuml_dtype_size(d);
    unsigned char *buf = (unsigned char *)malloc((size_t)n * es + 1);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    for (i = 0; i < n; i++) {
        gpuml__st_f32(d, buf + i * (int64_t)es, (float)tu_rand());
        v[i] = gpuml__ld_f32(d, buf + i * (int64_t)es);
    }
    CHECK(gpuml_tensor_write(t, buf, (size_t)n * es) == GPUML_SUCCESS, "write: %s", gpuml_last_error(ctx));
    free(buf);
    return v;
}

static const char *last_why = "";   /* why the last declined case was declined */

static int64_t out_size(int in, int pad_lo, int pad_hi, int dil, int win, int stride)
{
    return (in + pad_lo + pad_hi - dil * (win - 1) - 1) / stride + 1;
}

/* runs one case; returns 0 when the configuration declined it (NOT_SUPPORTED) */
static int run_case(gpuml_ctx *ctx, const ccase *cc)
{
    int64_t P = out_size(cc->h, cc->ph, cc->pb, cc->dh, cc->r, cc->sh), Q = out_size(cc->w, cc->pw, cc->pr, cc->dw, cc->s, cc->sw);
    int64_t xs[4], ws[4], ys[4], bs[1], flat[1], nx = (int64_t)cc->n * cc->h * cc->w * cc->c, i;
    gpuml_tensor *xbuf = NULL, *xsl = NULL, *x, *w, *y, *bias = NULL, *res = NULL;
    double *xv, *wv, *bv = NULL, *rv = NULL, *got;
    size_t es = gpuml_dtype_size(cc->yt);
    unsigned char *raw;
    gpuml__conv_problem p;
    gpuml_status st;
    char label[300];
    int ni, pp, qq, kk, ran = 1, bad = 0;
    snprintf(label, sizeof label, "%s%sn%d h%d w%d c%d k%d %dx%d s%d,%d p%d,%d(+%d,%d) d%d,%d %s->%s bias%d act%d res%d cfg%d%s", cc->wg ? "wgmma " : "", cc->stem == 1 ? "stem " : cc->stem == 2 ? "stem-pf0 " : cc->stem == 3 ? "stem-pf1 " : cc->stem == 4 ? "stem-tma " : "",
             cc->n, cc->h, cc->w, cc->c, cc->k, cc->r, cc->s, cc->sh, cc->sw, cc->ph, cc->pw, cc->pb, cc->pr, cc->dh, cc->dw, gpuml_dtype_name(cc->xt),
             gpuml_dtype_name(cc->yt), cc->bias, cc->act, cc->resid, cc->cfg, cc->misalign ? " misaligned" : "");
    if (cc->splits > 1) snprintf(label + strlen(label), sizeof label - strlen(label), " split%d", cc->splits);
    xs[0] = cc->n; xs[1] = cc->h; xs[2] = cc->w; xs[3] = cc->c;
    ws[0] = cc->k; ws[1] = cc->r; ws[2] = cc->s; ws[3] = cc->c;
    ys[0] = cc->n; ys[1] = P; ys[2] = Q; ys[3] = cc->k;
    bs[0] = cc->k;
    if (cc->misalign) {
        flat[0] = nx + 1;
        xbuf = gpuml_tensor_new(ctx, cc->xt, 1, flat);
        xsl = xbuf ? gpuml_tensor_slice(xbuf, 0, 1, nx + 1, 1) : NULL;
        x = xsl ? gpuml_tensor_reshape(xsl, 4, xs) : NULL;
    } else {
        x = gpuml_tensor_new(ctx, cc->xt, 4, xs);
    }
    w = gpuml_tensor_new(ctx, cc->xt, 4, ws);
    y = gpuml_tensor_new(ctx, cc->yt, 4, ys);
    if (cc->bias) bias = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
    if (cc->resid) res = gpuml_tensor_new(ctx, cc->yt, 4, ys);
    CHECK(x && w && y && (!cc->bias || bias) && (!cc->resid || res), "%s: alloc: %s", label, gpuml_last_error(ctx));
    if (!x || !w || !y) return 1;
    xv = fill_random(ctx, x);
    wv = fill_random(ctx, w);
    if (bias) bv = fill_random(ctx, bias);
    if (res) rv = fill_random(ctx, res);
    CHECK(gpuml_fill(ctx, y, NAN) == GPUML_SUCCESS, "poison: %s", gpuml_last_error(ctx));
    memset(&p, 0, sizeof p);
    p.n = cc->n; p.h = cc->h; p.w = cc->w; p.c = cc->c; p.k = cc->k; p.r = cc->r; p.s = cc->s; p.p = P; p.q = Q;
    p.stride_h = cc->sh; p.stride_w = cc->sw; p.pad_h = cc->ph; p.pad_w = cc->pw; p.dil_h = cc->dh; p.dil_w = cc->dw;
    p.groups = 1; p.x = x; p.wt = w; p.y = y; p.bias = bias; p.residual = res; p.act = cc->act;
    if (cc->wg) st = gpuml__conv2d_sm90_cfg(ctx, &p, cc->cfg, cc->splits);
    else if (cc->stem) st = gpuml__conv2d_stem_pf(ctx, &p, cc->stem - 2);
    else st = cc->cfg < 0 ? gpuml__conv2d_igemm(ctx, &p) : gpuml__conv2d_igemm_cfg(ctx, &p, cc->cfg, cc->splits);
    if (st == GPUML_ERROR_NOT_SUPPORTED) {
        if (cc->wg) last_why = gpuml__conv_sm90_why(ctx, &p, cc->cfg >= 0 ? cc->cfg : 1);
        else if (cc->stem) last_why = gpuml__conv_stem_why(ctx, &p);
        else last_why = gpuml__conv_igemm_why(ctx, &p, cc->cfg >= 0 ? cc->cfg : gpuml__conv_igemm_choose(ctx, &p, NULL));
        if (!last_why) last_why = "(no reason given)";
        ran = 0;
        goto done;
    }
    CHECK(st == GPUML_SUCCESS, "%s: status %s: %s", label, gpuml_status_string(st), gpuml_last_error(ctx));
    if (st != GPUML_SUCCESS) goto done;
    raw = (unsigned char *)malloc((size_t)(cc->n * P * Q * cc->k) * es);
    got = (double *)malloc(sizeof(double) * (size_t)(cc->n * P * Q * cc->k));
    st = gpuml_tensor_read(y, raw, (size_t)(cc->n * P * Q * cc->k) * es);
    CHECK(st == GPUML_SUCCESS, "%s: read: %s", label, gpuml_last_error(ctx));
    for (i = 0; i < cc->n * P * Q * cc->k; i++) got[i] = gpuml__ld_f32(cc->yt, raw + i * (int64_t)es);
    free(raw);
    for (ni = 0; ni < cc->n && !bad; ni++)
        for (pp = 0; pp < P && !bad; pp++)
            for (qq = 0; qq < Q && !bad; qq++)
                for (kk = 0; kk < cc->k && !bad; kk++) {
                    double s = 0, mag = 0, ref, err, bound;
                    int64_t oi = (((int64_t)ni * P + pp) * Q + qq) * cc->k + kk;
                    int r, sx, c;
                    for (r = 0; r < cc->r; r++) {
                        int ih = pp * cc->sh - cc->ph + r * cc->dh;
                        if (ih < 0 || ih >= cc->h) continue;
                        for (sx = 0; sx < cc->s; sx++) {
                            int iw = qq * cc->sw - cc->pw + sx * cc->dw;
                            const double *xr, *wr;
                            if (iw < 0 || iw >= cc->w) continue;
                            xr = xv + (((int64_t)ni * cc->h + ih) * cc->w + iw) * cc->c;
                            wr = wv + (((int64_t)kk * cc->r + r) * cc->s + sx) * cc->c;
                            for (c = 0; c < cc->c; c++) { s += xr[c] * wr[c]; mag += fabs(xr[c] * wr[c]); }
                        }
                    }
                    ref = s + (bv ? bv[kk] : 0);
                    ref = act_ref(cc->act, ref) + (rv ? rv[oi] : 0);
                    bound = 1e-3 * (mag + 1) + (cc->yt == GPUML_BF16 ? 8e-3 : cc->yt == GPUML_F16 ? 1e-3 : 1e-6) * fabs(ref);
                    err = fabs(got[oi] - ref);
                    if (!(err <= bound)) {
                        CHECK(0, "%s: y[%d,%d,%d,%d] = %.7g, want %.7g (err %.3g > %.3g)", label, ni, pp, qq, kk, got[oi], ref, err, bound);
                        bad = 1;
                    }
                }
    free(got);
done:
    free(xv); free(wv); free(bv); free(rv);
    gpuml_tensor_free(x); gpuml_tensor_free(xsl); gpuml_tensor_free(xbuf); gpuml_tensor_free(w); gpuml_tensor_free(y);
    gpuml_tensor_free(bias); gpuml_tensor_free(res);
    return ran;
}

static ccase mk(int n, int h, int w, int c, int k, int r, int s, int st, int pad, gpuml_dtype xt, gpuml_dtype yt)
{
    ccase cc;
    memset(&cc, 0, sizeof cc);
    cc.n = n; cc.h = h; cc.w = w; cc.c = c; cc.k = k; cc.r = r; cc.s = s;
    cc.sh = cc.sw = st; cc.ph = cc.pw = cc.pb = cc.pr = pad; cc.dh = cc.dw = 1;
    cc.xt = xt; cc.yt = yt; cc.cfg = -1; cc.splits = 1;
    return cc;
}

/* one shape through every tile configuration; each must take it (C % 8 == 0, aligned) */
static void all_cfgs(ccase cc)
{
    int cfg;
    for (cfg = 0; cfg < GPUML__CONV_NCFG; cfg++) {
        cc.cfg = cfg;
        CHECK(run_case(tu_gpu, &cc), "cfg %d declined n%d h%d w%d c%d k%d: %s", cfg, cc.n, cc.h, cc.w, cc.c, cc.k, last_why);
    }
}

#define NEED_MMA() do { NEED_GPU(); if (gpuml_device_arch(tu_gpu) < 80) SKIP("the kernel needs sm_80+; this GPU is sm_%d", gpuml_device_arch(tu_gpu)); } while (0)

static void every_cfg_3x3_s2(void)
{
    ccase cc = mk(3, 13, 10, 72, 136, 3, 3, 2, 1, GPUML_BF16, GPUML_F32);   /* odd P, Q; K not a tile multiple */
    NEED_MMA();
    cc.bias = 1; cc.act = 1;
    all_cfgs(cc);
}
static void every_cfg_1x1(void)
{
    ccase cc = mk(2, 17, 19, 64, 96, 1, 1, 1, 0, GPUML_F16, GPUML_BF16);
    NEED_MMA();
    cc.act = 3; cc.resid = 1;
    all_cfgs(cc);
}
static void every_cfg_epilogue_f16(void)
{
    ccase cc = mk(2, 9, 11, 16, 40, 3, 3, 1, 1, GPUML_F16, GPUML_F16);   /* C = 16 < one k tile */
    NEED_MMA();
    cc.bias = 1; cc.act = 2; cc.resid = 1;
    all_cfgs(cc);
}
static void every_cfg_big_m(void)
{
    ccase cc = mk(4, 28, 28, 64, 64, 3, 3, 1, 1, GPUML_F16, GPUML_F16);  /* 3136 rows: many CTAs, raster groups */
    NEED_MMA();
    cc.bias = 1; cc.act = 1;
    all_cfgs(cc);
}
static void every_cfg_deep_k(void)
{
    ccase cc = mk(1, 7, 7, 512, 264, 3, 3, 1, 1, GPUML_BF16, GPUML_BF16);  /* K_gemm 4608, M 49 < one tile */
    NEED_MMA();
    cc.resid = 1;
    all_cfgs(cc);
}
static void stem_7x7_c3(void)
{
    ccase cc = mk(2, 37, 35, 3, 64, 7, 7, 2, 3, GPUML_F16, GPUML_F16);
    gpuml__conv_problem p;
    NEED_MMA();
    cc.bias = 1; cc.act = 1;
    CHECK(run_case(tu_gpu, &cc), "auto declined the stem: %s", last_why);
    cc.cfg = GPUML__CONV_GATHER_CFG;                                      /* the element gather, forced */
    CHECK(run_case(tu_gpu, &cc), "the gather configuration declined the stem: %s", last_why);
    cc.cfg = -1;
    for (cc.stem = 2; cc.stem <= 3; cc.stem++)                            /* the small-C kernel, both variants */
        CHECK(run_case(tu_gpu, &cc), "the small-C kernel (stem %d) declined the stem: %s", cc.stem, last_why);
    cc.stem = 0;
    cc.xt = GPUML_BF16; cc.yt = GPUML_F32; cc.bias = 0; cc.act = 0; cc.resid = 1;
    CHECK(run_case(tu_gpu, &cc), "auto declined the stem (bf16): %s", last_why);
    cc = mk(2, 224, 224, 3, 64, 7, 7, 2, 3, GPUML_F16, GPUML_F16);       /* the ResNet-50 stem itself, n = 2 */
    cc.bias = 1; cc.act = 1; cc.resid = 1;
    {
        long t0 = gpuml__conv_stem_tma_runs;
        CHECK(run_case(tu_gpu, &cc), "auto declined the 224x224 stem: %s", last_why);
        if (gpuml_device_arch(tu_gpu) == 90) CHECK(gpuml__conv_stem_tma_runs > t0, "auto did not take the TMA form for the 224x224 stem on sm_90");
    }
    /* AUTO must pick the small-C kernel for the stem (the gather stays the fallback) */
    memset(&p, 0, sizeof p);
    p.n = 32; p.h = p.w = 224; p.c = 3; p.k = 64; p.r = p.s = 7; p.p = p.q = 112; p.stride_h = p.stride_w = 2;
    p.pad_h = p.pad_w = 3; p.dil_h = p.dil_w = 1; p.groups = 1;
    CHECK(gpuml__conv_stem_smem(&p) <= 48 * 1024, "stem tile needs %lld bytes of shared memory", (long long)gpuml__conv_stem_smem(&p));
}

/* the small-C kernel (gpuml__conv2d_stem) forced: C 1-16, windows 1x1-7x7 and rectangular,
   strides 1/2/3, asymmetric and one-sided padding, dilation, both tile widths (Q <= 8: TQ 8),
   K below, at and past one 64-channel block (K % 8 != 0: scalar stores), every epilogue and
   dtype pair, misaligned x; then AUTO on the same shapes; then what it must decline */
static void stem_kernel(void)
{
    static const int L[][13] = {
        /* n  h   w   c  k   r  s  sh sw ph pw pb pr */
        {2, 17, 23, 3, 64, 7, 7, 2, 2, 3, 3, 3, 3},   {1, 9, 13, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1},
        {3, 11, 10, 2, 70, 5, 5, 1, 2, 2, 1, 0, 2},   {2, 19, 21, 4, 128, 7, 7, 2, 2, 3, 2, 1, 3},
        {1, 15, 14, 5, 33, 3, 3, 2, 1, 0, 1, 1, 0},   {2, 12, 31, 7, 64, 1, 1, 1, 1, 0, 0, 0, 0},
        {1, 29, 26, 3, 24, 3, 5, 1, 1, 1, 2, 1, 2},   {2, 8, 7, 3, 72, 7, 7, 2, 2, 3, 3, 3, 3},
        {1, 10, 9, 12, 40, 3, 3, 1, 1, 1, 1, 1, 1},   {1, 13, 17, 16, 8, 3, 3, 3, 2, 1, 0, 2, 1},
        {2, 21, 18, 6, 5, 5, 3, 2, 1, 2, 1, 2, 1},    {1, 6, 40, 3, 64, 3, 3, 1, 1, 1, 1, 1, 1},
    };
    static const int E[][6] = { /* xt, yt, bias, act, resid, misalign */
        {GPUML_F16, GPUML_F16, 1, 1, 0, 0}, {GPUML_BF16, GPUML_BF16, 0, 0, 1, 0}, {GPUML_F16, GPUML_F32, 1, 2, 1, 1},
        {GPUML_BF16, GPUML_F16, 1, 3, 0, 0}, {GPUML_F16, GPUML_BF16, 0, 1, 1, 0}, {GPUML_BF16, GPUML_F32, 1, 0, 0, 1},
    };
    size_t i;
    ccase cc;
    NEED_MMA();
    for (i = 0; i < sizeof L / sizeof L[0]; i++) {
        const int *e = E[i % (sizeof E / sizeof E[0])];
        cc = mk(L[i][0], L[i][1], L[i][2], L[i][3], L[i][4], L[i][5], L[i][6], L[i][7], 0, (gpuml_dtype)e[0], (gpuml_dtype)e[1]);
        cc.sw = L[i][8]; cc.ph = L[i][9]; cc.pw = L[i][10]; cc.pb = L[i][11]; cc.pr = L[i][12];
        cc.bias = e[2]; cc.act = e[3]; cc.resid = e[4]; cc.misalign = e[5];
        if (i == 6) cc.dh = 2;                    /* dilation (2, 1) */
        if (i == 10) cc.dw = 2;                   /* dilation (1, 2) */
        cc.stem = 2;
        CHECK(run_case(tu_gpu, &cc), "small-C kernel (pf 0) declined case %d: %s", (int)i, last_why);
        cc.stem = 3;
        CHECK(run_case(tu_gpu, &cc), "small-C kernel (pf 1) declined case %d: %s", (int)i, last_why);
        cc.stem = 0;                              /* AUTO: the small-C kernel where C % 8 != 0 or x is misaligned */
        CHECK(run_case(tu_gpu, &cc), "auto declined case %d: %s", (int)i, last_why);
    }
    cc = mk(1, 9, 9, 17, 16, 3, 3, 1, 1, GPUML_F16, GPUML_F16);           /* C = 17: beyond the kernel */
    cc.stem = 1;
    CHECK(!run_case(tu_gpu, &cc), "the small-C kernel took C = 17");
    cc.stem = 0;
    CHECK(run_case(tu_gpu, &cc), "auto declined C = 17: %s", last_why);  /* the gather configuration */
    cc = mk(1, 300, 300, 3, 16, 9, 9, 16, 0, GPUML_F16, GPUML_F16);      /* a window tile too large for shared memory */
    cc.stem = 1;
    CHECK(!run_case(tu_gpu, &cc), "the small-C kernel took a %lldx%lld-pixel window tile", 15LL * 16 + 9, 15LL * 16 + 9);
    cc.stem = 0;
    CHECK(run_case(tu_gpu, &cc), "auto declined the large-stride case: %s", last_why);
}
/* the small-C kernel's TMA form (GPUML_STEM_TMA, sm_90: raw windows by TMA, GEMM depth r * JP + s * C + c)
   forced on the shapes it takes: C 1-12, odd and even tap counts a filter row (the masked odd slot),
   strides 1/2, asymmetric padding (zero fill at every edge), dilation 2 along h, TQ 8 and 16, K below,
   at and past 64 (K = 5: scalar stores), every epilogue and dtype pair; AUTO must take it there; then
   what it must decline (AUTO falls back to the plain form) */
static void stem_tma(void)
{
    static const int L[][14] = {
        /* n  h   w   c  k   r  s  sh sw ph pw pb pr dh */
        {2, 17, 24, 3, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1},   {2, 19, 20, 4, 128, 7, 7, 2, 2, 3, 2, 1, 3, 1},
        {1, 29, 32, 2, 24, 3, 5, 1, 1, 1, 2, 1, 2, 2},   {2, 8, 8, 3, 72, 7, 7, 2, 2, 3, 3, 3, 3, 1},
        {1, 10, 8, 12, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1},   {2, 21, 16, 6, 5, 5, 3, 2, 1, 2, 1, 2, 1, 1},
        {1, 6, 40, 4, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1},    {1, 9, 16, 1, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1},
        {3, 30, 56, 3, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1},
    };
    static const int E[][5] = { /* xt, yt, bias, act, resid */
        {GPUML_F16, GPUML_F16, 1, 1, 0}, {GPUML_BF16, GPUML_BF16, 0, 0, 1}, {GPUML_F16, GPUML_F32, 1, 2, 1},
        {GPUML_BF16, GPUML_F16, 1, 3, 0}, {GPUML_F16, GPUML_BF16, 0, 1, 1}, {GPUML_BF16, GPUML_F32, 1, 0, 0},
    };
    size_t i;
    ccase cc;
    long t0;
    NEED_MMA();
    if (gpuml_device_arch(tu_gpu) != 90) {
        cc = mk(L[0][0], L[0][1], L[0][2], L[0][3], L[0][4], L[0][5], L[0][6], L[0][7], 3, GPUML_F16, GPUML_F16);
        cc.stem = 4;
        CHECK(!run_case(tu_gpu, &cc), "the TMA form ran on sm_%d", gpuml_device_arch(tu_gpu));
        SKIP("the TMA form needs sm_90 (this is sm_%d; it declined, as it must)", gpuml_device_arch(tu_gpu));
    }
    for (i = 0; i < sizeof L / sizeof L[0]; i++) {
        const int *e = E[i % (sizeof E / sizeof E[0])];
        cc = mk(L[i][0], L[i][1], L[i][2], L[i][3], L[i][4], L[i][5], L[i][6], L[i][7], 0, (gpuml_dtype)e[0], (gpuml_dtype)e[1]);
        cc.sw = L[i][8]; cc.ph = L[i][9]; cc.pw = L[i][10]; cc.pb = L[i][11]; cc.pr = L[i][12]; cc.dh = L[i][13];
        cc.bias = e[2]; cc.act = e[3]; cc.resid = e[4];
        t0 = gpuml__conv_stem_tma_runs;
        cc.stem = 4;
        CHECK(run_case(tu_gpu, &cc), "the TMA form declined case %d: %s", (int)i, last_why);
        cc.stem = 0;                              /* AUTO: the TMA form again */
        CHECK(run_case(tu_gpu, &cc), "auto declined case %d: %s", (int)i, last_why);
        CHECK(gpuml__conv_stem_tma_runs >= t0 + 2, "case %d: the TMA form ran %ld times of 2", (int)i, gpuml__conv_stem_tma_runs - t0);
    }
    /* GPUML_CONV_STEM_TMA=off: AUTO keeps the register copy */
    cc = mk(L[0][0], L[0][1], L[0][2], L[0][3], L[0][4], L[0][5], L[0][6], L[0][7], 3, GPUML_F16, GPUML_F16);
    setenv("GPUML_CONV_STEM_TMA", "off", 1);
    t0 = gpuml__conv_stem_tma_runs;
    CHECK(run_case(tu_gpu, &cc), "auto with GPUML_CONV_STEM_TMA=off declined: %s", last_why);
    CHECK(gpuml__conv_stem_tma_runs == t0, "GPUML_CONV_STEM_TMA=off: auto took the TMA form");
    unsetenv("GPUML_CONV_STEM_TMA");
    /* declined: a row of W * C not a 16-byte multiple, x misaligned, dilation along w, stride_w * C odd */
    for (i = 0; i < 4; i++) {
        cc = mk(1, 12, i == 0 ? 23 : 24, 3, 16, 3, 3, i == 3 ? 1 : 2, 1, GPUML_F16, GPUML_F16);
        if (i == 1) cc.misalign = 1;
        if (i == 2) cc.dw = 2;
        cc.stem = 4;
        CHECK(!run_case(tu_gpu, &cc), "the TMA form took decline case %d", (int)i);
        t0 = gpuml__conv_stem_tma_runs;
        cc.stem = 0;
        CHECK(run_case(tu_gpu, &cc), "auto declined decline case %d: %s", (int)i, last_why);
        CHECK(gpuml__conv_stem_tma_runs == t0, "auto took the TMA form on decline case %d", (int)i);
    }
}
static void dilation_and_odd_windows(void)
{
    ccase cc = mk(2, 15, 12, 24, 20, 3, 3, 1, 2, GPUML_F16, GPUML_F32);   /* C = 24: tiles span several taps */
    NEED_MMA();
    cc.dh = cc.dw = 2; cc.act = 2; cc.bias = 1;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
    cc = mk(3, 11, 16, 8, 33, 5, 5, 1, 0, GPUML_BF16, GPUML_BF16);       /* C = 8, top/left padding only */
    cc.ph = 2; cc.pw = 1; cc.pb = 0; cc.pr = 0;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
    cc = mk(2, 10, 13, 32, 48, 1, 3, 1, 0, GPUML_F16, GPUML_F16);        /* 1x3 window, stride (2, 1) */
    cc.sh = 2; cc.pw = cc.pr = 1; cc.dw = 3; cc.resid = 1;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
    cc = mk(1, 6, 5, 16, 1, 3, 3, 2, 1, GPUML_F16, GPUML_F16);           /* K = 1: odd rows, scalar stores */
    cc.bias = 1;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
    cc.cfg = GPUML__CONV_GATHER_CFG;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
}
static void gather_any_c(void)
{
    ccase cc = mk(2, 9, 14, 12, 70, 3, 3, 1, 1, GPUML_BF16, GPUML_BF16);  /* C % 8 != 0 */
    NEED_MMA();
    cc.act = 3; cc.bias = 1; cc.resid = 1;
    CHECK(run_case(tu_gpu, &cc), "auto declined C = 12: %s", last_why);
    cc.cfg = 1;
    CHECK(!run_case(tu_gpu, &cc), "cfg 1 took C = 12");
    cc = mk(1, 8, 8, 1, 5, 2, 2, 1, 0, GPUML_F16, GPUML_F32);           /* C = 1 */
    CHECK(run_case(tu_gpu, &cc), "auto declined C = 1: %s", last_why);
    cc = mk(2, 12, 9, 32, 40, 3, 3, 1, 1, GPUML_F16, GPUML_F16);        /* x 2 bytes off 16-byte alignment */
    cc.misalign = 1; cc.bias = 1;
    CHECK(run_case(tu_gpu, &cc), "auto declined a misaligned x: %s", last_why);
    cc.cfg = 3;
    CHECK(!run_case(tu_gpu, &cc), "cfg 3 took a misaligned x");
}

/* split-K: partial sums in an f32 workspace, then the reduce kernel applies the epilogue */
static void split_k(void)
{
    static const int sp[] = { 2, 3, 5, 8 };
    ccase cc = mk(2, 9, 9, 96, 72, 3, 3, 1, 1, GPUML_F16, GPUML_F16);      /* K_gemm 864 = 27 k tiles */
    int i, cfg;
    NEED_MMA();
    cc.bias = 1; cc.act = 1; cc.resid = 1;
    for (cfg = 0; cfg < GPUML__CONV_NCFG; cfg++)
        for (i = 0; i < 4; i++) {
            cc.cfg = cfg; cc.splits = sp[i];
            cc.yt = i == 1 ? GPUML_F32 : i == 2 ? GPUML_BF16 : GPUML_F16;
            cc.xt = i == 2 ? GPUML_BF16 : GPUML_F16;
            CHECK(run_case(tu_gpu, &cc), "cfg %d split %d declined: %s", cfg, sp[i], last_why);
        }
    cc = mk(1, 7, 7, 512, 264, 3, 3, 1, 1, GPUML_BF16, GPUML_BF16);       /* odd K, several splits of 144 tiles */
    cc.act = 3; cc.resid = 1; cc.cfg = 1; cc.splits = 7;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
    cc = mk(2, 20, 20, 3, 16, 7, 7, 2, 3, GPUML_F16, GPUML_F32);          /* gather configuration, 5 k tiles in 4 */
    cc.cfg = GPUML__CONV_GATHER_CFG; cc.splits = 4; cc.bias = 1;
    CHECK(run_case(tu_gpu, &cc), "declined: %s", last_why);
}

/* the kernel's own choice on the ResNet-50 shapes must run and be right (sampled on small n) */
static void resnet_shapes_auto(void)
{
    static const int L[][7] = { /* h, c, k, r, stride, pad */
        {14, 256, 256, 3, 1, 1, 0}, {14, 1024, 256, 1, 1, 0, 0}, {28, 128, 512, 1, 1, 0, 0}, {14, 512, 1024, 1, 2, 0, 0},
        {7, 512, 2048, 1, 1, 0, 0}, {56, 64, 64, 3, 1, 1, 0} };
    size_t i;
    NEED_MMA();
    for (i = 0; i < sizeof L / sizeof L[0]; i++) {
        ccase cc = mk(1, L[i][0], L[i][0], L[i][1], L[i][2], L[i][3], L[i][3], L[i][4], L[i][5], GPUML_F16, GPUML_F16);
        cc.bias = 1; cc.act = 1;
        CHECK(run_case(tu_gpu, &cc), "auto declined layer %d: %s", (int)i, last_why);
    }
}

/* ---- the Hopper wgmma kernel (gpuml__conv2d_sm90_cfg, kernels/conv_sm90.cu) ---- */
#define NEED_SM90() do { NEED_GPU(); if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90; this GPU is sm_%d", gpuml_device_arch(tu_gpu)); } while (0)
static int rnd_int(int lo, int hi) { return lo + (int)((tu_rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1); }
/* the specializations the wgmma tests run (each is one NVRTC compile): configuration, x dtype,
   y dtype, bias, activation, residual.  Every configuration twice, every activation, every
   dtype pair. */
#define NWSPEC 12   /* rows 0-5: configurations 0-5; rows 6-11: each again (1, 0, 3, 4, 2, 5) */
static const int wspec[NWSPEC][6] = {
    {0, GPUML_F16, GPUML_F16, 1, 1, 1},   {1, GPUML_BF16, GPUML_F32, 0, 2, 1}, {2, GPUML_F16, GPUML_BF16, 1, 3, 0},
    {3, GPUML_BF16, GPUML_BF16, 1, 0, 1}, {4, GPUML_F16, GPUML_F32, 0, 1, 0},  {5, GPUML_F16, GPUML_F16, 1, 2, 1},
    {1, GPUML_F16, GPUML_F16, 1, 3, 1},   {0, GPUML_BF16, GPUML_F32, 1, 2, 0}, {3, GPUML_F16, GPUML_F16, 0, 2, 1},
    {4, GPUML_BF16, GPUML_F16, 1, 3, 1},  {2, GPUML_BF16, GPUML_F32, 1, 1, 1}, {5, GPUML_BF16, GPUML_F32, 0, 3, 0},
};
static void set_spec(ccase *cc, int i)
{
    cc->wg = 1; cc->cfg = wspec[i][0]; cc->xt = (gpuml_dtype)wspec[i][1]; cc->yt = (gpuml_dtype)wspec[i][2];
    cc->bias = wspec[i][3]; cc->act = wspec[i][4]; cc->resid = wspec[i][5];
}

/* every configuration on fixed shapes: stride 1 and 2, padding, K not a tile multiple, K % 8 != 0 */
static void wgmma_every_cfg(void)
{
    static const int sh[][9] = { /* n, h, w, c, k, r, stride, pad, dil */
        {2, 9, 11, 64, 96, 3, 1, 1, 1}, {3, 13, 10, 128, 136, 3, 2, 1, 1}, {2, 17, 19, 64, 70, 1, 1, 0, 1},
        {1, 7, 7, 512, 264, 3, 1, 1, 1}, {2, 12, 9, 64, 40, 3, 1, 2, 2}, {4, 28, 28, 64, 256, 1, 2, 0, 1},
        {3, 15, 13, 192, 200, 1, 1, 0, 1}, {1, 9, 7, 128, 24, 1, 1, 1, 1} };   /* 1x1 s1: x by TMA; padded: gathered */
    size_t i;
    int cfg, gather;
    NEED_SM90();
    for (gather = 0; gather < 2; gather++)   /* x by TMA where 1x1 s1 (else gathered), then always gathered */
        for (i = 0; i < sizeof sh / sizeof sh[0]; i++)
            for (cfg = 0; cfg < GPUML__CW_NCFG; cfg++) {
                ccase cc = mk(sh[i][0], sh[i][1], sh[i][2], sh[i][3], sh[i][4], sh[i][5], sh[i][5], sh[i][6], sh[i][7], GPUML_F16, GPUML_F16);
                cc.dh = cc.dw = sh[i][8];
                set_spec(&cc, cfg + (i % 2 ? GPUML__CW_NCFG : 0));   /* configuration cfg (wspec lists each twice) */
                if (gather) cc.cfg |= GPUML__CW_GATHER;
                CHECK(run_case(tu_gpu, &cc), "wgmma cfg %d declined shape %d: %s", cfg, (int)i, last_why);
            }
}
/* fuzzed shapes: C a multiple of 64, odd P/Q, asymmetric padding, strides 1-2, dilation,
   rectangular windows, every epilogue and dtype pair, random configuration and split */
static void wgmma_fuzz(void)
{
    int t;
    NEED_SM90();
    tu_seed(90);
    for (t = 0; t < 40; t++) {
        ccase cc;
        memset(&cc, 0, sizeof cc);
        cc.n = rnd_int(1, 3); cc.c = 64 * rnd_int(1, 3); cc.k = rnd_int(1, 3) == 1 ? rnd_int(1, 300) : 8 * rnd_int(1, 40);
        cc.r = rnd_int(1, 3); cc.s = rnd_int(1, 3);
        cc.sh = rnd_int(1, 2); cc.sw = rnd_int(1, 2); cc.dh = rnd_int(1, 2); cc.dw = rnd_int(1, 2);
        cc.ph = rnd_int(0, 2); cc.pw = rnd_int(0, 2); cc.pb = rnd_int(0, 2); cc.pr = rnd_int(0, 2);
        cc.h = cc.dh * (cc.r - 1) + rnd_int(1, 15); cc.w = cc.dw * (cc.s - 1) + rnd_int(1, 15);
        set_spec(&cc, rnd_int(0, NWSPEC - 1));
        cc.splits = rnd_int(1, 4) == 4 ? 3 : 1;
        if (rnd_int(0, 2) == 0) cc.cfg |= GPUML__CW_GATHER;
        if (cc.splits > cc.r * cc.s * cc.c / 64) cc.splits = 1;
        CHECK(run_case(tu_gpu, &cc), "wgmma fuzz %d declined: %s", t, last_why);
    }
}
/* many units per CTA (ring phases wrap across units), split-K with every k slice, the choice */
static void wgmma_big_and_split(void)
{
    static const int sp[] = { 2, 3, 5, 8 };
    ccase cc = mk(8, 28, 28, 64, 128, 3, 3, 1, 1, GPUML_F16, GPUML_F16);   /* 6272 rows */
    int i;
    NEED_SM90();
    for (i = 0; i < 2 * GPUML__CW_NCFG; i++) {
        set_spec(&cc, i % GPUML__CW_NCFG);
        if (i >= GPUML__CW_NCFG) cc.cfg |= GPUML__CW_GATHER;
        CHECK(run_case(tu_gpu, &cc), "cfg %d declined: %s", i, last_why);
    }
    cc = mk(3, 23, 19, 64, 72, 3, 3, 2, 1, GPUML_BF16, GPUML_BF16);         /* stride 2, odd sizes, several images a tile */
    cc.pb = 0; cc.pr = 2;
    for (i = 0; i < GPUML__CW_NCFG; i++) {
        set_spec(&cc, i + GPUML__CW_NCFG);
        CHECK(run_case(tu_gpu, &cc), "s2 cfg %d declined: %s", i, last_why);
    }
    cc = mk(2, 9, 9, 128, 72, 3, 3, 1, 1, GPUML_BF16, GPUML_BF16);          /* 18 k tiles */
    for (i = 0; i < 4; i++) {
        set_spec(&cc, i + GPUML__CW_NCFG);
        cc.splits = sp[i];
        CHECK(run_case(tu_gpu, &cc), "cfg %d split %d declined: %s", i, sp[i], last_why);
    }
    set_spec(&cc, 0);
    cc.cfg = -1; cc.splits = 0;
    CHECK(run_case(tu_gpu, &cc), "the wgmma choice declined: %s", last_why);
    cc = mk(2, 11, 13, 256, 136, 1, 1, 1, 0, GPUML_F16, GPUML_F16);         /* 1x1 s1, x by TMA, 4 k tiles, M = 286 */
    for (i = 0; i < 4; i++) {
        set_spec(&cc, i);
        cc.splits = i == 0 ? 1 : i + 1;
        CHECK(run_case(tu_gpu, &cc), "1x1 cfg %d split %d declined: %s", wspec[i][0], cc.splits, last_why);
    }
}
/* TMA im2col loads of x (GPUML__CW_IM2COL; AUTO takes them where the driver encodes the map, forced
   configurations only with the flag): every configuration on windows, strides, padding and dilation,
   kept apart so that a failure here points at the im2col encoding alone. */
static void wgmma_im2col(void)
{
    static const int sh[][9] = { /* n, h, w, c, k, r, stride, pad, dil */
        {2, 9, 11, 64, 96, 3, 1, 1, 1}, {3, 13, 10, 128, 136, 3, 2, 1, 1}, {1, 7, 7, 512, 264, 3, 1, 1, 1},
        {2, 12, 9, 64, 40, 3, 1, 2, 2}, {3, 23, 19, 64, 72, 3, 2, 1, 1}, {1, 9, 7, 128, 24, 1, 1, 1, 1}, {4, 28, 28, 64, 256, 1, 2, 0, 1} };
    size_t i;
    int cfg;
    NEED_SM90();
    for (i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (cfg = 0; cfg < GPUML__CW_NCFG; cfg++) {
            ccase cc = mk(sh[i][0], sh[i][1], sh[i][2], sh[i][3], sh[i][4], sh[i][5], sh[i][5], sh[i][6], sh[i][7], GPUML_F16, GPUML_F16);
            cc.dh = cc.dw = sh[i][8];
            set_spec(&cc, cfg + (i % 2 ? GPUML__CW_NCFG : 0));
            cc.cfg |= GPUML__CW_IM2COL;
            if (i == 2 && cfg < 3) cc.splits = cfg + 2;
            CHECK(run_case(tu_gpu, &cc), "im2col cfg %d declined shape %d: %s", cfg, (int)i, last_why);
        }
}
/* the TMA-store epilogue (16-bit y, K % 8 == 0) against the slab epilogue (GPUML__CW_NO_TMA_Y) on
   every configuration, with and without a residual (TMA-loaded into the staging tile): rows past M
   (the second warpgroup's block wholly past M), K below one box, K ending inside a box, several
   units a CTA (the staging tile reused after the previous unit's stores read it); configuration 3
   both with its one reused staging box (4 stages) and with the whole tile staged
   (GPUML__CW_Y_FULL, 3 stages); past 8 k tiles (shape 2: 9) it takes the slab either way.  Then the same with the
   grid capped at 2 CTAs (gpuml__cw_grid_cap): up to 74 units a CTA, so the staging tile, the bulk groups
   and the stage ring go round many times (in shape 3 the last unit's second warpgroup is wholly past M) */
static void wgmma_tma_y(void)
{
    static const int sh[][8] = { /* n, h, w, c, k, r, stride, pad */
        {3, 19, 23, 64, 256, 1, 1, 0}, {2, 17, 13, 128, 8, 1, 1, 0}, {2, 11, 9, 64, 200, 3, 1, 1}, {12, 28, 28, 64, 264, 1, 1, 0},
        {12, 11, 13, 64, 136, 1, 1, 0} };
    static const int specs[] = { 0, 6, 2, 3, 9, 5 };   /* wspec rows: configurations 0-5, 16-bit y */
    static const int ncase = (int)(sizeof sh / sizeof sh[0]);
    size_t k;
    int i, resid, old;
    NEED_SM90();
    for (i = 0; i < ncase + 2; i++)   /* the last two: shapes 3 and 4 again, at 2 CTAs */
        for (k = 0; k < sizeof specs / sizeof specs[0]; k++)
            for (resid = 0; resid < 2; resid++)
                for (old = 0; old < 3; old++) {
                    const int *d = sh[i < ncase ? i : i - 2];
                    ccase cc = mk(d[0], d[1], d[2], d[3], d[4], d[5], d[5], d[6], d[7], GPUML_F16, GPUML_F16);
                    set_spec(&cc, specs[k]);
                    cc.resid = resid;
                    if (old == 1) cc.cfg |= GPUML__CW_NO_TMA_Y;
                    if (old == 2) cc.cfg |= GPUML__CW_Y_FULL;
                    gpuml__cw_grid_cap = i >= ncase ? 2 : 0;
                    CHECK(run_case(tu_gpu, &cc), "tma_y cfg %d shape %d resid %d old %d declined: %s", wspec[specs[k]][0], i, resid, old, last_why);
                    gpuml__cw_grid_cap = 0;
                }
}
/* the wgmma kernel declines what it cannot take, with a reason */
static void wgmma_declines(gpuml_ctx *ctx)
{
    int64_t xs[4] = {1, 5, 5, 32}, ws[4] = {4, 3, 3, 32}, ys[4] = {1, 3, 3, 4};
    gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F16, 4, xs), *w = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
    gpuml_tensor *y = gpuml_tensor_new(ctx, GPUML_F16, 4, ys);
    gpuml__conv_problem p;
    const char *why;
    CHECK(x && w && y, "alloc: %s", gpuml_last_error(ctx));
    memset(&p, 0, sizeof p);
    p.n = 1; p.h = 5; p.w = 5; p.c = 32; p.k = 4; p.r = 3; p.s = 3; p.p = 3; p.q = 3;
    p.stride_h = p.stride_w = p.dil_h = p.dil_w = p.groups = 1;
    p.x = x; p.wt = w; p.y = y;
    CHECK(gpuml__conv2d_sm90_cfg(ctx, &p, -1, 0) == GPUML_ERROR_NOT_SUPPORTED, "C = 32 taken");
    why = gpuml__conv_sm90_why(ctx, &p, 0);
    CHECK(why != NULL, "no reason for C = 32");
    if (gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA && gpuml_device_arch(ctx) == 90)
        CHECK(why && strstr(why, "C % 64"), "reason: %s", why ? why : "");
    CHECK(gpuml__conv2d_sm90_cfg(ctx, &p, GPUML__CW_NCFG, 1) == GPUML_ERROR_NOT_SUPPORTED, "cfg out of range taken");
    CHECK(gpuml__conv2d_sm90_cfg(ctx, NULL, 0, 1) != GPUML_SUCCESS, "NULL problem taken");
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y);
}
static void wgmma_declines_cpu(void) { wgmma_declines(tu_cpu); }
static void wgmma_declines_gpu(void) { NEED_GPU(); wgmma_declines(tu_gpu); }

/* what the kernel must decline, on any context */
static void not_supported(gpuml_ctx *ctx)
{
    int64_t xs[4] = {1, 5, 5, 8}, ws[4] = {4, 3, 3, 8}, ys[4] = {1, 3, 3, 4}, wg[4] = {4, 3, 3, 4};
    gpuml_tensor *x16 = gpuml_tensor_new(ctx, GPUML_F16, 4, xs), *x32 = gpuml_tensor_new(ctx, GPUML_F32, 4, xs);
    gpuml_tensor *w16 = gpuml_tensor_new(ctx, GPUML_F16, 4, ws), *wb = gpuml_tensor_new(ctx, GPUML_BF16, 4, ws);
    gpuml_tensor *w32 = gpuml_tensor_new(ctx, GPUML_F32, 4, ws), *wgp = gpuml_tensor_new(ctx, GPUML_F16, 4, wg);
    gpuml_tensor *y = gpuml_tensor_new(ctx, GPUML_F16, 4, ys), *yi = gpuml_tensor_new(ctx, GPUML_I32, 4, ys);
    gpuml__conv_problem p, q;
    CHECK(x16 && x32 && w16 && wb && w32 && wgp && y && yi, "alloc: %s", gpuml_last_error(ctx));
    memset(&p, 0, sizeof p);
    p.n = 1; p.h = 5; p.w = 5; p.c = 8; p.k = 4; p.r = 3; p.s = 3; p.p = 3; p.q = 3;
    p.stride_h = p.stride_w = p.dil_h = p.dil_w = p.groups = 1;
    p.x = x16; p.wt = w16; p.y = y;
    if (gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA || gpuml_device_arch(ctx) < 80) {
        CHECK(gpuml__conv2d_igemm(ctx, &p) == GPUML_ERROR_NOT_SUPPORTED, "a %s context was not declined", gpuml_device_name(ctx));
        CHECK(gpuml__conv2d_stem(ctx, &p) == GPUML_ERROR_NOT_SUPPORTED, "a %s context was not declined (small-C kernel)", gpuml_device_name(ctx));
    }
    q = p; q.x = x32; q.wt = w32;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "f32 x taken");
    q = p; q.wt = wb;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "mixed f16/bf16 taken");
    q = p; q.y = yi;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "i32 y taken");
    q = p; q.groups = 2; q.wt = wgp;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "groups = 2 taken");
    q = p; q.act = 9;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "act 9 taken");
    q = p; q.k = 5;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "mismatched sizes taken");
    q = p; q.stride_h = 0;
    CHECK(gpuml__conv2d_igemm(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "stride 0 taken");
    CHECK(gpuml__conv2d_igemm_cfg(ctx, &p, GPUML__CONV_NCFG, 1) == GPUML_ERROR_NOT_SUPPORTED, "cfg out of range taken");
    CHECK(gpuml__conv2d_igemm_cfg(ctx, &p, 1, GPUML__CONV_MAX_SPLITS + 1) == GPUML_ERROR_NOT_SUPPORTED, "too many splits taken");
    CHECK(gpuml__conv2d_igemm(ctx, NULL) != GPUML_SUCCESS, "NULL problem taken");
    CHECK(gpuml__conv2d_stem(ctx, NULL) != GPUML_SUCCESS, "NULL problem taken by the small-C kernel");
    CHECK(gpuml__conv2d_stem(ctx, &q) == GPUML_ERROR_NOT_SUPPORTED, "the small-C kernel took a stride-0 problem");
    gpuml_tensor_free(x16); gpuml_tensor_free(x32); gpuml_tensor_free(w16); gpuml_tensor_free(wb);
    gpuml_tensor_free(w32); gpuml_tensor_free(wgp); gpuml_tensor_free(y); gpuml_tensor_free(yi);
}
static void not_supported_cpu(void) { not_supported(tu_cpu); }
static void not_supported_gpu(void) { NEED_GPU(); not_supported(tu_gpu); }

int main(int argc, char **argv)
{
    static const tu_test tests[] = {
        {"not_supported_cpu", not_supported_cpu}, {"not_supported_gpu", not_supported_gpu},
        {"every_cfg_3x3_s2", every_cfg_3x3_s2}, {"every_cfg_1x1", every_cfg_1x1},
        {"every_cfg_epilogue_f16", every_cfg_epilogue_f16}, {"every_cfg_big_m", every_cfg_big_m},
        {"every_cfg_deep_k", every_cfg_deep_k}, {"stem_7x7_c3", stem_7x7_c3},
        {"stem_kernel", stem_kernel}, {"stem_tma", stem_tma}, {"dilation_and_odd_windows", dilation_and_odd_windows}, {"gather_any_c", gather_any_c},
        {"split_k", split_k}, {"resnet_shapes_auto", resnet_shapes_auto},
        {"wgmma_declines_cpu", wgmma_declines_cpu}, {"wgmma_declines_gpu", wgmma_declines_gpu},
        {"wgmma_every_cfg", wgmma_every_cfg}, {"wgmma_fuzz", wgmma_fuzz}, {"wgmma_big_and_split", wgmma_big_and_split},
        {"wgmma_im2col", wgmma_im2col}, {"wgmma_tma_y", wgmma_tma_y},
    };
    return TU_RUN("test_conv_igemm", tests, argc, argv);
}
