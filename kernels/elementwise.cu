/* Family "elementwise": out = f(a, b, c) computed in f32, for the op codes GPUML__EW_* of
   gpuml.h (binary ops, unary math and activations, their gradients, where), and the
   fused optimizer steps.  Specialized by
     -DOP=<code> -DNIN=<1..3> -DDT_O/-DDT_A/-DDT_B/-DDT_C=<gpuml_dtype> -DVEC=<elements per vector>
     -DSCAL=0|1|2   (1: b is the scalar s0;  2: a is the scalar s0 and b the tensor)
   or, for the optimizers, -DOPT=1 (SGD) | 2 (AdamW) -DDT_G=<grad dtype> -DVEC=4. */
#ifndef DT_A
#define DT_A 0
#endif
#ifndef DT_B
#define DT_B 0
#endif
#ifndef DT_C
#define DT_C 0
#endif
#ifndef SCAL
#define SCAL 0
#endif
#ifndef VEC
#define VEC 1
#endif

/* (gpuml__vec, gpuml__words_to_f and gpuml__vec_to_f: common.cuh) */

/* The shape of the contiguous kernels (gpuml_ew_contig, gpuml_opt_contig), chosen by the host:
     -DEW_BS=<threads a block> -DEW_U=<vectors in flight a thread> -DEW_HINT=0|1
   EW_HINT=1: streaming accesses, the inputs read through the non-coherent path without an L1
   line (ld.global.nc.L1::no_allocate, sm_70+), the outputs written evict-first (st.global.cs):
   each byte is touched once, so nothing is worth keeping in L1/L2. */
#ifndef EW_BS
#define EW_BS 256
#endif
#ifndef EW_U
#define EW_U 1
#endif
#ifndef EW_HINT
#define EW_HINT 0
#endif
/* one vector of 4, 8 or 16 bytes, streamed (EW_HINT) or plain */
template <typename V>
static __device__ __forceinline__ V gpuml__ldg_stream(const V *p)
{
#if EW_HINT && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    union { V v; gpuml__u32 w[sizeof(V) / 4 > 0 ? sizeof(V) / 4 : 1]; } u;
    if (sizeof(V) == 16) {
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(u.w[0]), "=r"(u.w[1]), "=r"(u.w[2]), "=r"(u.w[3]) : "l"(p));
        return u.v;
    }
    if (sizeof(V) == 8) {
        asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(u.w[0]), "=r"(u.w[1]) : "l"(p));
        return u.v;
    }
    if (sizeof(V) == 4) {
        asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(u.w[0]) : "l"(p));
        return u.v;
    }
#endif
    return *p;
}
template <typename V>
static __device__ __forceinline__ void gpuml__st_stream(V *p, const V &v)
{
#if EW_HINT
    union { V v; gpuml__u32 w[sizeof(V) / 4 > 0 ? sizeof(V) / 4 : 1]; } u;
    u.v = v;
    if (sizeof(V) == 16) {
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(u.w[0]), "r"(u.w[1]), "r"(u.w[2]), "r"(u.w[3]) : "memory");
        return;
    }
    if (sizeof(V) == 8) {
        asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(u.w[0]), "r"(u.w[1]) : "memory");
        return;
    }
    if (sizeof(V) == 4) {
        asm volatile("st.global.cs.u32 [%0], %1;" :: "l"(p), "r"(u.w[0]) : "memory");
        return;
    }
#endif
    *p = v;
}

/* linear index -> per-operand element offsets, dividing once per dim for all operands */
template <int K>
static __device__ __forceinline__ void gpuml__offsets(const gpuml__kshape &s, const gpuml__kview *v, gpuml__i64 i, gpuml__i64 *off)
{
#pragma unroll
    for (int k = 0; k < K; k++) off[k] = v[k].offset;
    /* unrolled with constant indices: a run-time index into the parameter structs would copy
       them to local memory */
#pragma unroll
    for (int d = GPUML_MAX_DIMS - 1; d >= 0; d--) {
        if (d < s.ndim) {
            gpuml__i64 q = i / s.dims[d], r = i - q * s.dims[d];
#pragma unroll
            for (int k = 0; k < K; k++) off[k] += r * v[k].strides[d];
            i = q;
        }
    }
}

#ifdef OP
typedef gpuml__dt<DT_O> gpuml__O;
typedef gpuml__dt<DT_A> gpuml__A;
typedef gpuml__dt<DT_B> gpuml__B;
typedef gpuml__dt<DT_C> gpuml__C;

static __device__ __forceinline__ float gpuml__nan(void) { return __int_as_float(0x7fc00000); }
static __device__ __forceinline__ float gpuml__sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
/* Phi(x), the normal CDF (the exact GELU is x Phi(x)): Phi = 0.5 erfc(-x / sqrt2), with
   erfc(z) = t exp(P(t) - z^2), t = 1 / (1 + z / 2), z = |x| / sqrt2.  P: fits made for gpuml
   (weighted least squares over z in [0, 10], i.e. |x| <= 14; beyond, the tail is below 1e-44).
   f32 outputs: P of degree 8 (error under 2.3e-7 in the exponent).  One 2^x, one reciprocal
   (MUFU) and no branch, where erff takes two paths of ~20 instructions.  Relative error of
   x Phi(x) in f32: ~2e-6 for |x| < 5, 2e-5 in the far negative tail (|value| < 1e-28).
   16-bit outputs: the same form in base 2, fewer instructions (a bf16 GELU is issue-bound on an
   H200): w = |x| sqrt(log2e / 2), so w^2 = z^2 log2e, t = 1 / (1 + w / (2 sqrt(log2e))), and
   0.5 erfc(z) = t 2^(Q(t) - w^2) with Q = P log2e - 1 fitted directly (minimax over z in
   [0, 10], degree 5, 1.1e-5 in the exponent): x Phi(x) within 9e-6 relative for |x| < 5, 2e-5
   in the far tail (half a bf16 ulp is 2e-3, an f16 one 2.4e-4).  NaN stays NaN; gelu(+inf) = +inf,
   gelu(-inf) = -inf * 0 = NaN, as in f32 and the float64 reference. */
static __device__ __forceinline__ float gpuml__phi(float x)
{
#if DT_O == 0
    float z = fminf(fabsf(x) * 0.70710678118654752f, 30.0f);     /* NaN -> 30: x * Phi stays NaN */
    float t = gpuml__rcp(fmaf(0.5f, z, 1.0f)), p;
    p = 0.0742854f;
    p = fmaf(p, t, -0.53551855f);
    p = fmaf(p, t, 1.43774148f);
    p = fmaf(p, t, -1.74314357f);
    p = fmaf(p, t, 0.82852766f);
    p = fmaf(p, t, -0.22718469f);
    p = fmaf(p, t, 0.43728308f);
    p = fmaf(p, t, 0.99321282f);
    p = fmaf(p, t, -1.26520384f);
    /* 0.5 t exp(p - z^2) = t 2^((p - z^2) log2 e - 1) */
    float e = t * gpuml__ex2(fmaf(fmaf(-z, z, p), 1.4426950408889634f, -1.0f));
#else
    float w = fabsf(x) * 0.849321783f;   /* no clamp: past the fit 2^(Q - w^2) underflows to 0; inf: t = 0, e = 0 */
    float t = gpuml__rcp(fmaf(0.416277319f, w, 1.0f)), p;
    p = 3.300667405e-01f;
    p = fmaf(p, t, -1.023123145e+00f);
    p = fmaf(p, t, 6.845235825e-01f);
    p = fmaf(p, t, 3.670972288e-01f);
    p = fmaf(p, t, 1.468679786e+00f);
    p = fmaf(p, t, -2.827233315e+00f);
    float y;
    /* p - w^2 in one FFMA (written as fmaf(-w, w, p), ptxas computes -w by a second multiply) */
    asm("{ .reg .f32 nw; neg.f32 nw, %1; fma.rn.f32 %0, nw, %1, %2; }" : "=f"(y) : "f"(w), "f"(p));
    float e = t * gpuml__ex2(y);
#endif
    return x < 0.0f ? e : 1.0f - e;
}

/* the op codes: keep in step with GPUML__EW_* in gpuml.h */
static __device__ __forceinline__ float gpuml__op(float a, float b, float c, float s0, float s1)
{
    (void)b; (void)c; (void)s0; (void)s1;
#if OP == 0
    return a + b;
#elif OP == 1
    return a - b;
#elif OP == 2
    return a * b;
#elif OP == 3
    return a / b;
#elif OP == 4
    return (a != a || b != b) ? a + b : (a > b ? a : b);      /* NaN propagates */
#elif OP == 5
    return (a != a || b != b) ? a + b : (a < b ? a : b);
#elif OP == 6
    return powf(a, b);
#elif OP == 16
    return -a;
#elif OP == 17
    return fabsf(a);
#elif OP == 18
    return expf(a);
#elif OP == 19
    return logf(a);
#elif OP == 20
    return sqrtf(a);
#elif OP == 21
    return 1.0f / sqrtf(a);
#elif OP == 22
    return sinf(a);
#elif OP == 23
    return cosf(a);
#elif OP == 24
    return tanhf(a);
#elif OP == 25
    return gpuml__sigmoidf(a);
#elif OP == 26
    return a > 0.0f ? a : (a != a ? a : 0.0f);
#elif OP == 27
    return a * gpuml__phi(a);
#elif OP == 28
    return 0.5f * a * (1.0f + tanhf(0.79788456080286536f * (a + 0.044715f * a * a * a)));
#elif OP == 29
    return a * gpuml__sigmoidf(a);
#elif OP == 30
    return a != a ? a : fminf(fmaxf(a, s0), s1);
#elif OP == 40   /* gradients: a = dy, b = x */
    return b > 0.0f ? a : (b != b ? b : 0.0f);
#elif OP == 41
    return a * (0.5f * (1.0f + erff(b * 0.70710678118654752f)) + b * 0.39894228040143268f * expf(-0.5f * b * b));
#elif OP == 42
    {
        float k = 0.79788456080286536f, t = tanhf(k * (b + 0.044715f * b * b * b));
        return a * (0.5f * (1.0f + t) + 0.5f * b * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * b * b));
    }
#elif OP == 43
    {
        float s = gpuml__sigmoidf(b);
        return a * s * (1.0f + b * (1.0f - s));
    }
#elif OP == 60   /* where: a = mask */
    return a != 0.0f ? b : c;
#else
#error "unknown OP"
#endif
}

static __device__ __forceinline__ float gpuml__apply(float a, float b, float c, float s0, float s1)
{
#if SCAL == 1
    return gpuml__op(a, s0, c, s0, s1);
#elif SCAL == 2
    return gpuml__op(s0, a, c, s0, s1);
#else
    return gpuml__op(a, b, c, s0, s1);
#endif
}

/* every operand dense and aligned for VEC elements: each thread takes EW_U vectors of a chunk
   of EW_BS * EW_U vectors (vector u of thread t: chunk start + u * EW_BS + t), all its loads
   issued before any store; the grid walks the chunks (one chunk a block when the host launches
   one block per chunk, a grid-stride loop when it launches fewer) */
extern "C" __global__ void __launch_bounds__(EW_BS) gpuml_ew_contig(gpuml__i64 n, gpuml__O::T *__restrict__ o,
        const gpuml__A::T *__restrict__ a, const gpuml__B::T *__restrict__ b, const gpuml__C::T *__restrict__ c,
        float s0, float s1)
{
    typedef gpuml__vec<gpuml__A::T, VEC> VA;
    typedef gpuml__vec<gpuml__B::T, VEC> VB;
    typedef gpuml__vec<gpuml__C::T, VEC> VC;
    const gpuml__i64 nv = n / VEC, per = (gpuml__i64)EW_BS * EW_U;
    for (gpuml__i64 c0 = (gpuml__i64)blockIdx.x * per + threadIdx.x; c0 < nv; c0 += (gpuml__i64)gridDim.x * per) {
        VA va[EW_U];
#if NIN >= 2 && SCAL == 0
        VB vb[EW_U];
#endif
#if NIN >= 3
        VC vc[EW_U];
#endif
#pragma unroll
        for (int u = 0; u < EW_U; u++) {
            const gpuml__i64 i = c0 + (gpuml__i64)u * EW_BS;
            if (EW_U == 1 || i < nv) {
                va[u] = gpuml__ldg_stream((const VA *)a + i);
#if NIN >= 2 && SCAL == 0
                vb[u] = gpuml__ldg_stream((const VB *)b + i);
#endif
#if NIN >= 3
                vc[u] = gpuml__ldg_stream((const VC *)c + i);
#endif
            }
        }
#pragma unroll
        for (int u = 0; u < EW_U; u++) {
            const gpuml__i64 i = c0 + (gpuml__i64)u * EW_BS;
            float r[VEC], fa[VEC], fb[VEC], fc[VEC];
            if (EW_U > 1 && i >= nv) break;
            gpuml__vec_to_f<DT_A, VEC>(va[u], fa);
#pragma unroll
            for (int k = 0; k < VEC; k++) fb[k] = fc[k] = 0.0f;
#if NIN >= 2 && SCAL == 0
            gpuml__vec_to_f<DT_B, VEC>(vb[u], fb);
#endif
#if NIN >= 3
            gpuml__vec_to_f<DT_C, VEC>(vc[u], fc);
#endif
#pragma unroll
            for (int k = 0; k < VEC; k++) r[k] = gpuml__apply(fa[k], fb[k], fc[k], s0, s1);
            if ((DT_O == 1 || DT_O == 2) && VEC % 2 == 0) {     /* f16 / bf16: two to a word */
                gpuml__vec<gpuml__u32, (VEC + 1) / 2> vo;
#pragma unroll
                for (int k = 0; k < VEC / 2; k++) vo.v[k] = gpuml__pack2(DT_O, r[2 * k], r[2 * k + 1]);
                gpuml__st_stream((gpuml__vec<gpuml__u32, (VEC + 1) / 2> *)o + i, vo);
            } else {
                gpuml__vec<gpuml__O::T, VEC> vo;
#pragma unroll
                for (int k = 0; k < VEC; k++) vo.v[k] = gpuml__O::st(r[k]);
                gpuml__st_stream((gpuml__vec<gpuml__O::T, VEC> *)o + i, vo);
            }
        }
    }
    {   /* the elements past the last whole vector */
        const gpuml__i64 i0 = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x, stride = (gpuml__i64)gridDim.x * blockDim.x;
        for (gpuml__i64 i = nv * VEC + i0; i < n; i += stride) {
            float fb = 0.0f, fc = 0.0f;
#if NIN >= 2 && SCAL == 0
            fb = gpuml__B::ld(b[i]);
#endif
#if NIN >= 3
            fc = gpuml__C::ld(c[i]);
#endif
            o[i] = gpuml__O::st(gpuml__apply(gpuml__A::ld(a[i]), fb, fc, s0, s1));
        }
    }
}

/* any strided (and broadcast: stride 0) views; v[0] is the output */
struct gpuml__views4 { gpuml__kview v[4]; };
extern "C" __global__ void __launch_bounds__(256) gpuml_ew_strided(gpuml__kshape s, gpuml__views4 vw, gpuml__O::T *o,
        const gpuml__A::T *a, const gpuml__B::T *b, const gpuml__C::T *c, float s0, float s1)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
         i += (gpuml__i64)gridDim.x * blockDim.x) {
        gpuml__i64 off[NIN + 1];
        float fb = 0.0f, fc = 0.0f;
        gpuml__offsets<NIN + 1>(s, vw.v, i, off);
#if NIN >= 2 && SCAL == 0
        fb = gpuml__B::ld(b[off[2]]);
#endif
#if NIN >= 3
        fc = gpuml__C::ld(c[off[3]]);
#endif
        o[off[0]] = gpuml__O::st(gpuml__apply(gpuml__A::ld(a[off[1]]), fb, fc, s0, s1));
    }
}

/* one vector of 4, 8 or 16 bytes read through the non-coherent path keeping its L1 line: for the
   inputs the rows kernel reads again for other rows (a bias row, a[M][1][C] under [M][4][C]) */
template <typename V>
static __device__ __forceinline__ V gpuml__ldg_keep(const V *p)
{
#if defined(__CUDA_ARCH__)
    union { V v; gpuml__u32 w[sizeof(V) / 4 > 0 ? sizeof(V) / 4 : 1]; } u;
    if (sizeof(V) == 16) {
        asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(u.w[0]), "=r"(u.w[1]), "=r"(u.w[2]), "=r"(u.w[3]) : "l"(p));
        return u.v;
    }
    if (sizeof(V) == 8) {
        asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(u.w[0]), "=r"(u.w[1]) : "l"(p));
        return u.v;
    }
    if (sizeof(V) == 4) {
        asm("ld.global.nc.u32 %0, [%1];" : "=r"(u.w[0]) : "l"(p));
        return u.v;
    }
#endif
    return *p;
}

/* input of the rows kernel into f[VEC]: VEC elements of the row from p + off + j (unit), or the
   row's one element p[off] repeated; keep: read through L1 (other rows read it again) */
template <int DT>
static __device__ __forceinline__ void gpuml__row_in(const typename gpuml__dt<DT>::T *p, gpuml__i64 off, gpuml__i64 j, bool unit, bool keep, float *f)
{
    enum { W = (int)(sizeof(gpuml__vec<typename gpuml__dt<DT>::T, VEC>) / 4) };   /* >= 1: VEC * size >= 4 */
    typedef gpuml__vec<gpuml__u32, W> VW;
    if (unit) {
        const VW *q = (const VW *)(p + off + j);
        gpuml__words_to_f<DT, W, VEC>(keep ? gpuml__ldg_keep(q) : gpuml__ldg_stream(q), f);
    } else {
        const float x = gpuml__dt<DT>::ld(p[off]);
#pragma unroll
        for (int k = 0; k < VEC; k++) f[k] = x;
    }
}

/* Division by a run-time constant d (1 <= d < 2^31) of any n < 2^31, by a multiply and a shift
   (the host's gpuml__kdiv_set): m = ceil(2^(31 + l) / d) with l = ceil(log2 d) fits 32 bits, and
   floor(n * m / 2^(31 + l)) = floor(n / d) because m * d - 2^(31 + l) < d <= 2^l */
struct gpuml__kdiv { gpuml__u32 m[GPUML_MAX_DIMS + 1]; gpuml__u32 sh[GPUML_MAX_DIMS + 1]; };
static __device__ __forceinline__ unsigned gpuml__fdiv(unsigned n, gpuml__u32 m, gpuml__u32 sh)
{
    return (unsigned)(((gpuml__u64)n * m) >> sh);
}

/* broadcasts along whole rows: the innermost dim (L elements, L % VEC == 0) has stride 1 in the
   output and stride 1 or 0 in each input (bit k of `unit`: input k is contiguous along the row,
   else one element repeated); the outer dims (s: ndim - 1 of them, s.n = rows) take any strides,
   and for the contiguous inputs and the output they are multiples of VEC (the host checks those
   and 16-byte aligned bases).  Bit 4 + k of `unit`: input k has stride 0 in an outer dim (its rows
   are read again for other output rows), read keeping L1 lines.  A thread takes VEC outputs of
   one row: the row's offsets cost one division per outer dim per VEC elements, not per element
   (y[M][N] = x[M][N] + b[N], or a[M][1][C] + b[1][4][C]: gpuml_ew_strided ran the latter at 0.06
   of copy on an H200).  Below 2^31 vectors the divisions are by multiply and shift (dv: the outer
   dims' in dv[d], the vectors a row's in dv[GPUML_MAX_DIMS]); the rest, 64-bit divisions. */
extern "C" __global__ void __launch_bounds__(256) gpuml_ew_rows(gpuml__kshape s, gpuml__views4 vw, gpuml__kdiv dv, gpuml__i64 L, int unit,
        gpuml__O::T *o, const gpuml__A::T *a, const gpuml__B::T *b, const gpuml__C::T *c, float s0, float s1)
{
    const gpuml__i64 cpr = L / VEC, nc = s.n * cpr;
    (void)b; (void)c;
    const bool narrow = nc < 0x7fffffff;   /* uniform */
    for (gpuml__i64 ci = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; ci < nc; ci += (gpuml__i64)gridDim.x * blockDim.x) {
        gpuml__i64 off[NIN + 1], j;
        if (narrow) {
            unsigned row = gpuml__fdiv((unsigned)ci, dv.m[GPUML_MAX_DIMS], dv.sh[GPUML_MAX_DIMS]);
            j = (gpuml__i64)((unsigned)ci - row * (unsigned)cpr) * VEC;
#pragma unroll
            for (int k = 0; k <= NIN; k++) off[k] = vw.v[k].offset;
#pragma unroll
            for (int d = GPUML_MAX_DIMS - 1; d >= 0; d--) {
                if (d < s.ndim) {
                    const unsigned q = gpuml__fdiv(row, dv.m[d], dv.sh[d]), r = row - q * (unsigned)s.dims[d];
#pragma unroll
                    for (int k = 0; k <= NIN; k++) off[k] += (gpuml__i64)r * vw.v[k].strides[d];
                    row = q;
                }
            }
        } else {
            const gpuml__i64 row = ci / cpr;
            j = (ci - row * cpr) * VEC;
            gpuml__offsets<NIN + 1>(s, vw.v, row, off);
        }
        float fa[VEC], fb[VEC], fc[VEC], r[VEC];
        gpuml__row_in<DT_A>(a, off[1], j, (unit & 2) != 0, (unit & 32) != 0, fa);
#pragma unroll
        for (int k = 0; k < VEC; k++) fb[k] = fc[k] = 0.0f;
#if NIN >= 2 && SCAL == 0
        gpuml__row_in<DT_B>(b, off[2], j, (unit & 4) != 0, (unit & 64) != 0, fb);
#endif
#if NIN >= 3
        gpuml__row_in<DT_C>(c, off[3], j, (unit & 8) != 0, (unit & 128) != 0, fc);
#endif
#pragma unroll
        for (int k = 0; k < VEC; k++) r[k] = gpuml__apply(fa[k], fb[k], fc[k], s0, s1);
        if ((DT_O == 1 || DT_O == 2) && VEC % 2 == 0) {     /* f16 / bf16: two to a word */
            gpuml__vec<gpuml__u32, (VEC + 1) / 2> vo;
#pragma unroll
            for (int k = 0; k < VEC / 2; k++) vo.v[k] = gpuml__pack2(DT_O, r[2 * k], r[2 * k + 1]);
            gpuml__st_stream((gpuml__vec<gpuml__u32, (VEC + 1) / 2> *)(o + off[0] + j), vo);
        } else {
            gpuml__vec<gpuml__O::T, VEC> vo;
#pragma unroll
            for (int k = 0; k < VEC; k++) vo.v[k] = gpuml__O::st(r[k]);
            gpuml__st_stream((gpuml__vec<gpuml__O::T, VEC> *)(o + off[0] + j), vo);
        }
    }
}
#endif /* OP */

#ifdef OPT
/* Fused optimizer steps on f32 master weights p, f32 state m (and v), gradient g of DT_G.
   h[] holds the hyper-parameters as the host computed them (see gpuml__optim in ops.inc.h).
   SGD:   h = {lr, momentum, 1 - dampening, weight_decay, nesterov}
   AdamW: h = {lr, beta1, beta2, eps, 1 - lr*wd, 1/(1 - beta1^t), 1/sqrt(1 - beta2^t)} */
typedef gpuml__dt<DT_G> gpuml__G;
struct gpuml__hyper { float h[8]; };

static __device__ __forceinline__ void gpuml__opt_one(const gpuml__hyper &hp, float &p, float g, float &m, float &v)
{
#if OPT == 1
    float lr = hp.h[0], mom = hp.h[1], damp1 = hp.h[2], wd = hp.h[3];
    (void)v;
    g = fmaf(wd, p, g);
    if (mom != 0.0f) {
        m = fmaf(mom, m, damp1 * g);
        g = hp.h[4] != 0.0f ? fmaf(mom, m, g) : m;
    }
    p = fmaf(-lr, g, p);
#else
    float lr = hp.h[0], b1 = hp.h[1], b2 = hp.h[2], eps = hp.h[3];
    p = p * hp.h[4];
    m = fmaf(b1, m, (1.0f - b1) * g);
    v = fmaf(b2, v, (1.0f - b2) * g * g);
    p = p - lr * (m * hp.h[5]) / (sqrtf(v) * hp.h[6] + eps);
#endif
}

/* the shape of gpuml_ew_contig: EW_U vectors a thread in flight; the gradient streamed
   (read-only), param and state read plainly (this kernel writes them) and written evict-first */
extern "C" __global__ void __launch_bounds__(EW_BS) gpuml_opt_contig(gpuml__i64 n, gpuml__hyper hp, float *__restrict__ p,
        const gpuml__G::T *__restrict__ g, float *__restrict__ m, float *__restrict__ v)
{
    typedef gpuml__vec<float, VEC> VF;
    typedef gpuml__vec<gpuml__G::T, VEC> VG;
    const gpuml__i64 nv = n / VEC, per = (gpuml__i64)EW_BS * EW_U;
    const bool hasm = OPT == 2 || hp.h[1] != 0.0f;
    for (gpuml__i64 c0 = (gpuml__i64)blockIdx.x * per + threadIdx.x; c0 < nv; c0 += (gpuml__i64)gridDim.x * per) {
        VF vp[EW_U], vm[EW_U], vv[EW_U];
        VG vg[EW_U];
#pragma unroll
        for (int u = 0; u < EW_U; u++) {
            const gpuml__i64 i = c0 + (gpuml__i64)u * EW_BS;
            if (EW_U == 1 || i < nv) {
                vp[u] = ((const VF *)p)[i];
                vg[u] = gpuml__ldg_stream((const VG *)g + i);
                if (hasm) vm[u] = ((const VF *)m)[i];
                if (OPT == 2) vv[u] = ((const VF *)v)[i];
            }
        }
#pragma unroll
        for (int u = 0; u < EW_U; u++) {
            const gpuml__i64 i = c0 + (gpuml__i64)u * EW_BS;
            if (EW_U > 1 && i >= nv) break;
#pragma unroll
            for (int k = 0; k < VEC; k++) gpuml__opt_one(hp, vp[u].v[k], gpuml__G::ld(vg[u].v[k]), vm[u].v[k], vv[u].v[k]);
            gpuml__st_stream((VF *)p + i, vp[u]);
            if (hasm) gpuml__st_stream((VF *)m + i, vm[u]);
            if (OPT == 2) gpuml__st_stream((VF *)v + i, vv[u]);
        }
    }
    {
        const gpuml__i64 i0 = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x, stride = (gpuml__i64)gridDim.x * blockDim.x;
        for (gpuml__i64 i = nv * VEC + i0; i < n; i += stride) {
            float fp = p[i], fm = 0.0f, fv = 0.0f;
            if (hasm) fm = m[i];
            if (OPT == 2) fv = v[i];
            gpuml__opt_one(hp, fp, gpuml__G::ld(g[i]), fm, fv);
            p[i] = fp;
            if (hasm) m[i] = fm;
            if (OPT == 2) v[i] = fv;
        }
    }
}

struct gpuml__views4 { gpuml__kview v[4]; };
extern "C" __global__ void __launch_bounds__(256) gpuml_opt_strided(gpuml__kshape s, gpuml__views4 vw, gpuml__hyper hp,
        float *p, const gpuml__G::T *g, float *m, float *v)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
         i += (gpuml__i64)gridDim.x * blockDim.x) {
        gpuml__i64 off[4];
        float fp, fm = 0.0f, fv = 0.0f;
        gpuml__offsets<4>(s, vw.v, i, off);
        fp = p[off[0]];
        if (OPT == 2 || hp.h[1] != 0.0f) fm = m[off[2]];
        if (OPT == 2) fv = v[off[3]];
        gpuml__opt_one(hp, fp, gpuml__G::ld(g[off[1]]), fm, fv);
        p[off[0]] = fp;
        if (OPT == 2 || hp.h[1] != 0.0f) m[off[2]] = fm;
        if (OPT == 2) v[off[3]] = fv;
    }
}
#endif /* OPT */
