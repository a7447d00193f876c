/* train_mlp: trains a multilayer perceptron on a dataset it generates (interleaved spirals),
   with gpuml's forward ops, backward ops and AdamW, and prints the loss falling and the final
   train and test accuracy.  The same seed gives the same data, the same initial weights and
   the same batches on the CPU and on a GPU, so the two runs differ only by rounding.

       make examples
       ./build/train_mlp [--backend auto|cpu|cuda] [--epochs N] [--seed S] [--act relu|gelu]
                         [--hidden H] [--batch B] [--lr LR] [--classes C] [--points P]
                         [--gradcheck]    (checks backprop against finite differences, then stops)

   The network:  x [B,2] -> Linear(2,H) -> act -> Linear(H,H) -> act -> Linear(H,C) -> logits
   trained with softmax cross-entropy.  Forward: gpuml_matmul with the fused bias (+ ReLU)
   epilogue.  Backward: gpuml_cross_entropy gives dlogits; dW = in^T @ dout (a matmul of a
   transposed view), db = gpuml_sum_to_shape(dout), d(in) = dout @ W^T, then
   gpuml_activation_backward.  Update: gpuml_adamw_step on every parameter.

   The last line is machine-readable (tests/test_examples.sh reads it):
       result: initial_loss=... final_loss=... train_acc=... test_acc=...
   Exit status: 0 done, 1 a gpuml call failed (its message is printed) or --gradcheck found a
   wrong gradient, 2 bad arguments, 77 the asked-for backend is not usable here. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#endif
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gpuml_ctx *ctx;
static const char *failed_call;   /* the first call that failed, for the message */
static int failed_line;
static int gradcheck_failed;      /* --gradcheck found a gradient that disagrees */

/* every gpuml call goes through one of these: on failure remember which call, return its status */
#define TRY(call) do { gpuml_status s_ = (call); if (s_ != GPUML_SUCCESS) { fail_at(#call, __LINE__); return s_; } } while (0)
#define NEW(t, expr) do { if (((t) = (expr)) == NULL) { fail_at(#expr, __LINE__); return gpuml_last_status(ctx); } } while (0)
static void fail_at(const char *call, int line)
{
    if (!failed_call) { failed_call = call; failed_line = line; }
}

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

/* splitmix64: the host-side shuffles (the same sequence on every machine) */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct options {
    gpuml_backend backend;
    int epochs, gelu, classes, points, gradcheck;
    int64_t hidden, batch;
    double lr;
    uint64_t seed;
} options;

/* ---- the dataset ----
   `classes` spiral arms of `points` points each, 1.5 turns, with normal noise on the angle
   drawn by gpuml_rand_normal (counter-based: the same numbers on the CPU and the GPU).
   Every fifth point of each arm is held out for testing. */
typedef struct dataset {
    int64_t n_train, n_test;
    float *x_train, *x_test;    /* [n, 2] */
    int32_t *y_train, *y_test;  /* [n] */
} dataset;

static gpuml_status make_dataset(const options *o, dataset *ds)
{
    int64_t n = (int64_t)o->classes * o->points, i, tr = 0, te = 0;
    gpuml_tensor *noise;
    float *eps = (float *)malloc((size_t)n * sizeof(float));
    gpuml_status st;
    const double pi = 3.14159265358979323846;
    memset(ds, 0, sizeof *ds);
    for (i = 0; i < o->points; i++) ds->n_test += (i % 5 == 2);
    ds->n_test *= o->classes;
    ds->n_train = n - ds->n_test;
    ds->x_train = (float *)malloc((size_t)ds->n_train * 2 * sizeof(float));
    ds->x_test = (float *)malloc((size_t)ds->n_test * 2 * sizeof(float));
    ds->y_train = (int32_t *)malloc((size_t)ds->n_train * sizeof(int32_t));
    ds->y_test = (int32_t *)malloc((size_t)ds->n_test * sizeof(int32_t));
    if (!eps || !ds->x_train || !ds->x_test || !ds->y_train || !ds->y_test) {
        free(eps);
        fail_at("malloc (dataset)", __LINE__);
        return GPUML_ERROR_OUT_OF_MEMORY;
    }
    noise = gpuml_tensor_new(ctx, GPUML_F32, 1, &n);
    st = noise ? gpuml_rand_normal(ctx, noise, o->seed, 0.0, 0.2) : gpuml_last_status(ctx);
    if (st == GPUML_SUCCESS) st = gpuml_tensor_read(noise, eps, (size_t)n * sizeof(float));
    gpuml_tensor_free(noise);
    if (st != GPUML_SUCCESS) { free(eps); fail_at("gpuml_rand_normal (dataset noise)", __LINE__); return st; }
    for (i = 0; i < n; i++) {
        int c = (int)(i / o->points);
        int64_t j = i % o->points;
        double r = (j + 0.5) / o->points;                       /* radius 0..1 along the arm */
        double th = 2.0 * pi * c / o->classes + 3.0 * pi * r + eps[i];
        int test = j % 5 == 2;
        float *x = test ? ds->x_test + 2 * te : ds->x_train + 2 * tr;
        x[0] = (float)(r * cos(th));
        x[1] = (float)(r * sin(th));
        if (test) ds->y_test[te++] = c;
        else ds->y_train[tr++] = c;
    }
    free(eps);
    return GPUML_SUCCESS;
}

static void free_dataset(dataset *ds)
{
    free(ds->x_train); free(ds->x_test); free(ds->y_train); free(ds->y_test);
}

/* ---- the model ---- */
typedef struct param { gpuml_tensor *w, *g, *m, *v; } param;   /* value, gradient, AdamW moments */
typedef struct mlp {
    param p[6];                /* W1 [2,H], b1 [H], W2 [H,H], b2 [H], W3 [H,C], b3 [C] */
    gpuml_tensor *wt[3];       /* transposed views of W2 and W3 (wt[1], wt[2]) for d(in) = dout @ W^T */
} mlp;

static gpuml_status new_param(param *p, int ndim, const int64_t *shape, uint64_t seed, double std)
{
    NEW(p->w, gpuml_tensor_new(ctx, GPUML_F32, ndim, shape));
    NEW(p->g, gpuml_tensor_new(ctx, GPUML_F32, ndim, shape));
    NEW(p->m, gpuml_tensor_new(ctx, GPUML_F32, ndim, shape));
    NEW(p->v, gpuml_tensor_new(ctx, GPUML_F32, ndim, shape));
    if (std > 0) TRY(gpuml_rand_normal(ctx, p->w, seed, 0.0, std));   /* weights: He init */
    else TRY(gpuml_fill(ctx, p->w, 0.0));                             /* biases: zero */
    TRY(gpuml_fill(ctx, p->m, 0.0));
    TRY(gpuml_fill(ctx, p->v, 0.0));
    return GPUML_SUCCESS;
}

static gpuml_status new_mlp(mlp *m, const options *o)
{
    int64_t dims[4];
    int l;
    dims[0] = 2; dims[1] = o->hidden; dims[2] = o->hidden; dims[3] = o->classes;
    memset(m, 0, sizeof *m);
    for (l = 0; l < 3; l++) {
        int64_t ws[2];
        ws[0] = dims[l]; ws[1] = dims[l + 1];
        TRY(new_param(&m->p[2 * l], 2, ws, o->seed * 1000 + 1 + (uint64_t)l, sqrt(2.0 / (double)dims[l])));
        TRY(new_param(&m->p[2 * l + 1], 1, &ws[1], 0, 0.0));
        if (l > 0) NEW(m->wt[l], gpuml_tensor_transpose(m->p[2 * l].w, 0, 1));
    }
    return GPUML_SUCCESS;
}

static void free_mlp(mlp *m)
{
    int i;
    for (i = 0; i < 6; i++) {
        gpuml_tensor_free(m->p[i].w); gpuml_tensor_free(m->p[i].g);
        gpuml_tensor_free(m->p[i].m); gpuml_tensor_free(m->p[i].v);
    }
    for (i = 0; i < 3; i++) gpuml_tensor_free(m->wt[i]);
}

/* activations and their gradients for a batch of n rows */
typedef struct acts {
    gpuml_tensor *z[2];           /* pre-activations (GELU only: ReLU is fused into the matmul) */
    gpuml_tensor *h[2], *ht[2];   /* activations and their transposed views (for dW) */
    gpuml_tensor *dh[2];          /* d loss / d h[l], turned in place into d loss / d z[l] */
    gpuml_tensor *logits, *dlogits, *loss, *pred;
} acts;

static gpuml_status new_acts(acts *a, int64_t n, const options *o)
{
    int64_t hs[2], ls[2];
    int l;
    hs[0] = n; hs[1] = o->hidden; ls[0] = n; ls[1] = o->classes;
    memset(a, 0, sizeof *a);
    for (l = 0; l < 2; l++) {
        if (o->gelu) NEW(a->z[l], gpuml_tensor_new(ctx, GPUML_F32, 2, hs));
        NEW(a->h[l], gpuml_tensor_new(ctx, GPUML_F32, 2, hs));
        NEW(a->ht[l], gpuml_tensor_transpose(a->h[l], 0, 1));
        NEW(a->dh[l], gpuml_tensor_new(ctx, GPUML_F32, 2, hs));
    }
    NEW(a->logits, gpuml_tensor_new(ctx, GPUML_F32, 2, ls));
    NEW(a->dlogits, gpuml_tensor_new(ctx, GPUML_F32, 2, ls));
    NEW(a->loss, gpuml_tensor_new(ctx, GPUML_F32, 0, NULL));
    NEW(a->pred, gpuml_tensor_new(ctx, GPUML_I32, 1, &n));
    return GPUML_SUCCESS;
}

static void free_acts(acts *a)
{
    int l;
    for (l = 0; l < 2; l++) {
        gpuml_tensor_free(a->z[l]); gpuml_tensor_free(a->h[l]); gpuml_tensor_free(a->ht[l]); gpuml_tensor_free(a->dh[l]);
    }
    gpuml_tensor_free(a->logits); gpuml_tensor_free(a->dlogits); gpuml_tensor_free(a->loss); gpuml_tensor_free(a->pred);
}

static gpuml_status forward(const mlp *m, acts *a, const gpuml_tensor *x, int gelu)
{
    const gpuml_tensor *in = x;
    gpuml_matmul_desc d;
    int l;
    for (l = 0; l < 2; l++) {
        memset(&d, 0, sizeof d);
        d.bias = m->p[2 * l + 1].w;
        if (!gelu) {                      /* h = relu(in @ W + b), one fused kernel */
            d.act = GPUML_ACT_RELU;
            TRY(gpuml_matmul(ctx, a->h[l], in, m->p[2 * l].w, &d));
        } else {                          /* z = in @ W + b, h = gelu(z); z is kept for backward */
            TRY(gpuml_matmul(ctx, a->z[l], in, m->p[2 * l].w, &d));
            TRY(gpuml_gelu(ctx, a->h[l], a->z[l]));
        }
        in = a->h[l];
    }
    memset(&d, 0, sizeof d);
    d.bias = m->p[5].w;
    TRY(gpuml_matmul(ctx, a->logits, in, m->p[4].w, &d));
    return GPUML_SUCCESS;
}

/* gradients of the mean cross-entropy into m->p[*].g; the batch's loss into a->loss */
static gpuml_status backward(mlp *m, acts *a, const gpuml_tensor *xt, const gpuml_tensor *labels, int gelu)
{
    const gpuml_tensor *dout = a->dlogits;
    int l;
    TRY(gpuml_cross_entropy(ctx, a->loss, a->dlogits, a->logits, labels));
    for (l = 2; l >= 0; l--) {
        const gpuml_tensor *in_t = l > 0 ? a->ht[l - 1] : xt;
        TRY(gpuml_matmul(ctx, m->p[2 * l].g, in_t, dout, NULL));        /* dW = in^T @ dout */
        TRY(gpuml_sum_to_shape(ctx, m->p[2 * l + 1].g, dout));          /* db = dout summed over the batch */
        if (l == 0) break;
        TRY(gpuml_matmul(ctx, a->dh[l - 1], dout, m->wt[l], NULL));     /* d(in) = dout @ W^T */
        /* through the activation, in place: ReLU's derivative is read off its output */
        if (gelu) TRY(gpuml_activation_backward(ctx, GPUML_UNARY_GELU, a->dh[l - 1], a->dh[l - 1], a->z[l - 1]));
        else TRY(gpuml_activation_backward(ctx, GPUML_UNARY_RELU, a->dh[l - 1], a->dh[l - 1], a->h[l - 1]));
        dout = a->dh[l - 1];
    }
    return GPUML_SUCCESS;
}

static gpuml_status adamw(mlp *m, int64_t step, double lr)
{
    gpuml_adamw_desc d;
    int i;
    memset(&d, 0, sizeof d);
    d.lr = lr;
    d.weight_decay = 1e-4;
    d.step = step;
    for (i = 0; i < 6; i++) TRY(gpuml_adamw_step(ctx, m->p[i].w, m->p[i].g, m->p[i].m, m->p[i].v, &d));
    return GPUML_SUCCESS;
}

/* loss and accuracy of the model over a whole set (x: [n,2] tensor, y: [n] i32 tensor) */
static gpuml_status evaluate(const mlp *m, acts *a, const gpuml_tensor *x, const gpuml_tensor *y, const int32_t *labels,
                             int64_t n, int gelu, float *loss, double *acc)
{
    static const int axis = 1;
    int32_t *pred = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    int64_t i, right = 0;
    gpuml_status st;
    if (!pred) { fail_at("malloc (predictions)", __LINE__); return GPUML_ERROR_OUT_OF_MEMORY; }
    st = forward(m, a, x, gelu);
    if (st == GPUML_SUCCESS && (st = gpuml_cross_entropy(ctx, a->loss, NULL, a->logits, y)) != GPUML_SUCCESS)
        fail_at("gpuml_cross_entropy (evaluate)", __LINE__);
    if (st == GPUML_SUCCESS && (st = gpuml_reduce(ctx, GPUML_REDUCE_ARGMAX, a->pred, a->logits, &axis, 1, 0)) != GPUML_SUCCESS)
        fail_at("gpuml_reduce ARGMAX", __LINE__);
    if (st == GPUML_SUCCESS && (st = gpuml_tensor_read(a->loss, loss, sizeof *loss)) != GPUML_SUCCESS)
        fail_at("gpuml_tensor_read (loss)", __LINE__);
    if (st == GPUML_SUCCESS && (st = gpuml_tensor_read(a->pred, pred, (size_t)n * sizeof(int32_t))) != GPUML_SUCCESS)
        fail_at("gpuml_tensor_read (predictions)", __LINE__);
    for (i = 0; st == GPUML_SUCCESS && i < n; i++) right += pred[i] == labels[i];
    *acc = (double)right / (double)n;
    free(pred);
    return st;
}

/* --gradcheck: the backward pass against finite differences of the loss.  For each parameter
   tensor P with gradient G, the derivative of the loss along the unit direction G/|G| is |G|
   by backprop; the central difference (L(P + hG/|G|) - L(P - hG/|G|)) / 2h measures it.  A
   wrong, transposed or missing gradient makes the two disagree by O(1).  With GELU (smooth)
   h = 1e-2: the f32 loss's rounding over 2h and the O(h^2) truncation leave ~1e-4 (measured
   <= 1.1e-4 over 20 seeds), tolerance 1e-3.  With ReLU the step moves some pre-activations
   across the kink at 0, an error that grows with h: h = 1e-3 (measured <= 7.2e-3 over 20
   seeds; smaller h drowns in the loss's rounding), tolerance 3e-2. */
static gpuml_status gradcheck(mlp *m, acts *a, const gpuml_tensor *x, const gpuml_tensor *xt, const gpuml_tensor *y,
                              int gelu, int *bad)
{
    static const char *const names[6] = { "W1", "b1", "W2", "b2", "W3", "b3" };
    const double h = gelu ? 1e-2 : 1e-3, tol = gelu ? 1e-3 : 3e-2;
    int i;
    *bad = 0;
    TRY(forward(m, a, x, gelu));
    TRY(backward(m, a, xt, y, gelu));
    for (i = 0; i < 6; i++) {
        param *p = &m->p[i];
        int nd = gpuml_tensor_ndim(p->w), d;
        int64_t shape[2];
        gpuml_tensor *p0, *step, *sq, *n2;
        float gg, lp, lm;
        double gn, fd, rel;
        for (d = 0; d < nd; d++) shape[d] = gpuml_tensor_dim(p->w, d);
        NEW(p0, gpuml_tensor_new(ctx, GPUML_F32, nd, shape));
        NEW(step, gpuml_tensor_new(ctx, GPUML_F32, nd, shape));
        NEW(sq, gpuml_tensor_new(ctx, GPUML_F32, nd, shape));
        NEW(n2, gpuml_tensor_new(ctx, GPUML_F32, 0, NULL));
        TRY(gpuml_mul(ctx, sq, p->g, p->g));                              /* |G|^2 */
        TRY(gpuml_reduce(ctx, GPUML_REDUCE_SUM, n2, sq, NULL, 0, 0));
        TRY(gpuml_tensor_read(n2, &gg, sizeof gg));
        gn = sqrt((double)gg);
        TRY(gpuml_copy(ctx, p0, p->w));
        TRY(gpuml_mul_scalar(ctx, step, p->g, gn > 0 ? h / gn : 0.0));    /* h G/|G| */
        TRY(gpuml_add(ctx, p->w, p0, step));
        TRY(forward(m, a, x, gelu));
        TRY(gpuml_cross_entropy(ctx, a->loss, NULL, a->logits, y));
        TRY(gpuml_tensor_read(a->loss, &lp, sizeof lp));
        TRY(gpuml_sub(ctx, p->w, p0, step));
        TRY(forward(m, a, x, gelu));
        TRY(gpuml_cross_entropy(ctx, a->loss, NULL, a->logits, y));
        TRY(gpuml_tensor_read(a->loss, &lm, sizeof lm));
        TRY(gpuml_copy(ctx, p->w, p0));                                   /* restore */
        fd = ((double)lp - (double)lm) / (2 * h);
        rel = fabs(fd - gn) / (gn > 0 ? gn : 1.0);
        printf("gradcheck %-2s: |grad| %.6f by backprop, %.6f by finite differences, relative error %.1e %s\n", names[i], gn, fd,
               rel, rel <= tol && gn > 0 ? "ok" : "WRONG");
        *bad += !(rel <= tol && gn > 0);
        gpuml_tensor_free(p0); gpuml_tensor_free(step); gpuml_tensor_free(sq); gpuml_tensor_free(n2);
    }
    return GPUML_SUCCESS;
}

/* shuffles the training set on the host (the same permutation on every machine) into xsh, ysh */
static gpuml_status shuffle(const dataset *ds, gpuml_tensor *xsh, gpuml_tensor *ysh, uint64_t *rng, int64_t *perm, float *xbuf,
                            int32_t *ybuf)
{
    int64_t i;
    for (i = 0; i < ds->n_train; i++) perm[i] = i;
    for (i = ds->n_train - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng_next(rng) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j]; perm[j] = t;
    }
    for (i = 0; i < ds->n_train; i++) {
        xbuf[2 * i] = ds->x_train[2 * perm[i]];
        xbuf[2 * i + 1] = ds->x_train[2 * perm[i] + 1];
        ybuf[i] = ds->y_train[perm[i]];
    }
    TRY(gpuml_tensor_write(xsh, xbuf, (size_t)ds->n_train * 2 * sizeof(float)));
    TRY(gpuml_tensor_write(ysh, ybuf, (size_t)ds->n_train * sizeof(int32_t)));
    return GPUML_SUCCESS;
}

/* one batch view of the (shuffled) training set: x rows, x transposed, labels */
typedef struct batch { gpuml_tensor *x, *xt, *y; } batch;

static gpuml_status train(const options *o, const dataset *ds)
{
    mlp m;
    acts ab, atr, ate;   /* batch, whole train set, whole test set */
    gpuml_tensor *xtr = NULL, *ytr = NULL, *xte = NULL, *yte = NULL, *xsh = NULL, *ysh = NULL, *epoch_loss = NULL;
    batch *b = NULL;
    int64_t nb = ds->n_train / o->batch, i, step = 0, s2[2];
    float *xbuf = (float *)malloc((size_t)ds->n_train * 2 * sizeof(float));
    int32_t *ybuf = (int32_t *)malloc((size_t)ds->n_train * sizeof(int32_t));
    int64_t *perm = (int64_t *)malloc((size_t)ds->n_train * sizeof(int64_t));
    uint64_t rng = o->seed;
    float loss0 = 0, loss1 = 0, loss_te = 0, lsum = 0;
    double acc_tr = 0, acc_te = 0, t0, t_train;
    int e, print_every = o->epochs >= 10 ? o->epochs / 10 : 1;
    gpuml_status st = GPUML_SUCCESS;

    memset(&m, 0, sizeof m); memset(&ab, 0, sizeof ab); memset(&atr, 0, sizeof atr); memset(&ate, 0, sizeof ate);
    if (!xbuf || !ybuf || !perm) { st = GPUML_ERROR_OUT_OF_MEMORY; fail_at("malloc (shuffle buffers)", __LINE__); goto done; }
    if (nb < 1) { st = GPUML_ERROR_INVALID_ARGUMENT; fail_at("--batch larger than the training set", __LINE__); goto done; }
    b = (batch *)calloc((size_t)nb, sizeof *b);
    if (!b) { st = GPUML_ERROR_OUT_OF_MEMORY; fail_at("calloc (batches)", __LINE__); goto done; }

#define STEP(call) do { if ((st = (call)) != GPUML_SUCCESS) { fail_at(#call, __LINE__); goto done; } } while (0)
#define MAKE(t, expr) do { if (((t) = (expr)) == NULL) { st = gpuml_last_status(ctx); fail_at(#expr, __LINE__); goto done; } } while (0)
    STEP(new_mlp(&m, o));
    STEP(new_acts(&ab, o->batch, o));
    STEP(new_acts(&atr, ds->n_train, o));
    STEP(new_acts(&ate, ds->n_test, o));
    s2[1] = 2;
    s2[0] = ds->n_train;
    MAKE(xtr, gpuml_tensor_new(ctx, GPUML_F32, 2, s2));
    MAKE(xsh, gpuml_tensor_new(ctx, GPUML_F32, 2, s2));
    MAKE(ytr, gpuml_tensor_new(ctx, GPUML_I32, 1, s2));
    MAKE(ysh, gpuml_tensor_new(ctx, GPUML_I32, 1, s2));
    s2[0] = ds->n_test;
    MAKE(xte, gpuml_tensor_new(ctx, GPUML_F32, 2, s2));
    MAKE(yte, gpuml_tensor_new(ctx, GPUML_I32, 1, s2));
    MAKE(epoch_loss, gpuml_tensor_new(ctx, GPUML_F32, 0, NULL));
    STEP(gpuml_tensor_write(xtr, ds->x_train, (size_t)ds->n_train * 2 * sizeof(float)));
    STEP(gpuml_tensor_write(ytr, ds->y_train, (size_t)ds->n_train * sizeof(int32_t)));
    STEP(gpuml_tensor_write(xte, ds->x_test, (size_t)ds->n_test * 2 * sizeof(float)));
    STEP(gpuml_tensor_write(yte, ds->y_test, (size_t)ds->n_test * sizeof(int32_t)));
    /* batch k is rows [k*B, (k+1)*B) of the shuffled copy: views made once, refilled every epoch */
    for (i = 0; i < nb; i++) {
        MAKE(b[i].x, gpuml_tensor_slice(xsh, 0, i * o->batch, (i + 1) * o->batch, 1));
        MAKE(b[i].xt, gpuml_tensor_transpose(b[i].x, 0, 1));
        MAKE(b[i].y, gpuml_tensor_slice(ysh, 0, i * o->batch, (i + 1) * o->batch, 1));
    }

    STEP(evaluate(&m, &atr, xtr, ytr, ds->y_train, ds->n_train, o->gelu, &loss0, &acc_tr));
    printf("data    : %d spiral arms, %lld training and %lld test points; batches of %lld (%lld per epoch)\n", o->classes,
           (long long)ds->n_train, (long long)ds->n_test, (long long)o->batch, (long long)nb);
    printf("model   : 2 -> %lld -> %lld -> %d, %s, AdamW lr %g\n", (long long)o->hidden, (long long)o->hidden, o->classes,
           o->gelu ? "GELU" : "ReLU (fused into the matmul)", o->lr);
    printf("initial : loss %.4f (train set), accuracy %.1f%%\n", loss0, 100.0 * acc_tr);
    fflush(stdout);
    if (o->gradcheck) {   /* check the gradients on one shuffled batch, then stop */
        int bad = 0;
        STEP(shuffle(ds, xsh, ysh, &rng, perm, xbuf, ybuf));
        STEP(gradcheck(&m, &ab, b[0].x, b[0].xt, b[0].y, o->gelu, &bad));
        printf("gradcheck: %s\n", bad ? "FAILED" : "all 6 parameter gradients agree with finite differences");
        gradcheck_failed = bad > 0;
        goto done;
    }

    t0 = now_s();
    for (e = 1; e <= o->epochs; e++) {
        STEP(shuffle(ds, xsh, ysh, &rng, perm, xbuf, ybuf));
        STEP(gpuml_fill(ctx, epoch_loss, 0.0));
        for (i = 0; i < nb; i++) {
            STEP(forward(&m, &ab, b[i].x, o->gelu));
            STEP(backward(&m, &ab, b[i].xt, b[i].y, o->gelu));
            STEP(adamw(&m, ++step, o->lr));
            STEP(gpuml_add(ctx, epoch_loss, epoch_loss, ab.loss));   /* summed on the device: no sync per step */
        }
        if (e % print_every == 0 || e == 1 || e == o->epochs) {
            STEP(gpuml_tensor_read(epoch_loss, &lsum, sizeof lsum));
            printf("epoch %4d: loss %.4f (mean over the epoch's batches)\n", e, lsum / (float)nb);
            fflush(stdout);
        }
    }
    STEP(gpuml_sync(ctx));
    t_train = now_s() - t0;

    STEP(evaluate(&m, &atr, xtr, ytr, ds->y_train, ds->n_train, o->gelu, &loss1, &acc_tr));
    STEP(evaluate(&m, &ate, xte, yte, ds->y_test, ds->n_test, o->gelu, &loss_te, &acc_te));
    printf("final   : loss %.4f (train set), train accuracy %.1f%%, test accuracy %.1f%% (test loss %.4f)\n", loss1,
           100.0 * acc_tr, 100.0 * acc_te, loss_te);
    printf("time    : %.2f s for %lld steps (%.3f ms a step)\n", t_train, (long long)step, step ? 1e3 * t_train / (double)step : 0.0);
    printf("result: initial_loss=%.6f final_loss=%.6f train_acc=%.4f test_acc=%.4f\n", loss0, loss1, acc_tr, acc_te);
#undef STEP
#undef MAKE
done:
    if (b)
        for (i = 0; i < nb; i++) { gpuml_tensor_free(b[i].x); gpuml_tensor_free(b[i].xt); gpuml_tensor_free(b[i].y); }
    free(b);
    gpuml_tensor_free(xtr); gpuml_tensor_free(ytr); gpuml_tensor_free(xte); gpuml_tensor_free(yte);
    gpuml_tensor_free(xsh); gpuml_tensor_free(ysh); gpuml_tensor_free(epoch_loss);
    free_acts(&ab); free_acts(&atr); free_acts(&ate);
    free_mlp(&m);
    free(xbuf); free(ybuf); free(perm);
    return st;
}

static int usage(const char *why)
{
    fprintf(stderr, "train_mlp: %s\nusage: train_mlp [--backend auto|cpu|cuda] [--epochs N] [--seed S] [--act relu|gelu]\n"
                    "                 [--hidden H] [--batch B] [--lr LR] [--classes C] [--points P] [--gradcheck]\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    options o;
    dataset ds;
    gpuml_desc desc;
    gpuml_status st;
    int i;

    memset(&o, 0, sizeof o);
    o.backend = GPUML_BACKEND_DEFAULT;   /* GPUML_BACKEND from the environment, else auto */
    o.epochs = 30; o.seed = 1; o.classes = 5; o.points = 1000; o.hidden = 128; o.batch = 100; o.lr = 3e-3;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--gradcheck") == 0) { o.gradcheck = 1; continue; }
        if (!v) return usage("every option but --gradcheck takes a value");
        if (strcmp(a, "--backend") == 0) {
            if (strcmp(v, "cpu") == 0) o.backend = GPUML_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0) o.backend = GPUML_BACKEND_CUDA;
            else if (strcmp(v, "auto") == 0) o.backend = GPUML_BACKEND_AUTO;
            else return usage("--backend takes auto, cpu or cuda");
        } else if (strcmp(a, "--act") == 0) {
            if (strcmp(v, "relu") == 0) o.gelu = 0;
            else if (strcmp(v, "gelu") == 0) o.gelu = 1;
            else return usage("--act takes relu or gelu");
        } else if (strcmp(a, "--epochs") == 0) o.epochs = atoi(v);
        else if (strcmp(a, "--seed") == 0) o.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--hidden") == 0) o.hidden = atoll(v);
        else if (strcmp(a, "--batch") == 0) o.batch = atoll(v);
        else if (strcmp(a, "--lr") == 0) o.lr = atof(v);
        else if (strcmp(a, "--classes") == 0) o.classes = atoi(v);
        else if (strcmp(a, "--points") == 0) o.points = atoi(v);
        else return usage("unknown option");
        i++;
    }
    if (o.epochs < 0 || o.hidden < 1 || o.batch < 1 || !(o.lr > 0) || o.classes < 2 || o.points < 5)
        return usage("need epochs >= 0, hidden >= 1, batch >= 1, lr > 0, classes >= 2, points >= 5");

    memset(&desc, 0, sizeof desc);
    desc.backend = o.backend;
    if ((st = gpuml_init(&ctx, &desc)) != GPUML_SUCCESS) {
        fprintf(stderr, "train_mlp: gpuml_init: %s\n", gpuml_last_error(ctx));
        gpuml_shutdown(ctx);
        return st == GPUML_ERROR_BACKEND_UNAVAILABLE || st == GPUML_ERROR_LIBRARY_NOT_FOUND ? 77 : 1;
    }
    printf("backend : %s (%s)\n", gpuml_backend_name(gpuml_get_backend(ctx)), gpuml_device_name(ctx));
    printf("seed    : %llu\n", (unsigned long long)o.seed);
    st = make_dataset(&o, &ds);
    if (st == GPUML_SUCCESS) st = train(&o, &ds);
    if (st != GPUML_SUCCESS)
        fprintf(stderr, "train_mlp: %s (line %d) failed: %s%s%s\n", failed_call ? failed_call : "?", failed_line,
                gpuml_status_string(st), gpuml_last_error(ctx)[0] ? ": " : "", gpuml_last_error(ctx));
    free_dataset(&ds);
    gpuml_shutdown(ctx);
    return st == GPUML_SUCCESS && !gradcheck_failed ? 0 : 1;
}
