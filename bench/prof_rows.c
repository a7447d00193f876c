/* Dev harness (issue 3, 2026-11-29): the GPU elementwise rows kernel (gpuml_ew_rows: broadcasts along
   whole rows) against the device's own streams in one process.  Each line: us a call and GB/s of the
   bytes the op must move (each input element once, each output once), two rotated operand sets
   (> L2).  Routes through gpuml__ew_tune: "rule" (re-read inputs keep their L1 lines), "stream"
   ([4] = 2: every input streamed past L1, the rule before 2026-11-29), "nohint" ([3] = 2: plain loads
   and stores everywhere).
   Build: cc -std=c99 -O2 bench/prof_rows.c -o build/prof_rows -ldl -lpthread -lm */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include "bench_timing.h"
#include <stdio.h>
#include <string.h>

#define NC 2
static gpuml_ctx *ctx;
static gpuml_tensor *O[NC], *A[NC], *B[NC];
static gpuml_status bad;
static int copy_mode;

static void run_n(void *arg, int n)
{
    int i;
    (void)arg;
    for (i = 0; i < n; i++) {
        const int c = i % NC;
        gpuml_status st = copy_mode ? gpuml_copy(ctx, O[c], A[c]) : gpuml_add(ctx, O[c], A[c], B[c]);
        if (st != GPUML_SUCCESS) bad = st;
    }
}
static double timed(void)
{
    bad = GPUML_SUCCESS;
    run_n(NULL, 4);
    if (gpuml_sync(ctx) != GPUML_SUCCESS || bad != GPUML_SUCCESS) return -1;
    return bench_gpu_seconds(ctx, run_n, NULL, 20);
}
/* one case: o (no dims) = a (na dims) + b (nb dims), dtype dt; b shared by both sets when shared_b */
static void one(const char *name, gpuml_dtype dt, int no, const int64_t *so, int na, const int64_t *sa, int nb, const int64_t *sb)
{
    static const char *const rn[3] = { "rule", "stream", "nohint" };
    double bytes = 0, t;
    int i, r;
    for (i = 0; i < NC; i++) {
        O[i] = gpuml_tensor_new(ctx, dt, no, so); A[i] = gpuml_tensor_new(ctx, dt, na, sa);
        B[i] = nb ? gpuml_tensor_new(ctx, dt, nb, sb) : NULL;
        if (!O[i] || !A[i] || (nb && !B[i])) { printf("alloc: %s\n", gpuml_last_error(ctx)); return; }
        gpuml_rand_uniform(ctx, A[i], 10 + (uint64_t)i, -1, 1);
        if (nb) gpuml_rand_uniform(ctx, B[i], 20 + (uint64_t)i, -1, 1);
    }
    bytes = (double)gpuml_dtype_size(dt) * ((double)gpuml_tensor_numel(O[0]) + (double)gpuml_tensor_numel(A[0]) + (nb ? (double)gpuml_tensor_numel(B[0]) : 0));
    copy_mode = nb == 0;
    for (r = 0; r < (nb ? 3 : 1); r++) {
        memset(gpuml__ew_tune, 0, sizeof gpuml__ew_tune);
        if (r == 1) gpuml__ew_tune[4] = 2;
        if (r == 2) gpuml__ew_tune[3] = 2;
        t = timed();
        if (t < 0) { printf("%-48s %-6s declined: %s\n", name, rn[r], gpuml_last_error(ctx)); gpuml_clear_error(ctx); continue; }
        printf("%-48s %-6s %8.2f us %8.1f GB/s\n", name, nb ? rn[r] : "", t * 1e6, bytes / t * 1e-9);
    }
    memset(gpuml__ew_tune, 0, sizeof gpuml__ew_tune);
    for (i = 0; i < NC; i++) { gpuml_tensor_free(O[i]); gpuml_tensor_free(A[i]); gpuml_tensor_free(B[i]); }
}
int main(int argc, char **argv)
{
    const int64_t M = 32 * 56 * 56;
    int64_t y3[3] = { M, 4, 64 }, a3[3] = { M, 1, 64 }, b3[2] = { 4, 64 }, y2[2] = { M, 256 }, b1[1] = { 256 };
    int64_t yl[2] = { 8192, 8192 }, bl[1] = { 8192 }, cp[1] = { M * 256 };
    gpuml_desc desc;
    memset(&desc, 0, sizeof desc);
    if (gpuml_init(&ctx, &desc) != GPUML_SUCCESS || gpuml_get_backend(ctx) != GPUML_BACKEND_CUDA) { printf("needs a GPU\n"); return 0; }
    printf("device: %s\n", gpuml_device_name(ctx));
    if (argc > 1 && strcmp(argv[1], "ncu") == 0) {   /* for a profiler: the f16 broadcast once by the rule, once streamed */
        int i;
        for (i = 0; i < NC; i++) {
            O[i] = gpuml_tensor_new(ctx, GPUML_F16, 3, y3); A[i] = gpuml_tensor_new(ctx, GPUML_F16, 3, a3); B[i] = gpuml_tensor_new(ctx, GPUML_F16, 2, b3);
            gpuml_rand_uniform(ctx, A[i], 1, -1, 1); gpuml_rand_uniform(ctx, B[i], 2, -1, 1);
        }
        run_n(NULL, 2);
        gpuml__ew_tune[4] = 2;
        run_n(NULL, 2);
        gpuml_sync(ctx);
        gpuml_shutdown(ctx);
        return 0;
    }
    one("copy f16 [M*256] (M = 100352)", GPUML_F16, 1, cp, 1, cp, 0, NULL);
    one("add f16 [M][256] + [M][256]", GPUML_F16, 2, y2, 2, y2, 2, y2);
    one("add f16 [M][4][64] = [M][1][64] + [4][64]", GPUML_F16, 3, y3, 3, a3, 2, b3);
    one("add f32 [M][4][64] = [M][1][64] + [4][64]", GPUML_F32, 3, y3, 3, a3, 2, b3);
    one("add f16 [M][256] + bias [256]", GPUML_F16, 2, y2, 2, y2, 1, b1);
    one("add f32 [M][256] + bias [256]", GPUML_F32, 2, y2, 2, y2, 1, b1);
    one("add bf16 [8192][8192] + bias [8192]", GPUML_BF16, 2, yl, 2, yl, 1, bl);
    one("add f32 [8192][8192] + bias [8192]", GPUML_F32, 2, yl, 2, yl, 1, bl);
    gpuml_shutdown(ctx);
    return 0;
}
