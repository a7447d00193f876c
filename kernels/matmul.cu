/* Family "matmul": the generic SIMT GEMM, correct for every dtype pair, any strides and any
   M, N, K (the fallback behind the tensor-core paths, and the f32 path).
   C[z][m][n] = act(alpha*scale*sum_k A[z][m][k]*B[z][k][n] + beta*C[z][m][n] + bias[n]) + R[z][m][n]
   Macros: GPUML_A_DT, GPUML_B_DT, GPUML_C_DT (gpuml_dtype values), GPUML_EPI (0 none, 1 relu,
   2 gelu (tanh form), 3 silu), GPUML_HAS_BIAS, GPUML_HAS_RESID, GPUML_BETA, GPUML_INT (i8 in,
   i32 accumulation and out: exact).
   Launch: grid (ceil(N/64), ceil(M/64), batch), block 256, no dynamic shared memory. */

/* struct gpuml__mm_params: kernels/common.cuh */

/* the epilogue's activation: gpuml__mma_act<GPUML_EPI> (common.cuh, which also defaults GPUML_EPI to 0) */

#ifdef GPUML_A_DT
typedef gpuml__dt<GPUML_A_DT> gpuml__TA;
typedef gpuml__dt<GPUML_B_DT> gpuml__TB;
typedef gpuml__dt<GPUML_C_DT> gpuml__TC;
#if GPUML_INT
typedef int gpuml__acc;
#else
typedef float gpuml__acc;
#endif

#define GPUML__BM 64
#define GPUML__BN 64
#define GPUML__BK 16
/* the epilogue of one output C[z][m][n] (every kernel of this family): alpha * scale, beta * C,
   bias, activation, residual, the output dtype; i8 GEMMs store the i32 sum as it is */
static __device__ __forceinline__ void gpuml__mm_store(const gpuml__mm_params &p, gpuml__i64 z, int m, int n, gpuml__acc acc)
{
    gpuml__TC::T *c = (gpuml__TC::T *)p.C + z * p.sc_b + (gpuml__i64)m * p.sc_m + (gpuml__i64)n * p.sc_n;
#if GPUML_INT
    *c = acc;
#else
    float v = p.alpha * p.scale * acc;
#if GPUML_BETA
    v += p.beta * gpuml__TC::ld(*c);
#endif
#if GPUML_HAS_BIAS
    v += p.bias[n];
#endif
    v = gpuml__mma_act<GPUML_EPI>(v);
#if GPUML_HAS_RESID
    v += gpuml__TC::ld(((const gpuml__TC::T *)p.R)[z * p.sr_b + (gpuml__i64)m * p.sr_m + (gpuml__i64)n * p.sr_n]);
#endif
    *c = gpuml__TC::st(v);
#endif
}
extern "C" __global__ void __launch_bounds__(256) gpuml_mm_simt(gpuml__mm_params p)
{
    __shared__ gpuml__acc As[GPUML__BK][GPUML__BM + 4];
    __shared__ gpuml__acc Bs[GPUML__BK][GPUML__BN + 4];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * GPUML__BM, n0 = blockIdx.x * GPUML__BN;
    const gpuml__i64 z = blockIdx.z;
    const gpuml__TA::T *A = (const gpuml__TA::T *)p.A + z * p.sa_b;
    const gpuml__TB::T *B = (const gpuml__TB::T *)p.B + z * p.sb_b;
    gpuml__acc acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = 0;
    for (int k0 = 0; k0 < p.K; k0 += GPUML__BK) {
        /* 64x16 tiles of A and B: 1024 elements each, 4 per thread */
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int e = tid + r * 256;
            int am = e / GPUML__BK, ak = e % GPUML__BK;          /* A: consecutive threads walk k */
            int gm = m0 + am, gk = k0 + ak;
            gpuml__acc va = 0, vb = 0;
            if (gm < p.M && gk < p.K) va = (gpuml__acc)gpuml__TA::ld(A[gm * p.sa_m + gk * p.sa_k]);
            As[ak][am] = va;
            int bk = e / GPUML__BN, bn = e % GPUML__BN;          /* B: consecutive threads walk n */
            int gn = n0 + bn;
            gk = k0 + bk;
            if (gn < p.N && gk < p.K) vb = (gpuml__acc)gpuml__TB::ld(B[gk * p.sb_k + gn * p.sb_n]);
            Bs[bk][bn] = vb;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < GPUML__BK; k++) {
            gpuml__acc a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) { a[i] = As[k][ty + 16 * i]; b[i] = Bs[k][tx + 16 * i]; }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        int m = m0 + ty + 16 * i;
        if (m >= p.M) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int n = n0 + tx + 16 * j;
            if (n >= p.N) continue;
            gpuml__mm_store(p, z, m, n, acc[i][j]);
        }
    }
}
/* The large-tile SIMT kernel: 128x128 per block, 8x8 per thread, K in steps of 8, the next
   tiles prefetched into registers while the current ones are multiplied (two shared buffers).
   Same parameters and epilogue as gpuml_mm_simt; float accumulation only.
   Launch: grid (ceil(N/128), ceil(M/128), batch), block 256. */
#if !GPUML_INT
extern "C" __global__ void __launch_bounds__(256) gpuml_mm_simt128(gpuml__mm_params p)
{
    __shared__ float As[2][8][128 + 4];
    __shared__ float Bs[2][8][128 + 4];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * 128, n0 = blockIdx.x * 128;
    const gpuml__i64 z = blockIdx.z;
    const gpuml__TA::T *A = (const gpuml__TA::T *)p.A + z * p.sa_b;
    const gpuml__TB::T *B = (const gpuml__TB::T *)p.B + z * p.sb_b;
    /* loader mapping: A element (m = tid/2, k = (tid%2)*4 + r); B element (k = tid/32, n = (tid%32)*4 + r) */
    const int am = tid >> 1, ak = (tid & 1) * 4, bk = tid >> 5, bn = (tid & 31) * 4;
    /* compute mapping: rows ty*4 + {0..3} and 64 + ty*4 + {0..3}; same for columns with tx */
    const int tx = tid & 15, ty = tid >> 4;
    float acc[8][8];
    float ra[4], rb[4];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    const int ktiles = (p.K + 7) / 8;
    /* first tiles */
#pragma unroll
    for (int r = 0; r < 4; r++) {
        int gm = m0 + am, gk = ak + r;
        ra[r] = (gm < p.M && gk < p.K) ? gpuml__TA::ld(A[gm * p.sa_m + gk * p.sa_k]) : 0.0f;
        int gn = n0 + bn + r;
        rb[r] = (gn < p.N && bk < p.K) ? gpuml__TB::ld(B[bk * p.sb_k + gn * p.sb_n]) : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < 4; r++) { As[0][ak + r][am] = ra[r]; Bs[0][bk][bn + r] = rb[r]; }
    __syncthreads();
    for (int kt = 0; kt < ktiles; kt++) {
        const int cur = kt & 1;
        if (kt + 1 < ktiles) {     /* prefetch the next tiles into registers */
            const int k0 = (kt + 1) * 8;
#pragma unroll
            for (int r = 0; r < 4; r++) {
                int gm = m0 + am, gk = k0 + ak + r;
                ra[r] = (gm < p.M && gk < p.K) ? gpuml__TA::ld(A[gm * p.sa_m + gk * p.sa_k]) : 0.0f;
                int gn = n0 + bn + r, gkb = k0 + bk;
                rb[r] = (gn < p.N && gkb < p.K) ? gpuml__TB::ld(B[gkb * p.sb_k + gn * p.sb_n]) : 0.0f;
            }
        }
#pragma unroll
        for (int k = 0; k < 8; k++) {
            float a[8], b[8];
            float4 a0 = *(const float4 *)&As[cur][k][ty * 4], a1 = *(const float4 *)&As[cur][k][64 + ty * 4];
            float4 b0 = *(const float4 *)&Bs[cur][k][tx * 4], b1 = *(const float4 *)&Bs[cur][k][64 + tx * 4];
            a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w; a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
            b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w; b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (kt + 1 < ktiles) {
#pragma unroll
            for (int r = 0; r < 4; r++) { As[cur ^ 1][ak + r][am] = ra[r]; Bs[cur ^ 1][bk][bn + r] = rb[r]; }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (m >= p.M) continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (n >= p.N) continue;
            gpuml__mm_store(p, z, m, n, acc[i][j]);
        }
    }
}
#endif
/* Small M (M <= 16, the decode case): bound by reading B once.  B is stored N x K (k
   contiguous), A M x K (k contiguous), 16-bit dtypes, K a multiple of 8, 16-byte aligned rows.
   Each block stages an M x kchunk slice of A in shared memory, converted to f32 once; each
   warp takes 4 columns of B, a lane reading 8 k values of each column with one 16-byte load
   (converted with the hardware cvt for f16: the bit-exact software conversion of shared.h
   costs ~25 instructions an element, which made this kernel compute-bound) and reusing every
   A vector for the 4 columns.  Blocks along y split K; partial sums go to part[y][m][n] (f32)
   and gpuml_mm_small_epi adds them up and applies the epilogue.
   Launch: grid (ceil(N/32), ksplit, 1), block 256, dynamic shared memory M * kchunk * 4. */
#if !GPUML_INT
static __device__ __forceinline__ float gpuml__h2f_fast(gpuml__u16 h, int is_bf16)
{
    if (is_bf16) return __uint_as_float((unsigned)h << 16);
    float f;
    asm("{ .reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "h"(h));
    return f;
}
extern "C" __global__ void __launch_bounds__(256) gpuml_mm_small(gpuml__mm_params p, float *part, int kchunk)
{
    extern __shared__ float4 gpuml__smem_small[];
    float *As = (float *)gpuml__smem_small;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int k0 = blockIdx.y * kchunk, k1 = min(k0 + kchunk, p.K), kn = k1 - k0;
    const int n0 = blockIdx.x * 32 + warp * 4;
    const gpuml__u16 *A = (const gpuml__u16 *)p.A, *B = (const gpuml__u16 *)p.B;
    float acc[16][4];
#pragma unroll
    for (int m = 0; m < 16; m++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[m][c] = 0.0f;
    /* A slice -> shared memory as f32, 8 elements (16 bytes) at a time */
    for (int e = threadIdx.x * 8; e < p.M * kn; e += 256 * 8) {
        int m = e / kn, k = e - m * kn;
        uint4 v = *(const uint4 *)(A + (gpuml__i64)m * p.sa_m + k0 + k);
        const gpuml__u16 *h = (const gpuml__u16 *)&v;
        float4 lo, hi;
        lo.x = gpuml__h2f_fast(h[0], GPUML_A_DT == 2); lo.y = gpuml__h2f_fast(h[1], GPUML_A_DT == 2);
        lo.z = gpuml__h2f_fast(h[2], GPUML_A_DT == 2); lo.w = gpuml__h2f_fast(h[3], GPUML_A_DT == 2);
        hi.x = gpuml__h2f_fast(h[4], GPUML_A_DT == 2); hi.y = gpuml__h2f_fast(h[5], GPUML_A_DT == 2);
        hi.z = gpuml__h2f_fast(h[6], GPUML_A_DT == 2); hi.w = gpuml__h2f_fast(h[7], GPUML_A_DT == 2);
        *(float4 *)(As + m * kn + k) = lo;
        *(float4 *)(As + m * kn + k + 4) = hi;
    }
    __syncthreads();
    for (int k = lane * 8; k < kn; k += 256) {
        uint4 bv[4];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            int n = n0 + c;
            bv[c] = n < p.N ? __ldg((const uint4 *)(B + (gpuml__i64)n * p.sb_n + k0 + k)) : make_uint4(0, 0, 0, 0);
        }
        float bf[4][8];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const gpuml__u16 *h = (const gpuml__u16 *)&bv[c];
#pragma unroll
            for (int j = 0; j < 8; j++) bf[c][j] = gpuml__h2f_fast(h[j], GPUML_B_DT == 2);
        }
#pragma unroll
        for (int m = 0; m < 16; m++) {
            if (m < p.M) {
                float4 a0 = *(const float4 *)(As + m * kn + k), a1 = *(const float4 *)(As + m * kn + k + 4);
                float a[8] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };
#pragma unroll
                for (int j = 0; j < 8; j++)
#pragma unroll
                    for (int c = 0; c < 4; c++) acc[m][c] = fmaf(a[j], bf[c][j], acc[m][c]);
            }
        }
    }
#pragma unroll
    for (int m = 0; m < 16; m++) {
        if (m < p.M) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float v = acc[m][c];
#pragma unroll
                for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
                if (lane == 0 && n0 + c < p.N) part[((gpuml__i64)blockIdx.y * p.M + m) * p.N + n0 + c] = v;
            }
        }
    }
}

/* sums the split-K partials of the wgmma kernel (part[s][m][n], row stride ldw: a multiple of 4, f32,
   16-byte aligned) in a fixed order and applies the epilogue.  Block (32, 8); a thread takes 4
   adjacent outputs of a row (float4 loads: a warp reads 512 contiguous bytes a split; scalar loads
   made the lane mode 1.45x cuBLAS's reduction at 256^2 x 16384, now 1.17x; bench/NOTES_matmul_sm90.md
   "Split-K epilogue"), a block 128 columns.  With >= 8 splits and fewer than 2^18 outputs (the lane
   mode up to 2^20 was slower at 512^2 x 8192: 6.2 us against 5.3 by rows, 4.7 in the scalar form)
   the 8 y-lanes take every 8th split and meet in shared
   memory (grid ceil(N / 128) * M: block b takes row b / ceil(N / 128)); otherwise the y-lanes are 8
   rows, each thread summing its splits (grid ceil(N / 128) * ceil(M / 8)).  Either way an output's
   sum runs in the same order as before the float4 form (bit-identical). */
static __device__ __forceinline__ void gpuml__splitk_store(const gpuml__mm_params &p, int m, int n, float sum);
static __device__ __forceinline__ void gpuml__splitk_add4(float4 &a, const float4 v)
{
    a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
}
static __device__ __forceinline__ void gpuml__splitk_store4(const gpuml__mm_params &p, int m, int n, const float4 v)
{
    gpuml__splitk_store(p, m, n, v.x);
    if (n + 1 < p.N) gpuml__splitk_store(p, m, n + 1, v.y);
    if (n + 2 < p.N) gpuml__splitk_store(p, m, n + 2, v.z);
    if (n + 3 < p.N) gpuml__splitk_store(p, m, n + 3, v.w);
}
extern "C" __global__ void __launch_bounds__(256) gpuml_mm_splitk_epi(gpuml__mm_params p, const float *part, int splits, long long ldw)
{
    __shared__ float4 red[8][32];
    const int nbx = (p.N + 127) / 128, n = ((int)(blockIdx.x % nbx) * 32 + (int)threadIdx.x) * 4;
    const gpuml__i64 sstep = (gpuml__i64)p.M * ldw / 4;   /* float4s between splits */
    if (!(splits >= 8 && (gpuml__i64)p.M * p.N < ((gpuml__i64)1 << 18))) {   /* gpuml__splitk_lanes in gpuml.h */
        const int m = (int)(blockIdx.x / nbx) * 8 + (int)threadIdx.y;
        if (n < p.N && m < p.M) {
            const float4 *src = (const float4 *)(part + (gpuml__i64)m * ldw + n);
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
            for (int s = 0; s < splits; s++) gpuml__splitk_add4(sum, src[s * sstep]);
            gpuml__splitk_store4(p, m, n, sum);
        }
        return;
    }
    const int m = (int)(blockIdx.x / nbx);
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (n < p.N) {
        const float4 *src = (const float4 *)(part + (gpuml__i64)m * ldw + n);
        for (int s = (int)threadIdx.y; s < splits; s += 8) gpuml__splitk_add4(acc, src[s * sstep]);
    }
    red[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && n < p.N) {
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
        for (int i = 0; i < 8; i++) gpuml__splitk_add4(sum, red[i][threadIdx.x]);
        gpuml__splitk_store4(p, m, n, sum);
    }
}
/* the epilogue of one output of a K-split sum (the wgmma split-K and the small-M kernels): alpha,
   beta * C, bias, activation, residual, the output dtype */
static __device__ __forceinline__ void gpuml__splitk_store(const gpuml__mm_params &p, int m, int n, float sum)
{
    gpuml__mm_store(p, 0, m, n, sum);
}

/* sums the K-split partials of gpuml_mm_small and applies the epilogue; a thread per output */
extern "C" __global__ void gpuml_mm_small_epi(gpuml__mm_params p, const float *part, int ksplit)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < (gpuml__i64)p.M * p.N;
         i += (gpuml__i64)gridDim.x * blockDim.x) {
        int m = (int)(i / p.N), n = (int)(i - (gpuml__i64)m * p.N);
        float acc = 0.0f;
        for (int s = 0; s < ksplit; s++) acc += part[(gpuml__i64)s * p.M * p.N + i];
        gpuml__splitk_store(p, m, n, acc);
    }
}
#endif
#endif
