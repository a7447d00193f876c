/* ---------------------------------------------------------------------------
 * cpu_gemm.inc.h -- BLIS-style CPU SGEMM (f32 / f16 / bf16 inputs, f32 C).
 *
 * Pasted verbatim into the implementation section of gpuml.h.  Relies on the
 * core's gpuml__parallel_for, gpuml__pool_size, gpuml__cpu_has_avx2_fma,
 * gpuml__f16_to_f32, gpuml__bf16_to_f32, gpuml__aligned_alloc/free and on
 * <stdint.h>/<stddef.h> being included by the host.
 *
 * Structure (Goto/BLIS): jc (NC cols of B) -> pc (KC of K) -> pack B ->
 * ic (MC rows of A) -> pack A -> jr (NR) -> ir (MR) -> 6x16 microkernel.
 * Threads get disjoint 2-D tiles of C and run that loop nest with private
 * packing buffers, so one parallel_for per call is the only synchronisation.
 * ------------------------------------------------------------------------- */

enum { GPUML__GEMM_F32 = 0, GPUML__GEMM_F16 = 1, GPUML__GEMM_BF16 = 2 };

/* Register block: 6x16 uses 12 ymm accumulators + 2 B vectors + 1 broadcast
   (15 of 16 ymm), enough independent FMAs to hide 4-cycle FMA latency on two
   pipes.  Plain macros, not enum constants, so that ?: mixing them with
   int64_t stays warning-free in C++. */
#define GPUML__GEMM_MR 6
#define GPUML__GEMM_NR 16
/* Cache blocking, sized for Zen 3 (32 KB L1d, 512 KB L2 per core):
   KC: one B micro-panel (KC*NR*4 = 16 KB) plus one A micro-panel (6 KB)
       live in L1 while the A block streams from L2.
   MC: the packed A block (MC*KC*4 = 144 KB) takes ~30% of L2, leaving room
       for the B panel being streamed through and C lines.
   NC: the packed B block (KC*NC*4 = 4 MB) lives in L3; only bounds memory.
   Overridable so the benchmark can sweep them. */
#ifndef GPUML__GEMM_KC
#define GPUML__GEMM_KC 256
#endif
#ifndef GPUML__GEMM_MC
#define GPUML__GEMM_MC 144
#endif
#ifndef GPUML__GEMM_NC
#define GPUML__GEMM_NC 4080
#endif
/* Below this many multiply-adds the packing copies cost about as much as
   the math, so the unpacked path wins. */
#ifndef GPUML__GEMM_SMALL_MNK
#define GPUML__GEMM_SMALL_MNK (30 * 30 * 30)
#endif
/* Minimum multiply-adds per thread: below it waking a thread costs more
   than it saves. */
#ifndef GPUML__GEMM_THREAD_MNK
#define GPUML__GEMM_THREAD_MNK (48 * 48 * 48)
#endif

#if defined(__x86_64__) || defined(_M_X64)
/* clang-cl defines __clang__ but, in MSVC mode, <immintrin.h> hides AVX2
   types unless the whole TU is built with -mavx2: keep it portable there. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER)
#include <immintrin.h>
#define GPUML__GEMM_AVX2 1
#define GPUML__GEMM_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif
#endif
#ifndef GPUML__GEMM_AVX2
#define GPUML__GEMM_AVX2 0
#endif

/* Internal options (tests force each path; the public entry passes 0). */
enum {
    GPUML__GEMM_OPT_NO_SMALL = 1,   /* never take the unpacked path */
    GPUML__GEMM_OPT_FORCE_SMALL = 2, /* always take the unpacked path */
    GPUML__GEMM_OPT_NO_SIMD = 4      /* portable kernels even on AVX2 CPUs */
};

typedef struct gpuml__gemm_args {
    int64_t M, N, K;
    float alpha, beta;
    const void *A; int at; int64_t rsa, csa;
    const void *B; int bt; int64_t rsb, csb;
    float *C; int64_t rsc, csc;
} gpuml__gemm_args;

/* Computes a full MR x NR tile from packed panels: C = alpha*AB + beta*C,
   C rows contiguous (column stride 1) with row stride ldc; beta == 0 means
   C is not read. */
typedef void (*gpuml__gemm_ukr_fn)(int64_t kc, const float *a, const float *b,
                                   float *c, int64_t ldc, float alpha, float beta);

static int64_t gpuml__gemm_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t gpuml__gemm_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t gpuml__gemm_roundup(int64_t a, int64_t b) { return gpuml__gemm_ceil(a, b) * b; }

static float gpuml__gemm_ld(const void *x, int type, int64_t idx)
{
    switch (type) {
    case GPUML__GEMM_F16: return gpuml__f16_to_f32(((const uint16_t *)x)[idx]);
    case GPUML__GEMM_BF16: return gpuml__bf16_to_f32(((const uint16_t *)x)[idx]);
    default: return ((const float *)x)[idx];
    }
}

/* ---- packing --------------------------------------------------------------
 * A panel of width W (MR for A, NR for B) and depth kc is stored k-major:
 * dst[k*W + w] = X[off + w*sw + k*sk], zero-padded for w >= width so the
 * microkernel never needs edge logic.  For A: sw = rsa, sk = csa; for B:
 * sw = csb, sk = rsb. */
static void gpuml__gemm_pack_panel(float *dst, int64_t W, int64_t width, int64_t kc,
                                   const void *X, int type, int64_t off,
                                   int64_t sw, int64_t sk)
{
    int64_t k, w;
    if (type == GPUML__GEMM_F32) {
        const float *x = (const float *)X + off;
        if (sw == 1 && width == 16 && W == 16) {
            /* full B panel from row-major B: constant-length copies vectorise */
            for (k = 0; k < kc; ++k) {
                const float *s = x + k * sk;
                float *d = dst + k * 16;
                for (w = 0; w < 16; ++w) d[w] = s[w];
            }
        } else if (sw == 1) {
            /* contiguous along the panel width: row copies */
            for (k = 0; k < kc; ++k) {
                const float *s = x + k * sk;
                float *d = dst + k * W;
                for (w = 0; w < width; ++w) d[w] = s[w];
                for (; w < W; ++w) d[w] = 0.0f;
            }
        } else if (sk == 1) {
            /* contiguous along k: transpose; walk each source row linearly */
            for (w = 0; w < width; ++w) {
                const float *s = x + w * sw;
                float *d = dst + w;
                for (k = 0; k < kc; ++k) d[k * W] = s[k];
            }
            for (; w < W; ++w)
                for (k = 0; k < kc; ++k) dst[k * W + w] = 0.0f;
        } else {
            for (k = 0; k < kc; ++k) {
                float *d = dst + k * W;
                for (w = 0; w < width; ++w) d[w] = x[w * sw + k * sk];
                for (; w < W; ++w) d[w] = 0.0f;
            }
        }
    } else {
        /* half types: conversion dominates, layout tricks don't matter */
        for (k = 0; k < kc; ++k) {
            float *d = dst + k * W;
            for (w = 0; w < width; ++w) d[w] = gpuml__gemm_ld(X, type, off + w * sw + k * sk);
            for (; w < W; ++w) d[w] = 0.0f;
        }
    }
}

#if GPUML__GEMM_AVX2
/* AVX2 transpose-pack of 6 rows contiguous along k (row-major A, the common
   case): scalar strided stores were ~10% of run time at n = 256. */
GPUML__GEMM_TARGET_AVX2
static void gpuml__gemm_pack_a6_avx2(float *dst, int64_t kc, const float *x, int64_t sw)
{
    const float *r0 = x, *r1 = x + sw, *r2 = x + 2 * sw;
    const float *r3 = x + 3 * sw, *r4 = x + 4 * sw, *r5 = x + 5 * sw;
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 v0 = _mm256_loadu_ps(r0 + k), v1 = _mm256_loadu_ps(r1 + k);
        __m256 v2 = _mm256_loadu_ps(r2 + k), v3 = _mm256_loadu_ps(r3 + k);
        __m256 v4 = _mm256_loadu_ps(r4 + k), v5 = _mm256_loadu_ps(r5 + k);
        /* 4x8 transpose of rows 0-3 gives, per 128-bit lane, columns as
           [r0 r1 r2 r3]; rows 4-5 are interleaved into pairs [r4 r5]. */
        __m256 t0 = _mm256_unpacklo_ps(v0, v1), t1 = _mm256_unpackhi_ps(v0, v1);
        __m256 t2 = _mm256_unpacklo_ps(v2, v3), t3 = _mm256_unpackhi_ps(v2, v3);
        __m256 q0 = _mm256_shuffle_ps(t0, t2, 0x44), q1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 q2 = _mm256_shuffle_ps(t1, t3, 0x44), q3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        __m256 p0 = _mm256_unpacklo_ps(v4, v5), p1 = _mm256_unpackhi_ps(v4, v5);
        /* lane l of q_j holds column k+j+4l (rows 0-3); the pair for
           column k+j+4l is at 64-bit slot (j&1) of p_(j>>1), lane l. */
        float *d = dst + k * 6;
        _mm_storeu_ps(d + 0, _mm256_castps256_ps128(q0));
        _mm_storel_pi((__m64 *)(d + 4), _mm256_castps256_ps128(p0));
        _mm_storeu_ps(d + 6, _mm256_castps256_ps128(q1));
        _mm_storeh_pi((__m64 *)(d + 10), _mm256_castps256_ps128(p0));
        _mm_storeu_ps(d + 12, _mm256_castps256_ps128(q2));
        _mm_storel_pi((__m64 *)(d + 16), _mm256_castps256_ps128(p1));
        _mm_storeu_ps(d + 18, _mm256_castps256_ps128(q3));
        _mm_storeh_pi((__m64 *)(d + 22), _mm256_castps256_ps128(p1));
        _mm_storeu_ps(d + 24, _mm256_extractf128_ps(q0, 1));
        _mm_storel_pi((__m64 *)(d + 28), _mm256_extractf128_ps(p0, 1));
        _mm_storeu_ps(d + 30, _mm256_extractf128_ps(q1, 1));
        _mm_storeh_pi((__m64 *)(d + 34), _mm256_extractf128_ps(p0, 1));
        _mm_storeu_ps(d + 36, _mm256_extractf128_ps(q2, 1));
        _mm_storel_pi((__m64 *)(d + 40), _mm256_extractf128_ps(p1, 1));
        _mm_storeu_ps(d + 42, _mm256_extractf128_ps(q3, 1));
        _mm_storeh_pi((__m64 *)(d + 46), _mm256_extractf128_ps(p1, 1));
    }
    for (; k < kc; ++k) {
        float *d = dst + k * 6;
        d[0] = r0[k]; d[1] = r1[k]; d[2] = r2[k]; d[3] = r3[k]; d[4] = r4[k]; d[5] = r5[k];
    }
}
#endif

#if GPUML__GEMM_AVX2
/* Full 16-wide panel of row-major B: two vector copies per k.  The generic
   loop was ~12% of run time at n = 256. */
GPUML__GEMM_TARGET_AVX2
static void gpuml__gemm_pack_b16_avx2(float *dst, int64_t kc, const float *x, int64_t sk)
{
    int64_t k;
    for (k = 0; k < kc; ++k) {
        const float *s = x + k * sk;
        _mm256_store_ps(dst + k * 16, _mm256_loadu_ps(s));
        _mm256_store_ps(dst + k * 16 + 8, _mm256_loadu_ps(s + 8));
    }
}
#endif

/* Packs `width` rows/cols as consecutive panels of W (panel p at dst+p*W*kc). */
static void gpuml__gemm_pack(float *dst, int64_t W, int64_t width, int64_t kc,
                             const void *X, int type, int64_t off, int64_t sw, int64_t sk,
                             int simd)
{
    int64_t p;
    for (p = 0; p < width; p += W) {
        int64_t w = gpuml__gemm_min(W, width - p);
#if GPUML__GEMM_AVX2
        if (simd && W == 6 && w == 6 && sk == 1 && type == GPUML__GEMM_F32) {
            gpuml__gemm_pack_a6_avx2(dst + p * kc, kc, (const float *)X + off + p * sw, sw);
            continue;
        }
        if (simd && W == 16 && w == 16 && sw == 1 && type == GPUML__GEMM_F32) {
            gpuml__gemm_pack_b16_avx2(dst + p * kc, kc, (const float *)X + off + p * sw, sk);
            continue;
        }
#else
        (void)simd;
#endif
        gpuml__gemm_pack_panel(dst + p * kc, W, w, kc, X, type, off + p * sw, sw, sk);
    }
}

/* ---- microkernels ------------------------------------------------------- */

static void gpuml__gemm_ukr_ref(int64_t kc, const float *a, const float *b,
                                float *c, int64_t ldc, float alpha, float beta)
{
    float acc[GPUML__GEMM_MR][GPUML__GEMM_NR];
    int64_t k;
    int i, j;
    for (i = 0; i < GPUML__GEMM_MR; ++i)
        for (j = 0; j < GPUML__GEMM_NR; ++j) acc[i][j] = 0.0f;
    for (k = 0; k < kc; ++k) {
        for (i = 0; i < GPUML__GEMM_MR; ++i) {
            float av = a[i];
            for (j = 0; j < GPUML__GEMM_NR; ++j) acc[i][j] += av * b[j];
        }
        a += GPUML__GEMM_MR;
        b += GPUML__GEMM_NR;
    }
    for (i = 0; i < GPUML__GEMM_MR; ++i) {
        float *ci = c + i * ldc;
        if (beta == 0.0f)
            for (j = 0; j < GPUML__GEMM_NR; ++j) ci[j] = alpha * acc[i][j];
        else
            for (j = 0; j < GPUML__GEMM_NR; ++j) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
}

#if GPUML__GEMM_AVX2
#define GPUML__GEMM_UKR_ROW(r, ko)                                   \
    av = _mm256_broadcast_ss(a + 6 * (ko) + (r));                   \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                     \
    c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);
#define GPUML__GEMM_UKR_STEP(ko)                                     \
    b0 = _mm256_load_ps(b + 16 * (ko));                             \
    b1 = _mm256_load_ps(b + 16 * (ko) + 8);                         \
    GPUML__GEMM_UKR_ROW(0, ko) GPUML__GEMM_UKR_ROW(1, ko)           \
    GPUML__GEMM_UKR_ROW(2, ko) GPUML__GEMM_UKR_ROW(3, ko)           \
    GPUML__GEMM_UKR_ROW(4, ko) GPUML__GEMM_UKR_ROW(5, ko)
#define GPUML__GEMM_UKR_STORE(r)                                             \
    {                                                                        \
        float *cr = c + (r) * ldc;                                           \
        __m256 x0 = _mm256_mul_ps(va, c##r##0), x1 = _mm256_mul_ps(va, c##r##1); \
        if (beta != 0.0f) {                                                  \
            x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), x0);               \
            x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), x1);           \
        }                                                                    \
        _mm256_storeu_ps(cr, x0);                                            \
        _mm256_storeu_ps(cr + 8, x1);                                        \
    }

GPUML__GEMM_TARGET_AVX2
static void gpuml__gemm_ukr_avx2(int64_t kc, const float *a, const float *b,
                                 float *c, int64_t ldc, float alpha, float beta)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    __m256 b0, b1, av, va, vb;
    int64_t k = 0;
    int r;
    /* C is touched only after the K loop; start pulling its lines now. */
    for (r = 0; r < GPUML__GEMM_MR; ++r) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 15), _MM_HINT_T0);
    }
    for (; k + 4 <= kc; k += 4) {
        GPUML__GEMM_UKR_STEP(0)
        GPUML__GEMM_UKR_STEP(1)
        GPUML__GEMM_UKR_STEP(2)
        GPUML__GEMM_UKR_STEP(3)
        a += 4 * 6;
        b += 4 * 16;
    }
    for (; k < kc; ++k) {
        GPUML__GEMM_UKR_STEP(0)
        a += 6;
        b += 16;
    }
    va = _mm256_set1_ps(alpha);
    vb = _mm256_set1_ps(beta);
    GPUML__GEMM_UKR_STORE(0)
    GPUML__GEMM_UKR_STORE(1)
    GPUML__GEMM_UKR_STORE(2)
    GPUML__GEMM_UKR_STORE(3)
    GPUML__GEMM_UKR_STORE(4)
    GPUML__GEMM_UKR_STORE(5)
}
#undef GPUML__GEMM_UKR_ROW
#undef GPUML__GEMM_UKR_STEP
#undef GPUML__GEMM_UKR_STORE
#endif

/* ---- blocked driver ----------------------------------------------------- */

/* Writes alpha*tile + beta*C for an edge (or non-unit column stride) tile. */
static void gpuml__gemm_store_tile(const float *t, int64_t mr, int64_t nr, float *c,
                                   int64_t rsc, int64_t csc, float alpha, float beta)
{
    int64_t i, j;
    for (i = 0; i < mr; ++i)
        for (j = 0; j < nr; ++j) {
            float *cij = c + i * rsc + j * csc;
            float v = alpha * t[i * GPUML__GEMM_NR + j];
            *cij = beta == 0.0f ? v : v + beta * *cij;
        }
}

static void gpuml__gemm_macro(gpuml__gemm_ukr_fn ukr, int64_t mc, int64_t nc, int64_t kc,
                              const float *pa, const float *pb, float *c,
                              int64_t rsc, int64_t csc, float alpha, float beta)
{
    float tmp[GPUML__GEMM_MR * GPUML__GEMM_NR];
    int64_t ir, jr;
    /* jr outer: one B micro-panel stays in L1 while all A micro-panels of the
       (L2-resident) A block stream past it. */
    for (jr = 0; jr < nc; jr += GPUML__GEMM_NR) {
        int64_t nr = gpuml__gemm_min(GPUML__GEMM_NR, nc - jr);
        const float *b = pb + jr * kc;
        for (ir = 0; ir < mc; ir += GPUML__GEMM_MR) {
            int64_t mr = gpuml__gemm_min(GPUML__GEMM_MR, mc - ir);
            float *cc = c + ir * rsc + jr * csc;
            if (mr == GPUML__GEMM_MR && nr == GPUML__GEMM_NR && csc == 1) {
                ukr(kc, pa + ir * kc, b, cc, rsc, alpha, beta);
            } else {
                ukr(kc, pa + ir * kc, b, tmp, GPUML__GEMM_NR, 1.0f, 0.0f);
                gpuml__gemm_store_tile(tmp, mr, nr, cc, rsc, csc, alpha, beta);
            }
        }
    }
}

typedef struct gpuml__gemm_job {
    gpuml__gemm_args g;
    gpuml__gemm_ukr_fn ukr;
    int simd;
    int64_t tm, tn;         /* thread grid over C */
    float *ws;              /* per-task packing buffers */
    int64_t ws_task;        /* floats per task */
    int64_t a_floats;       /* A part of a task's buffer; B part follows */
} gpuml__gemm_job;

/* Start of part `idx` of n split into `parts`, on multiples of `unit` so
   that only the last part can have edge tiles. */
static int64_t gpuml__gemm_split(int64_t n, int64_t parts, int64_t idx, int64_t unit)
{
    if (idx >= parts) return n;
    return gpuml__gemm_min(n, gpuml__gemm_roundup(n * idx / parts, unit));
}

/* Runs the whole blocked loop nest on C[m0:m1, n0:n1] with private buffers. */
static void gpuml__gemm_tile(const gpuml__gemm_job *job, int64_t m0, int64_t m1,
                             int64_t n0, int64_t n1, float *pa, float *pb)
{
    const gpuml__gemm_args *g = &job->g;
    int64_t M = m1 - m0, N = n1 - n0, K = g->K;
    int64_t jc, pc, ic;
    /* Even block sizes: avoid e.g. K = 257 leaving a 1-deep pass over C. */
    int64_t kb = gpuml__gemm_ceil(K, gpuml__gemm_ceil(K, GPUML__GEMM_KC));
    int64_t mb, nb;
    if (M <= 0 || N <= 0) return;
    mb = gpuml__gemm_roundup(gpuml__gemm_ceil(M, gpuml__gemm_ceil(M, GPUML__GEMM_MC)), GPUML__GEMM_MR);
    nb = gpuml__gemm_roundup(gpuml__gemm_ceil(N, gpuml__gemm_ceil(N, GPUML__GEMM_NC)), GPUML__GEMM_NR);
    for (jc = n0; jc < n1; jc += nb) {
        int64_t nc = gpuml__gemm_min(nb, n1 - jc);
        for (pc = 0; pc < K; pc += kb) {
            int64_t kc = gpuml__gemm_min(kb, K - pc);
            float beta = pc == 0 ? g->beta : 1.0f; /* later K blocks accumulate */
            gpuml__gemm_pack(pb, GPUML__GEMM_NR, nc, kc, g->B, g->bt,
                             pc * g->rsb + jc * g->csb, g->csb, g->rsb, job->simd);
            for (ic = m0; ic < m1; ic += mb) {
                int64_t mc = gpuml__gemm_min(mb, m1 - ic);
                gpuml__gemm_pack(pa, GPUML__GEMM_MR, mc, kc, g->A, g->at,
                                 ic * g->rsa + pc * g->csa, g->rsa, g->csa, job->simd);
                gpuml__gemm_macro(job->ukr, mc, nc, kc, pa, pb,
                                  g->C + ic * g->rsc + jc * g->csc, g->rsc, g->csc,
                                  g->alpha, beta);
            }
        }
    }
}

static void gpuml__gemm_task(void *arg, int64_t begin, int64_t end, int thread_index)
{
    const gpuml__gemm_job *job = (const gpuml__gemm_job *)arg;
    int64_t t;
    (void)thread_index; /* buffers are per task, so any thread mapping is race-free */
    for (t = begin; t < end; ++t) {
        int64_t ti = t / job->tn, tj = t % job->tn;
        float *pa = job->ws + t * job->ws_task;
        gpuml__gemm_tile(job,
                         gpuml__gemm_split(job->g.M, job->tm, ti, GPUML__GEMM_MR),
                         gpuml__gemm_split(job->g.M, job->tm, ti + 1, GPUML__GEMM_MR),
                         gpuml__gemm_split(job->g.N, job->tn, tj, GPUML__GEMM_NR),
                         gpuml__gemm_split(job->g.N, job->tn, tj + 1, GPUML__GEMM_NR),
                         pa, pa + job->a_floats);
    }
}

/* ---- unpacked path for small problems ----------------------------------- */

static void gpuml__gemm_small_ref(const gpuml__gemm_args *g)
{
    int64_t i, j, k;
    for (i = 0; i < g->M; ++i)
        for (j = 0; j < g->N; ++j) {
            float acc = 0.0f, *c = g->C + i * g->rsc + j * g->csc;
            for (k = 0; k < g->K; ++k)
                acc += gpuml__gemm_ld(g->A, g->at, i * g->rsa + k * g->csa) *
                       gpuml__gemm_ld(g->B, g->bt, k * g->rsb + j * g->csb);
            *c = g->beta == 0.0f ? g->alpha * acc : g->alpha * acc + g->beta * *c;
        }
}

#if GPUML__GEMM_AVX2
/* f32 A (any strides) times f32 B with unit column stride, straight from
   the source: 4x16 register tiles, masked loads for the column edge. */
GPUML__GEMM_TARGET_AVX2
static void gpuml__gemm_small_avx2(const gpuml__gemm_args *g)
{
    const float *A = (const float *)g->A, *B = (const float *)g->B;
    int64_t i, j, k, r;
    float tmp[4 * 16];
    for (j = 0; j < g->N; j += 16) {
        int64_t nr = gpuml__gemm_min(16, g->N - j);
        /* lane l of mask h is on iff 8h + l < nr */
        __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nr), lanes);
        __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nr - 8), lanes);
        const float *bj = B + j;
        for (i = 0; i < g->M; i += 4) {
            int64_t mr = gpuml__gemm_min(4, g->M - i);
            const float *ai = A + i * g->rsa;
            __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
            __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
            __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
            __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
            if (mr == 4) {
                for (k = 0; k < g->K; ++k) {
                    const float *bk = bj + k * g->rsb, *ak = ai + k * g->csa;
                    __m256 b0 = _mm256_maskload_ps(bk, m0), b1 = _mm256_maskload_ps(bk + 8, m1);
                    __m256 a0 = _mm256_broadcast_ss(ak), a1 = _mm256_broadcast_ss(ak + g->rsa);
                    __m256 a2 = _mm256_broadcast_ss(ak + 2 * g->rsa), a3 = _mm256_broadcast_ss(ak + 3 * g->rsa);
                    c00 = _mm256_fmadd_ps(a0, b0, c00); c01 = _mm256_fmadd_ps(a0, b1, c01);
                    c10 = _mm256_fmadd_ps(a1, b0, c10); c11 = _mm256_fmadd_ps(a1, b1, c11);
                    c20 = _mm256_fmadd_ps(a2, b0, c20); c21 = _mm256_fmadd_ps(a2, b1, c21);
                    c30 = _mm256_fmadd_ps(a3, b0, c30); c31 = _mm256_fmadd_ps(a3, b1, c31);
                }
            } else {
                /* row edge: one row at a time into the first accumulator pair */
                for (r = 0; r < mr; ++r) {
                    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
                    const float *ar = ai + r * g->rsa;
                    for (k = 0; k < g->K; ++k) {
                        const float *bk = bj + k * g->rsb;
                        __m256 av = _mm256_broadcast_ss(ar + k * g->csa);
                        s0 = _mm256_fmadd_ps(av, _mm256_maskload_ps(bk, m0), s0);
                        s1 = _mm256_fmadd_ps(av, _mm256_maskload_ps(bk + 8, m1), s1);
                    }
                    _mm256_storeu_ps(tmp + 16 * r, s0);
                    _mm256_storeu_ps(tmp + 16 * r + 8, s1);
                }
            }
            if (mr == 4) {
                _mm256_storeu_ps(tmp, c00); _mm256_storeu_ps(tmp + 8, c01);
                _mm256_storeu_ps(tmp + 16, c10); _mm256_storeu_ps(tmp + 24, c11);
                _mm256_storeu_ps(tmp + 32, c20); _mm256_storeu_ps(tmp + 40, c21);
                _mm256_storeu_ps(tmp + 48, c30); _mm256_storeu_ps(tmp + 56, c31);
            }
            /* the tile is small next to its K loop; a scalar write-back is fine */
            for (r = 0; r < mr; ++r) {
                float *c = g->C + (i + r) * g->rsc + j * g->csc;
                int64_t jj;
                for (jj = 0; jj < nr; ++jj) {
                    float v = g->alpha * tmp[16 * r + jj];
                    float *cj = c + jj * g->csc;
                    *cj = g->beta == 0.0f ? v : v + g->beta * *cj;
                }
            }
        }
    }
}
#endif

/* C = beta*C, for K == 0 or alpha == 0 (A and B are not read, as in BLAS). */
static void gpuml__gemm_scale_c(const gpuml__gemm_args *g)
{
    int64_t i, j;
    for (i = 0; i < g->M; ++i)
        for (j = 0; j < g->N; ++j) {
            float *c = g->C + i * g->rsc + j * g->csc;
            *c = g->beta == 0.0f ? 0.0f : g->beta * *c;
        }
}

static int gpuml__cpu_gemm_opt(gpuml__pool *pool, int64_t M, int64_t N, int64_t K, float alpha,
                               const void *A, int a_type, int64_t rsa, int64_t csa,
                               const void *B, int b_type, int64_t rsb, int64_t csb,
                               float beta, float *C, int64_t rsc, int64_t csc, int opts)
{
    gpuml__gemm_args g;
    gpuml__gemm_job job;
    int64_t mnk, nt, t, best_cost = -1, max_m = 0, max_n = 0;
    int simd = 0;

    if (M <= 0 || N <= 0) return 0;
    g.M = M; g.N = N; g.K = K; g.alpha = alpha; g.beta = beta;
    g.A = A; g.at = a_type; g.rsa = rsa; g.csa = csa;
    g.B = B; g.bt = b_type; g.rsb = rsb; g.csb = csb;
    g.C = C; g.rsc = rsc; g.csc = csc;
    if (K <= 0 || alpha == 0.0f) {
        gpuml__gemm_scale_c(&g);
        return 0;
    }
    /* The kernels want C rows contiguous; for column-major C compute
       C^T = B^T A^T instead, which is the same memory. */
    if (csc != 1 && rsc == 1) {
        g.M = N; g.N = M;
        g.A = B; g.at = b_type; g.rsa = csb; g.csa = rsb;
        g.B = A; g.bt = a_type; g.rsb = csa; g.csb = rsa;
        g.rsc = csc; g.csc = rsc;
    }
#if GPUML__GEMM_AVX2
    simd = !(opts & GPUML__GEMM_OPT_NO_SIMD) && gpuml__cpu_has_avx2_fma();
#else
    (void)gpuml__cpu_has_avx2_fma; /* keep the core's static helper "used" */
#endif
    mnk = g.M * g.N * g.K; /* fits: each dim is far below 2^21 in practice */
    if ((opts & GPUML__GEMM_OPT_FORCE_SMALL) ||
        (!(opts & GPUML__GEMM_OPT_NO_SMALL) && mnk <= GPUML__GEMM_SMALL_MNK)) {
#if GPUML__GEMM_AVX2
        if (simd && g.at == GPUML__GEMM_F32 && g.bt == GPUML__GEMM_F32 && g.csb == 1) {
            gpuml__gemm_small_avx2(&g);
            return 0;
        }
#endif
        gpuml__gemm_small_ref(&g);
        return 0;
    }

    job.g = g;
    job.simd = simd;
    job.ukr = gpuml__gemm_ukr_ref;
#if GPUML__GEMM_AVX2
    if (simd) job.ukr = gpuml__gemm_ukr_avx2;
#endif
    /* Thread count: enough work per thread, and at least a register tile each. */
    nt = pool ? gpuml__pool_size(pool) : 1;
    nt = gpuml__gemm_min(nt, mnk / GPUML__GEMM_THREAD_MNK);
    nt = gpuml__gemm_min(nt, gpuml__gemm_ceil(g.M, GPUML__GEMM_MR) * gpuml__gemm_ceil(g.N, GPUML__GEMM_NR));
    if (nt < 1) nt = 1;
    /* Grid tm x tn = nt minimising per-thread packing (M/tm + N/tn)*K;
       ties go to splitting N, whose NR = 16 divides typical sizes evenly. */
    job.tm = 1; job.tn = nt;
    for (t = 1; t <= nt; ++t) {
        int64_t tm = t, tn = nt / t, cost;
        if (tm * tn != nt) continue;
        if (gpuml__gemm_ceil(g.M, GPUML__GEMM_MR) < tm || gpuml__gemm_ceil(g.N, GPUML__GEMM_NR) < tn) continue;
        cost = gpuml__gemm_ceil(g.M, tm) + gpuml__gemm_ceil(g.N, tn);
        if (best_cost < 0 || cost < best_cost) { best_cost = cost; job.tm = tm; job.tn = tn; }
    }
    nt = job.tm * job.tn;
    /* Size the buffers for the largest tile actually produced. */
    for (t = 0; t < job.tm; ++t) {
        int64_t h = gpuml__gemm_split(g.M, job.tm, t + 1, GPUML__GEMM_MR) -
                    gpuml__gemm_split(g.M, job.tm, t, GPUML__GEMM_MR);
        if (h > max_m) max_m = h;
    }
    for (t = 0; t < job.tn; ++t) {
        int64_t w = gpuml__gemm_split(g.N, job.tn, t + 1, GPUML__GEMM_NR) -
                    gpuml__gemm_split(g.N, job.tn, t, GPUML__GEMM_NR);
        if (w > max_n) max_n = w;
    }
    {
        int64_t kb = gpuml__gemm_ceil(g.K, gpuml__gemm_ceil(g.K, GPUML__GEMM_KC));
        /* upper bounds of the per-tile balanced block sizes (which are not
           monotonic in the tile size, so don't recompute them here) */
        int64_t mb = gpuml__gemm_roundup(gpuml__gemm_min(max_m, GPUML__GEMM_MC), GPUML__GEMM_MR);
        int64_t nb = gpuml__gemm_roundup(gpuml__gemm_min(max_n, GPUML__GEMM_NC), GPUML__GEMM_NR);
        /* round each part to 16 floats so every panel stays 64-byte aligned */
        job.a_floats = gpuml__gemm_roundup(mb * kb, 16);
        job.ws_task = job.a_floats + gpuml__gemm_roundup(nb * kb, 16);
    }
    job.ws = (float *)gpuml__aligned_alloc((size_t)(nt * job.ws_task) * sizeof(float));
    if (!job.ws) return -1;
    if (nt > 1)
        gpuml__parallel_for(pool, nt, 1, gpuml__gemm_task, &job);
    else
        gpuml__gemm_task(&job, 0, 1, 0);
    gpuml__aligned_free(job.ws);
    return 0;
}

static int gpuml__cpu_gemm(gpuml__pool *pool, int64_t M, int64_t N, int64_t K, float alpha,
                           const void *A, int a_type, int64_t rsa, int64_t csa,
                           const void *B, int b_type, int64_t rsb, int64_t csb,
                           float beta, float *C, int64_t rsc, int64_t csc)
{
    return gpuml__cpu_gemm_opt(pool, M, N, K, alpha, A, a_type, rsa, csa, B, b_type, rsb, csb,
                               beta, C, rsc, csc, 0);
}
