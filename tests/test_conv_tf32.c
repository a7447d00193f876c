/* Tests of f32 convolution on tensor cores (sm_80+): tf32 (desc.allow_tf32) and 3xTF32 (f32
   without allow_tf32) through the mma.sync implicit GEMM (kernels/conv_igemm.cu, DT 0) and its
   operand prep kernel (gpuml_conv_tf32_prep).  Against a float64 reference on fresh random
   inputs, outputs poisoned (NaN) before each run: odd C (1, 3, 5, 17) and H/W, strides, padding,
   dilation, both layouts, epilogues (bias, activations, residual), every tile configuration
   that takes f32 and split-K (forced through gpuml__cv_tf32), Inf/NaN propagation, a ResNet-50
   sized layer (K = R*S*C = 4608) with same-sign data whose error must stay at the CUDA-core
   path's level, grouped convs falling back, and the forced path's refusals.  Tolerances are
   relative to the sum of |terms| of each output: tf32 2.5e-3 (mma.sync rounds each input to 11
   bits: <= 2^-10 a product; wgmma reads them truncated: < 2^-9), 3xTF32 1e-5 (f32's test_conv
   uses 2e-5).  On sm_90 the same cases run on the wgmma implicit GEMM (kernels/conv_sm90.cu, f32
   as tf32: AUTO, GPUML_CONV_WGMMA, and forced configurations, gathers, TMA loads, split-K and
   per-run sums; C padded to 32 by the prep pass).  The CPU context runs the AUTO cases too (it
   ignores allow_tf32: f32 results). */
#define GPUML_IMPLEMENTATION
#include "harness.h"

typedef struct tcase {
    int n, c, h, w, k, r, s, sh, sw, pad[4], dh, dw, groups, layout, act, bias, res, tf32;
    int p, q;
} tcase;

static int out_dims(tcase *t)
{
    t->p = (int)gpuml_conv2d_out_dim(t->h, t->r, t->sh, t->pad[0], t->pad[1], t->dh);
    t->q = (int)gpuml_conv2d_out_dim(t->w, t->s, t->sw, t->pad[2], t->pad[3], t->dw);
    return t->p > 0 && t->q > 0;
}
static long long xi(const tcase *t, int C, int H, int W, int n, int h, int w, int c)
{
    return t->layout ? (((long long)n * C + c) * H + h) * W + w : (((long long)n * H + h) * W + w) * C + c;
}
static long long wi(const tcase *t, int k, int r, int s, int c)
{
    int cg = t->c / t->groups;
    return t->layout ? (((long long)k * cg + c) * t->r + r) * t->s + s : (((long long)k * t->r + r) * t->s + s) * cg + c;
}
static double act_ref(int act, double v)
{
    switch (act) {
    case GPUML_ACT_RELU: return v > 0 ? v : 0;
    case GPUML_ACT_GELU: return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case GPUML_ACT_SILU: return v / (1.0 + exp(-v));
    default: return v;
    }
}
/* the conv sum at one output and the sum of |terms|; pad_terms: taps in the padding add 0*w
   (the implicit GEMM multiplies the zero padding by the weights: an Inf weight there gives NaN,
   as IEEE zero padding does; the CUDA-core kernels skip those taps) */
static double ref_sum(const tcase *t, const float *x, const float *w, int n, int p, int q, int k, int pad_terms, double *abs_sum)
{
    int cg = t->c / t->groups, g = k / (t->k / t->groups), r, s, c;
    double acc = 0, a = 0;
    for (r = 0; r < t->r; r++)
        for (s = 0; s < t->s; s++) {
            int h = p * t->sh - t->pad[0] + r * t->dh, ww = q * t->sw - t->pad[2] + s * t->dw;
            if (h < 0 || h >= t->h || ww < 0 || ww >= t->w) {
                if (pad_terms)
                    for (c = 0; c < cg; c++) acc += 0.0 * (double)w[wi(t, k, r, s, c)];
                continue;
            }
            for (c = 0; c < cg; c++) {
                double v = (double)x[xi(t, t->c, t->h, t->w, n, h, ww, g * cg + c)] * (double)w[wi(t, k, r, s, c)];
                acc += v;
                a += fabs(v);
            }
        }
    *abs_sum = a;
    return acc;
}

static gpuml_tensor *mk4(gpuml_ctx *ctx, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t s[4];
    s[0] = a; s[1] = b; s[2] = c; s[3] = d;
    return gpuml_tensor_new(ctx, GPUML_F32, 4, s);
}
/* uniform in [lo, 1), never 0 */
static void fill(float *v, long long n, int same_sign)
{
    long long i;
    for (i = 0; i < n; i++) {
        double r = tu_rand();
        if (same_sign) r = 0.5 * (r + 1.0);
        v[i] = (float)(r == 0.0 ? 0.125 : r);
    }
}

/* How a case runs: 0 gpuml_conv2d with desc.path, else gpuml__cv_tf32 forced (mode 1 tf32, 2
   3xTF32, 3 3xTF32 in the tensor cores' accumulators, 4 3xTF32 split in registers; | 16 on the
   wgmma kernel, | 32 on the mma.sync one) with tile configuration cfg / splits. */
typedef struct how { gpuml_conv_path path; int mode, cfg, splits; } how;
#define GPUML__TEST_1X1S 99   /* mode: gpuml__cv_1x1s (f32 NCHW 1x1, x as it is; cfg: its form 1-3) instead */
#define GPUML__TEST_1X1W 98   /* mode: gpuml__cv_1x1w (the same on sm_90's wgmma; cfg: its tile configuration 1-6) */

/* Runs t on ctx; returns the max error / (sum|terms| + |bias|) over the checked outputs (all, or
   `samples` random ones), -1 where the run failed (recorded), -2 where it was declined.
   specials: put an Inf and a NaN into x and an Inf into w and check the non-finite outputs
   (padding taps count as 0*w: see ref_sum). */
static double run_one(gpuml_ctx *ctx, tcase t, how hw, int same_sign, int samples, int specials, double tol)
{
    int cg = t.c / t.groups;
    long long nx = (long long)t.n * t.c * t.h * t.w, nw = (long long)t.k * cg * t.r * t.s, ny, i, checked;
    float *x, *w, *y, *bias = NULL, *res = NULL;
    gpuml_tensor *X, *W, *Y, *B = NULL, *R = NULL;
    gpuml_conv2d_desc d;
    gpuml_status st;
    double worst = 0;
    int bad = 0;
    if (!out_dims(&t)) return -2;
    ny = (long long)t.n * t.k * t.p * t.q;
    x = (float *)malloc(sizeof(float) * (size_t)nx);
    w = (float *)malloc(sizeof(float) * (size_t)nw);
    y = (float *)malloc(sizeof(float) * (size_t)ny);
    fill(x, nx, same_sign);
    fill(w, nw, same_sign);
    if (specials) {
        x[nx / 3] = INFINITY;
        x[(2 * nx) / 3] = NAN;
        w[nw / 2] = -INFINITY;
    }
    if (t.layout) { X = mk4(ctx, t.n, t.c, t.h, t.w); W = mk4(ctx, t.k, cg, t.r, t.s); Y = mk4(ctx, t.n, t.k, t.p, t.q); }
    else { X = mk4(ctx, t.n, t.h, t.w, t.c); W = mk4(ctx, t.k, t.r, t.s, cg); Y = mk4(ctx, t.n, t.p, t.q, t.k); }
    CHECK(X && W && Y, "alloc: %s", gpuml_last_error(ctx));
    gpuml_tensor_write(X, x, sizeof(float) * (size_t)nx);
    gpuml_tensor_write(W, w, sizeof(float) * (size_t)nw);
    memset(&d, 0, sizeof d);
    d.stride[0] = t.sh; d.stride[1] = t.sw;
    memcpy(d.pad, t.pad, sizeof d.pad);
    d.dilation[0] = t.dh; d.dilation[1] = t.dw;
    d.groups = t.groups;
    d.layout = t.layout ? GPUML_LAYOUT_NCHW : GPUML_LAYOUT_NHWC;
    d.act = (gpuml_activation)t.act;
    d.allow_tf32 = t.tf32;
    d.path = hw.path;
    if (t.bias) {
        int64_t kk = t.k;
        bias = (float *)malloc(sizeof(float) * (size_t)t.k);
        fill(bias, t.k, 0);
        B = gpuml_tensor_new(ctx, GPUML_F32, 1, &kk);
        gpuml_tensor_write(B, bias, sizeof(float) * (size_t)t.k);
        d.bias = B;
    }
    if (t.res) {
        res = (float *)malloc(sizeof(float) * (size_t)ny);
        fill(res, ny, 0);
        R = t.layout ? mk4(ctx, t.n, t.k, t.p, t.q) : mk4(ctx, t.n, t.p, t.q, t.k);
        gpuml_tensor_write(R, res, sizeof(float) * (size_t)ny);
        d.residual = R;
    }
    CHECK(gpuml_fill(ctx, Y, NAN) == GPUML_SUCCESS, "poison: %s", gpuml_last_error(ctx));
    if (hw.mode) {
        gpuml__cv cv;
        st = gpuml__cv_setup(ctx, "test", 0, X, W, Y, &d, &cv);
        if (st == GPUML_SUCCESS) st = hw.mode == GPUML__TEST_1X1S ? gpuml__cv_1x1s(ctx, &cv, hw.cfg, "test")
                 : hw.mode == GPUML__TEST_1X1W ? gpuml__cv_1x1w(ctx, &cv, hw.cfg, "test")
                                              : gpuml__cv_tf32(ctx, &cv, hw.mode, hw.cfg, hw.splits, "test");
    } else {
        st = gpuml_conv2d(ctx, Y, X, W, &d);
    }
    if (st == GPUML_ERROR_NOT_SUPPORTED && hw.mode) {
        gpuml_clear_error(ctx);
        worst = -2;
        goto done;
    }
    CHECK(st == GPUML_SUCCESS, "conv2d: %s", gpuml_last_error(ctx));
    if (st != GPUML_SUCCESS) { worst = -1; goto done; }
    CHECK(gpuml_tensor_read(Y, y, sizeof(float) * (size_t)ny) == GPUML_SUCCESS, "read: %s", gpuml_last_error(ctx));
    checked = samples ? samples : ny;
    for (i = 0; i < checked && bad < 5; i++) {
        long long o = samples ? (long long)((tu_rand() + 1.0) * 0.5 * (double)ny) % ny : i, rem;
        int n, k, p, q;
        double a, ref, got, err;
        if (t.layout) { q = (int)(o % t.q); rem = o / t.q; p = (int)(rem % t.p); rem /= t.p; k = (int)(rem % t.k); n = (int)(rem / t.k); }
        else { k = (int)(o % t.k); rem = o / t.k; q = (int)(rem % t.q); rem /= t.q; p = (int)(rem % t.p); n = (int)(rem / t.p); }
        ref = ref_sum(&t, x, w, n, p, q, k, specials, &a);
        if (bias) { ref += bias[k]; a += fabs(bias[k]); }
        ref = act_ref(t.act, ref);
        if (res) ref += res[o];
        got = y[o];
        if (!isfinite(ref) || !isfinite(a)) {
            /* a non-finite sum: the same class of non-finite (NaN, or Inf of the same sign; the
               activation may map -Inf to 0 or NaN, so only where there is none) */
            int ok = t.act != GPUML_ACT_NONE ? !isfinite(got) || isnan(ref) == 0 : isnan(ref) ? isnan(got) : got == ref;
            if (t.act == GPUML_ACT_NONE && !ok) {
                bad++;
                CHECK(ok, "output %lld: got %g, reference %g (non-finite input)", o, got, ref);
            }
            continue;
        }
        err = fabs(got - ref) / (a + 1e-30);
        if (!(err <= tol)) {
            bad++;
            CHECK(err <= tol, "output %lld (n %d k %d p %d q %d): got %.9g, reference %.9g, error %.3g of sum|terms| %.4g (tolerance %.3g)",
                  o, n, k, p, q, got, ref, err, a, tol);
        }
        if (err > worst || err != err) worst = err;
    }
done:
    gpuml_tensor_free(X); gpuml_tensor_free(W); gpuml_tensor_free(Y); gpuml_tensor_free(B); gpuml_tensor_free(R);
    free(x); free(w); free(y); free(bias); free(res);
    return worst;
}

static tcase tc(int n, int c, int h, int w, int k, int r, int s, int st, int pad, int layout, int tf32)
{
    tcase t;
    memset(&t, 0, sizeof t);
    t.n = n; t.c = c; t.h = h; t.w = w; t.k = k; t.r = r; t.s = s; t.sh = t.sw = st;
    t.pad[0] = t.pad[1] = t.pad[2] = t.pad[3] = pad;
    t.dh = t.dw = 1; t.groups = 1; t.layout = layout; t.tf32 = tf32;
    return t;
}
static double tol_for(int tf32) { return tf32 ? 2.5e-3 : 1e-5; }

static int gpu_ok(void)
{
    return tu_gpu && gpuml_device_arch(tu_gpu) >= 80;
}
#define NEED_SM80() do { NEED_GPU(); if (!gpu_ok()) SKIP("f32 tensor-core convs need sm_80 or newer"); } while (0)

/* small shapes over both layouts, tf32 on and off, odd C / H / W / K, strides, padding,
   dilation, epilogues: AUTO on the CPU, forced implicit GEMM on the GPU */
static void shapes(gpuml_ctx *ctx, gpuml_conv_path path)
{
    static const int S[][9] = {   /* n c h w k r s stride pad */
        { 2, 1, 9, 7, 8, 3, 3, 1, 1 },   { 1, 3, 17, 15, 16, 7, 7, 2, 3 }, { 2, 5, 11, 13, 7, 3, 3, 2, 1 },
        { 1, 17, 10, 9, 33, 1, 1, 1, 0 }, { 3, 16, 8, 8, 64, 3, 3, 1, 1 }, { 1, 64, 7, 7, 130, 3, 3, 1, 1 },
        { 2, 36, 9, 11, 20, 1, 1, 2, 0 }, { 1, 8, 9, 6, 4, 5, 5, 1, 2 },
        /* two 64-channel prep tiles (C = 100, 70); 1x1 stride 3 (x subsampled by the prep pass) */
        { 2, 100, 12, 10, 24, 1, 1, 3, 0 }, { 1, 70, 9, 9, 16, 3, 3, 1, 1 },
    };
    int i, layout, tf32, cases = 0;
    for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++)
        for (layout = 0; layout < 2; layout++)
            for (tf32 = 0; tf32 < 2; tf32++) {
                tcase t = tc(S[i][0], S[i][1], S[i][2], S[i][3], S[i][4], S[i][5], S[i][6], S[i][7], S[i][8], layout, tf32);
                how hw = { path, 0, -1, 0 };
                double e;
                t.act = (i + layout) % 4;
                t.bias = (i + tf32) % 2;
                t.res = (i + layout + tf32) % 3 == 0;
                if (i == 7) { t.dh = 2; t.dw = 1; t.pad[1] = 0; t.pad[3] = 3; }   /* dilation, asymmetric padding */
                if (i == 8) t.sw = 2;   /* unequal strides on the subsampled 1x1 */
                if (i == 9) t.dw = 2;   /* column dilation (3xTF32 on wgmma unfolds the 3 columns into 210 channels) */
                e = run_one(ctx, t, hw, 0, 0, 0, ctx == tu_cpu ? 2e-5 : tol_for(tf32));
                CHECK(e >= 0, "case %d layout %d tf32 %d did not run", i, layout, tf32);
                if (e < 0) return;
                cases++;
            }
    printf("    %d cases\n", cases);
}
static void shapes_cpu(void) { shapes(tu_cpu, GPUML_CONV_AUTO); }
static void shapes_gpu_forced(void) { NEED_SM80(); shapes(tu_gpu, GPUML_CONV_IGEMM); }
static void shapes_gpu_auto(void) { NEED_SM80(); shapes(tu_gpu, GPUML_CONV_AUTO); }
/* the GEMM path (gpuml_matmul, after im2col where the window is not 1x1): tf32 where allowed */
static void shapes_gpu_gemm(void) { NEED_GPU(); shapes(tu_gpu, GPUML_CONV_GEMM); }

/* every tile configuration that takes f32, in every mode, with and without split-K */
static void every_cfg(void)
{
    static const int cfgs[] = { 1, 2, 3, 4, 6, 7, 10 };
    int i, mode, layout, ran = 0;
    NEED_SM80();
    for (i = 0; i < (int)(sizeof cfgs / sizeof cfgs[0]); i++)
        for (mode = 1; mode <= 4; mode++)
            for (layout = 0; layout < 2; layout++) {
                tcase t = tc(2, layout ? 24 : 20, 13, 11, 72, 3, 3, 1, 1, layout, mode == 1);
                how hw = { GPUML_CONV_IGEMM, mode | GPUML__CV_MMA, cfgs[i], 1 + (i + layout) % 3 };
                double e;
                t.act = (i + mode) % 4; t.bias = 1; t.res = (i + mode + layout) % 2;
                e = run_one(tu_gpu, t, hw, 0, 0, 0, tol_for(mode == 1));
                if (e == -2) {   /* declined: only per-tile sums (modes 2, 4) on 64-row warp tiles */
                    CHECK((mode == 2 || mode == 4) && cfgs[i] != 3 && cfgs[i] != 4 && cfgs[i] != 7, "cfg %d mode %d declined", cfgs[i], mode);
                    continue;
                }
                ran++;
            }
    printf("    %d configuration x mode x layout runs\n", ran);
    CHECK(ran >= 34, "only %d runs", ran);
}

/* Inf and NaN inputs reach the outputs that use them, in every mode and layout */
static void specials(void)
{
    int mode, layout, kern;
    NEED_SM80();
    for (kern = 0; kern < (gpuml_device_arch(tu_gpu) == 90 ? 2 : 1); kern++)
    for (mode = 1; mode <= 4 - kern; mode++)
        for (layout = 0; layout < 2; layout++) {
            tcase t = tc(2, 12, 6, 5, 16, 1, 1, 1, 0, layout, mode == 1);
            how hw = { GPUML_CONV_IGEMM, mode | (kern ? GPUML__CV_WGMMA : GPUML__CV_MMA), -1, 0 };
            CHECK(run_one(tu_gpu, t, hw, 0, 0, 1, tol_for(mode == 1)) >= 0, "mode %d layout %d", mode, layout);
            t.r = t.s = 3; t.pad[0] = t.pad[1] = t.pad[2] = t.pad[3] = 1;
            CHECK(run_one(tu_gpu, t, hw, 0, 0, 1, tol_for(mode == 1)) >= 0, "3x3 mode %d layout %d", mode, layout);
        }
}

/* A ResNet-50 layer (512 -> 512, 3x3, 7x7, K_gemm = 4608) and its 1x1 2048 -> 512, batch 4,
   on same-sign data (where a truncating accumulation adds up): 3xTF32 within the f32 tolerance
   and within 2x the CUDA-core (direct) path's own error; the no-RN variant is printed. */
static void resnet_accuracy(void)
{
    static const int L[2][6] = { { 512, 7, 512, 3, 1, 1 }, { 2048, 7, 512, 1, 1, 0 } };
    int l, ss;
    NEED_SM80();
    for (l = 0; l < 2; l++)
        for (ss = 0; ss < 2; ss++) {
            tcase t = tc(4, L[l][0], L[l][1], L[l][1], L[l][2], L[l][3], L[l][3], L[l][4], L[l][5], 1, 0);
            how simt = { GPUML_CONV_DIRECT, 0, -1, 0 }, rn = { GPUML_CONV_IGEMM, 2 | GPUML__CV_MMA, -1, 0 };
            how tc3 = { GPUML_CONV_IGEMM, 3 | GPUML__CV_MMA, -1, 0 };
            how tf = { GPUML_CONV_IGEMM, 1 | GPUML__CV_MMA, -1, 0 }, reg = { GPUML_CONV_IGEMM, 4 | GPUML__CV_MMA, -1, 0 };
            how wrn = { GPUML_CONV_IGEMM, 2 | GPUML__CV_WGMMA, -1, 0 }, w3 = { GPUML_CONV_IGEMM, 3 | GPUML__CV_WGMMA, -1, 0 };
            how wtf = { GPUML_CONV_IGEMM, 1 | GPUML__CV_WGMMA, -1, 0 };
            double e_simt, e_rn, e_3, e_tf, e_reg, e_wrn = -2, e_w3 = -2, e_wtf = -2;
            int hop = gpuml_device_arch(tu_gpu) == 90;
            tu_seed(100 + l); e_simt = run_one(tu_gpu, t, simt, ss, 3000, 0, 1e-5);
            tu_seed(100 + l); e_rn = run_one(tu_gpu, t, rn, ss, 3000, 0, 1e-5);
            tu_seed(100 + l); e_3 = run_one(tu_gpu, t, tc3, ss, 3000, 0, 1e-3);
            tu_seed(100 + l); e_reg = run_one(tu_gpu, t, reg, ss, 3000, 0, 1e-5);
            if (hop) { tu_seed(100 + l); e_wrn = run_one(tu_gpu, t, wrn, ss, 3000, 0, 1e-5); }
            if (hop) { tu_seed(100 + l); e_w3 = run_one(tu_gpu, t, w3, ss, 3000, 0, 1e-3); }
            t.tf32 = 1;
            tu_seed(100 + l); e_tf = run_one(tu_gpu, t, tf, ss, 3000, 0, 1.5e-3);
            if (hop) { tu_seed(100 + l); e_wtf = run_one(tu_gpu, t, wtf, ss, 3000, 0, 2.5e-3); }
            printf("    c%d r%d K_gemm %d %s data: max error / sum|terms|: direct (CUDA cores) %.2e, 3xTF32 %.2e, in-register "
                   "3xTF32 %.2e, 3xTF32 without per-tile sums %.2e, tf32 %.2e\n", L[l][0], L[l][3], L[l][0] * L[l][3] * L[l][3],
                   ss ? "same-sign" : "mixed-sign", e_simt, e_rn, e_reg, e_3, e_tf);
            if (hop)
                printf("      wgmma: 3xTF32 (sums of %d k tiles) %.2e, 3xTF32 in the tensor cores' accumulators %.2e, tf32 %.2e\n",
                       gpuml__cw_rn(), e_wrn, e_w3, e_wtf);
            CHECK(e_rn >= 0 && e_simt >= 0 && e_rn <= 2.0 * e_simt + 1e-7, "3xTF32 error %.3g vs direct %.3g", e_rn, e_simt);
            CHECK(e_reg >= 0 && e_reg <= 2.0 * e_simt + 1e-7, "in-register 3xTF32 error %.3g vs direct %.3g", e_reg, e_simt);
            CHECK(!hop || (e_wrn >= 0 && e_wrn <= 2.0 * e_simt + 1e-7), "wgmma 3xTF32 error %.3g vs direct %.3g", e_wrn, e_simt);
            CHECK(!hop || (e_w3 >= 0 && e_wtf >= 0), "wgmma runs");
        }
}

/* sm_90: the wgmma kernel through the public path (GPUML_CONV_WGMMA) on the small shapes */
static void shapes_gpu_wgmma(void)
{
    NEED_SM80();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90");
    shapes(tu_gpu, GPUML_CONV_WGMMA);
}

/* sm_90: every wgmma configuration in every mode (tf32, 3xTF32 with per-run sums, 3xTF32 in the
   tensor cores' accumulators), both layouts, x gathered with cp.async / loaded by TMA im2col /
   as a TMA matrix (1x1), split-K; C = 32 (NHWC tf32 read as it is) and C = 24, 40 (padded) */
static void every_cfg_wgmma(void)
{
    int cfg, mode, layout, win, ran = 0, declined = 0;
    NEED_SM80();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90");
    for (cfg = 0; cfg < GPUML__CW_NCFG; cfg++)
        for (mode = 1; mode <= 3; mode++)
            for (layout = 0; layout < 2; layout++)
                for (win = 0; win < 3; win++) {
                    /* win 0: 3x3 gathered, 1: 3x3 (stride 2) by TMA im2col, 2: 1x1 stride 1 (x as a TMA matrix) */
                    int c = win == 2 ? (layout ? 40 : 64) : layout ? 24 : 32;
                    tcase t = win == 2 ? tc(3, c, 9, 7, 72, 1, 1, 1, 0, layout, mode == 1)
                                       : tc(2, c, 13, 11, 72 + 8 * cfg, 3, 3, 1 + win, 1, layout, mode == 1);
                    how hw = { GPUML_CONV_IGEMM, mode | GPUML__CV_WGMMA, cfg | (win == 1 ? GPUML__CW_IM2COL : 0),
                                (win == 2 ? 1 + (cfg + layout) % 2 : 1 + (cfg + layout + win) % 3) };
                    double e;
                    t.act = (cfg + mode) % 4; t.bias = (cfg + win) % 2 == 0; t.res = (cfg + mode + layout) % 2;
                    e = run_one(tu_gpu, t, hw, 0, 0, 0, tol_for(mode == 1));
                    if (e == -2) {   /* declined: only per-run sums (mode 2) on the 256-, 64x128 and 192x128 tiles */
                        CHECK(mode == 2 && (cfg == 0 || cfg == 3 || cfg == 5), "cfg %d mode %d layout %d window %d declined", cfg, mode, layout, win);
                        declined++;
                        continue;
                    }
                    CHECK(e >= 0, "cfg %d mode %d layout %d window %d", cfg, mode, layout, win);
                    ran++;
                }
    printf("    %d configuration x mode x layout x window runs (%d declined)\n", ran, declined);
    CHECK(ran == GPUML__CW_NCFG * 3 * 2 * 3 - 18, "%d runs", ran);   /* mode 2 declined on 3 configurations */
}

/* f32 NCHW 1x1 stride-1 convs with x read as it is (gpuml_conv_1x1s), in each of its forms
   (cfg: 1 CUDA cores, 2 tf32 mma.sync with its default ring / pixel tile, 3 and 4 the tf32 form
   with 2 stages x 128 pixels and 6 x 256): K and C off the 64 / 16 tile steps, pixel counts off
   the 128- and 256-pixel tiles (4 to 1008), a C shorter than the ring, batches, every epilogue, against the float64
   reference (outputs poisoned); AUTO takes it for small C * K in f32 and for tf32; Inf / NaN
   inputs give the reference's non-finite outputs; it declines pixel counts that are not a
   multiple of 4, strides, padding and NHWC */
static void simt_1x1(void)
{
    static const int S[][5] = {   /* n c h w k */
        { 2, 64, 8, 16, 64 }, { 3, 37, 9, 12, 70 }, { 1, 16, 1, 4, 1 }, { 2, 200, 28, 36, 130 }, { 1, 5, 3, 4, 9 },
        { 4, 128, 14, 14, 256 }, { 2, 33, 20, 26, 129 },
    };
    int i, m, ran = 0, modes = gpu_ok() ? 4 : 1;
    NEED_GPU();
    for (m = 1; m <= modes; m++)
        for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++) {
            tcase t = tc(S[i][0], S[i][1], S[i][2], S[i][3], S[i][4], 1, 1, 1, 0, 1, 0);
            how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1S, m > 2 ? 2 : m, 0 }, aut = { GPUML_CONV_AUTO, 0, -1, 0 };
            double e;
            t.act = (i + m) % 4; t.bias = (i + m) % 2 == 0; t.res = (i + m) % 3 == 1;
            gpuml__cv_1x1s_cfg[0] = m == 3 ? 2 : m == 4 ? 6 : 0;
            gpuml__cv_1x1s_cfg[1] = m == 3 ? 128 : m == 4 ? 256 : 0;
            e = run_one(tu_gpu, t, hw, i == 3, 0, 0, tol_for(m >= 2));
            CHECK(e >= 0, "mode %d case %d: %s", m, i, e == -2 ? "declined" : "failed");
            if (m == 2) {   /* allow_tf32: AUTO takes the tf32 form */
                t.tf32 = 1;
                e = run_one(tu_gpu, t, aut, 0, 0, 0, tol_for(1));
                CHECK(e >= 0, "case %d AUTO tf32", i);
            } else if (m == 1) {
                e = run_one(tu_gpu, t, aut, 0, 0, 0, 1e-5);   /* AUTO (this kernel where C * K is small) */
                CHECK(e >= 0, "case %d AUTO", i);
            }
            if (i == 1) {   /* Inf and NaN in x, -Inf in w (no activation: exact classes checked) */
                t.act = GPUML_ACT_NONE;
                e = run_one(tu_gpu, t, hw, 0, 0, 1, tol_for(m >= 2));
                CHECK(e >= 0, "mode %d specials", m);
            }
            gpuml__cv_1x1s_cfg[0] = gpuml__cv_1x1s_cfg[1] = 0;
            ran++;
        }
    {   /* declined: 7 x 5 pixels, stride 2, padding, NHWC */
        tcase d[4];
        how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1S, 1, 0 };
        d[0] = tc(1, 8, 7, 5, 8, 1, 1, 1, 0, 1, 0);
        d[1] = tc(1, 8, 8, 8, 8, 1, 1, 2, 0, 1, 0);
        d[2] = tc(1, 8, 8, 8, 8, 1, 1, 1, 1, 1, 0);
        d[3] = tc(1, 8, 8, 8, 8, 1, 1, 1, 0, 0, 0);
        for (m = 1; m <= modes; m++)
            for (i = 0; i < 4; i++) {
                hw.cfg = m > 2 ? 2 : m;
                CHECK(run_one(tu_gpu, d[i], hw, 0, 0, 0, 1e-5) == -2, "mode %d decline %d", m, i);
            }
    }
    printf("    %d shapes x forms\n", ran);
}

/* gpuml_conv_1x1w (sm_90: f32 NCHW 1x1 by tf32 wgmma, x^T's fragments in registers): every tile
   configuration in each of its four forms (w by cp.async or TMA, epilogue from registers or staged
   in shared memory) on shapes with C not a multiple of 32, K not a multiple of any output-channel
   tile, pixel tiles spanning two or more images (PQ 4..56 against tiles of 64 / 128), one image of
   4 pixels, a single output channel, pixel counts not a multiple of 4 (15, 49, 99: one image a
   block with x by bulk copies where w comes by TMA and the image fits the pixel tile, else
   declined; that form also forced on images of 16-byte rows); epilogues rotated (bias, activations, residual); Inf / NaN
   classes; AUTO with allow_tf32 (which takes it); the layouts it declines (C % 4, PQ % 4 with
   C % 32, stride, padding, NHWC) */
#define NC1W ((int)(sizeof gpuml__c1w_cfgs / sizeof gpuml__c1w_cfgs[0]))
static void wgmma_1x1(void)
{
    static const int S[][5] = {   /* n c h w k */
        { 2, 64, 8, 16, 64 }, { 3, 36, 9, 12, 70 }, { 1, 16, 1, 4, 1 }, { 2, 200, 28, 36, 130 }, { 5, 512, 7, 8, 300 },
        { 4, 128, 14, 14, 256 }, { 7, 44, 2, 2, 129 }, { 2, 1024, 6, 6, 65 }, { 33, 8, 1, 4, 260 },
        /* PQ % 4 != 0: one image a block (x by bulk copies), where the pixel tile holds the image
           (99 pixels: the 128-pixel tiles only) and w comes by TMA; declined otherwise */
        { 3, 64, 7, 7, 96 }, { 2, 32, 5, 3, 70 }, { 4, 192, 9, 11, 130 }, { 9, 512, 7, 7, 200 },
    };
    int i, cfg, var, ran = 0, declined = 0;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90");
    for (var = 1; var <= 4; var++)   /* w by cp.async / TMA x epilogue from registers / staged */
    for (cfg = 1; cfg <= NC1W; cfg++)
        for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++) {
            tcase t = tc(S[i][0], S[i][1], S[i][2], S[i][3], S[i][4], 1, 1, 1, 0, 1, 0);
            how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1W, cfg, 0 };
            double e;
            const int pq = S[i][2] * S[i][3], runs = pq % 4 == 0 || (var % 2 == 0 && pq <= 64 * gpuml__c1w_cfgs[cfg - 1][0]);
            t.act = (i + cfg + var) % 4; t.bias = (i + cfg + var) % 2 == 0; t.res = (i + cfg + var) % 3 == 1; t.tf32 = 1;
            gpuml__cv_1x1w_var = var;
            e = run_one(tu_gpu, t, hw, i == 3, 0, 0, tol_for(1));
            if (!runs) {   /* PQ % 4 != 0 without TMA, or an image larger than the pixel tile */
                CHECK(e == -2, "variant %d cfg %d case %d: should decline", var, cfg, i);
                gpuml__cv_1x1w_var = 0;
                declined++;
                continue;
            }
            CHECK(e >= 0, "variant %d cfg %d case %d: %s", var, cfg, i, e == -2 ? "declined" : "failed");
            if (i == 1 || i == 4 || i == 10) {   /* Inf and NaN in x, -Inf in w (no activation: exact classes checked) */
                t.act = GPUML_ACT_NONE;
                e = run_one(tu_gpu, t, hw, 0, 0, 1, tol_for(1));
                CHECK(e >= 0, "variant %d cfg %d specials %d", var, cfg, i);
            }
            gpuml__cv_1x1w_var = 0;
            ran++;
        }
    /* one image a block (x's step by one bulk copy) forced where it can run (C % 32 == 0, PQ <=
       the pixel tile): 16-byte-row images too (56 and 36 pixels), both 64-pixel tiles and a
       128-pixel one (cfg 1: PQ <= 128); without the forcing it is taken for PQ % 4 != 0 (above) */
    for (cfg = 1; cfg <= 5; cfg += 2)
        for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++) {
            tcase t = tc(S[i][0], S[i][1], S[i][2], S[i][3], S[i][4], 1, 1, 1, 0, 1, 0);
            how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1W, cfg, 0 };
            double e;
            if (S[i][1] % 32 || S[i][2] * S[i][3] > (cfg == 1 ? 128 : 64)) continue;
            t.act = (i + cfg) % 4; t.bias = i % 2 == 0; t.res = (i + cfg) % 3 == 1; t.tf32 = 1;
            gpuml__cv_1x1w_img = 1;
            e = run_one(tu_gpu, t, hw, 0, 0, 0, tol_for(1));
            CHECK(e >= 0, "one image a block, cfg %d case %d: %s", cfg, i, e == -2 ? "declined" : "failed");
            gpuml__cv_1x1w_img = 0;
            ran++;
        }
    for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++) {   /* AUTO, allow_tf32 */
        tcase t = tc(S[i][0], S[i][1], S[i][2], S[i][3], S[i][4], 1, 1, 1, 0, 1, 0);
        how aut = { GPUML_CONV_AUTO, 0, -1, 0 };
        t.tf32 = 1; t.bias = i % 2; t.act = i % 4;
        CHECK(run_one(tu_gpu, t, aut, 0, 0, 0, tol_for(1)) >= 0, "case %d AUTO tf32", i);
    }
    {   /* declined: C % 4, PQ % 4 with C % 32 (7 x 5 pixels, 8 channels), stride 2, padding, NHWC */
        tcase d[5];
        how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1W, 1, 0 };
        d[0] = tc(1, 6, 8, 8, 8, 1, 1, 1, 0, 1, 0);
        d[1] = tc(1, 8, 7, 5, 8, 1, 1, 1, 0, 1, 0);
        d[2] = tc(1, 8, 8, 8, 8, 1, 1, 2, 0, 1, 0);
        d[3] = tc(1, 8, 8, 8, 8, 1, 1, 1, 1, 1, 0);
        d[4] = tc(1, 8, 8, 8, 8, 1, 1, 1, 0, 0, 0);
        for (i = 0; i < 5; i++) {
            d[i].tf32 = 1;
            CHECK(run_one(tu_gpu, d[i], hw, 0, 0, 0, 1e-5) == -2, "decline %d", i);
        }
    }
    printf("    %d shapes x configurations x forms, %d declined as they should\n", ran, declined);
}

/* grouped convs fall back under AUTO (and are right); the forced path refuses them, and f32 on
   the CPU or before sm_80, with a message */
static void fallbacks(void)
{
    tcase t = tc(2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 0);
    how aut = { GPUML_CONV_AUTO, 0, -1, 0 };
    t.groups = 2;
    CHECK(run_one(tu_cpu, t, aut, 0, 0, 0, 2e-5) >= 0, "cpu grouped");
    if (tu_gpu) {
        gpuml_tensor *X = mk4(tu_gpu, 2, 8, 9, 9), *W = mk4(tu_gpu, 12, 4, 3, 3), *Y = mk4(tu_gpu, 2, 12, 9, 9);
        gpuml_conv2d_desc d;
        memset(&d, 0, sizeof d);
        d.layout = GPUML_LAYOUT_NCHW; d.groups = 2; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1; d.path = GPUML_CONV_IGEMM;
        CHECK(run_one(tu_gpu, t, aut, 0, 0, 0, 2e-5) >= 0, "gpu grouped");
        t.tf32 = 1;
        CHECK(run_one(tu_gpu, t, aut, 0, 0, 0, 2e-5) >= 0, "gpu grouped, allow_tf32 (the direct kernel: f32)");
        gpuml_rand_uniform(tu_gpu, X, 1, -1, 1);
        gpuml_rand_uniform(tu_gpu, W, 2, -1, 1);
        CHECK_STATUS(tu_gpu, gpuml_conv2d(tu_gpu, Y, X, W, &d), GPUML_ERROR_NOT_SUPPORTED, "implicit-GEMM path");
        gpuml_clear_error(tu_gpu);
        gpuml_tensor_free(X); gpuml_tensor_free(W); gpuml_tensor_free(Y);
    }
    {
        gpuml_tensor *X = mk4(tu_cpu, 1, 4, 5, 5), *W = mk4(tu_cpu, 4, 4, 1, 1), *Y = mk4(tu_cpu, 1, 4, 5, 5);
        gpuml_conv2d_desc d;
        memset(&d, 0, sizeof d);
        d.layout = GPUML_LAYOUT_NCHW; d.path = GPUML_CONV_IGEMM; d.allow_tf32 = 1;
        CHECK_STATUS(tu_cpu, gpuml_conv2d(tu_cpu, Y, X, W, &d), GPUML_ERROR_NOT_SUPPORTED, "GPU kernel");
        gpuml_clear_error(tu_cpu);
        gpuml_tensor_free(X); gpuml_tensor_free(W); gpuml_tensor_free(Y);
    }
}

/* gpuml_conv_1x1w with its tail tiles split in two along the channel steps (each half a block, the
   pair's second finisher adding the first's partial sums through a workspace and the context's pair
   counters): forced on the last 1 / 3 / all tiles of every configuration in three forms (w by
   cp.async, TMA with either epilogue), one image a block, odd channel counts (half steps of unequal
   length, C = 36: 2 steps, C = 8: one, so one half has none), epilogues rotated, Inf / NaN classes;
   the counters carry over from call to call (never reset), so every call after the first checks that
   too; then a shape whose tail the automatic rule splits (sampled check, the split seen taken) */
static void wgmma_1x1_split(void)
{
    static const int S[][5] = {   /* n c h w k */
        { 2, 64, 8, 16, 64 }, { 3, 36, 9, 12, 70 }, { 5, 512, 7, 8, 300 }, { 4, 128, 14, 14, 256 }, { 33, 8, 1, 4, 260 },
        { 3, 96, 7, 7, 96 },
    };
    static const int F[] = { 1, 3, 100000 };
    int i, cfg, var, f, ran = 0;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma kernel needs sm_90");
    for (var = 1; var <= 4; var++) {
        if (var == 3) continue;   /* cp.async w with the staged epilogue: covered by wgmma_1x1 */
        for (cfg = 1; cfg <= NC1W; cfg++)
            for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++)
                for (f = 0; f < 3; f++) {
                    tcase t = tc(S[i][0], S[i][1], S[i][2], S[i][3], S[i][4], 1, 1, 1, 0, 1, 0);
                    how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1W, cfg, 0 };
                    double e;
                    const int pq = S[i][2] * S[i][3];
                    if (pq % 4 && !(var % 2 == 0 && pq <= 64 * gpuml__c1w_cfgs[cfg - 1][0])) continue;   /* declined (wgmma_1x1) */
                    t.act = (i + cfg + f) % 4; t.bias = (i + f) % 2 == 0; t.res = (i + cfg + var) % 3 == 1; t.tf32 = 1;
                    gpuml__cv_1x1w_var = var;
                    gpuml__cv_1x1w_split = F[f];
                    gpuml__cv_1x1w_split_last = -1;
                    e = run_one(tu_gpu, t, hw, 0, 0, 0, tol_for(1));
                    CHECK(e >= 0, "variant %d cfg %d case %d split %d: %s", var, cfg, i, F[f], e == -2 ? "declined" : "failed");
                    CHECK(gpuml__cv_1x1w_split_last >= 1 && gpuml__cv_1x1w_split_last <= F[f], "variant %d cfg %d case %d: split %d taken as %d",
                          var, cfg, i, F[f], gpuml__cv_1x1w_split_last);
                    if (f == 2 && (i == 1 || i == 2)) {   /* Inf and NaN in x, -Inf in w (exact classes checked) */
                        t.act = GPUML_ACT_NONE;
                        e = run_one(tu_gpu, t, hw, 0, 0, 1, tol_for(1));
                        CHECK(e >= 0, "variant %d cfg %d specials %d, split", var, cfg, i);
                    }
                    gpuml__cv_1x1w_var = 0;
                    gpuml__cv_1x1w_split = 0;
                    ran++;
                }
    }
    for (cfg = 1; cfg <= 5; cfg += 2) {   /* one image a block (bulk-copied x), split */
        tcase t = tc(6, 64, 8, 8, 200, 1, 1, 1, 0, 1, 0);
        how hw = { GPUML_CONV_AUTO, GPUML__TEST_1X1W, cfg, 0 };
        t.tf32 = 1; t.bias = 1; t.res = cfg == 3; t.act = GPUML_ACT_GELU;
        gpuml__cv_1x1w_img = 1;
        gpuml__cv_1x1w_split = 5;
        gpuml__cv_1x1w_split_last = -1;
        CHECK(run_one(tu_gpu, t, hw, 0, 0, 0, tol_for(1)) >= 0 && gpuml__cv_1x1w_split_last == 5, "one image a block, cfg %d, split", cfg);
        gpuml__cv_1x1w_img = 0;
        gpuml__cv_1x1w_split = 0;
        ran++;
    }
    {   /* the rule: 128 x 128 tiles (cfg 1) over 300 - 340 pixel tiles of a 128-channel output, 16
           channel steps a tile: the tail past the block slots split when it fills at most half of them */
        int64_t slots = (int64_t)tu_gpu->sm_count * 2, tiles = slots + slots / 4;
        int n = (int)((tiles * 128 - 64 + 195) / 196);
        tcase t = tc(n, 512, 14, 14, 128, 1, 1, 1, 0, 1, 0);
        how aut = { GPUML_CONV_AUTO, 0, -1, 0 };
        t.tf32 = 1; t.bias = 1; t.act = GPUML_ACT_RELU;
        gpuml__cv_1x1w_split_last = -1;
        CHECK(run_one(tu_gpu, t, aut, 0, 30000, 0, tol_for(1)) >= 0, "AUTO with a split tail (n = %d)", n);
        CHECK(gpuml__cv_1x1w_split_last > 0, "AUTO: the tail of %lld tiles on %lld slots not split (%d)", (long long)((n * 196 + 127) / 128),
              (long long)slots, gpuml__cv_1x1w_split_last);
        ran++;
    }
    printf("    %d shapes x configurations x forms x splits\n", ran);
}

int main(int argc, char **argv)
{
    static const tu_test tests[] = {
        { "shapes_cpu", shapes_cpu },
        { "shapes_gpu_forced", shapes_gpu_forced },
        { "shapes_gpu_auto", shapes_gpu_auto }, { "shapes_gpu_gemm", shapes_gpu_gemm },
        { "every_cfg", every_cfg },
        { "shapes_gpu_wgmma", shapes_gpu_wgmma },
        { "every_cfg_wgmma", every_cfg_wgmma },
        { "specials", specials },
        { "resnet_accuracy", resnet_accuracy },
        { "fallbacks", fallbacks },
        { "simt_1x1", simt_1x1 },
        { "wgmma_1x1", wgmma_1x1 }, { "wgmma_1x1_split", wgmma_1x1_split },
    };
    return TU_RUN("test_conv_tf32", tests, argc, argv);
}
