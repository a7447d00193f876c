/* Family "reduce": sum, mean, max, min, argmax and variance over a set of axes.
   The host splits x into outer (kept) and inner (reduced) dims; each output element reduces
   the inner elements of its outer index.  -DRK=<kind> (GPUML_REDUCE_*: 0 sum 1 mean 2 max
   3 min 4 argmax 5 var) -DDT_X -DDT_O -DVEC [-DRD_U] [-DRD_FUSE].  Accumulation in f32 (Welford for var). */
#ifndef VEC
#define VEC 1
#endif
#ifndef RD_U
#define RD_U 8          /* vectors in flight a thread (sum, mean, max, min) */
#endif
#ifndef RD_FUSE
#define RD_FUSE 0       /* 1: the last block of an output's splits merges them (at most 1024 outputs) */
#endif
typedef gpuml__dt<DT_X> gpuml__X;
typedef gpuml__dt<DT_O> gpuml__O;

/* a partial result: value (sum, extreme or mean), M2 and count (var), index (argmax) */
struct gpuml__acc { float v, m2, n; int idx; };

static __device__ __forceinline__ gpuml__acc gpuml__acc_init(void)
{
    gpuml__acc a;
    a.v = (RK == 2 || RK == 4) ? -__int_as_float(0x7f800000) : RK == 3 ? __int_as_float(0x7f800000) : 0.0f;
    a.m2 = 0.0f; a.n = 0.0f; a.idx = 0x7fffffff;
    return a;
}
/* (v2, i2) beats (v1, i1): NaN beats everything, then larger, then the lower index */
static __device__ __forceinline__ bool gpuml__better(float v1, int i1, float v2, int i2)
{
    bool n1 = v1 != v1, n2 = v2 != v2;
    if (n1 && n2) return i2 < i1;
    if (n1) return false;
    if (n2) return true;
    return v2 > v1 || (v2 == v1 && i2 < i1);
}
static __device__ __forceinline__ void gpuml__acc_add(gpuml__acc &a, float x, int i)
{
#if RK == 0 || RK == 1
    a.v += x; (void)i;
#elif RK == 2
    if (x != x || x > a.v) a.v = a.v != a.v ? a.v : x; (void)i;
#elif RK == 3
    if (x != x || x < a.v) a.v = a.v != a.v ? a.v : x; (void)i;
#elif RK == 4
    if (gpuml__better(a.v, a.idx, x, i)) { a.v = x; a.idx = i; }
#else
    float d;
    a.n += 1.0f;
    d = x - a.v;
    a.v += d / a.n;
    a.m2 = fmaf(d, x - a.v, a.m2);
    (void)i;
#endif
}
static __device__ __forceinline__ void gpuml__acc_merge(gpuml__acc &a, const gpuml__acc &b)
{
#if RK == 0 || RK == 1
    a.v += b.v;
#elif RK == 2
    if (a.v == a.v && (b.v != b.v || b.v > a.v)) a.v = b.v;
#elif RK == 3
    if (a.v == a.v && (b.v != b.v || b.v < a.v)) a.v = b.v;
#elif RK == 4
    if (gpuml__better(a.v, a.idx, b.v, b.idx)) { a.v = b.v; a.idx = b.idx; }
#else
    float n = a.n + b.n, d;
    if (b.n == 0.0f) return;
    if (a.n == 0.0f) { a = b; return; }
    d = b.v - a.v;
    a.v = a.v + d * (b.n / n);
    a.m2 = a.m2 + b.m2 + d * d * (a.n * (b.n / n));
    a.n = n;
#endif
}
static __device__ __forceinline__ gpuml__acc gpuml__acc_shfl(const gpuml__acc &a, int lane_mask)
{
    gpuml__acc b;
    b.v = __shfl_xor_sync(0xffffffffu, a.v, lane_mask);
    b.m2 = __shfl_xor_sync(0xffffffffu, a.m2, lane_mask);
    b.n = __shfl_xor_sync(0xffffffffu, a.n, lane_mask);
    b.idx = __shfl_xor_sync(0xffffffffu, a.idx, lane_mask);
    return b;
}
/* whole-block merge; the result is valid in thread 0 */
static __device__ __forceinline__ gpuml__acc gpuml__acc_block(gpuml__acc a)
{
    __shared__ gpuml__acc sm[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) { gpuml__acc b = gpuml__acc_shfl(a, o); gpuml__acc_merge(a, b); }
    __syncthreads();            /* sm may still be read by the previous row */
    if (lane == 0) sm[w] = a;
    __syncthreads();
    if (w == 0) {
        a = lane < nw ? sm[lane] : gpuml__acc_init();
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) { gpuml__acc b = gpuml__acc_shfl(a, o); gpuml__acc_merge(a, b); }
    }
    return a;
}
static __device__ __forceinline__ void gpuml__acc_store(gpuml__O::T *out, const gpuml__acc &a, gpuml__i64 count, float correction)
{
#if RK == 4
    *out = (gpuml__O::T)a.idx; (void)count; (void)correction;
#elif RK == 1
    *out = gpuml__O::st(a.v / (float)count); (void)correction;
#elif RK == 5
    *out = gpuml__O::st(count > 0 ? a.m2 / ((float)count - correction) : __int_as_float(0x7fc00000));
#else
    *out = gpuml__O::st(a.v); (void)count; (void)correction;
#endif
}

struct gpuml__rparams {
    gpuml__kshape os;        /* outer (kept) dims */
    gpuml__kview oxv, oov;   /* x and out over the outer dims */
    gpuml__kshape is;        /* inner (reduced) dims */
    gpuml__kview ixv;        /* x over the inner dims */
    gpuml__i64 chunk;        /* inner elements per split (a multiple of VEC) */
    int nsplit, contig, aligned;
    float correction;
};

#if RD_FUSE
/* One ticket per output: the blocks of its splits count themselves in, and the last merges the
   partials and puts the ticket back to 0.  A module global is zero when the module loads, and
   the kernels of a context run one at a time on its stream, so each call finds them at 0. */
__device__ unsigned gpuml__ticket[1024];
#endif

/* one block per (outer index, split); contiguous inner dims load VEC at a time */
extern "C" __global__ void __launch_bounds__(256) gpuml_reduce_rows(gpuml__rparams p, const gpuml__X::T *__restrict__ x,
        gpuml__O::T *__restrict__ out, gpuml__acc *__restrict__ part)
{
    gpuml__i64 nwork = p.os.n * p.nsplit;
    /* w = (row, split) advanced by gridDim.x without a 64-bit division (a call, which on
       sm_75-89 capped the registers at 64 and spilled the eight vectors in flight) */
    const unsigned ns = (unsigned)p.nsplit, gq = gridDim.x / ns, gr = gridDim.x % ns;
    gpuml__i64 row = blockIdx.x / ns, sp = blockIdx.x % ns;
    for (gpuml__i64 w = blockIdx.x; w < nwork; w += gridDim.x, row += gq, sp += gr) {
        if (sp >= (gpuml__i64)ns) { sp -= ns; row++; }
        gpuml__i64 lo = sp * p.chunk, hi = lo + p.chunk < p.is.n ? lo + p.chunk : p.is.n;
        const gpuml__X::T *xr = x + gpuml__offset(p.os, p.oxv, row);
        gpuml__acc a = gpuml__acc_init();
        if (p.contig && VEC > 1 && p.aligned) {
            /* U vectors in flight per thread (eight: 128 bytes; four for argmax and variance,
               whose merges hold more registers), the last batch predicated; then the elements
               past the last whole vector */
            const int U = RK == 4 || RK == 5 ? 4 : RD_U;
            const gpuml__i64 st = (gpuml__i64)blockDim.x * VEC, hv = lo + (hi - lo) / VEC * VEC;
            for (gpuml__i64 i = lo + (gpuml__i64)threadIdx.x * VEC; i < hv; i += U * st) {
                gpuml__vec<gpuml__X::T, VEC> v[U];
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (i + u * st < hv) v[u] = *(const gpuml__vec<gpuml__X::T, VEC> *)(xr + i + u * st);
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (i + u * st < hv)
#pragma unroll
                        for (int k = 0; k < VEC; k++) gpuml__acc_add(a, gpuml__X::ld(v[u].v[k]), (int)(i + u * st + k));
            }
            for (gpuml__i64 e = hv + threadIdx.x; e < hi; e += blockDim.x) gpuml__acc_add(a, gpuml__X::ld(xr[e]), (int)e);
        } else if (p.contig) {
            for (gpuml__i64 i = lo + (gpuml__i64)threadIdx.x * VEC; i < hi; i += (gpuml__i64)blockDim.x * VEC)
                for (int k = 0; k < VEC && i + k < hi; k++) gpuml__acc_add(a, gpuml__X::ld(xr[i + k]), (int)(i + k));
        } else {
            for (gpuml__i64 i = lo + threadIdx.x; i < hi; i += blockDim.x)
                gpuml__acc_add(a, gpuml__X::ld(xr[gpuml__offset(p.is, p.ixv, i)]), (int)i);
        }
        a = gpuml__acc_block(a);
#if RD_FUSE
        {
            __shared__ int last;
            if (threadIdx.x == 0) {
                part[w] = a;
                __threadfence();            /* the partial is visible before the ticket counts it */
                last = atomicAdd(&gpuml__ticket[row], 1u) == ns - 1;
            }
            __syncthreads();
            if (last) {
                /* every other split's partial was fenced before its ticket: read them past L1 */
                const volatile gpuml__acc *pv = part + row * ns;
                gpuml__acc m = gpuml__acc_init();
                __threadfence();
                for (unsigned s = threadIdx.x; s < ns; s += blockDim.x) {
                    gpuml__acc b;
                    b.v = pv[s].v; b.m2 = pv[s].m2; b.n = pv[s].n; b.idx = pv[s].idx;
                    gpuml__acc_merge(m, b);
                }
                m = gpuml__acc_block(m);
                if (threadIdx.x == 0) {
                    gpuml__acc_store(out + gpuml__offset(p.os, p.oov, row), m, p.is.n, p.correction);
                    gpuml__ticket[row] = 0;
                }
            }
        }
#else
        if (threadIdx.x == 0) {
            if (p.nsplit == 1) gpuml__acc_store(out + gpuml__offset(p.os, p.oov, row), a, p.is.n, p.correction);
            else part[w] = a;
        }
#endif
    }
}

/* merges the splits of each outer index (one thread per output) */
/* merges each output's nsplit partials: a block per output (there are few of them when the
   reduction was split), the partials strided over the threads, then the block merge */
extern "C" __global__ void __launch_bounds__(256) gpuml_reduce_finish(gpuml__rparams p, gpuml__O::T *out, const gpuml__acc *part)
{
    for (gpuml__i64 row = blockIdx.x; row < p.os.n; row += gridDim.x) {
        gpuml__acc a = gpuml__acc_init();
        for (int s = threadIdx.x; s < p.nsplit; s += blockDim.x) gpuml__acc_merge(a, part[row * p.nsplit + s]);
        a = gpuml__acc_block(a);
        if (threadIdx.x == 0) gpuml__acc_store(out + gpuml__offset(p.os, p.oov, row), a, p.is.n, p.correction);
    }
}

/* one thread per output, walking the inner dims: coalesced when neighbouring outputs read
   neighbouring elements (e.g. reducing dim 0 of a row-major matrix) */
extern "C" __global__ void __launch_bounds__(256) gpuml_reduce_cols(gpuml__rparams p, const gpuml__X::T *__restrict__ x,
        gpuml__O::T *__restrict__ out)
{
    for (gpuml__i64 row = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; row < p.os.n;
         row += (gpuml__i64)gridDim.x * blockDim.x) {
        const gpuml__X::T *xr = x + gpuml__offset(p.os, p.oxv, row);
        gpuml__acc a = gpuml__acc_init();
        if (p.is.ndim == 1) {
            gpuml__i64 st = p.ixv.strides[0];
            for (gpuml__i64 i = 0; i < p.is.n; i++) gpuml__acc_add(a, gpuml__X::ld(xr[i * st]), (int)i);
        } else {
            for (gpuml__i64 i = 0; i < p.is.n; i++) gpuml__acc_add(a, gpuml__X::ld(xr[gpuml__offset(p.is, p.ixv, i)]), (int)i);
        }
        gpuml__acc_store(out + gpuml__offset(p.os, p.oov, row), a, p.is.n, p.correction);
    }
}
