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
   Macros:  GPUML_STEM_DT 1 f16 / 2 bf16 (x and w); GPUML_CONV_YDT 0 f32 / 1 f16 / 2 bf16 (y, res);
            GPUML_EPI 0-3; GPUML_HAS_BIAS, GPUML_HAS_RESID 0/1; GPUML_STEM_TQ 8 or 16 (tile width).
   Host preconditions (not checked here): everything contiguous; 2-byte aligned x, w; bias f32
   4-byte aligned; groups 1; the 32-bit index limits of gpuml__conv_igemm_why; C <= 16.
   Edges: input outside the image reads 0, output pixels past P, Q and channels past K are masked.
   ========================================================================================== */

#if defined(GPUML_STEM_DT) && (GPUML_STEM_DT == 1 || GPUML_STEM_DT == 2)
#ifndef GPUML_CONV_YDT
#define GPUML_CONV_YDT 0
#endif
#ifndef GPUML_EPI
#define GPUML_EPI 0
#endif
#ifndef GPUML_HAS_BIAS
#define GPUML_HAS_BIAS 0
#endif
#ifndef GPUML_HAS_RESID
#define GPUML_HAS_RESID 0
#endif
#ifndef GPUML_STEM_TQ
#define GPUML_STEM_TQ 16
#endif

extern "C" __global__ void __launch_bounds__(128, 4) gpuml_conv_stem(gpuml__conv_params p)
{
    constexpr int DT = GPUML_STEM_DT, CDT = GPUML_CONV_YDT, TQ = GPUML_STEM_TQ, TP = 128 / TQ;
    constexpr int BN = 64, NT = 8, SLAB = 72;        /* channels per block, n8 tiles, slab row (floats) */
    static_assert(TQ == 8 || TQ == 16, "tile width");
    typedef gpuml__dt<CDT>::T CT;
    extern __shared__ __align__(16) unsigned char gpuml__stem_smem[];

    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5, tig = lane & 3, grp = lane >> 2;
    const int C = p.C, CP = (C + 1) & ~1, R = p.R, S = p.S, K = p.K, H = p.H, W = p.W, P = p.P, Q = p.Q;
    const int KR = R * S * CP, KP = (KR + 15) & ~15, WST = KP + 8, KS = KP >> 4;
    const int IR = (TP - 1) * p.stride_h + (R - 1) * p.dil_h + 1;
    const int IC = (TQ - 1) * p.stride_w + (S - 1) * p.dil_w + 1;
    const int n0 = (int)blockIdx.y * BN;

    gpuml__u16 *sW = (gpuml__u16 *)gpuml__stem_smem;                        /* [64][WST] */
    float *slab = (float *)(gpuml__stem_smem + BN * WST * 2) + warp * 8 * SLAB;
    int *koff = (int *)(gpuml__stem_smem + BN * WST * 2 + 4 * 8 * SLAB * 4);   /* [KP / 2] */
    gpuml__u16 *sX = (gpuml__u16 *)(koff + (KP >> 1));                      /* [IR][IC][CP] */
    const gpuml__u16 *x16 = (const gpuml__u16 *)p.x, *w16 = (const gpuml__u16 *)p.w;

    /* ---- once per block: the weights (channel-padded, zero past K_gemm and K) and koff ---- */
    {
        const int half = KP >> 1;
        for (int i = tid; i < BN * half; i += 128) {
            const int n = i / half, k = (i - n * half) * 2;
            gpuml__u32 v = 0;
            if (n0 + n < K && k < KR) {
                const int rs = k / CP, c = k - rs * CP;
                const gpuml__u16 *src = w16 + (gpuml__i64)(n0 + n) * p.Kg + rs * C + c;
                v = (gpuml__u32)(c < C ? __ldg(src) : (gpuml__u16)0) | ((gpuml__u32)(c + 1 < C ? __ldg(src + 1) : (gpuml__u16)0) << 16);
            }
            *(gpuml__u32 *)(sW + n * WST + k) = v;
        }
        for (int i = tid; i < half; i += 128) {
            const int k = 2 * i;
            int o = -1;
            if (k < KR) {
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
            rbase[mt][h] = (pr * p.stride_h * IC + qc * p.stride_w) * CP;
        }
    /* ldmatrix lane address of the B (weight) fragments: row n = 16*np + (lane & 15), k half (lane >> 4) */
    const gpuml__u32 sw_lane = gpuml__mma_smem_addr(sW) + (gpuml__u32)(((lane & 15) * WST + (lane >> 4) * 8) * 2);

    /* the input-window copy: a thread owns word column wcol (pixel ic, channels c, c+1) of rows ro, ro + RPP, ... */
    const int HCP = CP >> 1, WPR = IC * HCP, RPP = WPR >= 128 ? 1 : 128 / WPR;
    const int ro = tid / WPR, wcol0 = tid - ro * WPR;

    const int tilesQ = (Q + TQ - 1) / TQ, tilesP = (P + TP - 1) / TP, ntiles = p.N * tilesP * tilesQ;
    CT *Y = (CT *)p.y;
    const CT *Rz = (const CT *)p.res;
    const bool vec_ok = K % 8 == 0 && ((gpuml__u64)p.y & 15) == 0 && (!GPUML_HAS_RESID || ((gpuml__u64)p.res & 15) == 0);
    float bias[NT][2];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const int n = n0 + nt * 8 + 2 * tig;
        bias[nt][0] = GPUML_HAS_BIAS && n < K ? __ldg(p.bias + n) : 0.0f;
        bias[nt][1] = GPUML_HAS_BIAS && n + 1 < K ? __ldg(p.bias + n + 1) : 0.0f;
    }

    for (int t = (int)blockIdx.x; t < ntiles; t += (int)gridDim.x) {
        const int tq = t % tilesQ, rest = t / tilesQ, tp = rest % tilesP, ni = rest / tilesP;
        const int p0 = tp * TP, q0 = tq * TQ;
        const int ih0 = p0 * p.stride_h - p.pad_h, iw0 = q0 * p.stride_w - p.pad_w;
        const gpuml__i64 img = (gpuml__i64)ni * H * W * C;

        __syncthreads();                             /* the previous tile's window is no longer read */
        if (ro < RPP) {
            for (int wc = wcol0; wc < WPR; wc += 128) {
                const int ic = wc / HCP, c = (wc - ic * HCP) * 2, iw = iw0 + ic;
                const bool okw = (unsigned)iw < (unsigned)W, c0 = c < C, c1 = c + 1 < C;
                gpuml__u32 *dst = (gpuml__u32 *)sX + wc;
                for (int ir0 = ro; ir0 < IR; ir0 += 8 * RPP) {
                    gpuml__u32 v[8];
#pragma unroll
                    for (int j = 0; j < 8; j++) {      /* all loads first: one latency per 8 rows */
                        const int ir = ir0 + j * RPP, ih = ih0 + ir;
                        v[j] = 0;
                        if (ir < IR && okw && (unsigned)ih < (unsigned)H) {
                            const gpuml__u16 *src = x16 + img + ((gpuml__i64)ih * W + iw) * C + c;
                            v[j] = (gpuml__u32)(c0 ? __ldg(src) : (gpuml__u16)0) | ((gpuml__u32)(c1 ? __ldg(src + 1) : (gpuml__u16)0) << 16);
                        }
                    }
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const int ir = ir0 + j * RPP;
                        if (ir < IR) dst[ir * WPR] = v[j];
                    }
                }
            }
        }
        __syncthreads();                             /* the window (and, the first time, weights and koff) are in */

        float acc[2][NT][4];
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.0f;

#pragma unroll 2
        for (int ks = 0; ks < KS; ks++) {
            const int o0 = koff[ks * 8 + tig], o1 = koff[ks * 8 + 4 + tig];
            gpuml__u32 af[2][4], bfr[NT][2];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                af[mt][0] = o0 >= 0 ? *(const gpuml__u32 *)(sX + rbase[mt][0] + o0) : 0u;
                af[mt][1] = o0 >= 0 ? *(const gpuml__u32 *)(sX + rbase[mt][1] + o0) : 0u;
                af[mt][2] = o1 >= 0 ? *(const gpuml__u32 *)(sX + rbase[mt][0] + o1) : 0u;
                af[mt][3] = o1 >= 0 ? *(const gpuml__u32 *)(sX + rbase[mt][1] + o1) : 0u;
            }
#pragma unroll
            for (int np = 0; np < NT / 2; np++)
                gpuml__mma_ldsm4(bfr[2 * np][0], bfr[2 * np + 1][0], bfr[2 * np][1], bfr[2 * np + 1][1],
                                 sw_lane + (gpuml__u32)((np * 16 * WST + ks * 16) * 2));
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++) gpuml__mma_16816<DT>(acc[mt][nt], af[mt], bfr[nt][0], bfr[nt][1]);
        }

        /* epilogue: 8 fragment rows at a time through this warp's slab, then 16-byte stores of
           8 channels of one pixel (8 lanes cover a pixel's 64 channels) */
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
#pragma unroll
                for (int nt = 0; nt < NT; nt++) {
                    float2 v;
                    v.x = gpuml__mma_act<GPUML_EPI>(acc[mt][nt][2 * h] + bias[nt][0]);
                    v.y = gpuml__mma_act<GPUML_EPI>(acc[mt][nt][2 * h + 1] + bias[nt][1]);
                    *(float2 *)(slab + grp * SLAB + nt * 8 + 2 * tig) = v;
                }
                __syncwarp();
#pragma unroll
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
