/* Standalone correctness test + benchmark for the CPU GEMM of gpuml.h (the region between
 * "BEGIN cpu_gemm" and "END cpu_gemm", extracted to build/cpu_gemm.inc.h by bench/run_cpu_gemm.sh).
 *
 * Provides stand-ins for the gpuml core functions the fragment relies on
 * (pthread pool, CPU check, f16/bf16 conversion, aligned alloc), checks
 * gpuml__cpu_gemm against a float64 reference, then benchmarks it against
 * OpenBLAS's cblas_sgemm (loaded with dlopen, so no cblas.h is needed and the
 * OpenBLAS core type can be chosen before the library initialises).
 *
 * Build (see NOTES_cpu_gemm.md):
 *   bench/run_cpu_gemm.sh [args]   (extracts the GEMM from gpuml.h, builds, runs)
 * Run:
 *   ./gemm_bench               tests + benchmark (OpenBLAS forced to its AVX2 "Haswell" kernels)
 *   ./gemm_bench --test        tests only
 *   ./gemm_bench --bench       benchmark only
 *   ./gemm_bench --coretype=X  OpenBLAS core (Haswell, Zen, SkylakeX, or "auto" for its own detection)
 *   ./gemm_bench --threads=N   thread count of the multi-threaded columns (default: online CPUs)
 *   ./gemm_bench --rounds=N    alternating measurement rounds per cell (default 2), best kept
 *   ./gemm_bench --kernel=K    gpuml kernel timed: best (default: AVX-512 where the CPU has it), avx2, portable
 *   (--threads=1 skips the multi-threaded columns)
 *   ./gemm_bench --cputime     time 1T cells by thread CPU time (for tuning on a shared, busy machine)
 *   ./gemm_bench --sizes=N,... square sizes to run (up to 8; default 256,512,1024,2048)
 * With -DGPUML_BENCH_LINK_OPENBLAS the bench calls OpenBLAS linked in (e.g. a
 * static build for a machine without it); then the core type comes from the
 * OPENBLAS_CORETYPE environment variable only.
 */
#if !defined(__cplusplus) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <pthread.h>
#include <dlfcn.h>
#include <unistd.h>

/* ===================== stand-ins for the gpuml core ===================== */

typedef struct gpuml__pool gpuml__pool;
typedef void (*gpuml__task_fn)(void *arg, int64_t begin, int64_t end, int thread_index);

struct gpuml__pool {
    int nthreads;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* workers: new job */
    pthread_cond_t done_cv; /* caller: all workers finished */
    unsigned gen;     /* bumped per parallel_for; workers wait for a change */
    int stop;
    int pending;      /* workers still running the current job */
    gpuml__task_fn fn;
    void *arg;
    int64_t n, nchunks;
};

#ifndef STANDIN_SPINS
#define STANDIN_SPINS 2000 /* pause iterations before blocking (~0.1 ms) */
#endif

static void standin_relax(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_ia32_pause();
#endif
}

static void standin_run_chunk(gpuml__pool *p, int t)
{
    if (t < p->nchunks) {
        int64_t b = p->n * t / p->nchunks, e = p->n * (t + 1) / p->nchunks;
        if (e > b) p->fn(p->arg, b, e, t);
    }
}

typedef struct { gpuml__pool *p; int t; } standin_worker_arg;

static void *standin_worker(void *varg)
{
    standin_worker_arg *wa = (standin_worker_arg *)varg;
    gpuml__pool *p = wa->p;
    int t = wa->t;
    unsigned seen = 0;
    free(wa);
    for (;;) {
        unsigned g;
        long spins = 0;
        /* Spin only briefly, then sleep: on an oversubscribed or time-sliced
           (virtual) CPU a spinning waiter holds the core the busy thread needs. */
        while ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) == seen && spins < STANDIN_SPINS) {
            standin_relax();
            ++spins;
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) == seen)
                pthread_cond_wait(&p->cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) break;
        standin_run_chunk(p, t);
        if (__atomic_sub_fetch(&p->pending, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

static gpuml__pool *standin_pool_create(int nthreads)
{
    gpuml__pool *p = (gpuml__pool *)calloc(1, sizeof *p);
    int t;
    p->nthreads = nthreads < 1 ? 1 : nthreads;
    p->th = (pthread_t *)calloc((size_t)p->nthreads, sizeof(pthread_t));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    for (t = 1; t < p->nthreads; ++t) {
        standin_worker_arg *wa = (standin_worker_arg *)malloc(sizeof *wa);
        wa->p = p;
        wa->t = t;
        pthread_create(&p->th[t], NULL, standin_worker, wa);
    }
    return p;
}

static void standin_pool_destroy(gpuml__pool *p)
{
    int t;
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&p->gen, 1u, __ATOMIC_ACQ_REL);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (t = 1; t < p->nthreads; ++t) pthread_join(p->th[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->th);
    free(p);
}

static int gpuml__pool_size(gpuml__pool *pool) { return pool ? pool->nthreads : 1; }

static void gpuml__parallel_for(gpuml__pool *p, int64_t n, int64_t grain, gpuml__task_fn fn, void *arg)
{
    int64_t nchunks;
    long spins = 0;
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    nchunks = n / grain;
    if (nchunks > p->nthreads) nchunks = p->nthreads;
    if (nchunks <= 1 || p->nthreads == 1) {
        fn(arg, 0, n, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->nchunks = nchunks;
    __atomic_store_n(&p->pending, p->nthreads - 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&p->mu);
    __atomic_fetch_add(&p->gen, 1u, __ATOMIC_ACQ_REL);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    standin_run_chunk(p, 0);
    while (__atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) != 0 && spins < STANDIN_SPINS) {
        standin_relax();
        ++spins;
    }
    if (__atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) != 0) {
        pthread_mutex_lock(&p->mu);
        while (__atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) != 0)
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

static int standin_force_no_avx2 = 0;
static int gpuml__cpu_has_avx2_fma(void)
{
    if (standin_force_no_avx2) return 0;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static float standin_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float gpuml__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) { /* zero / subnormal: m * 2^-24 */
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (e == 31) return standin_bits_to_f32(sign | 0x7f800000u | (m << 13));
    return standin_bits_to_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static float gpuml__bf16_to_f32(uint16_t h) { return standin_bits_to_f32((uint32_t)h << 16); }
/* the core's F16C helpers: not stood in (the packing's inline conversions run here; test_ops
   cpu_f16_f16c_bits checks the F16C ones bit for bit) */
static int gpuml__cpu_has_f16c(void) { return 0; }
static int64_t gpuml__f16_ld_f16c(const char *p, int64_t n, float *buf) { (void)p; (void)n; (void)buf; return 0; }

static int standin_alloc_fail = 0;   /* fail the next allocation (tests) */
static long standin_live_allocs = 0; /* leak check */
static void *gpuml__aligned_alloc(size_t nbytes)
{
    void *p = NULL;
    if (standin_alloc_fail) { standin_alloc_fail = 0; return NULL; }
    if (posix_memalign(&p, 64, nbytes ? nbytes : 64) != 0) return NULL;
    ++standin_live_allocs;
    return p;
}
static void gpuml__aligned_free(void *p)
{
    if (p) --standin_live_allocs;
    free(p);
}

/* ============================ the fragment ============================= */
#include "../build/cpu_gemm.inc.h"

/* ============================= test helpers ============================ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static float rng_f(void) { return (float)((double)rng_u32() / 4294967296.0 * 2.0 - 1.0); }
static int rng_n(int n) { return (int)(rng_u32() % (uint32_t)n); }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --cputime: time the single-threaded cells with this thread's CPU time,
   which leaves out the time that other processes on a busy machine hold
   the core (wall-clock otherwise). */
static int bench_cputime = 0;
static double bench_clock(void)
{
    struct timespec ts;
    if (!bench_cputime) return now_s();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A strided rows x cols operand: element (i,j) at base[i*rs + j*cs]. */
typedef struct {
    void *buf;      /* allocation */
    void *base;     /* element (0,0) */
    int type;
    int64_t rs, cs, rows, cols, span;
    int layout;
} operand;

static const char *layout_names[] = {"row", "row+pad", "col+pad", "strided", "neg-row", "col"};
#define N_LAYOUTS 6

static size_t type_size(int t) { return t == GPUML__GEMM_F32 ? 4 : 2; }

static void operand_make(operand *o, int64_t rows, int64_t cols, int type, int layout)
{
    int64_t off = 0, es = (int64_t)type_size(type), idx;
    o->rows = rows; o->cols = cols; o->type = type; o->layout = layout;
    switch (layout) {
    default:
    case 0: o->rs = cols; o->cs = 1; break;
    case 1: o->rs = cols + 3; o->cs = 1; break;
    case 2: o->rs = 1; o->cs = rows + 2; break;
    case 3: o->rs = 2 * cols + 3; o->cs = 2; break;
    case 4: o->rs = -(cols + 1); o->cs = 1; break;
    case 5: o->rs = 1; o->cs = rows; break;
    }
    if (o->rs < 0) off = (rows - 1) * -o->rs;
    o->span = (rows - 1) * (o->rs < 0 ? -o->rs : o->rs) + (cols - 1) * o->cs + 1;
    o->buf = malloc((size_t)(o->span * es));
    o->base = (char *)o->buf + off * es;
    /* fill everything (gaps too) with random data of the element type */
    for (idx = 0; idx < o->span; ++idx) {
        if (type == GPUML__GEMM_F32) {
            ((float *)o->buf)[idx] = rng_f();
        } else if (type == GPUML__GEMM_F16) {
            /* sign, exponent 12..16 (|x| in [2^-3, 4)), random mantissa */
            uint16_t h = (uint16_t)((rng_u32() & 0x8000u) | ((12u + (uint32_t)rng_n(5)) << 10) | (rng_u32() & 0x3ffu));
            ((uint16_t *)o->buf)[idx] = h;
        } else {
            float f = rng_f();
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)o->buf)[idx] = (uint16_t)(u >> 16);
        }
    }
}

static double operand_get(const operand *o, int64_t i, int64_t j)
{
    int64_t idx = i * o->rs + j * o->cs;
    if (o->type == GPUML__GEMM_F32) return ((const float *)o->base)[idx];
    if (o->type == GPUML__GEMM_F16) return gpuml__f16_to_f32(((const uint16_t *)o->base)[idx]);
    return gpuml__bf16_to_f32(((const uint16_t *)o->base)[idx]);
}

static const char *type_names[] = {"f32", "f16", "bf16"};

static int n_cases = 0, n_fail = 0;
static double worst_rel = 0.0;

/* Caller-gathered operands (gpuml__cpu_gemm_ex's ga / gb, the implicit GEMM of the convolution):
   run_case passes A (bit 1) and/or B (bit 2) as gathers over the same operand, through
   gpuml__gemm_pack_ptrs where it is f32 with unit k stride, else element by element. */
static int case_gather = 0;
typedef struct gather_arg { const operand *o; int is_b; } gather_arg;
static void test_gather(const void *arg, float *dst, int64_t W, int64_t i0, int64_t width, int64_t k0,
                        int64_t kc, int simd)
{
    const gather_arg *g = (const gather_arg *)arg;
    const operand *o = g->o;
    int64_t sw = g->is_b ? o->cs : o->rs, sk = g->is_b ? o->rs : o->cs, i, k;
    if (o->type == GPUML__GEMM_F32 && sk == 1 && W <= 32) {
        const float *rows[32];
        float *zero = (float *)calloc((size_t)kc + 1, sizeof(float));
        for (i = 0; i < W; ++i) rows[i] = i < width ? (const float *)o->base + (i0 + i) * sw + k0 : zero;
        gpuml__gemm_pack_ptrs(dst, W, kc, rows, simd);
        free(zero);
        return;
    }
    for (k = 0; k < kc; ++k)
        for (i = 0; i < W; ++i)
            dst[k * W + i] = i >= width ? 0.0f : (float)(g->is_b ? operand_get(o, k0 + k, i0 + i) : operand_get(o, i0 + i, k0 + k));
}
/* the unpacked-kernel form of an A gather: 12 rows as segments of 1-9 k (varying with k0, i0,
   so segment ends fall at every unroll phase), or -1 (pack instead) where A is not f32 with unit
   k stride or the segments would not fit */
static int64_t test_rows(const void *arg, const float **ptrs, int64_t *lens, int64_t maxseg, int64_t i0,
                         int64_t k0, int64_t kc)
{
    const gather_arg *g = (const gather_arg *)arg;
    const operand *o = g->o;
    int64_t k = 0, n = 0, r;
    if (o->type != GPUML__GEMM_F32 || o->cs != 1) return -1;
    while (k < kc) {
        int64_t len = 1 + (k0 + k + 3 * i0 + 5 * n) % 9;
        if (len > kc - k) len = kc - k;
        if (n == maxseg) return -1;
        for (r = 0; r < 12; ++r) ptrs[12 * n + r] = (const float *)o->base + (i0 + r) * o->rs + k0 + k;
        lens[n++] = len;
        k += len;
    }
    return n;
}

/* One test case; returns 1 on success. */
static int run_case(gpuml__pool *pool, int64_t M, int64_t N, int64_t K, int at, int bt,
                    int la, int lb, int lc, float alpha, float beta, int opts)
{
    operand A, B, C;
    float *c0;
    unsigned char *is_elem;
    int64_t i, j, k, idx;
    int ok = 1, rc;
    double max_rel = 0.0, tol = 1e-5 * sqrt((double)(K > 1 ? K : 1));
    const float sentinel = 12345.0f;
    int64_t mm = M > 0 ? M : 1, nn = N > 0 ? N : 1, kk = K > 0 ? K : 1;

    operand_make(&A, mm, kk, at, la);
    operand_make(&B, kk, nn, bt, lb);
    operand_make(&C, mm, nn, GPUML__GEMM_F32, lc);
    is_elem = (unsigned char *)calloc((size_t)C.span, 1);
    c0 = (float *)malloc((size_t)C.span * sizeof(float));
    for (idx = 0; idx < C.span; ++idx) ((float *)C.buf)[idx] = sentinel;
    for (i = 0; i < mm; ++i)
        for (j = 0; j < nn; ++j) {
            int64_t e = (int64_t)((float *)C.base - (float *)C.buf) + i * C.rs + j * C.cs;
            is_elem[e] = 1;
            /* beta == 0: C must not be read, so poison it */
            ((float *)C.buf)[e] = beta == 0.0f ? (float)NAN : rng_f();
        }
    memcpy(c0, C.buf, (size_t)C.span * sizeof(float));

    ++n_cases;
    if (case_gather) {
        gather_arg xa, xb;
        gpuml__gemm_gather ga, gb;
        xa.o = &A; xa.is_b = 0; xb.o = &B; xb.is_b = 1;
        ga.fn = gb.fn = test_gather; ga.arg = &xa; gb.arg = &xb;
        ga.rows = test_rows; gb.rows = NULL;
        rc = gpuml__cpu_gemm_ex(pool, M, N, K, alpha, case_gather & 1 ? NULL : A.base, at, A.rs, A.cs,
                                case_gather & 2 ? NULL : B.base, bt, B.rs, B.cs, beta, (float *)C.base, C.rs, C.cs,
                                opts, case_gather & 1 ? &ga : NULL, case_gather & 2 ? &gb : NULL);
    } else {
        rc = gpuml__cpu_gemm_opt(pool, M, N, K, alpha, A.base, at, A.rs, A.cs, B.base, bt, B.rs, B.cs,
                                 beta, (float *)C.base, C.rs, C.cs, opts);
    }
    if (rc != 0) ok = 0;
    for (idx = 0; idx < C.span && ok; ++idx)
        if (!is_elem[idx] && ((float *)C.buf)[idx] != sentinel) ok = 0; /* wrote outside C */
    if (M == 0 || N == 0) {
        if (memcmp(c0, C.buf, (size_t)C.span * sizeof(float)) != 0) ok = 0;
    } else {
        for (i = 0; i < M && ok; ++i)
            for (j = 0; j < N; ++j) {
                int64_t e = (int64_t)((float *)C.base - (float *)C.buf) + i * C.rs + j * C.cs;
                double s = 0.0, sa = 0.0, ref, mag, got = ((float *)C.buf)[e], err;
                for (k = 0; k < K; ++k) {
                    double p = operand_get(&A, i, k) * operand_get(&B, k, j);
                    s += p;
                    sa += fabs(p);
                }
                ref = (double)alpha * s;
                mag = fabs((double)alpha) * sa;
                if (beta != 0.0f) {
                    ref += (double)beta * c0[e];
                    mag += fabs((double)beta * c0[e]);
                }
                err = fabs(got - ref);
                if (!(err <= tol * mag + 1e-30)) { /* also catches NaN */
                    if (ok)
                        fprintf(stderr, "  mismatch at (%lld,%lld): got %.9g ref %.9g (mag %.3g)\n",
                                (long long)i, (long long)j, got, ref, mag);
                    ok = 0;
                    break;
                }
                if (mag > 0 && err / mag > max_rel) max_rel = err / mag;
            }
    }
    if (max_rel / tol > worst_rel) worst_rel = max_rel / tol;
    if (!ok) {
        ++n_fail;
        fprintf(stderr, "FAIL M=%lld N=%lld K=%lld A=%s/%s B=%s/%s C=%s alpha=%g beta=%g opts=%d threads=%d gather=%d rc=%d\n",
                (long long)M, (long long)N, (long long)K, type_names[at], layout_names[la],
                type_names[bt], layout_names[lb], layout_names[lc], (double)alpha, (double)beta,
                opts, gpuml__pool_size(pool), case_gather, rc);
    }
    free(A.buf); free(B.buf); free(C.buf); free(c0); free(is_elem);
    return ok;
}

static float pick_alpha(void)
{
    static const float v[] = {1.0f, 1.0f, -0.75f, 2.5f};
    return v[rng_n(4)];
}
static float pick_beta(void)
{
    static const float v[] = {0.0f, 0.0f, 1.0f, -1.5f, 0.25f};
    return v[rng_n(5)];
}

static int run_tests(void)
{
    static const int64_t small_dims[] = {1, 2, 3, 5, 7, 17, 31, 65};
    static const int64_t all_dims[] = {1, 2, 3, 5, 7, 17, 31, 65, 127, 255, 257, 513};
    /* every path: the best kernel (AVX-512 where the CPU has it), AVX2 forced,
       portable, each packed and unpacked */
    static const int opt_cycle[] = {0, GPUML__GEMM_OPT_NO_SMALL, GPUML__GEMM_OPT_FORCE_SMALL,
                                    GPUML__GEMM_OPT_NO_AVX512 | GPUML__GEMM_OPT_NO_SMALL,
                                    GPUML__GEMM_OPT_NO_SIMD | GPUML__GEMM_OPT_NO_SMALL,
                                    GPUML__GEMM_OPT_NO_SIMD | GPUML__GEMM_OPT_FORCE_SMALL,
                                    GPUML__GEMM_OPT_NO_AVX512 | GPUML__GEMM_OPT_FORCE_SMALL};
    /* the three packed kernels */
    static const int kernel_opts[] = {GPUML__GEMM_OPT_NO_SMALL,
                                      GPUML__GEMM_OPT_NO_AVX512 | GPUML__GEMM_OPT_NO_SMALL,
                                      GPUML__GEMM_OPT_NO_SIMD | GPUML__GEMM_OPT_NO_SMALL};
    gpuml__pool *pools[3];
    int a, b, c, i, case_no = 0;
    double t0 = now_s();

    pools[0] = standin_pool_create(1);
    pools[1] = standin_pool_create(2);
    pools[2] = standin_pool_create(3); /* oversubscribed, odd thread count */

    /* 1. every small shape, each path, random layouts/types/scalars */
    for (a = 0; a < 8; ++a)
        for (b = 0; b < 8; ++b)
            for (c = 0; c < 8; ++c, ++case_no) {
                int r = rng_n(10);
                int at = r < 6 ? 0 : r < 8 ? 1 : 2, bt = rng_n(10) < 6 ? 0 : 1 + rng_n(2);
                run_case(pools[case_no % 3], small_dims[a], small_dims[b], small_dims[c], at, bt,
                         rng_n(N_LAYOUTS), rng_n(N_LAYOUTS), rng_n(N_LAYOUTS), pick_alpha(),
                         pick_beta(), opt_cycle[case_no % 7]);
            }
    printf("  small-shape sweep: %d cases\n", n_cases);

    /* 2. random shapes from the full list (multiple MC / KC blocks, edges) */
    for (i = 0; i < 240; ++i, ++case_no) {
        int r = rng_n(10);
        int at = r < 6 ? 0 : r < 8 ? 1 : 2, bt = rng_n(10) < 6 ? 0 : 1 + rng_n(2);
        int opts = i % 3 == 0 ? 0 : kernel_opts[i % 3];
        run_case(pools[i % 3], all_dims[rng_n(12)], all_dims[rng_n(12)], all_dims[rng_n(12)], at, bt,
                 rng_n(N_LAYOUTS), rng_n(N_LAYOUTS), rng_n(N_LAYOUTS), pick_alpha(), pick_beta(), opts);
    }
    printf("  random shapes: %d cases total\n", n_cases);

    /* 3. every layout combination at a blocked size, f32, both thread counts,
          each packed kernel (sizes with edges in both MR and NR of each) */
    for (i = 0; i < 3; ++i)
        for (a = 0; a < N_LAYOUTS; ++a)
            for (b = 0; b < N_LAYOUTS; ++b)
                for (c = 0; c < N_LAYOUTS; ++c)
                    run_case(pools[(a + b + c) % 2 + 1], 67, 45, 300, 0, 0, a, b, c, pick_alpha(), pick_beta(),
                             kernel_opts[i]);
    printf("  layout cross product: %d cases total\n", n_cases);
    /* 3b. each packed kernel on full tiles, edge tiles and blocked K, all types */
    for (i = 0; i < 3; ++i)
        for (a = 0; a < 3; ++a) {
            static const int64_t mdims[] = {28, 29, 84, 90}, ndims[] = {32, 33, 64, 95};
            run_case(pools[a % 3], mdims[(a + i) % 4], ndims[(a + 2 * i) % 4], 517, a, (a + i) % 3,
                     (a + i) % 2, (a + 2 * i) % 3, 0, pick_alpha(), pick_beta(), kernel_opts[i]);
        }
    printf("  kernel tiles: %d cases total\n", n_cases);
    /* 3c. gathered A and/or B: every layout, row- and column-major C (the swap hands the
          gathers over), each packed kernel, edges, several K blocks, 1-3 threads */
    for (case_gather = 1; case_gather <= 3; ++case_gather)
        for (i = 0; i < 3; ++i)
            for (a = 0; a < N_LAYOUTS; ++a)
                for (b = 0; b < N_LAYOUTS; ++b) {
                    static const int64_t gd[][3] = {{67, 45, 300}, {13, 70, 29}, {29, 33, 517}, {50, 7, 5}};
                    const int64_t *d = gd[(a + b + i) % 4];
                    run_case(pools[(a + b) % 3], d[0], d[1], d[2], (a + i) % 3 == 2 ? 1 : 0, 0, a, b, (a + b) % 2 ? 5 : 0,
                             pick_alpha(), pick_beta(), kernel_opts[i]);
                }
    case_gather = 0;
    printf("  gathered operands: %d cases total\n", n_cases);

    /* 3d. the unpacked path (AVX-512 where the CPU has it, else AVX2 or portable) forced on
          larger shapes: 12-row tiles and their 4/8/12-row edges, 32-column strips and their
          masked 32/16/8-wide edges, 1-3 threads over rows and column strips, every layout */
    for (i = 0; i < 6; ++i)
        for (a = 0; a < N_LAYOUTS; ++a)
            for (b = 0; b < N_LAYOUTS; ++b) {
                static const int64_t ud[][3] = {{131, 77, 129}, {2, 1000, 70}, {25, 33, 300}, {300, 49, 17},
                                                {20, 40, 50}, {23, 7, 64}};
                run_case(pools[(a + b + i) % 3], ud[i][0], ud[i][1], ud[i][2], 0, 0, a, b, (a + b) % 2 ? 5 : 0,
                         pick_alpha(), pick_beta(), GPUML__GEMM_OPT_FORCE_SMALL);
            }
    printf("  unpacked path: %d cases total\n", n_cases);

    /* 4. specific corners */
    run_case(pools[1], 13, 4500, 40, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0);        /* N > NC: jc loop */
    run_case(pools[1], 300, 40, 13, 0, 0, 0, 0, 5, 1.0f, 0.5f, 0);         /* col-major C swap + threads */
    run_case(pools[1], 600, 520, 700, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0);       /* big, 2 threads */
    run_case(pools[2], 513, 257, 1031, 1, 2, 1, 2, 1, -0.5f, 2.0f, 0);     /* halves, 3 threads, K > 4*KC */
    run_case(pools[1], 2, 3000, 300, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0);        /* thin M (unpacked on AVX-512) */
    run_case(pools[1], 2, 3000, 300, 0, 0, 0, 0, 0, 1.0f, 0.0f, GPUML__GEMM_OPT_NO_SMALL); /* thin M: threads split N */
    run_case(pools[2], 40, 3001, 200, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0);       /* unpacked on AVX-512, 3 threads */
    run_case(pools[1], 3000, 2, 300, 0, 0, 0, 2, 0, 1.0f, 1.0f, 0);        /* thin N: threads split M */
    run_case(pools[1], 600, 520, 700, 0, 0, 0, 0, 0, 1.0f, 0.0f, GPUML__GEMM_OPT_NO_AVX512); /* big, AVX2 */
    run_case(pools[2], 200, 3000, 40, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0);       /* 3 threads */
    run_case(pools[1], 14, 32, 64, 0, 0, 0, 0, 0, 1.0f, 0.5f, GPUML__GEMM_OPT_NO_SMALL); /* one 14x32 tile */
    run_case(pools[0], 36, 48, 100, 0, 0, 0, 0, 0, 1.0f, 0.5f, GPUML__GEMM_OPT_NO_SMALL); /* N edge of 16 */
    run_case(pools[1], 168, 80, 390, 0, 0, 0, 0, 1, -1.0f, 0.0f, 0);      /* N edge of 16, 2 K blocks */
    run_case(pools[0], 28, 40, 33, 0, 0, 0, 0, 0, 2.0f, 1.0f, GPUML__GEMM_OPT_NO_SMALL); /* M edge 4, N edge 8 */
    run_case(pools[0], 7, 5, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0);             /* K = 0, beta = 0 -> zeros */
    run_case(pools[0], 7, 5, 0, 0, 0, 0, 0, 3, 1.0f, 2.0f, 0);             /* K = 0 -> beta*C */
    run_case(pools[0], 7, 5, 9, 0, 0, 0, 0, 0, 0.0f, 0.5f, 0);             /* alpha = 0 */
    run_case(pools[0], 0, 5, 9, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0);             /* M = 0: no-op */
    run_case(pools[0], 5, 0, 9, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0);             /* N = 0: no-op */
    run_case(pools[0], 1, 1, 1, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0);
    standin_force_no_avx2 = 1;                                             /* CPU without AVX2 */
    run_case(pools[1], 129, 70, 260, 0, 1, 0, 2, 0, 1.0f, 0.0f, 0);
    standin_force_no_avx2 = 0;
    printf("  corner cases: %d cases total\n", n_cases);

    /* 5. failed workspace allocation: -1 and C untouched */
    {
        int64_t n = 200, idx;
        float *A = (float *)malloc(sizeof(float) * (size_t)(n * n));
        float *B = (float *)malloc(sizeof(float) * (size_t)(n * n));
        float *C = (float *)malloc(sizeof(float) * (size_t)(n * n));
        float *C0 = (float *)malloc(sizeof(float) * (size_t)(n * n));
        int rc;
        for (idx = 0; idx < n * n; ++idx) { A[idx] = rng_f(); B[idx] = rng_f(); C[idx] = C0[idx] = rng_f(); }
        standin_alloc_fail = 1;
        /* the packed path (the unpacked one allocates nothing) */
        rc = gpuml__cpu_gemm_opt(pools[1], n, n, n, 1.0f, A, 0, n, 1, B, 0, n, 1, 0.0f, C, n, 1, GPUML__GEMM_OPT_NO_SMALL);
        (void)gpuml__cpu_gemm; /* the plain entry: the benchmark's */
        ++n_cases;
        if (rc != -1 || memcmp(C, C0, sizeof(float) * (size_t)(n * n)) != 0) {
            ++n_fail;
            fprintf(stderr, "FAIL alloc-failure case: rc=%d\n", rc);
        }
        free(A); free(B); free(C); free(C0);
    }
    if (standin_live_allocs != 0) {
        ++n_fail;
        fprintf(stderr, "FAIL workspace leak: %ld live allocations\n", standin_live_allocs);
    }

    for (i = 0; i < 3; ++i) standin_pool_destroy(pools[i]);
    printf("correctness: %d cases, worst error = %.3f of tolerance (1e-5*sqrt(K) relative to |alpha|*sum|a*b| + |beta*c|), %.1f s\n",
           n_cases, worst_rel, now_s() - t0);
    printf("%d passed, %d failed\n", n_cases - n_fail, n_fail);
    return n_fail == 0;
}

/* ============================== benchmark ============================== */

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta,
                         float *c, int ldc);
typedef void (*set_threads_fn)(int);
typedef char *(*corename_fn)(void);

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* best GFLOP/s over repetitions (>= 3 reps and >= min_s seconds) */
static int bench_opts = 0; /* --kernel=: which gpuml kernel is timed */
static int bench_sizes[8] = {256, 512, 1024, 2048}, n_sizes = 4; /* --sizes= */
static double bench_mine(gpuml__pool *pool, int n, const float *A, const float *B, float *C, double min_s)
{
    double best = 1e30, start = now_s();
    int reps = 0;
    gpuml__cpu_gemm_opt(pool, n, n, n, 1.0f, A, 0, n, 1, B, 0, n, 1, 0.0f, C, n, 1, bench_opts); /* warm-up */
    while (reps < 3 || now_s() - start < min_s) {
        double t = bench_clock();
        gpuml__cpu_gemm_opt(pool, n, n, n, 1.0f, A, 0, n, 1, B, 0, n, 1, 0.0f, C, n, 1, bench_opts);
        t = bench_clock() - t;
        if (t < best) best = t;
        ++reps;
    }
    return 2.0 * n * (double)n * n / best * 1e-9;
}

static double bench_blas(sgemm_fn sgemm, int n, const float *A, const float *B, float *C, double min_s)
{
    double best = 1e30, start = now_s();
    int reps = 0;
    sgemm(101, 111, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
    while (reps < 3 || now_s() - start < min_s) {
        double t = bench_clock();
        sgemm(101, 111, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        t = bench_clock() - t;
        if (t < best) best = t;
        ++reps;
    }
    return 2.0 * n * (double)n * n / best * 1e-9;
}

/* the packed kernel that the given options select on this CPU */
static const char *kernel_name(int opts)
{
    if (!GPUML__GEMM_AVX2 || !gpuml__cpu_has_avx2_fma() || (opts & GPUML__GEMM_OPT_NO_SIMD))
        return "portable 6x16";
#if GPUML__GEMM_AVX2
    if (!(opts & GPUML__GEMM_OPT_NO_AVX512) && gpuml__gemm_has_avx512())
        return GPUML__GEMM_MR512 == 14 ? "AVX-512 14x32" : "AVX-512 12x32";
#endif
    return "AVX2 6x16";
}

#ifdef GPUML_BENCH_LINK_OPENBLAS
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
void openblas_set_num_threads(int n);
char *openblas_get_corename(void);
#endif

static int run_bench(const char *coretype, double min_s, int nthreads, int rounds, int use_cputime)
{
    const int *sizes = bench_sizes;
    void *lib, *sym;
    sgemm_fn sgemm = NULL;
    set_threads_fn set_threads = NULL;
    corename_fn corename = NULL;
    gpuml__pool *pool1, *poolN;
    int s, round;
    double res[8][4];

#ifdef GPUML_BENCH_LINK_OPENBLAS
    (void)lib; (void)sym; (void)coretype;
    sgemm = cblas_sgemm;
    set_threads = openblas_set_num_threads;
    corename = openblas_get_corename;
#else
    if (strcmp(coretype, "auto") != 0) setenv("OPENBLAS_CORETYPE", coretype, 1);
    lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load libopenblas.so.0 (apt-get install -y libopenblas-dev): %s\n", dlerror());
        return 0;
    }
    sym = dlsym(lib, "cblas_sgemm"); memcpy(&sgemm, &sym, sizeof sym);
    sym = dlsym(lib, "openblas_set_num_threads"); memcpy(&set_threads, &sym, sizeof sym);
    sym = dlsym(lib, "openblas_get_corename"); memcpy(&corename, &sym, sizeof sym);
    if (!sgemm || !set_threads) { fprintf(stderr, "missing OpenBLAS symbols\n"); return 0; }
#endif
    printf("\nbenchmark: C = A*B, f32 row-major, best of %d rounds x (>= 3 reps, >= %.2f s); gpuml kernel %s; OpenBLAS core %s; multi-threaded = %d threads; 1T timed by %s\n",
           rounds, min_s, kernel_name(bench_opts), corename ? corename() : "?", nthreads,
           use_cputime ? "thread CPU time" : "wall clock");
    pool1 = standin_pool_create(1);
    poolN = standin_pool_create(nthreads);
    for (s = 0; s < n_sizes; ++s) {
        int n = sizes[s];
        size_t nn = (size_t)n * (size_t)n, i;
        float *A = (float *)gpuml__aligned_alloc(nn * 4), *B = (float *)gpuml__aligned_alloc(nn * 4);
        float *C = (float *)gpuml__aligned_alloc(nn * 4), *C2 = (float *)gpuml__aligned_alloc(nn * 4);
        double maxdiff = 0.0;
        for (i = 0; i < nn; ++i) { A[i] = rng_f(); B[i] = rng_f(); }
        res[s][0] = res[s][1] = res[s][2] = res[s][3] = 0.0;
        /* two alternating rounds so that a noisy phase hits both sides */
        for (round = 0; round < rounds; ++round) {
            double r;
            set_threads(1);
            bench_cputime = use_cputime;
            r = bench_mine(pool1, n, A, B, C, min_s); if (r > res[s][0]) res[s][0] = r;
            r = bench_blas(sgemm, n, A, B, C2, min_s); if (r > res[s][1]) res[s][1] = r;
            if (nthreads == 1) continue; /* --threads=1: single-threaded columns only */
            bench_cputime = 0; /* a process's CPU time would add up its threads */
            set_threads(nthreads);
            sleep_s(0.3); /* let idle spinning threads of either side go to sleep */
            r = bench_mine(poolN, n, A, B, C, min_s); if (r > res[s][2]) res[s][2] = r;
            sleep_s(0.3);
            r = bench_blas(sgemm, n, A, B, C2, min_s); if (r > res[s][3]) res[s][3] = r;
            sleep_s(0.3);
        }
        for (i = 0; i < nn; ++i) { double d = fabs((double)C[i] - C2[i]); if (d > maxdiff) maxdiff = d; }
        printf("  n=%4d done (max |mine - openblas| = %.2g)\n", n, maxdiff);
        fflush(stdout);
        gpuml__aligned_free(A); gpuml__aligned_free(B); gpuml__aligned_free(C); gpuml__aligned_free(C2);
    }
    if (nthreads == 1) {
        printf("\n|    n | gpuml 1T | OpenBLAS 1T | ratio 1T |\n");
        printf("|-----:|---------:|------------:|---------:|\n");
        for (s = 0; s < n_sizes; ++s)
            printf("| %4d | %8.1f | %11.1f | %7.2fx |\n", sizes[s], res[s][0], res[s][1], res[s][0] / res[s][1]);
    } else {
        printf("\n|    n | gpuml 1T | OpenBLAS 1T | ratio 1T | gpuml %dT | OpenBLAS %dT | ratio %dT |\n", nthreads, nthreads, nthreads);
        printf("|-----:|---------:|------------:|---------:|---------:|------------:|---------:|\n");
        for (s = 0; s < n_sizes; ++s)
            printf("| %4d | %8.1f | %11.1f | %7.2fx | %8.1f | %11.1f | %7.2fx |\n", sizes[s], res[s][0], res[s][1],
                   res[s][0] / res[s][1], res[s][2], res[s][3], res[s][2] / res[s][3]);
    }
    printf("(GFLOP/s)\n");
    standin_pool_destroy(pool1);
    standin_pool_destroy(poolN);
    return 1;
}

int main(int argc, char **argv)
{
    int do_test = 1, do_bench = 1, ok = 1, i;
    const char *core = getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "Haswell";
    double min_s = 0.5;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = ncpu > 0 ? (int)ncpu : 1, rounds = 2, use_cputime = 0;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--test") == 0) do_bench = 0;
        else if (strcmp(argv[i], "--bench") == 0) do_test = 0;
        else if (strncmp(argv[i], "--coretype=", 11) == 0) core = argv[i] + 11;
        else if (strncmp(argv[i], "--min-s=", 8) == 0) min_s = atof(argv[i] + 8);
        else if (strncmp(argv[i], "--threads=", 10) == 0) nthreads = atoi(argv[i] + 10);
        else if (strncmp(argv[i], "--rounds=", 9) == 0) rounds = atoi(argv[i] + 9);
        else if (strcmp(argv[i], "--kernel=avx2") == 0) bench_opts = GPUML__GEMM_OPT_NO_AVX512;
        else if (strcmp(argv[i], "--kernel=portable") == 0) bench_opts = GPUML__GEMM_OPT_NO_SIMD;
        else if (strcmp(argv[i], "--kernel=best") == 0) bench_opts = 0;
        else if (strcmp(argv[i], "--cputime") == 0) use_cputime = 1;
        else if (strncmp(argv[i], "--sizes=", 8) == 0) {
            const char *p = argv[i] + 8;
            for (n_sizes = 0; n_sizes < 8 && *p;) {
                int v = atoi(p);
                if (v > 0) bench_sizes[n_sizes++] = v;
                while (*p && *p != ',') ++p;
                if (*p == ',') ++p;
            }
            if (n_sizes == 0) { fprintf(stderr, "--sizes=: no size given\n"); return 2; }
        }
        else { fprintf(stderr, "usage: %s [--test|--bench] [--coretype=NAME|auto] [--min-s=SEC] [--threads=N] [--rounds=N] [--kernel=best|avx2|portable] [--cputime] [--sizes=N,N,...]\n", argv[0]); return 2; }
    }
    printf("kernels on this CPU: %s (default), %s (--kernel=avx2), %s (--kernel=portable)\n", kernel_name(0),
           kernel_name(GPUML__GEMM_OPT_NO_AVX512), kernel_name(GPUML__GEMM_OPT_NO_SIMD));
    if (do_test) ok = run_tests() && ok;
    if (nthreads < 1) nthreads = 1;
    if (rounds < 1) rounds = 1;
    if (do_bench) ok = run_bench(core, min_s, nthreads, rounds, use_cputime) && ok;
    return ok ? 0 : 1;
}
