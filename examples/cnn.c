/* cnn: the forward pass of a small convolutional network with gpuml, checked against a
   float64 computation on the host.

       make examples
       ./build/cnn [--backend auto|cpu|cuda] [--dtype f32|f16|bf16] [--batch N] [--seed S]
       GPUML_PROFILE=1 ./build/cnn        (prints gpuml's per-op profile at the end)

   The network (NHWC activations, KRSC weights, random He-initialized weights):
       x [N,32,32,3]
       conv 3x3, 16 channels, pad 1, + bias, ReLU (fused)     -> [N,32,32,16]
       max pool 2x2                                            -> [N,16,16,16]
       conv 3x3, 32 channels, pad 1, + bias, ReLU              -> [N,16,16,32]
       max pool 2x2                                            -> [N,8,8,32]
       conv 3x3, 64 channels, stride 2, pad 1, + bias, ReLU    -> [N,4,4,64]
       global average pool                                     -> [N,1,1,64]
       linear 64 -> 10 (matmul + bias), softmax                -> [N,10]
   It prints the predicted class of the first images, the time of one forward pass (after a
   warm-up that includes the kernels' JIT compiles), and compares every probability with the
   float64 reference computed from the same (rounded) weights and inputs.  Last line:
       result: ms=... max_err=... check=ok|FAILED
   Exit status: 0 done, 1 a gpuml call or the check failed, 2 bad arguments, 77 the asked-for
   backend is not usable here. */
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

/* stops with the failing call and gpuml's message */
#define TRY(call) do { if ((call) != GPUML_SUCCESS) { fprintf(stderr, "cnn: %s failed: %s\n", #call, gpuml_last_error(ctx)); exit(1); } } while (0)

static gpuml_tensor *tensor(gpuml_dtype dt, int n0, int n1, int n2, int n3, int ndim)
{
    int64_t s[4];
    gpuml_tensor *t;
    s[0] = n0; s[1] = n1; s[2] = n2; s[3] = n3;
    t = gpuml_tensor_new(ctx, dt, ndim, s);
    if (!t) { fprintf(stderr, "cnn: gpuml_tensor_new failed: %s\n", gpuml_last_error(ctx)); exit(1); }
    return t;
}

/* a tensor's values as doubles (through an f32 copy: works for every float dtype) */
static double *to_host(gpuml_tensor *t)
{
    int64_t n = gpuml_tensor_numel(t), i;
    int64_t s[8];
    int d, nd = gpuml_tensor_ndim(t);
    gpuml_tensor *f;
    float *buf = (float *)malloc(sizeof(float) * (size_t)n);
    double *v = (double *)malloc(sizeof(double) * (size_t)n);
    for (d = 0; d < nd; d++) s[d] = gpuml_tensor_dim(t, d);
    f = gpuml_tensor_new(ctx, GPUML_F32, nd, s);
    if (!buf || !v || !f) { fprintf(stderr, "cnn: out of memory\n"); exit(1); }
    TRY(gpuml_copy(ctx, f, t));
    TRY(gpuml_tensor_read(f, buf, sizeof(float) * (size_t)n));
    for (i = 0; i < n; i++) v[i] = buf[i];
    gpuml_tensor_free(f);
    free(buf);
    return v;
}

/* ---- the float64 reference (NHWC, KRSC) ---- */
static double *ref_conv(const double *x, int N, int H, int W, int C, const double *w, const double *b, int K, int R,
                        int stride, int pad, int *P_, int *Q_)
{
    int P = (H + 2 * pad - R) / stride + 1, Q = (W + 2 * pad - R) / stride + 1, n, p, q, k, r, s, c;
    double *y = (double *)malloc(sizeof(double) * (size_t)N * P * Q * K);
    for (n = 0; n < N; n++) for (p = 0; p < P; p++) for (q = 0; q < Q; q++) for (k = 0; k < K; k++) {
        double acc = b[k];
        for (r = 0; r < R; r++) for (s = 0; s < R; s++) {
            int h = p * stride - pad + r, ww = q * stride - pad + s;
            if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
            for (c = 0; c < C; c++) acc += x[(((size_t)n * H + h) * W + ww) * C + c] * w[(((size_t)k * R + r) * R + s) * C + c];
        }
        y[(((size_t)n * P + p) * Q + q) * K + k] = acc > 0 ? acc : 0;   /* ReLU */
    }
    *P_ = P; *Q_ = Q;
    return y;
}
static double *ref_maxpool2(const double *x, int N, int H, int W, int C)
{
    int n, p, q, c, P = H / 2, Q = W / 2;
    double *y = (double *)malloc(sizeof(double) * (size_t)N * P * Q * C);
    for (n = 0; n < N; n++) for (p = 0; p < P; p++) for (q = 0; q < Q; q++) for (c = 0; c < C; c++) {
        double m = -INFINITY;
        int i, j;
        for (i = 0; i < 2; i++) for (j = 0; j < 2; j++) {
            double v = x[(((size_t)n * H + 2 * p + i) * W + 2 * q + j) * C + c];
            if (v > m) m = v;
        }
        y[(((size_t)n * P + p) * Q + q) * C + c] = m;
    }
    return y;
}

int main(int argc, char **argv)
{
    gpuml_desc desc;
    gpuml_dtype dt = GPUML_F32;
    int N = 8, i, k, n, it, iters = 5;
    unsigned seed = 1;
    const char *backend = "auto";
    /* layer sizes */
    static const int CH[4] = { 3, 16, 32, 64 };
    gpuml_tensor *x, *w[3], *b[3], *a1, *p1, *a2, *p2, *a3, *g, *fc, *fcb, *logits, *probs;
    gpuml_conv2d_desc cd[3];
    gpuml_pool2d_desc mp, gp;
    gpuml_matmul_desc md;
    double t0 = 0, ms, max_err = 0, tol;
    double *hx, *hw[3], *hb[3], *hfc, *hfcb, *hp, *r1, *r2, *r3, *r4, *r5, *tmp;
    int P, Q, ok;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            const char *d = argv[++i];
            if (!strcmp(d, "f32")) dt = GPUML_F32;
            else if (!strcmp(d, "f16")) dt = GPUML_F16;
            else if (!strcmp(d, "bf16")) dt = GPUML_BF16;
            else { fprintf(stderr, "cnn: unknown dtype %s (f32, f16, bf16)\n", d); return 2; }
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = (unsigned)strtoul(argv[++i], NULL, 10);
        else { fprintf(stderr, "usage: cnn [--backend auto|cpu|cuda] [--dtype f32|f16|bf16] [--batch N] [--seed S]\n"); return 2; }
    }
    if (N < 1 || N > 4096) { fprintf(stderr, "cnn: --batch must be 1..4096\n"); return 2; }
    memset(&desc, 0, sizeof desc);
    if (!strcmp(backend, "cpu")) desc.backend = GPUML_BACKEND_CPU;
    else if (!strcmp(backend, "cuda")) desc.backend = GPUML_BACKEND_CUDA;
    else if (strcmp(backend, "auto") != 0) { fprintf(stderr, "cnn: unknown backend %s\n", backend); return 2; }
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS) {
        fprintf(stderr, "cnn: gpuml_init: %s\n", gpuml_last_error(ctx));
        gpuml_shutdown(ctx);
        return 77;
    }
    printf("cnn on %s, %s, batch %d\n", gpuml_device_name(ctx), gpuml_dtype_name(dt), N);

    /* parameters: He-normal weights, small uniform biases (f32, as the epilogue takes them) */
    x = tensor(dt, N, 32, 32, 3, 4);
    TRY(gpuml_rand_normal(ctx, x, seed, 0.0, 1.0));
    for (k = 0; k < 3; k++) {
        w[k] = tensor(dt, CH[k + 1], 3, 3, CH[k], 4);
        b[k] = tensor(GPUML_F32, CH[k + 1], 0, 0, 0, 1);
        TRY(gpuml_rand_normal(ctx, w[k], seed * 100u + (unsigned)k, 0.0, sqrt(2.0 / (9.0 * CH[k]))));
        TRY(gpuml_rand_uniform(ctx, b[k], seed * 100u + 10u + (unsigned)k, -0.1, 0.1));
        memset(&cd[k], 0, sizeof cd[k]);
        cd[k].pad[0] = cd[k].pad[1] = cd[k].pad[2] = cd[k].pad[3] = 1;
        cd[k].bias = b[k];
        cd[k].act = GPUML_ACT_RELU;
    }
    cd[2].stride[0] = cd[2].stride[1] = 2;
    fc = tensor(dt, 64, 10, 0, 0, 2);
    fcb = tensor(GPUML_F32, 10, 0, 0, 0, 1);
    TRY(gpuml_rand_normal(ctx, fc, seed * 100u + 20u, 0.0, sqrt(1.0 / 64)));
    TRY(gpuml_rand_uniform(ctx, fcb, seed * 100u + 21u, -0.1, 0.1));
    /* activations */
    a1 = tensor(dt, N, 32, 32, 16, 4); p1 = tensor(dt, N, 16, 16, 16, 4);
    a2 = tensor(dt, N, 16, 16, 32, 4); p2 = tensor(dt, N, 8, 8, 32, 4);
    a3 = tensor(dt, N, 4, 4, 64, 4); g = tensor(dt, N, 1, 1, 64, 4);
    logits = tensor(GPUML_F32, N, 10, 0, 0, 2); probs = tensor(GPUML_F32, N, 10, 0, 0, 2);
    memset(&mp, 0, sizeof mp);
    mp.op = GPUML_POOL_MAX; mp.window[0] = mp.window[1] = 2;
    memset(&gp, 0, sizeof gp);
    gp.op = GPUML_POOL_AVG; gp.global = 1;
    memset(&md, 0, sizeof md);
    md.bias = fcb;

    /* the forward pass; the first run includes the kernels' JIT compiles */
    for (it = 0; it <= iters; it++) {
        gpuml_tensor *g2;
        int64_t s2[2];
        if (it == 1) { TRY(gpuml_sync(ctx)); t0 = now_s(); }
        TRY(gpuml_conv2d(ctx, a1, x, w[0], &cd[0]));
        TRY(gpuml_pool2d(ctx, p1, a1, &mp));
        TRY(gpuml_conv2d(ctx, a2, p1, w[1], &cd[1]));
        TRY(gpuml_pool2d(ctx, p2, a2, &mp));
        TRY(gpuml_conv2d(ctx, a3, p2, w[2], &cd[2]));
        TRY(gpuml_pool2d(ctx, g, a3, &gp));
        s2[0] = N; s2[1] = 64;
        g2 = gpuml_tensor_reshape(g, 2, s2);                     /* [N,1,1,64] -> [N,64] view */
        if (!g2) { fprintf(stderr, "cnn: reshape: %s\n", gpuml_last_error(ctx)); return 1; }
        TRY(gpuml_matmul(ctx, logits, g2, fc, &md));           /* logits in f32 for every dtype */
        TRY(gpuml_softmax(ctx, probs, logits, 1));
        gpuml_tensor_free(g2);
    }
    TRY(gpuml_sync(ctx));
    ms = (now_s() - t0) * 1e3 / iters;

    /* predictions */
    hp = to_host(probs);
    for (n = 0; n < N && n < 4; n++) {
        int best = 0;
        for (k = 1; k < 10; k++) if (hp[n * 10 + k] > hp[n * 10 + best]) best = k;
        printf("image %d: class %d (p = %.4f)\n", n, best, hp[n * 10 + best]);
    }
    printf("forward pass: %.3f ms (batch %d)\n", ms, N);

    /* the float64 reference from the same rounded parameters */
    hx = to_host(x);
    for (k = 0; k < 3; k++) { hw[k] = to_host(w[k]); hb[k] = to_host(b[k]); }
    hfc = to_host(fc); hfcb = to_host(fcb);
    r1 = ref_conv(hx, N, 32, 32, 3, hw[0], hb[0], 16, 3, 1, 1, &P, &Q);
    r2 = ref_maxpool2(r1, N, 32, 32, 16);
    tmp = ref_conv(r2, N, 16, 16, 16, hw[1], hb[1], 32, 3, 1, 1, &P, &Q);
    free(r1); r1 = tmp;
    r3 = ref_maxpool2(r1, N, 16, 16, 32);
    r4 = ref_conv(r3, N, 8, 8, 32, hw[2], hb[2], 64, 3, 2, 1, &P, &Q);   /* [N,4,4,64] */
    r5 = (double *)calloc((size_t)N * 10, sizeof(double));
    for (n = 0; n < N; n++) {
        double gap[64], mx = -INFINITY, sum = 0;
        int c, j;
        for (c = 0; c < 64; c++) { gap[c] = 0; for (j = 0; j < 16; j++) gap[c] += r4[((size_t)n * 16 + j) * 64 + c]; gap[c] /= 16; }
        for (k = 0; k < 10; k++) {
            double l = hfcb[k];
            for (c = 0; c < 64; c++) l += gap[c] * hfc[c * 10 + k];
            r5[n * 10 + k] = l;
            if (l > mx) mx = l;
        }
        for (k = 0; k < 10; k++) sum += (r5[n * 10 + k] = exp(r5[n * 10 + k] - mx));
        for (k = 0; k < 10; k++) r5[n * 10 + k] /= sum;
    }
    /* f32: the summation order differs; f16/bf16: every activation is rounded to 8-11 bits */
    tol = dt == GPUML_F32 ? 1e-5 : dt == GPUML_F16 ? 5e-3 : 2e-2;   /* measured on the CPU: 3e-7, 2.4e-4, 2.9e-3 */
    for (i = 0; i < N * 10; i++) if (fabs(hp[i] - r5[i]) > max_err) max_err = fabs(hp[i] - r5[i]);
    ok = max_err <= tol;
    printf("check: largest probability error %.3g against float64 (tolerance %.0e): %s\n", max_err, tol, ok ? "ok" : "FAILED");
    printf("result: ms=%.4f max_err=%.3g check=%s\n", ms, max_err, ok ? "ok" : "FAILED");

    free(hx); free(hfc); free(hfcb); free(hp); free(r1); free(r2); free(r3); free(r4); free(r5);
    for (k = 0; k < 3; k++) { free(hw[k]); free(hb[k]); gpuml_tensor_free(w[k]); gpuml_tensor_free(b[k]); }
    gpuml_tensor_free(x); gpuml_tensor_free(a1); gpuml_tensor_free(p1); gpuml_tensor_free(a2); gpuml_tensor_free(p2);
    gpuml_tensor_free(a3); gpuml_tensor_free(g); gpuml_tensor_free(fc); gpuml_tensor_free(fcb);
    gpuml_tensor_free(logits); gpuml_tensor_free(probs);
    gpuml_shutdown(ctx);   /* prints the profile table here when GPUML_PROFILE=1 */
    return ok ? 0 : 1;
}
