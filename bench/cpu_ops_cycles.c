/* L1/L2-resident cost of the CPU memory-bound kernels (not a test): TSC cycles per element on one
   thread, best of 300 timings of 4 calls, for each SIMD path the machine has (AVX2+FMA, AVX-512).
   The memory-bound figures are in bench_ops; this shows the compute side that they hide, so that
   the floor in bench/NOTES_ops.md can be checked: at 0.7 of a copy roof R (GB/s) on T threads an
   op moving B bytes per element may spend f_tsc * T * B / (0.7 R) cycles per element.
   Build: gcc -std=c99 -O2 -I. bench/cpu_ops_cycles.c -o build/cpu_ops_cycles -ldl -lpthread -lm
   Run:   build/cpu_ops_cycles [elements, default 4096] [reps, default 300] [row length of the row ops, default 4096]
   With a row larger than the caches (e.g. 16777216 10) the same figures are the in-memory cost on one
   thread; the first line is then memcpy's TSC cycles per byte moved (read + write) on one thread, the
   floor to compare with: an op moving B bytes per element cannot go below B times that.  In memory the
   AVX-512 row ops run as the library runs them: the next row prefetched, streaming stores. */
#define _POSIX_C_SOURCE 200809L
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if GPUML__HAVE_AVX2_PATH
#include <x86intrin.h>

static int64_t n;
static float *x, *y, *b, *e, *bm, *w;
static gpuml__u16 *xh, *yh, *bh, *xf, *yf, *bf16f;   /* bf16 copies; f16 copies (bf = 2) */

/* what: 0..5 elementwise ops, 6 softmax, 7 layernorm, 8 rmsnorm; lvl 1 AVX2, 2 AVX-512 */
static const int ew_ops[6] = { GPUML_BINARY_ADD, GPUML__EW_UNARY + GPUML_UNARY_EXP, GPUML__EW_UNARY + GPUML_UNARY_GELU,
                               GPUML__EW_UNARY + GPUML_UNARY_SILU, GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH, GPUML__EW_GELU_GRAD };
static const char *names[9] = { "add", "exp", "gelu", "silu", "gelu_tanh", "gelu_grad", "softmax", "layernorm", "rmsnorm" };
static void run_rows(int what, int lvl, int bf, int64_t r0, int64_t m);
static int64_t rowlen = 4096;
static void run(int what, int lvl, int bf)
{
    int64_t r0;
    const char *xp = bf == 2 ? (const char *)xf : bf ? (const char *)xh : (const char *)x;
    const char *bp = bf == 2 ? (const char *)bf16f : bf ? (const char *)bh : (const char *)b;
    char *yp = bf == 2 ? (char *)yf : bf ? (char *)yh : (char *)y;
    int unary = what >= 1 && what <= 4;
    if (what < 6) {
        if (lvl == 2) gpuml__ew_avx512(ew_ops[what], n, yp, bf, xp, bf, unary ? NULL : bp, bf, 0);
        else gpuml__cpu_ew(ew_ops[what], n, y, x, unary ? NULL : b, NULL, 0.0f, 0.0f);
    } else {   /* rows of rowlen (the last one shorter) */
        for (r0 = 0; r0 < n; r0 += rowlen) run_rows(what, lvl, bf, r0, GPUML__MIN(rowlen, n - r0));
    }
}
static void run_rows(int what, int lvl, int bf, int64_t r0, int64_t m)
{
    const char *xp = bf == 2 ? (const char *)(xf + r0) : bf ? (const char *)(xh + r0) : (const char *)(x + r0);
    char *yp = bf == 2 ? (char *)(yf + r0) : bf ? (char *)(yh + r0) : (char *)(y + r0);
    float *xr = x + r0, *yr = y + r0;
    if (lvl == 2) {
        const int big = n > 1000000;   /* in memory: as the library runs it (next row prefetched, streaming stores) */
        const char *pf = big && r0 + m < n ? xp + m * (bf ? 2 : 4) : NULL;
        if (what == 6) gpuml__softmax_row_avx512(xp, bf, yp, bf, m, 0, e, bm, big, pf, 1.0f, -1, NULL);
        else gpuml__norm_row_avx512(xp, bf, yp, bf, m, what == 8, 1e-5, w, what == 7 ? b : NULL, big, pf);
        if (big && r0 + m >= n) _mm_sfence();
    } else if (what == 6) {   /* the AVX2 row path of gpuml__rows_task */
        float mx = gpuml__vmax_avx2(xr, m);
        double s = gpuml__exp_shift_avx2(xr, mx, yr, m);
        gpuml__vaxpc_avx2(yr, m, (float)(1.0 / s), 0.0f, yr);
    } else {
        double mean = what == 7 ? gpuml__vsum_avx2(xr, m, 0.0f, 0) / (double)m : 0.0;
        double q = gpuml__vsum_avx2(xr, m, (float)mean, 1) / (double)m;
        gpuml__vnorm_out_k_avx2((const char *)xr, 0, m, mean, (float)(1.0 / sqrt(q + 1e-5)), w, what == 7 ? b : NULL, (char *)yr, 0, NULL, 0);
    }
}
static int reps = 300;
static double cycles(int what, int lvl, int bf)
{
    double best = 1e30;
    int r, it;
    for (r = 0; r < reps; r++) {
        unsigned long long t0 = __rdtsc();
        for (it = 0; it < 4; it++) run(what, lvl, bf);
        best = GPUML__MIN(best, (double)(__rdtsc() - t0) / (4.0 * (double)n));
    }
    return best;
}
int main(int argc, char **argv)
{
    int64_t i;
    int what, lvl = gpuml__cpu_simd();
    n = argc > 1 ? atoll(argv[1]) : 4096;
    if (argc > 2) reps = atoi(argv[2]);
    if (argc > 3) rowlen = atoll(argv[3]);
    if (n < 1 || lvl < 1) { printf("needs n >= 1 and AVX2+FMA\n"); return 1; }
    x = (float *)malloc(sizeof(float) * (size_t)n); y = (float *)malloc(sizeof(float) * (size_t)n);
    b = (float *)malloc(sizeof(float) * (size_t)n); e = (float *)malloc(sizeof(float) * (size_t)n);
    bm = (float *)malloc(sizeof(float) * (size_t)n); w = (float *)malloc(sizeof(float) * (size_t)n);
    xh = (gpuml__u16 *)malloc(2 * (size_t)n); yh = (gpuml__u16 *)malloc(2 * (size_t)n); bh = (gpuml__u16 *)malloc(2 * (size_t)n);
    xf = (gpuml__u16 *)malloc(2 * (size_t)n); yf = (gpuml__u16 *)malloc(2 * (size_t)n); bf16f = (gpuml__u16 *)malloc(2 * (size_t)n);
    srand(1);
    for (i = 0; i < n; i++) {   /* inputs in [-4, 4], in no order (no branch in these kernels depends on them) */
        x[i] = (float)(8.0 * rand() / RAND_MAX - 4.0); b[i] = (float)(2.0 * rand() / RAND_MAX - 1.0); w[i] = 1.0f + 0.001f * (float)(i % 7);
        xh[i] = gpuml__f32_to_bf16(x[i]); bh[i] = gpuml__f32_to_bf16(b[i]);
        xf[i] = gpuml__f32_to_f16(x[i]); bf16f[i] = gpuml__f32_to_f16(b[i]);
    }
    {   /* memcpy of n floats, one thread: TSC cycles per byte moved (read + write) */
        double best = 1e30;
        int r;
        for (r = 0; r < reps; r++) {
            unsigned long long t0 = __rdtsc();
            memcpy(y, x, sizeof(float) * (size_t)n);
            best = GPUML__MIN(best, (double)(__rdtsc() - t0) / (8.0 * (double)n));
        }
        printf("memcpy %lld bytes, one thread: %.3f TSC cycles per byte moved (read + write)\n", (long long)(4 * n), best);
    }
    printf("TSC cycles per element, one thread, %lld elements (rows of %lld)\n%-10s %8s %12s %12s %12s\n", (long long)n, (long long)GPUML__MIN(rowlen, n), "op", "AVX2 f32",
           lvl >= 2 ? "AVX-512 f32" : "", lvl >= 2 ? "AVX-512 bf16" : "", lvl >= 2 ? "AVX-512 f16" : "");
    for (what = 0; what < 9; what++) {
        printf("%-10s %8.2f", names[what], cycles(what, 1, 0));
        if (lvl >= 2) printf(" %12.2f %12.2f %12.2f", cycles(what, 2, 0), cycles(what, 2, 1), cycles(what, 2, 2));
        printf("\n");
    }
    return 0;
}
#else
int main(void) { printf("no x86 SIMD paths in this build\n"); return 0; }
#endif
