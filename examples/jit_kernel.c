/* jit_kernel: your own CUDA kernel through gpuml's JIT, with a C version for the CPU backend.

       make examples && ./build/jit_kernel [--backend auto|cpu|cuda]

   1. A kernel  out[i,j] = clamp(x[i,j] * scale[i] + shift[j], -LIMIT, LIMIT)  (LIMIT set
      with an NVRTC option) is compiled by NVRTC on a GPU (cached on disk) and launched on
      gpuml tensors; on the CPU backend its C version runs instead.  The result is checked
      against the same formula computed on the host in double precision, and against gpuml's
      own broadcasting ops (mul, add, clamp).
   2. A kernel with no C version, launched on the CPU backend, says it needs a GPU.
   3. A broken kernel: what NVRTC's error looks like in gpuml_last_error.
   Exit status: 0 all as expected, 1 something was wrong, 2 bad arguments, 77 the asked-for
   backend is not usable here. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 2.5
static const double tol = 4e-6;   /* see the check below */
#define STR2(x) #x
#define STR(x) STR2(x)

static const char kernel_src[] =
    "extern \"C\" __global__ void scale_shift_clamp(const float *x, const float *scale, const float *shift,\n"
    "                                               float *out, int rows, int cols)\n"
    "{\n"
    "    int j = blockIdx.x * blockDim.x + threadIdx.x;   /* column */\n"
    "    int i = blockIdx.y * blockDim.y + threadIdx.y;   /* row */\n"
    "    if (i < rows && j < cols) {\n"
    "        float v = x[(long long)i * cols + j] * scale[i] + shift[j];\n"
    "        out[(long long)i * cols + j] = fminf(fmaxf(v, -LIMIT), LIMIT);\n"
    "    }\n"
    "}\n";

/* The same kernel in C: gpuml_kernel_launch calls it on the CPU backend with the same args. */
static gpuml_status scale_shift_clamp_cpu(const gpuml_launch *l, void *user)
{
    const float *x = *(const float **)l->args[0], *scale = *(const float **)l->args[1], *shift = *(const float **)l->args[2];
    float *out = *(float **)l->args[3];
    int rows = *(const int *)l->args[4], cols = *(const int *)l->args[5], i, j;
    (void)user;
    if (l->nargs != 6) return GPUML_ERROR_INVALID_ARGUMENT;
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) {
            float v = x[(long long)i * cols + j] * scale[i] + shift[j];
            out[(long long)i * cols + j] = v < -(float)LIMIT ? -(float)LIMIT : v > (float)LIMIT ? (float)LIMIT : v;
        }
    return GPUML_SUCCESS;
}

/* a kernel that does not compile: `y` is not declared */
static const char broken_src[] =
    "extern \"C\" __global__ void broken(float *x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = y * 2.0f;\n"
    "}\n";

static gpuml_ctx *ctx;
static int problems;

#define CHECK_OK(call) do { gpuml_status s_ = (call); if (s_ != GPUML_SUCCESS) { \
    fprintf(stderr, "jit_kernel: %s failed: %s\n", #call, gpuml_last_error(ctx)); problems++; goto done; } } while (0)
#define CHECK_NEW(t, expr) do { if (((t) = (expr)) == NULL) { \
    fprintf(stderr, "jit_kernel: %s failed: %s\n", #expr, gpuml_last_error(ctx)); problems++; goto done; } } while (0)

/* Part 3 on a machine without a GPU: gpuml_kernel_compile compiles nothing on the CPU backend,
   so to show NVRTC's message anyway this calls the JIT that gpuml_kernel_compile uses on a
   GPU (gpuml internals, not API: don't copy this part), for sm_80, when NVRTC is installed.
   It compiles the good kernel first, so its CUDA text is checked on CPU-only machines too. */
static void show_nvrtc_error_without_gpu(void)
{
#ifndef GPUML_NO_CUDA
    char why[2048];
    gpuml__nvrtc *rtc = gpuml__nvrtc_get(NULL, why, sizeof why);
    unsigned char *bin = NULL;
    size_t size = 0;
    int is_ptx = 0;
    gpuml__hash key;
    gpuml__str log = {0, 0, 0, 0};
    gpuml_status st;
    if (!rtc) { printf("broken  : (no NVRTC here to show its message: %.200s)\n", why); return; }
    /* first, the good kernel compiles (so its CUDA text is checked even where there is no GPU) */
    st = gpuml__jit_get(rtc, NULL, kernel_src, "scale_shift_clamp", "-DLIMIT=" STR(LIMIT) "f", 80, 0, 0, &bin, &size, &is_ptx, &key, &log);
    if (st == GPUML_SUCCESS) printf("nvrtc   : scale_shift_clamp also compiles with NVRTC %d.%d for sm_80 (%lu bytes)\n", rtc->major, rtc->minor, (unsigned long)size);
    else { printf("nvrtc   : scale_shift_clamp does not compile:\n%s\n", gpuml__str_c(&log)); problems++; }
    gpuml__free(bin);
    gpuml__str_free(&log);
    bin = NULL;
    memset(&log, 0, sizeof log);
    st = gpuml__jit_get(rtc, NULL, broken_src, "broken", NULL, 80, 0, 0, &bin, &size, &is_ptx, &key, &log);
    if (st == GPUML_ERROR_COMPILE)
        printf("broken  : on a GPU, gpuml_kernel_compile would return NULL with this in gpuml_last_error\n"
               "          (NVRTC %d.%d run here for sm_80):\n%s\n", rtc->major, rtc->minor, gpuml__str_c(&log));
    else { printf("broken  : NVRTC accepted the broken kernel (status %s)\n", gpuml_status_string(st)); problems++; }
    gpuml__free(bin);
    gpuml__str_free(&log);
#else
    printf("broken  : (built with GPUML_NO_CUDA: no NVRTC to show its message)\n");
#endif
}

int main(int argc, char **argv)
{
    gpuml_desc desc;
    gpuml_kernel_desc kd;
    gpuml_kernel *k = NULL, *gpu_only = NULL, *broken = NULL;
    gpuml_launch l;
    gpuml_tensor *x = NULL, *scale = NULL, *shift = NULL, *out = NULL, *ref = NULL, *scale_col = NULL;
    int64_t shape[2], col_shape[2];
    int rows = 333, cols = 517, i, j, on_gpu;   /* odd sizes: the grid has partial blocks */
    float *hx = NULL, *hscale = NULL, *hshift = NULL, *hout = NULL, *href = NULL;
    void *px, *pscale, *pshift, *pout, *args[6];
    double max_err = 0, max_err_ops = 0;
    long nbad = 0;
    gpuml_status st;

    memset(&desc, 0, sizeof desc);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            desc.backend = strcmp(v, "cpu") == 0 ? GPUML_BACKEND_CPU : strcmp(v, "cuda") == 0 ? GPUML_BACKEND_CUDA
                         : strcmp(v, "auto") == 0 ? GPUML_BACKEND_AUTO : GPUML_BACKEND_DEFAULT;
            if (desc.backend == GPUML_BACKEND_DEFAULT) { fprintf(stderr, "jit_kernel: --backend takes auto, cpu or cuda\n"); return 2; }
        } else {
            fprintf(stderr, "usage: jit_kernel [--backend auto|cpu|cuda]\n");
            return 2;
        }
    }
    if ((st = gpuml_init(&ctx, &desc)) != GPUML_SUCCESS) {
        fprintf(stderr, "jit_kernel: gpuml_init: %s\n", gpuml_last_error(ctx));
        gpuml_shutdown(ctx);
        return st == GPUML_ERROR_BACKEND_UNAVAILABLE || st == GPUML_ERROR_LIBRARY_NOT_FOUND ? 77 : 1;
    }
    on_gpu = gpuml_get_backend(ctx) == GPUML_BACKEND_CUDA;
    printf("backend : %s (%s)\n", gpuml_backend_name(gpuml_get_backend(ctx)), gpuml_device_name(ctx));

    /* ---- 1. the kernel, on tensors ---- */
    shape[0] = rows; shape[1] = cols;
    CHECK_NEW(x, gpuml_tensor_new(ctx, GPUML_F32, 2, shape));
    CHECK_NEW(out, gpuml_tensor_new(ctx, GPUML_F32, 2, shape));
    CHECK_NEW(ref, gpuml_tensor_new(ctx, GPUML_F32, 2, shape));
    CHECK_NEW(scale, gpuml_tensor_new(ctx, GPUML_F32, 1, &shape[0]));
    CHECK_NEW(shift, gpuml_tensor_new(ctx, GPUML_F32, 1, &shape[1]));
    CHECK_OK(gpuml_rand_normal(ctx, x, 11, 0.0, 2.0));       /* some values beyond +-LIMIT, to exercise the clamp */
    CHECK_OK(gpuml_rand_uniform(ctx, scale, 12, 0.5, 1.5));
    CHECK_OK(gpuml_rand_uniform(ctx, shift, 13, -1.0, 1.0));
    CHECK_OK(gpuml_fill(ctx, out, NAN));                     /* poison: an element the kernel misses stays NaN */

    memset(&kd, 0, sizeof kd);
    kd.source = kernel_src;
    kd.name = "scale_shift_clamp";
    kd.options = "-DLIMIT=" STR(LIMIT) "f";                  /* NVRTC options, as for nvcc */
    kd.cpu_fn = scale_shift_clamp_cpu;
    CHECK_NEW(k, gpuml_kernel_compile(ctx, &kd));
    px = gpuml_tensor_data(x); pscale = gpuml_tensor_data(scale); pshift = gpuml_tensor_data(shift); pout = gpuml_tensor_data(out);
    args[0] = &px; args[1] = &pscale; args[2] = &pshift; args[3] = &pout; args[4] = &rows; args[5] = &cols;
    memset(&l, 0, sizeof l);
    l.block[0] = 32; l.block[1] = 8;
    l.grid[0] = (unsigned)(cols + 31) / 32; l.grid[1] = (unsigned)(rows + 7) / 8;
    l.args = args;
    l.nargs = 6;
    CHECK_OK(gpuml_kernel_launch(ctx, k, &l));
    printf("kernel  : scale_shift_clamp %s on a %d x %d tensor (grid %u x %u of 32 x 8 threads)\n",
           on_gpu ? "compiled by NVRTC and launched" : "ran as its C function (CPU backend)", rows, cols, l.grid[0], l.grid[1]);

    /* the same with gpuml's own ops: scale viewed as a [rows, 1] column broadcasts along rows */
    col_shape[0] = rows; col_shape[1] = 1;
    CHECK_NEW(scale_col, gpuml_tensor_reshape(scale, 2, col_shape));
    CHECK_OK(gpuml_mul(ctx, ref, x, scale_col));
    CHECK_OK(gpuml_add(ctx, ref, ref, shift));
    CHECK_OK(gpuml_clamp(ctx, ref, ref, -LIMIT, LIMIT));

    /* and on the host, in double */
    hx = (float *)malloc((size_t)rows * cols * sizeof(float));
    hout = (float *)malloc((size_t)rows * cols * sizeof(float));
    href = (float *)malloc((size_t)rows * cols * sizeof(float));
    hscale = (float *)malloc((size_t)rows * sizeof(float));
    hshift = (float *)malloc((size_t)cols * sizeof(float));
    if (!hx || !hout || !href || !hscale || !hshift) { fprintf(stderr, "jit_kernel: out of host memory\n"); problems++; goto done; }
    CHECK_OK(gpuml_tensor_read(x, hx, (size_t)rows * cols * sizeof(float)));
    CHECK_OK(gpuml_tensor_read(scale, hscale, (size_t)rows * sizeof(float)));
    CHECK_OK(gpuml_tensor_read(shift, hshift, (size_t)cols * sizeof(float)));
    CHECK_OK(gpuml_tensor_read(out, hout, (size_t)rows * cols * sizeof(float)));
    CHECK_OK(gpuml_tensor_read(ref, href, (size_t)rows * cols * sizeof(float)));
    /* f32 rounding: x*scale reaches ~13 before the clamp (half an ulp: 5e-7), then the sum near the
       clamp limit (1.2e-7); an fma on the GPU rounds once.  4e-6 leaves a margin; a wrong or
       missed element is off by far more (or NaN, from the poison). */
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) {
            double v = (double)hx[(size_t)i * cols + j] * hscale[i] + hshift[j];
            double want = v < -LIMIT ? -LIMIT : v > LIMIT ? LIMIT : v;
            double e = fabs((double)hout[(size_t)i * cols + j] - want);
            double eo = fabs((double)hout[(size_t)i * cols + j] - (double)href[(size_t)i * cols + j]);
            nbad += !(e <= tol) || !(eo <= tol);          /* NaN (a missed element) counts as bad */
            if (e > max_err) max_err = e;
            if (eo > max_err_ops) max_err_ops = eo;
        }
    printf("check   : max |kernel - host double| = %.2e, max |kernel - gpuml ops| = %.2e (tolerance %.0e)\n", max_err, max_err_ops, tol);
    if (nbad) { printf("check   : MISMATCH in %ld of %ld elements\n", nbad, (long)rows * cols); problems++; }
    else printf("check   : kernel matches the host computation and gpuml's ops\n");

    /* ---- 2. no C version: fine on a GPU, a clear error on the CPU ---- */
    memset(&kd, 0, sizeof kd);
    kd.source = kernel_src;
    kd.name = "scale_shift_clamp";
    kd.options = "-DLIMIT=1.0f";
    CHECK_NEW(gpu_only, gpuml_kernel_compile(ctx, &kd));
    st = gpuml_kernel_launch(ctx, gpu_only, &l);
    if (on_gpu) CHECK_OK(st);
    else if (st == GPUML_ERROR_NEEDS_GPU) printf("no cpu_fn: %s\n          -> %s\n", gpuml_status_string(st), gpuml_last_error(ctx));
    else { printf("no cpu_fn: unexpected status %s\n", gpuml_status_string(st)); problems++; }
    gpuml_clear_error(ctx);

    /* ---- 3. a kernel that does not compile ---- */
    memset(&kd, 0, sizeof kd);
    kd.source = broken_src;
    kd.name = "broken";
    broken = gpuml_kernel_compile(ctx, &kd);
    if (on_gpu) {
        if (!broken && gpuml_last_status(ctx) == GPUML_ERROR_COMPILE)
            printf("broken  : gpuml_kernel_compile returned NULL, %s, with gpuml_last_error =\n%s\n",
                   gpuml_status_string(gpuml_last_status(ctx)), gpuml_last_error(ctx));
        else { printf("broken  : expected GPUML_ERROR_COMPILE, got %s\n", gpuml_status_string(gpuml_last_status(ctx))); problems++; }
        gpuml_clear_error(ctx);
    } else {
        show_nvrtc_error_without_gpu();
    }

done:
    printf("jit_kernel: %s\n", problems ? "FAILED" : "ok");
    gpuml_kernel_free(k); gpuml_kernel_free(gpu_only); gpuml_kernel_free(broken);
    gpuml_tensor_free(x); gpuml_tensor_free(scale); gpuml_tensor_free(shift); gpuml_tensor_free(out);
    gpuml_tensor_free(ref); gpuml_tensor_free(scale_col);
    free(hx); free(hscale); free(hshift); free(hout); free(href);
    gpuml_shutdown(ctx);
    return problems ? 1 : 0;
}
