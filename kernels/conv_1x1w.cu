/* Family "conv_1x1w": f32 NCHW 1x1 conv (stride 1, unpadded, groups 1) on Hopper tensor cores for
   allow_tf32, x read as it is (no layout pass).  tools/gen_kernels.sh emits kernels/sm90.cuh (the
   wgmma fence / commit / wait and the shared-memory descriptor) and kernels/conv_params.cuh (the
   params struct, the activation) in front of this file.

   y[n][k][pix] = act(sum_c w[k][c] * x[n][c][pix] + bias[k]) + res[n][k][pix]

   Per image this is y = w @ x with x's pixels contiguous: a GEMM whose B operand (x, [c][pix]) is
   N-major, which tf32 wgmma cannot read from shared memory (it takes both tf32 operands K-major).
   So the kernel computes the transposed product y^T = x^T w^T: x^T is wgmma's A, loaded from a
   [c][pixel] tile into registers (the RS form: a fragment is 32-bit loads, any layout), and w^T is
   its B, K-major as w is stored ([k][c]).  Same idea as gpuml_matmul_sm90_nn (matmul_sm90.cu).

   ==========================================================================================
   LAUNCH CONTRACT
   ==========================================================================================
   Kernel:  extern "C" __global__ void gpuml_conv_1x1w(const __grid_constant__ gpuml__c1w_tmap tma_w,
                                                       gpuml__conv_params p)
            kernelParams { &map_w, &p } (the map 128 bytes, 64-byte aligned; any bytes unless C1W_TMA).
   Compile: sm_90a only, -DGPUML_C1W=1, CONV_EPI 0 none / 1 relu / 2 gelu (tanh) / 3 silu,
            CONV_BIAS 0/1, CONV_RES 0/1, and the tile configuration:
            C1W_WG   warpgroups a block, each 64 pixels (1, 2): the pixel tile BP = 64 * C1W_WG
            C1W_BN   output channels a block (64, 128, 256: wgmma's N)
            C1W_ST   ring depth (>= 2), C1W_MINB the __launch_bounds__ blocks an SM
            C1W_TMA  1: w's tiles by TMA: map_w = w as a 2-D FLOAT32 matrix, globalDim {C, K},
                     globalStrides {K's stride * 4}, boxDim {32, C1W_BN}, 128B swizzle, zero fill;
                     0: by cp.async (then fence.proxy.async a step, which also waits for the copies
                     still in flight: the ring gives no lookahead)
            C1W_IMG  1: a block takes one image (PQ <= 64 * C1W_WG; C % 32 == 0) and x's step
                     (32 channel rows of PQ pixels, contiguous: the channel stride is PQ, the image
                     stride a multiple of 4, x 16-byte aligned) arrives by one bulk copy on the
                     slot's mbarrier beside w's tile: any PQ (the 7 x 7 layers, whose 196-byte rows
                     no 16-byte copy can split); needs C1W_TMA 1 and C1W_EPS 0.  Grid then (N *
                     ceil(K / C1W_BN)).
            C1W_EPS  1: the epilogue stages each warpgroup's tile in shared memory and stores 16
                     bytes (4 pixels of a channel) a thread; 0: 4-byte stores from the accumulators
   Block:   (128 * C1W_WG, 1, 1).
   Grid:    (ceil(N * PQ / BP) * ceil(K / C1W_BN), 1, 1): block b takes the output channels
            [kb * BN, +BN) with kb = b % KB and the pixels [(b / KB) * BP, +BP) of the run of all
            N * PQ pixels (images one after the other: a tile may span two images), KB =
            ceil(K / BN) -- the k blocks of one pixel tile run side by side, so x is read from
            DRAM once.
   Smem:    1024 + C1W_ST * (BN * 128 + 32 * (BP + 8) * 4) + 64 bytes of dynamic shared memory.
   Host preconditions (not checked here): sm_90; x, y, res NCHW with each (n, c) row of PQ pixels
            contiguous; PQ % 4 == 0, the row and image strides multiples of 4 floats, the bases
            16-byte aligned (C1W_IMG 1 with C1W_EPS 0: only x's conditions above); w [K][C] with
            channels contiguous, K's stride a multiple of 4, 16-byte aligned; C % 4 == 0; N * PQ +
            BP < 2^31, K, C < 2^31; bias f32.
   Edges: channels past C and rows past K are zero-filled (cp.async src-size 0), pixels past
            N * PQ too; stores are masked.
   Design: 32 channels a step.  A ring of C1W_ST steps in shared memory: w's tile, BN rows x 128
   bytes in the 128B-swizzled K-major layout wgmma reads (16-byte chunk j of row r at j ^ (r & 7)),
   by TMA on the slot's mbarrier (or cp.async from every thread); x's tile by cp.async from every
   thread, 32 channel rows x BP pixels, rows padded to BP + 8 floats so that a warp's fragment load
   (8 pixels x 4 channels) hits 32 distinct banks.  A step: wait for its copies
   (cp.async.wait_group; the slot's mbarrier, or fence.proxy.async for cp.async-written w), one
   barrier, issue the copies of step + ST - 1 into the slot the previous step used, load the 16
   fragment registers (4 k8 steps, rounded to tf32 with cvt.rna), four RS wgmmas, wait for them (a
   fragment load while an RS wgmma is in flight makes ptxas serialise the wgmmas; several blocks an
   SM keep the tensor cores busy).  Epilogue (C1W_EPS 0) from the accumulators: a thread holds
   pixels g and g + 8 of its warp's 16 and output channels 8j + 2t, 8j + 2t + 1: 4-byte stores, a
   warp's store 4 channels x 8 consecutive pixels; or (C1W_EPS 1) through shared memory, 16-byte
   stores of 4 pixels of one channel.
   ========================================================================================== */

#if defined(GPUML_C1W)
#ifndef C1W_WG
#define C1W_WG 2
#endif
#ifndef C1W_BN
#define C1W_BN 128
#endif
#ifndef C1W_ST
#define C1W_ST 3
#endif
#ifndef C1W_MINB
#define C1W_MINB 2
#endif
#ifndef C1W_TMA
#define C1W_TMA 1    /* 1: w's tile by TMA (mbarrier per slot); 0: by cp.async + fence.proxy.async */
#endif
#ifndef C1W_PIPE
#define C1W_PIPE 0   /* 1: a step's wgmmas stay in flight across the next step's fragment loads (two register sets) */
#endif
#ifndef C1W_IMG
#define C1W_IMG 0    /* 1: a block takes one image (PQ <= 64 * C1W_WG) and x's step arrives by one bulk copy */
#endif
#ifndef C1W_SPLIT
#define C1W_SPLIT 0  /* 1: the blocks past sk.full take half of a tile's channel steps each (the tail's tiles
                        split in two); the pair's last block to finish adds the other's partial sums */
#endif
#ifndef C1W_UP
#define C1W_UP 0     /* 1 (with C1W_EPS 1): y is written at every other column of every other row (p.yp, p.yq =
                        2 x the rows' stride, 2), zeros at the three neighbours: the backward data of
                        a stride-2 1x1 conv, dx = w^T dy spread over dx's even pixels */
#endif
#ifndef C1W_EPS
#define C1W_EPS 1    /* 1: the epilogue stages each warpgroup's tile in shared memory, 16-byte stores;
                        0: 4-byte stores straight from the accumulators */
#endif

struct __align__(64) gpuml__c1w_tmap { unsigned long long opaque[16]; };
/* the split tail (C1W_SPLIT): tiles [0, full) one block each; tile full + u / 2 is blocks full + u
   (channel steps [0, KT / 2)) and full + u + 1 ([KT / 2, KT)).  cnt[u / 2] is a 64-bit counter the
   pair advances by 3 a launch, never reset (zero when allocated): its first arrival (value 3L on
   arrival), the first one's partial sums written to ws + (u / 2) * (BN * BP) floats (+1), the second
   arrival (+1) -- so the arrival that reads 3L is the first, and the second waits for 3L + 3 */
struct gpuml__c1w_split { unsigned long long *cnt; float *ws; int full, pad; };

/* output channel k's bias (0 without CONV_BIAS), for the three epilogues */
static __device__ __forceinline__ float gpuml__c1w_bias(const gpuml__conv_params &p, int k)
{
#if CONV_BIAS
    return p.bias[k];
#else
    (void)p;
    (void)k;
    return 0.0f;
#endif
}
static __device__ __forceinline__ void gpuml__c1w_cp16(gpuml__u32 dst, const void *src, gpuml__u32 bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
/* a contiguous global range into shared memory by the bulk-copy engine, complete_tx on bar (bytes
   and both addresses multiples of 16) */
static __device__ __forceinline__ void gpuml__c1w_bulk(gpuml__u32 dst, const void *src, gpuml__u32 bytes, gpuml__u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
static __device__ __forceinline__ void gpuml__c1w_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> static __device__ __forceinline__ void gpuml__c1w_wait(void)
{
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
/* a shared-memory f32, rounded to tf32 (round to nearest, ties away: the tf32 the other kernels use) */
static __device__ __forceinline__ gpuml__u32 gpuml__c1w_lds_rna(gpuml__u32 addr)
{
    gpuml__u32 r;
    asm volatile("{\n\t.reg .f32 v;\n\tld.shared.f32 v, [%1];\n\tcvt.rna.tf32.f32 %0, v;\n\t}" : "=r"(r) : "r"(addr));
    return r;
}

/* D[64 x 64] (+)= A[64 x 8] (tf32 fragment in registers) * B[8 x 64] (K-major, 128B-swizzled
   smem); scale_d 0 overwrites D */
static __device__ __forceinline__ void gpuml__c1w_wgmma64(float *d, const gpuml__u32 *a, gpuml__u64 db, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %37, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
        GPUML__D32_STR
        "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n\t}"
        : GPUML__D32(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}
/* D[64 x 128] (+)= A[64 x 8] (tf32 fragment in registers) * B[8 x 128] (K-major, 128B-swizzled
   smem); scale_d 0 overwrites D */
static __device__ __forceinline__ void gpuml__c1w_wgmma128(float *d, const gpuml__u32 *a, gpuml__u64 db, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %69, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        GPUML__D64_STR
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n\t}"
        : GPUML__D64(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}
/* D[64 x 256] (+)= A[64 x 8] (tf32 fragment in registers) * B[8 x 256] (K-major, 128B-swizzled
   smem); scale_d 0 overwrites D */
static __device__ __forceinline__ void gpuml__c1w_wgmma256(float *d, const gpuml__u32 *a, gpuml__u64 db, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %133, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
        GPUML__D128_STR
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n\t}"
        : GPUML__D128(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
}

extern "C" __global__ void __launch_bounds__(128 * C1W_WG, C1W_MINB)
    gpuml_conv_1x1w(const __grid_constant__ gpuml__c1w_tmap tma_w, const gpuml__conv_params p
#if C1W_SPLIT
                    , const gpuml__c1w_split sk
#endif
    )
{
    constexpr int WG = C1W_WG, BN = C1W_BN, ST = C1W_ST, T = 128 * WG, BP = 64 * WG, XP = BP + 8;
    constexpr int W_BYTES = BN * 128, X_BYTES = 32 * XP * 4, STAGE = W_BYTES + X_BYTES;
    constexpr int WCH = BN * 8 / T;   /* 16-byte w chunks a thread a step (cp.async form) */
    static_assert(WG == 1 || WG == 2, "warpgroups");
    static_assert(BN == 64 || BN == 128 || BN == 256, "output channel tile");
    static_assert(ST >= 2, "stages");
    static_assert(STAGE % 1024 == 0 && WCH >= 1, "stage layout");
    static_assert(!C1W_EPS || WG * BN * (64 + 4) * 4 <= ST * STAGE, "epilogue staging fits the ring");
    static_assert(!C1W_IMG || (C1W_TMA && !C1W_EPS), "one image a block: w by TMA (the slot's mbarrier), 4-byte stores");
    static_assert(!C1W_UP || (C1W_EPS && !C1W_IMG && !CONV_RES), "the spread store: staged epilogue, pixel tiles, no residual");
    extern __shared__ __align__(1024) unsigned char gpuml__c1w_smem[];
    const gpuml__u32 base = ((gpuml__u32)__cvta_generic_to_shared(gpuml__c1w_smem) + 1023u) & ~1023u;
    const int tid = (int)threadIdx.x, wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const int M = (int)p.k, C = (int)p.c, PQ = (int)(p.p * p.q), NP = (int)(p.n * PQ), KT0 = (C + 31) / 32;
#if C1W_SPLIT
    /* a tail block: half of its tile's channel steps (KT0 >= 2: the host splits only long K loops) */
    const int half = (int)blockIdx.x < sk.full ? -1 : (int)(blockIdx.x - (unsigned)sk.full) & 1;
    const unsigned tile = half < 0 ? blockIdx.x : (unsigned)sk.full + ((blockIdx.x - (unsigned)sk.full) >> 1);
    const int k0 = half > 0 ? KT0 / 2 : 0, KT = half < 0 ? KT0 : half ? KT0 - KT0 / 2 : KT0 / 2;
#else
    const unsigned tile = blockIdx.x;
    const int k0 = 0, KT = KT0;
#endif
    const int KB = (M + BN - 1) / BN, kb = (int)(tile % (unsigned)KB);
#if C1W_IMG
    /* one image a block: its PQ pixels are the tile's first rows (the rest read leftovers and are
       never stored); x's step is 32 channel rows of PQ pixels, contiguous, [channel][pixel] at a
       pitch of PQ floats */
    const int n0 = (int)(tile / (unsigned)KB) * PQ, lim = n0 + PQ, xpitch = PQ;
#else
    const int n0 = (int)(tile / (unsigned)KB) * BP, lim = NP, xpitch = XP;
#endif
    const int m0 = kb * BN;
    const float *const X = (const float *)p.x, *const W = (const float *)p.wt;
#if C1W_TMA
    /* one "full" mbarrier a slot (after the ring): w's tile landed (TMA's transaction count) */
    const gpuml__u32 bars = base + (gpuml__u32)(ST * STAGE);
    if (tid == 0) {
        asm volatile("prefetch.tensormap [%0];" ::"l"((gpuml__u64)&tma_w) : "memory");
        for (int s = 0; s < ST; s++) gpuml__mbar_init(bars + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    (void)W;
#endif
    /* loaders.  w (cp.async form): chunk j = tid % 8 (channels 4j..4j+3 of the step) of rows
       wr + (T / 8) i; x: the 4 pixels xb * 4.. of channel rows xr + 8 i (i < 4) */
    const int wj = tid & 7, wr = tid >> 3;
    const int xb = tid % (BP / 4), xr = tid / (BP / 4);
    const int xf = n0 + 4 * xb;
    const bool xok = xf < NP;
    const int ximg = xok ? xf / PQ : 0;
    const float *const xcol = X + (gpuml__i64)ximg * p.xn + (xok ? xf - ximg * PQ : 0);
    auto load = [&](int kt) {
        if (kt < KT) {
            const gpuml__u32 ws = base + (gpuml__u32)((kt % ST) * STAGE), xs = ws + W_BYTES;
            const int c0 = (k0 + kt) * 32;
#if C1W_TMA
            if (tid == 0) {   /* the slot's previous wgmmas were waited for before the last barrier */
#if C1W_IMG
                /* x's 32 channel rows of this image (C % 32 == 0: always whole); the slot's earlier
                   x was read by ld.shared (generic proxy) before the barrier */
                const gpuml__u32 xbytes = (gpuml__u32)(32 * PQ * 4);
                gpuml__proxy_fence();
                gpuml__mbar_expect_tx(bars + 8 * (kt % ST), (unsigned)W_BYTES + xbytes);
                gpuml__tma_load_2d(ws, &tma_w, c0, m0, bars + 8 * (kt % ST));
                gpuml__c1w_bulk(xs, X + (gpuml__i64)(n0 / PQ) * p.xn + (gpuml__i64)c0 * p.xc, xbytes, bars + 8 * (kt % ST));
#else
                gpuml__mbar_expect_tx(bars + 8 * (kt % ST), (unsigned)W_BYTES);
                gpuml__tma_load_2d(ws, &tma_w, c0, m0, bars + 8 * (kt % ST));
#endif
            }
#else
#pragma unroll
            for (int i = 0; i < WCH; i++) {
                const int r = wr + (T / 8) * i, row = m0 + r, c = c0 + 4 * wj;
                const bool ok = row < M && c < C;
                gpuml__c1w_cp16(ws + (gpuml__u32)(r * 128 + ((wj ^ (r & 7)) << 4)), ok ? W + (gpuml__i64)row * p.wk + c : W, ok ? 16 : 0);
            }
#endif
#if C1W_IMG
            (void)xs; (void)xok; (void)xcol; (void)xb; (void)xr;
#else
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int r = xr + 8 * i, c = c0 + r;
                const bool ok = xok && c < C;
                gpuml__c1w_cp16(xs + (gpuml__u32)((r * XP + 4 * xb) * 4), ok ? xcol + (gpuml__i64)c * p.xc : X, ok ? 16 : 0);
            }
#endif
        }
        gpuml__c1w_commit();
    };
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++) acc[i] = 0.0f;
#if C1W_PIPE
    /* pipelined: a step's wgmmas stay in flight while the next step loads its fragments (into the
       other register set) and issues its own; the refill goes to the slot of step kt - 2 (retired
       by the previous step's wait<1>), so the copies run ST - 2 steps ahead */
    static_assert(ST >= 3, "the pipelined loop needs 3 stages or more");
#pragma unroll
    for (int s = 0; s < ST - 2; s++) load(s);
#else
    /* ST - 1 steps ahead; step kt refills the slot of step kt - 1 (its wgmmas waited for, everyone
       past this step's barrier) with step kt + ST - 1.  A loop of at most ST steps (short channel
       loops: a two-slot ring of C <= 64) has every step in flight before the first wait instead */
    const bool whole = KT <= ST;
#pragma unroll
    for (int s = 0; s < ST - 1; s++) load(s);
    if (whole) load(ST - 1);
#endif
    /* this thread's fragment rows: pixels pr and pr + 8 of the tile; channels t4 and t4 + 4 of a k8 step */
    const int pr = wg * 64 + warp * 16 + g;
    const gpuml__u32 frag = (gpuml__u32)((t4 * xpitch + pr) * 4);
    auto step = [&](int kt, gpuml__u32 (&a)[16]) {
#if C1W_PIPE
        gpuml__c1w_wait<ST - 3>();   /* this thread's x copies of step kt have landed */
#else
        if (whole && kt == 0) gpuml__c1w_wait<ST - 1>();   /* ST groups committed, step 0's landed */
        else gpuml__c1w_wait<ST - 2>();   /* ST - 1 + kt committed (whole: ST + kt - 1, step 0 loading none), steps 0..kt landed */
#endif
#if C1W_TMA
        gpuml__mbar_wait(bars + 8 * (kt % ST), (unsigned)((kt / ST) & 1));   /* and w's tile */
#else
        gpuml__proxy_fence();        /* the w copies visible to wgmma's async-proxy reads (this fence
                                        also waits for the copies still in flight: no lookahead) */
#endif
        __syncthreads();             /* everyone's; the slot refilled now is free (its wgmmas waited for) */
#if C1W_PIPE
        load(kt + ST - 2);
#else
        if (!whole || kt > 0) load(kt + ST - 1);
#endif
        const gpuml__u32 ws = base + (gpuml__u32)((kt % ST) * STAGE), xs = ws + W_BYTES + frag;
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            a[4 * kk + 0] = gpuml__c1w_lds_rna(xs + (gpuml__u32)((8 * kk) * xpitch * 4));
            a[4 * kk + 1] = gpuml__c1w_lds_rna(xs + (gpuml__u32)((8 * kk * xpitch + 8) * 4));
            a[4 * kk + 2] = gpuml__c1w_lds_rna(xs + (gpuml__u32)((8 * kk + 4) * xpitch * 4));
            a[4 * kk + 3] = gpuml__c1w_lds_rna(xs + (gpuml__u32)(((8 * kk + 4) * xpitch + 8) * 4));
        }
        const gpuml__u64 db = gpuml__smem_desc(ws, 16, 1024);
        gpuml__wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
#if C1W_BN == 64
            gpuml__c1w_wgmma64(acc, a + 4 * kk, db + (gpuml__u64)((kk * 32) >> 4), 1);
#elif C1W_BN == 128
            gpuml__c1w_wgmma128(acc, a + 4 * kk, db + (gpuml__u64)((kk * 32) >> 4), 1);
#else
            gpuml__c1w_wgmma256(acc, a + 4 * kk, db + (gpuml__u64)((kk * 32) >> 4), 1);
#endif
        }
        gpuml__wgmma_commit();
#if C1W_PIPE
        gpuml__wgmma_wait<1>();      /* the previous step's wgmmas (its slot and registers) retired */
#else
        gpuml__wgmma_wait<0>();
#endif
    };
    gpuml__u32 a0[16];
#if C1W_PIPE
    gpuml__u32 a1[16];
    int kt = 0;
    for (; kt + 1 < KT; kt += 2) {
        step(kt, a0);
        step(kt + 1, a1);
    }
    if (kt < KT) step(kt, a0);
    gpuml__wgmma_wait<0>();
#else
    for (int kt = 0; kt < KT; kt++) step(kt, a0);
#endif
    gpuml__c1w_wait<0>();   /* the trailing (empty) groups */
#if C1W_SPLIT
    if (half >= 0) {
        /* the pair's partial sums: the first to finish leaves its accumulators (a float4 of them
           at [i][thread], coalesced) and returns; the second adds them (acc + partner: the same
           f32 sums whichever half comes second) and stores the tile */
        __shared__ unsigned long long arrived;
        unsigned long long *const cnt = sk.cnt + (tile - (unsigned)sk.full);
        float4 *const wsp = (float4 *)(sk.ws + (gpuml__i64)(tile - (unsigned)sk.full) * (BN * BP));
        if (tid == 0) arrived = atomicAdd(cnt, 1ull);
        __syncthreads();
        const unsigned long long a = arrived;
        if (a % 3 == 0) {
#pragma unroll
            for (int i = 0; i < BN / 8; i++)
                __stcg(wsp + i * T + tid, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
            __threadfence();
            __syncthreads();
            if (tid == 0) atomicAdd(cnt, 1ull);
            return;
        }
        if (tid == 0) {
            const unsigned long long want = a - a % 3 + 3;
            unsigned long long v;
            for (;;) {
                asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(cnt) : "memory");
                if (v >= want) break;
                __nanosleep(64);
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < BN / 8; i++) {
            const float4 v = __ldcg(wsp + i * T + tid);
            acc[4 * i] += v.x; acc[4 * i + 1] += v.y; acc[4 * i + 2] += v.z; acc[4 * i + 3] += v.w;
        }
    }
#endif
    float *const Y = (float *)p.y;
#if CONV_RES
    const float *const R = (const float *)p.res;
#endif
#if C1W_EPS
    /* each warpgroup's 64 pixels x BN channels through shared memory (the ring, free now: every
       copy landed, every wgmma waited for): [channel][pixel] rows of 64 + 4 floats (a warp's
       fragment writes, 8 pixels x 4 channel pairs, hit 32 distinct banks), then 16-byte stores of
       4 pixels of one channel (never across an image: PQ % 4 == 0), a warp 2 channel rows of 256 bytes */
    constexpr int EP = 64 + 4;
    __syncthreads();
    float *const es = (float *)(gpuml__c1w_smem + (base - (gpuml__u32)__cvta_generic_to_shared(gpuml__c1w_smem))) + wg * BN * EP;
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                es[(8 * j + 2 * t4 + e) * EP + warp * 16 + g + 8 * h] = acc[4 * j + 2 * h + e];
    if (wg == 0) asm volatile("bar.sync 1, 128;" ::: "memory");   /* this warpgroup's tile written */
    else asm volatile("bar.sync 2, 128;" ::: "memory");
    const int wt = tid & 127;
    (void)lim;
#if C1W_UP
    /* dx's even pixels: lane q4 of a half-warp takes the pixel pairs q4 and q4 + 16 of the warpgroup's
       64 (pixels 2c, 2c + 1: one dx row, Q even), the 16 bytes (v, 0, v', 0) at row 2 pp, column 2 qq
       and 16 zero bytes a row below -- a half-warp's store is 256 contiguous bytes, whole sectors
       (p.yp, p.yq = 2 x dx's row stride, 2) */
    {
        const int q4 = wt & 15;
        gpuml__i64 uo[2];
        bool ok[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int f = n0 + wg * 64 + 2 * (q4 + 16 * h), im = f < NP ? f / PQ : 0, pix = f - im * PQ, pp = pix / (int)p.q;
            ok[h] = f < NP;
            uo[h] = (gpuml__i64)im * p.yn + (gpuml__i64)pp * p.yp + (gpuml__i64)(pix - pp * (int)p.q) * p.yq;
        }
        const gpuml__i64 zrow = p.yp >> 1;
        for (int ch = wt >> 4; ch < BN; ch += 8) {
            const int k = m0 + ch;
            if (k >= M) break;
            const float b = gpuml__c1w_bias(p, k);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                if (!ok[h]) continue;
                const float2 v = *(const float2 *)(es + ch * EP + 2 * (q4 + 16 * h));
                float *const dst = Y + uo[h] + (gpuml__i64)k * p.yk;
                asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "f"(gpuml__conv_act(v.x + b)), "f"(0.0f),
                             "f"(gpuml__conv_act(v.y + b)), "f"(0.0f) : "memory");
                asm volatile("st.global.v4.f32 [%0], {%1, %1, %1, %1};" ::"l"(dst + zrow), "f"(0.0f) : "memory");
            }
        }
    }
#else
    const int q4 = wt & 15, f = n0 + wg * 64 + 4 * q4;
    if (f < NP) {
        const int im = f / PQ;
        const gpuml__i64 yo = (gpuml__i64)im * p.yn + (f - im * PQ);
#if CONV_RES
        const gpuml__i64 ro = (gpuml__i64)im * p.rn + (f - im * PQ);
#endif
        for (int ch = wt >> 4; ch < BN; ch += 8) {
            const int k = m0 + ch;
            if (k >= M) break;
            const float b = gpuml__c1w_bias(p, k);
            float4 v = *(const float4 *)(es + ch * EP + 4 * q4);
            v.x = gpuml__conv_act(v.x + b); v.y = gpuml__conv_act(v.y + b); v.z = gpuml__conv_act(v.z + b); v.w = gpuml__conv_act(v.w + b);
#if CONV_RES
            const float4 r = *(const float4 *)(R + ro + (gpuml__i64)k * p.rk);
            v.x += r.x; v.y += r.y; v.z += r.z; v.w += r.w;
#endif
            float *const dst = Y + yo + (gpuml__i64)k * p.yk;
            asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
        }
    }
#endif
#else
    /* pixels f[h] = tile row pr + 8h, output channels m0 + 8j + 2t4 + e */
    gpuml__i64 yo[2];
#if CONV_RES
    gpuml__i64 ro[2];
#endif
    bool fo[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int f = n0 + pr + 8 * h, im = f < lim ? f / PQ : 0;
        fo[h] = f < lim;
        yo[h] = (gpuml__i64)im * p.yn + (f - im * PQ);
#if CONV_RES
        ro[h] = (gpuml__i64)im * p.rn + (f - im * PQ);
#endif
    }
#pragma unroll
    for (int j = 0; j < BN / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int k = m0 + 8 * j + 2 * t4 + e;
            if (k >= M) continue;
            const float b = gpuml__c1w_bias(p, k);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                if (!fo[h]) continue;
                float v = gpuml__conv_act(acc[4 * j + 2 * h + e] + b);
#if CONV_RES
                v += R[ro[h] + (gpuml__i64)k * p.rk];
#endif
                Y[yo[h] + (gpuml__i64)k * p.yk] = v;
            }
        }
#endif
}
#endif /* GPUML_C1W */
