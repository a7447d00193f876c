/* implementation of the ops declared in src/ops_api.h (spliced into gpuml.h) */

/* ------------------------------------------------------------- memory-bound ops ---- */
/* Kernel families (kernels/elementwise.cu, reduce.cu, norm.cu).  Tolerance-based agreement
   with the CPU is enough here, so none is compiled --fmad=false. */
static const gpuml__family gpuml__fam_elementwise = { "elementwise", gpuml__ksrc_elementwise, 50, 0, 0 };
static const gpuml__family gpuml__fam_reduce = { "reduce", gpuml__ksrc_reduce, 50, 0, 0 };
static const gpuml__family gpuml__fam_norm = { "norm", gpuml__ksrc_norm, 50, 0, 0 };
#define GPUML__OPS_FAMILIES &gpuml__fam_elementwise, &gpuml__fam_reduce, &gpuml__fam_norm,
/* representative specializations for the compile checks (tests/test_jit.c) */
#define GPUML__OPS_VARIANTS \
    { "elementwise", "-DOP=0 -DNIN=2 -DSCAL=0 -DDT_O=0 -DDT_A=0 -DDT_B=0 -DDT_C=0 -DVEC=4" }, \
    { "elementwise", "-DOP=27 -DNIN=1 -DSCAL=0 -DDT_O=2 -DDT_A=2 -DDT_B=0 -DDT_C=0 -DVEC=8" }, \
    { "elementwise", "-DOP=60 -DNIN=3 -DSCAL=0 -DDT_O=1 -DDT_A=5 -DDT_B=1 -DDT_C=1 -DVEC=8" }, \
    { "elementwise", "-DOPT=2 -DDT_G=2 -DVEC=4" }, \
    { "reduce", "-DRK=0 -DDT_X=0 -DDT_O=0 -DVEC=4" }, { "reduce", "-DRK=4 -DDT_X=2 -DDT_O=3 -DVEC=8" }, \
    { "reduce", "-DRK=5 -DDT_X=1 -DDT_O=0 -DVEC=8" }, \
    { "norm", "-DRK=0 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=0 -DVEC=4 -DNV=8" }, \
    { "norm", "-DRK=2 -DDT_X=2 -DDT_W=2 -DDT_B=0 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=0 -DVEC=8 -DNV=4" }, \
    { "norm", "-DRK=4 -DDT_X=1 -DDT_W=0 -DDT_B=0 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=1 -DVEC=8 -DNV=4" }, \
    { "norm", "-DRK=6 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=0 -DVEC=4 -DNV=8" }, \
    { "norm", "-DCOLSUM=1 -DDT_O=0" },

/* elementwise op codes (the OP of kernels/elementwise.cu): binary ops are gpuml_binary_op,
   unary ops GPUML__EW_UNARY + gpuml_unary_op */
enum {
    GPUML__EW_UNARY = 16, GPUML__EW_CLAMP = 30,
    GPUML__EW_RELU_GRAD = 40, GPUML__EW_GELU_GRAD = 41, GPUML__EW_GELU_TANH_GRAD = 42, GPUML__EW_SILU_GRAD = 43,
    GPUML__EW_WHERE = 60
};


GPUML__FN int gpuml__is_float(gpuml_dtype d) { return d == GPUML_F32 || d == GPUML_F16 || d == GPUML_BF16; }

GPUML__FN gpuml_status gpuml__need_float(gpuml_ctx *ctx, const gpuml_tensor *t, const char *op, const char *arg)
{
    if (!gpuml__is_float(t->dtype))
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: %s is %s; this op takes f32, f16 or bf16", op, arg,
                           gpuml__dtype_names[t->dtype]);
    return GPUML_SUCCESS;
}
GPUML__FN gpuml_status gpuml__need_dtype(gpuml_ctx *ctx, const gpuml_tensor *t, gpuml_dtype want, const char *op, const char *arg)
{
    if (t->dtype != want)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: %s is %s but must be %s", op, arg, gpuml__dtype_names[t->dtype],
                           gpuml__dtype_names[want]);
    return GPUML_SUCCESS;
}
GPUML__FN gpuml_status gpuml__need_same_shape(gpuml_ctx *ctx, const gpuml_tensor *t, const gpuml_tensor *like, const char *op,
                                              const char *arg, const char *likearg)
{
    int i, same = t->ndim == like->ndim;
    char s1[200], s2[200];
    for (i = 0; same && i < t->ndim; i++) same = t->shape[i] == like->shape[i];
    if (!same)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but %s is %s (they must match)", op, arg,
                           gpuml__shape_str(t, s1, sizeof s1), likearg, gpuml__shape_str(like, s2, sizeof s2));
    return GPUML_SUCCESS;
}
/* an output may be exactly an input's view (in place); any other overlap is refused */
GPUML__FN gpuml_status gpuml__check_alias(gpuml_ctx *ctx, const gpuml_tensor *out, const gpuml_tensor *in, const char *op,
                                          const char *oname, const char *iname)
{
    if (!in || gpuml__same_view(out, in) || !gpuml__overlap(out, in)) return GPUML_SUCCESS;
    return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s partially overlaps %s (only the very same view is allowed in place)",
                       op, oname, iname);
}
/* an output that must not overlap the input at all (row ops that read a row several times) */
GPUML__FN gpuml_status gpuml__check_disjoint(gpuml_ctx *ctx, const gpuml_tensor *out, const gpuml_tensor *in, const char *op,
                                             const char *oname, const char *iname)
{
    if (!in || !gpuml__overlap(out, in)) return GPUML_SUCCESS;
    if (gpuml__same_view(out, in)) return GPUML_SUCCESS;
    return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s overlaps %s", op, oname, iname);
}
/* dtype of a op b: f16 with bf16 gives f32, otherwise the wider */
GPUML__FN gpuml_dtype gpuml__promote(gpuml_dtype a, gpuml_dtype b)
{
    if (a == b) return a;
    if (a == GPUML_F32 || b == GPUML_F32) return GPUML_F32;
    return GPUML_F32;   /* f16 with bf16 */
}
/* t as a view broadcast to out's shape (stack copy, no new handle); 0 if it does not broadcast */
GPUML__FN int gpuml__bcast_to(const gpuml_tensor *t, int ndim, const int64_t *shape, gpuml_tensor *v)
{
    int i, lead = ndim - t->ndim;
    if (lead < 0) return 0;
    *v = *t;
    for (i = 0; i < ndim; i++) {
        int j = i - lead;
        if (j >= 0 && t->shape[j] != shape[i] && t->shape[j] != 1) return 0;
        v->shape[i] = shape[i];
        v->strides[i] = (j >= 0 && t->shape[j] == shape[i]) ? t->strides[j] : 0;
    }
    v->ndim = ndim;
    return 1;
}

/* ---- iteration over up to 4 operands of one shape (out first; views already broadcast) ---- */
typedef struct gpuml__xiter {
    int64_t n;
    int ndim, nops;
    int64_t dims[GPUML_MAX_DIMS];
    int64_t strides[4][GPUML_MAX_DIMS];
    char *base[4];              /* address of each view's first element */
    gpuml_dtype dt[4];
} gpuml__xiter;

GPUML__FN void gpuml__xiter_make(gpuml__xiter *it, const gpuml_tensor *const *ops, int nops)
{
    const gpuml_tensor *s = ops[0];
    int d, k, nd = 0;
    memset(it, 0, sizeof *it);
    it->nops = nops;
    it->n = gpuml__numel(s);
    for (k = 0; k < nops; k++) {
        it->base[k] = (char *)gpuml_tensor_data(ops[k]);
        it->dt[k] = ops[k]->dtype;
    }
    for (d = 0; d < s->ndim; d++) {
        int merge = nd > 0;
        if (s->shape[d] == 1) continue;
        for (k = 0; k < nops && merge; k++)
            if (it->strides[k][nd - 1] != ops[k]->strides[d] * s->shape[d]) merge = 0;
        if (merge) {
            it->dims[nd - 1] *= s->shape[d];
            for (k = 0; k < nops; k++) it->strides[k][nd - 1] = ops[k]->strides[d];
        } else {
            it->dims[nd] = s->shape[d];
            for (k = 0; k < nops; k++) it->strides[k][nd] = ops[k]->strides[d];
            nd++;
        }
    }
    if (nd == 0) { it->dims[0] = 1; nd = 1; }
    it->ndim = nd;
}
GPUML__FN int gpuml__xiter_contig(const gpuml__xiter *it)
{
    int k;
    if (it->ndim != 1) return 0;
    for (k = 0; k < it->nops; k++) if (it->strides[k][0] != 1 && it->dims[0] > 1) return 0;
    return 1;
}

/* ---- CPU: rows of the iteration space on the thread pool ---- */
typedef void (*gpuml__xrow_fn)(void *arg, char **ptrs, const int64_t *step, int64_t count);
typedef struct gpuml__xjob { const gpuml__xiter *it; gpuml__xrow_fn fn; void *arg; } gpuml__xjob;

GPUML__FN void gpuml__xforeach_task(void *a, int64_t b, int64_t e, int tid)
{
    const gpuml__xjob *j = (const gpuml__xjob *)a;
    const gpuml__xiter *it = j->it;
    int64_t idx[GPUML_MAX_DIMS], step[4], rem = b;
    int last = it->ndim - 1, d, k;
    (void)tid;
    for (d = last; d >= 0; d--) { idx[d] = rem % it->dims[d]; rem /= it->dims[d]; }
    for (k = 0; k < it->nops; k++) step[k] = it->strides[k][last] * (int64_t)gpuml__dtype_sizes[it->dt[k]];
    while (b < e) {
        char *p[4];
        int64_t cnt = GPUML__MIN(it->dims[last] - idx[last], e - b);
        for (k = 0; k < it->nops; k++) {
            int64_t off = 0;
            for (d = 0; d <= last; d++) off += idx[d] * it->strides[k][d];
            p[k] = it->base[k] ? it->base[k] + off * (int64_t)gpuml__dtype_sizes[it->dt[k]] : NULL;
        }
        j->fn(j->arg, p, step, cnt);
        b += cnt;
        idx[last] += cnt;
        for (d = last; d > 0 && idx[d] == it->dims[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
}
GPUML__FN void gpuml__xforeach(gpuml_ctx *ctx, const gpuml__xiter *it, gpuml__xrow_fn fn, void *arg)
{
    gpuml__xjob j;
    j.it = it; j.fn = fn; j.arg = arg;
    if (it->n > 0) gpuml__parallel_for(ctx->pool, it->n, 1 << 14, gpuml__xforeach_task, &j);
}

#define GPUML__TILE 512
/* n elements of dtype d at p (byte step) as floats: returns p itself for dense f32, else buf */
GPUML__FN const float *gpuml__cpu_ld(gpuml_dtype d, const char *p, int64_t step, int64_t n, float *buf)
{
    int64_t i;
    if (d == GPUML_F32 && step == 4) return (const float *)(const void *)p;
    if (d == GPUML_BF16) {
        for (i = 0; i < n; i++) { gpuml__u16 h; memcpy(&h, p + i * step, 2); buf[i] = gpuml__bf16_to_f32(h); }
    } else if (d == GPUML_F16) {
        for (i = 0; i < n; i++) { gpuml__u16 h; memcpy(&h, p + i * step, 2); buf[i] = gpuml__f16_to_f32(h); }
    } else {
        for (i = 0; i < n; i++) buf[i] = gpuml__ld_f32(d, p + i * step);
    }
    return buf;
}
GPUML__FN void gpuml__cpu_st(gpuml_dtype d, char *p, int64_t step, int64_t n, const float *v)
{
    int64_t i;
    if (d == GPUML_F32 && step == 4) { if ((const void *)p != (const void *)v) memcpy(p, v, (size_t)n * 4); return; }
    if (d == GPUML_BF16) {
        for (i = 0; i < n; i++) { gpuml__u16 h = gpuml__f32_to_bf16(v[i]); memcpy(p + i * step, &h, 2); }
    } else {
        for (i = 0; i < n; i++) gpuml__st_f32(d, p + i * step, v[i]);
    }
}

/* ---- CPU elementwise math on float arrays (the same formulas as kernels/elementwise.cu) ---- */
GPUML__FN float gpuml__sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }
#define GPUML__EW_LOOP(expr) for (i = 0; i < n; i++) { float x = a[i], y = b ? b[i] : 0.0f; (void)y; o[i] = (expr); } break
#define GPUML__EW_BODY \
    int64_t i; \
    switch (op) { \
    case GPUML_BINARY_ADD: GPUML__EW_LOOP(x + y); \
    case GPUML_BINARY_SUB: GPUML__EW_LOOP(x - y); \
    case GPUML_BINARY_MUL: GPUML__EW_LOOP(x * y); \
    case GPUML_BINARY_DIV: GPUML__EW_LOOP(x / y); \
    case GPUML_BINARY_MAXIMUM: GPUML__EW_LOOP((x != x || y != y) ? x + y : (x > y ? x : y)); \
    case GPUML_BINARY_MINIMUM: GPUML__EW_LOOP((x != x || y != y) ? x + y : (x < y ? x : y)); \
    case GPUML_BINARY_POW: GPUML__EW_LOOP(powf(x, y)); \
    case GPUML__EW_UNARY + GPUML_UNARY_NEG: GPUML__EW_LOOP(-x); \
    case GPUML__EW_UNARY + GPUML_UNARY_ABS: GPUML__EW_LOOP(fabsf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_EXP: GPUML__EW_LOOP(expf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_LOG: GPUML__EW_LOOP(logf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_SQRT: GPUML__EW_LOOP(sqrtf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_RSQRT: GPUML__EW_LOOP(1.0f / sqrtf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_SIN: GPUML__EW_LOOP(sinf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_COS: GPUML__EW_LOOP(cosf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_TANH: GPUML__EW_LOOP(tanhf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_SIGMOID: GPUML__EW_LOOP(gpuml__sigmoid_f(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_RELU: GPUML__EW_LOOP(x > 0.0f ? x : (x != x ? x : 0.0f)); \
    case GPUML__EW_UNARY + GPUML_UNARY_GELU: GPUML__EW_LOOP(0.5f * x * (1.0f + erff(x * 0.70710678118654752f))); \
    case GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH: \
        GPUML__EW_LOOP(0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)))); \
    case GPUML__EW_UNARY + GPUML_UNARY_SILU: GPUML__EW_LOOP(x * gpuml__sigmoid_f(x)); \
    case GPUML__EW_CLAMP: GPUML__EW_LOOP(x != x ? x : fminf(fmaxf(x, s0), s1)); \
    case GPUML__EW_RELU_GRAD: GPUML__EW_LOOP(y > 0.0f ? x : (y != y ? y : 0.0f)); \
    case GPUML__EW_GELU_GRAD: \
        GPUML__EW_LOOP(x * (0.5f * (1.0f + erff(y * 0.70710678118654752f)) + y * 0.39894228040143268f * expf(-0.5f * y * y))); \
    case GPUML__EW_GELU_TANH_GRAD: \
        for (i = 0; i < n; i++) { \
            float y = b[i], k = 0.79788456080286536f, t = tanhf(k * (y + 0.044715f * y * y * y)); \
            o[i] = a[i] * (0.5f * (1.0f + t) + 0.5f * y * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * y * y)); \
        } \
        break; \
    case GPUML__EW_SILU_GRAD: \
        for (i = 0; i < n; i++) { float y = b[i], s = gpuml__sigmoid_f(y); o[i] = a[i] * s * (1.0f + y * (1.0f - s)); } \
        break; \
    case GPUML__EW_WHERE: for (i = 0; i < n; i++) o[i] = a[i] != 0.0f ? b[i] : c[i]; break; \
    default: break; \
    }

GPUML__FN void gpuml__cpu_ew_plain(int op, int64_t n, float *o, const float *a, const float *b, const float *c, float s0, float s1)
{
    (void)c; (void)s0; (void)s1;
    GPUML__EW_BODY
}
#if GPUML__HAVE_AVX2_PATH
GPUML__FN GPUML__AVX2_TARGET void gpuml__cpu_ew_avx2(int op, int64_t n, float *o, const float *a, const float *b, const float *c,
                                                    float s0, float s1)
{
    (void)c; (void)s0; (void)s1;
    GPUML__EW_BODY
}
#endif
GPUML__FN void gpuml__cpu_ew(int op, int64_t n, float *o, const float *a, const float *b, const float *c, float s0, float s1)
{
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_has_avx2_fma()) { gpuml__cpu_ew_avx2(op, n, o, a, b, c, s0, s1); return; }
#endif
    gpuml__cpu_ew_plain(op, n, o, a, b, c, s0, s1);
}

/* an elementwise job: out = f(in...) with op code, number of inputs and scalar mode */
typedef struct gpuml__ew { int op, nin, scal; float s0, s1; gpuml_dtype dt[4]; } gpuml__ew;

GPUML__FN void gpuml__ew_row(void *arg, char **p, const int64_t *step, int64_t count)
{
    const gpuml__ew *e = (const gpuml__ew *)arg;
    float buf[4][GPUML__TILE], sc[GPUML__TILE];
    int64_t done, i;
    if (e->scal) for (i = 0; i < GPUML__TILE; i++) sc[i] = e->s0;
    for (done = 0; done < count; done += GPUML__TILE) {
        int64_t n = GPUML__MIN((int64_t)GPUML__TILE, count - done);
        const float *in[3] = {NULL, NULL, NULL};
        float *o;
        int k;
        for (k = 0; k < e->nin; k++) in[k] = gpuml__cpu_ld(e->dt[k + 1], p[k + 1] + done * step[k + 1], step[k + 1], n, buf[k + 1]);
        if (e->scal == 1) in[1] = sc;
        if (e->scal == 2) { in[1] = in[0]; in[0] = sc; }
        o = (e->dt[0] == GPUML_F32 && step[0] == 4) ? (float *)(void *)(p[0] + done * 4) : buf[0];
        gpuml__cpu_ew(e->op, n, o, in[0], in[1], in[2], e->s0, e->s1);
        gpuml__cpu_st(e->dt[0], p[0] + done * step[0], step[0], n, o);
    }
}

#ifndef GPUML_NO_CUDA
GPUML__FN void gpuml__xkparams(const gpuml__xiter *it, gpuml__kshape *ks, gpuml__kview *kv)
{
    int k;
    memset(ks, 0, sizeof *ks);
    memset(kv, 0, sizeof(gpuml__kview) * 4);
    ks->n = it->n;
    ks->ndim = it->ndim;
    memcpy(ks->dims, it->dims, sizeof ks->dims);
    for (k = 0; k < it->nops; k++) memcpy(kv[k].strides, it->strides[k], sizeof kv[k].strides);
}
/* elements per 16-byte vector for these operands, or 1 when a pointer is not aligned for it */
GPUML__FN int gpuml__vec_for(char *const *base, const gpuml_dtype *dt, int nops)
{
    size_t maxes = 1;
    int k, vec;
    for (k = 0; k < nops; k++) maxes = GPUML__MAX(maxes, gpuml__dtype_sizes[dt[k]]);
    vec = (int)(16 / maxes);
    for (k = 0; k < nops; k++)
        if (((uintptr_t)base[k]) % ((size_t)vec * gpuml__dtype_sizes[dt[k]]) != 0) return 1;
    return vec;
}
/* blocks for a grid-stride loop: one full wave of 256-thread blocks at most */
GPUML__FN unsigned gpuml__grid_wave(gpuml_ctx *ctx, int64_t items, unsigned block)
{
    int64_t blocks = (items + block - 1) / block, cap = (int64_t)GPUML__MAX(ctx->sm_count, 1) * (2048 / block);
    return (unsigned)GPUML__MAX(1, GPUML__MIN(blocks, cap));
}
GPUML__FN gpuml_status gpuml__cuda_ew(gpuml_ctx *ctx, const gpuml__ew *e, const gpuml__xiter *it)
{
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr ptr[4] = {0, 0, 0, 0};
    char opts[200];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    int k, vec = gpuml__vec_for(it->base, it->dt, it->nops), natural;
    size_t maxes = 1;
    gpuml_dtype dt[4] = {GPUML_F32, GPUML_F32, GPUML_F32, GPUML_F32};
    for (k = 0; k < it->nops; k++) {
        ptr[k] = (gpuml__CUdeviceptr)(uintptr_t)it->base[k];
        dt[k] = it->dt[k];
        maxes = GPUML__MAX(maxes, gpuml__dtype_sizes[dt[k]]);
    }
    natural = (int)(16 / maxes);
    /* one module per (op, dtypes) holds both kernels */
    snprintf(opts, sizeof opts, "-DOP=%d -DNIN=%d -DSCAL=%d -DDT_O=%d -DDT_A=%d -DDT_B=%d -DDT_C=%d -DVEC=%d", e->op, e->nin,
             e->scal, (int)dt[0], (int)dt[1], (int)dt[2], (int)dt[3], natural);
    if (gpuml__xiter_contig(it) && vec > 1) {
        void *args[7];
        float s0 = e->s0, s1 = e->s1;
        int64_t n = it->n;
        args[0] = &n; args[1] = &ptr[0]; args[2] = &ptr[1]; args[3] = &ptr[2]; args[4] = &ptr[3]; args[5] = &s0; args[6] = &s1;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_ew_contig", &fn));
        grid[0] = gpuml__grid_wave(ctx, (n + vec - 1) / vec, 256);
        return gpuml__launch(ctx, fn, grid, block, 0, args, "elementwise op");
    } else {
        gpuml__kshape ks;
        gpuml__kview kv[4];
        void *args[8];
        float s0 = e->s0, s1 = e->s1;
        gpuml__xkparams(it, &ks, kv);
        args[0] = &ks; args[1] = kv; args[2] = &ptr[0]; args[3] = &ptr[1]; args[4] = &ptr[2]; args[5] = &ptr[3];
        args[6] = &s0; args[7] = &s1;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_ew_strided", &fn));
        grid[0] = gpuml__grid_wave(ctx, it->n, 256);
        return gpuml__launch(ctx, fn, grid, block, 0, args, "elementwise op");
    }
}
#endif

/* runs an elementwise job; ops[0] is the output, the rest inputs broadcast to its shape */
GPUML__FN gpuml_status gpuml__ew_run(gpuml_ctx *ctx, gpuml__ew *e, const gpuml_tensor *const *ops)
{
    gpuml__xiter it;
    int k;
    gpuml__xiter_make(&it, ops, e->nin + 1);
    for (k = 0; k <= e->nin; k++) e->dt[k] = ops[k]->dtype;
    if (it.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__xforeach(ctx, &it, gpuml__ew_row, e);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_ew(ctx, e, &it);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

/* the front door of every elementwise op: validates, broadcasts, runs.
   in[] may hold NULLs past nin; float_in[k] says input k must be a floating dtype. */
GPUML__FN gpuml_status gpuml__ew_op(gpuml_ctx *ctx, const char *op, int code, int scal, double s0, double s1,
                                    gpuml_tensor *out, const gpuml_tensor *const *in, const char *const *names, int nin,
                                    gpuml_dtype want_out)
{
    gpuml_tensor v[3];
    const gpuml_tensor *ops[4];
    gpuml__ew e;
    int64_t shape[GPUML_MAX_DIMS];
    int ndim = 0, i, k;
    char s1b[200], s2b[200], s3b[200];
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if (out->dtype != want_out)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: out is %s but the result is %s", op, gpuml__dtype_names[out->dtype],
                           gpuml__dtype_names[want_out]);
    /* the broadcast shape of the inputs must be out's shape */
    for (k = 0; k < nin; k++) ndim = GPUML__MAX(ndim, in[k]->ndim);
    for (i = 0; i < ndim; i++) {
        shape[i] = 1;
        for (k = 0; k < nin; k++) {
            int j = i - (ndim - in[k]->ndim);
            int64_t d = j >= 0 ? in[k]->shape[j] : 1;
            if (d != 1 && shape[i] != 1 && d != shape[i]) {
                if (nin == 1) break;
                return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: shapes %s (%s) and %s (%s)%s%s do not broadcast", op,
                                   gpuml__shape_str(in[0], s1b, sizeof s1b), names[0], gpuml__shape_str(in[1], s2b, sizeof s2b),
                                   names[1], nin > 2 ? " and " : "", nin > 2 ? gpuml__shape_str(in[2], s3b, sizeof s3b) : "");
            }
            if (d != 1) shape[i] = d;
        }
    }
    {
        int same = ndim == out->ndim;
        for (i = 0; same && i < ndim; i++) same = shape[i] == out->shape[i];
        if (!same) {
            gpuml_tensor tmp = *out;
            tmp.ndim = ndim;
            for (i = 0; i < ndim; i++) tmp.shape[i] = shape[i];
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: out is %s but the inputs broadcast to %s", op,
                               gpuml__shape_str(out, s1b, sizeof s1b), gpuml__shape_str(&tmp, s2b, sizeof s2b));
        }
    }
    ops[0] = out;
    for (k = 0; k < nin; k++) {
        GPUML__TRY(gpuml__check_alias(ctx, out, in[k], op, "out", names[k]));
        gpuml__bcast_to(in[k], out->ndim, out->shape, &v[k]);
        ops[k + 1] = &v[k];
    }
    memset(&e, 0, sizeof e);
    e.op = code; e.nin = nin; e.scal = scal; e.s0 = (float)s0; e.s1 = (float)s1;
    return gpuml__ew_run(ctx, &e, ops);
}

GPUML__DEF gpuml_status gpuml_binary(gpuml_ctx *ctx, gpuml_binary_op bop, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b)
{
    static const char op[] = "gpuml_binary";
    static const char *const names[2] = { "a", "b" };
    const gpuml_tensor *in[2];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    GPUML__TRY(gpuml__check_tensor(ctx, b, op, "b"));
    if ((unsigned)bop > GPUML_BINARY_POW) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d is not a gpuml_binary_op", op, (int)bop);
    GPUML__TRY(gpuml__need_float(ctx, a, op, "a"));
    GPUML__TRY(gpuml__need_float(ctx, b, op, "b"));
    in[0] = a; in[1] = b;
    return gpuml__ew_op(ctx, op, (int)bop, 0, 0, 0, out, in, names, 2, gpuml__promote(a->dtype, b->dtype));
}
GPUML__FN gpuml_status gpuml__binary_scalar(gpuml_ctx *ctx, gpuml_binary_op bop, gpuml_tensor *out, const gpuml_tensor *a, double s, int scal)
{
    const char *op = scal == 1 ? "gpuml_binary_scalar" : "gpuml_scalar_binary";
    static const char *const names[1] = { "a" };
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    if ((unsigned)bop > GPUML_BINARY_POW) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d is not a gpuml_binary_op", op, (int)bop);
    GPUML__TRY(gpuml__need_float(ctx, a, op, "a"));
    return gpuml__ew_op(ctx, op, (int)bop, scal, s, 0, out, &a, names, 1, a->dtype);
}
GPUML__DEF gpuml_status gpuml_binary_scalar(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, const gpuml_tensor *a, double s)
{ return gpuml__binary_scalar(ctx, op, out, a, s, 1); }
GPUML__DEF gpuml_status gpuml_scalar_binary(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, double s, const gpuml_tensor *a)
{ return gpuml__binary_scalar(ctx, op, out, a, s, 2); }
GPUML__DEF gpuml_status gpuml_add(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_ADD, out, a, b); }
GPUML__DEF gpuml_status gpuml_sub(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_SUB, out, a, b); }
GPUML__DEF gpuml_status gpuml_mul(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_MUL, out, a, b); }
GPUML__DEF gpuml_status gpuml_div(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_DIV, out, a, b); }
GPUML__DEF gpuml_status gpuml_maximum(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_MAXIMUM, out, a, b); }
GPUML__DEF gpuml_status gpuml_minimum(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_MINIMUM, out, a, b); }
GPUML__DEF gpuml_status gpuml_pow(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_POW, out, a, b); }
GPUML__DEF gpuml_status gpuml_add_scalar(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, double s) { return gpuml_binary_scalar(ctx, GPUML_BINARY_ADD, out, a, s); }
GPUML__DEF gpuml_status gpuml_mul_scalar(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, double s) { return gpuml_binary_scalar(ctx, GPUML_BINARY_MUL, out, a, s); }

/* unary ops and clamp: out and x of one shape and dtype */
GPUML__FN gpuml_status gpuml__unary(gpuml_ctx *ctx, const char *op, int code, gpuml_tensor *out, const gpuml_tensor *x, double s0, double s1)
{
    static const char *const names[1] = { "x" };
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_same_shape(ctx, out, x, op, "out", "x"));
    return gpuml__ew_op(ctx, op, code, 0, s0, s1, out, &x, names, 1, x->dtype);
}
GPUML__DEF gpuml_status gpuml_unary(gpuml_ctx *ctx, gpuml_unary_op uop, gpuml_tensor *out, const gpuml_tensor *x)
{
    if (ctx && (unsigned)uop >= GPUML_UNARY_COUNT)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_unary: op %d is not a gpuml_unary_op", (int)uop);
    return gpuml__unary(ctx, "gpuml_unary", GPUML__EW_UNARY + (int)uop, out, x, 0, 0);
}
GPUML__DEF gpuml_status gpuml_neg(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_NEG, out, x); }
GPUML__DEF gpuml_status gpuml_abs(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_ABS, out, x); }
GPUML__DEF gpuml_status gpuml_exp(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_EXP, out, x); }
GPUML__DEF gpuml_status gpuml_log(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_LOG, out, x); }
GPUML__DEF gpuml_status gpuml_sqrt(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SQRT, out, x); }
GPUML__DEF gpuml_status gpuml_rsqrt(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_RSQRT, out, x); }
GPUML__DEF gpuml_status gpuml_sin(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SIN, out, x); }
GPUML__DEF gpuml_status gpuml_cos(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_COS, out, x); }
GPUML__DEF gpuml_status gpuml_tanh(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_TANH, out, x); }
GPUML__DEF gpuml_status gpuml_sigmoid(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SIGMOID, out, x); }
GPUML__DEF gpuml_status gpuml_relu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_RELU, out, x); }
GPUML__DEF gpuml_status gpuml_gelu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_GELU, out, x); }
GPUML__DEF gpuml_status gpuml_gelu_tanh(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_GELU_TANH, out, x); }
GPUML__DEF gpuml_status gpuml_silu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SILU, out, x); }
GPUML__DEF gpuml_status gpuml_clamp(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x, double lo, double hi)
{
    if (ctx && !(lo <= hi)) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_clamp: lo %g > hi %g (or NaN)", lo, hi);
    return gpuml__unary(ctx, "gpuml_clamp", GPUML__EW_CLAMP, out, x, lo, hi);
}

GPUML__DEF gpuml_status gpuml_where(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *mask, const gpuml_tensor *a, const gpuml_tensor *b)
{
    static const char op[] = "gpuml_where";
    static const char *const names[3] = { "mask", "a", "b" };
    const gpuml_tensor *in[3];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, mask, op, "mask"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    GPUML__TRY(gpuml__check_tensor(ctx, b, op, "b"));
    if (mask->dtype != GPUML_U8 && mask->dtype != GPUML_I32)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: mask is %s; it must be u8 or i32", op, gpuml__dtype_names[mask->dtype]);
    GPUML__TRY(gpuml__need_float(ctx, a, op, "a"));
    GPUML__TRY(gpuml__need_dtype(ctx, b, a->dtype, op, "b"));
    in[0] = mask; in[1] = a; in[2] = b;
    return gpuml__ew_op(ctx, op, GPUML__EW_WHERE, 0, 0, 0, out, in, names, 3, a->dtype);
}

GPUML__DEF gpuml_status gpuml_activation_backward(gpuml_ctx *ctx, gpuml_unary_op uop, gpuml_tensor *dx, const gpuml_tensor *dy,
                                                  const gpuml_tensor *x)
{
    static const char op[] = "gpuml_activation_backward";
    static const char *const names[2] = { "dy", "x" };
    const gpuml_tensor *in[2];
    int code;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, dx, op, "dx"));
    GPUML__TRY(gpuml__check_tensor(ctx, dy, op, "dy"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    switch (uop) {
    case GPUML_UNARY_RELU: code = GPUML__EW_RELU_GRAD; break;
    case GPUML_UNARY_GELU: code = GPUML__EW_GELU_GRAD; break;
    case GPUML_UNARY_GELU_TANH: code = GPUML__EW_GELU_TANH_GRAD; break;
    case GPUML_UNARY_SILU: code = GPUML__EW_SILU_GRAD; break;
    default:
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d has no backward here (RELU, GELU, GELU_TANH, SILU)", op, (int)uop);
    }
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_dtype(ctx, dy, x->dtype, op, "dy"));
    GPUML__TRY(gpuml__need_same_shape(ctx, dy, x, op, "dy", "x"));
    GPUML__TRY(gpuml__need_same_shape(ctx, dx, x, op, "dx", "x"));
    in[0] = dy; in[1] = x;
    return gpuml__ew_op(ctx, op, code, 0, 0, 0, dx, in, names, 2, x->dtype);
}

/* ------------------------------------------------------------------ reductions ---- */
/* x split into outer (kept) and inner (reduced) dims, size-1 dims dropped and neighbours
   merged; the layout matches struct gpuml__rparams of kernels/reduce.cu */
typedef struct gpuml__rplan {
    gpuml__kshape os;
    gpuml__kview oxv, oov;
    gpuml__kshape is;
    gpuml__kview ixv;
    int64_t chunk;
    int nsplit, contig, aligned;
    float correction;
} gpuml__rplan;

/* red[d]: dim d of x is reduced; ostr[d]: out's stride for kept dim d */
GPUML__FN void gpuml__rplan_make(gpuml__rplan *p, const gpuml_tensor *x, const int *red, const int64_t *ostr)
{
    int d;
    memset(p, 0, sizeof *p);
    p->os.n = 1; p->is.n = 1;
    for (d = 0; d < x->ndim; d++) {
        int64_t sz = x->shape[d];
        if (red[d]) {
            int k = p->is.ndim;
            p->is.n *= sz;
            if (sz == 1) continue;
            if (k > 0 && p->ixv.strides[k - 1] == x->strides[d] * sz) {
                p->is.dims[k - 1] *= sz; p->ixv.strides[k - 1] = x->strides[d];
            } else {
                p->is.dims[k] = sz; p->ixv.strides[k] = x->strides[d]; p->is.ndim++;
            }
        } else {
            int k = p->os.ndim;
            p->os.n *= sz;
            if (sz == 1) continue;
            if (k > 0 && p->oxv.strides[k - 1] == x->strides[d] * sz && p->oov.strides[k - 1] == ostr[d] * sz) {
                p->os.dims[k - 1] *= sz; p->oxv.strides[k - 1] = x->strides[d]; p->oov.strides[k - 1] = ostr[d];
            } else {
                p->os.dims[k] = sz; p->oxv.strides[k] = x->strides[d]; p->oov.strides[k] = ostr[d]; p->os.ndim++;
            }
        }
    }
    p->contig = p->is.ndim == 0 || (p->is.ndim == 1 && p->ixv.strides[0] == 1);
    p->nsplit = 1;
    p->chunk = p->is.n;
}
GPUML__FN int64_t gpuml__row_off(const gpuml__kshape *s, const gpuml__kview *v, int64_t i)
{
    int64_t off = 0;
    int d;
    for (d = s->ndim - 1; d >= 0; d--) { int64_t q = i / s->dims[d]; off += (i - q * s->dims[d]) * v->strides[d]; i = q; }
    return off;
}

/* CPU accumulator: the same merges as kernels/reduce.cu, in double */
typedef struct gpuml__cacc { double v, m2, n; int64_t idx; } gpuml__cacc;
GPUML__FN gpuml__cacc gpuml__cacc_init(int kind)
{
    gpuml__cacc a;
    a.v = (kind == GPUML_REDUCE_MAX || kind == GPUML_REDUCE_ARGMAX) ? -HUGE_VAL : kind == GPUML_REDUCE_MIN ? HUGE_VAL : 0.0;
    a.m2 = 0; a.n = 0; a.idx = INT64_MAX;
    return a;
}
GPUML__FN int gpuml__better(double v1, int64_t i1, double v2, int64_t i2)
{
    int n1 = v1 != v1, n2 = v2 != v2;
    if (n1 && n2) return i2 < i1;
    if (n1) return 0;
    if (n2) return 1;
    return v2 > v1 || (v2 == v1 && i2 < i1);
}
GPUML__FN void gpuml__cacc_merge(int kind, gpuml__cacc *a, const gpuml__cacc *b)
{
    switch (kind) {
    case GPUML_REDUCE_SUM: case GPUML_REDUCE_MEAN: a->v += b->v; break;
    case GPUML_REDUCE_MAX: if (a->v == a->v && (b->v != b->v || b->v > a->v)) a->v = b->v; break;
    case GPUML_REDUCE_MIN: if (a->v == a->v && (b->v != b->v || b->v < a->v)) a->v = b->v; break;
    case GPUML_REDUCE_ARGMAX: if (gpuml__better(a->v, a->idx, b->v, b->idx)) { a->v = b->v; a->idx = b->idx; } break;
    default: {
        double n = a->n + b->n, d;
        if (b->n == 0) break;
        if (a->n == 0) { *a = *b; break; }
        d = b->v - a->v;
        a->v += d * (b->n / n);
        a->m2 += b->m2 + d * d * a->n * (b->n / n);
        a->n = n;
    }
    }
}
/* folds n floats (inner indices first, first+1, ...) into a */
GPUML__FN void gpuml__cacc_add(int kind, gpuml__cacc *a, const float *x, int64_t n, int64_t first)
{
    int64_t i;
    switch (kind) {
    case GPUML_REDUCE_SUM: case GPUML_REDUCE_MEAN: {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (i = 0; i + 4 <= n; i += 4) { s0 += x[i]; s1 += x[i + 1]; s2 += x[i + 2]; s3 += x[i + 3]; }
        for (; i < n; i++) s0 += x[i];
        a->v += (s0 + s1) + (s2 + s3);
        break;
    }
    case GPUML_REDUCE_MAX:
        for (i = 0; i < n; i++) if (a->v == a->v && (x[i] != x[i] || x[i] > a->v)) a->v = x[i];
        break;
    case GPUML_REDUCE_MIN:
        for (i = 0; i < n; i++) if (a->v == a->v && (x[i] != x[i] || x[i] < a->v)) a->v = x[i];
        break;
    case GPUML_REDUCE_ARGMAX:
        for (i = 0; i < n; i++) if (gpuml__better(a->v, a->idx, x[i], first + i)) { a->v = x[i]; a->idx = first + i; }
        break;
    default: {
        gpuml__cacc t;
        double s = 0;
        for (i = 0; i < n; i++) s += x[i];
        t.n = (double)n; t.v = n ? s / (double)n : 0; t.m2 = 0; t.idx = 0;
        for (i = 0; i < n; i++) { double d = x[i] - t.v; t.m2 += d * d; }
        gpuml__cacc_merge(kind, a, &t);
    }
    }
}
GPUML__FN void gpuml__cacc_store(int kind, gpuml_dtype dt, char *out, const gpuml__cacc *a, int64_t count, double correction)
{
    double r;
    if (kind == GPUML_REDUCE_ARGMAX) { gpuml__i32 i = (gpuml__i32)a->idx; memcpy(out, &i, 4); return; }
    if (kind == GPUML_REDUCE_MEAN) r = a->v / (double)count;
    else if (kind == GPUML_REDUCE_VAR) r = count > 0 ? a->m2 / ((double)count - correction) : NAN;
    else r = a->v;
    gpuml__st_f32(dt, out, (float)r);
}

typedef struct gpuml__rjob {
    const gpuml__rplan *p;
    int kind;
    gpuml_dtype xdt;
    const char *x;
    gpuml__cacc *part;
} gpuml__rjob;
GPUML__FN void gpuml__reduce_task(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__rjob *j = (const gpuml__rjob *)arg;
    const gpuml__rplan *p = j->p;
    int64_t es = (int64_t)gpuml__dtype_sizes[j->xdt], w;
    float buf[GPUML__TILE];
    int last = p->is.ndim - 1;
    (void)tid;
    for (w = b; w < e; w++) {
        int64_t row = w / p->nsplit, sp = w % p->nsplit;
        int64_t lo = sp * p->chunk, hi = GPUML__MIN(lo + p->chunk, p->is.n), pos = lo;
        const char *xr = j->x + gpuml__row_off(&p->os, &p->oxv, row) * es;
        gpuml__cacc a = gpuml__cacc_init(j->kind);
        while (pos < hi) {
            /* a run along the innermost reduced dim */
            int64_t run, st, off, done;
            if (last < 0) { run = hi - pos; st = 0; off = 0; }
            else {
                int64_t inner = pos % p->is.dims[last];
                run = GPUML__MIN(p->is.dims[last] - inner, hi - pos);
                st = p->ixv.strides[last];
                off = gpuml__row_off(&p->is, &p->ixv, pos);
            }
            for (done = 0; done < run; done += GPUML__TILE) {
                int64_t n = GPUML__MIN((int64_t)GPUML__TILE, run - done);
                const float *v = gpuml__cpu_ld(j->xdt, xr + (off + done * st) * es, st * es, n, buf);
                gpuml__cacc_add(j->kind, &a, v, n, pos + done);
            }
            pos += run;
        }
        j->part[w] = a;
    }
}

#ifndef GPUML_NO_CUDA
GPUML__FN gpuml_status gpuml__cuda_reduce(gpuml_ctx *ctx, int kind, gpuml_tensor *out, const gpuml_tensor *x, gpuml__rplan *p)
{
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr xp = gpuml__dptr(x), op = gpuml__dptr(out), pp = 0;
    gpuml_tensor *scratch = NULL;
    char opts[160];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    int64_t es = (int64_t)gpuml__dtype_sizes[x->dtype], nwork;
    int vec = (int)(16 / es), d;
    gpuml_status st;
    snprintf(opts, sizeof opts, "-DRK=%d -DDT_X=%d -DDT_O=%d -DVEC=%d", kind, (int)x->dtype, (int)out->dtype, vec);
    if (!p->contig && p->os.n >= 4096 && p->os.ndim > 0 && p->oxv.strides[p->os.ndim - 1] == 1) {
        /* neighbouring outputs read neighbouring elements: a thread per output */
        void *args[3];
        args[0] = p; args[1] = &xp; args[2] = &op;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_reduce, opts, "gpuml_reduce_cols", &fn));
        grid[0] = gpuml__grid_wave(ctx, p->os.n, 256);
        return gpuml__launch(ctx, fn, grid, block, 0, args, "reduce");
    }
    /* split long reductions so that about two waves of blocks have work */
    if (p->is.n > 8192 && p->os.n < (int64_t)ctx->sm_count * 16) {
        int64_t want = ((int64_t)ctx->sm_count * 16 + p->os.n - 1) / p->os.n;
        int64_t maxs = (p->is.n + 8191) / 8192;
        int64_t ns = GPUML__MIN(want, maxs);
        p->chunk = (p->is.n + ns - 1) / ns;
        p->chunk = (p->chunk + vec - 1) / vec * vec;
        p->nsplit = (int)((p->is.n + p->chunk - 1) / p->chunk);
    }
    p->aligned = p->contig && xp % 16 == 0 && p->chunk % vec == 0;
    for (d = 0; d < p->os.ndim; d++) if ((p->oxv.strides[d] * es) % 16 != 0) p->aligned = 0;
    nwork = p->os.n * p->nsplit;
    if (p->nsplit > 1) {
        int64_t bytes = nwork * 16;
        scratch = gpuml__tensor_new(ctx, GPUML_U8, 1, &bytes, "reduce (scratch)");
        if (!scratch) return ctx->status;
        pp = gpuml__dptr(scratch);
    }
    {
        void *args[4];
        args[0] = p; args[1] = &xp; args[2] = &op; args[3] = &pp;
        st = gpuml__kernel(ctx, &gpuml__fam_reduce, opts, "gpuml_reduce_rows", &fn);
        grid[0] = (unsigned)GPUML__MIN(nwork, (int64_t)1 << 30);
        if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, grid, block, 0, args, "reduce");
    }
    if (st == GPUML_SUCCESS && p->nsplit > 1) {
        void *args[3];
        args[0] = p; args[1] = &op; args[2] = &pp;
        st = gpuml__kernel(ctx, &gpuml__fam_reduce, opts, "gpuml_reduce_finish", &fn);
        grid[0] = gpuml__grid_wave(ctx, p->os.n, 256);
        if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, grid, block, 0, args, "reduce");
    }
    gpuml_tensor_free(scratch);   /* stream-ordered: the next user of the block runs after us */
    return st;
}
#endif

/* the reduction engine: x validated, red[] the reduced dims, ostr[] out's strides by x dim */
GPUML__FN gpuml_status gpuml__reduce_run(gpuml_ctx *ctx, int kind, gpuml_tensor *out, const gpuml_tensor *x, const int *red,
                                         const int64_t *ostr, double correction)
{
    gpuml__rplan p;
    gpuml__rplan_make(&p, x, red, ostr);
    p.correction = (float)correction;
    if (p.os.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__rjob j;
        int64_t r, s, nth = gpuml__pool_size(ctx->pool);
        int64_t es = (int64_t)gpuml__dtype_sizes[out->dtype];
        if (p.is.n > 65536 && p.os.n < nth * 4) {
            int64_t ns = GPUML__MIN((nth * 4 + p.os.n - 1) / p.os.n, (p.is.n + 65535) / 65536);
            p.chunk = (p.is.n + ns - 1) / ns;
            p.nsplit = (int)((p.is.n + p.chunk - 1) / p.chunk);
        }
        j.p = &p; j.kind = kind; j.xdt = x->dtype; j.x = (const char *)gpuml_tensor_data(x);
        j.part = (gpuml__cacc *)gpuml__malloc(sizeof(gpuml__cacc) * (size_t)(p.os.n * p.nsplit));
        if (!j.part) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
        gpuml__parallel_for(ctx->pool, p.os.n * p.nsplit, p.is.n >= 4096 ? 1 : 4096 / GPUML__MAX(p.is.n, 1), gpuml__reduce_task, &j);
        for (r = 0; r < p.os.n; r++) {
            gpuml__cacc a = j.part[r * p.nsplit];
            for (s = 1; s < p.nsplit; s++) gpuml__cacc_merge(kind, &a, &j.part[r * p.nsplit + s]);
            gpuml__cacc_store(kind, out->dtype, (char *)gpuml_tensor_data(out) + gpuml__row_off(&p.os, &p.oov, r) * es, &a,
                              p.is.n, correction);
        }
        gpuml__free(j.part);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_reduce(ctx, kind, out, x, &p);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__FN gpuml_status gpuml__reduce(gpuml_ctx *ctx, const char *op, int kind, gpuml_tensor *out, const gpuml_tensor *x,
                                     const int *axes, int naxes, int keepdim, double correction)
{
    int red[GPUML_MAX_DIMS] = {0}, i, k, nout = 0;
    int64_t want[GPUML_MAX_DIMS], ostr[GPUML_MAX_DIMS] = {0};
    char s1[200], s2[200], s3[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    if ((unsigned)kind > GPUML_REDUCE_VAR) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d is not a gpuml_reduce_op", op, kind);
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    if (kind == GPUML_REDUCE_ARGMAX) GPUML__TRY(gpuml__need_dtype(ctx, out, GPUML_I32, op, "out (argmax)"));
    else GPUML__TRY(gpuml__need_float(ctx, out, op, "out"));
    if (naxes < 0 || naxes > x->ndim || (naxes > 0 && !axes))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: naxes = %d with axes %s for a %d-d x", op, naxes,
                           axes ? "given" : "NULL", x->ndim);
    for (k = 0; k < naxes; k++) {
        int a = axes[k] < 0 ? axes[k] + x->ndim : axes[k];
        if (a < 0 || a >= x->ndim)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: axis %d is out of range for x %s", op, axes[k], gpuml__shape_str(x, s1, sizeof s1));
        if (red[a]) return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: axis %d is given twice", op, axes[k]);
        red[a] = 1;
    }
    if (naxes == 0) for (i = 0; i < x->ndim; i++) red[i] = 1;
    for (i = 0; i < x->ndim; i++) {
        if (!red[i]) want[nout++] = x->shape[i];
        else if (keepdim) want[nout++] = 1;
    }
    {
        int same = out->ndim == nout;
        for (i = 0; same && i < nout; i++) same = out->shape[i] == want[i];
        if (!same) {
            gpuml_tensor tmp = *out;
            tmp.ndim = nout;
            for (i = 0; i < nout; i++) tmp.shape[i] = want[i];
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: out is %s but reducing x %s %s gives %s", op,
                               gpuml__shape_str(out, s1, sizeof s1), gpuml__shape_str(x, s2, sizeof s2),
                               keepdim ? "(keepdim)" : "", gpuml__shape_str(&tmp, s3, sizeof s3));
        }
    }
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if (gpuml__overlap(out, x)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: out overlaps x", op);
    for (i = 0, k = 0; i < x->ndim; i++) {
        if (!red[i]) ostr[i] = out->strides[k++];
        else if (keepdim) k++;
    }
    if (kind == GPUML_REDUCE_MAX || kind == GPUML_REDUCE_MIN || kind == GPUML_REDUCE_ARGMAX) {
        int64_t n = 1;
        for (i = 0; i < x->ndim; i++) if (red[i]) n *= x->shape[i];
        if (n == 0 && gpuml__numel(out) > 0)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: max/min/argmax over an empty set of elements (x %s)", op,
                               gpuml__shape_str(x, s1, sizeof s1));
    }
    return gpuml__reduce_run(ctx, kind, out, x, red, ostr, correction);
}
GPUML__DEF gpuml_status gpuml_reduce(gpuml_ctx *ctx, gpuml_reduce_op op, gpuml_tensor *out, const gpuml_tensor *x,
                                     const int *axes, int naxes, int keepdim)
{
    return gpuml__reduce(ctx, "gpuml_reduce", (int)op, out, x, axes, naxes, keepdim, 1.0);
}
GPUML__DEF gpuml_status gpuml_var(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x, const int *axes, int naxes,
                                  int keepdim, double correction)
{
    return gpuml__reduce(ctx, "gpuml_var", GPUML_REDUCE_VAR, out, x, axes, naxes, keepdim, correction);
}

GPUML__DEF gpuml_status gpuml_sum_to_shape(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *grad)
{
    static const char op[] = "gpuml_sum_to_shape";
    int red[GPUML_MAX_DIMS] = {0}, i, lead;
    int64_t ostr[GPUML_MAX_DIMS] = {0};
    char s1[200], s2[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, grad, op, "grad"));
    GPUML__TRY(gpuml__need_float(ctx, grad, op, "grad"));
    GPUML__TRY(gpuml__need_float(ctx, out, op, "out"));
    lead = grad->ndim - out->ndim;
    for (i = 0; i < grad->ndim && lead >= 0; i++) {
        int j = i - lead;
        if (j < 0) { red[i] = 1; continue; }
        if (out->shape[j] == grad->shape[i]) ostr[i] = out->strides[j];
        else if (out->shape[j] == 1) red[i] = 1;
        else break;
    }
    if (lead < 0 || i < grad->ndim)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: out %s does not broadcast to grad %s", op,
                           gpuml__shape_str(out, s1, sizeof s1), gpuml__shape_str(grad, s2, sizeof s2));
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if (gpuml__overlap(out, grad)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: out overlaps grad", op);
    return gpuml__reduce_run(ctx, GPUML_REDUCE_SUM, out, grad, red, ostr, 0.0);
}

/* ------------------------------------------------------------------ row ops ---- */
/* softmax, log_softmax, layernorm, rmsnorm, their backward passes and cross-entropy all
   work on rows: one axis of x (length n) for every index of the other dims.  The layout
   matches struct gpuml__nparams of kernels/norm.cu. */
enum { GPUML__ROW_SOFTMAX = 0, GPUML__ROW_LOG_SOFTMAX, GPUML__ROW_LAYERNORM, GPUML__ROW_RMSNORM,
       GPUML__ROW_LAYERNORM_BWD, GPUML__ROW_RMSNORM_BWD, GPUML__ROW_XENT };
typedef struct gpuml__nplan {
    gpuml__kshape rs;
    gpuml__kview v[3];          /* x, y (dx), dy */
    int64_t n;
    int64_t xs, ys, dys, ws, bs, ls;
    float eps, scale;
} gpuml__nplan;

typedef struct gpuml__rowop {
    int kind;
    const gpuml_tensor *x, *dy, *w, *b, *labels;
    gpuml_tensor *y;            /* y, dx or dlogits (may be NULL for cross-entropy) */
    gpuml_tensor *dw, *db;      /* backward parameter gradients (may be NULL) */
    gpuml_tensor *loss;         /* cross-entropy */
    int axis;
    double eps;
} gpuml__rowop;

GPUML__FN void gpuml__nplan_make(gpuml__nplan *p, const gpuml__rowop *r)
{
    const gpuml_tensor *t[3];
    int d, k, nd = 0;
    t[0] = r->x; t[1] = r->y ? r->y : r->x; t[2] = r->dy ? r->dy : r->x;
    memset(p, 0, sizeof *p);
    p->rs.n = 1;
    for (d = 0; d < r->x->ndim; d++) {
        int64_t sz = r->x->shape[d];
        int merge = nd > 0;
        if (d == r->axis) continue;
        p->rs.n *= sz;
        if (sz == 1) continue;
        for (k = 0; k < 3 && merge; k++) if (p->v[k].strides[nd - 1] != t[k]->strides[d] * sz) merge = 0;
        if (merge) {
            p->rs.dims[nd - 1] *= sz;
            for (k = 0; k < 3; k++) p->v[k].strides[nd - 1] = t[k]->strides[d];
        } else {
            p->rs.dims[nd] = sz;
            for (k = 0; k < 3; k++) p->v[k].strides[nd] = t[k]->strides[d];
            nd++;
        }
    }
    p->rs.ndim = nd;
    p->n = r->x->ndim ? r->x->shape[r->axis] : 1;
    p->xs = r->x->ndim ? t[0]->strides[r->axis] : 1;
    p->ys = r->x->ndim ? t[1]->strides[r->axis] : 1;
    p->dys = r->x->ndim ? t[2]->strides[r->axis] : 1;
    p->ws = r->w ? r->w->strides[0] : 0;
    p->bs = r->b ? r->b->strides[0] : 0;
    p->ls = r->labels ? r->labels->strides[0] : 0;
    p->eps = (float)r->eps;
    p->scale = r->kind == GPUML__ROW_XENT ? (float)(1.0 / (double)GPUML__MAX(p->rs.n, 1)) : 1.0f;
}

/* ---- CPU ---- */
typedef struct gpuml__rowjob {
    const gpuml__rowop *r;
    const gpuml__nplan *p;
    const float *w, *b;         /* weight and bias as floats (NULL: none) */
    double *acc;                /* backward: per thread [dw | db], 2n doubles each */
    double *loss;               /* cross-entropy: per row */
} gpuml__rowjob;

GPUML__FN void gpuml__rows_task(void *arg, int64_t rb, int64_t re, int tid)
{
    const gpuml__rowjob *j = (const gpuml__rowjob *)arg;
    const gpuml__rowop *r = j->r;
    const gpuml__nplan *p = j->p;
    int64_t n = p->n, row, i;
    gpuml_dtype dt = r->x->dtype;
    int64_t es = (int64_t)gpuml__dtype_sizes[dt];
    float *buf = (float *)gpuml__malloc(sizeof(float) * (size_t)(3 * n + 1));
    float *xb, *yb, *db;
    if (!buf) return;   /* cannot happen on any real machine; leaves the output as it was */
    xb = buf; yb = buf + n; db = buf + 2 * n;
    for (row = rb; row < re; row++) {
        const char *xp = (const char *)gpuml_tensor_data(r->x) + gpuml__row_off(&p->rs, &p->v[0], row) * es;
        char *yp = r->y ? (char *)gpuml_tensor_data(r->y) + gpuml__row_off(&p->rs, &p->v[1], row) * es : NULL;
        const float *x = gpuml__cpu_ld(dt, xp, p->xs * es, n, xb), *dy = NULL;
        double mean = 0, rstd = 0, s = 0, mx = -HUGE_VAL;
        if (r->dy) dy = gpuml__cpu_ld(dt, (const char *)gpuml_tensor_data(r->dy) + gpuml__row_off(&p->rs, &p->v[2], row) * es,
                                      p->dys * es, n, db);
        switch (r->kind) {
        case GPUML__ROW_SOFTMAX: case GPUML__ROW_LOG_SOFTMAX: case GPUML__ROW_XENT: {
            int32_t lab = 0;
            int ok = 1;
            for (i = 0; i < n; i++) if (x[i] > mx) mx = x[i];
            for (i = 0; i < n; i++) { double e = x[i] != x[i] ? (double)x[i] : exp((double)x[i] - mx); s += e; }
            if (r->kind == GPUML__ROW_XENT) {
                memcpy(&lab, (const char *)gpuml_tensor_data(r->labels) + row * p->ls * 4, 4);
                ok = lab >= 0 && lab < n;
                j->loss[row] = ok ? mx + log(s) - x[lab] : NAN;
                if (!yp) break;
            }
            for (i = 0; i < n; i++) {
                double v = (double)x[i] - mx;
                if (r->kind == GPUML__ROW_SOFTMAX) yb[i] = (float)(exp(v) / s);
                else if (r->kind == GPUML__ROW_LOG_SOFTMAX) yb[i] = (float)(v - log(s));
                else yb[i] = ok ? (float)((exp(v) / s - (i == lab)) * p->scale) : NAN;
            }
            break;
        }
        default: {
            int ln = r->kind == GPUML__ROW_LAYERNORM || r->kind == GPUML__ROW_LAYERNORM_BWD;
            double q = 0;
            if (ln) {
                for (i = 0; i < n; i++) s += x[i];
                mean = s / (double)n;
            }
            for (i = 0; i < n; i++) q += (x[i] - mean) * (x[i] - mean);
            rstd = 1.0 / sqrt(q / (double)n + r->eps);
            if (r->kind == GPUML__ROW_LAYERNORM || r->kind == GPUML__ROW_RMSNORM) {
                for (i = 0; i < n; i++)
                    yb[i] = (float)((x[i] - mean) * rstd * (j->w ? j->w[i] : 1.0f) + (j->b ? j->b[i] : 0.0f));
            } else {
                double sg = 0, sgx = 0, *acc = j->acc + (size_t)tid * 2 * (size_t)n;
                for (i = 0; i < n; i++) {
                    double g = (double)dy[i] * (j->w ? j->w[i] : 1.0f), xh = (x[i] - mean) * rstd;
                    sg += g; sgx += g * xh;
                    acc[i] += dy[i] * xh;
                    acc[n + i] += dy[i];
                }
                sg = ln ? sg / (double)n : 0;
                sgx /= (double)n;
                for (i = 0; i < n; i++) {
                    double g = (double)dy[i] * (j->w ? j->w[i] : 1.0f), xh = (x[i] - mean) * rstd;
                    yb[i] = (float)(rstd * (g - sg - xh * sgx));
                }
            }
        }
        }
        if (yp) gpuml__cpu_st(dt, yp, p->ys * es, n, yb);
    }
    gpuml__free(buf);
}

GPUML__FN float *gpuml__cpu_floats(const gpuml_tensor *t)
{
    float *f;
    int64_t n;
    if (!t) return NULL;
    n = gpuml__numel(t);
    f = (float *)gpuml__malloc(sizeof(float) * (size_t)(n + 1));
    if (f) {
        const float *v = gpuml__cpu_ld(t->dtype, (const char *)gpuml_tensor_data(t), t->ndim ? t->strides[0] * (int64_t)gpuml__dtype_sizes[t->dtype] : 0, n, f);
        if (v != f) memcpy(f, v, sizeof(float) * (size_t)n);
    }
    return f;
}

GPUML__FN gpuml_status gpuml__cpu_rows(gpuml_ctx *ctx, const gpuml__rowop *r, const gpuml__nplan *p)
{
    gpuml__rowjob j;
    int nth = gpuml__pool_size(ctx->pool), bwd = r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD;
    gpuml_status st = GPUML_SUCCESS;
    int64_t n = p->n, i, t;
    memset(&j, 0, sizeof j);
    j.r = r; j.p = p;
    j.w = gpuml__cpu_floats(r->w);
    j.b = gpuml__cpu_floats(r->b);
    if (bwd) j.acc = (double *)gpuml__calloc(sizeof(double) * 2 * (size_t)n * (size_t)nth);
    if (r->kind == GPUML__ROW_XENT) j.loss = (double *)gpuml__malloc(sizeof(double) * (size_t)(p->rs.n + 1));
    if ((r->w && !j.w) || (r->b && !j.b) || (bwd && !j.acc) || (r->kind == GPUML__ROW_XENT && !j.loss)) {
        st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    gpuml__parallel_for(ctx->pool, p->rs.n, GPUML__MAX(1, 16384 / GPUML__MAX(n, 1)), gpuml__rows_task, &j);
    if (bwd) {
        float *f = (float *)gpuml__malloc(sizeof(float) * (size_t)(2 * n + 1));
        if (!f) { st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory"); goto done; }
        for (i = 0; i < 2 * n; i++) {
            double s = 0;
            for (t = 0; t < nth; t++) s += j.acc[(size_t)t * 2 * (size_t)n + (size_t)i];
            f[i] = (float)s;
        }
        if (r->dw) gpuml__cpu_st(r->dw->dtype, (char *)gpuml_tensor_data(r->dw), r->dw->strides[0] * (int64_t)gpuml__dtype_sizes[r->dw->dtype], n, f);
        if (r->db) gpuml__cpu_st(r->db->dtype, (char *)gpuml_tensor_data(r->db), r->db->strides[0] * (int64_t)gpuml__dtype_sizes[r->db->dtype], n, f + n);
        gpuml__free(f);
    }
    if (r->kind == GPUML__ROW_XENT) {
        double s = 0;
        float l;
        for (i = 0; i < p->rs.n; i++) s += j.loss[i];
        l = (float)(s / (double)p->rs.n);
        memcpy(gpuml_tensor_data(r->loss), &l, 4);
    }
done:
    gpuml__free((void *)(uintptr_t)j.w);
    gpuml__free((void *)(uintptr_t)j.b);
    gpuml__free(j.acc);
    gpuml__free(j.loss);
    return st;
}

/* ---- GPU ---- */
#ifndef GPUML_NO_CUDA
GPUML__FN int gpuml__aligned16(gpuml__CUdeviceptr p) { return p % 16 == 0; }

GPUML__FN gpuml_status gpuml__cuda_rows(gpuml_ctx *ctx, const gpuml__rowop *r, gpuml__nplan *p)
{
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr xp = gpuml__dptr(r->x), yp = r->y ? gpuml__dptr(r->y) : 0, dyp = r->dy ? gpuml__dptr(r->dy) : 0;
    gpuml__CUdeviceptr wp = r->w ? gpuml__dptr(r->w) : 0, bp = r->b ? gpuml__dptr(r->b) : 0;
    gpuml__CUdeviceptr lp = r->labels ? gpuml__dptr(r->labels) : 0, p0 = 0, p1 = 0;
    gpuml_tensor *scratch = NULL;
    int64_t es = (int64_t)gpuml__dtype_sizes[r->x->dtype], n = p->n, nrows = p->rs.n, maxept;
    int bwd = r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD;
    int vec = (int)(16 / es), nv, d, k;
    unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    char opts[256];
    void *args[10];
    gpuml_status st;
    /* 16-byte vectors when every row of every operand is dense and aligned */
    if (n % vec != 0 || p->xs != 1 || !gpuml__aligned16(xp)) vec = 1;
    if (r->y && (p->ys != 1 || !gpuml__aligned16(yp))) vec = 1;
    if (r->dy && (p->dys != 1 || !gpuml__aligned16(dyp))) vec = 1;
    if (r->w && (p->ws != 1 || wp % (gpuml__CUdeviceptr)(vec * (int64_t)gpuml__dtype_sizes[r->w->dtype]) != 0)) vec = 1;
    if (r->b && (p->bs != 1 || bp % (gpuml__CUdeviceptr)(vec * (int64_t)gpuml__dtype_sizes[r->b->dtype]) != 0)) vec = 1;
    for (d = 0; d < p->rs.ndim && vec > 1; d++)
        for (k = 0; k < 3; k++) if ((p->v[k].strides[d] * es) % 16 != 0) vec = 1;
    /* registers per thread: up to 64 row elements forward, 16 backward (x, dy and two sums) */
    /* about 16 elements per thread (fewer, smaller blocks for short rows: cheaper block
       reductions), more while a row needs over 256 threads (measured best for 4096-32768) */
    maxept = bwd ? 16 : 64;
    nv = 1;
    while (((int64_t)vec * nv < 16 || (n + (int64_t)vec * nv - 1) / ((int64_t)vec * nv) > 256) && (int64_t)vec * nv * 2 <= maxept &&
           (n + (int64_t)vec * nv * 2 - 1) / ((int64_t)vec * nv * 2) >= 32)
        nv *= 2;
    {
        int64_t threads = (n + (int64_t)vec * nv - 1) / ((int64_t)vec * nv);
        threads = (threads + 31) / 32 * 32;
        if (threads > 512) { nv = 0; vec = 1; threads = 512; }
        if (threads < 32) threads = 32;
        block[0] = (unsigned)threads;
    }
    if (bwd) grid[0] = (unsigned)GPUML__MIN(nrows, (int64_t)GPUML__MAX(ctx->sm_count, 1) * GPUML__MAX(1, 2048 / (int)block[0]));
    else grid[0] = (unsigned)GPUML__MIN(nrows, (int64_t)1 << 30);
    if (bwd || r->kind == GPUML__ROW_XENT) {
        int64_t cnt = bwd ? (int64_t)grid[0] * n * (r->kind == GPUML__ROW_LAYERNORM_BWD ? 2 : 1) : nrows;
        scratch = gpuml__tensor_new(ctx, GPUML_F32, 1, &cnt, "row op (scratch)");
        if (!scratch) return ctx->status;
        p0 = gpuml__dptr(scratch);
        p1 = p0 + (gpuml__CUdeviceptr)((int64_t)grid[0] * n * 4);
    }
    snprintf(opts, sizeof opts, "-DRK=%d -DDT_X=%d -DDT_W=%d -DDT_B=%d -DHAS_W=%d -DHAS_B=%d -DHAS_Y=%d -DVEC=%d -DNV=%d",
             r->kind, (int)r->x->dtype, r->w ? (int)r->w->dtype : 0, r->b ? (int)r->b->dtype : 0, r->w != NULL, r->b != NULL,
             r->y != NULL, vec, nv);
    args[0] = p; args[1] = &xp; args[2] = &yp; args[3] = &dyp; args[4] = &wp; args[5] = &bp; args[6] = &lp;
    args[7] = &p0; args[8] = &p1;
    st = gpuml__kernel(ctx, &gpuml__fam_norm, opts, "gpuml_rows", &fn);
    if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, grid, block, 0, args, "row op");
    if (st == GPUML_SUCCESS && bwd) {
        /* parameter gradients: column sums of the per-block partials */
        gpuml_tensor *outs[2];
        gpuml__CUdeviceptr parts[2];
        int i;
        outs[0] = r->dw; outs[1] = r->db; parts[0] = p0; parts[1] = p1;
        for (i = 0; i < 2 && st == GPUML_SUCCESS; i++) {
            int64_t nb = grid[0], os;
            gpuml__CUdeviceptr op;
            unsigned g2[3] = {0, 0, 0}, b2[3] = {256, 0, 0};
            void *a2[5];
            if (!outs[i]) continue;
            op = gpuml__dptr(outs[i]);
            os = outs[i]->strides[0];
            snprintf(opts, sizeof opts, "-DCOLSUM=1 -DDT_O=%d", (int)outs[i]->dtype);
            a2[0] = &nb; a2[1] = &p->n; a2[2] = &parts[i]; a2[3] = &op; a2[4] = &os;
            st = gpuml__kernel(ctx, &gpuml__fam_norm, opts, "gpuml_colsum", &fn);
            g2[0] = gpuml__grid_wave(ctx, n, 256);
            if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, g2, b2, 0, a2, "row op (parameter gradients)");
        }
    }
    if (st == GPUML_SUCCESS && r->kind == GPUML__ROW_XENT) {
        /* loss = mean of the per-row losses */
        int red[1] = {1};
        int64_t ostr[1] = {0};
        gpuml_status s2 = gpuml__reduce_run(ctx, GPUML_REDUCE_MEAN, r->loss, scratch, red, ostr, 0.0);
        st = s2;
    }
    gpuml_tensor_free(scratch);
    return st;
}
#endif

GPUML__FN gpuml_status gpuml__rows_run(gpuml_ctx *ctx, const gpuml__rowop *r)
{
    gpuml__nplan p;
    gpuml__nplan_make(&p, r);
    if (p.rs.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) return gpuml__cpu_rows(ctx, r, &p);
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_rows(ctx, r, &p);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

/* checks a 1-d parameter (weight, bias, their gradients) of length n */
GPUML__FN gpuml_status gpuml__check_param(gpuml_ctx *ctx, const gpuml_tensor *t, int64_t n, const char *op, const char *arg)
{
    char s1[200];
    if (!t) return GPUML_SUCCESS;
    GPUML__TRY(gpuml__check_tensor(ctx, t, op, arg));
    GPUML__TRY(gpuml__need_float(ctx, t, op, arg));
    if (t->ndim != 1 || t->shape[0] != n)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but must be [%lld] (x's last axis)", op, arg,
                           gpuml__shape_str(t, s1, sizeof s1), (long long)n);
    return GPUML_SUCCESS;
}

GPUML__FN gpuml_status gpuml__softmax(gpuml_ctx *ctx, const char *op, int kind, gpuml_tensor *y, const gpuml_tensor *x, int axis)
{
    gpuml__rowop r;
    char s1[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, y, op, "y"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_dtype(ctx, y, x->dtype, op, "y"));
    GPUML__TRY(gpuml__need_same_shape(ctx, y, x, op, "y", "x"));
    if (axis < -x->ndim || axis >= GPUML__MAX(x->ndim, 1))
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: axis %d is out of range for x %s", op, axis, gpuml__shape_str(x, s1, sizeof s1));
    GPUML__TRY(gpuml__check_output(ctx, y, op));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, x, op, "y", "x"));
    memset(&r, 0, sizeof r);
    r.kind = kind; r.x = x; r.y = y; r.axis = axis < 0 ? axis + x->ndim : axis;
    return gpuml__rows_run(ctx, &r);
}
GPUML__DEF gpuml_status gpuml_softmax(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, int axis)
{ return gpuml__softmax(ctx, "gpuml_softmax", GPUML__ROW_SOFTMAX, y, x, axis); }
GPUML__DEF gpuml_status gpuml_log_softmax(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, int axis)
{ return gpuml__softmax(ctx, "gpuml_log_softmax", GPUML__ROW_LOG_SOFTMAX, y, x, axis); }

/* layernorm / rmsnorm forward and backward: one checker */
GPUML__FN gpuml_status gpuml__norm(gpuml_ctx *ctx, const char *op, int kind, gpuml_tensor *y, gpuml_tensor *dw, gpuml_tensor *db,
                                   const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *w, const gpuml_tensor *b, double eps)
{
    gpuml__rowop r;
    int bwd = kind == GPUML__ROW_LAYERNORM_BWD || kind == GPUML__ROW_RMSNORM_BWD;
    const char *yname = bwd ? "dx" : "y";
    int64_t n;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, y, op, yname));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    if (x->ndim < 1) return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: x is a scalar; it needs a last axis to normalize", op);
    GPUML__TRY(gpuml__need_dtype(ctx, y, x->dtype, op, yname));
    GPUML__TRY(gpuml__need_same_shape(ctx, y, x, op, yname, "x"));
    if (bwd) {
        GPUML__TRY(gpuml__check_tensor(ctx, dy, op, "dy"));
        GPUML__TRY(gpuml__need_dtype(ctx, dy, x->dtype, op, "dy"));
        GPUML__TRY(gpuml__need_same_shape(ctx, dy, x, op, "dy", "x"));
    }
    if (!(eps >= 0)) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: eps = %g must be >= 0", op, eps);
    n = x->shape[x->ndim - 1];
    GPUML__TRY(gpuml__check_param(ctx, w, n, op, "weight"));
    GPUML__TRY(gpuml__check_param(ctx, b, n, op, "bias"));
    GPUML__TRY(gpuml__check_param(ctx, dw, n, op, "dweight"));
    GPUML__TRY(gpuml__check_param(ctx, db, n, op, "dbias"));
    GPUML__TRY(gpuml__check_output(ctx, y, op));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, x, op, yname, "x"));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, w, op, yname, "weight"));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, b, op, yname, "bias"));
    if (bwd) {
        const gpuml_tensor *ins[3];
        int i;
        GPUML__TRY(gpuml__check_disjoint(ctx, y, dy, op, yname, "dy"));
        ins[0] = x; ins[1] = dy; ins[2] = w;
        for (i = 0; i < 3; i++) {
            if (dw && ins[i] && gpuml__overlap(dw, ins[i])) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dweight overlaps an input", op);
            if (db && ins[i] && gpuml__overlap(db, ins[i])) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dbias overlaps an input", op);
        }
        if ((dw && (gpuml__overlap(dw, y) || (db && gpuml__overlap(dw, db)))) || (db && gpuml__overlap(db, y)))
            return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dx, dweight and dbias overlap", op);
    }
    memset(&r, 0, sizeof r);
    r.kind = kind; r.x = x; r.y = y; r.dy = dy; r.w = w; r.b = b; r.dw = dw; r.db = db;
    r.axis = x->ndim - 1; r.eps = eps;
    if (n == 0 && !bwd) return GPUML_SUCCESS;
    return gpuml__rows_run(ctx, &r);
}
GPUML__DEF gpuml_status gpuml_layernorm(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *weight,
                                        const gpuml_tensor *bias, double eps)
{ return gpuml__norm(ctx, "gpuml_layernorm", GPUML__ROW_LAYERNORM, y, NULL, NULL, NULL, x, weight, bias, eps); }
GPUML__DEF gpuml_status gpuml_rmsnorm(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *weight, double eps)
{ return gpuml__norm(ctx, "gpuml_rmsnorm", GPUML__ROW_RMSNORM, y, NULL, NULL, NULL, x, weight, NULL, eps); }
GPUML__DEF gpuml_status gpuml_layernorm_backward(gpuml_ctx *ctx, gpuml_tensor *dx, gpuml_tensor *dweight, gpuml_tensor *dbias,
                                                 const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *weight, double eps)
{ return gpuml__norm(ctx, "gpuml_layernorm_backward", GPUML__ROW_LAYERNORM_BWD, dx, dweight, dbias, dy, x, weight, NULL, eps); }
GPUML__DEF gpuml_status gpuml_rmsnorm_backward(gpuml_ctx *ctx, gpuml_tensor *dx, gpuml_tensor *dweight,
                                               const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *weight, double eps)
{ return gpuml__norm(ctx, "gpuml_rmsnorm_backward", GPUML__ROW_RMSNORM_BWD, dx, dweight, NULL, dy, x, weight, NULL, eps); }

GPUML__DEF gpuml_status gpuml_cross_entropy(gpuml_ctx *ctx, gpuml_tensor *loss, gpuml_tensor *dlogits,
                                            const gpuml_tensor *logits, const gpuml_tensor *labels)
{
    static const char op[] = "gpuml_cross_entropy";
    gpuml__rowop r;
    char s1[200], s2[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, loss, op, "loss"));
    GPUML__TRY(gpuml__check_tensor(ctx, logits, op, "logits"));
    GPUML__TRY(gpuml__check_tensor(ctx, labels, op, "labels"));
    GPUML__TRY(gpuml__need_float(ctx, logits, op, "logits"));
    GPUML__TRY(gpuml__need_dtype(ctx, labels, GPUML_I32, op, "labels"));
    GPUML__TRY(gpuml__need_dtype(ctx, loss, GPUML_F32, op, "loss"));
    if (logits->ndim != 2 || labels->ndim != 1 || labels->shape[0] != logits->shape[0])
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: logits %s must be [B, C] and labels %s [B]", op,
                           gpuml__shape_str(logits, s1, sizeof s1), gpuml__shape_str(labels, s2, sizeof s2));
    if (gpuml__numel(loss) != 1)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: loss is %s; it must hold one element", op, gpuml__shape_str(loss, s1, sizeof s1));
    if (logits->shape[0] == 0 || logits->shape[1] == 0)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: logits %s is empty", op, gpuml__shape_str(logits, s1, sizeof s1));
    if (dlogits) {
        GPUML__TRY(gpuml__check_tensor(ctx, dlogits, op, "dlogits"));
        GPUML__TRY(gpuml__need_dtype(ctx, dlogits, logits->dtype, op, "dlogits"));
        GPUML__TRY(gpuml__need_same_shape(ctx, dlogits, logits, op, "dlogits", "logits"));
        GPUML__TRY(gpuml__check_output(ctx, dlogits, op));
        GPUML__TRY(gpuml__check_disjoint(ctx, dlogits, logits, op, "dlogits", "logits"));
        if (gpuml__overlap(dlogits, labels) || gpuml__overlap(dlogits, loss))
            return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dlogits overlaps labels or loss", op);
    }
    if (gpuml__overlap(loss, logits) || gpuml__overlap(loss, labels))
        return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: loss overlaps an input", op);
    memset(&r, 0, sizeof r);
    r.kind = GPUML__ROW_XENT; r.x = logits; r.y = dlogits; r.labels = labels; r.loss = loss; r.axis = 1;
    return gpuml__rows_run(ctx, &r);
}

/* ------------------------------------------------------------------ optimizers ---- */
typedef struct gpuml__optarg { int kind; float h[8]; gpuml_dtype gdt; } gpuml__optarg;

/* one element: the same formulas as gpuml__opt_one in kernels/elementwise.cu */
GPUML__FN void gpuml__opt_one(const gpuml__optarg *o, float *p, float g, float *m, float *v)
{
    const float *h = o->h;
    if (o->kind == 1) {
        g = fmaf(h[3], *p, g);
        if (h[1] != 0.0f) {
            *m = fmaf(h[1], *m, h[2] * g);
            g = h[4] != 0.0f ? fmaf(h[1], *m, g) : *m;
        }
        *p = fmaf(-h[0], g, *p);
    } else {
        *p = *p * h[4];
        *m = fmaf(h[1], *m, (1.0f - h[1]) * g);
        *v = fmaf(h[2], *v, (1.0f - h[2]) * g * g);
        *p = *p - h[0] * (*m * h[5]) / (sqrtf(*v) * h[6] + h[3]);
    }
}
GPUML__FN void gpuml__opt_row(void *arg, char **ptr, const int64_t *step, int64_t count)
{
    const gpuml__optarg *o = (const gpuml__optarg *)arg;
    float gb[GPUML__TILE], dummy = 0.0f;
    int64_t done, i;
    for (done = 0; done < count; done += GPUML__TILE) {
        int64_t n = GPUML__MIN((int64_t)GPUML__TILE, count - done);
        const float *g = gpuml__cpu_ld(o->gdt, ptr[1] + done * step[1], step[1], n, gb);
        for (i = 0; i < n; i++) {
            int64_t k = done + i;
            float *p = (float *)(void *)(ptr[0] + k * step[0]);
            float *m = ptr[2] ? (float *)(void *)(ptr[2] + k * step[2]) : &dummy;
            float *v = ptr[3] ? (float *)(void *)(ptr[3] + k * step[3]) : &dummy;
            gpuml__opt_one(o, p, g[i], m, v);
        }
    }
}

GPUML__FN gpuml_status gpuml__optim(gpuml_ctx *ctx, const char *op, gpuml__optarg *o, gpuml_tensor *param, const gpuml_tensor *grad,
                                    gpuml_tensor *m, gpuml_tensor *v)
{
    const gpuml_tensor *ops[4];
    const gpuml_tensor *all[4];
    static const char *const names[4] = { "param", "grad", "state (m / momentum_buf)", "v" };
    gpuml__xiter it;
    int k, l, nops = o->kind == 2 ? 4 : (m ? 3 : 2);
    GPUML__TRY(gpuml__need_dtype(ctx, param, GPUML_F32, op, "param"));
    if (grad->dtype != GPUML_F32 && grad->dtype != GPUML_BF16)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: grad is %s; it must be f32 or bf16", op, gpuml__dtype_names[grad->dtype]);
    GPUML__TRY(gpuml__need_same_shape(ctx, grad, param, op, "grad", "param"));
    all[0] = param; all[1] = grad; all[2] = m; all[3] = v;
    for (k = 2; k < nops; k++) {
        GPUML__TRY(gpuml__need_dtype(ctx, all[k], GPUML_F32, op, names[k]));
        GPUML__TRY(gpuml__need_same_shape(ctx, all[k], param, op, names[k], "param"));
    }
    for (k = 0; k < nops; k++) {
        if (k != 1) GPUML__TRY(gpuml__check_output(ctx, all[k], op));
        for (l = k + 1; l < nops; l++)
            if (gpuml__overlap(all[k], all[l]))
                return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s and %s overlap", op, names[k], names[l]);
    }
    for (k = 0; k < 4; k++) ops[k] = all[k] ? all[k] : param;
    gpuml__xiter_make(&it, ops, 4);
    if (nops < 4) it.base[3] = NULL;
    if (nops < 3) it.base[2] = NULL;
    o->gdt = grad->dtype;
    if (it.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__xforeach(ctx, &it, gpuml__opt_row, o);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__CUfunction fn;
        gpuml__CUdeviceptr ptr[4];
        char opts[96];
        unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
        int vec = 4;
        for (k = 0; k < 4; k++) {
            ptr[k] = (gpuml__CUdeviceptr)(uintptr_t)it.base[k];
            if (it.base[k] && ptr[k] % ((gpuml__CUdeviceptr)vec * gpuml__dtype_sizes[it.dt[k]]) != 0) vec = 1;
        }
        snprintf(opts, sizeof opts, "-DOPT=%d -DDT_G=%d -DVEC=4", o->kind, (int)grad->dtype);
        if (gpuml__xiter_contig(&it) && vec == 4) {
            void *args[6];
            args[0] = &it.n; args[1] = o->h; args[2] = &ptr[0]; args[3] = &ptr[1]; args[4] = &ptr[2]; args[5] = &ptr[3];
            GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_opt_contig", &fn));
            grid[0] = gpuml__grid_wave(ctx, (it.n + 3) / 4, 256);
            return gpuml__launch(ctx, fn, grid, block, 0, args, op);
        } else {
            gpuml__kshape ks;
            gpuml__kview kv[4];
            void *args[7];
            gpuml__xkparams(&it, &ks, kv);
            args[0] = &ks; args[1] = kv; args[2] = o->h; args[3] = &ptr[0]; args[4] = &ptr[1]; args[5] = &ptr[2]; args[6] = &ptr[3];
            GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_opt_strided", &fn));
            grid[0] = gpuml__grid_wave(ctx, it.n, 256);
            return gpuml__launch(ctx, fn, grid, block, 0, args, op);
        }
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__DEF gpuml_status gpuml_sgd_step(gpuml_ctx *ctx, gpuml_tensor *param, const gpuml_tensor *grad,
                                       gpuml_tensor *momentum_buf, const gpuml_sgd_desc *d)
{
    static const char op[] = "gpuml_sgd_step";
    gpuml__optarg o;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, param, op, "param"));
    GPUML__TRY(gpuml__check_tensor(ctx, grad, op, "grad"));
    if (!d) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", op);
    if (!(d->lr > 0) || !(d->momentum >= 0) || !(d->weight_decay >= 0) || !(d->dampening >= 0 && d->dampening <= 1))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: lr %g must be > 0; momentum %g, weight_decay %g >= 0; "
                           "dampening %g in [0, 1]", op, d->lr, d->momentum, d->weight_decay, d->dampening);
    if (d->nesterov && (d->momentum <= 0 || d->dampening != 0))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: nesterov needs momentum > 0 and dampening 0", op);
    if (d->momentum > 0) {
        if (!momentum_buf) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: momentum %g needs momentum_buf", op, d->momentum);
        GPUML__TRY(gpuml__check_tensor(ctx, momentum_buf, op, "momentum_buf"));
    }
    memset(&o, 0, sizeof o);
    o.kind = 1;
    o.h[0] = (float)d->lr; o.h[1] = (float)d->momentum; o.h[2] = (float)(1.0 - d->dampening);
    o.h[3] = (float)d->weight_decay; o.h[4] = d->nesterov ? 1.0f : 0.0f;
    return gpuml__optim(ctx, op, &o, param, grad, d->momentum > 0 ? momentum_buf : NULL, NULL);
}

GPUML__DEF gpuml_status gpuml_adamw_step(gpuml_ctx *ctx, gpuml_tensor *param, const gpuml_tensor *grad,
                                         gpuml_tensor *m, gpuml_tensor *v, const gpuml_adamw_desc *d)
{
    static const char op[] = "gpuml_adamw_step";
    gpuml__optarg o;
    double lr, b1, b2, eps;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, param, op, "param"));
    GPUML__TRY(gpuml__check_tensor(ctx, grad, op, "grad"));
    GPUML__TRY(gpuml__check_tensor(ctx, m, op, "m"));
    GPUML__TRY(gpuml__check_tensor(ctx, v, op, "v"));
    if (!d) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", op);
    lr = d->lr != 0 ? d->lr : 1e-3;
    b1 = d->beta1 != 0 ? d->beta1 : 0.9;
    b2 = d->beta2 != 0 ? d->beta2 : 0.999;
    eps = d->eps != 0 ? d->eps : 1e-8;
    if (d->step < 1) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: step = %lld; steps count from 1", op, (long long)d->step);
    if (!(lr > 0) || !(b1 > 0 && b1 < 1) || !(b2 > 0 && b2 < 1) || !(eps > 0) || !(d->weight_decay >= 0))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: lr %g, eps %g must be > 0, betas %g, %g in (0, 1), "
                           "weight_decay %g >= 0", op, lr, eps, b1, b2, d->weight_decay);
    memset(&o, 0, sizeof o);
    o.kind = 2;
    o.h[0] = (float)lr; o.h[1] = (float)b1; o.h[2] = (float)b2; o.h[3] = (float)eps;
    o.h[4] = (float)(1.0 - lr * d->weight_decay);
    o.h[5] = (float)(1.0 / (1.0 - pow(b1, (double)d->step)));
    o.h[6] = (float)(1.0 / sqrt(1.0 - pow(b2, (double)d->step)));
    return gpuml__optim(ctx, op, &o, param, grad, m, v);
}

/* ------------------------------------------------------------ benchmark timing ---- */
#ifndef GPUML_NO_CUDA
/* Records a timing event on the context's stream (bench/ uses these; not API). */
GPUML__FN gpuml_status gpuml__bench_event(gpuml_ctx *ctx, gpuml__CUevent *ev)
{
    GPUML__CU(ctx, ctx->cu.EventCreate(ev, 0), "cuEventCreate");
    GPUML__CU(ctx, ctx->cu.EventRecord(*ev, ctx->stream), "cuEventRecord");
    return GPUML_SUCCESS;
}
/* milliseconds between two recorded events (waits for the second); destroys both */
GPUML__FN double gpuml__bench_elapsed(gpuml_ctx *ctx, gpuml__CUevent a, gpuml__CUevent b)
{
    float ms = -1.0f;
    if (ctx->cu.EventSynchronize(b) != 0 || ctx->cu.EventElapsedTime(&ms, a, b) != 0) ms = -1.0f;
    ctx->cu.EventDestroy(a);
    ctx->cu.EventDestroy(b);
    return ms;
}
#endif
