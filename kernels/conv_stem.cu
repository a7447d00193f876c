/* Family "conv_stem": conv2d forward for few input channels (the ResNet stem: C = 3, 7x7,
   stride 2), sm_80 and newer, mma.sync.m16n8k16 f16 / bf16 with f32 accumulation, fused
   epilogue.  tools/gen_kernels.sh emits kernels/matmul_mma.cu and kernels/conv_igemm.cu in front
   of this file (their PTX wrappers, gpuml__conv_params and the 8-output store gpuml__conv_out8;
   neither defines a kernel here: GPUML_A_DT and GPUML_CONV_DT are not set).

   Why a kernel of its own: with C = 3 the implicit GEMM's K_gemm = R*S*C = 147 has no 16-byte
   chunks of one pixel, so conv_igemm.cu's gather configuration fetches A one element at a time
   and re-reads every input element once per tap that covers it (~12x for 7x7 / stride 2).
   Here a block owns a TP x TQ tile of output pixels of one image (TP * TQ = 128) and 64 output
   channels; it copies the input window of the whole tile (IR x IC pixels) into shared memory
   once, with the channels padded to CP = C rounded up to even (zeros), and builds the mma A
   fragments straight from that copy with 32-bit loads: GEMM depth index k = (r*S + s)*CP + c,
   so k and k+1 (k even) are channels c, c+1 of one input pixel -- one aligned 32-bit word.  A
   per-k-pair table (koff) holds each pair's offset inside the window; a fragment row adds the
   offset of its output pixel.  K_gemm = R*S*CP rounded up to 16 (the stem: 196 -> 208); the
   padded depth reads 0 (koff -1) against zero weights.  The weights [64][K_gemm] (channel-
   padded the same way) stay in shared memory for the whole block, which walks over pixel tiles
   (persistent grid).  The epilogue goes through a per-warp f32 slab to 16-byte stores.

   ==========================================================================================
   LAUNCH CONTRACT
   ==========================================================================================
   Kernel:  extern "C" __global__ void gpuml_conv_stem(gpuml__conv_params p)   (by value)
   Block:   (128, 1, 1): 4 warps, warp w computes tile pixels [32w, 32w + 32) x 64 channels.
   Grid:    (any x >= 1, ceil(K / 64), 1): blockIdx.y = output channels [64y, 64y + 64);
            blockIdx.x walks the pixel tiles t = x, x + gridDim.x, ... of N * ceil(P/TP) * ceil(Q/TQ).
   Dynamic shared memory (bytes): gpuml__conv_stem_smem in gpuml.h:
            64 * (KP + 8) * 2        weights, rows padded by 8 halves (conflict-free ldmatrix)
          + 4 * 8 * 72 * 4           per-warp epilogue slabs (8 rows x 64 f32, rows padded)
          + KP / 2 * 4               koff
          + IR * IC * CP * 2 rounded up to 16   the input window
            with CP = (C + 1) & ~1, KP = ceil(R*S*CP / 16) * 16, TP = 128 / TQ,
            IR = (TP - 1) * stride_h + (R - 1) * dil_h + 1, IC = (TQ - 1) * stride_w + (S - 1) * dil_w + 1.
   GPUML_STEM_TMA 1 (sm_90+): the kernel takes a second parameter, const __grid_constant__
            gpuml__stem_tmap tmx, a rank-3 tensor map over x viewed as [N][H][W * C] (u16, no swizzle,
            zero fill), box {PITCH, IR, 1}; the window is
            copied raw (no channel padding) by TMA into one of two buffers, the next tile's copy in
            flight during this tile's mma.  GEMM depth k = r * JP + j with j = s * C + c (dil_w = 1:
            a filter row's S * C taps are contiguous in the window), JP = S * C rounded up to even;
            the pair (k, k+1) is one aligned word when stride_w * C is even; a per-pair mask zeroes
            the odd slot past S * C and the depth past R * JP.  TMA boxes start on 16-byte boundaries,
            so the window sits SHIFT = (first column * C) & 7 halves into its buffer (PITCH = IC * C + 7
            rounded up to 8); SHIFT is odd when pad_w * C is (LEAD = 1: slot jj holds tap jj - 1,
            JP = S * C + 1 rounded up to even).  Dynamic shared memory:
            64 * (KP + 8) * 2 + 4 * 8 * 72 * 4 + KP * 4 (koff, kmask) + 16 (2 mbarriers) + 128
            (alignment) + 2 * (IR * PITCH * 2 rounded up to 128) + 16, KP = ceil(R * JP / 16) * 16.
            Host preconditions besides the ones below: dil_w 1, stride_w * C even, PITCH <= 256,
            IR <= 256, x 16-byte aligned, W * C * 2 a multiple of 16; GPUML_STEM_PF 0.
   Macros:  GPUML_STEM_DT 1 f16 / 2 bf16 (x and w); GPUML_CONV_YDT 0 f32 / 1 f16 / 2 bf16 (y, res);
            GPUML_EPI 0-3; GPUML_HAS_BIAS, GPUML_HAS_RESID 0/1; GPUML_STEM_TQ 8 or 16 (tile width);
            GPUML_STEM_PF 1: the next tile's window (its first 16 words a thread) is loaded into
            registers during this tile's mma (__launch_bounds__(128, 3)), 0: not (128, 4).
   Host preconditions (not checked here): everything contiguous; 2-byte aligned x, w; bias f32
   4-byte aligned; groups 1; the 32-bit index limits of gpuml__conv_igemm_why; C <= 16;
   H*W*C < 2^31; a window row IC * CP / 2 < 4096 words.
   Edges: input outside the image reads 0, output pixels past P, Q and channels past K are masked.
   ========================================================================================== */

#if defined(GPUML_STEM_DT) && (GPUML_STEM_DT == 1 || GPUML_STEM_DT == 2)
#ifndef GPUML_STEM_TQ
#define GPUML_STEM_TQ 16
#endif
#ifndef GPUML_STEM_PF
#define GPUML_STEM_PF 0
#endif
#ifndef GPUML_STEM_TMA
#define GPUML_STEM_TMA 0
#endif
#if GPUML_STEM_TMA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#undef GPUML_STEM_TMA
#define GPUML_STEM_TMA 0   /* TMA is sm_90+: the host asks for it only there (this keeps other archs compiling) */
#endif
#if GPUML_STEM_TMA
struct __align__(64) gpuml__stem_tmap { unsigned long long opaque[16]; };
#endif
/* GPUML_STEM_PF 1: the first NPF words a thread copies of the next tile's window are loaded into
   registers while this tile computes (3 blocks per SM: those 16 registers); 0: the window is
   loaded when its tile starts (4 blocks per SM) */
#if GPUML_STEM_PF
#define GPUML__STEM_MINB 3
#else
#define GPUML__STEM_MINB 4
#endif

extern "C" __global__ void __launch_bounds__(128, GPUML__STEM_MINB) gpuml_conv_stem(gpuml__conv_params p
#if GPUML_STEM_TMA
                                                                                    , const __grid_constant__ gpuml__stem_tmap tmx
#endif
)
{
    constexpr int DT = GPUML_STEM_DT, CDT = GPUML_CONV_YDT, TQ = GPUML_STEM_TQ, TP = 128 / TQ, TMA = GPUML_STEM_TMA;
    static_assert(!(GPUML_STEM_TMA && GPUML_STEM_PF), "TMA windows replace the register prefetch");
    constexpr int BN = 64, NT = 8, SLAB = 72;        /* channels per block, n8 tiles, slab row (floats) */
    static_assert(TQ == 8 || TQ == 16, "tile width");
    typedef gpuml__dt<CDT>::T CT;
    extern __shared__ __align__(16) unsigned char gpuml__stem_smem[];

    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, tig = lane & 3, grp = lane >> 2;
    const int C = p.C, CP = (C + 1) & ~1, R = p.R, S = p.S, K = p.K, H = p.H, W = p.W, P = p.P, Q = p.Q;
    /* TMA: a filter row's J taps in JP slots, slot jj = tap jj - LEAD: a TMA box must start on a 16-byte
       boundary, so a tile's window lands SHIFT = (its first column * C) mod 8 halves into the buffer,
       and SHIFT's parity is (pad_w * C)'s (stride_w * C is even): LEAD = 1 keeps the pairs aligned */
    const int J = S * C, LEAD = (p.pad_w * C) & 1, JP = (J + LEAD + 1) & ~1;
    const int KR = TMA ? R * JP : R * S * CP, KP = (KR + 15) & ~15, WST = KP + 8, KS = KP >> 4;
    const int IR = (TP - 1) * p.stride_h + (R - 1) * p.dil_h + 1;
    const int IC = (TQ - 1) * p.stride_w + (S - 1) * p.dil_w + 1;
    const int PITCH = TMA ? (IC * C + 7 + 7) & ~7 : 0;   /* TMA: the raw window's row (up to 7 halves of SHIFT), in halves */
    const int n0 = (int)blockIdx.y * BN;

    gpuml__u16 *sW = (gpuml__u16 *)gpuml__stem_smem;                        /* [64][WST] */
    float *slab = (float *)(gpuml__stem_smem + BN * WST * 2) + warp * 8 * SLAB;
    int *koff = (int *)(gpuml__stem_smem + BN * WST * 2 + 4 * 8 * SLAB * 4);   /* [KP / 2] */
    gpuml__u16 *sX = (gpuml__u16 *)(koff + (KP >> 1));                      /* [IR][IC][CP] (not TMA) */
    gpuml__u32 *kmask = (gpuml__u32 *)(koff + (KP >> 1));                   /* TMA: [KP / 2] */
    const gpuml__u16 *x16 = (const gpuml__u16 *)p.x, *w16 = (const gpuml__u16 *)p.w;

    /* ---- once per block: the weights (channel-padded, zero past K_gemm and K) and koff;
       16 words per thread in flight (a load round trip per word would cost ~50 of them) ---- */
    {
        const int half = KP >> 1;
        for (int i0 = tid; i0 < BN * half; i0 += 16 * 128) {
            gpuml__u32 v[16];
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const int i = i0 + j * 128, n = i / half, k = (i - n * half) * 2;
                v[j] = 0;
                if (i < BN * half && n0 + n < K && k < KR) {
                    if (TMA) {   /* k = r * JP + jj: tap jj - LEAD = s * C + c of filter row r (0 outside [0, J)) */
                        const int r = k / JP, t0 = k - r * JP - LEAD;
                        const gpuml__u16 *src = w16 + (gpuml__i64)(n0 + n) * p.Kg + r * J + t0;
                        v[j] = (gpuml__u32)(t0 >= 0 && t0 < J ? __ldg(src) : (gpuml__u16)0) |
                               ((gpuml__u32)(t0 + 1 < J ? __ldg(src + 1) : (gpuml__u16)0) << 16);
                    } else {
                        const int rs = k / CP, c = k - rs * CP;
                        const gpuml__u16 *src = w16 + (gpuml__i64)(n0 + n) * p.Kg + rs * C + c;
                        v[j] = (gpuml__u32)(c < C ? __ldg(src) : (gpuml__u16)0) | ((gpuml__u32)(c + 1 < C ? __ldg(src + 1) : (gpuml__u16)0) << 16);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const int i = i0 + j * 128, n = i / half, k = (i - n * half) * 2;
                if (i < BN * half) *(gpuml__u32 *)(sW + n * WST + k) = v[j];
            }
        }
        for (int i = tid; i < half; i += 128) {
            const int k = 2 * i;
            int o = -1;
            if (TMA) {   /* the pair's offset in the raw window and which of its halves are taps */
                gpuml__u32 m = 0;
                o = 0;
                if (k < KR) {   /* offsets from the tile's SHIFT - LEAD (even) */
                    const int r = k / JP, t0 = k - r * JP - LEAD;
                    o = r * p.dil_h * PITCH + t0 + LEAD;
                    m = (t0 >= 0 && t0 < J ? 0xffffu : 0u) | (t0 + 1 < J ? 0xffff0000u : 0u);
                }
                kmask[i] = m;
            } else if (k < KR) {
                const int rs = k / CP, c = k - rs * CP, r = rs / S, s = rs - r * S;
                o = (r * p.dil_h * IC + s * p.dil_w) * CP + c;
            }
            koff[i] = o;
        }
    }

    /* the window offset (halves) of this thread's fragment rows: tile pixel 32*warp + 16*mt + 8*h + grp */
    int rbase[2][2];
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int ml = warp * 32 + mt * 16 + h * 8 + grp, pr = ml / TQ, qc = ml - pr * TQ;
            rbase[mt][h] = TMA ? pr * p.stride_h * PITCH + qc * p.stride_w * C : (pr * p.stride_h * IC + qc * p.stride_w) * CP;
        }
    /* ldmatrix lane address of the B (weight) fragments: row n = 16*np + (lane & 15), k half (lane >> 4) */
    const gpuml__u32 sw_lane = gpuml__mma_smem_addr(sW) + (gpuml__u32)(((lane & 15) * WST + (lane >> 4) * 8) * 2);

    /* the input-window copy: word i of the window (row-major [IR][IC * CP / 2]: pixel ic's channels
       c, c+1 at word ir * WPR + ic * HCP + c / 2) is loaded by thread i % 128, NPF words per
       thread per batch, all loads of a batch in flight at once; a thread steps its (row, word)
       by 128 words with an add and a carry, and splits the word into (pixel, channel pair) by a
       multiply (HCP <= 8, WPR < 4096: exact) */
    constexpr int NPF = 16;
    const int HCP = CP >> 1, WPR = IC * HCP, TOTW = IR * WPR, NBATCH = (TOTW + NPF * 128 - 1) / (NPF * 128);
    const int qrow = 128 / WPR, qrem = 128 - qrow * WPR;
    const unsigned hmul = ((1u << 20) + (unsigned)HCP - 1) / (unsigned)HCP;
    auto win_load = [&](gpuml__u32 *v, int batch, int ih0, int iw0, gpuml__i64 img) {
        const int i0 = tid + batch * NPF * 128;
        int ir = i0 / WPR, wc = i0 - ir * WPR;
#pragma unroll
        for (int j = 0; j < NPF; j++) {
            const int ic = (int)(((unsigned)wc * hmul) >> 20), c = (wc - ic * HCP) * 2, ih = ih0 + ir, iw = iw0 + ic;
            v[j] = 0;
            if (ir < IR && (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W) {
                const gpuml__u16 *src = x16 + img + ((ih * W + iw) * C + c);   /* H*W*C < 2^31 (host) */
                v[j] = (gpuml__u32)__ldg(src) | ((gpuml__u32)(c + 1 < C ? __ldg(src + 1) : (gpuml__u16)0) << 16);
            }
            wc += qrem;
            ir += qrow;
            if (wc >= WPR) { wc -= WPR; ir++; }
        }
    };
    auto win_store = [&](const gpuml__u32 *v, int batch) {
#pragma unroll
        for (int j = 0; j < NPF; j++) {
            const int i = tid + (batch * NPF + j) * 128;
            if (i < TOTW) ((gpuml__u32 *)sX)[i] = v[j];
        }
    };
    auto tile_at = [&](int t, int &ni, int &p0, int &q0) {
        const int tilesQ_ = (Q + TQ - 1) / TQ, tilesP_ = (P + TP - 1) / TP;
        const int tq = t % tilesQ_, rest = t / tilesQ_, tp = rest % tilesP_;
        ni = rest / tilesP_; p0 = tp * TP; q0 = tq * TQ;
    };

    const int ntiles = p.N * ((P + TP - 1) / TP) * ((Q + TQ - 1) / TQ);
    CT *Y = (CT *)p.y;
    const CT *Rz = (const CT *)p.res;
    const bool vec_ok = K % 8 == 0 && ((gpuml__u64)p.y & 15) == 0 && (!GPUML_HAS_RESID || ((gpuml__u64)p.res & 15) == 0);

    gpuml__u32 pf[GPUML_STEM_PF ? NPF : 1];          /* the next tile's first batch (GPUML_STEM_PF) */
    if (GPUML_STEM_PF && (int)blockIdx.x < ntiles) {
        int ni, p0, q0;
        tile_at((int)blockIdx.x, ni, p0, q0);
        win_load(pf, 0, p0 * p.stride_h - p.pad_h, q0 * p.stride_w - p.pad_w, (gpuml__i64)ni * H * W * C);
    }
    /* the block's bias pairs, once: loaded in the epilogue they stalled every tile (~5% of the
       ResNet-50 stem on an H200, bench/NOTES_conv_igemm.md "the bias in shared memory") */
    float bsv[NT][2];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const int n = n0 + nt * 8 + 2 * tig;
        bsv[nt][0] = GPUML_HAS_BIAS && n < K ? __ldg(p.bias + n) : 0.0f;
        bsv[nt][1] = GPUML_HAS_BIAS && n + 1 < K ? __ldg(p.bias + n + 1) : 0.0f;
    }
#if GPUML_STEM_TMA
    /* two raw windows (128-byte aligned for TMA) and their mbarriers; thread 0 keeps the next
       tile's copy in flight: issued once every warp is done with the buffer it overwrites */
    const gpuml__u32 sbase = (gpuml__u32)__cvta_generic_to_shared(gpuml__stem_smem);
    const gpuml__u32 bar0 = sbase + (gpuml__u32)((const unsigned char *)(kmask + (KP >> 1)) - gpuml__stem_smem);
    const int WINB = (IR * PITCH * 2 + 127) & ~127;
    const gpuml__u32 win0 = (bar0 + 16 + 127) & ~127u;
    const gpuml__u16 *sXw = (const gpuml__u16 *)(gpuml__stem_smem + (win0 - sbase));
    auto win_issue = [&](int t, int b) {
        int ni, p0, q0;
        tile_at(t, ni, p0, q0);
        const int c0 = (q0 * p.stride_w - p.pad_w) * C;
        gpuml__mbar_expect_tx(bar0 + 8 * b, (unsigned)(IR * PITCH * 2));
        gpuml__tma_load_3d(win0 + (gpuml__u32)(b * WINB), &tmx, c0 & ~7, p0 * p.stride_h - p.pad_h, ni, bar0 + 8 * b);
    };
    if (tid == 0) {
        gpuml__mbar_init(bar0, 1);
        gpuml__mbar_init(bar0 + 8, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();                                 /* barriers, weights and koff are in */
    if (tid == 0)
        for (int b = 0; b < 2; b++)
            if ((int)blockIdx.x + b * (int)gridDim.x < ntiles) win_issue((int)blockIdx.x + b * (int)gridDim.x, b);
#endif
    int it = 0;                                      /* this block's tile count (TMA: buffer it & 1) */
    for (int t = (int)blockIdx.x; t < ntiles; t += (int)gridDim.x, it++) {
        int ni, p0, q0;
        tile_at(t, ni, p0, q0);
#if GPUML_STEM_TMA
        const int buf = it & 1;
        gpuml__mbar_wait(bar0 + 8 * buf, (unsigned)((it >> 1) & 1));
        const gpuml__u16 *sXc = sXw + buf * (WINB >> 1) + ((((q0 * p.stride_w - p.pad_w) * C) & 7) - LEAD);   /* SHIFT - LEAD */
#else
        const gpuml__u16 *sXc = sX;
        const int ih0 = p0 * p.stride_h - p.pad_h, iw0 = q0 * p.stride_w - p.pad_w;
        const gpuml__i64 img = (gpuml__i64)ni * H * W * C;

        __syncthreads();                             /* the previous tile's window is no longer read */
        if (GPUML_STEM_PF) win_store(pf, 0);
        for (int b = GPUML_STEM_PF ? 1 : 0; b < NBATCH; b++) {
            gpuml__u32 v[NPF];
            win_load(v, b, ih0, iw0, img);
            win_store(v, b);
        }
        __syncthreads();                             /* the window (and, the first time, weights and koff) are in */
        if (GPUML_STEM_PF && t + (int)gridDim.x < ntiles) {   /* in flight during this tile's mma */
            int nn, pn, qn;
            tile_at(t + (int)gridDim.x, nn, pn, qn);
            win_load(pf, 0, pn * p.stride_h - p.pad_h, qn * p.stride_w - p.pad_w, (gpuml__i64)nn * H * W * C);
        }
#endif

        float acc[2][NT][4];
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.0f;

#pragma unroll 1
        for (int ks = 0; ks < KS; ks++) {
            const int o0 = koff[ks * 8 + tig], o1 = koff[ks * 8 + 4 + tig];
            gpuml__u32 af[2][4], bfr[NT][2];
#if GPUML_STEM_TMA
            const gpuml__u32 m0 = kmask[ks * 8 + tig], m1 = kmask[ks * 8 + 4 + tig];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                af[mt][0] = *(const gpuml__u32 *)(sXc + rbase[mt][0] + o0) & m0;
                af[mt][1] = *(const gpuml__u32 *)(sXc + rbase[mt][1] + o0) & m0;
                af[mt][2] = *(const gpuml__u32 *)(sXc + rbase[mt][0] + o1) & m1;
                af[mt][3] = *(const gpuml__u32 *)(sXc + rbase[mt][1] + o1) & m1;
            }
#else
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                af[mt][0] = o0 >= 0 ? *(const gpuml__u32 *)(sXc + rbase[mt][0] + o0) : 0u;
                af[mt][1] = o0 >= 0 ? *(const gpuml__u32 *)(sXc + rbase[mt][1] + o0) : 0u;
                af[mt][2] = o1 >= 0 ? *(const gpuml__u32 *)(sXc + rbase[mt][0] + o1) : 0u;
                af[mt][3] = o1 >= 0 ? *(const gpuml__u32 *)(sXc + rbase[mt][1] + o1) : 0u;
            }
#endif
#pragma unroll
            for (int np = 0; np < NT / 2; np++)
                gpuml__mma_ldsm4(bfr[2 * np][0], bfr[2 * np + 1][0], bfr[2 * np][1], bfr[2 * np + 1][1],
                                 sw_lane + (gpuml__u32)((np * 16 * WST + ks * 16) * 2));
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++) gpuml__mma_16816<DT>(acc[mt][nt], af[mt], bfr[nt][0], bfr[nt][1]);
        }
#if GPUML_STEM_TMA
        __syncthreads();                             /* every warp is done with this window buffer */
        if (tid == 0 && t + 2 * (int)gridDim.x < ntiles) {
            gpuml__proxy_fence();
            win_issue(t + 2 * (int)gridDim.x, buf);
        }
#endif

        /* epilogue: 8 fragment rows at a time through this warp's slab, then 16-byte stores of
           8 channels of one pixel (8 lanes cover a pixel's 64 channels) */
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
#pragma unroll
                for (int nt = 0; nt < NT; nt++) {
                    const float b0 = bsv[nt][0], b1 = bsv[nt][1];
                    float2 v;
                    v.x = gpuml__mma_act<GPUML_EPI>(acc[mt][nt][2 * h] + b0);
                    v.y = gpuml__mma_act<GPUML_EPI>(acc[mt][nt][2 * h + 1] + b1);
                    *(float2 *)(slab + grp * SLAB + nt * 8 + 2 * tig) = v;
                }
                __syncwarp();
#pragma unroll 1
                for (int i = 0; i < 2; i++) {
                    const int ch = lane + i * 32, sr = ch >> 3, c8 = (ch & 7) * 8;
                    const int ml = warp * 32 + mt * 16 + h * 8 + sr, pr = ml / TQ, qc = ml - pr * TQ;
                    const int pp = p0 + pr, qq = q0 + qc, n = n0 + c8;
                    if (pp < P && qq < Q && n < K) {
                        const float *src = slab + sr * SLAB + c8;
                        const float4 lo = *(const float4 *)src, hi = *(const float4 *)(src + 4);
                        float v[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
                        gpuml__conv_out8<CDT, GPUML_HAS_RESID>(Y, Rz, (((gpuml__i64)ni * P + pp) * Q + qq) * K + n, n, K, vec_ok, v);
                    }
                }
                __syncwarp();
            }
    }
}
#endif
