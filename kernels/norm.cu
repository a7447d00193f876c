/* Family "norm": row-wise ops, a group of threads per row (grid-stride over rows).
   -DRK: 0 softmax, 1 log_softmax, 2 layernorm, 3 rmsnorm, 4 layernorm backward,
         5 rmsnorm backward, 6 softmax cross-entropy (loss per row + gradient)
   -DDT_X (x, y, dy, dx), -DDT_W / -DDT_B (weight, bias; -DHAS_W / -DHAS_B), -DHAS_Y (CE gradient)
   -DVEC: elements per 16-byte load (VEC > 1 only when every row is dense and 16-byte aligned)
   -DNV:  vectors per thread kept in registers (the row is read once); 0 = rows too long for
          registers: each pass reads the row again from memory.  The registers hold the row as
          loaded (two f16/bf16 to a register), converted to f32 at each use.
   -DWPR=1: a warp per row, blockDim / 32 rows per block, warp shuffles only (short rows)
   -DCL=2|4|8: a row over the CL blocks of a cluster (sm_90, forward kinds only; long rows):
          the statistics meet in distributed shared memory.  Otherwise a block per row.
   -DLBT, -DLBB: __launch_bounds__(LBT, LBB) (default 512, 1), to cap the registers
   -DXNA=1|2|3: (NV > 0, VEC > 1, forward kinds) 1: x loaded past L1 (ld.global.nc.L1::no_allocate),
          2: y stored streaming (st.global.cs), so that L1 keeps the weight / bias lines the blocks of
          a row position read again row after row
   -DFULL=1: (forward kinds, NV > 0, VEC > 1) every thread's vectors lie in the row: no bounds checks
   -DWBE=1: layernorm / rmsnorm with NV > 0 and VEC > 1: the thread's weight (and bias) vectors
          loaded into registers once, before the first row (the same columns every row), instead
          of from L2 in each row's output pass
   Or -DCOLSUM=1 -DDT_O: column sums of the per-block partials of the backward passes. */
#ifndef VEC
#define VEC 1
#endif
#ifndef NV
#define NV 0
#endif
#ifndef WPR
#define WPR 0
#endif
#ifndef CL
#define CL 1
#endif
#ifndef LBT
#define LBT 512         /* __launch_bounds__: the block size (at most) and blocks per SM (at least) */
#endif
#ifndef LBB
#define LBB 1
#endif
#ifndef WBE
#define WBE 0
#endif
#ifndef XNA
#define XNA 0
#endif
#ifndef FULL
#define FULL 0
#endif
#if FULL && (NV == 0 || VEC == 1 || RK == 4 || RK == 5)
#error "FULL takes forward rows held in registers as 16-byte vectors"
#endif

#ifndef DT_W
#define DT_W 0
#endif
#ifndef DT_B
#define DT_B 0
#endif
#ifndef HAS_W
#define HAS_W 0
#endif
#ifndef HAS_B
#define HAS_B 0
#endif
#ifndef HAS_Y
#define HAS_Y 1
#endif

#ifdef COLSUM
typedef gpuml__dt<DT_O> gpuml__O;
/* out[e] = sum over b of part[b * n + e] */
extern "C" __global__ void gpuml_colsum(gpuml__i64 nb, gpuml__i64 n, const float *part, gpuml__O::T *out, gpuml__i64 os)
{
    for (gpuml__i64 e = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (gpuml__i64)gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (gpuml__i64 b = 0; b < nb; b++) s += part[b * n + e];
        out[e * os] = gpuml__O::st(s);
    }
}
#else
typedef gpuml__dt<DT_X> gpuml__X;
typedef gpuml__dt<DT_W> gpuml__W;
typedef gpuml__dt<DT_B> gpuml__B;

static __device__ __forceinline__ float gpuml__warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
/* block-wide sums of two values (the backward passes), returned to every thread */
static __device__ __forceinline__ float2 gpuml__block_sum2(float a, float b)
{
    __shared__ float2 sm[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    a = gpuml__warp_sum(a);
    b = gpuml__warp_sum(b);
    __syncthreads();
    if (lane == 0) sm[w] = make_float2(a, b);
    __syncthreads();
    float2 r = make_float2(0.0f, 0.0f);
    for (int i = 0; i < nw; i++) { r.x += sm[i].x; r.y += sm[i].y; }
    return r;
}

/* The statistics of a row, merged in one reduction:
     softmax kinds (0, 1, 6): a = max, b = sum of exp(x - a)   (a = -inf: b counts nothing)
     layernorm (2, 4):        a = count, b = mean, c = sum of squared deviations (Chan)
     rmsnorm (3, 5):          a = sum of squares
   Every merge is symmetric in its operands, so the lanes of a butterfly agree bit for bit. */
struct gpuml__st { float a, b, c; };
#define GPUML__L2E 1.4426950408889634f   /* exp(x) = 2^(x log2 e): one FMUL and one MUFU */
#define GPUML__SMX (RK == 0 || RK == 1 || RK == 6)
#define GPUML__LN (RK == 2 || RK == 4)
static __device__ __forceinline__ gpuml__st gpuml__st_id(void)
{
    gpuml__st s;
    s.a = GPUML__SMX ? -__int_as_float(0x7f800000) : 0.0f;
    s.b = 0.0f; s.c = 0.0f;
    return s;
}
static __device__ __forceinline__ gpuml__st gpuml__st_merge(gpuml__st x, gpuml__st y)
{
#if GPUML__SMX
    float m = fmaxf(x.a, y.a), ms = m == -__int_as_float(0x7f800000) ? 0.0f : m;
    x.b = x.b * gpuml__ex2((x.a - ms) * GPUML__L2E) + y.b * gpuml__ex2((y.a - ms) * GPUML__L2E);
    x.a = m;
#elif GPUML__LN
    float n = x.a + y.a, d = y.b - x.b;
    if (n > 0.0f) {
        float r = __frcp_rn(n);   /* n a count: 1/n correctly rounded, one MUFU and a fix-up (not the division routine) */
        x.c = (x.c + y.c) + d * d * (x.a * y.a * r);
        x.b = (x.a * x.b + y.a * y.b) * r;
        x.a = n;
    }
#else
    x.a += y.a;
#endif
    return x;
}
/* butterfly over groups of `width` lanes (a power of 2, warp-uniform): each group must hold the
   whole set of values (the block and cluster stages give every group the same copies), so every
   lane gets the total after log2(width) merges -- the merges are a serial chain of shuffles,
   MUFU ops and (layernorm) reciprocals on each row's critical path */
static __device__ __forceinline__ gpuml__st gpuml__st_warp(gpuml__st v, int width = 32)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        if (o >= width) continue;
        gpuml__st y;
        y.a = __shfl_xor_sync(0xffffffffu, v.a, o);
        y.b = GPUML__SMX || GPUML__LN ? __shfl_xor_sync(0xffffffffu, v.b, o) : 0.0f;
        y.c = GPUML__LN ? __shfl_xor_sync(0xffffffffu, v.c, o) : 0.0f;
        v = gpuml__st_merge(v, y);
    }
    return v;
}

#if CL > 1 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900   /* the cluster helpers are in common.cuh */
#define GPUML__CLUSTER 1
#else
#define GPUML__CLUSTER 0
#endif

/* the statistics of this thread's row group (a warp, a block, or the blocks of a cluster),
   returned to every thread of the group; 'par' alternates between rows (the cluster slot is
   double-buffered, so one cluster barrier per row is enough) */
static __device__ __forceinline__ gpuml__st gpuml__st_reduce(gpuml__st v, int par)
{
    v = gpuml__st_warp(v);
#if !WPR
    {
        __shared__ gpuml__st sm[32];
        int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
        int wd = 1, li;
        while (wd < nw) wd <<= 1;
        li = lane & (wd - 1);
        __syncthreads();            /* sm may still be read for the previous row */
        if (lane == 0) sm[w] = v;
        __syncthreads();
        v = gpuml__st_warp(li < nw ? sm[li] : gpuml__st_id(), wd);
    }
#endif
#if GPUML__CLUSTER
    {
        __shared__ gpuml__st cs[2];
        int lane = threadIdx.x & 31;
        if (threadIdx.x == 0) cs[par] = v;
        gpuml__cluster_sync();
        gpuml__st r = gpuml__st_id();
        const unsigned rk = (unsigned)(lane & (CL - 1));   /* every group of CL lanes reads all CL ranks */
        r.a = gpuml__ld_cluster(&cs[par].a, rk);
        if (GPUML__SMX || GPUML__LN) r.b = gpuml__ld_cluster(&cs[par].b, rk);
        if (GPUML__LN) r.c = gpuml__ld_cluster(&cs[par].c, rk);
        v = gpuml__st_warp(r, CL);
    }
#else
    (void)par;
#endif
    return v;
}

struct gpuml__nparams {
    gpuml__kshape rs;         /* the row dims */
    gpuml__kview v[3];        /* row starts of x, y (or dx), dy */
    gpuml__i64 n;             /* row length */
    gpuml__i64 xs, ys, dys, ws, bs, ls;   /* strides along the row (ls: labels, per row) */
    float eps, scale;
    gpuml__i64 pf;            /* prefetch into L2 the row pf rows ahead (0: none; sm_90, rs.ndim 1) */
};

#define NVR (NV > 0 ? NV : 1)
#define GPUML__BWD (RK == 4 || RK == 5)
#if (WPR || CL > 1) && GPUML__BWD
#error "the backward passes take one block per row"
#endif
typedef gpuml__vec<gpuml__X::T, VEC> gpuml__xvec;
#if NV > 0
typedef int gpuml__ri;          /* index within a row: rows held in registers are short */
#else
typedef gpuml__i64 gpuml__ri;
#endif

/* element k (a constant once unrolled) of a vector held as loaded, as f32.  bf16 straight from its
   32-bit word (the low half shifted up, the high half masked: one instruction); taking the 16-bit
   element out first cost a PRMT and a shift for every high half, and the bf16 rows are issue-bound.
   f16 likewise from the word, one cvt (below) */
template <typename V>
static __device__ __forceinline__ gpuml__u32 gpuml__vword(const V &v, int i)   /* 32-bit word i of v */
{
    union { V v; gpuml__u32 w[sizeof(V) >= 4 ? sizeof(V) / 4 : 1]; } u;
    u.v = v;
    return u.w[i];
}
template <int DT, typename V>
static __device__ __forceinline__ float gpuml__vel(const V &v, int k)
{
    if (DT == 2 && sizeof(V) >= 4) {
        const gpuml__u32 w = gpuml__vword(v, k >> 1);
        return __uint_as_float(k & 1 ? w & 0xffff0000u : w << 16);
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    if (DT == 1 && sizeof(V) >= 4) {
        /* f16: a bare cvt from the word's half.  gpuml__f16_to_f32 also rewrites a NaN to the
           portable code's bits (4-5 instructions an element); every output of these kernels is
           arithmetic on its inputs, which gives the canonical NaN whatever the payload, so the
           rewrite never reaches memory here */
        const gpuml__u32 w = gpuml__vword(v, k >> 1);
        float f;
        if (k & 1) asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=f"(f) : "r"(w));
        else asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=f"(f) : "r"(w));
        return f;
    }
#endif
    return gpuml__dt<DT>::ld(v.v[k]);
}
template <int DT>
static __device__ __forceinline__ void gpuml__ldvec(float *r, const typename gpuml__dt<DT>::T *p, gpuml__i64 e0, gpuml__i64 st)
{
    if (VEC > 1) {
        gpuml__vec<typename gpuml__dt<DT>::T, VEC> v = *(const gpuml__vec<typename gpuml__dt<DT>::T, VEC> *)(p + e0);
#pragma unroll
        for (int k = 0; k < VEC; k++) r[k] = gpuml__vel<DT>(v, k);
    } else {
        r[0] = gpuml__dt<DT>::ld(p[e0 * st]);
    }
}
/* raw elements (kept in registers as loaded: two bf16/f16 to a register) */
static __device__ __forceinline__ void gpuml__ldraw(gpuml__xvec &r, const gpuml__X::T *p, gpuml__i64 e0, gpuml__i64 st)
{
#if XNA & 1
    if (VEC > 1) {
        union { uint4 u; gpuml__xvec v; } t;
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(t.u.x), "=r"(t.u.y), "=r"(t.u.z), "=r"(t.u.w) : "l"(p + e0));
        r = t.v;
        return;
    }
#endif
    if (VEC > 1) r = *(const gpuml__xvec *)(p + e0);
    else r.v[0] = p[e0 * st];
}
template <typename D>
static __device__ __forceinline__ void gpuml__stvec(typename D::T *p, gpuml__i64 e0, gpuml__i64 st, const float *r)
{
    if (VEC > 1 && (DT_X == 1 || DT_X == 2)) {     /* two to a word (D is gpuml__X here) */
        gpuml__vec<gpuml__u32, (VEC + 1) / 2> v;
#pragma unroll
        for (int k = 0; k < VEC / 2; k++) v.v[k] = gpuml__pack2(DT_X, r[2 * k], r[2 * k + 1]);
#if XNA & 2
        if (VEC == 8) {
            asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p + e0), "r"(v.v[0]), "r"(v.v[1]), "r"(v.v[2]), "r"(v.v[3]) : "memory");
            return;
        }
#endif
        *(gpuml__vec<gpuml__u32, (VEC + 1) / 2> *)(p + e0) = v;
    } else if (VEC > 1) {
        gpuml__vec<typename D::T, VEC> v;
#pragma unroll
        for (int k = 0; k < VEC; k++) v.v[k] = D::st(r[k]);
#if XNA & 2
        if (VEC == 4 && sizeof(typename D::T) == 4) {
            asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p + e0), "f"(r[0]), "f"(r[1]), "f"(r[2]), "f"(r[3]) : "memory");
            return;
        }
#endif
        *(gpuml__vec<typename D::T, VEC> *)(p + e0) = v;
    } else {
        p[e0 * st] = D::st(r[0]);
    }
}

/* Each row is handled by a group of TR threads, thread tr of it taking the vectors
   tr, tr + TR, ...: a warp (WPR), a block, or the CL blocks of a cluster. */
extern "C" __global__ void __launch_bounds__(LBT, LBB)
#if GPUML__CLUSTER
    __cluster_dims__(CL, 1, 1)
#endif
    gpuml_rows(gpuml__nparams p, const gpuml__X::T *__restrict__ x,
        gpuml__X::T *__restrict__ y, const gpuml__X::T *__restrict__ dy, const gpuml__W::T *__restrict__ w,
        const gpuml__B::T *__restrict__ b, const int *__restrict__ labels, float *__restrict__ part0,
        float *__restrict__ part1)
{
#if CL > 1 && !GPUML__CLUSTER
    __trap();   /* clusters need sm_90; the host never launches this */
#endif
    const gpuml__ri n = (gpuml__ri)p.n;
#if WPR
    const gpuml__ri TR = 32, tr = threadIdx.x & 31;
    const gpuml__i64 g0 = (gpuml__i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), gstep = (gpuml__i64)gridDim.x * (blockDim.x >> 5);
#elif GPUML__CLUSTER
    const gpuml__ri TR = (gpuml__ri)blockDim.x * CL, tr = (gpuml__ri)(gpuml__cluster_rank() * blockDim.x + threadIdx.x);
    const gpuml__i64 g0 = blockIdx.x / CL, gstep = gridDim.x / CL;
#else
    const gpuml__ri TR = blockDim.x, tr = threadIdx.x;
    const gpuml__i64 g0 = blockIdx.x, gstep = gridDim.x;
#endif
    const int nch = NV > 0 ? NV : (int)((n + TR * VEC - 1) / (TR * VEC));
    gpuml__xvec xr[NVR], dr[NVR];
    float a0[NVR][VEC], a1[NVR][VEC];
    int par = 0;
    (void)dy; (void)w; (void)b; (void)labels; (void)part0; (void)part1; (void)dr; (void)a0; (void)a1;
#if WBE && NV > 0 && VEC > 1 && (RK == 2 || RK == 3)
    gpuml__vec<gpuml__W::T, VEC> wr[NVR];
    gpuml__vec<gpuml__B::T, VEC> br[NVR];
#pragma unroll
    for (int j = 0; j < NVR; j++) {
        const gpuml__ri e0 = (tr + j * TR) * VEC;
        if (e0 < n) {
#if HAS_W
            wr[j] = *(const gpuml__vec<gpuml__W::T, VEC> *)(w + e0);
#endif
#if HAS_B && RK == 2
            br[j] = *(const gpuml__vec<gpuml__B::T, VEC> *)(b + e0);
#endif
        }
    }
#define GPUML__WBE 1
#else
#define GPUML__WBE 0
#endif
    if (GPUML__BWD) {
        for (int j = 0; j < nch; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                gpuml__ri e = (tr + j * TR) * VEC + k;
                if (NV > 0) { a0[j % NVR][k] = 0.0f; a1[j % NVR][k] = 0.0f; }
                else if (e < n) { part0[(gpuml__i64)blockIdx.x * n + e] = 0.0f; if (RK == 4) part1[(gpuml__i64)blockIdx.x * n + e] = 0.0f; }
            }
    }
    for (gpuml__i64 row = g0; row < p.rs.n; row += gstep, par ^= 1) {
        gpuml__i64 off[3] = {row * p.v[0].strides[0], row * p.v[1].strides[0], row * p.v[2].strides[0]};
        if (p.rs.ndim > 1) {
            gpuml__i64 i = row;
            off[0] = off[1] = off[2] = 0;
            for (int d = p.rs.ndim - 1; d >= 0; d--) {
                gpuml__i64 q = i / p.rs.dims[d], r = i - q * p.rs.dims[d];
                for (int k = 0; k < 3; k++) off[k] += r * p.v[k].strides[d];
                i = q;
            }
        }
#if !WPR && NV > 0 && VEC > 1 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        /* this block's part of the row pf rows on (piece j = threadIdx.x: the elements this block's
           threads hold as their vector j) into L2 with one bulk prefetch each; rows are 16-byte
           aligned and n a multiple of VEC here */
        if (p.pf > 0 && row + p.pf < p.rs.n && (int)threadIdx.x < NVR) {
#if GPUML__CLUSTER
            const gpuml__ri b0 = (gpuml__ri)(gpuml__cluster_rank() * blockDim.x);
#else
            const gpuml__ri b0 = 0;
#endif
            const gpuml__ri e0 = ((gpuml__ri)threadIdx.x * TR + b0) * VEC;
            if (e0 < n) {
                const gpuml__ri e1 = e0 + (gpuml__ri)blockDim.x * VEC < n ? e0 + (gpuml__ri)blockDim.x * VEC : n;
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                             :: "l"(x + (row + p.pf) * p.v[0].strides[0] + e0), "r"((unsigned)((e1 - e0) * sizeof(gpuml__X::T))) : "memory");
            }
        }
#endif
        const gpuml__X::T *xp = x + off[0];
        gpuml__X::T *yp = y + off[1];
        const gpuml__X::T *dp = dy + off[2];
        /* the row (and dy) into registers, once */
        if (NV > 0) {
#pragma unroll
            for (int j = 0; j < NVR; j++) {
                gpuml__ri e0 = (tr + j * TR) * VEC;
                if (FULL || e0 < n) {
                    gpuml__ldraw(xr[j], xp, e0, p.xs);
                    if (GPUML__BWD) gpuml__ldraw(dr[j], dp, e0, p.dys);
                }
            }
        }
        /* element (j, k) of this thread: from registers, or reloaded */
#define GPUML__XV(j, k, e) (NV > 0 ? gpuml__vel<DT_X>(xr[(j) % NVR], k) : gpuml__X::ld(xp[(e) * p.xs]))
#define GPUML__DV(j, k, e) (NV > 0 ? gpuml__vel<DT_X>(dr[(j) % NVR], k) : gpuml__X::ld(dp[(e) * p.dys]))
/* bounds per vector (VEC > 1 only when VEC divides n), per element for VEC = 1 */
#define GPUML__FOR_ROW \
        for (int j = 0; j < nch; j++) if (FULL || (tr + j * TR) * VEC < n) _Pragma("unroll") for (int k = 0; k < VEC; k++) \
            if (VEC > 1 || (tr + j * TR) * VEC + k < n)
#define GPUML__E ((tr + j * TR) * VEC + k)

        /* this thread's statistics (two passes over its own elements), then one merge */
        gpuml__st st = gpuml__st_id();
#if GPUML__SMX
        {
            float m = -__int_as_float(0x7f800000), s = 0.0f, ms;
            GPUML__FOR_ROW m = fmaxf(m, GPUML__XV(j, k, GPUML__E));
            ms = m == -__int_as_float(0x7f800000) ? 0.0f : m;
            GPUML__FOR_ROW s += gpuml__ex2((GPUML__XV(j, k, GPUML__E) - ms) * GPUML__L2E);
            st.a = m; st.b = s;
        }
        st = gpuml__st_reduce(st, par);
        const float mx = st.a, s = st.b;
#if RK == 6
        int lab = labels[row * p.ls];
        bool ok = lab >= 0 && (gpuml__i64)lab < n;
        float inv = __fdividef(p.scale, s);   /* s >= 1 (or NaN) */
        if (tr == 0) part0[row] = ok ? (mx - gpuml__X::ld(xp[(gpuml__i64)lab * p.xs])) + logf(s) : __int_as_float(0x7fc00000);
#endif
#if RK == 0
        float inv = __fdividef(1.0f, s);      /* s >= 1 (or NaN) */
#elif RK == 1
        /* y = (x - max) - log(sum): x - max is exact near the max; mx + log(sum) in f32 lost log(sum)
           against a large max (rows at 1e4 off by ~1e-4 relative; the CPU paths had the same) */
        const float ls = logf(s);
#endif
#elif GPUML__LN
        /* the statistics are of x - sh, sh = the row's first element (finite, else 0): x - sh is exact
           for x within a factor 2 of sh, so rows far from 0 against their spread (1000 + U(-1, 1))
           keep f32 accuracy -- an f32 mean of 1000 would carry a few ulps of 1000 through the merges.
           f32 x only: for f16/bf16 x that error is far below the output's rounding, and the 16-bit
           rows are issue-bound (the subtraction cost bf16 rows of 8192-32768 3-11%, H100) */
        const float sh0 = DT_X == 0 && n > 0 ? gpuml__X::ld(xp[0]) : 0.0f, sh = fabsf(sh0) <= 3.0e38f ? sh0 : 0.0f;
        {
            float c = 0.0f, s = 0.0f, q = 0.0f, mu;
            GPUML__FOR_ROW s += GPUML__XV(j, k, GPUML__E) - sh;
            for (int j = 0; j < nch; j++) {      /* this thread's element count */
                gpuml__ri e0 = (tr + j * TR) * VEC;
                c += FULL ? (float)VEC : e0 >= n ? 0.0f : (float)(n - e0 < VEC ? n - e0 : VEC);
            }
            mu = c > 0.0f ? s / c : 0.0f;
            GPUML__FOR_ROW { float d = (GPUML__XV(j, k, GPUML__E) - sh) - mu; q = fmaf(d, d, q); }
            st.a = c; st.b = mu; st.c = q;
        }
        st = gpuml__st_reduce(st, par);
        float mean = st.b, rstd = rsqrtf(st.c / (float)n + p.eps);
#else
        {
            float q = 0.0f;
            GPUML__FOR_ROW { float v = GPUML__XV(j, k, GPUML__E); q = fmaf(v, v, q); }
            st.a = q;
        }
        st = gpuml__st_reduce(st, par);
        float mean = 0.0f, rstd = rsqrtf(st.a / (float)n + p.eps);
        const float sh = 0.0f;
#endif
#if GPUML__BWD
        /* g = dy * w, xhat = (x - mean) * rstd: sums of g and g * xhat */
        float sg = 0.0f, sgx = 0.0f;
        GPUML__FOR_ROW {
            gpuml__ri e = GPUML__E;
            float g = GPUML__DV(j, k, e) * (HAS_W ? gpuml__W::ld(w[e * p.ws]) : 1.0f);
            sg += g;
            sgx = fmaf(g, ((GPUML__XV(j, k, e) - sh) - mean) * rstd, sgx);
        }
        {
            float2 t = gpuml__block_sum2(sg, sgx);
            sg = RK == 4 ? t.x / (float)n : 0.0f;
            sgx = t.y / (float)n;
        }
#endif
        (void)yp;
        /* the outputs, one vector at a time */
        for (int j = 0; j < nch; j++) {
            gpuml__ri e0 = (tr + j * TR) * VEC;
            float o[VEC], wv[VEC], bv[VEC];
            if (!FULL && e0 >= n) continue;
#if GPUML__WBE && HAS_W
#pragma unroll
            for (int k = 0; k < VEC; k++) wv[k] = gpuml__vel<DT_W>(wr[j % NVR], k);
#elif HAS_W && RK >= 2 && RK <= 5
            gpuml__ldvec<DT_W>(wv, w, e0, p.ws);
#else
#pragma unroll
            for (int k = 0; k < VEC; k++) wv[k] = 1.0f;
#endif
#if GPUML__WBE && HAS_B && RK == 2
#pragma unroll
            for (int k = 0; k < VEC; k++) bv[k] = gpuml__vel<DT_B>(br[j % NVR], k);
#elif HAS_B && RK == 2
            gpuml__ldvec<DT_B>(bv, b, e0, p.bs);
#else
#pragma unroll
            for (int k = 0; k < VEC; k++) bv[k] = 0.0f;
#endif
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                gpuml__ri e = e0 + k;
                float xv = GPUML__XV(j, k, e);
                (void)wv[k]; (void)bv[k];
#if RK == 0
                o[k] = gpuml__ex2((xv - mx) * GPUML__L2E) * inv;
#elif RK == 1
                o[k] = (xv - mx) - ls;
#elif RK == 6
                o[k] = ok ? (gpuml__ex2((xv - mx) * GPUML__L2E) * inv - (e == (gpuml__i64)lab ? p.scale : 0.0f)) : __int_as_float(0x7fc00000);
#elif RK == 2 || RK == 3
                o[k] = fmaf(((xv - sh) - mean) * rstd, wv[k], bv[k]);
#else
                float dyv = GPUML__DV(j, k, e), xh = ((xv - sh) - mean) * rstd, g = dyv * wv[k];
                o[k] = rstd * (g - sg - xh * sgx);
                if (NV > 0) {
                    a0[j % NVR][k] = fmaf(dyv, xh, a0[j % NVR][k]);
                    a1[j % NVR][k] += dyv;
                } else {
                    part0[(gpuml__i64)blockIdx.x * n + e] += dyv * xh;
                    if (RK == 4) part1[(gpuml__i64)blockIdx.x * n + e] += dyv;
                }
#endif
            }
            if (RK != 6 || HAS_Y) gpuml__stvec<gpuml__X>(yp, e0, p.ys, o);
        }
    }
#if GPUML__CLUSTER
    gpuml__cluster_sync();      /* the other blocks may still read this one's statistics */
#endif
    if (GPUML__BWD && NV > 0) {
#pragma unroll
        for (int j = 0; j < NVR; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                gpuml__ri e = (tr + j * TR) * VEC + k;
                if (e < n) {
                    part0[(gpuml__i64)blockIdx.x * n + e] = a0[j][k];
                    if (RK == 4) part1[(gpuml__i64)blockIdx.x * n + e] = a1[j][k];
                }
            }
    }
}
#endif /* COLSUM */
