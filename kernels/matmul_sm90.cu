/*
 * gpuml — Hopper (sm_90a) bf16 / f16 GEMM: TMA + wgmma + mbarrier pipeline.
 *
 * ======================================================================================
 * LAUNCH CONTRACT
 * ======================================================================================
 * Compile with NVRTC (or nvcc) for sm_90a only:  --gpu-architecture=sm_90a  plus
 *   -DGPUML_IN_T=bf16|f16|tf32|e4m3|e5m2   input dtype of A (and of B)   (default bf16)
 *   -DGPUML_IN_TB=e4m3|e5m2      dtype of B when it differs from A's (fp8 only; default = A's)
 *                                tf32 reads f32 data (the tensor cores use its top 19 bits);
 *                                tf32 and fp8 need GPUML_B_KMAJOR=1 (wgmma takes them K-major only)
 *   -DGPUML_OUT=bf16|f16|f32     dtype of C, C_in and R                  (default bf16)
 *   -DGPUML_EPI=0|1|2|3          activation: none | relu | gelu(tanh) | silu (default 0)
 *   -DGPUML_HAS_BIAS=0|1         f32 bias, one per output column         (default 0)
 *   -DGPUML_HAS_RESID=0|1        residual R[M,N] (out dtype) added last  (default 0)
 *   -DGPUML_B_KMAJOR=1|0         1: B stored N x K ("TN", B^T row-major)  (default 1)
 *                                0: B stored K x N row-major ("NN")
 *   -DGPUML_MM_TMA_STORE=1|0     1: C written by TMA store (default), 0: masked st.global
 *   -DGPUML_TF32_NN=0|1          1: tf32 with B stored K x N (GPUML_B_KMAJOR=0, f32 out, CL = 1):
 *                                the kernel is gpuml_matmul_sm90_nn instead (the transposed problem,
 *                                B^T fragments in registers; its own contract below, near the end)
 *   -DGPUML_MM_BN=256|128        the tile's columns (default 256); 128 (main kernel, no cluster, not
 *                                K3D): 6 ring stages of 32 KB, wgmma m64n128, 64 accumulators a
 *                                thread; B's map box {BK, 128} (k-major) or two {64, 64} boxes a
 *                                stage (n-major); units = ceil(M/128) * ceil(N/128)
 *   -DGPUML_MM_CLUSTER=1|2       1: no cluster (default)
 *                                2: 2-CTA clusters sharing (multicasting) the B tile; correct,
 *                                but measured 0-6% slower on H100 (bench/NOTES_matmul_sm90.md)
 * The file includes no header; the library (tools/gen_kernels.sh) puts kernels/sm90.cuh, the PTX
 * wrappers it shares with conv_sm90.cu, in front of it.  It computes, for 0 <= m < M, 0 <= n < N:
 *   acc    = sum_k A[m,k] * B(k,n)                      (f32 accumulation)
 *   v      = alpha*acc + beta*C_in[m,n]                 (C_in is not read when beta == 0)
 *   v      = act(v + bias[n])                           (bias only with GPUML_HAS_BIAS)
 *   v      = v + R[m,n]                                 (only with GPUML_HAS_RESID)
 *   C[m,n] = round_to_out_dtype(v)                      (round-to-nearest-even)
 * C_in may alias C (in place).  R must not alias C.
 *
 * Kernel:  extern "C" __global__ void gpuml_matmul_sm90(
 *              const __grid_constant__ gpuml_tensormap tma_a,     // 128 bytes, 64-aligned
 *              const __grid_constant__ gpuml_tensormap tma_b,
 *              const __grid_constant__ gpuml_tensormap tma_c,     // unused (any bytes) when
 *                                                                 // GPUML_MM_TMA_STORE=0
 *              const gpuml_matmul_sm90_params p);                 // 120 bytes, by value
 *   kernelParams for cuLaunchKernelEx: { &mapA, &mapB, &mapC, &params }.
 *
 * Params struct (offsets in bytes, natural alignment, sizeof == 120):
 *    0  void        *c;        output, M x N, row stride ldc elements
 *    8  const void  *c_in;     beta input (out dtype), row stride ldc_in; may be NULL if beta == 0
 *   16  const float *bias;     N floats (GPUML_HAS_BIAS), else ignored
 *   24  const void  *resid;    M x N (out dtype), row stride ldr (GPUML_HAS_RESID), else ignored
 *   32  long long    ldc;      row strides, in ELEMENTS
 *   40  long long    ldc_in;
 *   48  long long    ldr;
 *   56  int M;   60  int N;   64  int K;
 *   68  float alpha;   72  float beta;
 *   76  int group_m;           tile-order group height in 128-row tiles; <= 0 means 8
 *   80  int splits;            GPUML_MM_SPLITK=1 only: K split this many ways
 *   84  int kb_split;          GPUML_MM_SPLITK=1 only: k blocks (BK each) per split; every split
 *                            non-empty (splits = ceil(ceil(K / BK) / kb_split))
 *   88  int kb_img;            GPUML_MM_K3D=1 only: k blocks an image
 *   92  int sk_dp;             stream-K tail (sk_iters > 0, not with split-K or CL = 2): tiles
 *                            [0, sk_dp) whole, round robin over the CTAs (a multiple of G)
 *   96  int sk_iters;          the k blocks of tiles [sk_dp, units), end to end (tile-major),
 *                            cut into G contiguous ranges, CTA c taking [c*sk_iters/G,
 *                            (c+1)*sk_iters/G); each range >= ceil(K / BK) blocks, or (sk_dp 0,
 *                            G = 2 x tiles: the two-way split) half a tile, so that a tile has
 *                            at most two pieces: its head ends CTA c's range, its tail starts
 *                            CTA c+1's, "seam" c+1 (kernels/shared.h gpuml__walk_next); 0 = none
 *  104  unsigned long long *sk_cnt;  2 * G counters (seam s, consumer warpgroup w at 2s + w),
 *                            a multiple of 3 between launches (gpuml__sk_merge); zero at first
 *  112  float *sk_ws;         G * 32768 floats: a seam's first piece leaves its sums here
 *                            (sizeof 120)
 *   -DGPUML_MM_K3D=1             (with GPUML_MM_SPLITK=1, GPUML_B_KMAJOR=1, tf32): the reduction
 *                                runs over images x pixels (a 1x1 conv's backward filter in NCHW:
 *                                dw[k][c] = sum over n, pix of dy[n][k][pix] x[n][c][pix]): A and
 *                                B are rank-3 maps {pixels, rows, images} (boxes {BK, 128, 1} and
 *                                {BK, 256, 1}), k block kb loads image kb / kb_img at pixel
 *                                (kb % kb_img) * BK, pixels past an image's end read as zero;
 *                                K = images * kb_img * BK
 *   -DGPUML_MM_SPLITK=1          split-K: work unit = (split, tile); split s sums its k blocks
 *                                and stores the f32 partial tile with masked st.global to rows
 *                                [s*M, s*M + M) of C (row stride ldc; needs GPUML_OUT=f32,
 *                                GPUML_MM_TMA_STORE=0, no cluster, no epilogue, alpha 1, beta 0);
 *                                gpuml_mm_splitk_epi (kernels/matmul.cu) sums the splits and
 *                                applies the epilogue
 *
 * Work unit: CL = GPUML_MM_CLUSTER vertically adjacent 128 x 256 tiles;
 *          units = ceil(ceil(M/128) / CL) * ceil(N/256).
 * Grid:    (G, 1, 1), G = CL * min(units, maxActiveClusters) with maxActiveClusters =
 *          #SMs for CL = 1; for CL = 2, cuOccupancyMaxActiveClusters(fn, cfg) (66 on a 132-SM
 *          H100), or #SMs / 2 if that call is unavailable.  Persistent: any G >= CL that is a multiple
 *          of CL is correct (cluster c walks units c, c + G/CL, ...).
 * Block:   (384, 1, 1)  = 1 producer warpgroup + 2 consumer warpgroups.
 * Cluster: CL = 1: none.  CL = 2: (2, 1, 1), compiled in with __cluster_dims__: pass no
 *          cluster attribute (or the same dims) to cuLaunchKernelEx.
 * Dynamic shared memory: GPUML_MM_SMEM_BYTES = 230656 bytes with GPUML_MM_TMA_STORE=1,
 *          197888 bytes with GPUML_MM_TMA_STORE=0; set CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_
 *          SIZE_BYTES to it first (device opt-in limit on H100: 232448).
 * Stream order only.  Without a stream-K tail: no workspace, no atomics, no inter-CTA
 * dependencies.  With one: the two pieces of a seam's tile meet through sk_cnt / sk_ws (the
 * second to finish waits only for the first's partial sums to land, never for a CTA that has
 * not started; the sum is the same whichever comes second).
 * tf32 specializations also hold gpuml_mm_split3 (end of file): the operand split that runs
 * an f32 GEMM as 3xTF32 with f32-level accuracy (this kernel over K' = 3K).
 *
 * Tensor maps (cuTensorMapEncodeTiled; all: interleave CU_TENSOR_MAP_INTERLEAVE_NONE,
 * swizzle CU_TENSOR_MAP_SWIZZLE_128B, elementStrides {1,1},
 * l2Promotion CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
 * oobFill CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (= zeros; required, the K tail relies on it)):
 *   Element sizes: ES = 2 (bf16, f16), 4 (tf32: FLOAT32 data), 1 (fp8: UINT8); BK = 128 / ES
 *   elements = one 128-byte swizzle row (64, 32 or 128).  Below, "*2" and "64" are for ES = 2.
 *   A   dtype BFLOAT16|FLOAT16 (= GPUML_IN_T), rank 2, globalAddress = A,
 *       globalDim {K, M}, globalStrides {lda*2} bytes, boxDim {64, 128}
 *   B   GPUML_B_KMAJOR=1 (B is N x K):  dtype = GPUML_IN_T, rank 2, globalAddress = B,
 *       globalDim {K, N}, globalStrides {ldb*2}, boxDim {64, 256 / CL}  (CL=2: {64, 128})
 *       GPUML_B_KMAJOR=0 (B is K x N):  dtype = GPUML_IN_T, rank 2, globalAddress = B,
 *       globalDim {N, K}, globalStrides {ldb*2}, boxDim {64, 64}
 *   C   (GPUML_MM_TMA_STORE=1) dtype BFLOAT16|FLOAT16|FLOAT32 (= GPUML_OUT), rank 2,
 *       globalAddress = C, globalDim {N, M}, globalStrides {ldc*sizeof(out)},
 *       boxDim {64, 64} for 16-bit out, {32, 64} for f32 out   (box inner = 128 bytes)
 * Requirements (host falls back otherwise): A, B, C, C_in, R base addresses 16-byte aligned,
 * every row stride a multiple of 16 bytes, M, N, K >= 1 and < 2^31, bias 8-byte aligned.
 * Edges: loads past M/N/K are zero-filled by TMA; stores clip rows (TMA) or mask; a 64-column
 * chunk that crosses a right edge with N * sizeof(out) % 16 != 0 is stored with masked
 * st.global, because TMA stores write whole 16-byte pieces (would clobber up to 7 elements
 * past N, e.g. in a column slice).  Memory past row M or column N is never written.
 *
 * Design: CTA tile 128 x 256 x 64, 4-stage TMA ring (48 KB a stage, 128B-swizzled),
 * full/empty mbarriers; warpgroup 0 = producer (one thread issues TMA; setmaxnreg 40),
 * warpgroups 1, 2 = consumers (setmaxnreg 232), each wgmma.m64n256k16 on its 64 rows,
 * f32 accumulators in registers (128 a thread); persistent grid with grouped tile order;
 * with CL = 2 each CTA of a cluster loads its own A tile and half of the common B tile,
 * multicast to both (empty barriers then count both CTAs' consumer warps).
 * Epilogue: 64 x 128-byte chunks through a double-buffered swizzled smem tile + TMA store.
 * Split-K (GPUML_MM_SPLITK) for small-MN, large-K shapes; a stream-K tail (sk_iters) where
 * the last wave of tiles would leave SMs idle; not done: overlap of the epilogue with the
 * next tile's MMAs (consumers are not ping-ponged).
 * ======================================================================================
 */

#ifndef GPUML_IN_T
#define GPUML_IN_T bf16
#endif
#ifndef GPUML_OUT
#define GPUML_OUT bf16
#endif
#ifndef GPUML_B_KMAJOR
#define GPUML_B_KMAJOR 1
#endif
#ifndef GPUML_MM_TMA_STORE
#define GPUML_MM_TMA_STORE 1
#endif
#ifndef GPUML_MM_CLUSTER
#define GPUML_MM_CLUSTER 1
#endif
#if GPUML_MM_CLUSTER != 1 && GPUML_MM_CLUSTER != 2
#error "GPUML_MM_CLUSTER must be 1 or 2"
#endif
#ifndef GPUML_TF32_NN
#define GPUML_TF32_NN 0
#endif

/* Map the dtype tokens to numbers the preprocessor can compare. */
#define GPUML__DT_bf16 1
#define GPUML__DT_f16 2
#define GPUML__DT_f32 3
#define GPUML__CAT2(a, b) a##b
#define GPUML__CAT(a, b) GPUML__CAT2(a, b)
#define GPUML__IN_ID GPUML__CAT(GPUML__DT_, GPUML_IN_T)
#define GPUML__OUT_ID GPUML__CAT(GPUML__DT_, GPUML_OUT)
#define GPUML__STR2(x) #x
#define GPUML__STR(x) GPUML__STR2(x)

#define GPUML__DT_tf32 4
#define GPUML__DT_e4m3 5
#define GPUML__DT_e5m2 6
#ifndef GPUML_IN_TB
#define GPUML_IN_TB GPUML_IN_T
#endif
#define GPUML__INB_ID GPUML__CAT(GPUML__DT_, GPUML_IN_TB)
/* GPUML__KI: k per wgmma (always 32 bytes of each row); GPUML__ES: bytes per element */
#if GPUML__IN_ID == 1
#define GPUML__WGMMA_TYPES ".bf16.bf16"
#define GPUML__ES 2
#define GPUML__KI "16"
#elif GPUML__IN_ID == 2
#define GPUML__WGMMA_TYPES ".f16.f16"
#define GPUML__ES 2
#define GPUML__KI "16"
#elif GPUML__IN_ID == 4
#define GPUML__WGMMA_TYPES ".tf32.tf32"
#define GPUML__ES 4
#define GPUML__KI "8"
#elif (GPUML__IN_ID == 5 || GPUML__IN_ID == 6) && (GPUML__INB_ID == 5 || GPUML__INB_ID == 6)
#if GPUML__IN_ID == 5 && GPUML__INB_ID == 5
#define GPUML__WGMMA_TYPES ".e4m3.e4m3"
#elif GPUML__IN_ID == 5
#define GPUML__WGMMA_TYPES ".e4m3.e5m2"
#elif GPUML__INB_ID == 5
#define GPUML__WGMMA_TYPES ".e5m2.e4m3"
#else
#define GPUML__WGMMA_TYPES ".e5m2.e5m2"
#endif
#define GPUML__ES 1
#define GPUML__KI "32"
#else
#error "GPUML_IN_T must be bf16, f16, tf32, e4m3 or e5m2 (GPUML_IN_TB e4m3 or e5m2 with fp8)"
#endif
#if GPUML__IN_ID != GPUML__INB_ID && GPUML__ES != 1
#error "GPUML_IN_TB may differ from GPUML_IN_T only for fp8"
#endif
#if GPUML__ES != 2 && !GPUML_B_KMAJOR && !GPUML_TF32_NN
#error "tf32 and fp8 need GPUML_B_KMAJOR=1 (wgmma reads them K-major only), or tf32 GPUML_TF32_NN=1"
#endif
#if GPUML_TF32_NN && (GPUML__IN_ID != 4 || GPUML__OUT_ID != 3 || GPUML_B_KMAJOR || GPUML_MM_CLUSTER != 1)
#error "GPUML_TF32_NN=1 is for tf32 in, f32 out, B stored K x N (GPUML_B_KMAJOR=0), GPUML_MM_CLUSTER=1"
#endif
/* the transpose immediates exist for 16-bit types only */
#if GPUML__ES == 2
#define GPUML__WGMMA_TAIL ", 1, 1, 0, " GPUML__STR(GPUML__TRANS_B)
#else
#define GPUML__WGMMA_TAIL ", 1, 1"
#endif
#if GPUML_B_KMAJOR
#define GPUML__TRANS_B 0
#else
#define GPUML__TRANS_B 1
#endif
#if GPUML__OUT_ID < 1 || GPUML__OUT_ID > 3
#error "GPUML_OUT must be bf16, f16 or f32"
#endif

#ifndef GPUML_KERNEL_BASE_TYPES
#define GPUML_KERNEL_BASE_TYPES
typedef unsigned short gpuml_u16;
typedef unsigned int gpuml_u32;
typedef int gpuml_i32;
typedef long long gpuml_i64;
typedef unsigned long long gpuml_u64;
struct __align__(2) gpuml_bf16 { unsigned short x; };
struct __align__(2) gpuml_f16 { unsigned short x; };
struct __align__(64) gpuml_tensormap { unsigned long long opaque[16]; };
#endif

struct gpuml_matmul_sm90_params {
    void *c;
    const void *c_in;
    const float *bias;
    const void *resid;
    long long ldc, ldc_in, ldr;
    int M, N, K;
    float alpha, beta;
    int group_m;
    int splits, kb_split;       /* GPUML_MM_SPLITK: K split this many ways, kb_split k blocks each */
    int kb_img;                 /* GPUML_MM_K3D: k blocks an image */
    int sk_dp, sk_iters;        /* stream-K tail: whole tiles [0, sk_dp), then sk_iters k blocks in G ranges */
    unsigned long long *sk_cnt; /* 2 counters a seam */
    float *sk_ws;               /* 32768 floats a seam */
};
#ifndef GPUML_MM_SPLITK
#define GPUML_MM_SPLITK 0
#endif
#ifndef GPUML_MM_K3D
#define GPUML_MM_K3D 0
#endif
#if GPUML_MM_K3D && (!GPUML_MM_SPLITK || !GPUML_B_KMAJOR)
#error "GPUML_MM_K3D: rank-3 A and K-major B maps over images x pixels, split-K partial sums"
#endif
#if GPUML_MM_SPLITK && (GPUML_MM_TMA_STORE || GPUML_MM_CLUSTER != 1 || GPUML_TF32_NN || GPUML_HAS_BIAS || GPUML_HAS_RESID || GPUML_EPI)
#error "split-K: f32 partial sums by st.global, no cluster, no epilogue (gpuml_mm_splitk_epi applies it)"
#endif

#define GPUML_MM_BM 128
#ifndef GPUML_MM_BN
#define GPUML_MM_BN 256   /* the tile's columns: 256, or 128 (more tiles for few-tile shapes; main kernel, no cluster) */
#endif
#if GPUML_MM_BN != 256 && (GPUML_MM_BN != 128 || GPUML_MM_CLUSTER != 1 || GPUML_TF32_NN || GPUML_MM_K3D)
#error "GPUML_MM_BN: 256, or 128 on the main kernel without a cluster"
#endif
#define GPUML_MM_BK (128 / GPUML__ES)                                  /* elements in 128 bytes */
#define GPUML__NJ (GPUML_MM_BN / 8)                                     /* n8 groups: 4 accumulators each */
#define GPUML_MM_STAGES (GPUML_MM_BN == 256 ? 4 : 6)                    /* the same 192 KB ring */
#define GPUML_MM_THREADS 384
#define GPUML_MM_A_STAGE_BYTES (GPUML_MM_BM * 128)                      /* 16384 */
#define GPUML_MM_B_STAGE_BYTES (GPUML_MM_BN * 128)                      /* 32768 (BN 128: 16384) */
#define GPUML_MM_RING_BYTES (GPUML_MM_STAGES * (GPUML_MM_A_STAGE_BYTES + GPUML_MM_B_STAGE_BYTES))
#define GPUML_MM_EPI_CHUNK_BYTES 8192                                   /* 64 rows x 128 B */
#if GPUML_MM_TMA_STORE
#define GPUML_MM_EPI_BYTES (2 * 2 * GPUML_MM_EPI_CHUNK_BYTES)           /* 2 WG x 2 buffers */
#else
#define GPUML_MM_EPI_BYTES 0
#endif
/* 1024 bytes of slack to align the ring to the 128B-swizzle atom, 256 for the barriers. */
#define GPUML_MM_SMEM_BYTES (1024 + GPUML_MM_RING_BYTES + GPUML_MM_EPI_BYTES + 256)

/* ---------------------------------------------------------------- PTX wrappers ------ */

static __device__ __forceinline__ gpuml_u32 gpuml__smem_addr(const void *p)
{
    return (gpuml_u32)__cvta_generic_to_shared(p);
}

/* TMA store and bulk-group waits: kernels/sm90.cuh */

/* GPUML__D128_STR / GPUML__D128(d), the m64n256 accumulator operands: kernels/sm90.cuh */

/* D[64x256] (+)= A[64x(32 bytes)] * B[(32 bytes)x256]; scale_d == 0 overwrites D. */
static __device__ __forceinline__ void gpuml__wgmma_256(float *d, gpuml_u64 da, gpuml_u64 db, int scale_d)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "setp.ne.b32 p, %130, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n256k" GPUML__KI ".f32" GPUML__WGMMA_TYPES " {" GPUML__D128_STR
                 "}, %128, %129, p" GPUML__WGMMA_TAIL ";\n\t}"
                 : GPUML__D128(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}
#if GPUML_MM_BN == 128
/* D[64x128] (+)= A[64x(32 bytes)] * B[(32 bytes)x128]; scale_d == 0 overwrites D. */
static __device__ __forceinline__ void gpuml__wgmma_128(float *d, gpuml_u64 da, gpuml_u64 db, int scale_d)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "setp.ne.b32 p, %66, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n128k" GPUML__KI ".f32" GPUML__WGMMA_TYPES " {" GPUML__D64_STR
                 "}, %64, %65, p" GPUML__WGMMA_TAIL ";\n\t}"
                 : GPUML__D64(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}
#endif

/* ------------------------------------------------------- output dtype conversions ---- */

#if GPUML_HAS_BIAS || GPUML_HAS_RESID || GPUML_EPI != 0
#define GPUML__EPI_EXTRA 1
#else
#define GPUML__EPI_EXTRA 0
#endif

#if GPUML_EPI >= 2
static __device__ __forceinline__ float gpuml__sigmoid_mul(float x, float z)
{
    /* x * sigmoid(z) = x / (1 + e^-z).  Fast divide: for e^-z > 2^126 it returns 0, the
     * correct limit; no slow-path call (128 of those bloat the unrolled epilogue). */
    return __fdividef(x, 1.0f + __expf(-z));
}
#endif

#if GPUML__EPI_EXTRA
static __device__ __forceinline__ float gpuml__act(float v)
{
#if GPUML_EPI == 1
    return v > 0.0f ? v : 0.0f;
#elif GPUML_EPI == 2
    /* 0.5 x (1 + tanh(u)) == x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) */
    /* 2u = v (2 sqrt(2/pi) + 2 sqrt(2/pi) 0.044715 v^2) */
    return gpuml__sigmoid_mul(v, v * (1.5957691216057308f + 0.0713548162726009f * v * v));
#elif GPUML_EPI == 3
    return gpuml__sigmoid_mul(v, v);
#else
    return v;
#endif
}
#endif

#if GPUML__OUT_ID == 3
typedef float gpuml__out_t;
#define GPUML__OUT_BYTES 4
#else
typedef gpuml_u16 gpuml__out_t;
#define GPUML__OUT_BYTES 2
#endif

/* Two adjacent outputs (column n, n+1): load / store.  16-bit types pack into one u32. */
static __device__ __forceinline__ void gpuml__load2(const gpuml__out_t *p, float &v0, float &v1)
{
#if GPUML__OUT_ID == 3
    float2 t = *(const float2 *)p;
    v0 = t.x;
    v1 = t.y;
#else
    gpuml_u32 x = *(const gpuml_u32 *)p;
#if GPUML__OUT_ID == 1
    v0 = __uint_as_float(x << 16);
    v1 = __uint_as_float(x & 0xFFFF0000u);
#else
    asm("{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\t"
        "cvt.f32.f16 %0, lo;\n\tcvt.f32.f16 %1, hi;\n\t}"
        : "=f"(v0), "=f"(v1)
        : "r"(x));
#endif
#endif
}

static __device__ __forceinline__ float gpuml__load1(const gpuml__out_t *p)
{
#if GPUML__OUT_ID == 3
    return *p;
#elif GPUML__OUT_ID == 1
    return __uint_as_float((gpuml_u32)*p << 16);
#else
    float v;
    asm("cvt.f32.f16 %0, %1;" : "=f"(v) : "h"(*p));
    return v;
#endif
}

#if GPUML__OUT_ID != 3
static __device__ __forceinline__ gpuml_u32 gpuml__pack2(float v0, float v1)
{
    gpuml_u32 r;
#if GPUML__OUT_ID == 1
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(v1), "f"(v0));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(v1), "f"(v0));
#endif
    return r;
}
#endif

/* Masked pair load of an M x N out-dtype matrix (C_in, R); zeros outside. */
static __device__ __forceinline__ void gpuml__load_pair(const void *base, long long ld, int row, int col, int M,
                                                        int N, float &v0, float &v1)
{
    v0 = 0.0f;
    v1 = 0.0f;
    if (row < M) {
        const gpuml__out_t *q = (const gpuml__out_t *)base + (gpuml_i64)row * ld + col;
        if (col + 1 < N)
            gpuml__load2(q, v0, v1);
        else if (col < N)
            v0 = gpuml__load1(q);
    }
}

/* Masked pair store into C. */
static __device__ __forceinline__ void gpuml__store_pair(void *base, long long ld, int row, int col, int M, int N,
                                                         float v0, float v1)
{
    if (row < M) {
        gpuml__out_t *q = (gpuml__out_t *)base + (gpuml_i64)row * ld + col;
        if (col + 1 < N) {
#if GPUML__OUT_ID == 3
            *(float2 *)q = make_float2(v0, v1);
#else
            *(gpuml_u32 *)q = gpuml__pack2(v0, v1);
#endif
        } else if (col < N) {
#if GPUML__OUT_ID == 3
            *q = v0;
#else
            *q = (gpuml_u16)(gpuml__pack2(v0, 0.0f) & 0xFFFFu);
#endif
        }
    }
}

#if GPUML_MM_CLUSTER == 2
static __device__ __forceinline__ void gpuml__tma_load_2d_mc(gpuml_u32 dst, const gpuml_tensormap *map, int c0, int c1,
                                                             gpuml_u32 bar, unsigned short mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                 "l"((gpuml_u64)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

/* arrive on the barrier at the same offset in CTA 'rank' of this cluster */
static __device__ __forceinline__ void gpuml__mbar_arrive_cluster(gpuml_u32 bar, gpuml_u32 rank)
{
    asm volatile("{\n\t.reg .b32 ra;\n\t"
                 "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}
#endif

/* ------------------------------------------------------------------- the kernel ------ */

/* Work unit u -> (unit row, tile column), grouped so that 'group' unit rows sweep the
 * columns together (A and B panels stay in L2). */
static __device__ __forceinline__ void gpuml__unit_coords(int u, int units_m, int tiles_n, int group, int &um,
                                                          int &tn)
{
    int per_group = group * tiles_n;
    int g = u / per_group;
    int first_m = g * group;
    int gsz = units_m - first_m;
    if (gsz > group)
        gsz = group;
    int r = u - g * per_group;
    um = first_m + r % gsz;
    tn = r / gsz;
}

/* (the work of one CTA, piece by piece: gpuml__mm_walk and gpuml__walk_init / _next / _seam, in
 * kernels/shared.h, where the CPU tests check the partition) */
/* a seam's two pieces meet here, consumer warpgroup by warpgroup (acc: this thread's 128
 * accumulators; ltid: the thread in the warpgroup; slot: 8 bytes of shared memory for it; bar: its
 * named barrier).  The warpgroup decides as one (its epilogue's named barriers need all 128
 * threads: decided warp by warp, warps of one warpgroup raced into different branches and hung).
 * cnt advances by 3 a launch and is never reset (zero when allocated; the conv kernels' split
 * tails keep the same rule on the same counters): the first arrival (it reads 3L), its partial sums
 * written (+1), the second arrival (+1).  The first leaves its accumulators in ws (float4 i of
 * thread t at 128i + t, 64 KB) and returns 0; the second waits for them, adds them -- the same f32
 * sums whichever piece comes second -- and returns 1. */
template <int NACC>
static __device__ __forceinline__ int gpuml__sk_merge(float *acc, unsigned long long *cnt, float *ws, int ltid, gpuml_u32 slot,
                                                      int bar)
{
    unsigned long long a;
    if (ltid == 0) {
        a = atomicAdd(cnt, 1ull);
        asm volatile("st.shared.u64 [%0], %1;" ::"r"(slot), "l"(a) : "memory");
    }
    gpuml__named_bar(bar, 128);
    asm volatile("ld.shared.u64 %0, [%1];" : "=l"(a) : "r"(slot) : "memory");
    float4 *const w4 = (float4 *)ws;
    if (a % 3 == 0) {
#pragma unroll
        for (int i = 0; i < NACC / 4; ++i)
            __stcg(w4 + 128 * i + ltid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
        __threadfence();
        gpuml__named_bar(bar, 128);   /* (also: every thread has read the slot before its next use) */
        if (ltid == 0)
            atomicAdd(cnt, 1ull);
        return 0;
    }
    if (ltid == 0) {
        const unsigned long long want = a - a % 3 + 3;
        unsigned long long v;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(cnt) : "memory");
            if (v >= want)
                break;
            __nanosleep(32);
        }
    }
    gpuml__named_bar(bar, 128);
#pragma unroll
    for (int i = 0; i < NACC / 4; ++i) {
        const float4 v = __ldcg(w4 + 128 * i + ltid);
        acc[4 * i] += v.x;
        acc[4 * i + 1] += v.y;
        acc[4 * i + 2] += v.z;
        acc[4 * i + 3] += v.w;
    }
    return 1;
}

#if !GPUML_TF32_NN
extern "C" __global__ void __launch_bounds__(GPUML_MM_THREADS, 1)
#if GPUML_MM_CLUSTER == 2
    __cluster_dims__(2, 1, 1)
#endif
    gpuml_matmul_sm90(const __grid_constant__ gpuml_tensormap tma_a, const __grid_constant__ gpuml_tensormap tma_b,
                      const __grid_constant__ gpuml_tensormap tma_c, const gpuml_matmul_sm90_params p)
{
    extern __shared__ __align__(1024) unsigned char gpuml__mm_smem[];
    const gpuml_u32 base = (gpuml__smem_addr(gpuml__mm_smem) + 1023u) & ~1023u;
    const gpuml_u32 smem_a = base;
    const gpuml_u32 smem_b = base + GPUML_MM_STAGES * GPUML_MM_A_STAGE_BYTES;
    const gpuml_u32 smem_epi = base + GPUML_MM_RING_BYTES;
    const gpuml_u32 bar_full = smem_epi + GPUML_MM_EPI_BYTES;
    const gpuml_u32 bar_empty = bar_full + 8 * GPUML_MM_STAGES;

    const int tid = threadIdx.x;
    const int wg = tid >> 7;
    const int lane = tid & 31;

#if GPUML_MM_CLUSTER == 2
    gpuml_u32 crank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(crank));
    const int cid = blockIdx.x >> 1, ncl = gridDim.x >> 1;
#else
    const gpuml_u32 crank = 0;
    const int cid = blockIdx.x, ncl = gridDim.x;
#endif
    const int tiles_m = (p.M + GPUML_MM_BM - 1) / GPUML_MM_BM;
    const int tiles_n = (p.N + GPUML_MM_BN - 1) / GPUML_MM_BN;
    const int units_m = (tiles_m + GPUML_MM_CLUSTER - 1) / GPUML_MM_CLUSTER;
#if GPUML_MM_SPLITK
    const int num_units = units_m * tiles_n * p.splits;   /* unit u: split u % splits of tile unit u / splits */
#else
    const int num_units = units_m * tiles_n;
#endif
    int group = (p.group_m > 0 ? p.group_m : 8) / GPUML_MM_CLUSTER;
    if (group < 1)
        group = 1;
    const int num_kb = (p.K + GPUML_MM_BK - 1) / GPUML_MM_BK;

    if (tid == 0) {
        for (int s = 0; s < GPUML_MM_STAGES; ++s) {
            gpuml__mbar_init(bar_full + 8 * s, 1);
            /* lane 0 of each consumer warp, of every CTA that reads this CTA's B half */
            gpuml__mbar_init(bar_empty + 8 * s, 8 * GPUML_MM_CLUSTER);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
#if GPUML_MM_CLUSTER == 2
    /* the peer's barriers must be initialised before anything multicasts into them */
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif

    if (wg == 0) {
        /* ---------------- producer warpgroup: one thread drives the TMA ring ---------------- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml_u64)&tma_a) : "memory");
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml_u64)&tma_b) : "memory");
            int stage = 0;
            gpuml_u32 phase = 0;
            gpuml__mm_walk wk;
            gpuml__walk_init(&wk, p.sk_iters, cid, ncl);
            int u, kb0, kb1;
            while (gpuml__walk_next(&wk, p.sk_dp, p.sk_iters, ncl, num_units, num_kb, &u, &kb0, &kb1)) {
                int um, tn;
#if GPUML_MM_SPLITK
                gpuml__unit_coords(u / p.splits, units_m, tiles_n, group, um, tn);
                kb0 = (u % p.splits) * p.kb_split;
                kb1 = min(num_kb, kb0 + p.kb_split);
#else
                gpuml__unit_coords(u, units_m, tiles_n, group, um, tn);
#endif
                /* with a cluster, rank 1 may get tm == tiles_m (odd tiles_m): its loads are
                 * all out of bounds (zeros) and its stores all clipped; it keeps the pair in step */
                const int m0 = (um * GPUML_MM_CLUSTER + (int)crank) * GPUML_MM_BM, n0 = tn * GPUML_MM_BN;
                for (int kb = kb0; kb < kb1; ++kb) {
                    gpuml__mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
                    const gpuml_u32 full = bar_full + 8 * stage;
                    gpuml__mbar_expect_tx(full, GPUML_MM_A_STAGE_BYTES + GPUML_MM_B_STAGE_BYTES);
                    const int k0 = kb * GPUML_MM_BK;
                    const gpuml_u32 sb = smem_b + stage * GPUML_MM_B_STAGE_BYTES;
#if GPUML_MM_K3D
                    {   /* image kb / kb_img, pixels from (kb % kb_img) * BK */
                        const int img = kb / p.kb_img, px = (kb - img * p.kb_img) * GPUML_MM_BK;
                        gpuml__tma_load_3d(smem_a + stage * GPUML_MM_A_STAGE_BYTES, &tma_a, px, m0, img, full);
                        gpuml__tma_load_3d(sb, &tma_b, px, n0, img, full);
                    }
                    (void)k0;
#else
                    gpuml__tma_load_2d(smem_a + stage * GPUML_MM_A_STAGE_BYTES, &tma_a, k0, m0, full);
#endif
#if GPUML_MM_K3D
#elif GPUML_MM_CLUSTER == 2
                    /* each CTA fetches half of the shared B tile into both CTAs */
#if GPUML_B_KMAJOR
                    gpuml__tma_load_2d_mc(sb + crank * 16384, &tma_b, k0, n0 + 128 * (int)crank, full, 3);
#else
#pragma unroll
                    for (int q = 0; q < 2; ++q) {
                        const int qq = 2 * (int)crank + q;
                        gpuml__tma_load_2d_mc(sb + qq * 8192, &tma_b, n0 + 64 * qq, k0, full, 3);
                    }
#endif
#else
#if GPUML_B_KMAJOR
                    gpuml__tma_load_2d(sb, &tma_b, k0, n0, full);
#else
#pragma unroll
                    for (int q = 0; q < GPUML_MM_BN / 64; ++q)
                        gpuml__tma_load_2d(sb + q * 8192, &tma_b, n0 + 64 * q, k0, full);
#endif
#endif
                    if (++stage == GPUML_MM_STAGES) {
                        stage = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        /* ---------------- consumer warpgroups: wgmma on 64 rows each, then epilogue ---------------- */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int cw = wg - 1;                 /* 0 or 1: which 64-row half of the tile */
        const int warp_in_wg = (tid >> 5) & 3; /* warp inside the warpgroup */
        float acc[GPUML_MM_BN / 2];
        int stage = 0;
        gpuml_u32 phase = 0;
#if GPUML_MM_TMA_STORE
        const int ltid = tid & 127;
        const gpuml_u32 epi_buf = smem_epi + cw * 2 * GPUML_MM_EPI_CHUNK_BYTES;
        int nst = 0; /* TMA stores issued: picks the epilogue buffer */
        if (ltid == 0)
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml_u64)&tma_c) : "memory");
#endif
        gpuml__mm_walk wk;
        gpuml__walk_init(&wk, p.sk_iters, cid, ncl);
        int u, kb0, kb1;
        while (gpuml__walk_next(&wk, p.sk_dp, p.sk_iters, ncl, num_units, num_kb, &u, &kb0, &kb1)) {
            int um, tn;
#if GPUML_MM_SPLITK
            /* this split's partial sums go to rows [split * M, split * M + M) of C (f32) */
            gpuml__unit_coords(u / p.splits, units_m, tiles_n, group, um, tn);
            kb0 = (u % p.splits) * p.kb_split;
            kb1 = min(num_kb, kb0 + p.kb_split);
            void *const cbase = (float *)p.c + (gpuml_i64)(u % p.splits) * p.M * p.ldc;
#else
            gpuml__unit_coords(u, units_m, tiles_n, group, um, tn);
            void *const cbase = p.c;
#endif
            const int tm = um * GPUML_MM_CLUSTER + (int)crank;
#if GPUML_HAS_BIAS && GPUML__EPI_EXTRA
            /* the tile's bias, loaded now so that its latency hides behind the k loop: lane l of
               every warp holds column pairs l, l + 32, l + 64, l + 96 of the 128 (BN 128: l, l + 32 of
               the 64); the epilogue takes each pair from its lane by shuffle.  (Loaded in the epilogue,
               32 dependent loads a tile cost bf16 8192 x 4096 x 4096 +30% on an H200:
               bench/NOTES_matmul_sm90.md) */
            float2 bpre[GPUML_MM_BN / 64];
#pragma unroll
            for (int q = 0; q < GPUML_MM_BN / 64; ++q) {
                const int col = tn * GPUML_MM_BN + 2 * (lane + 32 * q);
                bpre[q] = make_float2(0.0f, 0.0f);
                if (col + 1 < p.N) bpre[q] = __ldg((const float2 *)(p.bias + col));
                else if (col < p.N) bpre[q].x = __ldg(p.bias + col);
            }
#endif

            int prev = 0;
            for (int kb = kb0; kb < kb1; ++kb) {
                gpuml__mbar_wait(bar_full + 8 * stage, phase);
                const gpuml_u32 sa = smem_a + stage * GPUML_MM_A_STAGE_BYTES + cw * (64 * 128);
                const gpuml_u32 sb = smem_b + stage * GPUML_MM_B_STAGE_BYTES;
                const gpuml_u64 da = gpuml__smem_desc(sa, 16, 1024);
#if GPUML_B_KMAJOR
                const gpuml_u64 db = gpuml__smem_desc(sb, 16, 1024);
#else
                const gpuml_u64 db = gpuml__smem_desc(sb, 8192, 1024);
#endif
                gpuml__wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) {
                    /* K-major: +32 bytes per 16 k inside the swizzled 128-byte row (the swizzle
                     * is applied to absolute address bits, so the start may move inside an atom).
                     * MN-major B: +16 k-rows = 2 atoms of 1024 bytes. */
#if GPUML_B_KMAJOR
                    const gpuml_u64 dbk = db + (gpuml_u64)((kk * 32) >> 4);
#else
                    const gpuml_u64 dbk = db + (gpuml_u64)((kk * 2048) >> 4);
#endif
#if GPUML_MM_BN == 128
                    gpuml__wgmma_128(acc, da + (gpuml_u64)((kk * 32) >> 4), dbk, kb != kb0 || kk != 0);
#else
                    gpuml__wgmma_256(acc, da + (gpuml_u64)((kk * 32) >> 4), dbk, kb != kb0 || kk != 0);
#endif
                }
                gpuml__wgmma_commit();
                gpuml__wgmma_wait<1>(); /* the previous k-block's wgmmas are done: free its stage */
                if (kb > kb0 && lane == 0) {
                    gpuml__mbar_arrive(bar_empty + 8 * prev);
#if GPUML_MM_CLUSTER == 2
                    gpuml__mbar_arrive_cluster(bar_empty + 8 * prev, crank ^ 1u);
#endif
                }
                prev = stage;
                if (++stage == GPUML_MM_STAGES) {
                    stage = 0;
                    phase ^= 1u;
                }
            }
            gpuml__wgmma_wait<0>();
            if (lane == 0) {
                gpuml__mbar_arrive(bar_empty + 8 * prev);
#if GPUML_MM_CLUSTER == 2
                gpuml__mbar_arrive_cluster(bar_empty + 8 * prev, crank ^ 1u);
#endif
            }
#if !GPUML_MM_SPLITK && GPUML_MM_CLUSTER == 1
            const int seam = gpuml__walk_seam(&wk, cid);
            if (seam >= 0) {   /* stream-K: the first piece of the tile leaves its sums; the second stores */
                const int sw = 2 * seam + cw;
                if (!gpuml__sk_merge<GPUML_MM_BN / 2>(acc, p.sk_cnt + sw, p.sk_ws + (gpuml_i64)sw * 16384, tid & 127,
                                     bar_empty + 8 * GPUML_MM_STAGES + 8 * cw, 1 + cw))
                    continue;
            }
#endif

            /* ---- epilogue.  Fragment: acc[4j + 2i + c] is row 16w + lane/4 + 8i,
             *      column 8j + 2(lane%4) + c of this warpgroup's 64 x BN block. ---- */
            const int row0 = tm * GPUML_MM_BM + cw * 64;
            const int col0 = tn * GPUML_MM_BN;
            const int r_in = warp_in_wg * 16 + (lane >> 2);
            const int c_in = (lane & 3) * 2;
            /* alpha, beta: uniform branches, so the common case runs none of this code */
            if (p.beta != 0.0f) {
#pragma unroll
                for (int j = 0; j < GPUML__NJ; ++j) {
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        float c0, c1;
                        gpuml__load_pair(p.c_in, p.ldc_in, row0 + r_in + 8 * i, col0 + 8 * j + c_in, p.M, p.N, c0, c1);
                        acc[4 * j + 2 * i] = p.alpha * acc[4 * j + 2 * i] + p.beta * c0;
                        acc[4 * j + 2 * i + 1] = p.alpha * acc[4 * j + 2 * i + 1] + p.beta * c1;
                    }
                }
            } else if (p.alpha != 1.0f) {
#pragma unroll
                for (int k = 0; k < GPUML_MM_BN / 2; ++k)
                    acc[k] *= p.alpha;
            }
#if GPUML__EPI_EXTRA
#pragma unroll
            for (int j = 0; j < GPUML__NJ; ++j) {
                const int col = col0 + 8 * j + c_in;
                float b0 = 0.0f, b1 = 0.0f;
                (void)col;
#if GPUML_HAS_BIAS
                /* pair 4j + lane%4 of the tile's 128: register j/8 of lane 4(j%8) + lane%4 */
                b0 = __shfl_sync(0xffffffffu, bpre[j >> 3].x, 4 * (j & 7) + (lane & 3));
                b1 = __shfl_sync(0xffffffffu, bpre[j >> 3].y, 4 * (j & 7) + (lane & 3));
#endif
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    float v0 = gpuml__act(acc[4 * j + 2 * i] + b0);
                    float v1 = gpuml__act(acc[4 * j + 2 * i + 1] + b1);
#if GPUML_HAS_RESID
                    float r0, r1;
                    gpuml__load_pair(p.resid, p.ldr, row0 + r_in + 8 * i, col, p.M, p.N, r0, r1);
                    v0 += r0;
                    v1 += r1;
#endif
                    acc[4 * j + 2 * i] = v0;
                    acc[4 * j + 2 * i + 1] = v1;
                }
            }
#endif
#if GPUML_MM_TMA_STORE
            /* chunk = 64 rows x 128 bytes, 128B-swizzled like the C tensor map's box. */
#define GPUML__CHUNK_COLS (128 / GPUML__OUT_BYTES)
#define GPUML__NCHUNK (GPUML_MM_BN / GPUML__CHUNK_COLS)
#define GPUML__JPC (GPUML__CHUNK_COLS / 8)
#pragma unroll
            for (int ch = 0; ch < GPUML__NCHUNK; ++ch) {
                const int cc0 = col0 + ch * GPUML__CHUNK_COLS;
                if (cc0 >= p.N)
                    break; /* uniform across the warpgroup */
                if (cc0 + GPUML__CHUNK_COLS > p.N && (p.N & (16 / GPUML__OUT_BYTES - 1)) != 0) {
                    /* TMA stores write whole 16-byte chunks: past a ragged right edge they would
                     * overwrite up to 7 elements beyond N.  Store this chunk with masks. */
#pragma unroll
                    for (int jj = 0; jj < GPUML__JPC; ++jj) {
                        const int j = ch * GPUML__JPC + jj;
#pragma unroll
                        for (int i = 0; i < 2; ++i)
                            gpuml__store_pair(cbase, p.ldc, row0 + r_in + 8 * i, col0 + 8 * j + c_in, p.M, p.N,
                                              acc[4 * j + 2 * i], acc[4 * j + 2 * i + 1]);
                    }
                    continue;
                }
                const gpuml_u32 buf = epi_buf + (nst & 1) * GPUML_MM_EPI_CHUNK_BYTES;
                ++nst;
                if (ltid == 0)
                    gpuml__bulk_wait_read<1>(); /* the store that last read 'buf' is done */
                gpuml__named_bar(1 + cw, 128);
#pragma unroll
                for (int jj = 0; jj < GPUML__JPC; ++jj) {
                    const int j = ch * GPUML__JPC + jj;
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const float v0 = acc[4 * j + 2 * i], v1 = acc[4 * j + 2 * i + 1];
                        const int rr = r_in + 8 * i;
#if GPUML__OUT_ID == 3
                        const gpuml_u32 chunk16 = (gpuml_u32)(jj * 2 + ((lane & 3) >> 1));
                        const gpuml_u32 addr = buf + rr * 128 + ((chunk16 ^ (rr & 7)) << 4) + (lane & 1) * 8;
                        asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(v0), "f"(v1) : "memory");
#else
                        const gpuml_u32 addr = buf + rr * 128 + (((gpuml_u32)jj ^ (rr & 7)) << 4) + (lane & 3) * 4;
                        asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(gpuml__pack2(v0, v1)) : "memory");
#endif
                    }
                }
                gpuml__proxy_fence();
                gpuml__named_bar(1 + cw, 128);
                if (ltid == 0) {
                    gpuml__tma_store_2d(&tma_c, buf, cc0, row0);
                    gpuml__bulk_commit();
                }
            }
#else
#pragma unroll
            for (int j = 0; j < GPUML__NJ; ++j) {
#pragma unroll
                for (int i = 0; i < 2; ++i)
                    gpuml__store_pair(cbase, p.ldc, row0 + r_in + 8 * i, col0 + 8 * j + c_in, p.M, p.N,
                                      acc[4 * j + 2 * i], acc[4 * j + 2 * i + 1]);
            }
#endif
        }
#if GPUML_MM_TMA_STORE
        if (ltid == 0)
            gpuml__bulk_wait_all(); /* smem must outlive the last store's read */
#endif
    }
#if GPUML_MM_CLUSTER == 2
    /* no CTA may exit while its peer can still arrive on its barriers */
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
#endif
}
#endif /* !GPUML_TF32_NN */

/* ----------------------------------------- tf32 with B stored K x N (GPUML_TF32_NN=1) ------ */
#if GPUML_TF32_NN
/* tf32 wgmma reads shared-memory operands K-major only, and an NN B is N-major.  This kernel
 * computes the transposed problem C^T = B^T A^T instead: B^T is wgmma's A operand, loaded from
 * the N-major TMA tile into registers (the RS form takes any memory layout: a fragment is 32-bit
 * loads), and A^T is its B operand, K-major as A is stored.  No copy of B, no extra smem traffic
 * (a fragment load reads the 2 KB a wgmma would).  bench/NOTES_matmul_sm90.md has the budget.
 *
 * Kernel gpuml_matmul_sm90_nn: same parameters, block (384), smem (GPUML_MM_SMEM_BYTES) and
 * persistence as gpuml_matmul_sm90; tile 256 (m) x 128 (n) of C, so
 *     units = ceil(M/256) * ceil(N/128),  grid (min(units, #SMs), 1, 1).
 * Tensor maps (128B swizzle, zero fill): A FLOAT32 globalDim {K, M}, strides {lda*4}, box {32, 256};
 * B FLOAT32 globalDim {N, K}, strides {ldb*4}, box {32, 32}; C FLOAT32 as for the main kernel
 * (box {32, 64}).  group_m counts 128-row tiles here too (units of 256 rows take group_m / 2).
 *
 * Per stage (32 k): B tile = four 4 KB boxes of 32 k-rows x 32 n (128 B, swizzled: 16-byte chunk
 * c of row k at c ^ (k & 7)), then the A tile, 256 m-rows x 128 B.  Consumer warpgroup cw takes
 * n in [64cw, 64cw + 64): wgmma m64n256k8, M rows = its 64 n, N = the 256 m.  Row 16w + 8i + r
 * of warp w (r = lane / 4) is n = 32(w/2) + 4((2(w%2) + i) ^ 5(r/4)) + r%4: a warp's fragment
 * load (8 n x 4 k) and the epilogue's stores (C chunk 64 m x 32 n, same swizzle) both hit 32
 * distinct banks. */
#define GPUML_NN_BT_BYTES 16384 /* B tile of a stage: 32 k x 128 n */
#define GPUML_NN_AT_BYTES 32768 /* A tile of a stage: 256 m x 32 k */

/* D[64x256] (+)= A[64x8] (tf32 fragment in registers) * B[8x256] (K-major smem descriptor) */
static __device__ __forceinline__ void gpuml__wgmma_256_rs(float *d, const gpuml_u32 *a, gpuml_u64 db, int scale_d)
{
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "setp.ne.b32 p, %133, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" GPUML__D128_STR
                 "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n\t}"
                 : GPUML__D128(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

static __device__ __forceinline__ gpuml_u32 gpuml__lds32(gpuml_u32 addr)
{
    gpuml_u32 v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr));
    return v;
}

/* one k-block: fragments of the B tile into f (16 registers: f[4kk + 2s + i] is row i, k + 4s of
 * k-step kk), four RS wgmmas, then the stage is released.  The wgmmas are waited for at once:
 * a fragment load while an RS wgmma is in flight makes ptxas serialise every wgmma (C7513), and
 * the other consumer warpgroup's queued wgmmas keep the tensor cores busy meanwhile. */
static __device__ __forceinline__ void gpuml__nn_kblock(float *acc, gpuml_u32 bt, gpuml_u32 at, const gpuml_u32 *off,
                                                        int first, gpuml_u32 bar_release, int lane)
{
    gpuml_u32 f[16];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int x = 0; x < 4; ++x)
            f[4 * kk + x] = gpuml__lds32(bt + off[x] + kk * 1024);
    const gpuml_u64 db = gpuml__smem_desc(at, 16, 1024);
    gpuml__wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
        gpuml__wgmma_256_rs(acc, f + 4 * kk, db + (gpuml_u64)((kk * 32) >> 4), !first || kk != 0);
    gpuml__wgmma_commit();
    gpuml__wgmma_wait<0>();
    if (lane == 0)
        gpuml__mbar_arrive(bar_release);
}

static __device__ __forceinline__ void gpuml__store1(void *base, long long ld, int row, int col, int M, int N, float v)
{
    if (row < M && col < N)
        ((float *)base)[(gpuml_i64)row * ld + col] = v;
}

static __device__ __forceinline__ float gpuml__load1_masked(const void *base, long long ld, int row, int col, int M, int N)
{
    return row < M && col < N ? ((const float *)base)[(gpuml_i64)row * ld + col] : 0.0f;
}

extern "C" __global__ void __launch_bounds__(GPUML_MM_THREADS, 1)
    gpuml_matmul_sm90_nn(const __grid_constant__ gpuml_tensormap tma_a, const __grid_constant__ gpuml_tensormap tma_b,
                         const __grid_constant__ gpuml_tensormap tma_c, const gpuml_matmul_sm90_params p)
{
    extern __shared__ __align__(1024) unsigned char gpuml__mm_smem[];
    const gpuml_u32 base = (gpuml__smem_addr(gpuml__mm_smem) + 1023u) & ~1023u;
    const gpuml_u32 smem_bt = base;
    const gpuml_u32 smem_at = base + GPUML_MM_STAGES * GPUML_NN_BT_BYTES;
    const gpuml_u32 smem_epi = base + GPUML_MM_RING_BYTES;
    const gpuml_u32 bar_full = smem_epi + GPUML_MM_EPI_BYTES;
    const gpuml_u32 bar_empty = bar_full + 8 * GPUML_MM_STAGES;

    const int tid = threadIdx.x;
    const int wg = tid >> 7;
    const int lane = tid & 31;
    const int tiles_m = (p.M + 255) / 256;
    const int tiles_n = (p.N + 127) / 128;
    const int num_units = tiles_m * tiles_n;
    int group = (p.group_m > 0 ? p.group_m : 8) / 2;
    if (group < 1)
        group = 1;
    const int num_kb = (p.K + 31) / 32;

    if (tid == 0) {
        for (int s = 0; s < GPUML_MM_STAGES; ++s) {
            gpuml__mbar_init(bar_full + 8 * s, 1);
            gpuml__mbar_init(bar_empty + 8 * s, 8); /* lane 0 of each consumer warp */
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        /* ---------------- producer: one thread drives the TMA ring ---------------- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml_u64)&tma_a) : "memory");
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml_u64)&tma_b) : "memory");
            int stage = 0;
            gpuml_u32 phase = 0;
            gpuml__mm_walk wk;
            gpuml__walk_init(&wk, p.sk_iters, blockIdx.x, gridDim.x);
            int u, kb0, kb1;
            while (gpuml__walk_next(&wk, p.sk_dp, p.sk_iters, gridDim.x, num_units, num_kb, &u, &kb0, &kb1)) {
                int tm, tn;
                gpuml__unit_coords(u, tiles_m, tiles_n, group, tm, tn);
                const int m0 = tm * 256, n0 = tn * 128;
                for (int kb = kb0; kb < kb1; ++kb) {
                    gpuml__mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
                    const gpuml_u32 full = bar_full + 8 * stage;
                    gpuml__mbar_expect_tx(full, GPUML_NN_BT_BYTES + GPUML_NN_AT_BYTES);
                    const int k0 = kb * 32;
                    gpuml__tma_load_2d(smem_at + stage * GPUML_NN_AT_BYTES, &tma_a, k0, m0, full);
#pragma unroll
                    for (int q = 0; q < 4; ++q)
                        gpuml__tma_load_2d(smem_bt + stage * GPUML_NN_BT_BYTES + q * 4096, &tma_b, n0 + 32 * q, k0, full);
                    if (++stage == GPUML_MM_STAGES) {
                        stage = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        /* ---------------- consumers: 64 n x 256 m of C^T each ---------------- */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int cw = wg - 1;
        const int w = (tid >> 5) & 3;
        const int r = lane >> 2, qd = lane & 3;
        /* this thread's two 16-byte chunk columns (of 8 in a 32-n box) for rows i = 0, 1 */
        const int hx = (r >> 2) ? 5 : 0;
        const int uc[2] = {(2 * (w & 1)) ^ hx, (2 * (w & 1) + 1) ^ hx};
        /* fragment offsets in a stage's B tile: off[2s + i] = row i, k = qd + 4s (+ 8kk: +1024) */
        gpuml_u32 off[4];
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
            for (int i = 0; i < 2; ++i)
                off[2 * s + i] = (gpuml_u32)((2 * cw + (w >> 1)) * 4096 + (qd + 4 * s) * 128 +
                                             ((uc[i] ^ (qd + 4 * s)) << 4) + (r & 3) * 4);
        float acc[128];
        int stage = 0;
        gpuml_u32 phase = 0;
#if GPUML_MM_TMA_STORE
        const int ltid = tid & 127;
        const gpuml_u32 epi_buf = smem_epi + cw * 2 * GPUML_MM_EPI_CHUNK_BYTES;
        if (ltid == 0)
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml_u64)&tma_c) : "memory");
#endif
        gpuml__mm_walk wk;
        gpuml__walk_init(&wk, p.sk_iters, blockIdx.x, gridDim.x);
        int u, kb0, kb1;
        while (gpuml__walk_next(&wk, p.sk_dp, p.sk_iters, gridDim.x, num_units, num_kb, &u, &kb0, &kb1)) {
            int tm, tn;
            gpuml__unit_coords(u, tiles_m, tiles_n, group, tm, tn);
            for (int kb = kb0; kb < kb1; ++kb) {
                gpuml__mbar_wait(bar_full + 8 * stage, phase);
                gpuml__nn_kblock(acc, smem_bt + stage * GPUML_NN_BT_BYTES, smem_at + stage * GPUML_NN_AT_BYTES, off, kb == kb0,
                                 bar_empty + 8 * stage, lane);
                if (++stage == GPUML_MM_STAGES) {
                    stage = 0;
                    phase ^= 1u;
                }
            }
            const int seam = gpuml__walk_seam(&wk, blockIdx.x);
            if (seam >= 0) {   /* stream-K: the first piece of the tile leaves its sums; the second stores */
                const int sw = 2 * seam + cw;
                if (!gpuml__sk_merge<128>(acc, p.sk_cnt + sw, p.sk_ws + (gpuml_i64)sw * 16384, tid & 127,
                                     bar_empty + 8 * GPUML_MM_STAGES + 8 * cw, 1 + cw))
                    continue;
            }

            /* ---- epilogue: acc[4j + 2i + c] = C[m0 + 8j + 2qd + c][ncol[i]] ---- */
            const int m0 = tm * 256 + 2 * qd;
            const int nb0 = tn * 128 + cw * 64 + 32 * (w >> 1); /* this warp pair's 32-column chunk */
            const int ncol[2] = {nb0 + 4 * uc[0] + (r & 3), nb0 + 4 * uc[1] + (r & 3)};
            /* C_in and R: per row pair (c = 0, 1) one pointer a column, stepped 8 rows a j (the
             * scalar loads then share their address registers) */
            if (p.beta != 0.0f) {
                const float *q[2][2];
#pragma unroll
                for (int c = 0; c < 2; ++c)
#pragma unroll
                    for (int i = 0; i < 2; ++i)
                        q[c][i] = (const float *)p.c_in + (gpuml_i64)(m0 + c) * p.ldc_in + ncol[i];
#pragma unroll
                for (int j = 0; j < 32; ++j)
#pragma unroll
                    for (int c = 0; c < 2; ++c)
#pragma unroll
                        for (int i = 0; i < 2; ++i) {
                            const int ok = m0 + 8 * j + c < p.M && ncol[i] < p.N;
                            const float ci = ok ? q[c][i][(gpuml_i64)(8 * j) * p.ldc_in] : 0.0f;
                            acc[4 * j + 2 * i + c] = p.alpha * acc[4 * j + 2 * i + c] + p.beta * ci;
                        }
            } else if (p.alpha != 1.0f) {
#pragma unroll
                for (int k = 0; k < 128; ++k)
                    acc[k] *= p.alpha;
            }
#if GPUML__EPI_EXTRA
            {
                float bv[2] = {0.0f, 0.0f};
#if GPUML_HAS_BIAS
#pragma unroll
                for (int i = 0; i < 2; ++i)
                    bv[i] = ncol[i] < p.N ? __ldg(p.bias + ncol[i]) : 0.0f;
#endif
#pragma unroll
                for (int k = 0; k < 128; ++k)
                    acc[k] = gpuml__act(acc[k] + bv[(k >> 1) & 1]);
            }
#endif
            /* the residual is added as each value is stored (loads between barriers: fewer live) */
#if GPUML_HAS_RESID
#define GPUML__NN_OUT(j, i, c) \
    (acc[4 * (j) + 2 * (i) + (c)] + gpuml__load1_masked(p.resid, p.ldr, m0 + 8 * (j) + (c), ncol[i], p.M, p.N))
#else
#define GPUML__NN_OUT(j, i, c) acc[4 * (j) + 2 * (i) + (c)]
#endif
#if GPUML_MM_TMA_STORE
            /* four rounds of 64 m; each warp pair fills its 64 x 32 chunk (one buffer each) */
            const int ragged = nb0 + 32 > p.N && (p.N & 3) != 0; /* TMA would write past N */
            const gpuml_u32 buf = epi_buf + (w >> 1) * GPUML_MM_EPI_CHUNK_BYTES;
#pragma unroll
            for (int a = 0; a < 4; ++a) {
                const int mr = tm * 256 + 64 * a;
                if (mr >= p.M)
                    break; /* uniform across the warpgroup */
                if (ltid == 0)
                    gpuml__bulk_wait_read<0>(); /* the last round's stores have read both buffers */
                gpuml__named_bar(1 + cw, 128);
                if (nb0 < p.N) {
                    if (!ragged) {
#pragma unroll
                        for (int jj = 0; jj < 8; ++jj)
#pragma unroll
                            for (int i = 0; i < 2; ++i)
#pragma unroll
                                for (int c = 0; c < 2; ++c) {
                                    const int ml = 8 * jj + 2 * qd + c;
                                    const gpuml_u32 addr = buf + ml * 128 + ((uc[i] ^ (ml & 7)) << 4) + (r & 3) * 4;
                                    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(GPUML__NN_OUT(8 * a + jj, i, c))
                                                 : "memory");
                                }
                    } else {
#pragma unroll
                        for (int jj = 0; jj < 8; ++jj)
#pragma unroll
                            for (int i = 0; i < 2; ++i)
#pragma unroll
                                for (int c = 0; c < 2; ++c)
                                    gpuml__store1(p.c, p.ldc, m0 + 8 * (8 * a + jj) + c, ncol[i], p.M, p.N,
                                                  GPUML__NN_OUT(8 * a + jj, i, c));
                    }
                }
                gpuml__proxy_fence();
                gpuml__named_bar(1 + cw, 128);
                if (ltid == 0) {
#pragma unroll
                    for (int b = 0; b < 2; ++b) {
                        const int nc = tn * 128 + cw * 64 + 32 * b;
                        if (nc < p.N && !(nc + 32 > p.N && (p.N & 3) != 0))
                            gpuml__tma_store_2d(&tma_c, epi_buf + b * GPUML_MM_EPI_CHUNK_BYTES, nc, mr);
                    }
                    gpuml__bulk_commit();
                }
            }
#else
#pragma unroll
            for (int j = 0; j < 32; ++j)
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int c = 0; c < 2; ++c)
                        gpuml__store1(p.c, p.ldc, m0 + 8 * j + c, ncol[i], p.M, p.N, GPUML__NN_OUT(j, i, c));
#endif
#undef GPUML__NN_OUT
        }
#if GPUML_MM_TMA_STORE
        if (ltid == 0)
            gpuml__bulk_wait_all(); /* smem must outlive the last store's read */
#endif
    }
}
#endif /* GPUML_TF32_NN */

/* ------------------------------------------------------ 3xTF32 operand split ------ */
#if GPUML__IN_ID == 4
/* f32 GEMM at f32-level accuracy on the tf32 tensor cores ("3xTF32"): each f32 x is split
 * into big = x rounded to tf32 (nearest even) and small = (x - big) rounded to tf32, both
 * with their low 13 mantissa bits zero, so the tensor cores (which drop those bits) see them
 * exactly.  Then a*b ~= small_a*big_b + big_a*small_b + big_a*big_b (the dropped
 * small_a*small_b and the rounding of small leave ~2^-21 of |a*b|).  The host runs the GEMM
 * above over K' = 3K on operands written as K-concatenations, row r of
 *     A3 = [ small_a | bigf_a | big_a ]        B3 = [ bigf_b | small_b | big_b ]
 * (small terms first: they are summed while the accumulator is still small).  bigf is big
 * with Inf/NaN replaced by 0 and small is 0 there, so a non-finite input meets only the
 * other operand's big part (inf * b stays inf instead of inf * 0 = NaN from a cross term).
 * Rounding up past FLT_MAX would give inf: big is truncated there instead. */
static __device__ __forceinline__ float gpuml__tf32_rn(float x)
{
    const gpuml_u32 u = __float_as_uint(x);
    if ((u & 0x7F800000u) == 0x7F800000u)
        return x; /* inf, nan */
    gpuml_u32 r = (u + 0xFFFu + ((u >> 13) & 1u)) & 0xFFFFE000u;
    if ((r & 0x7F800000u) == 0x7F800000u)
        r = u & 0xFFFFE000u;
    return __uint_as_float(r);
}

/* dst[r, seg*K + k] for 0 <= r < rows, 0 <= k < K, seg = 0, 1, 2 (layouts above; b_side
 * picks B3's), from src[r*s_r + k*s_k] (strides in elements, any sign-free layout).  dst row
 * stride ld >= 3K; columns past 3K are not written.  trans = 1 when src is unit-stride along
 * r (not k): 32 x 32 tiles then go through shared memory so reads and writes both coalesce.
 * Block (256); any grid (a grid-stride loop over 32 x 32 tiles). */
extern "C" __global__ void __launch_bounds__(256)
    gpuml_mm_split3(const float *src, long long rows, long long K, long long s_r, long long s_k, float *dst,
                    long long ld, int b_side, int trans)
{
    __shared__ float tile[32][33];
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const long long tk = (K + 31) / 32, ntiles = tk * ((rows + 31) / 32);
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long r0 = (t / tk) * 32, k0 = (t % tk) * 32;
        float v[4];
        if (trans) {
            __syncthreads(); /* the previous tile's reads of 'tile' are done */
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const long long r = r0 + tx, k = k0 + ty + 8 * i;
                tile[ty + 8 * i][tx] = r < rows && k < K ? src[r * s_r + k * s_k] : 0.0f;
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < 4; ++i)
                v[i] = tile[tx][ty + 8 * i];
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const long long r = r0 + ty + 8 * i, k = k0 + tx;
                v[i] = r < rows && k < K ? src[r * s_r + k * s_k] : 0.0f;
            }
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const long long r = r0 + ty + 8 * i, k = k0 + tx;
            if (r >= rows || k >= K)
                continue;
            const float x = v[i], big = gpuml__tf32_rn(x);
            const int fin = (__float_as_uint(x) & 0x7F800000u) != 0x7F800000u;
            const float small = fin ? gpuml__tf32_rn(__fsub_rn(x, big)) : 0.0f, bigf = fin ? big : 0.0f;
            float *d = dst + r * ld + k;
            d[0] = b_side ? bigf : small;
            d[K] = b_side ? small : bigf;
            d[2 * K] = big;
        }
    }
}
#endif
