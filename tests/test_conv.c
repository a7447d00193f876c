/* Tests of gpuml_conv2d, its backward passes, gpuml_conv1d and gpuml_pool2d: a float64 direct
   reference on fresh random inputs, fuzzed small shapes over stride / asymmetric padding /
   dilation / groups (depthwise included) / both layouts / every dtype / epilogues, on the CPU
   and (where present) the GPU through every forced path; real ResNet-50 layer shapes (checked
   at sampled outputs); backward passes against the reference and by finite differences;
   pooling; bad parameters. */
#define GPUML_IMPLEMENTATION
/* small im2col chunks (CPU: 64 rows for most shapes here; GPU: about one image), so that the
   chunked loops run */
#define GPUML__CV_CPU_COL 4096
/* CPU forward, NCHW with N > 1: one image per chunk from 16 output pixels up (both sides of it
   occur in the fuzzed shapes) */
#define GPUML__CV_CPU_IMG 16
#define GPUML__CV_GPU_COL ((int64_t)1 << 14)
#include "harness.h"

static const gpuml_dtype FDT[3] = { GPUML_F32, GPUML_F16, GPUML_BF16 };
/* relative to the sum of |terms| of each output (the rounding error's scale) */
static double tol_of(gpuml_dtype d) { return d == GPUML_F32 ? 2e-5 : d == GPUML_F16 ? 2e-3 : 1.2e-2; }
static int nctx(void) { return tu_gpu ? 2 : 1; }
static gpuml_ctx *ctx_at(int i) { return i == 0 ? tu_cpu : tu_gpu; }
static const char *cname(int i) { return i == 0 ? "cpu" : "gpu"; }
static int irand(int lo, int hi) { return lo + (int)((tu_rand() + 1.0) * 0.5 * (hi - lo + 1)) % (hi - lo + 1); }

static double round_to(gpuml_dtype d, double v)
{
    unsigned char b[4];
    gpuml__st_f32(d, b, (float)v);
    return gpuml__ld_f32(d, b);
}
static void t_write(gpuml_tensor *t, const double *v)
{
    long long n = gpuml_tensor_numel(t), i;
    gpuml_dtype d = gpuml_tensor_dtype(t);
    size_t es = gpuml_dtype_size(d);
    unsigned char *buf = (unsigned char *)calloc((size_t)n * es + 1, 1);
    for (i = 0; i < n; i++) gpuml__st_f32(d, buf + (size_t)i * es, (float)v[i]);
    CHECK(gpuml_tensor_write(t, buf, (size_t)n * es) == GPUML_SUCCESS, "write: %s", gpuml_last_error(gpuml_tensor_ctx(t)));
    free(buf);
}
static double *t_read(const gpuml_tensor *t)
{
    long long n = gpuml_tensor_numel(t), i;
    gpuml_dtype d = gpuml_tensor_dtype(t);
    size_t es = gpuml_dtype_size(d);
    unsigned char *buf = (unsigned char *)malloc((size_t)n * es + 1);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    CHECK(gpuml_tensor_read(t, buf, (size_t)n * es) == GPUML_SUCCESS, "read: %s", gpuml_last_error(gpuml_tensor_ctx(t)));
    for (i = 0; i < n; i++) v[i] = gpuml__ld_f32(d, buf + (size_t)i * es);
    free(buf);
    return v;
}
/* fresh random values in [-1, 1), never zero, rounded to the dtype */
static double *t_rand(gpuml_tensor *t)
{
    long long n = gpuml_tensor_numel(t), i;
    double *v = (double *)malloc(sizeof(double) * (size_t)(n + 1));
    for (i = 0; i < n; i++) {
        double x = tu_rand();
        if (x == 0.0) x = 0.125;
        v[i] = round_to(gpuml_tensor_dtype(t), x);
    }
    t_write(t, v);
    return v;
}
static void poison(gpuml_ctx *ctx, gpuml_tensor *t)
{
    CHECK(gpuml_fill(ctx, t, NAN) == GPUML_SUCCESS, "fill: %s", gpuml_last_error(ctx));
}

/* ---- the problem and its float64 reference ---- */
typedef struct cv_case {
    int n, c, h, w, k, r, s, sh, sw, pad[4], dh, dw, groups, layout, act, bias, res;
    gpuml_dtype dt;
    int p, q;
} cv_case;
static int cv_out(cv_case *c)
{
    c->p = (int)gpuml_conv2d_out_dim(c->h, c->r, c->sh, c->pad[0], c->pad[1], c->dh);
    c->q = (int)gpuml_conv2d_out_dim(c->w, c->s, c->sw, c->pad[2], c->pad[3], c->dw);
    return c->p > 0 && c->q > 0;
}
/* physical indices: activations NHWC or NCHW, weights KRSC or KCRS */
static long long ai(const cv_case *c, int C, int H, int W, int n, int h, int w, int ch)
{
    return c->layout ? (((long long)n * C + ch) * H + h) * W + w : (((long long)n * H + h) * W + w) * C + ch;
}
static long long wi(const cv_case *c, int k, int r, int s, int ch)
{
    int cg = c->c / c->groups;
    return c->layout ? (((long long)k * cg + ch) * c->r + r) * c->s + s : (((long long)k * c->r + r) * c->s + s) * cg + ch;
}
static void shape_act(const cv_case *c, int C, int H, int W, int64_t *s)
{
    s[0] = c->n;
    if (c->layout) { s[1] = C; s[2] = H; s[3] = W; } else { s[1] = H; s[2] = W; s[3] = C; }
}
static void shape_w(const cv_case *c, int64_t *s)
{
    s[0] = c->k;
    if (c->layout) { s[1] = c->c / c->groups; s[2] = c->r; s[3] = c->s; } else { s[1] = c->r; s[2] = c->s; s[3] = c->c / c->groups; }
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
/* y[n,p,q,k] before the epilogue, and the sum of |terms| */
static double ref_y(const cv_case *c, const double *x, const double *w, int n, int p, int q, int k, double *abs_sum)
{
    int cg = c->c / c->groups, kg = c->k / c->groups, g = k / kg, r, s, ch;
    double acc = 0, a = 0;
    for (r = 0; r < c->r; r++)
        for (s = 0; s < c->s; s++) {
            int h = p * c->sh - c->pad[0] + r * c->dh, ww = q * c->sw - c->pad[2] + s * c->dw;
            if (h < 0 || h >= c->h || ww < 0 || ww >= c->w) continue;
            for (ch = 0; ch < cg; ch++) {
                double t = x[ai(c, c->c, c->h, c->w, n, h, ww, g * cg + ch)] * w[wi(c, k, r, s, ch)];
                acc += t; a += fabs(t);
            }
        }
    *abs_sum = a;
    return acc;
}
static double ref_dx(const cv_case *c, const double *dy, const double *w, int n, int h, int ww, int ch, double *abs_sum)
{
    int cg = c->c / c->groups, kg = c->k / c->groups, g = ch / cg, r, s, k;
    double acc = 0, a = 0;
    for (r = 0; r < c->r; r++)
        for (s = 0; s < c->s; s++) {
            int ht = h + c->pad[0] - r * c->dh, wt = ww + c->pad[2] - s * c->dw, p, q;
            if (ht < 0 || wt < 0 || ht % c->sh || wt % c->sw) continue;
            p = ht / c->sh; q = wt / c->sw;
            if (p >= c->p || q >= c->q) continue;
            for (k = g * kg; k < (g + 1) * kg; k++) {
                double t = dy[ai(c, c->k, c->p, c->q, n, p, q, k)] * w[wi(c, k, r, s, ch - g * cg)];
                acc += t; a += fabs(t);
            }
        }
    *abs_sum = a;
    return acc;
}
static double ref_dw(const cv_case *c, const double *x, const double *dy, int k, int r, int s, int ch, double *abs_sum)
{
    int cg = c->c / c->groups, kg = c->k / c->groups, g = k / kg, n, p, q;
    double acc = 0, a = 0;
    for (n = 0; n < c->n; n++)
        for (p = 0; p < c->p; p++)
            for (q = 0; q < c->q; q++) {
                int h = p * c->sh - c->pad[0] + r * c->dh, ww = q * c->sw - c->pad[2] + s * c->dw;
                double t;
                if (h < 0 || h >= c->h || ww < 0 || ww >= c->w) continue;
                t = x[ai(c, c->c, c->h, c->w, n, h, ww, g * cg + ch)] * dy[ai(c, c->k, c->p, c->q, n, p, q, k)];
                acc += t; a += fabs(t);
            }
    *abs_sum = a;
    return acc;
}
static gpuml_conv2d_desc cv_desc(const cv_case *c, gpuml_conv_path path)
{
    gpuml_conv2d_desc d;
    memset(&d, 0, sizeof d);
    d.stride[0] = c->sh; d.stride[1] = c->sw;
    memcpy(d.pad, c->pad, sizeof d.pad);
    d.dilation[0] = c->dh; d.dilation[1] = c->dw;
    d.groups = c->groups;
    d.layout = (gpuml_layout)c->layout;
    d.act = (gpuml_activation)c->act;
    d.path = path;
    return d;
}
static void cv_name(const cv_case *c, char *buf, size_t cap, const char *what, const char *ctx, int path)
{
    snprintf(buf, cap, "%s %s path %d %s %s n%d c%d %dx%d k%d %dx%d stride %d,%d pad %d,%d,%d,%d dil %d,%d g%d act%d b%d r%d", what, ctx,
             path, gpuml_dtype_name(c->dt), c->layout ? "NCHW" : "NHWC", c->n, c->c, c->h, c->w, c->k, c->r, c->s, c->sh, c->sw, c->pad[0],
             c->pad[1], c->pad[2], c->pad[3], c->dh, c->dw, c->groups, c->act, c->bias, c->res);
}
/* the fraction of outputs to check (1 = all); returns 1 when it ran (0: path not supported) */
static int run_fwd(gpuml_ctx *ctx, const char *cn, const cv_case *c, gpuml_conv_path path, int sample)
{
    int64_t xs[4], wsh[4], ysh[4], bs[1];
    gpuml_tensor *x, *w, *y, *bias = NULL, *res = NULL;
    double *xv, *wv, *bv = NULL, *rv = NULL, *got, *ref, *tol;
    long long ny, i, m = 0;
    gpuml_conv2d_desc d = cv_desc(c, path);
    gpuml_status st;
    char name[400];
    int ran = 1;
    shape_act(c, c->c, c->h, c->w, xs); shape_w(c, wsh); shape_act(c, c->k, c->p, c->q, ysh);
    x = gpuml_tensor_new(ctx, c->dt, 4, xs); w = gpuml_tensor_new(ctx, c->dt, 4, wsh); y = gpuml_tensor_new(ctx, c->dt, 4, ysh);
    xv = t_rand(x); wv = t_rand(w);
    if (c->bias) { bs[0] = c->k; bias = gpuml_tensor_new(ctx, GPUML_F32, 1, bs); bv = t_rand(bias); d.bias = bias; }
    if (c->res) { res = gpuml_tensor_new(ctx, c->dt, 4, ysh); rv = t_rand(res); d.residual = res; }
    poison(ctx, y);
    st = gpuml_conv2d(ctx, y, x, w, &d);
    cv_name(c, name, sizeof name, "conv2d", cn, (int)path);
    if ((path == GPUML_CONV_IGEMM || path == GPUML_CONV_WGMMA) && st == GPUML_ERROR_NOT_SUPPORTED) {
        /* the implicit-GEMM kernel takes every f16/bf16 NHWC problem with groups 1 on sm_80+
           (tensors here are contiguous), the wgmma one those with C % 64 == 0 on sm_90;
           refusing one of those is a failure */
        int eligible = c->dt != GPUML_F32 && c->groups == 1 && c->layout == GPUML_LAYOUT_NHWC && gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA &&
                       (path == GPUML_CONV_IGEMM ? gpuml_device_arch(ctx) >= 80 : gpuml_device_arch(ctx) == 90 && c->c % 64 == 0);
        CHECK(!eligible, "%s: the implicit-GEMM path refused an eligible problem: %s", name, gpuml_last_error(ctx));
        ran = 0;
    } else {
        CHECK(st == GPUML_SUCCESS, "%s: %s", name, gpuml_last_error(ctx));
        got = t_read(y);
        ny = gpuml_tensor_numel(y);
        ref = (double *)malloc(sizeof(double) * (size_t)ny);
        tol = (double *)malloc(sizeof(double) * (size_t)ny);
        for (i = 0; i < ny; i++) {
            /* physical index -> (n, p, q, k) */
            long long t = i;
            int n, p, q, k;
            double a, v;
            if (sample > 1 && (i * 7919) % sample) continue;
            if (c->layout) { q = (int)(t % c->q); t /= c->q; p = (int)(t % c->p); t /= c->p; k = (int)(t % c->k); n = (int)(t / c->k); }
            else { k = (int)(t % c->k); t /= c->k; q = (int)(t % c->q); t /= c->q; p = (int)(t % c->p); n = (int)(t / c->p); }
            v = ref_y(c, xv, wv, n, p, q, k, &a);
            if (bv) { v += bv[k]; a += fabs(bv[k]); }
            v = act_ref(c->act, v);
            if (rv) { v += rv[i]; a += fabs(rv[i]); }
            ref[m] = v; tol[m] = got[i];
            if (fabs(got[i] - v) > tol_of(c->dt) * (a + fabs(v)) + 1e-6 || got[i] != got[i]) {
                char buf[600];
                snprintf(buf, sizeof buf, "%s (at %lld)", name, i);
                tu_close(buf, &got[i], &v, 1, 0, tol_of(c->dt) * (a + fabs(v)) + 1e-6);
                break;
            }
            m++;
        }
        free(got); free(ref); free(tol);
    }
    free(xv); free(wv); free(bv); free(rv);
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(bias); gpuml_tensor_free(res);
    return ran;
}
/* run_bwd: allow_tf32 on both passes, with tf32's tolerance (2e-3 of the sum of |terms|) for f32 */
static int bwd_tf32;
/* backward data and filter against the reference */
static void run_bwd(gpuml_ctx *ctx, const char *cn, const cv_case *c, gpuml_conv_path path, int sample)
{
    int64_t xs[4], wsh[4], ysh[4];
    gpuml_tensor *x, *w, *dy, *dx, *dw;
    double *xv, *wv, *dyv, *got;
    long long i, nx, nw;
    gpuml_conv2d_desc d = cv_desc(c, path);
    gpuml_status st;
    char name[400];
    int cg = c->c / c->groups;
    double tol = bwd_tf32 && c->dt == GPUML_F32 ? 2e-3 : tol_of(c->dt);
    d.act = GPUML_ACT_NONE;
    d.allow_tf32 = bwd_tf32;
    shape_act(c, c->c, c->h, c->w, xs); shape_w(c, wsh); shape_act(c, c->k, c->p, c->q, ysh);
    x = gpuml_tensor_new(ctx, c->dt, 4, xs); w = gpuml_tensor_new(ctx, c->dt, 4, wsh); dy = gpuml_tensor_new(ctx, c->dt, 4, ysh);
    dx = gpuml_tensor_new(ctx, c->dt, 4, xs); dw = gpuml_tensor_new(ctx, c->dt, 4, wsh);
    xv = t_rand(x); wv = t_rand(w); dyv = t_rand(dy);
    poison(ctx, dx); poison(ctx, dw);
    cv_name(c, name, sizeof name, "backward_data", cn, (int)path);
    st = gpuml_conv2d_backward_data(ctx, dx, dy, w, &d);
    CHECK(st == GPUML_SUCCESS, "%s: %s", name, gpuml_last_error(ctx));
    got = t_read(dx);
    nx = gpuml_tensor_numel(dx);
    for (i = 0; i < nx; i++) {
        long long t = i;
        int n, h, ww, ch;
        double a, v;
        if (sample > 1 && (i * 7919) % sample) continue;
        if (c->layout) { ww = (int)(t % c->w); t /= c->w; h = (int)(t % c->h); t /= c->h; ch = (int)(t % c->c); n = (int)(t / c->c); }
        else { ch = (int)(t % c->c); t /= c->c; ww = (int)(t % c->w); t /= c->w; h = (int)(t % c->h); n = (int)(t / c->h); }
        v = ref_dx(c, dyv, wv, n, h, ww, ch, &a);
        if (!(fabs(got[i] - v) <= tol * (a + fabs(v)) + 1e-6)) {
            char buf[600];
            snprintf(buf, sizeof buf, "%s (at %lld)", name, i);
            tu_close(buf, &got[i], &v, 1, 0, tol * (a + fabs(v)) + 1e-6);
            break;
        }
    }
    free(got);
    cv_name(c, name, sizeof name, "backward_filter", cn, (int)path);
    st = gpuml_conv2d_backward_filter(ctx, dw, x, dy, &d);
    CHECK(st == GPUML_SUCCESS, "%s: %s", name, gpuml_last_error(ctx));
    got = t_read(dw);
    nw = gpuml_tensor_numel(dw);
    for (i = 0; i < nw; i++) {
        long long t = i;
        int k, r, s, ch;
        double a, v;
        if (sample > 1 && (i * 7919) % sample) continue;
        if (c->layout) { s = (int)(t % c->s); t /= c->s; r = (int)(t % c->r); t /= c->r; ch = (int)(t % cg); k = (int)(t / cg); }
        else { ch = (int)(t % cg); t /= cg; s = (int)(t % c->s); t /= c->s; r = (int)(t % c->r); k = (int)(t / c->r); }
        v = ref_dw(c, xv, dyv, k, r, s, ch, &a);
        if (!(fabs(got[i] - v) <= tol * (a + fabs(v)) + 1e-6)) {
            char buf[600];
            snprintf(buf, sizeof buf, "%s (at %lld)", name, i);
            tu_close(buf, &got[i], &v, 1, 0, tol * (a + fabs(v)) + 1e-6);
            break;
        }
    }
    free(got);
    free(xv); free(wv); free(dyv);
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(dy); gpuml_tensor_free(dx); gpuml_tensor_free(dw);
}
/* a random small problem with a non-empty output */
static cv_case random_case(int i)
{
    cv_case c;
    for (;;) {
        int gk, gc, j;
        memset(&c, 0, sizeof c);
        c.n = irand(1, 3); c.h = irand(1, 9); c.w = irand(1, 9); c.r = irand(1, 3); c.s = irand(1, 3);
        c.sh = irand(1, 3); c.sw = irand(1, 3); c.dh = irand(1, 2); c.dw = irand(1, 2);
        for (j = 0; j < 4; j++) c.pad[j] = irand(0, 2);
        switch (irand(0, 3)) {
        case 0: c.groups = 1; break;
        case 1: c.groups = irand(2, 3); break;
        default: c.groups = irand(1, 6); break;
        }
        gc = irand(1, 4); gk = irand(1, 3);
        if (i % 5 == 0) { gc = 1; gk = 1; c.groups = irand(2, 9); }   /* depthwise */
        c.c = c.groups * gc; c.k = c.groups * gk;
        c.layout = i & 1;
        c.dt = FDT[(i / 2) % 3];
        {   /* four epilogues (each one JIT specialization per dtype on the GPU) */
            static const int epi[4][3] = { { 0, 0, 0 }, { 1, 1, 0 }, { 2, 1, 1 }, { 3, 0, 1 } };
            j = irand(0, 3);
            c.act = epi[j][0]; c.bias = epi[j][1]; c.res = epi[j][2];
        }
        if (cv_out(&c)) return c;
    }
}

/* ---------------------------------------------------------------- tests ---- */
static void test_fuzz_forward(void)
{
    int i, ci;
    for (ci = 0; ci < nctx(); ci++)
        for (i = 0; i < 60; i++) {
            cv_case c = random_case(i);
            if (ci == 0) run_fwd(tu_cpu, "cpu", &c, i % 3 == 0 ? GPUML_CONV_GEMM : GPUML_CONV_AUTO, 1);
            else {
                int path;
                for (path = 0; path <= 3; path++) run_fwd(tu_gpu, "gpu", &c, (gpuml_conv_path)path, 1);
            }
        }
}
static void test_fuzz_backward(void)
{
    int i, ci;
    for (ci = 0; ci < nctx(); ci++)
        for (i = 0; i < 40; i++) {
            cv_case c = random_case(i + 1000);
            c.bias = c.res = 0; c.act = 0;
            if (ci == 0) {
                run_bwd(tu_cpu, "cpu", &c, GPUML_CONV_AUTO, 1);
                /* the column route with the scatter col2im in bands of 1-3 output rows; the gather col2im
                   and the im2col backward filter */
                gpuml__cv_cpu_bwd_col = 1;
                gpuml__cv_cpu_band_rows = 1 + i % 3;
                run_bwd(tu_cpu, "cpu column route, bands", &c, GPUML_CONV_AUTO, 1);
                gpuml__cv_cpu_band_rows = 0;
                gpuml__cv_cpu_bwd_gather = gpuml__cv_cpu_bwf_col = 1;
                run_bwd(tu_cpu, "cpu column route, gather, im2col", &c, GPUML_CONV_AUTO, 1);
                gpuml__cv_cpu_bwd_col = gpuml__cv_cpu_bwd_gather = gpuml__cv_cpu_bwf_col = 0;
            } else {
                run_bwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1); run_bwd(tu_gpu, "gpu", &c, GPUML_CONV_DIRECT, 1); run_bwd(tu_gpu, "gpu", &c, GPUML_CONV_GEMM, 1);
                /* the routes before the forward-conv backward data and the tensor-core backward filter */
                gpuml__cv_bwd_old = 1;
                run_bwd(tu_gpu, "gpu-old", &c, GPUML_CONV_AUTO, 1); run_bwd(tu_gpu, "gpu-old", &c, GPUML_CONV_GEMM, 1);
                gpuml__cv_bwd_old = 2;   /* the sliced mma.sync backward filter (Hopper takes one split-K GEMM) */
                run_bwd(tu_gpu, "gpu-slices", &c, GPUML_CONV_AUTO, 1);
                gpuml__cv_bwd_old = 0;
                if (c.sh * c.sw > 1) {   /* strided: the zero-upsampled route, which the phase route replaced */
                    gpuml__cv_bwd_sub_on = -1;
                    run_bwd(tu_gpu, "gpu-upsampled", &c, GPUML_CONV_AUTO, 1);
                    gpuml__cv_bwd_sub_on = 0;
                }
            }
        }
}
/* backward passes at layer sizes (GPU): stride 1 and 2, 1x1 and 3x3, every dtype and layout;
   the new backward data routes must take the stride-1 ones, the strided 1x1 ones and the
   other stride-2 ones on sm_80+, the tensor-core backward filter every f16/bf16 one on sm_80+ */
static void test_backward_layers(void)
{
    static const int L[][5] = {   /* c, h, k, r, stride (pad r / 2) */
        { 64, 14, 64, 3, 1 }, { 128, 9, 64, 1, 1 }, { 64, 11, 128, 3, 2 }, { 96, 8, 32, 1, 2 }, { 32, 7, 320, 3, 1 },
    };
    int l, di;
    NEED_GPU();
    for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++)
        for (di = 0; di < 3; di++) {
            int lay;
            for (lay = 0; lay < 2; lay++) {
                cv_case c;
                long before[3];
                memset(&c, 0, sizeof c);
                c.n = 3; c.c = L[l][0]; c.h = c.w = L[l][1]; c.k = L[l][2]; c.r = c.s = L[l][3]; c.sh = c.sw = L[l][4];
                c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = L[l][3] / 2; c.dh = c.dw = 1; c.groups = 1;
                c.dt = FDT[di]; c.layout = lay;
                cv_out(&c);
                before[0] = gpuml__cv_bwd_calls[0] + gpuml__cv_bwd_sub_calls; before[1] = gpuml__cv_bwd_calls[1]; before[2] = gpuml__cv_bwd_calls[2];
                run_bwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 7);
                if (lay == 0 && c.dt != GPUML_F32) {   /* the sliced route at layer sizes too */
                    gpuml__cv_bwd_old = 2;
                    run_bwd(tu_gpu, "gpu-slices", &c, GPUML_CONV_AUTO, 7);
                    gpuml__cv_bwd_old = 0;
                }
                /* stride 1: the forward conv; strided 1x1: GEMM (NHWC) or 1x1 forward conv (NCHW) + scatter; other stride 2: a
                   forward conv per output phase on sm_80+ */
                CHECK((gpuml__cv_bwd_calls[0] + gpuml__cv_bwd_sub_calls > before[0]) == (c.sh == 1 || c.r == 1 || gpuml_device_arch(tu_gpu) >= 80),
                      "layer %d dtype %d layout %d: forward-conv backward data ran %ld times",
                      l, di, lay, gpuml__cv_bwd_calls[0] + gpuml__cv_bwd_sub_calls - before[0]);
                if (gpuml_device_arch(tu_gpu) >= 80)   /* the sliced / one-GEMM route or the Hopper implicit GEMM */
                    CHECK((gpuml__cv_bwd_calls[1] + gpuml__cv_bwd_calls[2] > before[1] + before[2]) == (c.dt != GPUML_F32),
                          "layer %d dtype %d layout %d: tensor-core backward filter ran %ld times", l, di, lay,
                          gpuml__cv_bwd_calls[1] + gpuml__cv_bwd_calls[2] - before[1] - before[2]);
            }
        }
}
/* the Hopper implicit-GEMM backward filter (gpuml_conv_bwf_sm90): both tile shapes (K <= 64: 64 x 256;
   K > 64: 128 x 128), K not a multiple of 64 (rows of a tile past K), R*S*C not a multiple of the tile
   (column blocks past it), N*P*Q not a multiple of 64, stride 2, asymmetric padding, dilation, 1x1,
   split and unsplit pixel ranges; and the shapes it must decline (C % 64, K % 8, NCHW, groups) */
static void test_bwf_sm90(void)
{
    static const int L[][11] = {   /* n, c, h, k, r, stride, pad t, b, l, r, dilation */
        { 3, 64, 14, 64, 3, 1, 1, 1, 1, 1, 1 },   { 2, 128, 9, 72, 1, 1, 0, 0, 0, 0, 1 },   { 2, 64, 11, 200, 3, 2, 1, 1, 1, 1, 1 },
        { 1, 192, 7, 32, 3, 1, 0, 2, 1, 0, 2 },   { 2, 64, 56, 64, 3, 1, 1, 1, 1, 1, 1 },   { 4, 256, 8, 128, 1, 2, 0, 0, 0, 0, 1 },
        { 1, 64, 5, 8, 5, 1, 2, 2, 2, 2, 1 },     { 2, 128, 28, 16, 3, 2, 0, 1, 0, 1, 1 },  { 1, 64, 3, 136, 3, 1, 1, 1, 1, 1, 1 },
        { 2, 128, 56, 64, 1, 1, 0, 0, 0, 0, 1 },  /* one tile, ~25 slices: the reduce's 4-warp groups */
        { 1, 512, 9, 512, 3, 1, 1, 1, 1, 1, 1 },  /* 144 tiles, unsplit: CTAs that take two units (ring phases run on) */
        /* declined: C % 64, K % 8, groups 2 */
        { 2, 96, 9, 64, 3, 1, 1, 1, 1, 1, 1 },    { 2, 64, 9, 36, 3, 1, 1, 1, 1, 1, 1 },    { 2, 128, 9, 64, 3, 1, 1, 1, 1, 1, 1 },
    };
    int l, di, lay;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the implicit-GEMM backward filter is Hopper-only (device sm_%d)", gpuml_device_arch(tu_gpu));
    for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++)
        for (di = 1; di < 3; di++)
            for (lay = 0; lay < 2; lay++) {
                cv_case c;
                long before;
                int want;
                memset(&c, 0, sizeof c);
                c.n = L[l][0]; c.c = L[l][1]; c.h = c.w = L[l][2]; c.k = L[l][3]; c.r = c.s = L[l][4]; c.sh = c.sw = L[l][5];
                c.pad[0] = L[l][6]; c.pad[1] = L[l][7]; c.pad[2] = L[l][8]; c.pad[3] = L[l][9]; c.dh = c.dw = L[l][10];
                c.groups = l == 13 ? 2 : 1;
                c.dt = FDT[di]; c.layout = lay;
                CHECK(cv_out(&c), "case %d has no output", l);
                want = l < 11 && lay == GPUML_LAYOUT_NHWC;
                before = gpuml__cv_bwd_calls[2];
                run_bwd(tu_gpu, "gpu-bwf-sm90", &c, GPUML_CONV_AUTO, l == 4 ? 5 : 1);
                CHECK((gpuml__cv_bwd_calls[2] > before) == want, "case %d dtype %d layout %d: the implicit-GEMM backward filter ran %ld times (want %s)",
                      l, di, lay, gpuml__cv_bwd_calls[2] - before, want ? "> 0" : "0");
                if (want && l % 2 == 0) {   /* through the f32 buffer + cast (dw not contiguous KRSC) */
                    before = gpuml__cv_bwd_calls[2];
                    gpuml__cv_bwf_sm90_off = 2;
                    run_bwd(tu_gpu, "gpu-bwf-sm90-acc", &c, GPUML_CONV_AUTO, l == 4 ? 5 : 1);
                    gpuml__cv_bwf_sm90_off = 0;
                    CHECK(gpuml__cv_bwd_calls[2] > before, "case %d dtype %d: the implicit-GEMM backward filter into the f32 buffer did not run", l, di);
                }
            }
}
/* the f32 backward filter as a forward conv of x's and dy's channel planes (gpuml__cv_bwf_conv, sm_90):
   3xTF32 and tf32, both layouts, odd C / K / N, N that pads to the wgmma kernel's 32 channels and N
   that sends it to the mma.sync kernel (few channels), stride with trailing rows the conv never reads,
   asymmetric padding, dilation (the swapped conv's stride), 1x1 with one output tile and many k
   slices, a C = 3 7x7 stride-2 stem, strided 1x1 (x read subsampled) with outputs over padding,
   1x1 stride 1 with odd sizes;
   forced below the size threshold, and the route must run */
/* an f32 groups-1 case from a row n, c, h, w, k, r, s, sh, sw, pad t, b, l, r, dh, dw */
static cv_case bwf_case(const int *v, int layout)
{
    cv_case c;
    memset(&c, 0, sizeof c);
    c.n = v[0]; c.c = v[1]; c.h = v[2]; c.w = v[3]; c.k = v[4]; c.r = v[5]; c.s = v[6];
    c.sh = v[7]; c.sw = v[8]; c.pad[0] = v[9]; c.pad[1] = v[10]; c.pad[2] = v[11]; c.pad[3] = v[12];
    c.dh = v[13]; c.dw = v[14]; c.groups = 1; c.dt = GPUML_F32; c.layout = layout;
    return c;
}
static void test_bwf_conv(void)
{
    static const int L[][15] = {   /* n, c, h, w, k, r, s, sh, sw, pad t, b, l, r, dh, dw */
        { 3, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },   { 2, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
        { 4, 17, 13, 10, 9, 3, 2, 2, 1, 1, 0, 0, 2, 1, 2 },    { 3, 16, 12, 12, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1 },
        { 2, 8, 15, 15, 8, 5, 5, 1, 1, 2, 2, 2, 2, 2, 2 },     { 1, 3, 32, 32, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1 },
        { 40, 16, 9, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },    { 32, 24, 8, 9, 72, 3, 3, 2, 2, 1, 0, 1, 0, 1, 1 },
        { 32, 64, 28, 28, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1 },  { 6, 130, 11, 7, 136, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1 },
        /* strided 1x1 (x subsampled): outputs over the bottom padding (row 8 of 8), none over the right */
        { 2, 8, 8, 7, 12, 1, 1, 2, 2, 0, 1, 0, 1, 1, 1 },      { 32, 40, 14, 14, 72, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1 },
        /* 1x1 stride 1 with odd sizes */
        { 3, 17, 9, 7, 11, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1 },
    };
    int l, lay, tf;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the f32 backward filter as a forward conv is taken on sm_90 only (device sm_%d)", gpuml_device_arch(tu_gpu));
    gpuml__cv_bwf_conv_on = 1;
    gpuml__cv_bwf1x1_on = -1;   /* the 1x1 cases here are this route's, not gpuml_conv_bwf1x1's */
    gpuml__cv_bwf1x1w_on = -1;
    for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++)
        for (lay = 0; lay < 2; lay++)
            for (tf = 0; tf < 2; tf++) {
                cv_case c;
                long before = gpuml__cv_bwd_calls[3];
                c = bwf_case(L[l], lay);
                CHECK(cv_out(&c), "case %d has no output", l);
                bwd_tf32 = tf;
                run_bwd(tu_gpu, tf ? "gpu-bwf-conv-tf32" : "gpu-bwf-conv", &c, GPUML_CONV_AUTO, l == 8 ? 3 : 1);
                bwd_tf32 = 0;
                CHECK(gpuml__cv_bwd_calls[3] > before, "case %d layout %d tf32 %d: the forward-conv backward filter did not run", l, lay, tf);
            }
    /* switched off: the previous route, same answers */
    gpuml__cv_bwf_conv_on = -1;
    for (l = 0; l < 2; l++) {
        cv_case c;
        long before = gpuml__cv_bwd_calls[3];
        c = bwf_case(L[l], l);
        cv_out(&c);
        run_bwd(tu_gpu, "gpu-bwf-gemm", &c, GPUML_CONV_AUTO, 1);
        CHECK(gpuml__cv_bwd_calls[3] == before, "case %d: the forward-conv backward filter ran while switched off", l);
    }
    gpuml__cv_bwf_conv_on = 0;
    gpuml__cv_bwf1x1_on = 0;
    gpuml__cv_bwf1x1w_on = 0;
}
/* the 1x1 backward filter's shapes (n, c, h, w, k), for bwf_1x1 and bwf_1x1_wgmma: odd N / C / K /
   H / W, pixel counts off the 32-pixel step and below one step, several k and c tiles, one run or
   split and many, a layer-sized case (index 5: sampled), 35-pixel images (index 6) */
static const int bwf1x1_shapes[][5] = {
    { 3, 17, 9, 4, 11 }, { 2, 130, 5, 12, 72 }, { 5, 8, 2, 2, 9 }, { 1, 200, 16, 16, 300 }, { 4, 256, 14, 14, 128 },
    { 32, 64, 28, 28, 64 }, { 2, 16, 5, 7, 24 }, { 3, 20, 7, 5, 12 }, { 2, 132, 3, 3, 68 }, { 7, 36, 9, 9, 40 },
};
#define BWF1X1_SHAPES ((int)(sizeof bwf1x1_shapes / sizeof bwf1x1_shapes[0]))
/* the f32 1x1 stride-1 backward filter reading x and dy as they are (gpuml_conv_bwf1x1), tf32 and
   3xTF32 (f32's tolerance), both flavours: NCHW (PQ % 4 == 0) and NHWC (C and K multiples of 4);
   odd N / C / K / H / W, pixel counts not a multiple of the 32-pixel step, fewer pixels than a
   step, several k and c tiles, one run and many, a layer-sized case (sampled); the route must run
   where its preconditions hold and decline the rest (35-pixel NCHW images, NHWC channels not a
   multiple of 4), whose answers come from the other routes, checked the same way */
static void test_bwf_1x1(void)
{
    int l, lay, tf;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) < 80) SKIP("tf32 tensor cores need sm_80+ (device sm_%d)", gpuml_device_arch(tu_gpu));
    gpuml__cv_bwf1x1_on = 1;
    gpuml__cv_bwf1x1w_on = -1;   /* the tf32 NCHW cases here are the mma.sync kernel's */
    for (l = 0; l < BWF1X1_SHAPES; l++)
        for (lay = 0; lay < 2; lay++)
            for (tf = 0; tf < 2; tf++) {
                const int *L = bwf1x1_shapes[l];
                const int v[15] = { L[0], L[1], L[2], L[3], L[4], 1, 1, 1, 1, 0, 0, 0, 0, 1, 1 };
                cv_case c = bwf_case(v, lay);
                long before = gpuml__cv_bwf1x1_calls;
                int want = lay == GPUML_LAYOUT_NCHW ? L[2] * L[3] % 4 == 0 : L[1] % 4 == 0 && L[4] % 4 == 0;
                CHECK(cv_out(&c), "case %d has no output", l);
                bwd_tf32 = tf;
                run_bwd(tu_gpu, tf ? "gpu-bwf-1x1-tf32" : "gpu-bwf-1x1-3xtf32", &c, GPUML_CONV_AUTO, l == 5 ? 3 : 1);
                bwd_tf32 = 0;
                CHECK((gpuml__cv_bwf1x1_calls > before) == want, "case %d layout %d tf32 %d: the 1x1 backward filter ran %ld times (want %s)",
                      l, lay, tf, gpuml__cv_bwf1x1_calls - before, want ? "> 0" : "0");
            }
    gpuml__cv_bwf1x1_on = 0;
    gpuml__cv_bwf1x1w_on = 0;
}
/* the 1x1 backward filter (gpuml_conv_bwf1x1, forced) with Inf / NaN inputs, tf32 and 3xTF32, both
   layouts, a small case, one of 340-pixel images (more pixels than the recomputing block's 256
   threads; image rows of 20 pixels) and one with K * C odd (NCHW): +Inf in x at one pixel of channel 0 (dw[k][0] is that pixel's
   dy[k] times Inf: +-Inf, never the NaN of the 3xTF32 split), NaN in dy at one pixel of filter 3
   (dw[3][*] NaN), -Inf in dy at one pixel of filter 1 of the last image (dw[1][*] +-Inf); the
   float64 reference gives each output's IEEE class, the finite ones are checked to the tolerance */
static void test_bwf_1x1_specials(void)
{
    /* n, c, h, w, k; the third (K * C odd: the sum's scalar path) NCHW only (NHWC needs C % 4 == 0) */
    static const int L[][5] = { { 2, 8, 4, 4, 8 }, { 3, 36, 17, 20, 12 }, { 2, 9, 4, 4, 7 } };
    int l, lay, tf, which;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) < 80) SKIP("tf32 tensor cores need sm_80+ (device sm_%d)", gpuml_device_arch(tu_gpu));
    gpuml__cv_bwf1x1_on = 1;
    gpuml__cv_bwf1x1w_on = -1;
    for (l = 0; l < 3; l++)
        for (lay = 0; lay < 2; lay++)
            for (tf = 0; tf < 2; tf++)
                for (which = 0; which < 3 && (l < 2 || lay == GPUML_LAYOUT_NCHW); which++) {
                    const int v[15] = { L[l][0], L[l][1], L[l][2], L[l][3], L[l][4], 1, 1, 1, 1, 0, 0, 0, 0, 1, 1 };
                    cv_case c = bwf_case(v, lay);
                    int64_t xs[4], wsh[4], ysh[4];
                    gpuml_tensor *x, *dy, *dw;
                    gpuml_conv2d_desc d;
                    double *xv, *dyv, *got, tol = tf ? 2e-3 : 2e-5;
                    long before = gpuml__cv_bwf1x1_calls, i, bad = 0;
                    const int H = c.h, W = c.w, nl = c.n - 1;
                    cv_out(&c);
                    d = cv_desc(&c, GPUML_CONV_AUTO);
                    d.act = GPUML_ACT_NONE; d.allow_tf32 = tf;
                    shape_act(&c, c.c, c.h, c.w, xs); shape_w(&c, wsh); shape_act(&c, c.k, c.p, c.q, ysh);
                    x = gpuml_tensor_new(tu_gpu, GPUML_F32, 4, xs); dy = gpuml_tensor_new(tu_gpu, GPUML_F32, 4, ysh);
                    dw = gpuml_tensor_new(tu_gpu, GPUML_F32, 4, wsh);
                    xv = t_rand(x); dyv = t_rand(dy);
                    if (which == 0) {   /* x (n 0, h 1, w 2, channel 0) */
                        xv[lay == GPUML_LAYOUT_NCHW ? (0 * c.c + 0) * H * W + 1 * W + 2 : ((0 * H + 1) * W + 2) * c.c + 0] = INFINITY;
                        t_write(x, xv);
                    } else if (which == 1) {   /* dy (n 1, p 2, q 3, filter 3) */
                        dyv[lay == GPUML_LAYOUT_NCHW ? (1 * c.k + 3) * H * W + 2 * W + 3 : ((1 * H + 2) * W + 3) * c.k + 3] = NAN;
                        t_write(dy, dyv);
                    } else {            /* dy (last image, p H - 1, q W - 2, filter 1) */
                        dyv[lay == GPUML_LAYOUT_NCHW ? ((int64_t)nl * c.k + 1) * H * W + (H - 1) * W + W - 2
                                                     : (((int64_t)nl * H + H - 1) * W + W - 2) * c.k + 1] = -INFINITY;
                        t_write(dy, dyv);
                    }
                    poison(tu_gpu, dw);
                    CHECK(gpuml_conv2d_backward_filter(tu_gpu, dw, x, dy, &d) == GPUML_SUCCESS, "shape %d layout %d tf32 %d case %d: %s", l, lay,
                          tf, which, gpuml_last_error(tu_gpu));
                    CHECK(gpuml__cv_bwf1x1_calls > before, "shape %d layout %d tf32 %d case %d: the 1x1 backward filter did not run", l, lay, tf,
                          which);
                    got = t_read(dw);
                    for (i = 0; i < c.k * c.c; i++) {   /* dw[k][ch] at k * C + ch in both KCRS and KRSC (1x1) */
                        double a, ref = ref_dw(&c, xv, dyv, (int)(i / c.c), 0, 0, (int)(i % c.c), &a);
                        int ok = ref != ref ? got[i] != got[i] : isinf(ref) ? got[i] == ref : fabs(got[i] - ref) <= tol * (a + fabs(ref)) + 1e-6;
                        if (!ok && bad++ < 3)
                            CHECK(0, "shape %d layout %d tf32 %d case %d: dw[%ld][%ld] = %g, want %g", l, lay, tf, which, i / c.c, i % c.c, got[i],
                                  ref);
                    }
                    free(xv); free(dyv); free(got);
                    gpuml_tensor_free(x); gpuml_tensor_free(dy); gpuml_tensor_free(dw);
                }
    gpuml__cv_bwf1x1_on = 0;
    gpuml__cv_bwf1x1w_on = 0;
}
/* the tf32 1x1 stride-1 NCHW backward filter on the wgmma matmul over images x pixels
   (gpuml__cv_bwf1x1w, sm_90): the shapes of bwf_1x1 (odd N / C / K / H / W, pixel counts not a
   multiple of 32 and below one step, several k and c tiles, one split and many, a layer-sized
   case); the route must run for NCHW images with PQ % 4 == 0 and decline NHWC and 35-pixel images */
static void test_bwf_1x1_wgmma(void)
{
    static const int extra[5] = { 6, 260, 7, 4, 136 };   /* two c and two k tiles of 256 x 128 */
    int l, lay;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma backward filter runs on sm_90 only (device sm_%d)", gpuml_device_arch(tu_gpu));
    gpuml__cv_bwf1x1w_on = 1;
    for (l = 0; l <= BWF1X1_SHAPES; l++)
        for (lay = 0; lay < 2; lay++) {
            const int *L = l < BWF1X1_SHAPES ? bwf1x1_shapes[l] : extra;
            const int v[15] = { L[0], L[1], L[2], L[3], L[4], 1, 1, 1, 1, 0, 0, 0, 0, 1, 1 };
            cv_case c = bwf_case(v, lay);
            long before = gpuml__cv_bwf1x1w_calls;
            int want = lay == GPUML_LAYOUT_NCHW && L[2] * L[3] % 4 == 0;
            CHECK(cv_out(&c), "case %d has no output", l);
            bwd_tf32 = 1;
            run_bwd(tu_gpu, "gpu-bwf-1x1-wgmma", &c, GPUML_CONV_AUTO, l == 5 ? 3 : 1);
            bwd_tf32 = 0;
            CHECK((gpuml__cv_bwf1x1w_calls > before) == want, "case %d layout %d: the wgmma 1x1 backward filter ran %ld times (want %s)",
                  l, lay, gpuml__cv_bwf1x1w_calls - before, want ? "> 0" : "0");
        }
    gpuml__cv_bwf1x1w_on = 0;
}
/* backward data of a stride-2 1x1 NCHW f32 conv with allow_tf32 on sm_90: one gpuml_conv_1x1w of dy
   with w^T whose epilogue spreads dx (its even pixels, zeros around them: every dx element written,
   so the poison check covers the zeros); odd channel counts, several images a pixel tile, P * Q from
   4 to 196; and the shapes it must leave to the conv + scatter route (odd H or W: dx's last row or
   column; P * Q % 4; Q odd; allow_tf32 off; the route switched off), which must be right too */
static void test_bwd_data_up2(void)
{
    static const int L[][6] = {   /* n, c, h, w, k, want */
        { 3, 96, 8, 8, 32, 1 }, { 2, 64, 28, 28, 128, 1 }, { 5, 36, 12, 12, 40, 1 }, { 1, 8, 4, 4, 8, 1 }, { 4, 130, 8, 28, 68, 1 },
        { 2, 32, 7, 8, 16, 0 }, { 2, 32, 6, 6, 16, 0 }, { 2, 48, 6, 10, 24, 0 }, { 2, 40, 8, 6, 20, 0 },
    };
    int l, mode;
    NEED_GPU();
    if (gpuml_device_arch(tu_gpu) != 90) SKIP("the wgmma 1x1 conv runs on sm_90 only (device sm_%d)", gpuml_device_arch(tu_gpu));
    for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++)
        for (mode = 0; mode < 3; mode++) {   /* tf32, tf32 with the route off, strict f32 */
            cv_case c;
            long before = gpuml__cv_bwd_up2_calls;
            memset(&c, 0, sizeof c);
            c.n = L[l][0]; c.c = L[l][1]; c.h = L[l][2]; c.w = L[l][3]; c.k = L[l][4]; c.r = c.s = 1; c.sh = c.sw = 2;
            c.dh = c.dw = 1; c.groups = 1; c.dt = GPUML_F32; c.layout = GPUML_LAYOUT_NCHW;
            CHECK(cv_out(&c), "case %d has no output", l);
            bwd_tf32 = mode != 2;
            gpuml__cv_bwd_up2_on = mode == 1 ? -1 : 0;
            run_bwd(tu_gpu, mode == 0 ? "gpu-bwd-up2" : mode == 1 ? "gpu-bwd-up2-off" : "gpu-bwd-up2-f32", &c, GPUML_CONV_AUTO, 1);
            gpuml__cv_bwd_up2_on = 0;
            bwd_tf32 = 0;
            CHECK((gpuml__cv_bwd_up2_calls > before) == (mode == 0 && L[l][5]), "case %d mode %d: the fused stride-2 backward data ran %ld times",
                  l, mode, gpuml__cv_bwd_up2_calls - before);
        }
}
/* strided backward data as one stride-1 conv over dy with a block of output channels per output
   phase, then depth-to-space (gpuml__cv_bwd_data_sub): 3x3 / 5x5 / 4x4 / 2x2 windows at stride 2,
   strides (2, 1) and (1, 2), a window shorter than the stride (phases no tap reaches: zeros),
   asymmetric and wide padding, odd channel counts and sizes, every dtype (f32 also with
   allow_tf32), both layouts; the route must run (sm_80+) except where the common window would need
   negative padding (padding 3 around a 3x3 window) and for groups (grouped,
   depthwise), and the zero-upsampled route (forced with this one off) must agree too */
static void test_bwd_data_phases(void)
{
    static const int L[][15] = {   /* n, c, h, w, k, r, s, sh, sw, pad t, b, l, r, groups, want */
        { 3, 64, 11, 11, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 }, { 2, 17, 10, 9, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
        { 2, 8, 9, 12, 6, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1 },     { 1, 12, 13, 11, 7, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1 },
        { 2, 16, 8, 8, 16, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1 },    { 2, 9, 9, 7, 10, 3, 1, 2, 1, 1, 1, 0, 0, 1, 1 },
        { 2, 9, 7, 9, 10, 1, 3, 1, 2, 0, 0, 1, 1, 1, 1 },     { 2, 6, 9, 9, 5, 1, 3, 2, 2, 0, 0, 1, 1, 1, 1 },
        { 2, 8, 10, 10, 8, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1 },    { 1, 8, 12, 12, 8, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1 },
        { 2, 8, 10, 10, 8, 3, 3, 2, 2, 3, 3, 3, 3, 1, 0 },    { 2, 4, 9, 11, 5, 5, 3, 2, 2, 4, 4, 0, 0, 1, 1 },
        { 2, 32, 10, 10, 48, 3, 3, 2, 2, 1, 1, 1, 1, 4, 0 },  { 2, 24, 9, 9, 24, 3, 3, 2, 2, 1, 1, 1, 1, 24, 0 },
        { 3, 20, 15, 14, 24, 3, 3, 2, 2, 1, 0, 0, 1, 1, 1 },   { 2, 40, 9, 8, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
    };
    int l, di, lay, off;
    NEED_GPU();
    for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++)
        for (di = 0; di < 4; di++)
            for (lay = 0; lay < 2; lay++)
                for (off = 0; off < 2; off++) {
                    cv_case c;
                    long before = gpuml__cv_bwd_sub_calls;
                    int want = !off && L[l][14] && gpuml_device_arch(tu_gpu) >= 80;
                    memset(&c, 0, sizeof c);
                    c.n = L[l][0]; c.c = L[l][1]; c.h = L[l][2]; c.w = L[l][3]; c.k = L[l][4]; c.r = L[l][5]; c.s = L[l][6];
                    c.sh = L[l][7]; c.sw = L[l][8]; c.pad[0] = L[l][9]; c.pad[1] = L[l][10]; c.pad[2] = L[l][11]; c.pad[3] = L[l][12];
                    c.groups = L[l][13]; c.dh = c.dw = 1;
                    c.dt = FDT[di < 3 ? di : 0]; c.layout = lay;
                    CHECK(cv_out(&c), "case %d has no output", l);
                    gpuml__cv_bwd_sub_on = off ? -1 : 0;
                    bwd_tf32 = di == 3;
                    run_bwd(tu_gpu, off ? "gpu-upsampled" : "gpu-phases", &c, GPUML_CONV_AUTO, 1);
                    bwd_tf32 = 0;
                    gpuml__cv_bwd_sub_on = 0;
                    CHECK((gpuml__cv_bwd_sub_calls > before) == want, "case %d dtype %d layout %d off %d: the phase route ran %ld times (want %s)",
                          l, di, lay, off, gpuml__cv_bwd_sub_calls - before, want ? "> 0" : "0");
                }
}
/* stride-1 backward data's weight flip in 32 x 32 tiles (gpuml_conv_wflip_t: NHWC with 8+ input
   and output channels a group): partial tiles both ways, groups, dilation, non-square and 1-tap
   windows, and cases below the 8-channel bound (the element-a-thread kernel), every dtype */
static void test_bwd_data_wflip(void)
{
    static const int L[][15] = {   /* n, c, h, w, k, r, s, pad t, b, l, r, groups, dh, dw, (unused) */
        { 2, 40, 9, 8, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },   { 2, 18, 7, 9, 80, 3, 3, 1, 1, 1, 1, 2, 1, 1, 0 },
        { 1, 33, 8, 10, 9, 5, 3, 2, 2, 1, 1, 1, 1, 1, 0 },   { 2, 24, 11, 9, 24, 3, 3, 2, 2, 2, 2, 3, 2, 2, 0 },
        { 2, 64, 6, 6, 96, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0 },   { 2, 7, 9, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },
        { 2, 40, 9, 9, 5, 3, 3, 0, 2, 1, 0, 1, 1, 1, 0 },
    };
    int l, di, lay;
    NEED_GPU();
    for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++)
        for (di = 0; di < 4; di++)
            for (lay = 0; lay < 2; lay++) {
                cv_case c;
                memset(&c, 0, sizeof c);
                c.n = L[l][0]; c.c = L[l][1]; c.h = L[l][2]; c.w = L[l][3]; c.k = L[l][4]; c.r = L[l][5]; c.s = L[l][6];
                c.sh = c.sw = 1; c.pad[0] = L[l][7]; c.pad[1] = L[l][8]; c.pad[2] = L[l][9]; c.pad[3] = L[l][10];
                c.groups = L[l][11]; c.dh = L[l][12]; c.dw = L[l][13];
                c.dt = FDT[di < 3 ? di : 0]; c.layout = lay;
                CHECK(cv_out(&c), "case %d has no output", l);
                bwd_tf32 = di == 3;
                run_bwd(tu_gpu, "gpu-wflip", &c, GPUML_CONV_AUTO, 1);
                bwd_tf32 = 0;
            }
}
/* depthwise (multiplier 1) at channel counts that take the vectorized kernel on the GPU, odd
   widths (partial q-blocks), strides 1 and 2, a dilated 5x5, with the full epilogue; on the CPU
   also 83 channels (the channel-vectorized kernel's 64-, 32-, 16- and 8-channel blocks and a masked
   tail of 3) at every SIMD level the machine has, stride 2 x 1 with asymmetric padding, and the
   direct loops it replaced; and the backward passes, channel-vectorized and on im2col */
static void test_depthwise(void)
{
    int ci, di, layout, v;
    for (ci = 0; ci < nctx(); ci++)
        for (di = 0; di < 3; di++)
            for (layout = 0; layout < 2; layout++)
                for (v = 0; v < (ci ? 3 : 4); v++) {
                    cv_case c;
                    memset(&c, 0, sizeof c);
                    c.n = 2; c.c = c.k = c.groups = v == 2 ? 8 : v == 3 ? 83 : 24; c.h = 9; c.w = v ? 11 : 10;
                    c.r = c.s = v == 2 ? 5 : 3; c.sh = c.sw = v == 1 ? 2 : 1; c.dh = c.dw = v == 2 ? 2 : 1;
                    c.pad[0] = c.pad[2] = v == 2 ? 4 : 1; c.pad[1] = c.pad[3] = v == 2 ? 3 : 1;
                    if (v == 3) { c.sh = 2; c.pad[0] = 0; c.pad[1] = 2; c.pad[2] = 2; c.pad[3] = 0; }
                    c.dt = FDT[di]; c.layout = layout; c.act = v == 0 ? GPUML_ACT_RELU : GPUML_ACT_SILU; c.bias = 1; c.res = v != 1;
                    cv_out(&c);
                    run_fwd(ctx_at(ci), cname(ci), &c, GPUML_CONV_AUTO, 1);
                    if (ci) run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_DIRECT, 1);
                    else {
                        int lvl;
                        for (lvl = 0; lvl < 2; lvl++) {   /* the lower SIMD levels (capped by the hardware) */
                            gpuml__cpu_simd_ctl(lvl);
                            run_fwd(tu_cpu, lvl ? "cpu avx2" : "cpu scalar", &c, GPUML_CONV_AUTO, 1);
                        }
                        gpuml__cpu_simd_ctl(-1);
                        gpuml__cv_cpu_dw_direct = 1;
                        run_fwd(tu_cpu, "cpu direct loops", &c, GPUML_CONV_AUTO, 1);
                        run_bwd(tu_cpu, "cpu im2col", &c, GPUML_CONV_AUTO, 1);
                        gpuml__cv_cpu_dw_direct = 0;
                        /* the backward filter's channel-vectorized sums (f32, channels contiguous), stride-1
                           backward data through the forward kernel */
                        for (lvl = 0; lvl < 3; lvl++) {
                            gpuml__cpu_simd_ctl(lvl);
                            run_bwd(tu_cpu, lvl == 2 ? "cpu" : lvl ? "cpu avx2" : "cpu scalar", &c, GPUML_CONV_AUTO, 1);
                        }
                        gpuml__cpu_simd_ctl(-1);
                    }
                }
}
/* the depthwise 3x3 kernel (gpuml_conv_dw3) and its fallbacks: channel counts taking 4-wide
   vectors, 2-wide ones, none (odd), one block per chunk of channels or several (144, 268 =
   4 x 67 with a partial last chunk); planes from 1x1 to 13x13 (partial tiles); strides 1 and 2;
   padding 0, 1, 2 and asymmetric; every epilogue; both layouts; every dtype.  On the GPU with
   the tile height chosen by size (0), forced to 1, 2 and 4 rows, the staged kernels forced (5;
   gpuml_conv_dw3s / gpuml_conv_dw3sc where they apply), the older kernels (-1); depthwise3x3_cfg:
   gpuml_conv_dw3 forced (it must run where it applies) with 16-byte channel vectors for 16-bit
   types, 2-wide ones, tile heights 2 to 7 and 16, widths 1 to 4, 1 to 3 rows loaded ahead and
   the weights read from shared memory (each on every third case). */
static void dw3_cases(int forced)
{
    static const int CH[] = { 1, 3, 17, 33, 8, 6, 24, 144, 268 };
    static const int HW[][2] = { { 1, 1 }, { 5, 5 }, { 7, 7 }, { 13, 13 }, { 5, 13 }, { 13, 7 }, { 2, 9 } };
    static const int PADS[4][4] = { { 0, 0, 0, 0 }, { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 1, 0, 0, 1 } };
    static const int epi[4][3] = { { 0, 0, 0 }, { 1, 1, 0 }, { 2, 1, 1 }, { 3, 0, 1 } };
    /* TEST_CONV_DW_PART=k/n: every n-th case from the k-th (several processes share the JIT work) */
    int i, ci, part = 0, nparts = 1;
    if (getenv("TEST_CONV_DW_PART") && sscanf(getenv("TEST_CONV_DW_PART"), "%d/%d", &part, &nparts) != 2) part = 0, nparts = 1;
    /* TEST_CONV_DW_STEP=k: every k-th case (under compute-sanitizer) */
    const int step = getenv("TEST_CONV_DW_STEP") ? GPUML__MAX(atoi(getenv("TEST_CONV_DW_STEP")), 1) : 1;
    if (nparts < 1) nparts = 1;
    for (i = 0; i < 63; i++) {
        cv_case c;
        if (i % nparts != part % nparts || i % step) continue;
        memset(&c, 0, sizeof c);
        c.n = 1 + i % 2; c.c = c.k = c.groups = CH[i % 9]; c.h = HW[i % 7][0]; c.w = HW[i % 7][1];
        c.r = c.s = 3; c.sh = c.sw = 1 + (i / 3) % 2; c.dh = c.dw = 1;
        memcpy(c.pad, PADS[(i / 2) % 4], sizeof c.pad);
        c.layout = (i / 4) % 2; c.dt = FDT[(i / 8) % 3];
        c.act = epi[(i / 5) % 4][0]; c.bias = epi[(i / 5) % 4][1]; c.res = epi[(i / 5) % 4][2];
        if (!cv_out(&c)) continue;
        for (ci = 0; ci < nctx(); ci++) {
            if (ci == 0) { run_fwd(tu_cpu, "cpu", &c, GPUML_CONV_AUTO, 1); continue; }
#ifndef GPUML_NO_CUDA
            {
                static const int modes[6] = { 0, 1, 2, 4, 5, -1 };
                /* gpuml_conv_dw3 forced: vec, tile height, tile width, rows ahead, blocks per SM */
                static const int CFG[7][6] = { { 8, 0, 1, 2, 2, 0 }, { 0, 3, 1, 1, 0, 1 }, { 0, 5, 3, 2, 0, 2 }, { 8, 16, 2, 1, 2, 1 },
                                               { 0, 2, 0, 1, 0, 0 }, { 2, 4, 4, 3, 6, 2 }, { 2, 7, 2, 2, 0, 1 } };
                const int eligible = c.c > 1 && (c.layout == 1 || c.c % 2 == 0);   /* (C = 1 takes another path) */
                int m;
                for (m = 0; m < 6 && !forced; m++) {
                    gpuml__cv_dw3_mode = modes[m];
                    run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1);
                }
                gpuml__cv_dw3_mode = 3;
                for (m = 0; m < 7 && forced; m++) {   /* each forced configuration on every third case */
                    long before = gpuml__cv_dw3_calls;
                    if ((i + m) % 3) continue;
                    memcpy(gpuml__cv_dw3_cfg, CFG[m], sizeof CFG[m]);
                    run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1);
                    CHECK(!eligible || gpuml__cv_dw3_calls == before + 1, "depthwise3x3 case %d cfg %d: gpuml_conv_dw3 did not run", i, m);
                }
                memset(gpuml__cv_dw3_cfg, 0, sizeof gpuml__cv_dw3_cfg);
                gpuml__cv_dw3_mode = 0;
            }
#endif
        }
    }
}
/* CPU depthwise on NCHW planes: whole planes (f32 rows copied a plane a call, stride 2 split by a
   permute, 16-bit and other strides through the row loops), the ring of padded plane rows (four
   output rows a kernel call, several 16-pixel blocks, bands), the old transposed channel rows; each
   at every SIMD level; strides 1-3, dilations, asymmetric padding and padding past the window,
   1x7 / 7x1, every dtype, the epilogue */
static void test_cpu_depthwise_planes(void)
{
    static const int S[][16] = {   /* n, c, h, w, r, s, sh, sw, pt, pb, pl, pr, dh, dw, dtype, epilogue */
        { 2, 5, 23, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1 }, { 2, 3, 40, 45, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0 },
        { 1, 4, 30, 33, 5, 5, 1, 1, 4, 3, 4, 3, 2, 2, 2, 1 }, { 2, 3, 17, 70, 1, 7, 1, 1, 0, 0, 3, 3, 1, 1, 0, 0 },
        { 2, 3, 70, 9, 7, 1, 1, 1, 3, 3, 0, 0, 1, 1, 1, 1 }, { 1, 6, 21, 19, 3, 3, 3, 2, 0, 2, 2, 0, 1, 1, 0, 1 },
        { 3, 2, 13, 130, 3, 3, 1, 2, 1, 1, 1, 1, 1, 3, 0, 0 }, { 1, 2, 9, 9, 3, 3, 1, 1, 5, 5, 5, 5, 1, 1, 0, 1 },
        { 2, 4, 12, 31, 3, 3, 2, 2, 0, 1, 0, 1, 1, 1, 0, 0 }, { 1, 3, 160, 140, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
        { 2, 3, 19, 23, 3, 5, 2, 1, 2, 1, 1, 3, 2, 1, 1, 0 }, { 1, 2, 30, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 1 },
        { 2, 3, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0 }, { 1, 2, 8, 9, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 2, 0 },
        { 1, 3, 17, 20, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
    };
    /* (strided backward data: "cpu planes" in dx phases at any size; whole planes and the ring with dy
       zero-stuffed) */
    static const char *names[4] = { "cpu planes", "cpu whole planes", "cpu plane-row ring", "cpu transposed rows" };
    int i, mode, lvl;
    for (i = 0; i < (int)(sizeof S / sizeof S[0]); i++)
        for (mode = 0; mode < 4; mode++)
            for (lvl = mode == 3 ? 2 : 0; lvl < 3; lvl++) {
                cv_case c;
                char nm[80];
                memset(&c, 0, sizeof c);
                c.n = S[i][0]; c.c = c.k = c.groups = S[i][1]; c.h = S[i][2]; c.w = S[i][3]; c.r = S[i][4]; c.s = S[i][5];
                c.sh = S[i][6]; c.sw = S[i][7]; c.pad[0] = S[i][8]; c.pad[1] = S[i][9]; c.pad[2] = S[i][10]; c.pad[3] = S[i][11];
                c.dh = S[i][12]; c.dw = S[i][13]; c.dt = FDT[S[i][14]]; c.layout = GPUML_LAYOUT_NCHW;
                c.bias = c.res = S[i][15]; c.act = S[i][15] ? GPUML_ACT_GELU : GPUML_ACT_NONE;
                if (!cv_out(&c)) { CHECK(0, "case %d has no output", i); continue; }
                gpuml__cv_cpu_dw_flat = mode == 1 ? 1 : mode == 2 ? -1 : 0;
                gpuml__cv_cpu_dw_rows_nchw = mode == 3;
                gpuml__cv_cpu_dw_sub = mode == 1 || mode == 2 ? -1 : 1;
                gpuml__cpu_simd_ctl(lvl == 2 ? -1 : lvl);
                snprintf(nm, sizeof nm, "%s%s", names[mode], lvl == 0 ? " scalar" : lvl == 1 ? " avx2" : "");
                run_fwd(tu_cpu, nm, &c, GPUML_CONV_AUTO, 1);
                run_bwd(tu_cpu, nm, &c, GPUML_CONV_AUTO, 1);
            }
    gpuml__cpu_simd_ctl(-1);
    gpuml__cv_cpu_dw_flat = 0;
    gpuml__cv_cpu_dw_rows_nchw = 0;
    gpuml__cv_cpu_dw_sub = 0;
}
static void test_depthwise3x3(void) { dw3_cases(0); }
static void test_depthwise3x3_cfg(void) { dw3_cases(1); }
/* gpuml_conv_dw3f (depthwise 3x3, stride 1 or 2, padding 1, NCHW planes whose output rows are
   whole 16-, 8- or 4-byte chunks): rows of 1 to 66 chunks (lanes 0 and 31 of a warp inside rows
   and at their ends, items crossing planes and images), heights 1 to 57 (partial bands of 2, 4
   and 8 rows), 1 to 67 channels, every epilogue and dtype, stride 2 on every fourth case, the rows
   a thread forced to 2, 4, 8 and chosen, the chunk as wide as the width allows or capped at 8 or
   4 bytes; odd 16-bit widths (at stride 2: widths not in whole chunks of 2 x 4 bytes, odd
   widths), padding 2 take the other kernels, and so does one channel (a dense conv: GEMM).  On
   the GPU the kernel must run where it applies (a launch counter); the CPU runs the same cases. */
static void test_depthwise3x3_flat(void)
{
    static const int HW[][2] = { { 1, 8 }, { 2, 16 }, { 5, 24 }, { 9, 40 }, { 17, 8 }, { 33, 112 }, { 57, 56 }, { 3, 4 }, { 7, 12 }, { 12, 20 },
                                 { 14, 14 }, { 7, 7 }, { 28, 28 }, { 4, 66 }, { 3, 13 } };
    static const int BYTES[3] = { 0, 8, 4 };
    static const int CH[] = { 1, 3, 17, 32, 67 };
    static const int epi[4][3] = { { 0, 0, 0 }, { 1, 1, 0 }, { 2, 1, 1 }, { 3, 0, 1 } };
    static const int ROWS[4] = { 0, 2, 4, 8 };
    /* TEST_CONV_DW_STEP=k: every k-th case (under compute-sanitizer); TEST_CONV_DW_PART=k/n: every
       n-th case from the k-th (several processes share the JIT work) */
    const int step = getenv("TEST_CONV_DW_STEP") ? GPUML__MAX(atoi(getenv("TEST_CONV_DW_STEP")), 1) : 1;
    int i, part = 0, nparts = 1;
    if (getenv("TEST_CONV_DW_PART") && sscanf(getenv("TEST_CONV_DW_PART"), "%d/%d", &part, &nparts) != 2) part = 0, nparts = 1;
    if (nparts < 1) nparts = 1;
    for (i = 0; i < 60; i += step) {
        cv_case c;
        if (i % nparts != part % nparts) continue;
        memset(&c, 0, sizeof c);
        c.n = 1 + i % 2; c.c = c.k = c.groups = CH[i % 5]; c.h = HW[i % 15][0]; c.w = HW[i % 15][1];
        if (c.h * c.w * c.c > 60000) c.n = 1;
        c.r = c.s = 3; c.sh = c.sw = 1 + (i % 4 == 3); c.dh = c.dw = 1;
        c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = i % 13 == 12 ? 2 : 1;
        c.layout = 1; c.dt = FDT[(i / 3) % 3];
        c.act = epi[(i / 2) % 4][0]; c.bias = epi[(i / 2) % 4][1]; c.res = epi[(i / 2) % 4][2];
        if (!cv_out(&c)) continue;
        if (!tu_gpu) { run_fwd(tu_cpu, "cpu", &c, GPUML_CONV_AUTO, 1); continue; }
#ifndef GPUML_NO_CUDA
        {
            const int es = (int)gpuml_dtype_size(c.dt);
            const int eligible = c.c > 1 && c.pad[0] == 1 && (c.sh == 1 ? (c.w * es) % 4 == 0 : c.w % 2 == 0 && (c.q * es) % 4 == 0);
            int k;
            gpuml__cv_dw3_mode = 6;
            gpuml__cv_dw3f_b = BYTES[(i / 5) % 3];
            for (k = 0; k < 4; k++) {
                long before = gpuml__cv_dw3f_calls;
                gpuml__cv_dw3f_r = ROWS[k];
                run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1);
                CHECK(!eligible || gpuml__cv_dw3f_calls == before + 1, "depthwise3x3_flat case %d rows %d: gpuml_conv_dw3f did not run", i, ROWS[k]);
                CHECK(eligible || gpuml__cv_dw3f_calls == before, "depthwise3x3_flat case %d rows %d: gpuml_conv_dw3f ran where it does not apply", i, ROWS[k]);
            }
            gpuml__cv_dw3f_r = gpuml__cv_dw3f_b = 0;
            gpuml__cv_dw3_mode = 0;
        }
#endif
    }
}
/* the staged depthwise 3x3 kernel (gpuml_conv_dw3s, NHWC with C in 16-byte steps, sm_80+): channel
   counts of one block per pixel and of several (200, 264, 520: divisors of C; 36 f16 is not in
   16-byte steps and takes gpuml_conv_dw3), planes up to 40x37 (several bands and column blocks,
   partial ones), strides 1 and 2, padding 0, 1, 2 and asymmetric, every epilogue and dtype; the
   band height, column block and ring depth chosen by size and forced small (1- and 3-row bands,
   1- and 5-column blocks, 2- and 4-slot rings: every slot reused many times) and grids of fewer
   blocks than bands (each streaming several bands through its ring); NCHW through
   gpuml_conv_dw3sc (1 and 5 planes per block; rows of every alignment).  On the GPU the
   kernels must run where they apply (a launch counter). */
static void test_depthwise3x3_staged(void)
{
    static const int CH[] = { 8, 24, 36, 40, 144, 200, 264, 520 };
    static const int HW[][2] = { { 1, 1 }, { 3, 5 }, { 9, 9 }, { 17, 23 }, { 40, 37 }, { 31, 64 } };
    static const int PADS[4][4] = { { 0, 0, 0, 0 }, { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 1, 0, 0, 1 } };
    static const int epi[4][3] = { { 0, 0, 0 }, { 1, 1, 0 }, { 2, 1, 1 }, { 3, 0, 1 } };
    /* band height, column block, ring slots, register bound, grid (NHWC: > 0 blocks, < 0 blocks per
       SM, each streaming several bands' rows through one ring: 1- and 3-row bands crossing a
       2-slot ring, a 16-slot ring whose first copies span several bands, uneven shares; 1000000:
       a block per band), output columns a thread (NHWC: 1 or 2; odd column blocks rounded up) */
    static const int CFG[9][6] = { { 0, 0, 0, 0, 0, 0 }, { 1, 1, 2, 0, 0, 1 }, { 3, 5, 4, 0, 0, 2 }, { 0, 5, 2, 0, 0, 1 },
                                   { 1, 1, 2, 0, 3, 2 }, { 3, 0, 16, 0, 1, 1 }, { 0, 5, 4, 0, -1, 0 }, { 2, 3, 2, 0, 2, 2 },
                                   { 0, 0, 0, 0, 1000000, 1 } };
    /* TEST_CONV_DW_STEP=k: every k-th case (under compute-sanitizer); TEST_CONV_DW_PART=k/n: every
       n-th case from the k-th (several processes share the JIT work) */
    const int step = getenv("TEST_CONV_DW_STEP") ? GPUML__MAX(atoi(getenv("TEST_CONV_DW_STEP")), 1) : 1;
    int i, part = 0, nparts = 1;
    if (getenv("TEST_CONV_DW_PART") && sscanf(getenv("TEST_CONV_DW_PART"), "%d/%d", &part, &nparts) != 2) part = 0, nparts = 1;
    if (nparts < 1) nparts = 1;
    for (i = 0; i < 48; i += step) {
        cv_case c;
        if (i % nparts != part % nparts) continue;
        memset(&c, 0, sizeof c);
        c.n = 1 + i % 3; c.c = c.k = c.groups = CH[i % 8]; c.h = HW[i % 6][0]; c.w = HW[i % 6][1];
        c.r = c.s = 3; c.sh = c.sw = 1 + (i / 2) % 2; c.dh = c.dw = 1;
        memcpy(c.pad, PADS[(i / 3) % 4], sizeof c.pad);
        c.layout = i % 3 == 2; c.dt = FDT[(i / 4) % 3];
        c.act = epi[(i / 5) % 4][0]; c.bias = epi[(i / 5) % 4][1]; c.res = epi[(i / 5) % 4][2];
        if (c.c * c.h * c.w > 40000) c.n = 1;
        if (!cv_out(&c)) continue;
        if (!tu_gpu) { run_fwd(tu_cpu, "cpu", &c, GPUML_CONV_AUTO, 1); continue; }
#ifndef GPUML_NO_CUDA
        {
            int k, eligible = (c.layout || (c.c * (int)gpuml_dtype_size(c.dt)) % 16 == 0) && gpuml_device_arch(tu_gpu) >= 80;
            gpuml__cv_dw3_mode = 5;   /* the staged kernels wherever they apply */
            for (k = 0; k < 9; k++) {
                long before = gpuml__cv_dw3s_calls;
                memcpy(gpuml__cv_dw3s_cfg, CFG[k], sizeof CFG[k]);
                run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1);
                CHECK(!eligible || gpuml__cv_dw3s_calls == before + 1, "depthwise3x3_staged case %d cfg %d: the staged kernel did not run", i, k);
            }
            memset(gpuml__cv_dw3s_cfg, 0, sizeof gpuml__cv_dw3s_cfg);
            for (k = 0; k < 2 && c.dt == GPUML_F32 && !c.layout; k++) {   /* f32 NHWC one block a band, streamed with 1 column */
                long before = gpuml__cv_dw3s_calls;
                gpuml__cv_dw3s_stream = k;
                run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1);
                CHECK(!eligible || gpuml__cv_dw3s_calls == before + 1, "depthwise3x3_staged case %d f32 stream %d: the staged kernel did not run", i, k);
            }
            gpuml__cv_dw3s_stream = -1;
            gpuml__cv_dw3_mode = 0;
            run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_AUTO, 1);   /* as chosen by shape */
        }
#endif
    }
}
/* shapes that took the CPU's special cases: fewer output pixels than channels over several
   chunks, 1x1 stride-1 convs reading x in place, f32 y written in place */
static void test_cpu_special(void)
{
    static const int S[][6] = {   /* c, h, k, r, stride, pad */
        { 8, 9, 96, 3, 1, 1 }, { 12, 10, 80, 1, 1, 0 }, { 16, 11, 24, 1, 1, 0 }, { 6, 13, 100, 3, 2, 1 },
    };
    int ci, l, di, layout;
    for (ci = 0; ci < nctx(); ci++)
        for (l = 0; l < (int)(sizeof S / sizeof S[0]); l++)
            for (di = 0; di < 3; di++)
                for (layout = 0; layout < 2; layout++) {
                    cv_case c;
                    memset(&c, 0, sizeof c);
                    c.n = 1 + (l & 1); c.c = S[l][0]; c.h = c.w = S[l][1]; c.k = S[l][2]; c.r = c.s = S[l][3]; c.sh = c.sw = S[l][4];
                    c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = S[l][5]; c.dh = c.dw = 1; c.groups = l == 3 ? 2 : 1;
                    c.dt = FDT[di]; c.layout = layout; c.act = (l + di) % 4; c.bias = (l + layout) & 1; c.res = di != 1;
                    cv_out(&c);
                    run_fwd(ctx_at(ci), cname(ci), &c, GPUML_CONV_AUTO, 1);
                    if (di == 0) run_bwd(ctx_at(ci), cname(ci), &c, GPUML_CONV_AUTO, 1);
                }
}
/* the CPU backward passes' routes (gpuml__cv_cpu_run, kinds 1 and 2): dy read in place by the GEMM
   (f32 and 16-bit, NHWC, NCHW of one image) or copied (NCHW of two images); dx written in place by
   the GEMM (f32 1x1 stride-1 unpadded, groups 1 and 2; x then read in place as the backward filter's
   column matrix, any dtype) or gathered from the column matrix (a tile of
   channels at a time: 600 channels cross the 512-channel tile; the stem's 7x7 stride 2 over 3
   channels, whose window rows im2col copies as one run; or, stride 1 with 512+ pixels, as the
   forward conv of dy with the flipped weights -- each case also forced through the column route; 16-bit dx; stride 2, dilation,
   asymmetric padding; 70 horizontal taps); dw written in place by the
   GEMM (f32 KRSC) or through its f32 buffer (KCRS, 16-bit); several chunks summed into dw (600
   channels, 3x3, two 30x30 images: 3 chunks of rows) -- every element against float64 */
static void test_cpu_backward_paths(void)
{
    static const int S[][16] = {   /* n, c, h, w, k, r, s, sh, sw, pt, pb, pl, pr, dh, groups, layout | dtype << 4 */
        { 3, 16, 7, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0 }, { 2, 12, 5, 6, 8, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2, 0 },
        { 1, 16, 7, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1 }, { 2, 16, 7, 9, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1 },
        { 2, 20, 6, 7, 12, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0 | 2 << 4 }, { 2, 20, 6, 7, 12, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1 | 1 << 4 },
        { 2, 9, 11, 10, 7, 3, 3, 2, 2, 1, 0, 2, 1, 1, 1, 0 | 1 << 4 }, { 2, 9, 11, 10, 7, 3, 3, 1, 2, 1, 1, 1, 1, 2, 1, 1 },
        { 1, 600, 6, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, { 2, 6, 1, 90, 5, 1, 70, 1, 1, 0, 0, 3, 2, 1, 1, 0 },
        { 2, 600, 30, 30, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 }, { 2, 12, 9, 9, 6, 3, 3, 2, 1, 1, 1, 0, 2, 1, 3, 0 | 2 << 4 },
        { 2, 6, 24, 25, 10, 3, 3, 1, 1, 2, 1, 0, 2, 2, 2, 1 }, { 1, 8, 40, 40, 12, 3, 5, 1, 1, 1, 1, 2, 2, 1, 1, 0 | 1 << 4 },
        { 2, 9, 25, 23, 6, 5, 3, 1, 1, 2, 2, 1, 1, 1, 3, 1 | 2 << 4 }, { 2, 3, 30, 28, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 0 },
        { 1, 3, 30, 28, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 0 | 2 << 4 },
        /* f32 NHWC through the scatter col2im: groups 2 (S runs of cg), 2x2 stride 3 and 1x1 stride 2
           (dx rows and columns no tap reaches), dilation 2 in both dims (1 << 6: dw = dh) */
        { 2, 10, 13, 11, 6, 3, 3, 2, 2, 1, 0, 0, 2, 1, 2, 0 }, { 2, 5, 12, 13, 7, 2, 2, 3, 3, 0, 1, 1, 0, 1, 1, 0 },
        { 1, 7, 17, 15, 9, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 0 | 1 << 6 }, { 2, 8, 9, 9, 12, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
        { 1, 4, 11, 26, 5, 3, 4, 1, 2, 3, 1, 2, 3, 1, 1, 0 },
        /* one channel in and out (groups 1, also depthwise: the channel-vectorized depthwise paths, before
           the padded copy of x the gathered backward filter would make) */
        { 2, 1, 9, 8, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    };
    /* routes: 0 as chosen; 1 backward data through the column matrix (else stride-1 windows of 512+
       pixels run as a forward conv), col2im a scatter (f32 NHWC) in bands of one output row (short runs:
       AVX-512's row builder, or the runs in every other case); 2 the same
       with col2im a gather, and the backward filter on an im2col buffer (else its B gathered from x) */
    int i, route;
    for (i = 0; i < 3 * (int)(sizeof S / sizeof S[0]); i++) {
        static const char *names[3] = { "cpu", "cpu column route, one-row bands", "cpu column route, gather, im2col" };
        cv_case c;
        route = i % 3;
        gpuml__cv_cpu_bwd_col = route > 0;
        gpuml__cv_cpu_band_rows = route == 1;
        gpuml__cv_cpu_bwd_gather = gpuml__cv_cpu_bwf_col = route == 2;
        i /= 3;
        gpuml__cv_c2i_runs = route == 1 && (i & 1);   /* every other case: the scatter's runs, not AVX-512's row builder */
        memset(&c, 0, sizeof c);
        c.n = S[i][0]; c.c = S[i][1]; c.h = S[i][2]; c.w = S[i][3]; c.k = S[i][4]; c.r = S[i][5]; c.s = S[i][6];
        c.sh = S[i][7]; c.sw = S[i][8]; c.pad[0] = S[i][9]; c.pad[1] = S[i][10]; c.pad[2] = S[i][11]; c.pad[3] = S[i][12];
        c.dh = S[i][13]; c.dw = S[i][15] >> 6 ? c.dh : 1; c.groups = S[i][14]; c.layout = S[i][15] & 15; c.dt = FDT[(S[i][15] >> 4) & 3];
        if (!cv_out(&c)) { CHECK(0, "case %d has no output", i); i = 3 * i + route; continue; }
        run_bwd(tu_cpu, names[route], &c, GPUML_CONV_AUTO, 1);
        i = 3 * i + route;
    }
    gpuml__cv_cpu_bwd_col = 0;
    gpuml__cv_cpu_band_rows = 0;
    gpuml__cv_cpu_bwd_gather = gpuml__cv_cpu_bwf_col = gpuml__cv_c2i_runs = 0;
}

/* the CPU forward's implicit GEMM (its gather of x straight into the GEMM's panels): channel runs
   read in place (f32 NHWC, C per group >= 16, odd C), on the zero-padded copy (short runs: C = 3
   as in the stem, C = 5; f16; NCHW), one window row of S*C floats per gather (groups 1, no
   horizontal dilation) or one tap (dilated), padding larger than the window, asymmetric padding,
   1x1 strided and padded, groups; sizes such that panels straddle images and chunks */
static void test_cpu_implicit(void)
{
    static const int S[][15] = {   /* c, h, w, k, r, s, sh, sw, pt, pb, pl, pr, dh, dw, groups */
        { 17, 7, 9, 20, 3, 3, 1, 1, 4, 4, 4, 4, 1, 1, 1 },   /* padding > window, odd C read in place */
        { 32, 9, 8, 40, 3, 3, 2, 2, 3, 1, 0, 2, 2, 2, 2 },   /* groups of 16, dilation, asymmetric padding */
        { 3, 23, 21, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1 },   /* the stem: 21-float window rows */
        { 3, 15, 17, 6, 3, 5, 1, 2, 2, 0, 1, 3, 2, 1, 1 },   /* short runs, vertical dilation only */
        { 5, 12, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 2, 1 },   /* short runs, horizontal dilation: one tap per gather */
        { 1, 10, 10, 9, 3, 3, 1, 1, 4, 1, 2, 5, 1, 1, 1 },   /* C = 1 (groups 1) */
        { 24, 11, 13, 36, 5, 5, 1, 1, 5, 5, 5, 5, 2, 1, 1 }, /* 5x5 dilated, wide padding, read in place */
        { 48, 9, 9, 13, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1 },   /* 1x1 stride 2: one tap */
        { 20, 6, 7, 35, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1, 1 },   /* 1x1 padded: zero rows */
    };
    int l, di, layout;
    for (l = 0; l < (int)(sizeof S / sizeof S[0]); l++)
        for (di = 0; di < 2; di++)
            for (layout = 0; layout < 2; layout++) {
                cv_case c;
                int j;
                memset(&c, 0, sizeof c);
                c.n = 2; c.c = S[l][0]; c.h = S[l][1]; c.w = S[l][2]; c.k = S[l][3]; c.r = S[l][4]; c.s = S[l][5];
                c.sh = S[l][6]; c.sw = S[l][7];
                for (j = 0; j < 4; j++) c.pad[j] = S[l][8 + j];
                c.dh = S[l][12]; c.dw = S[l][13]; c.groups = S[l][14];
                c.dt = di ? GPUML_F16 : GPUML_F32; c.layout = layout; c.act = (l + layout) % 3; c.bias = l & 1; c.res = (l + di) & 1;
                CHECK(cv_out(&c), "case %d has an empty output", l);
                run_fwd(tu_cpu, "cpu", &c, GPUML_CONV_AUTO, 1);
            }
}
/* forcing the implicit-GEMM path: NOT_SUPPORTED on the CPU and below sm_80, runs on sm_80+ */
static void test_forced_igemm(void)
{
    cv_case c;
    gpuml_conv2d_desc d;
    int64_t s[4] = {1, 4, 4, 8}, ws[4] = {8, 3, 3, 8};
    gpuml_tensor *x = gpuml_tensor_new(tu_cpu, GPUML_F16, 4, s), *w = gpuml_tensor_new(tu_cpu, GPUML_F16, 4, ws);
    gpuml_tensor *y;
    s[1] = s[2] = 2;
    y = gpuml_tensor_new(tu_cpu, GPUML_F16, 4, s);
    memset(&d, 0, sizeof d);
    d.path = GPUML_CONV_IGEMM;
    CHECK_STATUS(tu_cpu, gpuml_conv2d(tu_cpu, y, x, w, &d), GPUML_ERROR_NOT_SUPPORTED, "GPU kernel");
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y);
    NEED_GPU();
    memset(&c, 0, sizeof c);
    c.n = 2; c.c = 16; c.h = 9; c.w = 7; c.k = 24; c.r = c.s = 3; c.sh = c.sw = 1; c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = 1;
    c.dh = c.dw = 1; c.groups = 1; c.dt = GPUML_F16; c.act = GPUML_ACT_RELU; c.bias = 1; c.res = 1;
    cv_out(&c);
    if (gpuml_device_arch(tu_gpu) < 80) {
        CHECK(!run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_IGEMM, 1), "forced IGEMM ran below sm_80");
        CHECK(strstr(gpuml_last_error(tu_gpu), "implicit-GEMM") != NULL, "message: %s", gpuml_last_error(tu_gpu));
    } else {
        CHECK(run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_IGEMM, 1), "forced IGEMM did not run on sm_%d", gpuml_device_arch(tu_gpu));
    }
}
/* forcing the wgmma path: NOT_SUPPORTED on the CPU, off Hopper and for C % 64 != 0; runs on sm_90 */
static void test_forced_wgmma(void)
{
    cv_case c;
    gpuml_conv2d_desc d;
    int64_t s[4] = {1, 4, 4, 64}, ws[4] = {8, 3, 3, 64};
    gpuml_tensor *x = gpuml_tensor_new(tu_cpu, GPUML_F16, 4, s), *w = gpuml_tensor_new(tu_cpu, GPUML_F16, 4, ws);
    gpuml_tensor *y;
    s[1] = s[2] = 2; s[3] = 8;
    y = gpuml_tensor_new(tu_cpu, GPUML_F16, 4, s);
    memset(&d, 0, sizeof d);
    d.path = GPUML_CONV_WGMMA;
    CHECK_STATUS(tu_cpu, gpuml_conv2d(tu_cpu, y, x, w, &d), GPUML_ERROR_NOT_SUPPORTED, "GPU kernel");
    d.path = (gpuml_conv_path)5;
    CHECK_STATUS(tu_cpu, gpuml_conv2d(tu_cpu, y, x, w, &d), GPUML_ERROR_INVALID_ARGUMENT, "unknown path");
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y);
    NEED_GPU();
    memset(&c, 0, sizeof c);
    c.n = 2; c.c = 128; c.h = 9; c.w = 7; c.k = 40; c.r = c.s = 3; c.sh = c.sw = 2; c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = 1;
    c.dh = c.dw = 1; c.groups = 1; c.dt = GPUML_BF16; c.act = GPUML_ACT_SILU; c.bias = 1; c.res = 1;
    cv_out(&c);
    if (gpuml_device_arch(tu_gpu) != 90) {
        CHECK(!run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_WGMMA, 1), "forced WGMMA ran on sm_%d", gpuml_device_arch(tu_gpu));
        CHECK(strstr(gpuml_last_error(tu_gpu), "wgmma") != NULL, "message: %s", gpuml_last_error(tu_gpu));
    } else {
        CHECK(run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_WGMMA, 1), "forced WGMMA did not run on sm_90");
        c.c = 96;   /* not a multiple of 64: declined with the reason */
        cv_out(&c);
        CHECK(!run_fwd(tu_gpu, "gpu", &c, GPUML_CONV_WGMMA, 1), "forced WGMMA took C = 96");
        CHECK(strstr(gpuml_last_error(tu_gpu), "C % 64") != NULL, "message: %s", gpuml_last_error(tu_gpu));
    }
}
/* real ResNet-50 layers (batch 1 on the CPU, 2 on the GPU), checked at sampled outputs */
static void test_resnet_layers(void)
{
    static const int L[][7] = {   /* c, h, k, r, stride, pad, -- */
        { 3, 56, 64, 7, 2, 3, 0 }, { 64, 56, 64, 1, 1, 0, 0 }, { 64, 28, 64, 3, 1, 1, 0 }, { 256, 14, 512, 1, 2, 0, 0 },
        { 128, 28, 128, 3, 2, 1, 0 },
    };
    int ci, l;
    for (ci = 0; ci < nctx(); ci++)
        for (l = 0; l < (int)(sizeof L / sizeof L[0]); l++) {
            cv_case c;
            int di;
            for (di = 0; di < (ci ? 3 : 1); di++) {
                memset(&c, 0, sizeof c);
                c.n = ci ? 2 : 1; c.c = L[l][0]; c.h = c.w = L[l][1]; c.k = L[l][2]; c.r = c.s = L[l][3]; c.sh = c.sw = L[l][4];
                c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = L[l][5]; c.dh = c.dw = 1; c.groups = 1;
                c.dt = FDT[di]; c.layout = (l + di) & 1; c.act = GPUML_ACT_RELU; c.bias = 1; c.res = l & 1;
                cv_out(&c);
                run_fwd(ctx_at(ci), cname(ci), &c, GPUML_CONV_AUTO, 97);
                if (l == 2) run_bwd(ctx_at(ci), cname(ci), &c, GPUML_CONV_AUTO, 31);
            }
        }
}
/* gradients by central finite differences of L = sum(y * g), f32 */
static void test_finite_differences(void)
{
    int ci, t;
    for (ci = 0; ci < nctx(); ci++) {
        gpuml_ctx *ctx = ctx_at(ci);
        cv_case c;
        int64_t xs[4], wsh[4], ysh[4];
        gpuml_tensor *x, *w, *y, *g, *dx, *dw;
        double *xv, *wv, *gv, *dxv, *dwv;
        gpuml_conv2d_desc d;
        memset(&c, 0, sizeof c);
        c.n = 2; c.c = 6; c.h = 7; c.w = 6; c.k = 4; c.r = 3; c.s = 2; c.sh = 2; c.sw = 1; c.pad[0] = 1; c.pad[1] = 2; c.pad[2] = 0;
        c.pad[3] = 1; c.dh = 1; c.dw = 2; c.groups = 2; c.dt = GPUML_F32; c.layout = ci;
        cv_out(&c);
        d = cv_desc(&c, GPUML_CONV_AUTO);
        shape_act(&c, c.c, c.h, c.w, xs); shape_w(&c, wsh); shape_act(&c, c.k, c.p, c.q, ysh);
        x = gpuml_tensor_new(ctx, GPUML_F32, 4, xs); w = gpuml_tensor_new(ctx, GPUML_F32, 4, wsh);
        y = gpuml_tensor_new(ctx, GPUML_F32, 4, ysh); g = gpuml_tensor_new(ctx, GPUML_F32, 4, ysh);
        dx = gpuml_tensor_new(ctx, GPUML_F32, 4, xs); dw = gpuml_tensor_new(ctx, GPUML_F32, 4, wsh);
        xv = t_rand(x); wv = t_rand(w); gv = t_rand(g);
        CHECK(gpuml_conv2d_backward_data(ctx, dx, g, w, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        CHECK(gpuml_conv2d_backward_filter(ctx, dw, x, g, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        dxv = t_read(dx); dwv = t_read(dw);
        for (t = 0; t < 12; t++) {
            int which = t & 1;   /* 0: an x entry, 1: a w entry */
            double *v = which ? wv : xv, fd, lp = 0, lm = 0, save, eps = 1e-2, *yv;
            gpuml_tensor *tt = which ? w : x;
            long long i = (long long)((tu_rand() + 1.0) * 0.5 * (double)gpuml_tensor_numel(tt)) % gpuml_tensor_numel(tt), j, ny = gpuml_tensor_numel(y);
            int sgn;
            save = v[i];
            for (sgn = 1; sgn >= -1; sgn -= 2) {
                double l = 0;
                v[i] = save + sgn * eps;
                t_write(tt, v);
                CHECK(gpuml_conv2d(ctx, y, x, w, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                yv = t_read(y);
                for (j = 0; j < ny; j++) l += yv[j] * gv[j];
                free(yv);
                if (sgn > 0) lp = l; else lm = l;
            }
            v[i] = save;
            t_write(tt, v);
            fd = (lp - lm) / (2 * eps);
            {
                double an = which ? dwv[i] : dxv[i];
                char buf[200];
                snprintf(buf, sizeof buf, "%s finite difference of %s[%lld]", cname(ci), which ? "w" : "x", i);
                tu_close(buf, &an, &fd, 1, 2e-3, 2e-3);
            }
        }
        free(xv); free(wv); free(gv); free(dxv); free(dwv);
        gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(g); gpuml_tensor_free(dx); gpuml_tensor_free(dw);
    }
}
/* strided views (a channel slice of a wider tensor) take the generic paths */
static void test_views(void)
{
    int ci;
    for (ci = 0; ci < nctx(); ci++) {
        gpuml_ctx *ctx = ctx_at(ci);
        int64_t xs[4] = {2, 5, 6, 7}, ws[4] = {3, 3, 2, 4}, ys[4] = {2, 3, 6, 3};   /* NHWC; x is a view with c = 4 of 7 */
        gpuml_tensor *xb = gpuml_tensor_new(ctx, GPUML_F32, 4, xs), *x = gpuml_tensor_slice(xb, 3, 1, 5, 1);
        gpuml_tensor *w = gpuml_tensor_new(ctx, GPUML_F32, 4, ws), *y = gpuml_tensor_new(ctx, GPUML_F32, 4, ys), *xc;
        gpuml_tensor *y2 = gpuml_tensor_new(ctx, GPUML_F32, 4, ys);
        gpuml_conv2d_desc d;
        double *a, *b, *xv, *wv;
        int64_t cs[4] = {2, 5, 6, 4};
        memset(&d, 0, sizeof d);
        d.pad[2] = 1;
        xv = t_rand(xb); wv = t_rand(w);
        xc = gpuml_tensor_new(ctx, GPUML_F32, 4, cs);
        CHECK(gpuml_copy(ctx, xc, x) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        poison(ctx, y); poison(ctx, y2);
        CHECK(gpuml_conv2d(ctx, y, x, w, &d) == GPUML_SUCCESS, "view: %s", gpuml_last_error(ctx));
        CHECK(gpuml_conv2d(ctx, y2, xc, w, &d) == GPUML_SUCCESS, "contiguous: %s", gpuml_last_error(ctx));
        a = t_read(y); b = t_read(y2);
        tu_close(ci ? "gpu view vs contiguous" : "cpu view vs contiguous", a, b, gpuml_tensor_numel(y), 1e-6, 1e-6);
        free(a); free(b); free(xv); free(wv);
        gpuml_tensor_free(xb); gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(y2); gpuml_tensor_free(xc);
    }
}
static void test_conv1d(void)
{
    int ci, layout;
    for (ci = 0; ci < nctx(); ci++)
        for (layout = 0; layout < 2; layout++) {
            gpuml_ctx *ctx = ctx_at(ci);
            cv_case c;
            int64_t xs[3], ws[3], ys[3];
            gpuml_tensor *x, *w, *y;
            gpuml_conv2d_desc d;
            double *xv, *wv, *got;
            int n, q, k;
            memset(&c, 0, sizeof c);
            c.n = 2; c.c = 4; c.h = 1; c.w = 11; c.k = 6; c.r = 1; c.s = 3; c.sh = 1; c.sw = 2; c.pad[2] = 2; c.pad[3] = 1;
            c.dh = 1; c.dw = 2; c.groups = 2; c.dt = GPUML_F32; c.layout = layout;
            cv_out(&c);
            xs[0] = c.n; ws[0] = c.k; ys[0] = c.n;
            if (layout) { xs[1] = c.c; xs[2] = c.w; ws[1] = c.c / c.groups; ws[2] = c.s; ys[1] = c.k; ys[2] = c.q; }
            else { xs[1] = c.w; xs[2] = c.c; ws[1] = c.s; ws[2] = c.c / c.groups; ys[1] = c.q; ys[2] = c.k; }
            x = gpuml_tensor_new(ctx, GPUML_F32, 3, xs); w = gpuml_tensor_new(ctx, GPUML_F32, 3, ws); y = gpuml_tensor_new(ctx, GPUML_F32, 3, ys);
            xv = t_rand(x); wv = t_rand(w);
            poison(ctx, y);
            memset(&d, 0, sizeof d);
            d.stride[1] = c.sw; d.pad[2] = c.pad[2]; d.pad[3] = c.pad[3]; d.dilation[1] = c.dw; d.groups = c.groups; d.layout = (gpuml_layout)layout;
            CHECK(gpuml_conv1d(ctx, y, x, w, &d) == GPUML_SUCCESS, "conv1d: %s", gpuml_last_error(ctx));
            got = t_read(y);
            for (n = 0; n < c.n; n++)
                for (q = 0; q < c.q; q++)
                    for (k = 0; k < c.k; k++) {
                        double a, v = ref_y(&c, xv, wv, n, 0, q, k, &a);
                        double gv = got[layout ? ((long long)n * c.k + k) * c.q + q : ((long long)n * c.q + q) * c.k + k];
                        tu_close(layout ? "conv1d NCW" : "conv1d NWC", &gv, &v, 1, 1e-5, 1e-5 * a + 1e-6);
                    }
            free(xv); free(wv); free(got);
            gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y);
        }
}

/* ---- pooling ---- */
static void run_pool(gpuml_ctx *ctx, const char *cn, int n, int ch, int h, int w, const gpuml_pool2d_desc *d, gpuml_dtype dt)
{
    int wh = d->global ? h : d->window[0], ww = d->global ? w : d->window[1];
    int sh = d->stride[0] ? d->stride[0] : wh, sw = d->stride[1] ? d->stride[1] : ww;
    int p = (int)gpuml_conv2d_out_dim(h, wh, sh, d->pad[0], d->pad[1], 1), q = (int)gpuml_conv2d_out_dim(w, ww, sw, d->pad[2], d->pad[3], 1);
    int64_t xs[4], ys[4];
    gpuml_tensor *x, *y;
    double *xv, *got;
    int i, pp, qq, c, hh, wi2;
    char name[300];
    cv_case lc;
    memset(&lc, 0, sizeof lc);
    lc.layout = (int)d->layout; lc.n = n;
    shape_act(&lc, ch, h, w, xs); shape_act(&lc, ch, p, q, ys);
    x = gpuml_tensor_new(ctx, dt, 4, xs); y = gpuml_tensor_new(ctx, dt, 4, ys);
    xv = t_rand(x);
    if (ctx == tu_cpu && (n * ch + h + w) % 2 == 0) {   /* (CPU) NaN propagates through the windows that hold it */
        long long ne = (long long)n * ch * h * w;
        xv[ne / 2] = NAN; xv[ne - 1] = NAN;
        t_write(x, xv);
    }
    poison(ctx, y);
    snprintf(name, sizeof name, "pool2d %s %s %s %s %dx%d window %dx%d stride %d,%d pad %d,%d,%d,%d incl %d global %d", cn,
             d->op ? "avg" : "max", gpuml_dtype_name(dt), d->layout ? "NCHW" : "NHWC", h, w, wh, ww, sh, sw, d->pad[0], d->pad[1],
             d->pad[2], d->pad[3], d->count_include_pad, d->global);
    CHECK(gpuml_pool2d(ctx, y, x, d) == GPUML_SUCCESS, "%s: %s", name, gpuml_last_error(ctx));
    got = t_read(y);
    for (i = 0; i < n; i++)
        for (pp = 0; pp < p; pp++)
            for (qq = 0; qq < q; qq++)
                for (c = 0; c < ch; c++) {
                    int h0 = pp * sh - d->pad[0], w0 = qq * sw - d->pad[2], cnt = 0;
                    double acc = d->op == GPUML_POOL_MAX ? -INFINITY : 0.0, g, a = 0;
                    for (hh = h0; hh < h0 + wh; hh++)
                        for (wi2 = w0; wi2 < w0 + ww; wi2++) {
                            double v;
                            if (hh < 0 || hh >= h || wi2 < 0 || wi2 >= w) continue;
                            v = xv[ai(&lc, ch, h, w, i, hh, wi2, c)];
                            if (d->op == GPUML_POOL_MAX) acc = v > acc || v != v ? v : acc; else { acc += v; a += fabs(v); }
                            cnt++;
                        }
                    if (d->op == GPUML_POOL_AVG) {
                        if (d->count_include_pad) {
                            int he = h0 + wh < h + d->pad[1] ? h0 + wh : h + d->pad[1], we = w0 + ww < w + d->pad[3] ? w0 + ww : w + d->pad[3];
                            cnt = (he - h0) * (we - w0);
                        }
                        acc /= cnt; a /= cnt;
                    }
                    g = got[ai(&lc, ch, p, q, i, pp, qq, c)];
                    if (!tu_close(name, &g, &acc, 1, tol_of(dt), tol_of(dt) * a + 1e-6)) goto done;
                }
done:
    free(xv); free(got);
    gpuml_tensor_free(x); gpuml_tensor_free(y);
}
/* d's window (up to maxw), stride and padding at random; 0 where the output would be empty */
static int rand_pool_window(gpuml_pool2d_desc *d, int h, int w, int maxw)
{
    int j;
    d->window[0] = irand(1, maxw); d->window[1] = irand(1, maxw);
    d->stride[0] = irand(0, 3); d->stride[1] = irand(0, 3);
    for (j = 0; j < 4; j++) d->pad[j] = irand(0, d->window[j / 2] - 1);
    return gpuml_conv2d_out_dim(h, d->window[0], d->stride[0] ? d->stride[0] : d->window[0], d->pad[0], d->pad[1], 1) > 0 &&
           gpuml_conv2d_out_dim(w, d->window[1], d->stride[1] ? d->stride[1] : d->window[1], d->pad[2], d->pad[3], 1) > 0;
}
/* case i of a pooling fuzz: op, layout and count mode from i's bits, every 8th global, else a
   random window up to maxw, stride (0: the window) and padding; 0 where the output would be empty */
static int rand_pool(gpuml_pool2d_desc *d, int i, int h, int w, int maxw)
{
    memset(d, 0, sizeof *d);
    d->op = (gpuml_pool_op)(i & 1); d->layout = (gpuml_layout)((i >> 1) & 1);
    d->count_include_pad = (i >> 2) & 1;
    if (i % 8 == 7) { d->global = 1; return 1; }
    return rand_pool_window(d, h, w, maxw);
}
static void test_pool(void)
{
    int ci, i;
    for (ci = 0; ci < nctx(); ci++)
        for (i = 0; i < 48; i++) {
            gpuml_pool2d_desc d;
            int h = irand(1, 9), w = irand(1, 9);
            if (!rand_pool(&d, i, h, w, 3)) continue;
#ifndef GPUML_NO_CUDA
            gpuml__pool_vec_force = ci && (i & 16) == 0;   /* half of the vector-channel NHWC cases (both ops) */
#endif
            {
                const int n = irand(1, 2), ch = (i & 10) == 0 ? 8 * irand(1, 3) + (i & 1) * 5 : irand(1, 5);
                run_pool(ctx_at(ci), cname(ci), n, ch, h, w, &d, FDT[(i / 3) % 3]);
                if (ci == 0) {   /* CPU: the channel-vector loops' scalar level, and the per-element loops */
                    gpuml__cpu_simd_ctl(0);
                    run_pool(tu_cpu, "cpu scalar", n, ch, h, w, &d, FDT[(i / 3) % 3]);
                    gpuml__cpu_simd_ctl(1);
                    run_pool(tu_cpu, "cpu avx2", n, ch, h, w, &d, FDT[(i / 3) % 3]);
                    gpuml__cpu_simd_ctl(-1);
                    if (d.layout == GPUML_LAYOUT_NCHW) {   /* NCHW forward: in planes by the ring of rows, by the transposed channel rows */
                        gpuml__cv_cpu_dw_flat = -1;
                        run_pool(tu_cpu, "cpu plane-row ring", n, ch, h, w, &d, FDT[(i / 3) % 3]);
                        gpuml__cpu_simd_ctl(0);
                        run_pool(tu_cpu, "cpu plane-row ring scalar", n, ch, h, w, &d, FDT[(i / 3) % 3]);
                        gpuml__cpu_simd_ctl(-1);
                        gpuml__cv_cpu_dw_flat = 0;
                        gpuml__pool_cpu_rows_nchw = 1;
                        run_pool(tu_cpu, "cpu transposed rows", n, ch, h, w, &d, FDT[(i / 3) % 3]);
                        gpuml__pool_cpu_rows_nchw = 0;
                    }
                    gpuml__pool_cpu_scalar = 1;
                    run_pool(tu_cpu, "cpu element loops", n, ch, h, w, &d, FDT[(i / 3) % 3]);
                    gpuml__pool_cpu_scalar = 0;
                }
            }
        }
#ifndef GPUML_NO_CUDA
    gpuml__pool_vec_force = 0;
#endif
}
/* ResNet's stem pooling (3x3 stride 2 pad 1 max) and the head (global average), real sizes */
static void test_pool_resnet(void)
{
    int ci;
    for (ci = 0; ci < nctx(); ci++) {
        gpuml_pool2d_desc d;
        memset(&d, 0, sizeof d);
        d.window[0] = d.window[1] = 3; d.stride[0] = d.stride[1] = 2; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1;
        run_pool(ctx_at(ci), cname(ci), 1, 64, 112, 112, &d, GPUML_F32);
        memset(&d, 0, sizeof d);
        d.op = GPUML_POOL_AVG; d.global = 1; d.layout = GPUML_LAYOUT_NCHW;
        run_pool(ctx_at(ci), cname(ci), 2, 2048, 7, 7, &d, GPUML_F16);
    }
}
/* gpuml_pool2d_backward against a float64 scatter of dy; special: x quantized to a few levels
   (ties), image 0 channel 0 all -Inf (each window's first in-image element), NaN in image 1 */
static void run_pool_bwd(gpuml_ctx *ctx, const char *cn, int n, int ch, int h, int w, const gpuml_pool2d_desc *d, gpuml_dtype dt,
                         int special)
{
    int wh = d->global ? h : d->window[0], ww = d->global ? w : d->window[1];
    int sh = d->stride[0] ? d->stride[0] : wh, sw = d->stride[1] ? d->stride[1] : ww;
    int p = (int)gpuml_conv2d_out_dim(h, wh, sh, d->pad[0], d->pad[1], 1), q = (int)gpuml_conv2d_out_dim(w, ww, sw, d->pad[2], d->pad[3], 1);
    int64_t xs[4], ys[4];
    gpuml_tensor *x, *dx, *dy;
    double *xv, *dyv, *got, *ref, *mag;
    long long nx, i;
    int b, pp, qq, c, hh, wi2;
    char name[300];
    cv_case lc;
    memset(&lc, 0, sizeof lc);
    lc.layout = (int)d->layout; lc.n = n;
    shape_act(&lc, ch, h, w, xs); shape_act(&lc, ch, p, q, ys);
    x = gpuml_tensor_new(ctx, dt, 4, xs); dx = gpuml_tensor_new(ctx, dt, 4, xs); dy = gpuml_tensor_new(ctx, dt, 4, ys);
    nx = gpuml_tensor_numel(x);
    xv = t_rand(x); dyv = t_rand(dy);
    if (special) {
        for (i = 0; i < nx; i++) xv[i] = floor(xv[i] * 3.0) / 3.0 + 0.125;   /* few levels: ties; exact in every dtype */
        for (hh = 0; hh < h; hh++)
            for (wi2 = 0; wi2 < w; wi2++) xv[ai(&lc, ch, h, w, 0, hh, wi2, 0)] = -INFINITY;
        if (n > 1) { xv[ai(&lc, ch, h, w, 1, h / 2, w / 2, 0)] = NAN; xv[ai(&lc, ch, h, w, 1, h - 1, w - 1, ch - 1)] = NAN; }
        t_write(x, xv);
    }
    poison(ctx, dx);
    snprintf(name, sizeof name, "pool2d_backward %s %s %s %s %dx%d window %dx%d stride %d,%d pad %d,%d,%d,%d incl %d global %d%s", cn,
             d->op ? "avg" : "max", gpuml_dtype_name(dt), d->layout ? "NCHW" : "NHWC", h, w, wh, ww, sh, sw, d->pad[0], d->pad[1],
             d->pad[2], d->pad[3], d->count_include_pad, d->global, special ? " special" : "");
    CHECK(gpuml_pool2d_backward(ctx, dx, dy, d->op == GPUML_POOL_MAX || special ? x : NULL, d) == GPUML_SUCCESS, "%s: %s", name,
          gpuml_last_error(ctx));
    got = t_read(dx);
    ref = (double *)calloc((size_t)nx + 1, sizeof(double)); mag = (double *)calloc((size_t)nx + 1, sizeof(double));
    for (b = 0; b < n; b++)
        for (pp = 0; pp < p; pp++)
            for (qq = 0; qq < q; qq++)
                for (c = 0; c < ch; c++) {
                    int h0 = pp * sh - d->pad[0], w0 = qq * sw - d->pad[2], cnt = 0;
                    int hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0, he = h0 + wh < h ? h0 + wh : h, we = w0 + ww < w ? w0 + ww : w;
                    double g = dyv[ai(&lc, ch, p, q, b, pp, qq, c)];
                    if (d->op == GPUML_POOL_MAX) {
                        double best = -INFINITY;
                        long long at = ai(&lc, ch, h, w, b, hs, ws, c);
                        for (hh = hs; hh < he; hh++)
                            for (wi2 = ws; wi2 < we; wi2++) {
                                double v = xv[ai(&lc, ch, h, w, b, hh, wi2, c)];
                                if (v > best || v != v) { best = v; at = ai(&lc, ch, h, w, b, hh, wi2, c); }
                            }
                        ref[at] += g; mag[at] += fabs(g);
                        continue;
                    }
                    if (d->count_include_pad) {
                        int hb = h0 + wh < h + d->pad[1] ? h0 + wh : h + d->pad[1], wb = w0 + ww < w + d->pad[3] ? w0 + ww : w + d->pad[3];
                        cnt = (hb - h0) * (wb - w0);
                    } else {
                        cnt = (he - hs) * (we - ws);
                    }
                    for (hh = hs; hh < he; hh++)
                        for (wi2 = ws; wi2 < we; wi2++) {
                            long long at = ai(&lc, ch, h, w, b, hh, wi2, c);
                            ref[at] += g / cnt; mag[at] += fabs(g / cnt);
                        }
                }
    for (i = 0; i < nx; i++)
        if (!tu_close(name, &got[i], &ref[i], 1, tol_of(dt), tol_of(dt) * mag[i] + 1e-6)) break;
    free(xv); free(dyv); free(got); free(ref); free(mag);
    gpuml_tensor_free(x); gpuml_tensor_free(dx); gpuml_tensor_free(dy);
}
static void test_pool_backward(void)
{
    int ci, i;
    for (ci = 0; ci < nctx(); ci++) {
        gpuml_pool2d_desc d;
        for (i = 0; i < 64; i++) {
            int h = irand(1, 11), w = irand(1, 11);
            if (!rand_pool(&d, i, h, w, 4)) continue;
            /* half the NHWC cases with channels in 16-byte vectors (the kernels' vector forms, forced on
               the GPU past the size rule for every other case) */
#ifndef GPUML_NO_CUDA
            gpuml__pool_vec_force = ci && i % 2 == 0;
#endif
            {
                const int n = irand(1, 3), ch = (i & 10) == 0 ? 8 * irand(1, 3) + (i & 1) * 5 : irand(1, 5);
                run_pool_bwd(ctx_at(ci), cname(ci), n, ch, h, w, &d, FDT[(i / 3) % 3], (i / 5) % 3 == 0);
                if (ci == 0) {   /* CPU: the channel-vector loops' scalar level, and the per-element loops */
                    gpuml__cpu_simd_ctl(0);
                    run_pool_bwd(tu_cpu, "cpu scalar", n, ch, h, w, &d, FDT[(i / 3) % 3], (i / 5) % 3 == 0);
                    gpuml__cpu_simd_ctl(-1);
                    if (d.layout == GPUML_LAYOUT_NCHW) {   /* the max in planes, else through the transposed channel rows */
                        gpuml__pool_cpu_rows_nchw = 1;
                        run_pool_bwd(tu_cpu, "cpu transposed rows", n, ch, h, w, &d, FDT[(i / 3) % 3], (i / 5) % 3 == 0);
                        gpuml__pool_cpu_rows_nchw = 0;
                    }
                    gpuml__pool_cpu_scalar = 1;
                    run_pool_bwd(tu_cpu, "cpu element loops", n, ch, h, w, &d, FDT[(i / 3) % 3], (i / 5) % 3 == 0);
                    gpuml__pool_cpu_scalar = 0;
                }
            }
        }
#ifndef GPUML_NO_CUDA
        gpuml__pool_vec_force = 0;
#endif
        /* ResNet's stem pooling (3x3 / 2, pad 1) and head (global average) at their sizes, odd sizes too */
        memset(&d, 0, sizeof d);
        d.window[0] = d.window[1] = 3; d.stride[0] = d.stride[1] = 2; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1;
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F32, 0);
        if (ci == 0) {   /* CPU: 600 channels (the channel loops' 512-channel tiles), 16-bit and f32, max and average */
            run_pool_bwd(tu_cpu, "cpu", 2, 600, 7, 6, &d, GPUML_BF16, 1);
            run_pool(tu_cpu, "cpu", 2, 600, 7, 6, &d, GPUML_F16);
            d.op = GPUML_POOL_AVG; d.count_include_pad = 1;
            run_pool_bwd(tu_cpu, "cpu", 2, 600, 7, 6, &d, GPUML_F32, 0);
            run_pool(tu_cpu, "cpu", 2, 600, 7, 6, &d, GPUML_BF16);
            d.op = GPUML_POOL_MAX; d.count_include_pad = 0;
        }
#ifndef GPUML_NO_CUDA
        gpuml__pool_vec_force = -1;   /* the scalar kernels on a shape the vector ones take */
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F16, 1);
        run_pool(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F16);
        gpuml__pool_vec_force = 1;    /* and the vector forms wherever they can run */
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F16, 1);
        run_pool(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F16);
        gpuml__pool_vec_force = 0;
#endif
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 24, 57, 113, &d, GPUML_BF16, 1);
        d.layout = GPUML_LAYOUT_NCHW;
        run_pool_bwd(ctx_at(ci), cname(ci), 3, 17, 37, 31, &d, GPUML_F16, 1);
        memset(&d, 0, sizeof d);
        d.op = GPUML_POOL_AVG; d.global = 1; d.layout = GPUML_LAYOUT_NCHW;
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 2048, 7, 7, &d, GPUML_F16, 0);
        d.op = GPUML_POOL_MAX; d.layout = GPUML_LAYOUT_NHWC;
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 33, 29, 23, &d, GPUML_F32, 1);
        run_pool_bwd(ctx_at(ci), cname(ci), 2, 64, 9, 11, &d, GPUML_BF16, 1);
        d.op = GPUML_POOL_AVG;
        run_pool_bwd(ctx_at(ci), cname(ci), 3, 128, 7, 7, &d, GPUML_F16, 0);
    }
}
/* NCHW rows that the run forms take (4 elements of a row a thread: gpuml_pool_r, gpuml_pool_arg_r,
   gpuml_pool_bwd_r; W and Q multiples of 4, dense tensors), each shape with the forms on (the rule)
   and off (the scalar kernels), every dtype, both ops and count modes, forward and backward; and
   the ResNet stem's max pool in f32 NCHW at its size.  On the CPU the same cases run once. */
static void test_pool_run(void)
{
    int ci, k, off;
    for (ci = 0; ci < nctx(); ci++) {
        gpuml_pool2d_desc d;
        for (k = 0; k < 32; k++) {
            int h = irand(1, 9), w = 4 * irand(1, 5), n = irand(1, 2), ch = irand(1, 5), tries, q = 0;
            for (tries = 0; tries < 200; tries++) {
                memset(&d, 0, sizeof d);
                d.op = (gpuml_pool_op)(k & 1); d.layout = GPUML_LAYOUT_NCHW; d.count_include_pad = (k >> 1) & 1;
                if (!rand_pool_window(&d, h, w, 4)) continue;
                q = (int)gpuml_conv2d_out_dim(w, d.window[1], d.stride[1] ? d.stride[1] : d.window[1], d.pad[2], d.pad[3], 1);
                if (k % 4 == 3 || q % 4 == 0) break;   /* every 4th: Q not a multiple of 4 (the backward's run form only) */
            }
            CHECK(tries < 200, "pool_run: no shape found for case %d", k);
            for (off = 0; off < (ci ? 2 : 1); off++) {
#ifndef GPUML_NO_CUDA
                long before = gpuml__pool_run_calls;
                gpuml__pool_run_force = off ? -1 : 0;
#endif
                run_pool(ctx_at(ci), cname(ci), n, ch, h, w, &d, FDT[k % 3]);
#ifndef GPUML_NO_CUDA
                /* on the GPU with the forms on: the forward's where Q % 4 == 0 */
                CHECK(gpuml__pool_run_calls - before == (ci && !off && q % 4 == 0), "pool_run case %d: %ld run-form launches in the forward",
                      k, gpuml__pool_run_calls - before);
                before = gpuml__pool_run_calls;
#endif
                run_pool_bwd(ctx_at(ci), cname(ci), n, ch, h, w, &d, FDT[k % 3], k % 5 == 0);
#ifndef GPUML_NO_CUDA
                /* the backward's gather (W % 4 == 0 here) and, for max, the index pass where Q % 4 == 0 */
                CHECK(gpuml__pool_run_calls - before == (ci && !off) * (1 + (d.op == GPUML_POOL_MAX && q % 4 == 0)),
                      "pool_run case %d: %ld run-form launches in the backward", k, gpuml__pool_run_calls - before);
#endif
            }
        }
        memset(&d, 0, sizeof d);
        d.window[0] = d.window[1] = 3; d.stride[0] = d.stride[1] = 2; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = 1;
        d.layout = GPUML_LAYOUT_NCHW;
        for (off = 0; off < (ci ? 2 : 1); off++) {
#ifndef GPUML_NO_CUDA
            gpuml__pool_run_force = off ? -1 : 0;
#endif
            run_pool(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F32);
            run_pool_bwd(ctx_at(ci), cname(ci), 2, 64, 112, 112, &d, GPUML_F32, 1);
        }
#ifndef GPUML_NO_CUDA
        gpuml__pool_run_force = 0;
#endif
    }
}
/* the header's recipe for PyTorch's ceil_mode (the extra last window as bottom / right padding)
   against a float64 reference written from PyTorch's definition: P = ceil((H + 2p - k) / s) + 1,
   less one where the last window would start past H + p; windows clipped to the image; average
   divided by the in-image count (count_include_pad off).  Max and average, both layouts. */
static void test_pool_ceil_mode(void)
{
    /* H = W, k, s, p: an extra row (112, 7, 8, 11), PyTorch's last-window rule (5, 14) */
    static const int S[][4] = { { 112, 3, 2, 1 }, { 7, 2, 2, 0 }, { 8, 3, 2, 0 }, { 11, 2, 2, 0 }, { 5, 2, 2, 1 }, { 14, 5, 4, 2 } };
    int ci, l, op, lay;
    for (ci = 0; ci < nctx(); ci++)
        for (l = 0; l < (int)(sizeof S / sizeof S[0]); l++)
            for (op = 0; op < 2; op++)
                for (lay = 0; lay < 2; lay++) {
                    const int H = S[l][0], k = S[l][1], st = S[l][2], pd = S[l][3], n = 2, ch = 3;
                    int P = (H + 2 * pd - k + st - 1) / st + 1, extra, i, pp, qq, c, hh, ww;
                    gpuml_pool2d_desc d;
                    cv_case lc;
                    int64_t xs[4], ys[4];
                    gpuml_tensor *x, *y;
                    double *xv, *got;
                    if ((P - 1) * st >= H + pd) P--;
                    extra = (P - 1) * st + k - (H + 2 * pd);
                    memset(&d, 0, sizeof d);
                    d.op = (gpuml_pool_op)op; d.layout = (gpuml_layout)lay;
                    d.window[0] = d.window[1] = k; d.stride[0] = d.stride[1] = st;
                    d.pad[0] = d.pad[2] = pd; d.pad[1] = d.pad[3] = pd + (extra > 0 ? extra : 0);
                    CHECK(gpuml_conv2d_out_dim(H, k, st, d.pad[0], d.pad[1], 1) == P, "ceil_mode case %d: %lld rows out, PyTorch %d", l,
                          (long long)gpuml_conv2d_out_dim(H, k, st, d.pad[0], d.pad[1], 1), P);
                    memset(&lc, 0, sizeof lc);
                    lc.layout = lay; lc.n = n;
                    shape_act(&lc, ch, H, H, xs); shape_act(&lc, ch, P, P, ys);
                    x = gpuml_tensor_new(ctx_at(ci), GPUML_F32, 4, xs); y = gpuml_tensor_new(ctx_at(ci), GPUML_F32, 4, ys);
                    xv = t_rand(x);
                    poison(ctx_at(ci), y);
                    CHECK(gpuml_pool2d(ctx_at(ci), y, x, &d) == GPUML_SUCCESS, "ceil_mode case %d: %s", l, gpuml_last_error(ctx_at(ci)));
                    got = t_read(y);
                    for (i = 0; i < n; i++)
                        for (pp = 0; pp < P; pp++)
                            for (qq = 0; qq < P; qq++)
                                for (c = 0; c < ch; c++) {
                                    double acc = op ? 0.0 : -INFINITY, g;
                                    int cnt = 0;
                                    for (hh = pp * st - pd; hh < pp * st - pd + k; hh++)
                                        for (ww = qq * st - pd; ww < qq * st - pd + k; ww++) {
                                            double v;
                                            if (hh < 0 || hh >= H || ww < 0 || ww >= H) continue;
                                            v = xv[ai(&lc, ch, H, H, i, hh, ww, c)];
                                            acc = op ? acc + v : (v > acc ? v : acc);
                                            cnt++;
                                        }
                                    if (op) acc /= cnt;
                                    g = got[ai(&lc, ch, P, P, i, pp, qq, c)];
                                    if (!tu_close("pool2d ceil_mode", &g, &acc, 1, 1e-5, 1e-6)) goto next;
                                }
next:
                    free(xv); free(got);
                    gpuml_tensor_free(x); gpuml_tensor_free(y);
                }
}
/* the bias gradient is a gpuml_reduce over N, H, W (documented recipe) */
/* a residual given as y itself (in place, the only overlap allowed): the same values as with a separate
   copy of it, on each context, f32 and f16, NHWC and NCHW, 3x3 padded and 1x1 (the CPU's f32 GEMM used
   to write y in place and overwrite the residual before the epilogue read it) */
static void residual_in_place(void)
{
    static const int L[2][3] = { { 3, 1, 32 }, { 1, 0, 48 } };   /* r, pad, c */
    int ci, di, lay, l;
    for (ci = 0; ci < nctx(); ci++)
        for (di = 0; di < 2; di++)
            for (lay = 0; lay < 2; lay++)
                for (l = 0; l < 2; l++) {
                    gpuml_ctx *ctx = ctx_at(ci);
                    gpuml_dtype dt = di ? GPUML_F16 : GPUML_F32;
                    const int r = L[l][0], pad = L[l][1], c = L[l][2], k = 40;
                    int64_t xs[4] = { 2, 9, 11, c }, ws[4] = { k, r, r, c }, ys[4] = { 2, 9, 11, k }, bs[1] = { k };
                    gpuml_tensor *x, *w, *y, *y2, *res, *b;
                    gpuml_conv2d_desc d;
                    double *want, *got, *rv;
                    long long i, bad, first;
                    char what[160];
                    if (lay) { xs[1] = c; xs[2] = 9; xs[3] = 11; ys[1] = k; ys[2] = 9; ys[3] = 11; ws[1] = c; ws[2] = ws[3] = r; }
                    x = gpuml_tensor_new(ctx, dt, 4, xs); w = gpuml_tensor_new(ctx, dt, 4, ws); y = gpuml_tensor_new(ctx, dt, 4, ys);
                    y2 = gpuml_tensor_new(ctx, dt, 4, ys); res = gpuml_tensor_new(ctx, dt, 4, ys); b = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
                    free(t_rand(x)); free(t_rand(w)); free(t_rand(res)); free(t_rand(b));
                    memset(&d, 0, sizeof d);
                    d.stride[0] = d.stride[1] = 1; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = pad; d.groups = 1;
                    d.layout = (gpuml_layout)lay; d.bias = b; d.act = GPUML_ACT_RELU; d.residual = res;
                    CHECK(gpuml_conv2d(ctx, y, x, w, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                    CHECK(gpuml_copy(ctx, y2, res) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                    d.residual = y2;
                    CHECK(gpuml_conv2d(ctx, y2, x, w, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                    want = t_read(y); got = t_read(y2); rv = t_read(res);
                    snprintf(what, sizeof what, "%s %s %s %dx%d residual in place", cname(ci), gpuml_dtype_name(dt), lay ? "NCHW" : "NHWC", r, r);
                    /* the tolerance scales with the residual too: a path may round the conv's sum to the
                       dtype before adding the residual (as an unfused conv + add would; the GPU's f16
                       NCHW GEMM path did until residual_one_rounding), and where the two cancel the
                       result keeps only that rounding */
                    for (i = 0, bad = 0, first = -1; i < gpuml_tensor_numel(y); i++)
                        if (!(fabs(got[i] - want[i]) <= tol_of(dt) * (fabs(want[i]) + fabs(rv[i])) + tol_of(dt) * 1e-1)) {
                            if (first < 0) first = i;
                            bad++;
                        }
                    CHECK(bad == 0, "%s: %lld of %lld elements off (first at %lld: got %.9g, want %.9g, residual %.9g)", what, bad,
                          (long long)gpuml_tensor_numel(y), first, first >= 0 ? got[first] : 0.0, first >= 0 ? want[first] : 0.0,
                          first >= 0 ? rv[first] : 0.0);
                    free(want); free(got); free(rv);
                    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(y2);
                    gpuml_tensor_free(res); gpuml_tensor_free(b);
                }
}

/* y = residual + act(conv + bias), 16-bit: one rounding of the sum into y.  The residual cancels
   act(conv + bias) to within a small d (residual = -act(...) + d, rounded), so y is small and a
   path that rounded the conv to f16/bf16 before the epilogue would be off by up to half an ulp of
   the conv (4.9e-4 of it in f16) instead of half an ulp of y; allowed: half an ulp of y plus 2e-5
   of the sum of |terms| (f32 accumulation).  Each context, f16 and bf16, NCHW and NHWC, 1x1 and
   3x3 padded, act none and ReLU, with and without a bias. */
static void residual_one_rounding(void)
{
    int ci, di, lay, l, act, bi;
    for (ci = 0; ci < nctx(); ci++)
        for (di = 0; di < 2; di++)
            for (lay = 0; lay < 2; lay++)
                for (l = 0; l < 2; l++)
                    for (act = 0; act < 4; act++) {
                        gpuml_ctx *ctx = ctx_at(ci);
                        cv_case c;
                        int64_t xs[4], wsh[4], ysh[4];
                        gpuml_tensor *x, *w, *y, *res, *bias = NULL;
                        int64_t bs[1];
                        double *bv = NULL;
                        gpuml_conv2d_desc d;
                        double *xv, *wv, *rv, *got, *cv, *as;
                        long long i, ny, bad = 0, first = -1;
                        char what[160];
                        memset(&c, 0, sizeof c);
                        c.n = 2; c.c = 24; c.h = 7; c.w = 9; c.k = 20; c.r = c.s = l ? 3 : 1; c.sh = c.sw = 1; c.dh = c.dw = 1;
                        c.pad[0] = c.pad[1] = c.pad[2] = c.pad[3] = l; c.groups = 1; c.layout = lay; c.act = act & 1 ? GPUML_ACT_RELU : 0;
                        bi = act >> 1;
                        c.res = 1; c.dt = di ? GPUML_BF16 : GPUML_F16;
                        cv_out(&c);
                        shape_act(&c, c.c, c.h, c.w, xs); shape_w(&c, wsh); shape_act(&c, c.k, c.p, c.q, ysh);
                        x = gpuml_tensor_new(ctx, c.dt, 4, xs); w = gpuml_tensor_new(ctx, c.dt, 4, wsh);
                        y = gpuml_tensor_new(ctx, c.dt, 4, ysh); res = gpuml_tensor_new(ctx, c.dt, 4, ysh);
                        xv = t_rand(x); wv = t_rand(w);
                        if (bi) { bs[0] = c.k; bias = gpuml_tensor_new(ctx, GPUML_F32, 1, bs); bv = t_rand(bias); }
                        ny = gpuml_tensor_numel(y);
                        cv = (double *)malloc(sizeof(double) * (size_t)ny); as = (double *)malloc(sizeof(double) * (size_t)ny);
                        rv = (double *)malloc(sizeof(double) * (size_t)ny);
                        for (i = 0; i < ny; i++) {
                            long long t = i;
                            int n, p, q, k;
                            if (c.layout) { q = (int)(t % c.q); t /= c.q; p = (int)(t % c.p); t /= c.p; k = (int)(t % c.k); n = (int)(t / c.k); }
                            else { k = (int)(t % c.k); t /= c.k; q = (int)(t % c.q); t /= c.q; p = (int)(t % c.p); n = (int)(t / c.p); }
                            cv[i] = ref_y(&c, xv, wv, n, p, q, k, &as[i]);
                            if (bv) { cv[i] += bv[k]; as[i] += fabs(bv[k]); }
                            rv[i] = round_to(c.dt, -act_ref(c.act, cv[i]) + 0.05 * tu_rand());
                        }
                        t_write(res, rv);
                        memset(&d, 0, sizeof d);
                        d.stride[0] = d.stride[1] = 1; d.pad[0] = d.pad[1] = d.pad[2] = d.pad[3] = l; d.groups = 1;
                        d.layout = (gpuml_layout)lay; d.act = (gpuml_activation)c.act; d.residual = res; d.bias = bias;
                        poison(ctx, y);
                        CHECK(gpuml_conv2d(ctx, y, x, w, &d) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
                        got = t_read(y);
                        for (i = 0; i < ny; i++) {
                            double want = act_ref(c.act, cv[i]) + rv[i];
                            if (!(fabs(got[i] - want) <= (di ? 3.95e-3 : 4.9e-4) * fabs(want) + 2e-5 * (as[i] + fabs(rv[i])) + 1e-7)) {
                                if (first < 0) first = i;
                                bad++;
                            }
                        }
                        snprintf(what, sizeof what, "%s %s %s %dx%d act %d%s", cname(ci), gpuml_dtype_name(c.dt), lay ? "NCHW" : "NHWC", c.r, c.r, c.act,
                                 bi ? " bias" : "");
                        CHECK(bad == 0, "%s: %lld of %lld elements off one rounding of conv + residual (first at %lld: got %.9g, want %.9g, "
                              "conv %.9g)", what, bad, ny, first, first >= 0 ? got[first] : 0.0,
                              first >= 0 ? act_ref(c.act, cv[first]) + rv[first] : 0.0, first >= 0 ? cv[first] : 0.0);
                        free(xv); free(wv); free(rv); free(got); free(cv); free(as); free(bv);
                        gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(res); gpuml_tensor_free(bias);
                    }
}

static void test_bias_grad(void)
{
    int ci;
    for (ci = 0; ci < nctx(); ci++) {
        gpuml_ctx *ctx = ctx_at(ci);
        int64_t ys[4] = {3, 4, 5, 6}, bs[1] = {6};
        int axes[3] = {0, 1, 2}, i, k;
        gpuml_tensor *dy = gpuml_tensor_new(ctx, GPUML_F32, 4, ys), *db = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
        double *v = t_rand(dy), *got, ref[6];
        CHECK(gpuml_reduce(ctx, GPUML_REDUCE_SUM, db, dy, axes, 3, 0) == GPUML_SUCCESS, "%s", gpuml_last_error(ctx));
        got = t_read(db);
        for (k = 0; k < 6; k++) { ref[k] = 0; for (i = 0; i < 60; i++) ref[k] += v[i * 6 + k]; }
        tu_close("bias gradient", got, ref, 6, 1e-5, 1e-5);
        free(v); free(got);
        gpuml_tensor_free(dy); gpuml_tensor_free(db);
    }
}

static void test_errors(void)
{
    gpuml_ctx *ctx = tu_cpu;
    int64_t xs[4] = {2, 8, 8, 4}, ws[4] = {6, 3, 3, 4}, ys[4] = {2, 6, 6, 6}, bs[1] = {5}, is[4] = {2, 8, 8, 4};
    gpuml_tensor *x = gpuml_tensor_new(ctx, GPUML_F32, 4, xs), *w = gpuml_tensor_new(ctx, GPUML_F32, 4, ws);
    gpuml_tensor *y = gpuml_tensor_new(ctx, GPUML_F32, 4, ys), *b5 = gpuml_tensor_new(ctx, GPUML_F32, 1, bs);
    gpuml_tensor *xi = gpuml_tensor_new(ctx, GPUML_I32, 4, is), *wh = gpuml_tensor_new(ctx, GPUML_F16, 4, ws);
    gpuml_tensor *x3 = gpuml_tensor_new(ctx, GPUML_F32, 3, xs), *yv;
    gpuml_conv2d_desc d;
    gpuml_pool2d_desc pd;
    int64_t big[4] = {2, 8, 8, 12};
    gpuml_tensor *xg = gpuml_tensor_new(ctx, GPUML_F32, 4, big);
    memset(&d, 0, sizeof d);
    CHECK(gpuml_conv2d(ctx, y, x, w, &d) == GPUML_SUCCESS, "valid call: %s", gpuml_last_error(ctx));
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, NULL), GPUML_SUCCESS, NULL);
    d.pad[0] = -1;
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_INVALID_ARGUMENT, "padding");
    memset(&d, 0, sizeof d);
    d.dilation[0] = 5;   /* span 11 > 8: empty output */
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "empty");
    memset(&d, 0, sizeof d);
    d.groups = 3;        /* 4 channels */
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "divisible by groups");
    d.groups = 2;        /* w has 4 channels per group, 2 needed */
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "per group");
    memset(&d, 0, sizeof d);
    d.stride[0] = 2;     /* y should be 3 rows */
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "but x");
    memset(&d, 0, sizeof d);
    d.layout = GPUML_LAYOUT_NCHW;   /* x read as NCHW has 8 channels, w has 3 per group: mismatched layout */
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "KCRS");
    d.layout = (gpuml_layout)7;
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_INVALID_ARGUMENT, "layout");
    memset(&d, 0, sizeof d);
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, xi, w, &d), GPUML_ERROR_DTYPE, "f32, f16 or bf16");
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, wh, &d), GPUML_ERROR_DTYPE, "must match");
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x3, w, &d), GPUML_ERROR_SHAPE, "4-D");
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, NULL, w, &d), GPUML_ERROR_INVALID_ARGUMENT, "NULL");
    d.bias = b5;
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "bias");
    CHECK_STATUS(ctx, gpuml_conv2d_backward_data(ctx, x, y, w, &d), GPUML_ERROR_INVALID_ARGUMENT, "forward pass");
    memset(&d, 0, sizeof d);
    d.path = GPUML_CONV_DIRECT;
    CHECK_STATUS(ctx, gpuml_conv2d(ctx, y, x, w, &d), GPUML_ERROR_NOT_SUPPORTED, "GPU kernel");
    memset(&d, 0, sizeof d);
    /* y as a view into x's own storage: aliasing */
    {
        int64_t vs[4] = {2, 6, 6, 6}, vst[4] = {6 * 6 * 6, 36, 6, 1};
        gpuml_tensor v = gpuml__cv_view(xg, 4, vs, vst, 0), xv = gpuml__cv_view(xg, 4, xs, xg->strides, 0);
        yv = &v;
        xv.shape[3] = 4;
        CHECK_STATUS(ctx, gpuml_conv2d(ctx, yv, &xv, w, &d), GPUML_ERROR_ALIAS, "overlaps");
    }
    memset(&pd, 0, sizeof pd);
    CHECK_STATUS(ctx, gpuml_pool2d(ctx, y, x, &pd), GPUML_ERROR_INVALID_ARGUMENT, "window");
    pd.window[0] = pd.window[1] = 2; pd.pad[0] = 2;
    CHECK_STATUS(ctx, gpuml_pool2d(ctx, y, x, &pd), GPUML_ERROR_INVALID_ARGUMENT, "below the window");
    pd.pad[0] = 0;
    CHECK_STATUS(ctx, gpuml_pool2d(ctx, y, x, &pd), GPUML_ERROR_SHAPE, "gives");
    /* pool2d_backward: dy of the wrong shape, max without x, x of another shape, dx overlapping dy */
    pd.window[0] = pd.window[1] = 2;
    {
        int64_t ps[4] = {2, 4, 4, 4};
        gpuml_tensor *py = gpuml_tensor_new(ctx, GPUML_F32, 4, ps), *pxh = gpuml_tensor_new(ctx, GPUML_F16, 4, xs);
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, y, x, &pd), GPUML_ERROR_SHAPE, "gives");
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, py, NULL, &pd), GPUML_ERROR_INVALID_ARGUMENT, "x");
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, py, xg, &pd), GPUML_ERROR_SHAPE, "must match");
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, py, pxh, &pd), GPUML_ERROR_DTYPE, NULL);
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, py, x, &pd), GPUML_ERROR_ALIAS, "dx overlaps x");
        pd.op = GPUML_POOL_AVG;
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, py, NULL, &pd), GPUML_SUCCESS, NULL);
        pd.op = (gpuml_pool_op)5;
        CHECK_STATUS(ctx, gpuml_pool2d_backward(ctx, x, py, NULL, &pd), GPUML_ERROR_INVALID_ARGUMENT, "pooling op");
        gpuml_tensor_free(py); gpuml_tensor_free(pxh);
    }
    CHECK_STATUS(ctx, gpuml_conv1d(ctx, y, x, w, &d), GPUML_ERROR_SHAPE, "3-D");
    gpuml_tensor_free(x); gpuml_tensor_free(w); gpuml_tensor_free(y); gpuml_tensor_free(b5); gpuml_tensor_free(xi);
    gpuml_tensor_free(wh); gpuml_tensor_free(x3); gpuml_tensor_free(xg);
}

int main(int argc, char **argv)
{
    static const tu_test tests[] = {
        { "errors", test_errors },
        { "fuzz_forward", test_fuzz_forward },
        { "fuzz_backward", test_fuzz_backward },
        { "backward_layers", test_backward_layers },
        { "bwd_data_up2", test_bwd_data_up2 },
        { "bwf_sm90", test_bwf_sm90 },
        { "bwf_conv", test_bwf_conv }, { "bwf_1x1", test_bwf_1x1 }, { "bwf_1x1_wgmma", test_bwf_1x1_wgmma }, { "bwf_1x1_specials", test_bwf_1x1_specials }, { "bwd_data_phases", test_bwd_data_phases },
        { "bwd_data_wflip", test_bwd_data_wflip },
        { "depthwise", test_depthwise },
        { "depthwise3x3", test_depthwise3x3 },
        { "depthwise3x3_cfg", test_depthwise3x3_cfg },
        { "depthwise3x3_staged", test_depthwise3x3_staged },
        { "depthwise3x3_flat", test_depthwise3x3_flat },
        { "cpu_special", test_cpu_special },
        { "cpu_implicit", test_cpu_implicit }, { "cpu_backward_paths", test_cpu_backward_paths },
        { "cpu_depthwise_planes", test_cpu_depthwise_planes },
        { "forced_igemm", test_forced_igemm }, { "forced_wgmma", test_forced_wgmma },
        { "finite_differences", test_finite_differences },
        { "views", test_views },
        { "conv1d", test_conv1d },
        { "resnet_layers", test_resnet_layers },
        { "pool", test_pool },
        { "pool_resnet", test_pool_resnet },
        { "pool_backward", test_pool_backward },
        { "pool_run", test_pool_run },
        { "pool_ceil_mode", test_pool_ceil_mode },
        { "bias_grad", test_bias_grad },
        { "residual_in_place", residual_in_place },
        { "residual_one_rounding", residual_one_rounding },
    };
    return TU_RUN("test_conv", tests, argc, argv);
}
