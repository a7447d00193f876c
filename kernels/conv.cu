/* Convolution and pooling on CUDA cores: the generic paths of gpuml_conv2d, its backward
   passes and gpuml_pool2d.  Correct for every stride, padding (asymmetric included),
   dilation, group count and layout: every tensor is addressed through logical strides
   (x as n,h,w,c; w as k,r,s,c-in-group; y as n,p,q,k), so NHWC, NCHW and any other strided
   view take the same code.  Math in f32.
   Macros: CONV_DT (gpuml_dtype of x, w, y, dx, dw, col), CONV_EPI (0 none, 1 relu, 2 gelu
   (tanh), 3 silu), CONV_BIAS, CONV_RES (0/1), CONV_I32 (1: every index fits in 31 bits),
   POOL_MAX (pool kernel: 1 max, 0 average).  Launch contract: 1-D grid-stride loops of
   256 threads over p.total items, except gpuml_conv_bwd_filter (one 256-thread block per
   weight element, p.total of them).  The params struct (gpuml__conv_params) and the activation
   (gpuml__conv_act) are in kernels/conv_params.cuh. */
#ifndef CONV_DT
#define CONV_DT 0
#endif
#ifndef CONV_I32
#define CONV_I32 0
#endif
#ifndef POOL_MAX
#define POOL_MAX 1
#endif

#if CONV_I32
typedef int gpuml__ix;
#else
typedef gpuml__i64 gpuml__ix;
#endif
typedef gpuml__dt<CONV_DT> gpuml__C;
typedef gpuml__C::T gpuml__ct;


/* element conversions: the hardware cvt for f16 (exact, the same values as the portable
   gpuml__f16_to_f32 / round-to-nearest-even gpuml__f32_to_f16 of shared.h) */
static __device__ __forceinline__ float gpuml__cvl(gpuml__ct v)
{
#if CONV_DT == 1 && __CUDA_ARCH__ >= 530
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((gpuml__u16)v));
    return f;
#else
    return gpuml__C::ld(v);
#endif
}
static __device__ __forceinline__ gpuml__ct gpuml__cvs(float f)
{
#if CONV_DT == 1 && __CUDA_ARCH__ >= 530
    gpuml__u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return (gpuml__ct)h;
#else
    return gpuml__C::st(f);
#endif
}
static __device__ __forceinline__ float gpuml__ldc(const void *base, gpuml__ix off)
{
    return gpuml__cvl(((const gpuml__ct *)base)[off]);
}

/* item index -> (n, row, col, channel) of an output of rows x cols x chans */
static __device__ __forceinline__ void gpuml__conv_split(gpuml__ix i, int order, gpuml__ix rows, gpuml__ix cols, gpuml__ix chans,
                                                          gpuml__ix &n, gpuml__ix &a, gpuml__ix &b, gpuml__ix &ch)
{
    if (order == 0) { ch = i % chans; i /= chans; b = i % cols; i /= cols; a = i % rows; n = i / rows; }
    else { b = i % cols; i /= cols; a = i % rows; i /= rows; ch = i % chans; n = i / chans; }
}

static __device__ __forceinline__ void gpuml__conv_store(const gpuml__conv_params &p, gpuml__ix n, gpuml__ix pp, gpuml__ix q,
                                                          gpuml__ix k, float acc)
{
#if CONV_BIAS
    acc += p.bias[k];
#endif
    acc = gpuml__conv_act(acc);
#if CONV_RES
    acc += gpuml__ldc(p.res, n * (gpuml__ix)p.rn + pp * (gpuml__ix)p.rp + q * (gpuml__ix)p.rq + k * (gpuml__ix)p.rk);
#endif
    ((gpuml__ct *)p.y)[n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + k * (gpuml__ix)p.yk] = gpuml__cvs(acc);
}

/* forward, one output element per thread: y[n,p,q,k] = epi(sum_{r,s,c} x[n,h,w,g*cg+c] w[k,r,s,c]) */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_direct(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, pp, q, k;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.p, (gpuml__ix)p.q, (gpuml__ix)p.k, n, pp, q, k);
        const gpuml__ix c0 = (k / (gpuml__ix)p.kg) * (gpuml__ix)p.cg;
        float acc = 0.0f;
        for (int r = 0; r < (int)p.r; r++) {
            const gpuml__ix h = pp * p.sh - p.ph + (gpuml__ix)r * p.dh;
            if (h < 0 || h >= (gpuml__ix)p.h) continue;
            for (int s = 0; s < (int)p.s; s++) {
                const gpuml__ix w = q * p.sw - p.pw + (gpuml__ix)s * p.dw;
                if (w < 0 || w >= (gpuml__ix)p.w) continue;
                gpuml__ix xo = n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + c0 * (gpuml__ix)p.xc;
                gpuml__ix wo = k * (gpuml__ix)p.wk + (gpuml__ix)r * (gpuml__ix)p.wr + (gpuml__ix)s * (gpuml__ix)p.ws;
                for (gpuml__ix c = 0; c < (gpuml__ix)p.cg; c++)
                    acc = fmaf(gpuml__ldc(p.x, xo + c * (gpuml__ix)p.xc), gpuml__ldc(p.wt, wo + c * (gpuml__ix)p.wc), acc);
            }
        }
        gpuml__conv_store(p, n, pp, q, k, acc);
    }
}

/* depthwise forward (one input channel per group, k = c * (K / C) + m): memory-bound, one
   output per thread, consecutive threads on the layout's fastest output dim so that the
   R x S loads of neighbouring threads coalesce and the re-reads hit L1/L2 */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_depthwise(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    const gpuml__ct *__restrict__ x = (const gpuml__ct *)p.x;
    const gpuml__ct *__restrict__ wt = (const gpuml__ct *)p.wt;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, pp, q, k;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.p, (gpuml__ix)p.q, (gpuml__ix)p.k, n, pp, q, k);
        const gpuml__ix c = k / (gpuml__ix)p.kg;
        const gpuml__ix h0 = pp * p.sh - p.ph, w0 = q * p.sw - p.pw;
        const gpuml__ct *xb = x + n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc;
        const gpuml__ct *wb = wt + k * (gpuml__ix)p.wk;
        float acc = 0.0f;
        for (int r = 0; r < (int)p.r; r++) {
            const gpuml__ix h = h0 + (gpuml__ix)r * p.dh;
            if (h < 0 || h >= (gpuml__ix)p.h) continue;
            for (int s = 0; s < (int)p.s; s++) {
                const gpuml__ix w = w0 + (gpuml__ix)s * p.dw;
                if (w < 0 || w >= (gpuml__ix)p.w) continue;
                acc = fmaf(gpuml__cvl(__ldg(xb + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw)),
                           gpuml__cvl(__ldg(wb + (gpuml__ix)r * (gpuml__ix)p.wr + (gpuml__ix)s * (gpuml__ix)p.ws)), acc);
            }
        }
        gpuml__conv_store(p, n, pp, q, k, acc);
    }
}

/* depthwise (multiplier 1: k = c) with register blocking: a thread computes DW_QT consecutive
   outputs along q for DW_VEC consecutive channels, reading each input row segment once into
   registers.  DW_S, DW_SW, DW_DW (taps, stride and dilation along w) are compile-time; R and
   the rest run-time.  DW_VEC > 1 (16-byte loads along c) needs unit channel strides, C % DW_VEC
   == 0, and 16-byte aligned rows (the host checks).  Items: (n, p, q-block, c-vector), the
   c-vector fastest for order 0, the q-block fastest for order 1. */
#ifndef DW_VEC
#define DW_VEC 1
#endif
#ifndef DW_QT
#define DW_QT 4
#endif
#ifndef DW_S
#define DW_S 3
#endif
#ifndef DW_SW
#define DW_SW 1
#endif
#ifndef DW_DW
#define DW_DW 1
#endif
#define DW_SPAN ((DW_QT - 1) * DW_SW + (DW_S - 1) * DW_DW + 1)
struct gpuml__dwv { gpuml__ct v[DW_VEC]; };
static __device__ __forceinline__ void gpuml__dw_load(const gpuml__ct *ptr, float *out)
{
    gpuml__dwv t;
#if DW_VEC > 1
    if (sizeof(gpuml__dwv) == 16) {
        union { uint4 u; gpuml__dwv d; } cv;
        cv.u = __ldg((const uint4 *)ptr);
        t = cv.d;
    } else
#endif
    {
#pragma unroll
        for (int v = 0; v < DW_VEC; v++) t.v[v] = __ldg(ptr + v);
    }
#pragma unroll
    for (int v = 0; v < DW_VEC; v++) out[v] = gpuml__cvl(t.v[v]);
}
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dw_fast(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    const gpuml__ix ncv = (gpuml__ix)p.k / DW_VEC, nqb = ((gpuml__ix)p.q + DW_QT - 1) / DW_QT;
    const gpuml__ct *__restrict__ x = (const gpuml__ct *)p.x;
    const gpuml__ct *__restrict__ wt = (const gpuml__ct *)p.wt;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, pp, qb, cv, t = i;
        if (p.order == 0) { cv = t % ncv; t /= ncv; qb = t % nqb; t /= nqb; pp = t % (gpuml__ix)p.p; n = t / (gpuml__ix)p.p; }
        else { qb = t % nqb; t /= nqb; pp = t % (gpuml__ix)p.p; t /= (gpuml__ix)p.p; cv = t % ncv; n = t / ncv; }
        const gpuml__ix c0 = cv * DW_VEC, q0 = qb * DW_QT, w0 = q0 * DW_SW - p.pw;
        float acc[DW_QT][DW_VEC];
#pragma unroll
        for (int a = 0; a < DW_QT; a++)
#pragma unroll
            for (int v = 0; v < DW_VEC; v++) acc[a][v] = 0.0f;
        for (int r = 0; r < (int)p.r; r++) {
            const gpuml__ix h = pp * p.sh - p.ph + (gpuml__ix)r * p.dh;
            if (h < 0 || h >= (gpuml__ix)p.h) continue;
            const gpuml__ct *xr = x + n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + c0 * (gpuml__ix)p.xc;
            float xin[DW_SPAN][DW_VEC], wv[DW_S][DW_VEC];
#pragma unroll
            for (int j = 0; j < DW_SPAN; j++) {
                const gpuml__ix w = w0 + j;
                if (w >= 0 && w < (gpuml__ix)p.w) {
#if DW_VEC > 1
                    gpuml__dw_load(xr + w * (gpuml__ix)p.xw, xin[j]);
#else
                    xin[j][0] = gpuml__cvl(__ldg(xr + w * (gpuml__ix)p.xw));
#endif
                } else {
#pragma unroll
                    for (int v = 0; v < DW_VEC; v++) xin[j][v] = 0.0f;
                }
            }
#pragma unroll
            for (int s = 0; s < DW_S; s++)
#pragma unroll
                for (int v = 0; v < DW_VEC; v++)
                    wv[s][v] = gpuml__cvl(__ldg(wt + (c0 + v) * (gpuml__ix)p.wk + (gpuml__ix)r * (gpuml__ix)p.wr + (gpuml__ix)s * (gpuml__ix)p.ws));
#pragma unroll
            for (int a = 0; a < DW_QT; a++)
#pragma unroll
                for (int s = 0; s < DW_S; s++)
#pragma unroll
                    for (int v = 0; v < DW_VEC; v++) acc[a][v] = fmaf(xin[a * DW_SW + s * DW_DW][v], wv[s][v], acc[a][v]);
        }
#pragma unroll
        for (int a = 0; a < DW_QT; a++) {
            if (q0 + a >= (gpuml__ix)p.q) break;
            gpuml__ct *yp = (gpuml__ct *)p.y + n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + (q0 + a) * (gpuml__ix)p.yq + c0 * (gpuml__ix)p.yk;
            gpuml__dwv o;
#if CONV_RES
            float res[DW_VEC];
            const gpuml__ct *rp = (const gpuml__ct *)p.res + n * (gpuml__ix)p.rn + pp * (gpuml__ix)p.rp + (q0 + a) * (gpuml__ix)p.rq + c0 * (gpuml__ix)p.rk;
#if DW_VEC > 1
            gpuml__dw_load(rp, res);
#else
            res[0] = gpuml__cvl(rp[0]);
#endif
#endif
#pragma unroll
            for (int v = 0; v < DW_VEC; v++) {
                float f = acc[a][v];
#if CONV_BIAS
                f += p.bias[c0 + v];
#endif
                f = gpuml__conv_act(f);
#if CONV_RES
                f += res[v];
#endif
                o.v[v] = gpuml__cvs(f);
            }
#if DW_VEC > 1
            if (sizeof(gpuml__dwv) == 16) { union { uint4 u; gpuml__dwv d; } cv; cv.d = o; *(uint4 *)yp = cv.u; }
            else
#endif
            {
#pragma unroll
                for (int v = 0; v < DW_VEC; v++) yp[v] = o.v[v];
            }
        }
    }
}

/* depthwise 3x3 (multiplier 1, dilation 1, stride DW3_ST on both axes, any padding): a thread
   owns a tile of p.n0 output rows x DW3_QT output columns for DW3_VEC channels and walks down
   the input rows the tile needs, loading each row segment once into registers (DW3_PF rows
   ahead) and adding it into every output row of the tile that uses it; an output row is stored
   when complete.  The 9 weights per channel stay in registers.
   DW3_VEC > 1 (NHWC: channel vectors of DW3_VEC * sizeof(element) = 8 or 16 bytes; the host
   checks unit channel strides, C % DW3_VEC == 0 and aligned rows): a block is
   p.ldcol channel vectors (threadIdx.x % p.ldcol, the chunk blockIdx.y) times
   blockDim.x / p.ldcol tiles (blockIdx.x); the block stages its channels' weights in shared
   memory (coalesced) and each thread reads its vectors from there.  p.total = N * ceil(P / n0) *
   ceil(Q / QT) tiles.
   DW3_VEC == 1 (NCHW, w contiguous): one grid-stride item per (n, c, tile), q-tiles fastest so
   that a warp covers consecutive columns of a row; the weights are read directly (a warp shares
   its channel: broadcast loads).  p.total = N * C * tiles per plane. */
#ifndef DW3_VEC
#define DW3_VEC 4
#endif
#ifndef DW3_QT
#define DW3_QT 2
#endif
#ifndef DW3_ST
#define DW3_ST 1
#endif
#ifndef DW3_PF
#define DW3_PF (DW3_ST == 1 ? 2 : 3)   /* input rows loaded ahead of the one being summed (1-3) */
#endif
#define DW3_SPAN ((DW3_QT - 1) * DW3_ST + 3)
#define DW3_MAXCV 32   /* channel vectors per block at most (host: p.ldcol <= 32) */
struct gpuml__dw3v { gpuml__ct v[DW3_VEC]; };
static __device__ __forceinline__ void gpuml__dw3_ld(const gpuml__ct *ptr, float *out)
{
    gpuml__dw3v t;
    if (sizeof(gpuml__dw3v) == 16) {
        union { uint4 u; gpuml__dw3v d; } cv;
        cv.u = __ldg((const uint4 *)ptr);
        t = cv.d;
    } else if (sizeof(gpuml__dw3v) == 8) {
        union { uint2 u; gpuml__dw3v d; } cv;
        cv.u = __ldg((const uint2 *)ptr);
        t = cv.d;
    } else if (sizeof(gpuml__dw3v) == 4 && DW3_VEC > 1) {
        union { unsigned u; gpuml__dw3v d; } cv;
        cv.u = __ldg((const unsigned *)ptr);
        t = cv.d;
    } else {
#pragma unroll
        for (int v = 0; v < DW3_VEC; v++) t.v[v] = __ldg(ptr + v);
    }
#pragma unroll
    for (int v = 0; v < DW3_VEC; v++) out[v] = gpuml__cvl(t.v[v]);
}
static __device__ __forceinline__ void gpuml__dw3_raw(const gpuml__ct *ptr, gpuml__dw3v &t)
{
#if DW3_VEC > 1
    if (sizeof(gpuml__dw3v) == 16) {
        union { uint4 u; gpuml__dw3v d; } cv;
        cv.u = __ldg((const uint4 *)ptr);
        t = cv.d;
    } else if (sizeof(gpuml__dw3v) == 8) {
        union { uint2 u; gpuml__dw3v d; } cv;
        cv.u = __ldg((const uint2 *)ptr);
        t = cv.d;
    } else if (sizeof(gpuml__dw3v) == 4) {
        union { unsigned u; gpuml__dw3v d; } cv;
        cv.u = __ldg((const unsigned *)ptr);
        t = cv.d;
    } else
#endif
    {
#pragma unroll
        for (int v = 0; v < DW3_VEC; v++) t.v[v] = __ldg(ptr + v);
    }
}
static __device__ __forceinline__ void gpuml__dw3_zero(gpuml__dw3v &t)
{
#pragma unroll
    for (int v = 0; v < DW3_VEC; v++) t.v[v] = gpuml__C::st(0.0f);
}
/* 16- and 8-byte stores written in PTX: as uint4 / uint2 assignments nvcc emitted the first column's
   store of a tile row as four 4-byte stores in the f32 builds (PTX of 7525dec) */
static __device__ __forceinline__ void gpuml__dw3_st(gpuml__ct *ptr, const gpuml__dw3v &o)
{
    if (sizeof(gpuml__dw3v) == 16) {
        union { uint4 u; gpuml__dw3v d; } cv;
        cv.d = o;
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(ptr), "r"(cv.u.x), "r"(cv.u.y), "r"(cv.u.z), "r"(cv.u.w) : "memory");
    } else if (sizeof(gpuml__dw3v) == 8) {
        union { uint2 u; gpuml__dw3v d; } cv;
        cv.d = o;
        asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(ptr), "r"(cv.u.x), "r"(cv.u.y) : "memory");
    } else if (sizeof(gpuml__dw3v) == 4 && DW3_VEC > 1) {
        union { unsigned u; gpuml__dw3v d; } cv;
        cv.d = o;
        *(unsigned *)ptr = cv.u;
    } else {
#pragma unroll
        for (int v = 0; v < DW3_VEC; v++) ptr[v] = o.v[v];
    }
}
/* the epilogue of one output row of a tile: bias, activation, residual, store */
static __device__ __forceinline__ void gpuml__dw3_row(const gpuml__conv_params &p, gpuml__ix n, gpuml__ix pp, gpuml__ix q0, gpuml__ix c0,
                                                       const float (&acc)[DW3_QT][DW3_VEC], const float (&bias)[DW3_VEC])
{
    if (pp >= (gpuml__ix)p.p) return;
#pragma unroll
    for (int b = 0; b < DW3_QT; b++) {
        const gpuml__ix q = q0 + b;
        if (q >= (gpuml__ix)p.q) break;
#if CONV_RES
        float res[DW3_VEC];
        const gpuml__ct *rp = (const gpuml__ct *)p.res + n * (gpuml__ix)p.rn + pp * (gpuml__ix)p.rp + q * (gpuml__ix)p.rq + c0 * (gpuml__ix)p.rk;
#if DW3_VEC > 1
        gpuml__dw3_ld(rp, res);
#else
        res[0] = gpuml__cvl(rp[0]);
#endif
#endif
        gpuml__dw3v o;
#pragma unroll
        for (int v = 0; v < DW3_VEC; v++) {
            float f = gpuml__conv_act(acc[b][v] + bias[v]);
#if CONV_RES
            f += res[v];
#endif
            o.v[v] = gpuml__cvs(f);
        }
        gpuml__dw3_st((gpuml__ct *)p.y + n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + c0 * (gpuml__ix)p.yk, o);
    }
}
/* one tile: np output rows from p0 (at most 3 (stride 1) or 2 (stride 2) rows of accumulators
   live: each output row is finished and stored as soon as its last input row is summed), down
   a run-time loop over the (np - 1) * DW3_ST + 3 input rows, each loaded DW3_PF rows ahead into
   registers (a load per channel vector: predicated off, leaving zeros, in padding and past the
   tile).  The loop body is unrolled over DW3_PER input rows so that every accumulator slot and
   load buffer index is a compile-time constant, and it is branch-free but for the stores: the
   row count is rounded up to whole bodies (the extra rows load nothing and are never stored),
   contributions to output rows outside the tile go into slots that are never stored, and a slot
   starts over with a product (filter row 0) instead of being zeroed.
   The first version (a compile-time tile of 2 rows, every accumulator to the end, all loads
   hoisted) took 80 registers and was issue-bound at 70% of the schedulers on the H100 in f16
   (bench/NOTES_conv.md "Depthwise 3x3: issue-bound"). */
#define DW3_NS (DW3_ST == 1 ? 3 : 2)   /* accumulator slots (output rows in progress) */
#define DW3_NB (DW3_PF + 1)             /* load buffers (input rows) */
/* input rows per unrolled loop body: a multiple of DW3_NS * DW3_ST (slots) and of DW3_NB (buffers) */
#define DW3_PER ((DW3_NS * DW3_ST) % DW3_NB == 0 ? DW3_NS * DW3_ST : (DW3_NS * DW3_ST) * DW3_NB)
#ifndef DW3_WS
#define DW3_WS (DW3_VEC > 1)   /* 1: the weights are read from shared memory at each use (DW3_VEC 2, 4 or 8), not held in registers */
#endif
/* filter row r's 3 taps for the thread's channels: from registers, or (DW3_WS) from shared memory at
   address sws (the thread's [9][DW3_MAXCV * DW3_VEC] column) with loads the compiler cannot hoist */
static __device__ __forceinline__ void gpuml__dw3_w(const float (&wv)[9][DW3_VEC], gpuml__u32 sws, int r, float (&w3)[3][DW3_VEC])
{
#if DW3_WS && DW3_VEC > 1
    (void)wv;
#pragma unroll
    for (int s = 0; s < 3; s++)
#pragma unroll
        for (int v = 0; v < DW3_VEC; v += (DW3_VEC >= 4 ? 4 : 2)) {
            const gpuml__u32 a = sws + (gpuml__u32)(((r * 3 + s) * DW3_MAXCV * DW3_VEC + v) * 4);
            if (DW3_VEC >= 4)
                asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(w3[s][v]), "=f"(w3[s][(v + 1) % DW3_VEC]), "=f"(w3[s][(v + 2) % DW3_VEC]),
                             "=f"(w3[s][(v + 3) % DW3_VEC]) : "r"(a));
            else
                asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(w3[s][v]), "=f"(w3[s][(v + 1) % DW3_VEC]) : "r"(a));
        }
#else
    (void)sws;
#pragma unroll
    for (int s = 0; s < 3; s++)
#pragma unroll
        for (int v = 0; v < DW3_VEC; v++) w3[s][v] = wv[r * 3 + s][v];
#endif
}
static __device__ __forceinline__ void gpuml__dw3_tile(const gpuml__conv_params &p, gpuml__ix n, gpuml__ix p0, int np, gpuml__ix q0,
                                                        gpuml__ix c0, const float (&wv)[9][DW3_VEC], gpuml__u32 sws)
{
    const int h0 = (int)(p0 * DW3_ST - p.ph), w0 = (int)(q0 * DW3_ST - p.pw), nr = (np - 1) * DW3_ST + 3;
    const int nrr = (nr + DW3_PER - 1) / DW3_PER * DW3_PER;
    /* the next row to load: its pointer (advanced by a row each load; read only where in the image) */
    const gpuml__ct *xr = (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn + c0 * (gpuml__ix)p.xc + (gpuml__ix)h0 * (gpuml__ix)p.xh;
    const gpuml__ix xh = (gpuml__ix)p.xh;
    int wo[DW3_SPAN];
    bool wok[DW3_SPAN];
#pragma unroll
    for (int j = 0; j < DW3_SPAN; j++) {
        wok[j] = (unsigned)(w0 + j) < (unsigned)p.w;
        wo[j] = (w0 + j) * (int)p.xw;
    }
    float bias[DW3_VEC];
#pragma unroll
    for (int v = 0; v < DW3_VEC; v++) {
#if CONV_BIAS
        bias[v] = p.bias[c0 + v];
#else
        bias[v] = 0.0f;
#endif
    }
    gpuml__dw3v buf[DW3_NB][DW3_SPAN];
    float acc[DW3_NS][DW3_QT][DW3_VEC];
#pragma unroll
    for (int a = 0; a < DW3_NS; a++)
#pragma unroll
        for (int b = 0; b < DW3_QT; b++)
#pragma unroll
            for (int v = 0; v < DW3_VEC; v++) acc[a][b][v] = 0.0f;
#pragma unroll
    for (int u = 0; u < DW3_PF; u++) {   /* nr >= 3 > DW3_PF */
        const bool hok = (unsigned)(h0 + u) < (unsigned)p.h;
#pragma unroll
        for (int j = 0; j < DW3_SPAN; j++) {
            gpuml__dw3_zero(buf[u][j]);
            if (hok && wok[j]) gpuml__dw3_raw(xr + wo[j], buf[u][j]);
        }
        xr += xh;
    }
    for (int base = 0; base < nrr; base += DW3_PER) {
#pragma unroll
        for (int u = 0; u < DW3_PER; u++) {
            const int i = base + u;   /* the input row summed now */
            {   /* the loads of row i + DW3_PF */
                const bool hok = (unsigned)(h0 + i + DW3_PF) < (unsigned)p.h && i + DW3_PF < nr;
                gpuml__dw3v (&d)[DW3_SPAN] = buf[(u + DW3_PF) % DW3_NB];
#pragma unroll
                for (int j = 0; j < DW3_SPAN; j++) {
                    gpuml__dw3_zero(d[j]);
                    if (hok && wok[j]) gpuml__dw3_raw(xr + wo[j], d[j]);
                }
                xr += xh;
            }
            float xin[DW3_SPAN][DW3_VEC];
#pragma unroll
            for (int j = 0; j < DW3_SPAN; j++)
#pragma unroll
                for (int v = 0; v < DW3_VEC; v++) xin[j][v] = gpuml__cvl(buf[u % DW3_NB][j].v[v]);
#pragma unroll
            for (int r = 0; r < 3; r++) {   /* filter row r: output row (i - r) / DW3_ST */
                if ((u - r + DW3_NS * DW3_ST) % DW3_ST) continue;
                const int sl = ((u - r + DW3_NS * DW3_ST) / DW3_ST) % DW3_NS;
                float w3[3][DW3_VEC];
                gpuml__dw3_w(wv, sws, r, w3);
#pragma unroll
                for (int b = 0; b < DW3_QT; b++)
#pragma unroll
                    for (int v = 0; v < DW3_VEC; v++) {
                        float t = r == 0 ? xin[b * DW3_ST][v] * w3[0][v] : fmaf(xin[b * DW3_ST][v], w3[0][v], acc[sl][b][v]);
                        t = fmaf(xin[b * DW3_ST + 1][v], w3[1][v], t);
                        acc[sl][b][v] = fmaf(xin[b * DW3_ST + 2][v], w3[2][v], t);
                    }
                if (r == 2) {   /* output row (i - 2) / DW3_ST is complete */
                    const int a = (i - 2) / DW3_ST;
                    if (i >= 2 && a < np) gpuml__dw3_row(p, n, p0 + a, q0, c0, acc[sl], bias);
                }
            }
        }
    }
}
#ifndef DW3_MINB   /* resident 128-thread blocks per SM the registers must allow (channel vectors: 3, no spills) */
#define DW3_MINB (DW3_VEC >= 2 ? 3 : 4)
#endif
extern "C" __global__ void __launch_bounds__(128, DW3_MINB) gpuml_conv_dw3(gpuml__conv_params p)
{
    const int tp = (int)p.n0;   /* output rows per tile (the host: 1 <= p.n0 <= P) */
    const gpuml__ix npt = ((gpuml__ix)p.p + tp - 1) / tp, nqt = ((gpuml__ix)p.q + DW3_QT - 1) / DW3_QT;
    const gpuml__ct *__restrict__ wt = (const gpuml__ct *)p.wt;
    float wv[9][DW3_VEC];
#if DW3_VEC > 1
    __shared__ float sw[9][DW3_MAXCV * DW3_VEC];
    const int cvb = (int)p.ldcol, nch = cvb * DW3_VEC;
    const int tx = (int)threadIdx.x % cvb, ty = (int)threadIdx.x / cvb, tpb = (int)blockDim.x / cvb;
    const gpuml__ix cb = (gpuml__ix)blockIdx.y * nch;   /* the block's first channel */
    for (int e = threadIdx.x; e < 9 * nch; e += blockDim.x) {
        const int cl = e / 9, rs = e - cl * 9;
        sw[rs][cl] = cb + cl < (gpuml__ix)p.k
                         ? gpuml__cvl(__ldg(wt + (cb + cl) * (gpuml__ix)p.wk + (gpuml__ix)(rs / 3) * (gpuml__ix)p.wr + (gpuml__ix)(rs % 3) * (gpuml__ix)p.ws))
                         : 0.0f;
    }
    __syncthreads();
    const gpuml__ix tile = (gpuml__ix)blockIdx.x * tpb + ty, c0 = cb + (gpuml__ix)tx * DW3_VEC;
    if (ty >= tpb || tile >= (gpuml__ix)p.total || c0 >= (gpuml__ix)p.k) return;
#if !DW3_WS
#pragma unroll
    for (int rs = 0; rs < 9; rs++)
#pragma unroll
        for (int v = 0; v < DW3_VEC; v++) wv[rs][v] = sw[rs][tx * DW3_VEC + v];
#endif
    gpuml__ix t = tile;
    const gpuml__ix qt = t % nqt; t /= nqt;
    const gpuml__ix pt = t % npt, n = t / npt;
    gpuml__dw3_tile(p, n, pt * tp, (int)((gpuml__ix)p.p - pt * tp < tp ? (gpuml__ix)p.p - pt * tp : tp), qt * DW3_QT, c0, wv,
                    (gpuml__u32)__cvta_generic_to_shared(&sw[0][tx * DW3_VEC]));
#else
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix t = i;
        const gpuml__ix qt = t % nqt; t /= nqt;
        const gpuml__ix pt = t % npt; t /= npt;
        const gpuml__ix c = t % (gpuml__ix)p.k, n = t / (gpuml__ix)p.k;
#pragma unroll
        for (int rs = 0; rs < 9; rs++)
            wv[rs][0] = gpuml__cvl(__ldg(wt + c * (gpuml__ix)p.wk + (gpuml__ix)(rs / 3) * (gpuml__ix)p.wr + (gpuml__ix)(rs % 3) * (gpuml__ix)p.ws));
        gpuml__dw3_tile(p, n, pt * tp, (int)((gpuml__ix)p.p - pt * tp < tp ? (gpuml__ix)p.p - pt * tp : tp), qt * DW3_QT, c, wv, 0u);
    }
#endif
}

/* depthwise 3x3, staged in shared memory (NHWC-style: unit channel strides, the pixel strides
   and C in multiples of 16 bytes, 16-byte aligned tensors; multiplier 1, dilation 1, stride
   DW3_ST on both axes, any padding).  A block owns a band of p.n0 output rows x p.g output
   columns x p.ldcol channels of one image and streams the band's input rows through a ring of
   DW3S_R shared-memory slots with 16-byte cp.async (sm_80+; one commit group per row, DW3S_R - 1
   rows in flight ahead of the one summed; the padding zero-filled by the copy, src-size 0).
   Why: gpuml_conv_dw3 holds its loads in registers, ~16 KB of distinct input in flight per SM in
   f16, short of the ~24 KB that ~3 TB/s x ~1 us asks; these copies cost no registers, each
   warp's are whole 128-byte lines, and each input byte comes from L2 once (the band's 2 halo
   rows and the block's 2 halo columns twice).
   Threads: threadIdx.x = column group * (p.ldcol / 4) + channel vector: a thread sums 4 channels of
   DW3S_QT consecutive output columns down the band (2 columns read 4 input vectors a row at stride 1
   where 1 column reads 3: fewer loads, conversions and loop instructions an output), keeping in
   registers the output rows that the current input row feeds (3 at stride 1, 1 at stride 2),
   storing each when complete.  f32 math.
   Units of work: (n, column block, band), the band fastest.  Grid: x = up to one block per unit; a
   block takes units blockIdx.x, + gridDim.x, ... and streams all their input rows through the ring
   as one sequence (the copies of the next unit's first rows are in flight while the current one
   ends: a grid of the resident blocks keeps the ring full instead of filling it once a band);
   y = channel block.  Dynamic shared memory: DW3S_R * ((p.g - 1) * DW3_ST + 3) * p.ldcol elements. */
#ifndef DW3S_R
#define DW3S_R 4   /* ring slots (input rows); a power of 2 */
#endif
#define DW3S_LPT 3   /* 16-byte chunks per thread per input row at most (columns * chunks <= 3 * threads) */
struct gpuml__dw3s4 { gpuml__ct v[4]; };
static __device__ __forceinline__ void gpuml__dw3s_cp(gpuml__ct *dst, const gpuml__ct *src, int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"((gpuml__u32)__cvta_generic_to_shared(dst)), "l"(src), "r"(bytes) : "memory");
#else
    uint4 v;
    v.x = v.y = v.z = v.w = 0u;
    if (bytes) v = __ldg((const uint4 *)src);
    *(uint4 *)dst = v;
#endif
}
static __device__ __forceinline__ void gpuml__dw3s_commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
static __device__ __forceinline__ void gpuml__dw3s_wait()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#endif
}
/* 4 elements (8 or 16 bytes, aligned) of shared or global memory, as f32 */
static __device__ __forceinline__ void gpuml__dw3s_ld4(const gpuml__ct *ptr, float *out)
{
    gpuml__dw3s4 t;
    if (sizeof(gpuml__dw3s4) == 16) {
        union { uint4 u; gpuml__dw3s4 d; } cv;
        cv.u = *(const uint4 *)ptr;
        t = cv.d;
    } else {
        union { uint2 u; gpuml__dw3s4 d; } cv;
        cv.u = *(const uint2 *)ptr;
        t = cv.d;
    }
#pragma unroll
    for (int v = 0; v < 4; v++) out[v] = gpuml__cvl(t.v[v]);
}
/* issue the copies of input row h into a ring slot: this thread's chunks (soff < 0: none) */
static __device__ __forceinline__ void gpuml__dw3s_row(const gpuml__conv_params &p, gpuml__ct *slot, const gpuml__ct *xn, gpuml__ix h,
                                                       const int (&goff)[DW3S_LPT], const int (&soff)[DW3S_LPT])
{
    const bool hok = h >= 0 && h < (gpuml__ix)p.h;
    const gpuml__ct *xr = xn + (hok ? h : 0) * (gpuml__ix)p.xh;
#pragma unroll
    for (int l = 0; l < DW3S_LPT; l++)
        if (soff[l] >= 0) {
            const bool ok = hok && goff[l] >= 0;
            gpuml__dw3s_cp(slot + soff[l], ok ? xr + goff[l] : xn, ok ? 16 : 0);
        }
}
/* the epilogue of one output row of the thread: bias, activation, residual, a 4-channel store */
static __device__ __forceinline__ void gpuml__dw3s_out(const gpuml__conv_params &p, gpuml__ix n, gpuml__ix pp, gpuml__ix q, gpuml__ix c,
                                                       const float (&acc)[4], const float (&bias)[4])
{
    float f[4];
#if CONV_RES
    gpuml__dw3s_ld4((const gpuml__ct *)p.res + n * (gpuml__ix)p.rn + pp * (gpuml__ix)p.rp + q * (gpuml__ix)p.rq + c, f);
#else
#pragma unroll
    for (int v = 0; v < 4; v++) f[v] = 0.0f;
#endif
    union { gpuml__dw3s4 d; uint4 u16; uint2 u8; } o;
#pragma unroll
    for (int v = 0; v < 4; v++) o.d.v[v] = gpuml__cvs(gpuml__conv_act(acc[v] + bias[v]) + f[v]);
    gpuml__ct *yp = (gpuml__ct *)p.y + n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + c;
    /* in PTX: the uint4 assignment became four 4-byte stores in the f32 builds (PTX of 7525dec) */
    if (sizeof(gpuml__dw3s4) == 16)
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(yp), "r"(o.u16.x), "r"(o.u16.y), "r"(o.u16.z), "r"(o.u16.w) : "memory");
    else
        asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(yp), "r"(o.u8.x), "r"(o.u8.y) : "memory");
}
#ifndef DW3S_QT
#define DW3S_QT 1   /* NHWC: output columns a thread (1 or 2; the host makes p.g a multiple) */
#endif
#ifndef DW3S_MINB   /* resident 256-thread blocks per SM the registers must allow: 3 (80 registers)
                      where that compiled without spills (sm_90; sm_80 spilled), else 2 */
#if CONV_RES || CONV_EPI >= 2 || !CONV_I32 || __CUDA_ARCH__ < 900 || DW3S_QT > 1
#define DW3S_MINB 2
#else
#define DW3S_MINB 3
#endif
#endif
/* the copy side's unit: this thread's chunk offsets in its rows of x (-1: padding; the host checks
   that a row's offsets fit in 31 bits), its image and first input row */
static __device__ __forceinline__ void gpuml__dw3s_unit(const gpuml__conv_params &p, gpuml__ix u, gpuml__ix nb, gpuml__ix nqb, gpuml__ix cb0,
                                                        const gpuml__ct *&xn, gpuml__ix &h0, int (&goff)[DW3S_LPT])
{
    const int cb = (int)p.ldcol, tq = (int)p.g, tp = (int)p.n0, epc = 16 / (int)sizeof(gpuml__ct), cpc = cb / epc;
    const gpuml__ix band = u % nb, qb = (u / nb) % nqb, n = u / nb / nqb;
    const gpuml__ix w0 = qb * tq * DW3_ST - p.pw;
    xn = (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn;
    h0 = band * tp * DW3_ST - p.ph;
#pragma unroll
    for (int l = 0; l < DW3S_LPT; l++) {
        const int e = (int)threadIdx.x + l * (int)blockDim.x, j = e / cpc, k = e - j * cpc;
        const gpuml__ix w = w0 + j, ch = cb0 + (gpuml__ix)k * epc;
        goff[l] = w >= 0 && w < (gpuml__ix)p.w && ch < (gpuml__ix)p.c ? (int)(w * (gpuml__ix)p.xw + ch) : -1;
    }
}
extern "C" __global__ void __launch_bounds__(256, DW3S_MINB) gpuml_conv_dw3s(gpuml__conv_params p)
{
    extern __shared__ __align__(16) unsigned char gpuml__dw3s_smem[];
    gpuml__ct *ring = (gpuml__ct *)gpuml__dw3s_smem;
    const int cb = (int)p.ldcol, ncv = cb / 4, tq = (int)p.g, tp = (int)p.n0;
    const int nci = (tq - 1) * DW3_ST + 3, slot = nci * cb;     /* input columns, elements of a slot */
    const int epc = 16 / (int)sizeof(gpuml__ct), cpc = cb / epc, nchunk = nci * cpc;   /* 16-byte chunks */
    const int tid = (int)threadIdx.x, nthr = (int)blockDim.x;
    const gpuml__ix nb = ((gpuml__ix)p.p + tp - 1) / tp, nqb = ((gpuml__ix)p.q + tq - 1) / tq;
    const gpuml__ix nunit = nb * nqb * (gpuml__ix)p.n, cb0 = (gpuml__ix)blockIdx.y * cb;
    const int nr = (tp - 1) * DW3_ST + 3;   /* input rows of a band */
    /* the block's units are blockIdx.x, + gridDim.x, ...: their input rows are one stream through
       the ring (the host checks that the count fits in 31 bits) */
    const int nrow = (int)((nunit - (gpuml__ix)blockIdx.x + gridDim.x - 1) / gridDim.x) * nr;
    /* this thread's chunks' offsets in a slot (-1: none) */
    int soff[DW3S_LPT];
#pragma unroll
    for (int l = 0; l < DW3S_LPT; l++) {
        const int e = tid + l * nthr, j = e / cpc, k = e - j * cpc;
        soff[l] = e < nchunk ? j * cb + k * epc : -1;
    }
    /* the copy side: the unit and row of the next row to copy */
    int goff[DW3S_LPT];
    const gpuml__ct *xn;
    gpuml__ix h0, cu = (gpuml__ix)blockIdx.x;
    int crow = 0;
    gpuml__dw3s_unit(p, cu, nb, nqb, cb0, xn, h0, goff);
    /* issue the copies of stream row j (none past the end) and commit their group */
    auto copy = [&](int j) {
        if (j < nrow) {
            if (crow == nr) { crow = 0; cu += gridDim.x; gpuml__dw3s_unit(p, cu, nb, nqb, cb0, xn, h0, goff); }
            gpuml__dw3s_row(p, ring + (j % DW3S_R) * slot, xn, h0 + crow, goff, soff);
            crow++;
        }
        gpuml__dw3s_commit();
    };
#pragma unroll
    for (int j = 0; j < DW3S_R - 1; j++) copy(j);
    /* the thread's channels, its weights and bias (while the first rows arrive) */
    const int cv = tid % ncv, qq = tid / ncv * DW3S_QT;   /* the thread's first column in the block */
    const gpuml__ix c = cb0 + (gpuml__ix)cv * 4;
    const bool cl = c < (gpuml__ix)p.k && qq < tq;
    const gpuml__ct *__restrict__ wt = (const gpuml__ct *)p.wt;
    float wv[9][4], bias[4];
#pragma unroll
    for (int v = 0; v < 4; v++) {
#pragma unroll
        for (int rs = 0; rs < 9; rs++)
            wv[rs][v] = cl ? gpuml__cvl(__ldg(wt + (c + v) * (gpuml__ix)p.wk + (gpuml__ix)(rs / 3) * (gpuml__ix)p.wr + (gpuml__ix)(rs % 3) * (gpuml__ix)p.ws)) : 0.0f;
#if CONV_BIAS
        bias[v] = cl ? p.bias[c + v] : 0.0f;
#else
        bias[v] = 0.0f;
#endif
    }
    const int rd = qq * DW3_ST * cb + cv * 4;   /* the thread's first input element in a slot */
    /* the compute side: its unit (image, first output row, column) and row in it */
    gpuml__ix n = 0, p0 = 0, q = 0, ou = (gpuml__ix)blockIdx.x;
    bool live = false;
    int i = 0;
    float a0[DW3S_QT][4], a1[DW3S_QT][4], a2[DW3S_QT][4];
#pragma unroll
    for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
        for (int v = 0; v < 4; v++) a0[t][v] = a1[t][v] = a2[t][v] = 0.0f;
    for (int g = 0; g < nrow; g++) {
        gpuml__dw3s_wait<DW3S_R - 2>();   /* row g has landed (this thread's copies) */
        __syncthreads();                  /* ... everyone's; and row g - 1's slot is free */
        copy(g + DW3S_R - 1);
        if (i == 0) {   /* a new unit */
            const gpuml__ix band = ou % nb, qb = (ou / nb) % nqb;
            n = ou / nb / nqb; p0 = band * tp; q = qb * tq + qq;
            live = cl && q < (gpuml__ix)p.q;
#pragma unroll
            for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
                for (int v = 0; v < 4; v++) a0[t][v] = a1[t][v] = 0.0f;
        }
        if (live) {
            const gpuml__ct *sr = ring + (g % DW3S_R) * slot + rd;
            float xi[(DW3S_QT - 1) * DW3_ST + 3][4];
#pragma unroll
            for (int s = 0; s < (DW3S_QT - 1) * DW3_ST + 3; s++) gpuml__dw3s_ld4(sr + s * cb, xi[s]);
#if DW3_ST == 1
            /* input row i: filter row 0 of output row i, 1 of row i - 1, 2 of row i - 2 */
#pragma unroll
            for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
                for (int v = 0; v < 4; v++) {
                    a2[t][v] = fmaf(xi[t + 2][v], wv[2][v], fmaf(xi[t + 1][v], wv[1][v], xi[t][v] * wv[0][v]));
                    a1[t][v] = fmaf(xi[t + 2][v], wv[5][v], fmaf(xi[t + 1][v], wv[4][v], fmaf(xi[t][v], wv[3][v], a1[t][v])));
                    a0[t][v] = fmaf(xi[t + 2][v], wv[8][v], fmaf(xi[t + 1][v], wv[7][v], fmaf(xi[t][v], wv[6][v], a0[t][v])));
                }
            if (i >= 2 && p0 + i - 2 < (gpuml__ix)p.p)
#pragma unroll
                for (int t = 0; t < DW3S_QT; t++)
                    if (t == 0 || q + t < (gpuml__ix)p.q) gpuml__dw3s_out(p, n, p0 + i - 2, q + t, c, a0[t], bias);
#pragma unroll
            for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
                for (int v = 0; v < 4; v++) { a0[t][v] = a1[t][v]; a1[t][v] = a2[t][v]; }
#else
            /* input row i: filter row i % 2 of output row i / 2, and (even i > 0) row 2 of i / 2 - 1 */
            if (i & 1) {
#pragma unroll
                for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
                    for (int v = 0; v < 4; v++)
                        a0[t][v] = fmaf(xi[2 * t + 2][v], wv[5][v], fmaf(xi[2 * t + 1][v], wv[4][v], fmaf(xi[2 * t][v], wv[3][v], a0[t][v])));
            } else {
                if (i > 0) {
#pragma unroll
                    for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
                        for (int v = 0; v < 4; v++)
                            a0[t][v] = fmaf(xi[2 * t + 2][v], wv[8][v], fmaf(xi[2 * t + 1][v], wv[7][v], fmaf(xi[2 * t][v], wv[6][v], a0[t][v])));
                    if (p0 + i / 2 - 1 < (gpuml__ix)p.p)
#pragma unroll
                        for (int t = 0; t < DW3S_QT; t++)
                            if (t == 0 || q + t < (gpuml__ix)p.q) gpuml__dw3s_out(p, n, p0 + i / 2 - 1, q + t, c, a0[t], bias);
                }
#pragma unroll
                for (int t = 0; t < DW3S_QT; t++)
#pragma unroll
                    for (int v = 0; v < 4; v++)
                        a0[t][v] = fmaf(xi[2 * t + 2][v], wv[2][v], fmaf(xi[2 * t + 1][v], wv[1][v], xi[2 * t][v] * wv[0][v]));
            }
#endif
        }
        if (++i == nr) { i = 0; ou += gridDim.x; }
    }
}

/* the same for NCHW-style tensors (x rows contiguous: unit w strides, x 16-byte aligned): a
   block owns a band of p.n0 output rows x every column of p.ldcol channel planes of one image;
   a ring slot holds one input row of each plane, copied as the 16-byte chunks that cover it
   (the row's first element sits at its offset in its chunk, (element offset) % (16 / size),
   and the copy stops at the row's end); a thread sums DW3S_QV consecutive output columns of
   one plane down the band (scalar reads of (DW3S_QV - 1) * stride + 3 elements of each input
   row, the padding columns masked).
   Grid: x = (n, band), the band fastest; y = channel block.  Dynamic shared memory:
   DW3S_R * p.ldcol * (ceil(W * size / 16) + 1) * 16 bytes. */
#define DW3S_QV 2
#define DW3S_NJ ((DW3S_QV - 1) * DW3_ST + 3)
/* issue the copies of input row h of the block's planes into a ring slot */
static __device__ __forceinline__ void gpuml__dw3sc_row(const gpuml__conv_params &p, gpuml__ct *slot, gpuml__ix xb, gpuml__ix h, int sw,
                                                        const int (&cpl)[DW3S_LPT], const int (&ck)[DW3S_LPT])
{
    const gpuml__ct *x = (const gpuml__ct *)p.x;
    const int epc = 16 / (int)sizeof(gpuml__ct);
    const bool hok = h >= 0 && h < (gpuml__ix)p.h;
#pragma unroll
    for (int l = 0; l < DW3S_LPT; l++)
        if (cpl[l] >= 0) {
            const gpuml__ix a = xb + (gpuml__ix)cpl[l] * (gpuml__ix)p.xc + (hok ? h : 0) * (gpuml__ix)p.xh;   /* the row's first element */
            const gpuml__ix e0 = a - (a & (epc - 1)) + (gpuml__ix)ck[l] * epc;
            const gpuml__ix left = a + (gpuml__ix)p.w - e0;   /* elements of the row from e0 on */
            const int bytes = !hok || left <= 0 ? 0 : left >= epc ? 16 : (int)left * (int)sizeof(gpuml__ct);
            gpuml__dw3s_cp(slot + cpl[l] * sw + ck[l] * epc, bytes ? x + e0 : x, bytes);
        }
}
extern "C" __global__ void __launch_bounds__(256, DW3S_MINB) gpuml_conv_dw3sc(gpuml__conv_params p)
{
    extern __shared__ __align__(16) unsigned char gpuml__dw3s_smem[];
    gpuml__ct *ring = (gpuml__ct *)gpuml__dw3s_smem;
    const int cp = (int)p.ldcol, tp = (int)p.n0, epc = 16 / (int)sizeof(gpuml__ct);
    const int ckr = ((int)p.w + epc - 1) / epc + 1, sw = ckr * epc, slot = cp * sw;   /* chunks, elements of a plane row */
    const int nqv = ((int)p.q + DW3S_QV - 1) / DW3S_QV, tid = (int)threadIdx.x, nthr = (int)blockDim.x;
    const gpuml__ix nb = ((gpuml__ix)p.p + tp - 1) / tp;
    const gpuml__ix band = (gpuml__ix)blockIdx.x % nb, n = (gpuml__ix)blockIdx.x / nb, cb0 = (gpuml__ix)blockIdx.y * cp;
    const gpuml__ix p0 = band * tp, h0 = p0 * DW3_ST - p.ph;
    const gpuml__ix xb = n * (gpuml__ix)p.xn + cb0 * (gpuml__ix)p.xc;   /* the block's first plane */
    const int nr = (tp - 1) * DW3_ST + 3;
    /* this thread's chunks of every row: plane (-1: none) and chunk index */
    int cpl[DW3S_LPT], ck[DW3S_LPT];
#pragma unroll
    for (int l = 0; l < DW3S_LPT; l++) {
        const int e = tid + l * nthr, pl = e / ckr;
        ck[l] = e - pl * ckr;
        cpl[l] = e < cp * ckr && cb0 + pl < (gpuml__ix)p.c ? pl : -1;
    }
#pragma unroll
    for (int j = 0; j < DW3S_R - 1; j++) {
        if (j < nr) gpuml__dw3sc_row(p, ring + j * slot, xb, h0 + j, sw, cpl, ck);
        gpuml__dw3s_commit();
    }
    /* the thread's plane and columns, weights, bias; which input columns are padding */
    const int pl = tid / nqv, g = tid - pl * nqv;
    const gpuml__ix c = cb0 + pl, q0 = (gpuml__ix)g * DW3S_QV, w0 = q0 * DW3_ST - p.pw;
    const bool live = pl < cp && c < (gpuml__ix)p.k;
    const gpuml__ct *__restrict__ wt = (const gpuml__ct *)p.wt;
    float wv[9], bias;
#pragma unroll
    for (int rs = 0; rs < 9; rs++)
        wv[rs] = live ? gpuml__cvl(__ldg(wt + c * (gpuml__ix)p.wk + (gpuml__ix)(rs / 3) * (gpuml__ix)p.wr + (gpuml__ix)(rs % 3) * (gpuml__ix)p.ws)) : 0.0f;
#if CONV_BIAS
    bias = live ? p.bias[c] : 0.0f;
#else
    bias = 0.0f;
#endif
    int wo[DW3S_NJ];   /* input column offsets in a slot row, clamped; -1 where padding */
    bool wok[DW3S_NJ];
#pragma unroll
    for (int j = 0; j < DW3S_NJ; j++) {
        const gpuml__ix w = w0 + j;
        wok[j] = w >= 0 && w < (gpuml__ix)p.w;
        wo[j] = pl * sw + (wok[j] ? (int)w : 0);
    }
    const gpuml__ix xpl = n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc;   /* the plane's first element (chunk offsets) */
    float a0[DW3S_QV], a1[DW3S_QV], a2[DW3S_QV];
#pragma unroll
    for (int b = 0; b < DW3S_QV; b++) a0[b] = a1[b] = a2[b] = 0.0f;
    for (int i = 0; i < nr; i++) {
        gpuml__dw3s_wait<DW3S_R - 2>();
        __syncthreads();
        {
            const int j = i + DW3S_R - 1;
            if (j < nr) gpuml__dw3sc_row(p, ring + (j % DW3S_R) * slot, xb, h0 + j, sw, cpl, ck);
            gpuml__dw3s_commit();
        }
        if (!live) continue;
        const gpuml__ix h = h0 + i;
        const int shift = (int)((xpl + (h >= 0 && h < (gpuml__ix)p.h ? h : 0) * (gpuml__ix)p.xh) & (epc - 1));
        const gpuml__ct *sr = ring + (i % DW3S_R) * slot + shift;
        float xi[DW3S_NJ];
#pragma unroll
        for (int j = 0; j < DW3S_NJ; j++) {
            const float v = gpuml__cvl(sr[wo[j]]);
            xi[j] = wok[j] ? v : 0.0f;
        }
        float o[3][DW3S_QV];   /* this row's filter rows 0, 1, 2 applied */
#pragma unroll
        for (int r = 0; r < 3; r++)
#pragma unroll
            for (int b = 0; b < DW3S_QV; b++)
                o[r][b] = fmaf(xi[b * DW3_ST + 2], wv[r * 3 + 2], fmaf(xi[b * DW3_ST + 1], wv[r * 3 + 1], xi[b * DW3_ST] * wv[r * 3]));
#if DW3_ST == 1
        gpuml__ix pp = p0 + i - 2;
#pragma unroll
        for (int b = 0; b < DW3S_QV; b++) { a2[b] = o[0][b]; a1[b] += o[1][b]; a0[b] += o[2][b]; }
        const bool done = i >= 2;
#else
        gpuml__ix pp = p0 + i / 2 - 1;
        const bool done = i > 0 && !(i & 1);
        if (i & 1) {
#pragma unroll
            for (int b = 0; b < DW3S_QV; b++) a0[b] += o[1][b];
        } else {
#pragma unroll
            for (int b = 0; b < DW3S_QV; b++) { a0[b] += o[2][b]; a1[b] = o[0][b]; }
        }
#endif
        if (done && pp < (gpuml__ix)p.p) {
#pragma unroll
            for (int b = 0; b < DW3S_QV; b++) {
                const gpuml__ix q = q0 + b;
                if (q >= (gpuml__ix)p.q) break;
                float f = gpuml__conv_act(a0[b] + bias);
#if CONV_RES
                f += gpuml__cvl(((const gpuml__ct *)p.res)[n * (gpuml__ix)p.rn + c * (gpuml__ix)p.rk + pp * (gpuml__ix)p.rp + q * (gpuml__ix)p.rq]);
#endif
                ((gpuml__ct *)p.y)[n * (gpuml__ix)p.yn + c * (gpuml__ix)p.yk + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq] = gpuml__cvs(f);
            }
        }
#if DW3_ST == 1
#pragma unroll
        for (int b = 0; b < DW3S_QV; b++) { a0[b] = a1[b]; a1[b] = a2[b]; }
#else
        if (!(i & 1)) {
#pragma unroll
            for (int b = 0; b < DW3S_QV; b++) a0[b] = a1[b];
        }
#endif
    }
}

/* depthwise 3x3, stride DW3_ST = 1 or 2 on both axes, top and left padding 1 (so output (pp, q)
   reads input rows DW3_ST * pp - 1 .. + 1 and columns likewise; rows and columns outside the input
   read as zero), over planes whose rows are whole chunks of DW3F_B = 16, 8 or 4 bytes (NCHW-style:
   unit column strides; Q, W = DW3_ST * Q and the row, plane and image strides of x, y (and the
   residual) in whole chunks, the tensors aligned to a chunk).  A thread owns one chunk of V =
   DW3F_B / size output columns (q0 .. q0 + V - 1) in DW3F_R consecutive output rows of one plane:
   it loads the (DW3F_R - 1) * DW3_ST + 3 input rows' DW3_ST chunks each (columns DW3_ST * q0 ..)
   at once (rows outside the plane zero), takes each row's left neighbour column (and at stride 1
   the right one) from the lanes beside it (a shuffle: consecutive threads own consecutive chunks
   of a row; lanes 0 and 31 load theirs), keeps 3 rows of accumulators (each input row converted
   when used) and stores one output chunk a row.  No shared memory and no barrier: the rows above
   and below a thread's come from L1 / L2 (a 256-thread block covers a few whole rows).  Why: the
   NCHW kernels above sum 2 columns a thread with 2-byte loads and stores, a barrier or a register
   walk per row: issue-bound at ~0.45-0.6 of the copy roof in 16-bit (bench/NOTES_conv.md).
   Items: (n, c, band of DW3F_R output rows, chunk), the chunk fastest; 1-D grid of 256-thread
   blocks over p.total items (no grid-stride loop: every lane of a warp reaches the shuffles). */
#ifndef DW3F_R   /* output rows a thread (the default: what every conv module compiles for the other
                     kernels' option sets -- at stride 2 more rows spill with 16-byte chunks) */
#define DW3F_R (DW3_ST == 2 ? 2 : 4)
#endif
#ifndef DW3F_B
#define DW3F_B 16   /* bytes a chunk: 16, 8 or 4 (at least one element) */
#endif
#if DW3F_B == 16
typedef uint4 gpuml__dw3f_t;
#elif DW3F_B == 8
typedef uint2 gpuml__dw3f_t;
#else
typedef unsigned int gpuml__dw3f_t;
#endif
#define DW3F_NI ((DW3F_R - 1) * DW3_ST + 3)   /* input rows a thread */
/* a chunk's store: one 16-, 8- or 4-byte st.global */
static __device__ __forceinline__ void gpuml__dw3f_st(void *ptr, const gpuml__dw3f_t &v)
{
#if DW3F_B == 16
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(ptr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
#elif DW3F_B == 8
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(ptr), "r"(v.x), "r"(v.y) : "memory");
#else
    asm volatile("st.global.u32 [%0], %1;" :: "l"(ptr), "r"(v) : "memory");
#endif
}
extern "C" __global__ void __launch_bounds__(256, 2) gpuml_conv_dw3f(gpuml__conv_params p)
{
    const int V = DW3F_B / (int)sizeof(gpuml__ct), S = DW3_ST;
    /* the item's indices in unsigned arithmetic (32-bit where CONV_I32: each division about half
       the instructions of a signed one; the set-up was ~45% of a 2-row thread's instructions) */
#if CONV_I32
    typedef unsigned int uix;
#else
    typedef unsigned long long uix;
#endif
    const uix cw = (uix)p.q / (uix)V;   /* output chunks a row */
    const uix g = (uix)blockIdx.x * 256u + threadIdx.x;
    const bool live = g < (uix)p.total;
    const uix nbd = ((uix)p.p + DW3F_R - 1) / DW3F_R;
    /* a thread past the end takes item 0's indices: every load below stays in bounds, and only
       the stores check live */
    const uix gl = live ? g : 0, gq = gl / cw, pl = gq / nbd;
    const int o = (int)(gl - gq * cw);
    const uix bd = gq - pl * nbd;
    const uix nu = pl / (uix)p.c;
    const gpuml__ix n = (gpuml__ix)nu, c = (gpuml__ix)(pl - nu * (uix)p.c);
    const int lane = (int)(threadIdx.x & 31);
    const gpuml__ix p0 = (gpuml__ix)bd * DW3F_R, h0 = p0 * S - 1;   /* the first output row, input row */
    const gpuml__ix xh = (gpuml__ix)p.xh, hh = (gpuml__ix)p.h;
    /* the thread's first input column, S * q0, in row h0 */
    const gpuml__ct *xp = (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc + (gpuml__ix)o * V * S + h0 * xh;
    /* the rows' chunks, raw, all loads issued before any use */
    union chunk { gpuml__dw3f_t u; gpuml__ct e[DW3F_B / sizeof(gpuml__ct)]; };
    chunk raw[DW3F_NI][DW3_ST];
#pragma unroll
    for (int i = 0; i < DW3F_NI; i++) {
        const bool in = (uix)(h0 + i) < (uix)hh;   /* 0 <= h0 + i < H */
#pragma unroll
        for (int u = 0; u < S; u++) {
            raw[i][u] = chunk{};
            if (in) raw[i][u].u = __ldg((const gpuml__dw3f_t *)(xp + i * xh + u * V));
        }
    }
    /* the neighbour columns of lanes 0 and 31 (where the row goes on past the thread's columns; at
       stride 2 nothing is read right of them) */
    const bool needl = o > 0, needr = S == 1 && (uix)o < cw - 1;
    const bool edge_ld = (lane == 0 && needl) || (lane == 31 && needr);
    const int eo = lane == 0 ? -1 : V;
    float edge[DW3F_NI];
#pragma unroll
    for (int i = 0; i < DW3F_NI; i++) {
        edge[i] = 0.0f;
        if (edge_ld && (uix)(h0 + i) < (uix)hh) edge[i] = gpuml__cvl(xp[i * xh + eo]);
    }
    /* weights and bias of the plane's channel */
    const gpuml__ct *__restrict__ wc = (const gpuml__ct *)p.wt + c * (gpuml__ix)p.wk;
    const gpuml__ix wr = (gpuml__ix)p.wr, ws = (gpuml__ix)p.ws;
    float wv[9], bias = 0.0f;
#pragma unroll
    for (int rs = 0; rs < 9; rs++) wv[rs] = gpuml__cvl(__ldg(wc + (rs / 3) * wr + (rs % 3) * ws));
#if CONV_BIAS
    bias = p.bias[c];
#endif
    /* the chunk's place in output row p0 (and in the residual's) */
    gpuml__ct *const yb = (gpuml__ct *)p.y + n * (gpuml__ix)p.yn + c * (gpuml__ix)p.yk + p0 * (gpuml__ix)p.yp + (gpuml__ix)o * V;
#if CONV_RES
    const gpuml__ct *const rb = (const gpuml__ct *)p.res + n * (gpuml__ix)p.rn + c * (gpuml__ix)p.rk + p0 * (gpuml__ix)p.rp + (gpuml__ix)o * V;
#endif
    /* input row i, as S * V + 2 floats (the left neighbour, the thread's columns, at stride 1 the
       right neighbour; zero in the padding columns), feeds output row k through filter row
       i - S * k (0..2); output row k is complete after input row S * k + 2 */
    float acc[3][DW3F_B / sizeof(gpuml__ct)];
#pragma unroll
    for (int i = 0; i < DW3F_NI; i++) {
        float xr[DW3_ST * (DW3F_B / sizeof(gpuml__ct)) + 2];
#pragma unroll
        for (int u = 0; u < S; u++)
#pragma unroll
            for (int j = 0; j < V; j++) xr[u * V + j + 1] = gpuml__cvl(raw[i][u].e[j]);
        const float l = __shfl_up_sync(0xffffffffu, xr[S * V], 1);
        xr[0] = !needl ? 0.0f : lane == 0 ? edge[i] : l;
        if (S == 1) {
            const float r = __shfl_down_sync(0xffffffffu, xr[1], 1);
            xr[S * V + 1] = !needr ? 0.0f : lane == 31 ? edge[i] : r;
        } else {
            xr[S * V + 1] = 0.0f;   /* (never read) */
        }
#pragma unroll
        for (int k = 0; k < DW3F_R; k++) {
            const int fr = i - S * k;   /* the filter row input row i is for output row k */
            if (fr < 0 || fr > 2) continue;
#pragma unroll
            for (int j = 0; j < V; j++) {
                float a = fr == 0 ? 0.0f : acc[k % 3][j];
#pragma unroll
                for (int s = 0; s < 3; s++) a = fmaf(xr[S * j + s], wv[fr * 3 + s], a);
                acc[k % 3][j] = a;
            }
        }
        if (i < 2 || (i - 2) % S) continue;
        /* output row k = (i - 2) / S is complete: bias, activation, residual, one chunk store */
        const int k = (i - 2) / S;
        const gpuml__ix pp = p0 + k;
        if (!live || pp >= (gpuml__ix)p.p) continue;   /* (not break: the loop stays unrolled) */
        chunk out;
#if CONV_RES
        chunk rv;
        rv.u = __ldg((const gpuml__dw3f_t *)(rb + k * (gpuml__ix)p.rp));
#endif
#pragma unroll
        for (int j = 0; j < V; j++) {
            float f = gpuml__conv_act(acc[k % 3][j] + bias);
#if CONV_RES
            f += gpuml__cvl(rv.e[j]);
#endif
            out.e[j] = gpuml__cvs(f);
        }
        gpuml__dw3f_st(yb + k * (gpuml__ix)p.yp, out.u);
    }
}

/* calls f(r, s, pp, q) for each filter tap (r, s) whose window at output (pp, q) reads input (h, w),
   r then s ascending (the backward data sums and col2im below) */
template <typename F>
static __device__ __forceinline__ void gpuml__conv_reach(const gpuml__conv_params &p, gpuml__ix h, gpuml__ix w, F f)
{
    for (int r = 0; r < (int)p.r; r++) {
        const gpuml__ix ht = h + p.ph - (gpuml__ix)r * p.dh;
        if (ht < 0 || ht % p.sh) continue;
        const gpuml__ix pp = ht / p.sh;
        if (pp >= (gpuml__ix)p.p) continue;
        for (int s = 0; s < (int)p.s; s++) {
            const gpuml__ix wt = w + p.pw - (gpuml__ix)s * p.dw;
            if (wt < 0 || wt % p.sw) continue;
            const gpuml__ix q = wt / p.sw;
            if (q >= (gpuml__ix)p.q) continue;
            f(r, s, pp, q);
        }
    }
}
/* backward data, one dx element per thread (x is dx here, y is dy):
   dx[n,h,w,c] = sum over k of c's group and the (r,s) that reach (h,w) of dy[n,p,q,k] w[k,r,s,c'] */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_bwd_data(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, h, w, c;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.h, (gpuml__ix)p.w, (gpuml__ix)p.c, n, h, w, c);
        const gpuml__ix g = c / (gpuml__ix)p.cg, cl = c - g * (gpuml__ix)p.cg;
        float acc = 0.0f;
        gpuml__conv_reach(p, h, w, [&](int r, int s, gpuml__ix pp, gpuml__ix q) {
            gpuml__ix yo = n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq;
            gpuml__ix wo = (gpuml__ix)r * (gpuml__ix)p.wr + (gpuml__ix)s * (gpuml__ix)p.ws + cl * (gpuml__ix)p.wc;
            for (gpuml__ix k = g * (gpuml__ix)p.kg; k < (g + 1) * (gpuml__ix)p.kg; k++)
                acc = fmaf(gpuml__ldc(p.y, yo + k * (gpuml__ix)p.yk), gpuml__ldc(p.wt, wo + k * (gpuml__ix)p.wk), acc);
        });
        ((gpuml__ct *)p.x)[n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + c * (gpuml__ix)p.xc] = gpuml__cvs(acc);
    }
}

/* backward filter, one 256-thread block per dw element (w is dw here, y is dy):
   dw[k,r,s,c] = sum over (n,p,q) of x[n,h,w,g*cg+c] dy[n,p,q,k] */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_bwd_filter(gpuml__conv_params p)
{
    __shared__ float part[8];
    for (gpuml__ix e = blockIdx.x; e < (gpuml__ix)p.total; e += gridDim.x) {
        gpuml__ix t = e;
        const gpuml__ix c = t % (gpuml__ix)p.cg; t /= (gpuml__ix)p.cg;
        const gpuml__ix s = t % (gpuml__ix)p.s; t /= (gpuml__ix)p.s;
        const gpuml__ix r = t % (gpuml__ix)p.r;
        const gpuml__ix k = t / (gpuml__ix)p.r;
        const gpuml__ix cx = (k / (gpuml__ix)p.kg) * (gpuml__ix)p.cg + c;
        const gpuml__ix m_total = (gpuml__ix)p.n * (gpuml__ix)p.p * (gpuml__ix)p.q;
        float acc = 0.0f;
        for (gpuml__ix m = threadIdx.x; m < m_total; m += blockDim.x) {
            const gpuml__ix q = m % (gpuml__ix)p.q, pq = m / (gpuml__ix)p.q;
            const gpuml__ix pp = pq % (gpuml__ix)p.p, n = pq / (gpuml__ix)p.p;
            const gpuml__ix h = pp * p.sh - p.ph + r * p.dh, w = q * p.sw - p.pw + s * p.dw;
            if (h < 0 || h >= (gpuml__ix)p.h || w < 0 || w >= (gpuml__ix)p.w) continue;
            acc = fmaf(gpuml__ldc(p.x, n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + cx * (gpuml__ix)p.xc),
                       gpuml__ldc(p.y, n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + k * (gpuml__ix)p.yk), acc);
        }
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            float sum = 0.0f;
            for (int j = 0; j < (int)(blockDim.x >> 5); j++) sum += part[j];
            ((gpuml__ct *)p.wt)[k * (gpuml__ix)p.wk + r * (gpuml__ix)p.wr + s * (gpuml__ix)p.ws + c * (gpuml__ix)p.wc] = gpuml__cvs(sum);
        }
        __syncthreads();
    }
}

/* dy with (stride - 1) zeros between its pixels, for strided backward data as a stride-1 forward
   conv: up[n][i][j][k] = dy[n][i / sh][j / sw][k] where sh | i, sw | j, i / sh < P and j / sw < Q,
   else 0, over i < p.h, j < p.w; written contiguous to p.col in the layout's order (p.order:
   0 NHWC, 1 NCHW).  Also the scatter of a strided 1x1 backward data: dx from the GEMM's rows. */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dyup(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, a, b, k;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.h, (gpuml__ix)p.w, (gpuml__ix)p.k, n, a, b, k);
        gpuml__ct v = gpuml__C::st(0.0f);
        if (a % p.sh == 0 && b % p.sw == 0 && a / p.sh < (gpuml__ix)p.p && b / p.sw < (gpuml__ix)p.q)
            v = ((const gpuml__ct *)p.y)[n * (gpuml__ix)p.yn + (a / p.sh) * (gpuml__ix)p.yp + (b / p.sw) * (gpuml__ix)p.yq + k * (gpuml__ix)p.yk];
        ((gpuml__ct *)p.col)[i] = v;
    }
}

/* gpuml_conv_dyup in 16-byte channel vectors (NHWC, p.order 0): items (n, i, j, channel vector);
   the host checks unit channel strides, k and the source strides in whole vectors, 16-byte aligned
   source and p.col */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dyup_v(gpuml__conv_params p)
{
    const int VE = 16 / (int)sizeof(gpuml__ct);
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, kv = (gpuml__ix)p.k / VE;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix c8 = i % kv, t = i / kv, b = t % (gpuml__ix)p.w, t2 = t / (gpuml__ix)p.w;
        const gpuml__ix a = t2 % (gpuml__ix)p.h, n = t2 / (gpuml__ix)p.h;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (a % p.sh == 0 && b % p.sw == 0 && a / p.sh < (gpuml__ix)p.p && b / p.sw < (gpuml__ix)p.q)
            v = *(const uint4 *)((const gpuml__ct *)p.y + n * (gpuml__ix)p.yn + (a / p.sh) * (gpuml__ix)p.yp + (b / p.sw) * (gpuml__ix)p.yq + c8 * VE);
        ((uint4 *)p.col)[i] = v;
    }
}

/* the weights of backward data run as a forward conv (stride 1): dx = conv(dy, wf) with
   wf[g*cg + c][r][s][k] = w[g*kg + k][R-1-r][S-1-s][c] (flipped, in and out channels swapped;
   out channels C, kg a group), written contiguous to p.col: order 0 as KRSC ([C][R][S][kg]),
   order 1 as KCRS ([C][kg][R][S]) */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_wflip(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix k, r, s, oc, t;
        if (p.order == 0) { k = i % (gpuml__ix)p.kg; t = i / (gpuml__ix)p.kg; s = t % (gpuml__ix)p.s; t /= (gpuml__ix)p.s; r = t % (gpuml__ix)p.r; oc = t / (gpuml__ix)p.r; }
        else { s = i % (gpuml__ix)p.s; t = i / (gpuml__ix)p.s; r = t % (gpuml__ix)p.r; t /= (gpuml__ix)p.r; k = t % (gpuml__ix)p.kg; oc = t / (gpuml__ix)p.kg; }
        const gpuml__ix g = oc / (gpuml__ix)p.cg, c = oc - g * (gpuml__ix)p.cg;
        ((gpuml__ct *)p.col)[i] = ((const gpuml__ct *)p.wt)[(g * (gpuml__ix)p.kg + k) * (gpuml__ix)p.wk + ((gpuml__ix)p.r - 1 - r) * (gpuml__ix)p.wr +
                                                         ((gpuml__ix)p.s - 1 - s) * (gpuml__ix)p.ws + c * (gpuml__ix)p.wc];
    }
}

/* gpuml_conv_wflip's order 0 (KRSC wf) in 32 (c) x 32 (k) tiles through shared memory, so that w
   is read along c (its unit stride in KRSC) and wf written along k (an element a thread, k
   fastest, read w R*S*C apart: 21.7 us for 512 x 512 x 3 x 3 on an H100): grid (ceil(kg / 32),
   ceil(cg / 32), groups * R * S), block (32, 8) */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_wflip_t(gpuml__conv_params p)
{
    __shared__ gpuml__ct tile[32][33];
    const int R = (int)p.r, S = (int)p.s, z = (int)blockIdx.z, tx = threadIdx.x, ty = threadIdx.y;
    const int g = z / (R * S), r = z / S % R, s = z % S;
    const gpuml__ix KG = (gpuml__ix)p.kg, CG = (gpuml__ix)p.cg, k0 = (gpuml__ix)blockIdx.x * 32, c0 = (gpuml__ix)blockIdx.y * 32;
    const gpuml__ix woff = (gpuml__ix)g * KG * (gpuml__ix)p.wk + (gpuml__ix)(R - 1 - r) * (gpuml__ix)p.wr + (gpuml__ix)(S - 1 - s) * (gpuml__ix)p.ws;
    for (int i = ty; i < 32; i += 8) {
        const gpuml__ix k = k0 + i, c = c0 + tx;
        if (k < KG && c < CG) tile[i][tx] = ((const gpuml__ct *)p.wt)[woff + k * (gpuml__ix)p.wk + c * (gpuml__ix)p.wc];
    }
    __syncthreads();
    for (int i = ty; i < 32; i += 8) {
        const gpuml__ix c = c0 + i, k = k0 + tx;
        if (c < CG && k < KG)
            ((gpuml__ct *)p.col)[(((gpuml__ix)g * CG + c) * R + r) * (gpuml__ix)S * KG + (gpuml__ix)s * KG + k] = tile[tx][i];
    }
}

/* strided backward data as one stride-1 conv over dy with sh*sw*C output channels, one block of C
   per output phase (a, b) = (h % sh, w % sw) (gpuml__cv_bwd_data_sub):
   gpuml_conv_wphase writes its weights, phase (a, b)'s taps r = r0 + sh*j (r0 = (a + pt) % sh,
   j < R' = ceil((R - r0) / sh)) flipped and placed in the common p.ldcol x p.mrows window at row
   offset PT - pt'(a) (pt'(a) = R' - 1 - (a + pt - r0) / sh, PT = p.n0; columns likewise with
   p.g), zeros elsewhere: wc[ph*C + c][u][v][k] (KRSC; ph = a*sw + b); p.r, p.s, p.ph, p.pw: the
   conv's R, S and top / left padding; p.kg: K, p.c: C.  A 32 (c) x 32 (k) tile a block through
   shared memory, so that both w (along c) and wc (along k) move in whole lines (an element a
   thread, k fastest, read w 2 KB apart: 47 us for 512 x 512 x 3 x 3 on an H100): grid (ceil(K /
   32), ceil(C / 32), phases * window), block (32, 8). */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_wphase(gpuml__conv_params p)
{
    __shared__ gpuml__ct tile[32][33];
    const int RW = (int)p.ldcol, SW = (int)p.mrows, z = (int)blockIdx.z, tx = threadIdx.x, ty = threadIdx.y;
    const int ph = z / (RW * SW), u = z / SW % RW, v = z % SW, a = ph / p.sw, b = ph % p.sw;
    const gpuml__ix K = (gpuml__ix)p.kg, C = (gpuml__ix)p.c, k0 = (gpuml__ix)blockIdx.x * 32, c0 = (gpuml__ix)blockIdx.y * 32;
    const int r0 = (a + p.ph) % p.sh, s0 = (b + p.pw) % p.sw;
    const int rr = r0 < (int)p.r ? ((int)p.r - r0 + p.sh - 1) / p.sh : 0, ss = s0 < (int)p.s ? ((int)p.s - s0 + p.sw - 1) / p.sw : 0;
    const int jr = u - (int)p.n0 + rr - 1 - (a + p.ph - r0) / p.sh, js = v - (int)p.g + ss - 1 - (b + p.pw - s0) / p.sw;
    const bool tap = jr >= 0 && jr < rr && js >= 0 && js < ss;   /* uniform over the block */
    if (tap) {
        const gpuml__ix woff = (gpuml__ix)(r0 + p.sh * (rr - 1 - jr)) * (gpuml__ix)p.wr + (gpuml__ix)(s0 + p.sw * (ss - 1 - js)) * (gpuml__ix)p.ws;
        for (int i = ty; i < 32; i += 8) {
            const gpuml__ix k = k0 + i, c = c0 + tx;
            gpuml__ct val = gpuml__C::st(0.0f);
            if (k < K && c < C) val = ((const gpuml__ct *)p.wt)[k * (gpuml__ix)p.wk + woff + c * (gpuml__ix)p.wc];
            tile[i][tx] = val;
        }
        __syncthreads();
    }
    for (int i = ty; i < 32; i += 8) {
        const gpuml__ix c = c0 + i, k = k0 + tx;
        if (c < C && k < K)
            ((gpuml__ct *)p.col)[(((gpuml__ix)ph * C + c) * RW + u) * (gpuml__ix)SW * K + (gpuml__ix)v * K + k] = tap ? tile[tx][i] : gpuml__C::st(0.0f);
    }
}

/* the depth-to-space pass after gpuml_conv_wphase's conv: dx[n][h][w][c] = y[n][h / sh][w / sw]
   [((h % sh) * sw + w % sw) * C + c], y contiguous at p.col, [N][Hy][Wy][sh*sw*C] (p.order 0) or
   [N][sh*sw*C][Hy][Wy] (1), Hy x Wy = p.p x p.q.  Items in dx's layout order (p.total = N*H*W*C /
   VE); dx through p.x and its strides.  VE > 1 (gpuml_conv_dxsub_v): 16-byte channel vectors
   (NHWC, unit channel strides, C and the pixel strides in whole vectors, 16-byte aligned: checked
   by the host). */
template <typename VT, int VE>
static __device__ __forceinline__ void gpuml__conv_dxsub(const gpuml__conv_params &p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, ch = (gpuml__ix)p.c / VE, nph = (gpuml__ix)p.sh * p.sw;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, h, w, c;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.h, (gpuml__ix)p.w, ch, n, h, w, c);
        const gpuml__ix i2 = h / p.sh, j2 = w / p.sw, ph = (h - i2 * p.sh) * p.sw + (w - j2 * p.sw);
        const gpuml__ix off = p.order == 0 ? ((n * (gpuml__ix)p.p + i2) * (gpuml__ix)p.q + j2) * nph * (gpuml__ix)p.c + ph * (gpuml__ix)p.c + c * VE
                                           : ((n * nph + ph) * (gpuml__ix)p.c + c) * (gpuml__ix)p.p * (gpuml__ix)p.q + i2 * (gpuml__ix)p.q + j2;
        *(VT *)((gpuml__ct *)p.x + n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + c * VE * (gpuml__ix)p.xc) =
            *(const VT *)((const gpuml__ct *)p.col + off);
    }
}
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dxsub(gpuml__conv_params p) { gpuml__conv_dxsub<gpuml__ct, 1>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dxsub_v(gpuml__conv_params p)
{
    gpuml__conv_dxsub<uint4, 16 / (int)sizeof(gpuml__ct)>(p);
}

/* gpuml_conv_dxsub for NCHW 4-byte elements with sw == 2 and W == 2 * Wy (items: VE phase columns
   of one dx row, (n, c, h, column block) with the column blocks fastest): VE words from each of the
   row's two phase planes, 2*VE interleaved words to dx (unit column stride, rows 8*VE-byte aligned:
   checked by the host); five divisions an item where the scalar kernel does about six an element */
template <int VE>
static __device__ __forceinline__ void gpuml__conv_dxsub_c2(const gpuml__conv_params &p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, jn = (gpuml__ix)p.q / VE, pq = (gpuml__ix)p.p * (gpuml__ix)p.q;
    const gpuml__ix nph = (gpuml__ix)p.sh * 2;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix jc = i % jn, row = i / jn, h = row % (gpuml__ix)p.h, t = row / (gpuml__ix)p.h;
        const gpuml__ix c = t % (gpuml__ix)p.c, n = t / (gpuml__ix)p.c, i2 = h / p.sh, a = h - i2 * p.sh;
        const gpuml__u32 *src = (const gpuml__u32 *)p.col + ((n * nph + 2 * a) * (gpuml__ix)p.c + c) * pq + i2 * (gpuml__ix)p.q + jc * VE;
        gpuml__u32 *dst = (gpuml__u32 *)p.x + n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc + h * (gpuml__ix)p.xh + jc * 2 * VE;
        const gpuml__ix plane = (gpuml__ix)p.c * pq;
        if (VE == 4) {
            /* 16-byte stores in PTX: written as uint4 assignments, nvcc emitted them (the first of
               _c4's two, _c2's one) as four 4-byte stores in the f32 build (PTX of 7525dec) */
            const uint4 u = *(const uint4 *)src, v = *(const uint4 *)(src + plane);
            asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(dst), "r"(u.x), "r"(v.x), "r"(u.y), "r"(v.y) : "memory");
            asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(dst + 4), "r"(u.z), "r"(v.z), "r"(u.w), "r"(v.w) : "memory");
        } else {
            const uint2 u = *(const uint2 *)src, v = *(const uint2 *)(src + plane);
            asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(dst), "r"(u.x), "r"(v.x), "r"(u.y), "r"(v.y) : "memory");
        }
    }
}
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dxsub_c4(gpuml__conv_params p) { gpuml__conv_dxsub_c2<4>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_dxsub_c2(gpuml__conv_params p) { gpuml__conv_dxsub_c2<2>(p); }

/* dy of group p.g transposed for backward filter on the tensor cores: the GEMM rows
   m = (n - n0, p, q) < p.mrows split into slices of p.ldcol rows; dyt[b][k][l] = dy[m = b *
   ldcol + l][g * kg + k] (zeros past mrows), written to p.col.  A 32 x 32 tile a block through
   shared memory (reads along k, writes along l): grid (ceil(ldcol / 32), ceil(kg / 32),
   slices), block (32, 8). */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_bwf_dyt(gpuml__conv_params p)
{
    __shared__ gpuml__ct tile[32][33];
    __shared__ gpuml__ix rowoff[32];   /* dy offset of each of the tile's rows, -1 past the data */
    const gpuml__ix L = (gpuml__ix)p.ldcol, kg = (gpuml__ix)p.kg, b = blockIdx.z;
    const gpuml__ix l0 = (gpuml__ix)blockIdx.x * 32, k0 = (gpuml__ix)blockIdx.y * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    if (ty == 0) {   /* the row's (n, p, q) once a block, not once an element (the divisions dominated) */
        const gpuml__ix l = l0 + tx, m = b * L + l;
        gpuml__ix off = -1;
        if (l < L && m < (gpuml__ix)p.mrows) {
            const gpuml__ix q = m % (gpuml__ix)p.q, pq = m / (gpuml__ix)p.q;
            const gpuml__ix pp = pq % (gpuml__ix)p.p, n = (gpuml__ix)p.n0 + pq / (gpuml__ix)p.p;
            off = n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + (gpuml__ix)p.g * kg * (gpuml__ix)p.yk;
        }
        rowoff[tx] = off;
    }
    __syncthreads();
    for (int i = ty; i < 32; i += 8) {
        const gpuml__ix k = k0 + tx, off = rowoff[i];
        gpuml__ct v = gpuml__C::st(0.0f);
        if (off >= 0 && k < kg) v = ((const gpuml__ct *)p.y)[off + k * (gpuml__ix)p.yk];
        tile[i][tx] = v;
    }
    __syncthreads();
    for (int i = ty; i < 32; i += 8) {
        const gpuml__ix k = k0 + i, l = l0 + tx;
        if (k < kg && l < L) ((gpuml__ct *)p.col)[(b * kg + k) * L + l] = tile[tx][i];
    }
}

/* im2col in 16-byte vectors, row-major col[m][j] (row stride p.ldcol) for the rows m of images
   [n0, ...) < p.mrows: a warp per row, its lanes over the row's (r, s, 16-byte channel vector)
   pieces.  Needs unit channel strides, cg and the x strides in whole vectors, 16-byte aligned x
   and col (the host checks).  Launch: 256 threads a block, warps grid-stride over rows. */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_im2col_v(gpuml__conv_params p)
{
    typedef uint4 V;
    const int VE = 16 / (int)sizeof(gpuml__ct);
    const int lane = threadIdx.x & 31;
    const int cv = (int)p.cg / VE, nv = (int)p.r * (int)p.s * cv;
    const gpuml__ix wid = ((gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x) >> 5, nw = ((gpuml__ix)gridDim.x * blockDim.x) >> 5;
    for (gpuml__ix m = wid; m < (gpuml__ix)p.mrows; m += nw) {
        const gpuml__ix q = m % (gpuml__ix)p.q, pq = m / (gpuml__ix)p.q;
        const gpuml__ix pp = pq % (gpuml__ix)p.p, n = (gpuml__ix)p.n0 + pq / (gpuml__ix)p.p;
        const gpuml__ix h0 = pp * p.sh - p.ph, w0 = q * p.sw - p.pw;
        const gpuml__ct *xb = (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn + (gpuml__ix)p.g * (gpuml__ix)p.cg;
        V *dst = (V *)((gpuml__ct *)p.col + m * (gpuml__ix)p.ldcol);
        for (int v = lane; v < nv; v += 32) {
            const int c8 = v % cv, rs = v / cv, s = rs % (int)p.s, r = rs / (int)p.s;
            const gpuml__ix h = h0 + (gpuml__ix)r * p.dh, w = w0 + (gpuml__ix)s * p.dw;
            V val = make_uint4(0u, 0u, 0u, 0u);
            if (h >= 0 && h < (gpuml__ix)p.h && w >= 0 && w < (gpuml__ix)p.w)
                val = *(const V *)(xb + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + (gpuml__ix)c8 * VE);
            dst[v] = val;
        }
    }
}

/* the slices of backward filter's split GEMM summed (f32, a fixed order: deterministic):
   out[e] (+)= sum over b < p.ldcol of part[b * p.total + e], part = p.col, out = p.res (f32),
   added into out when p.order.  Block (32, 8): 32 outputs, 8 threads over the slices of each;
   grid ceil(total / 32). */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_bwf_sum(gpuml__conv_params p)
{
    __shared__ float red[8][33];
    const gpuml__ix e = (gpuml__ix)blockIdx.x * 32 + threadIdx.x, n = (gpuml__ix)p.total;
    const float *part = (const float *)p.col;
    float acc = 0.0f;
    if (e < n)
        for (gpuml__ix b = threadIdx.y; b < (gpuml__ix)p.ldcol; b += 8) acc += part[b * n + e];
    red[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && e < n) {
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; i++) s += red[i][threadIdx.x];
        float *out = (float *)p.res;
        out[e] = p.order ? out[e] + s : s;
    }
}

/* im2col of group p.g for images [n0, n0 + total / (P*Q*R*S*cg)): col[m][j], m = (n-n0, p, q),
   j = (r, s, c), zeros where the window reads padding; col is in x's dtype.  order 1 writes
   it transposed per image, col[n-n0][j][(p, q)] (the B operand of y[n] = w @ col[n], NCHW). */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_im2col(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    const gpuml__ix ncol = (gpuml__ix)p.r * (gpuml__ix)p.s * (gpuml__ix)p.cg;
    const gpuml__ix pqn = (gpuml__ix)p.p * (gpuml__ix)p.q;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix j, m, co;
        if (p.order == 0) { j = i % ncol; m = i / ncol; co = m * (gpuml__ix)p.ldcol + j; }
        else { const gpuml__ix pq_ = i % pqn, t = i / pqn; j = t % ncol; m = (t / ncol) * pqn + pq_; co = i; }
        const gpuml__ix c = j % (gpuml__ix)p.cg, rs = j / (gpuml__ix)p.cg;
        const gpuml__ix s = rs % (gpuml__ix)p.s, r = rs / (gpuml__ix)p.s;
        const gpuml__ix q = m % (gpuml__ix)p.q, pq = m / (gpuml__ix)p.q;
        const gpuml__ix pp = pq % (gpuml__ix)p.p, n = (gpuml__ix)p.n0 + pq / (gpuml__ix)p.p;
        const gpuml__ix h = pp * p.sh - p.ph + r * p.dh, w = q * p.sw - p.pw + s * p.dw;
        gpuml__ct v = gpuml__C::st(0.0f);
        if (h >= 0 && h < (gpuml__ix)p.h && w >= 0 && w < (gpuml__ix)p.w)
            v = ((const gpuml__ct *)p.x)[n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw +
                                         ((gpuml__ix)p.g * (gpuml__ix)p.cg + c) * (gpuml__ix)p.xc];
        ((gpuml__ct *)p.col)[co] = v;
    }
}

/* col2im of group p.g as a gather (no atomics): dx[n,h,w,g*cg+c] = sum of the f32 col entries
   of the windows that read (h,w); items are (n-n0, h, w, c) with c fastest */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_col2im(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    const float *col = (const float *)p.col;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix nl, h, w, c;
        gpuml__conv_split(i, 0, (gpuml__ix)p.h, (gpuml__ix)p.w, (gpuml__ix)p.cg, nl, h, w, c);
        float acc = 0.0f;
        gpuml__conv_reach(p, h, w, [&](int r, int s, gpuml__ix pp, gpuml__ix q) {
            acc += col[((nl * (gpuml__ix)p.p + pp) * (gpuml__ix)p.q + q) * (gpuml__ix)p.ldcol +
                       ((gpuml__ix)r * (gpuml__ix)p.s + s) * (gpuml__ix)p.cg + c];
        });
        ((gpuml__ct *)p.x)[((gpuml__ix)p.n0 + nl) * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw +
                           ((gpuml__ix)p.g * (gpuml__ix)p.cg + c) * (gpuml__ix)p.xc] = gpuml__cvs(acc);
    }
}

/* the forward epilogue as its own pass, in place on y: y = residual + act(y + bias)
   (after a GEMM whose own epilogue cannot add a per-row bias) */
/* CONV_EPI_SRC=1: the sums come from p.col, f32, item i of the chunk of images starting at p.n0
   (order 1: [n][k][p][q] dense), not from y: a 16-bit y is rounded once, after the epilogue */
#ifndef CONV_EPI_SRC
#define CONV_EPI_SRC 0
#endif
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_epi(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, pp, q, k;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.p, (gpuml__ix)p.q, (gpuml__ix)p.k, n, pp, q, k);
#if CONV_EPI_SRC
        gpuml__conv_store(p, n + (gpuml__ix)p.n0, pp, q, k, ((const float *)p.col)[i]);
#else
        gpuml__conv_store(p, n, pp, q, k, gpuml__ldc(p.y, n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + k * (gpuml__ix)p.yk));
#endif
    }
}

/* pooling: the window of the output whose window starts at (h0, w0): r x s at stride (sh, sw),
   padding (ph, pw) top/left; max ignores padding; average divides by the in-image count, or with
   count_pad by the window clipped to the padded image [-ph, h + pad_bottom) (p.dh / p.dw carry the
   bottom/right pads).  ARG 1 (max): at = the plane index h * W + w of the element it returns (the
   first maximum in row-major window order, the last NaN where the window holds one, the first
   in-image element where all are -Inf) */
template <int ARG>
static __device__ __forceinline__ float gpuml__pool_win(const gpuml__conv_params &p, const gpuml__ct *xb, gpuml__ix h0, gpuml__ix w0, int &at)
{
    const gpuml__ix hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
    const gpuml__ix he = h0 + (gpuml__ix)p.r < (gpuml__ix)p.h ? h0 + (gpuml__ix)p.r : (gpuml__ix)p.h;
    const gpuml__ix we = w0 + (gpuml__ix)p.s < (gpuml__ix)p.w ? w0 + (gpuml__ix)p.s : (gpuml__ix)p.w;
#if POOL_MAX
    float acc = -__int_as_float(0x7f800000);
    at = (int)(hs * (gpuml__ix)p.w + ws);
    for (gpuml__ix h = hs; h < he; h++)
        for (gpuml__ix w = ws; w < we; w++) {
            const float v = gpuml__cvl(xb[h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw]);
            if (v > acc || v != v) {   /* NaN propagates */
                acc = v;
                if (ARG) at = (int)(h * (gpuml__ix)p.w + w);
            }
        }
    return acc;
#else
    float acc = 0.0f, cnt;
    at = 0;
    for (gpuml__ix h = hs; h < he; h++)
        for (gpuml__ix w = ws; w < we; w++) acc += gpuml__cvl(xb[h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw]);
    if (p.count_pad) {
        const gpuml__ix hb = (gpuml__ix)p.h + p.dh, wb = (gpuml__ix)p.w + p.dw;
        const gpuml__ix hh = (h0 + (gpuml__ix)p.r < hb ? h0 + (gpuml__ix)p.r : hb) - h0;
        const gpuml__ix ww = (w0 + (gpuml__ix)p.s < wb ? w0 + (gpuml__ix)p.s : wb) - w0;
        cnt = (float)(hh * ww);
    } else {
        cnt = (float)((he - hs) * (we - ws));
    }
    return acc / cnt;
#endif
}

/* pooling forward, one output per thread (ARG 0: y at p.y), or pooling backward's first pass
   (ARG 1, max only): each output's plane index (gpuml__pool_win) into p.col, an int32 array in the
   items' order (p.order: [n][p][q][c], or [n][c][p][q] for NCHW, so that both passes read and
   write it coalesced).  x read at p.x with the x strides; total = N * P * Q * C */
template <int ARG>
static __device__ __forceinline__ void gpuml__pool_fwd_s(const gpuml__conv_params &p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        gpuml__ix n, pp, q, c;
        gpuml__conv_split(i, p.order, (gpuml__ix)p.p, (gpuml__ix)p.q, (gpuml__ix)p.c, n, pp, q, c);
        int at;
        const float v = gpuml__pool_win<ARG>(p, (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc,
                                             pp * p.sh - p.ph, q * p.sw - p.pw, at);
        if (ARG) ((int *)p.col)[i] = at;
        else ((gpuml__ct *)p.y)[n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + c * (gpuml__ix)p.yk] = gpuml__cvs(v);
    }
}
extern "C" __global__ void __launch_bounds__(256) gpuml_pool(gpuml__conv_params p) { gpuml__pool_fwd_s<0>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_arg(gpuml__conv_params p) { gpuml__pool_fwd_s<1>(p); }

/* the windows (pp, q) in [p0, p1] x [q0, q1] that cover input pixel (h, w): p * sh - ph <= h <
   p * sh - ph + r, i.e. th - r < p * sh <= th with th = h + ph: the last by one division, the first
   by stepping down from it (no window when the stride leaves a gap: p0 > p1).  32-bit: the host
   keeps H + R and W + S below 2^31 */
static __device__ __forceinline__ void gpuml__pool_cover(const gpuml__conv_params &p, int h, int w, int &p0, int &q0, int &p1, int &q1)
{
    const int th = h + p.ph, tw = w + p.pw, pl = th / p.sh, ql = tw / p.sw;
    p0 = pl * p.sh > th - (int)p.r ? pl : pl + 1;
    q0 = ql * p.sw > tw - (int)p.s ? ql : ql + 1;
    while (p0 > 0 && (p0 - 1) * p.sh > th - (int)p.r) p0--;
    while (q0 > 0 && (q0 - 1) * p.sw > tw - (int)p.s) q0--;
    p1 = pl < (int)p.p - 1 ? pl : (int)p.p - 1;
    q1 = ql < (int)p.q - 1 ? ql : (int)p.q - 1;
}

/* pooling backward, average: the count of a window starting at x0 (len long) along one axis:
   clipped to the image [0, end), or with count_pad to the padded image (end then includes the
   bottom / right pad; the window never starts before -pad) */
static __device__ __forceinline__ gpuml__ix gpuml__pool_span(gpuml__ix x0, gpuml__ix len, gpuml__ix end, int count_pad)
{
    return (x0 + len < end ? x0 + len : end) - (count_pad || x0 > 0 ? x0 : 0);
}

/* average pooling backward: for each window [p0, p1] x [q0, q1] in (p, q) order, f(pp, q, its first
   input column, its height and width counted as gpuml__pool_win takes them: clipped to the image,
   or with count_pad to the padded image) */
template <typename F>
static __device__ __forceinline__ void gpuml__pool_avg_windows(const gpuml__conv_params &p, int p0, int q0, int p1, int q1, F f)
{
    const gpuml__ix hb = (gpuml__ix)p.h + (p.count_pad ? p.dh : 0), wb = (gpuml__ix)p.w + (p.count_pad ? p.dw : 0);
    for (int pp = p0; pp <= p1; pp++) {
        const gpuml__ix hh0 = (gpuml__ix)pp * p.sh - p.ph;
        const gpuml__ix ch = gpuml__pool_span(hh0, (gpuml__ix)p.r, hb, p.count_pad);
        for (int q = q0; q <= q1; q++) {
            const gpuml__ix ww0 = (gpuml__ix)q * p.sw - p.pw;
            f(pp, q, ww0, ch, gpuml__pool_span(ww0, (gpuml__ix)p.s, wb, p.count_pad));
        }
    }
}
/* ... f(its first input column, dy / its count) */
template <typename F>
static __device__ __forceinline__ void gpuml__pool_avg_each(const gpuml__conv_params &p, const gpuml__ct *dy, int p0, int q0, int p1, int q1, F f)
{
    gpuml__pool_avg_windows(p, p0, q0, p1, q1, [&](int pp, int q, gpuml__ix ww0, gpuml__ix ch, gpuml__ix cw) {
        f(ww0, gpuml__cvl(dy[pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq]) * __fdividef(1.0f, (float)ch * (float)cw));   /* within 2 ulp of the CPU's 1 / cnt; the count as a float product (the same value for sides below 2^24; as an int product, or with __frcp_rn, sm_80 spilled) */
    });
}
/* pooling backward at dx (n, h, w, c): the sum over the windows [p0, p1] x [q0, q1] that cover
   (h, w), in (p, q) order, of dy (p.y, the y strides): max where the first pass's index (p.col,
   [n][p][q][c] or with p.order [n][c][p][q]) is (h, w), average divided by the window's count as
   in gpuml__pool_win */
static __device__ __forceinline__ float gpuml__pool_bwd_at(const gpuml__conv_params &p, gpuml__ix n, gpuml__ix c, gpuml__ix h, gpuml__ix w,
                                                           int p0, int q0, int p1, int q1)
{
    const gpuml__ct *dy = (const gpuml__ct *)p.y + n * (gpuml__ix)p.yn + c * (gpuml__ix)p.yk;
    float acc = 0.0f;
#if POOL_MAX
    const int me = (int)(h * (gpuml__ix)p.w + w);
    const gpuml__ix aq = p.order ? 1 : (gpuml__ix)p.c, ap = aq * (gpuml__ix)p.q;
    const int *arg = (const int *)p.col + (p.order ? (n * (gpuml__ix)p.c + c) * (gpuml__ix)p.p * (gpuml__ix)p.q
                                                   : n * (gpuml__ix)p.p * (gpuml__ix)p.q * (gpuml__ix)p.c + c);
    for (int pp = p0; pp <= p1; pp++)
        for (int q = q0; q <= q1; q++) {
            const float g = gpuml__cvl(dy[pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq]);
            acc += arg[pp * ap + q * aq] == me ? g : 0.0f;
        }
#else
    (void)h; (void)w;
    gpuml__pool_avg_each(p, dy, p0, q0, p1, q1, [&](gpuml__ix, float g) { acc += g; });
#endif
    return acc;
}

/* pooling backward, gather: dx (p.x, the x strides) at each (n, h, w, c) from gpuml__pool_bwd_at.
   Every element written once (no atomics: deterministic); total = N * H * W * C, items in the
   layout's order (p.order) */
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_bwd(gpuml__conv_params p)
{
    /* the item index as mixed-radix digits (d0 fastest: c, w, h, n, or in NCHW order w, h, c, n),
       advanced by the grid stride's own digits with one carry each: no division in the loop */
    const gpuml__ix R0 = p.order ? (gpuml__ix)p.w : (gpuml__ix)p.c, R1 = p.order ? (gpuml__ix)p.h : (gpuml__ix)p.w;
    const gpuml__ix R2 = p.order ? (gpuml__ix)p.c : (gpuml__ix)p.h;
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, i0 = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x;
    gpuml__ix s0, s1, s2, s3, d0, d1, d2, d3;
    gpuml__conv_split(stride, 0, R2, R1, R0, s3, s2, s1, s0);
    gpuml__conv_split(i0, 0, R2, R1, R0, d3, d2, d1, d0);
    for (gpuml__ix i = i0; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix n = d3, h = p.order ? d1 : d2, w = p.order ? d0 : d1, c = p.order ? d2 : d0;
        d0 += s0; if (d0 >= R0) { d0 -= R0; d1++; }
        d1 += s1; if (d1 >= R1) { d1 -= R1; d2++; }
        d2 += s2; if (d2 >= R2) { d2 -= R2; d3++; }
        d3 += s3;
        int p0, q0, p1, q1;
        gpuml__pool_cover(p, (int)h, (int)w, p0, q0, p1, q1);
        ((gpuml__ct *)p.x)[n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + c * (gpuml__ix)p.xc] =
            gpuml__cvs(gpuml__pool_bwd_at(p, n, c, h, w, p0, q0, p1, q1));
    }
}

/* NCHW run forms: GPUML__PR consecutive elements of a row a thread (the pooled tensor's row
   contiguous, its length a multiple of GPUML__PR, its other strides multiples of GPUML__PR,
   aligned to GPUML__PR elements; the host checks), the index split and the row's window range
   paid once per run, one GPUML__PR-element store.  Each element's window walk and sums are the
   scalar kernels' (the same results).
   gpuml_pool_r / gpuml_pool_arg_r: items (n, c, p, run of q), y's (or p.col's, [n][c][p][q])
   runs; gpuml_pool_bwd_r: items (n, c, h, run of w), dx's runs. */
#define GPUML__PR 4
struct __align__(GPUML__PR * sizeof(gpuml__ct)) gpuml__prun { gpuml__ct v[GPUML__PR]; };
template <int ARG>
static __device__ __forceinline__ void gpuml__pool_fwd_r(const gpuml__conv_params &p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, nq = (gpuml__ix)p.q / GPUML__PR;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix q0 = i % nq * GPUML__PR, t = i / nq, pp = t % (gpuml__ix)p.p, t2 = t / (gpuml__ix)p.p;
        const gpuml__ix c = t2 % (gpuml__ix)p.c, n = t2 / (gpuml__ix)p.c;
        const gpuml__ct *xb = (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc;
        const gpuml__ix h0 = pp * p.sh - p.ph;
        float v[GPUML__PR];
        int at[GPUML__PR];
#pragma unroll
        for (int k = 0; k < GPUML__PR; k++) v[k] = gpuml__pool_win<ARG>(p, xb, h0, (q0 + k) * p.sw - p.pw, at[k]);
        if (ARG) {
            *(int4 *)((int *)p.col + i * GPUML__PR) = make_int4(at[0], at[1], at[2], at[3]);
        } else {
            gpuml__prun o;
            o.v[0] = gpuml__cvs(v[0]); o.v[1] = gpuml__cvs(v[1]); o.v[2] = gpuml__cvs(v[2]); o.v[3] = gpuml__cvs(v[3]);
            *(gpuml__prun *)((gpuml__ct *)p.y + n * (gpuml__ix)p.yn + c * (gpuml__ix)p.yk + pp * (gpuml__ix)p.yp + q0) = o;
        }
    }
}
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_r(gpuml__conv_params p) { gpuml__pool_fwd_r<0>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_arg_r(gpuml__conv_params p) { gpuml__pool_fwd_r<1>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_bwd_r(gpuml__conv_params p)
{
    /* window-major: each window (pp, q) that covers any element of the run is read once and added
       to the elements it covers (max: the one its index names; average: those inside it), so each
       element still sums its covering windows in (p, q) order, as gpuml__pool_bwd_at does (an
       element outside a window adds +0.0f, which leaves every sum as it is: a sum of +0.0f and
       anything is never -0.0f) */
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, nw = (gpuml__ix)p.w / GPUML__PR;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix w0 = i % nw * GPUML__PR, t = i / nw, h = t % (gpuml__ix)p.h, t2 = t / (gpuml__ix)p.h;
        const gpuml__ix c = t2 % (gpuml__ix)p.c, n = t2 / (gpuml__ix)p.c;
        int p0, q0, p1, q1;
        gpuml__pool_cover(p, (int)h, (int)w0, p0, q0, p1, q1);
        {   /* the last window that covers the run's last element */
            const int ql = ((int)w0 + GPUML__PR - 1 + p.pw) / p.sw;
            q1 = ql < (int)p.q - 1 ? ql : (int)p.q - 1;
        }
        const gpuml__ct *dy = (const gpuml__ct *)p.y + n * (gpuml__ix)p.yn + c * (gpuml__ix)p.yk;
        float acc[GPUML__PR];
#pragma unroll
        for (int k = 0; k < GPUML__PR; k++) acc[k] = 0.0f;
#if POOL_MAX
        const int base = (int)(h * (gpuml__ix)p.w + w0);
        const int *arg = (const int *)p.col + (n * (gpuml__ix)p.c + c) * (gpuml__ix)p.p * (gpuml__ix)p.q;   /* [n][c][p][q] */
        for (int pp = p0; pp <= p1; pp++)
            for (int q = q0; q <= q1; q++) {
                const int off = arg[pp * (gpuml__ix)p.q + q] - base;
                const float g = gpuml__cvl(dy[pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq]);
#pragma unroll
                for (int k = 0; k < GPUML__PR; k++) acc[k] += off == k ? g : 0.0f;
            }
#else
        gpuml__pool_avg_each(p, dy, p0, q0, p1, q1, [&](gpuml__ix ww0, float g) {
            const int rel = (int)(w0 - ww0);   /* the run's first element in the window's columns */
#pragma unroll
            for (int k = 0; k < GPUML__PR; k++) acc[k] += rel + k >= 0 && rel + k < (int)p.s ? g : 0.0f;
        });
#endif
        gpuml__prun o;
#pragma unroll
        for (int k = 0; k < GPUML__PR; k++) o.v[k] = gpuml__cvs(acc[k]);
        *(gpuml__prun *)((gpuml__ct *)p.x + n * (gpuml__ix)p.xn + c * (gpuml__ix)p.xc + h * (gpuml__ix)p.xh + w0) = o;
    }
}

/* The pooling kernels above with GPUML__PV consecutive channels a thread (16 bytes: 4 f32, 8
   f16 / bf16), for channel-fastest tensors (NHWC order, unit channel strides, C and every other
   stride multiples of GPUML__PV, 16-byte aligned; the host checks): the index arithmetic paid
   once per 16 bytes instead of per element, 16-byte loads and stores.  Items: the vectors, in
   (n, row, col, channel vector) order; the orders of the sums and comparisons are the scalar
   kernels' (the same results). */
#define GPUML__PV (16 / (int)sizeof(gpuml__ct))
struct gpuml__pv { gpuml__ct v[GPUML__PV]; };
static __device__ __forceinline__ void gpuml__pv_ld(const gpuml__ct *ptr, float *out)
{
    union { uint4 u; gpuml__pv d; } t;
    t.u = *(const uint4 *)ptr;
#pragma unroll
    for (int k = 0; k < GPUML__PV; k++) out[k] = gpuml__cvl(t.d.v[k]);
}
static __device__ __forceinline__ void gpuml__pv_st(gpuml__ct *ptr, const float *in)
{
    union { uint4 u; gpuml__pv d; } t;
#pragma unroll
    for (int k = 0; k < GPUML__PV; k++) t.d.v[k] = gpuml__cvs(in[k]);
    *(uint4 *)ptr = t.u;
}
/* forward (arg 0: y at p.y) or backward's first pass (arg 1: the chosen plane indices at p.col) */
template <int ARG>
static __device__ __forceinline__ void gpuml__pool_fwd_v(const gpuml__conv_params &p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, ncv = (gpuml__ix)p.c / GPUML__PV;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix c = i % ncv * GPUML__PV, t = i / ncv, q = t % (gpuml__ix)p.q, t2 = t / (gpuml__ix)p.q;
        const gpuml__ix pp = t2 % (gpuml__ix)p.p, n = t2 / (gpuml__ix)p.p;
        const gpuml__ix h0 = pp * p.sh - p.ph, w0 = q * p.sw - p.pw;
        const gpuml__ix hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
        const gpuml__ix he = h0 + (gpuml__ix)p.r < (gpuml__ix)p.h ? h0 + (gpuml__ix)p.r : (gpuml__ix)p.h;
        const gpuml__ix we = w0 + (gpuml__ix)p.s < (gpuml__ix)p.w ? w0 + (gpuml__ix)p.s : (gpuml__ix)p.w;
        const gpuml__ct *xb = (const gpuml__ct *)p.x + n * (gpuml__ix)p.xn + c;
        float acc[GPUML__PV], v[GPUML__PV];
        int at[GPUML__PV];
#pragma unroll
        for (int k = 0; k < GPUML__PV; k++) { acc[k] = POOL_MAX ? -__int_as_float(0x7f800000) : 0.0f; at[k] = (int)(hs * (gpuml__ix)p.w + ws); }
        for (gpuml__ix h = hs; h < he; h++)
            for (gpuml__ix w = ws; w < we; w++) {
                gpuml__pv_ld(xb + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw, v);
#pragma unroll
                for (int k = 0; k < GPUML__PV; k++) {
#if POOL_MAX
                    const bool up = v[k] > acc[k] || v[k] != v[k];   /* NaN propagates */
                    acc[k] = up ? v[k] : acc[k];
                    if (ARG) at[k] = up ? (int)(h * (gpuml__ix)p.w + w) : at[k];
#else
                    acc[k] += v[k];
#endif
                }
            }
        if (ARG) {
            int4 *dst = (int4 *)((int *)p.col + i * GPUML__PV);
#pragma unroll
            for (int k = 0; k < GPUML__PV; k += 4) dst[k / 4] = make_int4(at[k], at[k + 1], at[k + 2], at[k + 3]);
            continue;
        }
#if !POOL_MAX
        float cnt;
        if (p.count_pad) {
            const gpuml__ix hb = (gpuml__ix)p.h + p.dh, wb = (gpuml__ix)p.w + p.dw;
            cnt = (float)(((h0 + (gpuml__ix)p.r < hb ? h0 + (gpuml__ix)p.r : hb) - h0) * ((w0 + (gpuml__ix)p.s < wb ? w0 + (gpuml__ix)p.s : wb) - w0));
        } else {
            cnt = (float)((he - hs) * (we - ws));
        }
#pragma unroll
        for (int k = 0; k < GPUML__PV; k++) acc[k] = acc[k] / cnt;
#endif
        gpuml__pv_st((gpuml__ct *)p.y + n * (gpuml__ix)p.yn + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq + c, acc);
    }
}
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_v(gpuml__conv_params p) { gpuml__pool_fwd_v<0>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_arg_v(gpuml__conv_params p) { gpuml__pool_fwd_v<1>(p); }
extern "C" __global__ void __launch_bounds__(256) gpuml_pool_bwd_v(gpuml__conv_params p)
{
    const gpuml__ix stride = (gpuml__ix)gridDim.x * blockDim.x, ncv = (gpuml__ix)p.c / GPUML__PV;
    for (gpuml__ix i = (gpuml__ix)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__ix)p.total; i += stride) {
        const gpuml__ix c = i % ncv * GPUML__PV, t = i / ncv, w = t % (gpuml__ix)p.w, t2 = t / (gpuml__ix)p.w;
        const gpuml__ix h = t2 % (gpuml__ix)p.h, n = t2 / (gpuml__ix)p.h;
        int p0, q0, p1, q1;
        gpuml__pool_cover(p, (int)h, (int)w, p0, q0, p1, q1);
        const gpuml__ct *dy = (const gpuml__ct *)p.y + n * (gpuml__ix)p.yn + c;
        float acc[GPUML__PV], g[GPUML__PV];
#pragma unroll
        for (int k = 0; k < GPUML__PV; k++) acc[k] = 0.0f;
#if POOL_MAX
        const int me = (int)(h * (gpuml__ix)p.w + w);
        const int *arg = (const int *)p.col + n * (gpuml__ix)p.p * (gpuml__ix)p.q * (gpuml__ix)p.c + c;
        for (int pp = p0; pp <= p1; pp++)
            for (int q = q0; q <= q1; q++) {
                const int4 *a4 = (const int4 *)(arg + (pp * (gpuml__ix)p.q + q) * (gpuml__ix)p.c);
                gpuml__pv_ld(dy + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq, g);
#pragma unroll
                for (int k = 0; k < GPUML__PV; k += 4) {
                    const int4 a = a4[k / 4];
                    acc[k] += a.x == me ? g[k] : 0.0f; acc[k + 1] += a.y == me ? g[k + 1] : 0.0f;
                    acc[k + 2] += a.z == me ? g[k + 2] : 0.0f; acc[k + 3] += a.w == me ? g[k + 3] : 0.0f;
                }
            }
#else
        gpuml__pool_avg_windows(p, p0, q0, p1, q1, [&](int pp, int q, gpuml__ix, gpuml__ix ch, gpuml__ix cw) {
            const float rc = __frcp_rn((float)(ch * cw));
            gpuml__pv_ld(dy + pp * (gpuml__ix)p.yp + q * (gpuml__ix)p.yq, g);
#pragma unroll
            for (int k = 0; k < GPUML__PV; k++) acc[k] += g[k] * rc;
        });
#endif
        gpuml__pv_st((gpuml__ct *)p.x + n * (gpuml__ix)p.xn + h * (gpuml__ix)p.xh + w * (gpuml__ix)p.xw + c, acc);
    }
}

#if defined(CONV_1X1) && CONV_1X1 == 1 && CONV_DT == 0
/* f32 NCHW 1x1 stride-1 unpadded conv, groups 1, on CUDA cores: per image y[n] (K x PQ) =
   w (K x C) @ x[n] (C x PQ).  A 64 x 256 block tile (output channels x pixels), 16 channels of C
   a step; a thread owns 8 output channels x 8 pixels (two float4 of each, 32 channels / 128
   pixels apart), read from shared memory as 4 float4 a step of the 16 (64 FMA per 4 loads: the
   first version's 4 x 8 tile, 32 FMA per 3 loads, was bound by shared-memory wavefronts).  A warp
   is 4 x 8 threads, so its loads touch 4 (w) and 8 (x) distinct vectors.  x tiles come by 16-byte
   cp.async (sm_80+) into two buffers, the next step's while this one multiplies; w tiles (small,
   cached) through registers into two transposed buffers; one barrier a step.  Bias per output
   channel, activation and residual fused; y written as float4.
   Host preconditions: PQ % 4 == 0; x's pixels of one (n, c) contiguous (xw == 1, xh == Q) and y's
   and res's likewise (yq == 1, yp == Q; rq == 1, rp == Q); xn, xc, yn, yk, rn, rk multiples of 4;
   x, y, res 16-byte aligned.  Grid (ceil(PQ / 256), ceil(K / 64), N), block 256. */
extern "C" __global__ void __launch_bounds__(256, 2) gpuml_conv_1x1s(gpuml__conv_params p)
{
    __shared__ __align__(16) float As[2][16][64];    /* [c][k] */
    __shared__ __align__(16) float Bs[2][16][256];   /* [c][pixel] */
    const int tid = (int)threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = (int)blockIdx.y * 64, n0 = (int)blockIdx.x * 256;
    const int PQ = (int)(p.p * p.q), M = (int)p.k, C = (int)p.c, KT = (C + 15) / 16;
    const float *X = (const float *)p.x + (gpuml__i64)blockIdx.z * p.xn;
    const float *Wt = (const float *)p.wt;
    /* this thread's outputs: channels tm + {0..3, 32..35}, pixels tn + {0..3, 128..131} */
    const int tm = ((warp >> 2) * 4 + (lane >> 3)) * 4, tn = ((warp & 3) * 8 + (lane & 7)) * 4;
    /* loaders: w row am, channels aq * 4 + 0..3 (a warp: 8 rows, 64 bytes each; a row a lane, as
       before, cost 32 lines a load); x rows bk + 4h (h < 4), pixels bn..bn + 3 */
    const int am = tid >> 2, aq = tid & 3, bn = (tid & 63) * 4, bk = tid >> 6;
    const bool arow = m0 + am < M, bcol = n0 + bn < PQ;
    const float *wrow = Wt + (gpuml__i64)(arow ? m0 + am : 0) * p.wk;
    float ra[4];
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
#define GPUML__1X1_LDA(kt)                                                                               \
    do {                                                                                                 \
        _Pragma("unroll") for (int j = 0; j < 4; j++) {                                                   \
            const int c = (kt) * 16 + aq * 4 + j;                                                        \
            ra[j] = arow && c < C ? __ldg(wrow + (gpuml__i64)c * p.wc) : 0.0f;                           \
        }                                                                                                \
    } while (0)
#define GPUML__1X1_CPB(kt)                                                                               \
    do {                                                                                                 \
        _Pragma("unroll") for (int h = 0; h < 4; h++) {                                                   \
            const int c = (kt) * 16 + bk + 4 * h;                                                        \
            const bool ok = bcol && c < C;                                                               \
            gpuml__dw3s_cp(&Bs[(kt) & 1][bk + 4 * h][bn], ok ? X + (gpuml__i64)c * p.xc + n0 + bn : X, ok ? 16 : 0); \
        }                                                                                                \
        gpuml__dw3s_commit();                                                                            \
    } while (0)
    GPUML__1X1_LDA(0);
#pragma unroll
    for (int j = 0; j < 4; j++) As[0][aq * 4 + j][am] = ra[j];
    GPUML__1X1_CPB(0);
    for (int kt = 0; kt < KT; kt++) {
        gpuml__dw3s_wait<0>();   /* this thread's copies of step kt have landed */
        __syncthreads();         /* everyone's; step kt - 1's buffers are free */
        const bool more = kt + 1 < KT;
        if (more) { GPUML__1X1_LDA(kt + 1); GPUML__1X1_CPB(kt + 1); }
        const int sb = kt & 1;
#pragma unroll
        for (int kk = 0; kk < 16; kk++) {
            const float4 a0 = *(const float4 *)&As[sb][kk][tm], a1 = *(const float4 *)&As[sb][kk][tm + 32];
            const float4 b0 = *(const float4 *)&Bs[sb][kk][tn], b1 = *(const float4 *)&Bs[sb][kk][tn + 128];
            const float av[8] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };
            const float bv[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) {
#pragma unroll
            for (int j = 0; j < 4; j++) As[sb ^ 1][aq * 4 + j][am] = ra[j];
        }
    }
#undef GPUML__1X1_LDA
#undef GPUML__1X1_CPB
    float *Y = (float *)p.y + (gpuml__i64)blockIdx.z * p.yn;
#if CONV_RES
    const float *R = (const float *)p.res + (gpuml__i64)blockIdx.z * p.rn;
#endif
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int m = m0 + tm + (i & 3) + 32 * (i >> 2);
        if (m >= M) continue;
#if CONV_BIAS
        const float bias = p.bias[m];
#else
        const float bias = 0.0f;
#endif
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int pix = n0 + tn + 128 * h;
            if (pix >= PQ) continue;
            float4 v = make_float4(gpuml__conv_act(acc[i][4 * h] + bias), gpuml__conv_act(acc[i][4 * h + 1] + bias),
                                   gpuml__conv_act(acc[i][4 * h + 2] + bias), gpuml__conv_act(acc[i][4 * h + 3] + bias));
#if CONV_RES
            const float4 r = *(const float4 *)(R + (gpuml__i64)m * p.rk + pix);
            v.x += r.x; v.y += r.y; v.z += r.z; v.w += r.w;
#endif
            *(float4 *)(Y + (gpuml__i64)m * p.yk + pix) = v;
        }
    }
}
#endif

#if ((defined(CONV_1X1) && CONV_1X1 == 2) || (defined(CONV_BWF1X1) && CONV_BWF1X1)) && CONV_DT == 0
/* tf32 mma.sync pieces of the two 1x1 kernels below */
/* f32 -> tf32 operand bits, round to nearest, ties away.  (Measured, H100: adding half a tf32 ulp
   to finite values' bits instead runs at the same speed; passing the bits as they are, truncated by
   the mma, 0-11% faster -- not taken: truncation doubles the error bound.) */
static __device__ __forceinline__ gpuml__u32 gpuml__c1t_rna(float v)
{
    gpuml__u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}
static __device__ __forceinline__ void gpuml__c1t_mma(float (&d)[4], const gpuml__u32 (&a)[4], gpuml__u32 b0, gpuml__u32 b1)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)d; (void)a; (void)b0; (void)b1;
    __trap();   /* the host takes this kernel on sm_80+ only */
#endif
}
#endif
#if defined(CONV_1X1) && CONV_1X1 == 2 && CONV_DT == 0
/* The same conv (y[n] = w @ x[n] per image, f32 NCHW 1x1 stride 1 unpadded, groups 1) on the
   tensor cores for allow_tf32: mma.sync m16n8k8 tf32, operands rounded to tf32 (cvt.rna).  x is
   read in NCHW as it is, with no layout pass: the wgmma kernel needs both tf32 operands K-major,
   which NCHW x is not; mma.sync takes its fragments from registers, loaded here element by element
   from a [c][pixel] tile.  A block: 64 output channels x C1T_TN pixels (256 or 128), 16 channels a
   step, a ring of C1T_ST steps in dynamic shared memory filled by cp.async (x: 16-byte chunks of
   the pixel rows; w: [k][c] tiles, a thread 4 channels of one row, one 16-byte copy where w's
   channels are contiguous and aligned, else four 4-byte ones -- a row a lane, 32 rows a warp, cost
   ~5x), one barrier a step.  8 warps: 256 pixels as 2 (channels) x 4 (pixels) warps of 32 x 64
   (2 x 8 mma tiles); 128 pixels as 4 x 2 of 16 x 64 (1 x 8).  Rows padded (20 and C1T_TN + 8
   floats) so that a warp's fragment reads (w: rows g, columns t; x: rows t, 8 consecutive
   columns) hit 32 distinct banks.  Same host preconditions, grid (x: pixels / C1T_TN) and block
   as gpuml_conv_1x1s; dynamic shared memory C1T_ST * (64 * 20 + 16 * (C1T_TN + 8)) floats; sm_80+. */
#ifndef C1T_ST
#define C1T_ST 4
#endif
#ifndef C1T_TN
#define C1T_TN 256
#endif
/* 4 bytes global -> shared, asynchronously (zero-filled where bytes is 0) */
static __device__ __forceinline__ void gpuml__c1t_cp4(float *dst, const float *src, int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"((gpuml__u32)__cvta_generic_to_shared(dst)), "l"(src), "r"(bytes) : "memory");
#else
    *dst = bytes ? __ldg(src) : 0.0f;
#endif
}
extern "C" __global__ void __launch_bounds__(256, 2) gpuml_conv_1x1s(gpuml__conv_params p)
{
    constexpr int TN = C1T_TN, ST = C1T_ST;
    static_assert(TN == 256 || TN == 128, "pixel tile");
    static_assert(ST >= 2, "stages");
    constexpr int AP = 20, BP = TN + 8;               /* padded row lengths (floats) */
    constexpr int A_SZ = 64 * AP, B_SZ = 16 * BP;     /* floats a stage */
    constexpr int BR = 1024 / TN;                     /* x tile rows a loader pass (16-byte chunks) */
    constexpr int WI = TN == 256 ? 2 : 1, WJ = 8;     /* m16 / n8 tiles a warp */
    constexpr int NW = TN / (8 * WJ);                 /* warps along the pixels */
    extern __shared__ __align__(16) float gpuml__c1t_smem[];
    float *const As = gpuml__c1t_smem, *const Bs = gpuml__c1t_smem + ST * A_SZ;   /* [st][k][c], [st][c][pixel] */
    const int tid = (int)threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const int m0 = (int)blockIdx.y * 64, n0 = (int)blockIdx.x * TN;
    const int PQ = (int)(p.p * p.q), M = (int)p.k, C = (int)p.c, KT = (C + 15) / 16;
    const float *X = (const float *)p.x + (gpuml__i64)blockIdx.z * p.xn;
    const float *Wt = (const float *)p.wt;
    const int wm = (warp / NW) * (16 * WI), wn = (warp % NW) * (8 * WJ);   /* this warp's corner */
    /* loaders: w row am, channels aq * 4 + 0..3; x rows bk + BR h (h < 16 / BR), pixels bn..bn + 3 */
    const int am = tid >> 2, aq = tid & 3, bn = (tid % (TN / 4)) * 4, bk = tid / (TN / 4);
    const bool arow = m0 + am < M, bcol = n0 + bn < PQ;
    const float *wrow = Wt + (gpuml__i64)(arow ? m0 + am : 0) * p.wk;
    const bool wvec = p.wc == 1 && (p.wk & 3) == 0 && ((size_t)Wt & 15) == 0;   /* 16-byte w chunks */
    float acc[WI][WJ][4];
#pragma unroll
    for (int i = 0; i < WI; i++)
#pragma unroll
        for (int j = 0; j < WJ; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
    /* step kt's tiles into ring slot kt % ST (one commit group, empty past the last step) */
    auto load = [&](int kt) {
        if (kt < KT) {
            float *a = As + (kt % ST) * A_SZ + am * AP + aq * 4, *b = Bs + (kt % ST) * B_SZ;
            const int c0 = kt * 16 + aq * 4;
            if (wvec) {
                const int nb = arow && c0 < C ? 4 * min(4, C - c0) : 0;
                gpuml__dw3s_cp(a, nb ? wrow + c0 : Wt, nb);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    const bool ok = arow && c0 + j < C;
                    gpuml__c1t_cp4(a + j, ok ? wrow + (gpuml__i64)(c0 + j) * p.wc : Wt, ok ? 4 : 0);
                }
            }
#pragma unroll
            for (int h = 0; h < 16 / BR; h++) {
                const int c = kt * 16 + bk + BR * h;
                const bool ok = bcol && c < C;
                gpuml__dw3s_cp(b + (bk + BR * h) * BP + bn, ok ? X + (gpuml__i64)c * p.xc + n0 + bn : X, ok ? 16 : 0);
            }
        }
        gpuml__dw3s_commit();
    };
#pragma unroll
    for (int s = 0; s < ST - 1; s++) load(s);
    for (int kt = 0; kt < KT; kt++) {
        gpuml__dw3s_wait<ST - 2>();   /* this thread's copies of step kt have landed */
        __syncthreads();             /* everyone's; the slot of step kt - 1 is free */
        load(kt + ST - 1);
        const float *sa = As + (kt % ST) * A_SZ, *sb = Bs + (kt % ST) * B_SZ;
#pragma unroll
        for (int ks = 0; ks < 16; ks += 8) {
            const float *a0 = sa + (wm + g) * AP + ks + t4, *a1 = a0 + 4;   /* rows g (+ 8, + 16 i), columns t, t + 4 */
            const float *b0 = sb + (ks + t4) * BP + wn + g, *b1 = b0 + 4 * BP;
            gpuml__u32 af[WI][4];
#pragma unroll
            for (int i = 0; i < WI; i++) {
                af[i][0] = gpuml__c1t_rna(a0[16 * i * AP]); af[i][1] = gpuml__c1t_rna(a0[(16 * i + 8) * AP]);
                af[i][2] = gpuml__c1t_rna(a1[16 * i * AP]); af[i][3] = gpuml__c1t_rna(a1[(16 * i + 8) * AP]);
            }
#pragma unroll
            for (int j = 0; j < WJ; j++) {
                const gpuml__u32 x0 = gpuml__c1t_rna(b0[8 * j]), x1 = gpuml__c1t_rna(b1[8 * j]);
#pragma unroll
                for (int i = 0; i < WI; i++) gpuml__c1t_mma(acc[i][j], af[i], x0, x1);
            }
        }
    }
    float *Y = (float *)p.y + (gpuml__i64)blockIdx.z * p.yn;
#if CONV_RES
    const float *R = (const float *)p.res + (gpuml__i64)blockIdx.z * p.rn;
#endif
#pragma unroll
    for (int i = 0; i < WI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = m0 + wm + 16 * i + g + 8 * h;
            if (m >= M) continue;
#if CONV_BIAS
            const float bias = p.bias[m];
#else
            const float bias = 0.0f;
#endif
#pragma unroll
            for (int j = 0; j < WJ; j++) {
                const int pix = n0 + wn + 8 * j + 2 * t4;
                if (pix >= PQ) continue;
                float2 v = make_float2(gpuml__conv_act(acc[i][j][2 * h] + bias), gpuml__conv_act(acc[i][j][2 * h + 1] + bias));
#if CONV_RES
                const float2 r = *(const float2 *)(R + (gpuml__i64)m * p.rk + pix);
                v.x += r.x; v.y += r.y;
#endif
                *(float2 *)(Y + (gpuml__i64)m * p.yk + pix) = v;
            }
        }
}
#endif

#if defined(CONV_BWF1X1) && CONV_BWF1X1 && CONV_DT == 0
/* f32 backward filter of a 1x1 unpadded conv with groups 1 on the tensor cores, x and dy read as
   they are: dw[k][c] = the sum over the N * P * Q pixels of dy[pix][k] * x[pix][c], a GEMM with a
   long reduction over pixels.  BWF_NHWC 0: stride 1, x's and dy's pixels contiguous (NCHW), both
   operands pixel-major -- what mma.sync m16n8k8 (row.col) reads as it is, with no layout pass (the
   swapped-conv route transposes x and dy first); steps of 32 pixels of one image (N * ceil(PQ /
   32) steps).  BWF_NHWC 1: channels contiguous and pixels at one row stride each in x and dy (an
   NHWC stride-1 1x1 conv; the pixels merge into one dim), steps of 32 of the N * P * Q pixels;
   mma.sync takes its fragments from registers, so the [pixel][channel] tiles are read across.
   BWF_3X 0: operands rounded to tf32 (cvt.rna, allow_tf32); 1: 3xTF32 in registers (each operand
   v = hi + lo, both tf32, and the sum takes lo*hi + hi*lo + hi*hi: f32-level error, 3x the mma).
   A block: 64 k x 128 c outputs over a run of the steps (grid z: the runs), writing its partial
   sums to part[z][k][c] (summed by gpuml_conv_bwf1x1_sum below: deterministic); 8 warps of 32 x 32 (2 x
   4 mma tiles).  A ring of BWF_ST stages of dy (64 x 32) and x (128 x 32) tiles filled by 16-byte
   cp.async (zero past the pixels, K, C).  NCHW: [channel][pixel] rows padded to 36 floats; NHWC:
   [pixel][channel] rows padded to 72 (dy) and 136 (x) floats; both so that fragment reads hit 32
   distinct banks.  Host preconditions: NCHW: PQ % 4 == 0, the n and channel strides multiples of
   4; NHWC: K % 4 == 0, C % 4 == 0, the pixel strides multiples of 4; x and dy 16-byte aligned.
   Params: p.x, p.y (dy), p.col (part), p.total (steps), p.n0 (steps a run), NHWC: p.ldcol (the
   pixel count N * P * Q); dynamic shared memory BWF_ST * (64 + 128) * 36 (NCHW) or BWF_ST * 32 *
   (72 + 136) (NHWC) floats. */
#ifndef BWF_ST
#define BWF_ST 4
#endif
#ifndef BWF_NHWC
#define BWF_NHWC 0
#endif
#ifndef BWF_3X
#define BWF_3X 0
#endif
static __device__ __forceinline__ void gpuml__bwf_ldm4(gpuml__u32 (&r)[4], const float *src)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"((gpuml__u32)__cvta_generic_to_shared(src)));
}
/* a fragment element: tf32 (hi) and, 3xTF32, the tf32 rest (lo) */
static __device__ __forceinline__ void gpuml__bwf_split(float v, gpuml__u32 &hi, gpuml__u32 &lo)
{
    hi = gpuml__c1t_rna(v);
#if BWF_3X
    lo = gpuml__c1t_rna(v - __uint_as_float(hi));
#else
    lo = 0u;
#endif
}
extern "C" __global__ void __launch_bounds__(256, 2) gpuml_conv_bwf1x1(gpuml__conv_params p)
{
#if BWF_NHWC
    constexpr int RA = 72, RB = 136, A_SZ = 32 * RA, B_SZ = 32 * RB;   /* [pix][k], [pix][c] */
#else
    constexpr int RA = 36, RB = 36, A_SZ = 64 * RA, B_SZ = 128 * RB;   /* [k][pix], [c][pix] */
#endif
    constexpr int ST = BWF_ST;
    static_assert(ST >= 2, "stages");
    extern __shared__ __align__(16) float gpuml__bwf_smem[];
    float *const As = gpuml__bwf_smem, *const Bs = gpuml__bwf_smem + ST * A_SZ;
    const int tid = (int)threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const int k0 = (int)blockIdx.y * 64, c0 = (int)blockIdx.x * 128;
    const int K = (int)p.k, C = (int)p.c;
    const gpuml__i64 s0 = (gpuml__i64)blockIdx.z * p.n0, s1 = min(s0 + p.n0, (gpuml__i64)p.total);
    const int NS = (int)(s1 > s0 ? s1 - s0 : 0);
    const float *X = (const float *)p.x, *DY = (const float *)p.y;
    const int wm = (warp >> 2) * 32, wn = (warp & 3) * 32;   /* this warp's corner: k, c */
    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
#if BWF_NHWC
    /* loaders: a 16-byte chunk is 4 channels of one pixel row; dy: pixel rows (tid >> 4) + 16 h
       (h < 2), channels (tid & 15) * 4; x: pixel rows (tid >> 5) + 8 h (h < 4), channels (tid & 31) * 4 */
    const gpuml__i64 M = p.ldcol;
    const int aq = (tid & 15) * 4, ar = tid >> 4, bq = (tid & 31) * 4, br = tid >> 5;
    const bool aok = k0 + aq < K, bok = c0 + bq < C;
    const float *const DYc = DY + k0 + aq, *const Xc = X + c0 + bq;
    auto load = [&](int it) {
        if (it < NS) {
            const gpuml__i64 m0 = (s0 + it) * 32;
            float *a = As + (it % ST) * A_SZ, *b = Bs + (it % ST) * B_SZ;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = ar + 16 * h;
                const bool ok = aok && m0 + r < M;
                gpuml__dw3s_cp(a + r * RA + aq, ok ? DYc + (m0 + r) * p.yq : DY, ok ? 16 : 0);
            }
#pragma unroll
            for (int h = 0; h < 4; h++) {
                const int r = br + 8 * h;
                const bool ok = bok && m0 + r < M;
                gpuml__dw3s_cp(b + r * RB + bq, ok ? Xc + (m0 + r) * p.xw : X, ok ? 16 : 0);
            }
        }
        gpuml__dw3s_commit();
    };
#else
    /* loaders: a 16-byte chunk is 4 pixels of one row; dy: rows lr + 32 h (h < 2), x: rows lr + 32 h (h < 4) */
    const int PQ = (int)(p.p * p.q), SPI = (PQ + 31) / 32;
    const int lr = tid >> 3, lq = (tid & 7) * 4;
    auto load = [&](int it) {
        if (it < NS) {
            const gpuml__i64 st = s0 + it;
            const int n = (int)(st / SPI), pix = (int)(st % SPI) * 32 + lq;
            float *a = As + (it % ST) * A_SZ, *b = Bs + (it % ST) * B_SZ;
            const bool pok = pix < PQ;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = lr + 32 * h;
                const bool ok = pok && k0 + r < K;
                gpuml__dw3s_cp(a + r * RA + lq, ok ? DY + n * (gpuml__i64)p.yn + (k0 + r) * (gpuml__i64)p.yk + pix : DY, ok ? 16 : 0);
            }
#pragma unroll
            for (int h = 0; h < 4; h++) {
                const int r = lr + 32 * h;
                const bool ok = pok && c0 + r < C;
                gpuml__dw3s_cp(b + r * RB + lq, ok ? X + n * (gpuml__i64)p.xn + (c0 + r) * (gpuml__i64)p.xc + pix : X, ok ? 16 : 0);
            }
        }
        gpuml__dw3s_commit();
    };
#endif
    /* the fragment element (row, pixel) of the dy tile and (column, pixel) of the x tile: the
       offsets of a step of 1 in the channel and in the pixel */
#if BWF_NHWC
    constexpr int ACH = 1, APX = RA, BCH = 1, BPX = RB;
#else
    constexpr int ACH = RA, APX = 1, BCH = RB, BPX = 1;
#endif
#pragma unroll
    for (int s = 0; s < ST - 1; s++) load(s);
    for (int it = 0; it < NS; it++) {
        gpuml__dw3s_wait<ST - 2>();
        __syncthreads();
        load(it + ST - 1);
        const float *sa = As + (it % ST) * A_SZ + (wm + g) * ACH + t4 * APX, *sb = Bs + (it % ST) * B_SZ + (wn + g) * BCH + t4 * BPX;
#if !BWF_NHWC
        /* NCHW: fragments by ldmatrix.x4 (a 32-bit element is a b16 pair; 1-7% faster than 32-bit
           loads, H100).  Row addresses: lane l gives row l % 8 of matrix l / 8 -- A: rows + 8 (j & 1),
           pixels + 4 (j >> 1) (a0..a3 of a 16 x 8 tile); B: channels + 8 (j >> 1), pixels + 4 (j & 1)
           (b0, b1 of two 8-column tiles) */
        const float *la = As + (it % ST) * A_SZ + (wm + (lane & 7) + 8 * ((lane >> 3) & 1)) * RA + 4 * (lane >> 4);
        const float *lb = Bs + (it % ST) * B_SZ + (wn + (lane & 7) + 8 * (lane >> 4)) * RB + 4 * ((lane >> 3) & 1);
#endif
#pragma unroll
        for (int ks = 0; ks < 32; ks += 8) {
            gpuml__u32 af[2][4], bf[4][2], al[2][4], bl[4][2];
#if !BWF_NHWC
            (void)sa; (void)sb;
#pragma unroll
            for (int i = 0; i < 2; i++) {
                gpuml__u32 r[4];
                gpuml__bwf_ldm4(r, la + 16 * i * RA + ks);
#pragma unroll
                for (int e = 0; e < 4; e++) gpuml__bwf_split(__uint_as_float(r[e]), af[i][e], al[i][e]);
            }
#pragma unroll
            for (int j = 0; j < 4; j += 2) {
                gpuml__u32 r[4];
                gpuml__bwf_ldm4(r, lb + 8 * j * RB + ks);
                gpuml__bwf_split(__uint_as_float(r[0]), bf[j][0], bl[j][0]);
                gpuml__bwf_split(__uint_as_float(r[1]), bf[j][1], bl[j][1]);
                gpuml__bwf_split(__uint_as_float(r[2]), bf[j + 1][0], bl[j + 1][0]);
                gpuml__bwf_split(__uint_as_float(r[3]), bf[j + 1][1], bl[j + 1][1]);
            }
#else
#pragma unroll
            for (int i = 0; i < 2; i++) {
                const float *a = sa + 16 * i * ACH + ks * APX;
                gpuml__bwf_split(a[0], af[i][0], al[i][0]);
                gpuml__bwf_split(a[8 * ACH], af[i][1], al[i][1]);
                gpuml__bwf_split(a[4 * APX], af[i][2], al[i][2]);
                gpuml__bwf_split(a[8 * ACH + 4 * APX], af[i][3], al[i][3]);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float *b = sb + 8 * j * BCH + ks * BPX;
                gpuml__bwf_split(b[0], bf[j][0], bl[j][0]);
                gpuml__bwf_split(b[4 * BPX], bf[j][1], bl[j][1]);
            }
#endif
#if BWF_3X
            /* the small products first */
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    gpuml__c1t_mma(acc[i][j], al[i], bf[j][0], bf[j][1]);
                    gpuml__c1t_mma(acc[i][j], af[i], bl[j][0], bl[j][1]);
                }
#else
            (void)al; (void)bl;
#endif
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) gpuml__c1t_mma(acc[i][j], af[i], bf[j][0], bf[j][1]);
        }
    }
    float *part = (float *)p.col + (gpuml__i64)blockIdx.z * K * C;
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int k = k0 + wm + 16 * i + g + 8 * h;
            if (k >= K) continue;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int c = c0 + wn + 8 * j + 2 * t4;
                if (c < C) part[(gpuml__i64)k * C + c] = acc[i][j][2 * h];
                if (c + 1 < C) part[(gpuml__i64)k * C + c + 1] = acc[i][j][2 * h + 1];
            }
        }
}
/* dw = the sum of gpuml_conv_bwf1x1's partials part[r][e] (p.col, e = k * C + c over E = K * C)
   over its p.ldcol runs, in run order (deterministic).  Block (32, 8): 4 consecutive outputs a
   thread (16-byte loads where E % 4 == 0, else 4 scalar ones), 128 a block, the 8 rows of threads
   over the runs (r = ty, ty + 8, ...), their sums added in row order; grid ceil(E / 128).  dw at
   k * p.wk + c * p.wc (contiguous [K][C] in KCRS and KRSC alike; any strides).  The host keeps E
   below 2^31 - 128.
   3xTF32 (BWF_3X): IEEE gives an output +-Inf where an Inf input meets finite values, but the
   split makes NaN of it (an Inf's lo = Inf - Inf, or Inf times a zero lo in a cross term), and a
   value past FLT_MAX's last tf32 step rounds its hi to Inf the same way.  An output that sums to
   NaN is therefore computed again here as a plain f32 sum of products over all N * P * Q pixels
   (x at p.xn / p.xh / p.xw / p.xc, dy at p.yn / p.yp / p.yq / p.yk; pixel (h, w) = (p, q): 1x1,
   stride 1, unpadded), the block's 256 threads over the pixels, summed in a fixed tree order; a
   thread stops at its first NaN (the output is NaN then, as in IEEE).  Only outputs that touch an
   Inf / NaN input (or overflow) ever read NaN, so finite data pays one compare an output. */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_bwf1x1_sum(gpuml__conv_params p)
{
    __shared__ float4 red[8][32];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y, C = (int)p.c, runs = (int)p.ldcol;
    const int E = (int)(p.k * p.c), e0 = ((int)blockIdx.x * 32 + tx) * 4;
    const float *part = (const float *)p.col;
    float *dw = (float *)p.wt;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (E % 4 == 0) {
        if (e0 < E) {
            const float4 *src = (const float4 *)(part + e0);
            const int step = E / 4;
#pragma unroll 4
            for (int r = ty; r < runs; r += 8) {
                const float4 v = src[(gpuml__i64)r * step];
                acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
            }
        }
    } else {
#pragma unroll 2
        for (int r = ty; r < runs; r += 8) {
            const float *src = part + (gpuml__i64)r * E + e0;
            if (e0 < E) acc.x += src[0];
            if (e0 + 1 < E) acc.y += src[1];
            if (e0 + 2 < E) acc.z += src[2];
            if (e0 + 3 < E) acc.w += src[3];
        }
    }
    red[ty][tx] = acc;
    __syncthreads();
    float o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int nan4 = 0;
    if (ty == 0) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const float4 v = red[i][tx];
            o[0] += v.x; o[1] += v.y; o[2] += v.z; o[3] += v.w;
        }
        if (p.wc == 1 && p.wk == C && E % 4 == 0 && ((size_t)dw & 15) == 0) {
            if (e0 < E) *(float4 *)(dw + e0) = make_float4(o[0], o[1], o[2], o[3]);
        } else {
            int k = e0 / C, c = e0 - k * C;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                if (e0 + i < E) dw[k * p.wk + c * p.wc] = o[i];
                if (++c == C) { c = 0; k++; }
            }
        }
#pragma unroll
        for (int i = 0; i < 4; i++) nan4 |= (e0 + i < E && o[i] != o[i]) << i;
    }
#if BWF_3X
    __shared__ unsigned char nan_at[128];
    __shared__ float tree[256];
    if (ty == 0)
#pragma unroll
        for (int i = 0; i < 4; i++) nan_at[4 * tx + i] = (unsigned char)((nan4 >> i) & 1);
    if (__syncthreads_or(nan4)) {
        const int tid = ty * 32 + tx, PQ = (int)(p.p * p.q), Q = (int)p.q, dh = 256 / Q, dq = 256 - dh * Q;
        const float *X = (const float *)p.x, *DY = (const float *)p.y;
        for (int i = 0; i < 128; i++) {
            if (!nan_at[i]) continue;   /* the same in every thread */
            const int e = (int)blockIdx.x * 128 + i, k = e / C, c = e - k * C;
            float d = 0.0f;
            for (gpuml__i64 n = 0; n < p.n && d == d; n++) {   /* a thread stops at its first NaN */
                const float *xr = X + n * p.xn + c * p.xc, *dr = DY + n * p.yn + k * p.yk;
                int h = tid / Q, w = tid - h * Q;   /* pixel tid, then 256 on (no division in the loop) */
                for (int pix = tid; pix < PQ; pix += 256) {
                    d = fmaf(xr[h * p.xh + w * p.xw], dr[h * p.yp + w * p.yq], d);
                    h += dh; w += dq;
                    if (w >= Q) { w -= Q; h++; }
                }
            }
            tree[tid] = d;
            __syncthreads();
            for (int s = 128; s > 0; s >>= 1) {
                if (tid < s) tree[tid] += tree[tid + s];
                __syncthreads();
            }
            if (tid == 0) dw[k * p.wk + c * p.wc] = tree[0];
            __syncthreads();
        }
    }
#else
    (void)nan4;
#endif
}
#endif
