/* Family "matmul": the generic SIMT GEMM, correct for every dtype pair, any strides and any
   M, N, K (the fallback behind the tensor-core paths, and the f32 path).
   C[z][m][n] = act(alpha*scale*sum_k A[z][m][k]*B[z][k][n] + beta*C[z][m][n] + bias[n]) + R[z][m][n]
   Macros: GPUML_A_DT, GPUML_B_DT, GPUML_C_DT (gpuml_dtype values), GPUML_EPI (0 none, 1 relu,
   2 gelu (tanh form), 3 silu), GPUML_HAS_BIAS, GPUML_HAS_RESID, GPUML_BETA, GPUML_INT (i8 in,
   i32 accumulation and out: exact).
   Launch: grid (ceil(N/64), ceil(M/64), batch), block 256, no dynamic shared memory. */

#ifndef GPUML__MM_PARAMS_DEFINED
#define GPUML__MM_PARAMS_DEFINED
struct gpuml__mm_params {
    int M, N, K, batch;
    const void *A; gpuml__i64 sa_b, sa_m, sa_k;   /* element strides: batch, row, k */
    const void *B; gpuml__i64 sb_b, sb_k, sb_n;
    void *C;       gpuml__i64 sc_b, sc_m, sc_n;   /* output; also C_in when BETA */
    const float *bias;                            /* [N] f32, or null */
    const void *R; gpuml__i64 sr_b, sr_m, sr_n;   /* residual in the output dtype, or null */
    float alpha, beta, scale;
};
#endif

/* the epilogue shared by every matmul kernel of the family */
static __device__ __forceinline__ float gpuml__mm_act(float x)
{
#if GPUML_EPI == 1
    return x > 0.0f ? x : 0.0f;
#elif GPUML_EPI == 2
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
#elif GPUML_EPI == 3
    return x / (1.0f + __expf(-x));
#else
    return x;
#endif
}

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
            gpuml__TC::T *c = (gpuml__TC::T *)p.C + z * p.sc_b + m * p.sc_m + n * p.sc_n;
#if GPUML_INT
            *c = acc[i][j];
#else
            float v = p.alpha * p.scale * acc[i][j];
#if GPUML_BETA
            v += p.beta * gpuml__TC::ld(*c);
#endif
#if GPUML_HAS_BIAS
            v += p.bias[n];
#endif
            v = gpuml__mm_act(v);
#if GPUML_HAS_RESID
            v += gpuml__TC::ld(((const gpuml__TC::T *)p.R)[z * p.sr_b + m * p.sr_m + n * p.sr_n]);
#endif
            *c = gpuml__TC::st(v);
#endif
        }
    }
}
#endif
