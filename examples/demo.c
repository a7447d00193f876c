/* gpuml demo: which backend, why, a user kernel (JIT-compiled on a GPU, its C version on
   the CPU), a few tensor ops, and timings.   make demo */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#endif
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ms(void)   /* wall clock */
{
#if defined(_WIN32)
    return 1000.0 * (double)clock() / CLOCKS_PER_SEC;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1000.0 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
#endif
}

/* y = a*x + y on the CPU, for when there is no GPU */
static gpuml_status saxpy_cpu(const gpuml_launch *l, void *user)
{
    float a = *(float *)l->args[0];
    const float *x = *(const float **)l->args[1];
    float *y = *(float **)l->args[2];
    int n = *(int *)l->args[3], i;
    (void)user;
    for (i = 0; i < n; i++) y[i] = a * x[i] + y[i];
    return GPUML_SUCCESS;
}
static const char saxpy_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

#define TRY(call) do { if ((call) != GPUML_SUCCESS) { fprintf(stderr, "%s failed: %s\n", #call, gpuml_last_error(ctx)); goto done; } } while (0)

int main(void)
{
    gpuml_ctx *ctx = NULL;
    gpuml_kernel_desc kd;
    gpuml_kernel *k = NULL;
    gpuml_launch l;
    gpuml_tensor *x = NULL, *y = NULL, *yt = NULL, *h = NULL;
    int64_t shape[2] = {1024, 1024};
    int n = 1024 * 1024, rc = 1;
    float a = 2.0f, out[4];
    void *px, *py, *args[4];
    double t0, t1;
    gpuml_memory_stats ms = {0, 0, 0, 0};

    t0 = now_ms();
    if (gpuml_init(&ctx, NULL) != GPUML_SUCCESS) {
        fprintf(stderr, "gpuml_init: %s\n", gpuml_last_error(ctx));
        gpuml_shutdown(ctx);
        return 1;
    }
    printf("backend : %s\n", gpuml_backend_name(gpuml_get_backend(ctx)));
    printf("why     : %s\n", gpuml_backend_reason(ctx));
    printf("device  : %s\n", gpuml_device_name(ctx));

    x = gpuml_tensor_new(ctx, GPUML_F32, 2, shape);
    y = gpuml_tensor_new(ctx, GPUML_F32, 2, shape);
    if (!x || !y) { fprintf(stderr, "%s\n", gpuml_last_error(ctx)); goto done; }
    TRY(gpuml_rand_uniform(ctx, x, 1, -1.0, 1.0));
    TRY(gpuml_rand_normal(ctx, y, 2, 0.0, 1.0));

    /* a user kernel: compiled by NVRTC on the GPU (cached on disk), its C version on the CPU */
    memset(&kd, 0, sizeof kd);
    kd.source = saxpy_src;
    kd.name = "saxpy";
    kd.cpu_fn = saxpy_cpu;
    t1 = now_ms();
    k = gpuml_kernel_compile(ctx, &kd);
    if (!k) { fprintf(stderr, "compile: %s\n", gpuml_last_error(ctx)); goto done; }
    printf("compile : saxpy ready in %.1f ms \n", now_ms() - t1);
    px = gpuml_tensor_data(x);
    py = gpuml_tensor_data(y);
    args[0] = &a; args[1] = &px; args[2] = &py; args[3] = &n;
    memset(&l, 0, sizeof l);
    l.grid[0] = (unsigned)(n + 255) / 256;
    l.block[0] = 256;
    l.args = args;
    l.nargs = 4;
    TRY(gpuml_kernel_launch(ctx, k, &l));

    /* a transposed view, cast to bf16, read back */
    yt = gpuml_tensor_transpose(y, 0, 1);
    h = gpuml_tensor_new(ctx, GPUML_BF16, 2, shape);
    if (!yt || !h) { fprintf(stderr, "%s\n", gpuml_last_error(ctx)); goto done; }
    TRY(gpuml_copy(ctx, h, yt));
    TRY(gpuml_copy(ctx, yt, h));            /* and back into the strided view, as f32 */
    TRY(gpuml_sync(ctx));
    {
        gpuml_tensor *row = gpuml_tensor_slice(y, 0, 0, 1, 1), *first = gpuml_tensor_slice(row, 1, 0, 4, 1);
        TRY(gpuml_tensor_read(first, out, sizeof out));
        gpuml_tensor_free(row);
        gpuml_tensor_free(first);
    }
    printf("result  : y[0,0:4] = %.4f %.4f %.4f %.4f (2x+y, transposed through bf16)\n", out[0], out[1], out[2], out[3]);
    gpuml_memory_stats_get(ctx, &ms);
    printf("memory  : %zu bytes in use, peak %zu\n", ms.in_use, ms.peak);
    printf("total   : %.1f ms from start to result\n", now_ms() - t0);
    rc = 0;
done:
    gpuml_kernel_free(k);
    gpuml_tensor_free(x);
    gpuml_tensor_free(y);
    gpuml_tensor_free(yt);
    gpuml_tensor_free(h);
    gpuml_shutdown(ctx);
    return rc;
}
