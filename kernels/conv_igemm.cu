/* Family "conv_igemm": the tensor-core implicit-GEMM conv2d forward for sm_80 and newer
   (mma.sync.m16n8k16 + ldmatrix + cp.async), f16 / bf16 NHWC activations and KRSC weights,
   f32 accumulation, fused epilogue.  tools/gen_kernels.sh emits kernels/matmul_mma.cu in front
   of this file: its PTX wrappers (cp.async, ldmatrix, mma), its shared-memory swizzle and its
   epilogue helpers are reused; it defines no kernel of its own here (GPUML_A_DT is not set).

   y[n][p][q][k] = act(sum_{r,s,c} x[n][p*sh-ph+r*dh][q*sw-pw+s*dw][c] * w[k][r][s][c] + bias[k])
                   + res[n][p][q][k]          (x outside the image reads as 0)

   GEMM view: M = N*P*Q rows (output pixels), N_gemm = K columns, K_gemm = R*S*C with the
   index kg = (r*S + s)*C + c; A = the implicit im2col of x, B = w as a K x K_gemm row-major
   matrix (the "TN" B of matmul_mma.cu).

   ==========================================================================================
   LAUNCH CONTRACT
   ==========================================================================================
   Kernel:  extern "C" __global__ void gpuml_conv_igemm(gpuml__conv_params p)   (by value)
   Block:   (256, 1, 1): 8 warps; cfg 9 and 10: (128, 1, 1), 4 warps (GPUML_CONV_THREADS).
   Grid:    (ceil(K / BN), ceil(M / BM), splits); gridDim.y <= 65535.  With splits > 1 (split-K)
            CTA z takes k tiles [z*per, min((z+1)*per, KT)) with per = ceil(KT / splits) (KT =
            ceil(K_gemm / 32); every z must get one: the host picks splits = ceil(KT / per)) and
            writes raw f32 partial sums to y + z*M*K: the host compiles that launch with
            GPUML_CONV_YDT=0 and no epilogue, passes an f32 workspace [splits][M][K] as y, then
            launches gpuml_conv_splitk_reduce (the same macros as a one-pass launch; p.ws = the
            workspace, p.splits, p.y = y) to sum and apply the epilogue.  CTA -> tile is regrouped
            inside the kernel (8 tile rows per group) for L2 reuse.
   Dynamic shared memory: STAGES * (BM + BN) * 64 bytes, + BM * 16 for the gather variant
            (its per-row table).  Above 48 KiB the host sets the attribute (gpuml__launch does).
   Tile configurations (-DGPUML_CONV_CFG=n):
       n   BM x BN   warps (M x N)  warp tile  stages  A loads                 smem bytes
       0   128x256   2 x 4          64 x 64    4       16-byte cp.async        98304
       1   128x128   2 x 4          64 x 32    4       16-byte cp.async        65536
       2   256x64    4 x 2          64 x 32    4       16-byte cp.async        81920
       3   128x64    4 x 2          32 x 32    4       16-byte cp.async        49152
       4   64x64     2 x 4          32 x 16    4       16-byte cp.async        32768
       5   128x64    4 x 2          32 x 32    2       2-byte gather (any C)   26624
       6   128x128   2 x 4          64 x 32    6       16-byte cp.async        98304
       7   128x64    4 x 2          32 x 32    6       16-byte cp.async        73728
       8   128x256   2 x 4          64 x 64    6       16-byte cp.async        147456
       9   128x128   2 x 2          64 x 64    5       16-byte cp.async        81920
      10   128x64    2 x 2          64 x 32    4       16-byte cp.async        49152
   Macros: GPUML_CONV_DT 1 f16 / 2 bf16 (x and w); GPUML_CONV_YDT 0 f32 / 1 f16 / 2 bf16 (y and
   res); GPUML_EPI 0 none / 1 relu / 2 gelu (tanh) / 3 silu; GPUML_HAS_BIAS, GPUML_HAS_RESID 0/1;
   GPUML_CONV_CFG as above.
   Host preconditions (not checked here): everything contiguous; M, K >= 1; H*W < 2^31,
   K*K_gemm < 2^31, M < 2^31 - 256; cfg 0-4: C % 8 == 0 and x, w 16-byte aligned (each 16-byte
   chunk of A is 8 channels of one pixel, and rows of B are 16-byte aligned); cfg 5: any C,
   2-byte alignment.  bias f32 4-byte aligned; res has y's dtype and shape.
   Edges: rows past M, columns past K, k past K_gemm and taps in the padding are zero-filled
   (cp.async src-size 0); stores are masked.
   ========================================================================================== */

/* mirrored by gpuml__conv_params in gpuml.h */
struct gpuml__conv_params {
    const void *x;          /* [N][H][W][C] */
    const void *w;          /* [K][R][S][C] */
    void *y;                /* [N][P][Q][K] */
    const float *bias;      /* [K] or null */
    const void *res;        /* like y, or null */
    const float *ws;        /* split-K partial sums [splits][M][K] (gpuml_conv_splitk_reduce), or null */
    int N, H, W, C, K, R, S, P, Q;
    int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
    int M, Kg;              /* N*P*Q, R*S*C */
    int splits;             /* gpuml_conv_splitk_reduce: number of partial sums in ws */
};

#ifndef GPUML__CONV_IGEMM_DEFINED
#define GPUML__CONV_IGEMM_DEFINED

/* per output row of a CTA tile, for the gather variant: image base (elements) and the top-left
   input coordinate of its window (ih0 far negative for rows past M) */
struct gpuml__conv_row {
    gpuml__i64 base;
    int ih0, iw0;
};

/* 8 consecutive C-dtype values <-> f32, 16-byte aligned (32 bytes for f32) */
template <int CDT>
static __device__ __forceinline__ void gpuml__conv_ld8(const typename gpuml__dt<CDT>::T *q, float *v)
{
    typedef typename gpuml__dt<CDT>::T T;
    if (CDT == 0) {
        const float4 a = ((const float4 *)q)[0], b = ((const float4 *)q)[1];
        v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
    } else {
        const uint4 u = *(const uint4 *)q;
        const gpuml__u32 w[4] = { u.x, u.y, u.z, u.w };
#pragma unroll
        for (int i = 0; i < 4; i++) {
            v[2 * i] = gpuml__mma_ld<CDT>((T)(w[i] & 0xffffu));
            v[2 * i + 1] = gpuml__mma_ld<CDT>((T)(w[i] >> 16));
        }
    }
}
template <int CDT>
static __device__ __forceinline__ void gpuml__conv_st8(typename gpuml__dt<CDT>::T *q, const float *v)
{
    if (CDT == 0) {
        float4 a, b;
        a.x = v[0]; a.y = v[1]; a.z = v[2]; a.w = v[3]; b.x = v[4]; b.y = v[5]; b.z = v[6]; b.w = v[7];
        ((float4 *)q)[0] = a;
        ((float4 *)q)[1] = b;
    } else {
        gpuml__u32 w[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            w[i] = (gpuml__u32)gpuml__mma_st<CDT>(v[2 * i]) | ((gpuml__u32)gpuml__mma_st<CDT>(v[2 * i + 1]) << 16);
        *(uint4 *)q = make_uint4(w[0], w[1], w[2], w[3]);
    }
}
/* eight outputs y[off .. off+7] (columns n .. n+7 of K) = v (+ the residual r at the same place):
   16-byte accesses where vec (aligned, all 8 inside the row), else one element at a time */
template <int CDT, int RESID>
static __device__ __forceinline__ void gpuml__conv_out8(typename gpuml__dt<CDT>::T *y, const typename gpuml__dt<CDT>::T *r,
                                                         gpuml__i64 off, int n, int K, bool vec, float *v)
{
    if (vec) {
        if (RESID) {
            float rv[8];
            gpuml__conv_ld8<CDT>(r + off, rv);
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] += rv[e];
        }
        gpuml__conv_st8<CDT>(y + off, v);
    } else {
#pragma unroll
        for (int e = 0; e < 8; e++)
            if (n + e < K) y[off + e] = gpuml__mma_st<CDT>(v[e] + (RESID ? gpuml__mma_ld<CDT>(r[off + e]) : 0.0f));
    }
}

/* f32 -> tf32, round to nearest (ties away), in an f32 register's bits */
static __device__ __forceinline__ gpuml__u32 gpuml__cvt_tf32(gpuml__u32 x)
{
    gpuml__u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
}
/* 3xTF32 split of one f32 (bits v): big = v with the low 13 mantissa bits cleared, small =
   (v - big) rounded to tf32 (v - big is exact; error <= 2^-21 |v|), bigf = big; for Inf/NaN v
   big = v and small = bigf = 0, so that v meets only the other side's big part (inf*b, never
   inf*0 in a cross term) */
static __device__ __forceinline__ void gpuml__split3(const gpuml__u32 v, gpuml__u32 &big, gpuml__u32 &small, gpuml__u32 &bigf)
{
    const gpuml__u32 t = v & 0xffffe000u;
    const float d = __uint_as_float(v) - __uint_as_float(t);
    const bool fin = d == d;                         /* NaN exactly for Inf / NaN v */
    small = fin ? gpuml__cvt_tf32(__float_as_uint(d)) : 0u;
    big = fin ? t : v;
    bigf = fin ? t : 0u;
}
/* one tensor-core step of the conv: m16n8k16 f16/bf16 (DT 1, 2) or m16n8k8 tf32 (DT 0); the
   fragments of both come from the same ldmatrix.x4 loads (a 32-bit element is a b16 pair) */
template <int DT>
static __device__ __forceinline__ void gpuml__conv_mma(float *d, const gpuml__u32 *a, gpuml__u32 b0, gpuml__u32 b1)
{
    if (DT == 0)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        gpuml__mma_16816<DT>(d, a, b0, b1);
}

/* DT 0 (f32 x and w, tf32 mma): a k tile is 16 floats (the same 64-byte smem rows), a 16-byte
   chunk 4 channels; TF32 1: the fragments are rounded to tf32 (cvt.rna) before the mma, 0: the
   operands are exact in tf32 already (3xTF32 split by the prep kernel), 2: 3xTF32 split here, in
   registers (gpuml__split3; with RN).  RN 1 (DT 0 only): each k tile's two mma
   run into zeroed registers, added into the accumulators with one round-to-nearest f32 add (the
   tensor cores' own accumulation truncates; bench/NOTES_conv.md).  YNCHW: y (and res) are
   [N][K][P][Q] instead of [N][P][Q][K]. */
template <int DT, int CDT, int EPI, int HAS_BIAS, int HAS_RESID, int BM, int BN, int WMW, int STAGES, int GATHER, int WARPS,
          int TF32 = 0, int RN = 0, int YNCHW = 0>
static __device__ __forceinline__ void gpuml__conv_igemm_body(const gpuml__conv_params &p)
{
    constexpr int ES = DT == 0 ? 4 : 2, EPC = 16 / ES;   /* bytes an element, elements a 16-byte chunk */
    constexpr int BK = 64 / ES, NTHR = WARPS * 32, WNW = WARPS / WMW;
    constexpr int RPP = NTHR / 4;                    /* tile rows per loader pass (4 chunks a row) */
    constexpr int WTM = BM / WMW, WTN = BN / WNW;    /* warp tile */
    constexpr int MT = WTM / 16, NT = WTN / 8;       /* m16 tiles, n8 tiles per warp */
    constexpr int A_BYTES = BM * 64, B_BYTES = BN * 64, STAGE_BYTES = A_BYTES + B_BYTES;   /* 64-byte rows: BK elements */
    constexpr int A_CPT = BM / RPP, B_CPT = BN / RPP;   /* 16-byte chunks per thread per tile */
    constexpr int GA = BM / 8, GB = BN / 8;          /* gather: elements per thread per tile */
    static_assert(MT >= 1 && NT >= 2 && NT % 2 == 0 && A_CPT >= 1 && B_CPT >= 1, "tile shape");
    static_assert(STAGES >= 2, "stages");
    static_assert(!GATHER || STAGES == 2, "the gather variant double-buffers through registers");
    static_assert(!GATHER || NTHR == 256, "the gather variant's thread map assumes 8 warps");
    static_assert(!GATHER || DT != 0, "no gather variant for f32");
    static_assert(!RN || DT == 0, "RN is for tf32");
    static_assert(TF32 != 2 || RN, "the in-register split runs with RN");
    static_assert(BM % RPP == 0 && BN % RPP == 0 && WNW * WMW == WARPS, "loader map");

    extern __shared__ __align__(128) unsigned char gpuml__conv_smem[];

    const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WNW, wn = warp % WNW;
    const int M = p.M, K = p.K, Kg = p.Kg, C = p.C, S = p.S, H = p.H, W = p.W;
    const int PQ = p.P * p.Q;

    int tm, tn;
    {
        const int gx = (int)gridDim.x, gy = (int)gridDim.y;
        const int pid = (int)blockIdx.y * gx + (int)blockIdx.x;
        const int per_group = 8 * gx, group = pid / per_group, first = group * 8;
        const int gsize = gy - first < 8 ? gy - first : 8, within = pid - group * per_group;
        tm = first + within % gsize;
        tn = within / gsize;
    }
    const int m0 = tm * BM, n0 = tn * BN;
    /* split-K: CTA z of gridDim.z takes k tiles [kt0, kt0 + KT) and writes its partial sums to
       y + z*M*K (the host then passes an f32 workspace as y, with no epilogue) */
    const int KT_ALL = (Kg - 1) / BK + 1, KT_PER = (KT_ALL + (int)gridDim.z - 1) / (int)gridDim.z;
    const int kt0 = (int)blockIdx.z * KT_PER;
    const int KT = KT_ALL - kt0 < KT_PER ? KT_ALL - kt0 : KT_PER;   /* >= 1: the host sees to it */
    const char *X = (const char *)p.x, *Wt = (const char *)p.w;
    const gpuml__u32 sbase = gpuml__mma_smem_addr(gpuml__conv_smem);

    /* ---------------- 16-byte loader state (GATHER == 0) ---------------- */
    const int lc = tid & 3;                          /* this thread's 16-byte channel chunk of a k tile */
    const char *xrow[GATHER ? 1 : A_CPT];
    int ih0[GATHER ? 1 : A_CPT], iw0[GATHER ? 1 : A_CPT];
    const char *b_src[GATHER ? 1 : B_CPT];
    gpuml__u32 b_ok[GATHER ? 1 : B_CPT];
    int kg = kt0 * BK + lc * EPC, cc = 0, ss = 0, rr = 0;         /* next tile's k index and its (r, s, c) */
    /* ---------------- gather state (GATHER == 1) ---------------- */
    const int gk = tid & 31, grow = tid >> 5;       /* column within the k tile; first row */
    gpuml__conv_row *rowtab = (gpuml__conv_row *)(gpuml__conv_smem + STAGES * STAGE_BYTES);
    gpuml__u16 ga[GATHER ? GA : 1], gb[GATHER ? GB : 1];
    int gkg = kt0 * BK + gk;

    if (!GATHER) {
#pragma unroll
        for (int i = 0; i < A_CPT; i++) {
            const int m = m0 + (tid >> 2) + i * RPP;
            if (m < M) {
                const int ni = m / PQ, rem = m - ni * PQ, pp = rem / p.Q, qq = rem - pp * p.Q;
                xrow[i] = X + (gpuml__i64)ni * H * W * C * ES;
                ih0[i] = pp * p.stride_h - p.pad_h;
                iw0[i] = qq * p.stride_w - p.pad_w;
            } else {
                xrow[i] = X;
                ih0[i] = -0x40000000;
                iw0[i] = 0;
            }
        }
#pragma unroll
        for (int i = 0; i < B_CPT; i++) {
            const int n = n0 + (tid >> 2) + i * RPP;
            b_ok[i] = n < K ? 16u : 0u;
            b_src[i] = Wt + ((gpuml__i64)(n < K ? n : 0) * Kg + kg) * ES;
        }
        const int rs = kg / C;
        cc = kg - rs * C;
        rr = rs / S;
        ss = rs - rr * S;
    } else {
        for (int i = tid; i < BM; i += NTHR) {
            const int m = m0 + i;
            gpuml__conv_row t;
            if (m < M) {
                const int ni = m / PQ, rem = m - ni * PQ, pp = rem / p.Q, qq = rem - pp * p.Q;
                t.base = (gpuml__i64)ni * H * W * C;
                t.ih0 = pp * p.stride_h - p.pad_h;
                t.iw0 = qq * p.stride_w - p.pad_w;
            } else {
                t.base = 0;
                t.ih0 = -0x40000000;
                t.iw0 = 0;
            }
            rowtab[i] = t;
        }
        __syncthreads();
    }

    /* cp.async the next k tile into ring slot `stage` and advance (GATHER == 0) */
    auto load_tile = [&](int stage) {
        const gpuml__u32 sA = sbase + (gpuml__u32)(stage * STAGE_BYTES), sB = sA + A_BYTES;
        const bool kok = kg < Kg;
        const int dh = rr * p.dil_h, dw = ss * p.dil_w;
#pragma unroll
        for (int i = 0; i < A_CPT; i++) {
            const int ih = ih0[i] + dh, iw = iw0[i] + dw;
            const bool ok = kok && (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
            const char *src = ok ? xrow[i] + ((gpuml__i64)(ih * W + iw) * C + cc) * ES : X;
            gpuml__mma_cp16(sA + gpuml__mma_swz64((tid >> 2) + i * RPP, lc), src, ok ? 16u : 0u);
        }
#pragma unroll
        for (int i = 0; i < B_CPT; i++) {
            const gpuml__u32 sz = kok ? b_ok[i] : 0u;
            gpuml__mma_cp16(sB + gpuml__mma_swz64((tid >> 2) + i * RPP, lc), sz ? (const void *)b_src[i] : (const void *)Wt, sz);
            b_src[i] += BK * ES;
        }
        kg += BK;
        cc += BK;
        while (cc >= C) {                            /* at most once when C >= BK */
            cc -= C;
            if (++ss == S) { ss = 0; rr++; }
        }
    };
    /* gather the next k tile into registers (GATHER == 1) */
    auto fetch_tile = [&]() {
        const gpuml__u16 *x16 = (const gpuml__u16 *)p.x, *w16 = (const gpuml__u16 *)p.w;
        const bool kok = gkg < Kg;
        const int rs = gkg / C, c = gkg - rs * C, r = rs / S, s = rs - r * S;
        const int dh = r * p.dil_h, dw = s * p.dil_w;
#pragma unroll
        for (int j = 0; j < GA; j++) {
            const gpuml__conv_row t = rowtab[grow + j * 8];
            const int ih = t.ih0 + dh, iw = t.iw0 + dw;
            const bool ok = kok && (unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W;
            ga[j] = ok ? x16[t.base + (gpuml__i64)(ih * W + iw) * C + c] : (gpuml__u16)0;
        }
#pragma unroll
        for (int j = 0; j < GB; j++) {
            const int n = n0 + grow + j * 8;
            gb[j] = kok && n < K ? w16[(gpuml__i64)n * Kg + gkg] : (gpuml__u16)0;
        }
        gkg += BK;
    };
    auto store_tile = [&](int stage) {
        unsigned char *sA = gpuml__conv_smem + stage * STAGE_BYTES, *sB = sA + A_BYTES;
        const int col = (gk & 7) * 2;
#pragma unroll
        for (int j = 0; j < GA; j++)
            *(gpuml__u16 *)(sA + gpuml__mma_swz64(grow + j * 8, gk >> 3) + col) = ga[j];
#pragma unroll
        for (int j = 0; j < GB; j++)
            *(gpuml__u16 *)(sB + gpuml__mma_swz64(grow + j * 8, gk >> 3) + col) = gb[j];
    };

    /* ldmatrix lane offsets within a stage's A / B region */
    gpuml__u32 a_ld[2], b_ld[2];
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
        a_ld[kk] = gpuml__mma_swz64(wm * WTM + (lane & 15), kk * 2 + (lane >> 4));
        b_ld[kk] = gpuml__mma_swz64(wn * WTN + (lane & 15), kk * 2 + (lane >> 4));
    }

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

    if (!GATHER) {
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < KT) load_tile(s);
            gpuml__mma_cp_commit();
        }
    } else {
        fetch_tile();
        store_tile(0);
    }

    int rd = 0, wr = STAGES - 1;
    for (int kt = 0; kt < KT; kt++) {
        if (!GATHER) gpuml__mma_cp_wait<STAGES - 2>();
        __syncthreads();                             /* tile kt is in; slot wr is free again */
        if (!GATHER) {
            if (kt + STAGES - 1 < KT) load_tile(wr);
            gpuml__mma_cp_commit();
        } else if (kt + 1 < KT) {
            fetch_tile();                            /* in flight during the mma below */
        }

        const gpuml__u32 sA = sbase + (gpuml__u32)(rd * STAGE_BYTES), sB = sA + A_BYTES;
        /* fragments of k half kk of the tile (rounded to tf32 where TF32) */
        auto a_frag = [&](int kk, int mt, gpuml__u32 (&a)[4]) {
            gpuml__mma_ldsm4(a[0], a[1], a[2], a[3], sA + a_ld[kk] + mt * 1024);
            if (DT == 0 && TF32 == 1) {
#pragma unroll
                for (int e = 0; e < 4; e++) a[e] = gpuml__cvt_tf32(a[e]);
            }
        };
        auto b_frags = [&](int kk, gpuml__u32 (&bfr)[NT][2]) {
#pragma unroll
            for (int np = 0; np < NT / 2; np++)
                gpuml__mma_ldsm4(bfr[2 * np][0], bfr[2 * np + 1][0], bfr[2 * np][1], bfr[2 * np + 1][1], sB + b_ld[kk] + np * 1024);
            if (DT == 0 && TF32 == 1) {
#pragma unroll
                for (int nt = 0; nt < NT; nt++) { bfr[nt][0] = gpuml__cvt_tf32(bfr[nt][0]); bfr[nt][1] = gpuml__cvt_tf32(bfr[nt][1]); }
            }
        };
        if (!RN) {
#pragma unroll
            for (int kk = 0; kk < 2; kk++) {
                gpuml__u32 af[MT][4], bfr[NT][2];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) a_frag(kk, mt, af[mt]);
                b_frags(kk, bfr);
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        const int nt = (mt & 1) ? NT - 1 - j : j;
                        gpuml__conv_mma<DT>(acc[mt][nt], af[mt], bfr[nt][0], bfr[nt][1]);
                    }
            }
        } else if (TF32 == 2) {
            /* 3xTF32 split in registers: x.w ~ small_x*bigf_w + bigf_x*small_w + big_x*big_w
               (small terms first); per k half the three mma run into zeroed registers, added
               into acc round-to-nearest (one k half at a time: registers) */
#pragma unroll
            for (int kk = 0; kk < 2; kk++) {
                gpuml__u32 bb[NT][2], bs[NT][2], bf[NT][2];
                b_frags(kk, bb);
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int e = 0; e < 2; e++) gpuml__split3(bb[nt][e], bb[nt][e], bs[nt][e], bf[nt][e]);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    gpuml__u32 ab[4], as[4], af_[4];
                    a_frag(kk, mt, ab);
#pragma unroll
                    for (int e = 0; e < 4; e++) gpuml__split3(ab[e], ab[e], as[e], af_[e]);
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        const int nt = (mt & 1) ? NT - 1 - j : j;
                        float t[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
                        gpuml__conv_mma<DT>(t, as, bf[nt][0], bf[nt][1]);
                        gpuml__conv_mma<DT>(t, af_, bs[nt][0], bs[nt][1]);
                        gpuml__conv_mma<DT>(t, ab, bb[nt][0], bb[nt][1]);
#pragma unroll
                        for (int e = 0; e < 4; e++) acc[mt][nt][e] += t[e];
                    }
                }
            }
        } else {
            /* the tile's two mma into zeroed registers, then one round-to-nearest add into acc:
               the tensor cores' truncating accumulation only ever sees one tile's sum.  B of
               both halves stays in registers; A is loaded one m16 row at a time. */
            gpuml__u32 bfr[2][NT][2];
            b_frags(0, bfr[0]);
            b_frags(1, bfr[1]);
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                gpuml__u32 af[2][4];
                a_frag(0, mt, af[0]);
                a_frag(1, mt, af[1]);
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    const int nt = (mt & 1) ? NT - 1 - j : j;
                    float t[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
                    gpuml__conv_mma<DT>(t, af[0], bfr[0][nt][0], bfr[0][nt][1]);
                    gpuml__conv_mma<DT>(t, af[1], bfr[1][nt][0], bfr[1][nt][1]);
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[mt][nt][e] += t[e];
                }
            }
        }
        if (GATHER && kt + 1 < KT) store_tile(wr);   /* slot wr was last read before this barrier */
        rd = rd + 1 == STAGES ? 0 : rd + 1;
        wr = wr + 1 == STAGES ? 0 : wr + 1;
    }
    if (!GATHER) gpuml__mma_cp_wait<0>();

    /* ---- epilogue: y[m][n] = act(acc + bias[n]) + res[m][n].  One 16-row slab of every warp
       row at a time goes through shared memory as f32 (rows padded by 8 floats: the float2
       writes of a half-warp hit distinct banks); then each thread writes 8 consecutive columns
       of a row with 16-byte stores (coalesced), adding the residual read the same way.  Rows
       past M and columns past K are masked; K % 8 != 0 or unaligned y / res go element-wise. ---- */
    typedef typename gpuml__dt<CDT>::T CT;
    constexpr int SROW = BN + 8, SLAB_ROWS = WMW * 16, CPR = BN / 8;
    constexpr int CPT_OUT = SLAB_ROWS * CPR / NTHR;  /* 8-column chunks per thread per slab */
    static_assert((SLAB_ROWS * CPR) % NTHR == 0, "slab chunks");
    static_assert(SLAB_ROWS * SROW * 4 <= STAGES * STAGE_BYTES, "the slab fits in the ring");
    float *slab = (float *)gpuml__conv_smem;
    CT *Y = (CT *)p.y + (gpuml__i64)blockIdx.z * M * K;
    const CT *Rz = (const CT *)p.res;
    const bool vec_ok = K % 8 == 0 && ((gpuml__u64)p.y & 15) == 0 && (!HAS_RESID || ((gpuml__u64)p.res & 15) == 0);
    const int col_base = wn * WTN + 2 * (lane & 3);  /* within the tile */
    __syncthreads();                                 /* every warp is done with the ring */
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
        if (mt) __syncthreads();                     /* the previous slab has been read out */
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const int n = n0 + col_base + nt * 8;
            float b0 = 0.0f, b1 = 0.0f;
            if (HAS_BIAS) {
                if (n < K) b0 = __ldg(p.bias + n);
                if (n + 1 < K) b1 = __ldg(p.bias + n + 1);
            }
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float2 v;
                v.x = gpuml__mma_act<EPI>(acc[mt][nt][2 * h] + b0);
                v.y = gpuml__mma_act<EPI>(acc[mt][nt][2 * h + 1] + b1);
                *(float2 *)(slab + (wm * 16 + h * 8 + (lane >> 2)) * SROW + col_base + nt * 8) = v;
            }
        }
        __syncthreads();
        if (YNCHW) {
            /* y[n][k][pq]: lanes along 16 consecutive rows (output pixels) of one column: 64-byte runs */
#pragma unroll 1
            for (int i = 0; i < CPT_OUT * 8; i++) {
                const int e = tid + i * NTHR, sr = e % SLAB_ROWS, c = e / SLAB_ROWS;
                const int m = m0 + (sr >> 4) * WTM + mt * 16 + (sr & 15), n = n0 + c;
                if (m >= M || n >= K) continue;
                const int ni = m / PQ, pq = m - ni * PQ;
                const gpuml__i64 off = ((gpuml__i64)ni * K + n) * PQ + pq;
                float v = slab[sr * SROW + c];
                if (HAS_RESID) v += gpuml__mma_ld<CDT>(Rz[off]);
                Y[off] = gpuml__mma_st<CDT>(v);
            }
            continue;
        }
#pragma unroll
        for (int i = 0; i < CPT_OUT; i++) {
            const int ch = tid + i * NTHR, sr = ch / CPR, c8 = (ch % CPR) * 8;
            const int m = m0 + (sr >> 4) * WTM + mt * 16 + (sr & 15), n = n0 + c8;
            if (m >= M || n >= K) continue;
            const float *src = slab + sr * SROW + c8;
            const float4 lo = *(const float4 *)src, hi = *(const float4 *)(src + 4);
            float v[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
            gpuml__conv_out8<CDT, HAS_RESID>(Y, Rz, (gpuml__i64)m * K + n, n, K, vec_ok, v);
        }
    }
}

/* ------------------------------------------------------ the NVRTC entry point ---- */
/* (not with GPUML_CONV_SM90: kernels/conv_sm90.cu, compiled after this file, has its own entry point) */
#if defined(GPUML_CONV_DT) && (GPUML_CONV_DT == 0 || GPUML_CONV_DT == 1 || GPUML_CONV_DT == 2) && !defined(GPUML_CONV_SM90)
#ifndef GPUML_CONV_CFG
#define GPUML_CONV_CFG 1
#endif
#ifndef GPUML_CONV_TF32
#define GPUML_CONV_TF32 0
#endif
#ifndef GPUML_CONV_RN
#define GPUML_CONV_RN 0
#endif
#ifndef GPUML_CONV_YNCHW
#define GPUML_CONV_YNCHW 0
#endif
#if GPUML_CONV_DT == 0 && (GPUML_CONV_CFG == 0 || GPUML_CONV_CFG == 5 || GPUML_CONV_CFG == 8 || GPUML_CONV_CFG == 9)
#error "f32 (tf32) takes configurations 1-4, 6, 7 and 10 (no gather; 64x64 warp tiles spill)"
#endif
#if GPUML_CONV_RN && !(GPUML_CONV_CFG == 3 || GPUML_CONV_CFG == 4 || GPUML_CONV_CFG == 7)
#error "RN takes configurations 3, 4 and 7 (64-row warp tiles spill)"
#endif
/*                         BM   BN  WMW STAGES GATHER WARPS;  MINB: CTAs per SM for __launch_bounds__ */
#if GPUML_CONV_CFG == 0
#define GPUML__CONV_TILE   128, 256, 2, 4, 0, 8
#define GPUML__CONV_MINB   1
#elif GPUML_CONV_CFG == 1
#define GPUML__CONV_TILE   128, 128, 2, 4, 0, 8
#define GPUML__CONV_MINB   2
#elif GPUML_CONV_CFG == 2
#define GPUML__CONV_TILE   256, 64, 4, 4, 0, 8
#define GPUML__CONV_MINB   2
#elif GPUML_CONV_CFG == 3
#define GPUML__CONV_TILE   128, 64, 4, 4, 0, 8
#define GPUML__CONV_MINB   2
#elif GPUML_CONV_CFG == 4
#define GPUML__CONV_TILE   64, 64, 2, 4, 0, 8
#define GPUML__CONV_MINB   3
#elif GPUML_CONV_CFG == 5
#define GPUML__CONV_TILE   128, 64, 4, 2, 1, 8
#define GPUML__CONV_MINB   2
#elif GPUML_CONV_CFG == 6
#define GPUML__CONV_TILE   128, 128, 2, 6, 0, 8
#define GPUML__CONV_MINB   2
#elif GPUML_CONV_CFG == 7
#define GPUML__CONV_TILE   128, 64, 4, 6, 0, 8
#define GPUML__CONV_MINB   2
#elif GPUML_CONV_CFG == 8
#define GPUML__CONV_TILE   128, 256, 2, 6, 0, 8
#define GPUML__CONV_MINB   1
#elif GPUML_CONV_CFG == 9
#define GPUML__CONV_TILE   128, 128, 2, 5, 0, 4
#define GPUML__CONV_MINB   2
#else
#define GPUML__CONV_TILE   128, 64, 2, 4, 0, 4
#define GPUML__CONV_MINB   4
#endif
#if GPUML_CONV_TF32 == 2   /* the in-register split needs ~150 registers: one CTA an SM */
#undef GPUML__CONV_MINB
#define GPUML__CONV_MINB   1
#endif
#if GPUML_CONV_CFG == 9 || GPUML_CONV_CFG == 10
#define GPUML_CONV_THREADS 128
#else
#define GPUML_CONV_THREADS 256
#endif
extern "C" __global__ void __launch_bounds__(GPUML_CONV_THREADS, GPUML__CONV_MINB) gpuml_conv_igemm(gpuml__conv_params p)
{
    gpuml__conv_igemm_body<GPUML_CONV_DT, GPUML_CONV_YDT, GPUML_EPI, GPUML_HAS_BIAS, GPUML_HAS_RESID,
                           GPUML__CONV_TILE, GPUML_CONV_TF32, GPUML_CONV_RN, GPUML_CONV_YNCHW>(p);
}
/* split-K finish: y[i] = act(sum_z ws[z][i] + bias[i % K]) + res[i] over the M*K outputs
   (grid-stride; any grid of 256-thread blocks; with YNCHW y and res are [N][K][P][Q]) */
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_splitk_reduce(gpuml__conv_params p)
{
    typedef gpuml__dt<GPUML_CONV_YDT>::T CT;
    const gpuml__i64 total = (gpuml__i64)p.M * p.K;
    CT *Y = (CT *)p.y;
    const CT *Rz = (const CT *)p.res;
#if !GPUML_CONV_YNCHW
    /* 4 outputs a thread (K % 4 == 0, y / res aligned to 4 elements): float4 loads of the slices, one
       8- or 16-byte store; the same sums in the same order as the loop below */
    if (p.K % 4 == 0 && (((gpuml__u64)p.y | (gpuml__u64)p.res) & (4 * sizeof(CT) - 1)) == 0 && ((gpuml__u64)p.ws & 15) == 0) {
        const gpuml__i64 t4 = total / 4;
        const float4 *W4 = (const float4 *)p.ws;
        for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < t4; i += (gpuml__i64)gridDim.x * blockDim.x) {
            float v[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
#pragma unroll 4
            for (int z = 0; z < p.splits; z++) {
                const float4 u = W4[z * t4 + i];
                v[0] += u.x; v[1] += u.y; v[2] += u.z; v[3] += u.w;
            }
            const int k = (int)((4 * i) % p.K);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (GPUML_HAS_BIAS) v[j] += __ldg(p.bias + k + j);
                v[j] = gpuml__mma_act<GPUML_EPI>(v[j]);
                if (GPUML_HAS_RESID) v[j] += gpuml__mma_ld<GPUML_CONV_YDT>(Rz[4 * i + j]);
            }
            if (sizeof(CT) == 4) {
                ((float4 *)Y)[i] = make_float4(v[0], v[1], v[2], v[3]);
            } else {
                uint2 o;
                o.x = (gpuml__u32)gpuml__mma_st<GPUML_CONV_YDT>(v[0]) | ((gpuml__u32)gpuml__mma_st<GPUML_CONV_YDT>(v[1]) << 16);
                o.y = (gpuml__u32)gpuml__mma_st<GPUML_CONV_YDT>(v[2]) | ((gpuml__u32)gpuml__mma_st<GPUML_CONV_YDT>(v[3]) << 16);
                ((uint2 *)Y)[i] = o;
            }
        }
        return;
    }
#endif
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (gpuml__i64)gridDim.x * blockDim.x) {
        float v = 0.0f;
        for (int z = 0; z < p.splits; z++) v += p.ws[z * total + i];
        if (GPUML_HAS_BIAS) v += __ldg(p.bias + (int)(i % p.K));
        v = gpuml__mma_act<GPUML_EPI>(v);
        gpuml__i64 o = i;
        if (GPUML_CONV_YNCHW) {                      /* i = m*K + k -> [n][k][pq] */
            const gpuml__i64 m = i / p.K, k = i - m * p.K, PQ = (gpuml__i64)p.P * p.Q, ni = m / PQ;
            o = (ni * p.K + k) * PQ + (m - ni * PQ);
        }
        if (GPUML_HAS_RESID) v += gpuml__mma_ld<GPUML_CONV_YDT>(Rz[o]);
        Y[o] = gpuml__mma_st<GPUML_CONV_YDT>(v);
    }
}
#endif

/* ---------------------------------------------- f32 operands for the tf32 kernel ---- */
/* -DGPUML_CONV_PREP: gpuml_conv_tf32_prep(gpuml__conv_prep_params) writes an f32 operand as
   contiguous [n][hw][cp] (channels last, cp a multiple of 4, channels past parts*c zero) from
   any strided [n][h][w][c] source: activations NCHW or NHWC, weights KCRS or KRSC (n = K,
   (h, w) = (r, s)).  parts 1: the values as they are; parts 3: the 3xTF32 split v = big +
   small (big = v rounded to tf32, or truncated where rounding overflows; small = (v - big)
   rounded to tf32; both exact in tf32), written as three channel blocks: role 0 (activations)
   [small | bigf | big], role 1 (weights) [bigf | small | big], bigf = big with Inf/NaN zeroed
   (small is 0 there too), so that sum over the blocks of x'.w' = small_x*big_w + big_x*small_w
   + big_x*big_w and a non-finite input meets only the other side's big part (inf*b, not
   inf*0).  Block (32, 8): a 64-pixel x 64-channel tile through shared memory, 16 elements a
   thread (all loads issued before the tile is written: bytes in flight), read along the source's
   unit-stride dim (channels where s3 == 1, else pixels), written along channels.
   Grid (ceil(hw / 64), ceil(c / 64), n).  nfast (the source's unit-stride dim is n, as for the
   backward filter run as a conv of NHWC x's channel planes): a block takes one pixel, 64
   channels and 32 of the n, read along n; grid (hw, ceil(c / 64), ceil(n / 32)). */
struct gpuml__conv_prep_params {
    const float *src;
    float *dst;
    gpuml__i64 s0, s1, s2, s3;  /* source strides (elements) of n, h, w, c */
    int n, hw, w, c, cp, parts, role;
    /* taps > 1: the window's columns unfolded into channels -- channel v = t * c0 + cc (t < taps)
       reads source column w * tstep + t * tdil - tpad (zero outside [0, wsrc)), channel cc.  So a
       conv with few channels runs as an R x 1 conv over taps * c0 channels (less channel padding
       on the tensor cores).  taps 1: c0 = c, the column is w */
    int c0, taps, tstep, tdil, tpad, wsrc;
    int nfast;                  /* 1: lanes along n (s0 == 1; taps 1) */
};
#if defined(GPUML_CONV_PREP)
static __device__ __forceinline__ float gpuml__tf32_rna(float v)
{
    gpuml__u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}
/* channel ch of one destination row: x as it is (parts 1), or its 3xTF32 parts in the role's block order */
static __device__ __forceinline__ void gpuml__prep_put(float *row, int ch, float x, const gpuml__conv_prep_params &p)
{
    if (p.parts == 1) {
        row[ch] = x;
    } else {
        const bool fin = isfinite(x);
        float big = gpuml__tf32_rna(x);
        if (fin && !isfinite(big)) big = __uint_as_float(__float_as_uint(x) & 0xffffe000u);
        const float small = fin ? gpuml__tf32_rna(x - big) : 0.0f, bigf = fin ? big : 0.0f;
        row[ch] = p.role ? bigf : small;
        row[p.c + ch] = p.role ? small : bigf;
        row[2 * p.c + ch] = big;
    }
}
extern "C" __global__ void __launch_bounds__(256) gpuml_conv_tf32_prep(gpuml__conv_prep_params p)
{
    __shared__ float tile[64][65];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    if (p.nfast) {
        /* tile[image][channel]: images n0 + tx read along the source's unit stride, 8 channel rows each */
        const int pix = (int)blockIdx.x, ch0 = (int)blockIdx.y * 64, n0 = (int)blockIdx.z * 32, h = pix / p.w, w = pix - h * p.w;
        const int img = n0 + tx;
        const float *sp = p.src + (gpuml__i64)img * p.s0 + (gpuml__i64)h * p.s1 + (gpuml__i64)w * p.s2;
        float u[8];
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int ch = ch0 + ty + 8 * i;
            u[i] = img < p.n && ch < p.c ? sp[(gpuml__i64)ch * p.s3] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 8; i++) tile[tx][ty + 8 * i] = u[i];
        __syncthreads();
        /* rows (image, pixel) of dst written along channels */
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int im = n0 + ty + 8 * i;
            if (im >= p.n) break;
            float *row = p.dst + ((gpuml__i64)im * p.hw + pix) * p.cp;
#pragma unroll
            for (int jx = 0; jx < 2; jx++) {
                const int ch = ch0 + tx + 32 * jx;
                if (ch >= p.c) break;
                gpuml__prep_put(row, ch, tile[ty + 8 * i][tx + 32 * jx], p);
            }
            if (blockIdx.y == gridDim.y - 1 && p.parts * p.c + tx < p.cp) row[p.parts * p.c + tx] = 0.0f;
        }
        return;
    }
    const int pix0 = (int)blockIdx.x * 64, c0 = (int)blockIdx.y * 64, n = (int)blockIdx.z;
    const float *src = p.src + (gpuml__i64)n * p.s0;
    const bool cfast = p.s3 == 1;
    float v[8][2];
    if (p.taps > 1) {           /* unfolded columns: each element's address on its own */
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int jx = 0; jx < 2; jx++) {
                const int pix = pix0 + (cfast ? ty + 8 * i : tx + 32 * jx), ch = c0 + (cfast ? tx + 32 * jx : ty + 8 * i);
                const int h = pix / p.w, w = pix - h * p.w, t = ch / p.c0, cc = ch - t * p.c0;
                const int iw = w * p.tstep + t * p.tdil - p.tpad;
                v[i][jx] = pix < p.hw && ch < p.c && iw >= 0 && iw < p.wsrc ? src[h * p.s1 + iw * p.s2 + cc * p.s3] : 0.0f;
            }
    } else if (cfast) {         /* lanes along channels, rows = pixels ty + 8i */
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int pix = pix0 + ty + 8 * i;
            const int h = pix / p.w, w = pix - h * p.w;
            const float *rowp = src + h * p.s1 + w * p.s2;
#pragma unroll
            for (int jx = 0; jx < 2; jx++) {
                const int ch = c0 + tx + 32 * jx;
                v[i][jx] = pix < p.hw && ch < p.c ? rowp[ch] : 0.0f;
            }
        }
    } else {                    /* lanes along pixels, rows = channels ty + 8i */
        gpuml__i64 po[2];
#pragma unroll
        for (int jx = 0; jx < 2; jx++) {
            const int pix = pix0 + tx + 32 * jx, h = pix / p.w, w = pix - h * p.w;
            po[jx] = pix < p.hw ? h * p.s1 + w * p.s2 : -1;
        }
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int ch = c0 + ty + 8 * i;
#pragma unroll
            for (int jx = 0; jx < 2; jx++) v[i][jx] = po[jx] >= 0 && ch < p.c ? src[po[jx] + ch * p.s3] : 0.0f;
        }
    }
    /* element (i, jx) is pixel row ty + 8i, channel tx + 32jx where channels are fast, else the transpose */
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int jx = 0; jx < 2; jx++) {
            if (cfast) tile[ty + 8 * i][tx + 32 * jx] = v[i][jx];
            else tile[tx + 32 * jx][ty + 8 * i] = v[i][jx];
        }
    __syncthreads();
    float *dst = p.dst + (gpuml__i64)n * p.hw * p.cp;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int pix = pix0 + ty + 8 * i;
        if (pix >= p.hw) break;
        float *row = dst + (gpuml__i64)pix * p.cp;
#pragma unroll
        for (int jx = 0; jx < 2; jx++) {
            const int ch = c0 + tx + 32 * jx;
            if (ch >= p.c) break;
            gpuml__prep_put(row, ch, tile[ty + 8 * i][tx + 32 * jx], p);
        }
        /* the zero tail past parts * c (cp - parts * c < 32) */
        if (blockIdx.y == gridDim.y - 1 && p.parts * p.c + tx < p.cp) row[p.parts * p.c + tx] = 0.0f;
    }
}
#endif

#endif /* GPUML__CONV_IGEMM_DEFINED */
