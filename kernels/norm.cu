/* Family "norm": row-wise ops, one block per row (grid-stride over rows).
   -DRK: 0 softmax, 1 log_softmax, 2 layernorm, 3 rmsnorm, 4 layernorm backward,
         5 rmsnorm backward, 6 softmax cross-entropy (loss per row + gradient)
   -DDT_X (x, y, dy, dx), -DDT_W / -DDT_B (weight, bias; -DHAS_W / -DHAS_B), -DHAS_Y (CE gradient)
   -DVEC: elements per 16-byte load (VEC > 1 only when every row is dense and 16-byte aligned)
   -DNV:  vectors per thread kept in registers (the row is read once); 0 = rows too long for
          registers: each pass reads the row again from memory.
   Or -DCOLSUM=1 -DDT_O: column sums of the per-block partials of the backward passes. */
#ifndef VEC
#define VEC 1
#endif
#ifndef NV
#define NV 0
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
template <typename T, int N> struct alignas(sizeof(T) * N) gpuml__vec { T v[N]; };

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
static __device__ __forceinline__ float gpuml__warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
/* block-wide sum / max of one or two values, returned to every thread */
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
static __device__ __forceinline__ float gpuml__block_sum(float a) { return gpuml__block_sum2(a, 0.0f).x; }
static __device__ __forceinline__ float gpuml__block_max(float a)
{
    __shared__ float sm[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    a = gpuml__warp_max(a);
    __syncthreads();
    if (lane == 0) sm[w] = a;
    __syncthreads();
    float r = sm[0];
    for (int i = 1; i < nw; i++) r = fmaxf(r, sm[i]);
    return r;
}

struct gpuml__nparams {
    gpuml__kshape rs;         /* the row dims */
    gpuml__kview v[3];        /* row starts of x, y (or dx), dy */
    gpuml__i64 n;             /* row length */
    gpuml__i64 xs, ys, dys, ws, bs, ls;   /* strides along the row (ls: labels, per row) */
    float eps, scale;
};

#define NVR (NV > 0 ? NV : 1)
#define GPUML__BWD (RK == 4 || RK == 5)

template <typename D>
static __device__ __forceinline__ void gpuml__ldvec(float *r, const typename D::T *p, gpuml__i64 e0, gpuml__i64 st)
{
    if (VEC > 1) {
        gpuml__vec<typename D::T, VEC> v = *(const gpuml__vec<typename D::T, VEC> *)(p + e0);
#pragma unroll
        for (int k = 0; k < VEC; k++) r[k] = D::ld(v.v[k]);
    } else {
        r[0] = D::ld(p[e0 * st]);
    }
}
template <typename D>
static __device__ __forceinline__ void gpuml__stvec(typename D::T *p, gpuml__i64 e0, gpuml__i64 st, const float *r)
{
    if (VEC > 1) {
        gpuml__vec<typename D::T, VEC> v;
#pragma unroll
        for (int k = 0; k < VEC; k++) v.v[k] = D::st(r[k]);
        *(gpuml__vec<typename D::T, VEC> *)(p + e0) = v;
    } else {
        p[e0 * st] = D::st(r[0]);
    }
}

extern "C" __global__ void __launch_bounds__(512) gpuml_rows(gpuml__nparams p, const gpuml__X::T *__restrict__ x,
        gpuml__X::T *__restrict__ y, const gpuml__X::T *__restrict__ dy, const gpuml__W::T *__restrict__ w,
        const gpuml__B::T *__restrict__ b, const int *__restrict__ labels, float *__restrict__ part0,
        float *__restrict__ part1)
{
    const gpuml__i64 n = p.n, BS = blockDim.x;
    const int nch = NV > 0 ? NV : (int)((n + BS * VEC - 1) / (BS * VEC));
    float xr[NVR][VEC], dr[NVR][VEC], a0[NVR][VEC], a1[NVR][VEC];
    (void)dy; (void)w; (void)b; (void)labels; (void)part0; (void)part1; (void)dr; (void)a0; (void)a1;
    if (GPUML__BWD) {
        for (int j = 0; j < nch; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                gpuml__i64 e = ((gpuml__i64)threadIdx.x + j * BS) * VEC + k;
                if (NV > 0) { a0[j % NVR][k] = 0.0f; a1[j % NVR][k] = 0.0f; }
                else if (e < n) { part0[blockIdx.x * n + e] = 0.0f; if (RK == 4) part1[blockIdx.x * n + e] = 0.0f; }
            }
    }
    for (gpuml__i64 row = blockIdx.x; row < p.rs.n; row += gridDim.x) {
        gpuml__i64 off[3] = {0, 0, 0};
        {
            gpuml__i64 i = row;
            for (int d = p.rs.ndim - 1; d >= 0; d--) {
                gpuml__i64 q = i / p.rs.dims[d], r = i - q * p.rs.dims[d];
                for (int k = 0; k < 3; k++) off[k] += r * p.v[k].strides[d];
                i = q;
            }
        }
        const gpuml__X::T *xp = x + off[0];
        gpuml__X::T *yp = y + off[1];
        const gpuml__X::T *dp = dy + off[2];
        /* the row (and dy) into registers, once */
        if (NV > 0) {
#pragma unroll
            for (int j = 0; j < NVR; j++) {
                gpuml__i64 e0 = ((gpuml__i64)threadIdx.x + j * BS) * VEC;
                if (e0 < n) {
                    gpuml__ldvec<gpuml__X>(xr[j], xp, e0, p.xs);
                    if (GPUML__BWD) gpuml__ldvec<gpuml__X>(dr[j], dp, e0, p.dys);
                }
            }
        }
        /* element (j, k) of this thread: from registers, or reloaded */
#define GPUML__XV(j, k, e) (NV > 0 ? xr[(j) % NVR][k] : gpuml__X::ld(xp[(e) * p.xs]))
#define GPUML__DV(j, k, e) (NV > 0 ? dr[(j) % NVR][k] : gpuml__X::ld(dp[(e) * p.dys]))
#define GPUML__FOR_ROW \
        for (int j = 0; j < nch; j++) _Pragma("unroll") for (int k = 0; k < VEC; k++) \
            if (((gpuml__i64)threadIdx.x + j * BS) * VEC + k < n)
#define GPUML__E (((gpuml__i64)threadIdx.x + j * BS) * VEC + k)

#if RK == 0 || RK == 1 || RK == 6
        float mx = -__int_as_float(0x7f800000), s = 0.0f;
        GPUML__FOR_ROW mx = fmaxf(mx, GPUML__XV(j, k, GPUML__E));
        mx = gpuml__block_max(mx);
        GPUML__FOR_ROW s += __expf(GPUML__XV(j, k, GPUML__E) - mx);
        s = gpuml__block_sum(s);
#if RK == 6
        int lab = labels[row * p.ls];
        bool ok = lab >= 0 && (gpuml__i64)lab < n;
        float inv = p.scale / s;
        if (threadIdx.x == 0) part0[row] = ok ? mx + logf(s) - gpuml__X::ld(xp[(gpuml__i64)lab * p.xs]) : __int_as_float(0x7fc00000);
#endif
#if RK == 0
        float inv = 1.0f / s;
#elif RK == 1
        float lse = mx + logf(s);
#endif
#elif RK == 2 || RK == 4
        float s = 0.0f, q = 0.0f;
        GPUML__FOR_ROW s += GPUML__XV(j, k, GPUML__E);
        float mean = gpuml__block_sum(s) / (float)n;
        GPUML__FOR_ROW { float d = GPUML__XV(j, k, GPUML__E) - mean; q = fmaf(d, d, q); }
        float rstd = rsqrtf(gpuml__block_sum(q) / (float)n + p.eps);
#elif RK == 3 || RK == 5
        float q = 0.0f;
        GPUML__FOR_ROW { float v = GPUML__XV(j, k, GPUML__E); q = fmaf(v, v, q); }
        float mean = 0.0f, rstd = rsqrtf(gpuml__block_sum(q) / (float)n + p.eps);
#endif
#if GPUML__BWD
        /* g = dy * w, xhat = (x - mean) * rstd: sums of g and g * xhat */
        float sg = 0.0f, sgx = 0.0f;
        GPUML__FOR_ROW {
            gpuml__i64 e = GPUML__E;
            float g = GPUML__DV(j, k, e) * (HAS_W ? gpuml__W::ld(w[e * p.ws]) : 1.0f);
            sg += g;
            sgx = fmaf(g, (GPUML__XV(j, k, e) - mean) * rstd, sgx);
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
            gpuml__i64 e0 = ((gpuml__i64)threadIdx.x + j * BS) * VEC;
            float o[VEC], wv[VEC], bv[VEC];
            if (e0 >= n) continue;
#if HAS_W && RK >= 2 && RK <= 5
            gpuml__ldvec<gpuml__W>(wv, w, e0, p.ws);
#else
#pragma unroll
            for (int k = 0; k < VEC; k++) wv[k] = 1.0f;
#endif
#if HAS_B && RK == 2
            gpuml__ldvec<gpuml__B>(bv, b, e0, p.bs);
#else
#pragma unroll
            for (int k = 0; k < VEC; k++) bv[k] = 0.0f;
#endif
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                gpuml__i64 e = e0 + k;
                float xv = GPUML__XV(j, k, e);
                (void)wv[k]; (void)bv[k];
#if RK == 0
                o[k] = __expf(xv - mx) * inv;
#elif RK == 1
                o[k] = xv - lse;
#elif RK == 6
                o[k] = ok ? (__expf(xv - mx) * inv - (e == (gpuml__i64)lab ? p.scale : 0.0f)) : __int_as_float(0x7fc00000);
#elif RK == 2 || RK == 3
                o[k] = fmaf((xv - mean) * rstd, wv[k], bv[k]);
#else
                float dyv = GPUML__DV(j, k, e), xh = (xv - mean) * rstd, g = dyv * wv[k];
                o[k] = rstd * (g - sg - xh * sgx);
                if (NV > 0) {
                    a0[j % NVR][k] = fmaf(dyv, xh, a0[j % NVR][k]);
                    a1[j % NVR][k] += dyv;
                } else {
                    part0[blockIdx.x * n + e] += dyv * xh;
                    if (RK == 4) part1[blockIdx.x * n + e] += dyv;
                }
#endif
            }
            if (RK != 6 || HAS_Y) gpuml__stvec<gpuml__X>(yp, e0, p.ys, o);
        }
    }
    if (GPUML__BWD && NV > 0) {
#pragma unroll
        for (int j = 0; j < NVR; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                gpuml__i64 e = ((gpuml__i64)threadIdx.x + j * BS) * VEC + k;
                if (e < n) {
                    part0[blockIdx.x * n + e] = a0[j][k];
                    if (RK == 4) part1[blockIdx.x * n + e] = a1[j][k];
                }
            }
    }
}
#endif /* COLSUM */
