/* gpuml.h -- tensors and GPU math for C, in one header.  v0.1.0
   No warranty; see the licence at the end of this file (MIT or public domain, your choice).

   DO THIS
   -------
   Copy gpuml.h and kernels.cu.inc into your project.  In *one* C or C++ file write

       #define GPUML_IMPLEMENTATION
       #include "gpuml.h"

   and include gpuml.h without the define everywhere else.  Build with a plain

       cc app.c -ldl -lpthread -lm          (Windows: nothing extra)

   No CUDA header or library is needed to build.  At run time gpuml looks for the NVIDIA
   driver (libcuda / nvcuda.dll) and NVRTC (libnvrtc); when both are usable and a GPU is
   present it runs on the GPU, otherwise on the CPU, and tells you why.

   STEP BY STEP
   ------------
       gpuml_ctx *ctx;
       if (gpuml_init(&ctx, &(gpuml_desc){0}) != GPUML_SUCCESS)     // zero = defaults
           fprintf(stderr, "gpuml: %s\n", gpuml_last_error(ctx));
       printf("backend: %s (%s)\n", gpuml_backend_name(gpuml_get_backend(ctx)),
              gpuml_backend_reason(ctx));
       gpuml_tensor *a = gpuml_tensor_new(ctx, GPUML_F32, 2, (int64_t[]){1024, 512});
       gpuml_rand_normal(ctx, a, 42, 0.0, 1.0);
       gpuml_tensor *at = gpuml_tensor_transpose(a, 0, 1);   // a view: no copy
       gpuml_tensor *b = gpuml_tensor_new(ctx, GPUML_BF16, 2, (int64_t[]){512, 1024});
       gpuml_copy(ctx, b, at);                                // strided copy + cast
       gpuml_tensor_read(b, host, 512 * 1024 * 2);            // waits for the result
       gpuml_tensor_free(at); gpuml_tensor_free(a); gpuml_tensor_free(b);
       gpuml_shutdown(ctx);

   (Compound literals are C99; in C++ declare the desc and shape as variables.)

   CONFIGURATION MACROS (define before including the implementation)
   --------------------
       GPUML_IMPLEMENTATION   compile the implementation in this translation unit
       GPUML_STATIC           make every symbol static (two copies never clash)
       GPUML_NO_CUDA          CPU backend only: no run-time loading of CUDA at all
       GPUML_ASSERT(x)        internal consistency checks (default: none)
       GPUML_MALLOC(sz), GPUML_REALLOC(p,sz), GPUML_FREE(p)
                              host allocation overrides: all three or none
       GPUML_KERNELS_INC      path of the kernel source to include (default "kernels.cu.inc")

   ENVIRONMENT VARIABLES
   ---------------------
       GPUML_BACKEND      auto | cuda | cpu      (used when gpuml_desc.backend is 0)
       GPUML_CUDA_LIB     path of libcuda to load (an explicit path that fails is an error)
       GPUML_NVRTC_LIB    path of libnvrtc to load (likewise)
       GPUML_CACHE_DIR    folder of the compiled-kernel cache; "off" disables the disk cache.
                          Default: $XDG_CACHE_HOME/gpuml, else ~/.cache/gpuml
                          (%LOCALAPPDATA%\gpuml on Windows)
       GPUML_NUM_THREADS  CPU backend threads (default: the number of cores)

   BACKEND SELECTION
   -----------------
   gpuml_desc.backend, else GPUML_BACKEND, else auto.  Auto uses CUDA when the driver, a
   device and NVRTC are all usable, else the CPU; gpuml_backend_reason() says which and why
   (for example "CPU: libcuda not found (tried libcuda.so.1, libcuda.so, ...)").  Asking
   for cuda where none is usable makes gpuml_init fail with GPUML_ERROR_BACKEND_UNAVAILABLE
   and that reason; it never silently runs on the CPU.

   KERNELS, JIT AND THE CACHE
   --------------------------
   gpuml's own kernels are CUDA source embedded from kernels.cu.inc.  Each kernel family is
   compiled by NVRTC on first use for the exact GPU present (sm_XY, or sm_90a for
   Hopper-only instructions; PTX only when the GPU is newer than NVRTC knows) and cached in
   memory and on disk.  A cache file's name is a hash of the source, options, NVRTC version,
   architecture and gpuml version; files are written atomically and verified when loaded
   (a damaged file is recompiled).  Clear the cache with `rm -rf ~/.cache/gpuml`.
   Your own kernels go through the same path: gpuml_kernel_compile / gpuml_kernel_launch.

   ERROR REPORTING AND LOGGING
   ---------------------------
   Every call that can fail returns a gpuml_status (0 = GPUML_SUCCESS, errors negative) or,
   for constructors, NULL.  gpuml_last_error(ctx) holds a message with the details (shapes,
   the CUDA error's name, the NVRTC log).  gpuml never aborts, exits or prints; set
   gpuml_desc.log_fn to receive its log messages.  GPU work is asynchronous: a fault inside
   a kernel surfaces at the next gpuml_sync or read, and marks the context failed
   (GPUML_ERROR_CONTEXT_FAILED from then on).

   THREADS
   -------
   A context is used by one thread at a time; several contexts may run at once (one per
   thread or per GPU).  The compiled-kernel cache shared between contexts is locked.

   TENSORS
   -------
   Up to GPUML_MAX_DIMS (8) dimensions, shape and strides in elements.  Views (reshape,
   permute, transpose, slice, expand) share storage with their base and stay valid after the
   base is freed; free every tensor handle you get.  Host data passed to gpuml_tensor_write
   / read is dense row-major in the tensor's logical shape, whatever its strides.
   Element types: f32, f16, bf16, i32, i8, u8, fp8 e4m3 and e5m2 (storage, casts, matmul).
   Casts round to nearest even and give identical bits on CPU and GPU; fp8 casts saturate
   to the largest finite value (like PTX satfinite); integer casts round and saturate, NaN
   gives 0.  Random numbers are counter-based (Philox4x32-10): the same seed gives the same
   numbers on CPU and GPU, whatever the tensor's layout.  (Do not compile gpuml with
   -ffast-math: the bit-exact paths rely on IEEE arithmetic.)
*/
#ifndef GPUML_H
#define GPUML_H

#include <stddef.h>
#include <stdint.h>

#define GPUML_VERSION_MAJOR 0
#define GPUML_VERSION_MINOR 1
#define GPUML_VERSION_PATCH 0
#define GPUML_VERSION_STRING "0.1.0"

#ifndef GPUML_API
#ifdef GPUML_STATIC
#define GPUML_API static
#else
#define GPUML_API extern
#endif
#endif

#define GPUML_MAX_DIMS 8

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpuml_status {
    GPUML_SUCCESS = 0,
    GPUML_ERROR_INVALID_ARGUMENT = -1,  /* null pointer, bad value */
    GPUML_ERROR_SHAPE = -2,             /* shapes that do not fit together */
    GPUML_ERROR_DTYPE = -3,             /* an element type the op does not take */
    GPUML_ERROR_OUT_OF_MEMORY = -4,     /* host or device memory exhausted */
    GPUML_ERROR_BACKEND_UNAVAILABLE = -5, /* the asked-for backend cannot run here */
    GPUML_ERROR_LIBRARY_NOT_FOUND = -6, /* libcuda / libnvrtc could not be loaded */
    GPUML_ERROR_COMPILE = -7,           /* NVRTC rejected a kernel (the log is in the message) */
    GPUML_ERROR_CUDA = -8,              /* a CUDA driver call failed */
    GPUML_ERROR_NOT_SUPPORTED = -9,     /* valid, but not implemented on this backend/device */
    GPUML_ERROR_NEEDS_GPU = -10,        /* a user kernel without a CPU function, on the CPU */
    GPUML_ERROR_CONTEXT_FAILED = -11,   /* an earlier device fault made the context unusable */
    GPUML_ERROR_WRONG_CONTEXT = -12,    /* a tensor of another context */
    GPUML_ERROR_FREED = -13,            /* a tensor or kernel handle that was freed */
    GPUML_ERROR_ALIAS = -14,            /* an output overlaps an input in a way the op cannot take */
    GPUML_ERROR_IO = -15                /* a file operation failed */
} gpuml_status;

typedef enum gpuml_dtype {
    GPUML_F32 = 0, GPUML_F16 = 1, GPUML_BF16 = 2, GPUML_I32 = 3, GPUML_I8 = 4, GPUML_U8 = 5,
    GPUML_FP8_E4M3 = 6, GPUML_FP8_E5M2 = 7,
    GPUML_DTYPE_COUNT = 8
} gpuml_dtype;

typedef enum gpuml_backend {
    GPUML_BACKEND_DEFAULT = 0,  /* GPUML_BACKEND from the environment, else auto */
    GPUML_BACKEND_AUTO = 1,
    GPUML_BACKEND_CUDA = 2,
    GPUML_BACKEND_CPU = 3
} gpuml_backend;

typedef enum gpuml_log_level {
    GPUML_LOG_ERROR = 1, GPUML_LOG_WARN = 2, GPUML_LOG_INFO = 3, GPUML_LOG_DEBUG = 4
} gpuml_log_level;

typedef struct gpuml_ctx gpuml_ctx;
typedef struct gpuml_tensor gpuml_tensor;
typedef struct gpuml_kernel gpuml_kernel;

typedef void (*gpuml_log_fn)(void *user, gpuml_log_level level, const char *message);

/* Zero means "default" for every field. */
typedef struct gpuml_desc {
    gpuml_backend backend;
    int device;                  /* CUDA device ordinal */
    const char *cuda_lib;        /* explicit libcuda path (else GPUML_CUDA_LIB, else search) */
    const char *nvrtc_lib;       /* explicit libnvrtc path (else GPUML_NVRTC_LIB, else search) */
    const char *cache_dir;       /* kernel cache folder, "off" = none (else GPUML_CACHE_DIR) */
    int num_threads;             /* CPU threads (else GPUML_NUM_THREADS, else core count) */
    gpuml_log_fn log_fn;         /* receives log messages; none are printed otherwise */
    void *log_user;
    gpuml_log_level log_level;   /* most verbose level passed to log_fn (default WARN) */
} gpuml_desc;

/* ---- context ---- */
/* On failure *ctx is still set (unless host memory ran out, then NULL) so that
   gpuml_last_error(*ctx) can say why; call gpuml_shutdown on it either way. */
GPUML_API gpuml_status gpuml_init(gpuml_ctx **ctx, const gpuml_desc *desc);
GPUML_API void gpuml_shutdown(gpuml_ctx *ctx);
GPUML_API gpuml_backend gpuml_get_backend(const gpuml_ctx *ctx);
GPUML_API const char *gpuml_backend_name(gpuml_backend backend);
GPUML_API const char *gpuml_backend_reason(const gpuml_ctx *ctx);
GPUML_API const char *gpuml_device_name(const gpuml_ctx *ctx);
/* compute capability as major*10+minor (0 on the CPU) */
GPUML_API int gpuml_device_arch(const gpuml_ctx *ctx);
/* waits for all queued work; reports asynchronous device faults */
GPUML_API gpuml_status gpuml_sync(gpuml_ctx *ctx);

/* ---- errors ---- */
GPUML_API const char *gpuml_status_string(gpuml_status status);
GPUML_API gpuml_status gpuml_last_status(const gpuml_ctx *ctx);
GPUML_API const char *gpuml_last_error(const gpuml_ctx *ctx);   /* "" when none */
GPUML_API void gpuml_clear_error(gpuml_ctx *ctx);

/* ---- memory ---- */
typedef struct gpuml_memory_stats {
    size_t in_use;        /* bytes held by live tensors (rounded to the allocator's classes) */
    size_t peak;          /* highest in_use so far */
    size_t cached;        /* bytes freed by tensors and kept for reuse */
    size_t device_allocs; /* calls that reached the driver's allocator (or malloc) */
} gpuml_memory_stats;
GPUML_API gpuml_status gpuml_memory_stats_get(gpuml_ctx *ctx, gpuml_memory_stats *stats);
/* gives cached blocks back to the driver */
GPUML_API gpuml_status gpuml_memory_release_cache(gpuml_ctx *ctx);

/* ---- tensors ---- */
GPUML_API const char *gpuml_dtype_name(gpuml_dtype dtype);
GPUML_API size_t gpuml_dtype_size(gpuml_dtype dtype);     /* 0 for an invalid dtype */

/* A new, contiguous (row-major) tensor; its contents are undefined until written.
   Returns NULL on error (see gpuml_last_error). ndim may be 0 (a scalar). */
GPUML_API gpuml_tensor *gpuml_tensor_new(gpuml_ctx *ctx, gpuml_dtype dtype, int ndim, const int64_t *shape);
/* Frees the handle; the storage goes when its last view does.  NULL is fine. */
GPUML_API void gpuml_tensor_free(gpuml_tensor *t);
GPUML_API gpuml_ctx *gpuml_tensor_ctx(const gpuml_tensor *t);
GPUML_API gpuml_dtype gpuml_tensor_dtype(const gpuml_tensor *t);
GPUML_API int gpuml_tensor_ndim(const gpuml_tensor *t);
GPUML_API int64_t gpuml_tensor_dim(const gpuml_tensor *t, int d);       /* d < 0 counts from the end */
GPUML_API int64_t gpuml_tensor_stride(const gpuml_tensor *t, int d);    /* in elements */
GPUML_API int64_t gpuml_tensor_numel(const gpuml_tensor *t);
GPUML_API int gpuml_tensor_is_contiguous(const gpuml_tensor *t);
/* Address of the first element: a device address on CUDA, a host pointer on the CPU.
   For passing to your own kernels. */
GPUML_API void *gpuml_tensor_data(const gpuml_tensor *t);

/* Views: new handles that share t's storage.  NULL on error. */
/* Same elements in a new shape (one entry may be -1); fails if t's strides do not allow a view. */
GPUML_API gpuml_tensor *gpuml_tensor_reshape(gpuml_tensor *t, int ndim, const int64_t *shape);
GPUML_API gpuml_tensor *gpuml_tensor_permute(gpuml_tensor *t, const int *perm);
GPUML_API gpuml_tensor *gpuml_tensor_transpose(gpuml_tensor *t, int d0, int d1);
/* elements start, start+step, ... < stop along dim (negative start/stop count from the end; step > 0) */
GPUML_API gpuml_tensor *gpuml_tensor_slice(gpuml_tensor *t, int dim, int64_t start, int64_t stop, int64_t step);
/* Broadcast to a larger shape (NumPy rules): stride 0 along expanded dims.  Read-only. */
GPUML_API gpuml_tensor *gpuml_tensor_expand(gpuml_tensor *t, int ndim, const int64_t *shape);
/* A contiguous tensor with t's contents: a view when t already is contiguous, else a copy. */
GPUML_API gpuml_tensor *gpuml_tensor_contiguous(gpuml_tensor *t);

/* Host <-> tensor.  nbytes must equal numel * dtype size; host data is dense row-major.
   write returns once src may be reused; read waits for all queued work. */
GPUML_API gpuml_status gpuml_tensor_write(gpuml_tensor *t, const void *src, size_t nbytes);
GPUML_API gpuml_status gpuml_tensor_read(const gpuml_tensor *t, void *dst, size_t nbytes);

/* ---- basic ops ---- */
/* dst = src converted to dst's dtype; src broadcasts to dst's shape. */
GPUML_API gpuml_status gpuml_copy(gpuml_ctx *ctx, gpuml_tensor *dst, const gpuml_tensor *src);
/* every element = value converted to dst's dtype */
GPUML_API gpuml_status gpuml_fill(gpuml_ctx *ctx, gpuml_tensor *dst, double value);
/* uniform in [lo, hi) / normal(mean, std); element i (row-major order) draws counter i of `seed` */
GPUML_API gpuml_status gpuml_rand_uniform(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double lo, double hi);
GPUML_API gpuml_status gpuml_rand_normal(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double mean, double std);

/* ---- your own kernels ---- */
typedef struct gpuml_launch {
    unsigned grid[3];        /* 0 entries count as 1 */
    unsigned block[3];
    unsigned shared_bytes;   /* dynamic shared memory */
    void **args;             /* as for cuLaunchKernel: args[i] points at argument i */
    int nargs;               /* used by CPU functions; CUDA takes args as they are */
} gpuml_launch;
/* What runs instead of the kernel on the CPU backend. */
typedef gpuml_status (*gpuml_cpu_kernel_fn)(const gpuml_launch *launch, void *user);
typedef struct gpuml_kernel_desc {
    const char *source;      /* CUDA C++ source; no toolkit headers are available */
    const char *name;        /* the __global__ function to launch; declare it extern "C" */
    const char *options;     /* extra NVRTC options, space separated (e.g. "-DN=4") */
    gpuml_cpu_kernel_fn cpu_fn;  /* optional CPU version */
    void *cpu_user;
} gpuml_kernel_desc;
/* Compiles (or finds in the cache).  NULL on error; a compile error puts the NVRTC log into
   gpuml_last_error.  On the CPU backend nothing is compiled. */
GPUML_API gpuml_kernel *gpuml_kernel_compile(gpuml_ctx *ctx, const gpuml_kernel_desc *desc);
GPUML_API gpuml_status gpuml_kernel_launch(gpuml_ctx *ctx, gpuml_kernel *kernel, const gpuml_launch *launch);
GPUML_API void gpuml_kernel_free(gpuml_kernel *kernel);


/* ---- matmul ---- */
typedef enum gpuml_activation {
    GPUML_ACT_NONE = 0, GPUML_ACT_RELU = 1, GPUML_ACT_GELU = 2 /* tanh form */, GPUML_ACT_SILU = 3
} gpuml_activation;
typedef enum gpuml_matmul_path {
    GPUML_MATMUL_AUTO = 0,    /* chosen by dtype, shape, layout and device */
    GPUML_MATMUL_SIMT = 1,    /* CUDA cores: every dtype, layout and shape */
    GPUML_MATMUL_MMA = 2,     /* tensor cores with mma.sync (sm_80+; f16/bf16) */
    GPUML_MATMUL_WGMMA = 3    /* Hopper wgmma + TMA (sm_90; f16/bf16) */
} gpuml_matmul_path;
/* Zero means default for every field. */
typedef struct gpuml_matmul_desc {
    float alpha;                      /* scale of A*B; 0 means 1 */
    float beta;                       /* C = alpha*A*B + beta*C; 0: C is not read */
    const gpuml_tensor *bias;         /* [N] f32, added per output column */
    gpuml_activation act;             /* applied after bias */
    const gpuml_tensor *residual;     /* C's shape and dtype, added last (may be C itself) */
    float a_scale, b_scale;           /* fp8 per-tensor scales; 0 means 1 */
    gpuml_matmul_path path;           /* force a kernel (GPUML_ERROR_NOT_SUPPORTED if it cannot run) */
} gpuml_matmul_desc;
/* C[..., M, N] = epilogue(A[..., M, K] @ B[..., K, N]).  Any strides (pass transposed views
   for transposed operands); batch dims broadcast.  Dtypes: f32 x f32 -> f32; f16 x f16 or
   bf16 x bf16 -> f16/bf16/f32 (f32 accumulation); fp8 (e4m3/e5m2) -> f16/bf16/f32;
   i8 x i8 -> i32 (exact; no epilogue). */
GPUML_API gpuml_status gpuml_matmul(gpuml_ctx *ctx, gpuml_tensor *c, const gpuml_tensor *a, const gpuml_tensor *b,
                                    const gpuml_matmul_desc *desc);

/* DEV-SPLIT: inlined before release */
#include "src/ops_api.h"

#ifdef __cplusplus
}
#endif
#endif /* GPUML_H */

/* ======================================================================================
   IMPLEMENTATION
   ====================================================================================== */
#ifdef GPUML_IMPLEMENTATION
#ifndef GPUML__IMPLEMENTED
#define GPUML__IMPLEMENTED

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <float.h>

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <direct.h>
#include <process.h>
#define GPUML__WIN 1
#else
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#define GPUML__WIN 0
#endif

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define GPUML__X86 1
#if defined(__GNUC__) || defined(__clang__)
#include <immintrin.h>
#define GPUML__AVX2_TARGET __attribute__((target("avx2,fma")))
#define GPUML__HAVE_AVX2_PATH 1
#endif
#else
#define GPUML__X86 0
#endif
#ifndef GPUML__HAVE_AVX2_PATH
#define GPUML__HAVE_AVX2_PATH 0
#endif

#if defined(GPUML_MALLOC) && defined(GPUML_FREE) && defined(GPUML_REALLOC)
#elif !defined(GPUML_MALLOC) && !defined(GPUML_FREE) && !defined(GPUML_REALLOC)
#define GPUML_MALLOC(sz) malloc(sz)
#define GPUML_REALLOC(p, sz) realloc(p, sz)
#define GPUML_FREE(p) free(p)
#else
#error "gpuml: define all of GPUML_MALLOC, GPUML_REALLOC and GPUML_FREE, or none"
#endif
#ifndef GPUML_ASSERT
#define GPUML_ASSERT(x) ((void)0)
#endif
#ifndef GPUML_KERNELS_INC
#define GPUML_KERNELS_INC "kernels.cu.inc"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GPUML__FN static __attribute__((unused))
#define GPUML__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GPUML__FN static
#define GPUML__PRINTF(a, b)
#endif
#ifdef GPUML_STATIC
#define GPUML__DEF GPUML__FN
#else
#define GPUML__DEF
#endif

typedef uint8_t gpuml__u8;
typedef int8_t gpuml__i8;
typedef uint16_t gpuml__u16;
typedef uint32_t gpuml__u32;
typedef int32_t gpuml__i32;
typedef uint64_t gpuml__u64;
typedef int64_t gpuml__i64;
#define GPUML__HD GPUML__FN

/* the kernel source, and kernels/shared.h compiled as C (conversions and random numbers) */
#include GPUML_KERNELS_INC

#define GPUML__MIN(a, b) ((a) < (b) ? (a) : (b))
#define GPUML__MAX(a, b) ((a) > (b) ? (a) : (b))
#define GPUML__COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- platform ---- */

GPUML__FN void *gpuml__malloc(size_t n) { return GPUML_MALLOC(n ? n : 1); }
GPUML__FN void *gpuml__calloc(size_t n)
{
    void *p = gpuml__malloc(n);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}
GPUML__FN void gpuml__free(void *p) { if (p) GPUML_FREE(p); }
GPUML__FN char *gpuml__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)gpuml__malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
/* 64-byte aligned host memory on top of GPUML_MALLOC (the offset is kept just before) */
GPUML__FN void *gpuml__aligned_alloc(size_t nbytes)
{
    unsigned char *raw = (unsigned char *)gpuml__malloc(nbytes + 64 + sizeof(size_t));
    size_t off;
    if (!raw) return NULL;
    off = 64 - (((uintptr_t)raw + sizeof(size_t)) & 63);
    if (off == 64) off = 0;
    off += sizeof(size_t);
    memcpy(raw + off - sizeof(size_t), &off, sizeof(size_t));
    return raw + off;
}
GPUML__FN void gpuml__aligned_free(void *p)
{
    size_t off;
    if (!p) return;
    memcpy(&off, (unsigned char *)p - sizeof(size_t), sizeof(size_t));
    gpuml__free((unsigned char *)p - off);
}

/* growable string for messages, logs and keys */
typedef struct gpuml__str { char *p; size_t len, cap; int oom; } gpuml__str;
GPUML__FN void gpuml__str_addn(gpuml__str *s, const char *t, size_t n)
{
    if (s->oom) return;
    if (s->len + n + 1 > s->cap) {
        size_t cap = GPUML__MAX(s->cap * 2, s->len + n + 64);
        char *p = (char *)GPUML_REALLOC(s->p, cap);
        if (!p) { s->oom = 1; return; }
        s->p = p; s->cap = cap;
    }
    memcpy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = 0;
}
GPUML__FN void gpuml__str_add(gpuml__str *s, const char *t) { gpuml__str_addn(s, t, strlen(t)); }
GPUML__FN GPUML__PRINTF(2, 3) void gpuml__str_addf(gpuml__str *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof buf) { gpuml__str_addn(s, buf, (size_t)n); return; }
    {
        char *big = (char *)gpuml__malloc((size_t)n + 1);
        if (!big) { s->oom = 1; return; }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        gpuml__str_addn(s, big, (size_t)n);
        gpuml__free(big);
    }
}
GPUML__FN void gpuml__str_free(gpuml__str *s) { gpuml__free(s->p); s->p = NULL; s->len = s->cap = 0; }
GPUML__FN const char *gpuml__str_c(const gpuml__str *s) { return s->p ? s->p : ""; }

GPUML__FN const char *gpuml__getenv(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* dynamic libraries */
GPUML__FN void *gpuml__dlopen(const char *path)
{
#if GPUML__WIN
    return (void *)LoadLibraryA(path);
#else
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
}
GPUML__FN void *gpuml__dlsym(void *lib, const char *name)
{
#if GPUML__WIN
    FARPROC f = GetProcAddress((HMODULE)lib, name);
    void *p;
    memcpy(&p, &f, sizeof p);   /* ISO C has no function-to-object pointer cast */
    return p;
#else
    return dlsym(lib, name);
#endif
}
GPUML__FN void gpuml__dlclose(void *lib)
{
    if (!lib) return;
#if GPUML__WIN
    FreeLibrary((HMODULE)lib);
#else
    dlclose(lib);
#endif
}
/* the folder a loaded library came from (for libnvrtc-builtins), or 0 */
GPUML__FN int gpuml__lib_dir(void *lib, const char *sym, char *out, size_t cap)
{
#if GPUML__WIN
    char path[1024];
    DWORD n;
    char *slash;
    (void)sym;
    n = GetModuleFileNameA((HMODULE)lib, path, (DWORD)sizeof path);
    if (n == 0 || n >= sizeof path) return 0;
    slash = strrchr(path, '\\');
    if (!slash) return 0;
    *slash = 0;
    if (strlen(path) + 1 > cap) return 0;
    memcpy(out, path, strlen(path) + 1);
    return 1;
#else
    /* dladdr is a GNU extension; fetch it at run time so no feature macro is needed */
    typedef struct { const char *fname; void *fbase; const char *sname; void *saddr; } dlinfo_t;
    typedef int (*dladdr_fn)(const void *, dlinfo_t *);
    void *self = dlopen(NULL, RTLD_NOW), *addr = dlsym(lib, sym);
    dladdr_fn f = NULL;
    dlinfo_t info;
    const char *slash;
    size_t n;
    if (self) {
        void *p = dlsym(self, "dladdr");
        memcpy(&f, &p, sizeof f);
        dlclose(self);
    }
    if (!f || !addr || !f(addr, &info) || !info.fname) return 0;
    slash = strrchr(info.fname, '/');
    if (!slash) return 0;
    n = (size_t)(slash - info.fname);
    if (n + 1 > cap) return 0;
    memcpy(out, info.fname, n);
    out[n] = 0;
    return 1;
#endif
}

/* mutexes, threads, condition variables */
#if GPUML__WIN
typedef CRITICAL_SECTION gpuml__mutex;
typedef CONDITION_VARIABLE gpuml__cond;
typedef HANDLE gpuml__thread;
GPUML__FN void gpuml__mutex_init(gpuml__mutex *m) { InitializeCriticalSection(m); }
GPUML__FN void gpuml__mutex_destroy(gpuml__mutex *m) { DeleteCriticalSection(m); }
GPUML__FN void gpuml__lock(gpuml__mutex *m) { EnterCriticalSection(m); }
GPUML__FN void gpuml__unlock(gpuml__mutex *m) { LeaveCriticalSection(m); }
GPUML__FN void gpuml__cond_init(gpuml__cond *c) { InitializeConditionVariable(c); }
GPUML__FN void gpuml__cond_destroy(gpuml__cond *c) { (void)c; }
GPUML__FN void gpuml__cond_wait(gpuml__cond *c, gpuml__mutex *m) { SleepConditionVariableCS(c, m, INFINITE); }
GPUML__FN void gpuml__cond_broadcast(gpuml__cond *c) { WakeAllConditionVariable(c); }
#else
typedef pthread_mutex_t gpuml__mutex;
typedef pthread_cond_t gpuml__cond;
typedef pthread_t gpuml__thread;
GPUML__FN void gpuml__mutex_init(gpuml__mutex *m) { pthread_mutex_init(m, NULL); }
GPUML__FN void gpuml__mutex_destroy(gpuml__mutex *m) { pthread_mutex_destroy(m); }
GPUML__FN void gpuml__lock(gpuml__mutex *m) { pthread_mutex_lock(m); }
GPUML__FN void gpuml__unlock(gpuml__mutex *m) { pthread_mutex_unlock(m); }
GPUML__FN void gpuml__cond_init(gpuml__cond *c) { pthread_cond_init(c, NULL); }
GPUML__FN void gpuml__cond_destroy(gpuml__cond *c) { pthread_cond_destroy(c); }
GPUML__FN void gpuml__cond_wait(gpuml__cond *c, gpuml__mutex *m) { pthread_cond_wait(c, m); }
GPUML__FN void gpuml__cond_broadcast(gpuml__cond *c) { pthread_cond_broadcast(c); }
#endif

/* The process-wide lock guards the shared cubin cache. */
static gpuml__mutex gpuml__global_mutex;
#if GPUML__WIN
static INIT_ONCE gpuml__global_once = INIT_ONCE_STATIC_INIT;
static BOOL CALLBACK gpuml__global_init(PINIT_ONCE o, PVOID p, PVOID *c)
{ (void)o; (void)p; (void)c; gpuml__mutex_init(&gpuml__global_mutex); return TRUE; }
GPUML__FN void gpuml__global_lock(void)
{
    InitOnceExecuteOnce(&gpuml__global_once, gpuml__global_init, NULL, NULL);
    gpuml__lock(&gpuml__global_mutex);
}
#else
static pthread_once_t gpuml__global_once = PTHREAD_ONCE_INIT;
static void gpuml__global_init(void) { gpuml__mutex_init(&gpuml__global_mutex); }
GPUML__FN void gpuml__global_lock(void)
{
    pthread_once(&gpuml__global_once, gpuml__global_init);
    gpuml__lock(&gpuml__global_mutex);
}
#endif
GPUML__FN void gpuml__global_unlock(void) { gpuml__unlock(&gpuml__global_mutex); }

GPUML__FN int gpuml__num_cores(void)
{
#if GPUML__WIN
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return (int)si.dwNumberOfProcessors;
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

GPUML__FN int gpuml__cpu_has_avx2_fma(void)
{
#if GPUML__HAVE_AVX2_PATH
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return cached;
#else
    return 0;
#endif
}

/* 128-bit hash (two lanes of FNV-1a with a final mix) for cache keys and verification */
typedef struct gpuml__hash { gpuml__u64 lo, hi; } gpuml__hash;
GPUML__FN gpuml__u64 gpuml__mix64(gpuml__u64 x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
GPUML__FN void gpuml__hash_add(gpuml__hash *h, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    for (i = 0; i < n; i++) {
        h->lo = (h->lo ^ p[i]) * 0x100000001b3ULL;
        h->hi = (h->hi ^ p[i]) * 0x100000001b3ULL;
        h->hi ^= h->hi >> 29;
    }
}
GPUML__FN void gpuml__hash_init(gpuml__hash *h) { h->lo = 0xcbf29ce484222325ULL; h->hi = 0x84222325cbf29ce4ULL; }
GPUML__FN gpuml__hash gpuml__hash_final(gpuml__hash h)
{
    gpuml__hash r;
    r.lo = gpuml__mix64(h.lo ^ gpuml__mix64(h.hi));
    r.hi = gpuml__mix64(h.hi + 0x9e3779b97f4a7c15ULL);
    return r;
}
GPUML__FN gpuml__hash gpuml__hash_bytes(const void *data, size_t n)
{
    gpuml__hash h;
    gpuml__hash_init(&h);
    gpuml__hash_add(&h, data, n);
    return gpuml__hash_final(h);
}

/* file helpers for the disk cache */
GPUML__FN int gpuml__mkdir_private(const char *path)   /* 1 when the folder exists afterwards */
{
#if GPUML__WIN
    if (_mkdir(path) == 0) return 1;
    {
        DWORD a = GetFileAttributesA(path);
        return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
    }
#else
    struct stat st;
    if (mkdir(path, 0700) == 0) return 1;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
#endif
}
/* mkdir -p, each new level private to the user */
GPUML__FN int gpuml__mkdirs(const char *path)
{
    char buf[1024];
    size_t n = strlen(path), i;
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, path, n + 1);
    for (i = 1; i < n; i++) {
        if (buf[i] == '/' || buf[i] == '\\') {
            char c = buf[i];
            buf[i] = 0;
            if (!(i == 2 && buf[1] == ':')) gpuml__mkdir_private(buf);
            buf[i] = c;
        }
    }
    return gpuml__mkdir_private(buf);
}
GPUML__FN int gpuml__read_file(const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    long n;
    unsigned char *p;
    *data = NULL; *size = 0;
    if (!f) return 0;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return 0; }
    p = (unsigned char *)gpuml__malloc((size_t)n);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) { gpuml__free(p); fclose(f); return 0; }
    fclose(f);
    *data = p; *size = (size_t)n;
    return 1;
}
GPUML__FN long gpuml__pid(void)
{
#if GPUML__WIN
    return (long)GetCurrentProcessId();
#else
    return (long)getpid();
#endif
}
/* write to a unique temporary name, then rename over the final one: readers see a whole
   file or none, and concurrent writers of the same key each leave a whole file */
GPUML__FN int gpuml__write_file_atomic(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    static volatile long counter;
    char tmp[1400];
    FILE *f;
    int ok;
    long c;
#if GPUML__WIN
    c = InterlockedIncrement(&counter);
#else
    c = __sync_add_and_fetch(&counter, 1);
#endif
    snprintf(tmp, sizeof tmp, "%.1300s.tmp.%ld.%ld", path, gpuml__pid(), c);
    f = fopen(tmp, "wb");
    if (!f) return 0;
    ok = fwrite(a, 1, na, f) == na && fwrite(b, 1, nb, f) == nb;
    ok = (fclose(f) == 0) && ok;
#if GPUML__WIN
    ok = ok && MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING);
#else
    ok = ok && rename(tmp, path) == 0;
#endif
    if (!ok) remove(tmp);
    return ok;
}

/* ------------------------------------------- CUDA driver and NVRTC declarations ---- */
/* Our own mirror of the few types and entry points we use (no cuda.h / nvrtc.h), with
   private names so that a user who also includes cuda.h gets no clash. */
typedef int gpuml__CUresult;
typedef int gpuml__CUdevice;
typedef struct gpuml__CUctx_st *gpuml__CUcontext;
typedef struct gpuml__CUmod_st *gpuml__CUmodule;
typedef struct gpuml__CUfunc_st *gpuml__CUfunction;
typedef struct gpuml__CUstream_st *gpuml__CUstream;
typedef struct gpuml__CUevent_st *gpuml__CUevent;
typedef unsigned long long gpuml__CUdeviceptr;
typedef struct gpuml__nvrtcProgram_st *gpuml__nvrtcProgram;
typedef int gpuml__nvrtcResult;

enum {
    GPUML__CUDA_SUCCESS = 0, GPUML__CUDA_ERROR_OUT_OF_MEMORY = 2, GPUML__CUDA_ERROR_NOT_READY = 600,
    GPUML__CU_ATTR_MAX_THREADS_PER_BLOCK = 1, GPUML__CU_ATTR_CLOCK_RATE = 13,
    GPUML__CU_ATTR_SM_COUNT = 16, GPUML__CU_ATTR_L2_SIZE = 38,
    GPUML__CU_ATTR_CC_MAJOR = 75, GPUML__CU_ATTR_CC_MINOR = 76,
    GPUML__CU_ATTR_SMEM_OPTIN = 97,
    GPUML__CU_FUNC_ATTR_MAX_DYN_SMEM = 8,
    GPUML__CU_STREAM_NON_BLOCKING = 1, GPUML__CU_EVENT_DISABLE_TIMING = 2
};

/* X-macro: name in our table, symbol in the library, signature */
#define GPUML__CUDA_FUNCS(X) \
    X(Init, "cuInit", gpuml__CUresult, (unsigned)) \
    X(DriverGetVersion, "cuDriverGetVersion", gpuml__CUresult, (int *)) \
    X(DeviceGetCount, "cuDeviceGetCount", gpuml__CUresult, (int *)) \
    X(DeviceGet, "cuDeviceGet", gpuml__CUresult, (gpuml__CUdevice *, int)) \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", gpuml__CUresult, (int *, int, gpuml__CUdevice)) \
    X(DeviceGetName, "cuDeviceGetName", gpuml__CUresult, (char *, int, gpuml__CUdevice)) \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2", gpuml__CUresult, (size_t *, gpuml__CUdevice)) \
    X(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", gpuml__CUresult, (gpuml__CUcontext *, gpuml__CUdevice)) \
    X(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", gpuml__CUresult, (gpuml__CUdevice)) \
    X(CtxSetCurrent, "cuCtxSetCurrent", gpuml__CUresult, (gpuml__CUcontext)) \
    X(StreamCreate, "cuStreamCreate", gpuml__CUresult, (gpuml__CUstream *, unsigned)) \
    X(StreamDestroy, "cuStreamDestroy_v2", gpuml__CUresult, (gpuml__CUstream)) \
    X(StreamSynchronize, "cuStreamSynchronize", gpuml__CUresult, (gpuml__CUstream)) \
    X(EventCreate, "cuEventCreate", gpuml__CUresult, (gpuml__CUevent *, unsigned)) \
    X(EventDestroy, "cuEventDestroy_v2", gpuml__CUresult, (gpuml__CUevent)) \
    X(EventRecord, "cuEventRecord", gpuml__CUresult, (gpuml__CUevent, gpuml__CUstream)) \
    X(EventSynchronize, "cuEventSynchronize", gpuml__CUresult, (gpuml__CUevent)) \
    X(EventElapsedTime, "cuEventElapsedTime", gpuml__CUresult, (float *, gpuml__CUevent, gpuml__CUevent)) \
    X(MemAlloc, "cuMemAlloc_v2", gpuml__CUresult, (gpuml__CUdeviceptr *, size_t)) \
    X(MemFree, "cuMemFree_v2", gpuml__CUresult, (gpuml__CUdeviceptr)) \
    X(MemAllocHost, "cuMemAllocHost_v2", gpuml__CUresult, (void **, size_t)) \
    X(MemFreeHost, "cuMemFreeHost", gpuml__CUresult, (void *)) \
    X(MemGetInfo, "cuMemGetInfo_v2", gpuml__CUresult, (size_t *, size_t *)) \
    X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", gpuml__CUresult, (gpuml__CUdeviceptr, const void *, size_t, gpuml__CUstream)) \
    X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", gpuml__CUresult, (void *, gpuml__CUdeviceptr, size_t, gpuml__CUstream)) \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", gpuml__CUresult, (gpuml__CUdeviceptr, gpuml__CUdeviceptr, size_t, gpuml__CUstream)) \
    X(ModuleLoadData, "cuModuleLoadData", gpuml__CUresult, (gpuml__CUmodule *, const void *)) \
    X(ModuleUnload, "cuModuleUnload", gpuml__CUresult, (gpuml__CUmodule)) \
    X(ModuleGetFunction, "cuModuleGetFunction", gpuml__CUresult, (gpuml__CUfunction *, gpuml__CUmodule, const char *)) \
    X(FuncSetAttribute, "cuFuncSetAttribute", gpuml__CUresult, (gpuml__CUfunction, int, int)) \
    X(LaunchKernel, "cuLaunchKernel", gpuml__CUresult, (gpuml__CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, gpuml__CUstream, void **, void **)) \
    X(GetErrorName, "cuGetErrorName", gpuml__CUresult, (gpuml__CUresult, const char **))

#define GPUML__NVRTC_FUNCS(X) \
    X(Version, "nvrtcVersion", gpuml__nvrtcResult, (int *, int *)) \
    X(GetErrorString, "nvrtcGetErrorString", const char *, (gpuml__nvrtcResult)) \
    X(CreateProgram, "nvrtcCreateProgram", gpuml__nvrtcResult, (gpuml__nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)) \
    X(DestroyProgram, "nvrtcDestroyProgram", gpuml__nvrtcResult, (gpuml__nvrtcProgram *)) \
    X(CompileProgram, "nvrtcCompileProgram", gpuml__nvrtcResult, (gpuml__nvrtcProgram, int, const char *const *)) \
    X(GetProgramLogSize, "nvrtcGetProgramLogSize", gpuml__nvrtcResult, (gpuml__nvrtcProgram, size_t *)) \
    X(GetProgramLog, "nvrtcGetProgramLog", gpuml__nvrtcResult, (gpuml__nvrtcProgram, char *)) \
    X(GetPTXSize, "nvrtcGetPTXSize", gpuml__nvrtcResult, (gpuml__nvrtcProgram, size_t *)) \
    X(GetPTX, "nvrtcGetPTX", gpuml__nvrtcResult, (gpuml__nvrtcProgram, char *)) \
    X(GetCUBINSize, "nvrtcGetCUBINSize", gpuml__nvrtcResult, (gpuml__nvrtcProgram, size_t *)) \
    X(GetCUBIN, "nvrtcGetCUBIN", gpuml__nvrtcResult, (gpuml__nvrtcProgram, char *)) \
    X(GetNumSupportedArchs, "nvrtcGetNumSupportedArchs", gpuml__nvrtcResult, (int *)) \
    X(GetSupportedArchs, "nvrtcGetSupportedArchs", gpuml__nvrtcResult, (int *))

/* entry points that older drivers lack: NULL there, and the paths that need them step aside */
typedef gpuml__CUresult (*gpuml__TensorMapEncodeTiled_fn)(void *map, int dtype, unsigned rank, void *addr,
                                                          const gpuml__u64 *dims, const gpuml__u64 *strides,
                                                          const unsigned *box, const unsigned *estrides,
                                                          int interleave, int swizzle, int l2promo, int oobfill);

#define GPUML__DECL_FN(name, sym, ret, args) ret (*name) args;
typedef struct gpuml__cuda_api {
    GPUML__CUDA_FUNCS(GPUML__DECL_FN)
    gpuml__TensorMapEncodeTiled_fn TensorMapEncodeTiled;   /* optional (CUDA 12+) */
} gpuml__cuda_api;
typedef struct gpuml__nvrtc_api { GPUML__NVRTC_FUNCS(GPUML__DECL_FN) } gpuml__nvrtc_api;
#undef GPUML__DECL_FN

/* NVRTC, loaded once per process (several contexts and the compile-only tools share it) */
typedef struct gpuml__nvrtc {
    void *lib, *builtins;
    gpuml__nvrtc_api f;
    int major, minor;
    int archs[64], narchs;     /* supported sm_XY as XY */
    char path[1024];
} gpuml__nvrtc;

/* ---------------------------------------------------------------- context ---- */
typedef struct gpuml__block {          /* a cached device (or host) allocation */
    gpuml__CUdeviceptr ptr;
    size_t size;
    struct gpuml__block *next;
} gpuml__block;

typedef struct gpuml__fn_entry {       /* per-context cache of loaded kernels */
    gpuml__hash key;
    gpuml__CUfunction fn;
    struct gpuml__fn_entry *next;
} gpuml__fn_entry;

typedef struct gpuml__module_entry {
    gpuml__hash key;
    gpuml__CUmodule mod;
    struct gpuml__module_entry *next;
} gpuml__module_entry;

typedef struct gpuml__pool gpuml__pool;

#define GPUML__QUARANTINE 256    /* freed handles kept invalid (not reused) before release */
#define GPUML__MAGIC_TENSOR 0x67706d6c54656e73ULL
#define GPUML__MAGIC_KERNEL 0x67706d6c4b65726eULL
#define GPUML__MAGIC_DEAD   0xdeadbeefdeadbeefULL

struct gpuml_ctx {
    gpuml_backend backend;
    gpuml_status status;
    gpuml__str msg;
    char reason[2048];           /* why this backend */
    int failed;                  /* a device fault made the CUDA context unusable */
    gpuml_log_fn log_fn;
    void *log_user;
    int log_level;
    char device_name[256];
    int arch;                    /* cc major*10+minor, 0 on the CPU */
    int sm_count, smem_optin, l2_bytes, clock_khz;
    gpuml__pool *pool;           /* CPU threads */
    /* cache */
    char cache_dir[1024];
    int cache_off;
    long jit_compiles, jit_disk_hits, jit_mem_hits;
    /* memory */
    gpuml__block *free_blocks;
    gpuml_memory_stats mstats;
    /* handles */
    void *quarantine[GPUML__QUARANTINE];
    int nquarantine;
    /* CUDA */
    void *cuda_lib;
    gpuml__cuda_api cu;
    gpuml__nvrtc *rtc;
    gpuml__CUdevice dev;
    gpuml__CUcontext cuctx;
    int have_cuctx;
    gpuml__CUstream stream;
    void *stage;                 /* pinned staging buffer for host transfers */
    size_t stage_size;
    gpuml__CUevent stage_event;
    int stage_pending;
    gpuml__fn_entry *fns;
    gpuml__module_entry *modules;
};

/* ----------------------------------------------------------------- errors ---- */
GPUML__DEF const char *gpuml_status_string(gpuml_status s)
{
    switch (s) {
    case GPUML_SUCCESS: return "success";
    case GPUML_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GPUML_ERROR_SHAPE: return "shape mismatch";
    case GPUML_ERROR_DTYPE: return "unsupported dtype";
    case GPUML_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GPUML_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case GPUML_ERROR_LIBRARY_NOT_FOUND: return "library not found";
    case GPUML_ERROR_COMPILE: return "kernel compilation failed";
    case GPUML_ERROR_CUDA: return "CUDA error";
    case GPUML_ERROR_NOT_SUPPORTED: return "not supported";
    case GPUML_ERROR_NEEDS_GPU: return "needs a GPU";
    case GPUML_ERROR_CONTEXT_FAILED: return "context failed";
    case GPUML_ERROR_WRONG_CONTEXT: return "tensor belongs to another context";
    case GPUML_ERROR_FREED: return "handle was freed";
    case GPUML_ERROR_ALIAS: return "output overlaps an input";
    case GPUML_ERROR_IO: return "I/O error";
    }
    return "unknown status";
}

GPUML__FN void gpuml__log(gpuml_ctx *ctx, gpuml_log_level level, const char *fmt, ...) GPUML__PRINTF(3, 4);
GPUML__FN void gpuml__log(gpuml_ctx *ctx, gpuml_log_level level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (!ctx || !ctx->log_fn || (int)level > ctx->log_level) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->log_fn(ctx->log_user, level, buf);
}

/* Records an error on the context and returns its status: the one way every op fails. */
GPUML__FN gpuml_status gpuml__fail(gpuml_ctx *ctx, gpuml_status st, const char *fmt, ...) GPUML__PRINTF(3, 4);
GPUML__FN gpuml_status gpuml__fail(gpuml_ctx *ctx, gpuml_status st, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    if (!ctx) return st;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->status = st;
    ctx->msg.len = 0;
    if (ctx->msg.p) ctx->msg.p[0] = 0;
    ctx->msg.oom = 0;
    gpuml__str_add(&ctx->msg, buf);
    gpuml__log(ctx, GPUML_LOG_ERROR, "%s", buf);
    return st;
}
/* append to the current message (for NVRTC logs, which can be long) */
GPUML__FN void gpuml__fail_append(gpuml_ctx *ctx, const char *text)
{
    if (ctx) gpuml__str_add(&ctx->msg, text);
}

GPUML__DEF gpuml_status gpuml_last_status(const gpuml_ctx *ctx) { return ctx ? ctx->status : GPUML_ERROR_OUT_OF_MEMORY; }
GPUML__DEF const char *gpuml_last_error(const gpuml_ctx *ctx)
{
    if (!ctx) return "gpuml: no context (out of host memory while creating it)";
    return ctx->msg.oom ? "gpuml: out of host memory while formatting the error" : gpuml__str_c(&ctx->msg);
}
GPUML__DEF void gpuml_clear_error(gpuml_ctx *ctx)
{
    if (!ctx) return;
    ctx->status = GPUML_SUCCESS;
    ctx->msg.len = 0;
    ctx->msg.oom = 0;
    if (ctx->msg.p) ctx->msg.p[0] = 0;
}

GPUML__FN const char *gpuml__cu_name(gpuml_ctx *ctx, gpuml__CUresult r)
{
    const char *s = NULL;
    if (ctx && ctx->cu.GetErrorName && ctx->cu.GetErrorName(r, &s) == 0 && s) return s;
    return "CUDA_ERROR_UNKNOWN";
}
/* Sticky faults (illegal address, launch failure, ...) poison the CUDA context: after one
   of them nothing more can run, so the gpuml context is marked failed. */
GPUML__FN int gpuml__cu_sticky(gpuml__CUresult r)
{
    return r == 700 || r == 701 || r == 702 || r == 704 || r == 714 || r == 715 || r == 716 ||
           r == 717 || r == 718 || r == 719 || r == 999;
}
GPUML__FN gpuml_status gpuml__cu_fail(gpuml_ctx *ctx, gpuml__CUresult r, const char *what)
{
    if (r == GPUML__CUDA_ERROR_OUT_OF_MEMORY)
        return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of device memory (%s)", what, gpuml__cu_name(ctx, r));
    if (gpuml__cu_sticky(r)) {
        ctx->failed = 1;
        return gpuml__fail(ctx, GPUML_ERROR_CUDA, "%s: %s (error %d); the device reported a fault in "
                           "earlier work and this context can no longer be used", what, gpuml__cu_name(ctx, r), r);
    }
    return gpuml__fail(ctx, GPUML_ERROR_CUDA, "%s: %s (error %d)", what, gpuml__cu_name(ctx, r), r);
}
#define GPUML__CU(ctx, call, what) \
    do { gpuml__CUresult gpuml__r_ = (call); if (gpuml__r_ != 0) return gpuml__cu_fail(ctx, gpuml__r_, what); } while (0)

/* -------------------------------------------------------------------- loader ---- */
#ifndef GPUML_NO_CUDA
/* Tries each candidate; returns the handle and the path that worked, else NULL with the
   list of attempts appended to `tried`. */
GPUML__FN void *gpuml__try_load(const char *path, gpuml__str *tried)
{
    void *h = gpuml__dlopen(path);
    if (!h) {
        if (tried->len) gpuml__str_add(tried, ", ");
        gpuml__str_add(tried, path);
    }
    return h;
}

/* the folders searched after the plain names */
GPUML__FN int gpuml__search_dirs(char dirs[][512], int max)
{
    int n = 0, v;
    const char *env[4];
    int i;
    env[0] = gpuml__getenv("CUDA_PATH"); env[1] = gpuml__getenv("CUDA_HOME");
    env[2] = gpuml__getenv("VIRTUAL_ENV"); env[3] = gpuml__getenv("CONDA_PREFIX");
#if GPUML__WIN
    for (i = 0; i < 2 && n < max; i++)
        if (env[i]) snprintf(dirs[n++], 512, "%s\\bin", env[i]);
    for (i = 0; i < 2 && n < max; i++)
        if (env[i]) snprintf(dirs[n++], 512, "%s\\bin\\x64", env[i]);
    (void)v;
#else
    for (i = 0; i < 2 && n < max; i++)
        if (env[i]) snprintf(dirs[n++], 512, "%s/lib64", env[i]);
    if (n < max) snprintf(dirs[n++], 512, "/usr/local/cuda/lib64");
#if defined(__aarch64__)
    if (n < max) snprintf(dirs[n++], 512, "/usr/local/cuda/targets/sbsa-linux/lib");
#else
    if (n < max) snprintf(dirs[n++], 512, "/usr/local/cuda/targets/x86_64-linux/lib");
#endif
    if (n < max) snprintf(dirs[n++], 512, "/opt/cuda/lib64");
    if (n < max) snprintf(dirs[n++], 512, "/usr/lib/wsl/lib");
    /* pip wheels (nvidia-cuda-nvrtc): <prefix>/lib/pythonX.Y/site-packages/nvidia/... */
    for (i = 2; i < 4; i++) {
        if (!env[i]) continue;
        for (v = 14; v >= 8 && n + 2 <= max; v--) {
            snprintf(dirs[n++], 512, "%s/lib/python3.%d/site-packages/nvidia/cu13/lib", env[i], v);
            snprintf(dirs[n++], 512, "%s/lib/python3.%d/site-packages/nvidia/cuda_nvrtc/lib", env[i], v);
        }
    }
#endif
    return n;
}

/* Loads a library: explicit path (must work), else the names, else names inside the folders. */
GPUML__FN void *gpuml__load_lib(const char *explicit_path, const char *const *names, gpuml__str *tried, char *loaded, size_t cap)
{
    char dirs[40][512], path[1100];
    int nd, i, j;
    void *h;
    if (explicit_path) {
        h = gpuml__try_load(explicit_path, tried);
        if (h) snprintf(loaded, cap, "%s", explicit_path);
        return h;
    }
    for (j = 0; names[j]; j++)
        if ((h = gpuml__try_load(names[j], tried)) != NULL) { snprintf(loaded, cap, "%s", names[j]); return h; }
    nd = gpuml__search_dirs(dirs, 40);
    for (i = 0; i < nd; i++) {
        int dup = 0, k;
        for (k = 0; k < i; k++) dup |= strcmp(dirs[k], dirs[i]) == 0;
        for (j = 0; names[j] && !dup; j++) {
            snprintf(path, sizeof path, "%.500s%s%.200s", dirs[i], GPUML__WIN ? "\\" : "/", names[j]);
            if ((h = gpuml__try_load(path, tried)) != NULL) { snprintf(loaded, cap, "%.1000s", path); return h; }
        }
    }
    return NULL;
}

static const char *const gpuml__cuda_names[] = {
#if GPUML__WIN
    "nvcuda.dll",
#else
    "libcuda.so.1", "libcuda.so",
#endif
    0 };
static const char *const gpuml__nvrtc_names[] = {
#if GPUML__WIN
    "nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll",
#else
    "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so",
#endif
    0 };

/* Resolves a table of entry points; on a missing one, says which. */
GPUML__FN int gpuml__resolve(void *lib, void **slots, const char *const *syms, int n, const char **missing)
{
    int i;
    for (i = 0; i < n; i++) {
        void *p = gpuml__dlsym(lib, syms[i]);
        if (!p) { *missing = syms[i]; return 0; }
        slots[i] = p;
    }
    return 1;
}
#define GPUML__SYM_NAME(name, sym, ret, args) sym,
static const char *const gpuml__cuda_syms[] = { GPUML__CUDA_FUNCS(GPUML__SYM_NAME) };
static const char *const gpuml__nvrtc_syms[] = { GPUML__NVRTC_FUNCS(GPUML__SYM_NAME) };
#undef GPUML__SYM_NAME

/* One NVRTC per process per explicit path: loaded on first need, kept until exit
   (unloading it while another context compiles would be worse than the few MB it holds). */
static gpuml__nvrtc gpuml__rtc_global;
static int gpuml__rtc_state;          /* 0 not tried, 1 loaded, -1 failed */
static char gpuml__rtc_error[2048];

/* Loads NVRTC (and preloads libnvrtc-builtins from the same folder). 0 on failure with why. */
GPUML__FN gpuml__nvrtc *gpuml__nvrtc_get(const char *explicit_path, char *why, size_t why_cap)
{
    gpuml__nvrtc *r = &gpuml__rtc_global;
    gpuml__str tried = {0, 0, 0, 0};
    const char *missing = NULL;
    char dir[1024], bpath[1200];
    gpuml__global_lock();
    if (gpuml__rtc_state == 1 && explicit_path) {
        /* an explicit path must itself load, even when another NVRTC already did */
        void *h = gpuml__dlopen(explicit_path);
        if (!h) {
            snprintf(why, why_cap, "libnvrtc not found (tried %.1800s)", explicit_path);
            gpuml__global_unlock();
            return NULL;
        }
        gpuml__dlclose(h);
    }
    if (gpuml__rtc_state == 1) { gpuml__global_unlock(); return r; }
    if (gpuml__rtc_state == -1 && !explicit_path) { snprintf(why, why_cap, "%s", gpuml__rtc_error); gpuml__global_unlock(); return NULL; }
    memset(r, 0, sizeof *r);
    r->lib = gpuml__load_lib(explicit_path, gpuml__nvrtc_names, &tried, r->path, sizeof r->path);
    if (!r->lib) {
        snprintf(gpuml__rtc_error, sizeof gpuml__rtc_error, "libnvrtc not found (tried %s)", gpuml__str_c(&tried));
        goto fail;
    }
    if (!gpuml__resolve(r->lib, (void **)&r->f, gpuml__nvrtc_syms, (int)GPUML__COUNT(gpuml__nvrtc_syms), &missing)) {
        snprintf(gpuml__rtc_error, sizeof gpuml__rtc_error, "%s lacks %s (too old an NVRTC?)", r->path, missing);
        gpuml__dlclose(r->lib);
        goto fail;
    }
    r->f.Version(&r->major, &r->minor);
    if (r->f.GetNumSupportedArchs(&r->narchs) != 0 || r->narchs <= 0 || r->narchs > 64 ||
        r->f.GetSupportedArchs(r->archs) != 0)
        r->narchs = 0;
    /* NVRTC dlopens libnvrtc-builtins at the first compile; make sure it is found */
    if (gpuml__lib_dir(r->lib, "nvrtcVersion", dir, sizeof dir)) {
#if GPUML__WIN
        snprintf(bpath, sizeof bpath, "%s\\nvrtc-builtins64_%d%d.dll", dir, r->major, r->minor);
#else
        snprintf(bpath, sizeof bpath, "%s/libnvrtc-builtins.so.%d.%d", dir, r->major, r->minor);
#endif
        r->builtins = gpuml__dlopen(bpath);
    }
    gpuml__rtc_state = 1;
    gpuml__str_free(&tried);
    gpuml__global_unlock();
    return r;
fail:
    r->lib = NULL;
    if (!explicit_path) gpuml__rtc_state = -1;
    snprintf(why, why_cap, "%s", gpuml__rtc_error);
    gpuml__str_free(&tried);
    gpuml__global_unlock();
    return NULL;
}

/* Loads the driver, picks the device, creates the stream.  On failure fills ctx->reason. */
GPUML__FN gpuml_status gpuml__cuda_open(gpuml_ctx *ctx, const gpuml_desc *d)
{
    gpuml__str tried = {0, 0, 0, 0};
    const char *missing = NULL, *path;
    char loaded[1024], why[2048];
    int count = 0, v = 0, major = 0, minor = 0;
    gpuml__CUresult r;
    path = d->cuda_lib ? d->cuda_lib : gpuml__getenv("GPUML_CUDA_LIB");
    ctx->cuda_lib = gpuml__load_lib(path, gpuml__cuda_names, &tried, loaded, sizeof loaded);
    if (!ctx->cuda_lib) {
        snprintf(ctx->reason, sizeof ctx->reason, "%s (tried %s)",
                 path ? "the libcuda given could not be loaded" : "libcuda not found, no NVIDIA driver", gpuml__str_c(&tried));
        gpuml__str_free(&tried);
        return path ? GPUML_ERROR_LIBRARY_NOT_FOUND : GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    gpuml__str_free(&tried);
    if (!gpuml__resolve(ctx->cuda_lib, (void **)&ctx->cu, gpuml__cuda_syms, (int)GPUML__COUNT(gpuml__cuda_syms), &missing)) {
        snprintf(ctx->reason, sizeof ctx->reason, "%s lacks %s (driver too old)", loaded, missing);
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    {
        void *f = gpuml__dlsym(ctx->cuda_lib, "cuTensorMapEncodeTiled");
        memcpy(&ctx->cu.TensorMapEncodeTiled, &f, sizeof f);
    }
    if ((r = ctx->cu.Init(0)) != 0) {
        snprintf(ctx->reason, sizeof ctx->reason, "cuInit failed: %s (error %d)", gpuml__cu_name(ctx, r), r);
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    ctx->cu.DriverGetVersion(&v);
    if ((r = ctx->cu.DeviceGetCount(&count)) != 0 || count == 0) {
        snprintf(ctx->reason, sizeof ctx->reason, "no CUDA device (driver %d.%d)", v / 1000, (v % 1000) / 10);
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    if (d->device < 0 || d->device >= count) {
        snprintf(ctx->reason, sizeof ctx->reason, "device %d asked for, but there are %d", d->device, count);
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    path = d->nvrtc_lib ? d->nvrtc_lib : gpuml__getenv("GPUML_NVRTC_LIB");
    ctx->rtc = gpuml__nvrtc_get(path, why, sizeof why);
    if (!ctx->rtc) {
        snprintf(ctx->reason, sizeof ctx->reason, "%s", why);
        return path ? GPUML_ERROR_LIBRARY_NOT_FOUND : GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    if ((r = ctx->cu.DeviceGet(&ctx->dev, d->device)) != 0 ||
        (r = ctx->cu.PrimaryCtxRetain(&ctx->cuctx, ctx->dev)) != 0) {
        snprintf(ctx->reason, sizeof ctx->reason, "could not open device %d: %s", d->device, gpuml__cu_name(ctx, r));
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    ctx->have_cuctx = 1;
    ctx->cu.CtxSetCurrent(ctx->cuctx);
    ctx->cu.DeviceGetName(ctx->device_name, (int)sizeof ctx->device_name, ctx->dev);
    ctx->cu.DeviceGetAttribute(&major, GPUML__CU_ATTR_CC_MAJOR, ctx->dev);
    ctx->cu.DeviceGetAttribute(&minor, GPUML__CU_ATTR_CC_MINOR, ctx->dev);
    ctx->cu.DeviceGetAttribute(&ctx->sm_count, GPUML__CU_ATTR_SM_COUNT, ctx->dev);
    ctx->cu.DeviceGetAttribute(&ctx->smem_optin, GPUML__CU_ATTR_SMEM_OPTIN, ctx->dev);
    ctx->cu.DeviceGetAttribute(&ctx->l2_bytes, GPUML__CU_ATTR_L2_SIZE, ctx->dev);
    ctx->cu.DeviceGetAttribute(&ctx->clock_khz, GPUML__CU_ATTR_CLOCK_RATE, ctx->dev);
    ctx->arch = major * 10 + minor;
    if ((r = ctx->cu.StreamCreate(&ctx->stream, GPUML__CU_STREAM_NON_BLOCKING)) != 0 ||
        (r = ctx->cu.EventCreate(&ctx->stage_event, GPUML__CU_EVENT_DISABLE_TIMING)) != 0) {
        snprintf(ctx->reason, sizeof ctx->reason, "could not create a stream on device %d: %s", d->device, gpuml__cu_name(ctx, r));
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
    }
    snprintf(ctx->reason, sizeof ctx->reason, "CUDA: %s (sm_%d, driver %d.%d, NVRTC %d.%d from %s)",
             ctx->device_name, ctx->arch, v / 1000, (v % 1000) / 10, ctx->rtc->major, ctx->rtc->minor, ctx->rtc->path);
    return GPUML_SUCCESS;
}
#endif /* GPUML_NO_CUDA */

/* ---------------------------------------------------------------- CPU threads ---- */
typedef void (*gpuml__task_fn)(void *arg, int64_t begin, int64_t end, int thread_index);

struct gpuml__pool {
    int n;                       /* threads including the caller */
    gpuml__thread *threads;
    gpuml__mutex mu;
    gpuml__cond wake, done;
    long generation;             /* bumped for each job */
    int stop, active, busy;
    gpuml__task_fn fn;
    void *arg;
    int64_t total, chunk, next;  /* items, items per grab, next item */
};

/* grabs chunks until the job is drained */
GPUML__FN void gpuml__pool_work(gpuml__pool *p, int tid)
{
    for (;;) {
        int64_t b, e;
        gpuml__lock(&p->mu);
        b = p->next;
        if (b >= p->total) { gpuml__unlock(&p->mu); return; }
        e = GPUML__MIN(b + p->chunk, p->total);
        p->next = e;
        gpuml__unlock(&p->mu);
        p->fn(p->arg, b, e, tid);
    }
}

typedef struct gpuml__worker_arg { gpuml__pool *p; int tid; } gpuml__worker_arg;

#if GPUML__WIN
static DWORD WINAPI gpuml__worker(LPVOID a)
#else
static void *gpuml__worker(void *a)
#endif
{
    gpuml__worker_arg wa = *(gpuml__worker_arg *)a;
    gpuml__pool *p = wa.p;
    long seen = 0;
    gpuml__free(a);
    for (;;) {
        gpuml__lock(&p->mu);
        while (!p->stop && p->generation == seen) gpuml__cond_wait(&p->wake, &p->mu);
        if (p->stop) { gpuml__unlock(&p->mu); break; }
        seen = p->generation;
        gpuml__unlock(&p->mu);
        gpuml__pool_work(p, wa.tid);
        gpuml__lock(&p->mu);
        if (--p->active == 0) gpuml__cond_broadcast(&p->done);
        gpuml__unlock(&p->mu);
    }
    return 0;
}

GPUML__FN gpuml__pool *gpuml__pool_new(int nthreads)
{
    gpuml__pool *p = (gpuml__pool *)gpuml__calloc(sizeof *p);
    int i;
    if (!p) return NULL;
    p->n = 1;
    gpuml__mutex_init(&p->mu);
    gpuml__cond_init(&p->wake);
    gpuml__cond_init(&p->done);
    if (nthreads > 1) p->threads = (gpuml__thread *)gpuml__calloc(sizeof(gpuml__thread) * (size_t)nthreads);
    for (i = 1; p->threads && i < nthreads; i++) {
        gpuml__worker_arg *a = (gpuml__worker_arg *)gpuml__malloc(sizeof *a);
        int ok;
        if (!a) break;
        a->p = p; a->tid = i;
#if GPUML__WIN
        p->threads[i] = CreateThread(NULL, 0, gpuml__worker, a, 0, NULL);
        ok = p->threads[i] != NULL;
#else
        ok = pthread_create(&p->threads[i], NULL, gpuml__worker, a) == 0;
#endif
        if (!ok) { gpuml__free(a); break; }
        p->n = i + 1;
    }
    return p;
}

GPUML__FN void gpuml__pool_free(gpuml__pool *p)
{
    int i;
    if (!p) return;
    gpuml__lock(&p->mu);
    p->stop = 1;
    gpuml__cond_broadcast(&p->wake);
    gpuml__unlock(&p->mu);
    for (i = 1; i < p->n; i++) {
#if GPUML__WIN
        WaitForSingleObject(p->threads[i], INFINITE);
        CloseHandle(p->threads[i]);
#else
        pthread_join(p->threads[i], NULL);
#endif
    }
    gpuml__cond_destroy(&p->wake);
    gpuml__cond_destroy(&p->done);
    gpuml__mutex_destroy(&p->mu);
    gpuml__free(p->threads);
    gpuml__free(p);
}

GPUML__FN int gpuml__pool_size(gpuml__pool *p) { return p ? p->n : 1; }

/* Runs fn over [0,n) in chunks of at least `grain` items on all threads (the caller too).
   A call made from inside a job runs serially. */
GPUML__FN void gpuml__parallel_for(gpuml__pool *p, int64_t n, int64_t grain, gpuml__task_fn fn, void *arg)
{
    int64_t chunk;
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (!p || p->n == 1 || n <= grain) { fn(arg, 0, n, 0); return; }
    gpuml__lock(&p->mu);
    if (p->busy) { gpuml__unlock(&p->mu); fn(arg, 0, n, 0); return; }
    chunk = (n + (int64_t)p->n * 4 - 1) / ((int64_t)p->n * 4);
    p->busy = 1;
    p->fn = fn; p->arg = arg; p->total = n; p->next = 0;
    p->chunk = GPUML__MAX(chunk, grain);
    p->active = p->n - 1;
    p->generation++;
    gpuml__cond_broadcast(&p->wake);
    gpuml__unlock(&p->mu);
    gpuml__pool_work(p, 0);
    gpuml__lock(&p->mu);
    while (p->active > 0) gpuml__cond_wait(&p->done, &p->mu);
    p->busy = 0;
    gpuml__unlock(&p->mu);
}

/* ------------------------------------------------------------------------ JIT ---- */
/* The kernel families of kernels/: each is compiled on first use, per specialization. */
typedef struct gpuml__family {
    const char *name;
    const char *const *src;
    int min_arch;         /* lowest sm it compiles for */
    int hopper;           /* uses sm_90a-only instructions (wgmma, setmaxnreg) */
    int exact;            /* --fmad=false: results must match the CPU bit for bit */
} gpuml__family;

static const gpuml__family gpuml__fam_copy = { "copy", gpuml__ksrc_copy, 50, 0, 1 };

#ifndef GPUML_NO_CUDA
typedef struct gpuml__bin_entry {   /* process-wide in-memory cache of compiled binaries */
    gpuml__hash key;
    unsigned char *bin;
    size_t size;
    int is_ptx;
    struct gpuml__bin_entry *next;
} gpuml__bin_entry;
static gpuml__bin_entry *gpuml__bins;
static long gpuml__jit_stats[3];     /* compiles, disk hits, memory hits (for tests) */

#define GPUML__CACHE_MAGIC "GPUMLJIT"
#define GPUML__CACHE_FORMAT 1u
typedef struct gpuml__cache_header {
    char magic[8];
    gpuml__u32 format, is_ptx;
    gpuml__u64 key_lo, key_hi, size, sum_lo, sum_hi;
} gpuml__cache_header;

/* The compile target for a device: sm_XY as CUBIN when NVRTC knows the arch, else PTX for
   the newest arch it knows (the driver finishes the job). */
GPUML__FN void gpuml__target(const gpuml__nvrtc *rtc, int arch, int hopper, char *opt, size_t cap, int *is_ptx)
{
    int i, known = rtc->narchs == 0, best = 0;
    for (i = 0; i < rtc->narchs; i++) {
        if (rtc->archs[i] == arch) known = 1;
        if (rtc->archs[i] <= arch && rtc->archs[i] > best) best = rtc->archs[i];
    }
    if (known || best == 0) {
        *is_ptx = 0;
        snprintf(opt, cap, "--gpu-architecture=sm_%d%s", arch, hopper && arch == 90 ? "a" : "");
    } else {
        *is_ptx = 1;
        snprintf(opt, cap, "--gpu-architecture=compute_%d", best);
    }
}

/* splits "a b  c" into argv (in place over a copy); returns count */
GPUML__FN int gpuml__split_opts(char *s, const char **argv, int max)
{
    int n = 0;
    while (*s && n < max) {
        while (*s == ' ' || *s == '\t') *s++ = 0;
        if (!*s) break;
        argv[n++] = s;
        while (*s && *s != ' ' && *s != '\t') s++;
    }
    return n;
}

GPUML__FN int gpuml__cache_path(const char *dir, gpuml__hash key, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s%s%016llx%016llx.gpumlbin", dir, GPUML__WIN ? "\\" : "/",
                     (unsigned long long)key.hi, (unsigned long long)key.lo);
    return n > 0 && (size_t)n < cap;
}

/* a cache file is used only if every field checks out; anything else is recompiled */
GPUML__FN int gpuml__cache_load(const char *path, gpuml__hash key, unsigned char **bin, size_t *size, int *is_ptx)
{
    unsigned char *data;
    size_t n;
    gpuml__cache_header h;
    gpuml__hash sum;
    if (!gpuml__read_file(path, &data, &n)) return 0;
    if (n < sizeof h) goto bad;
    memcpy(&h, data, sizeof h);
    if (memcmp(h.magic, GPUML__CACHE_MAGIC, 8) != 0 || h.format != GPUML__CACHE_FORMAT ||
        h.key_lo != key.lo || h.key_hi != key.hi || h.size != n - sizeof h || h.size == 0)
        goto bad;
    sum = gpuml__hash_bytes(data + sizeof h, (size_t)h.size);
    if (sum.lo != h.sum_lo || sum.hi != h.sum_hi) goto bad;
    *bin = (unsigned char *)gpuml__malloc((size_t)h.size + 1);
    if (!*bin) goto bad;
    memcpy(*bin, data + sizeof h, (size_t)h.size);
    (*bin)[h.size] = 0;            /* PTX is loaded as a string */
    *size = (size_t)h.size;
    *is_ptx = (int)h.is_ptx;
    gpuml__free(data);
    return 1;
bad:
    gpuml__free(data);
    return 0;
}

GPUML__FN void gpuml__cache_store(const char *dir, const char *path, gpuml__hash key, const unsigned char *bin, size_t size, int is_ptx)
{
    gpuml__cache_header h;
    gpuml__hash sum = gpuml__hash_bytes(bin, size);
    memset(&h, 0, sizeof h);
    memcpy(h.magic, GPUML__CACHE_MAGIC, 8);
    h.format = GPUML__CACHE_FORMAT;
    h.is_ptx = (gpuml__u32)is_ptx;
    h.key_lo = key.lo; h.key_hi = key.hi; h.size = size;
    h.sum_lo = sum.lo; h.sum_hi = sum.hi;
    if (gpuml__mkdirs(dir)) gpuml__write_file_atomic(path, &h, sizeof h, bin, size);
}

/* Compiles `src` for `arch` (no cache).  On a compile error returns GPUML_ERROR_COMPILE with
   the NVRTC log in *log. */
GPUML__FN gpuml_status gpuml__nvrtc_compile(gpuml__nvrtc *rtc, const char *src, const char *prog_name,
                                            const char *const *opts, int nopts, int is_ptx,
                                            unsigned char **bin, size_t *size, gpuml__str *log)
{
    gpuml__nvrtcProgram prog = NULL;
    gpuml__nvrtcResult r;
    size_t n = 0;
    *bin = NULL; *size = 0;
    r = rtc->f.CreateProgram(&prog, src, prog_name, 0, NULL, NULL);
    if (r != 0) { gpuml__str_addf(log, "nvrtcCreateProgram: %s", rtc->f.GetErrorString(r)); return GPUML_ERROR_COMPILE; }
    r = rtc->f.CompileProgram(prog, nopts, opts);
    if (r != 0) {
        char *text;
        gpuml__str_addf(log, "%s\n", rtc->f.GetErrorString(r));
        if (rtc->f.GetProgramLogSize(prog, &n) == 0 && n > 1 && (text = (char *)gpuml__malloc(n)) != NULL) {
            if (rtc->f.GetProgramLog(prog, text) == 0) gpuml__str_add(log, text);
            gpuml__free(text);
        }
        rtc->f.DestroyProgram(&prog);
        return GPUML_ERROR_COMPILE;
    }
    r = is_ptx ? rtc->f.GetPTXSize(prog, &n) : rtc->f.GetCUBINSize(prog, &n);
    if (r == 0 && n > 0 && (*bin = (unsigned char *)gpuml__malloc(n + 1)) != NULL) {
        r = is_ptx ? rtc->f.GetPTX(prog, (char *)*bin) : rtc->f.GetCUBIN(prog, (char *)*bin);
        (*bin)[n] = 0;
        *size = n;
    }
    rtc->f.DestroyProgram(&prog);
    if (!*bin || r != 0) {
        gpuml__free(*bin);
        *bin = NULL;
        gpuml__str_add(log, r != 0 ? rtc->f.GetErrorString(r) : "out of host memory");
        return r != 0 ? GPUML_ERROR_COMPILE : GPUML_ERROR_OUT_OF_MEMORY;
    }
    return GPUML_SUCCESS;
}

/* Finds or makes the binary for (source, options, arch): memory cache, then disk cache
   (cache_dir NULL = off), then NVRTC.  The caller frees *bin. */
GPUML__FN gpuml_status gpuml__jit_get(gpuml__nvrtc *rtc, const char *cache_dir, const char *src,
                                      const char *prog_name, const char *user_opts, int arch, int hopper,
                                      int exact, unsigned char **bin, size_t *size, int *is_ptx,
                                      gpuml__hash *key_out, gpuml__str *log)
{
    char target[64], version[96], path[1200], *optcopy;
    const char *argv[72];
    int argc = 0, extra;
    gpuml__hash h;
    gpuml__bin_entry *e;
    gpuml_status st;
    gpuml__target(rtc, arch, hopper, target, sizeof target, is_ptx);
    argv[argc++] = target;
    argv[argc++] = "--std=c++17";
    argv[argc++] = exact ? "--fmad=false" : "--fmad=true";
    optcopy = gpuml__strdup(user_opts ? user_opts : "");
    if (!optcopy) return GPUML_ERROR_OUT_OF_MEMORY;
    extra = gpuml__split_opts(optcopy, argv + argc, 64);
    argc += extra;
    snprintf(version, sizeof version, "nvrtc %d.%d gpuml %s", rtc->major, rtc->minor, GPUML_VERSION_STRING);
    gpuml__hash_init(&h);
    gpuml__hash_add(&h, src, strlen(src) + 1);
    { int i; for (i = 0; i < argc; i++) gpuml__hash_add(&h, argv[i], strlen(argv[i]) + 1); }
    gpuml__hash_add(&h, version, strlen(version) + 1);
    h = gpuml__hash_final(h);
    *key_out = h;

    gpuml__global_lock();
    for (e = gpuml__bins; e; e = e->next)
        if (e->key.lo == h.lo && e->key.hi == h.hi) break;
    if (e && (*bin = (unsigned char *)gpuml__malloc(e->size + 1)) != NULL) {
        memcpy(*bin, e->bin, e->size + 1);
        *size = e->size;
        *is_ptx = e->is_ptx;
        gpuml__jit_stats[2]++;
        gpuml__global_unlock();
        gpuml__free(optcopy);
        return GPUML_SUCCESS;
    }
    gpuml__global_unlock();

    st = GPUML_ERROR_COMPILE;
    if (cache_dir && gpuml__cache_path(cache_dir, h, path, sizeof path) &&
        gpuml__cache_load(path, h, bin, size, is_ptx)) {
        st = GPUML_SUCCESS;
        gpuml__global_lock(); gpuml__jit_stats[1]++; gpuml__global_unlock();
    }
    if (st != GPUML_SUCCESS) {
        st = gpuml__nvrtc_compile(rtc, src, prog_name, argv, argc, *is_ptx, bin, size, log);
        gpuml__global_lock(); gpuml__jit_stats[0]++; gpuml__global_unlock();
        if (st == GPUML_SUCCESS && cache_dir && gpuml__cache_path(cache_dir, h, path, sizeof path))
            gpuml__cache_store(cache_dir, path, h, *bin, *size, *is_ptx);
    }
    gpuml__free(optcopy);
    if (st != GPUML_SUCCESS) return st;
    /* keep a copy in memory for the next context / specialization lookup */
    e = (gpuml__bin_entry *)gpuml__malloc(sizeof *e);
    if (e && (e->bin = (unsigned char *)gpuml__malloc(*size + 1)) != NULL) {
        memcpy(e->bin, *bin, *size + 1);
        e->key = h; e->size = *size; e->is_ptx = *is_ptx;
        gpuml__global_lock();
        e->next = gpuml__bins;
        gpuml__bins = e;
        gpuml__global_unlock();
    } else {
        gpuml__free(e);
    }
    return GPUML_SUCCESS;
}

/* empties the process-wide binary cache (the disk cache is untouched) */
GPUML__FN void gpuml__bin_cache_clear(void)
{
    gpuml__bin_entry *e, *n;
    gpuml__global_lock();
    for (e = gpuml__bins; e; e = n) { n = e->next; gpuml__free(e->bin); gpuml__free(e); }
    gpuml__bins = NULL;
    gpuml__global_unlock();
}

/* the whole source of a family: the prelude followed by the family's lines */
GPUML__FN char *gpuml__family_source(const gpuml__family *f)
{
    gpuml__str s = {0, 0, 0, 0};
    int i;
    for (i = 0; gpuml__ksrc_prelude[i]; i++) gpuml__str_add(&s, gpuml__ksrc_prelude[i]);
    for (i = 0; f->src[i]; i++) gpuml__str_add(&s, f->src[i]);
    if (s.oom) { gpuml__str_free(&s); return NULL; }
    return s.p;
}

/* Loads (source, options) as a module of this context; cached per context. */
GPUML__FN gpuml_status gpuml__load_module(gpuml_ctx *ctx, const char *src, const char *prog_name, const char *opts,
                                          int hopper, int exact, gpuml__CUmodule *mod)
{
    unsigned char *bin = NULL;
    size_t size = 0;
    int is_ptx = 0;
    gpuml__hash key;
    gpuml__str log = {0, 0, 0, 0};
    gpuml__module_entry *m;
    gpuml__CUresult r;
    gpuml_status st = gpuml__jit_get(ctx->rtc, ctx->cache_off ? NULL : ctx->cache_dir, src, prog_name, opts,
                                     ctx->arch, hopper, exact, &bin, &size, &is_ptx, &key, &log);
    if (st != GPUML_SUCCESS) {
        gpuml__fail(ctx, st, "compiling %s%s%s for sm_%d failed: ", prog_name, opts && *opts ? " with " : "",
                    opts ? opts : "", ctx->arch);
        gpuml__fail_append(ctx, log.oom ? "(log lost: out of memory)" : gpuml__str_c(&log));
        gpuml__str_free(&log);
        return st;
    }
    gpuml__str_free(&log);
    for (m = ctx->modules; m; m = m->next)
        if (m->key.lo == key.lo && m->key.hi == key.hi) { *mod = m->mod; gpuml__free(bin); return GPUML_SUCCESS; }
    r = ctx->cu.ModuleLoadData(mod, bin);
    gpuml__free(bin);
    if (r != 0) return gpuml__cu_fail(ctx, r, "loading a compiled kernel module");
    m = (gpuml__module_entry *)gpuml__malloc(sizeof *m);
    if (!m) { ctx->cu.ModuleUnload(*mod); return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory"); }
    m->key = key; m->mod = *mod; m->next = ctx->modules;
    ctx->modules = m;
    return GPUML_SUCCESS;
}

/* A library kernel: family + specialization options + kernel name -> function. */
GPUML__FN gpuml_status gpuml__kernel(gpuml_ctx *ctx, const gpuml__family *f, const char *opts, const char *name, gpuml__CUfunction *fn)
{
    gpuml__hash h;
    gpuml__fn_entry *e;
    gpuml__CUmodule mod;
    gpuml__CUresult r;
    gpuml_status st;
    char *src;
    gpuml__hash_init(&h);
    gpuml__hash_add(&h, f->name, strlen(f->name) + 1);
    gpuml__hash_add(&h, opts, strlen(opts) + 1);
    gpuml__hash_add(&h, name, strlen(name) + 1);
    h = gpuml__hash_final(h);
    for (e = ctx->fns; e; e = e->next)
        if (e->key.lo == h.lo && e->key.hi == h.hi) { *fn = e->fn; return GPUML_SUCCESS; }
    if (ctx->arch < f->min_arch)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "kernel family %s needs sm_%d or newer; this device is sm_%d",
                           f->name, f->min_arch, ctx->arch);
    src = gpuml__family_source(f);
    if (!src) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
    st = gpuml__load_module(ctx, src, f->name, opts, f->hopper, f->exact, &mod);
    gpuml__free(src);
    if (st != GPUML_SUCCESS) return st;
    if ((r = ctx->cu.ModuleGetFunction(fn, mod, name)) != 0) return gpuml__cu_fail(ctx, r, name);
    e = (gpuml__fn_entry *)gpuml__malloc(sizeof *e);
    if (!e) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
    e->key = h; e->fn = *fn; e->next = ctx->fns;
    ctx->fns = e;
    return GPUML_SUCCESS;
}

/* The one launch helper for library and user kernels. */
GPUML__FN gpuml_status gpuml__launch(gpuml_ctx *ctx, gpuml__CUfunction fn, const unsigned *grid, const unsigned *block,
                                     unsigned smem, void **args, const char *what)
{
    gpuml__CUresult r;
    if (smem > 48 * 1024) {
        r = ctx->cu.FuncSetAttribute(fn, GPUML__CU_FUNC_ATTR_MAX_DYN_SMEM, (int)smem);
        if (r != 0) return gpuml__cu_fail(ctx, r, what);
    }
    r = ctx->cu.LaunchKernel(fn, grid[0] ? grid[0] : 1, grid[1] ? grid[1] : 1, grid[2] ? grid[2] : 1,
                             block[0] ? block[0] : 1, block[1] ? block[1] : 1, block[2] ? block[2] : 1,
                             smem, ctx->stream, args, NULL);
    if (r != 0) return gpuml__cu_fail(ctx, r, what);
    return GPUML_SUCCESS;
}

/* grid size for a grid-stride loop over n items */
GPUML__FN unsigned gpuml__grid_for(gpuml_ctx *ctx, int64_t n, unsigned block)
{
    int64_t blocks = (n + block - 1) / block, cap = (int64_t)GPUML__MAX(ctx->sm_count, 1) * 16;
    if (blocks < 1) blocks = 1;
    return (unsigned)GPUML__MIN(blocks, cap);
}
#endif /* GPUML_NO_CUDA */

/* --------------------------------------------------------------------- memory ---- */
/* Size classes: 512-byte granules up to 4 KiB, then four classes per power of two, so a
   freed block is reused by any request of the same class (at most 25% slack). */
GPUML__FN size_t gpuml__size_class(size_t n)
{
    size_t p = 4096, step;
    if (n <= 4096) return n <= 512 ? 512 : (n + 511) & ~(size_t)511;
    while (p * 2 < n) p *= 2;
    step = p / 4;
    return (n + step - 1) / step * step;
}

GPUML__FN void gpuml__stats_add(gpuml_ctx *ctx, size_t size)
{
    ctx->mstats.in_use += size;
    if (ctx->mstats.in_use > ctx->mstats.peak) ctx->mstats.peak = ctx->mstats.in_use;
}

#ifndef GPUML_NO_CUDA
/* Gives every cached device block back to the driver. */
GPUML__FN void gpuml__release_blocks(gpuml_ctx *ctx)
{
    gpuml__block *b = ctx->free_blocks, *next;
    for (; b; b = next) {
        next = b->next;
        ctx->cu.MemFree(b->ptr);
        ctx->mstats.cached -= b->size;
        gpuml__free(b);
    }
    ctx->free_blocks = NULL;
}
#endif

/* Device (or, on the CPU backend, host) memory of at least n bytes.  All of a context's
   work runs on one stream, so a block freed by a tensor can be handed out again at once:
   later work on the stream is ordered after the work that last used it. */
GPUML__FN gpuml_status gpuml__mem_alloc(gpuml_ctx *ctx, size_t n, gpuml__CUdeviceptr *ptr, size_t *block_size)
{
    size_t size = gpuml__size_class(n);
    *block_size = size;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        void *p = gpuml__aligned_alloc(size);
        if (!p) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory allocating %llu bytes", (unsigned long long)size);
        *ptr = (gpuml__CUdeviceptr)(uintptr_t)p;
        ctx->mstats.device_allocs++;
        gpuml__stats_add(ctx, size);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__block **pb, *b;
        gpuml__CUresult r;
        for (pb = &ctx->free_blocks; *pb; pb = &(*pb)->next)
            if ((*pb)->size == size) {
                b = *pb;
                *pb = b->next;
                *ptr = b->ptr;
                ctx->mstats.cached -= size;
                gpuml__free(b);
                gpuml__stats_add(ctx, size);
                return GPUML_SUCCESS;
            }
        r = ctx->cu.MemAlloc(ptr, size);
        if (r == GPUML__CUDA_ERROR_OUT_OF_MEMORY && ctx->free_blocks) {
            /* the device is full: wait for queued work, give the cache back, try again */
            ctx->cu.StreamSynchronize(ctx->stream);
            gpuml__release_blocks(ctx);
            r = ctx->cu.MemAlloc(ptr, size);
        }
        if (r != 0) {
            size_t fr = 0, tot = 0;
            ctx->cu.MemGetInfo(&fr, &tot);
            if (r == GPUML__CUDA_ERROR_OUT_OF_MEMORY)
                return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY,
                                   "out of device memory allocating %llu bytes (gpuml holds %llu in tensors; "
                                   "device has %llu free of %llu)", (unsigned long long)size,
                                   (unsigned long long)ctx->mstats.in_use, (unsigned long long)fr, (unsigned long long)tot);
            return gpuml__cu_fail(ctx, r, "cuMemAlloc");
        }
        ctx->mstats.device_allocs++;
        gpuml__stats_add(ctx, size);
        return GPUML_SUCCESS;
    }
#else
    return gpuml__fail(ctx, GPUML_ERROR_BACKEND_UNAVAILABLE, "built with GPUML_NO_CUDA");
#endif
}

GPUML__FN void gpuml__mem_free(gpuml_ctx *ctx, gpuml__CUdeviceptr ptr, size_t size)
{
    ctx->mstats.in_use -= size;
    if (ctx->backend == GPUML_BACKEND_CPU) { gpuml__aligned_free((void *)(uintptr_t)ptr); return; }
#ifndef GPUML_NO_CUDA
    {
        gpuml__block *b = (gpuml__block *)gpuml__malloc(sizeof *b);
        if (!b) { ctx->cu.StreamSynchronize(ctx->stream); ctx->cu.MemFree(ptr); return; }
        b->ptr = ptr; b->size = size; b->next = ctx->free_blocks;
        ctx->free_blocks = b;
        ctx->mstats.cached += size;
    }
#endif
}

/* -------------------------------------------------------------------- tensors ---- */
typedef struct gpuml__storage {
    gpuml_ctx *ctx;
    gpuml__CUdeviceptr ptr;    /* device address, or host address on the CPU backend */
    size_t size;               /* block size as allocated */
    int refs;
    int external;              /* wraps memory gpuml does not own (host buffers in transfers) */
} gpuml__storage;

struct gpuml_tensor {
    gpuml__u64 magic;
    gpuml_ctx *ctx;
    gpuml__storage *st;
    gpuml_dtype dtype;
    int ndim;
    int64_t shape[GPUML_MAX_DIMS];
    int64_t strides[GPUML_MAX_DIMS];   /* elements */
    int64_t offset;                    /* elements */
};

static const size_t gpuml__dtype_sizes[GPUML_DTYPE_COUNT] = { 4, 2, 2, 4, 1, 1, 1, 1 };
static const char *const gpuml__dtype_names[GPUML_DTYPE_COUNT] = { "f32", "f16", "bf16", "i32", "i8", "u8", "fp8_e4m3", "fp8_e5m2" };

GPUML__DEF size_t gpuml_dtype_size(gpuml_dtype d) { return (unsigned)d < GPUML_DTYPE_COUNT ? gpuml__dtype_sizes[d] : 0; }
GPUML__DEF const char *gpuml_dtype_name(gpuml_dtype d) { return (unsigned)d < GPUML_DTYPE_COUNT ? gpuml__dtype_names[d] : "invalid"; }

/* "[3,4,5]" for messages */
GPUML__FN const char *gpuml__shape_str(const gpuml_tensor *t, char *buf, size_t cap)
{
    size_t n = 0;
    int i;
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (i = 0; i < t->ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

GPUML__FN int64_t gpuml__numel(const gpuml_tensor *t)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}
GPUML__FN int gpuml__is_contig(const gpuml_tensor *t)
{
    int64_t s = 1;
    int i;
    for (i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != s) return 0;
        s *= t->shape[i];
    }
    return 1;
}
GPUML__FN size_t gpuml__nbytes(const gpuml_tensor *t) { return (size_t)gpuml__numel(t) * gpuml__dtype_sizes[t->dtype]; }
/* the element range [lo, hi] the view can touch */
GPUML__FN void gpuml__span(const gpuml_tensor *t, int64_t *lo, int64_t *hi)
{
    int i;
    *lo = *hi = t->offset;
    for (i = 0; i < t->ndim; i++) {
        int64_t ext = (t->shape[i] - 1) * t->strides[i];
        if (t->shape[i] == 0) { *hi = *lo - 1; return; }
        if (ext < 0) *lo += ext; else *hi += ext;
    }
}
/* some element is reachable through two indices (a broadcast view) */
GPUML__FN int gpuml__has_zero_stride(const gpuml_tensor *t)
{
    int i;
    for (i = 0; i < t->ndim; i++) if (t->shape[i] > 1 && t->strides[i] == 0) return 1;
    return 0;
}
GPUML__FN int gpuml__same_view(const gpuml_tensor *a, const gpuml_tensor *b)
{
    int i;
    if (a->st != b->st || a->offset != b->offset || a->ndim != b->ndim || a->dtype != b->dtype) return 0;
    for (i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i])) return 0;
    return 1;
}
/* 1 when the two views share bytes (conservative: compares byte ranges) */
GPUML__FN int gpuml__overlap(const gpuml_tensor *a, const gpuml_tensor *b)
{
    int64_t alo, ahi, blo, bhi;
    if (a->st != b->st) return 0;
    gpuml__span(a, &alo, &ahi);
    gpuml__span(b, &blo, &bhi);
    if (ahi < alo || bhi < blo) return 0;
    alo *= (int64_t)gpuml__dtype_sizes[a->dtype]; ahi = (ahi + 1) * (int64_t)gpuml__dtype_sizes[a->dtype] - 1;
    blo *= (int64_t)gpuml__dtype_sizes[b->dtype]; bhi = (bhi + 1) * (int64_t)gpuml__dtype_sizes[b->dtype] - 1;
    return alo <= bhi && blo <= ahi;
}

/* The one validation helper for tensor arguments. */
GPUML__FN gpuml_status gpuml__check_tensor(gpuml_ctx *ctx, const gpuml_tensor *t, const char *op, const char *arg)
{
    if (!t) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", op, arg);
    if (t->magic == GPUML__MAGIC_DEAD) return gpuml__fail(ctx, GPUML_ERROR_FREED, "%s: %s was freed", op, arg);
    if (t->magic != GPUML__MAGIC_TENSOR) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: %s is not a gpuml tensor", op, arg);
    if (t->ctx != ctx) return gpuml__fail(ctx, GPUML_ERROR_WRONG_CONTEXT, "%s: %s belongs to another context", op, arg);
    return GPUML_SUCCESS;
}
/* entry check of every op taking a context */
GPUML__FN gpuml_status gpuml__enter(gpuml_ctx *ctx)
{
    if (!ctx) return GPUML_ERROR_INVALID_ARGUMENT;
    if (ctx->failed) return gpuml__fail(ctx, GPUML_ERROR_CONTEXT_FAILED, "the context failed earlier (a device fault); create a new one");
#ifndef GPUML_NO_CUDA
    if (ctx->backend == GPUML_BACKEND_CUDA) ctx->cu.CtxSetCurrent(ctx->cuctx);
#endif
    return GPUML_SUCCESS;
}
#define GPUML__TRY(x) do { gpuml_status gpuml__s_ = (x); if (gpuml__s_ != GPUML_SUCCESS) return gpuml__s_; } while (0)

GPUML__FN gpuml_tensor *gpuml__tensor_alloc(gpuml_ctx *ctx)
{
    gpuml_tensor *t = (gpuml_tensor *)gpuml__calloc(sizeof *t);
    if (!t) { gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory"); return NULL; }
    t->magic = GPUML__MAGIC_TENSOR;
    t->ctx = ctx;
    return t;
}

GPUML__FN gpuml_status gpuml__check_shape(gpuml_ctx *ctx, int ndim, const int64_t *shape, const char *op)
{
    int i;
    if (ndim < 0 || ndim > GPUML_MAX_DIMS)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: ndim %d is outside 0..%d", op, ndim, GPUML_MAX_DIMS);
    if (ndim > 0 && !shape) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: shape is NULL", op);
    for (i = 0; i < ndim; i++)
        if (shape[i] < 0) return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: shape[%d] = %lld is negative", op, i, (long long)shape[i]);
    return GPUML_SUCCESS;
}

GPUML__FN gpuml_tensor *gpuml__tensor_new(gpuml_ctx *ctx, gpuml_dtype dtype, int ndim, const int64_t *shape, const char *op)
{
    gpuml_tensor *t;
    int64_t n = 1, s = 1;
    int i;
    if (gpuml__enter(ctx) != GPUML_SUCCESS) return NULL;
    if ((unsigned)dtype >= GPUML_DTYPE_COUNT) { gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: invalid dtype %d", op, (int)dtype); return NULL; }
    if (gpuml__check_shape(ctx, ndim, shape, op) != GPUML_SUCCESS) return NULL;
    for (i = 0; i < ndim; i++) {
        if (shape[i] && n > (INT64_C(1) << 48) / shape[i]) { gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: %lld x ... elements is too large", op, (long long)shape[i]); return NULL; }
        n *= shape[i];
    }
    if (!(t = gpuml__tensor_alloc(ctx))) return NULL;
    t->dtype = dtype;
    t->ndim = ndim;
    for (i = ndim - 1; i >= 0; i--) { t->shape[i] = shape[i]; t->strides[i] = s; s *= shape[i] ? shape[i] : 1; }
    t->st = (gpuml__storage *)gpuml__calloc(sizeof *t->st);
    if (!t->st || gpuml__mem_alloc(ctx, (size_t)n * gpuml__dtype_sizes[dtype], &t->st->ptr, &t->st->size) != GPUML_SUCCESS) {
        if (!t->st) gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
        gpuml__free(t->st);
        gpuml__free(t);
        return NULL;
    }
    t->st->ctx = ctx;
    t->st->refs = 1;
    return t;
}
GPUML__DEF gpuml_tensor *gpuml_tensor_new(gpuml_ctx *ctx, gpuml_dtype dtype, int ndim, const int64_t *shape)
{
    return gpuml__tensor_new(ctx, dtype, ndim, shape, "gpuml_tensor_new");
}

GPUML__FN void gpuml__storage_release(gpuml__storage *st)
{
    if (!st || --st->refs > 0) return;
    if (!st->external) gpuml__mem_free(st->ctx, st->ptr, st->size);
    gpuml__free(st);
}

/* Freed handles are marked dead and parked, so that a use after free reports FREED
   instead of reading freed memory, for the last GPUML__QUARANTINE handles at least. */
GPUML__FN void gpuml__quarantine(gpuml_ctx *ctx, void *h)
{
    if (ctx->nquarantine == GPUML__QUARANTINE) {
        gpuml__free(ctx->quarantine[0]);
        memmove(ctx->quarantine, ctx->quarantine + 1, sizeof(void *) * (GPUML__QUARANTINE - 1));
        ctx->nquarantine--;
    }
    ctx->quarantine[ctx->nquarantine++] = h;
}

GPUML__DEF void gpuml_tensor_free(gpuml_tensor *t)
{
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return;
    gpuml__storage_release(t->st);
    t->st = NULL;
    t->magic = GPUML__MAGIC_DEAD;
    gpuml__quarantine(t->ctx, t);
}

/* accessors: safe on NULL (0) */
GPUML__DEF gpuml_ctx *gpuml_tensor_ctx(const gpuml_tensor *t) { return t && t->magic == GPUML__MAGIC_TENSOR ? t->ctx : NULL; }
GPUML__DEF gpuml_dtype gpuml_tensor_dtype(const gpuml_tensor *t) { return t ? t->dtype : GPUML_F32; }
GPUML__DEF int gpuml_tensor_ndim(const gpuml_tensor *t) { return t ? t->ndim : 0; }
GPUML__DEF int64_t gpuml_tensor_dim(const gpuml_tensor *t, int d)
{
    if (!t) return 0;
    if (d < 0) d += t->ndim;
    return d >= 0 && d < t->ndim ? t->shape[d] : 0;
}
GPUML__DEF int64_t gpuml_tensor_stride(const gpuml_tensor *t, int d)
{
    if (!t) return 0;
    if (d < 0) d += t->ndim;
    return d >= 0 && d < t->ndim ? t->strides[d] : 0;
}
GPUML__DEF int64_t gpuml_tensor_numel(const gpuml_tensor *t) { return t ? gpuml__numel(t) : 0; }
GPUML__DEF int gpuml_tensor_is_contiguous(const gpuml_tensor *t) { return t ? gpuml__is_contig(t) : 0; }
GPUML__DEF void *gpuml_tensor_data(const gpuml_tensor *t)
{
    if (!t || t->magic != GPUML__MAGIC_TENSOR || !t->st) return NULL;
    return (void *)(uintptr_t)(t->st->ptr + (gpuml__u64)t->offset * gpuml__dtype_sizes[t->dtype]);
}

/* a new handle on the same storage, validated first */
GPUML__FN gpuml_tensor *gpuml__view_of(gpuml_tensor *t, const char *op)
{
    gpuml_tensor *v;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;   /* no context to report to */
    if (gpuml__enter(t->ctx) != GPUML_SUCCESS) return NULL;
    (void)op;
    if (!(v = gpuml__tensor_alloc(t->ctx))) return NULL;
    *v = *t;
    v->st->refs++;
    return v;
}

GPUML__DEF gpuml_tensor *gpuml_tensor_reshape(gpuml_tensor *t, int ndim, const int64_t *shape)
{
    static const char op[] = "gpuml_tensor_reshape";
    int64_t sh[GPUML_MAX_DIMS], st[GPUML_MAX_DIMS], known = 1, n;
    int i, infer = -1, si = 0, di;
    gpuml_tensor *v;
    char b1[200];
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;
    if (ndim < 0 || ndim > GPUML_MAX_DIMS || (ndim > 0 && !shape)) {
        gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "%s: bad ndim %d or NULL shape", op, ndim);
        return NULL;
    }
    n = gpuml__numel(t);
    for (i = 0; i < ndim; i++) {
        if (shape[i] == -1 && infer < 0) { infer = i; continue; }
        if (shape[i] < 0) { gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "%s: shape[%d] = %lld", op, i, (long long)shape[i]); return NULL; }
        sh[i] = shape[i];
        known *= shape[i];
    }
    if (infer >= 0) {
        if (known == 0 || n % known) {
            gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "%s: cannot infer dim %d of %s (%lld elements)", op, infer,
                        gpuml__shape_str(t, b1, sizeof b1), (long long)n);
            return NULL;
        }
        sh[infer] = n / known;
        known = n;
    }
    if (known != n) {
        gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "%s: %s has %lld elements, the new shape %lld", op,
                    gpuml__shape_str(t, b1, sizeof b1), (long long)n, (long long)known);
        return NULL;
    }
    /* strides: old dims split into chunks that are contiguous among themselves; each
       chunk must map onto a run of new dims with the same element count */
    if (n == 0 || t->ndim == 0) {
        int64_t s = 1;
        for (i = ndim - 1; i >= 0; i--) { st[i] = s; s *= sh[i] ? sh[i] : 1; }
    } else {
        int64_t base = t->strides[t->ndim - 1], tn = 1, vn = 1;
        di = ndim - 1;
        for (si = t->ndim - 1; si >= 0; si--) {
            tn *= t->shape[si];
            if (si == 0 || (t->shape[si - 1] != 1 && t->strides[si - 1] != tn * base)) {
                while (di >= 0 && (vn < tn || sh[di] == 1)) { st[di] = vn * base; vn *= sh[di]; di--; }
                if (vn != tn) break;
                if (si > 0) { base = t->strides[si - 1]; tn = 1; vn = 1; }
            }
        }
        if (si >= 0 || di >= 0) {
            gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "%s: %s with these strides cannot be viewed as the new shape; "
                        "make it contiguous first (gpuml_tensor_contiguous)", op, gpuml__shape_str(t, b1, sizeof b1));
            return NULL;
        }
    }
    if (!(v = gpuml__view_of(t, op))) return NULL;
    v->ndim = ndim;
    for (i = 0; i < ndim; i++) { v->shape[i] = sh[i]; v->strides[i] = st[i]; }
    return v;
}

GPUML__DEF gpuml_tensor *gpuml_tensor_permute(gpuml_tensor *t, const int *perm)
{
    int seen[GPUML_MAX_DIMS] = {0}, i;
    gpuml_tensor *v;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;
    if (!perm && t->ndim > 0) { gpuml__fail(t->ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_tensor_permute: perm is NULL"); return NULL; }
    for (i = 0; i < t->ndim; i++) {
        if (perm[i] < 0 || perm[i] >= t->ndim || seen[perm[i]]++) {
            gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "gpuml_tensor_permute: perm is not a permutation of 0..%d", t->ndim - 1);
            return NULL;
        }
    }
    if (!(v = gpuml__view_of(t, "gpuml_tensor_permute"))) return NULL;
    for (i = 0; i < t->ndim; i++) { v->shape[i] = t->shape[perm[i]]; v->strides[i] = t->strides[perm[i]]; }
    return v;
}

GPUML__DEF gpuml_tensor *gpuml_tensor_transpose(gpuml_tensor *t, int d0, int d1)
{
    int perm[GPUML_MAX_DIMS], i;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;
    if (d0 < 0) d0 += t->ndim;
    if (d1 < 0) d1 += t->ndim;
    if (d0 < 0 || d0 >= t->ndim || d1 < 0 || d1 >= t->ndim) {
        gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "gpuml_tensor_transpose: dims out of range for a %d-d tensor", t->ndim);
        return NULL;
    }
    for (i = 0; i < t->ndim; i++) perm[i] = i;
    perm[d0] = d1; perm[d1] = d0;
    return gpuml_tensor_permute(t, perm);
}

GPUML__DEF gpuml_tensor *gpuml_tensor_slice(gpuml_tensor *t, int dim, int64_t start, int64_t stop, int64_t step)
{
    gpuml_tensor *v;
    int64_t n;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;
    if (dim < 0) dim += t->ndim;
    if (dim < 0 || dim >= t->ndim || step <= 0) {
        gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "gpuml_tensor_slice: dim %d out of range or step %lld <= 0", dim, (long long)step);
        return NULL;
    }
    n = t->shape[dim];
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    start = GPUML__MAX(0, GPUML__MIN(start, n));
    stop = GPUML__MAX(start, GPUML__MIN(stop, n));
    if (!(v = gpuml__view_of(t, "gpuml_tensor_slice"))) return NULL;
    v->offset += start * t->strides[dim];
    v->shape[dim] = (stop - start + step - 1) / step;
    v->strides[dim] *= step;
    return v;
}

GPUML__DEF gpuml_tensor *gpuml_tensor_expand(gpuml_tensor *t, int ndim, const int64_t *shape)
{
    gpuml_tensor *v;
    int i, lead;
    char b1[200];
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;
    if (gpuml__check_shape(t->ctx, ndim, shape, "gpuml_tensor_expand") != GPUML_SUCCESS) return NULL;
    lead = ndim - t->ndim;
    for (i = 0; i < ndim && lead >= 0; i++) {
        int j = i - lead;
        if (j >= 0 && t->shape[j] != shape[i] && t->shape[j] != 1) break;
    }
    if (lead < 0 || i < ndim) {
        gpuml__fail(t->ctx, GPUML_ERROR_SHAPE, "gpuml_tensor_expand: %s does not broadcast to the %d-d shape given",
                    gpuml__shape_str(t, b1, sizeof b1), ndim);
        return NULL;
    }
    if (!(v = gpuml__view_of(t, "gpuml_tensor_expand"))) return NULL;
    v->ndim = ndim;
    for (i = 0; i < ndim; i++) {
        int j = i - lead;
        v->shape[i] = shape[i];
        v->strides[i] = (j >= 0 && t->shape[j] == shape[i]) ? t->strides[j] : 0;
    }
    return v;
}

/* ------------------------------------------------------------- iteration space ---- */
/* Up to 3 operands walked over one shape; dims of size 1 dropped and dims merged where every
   operand is contiguous across them.  Row-major linear order is unchanged by this. */
typedef struct gpuml__iter {
    int64_t n;
    int ndim, nops;
    int64_t dims[GPUML_MAX_DIMS];
    int64_t offset[3];
    int64_t strides[3][GPUML_MAX_DIMS];
} gpuml__iter;

GPUML__FN void gpuml__iter_make(gpuml__iter *it, const gpuml_tensor *const *ops, int nops)
{
    const gpuml_tensor *s = ops[0];
    int d, k, nd = 0;
    memset(it, 0, sizeof *it);
    it->nops = nops;
    it->n = gpuml__numel(s);
    for (k = 0; k < nops; k++) it->offset[k] = ops[k]->offset;
    for (d = 0; d < s->ndim; d++) {
        int merge = nd > 0;
        if (s->shape[d] == 1) continue;
        for (k = 0; k < nops && merge; k++)
            if (it->strides[k][nd - 1] != ops[k]->strides[d] * s->shape[d]) merge = 0;
        if (merge) {
            it->dims[nd - 1] *= s->shape[d];
            for (k = 0; k < nops; k++) it->strides[k][nd - 1] = ops[k]->strides[d];
        } else {
            it->dims[nd] = s->shape[d];
            for (k = 0; k < nops; k++) it->strides[k][nd] = ops[k]->strides[d];
            nd++;
        }
    }
    if (nd == 0) { it->dims[0] = 1; nd = 1; }   /* a scalar: one element */
    it->ndim = nd;
}
GPUML__FN int gpuml__iter_contig(const gpuml__iter *it, int k)
{
    return it->ndim == 1 && it->strides[k][0] == 1;
}

/* ----------------------------------------------------------------- CPU backend ---- */
GPUML__FN float gpuml__ld_f32(gpuml_dtype d, const void *p)
{
    switch (d) {
    case GPUML_F32: { float v; memcpy(&v, p, 4); return v; }
    case GPUML_F16: { gpuml__u16 v; memcpy(&v, p, 2); return gpuml__f16_to_f32(v); }
    case GPUML_BF16: { gpuml__u16 v; memcpy(&v, p, 2); return gpuml__bf16_to_f32(v); }
    case GPUML_I32: { gpuml__i32 v; memcpy(&v, p, 4); return (float)v; }
    case GPUML_I8: return (float)*(const gpuml__i8 *)p;
    case GPUML_U8: return (float)*(const gpuml__u8 *)p;
    case GPUML_FP8_E4M3: return gpuml__e4m3_to_f32(*(const gpuml__u8 *)p);
    case GPUML_FP8_E5M2: return gpuml__e5m2_to_f32(*(const gpuml__u8 *)p);
    default: return 0.0f;
    }
}
GPUML__FN void gpuml__st_f32(gpuml_dtype d, void *p, float v)
{
    switch (d) {
    case GPUML_F32: memcpy(p, &v, 4); break;
    case GPUML_F16: { gpuml__u16 h = gpuml__f32_to_f16(v); memcpy(p, &h, 2); break; }
    case GPUML_BF16: { gpuml__u16 h = gpuml__f32_to_bf16(v); memcpy(p, &h, 2); break; }
    case GPUML_I32: { gpuml__i32 i = gpuml__f32_to_i32(v); memcpy(p, &i, 4); break; }
    case GPUML_I8: *(gpuml__i8 *)p = (gpuml__i8)gpuml__f32_to_int_sat(v, -128, 127); break;
    case GPUML_U8: *(gpuml__u8 *)p = (gpuml__u8)gpuml__f32_to_int_sat(v, 0, 255); break;
    case GPUML_FP8_E4M3: *(gpuml__u8 *)p = gpuml__f32_to_e4m3(v); break;
    case GPUML_FP8_E5M2: *(gpuml__u8 *)p = gpuml__f32_to_e5m2(v); break;
    default: break;
    }
}

/* A row of `count` elements: ptrs[k] is operand k's first element, step[k] its stride in
   bytes, linear the row-major index of the first element. */
typedef void (*gpuml__row_fn)(void *arg, char **ptrs, const int64_t *step, int64_t count, int64_t linear);

typedef struct gpuml__foreach_job {
    const gpuml__iter *it;
    char *base[3];
    int64_t esize[3];
    gpuml__row_fn fn;
    void *arg;
} gpuml__foreach_job;

GPUML__FN void gpuml__foreach_task(void *a, int64_t b, int64_t e, int tid)
{
    const gpuml__foreach_job *j = (const gpuml__foreach_job *)a;
    const gpuml__iter *it = j->it;
    int64_t idx[GPUML_MAX_DIMS], step[3], rem = b;
    int last = it->ndim - 1, d, k;
    (void)tid;
    for (d = last; d >= 0; d--) { idx[d] = rem % it->dims[d]; rem /= it->dims[d]; }
    for (k = 0; k < it->nops; k++) step[k] = it->strides[k][last] * j->esize[k];
    while (b < e) {
        char *p[3];
        int64_t cnt = GPUML__MIN(it->dims[last] - idx[last], e - b);
        for (k = 0; k < it->nops; k++) {
            int64_t off = it->offset[k];
            for (d = 0; d <= last; d++) off += idx[d] * it->strides[k][d];
            p[k] = j->base[k] + off * j->esize[k];
        }
        j->fn(j->arg, p, step, cnt, b);
        b += cnt;
        idx[last] += cnt;
        for (d = last; d > 0 && idx[d] == it->dims[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
}

/* Runs fn over the iteration space on the CPU threads. */
GPUML__FN void gpuml__cpu_foreach(gpuml_ctx *ctx, const gpuml__iter *it, const gpuml_tensor *const *ops, gpuml__row_fn fn, void *arg)
{
    gpuml__foreach_job j;
    int k;
    j.it = it; j.fn = fn; j.arg = arg;
    for (k = 0; k < it->nops; k++) {
        j.base[k] = (char *)(uintptr_t)ops[k]->st->ptr;
        j.esize[k] = (int64_t)gpuml__dtype_sizes[ops[k]->dtype];
    }
    gpuml__parallel_for(ctx->pool, it->n, 1 << 15, gpuml__foreach_task, &j);
}

typedef struct gpuml__cast_arg { gpuml_dtype dd, sd; } gpuml__cast_arg;
GPUML__FN void gpuml__row_copy(void *a, char **p, const int64_t *step, int64_t n, int64_t linear)
{
    const gpuml__cast_arg *c = (const gpuml__cast_arg *)a;
    char *d = p[0];
    const char *s = p[1];
    int64_t i, es = (int64_t)gpuml__dtype_sizes[c->dd];
    (void)linear;
    if (c->dd == c->sd) {
        if (step[0] == es && step[1] == es) { memmove(d, s, (size_t)(n * es)); return; }
        for (i = 0; i < n; i++, d += step[0], s += step[1]) memcpy(d, s, (size_t)es);
        return;
    }
    if (c->sd == GPUML_I32 && (c->dd == GPUML_I8 || c->dd == GPUML_U8)) {
        /* integer narrowing saturates exactly (no trip through float) */
        for (i = 0; i < n; i++, d += step[0], s += step[1]) {
            gpuml__i32 v;
            memcpy(&v, s, 4);
            if (c->dd == GPUML_I8) *(gpuml__i8 *)d = (gpuml__i8)(v < -128 ? -128 : v > 127 ? 127 : v);
            else *(gpuml__u8 *)d = (gpuml__u8)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        return;
    }
    for (i = 0; i < n; i++, d += step[0], s += step[1]) gpuml__st_f32(c->dd, d, gpuml__ld_f32(c->sd, s));
}

typedef struct gpuml__fill_arg { unsigned char bits[4]; size_t es; } gpuml__fill_arg;
GPUML__FN void gpuml__row_fill(void *a, char **p, const int64_t *step, int64_t n, int64_t linear)
{
    const gpuml__fill_arg *f = (const gpuml__fill_arg *)a;
    char *d = p[0];
    int64_t i;
    (void)linear;
    for (i = 0; i < n; i++, d += step[0]) memcpy(d, f->bits, f->es);
}

typedef struct gpuml__rand_arg { gpuml_dtype dd; gpuml__u64 seed; float a, b; int kind; } gpuml__rand_arg;
GPUML__FN void gpuml__row_rand(void *a, char **p, const int64_t *step, int64_t n, int64_t linear)
{
    const gpuml__rand_arg *r = (const gpuml__rand_arg *)a;
    char *d = p[0];
    int64_t i;
    for (i = 0; i < n; i++, d += step[0]) {
        gpuml__u64 c = (gpuml__u64)(linear + i);
        float v = r->kind == 0 ? gpuml__rand_uniform(r->seed, c, r->a, r->b) : gpuml__rand_normal(r->seed, c, r->a, r->b);
        gpuml__st_f32(r->dd, d, v);
    }
}

/* bits of `value` in dtype d (what fill writes) */
GPUML__FN void gpuml__scalar_bits(gpuml_dtype d, double value, unsigned char *bits)
{
    memset(bits, 0, 4);
    if (d == GPUML_I32) {
        /* doubles carry every i32 exactly: round half to even, saturate, NaN -> 0 */
        double r = value != value ? 0.0 : value;
        gpuml__i32 i;
        if (r >= 2147483647.0) i = 2147483647;
        else if (r <= -2147483648.0) i = (gpuml__i32)(-2147483647 - 1);
        else {
            double f = floor(r), diff = r - f;
            if (diff > 0.5 || (diff == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
            i = (gpuml__i32)f;
        }
        memcpy(bits, &i, 4);
        return;
    }
    gpuml__st_f32(d, bits, (float)value);
}

/* kernel parameter structs exactly as kernels/common.cuh declares them (the CPU paths of the
   ops use them as plain data too) */
typedef struct gpuml__kshape { int64_t n; int ndim; int64_t dims[GPUML_MAX_DIMS]; } gpuml__kshape;
typedef struct gpuml__kview { int64_t offset; int64_t strides[GPUML_MAX_DIMS]; } gpuml__kview;

/* ---------------------------------------------------------------- CUDA backend ---- */
#ifndef GPUML_NO_CUDA

GPUML__FN void gpuml__kparams(const gpuml__iter *it, gpuml__kshape *ks, gpuml__kview *kv)
{
    int k;
    memset(ks, 0, sizeof *ks);
    ks->n = it->n;
    ks->ndim = it->ndim;
    memcpy(ks->dims, it->dims, sizeof ks->dims);
    for (k = 0; k < it->nops; k++) {
        memset(&kv[k], 0, sizeof kv[k]);
        kv[k].offset = 0;  /* the base pointer passed already points at the view's first element */
        memcpy(kv[k].strides, it->strides[k], sizeof kv[k].strides);
    }
}
GPUML__FN gpuml__CUdeviceptr gpuml__dptr(const gpuml_tensor *t)
{
    return t->st->ptr + (gpuml__u64)t->offset * gpuml__dtype_sizes[t->dtype];
}

GPUML__FN gpuml_status gpuml__cuda_copy(gpuml_ctx *ctx, const gpuml_tensor *dst, const gpuml_tensor *src)
{
    const gpuml_tensor *ops[2];
    gpuml__iter it;
    gpuml__kshape ks;
    gpuml__kview kv[2];
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr dp = gpuml__dptr(dst), sp = gpuml__dptr(src);
    char opts[96];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    ops[0] = dst; ops[1] = src;
    gpuml__iter_make(&it, ops, 2);
    if (it.n == 0) return GPUML_SUCCESS;
    if (dst->dtype == src->dtype && gpuml__iter_contig(&it, 0) && gpuml__iter_contig(&it, 1)) {
        GPUML__CU(ctx, ctx->cu.MemcpyDtoDAsync(dp, sp, (size_t)it.n * gpuml__dtype_sizes[dst->dtype], ctx->stream), "gpuml_copy");
        return GPUML_SUCCESS;
    }
    gpuml__kparams(&it, &ks, kv);
    grid[0] = gpuml__grid_for(ctx, it.n, 256);
    if (dst->dtype == src->dtype) {
        void *args[5];
        args[0] = &ks; args[1] = &kv[0]; args[2] = &kv[1]; args[3] = &dp; args[4] = &sp;
        snprintf(opts, sizeof opts, "-DGPUML_ELEM_BYTES=%d", (int)gpuml__dtype_sizes[dst->dtype]);
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_copy_raw", &fn));
        return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_copy");
    }
    snprintf(opts, sizeof opts, "-DGPUML_DST_DT=%d -DGPUML_SRC_DT=%d", (int)dst->dtype, (int)src->dtype);
    if (gpuml__iter_contig(&it, 0) && gpuml__iter_contig(&it, 1)) {
        void *args[3];
        args[0] = &it.n; args[1] = &dp; args[2] = &sp;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_cast_contig", &fn));
        return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_copy");
    } else {
        void *args[5];
        args[0] = &ks; args[1] = &kv[0]; args[2] = &kv[1]; args[3] = &dp; args[4] = &sp;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_cast", &fn));
        return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_copy");
    }
}

GPUML__FN gpuml_status gpuml__cuda_fill(gpuml_ctx *ctx, const gpuml_tensor *dst, const unsigned char *bits)
{
    const gpuml_tensor *ops[1];
    gpuml__iter it;
    gpuml__kshape ks;
    gpuml__kview kv[1];
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr dp = gpuml__dptr(dst);
    gpuml__u32 b32 = 0;
    size_t es = gpuml__dtype_sizes[dst->dtype];
    void *args[4];
    char opts[64];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    ops[0] = dst;
    gpuml__iter_make(&it, ops, 1);
    if (it.n == 0) return GPUML_SUCCESS;
    gpuml__kparams(&it, &ks, kv);
    if (es == 4) memcpy(&b32, bits, 4);
    else if (es == 2) { gpuml__u16 h; memcpy(&h, bits, 2); b32 = h; }
    else b32 = bits[0];
    snprintf(opts, sizeof opts, "-DGPUML_ELEM_BYTES=%d", (int)es);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_fill", &fn));
    args[0] = &ks; args[1] = &kv[0]; args[2] = &dp; args[3] = &b32;
    grid[0] = gpuml__grid_for(ctx, it.n, 256);
    return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_fill");
}

GPUML__FN gpuml_status gpuml__cuda_rand(gpuml_ctx *ctx, const gpuml_tensor *dst, gpuml__u64 seed, float a, float b, int kind)
{
    const gpuml_tensor *ops[1];
    gpuml__iter it;
    gpuml__kshape ks;
    gpuml__kview kv[1];
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr dp = gpuml__dptr(dst);
    void *args[7];
    char opts[64];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    ops[0] = dst;
    gpuml__iter_make(&it, ops, 1);
    if (it.n == 0) return GPUML_SUCCESS;
    gpuml__kparams(&it, &ks, kv);
    snprintf(opts, sizeof opts, "-DGPUML_DST_DT=%d", (int)dst->dtype);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_rand", &fn));
    args[0] = &ks; args[1] = &kv[0]; args[2] = &dp; args[3] = &seed; args[4] = &a; args[5] = &b; args[6] = &kind;
    grid[0] = gpuml__grid_for(ctx, it.n, 256);
    return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_rand");
}

/* pinned staging buffer of at least min(n, 32 MiB) bytes, idle */
GPUML__FN gpuml_status gpuml__stage(gpuml_ctx *ctx, size_t n, size_t *chunk)
{
    size_t want = GPUML__MIN(GPUML__MAX(n, (size_t)1 << 20), (size_t)32 << 20);
    if (ctx->stage_pending) {
        GPUML__CU(ctx, ctx->cu.EventSynchronize(ctx->stage_event), "waiting for an upload");
        ctx->stage_pending = 0;
    }
    if (ctx->stage_size < want) {
        if (ctx->stage) ctx->cu.MemFreeHost(ctx->stage);
        ctx->stage = NULL;
        ctx->stage_size = 0;
        GPUML__CU(ctx, ctx->cu.MemAllocHost(&ctx->stage, want), "allocating pinned host memory");
        ctx->stage_size = want;
    }
    *chunk = ctx->stage_size;
    return GPUML_SUCCESS;
}
GPUML__FN gpuml_status gpuml__cuda_upload(gpuml_ctx *ctx, gpuml__CUdeviceptr dst, const void *src, size_t n)
{
    size_t chunk, done = 0;
    GPUML__TRY(gpuml__stage(ctx, n, &chunk));
    while (done < n) {
        size_t m = GPUML__MIN(chunk, n - done);
        if (ctx->stage_pending) GPUML__CU(ctx, ctx->cu.EventSynchronize(ctx->stage_event), "waiting for an upload");
        memcpy(ctx->stage, (const char *)src + done, m);
        GPUML__CU(ctx, ctx->cu.MemcpyHtoDAsync(dst + done, ctx->stage, m, ctx->stream), "host-to-device copy");
        GPUML__CU(ctx, ctx->cu.EventRecord(ctx->stage_event, ctx->stream), "host-to-device copy");
        ctx->stage_pending = 1;
        done += m;
    }
    return GPUML_SUCCESS;
}
GPUML__FN gpuml_status gpuml__cuda_download(gpuml_ctx *ctx, void *dst, gpuml__CUdeviceptr src, size_t n)
{
    size_t chunk, done = 0;
    GPUML__TRY(gpuml__stage(ctx, n, &chunk));
    while (done < n) {
        size_t m = GPUML__MIN(chunk, n - done);
        GPUML__CU(ctx, ctx->cu.MemcpyDtoHAsync(ctx->stage, src + done, m, ctx->stream), "device-to-host copy");
        GPUML__CU(ctx, ctx->cu.StreamSynchronize(ctx->stream), "device-to-host copy (or earlier work on the stream)");
        memcpy((char *)dst + done, ctx->stage, m);
        done += m;
    }
    return GPUML_SUCCESS;
}
#endif /* GPUML_NO_CUDA */

/* --------------------------------------------------------------- public ops ---- */
/* dst = src (cast, broadcast); tensors already validated */
GPUML__FN gpuml_status gpuml__copy(gpuml_ctx *ctx, gpuml_tensor *dst, const gpuml_tensor *src)
{
    if (ctx->backend == GPUML_BACKEND_CPU) {
        const gpuml_tensor *ops[2];
        gpuml__iter it;
        gpuml__cast_arg c;
        ops[0] = dst; ops[1] = src;
        gpuml__iter_make(&it, ops, 2);
        c.dd = dst->dtype; c.sd = src->dtype;
        gpuml__cpu_foreach(ctx, &it, ops, gpuml__row_copy, &c);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_copy(ctx, dst, src);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

/* checks that dst can be written: not a broadcast view */
GPUML__FN gpuml_status gpuml__check_output(gpuml_ctx *ctx, const gpuml_tensor *t, const char *op)
{
    if (gpuml__has_zero_stride(t))
        return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: the output is a broadcast (expanded) view; its elements alias each other", op);
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_copy(gpuml_ctx *ctx, gpuml_tensor *dst, const gpuml_tensor *src)
{
    static const char op[] = "gpuml_copy";
    gpuml_tensor b;
    int i, lead;
    char s1[200], s2[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, dst, op, "dst"));
    GPUML__TRY(gpuml__check_tensor(ctx, src, op, "src"));
    GPUML__TRY(gpuml__check_output(ctx, dst, op));
    /* src broadcast to dst's shape, as a stack view */
    b = *src;
    lead = dst->ndim - src->ndim;
    for (i = 0; i < dst->ndim && lead >= 0; i++) {
        int j = i - lead;
        if (j >= 0 && src->shape[j] != dst->shape[i] && src->shape[j] != 1) break;
        b.shape[i] = dst->shape[i];
        b.strides[i] = (j >= 0 && src->shape[j] == dst->shape[i]) ? src->strides[j] : 0;
    }
    if (lead < 0 || i < dst->ndim)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: src %s does not broadcast to dst %s", op,
                           gpuml__shape_str(src, s1, sizeof s1), gpuml__shape_str(dst, s2, sizeof s2));
    b.ndim = dst->ndim;
    if (gpuml__same_view(dst, &b)) return GPUML_SUCCESS;
    if (gpuml__overlap(dst, src))
        return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dst and src overlap in memory (copy through a temporary)", op);
    return gpuml__copy(ctx, dst, &b);
}

GPUML__DEF gpuml_status gpuml_fill(gpuml_ctx *ctx, gpuml_tensor *dst, double value)
{
    unsigned char bits[4];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, dst, "gpuml_fill", "dst"));
    gpuml__scalar_bits(dst->dtype, value, bits);
    if (ctx->backend == GPUML_BACKEND_CPU) {
        const gpuml_tensor *ops[1];
        gpuml__iter it;
        gpuml__fill_arg f;
        ops[0] = dst;
        gpuml__iter_make(&it, ops, 1);
        memcpy(f.bits, bits, 4);
        f.es = gpuml__dtype_sizes[dst->dtype];
        gpuml__cpu_foreach(ctx, &it, ops, gpuml__row_fill, &f);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_fill(ctx, dst, bits);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__FN gpuml_status gpuml__rand(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double a, double b, int kind)
{
    const char *op = kind == 0 ? "gpuml_rand_uniform" : "gpuml_rand_normal";
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, dst, op, "dst"));
    GPUML__TRY(gpuml__check_output(ctx, dst, op));
    if (dst->dtype == GPUML_I32 || dst->dtype == GPUML_I8 || dst->dtype == GPUML_U8)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: dst is %s; random numbers need a floating-point dtype", op, gpuml__dtype_names[dst->dtype]);
    if (!(a == a) || !(b == b) || (kind == 0 && !(a <= b)) || (kind == 1 && b < 0))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: bad parameters %g, %g", op, a, b);
    if (ctx->backend == GPUML_BACKEND_CPU) {
        const gpuml_tensor *ops[1];
        gpuml__iter it;
        gpuml__rand_arg r;
        ops[0] = dst;
        gpuml__iter_make(&it, ops, 1);
        r.dd = dst->dtype; r.seed = seed; r.a = (float)a; r.b = (float)b; r.kind = kind;
        gpuml__cpu_foreach(ctx, &it, ops, gpuml__row_rand, &r);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_rand(ctx, dst, seed, (float)a, (float)b, kind);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}
GPUML__DEF gpuml_status gpuml_rand_uniform(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double lo, double hi)
{ return gpuml__rand(ctx, dst, seed, lo, hi, 0); }
GPUML__DEF gpuml_status gpuml_rand_normal(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double mean, double std)
{ return gpuml__rand(ctx, dst, seed, mean, std, 1); }

GPUML__DEF gpuml_tensor *gpuml_tensor_contiguous(gpuml_tensor *t)
{
    gpuml_tensor *c;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return NULL;
    if (gpuml__is_contig(t)) return gpuml__view_of(t, "gpuml_tensor_contiguous");
    c = gpuml__tensor_new(t->ctx, t->dtype, t->ndim, t->shape, "gpuml_tensor_contiguous");
    if (c && gpuml__copy(t->ctx, c, t) != GPUML_SUCCESS) { gpuml_tensor_free(c); return NULL; }
    return c;
}

/* a contiguous tensor over the caller's host buffer (CPU backend transfers) */
GPUML__FN void gpuml__host_view(gpuml_tensor *h, gpuml__storage *st, const gpuml_tensor *like, const void *p)
{
    int64_t s = 1;
    int i;
    memset(st, 0, sizeof *st);
    st->ptr = (gpuml__CUdeviceptr)(uintptr_t)p;
    st->external = 1;
    st->refs = 1;
    *h = *like;
    h->st = st;
    h->offset = 0;
    for (i = like->ndim - 1; i >= 0; i--) { h->strides[i] = s; s *= like->shape[i]; }
}

GPUML__FN gpuml_status gpuml__check_transfer(gpuml_ctx *ctx, const gpuml_tensor *t, const void *p, size_t nbytes, const char *op)
{
    GPUML__TRY(gpuml__check_tensor(ctx, t, op, "tensor"));
    if (!p && nbytes) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: host pointer is NULL", op);
    if (nbytes != gpuml__nbytes(t)) {
        char s1[200];
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: tensor %s %s holds %llu bytes, but %llu were given", op,
                           gpuml__shape_str(t, s1, sizeof s1), gpuml__dtype_names[t->dtype], (unsigned long long)gpuml__nbytes(t), (unsigned long long)nbytes);
    }
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_tensor_write(gpuml_tensor *t, const void *src, size_t nbytes)
{
    static const char op[] = "gpuml_tensor_write";
    gpuml_ctx *ctx;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return GPUML_ERROR_INVALID_ARGUMENT;
    ctx = t->ctx;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_transfer(ctx, t, src, nbytes, op));
    GPUML__TRY(gpuml__check_output(ctx, t, op));
    if (nbytes == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml_tensor h;
        gpuml__storage st;
        if (gpuml__is_contig(t)) { memcpy(gpuml_tensor_data(t), src, nbytes); return GPUML_SUCCESS; }
        gpuml__host_view(&h, &st, t, src);
        return gpuml__copy(ctx, t, &h);
    }
#ifndef GPUML_NO_CUDA
    if (gpuml__is_contig(t)) return gpuml__cuda_upload(ctx, gpuml__dptr(t), src, nbytes);
    {
        gpuml_tensor *tmp = gpuml__tensor_new(ctx, t->dtype, t->ndim, t->shape, op);
        gpuml_status st;
        if (!tmp) return ctx->status;
        st = gpuml__cuda_upload(ctx, gpuml__dptr(tmp), src, nbytes);
        if (st == GPUML_SUCCESS) st = gpuml__copy(ctx, t, tmp);
        gpuml_tensor_free(tmp);
        return st;
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__DEF gpuml_status gpuml_tensor_read(const gpuml_tensor *t, void *dst, size_t nbytes)
{
    static const char op[] = "gpuml_tensor_read";
    gpuml_ctx *ctx;
    if (!t || t->magic != GPUML__MAGIC_TENSOR) return GPUML_ERROR_INVALID_ARGUMENT;
    ctx = t->ctx;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_transfer(ctx, t, dst, nbytes, op));
    if (nbytes == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml_tensor h;
        gpuml__storage st;
        if (gpuml__is_contig(t)) { memcpy(dst, gpuml_tensor_data(t), nbytes); return GPUML_SUCCESS; }
        gpuml__host_view(&h, &st, t, dst);
        return gpuml__copy(ctx, &h, t);
    }
#ifndef GPUML_NO_CUDA
    if (gpuml__is_contig(t)) return gpuml__cuda_download(ctx, dst, gpuml__dptr(t), nbytes);
    {
        gpuml_tensor *tmp = gpuml__tensor_new(ctx, t->dtype, t->ndim, t->shape, op);
        gpuml_status st;
        if (!tmp) return ctx->status;
        st = gpuml__copy(ctx, tmp, t);
        if (st == GPUML_SUCCESS) st = gpuml__cuda_download(ctx, dst, gpuml__dptr(tmp), nbytes);
        gpuml_tensor_free(tmp);
        return st;
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__DEF gpuml_status gpuml_sync(gpuml_ctx *ctx)
{
    GPUML__TRY(gpuml__enter(ctx));
#ifndef GPUML_NO_CUDA
    if (ctx->backend == GPUML_BACKEND_CUDA)
        GPUML__CU(ctx, ctx->cu.StreamSynchronize(ctx->stream), "gpuml_sync (a fault in earlier queued work)");
#endif
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_memory_stats_get(gpuml_ctx *ctx, gpuml_memory_stats *stats)
{
    if (!ctx) return GPUML_ERROR_INVALID_ARGUMENT;
    if (!stats) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_memory_stats_get: stats is NULL");
    *stats = ctx->mstats;
    return GPUML_SUCCESS;
}
GPUML__DEF gpuml_status gpuml_memory_release_cache(gpuml_ctx *ctx)
{
    GPUML__TRY(gpuml__enter(ctx));
#ifndef GPUML_NO_CUDA
    if (ctx->backend == GPUML_BACKEND_CUDA) {
        GPUML__CU(ctx, ctx->cu.StreamSynchronize(ctx->stream), "gpuml_memory_release_cache");
        gpuml__release_blocks(ctx);
    }
#endif
    return GPUML_SUCCESS;
}

/* ---------------------------------------------------------------- user kernels ---- */
struct gpuml_kernel {
    gpuml__u64 magic;
    gpuml_ctx *ctx;
#ifndef GPUML_NO_CUDA
    gpuml__CUfunction fn;
#endif
    gpuml_cpu_kernel_fn cpu_fn;
    void *cpu_user;
    char name[128];
};

GPUML__DEF gpuml_kernel *gpuml_kernel_compile(gpuml_ctx *ctx, const gpuml_kernel_desc *d)
{
    static const char op[] = "gpuml_kernel_compile";
    gpuml_kernel *k;
    if (gpuml__enter(ctx) != GPUML_SUCCESS) return NULL;
    if (!d || !d->name || !d->name[0] || (!d->source && ctx->backend == GPUML_BACKEND_CUDA)) {
        gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: desc, desc->name and desc->source are required", op);
        return NULL;
    }
    if (strlen(d->name) >= sizeof k->name) {
        gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: kernel name longer than %d characters", op, (int)sizeof k->name - 1);
        return NULL;
    }
    k = (gpuml_kernel *)gpuml__calloc(sizeof *k);
    if (!k) { gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory"); return NULL; }
    k->magic = GPUML__MAGIC_KERNEL;
    k->ctx = ctx;
    k->cpu_fn = d->cpu_fn;
    k->cpu_user = d->cpu_user;
    memcpy(k->name, d->name, strlen(d->name) + 1);
#ifndef GPUML_NO_CUDA
    if (ctx->backend == GPUML_BACKEND_CUDA) {
        gpuml__CUmodule mod;
        gpuml__CUresult r;
        if (gpuml__load_module(ctx, d->source, d->name, d->options, 0, 0, &mod) != GPUML_SUCCESS) { gpuml__free(k); return NULL; }
        if ((r = ctx->cu.ModuleGetFunction(&k->fn, mod, d->name)) != 0) {
            gpuml__fail(ctx, GPUML_ERROR_COMPILE, "%s: the source compiled but has no kernel named \"%s\" (%s); "
                        "declare it extern \"C\" __global__", op, d->name, gpuml__cu_name(ctx, r));
            gpuml__free(k);
            return NULL;
        }
    }
#endif
    return k;
}

GPUML__DEF gpuml_status gpuml_kernel_launch(gpuml_ctx *ctx, gpuml_kernel *k, const gpuml_launch *l)
{
    static const char op[] = "gpuml_kernel_launch";
    GPUML__TRY(gpuml__enter(ctx));
    if (!k || !l) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: kernel and launch are required", op);
    if (k->magic == GPUML__MAGIC_DEAD) return gpuml__fail(ctx, GPUML_ERROR_FREED, "%s: the kernel was freed", op);
    if (k->magic != GPUML__MAGIC_KERNEL) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: not a gpuml kernel", op);
    if (k->ctx != ctx) return gpuml__fail(ctx, GPUML_ERROR_WRONG_CONTEXT, "%s: the kernel was compiled for another context", op);
    if (l->nargs > 0 && !l->args) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: nargs = %d but args is NULL", op, l->nargs);
    if (ctx->backend == GPUML_BACKEND_CPU) {
        if (!k->cpu_fn)
            return gpuml__fail(ctx, GPUML_ERROR_NEEDS_GPU, "%s: kernel %s needs a GPU (this context runs on the CPU: %s) "
                               "and has no CPU function (gpuml_kernel_desc.cpu_fn)", op, k->name, ctx->reason);
        return k->cpu_fn(l, k->cpu_user);
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__u64 threads = (gpuml__u64)(l->block[0] ? l->block[0] : 1) * (l->block[1] ? l->block[1] : 1) * (l->block[2] ? l->block[2] : 1);
        if (threads > 1024) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: %llu threads per block (at most 1024)", op, (unsigned long long)threads);
        if (l->shared_bytes > (unsigned)GPUML__MAX(ctx->smem_optin, 48 * 1024))
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: %u bytes of shared memory (this device allows %d)", op, l->shared_bytes, ctx->smem_optin);
        return gpuml__launch(ctx, k->fn, l->grid, l->block, l->shared_bytes, l->args, k->name);
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__DEF void gpuml_kernel_free(gpuml_kernel *k)
{
    if (!k || k->magic != GPUML__MAGIC_KERNEL) return;
    k->magic = GPUML__MAGIC_DEAD;
    gpuml__quarantine(k->ctx, k);
}

/* DEV-SPLIT: inlined before release */
#include "src/ops.inc.h"

/* DEV-SPLIT: inlined before release */
#include "src/cpu_gemm.inc.h"

/* ------------------------------------------------------------------- matmul ---- */
static const gpuml__family gpuml__fam_matmul = { "matmul", gpuml__ksrc_matmul, 50, 0, 0 };
/* Hopper: TMA + wgmma (kernels/matmul_sm90.cu; its LAUNCH CONTRACT comment is the reference) */
static const gpuml__family gpuml__fam_matmul_sm90 = { "matmul_sm90", gpuml__ksrc_matmul_sm90, 90, 1, 0 };
/* sm_80+: mma.sync + ldmatrix + cp.async (kernels/matmul_mma.cu; see its LAUNCH CONTRACT) */
static const gpuml__family gpuml__fam_matmul_mma = { "matmul_mma", gpuml__ksrc_matmul_mma, 80, 0, 0 };

#define GPUML__MM_MAXB (GPUML_MAX_DIMS - 2)
/* a validated matmul: sizes, per-operand strides (elements), epilogue */
typedef struct gpuml__mm {
    int64_t M, N, K;
    int nb;                                   /* batch dims after collapsing */
    int64_t bdims[GPUML__MM_MAXB];
    int64_t bs[4][GPUML__MM_MAXB];            /* batch strides of a, b, c, r */
    int64_t sa_m, sa_k, sb_k, sb_n, sc_m, sc_n, sr_m, sr_n;
    float alpha, beta, scale;
    int act;
    const gpuml_tensor *a, *b, *c, *bias, *resid;
} gpuml__mm;

GPUML__FN float gpuml__act_f32(int act, float x)
{
    switch (act) {
    case GPUML_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case GPUML_ACT_GELU: return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case GPUML_ACT_SILU: return x / (1.0f + expf(-x));
    default: return x;
    }
}

/* CPU: one batch element.  A, B, C, R point at element (0,0) of this batch. */
typedef struct gpuml__mm_cpu { const gpuml__mm *p; const char *A, *B; char *C; const char *R; float *T; int64_t ldt; } gpuml__mm_cpu;

GPUML__FN void gpuml__mm_int_rows(void *arg, int64_t r0, int64_t r1, int tid)
{
    const gpuml__mm_cpu *w = (const gpuml__mm_cpu *)arg;
    const gpuml__mm *p = w->p;
    const gpuml__i8 *A = (const gpuml__i8 *)w->A, *B = (const gpuml__i8 *)w->B;
    gpuml__i32 *C = (gpuml__i32 *)w->C;
    int64_t m, n, k;
    (void)tid;
    for (m = r0; m < r1; m++)
        for (n = 0; n < p->N; n++) {
            gpuml__i32 s = 0;
            for (k = 0; k < p->K; k++) s += (gpuml__i32)A[m * p->sa_m + k * p->sa_k] * (gpuml__i32)B[k * p->sb_k + n * p->sb_n];
            C[m * p->sc_m + n * p->sc_n] = s;
        }
}
/* epilogue over rows: T (f32 results, ldt) or C itself (when T is NULL) -> C */
GPUML__FN void gpuml__mm_epi_rows(void *arg, int64_t r0, int64_t r1, int tid)
{
    const gpuml__mm_cpu *w = (const gpuml__mm_cpu *)arg;
    const gpuml__mm *p = w->p;
    gpuml_dtype ct = p->c->dtype;
    size_t ce = gpuml__dtype_sizes[ct];
    const float *bias = p->bias ? (const float *)gpuml_tensor_data(p->bias) : NULL;
    int64_t bstride = p->bias ? p->bias->strides[0] : 0, m, n;
    (void)tid;
    for (m = r0; m < r1; m++)
        for (n = 0; n < p->N; n++) {
            char *c = w->C + (m * p->sc_m + n * p->sc_n) * (int64_t)ce;
            float v = w->T ? w->T[m * w->ldt + n] : gpuml__ld_f32(ct, c);
            if (bias) v += bias[n * bstride];
            v = gpuml__act_f32(p->act, v);
            if (w->R) v += gpuml__ld_f32(ct, w->R + (m * p->sr_m + n * p->sr_n) * (int64_t)ce);
            gpuml__st_f32(ct, c, v);
        }
}
/* f32 copy of a strided fp8 matrix (rows x cols) */
GPUML__FN float *gpuml__to_f32(const char *src, gpuml_dtype dt, int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    float *t = (float *)gpuml__aligned_alloc((size_t)(rows * cols) * sizeof(float) + 1);
    int64_t i, j;
    size_t es = gpuml__dtype_sizes[dt];
    if (!t) return NULL;
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) t[i * cols + j] = gpuml__ld_f32(dt, src + (i * rs + j * cs) * (int64_t)es);
    return t;
}
GPUML__FN int gpuml__gemm_type(gpuml_dtype d) { return d == GPUML_F16 ? GPUML__GEMM_F16 : d == GPUML_BF16 ? GPUML__GEMM_BF16 : GPUML__GEMM_F32; }

GPUML__FN gpuml_status gpuml__mm_cpu_one(gpuml_ctx *ctx, const gpuml__mm *p, const char *A, const char *B, char *C, const char *R)
{
    gpuml__mm_cpu w;
    gpuml_dtype at = p->a->dtype, bt = p->b->dtype, ct = p->c->dtype;
    const void *Ag = A, *Bg = B;
    int64_t rsa = p->sa_m, csa = p->sa_k, rsb = p->sb_k, csb = p->sb_n;
    float *Af = NULL, *Bf = NULL;
    int direct = ct == GPUML_F32, rc;
    w.p = p; w.A = A; w.B = B; w.C = C; w.R = R; w.T = NULL; w.ldt = p->N;
    if (at == GPUML_I8) { gpuml__parallel_for(ctx->pool, p->M, 1, gpuml__mm_int_rows, &w); return GPUML_SUCCESS; }
    if (at == GPUML_FP8_E4M3 || at == GPUML_FP8_E5M2) {   /* widened once, then the f32 GEMM */
        Af = gpuml__to_f32(A, at, p->M, p->K, p->sa_m, p->sa_k);
        Bf = gpuml__to_f32(B, bt, p->K, p->N, p->sb_k, p->sb_n);
        if (!Af || !Bf) { gpuml__aligned_free(Af); gpuml__aligned_free(Bf); return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "gpuml_matmul: out of host memory"); }
        Ag = Af; Bg = Bf; at = bt = GPUML_F32;
        rsa = p->K; csa = 1; rsb = p->N; csb = 1;
    }
    if (!direct) {
        w.T = (float *)gpuml__aligned_alloc((size_t)(p->M * p->N) * sizeof(float) + 1);
        if (!w.T) { gpuml__aligned_free(Af); gpuml__aligned_free(Bf); return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "gpuml_matmul: out of host memory"); }
        if (p->beta != 0.0f) {
            int64_t m, n;
            for (m = 0; m < p->M; m++)
                for (n = 0; n < p->N; n++)
                    w.T[m * p->N + n] = gpuml__ld_f32(ct, C + (m * p->sc_m + n * p->sc_n) * (int64_t)gpuml__dtype_sizes[ct]);
        }
    }
    rc = gpuml__cpu_gemm(ctx->pool, p->M, p->N, p->K, p->alpha * p->scale, Ag, gpuml__gemm_type(at), rsa, csa,
                         Bg, gpuml__gemm_type(bt), rsb, csb, p->beta,
                         direct ? (float *)C : w.T, direct ? p->sc_m : p->N, direct ? p->sc_n : 1);
    gpuml__aligned_free(Af);
    gpuml__aligned_free(Bf);
    if (rc != 0) { gpuml__aligned_free(w.T); return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "gpuml_matmul: out of host memory for the GEMM workspace"); }
    if (!direct || p->bias || p->act || R) gpuml__parallel_for(ctx->pool, p->M, 16, gpuml__mm_epi_rows, &w);
    gpuml__aligned_free(w.T);
    return GPUML_SUCCESS;
}

#ifndef GPUML_NO_CUDA
/* the matmul params struct of kernels/matmul.cu */
typedef struct gpuml__mm_params {
    int M, N, K, batch;
    gpuml__CUdeviceptr A; int64_t sa_b, sa_m, sa_k;
    gpuml__CUdeviceptr B; int64_t sb_b, sb_k, sb_n;
    gpuml__CUdeviceptr C; int64_t sc_b, sc_m, sc_n;
    gpuml__CUdeviceptr bias;
    gpuml__CUdeviceptr R; int64_t sr_b, sr_m, sr_n;
    float alpha, beta, scale;
} gpuml__mm_params;

GPUML__FN gpuml_status gpuml__mm_cuda_simt(gpuml_ctx *ctx, const gpuml__mm *p, gpuml__mm_params *kp)
{
    char opts[200];
    gpuml__CUfunction fn;
    unsigned grid[3], block[3] = {256, 1, 1};
    void *args[1];
    snprintf(opts, sizeof opts, "-DGPUML_A_DT=%d -DGPUML_B_DT=%d -DGPUML_C_DT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d "
             "-DGPUML_HAS_RESID=%d -DGPUML_BETA=%d -DGPUML_INT=%d", (int)p->a->dtype, (int)p->b->dtype, (int)p->c->dtype,
             p->act, p->bias != NULL, p->resid != NULL, p->beta != 0.0f, p->a->dtype == GPUML_I8);
    if (p->a->dtype != GPUML_I8 && p->M >= 128 && p->N >= 128) {   /* large tiles once they fill the grid */
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul, opts, "gpuml_mm_simt128", &fn));
        grid[0] = (unsigned)((p->N + 127) / 128); grid[1] = (unsigned)((p->M + 127) / 128);
    } else {
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul, opts, "gpuml_mm_simt", &fn));
        grid[0] = (unsigned)((p->N + 63) / 64); grid[1] = (unsigned)((p->M + 63) / 64);
    }
    grid[2] = (unsigned)kp->batch;
    args[0] = kp;
    return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_matmul");
}


/* the params struct of kernels/matmul_sm90.cu (80 bytes) */
typedef struct gpuml__sm90_params {
    gpuml__CUdeviceptr c, c_in, bias, resid;
    int64_t ldc, ldc_in, ldr;
    int M, N, K;
    float alpha, beta;
    int group_m;
} gpuml__sm90_params;

/* a CUtensorMap for a row-major 2-D matrix: dims {inner, outer}, row stride in bytes */
GPUML__FN int gpuml__tmap(gpuml_ctx *ctx, void *map, int dtype, gpuml__CUdeviceptr addr, int64_t inner, int64_t outer,
                          int64_t row_bytes, unsigned box_inner, unsigned box_outer)
{
    gpuml__u64 dims[2], strides[1];
    unsigned box[2], es[2] = {1, 1};
    dims[0] = (gpuml__u64)inner; dims[1] = (gpuml__u64)outer; strides[0] = (gpuml__u64)row_bytes;
    box[0] = box_inner; box[1] = box_outer;
    return ctx->cu.TensorMapEncodeTiled(map, dtype, 2, (void *)(uintptr_t)addr, dims, strides, box, es,
                                        0 /* no interleave */, 3 /* 128B swizzle */, 3 /* L2 256B */, 0 /* zero fill */) == 0;
}
GPUML__FN int gpuml__al16(gpuml__CUdeviceptr p) { return (p & 15) == 0; }

/* 1 when the wgmma kernel can take this problem (layouts, alignment, device) */
GPUML__FN int gpuml__sm90_fits(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    size_t ce = gpuml__dtype_sizes[p->c->dtype];
    if (ctx->arch != 90 || !ctx->cu.TensorMapEncodeTiled || ctx->smem_optin < 230656) return 0;
    if (p->a->dtype != GPUML_F16 && p->a->dtype != GPUML_BF16) return 0;
    if (p->sa_k != 1 || (p->sa_m * 2) % 16 || !gpuml__al16(kp->A)) return 0;
    if (!((p->sb_k == 1 && (p->sb_n * 2) % 16 == 0) || (p->sb_n == 1 && (p->sb_k * 2) % 16 == 0)) || !gpuml__al16(kp->B)) return 0;
    if (p->sc_n != 1 || (p->sc_m * (int64_t)ce) % 16 || !gpuml__al16(kp->C)) return 0;
    if (p->resid && (p->sr_n != 1 || (p->sr_m * (int64_t)ce) % 16 || !gpuml__al16(kp->R) || gpuml__overlap(p->resid, p->c))) return 0;
    if (p->bias && (kp->bias & 7)) return 0;
    return 1;
}

GPUML__FN gpuml_status gpuml__mm_cuda_sm90(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    static const char *const tn[] = { "f32", "f16", "bf16" };
    unsigned char mapbuf[4][128 + 64];
    void *maps[3], *args[4];
    gpuml__sm90_params sp;
    gpuml__CUfunction fn;
    char opts[300];
    int in_t = p->a->dtype == GPUML_BF16 ? 9 : 6, ct = (int)p->c->dtype;
    int out_t = ct == GPUML_F32 ? 7 : ct == GPUML_BF16 ? 9 : 6, kmajor = p->sb_k == 1, i;
    int64_t tiles_m = (p->M + 127) / 128, units;
    int cl = 1;   /* the 2-CTA cluster measured 0-6% slower (bench/NOTES_matmul_sm90.md) */
    unsigned grid[3], block[3] = {384, 1, 1};
    size_t ce = gpuml__dtype_sizes[ct];
    for (i = 0; i < 3; i++) { maps[i] = mapbuf[i] + (64 - ((uintptr_t)mapbuf[i] & 63)) % 64; memset(maps[i], 0, 128); }
    if (!gpuml__tmap(ctx, maps[0], in_t, kp->A, p->K, p->M, p->sa_m * 2, 64, 128) ||
        !(kmajor ? gpuml__tmap(ctx, maps[1], in_t, kp->B, p->K, p->N, p->sb_n * 2, 64, (unsigned)(256 / cl))
                 : gpuml__tmap(ctx, maps[1], in_t, kp->B, p->N, p->K, p->sb_k * 2, 64, 64)) ||
        !gpuml__tmap(ctx, maps[2], out_t, kp->C, p->N, p->M, p->sc_m * (int64_t)ce, ct == GPUML_F32 ? 32 : 64, 64))
        return gpuml__fail(ctx, GPUML_ERROR_CUDA, "gpuml_matmul: cuTensorMapEncodeTiled rejected the layout");
    snprintf(opts, sizeof opts, "-DGPUML_IN_T=%s -DGPUML_OUT=%s -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d -DGPUML_HAS_RESID=%d "
             "-DGPUML_B_KMAJOR=%d -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=%d", tn[p->a->dtype], tn[ct], p->act,
             p->bias != NULL, p->resid != NULL, kmajor, cl);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul_sm90, opts, "gpuml_matmul_sm90", &fn));
    memset(&sp, 0, sizeof sp);
    sp.c = kp->C; sp.c_in = p->beta != 0.0f ? kp->C : 0; sp.bias = kp->bias; sp.resid = kp->R;
    sp.ldc = p->sc_m; sp.ldc_in = p->sc_m; sp.ldr = p->sr_m;
    sp.M = (int)p->M; sp.N = (int)p->N; sp.K = (int)p->K;
    sp.alpha = p->alpha * p->scale; sp.beta = p->beta; sp.group_m = 8;
    units = (tiles_m + cl - 1) / cl * ((p->N + 255) / 256);
    grid[0] = (unsigned)(cl * GPUML__MIN(units, (int64_t)GPUML__MAX(ctx->sm_count / cl, 1)));
    grid[1] = grid[2] = 1;
    args[0] = maps[0]; args[1] = maps[1]; args[2] = maps[2]; args[3] = &sp;
    return gpuml__launch(ctx, fn, grid, block, 230656, args, "gpuml_matmul (sm90)");
}


/* 1 when the mma.sync kernel can take this problem (it reads A along k and B along its unit dim
   with 16-byte cp.async: aligned bases, strides in multiples of 8 elements) */
GPUML__FN int gpuml__mma_fits(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    if (ctx->arch < 80 || ctx->smem_optin < 98304) return 0;
    if (p->a->dtype != GPUML_F16 && p->a->dtype != GPUML_BF16) return 0;
    if (p->sa_k != 1 || p->sa_m % 8 || kp->sa_b % 8 || !gpuml__al16(kp->A)) return 0;
    if (!((p->sb_n == 1 && p->sb_k % 8 == 0) || (p->sb_k == 1 && p->sb_n % 8 == 0)) || kp->sb_b % 8 || !gpuml__al16(kp->B)) return 0;
    if ((p->M + 127) / 128 > 65535) return 0;
    return 1;
}
GPUML__FN gpuml_status gpuml__mm_cuda_mma(gpuml_ctx *ctx, const gpuml__mm *p, gpuml__mm_params *kp)
{
    char opts[240];
    gpuml__CUfunction fn;
    unsigned grid[3], block[3] = {256, 1, 1};
    void *args[1];
    snprintf(opts, sizeof opts, "-DGPUML_A_DT=%d -DGPUML_B_DT=%d -DGPUML_C_DT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d "
             "-DGPUML_HAS_RESID=%d -DGPUML_BETA=%d -DGPUML_B_NMAJOR=%d", (int)p->a->dtype, (int)p->b->dtype, (int)p->c->dtype,
             p->act, p->bias != NULL, p->resid != NULL, p->beta != 0.0f, p->sb_n == 1 && p->N > 1 ? 1 : (p->sb_k == 1 ? 0 : 1));
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul_mma, opts, "gpuml_mm_mma", &fn));
    grid[0] = (unsigned)((p->N + 255) / 256); grid[1] = (unsigned)((p->M + 127) / 128); grid[2] = (unsigned)kp->batch;
    args[0] = kp;
    return gpuml__launch(ctx, fn, grid, block, 98304, args, "gpuml_matmul (mma)");
}

/* one launch per outer batch index; the innermost batch dim is the grid's z */
GPUML__FN gpuml_status gpuml__mm_cuda(gpuml_ctx *ctx, const gpuml__mm *p, gpuml_matmul_path path)
{
    gpuml__mm_params kp;
    int64_t outer = 1, o, inner = p->nb ? p->bdims[p->nb - 1] : 1;
    int d;
    if (inner > 65535)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: %lld batches in one dim (at most 65535)", (long long)inner);
    for (d = 0; d + 1 < p->nb; d++) outer *= p->bdims[d];
    memset(&kp, 0, sizeof kp);
    kp.M = (int)p->M; kp.N = (int)p->N; kp.K = (int)p->K; kp.batch = (int)inner;
    kp.sa_m = p->sa_m; kp.sa_k = p->sa_k; kp.sb_k = p->sb_k; kp.sb_n = p->sb_n;
    kp.sc_m = p->sc_m; kp.sc_n = p->sc_n; kp.sr_m = p->sr_m; kp.sr_n = p->sr_n;
    if (p->nb) { kp.sa_b = p->bs[0][p->nb - 1]; kp.sb_b = p->bs[1][p->nb - 1]; kp.sc_b = p->bs[2][p->nb - 1]; kp.sr_b = p->bs[3][p->nb - 1]; }
    kp.alpha = p->alpha; kp.beta = p->beta; kp.scale = p->scale;
    kp.bias = p->bias ? gpuml__dptr(p->bias) : 0;
    for (o = 0; o < outer; o++) {
        int64_t off[4] = {0, 0, 0, 0}, rem = o;
        int k;
        for (d = p->nb - 2; d >= 0; d--) {
            int64_t i = rem % p->bdims[d];
            rem /= p->bdims[d];
            for (k = 0; k < 4; k++) off[k] += i * p->bs[k][d];
        }
        kp.A = gpuml__dptr(p->a) + (gpuml__u64)(off[0] * (int64_t)gpuml__dtype_sizes[p->a->dtype]);
        kp.B = gpuml__dptr(p->b) + (gpuml__u64)(off[1] * (int64_t)gpuml__dtype_sizes[p->b->dtype]);
        kp.C = gpuml__dptr(p->c) + (gpuml__u64)(off[2] * (int64_t)gpuml__dtype_sizes[p->c->dtype]);
        kp.R = p->resid ? gpuml__dptr(p->resid) + (gpuml__u64)(off[3] * (int64_t)gpuml__dtype_sizes[p->c->dtype]) : 0;
        if ((path == GPUML_MATMUL_AUTO || path == GPUML_MATMUL_WGMMA) && gpuml__sm90_fits(ctx, p, &kp) &&
            (path == GPUML_MATMUL_WGMMA || p->M * p->N * p->K >= (int64_t)1 << 21)) {
            /* the Hopper kernel has no batch dim: one launch per batch element */
            gpuml__mm_params one = kp;
            int64_t zi;
            for (zi = 0; zi < inner; zi++) {
                one.A = kp.A + (gpuml__u64)(zi * kp.sa_b * 2);
                one.B = kp.B + (gpuml__u64)(zi * kp.sb_b * 2);
                one.C = kp.C + (gpuml__u64)(zi * kp.sc_b * (int64_t)gpuml__dtype_sizes[p->c->dtype]);
                one.R = kp.R ? kp.R + (gpuml__u64)(zi * kp.sr_b * (int64_t)gpuml__dtype_sizes[p->c->dtype]) : 0;
                if (!gpuml__sm90_fits(ctx, p, &one)) break;
                GPUML__TRY(gpuml__mm_cuda_sm90(ctx, p, &one));
            }
            if (zi == inner) continue;
            if (zi > 0) return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: batch %lld is misaligned for the Hopper kernel", (long long)zi);
        }
        if ((path == GPUML_MATMUL_AUTO || path == GPUML_MATMUL_MMA) && gpuml__mma_fits(ctx, p, &kp)) {
            GPUML__TRY(gpuml__mm_cuda_mma(ctx, p, &kp));
            continue;
        }
        if (path == GPUML_MATMUL_MMA)
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: the mma path needs sm_80+, f16/bf16, A contiguous along k, "
                               "a unit-stride dim in B, 16-byte aligned bases and strides in multiples of 8 elements "
                               "(this is %s x %s on sm_%d)", gpuml__dtype_names[p->a->dtype], gpuml__dtype_names[p->b->dtype], ctx->arch);
        if (path == GPUML_MATMUL_WGMMA)
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: the wgmma path needs sm_90, f16/bf16, row-major A, "
                               "a unit-stride dim in B and C, 16-byte aligned rows (this is %s x %s -> %s on sm_%d)",
                               gpuml__dtype_names[p->a->dtype], gpuml__dtype_names[p->b->dtype], gpuml__dtype_names[p->c->dtype], ctx->arch);
        GPUML__TRY(gpuml__mm_cuda_simt(ctx, p, &kp));
    }
    return GPUML_SUCCESS;
}
#endif

GPUML__DEF gpuml_status gpuml_matmul(gpuml_ctx *ctx, gpuml_tensor *c, const gpuml_tensor *a, const gpuml_tensor *b,
                                     const gpuml_matmul_desc *desc)
{
    static const char op[] = "gpuml_matmul";
    gpuml_matmul_desc d;
    gpuml__mm p;
    const gpuml_tensor *ops[4];
    int nbc, k, i;
    gpuml_dtype at, bt, ct;
    char s1[200], s2[200], s3[200];
    GPUML__TRY(gpuml__enter(ctx));
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    GPUML__TRY(gpuml__check_tensor(ctx, c, op, "c"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    GPUML__TRY(gpuml__check_tensor(ctx, b, op, "b"));
    if (d.bias) GPUML__TRY(gpuml__check_tensor(ctx, d.bias, op, "desc.bias"));
    if (d.residual) GPUML__TRY(gpuml__check_tensor(ctx, d.residual, op, "desc.residual"));
    GPUML__TRY(gpuml__check_output(ctx, c, op));
    if (a->ndim < 2 || b->ndim < 2 || c->ndim < 2)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: a, b and c need at least 2 dims (a %s, b %s, c %s)", op,
                           gpuml__shape_str(a, s1, sizeof s1), gpuml__shape_str(b, s2, sizeof s2), gpuml__shape_str(c, s3, sizeof s3));
    memset(&p, 0, sizeof p);
    p.M = a->shape[a->ndim - 2]; p.K = a->shape[a->ndim - 1]; p.N = b->shape[b->ndim - 1];
    nbc = c->ndim - 2;
    if (b->shape[b->ndim - 2] != p.K || c->shape[c->ndim - 2] != p.M || c->shape[c->ndim - 1] != p.N ||
        a->ndim - 2 > nbc || b->ndim - 2 > nbc)
        goto shape_error;
    if (p.M > INT32_MAX || p.N > INT32_MAX || p.K > INT32_MAX)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: M, N and K must each be below 2^31", op);
    /* batch dims: a's and b's broadcast to c's exactly */
    ops[0] = a; ops[1] = b; ops[2] = c; ops[3] = d.residual ? d.residual : c;
    if (d.residual && (d.residual->ndim != c->ndim || memcmp(d.residual->shape, c->shape, sizeof(int64_t) * (size_t)c->ndim) != 0))
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: residual %s must have c's shape %s", op,
                           gpuml__shape_str(d.residual, s1, sizeof s1), gpuml__shape_str(c, s2, sizeof s2));
    {
        int64_t bd[GPUML__MM_MAXB], bs[4][GPUML__MM_MAXB];
        int n = 0;
        for (i = 0; i < nbc; i++) {
            int64_t dim = c->shape[i];
            for (k = 0; k < 4; k++) {
                const gpuml_tensor *t = ops[k];
                int j = i - (c->ndim - t->ndim);
                if (j < 0) { bs[k][n] = 0; continue; }
                if (t->shape[j] != dim && t->shape[j] != 1) goto shape_error;
                bs[k][n] = t->shape[j] == 1 ? 0 : t->strides[j];
            }
            if (dim == 1) continue;
            /* merge with the previous batch dim when every operand allows it */
            if (n > 0) {
                int merge = 1;
                for (k = 0; k < 4; k++) if (bs[k][n - 1] != bs[k][n] * dim) merge = 0;
                if (merge) { bd[n - 1] *= dim; for (k = 0; k < 4; k++) bs[k][n - 1] = bs[k][n]; continue; }
            }
            bd[n++] = dim;
        }
        p.nb = n;
        memcpy(p.bdims, bd, sizeof bd);
        memcpy(p.bs, bs, sizeof bs);
    }
    p.sa_m = a->strides[a->ndim - 2]; p.sa_k = a->strides[a->ndim - 1];
    p.sb_k = b->strides[b->ndim - 2]; p.sb_n = b->strides[b->ndim - 1];
    p.sc_m = c->strides[c->ndim - 2]; p.sc_n = c->strides[c->ndim - 1];
    if (d.residual) { p.sr_m = d.residual->strides[c->ndim - 2]; p.sr_n = d.residual->strides[c->ndim - 1]; }
    /* dtypes */
    at = a->dtype; bt = b->dtype; ct = c->dtype;
    {
        int f8a = at == GPUML_FP8_E4M3 || at == GPUML_FP8_E5M2, f8b = bt == GPUML_FP8_E4M3 || bt == GPUML_FP8_E5M2;
        int half_out = ct == GPUML_F32 || ct == GPUML_F16 || ct == GPUML_BF16;
        int ok = (at == GPUML_F32 && bt == GPUML_F32 && ct == GPUML_F32) ||
                 ((at == GPUML_F16 || at == GPUML_BF16) && bt == at && (ct == GPUML_F32 || ct == at)) ||
                 (f8a && f8b && half_out) || (at == GPUML_I8 && bt == GPUML_I8 && ct == GPUML_I32);
        if (!ok)
            return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: %s x %s -> %s is not supported (f32xf32->f32, f16/bf16 -> same or f32, "
                               "fp8 -> f32/f16/bf16, i8xi8->i32)", op, gpuml__dtype_names[at], gpuml__dtype_names[bt], gpuml__dtype_names[ct]);
        if (at == GPUML_I8 && (d.bias || d.act || d.residual || (d.alpha != 0 && d.alpha != 1) || d.beta != 0))
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: i8 matmul computes the exact i32 product only (no alpha, beta or epilogue)", op);
    }
    if (d.bias && (d.bias->ndim != 1 || d.bias->shape[0] != p.N || d.bias->dtype != GPUML_F32))
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: bias must be f32 [%lld], not %s %s", op, (long long)p.N,
                           gpuml__dtype_names[d.bias->dtype], gpuml__shape_str(d.bias, s1, sizeof s1));
    if (d.bias && d.bias->strides[0] != 1 && d.bias->shape[0] > 1)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: bias must be contiguous (see gpuml_tensor_contiguous)", op);
    if (d.residual && d.residual->dtype != ct)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: residual is %s but c is %s", op, gpuml__dtype_names[d.residual->dtype], gpuml__dtype_names[ct]);
    if ((unsigned)d.act > GPUML_ACT_SILU) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: unknown activation %d", op, (int)d.act);
    /* aliasing: c may be read (beta, or as the residual itself) but must not overlap a or b */
    if (gpuml__overlap(c, a) || gpuml__overlap(c, b) || (d.bias && gpuml__overlap(c, d.bias)))
        return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: c overlaps an input", op);
    if (d.residual && gpuml__overlap(c, d.residual) && !gpuml__same_view(c, d.residual))
        return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: the residual overlaps c without being c", op);
    p.alpha = d.alpha == 0.0f ? 1.0f : d.alpha;
    p.beta = d.beta;
    p.scale = (d.a_scale == 0.0f ? 1.0f : d.a_scale) * (d.b_scale == 0.0f ? 1.0f : d.b_scale);
    p.act = (int)d.act;
    p.a = a; p.b = b; p.c = c; p.bias = d.bias; p.resid = d.residual;
    if (p.M == 0 || p.N == 0) return GPUML_SUCCESS;
    for (i = 0; i < p.nb; i++) if (p.bdims[i] == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        int64_t total = 1, o;
        if (d.path != GPUML_MATMUL_AUTO)
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: path %d is a GPU kernel; this context runs on the CPU", op, (int)d.path);
        for (i = 0; i < p.nb; i++) total *= p.bdims[i];
        for (o = 0; o < total; o++) {
            int64_t off[4] = {0, 0, 0, 0}, rem = o;
            for (i = p.nb - 1; i >= 0; i--) {
                int64_t idx = rem % p.bdims[i];
                rem /= p.bdims[i];
                for (k = 0; k < 4; k++) off[k] += idx * p.bs[k][i];
            }
            GPUML__TRY(gpuml__mm_cpu_one(ctx, &p, (const char *)gpuml_tensor_data(a) + off[0] * (int64_t)gpuml__dtype_sizes[at],
                                         (const char *)gpuml_tensor_data(b) + off[1] * (int64_t)gpuml__dtype_sizes[bt],
                                         (char *)gpuml_tensor_data(c) + off[2] * (int64_t)gpuml__dtype_sizes[ct],
                                         d.residual ? (const char *)gpuml_tensor_data(d.residual) + off[3] * (int64_t)gpuml__dtype_sizes[ct] : NULL));
        }
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__mm_cuda(ctx, &p, d.path);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
shape_error:
    return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: a %s @ b %s does not give c %s", op, gpuml__shape_str(a, s1, sizeof s1),
                       gpuml__shape_str(b, s2, sizeof s2), gpuml__shape_str(c, s3, sizeof s3));
}

/* every kernel family, for the compile checks (tests/test_jit.c) */
static const gpuml__family *const gpuml__all_families[] = { &gpuml__fam_copy, &gpuml__fam_matmul, &gpuml__fam_matmul_sm90, &gpuml__fam_matmul_mma, GPUML__OPS_FAMILIES 0 };
/* the specializations the compile checks build: family name, options */
static const char *const gpuml__family_variants[][2] = {
    { "copy", "-DGPUML_DST_DT=1 -DGPUML_SRC_DT=0" }, { "copy", "-DGPUML_DST_DT=6 -DGPUML_SRC_DT=2" },
    { "copy", "-DGPUML_DST_DT=3" }, { "copy", "-DGPUML_ELEM_BYTES=1" }, { "copy", "-DGPUML_ELEM_BYTES=4" },
    { "matmul", "-DGPUML_A_DT=0 -DGPUML_B_DT=0 -DGPUML_C_DT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_BETA=1 -DGPUML_INT=0" },
    { "matmul", "-DGPUML_A_DT=2 -DGPUML_B_DT=2 -DGPUML_C_DT=2 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_INT=0" },
    { "matmul", "-DGPUML_A_DT=6 -DGPUML_B_DT=7 -DGPUML_C_DT=1 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_INT=0" },
    { "matmul", "-DGPUML_A_DT=4 -DGPUML_B_DT=4 -DGPUML_C_DT=3 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_INT=1" },
    { "matmul_sm90", "-DGPUML_IN_T=bf16 -DGPUML_OUT=bf16 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=1 -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=2" },
    { "matmul_sm90", "-DGPUML_IN_T=f16 -DGPUML_OUT=f32 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_B_KMAJOR=0 -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=1" },
    { "matmul_mma", "-DGPUML_A_DT=2 -DGPUML_B_DT=2 -DGPUML_C_DT=2 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_B_NMAJOR=1" },
    { "matmul_mma", "-DGPUML_A_DT=1 -DGPUML_B_DT=1 -DGPUML_C_DT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_BETA=1 -DGPUML_B_NMAJOR=0" },
    { "matmul_mma", "-DGPUML_A_DT=1 -DGPUML_B_DT=1 -DGPUML_C_DT=1 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_B_NMAJOR=1" },
#ifdef GPUML__OPS_VARIANTS
    GPUML__OPS_VARIANTS
#endif
    { 0, 0 }
};

/* ------------------------------------------------------------ init / shutdown ---- */
GPUML__FN void gpuml__cuda_close(gpuml_ctx *ctx)
{
#ifndef GPUML_NO_CUDA
    gpuml__module_entry *m, *mn;
    gpuml__fn_entry *f, *fn;
    if (ctx->have_cuctx) {
        ctx->cu.CtxSetCurrent(ctx->cuctx);
        if (ctx->stream) ctx->cu.StreamSynchronize(ctx->stream);
        gpuml__release_blocks(ctx);
        if (ctx->stage) ctx->cu.MemFreeHost(ctx->stage);
        if (ctx->stage_event) ctx->cu.EventDestroy(ctx->stage_event);
        for (m = ctx->modules; m; m = mn) { mn = m->next; ctx->cu.ModuleUnload(m->mod); gpuml__free(m); }
        if (ctx->stream) ctx->cu.StreamDestroy(ctx->stream);
        ctx->cu.PrimaryCtxRelease(ctx->dev);
    }
    for (f = ctx->fns; f; f = fn) { fn = f->next; gpuml__free(f); }
    ctx->fns = NULL;
    ctx->modules = NULL;
    ctx->stage = NULL;
    ctx->stage_event = NULL;
    ctx->stream = NULL;
    ctx->have_cuctx = 0;
    if (ctx->cuda_lib) gpuml__dlclose(ctx->cuda_lib);
    ctx->cuda_lib = NULL;
    memset(&ctx->cu, 0, sizeof ctx->cu);
    ctx->rtc = NULL;
#else
    (void)ctx;
#endif
}

GPUML__FN void gpuml__cache_dir_init(gpuml_ctx *ctx, const gpuml_desc *d)
{
    const char *dir = d->cache_dir ? d->cache_dir : gpuml__getenv("GPUML_CACHE_DIR"), *base;
    if (dir && strcmp(dir, "off") == 0) { ctx->cache_off = 1; return; }
    if (dir) { snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", dir); return; }
#if GPUML__WIN
    base = gpuml__getenv("LOCALAPPDATA");
    if (base) { snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s\\gpuml", base); return; }
#else
    base = gpuml__getenv("XDG_CACHE_HOME");
    if (base) { snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/gpuml", base); return; }
    base = gpuml__getenv("HOME");
    if (base) { snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/.cache/gpuml", base); return; }
#endif
    ctx->cache_off = 1;   /* nowhere to put it */
}

GPUML__DEF gpuml_status gpuml_init(gpuml_ctx **out, const gpuml_desc *desc)
{
    gpuml_desc d;
    gpuml_ctx *ctx;
    const char *env, *how;
    gpuml_backend want;
    int nthreads;
    if (!out) return GPUML_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    ctx = (gpuml_ctx *)gpuml__calloc(sizeof *ctx);
    if (!ctx) return GPUML_ERROR_OUT_OF_MEMORY;
    *out = ctx;
    ctx->log_fn = d.log_fn;
    ctx->log_user = d.log_user;
    ctx->log_level = d.log_level ? (int)d.log_level : (int)GPUML_LOG_WARN;
    ctx->backend = GPUML_BACKEND_CPU;

    want = d.backend;
    how = "gpuml_desc.backend";
    if (want == GPUML_BACKEND_DEFAULT) {
        env = gpuml__getenv("GPUML_BACKEND");
        how = "GPUML_BACKEND";
        if (!env || strcmp(env, "auto") == 0) want = GPUML_BACKEND_AUTO;
        else if (strcmp(env, "cuda") == 0) want = GPUML_BACKEND_CUDA;
        else if (strcmp(env, "cpu") == 0) want = GPUML_BACKEND_CPU;
        else {
            ctx->failed = 1;
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "GPUML_BACKEND=%s: expected auto, cuda or cpu", env);
        }
    }
    if (want != GPUML_BACKEND_AUTO && want != GPUML_BACKEND_CUDA && want != GPUML_BACKEND_CPU) {
        ctx->failed = 1;
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_desc.backend = %d is not a backend", (int)want);
    }
    if (d.num_threads < 0) {
        ctx->failed = 1;
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_desc.num_threads = %d", d.num_threads);
    }
    gpuml__cache_dir_init(ctx, &d);

    if (want == GPUML_BACKEND_CPU) {
        snprintf(ctx->reason, sizeof ctx->reason, "CPU: asked for by %s", how);
    } else {
#ifdef GPUML_NO_CUDA
        snprintf(ctx->reason, sizeof ctx->reason, "built with GPUML_NO_CUDA");
        if (want == GPUML_BACKEND_CUDA) {
            ctx->failed = 1;
            return gpuml__fail(ctx, GPUML_ERROR_BACKEND_UNAVAILABLE, "CUDA backend asked for (%s) but unavailable: %s", how, ctx->reason);
        }
        {
            char why[1900];
            snprintf(why, sizeof why, "CPU: %.1800s", ctx->reason);
            snprintf(ctx->reason, sizeof ctx->reason, "%s", why);
        }
#else
        gpuml_status st = gpuml__cuda_open(ctx, &d);
        if (st == GPUML_SUCCESS) {
            ctx->backend = GPUML_BACKEND_CUDA;
        } else {
            char why[1900];
            snprintf(why, sizeof why, "%.1800s", ctx->reason);
            gpuml__cuda_close(ctx);
            memset(ctx->device_name, 0, sizeof ctx->device_name);
            ctx->arch = 0;
            if (want == GPUML_BACKEND_CUDA || st == GPUML_ERROR_LIBRARY_NOT_FOUND) {
                /* asked for CUDA, or named a library that is not there: an error, never a silent CPU run */
                snprintf(ctx->reason, sizeof ctx->reason, "%s", why);
                ctx->failed = 1;
                return gpuml__fail(ctx, st == GPUML_ERROR_LIBRARY_NOT_FOUND ? st : GPUML_ERROR_BACKEND_UNAVAILABLE,
                                   "CUDA backend unavailable: %s", why);
            }
            snprintf(ctx->reason, sizeof ctx->reason, "CPU: %s", why);
        }
#endif
    }
    nthreads = d.num_threads;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        if (nthreads == 0 && (env = gpuml__getenv("GPUML_NUM_THREADS")) != NULL) nthreads = atoi(env);
        if (nthreads <= 0) nthreads = gpuml__num_cores();
        snprintf(ctx->device_name, sizeof ctx->device_name, "CPU (%d threads%s)", nthreads,
                 gpuml__cpu_has_avx2_fma() ? ", AVX2+FMA" : "");
    } else {
        nthreads = 1;
    }
    ctx->pool = gpuml__pool_new(nthreads);
    if (!ctx->pool) {
        ctx->failed = 1;
        return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory creating the thread pool");
    }
    gpuml__log(ctx, GPUML_LOG_INFO, "gpuml %s: %s", GPUML_VERSION_STRING, ctx->reason);
    return GPUML_SUCCESS;
}

GPUML__DEF void gpuml_shutdown(gpuml_ctx *ctx)
{
    int i;
    if (!ctx) return;
    gpuml__cuda_close(ctx);
    gpuml__pool_free(ctx->pool);
    for (i = 0; i < ctx->nquarantine; i++) gpuml__free(ctx->quarantine[i]);
    gpuml__str_free(&ctx->msg);
    gpuml__free(ctx);
}

GPUML__DEF gpuml_backend gpuml_get_backend(const gpuml_ctx *ctx) { return ctx ? ctx->backend : GPUML_BACKEND_CPU; }
GPUML__DEF const char *gpuml_backend_name(gpuml_backend b)
{
    switch (b) {
    case GPUML_BACKEND_CUDA: return "cuda";
    case GPUML_BACKEND_CPU: return "cpu";
    case GPUML_BACKEND_AUTO: return "auto";
    default: return "default";
    }
}
GPUML__DEF const char *gpuml_backend_reason(const gpuml_ctx *ctx) { return ctx ? ctx->reason : ""; }
GPUML__DEF const char *gpuml_device_name(const gpuml_ctx *ctx) { return ctx ? ctx->device_name : ""; }
GPUML__DEF int gpuml_device_arch(const gpuml_ctx *ctx) { return ctx ? ctx->arch : 0; }

#endif /* GPUML__IMPLEMENTED */
#endif /* GPUML_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the gpuml authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
------------------------------------------------------------------------------
*/
