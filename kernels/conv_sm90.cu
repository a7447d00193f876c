/* Family "conv_sm90": the Hopper (sm_90a) implicit-GEMM conv2d forward: weights by TMA,
   activations gathered with cp.async by a producer warpgroup, wgmma.m64nNk16 with f32
   accumulators in one or two consumer warpgroups, f16 / bf16 NHWC activations and KRSC
   weights, fused epilogue.  tools/gen_kernels.sh emits kernels/matmul_mma.cu and
   kernels/conv_igemm.cu in front of this file (their helpers: gpuml__conv_params, the dtype
   conversions, the activations, the 8-wide loads and stores); neither defines a kernel here
   (GPUML_A_DT is not set, GPUML_CONV_SM90 is).

   y[n][p][q][k] = act(sum_{r,s,c} x[n][p*sh-ph+r*dh][q*sw-pw+s*dw][c] * w[k][r][s][c] + bias[k])
                   + res[n][p][q][k]          (x outside the image reads as 0)

   GEMM view as in conv_igemm.cu: M = N*P*Q rows, N_gemm = K columns, K_gemm = R*S*C,
   kg = (r*S + s)*C + c.  C % 64 == 0, so one 64-wide k tile (128 bytes of f16 / bf16, one
   128-byte swizzle row) is 64 channels of one tap (r, s) of one pixel.

   ==========================================================================================
   LAUNCH CONTRACT
   ==========================================================================================
   Kernel:  extern "C" __global__ void gpuml_conv_sm90(const __grid_constant__ gpuml__cw_tmap tma_w,
                                                       const __grid_constant__ gpuml__cw_tmap tma_x,
                                                       gpuml__conv_params p,
                                                       const __grid_constant__ gpuml__cw_tmap tma_y,
                                                       const __grid_constant__ gpuml__cw_tmap tma_r)
            kernelParams { &map_w, &map_x, &params, &map_y, &map_r } (maps 128 bytes each, 64-byte
            aligned; map_x any bytes unless GPUML_CW_TMA_A, map_y / map_r unless GPUML_CW_TMA_Y).
   Compile: sm_90a only, -DGPUML_CONV_SM90=1 plus
            GPUML_CONV_DT 1 f16 / 2 bf16 (x and w), or 0 f32 read as tf32 (y f32; a k tile is 32
            channels: C % 32 == 0, every "64" of a k tile below reads 32, and the tensor maps are
            FLOAT32 with 4-byte strides; GPUML_CONV_YNCHW 1: y and res [N][K][P][Q];
            GPUML_CW_RN n: sums of n k tiles added round-to-nearest, configurations 1, 2, 4);
            GPUML_CONV_YDT 0 f32 / 1 f16 / 2 bf16 (y and
            res); GPUML_EPI 0 none / 1 relu / 2 gelu (tanh) / 3 silu; GPUML_HAS_BIAS,
            GPUML_HAS_RESID 0/1; GPUML_CW_CFG (below); GPUML_CW_TMA_A 0/1: 1 only for 1x1
            windows with stride 1 and no padding, where x is the GEMM's A, a [M][C] matrix:
            map_x = x as 2-D, dtype as w's map, globalDim {C, M}, globalStrides {C*2},
            boxDim {64, BM}, otherwise as map_w (rows past M read as 0); GPUML_CW_TMA_Y 0/1/2: 1
            (16-bit y, no split, K % 8 == 0, y and res 16-byte aligned) writes y by TMA store
            (2: through one staging box, below):
            map_y = y as 2-D, y's dtype, globalDim {K, M}, globalStrides {K*2}, boxDim {64, 64},
            otherwise as map_w; map_r the same for res (with GPUML_HAS_RESID).
   Tile configurations (-DGPUML_CW_CFG=n); BM = 64 x consumer warpgroups, BK = 64:
       n   BM x BN   consumer WGs  threads  stages  CTAs/SM  dynamic smem bytes
       0   128x256   2             384      4       1        1024 + 4*49152 + 20480 + 256 = 218368
       1   128x128   2             384      6       1        1024 + 6*32768 + 20480 + 256 = 218368
       2   128x64    2             384      8       1        1024 + 8*24576 + 20480 + 256 = 218368
       3   64x128    1             256      4       2        1024 + 4*24576 + 10240 + 256 = 109824
       4   64x64     1             256      6       2        1024 + 6*16384 + 10240 + 256 = 109824
       5   192x128   3             512      4       1        1024 + 4*40960 + 30720 + 256 = 195840
            (5: no setmaxnreg, every warp at the launch's 128 registers; no per-run sums (GPUML_CW_RN))
            GPUML_CW_TMA_Y 1: a 64 x BN 16-bit staging tile per consumer warpgroup replaces the
            slab (20480 / 10240 above) and configurations 0 and 3 run 3 stages: 0 214272,
            1 230656, 2 214272, 3 91392, 4 107776, 5 214272 bytes.  GPUML_CW_TMA_Y 2: one 64 x 64 box
            (8192 bytes) per consumer warpgroup, used box after box; configuration 3 keeps its
            4 stages: 107776 bytes (the whole tile with 4 stages, 115968, is 256 bytes more
            than 2 CTAs an SM may have).  GPUML_HAS_BIAS adds BN x 4 bytes per consumer warpgroup
            (the staged bias): at most 231680 bytes (configuration 1 with TMA_Y 1).
            (GPUML_CW_SMEM below; set CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to it).
   Block:   (GPUML_CW_THREADS, 1, 1) = 128 x (1 + consumer WGs): warpgroup 0 is the producer.
   Grid:    (G, 1, 1), persistent: CTA b walks work units b, b + G, ...; any G >= 1 is correct;
            the host takes G = min(units, CTAs/SM x SMs).  Units = tiles_m * tiles_n * splits,
            u -> z = u / (tiles_m*tiles_n), then tm = rest / tiles_n, tn = rest % tiles_n (the
            column tiles of one row tile run side by side: x is read from DRAM once).
   Split-K: p.splits > 1: unit z takes k tiles [z*per, min(KT, (z+1)*per)), per = ceil(KT/splits)
            (KT = K_gemm / 64; every z must get one), and writes raw f32 partial sums to
            y + z*M*K: the host compiles that launch with GPUML_CONV_YDT=0 and no epilogue, and
            finishes with conv_igemm's gpuml_conv_splitk_reduce (same contract as there).
   Tensor map (cuTensorMapEncodeTiled): w as a 2-D matrix, dtype FLOAT16 / BFLOAT16,
            globalDim {K_gemm, K}, globalStrides {K_gemm*2}, boxDim {64, BN}, elementStrides
            {1, 1}, no interleave, SWIZZLE_128B, L2 promotion 256B, OOB fill NONE (zeros: the
            rows past K read as 0).
   Host preconditions (not checked here): contiguous x, w, y, res; C % 64 == 0; x and w
            16-byte aligned; N*H*W*C < 2^31 (32-bit element offsets into x); M, K >= 1;
            bias f32 4-byte aligned; res has y's dtype and shape.
   Edges: rows past M and taps in the padding are zero-filled (cp.async src-size 0); columns
            past K come from the tensor map's zero fill; stores are masked; K % 8 != 0 or
            unaligned y / res store element-wise.
   Design: per k tile the producer warpgroup cp.asyncs BM rows x 128 bytes of x (8 threads a
   row: coalesced) into the 128B-swizzled layout wgmma reads (16-byte chunk j of row r at
   chunk j ^ (r & 7)), and thread 0 issues the weight tile's TMA on the same "full" mbarrier
   (expect_tx).  cp.async writes are generic-proxy writes and wgmma reads through the async
   proxy, so each producer thread waits for its copies of GPUML_CW_LAG (STAGES - 2) tiles back
   (cp.async.wait_group), fences (fence.proxy.async), __syncwarp, and lane 0 of each warp
   arrives on that tile's full barrier (count 4 + 1).  With GPUML_CW_TMA_A (1x1, stride 1,
   unpadded) thread 0 loads x's tile by TMA as well and the other producer threads idle.
   Consumers wait on full, issue 4 wgmmas (k 16 each), release the previous stage's "empty"
   barrier after wgmma.wait_group 1 (count: one lane of every consumer warp).  The producer runs ahead into the next unit while consumers run the epilogue:
   act(acc + bias) to a per-warpgroup f32 slab (64 rows x 32 columns at a time), then 8
   consecutive columns a thread, + residual, converted, 16-byte stores.  With GPUML_CW_TMA_Y the
   epilogue is gpuml__cw_epi_tma: 16-bit pairs from the accumulators into a swizzled staging
   tile, TMA stores issued by one thread, the warpgroup on to the next unit at once (the 1x1
   layers with K_gemm = 64 are store-bound: bench/NOTES_conv_igemm.md).
   ========================================================================================== */

#if defined(GPUML_CONV_SM90) && (GPUML_CONV_DT == 0 || GPUML_CONV_DT == 1 || GPUML_CONV_DT == 2)
#ifndef GPUML_CW_CFG
#define GPUML_CW_CFG 1
#endif
#ifndef GPUML_CONV_BWF
#define GPUML_CONV_BWF 0    /* 1: the backward filter kernel (gpuml_conv_bwf_sm90, at the end) instead of the forward */
#endif
#ifndef GPUML_CW_TMA_A
#define GPUML_CW_TMA_A 0    /* 1: 1x1, stride 1, no padding: x is the GEMM's A [M][C], loaded by TMA;
                               2: TMA im2col loads (any window, stride, padding, dilation); 0: cp.async gather */
#endif
#ifndef GPUML_CW_TMA_Y
#define GPUML_CW_TMA_Y 0    /* 1: the epilogue stages y's whole 64 x BN tile in smem and writes it by TMA store
                               (16-bit y); 2: the same through one 64 x 64 box reused box after box */
#endif
#if GPUML_CW_TMA_Y && GPUML_CONV_YDT == 0
#error "GPUML_CW_TMA_Y needs a 16-bit y"
#endif

/*                  BN   consumer WGs  stages  CTAs/SM */
#if GPUML_CW_CFG == 0
#define GPUML_CW_BN 256
#define GPUML_CW_CWG 2
#define GPUML_CW_STAGES (GPUML_CW_TMA_Y ? 3 : 4)   /* TMA_Y: the 64 KB staging tile takes a stage */
#define GPUML_CW_MINB 1
#elif GPUML_CW_CFG == 1
#define GPUML_CW_BN 128
#define GPUML_CW_CWG 2
#define GPUML_CW_STAGES 6
#define GPUML_CW_MINB 1
#elif GPUML_CW_CFG == 2
#define GPUML_CW_BN 64
#define GPUML_CW_CWG 2
#define GPUML_CW_STAGES 8
#define GPUML_CW_MINB 1
#elif GPUML_CW_CFG == 3
#define GPUML_CW_BN 128
#define GPUML_CW_CWG 1
#define GPUML_CW_STAGES (GPUML_CW_TMA_Y == 1 ? 3 : 4)   /* the whole 16 KB tile staged: 2 CTAs/SM fit with 3; one 8 KB box: 4 */
#define GPUML_CW_MINB 2
#elif GPUML_CW_CFG == 4
#define GPUML_CW_BN 64
#define GPUML_CW_CWG 1
#define GPUML_CW_STAGES 6
#define GPUML_CW_MINB 2
#else   /* 5: 192 x 128, three consumer warpgroups at the launch's 128 registers (no setmaxnreg) */
#define GPUML_CW_BN 128
#define GPUML_CW_CWG 3
#define GPUML_CW_STAGES 4
#define GPUML_CW_MINB 1
#endif
#define GPUML_CW_BM (64 * GPUML_CW_CWG)
#define GPUML_CW_THREADS (128 * (1 + GPUML_CW_CWG))
#define GPUML_CW_A_BYTES (GPUML_CW_BM * 128)
#define GPUML_CW_B_BYTES (GPUML_CW_BN * 128)
#define GPUML_CW_STAGE_BYTES (GPUML_CW_A_BYTES + GPUML_CW_B_BYTES)
#define GPUML_CW_EPI_COLS 32
#if defined(GPUML_CONV_YNCHW) && GPUML_CONV_YNCHW
#define GPUML_CW_SROW (GPUML_CW_EPI_COLS + 2)                     /* read along columns: 2-way conflicts */
#else
#define GPUML_CW_SROW (GPUML_CW_EPI_COLS + 8)                     /* f32 slab row, padded */
#endif
#define GPUML_CW_SLAB_BYTES (64 * GPUML_CW_SROW * 4)              /* per consumer warpgroup */
#define GPUML_CW_YBOXES (GPUML_CW_TMA_Y == 2 ? 1 : GPUML_CW_BN / 64)   /* TMA_Y staging boxes (64 x 64), per consumer warpgroup */
#define GPUML_CW_Y_BYTES (GPUML_CW_YBOXES * 8192)
#if GPUML_CW_TMA_Y
#define GPUML_CW_EPI_BYTES (GPUML_CW_CWG * GPUML_CW_Y_BYTES)
#else
#define GPUML_CW_EPI_BYTES (GPUML_CW_CWG * GPUML_CW_SLAB_BYTES)
#endif
/* the bias of each consumer warpgroup's block, staged in smem (bench/NOTES_conv_igemm.md, "the bias in
   shared memory"): each thread loads its BN/128 values from global memory when the unit starts, so the
   load's latency hides behind the unit's k loop, and the epilogue reads them from smem */
#if GPUML_HAS_BIAS
#define GPUML_CW_BIAS_BYTES (GPUML_CW_CWG * GPUML_CW_BN * 4)
#else
#define GPUML_CW_BIAS_BYTES 0
#endif
#define GPUML_CW_BPT ((GPUML_CW_BN + 127) / 128)                 /* bias values a consumer thread loads */
#ifndef GPUML_CW_EJ
#define GPUML_CW_EJ (GPUML_CW_CWG == 2 ? 8 : 4)   /* TMA_Y epilogue: column groups of 8 whose loads are batched */
#endif
#define GPUML_CW_SMEM (1024 + GPUML_CW_STAGES * GPUML_CW_STAGE_BYTES + GPUML_CW_EPI_BYTES + GPUML_CW_BIAS_BYTES + 256)
/* k tiles the producer keeps in flight before it signals one (LAG + 1 gathers in flight).  At
   most STAGES - 2: consumers free a stage only after the next tile's wgmmas are issued, so
   with LAG = STAGES - 1 the producer would wait for a slot the consumer frees only after the
   very tile the producer has not signalled yet.  Device run 1 (LAG 2 everywhere): the 6- and
   8-stage configurations ran at ~3 TFLOP/s per SM, bound by 3 gathers in flight. */
#ifndef GPUML_CW_LAG
#define GPUML_CW_LAG (GPUML_CW_STAGES - 2)
#endif
#if GPUML_CW_LAG > GPUML_CW_STAGES - 2 || GPUML_CW_LAG < 0
#error "GPUML_CW_LAG must be in [0, STAGES - 2]"
#endif
#if GPUML_CONV_DT == 1
#define GPUML__CW_TYPES ".f16.f16"
#elif GPUML_CONV_DT == 2
#define GPUML__CW_TYPES ".bf16.bf16"
#endif
/* f32 x and w (GPUML_CONV_DT 0) run as tf32 (the tensor cores read the top 19 bits of each f32;
   the host rounds or splits beforehand where it wants more): a 128-byte swizzle row is 32
   channels, wgmma k8, no transpose immediates; GPUML_CONV_YNCHW 1 writes y (and reads res) as
   [N][K][P][Q]; GPUML_CW_RN n sums each run of n k tiles in separate accumulators and adds them
   round-to-nearest into the total (the tensor cores' own accumulation truncates: for 3xTF32's
   f32-level error over long K_gemm); GPUML__CW_BKE channels per k tile, GPUML__CW_ES bytes each */
#if GPUML_CONV_DT == 0
#define GPUML__CW_TYPES ".tf32.tf32"
#define GPUML__CW_KI "k8"
#define GPUML__CW_TAIL ", p, 1, 1;\n\t}"
#define GPUML__CW_ES 4
#if GPUML_CONV_YDT != 0
#error "f32 x takes an f32 y"
#endif
#else
#define GPUML__CW_KI "k16"
#define GPUML__CW_TAIL ", p, 1, 1, 0, 0;\n\t}"
#define GPUML__CW_ES 2
#endif
#define GPUML__CW_BKE (128 / GPUML__CW_ES)
#ifndef GPUML_CONV_YNCHW
#define GPUML_CONV_YNCHW 0
#endif
#ifndef GPUML_CW_RN
#define GPUML_CW_RN 0
#endif
#if GPUML_CW_RN && (GPUML_CW_BN * (GPUML_CW_CWG == 2 ? 1 : GPUML_CW_MINB) > 128 || GPUML_CW_CWG == 3)
#error "GPUML_CW_RN doubles the accumulators: BN 64, or BN 128 with one CTA an SM"
#endif

struct __align__(64) gpuml__cw_tmap { unsigned long long opaque[16]; };

/* ---------------------------------------------------------------- PTX wrappers ------ */
/* im2col mode: BM pixels x 64 channels starting at pixel (w, h, n), channel c, each pixel shifted
   by the filter tap (ow, oh); pixels outside the image read as 0 */
static __device__ __forceinline__ void gpuml__cw_tma_im2col(gpuml__u32 dst, const gpuml__cw_tmap *map, int c, int w, int h, int n,
                                                            gpuml__u16 ow, gpuml__u16 oh, gpuml__u32 bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                 ::"r"(dst), "l"((gpuml__u64)map), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh)
                 : "memory");
}
static __device__ __forceinline__ void gpuml__cw_cp16(gpuml__u32 dst, const void *src, gpuml__u32 bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
/* shared-memory matrix descriptor, K-major, 128-byte swizzle: 8-row groups 1024 bytes apart */
static __device__ __forceinline__ gpuml__u64 gpuml__cw_desc(gpuml__u32 addr) { return gpuml__smem_desc(addr, 16, 1024); }

/* D[64x64] (+)= A[64x16] * B[16x64], both K-major in 128B-swizzled smem; scale_d 0 overwrites D */
static __device__ __forceinline__ void gpuml__cw_wgmma64(float *d, gpuml__u64 da, gpuml__u64 db, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64" GPUML__CW_KI ".f32" GPUML__CW_TYPES " {"
        GPUML__D32_STR
        "}, %32, %33" GPUML__CW_TAIL
        : GPUML__D32(d)
        : "l"(da), "l"(db), "r"(scale_d));
}
/* D[64x128] (+)= A[64x16] * B[16x128] in 128B-swizzled smem; scale_d 0 overwrites D.  TAIL ends the
   instruction: GPUML__CW_TAIL (both K-major) here; the backward filter kernel's MN-major operands
   (16-bit types: ", p, 1, 1, 1, 1") define a second function from the same body. */
#define GPUML__CW_DEF_WGMMA128(NAME, TAIL) \
static __device__ __forceinline__ void NAME(float *d, gpuml__u64 da, gpuml__u64 db, int scale_d) \
{ \
    asm volatile( \
        "{\n\t.reg .pred p;\n\t" \
        "setp.ne.b32 p, %66, 0;\n\t" \
        "wgmma.mma_async.sync.aligned.m64n128" GPUML__CW_KI ".f32" GPUML__CW_TYPES " {" \
        GPUML__D64_STR \
        "}, %64, %65" TAIL \
        : GPUML__D64(d) \
        : "l"(da), "l"(db), "r"(scale_d)); \
}
GPUML__CW_DEF_WGMMA128(gpuml__cw_wgmma128, GPUML__CW_TAIL)
/* D[64x256] (+)= A[64x16] * B[16x256], both K-major in 128B-swizzled smem; scale_d 0 overwrites D */
static __device__ __forceinline__ void gpuml__cw_wgmma256(float *d, gpuml__u64 da, gpuml__u64 db, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %130, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256" GPUML__CW_KI ".f32" GPUML__CW_TYPES " {"
        GPUML__D128_STR
        "}, %128, %129" GPUML__CW_TAIL
        : GPUML__D128(d)
        : "l"(da), "l"(db), "r"(scale_d));
}

#if GPUML_CW_BN == 256
#define GPUML__CW_MMA gpuml__cw_wgmma256
#elif GPUML_CW_BN == 128
#define GPUML__CW_MMA gpuml__cw_wgmma128
#else
#define GPUML__CW_MMA gpuml__cw_wgmma64
#endif

/* work unit -> split slice z, row tile tm, column tile tn and the k tiles [kb0, kb1) */
static __device__ __forceinline__ void gpuml__cw_unit(const gpuml__conv_params &p, int u, int tiles_m, int tiles_n, int KT,
                                                      int &z, int &tm, int &tn, int &kb0, int &kb1)
{
    const int per_z = tiles_m * tiles_n;
    z = u / per_z;
    const int rest = u - z * per_z;
    tm = rest / tiles_n;
    tn = rest - tm * tiles_n;
    const int per = (KT + p.splits - 1) / p.splits;
    kb0 = z * per;
    kb1 = kb0 + per < KT ? kb0 + per : KT;
}

#if GPUML_CW_TMA_Y
/* The TMA-store epilogue of one consumer warpgroup's 64 x BN block at (row0 < M, col0): act(acc +
   bias) (+ the residual, TMA-loaded into the staging tile first) as 16-bit pairs straight from the
   accumulators into the staging tile stg (BN/64 boxes of 64 rows x 128 bytes, 128-byte swizzled
   like y's tensor map: 16-byte chunk j of row r at chunk j ^ (r & 7), so the 8 rows of a warp's
   b32 stores fall on 32 distinct banks), then thread 0 of the warpgroup stores the boxes by TMA
   (rows past M and columns past K are not written) and the warpgroup moves on.  Before it
   overwrites stg, the next call waits until those stores have read it (bulk wait_group.read).
   With GPUML_CW_YBOXES < BN/64 (GPUML_CW_TMA_Y 2: one box) the tile goes out in rounds of
   YBOXES boxes through the same staging: write, fence, barrier, TMA store, and the next round
   first waits until that store has read the staging (the warpgroup waits for an 8 KB smem read,
   not for DRAM). */
static __device__ __forceinline__ void gpuml__cw_epi_tma(const gpuml__conv_params &p, const float *acc, const gpuml__cw_tmap *tma_y,
                                                         const gpuml__cw_tmap *tma_r, gpuml__u32 stg, gpuml__u32 bar_res,
                                                         gpuml__u32 &rphase, int row0, int col0, int ltid, const float *sb)
{
    typedef typename gpuml__dt<GPUML_CONV_YDT>::T CT;
    constexpr int BN = GPUML_CW_BN;
    const int K = p.K, lane = ltid & 31, warp = ltid >> 5, cw = (int)(threadIdx.x >> 7) - 1;
    (void)sb;
    const int nbox = (K - col0 + 63) / 64 < BN / 64 ? (K - col0 + 63) / 64 : BN / 64;
    constexpr int SB = GPUML_CW_YBOXES;
#pragma unroll
    for (int b0 = 0; b0 < BN / 64; b0 += SB) {
        if (b0 >= nbox) break;          /* uniform */
        const int nb = nbox - b0 < SB ? nbox - b0 : SB;
        if (ltid == 0) {
            gpuml__bulk_wait_read<0>(); /* the previous round's (or block's) stores have read stg */
#if GPUML_HAS_RESID
            gpuml__mbar_expect_tx(bar_res, (unsigned)nb * 8192u);
            for (int b = 0; b < nb; ++b) gpuml__tma_load_2d(stg + b * 8192, tma_r, col0 + 64 * (b0 + b), row0, bar_res);
#endif
        }
        gpuml__named_bar(1 + cw, 128);  /* nobody writes stg before that */
#if GPUML_HAS_RESID
        gpuml__mbar_wait(bar_res, rphase);
        rphase ^= 1u;
#else
        (void)tma_r; (void)bar_res; (void)rphase;
#endif
        /* box by box, GPUML_CW_EJ column groups of 8 at a time: the group's bias pairs (smem) and
           residual words are all loaded before its first store, so their latencies overlap (the
           st.shared asm is a compiler barrier: loads written after it wait for it) */
#pragma unroll
        for (int b = 0; b < SB; ++b) {
            if (b >= nb) break;         /* uniform */
#pragma unroll
            for (int g = 0; g < 8; g += GPUML_CW_EJ) {
                float2 bv[GPUML_CW_EJ];
#if GPUML_HAS_RESID
                gpuml__u32 rv[GPUML_CW_EJ][2];
#endif
#pragma unroll
                for (int jj = g; jj < g + GPUML_CW_EJ; ++jj) {
                    const int c = 64 * (b0 + b) + 8 * jj + 2 * (lane & 3);   /* this thread's column pair in the block */
                    bv[jj - g] = GPUML_HAS_BIAS ? *(const float2 *)(sb + c) : make_float2(0.0f, 0.0f);
#if GPUML_HAS_RESID
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int rr = 16 * warp + (lane >> 2) + 8 * i;
                        const gpuml__u32 addr = stg + (gpuml__u32)(b * 8192 + rr * 128 + ((jj ^ (rr & 7)) << 4) + (lane & 3) * 4);
                        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(rv[jj - g][i]) : "r"(addr) : "memory");
                    }
#endif
                }
#pragma unroll
                for (int jj = g; jj < g + GPUML_CW_EJ; ++jj) {
                    const int j = 8 * (b0 + b) + jj;
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int rr = 16 * warp + (lane >> 2) + 8 * i;
                        const gpuml__u32 addr = stg + (gpuml__u32)(b * 8192 + rr * 128 + ((jj ^ (rr & 7)) << 4) + (lane & 3) * 4);
                        float v0 = gpuml__mma_act<GPUML_EPI>(acc[4 * j + 2 * i] + bv[jj - g].x);
                        float v1 = gpuml__mma_act<GPUML_EPI>(acc[4 * j + 2 * i + 1] + bv[jj - g].y);
#if GPUML_HAS_RESID
                        v0 += gpuml__mma_ld<GPUML_CONV_YDT>((CT)(rv[jj - g][i] & 0xffffu));
                        v1 += gpuml__mma_ld<GPUML_CONV_YDT>((CT)(rv[jj - g][i] >> 16));
#endif
                        const gpuml__u32 w = (gpuml__u32)gpuml__mma_st<GPUML_CONV_YDT>(v0) | ((gpuml__u32)gpuml__mma_st<GPUML_CONV_YDT>(v1) << 16);
                        asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(w) : "memory");
                    }
                }
            }
        }
        gpuml__proxy_fence();           /* the generic-proxy writes, visible to the TMA store */
        gpuml__named_bar(1 + cw, 128);
        if (ltid == 0) {
            for (int b = 0; b < nb; ++b) gpuml__tma_store_2d(tma_y, stg + b * 8192, col0 + 64 * (b0 + b), row0);
            gpuml__bulk_commit();
        }
    }
}
#endif

#if GPUML_CW_RN
/* the consumer's k loop with GPUML_CW_RN: every run of RN k tiles is summed by the tensor cores
   into accr (scale_d 0 at the run's first wgmma), then added into acc with round-to-nearest FADDs
   (acc = accr for the first run); stages are freed after the wgmmas that read them are done */
static __device__ __forceinline__ void gpuml__cw_mainloop_rn(float *acc, float *accr, int kb0, int kb1, int &stage, gpuml__u32 &phase,
                                                             gpuml__u32 bar_full, gpuml__u32 bar_empty, gpuml__u32 smem_a_wg,
                                                             gpuml__u32 smem_b, int lane)
{
    int prev = -1;
    for (int kb = kb0; kb < kb1; ++kb) {
        const int run = (kb - kb0) % GPUML_CW_RN;
        gpuml__mbar_wait(bar_full + 8 * stage, phase);
        const gpuml__u64 da = gpuml__cw_desc(smem_a_wg + stage * GPUML_CW_A_BYTES);
        const gpuml__u64 db = gpuml__cw_desc(smem_b + stage * GPUML_CW_B_BYTES);
        gpuml__wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
            GPUML__CW_MMA(accr, da + (gpuml__u64)(2 * kk), db + (gpuml__u64)(2 * kk), (run != 0) | kk);
        gpuml__wgmma_commit();
        if (run == GPUML_CW_RN - 1 || kb == kb1 - 1) {
            gpuml__wgmma_wait<0>();
            if (lane == 0) {
                if (prev >= 0) gpuml__mbar_arrive(bar_empty + 8 * prev);
                gpuml__mbar_arrive(bar_empty + 8 * stage);
            }
            prev = -1;
            if (kb - kb0 < GPUML_CW_RN) {
#pragma unroll
                for (int i = 0; i < GPUML_CW_BN / 2; i++) acc[i] = accr[i];
            } else {
#pragma unroll
                for (int i = 0; i < GPUML_CW_BN / 2; i++) acc[i] = __fadd_rn(acc[i], accr[i]);
            }
        } else {
            gpuml__wgmma_wait<1>();   /* the previous tile's wgmmas are done: free its stage */
            if (prev >= 0 && lane == 0) gpuml__mbar_arrive(bar_empty + 8 * prev);
            prev = stage;
        }
        if (++stage == GPUML_CW_STAGES) { stage = 0; phase ^= 1u; }
    }
}
#endif

#if !GPUML_CONV_BWF
extern "C" __global__ void __launch_bounds__(GPUML_CW_THREADS, GPUML_CW_MINB)
gpuml_conv_sm90(const __grid_constant__ gpuml__cw_tmap tma_w, const __grid_constant__ gpuml__cw_tmap tma_x,
                const gpuml__conv_params p, const __grid_constant__ gpuml__cw_tmap tma_y,
                const __grid_constant__ gpuml__cw_tmap tma_r)
{
    constexpr int BM = GPUML_CW_BM, BN = GPUML_CW_BN, STAGES = GPUML_CW_STAGES, LAG = GPUML_CW_LAG;
    constexpr int RPT = BM / 16;                    /* A rows per producer thread per k tile */
    extern __shared__ __align__(1024) unsigned char gpuml__cw_smem[];
    const gpuml__u32 base = (gpuml__mma_smem_addr(gpuml__cw_smem) + 1023u) & ~1023u;
    const gpuml__u32 smem_a = base, smem_b = base + STAGES * GPUML_CW_A_BYTES;
    const gpuml__u32 smem_slab = base + STAGES * GPUML_CW_STAGE_BYTES;   /* the slab, or TMA_Y's staging tiles */
    const gpuml__u32 smem_bias = smem_slab + GPUML_CW_EPI_BYTES;                /* GPUML_CW_BIAS_BYTES */
    const gpuml__u32 bar_full = smem_bias + GPUML_CW_BIAS_BYTES, bar_empty = bar_full + 8 * STAGES;
    const gpuml__u32 bar_res = bar_empty + 8 * STAGES;   /* TMA_Y with a residual: one per consumer warpgroup */
    unsigned char *slab_ptr = gpuml__cw_smem + (smem_slab - gpuml__mma_smem_addr(gpuml__cw_smem));
    float *bias_ptr = (float *)(gpuml__cw_smem + (smem_bias - gpuml__mma_smem_addr(gpuml__cw_smem)));

    const int tid = (int)threadIdx.x, wg = tid >> 7, lane = tid & 31;
    const int M = p.M, K = p.K, C = p.C, S = p.S, H = p.H, W = p.W, PQ = p.P * p.Q;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (K + BN - 1) / BN, KT = p.Kg / GPUML__CW_BKE;
    const int units = tiles_m * tiles_n * p.splits;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            /* gather: each producer warp + the TMA's expect_tx; TMA A: the expect_tx alone */
            gpuml__mbar_init(bar_full + 8 * s, GPUML_CW_TMA_A ? 1 : 4 + 1);   /* lane 0 of each producer warp */
            gpuml__mbar_init(bar_empty + 8 * s, 4 * GPUML_CW_CWG);  /* one lane of every consumer warp */
        }
        for (int c = 0; c < GPUML_CW_CWG; ++c) gpuml__mbar_init(bar_res + 8 * c, 1);   /* the expect_tx */
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        /* ------------------------------ producer warpgroup ------------------------------ */
#if GPUML_CW_CWG == 2
        asm volatile("setmaxnreg.dec.sync.aligned.u32 56;");
#endif
#if GPUML_CW_TMA_A
        /* A = x as a [M][C] matrix (k tile kb = channels 64 kb..), or (2) x's im2col rows for
           tap (r, s): one thread issues both loads */
        if (tid == 0) {
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml__u64)&tma_w) : "memory");
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml__u64)&tma_x) : "memory");
            int stage = 0;
            gpuml__u32 phase = 0;
            for (int u = (int)blockIdx.x; u < units; u += (int)gridDim.x) {
                int z, tm, tn, kb0, kb1;
                gpuml__cw_unit(p, u, tiles_m, tiles_n, KT, z, tm, tn, kb0, kb1);
#if GPUML_CW_TMA_A == 2
                /* the tile's first output pixel -> the top-left input pixel of its window */
                const int m0 = tm * BM, ni = m0 / PQ, rem = m0 - ni * PQ, pp = rem / p.Q, qq = rem - pp * p.Q;
                const int w0 = qq * p.stride_w - p.pad_w, h0 = pp * p.stride_h - p.pad_h;
                const int rs = kb0 * GPUML__CW_BKE / C;
                int cc = kb0 * GPUML__CW_BKE - rs * C, rr = rs / S, ss = rs - rr * S;
#endif
                for (int kb = kb0; kb < kb1; ++kb) {
                    gpuml__mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
                    gpuml__mbar_expect_tx(bar_full + 8 * stage, GPUML_CW_A_BYTES + GPUML_CW_B_BYTES);
#if GPUML_CW_TMA_A == 2
                    gpuml__cw_tma_im2col(smem_a + stage * GPUML_CW_A_BYTES, &tma_x, cc, w0, h0, ni, (gpuml__u16)(ss * p.dil_w),
                                         (gpuml__u16)(rr * p.dil_h), bar_full + 8 * stage);
                    cc += GPUML__CW_BKE;
                    if (cc == C) {
                        cc = 0;
                        if (++ss == S) { ss = 0; rr++; }
                    }
#else
                    gpuml__tma_load_2d(smem_a + stage * GPUML_CW_A_BYTES, &tma_x, kb * GPUML__CW_BKE, tm * BM, bar_full + 8 * stage);
#endif
                    gpuml__tma_load_2d(smem_b + stage * GPUML_CW_B_BYTES, &tma_w, kb * GPUML__CW_BKE, tn * BN, bar_full + 8 * stage);
                    if (++stage == STAGES) { stage = 0; phase ^= 1u; }
                }
            }
        }
#else
        const int lc = tid & 7, r0 = tid >> 3;      /* 16-byte chunk lc of rows r0 + 16 i */
        const gpuml__u32 a_off = (gpuml__u32)(r0 * 128 + ((lc ^ (r0 & 7)) << 4));
        const char *X = (const char *)p.x;
        if (tid == 0) asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml__u64)&tma_w) : "memory");
        int stage = 0, sig = 0, pending = 0;
        gpuml__u32 phase = 0;
        for (int u = (int)blockIdx.x; u < units; u += (int)gridDim.x) {
            int z, tm, tn, kb0, kb1;
            gpuml__cw_unit(p, u, tiles_m, tiles_n, KT, z, tm, tn, kb0, kb1);
            const int m0 = tm * BM, n0 = tn * BN;
            int xoff[RPT], ih0[RPT], iw0[RPT];
#pragma unroll
            for (int i = 0; i < RPT; i++) {
                const int m = m0 + r0 + 16 * i;
                if (m < M) {
                    const int ni = m / PQ, rem = m - ni * PQ, pp = rem / p.Q, qq = rem - pp * p.Q;
                    xoff[i] = ni * H * W * C + lc * (16 / GPUML__CW_ES);
                    ih0[i] = pp * p.stride_h - p.pad_h;
                    iw0[i] = qq * p.stride_w - p.pad_w;
                } else {
                    xoff[i] = 0;
                    ih0[i] = -0x40000000;
                    iw0[i] = 0;
                }
            }
            const int rs = kb0 * GPUML__CW_BKE / C;
            int cc = kb0 * GPUML__CW_BKE - rs * C, rr = rs / S, ss = rs - rr * S;
            for (int kb = kb0; kb < kb1; ++kb) {
                gpuml__mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
                if (tid == 0) {
                    gpuml__mbar_expect_tx(bar_full + 8 * stage, GPUML_CW_B_BYTES);
                    gpuml__tma_load_2d(smem_b + stage * GPUML_CW_B_BYTES, &tma_w, kb * GPUML__CW_BKE, n0, bar_full + 8 * stage);
                }
                const gpuml__u32 sa = smem_a + stage * GPUML_CW_A_BYTES + a_off;
                const int dh = rr * p.dil_h, dw = ss * p.dil_w;
#pragma unroll
                for (int i = 0; i < RPT; i++) {
                    const int ih = ih0[i] + dh, iw = iw0[i] + dw;
                    const bool ok = (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
                    const char *src = ok ? X + (gpuml__i64)(xoff[i] + (ih * W + iw) * C + cc) * GPUML__CW_ES : X;
                    gpuml__cw_cp16(sa + i * 16 * 128, src, ok ? 16u : 0u);
                }
                gpuml__mma_cp_commit();
                cc += GPUML__CW_BKE;
                if (cc == C) {
                    cc = 0;
                    if (++ss == S) { ss = 0; rr++; }
                }
                if (++stage == STAGES) { stage = 0; phase ^= 1u; }
                /* the copies of LAG tiles back have landed: make them visible to wgmma */
                if (pending == LAG) {
                    gpuml__mma_cp_wait<LAG>();
                    gpuml__proxy_fence();
                    __syncwarp();                  /* the warp's copies are in and fenced: one arrival */
                    if (lane == 0) gpuml__mbar_arrive(bar_full + 8 * sig);
                    if (++sig == STAGES) sig = 0;
                } else {
                    pending++;
                }
            }
        }
        gpuml__mma_cp_wait<0>();
        gpuml__proxy_fence();
        __syncwarp();
        for (; pending > 0; pending--) {
            if (lane == 0) gpuml__mbar_arrive(bar_full + 8 * sig);
            if (++sig == STAGES) sig = 0;
        }
#endif
    } else {
        /* ------------------------------ consumer warpgroups ------------------------------ */
#if GPUML_CW_CWG == 2
        asm volatile("setmaxnreg.inc.sync.aligned.u32 224;");
#endif
        const int cw = wg - 1, ltid = tid & 127;
#if GPUML_CW_TMA_Y
        gpuml__u32 rphase = 0;          /* bar_res's parity */
        (void)slab_ptr;
#else
        typedef typename gpuml__dt<GPUML_CONV_YDT>::T CT;
        const int warp = ltid >> 5;
        float *slab = (float *)(slab_ptr + cw * GPUML_CW_SLAB_BYTES);
        const CT *Rz = (const CT *)p.res;
        const bool vec_ok = K % 8 == 0 && ((gpuml__u64)p.y & 15) == 0 && (!GPUML_HAS_RESID || ((gpuml__u64)p.res & 15) == 0);
#endif
        float acc[BN / 2];
#if GPUML_CW_RN
        float accr[BN / 2];
#endif
        int stage = 0;
        gpuml__u32 phase = 0;
        float *sb = bias_ptr + cw * BN;   /* this warpgroup's staged bias */
        (void)sb;
        for (int u = (int)blockIdx.x; u < units; u += (int)gridDim.x) {
            int z, tm, tn, kb0, kb1;
            gpuml__cw_unit(p, u, tiles_m, tiles_n, KT, z, tm, tn, kb0, kb1);
#if GPUML_HAS_BIAS
            /* the block's bias, loaded now (its latency hides behind the k loop), staged in smem below */
            float bpre[GPUML_CW_BPT];
#pragma unroll
            for (int t = 0; t < GPUML_CW_BPT; t++) {
                const int c = ltid + 128 * t, n = tn * BN + c;
                bpre[t] = c < BN && n < K ? __ldg(p.bias + n) : 0.0f;
            }
#endif
#if GPUML_CW_RN
            gpuml__cw_mainloop_rn(acc, accr, kb0, kb1, stage, phase, bar_full, bar_empty, smem_a + cw * (64 * 128), smem_b, lane);
#else
            int prev = 0;
            for (int kb = kb0; kb < kb1; ++kb) {
                gpuml__mbar_wait(bar_full + 8 * stage, phase);
                const gpuml__u64 da = gpuml__cw_desc(smem_a + stage * GPUML_CW_A_BYTES + cw * (64 * 128));
                const gpuml__u64 db = gpuml__cw_desc(smem_b + stage * GPUML_CW_B_BYTES);
                gpuml__wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk)   /* +32 bytes of each swizzled row per k16 */
                    GPUML__CW_MMA(acc, da + (gpuml__u64)(2 * kk), db + (gpuml__u64)(2 * kk), (kb != kb0) | kk);
                gpuml__wgmma_commit();
                gpuml__wgmma_wait<1>();       /* the previous tile's wgmmas are done: free its stage */
                if (kb != kb0 && lane == 0) gpuml__mbar_arrive(bar_empty + 8 * prev);
                prev = stage;
                if (++stage == STAGES) { stage = 0; phase ^= 1u; }
            }
            gpuml__wgmma_wait<0>();
            if (lane == 0) gpuml__mbar_arrive(bar_empty + 8 * prev);
#endif

            /* ---- epilogue.  acc[4j + 2i + c] is row 16 warp + lane/4 + 8i, column 8j + 2(lane%4) + c
               of this warpgroup's 64 x BN block ---- */
            const int row0 = tm * BM + cw * 64, col0 = tn * BN;
#if GPUML_HAS_BIAS
            /* every thread of the warpgroup has passed the previous block's last named barrier, after
               its last read of sb; the epilogue's first named barrier orders these writes before the
               reads */
#pragma unroll
            for (int t = 0; t < GPUML_CW_BPT; t++)
                if (ltid + 128 * t < BN) sb[ltid + 128 * t] = bpre[t];
#endif
#if GPUML_CW_TMA_Y
            (void)z;
            if (row0 < M)   /* uniform over the warpgroup */
                gpuml__cw_epi_tma(p, acc, &tma_y, &tma_r, smem_slab + cw * GPUML_CW_Y_BYTES, bar_res + 8 * cw, rphase, row0, col0, ltid, sb);
#else
            CT *Y = (CT *)p.y + (gpuml__i64)z * M * K;
#pragma unroll
            for (int ch = 0; ch < BN / GPUML_CW_EPI_COLS; ch++) {
                if (col0 + ch * GPUML_CW_EPI_COLS >= K) break;     /* uniform */
                gpuml__named_bar(1 + cw, 128);                  /* the previous chunk was read out */
#pragma unroll
                for (int jj = 0; jj < GPUML_CW_EPI_COLS / 8; jj++) {
                    const int j = ch * (GPUML_CW_EPI_COLS / 8) + jj, col = jj * 8 + 2 * (lane & 3);
                    float b0 = 0.0f, b1 = 0.0f;
                    if (GPUML_HAS_BIAS) {
                        const float2 bb = *(const float2 *)(sb + ch * GPUML_CW_EPI_COLS + col);
                        b0 = bb.x; b1 = bb.y;
                    }
#pragma unroll
                    for (int i = 0; i < 2; i++) {
                        float2 v;
                        v.x = gpuml__mma_act<GPUML_EPI>(acc[4 * j + 2 * i] + b0);
                        v.y = gpuml__mma_act<GPUML_EPI>(acc[4 * j + 2 * i + 1] + b1);
                        *(float2 *)(slab + (16 * warp + (lane >> 2) + 8 * i) * GPUML_CW_SROW + col) = v;
                    }
                }
                gpuml__named_bar(1 + cw, 128);
#if GPUML_CONV_YNCHW
                /* y[n][k][pq]: a warp's lanes along 32 consecutive rows (output pixels) of one
                   column.  A thread keeps one row (sr = ltid % 64) and walks the columns
                   ltid / 64 + 2t: the row's image offset is computed once per chunk, not per
                   element (the division per element cost NCHW ~16 us over NHWC on 1x1 layers) */
                {
                    const int sr = ltid & 63, m = row0 + sr;
                    if (m < M) {
                        const int ni = m / PQ, pq = m - ni * PQ, nb = col0 + ch * GPUML_CW_EPI_COLS;
                        const gpuml__i64 base = (gpuml__i64)ni * K * PQ + pq;
#pragma unroll 4
                        for (int t = 0; t < GPUML_CW_EPI_COLS / 2; t++) {
                            const int c = (ltid >> 6) + 2 * t, n = nb + c;
                            if (n >= K) break;
                            const gpuml__i64 off = base + (gpuml__i64)n * PQ;
                            float v = slab[sr * GPUML_CW_SROW + c];
                            if (GPUML_HAS_RESID) v += gpuml__mma_ld<GPUML_CONV_YDT>(Rz[off]);
                            Y[off] = gpuml__mma_st<GPUML_CONV_YDT>(v);
                        }
                    }
                }
                continue;
#endif
#pragma unroll
                for (int t = 0; t < 64 * (GPUML_CW_EPI_COLS / 8) / 128; t++) {
                    const int piece = ltid + t * 128, sr = piece / (GPUML_CW_EPI_COLS / 8), c8 = (piece % (GPUML_CW_EPI_COLS / 8)) * 8;
                    const int m = row0 + sr, n = col0 + ch * GPUML_CW_EPI_COLS + c8;
                    if (m >= M || n >= K) continue;
                    const float *src = slab + sr * GPUML_CW_SROW + c8;
                    const float4 lo = *(const float4 *)src, hi = *(const float4 *)(src + 4);
                    float v[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
                    gpuml__conv_out8<GPUML_CONV_YDT, GPUML_HAS_RESID>(Y, Rz, (gpuml__i64)m * K + n, n, K, vec_ok, v);
                }
            }
#endif
        }
#if GPUML_CW_TMA_Y
        if (ltid == 0) gpuml__bulk_wait_all();   /* the staging tile outlives the last store's read */
#endif
    }
}
#endif /* !GPUML_CONV_BWF */

#if GPUML_CONV_BWF
/* ==========================================================================================
   gpuml_conv_bwf_sm90: conv2d backward filter as an implicit GEMM on wgmma (f16 / bf16 NHWC).
   dw[k][r][s][c] = sum over the N*P*Q output pixels m = (n, p, q) of
                    dy[m][k] * x[n][p*sh-ph+r*dh][q*sw-pw+s*dw][c]      (x off the image reads 0)
   GEMM view: M = K (dw's rows), N_gemm = R*S*C (kg = (r*S + s)*C + c, dw's KRSC columns),
   reduction over the N*P*Q pixels, 64 a k step.  Both operands are MN-major (transposed) in
   shared memory, which wgmma reads for 16-bit types (the tnsp immediates):
     A = dy^T: a TMA box of dy as a [NPQ][K] matrix, 64 pixels x 64 k (128-byte rows along k);
     B = im2col(x): a TMA im2col box per 64-column block (64 channels of one tap (r, s)), 64
               pixels x 64 channels, exactly the forward kernel's A tile of that tap.
   No im2col buffer and no transposed dy are written.  Pixels past N*P*Q read as 0 on both sides
   (TMA's out-of-bounds fill), so every k step is whole.
   LAUNCH CONTRACT
   Kernel:  gpuml_conv_bwf_sm90(const __grid_constant__ gpuml__cw_tmap tma_dy,
                                const __grid_constant__ gpuml__cw_tmap tma_x, gpuml__conv_params p)
   Compile: sm_90a, -DGPUML_CONV_SM90=1 -DGPUML_CONV_BWF=1 -DGPUML_CONV_DT=1|2
            -DGPUML_BWF_WM=1|2: 1 = a 64 x 256 tile (K <= 64), the two consumer warpgroups side
            by side along N_gemm; 2 = 128 x 128, one above the other along K.
   Params:  p.M = N*P*Q, p.K = K, p.Kg = R*S*C, N H W C R S P Q strides pads dilations as the
            forward; p.splits: the pixel range is cut into `splits` slices of whole k steps (per =
            ceil(KS / splits), KS = ceil(M / 64), every slice non-empty); slice z writes raw f32
            sums to p.y + z*K*Kg ([K][Kg] each, masked to the matrix); splits 1 writes the result.
   Maps:    tma_dy: dy as 2-D, dtype as x, globalDim {K, M}, globalStrides {K*2}, boxDim {64, 64},
            SWIZZLE_128B, OOB zero fill.  tma_x: the forward's im2col map of x (rank 4, C W H N,
            pixelsPerColumn 64, channelsPerPixel 64, elementStrides {1, sw, sh, 1}, SWIZZLE_128B).
   Grid:    persistent, (G, 1, 1), any G >= 1; units u = z * tiles + tm * tiles_n + tn (the tiles of
            one pixel slice run side by side: x's rows are read from L2).  Block (384, 1, 1):
            warpgroup 0 the producer (one thread issues every TMA), 1-2 the consumers.
   Shared:  1024 + STAGES * (BM + BN) * 128 + 256 bytes (GPUML_BWF_SMEM).
   Then gpuml_conv_bwf_reduce (below, same module; -DGPUML_CONV_YDT = dw's dtype) adds the slices.
   Host preconditions: C % 64 == 0, K % 8 == 0, x and dy contiguous NHWC, 16-byte aligned; the
            im2col map encodable (stride <= 8, corners in [-128, 127]); groups 1.
   ========================================================================================== */
#ifndef GPUML_BWF_WM
#define GPUML_BWF_WM 1
#endif
#if GPUML_BWF_WM != 1 && GPUML_BWF_WM != 2
#error "GPUML_BWF_WM is 1 or 2"
#endif
#if GPUML_CONV_DT == 0
#error "the backward filter kernel takes f16 or bf16 (MN-major operands)"
#endif
#define GPUML_BWF_BM (64 * GPUML_BWF_WM)
#define GPUML_BWF_BN (256 / GPUML_BWF_WM)
#define GPUML_BWF_STAGES (GPUML_BWF_WM == 1 ? 5 : 6)
#define GPUML_BWF_SMEM (1024 + GPUML_BWF_STAGES * (GPUML_BWF_BM + GPUML_BWF_BN) * 128 + 256)

/* D[64x128] (+)= A[64x16] * B[16x128], both MN-major in 128B-swizzled smem (the transpose immediates) */
GPUML__CW_DEF_WGMMA128(gpuml__bwf_wgmma, ", p, 1, 1, 1, 1;\n\t}")

extern "C" __global__ void __launch_bounds__(384, 1)
gpuml_conv_bwf_sm90(const __grid_constant__ gpuml__cw_tmap tma_dy, const __grid_constant__ gpuml__cw_tmap tma_x,
                    const gpuml__conv_params p)
{
    constexpr int BM = GPUML_BWF_BM, BN = GPUML_BWF_BN, STAGES = GPUML_BWF_STAGES;
    constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, NBB = BN / 64;
    extern __shared__ __align__(1024) unsigned char gpuml__bwf_smem[];
    const gpuml__u32 base = (gpuml__mma_smem_addr(gpuml__bwf_smem) + 1023u) & ~1023u;
    const gpuml__u32 smem_a = base, smem_b = base + STAGES * A_BYTES;
    const gpuml__u32 bar_full = base + STAGES * (A_BYTES + B_BYTES), bar_empty = bar_full + 8 * STAGES;
    const int tid = (int)threadIdx.x, wg = tid >> 7, lane = tid & 31;
    const int NPQ = p.M, KO = p.K, NC = p.Kg;
    const int tiles_m = (KO + BM - 1) / BM, tiles_n = (NC + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const int KS = (NPQ + 63) / 64, per = (KS + p.splits - 1) / p.splits, units = tiles * p.splits;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gpuml__mbar_init(bar_full + 8 * s, 1);        /* the producer's expect_tx */
            gpuml__mbar_init(bar_empty + 8 * s, 8);       /* one lane of every consumer warp */
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        /* ------------------------------ producer: one thread issues the TMAs ------------------ */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 56;");
        if (tid == 0) {
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml__u64)&tma_dy) : "memory");
            asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml__u64)&tma_x) : "memory");
            const int PQ = p.P * p.Q;
            int stage = 0;
            gpuml__u32 phase = 0;
            for (int u = (int)blockIdx.x; u < units; u += (int)gridDim.x) {
                const int z = u / tiles, rest = u - z * tiles, tm = rest / tiles_n, tn = rest - tm * tiles_n;
                const int kb0 = z * per, kb1 = kb0 + per < KS ? kb0 + per : KS, n0 = tn * BN;
                const int nbv = (NC - n0) / 64 < NBB ? (NC - n0) / 64 : NBB;   /* column blocks inside N_gemm */
                int cb[NBB];
                gpuml__u16 ow[NBB], oh[NBB];
#pragma unroll
                for (int b = 0; b < NBB; ++b) {
                    const int j = n0 + 64 * b, rs = j / p.C, r = rs / p.S, s = rs - r * p.S;
                    cb[b] = j - rs * p.C;
                    ow[b] = (gpuml__u16)(s * p.dil_w);
                    oh[b] = (gpuml__u16)(r * p.dil_h);
                }
                for (int kb = kb0; kb < kb1; ++kb) {
                    const int m0 = kb * 64, ni = m0 / PQ, rem = m0 - ni * PQ, pp = rem / p.Q, qq = rem - pp * p.Q;
                    const int w0 = qq * p.stride_w - p.pad_w, h0 = pp * p.stride_h - p.pad_h;
                    const gpuml__u32 full = bar_full + 8 * stage;
                    gpuml__mbar_wait(bar_empty + 8 * stage, phase ^ 1u);
                    gpuml__mbar_expect_tx(full, (gpuml__u32)(BM / 64 + nbv) * 8192u);
#pragma unroll
                    for (int a = 0; a < BM / 64; ++a)
                        gpuml__tma_load_2d(smem_a + stage * A_BYTES + a * 8192, &tma_dy, tm * BM + 64 * a, m0, full);
#pragma unroll
                    for (int b = 0; b < NBB; ++b)
                        if (b < nbv) gpuml__cw_tma_im2col(smem_b + stage * B_BYTES + b * 8192, &tma_x, cb[b], w0, h0, ni, ow[b], oh[b], full);
                    if (++stage == STAGES) { stage = 0; phase ^= 1u; }
                }
            }
        }
    } else {
        /* ------------------------------ consumer warpgroups ------------------------------ */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 224;");
        const int cw = wg - 1, warp = (tid & 127) >> 5;
        /* WM 1: both read the 64 k rows of A, warpgroup cw columns [128 cw, 128 cw + 128) of the tile;
           WM 2: warpgroup cw rows [64 cw, 64 cw + 64), all 128 columns */
        const gpuml__u32 a_off = GPUML_BWF_WM == 2 ? (gpuml__u32)cw * 8192u : 0u;
        const gpuml__u32 b_off = GPUML_BWF_WM == 1 ? (gpuml__u32)cw * 16384u : 0u;
        float acc[64];
        int stage = 0;
        gpuml__u32 phase = 0;
        for (int u = (int)blockIdx.x; u < units; u += (int)gridDim.x) {
            const int z = u / tiles, rest = u - z * tiles, tm = rest / tiles_n, tn = rest - tm * tiles_n;
            const int kb0 = z * per, kb1 = kb0 + per < KS ? kb0 + per : KS;
            int prev = 0;
            for (int kb = kb0; kb < kb1; ++kb) {
                gpuml__mbar_wait(bar_full + 8 * stage, phase);
                /* MN-major, 128B swizzle: 8-k-row atoms 1024 bytes apart (sbo), 64-wide column blocks
                   8192 apart (lbo); +16 k rows = +2048 bytes per k16 */
                const gpuml__u64 da = gpuml__smem_desc(smem_a + stage * A_BYTES + a_off, 8192, 1024);
                const gpuml__u64 db = gpuml__smem_desc(smem_b + stage * B_BYTES + b_off, 8192, 1024);
                gpuml__wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk)
                    gpuml__bwf_wgmma(acc, da + (gpuml__u64)(128 * kk), db + (gpuml__u64)(128 * kk), (kb != kb0) | kk);
                gpuml__wgmma_commit();
                gpuml__wgmma_wait<1>();       /* the previous step's wgmmas are done: free its stage */
                if (kb != kb0 && lane == 0) gpuml__mbar_arrive(bar_empty + 8 * prev);
                prev = stage;
                if (++stage == STAGES) { stage = 0; phase ^= 1u; }
            }
            gpuml__wgmma_wait<0>();
            if (lane == 0) gpuml__mbar_arrive(bar_empty + 8 * prev);

            /* acc[4j + 2i + c]: row 16 warp + lane/4 + 8i, column 8j + 2(lane%4) + c of this warpgroup's
               64 x 128 block; f32 pairs straight to [K][Kg] (Kg even: 8-byte aligned) */
            const int row0 = tm * BM + (GPUML_BWF_WM == 2 ? 64 * cw : 0), col0 = tn * BN + (GPUML_BWF_WM == 1 ? 128 * cw : 0);
            float *Y = (float *)p.y + (gpuml__i64)z * KO * NC;
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int m = row0 + 16 * warp + (lane >> 2) + 8 * i;
                if (m >= KO) continue;
                float *yr = Y + (gpuml__i64)m * NC;
#pragma unroll
                for (int j = 0; j < 16; ++j) {
                    const int n = col0 + 8 * j + 2 * (lane & 3);
                    if (n < NC) *(float2 *)(yr + n) = make_float2(acc[4 * j + 2 * i], acc[4 * j + 2 * i + 1]);
                }
            }
        }
    }
}

/* gpuml_conv_bwf_reduce(p): out[i] = the sum over the slices z of p.ws[z * K*Kg + i], i < p.K * p.Kg
   (4 at a time: Kg % 64 == 0), in out's dtype GPUML_CONV_YDT (out = p.y, 8-byte aligned).  A block
   (256 threads = 8 warps) holds 8 / ZW groups of ZW warps, a group 32 float4 columns; warp j of a
   group adds slices [j zc, (j + 1) zc) in order, zc = ceil(splits / ZW), then the group's first warp
   adds its ZW warp sums in order: a fixed order, the same result run to run.  ZW = 8, 4, 2, 1 for
   splits >= 32, 16, 8, below (each thread >= 4 loads in flight where there are that many).
   Grid: ceil(K*Kg / 4 / (32 * 8 / ZW)). */
static __host__ __device__ __forceinline__ int gpuml__bwf_zw(int splits) { return splits >= 32 ? 8 : splits >= 16 ? 4 : splits >= 8 ? 2 : 1; }
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_bwf_reduce(gpuml__conv_params p)
{
    __shared__ float4 part[8][32];
    const int lane = (int)threadIdx.x & 31, w = (int)threadIdx.x >> 5, zw = gpuml__bwf_zw(p.splits), j = w % zw;
    const gpuml__i64 total4 = (gpuml__i64)p.K * p.Kg / 4, i = ((gpuml__i64)blockIdx.x * (8 / zw) + w / zw) * 32 + lane;
    const int zc = (p.splits + zw - 1) / zw, z0 = j * zc, z1 = z0 + zc < p.splits ? z0 + zc : p.splits;
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (i < total4 && z0 < z1) {
        const float4 *src = (const float4 *)p.ws + i;
        s = src[(gpuml__i64)z0 * total4];
#pragma unroll 4
        for (int z = z0 + 1; z < z1; ++z) {
            const float4 v = src[(gpuml__i64)z * total4];
            s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
        }
    }
    if (zw > 1) {
        part[w][lane] = s;
        __syncthreads();
    }
    if (j == 0 && i < total4) {
        for (int k = 1; k < zw; ++k) {
            const float4 v = part[w + k][lane];
            if (k * zc < p.splits) { s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w; }
        }
#if GPUML_CONV_YDT == 0
        ((float4 *)p.y)[i] = s;
#else
        typedef gpuml__dt<GPUML_CONV_YDT> D;
        uint2 o;
        o.x = (gpuml__u32)D::st(s.x) | ((gpuml__u32)D::st(s.y) << 16);
        o.y = (gpuml__u32)D::st(s.z) | ((gpuml__u32)D::st(s.w) << 16);
        ((uint2 *)p.y)[i] = o;
#endif
    }
}
#endif /* GPUML_CONV_BWF */
#endif
