/* Tiny test harness shared by the gpuml test programs.
   Each program lists its tests in a table and calls tu_main(); the last line it prints is
   "N passed, N failed, N skipped".  tests/run_all.sh sums the programs. */
#ifndef GPUML_TEST_HARNESS_H
#define GPUML_TEST_HARNESS_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../gpuml.h"

#if defined(__GNUC__) || defined(__clang__)
#define TU_UNUSED __attribute__((unused))
#else
#define TU_UNUSED
#endif

typedef struct tu_test { const char *name; void (*fn)(void); } tu_test;

static int tu_failed_now, tu_skipped_now;
static char tu_skip_reason[512];

/* record a failure (the test goes on, so one run shows every broken check) */
#define CHECK(cond, ...) do { if (!(cond)) { tu_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); } } while (0)
#define SKIP(...) do { tu_skip(__VA_ARGS__); return; } while (0)
/* a status must be exactly `want`, and the message must contain `sub` (if not NULL) */
#define CHECK_STATUS(ctx, got, want, sub) tu_check_status(__FILE__, __LINE__, ctx, got, want, sub)

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static void tu_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    printf("    FAIL %s:%d: %s: ", file, line, cond);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    tu_failed_now = 1;
}
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void tu_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tu_skip_reason, sizeof tu_skip_reason, fmt, ap);
    va_end(ap);
    tu_skipped_now = 1;
}
TU_UNUSED static void tu_check_status(const char *file, int line, gpuml_ctx *ctx, gpuml_status got, gpuml_status want, const char *sub)
{
    const char *msg = gpuml_last_error(ctx);
    if (got != want) {
        printf("    FAIL %s:%d: status %d (%s), wanted %d (%s); message: %s\n", file, line, (int)got,
               gpuml_status_string(got), (int)want, gpuml_status_string(want), msg);
        tu_failed_now = 1;
    } else if (sub && !strstr(msg, sub)) {
        printf("    FAIL %s:%d: message \"%s\" lacks \"%s\"\n", file, line, msg, sub);
        tu_failed_now = 1;
    }
}

/* ---- data helpers ---- */
static unsigned long long tu_rng_state = 0x9e3779b97f4a7c15ULL;
TU_UNUSED static void tu_seed(unsigned long long s) { tu_rng_state = s * 0x9e3779b97f4a7c15ULL + 1; }
TU_UNUSED static double tu_rand(void)   /* uniform [-1, 1), never a run of zeros */
{
    tu_rng_state ^= tu_rng_state << 13; tu_rng_state ^= tu_rng_state >> 7; tu_rng_state ^= tu_rng_state << 17;
    return (double)(tu_rng_state >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
/* compares got (as double) with ref: |got-ref| <= atol + rtol*|ref| everywhere; NaN must match NaN */
TU_UNUSED static int tu_close(const char *what, const double *got, const double *ref, long long n, double rtol, double atol)
{
    long long i, bad = 0, first = -1;
    for (i = 0; i < n; i++) {
        int ok;
        if (ref[i] != ref[i]) ok = got[i] != got[i];
        else if (isinf(ref[i])) ok = got[i] == ref[i];
        else ok = fabs(got[i] - ref[i]) <= atol + rtol * fabs(ref[i]);
        if (!ok) { bad++; if (first < 0) first = i; }
    }
    if (bad) {
        printf("    FAIL %s: %lld of %lld elements off (first at %lld: got %.9g, want %.9g, rtol %g atol %g)\n",
               what, bad, n, first, got[first], ref[first], rtol, atol);
        tu_failed_now = 1;
    }
    return bad == 0;
}

/* contexts: the CPU one always exists; the GPU one only where CUDA works */
static gpuml_ctx *tu_cpu, *tu_gpu;
static char tu_gpu_reason[2048];
static void tu_open_contexts(void)
{
    gpuml_desc d;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CPU;
    if (gpuml_init(&tu_cpu, &d) != GPUML_SUCCESS) { printf("cannot create a CPU context: %s\n", gpuml_last_error(tu_cpu)); exit(1); }
    d.backend = GPUML_BACKEND_CUDA;
    if (getenv("GPUML_TEST_NO_GPU") || gpuml_init(&tu_gpu, &d) != GPUML_SUCCESS) {
        snprintf(tu_gpu_reason, sizeof tu_gpu_reason, "%s", tu_gpu ? gpuml_last_error(tu_gpu) : "GPUML_TEST_NO_GPU set");
        gpuml_shutdown(tu_gpu);
        tu_gpu = NULL;
    }
}
#define NEED_GPU() do { if (!tu_gpu) SKIP("no usable GPU: %.200s", tu_gpu_reason); } while (0)

static int tu_main(const char *prog, const tu_test *tests, int n, int argc, char **argv)
{
    int i, passed = 0, failed = 0, skipped = 0;
    /* `prog --list` prints the test names; `prog NAME` runs the tests whose name contains NAME,
       `prog =NAME` the one named NAME (tests/run_gpu_quick.sh runs them side by side) */
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (i = 0; i < n; i++) printf("%s\n", tests[i].name);
        return 0;
    }
    tu_open_contexts();
    printf("%s: CPU %s; GPU %s\n", prog, gpuml_device_name(tu_cpu), tu_gpu ? gpuml_device_name(tu_gpu) : "none");
    for (i = 0; i < n; i++) {
        if (argc > 1 && (argv[1][0] == '=' ? strcmp(tests[i].name, argv[1] + 1) != 0 : !strstr(tests[i].name, argv[1]))) continue;
        tu_failed_now = tu_skipped_now = 0;
        tu_seed((unsigned long long)i + 1);
        tests[i].fn();
        if (tu_failed_now) { failed++; printf("  FAIL %s\n", tests[i].name); }
        else if (tu_skipped_now) { skipped++; printf("  skip %s (%s)\n", tests[i].name, tu_skip_reason); }
        else { passed++; printf("  ok   %s\n", tests[i].name); }
        fflush(stdout);
    }
    gpuml_shutdown(tu_cpu);
    gpuml_shutdown(tu_gpu);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
#define TU_RUN(name, tests, argc, argv) tu_main(name, tests, (int)(sizeof(tests) / sizeof(tests[0])), argc, argv)
#endif
