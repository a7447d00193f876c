/* Helpers every gpuml kernel family is compiled with (after prelude.cuh and shared.h). */

/* The epilogue options of the GEMM-like families (matmul, matmul_small, matmul_mma, matmul_sm90,
   conv_igemm, conv_sm90, conv_stem), 0 where the host passes none: GPUML_EPI (0 none, 1 relu,
   2 gelu, 3 silu), GPUML_HAS_BIAS, GPUML_HAS_RESID, GPUML_CONV_YDT (a conv's output dtype). */
#ifndef GPUML_EPI
#define GPUML_EPI 0
#endif
#ifndef GPUML_HAS_BIAS
#define GPUML_HAS_BIAS 0
#endif
#ifndef GPUML_HAS_RESID
#define GPUML_HAS_RESID 0
#endif
#ifndef GPUML_CONV_YDT
#define GPUML_CONV_YDT 0
#endif

/* Strided view of one operand as the kernels see it: element strides and the element offset. */
struct gpuml__kview {
    gpuml__i64 offset;
    gpuml__i64 strides[GPUML_MAX_DIMS];
};
/* Shape of the iteration space (dims collapsed by the host where it could). */
struct gpuml__kshape {
    gpuml__i64 n;       /* number of elements */
    int ndim;
    gpuml__i64 dims[GPUML_MAX_DIMS];
};

/* linear element index -> element offset in a strided view.  The loop is unrolled so that
   every dims[]/strides[] index is a constant: a run-time index into a kernel parameter
   would copy the whole struct to local memory. */
static __device__ __forceinline__ gpuml__i64 gpuml__offset(const gpuml__kshape &s, const gpuml__kview &v, gpuml__i64 i)
{
    gpuml__i64 off = v.offset;
#pragma unroll
    for (int d = GPUML_MAX_DIMS - 1; d >= 0; d--) {
        if (d < s.ndim) {
            gpuml__i64 q = i / s.dims[d];
            off += (i - q * s.dims[d]) * v.strides[d];
            i = q;
        }
    }
    return off;
}

/* Loading and storing every dtype as float (i32 values beyond 2^24 lose bits in this path;
   integer-to-integer copies take the raw path below). */
template <int DT> struct gpuml__dt;
template <> struct gpuml__dt<0> { typedef float T;      static __device__ __forceinline__ float ld(T v) { return v; } static __device__ __forceinline__ T st(float v) { return v; } };
template <> struct gpuml__dt<1> { typedef gpuml__u16 T; static __device__ __forceinline__ float ld(T v) { return gpuml__f16_to_f32(v); } static __device__ __forceinline__ T st(float v) { return gpuml__f32_to_f16(v); } };
template <> struct gpuml__dt<2> { typedef gpuml__u16 T; static __device__ __forceinline__ float ld(T v) { return gpuml__bf16_to_f32(v); } static __device__ __forceinline__ T st(float v) { return gpuml__f32_to_bf16(v); } };
template <> struct gpuml__dt<3> { typedef gpuml__i32 T; static __device__ __forceinline__ float ld(T v) { return (float)v; } static __device__ __forceinline__ T st(float v) { return gpuml__f32_to_i32(v); } };
template <> struct gpuml__dt<4> { typedef gpuml__i8 T;  static __device__ __forceinline__ float ld(T v) { return (float)v; } static __device__ __forceinline__ T st(float v) { return (T)gpuml__f32_to_int_sat(v, -128, 127); } };
template <> struct gpuml__dt<5> { typedef gpuml__u8 T;  static __device__ __forceinline__ float ld(T v) { return (float)v; } static __device__ __forceinline__ T st(float v) { return (T)gpuml__f32_to_int_sat(v, 0, 255); } };
template <> struct gpuml__dt<6> { typedef gpuml__u8 T;  static __device__ __forceinline__ float ld(T v) { return gpuml__e4m3_to_f32(v); } static __device__ __forceinline__ T st(float v) { return gpuml__f32_to_e4m3(v); } };
template <> struct gpuml__dt<7> { typedef gpuml__u8 T;  static __device__ __forceinline__ float ld(T v) { return gpuml__e5m2_to_f32(v); } static __device__ __forceinline__ T st(float v) { return gpuml__f32_to_e5m2(v); } };

/* Two floats to two f16 (DT 1) or bf16 (DT 2) in one word, lo in the low half: one cvt on
   sm_80+ (round to nearest even, as gpuml__dt<DT>::st; a NaN stays a NaN), else the two
   converters.  DT is a compile-time constant at every call. */
static __device__ __forceinline__ gpuml__u32 gpuml__pack2(int DT, float lo, float hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    gpuml__u32 r;
    if (DT == 2) { asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
    if (DT == 1) { asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
#endif
    return DT == 2 ? (gpuml__u32)gpuml__f32_to_bf16(lo) | ((gpuml__u32)gpuml__f32_to_bf16(hi) << 16)
                   : (gpuml__u32)gpuml__f32_to_f16(lo) | ((gpuml__u32)gpuml__f32_to_f16(hi) << 16);
}
/* 2^x and 1/x, one MUFU instruction each (approximate, ~2 ulp; results below 2^-126 flush to
   zero): for the kernels whose tolerance allows it */
static __device__ __forceinline__ float gpuml__ex2(float x) { float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
static __device__ __forceinline__ float gpuml__rcp(float x) { float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }

/* Parameters of every matmul kernel but the Hopper one (C[z][m][n] = epilogue(A[z] @ B[z])),
   mirrored by gpuml__mm_params in gpuml.h. */
struct gpuml__mm_params {
    int M, N, K, batch;
    const void *A; gpuml__i64 sa_b, sa_m, sa_k;   /* element strides: batch, row, k */
    const void *B; gpuml__i64 sb_b, sb_k, sb_n;
    void *C;       gpuml__i64 sc_b, sc_m, sc_n;   /* output; also C_in when BETA */
    const float *bias;                            /* [N] f32, or null */
    const void *R; gpuml__i64 sr_b, sr_m, sr_n;   /* residual in the output dtype, or null */
    float alpha, beta, scale;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* thread block clusters (sm_90+): all threads of the cluster meet, and what each block wrote to
   its shared memory before is visible to the others after */
static __device__ __forceinline__ void gpuml__cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
static __device__ __forceinline__ unsigned gpuml__cluster_rank(void)
{
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
/* the float at p in the shared memory of block 'rank' of this cluster */
static __device__ __forceinline__ float gpuml__ld_cluster(const float *p, unsigned rank)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(p), ra;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(ra) : "memory");
    return v;
}
#endif

/* ---- tensor-core matmul helpers shared by matmul_mma.cu, matmul_small.cu, conv_igemm.cu and
   conv_sm90.cu (templates: no code unless a kernel uses them) ---- */
/* D = A(16x16, row) * B(16x8, col) + D, f32 accumulators.  DT: 1 f16, 2 bf16 */
template <int DT>
static __device__ __forceinline__ void gpuml__mma_16816(float *d, const gpuml__u32 *a, gpuml__u32 b0, gpuml__u32 b1)
{
    if (DT == 2)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* the fused epilogue's activation (GPUML_EPI: 1 relu, 2 gelu (tanh form), 3 silu) */
template <int EPI>
static __device__ __forceinline__ float gpuml__mma_act(float x)
{
    if (EPI == 1) return x > 0.0f ? x : 0.0f;
    if (EPI == 2) return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    if (EPI == 3) return x / (1.0f + __expf(-x));
    return x;
}

/* C-dtype <-> f32.  f16 uses the hardware cvt (cvt.rn.f16.f32 is IEEE round-to-nearest-even
   with overflow to inf and NaN -> 0x7fff: bit-identical to gpuml__f32_to_f16, whose software
   version costs ~80 instructions an element and would add ~40% to the instruction count of a
   4096-deep GEMM); -DGPUML_MMA_SOFT_CVT=1 selects gpuml__dt<CDT>::ld/st instead.  f32 and bf16
   always use gpuml__dt (a few integer ops). */
#ifndef GPUML_MMA_SOFT_CVT
#define GPUML_MMA_SOFT_CVT 0
#endif
template <int CDT>
static __device__ __forceinline__ typename gpuml__dt<CDT>::T gpuml__mma_st(float v)
{
    if (CDT == 1 && !GPUML_MMA_SOFT_CVT) {
        gpuml__u16 h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
        return (typename gpuml__dt<CDT>::T)h;
    }
    return gpuml__dt<CDT>::st(v);
}
template <int CDT>
static __device__ __forceinline__ float gpuml__mma_ld(typename gpuml__dt<CDT>::T x)
{
    if (CDT == 1 && !GPUML_MMA_SOFT_CVT) {
        float v;
        asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"((gpuml__u16)x));
        return v;
    }
    return gpuml__dt<CDT>::ld(x);
}

/* N elements of T in one aligned load or store */
template <typename T, int N> struct alignas(sizeof(T) * N) gpuml__vec { T v[N]; };

/* The N elements of dtype DT held in W 32-bit words to f32, from the words (a vector of 16-bit
   elements unpacked into 16-bit registers cost a PRMT an element).  f16: one test for NaNs over
   the vector (a half h is a NaN when (h & 0x7fff) + 0x3ff reaches 0x8000; two halves a word, no
   carry between them), then bare cvts; a vector holding a NaN takes gpuml__f16_to_f32, which
   brings NaNs to the portable code's bits (that fix-up on every element, 4-5 instructions, kept
   the rows kernel issue-bound). */
template <int DT, int W, int N>
static __device__ __forceinline__ void gpuml__words_to_f(const gpuml__vec<gpuml__u32, W> &w, float *f)
{
    typedef typename gpuml__dt<DT>::T T;
    if (DT == 0) {
#pragma unroll
        for (int k = 0; k < N; k++) f[k] = gpuml__bitsf(w.v[k]);
        return;
    }
    if (DT == 2 && 2 * W == N) {
#pragma unroll
        for (int k = 0; k < W; k++) { f[2 * k] = gpuml__bitsf(w.v[k] << 16); f[2 * k + 1] = gpuml__bitsf(w.v[k] & 0xffff0000u); }
        return;
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    if (DT == 1 && 2 * W == N) {
        gpuml__u32 nan = 0;
#pragma unroll
        for (int k = 0; k < W; k++) nan |= ((w.v[k] & 0x7fff7fffu) + 0x03ff03ffu) & 0x80008000u;
        if (nan == 0) {
#pragma unroll
            for (int k = 0; k < W; k++)
                asm("{ .reg .f16 lo, hi; mov.b32 {lo, hi}, %2; cvt.f32.f16 %0, lo; cvt.f32.f16 %1, hi; }"
                    : "=f"(f[2 * k]), "=f"(f[2 * k + 1]) : "r"(w.v[k]));
            return;
        }
    }
#endif
    union { gpuml__vec<gpuml__u32, W> w; gpuml__vec<T, N> v; } u;
    u.w = w;
#pragma unroll
    for (int k = 0; k < N; k++) f[k] = gpuml__dt<DT>::ld(u.v.v[k]);
}

/* a loaded vector of N elements of dtype DT to f32: 16-bit types through their 32-bit words
   (gpuml__words_to_f), the others element by element */
template <int DT, int N, typename V>
static __device__ __forceinline__ void gpuml__vec_to_f(const V &v, float *f)
{
    enum { W = sizeof(V) / 4 > 0 ? (int)(sizeof(V) / 4) : 1 };
    if ((DT == 1 || DT == 2) && sizeof(V) % 4 == 0 && sizeof(V) >= 4) {
        union { V v; gpuml__vec<gpuml__u32, W> w; } u;
        u.v = v;
        gpuml__words_to_f<DT, W, N>(u.w, f);
        return;
    }
#pragma unroll
    for (int k = 0; k < N; k++) f[k] = gpuml__dt<DT>::ld(v.v[k]);
}
