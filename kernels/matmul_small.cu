/* Family "matmul_small": C = epilogue(A @ B) for M = 1..16 (the decode case) on tensor cores,
   sm_80+.  The time is reading B (the weights) once, so the kernel is built around streaming B.

   B is stored N x K (k contiguous, the "weight" layout), A is M x K (k contiguous), both f16 or
   both bf16; K, the row strides and the bases are multiples of 8 elements (16 bytes).  The
   kernel computes C^T = B * A^T with mma.sync.m16n8k16: sixteen weight rows are the MMA's M
   dimension and the tiny M (padded to 8 or 16) is its N dimension.

   The k order inside one MMA does not matter as long as both operands use the same one, so
   every lane fills its fragments straight from 16-byte global loads, with no shared memory and
   no shuffles: lane (g = lane/4, t = lane%4) loads 8 consecutive k (k0 + 8t .. k0 + 8t + 7) of
   weight rows g and g+8 and of A rows g (and g+8 when M > 8).  Word j (two k) of those vectors
   goes to the fragments' k slots {2t, 2t+1} (j even) and {2t+8, 2t+9} (j odd) of MMA j/2, so
   one 32-k step is two MMAs and every fragment register is a loaded word.  A 64-k "chunk" is
   two such steps: the 4 lanes of a row read 128 contiguous bytes.

   A block has GPUML_SM_W warps over the same 16*GPUML_SM_RT weight rows; warp w takes the
   chunks w, w + W, w + 2W, ... (GPUML_SM_U chunks' loads issued before their MMAs), the partial
   K ranges are summed through shared memory in a fixed order (deterministic), and the block
   applies the whole epilogue and stores C: one launch, no workspace.  Weight loads bypass L1
   (ld.global.nc.L1::no_allocate: they are read once); A loads go through L1 (every block reads
   all of A).  Rows past N and A rows past M are clamped to the last valid row (their results
   are computed and dropped), so the main loop has no predicates; the last partial chunk
   (K % 64) is loaded with predicates.

   Macros: GPUML_A_DT (1 f16, 2 bf16; B the same), GPUML_C_DT, GPUML_EPI (0 none, 1 relu,
   2 gelu tanh, 3 silu), GPUML_HAS_BIAS, GPUML_HAS_RESID, GPUML_BETA, GPUML_SM_MT (1: M <= 8,
   2: M <= 16), GPUML_SM_RT (16-row tiles per block: 1, 2, 4), GPUML_SM_W (warps), GPUML_SM_U
   (chunks in flight per warp).
   GPUML_SM_CL (sm_90 only; default 1): a cluster of CL blocks along y splits K further (virtual
   warp y*W + w of CL*W), each block sums its warps into part[], and block y of the cluster
   finishes outputs y, y + CL, ... (in units of a block's threads) reading the CL sums through
   distributed shared memory: more blocks for few weight rows without re-reading A more often.
   Launch: grid (ceil(N / (16*RT)), CL, batch), block 32*W, no dynamic shared memory. */

/* struct gpuml__mm_params: kernels/common.cuh */

#ifdef GPUML_SM_RT
#ifndef GPUML_SM_CL
#define GPUML_SM_CL 1
#endif
#define GPUML__SM_ROWS (16 * GPUML_SM_RT)
#define GPUML__SM_LD (8 * GPUML_SM_MT + 1)   /* shared row stride (floats): odd, conflict-free reads */

typedef gpuml__dt<GPUML_C_DT> gpuml__smTC;

/* the activation and the C-dtype conversions: gpuml__mma_act / gpuml__mma_ld / gpuml__mma_st (common.cuh) */
/* 16 bytes of the weights: read once, so no L1 allocation; the L2 fetches 256-byte blocks */
static __device__ __forceinline__ uint4 gpuml__sm_ldw(const gpuml__u16 *p)
{
    uint4 v;
    asm volatile("ld.global.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    return v;
}
/* 16 bytes of A (read by every block: cached in L1) */
static __device__ __forceinline__ uint4 gpuml__sm_lda(const gpuml__u16 *p)
{
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    return v;
}


/* one 64-k chunk: w[rt][h][s] = weight row (16 rt + g + 8h), k + 32s; a[mt][s] = A row (g + 8mt), k + 32s */
static __device__ __forceinline__ void gpuml__sm_chunk(float (*acc)[GPUML_SM_MT][4], const uint4 (*w)[2][2], const uint4 (*a)[2])
{
#pragma unroll
    for (int s = 0; s < 2; s++)
#pragma unroll
        for (int j = 0; j < 2; j++)
#pragma unroll
            for (int rt = 0; rt < GPUML_SM_RT; rt++) {
                const uint4 lo = w[rt][0][s], hi = w[rt][1][s];
                const gpuml__u32 af[4] = { j ? lo.z : lo.x, j ? hi.z : hi.x, j ? lo.w : lo.y, j ? hi.w : hi.y };   /* a0, a1, a2, a3 */
#pragma unroll
                for (int mt = 0; mt < GPUML_SM_MT; mt++) {
                    const uint4 b = a[mt][s];
                    gpuml__mma_16816<GPUML_A_DT>(acc[rt][mt], af, j ? b.z : b.x, j ? b.w : b.y);
                }
            }
}


extern "C" __global__ void __launch_bounds__(32 * GPUML_SM_W)
#if GPUML_SM_CL > 1
    __cluster_dims__(1, GPUML_SM_CL, 1)
#endif
    gpuml_mm_small_tc(gpuml__mm_params p)
{
    __shared__ float red[GPUML_SM_W][GPUML__SM_ROWS][GPUML__SM_LD];
#if GPUML_SM_CL > 1
    __shared__ float part[16 * GPUML__SM_ROWS];   /* this block's sum over its warps, [m][row] */
#endif
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    /* the cluster's blocks (blockIdx.y = cluster rank) and their warps split K: virtual warp
       `warp` of NW takes chunks warp, warp + NW, ... */
    const int warp = (int)blockIdx.y * GPUML_SM_W + (threadIdx.x >> 5);
#define GPUML__SM_NW (GPUML_SM_W * GPUML_SM_CL)
    const int n0 = blockIdx.x * GPUML__SM_ROWS;
    const gpuml__i64 z = blockIdx.z;
    const gpuml__u16 *A = (const gpuml__u16 *)p.A + z * p.sa_b, *B = (const gpuml__u16 *)p.B + z * p.sb_b;
    const gpuml__u16 *wrow[GPUML_SM_RT][2], *arow[GPUML_SM_MT];
    float acc[GPUML_SM_RT][GPUML_SM_MT][4];
#pragma unroll
    for (int rt = 0; rt < GPUML_SM_RT; rt++)
#pragma unroll
        for (int h = 0; h < 2; h++) wrow[rt][h] = B + (gpuml__i64)min(n0 + 16 * rt + 8 * h + g, p.N - 1) * p.sb_n + 8 * t;
#pragma unroll
    for (int mt = 0; mt < GPUML_SM_MT; mt++) arow[mt] = A + (gpuml__i64)min(8 * mt + g, p.M - 1) * p.sa_m + 8 * t;
#pragma unroll
    for (int rt = 0; rt < GPUML_SM_RT; rt++)
#pragma unroll
        for (int mt = 0; mt < GPUML_SM_MT; mt++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[rt][mt][i] = 0.0f;

    const int nfull = p.K >> 6;
    int c = warp;
    for (; c + (GPUML_SM_U - 1) * GPUML__SM_NW < nfull; c += GPUML_SM_U * GPUML__SM_NW) {
        uint4 w[GPUML_SM_U][GPUML_SM_RT][2][2], a[GPUML_SM_U][GPUML_SM_MT][2];
#pragma unroll
        for (int u = 0; u < GPUML_SM_U; u++) {
            const int k = (c + u * GPUML__SM_NW) << 6;
#pragma unroll
            for (int rt = 0; rt < GPUML_SM_RT; rt++)
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int s = 0; s < 2; s++) w[u][rt][h][s] = gpuml__sm_ldw(wrow[rt][h] + k + 32 * s);
#pragma unroll
            for (int mt = 0; mt < GPUML_SM_MT; mt++)
#pragma unroll
                for (int s = 0; s < 2; s++) a[u][mt][s] = gpuml__sm_lda(arow[mt] + k + 32 * s);
        }
        __syncwarp();   /* keeps ptxas from sinking the loads between the MMAs: all U chunks in flight at once */
#pragma unroll
        for (int u = 0; u < GPUML_SM_U; u++) gpuml__sm_chunk(acc, w[u], a[u]);
    }
#if GPUML_SM_U > 1
    for (; c < nfull; c += GPUML__SM_NW) {
        uint4 w[GPUML_SM_RT][2][2], a[GPUML_SM_MT][2];
        const int k = c << 6;
#pragma unroll
        for (int rt = 0; rt < GPUML_SM_RT; rt++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int s = 0; s < 2; s++) w[rt][h][s] = gpuml__sm_ldw(wrow[rt][h] + k + 32 * s);
#pragma unroll
        for (int mt = 0; mt < GPUML_SM_MT; mt++)
#pragma unroll
            for (int s = 0; s < 2; s++) a[mt][s] = gpuml__sm_lda(arow[mt] + k + 32 * s);
        gpuml__sm_chunk(acc, w, a);
    }
#endif
    if ((p.K & 63) && warp == nfull % GPUML__SM_NW) {   /* the last partial chunk: 8-k groups past K read as zeros */
        uint4 w[GPUML_SM_RT][2][2], a[GPUML_SM_MT][2];
        const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
        const int k = nfull << 6;
#pragma unroll
        for (int s = 0; s < 2; s++) {
            const bool in = k + 32 * s + 8 * t < p.K;
#pragma unroll
            for (int rt = 0; rt < GPUML_SM_RT; rt++)
#pragma unroll
                for (int h = 0; h < 2; h++) w[rt][h][s] = in ? gpuml__sm_ldw(wrow[rt][h] + k + 32 * s) : zero;
#pragma unroll
            for (int mt = 0; mt < GPUML_SM_MT; mt++) a[mt][s] = in ? gpuml__sm_lda(arow[mt] + k + 32 * s) : zero;
        }
        gpuml__sm_chunk(acc, w, a);
    }

    /* acc[rt][mt] = {(row g, m 2t), (row g, m 2t+1), (row g+8, m 2t), (row g+8, m 2t+1)} of the
       16 x 8 tile (rows 16 rt.., m 8 mt..); partial over this warp's chunks */
#pragma unroll
    for (int rt = 0; rt < GPUML_SM_RT; rt++)
#pragma unroll
        for (int mt = 0; mt < GPUML_SM_MT; mt++) {
            float *r0 = &red[threadIdx.x >> 5][16 * rt + g][8 * mt + 2 * t], *r1 = &red[threadIdx.x >> 5][16 * rt + g + 8][8 * mt + 2 * t];
            r0[0] = acc[rt][mt][0]; r0[1] = acc[rt][mt][1];
            r1[0] = acc[rt][mt][2]; r1[1] = acc[rt][mt][3];
        }
    __syncthreads();
    gpuml__smTC::T *C = (gpuml__smTC::T *)p.C + z * p.sc_b;
#if GPUML_HAS_RESID
    const gpuml__smTC::T *R = (const gpuml__smTC::T *)p.R + z * p.sr_b;
#endif
    const float ab = p.alpha * p.scale;
#if GPUML_SM_CL > 1
    /* each block sums its warps; then block y of the cluster finishes every CL-th output,
       adding the CL blocks' sums (in rank order) from their shared memory */
    for (int e = threadIdx.x; e < GPUML__SM_ROWS * p.M; e += 32 * GPUML_SM_W) {
        const int m = e / GPUML__SM_ROWS, r = e - m * GPUML__SM_ROWS;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < GPUML_SM_W; w++) s += red[w][r][m];
        part[e] = s;
    }
    gpuml__cluster_sync();
    for (int e = (int)blockIdx.y * 32 * GPUML_SM_W + threadIdx.x; e < GPUML__SM_ROWS * p.M; e += 32 * GPUML_SM_W * GPUML_SM_CL) {
        const int m = e / GPUML__SM_ROWS, r = e - m * GPUML__SM_ROWS, n = n0 + r;
        if (n >= p.N) continue;
        float s = 0.0f;
#pragma unroll
        for (int q = 0; q < GPUML_SM_CL; q++) s += gpuml__ld_cluster(&part[e], (unsigned)q);
#else
    for (int e = threadIdx.x; e < GPUML__SM_ROWS * p.M; e += 32 * GPUML_SM_W) {   /* consecutive threads: consecutive n */
        const int m = e / GPUML__SM_ROWS, r = e - m * GPUML__SM_ROWS, n = n0 + r;
        if (n >= p.N) continue;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < GPUML_SM_W; w++) s += red[w][r][m];
#endif
        float v = ab * s;
        gpuml__smTC::T *cp = C + m * p.sc_m + n * p.sc_n;
#if GPUML_BETA
        v += p.beta * gpuml__mma_ld<GPUML_C_DT>(*cp);
#endif
#if GPUML_HAS_BIAS
        v += p.bias[n];
#endif
        v = gpuml__mma_act<GPUML_EPI>(v);
#if GPUML_HAS_RESID
        v += gpuml__mma_ld<GPUML_C_DT>(R[m * p.sr_m + n * p.sr_n]);
#endif
        *cp = gpuml__mma_st<GPUML_C_DT>(v);
    }
#if GPUML_SM_CL > 1
    gpuml__cluster_sync();   /* no block leaves while another still reads its part[] */
#endif
}
#endif
