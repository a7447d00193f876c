/* Family "matmul" (or its own family): the portable tensor-core GEMM for sm_80 and newer
   (Ampere, Ada, Hopper, Blackwell): mma.sync.m16n8k16 + ldmatrix + cp.async, f16 / bf16 in,
   f32 accumulation, fused epilogue.  Compiled by NVRTC after prelude.cuh + shared.h +
   common.cuh; includes no header.

   C[z][m][n] = act(alpha*scale*sum_k A[z][m][k]*B[z][k][n] + beta*C[z][m][n] + bias[n]) + R[z][m][n]

   ==========================================================================================
   LAUNCH CONTRACT
   ==========================================================================================
   Kernel:  extern "C" __global__ void gpuml_mm_mma(gpuml__mm_params p)   (params by value)
   Block:   (GPUML_MMA_THREADS, 1, 1) = (256, 1, 1)   (8 warps; __launch_bounds__(256, 1))
   Grid:    (ceil(N / GPUML_MMA_BN), ceil(M / GPUML_MMA_BM), batch)
            = (ceil(N/256), ceil(M/128), batch) with the default tile 128 x 256 x 32.
            gridDim.y and gridDim.z must be <= 65535 (M <= 8388480, batch <= 65535).
            The CTA -> tile map is regrouped inside the kernel (GROUP_M = 8 tile rows) for L2
            reuse; the host only has to launch the grid above.
   Dynamic shared memory (bytes):
            GPUML_MMA_SMEM_BYTES = GPUML_MMA_STAGES * (GPUML_MMA_BM + GPUML_MMA_BN) * GPUML_MMA_BK * 2
                                 = 4 * (128 + 256) * 32 * 2 = 98304 (96 KiB) by default
            (BN=128: 65536; 3 stages: 73728).  Above 48 KiB, so the host must first set
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (cuFuncSetAttribute) to it.  98304
            fits every sm_80+ part (sm_86/sm_89 opt-in limit: 101376 bytes).
   Static shared memory: none.  No workspace, no atomics, stream order only.

   Macros (-D options):
     GPUML_A_DT, GPUML_B_DT  1 = f16, 2 = bf16 (must be equal).  For any other value (or with
                             GPUML_INT != 0, or GPUML_C_DT not in {0,1,2}) this file defines
                             no kernel, so it can share a family source with the SIMT GEMM.
     GPUML_C_DT              0 = f32, 1 = f16, 2 = bf16: dtype of C, C_in and R
     GPUML_EPI               0 none, 1 relu, 2 gelu (tanh form), 3 silu        (default 0)
     GPUML_HAS_BIAS          0/1: + bias[n] (f32) before the activation        (default 0)
     GPUML_HAS_RESID         0/1: + R[z][m][n] (C dtype) after the activation   (default 0)
     GPUML_BETA              0/1: + beta*C[z][m][n] (C read before it is written) (default 0)
     GPUML_B_NMAJOR          1: B is K x N with sb_n == 1 (row-major, ldmatrix.trans)
                             0: B is N x K with sb_k == 1 ("TN")                (default 1)
     GPUML_MMA_BN            optional tuning: 256 (default) or 128 (CTA tile 128 x 128, warp
                             tile 64 x 32; more CTAs for small problems).  Changes the grid.
     GPUML_MMA_STAGES        optional tuning: cp.async pipeline depth, >= 2 (default 4).
                             Changes the shared memory size.
     GPUML_MMA_SOFT_CVT      optional: 1 converts f16 C / R values with gpuml__dt<1>::ld/st
                             (software, ~80 instructions) instead of the bit-identical
                             hardware cvt.rn.f16.f32 / cvt.f32.f16 (default 0).

   Host preconditions (the kernel does not check them):
     A, B are f16/bf16 of the same dtype; sa_k == 1; GPUML_B_NMAJOR=1: sb_n == 1,
     GPUML_B_NMAJOR=0: sb_k == 1; A and B base addresses 16-byte aligned; sa_m, sa_b, sb_b and
     the non-unit B stride (sb_k or sb_n) multiples of 8 elements; M, N, K >= 1, each < 2^31-64.
     C, R: any element strides (pairs are vectorized when the unit stride is 1 and the address
     is aligned); bias 4-byte aligned.  C_in is C itself (beta reads C before writing it).
     R must not alias C unless R == C exactly element for element.
   Edges: tiles past M / N / K are zero-filled by cp.async's src-size operand (partial 16-byte
   chunks at the K edge, or the N edge of a K x N B, copy only the valid bytes); stores are
   masked.

   Design: CTA tile 128 x 256 x 32 (BN=128 optional), 8 warps in 2 (M) x 4 (N), warp tile
   64 x 64: 4 x 8 mma.m16n8k16 per 16-deep k step, 128 f32 accumulators per thread.  A and B
   tiles stream through a 4-stage cp.async.cg ring (one __syncthreads per 32-deep k tile).
   Shared memory is XOR-swizzled at 16-byte granularity (no padding): A / N x K B rows are
   64 bytes, two rows form a 128-byte line whose 8 chunks are XORed with (row/2)&7; K x N B rows
   are BN*2 bytes with chunk ^= k&7.  ldmatrix reads and cp.async writes are conflict-free.
   ========================================================================================== */

/* struct gpuml__mm_params: kernels/common.cuh */

#ifndef GPUML__MMA_DEFINED
#define GPUML__MMA_DEFINED

#define GPUML_MMA_THREADS 256
#define GPUML_MMA_BM 128
#define GPUML_MMA_BK 32
#ifndef GPUML_MMA_BN
#define GPUML_MMA_BN 256
#endif
#ifndef GPUML_MMA_STAGES
#define GPUML_MMA_STAGES 4
#endif
#define GPUML_MMA_SMEM_BYTES_FOR(bn, stages) ((stages) * (GPUML_MMA_BM + (bn)) * GPUML_MMA_BK * 2)
#define GPUML_MMA_SMEM_BYTES GPUML_MMA_SMEM_BYTES_FOR(GPUML_MMA_BN, GPUML_MMA_STAGES)
#define GPUML__MMA_GROUP_M 8

/* ---------------------------------------------------------------- PTX wrappers ---- */

static __device__ __forceinline__ gpuml__u32 gpuml__mma_smem_addr(const void *p)
{
    return (gpuml__u32)__cvta_generic_to_shared(p);
}

/* 16-byte global -> shared copy; bytes in [0,16] are read, the rest of the 16 is zero-filled */
static __device__ __forceinline__ void gpuml__mma_cp16(gpuml__u32 dst, const void *src, gpuml__u32 bytes)
{
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void gpuml__mma_cp_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
static __device__ __forceinline__ void gpuml__mma_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

static __device__ __forceinline__ void gpuml__mma_ldsm4(gpuml__u32 &r0, gpuml__u32 &r1, gpuml__u32 &r2,
                                                        gpuml__u32 &r3, gpuml__u32 addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}
static __device__ __forceinline__ void gpuml__mma_ldsm4_t(gpuml__u32 &r0, gpuml__u32 &r1, gpuml__u32 &r2,
                                                          gpuml__u32 &r3, gpuml__u32 addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}

/* gpuml__mma_16816 (one m16n8k16 f16/bf16 mma.sync): kernels/common.cuh */

/* byte offset of 16-byte chunk c (0..3) of row r in a tile of 64-byte rows (32 x 16-bit):
   rows r, r+1 share a 128-byte line; the chunk index within the line is XORed with (r/2)&7 */
static __device__ __forceinline__ gpuml__u32 gpuml__mma_swz64(int r, int c)
{
    return (gpuml__u32)(((r >> 1) << 7) + (((((r & 1) << 2) | c) ^ ((r >> 1) & 7)) << 4));
}

/* ------------------------------------------------------------------- epilogue ---- */

/* gpuml__mma_act<EPI> and the C-dtype conversions gpuml__mma_ld / gpuml__mma_st<CDT>: kernels/common.cuh */

/* two adjacent elements (n, n+1) of a C-dtype row: q points at n; vec: unit stride and aligned
   for a pair access; two: n+1 is inside the matrix */
template <int CDT>
static __device__ __forceinline__ void gpuml__mma_ld2(const void *q, gpuml__i64 sn, bool vec, bool two,
                                                      float &v0, float &v1)
{
    typedef typename gpuml__dt<CDT>::T T;
    const T *t = (const T *)q;
    if (vec) {
        if (CDT == 0) {
            float2 f = *(const float2 *)q;
            v0 = f.x;
            v1 = f.y;
        } else {
            gpuml__u32 u = *(const gpuml__u32 *)q;
            v0 = gpuml__mma_ld<CDT>((T)(u & 0xffffu));
            v1 = gpuml__mma_ld<CDT>((T)(u >> 16));
        }
    } else {
        v0 = gpuml__mma_ld<CDT>(t[0]);
        v1 = two ? gpuml__mma_ld<CDT>(t[sn]) : 0.0f;
    }
}
template <int CDT>
static __device__ __forceinline__ void gpuml__mma_st2(void *q, gpuml__i64 sn, bool vec, bool two, float v0, float v1)
{
    typedef typename gpuml__dt<CDT>::T T;
    T *t = (T *)q;
    if (vec) {
        if (CDT == 0) {
            float2 f;
            f.x = v0;
            f.y = v1;
            *(float2 *)q = f;
        } else {
            gpuml__u32 u = (gpuml__u32)gpuml__mma_st<CDT>(v0) | ((gpuml__u32)gpuml__mma_st<CDT>(v1) << 16);
            *(gpuml__u32 *)q = u;
        }
    } else {
        t[0] = gpuml__mma_st<CDT>(v0);
        if (two) t[sn] = gpuml__mma_st<CDT>(v1);
    }
}

/* ----------------------------------------------------------------- the GEMM ---- */

/* DT: 1 f16 / 2 bf16 inputs; CDT: 0 f32 / 1 f16 / 2 bf16 output; NMAJOR: B is K x N (sb_n == 1);
   BN: 256 or 128; STAGES >= 2.  Launch: 256 threads, STAGES*(128+BN)*64 bytes of dynamic smem. */
template <int DT, int CDT, int EPI, int HAS_BIAS, int HAS_RESID, int BETA, int NMAJOR, int BN, int STAGES>
static __device__ __forceinline__ void gpuml__mma_gemm(const gpuml__mm_params &p)
{
    constexpr int BM = GPUML_MMA_BM, BK = GPUML_MMA_BK, NTHR = GPUML_MMA_THREADS;
    constexpr int WN = BN / 4;                       /* warp tile: 64 x WN */
    constexpr int MT = 4, NT = WN / 8;               /* m16 tiles, n8 tiles per warp */
    constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int A_CPT = BM * BK / 8 / NTHR;        /* 16-byte chunks per thread per tile: 2 */
    constexpr int B_CPT = BN * BK / 8 / NTHR;        /* 4 (BN 256) or 2 (BN 128) */
    constexpr int B_CPR = BN / 8;                    /* K x N B: chunks per k row */
    constexpr int B_RPP = NTHR / B_CPR;              /* K x N B: k rows per pass (8 or 16) */
    constexpr int ROWB = BN * 2;                     /* K x N B: bytes per k row in smem */
    static_assert(BN == 256 || BN == 128, "GPUML_MMA_BN must be 128 or 256");
    static_assert(STAGES >= 2, "GPUML_MMA_STAGES must be >= 2");
    static_assert(B_RPP % 8 == 0, "swizzle period");

    extern __shared__ __align__(128) unsigned char gpuml__mma_smem[];

    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 2, wn = warp & 3;         /* 2 x 4 warps */
    const int M = p.M, N = p.N, K = p.K;

    /* CTA -> tile, grouped by GROUP_M tile rows so that concurrently running CTAs share A and B
       panels in L2 (the grid is the plain (tiles_n, tiles_m, batch)) */
    int tm, tn;
    {
        const gpuml__i64 gx = gridDim.x, gy = gridDim.y;
        const gpuml__i64 pid = (gpuml__i64)blockIdx.y * gx + blockIdx.x;
        const gpuml__i64 per_group = (gpuml__i64)GPUML__MMA_GROUP_M * gx;
        const gpuml__i64 group = pid / per_group;
        const gpuml__i64 first = group * GPUML__MMA_GROUP_M;
        const gpuml__i64 gsize = gy - first < GPUML__MMA_GROUP_M ? gy - first : GPUML__MMA_GROUP_M;
        const gpuml__i64 within = pid - group * per_group;
        tm = (int)(first + within % gsize);
        tn = (int)(within / gsize);
    }
    const int m0 = tm * BM, n0 = tn * BN;
    const gpuml__i64 z = blockIdx.z;
    const char *Ab = (const char *)p.A + z * p.sa_b * 2;
    const char *Bb = (const char *)p.B + z * p.sb_b * 2;
    const gpuml__u32 sbase = gpuml__mma_smem_addr(gpuml__mma_smem);

    /* ---- loader setup: thread -> (row, 16-byte chunk) of each tile.  Running source
       pointers advance by one k tile per load; out-of-range rows point at row 0 and copy 0
       bytes; the K (and N) edge copies a partial chunk (cp.async zero-fills the rest). ---- */
    const int lc = tid & 3;                          /* k chunk of A (and of an N x K B) */
    const char *a_src[A_CPT];
    gpuml__u32 a_row[A_CPT];                         /* 0xffffffff if the row exists, else 0 */
#pragma unroll
    for (int i = 0; i < A_CPT; i++) {
        const int m = m0 + (tid >> 2) + i * (NTHR / 4);
        a_row[i] = m < M ? 0xffffffffu : 0u;
        a_src[i] = Ab + (gpuml__i64)(m < M ? m : 0) * p.sa_m * 2 + lc * 16;
    }
    const gpuml__u32 a_dst = gpuml__mma_swz64(tid >> 2, lc);   /* + i * (64 rows = 4096 bytes) */
    /* B, N x K (NMAJOR == 0): like A, rows are n */
    constexpr int NKB = NMAJOR ? 1 : B_CPT;
    const char *b_src[NKB];
    gpuml__u32 b_row[NKB];
    /* B, K x N (NMAJOR == 1): thread -> k rows bk + i*B_RPP, n chunk bc */
    const int bk = tid / B_CPR, bc = tid % B_CPR;
    gpuml__u32 b_nbytes = 0, b_dst;
    gpuml__i64 b_rowbytes = 0;
    if (NMAJOR) {
        const int n = n0 + bc * 8, rem = N - n;
        b_nbytes = rem >= 8 ? 16u : rem > 0 ? (gpuml__u32)rem * 2u : 0u;
        b_rowbytes = p.sb_k * 2;
        b_src[0] = Bb + (gpuml__i64)bk * b_rowbytes + (gpuml__i64)(rem > 0 ? n : 0) * 2;
        b_dst = (gpuml__u32)(bk * ROWB + ((bc ^ (bk & 7)) << 4));   /* + i * B_RPP*ROWB */
    } else {
#pragma unroll
        for (int i = 0; i < NKB; i++) {
            const int n = n0 + (tid >> 2) + i * (NTHR / 4);
            b_row[i] = n < N ? 0xffffffffu : 0u;
            b_src[i] = Bb + (gpuml__i64)(n < N ? n : 0) * p.sb_n * 2 + lc * 16;
        }
        b_dst = gpuml__mma_swz64(tid >> 2, lc);      /* + i * 4096 */
    }
    const gpuml__i64 b_step = NMAJOR ? (gpuml__i64)BK * b_rowbytes : (gpuml__i64)BK * 2;
    int k_next = 0;                                  /* first k of the next tile to load */

    /* issue the copies of the next k tile into ring slot `stage`, then advance */
    auto load_tile = [&](int stage) {
        const gpuml__u32 sA = sbase + (gpuml__u32)(stage * STAGE_BYTES), sB = sA + A_BYTES;
        const int krem = K - k_next - lc * 8;
        const gpuml__u32 kbytes = krem >= 8 ? 16u : krem > 0 ? (gpuml__u32)krem * 2u : 0u;
#pragma unroll
        for (int i = 0; i < A_CPT; i++) {
            const gpuml__u32 sz = a_row[i] & kbytes;
            gpuml__mma_cp16(sA + a_dst + i * 4096, sz ? (const void *)a_src[i] : (const void *)Ab, sz);
            a_src[i] += BK * 2;
        }
        if (NMAJOR) {
            const int kvalid = K - k_next - bk;      /* rows bk + i*B_RPP < kvalid exist */
#pragma unroll
            for (int i = 0; i < B_CPT; i++) {
                const gpuml__u32 sz = i * B_RPP < kvalid ? b_nbytes : 0u;
                const char *src = b_src[0] + (gpuml__i64)i * B_RPP * b_rowbytes;
                gpuml__mma_cp16(sB + b_dst + i * (B_RPP * ROWB), sz ? (const void *)src : (const void *)Bb, sz);
            }
            b_src[0] += b_step;
        } else {
#pragma unroll
            for (int i = 0; i < NKB; i++) {
                const gpuml__u32 sz = b_row[i] & kbytes;
                gpuml__mma_cp16(sB + b_dst + i * 4096, sz ? (const void *)b_src[i] : (const void *)Bb, sz);
                b_src[i] += BK * 2;
            }
        }
        k_next += BK;
    };

    /* ---- ldmatrix lane offsets (bytes within a stage's A / B region) ---- */
    gpuml__u32 a_ld[2], b_ld[2];
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
        a_ld[kk] = gpuml__mma_swz64(wm * 64 + (lane & 15), kk * 2 + (lane >> 4));
        if (NMAJOR)
            b_ld[kk] = (gpuml__u32)((kk * 16 + (lane & 15)) * ROWB);
        else
            b_ld[kk] = gpuml__mma_swz64(wn * WN + (lane & 15), kk * 2 + (lane >> 4));
    }
    const int b_chunk = wn * (WN / 8) + (lane >> 4), b_xor = lane & 7;   /* K x N B */

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    const int KT = (K - 1) / BK + 1;

    /* ---- prologue: STAGES-1 tiles in flight ---- */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT) load_tile(s);
        gpuml__mma_cp_commit();
    }

    int rd = 0, wr = STAGES - 1;
    for (int kt = 0; kt < KT; kt++) {
        gpuml__mma_cp_wait<STAGES - 2>();            /* tile kt has landed (this thread's part) */
        __syncthreads();                             /* ... everyone's; slot wr is free again */
        if (kt + STAGES - 1 < KT) load_tile(wr);
        gpuml__mma_cp_commit();

        const gpuml__u32 sA = sbase + (gpuml__u32)(rd * STAGE_BYTES), sB = sA + A_BYTES;
#pragma unroll
        for (int kk = 0; kk < 2; kk++) {
            gpuml__u32 af[MT][4], bfr[NT][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)          /* +16 rows = +8 lines = +1024 bytes */
                gpuml__mma_ldsm4(af[mt][0], af[mt][1], af[mt][2], af[mt][3], sA + a_ld[kk] + mt * 1024);
#pragma unroll
            for (int np = 0; np < NT / 2; np++) {
                if (NMAJOR)
                    gpuml__mma_ldsm4_t(bfr[2 * np][0], bfr[2 * np][1], bfr[2 * np + 1][0], bfr[2 * np + 1][1],
                                       sB + b_ld[kk] + (gpuml__u32)(((b_chunk + 2 * np) ^ b_xor) << 4));
                else
                    gpuml__mma_ldsm4(bfr[2 * np][0], bfr[2 * np + 1][0], bfr[2 * np][1], bfr[2 * np + 1][1],
                                     sB + b_ld[kk] + np * 1024);
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    const int nt = (mt & 1) ? NT - 1 - j : j;   /* serpentine: reuse B regs */
                    gpuml__mma_16816<DT>(acc[mt][nt], af[mt], bfr[nt][0], bfr[nt][1]);
                }
        }
        rd = rd + 1 == STAGES ? 0 : rd + 1;
        wr = wr + 1 == STAGES ? 0 : wr + 1;
    }
    gpuml__mma_cp_wait<0>();                         /* only empty groups can be left */

    /* ---- epilogue: straight from the accumulators, masked ---- */
    typedef typename gpuml__dt<CDT>::T CT;
    const float ab = p.alpha * p.scale;
    const int es = (int)sizeof(CT);
    CT *Cz = (CT *)p.C + z * p.sc_b;
    const CT *Rz = (const CT *)p.R + (HAS_RESID ? z * p.sr_b : 0);
    const gpuml__i64 scn = p.sc_n, srn = p.sr_n;
    const int row_base = m0 + wm * 64 + (lane >> 2);
    const int col_base = n0 + wn * WN + 2 * (lane & 3);
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = row_base + mt * 16 + h * 8;
            if (m >= M) continue;
            CT *crow = Cz + (gpuml__i64)m * p.sc_m;
            const CT *rrow = Rz + (HAS_RESID ? (gpuml__i64)m * p.sr_m : 0);
            /* n is even: a pair is aligned iff the row start is */
            const bool cvec = scn == 1 && ((gpuml__u64)(const void *)crow & (gpuml__u64)(2 * es - 1)) == 0;
            const bool rvec = HAS_RESID && srn == 1 &&
                              ((gpuml__u64)(const void *)rrow & (gpuml__u64)(2 * es - 1)) == 0;
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const int n = col_base + nt * 8;
                if (n >= N) continue;
                const bool two = n + 1 < N;
                float v0 = ab * acc[mt][nt][2 * h], v1 = ab * acc[mt][nt][2 * h + 1];
                CT *cq = crow + (gpuml__i64)n * scn;
                if (BETA) {
                    float c0, c1;
                    gpuml__mma_ld2<CDT>(cq, scn, cvec && two, two, c0, c1);
                    v0 += p.beta * c0;
                    v1 += p.beta * c1;
                }
                if (HAS_BIAS) {
                    v0 += __ldg(p.bias + n);
                    if (two) v1 += __ldg(p.bias + n + 1);
                }
                v0 = gpuml__mma_act<EPI>(v0);
                v1 = gpuml__mma_act<EPI>(v1);
                if (HAS_RESID) {
                    float r0, r1;
                    gpuml__mma_ld2<CDT>(rrow + (gpuml__i64)n * srn, srn, rvec && two, two, r0, r1);
                    v0 += r0;
                    v1 += r1;
                }
                gpuml__mma_st2<CDT>(cq, scn, cvec && two, two, v0, v1);
            }
        }
}

/* ------------------------------------------------------ the NVRTC entry point ---- */

#if defined(GPUML_A_DT)
#define GPUML__MMA_DT GPUML_A_DT
#else
#define GPUML__MMA_DT 0
#endif
#if defined(GPUML_B_DT)
#define GPUML__MMA_BDT GPUML_B_DT
#else
#define GPUML__MMA_BDT GPUML__MMA_DT
#endif
#if defined(GPUML_C_DT)
#define GPUML__MMA_CDT GPUML_C_DT
#else
#define GPUML__MMA_CDT 0
#endif
#if defined(GPUML_INT)
#define GPUML__MMA_INT GPUML_INT
#else
#define GPUML__MMA_INT 0
#endif

#if (GPUML__MMA_DT == 1 || GPUML__MMA_DT == 2) && GPUML__MMA_BDT == GPUML__MMA_DT && \
    (GPUML__MMA_CDT == 0 || GPUML__MMA_CDT == 1 || GPUML__MMA_CDT == 2) && !GPUML__MMA_INT
#define GPUML__MMA_EPI GPUML_EPI     /* (0 by default: common.cuh) */
#define GPUML__MMA_BIAS GPUML_HAS_BIAS
#define GPUML__MMA_RESID GPUML_HAS_RESID
#if defined(GPUML_BETA)
#define GPUML__MMA_BETA GPUML_BETA
#else
#define GPUML__MMA_BETA 0
#endif
#if defined(GPUML_B_NMAJOR)
#define GPUML__MMA_NMAJOR GPUML_B_NMAJOR
#else
#define GPUML__MMA_NMAJOR 1
#endif

/* BN=128 needs <= 128 registers for two CTAs per SM; BN=256 runs one CTA per SM */
#define GPUML_MMA_MIN_BLOCKS (GPUML_MMA_BN == 128 ? 2 : 1)
extern "C" __global__ void __launch_bounds__(GPUML_MMA_THREADS, GPUML_MMA_MIN_BLOCKS) gpuml_mm_mma(gpuml__mm_params p)
{
    gpuml__mma_gemm<GPUML__MMA_DT, GPUML__MMA_CDT, GPUML__MMA_EPI, GPUML__MMA_BIAS, GPUML__MMA_RESID,
                    GPUML__MMA_BETA, GPUML__MMA_NMAJOR, GPUML_MMA_BN, GPUML_MMA_STAGES>(p);
}
#endif

#endif /* GPUML__MMA_DEFINED */
