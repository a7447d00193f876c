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
       GPUML_CPU_SIMD     avx2 | scalar: cap the CPU ops' SIMD path (default: the best the
                          CPU has, AVX-512 where present); read once.  The CPU GEMM
                          (matmul, conv) picks its own kernel and ignores it
       GPUML_PROFILE      1: record every op, print the summary to stderr at shutdown
       GPUML_TRACE        file.json: record every op, write a Chrome trace there at shutdown
       GPUML_GRAPHS       off: gpuml_graph_* run the captured function eagerly

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

   OPS AT A GLANCE
   ---------------
   Outputs are tensors the caller made; every op checks shapes, dtypes, contexts and aliasing.
       gpuml_copy / gpuml_fill / gpuml_rand_uniform / gpuml_rand_normal
       gpuml_binary (add sub mul div maximum minimum pow; broadcasting, promotion, scalars,
           in place), gpuml_unary (neg abs exp log sqrt rsqrt sin cos tanh sigmoid relu gelu
           silu), gpuml_clamp, gpuml_where
       gpuml_reduce (sum mean max min argmax; any axes, keepdim), gpuml_var, gpuml_sum_to_shape
       gpuml_softmax, gpuml_log_softmax, gpuml_layernorm, gpuml_rmsnorm
       training: gpuml_activation_backward, gpuml_cross_entropy, gpuml_layernorm_backward,
           gpuml_rmsnorm_backward, gpuml_sgd_step, gpuml_adamw_step
       gpuml_matmul (strided/transposed operands, batches, alpha/beta, bias + activation +
           residual epilogue; f32, f16, bf16, fp8, i8; Hopper wgmma, sm_80 mma.sync, SIMT, CPU)

   PROFILING
   ---------
   GPUML_PROFILE=1 (or gpuml_desc.profile, or gpuml_profile_enable) records every op: name,
   dtype and shapes, device time (events around its launches; wall time on the CPU), FLOPs
   and bytes counted from the shapes, achieved TFLOP/s and GB/s, and the fraction of this
   device's roof (peak FLOP/s of the unit the dtype uses, from SM count x clock x a per-SM
   table; bandwidth measured once by a 256 MiB device copy and cached next to the kernels).
       gpuml_desc d = {0};  d.profile = 1;   gpuml_init(&ctx, &d);
       ... ops ...
       gpuml_profile_print(ctx, stdout);          // table by op and shape, sorted by time
       gpuml_profile_write_trace(ctx, "t.json");  // open in ui.perfetto.dev
       for (i = 0; i < gpuml_profile_count(ctx); i++) {
           gpuml_profile_record r;  gpuml_profile_get(ctx, i, &r);   // r.name, r.time_us, ...
       }
   Events are resolved lazily (gpuml_sync, or reading the records), so profiling does not
   serialize the stream; off, it costs one branch per op; on, two event records per op (about
   7-9 us of host time per op on an H200 machine).  GPUML_TRACE=file.json writes the
   trace at shutdown.  Ops inside a graph are not recorded one by one: each launch of a graph
   is one "graph" record carrying the captured ops' FLOPs and bytes.

   CUDA GRAPHS
   -----------
   Small-op sequences are bound by the CPU's launch cost; capture them once and replay:
       static void step(gpuml_ctx *ctx, void *user) { my_tensors *t = user;
           gpuml_add(ctx, t->y, t->y, t->x);  gpuml_gelu(ctx, t->y, t->y);  ... }
       gpuml_graph *g;
       gpuml_graph_capture(ctx, step, &tensors, &g);   // records; runs nothing
       for (...) { gpuml_tensor_write(tensors.x, ...); gpuml_graph_launch(ctx, g); }
       gpuml_graph_free(g);
   The graph replays the same ops on the same tensors with the same scalars; change the
   tensors' contents between launches.  Host transfers and syncs inside step fail (NOT_SUPPORTED);
   so does any op error, which gpuml_graph_capture returns.  Memory step frees is kept for the
   graph until gpuml_graph_free.  On the CPU backend, or with GPUML_GRAPHS=off, launch calls
   step again: the same results under the same rules.

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
    int profile;                 /* 1: record every op (else GPUML_PROFILE=1); see PROFILING */
    const char *trace_file;      /* Chrome trace written at shutdown (else GPUML_TRACE); implies profile */
    int graphs_off;              /* 1: gpuml_graph_* run eagerly (else GPUML_GRAPHS=off) */
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
    double flops, bytes;     /* optional: what the profiler reports for this launch */
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
    GPUML_MATMUL_WGMMA = 3,   /* Hopper wgmma + TMA (sm_90; f16/bf16, fp8, f32 as 3xTF32 or, allowed, as tf32) */
    GPUML_MATMUL_SMALL_M = 4  /* M <= 16 (decode): bound by reading B (f16/bf16, B stored N x K) */
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
    int allow_tf32;                   /* f32: let tensor cores round inputs to tf32 (10-bit mantissa).  Without
                                         it, large f32 products on Hopper run as 3xTF32: three tf32 products
                                         of split operands, f32-level accuracy (GPUML_MATMUL_SIMT forces
                                         the CUDA-core kernel) */
} gpuml_matmul_desc;
/* C[..., M, N] = epilogue(A[..., M, K] @ B[..., K, N]).  Any strides (pass transposed views
   for transposed operands); batch dims broadcast.  Dtypes: f32 x f32 -> f32; f16 x f16 or
   bf16 x bf16 -> f16/bf16/f32 (f32 accumulation); fp8 (e4m3/e5m2) -> f16/bf16/f32;
   i8 x i8 -> i32 (exact; no epilogue). */
GPUML_API gpuml_status gpuml_matmul(gpuml_ctx *ctx, gpuml_tensor *c, const gpuml_tensor *a, const gpuml_tensor *b,
                                    const gpuml_matmul_desc *desc);

/* ---- elementwise, reduction, normalization and training ops ---- */

/* ---- memory-bound ops ----
   Common rules.  Outputs are tensors you allocate; each op checks their shape and dtype
   (GPUML_ERROR_SHAPE / GPUML_ERROR_DTYPE, the message names the shapes).  Inputs and outputs
   may be any strided views.  Math is done in f32 (f32 accumulation for f16/bf16 inputs);
   the floating dtypes are f32, f16 and bf16.  An output may be the very same view as an
   input (in place); any other overlap with an input is GPUML_ERROR_ALIAS. */

/* Elementwise binary ops with NumPy broadcasting: out's shape must be the broadcast shape of
   a and b, and out's dtype the promoted dtype (f16 with bf16 gives f32; otherwise the wider). */
typedef enum gpuml_binary_op {
    GPUML_BINARY_ADD = 0, GPUML_BINARY_SUB = 1, GPUML_BINARY_MUL = 2, GPUML_BINARY_DIV = 3,
    GPUML_BINARY_MAXIMUM = 4, GPUML_BINARY_MINIMUM = 5,   /* NaN propagates */
    GPUML_BINARY_POW = 6
} gpuml_binary_op;
GPUML_API gpuml_status gpuml_binary(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
/* out = a op s, and out = s op a; out has a's shape and dtype */
GPUML_API gpuml_status gpuml_binary_scalar(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, const gpuml_tensor *a, double s);
GPUML_API gpuml_status gpuml_scalar_binary(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, double s, const gpuml_tensor *a);
GPUML_API gpuml_status gpuml_add(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_sub(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_mul(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_div(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_maximum(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_minimum(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_pow(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b);
GPUML_API gpuml_status gpuml_add_scalar(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, double s);
GPUML_API gpuml_status gpuml_mul_scalar(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, double s);

/* Elementwise unary ops: out has x's shape and dtype.  Accuracy: into f32 the transcendental
   ones are within a few ulps to ~2e-6 relative (GELU's far negative tail, results below 1e-28:
   2e-5).  Into f16 / bf16 they are computed in f32 and rounded once; GELU there may take a
   cheaper normal CDF (~1e-5 relative): every result is within half an ulp of the exact value
   plus that, and under 1% of results (GPU: 0.6% of f16 values, 0.2% of bf16) land one ulp from
   the correctly rounded one.  NaN in gives NaN out; gelu(+inf) = +inf, gelu(-inf) = NaN
   (-inf * 0, as in float64). */
typedef enum gpuml_unary_op {
    GPUML_UNARY_NEG = 0, GPUML_UNARY_ABS, GPUML_UNARY_EXP, GPUML_UNARY_LOG, GPUML_UNARY_SQRT,
    GPUML_UNARY_RSQRT, GPUML_UNARY_SIN, GPUML_UNARY_COS, GPUML_UNARY_TANH, GPUML_UNARY_SIGMOID,
    GPUML_UNARY_RELU, GPUML_UNARY_GELU /* erf form */, GPUML_UNARY_GELU_TANH /* tanh approximation */,
    GPUML_UNARY_SILU,
    GPUML_UNARY_COUNT
} gpuml_unary_op;
GPUML_API gpuml_status gpuml_unary(gpuml_ctx *ctx, gpuml_unary_op op, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_neg(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_abs(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_exp(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_log(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_sqrt(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_rsqrt(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_sin(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_cos(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_tanh(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_sigmoid(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_relu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_gelu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_gelu_tanh(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
GPUML_API gpuml_status gpuml_silu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x);
/* out = min(max(x, lo), hi); NaN stays NaN */
GPUML_API gpuml_status gpuml_clamp(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x, double lo, double hi);
/* out = mask != 0 ? a : b, all three broadcast to out's shape; mask is u8 or i32,
   a, b and out share one floating dtype */
GPUML_API gpuml_status gpuml_where(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *mask, const gpuml_tensor *a, const gpuml_tensor *b);

/* Reductions over `naxes` axes (negative axes count from the end; naxes == 0 means every
   axis).  keepdim keeps the reduced axes with size 1.  out is f32, f16 or bf16 (i32 for
   ARGMAX, whose index runs over the reduced axes in row-major order; the first of equal
   maxima wins and NaN counts as the largest).  MEAN of nothing is NaN; MAX, MIN and ARGMAX
   of nothing are GPUML_ERROR_SHAPE. */
typedef enum gpuml_reduce_op {
    GPUML_REDUCE_SUM = 0, GPUML_REDUCE_MEAN = 1, GPUML_REDUCE_MAX = 2, GPUML_REDUCE_MIN = 3,
    GPUML_REDUCE_ARGMAX = 4, GPUML_REDUCE_VAR = 5   /* VAR through gpuml_reduce: correction 1 */
} gpuml_reduce_op;
GPUML_API gpuml_status gpuml_reduce(gpuml_ctx *ctx, gpuml_reduce_op op, gpuml_tensor *out, const gpuml_tensor *x,
                                    const int *axes, int naxes, int keepdim);
/* variance = sum((x - mean)^2) / (N - correction); correction 1 is Bessel's (unbiased) */
GPUML_API gpuml_status gpuml_var(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x, const int *axes, int naxes,
                                 int keepdim, double correction);
/* grad reduced (summed) to out's shape, where out's shape broadcasts to grad's: the
   gradient of a broadcast input */
GPUML_API gpuml_status gpuml_sum_to_shape(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *grad);

/* softmax / log-softmax along one axis; y has x's shape and dtype */
GPUML_API gpuml_status gpuml_softmax(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, int axis);
GPUML_API gpuml_status gpuml_log_softmax(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, int axis);
/* over the last axis: y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance);
   weight and bias are 1-d of the last axis' length, any floating dtype, or NULL */
GPUML_API gpuml_status gpuml_layernorm(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *weight,
                                       const gpuml_tensor *bias, double eps);
/* y = x / sqrt(mean(x^2) + eps) * weight */
GPUML_API gpuml_status gpuml_rmsnorm(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *weight, double eps);

/* ---- training ---- */
/* dx = dy * f'(x) for op RELU, GELU, GELU_TANH or SILU (dx, dy, x of one shape and dtype) */
GPUML_API gpuml_status gpuml_activation_backward(gpuml_ctx *ctx, gpuml_unary_op op, gpuml_tensor *dx, const gpuml_tensor *dy,
                                                 const gpuml_tensor *x);
/* Mean softmax cross-entropy of logits [B, C] against i32 class labels [B]: loss (f32, one
   element) = mean over rows of logsumexp(row) - row[label].  dlogits (logits' shape and
   dtype, or NULL) = (softmax(row) - onehot(label)) / B.  A label outside [0, C) makes its
   row's loss and gradient NaN. */
GPUML_API gpuml_status gpuml_cross_entropy(gpuml_ctx *ctx, gpuml_tensor *loss, gpuml_tensor *dlogits,
                                           const gpuml_tensor *logits, const gpuml_tensor *labels);
/* Backward of gpuml_layernorm / gpuml_rmsnorm (the statistics are recomputed from x).
   dx has x's shape and dtype; dweight and dbias (either may be NULL) are 1-d of the last
   axis' length in any floating dtype.  weight may be NULL (then as if all ones). */
GPUML_API gpuml_status gpuml_layernorm_backward(gpuml_ctx *ctx, gpuml_tensor *dx, gpuml_tensor *dweight, gpuml_tensor *dbias,
                                                const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *weight,
                                                double eps);
GPUML_API gpuml_status gpuml_rmsnorm_backward(gpuml_ctx *ctx, gpuml_tensor *dx, gpuml_tensor *dweight,
                                              const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *weight,
                                              double eps);

/* Fused optimizer steps, one pass over memory, in place on f32 `param` (master weights) with
   f32 or bf16 `grad` of the same shape and f32 state buffers (start them at zero). */
typedef struct gpuml_sgd_desc {
    double lr;              /* required, > 0 */
    double momentum;        /* 0 = plain SGD (momentum_buf may be NULL) */
    double dampening;
    double weight_decay;    /* L2: grad += weight_decay * param */
    int nesterov;
} gpuml_sgd_desc;
GPUML_API gpuml_status gpuml_sgd_step(gpuml_ctx *ctx, gpuml_tensor *param, const gpuml_tensor *grad,
                                      gpuml_tensor *momentum_buf, const gpuml_sgd_desc *desc);
typedef struct gpuml_adamw_desc {
    double lr;              /* 0 = 1e-3 */
    double beta1, beta2;    /* 0 = 0.9, 0.999 */
    double eps;             /* 0 = 1e-8 */
    double weight_decay;    /* decoupled: param *= 1 - lr * weight_decay (0 = none) */
    int64_t step;           /* the step being taken, from 1 (bias correction); required */
} gpuml_adamw_desc;
GPUML_API gpuml_status gpuml_adamw_step(gpuml_ctx *ctx, gpuml_tensor *param, const gpuml_tensor *grad,
                                        gpuml_tensor *m, gpuml_tensor *v, const gpuml_adamw_desc *desc);

/* ---- profiling ----
   On when gpuml_desc.profile, GPUML_PROFILE=1, a trace file, or gpuml_profile_enable.  Each
   op is timed with device events around its launches on the context's stream (wall time on
   the CPU backend); the events are resolved lazily (gpuml_sync, or when records are read),
   so profiling never serializes the stream.  Off, it costs one branch per op. */
typedef enum gpuml_profile_unit {   /* the roof an op is measured against */
    GPUML_UNIT_FP32 = 0,            /* FP32 CUDA cores (and every memory-bound op) */
    GPUML_UNIT_F16_TENSOR = 1,      /* f16/bf16 tensor cores, f32 accumulation */
    GPUML_UNIT_TF32_TENSOR = 2,
    GPUML_UNIT_FP8_TENSOR = 3,
    GPUML_UNIT_INT8_TENSOR = 4,
    GPUML_UNIT_COUNT = 5
} gpuml_profile_unit;
typedef struct gpuml_profile_record {
    char name[48];           /* "matmul", "add", "copy", "softmax", "kernel:saxpy", "graph" */
    char shapes[208];        /* dtype and shapes, "bf16 [4096,4096]x[4096,4096] -> [4096,4096]" */
    gpuml_profile_unit unit;
    double start_us;         /* since profiling was enabled or reset (device clock on the GPU) */
    double time_us;          /* device time between events around the op (CPU: wall time) */
    double flops, bytes;     /* counted from the shapes (matmul 2*M*N*K*batch; bytes = each
                                input read once + each output written once) */
    double tflops, gbps;     /* achieved */
    double peak_tflops;      /* this device's peak for the unit (0: unknown, e.g. on the CPU) */
    double peak_gbps;        /* measured copy bandwidth of this device */
    double frac_of_peak;     /* time the roofline allows / time taken: 1 = at the roof */
    int compute_bound;       /* 1: flops/peak_flops > bytes/peak_bandwidth; 0: memory-bound;
                                -1: unknown (FLOPs but no compute peak, as on the CPU) */
} gpuml_profile_record;
GPUML_API gpuml_status gpuml_profile_enable(gpuml_ctx *ctx, int on);
GPUML_API gpuml_status gpuml_profile_reset(gpuml_ctx *ctx);          /* drops every record */
GPUML_API int gpuml_profile_count(gpuml_ctx *ctx);                   /* records so far */
/* record i (0-based, in issue order); waits for the GPU to finish that op if needed */
GPUML_API gpuml_status gpuml_profile_get(gpuml_ctx *ctx, int i, gpuml_profile_record *record);
/* summary table sorted by total time; `file` is a FILE * (e.g. stderr) */
GPUML_API gpuml_status gpuml_profile_print(gpuml_ctx *ctx, void *file);
/* Chrome / Perfetto trace (JSON "traceEvents", one "X" event per op) */
GPUML_API gpuml_status gpuml_profile_write_trace(gpuml_ctx *ctx, const char *path);
/* this device's roofs: peak TFLOP/s of a unit (0 if it has none) and measured GB/s */
GPUML_API gpuml_status gpuml_profile_peak(gpuml_ctx *ctx, gpuml_profile_unit unit, double *tflops, double *gbps);

/* ---- CUDA graphs ----
   gpuml_graph_capture records what fn issues (its ops are not run) and makes a graph of it;
   gpuml_graph_launch replays it with one launch.  With graphs off or on the CPU backend,
   launch calls fn again instead: same results, same rules.  The rules inside fn: no host
   transfers or syncs (gpuml_tensor_read/write, gpuml_sync fail with a clear error); tensors
   fn uses must outlive the graph; scalars and shapes are fixed at capture (change the
   *contents* of the tensors between launches, not which tensors).  Temporaries fn frees
   belong to the graph until gpuml_graph_free.  A failing op makes capture (or an eager
   launch) return its error. */
typedef struct gpuml_graph gpuml_graph;
typedef void (*gpuml_graph_fn)(gpuml_ctx *ctx, void *user);
GPUML_API gpuml_status gpuml_graph_capture(gpuml_ctx *ctx, gpuml_graph_fn fn, void *user, gpuml_graph **graph);
GPUML_API gpuml_status gpuml_graph_launch(gpuml_ctx *ctx, gpuml_graph *graph);
GPUML_API int gpuml_graph_is_cuda(const gpuml_graph *graph);        /* 1: a CUDA graph; 0: eager */
GPUML_API void gpuml_graph_free(gpuml_graph *graph);                /* before gpuml_shutdown */

/* ---- convolution and pooling ----
   Activations are 4-D: NHWC [N,H,W,C] (weights KRSC [K,R,S,C/groups]) or NCHW [N,C,H,W]
   (weights KCRS [K,C/groups,R,S]), chosen by desc.layout for x, y and w together; any strides
   (views) are accepted.  x, w and y (dx, dw, dy) share one dtype: f32, f16 or bf16, with f32
   accumulation.  Output size P = (H + pad_top + pad_bottom - dil_h*(R-1) - 1) / stride_h + 1
   (likewise Q); gpuml_conv2d_out_dim computes it.  Zero means default for every desc field:
   stride 1, padding 0, dilation 1, groups 1, NHWC. */
typedef enum gpuml_layout { GPUML_LAYOUT_NHWC = 0, GPUML_LAYOUT_NCHW = 1 } gpuml_layout;
typedef enum gpuml_conv_path {
    GPUML_CONV_AUTO = 0,      /* chosen by shape, dtype, layout and device */
    GPUML_CONV_DIRECT = 1,    /* CUDA cores, one output per thread: every parameter combination */
    GPUML_CONV_GEMM = 2,      /* 1x1 as one gpuml_matmul, else im2col + gpuml_matmul (the CPU's only path) */
    GPUML_CONV_IGEMM = 3,     /* tensor-core implicit GEMM (f16/bf16 NHWC; f32 either layout, groups 1, sm_80+:
                                 tf32 with allow_tf32, else 3xTF32) */
    GPUML_CONV_WGMMA = 4      /* Hopper wgmma implicit GEMM (f16/bf16 NHWC, C % 64 == 0; f32 as tf32 / 3xTF32, any layout; sm_90) */
} gpuml_conv_path;
typedef struct gpuml_conv2d_desc {
    int stride[2];                    /* h, w */
    int pad[4];                       /* top, bottom, left, right */
    int dilation[2];                  /* h, w */
    int groups;                       /* C and K divisible by it; groups = C = K is depthwise */
    gpuml_layout layout;
    const gpuml_tensor *bias;         /* [K] f32 (forward only) */
    gpuml_activation act;             /* applied after bias (forward only) */
    const gpuml_tensor *residual;     /* y's shape and dtype, added after act (forward only) */
    int allow_tf32;                   /* f32 forward (and stride-1 backward data, which runs as a forward conv)
                                         on sm_80+: tensor-core tf32 allowed (inputs rounded to tf32,
                                         ~1e-3 relative); without it f32 runs as 3xTF32 or on CUDA cores */
    gpuml_conv_path path;             /* force a path (GPUML_ERROR_NOT_SUPPORTED if it cannot run) */
} gpuml_conv2d_desc;
GPUML_API int64_t gpuml_conv2d_out_dim(int64_t in, int64_t window, int stride, int pad_lo, int pad_hi, int dilation);
/* y = residual + act(conv(x, w) + bias) */
GPUML_API gpuml_status gpuml_conv2d(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *w,
                                    const gpuml_conv2d_desc *desc);
/* dx = gradient of conv2d with respect to x, given dy (no epilogue: pass dy already multiplied
   by the activation's derivative, e.g. with gpuml_activation_backward) */
GPUML_API gpuml_status gpuml_conv2d_backward_data(gpuml_ctx *ctx, gpuml_tensor *dx, const gpuml_tensor *dy,
                                                  const gpuml_tensor *w, const gpuml_conv2d_desc *desc);
/* dw = gradient with respect to w.  The bias gradient is dy summed over N, H and W:
   gpuml_reduce(ctx, GPUML_REDUCE_SUM, db, dy, axes {0,1,2} (NHWC) or {0,2,3} (NCHW), 3, 0). */
GPUML_API gpuml_status gpuml_conv2d_backward_filter(gpuml_ctx *ctx, gpuml_tensor *dw, const gpuml_tensor *x,
                                                    const gpuml_tensor *dy, const gpuml_conv2d_desc *desc);
/* conv1d over 3-D activations NWC [N,W,C] (weights [K,S,C/groups]) or NCW [N,C,W] (weights
   [K,C/groups,S]): conv2d with H = 1; desc's stride[1], pad[2..3] and dilation[1] apply
   (stride[0], pad[0..1] and dilation[0] must be 0 or 1/0/1). */
GPUML_API gpuml_status gpuml_conv1d(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *w,
                                    const gpuml_conv2d_desc *desc);

typedef enum gpuml_pool_op { GPUML_POOL_MAX = 0, GPUML_POOL_AVG = 1 } gpuml_pool_op;
typedef struct gpuml_pool2d_desc {
    gpuml_pool_op op;
    int window[2];                    /* h, w; required unless global */
    int stride[2];                    /* 0 means the window */
    int pad[4];                       /* top, bottom, left, right; each below the window */
    int count_include_pad;            /* average: divide by the window clipped to the padded image */
    gpuml_layout layout;
    int global;                       /* window = the whole image (global pooling; y is [N,1,1,C] / [N,C,1,1]) */
} gpuml_pool2d_desc;
/* max ignores padding and propagates NaN; average divides by the in-image count unless
   count_include_pad.  x and y share one dtype (f32, f16, bf16).  PyTorch's ceil_mode: give the
   extra last window as bottom / right padding, pad[1] += (P_ceil - 1) * stride[0] + window[0] -
   (H + pad[0] + pad[1]) where that is positive (likewise pad[3]; e.g. 112 rows, 3 / 2, pad 1: 56 ->
   57 rows out, pad[1] 1 -> 2): max, and average without count_include_pad, then match it; with
   count_include_pad PyTorch's divisor stops at the original padding, this one at the given one. */
GPUML_API gpuml_status gpuml_pool2d(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_pool2d_desc *desc);
/* the gradient of gpuml_pool2d: dx (x's shape and dtype, overwritten) from dy (y's shape), desc as
   in the forward.  Max sends each window's gradient to the element the forward returned (the
   first maximum in row-major window order; the last NaN where the window holds one), so it needs
   x; average spreads it evenly over the window's count (x may be NULL).  Where windows overlap,
   an element's contributions are summed in f32 in a fixed order (deterministic, no atomics); a max
   pass keeps a temporary int32 index per output element. */
GPUML_API gpuml_status gpuml_pool2d_backward(gpuml_ctx *ctx, gpuml_tensor *dx, const gpuml_tensor *dy, const gpuml_tensor *x,
                                             const gpuml_pool2d_desc *desc);

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
#include <cpuid.h>
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

/* F16C (the x86 f16 <-> f32 conversions; every AVX2 CPU has it, but it is its own CPUID bit) */
GPUML__FN int gpuml__cpu_has_f16c(void)
{
#if GPUML__HAVE_AVX2_PATH
    static int cached = -1;
    if (cached < 0) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        cached = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
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
    X(EventQuery, "cuEventQuery", gpuml__CUresult, (gpuml__CUevent)) \
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
typedef gpuml__CUresult (*gpuml__TensorMapEncodeIm2col_fn)(void *map, int dtype, unsigned rank, void *addr,
                                                           const gpuml__u64 *dims, const gpuml__u64 *strides,
                                                           const int *lower, const int *upper, unsigned channels,
                                                           unsigned pixels, const unsigned *estrides, int interleave,
                                                           int swizzle, int l2promo, int oobfill);

/* CUDA graphs (optional: without them gpuml_graph_* run eagerly) */
typedef struct gpuml__CUgraph_st *gpuml__CUgraph;
typedef struct gpuml__CUgraphExec_st *gpuml__CUgraphExec;
#define GPUML__GRAPH_FUNCS(X) \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2", gpuml__CUresult, (gpuml__CUstream, int)) \
    X(StreamEndCapture, "cuStreamEndCapture", gpuml__CUresult, (gpuml__CUstream, gpuml__CUgraph *)) \
    X(GraphInstantiate, "cuGraphInstantiateWithFlags", gpuml__CUresult, (gpuml__CUgraphExec *, gpuml__CUgraph, unsigned long long)) \
    X(GraphLaunch, "cuGraphLaunch", gpuml__CUresult, (gpuml__CUgraphExec, gpuml__CUstream)) \
    X(GraphExecDestroy, "cuGraphExecDestroy", gpuml__CUresult, (gpuml__CUgraphExec)) \
    X(GraphDestroy, "cuGraphDestroy", gpuml__CUresult, (gpuml__CUgraph))
enum { GPUML__CU_CAPTURE_RELAXED = 2 };

#define GPUML__DECL_FN(name, sym, ret, args) ret (*name) args;
typedef struct gpuml__cuda_api {
    GPUML__CUDA_FUNCS(GPUML__DECL_FN)
    gpuml__TensorMapEncodeTiled_fn TensorMapEncodeTiled;   /* optional (CUDA 12+) */
    gpuml__TensorMapEncodeIm2col_fn TensorMapEncodeIm2col; /* optional (CUDA 12+) */
    GPUML__GRAPH_FUNCS(GPUML__DECL_FN)                     /* optional (CUDA 11.4+) */
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
    gpuml__CUdeviceptr tail_cnt; /* GPUML__TAIL_CNT 64-bit counters, zero when allocated, for the kernels
                                    whose split tail tiles pair up (gpuml_conv_1x1w); 0 until needed */
    void *stage;                 /* pinned staging buffer for host transfers */
    size_t stage_size;
    gpuml__CUevent stage_event;
    int stage_pending;
    gpuml__fn_entry *fns;
    gpuml__module_entry *modules;
    /* the dynamic shared memory each recently launched function was allowed (cuFuncSetAttribute
       once a function and size, not every launch): direct-mapped by the function's address;
       modules stay loaded until the context goes, so an address is never reused */
    struct { gpuml__CUfunction fn; unsigned smem; } smem_set[64];
    /* profiler (see "profiler" below) */
    int prof_on, prof_depth, prof_print_at_exit, prof_want_start;
    double prof_acc_flops, prof_acc_bytes;   /* nested ops add here (graphs) */
    int prof_acc_ops;
    struct gpuml__prec *prof_recs;
    int prof_n, prof_cap, prof_resolved;
    long prof_dropped;
    double prof_t0, prof_cur_start;          /* wall clock (CPU backend) */
    gpuml__CUevent prof_cur_ev, prof_base;   /* the open op's start event; time origin */
    gpuml__CUevent *prof_ev_free;            /* event pool */
    int prof_nev_free, prof_cap_ev_free;
    double bw_gbps;                          /* measured copy bandwidth, 0 until needed */
    char prof_note[64];                      /* shapes text for a graph record */
    char trace_path[1024];
    /* graphs */
    int graphs_off;
    int in_graph;                            /* inside a graph's fn (capture or eager launch) */
    int capturing;                           /* a CUDA stream capture is open */
    gpuml__block *capture_owned;             /* blocks freed during the capture */
    gpuml_status graph_status;               /* first failure inside fn */
    gpuml__str graph_msg;
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
    if (ctx->in_graph && ctx->graph_status == GPUML_SUCCESS) {   /* the graph call reports the first one */
        ctx->graph_status = st;
        ctx->graph_msg.len = 0;
        gpuml__str_add(&ctx->graph_msg, buf);
    }
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
        f = gpuml__dlsym(ctx->cuda_lib, "cuTensorMapEncodeIm2col");
        memcpy(&ctx->cu.TensorMapEncodeIm2col, &f, sizeof f);
#define GPUML__LOAD_OPT(name, sym, ret, args) f = gpuml__dlsym(ctx->cuda_lib, sym); memcpy(&ctx->cu.name, &f, sizeof f);
        GPUML__GRAPH_FUNCS(GPUML__LOAD_OPT)
#undef GPUML__LOAD_OPT
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

/* Atomics for the pool's fast path (GCC / clang builtins, MSVC Interlocked).  Elsewhere the
   pool guards them with a mutex of its own (amu) and never spins. */
#if defined(__GNUC__) || defined(__clang__)
#define GPUML__ATOMICS 1
#define gpuml__aload(v) __atomic_load_n(v, __ATOMIC_ACQUIRE)
#define gpuml__aadd(v, d) __atomic_fetch_add(v, d, __ATOMIC_ACQ_REL)
#elif defined(_MSC_VER)
#define GPUML__ATOMICS 1
#define gpuml__aload(v) InterlockedCompareExchange64(v, 0, 0)
#define gpuml__aadd(v, d) InterlockedExchangeAdd64(v, d)
#else
#define GPUML__ATOMICS 0
#endif
#if GPUML__X86 && (defined(__GNUC__) || defined(__clang__))
#define gpuml__relax() __builtin_ia32_pause()
#elif GPUML__WIN
#define gpuml__relax() YieldProcessor()
#else
#define gpuml__relax() ((void)0)
#endif

/* How long (microseconds) an idle worker, and a caller waiting for its job's last chunk, spin
   before they block on the condition variable.  Back-to-back calls then find the workers
   awake: waking 15 sleeping threads cost ~100 us a call on a 16-core Xeon (KVM), more than a
   256^3 GEMM's whole work at 16 threads.  0: block at once (the pool before 2026-11-28).
   Read when a pool is made. */
static int gpuml__pool_spin_us = 200;

struct gpuml__pool {
    int n;                       /* threads including the caller */
    gpuml__thread *threads;
    gpuml__mutex mu;
    gpuml__mutex amu;            /* the atomics where the compiler has none */
    gpuml__cond wake, done;
    volatile int64_t generation; /* bumped for each job (atomic; written under mu) */
    volatile int64_t stop;       /* atomic; written under mu */
    volatile int64_t active;     /* workers still in the job (atomic) */
    volatile int64_t next;       /* next item (atomic) */
    int busy, sleepers;          /* under mu */
    int spin_us;                 /* gpuml__pool_spin_us when the pool was made */
    gpuml__task_fn fn;
    void *arg;
    int64_t total, chunk;        /* items, items per grab */
};

#if GPUML__ATOMICS
GPUML__FN int64_t gpuml__pool_load(gpuml__pool *p, volatile int64_t *v) { (void)p; return gpuml__aload(v); }
GPUML__FN int64_t gpuml__pool_add(gpuml__pool *p, volatile int64_t *v, int64_t d) { (void)p; return gpuml__aadd(v, d); }
#else
GPUML__FN int64_t gpuml__pool_load(gpuml__pool *p, volatile int64_t *v)
{
    int64_t r;
    gpuml__lock(&p->amu);
    r = *v;
    gpuml__unlock(&p->amu);
    return r;
}
GPUML__FN int64_t gpuml__pool_add(gpuml__pool *p, volatile int64_t *v, int64_t d)
{
    int64_t r;
    gpuml__lock(&p->amu);
    r = *v; *v = r + d;
    gpuml__unlock(&p->amu);
    return r;
}
#endif
#define GPUML__PLOAD(p, v) gpuml__pool_load(p, &(p)->v)

/* monotonic wall clock in microseconds */
GPUML__FN double gpuml__now_us(void)
{
#if GPUML__WIN
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart * 1e6 / (double)f.QuadPart;
#elif defined(CLOCK_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
#else
    /* strict C99 hides clock_gettime in <time.h>: find it at run time */
    typedef struct { long sec, nsec; } gpuml__ts;
    typedef int (*gpuml__clock_fn)(int, gpuml__ts *);
    static gpuml__clock_fn fn;
    static int looked;
    gpuml__ts ts;
    if (!looked) {
        void *lib = dlopen(NULL, RTLD_NOW), *f = lib ? dlsym(lib, "clock_gettime") : NULL;
        memcpy(&fn, &f, sizeof f);
        looked = 1;
    }
#if defined(__APPLE__)
    if (fn && fn(6, &ts) == 0) return (double)ts.sec * 1e6 + (double)ts.nsec * 1e-3;
#else
    if (fn && fn(1, &ts) == 0) return (double)ts.sec * 1e6 + (double)ts.nsec * 1e-3;   /* CLOCK_MONOTONIC */
#endif
    return (double)clock() * 1e6 / (double)CLOCKS_PER_SEC;
#endif
}

/* Spins until *v != old (returns 1) or the spin time is over (returns 0). */
GPUML__FN int gpuml__pool_spin(gpuml__pool *p, volatile int64_t *v, int64_t old)
{
    double until = 0;
    int i;
    if (!GPUML__ATOMICS || p->spin_us <= 0) return 0;
    for (;;) {
        for (i = 0; i < 64; i++) {
            if (gpuml__pool_load(p, v) != old) return 1;
            gpuml__relax();
        }
        if (until == 0) until = gpuml__now_us() + p->spin_us;
        else if (gpuml__now_us() > until) return 0;
    }
}

/* grabs chunks until the job is drained */
GPUML__FN void gpuml__pool_work(gpuml__pool *p, int tid)
{
    for (;;) {
        int64_t b = gpuml__pool_add(p, &p->next, p->chunk), e;
        if (b >= p->total) return;
        e = GPUML__MIN(b + p->chunk, p->total);
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
    int64_t seen = 0;
    gpuml__free(a);
    for (;;) {
        if (!gpuml__pool_spin(p, &p->generation, seen)) {
            gpuml__lock(&p->mu);
            p->sleepers++;
            while (!GPUML__PLOAD(p, stop) && GPUML__PLOAD(p, generation) == seen) gpuml__cond_wait(&p->wake, &p->mu);
            p->sleepers--;
            gpuml__unlock(&p->mu);
        }
        if (GPUML__PLOAD(p, stop)) break;
        seen = GPUML__PLOAD(p, generation);
        gpuml__pool_work(p, wa.tid);
        if (gpuml__pool_add(p, &p->active, -1) == 1) {
            /* the caller may be asleep: it checks `active` under the lock before it waits */
            gpuml__lock(&p->mu);
            gpuml__cond_broadcast(&p->done);
            gpuml__unlock(&p->mu);
        }
    }
    return 0;
}

GPUML__FN gpuml__pool *gpuml__pool_new(int nthreads)
{
    gpuml__pool *p = (gpuml__pool *)gpuml__calloc(sizeof *p);
    int i;
    if (!p) return NULL;
    p->n = 1;
    p->spin_us = gpuml__pool_spin_us;
    (void)gpuml__now_us();   /* its first call looks clock_gettime up: before the workers spin */
    gpuml__mutex_init(&p->mu);
    gpuml__mutex_init(&p->amu);
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
    gpuml__pool_add(p, &p->stop, 1);
    gpuml__pool_add(p, &p->generation, 1);
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
    gpuml__mutex_destroy(&p->amu);
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
    /* the job's fields are written before the generation is bumped (release), and spinning
       workers read them after they see it (acquire) */
    gpuml__pool_add(p, &p->generation, 1);
    if (p->sleepers) gpuml__cond_broadcast(&p->wake);
    gpuml__unlock(&p->mu);
    gpuml__pool_work(p, 0);
    {   /* spin while workers are still finishing, then sleep below */
        int64_t a;
        while ((a = GPUML__PLOAD(p, active)) > 0 && gpuml__pool_spin(p, &p->active, a)) {}
    }
    gpuml__lock(&p->mu);
    while (GPUML__PLOAD(p, active) > 0) gpuml__cond_wait(&p->done, &p->mu);
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

GPUML__FN void gpuml__prof_start(gpuml_ctx *ctx);   /* the profiler's start event (below) */

/* The one launch helper for library and user kernels. */
GPUML__FN gpuml_status gpuml__launch(gpuml_ctx *ctx, gpuml__CUfunction fn, const unsigned *grid, const unsigned *block,
                                     unsigned smem, void **args, const char *what)
{
    gpuml__CUresult r;
    if (ctx->prof_want_start) gpuml__prof_start(ctx);
    if (smem > 32 * 1024) {   /* the default cap, 48 KB, counts the kernel's static shared memory too */
        const size_t slot = ((size_t)(uintptr_t)fn >> 4) % (sizeof ctx->smem_set / sizeof ctx->smem_set[0]);
        if (ctx->smem_set[slot].fn != fn || ctx->smem_set[slot].smem < smem) {
            r = ctx->cu.FuncSetAttribute(fn, GPUML__CU_FUNC_ATTR_MAX_DYN_SMEM, (int)smem);
            if (r != 0) return gpuml__cu_fail(ctx, r, what);
            ctx->smem_set[slot].fn = fn; ctx->smem_set[slot].smem = smem;
        }
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
        if (r == GPUML__CUDA_ERROR_OUT_OF_MEMORY && ctx->free_blocks && !ctx->capturing) {
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
#ifndef GPUML_NO_CUDA
    if (ctx->capturing) {
        /* the graph being captured uses this block at every launch: it stays in use, owned by
           the graph, until gpuml_graph_free (handing it out again would corrupt replays) */
        gpuml__block *b = (gpuml__block *)gpuml__malloc(sizeof *b);
        if (b) { b->ptr = ptr; b->size = size; b->next = ctx->capture_owned; ctx->capture_owned = b; }
        return;   /* no host memory: leaked rather than reused */
    }
#endif
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
/* Up to 4 operands walked over one shape (out first; views already broadcast): dims of size 1 dropped
   and dims merged where every operand is contiguous across them.  Row-major linear order is unchanged
   by this. */
typedef struct gpuml__xiter {
    int64_t n;
    int ndim, nops;
    int64_t dims[GPUML_MAX_DIMS];
    int64_t strides[4][GPUML_MAX_DIMS];
    char *base[4];              /* address of each view's first element */
    gpuml_dtype dt[4];
} gpuml__xiter;

GPUML__FN void gpuml__xiter_make(gpuml__xiter *it, const gpuml_tensor *const *ops, int nops)
{
    const gpuml_tensor *s = ops[0];
    int d, k, nd = 0;
    memset(it, 0, sizeof *it);
    it->nops = nops;
    it->n = gpuml__numel(s);
    for (k = 0; k < nops; k++) {
        it->base[k] = (char *)gpuml_tensor_data(ops[k]);
        it->dt[k] = ops[k]->dtype;
    }
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
    if (nd == 0) { it->dims[0] = 1; nd = 1; }
    it->ndim = nd;
}
GPUML__FN int gpuml__xiter_contig(const gpuml__xiter *it)
{
    int k;
    if (it->ndim != 1) return 0;
    for (k = 0; k < it->nops; k++) if (it->strides[k][0] != 1 && it->dims[0] > 1) return 0;
    return 1;
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

/* ---- CPU: rows of the iteration space on the thread pool ---- */
typedef void (*gpuml__xrow_fn)(void *arg, char **ptrs, const int64_t *step, int64_t count);
/* several whole short rows at once: rows of count elements, row r of operand k at ptrs[k] + r * rstep[k] */
typedef void (*gpuml__xrows_fn)(void *arg, char **ptrs, const int64_t *step, int64_t count, int64_t rows, const int64_t *rstep);
/* a row with the row-major index of its first element (gpuml_rand's counter) */
typedef void (*gpuml__xrowi_fn)(void *arg, char **ptrs, const int64_t *step, int64_t count, int64_t linear);
typedef struct gpuml__xjob { const gpuml__xiter *it; gpuml__xrow_fn fn; gpuml__xrows_fn fn2; gpuml__xrowi_fn fni; void *arg; } gpuml__xjob;

#define GPUML__XROWS_MAX 512   /* elements a gpuml__xrows_fn call at most (GPUML__TILE) */
GPUML__FN void gpuml__xforeach_task(void *a, int64_t b, int64_t e, int tid)
{
    const gpuml__xjob *j = (const gpuml__xjob *)a;
    const gpuml__xiter *it = j->it;
    int64_t idx[GPUML_MAX_DIMS], step[4], off[4], rem = b;
    int last = it->ndim - 1, d, k;
    (void)tid;
    for (d = last; d >= 0; d--) { idx[d] = rem % it->dims[d]; rem /= it->dims[d]; }
    for (k = 0; k < it->nops; k++) {
        step[k] = it->strides[k][last] * (int64_t)gpuml__dtype_sizes[it->dt[k]];
        for (off[k] = 0, d = 0; d <= last; d++) off[k] += idx[d] * it->strides[k][d];
    }
    while (b < e) {   /* the offsets (elements) follow the index, a carry at a time (short rows: a broadcast) */
        char *p[4];
        int64_t cnt = GPUML__MIN(it->dims[last] - idx[last], e - b), rows = 1;
        for (k = 0; k < it->nops; k++) p[k] = it->base[k] ? it->base[k] + off[k] * (int64_t)gpuml__dtype_sizes[it->dt[k]] : NULL;
        if (j->fn2 && last > 0 && idx[last] == 0 && it->dims[last] <= GPUML__XROWS_MAX / 4)
            rows = GPUML__MIN(GPUML__MIN(it->dims[last - 1] - idx[last - 1], (e - b) / it->dims[last]), GPUML__XROWS_MAX / it->dims[last]);
        if (rows > 1) {   /* whole rows along dim last - 1 in one call */
            int64_t rstep[4];
            for (k = 0; k < it->nops; k++) rstep[k] = it->strides[k][last - 1] * (int64_t)gpuml__dtype_sizes[it->dt[k]];
            j->fn2(j->arg, p, step, cnt, rows, rstep);
            b += rows * cnt;
            idx[last - 1] += rows;
            for (k = 0; k < it->nops; k++) off[k] += rows * it->strides[k][last - 1];
            for (d = last - 1; d > 0 && idx[d] == it->dims[d]; d--) {
                idx[d] = 0; idx[d - 1]++;
                for (k = 0; k < it->nops; k++) off[k] += it->strides[k][d - 1] - it->dims[d] * it->strides[k][d];
            }
            continue;
        }
        if (j->fni) j->fni(j->arg, p, step, cnt, b);
        else j->fn(j->arg, p, step, cnt);
        b += cnt;
        idx[last] += cnt;
        for (k = 0; k < it->nops; k++) off[k] += cnt * it->strides[k][last];
        for (d = last; d > 0 && idx[d] == it->dims[d]; d--) {
            idx[d] = 0; idx[d - 1]++;
            for (k = 0; k < it->nops; k++) off[k] += it->strides[k][d - 1] - it->dims[d] * it->strides[k][d];
        }
    }
#if GPUML__HAVE_AVX2_PATH
    _mm_sfence();   /* the rows' non-temporal stores (gpuml__ew_row), once a task, before the pool hands back */
#endif
}
/* fn a row; fn2 (may be NULL), where given, takes runs of whole rows of at most GPUML__XROWS_MAX / 4
   elements; fni (instead of fn) a row with its row-major index */
GPUML__FN void gpuml__xforeach_run(gpuml_ctx *ctx, const gpuml__xiter *it, gpuml__xrow_fn fn, gpuml__xrows_fn fn2, gpuml__xrowi_fn fni, void *arg)
{
    gpuml__xjob j;
    j.it = it; j.fn = fn; j.fn2 = fn2; j.fni = fni; j.arg = arg;
    if (it->n > 0) gpuml__parallel_for(ctx->pool, it->n, 1 << 14, gpuml__xforeach_task, &j);
}
GPUML__FN void gpuml__xforeach2(gpuml_ctx *ctx, const gpuml__xiter *it, gpuml__xrow_fn fn, gpuml__xrows_fn fn2, void *arg)
{
    gpuml__xforeach_run(ctx, it, fn, fn2, NULL, arg);
}
GPUML__FN void gpuml__xforeach(gpuml_ctx *ctx, const gpuml__xiter *it, gpuml__xrow_fn fn, void *arg)
{
    gpuml__xforeach_run(ctx, it, fn, NULL, NULL, arg);
}

typedef struct gpuml__cast_arg { gpuml_dtype dd, sd; } gpuml__cast_arg;
GPUML__FN void gpuml__row_copy(void *a, char **p, const int64_t *step, int64_t n)
{
    const gpuml__cast_arg *c = (const gpuml__cast_arg *)a;
    char *d = p[0];
    const char *s = p[1];
    int64_t i, es = (int64_t)gpuml__dtype_sizes[c->dd];
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
GPUML__FN void gpuml__row_fill(void *a, char **p, const int64_t *step, int64_t n)
{
    const gpuml__fill_arg *f = (const gpuml__fill_arg *)a;
    char *d = p[0];
    int64_t i;
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
/* divisors as multiply and shift (kernels/elementwise.cu, gpuml__fdiv): n / d = (n * m) >> sh
   for n < 2^31, 1 <= d < 2^31 */
typedef struct gpuml__kdiv { uint32_t m[GPUML_MAX_DIMS + 1]; uint32_t sh[GPUML_MAX_DIMS + 1]; } gpuml__kdiv;
GPUML__FN void gpuml__kdiv_set(gpuml__kdiv *k, int i, int64_t d)
{
    unsigned l = 0;
    while (((int64_t)1 << l) < d) l++;
    k->m[i] = (uint32_t)((((uint64_t)1 << (31 + l)) + (uint64_t)d - 1) / (uint64_t)d);
    k->sh[i] = 31 + l;
}

/* ---------------------------------------------------------------- CUDA backend ---- */
#ifndef GPUML_NO_CUDA

GPUML__FN void gpuml__xkparams(const gpuml__xiter *it, gpuml__kshape *ks, gpuml__kview *kv)
{
    int k;
    memset(ks, 0, sizeof *ks);
    ks->n = it->n;
    ks->ndim = it->ndim;
    memcpy(ks->dims, it->dims, sizeof ks->dims);
    for (k = 0; k < it->nops; k++) {   /* kv has it->nops views; offset 0: the base pointer passed is the view's first element */
        memset(&kv[k], 0, sizeof kv[k]);
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
    gpuml__xiter it;
    gpuml__kshape ks;
    gpuml__kview kv[2];
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr dp = gpuml__dptr(dst), sp = gpuml__dptr(src);
    char opts[96];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    ops[0] = dst; ops[1] = src;
    gpuml__xiter_make(&it, ops, 2);
    if (it.n == 0) return GPUML_SUCCESS;
    if (dst->dtype == src->dtype && gpuml__xiter_contig(&it)) {
        if (ctx->prof_want_start) gpuml__prof_start(ctx);
        GPUML__CU(ctx, ctx->cu.MemcpyDtoDAsync(dp, sp, (size_t)it.n * gpuml__dtype_sizes[dst->dtype], ctx->stream), "gpuml_copy");
        return GPUML_SUCCESS;
    }
    if (dst->dtype == src->dtype && (it.ndim == 2 || (it.ndim == 3 && it.dims[0] <= 65535))) {
        /* a (batched) 2-D transpose: each side unit-stride along a different dim */
        int d = it.ndim, a = -1;
        const int64_t *ds = it.strides[0], *ss = it.strides[1];
        if (ds[d - 1] == 1 && ss[d - 2] == 1) a = 0;        /* u = dim d-2, v = dim d-1 */
        else if (ds[d - 2] == 1 && ss[d - 1] == 1) a = 1;   /* u = dim d-1, v = dim d-2 */
        if (a >= 0 && it.dims[d - 1] > 1 && it.dims[d - 2] > 1 && (it.dims[a ? d - 1 : d - 2] + 63) / 64 <= 65535) {
            int64_t nu = it.dims[a ? d - 1 : d - 2], nv = it.dims[a ? d - 2 : d - 1];
            int64_t sv = ss[a ? d - 2 : d - 1], du = ds[a ? d - 1 : d - 2], sz = d == 3 ? ss[0] : 0, dz = d == 3 ? ds[0] : 0;
            void *args[8];
            unsigned g[3];
            args[0] = &nu; args[1] = &nv; args[2] = &sv; args[3] = &du; args[4] = &sz; args[5] = &dz; args[6] = &dp; args[7] = &sp;
            g[0] = (unsigned)((nv + 63) / 64); g[1] = (unsigned)((nu + 63) / 64); g[2] = (unsigned)(d == 3 ? it.dims[0] : 1);
            snprintf(opts, sizeof opts, "-DGPUML_ELEM_BYTES=%d", (int)gpuml__dtype_sizes[dst->dtype]);
            GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_copy_t", &fn));
            return gpuml__launch(ctx, fn, g, block, 0, args, "gpuml_copy (transpose)");
        }
    }
    gpuml__xkparams(&it, &ks, kv);
    grid[0] = gpuml__grid_for(ctx, it.n, 256);
    if (dst->dtype == src->dtype) {
        void *args[5];
        args[0] = &ks; args[1] = &kv[0]; args[2] = &kv[1]; args[3] = &dp; args[4] = &sp;
        snprintf(opts, sizeof opts, "-DGPUML_ELEM_BYTES=%d", (int)gpuml__dtype_sizes[dst->dtype]);
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_copy_raw", &fn));
        return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_copy");
    }
    snprintf(opts, sizeof opts, "-DGPUML_DST_DT=%d -DGPUML_SRC_DT=%d", (int)dst->dtype, (int)src->dtype);
    if (gpuml__xiter_contig(&it)) {
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
    gpuml__xiter it;
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
    gpuml__xiter_make(&it, ops, 1);
    if (it.n == 0) return GPUML_SUCCESS;
    gpuml__xkparams(&it, &ks, kv);
    if (es == 4) memcpy(&b32, bits, 4);
    else if (es == 2) { gpuml__u16 h; memcpy(&h, bits, 2); b32 = h; }
    else b32 = bits[0];
    snprintf(opts, sizeof opts, "-DGPUML_ELEM_BYTES=%d", (int)es);
    if (gpuml__is_contig(dst)) {   /* 16-byte stores */
        int64_t n = it.n;
        args[0] = &dp; args[1] = &n; args[2] = &b32;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_fill_contig", &fn));
        grid[0] = gpuml__grid_for(ctx, (it.n * (int64_t)es + 15) / 16, 256);
        return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_fill");
    }
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_copy, opts, "gpuml_fill", &fn));
    args[0] = &ks; args[1] = &kv[0]; args[2] = &dp; args[3] = &b32;
    grid[0] = gpuml__grid_for(ctx, it.n, 256);
    return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_fill");
}

GPUML__FN gpuml_status gpuml__cuda_rand(gpuml_ctx *ctx, const gpuml_tensor *dst, gpuml__u64 seed, float a, float b, int kind)
{
    const gpuml_tensor *ops[1];
    gpuml__xiter it;
    gpuml__kshape ks;
    gpuml__kview kv[1];
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr dp = gpuml__dptr(dst);
    void *args[7];
    char opts[64];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    ops[0] = dst;
    gpuml__xiter_make(&it, ops, 1);
    if (it.n == 0) return GPUML_SUCCESS;
    gpuml__xkparams(&it, &ks, kv);
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

/* ------------------------------------------------------------------- profiler ---- */
/* Adding the profiler to an op is one line: wrap the call that does the op's work (after
   validation) in GPUML__PROF, for example

       return GPUML__PROF(ctx, gpuml__conv_run(ctx, &p), "conv2d", GPUML_UNIT_F16_TENSOR,
                          2.0 * (double)gpuml__numel(y) * (double)(c_in * kh * kw),
                          gpuml__tb(x) + gpuml__tb(w) + gpuml__tb(y), x, w, y);

   Arguments after the call: record name, unit (the roof), FLOPs, bytes moved, then the two
   inputs and the output whose dtype and shapes name the record (any may be NULL).  They are
   evaluated only while profiling is on; off, the macro costs one branch.  The record's start
   event goes on the stream right before the call and its stop event right after.  Ops run
   inside a profiled op or a graph add their FLOPs and bytes to the enclosing record (pass
   flops < 0 to take those sums, as graphs do) instead of making records of their own. */
#define GPUML__PROF(ctx, call, name, unit, flops, bytes, t0, t1, out) \
    (((ctx)->prof_on || (ctx)->prof_depth) \
         ? (gpuml__prof_begin(ctx), gpuml__prof_end(ctx, (call), name, unit, flops, bytes, t0, t1, out)) : (call))

typedef struct gpuml__prec {
    gpuml_profile_record r;      /* time_us and start_us once resolved; rates filled when read */
    gpuml__CUevent ev0, ev1;     /* pending events (NULL once resolved, and on the CPU) */
} gpuml__prec;

#define GPUML__PROF_MAX_RECORDS (1 << 20)   /* then records are counted as dropped */

/* bytes of a tensor for the profiler (0 for NULL) */
GPUML__FN double gpuml__tb(const gpuml_tensor *t) { return t ? (double)gpuml__nbytes(t) : 0.0; }

static const char *const gpuml__unit_names[GPUML_UNIT_COUNT] = { "fp32", "f16/bf16 tensor", "tf32 tensor", "fp8 tensor", "int8 tensor" };

/* Dense FLOPs per clock per SM, by compute capability (the last row at or below the device's
   is used): FP32 CUDA cores (2 per FMA), then tensor cores for f16/bf16 with f32
   accumulation, tf32, fp8 and int8 (ops).  Derived from NVIDIA's published peaks divided by
   SM count x boost clock: V100 whitepaper (125 TFLOP/s tensor, 80 SMs, 1.53 GHz -> 1024),
   Turing/T4 (65 f16 / 130 int8 at 40 SMs, 1.59 GHz), A100 whitepaper (312 bf16, 156 tf32, 624
   int8 at 108 SMs, 1.41 GHz), GA102 whitepaper (A40/A6000 rates; GeForce cards halve the f32
   accumulate rate), Ada whitepaper / L40S datasheet (362 f16, 733 fp8 at 142 SMs, 2.52 GHz),
   H100 whitepaper (989 bf16, 495 tf32, 1979 fp8/int8 at 132 SMs, 1.83 GHz), B200 datasheet
   (2.25 PFLOP/s bf16 dense, approximate).  0 = no such unit (fp8 then falls back to the f16
   rate, the others to FP32).  The device's clock attribute is its maximum boost clock, so
   these peaks are upper bounds (the H100's 1.98 GHz gives 1070 bf16 TFLOP/s, not 989). */
typedef struct gpuml__peak_row { int arch; float r[GPUML_UNIT_COUNT]; } gpuml__peak_row;
static const gpuml__peak_row gpuml__peak_rows[] = {
    { 50, { 256, 0, 0, 0, 0 } },
    { 60, { 128, 0, 0, 0, 0 } },
    { 61, { 256, 0, 0, 0, 0 } },
    { 70, { 128, 1024, 0, 0, 0 } },
    { 75, { 128, 1024, 0, 0, 2048 } },
    { 80, { 128, 2048, 1024, 0, 4096 } },
    { 86, { 256, 1024, 512, 0, 2048 } },
    { 89, { 256, 1024, 512, 2048, 2048 } },
    { 90, { 256, 4096, 2048, 8192, 8192 } },
    { 100, { 256, 8192, 4096, 16384, 16384 } },
    { 120, { 256, 1024, 512, 2048, 2048 } }
};

/* peak TFLOP/s of a unit on this device; 0 when not known (the CPU backend) */
GPUML__FN double gpuml__peak_tflops(const gpuml_ctx *ctx, int unit)
{
    const gpuml__peak_row *row = NULL;
    size_t i;
    double rate;
    if (ctx->backend != GPUML_BACKEND_CUDA || ctx->arch <= 0 || (unsigned)unit >= GPUML_UNIT_COUNT) return 0.0;
    for (i = 0; i < GPUML__COUNT(gpuml__peak_rows); i++)
        if (gpuml__peak_rows[i].arch <= ctx->arch) row = &gpuml__peak_rows[i];
    if (!row) row = &gpuml__peak_rows[0];
    rate = row->r[unit];
    if (rate == 0 && unit == GPUML_UNIT_FP8_TENSOR) rate = row->r[GPUML_UNIT_F16_TENSOR];
    if (rate == 0) rate = row->r[GPUML_UNIT_FP32];
    return rate * (double)ctx->sm_count * (double)ctx->clock_khz * 1e3 / 1e12;
}

GPUML__FN gpuml__CUevent gpuml__prof_event(gpuml_ctx *ctx)
{
    gpuml__CUevent ev = NULL;
    if (ctx->prof_nev_free > 0) return ctx->prof_ev_free[--ctx->prof_nev_free];
#ifndef GPUML_NO_CUDA
    if (ctx->cu.EventCreate(&ev, 0) != 0) ev = NULL;
#endif
    return ev;
}
GPUML__FN void gpuml__prof_event_put(gpuml_ctx *ctx, gpuml__CUevent ev)
{
    if (!ev) return;
    if (ctx->prof_nev_free == ctx->prof_cap_ev_free) {
        int cap = ctx->prof_cap_ev_free ? ctx->prof_cap_ev_free * 2 : 64;
        gpuml__CUevent *p = (gpuml__CUevent *)GPUML_REALLOC(ctx->prof_ev_free, sizeof *p * (size_t)cap);
        if (!p) {
#ifndef GPUML_NO_CUDA
            ctx->cu.EventDestroy(ev);
#endif
            return;
        }
        ctx->prof_ev_free = p;
        ctx->prof_cap_ev_free = cap;
    }
    ctx->prof_ev_free[ctx->prof_nev_free++] = ev;
}

/* Fills in the times of records [prof_resolved, upto).  block = 0 stops before the first
   op the GPU has not finished; block = 1 waits for them.  Events on one stream complete in
   order, so one query (or wait) on the last stop event of a chunk of 64 records covers the
   whole chunk: per record only the two cuEventElapsedTime calls remain. */
GPUML__FN void gpuml__prof_resolve(gpuml_ctx *ctx, int upto, int block)
{
    int i = ctx->prof_resolved, end, k;
    (void)block;
    if (upto > ctx->prof_n) upto = ctx->prof_n;
    for (; i < upto; i = end) {
        end = i + 64 < upto ? i + 64 : upto;
#ifndef GPUML_NO_CUDA
        for (k = end - 1; k >= i && !ctx->prof_recs[k].ev1; k--) {}
        if (k >= i) {
            if (!block && ctx->cu.EventQuery(ctx->prof_recs[k].ev1) == GPUML__CUDA_ERROR_NOT_READY) break;
            if (block) ctx->cu.EventSynchronize(ctx->prof_recs[k].ev1);
        }
#endif
        for (k = i; k < end; k++) {
            gpuml__prec *p = &ctx->prof_recs[k];
#ifndef GPUML_NO_CUDA
            float ms = 0.0f, ms0 = 0.0f;
            if (p->ev1 && ctx->cu.EventElapsedTime(&ms, p->ev0, p->ev1) == 0) {
                p->r.time_us = (double)ms * 1e3;
                if (ctx->prof_base && ctx->cu.EventElapsedTime(&ms0, ctx->prof_base, p->ev0) == 0) p->r.start_us = (double)ms0 * 1e3;
            }
#endif
            gpuml__prof_event_put(ctx, p->ev0);
            gpuml__prof_event_put(ctx, p->ev1);
            p->ev0 = p->ev1 = NULL;
        }
    }
    ctx->prof_resolved = i;
}

GPUML__FN void gpuml__prof_begin(gpuml_ctx *ctx)
{
    if (ctx->prof_depth++ > 0) return;   /* nested: counted into the open record */
    ctx->prof_acc_flops = ctx->prof_acc_bytes = 0.0;
    ctx->prof_acc_ops = 0;
    ctx->prof_cur_ev = NULL;
    if (ctx->backend == GPUML_BACKEND_CPU) { ctx->prof_cur_start = gpuml__now_us(); return; }
    /* the start event goes right before the op's first launch, so that host work before it
       (a JIT compile, say) is not counted as device time */
    ctx->prof_want_start = 1;
}

/* records the open op's start event: called by the launch helpers while prof_want_start */
GPUML__FN void gpuml__prof_start(gpuml_ctx *ctx)
{
    ctx->prof_want_start = 0;
#ifndef GPUML_NO_CUDA
    if (!ctx->prof_base) {   /* the time origin of the records */
        ctx->prof_base = gpuml__prof_event(ctx);
        if (ctx->prof_base && ctx->cu.EventRecord(ctx->prof_base, ctx->stream) != 0) {
            gpuml__prof_event_put(ctx, ctx->prof_base);
            ctx->prof_base = NULL;
        }
    }
    ctx->prof_cur_ev = gpuml__prof_event(ctx);
    if (ctx->prof_cur_ev && ctx->cu.EventRecord(ctx->prof_cur_ev, ctx->stream) != 0) {
        gpuml__prof_event_put(ctx, ctx->prof_cur_ev);
        ctx->prof_cur_ev = NULL;
    }
#endif
}

/* "bf16 [64,32]x[32,16] -> f32 [64,16]": the first input's dtype, other dtypes where they differ */
GPUML__FN void gpuml__prof_shapes(char *buf, size_t cap, const char *sep, const gpuml_tensor *t0, const gpuml_tensor *t1,
                                  const gpuml_tensor *out)
{
    char s[200];
    size_t n = 0;
    buf[0] = 0;
#define GPUML__CAT(...) do { if (n < cap) { int w_ = snprintf(buf + n, cap - n, __VA_ARGS__); if (w_ > 0) n += (size_t)w_; } } while (0)
    if (t0) GPUML__CAT("%s %s", gpuml__dtype_names[t0->dtype], gpuml__shape_str(t0, s, sizeof s));
    if (t1) {
        if (t0 && t1->dtype == t0->dtype) GPUML__CAT("%s%s", sep, gpuml__shape_str(t1, s, sizeof s));
        else GPUML__CAT("%s%s %s", t0 ? sep : "", gpuml__dtype_names[t1->dtype], gpuml__shape_str(t1, s, sizeof s));
    }
    if (out) {
        const gpuml_tensor *first = t0 ? t0 : t1;
        if (first) GPUML__CAT(" -> ");
        if (first && first->dtype == out->dtype) GPUML__CAT("%s", gpuml__shape_str(out, s, sizeof s));
        else GPUML__CAT("%s %s", gpuml__dtype_names[out->dtype], gpuml__shape_str(out, s, sizeof s));
    }
#undef GPUML__CAT
}

GPUML__FN gpuml_status gpuml__prof_end(gpuml_ctx *ctx, gpuml_status st, const char *name, gpuml_profile_unit unit, double flops,
                                       double bytes, const gpuml_tensor *t0, const gpuml_tensor *t1, const gpuml_tensor *out)
{
    gpuml__prec *p;
    double now = 0.0;
    if (--ctx->prof_depth > 0) {
        if (st == GPUML_SUCCESS) {
            ctx->prof_acc_flops += flops > 0 ? flops : 0.0;
            ctx->prof_acc_bytes += bytes > 0 ? bytes : 0.0;
            ctx->prof_acc_ops++;
        }
        return st;
    }
    if (ctx->backend == GPUML_BACKEND_CPU) now = gpuml__now_us();
    if (ctx->prof_want_start) {   /* no launch happened */
        if (st != GPUML_SUCCESS || !ctx->prof_on) ctx->prof_want_start = 0;
        else gpuml__prof_start(ctx);
    }
    if (st != GPUML_SUCCESS || !ctx->prof_on) goto drop;
    if (ctx->prof_n == ctx->prof_cap) {
        int cap = ctx->prof_cap ? ctx->prof_cap * 2 : 256;
        gpuml__prec *np;
        if (ctx->prof_n >= GPUML__PROF_MAX_RECORDS) goto drop_count;
        np = (gpuml__prec *)GPUML_REALLOC(ctx->prof_recs, sizeof *np * (size_t)cap);
        if (!np) goto drop_count;
        ctx->prof_recs = np;
        ctx->prof_cap = cap;
    }
    p = &ctx->prof_recs[ctx->prof_n];
    memset(p, 0, sizeof *p);
    snprintf(p->r.name, sizeof p->r.name, "%s", name);
    if (flops < 0) { flops = ctx->prof_acc_flops; bytes = ctx->prof_acc_bytes; }
    p->r.unit = unit;
    p->r.flops = flops;
    p->r.bytes = bytes;
    if (t0 || t1 || out) gpuml__prof_shapes(p->r.shapes, sizeof p->r.shapes, strcmp(name, "matmul") == 0 ? "x" : ",", t0, t1, out);
    else snprintf(p->r.shapes, sizeof p->r.shapes, "%s", ctx->prof_note);
    ctx->prof_note[0] = 0;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        p->r.start_us = ctx->prof_cur_start - ctx->prof_t0;
        p->r.time_us = now - ctx->prof_cur_start;
    }
#ifndef GPUML_NO_CUDA
    else if (ctx->prof_cur_ev) {
        p->ev0 = ctx->prof_cur_ev;
        p->ev1 = gpuml__prof_event(ctx);
        if (p->ev1 && ctx->cu.EventRecord(p->ev1, ctx->stream) != 0) { gpuml__prof_event_put(ctx, p->ev1); p->ev1 = NULL; }
        if (!p->ev1) { gpuml__prof_event_put(ctx, p->ev0); p->ev0 = NULL; }
        ctx->prof_cur_ev = NULL;
    }
#endif
    ctx->prof_n++;
    /* keep the number of pending events bounded without waiting on the stream */
    if (ctx->prof_n - ctx->prof_resolved > 1024) gpuml__prof_resolve(ctx, ctx->prof_n, 0);
    if (ctx->prof_n - ctx->prof_resolved > 16384) gpuml__prof_resolve(ctx, ctx->prof_resolved + 8192, 1);
    return st;
drop_count:
    ctx->prof_dropped++;
drop:
    gpuml__prof_event_put(ctx, ctx->prof_cur_ev);
    ctx->prof_cur_ev = NULL;
    ctx->prof_note[0] = 0;
    return st;
}

/* The copy bandwidth of this device in GB/s, measured once per process (and, on the GPU,
   remembered in the kernel cache folder): cuMemcpyDtoDAsync of 256 MiB (the copy gpuml_copy
   uses for contiguous tensors), best of 3 x 5 copies; on the CPU, memcpy of 64 MiB split
   over the thread pool.  Bytes moved = 2 x size (read + write). */
typedef struct gpuml__bw_entry { gpuml__hash key; double gbps; } gpuml__bw_entry;
static gpuml__bw_entry gpuml__bw_cache[16];
static int gpuml__bw_n;

typedef struct gpuml__bwjob { char *dst; const char *src; } gpuml__bwjob;
GPUML__FN void gpuml__bw_task(void *arg, int64_t b, int64_t e, int tid)
{
    gpuml__bwjob *j = (gpuml__bwjob *)arg;
    (void)tid;
    memcpy(j->dst + b, j->src + b, (size_t)(e - b));
}

GPUML__FN double gpuml__bandwidth(gpuml_ctx *ctx)
{
    char keytext[512], path[1400];
    gpuml__hash key;
    double best = 0.0;
    int i, rep;
    if (ctx->bw_gbps > 0) return ctx->bw_gbps;
    snprintf(keytext, sizeof keytext, "%s|%d|%d|%d|%d|%d", ctx->device_name, ctx->arch, ctx->sm_count, ctx->clock_khz,
             ctx->l2_bytes, gpuml__pool_size(ctx->pool));
    key = gpuml__hash_bytes(keytext, strlen(keytext));
    gpuml__global_lock();
    for (i = 0; i < gpuml__bw_n; i++)
        if (gpuml__bw_cache[i].key.lo == key.lo && gpuml__bw_cache[i].key.hi == key.hi) best = gpuml__bw_cache[i].gbps;
    gpuml__global_unlock();
    if (best > 0) return ctx->bw_gbps = best;
    path[0] = 0;
    if (ctx->backend == GPUML_BACKEND_CUDA && !ctx->cache_off) {
        unsigned char *data = NULL;
        size_t n = 0;
        snprintf(path, sizeof path, "%.1200s/bandwidth-%016llx%016llx.txt", ctx->cache_dir, (unsigned long long)key.hi, (unsigned long long)key.lo);
        if (gpuml__read_file(path, &data, &n)) {
            char txt[64];
            size_t m = n < sizeof txt - 1 ? n : sizeof txt - 1;
            memcpy(txt, data, m);
            txt[m] = 0;
            best = atof(txt);
            gpuml__free(data);
            if (!(best > 0 && best < 1e6)) best = 0.0;
        }
    }
    if (best <= 0 && ctx->backend == GPUML_BACKEND_CPU) {
        size_t size = (size_t)64 << 20;
        gpuml__bwjob j;
        j.dst = (char *)gpuml__malloc(size);
        j.src = (const char *)gpuml__calloc(size);
        if (j.dst && j.src) {
            memset(j.dst, 1, size);   /* touch the pages before timing */
            for (rep = 0; rep < 4; rep++) {
                double t0 = gpuml__now_us(), t;
                gpuml__parallel_for(ctx->pool, (int64_t)size, (int64_t)1 << 20, gpuml__bw_task, &j);
                t = gpuml__now_us() - t0;
                if (t > 0 && 2.0 * (double)size / t * 1e-3 > best) best = 2.0 * (double)size / t * 1e-3;
            }
        }
        gpuml__free(j.dst);
        gpuml__free((void *)(uintptr_t)j.src);
    }
#ifndef GPUML_NO_CUDA
    if (best <= 0 && ctx->backend == GPUML_BACKEND_CUDA) {
        size_t size = (size_t)256 << 20;
        gpuml__CUdeviceptr a = 0, b = 0;
        gpuml__CUevent e0 = NULL, e1 = NULL;
        if (ctx->cu.MemAlloc(&a, size) == 0 && ctx->cu.MemAlloc(&b, size) == 0 &&
            ctx->cu.EventCreate(&e0, 0) == 0 && ctx->cu.EventCreate(&e1, 0) == 0) {
            ctx->cu.MemcpyDtoDAsync(b, a, size, ctx->stream);   /* warm-up */
            for (rep = 0; rep < 3; rep++) {
                float ms = 0.0f;
                ctx->cu.EventRecord(e0, ctx->stream);
                for (i = 0; i < 5; i++) ctx->cu.MemcpyDtoDAsync(i & 1 ? a : b, i & 1 ? b : a, size, ctx->stream);
                ctx->cu.EventRecord(e1, ctx->stream);
                if (ctx->cu.EventSynchronize(e1) == 0 && ctx->cu.EventElapsedTime(&ms, e0, e1) == 0 && ms > 0 &&
                    10.0 * (double)size / ms * 1e-6 > best)
                    best = 10.0 * (double)size / ms * 1e-6;
            }
        }
        ctx->cu.StreamSynchronize(ctx->stream);
        if (e0) ctx->cu.EventDestroy(e0);
        if (e1) ctx->cu.EventDestroy(e1);
        if (a) ctx->cu.MemFree(a);
        if (b) ctx->cu.MemFree(b);
        if (best > 0 && path[0] && gpuml__mkdirs(ctx->cache_dir)) {
            char txt[64];
            snprintf(txt, sizeof txt, "%.3f\n", best);
            gpuml__write_file_atomic(path, txt, strlen(txt), "", 0);
        }
    }
#endif
    if (best > 0) {
        gpuml__global_lock();
        if (gpuml__bw_n < (int)GPUML__COUNT(gpuml__bw_cache)) {
            gpuml__bw_cache[gpuml__bw_n].key = key;
            gpuml__bw_cache[gpuml__bw_n++].gbps = best;
        }
        gpuml__global_unlock();
    }
    return ctx->bw_gbps = best;
}

/* the rates of a resolved record against this device's roofs */
GPUML__FN void gpuml__prof_rates(gpuml_ctx *ctx, gpuml_profile_record *r)
{
    double tc, tm;
    r->peak_tflops = gpuml__peak_tflops(ctx, r->unit);
    r->peak_gbps = gpuml__bandwidth(ctx);
    r->tflops = r->time_us > 0 ? r->flops / r->time_us * 1e-6 : 0.0;
    r->gbps = r->time_us > 0 ? r->bytes / r->time_us * 1e-3 : 0.0;
    tc = r->peak_tflops > 0 ? r->flops / (r->peak_tflops * 1e6) : 0.0;   /* microseconds at the roofs */
    tm = r->peak_gbps > 0 ? r->bytes / (r->peak_gbps * 1e3) : 0.0;
    r->compute_bound = r->peak_tflops <= 0 && r->flops > 0 ? -1 : tc > tm;
    r->frac_of_peak = r->time_us > 0 ? (tc > tm ? tc : tm) / r->time_us : 0.0;
}

/* host-side calls that cannot be part of a graph */
GPUML__FN gpuml_status gpuml__no_graph(gpuml_ctx *ctx, const char *op)
{
    if (ctx->in_graph)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: not allowed inside a graph's function (a CUDA graph cannot "
                           "capture host transfers, syncs or profiler reads); do it before gpuml_graph_capture or after "
                           "gpuml_graph_launch", op);
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_profile_enable(gpuml_ctx *ctx, int on)
{
    if (!ctx) return GPUML_ERROR_INVALID_ARGUMENT;
    if (on && !ctx->prof_on && ctx->prof_n == 0) ctx->prof_t0 = gpuml__now_us();
    ctx->prof_on = on ? 1 : 0;
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_profile_reset(gpuml_ctx *ctx)
{
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__no_graph(ctx, "gpuml_profile_reset"));
    gpuml__prof_resolve(ctx, ctx->prof_n, 1);   /* gives the events back */
    ctx->prof_n = ctx->prof_resolved = 0;
    ctx->prof_dropped = 0;
    gpuml__prof_event_put(ctx, ctx->prof_base);
    ctx->prof_base = NULL;
    ctx->prof_t0 = gpuml__now_us();
    return GPUML_SUCCESS;
}

GPUML__DEF int gpuml_profile_count(gpuml_ctx *ctx) { return ctx ? ctx->prof_n : 0; }

GPUML__DEF gpuml_status gpuml_profile_get(gpuml_ctx *ctx, int i, gpuml_profile_record *record)
{
    static const char op[] = "gpuml_profile_get";
    GPUML__TRY(gpuml__enter(ctx));
    if (!record) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: record is NULL", op);
    if (i < 0 || i >= ctx->prof_n)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: record %d of %d", op, i, ctx->prof_n);
    GPUML__TRY(gpuml__no_graph(ctx, op));
    if (i >= ctx->prof_resolved) gpuml__prof_resolve(ctx, i + 1, 1);
    *record = ctx->prof_recs[i].r;
    gpuml__prof_rates(ctx, record);
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_profile_peak(gpuml_ctx *ctx, gpuml_profile_unit unit, double *tflops, double *gbps)
{
    GPUML__TRY(gpuml__enter(ctx));
    if ((unsigned)unit >= GPUML_UNIT_COUNT)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_profile_peak: unit %d is not a gpuml_profile_unit", (int)unit);
    if (gbps) GPUML__TRY(gpuml__no_graph(ctx, "gpuml_profile_peak"));
    if (tflops) *tflops = gpuml__peak_tflops(ctx, unit);
    if (gbps) *gbps = gpuml__bandwidth(ctx);
    return GPUML_SUCCESS;
}

/* records grouped by name and shapes, for the summary */
typedef struct gpuml__pgroup { int first, calls; double time_us, flops, bytes, roof_us; int compute, unknown; } gpuml__pgroup;
GPUML__FN int gpuml__pgroup_cmp(const void *a, const void *b)
{
    double x = ((const gpuml__pgroup *)a)->time_us, y = ((const gpuml__pgroup *)b)->time_us;
    return x < y ? 1 : x > y ? -1 : 0;
}

GPUML__DEF gpuml_status gpuml_profile_print(gpuml_ctx *ctx, void *file)
{
    static const char op[] = "gpuml_profile_print";
    FILE *f = (FILE *)file;
    gpuml__pgroup *g;
    int *slot, nslot = 1, ng = 0, i, u;
    double total = 0.0;
    GPUML__TRY(gpuml__enter(ctx));
    if (!f) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: file is NULL", op);
    GPUML__TRY(gpuml__no_graph(ctx, op));
    gpuml__prof_resolve(ctx, ctx->prof_n, 1);
    while (nslot < 2 * ctx->prof_n + 2) nslot *= 2;
    g = (gpuml__pgroup *)gpuml__calloc(sizeof *g * (size_t)(ctx->prof_n + 1));
    slot = (int *)gpuml__malloc(sizeof *slot * (size_t)nslot);
    if (!g || !slot) { gpuml__free(g); gpuml__free(slot); return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op); }
    for (i = 0; i < nslot; i++) slot[i] = -1;
    for (i = 0; i < ctx->prof_n; i++) {
        gpuml_profile_record r = ctx->prof_recs[i].r;
        gpuml__hash h;
        size_t s;
        gpuml__hash_init(&h);
        gpuml__hash_add(&h, r.name, strlen(r.name) + 1);
        gpuml__hash_add(&h, r.shapes, strlen(r.shapes) + 1);
        h = gpuml__hash_final(h);
        gpuml__prof_rates(ctx, &r);
        for (s = (size_t)h.lo & (size_t)(nslot - 1); slot[s] >= 0; s = (s + 1) & (size_t)(nslot - 1)) {
            const gpuml_profile_record *q = &ctx->prof_recs[g[slot[s]].first].r;
            if (strcmp(q->name, r.name) == 0 && strcmp(q->shapes, r.shapes) == 0) break;
        }
        if (slot[s] < 0) { slot[s] = ng; g[ng].first = i; ng++; }
        g[slot[s]].calls++;
        g[slot[s]].time_us += r.time_us;
        g[slot[s]].flops += r.flops;
        g[slot[s]].bytes += r.bytes;
        g[slot[s]].roof_us += r.frac_of_peak * r.time_us;
        g[slot[s]].compute += r.compute_bound == 1;
        g[slot[s]].unknown += r.compute_bound < 0;
        total += r.time_us;
    }
    qsort(g, (size_t)ng, sizeof *g, gpuml__pgroup_cmp);
    fprintf(f, "gpuml profile: %s; %d ops, %.3f ms %s\n", ctx->device_name, ctx->prof_n, total * 1e-3,
            ctx->backend == GPUML_BACKEND_CUDA ? "of device time" : "of wall time");
    fprintf(f, "  roofs:");
    for (u = 0; u < GPUML_UNIT_COUNT; u++)
        if (gpuml__peak_tflops(ctx, u) > 0) fprintf(f, " %s %.1f TFLOP/s,", gpuml__unit_names[u], gpuml__peak_tflops(ctx, u));
    fprintf(f, " memory %.0f GB/s (copy, measured)\n", gpuml__bandwidth(ctx));
    if (ctx->prof_dropped) fprintf(f, "  (%ld ops not recorded: more than %d records)\n", ctx->prof_dropped, GPUML__PROF_MAX_RECORDS);
    fprintf(f, "%-22s %-44s %6s %10s %10s %6s %8s %8s %6s %s\n", "op", "dtype and shapes", "calls", "total ms", "mean us",
            "%", "TFLOP/s", "GB/s", "%peak", "bound");
    for (i = 0; i < ng; i++) {
        const gpuml_profile_record *q = &ctx->prof_recs[g[i].first].r;
        double t = g[i].time_us;
        fprintf(f, "%-22.22s %-44.44s %6d %10.3f %10.2f %6.1f %8.2f %8.1f %6.1f %s\n", q->name, q->shapes, g[i].calls, t * 1e-3,
                t / g[i].calls, total > 0 ? 100.0 * t / total : 0.0, t > 0 ? g[i].flops / t * 1e-6 : 0.0,
                t > 0 ? g[i].bytes / t * 1e-3 : 0.0, t > 0 ? 100.0 * g[i].roof_us / t : 0.0,
                2 * g[i].unknown > g[i].calls ? "?" : 2 * g[i].compute > g[i].calls ? "compute" : "memory");
    }
    gpuml__free(g);
    gpuml__free(slot);
    return GPUML_SUCCESS;
}

GPUML__FN void gpuml__json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}
GPUML__FN double gpuml__finite(double x) { return x == x && x < 1e300 && x > -1e300 ? x : 0.0; }

GPUML__DEF gpuml_status gpuml_profile_write_trace(gpuml_ctx *ctx, const char *path)
{
    static const char op[] = "gpuml_profile_write_trace";
    FILE *f;
    int i, ok;
    GPUML__TRY(gpuml__enter(ctx));
    if (!path || !path[0]) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: path is NULL or empty", op);
    GPUML__TRY(gpuml__no_graph(ctx, op));
    gpuml__prof_resolve(ctx, ctx->prof_n, 1);
    f = fopen(path, "w");
    if (!f) return gpuml__fail(ctx, GPUML_ERROR_IO, "%s: cannot open %s for writing", op, path);
    fprintf(f, "{\"traceEvents\":[\n");
    for (i = 0; i < ctx->prof_n; i++) {
        gpuml_profile_record r = ctx->prof_recs[i].r;
        gpuml__prof_rates(ctx, &r);
        fprintf(f, "%s{\"name\":", i ? ",\n" : "");
        gpuml__json_str(f, r.name);
        fprintf(f, ",\"cat\":\"gpuml\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":1,\"args\":{\"shapes\":",
                gpuml__finite(r.start_us), gpuml__finite(r.time_us));
        gpuml__json_str(f, r.shapes);
        fprintf(f, ",\"unit\":\"%s\",\"flops\":%.17g,\"bytes\":%.17g,\"GB/s\":%.6g,\"TFLOP/s\":%.6g,\"frac_of_peak\":%.6g}}",
                gpuml__unit_names[r.unit], gpuml__finite(r.flops), gpuml__finite(r.bytes), gpuml__finite(r.gbps),
                gpuml__finite(r.tflops), gpuml__finite(r.frac_of_peak));
    }
    fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"device\":");
    gpuml__json_str(f, ctx->device_name);
    fprintf(f, ",\"backend\":\"%s\"}}\n", ctx->backend == GPUML_BACKEND_CUDA ? "cuda" : "cpu");
    ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok) return gpuml__fail(ctx, GPUML_ERROR_IO, "%s: writing %s failed", op, path);
    return GPUML_SUCCESS;
}

/* at gpuml_shutdown: the summary (GPUML_PROFILE=1), the trace (GPUML_TRACE), then cleanup */
GPUML__FN void gpuml__prof_close(gpuml_ctx *ctx)
{
    int i;
    if (!ctx->failed && !ctx->in_graph) {
        if (ctx->prof_print_at_exit && ctx->prof_n) gpuml_profile_print(ctx, stderr);
        if (ctx->trace_path[0]) gpuml_profile_write_trace(ctx, ctx->trace_path);
    }
#ifndef GPUML_NO_CUDA
    if (ctx->have_cuctx) {
        ctx->cu.CtxSetCurrent(ctx->cuctx);
        for (i = ctx->prof_resolved; i < ctx->prof_n; i++) {
            if (ctx->prof_recs[i].ev0) ctx->cu.EventDestroy(ctx->prof_recs[i].ev0);
            if (ctx->prof_recs[i].ev1) ctx->cu.EventDestroy(ctx->prof_recs[i].ev1);
        }
        for (i = 0; i < ctx->prof_nev_free; i++) ctx->cu.EventDestroy(ctx->prof_ev_free[i]);
        if (ctx->prof_base) ctx->cu.EventDestroy(ctx->prof_base);
        if (ctx->prof_cur_ev) ctx->cu.EventDestroy(ctx->prof_cur_ev);
    }
#endif
    (void)i;
    gpuml__free(ctx->prof_recs);
    gpuml__free(ctx->prof_ev_free);
    ctx->prof_recs = NULL;
    ctx->prof_ev_free = NULL;
    ctx->prof_n = ctx->prof_cap = ctx->prof_resolved = ctx->prof_nev_free = ctx->prof_cap_ev_free = 0;
    ctx->prof_base = ctx->prof_cur_ev = NULL;
    gpuml__str_free(&ctx->graph_msg);
}

/* --------------------------------------------------------------------- graphs ---- */
#define GPUML__MAGIC_GRAPH 0x67706d6c47726170ULL
struct gpuml_graph {
    gpuml__u64 magic;
    gpuml_ctx *ctx;
    gpuml_graph_fn fn;
    void *user;
    gpuml__CUgraph graph;
    gpuml__CUgraphExec exec;     /* NULL: launch runs fn eagerly */
    gpuml__block *owned;         /* device blocks freed during the capture */
    double flops, bytes;         /* of the captured ops, for the profiler */
    int nops;
};

/* runs the user's function; returns the first failure of an op inside it */
GPUML__FN gpuml_status gpuml__graph_call(gpuml_ctx *ctx, gpuml_graph *g, const char *op)
{
    gpuml_status st;
    ctx->in_graph = 1;
    ctx->graph_status = GPUML_SUCCESS;
    g->fn(ctx, g->user);
    ctx->in_graph = 0;
    st = ctx->graph_status;
    if (ctx->prof_depth > 0) snprintf(ctx->prof_note, sizeof ctx->prof_note, "%d ops", ctx->prof_acc_ops);
    if (st != GPUML_SUCCESS) {
        gpuml__str m = {0, 0, 0, 0};
        gpuml__str_add(&m, gpuml__str_c(&ctx->graph_msg));
        gpuml__fail(ctx, st, "%s: an op inside the graph's function failed: %.1900s", op, gpuml__str_c(&m));
        gpuml__str_free(&m);
    }
    return st;
}

/* gives a graph's CUDA objects and blocks back */
GPUML__FN void gpuml__graph_release(gpuml_ctx *ctx, gpuml_graph *g)
{
    gpuml__block *b, *next;
#ifndef GPUML_NO_CUDA
    if (ctx->have_cuctx) {
        ctx->cu.CtxSetCurrent(ctx->cuctx);
        /* an exec still running is freed when it completes (cuGraphExecDestroy) */
        if (g->exec) ctx->cu.GraphExecDestroy(g->exec);
        if (g->graph) ctx->cu.GraphDestroy(g->graph);
    }
#endif
    g->exec = NULL;
    g->graph = NULL;
    /* later users of these blocks are ordered after the graph's launches on the stream */
    for (b = g->owned; b; b = next) {
        next = b->next;
        ctx->mstats.in_use -= b->size;
        b->next = ctx->free_blocks;
        ctx->free_blocks = b;
        ctx->mstats.cached += b->size;
    }
    g->owned = NULL;
}

GPUML__DEF gpuml_status gpuml_graph_capture(gpuml_ctx *ctx, gpuml_graph_fn fn, void *user, gpuml_graph **out)
{
    static const char op[] = "gpuml_graph_capture";
    gpuml_graph *g;
    GPUML__TRY(gpuml__enter(ctx));
    if (!out) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: graph is NULL", op);
    *out = NULL;
    if (!fn) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: fn is NULL", op);
    if (ctx->in_graph) return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: called inside a graph's function (graphs do not nest)", op);
    g = (gpuml_graph *)gpuml__calloc(sizeof *g);
    if (!g) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op);
    g->magic = GPUML__MAGIC_GRAPH;
    g->ctx = ctx;
    g->fn = fn;
    g->user = user;
#ifndef GPUML_NO_CUDA
    if (ctx->backend == GPUML_BACKEND_CUDA && !ctx->graphs_off && ctx->cu.StreamBeginCapture && ctx->cu.StreamEndCapture &&
        ctx->cu.GraphInstantiate && ctx->cu.GraphLaunch && ctx->cu.GraphExecDestroy && ctx->cu.GraphDestroy) {
        gpuml__CUresult r;
        gpuml_status st;
        int depth = ctx->prof_depth;
        /* relaxed: the allocator may still cuMemAlloc and kernels may still be compiled and
           loaded while the stream records */
        if ((r = ctx->cu.StreamBeginCapture(ctx->stream, GPUML__CU_CAPTURE_RELAXED)) != 0) {
            gpuml__free(g);
            return gpuml__cu_fail(ctx, r, "gpuml_graph_capture: cuStreamBeginCapture");
        }
        ctx->capturing = 1;
        ctx->capture_owned = NULL;
        /* count the FLOPs and bytes of the captured ops (for profiling the launches) */
        ctx->prof_depth = 1;
        ctx->prof_acc_flops = ctx->prof_acc_bytes = 0.0;
        ctx->prof_acc_ops = 0;
        st = gpuml__graph_call(ctx, g, op);
        g->flops = ctx->prof_acc_flops;
        g->bytes = ctx->prof_acc_bytes;
        g->nops = ctx->prof_acc_ops;
        ctx->prof_depth = depth;
        ctx->prof_note[0] = 0;
        ctx->capturing = 0;
        g->owned = ctx->capture_owned;
        ctx->capture_owned = NULL;
        r = ctx->cu.StreamEndCapture(ctx->stream, &g->graph);
        if (st == GPUML_SUCCESS && r != 0)
            st = gpuml__cu_fail(ctx, r, "gpuml_graph_capture: ending the capture (an op issued work a graph cannot hold)");
        if (st == GPUML_SUCCESS && (r = ctx->cu.GraphInstantiate(&g->exec, g->graph, 0)) != 0) {
            g->exec = NULL;
            st = gpuml__cu_fail(ctx, r, "gpuml_graph_capture: cuGraphInstantiate");
        }
        if (st != GPUML_SUCCESS) {
            gpuml__graph_release(ctx, g);   /* never launched: its blocks are free again */
            gpuml__free(g);
            return st;
        }
    }
#endif
    *out = g;
    return GPUML_SUCCESS;
}

GPUML__FN gpuml_status gpuml__graph_replay(gpuml_ctx *ctx, gpuml_graph *g)
{
#ifndef GPUML_NO_CUDA
    if (ctx->prof_want_start) gpuml__prof_start(ctx);
    GPUML__CU(ctx, ctx->cu.GraphLaunch(g->exec, ctx->stream), "gpuml_graph_launch: cuGraphLaunch");
    return GPUML_SUCCESS;
#else
    (void)g;
    return gpuml__fail(ctx, GPUML_ERROR_BACKEND_UNAVAILABLE, "built with GPUML_NO_CUDA");
#endif
}

GPUML__DEF gpuml_status gpuml_graph_launch(gpuml_ctx *ctx, gpuml_graph *g)
{
    static const char op[] = "gpuml_graph_launch";
    GPUML__TRY(gpuml__enter(ctx));
    if (!g) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: graph is NULL", op);
    if (g->magic == GPUML__MAGIC_DEAD) return gpuml__fail(ctx, GPUML_ERROR_FREED, "%s: the graph was freed", op);
    if (g->magic != GPUML__MAGIC_GRAPH) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: not a gpuml graph", op);
    if (g->ctx != ctx) return gpuml__fail(ctx, GPUML_ERROR_WRONG_CONTEXT, "%s: the graph was captured on another context", op);
    if (ctx->in_graph) return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: called inside a graph's function (graphs do not nest)", op);
    /* profiled as one "graph" record: the captured ops' FLOPs and bytes, the launch's time */
    if (!g->exec) return GPUML__PROF(ctx, gpuml__graph_call(ctx, g, op), "graph", GPUML_UNIT_FP32, -1.0, -1.0, NULL, NULL, NULL);
    if (ctx->prof_on) snprintf(ctx->prof_note, sizeof ctx->prof_note, "%d ops", g->nops);
    return GPUML__PROF(ctx, gpuml__graph_replay(ctx, g), "graph", GPUML_UNIT_FP32, g->flops, g->bytes, NULL, NULL, NULL);
}

GPUML__DEF int gpuml_graph_is_cuda(const gpuml_graph *g) { return g && g->magic == GPUML__MAGIC_GRAPH && g->exec != NULL; }

GPUML__DEF void gpuml_graph_free(gpuml_graph *g)
{
    if (!g || g->magic != GPUML__MAGIC_GRAPH) return;
    gpuml__graph_release(g->ctx, g);
    g->magic = GPUML__MAGIC_DEAD;
    gpuml__quarantine(g->ctx, g);
}

/* --------------------------------------------------------------- public ops ---- */
/* dst = src (cast, broadcast); tensors already validated */
GPUML__FN gpuml_status gpuml__copy(gpuml_ctx *ctx, gpuml_tensor *dst, const gpuml_tensor *src)
{
    if (ctx->backend == GPUML_BACKEND_CPU) {
        const gpuml_tensor *ops[2];
        gpuml__xiter it;
        gpuml__cast_arg c;
        ops[0] = dst; ops[1] = src;
        gpuml__xiter_make(&it, ops, 2);
        c.dd = dst->dtype; c.sd = src->dtype;
        gpuml__xforeach(ctx, &it, gpuml__row_copy, &c);
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
    return GPUML__PROF(ctx, gpuml__copy(ctx, dst, &b), "copy", GPUML_UNIT_FP32, 0.0, gpuml__tb(src) + gpuml__tb(dst), src, NULL, dst);
}

GPUML__FN gpuml_status gpuml__fill(gpuml_ctx *ctx, gpuml_tensor *dst, const unsigned char *bits)
{
    if (ctx->backend == GPUML_BACKEND_CPU) {
        const gpuml_tensor *ops[1];
        gpuml__xiter it;
        gpuml__fill_arg f;
        ops[0] = dst;
        gpuml__xiter_make(&it, ops, 1);
        memcpy(f.bits, bits, 4);
        f.es = gpuml__dtype_sizes[dst->dtype];
        gpuml__xforeach(ctx, &it, gpuml__row_fill, &f);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_fill(ctx, dst, bits);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}
GPUML__DEF gpuml_status gpuml_fill(gpuml_ctx *ctx, gpuml_tensor *dst, double value)
{
    unsigned char bits[4];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, dst, "gpuml_fill", "dst"));
    gpuml__scalar_bits(dst->dtype, value, bits);
    return GPUML__PROF(ctx, gpuml__fill(ctx, dst, bits), "fill", GPUML_UNIT_FP32, 0.0, gpuml__tb(dst), NULL, NULL, dst);
}

GPUML__FN gpuml_status gpuml__rand_run(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double a, double b, int kind);
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
    return GPUML__PROF(ctx, gpuml__rand_run(ctx, dst, seed, a, b, kind), op + 6, GPUML_UNIT_FP32, (double)gpuml__numel(dst) * 20.0,
                       gpuml__tb(dst), NULL, NULL, dst);
}
GPUML__FN gpuml_status gpuml__rand_run(gpuml_ctx *ctx, gpuml_tensor *dst, uint64_t seed, double a, double b, int kind)
{
    if (ctx->backend == GPUML_BACKEND_CPU) {
        const gpuml_tensor *ops[1];
        gpuml__xiter it;
        gpuml__rand_arg r;
        ops[0] = dst;
        gpuml__xiter_make(&it, ops, 1);
        r.dd = dst->dtype; r.seed = seed; r.a = (float)a; r.b = (float)b; r.kind = kind;
        gpuml__xforeach_run(ctx, &it, NULL, NULL, gpuml__row_rand, &r);
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
    if (c && GPUML__PROF(t->ctx, gpuml__copy(t->ctx, c, t), "contiguous", GPUML_UNIT_FP32, 0.0, gpuml__tb(t) + gpuml__tb(c), t, NULL, c) != GPUML_SUCCESS) {
        gpuml_tensor_free(c);
        return NULL;
    }
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
    GPUML__TRY(gpuml__no_graph(ctx, op));
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
    GPUML__TRY(gpuml__no_graph(ctx, op));
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
    GPUML__TRY(gpuml__no_graph(ctx, "gpuml_sync"));
    if (ctx->backend == GPUML_BACKEND_CUDA)
        GPUML__CU(ctx, ctx->cu.StreamSynchronize(ctx->stream), "gpuml_sync (a fault in earlier queued work)");
#endif
    if (ctx->prof_resolved < ctx->prof_n) gpuml__prof_resolve(ctx, ctx->prof_n, 0);   /* all done: no wait */
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
    GPUML__TRY(gpuml__no_graph(ctx, "gpuml_memory_release_cache"));
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

/* "kernel:NAME" for the profiler */
GPUML__FN const char *gpuml__kernel_pname(char *buf, size_t cap, const gpuml_kernel *k)
{
    snprintf(buf, cap, "kernel:%.40s", k->name);
    return buf;
}

GPUML__DEF gpuml_status gpuml_kernel_launch(gpuml_ctx *ctx, gpuml_kernel *k, const gpuml_launch *l)
{
    static const char op[] = "gpuml_kernel_launch";
    char kn[48];
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
        return GPUML__PROF(ctx, k->cpu_fn(l, k->cpu_user), gpuml__kernel_pname(kn, sizeof kn, k), GPUML_UNIT_FP32, l->flops, l->bytes, NULL, NULL, NULL);
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__u64 threads = (gpuml__u64)(l->block[0] ? l->block[0] : 1) * (l->block[1] ? l->block[1] : 1) * (l->block[2] ? l->block[2] : 1);
        if (threads > 1024) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: %llu threads per block (at most 1024)", op, (unsigned long long)threads);
        if (l->shared_bytes > (unsigned)GPUML__MAX(ctx->smem_optin, 48 * 1024))
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: %u bytes of shared memory (this device allows %d)", op, l->shared_bytes, ctx->smem_optin);
        return GPUML__PROF(ctx, gpuml__launch(ctx, k->fn, l->grid, l->block, l->shared_bytes, l->args, k->name),
                           gpuml__kernel_pname(kn, sizeof kn, k), GPUML_UNIT_FP32, l->flops, l->bytes, NULL, NULL, NULL);
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

/* ------------------------------------------- elementwise, reduction, normalization, training ops ---- */

/* ------------------------------------------------------------- memory-bound ops ---- */
/* Kernel families (kernels/elementwise.cu, reduce.cu, norm.cu).  Tolerance-based agreement
   with the CPU is enough here, so none is compiled --fmad=false. */
static const gpuml__family gpuml__fam_elementwise = { "elementwise", gpuml__ksrc_elementwise, 50, 0, 0 };
static const gpuml__family gpuml__fam_reduce = { "reduce", gpuml__ksrc_reduce, 50, 0, 0 };
static const gpuml__family gpuml__fam_norm = { "norm", gpuml__ksrc_norm, 50, 0, 0 };
#define GPUML__OPS_FAMILIES &gpuml__fam_elementwise, &gpuml__fam_reduce, &gpuml__fam_norm,
/* representative specializations for the compile checks (tests/test_jit.c) */
#define GPUML__OPS_VARIANTS \
    { "elementwise", "-DOP=0 -DNIN=2 -DSCAL=0 -DDT_O=0 -DDT_A=0 -DDT_B=0 -DDT_C=0 -DVEC=4" }, \
    { "elementwise", "-DOP=27 -DNIN=1 -DSCAL=0 -DDT_O=2 -DDT_A=2 -DDT_B=0 -DDT_C=0 -DVEC=8" }, \
    { "elementwise", "-DOP=60 -DNIN=3 -DSCAL=0 -DDT_O=1 -DDT_A=5 -DDT_B=1 -DDT_C=1 -DVEC=8" }, \
    { "elementwise", "-DOPT=2 -DDT_G=2 -DVEC=4" }, \
    { "elementwise", "-DOP=2 -DNIN=2 -DSCAL=0 -DDT_O=2 -DDT_A=2 -DDT_B=2 -DDT_C=0 -DVEC=8 -DEW_BS=128 -DEW_U=4 -DEW_HINT=1" }, \
    { "elementwise", "-DOP=27 -DNIN=1 -DSCAL=0 -DDT_O=0 -DDT_A=2 -DDT_B=0 -DDT_C=0 -DVEC=4 -DEW_BS=512 -DEW_U=2 -DEW_HINT=1" }, \
    { "elementwise", "-DOP=0 -DNIN=2 -DSCAL=1 -DDT_O=3 -DDT_A=5 -DDT_B=0 -DDT_C=0 -DVEC=4 -DEW_BS=256 -DEW_U=8 -DEW_HINT=1" }, \
    { "elementwise", "-DOPT=2 -DDT_G=0 -DVEC=4 -DEW_BS=128 -DEW_U=2 -DEW_HINT=1" }, \
    { "reduce", "-DRK=0 -DDT_X=0 -DDT_O=0 -DVEC=4" }, { "reduce", "-DRK=4 -DDT_X=2 -DDT_O=3 -DVEC=8" }, \
    { "reduce", "-DRK=5 -DDT_X=1 -DDT_O=0 -DVEC=8" }, \
    { "reduce", "-DRK=0 -DDT_X=0 -DDT_O=0 -DVEC=4 -DRD_FUSE=1" }, { "reduce", "-DRK=4 -DDT_X=0 -DDT_O=3 -DVEC=4 -DRD_FUSE=1" }, \
    { "reduce", "-DRK=1 -DDT_X=0 -DDT_O=0 -DVEC=4 -DRD_U=4 -DRD_FUSE=1" }, \
    { "norm", "-DRK=0 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=0 -DVEC=4 -DNV=8" }, \
    { "norm", "-DRK=2 -DDT_X=2 -DDT_W=2 -DDT_B=0 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=0 -DVEC=8 -DNV=4" }, \
    { "norm", "-DRK=4 -DDT_X=1 -DDT_W=0 -DDT_B=0 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=1 -DVEC=8 -DNV=4" }, \
    { "norm", "-DRK=6 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=0 -DVEC=4 -DNV=8" }, \
    { "norm", "-DRK=0 -DDT_X=2 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=0 -DVEC=8 -DNV=4 -DWPR=1" }, \
    { "norm", "-DRK=2 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=0 -DVEC=4 -DNV=8 -DCL=4" }, \
    { "norm", "-DRK=1 -DDT_X=1 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=0 -DVEC=1 -DNV=0" }, \
    { "norm", "-DRK=2 -DDT_X=2 -DDT_W=2 -DDT_B=2 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=1 -DVEC=8 -DNV=4 -DFULL=1 -DLBT=256 -DLBB=4" }, \
    { "norm", "-DRK=2 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=1 -DVEC=4 -DNV=16 -DFULL=1" }, \
    { "norm", "-DRK=1 -DDT_X=2 -DDT_W=0 -DDT_B=0 -DHAS_W=0 -DHAS_B=0 -DHAS_Y=1 -DVEC=8 -DNV=4 -DWPR=1 -DFULL=1 -DLBT=256 -DLBB=4" }, \
    { "norm", "-DRK=3 -DDT_X=0 -DDT_W=0 -DDT_B=0 -DHAS_W=1 -DHAS_B=0 -DHAS_Y=1 -DVEC=4 -DNV=8 -DFULL=1 -DLBT=1024 -DLBB=1" }, \
    { "norm", "-DRK=2 -DDT_X=1 -DDT_W=1 -DDT_B=1 -DHAS_W=1 -DHAS_B=1 -DHAS_Y=1 -DVEC=8 -DNV=4 -DFULL=1 -DLBT=256 -DLBB=4" }, \
    { "norm", "-DRK=3 -DDT_X=1 -DDT_W=1 -DDT_B=0 -DHAS_W=1 -DHAS_B=0 -DHAS_Y=1 -DVEC=8 -DNV=4 -DWPR=1 -DFULL=1 -DLBT=256 -DLBB=4" }, \
    { "norm", "-DCOLSUM=1 -DDT_O=0" },

/* elementwise op codes (the OP of kernels/elementwise.cu): binary ops are gpuml_binary_op,
   unary ops GPUML__EW_UNARY + gpuml_unary_op */
enum {
    GPUML__EW_UNARY = 16, GPUML__EW_CLAMP = 30,
    GPUML__EW_RELU_GRAD = 40, GPUML__EW_GELU_GRAD = 41, GPUML__EW_GELU_TANH_GRAD = 42, GPUML__EW_SILU_GRAD = 43,
    GPUML__EW_WHERE = 60
};
/* The CPU elementwise loops of the ops that cost several cycles an element (exponentials, Phi): each
   input prefetched GPUML__EW_PF bytes ahead into L1.  The hardware prefetchers fall behind such a loop
   (in memory it cost its L1 time plus the memory time): one thread, bf16 gelu AVX2 1.70-1.80 -> 1.11-1.32
   TSC cycles an element at 1024 bytes ahead, 1.28-1.36 at 512 (bench/NOTES_ops.md) */
#define GPUML__EW_HEAVY(op) ((op) == GPUML__EW_UNARY + GPUML_UNARY_EXP || (op) == GPUML__EW_UNARY + GPUML_UNARY_SIGMOID || \
                             (op) == GPUML__EW_UNARY + GPUML_UNARY_GELU || (op) == GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH || \
                             (op) == GPUML__EW_UNARY + GPUML_UNARY_SILU || (op) == GPUML__EW_GELU_GRAD || (op) == GPUML__EW_GELU_TANH_GRAD || \
                             (op) == GPUML__EW_SILU_GRAD || (op) == GPUML__EW16_GELU_BF16)
#define GPUML__EW_PF 1024
#define GPUML__EW16_GELU_BF16 (-1)   /* the CPU's gelu when its output is bf16 (an internal code: a cheaper Phi) */


GPUML__FN int gpuml__is_float(gpuml_dtype d) { return d == GPUML_F32 || d == GPUML_F16 || d == GPUML_BF16; }

GPUML__FN gpuml_status gpuml__need_float(gpuml_ctx *ctx, const gpuml_tensor *t, const char *op, const char *arg)
{
    if (!gpuml__is_float(t->dtype))
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: %s is %s; this op takes f32, f16 or bf16", op, arg,
                           gpuml__dtype_names[t->dtype]);
    return GPUML_SUCCESS;
}
GPUML__FN gpuml_status gpuml__need_dtype(gpuml_ctx *ctx, const gpuml_tensor *t, gpuml_dtype want, const char *op, const char *arg)
{
    if (t->dtype != want)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: %s is %s but must be %s", op, arg, gpuml__dtype_names[t->dtype],
                           gpuml__dtype_names[want]);
    return GPUML_SUCCESS;
}
GPUML__FN gpuml_status gpuml__need_same_shape(gpuml_ctx *ctx, const gpuml_tensor *t, const gpuml_tensor *like, const char *op,
                                              const char *arg, const char *likearg)
{
    int i, same = t->ndim == like->ndim;
    char s1[200], s2[200];
    for (i = 0; same && i < t->ndim; i++) same = t->shape[i] == like->shape[i];
    if (!same)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but %s is %s (they must match)", op, arg,
                           gpuml__shape_str(t, s1, sizeof s1), likearg, gpuml__shape_str(like, s2, sizeof s2));
    return GPUML_SUCCESS;
}
/* an output may be exactly an input's view (in place); any other overlap is refused */
GPUML__FN gpuml_status gpuml__check_alias(gpuml_ctx *ctx, const gpuml_tensor *out, const gpuml_tensor *in, const char *op,
                                          const char *oname, const char *iname)
{
    if (!in || gpuml__same_view(out, in) || !gpuml__overlap(out, in)) return GPUML_SUCCESS;
    return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s partially overlaps %s (only the very same view is allowed in place)",
                       op, oname, iname);
}
/* an output that must not overlap the input at all (row ops that read a row several times) */
GPUML__FN gpuml_status gpuml__check_disjoint(gpuml_ctx *ctx, const gpuml_tensor *out, const gpuml_tensor *in, const char *op,
                                             const char *oname, const char *iname)
{
    if (!in || !gpuml__overlap(out, in)) return GPUML_SUCCESS;
    if (gpuml__same_view(out, in)) return GPUML_SUCCESS;
    return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s overlaps %s", op, oname, iname);
}
/* dtype of a op b: f16 with bf16 gives f32, otherwise the wider */
GPUML__FN gpuml_dtype gpuml__promote(gpuml_dtype a, gpuml_dtype b)
{
    if (a == b) return a;
    if (a == GPUML_F32 || b == GPUML_F32) return GPUML_F32;
    return GPUML_F32;   /* f16 with bf16 */
}
/* t as a view broadcast to out's shape (stack copy, no new handle); 0 if it does not broadcast */
GPUML__FN int gpuml__bcast_to(const gpuml_tensor *t, int ndim, const int64_t *shape, gpuml_tensor *v)
{
    int i, lead = ndim - t->ndim;
    if (lead < 0) return 0;
    *v = *t;
    for (i = 0; i < ndim; i++) {
        int j = i - lead;
        if (j >= 0 && t->shape[j] != shape[i] && t->shape[j] != 1) return 0;
        v->shape[i] = shape[i];
        v->strides[i] = (j >= 0 && t->shape[j] == shape[i]) ? t->strides[j] : 0;
    }
    v->ndim = ndim;
    return 1;
}



/* SIMD level of the CPU memory-bound ops: 2 = AVX-512 (F, BW, VL, DQ), 1 = AVX2+FMA, 0 = scalar.
   GPUML_CPU_SIMD=avx2 or =scalar caps it (and gpuml__cpu_simd_ctl(level) sets it, capped by the
   hardware; -1 detects again): the tests run every path that the machine has. */
#if GPUML__HAVE_AVX2_PATH
#define GPUML__AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#endif
static int gpuml__simd_level = -1;   /* gpuml__cpu_simd_ctl's answer, -1 before the first */
GPUML__FN int gpuml__cpu_simd_ctl(int set)
{
    int level = gpuml__simd_level, hw = 0;
    if (set >= -1 || level < 0) {
        const char *env = gpuml__getenv("GPUML_CPU_SIMD");
#if GPUML__HAVE_AVX2_PATH
        if (gpuml__cpu_has_avx2_fma()) {
            hw = 1;
            if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512dq"))
                hw = 2;
        }
#endif
        if (set >= 0) hw = GPUML__MIN(hw, set);
        else if (env && strcmp(env, "scalar") == 0) hw = 0;
        else if (env && strcmp(env, "avx2") == 0) hw = GPUML__MIN(hw, 1);
        level = gpuml__simd_level = hw;
    }
    return level;
}
/* (read on every row of the memory-bound ops: the cached level without a call) */
GPUML__FN int gpuml__cpu_simd(void) { return gpuml__simd_level >= 0 ? gpuml__simd_level : gpuml__cpu_simd_ctl(-2); }

#define GPUML__TILE 512
/* n elements of dtype d at p (byte step) as floats: returns p itself for dense f32, else buf */
#if GPUML__HAVE_AVX2_PATH
#define GPUML__V8_INLINE static __inline__ __attribute__((always_inline, target("avx2,fma")))
/* 8 contiguous bf16 as floats, and 8 floats as bf16 (round to nearest even, NaN -> 0x7fff):
   bit-identical to gpuml__bf16_to_f32 / gpuml__f32_to_bf16 */
GPUML__V8_INLINE __m256 gpuml__v8_ld_bf16(const char *p)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)), 16));
}
/* the bf16 of each lane in its low 16 bits */
GPUML__V8_INLINE __m256i gpuml__v8_bf16_w(__m256 v)
{
    const __m256i absm = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), qnan = _mm256_set1_epi32(0x7fff);
    __m256i x = _mm256_castps_si256(v);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, absm), inf);
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(x, bias), _mm256_and_si256(_mm256_srli_epi32(x, 16), one));
    return _mm256_blendv_epi8(_mm256_srli_epi32(r, 16), qnan, nan);
}
GPUML__V8_INLINE __m128i gpuml__v8_to_bf16(__m256 v)
{
    const __m256i r = gpuml__v8_bf16_w(v);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08));   /* 8 u16 in the low half */
}
/* contiguous bf16 <-> f32 rows, 8 at a time; return how many elements they did */
GPUML__FN GPUML__AVX2_TARGET int64_t gpuml__bf16_ld_avx2(const char *p, int64_t n, float *buf)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(buf + i, gpuml__v8_ld_bf16(p + 2 * i));
    return i;
}
GPUML__FN GPUML__AVX2_TARGET int64_t gpuml__bf16_st_avx2(char *p, int64_t n, const float *v)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(void *)(p + 2 * i), gpuml__v8_to_bf16(_mm256_loadu_ps(v + i)));
    return i;
}

/* 8 contiguous f16 at a time by F16C, bit-identical to gpuml__f16_to_f32 / gpuml__f32_to_f16: a NaN
   loads as the sign and 0x7fc00000 (F16C keeps the payload) and stores as 0x7fff (F16C keeps sign and
   payload); the rest converts exactly / rounds to nearest even in both.  The scalar loops (one call a
   conversion) ran an f16 add on the CPU at ~16 ns an element. */
#define GPUML__F16C_TARGET __attribute__((target("avx2,fma,f16c")))
#define GPUML__V8K_INLINE static __inline__ __attribute__((always_inline, target("avx2,fma,f16c")))
#define gpuml__k_dtype(k) ((k) == 1 ? GPUML_BF16 : (k) == 2 ? GPUML_F16 : GPUML_F32)
/* the kind's element at p + i (the tails) */
#define GPUML__KLD(k, p, i) gpuml__ld_f32(gpuml__k_dtype(k), (p) + (i) * ((k) ? 2 : 4))
#define GPUML__KST(k, p, i, v) gpuml__st_f32(gpuml__k_dtype(k), (p) + (i) * ((k) ? 2 : 4), (v))
GPUML__V8K_INLINE __m256 gpuml__v8_ldk(const char *p, int k)
{
    if (k == 1) return gpuml__v8_ld_bf16(p);
    if (k == 2) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_loadu_ps((const float *)(const void *)p);
}
/* 16 elements of kind k at p as two vectors, in any order (for sums): bf16 by one load and two word
   unpacks against 0 (elements 0-3, 8-11 and 4-7, 12-15: 3 ops where two gpuml__v8_ldk take 4, on the
   shift / shuffle pipes that bound those loops), others as two gpuml__v8_ldk */
GPUML__V8K_INLINE void gpuml__v8x2_ldk_any(const char *p, int k, __m256 *a, __m256 *b)
{
    if (k == 1) {
        const __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)p), z = _mm256_setzero_si256();
        *a = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, w));
        *b = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, w));
    } else {
        *a = gpuml__v8_ldk(p, k);
        *b = gpuml__v8_ldk(p + 8 * (k ? 2 : 4), k);
    }
}
/* nt: a non-temporal store (p aligned to the vector: gpuml__v8_nt_ok; the caller fences) */
/* 8 floats as f16 (NaN -> 0x7fff) */
GPUML__V8K_INLINE __m128i gpuml__v8_to_f16(__m256 v)
{
    const __m256 un = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m128i m = _mm_packs_epi32(_mm256_castsi256_si128(_mm256_castps_si256(un)), _mm256_extractf128_si256(_mm256_castps_si256(un), 1));
    return _mm_blendv_epi8(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), _mm_set1_epi16(0x7fff), m);
}
GPUML__V8K_INLINE void gpuml__v8_stk(char *p, int k, __m256 v, int nt)
{
    if (k == 1 || k == 2) {
        const __m128i h = k == 1 ? gpuml__v8_to_bf16(v) : gpuml__v8_to_f16(v);
        if (nt) _mm_stream_si128((__m128i *)(void *)p, h);
        else _mm_storeu_si128((__m128i *)(void *)p, h);
    } else if (nt) {
        _mm256_stream_ps((float *)(void *)p, v);
    } else {
        _mm256_storeu_ps((float *)(void *)p, v);
    }
}
/* 16 16-bit elements of kind k (1 or 2) from a and b in one 32-byte store (nt: p aligned to 32): one
   pack and permute for the two (bf16), half the store instructions of two gpuml__v8_stk */
GPUML__V8K_INLINE void gpuml__v8x2_stk(char *p, int k, __m256 a, __m256 b, int nt)
{
    const __m256i h = k == 1 ? _mm256_permute4x64_epi64(_mm256_packus_epi32(gpuml__v8_bf16_w(a), gpuml__v8_bf16_w(b)), 0xd8)
                             : _mm256_inserti128_si256(_mm256_castsi128_si256(gpuml__v8_to_f16(a)), gpuml__v8_to_f16(b), 1);
    if (nt) _mm256_stream_si256((__m256i *)(void *)p, h);
    else _mm256_storeu_si256((__m256i *)(void *)p, h);
}
/* p suits gpuml__v8_stk's non-temporal store of kind k (and so does every 8 elements after it) */
#define gpuml__v8_nt_ok(p, k) (((uintptr_t)(p) & ((k) ? 15u : 31u)) == 0)
GPUML__FN GPUML__F16C_TARGET int64_t gpuml__f16_ld_f16c(const char *p, int64_t n, float *buf)
{
    const __m256 sgn = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u)), qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i)));
        v = _mm256_blendv_ps(v, _mm256_or_ps(_mm256_and_ps(v, sgn), qnan), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        _mm256_storeu_ps(buf + i, v);
    }
    return i;
}
GPUML__FN GPUML__F16C_TARGET int64_t gpuml__f16_st_f16c(char *p, int64_t n, const float *v)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) gpuml__v8_stk(p + 2 * i, 2, _mm256_loadu_ps(v + i), 0);
    return i;
}
#endif

GPUML__FN const float *gpuml__cpu_ld(gpuml_dtype d, const char *p, int64_t step, int64_t n, float *buf)
{
    int64_t i = 0;
    if (d == GPUML_F32 && step == 4) return (const float *)(const void *)p;
#if GPUML__HAVE_AVX2_PATH
    if (d == GPUML_BF16 && step == 2 && gpuml__cpu_simd() >= 1) i = gpuml__bf16_ld_avx2(p, n, buf);
    if (d == GPUML_F16 && step == 2 && gpuml__cpu_simd() >= 1 && gpuml__cpu_has_f16c()) i = gpuml__f16_ld_f16c(p, n, buf);
#endif
    if (d == GPUML_BF16) {
        for (; i < n; i++) { gpuml__u16 h; memcpy(&h, p + i * step, 2); buf[i] = gpuml__bf16_to_f32(h); }
    } else if (d == GPUML_F16) {
        for (; i < n; i++) { gpuml__u16 h; memcpy(&h, p + i * step, 2); buf[i] = gpuml__f16_to_f32(h); }
    } else {
        for (i = 0; i < n; i++) buf[i] = gpuml__ld_f32(d, p + i * step);
    }
    return buf;
}
GPUML__FN void gpuml__cpu_st(gpuml_dtype d, char *p, int64_t step, int64_t n, const float *v)
{
    int64_t i = 0;
    if (d == GPUML_F32 && step == 4) { if ((const void *)p != (const void *)v) memcpy(p, v, (size_t)n * 4); return; }
#if GPUML__HAVE_AVX2_PATH
    if (d == GPUML_BF16 && step == 2 && gpuml__cpu_simd() >= 1) i = gpuml__bf16_st_avx2(p, n, v);
    if (d == GPUML_F16 && step == 2 && gpuml__cpu_simd() >= 1 && gpuml__cpu_has_f16c()) i = gpuml__f16_st_f16c(p, n, v);
#endif
    if (d == GPUML_BF16) {
        for (; i < n; i++) { gpuml__u16 h = gpuml__f32_to_bf16(v[i]); memcpy(p + i * step, &h, 2); }
    } else if (d == GPUML_F16) {
        for (; i < n; i++) { gpuml__u16 h = gpuml__f32_to_f16(v[i]); memcpy(p + i * step, &h, 2); }
    } else {
        for (i = 0; i < n; i++) gpuml__st_f32(d, p + i * step, v[i]);
    }
}

/* ---- CPU elementwise math on float arrays (the functions of kernels/elementwise.cu; gelu in forms that
   do not cancel in the negative tail: 0.5 x erfc(-x/sqrt2), in double (x/sqrt2 rounded to f32 would cost
   ~1e-5 at x = -10), and 1 + tanh(u) = 2 sigmoid(2u)) ---- */
GPUML__FN float gpuml__sigmoid_f(float x) { return 1.0f / (1.0f + expf(-x)); }
#define GPUML__EW_LOOP(expr) for (i = 0; i < n; i++) { float x = a[i], y = b ? b[i] : 0.0f; (void)y; o[i] = (expr); } break
#define GPUML__EW_BODY \
    int64_t i; \
    switch (op) { \
    case GPUML_BINARY_ADD: GPUML__EW_LOOP(x + y); \
    case GPUML_BINARY_SUB: GPUML__EW_LOOP(x - y); \
    case GPUML_BINARY_MUL: GPUML__EW_LOOP(x * y); \
    case GPUML_BINARY_DIV: GPUML__EW_LOOP(x / y); \
    case GPUML_BINARY_MAXIMUM: GPUML__EW_LOOP((x != x || y != y) ? x + y : (x > y ? x : y)); \
    case GPUML_BINARY_MINIMUM: GPUML__EW_LOOP((x != x || y != y) ? x + y : (x < y ? x : y)); \
    case GPUML_BINARY_POW: GPUML__EW_LOOP(powf(x, y)); \
    case GPUML__EW_UNARY + GPUML_UNARY_NEG: GPUML__EW_LOOP(-x); \
    case GPUML__EW_UNARY + GPUML_UNARY_ABS: GPUML__EW_LOOP(fabsf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_EXP: GPUML__EW_LOOP(expf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_LOG: GPUML__EW_LOOP(logf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_SQRT: GPUML__EW_LOOP(sqrtf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_RSQRT: GPUML__EW_LOOP(1.0f / sqrtf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_SIN: GPUML__EW_LOOP(sinf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_COS: GPUML__EW_LOOP(cosf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_TANH: GPUML__EW_LOOP(tanhf(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_SIGMOID: GPUML__EW_LOOP(gpuml__sigmoid_f(x)); \
    case GPUML__EW_UNARY + GPUML_UNARY_RELU: GPUML__EW_LOOP(x > 0.0f ? x : (x != x ? x : 0.0f)); \
    case GPUML__EW_UNARY + GPUML_UNARY_GELU: GPUML__EW_LOOP((float)(0.5 * (double)x * erfc((double)x * -0.70710678118654752))); \
    case GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH: \
        GPUML__EW_LOOP(x * gpuml__sigmoid_f(1.5957691216057307f * (x + 0.044715f * x * x * x))); \
    case GPUML__EW_UNARY + GPUML_UNARY_SILU: GPUML__EW_LOOP(x * gpuml__sigmoid_f(x)); \
    case GPUML__EW_CLAMP: GPUML__EW_LOOP(x != x ? x : fminf(fmaxf(x, s0), s1)); \
    case GPUML__EW_RELU_GRAD: GPUML__EW_LOOP(y > 0.0f ? x : (y != y ? y : 0.0f)); \
    case GPUML__EW_GELU_GRAD: \
        GPUML__EW_LOOP(x * (0.5f * erfcf(y * -0.70710678118654752f) + y * 0.39894228040143268f * expf(-0.5f * y * y))); \
    case GPUML__EW_GELU_TANH_GRAD: \
        for (i = 0; i < n; i++) { \
            float y = b[i], k = 0.79788456080286536f, s = gpuml__sigmoid_f(2.0f * k * (y + 0.044715f * y * y * y)); \
            o[i] = a[i] * (s + 2.0f * s * (1.0f - s) * y * k * (1.0f + 3.0f * 0.044715f * y * y)); \
        } \
        break; \
    case GPUML__EW_SILU_GRAD: \
        for (i = 0; i < n; i++) { float y = b[i], s = gpuml__sigmoid_f(y); o[i] = a[i] * s * (1.0f + y * (1.0f - s)); } \
        break; \
    case GPUML__EW_WHERE: for (i = 0; i < n; i++) o[i] = a[i] != 0.0f ? b[i] : c[i]; break; \
    default: break; \
    }

GPUML__FN void gpuml__cpu_ew_plain(int op, int64_t n, float *o, const float *a, const float *b, const float *c, float s0, float s1)
{
    (void)c; (void)s0; (void)s1;
    GPUML__EW_BODY
}
/* ---- CPU vector math (AVX2+FMA): exp, erfc and the activations built on them ----
   exp: Cody-Waite range reduction and a degree-6 polynomial (~1 ulp), 2^k applied in two halves
   so that results up to FLT_MAX stay finite; 0 below -87.3 (flushing what f32 would make
   subnormal), inf above 88.73, NaN kept.  The normal CDF from erfc(z) = t exp(P(t) - z^2),
   t = 1/(1+z/2) (gpuml__v8_ncdf_neg).  gelu uses x Phi(x) = 0.5*x*erfc(-x/sqrt2), which has no
   cancellation for negative x, and the tanh form uses 1 + tanh(u) = 2*sigmoid(2u). */
#if GPUML__HAVE_AVX2_PATH
/* e^r for |r| <= ln2/2: degree-6 polynomial */
GPUML__V8_INLINE __m256 gpuml__v8_exp_poly(__m256 r)
{
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    return _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
}
/* Cody-Waite reduction: v = k ln2 + r; returns r, k in *k */
GPUML__V8_INLINE __m256 gpuml__v8_exp_reduce(__m256 v, __m256 *k)
{
    __m256 r;
    *k = _mm256_round_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_fnmadd_ps(*k, _mm256_set1_ps(0.693359375f), v);
    return _mm256_fnmadd_ps(*k, _mm256_set1_ps(-2.12194440e-4f), r);
}
/* exp(v) for any v: 2^k applied in two halves so that results up to FLT_MAX stay finite */
GPUML__V8_INLINE __m256 gpuml__v8_exp(__m256 v)
{
    const __m256 lo = _mm256_set1_ps(-87.3f), hi = _mm256_set1_ps(88.73f);
    __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q), under = _mm256_cmp_ps(v, lo, _CMP_LT_OQ);
    __m256 over = _mm256_cmp_ps(v, hi, _CMP_GT_OQ), k, y, v0 = v;
    __m256i ki, k1, k2;
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    y = gpuml__v8_exp_poly(gpuml__v8_exp_reduce(v, &k));
    ki = _mm256_cvtps_epi32(k);
    k1 = _mm256_srai_epi32(ki, 1);
    k2 = _mm256_sub_epi32(ki, k1);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, _mm256_set1_epi32(127)), 23)));
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, _mm256_set1_epi32(127)), 23)));
    y = _mm256_andnot_ps(under, y);
    y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
    return _mm256_blendv_ps(y, v0, nan);
}
/* exp(v) for v <= 1 (the softmax shift, erfc's tail, the normal density): one 2^k scaling, no
   overflow handling, ~25% cheaper than gpuml__v8_exp */
GPUML__V8_INLINE __m256 gpuml__v8_exp_small(__m256 v)
{
    const __m256 lo = _mm256_set1_ps(-87.3f);
    __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q), under = _mm256_cmp_ps(v, lo, _CMP_LT_OQ), k, y, v0 = v;
    y = gpuml__v8_exp_poly(gpuml__v8_exp_reduce(_mm256_max_ps(v, lo), &k));
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23)));
    y = _mm256_andnot_ps(under, y);
    return _mm256_blendv_ps(y, v0, nan);
}
/* Phi(-a) = erfc(a / sqrt2) / 2 for a >= 0: the method of gpuml__v16_ncdf_neg (below, with the AVX-512
   math): t = 1/(1 + z/2), erfc(z) = t exp(P(t) - z^2) with P of degree 9 in t - 0.587, z^2 = a^2/2 split
   exactly and the exponent reduced on it; 2^k through the exponent bits (k >= -126 wherever the result
   is kept).  0 where the exponent is below -87.3, NaN kept. */
GPUML__V8_INLINE __m256 gpuml__v8_ncdf_neg(__m256 a)
{
    __m256 th, d, v, aa, al, p, u, s, k, r;
    a = _mm256_min_ps(_mm256_set1_ps(14.0f), a);   /* NaN kept: min returns its second operand */
    d = _mm256_fmadd_ps(a, _mm256_set1_ps(0.70710678118654752f), _mm256_set1_ps(2.0f));
    th = _mm256_rcp_ps(d);
    th = _mm256_fmadd_ps(th, _mm256_fnmadd_ps(d, th, _mm256_set1_ps(1.0f)), th);   /* one Newton step */
    v = _mm256_fmsub_ps(th, _mm256_set1_ps(2.0f), _mm256_set1_ps(0.587f));
    aa = _mm256_mul_ps(a, a);
    al = _mm256_fmsub_ps(a, a, aa);
    p = _mm256_fmadd_ps(_mm256_set1_ps(1.3810324669e-01f), v, _mm256_set1_ps(8.6058013141e-02f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(-2.4020382762e-01f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(-4.9825441092e-02f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(2.9390516877e-01f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(-2.9840882868e-02f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(-4.0786331892e-01f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(8.6219258606e-02f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(1.3693856001e+00f));
    p = _mm256_fmadd_ps(p, v, _mm256_set1_ps(-5.5357551575e-01f));
    u = _mm256_fnmadd_ps(al, _mm256_set1_ps(0.5f), p);
    s = _mm256_fnmadd_ps(aa, _mm256_set1_ps(0.5f), u);
    k = _mm256_round_ps(_mm256_mul_ps(s, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_fnmsub_ps(k, _mm256_set1_ps(2.0f * 0.693359375f), aa);
    r = _mm256_fmadd_ps(r, _mm256_set1_ps(0.5f), u);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    p = _mm256_mul_ps(gpuml__v8_exp_poly(r),
                      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23)));
    p = _mm256_andnot_ps(_mm256_cmp_ps(s, _mm256_set1_ps(-87.3f), _CMP_LT_OQ), p);
    return _mm256_mul_ps(th, p);
}
/* Phi(-a) for 0 <= a < 3.75 from tables of 8 intervals of 1/2, which one vpermps picks (AVX2 has no
   32-entry permute: the AVX-512 tables of 1/8 would take 4 permutes and 3 blends a coefficient): on
   interval j = round(2a), a polynomial of degree D in u = 2a - j in [-1/2, 1/2], fitted for relative
   error (Lawson-weighted least squares, coefficients rounded to f32; bench/NOTES_ops.md): D = 6 within
   2.6e-7 of erfc(a/sqrt2)/2 with the f32 Horner rounding (f32 gelu on |x| < 3.75 within 2.9e-7 of
   float64, the erfc form within 5.4e-7), D = 5 within 6.1e-6 (for bf16 results).  Coefficient d of
   interval j is tab[d * 8 + j]. */
static const float gpuml__ncdf_h6[7 * 8] = {
    5.0000000000e-01f, 3.0853754282e-01f, 1.5865525603e-01f, 6.6807202995e-02f, 2.2750131786e-02f, 6.2096649781e-03f, 1.3498979388e-03f, 2.3262909963e-04f,
    -1.9947114587e-01f, -1.7603266239e-01f, -1.2098537385e-01f, -6.4758807421e-02f, -2.6995481923e-02f, -8.7641477585e-03f, -2.2159232758e-03f, -4.3634153553e-04f,
    5.5808506261e-08f, 2.2004080936e-02f, 3.0246317387e-02f, 2.4284536019e-02f, 1.3497749344e-02f, 5.4776053876e-03f, 1.6619466478e-03f, 3.8179717376e-04f,
    8.3106355742e-03f, 5.5008823983e-03f, 3.1612063367e-07f, -3.3726242837e-03f, -3.3744797111e-03f, -1.9172603497e-03f, -7.3867436731e-04f, -2.0452769240e-04f,
    3.7501972656e-06f, -1.2605803786e-03f, -1.2600055197e-03f, -3.7932055420e-04f, 2.8110778658e-04f, 3.7075689761e-04f, 2.0771072013e-04f, 7.3593866546e-05f,
    -3.2263647881e-04f, -1.4214517432e-04f, 1.2345075083e-04f, 1.8152283155e-04f, 7.0678986958e-05f, -1.9961798898e-05f, -3.4344509913e-05f, -1.8147919036e-05f,
    1.5989715394e-05f, 4.7407625971e-05f, 3.0678711482e-05f, -1.0415130419e-05f, -2.0703198970e-05f, -7.7252852861e-06f, 1.7691916128e-06f, 2.7604764909e-06f,
};
static const float gpuml__ncdf_h5[6 * 8] = {
    5.0000000000e-01f, 3.0853757262e-01f, 1.5865527093e-01f, 6.6807195544e-02f, 2.2750122473e-02f, 6.2096621841e-03f, 1.3498985209e-03f, 2.3262992909e-04f,
    -1.9947111607e-01f, -1.7603258789e-01f, -1.2098532170e-01f, -6.4758837223e-02f, -2.6995539665e-02f, -8.7641710415e-03f, -2.2159160580e-03f, -4.3633003952e-04f,
    -3.9008108388e-07f, 2.2002439946e-02f, 3.0245261267e-02f, 2.4284875020e-02f, 1.3498426415e-02f, 5.4778540507e-03f, 1.6618955415e-03f, 3.8171763299e-04f,
    8.3143319935e-03f, 5.4997773841e-03f, -4.8102987193e-07f, -3.3721532673e-03f, -3.3735467587e-03f, -1.9168780418e-03f, -7.3879660340e-04f, -2.0472153847e-04f,
    -1.0189543900e-05f, -1.2429062044e-03f, -1.2485875050e-03f, -3.8311755634e-04f, 2.7354696067e-04f, 3.6795274355e-04f, 2.0832906011e-04f, 7.4558018241e-05f,
    -2.9829636333e-04f, -1.3860565377e-04f, 1.2600587797e-04f, 1.7999921693e-04f, 6.7667540861e-05f, -2.1199168259e-05f, -3.3942607843e-05f, -1.7511312763e-05f,
};
/* j = round(2a) lands in the low mantissa bits of 2a + 1.5 * 2^23 (vpermps reads the low 3 bits of
   each lane), and u = 2a - j exactly */
GPUML__V8_INLINE __m256 gpuml__v8_ncdf_neg_tab(__m256 a, const float *tab, int deg)   /* deg 5 or 6 */
{
    const __m256 mg = _mm256_set1_ps(12582912.0f), t = _mm256_fmadd_ps(a, _mm256_set1_ps(2.0f), mg);
    const __m256i j = _mm256_castps_si256(t);
    const __m256 u = _mm256_fmsub_ps(a, _mm256_set1_ps(2.0f), _mm256_sub_ps(t, mg));
    __m256 p = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8 * deg), j);
    /* written out: gcc -O2 kept a loop over the coefficients (a bf16 gelu 1.4x slower) */
#define GPUML__V8_TABC(d) _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8 * (d)), j)
    if (deg == 6) p = _mm256_fmadd_ps(p, u, GPUML__V8_TABC(5));
    p = _mm256_fmadd_ps(p, u, GPUML__V8_TABC(4));
    p = _mm256_fmadd_ps(p, u, GPUML__V8_TABC(3));
    p = _mm256_fmadd_ps(p, u, GPUML__V8_TABC(2));
    p = _mm256_fmadd_ps(p, u, GPUML__V8_TABC(1));
    return _mm256_fmadd_ps(p, u, GPUML__V8_TABC(0));
#undef GPUML__V8_TABC
}
/* every lane of a below 3.75 (false for NaN) */
GPUML__V8_INLINE int gpuml__v8_ncdf_tab_ok(__m256 a) { return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(3.75f), _CMP_LT_OQ)) == 0xff; }
/* Phi(-a) for a = |x|: the table where every lane has a < 3.75 (NaN, inf and the tails take the erfc form) */
GPUML__V8_INLINE __m256 gpuml__v8_ncdf_neg_fast(__m256 a)
{
    return gpuml__v8_ncdf_tab_ok(a) ? gpuml__v8_ncdf_neg_tab(a, gpuml__ncdf_h6, 6) : gpuml__v8_ncdf_neg(a);
}
/* Phi(x), the normal CDF; *pdf (if not NULL) gets exp(-x*x/2)/sqrt(2 pi) */
GPUML__V8_INLINE __m256 gpuml__v8_ncdf(__m256 x, __m256 *pdf)
{
    __m256 q = gpuml__v8_ncdf_neg_fast(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x));
    if (pdf) *pdf = _mm256_mul_ps(_mm256_set1_ps(0.39894228040143268f), gpuml__v8_exp_small(_mm256_mul_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(-0.5f))));
    return _mm256_blendv_ps(q, _mm256_sub_ps(_mm256_set1_ps(1.0f), q), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ));
}
/* gelu(x) = x Phi(x): where every |x| < 3.75, max(0, x) - |x| Phi(-|x|) in one FMA (either sign; -0
   stays -0) on the table's Phi (tab, deg: gpuml__ncdf_h6 for f32 results); the rest by the erfc form */
GPUML__V8_INLINE __m256 gpuml__v8_gelu_tab(__m256 x, const float *tab, int deg)
{
    const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    if (gpuml__v8_ncdf_tab_ok(ax)) return _mm256_fnmadd_ps(ax, gpuml__v8_ncdf_neg_tab(ax, tab, deg), _mm256_max_ps(_mm256_setzero_ps(), x));
    return _mm256_mul_ps(x, gpuml__v8_ncdf(x, NULL));
}
#define gpuml__v8_gelu(x) gpuml__v8_gelu_tab((x), gpuml__ncdf_h6, 6)
GPUML__V8_INLINE __m256 gpuml__v8_sigmoid(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, gpuml__v8_exp(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}
/* the binary ops and the activations (and their gradients) whose scalar forms call libm */
GPUML__FN int gpuml__ew_avx2_has(int op)
{
    switch (op) {
    case GPUML_BINARY_ADD: case GPUML_BINARY_SUB: case GPUML_BINARY_MUL: case GPUML_BINARY_DIV:
    case GPUML_BINARY_MAXIMUM: case GPUML_BINARY_MINIMUM:
    case GPUML__EW_UNARY + GPUML_UNARY_EXP: case GPUML__EW_UNARY + GPUML_UNARY_SIGMOID: case GPUML__EW_UNARY + GPUML_UNARY_GELU:
    case GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH: case GPUML__EW_UNARY + GPUML_UNARY_SILU: case GPUML__EW_GELU_GRAD:
    case GPUML__EW_GELU_TANH_GRAD: case GPUML__EW_SILU_GRAD: return 1;
    default: return 0;
    }
}
/* one vector of op (x = a, y = b; the gradients: x = dy, y = the input) */
GPUML__V8_INLINE __m256 gpuml__v8_ew(int op, __m256 x, __m256 y)
{
    const __m256 one = _mm256_set1_ps(1.0f), k0 = _mm256_set1_ps(0.79788456080286536f), k1 = _mm256_set1_ps(0.044715f);
    __m256 r, s, pdf, u, x2, q;
    switch (op) {
    case GPUML_BINARY_ADD: return _mm256_add_ps(x, y);
    case GPUML_BINARY_SUB: return _mm256_sub_ps(x, y);
    case GPUML_BINARY_MUL: return _mm256_mul_ps(x, y);
    case GPUML_BINARY_DIV: return _mm256_div_ps(x, y);
    case GPUML_BINARY_MAXIMUM: case GPUML_BINARY_MINIMUM:   /* NaN in either propagates (as x + y) */
        r = op == GPUML_BINARY_MAXIMUM ? _mm256_max_ps(x, y) : _mm256_min_ps(x, y);
        return _mm256_blendv_ps(r, _mm256_add_ps(x, y), _mm256_cmp_ps(x, y, _CMP_UNORD_Q));
    case GPUML__EW_UNARY + GPUML_UNARY_EXP: return gpuml__v8_exp(x);
    case GPUML__EW_UNARY + GPUML_UNARY_SIGMOID: return gpuml__v8_sigmoid(x);
    case GPUML__EW_UNARY + GPUML_UNARY_SILU: return _mm256_mul_ps(x, gpuml__v8_sigmoid(x));
    case GPUML__EW_UNARY + GPUML_UNARY_GELU: return gpuml__v8_gelu(x);
    case GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH:
        u = _mm256_mul_ps(k0, _mm256_fmadd_ps(_mm256_mul_ps(k1, x), _mm256_mul_ps(x, x), x));
        return _mm256_mul_ps(x, gpuml__v8_sigmoid(_mm256_add_ps(u, u)));
    case GPUML__EW_GELU_GRAD:
        s = gpuml__v8_ncdf(y, &pdf);
        return _mm256_mul_ps(x, _mm256_fmadd_ps(y, pdf, s));
    case GPUML__EW_GELU_TANH_GRAD:   /* 0.5(1+t) = s and 0.5(1-t^2) = 2s(1-s) with s = sigmoid(2u) */
        x2 = _mm256_mul_ps(y, y);
        u = _mm256_mul_ps(k0, _mm256_fmadd_ps(_mm256_mul_ps(k1, y), x2, y));
        s = gpuml__v8_sigmoid(_mm256_add_ps(u, u));
        q = _mm256_mul_ps(_mm256_mul_ps(s, _mm256_sub_ps(one, s)), _mm256_mul_ps(_mm256_add_ps(y, y), k0));
        q = _mm256_mul_ps(q, _mm256_fmadd_ps(_mm256_set1_ps(3.0f * 0.044715f), x2, one));
        return _mm256_mul_ps(x, _mm256_add_ps(s, q));
    case GPUML__EW_SILU_GRAD:
        s = gpuml__v8_sigmoid(y);
        return _mm256_mul_ps(_mm256_mul_ps(x, s), _mm256_fmadd_ps(y, _mm256_sub_ps(one, s), one));
    default: return x;
    }
}
GPUML__V8_INLINE __m256 gpuml__v8_ld(const char *p, int bf) { return bf ? gpuml__v8_ld_bf16(p) : _mm256_loadu_ps((const float *)(const void *)p); }
/* o[i] = op(a[i], b[i]) over n dense elements, each operand f32 or bf16 (the *b flags; b may be
   NULL), converted in registers; the last n % 8 go through 8-float buffers.  Inlined once per op. */
GPUML__V8_INLINE void gpuml__ew_avx2_loop(int op, int64_t n, char *o, int bo, const char *a, int ba, const char *b, int bb)
{
    const int64_t eo = bo ? 2 : 4, ea = ba ? 2 : 4, eb = bb ? 2 : 4;
    int64_t i = 0, k;
    for (; i + 8 <= n; i += 8) {
        __m256 x, y, r;
        if (GPUML__EW_HEAVY(op)) {
            _mm_prefetch(a + i * ea + GPUML__EW_PF, _MM_HINT_T0);
            if (b) _mm_prefetch(b + i * eb + GPUML__EW_PF, _MM_HINT_T0);
        }
        x = gpuml__v8_ld(a + i * ea, ba); y = b ? gpuml__v8_ld(b + i * eb, bb) : x; r = gpuml__v8_ew(op, x, y);
        if (bo) _mm_storeu_si128((__m128i *)(void *)(o + i * eo), gpuml__v8_to_bf16(r));
        else _mm256_storeu_ps((float *)(void *)(o + i * eo), r);
    }
    if (i < n) {
        float ta[8] = {0, 0, 0, 0, 0, 0, 0, 0}, tb[8] = {0, 0, 0, 0, 0, 0, 0, 0}, to[8];
        __m256 x, y;
        for (k = 0; k < n - i; k++) {
            ta[k] = gpuml__ld_f32(ba ? GPUML_BF16 : GPUML_F32, a + (i + k) * ea);
            if (b) tb[k] = gpuml__ld_f32(bb ? GPUML_BF16 : GPUML_F32, b + (i + k) * eb);
        }
        x = _mm256_loadu_ps(ta);
        y = b ? _mm256_loadu_ps(tb) : x;
        _mm256_storeu_ps(to, gpuml__v8_ew(op, x, y));
        for (k = 0; k < n - i; k++) gpuml__st_f32(bo ? GPUML_BF16 : GPUML_F32, o + (i + k) * eo, to[k]);
    }
}
GPUML__FN GPUML__AVX2_TARGET void gpuml__ew_avx2(int op, int64_t n, char *o, int bo, const char *a, int ba, const char *b, int bb)
{
    int f32 = !bo && !ba && !bb;   /* all f32: a copy of the loop without the dtype branches */
    switch (op) {
#define GPUML__EW8(OP) case OP: \
        if (f32) gpuml__ew_avx2_loop(OP, n, o, 0, a, 0, b, 0); else gpuml__ew_avx2_loop(OP, n, o, bo, a, ba, b, bb); break;
    GPUML__EW8(GPUML_BINARY_ADD) GPUML__EW8(GPUML_BINARY_SUB) GPUML__EW8(GPUML_BINARY_MUL) GPUML__EW8(GPUML_BINARY_DIV)
    GPUML__EW8(GPUML_BINARY_MAXIMUM) GPUML__EW8(GPUML_BINARY_MINIMUM) GPUML__EW8(GPUML__EW_UNARY + GPUML_UNARY_EXP)
    GPUML__EW8(GPUML__EW_UNARY + GPUML_UNARY_SIGMOID) GPUML__EW8(GPUML__EW_UNARY + GPUML_UNARY_GELU)
    GPUML__EW8(GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH) GPUML__EW8(GPUML__EW_UNARY + GPUML_UNARY_SILU)
    GPUML__EW8(GPUML__EW_GELU_GRAD) GPUML__EW8(GPUML__EW_GELU_TANH_GRAD) GPUML__EW8(GPUML__EW_SILU_GRAD)
#undef GPUML__EW8
    default: break;
    }
}
/* the ops above on float arrays; returns 0 for other ops (and binary ops without b) */
GPUML__FN GPUML__AVX2_TARGET int gpuml__cpu_ew_math_avx2(int op, int64_t n, float *o, const float *a, const float *b)
{
    if (!gpuml__ew_avx2_has(op) || (op < GPUML__EW_UNARY && !b)) return 0;
    gpuml__ew_avx2(op, n, (char *)o, 0, (const char *)a, 0, (const char *)b, 0);
    return 1;
}
static int gpuml__gelu_bf16_generic;   /* A/B runs and tests: 1 takes the generic loop (here and for AVX-512, bf16 and f16) */
/* gelu of n dense elements from kind ka into kind ko (gpuml__v16_kind; f16 needs F16C), converted in
   registers (through the tiles' f32 buffers a bf16 gelu took 1.4x the time): bf16 results take the degree-5 table (6e-6,
   as the AVX-512 path takes a cheaper Phi for them), f32 and f16 ones the degree-6 (f16's 11 bits need
   the f32 form).  bf16 into bf16 (unless gpuml__gelu_bf16_generic) runs 16 at a time on the two
   halves that vpunpck{l,h}wd with zeros make of them (f32 lanes 0-3, 8-11 and 4-7, 12-15: vpackusdw
   puts them back in order), rounded to nearest even without the NaN fix-up where every |x| < 3.75
   (no NaN can occur there); other vectors and the last n % 16 take the generic loop.  stream:
   non-temporal stores where o allows them (the bf16 loop after a first short run up to o's 32-byte
   alignment); gpuml__xforeach_task fences. */
GPUML__V8K_INLINE void gpuml__gelu_avx2_run(int64_t n, char *o, int ko, const char *a, int ka, int nt)
{
    const float *tab = ko == 1 ? gpuml__ncdf_h5 : gpuml__ncdf_h6;
    const int deg = ko == 1 ? 5 : 6;
    const int64_t eo = ko ? 2 : 4, ea = ka ? 2 : 4;
    int64_t i = 0, k;
    if (ko == 2) {   /* f16 out: where every |x| < 3.75 no NaN can occur, and vcvtps2ph needs no fix-up (1.3x) */
        for (; i + 8 <= n; i += 8) {
            _mm_prefetch(a + i * ea + GPUML__EW_PF, _MM_HINT_T0);
            const __m256 x = gpuml__v8_ldk(a + i * ea, ka);
            const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
            __m128i h;
            if (!gpuml__v8_ncdf_tab_ok(ax)) { gpuml__v8_stk(o + i * eo, 2, gpuml__v8_gelu_tab(x, tab, deg), nt); continue; }
            h = _mm256_cvtps_ph(_mm256_fnmadd_ps(ax, gpuml__v8_ncdf_neg_tab(ax, tab, deg), _mm256_max_ps(_mm256_setzero_ps(), x)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            if (nt) _mm_stream_si128((__m128i *)(void *)(o + i * eo), h);
            else _mm_storeu_si128((__m128i *)(void *)(o + i * eo), h);
        }
    }
    for (; i + 8 <= n; i += 8) {
        _mm_prefetch(a + i * ea + GPUML__EW_PF, _MM_HINT_T0);
        gpuml__v8_stk(o + i * eo, ko, gpuml__v8_gelu_tab(gpuml__v8_ldk(a + i * ea, ka), tab, deg), nt);
    }
    if (i < n) {
        float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (k = 0; k < n - i; k++) t[k] = GPUML__KLD(ka, a, i + k);
        _mm256_storeu_ps(t, gpuml__v8_gelu_tab(_mm256_loadu_ps(t), tab, deg));
        for (k = 0; k < n - i; k++) GPUML__KST(ko, o, i + k, t[k]);
    }
}
GPUML__V8K_INLINE void gpuml__gelu_avx2_loop(int64_t n, char *o, int ko, const char *a, int ka, int stream)
{
    if (stream && gpuml__v8_nt_ok(o, ko)) gpuml__gelu_avx2_run(n, o, ko, a, ka, 1);   /* nt a constant in each loop */
    else gpuml__gelu_avx2_run(n, o, ko, a, ka, 0);
}
GPUML__FN GPUML__F16C_TARGET void gpuml__gelu_avx2(int64_t n, char *o, int ko, const char *a, int ka, int stream)
{
    const __m256 zero = _mm256_setzero_ps(), lim = _mm256_set1_ps(3.75f), sgn = _mm256_set1_ps(-0.0f);
    const __m256i r7f = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
    int64_t i = 0;
    if (ko != 1 || ka != 1 || gpuml__gelu_bf16_generic) {
        if (ko == 1) gpuml__gelu_avx2_loop(n, o, 1, a, ka, stream);
        else if (ko == 2) gpuml__gelu_avx2_loop(n, o, 2, a, ka, stream);
        else gpuml__gelu_avx2_loop(n, o, 0, a, ka, stream);
        return;
    }
    if (stream && (uintptr_t)o % 2u == 0) {   /* the first elements up to o's 32-byte alignment */
        i = GPUML__MIN(n, (int64_t)(((32u - (uintptr_t)o % 32u) % 32u) / 2u));
        gpuml__gelu_avx2_loop(i, o, 1, a, 1, 0);
    } else {
        stream = 0;
    }
    for (; i + 16 <= n; i += 16) {
        _mm_prefetch(a + 2 * i + GPUML__EW_PF, _MM_HINT_T0);
        const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(a + 2 * i));
        const __m256 x0 = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), h));
        const __m256 x1 = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), h));
        const __m256 a0 = _mm256_andnot_ps(sgn, x0), a1 = _mm256_andnot_ps(sgn, x1);
        __m256i g0, g1;
        if (_mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(a0, lim, _CMP_LT_OQ), _mm256_cmp_ps(a1, lim, _CMP_LT_OQ))) != 0xff) {
            gpuml__gelu_avx2_loop(16, o + 2 * i, 1, a + 2 * i, 1, stream);
            continue;
        }
        g0 = _mm256_castps_si256(_mm256_fnmadd_ps(a0, gpuml__v8_ncdf_neg_tab(a0, gpuml__ncdf_h5, 5), _mm256_max_ps(zero, x0)));
        g1 = _mm256_castps_si256(_mm256_fnmadd_ps(a1, gpuml__v8_ncdf_neg_tab(a1, gpuml__ncdf_h5, 5), _mm256_max_ps(zero, x1)));
        g0 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(g0, r7f), _mm256_and_si256(_mm256_srli_epi32(g0, 16), one)), 16);
        g1 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(g1, r7f), _mm256_and_si256(_mm256_srli_epi32(g1, 16), one)), 16);
        if (stream) _mm256_stream_si256((__m256i *)(void *)(o + 2 * i), _mm256_packus_epi32(g0, g1));
        else _mm256_storeu_si256((__m256i *)(void *)(o + 2 * i), _mm256_packus_epi32(g0, g1));
    }
    if (i < n) gpuml__gelu_avx2_loop(n - i, o + 2 * i, 1, a + 2 * i, 1, 0);
}
#endif
/* AVX2 row helpers for the CPU reductions, softmax and norms (the row is in cache by then: rows
   up to 32768 f32 fit in L2): sums in double, elementwise passes in f32 */
#if GPUML__HAVE_AVX2_PATH
/* The row functions below read x (and write y) as dense f32, bf16 or f16 (kx, ky: gpuml__v16_kind),
   converted in registers: the 16-bit rows of a CPU without AVX-512 took a pass through an f32 row
   buffer on each side (bench/NOTES_ops.md).  Each is one body inlined per input kind, so the f32 loop
   keeps no kind branch; the *_avx2 names on float arrays call them with kind 0.  f16 needs F16C (the
   callers check gpuml__cpu_has_f16c); NaN loads keep F16C's bits (every output here is arithmetic
   on them, and the 16-bit stores write 0x7fff for any NaN, as gpuml__f32_to_f16 / _bf16 do). */
/* call(k) with k the constant equal to kind (0, 1 or 2): one inlined body per kind */
#define GPUML__K3(kind, call) ((kind) == 1 ? call(1) : (kind) == 2 ? call(2) : call(0))
GPUML__V8K_INLINE float gpuml__vmax_body(const char *x, int kx, int64_t n)
{
    const int64_t ex = kx ? 2 : 4;
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
    float t[8], mx;
    int64_t i = 0;
    /* max_ps(x, m) returns m when x is NaN: NaN is skipped, as the scalar loop does */
    for (; i + 16 <= n; i += 16) {
        m0 = _mm256_max_ps(gpuml__v8_ldk(x + i * ex, kx), m0);
        m1 = _mm256_max_ps(gpuml__v8_ldk(x + (i + 8) * ex, kx), m1);
    }
    _mm256_storeu_ps(t, _mm256_max_ps(m0, m1));
    mx = t[0];
    for (i = 1; i < 8; i++) if (t[i] > mx) mx = t[i];
    for (i = n & ~(int64_t)15; i < n; i++) { const float v = GPUML__KLD(kx, x, i); if (v > mx) mx = v; }
    return mx;
}
GPUML__FN GPUML__F16C_TARGET float gpuml__vmax_k_avx2(const char *x, int kx, int64_t n)
{
#define GPUML__C(k) gpuml__vmax_body(x, k, n)
    return GPUML__K3(kx, GPUML__C);
#undef GPUML__C
}
GPUML__FN float gpuml__vmax_avx2(const float *x, int64_t n) { return gpuml__vmax_k_avx2((const char *)(const void *)x, 0, n); }
/* max and min of a dense 16-bit row (k: 1 bf16, 2 f16; sign-magnitude words) on the raw words, 16 at a
   time by four integer ops (the f32 pass: a widening and a shift besides the max, for 8): the largest
   signed word is the largest value where it is >= +0 (a NaN above +inf), else every word is negative
   and the smallest unsigned one is the max; the largest unsigned word, where negative, is the min (a
   NaN below -inf), else the smallest signed one.  Returns 0 where the row holds a NaN or an inf (*mx,
   *mn unset: the caller takes the f32 pass), else 1. */
GPUML__V8K_INLINE int gpuml__vmaxmin16_body(const char *x, int k, int64_t n, float *mx, float *mn)
{
    const int inf = k == 1 ? 0x7f80 : 0x7c00;
    __m256i smax = _mm256_set1_epi16((short)-32768), umin = _mm256_set1_epi16(-1), umax = _mm256_setzero_si256(), smin = _mm256_set1_epi16(32767);
    __m128i h;
    int64_t i = 0;
    int sx, sn, ux, un;
    uint16_t wx, wn;
    if (n <= 0) return 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(x + 2 * i));
        smax = _mm256_max_epi16(smax, w);
        umin = _mm256_min_epu16(umin, w);
        umax = _mm256_max_epu16(umax, w);
        smin = _mm256_min_epi16(smin, w);
    }
    /* across the lanes by phminposuw (the unsigned min of 8 words): a max as 0xffff - the min of ~w, signed words
       as unsigned with the sign bit flipped (w ^ 0x8000; its complement w ^ 0x7fff) */
    h = _mm_min_epu16(_mm256_castsi256_si128(umin), _mm256_extracti128_si256(umin, 1));
    un = _mm_extract_epi16(_mm_minpos_epu16(h), 0);
    h = _mm_max_epu16(_mm256_castsi256_si128(umax), _mm256_extracti128_si256(umax, 1));
    ux = 0xffff - _mm_extract_epi16(_mm_minpos_epu16(_mm_xor_si128(h, _mm_set1_epi16(-1))), 0);
    h = _mm_max_epi16(_mm256_castsi256_si128(smax), _mm256_extracti128_si256(smax, 1));
    sx = 0x7fff - _mm_extract_epi16(_mm_minpos_epu16(_mm_xor_si128(h, _mm_set1_epi16(0x7fff))), 0);
    h = _mm_min_epi16(_mm256_castsi256_si128(smin), _mm256_extracti128_si256(smin, 1));
    sn = _mm_extract_epi16(_mm_minpos_epu16(_mm_xor_si128(h, _mm_set1_epi16((short)-32768))), 0) - 32768;
    for (; i < n; i++) {
        uint16_t u;
        int v;
        memcpy(&u, x + 2 * i, 2);
        v = u >= 0x8000 ? (int)u - 65536 : (int)u;
        if (v > sx) sx = v;
        if (v < sn) sn = v;
        if ((int)u > ux) ux = u;
        if ((int)u < un) un = u;
    }
    if (sx >= 0) { if (sx >= inf) return 0; wx = (uint16_t)sx; } else wx = (uint16_t)un;
    if (ux >= 0x8000) { if ((ux & 0x7fff) >= inf) return 0; wn = (uint16_t)ux; } else wn = (uint16_t)sn;
    *mx = gpuml__ld_f32(gpuml__k_dtype(k), (const char *)&wx);
    *mn = gpuml__ld_f32(gpuml__k_dtype(k), (const char *)&wn);
    return 1;
}
GPUML__FN GPUML__F16C_TARGET int gpuml__vmaxmin16_avx2(const char *x, int k, int64_t n, float *mx, float *mn)
{
    return k == 1 ? gpuml__vmaxmin16_body(x, 1, n, mx, mn) : gpuml__vmaxmin16_body(x, 2, n, mx, mn);
}
/* sum of x[i] - c (c = 0: plain sum) or, with sq, of (x[i] - c)^2; in double */
GPUML__V8K_INLINE double gpuml__vsum_body(const char *x, int kx, int64_t n, float c, int sq)
{
    const int64_t ex = kx ? 2 : 4;
    __m256d a0 = _mm256_setzero_pd(), a1 = a0;
    const __m256 vc = _mm256_set1_ps(c);
    double t[4], s;
    int64_t i = 0, b0;
    if (sq) {   /* squares (around the mean: no cancellation) in f32 per block of 1024, the blocks in double */
        for (b0 = 0; b0 + 8 <= n; b0 += 1024) {
            const int64_t b1 = GPUML__MIN(b0 + 1024, n);
            __m256 f0 = _mm256_setzero_ps(), f1 = f0, d, e;
            for (i = b0; i + 16 <= b1; i += 16) {
                gpuml__v8x2_ldk_any(x + i * ex, kx, &d, &e);
                d = _mm256_sub_ps(d, vc);
                e = _mm256_sub_ps(e, vc);
                f0 = _mm256_fmadd_ps(d, d, f0);
                f1 = _mm256_fmadd_ps(e, e, f1);
            }
            for (; i + 8 <= b1; i += 8) {
                d = _mm256_sub_ps(gpuml__v8_ldk(x + i * ex, kx), vc);
                f0 = _mm256_fmadd_ps(d, d, f0);
            }
            f0 = _mm256_add_ps(f0, f1);
            a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(f0)));
            a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(f0, 1)));
            if (i < b1) break;   /* the last few elements: below */
        }
    } else {   /* plain sums in double (the mean of values far from 0 must not lose bits) */
        for (; i + 8 <= n; i += 8) {
            __m256 d = _mm256_sub_ps(gpuml__v8_ldk(x + i * ex, kx), vc);
            a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(d)));
            a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1)));
        }
    }
    _mm256_storeu_pd(t, _mm256_add_pd(a0, a1));
    s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; i < n; i++) { double d = (double)(GPUML__KLD(kx, x, i) - c); s += sq ? d * d : d; }
    return s;
}
GPUML__FN GPUML__F16C_TARGET double gpuml__vsum_k_avx2(const char *x, int kx, int64_t n, float c, int sq)
{
#define GPUML__C(k) gpuml__vsum_body(x, k, n, c, sq)
    return GPUML__K3(kx, GPUML__C);
#undef GPUML__C
}
GPUML__FN double gpuml__vsum_avx2(const float *x, int64_t n, float c, int sq) { return gpuml__vsum_k_avx2((const char *)(const void *)x, 0, n, c, sq); }
/* layernorm's statistics of a row in one pass, as gpuml__norm_stats_avx512: per block of 1024 the sum and
   the sum of squares in f32 around a shift (the first block: the mean of its first 64 elements; then the
   running mean, so rows far from 0 keep their bits), the blocks merged in double (Chan et al.).  Returns
   the sum of squares around the mean, *mean_out the mean.  (The plain sum in double and a second pass
   for the squares took a bf16 row 1.5x the time of rmsnorm's one pass.) */
GPUML__V8K_INLINE float gpuml__v8_hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
GPUML__V8K_INLINE double gpuml__norm_stats_body(const char *x, int kx, int64_t n, double *mean_out)
{
    const int64_t ex = kx ? 2 : 4;
    double cnt = 0, mean = 0, m2 = 0;
    int64_t b0, i;
    for (b0 = 0; b0 < n; b0 += 1024) {
        const int64_t b1 = GPUML__MIN(b0 + 1024, n), nb = b1 - b0;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0, vb;
        float mb, sf, qf;
        double bmean, bm2, d, tot;
        if (b0 == 0) {
            const int64_t k = GPUML__MIN(nb, 64);
            for (i = 0; i + 8 <= k; i += 8) a0 = _mm256_add_ps(a0, gpuml__v8_ldk(x + i * ex, kx));
            sf = gpuml__v8_hsum(a0);
            for (; i < k; i++) sf += GPUML__KLD(kx, x, i);
            mb = sf / (float)k;
            a0 = _mm256_setzero_ps();
        } else {
            mb = (float)mean;
        }
        vb = _mm256_set1_ps(mb);
        for (i = b0; i + 32 <= b1; i += 32) {   /* four chains of each sum (latency) */
            __m256 v, u, v2, u2;
            gpuml__v8x2_ldk_any(x + i * ex, kx, &v, &u);
            gpuml__v8x2_ldk_any(x + (i + 16) * ex, kx, &v2, &u2);
            v = _mm256_sub_ps(v, vb); u = _mm256_sub_ps(u, vb); v2 = _mm256_sub_ps(v2, vb); u2 = _mm256_sub_ps(u2, vb);
            a0 = _mm256_add_ps(a0, v);
            a1 = _mm256_add_ps(a1, u);
            a2 = _mm256_add_ps(a2, v2);
            a3 = _mm256_add_ps(a3, u2);
            c0 = _mm256_fmadd_ps(v, v, c0);
            c1 = _mm256_fmadd_ps(u, u, c1);
            c2 = _mm256_fmadd_ps(v2, v2, c2);
            c3 = _mm256_fmadd_ps(u2, u2, c3);
        }
        for (; i + 8 <= b1; i += 8) {
            const __m256 v = _mm256_sub_ps(gpuml__v8_ldk(x + i * ex, kx), vb);
            a0 = _mm256_add_ps(a0, v);
            c0 = _mm256_fmadd_ps(v, v, c0);
        }
        sf = gpuml__v8_hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
        qf = gpuml__v8_hsum(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)));
        for (; i < b1; i++) {
            const float v = GPUML__KLD(kx, x, i) - mb;
            sf += v;
            qf += v * v;
        }
        bmean = (double)mb + (double)sf / (double)nb;
        bm2 = (double)qf - (double)sf * (double)sf / (double)nb;
        d = bmean - mean;
        tot = cnt + (double)nb;
        mean += d * ((double)nb / tot);
        m2 += bm2 + d * d * cnt * ((double)nb / tot);
        cnt = tot;
    }
    *mean_out = mean;
    return m2;
}
GPUML__FN GPUML__F16C_TARGET double gpuml__norm_stats_k_avx2(const char *x, int kx, int64_t n, double *mean_out)
{
#define GPUML__C(k) gpuml__norm_stats_body(x, k, n, mean_out)
    return GPUML__K3(kx, GPUML__C);
#undef GPUML__C
}
/* 16-bit results of 8 lanes none of which is NaN (the softmax's where its sum is finite, the norms' where
   the row's statistics, weight and bias are): the conversions without their NaN fix-up (bf16 3 of 9 ops) */
GPUML__V8K_INLINE __m256i gpuml__v8_bf16_w_fin(__m256 v)
{
    const __m256i x = _mm256_castps_si256(v);
    const __m256i r = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1)));
    return _mm256_srli_epi32(r, 16);
}
/* perm (bf16): a and b hold elements 0-3, 8-11 and 4-7, 12-15 (gpuml__v8x2_ldk_any's order), which the
   pack puts in place without the permute */
GPUML__V8K_INLINE void gpuml__v8x2_stk_fin(char *p, int k, __m256 a, __m256 b, int nt, int perm)
{
    const __m256i h = k == 1 && perm ? _mm256_packus_epi32(gpuml__v8_bf16_w_fin(a), gpuml__v8_bf16_w_fin(b))
                    : k == 1 ? _mm256_permute4x64_epi64(_mm256_packus_epi32(gpuml__v8_bf16_w_fin(a), gpuml__v8_bf16_w_fin(b)), 0xd8)
                             : _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
                                                       _mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 1);
    if (nt) _mm256_stream_si256((__m256i *)(void *)p, h);
    else _mm256_storeu_si256((__m256i *)(void *)p, h);
}
/* ((x - m) r) w + b for the 8 elements of x at i (m = vm + vl; w and b both: one FMA, as the AVX-512
   loop); rms (m = 0): without the two subtractions, which change no bit there */
GPUML__V8K_INLINE __m256 gpuml__v8_norm(const char *x, int kx, int64_t i, __m256 vm, __m256 vl, __m256 vr, const float *w, const float *b, int rms)
{
    __m256 v = gpuml__v8_ldk(x + i * (kx ? 2 : 4), kx);
    v = _mm256_mul_ps(rms ? v : _mm256_sub_ps(_mm256_sub_ps(v, vm), vl), vr);
    if (w && b) return _mm256_fmadd_ps(v, _mm256_loadu_ps(w + i), _mm256_loadu_ps(b + i));
    if (w) v = _mm256_mul_ps(v, _mm256_loadu_ps(w + i));
    if (b) v = _mm256_add_ps(v, _mm256_loadu_ps(b + i));
    return v;
}
/* nt, pf NULL or not, rms and fin: constants in each loop instance */
GPUML__V8K_INLINE void gpuml__vnorm_out_loop(const char *x, int k, int64_t n, double m, float r, const float *w, const float *b, char *y,
                                            int nt, const char *pf, int rms, int fin)
{
    const int64_t ex = k ? 2 : 4;
    const __m256 vm = _mm256_set1_ps((float)m), vl = _mm256_set1_ps((float)(m - (double)(float)m)), vr = _mm256_set1_ps(r);
    int64_t i = 0;
#define GPUML__NV(i) gpuml__v8_norm(x, k, (i), vm, vl, vr, w, b, rms)
    if (k == 1 || (k == 2 && fin)) {   /* 16-bit results 16 at a time (gpuml__v8x2_stk: bf16; fin: bf16 and f16 without the NaN fix-up); nt: 8 first where y is not aligned to 32 */
        if (nt && ((uintptr_t)y & 31u) && n >= 8) { gpuml__v8_stk(y, k, GPUML__NV(0), nt); i = 8; }
        for (; i + 16 <= n; i += 16) {
            if (pf) _mm_prefetch(pf + i * ex, _MM_HINT_T0);
            if (fin) gpuml__v8x2_stk_fin(y + i * ex, k, GPUML__NV(i), GPUML__NV(i + 8), nt, 0);
            else gpuml__v8x2_stk(y + i * ex, k, GPUML__NV(i), GPUML__NV(i + 8), nt);
        }
    }
    for (; i + 8 <= n; i += 8) {
        if (pf && !(i & 15)) _mm_prefetch(pf + i * ex, _MM_HINT_T0);
        gpuml__v8_stk(y + i * ex, k, GPUML__NV(i), nt);
    }
#undef GPUML__NV
    for (; i < n; i++) {
        const float v = (float)(GPUML__KLD(k, x, i) - m) * r;
        GPUML__KST(k, y, i, w && b ? fmaf(v, w[i], b[i]) : v * (w ? w[i] : 1.0f) + (b ? b[i] : 0.0f));
    }
}
GPUML__V8K_INLINE void gpuml__vnorm_out_fin(const char *x, int k, int64_t n, double m, float r, const float *w, const float *b, char *y,
                                           int nt, const char *pf, int fin)
{
    if (m == 0.0 && fin) gpuml__vnorm_out_loop(x, k, n, m, r, w, b, y, nt, pf, 1, 1);
    else if (m == 0.0) gpuml__vnorm_out_loop(x, k, n, m, r, w, b, y, nt, pf, 1, 0);
    else if (fin) gpuml__vnorm_out_loop(x, k, n, m, r, w, b, y, nt, pf, 0, 1);
    else gpuml__vnorm_out_loop(x, k, n, m, r, w, b, y, nt, pf, 0, 0);
}
GPUML__V8K_INLINE void gpuml__vnorm_out_body(const char *x, int k, int64_t n, double m, float r, const float *w, const float *b, char *y,
                                            int stream, const char *pf, int fin)
{
    /* nt and whether pf is NULL constants in each loop (a test a store had cost an f32 rmsnorm ~5%; a test for
       pf in the loop cost f32 rmsnorm rows of 1024, which take no prefetch, 5-10%) */
    const int nt = stream && gpuml__v8_nt_ok(y, k);
    fin = fin && k;   /* (a constant 0 for f32 results: those loops are not instanced) */
    if (pf && nt) gpuml__vnorm_out_fin(x, k, n, m, r, w, b, y, 1, pf, fin);
    else if (pf) gpuml__vnorm_out_fin(x, k, n, m, r, w, b, y, 0, pf, fin);
    else if (nt) gpuml__vnorm_out_fin(x, k, n, m, r, w, b, y, 1, NULL, fin);
    else gpuml__vnorm_out_fin(x, k, n, m, r, w, b, y, 0, NULL, fin);
}
/* y = (x - m) r w + b, y of x's kind k (w, b may be NULL); m as two floats (x - m stays accurate when |m| is
   much larger than the spread of x).  stream: non-temporal stores where y allows them (the caller
   fences); the rows here and in gpuml__vaxpc_k_avx2 stream outputs of GPUML__STREAM_BYTES or more, as
   the AVX-512 rows do (without the stores' read for ownership an f16 layernorm on 2 threads took 12%
   off, a bf16 one 3-5%: the 16-bit rows are compute-bound here).  pf (not NULL): the next row, prefetched
   into L1 while this one's output goes out (its statistics pass then reads from cache, as on AVX-512).
   fin: no result can be NaN (the caller's statistics, r, w and b finite): 16-bit results without the NaN
   fix-up. */
GPUML__FN GPUML__F16C_TARGET void gpuml__vnorm_out_k_avx2(const char *x, int k, int64_t n, double m, float r, const float *w, const float *b,
                                                        char *y, int stream, const char *pf, int fin)
{
#define GPUML__C(kc) gpuml__vnorm_out_body(x, kc, n, m, r, w, b, y, stream, pf, fin)
    GPUML__K3(k, GPUML__C);
#undef GPUML__C
}
/* layernorm (rms = 0) / rmsnorm backward of one f32 row: xh = (x - m) r, g = dy w (w may be NULL),
   dx = r (g - mean(g) - xh mean(g xh)) (mean(g) = 0 for rmsnorm); acc[i] += dy xh and acc[n + i] += dy
   in double; the row sums in f32 per block of 1024 and in double across blocks (as the AVX-512 path) */
GPUML__FN GPUML__AVX2_TARGET void gpuml__vnorm_bwd_avx2(const float *x, const float *dy, int64_t n, int rms, double m, double r,
                                                       const float *w, double *acc, float *dx)
{
    const __m256 vm = _mm256_set1_ps((float)m), vl = _mm256_set1_ps((float)(m - (double)(float)m)), vr = _mm256_set1_ps((float)r);
    __m256 vsg, vsgx;
    double sg = 0, sgx = 0, t[8];
    int64_t b0, i;
    for (b0 = 0; b0 < n; b0 += 1024) {
        const int64_t b1 = GPUML__MIN(b0 + 1024, n);
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (i = b0; i + 8 <= b1; i += 8) {
            const __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vl), vr);
            const __m256 d = _mm256_loadu_ps(dy + i), g = w ? _mm256_mul_ps(d, _mm256_loadu_ps(w + i)) : d, dxh = _mm256_mul_ps(d, xh);
            a0 = _mm256_add_ps(a0, g);
            a1 = _mm256_fmadd_ps(g, xh, a1);
            _mm256_storeu_pd(acc + i, _mm256_add_pd(_mm256_loadu_pd(acc + i), _mm256_cvtps_pd(_mm256_castps256_ps128(dxh))));
            _mm256_storeu_pd(acc + i + 4, _mm256_add_pd(_mm256_loadu_pd(acc + i + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(dxh, 1))));
            _mm256_storeu_pd(acc + n + i, _mm256_add_pd(_mm256_loadu_pd(acc + n + i), _mm256_cvtps_pd(_mm256_castps256_ps128(d))));
            _mm256_storeu_pd(acc + n + i + 4, _mm256_add_pd(_mm256_loadu_pd(acc + n + i + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1))));
        }
        _mm256_storeu_pd(t, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a0)), _mm256_cvtps_pd(_mm256_extractf128_ps(a0, 1))));
        _mm256_storeu_pd(t + 4, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a1)), _mm256_cvtps_pd(_mm256_extractf128_ps(a1, 1))));
        sg += (t[0] + t[1]) + (t[2] + t[3]);
        sgx += (t[4] + t[5]) + (t[6] + t[7]);
        for (; i < b1; i++) {
            const double xh = ((double)x[i] - m) * r, g = (double)dy[i] * (w ? w[i] : 1.0f);
            sg += g; sgx += g * xh;
            acc[i] += dy[i] * xh;
            acc[n + i] += dy[i];
        }
    }
    sg = rms ? 0.0 : sg / (double)n;
    sgx /= (double)n;
    vsg = _mm256_set1_ps((float)sg);
    vsgx = _mm256_set1_ps((float)sgx);
    for (i = 0; i + 8 <= n; i += 8) {
        const __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vl), vr);
        const __m256 d = _mm256_loadu_ps(dy + i), g = w ? _mm256_mul_ps(d, _mm256_loadu_ps(w + i)) : d;
        _mm256_storeu_ps(dx + i, _mm256_mul_ps(vr, _mm256_fnmadd_ps(xh, vsgx, _mm256_sub_ps(g, vsg))));
    }
    for (; i < n; i++) {
        const double xh = ((double)x[i] - m) * r, g = (double)dy[i] * (w ? w[i] : 1.0f);
        dx[i] = (float)(r * (g - sg - xh * sgx));
    }
}
/* y = x * s + c (stream: as gpuml__vnorm_out_body; fin: no result is NaN, 16-bit results are stored
   16 at a time without the NaN fix-up) */
GPUML__V8K_INLINE void gpuml__vaxpc_loop(const char *x, int kx, int64_t n, float sc, float c, char *y, int ky, int nt, int fin, int perm)
{
    const int64_t ex = kx ? 2 : 4, ey = ky ? 2 : 4;
    const __m256 vs = _mm256_set1_ps(sc), vc = _mm256_set1_ps(c);
    int64_t i = 0;
#define GPUML__AX(i) _mm256_fmadd_ps(gpuml__v8_ldk(x + (i) * ex, kx), vs, vc)
    if (ky == 1 || (ky == 2 && fin)) {   /* bf16 results 16 at a time (gpuml__v8x2_stk: 1 thread, softmax rows of 8192 3-5% faster, f16 not); nt: 8 first where y is not aligned to 32 */
        if (nt && ((uintptr_t)y & 31u) && n >= 8) { gpuml__v8_stk(y, ky, GPUML__AX(0), nt); i = 8; }   /* (not with perm: y aligned there) */
        if (fin) for (; i + 16 <= n; i += 16) gpuml__v8x2_stk_fin(y + i * ey, ky, GPUML__AX(i), GPUML__AX(i + 8), nt, perm);
        else for (; i + 16 <= n; i += 16) gpuml__v8x2_stk(y + i * ey, ky, GPUML__AX(i), GPUML__AX(i + 8), nt);
    }
    for (; i + 8 <= n; i += 8) gpuml__v8_stk(y + i * ey, ky, GPUML__AX(i), nt);
#undef GPUML__AX
    for (; i < n; i++) GPUML__KST(ky, y, i, GPUML__KLD(kx, x, i) * sc + c);
}
GPUML__V8K_INLINE void gpuml__vaxpc_body(const char *x, int kx, int64_t n, float sc, float c, char *y, int ky, int stream, int fin)
{
    const int nt = stream && gpuml__v8_nt_ok(y, ky);
    if (fin == 2 && kx == 0 && ky == 1) {   /* x in gpuml__exp_shift_body's fast order: streamed only where y is aligned to 32 */
        if (nt && !((uintptr_t)y & 31u)) gpuml__vaxpc_loop(x, 0, n, sc, c, y, 1, 1, 1, 1);
        else gpuml__vaxpc_loop(x, 0, n, sc, c, y, 1, 0, 1, 1);
    } else if (fin && ky) {
        if (nt) gpuml__vaxpc_loop(x, kx, n, sc, c, y, ky, 1, 1, 0);
        else gpuml__vaxpc_loop(x, kx, n, sc, c, y, ky, 0, 1, 0);
    } else if (nt) gpuml__vaxpc_loop(x, kx, n, sc, c, y, ky, 1, 0, 0);
    else gpuml__vaxpc_loop(x, kx, n, sc, c, y, ky, 0, 0, 0);
}
/* fin: no x * sc + c is NaN (see gpuml__vaxpc_loop); 2: also x (f32) holds each full 16 elements from 0 in
   gpuml__v8x2_ldk_any's bf16 order (gpuml__exp_shift_body, fast, of a bf16 row), y bf16 */
GPUML__FN GPUML__F16C_TARGET void gpuml__vaxpc_k_avx2(const char *x, int kx, int64_t n, float sc, float c, char *y, int ky, int stream, int fin)
{
    /* the pairs the rows take: (kind, kind) and (0, kind) (the softmax's f32 exponentials out) */
#define GPUML__C(k) gpuml__vaxpc_body(x, k, n, sc, c, y, k, stream, fin)
#define GPUML__C0(k) gpuml__vaxpc_body(x, 0, n, sc, c, y, k, stream, fin)
    if (kx == ky) GPUML__K3(kx, GPUML__C);
    else if (kx == 0) GPUML__K3(ky, GPUML__C0);
    else gpuml__vaxpc_body(x, kx, n, sc, c, y, ky, stream, fin);
#undef GPUML__C
#undef GPUML__C0
}
/* log-softmax's output: y = (x + ch) + cl, the row's constant -max - log(sum) as two floats (one float
   lost log(sum) against a large max: rows at 1e4 were off by 9e-5 relative, at 1e10 by 100%; near the
   max x + ch is exact) */
GPUML__V8K_INLINE void gpuml__vlsm_body(const char *x, int k, int64_t n, float ch, float cl, char *y, int stream)
{
    const int64_t e = k ? 2 : 4;
    const int nt = stream && gpuml__v8_nt_ok(y, k);
    const __m256 vh = _mm256_set1_ps(ch), vl = _mm256_set1_ps(cl);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) gpuml__v8_stk(y + i * e, k, _mm256_add_ps(_mm256_add_ps(gpuml__v8_ldk(x + i * e, k), vh), vl), nt);
    for (; i < n; i++) GPUML__KST(k, y, i, (GPUML__KLD(k, x, i) + ch) + cl);
}
GPUML__FN GPUML__F16C_TARGET void gpuml__vlsm_k_avx2(const char *x, int k, int64_t n, float ch, float cl, char *y, int stream)
{
#define GPUML__C(kk) gpuml__vlsm_body(x, kk, n, ch, cl, y, stream)
    GPUML__K3(k, GPUML__C);
#undef GPUML__C
}
GPUML__FN void gpuml__vaxpc_avx2(const float *x, int64_t n, float sc, float c, float *y)
{
    gpuml__vaxpc_k_avx2((const char *)(const void *)x, 0, n, sc, c, (char *)(void *)y, 0, 0, 0);
}
#endif
/* ---- CPU vector math, AVX-512: the same functions 16 lanes wide, dense f32, bf16 or f16 in and out ----
   The reductions and polynomials are those of the AVX2 versions above (exp's evaluated by Horner
   to the end); 2^k is applied with vscalefps (no overflow split), reciprocals are rcp14 and one
   Newton step, sigmoid is built from exp(-|x|) (no division), the tails are masked.  exp still
   flushes below -87.3 (no subnormal results: those cost microcode assists on Intel), and so
   sigmoid(x) is 0 below x = -87.3 (true value < 1.2e-38).  bf16 is converted in registers: widened
   by one word permute into the upper halves, narrowed with the round-to-nearest-even of
   gpuml__f32_to_bf16 (NaN -> 0x7fff), bit for bit. */
#if GPUML__HAVE_AVX2_PATH
#if defined(__GNUC__) && !defined(__clang__)
/* g++ 12 takes the undefined operand inside GCC's own AVX-512 intrinsics for an uninitialized variable */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#define GPUML__V16_INLINE static __inline__ __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
GPUML__V16_INLINE __mmask16 gpuml__v16_mask(int64_t k) { return (__mmask16)(k >= 16 ? 0xffff : (1u << k) - 1u); }
/* 16 (masked: k) elements at p, f32 (bf = 0) or bf16 (bf = 1), as floats; lanes masked off are 0 */
/* The 16-lane helpers take the element type as bf: 0 f32, 1 bf16, 2 f16 (gpuml__v16_kind).  f16
   converts as gpuml__f16_ld_f16c / gpuml__f16_st_f16c do, bit for bit the scalar converters: a NaN
   loads as its sign and 0x7fc00000 and stores as 0x7fff (vcvtph2ps / vcvtps2ph keep the payload). */
#define gpuml__v16_kind(dt) ((dt) == GPUML_BF16 ? 1 : (dt) == GPUML_F16 ? 2 : 0)
GPUML__V16_INLINE __m512 gpuml__v16_ld(const char *p, int bf, __mmask16 m)
{
    /* bf16 word i to the upper half of lane i, the lower halves zeroed: one vpermw */
    const __m512i up = _mm512_set_epi16(15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0, 7, 0, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1, 0, 0, 0);
    if (bf == 2) {   /* NaN lanes: (v & sign) | 0x7fc00000, one vpternlogd */
        const __m512 v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
        return _mm512_castsi512_ps(_mm512_mask_ternarylogic_epi32(_mm512_castps_si512(v), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                                                  _mm512_set1_epi32((int)0x80000000u), _mm512_set1_epi32(0x7fc00000), 0xea));
    }
    if (bf) return _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(0xaaaaaaaau, up, _mm512_castsi256_si512(_mm256_maskz_loadu_epi16(m, p))));
    return _mm512_maskz_loadu_ps(m, p);
}
GPUML__V16_INLINE __m256i gpuml__v16_to_bf16(__m512 v)
{
    /* round to nearest even on the bits, then vpermw gathers the upper halves of the ordered lanes;
       NaN lanes (mask bit clear) take 0x7fff from the source operand instead: no NaN fix-up op */
    const __m512i q = _mm512_set1_epi32(0x7fff), odd = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                                        31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    __m512i x = _mm512_castps_si512(v);
    x = _mm512_add_epi32(_mm512_add_epi32(x, q), _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1)));
    return _mm512_castsi512_si256(_mm512_mask_permutexvar_epi16(_mm512_set1_epi16(0x7fff), (__mmask32)_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), odd, x));
}
/* stores the lanes of m; nt: a non-temporal store of all 16 (p aligned to 64 bytes for f32, 32 for bf16) */
GPUML__V16_INLINE void gpuml__v16_st(char *p, int bf, __m512 v, __mmask16 m, int nt)
{
    if (bf == 2) {   /* round to nearest even; NaN lanes 0x7fff */
        const __m256i h = _mm256_mask_mov_epi16(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                                _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm256_set1_epi16(0x7fff));
        if (nt) _mm256_stream_si256((__m256i *)(void *)p, h);
        else _mm256_mask_storeu_epi16(p, m, h);
    } else if (bf) {
        if (nt) _mm256_stream_si256((__m256i *)(void *)p, gpuml__v16_to_bf16(v));
        else _mm256_mask_storeu_epi16(p, m, gpuml__v16_to_bf16(v));
    } else {
        if (nt) _mm512_stream_ps((float *)(void *)p, v);
        else _mm512_mask_storeu_ps(p, m, v);
    }
}
/* whether a full vector at p may be stored non-temporally */
GPUML__V16_INLINE int gpuml__v16_nt_ok(const char *p, int bf) { return ((uintptr_t)p & (bf ? 31u : 63u)) == 0; }
/* e^r for |r| <= ln2/2: degree 6, p(0) = 1 exactly (fitted, relative error 2.0e-9; 7.2e-8 with the
   f32 Horner rounding) */
GPUML__V16_INLINE __m512 gpuml__v16_exp_poly(__m512 r)
{
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.3843653724e-03f), r, _mm512_set1_ps(8.3741554990e-03f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1668001562e-02f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666431725e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.9999994040e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}
/* exp(h + l), l a small correction (lo = 0: none): k = round(h log2e) as w - vreduceps(w) (one uop;
   vrndscaleps is two), r = h - k ln2 (two constants, the first step exact) + l, 2^k by vscalefps.  0 where
   h < -87.3 (results below FLT_MIN are flushed: subnormals cost microcode assists), NaN kept; h must be
   below 128 ln2 or the caller clamps it (reduce(inf) is 0). */
GPUML__V16_INLINE __m512 gpuml__v16_exp_hl(__m512 h, __m512 l, int lo)
{
    __m512 w = _mm512_mul_ps(h, _mm512_set1_ps(1.44269504088896341f)), k, r;
    k = _mm512_sub_ps(w, _mm512_reduce_ps(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), h);
    if (lo) r = _mm512_add_ps(r, l);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
    return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(h, _mm512_set1_ps(-87.3f), _CMP_NLT_UQ), gpuml__v16_exp_poly(r), k);
}
/* exp(v) for any v (~1 ulp): inf above 88.72 (2^k overflows), 0 below -87.3, NaN kept */
GPUML__V16_INLINE __m512 gpuml__v16_exp(__m512 v)
{
    return gpuml__v16_exp_hl(_mm512_min_ps(_mm512_set1_ps(100.0f), v), v, 0);   /* min(c, NaN) is NaN */
}
/* exp(v) for v <= 88 (the sigmoid's -|x|, the normal density): no clamp */
GPUML__V16_INLINE __m512 gpuml__v16_exp_small(__m512 v) { return gpuml__v16_exp_hl(v, v, 0); }
/* 2^z for z <= 127 (the softmax's x log2e - M log2e): f = z - floor(z) by vreduceps, 2^f by a degree-6
   polynomial on [0, 1] (relative error 2.0e-9 fitted, 6.4e-8 evaluated in f32), 2^floor(z) by
   vscalefps, which floors z itself; 0 below -126 (no subnormals), NaN kept */
GPUML__V16_INLINE __m512 gpuml__v16_exp2(__m512 z)
{
    __m512 f = _mm512_reduce_ps(z, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), p;
    p = _mm512_fmadd_ps(_mm512_set1_ps(2.1612916316e-04f), f, _mm512_set1_ps(1.2467845809e-03f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6754515544e-03f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5485282093e-02f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022930861e-01f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314706326e-01f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(z, _mm512_set1_ps(-126.0f), _CMP_NLT_UQ), p, z);
}
/* 1/d for normal d (NaN, 0 and inf excepted) to ~1 ulp */
GPUML__V16_INLINE __m512 gpuml__v16_rcp(__m512 d)
{
    __m512 t = _mm512_rcp14_ps(d);
    return _mm512_fmadd_ps(t, _mm512_fnmadd_ps(d, t, _mm512_set1_ps(1.0f)), t);
}
/* Phi(-a) = erfc(a / sqrt2) / 2 for a = |x| >= 0, to a few ulp wherever it is a normal float (a <= 13.2;
   0 beyond, NaN kept): with t = 1 / (1 + z/2), z = a / sqrt2, erfc(z) = t exp(P(t) - z^2), P of degree 9
   in t - 0.587 fitted on z in [0, 9.5] (absolute error 4.3e-8 in the exponent; centred, its Horner
   rounding is 1.4e-7 instead of 2.7e-7).  th = t/2 = 1/(2 + z) (so erfc/2 = th exp(...)); z^2 = a^2 / 2
   is taken exactly (a^2 split by an FMA) and the exponent P - a^2/2 (down to -87) is reduced on the
   exact a^2, so that the tail keeps its relative accuracy (the former z*z form lost up to ~80 ulp at
   x = -10). */
GPUML__V16_INLINE __m512 gpuml__v16_ncdf_neg(__m512 a)
{
    __m512 th, v, aa, al, p, u, s, w, k, r;
    a = _mm512_min_ps(_mm512_set1_ps(14.0f), a);   /* erfc(14 / sqrt2) ~ 1e-45: masked below; inf -> 14, NaN kept */
    th = gpuml__v16_rcp(_mm512_fmadd_ps(a, _mm512_set1_ps(0.70710678118654752f), _mm512_set1_ps(2.0f)));
    v = _mm512_fmsub_ps(th, _mm512_set1_ps(2.0f), _mm512_set1_ps(0.587f));
    aa = _mm512_mul_ps(a, a);
    al = _mm512_fmsub_ps(a, a, aa);
    p = _mm512_fmadd_ps(_mm512_set1_ps(1.3810324669e-01f), v, _mm512_set1_ps(8.6058013141e-02f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-2.4020382762e-01f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-4.9825441092e-02f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(2.9390516877e-01f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-2.9840882868e-02f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-4.0786331892e-01f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(8.6219258606e-02f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(1.3693856001e+00f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-5.5357551575e-01f));
    u = _mm512_fnmadd_ps(al, _mm512_set1_ps(0.5f), p);                 /* P - al/2 */
    s = _mm512_fnmadd_ps(aa, _mm512_set1_ps(0.5f), u);                 /* the exponent, rounded: for k */
    w = _mm512_mul_ps(s, _mm512_set1_ps(1.44269504088896341f));
    k = _mm512_sub_ps(w, _mm512_reduce_ps(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    r = _mm512_fnmsub_ps(k, _mm512_set1_ps(2.0f * 0.693359375f), aa);  /* -(2k ln2hi) - aa: exact */
    r = _mm512_fmadd_ps(r, _mm512_set1_ps(0.5f), u);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
    p = _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(s, _mm512_set1_ps(-87.3f), _CMP_NLT_UQ), gpuml__v16_exp_poly(r), k);
    return _mm512_mul_ps(th, p);
}
/* Phi(-a) to ~2e-5 relative, for results rounded to bf16 (half a bf16 ulp is 2e-3): the method of
   gpuml__v16_ncdf_neg with P of degree 5 (7.6e-6 in the exponent), e^r of degree 4 (2.8e-6), a^2 and
   the reduction in plain f32 (a^2/2 <= 98: 6e-6); 29 uops for gelu instead of 38 */
GPUML__V16_INLINE __m512 gpuml__v16_ncdf_neg_lowp(__m512 a)
{
    __m512 th, v, p, s, w, k, r;
    a = _mm512_min_ps(_mm512_set1_ps(14.0f), a);
    th = gpuml__v16_rcp(_mm512_fmadd_ps(a, _mm512_set1_ps(0.70710678118654752f), _mm512_set1_ps(2.0f)));
    v = _mm512_fmsub_ps(th, _mm512_set1_ps(2.0f), _mm512_set1_ps(0.587f));
    p = _mm512_fmadd_ps(_mm512_set1_ps(2.2879038751e-01f), v, _mm512_set1_ps(-3.7691295147e-02f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-4.0234649181e-01f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(8.6590431631e-02f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(1.3692661524e+00f));
    p = _mm512_fmadd_ps(p, v, _mm512_set1_ps(-5.5357813835e-01f));
    s = _mm512_fnmadd_ps(_mm512_mul_ps(a, a), _mm512_set1_ps(0.5f), p);
    w = _mm512_mul_ps(s, _mm512_set1_ps(1.44269504088896341f));
    k = _mm512_sub_ps(w, _mm512_reduce_ps(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.69314718055994531f), s);
    p = _mm512_fmadd_ps(_mm512_set1_ps(4.1513845325e-02f), r, _mm512_set1_ps(1.6787473857e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0003015995e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(9.9996685982e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(th, _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(s, _mm512_set1_ps(-87.3f), _CMP_NLT_UQ), p, k));
}
/* Phi(-a) for 0 <= a < 4 from tables: 32 intervals of 1/8, on interval j a polynomial of degree D in
   u = 8a - j - 1/2 in [-1/2, 1/2), fitted for relative error (weighted least squares on 400 Chebyshev
   points, coefficients rounded to f32): D = 5 within 5.7e-8 of erfc(a/sqrt2)/2, D = 3 within 1.7e-5 (for
   bf16 results).  Coefficient d of interval j is tab[d * 32 + j]; one vpermt2ps picks it from 32.  About
   14 uops (D = 5) where the erfc form (gpuml__v16_ncdf_neg) takes 34. */
static const float gpuml__ncdf_tab5[6 * 32] = {
    4.7508233786e-01f, 4.2563432455e-01f, 3.7733027339e-01f, 3.3087438345e-01f,
    2.8688770533e-01f, 2.4588385224e-01f, 2.0825240016e-01f, 1.7425070703e-01f,
    1.4400437474e-01f, 1.1751522869e-01f, 9.4675742090e-02f, 7.5287982821e-02f,
    5.9085123241e-02f, 4.5753624290e-02f, 3.4954488277e-02f, 2.6342127472e-02f,
    1.9580079243e-02f, 1.4353021979e-02f, 1.0375072248e-02f, 7.3946071789e-03f,
    5.1960796118e-03f, 3.5994551145e-03f, 2.4579011369e-03f, 1.6543508973e-03f,
    1.0974823963e-03f, 7.1754230885e-04f, 4.6233064495e-04f, 2.9355534934e-04f,
    1.8366995209e-04f, 1.1323404760e-04f, 6.8784116593e-05f, 4.1167466406e-05f,
    -4.9770481884e-02f, -4.8998862505e-02f, -4.7491326928e-02f, -4.5316539705e-02f,
    -4.2570948601e-02f, -3.9371691644e-02f, -3.5848334432e-02f, -3.2134238631e-02f,
    -2.8358366340e-02f, -2.4638175964e-02f, -2.1074147895e-02f, -1.7746211961e-02f,
    -1.4712125994e-02f, -1.2007687241e-02f, -9.6484478563e-03f, -7.6325507835e-03f,
    -5.9442361817e-03f, -4.5576039702e-03f, -3.4402601887e-03f, -2.5565843098e-03f,
    -1.8704369431e-03f, -1.3472251594e-03f, -9.5532572595e-04f, -6.6692486871e-04f,
    -4.5837028301e-04f, -3.1014884007e-04f, -2.0660368318e-04f, -1.3549400319e-04f,
    -8.7481501396e-05f, -5.5606626120e-05f, -3.4797736589e-05f, -2.1438263502e-05f,
    1.9441587210e-04f, 5.7420524536e-04f, 9.2756462982e-04f, 1.2391237542e-03f,
    1.4966345625e-03f, 1.6917519970e-03f, 1.8204228254e-03f, 1.8828652101e-03f,
    1.8831725465e-03f, 1.8286143895e-03f, 1.7287386581e-03f, 1.5943862963e-03f,
    1.4367311960e-03f, 1.2664359529e-03f, 1.0929884156e-03f, 9.2425436014e-04f,
    7.6624937356e-04f, 6.2311009970e-04f, 4.9722520635e-04f, 3.8947971188e-04f,
    2.9956223443e-04f, 2.2629175510e-04f, 1.6792835959e-04f, 1.2244321988e-04f,
    8.7734923000e-05f, 6.1787439336e-05f, 4.2773390305e-05f, 2.9110013202e-05f,
    1.9478280592e-05f, 1.2815569789e-05f, 8.2916321844e-06f, 5.2758105085e-06f,
    1.2910430087e-04f, 1.2311516912e-04f, 1.1159759742e-04f, 9.5423551102e-05f,
    7.5784395449e-05f, 5.4068721511e-05f, 3.1726063753e-05f, 1.0133431715e-05f,
    -9.5197419796e-06f, -2.6316418371e-05f, -3.9659789763e-05f, -4.9282967666e-05f,
    -5.5224307289e-05f, -5.7776192989e-05f, -5.7417157223e-05f, -5.4737778555e-05f,
    -5.0369708333e-05f, -4.4925069233e-05f, -3.8950664020e-05f, -3.2898726204e-05f,
    -2.7113557735e-05f, -2.1831554477e-05f, -1.7191277948e-05f, -1.3249765288e-05f,
    -1.0001681403e-05f, -7.3984811024e-06f, -5.3656053751e-06f, -3.8165703700e-06f,
    -2.6635054837e-06f, -1.8242628812e-06f, -1.2265519445e-06f, -8.0974240291e-07f,
    -7.5770952890e-07f, -2.2145673029e-06f, -3.5020468658e-06f, -4.5273736760e-06f,
    -5.2250961744e-06f, -5.5627274378e-06f, -5.5421451179e-06f, -5.1968336265e-06f,
    -4.5856254474e-06f, -3.7840900404e-06f, -2.8749257126e-06f, -1.9387264274e-06f,
    -1.0462449609e-06f, -2.5294082207e-07f, 4.0386518663e-07f, 9.0531148089e-07f,
    1.2492114365e-06f, 1.4467966594e-06f, 1.5186931250e-06f, 1.4907891455e-06f,
    1.3905205378e-06f, 1.2439179500e-06f, 1.0735731166e-06f, 8.9752182930e-07f,
    7.2891850778e-07f, 5.7631206118e-07f, 4.4431152446e-07f, 3.3444308656e-07f,
    2.4603940574e-07f, 1.7705002620e-07f, 1.2470812294e-07f, 8.6030247815e-08f,
    -3.0113511684e-07f, -2.7786111900e-07f, -2.3386502335e-07f, -1.7379473150e-07f,
    -1.0382411375e-07f, -3.0835863640e-08f, 3.8434897931e-08f, 9.8189687492e-08f,
    1.4416458782e-07f, 1.7397836416e-07f, 1.8715944350e-07f, 1.8498154475e-07f,
    1.7004964548e-07f, 1.4580233199e-07f, 1.1598167760e-07f, 8.4164746283e-08f,
    5.3396369992e-08f, 2.5969232098e-08f, 3.3385296749e-09f, -1.3840323554e-08f,
    -2.5586968988e-08f, -3.2421194618e-08f, -3.5174135604e-08f, -3.4814846117e-08f,
    -3.2309056763e-08f, -2.8520457107e-08f, -2.4153932188e-08f, -1.9734796908e-08f,
    -1.5615443161e-08f, -1.1999238048e-08f, -8.9728322550e-09f, -6.5399632376e-09f,
};
static const float gpuml__ncdf_tab3[4 * 32] = {
    4.7508233786e-01f, 4.2563432455e-01f, 3.7733030319e-01f, 3.3087441325e-01f,
    2.8688773513e-01f, 2.4588389695e-01f, 2.0825242996e-01f, 1.7425075173e-01f,
    1.4400441945e-01f, 1.1751525849e-01f, 9.4675764441e-02f, 7.5288005173e-02f,
    5.9085130692e-02f, 4.5753628016e-02f, 3.4954484552e-02f, 2.6342120022e-02f,
    1.9580069929e-02f, 1.4353010803e-02f, 1.0375061072e-02f, 7.3945955373e-03f,
    5.1960689016e-03f, 3.5994455684e-03f, 2.4578929879e-03f, 1.6543440288e-03f,
    1.0974768084e-03f, 7.1753788507e-04f, 4.6232723980e-04f, 2.9355281731e-04f,
    1.8366808945e-04f, 1.1323270155e-04f, 6.8783170718e-05f, 4.1166815208e-05f,
    -4.9770474434e-02f, -4.8998851329e-02f, -4.7491312027e-02f, -4.5316521078e-02f,
    -4.2570929974e-02f, -3.9371669292e-02f, -3.5848312080e-02f, -3.2134216279e-02f,
    -2.8358347714e-02f, -2.4638159201e-02f, -2.1074136719e-02f, -1.7746204510e-02f,
    -1.4712123200e-02f, -1.2007689103e-02f, -9.6484525129e-03f, -7.6325582340e-03f,
    -5.9442464262e-03f, -4.5576156117e-03f, -3.4402720630e-03f, -2.5565959513e-03f,
    -1.8704482354e-03f, -1.3472355204e-03f, -9.5533480635e-04f, -6.6693261033e-04f,
    -4.5837677317e-04f, -3.1015410786e-04f, -2.0660784503e-04f, -1.3549721916e-04f,
    -8.7483931566e-05f, -5.5608416005e-05f, -3.4799031710e-05f, -2.1439180273e-05f,
    1.9422647892e-04f, 5.7365169050e-04f, 9.2668941943e-04f, 1.2379923137e-03f,
    1.4953288483e-03f, 1.6903621145e-03f, 1.8190382980e-03f, 1.8815671792e-03f,
    1.8820272526e-03f, 1.8276695628e-03f, 1.7280209577e-03f, 1.5939023579e-03f,
    1.4364700764e-03f, 1.2663728558e-03f, 1.0930892313e-03f, 9.2448014766e-04f,
    7.6656084275e-04f, 6.2347075436e-04f, 4.9760367256e-04f, 3.8985110587e-04f,
    2.9990851181e-04f, 2.2660144896e-04f, 1.6819554730e-04f, 1.2266651902e-04f,
    8.7916196208e-05f, 6.1930717493e-05f, 4.2883802962e-05f, 2.9193088267e-05f,
    1.9539369532e-05f, 1.2859510207e-05f, 8.3225677372e-06f, 5.2971413425e-06f,
    1.2900024012e-04f, 1.2299642549e-04f, 1.1146937322e-04f, 9.5291688922e-05f,
    7.5654999819e-05f, 5.3947729612e-05f, 3.1618827052e-05f, 1.0044345800e-05f,
    -9.5875229817e-06f, -2.6361154596e-05f, -3.9681217459e-05f, -4.9282196414e-05f,
    -5.5203639931e-05f, -5.7738841861e-05f, -5.7366902183e-05f, -5.4678625020e-05f,
    -5.0305574405e-05f, -4.4859505579e-05f, -3.8886668335e-05f, -3.2838637708e-05f,
    -2.7059011700e-05f, -2.1783525881e-05f, -1.7150154235e-05f, -1.3215462786e-05f,
    -9.9737690107e-06f, -7.3762989814e-06f, -5.3483736338e-06f, -3.8034754652e-06f,
    -2.6537654776e-06f, -1.8171676857e-06f, -1.2214882190e-06f, -8.0620026210e-07f,
};
GPUML__V16_INLINE __m512 gpuml__v16_ncdf_neg_tab(__m512 a, const float *tab, int deg)
{
    const __m512 s = _mm512_mul_ps(a, _mm512_set1_ps(8.0f));
    const __m512i j = _mm512_cvttps_epi32(s);
    const __m512 u = _mm512_sub_ps(_mm512_reduce_ps(s, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), _mm512_set1_ps(0.5f));
    __m512 p = _mm512_permutex2var_ps(_mm512_loadu_ps(tab + 32 * deg), j, _mm512_loadu_ps(tab + 32 * deg + 16));
    int d;
    for (d = deg - 1; d >= 0; d--)
        p = _mm512_fmadd_ps(p, u, _mm512_permutex2var_ps(_mm512_loadu_ps(tab + 32 * d), j, _mm512_loadu_ps(tab + 32 * d + 16)));
    return p;
}
/* Phi(-a) for a = |x|: the table where every lane has a < 4 (NaN, inf and the tails take the erfc form) */
GPUML__V16_INLINE __m512 gpuml__v16_ncdf_neg_fast(__m512 a, int lowp)
{
    if (_mm512_cmp_ps_mask(a, _mm512_set1_ps(4.0f), _CMP_LT_OQ) == 0xffff)
        return lowp ? gpuml__v16_ncdf_neg_tab(a, gpuml__ncdf_tab3, 3) : gpuml__v16_ncdf_neg_tab(a, gpuml__ncdf_tab5, 5);
    return lowp ? gpuml__v16_ncdf_neg_lowp(a) : gpuml__v16_ncdf_neg(a);
}
/* Phi(x), the normal CDF; *pdf (if not NULL) gets exp(-x*x/2)/sqrt(2 pi) */
GPUML__V16_INLINE __m512 gpuml__v16_ncdf(__m512 x, __m512 *pdf)
{
    __m512 q = gpuml__v16_ncdf_neg_fast(_mm512_abs_ps(x), 0);
    if (pdf) *pdf = _mm512_mul_ps(_mm512_set1_ps(0.39894228040143268f), gpuml__v16_exp_small(_mm512_mul_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(-0.5f))));
    return _mm512_mask_sub_ps(q, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), _mm512_set1_ps(1.0f), q);
}
/* sigmoid from e = exp(-|x|) in (0, 1]: 1/(1+e) for x >= 0, e/(1+e) below (no overflow, no division) */
GPUML__V16_INLINE __m512 gpuml__v16_sigmoid(__m512 x)
{
    __m512 e = gpuml__v16_exp_small(_mm512_or_ps(x, _mm512_set1_ps(-0.0f)));
    __m512 r = gpuml__v16_rcp(_mm512_add_ps(_mm512_set1_ps(1.0f), e));
    return _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), r, e);
}
/* the ops of gpuml__ew_avx512 (gelu into bf16: GPUML__EW16_GELU_BF16, with the op codes above) */
GPUML__FN int gpuml__ew_avx512_has(int op)
{
    switch (op) {
    case GPUML_BINARY_ADD: case GPUML_BINARY_SUB: case GPUML_BINARY_MUL: case GPUML_BINARY_DIV:
    case GPUML_BINARY_MAXIMUM: case GPUML_BINARY_MINIMUM:
    case GPUML__EW_UNARY + GPUML_UNARY_NEG: case GPUML__EW_UNARY + GPUML_UNARY_ABS: case GPUML__EW_UNARY + GPUML_UNARY_RELU:
    case GPUML__EW_UNARY + GPUML_UNARY_EXP: case GPUML__EW_UNARY + GPUML_UNARY_SIGMOID: case GPUML__EW_UNARY + GPUML_UNARY_GELU:
    case GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH: case GPUML__EW_UNARY + GPUML_UNARY_SILU: case GPUML__EW_GELU_GRAD:
    case GPUML__EW_GELU_TANH_GRAD: case GPUML__EW_SILU_GRAD: return 1;
    default: return 0;
    }
}
GPUML__V16_INLINE __m512 gpuml__v16_ew(int op, __m512 x, __m512 y)
{
    const __m512 one = _mm512_set1_ps(1.0f), k0 = _mm512_set1_ps(0.79788456080286536f), k1 = _mm512_set1_ps(0.044715f);
    __m512 s, u, pdf, q, x2;
    switch (op) {
    case GPUML_BINARY_ADD: return _mm512_add_ps(x, y);
    case GPUML_BINARY_SUB: return _mm512_sub_ps(x, y);
    case GPUML_BINARY_MUL: return _mm512_mul_ps(x, y);
    case GPUML_BINARY_DIV: return _mm512_div_ps(x, y);
    case GPUML_BINARY_MAXIMUM: case GPUML_BINARY_MINIMUM:   /* NaN in either propagates (as x + y) */
        s = op == GPUML_BINARY_MAXIMUM ? _mm512_max_ps(x, y) : _mm512_min_ps(x, y);
        return _mm512_mask_add_ps(s, _mm512_cmp_ps_mask(x, y, _CMP_UNORD_Q), x, y);
    case GPUML__EW_UNARY + GPUML_UNARY_NEG: return _mm512_xor_ps(x, _mm512_set1_ps(-0.0f));
    case GPUML__EW_UNARY + GPUML_UNARY_ABS: return _mm512_abs_ps(x);
    case GPUML__EW_UNARY + GPUML_UNARY_RELU: return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
    case GPUML__EW_UNARY + GPUML_UNARY_EXP: return gpuml__v16_exp(x);
    case GPUML__EW_UNARY + GPUML_UNARY_SIGMOID: return gpuml__v16_sigmoid(x);
    case GPUML__EW_UNARY + GPUML_UNARY_SILU: return _mm512_mul_ps(x, gpuml__v16_sigmoid(x));
    case GPUML__EW_UNARY + GPUML_UNARY_GELU: return _mm512_mul_ps(x, gpuml__v16_ncdf(x, NULL));
    case GPUML__EW16_GELU_BF16:   /* gelu into bf16 */
        s = gpuml__v16_ncdf_neg_fast(_mm512_abs_ps(x), 1);
        return _mm512_mul_ps(x, _mm512_mask_sub_ps(s, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), one, s));
    case GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH:
        u = _mm512_mul_ps(k0, _mm512_fmadd_ps(_mm512_mul_ps(k1, x), _mm512_mul_ps(x, x), x));
        return _mm512_mul_ps(x, gpuml__v16_sigmoid(_mm512_add_ps(u, u)));
    case GPUML__EW_GELU_GRAD:   /* x = dy, y = the input */
        s = gpuml__v16_ncdf(y, &pdf);
        return _mm512_mul_ps(x, _mm512_fmadd_ps(y, pdf, s));
    case GPUML__EW_GELU_TANH_GRAD:
        x2 = _mm512_mul_ps(y, y);
        u = _mm512_mul_ps(k0, _mm512_fmadd_ps(_mm512_mul_ps(k1, y), x2, y));
        s = gpuml__v16_sigmoid(_mm512_add_ps(u, u));
        q = _mm512_mul_ps(_mm512_mul_ps(s, _mm512_sub_ps(one, s)), _mm512_mul_ps(_mm512_add_ps(y, y), k0));
        q = _mm512_mul_ps(q, _mm512_fmadd_ps(_mm512_set1_ps(3.0f * 0.044715f), x2, one));
        return _mm512_mul_ps(x, _mm512_add_ps(s, q));
    case GPUML__EW_SILU_GRAD:
        s = gpuml__v16_sigmoid(y);
        return _mm512_mul_ps(_mm512_mul_ps(x, s), _mm512_fmadd_ps(y, _mm512_sub_ps(one, s), one));
    default: return x;
    }
}
/* o[i] = op(a[i], b[i]) over n dense elements, each operand f32, bf16 or f16 (the *b flags: gpuml__v16_kind); b may be
   NULL.  stream: non-temporal stores once o is aligned (the caller's output is far larger than
   the caches), not fenced here: gpuml__xforeach_task fences once after its rows (a fence a
   call, on rows of 64 elements, took an f32 broadcast add to 8x a plain add's time).  The loop
   is inlined once per op so that the op's switch folds away. */
GPUML__V16_INLINE void gpuml__ew_avx512_loop(int op, int64_t n, char *o, int bo, const char *a, int ba, const char *b, int bb, int stream)
{
    const int64_t eo = bo ? 2 : 4, ea = ba ? 2 : 4, eb = bb ? 2 : 4;
    int64_t i = 0, h = 0;
    if (stream) {   /* a first short vector up to the alignment of o */
        const uintptr_t al = bo ? 32 : 64, ad = (uintptr_t)o;
        if (ad % (uintptr_t)eo) stream = 0;
        else h = (int64_t)(((al - ad % al) % al) / (uintptr_t)eo);
    }
    if (h > 0 && h < n) {
        __mmask16 m = gpuml__v16_mask(h);
        __m512 x = gpuml__v16_ld(a, ba, m), y = b ? gpuml__v16_ld(b, bb, m) : x;
        gpuml__v16_st(o, bo, gpuml__v16_ew(op, x, y), m, 0);
        i = h;
    }
    for (; i + 16 <= n; i += 16) {
        __m512 x, y;
        if (GPUML__EW_HEAVY(op)) {
            _mm_prefetch(a + i * ea + GPUML__EW_PF, _MM_HINT_T0);
            if (b) _mm_prefetch(b + i * eb + GPUML__EW_PF, _MM_HINT_T0);
        }
        x = gpuml__v16_ld(a + i * ea, ba, 0xffff); y = b ? gpuml__v16_ld(b + i * eb, bb, 0xffff) : x;
        gpuml__v16_st(o + i * eo, bo, gpuml__v16_ew(op, x, y), 0xffff, stream);
    }
    if (i < n) {
        __mmask16 m = gpuml__v16_mask(n - i);
        __m512 x = gpuml__v16_ld(a + i * ea, ba, m), y = b ? gpuml__v16_ld(b + i * eb, bb, m) : x;
        gpuml__v16_st(o + i * eo, bo, gpuml__v16_ew(op, x, y), m, 0);
    }
}
/* gelu from bf16 into bf16 (f16 = 0) or from f16 into f16 (f16 = 1), the loop of gpuml__ew_avx512
   made for them: a vector whose lanes all have |x| < 4 takes Phi(-|x|) from the table rebased (once a
   call) to f = frac(8|x|) (degree 3 for bf16 results, 1.7e-5; degree 5 for f16's 11 bits, 5.7e-8), gelu =
   max(0, x) - |x| Phi(-|x|) in one FMA (x Phi(x) for either sign; -0 stays -0), and round-to-
   nearest-even to the 16-bit type without the NaN lane fix-ups of load and store (no NaN can occur
   there); other vectors (the tails, inf, NaN) and the partial ones take the generic gelu
   (gpuml__v16_ew).  bf16: 23 vector ops for 16 elements against the generic loop's 33; f16 0.95-0.99
   -> 0.75-0.80 TSC cycles an element in L1 (bench/cpu_ops_cycles.c, bench/NOTES_ops.md): the op is
   compute-bound on a 2-core AVX-512 VM */
GPUML__V16_INLINE void gpuml__gelu16_avx512(int64_t n, char *o, const char *a, int stream, const int f16)
{
    const int deg = f16 ? 5 : 3, gop = f16 ? GPUML__EW_UNARY + GPUML_UNARY_GELU : GPUML__EW16_GELU_BF16, kind = f16 ? 2 : 1;
    const float *t = f16 ? gpuml__ncdf_tab5 : gpuml__ncdf_tab3;
    __m512 bl[6], bh[6];
    const __m512 four = _mm512_set1_ps(4.0f), eight = _mm512_set1_ps(8.0f), zero = _mm512_setzero_ps();
    const __m512i r7f = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
    const __m512i odd = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    int64_t i = 0, hd = 0;
    int d;
    /* the table rebased from u = f - 1/2 to f (once a call, in f32): b_k = sum over e >= k of c_e C(e, k) (-1/2)^(e - k) */
    for (d = 0; d <= deg; d++) {
        float bin = 1.0f, hp = 1.0f;   /* C(e, d), (-1/2)^(e - d) */
        int e;
        bl[d] = _mm512_setzero_ps(); bh[d] = _mm512_setzero_ps();
        for (e = d; e <= deg; e++) {
            const __m512 c = _mm512_set1_ps(bin * hp);
            bl[d] = _mm512_fmadd_ps(c, _mm512_loadu_ps(t + 32 * e), bl[d]);
            bh[d] = _mm512_fmadd_ps(c, _mm512_loadu_ps(t + 32 * e + 16), bh[d]);
            bin = bin * (float)(e + 1) / (float)(e + 1 - d);
            hp *= -0.5f;
        }
    }
    if (stream) {   /* a first short vector up to o's 32-byte alignment */
        const uintptr_t ad = (uintptr_t)o;
        if (ad % 2u) stream = 0;
        else hd = (int64_t)(((32u - ad % 32u) % 32u) / 2u);
    }
    if (hd > 0 && hd < n) {   /* the partial vectors (this one and the tail) by the generic loop */
        gpuml__ew_avx512_loop(gop, hd, o, kind, a, kind, NULL, 0, 0);
        i = hd;
    }
    for (; i + 16 <= n; i += 16) {
        _mm_prefetch(a + 2 * i + GPUML__EW_PF, _MM_HINT_T0);
        const __m512 x = f16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(a + 2 * i))) : gpuml__v16_ld(a + 2 * i, 1, 0xffff);
        const __m512 ax = _mm512_abs_ps(x);
        __m256i r;
        if (_mm512_cmp_ps_mask(ax, four, _CMP_LT_OQ) == 0xffff) {
            const __m512 sc = _mm512_mul_ps(ax, eight);
            const __m512i j = _mm512_cvttps_epi32(sc);
            const __m512 f = _mm512_reduce_ps(sc, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
            __m512 q = _mm512_permutex2var_ps(bl[deg], j, bh[deg]), g;
            for (d = deg - 1; d >= 0; d--) q = _mm512_fmadd_ps(q, f, _mm512_permutex2var_ps(bl[d], j, bh[d]));
            g = _mm512_fnmadd_ps(ax, q, _mm512_max_ps(zero, x));
            if (f16) {
                r = _mm512_cvtps_ph(g, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            } else {
                __m512i gi = _mm512_castps_si512(g);
                gi = _mm512_add_epi32(_mm512_add_epi32(gi, r7f), _mm512_and_si512(_mm512_srli_epi32(gi, 16), one));
                r = _mm512_castsi512_si256(_mm512_permutexvar_epi16(odd, gi));
            }
        } else if (f16) {   /* NaN lanes canonical on load and store: as the generic loop */
            const __m512 xc = gpuml__v16_ld(a + 2 * i, 2, 0xffff);
            gpuml__v16_st(o + 2 * i, 2, gpuml__v16_ew(gop, xc, xc), 0xffff, stream);
            continue;
        } else {
            r = gpuml__v16_to_bf16(gpuml__v16_ew(gop, x, x));
        }
        if (stream) _mm256_stream_si256((__m256i *)(void *)(o + 2 * i), r);
        else _mm256_storeu_si256((__m256i *)(void *)(o + 2 * i), r);
    }
    if (i < n) gpuml__ew_avx512_loop(gop, n - i, o + 2 * i, kind, a + 2 * i, kind, NULL, 0, 0);
}
GPUML__FN GPUML__AVX512_TARGET void gpuml__ew_avx512(int op, int64_t n, char *o, int bo, const char *a, int ba, const char *b, int bb,
                                                    int stream)
{
    int f32 = !bo && !ba && !bb;   /* all f32: a copy of the loop without the dtype branches */
    if (op == GPUML__EW_UNARY + GPUML_UNARY_GELU && bo == 1) {   /* into bf16 (f16 results need the degree-5 table) */
        if (ba == 1 && !gpuml__gelu_bf16_generic) gpuml__gelu16_avx512(n, o, a, stream, 0);
        else gpuml__ew_avx512_loop(GPUML__EW16_GELU_BF16, n, o, 1, a, ba, NULL, 0, stream);
        return;
    }
    if (op == GPUML__EW_UNARY + GPUML_UNARY_GELU && bo == 2 && ba == 2 && !gpuml__gelu_bf16_generic) {   /* f16 into f16 */
        gpuml__gelu16_avx512(n, o, a, stream, 1);
        return;
    }
    switch (op) {
#define GPUML__EW16(OP) case OP: \
        if (f32) gpuml__ew_avx512_loop(OP, n, o, 0, a, 0, b, 0, stream); else gpuml__ew_avx512_loop(OP, n, o, bo, a, ba, b, bb, stream); break;
    GPUML__EW16(GPUML_BINARY_ADD) GPUML__EW16(GPUML_BINARY_SUB) GPUML__EW16(GPUML_BINARY_MUL) GPUML__EW16(GPUML_BINARY_DIV)
    GPUML__EW16(GPUML_BINARY_MAXIMUM) GPUML__EW16(GPUML_BINARY_MINIMUM)
    GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_NEG) GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_ABS)
    GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_RELU) GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_EXP)
    GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_SIGMOID) GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_GELU)
    GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_GELU_TANH) GPUML__EW16(GPUML__EW_UNARY + GPUML_UNARY_SILU)
    GPUML__EW16(GPUML__EW_GELU_GRAD) GPUML__EW16(GPUML__EW_GELU_TANH_GRAD) GPUML__EW16(GPUML__EW_SILU_GRAD)
#undef GPUML__EW16
    default: break;
    }
}
/* sum of n dense f32 / bf16 / f16 values (bf: gpuml__v16_kind): f32 partial sums over blocks of 512 (8 adds per lane), the
   blocks added in double.  bf16 needs no widening: the even elements of 32 are the 32-bit lanes
   shifted left by 16, the odd ones the lanes with the low 16 bits cleared. */
GPUML__FN GPUML__AVX512_TARGET double gpuml__vsum_avx512(const char *x, int bf, int64_t n)
{
    const __m512i hi16 = _mm512_set1_epi32((int)0xffff0000u);
    __m512d d0 = _mm512_setzero_pd(), d1 = d0;
    int64_t b0, i;
    for (b0 = 0; b0 < n; b0 += 512) {
        const int64_t b1 = GPUML__MIN(b0 + 512, n);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        if (bf == 2) {   /* f16: vcvtph2ps, NaNs left as converted (a sum holding one is a NaN either way) */
            for (i = b0; i + 64 <= b1; i += 64) {
                a0 = _mm512_add_ps(a0, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + 2 * i))));
                a1 = _mm512_add_ps(a1, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + 2 * i + 32))));
                a2 = _mm512_add_ps(a2, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + 2 * i + 64))));
                a3 = _mm512_add_ps(a3, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + 2 * i + 96))));
            }
            for (; i < b1; i += 16) a0 = _mm512_add_ps(a0, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(gpuml__v16_mask(b1 - i), x + 2 * i)));
        } else if (bf) {   /* whole steps of 64 with plain loads (the masks computed each step cost 2x in time), then one masked step */
            for (i = b0; i < b1; i += 64) {
                int64_t k = b1 - i;
                __m512i u, v;
                if (k >= 64) {
                    u = _mm512_loadu_si512((const void *)(x + 2 * i));
                    v = _mm512_loadu_si512((const void *)(x + 2 * i + 64));
                } else {
                    u = _mm512_maskz_loadu_epi16(k >= 32 ? 0xffffffffu : (__mmask32)((1ull << k) - 1), x + 2 * i);
                    v = _mm512_maskz_loadu_epi16(k <= 32 ? 0 : (__mmask32)((1ull << (k - 32)) - 1), x + 2 * i + 64);
                }
                a0 = _mm512_add_ps(a0, _mm512_castsi512_ps(_mm512_slli_epi32(u, 16)));
                a1 = _mm512_add_ps(a1, _mm512_castsi512_ps(_mm512_and_si512(u, hi16)));
                a2 = _mm512_add_ps(a2, _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)));
                a3 = _mm512_add_ps(a3, _mm512_castsi512_ps(_mm512_and_si512(v, hi16)));
            }
        } else {
            const float *f = (const float *)(const void *)x;
            for (i = b0; i + 64 <= b1; i += 64) {
                a0 = _mm512_add_ps(a0, _mm512_loadu_ps(f + i));
                a1 = _mm512_add_ps(a1, _mm512_loadu_ps(f + i + 16));
                a2 = _mm512_add_ps(a2, _mm512_loadu_ps(f + i + 32));
                a3 = _mm512_add_ps(a3, _mm512_loadu_ps(f + i + 48));
            }
            for (; i < b1; i += 16) a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(gpuml__v16_mask(b1 - i), f + i));
        }
        a0 = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
        d0 = _mm512_add_pd(d0, _mm512_cvtps_pd(_mm512_castps512_ps256(a0)));
        d1 = _mm512_add_pd(d1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a0), 1))));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(d0, d1));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
#if GPUML__HAVE_AVX2_PATH
GPUML__FN GPUML__AVX2_TARGET void gpuml__cpu_ew_avx2(int op, int64_t n, float *o, const float *a, const float *b, const float *c,
                                                    float s0, float s1)
{
    (void)c; (void)s0; (void)s1;
    if (gpuml__cpu_ew_math_avx2(op, n, o, a, b)) return;
    GPUML__EW_BODY
}
#endif
GPUML__FN void gpuml__cpu_ew(int op, int64_t n, float *o, const float *a, const float *b, const float *c, float s0, float s1)
{
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 1) { gpuml__cpu_ew_avx2(op, n, o, a, b, c, s0, s1); return; }
#endif
    gpuml__cpu_ew_plain(op, n, o, a, b, c, s0, s1);
}

/* an elementwise job: out = f(in...) with op code, number of inputs and scalar mode */
typedef struct gpuml__ew {
    int op, nin, scal;
    float s0, s1;
    gpuml_dtype dt[4];
    int stream;   /* CPU: a dense f32 output far larger than the caches: non-temporal stores */
} gpuml__ew;

#if GPUML__HAVE_AVX2_PATH
/* dst[0..n) = src[0..n) with non-temporal stores where dst is 32-byte aligned: the output's
   lines are not read for ownership first, so a large elementwise output costs one memory
   stream instead of two.  Callers fence (_mm_sfence) before the data goes to another thread. */
GPUML__FN GPUML__AVX2_TARGET void gpuml__stream_f32(float *dst, const float *src, int64_t n)
{
    int64_t i = 0;
    while (i < n && ((uintptr_t)(dst + i) & 31) != 0) { dst[i] = src[i]; i++; }
    for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
    for (; i < n; i++) dst[i] = src[i];
}
#endif
/* outputs at least this large (bytes) are streamed past the caches on the CPU */
#ifndef GPUML__STREAM_BYTES
#define GPUML__STREAM_BYTES ((int64_t)16 << 20)
#endif

/* the paths of gpuml__ew_row that convert in registers, no tile buffers (0: the tiles): 2, AVX-512 on
   dense f32 / bf16 / f16 operands; 1, AVX2 for binary ops with bf16 among dense f32 / bf16 operands
   and for gelu with a 16-bit operand (gpuml__gelu_avx2: its tables stay in memory); all-f32 jobs stay
   on the tiles, which stream large outputs; so do the other activations, whose constants leave no ymm
   registers for the conversions: 10% slower in registers */
GPUML__FN int gpuml__ew_direct(const gpuml__ew *e, const int64_t *step)
{
#if GPUML__HAVE_AVX2_PATH
    int k, ok = 1, bf = 0, f16 = 0;
    if (e->scal) return 0;
    for (k = 0; k <= e->nin; k++) {
        ok &= (e->dt[k] == GPUML_F32 || e->dt[k] == GPUML_BF16 || e->dt[k] == GPUML_F16) && step[k] == (int64_t)gpuml__dtype_sizes[e->dt[k]];
        bf |= e->dt[k] == GPUML_BF16;
        f16 |= e->dt[k] == GPUML_F16;
    }
    if (!ok) return 0;
    if (gpuml__cpu_simd() >= 2 && gpuml__ew_avx512_has(e->op)) return 2;   /* f16 too (gpuml__v16_ld / st) */
    if (gpuml__cpu_simd() == 1 && e->op < GPUML__EW_UNARY && e->nin > 1 && gpuml__ew_avx2_has(e->op) && bf && !f16) return 1;
    if (gpuml__cpu_simd() == 1 && e->op == GPUML__EW_UNARY + GPUML_UNARY_GELU && (bf || f16) && (!f16 || gpuml__cpu_has_f16c())) return 1;
    return 0;
#else
    (void)e; (void)step;
    return 0;
#endif
}
/* o[0..n) = op on one tile of f32 inputs in[0..nin) (sc: the scalar operand's tile, where e->scal
   says which side it takes), by the AVX-512 math where the op has it, else the portable loop */
GPUML__FN void gpuml__ew_tile(const gpuml__ew *e, int64_t n, float *o, const float *const *in_, const float *sc)
{
    const float *in[3];
    in[0] = in_[0]; in[1] = in_[1]; in[2] = in_[2];
    if (e->scal == 1) in[1] = sc;
    if (e->scal == 2) { in[1] = in[0]; in[0] = sc; }
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2 && !e->scal && gpuml__ew_avx512_has(e->op)) {
        gpuml__ew_avx512(e->op, n, (char *)o, 0, (const char *)in[0], 0, e->nin > 1 ? (const char *)in[1] : NULL, 0, 0);
        return;
    }
#endif
    gpuml__cpu_ew(e->op, n, o, in[0], in[1], in[2], e->s0, e->s1);
}
GPUML__FN void gpuml__ew_row(void *arg, char **p, const int64_t *step, int64_t count)
{
    const gpuml__ew *e = (const gpuml__ew *)arg;
    float buf[4][GPUML__TILE], sc[GPUML__TILE];
    int64_t done, i;
    int stream = e->stream && e->dt[0] == GPUML_F32 && step[0] == 4 && gpuml__cpu_simd() >= 1;
#if GPUML__HAVE_AVX2_PATH
    switch (gpuml__ew_direct(e, step)) {
    case 2:
        gpuml__ew_avx512(e->op, count, p[0], gpuml__v16_kind(e->dt[0]), p[1], gpuml__v16_kind(e->dt[1]), e->nin > 1 ? p[2] : NULL,
                         e->nin > 1 ? gpuml__v16_kind(e->dt[2]) : 0, e->stream);
        return;
    case 1:
        if (e->op == GPUML__EW_UNARY + GPUML_UNARY_GELU)
            gpuml__gelu_avx2(count, p[0], gpuml__v16_kind(e->dt[0]), p[1], gpuml__v16_kind(e->dt[1]), e->stream);
        else gpuml__ew_avx2(e->op, count, p[0], e->dt[0] == GPUML_BF16, p[1], e->dt[1] == GPUML_BF16, e->nin > 1 ? p[2] : NULL,
                            e->nin > 1 && e->dt[2] == GPUML_BF16);
        return;
    }
#endif
    /* the tiles below hold f32: the AVX-512 math runs on them too (f16 and strided operands; the scalar
       loop took an f16 gelu on the CPU to 5x the time of the bf16 one) */
    if (e->scal) for (i = 0; i < GPUML__TILE; i++) sc[i] = e->s0;
    for (done = 0; done < count; done += GPUML__TILE) {
        int64_t n = GPUML__MIN((int64_t)GPUML__TILE, count - done);
        const float *in[3] = {NULL, NULL, NULL};
        float *o;
        int k;
        for (k = 0; k < e->nin; k++) in[k] = gpuml__cpu_ld(e->dt[k + 1], p[k + 1] + done * step[k + 1], step[k + 1], n, buf[k + 1]);
        o = (e->dt[0] == GPUML_F32 && step[0] == 4 && !stream) ? (float *)(void *)(p[0] + done * 4) : buf[0];
        gpuml__ew_tile(e, n, o, in, sc);
#if GPUML__HAVE_AVX2_PATH
        if (stream) { gpuml__stream_f32((float *)(void *)(p[0] + done * 4), o, n); continue; }
#endif
        gpuml__cpu_st(e->dt[0], p[0] + done * step[0], step[0], n, o);
    }
}
/* rows rows of count elements (rows * count <= GPUML__TILE) through one tile: each input's rows
   gathered, the op run once, the rows stored (a 64-element row a call cost ~180 cycles of calls
   and checks, an f16 broadcast 3x a plain add).  Where gpuml__ew_row would convert in registers,
   or stream its output, the rows go to it one at a time. */
GPUML__FN void gpuml__ew_row_block(void *arg, char **p, const int64_t *step, int64_t count, int64_t rows, const int64_t *rstep)
{
    const gpuml__ew *e = (const gpuml__ew *)arg;
    float buf[4][GPUML__TILE], sc[GPUML__TILE];
    const float *in[3] = {NULL, NULL, NULL};
    int64_t r, n = rows * count, i;
    int k;
    if (gpuml__ew_direct(e, step) || (e->stream && e->dt[0] == GPUML_F32 && gpuml__cpu_simd() >= 1)) {
        for (r = 0; r < rows; r++) {
            char *q[4];
            for (k = 0; k <= e->nin; k++) q[k] = p[k] + r * rstep[k];
            gpuml__ew_row(arg, q, step, count);
        }
        return;
    }
    for (k = 0; k < e->nin; k++) {
        for (r = 0; r < rows; r++) {
            float *dst = buf[k + 1] + r * count;
            const float *src = gpuml__cpu_ld(e->dt[k + 1], p[k + 1] + r * rstep[k + 1], step[k + 1], count, dst);
            if (src != dst) memcpy(dst, src, sizeof(float) * (size_t)count);
        }
        in[k] = buf[k + 1];
    }
    if (e->scal) for (i = 0; i < n; i++) sc[i] = e->s0;
    gpuml__ew_tile(e, n, buf[0], in, sc);
    for (r = 0; r < rows; r++) gpuml__cpu_st(e->dt[0], p[0] + r * rstep[0], step[0], count, buf[0] + r * count);
}

#ifndef GPUML_NO_CUDA
/* 1 where gpuml_ew_rows takes the iteration (vec: gpuml__vec_for's, the 16-byte vector for the
   dtypes, > 1 when every base is aligned for it): 2+ dims; along the innermost one, L elements
   (L % vec == 0), the output has stride 1 and each input 1 or 0 (broadcast); for the output and the
   inputs of stride 1 there, every outer stride is a multiple of vec (so every row starts aligned) */
GPUML__FN int gpuml__ew_rows_ok(const gpuml__xiter *it, int vec)
{
    int k, d, last = it->ndim - 1;
    if (vec < 2 || it->ndim < 2 || it->dims[last] % vec != 0) return 0;
    for (k = 0; k < it->nops; k++) {
        int64_t st = it->strides[k][last];
        if (st != 1 && (k == 0 || st != 0)) return 0;
        if (st == 1)
            for (d = 0; d < last; d++) if (it->strides[k][d] % vec != 0) return 0;
    }
    return 1;
}
/* elements per 16-byte vector for these operands, or 1 when a pointer is not aligned for it */
GPUML__FN int gpuml__vec_for(char *const *base, const gpuml_dtype *dt, int nops)
{
    size_t maxes = 1;
    int k, vec;
    for (k = 0; k < nops; k++) maxes = GPUML__MAX(maxes, gpuml__dtype_sizes[dt[k]]);
    vec = (int)(16 / maxes);
    for (k = 0; k < nops; k++)
        if (((uintptr_t)base[k]) % ((size_t)vec * gpuml__dtype_sizes[dt[k]]) != 0) return 1;
    return vec;
}
/* blocks for a grid-stride loop: one full wave of 256-thread blocks at most */
GPUML__FN unsigned gpuml__grid_wave(gpuml_ctx *ctx, int64_t items, unsigned block)
{
    int64_t blocks = (items + block - 1) / block, cap = (int64_t)GPUML__MAX(ctx->sm_count, 1) * (2048 / block);
    return (unsigned)GPUML__MAX(1, GPUML__MIN(blocks, cap));
}
/* Overrides of the contiguous elementwise/optimizer kernels' shape, for the tests and
   benchmarks (0: the rule): [0] threads a block (32..1024, a multiple of 32), [1] vectors in
   flight a thread (1..8), [2] grid: 1 a block per chunk (one shot), 2 one wave of blocks
   walking the chunks, [3] streaming cache hints: 1 on, 2 off; [4] gpuml_ew_rows: 2 streams the
   inputs it re-reads for other rows too (no L1 lines kept) */
static int gpuml__ew_tune[5];
/* the shape of a contiguous kernel over nvec vectors: appends -DEW_* to opts, sets block and grid */
GPUML__FN void gpuml__ew_shape(gpuml_ctx *ctx, int64_t nvec, char *opts, size_t cap, unsigned *grid, unsigned *block)
{
    /* the rule: 128 threads, one vector a thread, a block per chunk, streaming hints.  Measured
       on an H100 (bench/NOTES_ops.md, issue 3): add/mul f32 0.94 -> 1.01 of copy, gelu f32 0.91
       -> 0.995, bf16 0.83 -> 0.98, AdamW 0.93 -> 0.998, against the old one wave of 256-thread
       blocks walking the array (grid-stride); 128 and 256 threads within 0.006 there.  On an
       H200 (1.4x the bandwidth, the same SMs) the 16-bit GELU is issue-bound and smaller blocks
       retire and refill sooner: 256 -> 128 threads, bf16 GELU 0.925 -> 0.948 of copy, f32 0.989 ->
       0.993, add / mul / AdamW unchanged (+-0.002) */
    int bs = 128, u = 1, oneshot = 1, hint = 1;
    int64_t chunks;
    size_t l = strlen(opts);
    if (gpuml__ew_tune[0] >= 32 && gpuml__ew_tune[0] <= 1024 && gpuml__ew_tune[0] % 32 == 0) bs = gpuml__ew_tune[0];
    if (gpuml__ew_tune[1] >= 1 && gpuml__ew_tune[1] <= 8) u = gpuml__ew_tune[1];
    if (gpuml__ew_tune[2] != 0) oneshot = gpuml__ew_tune[2] == 1;
    if (gpuml__ew_tune[3] != 0) hint = gpuml__ew_tune[3] == 1;
    chunks = (nvec + (int64_t)bs * u - 1) / ((int64_t)bs * u);
    if (oneshot) grid[0] = (unsigned)GPUML__MAX(1, GPUML__MIN(chunks, (int64_t)0x7fffffff));
    else grid[0] = gpuml__grid_wave(ctx, (nvec + u - 1) / u, (unsigned)bs);
    block[0] = (unsigned)bs;
    snprintf(opts + l, cap - l, " -DEW_BS=%d -DEW_U=%d -DEW_HINT=%d", bs, u, hint);
}
/* gcc 13 at -O3 -march=native calls it->base[k] below "maybe uninitialized" once this is inlined
   into gpuml__ew_run, whose gpuml__xiter_make memsets the whole iterator first: silenced here
   (popped after gpuml__ew_run) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
GPUML__FN gpuml_status gpuml__cuda_ew(gpuml_ctx *ctx, const gpuml__ew *e, const gpuml__xiter *it)
{
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr ptr[4] = {0, 0, 0, 0};
    char opts[200];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    int k, vec = gpuml__vec_for(it->base, it->dt, it->nops), natural;
    size_t maxes = 1;
    gpuml_dtype dt[4] = {GPUML_F32, GPUML_F32, GPUML_F32, GPUML_F32};
    for (k = 0; k < it->nops; k++) {
        ptr[k] = (gpuml__CUdeviceptr)(uintptr_t)it->base[k];
        dt[k] = it->dt[k];
        maxes = GPUML__MAX(maxes, gpuml__dtype_sizes[dt[k]]);
    }
    natural = (int)(16 / maxes);
    /* one module per (op, dtypes) holds both kernels */
    snprintf(opts, sizeof opts, "-DOP=%d -DNIN=%d -DSCAL=%d -DDT_O=%d -DDT_A=%d -DDT_B=%d -DDT_C=%d -DVEC=%d", e->op, e->nin,
             e->scal, (int)dt[0], (int)dt[1], (int)dt[2], (int)dt[3], natural);
    gpuml__ew_shape(ctx, it->n / natural, opts, sizeof opts, grid, block);   /* the same module for both kernels */
    if (gpuml__xiter_contig(it) && vec > 1) {
        void *args[7];
        float s0 = e->s0, s1 = e->s1;
        int64_t n = it->n;
        args[0] = &n; args[1] = &ptr[0]; args[2] = &ptr[1]; args[3] = &ptr[2]; args[4] = &ptr[3]; args[5] = &s0; args[6] = &s1;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_ew_contig", &fn));
        return gpuml__launch(ctx, fn, grid, block, 0, args, "elementwise op");
    } else if (gpuml__ew_rows_ok(it, vec)) {
        /* broadcasts along whole rows (gpuml_ew_rows): the outer dims as the shape, the inner one as L */
        gpuml__kshape ks;
        gpuml__kview kv[4];
        gpuml__kdiv dv;
        void *args[11];
        float s0 = e->s0, s1 = e->s1;
        int64_t L = it->dims[it->ndim - 1];
        int unit = 0;
        memset(kv, 0, sizeof kv);   /* all 4 views go to the kernel */
        gpuml__xkparams(it, &ks, kv);
        ks.ndim = it->ndim - 1;
        ks.dims[it->ndim - 1] = 0;
        ks.n = it->n / L;
        for (k = 0; k < it->nops; k++) {
            int d;
            if (it->strides[k][it->ndim - 1] == 1) unit |= 1 << k;
            kv[k].strides[it->ndim - 1] = 0;
            /* an input read again for other rows (stride 0 in an outer dim) keeps its L1 lines:
               streamed past L1, every warp re-read a bias row from the one L2 slice holding it */
            for (d = 0; k > 0 && d < it->ndim - 1 && gpuml__ew_tune[4] != 2; d++)
                if (it->dims[d] > 1 && it->strides[k][d] == 0) { unit |= 16 << k; break; }
        }
        memset(&dv, 0, sizeof dv);
        if (it->n / vec < 0x7fffffff) {   /* the kernel's narrow path: every index below 2^31 */
            for (k = 0; k < ks.ndim; k++) gpuml__kdiv_set(&dv, k, ks.dims[k]);
            gpuml__kdiv_set(&dv, GPUML_MAX_DIMS, L / natural);
        }
        args[0] = &ks; args[1] = kv; args[2] = &dv; args[3] = &L; args[4] = &unit; args[5] = &ptr[0]; args[6] = &ptr[1];
        args[7] = &ptr[2]; args[8] = &ptr[3]; args[9] = &s0; args[10] = &s1;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_ew_rows", &fn));
        grid[0] = gpuml__grid_wave(ctx, it->n / vec, 256);
        block[0] = 256;
        return gpuml__launch(ctx, fn, grid, block, 0, args, "elementwise op (rows)");
    } else {
        gpuml__kshape ks;
        gpuml__kview kv[4];
        void *args[8];
        float s0 = e->s0, s1 = e->s1;
        memset(kv, 0, sizeof kv);   /* all 4 views go to the kernel */
        gpuml__xkparams(it, &ks, kv);
        args[0] = &ks; args[1] = kv; args[2] = &ptr[0]; args[3] = &ptr[1]; args[4] = &ptr[2]; args[5] = &ptr[3];
        args[6] = &s0; args[7] = &s1;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_ew_strided", &fn));
        grid[0] = gpuml__grid_wave(ctx, it->n, 256);
        block[0] = 256;
        return gpuml__launch(ctx, fn, grid, block, 0, args, "elementwise op");
    }
}
#endif

/* runs an elementwise job; ops[0] is the output, the rest inputs broadcast to its shape */
GPUML__FN gpuml_status gpuml__ew_run(gpuml_ctx *ctx, gpuml__ew *e, const gpuml_tensor *const *ops)
{
    gpuml__xiter it;
    int k;
    gpuml__xiter_make(&it, ops, e->nin + 1);
    for (k = 0; k <= e->nin; k++) e->dt[k] = ops[k]->dtype;
    if (it.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        e->stream = it.n * (int64_t)gpuml__dtype_sizes[e->dt[0]] >= GPUML__STREAM_BYTES;
        gpuml__xforeach2(ctx, &it, gpuml__ew_row, gpuml__ew_row_block, e);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_ew(ctx, e, &it);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}
#if defined(__GNUC__) && !defined(__clang__) && !defined(GPUML_NO_CUDA)
#pragma GCC diagnostic pop
#endif

/* profiler name of an elementwise op code */
GPUML__FN const char *gpuml__ew_name(int code)
{
    static const char *const bin[7] = { "add", "sub", "mul", "div", "maximum", "minimum", "pow" };
    static const char *const un[GPUML_UNARY_COUNT] = { "neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh",
                                                       "sigmoid", "relu", "gelu", "gelu_tanh", "silu" };
    if (code >= 0 && code < 7) return bin[code];
    if (code >= GPUML__EW_UNARY && code < GPUML__EW_UNARY + GPUML_UNARY_COUNT) return un[code - GPUML__EW_UNARY];
    switch (code) {
    case GPUML__EW_CLAMP: return "clamp";
    case GPUML__EW_RELU_GRAD: return "relu_backward";
    case GPUML__EW_GELU_GRAD: return "gelu_backward";
    case GPUML__EW_GELU_TANH_GRAD: return "gelu_tanh_backward";
    case GPUML__EW_SILU_GRAD: return "silu_backward";
    case GPUML__EW_WHERE: return "where";
    }
    return "elementwise";
}

/* the front door of every elementwise op: validates, broadcasts, runs.
   in[] may hold NULLs past nin; float_in[k] says input k must be a floating dtype. */
GPUML__FN gpuml_status gpuml__ew_op(gpuml_ctx *ctx, const char *op, int code, int scal, double s0, double s1,
                                    gpuml_tensor *out, const gpuml_tensor *const *in, const char *const *names, int nin,
                                    gpuml_dtype want_out)
{
    gpuml_tensor v[3];
    const gpuml_tensor *ops[4];
    gpuml__ew e;
    int64_t shape[GPUML_MAX_DIMS];
    int ndim = 0, i, k;
    char s1b[200], s2b[200], s3b[200];
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if (out->dtype != want_out)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: out is %s but the result is %s", op, gpuml__dtype_names[out->dtype],
                           gpuml__dtype_names[want_out]);
    /* the broadcast shape of the inputs must be out's shape */
    for (k = 0; k < nin; k++) ndim = GPUML__MAX(ndim, in[k]->ndim);
    for (i = 0; i < ndim; i++) {
        shape[i] = 1;
        for (k = 0; k < nin; k++) {
            int j = i - (ndim - in[k]->ndim);
            int64_t d = j >= 0 ? in[k]->shape[j] : 1;
            if (d != 1 && shape[i] != 1 && d != shape[i]) {
                if (nin == 1) break;
                return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: shapes %s (%s) and %s (%s)%s%s do not broadcast", op,
                                   gpuml__shape_str(in[0], s1b, sizeof s1b), names[0], gpuml__shape_str(in[1], s2b, sizeof s2b),
                                   names[1], nin > 2 ? " and " : "", nin > 2 ? gpuml__shape_str(in[2], s3b, sizeof s3b) : "");
            }
            if (d != 1) shape[i] = d;
        }
    }
    {
        int same = ndim == out->ndim;
        for (i = 0; same && i < ndim; i++) same = shape[i] == out->shape[i];
        if (!same) {
            gpuml_tensor tmp = *out;
            tmp.ndim = ndim;
            for (i = 0; i < ndim; i++) tmp.shape[i] = shape[i];
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: out is %s but the inputs broadcast to %s", op,
                               gpuml__shape_str(out, s1b, sizeof s1b), gpuml__shape_str(&tmp, s2b, sizeof s2b));
        }
    }
    ops[0] = out;
    for (k = 0; k < nin; k++) {
        GPUML__TRY(gpuml__check_alias(ctx, out, in[k], op, "out", names[k]));
        gpuml__bcast_to(in[k], out->ndim, out->shape, &v[k]);
        ops[k + 1] = &v[k];
    }
    memset(&e, 0, sizeof e);
    e.op = code; e.nin = nin; e.scal = scal; e.s0 = (float)s0; e.s1 = (float)s1;
    return GPUML__PROF(ctx, gpuml__ew_run(ctx, &e, ops), gpuml__ew_name(code), GPUML_UNIT_FP32, (double)gpuml__numel(out),
                       gpuml__tb(in[0]) + (nin > 1 ? gpuml__tb(in[1]) : 0.0) + (nin > 2 ? gpuml__tb(in[2]) : 0.0) + gpuml__tb(out),
                       in[0], nin > 1 ? in[1] : NULL, out);
}

GPUML__DEF gpuml_status gpuml_binary(gpuml_ctx *ctx, gpuml_binary_op bop, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b)
{
    static const char op[] = "gpuml_binary";
    static const char *const names[2] = { "a", "b" };
    const gpuml_tensor *in[2];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    GPUML__TRY(gpuml__check_tensor(ctx, b, op, "b"));
    if ((unsigned)bop > GPUML_BINARY_POW) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d is not a gpuml_binary_op", op, (int)bop);
    GPUML__TRY(gpuml__need_float(ctx, a, op, "a"));
    GPUML__TRY(gpuml__need_float(ctx, b, op, "b"));
    in[0] = a; in[1] = b;
    return gpuml__ew_op(ctx, op, (int)bop, 0, 0, 0, out, in, names, 2, gpuml__promote(a->dtype, b->dtype));
}
GPUML__FN gpuml_status gpuml__binary_scalar(gpuml_ctx *ctx, gpuml_binary_op bop, gpuml_tensor *out, const gpuml_tensor *a, double s, int scal)
{
    const char *op = scal == 1 ? "gpuml_binary_scalar" : "gpuml_scalar_binary";
    static const char *const names[1] = { "a" };
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    if ((unsigned)bop > GPUML_BINARY_POW) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d is not a gpuml_binary_op", op, (int)bop);
    GPUML__TRY(gpuml__need_float(ctx, a, op, "a"));
    return gpuml__ew_op(ctx, op, (int)bop, scal, s, 0, out, &a, names, 1, a->dtype);
}
GPUML__DEF gpuml_status gpuml_binary_scalar(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, const gpuml_tensor *a, double s)
{ return gpuml__binary_scalar(ctx, op, out, a, s, 1); }
GPUML__DEF gpuml_status gpuml_scalar_binary(gpuml_ctx *ctx, gpuml_binary_op op, gpuml_tensor *out, double s, const gpuml_tensor *a)
{ return gpuml__binary_scalar(ctx, op, out, a, s, 2); }
GPUML__DEF gpuml_status gpuml_add(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_ADD, out, a, b); }
GPUML__DEF gpuml_status gpuml_sub(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_SUB, out, a, b); }
GPUML__DEF gpuml_status gpuml_mul(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_MUL, out, a, b); }
GPUML__DEF gpuml_status gpuml_div(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_DIV, out, a, b); }
GPUML__DEF gpuml_status gpuml_maximum(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_MAXIMUM, out, a, b); }
GPUML__DEF gpuml_status gpuml_minimum(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_MINIMUM, out, a, b); }
GPUML__DEF gpuml_status gpuml_pow(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, const gpuml_tensor *b) { return gpuml_binary(ctx, GPUML_BINARY_POW, out, a, b); }
GPUML__DEF gpuml_status gpuml_add_scalar(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, double s) { return gpuml_binary_scalar(ctx, GPUML_BINARY_ADD, out, a, s); }
GPUML__DEF gpuml_status gpuml_mul_scalar(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *a, double s) { return gpuml_binary_scalar(ctx, GPUML_BINARY_MUL, out, a, s); }

/* unary ops and clamp: out and x of one shape and dtype */
GPUML__FN gpuml_status gpuml__unary(gpuml_ctx *ctx, const char *op, int code, gpuml_tensor *out, const gpuml_tensor *x, double s0, double s1)
{
    static const char *const names[1] = { "x" };
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_same_shape(ctx, out, x, op, "out", "x"));
    return gpuml__ew_op(ctx, op, code, 0, s0, s1, out, &x, names, 1, x->dtype);
}
GPUML__DEF gpuml_status gpuml_unary(gpuml_ctx *ctx, gpuml_unary_op uop, gpuml_tensor *out, const gpuml_tensor *x)
{
    if (ctx && (unsigned)uop >= GPUML_UNARY_COUNT)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_unary: op %d is not a gpuml_unary_op", (int)uop);
    return gpuml__unary(ctx, "gpuml_unary", GPUML__EW_UNARY + (int)uop, out, x, 0, 0);
}
GPUML__DEF gpuml_status gpuml_neg(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_NEG, out, x); }
GPUML__DEF gpuml_status gpuml_abs(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_ABS, out, x); }
GPUML__DEF gpuml_status gpuml_exp(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_EXP, out, x); }
GPUML__DEF gpuml_status gpuml_log(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_LOG, out, x); }
GPUML__DEF gpuml_status gpuml_sqrt(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SQRT, out, x); }
GPUML__DEF gpuml_status gpuml_rsqrt(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_RSQRT, out, x); }
GPUML__DEF gpuml_status gpuml_sin(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SIN, out, x); }
GPUML__DEF gpuml_status gpuml_cos(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_COS, out, x); }
GPUML__DEF gpuml_status gpuml_tanh(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_TANH, out, x); }
GPUML__DEF gpuml_status gpuml_sigmoid(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SIGMOID, out, x); }
GPUML__DEF gpuml_status gpuml_relu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_RELU, out, x); }
GPUML__DEF gpuml_status gpuml_gelu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_GELU, out, x); }
GPUML__DEF gpuml_status gpuml_gelu_tanh(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_GELU_TANH, out, x); }
GPUML__DEF gpuml_status gpuml_silu(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x) { return gpuml_unary(ctx, GPUML_UNARY_SILU, out, x); }
GPUML__DEF gpuml_status gpuml_clamp(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x, double lo, double hi)
{
    if (ctx && !(lo <= hi)) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "gpuml_clamp: lo %g > hi %g (or NaN)", lo, hi);
    return gpuml__unary(ctx, "gpuml_clamp", GPUML__EW_CLAMP, out, x, lo, hi);
}

GPUML__DEF gpuml_status gpuml_where(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *mask, const gpuml_tensor *a, const gpuml_tensor *b)
{
    static const char op[] = "gpuml_where";
    static const char *const names[3] = { "mask", "a", "b" };
    const gpuml_tensor *in[3];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, mask, op, "mask"));
    GPUML__TRY(gpuml__check_tensor(ctx, a, op, "a"));
    GPUML__TRY(gpuml__check_tensor(ctx, b, op, "b"));
    if (mask->dtype != GPUML_U8 && mask->dtype != GPUML_I32)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: mask is %s; it must be u8 or i32", op, gpuml__dtype_names[mask->dtype]);
    GPUML__TRY(gpuml__need_float(ctx, a, op, "a"));
    GPUML__TRY(gpuml__need_dtype(ctx, b, a->dtype, op, "b"));
    in[0] = mask; in[1] = a; in[2] = b;
    return gpuml__ew_op(ctx, op, GPUML__EW_WHERE, 0, 0, 0, out, in, names, 3, a->dtype);
}

GPUML__DEF gpuml_status gpuml_activation_backward(gpuml_ctx *ctx, gpuml_unary_op uop, gpuml_tensor *dx, const gpuml_tensor *dy,
                                                  const gpuml_tensor *x)
{
    static const char op[] = "gpuml_activation_backward";
    static const char *const names[2] = { "dy", "x" };
    const gpuml_tensor *in[2];
    int code;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, dx, op, "dx"));
    GPUML__TRY(gpuml__check_tensor(ctx, dy, op, "dy"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    switch (uop) {
    case GPUML_UNARY_RELU: code = GPUML__EW_RELU_GRAD; break;
    case GPUML_UNARY_GELU: code = GPUML__EW_GELU_GRAD; break;
    case GPUML_UNARY_GELU_TANH: code = GPUML__EW_GELU_TANH_GRAD; break;
    case GPUML_UNARY_SILU: code = GPUML__EW_SILU_GRAD; break;
    default:
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d has no backward here (RELU, GELU, GELU_TANH, SILU)", op, (int)uop);
    }
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_dtype(ctx, dy, x->dtype, op, "dy"));
    GPUML__TRY(gpuml__need_same_shape(ctx, dy, x, op, "dy", "x"));
    GPUML__TRY(gpuml__need_same_shape(ctx, dx, x, op, "dx", "x"));
    in[0] = dy; in[1] = x;
    return gpuml__ew_op(ctx, op, code, 0, 0, 0, dx, in, names, 2, x->dtype);
}

/* ------------------------------------------------------------------ reductions ---- */
/* x split into outer (kept) and inner (reduced) dims, size-1 dims dropped and neighbours
   merged; the layout matches struct gpuml__rparams of kernels/reduce.cu */
typedef struct gpuml__rplan {
    gpuml__kshape os;
    gpuml__kview oxv, oov;
    gpuml__kshape is;
    gpuml__kview ixv;
    int64_t chunk;
    int nsplit, contig, aligned;
    float correction;
} gpuml__rplan;

/* red[d]: dim d of x is reduced; ostr[d]: out's stride for kept dim d */
GPUML__FN void gpuml__rplan_make(gpuml__rplan *p, const gpuml_tensor *x, const int *red, const int64_t *ostr)
{
    int d;
    memset(p, 0, sizeof *p);
    p->os.n = 1; p->is.n = 1;
    for (d = 0; d < x->ndim; d++) {
        int64_t sz = x->shape[d];
        if (red[d]) {
            int k = p->is.ndim;
            p->is.n *= sz;
            if (sz == 1) continue;
            if (k > 0 && p->ixv.strides[k - 1] == x->strides[d] * sz) {
                p->is.dims[k - 1] *= sz; p->ixv.strides[k - 1] = x->strides[d];
            } else {
                p->is.dims[k] = sz; p->ixv.strides[k] = x->strides[d]; p->is.ndim++;
            }
        } else {
            int k = p->os.ndim;
            p->os.n *= sz;
            if (sz == 1) continue;
            if (k > 0 && p->oxv.strides[k - 1] == x->strides[d] * sz && p->oov.strides[k - 1] == ostr[d] * sz) {
                p->os.dims[k - 1] *= sz; p->oxv.strides[k - 1] = x->strides[d]; p->oov.strides[k - 1] = ostr[d];
            } else {
                p->os.dims[k] = sz; p->oxv.strides[k] = x->strides[d]; p->oov.strides[k] = ostr[d]; p->os.ndim++;
            }
        }
    }
    p->contig = p->is.ndim == 0 || (p->is.ndim == 1 && p->ixv.strides[0] == 1);
    p->nsplit = 1;
    p->chunk = p->is.n;
}
GPUML__FN int64_t gpuml__row_off(const gpuml__kshape *s, const gpuml__kview *v, int64_t i)
{
    int64_t off = 0;
    int d;
    for (d = s->ndim - 1; d >= 0; d--) { int64_t q = i / s->dims[d]; off += (i - q * s->dims[d]) * v->strides[d]; i = q; }
    return off;
}

/* CPU accumulator: the same merges as kernels/reduce.cu, in double */
typedef struct gpuml__cacc { double v, m2, n; int64_t idx; } gpuml__cacc;
GPUML__FN gpuml__cacc gpuml__cacc_init(int kind)
{
    gpuml__cacc a;
    a.v = (kind == GPUML_REDUCE_MAX || kind == GPUML_REDUCE_ARGMAX) ? -HUGE_VAL : kind == GPUML_REDUCE_MIN ? HUGE_VAL : 0.0;
    a.m2 = 0; a.n = 0; a.idx = INT64_MAX;
    return a;
}
GPUML__FN int gpuml__better(double v1, int64_t i1, double v2, int64_t i2)
{
    int n1 = v1 != v1, n2 = v2 != v2;
    if (n1 && n2) return i2 < i1;
    if (n1) return 0;
    if (n2) return 1;
    return v2 > v1 || (v2 == v1 && i2 < i1);
}
GPUML__FN void gpuml__cacc_merge(int kind, gpuml__cacc *a, const gpuml__cacc *b)
{
    switch (kind) {
    case GPUML_REDUCE_SUM: case GPUML_REDUCE_MEAN: a->v += b->v; break;
    case GPUML_REDUCE_MAX: if (a->v == a->v && (b->v != b->v || b->v > a->v)) a->v = b->v; break;
    case GPUML_REDUCE_MIN: if (a->v == a->v && (b->v != b->v || b->v < a->v)) a->v = b->v; break;
    case GPUML_REDUCE_ARGMAX: if (gpuml__better(a->v, a->idx, b->v, b->idx)) { a->v = b->v; a->idx = b->idx; } break;
    default: {
        double n = a->n + b->n, d;
        if (b->n == 0) break;
        if (a->n == 0) { *a = *b; break; }
        d = b->v - a->v;
        a->v += d * (b->n / n);
        a->m2 += b->m2 + d * d * a->n * (b->n / n);
        a->n = n;
    }
    }
}
/* folds n floats (inner indices first, first+1, ...) into a */
GPUML__FN void gpuml__cacc_add(int kind, gpuml__cacc *a, const float *x, int64_t n, int64_t first)
{
    int64_t i;
    switch (kind) {
    case GPUML_REDUCE_SUM: case GPUML_REDUCE_MEAN: {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#if GPUML__HAVE_AVX2_PATH
        if (gpuml__cpu_simd() >= 1) { a->v += gpuml__vsum_avx2(x, n, 0.0f, 0); break; }
#endif
        for (i = 0; i + 4 <= n; i += 4) { s0 += x[i]; s1 += x[i + 1]; s2 += x[i + 2]; s3 += x[i + 3]; }
        for (; i < n; i++) s0 += x[i];
        a->v += (s0 + s1) + (s2 + s3);
        break;
    }
    case GPUML_REDUCE_MAX:
        for (i = 0; i < n; i++) if (a->v == a->v && (x[i] != x[i] || x[i] > a->v)) a->v = x[i];
        break;
    case GPUML_REDUCE_MIN:
        for (i = 0; i < n; i++) if (a->v == a->v && (x[i] != x[i] || x[i] < a->v)) a->v = x[i];
        break;
    case GPUML_REDUCE_ARGMAX:
        for (i = 0; i < n; i++) if (gpuml__better(a->v, a->idx, x[i], first + i)) { a->v = x[i]; a->idx = first + i; }
        break;
    default: {
        gpuml__cacc t;
        double s = 0;
        for (i = 0; i < n; i++) s += x[i];
        t.n = (double)n; t.v = n ? s / (double)n : 0; t.m2 = 0; t.idx = 0;
        for (i = 0; i < n; i++) { double d = x[i] - t.v; t.m2 += d * d; }
        gpuml__cacc_merge(kind, a, &t);
    }
    }
}
GPUML__FN void gpuml__cacc_store(int kind, gpuml_dtype dt, char *out, const gpuml__cacc *a, int64_t count, double correction)
{
    double r;
    if (kind == GPUML_REDUCE_ARGMAX) { gpuml__i32 i = (gpuml__i32)a->idx; memcpy(out, &i, 4); return; }
    if (kind == GPUML_REDUCE_MEAN) r = a->v / (double)count;
    else if (kind == GPUML_REDUCE_VAR) r = count > 0 ? a->m2 / ((double)count - correction) : NAN;
    else r = a->v;
    gpuml__st_f32(dt, out, (float)r);
}

typedef struct gpuml__rjob {
    const gpuml__rplan *p;
    int kind;
    gpuml_dtype xdt;
    const char *x;
    gpuml__cacc *part;
} gpuml__rjob;
GPUML__FN void gpuml__reduce_task(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__rjob *j = (const gpuml__rjob *)arg;
    const gpuml__rplan *p = j->p;
    int64_t es = (int64_t)gpuml__dtype_sizes[j->xdt], w;
    float buf[GPUML__TILE];
    int last = p->is.ndim - 1;
#if GPUML__HAVE_AVX2_PATH
    int sum16 = gpuml__cpu_simd() >= 2 && (j->kind == GPUML_REDUCE_SUM || j->kind == GPUML_REDUCE_MEAN) &&
                (j->xdt == GPUML_F32 || j->xdt == GPUML_BF16 || j->xdt == GPUML_F16);
#endif
    (void)tid;
    for (w = b; w < e; w++) {
        int64_t row = w / p->nsplit, sp = w % p->nsplit;
        int64_t lo = sp * p->chunk, hi = GPUML__MIN(lo + p->chunk, p->is.n), pos = lo;
        const char *xr = j->x + gpuml__row_off(&p->os, &p->oxv, row) * es;
        gpuml__cacc a = gpuml__cacc_init(j->kind);
        while (pos < hi) {
            /* a run along the innermost reduced dim */
            int64_t run, st, off, done;
            if (last < 0) { run = hi - pos; st = 0; off = 0; }
            else {
                int64_t inner = pos % p->is.dims[last];
                run = GPUML__MIN(p->is.dims[last] - inner, hi - pos);
                st = p->ixv.strides[last];
                off = gpuml__row_off(&p->is, &p->ixv, pos);
            }
#if GPUML__HAVE_AVX2_PATH
            if (sum16 && st == 1) {   /* AVX-512, straight from memory */
                a.v += gpuml__vsum_avx512(xr + off * es, gpuml__v16_kind(j->xdt), run);
                pos += run;
                continue;
            }
#endif
            for (done = 0; done < run; done += GPUML__TILE) {
                int64_t n = GPUML__MIN((int64_t)GPUML__TILE, run - done);
                const float *v = gpuml__cpu_ld(j->xdt, xr + (off + done * st) * es, st * es, n, buf);
                gpuml__cacc_add(j->kind, &a, v, n, pos + done);
            }
            pos += run;
        }
        j->part[w] = a;
    }
}

#ifndef GPUML_NO_CUDA
/* Overrides of the reduction split rule, for the tests and benchmarks (0: the rule): [0] blocks
   per SM to aim for when few outputs are reduced (4), [1] vectors in flight a thread (1..8: 8),
   [2] 1: merge the splits in a second kernel even where the last block could (see RD_FUSE) */
static int gpuml__reduce_tune[3];
#define GPUML__RD_TICKETS 1024   /* RD_FUSE: outputs at most (the tickets in kernels/reduce.cu) */
GPUML__FN gpuml_status gpuml__cuda_reduce(gpuml_ctx *ctx, int kind, gpuml_tensor *out, const gpuml_tensor *x, gpuml__rplan *p)
{
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr xp = gpuml__dptr(x), op = gpuml__dptr(out), pp = 0;
    gpuml_tensor *scratch = NULL;
    char opts[160];
    unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
    int64_t es = (int64_t)gpuml__dtype_sizes[x->dtype], nwork;
    int vec = (int)(16 / es), d;
    gpuml_status st;
    /* 4 blocks a SM: one wave of long splits (measured on an H100, sum of 2^26: f32 0.92 -> 0.94
       of copy, bf16 0.83 -> 0.86, against 16 a SM) */
    int per_sm = gpuml__reduce_tune[0] > 0 ? gpuml__reduce_tune[0] : 4, fuse = 0;
    snprintf(opts, sizeof opts, "-DRK=%d -DDT_X=%d -DDT_O=%d -DVEC=%d", kind, (int)x->dtype, (int)out->dtype, vec);
    if (gpuml__reduce_tune[1] >= 1 && gpuml__reduce_tune[1] <= 8)
        snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " -DRD_U=%d", gpuml__reduce_tune[1]);
    if (!p->contig && p->os.n >= 4096 && p->os.ndim > 0 && p->oxv.strides[p->os.ndim - 1] == 1) {
        /* neighbouring outputs read neighbouring elements: a thread per output */
        void *args[3];
        args[0] = p; args[1] = &xp; args[2] = &op;
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_reduce, opts, "gpuml_reduce_cols", &fn));
        grid[0] = gpuml__grid_wave(ctx, p->os.n, 256);
        return gpuml__launch(ctx, fn, grid, block, 0, args, "reduce");
    }
    /* split long reductions so that about two waves of blocks have work */
    if (p->is.n > 8192 && p->os.n < (int64_t)ctx->sm_count * per_sm) {
        int64_t want = ((int64_t)ctx->sm_count * per_sm + p->os.n - 1) / p->os.n;
        int64_t maxs = (p->is.n + 8191) / 8192;
        int64_t ns = GPUML__MIN(want, maxs);
        p->chunk = (p->is.n + ns - 1) / ns;
        p->chunk = (p->chunk + vec - 1) / vec * vec;
        p->nsplit = (int)((p->is.n + p->chunk - 1) / p->chunk);
        /* the last block of each output merges its splits (no second launch) */
        fuse = p->nsplit > 1 && p->os.n <= GPUML__RD_TICKETS && gpuml__reduce_tune[2] != 1;
        if (fuse) snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " -DRD_FUSE=1");
    }
    p->aligned = p->contig && xp % 16 == 0 && p->chunk % vec == 0;
    for (d = 0; d < p->os.ndim; d++) if ((p->oxv.strides[d] * es) % 16 != 0) p->aligned = 0;
    nwork = p->os.n * p->nsplit;
    if (p->nsplit > 1) {
        int64_t bytes = nwork * 16;
        scratch = gpuml__tensor_new(ctx, GPUML_U8, 1, &bytes, "reduce (scratch)");
        if (!scratch) return ctx->status;
        pp = gpuml__dptr(scratch);
    }
    {
        void *args[4];
        args[0] = p; args[1] = &xp; args[2] = &op; args[3] = &pp;
        st = gpuml__kernel(ctx, &gpuml__fam_reduce, opts, "gpuml_reduce_rows", &fn);
        grid[0] = (unsigned)GPUML__MIN(nwork, (int64_t)1 << 30);
        if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, grid, block, 0, args, "reduce");
    }
    if (st == GPUML_SUCCESS && p->nsplit > 1 && !fuse) {
        void *args[3];
        args[0] = p; args[1] = &op; args[2] = &pp;
        st = gpuml__kernel(ctx, &gpuml__fam_reduce, opts, "gpuml_reduce_finish", &fn);
        grid[0] = (unsigned)GPUML__MIN(p->os.n, (int64_t)1 << 20);   /* a block per output */
        if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, grid, block, 0, args, "reduce");
    }
    gpuml_tensor_free(scratch);   /* stream-ordered: the next user of the block runs after us */
    return st;
}
#endif

/* the reduction engine: x validated, red[] the reduced dims, ostr[] out's strides by x dim */
GPUML__FN gpuml_status gpuml__reduce_run(gpuml_ctx *ctx, int kind, gpuml_tensor *out, const gpuml_tensor *x, const int *red,
                                         const int64_t *ostr, double correction)
{
    gpuml__rplan p;
    gpuml__rplan_make(&p, x, red, ostr);
    p.correction = (float)correction;
    if (p.os.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__rjob j;
        int64_t r, s, nth = gpuml__pool_size(ctx->pool);
        int64_t es = (int64_t)gpuml__dtype_sizes[out->dtype];
        if (p.is.n > 65536 && p.os.n < nth * 4) {
            int64_t ns = GPUML__MIN((nth * 4 + p.os.n - 1) / p.os.n, (p.is.n + 65535) / 65536);
            p.chunk = (p.is.n + ns - 1) / ns;
            p.nsplit = (int)((p.is.n + p.chunk - 1) / p.chunk);
        }
        j.p = &p; j.kind = kind; j.xdt = x->dtype; j.x = (const char *)gpuml_tensor_data(x);
        j.part = (gpuml__cacc *)gpuml__malloc(sizeof(gpuml__cacc) * (size_t)(p.os.n * p.nsplit));
        if (!j.part) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
        gpuml__parallel_for(ctx->pool, p.os.n * p.nsplit, p.is.n >= 4096 ? 1 : 4096 / GPUML__MAX(p.is.n, 1), gpuml__reduce_task, &j);
        for (r = 0; r < p.os.n; r++) {
            gpuml__cacc a = j.part[r * p.nsplit];
            for (s = 1; s < p.nsplit; s++) gpuml__cacc_merge(kind, &a, &j.part[r * p.nsplit + s]);
            gpuml__cacc_store(kind, out->dtype, (char *)gpuml_tensor_data(out) + gpuml__row_off(&p.os, &p.oov, r) * es, &a,
                              p.is.n, correction);
        }
        gpuml__free(j.part);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_reduce(ctx, kind, out, x, &p);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__FN const char *gpuml__reduce_name(int kind)
{
    static const char *const n[6] = { "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax", "var" };
    return (unsigned)kind < 6 ? n[kind] : "reduce";
}
GPUML__FN gpuml_status gpuml__reduce(gpuml_ctx *ctx, const char *op, int kind, gpuml_tensor *out, const gpuml_tensor *x,
                                     const int *axes, int naxes, int keepdim, double correction)
{
    int red[GPUML_MAX_DIMS] = {0}, i, k, nout = 0;
    int64_t want[GPUML_MAX_DIMS], ostr[GPUML_MAX_DIMS] = {0};
    char s1[200], s2[200], s3[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    if ((unsigned)kind > GPUML_REDUCE_VAR) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: op %d is not a gpuml_reduce_op", op, kind);
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    if (kind == GPUML_REDUCE_ARGMAX) GPUML__TRY(gpuml__need_dtype(ctx, out, GPUML_I32, op, "out (argmax)"));
    else GPUML__TRY(gpuml__need_float(ctx, out, op, "out"));
    if (naxes < 0 || naxes > x->ndim || (naxes > 0 && !axes))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: naxes = %d with axes %s for a %d-d x", op, naxes,
                           axes ? "given" : "NULL", x->ndim);
    for (k = 0; k < naxes; k++) {
        int a = axes[k] < 0 ? axes[k] + x->ndim : axes[k];
        if (a < 0 || a >= x->ndim)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: axis %d is out of range for x %s", op, axes[k], gpuml__shape_str(x, s1, sizeof s1));
        if (red[a]) return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: axis %d is given twice", op, axes[k]);
        red[a] = 1;
    }
    if (naxes == 0) for (i = 0; i < x->ndim; i++) red[i] = 1;
    for (i = 0; i < x->ndim; i++) {
        if (!red[i]) want[nout++] = x->shape[i];
        else if (keepdim) want[nout++] = 1;
    }
    {
        int same = out->ndim == nout;
        for (i = 0; same && i < nout; i++) same = out->shape[i] == want[i];
        if (!same) {
            gpuml_tensor tmp = *out;
            tmp.ndim = nout;
            for (i = 0; i < nout; i++) tmp.shape[i] = want[i];
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: out is %s but reducing x %s %s gives %s", op,
                               gpuml__shape_str(out, s1, sizeof s1), gpuml__shape_str(x, s2, sizeof s2),
                               keepdim ? "(keepdim)" : "", gpuml__shape_str(&tmp, s3, sizeof s3));
        }
    }
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if (gpuml__overlap(out, x)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: out overlaps x", op);
    for (i = 0, k = 0; i < x->ndim; i++) {
        if (!red[i]) ostr[i] = out->strides[k++];
        else if (keepdim) k++;
    }
    if (kind == GPUML_REDUCE_MAX || kind == GPUML_REDUCE_MIN || kind == GPUML_REDUCE_ARGMAX) {
        int64_t n = 1;
        for (i = 0; i < x->ndim; i++) if (red[i]) n *= x->shape[i];
        if (n == 0 && gpuml__numel(out) > 0)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: max/min/argmax over an empty set of elements (x %s)", op,
                               gpuml__shape_str(x, s1, sizeof s1));
    }
    return GPUML__PROF(ctx, gpuml__reduce_run(ctx, kind, out, x, red, ostr, correction), gpuml__reduce_name(kind), GPUML_UNIT_FP32,
                       (double)gpuml__numel(x) * (kind == GPUML_REDUCE_VAR ? 3.0 : 1.0), gpuml__tb(x) + gpuml__tb(out), x, NULL, out);
}
GPUML__DEF gpuml_status gpuml_reduce(gpuml_ctx *ctx, gpuml_reduce_op op, gpuml_tensor *out, const gpuml_tensor *x,
                                     const int *axes, int naxes, int keepdim)
{
    return gpuml__reduce(ctx, "gpuml_reduce", (int)op, out, x, axes, naxes, keepdim, 1.0);
}
GPUML__DEF gpuml_status gpuml_var(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *x, const int *axes, int naxes,
                                  int keepdim, double correction)
{
    return gpuml__reduce(ctx, "gpuml_var", GPUML_REDUCE_VAR, out, x, axes, naxes, keepdim, correction);
}

GPUML__DEF gpuml_status gpuml_sum_to_shape(gpuml_ctx *ctx, gpuml_tensor *out, const gpuml_tensor *grad)
{
    static const char op[] = "gpuml_sum_to_shape";
    int red[GPUML_MAX_DIMS] = {0}, i, lead;
    int64_t ostr[GPUML_MAX_DIMS] = {0};
    char s1[200], s2[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, out, op, "out"));
    GPUML__TRY(gpuml__check_tensor(ctx, grad, op, "grad"));
    GPUML__TRY(gpuml__need_float(ctx, grad, op, "grad"));
    GPUML__TRY(gpuml__need_float(ctx, out, op, "out"));
    lead = grad->ndim - out->ndim;
    for (i = 0; i < grad->ndim && lead >= 0; i++) {
        int j = i - lead;
        if (j < 0) { red[i] = 1; continue; }
        if (out->shape[j] == grad->shape[i]) ostr[i] = out->strides[j];
        else if (out->shape[j] == 1) red[i] = 1;
        else break;
    }
    if (lead < 0 || i < grad->ndim)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: out %s does not broadcast to grad %s", op,
                           gpuml__shape_str(out, s1, sizeof s1), gpuml__shape_str(grad, s2, sizeof s2));
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if (gpuml__overlap(out, grad)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: out overlaps grad", op);
    return GPUML__PROF(ctx, gpuml__reduce_run(ctx, GPUML_REDUCE_SUM, out, grad, red, ostr, 0.0), "sum_to_shape", GPUML_UNIT_FP32,
                       (double)gpuml__numel(grad), gpuml__tb(grad) + gpuml__tb(out), grad, NULL, out);
}

/* ------------------------------------------------------------------ row ops ---- */
/* softmax, log_softmax, layernorm, rmsnorm, their backward passes and cross-entropy all
   work on rows: one axis of x (length n) for every index of the other dims.  The layout
   matches struct gpuml__nparams of kernels/norm.cu. */
enum { GPUML__ROW_SOFTMAX = 0, GPUML__ROW_LOG_SOFTMAX, GPUML__ROW_LAYERNORM, GPUML__ROW_RMSNORM,
       GPUML__ROW_LAYERNORM_BWD, GPUML__ROW_RMSNORM_BWD, GPUML__ROW_XENT };
typedef struct gpuml__nplan {
    gpuml__kshape rs;
    gpuml__kview v[3];          /* x, y (dx), dy */
    int64_t n;
    int64_t xs, ys, dys, ws, bs, ls;
    float eps, scale;
    int64_t pf;                 /* GPU: prefetch into L2 the row this many rows ahead (0: none) */
} gpuml__nplan;

typedef struct gpuml__rowop {
    int kind;
    const gpuml_tensor *x, *dy, *w, *b, *labels;
    gpuml_tensor *y;            /* y, dx or dlogits (may be NULL for cross-entropy) */
    gpuml_tensor *dw, *db;      /* backward parameter gradients (may be NULL) */
    gpuml_tensor *loss;         /* cross-entropy */
    int axis;
    double eps;
} gpuml__rowop;

GPUML__FN void gpuml__nplan_make(gpuml__nplan *p, const gpuml__rowop *r)
{
    const gpuml_tensor *t[3];
    int d, k, nd = 0;
    t[0] = r->x; t[1] = r->y ? r->y : r->x; t[2] = r->dy ? r->dy : r->x;
    memset(p, 0, sizeof *p);
    p->rs.n = 1;
    for (d = 0; d < r->x->ndim; d++) {
        int64_t sz = r->x->shape[d];
        int merge = nd > 0;
        if (d == r->axis) continue;
        p->rs.n *= sz;
        if (sz == 1) continue;
        for (k = 0; k < 3 && merge; k++) if (p->v[k].strides[nd - 1] != t[k]->strides[d] * sz) merge = 0;
        if (merge) {
            p->rs.dims[nd - 1] *= sz;
            for (k = 0; k < 3; k++) p->v[k].strides[nd - 1] = t[k]->strides[d];
        } else {
            p->rs.dims[nd] = sz;
            for (k = 0; k < 3; k++) p->v[k].strides[nd] = t[k]->strides[d];
            nd++;
        }
    }
    p->rs.ndim = nd;
    p->n = r->x->ndim ? r->x->shape[r->axis] : 1;
    p->xs = r->x->ndim ? t[0]->strides[r->axis] : 1;
    p->ys = r->x->ndim ? t[1]->strides[r->axis] : 1;
    p->dys = r->x->ndim ? t[2]->strides[r->axis] : 1;
    p->ws = r->w ? r->w->strides[0] : 0;
    p->bs = r->b ? r->b->strides[0] : 0;
    p->ls = r->labels ? r->labels->strides[0] : 0;
    p->eps = (float)r->eps;
    p->scale = r->kind == GPUML__ROW_XENT ? (float)(1.0 / (double)GPUML__MAX(p->rs.n, 1)) : 1.0f;
}

/* out[i] = exp(x[i] - mx) for a row, returning the sum (in double).  NaN stays NaN.  The AVX2
   path uses gpuml__v8_exp2_neg (base 2, 7.9e-8; 0 below 2^-126.5, where f32 would go subnormal); the
   scalar path uses expf. */
#if GPUML__HAVE_AVX2_PATH
/* the softmax's exp frame for a running max M: exp(x - M) = 2^(x l2e - sh) 2^-c with l2e = log2e rounded
   to f32 (the factor the vector loops' FMAs use), sh = M l2e rounded to f32 and c = M l2e - sh (the
   values carry 2^c, a factor common to a block that the normalization divides out; the log-softmax adds c
   ln2).  |M l2e| > 2^23: exp(x - M) itself, c = 0 (sh's ulp would make |c| up to half of it: at 1.5e10
   c was -488, 2^c 0 in f32, and the softmax of such rows NaN, the log-softmax inf; with M log2e in place
   of M l2e, x l2e - sh was off by 1.9e-8 M besides, and the log-softmax by that times ln2). */
GPUML__FN void gpuml__sm_frame(float mx, float *sh, double *c, int *big)
{
    const double ml = mx == -INFINITY ? 0.0 : (double)mx * (double)1.44269504088896341f;
    *big = fabs(ml) > 8388608.0;
    *sh = *big ? mx : (float)ml;
    *c = *big ? 0.0 : ml - (double)*sh;
}
/* 2^z for z <= 0 (or NaN, kept): z = k + f with k = round(z) in the low mantissa bits of t = z + 1.5 * 2^23
   + 127 (which shifted left by 23 are k + 127 in the exponent field: 2^k), f in [-1/2, 1/2], 2^f by a
   polynomial of degree deg: 6 (relative error 7.9e-8 with its f32 Horner rounding) or 5 (1.8e-7, for
   16-bit results only, one FMA fewer; Lawson-weighted fits); z clamped at -127 first, where the
   exponent field 0 makes 2^k and the result 0 (below -126.5; f32 would go subnormal).  Besides the
   FMAs 6 ops, where floor, cvt and a mask for the underflow took 8. */
GPUML__V8K_INLINE __m256 gpuml__v8_exp2_poly(__m256 f, int deg)
{
    __m256 p;
    if (deg == 5) {
        p = _mm256_fmadd_ps(_mm256_set1_ps(1.3302209554e-03f), f, _mm256_set1_ps(9.6729323268e-03f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.5506151170e-02f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.4022217095e-01f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.9314706326e-01f));
    } else {
        p = _mm256_fmadd_ps(_mm256_set1_ps(1.5345810971e-04f), f, _mm256_set1_ps(1.3399930904e-03f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.6184890717e-03f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.5503286421e-02f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.4022646248e-01f));
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.9314718246e-01f));
    }
    return _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
}
GPUML__V8K_INLINE __m256 gpuml__v8_exp2_neg(__m256 z, int deg)
{
    const __m256 mg = _mm256_set1_ps(12583039.0f);   /* 1.5 * 2^23 + 127 */
    __m256 t, f;
    z = _mm256_max_ps(_mm256_set1_ps(-127.0f), z);   /* NaN kept: max returns its second operand */
    t = _mm256_add_ps(z, mg);
    f = _mm256_sub_ps(z, _mm256_sub_ps(t, mg));
    return _mm256_mul_ps(gpuml__v8_exp2_poly(f, deg), _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23)));
}
/* 2^(x l2e - sh) for a frame whose sh is an integer (|sh| < 2^22), where the caller knows the result's
   z = x l2e - sh >= -124 (x finite): vc = 1.5 * 2^23 - sh, t = x l2e + vc by one FMA rounds z to k in t's low
   bits, t - vc = k + sh exactly, f = x l2e - (k + sh) by another (one rounding), and 2^k goes into p's
   exponent field by an integer add (k >= -125 and p >= 1/2: the result normal, the multiply's bits): 10
   ops for 8 where gpuml__v8_exp2_neg after its x l2e - sh takes 12 (no clamp, one rounding step fewer). */
GPUML__V8K_INLINE __m256 gpuml__v8_exp2_fr(__m256 x, __m256 l2e, __m256 vc, int deg)
{
    const __m256 t = _mm256_fmadd_ps(x, l2e, vc), f = _mm256_fmsub_ps(x, l2e, _mm256_sub_ps(t, vc));
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(gpuml__v8_exp2_poly(f, deg)), _mm256_slli_epi32(_mm256_castps_si256(t), 23)));
}
/* out[i] = exp(x[i] - mx) (x[i] <= mx: the row's max), returns their sum: exp in base 2 (the
   natural-base form with its range checks cost ~1.6x the instructions), summed in f32 per block of
   1024 and the blocks in double; pf (not NULL): the next row, prefetched into L1 while this one computes
   (its max pass then reads from cache).  frame (c not NULL): in gpuml__sm_frame's frame, x log2e - sh by one
   FMA, the values and the sum carrying 2^c (*c), which a softmax's normalization divides out (the
   log-softmax adds c ln2); else (x - mx) log2e.  fast (with c): the caller knows every x finite, |mx| <=
   65536 and (mx - min x) log2e <= 123: sh = mx l2e rounded to an integer (|c| <= 1/2) and
   gpuml__v8_exp2_fr (z = x log2e - sh >= -124: c and the error of log2e in f32, < 0.01 there, add at most
   0.51). */
GPUML__V8K_INLINE double gpuml__exp_shift_body(const char *x, int kx, float mx, float *out, int64_t n, int deg, double *c, const char *pf, int fast)
{
    const int64_t ex = kx ? 2 : 4;
    const __m256 l2e = _mm256_set1_ps(1.44269504088896341f);
    __m256 vsh;
    double s = 0, cf = 0;
    int64_t b0, i = 0;
    int big = 1;
    float sh = mx;
    if (c) gpuml__sm_frame(mx, &sh, &cf, &big);
    if (fast) {
        const double ml = (double)mx * (double)1.44269504088896341f;
        sh = (float)floor(ml + 0.5);
        cf = ml - (double)sh;
        vsh = _mm256_set1_ps(12582912.0f - sh);   /* vc of gpuml__v8_exp2_fr */
    } else {
        vsh = _mm256_set1_ps(sh);
    }
    if (c) *c = cf;
#define GPUML__EZ(v) (big ? _mm256_mul_ps(_mm256_sub_ps((v), vsh), l2e) : _mm256_fmsub_ps((v), l2e, vsh))
#define GPUML__E2(v) (fast ? gpuml__v8_exp2_fr((v), l2e, vsh, deg) : gpuml__v8_exp2_neg(GPUML__EZ(v), deg))
    for (b0 = 0; b0 + 8 <= n; b0 += 1024) {
        const int64_t b1 = GPUML__MIN(b0 + 1024, n);
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, t;
        double u[8];
        for (i = b0; i + 16 <= b1; i += 16) {
            __m256 y, w;
            if (fast) {   /* (bf16: the 16 in gpuml__v8x2_ldk_any's order; a softmax's output pass puts them back) */
                gpuml__v8x2_ldk_any(x + i * ex, kx, &y, &w);
                y = GPUML__E2(y);
                w = GPUML__E2(w);
            } else {
                y = GPUML__E2(gpuml__v8_ldk(x + i * ex, kx));
                w = GPUML__E2(gpuml__v8_ldk(x + (i + 8) * ex, kx));
            }
            if (pf) _mm_prefetch(pf + i * ex, _MM_HINT_T0);
            _mm256_storeu_ps(out + i, y);
            _mm256_storeu_ps(out + i + 8, w);
            a0 = _mm256_add_ps(a0, y);
            a1 = _mm256_add_ps(a1, w);
        }
        for (; i + 8 <= b1; i += 8) {
            const __m256 y = GPUML__E2(gpuml__v8_ldk(x + i * ex, kx));
            _mm256_storeu_ps(out + i, y);
            a0 = _mm256_add_ps(a0, y);
        }
        t = _mm256_add_ps(a0, a1);
        _mm256_storeu_pd(u, _mm256_cvtps_pd(_mm256_castps256_ps128(t)));
        _mm256_storeu_pd(u + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(t, 1)));
        s += ((u[0] + u[1]) + (u[2] + u[3])) + ((u[4] + u[5]) + (u[6] + u[7]));
        if (i < b1) break;   /* the last few elements of the row: below */
    }
#undef GPUML__EZ
#undef GPUML__E2
    for (; i < n; i++) {
        const float v = GPUML__KLD(kx, x, i);
        out[i] = big ? expf(v - mx) : (float)exp2((double)v * (double)1.44269504088896341f - (double)sh);   /* the frame's l2e */
        s += out[i];
    }
    return s;
}
/* c NULL: exp(x - mx) itself; else in the frame of M = mx (*c: see gpuml__exp_shift_body), deg 5 where
   the results are 16-bit; fast (16-bit x, with d5 and c): see gpuml__exp_shift_body */
GPUML__FN GPUML__F16C_TARGET double gpuml__exp_shift_k_avx2(const char *x, int kx, float mx, float *out, int64_t n, int d5, double *c,
                                                             const char *pf, int fast)
{
#define GPUML__C5(k) gpuml__exp_shift_body(x, k, mx, out, n, 5, c, pf, 0)
#define GPUML__C6(k) gpuml__exp_shift_body(x, k, mx, out, n, 6, c, pf, 0)
    if (!c) return gpuml__exp_shift_body(x, 0, mx, out, n, 6, NULL, NULL, 0);
    if (fast && d5 && kx == 1) return gpuml__exp_shift_body(x, 1, mx, out, n, 5, c, pf, 1);
    if (fast && d5 && kx == 2) return gpuml__exp_shift_body(x, 2, mx, out, n, 5, c, pf, 1);
    return d5 ? GPUML__K3(kx, GPUML__C5) : GPUML__K3(kx, GPUML__C6);
#undef GPUML__C5
#undef GPUML__C6
}
GPUML__FN double gpuml__exp_shift_avx2(const float *x, float mx, float *out, int64_t n)
{
    return gpuml__exp_shift_k_avx2((const char *)(const void *)x, 0, mx, out, n, 0, NULL, NULL, 0);
}
#endif
GPUML__FN double gpuml__exp_shift(const float *x, float mx, float *out, int64_t n)
{
    double s = 0;
    int64_t i;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 1) return gpuml__exp_shift_avx2(x, mx, out, n);
#endif
    for (i = 0; i < n; i++) { out[i] = expf(x[i] - mx); s += out[i]; }
    return s;
}


#if GPUML__HAVE_AVX2_PATH
#if defined(__GNUC__) && !defined(__clang__)
/* g++ 12 takes the undefined operand inside GCC's own AVX-512 intrinsics for an uninitialized variable */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
/* AVX-512 forward rows, x and y dense f32, bf16 or f16 (xb, yb: gpuml__v16_kind), converted in registers.  Softmax reads
   the row from memory once: per block of GPUML__SM_BLK elements the block max updates the running
   max M (the running sum is rescaled by exp(M_old - M) in double), exp(x - M) goes to the scratch e
   and into the sum, and M is kept per block in bm; the output pass (from e, in cache) scales block
   b by exp(bm[b] - M) / sum.  Blocks whose running max is still -inf (all -inf or NaN so far) take
   exp(x - 0), which is 0 or NaN as the final answer needs.  log-softmax needs no e.  Cross-entropy
   (lab >= 0, loss not NULL): *loss = M + log(sum) - x[lab], the outputs (p - [i == lab]) scale, y may
   be NULL (the loss only).  The norms
   take one pass over the row for the statistics: rmsnorm sums squares in f32 per block and the
   blocks in double; layernorm sums each block's values and squares around a shift (the mean so far;
   the first block: the mean of its first 64) and merges the blocks' (count, mean, M2) in double
   (Chan et al.), so the variance does not cancel however large the mean.  Softmax prefetches the next row (pf) in
   its exp pass (bench/cpu_ops_cycles in memory, one thread: f32 1.60 -> 1.46 cycles an element, bf16 1.00 -> 0.92
   against the output pass), the norms in their output pass
   so that its read overlaps the stores; outputs far larger than the caches (stream) are stored
   non-temporally, and the caller fences (_mm_sfence) once after its rows, not per row. */
#define GPUML__SM_BLK 1024
GPUML__V16_INLINE void gpuml__v16_pf(const char *p) { _mm_prefetch(p, _MM_HINT_T0); }
GPUML__FN GPUML__AVX512_TARGET void gpuml__softmax_row_avx512(const char *x, int xb, char *y, int yb, int64_t n, int logsm, float *e,
                                                             float *bm, int stream, const char *pf, float scale, int64_t lab, double *loss)
{
    const int64_t ex = xb ? 2 : 4, ey = yb ? 2 : 4;
    float mx = -INFINITY;
    double s = 0, c = 0;
    int64_t b0, i, nb;
    int big = 0;
    __m512 sh = _mm512_setzero_ps();
    for (b0 = 0, nb = 0; b0 < n; b0 += GPUML__SM_BLK, nb++) {
        const int64_t b1 = GPUML__MIN(b0 + GPUML__SM_BLK, n);
        const char *nx = x + GPUML__MIN(b1 + GPUML__SM_BLK, n) * ex;   /* the next block, prefetched during this one's exp */
        __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0, a0 = _mm512_setzero_ps(), a1 = a0;
        const __m512 l2e = _mm512_set1_ps(1.44269504088896341f);
        float bmx;
        /* max_ps(v, m) returns m for a NaN v: NaN is skipped, as the scalar loop does */
        for (i = b0; i + 64 <= b1; i += 64) {   /* four chains: vmaxps's latency, not its throughput, bound two */
            m0 = _mm512_max_ps(gpuml__v16_ld(x + i * ex, xb, 0xffff), m0);
            m1 = _mm512_max_ps(gpuml__v16_ld(x + (i + 16) * ex, xb, 0xffff), m1);
            m2 = _mm512_max_ps(gpuml__v16_ld(x + (i + 32) * ex, xb, 0xffff), m2);
            m3 = _mm512_max_ps(gpuml__v16_ld(x + (i + 48) * ex, xb, 0xffff), m3);
        }
        for (; i < b1; i += 16) {
            __mmask16 m = gpuml__v16_mask(b1 - i);
            m0 = _mm512_mask_max_ps(m0, m, gpuml__v16_ld(x + i * ex, xb, m), m0);
        }
        bmx = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
        if (bmx > mx) {
            float sh1;
            double c1;
            gpuml__sm_frame(bmx, &sh1, &c1, &big);
            if (s != 0.0) s *= exp((double)mx - (double)bmx) * exp2(c1 - c);
            mx = bmx; c = c1; sh = _mm512_set1_ps(sh1);
        }
        bm[nb] = mx;
        for (i = b0; i + 32 <= b1; i += 32) {
            __m512 v = gpuml__v16_ld(x + i * ex, xb, 0xffff), w = gpuml__v16_ld(x + (i + 16) * ex, xb, 0xffff);
            if (big) {
                v = gpuml__v16_exp_small(_mm512_sub_ps(v, sh));
                w = gpuml__v16_exp_small(_mm512_sub_ps(w, sh));
            } else {
                v = gpuml__v16_exp2(_mm512_fmsub_ps(v, l2e, sh));
                w = gpuml__v16_exp2(_mm512_fmsub_ps(w, l2e, sh));
            }
            /* the next row (pf) during the exp pass, where the core computes and the memory would idle; else
               the block after the next of this row */
            if (pf) { gpuml__v16_pf(pf + i * ex); if (ex == 4) gpuml__v16_pf(pf + (i + 16) * ex); }
            else if (b1 + (i - b0) < n) gpuml__v16_pf(nx + (i - b0) * ex);
            if (!logsm) { _mm512_storeu_ps(e + i, v); _mm512_storeu_ps(e + i + 16, w); }
            a0 = _mm512_add_ps(a0, v);
            a1 = _mm512_add_ps(a1, w);
        }
        for (; i < b1; i += 16) {
            __mmask16 m = gpuml__v16_mask(b1 - i);
            __m512 v = gpuml__v16_ld(x + i * ex, xb, m);
            v = big ? gpuml__v16_exp_small(_mm512_sub_ps(v, sh)) : gpuml__v16_exp2(_mm512_fmsub_ps(v, l2e, sh));
            if (!logsm) _mm512_mask_storeu_ps(e + i, m, v);
            a0 = _mm512_mask_add_ps(a0, m, a0, v);
        }
        s += (double)_mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    }
    if (loss) *loss = (double)mx + log(s) - c * 0.69314718055994531 - (double)gpuml__ld_f32(xb == 2 ? GPUML_F16 : xb ? GPUML_BF16 : GPUML_F32, x + lab * ex);
    if (!y) return;
    if (logsm) {   /* s = sum exp(x - M) 2^c */
        /* the constant as two floats (gpuml__vlsm_body) */
        const double lc = -(double)mx - log(s) + c * 0.69314718055994531;
        const __m512 ch = _mm512_set1_ps((float)lc), cl = _mm512_set1_ps((float)(lc - (double)(float)lc));
        for (i = 0; i < n; i += 16) {
            __mmask16 m = gpuml__v16_mask(n - i);
            char *yp = y + i * ey;
            gpuml__v16_st(yp, yb, _mm512_add_ps(_mm512_add_ps(gpuml__v16_ld(x + i * ex, xb, m), ch), cl), m, stream && m == 0xffff && gpuml__v16_nt_ok(yp, yb));
        }
    } else {
        for (b0 = 0, nb = 0; b0 < n; b0 += GPUML__SM_BLK, nb++) {
            const int64_t b1 = GPUML__MIN(b0 + GPUML__SM_BLK, n);
            double fb = 1.0;
            __m512 f;
            if (bm[nb] != -INFINITY && bm[nb] != mx) {   /* block b's values carry 2^c_b, relative to M_b */
                float shb;
                double cb;
                int bigb;
                gpuml__sm_frame(bm[nb], &shb, &cb, &bigb);
                fb = exp((double)bm[nb] - (double)mx) * exp2(c - cb);
            }
            f = _mm512_set1_ps((float)(fb / s * scale));
            for (i = b0; i < b1; i += 16) {
                __mmask16 m = gpuml__v16_mask(b1 - i);
                char *yp = y + i * ey;
                gpuml__v16_st(yp, yb, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, e + i), f), m, stream && m == 0xffff && gpuml__v16_nt_ok(yp, yb));
            }
            if (lab >= b0 && lab < b1)   /* cross-entropy: (p - 1) scale at the label */
                gpuml__st_f32(yb == 2 ? GPUML_F16 : yb ? GPUML_BF16 : GPUML_F32, y + lab * ey, (float)(((double)e[lab] * fb / s - 1.0) * scale));
        }
    }
}
/* the statistics of a dense row for layernorm (rms = 0: mean, sum of squares around it) or rmsnorm
   (mean 0, sum of squares); returns that sum, *mean the mean */
GPUML__FN GPUML__AVX512_TARGET double gpuml__norm_stats_avx512(const char *x, int xb, int64_t n, int rms, double *mean_out)
{
    const int64_t ex = xb ? 2 : 4;
    double cnt = 0, mean = 0, m2 = 0;
    int64_t b0, i;
    for (b0 = 0; b0 < n; b0 += GPUML__SM_BLK) {
        const int64_t b1 = GPUML__MIN(b0 + GPUML__SM_BLK, n), nb = b1 - b0;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, c0 = a0, c1 = a0, c2 = a0, c3 = a0, mb;
        double sd, bmean;
        if (rms) {
            for (i = b0; i + 64 <= b1; i += 64) {   /* four FMA chains (latency-bound with two) */
                __m512 v = gpuml__v16_ld(x + i * ex, xb, 0xffff), u = gpuml__v16_ld(x + (i + 16) * ex, xb, 0xffff);
                __m512 v2 = gpuml__v16_ld(x + (i + 32) * ex, xb, 0xffff), u2 = gpuml__v16_ld(x + (i + 48) * ex, xb, 0xffff);
                a0 = _mm512_fmadd_ps(v, v, a0);
                a1 = _mm512_fmadd_ps(u, u, a1);
                c0 = _mm512_fmadd_ps(v2, v2, c0);
                c1 = _mm512_fmadd_ps(u2, u2, c1);
            }
            for (; i < b1; i += 16) {
                __m512 v = gpuml__v16_ld(x + i * ex, xb, gpuml__v16_mask(b1 - i));
                a0 = _mm512_fmadd_ps(v, v, a0);
            }
            m2 += (double)_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(c0, c1)));
            continue;
        }
        /* one pass per block around a shift mb: the running mean of the blocks before (the block's sum of
           squares then exceeds its M2 by nb d^2, which is bounded by tot/cnt <= 2 times what the merge adds
           to the row's M2: at most one bit lost), for the first block the mean of its first 64 elements
           (their distance from the row mean is at most sqrt(M2/64): at most 1 + n/64 times M2 to cancel) */
        if (b0 == 0) {
            const int64_t k = GPUML__MIN(nb, 64);
            for (i = 0; i < k; i += 16) a0 = _mm512_add_ps(a0, gpuml__v16_ld(x + i * ex, xb, gpuml__v16_mask(k - i)));
            mb = _mm512_set1_ps(_mm512_reduce_add_ps(a0) / (float)k);
            a0 = _mm512_setzero_ps();
        } else {
            mb = _mm512_set1_ps((float)mean);
        }
        for (i = b0; i + 64 <= b1; i += 64) {   /* 64 a step: four chains of each sum (latency) */
            __m512 v = _mm512_sub_ps(gpuml__v16_ld(x + i * ex, xb, 0xffff), mb);
            __m512 u = _mm512_sub_ps(gpuml__v16_ld(x + (i + 16) * ex, xb, 0xffff), mb);
            __m512 v2 = _mm512_sub_ps(gpuml__v16_ld(x + (i + 32) * ex, xb, 0xffff), mb);
            __m512 u2 = _mm512_sub_ps(gpuml__v16_ld(x + (i + 48) * ex, xb, 0xffff), mb);
            a0 = _mm512_add_ps(a0, v);
            a1 = _mm512_add_ps(a1, u);
            a2 = _mm512_add_ps(a2, v2);
            a3 = _mm512_add_ps(a3, u2);
            c0 = _mm512_fmadd_ps(v, v, c0);
            c1 = _mm512_fmadd_ps(u, u, c1);
            c2 = _mm512_fmadd_ps(v2, v2, c2);
            c3 = _mm512_fmadd_ps(u2, u2, c3);
        }
        for (; i < b1; i += 16) {
            __mmask16 m = gpuml__v16_mask(b1 - i);
            __m512 v = _mm512_maskz_sub_ps(m, gpuml__v16_ld(x + i * ex, xb, m), mb);
            a0 = _mm512_add_ps(a0, v);
            c0 = _mm512_fmadd_ps(v, v, c0);
        }
        /* the block: mean mb + sd / nb, M2 = sum (x - mb)^2 - sd^2 / nb; merged into the row's */
        sd = (double)_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        bmean = (double)_mm512_cvtss_f32(mb) + sd / (double)nb;
        {
            double bm2 = (double)_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3))) -
                         sd * sd / (double)nb, d = bmean - mean, tot = cnt + (double)nb;
            mean += d * ((double)nb / tot);
            m2 += bm2 + d * d * cnt * ((double)nb / tot);
            cnt = tot;
        }
    }
    *mean_out = mean;
    return m2;
}
/* layernorm (rms = 0) or rmsnorm of one dense row; w, b: f32 or NULL */
GPUML__FN GPUML__AVX512_TARGET void gpuml__norm_row_avx512(const char *x, int xb, char *y, int yb, int64_t n, int rms, double eps,
                                                          const float *w, const float *b, int stream, const char *pf)
{
    const int64_t ex = xb ? 2 : 4, ey = yb ? 2 : 4;
    double mean = 0, m2 = gpuml__norm_stats_avx512(x, xb, n, rms, &mean);
    __m512 vm, vl, vr;
    int64_t i;
    m2 /= (double)n;
    /* the mean as two floats: x - mean stays accurate when |mean| is much larger than the spread */
    vm = _mm512_set1_ps((float)mean);
    vl = _mm512_set1_ps((float)(mean - (double)(float)mean));
    vr = _mm512_set1_ps((float)(1.0 / sqrt((m2 < 0.0 ? 0.0 : m2) + eps)));
    for (i = 0; i < n; i += 16) {
        __mmask16 m = gpuml__v16_mask(n - i);
        char *yp = y + i * ey;
        __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(gpuml__v16_ld(x + i * ex, xb, m), vm), vl), vr);
        if (pf) gpuml__v16_pf(pf + i * ex);
        if (w) v = b ? _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, w + i), _mm512_maskz_loadu_ps(m, b + i)) : _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, w + i));
        else if (b) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, b + i));
        gpuml__v16_st(yp, yb, v, m, stream && m == 0xffff && gpuml__v16_nt_ok(yp, yb));
    }
}
/* acc[0..16) += the lanes of m of v, in double */
GPUML__V16_INLINE void gpuml__v16_acc_pd(double *acc, __m512 v, __mmask16 m)
{
    const __mmask8 lo = (__mmask8)m, hi = (__mmask8)(m >> 8);
    const __m256 vh = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    _mm512_mask_storeu_pd(acc, lo, _mm512_add_pd(_mm512_maskz_loadu_pd(lo, acc), _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
    _mm512_mask_storeu_pd(acc + 8, hi, _mm512_add_pd(_mm512_maskz_loadu_pd(hi, acc + 8), _mm512_cvtps_pd(vh)));
}
/* layernorm / rmsnorm backward of one dense row (x, dy, dx f32, bf16 or f16; w f32 or NULL): xh = (x - mean) rstd,
   g = dy w, dx = rstd (g - mean(g) - xh mean(g xh)) (mean(g) = 0 for rmsnorm); dweight and dbias accumulate
   in double (acc[i] += dy xh, acc[n + i] += dy), the row sums in f32 per block of GPUML__SM_BLK and in
   double across blocks.  Three passes over the row: statistics, sums, output (the row stays in L2). */
GPUML__FN GPUML__AVX512_TARGET void gpuml__norm_bwd_row_avx512(const char *x, int xb, const char *dy, int db, char *dx, int dxb, int64_t n,
                                                              int rms, double eps, const float *w, double *acc)
{
    const int64_t ex = xb ? 2 : 4, ed = db ? 2 : 4, eo = dxb ? 2 : 4;
    double mean = 0, m2 = gpuml__norm_stats_avx512(x, xb, n, rms, &mean) / (double)n, rstd, sg = 0, sgx = 0;
    __m512 vm, vl, vr, vsg, vsgx;
    int64_t b0, i;
    rstd = 1.0 / sqrt((m2 < 0.0 ? 0.0 : m2) + eps);
    vm = _mm512_set1_ps((float)mean);
    vl = _mm512_set1_ps((float)(mean - (double)(float)mean));
    vr = _mm512_set1_ps((float)rstd);
    for (b0 = 0; b0 < n; b0 += GPUML__SM_BLK) {
        const int64_t b1 = GPUML__MIN(b0 + GPUML__SM_BLK, n);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (i = b0; i < b1; i += 16) {
            __mmask16 m = gpuml__v16_mask(b1 - i);
            __m512 xh = _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(gpuml__v16_ld(x + i * ex, xb, m), vm), vl), vr);
            __m512 d = gpuml__v16_ld(dy + i * ed, db, m), g = w ? _mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, w + i)) : d, t = _mm512_mul_ps(d, xh);
            a0 = _mm512_add_ps(a0, g);
            a1 = _mm512_fmadd_ps(g, xh, a1);
            gpuml__v16_acc_pd(acc + i, t, m);
            gpuml__v16_acc_pd(acc + n + i, d, m);
        }
        sg += (double)_mm512_reduce_add_ps(a0);
        sgx += (double)_mm512_reduce_add_ps(a1);
    }
    vsg = _mm512_set1_ps(rms ? 0.0f : (float)(sg / (double)n));
    vsgx = _mm512_set1_ps((float)(sgx / (double)n));
    for (i = 0; i < n; i += 16) {
        __mmask16 m = gpuml__v16_mask(n - i);
        __m512 xh = _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(gpuml__v16_ld(x + i * ex, xb, m), vm), vl), vr);
        __m512 d = gpuml__v16_ld(dy + i * ed, db, m), g = w ? _mm512_mul_ps(d, _mm512_maskz_loadu_ps(m, w + i)) : d;
        gpuml__v16_st(dx + i * eo, dxb, _mm512_mul_ps(vr, _mm512_fnmadd_ps(xh, vsgx, _mm512_sub_ps(g, vsg))), m, 0);
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

/* ---- CPU ---- */
typedef struct gpuml__rowjob {
    const gpuml__rowop *r;
    const gpuml__nplan *p;
    const float *w, *b;         /* weight and bias as floats (NULL: none) */
    int wb_fin;                 /* every w and b finite (the AVX2 norms' outputs then NaN only where a row's statistics are) */
    double *acc;                /* backward: per thread [dw | db], 2n doubles each */
    double *loss;               /* cross-entropy: per row */
} gpuml__rowjob;

GPUML__FN void gpuml__rows_task(void *arg, int64_t rb, int64_t re, int tid)
{
    const gpuml__rowjob *j = (const gpuml__rowjob *)arg;
    const gpuml__rowop *r = j->r;
    const gpuml__nplan *p = j->p;
    int64_t n = p->n, row, i;
    gpuml_dtype dt = r->x->dtype;
    int64_t es = (int64_t)gpuml__dtype_sizes[dt];
    float *buf = (float *)gpuml__malloc(sizeof(float) * (size_t)(3 * n + 1));
    float *xb, *yb, *db;
#if GPUML__HAVE_AVX2_PATH
    int vec = gpuml__cpu_simd() >= 1 && (!r->w || j->w) && (!r->b || j->b);
    /* AVX-512: forward softmax, log-softmax and norms of dense f32 / bf16 / f16 rows, no row buffers */
    int rows16 = vec && gpuml__cpu_simd() >= 2 && (dt == GPUML_F32 || dt == GPUML_BF16 || dt == GPUML_F16) && p->xs == 1 && p->ys == 1 &&
                 (r->kind == GPUML__ROW_SOFTMAX || r->kind == GPUML__ROW_LOG_SOFTMAX || r->kind == GPUML__ROW_LAYERNORM ||
                  r->kind == GPUML__ROW_RMSNORM || r->kind == GPUML__ROW_XENT ||
                  ((r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD) && p->dys == 1));
    int stream = p->rs.n * n * es >= GPUML__STREAM_BYTES, k16 = gpuml__v16_kind(dt);
#endif
    if (!buf) return;   /* cannot happen on any real machine; leaves the output as it was */
    xb = buf; yb = buf + n; db = buf + 2 * n;
    for (row = rb; row < re; row++) {
        const char *xp = (const char *)gpuml_tensor_data(r->x) + gpuml__row_off(&p->rs, &p->v[0], row) * es;
        char *yp = r->y ? (char *)gpuml_tensor_data(r->y) + gpuml__row_off(&p->rs, &p->v[1], row) * es : NULL;
        const float *x = NULL, *dy = NULL;
        double mean = 0, rstd = 0, s = 0, mx = -HUGE_VAL;
#if GPUML__HAVE_AVX2_PATH
        if (rows16 && r->kind == GPUML__ROW_XENT) {   /* a valid label: the vector softmax with the loss; else the scalar path (NaN) */
            int32_t lab;
            memcpy(&lab, (const char *)gpuml_tensor_data(r->labels) + row * p->ls * 4, 4);
            if (lab >= 0 && lab < n) {
                gpuml__softmax_row_avx512(xp, k16, yp, k16, n, 0, yb, db, 0, NULL, p->scale, lab, &j->loss[row]);
                continue;
            }
        } else if (rows16 && yp && n >= 16 && (r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD)) {
            /* (rows shorter than a vector keep the double path: a row of 1 cancels in f32, rmsnorm's dx = rstd g (1 - xh^2)) */
            const char *dyp = (const char *)gpuml_tensor_data(r->dy) + gpuml__row_off(&p->rs, &p->v[2], row) * es;
            gpuml__norm_bwd_row_avx512(xp, k16, dyp, k16, yp, k16, n, r->kind == GPUML__ROW_RMSNORM_BWD,
                                       r->eps, j->w, j->acc + (size_t)tid * 2 * (size_t)n);
            continue;
        } else if (rows16 && yp && r->kind != GPUML__ROW_XENT && r->kind != GPUML__ROW_LAYERNORM_BWD && r->kind != GPUML__ROW_RMSNORM_BWD) {
            const char *pf = row + 1 < re ? (const char *)gpuml_tensor_data(r->x) + gpuml__row_off(&p->rs, &p->v[0], row + 1) * es : NULL;
            if (r->kind == GPUML__ROW_SOFTMAX || r->kind == GPUML__ROW_LOG_SOFTMAX)
                gpuml__softmax_row_avx512(xp, k16, yp, k16, n, r->kind == GPUML__ROW_LOG_SOFTMAX, yb, db, stream, pf,
                                          1.0f, -1, NULL);
            else
                gpuml__norm_row_avx512(xp, k16, yp, k16, n, r->kind == GPUML__ROW_RMSNORM, r->eps, j->w, j->b, stream, pf);
            continue;
        }
        /* AVX2 forward softmax, log-softmax and norms: dense rows of any dtype read and written in
           registers, others through the row buffers (x in xb, the result in yb); the softmax's
           exponentials go to a dense f32 output itself where it is not streamed (unless a log-softmax
           in place; through yb the f32 softmax took 1.2x the time there), else to yb: a streamed y
           written twice paid its read for ownership (rows of 1024 0.53-0.59 -> 0.75-0.92 of memcpy,
           bench/NOTES_ops.md) */
        if (vec && yp && (r->kind == GPUML__ROW_SOFTMAX || r->kind == GPUML__ROW_LOG_SOFTMAX || r->kind == GPUML__ROW_LAYERNORM ||
                          r->kind == GPUML__ROW_RMSNORM)) {
            const int dense = p->xs == 1 && p->ys == 1 && (k16 != 2 || gpuml__cpu_has_f16c()), kx = dense ? k16 : 0;
            const char *xr = dense ? xp : (const char *)(const void *)gpuml__cpu_ld(dt, xp, p->xs * es, n, xb);
            char *yr = dense ? yp : (char *)(void *)yb;
            float mf, *e = dense && kx == 0 && !stream && (r->kind == GPUML__ROW_SOFTMAX || yp != xp) ? (float *)(void *)yp : yb;
            /* the next dense row, prefetched during the softmax's exp pass or the norms' output pass (1
               thread, bf16 rows of 8192: the max pass took 23% of the softmax's time, reading the row from
               memory); not rows of 1024 or less, where the softmax gained nothing (f32 lost ~5%) */
            const char *pf = dense && n > 1024 && row + 1 < re ? (const char *)gpuml_tensor_data(r->x) + gpuml__row_off(&p->rs, &p->v[0], row + 1) * es : NULL;
            if (r->kind == GPUML__ROW_SOFTMAX || r->kind == GPUML__ROW_LOG_SOFTMAX) {
                double c;
                /* 16-bit rows: the max (and min) on the raw words; every x finite, |max| <= 65536 and (max - min) log2e
                   <= 123: the exponentials without their clamp (gpuml__exp_shift_body).  A NaN or an inf: the f32
                   max pass (NaN skipped) */
                float mn;
                const int ok = kx && gpuml__vmaxmin16_avx2(xr, kx, n, &mf, &mn);
                int fast;
                if (!ok) mf = gpuml__vmax_k_avx2(xr, kx, n);
                fast = ok && fabsf(mf) <= 65536.0f && ((double)mf - (double)mn) * 1.4426950408889634 <= 123.0;
                s = gpuml__exp_shift_k_avx2(xr, kx, mf, e, n, dt != GPUML_F32, &c, pf, fast);   /* sum exp(x - mf) 2^c */
                /* (not streamed where the exponentials went to y itself: its lines are in cache, 10% slower) */
                if (r->kind == GPUML__ROW_SOFTMAX) {   /* a finite sum means no exponential was NaN or inf, and with a finite 1 / s no result is
                       NaN: 16-bit results without the NaN fix-up (bench/NOTES_ops.md) */
                    const float inv = (float)(1.0 / s);
                    gpuml__vaxpc_k_avx2((const char *)(const void *)e, 0, n, inv, 0.0f, yr, kx, dense && stream && (char *)(void *)e != yr,
                                        fast && kx == 1 ? 2 : s > 0.0 && s < HUGE_VAL && inv < HUGE_VALF);
                } else {
                    const double lc = -(double)mf - log(s) + c * 0.69314718055994531;
                    gpuml__vlsm_k_avx2(xr, kx, n, (float)lc, (float)(lc - (double)(float)lc), yr, dense && stream);
                }
            } else {
                double m2;
                if (r->kind == GPUML__ROW_LAYERNORM) m2 = gpuml__norm_stats_k_avx2(xr, kx, n, &mean) / (double)n;
                else m2 = gpuml__vsum_k_avx2(xr, kx, n, 0.0f, 1) / (double)n;
                rstd = 1.0 / sqrt((m2 < 0.0 ? 0.0 : m2) + r->eps);
                /* (not f32 rows with a bias: with x, weight and bias 3 f32 rows in L1 already, the prefetch cost
                   f32 layernorm rows of 8192 ~10%; f32 rmsnorm gained ~12%).  A finite mean and m2 mean every x is
                   finite and |x - mean| rstd <= sqrt(n): with a finite (float) rstd, w and b no result is NaN (inf at
                   most, where w overflows it), and the 16-bit stores leave out the NaN fix-up */
                gpuml__vnorm_out_k_avx2(xr, kx, n, mean, (float)rstd, j->w, j->b, yr, dense && stream, kx || !j->b ? pf : NULL,
                                        j->wb_fin && fabs(mean) < HUGE_VAL && m2 < HUGE_VAL && (float)rstd < HUGE_VALF);
            }
            if (!dense) gpuml__cpu_st(dt, yp, p->ys * es, n, yb);
            continue;
        }
#endif
        x = gpuml__cpu_ld(dt, xp, p->xs * es, n, xb);
#if GPUML__HAVE_AVX2_PATH
        /* AVX2: the backward norms and cross-entropy (a valid label) into the row buffer */
        if (vec && n >= 16 && (r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD)) {
            /* (rows shorter than 16 keep the double path, as on AVX-512: a row of 1 cancels in f32) */
            const int ln = r->kind == GPUML__ROW_LAYERNORM_BWD;
            double m2;
            dy = gpuml__cpu_ld(dt, (const char *)gpuml_tensor_data(r->dy) + gpuml__row_off(&p->rs, &p->v[2], row) * es, p->dys * es, n, db);
            if (ln) m2 = gpuml__norm_stats_k_avx2((const char *)(const void *)x, 0, n, &mean) / (double)n;
            else m2 = gpuml__vsum_avx2(x, n, 0.0f, 1) / (double)n;
            rstd = 1.0 / sqrt((m2 < 0.0 ? 0.0 : m2) + r->eps);
            gpuml__vnorm_bwd_avx2(x, dy, n, !ln, mean, rstd, j->w, j->acc + (size_t)tid * 2 * (size_t)n, yb);
            if (yp) gpuml__cpu_st(dt, yp, p->ys * es, n, yb);
            continue;
        }
        if (vec && r->kind == GPUML__ROW_XENT) {
            int32_t lab;
            memcpy(&lab, (const char *)gpuml_tensor_data(r->labels) + row * p->ls * 4, 4);
            if (lab >= 0 && lab < n) {
                const float mf = gpuml__vmax_avx2(x, n);
                double inv;
                float el;
                s = gpuml__exp_shift_avx2(x, mf, yb, n);      /* yb[i] = exp(x[i] - mf) */
                j->loss[row] = (double)mf + log(s) - (double)x[lab];
                if (!yp) continue;
                inv = 1.0 / s;
                el = yb[lab];
                gpuml__vaxpc_avx2(yb, n, (float)(inv * p->scale), 0.0f, yb);
                yb[lab] = (float)(((double)el * inv - 1.0) * p->scale);
                gpuml__cpu_st(dt, yp, p->ys * es, n, yb);
                continue;
            }
        }
#endif
        if (r->dy) dy = gpuml__cpu_ld(dt, (const char *)gpuml_tensor_data(r->dy) + gpuml__row_off(&p->rs, &p->v[2], row) * es,
                                      p->dys * es, n, db);
        switch (r->kind) {
        case GPUML__ROW_SOFTMAX: case GPUML__ROW_LOG_SOFTMAX: case GPUML__ROW_XENT: {
            int32_t lab = 0;
            int ok = 1;
            for (i = 0; i < n; i++) if (x[i] > mx) mx = x[i];
            s = gpuml__exp_shift(x, (float)mx, yb, n);      /* yb[i] = exp(x[i] - mx) */
            if (r->kind == GPUML__ROW_XENT) {
                memcpy(&lab, (const char *)gpuml_tensor_data(r->labels) + row * p->ls * 4, 4);
                ok = lab >= 0 && lab < n;
                j->loss[row] = ok ? mx + log(s) - x[lab] : NAN;
                if (!yp) break;
            }
            {
                double inv = 1.0 / s, ls = log(s);
                for (i = 0; i < n; i++) {
                    if (r->kind == GPUML__ROW_SOFTMAX) yb[i] = (float)(yb[i] * inv);
                    else if (r->kind == GPUML__ROW_LOG_SOFTMAX) yb[i] = (float)(((double)x[i] - mx) - ls);
                    else yb[i] = ok ? (float)((yb[i] * inv - (i == lab)) * p->scale) : NAN;
                }
            }
            break;
        }
        default: {
            int ln = r->kind == GPUML__ROW_LAYERNORM || r->kind == GPUML__ROW_LAYERNORM_BWD;
            double q = 0;
            if (ln) {
                for (i = 0; i < n; i++) s += x[i];
                mean = s / (double)n;
            }
            for (i = 0; i < n; i++) q += (x[i] - mean) * (x[i] - mean);
            rstd = 1.0 / sqrt(q / (double)n + r->eps);
            if (r->kind == GPUML__ROW_LAYERNORM || r->kind == GPUML__ROW_RMSNORM) {
                for (i = 0; i < n; i++)
                    yb[i] = (float)((x[i] - mean) * rstd * (j->w ? j->w[i] : 1.0f) + (j->b ? j->b[i] : 0.0f));
            } else {
                double sg = 0, sgx = 0, *acc = j->acc + (size_t)tid * 2 * (size_t)n;
                for (i = 0; i < n; i++) {
                    double g = (double)dy[i] * (j->w ? j->w[i] : 1.0f), xh = (x[i] - mean) * rstd;
                    sg += g; sgx += g * xh;
                    acc[i] += dy[i] * xh;
                    acc[n + i] += dy[i];
                }
                sg = ln ? sg / (double)n : 0;
                sgx /= (double)n;
                for (i = 0; i < n; i++) {
                    double g = (double)dy[i] * (j->w ? j->w[i] : 1.0f), xh = (x[i] - mean) * rstd;
                    yb[i] = (float)(rstd * (g - sg - xh * sgx));
                }
            }
        }
        }
        if (yp) gpuml__cpu_st(dt, yp, p->ys * es, n, yb);
    }
#if GPUML__HAVE_AVX2_PATH
    if (vec && stream) _mm_sfence();   /* the AVX-512 and AVX2 rows' non-temporal stores */
#endif
    gpuml__free(buf);
}

GPUML__FN float *gpuml__cpu_floats(const gpuml_tensor *t)
{
    float *f;
    int64_t n;
    if (!t) return NULL;
    n = gpuml__numel(t);
    f = (float *)gpuml__malloc(sizeof(float) * (size_t)(n + 1));
    if (f) {
        const float *v = gpuml__cpu_ld(t->dtype, (const char *)gpuml_tensor_data(t), t->ndim ? t->strides[0] * (int64_t)gpuml__dtype_sizes[t->dtype] : 0, n, f);
        if (v != f) memcpy(f, v, sizeof(float) * (size_t)n);
    }
    return f;
}

GPUML__FN gpuml_status gpuml__cpu_rows(gpuml_ctx *ctx, const gpuml__rowop *r, const gpuml__nplan *p)
{
    gpuml__rowjob j;
    int nth = gpuml__pool_size(ctx->pool), bwd = r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD;
    gpuml_status st = GPUML_SUCCESS;
    int64_t n = p->n, i, t;
    memset(&j, 0, sizeof j);
    j.r = r; j.p = p;
    j.w = gpuml__cpu_floats(r->w);
    j.b = gpuml__cpu_floats(r->b);
    j.wb_fin = 1;
    for (i = 0; i < n; i++)
        if ((j.w && !(fabsf(j.w[i]) < HUGE_VALF)) || (j.b && !(fabsf(j.b[i]) < HUGE_VALF))) { j.wb_fin = 0; break; }
    if (bwd) j.acc = (double *)gpuml__calloc(sizeof(double) * 2 * (size_t)n * (size_t)nth);
    if (r->kind == GPUML__ROW_XENT) j.loss = (double *)gpuml__malloc(sizeof(double) * (size_t)(p->rs.n + 1));
    if ((r->w && !j.w) || (r->b && !j.b) || (bwd && !j.acc) || (r->kind == GPUML__ROW_XENT && !j.loss)) {
        st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    gpuml__parallel_for(ctx->pool, p->rs.n, GPUML__MAX(1, 16384 / GPUML__MAX(n, 1)), gpuml__rows_task, &j);
    if (bwd) {
        float *f = (float *)gpuml__malloc(sizeof(float) * (size_t)(2 * n + 1));
        if (!f) { st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "out of host memory"); goto done; }
        for (i = 0; i < 2 * n; i++) {
            double s = 0;
            for (t = 0; t < nth; t++) s += j.acc[(size_t)t * 2 * (size_t)n + (size_t)i];
            f[i] = (float)s;
        }
        if (r->dw) gpuml__cpu_st(r->dw->dtype, (char *)gpuml_tensor_data(r->dw), r->dw->strides[0] * (int64_t)gpuml__dtype_sizes[r->dw->dtype], n, f);
        if (r->db) gpuml__cpu_st(r->db->dtype, (char *)gpuml_tensor_data(r->db), r->db->strides[0] * (int64_t)gpuml__dtype_sizes[r->db->dtype], n, f + n);
        gpuml__free(f);
    }
    if (r->kind == GPUML__ROW_XENT) {
        double s = 0;
        float l;
        for (i = 0; i < p->rs.n; i++) s += j.loss[i];
        l = (float)(s / (double)p->rs.n);
        memcpy(gpuml_tensor_data(r->loss), &l, 4);
    }
done:
    gpuml__free((void *)(uintptr_t)j.w);
    gpuml__free((void *)(uintptr_t)j.b);
    gpuml__free(j.acc);
    gpuml__free(j.loss);
    return st;
}

/* ---- GPU ---- */
#ifndef GPUML_NO_CUDA
GPUML__FN int gpuml__aligned16(gpuml__CUdeviceptr p) { return p % 16 == 0; }

/* Overrides of the row-kernel choice below, for the tests and benchmarks (0: the rule):
   [0] bytes of row per thread to start from, [1] 1: no clusters, [2] 1: no warp-per-row,
   [3] 1: the old rule (a block per row, up to 512 threads and 64 elements each),
   [4] registers per thread to cap at (launch bounds; -1: none), [5] bytes of row per thread at
   most where a cluster or the block of 1024 ([10]) takes the rest of a long row (0: 128),
   [6] rows ahead to prefetch into L2 (-1: none; 0: the rule), [7] 1: layernorm / rmsnorm weight and bias held in registers from
   before the first row (WBE; registers capped at 128 unless [4]), -1: never (0: the rule), [8] blocks a SM for a
   persistent grid (0: a block or cluster per row), [9] XNA (rows held in registers, forward kinds):
   1 x read past L1, 2 y stored streaming, 3 both (H100: 1 lost 1-25%, 2 within +-0.6%; not taken),
   [10] 1: long forward rows in one block of up to 1024 threads at up to 128 bytes a thread (no
   cluster, no WBE), -1: never (0: the rule), [11] 1: no FULL (bounds checks kept where every
   vector is in the row), 2: FULL wherever every vector is in the row (sm_90; with WBE and at any
   bytes a thread too) */
static int gpuml__rows_tune[12];

GPUML__FN gpuml_status gpuml__cuda_rows(gpuml_ctx *ctx, const gpuml__rowop *r, gpuml__nplan *p)
{
    gpuml__CUfunction fn;
    gpuml__CUdeviceptr xp = gpuml__dptr(r->x), yp = r->y ? gpuml__dptr(r->y) : 0, dyp = r->dy ? gpuml__dptr(r->dy) : 0;
    gpuml__CUdeviceptr wp = r->w ? gpuml__dptr(r->w) : 0, bp = r->b ? gpuml__dptr(r->b) : 0;
    gpuml__CUdeviceptr lp = r->labels ? gpuml__dptr(r->labels) : 0, p0 = 0, p1 = 0;
    gpuml_tensor *scratch = NULL;
    int64_t es = (int64_t)gpuml__dtype_sizes[r->x->dtype], n = p->n, nrows = p->rs.n, maxept, tb, maxb, need;
    int bwd = r->kind == GPUML__ROW_LAYERNORM_BWD || r->kind == GPUML__ROW_RMSNORM_BWD;
    int vec = (int)(16 / es), nv, d, k, wpr = 0, cl = 1, lbt = 512, lbb = 1, regs, wbe, xna, full, big;
    int clusters = !bwd && ctx->arch >= 90 && gpuml__rows_tune[1] != 1 && gpuml__rows_tune[3] != 1;
    unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    char opts[256];
    void *args[10];
    gpuml_status st;
    /* 16-byte vectors when every row of every operand is dense and aligned */
    if (n % vec != 0 || p->xs != 1 || !gpuml__aligned16(xp)) vec = 1;
    if (r->y && (p->ys != 1 || !gpuml__aligned16(yp))) vec = 1;
    if (r->dy && (p->dys != 1 || !gpuml__aligned16(dyp))) vec = 1;
    if (r->w && (p->ws != 1 || wp % (gpuml__CUdeviceptr)(vec * (int64_t)gpuml__dtype_sizes[r->w->dtype]) != 0)) vec = 1;
    if (r->b && (p->bs != 1 || bp % (gpuml__CUdeviceptr)(vec * (int64_t)gpuml__dtype_sizes[r->b->dtype]) != 0)) vec = 1;
    for (d = 0; d < p->rs.ndim && vec > 1; d++)
        for (k = 0; k < 3; k++) if ((p->v[k].strides[d] * es) % 16 != 0) vec = 1;
    /* The row sits in registers as loaded, nv vectors of vec elements per thread.  Bytes per
       thread, not elements, set how much is in flight: start from tb bytes (64: 16 f32 or 32
       bf16), and double while a row needs over 256 threads, up to maxb bytes (128 where a
       cluster can take the rest of a long row) and 64 elements (the backward passes: 16, as
       x, dy and two sums are held).  A row that fits a warp gets a warp (8 rows a block);
       one that needs over 256 threads is split over a cluster of up to 8 blocks (sm_90). */
    maxept = bwd ? 16 : 64;
    tb = gpuml__rows_tune[0] > 0 ? gpuml__rows_tune[0] : 64;
    if (gpuml__rows_tune[3] == 1 || vec == 1) tb = 16 * es;   /* scalar loads: 16 elements */
    /* A row that one block holds in registers at up to 64 elements (256 bytes) a thread takes
       that block rather than a cluster: up to 512 threads for 16-bit rows and softmax, 256 for
       f32 layernorm / rmsnorm.  Measured on an H100 (bench/NOTES_ops.md), fraction of copy with
       a cluster -> without: rows of 32768, bf16 softmax / layernorm / rmsnorm 0.87 / 0.80 / 0.91
       -> 0.94 / 0.90 / 0.93, f32 softmax 0.91 -> 0.96; rows of 16384, f32 softmax 0.92 -> 0.97,
       layernorm 0.90 -> 0.94, rmsnorm 0.92 -> 0.95.  f32 layernorm / rmsnorm of 512 threads
       lose without (rows of 32768: 0.86 -> 0.61, 0.89 -> 0.87) and keep the cluster; so does
       cross-entropy (not measured). */
    if (clusters && gpuml__rows_tune[0] == 0 && gpuml__rows_tune[1] == 0 && vec > 1 && r->kind != GPUML__ROW_XENT &&
        (n + (int64_t)GPUML__MIN(maxept, 256 / es) - 1) / GPUML__MIN(maxept, 256 / es) <=
            (es <= 2 || r->kind == GPUML__ROW_SOFTMAX || r->kind == GPUML__ROW_LOG_SOFTMAX ? 512 : 256))
        clusters = 0;
    /* Rows that would take a cluster and fit one block of 1024 threads at 128 bytes a thread take
       that block (big): H200, f32 rows of 32768, fraction of copy with a 4-block cluster -> one
       block of 1024, layernorm 0.725 -> 0.775, rmsnorm 0.785 -> 0.876 with bounds checks, 0.73 ->
       0.857 and 0.795 -> 0.933 with FULL below.  The rule takes it only on sm_90 and for rows that
       fill the block exactly (f32 32768), where FULL applies: ptxas spills 16 bytes in rmsnorm
       without it (and 48-56 bytes with it on sm_75-89); 16-bit rows of 65536 are not measured */
    big = !bwd && vec > 1 && r->kind != GPUML__ROW_XENT && gpuml__rows_tune[10] >= 0 && gpuml__rows_tune[3] != 1 &&
          (gpuml__rows_tune[10] == 1 ? n <= (int64_t)1024 * 128 / es
                                     : clusters && ctx->arch == 90 && es == 4 && n == (int64_t)1024 * 128 / es &&
                                       gpuml__rows_tune[0] == 0 && gpuml__rows_tune[5] == 0 && gpuml__rows_tune[11] == 0);
    if (big) clusters = 0;
    maxb = clusters || big ? (gpuml__rows_tune[5] > 0 ? gpuml__rows_tune[5] : 128) : 256;
    if (gpuml__rows_tune[3] == 1 || vec == 1) maxb = 256;
    nv = 1;
    while (((int64_t)vec * nv * es < tb || (n + (int64_t)vec * nv - 1) / ((int64_t)vec * nv) > 256) &&
           (int64_t)vec * nv * 2 <= maxept && (int64_t)vec * nv * 2 * es <= GPUML__MAX(maxb, tb) &&
           (n + (int64_t)vec * nv * 2 - 1) / ((int64_t)vec * nv * 2) >= 32)
        nv *= 2;
    need = (n + (int64_t)vec * nv - 1) / ((int64_t)vec * nv);   /* threads for the row */
    if (clusters)
        while (cl < 8 && (need + cl - 1) / cl > 256) cl *= 2;
    {
        int64_t threads = ((need + cl - 1) / cl + 31) / 32 * 32;
        if (threads > (big ? 1024 : 512)) { nv = 0; vec = 1; threads = 512; cl = 1; }
        if (threads < 32) threads = 32;
        if (threads == 32 && !bwd && nv > 0 && gpuml__rows_tune[2] != 1 && gpuml__rows_tune[3] != 1) {
            wpr = 1;
            threads = 256;
        }
        block[0] = (unsigned)threads;
    }
    /* a register cap (launch bounds) where the row takes at most 32 registers: left alone the
       compiler takes up to ~112 (addresses of every vector), halving the rows resident per SM
       (measured: f32 8192 rows 0.87 -> 0.93 of copy with 64); 64 spills a little only in the
       f32 rmsnorm of 32 elements a thread, 80 for cross-entropy */
    regs = gpuml__rows_tune[4] != 0 ? gpuml__rows_tune[4] : r->kind == GPUML__ROW_XENT ? 80 : 64;
    /* f32 rmsnorm of 32 elements a thread in one block: 80 (H100, rows of 8192: 0.95 -> 0.98 of
       copy; with a cluster, rows of 32768, 64 stays better: 0.89 against 0.87) */
    if (gpuml__rows_tune[4] == 0 && r->kind == GPUML__ROW_RMSNORM && es == 4 && cl == 1 && vec * nv == 32) regs = 80;
    /* the weight (and bias) in registers from before the first row (WBE): rmsnorm with a block
       per row (H100, two calls, fraction of copy without -> with: bf16 rows of 32768 0.933-0.936
       -> 0.955, of 8192 0.952-0.955 -> 0.970, f32 rows of 8192 0.980-0.982 -> 0.990, of 1024 0.994
       either way); not layernorm (its bias doubles the registers: bf16 rows of 32768 0.90 -> 0.41,
       f32 layernorm in 4-block clusters 0.85 -> 0.71) nor rmsnorm in clusters (f32 32768 0.91 -> 0.88);
       and only rows of 8192 or more at up to 128 bytes a thread: the report at 22c9b06 took it for
       f32 rows of 4096 too (256 threads, cap 64 -> 128 halved the blocks resident), 0.99 -> 0.946 */
    wbe = (gpuml__rows_tune[7] == 1 || (gpuml__rows_tune[7] == 0 && r->kind == GPUML__ROW_RMSNORM && cl == 1 && n >= 8192 &&
                                         (int64_t)vec * nv * es <= 128)) && nv > 0 && vec > 1 &&
          !bwd && !wpr && !big && r->w && (r->kind == GPUML__ROW_LAYERNORM || r->kind == GPUML__ROW_RMSNORM);
    /* WBE's cap: 128, or 80 where the row and weight vectors take at most 32 registers (16-bit rows
       of 8192 with 16-bit weights: 3 blocks of 256 an SM instead of 2; H200, rmsnorm bf16 8192x8192
       0.856 -> 0.933 of copy; f32 rows of 8192, 64 registers of vectors, lose at 80: 0.964 -> 0.914) */
    if (wbe && gpuml__rows_tune[4] == 0)
        regs = (int64_t)vec * nv * (es + (int64_t)gpuml__dtype_sizes[r->w->dtype]) / 4 <= 32 ? 80 : 128;
    xna = nv > 0 && vec > 1 && !bwd ? gpuml__rows_tune[9] & 3 : 0;
    if (regs > 0 && nv > 0 && !bwd && vec > 1 && vec * nv * (int)es / 4 <= 32) {
        lbt = (int)block[0];
        lbb = GPUML__MAX(1, 65536 / (lbt * regs));
    }
    /* L2 prefetch (sm_90, a block or cluster per row, the row in registers, dense rows): each
       block, as it starts on a row, asks the L2 for its part of the row pf rows further on -- the
       row that a block launched about one wave later will load -- so DRAM keeps streaming while
       the resident blocks merge their statistics and write */
    /* Distance: about 1.5 MB of rows ahead, at most 132 rows (H100, bench_ops 2026-11-26, fraction
       of copy without -> with: f32 rows of 32768 (16 rows) rmsnorm 0.876 -> 0.915, layernorm 0.846
       -> 0.859; bf16 rows of 8192 (64-66) layernorm 0.930 -> 0.949, rmsnorm 0.943 -> 0.953; f32 rows
       of 1024 (132) softmax / rmsnorm 0.983 / 0.984 -> 0.994 / 0.995; 8 MB or more ahead lost up to
       25%: the prefetched rows pushed each other out of L2) */
    /* 16-bit rmsnorm rows of 16384 or more with WBE (one block of 512 an SM at 128 registers): 4 MB
       ahead (H200, bench/NOTES_ops.md, fraction of copy 1.5 MB -> 4 MB: bf16 rows of 32768 0.881 ->
       0.910, 16384 0.925 -> 0.936; f16 0.873 -> 0.905, 0.929 -> 0.940; the other kinds and f32 lose
       with it: f32 32768 softmax 0.92 -> 0.86) */
    p->pf = 0;
    if (ctx->arch >= 90 && !bwd && !wpr && nv > 0 && vec > 1 && p->rs.ndim == 1 && gpuml__rows_tune[6] >= 0) {
        const int64_t ahead = wbe && es == 2 && r->kind == GPUML__ROW_RMSNORM && n >= 16384 ? (int64_t)4096 * 1024 : (int64_t)1536 * 1024;
        p->pf = gpuml__rows_tune[6] > 0 ? gpuml__rows_tune[6] : GPUML__MAX(1, GPUML__MIN(132, ahead / (n * es)));
    }
    if (bwd) grid[0] = (unsigned)GPUML__MIN(nrows, (int64_t)GPUML__MAX(ctx->sm_count, 1) * GPUML__MAX(1, 2048 / (int)block[0]));
    else if (wpr) grid[0] = (unsigned)GPUML__MIN((nrows + 7) / 8, (int64_t)1 << 30);
    else grid[0] = (unsigned)(GPUML__MIN(nrows, ((int64_t)1 << 30) / cl) * cl);
    if (!bwd && !wpr && gpuml__rows_tune[8] > 0)   /* persistent: the blocks walk the rows */
        grid[0] = (unsigned)(GPUML__MAX(1, GPUML__MIN(nrows, (int64_t)GPUML__MAX(ctx->sm_count, 1) * gpuml__rows_tune[8] / cl)) * cl);
    if (bwd || r->kind == GPUML__ROW_XENT) {
        int64_t cnt = bwd ? (int64_t)grid[0] * n * (r->kind == GPUML__ROW_LAYERNORM_BWD ? 2 : 1) : nrows;
        scratch = gpuml__tensor_new(ctx, GPUML_F32, 1, &cnt, "row op (scratch)");
        if (!scratch) return ctx->status;
        p0 = gpuml__dptr(scratch);
        p1 = p0 + (gpuml__CUdeviceptr)((int64_t)grid[0] * n * 4);
    }
    /* FULL: every thread's vectors lie in the row (no bounds checks: 20-28% fewer instructions in
       the 16-bit rows, which are issue-bound on the H200), where ptxas keeps it without spills at
       the cap (at most 64 bytes of row a thread, or f32 layernorm / rmsnorm rows of one block; not
       WBE).  H200, fraction of copy without -> with: f32 rows of 16384 layernorm 0.84 -> 0.94,
       rmsnorm 0.83 -> 0.96; of 32768 (one block of 1024) layernorm 0.80 -> 0.86, rmsnorm 0.89 ->
       0.93; bf16 rows of 8192 layernorm 0.79 -> 0.88, softmax 0.89 -> 0.93; of 4096 layernorm bf16
       0.82 -> 0.91, f32 0.91 -> 0.97.  f32 softmax of 128 bytes a thread or more loses a little
       (rows of 8192 0.975 -> 0.970, of 32768 0.920 -> 0.911) and keeps the checks
       (bench/NOTES_ops.md).  Only on sm_90, not for f32 layernorm in warp rows: there ptxas
       spills with it (sm_80 spills in most f32 configurations too).  f16 rows spilled 36-108 bytes
       with it until their elements were converted from the words (gpuml__vel): none now */
    full = !bwd && !wbe && nv > 0 && vec > 1 && r->kind != GPUML__ROW_XENT && gpuml__rows_tune[11] != 1 && ctx->arch == 90 &&
           !(wpr && es == 4 && r->kind == GPUML__ROW_LAYERNORM) &&
           (wpr ? n == (int64_t)32 * vec * nv : n == (int64_t)cl * block[0] * vec * nv) &&
           ((int64_t)vec * nv * es <= 64 || (es == 4 && cl == 1 && (r->kind == GPUML__ROW_LAYERNORM || r->kind == GPUML__ROW_RMSNORM)));
    if (gpuml__rows_tune[11] == 2 && !bwd && nv > 0 && vec > 1 && r->kind != GPUML__ROW_XENT && ctx->arch == 90 &&
        (wpr ? n == (int64_t)32 * vec * nv : n == (int64_t)cl * block[0] * vec * nv))
        full = 1;
    snprintf(opts, sizeof opts, "-DRK=%d -DDT_X=%d -DDT_W=%d -DDT_B=%d -DHAS_W=%d -DHAS_B=%d -DHAS_Y=%d -DVEC=%d -DNV=%d -DWPR=%d -DCL=%d "
             "-DLBT=%d -DLBB=%d -DWBE=%d -DXNA=%d -DFULL=%d", r->kind, (int)r->x->dtype, r->w ? (int)r->w->dtype : 0, r->b ? (int)r->b->dtype : 0,
             r->w != NULL, r->b != NULL, r->y != NULL, vec, nv, wpr, cl, lbt, lbb, wbe, xna, full);
    args[0] = p; args[1] = &xp; args[2] = &yp; args[3] = &dyp; args[4] = &wp; args[5] = &bp; args[6] = &lp;
    args[7] = &p0; args[8] = &p1;
    st = gpuml__kernel(ctx, &gpuml__fam_norm, opts, "gpuml_rows", &fn);
    if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, grid, block, 0, args, "row op");
    if (st == GPUML_SUCCESS && bwd) {
        /* parameter gradients: column sums of the per-block partials */
        gpuml_tensor *outs[2];
        gpuml__CUdeviceptr parts[2];
        int i;
        outs[0] = r->dw; outs[1] = r->db; parts[0] = p0; parts[1] = p1;
        for (i = 0; i < 2 && st == GPUML_SUCCESS; i++) {
            int64_t nb = grid[0], os;
            gpuml__CUdeviceptr op;
            unsigned g2[3] = {0, 0, 0}, b2[3] = {256, 0, 0};
            void *a2[5];
            if (!outs[i]) continue;
            op = gpuml__dptr(outs[i]);
            os = outs[i]->strides[0];
            snprintf(opts, sizeof opts, "-DCOLSUM=1 -DDT_O=%d", (int)outs[i]->dtype);
            a2[0] = &nb; a2[1] = &p->n; a2[2] = &parts[i]; a2[3] = &op; a2[4] = &os;
            st = gpuml__kernel(ctx, &gpuml__fam_norm, opts, "gpuml_colsum", &fn);
            g2[0] = gpuml__grid_wave(ctx, n, 256);
            if (st == GPUML_SUCCESS) st = gpuml__launch(ctx, fn, g2, b2, 0, a2, "row op (parameter gradients)");
        }
    }
    if (st == GPUML_SUCCESS && r->kind == GPUML__ROW_XENT) {
        /* loss = mean of the per-row losses */
        int red[1] = {1};
        int64_t ostr[1] = {0};
        gpuml_status s2 = gpuml__reduce_run(ctx, GPUML_REDUCE_MEAN, r->loss, scratch, red, ostr, 0.0);
        st = s2;
    }
    gpuml_tensor_free(scratch);
    return st;
}
#endif

GPUML__FN gpuml_status gpuml__rows_run(gpuml_ctx *ctx, const gpuml__rowop *r)
{
    gpuml__nplan p;
    gpuml__nplan_make(&p, r);
    if (p.rs.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) return gpuml__cpu_rows(ctx, r, &p);
#ifndef GPUML_NO_CUDA
    return gpuml__cuda_rows(ctx, r, &p);
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

/* checks a 1-d parameter (weight, bias, their gradients) of length n */
GPUML__FN gpuml_status gpuml__check_param(gpuml_ctx *ctx, const gpuml_tensor *t, int64_t n, const char *op, const char *arg)
{
    char s1[200];
    if (!t) return GPUML_SUCCESS;
    GPUML__TRY(gpuml__check_tensor(ctx, t, op, arg));
    GPUML__TRY(gpuml__need_float(ctx, t, op, arg));
    if (t->ndim != 1 || t->shape[0] != n)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but must be [%lld] (x's last axis)", op, arg,
                           gpuml__shape_str(t, s1, sizeof s1), (long long)n);
    return GPUML_SUCCESS;
}

/* profiler figures of a row op: every tensor read or written once; FLOPs per element of x
   approximate (max, exp, sum, scale for softmax; mean, variance, scale, shift for norms) */
GPUML__FN double gpuml__rows_bytes(const gpuml__rowop *r)
{
    return gpuml__tb(r->x) + gpuml__tb(r->dy) + gpuml__tb(r->w) + gpuml__tb(r->b) + gpuml__tb(r->labels) + gpuml__tb(r->y) +
           gpuml__tb(r->dw) + gpuml__tb(r->db) + gpuml__tb(r->loss);
}
GPUML__FN double gpuml__rows_flops(const gpuml__rowop *r)
{
    static const double per[7] = { 5, 5, 8, 5, 12, 9, 8 };
    return (double)gpuml__numel(r->x) * ((unsigned)r->kind < 7 ? per[r->kind] : 1.0);
}

GPUML__FN gpuml_status gpuml__softmax(gpuml_ctx *ctx, const char *op, int kind, gpuml_tensor *y, const gpuml_tensor *x, int axis)
{
    gpuml__rowop r;
    char s1[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, y, op, "y"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_dtype(ctx, y, x->dtype, op, "y"));
    GPUML__TRY(gpuml__need_same_shape(ctx, y, x, op, "y", "x"));
    if (axis < -x->ndim || axis >= GPUML__MAX(x->ndim, 1))
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: axis %d is out of range for x %s", op, axis, gpuml__shape_str(x, s1, sizeof s1));
    GPUML__TRY(gpuml__check_output(ctx, y, op));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, x, op, "y", "x"));
    memset(&r, 0, sizeof r);
    r.kind = kind; r.x = x; r.y = y; r.axis = axis < 0 ? axis + x->ndim : axis;
    return GPUML__PROF(ctx, gpuml__rows_run(ctx, &r), op + 6, GPUML_UNIT_FP32, gpuml__rows_flops(&r), gpuml__rows_bytes(&r),
                       r.x, r.dy ? r.dy : r.w, r.y ? r.y : r.loss);
}
GPUML__DEF gpuml_status gpuml_softmax(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, int axis)
{ return gpuml__softmax(ctx, "gpuml_softmax", GPUML__ROW_SOFTMAX, y, x, axis); }
GPUML__DEF gpuml_status gpuml_log_softmax(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, int axis)
{ return gpuml__softmax(ctx, "gpuml_log_softmax", GPUML__ROW_LOG_SOFTMAX, y, x, axis); }

/* layernorm / rmsnorm forward and backward: one checker */
GPUML__FN gpuml_status gpuml__norm(gpuml_ctx *ctx, const char *op, int kind, gpuml_tensor *y, gpuml_tensor *dw, gpuml_tensor *db,
                                   const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *w, const gpuml_tensor *b, double eps)
{
    gpuml__rowop r;
    int bwd = kind == GPUML__ROW_LAYERNORM_BWD || kind == GPUML__ROW_RMSNORM_BWD;
    const char *yname = bwd ? "dx" : "y";
    int64_t n;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, y, op, yname));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__need_float(ctx, x, op, "x"));
    if (x->ndim < 1) return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: x is a scalar; it needs a last axis to normalize", op);
    GPUML__TRY(gpuml__need_dtype(ctx, y, x->dtype, op, yname));
    GPUML__TRY(gpuml__need_same_shape(ctx, y, x, op, yname, "x"));
    if (bwd) {
        GPUML__TRY(gpuml__check_tensor(ctx, dy, op, "dy"));
        GPUML__TRY(gpuml__need_dtype(ctx, dy, x->dtype, op, "dy"));
        GPUML__TRY(gpuml__need_same_shape(ctx, dy, x, op, "dy", "x"));
    }
    if (!(eps >= 0)) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: eps = %g must be >= 0", op, eps);
    n = x->shape[x->ndim - 1];
    GPUML__TRY(gpuml__check_param(ctx, w, n, op, "weight"));
    GPUML__TRY(gpuml__check_param(ctx, b, n, op, "bias"));
    GPUML__TRY(gpuml__check_param(ctx, dw, n, op, "dweight"));
    GPUML__TRY(gpuml__check_param(ctx, db, n, op, "dbias"));
    GPUML__TRY(gpuml__check_output(ctx, y, op));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, x, op, yname, "x"));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, w, op, yname, "weight"));
    GPUML__TRY(gpuml__check_disjoint(ctx, y, b, op, yname, "bias"));
    if (bwd) {
        const gpuml_tensor *ins[3];
        int i;
        GPUML__TRY(gpuml__check_disjoint(ctx, y, dy, op, yname, "dy"));
        ins[0] = x; ins[1] = dy; ins[2] = w;
        for (i = 0; i < 3; i++) {
            if (dw && ins[i] && gpuml__overlap(dw, ins[i])) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dweight overlaps an input", op);
            if (db && ins[i] && gpuml__overlap(db, ins[i])) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dbias overlaps an input", op);
        }
        if ((dw && (gpuml__overlap(dw, y) || (db && gpuml__overlap(dw, db)))) || (db && gpuml__overlap(db, y)))
            return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dx, dweight and dbias overlap", op);
    }
    memset(&r, 0, sizeof r);
    r.kind = kind; r.x = x; r.y = y; r.dy = dy; r.w = w; r.b = b; r.dw = dw; r.db = db;
    r.axis = x->ndim - 1; r.eps = eps;
    if (n == 0 && !bwd) return GPUML_SUCCESS;
    return GPUML__PROF(ctx, gpuml__rows_run(ctx, &r), op + 6, GPUML_UNIT_FP32, gpuml__rows_flops(&r), gpuml__rows_bytes(&r),
                       r.x, r.dy ? r.dy : r.w, r.y ? r.y : r.loss);
}
GPUML__DEF gpuml_status gpuml_layernorm(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *weight,
                                        const gpuml_tensor *bias, double eps)
{ return gpuml__norm(ctx, "gpuml_layernorm", GPUML__ROW_LAYERNORM, y, NULL, NULL, NULL, x, weight, bias, eps); }
GPUML__DEF gpuml_status gpuml_rmsnorm(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *weight, double eps)
{ return gpuml__norm(ctx, "gpuml_rmsnorm", GPUML__ROW_RMSNORM, y, NULL, NULL, NULL, x, weight, NULL, eps); }
GPUML__DEF gpuml_status gpuml_layernorm_backward(gpuml_ctx *ctx, gpuml_tensor *dx, gpuml_tensor *dweight, gpuml_tensor *dbias,
                                                 const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *weight, double eps)
{ return gpuml__norm(ctx, "gpuml_layernorm_backward", GPUML__ROW_LAYERNORM_BWD, dx, dweight, dbias, dy, x, weight, NULL, eps); }
GPUML__DEF gpuml_status gpuml_rmsnorm_backward(gpuml_ctx *ctx, gpuml_tensor *dx, gpuml_tensor *dweight,
                                               const gpuml_tensor *dy, const gpuml_tensor *x, const gpuml_tensor *weight, double eps)
{ return gpuml__norm(ctx, "gpuml_rmsnorm_backward", GPUML__ROW_RMSNORM_BWD, dx, dweight, NULL, dy, x, weight, NULL, eps); }

GPUML__DEF gpuml_status gpuml_cross_entropy(gpuml_ctx *ctx, gpuml_tensor *loss, gpuml_tensor *dlogits,
                                            const gpuml_tensor *logits, const gpuml_tensor *labels)
{
    static const char op[] = "gpuml_cross_entropy";
    gpuml__rowop r;
    char s1[200], s2[200];
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, loss, op, "loss"));
    GPUML__TRY(gpuml__check_tensor(ctx, logits, op, "logits"));
    GPUML__TRY(gpuml__check_tensor(ctx, labels, op, "labels"));
    GPUML__TRY(gpuml__need_float(ctx, logits, op, "logits"));
    GPUML__TRY(gpuml__need_dtype(ctx, labels, GPUML_I32, op, "labels"));
    GPUML__TRY(gpuml__need_dtype(ctx, loss, GPUML_F32, op, "loss"));
    if (logits->ndim != 2 || labels->ndim != 1 || labels->shape[0] != logits->shape[0])
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: logits %s must be [B, C] and labels %s [B]", op,
                           gpuml__shape_str(logits, s1, sizeof s1), gpuml__shape_str(labels, s2, sizeof s2));
    if (gpuml__numel(loss) != 1)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: loss is %s; it must hold one element", op, gpuml__shape_str(loss, s1, sizeof s1));
    if (logits->shape[0] == 0 || logits->shape[1] == 0)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: logits %s is empty", op, gpuml__shape_str(logits, s1, sizeof s1));
    if (dlogits) {
        GPUML__TRY(gpuml__check_tensor(ctx, dlogits, op, "dlogits"));
        GPUML__TRY(gpuml__need_dtype(ctx, dlogits, logits->dtype, op, "dlogits"));
        GPUML__TRY(gpuml__need_same_shape(ctx, dlogits, logits, op, "dlogits", "logits"));
        GPUML__TRY(gpuml__check_output(ctx, dlogits, op));
        GPUML__TRY(gpuml__check_disjoint(ctx, dlogits, logits, op, "dlogits", "logits"));
        if (gpuml__overlap(dlogits, labels) || gpuml__overlap(dlogits, loss))
            return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dlogits overlaps labels or loss", op);
    }
    if (gpuml__overlap(loss, logits) || gpuml__overlap(loss, labels))
        return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: loss overlaps an input", op);
    memset(&r, 0, sizeof r);
    r.kind = GPUML__ROW_XENT; r.x = logits; r.y = dlogits; r.labels = labels; r.loss = loss; r.axis = 1;
    return GPUML__PROF(ctx, gpuml__rows_run(ctx, &r), op + 6, GPUML_UNIT_FP32, gpuml__rows_flops(&r), gpuml__rows_bytes(&r),
                       r.x, r.dy ? r.dy : r.w, r.y ? r.y : r.loss);
}

/* ------------------------------------------------------------------ optimizers ---- */
typedef struct gpuml__optarg { int kind; float h[8]; gpuml_dtype gdt; } gpuml__optarg;

/* one element: the same formulas as gpuml__opt_one in kernels/elementwise.cu */
GPUML__FN void gpuml__opt_one(const gpuml__optarg *o, float *p, float g, float *m, float *v)
{
    const float *h = o->h;
    if (o->kind == 1) {
        g = fmaf(h[3], *p, g);
        if (h[1] != 0.0f) {
            *m = fmaf(h[1], *m, h[2] * g);
            g = h[4] != 0.0f ? fmaf(h[1], *m, g) : *m;
        }
        *p = fmaf(-h[0], g, *p);
    } else {
        *p = *p * h[4];
        *m = fmaf(h[1], *m, (1.0f - h[1]) * g);
        *v = fmaf(h[2], *v, (1.0f - h[2]) * g * g);
        *p = *p - h[0] * (*m * h[5]) / (sqrtf(*v) * h[6] + h[3]);
    }
}
#if GPUML__HAVE_AVX2_PATH
/* AdamW on dense f32 rows: the same operations in the same order as gpuml__opt_one (FMA where it
   uses fmaf, IEEE sqrt and division), so the results are bit-identical */
GPUML__FN GPUML__AVX2_TARGET int64_t gpuml__adamw_avx2(const float *h, int64_t n, float *p, const float *g, float *m, float *v)
{
    const __m256 h0 = _mm256_set1_ps(h[0]), h1 = _mm256_set1_ps(h[1]), h2 = _mm256_set1_ps(h[2]), h3 = _mm256_set1_ps(h[3]);
    const __m256 h4 = _mm256_set1_ps(h[4]), h5 = _mm256_set1_ps(h[5]), h6 = _mm256_set1_ps(h[6]);
    const __m256 c1 = _mm256_set1_ps(1.0f - h[1]), c2 = _mm256_set1_ps(1.0f - h[2]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 gv = _mm256_loadu_ps(g + i), pv = _mm256_mul_ps(_mm256_loadu_ps(p + i), h4);
        __m256 mv = _mm256_fmadd_ps(h1, _mm256_loadu_ps(m + i), _mm256_mul_ps(c1, gv));
        __m256 vv = _mm256_fmadd_ps(h2, _mm256_loadu_ps(v + i), _mm256_mul_ps(_mm256_mul_ps(c2, gv), gv));
        __m256 den = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vv), h6), h3);
        pv = _mm256_sub_ps(pv, _mm256_div_ps(_mm256_mul_ps(h0, _mm256_mul_ps(mv, h5)), den));
        _mm256_storeu_ps(m + i, mv);
        _mm256_storeu_ps(v + i, vv);
        _mm256_storeu_ps(p + i, pv);
    }
    return i;
}
#endif
GPUML__FN void gpuml__opt_row(void *arg, char **ptr, const int64_t *step, int64_t count)
{
    const gpuml__optarg *o = (const gpuml__optarg *)arg;
    float gb[GPUML__TILE], dummy = 0.0f;
    int64_t done, i;
    for (done = 0; done < count; done += GPUML__TILE) {
        int64_t n = GPUML__MIN((int64_t)GPUML__TILE, count - done);
        const float *g = gpuml__cpu_ld(o->gdt, ptr[1] + done * step[1], step[1], n, gb);
        i = 0;
#if GPUML__HAVE_AVX2_PATH
        if (o->kind == 2 && step[0] == 4 && step[2] == 4 && step[3] == 4 && gpuml__cpu_simd() >= 1)
            i = gpuml__adamw_avx2(o->h, n, (float *)(void *)(ptr[0] + done * 4), g, (float *)(void *)(ptr[2] + done * 4),
                                  (float *)(void *)(ptr[3] + done * 4));
#endif
        for (; i < n; i++) {
            int64_t k = done + i;
            float *p = (float *)(void *)(ptr[0] + k * step[0]);
            float *m = ptr[2] ? (float *)(void *)(ptr[2] + k * step[2]) : &dummy;
            float *v = ptr[3] ? (float *)(void *)(ptr[3] + k * step[3]) : &dummy;
            gpuml__opt_one(o, p, g[i], m, v);
        }
    }
}

GPUML__FN gpuml_status gpuml__optim(gpuml_ctx *ctx, const char *op, gpuml__optarg *o, gpuml_tensor *param, const gpuml_tensor *grad,
                                    gpuml_tensor *m, gpuml_tensor *v)
{
    const gpuml_tensor *ops[4];
    const gpuml_tensor *all[4];
    static const char *const names[4] = { "param", "grad", "state (m / momentum_buf)", "v" };
    gpuml__xiter it;
    int k, l, nops = o->kind == 2 ? 4 : (m ? 3 : 2);
    GPUML__TRY(gpuml__need_dtype(ctx, param, GPUML_F32, op, "param"));
    if (grad->dtype != GPUML_F32 && grad->dtype != GPUML_BF16)
        return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: grad is %s; it must be f32 or bf16", op, gpuml__dtype_names[grad->dtype]);
    GPUML__TRY(gpuml__need_same_shape(ctx, grad, param, op, "grad", "param"));
    all[0] = param; all[1] = grad; all[2] = m; all[3] = v;
    for (k = 2; k < nops; k++) {
        GPUML__TRY(gpuml__need_dtype(ctx, all[k], GPUML_F32, op, names[k]));
        GPUML__TRY(gpuml__need_same_shape(ctx, all[k], param, op, names[k], "param"));
    }
    for (k = 0; k < nops; k++) {
        if (k != 1) GPUML__TRY(gpuml__check_output(ctx, all[k], op));
        for (l = k + 1; l < nops; l++)
            if (gpuml__overlap(all[k], all[l]))
                return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s and %s overlap", op, names[k], names[l]);
    }
    for (k = 0; k < 4; k++) ops[k] = all[k] ? all[k] : param;
    gpuml__xiter_make(&it, ops, 4);
    if (nops < 4) it.base[3] = NULL;
    if (nops < 3) it.base[2] = NULL;
    o->gdt = grad->dtype;
    if (it.n == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__xforeach(ctx, &it, gpuml__opt_row, o);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__CUfunction fn;
        gpuml__CUdeviceptr ptr[4];
        char opts[96];
        unsigned grid[3] = {0, 0, 0}, block[3] = {256, 0, 0};
        int vec = 4;
        for (k = 0; k < 4; k++) {
            ptr[k] = (gpuml__CUdeviceptr)(uintptr_t)it.base[k];
            if (it.base[k] && ptr[k] % ((gpuml__CUdeviceptr)vec * gpuml__dtype_sizes[it.dt[k]]) != 0) vec = 1;
        }
        snprintf(opts, sizeof opts, "-DOPT=%d -DDT_G=%d -DVEC=4", o->kind, (int)grad->dtype);
        gpuml__ew_shape(ctx, it.n / 4, opts, sizeof opts, grid, block);   /* the same module for both kernels */
        if (gpuml__xiter_contig(&it) && vec == 4) {
            void *args[6];
            args[0] = &it.n; args[1] = o->h; args[2] = &ptr[0]; args[3] = &ptr[1]; args[4] = &ptr[2]; args[5] = &ptr[3];
            GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_opt_contig", &fn));
            return gpuml__launch(ctx, fn, grid, block, 0, args, op);
        } else {
            gpuml__kshape ks;
            gpuml__kview kv[4];
            void *args[7];
            memset(kv, 0, sizeof kv);   /* all 4 views go to the kernel */
            gpuml__xkparams(&it, &ks, kv);
            args[0] = &ks; args[1] = kv; args[2] = o->h; args[3] = &ptr[0]; args[4] = &ptr[1]; args[5] = &ptr[2]; args[6] = &ptr[3];
            GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_elementwise, opts, "gpuml_opt_strided", &fn));
            grid[0] = gpuml__grid_wave(ctx, it.n, 256);
            block[0] = 256;
            return gpuml__launch(ctx, fn, grid, block, 0, args, op);
        }
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}

GPUML__DEF gpuml_status gpuml_sgd_step(gpuml_ctx *ctx, gpuml_tensor *param, const gpuml_tensor *grad,
                                       gpuml_tensor *momentum_buf, const gpuml_sgd_desc *d)
{
    static const char op[] = "gpuml_sgd_step";
    gpuml__optarg o;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, param, op, "param"));
    GPUML__TRY(gpuml__check_tensor(ctx, grad, op, "grad"));
    if (!d) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", op);
    if (!(d->lr > 0) || !(d->momentum >= 0) || !(d->weight_decay >= 0) || !(d->dampening >= 0 && d->dampening <= 1))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: lr %g must be > 0; momentum %g, weight_decay %g >= 0; "
                           "dampening %g in [0, 1]", op, d->lr, d->momentum, d->weight_decay, d->dampening);
    if (d->nesterov && (d->momentum <= 0 || d->dampening != 0))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: nesterov needs momentum > 0 and dampening 0", op);
    if (d->momentum > 0) {
        if (!momentum_buf) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: momentum %g needs momentum_buf", op, d->momentum);
        GPUML__TRY(gpuml__check_tensor(ctx, momentum_buf, op, "momentum_buf"));
    }
    memset(&o, 0, sizeof o);
    o.kind = 1;
    o.h[0] = (float)d->lr; o.h[1] = (float)d->momentum; o.h[2] = (float)(1.0 - d->dampening);
    o.h[3] = (float)d->weight_decay; o.h[4] = d->nesterov ? 1.0f : 0.0f;
    return GPUML__PROF(ctx, gpuml__optim(ctx, op, &o, param, grad, d->momentum > 0 ? momentum_buf : NULL, NULL), "sgd_step", GPUML_UNIT_FP32,
                       4.0 * (double)gpuml__numel(param), 2.0 * gpuml__tb(param) + gpuml__tb(grad) + (d->momentum > 0 ? 2.0 * gpuml__tb(momentum_buf) : 0.0),
                       param, grad, param);
}

GPUML__DEF gpuml_status gpuml_adamw_step(gpuml_ctx *ctx, gpuml_tensor *param, const gpuml_tensor *grad,
                                         gpuml_tensor *m, gpuml_tensor *v, const gpuml_adamw_desc *d)
{
    static const char op[] = "gpuml_adamw_step";
    gpuml__optarg o;
    double lr, b1, b2, eps;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__check_tensor(ctx, param, op, "param"));
    GPUML__TRY(gpuml__check_tensor(ctx, grad, op, "grad"));
    GPUML__TRY(gpuml__check_tensor(ctx, m, op, "m"));
    GPUML__TRY(gpuml__check_tensor(ctx, v, op, "v"));
    if (!d) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", op);
    lr = d->lr != 0 ? d->lr : 1e-3;
    b1 = d->beta1 != 0 ? d->beta1 : 0.9;
    b2 = d->beta2 != 0 ? d->beta2 : 0.999;
    eps = d->eps != 0 ? d->eps : 1e-8;
    if (d->step < 1) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: step = %lld; steps count from 1", op, (long long)d->step);
    if (!(lr > 0) || !(b1 > 0 && b1 < 1) || !(b2 > 0 && b2 < 1) || !(eps > 0) || !(d->weight_decay >= 0))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: lr %g, eps %g must be > 0, betas %g, %g in (0, 1), "
                           "weight_decay %g >= 0", op, lr, eps, b1, b2, d->weight_decay);
    memset(&o, 0, sizeof o);
    o.kind = 2;
    o.h[0] = (float)lr; o.h[1] = (float)b1; o.h[2] = (float)b2; o.h[3] = (float)eps;
    o.h[4] = (float)(1.0 - lr * d->weight_decay);
    o.h[5] = (float)(1.0 / (1.0 - pow(b1, (double)d->step)));
    o.h[6] = (float)(1.0 / sqrt(1.0 - pow(b2, (double)d->step)));
    return GPUML__PROF(ctx, gpuml__optim(ctx, op, &o, param, grad, m, v), "adamw_step", GPUML_UNIT_FP32, 12.0 * (double)gpuml__numel(param),
                       2.0 * (gpuml__tb(param) + gpuml__tb(m) + gpuml__tb(v)) + gpuml__tb(grad), param, grad, param);
}

/* ------------------------------------------------------------ benchmark timing ---- */
#ifndef GPUML_NO_CUDA
/* Records a timing event on the context's stream (bench/ uses these; not API). */
GPUML__FN gpuml_status gpuml__bench_event(gpuml_ctx *ctx, gpuml__CUevent *ev)
{
    GPUML__CU(ctx, ctx->cu.EventCreate(ev, 0), "cuEventCreate");
    GPUML__CU(ctx, ctx->cu.EventRecord(*ev, ctx->stream), "cuEventRecord");
    return GPUML_SUCCESS;
}
/* milliseconds between two recorded events (waits for the second); destroys both */
GPUML__FN double gpuml__bench_elapsed(gpuml_ctx *ctx, gpuml__CUevent a, gpuml__CUevent b)
{
    float ms = -1.0f;
    if (ctx->cu.EventSynchronize(b) != 0 || ctx->cu.EventElapsedTime(&ms, a, b) != 0) ms = -1.0f;
    ctx->cu.EventDestroy(a);
    ctx->cu.EventDestroy(b);
    return ms;
}
#endif

/* BEGIN cpu_gemm (bench/cpu_gemm_standalone.c extracts this region to test it alone) */
/* ---------------------------------------------------------------------------
 * CPU GEMM -- BLIS-style SGEMM (f32 / f16 / bf16 inputs, f32 C).
 *
 * Pasted verbatim into the implementation section of gpuml.h.  Relies on the
 * core's gpuml__parallel_for, gpuml__pool_size, gpuml__cpu_has_avx2_fma,
 * gpuml__f16_to_f32, gpuml__bf16_to_f32, gpuml__aligned_alloc/free, (x86-64)
 * gpuml__cpu_has_f16c and gpuml__f16_ld_f16c, and on
 * <stdint.h>/<stddef.h> being included by the host.
 *
 * Structure (Goto/BLIS): jc (NC cols of B) -> pc (KC of K) -> pack B ->
 * ic (MC rows of A) -> pack A -> jr (NR) -> ir (MR) -> MR x NR microkernel.
 * Kernels, chosen per call: AVX-512F 12x32 (run-time check; its loop nest
 * is ic -> pc -> jc -> pack B -> ir -> jr, see GPUML__GEMM_A_L1_512), AVX2
 * 6x16, portable 6x16.  MR/NR and the blocking are values of the job.
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
   than it saves.  The AVX-512 kernel does twice the work a cycle, so it
   needs more (16-core Xeon: 64^3 ran at ~75 GFLOP/s on 2 threads, 95-130
   on 1). */
#ifndef GPUML__GEMM_THREAD_MNK
#define GPUML__GEMM_THREAD_MNK (48 * 48 * 48)
#endif
#ifndef GPUML__GEMM_THREAD_MNK512
#define GPUML__GEMM_THREAD_MNK512 (64 * 64 * 64)
#endif
/* The thread count also counts the packing: an element of A or B packed costs about as much
   as this many multiply-adds (0.2-0.3 ns against ~75 G multiply-adds/s a core with AVX-512, half
   that with AVX2).  Without it a 1 x 1024 x 1024 product (1 M multiply-adds, but 4 MB of B to
   stream) ran on 4 of 16 threads at 180 us, where OpenBLAS took 52.  0: FLOPs only (the old rule,
   a benchmark knob). */
static int gpuml__gemm_pack_madds = -1;   /* -1: 16 for the AVX-512 kernel, 8 for the others */
/* The AVX-512 kernels read f32 A and B unpacked (no packing at all) where each is re-read from
   L2 or read once: A's M x K floats at most GPUML__GEMM_SMALL_A512 bytes, or N <= 32 (one strip
   of B); B's K x N as much, or M <= 12 (one tile of rows: a larger B read again per tile, each k
   a row apart, ran 16-64 x 4096 x 4096 at 0.67-0.7 of the packed path); K >= 32 or at most 64^3
   multiply-adds (at K = 16, 1024 x 1024 ran at 0.73 of the packed path).  Figures in
   bench/NOTES_cpu_gemm.md, "Small products unpacked".  A benchmark knob: 0 keeps only the
   portable rule (GPUML__GEMM_SMALL_MNK). */
#ifndef GPUML__GEMM_SMALL_A512
#define GPUML__GEMM_SMALL_A512 (768 << 10)   /* 384^3 unpacked; 512^3 (1 MB each) ran level, so packed */
#endif
static int gpuml__gemm_small_rule = -1;

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

/* AVX-512F kernel, chosen at run time where the AVX2 path compiles: 12x32
   uses 24 zmm accumulators + 2 B vectors + 1 broadcast (27 of 32 zmm);
   per k 2 vector loads + 12 broadcasts feed 24 FMAs, 12 cycles on two
   512-bit FMA pipes.  14x32 (31 zmm) runs as fast in L1 but wastes more
   on the M edge (256 = 18*14 + 4); it stays selectable for experiments. */
#if GPUML__GEMM_AVX2
#define GPUML__GEMM_TARGET_AVX512 __attribute__((target("avx512f,avx2,fma")))
#ifndef GPUML__GEMM_MR512
#define GPUML__GEMM_MR512 12
#endif
#define GPUML__GEMM_NR512 32
/* Blocking for the AVX-512 kernel, measured on a 48 KB L1d / 2 MB L2 Xeon
   (bench/NOTES_cpu_gemm.md).  The loop order is the other way round from
   the AVX2 one (A_L1 = 1): the A micro-panel (12 x 384 x 4 = 18 KB) stays
   in L1 while 48 KB B micro-panels stream from the L2-resident B block
   (384 x 640 x 4 = 960 KB); the A block (up to MC rows) is packed once per
   K block, so B is packed once per call for M <= MC.  Holding the 32-wide
   B micro-panel in L1 instead (A_L1 = 0, KC = 256) was 3-5% slower at
   n >= 1024. */
#ifndef GPUML__GEMM_KC512
#define GPUML__GEMM_KC512 384
#endif
#ifndef GPUML__GEMM_MC512
#define GPUML__GEMM_MC512 2064
#endif
#ifndef GPUML__GEMM_NC512
#define GPUML__GEMM_NC512 640
#endif
#ifndef GPUML__GEMM_A_L1_512
#define GPUML__GEMM_A_L1_512 1
#endif
#ifndef GPUML__GEMM_PACK_WA512
#define GPUML__GEMM_PACK_WA512 3
#endif
#endif
/* Widest N for which the AVX-512 kernel reads a row-major f32 A unpacked
   (a gathered A that can describe its rows is read unpacked at any N: for
   the convolution's rows, C floats apart, that measured equal or 3-10%
   faster up to N = 2048), and the most row-pointer segments per micro-panel
   it takes.  Square GEMMs with N > 128 keep packing A (not re-measured). */
#ifndef GPUML__GEMM_UA_N
#define GPUML__GEMM_UA_N 128
#endif
#define GPUML__GEMM_UA_SEGS 64
/* Largest MR*NR of any kernel: the edge tile buffer. */
#define GPUML__GEMM_TILE_MAX 512

/* Internal options (tests force each path; the public entry passes 0). */
enum {
    GPUML__GEMM_OPT_NO_SMALL = 1,   /* never take the unpacked path */
    GPUML__GEMM_OPT_FORCE_SMALL = 2, /* always take the unpacked path */
    GPUML__GEMM_OPT_NO_SIMD = 4,     /* portable kernels even on AVX2 CPUs */
    GPUML__GEMM_OPT_NO_AVX512 = 8    /* the AVX2 kernel even on AVX-512 CPUs */
};

/* An operand whose panels the caller fills itself (implicit GEMM: a
   convolution gathers its activations straight into the packed panels, no
   im2col matrix).  fn writes dst[k*W + i] = X[i0 + i][k0 + k] for i < width,
   k < kc, and zeros for width <= i < W, where X[i][k] is the operand's
   element at M index i (for A) or N index i (for B) and K index k.  simd is
   the packing path in use (gpuml__gemm_pack_ptrs takes it). */
typedef void (*gpuml__gemm_gather_fn)(const void *arg, float *dst, int64_t W, int64_t i0,
                                      int64_t width, int64_t k0, int64_t kc, int simd);
/* Optional, A only: instead of packing, describe the W = 12 rows i0.. over
   k0 .. k0 + kc as nseg <= maxseg segments (lens[g] k each, row r of
   segment g contiguous at ptrs[12*g + r]) for the unpacked AVX-512 kernel;
   returns nseg, or -1 to have the panel packed by fn instead. */
typedef int64_t (*gpuml__gemm_rows_fn)(const void *arg, const float **ptrs, int64_t *lens,
                                       int64_t maxseg, int64_t i0, int64_t k0, int64_t kc);
typedef struct gpuml__gemm_gather {
    gpuml__gemm_gather_fn fn;
    const void *arg;
    gpuml__gemm_rows_fn rows; /* may be NULL */
} gpuml__gemm_gather;

typedef struct gpuml__gemm_args {
    int64_t M, N, K;
    float alpha, beta;
    const void *A; int at; int64_t rsa, csa;
    const void *B; int bt; int64_t rsb, csb;
    float *C; int64_t rsc, csc;
    const gpuml__gemm_gather *ga, *gb; /* optional: A / B gathered by the caller */
} gpuml__gemm_args;

/* Computes a full MR x NR tile from packed panels: C = alpha*AB + beta*C,
   C rows contiguous (column stride 1) with row stride ldc; beta == 0 means
   C is not read. */
typedef void (*gpuml__gemm_ukr_fn)(int64_t kc, const float *a, const float *b,
                                   float *c, int64_t ldc, float alpha, float beta);

static int64_t gpuml__gemm_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t gpuml__gemm_max(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t gpuml__gemm_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t gpuml__gemm_roundup(int64_t a, int64_t b) { return gpuml__gemm_ceil(a, b) * b; }

/* f16 / bf16 -> f32 inline, bit-identical to gpuml__f16_to_f32 / gpuml__bf16_to_f32 (NaN -> sign |
   0x7fc00000; an f16 subnormal goes through an f32 subnormal times 2^112, exact unless the caller runs
   with denormals-are-zero): the packing loops convert with these, not with one call an element */
static float gpuml__gemm_b2f(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static float gpuml__gemm_h2f(uint16_t h)
{
    const uint32_t s = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
    uint32_t u;
    float f;
    if (em >= 0x7c00u) {
        u = s | 0x7f800000u | (em > 0x7c00u ? 0x400000u : 0u);
    } else {
        u = em << 13;
        memcpy(&f, &u, 4);
        f *= 5.192296858534828e33f; /* 2^112: the f16 exponent bias 15 to f32's 127 */
        memcpy(&u, &f, 4);
        u |= s;
    }
    memcpy(&f, &u, 4);
    return f;
}

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
        /* half types: one inline conversion an element (a call and a dtype switch an element ran
           bf16 / f16 64^3 at a quarter of f32's rate on a Zen 4 core) */
        const uint16_t *x = (const uint16_t *)X + off;
        if (type == GPUML__GEMM_BF16) {
            for (k = 0; k < kc; ++k) {
                float *d = dst + k * W;
                for (w = 0; w < width; ++w) d[w] = gpuml__gemm_b2f(x[w * sw + k * sk]);
                for (; w < W; ++w) d[w] = 0.0f;
            }
        } else {
#if GPUML__GEMM_AVX2
            /* runs contiguous in memory convert 8 at a time by F16C (the core's gpuml__f16_ld_f16c) */
            if (gpuml__cpu_has_f16c() && (sw == 1 || sk == 1)) {
                float run[64];
                if (sw == 1) {
                    for (k = 0; k < kc; ++k) {
                        float *d = dst + k * W;
                        w = gpuml__f16_ld_f16c((const char *)(x + k * sk), width, d);
                        for (; w < width; ++w) d[w] = gpuml__gemm_h2f(x[w + k * sk]);
                        for (; w < W; ++w) d[w] = 0.0f;
                    }
                } else {
                    int64_t k0, kn, j;
                    for (w = 0; w < width; ++w)
                        for (k0 = 0; k0 < kc; k0 += 64) {
                            kn = gpuml__gemm_min(64, kc - k0);
                            j = gpuml__f16_ld_f16c((const char *)(x + w * sw + k0), kn, run);
                            for (; j < kn; ++j) run[j] = gpuml__gemm_h2f(x[w * sw + k0 + j]);
                            for (j = 0; j < kn; ++j) dst[(k0 + j) * W + w] = run[j];
                        }
                    for (; w < W; ++w)
                        for (k = 0; k < kc; ++k) dst[k * W + w] = 0.0f;
                }
                return;
            }
#endif
            for (k = 0; k < kc; ++k) {
                float *d = dst + k * W;
                for (w = 0; w < width; ++w) d[w] = gpuml__gemm_h2f(x[w * sw + k * sk]);
                for (; w < W; ++w) d[w] = 0.0f;
            }
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

#if GPUML__GEMM_AVX2
/* Transpose-pack of W rows contiguous along k, W = 4q or 4q + 2 (the
   AVX-512 kernel's A panel), kn = 8 or 16 k at a time: 4x8 transposes of
   row quads and a pair interleave, stored as 128/64-bit pieces.  (256-bit shuffles:
   GCC 12's 512-bit ones warn -Wmaybe-uninitialized in C++.) */
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_pack_at8(float *dst, int64_t W, const float *x, int64_t sw, int64_t kn)
{
    int64_t r, h;
    for (r = 0; r + 4 <= W; r += 4) {
        for (h = 0; h < kn; h += 8) { /* both halves of a line back to back */
            const float *s = x + r * sw + h;
            float *d = dst + h * W;
            __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + sw);
            __m256 v2 = _mm256_loadu_ps(s + 2 * sw), v3 = _mm256_loadu_ps(s + 3 * sw);
            __m256 t0 = _mm256_unpacklo_ps(v0, v1), t1 = _mm256_unpackhi_ps(v0, v1);
            __m256 t2 = _mm256_unpacklo_ps(v2, v3), t3 = _mm256_unpackhi_ps(v2, v3);
            /* lane l of q_j: column j+4l of the four rows */
            __m256 q0 = _mm256_shuffle_ps(t0, t2, 0x44), q1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 q2 = _mm256_shuffle_ps(t1, t3, 0x44), q3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            _mm_storeu_ps(d + r, _mm256_castps256_ps128(q0));
            _mm_storeu_ps(d + W + r, _mm256_castps256_ps128(q1));
            _mm_storeu_ps(d + 2 * W + r, _mm256_castps256_ps128(q2));
            _mm_storeu_ps(d + 3 * W + r, _mm256_castps256_ps128(q3));
            _mm_storeu_ps(d + 4 * W + r, _mm256_extractf128_ps(q0, 1));
            _mm_storeu_ps(d + 5 * W + r, _mm256_extractf128_ps(q1, 1));
            _mm_storeu_ps(d + 6 * W + r, _mm256_extractf128_ps(q2, 1));
            _mm_storeu_ps(d + 7 * W + r, _mm256_extractf128_ps(q3, 1));
        }
    }
    for (h = 0; r < W && h < kn; h += 8) {
        /* the last two rows: 64-bit slot (j&1) of p_(j>>1), lane l, is column j+4l */
        const float *s = x + r * sw + h;
        float *d = dst + h * W;
        __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + sw);
        __m256 p0 = _mm256_unpacklo_ps(v0, v1), p1 = _mm256_unpackhi_ps(v0, v1);
        __m128 l0 = _mm256_castps256_ps128(p0), l1 = _mm256_castps256_ps128(p1);
        __m128 h0 = _mm256_extractf128_ps(p0, 1), h1 = _mm256_extractf128_ps(p1, 1);
        _mm_storel_pi((__m64 *)(d + r), l0);
        _mm_storeh_pi((__m64 *)(d + W + r), l0);
        _mm_storel_pi((__m64 *)(d + 2 * W + r), l1);
        _mm_storeh_pi((__m64 *)(d + 3 * W + r), l1);
        _mm_storel_pi((__m64 *)(d + 4 * W + r), h0);
        _mm_storeh_pi((__m64 *)(d + 5 * W + r), h0);
        _mm_storel_pi((__m64 *)(d + 6 * W + r), h1);
        _mm_storeh_pi((__m64 *)(d + 7 * W + r), h1);
    }
}

GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_pack_at_avx512(float *dst, int64_t W, int64_t kc, const float *x, int64_t sw)
{
    int64_t k = 0, i;
    /* 16 k per step: both halves of each 64-byte line back to back, so the
       W rows (often a power-of-two stride apart, hence in one L1 set) are
       read once per line; 10% faster than 8 k per step at n = 2048 */
    for (; k + 16 <= kc; k += 16) gpuml__gemm_pack_at8(dst + k * W, W, x + k, sw, 16);
    for (; k + 8 <= kc; k += 8) gpuml__gemm_pack_at8(dst + k * W, W, x + k, sw, 8);
    for (; k < kc; ++k)
        for (i = 0; i < W; ++i) dst[k * W + i] = x[i * sw + k];
}

/* Full 32-wide panel of row-major B: two zmm copies per k. */
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_pack_b32_avx512(float *dst, int64_t kc, const float *x, int64_t sk)
{
    int64_t k;
    for (k = 0; k < kc; ++k) {
        const float *s = x + k * sk;
        _mm512_store_ps(dst + k * 32, _mm512_loadu_ps(s));
        _mm512_store_ps(dst + k * 32 + 16, _mm512_loadu_ps(s + 16));
    }
}
/* A panel (or a narrow B panel) contiguous along its width (sw == 1: an A stored k-major, op(A) = A^T
   of a row-major matrix, e.g. dy^T in the conv's backward filter): W <= 16 floats a k, the last
   W - width zero, by masked moves (the scalar row copies were 12.7% of the stem's backward filter) */
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_pack_rows_avx512(float *dst, int64_t W, int64_t width, int64_t kc, const float *x, int64_t sk)
{
    const __mmask16 mr = (__mmask16)((1u << width) - 1u), mw = (__mmask16)((1u << W) - 1u);
    int64_t k;
    for (k = 0; k < kc; ++k) _mm512_mask_storeu_ps(dst + k * W, mw, _mm512_maskz_loadu_ps(mr, x + k * sk));
}
#endif

#if GPUML__GEMM_AVX2
/* Transpose-pack of W rows given by pointers, each contiguous along k:
   dst[k*W + i] = rows[i][k] for k < kc; W = 4q or 4q + 2 (every kernel's MR
   and NR), at most 32.  4x8 transposes as in gpuml__gemm_pack_at8 (256-bit
   only, so it runs under the AVX2 kernel too), 16 k per row quad (a whole
   64-byte line of each row: rows a large power-of-two-ish stride apart, e.g.
   weights [K][R*S*C], fall into few L1 sets).  A k tail is done as 8-k
   blocks, the last one ending at kc (overlapping the one before: the same
   values again), or, for kc < 8, loaded masked through a stack tile. */
GPUML__GEMM_TARGET_AVX2
static void gpuml__gemm_tr_ptrs(float *d, int64_t W, const float *const *rows, int64_t k, int64_t nr,
                                __m256i mask, int masked)
{
    /* nr = 4: a 4x8 transpose of rows[0..3] at k into d (rows of stride W);
       nr = 2: the last two rows, as 64-bit pieces */
    __m256 v0, v1, v2, v3;
    if (!masked) {
        v0 = _mm256_loadu_ps(rows[0] + k); v1 = _mm256_loadu_ps(rows[1] + k);
    } else {
        v0 = _mm256_maskload_ps(rows[0] + k, mask); v1 = _mm256_maskload_ps(rows[1] + k, mask);
    }
    if (nr == 4) {
        __m256 t0, t1, t2, t3, q0, q1, q2, q3;
        if (!masked) {
            v2 = _mm256_loadu_ps(rows[2] + k); v3 = _mm256_loadu_ps(rows[3] + k);
        } else {
            v2 = _mm256_maskload_ps(rows[2] + k, mask); v3 = _mm256_maskload_ps(rows[3] + k, mask);
        }
        t0 = _mm256_unpacklo_ps(v0, v1); t1 = _mm256_unpackhi_ps(v0, v1);
        t2 = _mm256_unpacklo_ps(v2, v3); t3 = _mm256_unpackhi_ps(v2, v3);
        q0 = _mm256_shuffle_ps(t0, t2, 0x44); q1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        q2 = _mm256_shuffle_ps(t1, t3, 0x44); q3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        _mm_storeu_ps(d, _mm256_castps256_ps128(q0));
        _mm_storeu_ps(d + W, _mm256_castps256_ps128(q1));
        _mm_storeu_ps(d + 2 * W, _mm256_castps256_ps128(q2));
        _mm_storeu_ps(d + 3 * W, _mm256_castps256_ps128(q3));
        _mm_storeu_ps(d + 4 * W, _mm256_extractf128_ps(q0, 1));
        _mm_storeu_ps(d + 5 * W, _mm256_extractf128_ps(q1, 1));
        _mm_storeu_ps(d + 6 * W, _mm256_extractf128_ps(q2, 1));
        _mm_storeu_ps(d + 7 * W, _mm256_extractf128_ps(q3, 1));
    } else {
        __m256 p0 = _mm256_unpacklo_ps(v0, v1), p1 = _mm256_unpackhi_ps(v0, v1);
        __m128 l0 = _mm256_castps256_ps128(p0), l1 = _mm256_castps256_ps128(p1);
        __m128 h0 = _mm256_extractf128_ps(p0, 1), h1 = _mm256_extractf128_ps(p1, 1);
        _mm_storel_pi((__m64 *)d, l0);
        _mm_storeh_pi((__m64 *)(d + W), l0);
        _mm_storel_pi((__m64 *)(d + 2 * W), l1);
        _mm_storeh_pi((__m64 *)(d + 3 * W), l1);
        _mm_storel_pi((__m64 *)(d + 4 * W), h0);
        _mm_storeh_pi((__m64 *)(d + 5 * W), h0);
        _mm_storel_pi((__m64 *)(d + 6 * W), h1);
        _mm_storeh_pi((__m64 *)(d + 7 * W), h1);
    }
}

GPUML__GEMM_TARGET_AVX2
static void gpuml__gemm_pack_ptrs_avx2(float *dst, int64_t W, int64_t kc, const float *const *rows)
{
    float tail[8 * 32];
    int64_t k = 0, r;
    __m256i all = _mm256_set1_epi32(-1);
    for (; k + 16 <= kc; k += 16)
        for (r = 0; r < W; r += 4) {
            int64_t nr = gpuml__gemm_min(4, W - r);
            gpuml__gemm_tr_ptrs(dst + k * W + r, W, rows + r, k, nr, all, 0);
            gpuml__gemm_tr_ptrs(dst + (k + 8) * W + r, W, rows + r, k + 8, nr, all, 0);
        }
    for (; k < kc; k += 8) {
        int64_t kn, i;
        __m256i mask;
        float *d;
        if (k + 8 > kc && kc >= 8) k = kc - 8;
        kn = gpuml__gemm_min(8, kc - k);
        d = kn == 8 ? dst + k * W : tail;
        mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)kn), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        for (r = 0; r < W; r += 4) gpuml__gemm_tr_ptrs(d + r, W, rows + r, k, gpuml__gemm_min(4, W - r), mask, kn < 8);
        for (i = 0; kn < 8 && i < kn * W; ++i) dst[k * W + i] = tail[i];
    }
}
#endif

/* The same for any W and packing path: what a gather callback calls once it
   has found where each of its rows' next kc elements lie. */
static void gpuml__gemm_pack_ptrs(float *dst, int64_t W, int64_t kc, const float *const *rows, int simd)
{
    int64_t k, r;
#if GPUML__GEMM_AVX2
    if (simd && W <= 32 && (W % 4 == 0 || W % 4 == 2)) {
        gpuml__gemm_pack_ptrs_avx2(dst, W, kc, rows);
        return;
    }
#else
    (void)simd;
#endif
    for (k = 0; k < kc; ++k)
        for (r = 0; r < W; ++r) dst[k * W + r] = rows[r][k];
}

/* Packs `width` rows/cols as consecutive panels of W (panel p at dst+p*W*kc).
   simd: 0 portable, 1 AVX2, 2 AVX-512 (the kernel in use). */
static void gpuml__gemm_pack(float *dst, int64_t W, int64_t width, int64_t kc,
                             const void *X, int type, int64_t off, int64_t sw, int64_t sk,
                             int simd)
{
    int64_t p;
    for (p = 0; p < width; p += W) {
        int64_t w = gpuml__gemm_min(W, width - p);
#if GPUML__GEMM_AVX2
        if (simd == 2 && w == W && type == GPUML__GEMM_F32) {
            if (W == GPUML__GEMM_MR512 && sk == 1) {
                gpuml__gemm_pack_at_avx512(dst + p * kc, W, kc, (const float *)X + off + p * sw, sw);
                continue;
            }
            if (W == GPUML__GEMM_NR512 && sw == 1) {
                gpuml__gemm_pack_b32_avx512(dst + p * kc, kc, (const float *)X + off + p * sw, sk);
                continue;
            }
        }
        if (simd == 2 && W <= 16 && sw == 1 && type == GPUML__GEMM_F32) {
            gpuml__gemm_pack_rows_avx512(dst + p * kc, W, w, kc, (const float *)X + off + p, sk);
            continue;
        }
        if (simd && W == 6 && w == 6 && sk == 1 && type == GPUML__GEMM_F32) {
            gpuml__gemm_pack_a6_avx2(dst + p * kc, kc, (const float *)X + off + p * sw, sw);
            continue;
        }
        if (simd && W == 16 && w == 16 && sw == 1 && type == GPUML__GEMM_F32) {
            gpuml__gemm_pack_b16_avx2(dst + p * kc, kc, (const float *)X + off + p * sw, sk);
            continue;
        }
        if (simd && w == W && W <= 32 && (W % 4 == 0 || W % 4 == 2) && sk == 1 && type == GPUML__GEMM_F32) {
            /* full panel contiguous along k (a B stored column-major, e.g.
               weights [N][K]): vector transposes instead of the scalar loop */
            const float *rows[32];
            int64_t i;
            for (i = 0; i < W; ++i) rows[i] = (const float *)X + off + (p + i) * sw;
            gpuml__gemm_pack_ptrs(dst + p * kc, W, kc, rows, simd);
            continue;
        }
#else
        (void)simd;
#endif
        gpuml__gemm_pack_panel(dst + p * kc, W, w, kc, X, type, off + p * sw, sw, sk);
    }
}

/* gpuml__gemm_pack for an operand that may be gathered by the caller: i0, k0
   are the first row/col (M or N index) and the first k of the panels. */
static void gpuml__gemm_pack_op(float *dst, int64_t W, int64_t width, int64_t kc,
                                const gpuml__gemm_gather *ga, int64_t i0, int64_t k0,
                                const void *X, int type, int64_t off, int64_t sw, int64_t sk,
                                int simd)
{
    int64_t p;
    if (!ga) {
        gpuml__gemm_pack(dst, W, width, kc, X, type, off, sw, sk, simd);
        return;
    }
    for (p = 0; p < width; p += W)
        ga->fn(ga->arg, dst + p * kc, W, i0 + p, gpuml__gemm_min(W, width - p), k0, kc, simd);
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

#if GPUML__GEMM_AVX2
#if GPUML__GEMM_MR512 != 12 && GPUML__GEMM_MR512 != 14
#error "GPUML__GEMM_MR512 must be 12 or 14"
#endif
#define GPUML__GEMM_UKR_ROW(r, ko)                                              \
    av = _mm512_set1_ps(a[GPUML__GEMM_MR512 * (ko) + (r)]);                    \
    c##r##_0 = _mm512_fmadd_ps(av, b0, c##r##_0);                              \
    c##r##_1 = _mm512_fmadd_ps(av, b1, c##r##_1);
#if GPUML__GEMM_MR512 == 14
#define GPUML__GEMM_UKR_ROWS_HI(ko) GPUML__GEMM_UKR_ROW(12, ko) GPUML__GEMM_UKR_ROW(13, ko)
#define GPUML__GEMM_UKR_DECL_HI                                                 \
    __m512 c12_0 = _mm512_setzero_ps(), c12_1 = _mm512_setzero_ps();           \
    __m512 c13_0 = _mm512_setzero_ps(), c13_1 = _mm512_setzero_ps();
#define GPUML__GEMM_UKR_STORE_HI GPUML__GEMM_UKR_STORE(12) GPUML__GEMM_UKR_STORE(13)
#else
#define GPUML__GEMM_UKR_ROWS_HI(ko)
#define GPUML__GEMM_UKR_DECL_HI
#define GPUML__GEMM_UKR_STORE_HI
#endif
#define GPUML__GEMM_UKR_STEP(ko)                                                \
    b0 = _mm512_load_ps(b + 32 * (ko));                                        \
    b1 = _mm512_load_ps(b + 32 * (ko) + 16);                                   \
    GPUML__GEMM_UKR_ROW(0, ko) GPUML__GEMM_UKR_ROW(1, ko)                      \
    GPUML__GEMM_UKR_ROW(2, ko) GPUML__GEMM_UKR_ROW(3, ko)                      \
    GPUML__GEMM_UKR_ROW(4, ko) GPUML__GEMM_UKR_ROW(5, ko)                      \
    GPUML__GEMM_UKR_ROW(6, ko) GPUML__GEMM_UKR_ROW(7, ko)                      \
    GPUML__GEMM_UKR_ROW(8, ko) GPUML__GEMM_UKR_ROW(9, ko)                      \
    GPUML__GEMM_UKR_ROW(10, ko) GPUML__GEMM_UKR_ROW(11, ko)                    \
    GPUML__GEMM_UKR_ROWS_HI(ko)
#define GPUML__GEMM_UKR_STORE(r)                                                \
    {                                                                           \
        float *cr = c + (r) * ldc;                                              \
        __m512 x0 = _mm512_mul_ps(va, c##r##_0), x1 = _mm512_mul_ps(va, c##r##_1); \
        if (beta != 0.0f) {                                                     \
            x0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), x0);                  \
            x1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), x1);             \
        }                                                                       \
        _mm512_storeu_ps(cr, x0);                                               \
        _mm512_storeu_ps(cr + 16, x1);                                          \
    }

GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_ukr_avx512(int64_t kc, const float *a, const float *b,
                                   float *c, int64_t ldc, float alpha, float beta)
{
    __m512 c0_0 = _mm512_setzero_ps(), c0_1 = _mm512_setzero_ps();
    __m512 c1_0 = _mm512_setzero_ps(), c1_1 = _mm512_setzero_ps();
    __m512 c2_0 = _mm512_setzero_ps(), c2_1 = _mm512_setzero_ps();
    __m512 c3_0 = _mm512_setzero_ps(), c3_1 = _mm512_setzero_ps();
    __m512 c4_0 = _mm512_setzero_ps(), c4_1 = _mm512_setzero_ps();
    __m512 c5_0 = _mm512_setzero_ps(), c5_1 = _mm512_setzero_ps();
    __m512 c6_0 = _mm512_setzero_ps(), c6_1 = _mm512_setzero_ps();
    __m512 c7_0 = _mm512_setzero_ps(), c7_1 = _mm512_setzero_ps();
    __m512 c8_0 = _mm512_setzero_ps(), c8_1 = _mm512_setzero_ps();
    __m512 c9_0 = _mm512_setzero_ps(), c9_1 = _mm512_setzero_ps();
    __m512 c10_0 = _mm512_setzero_ps(), c10_1 = _mm512_setzero_ps();
    __m512 c11_0 = _mm512_setzero_ps(), c11_1 = _mm512_setzero_ps();
    GPUML__GEMM_UKR_DECL_HI
    __m512 b0, b1, av, va, vb;
    int64_t k = 0;
    int r;
    /* C is touched only after the K loop; start pulling its lines now. */
    for (r = 0; r < GPUML__GEMM_MR512; ++r) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 31), _MM_HINT_T0);
    }
    for (; k + 4 <= kc; k += 4) {
        GPUML__GEMM_UKR_STEP(0)
        GPUML__GEMM_UKR_STEP(1)
        GPUML__GEMM_UKR_STEP(2)
        GPUML__GEMM_UKR_STEP(3)
        a += 4 * GPUML__GEMM_MR512;
        b += 4 * 32;
    }
    for (; k < kc; ++k) {
        GPUML__GEMM_UKR_STEP(0)
        a += GPUML__GEMM_MR512;
        b += 32;
    }
    va = _mm512_set1_ps(alpha);
    vb = _mm512_set1_ps(beta);
    GPUML__GEMM_UKR_STORE(0) GPUML__GEMM_UKR_STORE(1) GPUML__GEMM_UKR_STORE(2)
    GPUML__GEMM_UKR_STORE(3) GPUML__GEMM_UKR_STORE(4) GPUML__GEMM_UKR_STORE(5)
    GPUML__GEMM_UKR_STORE(6) GPUML__GEMM_UKR_STORE(7) GPUML__GEMM_UKR_STORE(8)
    GPUML__GEMM_UKR_STORE(9) GPUML__GEMM_UKR_STORE(10) GPUML__GEMM_UKR_STORE(11)
    GPUML__GEMM_UKR_STORE_HI
}
#undef GPUML__GEMM_UKR_ROW
#undef GPUML__GEMM_UKR_ROWS_HI
#undef GPUML__GEMM_UKR_DECL_HI
#undef GPUML__GEMM_UKR_STORE_HI
#undef GPUML__GEMM_UKR_STEP
#undef GPUML__GEMM_UKR_STORE

/* 4 rows of a 12/14-row A micro-panel (stride MR512) times a 32-wide B
   micro-panel: the M edge (e.g. 256 = 21*12 + 4) then costs 4 rows of
   FMAs, not 12.  8 accumulators cover the FMA latency on two pipes. */
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_ukr4_avx512(int64_t kc, const float *a, const float *b,
                                    float *c, int64_t ldc, float alpha, float beta)
{
    __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
    __m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
    __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
    __m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    __m512 x[8];
    int64_t k;
    int r;
    for (k = 0; k < kc; ++k) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), av;
        av = _mm512_set1_ps(a[0]); c00 = _mm512_fmadd_ps(av, b0, c00); c01 = _mm512_fmadd_ps(av, b1, c01);
        av = _mm512_set1_ps(a[1]); c10 = _mm512_fmadd_ps(av, b0, c10); c11 = _mm512_fmadd_ps(av, b1, c11);
        av = _mm512_set1_ps(a[2]); c20 = _mm512_fmadd_ps(av, b0, c20); c21 = _mm512_fmadd_ps(av, b1, c21);
        av = _mm512_set1_ps(a[3]); c30 = _mm512_fmadd_ps(av, b0, c30); c31 = _mm512_fmadd_ps(av, b1, c31);
        a += GPUML__GEMM_MR512;
        b += 32;
    }
    x[0] = c00; x[1] = c01; x[2] = c10; x[3] = c11;
    x[4] = c20; x[5] = c21; x[6] = c30; x[7] = c31;
    for (r = 0; r < 4; ++r) {
        float *cr = c + r * ldc;
        __m512 y0 = _mm512_mul_ps(va, x[2 * r]), y1 = _mm512_mul_ps(va, x[2 * r + 1]);
        if (beta != 0.0f) {
            y0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), y0);
            y1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), y1);
        }
        _mm512_storeu_ps(cr, y0);
        _mm512_storeu_ps(cr + 16, y1);
    }
}

/* A full 12/14-row A micro-panel times the first 16 columns of a 32-wide B
   micro-panel: the N edge when at most 16 columns are left (e.g. 1000 =
   31*32 + 8) costs half a tile.  12-14 accumulators cover the FMA latency. */
#define GPUML__GEMM_UKR16_ROW(r) x##r = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), b0, x##r);
#define GPUML__GEMM_UKR16_STORE(r)                                              \
    {                                                                           \
        float *cr = c + (r) * ldc;                                              \
        __m512 y = _mm512_mul_ps(va, x##r);                                     \
        if (beta != 0.0f) y = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), y);      \
        _mm512_storeu_ps(cr, y);                                                \
    }
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_ukr16_avx512(int64_t kc, const float *a, const float *b,
                                     float *c, int64_t ldc, float alpha, float beta)
{
    __m512 x0 = _mm512_setzero_ps(), x1 = _mm512_setzero_ps(), x2 = _mm512_setzero_ps();
    __m512 x3 = _mm512_setzero_ps(), x4 = _mm512_setzero_ps(), x5 = _mm512_setzero_ps();
    __m512 x6 = _mm512_setzero_ps(), x7 = _mm512_setzero_ps(), x8 = _mm512_setzero_ps();
    __m512 x9 = _mm512_setzero_ps(), x10 = _mm512_setzero_ps(), x11 = _mm512_setzero_ps();
#if GPUML__GEMM_MR512 == 14
    __m512 x12 = _mm512_setzero_ps(), x13 = _mm512_setzero_ps();
#endif
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    int64_t k;
    for (k = 0; k < kc; ++k) {
        __m512 b0 = _mm512_load_ps(b);
        GPUML__GEMM_UKR16_ROW(0) GPUML__GEMM_UKR16_ROW(1) GPUML__GEMM_UKR16_ROW(2)
        GPUML__GEMM_UKR16_ROW(3) GPUML__GEMM_UKR16_ROW(4) GPUML__GEMM_UKR16_ROW(5)
        GPUML__GEMM_UKR16_ROW(6) GPUML__GEMM_UKR16_ROW(7) GPUML__GEMM_UKR16_ROW(8)
        GPUML__GEMM_UKR16_ROW(9) GPUML__GEMM_UKR16_ROW(10) GPUML__GEMM_UKR16_ROW(11)
#if GPUML__GEMM_MR512 == 14
        GPUML__GEMM_UKR16_ROW(12) GPUML__GEMM_UKR16_ROW(13)
#endif
        a += GPUML__GEMM_MR512;
        b += 32;
    }
    GPUML__GEMM_UKR16_STORE(0) GPUML__GEMM_UKR16_STORE(1) GPUML__GEMM_UKR16_STORE(2)
    GPUML__GEMM_UKR16_STORE(3) GPUML__GEMM_UKR16_STORE(4) GPUML__GEMM_UKR16_STORE(5)
    GPUML__GEMM_UKR16_STORE(6) GPUML__GEMM_UKR16_STORE(7) GPUML__GEMM_UKR16_STORE(8)
    GPUML__GEMM_UKR16_STORE(9) GPUML__GEMM_UKR16_STORE(10) GPUML__GEMM_UKR16_STORE(11)
#if GPUML__GEMM_MR512 == 14
    GPUML__GEMM_UKR16_STORE(12) GPUML__GEMM_UKR16_STORE(13)
#endif
}
#undef GPUML__GEMM_UKR16_ROW
#undef GPUML__GEMM_UKR16_STORE

#if GPUML__GEMM_MR512 == 12
/* The 12x32 kernel reading A unpacked, through row pointers: segment g has
   lens[g] k, row r of it contiguous at ptrs[12*g + r] (a row-major f32 A is
   one segment; a convolution's rows are one segment per run of channels,
   the implicit GEMM without its packing).  For small N (a few B
   micro-panels per A micro-panel) packing A costs about as much as the FMAs
   it feeds; here the 12 rows stream straight from the source. */
#define GPUML__GEMM_UA_ROW(r, ko)                                               \
    av = _mm512_set1_ps(a##r[ko]);                                             \
    c##r##_0 = _mm512_fmadd_ps(av, b0, c##r##_0);                              \
    c##r##_1 = _mm512_fmadd_ps(av, b1, c##r##_1);
#define GPUML__GEMM_UA_STEP(ko)                                                 \
    b0 = _mm512_load_ps(b + 32 * (ko));                                        \
    b1 = _mm512_load_ps(b + 32 * (ko) + 16);                                   \
    GPUML__GEMM_UA_ROW(0, ko) GPUML__GEMM_UA_ROW(1, ko)                        \
    GPUML__GEMM_UA_ROW(2, ko) GPUML__GEMM_UA_ROW(3, ko)                        \
    GPUML__GEMM_UA_ROW(4, ko) GPUML__GEMM_UA_ROW(5, ko)                        \
    GPUML__GEMM_UA_ROW(6, ko) GPUML__GEMM_UA_ROW(7, ko)                        \
    GPUML__GEMM_UA_ROW(8, ko) GPUML__GEMM_UA_ROW(9, ko)                        \
    GPUML__GEMM_UA_ROW(10, ko) GPUML__GEMM_UA_ROW(11, ko)
#define GPUML__GEMM_UA_STORE(r)                                                 \
    {                                                                           \
        float *cr = c + (r) * ldc;                                              \
        __m512 x0 = _mm512_mul_ps(va, c##r##_0), x1 = _mm512_mul_ps(va, c##r##_1); \
        if (beta != 0.0f) {                                                     \
            x0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), x0);                  \
            x1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), x1);             \
        }                                                                       \
        _mm512_storeu_ps(cr, x0);                                               \
        _mm512_storeu_ps(cr + 16, x1);                                          \
    }
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_ukr_ind_avx512(int64_t nseg, const float *const *ptrs, const int64_t *lens,
                                       const float *b, float *c, int64_t ldc, float alpha, float beta)
{
    __m512 c0_0 = _mm512_setzero_ps(), c0_1 = _mm512_setzero_ps();
    __m512 c1_0 = _mm512_setzero_ps(), c1_1 = _mm512_setzero_ps();
    __m512 c2_0 = _mm512_setzero_ps(), c2_1 = _mm512_setzero_ps();
    __m512 c3_0 = _mm512_setzero_ps(), c3_1 = _mm512_setzero_ps();
    __m512 c4_0 = _mm512_setzero_ps(), c4_1 = _mm512_setzero_ps();
    __m512 c5_0 = _mm512_setzero_ps(), c5_1 = _mm512_setzero_ps();
    __m512 c6_0 = _mm512_setzero_ps(), c6_1 = _mm512_setzero_ps();
    __m512 c7_0 = _mm512_setzero_ps(), c7_1 = _mm512_setzero_ps();
    __m512 c8_0 = _mm512_setzero_ps(), c8_1 = _mm512_setzero_ps();
    __m512 c9_0 = _mm512_setzero_ps(), c9_1 = _mm512_setzero_ps();
    __m512 c10_0 = _mm512_setzero_ps(), c10_1 = _mm512_setzero_ps();
    __m512 c11_0 = _mm512_setzero_ps(), c11_1 = _mm512_setzero_ps();
    __m512 b0, b1, av, va, vb;
    int64_t g;
    int r;
    for (r = 0; r < 12; ++r) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 31), _MM_HINT_T0);
    }
    for (g = 0; g < nseg; ++g) {
    const float *const *p = ptrs + 12 * g;
    const float *a0 = p[0], *a1 = p[1], *a2 = p[2], *a3 = p[3], *a4 = p[4], *a5 = p[5];
    const float *a6 = p[6], *a7 = p[7], *a8 = p[8], *a9 = p[9], *a10 = p[10], *a11 = p[11];
    int64_t k = 0, kc = lens[g];
    for (; k + 4 <= kc; k += 4) {
        GPUML__GEMM_UA_STEP(0)
        GPUML__GEMM_UA_STEP(1)
        GPUML__GEMM_UA_STEP(2)
        GPUML__GEMM_UA_STEP(3)
        a0 += 4; a1 += 4; a2 += 4; a3 += 4; a4 += 4; a5 += 4;
        a6 += 4; a7 += 4; a8 += 4; a9 += 4; a10 += 4; a11 += 4;
        b += 4 * 32;
    }
    for (; k < kc; ++k) {
        GPUML__GEMM_UA_STEP(0)
        a0 += 1; a1 += 1; a2 += 1; a3 += 1; a4 += 1; a5 += 1;
        a6 += 1; a7 += 1; a8 += 1; a9 += 1; a10 += 1; a11 += 1;
        b += 32;
    }
    }
    va = _mm512_set1_ps(alpha);
    vb = _mm512_set1_ps(beta);
    GPUML__GEMM_UA_STORE(0) GPUML__GEMM_UA_STORE(1) GPUML__GEMM_UA_STORE(2)
    GPUML__GEMM_UA_STORE(3) GPUML__GEMM_UA_STORE(4) GPUML__GEMM_UA_STORE(5)
    GPUML__GEMM_UA_STORE(6) GPUML__GEMM_UA_STORE(7) GPUML__GEMM_UA_STORE(8)
    GPUML__GEMM_UA_STORE(9) GPUML__GEMM_UA_STORE(10) GPUML__GEMM_UA_STORE(11)
}
#undef GPUML__GEMM_UA_ROW
#undef GPUML__GEMM_UA_STEP
#undef GPUML__GEMM_UA_STORE
#endif

/* Cached CPUID check (also covers the OS saving zmm state). */
static int gpuml__gemm_has_avx512(void)
{
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return cached;
}
#endif

/* ---- blocked driver ----------------------------------------------------- */

/* Writes alpha*tile + beta*C for an edge (or non-unit column stride) tile. */
static void gpuml__gemm_store_tile(const float *t, int64_t ldt, int64_t mr, int64_t nr, float *c,
                                   int64_t rsc, int64_t csc, float alpha, float beta)
{
    int64_t i, j;
    for (i = 0; i < mr; ++i)
        for (j = 0; j < nr; ++j) {
            float *cij = c + i * rsc + j * csc;
            float v = alpha * t[i * ldt + j];
            *cij = beta == 0.0f ? v : v + beta * *cij;
        }
}

/* The kernel of a call: its register block MR x NR (MR*NR <= TILE_MAX)
   and its cache blocking. */
typedef struct gpuml__gemm_kernel {
    gpuml__gemm_ukr_fn ukr;
    gpuml__gemm_ukr_fn ukr4; /* optional: 4 rows of an A micro-panel, for the M edge */
    gpuml__gemm_ukr_fn ukr16; /* optional: the first 16 columns of a B micro-panel, for the N edge */
    int64_t mr, nr, kc, mc, nc;
    int64_t pack_wa, pack_wb; /* relative cost of packing an element of A / B (thread grid) */
    int a_l1; /* loop order: 0 B micro-panel in L1, A block in L2; 1 A micro-panel in L1, B block in L2 */
} gpuml__gemm_kernel;

/* An A block still to be packed: source, type, offset of its first row,
   strides, packing path. */
typedef struct gpuml__gemm_apack {
    const void *X; int type; int64_t off, sw, sk; int simd;
    const gpuml__gemm_gather *ga; int64_t i0, k0; /* gathered A: first row and k of the block */
    int ua; /* full micro-panels read unpacked (gpuml__gemm_ukr_ind_avx512) */
} gpuml__gemm_apack;

static void gpuml__gemm_macro(const gpuml__gemm_kernel *kr, int64_t mc, int64_t nc, int64_t kc,
                              float *pa, const gpuml__gemm_apack *ap, const float *pb, float *c,
                              int64_t rsc, int64_t csc, float alpha, float beta)
{
    float tmp[GPUML__GEMM_TILE_MAX];
    int64_t ir, jr, MR = kr->mr, NR = kr->nr;
    if (kr->a_l1) {
        /* ir outer: one A micro-panel stays in L1 while all B micro-panels of
           the (L2-resident) B block stream past it.  With ap, each A
           micro-panel is packed just before its first use, so that use finds
           it in L1 instead of in the (L3-sized) A block. */
        for (ir = 0; ir < mc; ir += MR) {
            int64_t mr = gpuml__gemm_min(MR, mc - ir);
            const float *a = pa + ir * kc;
#if GPUML__GEMM_AVX2 && GPUML__GEMM_MR512 == 12
            if (ap && ap->ua && mr == MR) {
                const float *ptrs[12 * GPUML__GEMM_UA_SEGS];
                int64_t lens[GPUML__GEMM_UA_SEGS], nseg = 1, r;
                if (ap->ga) {
                    nseg = ap->ga->rows(ap->ga->arg, ptrs, lens, GPUML__GEMM_UA_SEGS, ap->i0 + ir, ap->k0, kc);
                } else {
                    for (r = 0; r < 12; ++r) ptrs[r] = (const float *)ap->X + ap->off + (ir + r) * ap->sw;
                    lens[0] = kc;
                }
                if (nseg >= 0) {
                    for (jr = 0; jr < nc; jr += NR) {
                        int64_t nr = gpuml__gemm_min(NR, nc - jr);
                        float *cc = c + ir * rsc + jr * csc;
                        if (nr == NR && csc == 1) {
                            gpuml__gemm_ukr_ind_avx512(nseg, ptrs, lens, pb + jr * kc, cc, rsc, alpha, beta);
                        } else {
                            gpuml__gemm_ukr_ind_avx512(nseg, ptrs, lens, pb + jr * kc, tmp, NR, 1.0f, 0.0f);
                            gpuml__gemm_store_tile(tmp, NR, mr, nr, cc, rsc, csc, alpha, beta);
                        }
                    }
                    continue;
                }
            }
#endif
            if (ap)
                gpuml__gemm_pack_op(pa + ir * kc, MR, mr, kc, ap->ga, ap->i0 + ir, ap->k0, ap->X,
                                    ap->type, ap->off + ir * ap->sw, ap->sw, ap->sk, ap->simd);
            for (jr = 0; jr < nc; jr += NR) {
                int64_t nr = gpuml__gemm_min(NR, nc - jr);
                float *cc = c + ir * rsc + jr * csc;
                if (mr == MR && nr == NR && csc == 1) {
                    kr->ukr(kc, a, pb + jr * kc, cc, rsc, alpha, beta);
                } else if (mr == MR && nr <= 16 && kr->ukr16) {
                    if (nr == 16 && csc == 1) {
                        kr->ukr16(kc, a, pb + jr * kc, cc, rsc, alpha, beta);
                    } else {
                        kr->ukr16(kc, a, pb + jr * kc, tmp, NR, 1.0f, 0.0f);
                        gpuml__gemm_store_tile(tmp, NR, mr, nr, cc, rsc, csc, alpha, beta);
                    }
                } else if (mr < MR && kr->ukr4) {
                    int64_t r0;
                    for (r0 = 0; r0 < mr; r0 += 4) {
                        int64_t m4 = gpuml__gemm_min(4, mr - r0);
                        float *c4 = cc + r0 * rsc;
                        if (m4 == 4 && nr == NR && csc == 1) {
                            kr->ukr4(kc, a + r0, pb + jr * kc, c4, rsc, alpha, beta);
                        } else {
                            kr->ukr4(kc, a + r0, pb + jr * kc, tmp, NR, 1.0f, 0.0f);
                            gpuml__gemm_store_tile(tmp, NR, m4, nr, c4, rsc, csc, alpha, beta);
                        }
                    }
                } else {
                    kr->ukr(kc, a, pb + jr * kc, tmp, NR, 1.0f, 0.0f);
                    gpuml__gemm_store_tile(tmp, NR, mr, nr, cc, rsc, csc, alpha, beta);
                }
            }
        }
        return;
    }
    /* jr outer: one B micro-panel stays in L1 while all A micro-panels of the
       (L2-resident) A block stream past it. */
    for (jr = 0; jr < nc; jr += NR) {
        int64_t nr = gpuml__gemm_min(NR, nc - jr);
        const float *b = pb + jr * kc;
        for (ir = 0; ir < mc; ir += MR) {
            int64_t mr = gpuml__gemm_min(MR, mc - ir);
            float *cc = c + ir * rsc + jr * csc;
            if (mr == MR && nr == NR && csc == 1) {
                kr->ukr(kc, pa + ir * kc, b, cc, rsc, alpha, beta);
            } else {
                kr->ukr(kc, pa + ir * kc, b, tmp, NR, 1.0f, 0.0f);
                gpuml__gemm_store_tile(tmp, NR, mr, nr, cc, rsc, csc, alpha, beta);
            }
        }
    }
}

typedef struct gpuml__gemm_job {
    gpuml__gemm_args g;
    gpuml__gemm_kernel kr;
    int simd;               /* packing paths: 0 portable, 1 AVX2, 2 AVX-512 */
    int ua;                 /* AVX-512: full A micro-panels read unpacked */
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
    const gpuml__gemm_kernel *kr = &job->kr;
    int64_t kb = gpuml__gemm_ceil(K, gpuml__gemm_ceil(K, kr->kc));
    int64_t mb, nb;
    if (M <= 0 || N <= 0) return;
    mb = gpuml__gemm_roundup(gpuml__gemm_ceil(M, gpuml__gemm_ceil(M, kr->mc)), kr->mr);
    nb = gpuml__gemm_roundup(gpuml__gemm_ceil(N, gpuml__gemm_ceil(N, kr->nc)), kr->nr);
    if (kr->a_l1) {
        /* the B block is the L2-resident one, so it is the inner block:
           pack each A block once per K block, sweep B blocks past it */
        for (ic = m0; ic < m1; ic += mb) {
            int64_t mc = gpuml__gemm_min(mb, m1 - ic);
            for (pc = 0; pc < K; pc += kb) {
                int64_t kc = gpuml__gemm_min(kb, K - pc);
                float beta = pc == 0 ? g->beta : 1.0f;
                /* the A block is packed panel by panel during the first B block */
                gpuml__gemm_apack ap;
                ap.X = g->A; ap.type = g->at; ap.off = ic * g->rsa + pc * g->csa;
                ap.sw = g->rsa; ap.sk = g->csa; ap.simd = job->simd;
                ap.ga = g->ga; ap.i0 = ic; ap.k0 = pc; ap.ua = job->ua;
                for (jc = n0; jc < n1; jc += nb) {
                    int64_t nc = gpuml__gemm_min(nb, n1 - jc);
                    gpuml__gemm_pack_op(pb, kr->nr, nc, kc, g->gb, jc, pc, g->B, g->bt,
                                        pc * g->rsb + jc * g->csb, g->csb, g->rsb, job->simd);
                    gpuml__gemm_macro(kr, mc, nc, kc, pa, jc == n0 ? &ap : NULL, pb,
                                      g->C + ic * g->rsc + jc * g->csc, g->rsc, g->csc,
                                      g->alpha, beta);
                }
            }
        }
        return;
    }
    for (jc = n0; jc < n1; jc += nb) {
        int64_t nc = gpuml__gemm_min(nb, n1 - jc);
        for (pc = 0; pc < K; pc += kb) {
            int64_t kc = gpuml__gemm_min(kb, K - pc);
            float beta = pc == 0 ? g->beta : 1.0f; /* later K blocks accumulate */
            gpuml__gemm_pack_op(pb, kr->nr, nc, kc, g->gb, jc, pc, g->B, g->bt,
                                pc * g->rsb + jc * g->csb, g->csb, g->rsb, job->simd);
            for (ic = m0; ic < m1; ic += mb) {
                int64_t mc = gpuml__gemm_min(mb, m1 - ic);
                gpuml__gemm_pack_op(pa, kr->mr, mc, kc, g->ga, ic, pc, g->A, g->at,
                                    ic * g->rsa + pc * g->csa, g->rsa, g->csa, job->simd);
                gpuml__gemm_macro(kr, mc, nc, kc, pa, NULL, pb,
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
                         gpuml__gemm_split(job->g.M, job->tm, ti, job->kr.mr),
                         gpuml__gemm_split(job->g.M, job->tm, ti + 1, job->kr.mr),
                         gpuml__gemm_split(job->g.N, job->tn, tj, job->kr.nr),
                         gpuml__gemm_split(job->g.N, job->tn, tj + 1, job->kr.nr),
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

/* The AVX-512 small path: f32 A (any strides) times f32 B (unit column
   stride) into C (unit column stride), straight from the sources.  j outer
   over 32-column strips (the K x 32 strip of B stays in L1 while the A
   rows stream), i inner over 12-, 8- or 4-row tiles; row pointers past M
   repeat the last row (read, never stored), the N edge is masked.  On a
   Zen 4 core 32-80^3 ran at 0.53-0.84 of OpenBLAS through the packed path
   (bench/NOTES_cpu_gemm.md, "Small products unpacked"). */
#define GPUML__GS_R4(X) X(0) X(1) X(2) X(3)
#define GPUML__GS_R8(X) GPUML__GS_R4(X) X(4) X(5) X(6) X(7)
#define GPUML__GS_R12(X) GPUML__GS_R8(X) X(8) X(9) X(10) X(11)
/* row r of the tile: A + r * rsa, or for the M edge the last row (mrows - 1) past it */
#define GPUML__GS_ROW_U(r) (a + (r) * rsa)
#define GPUML__GS_ROW_E(r) (a + ((r) < mrows ? (r) : mrows - 1) * rsa)
#define GPUML__GS_DECL1(r) __m512 c##r##_0 = _mm512_setzero_ps(); const float *a##r = GPUML__GS_ROW(r);
#define GPUML__GS_DECL2(r) GPUML__GS_DECL1(r) __m512 c##r##_1 = _mm512_setzero_ps();
/* B's loads: masked only at the N edge (masked loads ran the loop ~10% slower on Zen 4) */
#define GPUML__GS_LOAD1M __m512 b0 = _mm512_maskz_loadu_ps(m0, b), av;
#define GPUML__GS_LOAD2M __m512 b0 = _mm512_maskz_loadu_ps(m0, b), b1 = _mm512_maskz_loadu_ps(m1, b + 16), av;
#define GPUML__GS_LOAD2F __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16), av;
#define GPUML__GS_FMA1(r)                                                       \
    av = _mm512_set1_ps(a##r[ak]);                                             \
    c##r##_0 = _mm512_fmadd_ps(av, b0, c##r##_0);
#define GPUML__GS_FMA2(r) GPUML__GS_FMA1(r) c##r##_1 = _mm512_fmadd_ps(av, b1, c##r##_1);
#define GPUML__GS_ST1(r)                                                        \
    if ((r) < mrows) {                                                          \
        float *cr = c + (r) * rsc;                                              \
        __m512 x = _mm512_mul_ps(va, c##r##_0);                                 \
        if (beta != 0.0f) x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), x); \
        _mm512_mask_storeu_ps(cr, m0, x);                                       \
    }
#define GPUML__GS_ST2(r)                                                        \
    GPUML__GS_ST1(r)                                                            \
    if ((r) < mrows) {                                                          \
        float *cr = c + (r) * rsc + 16;                                         \
        __m512 x = _mm512_mul_ps(va, c##r##_1);                                 \
        if (beta != 0.0f) x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr), x); \
        _mm512_mask_storeu_ps(cr, m1, x);                                       \
    }
#define GPUML__GS_KERNEL(name, ROWS, NV, LOAD)                                  \
GPUML__GEMM_TARGET_AVX512                                                       \
static void name(int64_t K, const float *a, int64_t rsa, int64_t csa, const float *b, int64_t rsb, \
                 __mmask16 m0, __mmask16 m1, float *c, int64_t rsc, int mrows, float alpha, float beta) \
{                                                                               \
    ROWS(GPUML__GS_DECL##NV)                                                    \
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);              \
    int64_t k, ak = 0;                                                          \
    (void)m1;                                                                   \
    for (k = 0; k < K; ++k, ak += csa, b += rsb) {                              \
        GPUML__GS_LOAD##LOAD                                                    \
        ROWS(GPUML__GS_FMA##NV)                                                 \
    }                                                                           \
    ROWS(GPUML__GS_ST##NV)                                                      \
}
/* N edges of at most 8 columns: 8-wide (ymm) multiply-adds, half the cost of 16-wide ones on a
   core that splits a zmm FMA in two (Zen 4), the same elsewhere.  m0 has at most 8 bits set.  B
   and C are read by AVX masked loads (AVX-512F has no ymm masking without VL, and gcc 12's C++
   flags a zmm-to-ymm cast's undefined upper half as maybe-uninitialized); C is written by a
   masked zmm store of the tile widened by a cast (its upper half undefined and masked off; an AVX
   masked store cost Zen 4 the whole gain) */
#define GPUML__GS_DECLY(r) __m256 c##r##_0 = _mm256_setzero_ps(); const float *a##r = GPUML__GS_ROW(r);
#define GPUML__GS_FMAY(r)                                                       \
    av = _mm256_set1_ps(a##r[ak]);                                             \
    c##r##_0 = _mm256_fmadd_ps(av, b0, c##r##_0);
#define GPUML__GS_STY(r)                                                        \
    if ((r) < mrows) {                                                          \
        float *cr = c + (r) * rsc;                                              \
        __m256 x = _mm256_mul_ps(va, c##r##_0);                                 \
        if (beta != 0.0f) x = _mm256_fmadd_ps(vb, _mm256_maskload_ps(cr, mk), x); \
        _mm512_mask_storeu_ps(cr, m0, _mm512_castps256_ps512(x));              \
    }
#define GPUML__GS_KERNELY(name, ROWS)                                           \
GPUML__GEMM_TARGET_AVX512                                                       \
static void name(int64_t K, const float *a, int64_t rsa, int64_t csa, const float *b, int64_t rsb, \
                 __mmask16 m0, __mmask16 m1, float *c, int64_t rsc, int mrows, float alpha, float beta) \
{                                                                               \
    ROWS(GPUML__GS_DECLY)                                                       \
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);        \
    const __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32(__builtin_popcount((unsigned)m0)), \
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); \
    int64_t k, ak = 0;                                                          \
    (void)m1;                                                                   \
    for (k = 0; k < K; ++k, ak += csa, b += rsb) {                              \
        const __m256 b0 = _mm256_maskload_ps(b, mk);                            \
        __m256 av;                                                              \
        ROWS(GPUML__GS_FMAY)                                                    \
    }                                                                           \
    ROWS(GPUML__GS_STY)                                                         \
}
/* whole 12-row tiles: rows A + r * rsa, so the compiler addresses them from one base (given 12
   separate pointers, gcc spilled them through xmm registers and the loop ran ~12% slower) */
#define GPUML__GS_ROW GPUML__GS_ROW_U
GPUML__GS_KERNEL(gpuml__gemm_small12x32_avx512, GPUML__GS_R12, 2, 2F)
GPUML__GS_KERNEL(gpuml__gemm_small12x32m_avx512, GPUML__GS_R12, 2, 2M)
GPUML__GS_KERNEL(gpuml__gemm_small12x16_avx512, GPUML__GS_R12, 1, 1M)
GPUML__GS_KERNELY(gpuml__gemm_small12x8_avx512, GPUML__GS_R12)
#undef GPUML__GS_ROW
/* the M edge (mrows < 12 rows left): 4, 8 or 12 rows, the ones past mrows repeat the last */
#define GPUML__GS_ROW GPUML__GS_ROW_E
GPUML__GS_KERNEL(gpuml__gemm_small4x32e_avx512, GPUML__GS_R4, 2, 2M)
GPUML__GS_KERNEL(gpuml__gemm_small8x32e_avx512, GPUML__GS_R8, 2, 2M)
GPUML__GS_KERNEL(gpuml__gemm_small12x32e_avx512, GPUML__GS_R12, 2, 2M)
GPUML__GS_KERNEL(gpuml__gemm_small4x16e_avx512, GPUML__GS_R4, 1, 1M)
GPUML__GS_KERNEL(gpuml__gemm_small8x16e_avx512, GPUML__GS_R8, 1, 1M)
GPUML__GS_KERNEL(gpuml__gemm_small12x16e_avx512, GPUML__GS_R12, 1, 1M)
GPUML__GS_KERNELY(gpuml__gemm_small4x8e_avx512, GPUML__GS_R4)
GPUML__GS_KERNELY(gpuml__gemm_small8x8e_avx512, GPUML__GS_R8)
GPUML__GS_KERNELY(gpuml__gemm_small12x8e_avx512, GPUML__GS_R12)
#undef GPUML__GS_ROW
#undef GPUML__GS_ROW_U
#undef GPUML__GS_ROW_E
#undef GPUML__GS_KERNEL
#undef GPUML__GS_R4
#undef GPUML__GS_R8
#undef GPUML__GS_R12
#undef GPUML__GS_DECL1
#undef GPUML__GS_DECL2
#undef GPUML__GS_LOAD1M
#undef GPUML__GS_LOAD2M
#undef GPUML__GS_LOAD2F
#undef GPUML__GS_FMA1
#undef GPUML__GS_FMA2
#undef GPUML__GS_ST1
#undef GPUML__GS_ST2
#undef GPUML__GS_DECLY
#undef GPUML__GS_FMAY
#undef GPUML__GS_STY
#undef GPUML__GS_KERNELY

typedef void (*gpuml__gemm_small_fn)(int64_t, const float *, int64_t, int64_t, const float *, int64_t,
                                     __mmask16, __mmask16, float *, int64_t, int, float, float);
/* C[i0:i1, j0:j1] (j0 a multiple of 32) */
GPUML__GEMM_TARGET_AVX512
static void gpuml__gemm_small_avx512(const gpuml__gemm_args *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    /* [32 wide | 16 wide | 8 wide][4 | 8 | 12 rows], for the M edge */
    static const gpuml__gemm_small_fn ke[3][3] = {
        { gpuml__gemm_small4x32e_avx512, gpuml__gemm_small8x32e_avx512, gpuml__gemm_small12x32e_avx512 },
        { gpuml__gemm_small4x16e_avx512, gpuml__gemm_small8x16e_avx512, gpuml__gemm_small12x16e_avx512 },
        { gpuml__gemm_small4x8e_avx512, gpuml__gemm_small8x8e_avx512, gpuml__gemm_small12x8e_avx512 } };
    const float *A = (const float *)g->A, *B = (const float *)g->B;
    int64_t i, j;
    for (j = j0; j < j1; j += 32) {
        int64_t nr = gpuml__gemm_min(32, j1 - j);
        __mmask16 m0 = (__mmask16)(nr >= 16 ? 0xFFFF : (1u << nr) - 1);
        __mmask16 m1 = (__mmask16)(nr >= 32 ? 0xFFFF : nr > 16 ? (1u << (nr - 16)) - 1 : 0);
        const int w = nr > 16 ? 0 : nr > 8 ? 1 : 2;
        gpuml__gemm_small_fn whole = nr == 32 ? gpuml__gemm_small12x32_avx512
                                   : w == 0 ? gpuml__gemm_small12x32m_avx512 : w == 1 ? gpuml__gemm_small12x16_avx512
                                   : gpuml__gemm_small12x8_avx512;
        for (i = i0; i < i1; i += 12) {
            int64_t left = gpuml__gemm_min(12, i1 - i);
            gpuml__gemm_small_fn f = left == 12 ? whole : ke[w][left > 8 ? 2 : left > 4 ? 1 : 0];
            f(g->K, A + i * g->rsa, g->rsa, g->csa, B + j, g->rsb, m0, m1, g->C + i * g->rsc + j, g->rsc, (int)left,
              g->alpha, g->beta);
        }
    }
}

/* the small path on a tm x tn grid of threads: rows in 12s, columns in 32s */
typedef struct gpuml__gemm_small_job { const gpuml__gemm_args *g; int64_t tm, tn; } gpuml__gemm_small_job;
static void gpuml__gemm_small_task(void *arg, int64_t begin, int64_t end, int thread_index)
{
    const gpuml__gemm_small_job *job = (const gpuml__gemm_small_job *)arg;
    int64_t t;
    (void)thread_index;
    for (t = begin; t < end; ++t) {
        int64_t ti = t / job->tn, tj = t % job->tn;
        gpuml__gemm_small_avx512(job->g, gpuml__gemm_split(job->g->M, job->tm, ti, 12),
                                 gpuml__gemm_split(job->g->M, job->tm, ti + 1, 12),
                                 gpuml__gemm_split(job->g->N, job->tn, tj, 32), gpuml__gemm_split(job->g->N, job->tn, tj + 1, 32));
    }
}
#endif

/* how many threads the work is worth (before the pool's size caps it); avx512: the AVX-512
   kernels.  The packed path's rule, which the unpacked path shares (its threads stream A and B
   as the packing would). */
static int64_t gpuml__gemm_work_threads(const gpuml__gemm_args *g, int avx512)
{
    int64_t pm = gpuml__gemm_pack_madds >= 0 ? gpuml__gemm_pack_madds : avx512 ? 16 : 8;
    int64_t work = g->M * g->N * g->K + pm * (g->M * g->K + g->K * g->N);
    return work / (avx512 ? GPUML__GEMM_THREAD_MNK512 : GPUML__GEMM_THREAD_MNK);
}

/* the AVX-512 unpacked path's shapes (gpuml__gemm_small_rule) */
static int gpuml__gemm_small512_fits(const gpuml__gemm_args *g)
{
    return (g->M * g->K * 4 <= GPUML__GEMM_SMALL_A512 || g->N <= 32) &&
           (g->K * g->N * 4 <= GPUML__GEMM_SMALL_A512 || g->M <= 12) &&
           (g->K >= 32 || g->M * g->N * g->K <= 64 * 64 * 64);
}

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

/* The GEMM with optional caller-gathered operands ga (A) / gb (B): where one
   is given, its pointer and strides are not read (pass NULL, 0, 0). */
static int gpuml__cpu_gemm_ex(gpuml__pool *pool, int64_t M, int64_t N, int64_t K, float alpha,
                              const void *A, int a_type, int64_t rsa, int64_t csa,
                              const void *B, int b_type, int64_t rsb, int64_t csb,
                              float beta, float *C, int64_t rsc, int64_t csc, int opts,
                              const gpuml__gemm_gather *ga, const gpuml__gemm_gather *gb)
{
    gpuml__gemm_args g;
    gpuml__gemm_job job;
    int64_t mnk, nt, t, best_cost = -1, max_m = 0, max_n = 0;
    int simd = 0, small512 = 0;

    if (M <= 0 || N <= 0) return 0;
    g.M = M; g.N = N; g.K = K; g.alpha = alpha; g.beta = beta;
    g.A = A; g.at = a_type; g.rsa = rsa; g.csa = csa;
    g.B = B; g.bt = b_type; g.rsb = rsb; g.csb = csb;
    g.C = C; g.rsc = rsc; g.csc = csc;
    g.ga = ga; g.gb = gb;
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
        g.ga = gb; g.gb = ga;
    }
    /* the unpacked small path reads A and B in place */
    if (g.ga || g.gb) opts = (opts | GPUML__GEMM_OPT_NO_SMALL) & ~GPUML__GEMM_OPT_FORCE_SMALL;
#if GPUML__GEMM_AVX2
    simd = !(opts & GPUML__GEMM_OPT_NO_SIMD) && gpuml__cpu_has_avx2_fma();
#else
    (void)gpuml__cpu_has_avx2_fma; /* keep the core's static helper "used" */
#endif
    mnk = g.M * g.N * g.K; /* fits: each dim is far below 2^21 in practice */
#if GPUML__GEMM_AVX2
    small512 = simd && g.at == GPUML__GEMM_F32 && g.bt == GPUML__GEMM_F32 && g.csb == 1 && g.csc == 1 &&
               !(opts & GPUML__GEMM_OPT_NO_AVX512) && gpuml__gemm_has_avx512();
#endif
    if ((opts & GPUML__GEMM_OPT_FORCE_SMALL) ||
        (!(opts & GPUML__GEMM_OPT_NO_SMALL) &&
         (mnk <= GPUML__GEMM_SMALL_MNK || (small512 && gpuml__gemm_small_rule != 0 && gpuml__gemm_small512_fits(&g))))) {
#if GPUML__GEMM_AVX2
        if (small512) {
            gpuml__gemm_small_job sj;
            nt = pool && gpuml__pool_size(pool) > 1 ? gpuml__gemm_min(gpuml__pool_size(pool), gpuml__gemm_work_threads(&g, 1)) : 1;
            sj.g = &g;
            sj.tm = sj.tn = 1;   /* one thread: no divisions (an idiv was ~3% of an 8^3 call) */
            if (nt > 1) {
                sj.tm = gpuml__gemm_max(1, gpuml__gemm_min(nt, gpuml__gemm_ceil(g.M, 12)));
                sj.tn = gpuml__gemm_max(1, gpuml__gemm_min(nt / sj.tm, gpuml__gemm_ceil(g.N, 32)));
            }
            if (sj.tm * sj.tn > 1)
                gpuml__parallel_for(pool, sj.tm * sj.tn, 1, gpuml__gemm_small_task, &sj);
            else
                gpuml__gemm_small_avx512(&g, 0, g.M, 0, g.N);
            return 0;
        }
        if (simd && g.at == GPUML__GEMM_F32 && g.bt == GPUML__GEMM_F32 && g.csb == 1) {
            gpuml__gemm_small_avx2(&g);
            return 0;
        }
#endif
        gpuml__gemm_small_ref(&g);
        return 0;
    }

    job.g = g;
    job.kr.ukr = gpuml__gemm_ukr_ref;
    job.kr.mr = GPUML__GEMM_MR; job.kr.nr = GPUML__GEMM_NR;
    job.kr.kc = GPUML__GEMM_KC; job.kr.mc = GPUML__GEMM_MC; job.kr.nc = GPUML__GEMM_NC;
    job.kr.a_l1 = 0;
    job.kr.ukr4 = NULL;
    job.kr.ukr16 = NULL;
    job.kr.pack_wa = 1; job.kr.pack_wb = 1;
#if GPUML__GEMM_AVX2
    if (simd) job.kr.ukr = gpuml__gemm_ukr_avx2;
    if (simd && !(opts & GPUML__GEMM_OPT_NO_AVX512) && gpuml__gemm_has_avx512()) {
        simd = 2;
        job.kr.ukr = gpuml__gemm_ukr_avx512;
        job.kr.mr = GPUML__GEMM_MR512; job.kr.nr = GPUML__GEMM_NR512;
        job.kr.kc = GPUML__GEMM_KC512; job.kr.mc = GPUML__GEMM_MC512; job.kr.nc = GPUML__GEMM_NC512;
        job.kr.a_l1 = GPUML__GEMM_A_L1_512;
        job.kr.ukr4 = gpuml__gemm_ukr4_avx512;
        job.kr.ukr16 = gpuml__gemm_ukr16_avx512;
        /* the A transpose-pack costs ~1.6x the B copy per element (0.31 vs
           0.19 ns at n = 2048), so 2 threads split M rather than N */
        job.kr.pack_wa = GPUML__GEMM_PACK_WA512; job.kr.pack_wb = 2;
    }
#endif
    job.simd = simd;
    /* Unpacked A for small N: row-major f32 A feeding at most UA_N columns,
       where packing A would cost about as much as the FMAs it feeds. */
    job.ua = 0;
#if GPUML__GEMM_AVX2 && GPUML__GEMM_MR512 == 12
    job.ua = simd == 2 && (g.ga ? g.ga->rows != NULL : g.at == GPUML__GEMM_F32 && g.csa == 1 && g.N <= GPUML__GEMM_UA_N);
#endif
    /* Thread count: enough work per thread, and at least a register tile each. */
    nt = pool ? gpuml__pool_size(pool) : 1;
    nt = gpuml__gemm_min(nt, gpuml__gemm_work_threads(&g, simd == 2));
    nt = gpuml__gemm_min(nt, gpuml__gemm_ceil(g.M, job.kr.mr) * gpuml__gemm_ceil(g.N, job.kr.nr));
    if (nt < 1) nt = 1;
    /* Grid tm x tn = nt minimising per-thread packing (wa*M/tm + wb*N/tn)*K,
       wa/wb the relative cost of packing an element of A/B; ties go to
       splitting N, whose NR = 16 divides typical sizes evenly. */
    job.tm = 1; job.tn = nt;
    for (t = 1; t <= nt; ++t) {
        int64_t tm = t, tn = nt / t, cost;
        if (tm * tn != nt) continue;
        if (gpuml__gemm_ceil(g.M, job.kr.mr) < tm || gpuml__gemm_ceil(g.N, job.kr.nr) < tn) continue;
        cost = job.kr.pack_wa * gpuml__gemm_ceil(g.M, tm) + job.kr.pack_wb * gpuml__gemm_ceil(g.N, tn);
        if (best_cost < 0 || cost < best_cost) { best_cost = cost; job.tm = tm; job.tn = tn; }
    }
    nt = job.tm * job.tn;
    /* Size the buffers for the largest tile actually produced. */
    for (t = 0; t < job.tm; ++t) {
        int64_t h = gpuml__gemm_split(g.M, job.tm, t + 1, job.kr.mr) -
                    gpuml__gemm_split(g.M, job.tm, t, job.kr.mr);
        if (h > max_m) max_m = h;
    }
    for (t = 0; t < job.tn; ++t) {
        int64_t w = gpuml__gemm_split(g.N, job.tn, t + 1, job.kr.nr) -
                    gpuml__gemm_split(g.N, job.tn, t, job.kr.nr);
        if (w > max_n) max_n = w;
    }
    {
        int64_t kb = gpuml__gemm_ceil(g.K, gpuml__gemm_ceil(g.K, job.kr.kc));
        /* upper bounds of the per-tile balanced block sizes (which are not
           monotonic in the tile size, so don't recompute them here) */
        int64_t mb = gpuml__gemm_roundup(gpuml__gemm_min(max_m, job.kr.mc), job.kr.mr);
        int64_t nb = gpuml__gemm_roundup(gpuml__gemm_min(max_n, job.kr.nc), job.kr.nr);
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

static int gpuml__cpu_gemm_opt(gpuml__pool *pool, int64_t M, int64_t N, int64_t K, float alpha,
                               const void *A, int a_type, int64_t rsa, int64_t csa,
                               const void *B, int b_type, int64_t rsb, int64_t csb,
                               float beta, float *C, int64_t rsc, int64_t csc, int opts)
{
    return gpuml__cpu_gemm_ex(pool, M, N, K, alpha, A, a_type, rsa, csa, B, b_type, rsb, csb,
                              beta, C, rsc, csc, opts, NULL, NULL);
}

static int gpuml__cpu_gemm(gpuml__pool *pool, int64_t M, int64_t N, int64_t K, float alpha,
                           const void *A, int a_type, int64_t rsa, int64_t csa,
                           const void *B, int b_type, int64_t rsb, int64_t csb,
                           float beta, float *C, int64_t rsc, int64_t csc)
{
    return gpuml__cpu_gemm_opt(pool, M, N, K, alpha, A, a_type, rsa, csa, B, b_type, rsb, csb,
                               beta, C, rsc, csc, 0);
}
/* END cpu_gemm */

/* ------------------------------------------------------------------- matmul ---- */
static const gpuml__family gpuml__fam_matmul = { "matmul", gpuml__ksrc_matmul, 50, 0, 0 };
/* Hopper: TMA + wgmma (kernels/matmul_sm90.cu; its LAUNCH CONTRACT comment is the reference) */
static const gpuml__family gpuml__fam_matmul_sm90 = { "matmul_sm90", gpuml__ksrc_matmul_sm90, 90, 1, 0 };
/* sm_80+: mma.sync + ldmatrix + cp.async (kernels/matmul_mma.cu; see its LAUNCH CONTRACT) */
static const gpuml__family gpuml__fam_matmul_mma = { "matmul_mma", gpuml__ksrc_matmul_mma, 80, 0, 0 };
/* sm_80+: small M (decode) on mma.sync, streaming the weights (kernels/matmul_small.cu) */
static const gpuml__family gpuml__fam_matmul_small = { "matmul_small", gpuml__ksrc_matmul_small, 80, 0, 0 };
/* the same source with -DGPUML_SM_CL > 1 (thread block clusters): sm_90+ */
static const gpuml__family gpuml__fam_matmul_small_cl = { "matmul_small_cl", gpuml__ksrc_matmul_small, 90, 0, 0 };

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
    int tf32;                                 /* desc.allow_tf32 */
    int split3;                               /* a and b are 3xTF32 split operands (gpuml__mm_cuda_3x) */
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
/* v[i] = act(v[i]), the switch outside the loop (relu inline) */
GPUML__FN void gpuml__act_rows(int act, float *v, int64_t n)
{
    int64_t i;
    if (act == GPUML_ACT_NONE) return;
    if (act == GPUML_ACT_RELU) {
        i = 0;
#if GPUML__HAVE_AVX2_PATH && (defined(__x86_64__) || defined(__SSE__))
        /* maxps(x, 0) is x > 0 ? x : 0 exactly (NaN and -0 give 0, as below); gcc compiled the loop to a
           compare and branch, mispredicted on every other element of random-signed data */
        for (; i + 4 <= n; i += 4) _mm_storeu_ps(v + i, _mm_max_ps(_mm_loadu_ps(v + i), _mm_setzero_ps()));
#endif
        for (; i < n; i++) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
        return;
    }
    for (i = 0; i < n; i++) v[i] = gpuml__act_f32(act, v[i]);
}
/* the CPU epilogue on a run of n values, loop by loop: o[i] = act(v[i] + bias[i * bstride]) + r[i]
   (bias and r may be NULL; v and r may each be o itself: a residual given as the output, in place,
   is read before o[i] is written -- hence the staging buffer) -- the matmul's and the conv's */
GPUML__FN void gpuml__epi_run(float *o, const float *v, const float *bias, int64_t bstride, int act, const float *r, int64_t n)
{
    float tmp[GPUML__TILE];
    int64_t i0, i;
    for (i0 = 0; i0 < n; i0 += GPUML__TILE) {
        const int64_t m = GPUML__MIN((int64_t)GPUML__TILE, n - i0);
        if (bias) for (i = 0; i < m; i++) tmp[i] = v[i0 + i] + bias[(i0 + i) * bstride];
        else memcpy(tmp, v + i0, sizeof(float) * (size_t)m);
        gpuml__act_rows(act, tmp, m);
        if (r) for (i = 0; i < m; i++) o[i0 + i] = tmp[i] + r[i0 + i];
        else memcpy(o + i0, tmp, sizeof(float) * (size_t)m);
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
    int64_t bstride = p->bias ? p->bias->strides[0] : 0, m;
    (void)tid;
    /* a row at a time, loop by loop, through gpuml__cpu_ld / gpuml__cpu_st (vector conversions of
       16-bit C and R; the act's switch outside the loop: per element it cost a 1x1 conv's epilogue
       half the layer's time) */
    for (m = r0; m < r1; m++) {
        float vb[GPUML__TILE], rb[GPUML__TILE];
        int64_t n0;
        for (n0 = 0; n0 < p->N; n0 += GPUML__TILE) {
            const int64_t nn = GPUML__MIN((int64_t)GPUML__TILE, p->N - n0);
            char *c = w->C + (m * p->sc_m + n0 * p->sc_n) * (int64_t)ce;
            const float *v = w->T ? w->T + m * w->ldt + n0 : gpuml__cpu_ld(ct, c, p->sc_n * (int64_t)ce, nn, vb);
            const float *r = w->R ? gpuml__cpu_ld(ct, w->R + (m * p->sr_m + n0 * p->sr_n) * (int64_t)ce, p->sr_n * (int64_t)ce, nn, rb) : NULL;
            gpuml__epi_run(vb, v, bias ? bias + n0 * bstride : NULL, bstride, p->act, r, nn);
            gpuml__cpu_st(ct, c, p->sc_n * (int64_t)ce, nn, vb);
        }
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
    /* the GEMM writes an f32 C before the epilogue reads the residual: a residual that is C itself (the
       only overlap gpuml_matmul lets through: the same view) takes the workspace path, which writes C after */
    if (R == C) direct = 0;
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

/* the specialization options of the matmul family (SIMT and small-M kernels) */
GPUML__FN void gpuml__mm_opts(const gpuml__mm *p, char *opts, size_t cap)
{
    snprintf(opts, cap, "-DGPUML_A_DT=%d -DGPUML_B_DT=%d -DGPUML_C_DT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d "
             "-DGPUML_HAS_RESID=%d -DGPUML_BETA=%d -DGPUML_INT=%d", (int)p->a->dtype, (int)p->b->dtype, (int)p->c->dtype,
             p->act, p->bias != NULL, p->resid != NULL, p->beta != 0.0f, p->a->dtype == GPUML_I8);
}

GPUML__FN gpuml_status gpuml__mm_cuda_simt(gpuml_ctx *ctx, const gpuml__mm *p, gpuml__mm_params *kp)
{
    char opts[200];
    gpuml__CUfunction fn;
    unsigned grid[3], block[3] = {256, 1, 1};
    void *args[1];
    gpuml__mm_opts(p, opts, sizeof opts);
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


#define GPUML__TAIL_CNT 4096
/* the context's counters for tiles whose two pieces meet (the split tails of gpuml_conv_1x1w, the
   stream-K tail of the wgmma matmul; each counter a multiple of 3 between launches): allocated and
   zeroed once, never inside a stream capture, where the zeroing copy cannot go; 0 where there are none */
GPUML__FN gpuml__CUdeviceptr gpuml__tail_counters(gpuml_ctx *ctx)
{
    const size_t bytes = GPUML__TAIL_CNT * sizeof(unsigned long long);
    void *zero;
    gpuml__CUdeviceptr d = 0;
    int bad;
    if (ctx->tail_cnt || ctx->capturing) return ctx->tail_cnt;
    if (!(zero = gpuml__calloc(bytes))) return 0;
    if (ctx->cu.MemAlloc(&d, bytes) != 0) { gpuml__free(zero); return 0; }
    bad = ctx->cu.MemcpyHtoDAsync(d, zero, bytes, ctx->stream) != 0 || ctx->cu.StreamSynchronize(ctx->stream) != 0;
    gpuml__free(zero);
    if (bad) { ctx->cu.MemFree(d); return 0; }
    return ctx->tail_cnt = d;
}

/* the params struct of kernels/matmul_sm90.cu (120 bytes) */
typedef struct gpuml__sm90_params {
    gpuml__CUdeviceptr c, c_in, bias, resid;
    int64_t ldc, ldc_in, ldr;
    int M, N, K;
    float alpha, beta;
    int group_m;
    int splits, kb_split;
    int kb_img;   /* GPUML_MM_K3D */
    int sk_dp, sk_iters;   /* the stream-K tail (gpuml__sm90_streamk) */
    gpuml__CUdeviceptr sk_cnt, sk_ws;
} gpuml__sm90_params;

/* a CUtensorMap (tiled, element strides 1, no interleave, zero fill) of `rank` dims, innermost first:
   dims[r] elements, stride[r - 1] the bytes from one index of dim r to the next, box[r] elements a box;
   swizzle and l2 are the driver's enum values (3 = 128B swizzle / 256B L2 promotion).  1 when encoded */
GPUML__FN int gpuml__tmap_rank(gpuml_ctx *ctx, void *map, int dtype, int rank, gpuml__CUdeviceptr addr, const int64_t *dims,
                               const int64_t *stride, const unsigned *box, int swizzle, int l2)
{
    gpuml__u64 d[5], st[4];
    unsigned es[5] = {1, 1, 1, 1, 1};
    int r;
    for (r = 0; r < rank; r++) {
        d[r] = (gpuml__u64)dims[r];
        if (r > 0) st[r - 1] = (gpuml__u64)stride[r - 1];
    }
    return ctx->cu.TensorMapEncodeTiled(map, dtype, (unsigned)rank, (void *)(uintptr_t)addr, d, st, box, es,
                                        0 /* no interleave */, swizzle, l2, 0 /* zero fill */) == 0;
}
/* a row-major 2-D matrix: dims {inner, outer}, row stride in bytes, 128-byte swizzle */
GPUML__FN int gpuml__tmap(gpuml_ctx *ctx, void *map, int dtype, gpuml__CUdeviceptr addr, int64_t inner, int64_t outer,
                          int64_t row_bytes, unsigned box_inner, unsigned box_outer)
{
    const int64_t dims[2] = {inner, outer};
    const unsigned box[2] = {box_inner, box_outer};
    return gpuml__tmap_rank(ctx, map, dtype, 2, addr, dims, &row_bytes, box, 3, 3);
}

/* a CUtensorMap in im2col mode over a contiguous NHWC activation [n][h][w][c] of es-byte elements,
   for a conv with the given strides, top / left padding and output size P x Q: boxes of `pixels`
   output pixels x `chans` channels, 128-byte swizzle.  1 when encoded; 0 where the driver has no
   im2col maps, a stride is over 8 or a window corner falls outside the rank-4 encoding ([-128, 127]) */
GPUML__FN int gpuml__tmap_im2col(gpuml_ctx *ctx, void *map, int dtype, gpuml__CUdeviceptr addr, int64_t n, int64_t h, int64_t w,
                                 int64_t c, int64_t es, int sh, int sw, int64_t pt, int64_t pl, int64_t p, int64_t q,
                                 unsigned chans, unsigned pixels)
{
    gpuml__u64 dims[4], strides[3];
    int lo[2], hi[2];
    unsigned estr[4];
    if (!ctx->cu.TensorMapEncodeIm2col || sh > 8 || sw > 8) return 0;
    dims[0] = (gpuml__u64)c; dims[1] = (gpuml__u64)w; dims[2] = (gpuml__u64)h; dims[3] = (gpuml__u64)n;
    strides[0] = (gpuml__u64)(c * es); strides[1] = (gpuml__u64)(w * c * es); strides[2] = (gpuml__u64)(h * w * c * es);
    /* the window's top-left corner runs over [lo, dim - 1 + hi] in steps of the stride: the first
       output's corner at -pad, the last one's at (P - 1) * stride - pad */
    if (pt > 128 || pl > 128) return 0;
    lo[0] = (int)-pl; lo[1] = (int)-pt;
    if ((q - 1) * sw - pl - (w - 1) < -128 || (q - 1) * sw - pl - (w - 1) > 127 ||
        (p - 1) * sh - pt - (h - 1) < -128 || (p - 1) * sh - pt - (h - 1) > 127)
        return 0;
    hi[0] = (int)((q - 1) * sw - pl - (w - 1));
    hi[1] = (int)((p - 1) * sh - pt - (h - 1));
    estr[0] = 1; estr[1] = (unsigned)sw; estr[2] = (unsigned)sh; estr[3] = 1;
    return ctx->cu.TensorMapEncodeIm2col(map, dtype, 4, (void *)(uintptr_t)addr, dims, strides, lo, hi, chans, pixels, estr,
                                         0 /* no interleave */, 3 /* 128B swizzle */, 3 /* L2 256B */, 0 /* zero fill */) == 0;
}

/* bytes per input element for the wgmma kernel: 2 (f16, bf16), 4 (f32 read as tf32, only when
   allowed), 1 (fp8); 0 when it takes no such dtype */
GPUML__FN int gpuml__sm90_es(const gpuml__mm *p)
{
    gpuml_dtype at = p->a->dtype;
    if (at == GPUML_F16 || at == GPUML_BF16) return 2;
    if (at == GPUML_F32) return p->tf32 || p->split3 ? 4 : 0;
    if (at == GPUML_FP8_E4M3 || at == GPUML_FP8_E5M2) return 1;
    return 0;
}
/* tf32 with B stored K x N (NN) on Hopper: 0 automatic, 1 the kernel that reads B as stored
   (gpuml_matmul_sm90_nn: the transposed problem, B^T fragments loaded into registers), 2 copy B
   k-major first and run the NT kernel (bench/NOTES_matmul_sm90.md, "tf32 NN without the copy") */
static int gpuml__mm_tf32_nn = 0;
/* 1 when this tf32 problem with an N-major B runs on gpuml_matmul_sm90_nn */
GPUML__FN int gpuml__sm90_tf32_nn(const gpuml__mm *p)
{
    return p->a->dtype == GPUML_F32 && p->tf32 && !p->split3 && p->sb_k != 1 && gpuml__mm_tf32_nn != 2;
}
/* 1 when the operands are laid out as the wgmma kernel reads them: A along k; B along k too
   (tf32 and fp8 wgmma read both K-major), or either way for 16-bit types and tf32 (NN: the
   gpuml_matmul_sm90_nn kernel); 16-byte rows */
GPUML__FN int gpuml__sm90_a_ok(const gpuml__mm *p, gpuml__CUdeviceptr A, int es) { return p->sa_k == 1 && (p->sa_m * es) % 16 == 0 && gpuml__aligned16(A); }
GPUML__FN int gpuml__sm90_b_ok(const gpuml__mm *p, gpuml__CUdeviceptr B, int es)
{
    if (!gpuml__aligned16(B)) return 0;
    if (p->sb_k == 1 && (p->sb_n * es) % 16 == 0) return 1;
    return (es == 2 || (es == 4 && gpuml__sm90_tf32_nn(p))) && p->sb_n == 1 && (p->sb_k * es) % 16 == 0;
}
#define GPUML__SM90_SMEM 230656   /* the wgmma kernel's dynamic shared memory (its LAUNCH CONTRACT) */
/* 1 on a device that runs the wgmma kernel (Hopper, tensor maps, the shared memory it needs) */
GPUML__FN int gpuml__sm90_device(gpuml_ctx *ctx)
{
    return ctx->arch == 90 && ctx->cu.TensorMapEncodeTiled && ctx->smem_optin >= GPUML__SM90_SMEM;
}
/* 1 when the wgmma kernel should run: forced, or automatic and large enough to fill its tiles */
GPUML__FN int gpuml__sm90_wanted(const gpuml__mm *p, gpuml_matmul_path path)
{
    return path == GPUML_MATMUL_WGMMA || (path == GPUML_MATMUL_AUTO && p->M * p->N * p->K >= (int64_t)1 << 21);
}
/* 1 when C, the residual and the bias are laid out as the wgmma kernel's epilogue needs */
GPUML__FN int gpuml__sm90_c_ok(const gpuml__mm *p, const gpuml__mm_params *kp, size_t ce)
{
    if (p->sc_n != 1 || (p->sc_m * (int64_t)ce) % 16 || !gpuml__aligned16(kp->C)) return 0;
    if (p->resid && (p->sr_n != 1 || (p->sr_m * (int64_t)ce) % 16 || !gpuml__aligned16(kp->R) || gpuml__overlap(p->resid, p->c))) return 0;
    if (p->bias && (kp->bias & 7)) return 0;
    return 1;
}
/* split-K on the wgmma kernel (f16 / bf16, tf32 NT and fp8 inputs; tf32 and fp8 since session 29, H200:
   tf32 256 x 2048 x 8192 100 -> 208 TFLOP/s, 1024^2 x 8192 201 -> 295, 256^2 x 16384 14 -> 81, fp8 256^2
   x 16384 48 -> 137; bench/NOTES_matmul_sm90.md "Split-K for tf32 and fp8"): > 0 forces that many splits
   (tests; capped at the k blocks), < 0 never, 0 automatic: where the output tiles fill at most
   a third of the SMs and K has >= 16 k blocks, floor(SMs / tiles) splits of >= 8 k blocks each
   (H100: 1024 x 2048 x 4096, 64 tiles, ran 2.4x slower split 3 ways).  The
   splits' f32 partial tiles go to a workspace [splits][M][N'] and gpuml_mm_splitk_epi sums them
   in a fixed order and applies the epilogue. */
static int gpuml__mm_splitk;
static long gpuml__mm_splitk_runs;
/* gpuml_mm_splitk_epi's mode (the kernel decides the same way): 1 = 8 lanes over the splits of
   each output (many splits, few outputs), 0 = a thread per output over all its splits */
GPUML__FN int gpuml__splitk_lanes(int splits, int64_t outputs) { return splits >= 8 && outputs < ((int64_t)1 << 18); }   /* launches of the split-K kernel (tests check that it ran) */
GPUML__FN int gpuml__sm90_splits(gpuml_ctx *ctx, const gpuml__mm *p, int es, int nn, int64_t units, int *kb_split)
{
    int64_t nkb = (p->K + 128 / es - 1) / (128 / es), sm = GPUML__MAX(ctx->sm_count, 1), s, per;
    if (nn || p->split3 || gpuml__mm_splitk < 0) return 1;
    if (gpuml__mm_splitk > 0) s = gpuml__mm_splitk;
    else {
        if (units * 3 > sm || nkb < 16) return 1;
        /* whole waves: ceil(SMs / tiles) splits left a second, nearly empty round of units
           (1024^2 x 8192: 160 units on 132 SMs) */
        s = GPUML__MIN(sm / units, nkb / 8);
    }
    /* the workspace stays under 256 MiB */
    s = GPUML__MIN(GPUML__MIN(s, nkb), GPUML__MAX(((int64_t)64 << 20) / GPUML__MAX(p->M * ((p->N + 3) / 4 * 4), (int64_t)1), (int64_t)1));
    s = GPUML__MIN(s, (int64_t)1024);
    if (s < 2) return 1;
    per = (nkb + s - 1) / s;
    *kb_split = (int)per;
    return (int)((nkb + per - 1) / per);
}
/* The stream-K tail of the wgmma kernels (kernels/matmul_sm90.cu, sk_dp / sk_iters): with units
   tiles on g persistent CTAs, the last wave leaves g - units % g of them idle for a whole tile.
   Instead the last wave and the partial one, units % g + g tiles of nkb k blocks, are cut into g
   equal contiguous k ranges, one a CTA (each >= nkb: a tile has at most two pieces, summed
   deterministically by the second to finish).  With r = (units % g) / g, a CTA gains 1 - r of a
   tile and the tail runs ~12% slower than whole waves (pieces, merges), ~0.12 (1 + r) of a tile:
   measured on an H200 (bench/NOTES_matmul_sm90.md), r = 0.88 (4096^3) -1 to -3%, 0.85 (8192 x
   11008 x 4096) -0.5%, 0.73 (6144^3) +1.5%, 0.52 (8192^3) +2-3%, 0.30 (16384 x 14336 x 4096)
   +1%.  So the rule: r <= 3/4, and the idle share x nkb >= 4 k blocks (a merge costs ~2).
   Returns the tiles before the tail (all of them: no tail) and sets *iters.  gpuml__mm_streamk: 0
   the rule, -1 never (GPUML_MM_STREAMK=off), g > 0 forced on a grid of g CTAs wherever there is a
   partial wave (tests). */
static int gpuml__mm_streamk;
static int gpuml__mm_group;           /* the tile order's group height in 128-row tiles (0: 8; benchmarks) */
static long gpuml__mm_streamk_runs;   /* launches with a stream-K tail (tests) */
GPUML__FN int64_t gpuml__sm90_streamk(int64_t units, int64_t g, int64_t nkb, int forced, int64_t *iters)
{
    int64_t waves = units / g, rem = units % g;
    *iters = 0;
    if (waves < 1 || rem == 0 || g < 2 || 2 * g > GPUML__TAIL_CNT || (g + rem) * nkb > 0x7fffffff) return units;
    if (!forced && ((g - rem) * nkb < 4 * g || 4 * rem > 3 * g)) return units;
    *iters = (g + rem) * nkb;
    return (waves - 1) * g;
}
/* Tiles of at most half the SMs (the 45-66 tiles on 132 SMs that split-K, at tiles * 3 <= SMs,
   leaves alone; fewer tiles for tf32 / fp8, which split-K does not take): the same walk with no
   whole tiles on 2 x tiles CTAs cuts every tile into a head and a tail of half its k blocks each
   (sk_dp 0, sk_iters tiles x nkb), where nkb >= 16 (a merge costs ~2 k blocks).  Predicted ~1.8x;
   measured 1.4-1.65x on an H200 (bench/NOTES_matmul_sm90.md "Two-way split"): bf16 1024 x 2048 x
   4096 409 -> 580 TFLOP/s (0.57x -> 0.80x cuBLAS), 768 x 2048 x 8192 324 -> 536 (0.89x), tf32
   1024 x 2048 x 4096 213 -> 336 (0.94x), fp8 +20%.  gpuml__mm_split2: 0 the rule, -1 never
   (GPUML_MM_STREAMK=off turns off this and the tail), 1 forced wherever it can run (nkb >= 2; tests).
   Returns the grid (0: no). */
static int gpuml__mm_split2;
GPUML__FN int64_t gpuml__sm90_split2(int64_t units, int64_t g, int64_t nkb, int forced, int64_t *iters)
{
    *iters = 0;
    if (units < 1 || 2 * units > g || 4 * units > GPUML__TAIL_CNT || nkb < (forced ? 2 : 16) || units * nkb > 0x7fffffff) return 0;
    *iters = units * nkb;
    return 2 * units;
}
/* The main wgmma kernel's tile width (GPUML_MM_BN): 256, or 128 for shapes whose 128 x 256 tiles fill
   at most half of the SMs (twice the tiles instead of the two-way split or split-K: cuBLAS's kernels
   on those shapes are 128 x 128 / 128 x 64 tiles, bench/NOTES_matmul_sm90.md "Where the few-tile
   bf16 shapes stand").  Measured on an H200 (bench/NOTES_matmul_sm90.md "128-column tiles"): bf16
   1024 x 2048 x 4096 1.23x (0.96x cuBLAS), 512^2 x 8192 1.22x, tf32 1.10x, fp8 1.35x.  On by default
   (session 30, after forced_bn128 and the whole suite under it); GPUML_MM_BN=256 turns it off, =128
   takes 128 columns wherever the main kernel runs.  gpuml__mm_bn 128 / 256 forces (tests), -1 or 0
   the rule (0 reads the variable).
   The tf32 NN kernel keeps 256 x 128 tiles of its own. */
static int gpuml__mm_bn;
static long gpuml__mm_bn128_runs;   /* launches with 128-column tiles (tests) */
GPUML__FN int gpuml__sm90_bn(gpuml_ctx *ctx, const gpuml__mm *p)
{
    const char *env = gpuml__getenv("GPUML_MM_BN");
    int mode = gpuml__mm_bn ? gpuml__mm_bn : env && strcmp(env, "128") == 0 ? 128 : env && strcmp(env, "256") == 0 ? 256 : -1;
    if (gpuml__sm90_tf32_nn(p)) return 256;
    if (mode == 128 || mode == 256) return mode;
    return 2 * ((p->M + 127) / 128) * ((p->N + 255) / 256) <= GPUML__MAX(ctx->sm_count, 1) ? 128 : 256;
}
/* 1 when the wgmma kernel can take this problem (layouts, alignment, device) */
GPUML__FN int gpuml__sm90_fits(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    size_t ce = gpuml__dtype_sizes[p->c->dtype];
    int es = gpuml__sm90_es(p);
    if (!gpuml__sm90_device(ctx) || !es) return 0;
    if (!gpuml__sm90_a_ok(p, kp->A, es) || !gpuml__sm90_b_ok(p, kp->B, es)) return 0;
    if (!gpuml__sm90_c_ok(p, kp, ce)) {
        /* split-K writes C, the residual and the bias through gpuml_mm_splitk_epi: any layout */
        int kbs;
        const int64_t bn = gpuml__sm90_bn(ctx, p);
        return !gpuml__sm90_tf32_nn(p) && gpuml__sm90_splits(ctx, p, es, 0, ((p->M + 127) / 128) * ((p->N + bn - 1) / bn), &kbs) > 1;
    }
    return 1;
}

/* the specialization options of the wgmma kernel (its module also holds gpuml_mm_split3 for tf32) */
GPUML__FN void gpuml__sm90_opts(const gpuml__mm *p, char *opts, size_t cap)
{
    /* names by gpuml_dtype (f32 inputs run as tf32) */
    static const char *const tn[] = { "f32", "f16", "bf16", "", "", "", "e4m3", "e5m2" };
    static const char *const tin[] = { "tf32", "f16", "bf16", "", "", "", "e4m3", "e5m2" };
    snprintf(opts, cap, "-DGPUML_IN_T=%s -DGPUML_IN_TB=%s -DGPUML_OUT=%s -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d "
             "-DGPUML_HAS_RESID=%d -DGPUML_B_KMAJOR=%d -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=1%s", tin[p->a->dtype],
             tin[p->b->dtype], tn[p->c->dtype], p->act, p->bias != NULL, p->resid != NULL, p->sb_k == 1,
             gpuml__sm90_tf32_nn(p) ? " -DGPUML_TF32_NN=1" : "");
}

/* the split-K wgmma matmul and its epilogue kernel: splits x units work units, each summing
   kb_split k blocks of an M x N tile into f32 partials [split][M][ldw] of a workspace (A and B by
   the tensor maps maps[0], maps[1]; in_a / in_b the operand types as the kernel names them, B
   K-major when kmajor), then gpuml_mm_splitk_epi (compiled with epi_opts) adds them in split order
   (deterministic) into kp's C with kp's epilogue.  kb_img > 0: GPUML_MM_K3D (rank-3 A and B maps
   over images x pixels, kb_img k blocks an image: a 1x1 conv's NCHW backward filter).  Used by
   the matmul and by gpuml__cv_bwf1x1w. */
GPUML__FN gpuml_status gpuml__sm90_splitk_launch(gpuml_ctx *ctx, void **maps, const char *in_a, const char *in_b, int kmajor, int kb_img,
                                                 int64_t M, int64_t N, int64_t K, int splits, int kb_split, int64_t units,
                                                 const gpuml__mm_params *kp, const char *epi_opts, const char *op, int bn)
{
    gpuml__sm90_params sp;
    gpuml__mm_params ep = *kp;
    gpuml__CUfunction fn, epi;
    gpuml_tensor *ws;
    gpuml__CUdeviceptr wp;
    int64_t ldw = (N + 3) / 4 * 4, n = splits * M * ldw;
    long long ldw_ll = (long long)ldw;
    char opts[340];
    unsigned grid[3], block[3] = {384, 1, 1};
    void *args[4];
    gpuml_status st;
    snprintf(opts, sizeof opts, "-DGPUML_IN_T=%s -DGPUML_IN_TB=%s -DGPUML_OUT=f32 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 "
             "-DGPUML_B_KMAJOR=%d -DGPUML_MM_TMA_STORE=0 -DGPUML_MM_CLUSTER=1 -DGPUML_MM_SPLITK=1%s%s", in_a, in_b, kmajor,
             kb_img > 0 ? " -DGPUML_MM_K3D=1" : "", bn == 128 ? " -DGPUML_MM_BN=128" : "");
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul_sm90, opts, "gpuml_matmul_sm90", &fn));
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul, epi_opts, "gpuml_mm_splitk_epi", &epi));
    ws = gpuml__tensor_new(ctx, GPUML_F32, 1, &n, op);
    if (!ws) return ctx->status;
    wp = gpuml__dptr(ws);
    memset(&sp, 0, sizeof sp);
    sp.c = wp; sp.ldc = ldw; sp.ldc_in = ldw; sp.ldr = ldw;
    sp.M = (int)M; sp.N = (int)N; sp.K = (int)K;
    sp.alpha = 1.0f; sp.beta = 0.0f; sp.group_m = 8; sp.splits = splits; sp.kb_split = kb_split; sp.kb_img = kb_img;
    grid[0] = (unsigned)GPUML__MIN(units * splits, (int64_t)GPUML__MAX(ctx->sm_count, 1)); grid[1] = grid[2] = 1;
    args[0] = maps[0]; args[1] = maps[1]; args[2] = maps[2]; args[3] = &sp;
    st = gpuml__launch(ctx, fn, grid, block, GPUML__SM90_SMEM, args, op);
    if (st == GPUML_SUCCESS) {
        args[0] = &ep; args[1] = &wp; args[2] = &splits; args[3] = &ldw_ll;
        grid[0] = (unsigned)(((N + 127) / 128) * (gpuml__splitk_lanes(splits, M * N) ? M : (M + 7) / 8));
        block[0] = 32; block[1] = 8;
        st = gpuml__launch(ctx, epi, grid, block, 0, args, op);
    }
    gpuml_tensor_free(ws);   /* stream-ordered */
    return st;
}
GPUML__FN gpuml_status gpuml__mm_cuda_sm90_splitk(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp, void **maps,
                                                  int splits, int kb_split, int64_t units, int bn)
{
    static const char *const tin[] = { "tf32", "f16", "bf16", "", "", "", "e4m3", "e5m2" };
    char opts[340];
    gpuml__mm_opts(p, opts, sizeof opts);
    gpuml__mm_splitk_runs++;
    return gpuml__sm90_splitk_launch(ctx, maps, tin[p->a->dtype], tin[p->b->dtype], p->sb_k == 1, 0, p->M, p->N, p->K, splits, kb_split,
                                     units, kp, opts, "gpuml_matmul (sm90 split-K)", bn);
}
GPUML__FN gpuml_status gpuml__mm_cuda_sm90(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    /* CUtensorMapDataType values by gpuml_dtype (f32 inputs run as tf32) */
    static const int tmt[] = { 7 /* FLOAT32 */, 6 /* FLOAT16 */, 9 /* BFLOAT16 */, 0, 0, 0, 0 /* UINT8 */, 0 };
    unsigned char mapbuf[4][128 + 64];
    void *maps[3], *args[4];
    gpuml__sm90_params sp;
    gpuml__CUfunction fn;
    char opts[340];
    int es = gpuml__sm90_es(p), in_t = tmt[p->a->dtype], ct = (int)p->c->dtype;
    int out_t = ct == GPUML_F32 ? 7 : ct == GPUML_BF16 ? 9 : 6, kmajor = p->sb_k == 1, i, nn = gpuml__sm90_tf32_nn(p), splits, kb_split = 0;
    unsigned bk = (unsigned)(128 / es);   /* k per stage: one 128-byte swizzle row */
    int64_t tiles_m = (p->M + 127) / 128, units;
    /* the 2-CTA cluster (B multicast) measured 0-6% slower for bf16 (bench/NOTES_matmul_sm90.md);
       GPUML_MM_CLUSTER=2 runs it (k-major B, unsplit) for A/B measurements */
    const char *env_cl = gpuml__getenv("GPUML_MM_CLUSTER");
    int cl = 1;
    unsigned grid[3], block[3] = {384, 1, 1};
    size_t ce = gpuml__dtype_sizes[ct];
    gpuml_tensor *ws = NULL;
    gpuml_status st;
    const int bn = nn ? 256 : gpuml__sm90_bn(ctx, p);   /* the main kernel's tile width */
    gpuml__mm_bn128_runs += bn == 128;
    for (i = 0; i < 3; i++) { maps[i] = mapbuf[i] + (64 - ((uintptr_t)mapbuf[i] & 63)) % 64; memset(maps[i], 0, 128); }
    units = nn ? (p->M + 255) / 256 * ((p->N + 127) / 128) : tiles_m * ((p->N + bn - 1) / bn);
    splits = gpuml__sm90_splits(ctx, p, es, nn, units, &kb_split);
    if (splits == 1 && !nn && kmajor && bn == 256 && env_cl && strcmp(env_cl, "2") == 0) {
        cl = 2;
        units = (tiles_m + 1) / 2 * ((p->N + 255) / 256);
    }
    if (splits > 1) {   /* C is written by the epilogue kernel: no C map */
        if (!gpuml__tmap(ctx, maps[0], in_t, kp->A, p->K, p->M, p->sa_m * es, bk, 128) ||
            !(kmajor ? gpuml__tmap(ctx, maps[1], in_t, kp->B, p->K, p->N, p->sb_n * es, bk, (unsigned)bn)
                     : gpuml__tmap(ctx, maps[1], in_t, kp->B, p->N, p->K, p->sb_k * es, 64, 64)))
            return gpuml__fail(ctx, GPUML_ERROR_CUDA, "gpuml_matmul: cuTensorMapEncodeTiled rejected the layout");
        return gpuml__mm_cuda_sm90_splitk(ctx, p, kp, maps, splits, kb_split, units, bn);
    }
    /* tf32 NN (gpuml_matmul_sm90_nn): A^T is wgmma's B, 256 m x 32 k; B comes in 32 x 32 boxes */
    if (!gpuml__tmap(ctx, maps[0], in_t, kp->A, p->K, p->M, p->sa_m * es, bk, nn ? 256 : 128) ||
        !(kmajor ? gpuml__tmap(ctx, maps[1], in_t, kp->B, p->K, p->N, p->sb_n * es, bk, (unsigned)(bn / cl))
                 : gpuml__tmap(ctx, maps[1], in_t, kp->B, p->N, p->K, p->sb_k * es, nn ? 32 : 64, nn ? 32 : 64)) ||
        !gpuml__tmap(ctx, maps[2], out_t, kp->C, p->N, p->M, p->sc_m * (int64_t)ce, ct == GPUML_F32 ? 32 : 64, 64))
        return gpuml__fail(ctx, GPUML_ERROR_CUDA, "gpuml_matmul: cuTensorMapEncodeTiled rejected the layout");
    gpuml__sm90_opts(p, opts, sizeof opts);
    if (cl == 2) {
        char *c = strstr(opts, "GPUML_MM_CLUSTER=1");
        if (c) c[strlen("GPUML_MM_CLUSTER=")] = '2';
    }
    if (bn == 128) strcat(opts, " -DGPUML_MM_BN=128");   /* opts' ~200 characters in 340 */
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul_sm90, opts, nn ? "gpuml_matmul_sm90_nn" : "gpuml_matmul_sm90", &fn));
    memset(&sp, 0, sizeof sp);
    sp.c = kp->C; sp.c_in = p->beta != 0.0f ? kp->C : 0; sp.bias = kp->bias; sp.resid = kp->R;
    sp.ldc = p->sc_m; sp.ldc_in = p->sc_m; sp.ldr = p->sr_m;
    sp.M = (int)p->M; sp.N = (int)p->N; sp.K = (int)p->K;
    sp.alpha = p->alpha * p->scale; sp.beta = p->beta; sp.group_m = gpuml__mm_group > 0 ? gpuml__mm_group : 8;
    grid[0] = (unsigned)(cl * GPUML__MIN(units, (int64_t)GPUML__MAX(ctx->sm_count / cl, 1)));
    grid[1] = grid[2] = 1;
    if (cl == 1) {   /* a stream-K tail where the last wave would leave SMs idle */
        const char *env = gpuml__getenv("GPUML_MM_STREAMK");
        int force = gpuml__mm_streamk ? gpuml__mm_streamk : env && strcmp(env, "off") == 0 ? -1 : 0;
        int split2 = gpuml__mm_split2 ? gpuml__mm_split2 : force < 0 ? -1 : 0;
        int64_t g = force > 0 ? GPUML__MIN((int64_t)force, units) : (int64_t)grid[0], iters = 0, dp;
        int64_t nkb = nn ? (p->K + 31) / 32 : (p->K + bk - 1) / bk;
        dp = force < 0 ? units : gpuml__sm90_streamk(units, g, nkb, force > 0, &iters);
        if (iters == 0 && force >= 0 && split2 >= 0) {   /* at most half the SMs' worth of tiles: each in two */
            const int64_t g2 = gpuml__sm90_split2(units, GPUML__MAX(ctx->sm_count, 1), nkb, gpuml__mm_split2 > 0, &iters);
            if (g2 > 0) { g = g2; dp = 0; }
        }
        if (iters > 0 && gpuml__tail_counters(ctx)) {
            int64_t n = g * 32768;
            ws = gpuml__tensor_new(ctx, GPUML_F32, 1, &n, "gpuml_matmul (stream-K workspace)");
            if (!ws) gpuml_clear_error(ctx);   /* out of memory for it: the product runs without the tail */
            else {
                sp.sk_dp = (int)dp; sp.sk_iters = (int)iters; sp.sk_cnt = ctx->tail_cnt; sp.sk_ws = gpuml__dptr(ws);
                grid[0] = (unsigned)g;
                gpuml__mm_streamk_runs++;
            }
        }
    }
    args[0] = maps[0]; args[1] = maps[1]; args[2] = maps[2]; args[3] = &sp;
    st = gpuml__launch(ctx, fn, grid, block, GPUML__SM90_SMEM, args, "gpuml_matmul (sm90)");
    gpuml_tensor_free(ws);   /* stream-ordered: the next user of the block runs after the kernel */
    return st;
}


/* 1 when the mma.sync kernel can take this problem (it reads A along k and B along its unit dim
   with 16-byte cp.async: aligned bases, strides in multiples of 8 elements) */
GPUML__FN int gpuml__mma_fits(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    if (ctx->arch < 80 || ctx->smem_optin < 98304) return 0;
    if (p->a->dtype != GPUML_F16 && p->a->dtype != GPUML_BF16) return 0;
    if (p->sa_k != 1 || p->sa_m % 8 || kp->sa_b % 8 || !gpuml__aligned16(kp->A)) return 0;
    if (!((p->sb_n == 1 && p->sb_k % 8 == 0) || (p->sb_k == 1 && p->sb_n % 8 == 0)) || kp->sb_b % 8 || !gpuml__aligned16(kp->B)) return 0;
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


/* 1 when the small-M kernel can take this problem (16-byte loads along k of A and of B) */
GPUML__FN int gpuml__small_fits(const gpuml__mm *p, const gpuml__mm_params *kp)
{
    if (p->M > 16 || (p->a->dtype != GPUML_F16 && p->a->dtype != GPUML_BF16)) return 0;
    if (p->sa_k != 1 || p->sb_k != 1 || (p->M > 1 && p->sa_m % 8) || (p->N > 1 && p->sb_n % 8) || p->K % 8) return 0;
    return gpuml__aligned16(kp->A) && gpuml__aligned16(kp->B);
}
GPUML__FN gpuml_status gpuml__mm_cuda_small(gpuml_ctx *ctx, const gpuml__mm *p, gpuml__mm_params *kp, const char *opts)
{
    gpuml__CUfunction fn, epi;
    gpuml_tensor *part;
    int64_t colblocks = (p->N + 31) / 32, want = (2 * (int64_t)GPUML__MAX(ctx->sm_count, 1) + colblocks - 1) / colblocks;
    int64_t maxchunk = ((48 * 1024) / (p->M * 4)) / 256 * 256, kchunk, ksplit, n;
    unsigned grid[3], block[3] = {256, 1, 1};
    void *args[3];
    gpuml__CUdeviceptr pp;
    gpuml_status st = GPUML_SUCCESS;
    int kc, ks;
    kchunk = (p->K + GPUML__MAX(want, 1) - 1) / GPUML__MAX(want, 1);
    kchunk = GPUML__MIN(GPUML__MAX((kchunk + 255) / 256 * 256, 256), maxchunk);
    ksplit = (p->K + kchunk - 1) / kchunk;
    n = ksplit * p->M * p->N;
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul, opts, "gpuml_mm_small", &fn));
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul, opts, "gpuml_mm_small_epi", &epi));
    part = gpuml__tensor_new(ctx, GPUML_F32, 1, &n, "gpuml_matmul (split-K workspace)");
    if (!part) return ctx->status;
    pp = gpuml__dptr(part);
    kc = (int)kchunk; ks = (int)ksplit;
    kp->batch = 1;
    args[0] = kp; args[1] = &pp; args[2] = &kc;
    grid[0] = (unsigned)colblocks; grid[1] = (unsigned)ksplit; grid[2] = 1;
    st = gpuml__launch(ctx, fn, grid, block, (unsigned)(p->M * kchunk * 4), args, "gpuml_matmul (small M)");
    if (st == GPUML_SUCCESS) {
        args[2] = &ks;
        grid[0] = gpuml__grid_for(ctx, p->M * p->N, 256); grid[1] = 1;
        st = gpuml__launch(ctx, epi, grid, block, 0, args, "gpuml_matmul (small M epilogue)");
    }
    gpuml_tensor_free(part);   /* stream-ordered: the next user of the block runs after these */
    return st;
}

/* The tensor-core small-M kernel (sm_80+, A and B of one 16-bit dtype, B stored N x K, K and
   row strides multiples of 8, 16-byte aligned bases and batch strides): one launch for every
   batch element, no workspace.  gpuml__mm_small_cfg (RT, W, U, CL; 0 = chosen here) lets the
   benchmark try other shapes of the kernel. */
static int gpuml__mm_small_cfg[4];
GPUML__FN int gpuml__small_tc_fits(gpuml_ctx *ctx, const gpuml__mm *p, const gpuml__mm_params *kp)
{
    if (ctx->arch < 80 || p->a->dtype != p->b->dtype || !gpuml__small_fits(p, kp)) return 0;
    if (kp->batch > 1 && (kp->sa_b % 8 || kp->sb_b % 8)) return 0;
    return p->N <= 0x7fffffff - 64;
}
GPUML__FN gpuml_status gpuml__mm_cuda_small_tc(gpuml_ctx *ctx, const gpuml__mm *p, gpuml__mm_params *kp)
{
    char opts[320];
    gpuml__CUfunction fn;
    unsigned grid[3], block[3];
    void *args[1];
    int64_t sms = GPUML__MAX(ctx->sm_count, 1), rows;
    int rt, w = 8, u, cl = 1, mt = p->M > 8 ? 2 : 1;
    if (mt == 1) {
        /* M <= 8: A is read at 1/2-1/4 of the weight bytes even with 16 rows a block; the most
           blocks (and warps) in flight win (bench/NOTES_matmul_small.md) */
        rt = (p->N + 31) / 32 >= sms ? 2 : 1;
    } else if (ctx->arch >= 90) {
        /* M > 8 (A twice as large): 4 warps a block; 64 rows a block where that still gives
           1.5 blocks a multiprocessor (N = 14336), else 32 rows and clusters (below) */
        w = 4;
        rt = (p->N + 63) / 64 >= sms * 3 / 2 ? 4 : 2;
    } else {
        rt = (p->N + 63) / 64 >= sms ? 4 : (p->N + 31) / 32 >= sms ? 2 : 1;
    }
    /* sm_90: clusters of blocks split K until about 6 warps a multiprocessor are streaming
       (few weight rows: N = 1024, or 64 rows a block), while K gives every warp chunks */
    rows = (p->N + 16 * rt - 1) / (16 * rt);
    if (ctx->arch >= 90)
        while (cl < 4 && rows * cl * w < 6 * sms && (p->K + 63) / 64 >= 2 * (int64_t)cl * w) cl *= 2;
    if (gpuml__mm_small_cfg[0]) rt = gpuml__mm_small_cfg[0];
    if (gpuml__mm_small_cfg[1]) w = gpuml__mm_small_cfg[1];
    if (gpuml__mm_small_cfg[3]) cl = ctx->arch >= 90 ? gpuml__mm_small_cfg[3] : 1;
    u = GPUML__MAX(24 / (4 * rt + 2 * mt), 1);   /* <= 24 16-byte loads in flight per lane (~100-170 registers) */
    if (gpuml__mm_small_cfg[2]) u = gpuml__mm_small_cfg[2];
    snprintf(opts, sizeof opts, "-DGPUML_A_DT=%d -DGPUML_C_DT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d -DGPUML_HAS_RESID=%d "
             "-DGPUML_BETA=%d -DGPUML_SM_MT=%d -DGPUML_SM_RT=%d -DGPUML_SM_W=%d -DGPUML_SM_U=%d -DGPUML_SM_CL=%d", (int)p->a->dtype,
             (int)p->c->dtype, p->act, p->bias != NULL, p->resid != NULL, p->beta != 0.0f, mt, rt, w, u, cl);
    GPUML__TRY(gpuml__kernel(ctx, cl > 1 ? &gpuml__fam_matmul_small_cl : &gpuml__fam_matmul_small, opts, "gpuml_mm_small_tc", &fn));
    grid[0] = (unsigned)((p->N + 16 * rt - 1) / (16 * rt)); grid[1] = (unsigned)cl; grid[2] = (unsigned)kp->batch;
    block[0] = (unsigned)(32 * w); block[1] = block[2] = 1;
    args[0] = kp;
    return gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_matmul (small M)");
}

GPUML__FN gpuml_status gpuml__mm_cuda_run(gpuml_ctx *ctx, const gpuml__mm *p, gpuml_matmul_path path);

/* f32 (without allow_tf32) on Hopper: 3xTF32.  Each operand is split into tf32 parts,
   x = big + small (kernels/matmul_sm90.cu, gpuml_mm_split3), written as K-concatenations
   [small_a | big_a | big_a] and [big_b | small_b | big_b] (A's middle and B's first part with
   Inf/NaN zeroed: see the kernel), and the tf32 wgmma kernel runs over K' = 3K: small_a*big_b + big_a*small_b + big_a*big_b, f32 accumulation, about 2^-21 of
   |a*b| per product (f32-level accuracy; plain tf32 is 2^-10).  Taken for a and b without
   batch dims; 3K < 2^31.  The operand copies cost 3x their size in scratch memory.
   Hopper's tensor cores truncate when they add into their f32 accumulator: with same-sign data
   that bias grows with the number of additions (measured 2.9e-5 of the result at K = 4096,
   1.1e-4 at 16384; cuBLAS f32 2.6e-6 and 3.7e-7).  So the big*big products run in k-chunks of
   gpuml__mm3x_chunk, one launch each, whose epilogue adds the chunk into C in f32 rounded to
   nearest (beta = 1): the bias stays that of one chunk, at the cost of reading and writing C
   once per chunk.  Measured on the H200 at 4096^3: 512 gives cuBLAS f32's errors at 1.36x its
   speed (1024: 1.82x, twice the error; none: 2.4x, 10x the error): bench/NOTES_matmul_sm90.md.
   0: one launch over all of K'. */
static int gpuml__mm3x_chunk = 512;
GPUML__FN int gpuml__mm_3x_fits(gpuml_ctx *ctx, const gpuml__mm *p)
{
    gpuml__mm_params kp;
    if (p->a->dtype != GPUML_F32 || p->b->dtype != GPUML_F32 || p->c->dtype != GPUML_F32 || p->tf32 || p->nb) return 0;
    if (!gpuml__sm90_device(ctx) || 3 * p->K > INT32_MAX) return 0;
    memset(&kp, 0, sizeof kp);
    kp.C = gpuml__dptr(p->c);
    kp.R = p->resid ? gpuml__dptr(p->resid) : 0;
    kp.bias = p->bias ? gpuml__dptr(p->bias) : 0;
    return gpuml__sm90_c_ok(p, &kp, 4);
}
GPUML__FN gpuml_status gpuml__mm_cuda_3x(gpuml_ctx *ctx, const gpuml__mm *p)
{
    gpuml__mm q = *p;
    gpuml__mm_params kp;
    gpuml_tensor *buf[2] = {NULL, NULL};
    gpuml__CUfunction fn;
    gpuml_status st = GPUML_SUCCESS;
    int64_t ld = (3 * p->K + 3) / 4 * 4, sh[2], rows, kk, sr, sk, b0, b1, kc;   /* 16-byte rows */
    unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
    void *args[9];
    char opts[340];
    gpuml__CUdeviceptr src, dst;
    int k, bside, trans;
    q.split3 = 1; q.K = 3 * p->K;
    q.sa_m = ld; q.sa_k = 1; q.sb_k = 1; q.sb_n = ld;
    gpuml__sm90_opts(&q, opts, sizeof opts);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_matmul_sm90, opts, "gpuml_mm_split3", &fn));
    for (k = 0; k < 2; k++) {
        const gpuml_tensor *t = k ? p->b : p->a;
        rows = k ? p->N : p->M; kk = p->K;
        sr = k ? p->sb_n : p->sa_m; sk = k ? p->sb_k : p->sa_k;
        sh[0] = rows; sh[1] = ld;
        buf[k] = gpuml__tensor_new(ctx, GPUML_F32, 2, sh, "gpuml_matmul (3xTF32 split operand)");
        if (!buf[k]) { st = ctx->status; goto done; }
        src = gpuml__dptr(t); dst = gpuml__dptr(buf[k]);
        bside = k; trans = sk != 1 && sr == 1;
        args[0] = &src; args[1] = &rows; args[2] = &kk; args[3] = &sr; args[4] = &sk;
        args[5] = &dst; args[6] = &ld; args[7] = &bside; args[8] = &trans;
        grid[0] = gpuml__grid_for(ctx, (rows + 31) / 32 * ((kk + 31) / 32), 1);
        st = gpuml__launch(ctx, fn, grid, block, 0, args, "gpuml_matmul (3xTF32 split)");
        if (st != GPUML_SUCCESS) goto done;
    }
    q.a = buf[0]; q.b = buf[1];
    memset(&kp, 0, sizeof kp);
    kp.C = gpuml__dptr(p->c);
    /* launch 0: k' in [0, b1), both small segments and the first chunk of big*big; then one
       launch per chunk, added into C (beta = 1); the epilogue (bias, act, residual) on the last.
       Chunk starts are multiples of 4 elements: 16-byte aligned tensor-map bases. */
    kc = gpuml__mm3x_chunk > 0 ? GPUML__MAX((int64_t)gpuml__mm3x_chunk / 4 * 4, (int64_t)4) : 3 * p->K;
    for (b0 = 0; b0 < 3 * p->K && st == GPUML_SUCCESS; b0 = b1) {
        int last;
        b1 = b0 == 0 ? (2 * p->K + kc) / 4 * 4 : b0 + kc;
        if (b1 >= 3 * p->K) b1 = 3 * p->K;
        last = b1 == 3 * p->K;
        q.K = b1 - b0;
        q.beta = b0 == 0 ? p->beta : 1.0f;
        q.act = last ? p->act : 0;
        q.bias = last ? p->bias : NULL;
        q.resid = last ? p->resid : NULL;
        kp.A = gpuml__dptr(buf[0]) + (gpuml__u64)(b0 * 4); kp.B = gpuml__dptr(buf[1]) + (gpuml__u64)(b0 * 4);
        kp.R = q.resid ? gpuml__dptr(p->resid) : 0;
        kp.bias = q.bias ? gpuml__dptr(p->bias) : 0;
        st = gpuml__mm_cuda_sm90(ctx, &q, &kp);
    }
done:
    gpuml_tensor_free(buf[0]); gpuml_tensor_free(buf[1]);   /* stream-ordered reuse */
    return st;
}

/* tf32 and fp8 wgmma read A and B along k only: on Hopper, an operand laid out otherwise (or with
   rows not 16-byte aligned) is first copied into a k-contiguous buffer with padded rows, when it
   has no batch dims of its own (a 2-D operand broadcast over the batch).  A tf32 B stored K x N
   with 16-byte rows is read as it is (gpuml_matmul_sm90_nn) unless gpuml__mm_tf32_nn says copy. */
GPUML__FN gpuml_status gpuml__mm_cuda(gpuml_ctx *ctx, const gpuml__mm *p, gpuml_matmul_path path)
{
    int es = gpuml__sm90_es(p), k;
    gpuml__mm q = *p;
    gpuml_tensor *own[2] = {NULL, NULL}, *view[2] = {NULL, NULL};
    gpuml_status st = GPUML_SUCCESS;
    if (gpuml__sm90_wanted(p, path) && gpuml__mm_3x_fits(ctx, p))   /* the same size rule as tf32 */ return gpuml__mm_cuda_3x(ctx, p);
    if (es == 2 || es == 0 || !gpuml__sm90_device(ctx) || !gpuml__sm90_wanted(p, path))
        return gpuml__mm_cuda_run(ctx, p, path);
    for (k = 0; k < 2; k++) {
        const gpuml_tensor *t = k ? p->b : p->a;
        int64_t rows = k ? p->N : p->M, kp_ = (p->K * es + 15) / 16 * 16 / es, sh[2];
        gpuml_tensor *sl;
        if (k == 0 ? gpuml__sm90_a_ok(p, gpuml__dptr(p->a), es) : gpuml__sm90_b_ok(p, gpuml__dptr(p->b), es)) continue;
        if (t->ndim != 2) return gpuml__mm_cuda_run(ctx, p, path);   /* batched operand: the kernel paths as they are */
        sh[0] = rows; sh[1] = kp_;
        own[k] = gpuml__tensor_new(ctx, t->dtype, 2, sh, "gpuml_matmul (k-major copy)");
        if (!own[k]) { st = ctx->status; goto done; }
        sl = gpuml_tensor_slice(own[k], 1, 0, p->K, 1);                       /* [rows, K] */
        view[k] = sl && k ? gpuml_tensor_transpose(sl, 0, 1) : sl;          /* b: [K, N] */
        if (k && sl) gpuml_tensor_free(sl);
        if (!view[k]) { st = ctx->status ? ctx->status : GPUML_ERROR_OUT_OF_MEMORY; goto done; }
        st = gpuml_copy(ctx, view[k], t);
        if (st != GPUML_SUCCESS) goto done;
        if (k) { q.b = view[k]; q.sb_k = 1; q.sb_n = kp_; }
        else { q.a = view[k]; q.sa_m = kp_; q.sa_k = 1; }
    }
    st = gpuml__mm_cuda_run(ctx, &q, path);
done:
    for (k = 0; k < 2; k++) { gpuml_tensor_free(view[k]); gpuml_tensor_free(own[k]); }   /* stream-ordered reuse */
    return st;
}

/* one launch per outer batch index; the innermost batch dim is the grid's z */
GPUML__FN gpuml_status gpuml__mm_cuda_run(gpuml_ctx *ctx, const gpuml__mm *p, gpuml_matmul_path path)
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
        /* auto takes the tensor-core small-M kernel up to M = 16 on sm_80+ (bench/NOTES_matmul_small.md),
           the f32-FMA one up to M = 8 elsewhere (bench/NOTES.md) */
        if ((path == GPUML_MATMUL_SMALL_M || (path == GPUML_MATMUL_AUTO && p->M <= 16)) && gpuml__small_tc_fits(ctx, p, &kp)) {
            GPUML__TRY(gpuml__mm_cuda_small_tc(ctx, p, &kp));
            continue;
        }
        if ((path == GPUML_MATMUL_SMALL_M || (path == GPUML_MATMUL_AUTO && p->M <= 8)) && gpuml__small_fits(p, &kp)) {
            /* no batch dim in the small-M kernel: one pair of launches per batch element */
            gpuml__mm_params one = kp;
            char opts[200];
            int64_t zi;
            gpuml__mm_opts(p, opts, sizeof opts);
            for (zi = 0; zi < inner; zi++) {
                one.A = kp.A + (gpuml__u64)(zi * kp.sa_b * 2);
                one.B = kp.B + (gpuml__u64)(zi * kp.sb_b * 2);
                one.C = kp.C + (gpuml__u64)(zi * kp.sc_b * (int64_t)gpuml__dtype_sizes[p->c->dtype]);
                one.R = kp.R ? kp.R + (gpuml__u64)(zi * kp.sr_b * (int64_t)gpuml__dtype_sizes[p->c->dtype]) : 0;
                if (!gpuml__small_fits(p, &one)) break;
                GPUML__TRY(gpuml__mm_cuda_small(ctx, p, &one, opts));
            }
            if (zi == inner) continue;
            if (zi > 0) return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: batch %lld is misaligned for the small-M kernel", (long long)zi);
        }
        if (path == GPUML_MATMUL_SMALL_M)
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: the small-M path needs M <= 16, f16/bf16, A and B "
                               "contiguous along k (B stored N x K), K and the row strides multiples of 8, 16-byte aligned bases");
        if (gpuml__sm90_wanted(p, path) && gpuml__sm90_fits(ctx, p, &kp)) {
            /* the Hopper kernel has no batch dim: one launch per batch element */
            gpuml__mm_params one = kp;
            int64_t zi;
            for (zi = 0; zi < inner; zi++) {
                one.A = kp.A + (gpuml__u64)(zi * kp.sa_b * (int64_t)gpuml__dtype_sizes[p->a->dtype]);
                one.B = kp.B + (gpuml__u64)(zi * kp.sb_b * (int64_t)gpuml__dtype_sizes[p->b->dtype]);
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
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "gpuml_matmul: the wgmma path needs sm_90, f16/bf16, fp8 or f32 "
                               "(tf32 with allow_tf32, else 3xTF32), row-major A, a unit-stride dim in B (k for fp8 and tf32: other "
                               "layouts are copied when a and b have no batch dims) and in C, 16-byte aligned rows (this is %s x %s -> %s "
                               "on sm_%d%s)", gpuml__dtype_names[p->a->dtype], gpuml__dtype_names[p->b->dtype], gpuml__dtype_names[p->c->dtype],
                               ctx->arch, p->a->dtype == GPUML_F32 && !p->tf32 ? "; 3xTF32 f32 needs a and b without batch dims" : "");
        GPUML__TRY(gpuml__mm_cuda_simt(ctx, p, &kp));
    }
    return GPUML_SUCCESS;
}
#endif

/* runs a validated matmul on the context's backend */
GPUML__FN gpuml_status gpuml__mm_run(gpuml_ctx *ctx, const gpuml__mm *p, gpuml_matmul_path path)
{
    const gpuml_tensor *a = p->a, *b = p->b, *c = p->c;
    gpuml_dtype at = a->dtype, bt = b->dtype, ct = c->dtype;
    int i, k;
    if (ctx->backend == GPUML_BACKEND_CPU) {
        int64_t total = 1, o;
        for (i = 0; i < p->nb; i++) total *= p->bdims[i];
        for (o = 0; o < total; o++) {
            int64_t off[4] = {0, 0, 0, 0}, rem = o;
            for (i = p->nb - 1; i >= 0; i--) {
                int64_t idx = rem % p->bdims[i];
                rem /= p->bdims[i];
                for (k = 0; k < 4; k++) off[k] += idx * p->bs[k][i];
            }
            GPUML__TRY(gpuml__mm_cpu_one(ctx, p, (const char *)gpuml_tensor_data(a) + off[0] * (int64_t)gpuml__dtype_sizes[at],
                                         (const char *)gpuml_tensor_data(b) + off[1] * (int64_t)gpuml__dtype_sizes[bt],
                                         (char *)gpuml_tensor_data(c) + off[2] * (int64_t)gpuml__dtype_sizes[ct],
                                         p->resid ? (const char *)gpuml_tensor_data(p->resid) + off[3] * (int64_t)gpuml__dtype_sizes[ct] : NULL));
        }
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    return gpuml__mm_cuda(ctx, p, path);
#else
    (void)path;
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
}
/* profiler figures: the roof of the dtype's best unit; 2*M*N*K per batch element */
GPUML__FN gpuml_profile_unit gpuml__mm_unit(gpuml_dtype at)
{
    if (at == GPUML_F16 || at == GPUML_BF16) return GPUML_UNIT_F16_TENSOR;
    if (at == GPUML_FP8_E4M3 || at == GPUML_FP8_E5M2) return GPUML_UNIT_FP8_TENSOR;
    if (at == GPUML_I8) return GPUML_UNIT_INT8_TENSOR;
    return GPUML_UNIT_FP32;
}
GPUML__FN double gpuml__mm_flops(const gpuml__mm *p)
{
    double batch = 1.0;
    int i;
    for (i = 0; i < p->nb; i++) batch *= (double)p->bdims[i];
    return 2.0 * (double)p->M * (double)p->N * (double)p->K * batch;
}

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
        if (n > 0) {   /* (p is zeroed; a plain 2-D product copies nothing: the copies cost small CPU products ~5 ns) */
            memcpy(p.bdims, bd, sizeof bd);
            memcpy(p.bs, bs, sizeof bs);
        }
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
    p.tf32 = d.allow_tf32 != 0;
    p.a = a; p.b = b; p.c = c; p.bias = d.bias; p.resid = d.residual;
    if (p.M == 0 || p.N == 0) return GPUML_SUCCESS;
    for (i = 0; i < p.nb; i++) if (p.bdims[i] == 0) return GPUML_SUCCESS;
    if (ctx->backend == GPUML_BACKEND_CPU && d.path != GPUML_MATMUL_AUTO)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: path %d is a GPU kernel; this context runs on the CPU", op, (int)d.path);
    return GPUML__PROF(ctx, gpuml__mm_run(ctx, &p, d.path), "matmul", gpuml__mm_unit(at), gpuml__mm_flops(&p),
                       gpuml__tb(a) + gpuml__tb(b) + gpuml__tb(c) * (p.beta != 0.0f ? 2.0 : 1.0) + gpuml__tb(d.bias) + gpuml__tb(d.residual),
                       a, b, c);
shape_error:
    return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: a %s @ b %s does not give c %s", op, gpuml__shape_str(a, s1, sizeof s1),
                       gpuml__shape_str(b, s2, sizeof s2), gpuml__shape_str(c, s3, sizeof s3));
}

/* -------------------------------------------------------------- convolution ---- */
/* ---- conv2d: tensor-core implicit GEMM (forward) ---- */
/* One forward conv problem, NHWC activations and KRSC weights, all contiguous (set up by gpuml_conv2d). */
typedef struct gpuml__conv_problem {
    int64_t n, h, w, c, k, r, s, p, q;  /* x [n,h,w,c], w [k,r,s,c/groups], y [n,p,q,k] */
    int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;   /* pad_h, pad_w: top and left */
    const gpuml_tensor *x, *wt, *y;     /* y is written.  (The brief's struct named this tensor w,
                                           which clashes with the width w above and cannot compile.) */
    const gpuml_tensor *bias;           /* [k] f32, or NULL */
    const gpuml_tensor *residual;       /* contiguous, y's shape and dtype, or NULL; added after act */
    int act;                            /* gpuml_activation */
    int tf32;                           /* f32 x and w: 1 tf32 (mma.sync: inputs rounded in the kernel; wgmma: the
                                           tensor cores read the top 19 bits), 2 inputs exact in tf32 (3xTF32 split)
                                           with each k tile (wgmma: each GPUML__CW_RN tiles) summed apart and added
                                           round-to-nearest, 3 the same with the tensor cores' accumulation,
                                           4 3xTF32 split in the kernel's registers (with 2's sums; mma.sync only) */
    int y_nchw;                         /* y and residual are [n,k,p,q] (f32 only) */
    int max_splits;                     /* the most k slices the choosers may take (0: GPUML__CONV_MAX_SPLITS); the
                                           backward filter run as a forward conv (gpuml__cv_bwf_conv) has few output
                                           tiles over a long K_gemm and takes many */
} gpuml__conv_problem;
GPUML__FN gpuml_status gpuml__conv2d_igemm(gpuml_ctx *ctx, const gpuml__conv_problem *p);
#define GPUML__HAVE_CONV_IGEMM 1

/* sm_80+: mma.sync implicit GEMM (kernels/conv_igemm.cu, with matmul_mma.cu's helpers in front;
   its LAUNCH CONTRACT comment is the reference) */
static const gpuml__family gpuml__fam_conv_igemm = { "conv_igemm", gpuml__ksrc_conv_igemm, 80, 0, 0 };

/* the tile configurations of kernels/conv_igemm.cu (-DGPUML_CONV_CFG=index) */
typedef struct gpuml__conv_cfg {
    int bm, bn, stages, gather, threads;
    int per_sm;          /* CTAs an SM runs at once (registers / shared memory) */
    float us_unit, us_cta;   /* time model fitted to the H200 (bench/NOTES_conv_igemm.md): one
                                CTA at per_sm residency takes us_cta + us_unit * bm*bn*k_tiles/1e6 us */
} gpuml__conv_cfg;
#define GPUML__CONV_NCFG 11
#define GPUML__CONV_GATHER_CFG 5
#define GPUML__CONV_MAX_SPLITS 8
#define GPUML__CONV_SPLITS_CAP 256   /* the most a problem's max_splits may raise it to */
GPUML__FN int gpuml__conv_max_splits(const gpuml__conv_problem *p)
{
    return p->max_splits > 0 ? GPUML__MIN(p->max_splits, GPUML__CONV_SPLITS_CAP) : GPUML__CONV_MAX_SPLITS;
}
static const gpuml__conv_cfg gpuml__conv_cfgs[GPUML__CONV_NCFG] = {
    { 128, 256, 4, 0, 256, 1, 30.1f, 6.2f }, { 128, 128, 4, 0, 256, 2, 18.4f, 4.0f }, { 256, 64, 4, 0, 256, 2, 21.2f, 4.3f },
    { 128, 64, 4, 0, 256, 2, 29.2f, 2.1f },  { 64, 64, 4, 0, 256, 4, 30.7f, 1.1f },   { 128, 64, 2, 1, 256, 2, 87.3f, 2.8f },
    /* guessed before they were measured (the H200 fit is in bench/NOTES_conv_igemm.md; the
       choice made with these guesses was within ~10% of the best measured configuration on
       every ResNet-50 layer): deeper pipelines of 1, 3 and 0; 4-warp 128x128 and 128x64 with
       64-row warp tiles */
    { 128, 128, 6, 0, 256, 2, 16.6f, 4.0f }, { 128, 64, 6, 0, 256, 2, 26.3f, 2.1f },  { 128, 256, 6, 0, 256, 1, 27.1f, 6.2f },
    { 128, 128, 5, 0, 128, 2, 17.0f, 3.5f }, { 128, 64, 4, 0, 128, 4, 26.0f, 1.5f },
};
GPUML__FN unsigned gpuml__conv_cfg_smem(int cfg)
{
    const gpuml__conv_cfg *c = &gpuml__conv_cfgs[cfg];
    return (unsigned)(c->stages * (c->bm + c->bn) * 64 + (c->gather ? c->bm * 16 : 0));
}

/* NULL when configuration cfg of the kernel can run problem p, else why not */
GPUML__FN const char *gpuml__conv_igemm_why(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg)
{
    const int64_t lim = (int64_t)1 << 31;
    int64_t M, Kg;
    gpuml_dtype xt, yt;
    if (!ctx || !p || !p->x || !p->wt || !p->y) return "missing operand";
    if (cfg < 0 || cfg >= GPUML__CONV_NCFG) return "no such tile configuration";
    if (ctx->backend != GPUML_BACKEND_CUDA) return "not a CUDA context";
    if (ctx->arch < 80) return "needs sm_80 or newer (mma.sync bf16, cp.async)";
    if (ctx->smem_optin < (int)gpuml__conv_cfg_smem(cfg)) return "not enough shared memory per block";
    xt = p->x->dtype; yt = p->y->dtype;
    if (xt == GPUML_F32 && p->tf32 >= 1 && p->tf32 <= 4) {
        if (cfg == 0 || cfg == 5 || cfg == 8 || cfg == 9) return "f32 (tf32) takes configurations 1-4, 6, 7 and 10";
        if ((p->tf32 == 2 || p->tf32 == 4) && cfg != 3 && cfg != 4 && cfg != 7) return "3xTF32 with per-tile sums takes configurations 3, 4 and 7 (registers)";
        if (yt != GPUML_F32) return "y must be f32 for f32 x";
    } else if (xt != GPUML_F16 && xt != GPUML_BF16) {
        return "x must be f16 or bf16 (or f32 with tf32 set)";
    }
    if (p->wt->dtype != xt) return "w must have x's dtype";
    if (yt != GPUML_F32 && yt != GPUML_F16 && yt != GPUML_BF16) return "y must be f32, f16 or bf16";
    if (p->bias && p->bias->dtype != GPUML_F32) return "bias must be f32";
    if (p->residual && p->residual->dtype != yt) return "residual must have y's dtype";
    if (p->groups != 1) return "grouped convolution";
    if (p->y_nchw && xt != GPUML_F32) return "an NCHW y is for f32 (tf32) only";
    if (p->act < GPUML_ACT_NONE || p->act > GPUML_ACT_SILU) return "unknown activation";
    if (p->n < 1 || p->h < 1 || p->w < 1 || p->c < 1 || p->k < 1 || p->r < 1 || p->s < 1 || p->p < 1 || p->q < 1)
        return "empty problem";
    if (p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1 || p->pad_h < 0 || p->pad_w < 0)
        return "stride and dilation must be >= 1, padding >= 0";
    M = p->n * p->p * p->q;
    Kg = p->r * p->s * p->c;
    if (M >= lim - 256 || p->h * p->w >= lim || p->k * Kg >= lim || p->h >= lim || p->w >= lim || p->r * p->dil_h >= (1 << 29) ||
        p->s * p->dil_w >= (1 << 29) || p->p * (int64_t)p->stride_h >= (1 << 29) || p->q * (int64_t)p->stride_w >= (1 << 29) ||
        p->pad_h >= (1 << 29) || p->pad_w >= (1 << 29))
        return "sizes beyond the kernel's 32-bit index range";
    if ((M + gpuml__conv_cfgs[cfg].bm - 1) / gpuml__conv_cfgs[cfg].bm > 65535) return "too many output pixels for the grid";
    if (gpuml_tensor_numel(p->x) != p->n * p->h * p->w * p->c || gpuml_tensor_numel(p->wt) != p->k * Kg ||
        gpuml_tensor_numel(p->y) != M * p->k || (p->bias && gpuml_tensor_numel(p->bias) != p->k) ||
        (p->residual && gpuml_tensor_numel(p->residual) != M * p->k))
        return "operand sizes do not match the problem";
    if (!gpuml_tensor_is_contiguous(p->x) || !gpuml_tensor_is_contiguous(p->wt) || !gpuml_tensor_is_contiguous(p->y) ||
        (p->residual && !gpuml_tensor_is_contiguous(p->residual)) || (p->bias && !gpuml_tensor_is_contiguous(p->bias)))
        return "operands must be contiguous";
#ifndef GPUML_NO_CUDA
    if (!gpuml__conv_cfgs[cfg].gather) {
        if (p->c % (xt == GPUML_F32 ? 4 : 8)) return "C % 8 != 0 (f32: C % 4; 16-byte channel chunks; the gather configuration takes it)";
        if (!gpuml__aligned16(gpuml__dptr(p->x)) || !gpuml__aligned16(gpuml__dptr(p->wt))) return "x or w not 16-byte aligned";
    }
    if (p->bias && gpuml__dptr(p->bias) % 4) return "bias not 4-byte aligned";
#endif
    return NULL;
}

/* k tiles of p: 32 elements (f16/bf16) or 16 (f32 with tf32) of R*S*C, one 64-byte smem row */
GPUML__FN int64_t gpuml__conv_ktiles(const gpuml__conv_problem *p)
{
    int64_t bk = p->x && p->x->dtype == GPUML_F32 ? 16 : 32;
    return (p->r * p->s * p->c + bk - 1) / bk;
}
/* The modeled time (us) of p with configuration cfg split `splits` ways along K_gemm: whole
   waves of CTAs over the SMs at the configuration's residency, plus for split-K the f32
   partial sums' round trip (~3 TB/s) and the extra launch.  -1 where the split leaves a slice
   empty. */
GPUML__FN double gpuml__conv_igemm_model(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
    const gpuml__conv_cfg *c = &gpuml__conv_cfgs[cfg];
    int64_t M = p->n * p->p * p->q, kt = gpuml__conv_ktiles(p), per = (kt + splits - 1) / splits;
    int64_t ctas = ((M + c->bm - 1) / c->bm) * ((p->k + c->bn - 1) / c->bn) * splits;
    /* residency: the configuration's, or what this device's shared memory allows */
    int64_t per_sm = GPUML__MAX(GPUML__MIN((int64_t)c->per_sm, (int64_t)(ctx->smem_optin + 1024) / gpuml__conv_cfg_smem(cfg)), 1);
    int64_t slots = (int64_t)GPUML__MAX(ctx->sm_count, 1) * per_sm, waves = (ctas + slots - 1) / slots;
    double t;
    if ((kt + per - 1) / per != splits) return -1;
    t = (double)waves * (double)per_sm * (c->us_cta + c->us_unit * (double)c->bm * (double)c->bn * (double)per / 1e6);
    if (splits > 1)
        t += 3.0 + ((double)splits * 8.0 + (double)gpuml_dtype_size(p->y->dtype)) * (double)M * (double)p->k / 3.0e6;
    return t;
}
/* The configuration and split for p with the least modeled time (the gather configuration
   only where no other one takes p). */
GPUML__FN int gpuml__conv_igemm_choose(gpuml_ctx *ctx, const gpuml__conv_problem *p, int *splits)
{
    int i, s, best = -1, best_s = 1;
    double best_t = 0;
    int64_t kt = gpuml__conv_ktiles(p);
    for (i = 0; i < GPUML__CONV_NCFG; i++) {
        if (gpuml__conv_cfgs[i].gather || gpuml__conv_igemm_why(ctx, p, i)) continue;
        for (s = 1; s <= gpuml__conv_max_splits(p) && (s == 1 || kt / s >= 4); s++) {
            double t = gpuml__conv_igemm_model(ctx, p, i, s);
            if (t >= 0 && (best < 0 || t < best_t)) { best = i; best_s = s; best_t = t; }
        }
    }
    if (splits) *splits = best >= 0 ? best_s : 1;
    return best >= 0 ? best : GPUML__CONV_GATHER_CFG;
}

#ifndef GPUML_NO_CUDA
/* the argument block of both implicit-GEMM kernels: mirrors struct gpuml__conv_params in
   kernels/conv_igemm.cu (which conv_sm90.cu includes) */
typedef struct gpuml__conv_kparams {
    gpuml__CUdeviceptr x, w, y, bias, res, ws;
    int N, H, W, C, K, R, S, P, Q;
    int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
    int M, Kg, splits;
} gpuml__conv_kparams;
/* mirrors struct gpuml__conv_prep_params in kernels/conv_igemm.cu (gpuml_conv_tf32_prep) */
typedef struct gpuml__conv_prep_kparams {
    gpuml__CUdeviceptr src, dst;
    int64_t s0, s1, s2, s3;
    int n, hw, w, c, cp, parts, role;
    int c0, taps, tstep, tdil, tpad, wsrc;
    int nfast;
} gpuml__conv_prep_kparams;
GPUML__FN void gpuml__conv_kparams_fill(gpuml__conv_kparams *kp, const gpuml__conv_problem *p, int splits)
{
    memset(kp, 0, sizeof *kp);
    kp->x = gpuml__dptr(p->x); kp->w = gpuml__dptr(p->wt); kp->y = gpuml__dptr(p->y);
    kp->bias = p->bias ? gpuml__dptr(p->bias) : 0;
    kp->res = p->residual ? gpuml__dptr(p->residual) : 0;
    kp->N = (int)p->n; kp->H = (int)p->h; kp->W = (int)p->w; kp->C = (int)p->c; kp->K = (int)p->k;
    kp->R = (int)p->r; kp->S = (int)p->s; kp->P = (int)p->p; kp->Q = (int)p->q;
    kp->stride_h = p->stride_h; kp->stride_w = p->stride_w; kp->pad_h = p->pad_h; kp->pad_w = p->pad_w;
    kp->dil_h = p->dil_h; kp->dil_w = p->dil_w;
    kp->M = (int)(p->n * p->p * p->q); kp->Kg = (int)(p->r * p->s * p->c); kp->splits = splits;
}
/* split-K for either kernel: fn (args refer to kp) writes f32 partial sums into a workspace, then
   conv_igemm's reduce kernel (module ropts) adds the kp->splits slices and applies the epilogue */
GPUML__FN gpuml_status gpuml__conv_splitk_run(gpuml_ctx *ctx, const gpuml__conv_problem *p, gpuml__conv_kparams *kp, gpuml__CUfunction fn,
                                              const unsigned grid[3], const unsigned block[3], unsigned smem, void **args,
                                              const char *ropts, const char *what)
{
    gpuml__CUfunction red;
    gpuml_tensor *ws;
    gpuml_status st;
    int64_t total = (int64_t)kp->M * p->k * kp->splits;
    unsigned g[3], b[3], rgrid[3], rblock[3] = {256, 1, 1};
    void *rargs[1];
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_igemm, ropts, "gpuml_conv_splitk_reduce", &red));
    ws = gpuml_tensor_new(ctx, GPUML_F32, 1, &total);
    if (!ws) return gpuml_last_status(ctx);
    kp->y = gpuml__dptr(ws);                           /* partial sums first */
    memcpy(g, grid, sizeof g); memcpy(b, block, sizeof b);
    st = gpuml__launch(ctx, fn, g, b, smem, args, what);
    if (st == GPUML_SUCCESS) {
        kp->ws = kp->y;
        kp->y = gpuml__dptr(p->y);
        rgrid[0] = gpuml__grid_for(ctx, (int64_t)kp->M * p->k, 256); rgrid[1] = rgrid[2] = 1;
        rargs[0] = kp;
        st = gpuml__launch(ctx, red, rgrid, rblock, 0, rargs, "conv2d (split-K reduce)");
    }
    gpuml_tensor_free(ws);   /* stream-ordered: the block is reused only by later work */
    return st;
}
#endif
/* Runs p with tile configuration cfg split `splits` ways along K_gemm (cfg -1: the chosen
   configuration and split).  Returns GPUML_ERROR_NOT_SUPPORTED, recording no error, where the
   kernel does not take the problem (the caller falls back). */
GPUML__FN gpuml_status gpuml__conv2d_igemm_cfg(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
#ifndef GPUML_NO_CUDA
    gpuml__conv_kparams kp;
    char opts[200], sopts[200];
    gpuml__CUfunction fn;
    unsigned grid[3], block[3] = {256, 1, 1};
    void *args[1];
    int64_t kt, per;
    if (!ctx || !p) return GPUML_ERROR_INVALID_ARGUMENT;
    if (cfg < 0) cfg = gpuml__conv_igemm_choose(ctx, p, &splits);
    if (gpuml__conv_igemm_why(ctx, p, cfg)) return GPUML_ERROR_NOT_SUPPORTED;
    kt = gpuml__conv_ktiles(p);
    if (splits < 1) splits = 1;
    if (splits > gpuml__conv_max_splits(p) || splits > kt) return GPUML_ERROR_NOT_SUPPORTED;
    per = (kt + splits - 1) / splits;
    splits = (int)((kt + per - 1) / per);           /* no empty slice */
    GPUML__TRY(gpuml__enter(ctx));
    snprintf(opts, sizeof opts, "-DGPUML_CONV_DT=%d -DGPUML_CONV_YDT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d -DGPUML_HAS_RESID=%d -DGPUML_CONV_CFG=%d",
             (int)p->x->dtype, (int)p->y->dtype, p->act, p->bias != NULL, p->residual != NULL, cfg);
    snprintf(sopts, sizeof sopts, "-DGPUML_CONV_DT=%d -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=%d",
             (int)p->x->dtype, cfg);
    if (p->x->dtype == GPUML_F32) {   /* tf32: rounding, per-tile sums; the output layout (not for split-K's partial sums) */
        size_t lo = strlen(opts), ls = strlen(sopts);
        int tf = p->tf32 == 1 ? 1 : p->tf32 == 4 ? 2 : 0, rn = p->tf32 == 2 || p->tf32 == 4;
        snprintf(opts + lo, sizeof opts - lo, " -DGPUML_CONV_TF32=%d -DGPUML_CONV_RN=%d -DGPUML_CONV_YNCHW=%d", tf, rn, p->y_nchw != 0);
        snprintf(sopts + ls, sizeof sopts - ls, " -DGPUML_CONV_TF32=%d -DGPUML_CONV_RN=%d", tf, rn);
    }
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_igemm, splits > 1 ? sopts : opts, "gpuml_conv_igemm", &fn));
    gpuml__conv_kparams_fill(&kp, p, splits);
    grid[0] = (unsigned)((p->k + gpuml__conv_cfgs[cfg].bn - 1) / gpuml__conv_cfgs[cfg].bn);
    grid[1] = (unsigned)((kp.M + gpuml__conv_cfgs[cfg].bm - 1) / gpuml__conv_cfgs[cfg].bm);
    grid[2] = (unsigned)splits;
    args[0] = &kp;
    block[0] = (unsigned)gpuml__conv_cfgs[cfg].threads;
    if (splits == 1) return gpuml__launch(ctx, fn, grid, block, gpuml__conv_cfg_smem(cfg), args, "conv2d (implicit GEMM)");
    return gpuml__conv_splitk_run(ctx, p, &kp, fn, grid, block, gpuml__conv_cfg_smem(cfg), args, opts, "conv2d (implicit GEMM, split-K)");
#else
    (void)ctx; (void)p; (void)cfg; (void)splits;
    return GPUML_ERROR_NOT_SUPPORTED;
#endif
}
/* ---- sm_80+: few input channels (the C = 3 stem), kernels/conv_stem.cu (its LAUNCH CONTRACT
   comment is the reference): a block stages the input window of a 128-pixel output tile in
   shared memory once, channels padded to even, and feeds mma.sync from it; weights resident. ---- */
static const gpuml__family gpuml__fam_conv_stem = { "conv_stem", gpuml__ksrc_conv_stem, 80, 0, 0 };
#define GPUML__STEM_MAX_C 16
/* the output tile's width (TQ; the tile is 128 / TQ rows tall) */
GPUML__FN int gpuml__conv_stem_tq(const gpuml__conv_problem *p) { return p->q <= 8 ? 8 : 16; }
/* the tile's input window, IR rows x IC pixels */
GPUML__FN void gpuml__conv_stem_window(const gpuml__conv_problem *p, int64_t *ir, int64_t *ic)
{
    int64_t tq = gpuml__conv_stem_tq(p), tp = 128 / tq;
    *ir = (tp - 1) * p->stride_h + (p->r - 1) * p->dil_h + 1;
    *ic = (tq - 1) * p->stride_w + (p->s - 1) * p->dil_w + 1;
}
/* the TMA form's window row in halves (kernels/conv_stem.cu PITCH): IC * C and the up to 7 halves before
   it (a TMA box starts on 16 bytes), rounded up to 8 */
GPUML__FN int64_t gpuml__conv_stem_pitch(const gpuml__conv_problem *p, int64_t ic) { return (ic * p->c + 14) & ~(int64_t)7; }
/* dynamic shared memory of the launch (kernels/conv_stem.cu; tma: the GPUML_STEM_TMA form, two raw
   windows); capped at 2^30 for absurd windows */
GPUML__FN int64_t gpuml__conv_stem_smem_t(const gpuml__conv_problem *p, int tma)
{
    int64_t ir, ic, cp = (p->c + 1) & ~(int64_t)1, kp, win, b;
    gpuml__conv_stem_window(p, &ir, &ic);
    if (ir >= (1 << 20) || ic >= (1 << 20) || p->r >= (1 << 20) || p->s >= (1 << 20)) return (int64_t)1 << 30;
    if (tma) {
        int64_t jp = (p->s * p->c + ((p->pad_w * p->c) & 1) + 1) & ~(int64_t)1, pitch = gpuml__conv_stem_pitch(p, ic);
        kp = (p->r * jp + 15) / 16 * 16;
        win = (ir * pitch * 2 + 127) & ~(int64_t)127;
        b = 64 * (kp + 8) * 2 + 4 * 8 * 72 * 4 + kp * 4 + 16 + 128 + 2 * win + 16;
    } else {
        kp = (p->r * p->s * cp + 15) / 16 * 16;
        win = ir * ic * cp * 2;
        b = 64 * (kp + 8) * 2 + 4 * 8 * 72 * 4 + kp * 2 + ((win + 15) & ~(int64_t)15);
    }
    return b > ((int64_t)1 << 30) ? ((int64_t)1 << 30) : b;
}
GPUML__FN int64_t gpuml__conv_stem_smem(const gpuml__conv_problem *p) { return gpuml__conv_stem_smem_t(p, 0); }
/* NULL when the small-C kernel can run p, else why not */
GPUML__FN const char *gpuml__conv_stem_why(gpuml_ctx *ctx, const gpuml__conv_problem *p)
{
    /* dtypes, operand sizes, contiguity, the 32-bit index limits, sm_80: as the gather configuration */
    const char *why = gpuml__conv_igemm_why(ctx, p, GPUML__CONV_GATHER_CFG);
    if (why) return why;
    if (p->c > GPUML__STEM_MAX_C) return "C > 16 (the small-C kernel stages all channels of its input window)";
    if (p->h * p->w * p->c >= ((int64_t)1 << 31)) return "an image of 2^31 elements or more (32-bit offsets)";
    if ((p->k + 63) / 64 > 65535) return "too many output channels for the grid";
    if (gpuml__conv_stem_smem(p) > (int64_t)ctx->smem_optin) return "the input window of a tile and the weights do not fit in shared memory";
    if (((p->s - 1) * p->dil_w + 1 + 15 * p->stride_w) * ((p->c + 1) / 2) >= 4096) return "an input window row of 4096 words or more";
    return NULL;
}
#define GPUML__STEM_PF_DEFAULT 0
/* The TMA form (GPUML_STEM_TMA, sm_90): the raw input window of the next tile copied by TMA while
   this tile computes, no channel padding (the stem's GEMM depth 208 -> 160).  1 where it can take p
   (besides gpuml__conv_stem_why): a filter row's taps contiguous in the window (dilation 1 along
   w), a tap pair one aligned word (stride_w * C even), the window row and the up to 7 halves before
   it (a box starts on 16 bytes: a TMA requirement the encoder does not check; unaligned starts
   fault as an illegal instruction) within a TMA box (<= 256 halves), x 16-byte aligned with 16-byte
   rows (W * C % 8 == 0).  AUTO takes it wherever it can run; GPUML_CONV_STEM_TMA=off never (then
   the form of GPUML__STEM_PF_DEFAULT). */
#ifndef GPUML_NO_CUDA
static long gpuml__conv_stem_tma_runs;   /* launches of the TMA form (tests) */
GPUML__FN int gpuml__conv_stem_tma_ok(gpuml_ctx *ctx, const gpuml__conv_problem *p)
{
    int64_t ir, ic;
    if (ctx->arch < 90 || !ctx->cu.TensorMapEncodeTiled || p->dil_w != 1 || (p->stride_w * p->c) % 2 != 0 || (p->w * p->c) % 8 != 0) return 0;
    if ((gpuml__dptr(p->x) & 15) != 0 || p->n > INT32_MAX) return 0;
    gpuml__conv_stem_window(p, &ir, &ic);
    if (ir > 256 || gpuml__conv_stem_pitch(p, ic) > 256) return 0;   /* TMA box dimensions */
    return gpuml__conv_stem_smem_t(p, 1) <= (int64_t)ctx->smem_optin;
}
#endif
/* Runs p on the small-C kernel, pf: 2 the TMA form (gpuml__conv_stem_tma_ok), 1 loads the next
   tile's input window into registers during this tile's mma, 0 neither, -1 the default (the TMA
   form where it can run, else 0); NOT_SUPPORTED (no error recorded) where it does not take p. */
GPUML__FN gpuml_status gpuml__conv2d_stem_pf(gpuml_ctx *ctx, const gpuml__conv_problem *p, int pf)
{
#ifndef GPUML_NO_CUDA
    gpuml__conv_kparams kp;
    char opts[220];
    gpuml__CUfunction fn;
    unsigned grid[3], block[3] = {128, 1, 1};
    unsigned char mapbuf[128 + 64];
    void *args[2], *map = (void *)(((uintptr_t)mapbuf + 63) & ~(uintptr_t)63);
    int64_t tq, tiles, per_sm, smem;
    int tma;
    if (!ctx || !p) return GPUML_ERROR_INVALID_ARGUMENT;
    if (gpuml__conv_stem_why(ctx, p)) return GPUML_ERROR_NOT_SUPPORTED;
    if (pf < 0) {
        const char *env = gpuml__getenv("GPUML_CONV_STEM_TMA");
        tma = !(env && strcmp(env, "off") == 0);
    } else tma = pf == 2;
    if (tma && !gpuml__conv_stem_tma_ok(ctx, p)) {
        if (pf == 2) return GPUML_ERROR_NOT_SUPPORTED;
        tma = 0;
    }
    GPUML__TRY(gpuml__enter(ctx));
    tq = gpuml__conv_stem_tq(p);
    smem = gpuml__conv_stem_smem_t(p, tma);
    if (pf < 0 || pf == 2) pf = tma ? 0 : GPUML__STEM_PF_DEFAULT;
    pf = pf != 0;
    snprintf(opts, sizeof opts, "-DGPUML_STEM_DT=%d -DGPUML_CONV_YDT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d -DGPUML_HAS_RESID=%d -DGPUML_STEM_TQ=%d -DGPUML_STEM_PF=%d%s",
             (int)p->x->dtype, (int)p->y->dtype, p->act, p->bias != NULL, p->residual != NULL, (int)tq, pf, tma ? " -DGPUML_STEM_TMA=1" : "");
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_stem, opts, "gpuml_conv_stem", &fn));
    gpuml__conv_kparams_fill(&kp, p, 1);
    if (tma) {   /* x as [N][H][W * C] of 16-bit words; box: one window (PITCH x IR), zeros outside */
        int64_t ir, ic, dims[3], strides[2];
        unsigned box[3];
        gpuml__conv_stem_window(p, &ir, &ic);
        dims[0] = p->w * p->c; dims[1] = p->h; dims[2] = p->n;
        strides[0] = p->w * p->c * 2; strides[1] = p->h * p->w * p->c * 2;
        box[0] = (unsigned)gpuml__conv_stem_pitch(p, ic); box[1] = (unsigned)ir; box[2] = 1;
        if (!gpuml__tmap_rank(ctx, map, 1 /* UINT16 */, 3, kp.x, dims, strides, box, 0 /* no swizzle */, 2 /* L2 128B */))
            return gpuml__fail(ctx, GPUML_ERROR_CUDA, "conv2d (small-C, TMA): cuTensorMapEncodeTiled rejected x's layout");
        gpuml__conv_stem_tma_runs++;
    }
    /* persistent: as many blocks as fit at once (4, or 3 with pf, by the register bound; fewer
       where shared memory runs out), each walking pixel tiles with its weights kept in shared memory */
    tiles = p->n * ((p->p + 128 / tq - 1) / (128 / tq)) * ((p->q + tq - 1) / tq);
    per_sm = GPUML__MAX(GPUML__MIN((int64_t)(pf ? 3 : 4), ((int64_t)ctx->smem_optin + 1024) / (smem + 1024)), (int64_t)1);
    grid[0] = (unsigned)GPUML__MIN(tiles, (int64_t)GPUML__MAX(ctx->sm_count, 1) * per_sm);
    grid[1] = (unsigned)((p->k + 63) / 64);
    grid[2] = 1;
    args[0] = &kp;
    args[1] = map;
    /* a hint: the largest shared-memory carveout, so that the 3-4 blocks fit beside each other */
    (void)ctx->cu.FuncSetAttribute(fn, 9 /* CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT */, 100);
    return gpuml__launch(ctx, fn, grid, block, (unsigned)smem, args, "conv2d (small-C implicit GEMM)");
#else
    (void)ctx; (void)p; (void)pf;
    return GPUML_ERROR_NOT_SUPPORTED;
#endif
}
GPUML__FN gpuml_status gpuml__conv2d_stem(gpuml_ctx *ctx, const gpuml__conv_problem *p) { return gpuml__conv2d_stem_pf(ctx, p, -1); }
GPUML__FN int gpuml__conv_sm90_choose(gpuml_ctx *ctx, const gpuml__conv_problem *p, int *splits, double *model_us);
GPUML__FN gpuml_status gpuml__conv2d_sm90(gpuml_ctx *ctx, const gpuml__conv_problem *p);
/* AUTO: on Hopper the wgmma kernel wherever it takes p (C % 64 == 0; device runs 1-2: faster
   than this kernel's best configuration on all 22 such ResNet-50 layers), else this kernel;
   where only its element-gather configuration would take p (C % 8 != 0: the C = 3 stem, or x
   not 16-byte aligned), the small-C kernel when it takes p (bench/NOTES_conv_igemm.md, stem) */
GPUML__FN gpuml_status gpuml__conv2d_igemm(gpuml_ctx *ctx, const gpuml__conv_problem *p)
{
    if (ctx && p && ctx->arch == 90) {   /* NOT_SUPPORTED (no error set) where no wgmma configuration fits */
        gpuml_status st = gpuml__conv2d_sm90(ctx, p);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
    }
    if (ctx && p && p->x && p->y && gpuml__conv_igemm_choose(ctx, p, NULL) == GPUML__CONV_GATHER_CFG && !gpuml__conv_stem_why(ctx, p))
        return gpuml__conv2d_stem(ctx, p);
    return gpuml__conv2d_igemm_cfg(ctx, p, -1, 0);
}

/* ---- sm_90a: wgmma implicit GEMM (kernels/conv_sm90.cu, with matmul_mma.cu and conv_igemm.cu
   in front; its LAUNCH CONTRACT comment is the reference).  Weights by TMA, x gathered by a
   producer warpgroup, C % 64 == 0.  The mma.sync kernel above stays the fallback. ---- */
static const gpuml__family gpuml__fam_conv_sm90 = { "conv_sm90", gpuml__ksrc_conv_sm90, 90, 1, 0 };
typedef struct gpuml__cw_cfg {
    int bm, bn, stages, per_sm;
    float us_unit, us_cta;   /* time model (gpuml__conv_sm90_model): a CTA at per_sm residency runs one
                                unit in us_cta + us_unit * bm*bn*k_tiles/1e6 us ... */
    float us_mb;             /* ... plus us_mb per MB of y written and of x gathered (/8, per column tile) */
} gpuml__cw_cfg;
#define GPUML__CW_NCFG 6
#ifndef GPUML__CW_RN
#define GPUML__CW_RN 4         /* 3xTF32 (problem tf32 2): k tiles summed by the tensor cores between round-to-nearest adds
                                  (H100, ResNet-50 f32 NCHW: 2 -> 4 tiles 1.253 -> 1.285x cuDNN f32 geomean; max error /
                                  sum|terms| on same-sign data 4.2e-7 -> 7.6e-7, the CUDA-core kernel's 2.1-3.6e-6) */
#endif
/* GPUML_CONV_RN=n (1..16) overrides it, for accuracy / speed A/B runs */
GPUML__FN int gpuml__cw_rn(void)
{
    const char *env = gpuml__getenv("GPUML_CONV_RN");
    int v = env ? atoi(env) : 0;
    return v >= 1 && v <= 16 ? v : GPUML__CW_RN;
}
#define GPUML__CW_GATHER 256   /* or'ed into a configuration: gather x with cp.async even where TMA could load it */
#define GPUML__CW_IM2COL 512   /* or'ed into a configuration: TMA im2col loads of x for windows other than 1x1 s1
                                  (AUTO, cfg < 0, uses them wherever the driver encodes the map: 15-30% faster
                                  than the cp.async gather on every ResNet-50 3x3 and strided 1x1 layer on an
                                  H200, bench/NOTES_conv_igemm.md); a forced configuration without this flag
                                  gathers */
#define GPUML__CW_NO_TMA_Y 1024  /* or'ed into a configuration: the slab epilogue (st.global) even where the
                                    TMA-store epilogue could write y (GPUML_CW_TMA_Y=0 in the environment: always) */
#define GPUML__CW_Y_FULL 2048   /* or'ed into a configuration: configuration 3's TMA-store epilogue stages the whole
                                   64 x 128 tile (3 stages) instead of one 64 x 64 box at a time (4 stages) */
/* tests: at most this many CTAs in the wgmma conv kernel's persistent grid (0: the usual one a slot),
   so that small problems run many units a CTA (ring and staging-buffer phases wrap) */
static int gpuml__cw_grid_cap;
#define GPUML__CW_FLAGS (GPUML__CW_GATHER | GPUML__CW_IM2COL | GPUML__CW_NO_TMA_Y | GPUML__CW_Y_FULL)
static const gpuml__cw_cfg gpuml__cw_cfgs[GPUML__CW_NCFG] = {
    /* the model's constants for f32 (tf32 / 3xTF32), and for 16-bit under GPUML_CW_FIT=old: fitted
       (relative least squares) to the forced-configuration timings of device run 2 (H200) on the
       22 ResNet-50 layers (bench/NOTES_conv_igemm.md); 16-bit x uses gpuml__cw_fit16 below */
    { 128, 256, 4, 1, 25.89f, 1.65f, 0.411f }, { 128, 128, 6, 1, 33.63f, 0.08f, 0.656f }, { 128, 64, 8, 1, 54.20f, 1.96f, 0.210f },
    { 64, 128, 4, 2, 24.92f, 0.00f, 0.668f },  { 64, 64, 6, 2, 49.40f, 0.58f, 0.200f },
    /* 192 x 128 (three consumer warpgroups): a guess from configurations 0 and 1, to be fitted */
    { 192, 128, 4, 1, 26.0f, 1.0f, 0.5f },
};
/* the model's constants (us_unit, us_cta, us_mb) for 16-bit x, refitted on the H100 (relative least
   squares on every configuration of the 22 ResNet-50 layers, f16 NHWC, batch 32: bench/run_cwfit.sh,
   bench/cw_fit.py, bench/NOTES_conv_igemm.md "The chooser refitted on the H100").  Chosen against the
   best measured configuration: geomean 1.041 -> 1.010 over the 22 layers, worst 1.121 -> 1.085.
   f32 (tf32 / 3xTF32) keeps the table above (its NCHW layers were measured with those choices);
   GPUML_CW_FIT=old in the environment: the table above for 16-bit too (gpuml__cw_fit16_on). */
static const float gpuml__cw_fit16[GPUML__CW_NCFG][3] = {
    { 22.89f, 1.289f, 0.285f }, { 24.77f, 2.009f, 0.012f }, { 30.07f, 0.509f, 0.191f },
    { 22.90f, 0.623f, 0.251f }, { 28.20f, 0.069f, 0.354f }, { 20.58f, 0.921f, 0.394f },
};
/* channels per k tile (one 128-byte swizzle row): 64 of f16 / bf16, 32 of f32 (tf32) */
GPUML__FN int64_t gpuml__cw_bke(const gpuml__conv_problem *p) { return p->x && p->x->dtype == GPUML_F32 ? 32 : 64; }
/* the kernel's GPUML_CW_SMEM: with the TMA-store epilogue (tma_y, the kernel's GPUML_CW_TMA_Y) 16-bit
   staging per consumer warpgroup replaces the f32 slab: 1, the whole 64 x BN tile (configurations 0
   and 3 keep 3 stages to fit); 2, one 64 x 64 box (configuration 3 keeps its 4) */
GPUML__FN unsigned gpuml__cw_smem(int cfg, int tma_y, int has_bias)
{
    const gpuml__cw_cfg *c = &gpuml__cw_cfgs[cfg];
    int stages = (tma_y && cfg == 0) || (tma_y == 1 && cfg == 3) ? 3 : c->stages;
    int epi = tma_y == 2 ? 64 * 64 * 2 : tma_y ? 64 * c->bn * 2 : 64 * 40 * 4;
    /* has_bias: the kernel's GPUML_CW_BIAS_BYTES, each consumer warpgroup's bias staged in smem */
    return (unsigned)(1024 + stages * (c->bm + c->bn) * 128 + (c->bm / 64) * (epi + (has_bias ? c->bn * 4 : 0)) + 256);
}
/* NULL when configuration cfg of the wgmma kernel can run problem p, else why not */
GPUML__FN const char *gpuml__conv_sm90_why(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg)
{
    const char *why;
    gpuml__conv_problem q;
    int f32;
    if (cfg >= 0) cfg &= ~GPUML__CW_FLAGS;
    if (cfg < 0 || cfg >= GPUML__CW_NCFG) return "no such wgmma tile configuration";
    if (!ctx || !p) return "missing operand";
    if (ctx->backend != GPUML_BACKEND_CUDA) return "not a CUDA context";
    if (ctx->arch != 90) return "needs sm_90 (wgmma, TMA)";
    f32 = p->x && p->x->dtype == GPUML_F32;
    if (f32 && (p->tf32 < 1 || p->tf32 > 3)) return "f32 x runs as tf32 (tf32 1) or on 3xTF32-split operands (2, 3)";
    if (f32 && p->tf32 == 2 && (cfg == 0 || cfg == 3 || cfg == 5)) return "per-run sums double the accumulators: configurations 1, 2, 4";
    q = *p;
    if (f32) q.tf32 = 1;   /* the mma.sync kernel's per-configuration limits of f32 do not apply */
    why = gpuml__conv_igemm_why(ctx, &q, 1);   /* dtypes, sizes, contiguity, alignment */
    if (why) return why;
#ifndef GPUML_NO_CUDA
    if (!ctx->cu.TensorMapEncodeTiled) return "the driver has no cuTensorMapEncodeTiled";
#endif
    if (ctx->smem_optin < (int)gpuml__cw_smem(cfg, 0, p->bias != NULL)) return "not enough shared memory per block";
    if (p->c % gpuml__cw_bke(p)) return f32 ? "C % 32 != 0 (f32: a k tile is 32 channels of one tap)" : "C % 64 != 0 (a k tile is 64 channels of one tap)";
    if (gpuml_tensor_numel(p->x) >= ((int64_t)1 << 31)) return "x has 2^31 elements or more (32-bit offsets)";
    return NULL;
}
/* 1 where the model takes its constants from gpuml__cw_fit16 for p: 16-bit x, and GPUML_CW_FIT
   not "old" in the environment (the previous constants for 16-bit too, for A/B runs) */
GPUML__FN int gpuml__cw_fit16_on(const gpuml__conv_problem *p)
{
    const char *env = gpuml__getenv("GPUML_CW_FIT");
    return !(p->x && p->x->dtype == GPUML_F32) && !(env && strcmp(env, "old") == 0);
}
/* modeled time (us) of cfg with `splits` k slices, as gpuml__conv_igemm_model: the persistent
   grid runs ceil(units / slots) rounds of one unit per resident CTA; fit16: the constants of
   gpuml__cw_fit16 (gpuml__cw_fit16_on), else those of gpuml__cw_cfgs */
GPUML__FN double gpuml__conv_sm90_model_k(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits, int fit16)
{
    const gpuml__cw_cfg *c = &gpuml__cw_cfgs[cfg];
    /* an f32 k tile (32 channels, tf32 at half the f16 rate) takes as long as a 16-bit one (64) */
    int64_t M = p->n * p->p * p->q, kt = p->r * p->s * p->c / gpuml__cw_bke(p), per = (kt + splits - 1) / splits;
    int64_t tiles_n = (p->k + c->bn - 1) / c->bn, units = ((M + c->bm - 1) / c->bm) * tiles_n * splits;
    int64_t slots = (int64_t)GPUML__MAX(ctx->sm_count, 1) * c->per_sm, rounds = (units + slots - 1) / slots;
    double ys = p->y && p->y->dtype == GPUML_F32 && p->x && p->x->dtype == GPUML_F32 ? 4.0 : 2.0;
    const double us_unit = fit16 ? gpuml__cw_fit16[cfg][0] : c->us_unit, us_cta = fit16 ? gpuml__cw_fit16[cfg][1] : c->us_cta;
    const double us_mb = fit16 ? gpuml__cw_fit16[cfg][2] : c->us_mb;
    double t, mb = ((splits == 1 ? (double)M * (double)p->k * ys : 0.0) + (double)M * (double)kt * 128.0 * (double)tiles_n / 8.0) / 1e6;
    if ((kt + per - 1) / per != splits) return -1;
    t = (double)rounds * (double)c->per_sm * (us_cta + us_unit * (double)c->bm * (double)c->bn * (double)per / 1e6) + us_mb * mb;
    if (splits > 1)
        t += 3.0 + ((double)splits * 8.0 + (double)gpuml_dtype_size(p->y->dtype)) * (double)M * (double)p->k / 3.0e6;
    return t;
}
GPUML__FN double gpuml__conv_sm90_model(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
    return gpuml__conv_sm90_model_k(ctx, p, cfg, splits, gpuml__cw_fit16_on(p));
}
/* the configuration and split with the least modeled time; -1 where none takes p */
GPUML__FN int gpuml__conv_sm90_choose(gpuml_ctx *ctx, const gpuml__conv_problem *p, int *splits, double *model_us)
{
    int i, s, best = -1, best_s = 1, fit16 = gpuml__cw_fit16_on(p);
    double best_t = 0;
    for (i = 0; i < GPUML__CW_NCFG; i++) {
        int64_t kt;
        if (gpuml__conv_sm90_why(ctx, p, i)) continue;
        kt = p->r * p->s * p->c / gpuml__cw_bke(p);
        for (s = 1; s <= gpuml__conv_max_splits(p) && (s == 1 || kt / s >= 4); s++) {
            double t = gpuml__conv_sm90_model_k(ctx, p, i, s, fit16);
            if (t >= 0 && (best < 0 || t < best_t)) { best = i; best_s = s; best_t = t; }
        }
    }
    if (splits) *splits = best_s;
    if (model_us) *model_us = best_t;
    return best;
}
/* Runs p on the wgmma kernel with configuration cfg split `splits` ways (cfg -1: the chosen
   ones).  GPUML_ERROR_NOT_SUPPORTED, recording no error, where it does not take p. */
GPUML__FN gpuml_status gpuml__conv2d_sm90_cfg(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
#ifndef GPUML_NO_CUDA
    gpuml__conv_kparams kp;
    unsigned char mapbuf[2][128 + 64];
    unsigned char ymapbuf[2][128 + 64];
    void *map = mapbuf[0] + (64 - ((uintptr_t)mapbuf[0] & 63)) % 64, *xmap = mapbuf[1] + (64 - ((uintptr_t)mapbuf[1] & 63)) % 64, *args[5];
    void *ymap = ymapbuf[0] + (64 - ((uintptr_t)ymapbuf[0] & 63)) % 64, *rmap = ymapbuf[1] + (64 - ((uintptr_t)ymapbuf[1] & 63)) % 64;
    char opts[340], ropts[260];
    int f32 = p && p->x && p->x->dtype == GPUML_F32, es = f32 ? 4 : 2, bke = f32 ? 32 : 64, rn = f32 && p->tf32 == 2 ? gpuml__cw_rn() : 0;
    int tma_a, tma_y, tdt, gather_only = (cfg >= 0 && (cfg & GPUML__CW_GATHER)) != 0, im2col = cfg < 0 || (cfg & GPUML__CW_IM2COL) != 0;
    int no_tma_y = cfg >= 0 && (cfg & GPUML__CW_NO_TMA_Y) != 0, y_full = cfg >= 0 && (cfg & GPUML__CW_Y_FULL) != 0;
    const char *env = gpuml__getenv("GPUML_CW_TMA_Y");
    gpuml__CUfunction fn;
    unsigned grid[3], block[3];
    const gpuml__cw_cfg *c;
    int64_t kt, per, units, slots, M, Kg;
    if (!ctx || !p) return GPUML_ERROR_INVALID_ARGUMENT;
    if (cfg >= 0) cfg &= ~GPUML__CW_FLAGS;
    if (cfg < 0) cfg = gpuml__conv_sm90_choose(ctx, p, &splits, NULL);
    if (cfg < 0 || gpuml__conv_sm90_why(ctx, p, cfg)) return GPUML_ERROR_NOT_SUPPORTED;
    c = &gpuml__cw_cfgs[cfg];
    M = p->n * p->p * p->q;
    Kg = p->r * p->s * p->c;
    kt = Kg / bke;
    if (splits < 1) splits = 1;
    if (splits > gpuml__conv_max_splits(p) || splits > kt) return GPUML_ERROR_NOT_SUPPORTED;
    per = (kt + splits - 1) / splits;
    splits = (int)((kt + per - 1) / per);           /* no empty slice */
    GPUML__TRY(gpuml__enter(ctx));
    /* 1x1, stride 1, no padding: x is the GEMM's A [M][C]; TMA loads it (no gather) */
    tma_a = !gather_only && p->r == 1 && p->s == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_h == 0 && p->pad_w == 0 &&
            p->p == p->h && p->q == p->w;
    tdt = f32 ? 7 /* FLOAT32 */ : p->x->dtype == GPUML_F16 ? 6 : 9;
    memset(map, 0, 128);
    memset(xmap, 0, 128);
    if (!gpuml__tmap(ctx, map, tdt, gpuml__dptr(p->wt), Kg, p->k, Kg * es, (unsigned)bke, (unsigned)c->bn) ||
        (tma_a && !gpuml__tmap(ctx, xmap, tdt, gpuml__dptr(p->x), p->c, M, p->c * es, (unsigned)bke, (unsigned)c->bm)))
        return gpuml__fail(ctx, GPUML_ERROR_CUDA, "conv2d (wgmma): cuTensorMapEncodeTiled rejected the weights' or x's layout");
    /* any other window, when asked for (GPUML__CW_IM2COL): TMA im2col loads of x where the driver
       has them and the box corners fit the rank-4 encoding ([-128, 127]); the cp.async gather otherwise */
    if (im2col && !tma_a && !gather_only && (p->r - 1) * p->dil_h < 65536 && (p->s - 1) * p->dil_w < 65536 &&
        gpuml__tmap_im2col(ctx, xmap, tdt, gpuml__dptr(p->x), p->n, p->h, p->w, p->c, es, p->stride_h, p->stride_w, p->pad_h,
                           p->pad_w, p->p, p->q, (unsigned)bke, (unsigned)c->bm))
        tma_a = 2;
    /* 16-bit y in 16-byte rows, no split: the epilogue stages y's tile in shared memory and writes it
       by TMA store (bench/NOTES_conv_igemm.md, store-bound 1x1 layers); y's map also serves res.
       Configuration 3 stages one 64 x 64 box at a time and keeps its 4 stages (tma_y 2), up to 8
       k tiles (H100, ResNet-50 f16: level with the whole-tile variant up to 4 k tiles, 2-8% faster
       than the slab at 8 on two of three layers; 3-8% slower than the slab on three of five layers
       of 16-36 k tiles, so those keep the slab).  Staging the whole tile costs a stage
       (GPUML__CW_Y_FULL, or GPUML_CW_TMA_Y=full: the previous rule, up to 4 k tiles) */
    if (env && strcmp(env, "full") == 0) y_full = 1;
    tma_y = splits == 1 && !no_tma_y && !(env && strcmp(env, "0") == 0) && (p->y->dtype == GPUML_F16 || p->y->dtype == GPUML_BF16) && !p->y_nchw &&
            p->k % 8 == 0 && (gpuml__dptr(p->y) & 15) == 0 && (!p->residual || (gpuml__dptr(p->residual) & 15) == 0) &&
            (cfg != 3 || kt <= (y_full ? 4 : 8));
    if (tma_y && cfg == 3 && !y_full) tma_y = 2;
    if (tma_y && ctx->smem_optin < (int)gpuml__cw_smem(cfg, tma_y, p->bias != NULL)) tma_y = 0;
    memset(ymap, 0, 128);
    memset(rmap, 0, 128);
    if (tma_y) {
        int ydt = p->y->dtype == GPUML_F16 ? 6 : 9;
        tma_y = gpuml__tmap(ctx, ymap, ydt, gpuml__dptr(p->y), p->k, M, p->k * 2, 64, 64) &&
                (!p->residual || gpuml__tmap(ctx, rmap, ydt, gpuml__dptr(p->residual), p->k, M, p->k * 2, 64, 64));
    }
    if (splits > 1)
        snprintf(opts, sizeof opts, "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=%d -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=%d -DGPUML_CW_TMA_A=%d",
                 (int)p->x->dtype, cfg, tma_a);
    else
        snprintf(opts, sizeof opts, "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=%d -DGPUML_CONV_YDT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d -DGPUML_HAS_RESID=%d -DGPUML_CW_CFG=%d -DGPUML_CW_TMA_A=%d%s",
                 (int)p->x->dtype, (int)p->y->dtype, p->act, p->bias != NULL, p->residual != NULL, cfg, tma_a, tma_y == 2 ? " -DGPUML_CW_TMA_Y=2" : tma_y ? " -DGPUML_CW_TMA_Y=1" : "");
    if (f32) {   /* f32 (tf32): y's layout (not for split-K's partial sums), per-run sums */
        size_t lo = strlen(opts);
        snprintf(opts + lo, sizeof opts - lo, " -DGPUML_CONV_YNCHW=%d -DGPUML_CW_RN=%d", splits == 1 && p->y_nchw, rn);
    }
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_sm90, opts, "gpuml_conv_sm90", &fn));
    gpuml__conv_kparams_fill(&kp, p, splits);
    units = ((M + c->bm - 1) / c->bm) * ((p->k + c->bn - 1) / c->bn) * splits;
    slots = (int64_t)GPUML__MAX(ctx->sm_count, 1) * c->per_sm;
    if (gpuml__cw_grid_cap > 0) slots = GPUML__MIN(slots, gpuml__cw_grid_cap);
    grid[0] = (unsigned)GPUML__MIN(units, slots);
    grid[1] = grid[2] = 1;
    block[0] = (unsigned)(128 + 2 * c->bm); block[1] = block[2] = 1;
    args[0] = map; args[1] = xmap; args[2] = &kp; args[3] = ymap; args[4] = rmap;
    if (splits == 1) return gpuml__launch(ctx, fn, grid, block, gpuml__cw_smem(cfg, tma_y, p->bias != NULL), args, "conv2d (wgmma implicit GEMM)");
    /* split-K: f32 partial sums, then conv_igemm's reduce applies the epilogue */
    snprintf(ropts, sizeof ropts, "-DGPUML_CONV_DT=%d -DGPUML_CONV_YDT=%d -DGPUML_EPI=%d -DGPUML_HAS_BIAS=%d -DGPUML_HAS_RESID=%d -DGPUML_CONV_CFG=1",
             (int)p->x->dtype, (int)p->y->dtype, p->act, p->bias != NULL, p->residual != NULL);
    if (f32) {
        size_t lo = strlen(ropts);
        snprintf(ropts + lo, sizeof ropts - lo, " -DGPUML_CONV_TF32=1 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=%d", p->y_nchw != 0);
    }
    return gpuml__conv_splitk_run(ctx, p, &kp, fn, grid, block, gpuml__cw_smem(cfg, 0, 0), args, ropts, "conv2d (wgmma implicit GEMM, split-K)");
#else
    (void)ctx; (void)p; (void)cfg; (void)splits; (void)gpuml__cw_grid_cap;
    return GPUML_ERROR_NOT_SUPPORTED;
#endif
}
GPUML__FN gpuml_status gpuml__conv2d_sm90(gpuml_ctx *ctx, const gpuml__conv_problem *p)
{
    return gpuml__conv2d_sm90_cfg(ctx, p, -1, 0);
}


#ifndef GPUML__HAVE_CONV_IGEMM
GPUML__FN gpuml_status gpuml__conv2d_igemm(gpuml_ctx *ctx, const gpuml__conv_problem *p)
{ (void)ctx; (void)p; return GPUML_ERROR_NOT_SUPPORTED; }
#endif

/* Generic paths (kernels/conv.cu; CPU: im2col into the packed CPU GEMM).  Every tensor is
   addressed through logical strides -- activations as (n, h, w, c), weights as (k, r, s, c in
   group) -- so NHWC, NCHW and arbitrary views share one code path. */
static const gpuml__family gpuml__fam_conv = { "conv", gpuml__ksrc_conv, 50, 0, 0 };
static const gpuml__family gpuml__fam_conv_1x1w = { "conv_1x1w", gpuml__ksrc_conv_1x1w, 90, 1, 0 };

/* a validated conv (or pool) problem.  In the backward passes x/y are dx/dy (and w dw). */
typedef struct gpuml__cv {
    int64_t n, h, w, c, k, r, s, p, q, cg, kg, ncol;   /* ncol = r*s*cg, one im2col row */
    int sh, sw, pt, pb, pl, pr, dh, dw, groups, act, layout;
    int64_t xs[4], ws[4], ys[4], rs[4];                 /* logical strides (elements) */
    const gpuml_tensor *x, *wt, *y, *bias, *res;   /* wt: the weights */
    gpuml_dtype dt;
    int tf32;                                           /* desc.allow_tf32 */
    int max_splits;                                     /* gpuml__conv_problem's (0 for every user call) */
    int up2;                                            /* gpuml__cv_1x1w only: y (a view of stride-2 dx) written at
                                                           its pixels, zeros at the three neighbours of each */
} gpuml__cv;

GPUML__DEF int64_t gpuml_conv2d_out_dim(int64_t in, int64_t window, int stride, int pad_lo, int pad_hi, int dilation)
{
    int64_t span;
    if (stride <= 0 || dilation <= 0 || window <= 0) return 0;
    span = (int64_t)dilation * (window - 1) + 1;
    if (in + pad_lo + pad_hi < span) return 0;
    return (in + pad_lo + pad_hi - span) / stride + 1;
}

/* logical (outer, row, col, channel) dims and strides of a 4-D tensor in a layout: NHWC/KRSC
   as stored, NCHW/KCRS permuted (dims 0, 2, 3, 1) */
GPUML__FN void gpuml__cv_dims(const gpuml_tensor *t, int layout, int64_t *dims, int64_t *strides)
{
    static const int perm[2][4] = { { 0, 1, 2, 3 }, { 0, 2, 3, 1 } };
    int i;
    for (i = 0; i < 4; i++) {
        if (dims) dims[i] = t->shape[perm[layout][i]];
        if (strides) strides[i] = t->strides[perm[layout][i]];
    }
}
/* a stack view of t (no handle, no reference): the library's own temporaries and sub-views */
GPUML__FN gpuml_tensor gpuml__cv_view(const gpuml_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t off)
{
    gpuml_tensor v = *t;
    int i;
    v.ndim = ndim;
    for (i = 0; i < ndim; i++) { v.shape[i] = shape[i]; v.strides[i] = strides[i]; }
    v.offset = t->offset + off;
    return v;
}

/* kind: 0 forward (y written), 1 backward data (x written), 2 backward filter (w written) */
GPUML__FN gpuml_status gpuml__cv_setup(gpuml_ctx *ctx, const char *op, int kind, const gpuml_tensor *x, const gpuml_tensor *w,
                                       const gpuml_tensor *y, const gpuml_conv2d_desc *desc, gpuml__cv *cv)
{
    static const char *const names[3][3] = { { "x", "w", "y" }, { "dx", "w", "dy" }, { "x", "dw", "dy" } };
    const gpuml_tensor *t[3], *out;
    gpuml_conv2d_desc d;
    int64_t xd[4], wd[4], yd[4];
    char s1[200], s2[200], s3[200];
    int i;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    memset(cv, 0, sizeof *cv);
    t[0] = x; t[1] = w; t[2] = y;
    for (i = 0; i < 3; i++) GPUML__TRY(gpuml__check_tensor(ctx, t[i], op, names[kind][i]));
    out = kind == 0 ? y : kind == 1 ? x : w;
    GPUML__TRY(gpuml__check_output(ctx, out, op));
    if ((unsigned)d.layout > GPUML_LAYOUT_NCHW) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: unknown layout %d", op, (int)d.layout);
    if ((unsigned)d.path > GPUML_CONV_WGMMA) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: unknown path %d", op, (int)d.path);
    if ((unsigned)d.act > GPUML_ACT_SILU) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: unknown activation %d", op, (int)d.act);
    for (i = 0; i < 2; i++)
        if (d.stride[i] < 0 || d.dilation[i] < 0)
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: stride {%d,%d} and dilation {%d,%d} must be positive (0 = 1)", op,
                               d.stride[0], d.stride[1], d.dilation[0], d.dilation[1]);
    for (i = 0; i < 4; i++)
        if (d.pad[i] < 0) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: padding {%d,%d,%d,%d} must not be negative", op,
                                             d.pad[0], d.pad[1], d.pad[2], d.pad[3]);
    if (d.groups < 0) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: groups = %d", op, d.groups);
    if (kind != 0 && (d.bias || d.act || d.residual))
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: bias, act and residual belong to the forward pass (take the "
                           "activation's gradient with gpuml_activation_backward, the bias's with gpuml_reduce)", op);
    if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s %s, %s %s and %s %s must all be 4-D (%s)", op, names[kind][0],
                           gpuml__shape_str(x, s1, sizeof s1), names[kind][1], gpuml__shape_str(w, s2, sizeof s2), names[kind][2],
                           gpuml__shape_str(y, s3, sizeof s3), d.layout == GPUML_LAYOUT_NCHW ? "NCHW, KCRS" : "NHWC, KRSC");
    for (i = 0; i < 3; i++) {
        GPUML__TRY(gpuml__need_float(ctx, t[i], op, names[kind][i]));
        if (t[i]->dtype != x->dtype)
            return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: %s is %s but %s is %s (they must match)", op, names[kind][i],
                               gpuml__dtype_names[t[i]->dtype], names[kind][0], gpuml__dtype_names[x->dtype]);
    }
    cv->layout = (int)d.layout;
    gpuml__cv_dims(x, cv->layout, xd, cv->xs);
    gpuml__cv_dims(w, cv->layout, wd, cv->ws);
    gpuml__cv_dims(y, cv->layout, yd, cv->ys);
    cv->n = xd[0]; cv->h = xd[1]; cv->w = xd[2]; cv->c = xd[3];
    cv->k = wd[0]; cv->r = wd[1]; cv->s = wd[2];
    cv->groups = d.groups ? d.groups : 1;
    cv->sh = d.stride[0] ? d.stride[0] : 1; cv->sw = d.stride[1] ? d.stride[1] : 1;
    cv->dh = d.dilation[0] ? d.dilation[0] : 1; cv->dw = d.dilation[1] ? d.dilation[1] : 1;
    cv->pt = d.pad[0]; cv->pb = d.pad[1]; cv->pl = d.pad[2]; cv->pr = d.pad[3];
    cv->act = (int)d.act;
    cv->tf32 = d.allow_tf32 != 0;
    cv->dt = x->dtype;
    if (cv->c % cv->groups || cv->k % cv->groups)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: channels (C = %lld in, K = %lld out) must be divisible by groups = %d", op,
                           (long long)cv->c, (long long)cv->k, cv->groups);
    cv->cg = cv->c / cv->groups; cv->kg = cv->k / cv->groups;
    if (wd[3] != cv->cg)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s %s has %lld input channels per group but %s %s with groups = %d needs %lld (%s)",
                           op, names[kind][1], gpuml__shape_str(w, s1, sizeof s1), (long long)wd[3], names[kind][0],
                           gpuml__shape_str(x, s2, sizeof s2), cv->groups, (long long)cv->cg,
                           d.layout == GPUML_LAYOUT_NCHW ? "weights are KCRS" : "weights are KRSC");
    cv->p = gpuml_conv2d_out_dim(cv->h, cv->r, cv->sh, cv->pt, cv->pb, cv->dh);
    cv->q = gpuml_conv2d_out_dim(cv->w, cv->s, cv->sw, cv->pl, cv->pr, cv->dw);
    if (cv->p <= 0 || cv->q <= 0)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: the output would be empty: input %lldx%lld, window %lldx%lld, padding {%d,%d,%d,%d}, "
                           "dilation {%d,%d}, stride {%d,%d}", op, (long long)cv->h, (long long)cv->w, (long long)cv->r, (long long)cv->s,
                           cv->pt, cv->pb, cv->pl, cv->pr, cv->dh, cv->dw, cv->sh, cv->sw);
    if (yd[0] != cv->n || yd[1] != cv->p || yd[2] != cv->q || yd[3] != cv->k)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but %s %s and %s %s give %s [%lld,%lld,%lld,%lld] (%s)", op, names[kind][2],
                           gpuml__shape_str(y, s1, sizeof s1), names[kind][0], gpuml__shape_str(x, s2, sizeof s2), names[kind][1],
                           gpuml__shape_str(w, s3, sizeof s3), d.layout == GPUML_LAYOUT_NCHW ? "NCHW" : "NHWC",
                           (long long)cv->n, (long long)(d.layout ? cv->k : cv->p), (long long)(d.layout ? cv->p : cv->q),
                           (long long)(d.layout ? cv->q : cv->k), d.layout == GPUML_LAYOUT_NCHW ? "n,k,p,q" : "n,p,q,k");
    cv->ncol = cv->r * cv->s * cv->cg;
    if (cv->n * cv->h * cv->w * cv->c > INT32_MAX || cv->n * cv->p * cv->q * cv->k > INT32_MAX || cv->ncol * cv->k > INT32_MAX ||
        cv->n * cv->p * cv->q > INT32_MAX)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: tensors of 2^31 or more elements are not supported", op);
    if (d.bias) {
        GPUML__TRY(gpuml__check_tensor(ctx, d.bias, op, "desc.bias"));
        if (d.bias->ndim != 1 || d.bias->shape[0] != cv->k || d.bias->dtype != GPUML_F32)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: bias must be f32 [%lld], not %s %s", op, (long long)cv->k,
                               gpuml__dtype_names[d.bias->dtype], gpuml__shape_str(d.bias, s1, sizeof s1));
        if (d.bias->strides[0] != 1 && d.bias->shape[0] > 1)
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: bias must be contiguous (see gpuml_tensor_contiguous)", op);
        if (gpuml__overlap(y, d.bias)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: y overlaps the bias", op);
    }
    if (d.residual) {
        GPUML__TRY(gpuml__check_tensor(ctx, d.residual, op, "desc.residual"));
        GPUML__TRY(gpuml__need_same_shape(ctx, d.residual, y, op, "residual", "y"));
        if (d.residual->dtype != y->dtype)
            return gpuml__fail(ctx, GPUML_ERROR_DTYPE, "%s: residual is %s but y is %s", op, gpuml__dtype_names[d.residual->dtype],
                               gpuml__dtype_names[y->dtype]);
        GPUML__TRY(gpuml__check_alias(ctx, y, d.residual, op, "y", "the residual"));
        gpuml__cv_dims(d.residual, cv->layout, NULL, cv->rs);
    }
    for (i = 0; i < 3; i++)
        if (t[i] != out && gpuml__overlap(out, t[i]))
            return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: %s overlaps %s", op, names[kind][kind == 0 ? 2 : kind == 1 ? 0 : 1], names[kind][i]);
    cv->x = x; cv->wt = w; cv->y = y; cv->bias = d.bias; cv->res = d.residual;
    return GPUML_SUCCESS;
}

/* ---- CPU ---- */
/* the CPU jobs share one argument: the problem, f32 buffers and the current chunk */
typedef struct gpuml__cv_cpu {
    const gpuml__cv *cv;
    float *col, *t, *wp;      /* im2col rows, GEMM result rows, packed weights [K][ncol] (r, s, c order) */
    int64_t *c2i;             /* backward data's col2im tap lists: rows (H x (R + 1)), then columns (W x (S + 1)) */
    int64_t m0, n0, g;        /* first row (n, p, q) or first image of the chunk; group */
    int64_t bp0, bp1, hs, he, hprev;   /* col2im's scatter: the chunk's output rows [bp0, bp1) of each image, the dx
                                          rows [hs, he) it touches, the first row no earlier chunk of the image did */
    int64_t ldt;              /* row stride of t: element (m, kk) at t[m * ldt + kk] */
    int pool_max, count_pad;  /* pooling */
    int *arg;                 /* pooling backward (max): the forward's choice, [n][p][q][c] */
} gpuml__cv_cpu;

GPUML__FN float gpuml__cv_ld(gpuml_dtype dt, const gpuml_tensor *t, int64_t off)
{
    return gpuml__ld_f32(dt, (const char *)gpuml_tensor_data(t) + off * (int64_t)gpuml__dtype_sizes[dt]);
}
GPUML__FN void gpuml__cv_st(gpuml_dtype dt, const gpuml_tensor *t, int64_t off, float v)
{
    gpuml__st_f32(dt, (char *)gpuml_tensor_data(t) + off * (int64_t)gpuml__dtype_sizes[dt], v);
}
/* the input pixel of window tap (r, s) for output (p, q), or -1 where it reads padding */
GPUML__FN int64_t gpuml__cv_tap(const gpuml__cv *cv, int64_t n, int64_t p, int64_t q, int64_t r, int64_t s)
{
    int64_t h = p * cv->sh - cv->pt + r * cv->dh, w = q * cv->sw - cv->pl + s * cv->dw;
    if (h < 0 || h >= cv->h || w < 0 || w >= cv->w) return -1;
    return n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2];
}
/* im2col rows [b, e) of the chunk: col[m][(r*S + s)*cg + c] */
GPUML__FN void gpuml__cv_im2col_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    int64_t m, r, s, c0 = j->g * cv->cg;
    (void)tid;
    for (m = b; m < e; m++) {
        int64_t gm = j->m0 + m, q = gm % cv->q, p = (gm / cv->q) % cv->p, n = gm / (cv->q * cv->p);
        float *row = j->col + m * cv->ncol;
        for (r = 0; r < cv->r; r++) {
            /* the window row's S taps in one run where they are one run of x: groups 1, no horizontal
               dilation, pixels cg elements apart, every tap inside the row (the stem: 7 runs of 21 floats
               a pixel instead of 49 of 3) */
            if (cv->groups == 1 && cv->dw == 1 && cv->s > 1 && cv->xs[2] == cv->cg * cv->xs[3]) {
                const int64_t hi = p * cv->sh - cv->pt + r * cv->dh, wi = q * cv->sw - cv->pl;
                if (hi >= 0 && hi < cv->h && wi >= 0 && wi + cv->s <= cv->w) {
                    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], off = n * cv->xs[0] + hi * cv->xs[1] + wi * cv->xs[2];
                    float *o = row + r * cv->s * cv->cg;
                    const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->x) + off * es, cv->xs[3] * es, cv->s * cv->cg, o);
                    if (v != o) memcpy(o, v, sizeof(float) * (size_t)(cv->s * cv->cg));
                    continue;
                }
            }
            for (s = 0; s < cv->s; s++) {
                int64_t off = gpuml__cv_tap(cv, n, p, q, r, s);
                float *o = row + (r * cv->s + s) * cv->cg;
                if (off < 0) { memset(o, 0, sizeof(float) * (size_t)cv->cg); continue; }
                off += c0 * cv->xs[3];
                {   /* the channel run through the vector conversions (f32 with unit stride: read in place) */
                    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
                    const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->x) + off * es, cv->xs[3] * es, cv->cg, o);
                    if (v != o) memcpy(o, v, sizeof(float) * (size_t)cv->cg);
                }
            }
        }
    }
}
/* forward epilogue of rows [b, e): y = residual + act(t + bias) for the group's channels */
GPUML__FN void gpuml__cv_epi_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const float *bias = cv->bias ? (const float *)gpuml_tensor_data(cv->bias) : NULL;
    int64_t m, kk;
    (void)tid;
    for (m = b; m < e; m++) {
        int64_t gm = j->m0 + m, q = gm % cv->q, p = (gm / cv->q) % cv->p, n = gm / (cv->q * cv->p);
        int64_t yo = n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2], ro = n * cv->rs[0] + p * cv->rs[1] + q * cv->rs[2];
        if (cv->dt == GPUML_F32) {   /* f32: from t, or in place on y (the GEMM wrote it) */
            float *y = (float *)gpuml_tensor_data(cv->y) + yo + j->g * cv->kg * cv->ys[3];
            const float *r = cv->res ? (const float *)gpuml_tensor_data(cv->res) + ro + j->g * cv->kg * cv->rs[3] : NULL;
            const float *bb = bias ? bias + j->g * cv->kg : NULL, *t = j->t ? j->t + m * j->ldt : NULL;
            if (cv->ys[3] == 1 && (!r || cv->rs[3] == 1)) {   /* channels contiguous: loop by loop (one act
                                                                 call an element halved a 1x1 layer's rate) */
                gpuml__epi_run(y, t ? t : y, bb, 1, cv->act, r, cv->kg);
                continue;
            }
            for (kk = 0; kk < cv->kg; kk++) {
                float v = t ? t[kk] : y[kk * cv->ys[3]];
                if (bb) v += bb[kk];
                v = gpuml__act_f32(cv->act, v);
                if (r) v += r[kk * cv->rs[3]];
                y[kk * cv->ys[3]] = v;
            }
            continue;
        }
        {   /* 16-bit y: a row's values through gpuml__cpu_ld / gpuml__cpu_st (vector conversions where the
               channels are contiguous; one conversion call an element was ~25% of an f16 3x3 layer) */
            const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
            char *yb = (char *)gpuml_tensor_data(cv->y);
            const char *rb = cv->res ? (const char *)gpuml_tensor_data(cv->res) : NULL;
            float vb[GPUML__TILE], rbuf[GPUML__TILE];
            int64_t k0;
            for (k0 = 0; k0 < cv->kg; k0 += GPUML__TILE) {
                const int64_t kn = GPUML__MIN((int64_t)GPUML__TILE, cv->kg - k0), k = j->g * cv->kg + k0;
                const float *v = j->t ? j->t + m * j->ldt + k0 : gpuml__cpu_ld(cv->dt, yb + (yo + k * cv->ys[3]) * es, cv->ys[3] * es, kn, vb);
                const float *rr = rb ? gpuml__cpu_ld(cv->dt, rb + (ro + k * cv->rs[3]) * es, cv->rs[3] * es, kn, rbuf) : NULL;
                gpuml__epi_run(vb, v, bias ? bias + k : NULL, 1, cv->act, rr, kn);
                gpuml__cpu_st(cv->dt, yb + (yo + k * cv->ys[3]) * es, cv->ys[3] * es, kn, vb);
            }
        }
    }
}
/* forward for one input channel per group (depthwise and the like), output rows (n, p) [b, e) */
GPUML__FN void gpuml__cv_direct_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const float *bias = cv->bias ? (const float *)gpuml_tensor_data(cv->bias) : NULL;
    int64_t np, q, k, r, s;
    (void)tid;
    for (np = b; np < e; np++) {
        int64_t n = np / cv->p, p = np % cv->p;
        for (q = 0; q < cv->q; q++)
            for (k = 0; k < cv->k; k++) {
                int64_t cx = (k / cv->kg) * cv->xs[3];
                const float *wk = j->wp + k * cv->ncol;
                float v = 0.0f;
                for (r = 0; r < cv->r; r++)
                    for (s = 0; s < cv->s; s++) {
                        int64_t off = gpuml__cv_tap(cv, n, p, q, r, s);
                        if (off >= 0) v += gpuml__cv_ld(cv->dt, cv->x, off + cx) * wk[r * cv->s + s];
                    }
                if (bias) v += bias[k];
                v = gpuml__act_f32(cv->act, v);
                if (cv->res) v += gpuml__cv_ld(cv->dt, cv->res, n * cv->rs[0] + p * cv->rs[1] + q * cv->rs[2] + k * cv->rs[3]);
                gpuml__cv_st(cv->dt, cv->y, n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] + k * cv->ys[3], v);
            }
    }
}
#if GPUML__HAVE_AVX2_PATH
/* r[i][j] <- r[j][i], 16 x 16 floats */
GPUML__AVX512_TARGET GPUML__FN void gpuml__tr16_avx512(__m512 *r)
{
    /* (the masked forms: gcc 12's C++ front end calls the plain ones' undefined source uninitialized) */
    __m512 t[16], v[4], w[4];
    int i, m;
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_mask_unpacklo_ps(r[2 * i], 0xFFFF, r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_mask_unpackhi_ps(r[2 * i], 0xFFFF, r[2 * i], r[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) {   /* r[4g + m], lane k: column 4k + m of rows 4g .. 4g + 3 */
        r[4 * i] = _mm512_mask_shuffle_ps(t[4 * i], 0xFFFF, t[4 * i], t[4 * i + 2], 0x44); r[4 * i + 1] = _mm512_mask_shuffle_ps(t[4 * i], 0xFFFF, t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm512_mask_shuffle_ps(t[4 * i + 1], 0xFFFF, t[4 * i + 1], t[4 * i + 3], 0x44); r[4 * i + 3] = _mm512_mask_shuffle_ps(t[4 * i + 1], 0xFFFF, t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (m = 0; m < 4; m++) {
        v[0] = _mm512_mask_shuffle_f32x4(r[m], 0xFFFF, r[m], r[4 + m], 0x88); v[1] = _mm512_mask_shuffle_f32x4(r[m], 0xFFFF, r[m], r[4 + m], 0xDD);
        w[0] = _mm512_mask_shuffle_f32x4(r[8 + m], 0xFFFF, r[8 + m], r[12 + m], 0x88); w[1] = _mm512_mask_shuffle_f32x4(r[8 + m], 0xFFFF, r[8 + m], r[12 + m], 0xDD);
        t[m] = _mm512_mask_shuffle_f32x4(v[0], 0xFFFF, v[0], w[0], 0x88); t[4 + m] = _mm512_mask_shuffle_f32x4(v[1], 0xFFFF, v[1], w[1], 0x88);
        t[8 + m] = _mm512_mask_shuffle_f32x4(v[0], 0xFFFF, v[0], w[0], 0xDD); t[12 + m] = _mm512_mask_shuffle_f32x4(v[1], 0xFFFF, v[1], w[1], 0xDD);
    }
    for (i = 0; i < 16; i++) r[i] = t[i];
}
/* f32 planes (pixels contiguous, channel c at src + c * cst) <-> f32 [W][C], 16 x 16 blocks at a time:
   to_cl 1: buf[w][c] = src[c][w]; 0: src[c][w] = buf[w][c] */
GPUML__AVX512_TARGET GPUML__FN void gpuml__cl_tr_avx512(float *pl, int64_t cst, int64_t W, int64_t C, float *buf, int to_cl)
{
    int64_t c0, w0;
    int i;
    for (c0 = 0; c0 < C; c0 += 16) {
        const int nc = (int)GPUML__MIN(C - c0, (int64_t)16);
        const __mmask16 mc = (__mmask16)((1u << nc) - 1u);
        for (w0 = 0; w0 < W; w0 += 16) {
            const int nw = (int)GPUML__MIN(W - w0, (int64_t)16);
            const __mmask16 mw = (__mmask16)((1u << nw) - 1u);
            __m512 r[16];
            if (to_cl) {
                for (i = 0; i < 16; i++) r[i] = i < nc ? _mm512_maskz_loadu_ps(mw, pl + (c0 + i) * cst + w0) : _mm512_setzero_ps();
                gpuml__tr16_avx512(r);
                for (i = 0; i < nw; i++) _mm512_mask_storeu_ps(buf + (w0 + i) * C + c0, mc, r[i]);
            } else {
                for (i = 0; i < 16; i++) r[i] = i < nw ? _mm512_maskz_loadu_ps(mc, buf + (w0 + i) * C + c0) : _mm512_setzero_ps();
                gpuml__tr16_avx512(r);
                for (i = 0; i < nc; i++) _mm512_mask_storeu_ps(pl + (c0 + i) * cst + w0, mw, r[i]);
            }
        }
    }
}
#endif
/* Layouts whose channels are not contiguous (NCHW): a row (n, h) of W pixels of t (dims n, h, w, c at
   strides st) converted to f32 [W][C] and back, a channel's plane row at a time (gpuml__cpu_ld /
   gpuml__cpu_st along the row, a transposing copy into / out of buf; tw: W floats) -- the CPU pooling
   and depthwise passes */
GPUML__FN void gpuml__pool_row_ld(const gpuml__cv *cv, const gpuml_tensor *t, const int64_t *st, int64_t W, int64_t n, int64_t h, float *buf,
                                  float *tw)
{
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], C = cv->c;
    const char *base = (const char *)gpuml_tensor_data(t) + (n * st[0] + h * st[1]) * es;
    int64_t c, w;
#if GPUML__HAVE_AVX2_PATH
    if (cv->dt == GPUML_F32 && st[2] == 1 && gpuml__cpu_simd() >= 2) { gpuml__cl_tr_avx512((float *)(void *)base, st[3], W, C, buf, 1); return; }
#endif
    for (c = 0; c < C; c++) {
        const float *v = gpuml__cpu_ld(cv->dt, base + c * st[3] * es, st[2] * es, W, tw);
        for (w = 0; w < W; w++) buf[w * C + c] = v[w];
    }
}
GPUML__FN void gpuml__pool_row_st(const gpuml__cv *cv, const gpuml_tensor *t, const int64_t *st, int64_t W, int64_t n, int64_t h, const float *buf,
                                  float *tw)
{
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], C = cv->c;
    char *base = (char *)gpuml_tensor_data(t) + (n * st[0] + h * st[1]) * es;
    int64_t c, w;
#if GPUML__HAVE_AVX2_PATH
    if (cv->dt == GPUML_F32 && st[2] == 1 && gpuml__cpu_simd() >= 2) { gpuml__cl_tr_avx512((float *)(void *)base, st[3], W, C, (float *)buf, 0); return; }
#endif
    for (c = 0; c < C; c++) {
        for (w = 0; w < W; w++) tw[w] = buf[w * C + c];
        gpuml__cpu_st(cv->dt, base + c * st[3] * es, st[2] * es, W, tw);
    }
}
/* Depthwise (one input channel a group, multiplier 1) on the CPU, vectorized over the channels: the
   direct loops below cost a tap check and two dtype-dispatched loads an element (0.25 GB/s on
   MobileNet's 3x3 layers).  The weights go to f32 [R*S][C] once a call; each output row (n, p) reads
   its R input rows as f32 [W][C] -- in place where x is f32 with channels contiguous and pixels C
   apart, else converted into a per-thread buffer -- and each output pixel sums its taps a block of
   channels at a time (four accumulators: the FMA chains overlap), in (r, s) order.  The row goes to y
   in place (f32, channels contiguous) or through gpuml__cv_epi_rows, which also applies the epilogue. */
/* Depthwise in planes (multiplier 1; layouts whose channels are not contiguous: NCHW).  The channel-
   vector loops below would transpose every row to channels-last and back (scalar copies: 2-5 GB/s,
   0.05-0.37 of memcpy); here the pixels of a plane row are the vector lanes.  A plane's rows go
   through a per-thread ring of padded f32 rows (each input row converted once a band of output rows):
     forward and backward filter: x's row with the left padding in front and zeros after it, split
       into sw phases (phase f holds padded pixels f, f + sw, ...), so that tap s of output q reads
       phase (s*dw) % sw at q + (s*dw) / sw: unit-stride loads at any stride;
     backward data: dy's row zero-stuffed (dy[q] at A + q*sw, A = (S-1)*dw), so that dx[w] is the
       sum of w[r][s] * row_r[w + pl + A - s*dw]: the forward's sum with other offsets.
   Rows outside the input point at a zero row.  Four output rows go through the kernel together (four
   FMA chains), each output's taps summed in (r, s) order.  The backward filter sums a plane's products
   in vector lanes, one partial [R*S] a plane, then the partials over the batch in order (the same
   result on any thread count). */
static int gpuml__cv_cpu_dw_rows_nchw;
static int gpuml__cv_cpu_dw_flat;   /* tests: 1 takes whole planes up to 16384 floats, -1 never */
static int gpuml__cv_cpu_dw_sub;    /* tests: -1 keeps strided backward data on the zero-stuffed dy (no phase split), 1 splits any plane */
#ifndef GPUML__DWP_FLAT_N
#define GPUML__DWP_FLAT_N 8192   /* whole planes up to 32 KB (ResNet / MobileNet planes of 56 and less; 112: the ring) */
#endif   /* tests: 1 keeps NCHW depthwise on the channel-vector loops (transposed rows); -1: in planes at any width */
/* v[i] /= d[i], i < n */
GPUML__FN void gpuml__vdiv(float *v, const float *d, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) v[i] /= d[i];
}
GPUML__FN float gpuml__pool_count(const gpuml__cv *cv, int64_t h0, int64_t w0, int count_pad);
typedef struct gpuml__dwp {
    const gpuml__cv *cv;
    const float *wk;      /* f32 [C][R*S] */
    float *buf;           /* per thread: ring (ns rows of L), a zero row (L), 4 output rows (Qr each), a pad row (sw*L) */
    int64_t *tags;        /* per thread: ns ring tags */
    float *part;          /* backward filter: [N*C][R*S] */
    int64_t per, L, Ls, ns, nb, Qr;   /* L: floats a phase (kind 1: a row); Ls: a ring row (L * sw); Qr: output row rounded to 16 */
    int64_t off[64];
    int kind;             /* 0 forward, 1 backward data, 2 backward filter */
    /* whole planes (small ones): the source plane padded (kind 0 / 2: split into sh * sw phase planes
       of Hp x Wp; kind 1: dy zero-stuffed, Hp x Wp), the output computed at pitch Wp */
    int flat;
    int64_t Hp, Wp, chunk, xn;   /* chunk: the flat output's quarter (a multiple of 16); xn: the plane buffer's floats */
    /* pooling (forward): 1 max (the padding -inf, the taps' max as the channel loops take it), 2 average
       (the taps summed with weights 1, divided by div[p * Q + q]); wcs: floats between channels' weights
       (0: every channel the same) */
    int pool;
    const float *div;
    int64_t wcs;
    /* backward data at stride 2 (flat == 2): dx in sh * sw phase planes, each the sum of its own taps
       only (ntap[f] of them, offsets poff[f], weights pw[f] [C][ntap]) over dy padded by Ah rows and Aw
       columns (Hd x Wd); phase f's flat output at F + f * fsz */
    int nph, ntap[4];
    int64_t Hd, Wd, Ah, Aw, fsz, pchunk[4], poff[4][64];
    const float *pw[4];
    /* max pooling backward (gpuml__dwp_maxb_planes): cv's x is the forward's input, its y dy; dx here */
    const gpuml_tensor *dx;
    const int64_t *dxs;
    int tr[64], ts[64];   /* tap t's (r, s) */
    /* whole planes: the source tensor's data, and f32 rows copied a plane a call (stride 2: split by a
       vector permute) -- once a call (a plane's own work is a few hundred cycles) */
    const char *ib;
    int fast_in;
} gpuml__dwp;
#if GPUML__HAVE_AVX2_PATH
/* o[i][q] = sum over r < R, s < S of wk[r*S + s] * rows[i*R + r][q + off[s]], q < Q, i < 4 */
GPUML__AVX512_TARGET GPUML__FN void gpuml__dwp_rows_avx512(float *const *o, const float *const *rows, const float *wk, int64_t R, int64_t S,
                                                           const int64_t *off, int64_t Q)
{
    int64_t q0, r, s;
    for (q0 = 0; q0 < Q; q0 += 16) {
        const __mmask16 m = Q - q0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (Q - q0)) - 1u);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (r = 0; r < R; r++) {
            const float *x0 = rows[r] + q0, *x1 = rows[R + r] + q0, *x2 = rows[2 * R + r] + q0, *x3 = rows[3 * R + r] + q0;
            for (s = 0; s < S; s++) {
                const __m512 w = _mm512_set1_ps(wk[r * S + s]);
                const int64_t f = off[s];
                a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + f), w, a0);
                a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x1 + f), w, a1);
                a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x2 + f), w, a2);
                a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x3 + f), w, a3);
            }
        }
        _mm512_mask_storeu_ps(o[0] + q0, m, a0); _mm512_mask_storeu_ps(o[1] + q0, m, a1);
        _mm512_mask_storeu_ps(o[2] + q0, m, a2); _mm512_mask_storeu_ps(o[3] + q0, m, a3);
    }
}
GPUML__AVX2_TARGET GPUML__FN void gpuml__dwp_rows_avx2(float *const *o, const float *const *rows, const float *wk, int64_t R, int64_t S,
                                                       const int64_t *off, int64_t Q)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t q0, r, s;
    for (q0 = 0; q0 < Q; q0 += 8) {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)GPUML__MIN(Q - q0, (int64_t)8)), idx);
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (r = 0; r < R; r++) {
            const float *x0 = rows[r] + q0, *x1 = rows[R + r] + q0, *x2 = rows[2 * R + r] + q0, *x3 = rows[3 * R + r] + q0;
            for (s = 0; s < S; s++) {
                const __m256 w = _mm256_set1_ps(wk[r * S + s]);
                const int64_t f = off[s];
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x0 + f), w, a0);
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x1 + f), w, a1);
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x2 + f), w, a2);
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x3 + f), w, a3);
            }
        }
        _mm256_maskstore_ps(o[0] + q0, m, a0); _mm256_maskstore_ps(o[1] + q0, m, a1);
        _mm256_maskstore_ps(o[2] + q0, m, a2); _mm256_maskstore_ps(o[3] + q0, m, a3);
    }
}
/* acc[s][lane] += dy[q] * x[q + off[s]] over q < Qr (lanes: q mod 16), s < S */
GPUML__AVX512_TARGET GPUML__FN void gpuml__dwp_bwf_avx512(float *acc, const float *dy, const float *x, const int64_t *off, int64_t S, int64_t Qr)
{
    int64_t q0, s;
    for (s = 0; s < S; s++) {
        const float *xs = x + off[s];
        __m512 a = _mm512_loadu_ps(acc + 16 * s), b = _mm512_setzero_ps();
        for (q0 = 0; q0 + 32 <= Qr; q0 += 32) {
            a = _mm512_fmadd_ps(_mm512_loadu_ps(dy + q0), _mm512_loadu_ps(xs + q0), a);
            b = _mm512_fmadd_ps(_mm512_loadu_ps(dy + q0 + 16), _mm512_loadu_ps(xs + q0 + 16), b);
        }
        if (q0 < Qr) a = _mm512_fmadd_ps(_mm512_loadu_ps(dy + q0), _mm512_loadu_ps(xs + q0), a);
        _mm512_storeu_ps(acc + 16 * s, _mm512_add_ps(a, b));
    }
}
GPUML__AVX2_TARGET GPUML__FN void gpuml__dwp_bwf_avx2(float *acc, const float *dy, const float *x, const int64_t *off, int64_t S, int64_t Qr)
{
    int64_t q0, s;
    for (s = 0; s < S; s++) {
        const float *xs = x + off[s];
        __m256 a = _mm256_loadu_ps(acc + 16 * s), b = _mm256_loadu_ps(acc + 16 * s + 8);
        for (q0 = 0; q0 < Qr; q0 += 16) {
            a = _mm256_fmadd_ps(_mm256_loadu_ps(dy + q0), _mm256_loadu_ps(xs + q0), a);
            b = _mm256_fmadd_ps(_mm256_loadu_ps(dy + q0 + 8), _mm256_loadu_ps(xs + q0 + 8), b);
        }
        _mm256_storeu_ps(acc + 16 * s, a); _mm256_storeu_ps(acc + 16 * s + 8, b);
    }
}
#endif
GPUML__FN void gpuml__dwp_rows(float *const *o, const float *const *rows, const float *wk, int64_t R, int64_t S, const int64_t *off, int64_t Q)
{
    int64_t i, q, r, s;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__dwp_rows_avx512(o, rows, wk, R, S, off, Q); return; }
    if (gpuml__cpu_simd() >= 1) { gpuml__dwp_rows_avx2(o, rows, wk, R, S, off, Q); return; }
#endif
    for (i = 0; i < 4; i++)
        for (q = 0; q < Q; q++) {
            float v = 0.0f;
            for (r = 0; r < R; r++)
                for (s = 0; s < S; s++) v += rows[i * R + r][q + off[s]] * wk[r * S + s];
            o[i][q] = v;
        }
}
/* pooling: o[i][q] = the max over r < R, s < S of rows[i*R + r][q + off[s]], taken as the channel loops
   take it (v replaces m where v > m or v is NaN), from -inf */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX512_TARGET GPUML__FN void gpuml__dwp_max_avx512(float *const *o, const float *const *rows, int64_t R, int64_t S, const int64_t *off, int64_t Q)
{
    int64_t q0, r, s;
    for (q0 = 0; q0 < Q; q0 += 16) {
        const __mmask16 m = Q - q0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (Q - q0)) - 1u);
        __m512 a[4];
        int i;
        for (i = 0; i < 4; i++) a[i] = _mm512_set1_ps(-INFINITY);
        for (r = 0; r < R; r++)
            for (s = 0; s < S; s++)
                for (i = 0; i < 4; i++) {
                    const __m512 x = _mm512_loadu_ps(rows[i * R + r] + q0 + off[s]);
                    const __mmask16 k = _mm512_cmp_ps_mask(x, a[i], _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
                    a[i] = _mm512_mask_mov_ps(a[i], k, x);
                }
        for (i = 0; i < 4; i++) _mm512_mask_storeu_ps(o[i] + q0, m, a[i]);
    }
}
GPUML__AVX2_TARGET GPUML__FN void gpuml__dwp_max_avx2(float *const *o, const float *const *rows, int64_t R, int64_t S, const int64_t *off, int64_t Q)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t q0, r, s;
    for (q0 = 0; q0 < Q; q0 += 8) {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)GPUML__MIN(Q - q0, (int64_t)8)), idx);
        __m256 a[4];
        int i;
        for (i = 0; i < 4; i++) a[i] = _mm256_set1_ps(-INFINITY);
        for (r = 0; r < R; r++)
            for (s = 0; s < S; s++)
                for (i = 0; i < 4; i++) {
                    const __m256 x = _mm256_loadu_ps(rows[i * R + r] + q0 + off[s]);
                    a[i] = _mm256_blendv_ps(a[i], x, _mm256_or_ps(_mm256_cmp_ps(x, a[i], _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
                }
        for (i = 0; i < 4; i++) _mm256_maskstore_ps(o[i] + q0, m, a[i]);
    }
}
#endif
GPUML__FN void gpuml__dwp_max(float *const *o, const float *const *rows, int64_t R, int64_t S, const int64_t *off, int64_t Q)
{
    int64_t i, q, r, s;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__dwp_max_avx512(o, rows, R, S, off, Q); return; }
    if (gpuml__cpu_simd() >= 1) { gpuml__dwp_max_avx2(o, rows, R, S, off, Q); return; }
#endif
    for (i = 0; i < 4; i++)
        for (q = 0; q < Q; q++) {
            float m = -INFINITY;
            for (r = 0; r < R; r++)
                for (s = 0; s < S; s++) {
                    const float v = rows[i * R + r][q + off[s]];
                    if (v > m || v != v) m = v;
                }
            o[i][q] = m;
        }
}
/* o[i] = the sum of acc[16i .. 16i + 15], i < n (a fixed order at each SIMD level) */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX2_TARGET GPUML__FN void gpuml__dwp_hsum16_avx2(const float *acc, int64_t n, float *o)
{
    int64_t i;
    for (i = 0; i < n; i++) {   /* (two 8-float loads: gcc 12's C++ front end warns on the 512 -> 256-bit cast) */
        const __m256 h = _mm256_add_ps(_mm256_loadu_ps(acc + 16 * i), _mm256_loadu_ps(acc + 16 * i + 8));
        __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        q = _mm_add_ps(q, _mm_movehl_ps(q, q));
        q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
        o[i] = _mm_cvtss_f32(q);
    }
}
#endif
GPUML__FN void gpuml__dwp_hsum16(const float *acc, int64_t n, float *o)
{
    int64_t i;
    int l;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 1) { gpuml__dwp_hsum16_avx2(acc, n, o); return; }
#endif
    for (i = 0; i < n; i++) {
        float v = 0.0f;
        for (l = 0; l < 16; l++) v += acc[i * 16 + l];
        o[i] = v;
    }
}
/* Qr: a multiple of 16; dy zero past its Q values */
GPUML__FN void gpuml__dwp_bwf(float *acc, const float *dy, const float *x, const int64_t *off, int64_t S, int64_t Qr)
{
    int64_t q, s;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__dwp_bwf_avx512(acc, dy, x, off, S, Qr); return; }
    if (gpuml__cpu_simd() >= 1) { gpuml__dwp_bwf_avx2(acc, dy, x, off, S, Qr); return; }
#endif
    for (s = 0; s < S; s++)
        for (q = 0; q < Qr; q++) acc[16 * s + (q & 15)] += dy[q] * x[q + off[s]];
}
/* rows of n floats: d[r * dp + i] = s[r * sp + i] */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX512_TARGET GPUML__FN void gpuml__fcpy2d_avx512(float *d, int64_t dp, const float *s, int64_t sp, int64_t rows, int64_t n)
{
    const __mmask16 m = (__mmask16)((1u << (n & 15)) - 1u);
    int64_t r, i;
    for (r = 0; r < rows; r++, d += dp, s += sp) {
        for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(s + i));
        if (m) _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
}
/* rows of W floats split into their even and odd elements: d0[r * dp + i] = s[r * sp + 2i] (i < n0),
   d1[r * dp + i] = s[r * sp + 2i + 1] (i < n1) */
GPUML__AVX512_TARGET GPUML__FN void gpuml__deint2_rows_avx512(float *d0, float *d1, int64_t dp, const float *s, int64_t sp, int64_t rows,
                                                              int64_t W, int64_t n0, int64_t n1)
{
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    int64_t r, i;
    for (r = 0; r < rows; r++, d0 += dp, d1 += dp, s += sp)
        for (i = 0; i < n0 || i < n1; i += 16) {
            const int64_t la = GPUML__MAX(GPUML__MIN(W - 2 * i, (int64_t)16), (int64_t)0), lb = GPUML__MAX(GPUML__MIN(W - 2 * i - 16, (int64_t)16), (int64_t)0);
            const __m512 a = _mm512_maskz_loadu_ps((__mmask16)((1u << la) - 1u), s + 2 * i);
            const __m512 b = _mm512_maskz_loadu_ps((__mmask16)((1u << lb) - 1u), s + 2 * i + 16);
            const int64_t k0 = GPUML__MAX(GPUML__MIN(n0 - i, (int64_t)16), (int64_t)0), k1 = GPUML__MAX(GPUML__MIN(n1 - i, (int64_t)16), (int64_t)0);
            _mm512_mask_storeu_ps(d0 + i, (__mmask16)((1u << k0) - 1u), _mm512_permutex2var_ps(a, ie, b));
            _mm512_mask_storeu_ps(d1 + i, (__mmask16)((1u << k1) - 1u), _mm512_permutex2var_ps(a, io, b));
        }
}
/* d[w] = (w even ? e : o)[w / 2], w < W */
GPUML__AVX512_TARGET GPUML__FN void gpuml__int2_avx512(float *d, const float *e, const float *o, int64_t W)
{
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    int64_t v;
    for (v = 0; 2 * v < W; v += 16) {
        const int64_t ne = GPUML__MIN((W - 2 * v + 1) / 2, (int64_t)16), no = GPUML__MIN((W - 2 * v) / 2, (int64_t)16);
        const int64_t n0 = GPUML__MIN(W - 2 * v, (int64_t)16), n1 = GPUML__MAX(GPUML__MIN(W - 2 * v - 16, (int64_t)16), (int64_t)0);
        const __m512 a = _mm512_maskz_loadu_ps((__mmask16)((1u << ne) - 1u), e + v), b = _mm512_maskz_loadu_ps((__mmask16)((1u << no) - 1u), o + v);
        _mm512_mask_storeu_ps(d + 2 * v, (__mmask16)((1u << n0) - 1u), _mm512_permutex2var_ps(a, lo, b));
        _mm512_mask_storeu_ps(d + 2 * v + 16, (__mmask16)((1u << n1) - 1u), _mm512_permutex2var_ps(a, hi, b));
    }
}
#endif
GPUML__FN void gpuml__fcpy2d(float *d, int64_t dp, const float *s, int64_t sp, int64_t rows, int64_t n)
{
    int64_t r;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__fcpy2d_avx512(d, dp, s, sp, rows, n); return; }
#endif
    for (r = 0; r < rows; r++) memcpy(d + r * dp, s + r * sp, sizeof(float) * (size_t)n);
}
/* d[i] = s[i], i < n: short runs inline (a memcpy call cost more than the copy of a 7-float row); ev[i] =
   s[2i], od[i] = s[2i + 1], i < n (n a multiple of 16: the ring's rows, where gpuml__deint2_rows_avx512's
   bounds a vector cost 15% of a stride-2 layer) */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX512_TARGET GPUML__FN void gpuml__fcpy_avx512(float *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(s + i));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
}
GPUML__AVX512_TARGET GPUML__FN void gpuml__deint2_avx512(const float *s, int64_t n, float *ev, float *od)
{
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    int64_t i;
    for (i = 0; i < n; i += 16) {
        const __m512 a = _mm512_loadu_ps(s + 2 * i), b = _mm512_loadu_ps(s + 2 * i + 16);
        _mm512_storeu_ps(ev + i, _mm512_permutex2var_ps(a, ie, b));
        _mm512_storeu_ps(od + i, _mm512_permutex2var_ps(a, io, b));
    }
}
#endif
GPUML__FN void gpuml__fcpy(float *d, const float *s, int64_t n)
{
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__fcpy_avx512(d, s, n); return; }
#endif
    memcpy(d, s, sizeof(float) * (size_t)n);
}
/* row (n, c, h) of t (logical strides st: n, h, w, c) into o as the kind's padded f32 row: L floats a
   phase (kind 1: one phase); pad: a row of L * sw floats */
GPUML__FN void gpuml__dwp_fill(const gpuml__dwp *j, const gpuml_tensor *t, const int64_t *st, int64_t W, int64_t n, int64_t c, int64_t h,
                               float *o, float *pad)
{
    /* every fill of a call writes the same positions of a row: the zeros around them (the buffers are
       zeroed once a call) stay */
    const gpuml__cv *cv = j->cv;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], L = j->L;
    const char *src = (const char *)gpuml_tensor_data(t) + (n * st[0] + h * st[1] + c * st[3]) * es;
    int64_t i, f;
    if (j->kind == 1) {   /* dy's row zero-stuffed: dy[q] at A + q*sw */
        const int64_t A = (cv->s - 1) * (int64_t)cv->dw, nq = GPUML__MAX(GPUML__MIN(W, (L - A + cv->sw - 1) / cv->sw), (int64_t)0);
        const float *v = gpuml__cpu_ld(cv->dt, src, st[2] * es, nq, cv->sw == 1 ? o + A : pad);
        if (cv->sw == 1) {
            if (v != o + A) memcpy(o + A, v, sizeof(float) * (size_t)nq);
        } else
            for (i = 0; i < nq; i++) o[A + i * cv->sw] = v[i];
        return;
    }
    {   /* x's row padded: pl zeros, the row, zeros; split into sw phases */
        const int64_t sw = cv->sw, tot = L * sw, lead = GPUML__MIN((int64_t)cv->pl, tot), nw = GPUML__MIN(W, tot - lead);
        float *d = sw == 1 ? o : pad;
        const float *v = gpuml__cpu_ld(cv->dt, src, st[2] * es, nw, d + lead);
        if (v != d + lead) memcpy(d + lead, v, sizeof(float) * (size_t)nw);
        if (sw == 1) return;
#if GPUML__HAVE_AVX2_PATH
        if (sw == 2 && gpuml__cpu_simd() >= 2) { gpuml__deint2_avx512(pad, L, o, o + L); return; }
#endif
        for (f = 0; f < sw; f++)
            for (i = 0; i < L; i++) o[f * L + i] = pad[i * sw + f];
    }
}
/* the ring's row of key (an input row h, or dy's row p for the backward data), filled on a miss */
GPUML__FN const float *gpuml__dwp_row(const gpuml__dwp *j, float *ring, int64_t *tags, int64_t key, const gpuml_tensor *t, const int64_t *st,
                                      int64_t W, int64_t n, int64_t c, float *pad)
{
    const int64_t slot = key & (j->ns - 1);
    float *o = ring + slot * j->Ls;
    if (tags[slot] != key) { gpuml__dwp_fill(j, t, st, W, n, c, key, o, pad); tags[slot] = key; }
    return o;
}
/* forward (kind 0) and backward data (kind 1): tasks (plane, band of output rows) [b, e) */
GPUML__FN void gpuml__dwp_out_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dwp *j = (const gpuml__dwp *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t R = cv->r, S = cv->s, C = cv->c, Ls = j->Ls, es = (int64_t)gpuml__dtype_sizes[cv->dt];
    const int bwd = j->kind == 1;
    /* in: x (forward) or dy (backward data); out: y or dx, rows of Wo pixels, Ho of them */
    const gpuml_tensor *in = bwd ? cv->y : cv->x, *out = bwd ? cv->x : cv->y;
    const int64_t *is = bwd ? cv->ys : cv->xs, *os = bwd ? cv->xs : cv->ys;
    const int64_t Wi = bwd ? cv->q : cv->w, Ho = bwd ? cv->h : cv->p, Wo = bwd ? cv->w : cv->q;
    const int direct = cv->dt == GPUML_F32 && os[2] == 1 && (bwd || (!cv->bias && !cv->act && !cv->res && j->pool != 2));
    const float *bias = !bwd && cv->bias ? (const float *)gpuml_tensor_data(cv->bias) : NULL;
    float *ring = j->buf + (int64_t)tid * j->per, *zero = ring + j->ns * Ls, *pad = zero + Ls, *ob = pad + Ls, *rb = ob + 4 * j->Qr;
    int64_t *tags = j->tags + (int64_t)tid * j->ns;
    const float *rows[256];
    float *o[4];
    int64_t t, i, r, p;
    for (t = b; t < e; t++) {
        const int64_t plane = t / j->nb, band = t % j->nb, n = plane / C, c = plane % C;
        const int64_t p0 = Ho * band / j->nb, p1 = Ho * (band + 1) / j->nb;
        for (i = 0; i < j->ns; i++) tags[i] = -1;
        for (p = p0; p < p1; p += 4) {
            const int64_t nr = GPUML__MIN(p1 - p, (int64_t)4);
            for (i = 0; i < 4; i++)
                for (r = 0; r < R; r++) {
                    const float *row = zero;
                    if (i < nr) {
                        if (bwd) {   /* dx row p + i takes dy row (p + i + pt - r*dh) / sh where that divides */
                            const int64_t vp = p + i + cv->pt - r * cv->dh;
                            if (cv->sh == 1) { if (vp >= 0 && vp < cv->p) row = gpuml__dwp_row(j, ring, tags, vp, in, is, Wi, n, c, pad); }
                            else if (vp >= 0 && vp % cv->sh == 0 && vp / cv->sh < cv->p) row = gpuml__dwp_row(j, ring, tags, vp / cv->sh, in, is, Wi, n, c, pad);
                        } else {
                            const int64_t h = (p + i) * cv->sh - cv->pt + r * cv->dh;
                            if (h >= 0 && h < cv->h) row = gpuml__dwp_row(j, ring, tags, h, in, is, Wi, n, c, pad);
                        }
                    }
                    rows[i * R + r] = row;
                }
            for (i = 0; i < 4; i++)
                o[i] = i < nr && direct ? (float *)gpuml_tensor_data(out) + n * os[0] + (p + i) * os[1] + c * os[3] : ob + i * j->Qr;
            if (j->pool == 1) gpuml__dwp_max(o, rows, R, S, j->off, Wo);
            else gpuml__dwp_rows(o, rows, j->wk + c * j->wcs, R, S, j->off, Wo);
            if (direct) continue;
            for (i = 0; i < nr; i++) {
                float *v = ob + i * j->Qr;
                char *dst = (char *)gpuml_tensor_data(out) + (n * os[0] + (p + i) * os[1] + c * os[3]) * es;
                if (j->pool == 2) gpuml__vdiv(v, j->div + (p + i) * Wo, Wo);
                if (bias || cv->act || cv->res) {
                    const float *rr = cv->res ? gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->res) +
                                                              (n * cv->rs[0] + (p + i) * cv->rs[1] + c * cv->rs[3]) * es, cv->rs[2] * es, Wo, rb)
                                              : NULL;
                    gpuml__epi_run(v, v, bias ? bias + c : NULL, 0, cv->act, rr, Wo);
                }
                gpuml__cpu_st(cv->dt, dst, os[2] * es, Wo, v);
            }
        }
    }
}
/* backward filter: planes (n, c) [b, e), each's sums into part[plane][R*S] */
GPUML__FN void gpuml__dwp_bwf_planes(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dwp *j = (const gpuml__dwp *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t R = cv->r, S = cv->s, C = cv->c, Ls = j->Ls, es = (int64_t)gpuml__dtype_sizes[cv->dt];
    float *ring = j->buf + (int64_t)tid * j->per, *pad = ring + j->ns * Ls + Ls, *dyb = pad + Ls, *acc = dyb + 5 * j->Qr;
    int64_t *tags = j->tags + (int64_t)tid * j->ns;
    int64_t t, i, r, p;
    for (t = b; t < e; t++) {
        const int64_t n = t / C, c = t % C;
        for (i = 0; i < j->ns; i++) tags[i] = -1;
        memset(acc, 0, sizeof(float) * (size_t)(R * S * 16));
        for (p = 0; p < cv->p; p++) {
            const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->y) + (n * cv->ys[0] + p * cv->ys[1] + c * cv->ys[3]) * es,
                                           cv->ys[2] * es, cv->q, dyb);
            if (v != dyb) memcpy(dyb, v, sizeof(float) * (size_t)cv->q);   /* (its tail stays zero) */
            for (r = 0; r < R; r++) {
                const int64_t h = p * cv->sh - cv->pt + r * cv->dh;
                if (h < 0 || h >= cv->h) continue;
                gpuml__dwp_bwf(acc + r * S * 16, dyb, gpuml__dwp_row(j, ring, tags, h, cv->x, cv->xs, cv->w, n, c, pad), j->off, S, j->Qr);
            }
        }
        gpuml__dwp_hsum16(acc, R * S, j->part + t * R * S);
    }
}
/* dw[c] = the sum of the planes' partials over the batch, in order; channels [b, e) */
GPUML__FN void gpuml__dwp_bwf_sum(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dwp *j = (const gpuml__dwp *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t RS = cv->r * cv->s;
    float *wf = cv->dt == GPUML_F32 ? (float *)gpuml_tensor_data(cv->wt) : NULL;   /* (f32 stored directly: a dispatched store a weight was 13% of a 7x7 layer) */
    int64_t c, i, n, r, s;
    (void)tid;
    for (c = b; c < e; c++)
        for (r = 0, i = 0; r < cv->r; r++)
            for (s = 0; s < cv->s; s++, i++) {
                float v = 0.0f;
                const int64_t off = c * cv->ws[0] + r * cv->ws[1] + s * cv->ws[2];
                for (n = 0; n < cv->n; n++) v += j->part[(n * cv->c + c) * RS + i];
                if (wf) wf[off] = v;
                else gpuml__cv_st(cv->dt, cv->wt, off, v);
            }
}
GPUML__FN void gpuml__dwp_flat_setup(gpuml__dwp *j)
{
    const gpuml__cv *cv = j->cv;
    const int64_t *is = j->kind == 1 ? cv->ys : cv->xs;
    j->ib = (const char *)gpuml_tensor_data(j->kind == 1 ? cv->y : cv->x);
    j->fast_in = cv->dt == GPUML_F32 && is[2] == 1 && (cv->sw == 1 || (cv->sw == 2 && j->kind != 1 && gpuml__cpu_simd() >= 2));
}
/* the source plane (n, c) of the flat kinds into X: x (kinds 0, 2) padded and split into phases, dy
   (kind 1) zero-stuffed; only the data positions written (the padding around them stays) */
GPUML__FN void gpuml__dwp_flat_fill(const gpuml__dwp *j, int64_t n, int64_t c, float *X, float *pad)
{
    const gpuml__cv *cv = j->cv;
    const int64_t R = cv->r, S = cv->s, es = (int64_t)gpuml__dtype_sizes[cv->dt], Hp = j->Hp, Wp = j->Wp;
    const int kind = j->kind;
    const int64_t *is = kind == 1 ? cv->ys : cv->xs, Hi = kind == 1 ? cv->p : cv->h, Wi = kind == 1 ? cv->q : cv->w;
    const char *ib = j->ib;
    const int fast_in = j->fast_in;
    int64_t h, i;
    /* the source plane into X (only the data positions: the zeros around them stay) */
    if (fast_in) {
        const float *src = (const float *)(const void *)ib + n * is[0] + c * is[3];
        if (kind == 1) {
            const int64_t A_h = (R - 1) * (int64_t)cv->dh, A_w = (S - 1) * (int64_t)cv->dw;
            const int64_t nh = GPUML__MIN(Hi, (Hp - A_h + cv->sh - 1) / cv->sh), nw = GPUML__MIN(Wi, Wp - A_w);
            if (nh > 0 && nw > 0) gpuml__fcpy2d(X + A_h * Wp + A_w, cv->sh * Wp, src, is[1], nh, nw);
        } else {
            const int64_t nw = GPUML__MIN(Wi, Wp * cv->sw - (int64_t)cv->pl);
            int64_t a;
            for (a = 0; a < cv->sh && nw > 0; a++) {   /* the input rows of row phase a: h0, h0 + sh, ... */
                const int64_t h0 = ((a - cv->pt) % cv->sh + cv->sh) % cv->sh, r0 = (h0 + cv->pt) / cv->sh;
                const int64_t nh = GPUML__MIN((Hi - h0 + cv->sh - 1) / cv->sh, Hp - r0);
                if (nh <= 0) continue;
                if (cv->sw == 1) gpuml__fcpy2d(X + a * Hp * Wp + r0 * Wp + cv->pl, Wp, src + h0 * is[1], cv->sh * is[1], nh, nw);
#if GPUML__HAVE_AVX2_PATH
                else {   /* x's even pixels to column phase pl % 2 from column pl / 2, its odd ones to the other */
                    const int64_t pl = cv->pl, n0 = GPUML__MIN((Wi + 1) / 2, Wp - pl / 2), n1 = GPUML__MIN(Wi / 2, Wp - (pl + 1) / 2);
                    float *base = X + a * 2 * Hp * Wp + r0 * Wp;
                    gpuml__deint2_rows_avx512(base + (pl % 2) * Hp * Wp + pl / 2, base + ((pl + 1) % 2) * Hp * Wp + (pl + 1) / 2, Wp,
                                              src + h0 * is[1], cv->sh * is[1], nh, Wi, GPUML__MAX(n0, (int64_t)0), GPUML__MAX(n1, (int64_t)0));
                }
#endif
            }
        }
    }
    for (h = 0; h < Hi && !fast_in; h++) {
        const char *src = ib + (n * is[0] + h * is[1] + c * is[3]) * es;
        int64_t row, col0, cs, a, nw;
        float *dst;
        if (kind == 1) { row = (R - 1) * (int64_t)cv->dh + h * cv->sh; col0 = (S - 1) * (int64_t)cv->dw; cs = cv->sw; a = 0; }
        else { row = (h + cv->pt) / cv->sh; a = (h + cv->pt) % cv->sh; col0 = cv->pl; cs = cv->sw; }
        if (row >= Hp) continue;
        dst = X + a * cv->sw * Hp * Wp + row * Wp;
        if (kind == 1) {   /* dy[q] at col0 + q * sw */
            nw = GPUML__MIN(Wi, (Wp - col0 + cs - 1) / cs);
            if (nw <= 0) continue;
            if (cs == 1) {
                const float *v = gpuml__cpu_ld(cv->dt, src, is[2] * es, nw, dst + col0);
                if (v != dst + col0) gpuml__fcpy(dst + col0, v, nw);
            } else {
                const float *v = gpuml__cpu_ld(cv->dt, src, is[2] * es, nw, pad);
                for (i = 0; i < nw; i++) dst[col0 + i * cs] = v[i];
            }
        } else if (cs == 1) {   /* x[w] at pl + w */
            nw = GPUML__MIN(Wi, Wp - col0);
            if (nw > 0) {
                const float *v = gpuml__cpu_ld(cv->dt, src, is[2] * es, nw, dst + col0);
                if (v != dst + col0) gpuml__fcpy(dst + col0, v, nw);
            }
        } else {   /* x[w] at phase (pl + w) % sw, column (pl + w) / sw */
            const float *v;
            int64_t f;
            nw = GPUML__MIN(Wi, Wp * cs - col0);
            if (nw <= 0) continue;
            v = gpuml__cpu_ld(cv->dt, src, is[2] * es, nw, pad);
            for (f = 0; f < cs; f++) {   /* phase f: x[w] for w = w0, w0 + sw, ... at columns (pl + w0) / sw, ... */
                const int64_t w0 = ((f - col0) % cs + cs) % cs;
                float *dp = dst + f * Hp * Wp + (col0 + w0) / cs;
                for (i = w0; i < nw; i += cs) *dp++ = v[i];
            }
        }
    }
}
/* whole small planes: tasks (n, c) [b, e).  The output, as a flat row of P x Wp values (Wp - Q of
   them a row not used), is the sum over the taps of the plane buffer at the taps' offsets: the
   kernel's four chains take its four quarters. */
GPUML__FN void gpuml__dwp_flat_planes(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dwp *j = (const gpuml__dwp *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t R = cv->r, S = cv->s, RS = R * S, C = cv->c, es = (int64_t)gpuml__dtype_sizes[cv->dt], Wp = j->Wp;
    const int kind = j->kind;
    float *X = j->buf + (int64_t)tid * j->per, *F = X + j->xn, *pad = F + 4 * j->chunk, *rb = pad + GPUML__MAX(cv->w, cv->q) + 16;
    float *acc = rb + GPUML__MAX(cv->w, cv->q) + 16;
    const float *bias = kind == 0 && cv->bias ? (const float *)gpuml_tensor_data(cv->bias) : NULL;
    int64_t t, i, p;
    for (t = b; t < e; t++) {
        const int64_t n = t / C, c = t % C;
        gpuml__dwp_flat_fill(j, n, c, X, pad);
        if (kind == 2) {   /* dy at pitch Wp into F (its other columns stay zero), the sums over the flat row */
            const int64_t T = (cv->p * Wp + 15) / 16 * 16;
            if (cv->dt == GPUML_F32 && cv->ys[2] == 1)
                gpuml__fcpy2d(F, Wp, (const float *)gpuml_tensor_data(cv->y) + n * cv->ys[0] + c * cv->ys[3], cv->ys[1], cv->p, cv->q);
            for (p = 0; p < cv->p && !(cv->dt == GPUML_F32 && cv->ys[2] == 1); p++) {
                const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->y) + (n * cv->ys[0] + p * cv->ys[1] + c * cv->ys[3]) * es,
                                               cv->ys[2] * es, cv->q, F + p * Wp);
                if (v != F + p * Wp) gpuml__fcpy(F + p * Wp, v, cv->q);
            }
            memset(acc, 0, sizeof(float) * (size_t)(RS * 16));
            gpuml__dwp_bwf(acc, F, X, j->off, RS, T);
            gpuml__dwp_hsum16(acc, RS, j->part + t * RS);
            continue;
        }
        {
            const float *rows[4];
            float *o[4];
            const gpuml_tensor *out = kind == 1 ? cv->x : cv->y;
            const int64_t *os = kind == 1 ? cv->xs : cv->ys, Ho = kind == 1 ? cv->h : cv->p, Wo = kind == 1 ? cv->w : cv->q;
            for (i = 0; i < 4; i++) { rows[i] = X + i * j->chunk; o[i] = F + i * j->chunk; }
            if (j->pool == 1) gpuml__dwp_max(o, rows, 1, RS, j->off, j->chunk);
            else gpuml__dwp_rows(o, rows, j->wk + c * j->wcs, 1, RS, j->off, j->chunk);
            if (j->pool == 2)
                for (p = 0; p < Ho; p++) gpuml__vdiv(F + p * Wp, j->div + p * Wo, Wo);
            if (cv->dt == GPUML_F32 && os[2] == 1 && !(kind == 0 && cv->res)) {   /* the plane out in one call */
                if (bias || (kind == 0 && cv->act)) gpuml__epi_run(F, F, bias ? bias + c : NULL, 0, cv->act, NULL, Ho * Wp);
                gpuml__fcpy2d((float *)gpuml_tensor_data(out) + n * os[0] + c * os[3], os[1], F, Wp, Ho, Wo);
                continue;
            }
            for (p = 0; p < Ho; p++) {
                float *v = F + p * Wp;
                char *dst = (char *)gpuml_tensor_data(out) + (n * os[0] + p * os[1] + c * os[3]) * es;
                if (bias || cv->act || (kind == 0 && cv->res)) {
                    const float *rr = kind == 0 && cv->res ? gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->res) +
                                                                           (n * cv->rs[0] + p * cv->rs[1] + c * cv->rs[3]) * es, cv->rs[2] * es, Wo, rb)
                                                           : NULL;
                    gpuml__epi_run(v, v, bias ? bias + c : NULL, 0, kind == 0 ? cv->act : 0, rr, Wo);
                }
                if (cv->dt == GPUML_F32 && os[2] == 1) gpuml__fcpy((float *)(void *)dst, v, Wo);
                else gpuml__cpu_st(cv->dt, dst, os[2] * es, Wo, v);
            }
        }
    }
}
/* backward data at strides up to 2 x 2 (flat == 2): planes (n, c) [b, e) */
GPUML__FN void gpuml__dwp_sub_planes(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dwp *j = (const gpuml__dwp *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t C = cv->c, es = (int64_t)gpuml__dtype_sizes[cv->dt], Wd = j->Wd, sh = cv->sh, sw = cv->sw;
    float *X = j->buf + (int64_t)tid * j->per, *F = X + j->xn, *rb = F + j->nph * j->fsz;
    const char *yb = (const char *)gpuml_tensor_data(cv->y);
    char *xb = (char *)gpuml_tensor_data(cv->x);
    const int fy = cv->dt == GPUML_F32 && cv->ys[2] == 1, fx = cv->dt == GPUML_F32 && cv->xs[2] == 1;
    int64_t t, p, h, w, v, f, i;
    for (t = b; t < e; t++) {
        const int64_t n = t / C, c = t % C;
        float *dy0 = X + j->Ah * Wd + j->Aw;
        /* dy into X at (Ah + p, Aw + q) (the zeros around it stay) */
        if (fy) gpuml__fcpy2d(dy0, Wd, (const float *)(const void *)yb + n * cv->ys[0] + c * cv->ys[3], cv->ys[1], cv->p, cv->q);
        else
            for (p = 0; p < cv->p; p++) {
                const float *s = gpuml__cpu_ld(cv->dt, yb + (n * cv->ys[0] + p * cv->ys[1] + c * cv->ys[3]) * es, cv->ys[2] * es, cv->q, dy0 + p * Wd);
                if (s != dy0 + p * Wd) gpuml__fcpy(dy0 + p * Wd, s, cv->q);
            }
        for (f = 0; f < j->nph; f++) {   /* each dx phase: its taps' sums, four chains over its flat quarters */
            const float *rows[4];
            float *o[4];
            if (!j->ntap[f]) continue;   /* (no tap reaches this phase: F's zeros from the call's start, never written) */
            for (i = 0; i < 4; i++) { rows[i] = X + i * j->pchunk[f]; o[i] = F + f * j->fsz + i * j->pchunk[f]; }
            gpuml__dwp_rows(o, rows, j->pw[f] + c * j->ntap[f], 1, j->ntap[f], j->poff[f], j->pchunk[f]);
        }
        for (h = 0; h < cv->h; h++) {   /* dx's row h from its row phase's sw column phases */
            const int64_t a = h % sh, u = h / sh;
            char *dst = xb + (n * cv->xs[0] + h * cv->xs[1] + c * cv->xs[3]) * es;
            float *row = fx ? (float *)(void *)dst : rb;
            if (sw == 1) {
                const float *src = F + a * j->fsz + u * Wd;
                if (fx) gpuml__fcpy(row, src, cv->w);
                else gpuml__cpu_st(cv->dt, dst, cv->xs[2] * es, cv->w, src);
                continue;
            }
#if GPUML__HAVE_AVX2_PATH
            if (gpuml__cpu_simd() >= 2) {   /* sw == 2: the even and odd columns interleaved by vpermt2ps */
                gpuml__int2_avx512(row, F + (a * 2) * j->fsz + u * Wd, F + (a * 2 + 1) * j->fsz + u * Wd, cv->w);
                if (!fx) gpuml__cpu_st(cv->dt, dst, cv->xs[2] * es, cv->w, rb);
                continue;
            }
#endif
            for (f = 0; f < sw; f++) {
                const float *src = F + (a * sw + f) * j->fsz + u * Wd;
                for (w = f, v = 0; w < cv->w; w += sw, v++) rb[w] = src[v];
            }
            if (fx) gpuml__fcpy((float *)(void *)dst, rb, cv->w);
            else gpuml__cpu_st(cv->dt, dst, cv->xs[2] * es, cv->w, rb);
        }
    }
}
/* max pooling's taps: id[i][q] = the tap t < T whose value rows[i][q + off[t]] the max takes (the
   forward's test: v > m or v is NaN, from -inf), -1 where none does (every value -inf), q < Q */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX512_TARGET GPUML__FN void gpuml__dwp_maxid_avx512(int *const *id, const float *const *rows, int64_t T, const int64_t *off, int64_t Q)
{
    int64_t q0, t;
    for (q0 = 0; q0 < Q; q0 += 16) {
        const __mmask16 m = Q - q0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (Q - q0)) - 1u);
        __m512 a[4];
        __m512i k[4];
        int i;
        for (i = 0; i < 4; i++) { a[i] = _mm512_set1_ps(-INFINITY); k[i] = _mm512_set1_epi32(-1); }
        for (t = 0; t < T; t++) {
            const __m512i tv = _mm512_set1_epi32((int)t);
            for (i = 0; i < 4; i++) {
                const __m512 x = _mm512_loadu_ps(rows[i] + q0 + off[t]);
                const __mmask16 s = _mm512_cmp_ps_mask(x, a[i], _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
                a[i] = _mm512_mask_mov_ps(a[i], s, x);
                k[i] = _mm512_mask_mov_epi32(k[i], s, tv);
            }
        }
        for (i = 0; i < 4; i++) _mm512_mask_storeu_epi32(id[i] + q0, m, k[i]);
    }
}
#endif
GPUML__FN void gpuml__dwp_maxid(int *const *id, const float *const *rows, int64_t T, const int64_t *off, int64_t Q)
{
    int64_t i, q, t;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__dwp_maxid_avx512(id, rows, T, off, Q); return; }
#endif
    for (i = 0; i < 4; i++)
        for (q = 0; q < Q; q++) {
            float m = -INFINITY;
            int k = -1;
            for (t = 0; t < T; t++) {
                const float v = rows[i][q + off[t]];
                if (v > m || v != v) { m = v; k = (int)t; }
            }
            id[i][q] = k;
        }
}
/* max pooling backward on whole NCHW planes: planes (n, c) [b, e).  x's plane as the forward's
   (-inf around it), each output's tap, then dy scattered into a dx plane in (p, q) order -- the
   element each window's max took (none: the window's first element, as the channel loops) -- and the
   plane written out: the sums of the channel loops (gpuml__pool_bwd_rows_vec), in the same order */
GPUML__FN void gpuml__dwp_maxb_planes(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dwp *j = (const gpuml__dwp *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t C = cv->c, W = cv->w, Wp = j->Wp, es = (int64_t)gpuml__dtype_sizes[cv->dt];
    float *X = j->buf + (int64_t)tid * j->per, *D = X + j->xn, *G = D + cv->h * W, *pad = G + cv->q + 16;
    int *I = (int *)(void *)(pad + GPUML__MAX(cv->w, cv->q) + 16);
    const char *yb = (const char *)gpuml_tensor_data(cv->y);
    char *xb = (char *)gpuml_tensor_data(j->dx);
    int64_t t, i, p, q;
    for (t = b; t < e; t++) {
        const int64_t n = t / C, c = t % C;
        const float *rows[4];
        int *ids[4];
        gpuml__dwp_flat_fill(j, n, c, X, pad);
        for (i = 0; i < 4; i++) { rows[i] = X + i * j->chunk; ids[i] = I + i * j->chunk; }
        gpuml__dwp_maxid(ids, rows, cv->r * cv->s, j->off, j->chunk);
        memset(D, 0, sizeof(float) * (size_t)(cv->h * W));
        for (p = 0; p < cv->p; p++) {
            const int64_t h0 = p * cv->sh - cv->pt;
            const float *g = gpuml__cpu_ld(cv->dt, yb + (n * cv->ys[0] + p * cv->ys[1] + c * cv->ys[3]) * es, cv->ys[2] * es, cv->q, G);
            for (q = 0; q < cv->q; q++) {
                const int64_t w0 = q * cv->sw - cv->pl;
                const int k = I[p * Wp + q];
                const int64_t h = k >= 0 ? h0 + j->tr[k] : GPUML__MAX(h0, (int64_t)0), w = k >= 0 ? w0 + j->ts[k] : GPUML__MAX(w0, (int64_t)0);
                D[h * W + w] += g[q];
            }
        }
        if (cv->dt == GPUML_F32 && j->dxs[2] == 1)
            gpuml__fcpy2d((float *)(void *)xb + n * j->dxs[0] + c * j->dxs[3], j->dxs[1], D, W, cv->h, W);
        else
            for (p = 0; p < cv->h; p++)
                gpuml__cpu_st(cv->dt, xb + (n * j->dxs[0] + p * j->dxs[1] + c * j->dxs[3]) * es, j->dxs[2] * es, W, D + p * W);
    }
}
/* 1: ran (or failed with a message); 0: not this path's shape (planes past 16384 floats padded, windows
   of more than 64 taps).  cv: the backward's problem with x (the forward's input) as its x and dy as y */
GPUML__FN int gpuml__dwp_pool_maxb(gpuml_ctx *ctx, const gpuml__cv *cv, const gpuml_tensor *dx, const int64_t *dxs, gpuml_status *st,
                                   const char *op)
{
    gpuml__dwp j;
    const int64_t R = cv->r, S = cv->s, nt = gpuml__pool_size(ctx->pool);
    int64_t r2, s2, i, T;
    float *mem;
    if (R * S > 64 || cv->sw > 2) return 0;
    memset(&j, 0, sizeof j);
    j.cv = cv; j.kind = 0; j.pool = 1; j.flat = 1; j.dx = dx; j.dxs = dxs;
    j.Hp = cv->p + (R - 1) / cv->sh; j.Wp = cv->q + (S - 1) / cv->sw;
    j.xn = j.Hp * j.Wp * cv->sh * cv->sw;
    if (j.xn > 16384) return 0;
    T = cv->p * j.Wp;
    j.chunk = ((T + 3) / 4 + 15) / 16 * 16;
    j.xn = (j.xn + j.Wp + 4 * j.chunk + 64 + 15) / 16 * 16;
    for (r2 = 0; r2 < R; r2++)
        for (s2 = 0; s2 < S; s2++)
            j.off[r2 * S + s2] = ((r2 % cv->sh) * cv->sw + s2 % cv->sw) * j.Hp * j.Wp + (r2 / cv->sh) * j.Wp + s2 / cv->sw,
            j.tr[r2 * S + s2] = (int)r2, j.ts[r2 * S + s2] = (int)s2;
    /* a thread: X, the dx plane, dy's row, a pad row, the taps (4 * chunk ints) */
    j.per = (j.xn + cv->h * cv->w + cv->q + 16 + GPUML__MAX(cv->w, cv->q) + 16 + 4 * j.chunk + 15) / 16 * 16;
    mem = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(nt * j.per));
    if (!mem) { *st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op); return 1; }
    for (i = 0; i < nt * j.per; i++) mem[i] = -INFINITY;   /* -inf around x's rows */
    j.buf = mem;
    gpuml__dwp_flat_setup(&j);
    gpuml__parallel_for(ctx->pool, cv->n * cv->c, 1, gpuml__dwp_maxb_planes, &j);
    gpuml__aligned_free(mem);
    *st = GPUML_SUCCESS;
    return 1;
}
/* 1: ran (or failed with a message); 0: not this path's shape.  pool: 0 the depthwise conv, 1 max
   pooling, 2 average pooling (count_pad: the padding counted), forward only */
GPUML__FN int gpuml__dwp_run_p(gpuml_ctx *ctx, const gpuml__cv *cv, int kind, int pool, int count_pad, gpuml_status *st, const char *op)
{
    gpuml__dwp j;
    const int64_t R = cv->r, S = cv->s, RS = R * S, C = cv->c, nt = gpuml__pool_size(ctx->pool), planes = cv->n * cv->c;
    const int64_t A = (S - 1) * (int64_t)cv->dw;
    int64_t s, c, wkn, ho, total;
    float *mem;
    if (cv->cg != 1 || cv->kg != 1 || R > 64 || S > 64 || gpuml__cv_cpu_dw_rows_nchw > 0) return 0;
    memset(&j, 0, sizeof j);
    j.cv = cv; j.kind = kind; j.pool = pool; j.wcs = pool ? 0 : RS;
    ho = 0;
    if (kind == 1) { j.Hp = cv->h + cv->pt + (R - 1) * (int64_t)cv->dh; j.Wp = cv->w + cv->pl + A; }
    else { j.Hp = cv->p + (R - 1) * (int64_t)cv->dh / cv->sh; j.Wp = cv->q + A / cv->sw; }
    j.xn = j.Hp * j.Wp * (kind == 1 ? 1 : (int64_t)cv->sh * cv->sw);
    /* whole planes where the rows are short (the ring's per-row work outweighs them) and the plane small */
    j.flat = RS <= 64 && (gpuml__cv_cpu_dw_flat > 0 ? j.xn <= 16384 : gpuml__cv_cpu_dw_flat == 0 && j.xn <= GPUML__DWP_FLAT_N);
    if (kind == 1 && (cv->sh > 1 || cv->sw > 1) && cv->sh <= 2 && cv->sw <= 2 &&
        (gpuml__cv_cpu_dw_sub > 0 || (gpuml__cv_cpu_dw_sub == 0 && cv->h * cv->w >= 1024))) {
        /* strided backward data: each dx phase sums only its taps (the zero-stuffed dy had them all, three
           quarters of them on zeros at stride 2 x 2); on planes of 1024+ pixels (smaller ones: 4 calls of
           short rows and the interleave cost more, 576 @14 78 -> 141 us) */
        const int64_t sh = cv->sh, sw = cv->sw, Hu = (cv->h + sh - 1) / sh, Wu = (cv->w + sw - 1) / sw;
        int64_t f, r2, s2, cmax = 0;
        j.Ah = ((R - 1) * (int64_t)cv->dh + sh - 1) / sh; j.Aw = ((S - 1) * (int64_t)cv->dw + sw - 1) / sw;
        j.Hd = j.Ah + GPUML__MAX(cv->p, Hu + (sh - 1 + cv->pt) / sh) + 1;
        j.Wd = j.Aw + GPUML__MAX(cv->q, Wu + (sw - 1 + cv->pl) / sw) + 1;
        j.nph = (int)(sh * sw);
        for (f = 0; f < j.nph; f++) {
            const int64_t a = f / sw, bb = f % sw, hu = (cv->h - a + sh - 1) / sh;
            j.pchunk[f] = ((hu * j.Wd + 3) / 4 + 15) / 16 * 16;
            cmax = GPUML__MAX(cmax, j.pchunk[f]);
            j.ntap[f] = 0;
            for (r2 = 0; r2 < R; r2++)
                for (s2 = 0; s2 < S; s2++)
                    if ((a + cv->pt - r2 * cv->dh) % sh == 0 && (bb + cv->pl - s2 * cv->dw) % sw == 0)
                        j.poff[f][j.ntap[f]++] = (j.Ah + (a + cv->pt - r2 * cv->dh) / sh) * j.Wd + j.Aw + (bb + cv->pl - s2 * cv->dw) / sw;
        }
        if (RS <= 64 && j.Hd * j.Wd <= 16384) {
            j.flat = 2;
            j.fsz = 4 * cmax;
            j.xn = (j.Hd * j.Wd + 4 * cmax + 64 + 15) / 16 * 16;
            j.per = j.xn + j.nph * j.fsz + cv->w + 16;
            j.nb = 1;
        }
    }
    if (j.flat == 2) {
    } else if (j.flat) {
        const int64_t T = (kind == 1 ? cv->h : cv->p) * j.Wp;
        int64_t a, b2, r2, s2;
        j.chunk = ((T + 3) / 4 + 15) / 16 * 16;
        j.xn = (j.xn + j.Wp + 4 * j.chunk + 64 + 15) / 16 * 16;   /* reads past the plane: the last quarter's tail */
        for (r2 = 0; r2 < R; r2++)
            for (s2 = 0; s2 < S; s2++) {
                if (kind == 1) j.off[r2 * S + s2] = (cv->pt + (R - 1 - r2) * (int64_t)cv->dh) * j.Wp + cv->pl + (S - 1 - s2) * (int64_t)cv->dw;
                else {
                    a = r2 * cv->dh % cv->sh; b2 = s2 * cv->dw % cv->sw;
                    j.off[r2 * S + s2] = (a * cv->sw + b2) * j.Hp * j.Wp + (r2 * cv->dh / cv->sh) * j.Wp + s2 * cv->dw / cv->sw;
                }
            }
        j.per = j.xn + 4 * j.chunk + 2 * (GPUML__MAX(cv->w, cv->q) + 16) + RS * 16;
        j.nb = 1;
    } else if (kind == 1) {
        j.Qr = (cv->w + 15) / 16 * 16;
        j.L = (j.Qr + cv->pl + A + 15) / 16 * 16;
        j.Ls = j.L;
        j.ns = (3 + (R - 1) * cv->dh) / cv->sh + 2;
        for (s = 0; s < S; s++) j.off[s] = cv->pl + A - s * cv->dw;
        ho = cv->h;
    } else {
        j.Qr = (cv->q + 15) / 16 * 16;
        j.L = (j.Qr + A / cv->sw + 1 + 15) / 16 * 16;
        j.Ls = j.L * cv->sw;
        j.ns = (kind == 2 ? 0 : 3 * (int64_t)cv->sh) + (R - 1) * cv->dh + 1;
        for (s = 0; s < S; s++) j.off[s] = ((s * cv->dw) % cv->sw) * j.L + (s * cv->dw) / cv->sw;
        ho = cv->p;
    }
    if (!j.flat) {
        for (s = 1; s < j.ns; s *= 2) {}
        j.ns = s;   /* a power of two: slot = key & (ns - 1) */
        /* a thread's floats: the ring, a zero row, a pad row, 4 output rows, a residual row (the backward
           filter: dy's row), the backward filter's sums */
        j.per = (j.ns * j.Ls + 2 * j.Ls + 5 * j.Qr + (kind == 2 ? RS * 16 : 0) + 15) / 16 * 16;
        if (j.per > ((int64_t)1 << 25)) return 0;   /* a ring past 128 MB a thread (huge dilations): the channel-vector loops */
        /* bands of output rows: about four tasks a thread where the planes are few */
        j.nb = kind == 2 ? 1 : GPUML__MAX(GPUML__MIN((4 * nt + planes - 1) / planes, (ho + 3) / 4), (int64_t)1);
    }
    wkn = (C * RS + 15) / 16 * 16;
    total = (wkn + nt * j.per + (kind == 2 ? planes * RS : 0) + (pool == 2 ? cv->p * cv->q : 0) + 15) / 16 * 16;
    mem = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)total + sizeof(int64_t) * (size_t)(nt * j.ns));
    if (!mem) { *st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op); return 1; }
    j.wk = mem; j.buf = mem + wkn; j.part = kind == 2 ? j.buf + nt * j.per : NULL;
    j.tags = (int64_t *)(void *)(mem + total);
    if (pool == 1)   /* max: -inf around every row the fills write */
        for (s = 0; s < nt * j.per; s++) j.buf[s] = -INFINITY;
    else memset(j.buf, 0, sizeof(float) * (size_t)(nt * j.per));   /* the zeros around every row the fills write */
    if (pool == 2) {   /* average: weights 1, the divisors of the output pixels */
        float *dv = j.buf + nt * j.per;
        int64_t p, q;
        for (s = 0; s < RS; s++) mem[s] = 1.0f;
        j.wk = mem;
        for (p = 0; p < cv->p; p++)
            for (q = 0; q < cv->q; q++) dv[p * cv->q + q] = gpuml__pool_count(cv, p * cv->sh - cv->pt, q * cv->sw - cv->pl, count_pad);
        j.div = dv;
    } else if (pool) {
    } else if (j.flat == 2) {   /* the weights of each phase's taps, [C][ntap], in (r, s) order */
        float *wp = mem;
        int f;
        for (f = 0; f < j.nph; f++) {
            const int64_t a = f / cv->sw, bb = f % cv->sw;
            int64_t r2, s2, k;
            j.pw[f] = wp;
            for (c = 0; c < C; c++)
                for (r2 = 0, k = 0; r2 < R; r2++)
                    for (s2 = 0; s2 < S; s2++)
                        if ((a + cv->pt - r2 * cv->dh) % cv->sh == 0 && (bb + cv->pl - s2 * cv->dw) % cv->sw == 0)
                            wp[c * j.ntap[f] + k++] = gpuml__cv_ld(cv->dt, cv->wt, c * cv->ws[0] + r2 * cv->ws[1] + s2 * cv->ws[2]);
            wp += C * j.ntap[f];
        }
    } else if (kind != 2 && cv->dt == GPUML_F32 && cv->ws[2] == 1 && cv->ws[1] == S && cv->ws[0] == RS) j.wk = (const float *)gpuml_tensor_data(cv->wt);
    else if (kind != 2)
        for (c = 0; c < C; c++)
            for (s = 0; s < RS; s++) mem[c * RS + s] = gpuml__cv_ld(cv->dt, cv->wt, c * cv->ws[0] + (s / S) * cv->ws[1] + (s % S) * cv->ws[2]);
    if (j.flat == 2) gpuml__parallel_for(ctx->pool, planes, 1, gpuml__dwp_sub_planes, &j);
    else if (j.flat) {
        gpuml__dwp_flat_setup(&j);
        gpuml__parallel_for(ctx->pool, planes, 1, gpuml__dwp_flat_planes, &j);
        if (kind == 2) gpuml__parallel_for(ctx->pool, C, 64, gpuml__dwp_bwf_sum, &j);
    } else if (kind == 2) {
        gpuml__parallel_for(ctx->pool, planes, 1, gpuml__dwp_bwf_planes, &j);
        gpuml__parallel_for(ctx->pool, C, 64, gpuml__dwp_bwf_sum, &j);
    } else
        gpuml__parallel_for(ctx->pool, planes * j.nb, 1, gpuml__dwp_out_rows, &j);
    gpuml__aligned_free(mem);
    *st = GPUML_SUCCESS;
    return 1;
}
GPUML__FN int gpuml__dwp_run(gpuml_ctx *ctx, const gpuml__cv *cv, int kind, gpuml_status *st, const char *op)
{
    return gpuml__dwp_run_p(ctx, cv, kind, 0, 0, st, op);
}
typedef struct gpuml__dw_cpu {
    const gpuml__cv *cv, *cvk;   /* cvk: cv with kg = K, groups 1 (gpuml__cv_epi_rows over a whole row of channels) */
    const float *wt;             /* [R*S][C] */
    float *buf;                  /* per thread: R input rows of W*C floats, then an output row of Q*C */
    int64_t per;                 /* floats a thread */
    int x_in_place, y_in_place;
} gpuml__dw_cpu;
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX512_TARGET GPUML__FN void gpuml__dw_px_avx512(float *o, const float *const *rows, const float *wt, int64_t C, int64_t R,
                                                         int64_t S, int64_t s0, int64_t s1, int64_t wb, int64_t dil)
{
    int64_t c = 0, r, s;
    for (; c + 64 <= C; c += 64) {
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (r = 0; r < R; r++) {
            if (!rows[r]) continue;
            for (s = s0; s < s1; s++) {
                const float *x = rows[r] + (wb + s * dil) * C + c, *w = wt + (r * S + s) * C + c;
                a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x), _mm512_loadu_ps(w), a0);
                a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 16), _mm512_loadu_ps(w + 16), a1);
                a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 32), _mm512_loadu_ps(w + 32), a2);
                a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + 48), _mm512_loadu_ps(w + 48), a3);
            }
        }
        _mm512_storeu_ps(o + c, a0); _mm512_storeu_ps(o + c + 16, a1);
        _mm512_storeu_ps(o + c + 32, a2); _mm512_storeu_ps(o + c + 48, a3);
    }
    for (; c < C; c += 16) {
        const __mmask16 m = C - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (C - c)) - 1u);
        __m512 a = _mm512_setzero_ps();
        for (r = 0; r < R; r++) {
            if (!rows[r]) continue;
            for (s = s0; s < s1; s++)
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, rows[r] + (wb + s * dil) * C + c), _mm512_maskz_loadu_ps(m, wt + (r * S + s) * C + c), a);
        }
        _mm512_mask_storeu_ps(o + c, m, a);
    }
}
GPUML__AVX2_TARGET GPUML__FN void gpuml__dw_px_avx2(float *o, const float *const *rows, const float *wt, int64_t C, int64_t R,
                                                     int64_t S, int64_t s0, int64_t s1, int64_t wb, int64_t dil)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t c = 0, r, s;
    for (; c + 32 <= C; c += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (r = 0; r < R; r++) {
            if (!rows[r]) continue;
            for (s = s0; s < s1; s++) {
                const float *x = rows[r] + (wb + s * dil) * C + c, *w = wt + (r * S + s) * C + c;
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(w), a0);
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), _mm256_loadu_ps(w + 8), a1);
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 16), _mm256_loadu_ps(w + 16), a2);
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 24), _mm256_loadu_ps(w + 24), a3);
            }
        }
        _mm256_storeu_ps(o + c, a0); _mm256_storeu_ps(o + c + 8, a1);
        _mm256_storeu_ps(o + c + 16, a2); _mm256_storeu_ps(o + c + 24, a3);
    }
    for (; c < C; c += 8) {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)GPUML__MIN(C - c, (int64_t)8)), idx);
        __m256 a = _mm256_setzero_ps();
        for (r = 0; r < R; r++) {
            if (!rows[r]) continue;
            for (s = s0; s < s1; s++)
                a = _mm256_fmadd_ps(_mm256_maskload_ps(rows[r] + (wb + s * dil) * C + c, m), _mm256_maskload_ps(wt + (r * S + s) * C + c, m), a);
        }
        _mm256_maskstore_ps(o + c, m, a);
    }
}
#endif
GPUML__FN void gpuml__dw_px(float *o, const float *const *rows, const float *wt, int64_t C, int64_t R, int64_t S, int64_t s0,
                            int64_t s1, int64_t wb, int64_t dil)
{
    int64_t c, r, s;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__dw_px_avx512(o, rows, wt, C, R, S, s0, s1, wb, dil); return; }
    if (gpuml__cpu_simd() >= 1) { gpuml__dw_px_avx2(o, rows, wt, C, R, S, s0, s1, wb, dil); return; }
#endif
    for (c = 0; c < C; c++) o[c] = 0.0f;
    for (r = 0; r < R; r++) {
        if (!rows[r]) continue;
        for (s = s0; s < s1; s++) {
            const float *x = rows[r] + (wb + s * dil) * C, *w = wt + (r * S + s) * C;
            for (c = 0; c < C; c++) o[c] += x[c] * w[c];
        }
    }
}
/* output rows (n, p) [b, e) */
GPUML__FN void gpuml__dw_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dw_cpu *d = (const gpuml__dw_cpu *)arg;
    const gpuml__cv *cv = d->cv;
    const int64_t C = cv->c, es = (int64_t)gpuml__dtype_sizes[cv->dt];
    float *rb = d->buf + (int64_t)tid * d->per, *ob = rb + cv->r * cv->w * C;
    const float *rows[64];
    int64_t np, r, q, w;
    for (np = b; np < e; np++) {
        const int64_t n = np / cv->p, p = np % cv->p;
        for (r = 0; r < cv->r; r++) {
            const int64_t h = p * cv->sh - cv->pt + r * cv->dh;
            const int64_t off = n * cv->xs[0] + h * cv->xs[1];
            rows[r] = NULL;
            if (h < 0 || h >= cv->h) continue;
            if (d->x_in_place) { rows[r] = (const float *)gpuml_tensor_data(cv->x) + off; continue; }
            if (cv->xs[3] != 1) gpuml__pool_row_ld(cv, cv->x, cv->xs, cv->w, n, h, rb + r * cv->w * C, ob);   /* NCHW: plane rows */
            else
                for (w = 0; w < cv->w; w++) {   /* the row's pixels as f32 [W][C] */
                    float *o = rb + (r * cv->w + w) * C;
                    const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->x) + (off + w * cv->xs[2]) * es, es, C, o);
                    if (v != o) memcpy(o, v, sizeof(float) * (size_t)C);
                }
            rows[r] = rb + r * cv->w * C;
        }
        for (q = 0; q < cv->q; q++) {
            /* the taps s inside the row: 0 <= wb + s * dw < W */
            const int64_t wb = q * cv->sw - cv->pl;
            const int64_t s0 = wb >= 0 ? 0 : (-wb + cv->dw - 1) / cv->dw;
            const int64_t s1 = wb >= cv->w ? 0 : GPUML__MIN(cv->s, (cv->w - wb + cv->dw - 1) / cv->dw);
            float *o = d->y_in_place ? (float *)gpuml_tensor_data(cv->y) + n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] : ob + q * C;
            gpuml__dw_px(o, rows, d->wt, C, cv->r, cv->s, s0, GPUML__MAX(s0, s1), wb, cv->dw);
        }
        if (!d->y_in_place && cv->ys[3] != 1) {   /* NCHW y: the epilogue on the channel rows, then transposed out */
            const float *bias = cv->bias ? (const float *)gpuml_tensor_data(cv->bias) : NULL;
            float *resb = ob + cv->q * C;
            if (cv->res) gpuml__pool_row_ld(cv, cv->res, cv->rs, cv->q, n, p, resb, resb + cv->q * C);
            if (bias || cv->act || cv->res)
                for (q = 0; q < cv->q; q++) gpuml__epi_run(ob + q * C, ob + q * C, bias, 1, cv->act, cv->res ? resb + q * C : NULL, C);
            gpuml__pool_row_st(cv, cv->y, cv->ys, cv->q, n, p, ob, resb);
        } else if (!d->y_in_place || cv->bias || cv->act || cv->res) {   /* epilogue, and y's dtype / layout */
            gpuml__cv_cpu j;
            memset(&j, 0, sizeof j);
            j.cv = d->cvk; j.t = d->y_in_place ? NULL : ob; j.ldt = C; j.m0 = np * cv->q;
            gpuml__cv_epi_rows(&j, 0, cv->q, tid);
        }
    }
}
/* a[i] += d[i] * x[i], i < n */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX512_TARGET GPUML__FN void gpuml__vfma_acc_avx512(float *a, const float *d, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(a + i, _mm512_fmadd_ps(_mm512_loadu_ps(d + i), _mm512_loadu_ps(x + i), _mm512_loadu_ps(a + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(a + i, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, d + i), _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, a + i)));
    }
}
GPUML__AVX2_TARGET GPUML__FN void gpuml__vfma_acc_avx2(float *a, const float *d, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(a + i, _mm256_fmadd_ps(_mm256_loadu_ps(d + i), _mm256_loadu_ps(x + i), _mm256_loadu_ps(a + i)));
    for (; i < n; i++) a[i] += d[i] * x[i];
}
#endif
GPUML__FN void gpuml__vfma_acc(float *a, const float *d, const float *x, int64_t n)
{
    int64_t i;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 2) { gpuml__vfma_acc_avx512(a, d, x, n); return; }
    if (gpuml__cpu_simd() >= 1) { gpuml__vfma_acc_avx2(a, d, x, n); return; }
#endif
    for (i = 0; i < n; i++) a[i] += d[i] * x[i];
}
/* Depthwise backward filter (f32, x and dy with channels contiguous): dw[k][r][s] = the sum over the
   pixels (n, p, q) of dy[n, p, q, k] x[n, h, w, k].  The output rows (n, p) split into G groups (G
   fixed by the shape, not the thread count: the same sums in the same order on any pool); a task sums
   its group's pixel and tap products into its own [R*S][C] partial, channels contiguous (dy's and x's
   pixels read as runs); the partials are summed in group order at the end.  Before: im2col with runs
   of one element and a GEMM of one row a group (0.19 GB/s on MobileNet's 3x3 layers). */
#define GPUML__DW_BWF_GROUPS 32
typedef struct gpuml__dw_bwf {
    const gpuml__cv *cv;
    float *part;   /* G x [R*S][C] */
    int64_t groups;
    float *buf;    /* per thread (per floats), where x or dy is not f32 with channels contiguous: dy's row
                      and x's row as f32 [Q][C] / [W][C], a plane row */
    int64_t per;
} gpuml__dw_bwf;
GPUML__FN void gpuml__dw_bwf_groups(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dw_bwf *j = (const gpuml__dw_bwf *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t C = cv->c, np_all = cv->n * cv->p;
    const int xd = cv->dt == GPUML_F32 && cv->xs[3] == 1, yd = cv->dt == GPUML_F32 && cv->ys[3] == 1;
    float *yr = xd && yd ? NULL : j->buf + tid * j->per, *xr = yr ? yr + cv->q * C : NULL, *tw = xr ? xr + cv->w * C : NULL;
    const int64_t qst = yd ? cv->ys[2] : C, wst = xd ? cv->xs[2] : C;
    int64_t g, np, r, q, s;
    for (g = b; g < e; g++) {
        float *acc = j->part + g * cv->r * cv->s * C;
        memset(acc, 0, sizeof(float) * (size_t)(cv->r * cv->s * C));
        for (np = g * np_all / j->groups; np < (g + 1) * np_all / j->groups; np++) {
            const int64_t n = np / cv->p, p = np % cv->p;
            const float *drow = yd ? (const float *)gpuml_tensor_data(cv->y) + n * cv->ys[0] + p * cv->ys[1] : yr;
            if (!yd) gpuml__pool_row_ld(cv, cv->y, cv->ys, cv->q, n, p, yr, tw);
            for (r = 0; r < cv->r; r++) {
                const int64_t h = p * cv->sh - cv->pt + r * cv->dh;
                const float *xrow;
                if (h < 0 || h >= cv->h) continue;
                xrow = xd ? (const float *)gpuml_tensor_data(cv->x) + n * cv->xs[0] + h * cv->xs[1] : xr;
                if (!xd) gpuml__pool_row_ld(cv, cv->x, cv->xs, cv->w, n, h, xr, tw);
                for (q = 0; q < cv->q; q++) {
                    const int64_t wb = q * cv->sw - cv->pl;
                    const int64_t s0 = wb >= 0 ? 0 : (-wb + cv->dw - 1) / cv->dw;
                    const int64_t s1 = wb >= cv->w ? 0 : GPUML__MIN(cv->s, (cv->w - wb + cv->dw - 1) / cv->dw);
                    for (s = s0; s < s1; s++)
                        gpuml__vfma_acc(acc + (r * cv->s + s) * C, drow + q * qst, xrow + (wb + s * cv->dw) * wst, C);
                }
            }
        }
    }
}
GPUML__FN void gpuml__dw_bwf_sum(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dw_bwf *j = (const gpuml__dw_bwf *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t C = cv->c, rs = cv->r * cv->s;
    int64_t k, t, g;
    (void)tid;
    for (k = b; k < e; k++)
        for (t = 0; t < rs; t++) {
            float v = 0.0f;
            for (g = 0; g < j->groups; g++) v += j->part[(g * rs + t) * C + k];
            gpuml__cv_st(cv->dt, cv->wt, k * cv->ws[0] + (t / cv->s) * cv->ws[1] + (t % cv->s) * cv->ws[2], v);
        }
}
/* 1: ran (or failed with a message); 0: not this path's shape */
GPUML__FN int gpuml__dw_cpu_bwf(gpuml_ctx *ctx, const gpuml__cv *cv, gpuml_status *st, const char *op)
{
    gpuml__dw_bwf j;
    const int bufs = !(cv->dt == GPUML_F32 && cv->xs[3] == 1 && cv->ys[3] == 1);
    if (cv->cg != 1 || cv->kg != 1) return 0;
    if (cv->xs[3] != 1 && gpuml__dwp_run(ctx, cv, 2, st, op)) return 1;   /* NCHW x: in planes */
    j.cv = cv;
    j.groups = GPUML__MAX(GPUML__MIN((int64_t)GPUML__DW_BWF_GROUPS, cv->n * cv->p), (int64_t)1);
    j.per = bufs ? (cv->q + cv->w) * cv->c + GPUML__MAX(cv->w, cv->q) + 16 : 0;
    j.part = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(j.groups * cv->r * cv->s * cv->c + j.per * gpuml__pool_size(ctx->pool)) + 1);
    j.buf = j.part ? j.part + j.groups * cv->r * cv->s * cv->c : NULL;
    if (!j.part) { *st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op); return 1; }
    gpuml__parallel_for(ctx->pool, j.groups, 1, gpuml__dw_bwf_groups, &j);
    gpuml__parallel_for(ctx->pool, cv->c, 64, gpuml__dw_bwf_sum, &j);
    gpuml__aligned_free(j.part);
    *st = GPUML_SUCCESS;
    return 1;
}
/* Depthwise backward data (f32, dx and dy with channels contiguous): each dx pixel is the sum of its
   taps' dy pixels times the taps' weights, the channels a vector, the taps in (r, s) order (the
   weights as f32 [R*S][C], d->wt).  dx rows (n, h) [b, e). */
/* the depthwise weights as f32 [R*S][C] (channels contiguous: the vector lanes) */
GPUML__FN void gpuml__dw_wt(const gpuml__cv *cv, float *wt)
{
    int64_t k, r, s;
#if GPUML__HAVE_AVX2_PATH
    if (cv->dt == GPUML_F32 && cv->ws[2] == 1 && cv->ws[1] == cv->s && gpuml__cpu_simd() >= 2) {   /* KCRS: each channel's taps a row */
        gpuml__cl_tr_avx512((float *)gpuml_tensor_data(cv->wt), cv->ws[0], cv->r * cv->s, cv->c, wt, 1);
        return;
    }
#endif
    for (k = 0; k < cv->k; k++)
        for (r = 0; r < cv->r; r++)
            for (s = 0; s < cv->s; s++)
                wt[(r * cv->s + s) * cv->c + k] = gpuml__cv_ld(cv->dt, cv->wt, k * cv->ws[0] + r * cv->ws[1] + s * cv->ws[2]);
}
GPUML__FN void gpuml__dw_bwd_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__dw_cpu *d = (const gpuml__dw_cpu *)arg;
    const gpuml__cv *cv = d->cv;
    const int64_t C = cv->c;
    /* dx / dy in place (f32, channels contiguous), else rows converted to f32 [W][C]: rb, dy's row
       of each tap row r; ob, dx's row */
    const int xd = cv->dt == GPUML_F32 && cv->xs[3] == 1, yd = cv->dt == GPUML_F32 && cv->ys[3] == 1;
    float *rb = xd && yd ? NULL : d->buf + tid * d->per, *ob = rb ? rb + cv->r * cv->q * C : NULL, *tw = ob ? ob + cv->w * C : NULL;
    const int64_t qst = yd ? cv->ys[2] : C;
    const float *yrow[64];
    int64_t nh, w, r, s;
    for (nh = b; nh < e; nh++) {
        const int64_t n = nh / cv->h, h = nh % cv->h;
        for (r = 0; r < cv->r; r++) {
            const int64_t vp = h + cv->pt - r * cv->dh, p = vp / cv->sh;
            yrow[r] = NULL;
            if (vp < 0 || vp % cv->sh || p >= cv->p) continue;
            if (yd) yrow[r] = (const float *)gpuml_tensor_data(cv->y) + n * cv->ys[0] + p * cv->ys[1];
            else {
                gpuml__pool_row_ld(cv, cv->y, cv->ys, cv->q, n, p, rb + r * cv->q * C, tw);
                yrow[r] = rb + r * cv->q * C;
            }
        }
        for (w = 0; w < cv->w; w++) {
            float *o = xd ? (float *)gpuml_tensor_data(cv->x) + n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2] : ob + w * C;
            memset(o, 0, sizeof(float) * (size_t)C);
            for (r = 0; r < cv->r; r++) {
                if (!yrow[r]) continue;
                for (s = 0; s < cv->s; s++) {
                    const int64_t vq = w + cv->pl - s * cv->dw, q = vq / cv->sw;
                    if (vq < 0 || vq % cv->sw || q >= cv->q) continue;
                    gpuml__vfma_acc(o, yrow[r] + q * qst, d->wt + (r * cv->s + s) * C, C);
                }
            }
        }
        if (!xd) gpuml__pool_row_st(cv, cv->x, cv->xs, cv->w, n, h, ob, tw);
    }
}
GPUML__FN int gpuml__dw_cpu_bwd(gpuml_ctx *ctx, const gpuml__cv *cv, gpuml_status *st, const char *op)
{
    gpuml__dw_cpu d;
    float *wt;
    int64_t nt = gpuml__pool_size(ctx->pool);
    const int bufs = !(cv->dt == GPUML_F32 && cv->xs[3] == 1 && cv->ys[3] == 1);
    if (cv->cg != 1 || cv->kg != 1 || cv->r > 64) return 0;
    if (cv->xs[3] != 1 && gpuml__dwp_run(ctx, cv, 1, st, op)) return 1;   /* NCHW dx: in planes */
    memset(&d, 0, sizeof d);
    d.cv = cv;
    d.per = bufs ? (cv->r * cv->q + cv->w) * cv->c + GPUML__MAX(cv->w, cv->q) + 16 : 0;
    wt = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(cv->r * cv->s * cv->c + nt * d.per) + 1);
    if (!wt) { *st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op); return 1; }
    gpuml__dw_wt(cv, wt);
    d.wt = wt; d.buf = wt + cv->r * cv->s * cv->c;
    gpuml__parallel_for(ctx->pool, cv->n * cv->h, 1, gpuml__dw_bwd_rows, &d);
    gpuml__aligned_free(wt);
    *st = GPUML_SUCCESS;
    return 1;
}
/* 1: ran (or failed with a message); 0: not this path's shape (the direct loops take it) */
GPUML__FN int gpuml__dw_cpu_fwd(gpuml_ctx *ctx, const gpuml__cv *cv, gpuml_status *st, const char *op)
{
    gpuml__dw_cpu d;
    gpuml__cv cvk;
    float *wt;
    int64_t nt = gpuml__pool_size(ctx->pool);
    if (cv->cg != 1 || cv->kg != 1 || cv->r > 64) return 0;
    if (cv->xs[3] != 1 && gpuml__dwp_run(ctx, cv, 0, st, op)) return 1;   /* NCHW: in planes */
    memset(&d, 0, sizeof d);
    cvk = *cv; cvk.kg = cv->k; cvk.groups = 1;
    d.cv = cv; d.cvk = &cvk;
    d.x_in_place = cv->dt == GPUML_F32 && cv->xs[3] == 1 && cv->xs[2] == cv->c;
    d.y_in_place = cv->dt == GPUML_F32 && cv->ys[3] == 1 && !(cv->res && gpuml__overlap(cv->y, cv->res));
    /* R input rows, the output row, the residual's row (NCHW y), a plane row (ob also serves as the
       plane-row buffer before it is written) */
    d.per = (cv->r * cv->w + 2 * cv->q) * cv->c + GPUML__MAX(cv->w, cv->q) + 16;
    wt = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(cv->r * cv->s * cv->c + (int64_t)nt * d.per));
    if (!wt) { *st = gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op); return 1; }
    gpuml__dw_wt(cv, wt);
    d.wt = wt; d.buf = wt + cv->r * cv->s * cv->c;
    gpuml__parallel_for(ctx->pool, cv->n * cv->p, 1, gpuml__dw_rows, &d);
    gpuml__aligned_free(wt);
    *st = GPUML_SUCCESS;
    return 1;
}
/* rows [b, e) of the chunk's dy for group g as f32: t[m][kk] */
GPUML__FN void gpuml__cv_dy_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
    int64_t m;
    (void)tid;
    for (m = b; m < e; m++) {
        int64_t gm = j->m0 + m, q = gm % cv->q, p = (gm / cv->q) % cv->p, n = gm / (cv->q * cv->p);
        int64_t yo = n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] + j->g * cv->kg * cv->ys[3];
        float *o = j->t + m * j->ldt;
        const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->y) + yo * es, cv->ys[3] * es, cv->kg, o);
        if (v != o) memcpy(o, v, sizeof(float) * (size_t)cv->kg);
    }
}
/* col2im's tap lists along one dim (rows: n_in = H, taps R, n_out = P; columns: W, S, Q): for each
   input index i, at list[i * (taps + 1)] the count of the taps t whose output o = (i + pad - t * dil) /
   stride exists, then o * out_mul + t * tap_mul for each, in t order.  Found once a call (the col2im
   tasks only read them) */
GPUML__FN void gpuml__cv_c2i_list(int64_t n_in, int64_t taps, int pad, int dil, int stride, int64_t n_out, int64_t out_mul,
                                  int64_t tap_mul, int64_t *list)
{
    int64_t i, t;
    for (i = 0; i < n_in; i++) {
        int64_t *l = list + i * (taps + 1), cnt = 0;
        for (t = 0; t < taps; t++) {
            int64_t v = i + pad - t * dil, o;
            if (v < 0 || v % stride) continue;
            if ((o = v / stride) >= n_out) continue;
            l[1 + cnt++] = o * out_mul + t * tap_mul;
        }
        l[0] = cnt;
    }
}
/* col2im as a gather over dx rows (n - n0, h) [b, e) of group g: the chunk's col holds whole images.
   Each dx pixel's taps (the (r, p) of its row and the (s, q) of its column, j->c2i) sum their channel
   runs -- contiguous in col -- a tile of channels at a time (the order of the sums, r then s, is the
   one a per-channel loop would take), stored through the vector conversions or, f32 dx with unit
   channel stride, summed in place.  The taps of a pixel were tested per channel before: 50-79% of a
   stage-1 backward data on one core. */
GPUML__FN void gpuml__cv_col2im_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
    const int64_t *hl = j->c2i, *wl = j->c2i + cv->h * (cv->r + 1);
    char *xb = (char *)gpuml_tensor_data(cv->x);
    int64_t row, w, c, c0, a, bq;
    float acc[GPUML__TILE];
    (void)tid;
    for (row = b; row < e; row++) {
        const int64_t nl = row / cv->h, h = row % cv->h, *rp = hl + h * (cv->r + 1) + 1, nr = rp[-1];
        const int64_t img = nl * cv->p * cv->q * cv->ncol;   /* this image's rows of col */
        for (w = 0; w < cv->w; w++) {
            const int64_t xo = (j->n0 + nl) * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2] + j->g * cv->cg * cv->xs[3];
            const int64_t *sq = wl + w * (cv->s + 1) + 1, ns = sq[-1];
            for (c0 = 0; c0 < cv->cg; c0 += GPUML__TILE) {
                const int64_t cn = GPUML__MIN((int64_t)GPUML__TILE, cv->cg - c0);
                float *d = cv->dt == GPUML_F32 && cv->xs[3] == 1 ? (float *)(void *)xb + xo + c0 : acc;
                for (c = 0; c < cn; c++) d[c] = 0.0f;
                for (a = 0; a < nr; a++)
                    for (bq = 0; bq < ns; bq++) {
                        const float *src = j->col + img + rp[a] + sq[bq] + c0;
                        for (c = 0; c < cn; c++) d[c] += src[c];
                    }
                if (d == acc) gpuml__cpu_st(cv->dt, xb + (xo + c0 * cv->xs[3]) * es, cv->xs[3] * es, cn, acc);
            }
        }
    }
}
/* d[i] += s[i], i < n (col2im's scatter) */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX2_TARGET GPUML__FN void gpuml__vacc_avx2(float *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a0 = _mm256_add_ps(_mm256_loadu_ps(d + i), _mm256_loadu_ps(s + i));
        __m256 a1 = _mm256_add_ps(_mm256_loadu_ps(d + i + 8), _mm256_loadu_ps(s + i + 8));
        __m256 a2 = _mm256_add_ps(_mm256_loadu_ps(d + i + 16), _mm256_loadu_ps(s + i + 16));
        __m256 a3 = _mm256_add_ps(_mm256_loadu_ps(d + i + 24), _mm256_loadu_ps(s + i + 24));
        _mm256_storeu_ps(d + i, a0); _mm256_storeu_ps(d + i + 8, a1);
        _mm256_storeu_ps(d + i + 16, a2); _mm256_storeu_ps(d + i + 24, a3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_add_ps(_mm256_loadu_ps(d + i), _mm256_loadu_ps(s + i)));
    if (i < n) {   /* the last 1-7 under a mask (the stem's runs are 21 floats) */
        const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i mk = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), idx);
        _mm256_maskstore_ps(d + i, mk, _mm256_add_ps(_mm256_maskload_ps(d + i, mk), _mm256_maskload_ps(s + i, mk)));
    }
}
#endif
GPUML__FN void gpuml__vacc(float *d, const float *s, int64_t n)
{
    int64_t i;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 1) { gpuml__vacc_avx2(d, s, n); return; }
#endif
    for (i = 0; i < n; i++) d[i] += s[i];
}
/* col2im as a scatter, f32 dx with unit channel stride: the chunk's dx rows (n - n0, h), h in [hs, he),
   of group g: a row no earlier chunk touched (h >= hprev) is zeroed first, then each of its taps (r, p)
   with p among the chunk's output rows [bp0, bp1) adds col's rows (p, q) -- the window row's S taps as
   one run of S*cg floats where x's pixels are cg apart and there is no horizontal dilation (the stem:
   112 runs of 21 floats a tap instead of ~4 runs of 3 a dx pixel and tap row), else S runs of cg --
   clipped to the row.  The chunk is whole images (bp0 = 0, bp1 = P, all rows) or a band of one
   image's output rows (col then stays in cache between the GEMM and here).  The sums' order (chunks,
   then r, q, s) differs from the gather's (r, s); the gather spent ~3 ns a run of 3. */
static int gpuml__cv_c2i_runs;         /* tests: 1 keeps the scatter's run form off AVX-512's row builder */
#if GPUML__HAVE_AVX2_PATH
/* The scatter's run form on AVX-512 for short runs (fewer than 16 channels), a dx row of L floats built
   16 at a time in a register: each of
   the nsrc tap rows' runs (src[a] + q * ncol, RL floats, starting q * qstep - shift along the row) that
   covers the chunk adds its lanes by a masked load, then one store (the runs' adds had loaded dx
   where the stores of the runs before them had not reached it: ~75% of the scatter's time on the stem).
   Four tap rows sum side by side, each over q in order, then into the row (another order of the same
   sums than the run form's). */
GPUML__AVX512_TARGET GPUML__FN void gpuml__c2i_row_avx512(float *xr, int64_t L, int fresh, const float *const *src, int64_t nsrc, int64_t Q,
                                                          int64_t ncol, int64_t RL, int64_t qstep, int64_t shift)
{
    int64_t c, a, q, q0 = 0, q1 = 0;
    for (c = 0; c < L; c += 16) {
        const int64_t lim = GPUML__MIN((int64_t)16, L - c);
        const __mmask16 mc = (__mmask16)((1u << lim) - 1u);
        /* the runs that reach the chunk: q0 the first whose end passes c, q1 the first starting at c + 16 or later */
        while (q0 < Q && q0 * qstep - shift + RL <= c) q0++;
        while (q1 < Q && q1 * qstep - shift < c + 16) q1++;
        __m512 acc = fresh ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mc, xr + c);
        for (a = 0; a < nsrc; a += 4) {   /* four tap rows' chains side by side (one chain was add-latency bound) */
            const int64_t na = GPUML__MIN((int64_t)4, nsrc - a);
            __m512 t0 = _mm512_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
            for (q = q0; q < q1; q++) {
                const int64_t off = c - (q * qstep - shift);   /* the run's element at lane 0 */
                const int64_t lo = off < 0 ? -off : 0, hi = GPUML__MIN(lim, RL - off);
                const __mmask16 m = lo < hi ? (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u)) : (__mmask16)0;
                const float *sq = src[a] + q * ncol + off;
                t0 = _mm512_add_ps(t0, _mm512_maskz_loadu_ps(m, sq));
                if (na > 1) t1 = _mm512_add_ps(t1, _mm512_maskz_loadu_ps(m, src[a + 1] + q * ncol + off));
                if (na > 2) t2 = _mm512_add_ps(t2, _mm512_maskz_loadu_ps(m, src[a + 2] + q * ncol + off));
                if (na > 3) t3 = _mm512_add_ps(t3, _mm512_maskz_loadu_ps(m, src[a + 3] + q * ncol + off));
            }
            acc = _mm512_add_ps(acc, _mm512_add_ps(_mm512_add_ps(t0, t1), _mm512_add_ps(t2, t3)));
        }
        _mm512_mask_storeu_ps(xr + c, mc, acc);
    }
}
#endif
GPUML__FN void gpuml__cv_col2im_scatter(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t *hl = j->c2i, cg = cv->cg, run = cv->dw == 1 && cv->xs[2] == cg, nh = j->he - j->hs;
    const int64_t orow = cv->q * cv->ncol;   /* col elements an output row */
    float *xb = (float *)gpuml_tensor_data(cv->x);
    int64_t row, w, a, q, s;
    (void)tid;
    for (row = b; row < e; row++) {
        const int64_t nl = row / nh, h = j->hs + row % nh, *rp = hl + h * (cv->r + 1) + 1, nr = rp[-1];
        const float *img = j->col + nl * (j->bp1 - j->bp0) * orow - j->bp0 * orow;   /* col row (p, q) of this image at img + p * orow + q * ncol */
        float *xr = xb + (j->n0 + nl) * cv->xs[0] + h * cv->xs[1] + j->g * cg;
#if GPUML__HAVE_AVX2_PATH
        if (run && cg < 16 && nr <= 64 && gpuml__cpu_simd() >= 2 && !gpuml__cv_c2i_runs) {   /* short runs (the stem's 3 channels) */
            const float *src[64];
            int64_t ns = 0;
            for (a = 0; a < nr; a++) {
                const int64_t p = rp[a] / orow;
                if (p >= j->bp0 && p < j->bp1) src[ns++] = img + rp[a];
            }
            gpuml__c2i_row_avx512(xr, cv->w * cg, h >= j->hprev, src, ns, cv->q, cv->ncol, cv->s * cg, cv->sw * cg, cv->pl * cg);
            continue;
        }
#endif
        if (h >= j->hprev) {
            if (run) memset(xr, 0, sizeof(float) * (size_t)(cv->w * cg));
            else for (w = 0; w < cv->w; w++) memset(xr + w * cv->xs[2], 0, sizeof(float) * (size_t)cg);
        }
        for (a = 0; a < nr; a++) {
            const int64_t p = rp[a] / orow;
            const float *src = img + rp[a];   /* col row (p, 0), tap row r */
            if (p < j->bp0 || p >= j->bp1) continue;
            for (q = 0; q < cv->q; q++, src += cv->ncol) {
                const int64_t w0 = q * cv->sw - cv->pl;
                if (run) {
                    const int64_t s0 = w0 < 0 ? -w0 : 0, s1 = GPUML__MIN(cv->s, cv->w - w0);
                    if (s0 < s1) gpuml__vacc(xr + (w0 + s0) * cg, src + s0 * cg, (s1 - s0) * cg);
                    continue;
                }
                for (s = 0; s < cv->s; s++) {
                    const int64_t wi = w0 + s * cv->dw;
                    if (wi >= 0 && wi < cv->w) gpuml__vacc(xr + wi * cv->xs[2], src + s * cg, cg);
                }
            }
        }
    }
}
/* weights as f32 [K][ncol] in (r, s, c) order, element (k, j) at wp[k * sk + j * sj] (sk = ncol,
   sj = 1; or transposed, sk = 1, sj = K); unpack: the other way, f32 -> w */
GPUML__FN void gpuml__cv_pack_w(const gpuml__cv *cv, float *wp, int unpack, int64_t sk, int64_t sj)
{
    int64_t k, r, s, c;
    if (!unpack && cv->dt == GPUML_F32 && sj == 1) {   /* f32 weights (e.g. KCRS) to [K][RSC]: no per-element dispatch */
        const float *w = (const float *)gpuml_tensor_data(cv->wt);
        for (k = 0; k < cv->k; k++) {
            float *f = wp + k * sk;
            for (r = 0; r < cv->r; r++)
                for (s = 0; s < cv->s; s++) {
                    const float *src = w + k * cv->ws[0] + r * cv->ws[1] + s * cv->ws[2];
                    for (c = 0; c < cv->cg; c++) *f++ = src[c * cv->ws[3]];
                }
        }
        return;
    }
    for (k = 0; k < cv->k; k++)
        for (r = 0; r < cv->r; r++)
            for (s = 0; s < cv->s; s++)
                for (c = 0; c < cv->cg; c++) {
                    int64_t off = k * cv->ws[0] + r * cv->ws[1] + s * cv->ws[2] + c * cv->ws[3];
                    float *f = wp + k * sk + ((r * cv->s + s) * cv->cg + c) * sj;
                    if (unpack) gpuml__cv_st(cv->dt, cv->wt, off, *f);
                    else *f = gpuml__cv_ld(cv->dt, cv->wt, off);
                }
}

/* Forward implicit GEMM: the im2col matrix X[m][j] of group g (m = (n, p, q), j = (r, s, c))
   is never written.  gpuml__cv_gather_panel fills the GEMM's packed panels (A's; B's where the
   GEMM computes the transposed product for a column-major C, NCHW y) straight from x, or from
   xp, a zero-padded f32 NHWC copy of x made where x is
   not f32 with unit channel stride, or where its channel runs are short (C < 16: the stem):
   on the padded copy with groups = 1 and no horizontal dilation a window row (s, c) is S*C
   contiguous floats, one vector transpose instead of S short ones. */
typedef struct gpuml__cv_gather {
    const gpuml__cv *cv;
    const float *x;         /* element (n, h, w, c) of the group at x[n*s0 + h*s1 + w*s2 + c] */
    const float *zero;      /* >= ncol zeros: padding taps, rows past the panel's edge */
    int64_t s0, s1, s2;
    int64_t h, w, pt, pl;   /* bounds and padding of that view (padded copy: its dims, 0, 0) */
    int64_t m0;             /* first row of the chunk */
    int64_t run;            /* j elements contiguous per (row, tap): cg, or S*cg on the padded copy */
} gpuml__cv_gather;

/* The runs of the panel's rows over k0 .. k0 + kc: packed into dst (ptrs NULL), or described as
   segments in ptrs / lens (W = 12, at most maxseg; returns their count, or -1 past maxseg). */
GPUML__FN int64_t gpuml__cv_gather_segs(const gpuml__cv_gather *ga, float *dst, int64_t W, int64_t i0, int64_t width, int64_t k0,
                                        int64_t kc, int simd, const float **ptrs, int64_t *lens, int64_t maxseg)
{
    const gpuml__cv *cv = ga->cv;
    const float *rowbuf[32], **rows = rowbuf;
    int64_t hb[32], wb[32], off[32], i, k = k0, end = k0 + kc, nseg = 0;
    /* inside: every row of the panel is real and all its taps are in bounds (no checks) */
    int inside = width == W;
    /* (n, p, q) of the first row by division, of the next ones by counting (64-bit divisions
       per row were ~10% of the stem's time) */
    int64_t q = (ga->m0 + i0) % cv->q, p = (ga->m0 + i0) / cv->q, n = p / cv->p;
    p %= cv->p;
    for (i = 0; i < W && i < 32; i++) {
        hb[i] = wb[i] = off[i] = 0;
        if (i < width) {
            hb[i] = p * cv->sh - ga->pt; wb[i] = q * cv->sw - ga->pl;
            off[i] = n * ga->s0 + hb[i] * ga->s1 + wb[i] * ga->s2;
            if (hb[i] < 0 || hb[i] + (cv->r - 1) * cv->dh >= ga->h || wb[i] < 0 || wb[i] + (cv->s - 1) * cv->dw >= ga->w) inside = 0;
            if (++q == cv->q) { q = 0; if (++p == cv->p) { p = 0; n++; } }
        }
    }
    while (k < end) {
        int64_t t = k / ga->run, c = k % ga->run, len = GPUML__MIN(ga->run - c, end - k);
        int64_t r = ga->run == cv->cg ? t / cv->s : t, s = ga->run == cv->cg ? t % cv->s : 0;
        int64_t to = r * cv->dh * ga->s1 + s * cv->dw * ga->s2 + c;
        if (ptrs) {
            if (nseg == maxseg) return -1;
            rows = ptrs + 12 * nseg;
            lens[nseg] = len;
        }
        nseg++;
        if (inside)
            for (i = 0; i < W && i < 32; i++) rows[i] = ga->x + off[i] + to;
        else
            for (i = 0; i < W && i < 32; i++) {
                int64_t h = hb[i] + r * cv->dh, w = wb[i] + s * cv->dw;
                rows[i] = i < width && h >= 0 && h < ga->h && w >= 0 && w < ga->w ? ga->x + off[i] + to : ga->zero;
            }
        if (!ptrs) gpuml__gemm_pack_ptrs(dst + (k - k0) * W, W, len, rows, simd);
        k += len;
    }
    return nseg;
}
GPUML__FN void gpuml__cv_gather_panel(const void *arg, float *dst, int64_t W, int64_t i0, int64_t width, int64_t k0,
                                      int64_t kc, int simd)
{
    gpuml__cv_gather_segs((const gpuml__cv_gather *)arg, dst, W, i0, width, k0, kc, simd, NULL, NULL, 0);
}
GPUML__FN int64_t gpuml__cv_gather_rows(const void *arg, const float **ptrs, int64_t *lens, int64_t maxseg, int64_t i0,
                                        int64_t k0, int64_t kc)
{
    return gpuml__cv_gather_segs((const gpuml__cv_gather *)arg, NULL, 12, i0, 12, k0, kc, 0, ptrs, lens, maxseg);
}
/* rows (n, hp) [b, e) of the padded copy xp [N][H + pt + pb][W + pl + pr][C] */
/* The backward filter's implicit GEMM: dw = dy^T @ X with X[m][j] the im2col matrix of group g, as the
   GEMM's B gathered by panel (gpuml__gemm_gather: dst[k * W + i] = X[k0 + k][i0 + i], k over the chunk's
   pixels from ga->m0).  The panel's columns i0 .. i0 + width split into the same runs at every pixel
   (a run: one tap's channels, or a window row's S*cg on the padded copy), found once a panel; then each
   pixel copies its runs, zero where they read padding.  Before, im2col wrote the whole column matrix
   and the GEMM packed it back: 7.4 MB written and read twice for the stem at batch 1. */
GPUML__FN void gpuml__cv_gather_bpanel(const void *arg, float *dst, int64_t W, int64_t i0, int64_t width, int64_t k0, int64_t kc,
                                       int simd)
{
    const gpuml__cv_gather *ga = (const gpuml__cv_gather *)arg;
    const gpuml__cv *cv = ga->cv;
    int64_t so[32], sl[32], sr[32], ss[32], nseg = 0, j = i0, k, i;
    int64_t q = (ga->m0 + k0) % cv->q, p = (ga->m0 + k0) / cv->q, n = p / cv->p;
    (void)simd;
    p %= cv->p;
    while (j < i0 + width && nseg < 32) {   /* (W <= 32: every run is at least one element) */
        const int64_t t = j / ga->run, c = j % ga->run, len = GPUML__MIN(ga->run - c, i0 + width - j);
        sr[nseg] = ga->run == cv->cg ? t / cv->s : t;
        ss[nseg] = ga->run == cv->cg ? t % cv->s : 0;
        so[nseg] = sr[nseg] * cv->dh * ga->s1 + ss[nseg] * cv->dw * ga->s2 + c;
        sl[nseg++] = len;
        j += len;
    }
    for (k = 0; k < kc; k++) {
        const int64_t hb = p * cv->sh - ga->pt, wb = q * cv->sw - ga->pl, off = n * ga->s0 + hb * ga->s1 + wb * ga->s2;
        const int inside = hb >= 0 && hb + (cv->r - 1) * cv->dh < ga->h && wb >= 0 && wb + (cv->s - 1) * cv->dw < ga->w;
        float *d = dst + k * W;
        int64_t g;
        for (g = 0; g < nseg; g++) {
            const int64_t h = hb + sr[g] * cv->dh, w = wb + ss[g] * cv->dw;
            if (inside || (h >= 0 && h < ga->h && w >= 0 && w < ga->w)) memcpy(d, ga->x + off + so[g], sizeof(float) * (size_t)sl[g]);
            else memset(d, 0, sizeof(float) * (size_t)sl[g]);
            d += sl[g];
        }
        for (i = width; i < W; i++) dst[k * W + i] = 0.0f;
        if (++q == cv->q) { q = 0; if (++p == cv->p) { p = 0; n++; } }
    }
}
GPUML__FN void gpuml__cv_pad_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_gather *ga = (const gpuml__cv_gather *)arg;
    const gpuml__cv *cv = ga->cv;
    float *xp = (float *)ga->x;
    int64_t row, w, c;
    (void)tid;
    for (row = b; row < e; row++) {
        int64_t n = row / ga->h, h = row % ga->h - cv->pt;
        float *o = xp + row * ga->s1;
        if (h < 0 || h >= cv->h) { memset(o, 0, sizeof(float) * (size_t)ga->s1); continue; }
        memset(o, 0, sizeof(float) * (size_t)(cv->pl * cv->c));
        for (w = 0; w < cv->w; w++) {
            int64_t off = n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2];
            float *d = o + (cv->pl + w) * cv->c;
            if (cv->dt == GPUML_F32 && cv->xs[3] == 1) memcpy(d, (const float *)gpuml_tensor_data(cv->x) + off, sizeof(float) * (size_t)cv->c);
            else if ((cv->dt == GPUML_F16 || cv->dt == GPUML_BF16) && cv->xs[3] == 1) {   /* vector conversions */
                int64_t c0;
                for (c0 = 0; c0 < cv->c; c0 += GPUML__TILE) {
                    const int64_t cn = GPUML__MIN((int64_t)GPUML__TILE, cv->c - c0);
                    const float *v = gpuml__cpu_ld(cv->dt, (const char *)gpuml_tensor_data(cv->x) + (off + c0) * 2, 2, cn, d + c0);
                    if (v != d + c0) memcpy(d + c0, v, sizeof(float) * (size_t)cn);
                }
            } else for (c = 0; c < cv->c; c++) d[c] = gpuml__cv_ld(cv->dt, cv->x, off + c * cv->xs[3]);
        }
        memset(o + (cv->pl + cv->w) * cv->c, 0, sizeof(float) * (size_t)(cv->pr * cv->c));
    }
}

/* Column budget of one chunk (floats): bounds the im2col buffer at 16 MiB (tests make it small
   to exercise the chunking). */
#ifndef GPUML__CV_CPU_BAND
#define GPUML__CV_CPU_BAND (256 << 10)   /* f32 elements of col a chunk of the CPU backward data's scatter (1 MB) */
#endif
#ifndef GPUML__CV_CPU_COL
#define GPUML__CV_CPU_COL (4 << 20)
#endif

/* Smallest image (output pixels) that the forward runs one image per chunk for, where y or x can
   be the GEMM's operand in place only image by image (NCHW, N > 1): below it the weights' B
   panels, packed once per image, would cost more than the temporary (tests make it small). */
#ifndef GPUML__CV_CPU_IMG
#define GPUML__CV_CPU_IMG 256
#endif

/* kind: 0 forward, 1 backward data, 2 backward filter */
/* 1 when the (n, row, col) dims of logical strides st merge into one stride st[2] */
GPUML__FN int gpuml__cv_rows_merge(const int64_t *st, int64_t n, int64_t rows, int64_t cols)
{
    return (rows == 1 || st[1] == cols * st[2]) && (n == 1 || st[0] == rows * cols * st[2]);
}
/* weight packing over k ranges on the pool (unpack: f32 -> w) */
typedef struct gpuml__cv_packjob { const gpuml__cv *cv; float *wp; int unpack; int64_t sk, sj; } gpuml__cv_packjob;
GPUML__FN void gpuml__cv_pack_task(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_packjob *pj = (const gpuml__cv_packjob *)arg;
    gpuml__cv part = *pj->cv;
    (void)tid;
    part.k = e - b;
    part.wt = pj->cv->wt;
    /* shift the weight view to k = b (a stack copy, no handle) */
    {
        gpuml_tensor v = *pj->cv->wt;
        v.offset += b * pj->cv->ws[0];
        part.wt = &v;
        gpuml__cv_pack_w(&part, pj->wp + b * pj->sk, pj->unpack, pj->sk, pj->sj);
    }
}
GPUML__FN void gpuml__cv_pack(gpuml_ctx *ctx, const gpuml__cv *cv, float *wp, int unpack)
{
    gpuml__cv_packjob pj;
    pj.cv = cv; pj.wp = wp; pj.unpack = unpack;
    pj.sk = cv->ncol; pj.sj = 1;
    gpuml__parallel_for(ctx->pool, cv->k, GPUML__MAX((int64_t)1, (int64_t)4096 / GPUML__MAX(cv->ncol, (int64_t)1)), gpuml__cv_pack_task, &pj);
}

/* CPU backward data of a stride-1 conv with a window larger than 1x1 as the forward conv of dy (the
   full correlation, as gpuml__cv_bwd_data_fwd on the GPU): wf[g*cg + c][r][s][k] = w[g*kg + k][R-1-r]
   [S-1-s][c], padding d*(R-1) - pad, the same dilation and groups -- the forward's implicit GEMM
   instead of a column matrix and its col2im pass.  Taken where the flip of the weights (an element
   copy) is small against the GEMM: at least 512 output pixels (gpuml__cv_cpu_bwd_data_fwd_ok;
   gpuml__cv_cpu_bwd_col: never, for tests).  ResNet-50 at batch 1, one core, GFLOP/s through the
   column matrix -> this way: 64 @56 3x3 103 -> 173, 128 @28 3x3 116-122 -> 165-166; 256 @14 (196
   pixels) keeps the column route, where the flip of 590K weights would cost a third of the GEMM
   (bench/NOTES_conv.md, "The fixes"). */
typedef struct gpuml__cv_flipjob { const gpuml__cv *cv; char *wf; int64_t fs[4]; } gpuml__cv_flipjob;
GPUML__FN void gpuml__cv_flip_task(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_flipjob *fj = (const gpuml__cv_flipjob *)arg;
    const gpuml__cv *cv = fj->cv;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
    const char *w = (const char *)gpuml_tensor_data(cv->wt);
    int64_t oc, r, s, k;
    (void)tid;
    for (oc = b; oc < e; oc++) {   /* wf's output channel: group g, input channel c of w */
        const int64_t g = oc / cv->cg, c = oc % cv->cg;
        for (r = 0; r < cv->r; r++)
            for (s = 0; s < cv->s; s++) {
                char *o = fj->wf + (oc * fj->fs[0] + r * fj->fs[1] + s * fj->fs[2]) * es;
                const char *i = w + ((g * cv->kg) * cv->ws[0] + (cv->r - 1 - r) * cv->ws[1] + (cv->s - 1 - s) * cv->ws[2] + c * cv->ws[3]) * es;
                if (es == 4)
                    for (k = 0; k < cv->kg; k++) memcpy(o + k * fj->fs[3] * 4, i + k * cv->ws[0] * 4, 4);
                else
                    for (k = 0; k < cv->kg; k++) memcpy(o + k * fj->fs[3] * es, i + k * cv->ws[0] * es, (size_t)es);
            }
    }
}
static int gpuml__cv_cpu_bwd_col;      /* tests: 1 keeps every CPU backward data on the column route */
static int gpuml__cv_cpu_bwd_gather;   /* tests: 1 keeps col2im a gather (gpuml__cv_col2im_rows) */
static int gpuml__cv_cpu_dw_direct;    /* tests: 1 keeps the CPU depthwise forward on the direct loops, its backward filter on im2col */
static int gpuml__cv_cpu_bwf_col;      /* tests: 1 keeps the CPU backward filter on im2col (no gathered B) */
static int64_t gpuml__cv_cpu_band_rows;   /* tests: > 0 sets the scatter's chunk rows (1: one output row a band) */
GPUML__FN int gpuml__cv_cpu_bwd_data_fwd_ok(const gpuml__cv *cv)
{
    const int64_t eh = cv->dh * (cv->r - 1), ew = cv->dw * (cv->s - 1);
    return cv->sh == 1 && cv->sw == 1 && !(cv->r == 1 && cv->s == 1) && cv->n * cv->p * cv->q >= 512 && cv->pt >= 0 && cv->pb >= 0 &&
           cv->pl >= 0 && cv->pr >= 0 && cv->pt <= eh && cv->pb <= eh && cv->pl <= ew && cv->pr <= ew && eh <= INT32_MAX && ew <= INT32_MAX &&
           !gpuml__cv_cpu_bwd_col;
}
GPUML__FN gpuml_status gpuml__cv_cpu_bwd_data_fwd(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    const int eh = cv->dh * (int)(cv->r - 1), ew = cv->dw * (int)(cv->s - 1);
    int64_t shape[4];
    gpuml__cv_flipjob fj;
    gpuml_conv2d_desc d;
    gpuml_tensor *wf;
    gpuml_status st;
    shape[0] = cv->c;
    if (cv->layout == GPUML_LAYOUT_NCHW) {   /* KCRS [C][kg][R][S]: logical (k, r, s, c) strides */
        shape[1] = cv->kg; shape[2] = cv->r; shape[3] = cv->s;
        fj.fs[0] = cv->kg * cv->r * cv->s; fj.fs[1] = cv->s; fj.fs[2] = 1; fj.fs[3] = cv->r * cv->s;
    } else {                                  /* KRSC [C][R][S][kg] */
        shape[1] = cv->r; shape[2] = cv->s; shape[3] = cv->kg;
        fj.fs[0] = cv->r * cv->s * cv->kg; fj.fs[1] = cv->s * cv->kg; fj.fs[2] = cv->kg; fj.fs[3] = 1;
    }
    wf = gpuml__tensor_new(ctx, cv->dt, 4, shape, op);
    if (!wf) return ctx->status;
    fj.cv = cv; fj.wf = (char *)gpuml_tensor_data(wf);
    gpuml__parallel_for(ctx->pool, cv->c, GPUML__MAX((int64_t)1, (int64_t)4096 / GPUML__MAX(cv->r * cv->s * cv->kg, (int64_t)1)),
                        gpuml__cv_flip_task, &fj);
    memset(&d, 0, sizeof d);
    d.stride[0] = d.stride[1] = 1;
    d.pad[0] = eh - cv->pt; d.pad[1] = eh - cv->pb; d.pad[2] = ew - cv->pl; d.pad[3] = ew - cv->pr;
    d.dilation[0] = cv->dh; d.dilation[1] = cv->dw;
    d.groups = cv->groups;
    d.layout = (gpuml_layout)cv->layout;
    st = gpuml_conv2d(ctx, (gpuml_tensor *)cv->x, cv->y, wf, &d);
    gpuml_tensor_free(wf);
    return st;
}

GPUML__FN gpuml_status gpuml__cv_cpu_run(gpuml_ctx *ctx, const gpuml__cv *cv, int kind, const char *op)
{
    gpuml__cv_cpu j;
    int64_t M = cv->n * cv->p * cv->q, pq = cv->p * cv->q, rows, m0, mc = 0, g, es = (int64_t)gpuml__dtype_sizes[cv->dt];
    int rc = 0, band = 0, gt = gpuml__gemm_type(cv->dt);
    /* operands the GEMM can read in place: KRSC-contiguous weights (any float dtype), y (f32)
       and, for 1x1 stride-1 unpadded convs, x, where their (n, row, col) dims merge.  (Forward
       layers with fewer output pixels than channels used to run as y^T = w @ col^T; since the
       GEMM transposes B panels with vector shuffles, y = col @ w^T is faster there too: no
       transposing epilogue, and the pixel count is the M edge of a 12-row kernel instead of the
       N edge of a 32-column one.) */
    /* the weights as [K][ncol], read in place where KRSC-contiguous (forward: B = w^T, which the
       GEMM packs with vector transposes), else packed to f32 */
    int w_direct = (kind == 1 || (kind == 0 && cv->cg > 1)) && (cv->ws[3] == 1 || cv->cg == 1) && (cv->ws[2] == cv->cg || cv->s == 1) &&
                   (cv->ws[1] == cv->s * cv->cg || cv->r == 1) && (cv->ws[0] == cv->ncol || cv->k == 1);
    /* y / x as the GEMM's C / A in place: their (row, col) dims merge within an image (y f32; x
       for 1x1 stride-1 unpadded convs); across the batch as well, or else (NCHW with N > 1)
       the forward runs one image per chunk where images are large enough to amortize packing
       the weights once per image -- instead of a temporary and a transposing epilogue (3-4x) */
    int y_img = kind == 0 && cv->dt == GPUML_F32 && gpuml__cv_rows_merge(cv->ys, 1, cv->p, cv->q) &&
                !(cv->res && gpuml__overlap(cv->y, cv->res));   /* a residual given in place: the GEMM would overwrite it */
    int x_img = kind == 0 && cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt && !cv->pb && !cv->pl && !cv->pr &&
                gpuml__cv_rows_merge(cv->xs, 1, cv->h, cv->w);
    int per_image = kind == 0 && cv->cg > 1 && cv->n > 1 && pq >= GPUML__CV_CPU_IMG &&
                    ((y_img && !gpuml__cv_rows_merge(cv->ys, cv->n, cv->p, cv->q)) || (x_img && !gpuml__cv_rows_merge(cv->xs, cv->n, cv->h, cv->w)));
    int y_direct = y_img && (per_image || gpuml__cv_rows_merge(cv->ys, cv->n, cv->p, cv->q));
    int x_direct = x_img && (per_image || gpuml__cv_rows_merge(cv->xs, cv->n, cv->h, cv->w));
    /* forward otherwise: implicit GEMM (gpuml__cv_gather_panel), on a padded f32 copy of x where
       x is not f32 with unit channel stride or its channel runs are short */
    /* backward: dy as the GEMM's A in place where its (n, p, q) dims merge (any float dtype: the GEMM
       converts while packing); backward data of a 1x1 stride-1 unpadded f32 conv: dx as the GEMM's
       C in place (col2im is then the identity); backward filter with f32 KRSC-contiguous dw: dw as
       the GEMM's C (no f32 buffer to zero and unpack: 65-70% of a stage-4 call before) */
    int dy_direct = (kind == 1 || kind == 2) && gpuml__cv_rows_merge(cv->ys, cv->n, cv->p, cv->q);
    int dx_direct = kind == 1 && cv->dt == GPUML_F32 && cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt &&
                    !cv->pb && !cv->pl && !cv->pr && gpuml__cv_rows_merge(cv->xs, cv->n, cv->h, cv->w);
    int dw_direct = kind == 2 && M > 0 && cv->dt == GPUML_F32 && (cv->ws[3] == 1 || cv->cg == 1) && (cv->ws[2] == cv->cg || cv->s == 1) &&
                    (cv->ws[1] == cv->s * cv->cg || cv->r == 1) && (cv->ws[0] == cv->ncol || cv->k == 1);
    /* backward filter of a 1x1 stride-1 unpadded conv: x is its own column matrix (read in place) */
    /* col2im as a scatter of runs (gpuml__cv_col2im_scatter) where dx is f32 with unit channel stride */
    int c2i_scatter = kind == 1 && cv->dt == GPUML_F32 && cv->xs[3] == 1 && !gpuml__cv_cpu_bwd_gather;
    int xcol_direct = kind == 2 && cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt && !cv->pb && !cv->pl && !cv->pr &&
                      gpuml__cv_rows_merge(cv->xs, cv->n, cv->h, cv->w);
    /* backward filter otherwise: the column matrix gathered into the GEMM's B panels
       (gpuml__cv_gather_bpanel) where its runs are not short; else im2col into a buffer */
    int bgather = kind == 2 && !xcol_direct && ((cv->groups == 1 && cv->dw == 1) || cv->cg >= 8) && !gpuml__cv_cpu_bwf_col;
    int implicit = (kind == 0 && cv->cg > 1 && !x_direct) || bgather;
    int xcopy = implicit && (!(cv->dt == GPUML_F32 && cv->xs[3] == 1) || cv->cg < 16);
    const char *wbase = w_direct ? (const char *)gpuml_tensor_data(cv->wt) : NULL;
    gpuml__cv_gather ga;
    gpuml__gemm_gather gg;
    float *xp = NULL, *zero = NULL;
    memset(&j, 0, sizeof j);
    memset(&ga, 0, sizeof ga);
    j.cv = cv;
    if (cv->cg == 1 && !gpuml__cv_cpu_dw_direct) {   /* depthwise, vectorized over the channels */
        gpuml_status st = GPUML_SUCCESS;
        if (kind == 0 ? gpuml__dw_cpu_fwd(ctx, cv, &st, op) : kind == 1 ? gpuml__dw_cpu_bwd(ctx, cv, &st, op) : gpuml__dw_cpu_bwf(ctx, cv, &st, op))
            return st;
    }
    if (!w_direct && !dw_direct) {
        j.wp = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(cv->k * cv->ncol) + 1);
        if (!j.wp) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op);
        if (kind != 2) gpuml__cv_pack(ctx, cv, j.wp, 0);
        else if (M == 0) memset(j.wp, 0, sizeof(float) * (size_t)(cv->k * cv->ncol));   /* else the first chunk's GEMM writes it (beta 0) */
        wbase = (const char *)j.wp;
    }
    if (implicit) {
        ga.cv = cv;
        ga.run = cv->cg;
        zero = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(cv->ncol + 16));
        if (zero) memset(zero, 0, sizeof(float) * (size_t)(cv->ncol + 16));
        if (xcopy) {
            int64_t hp = cv->h + cv->pt + cv->pb, wp = cv->w + cv->pl + cv->pr;
            xp = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(cv->n * hp * wp * cv->c) + 1);
            ga.x = xp; ga.s2 = cv->c; ga.s1 = wp * cv->c; ga.s0 = hp * wp * cv->c;
            ga.h = hp; ga.w = wp;
            if (xp) gpuml__parallel_for(ctx->pool, cv->n * hp, 4, gpuml__cv_pad_rows, &ga);
            if (cv->groups == 1 && cv->dw == 1) ga.run = cv->s * cv->cg;
        } else {
            ga.x = (const float *)gpuml_tensor_data(cv->x);
            ga.s0 = cv->xs[0]; ga.s1 = cv->xs[1]; ga.s2 = cv->xs[2];
            ga.h = cv->h; ga.w = cv->w; ga.pt = cv->pt; ga.pl = cv->pl;
        }
        ga.zero = zero;
        gg.fn = bgather ? gpuml__cv_gather_bpanel : gpuml__cv_gather_panel; gg.arg = &ga;
        gg.rows = bgather ? NULL : gpuml__cv_gather_rows;
        if (!zero || (xcopy && !xp)) {
            gpuml__aligned_free(zero); gpuml__aligned_free(xp); gpuml__aligned_free(j.wp);
            return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op);
        }
    }
    if (kind == 0 && cv->cg == 1) {   /* one input channel per group: direct loops */
        gpuml__parallel_for(ctx->pool, cv->n * cv->p, 1, gpuml__cv_direct_rows, &j);
        gpuml__aligned_free(j.wp);
        return GPUML_SUCCESS;
    }
    /* rows per chunk: forward and filter any rows, backward data whole images */
    rows = GPUML__MAX((int64_t)GPUML__CV_CPU_COL / GPUML__MAX(cv->ncol, cv->kg), (int64_t)64);
    if (kind == 1 && c2i_scatter) {
        /* the scatter: chunks of ~GPUML__CV_CPU_BAND col elements (cache-resident between the GEMM and
           the scatter), but at least 4 K rows (the GEMM packs W, K x ncol, once a chunk); whole
           images where one fits, else bands of an image's output rows */
        int64_t want = gpuml__cv_cpu_band_rows > 0 ? gpuml__cv_cpu_band_rows : GPUML__MAX((int64_t)GPUML__CV_CPU_BAND / cv->ncol, 4 * cv->kg);
        want = GPUML__MIN(want, rows);   /* (GPUML__CV_CPU_COL caps it: the column matrix's memory) */
        rows = want >= pq ? want / pq * pq : GPUML__MAX(want / cv->q, (int64_t)1) * cv->q;
        if (rows < pq) band = 1;
    } else if (kind == 1) rows = GPUML__MAX(rows / pq, (int64_t)1) * pq;
    if (per_image) rows = pq;
    rows = GPUML__MIN(rows, M);
    j.ldt = cv->kg;
    if (kind != 0 && !dx_direct && !xcol_direct && !bgather) j.col = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(rows * cv->ncol) + 1);
    if (!y_direct && !dy_direct) j.t = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(rows * cv->kg) + 1);
    if (kind == 1 && !dx_direct) {
        j.c2i = (int64_t *)gpuml__malloc(sizeof(int64_t) * (size_t)(cv->h * (cv->r + 1) + cv->w * (cv->s + 1)));
        if (j.c2i) {
            gpuml__cv_c2i_list(cv->h, cv->r, cv->pt, cv->dh, cv->sh, cv->p, cv->q * cv->ncol, cv->s * cv->cg, j.c2i);
            gpuml__cv_c2i_list(cv->w, cv->s, cv->pl, cv->dw, cv->sw, cv->q, cv->ncol, cv->cg, j.c2i + cv->h * (cv->r + 1));
        }
    }
    if ((kind != 0 && !dx_direct && !xcol_direct && !bgather && !j.col) || (!y_direct && !dy_direct && !j.t) || (kind == 1 && !dx_direct && !j.c2i)) rc = -1;
    for (m0 = 0; rc == 0 && m0 < M; m0 += mc) {
        mc = GPUML__MIN(rows, M - m0);
        if (band) mc = GPUML__MIN(mc, pq - m0 % pq);   /* a band stays inside its image */
        j.m0 = m0; j.n0 = m0 / pq;
        if (c2i_scatter) {
            /* the dx rows this chunk's output rows reach; the last chunk of an image takes the rows below
               (none of its taps reach them: zeroed) */
            const int64_t reach = (cv->r - 1) * cv->dh + 1 - cv->pt;
            j.bp0 = band ? (m0 % pq) / cv->q : 0;
            j.bp1 = band ? j.bp0 + mc / cv->q : cv->p;
            j.hprev = j.bp0 == 0 ? 0 : GPUML__MAX(GPUML__MIN((j.bp0 - 1) * cv->sh + reach, cv->h), (int64_t)0);
            j.he = j.bp1 == cv->p ? cv->h : GPUML__MAX(GPUML__MIN((j.bp1 - 1) * cv->sh + reach, cv->h), (int64_t)0);
            j.hs = GPUML__MIN(GPUML__MAX(GPUML__MIN(j.bp0 * cv->sh - cv->pt, cv->h), (int64_t)0), j.hprev);
        }
        for (g = 0; rc == 0 && g < cv->groups; g++) {
            /* this group's weights as B: f32 packed, or w itself in its own dtype */
            const void *wg = wbase + g * cv->kg * cv->ncol * (w_direct ? es : (int64_t)sizeof(float));
            int wt = w_direct ? gt : GPUML__GEMM_F32;
            j.g = g;
            if (kind == 0) {
                const void *a = NULL;
                int at = GPUML__GEMM_F32;
                int64_t rsa = 0, csa = 0;
                float *c = j.t;
                int64_t rsc = cv->kg, csc = 1;
                const gpuml__gemm_gather *gx = implicit ? &gg : NULL;
                if (x_direct) {
                    a = (const char *)gpuml_tensor_data(cv->x) + ((m0 / pq) * cv->xs[0] + (m0 % pq) * cv->xs[2] + g * cv->cg * cv->xs[3]) * es;
                    at = gt; rsa = cv->xs[2]; csa = cv->xs[3];
                } else {
                    ga.m0 = m0;
                    ga.x = (xcopy ? xp : (const float *)gpuml_tensor_data(cv->x)) + g * cv->cg * (xcopy ? 1 : cv->xs[3]);
                }
                if (y_direct) {
                    c = (float *)gpuml_tensor_data(cv->y) + (m0 / pq) * cv->ys[0] + (m0 % pq) * cv->ys[2] + g * cv->kg * cv->ys[3];
                    rsc = cv->ys[2]; csc = cv->ys[3];
                }
                /* B = w^T: element (j, kk) at wg[kk * ncol + j] */
                rc = gpuml__cpu_gemm_ex(ctx->pool, mc, cv->kg, cv->ncol, 1.0f, a, at, rsa, csa, wg, wt, 1, cv->ncol, 0.0f, c, rsc, csc, 0,
                                        gx, NULL);
                if (rc == 0 && (!y_direct || cv->bias || cv->act || cv->res))
                    gpuml__parallel_for(ctx->pool, mc, 16, gpuml__cv_epi_rows, &j);
            } else {
                /* dy rows of this chunk and group: element (m, kk) at a[m * rsa + kk * csa] */
                const void *a = j.t;
                int at = GPUML__GEMM_F32;
                int64_t rsa = cv->kg, csa = 1;
                if (dy_direct) {
                    a = (const char *)gpuml_tensor_data(cv->y) + (m0 * cv->ys[2] + g * cv->kg * cv->ys[3]) * es;
                    at = gt; rsa = cv->ys[2]; csa = cv->ys[3];
                } else {
                    gpuml__parallel_for(ctx->pool, mc, 64, gpuml__cv_dy_rows, &j);
                }
                if (kind == 1) {
                    float *c = j.col;
                    int64_t rsc = cv->ncol, csc = 1;
                    if (dx_direct) {   /* 1x1, stride 1, no padding: dx pixel m is col row m */
                        c = (float *)gpuml_tensor_data(cv->x) + m0 * cv->xs[2] + g * cv->cg * cv->xs[3];
                        rsc = cv->xs[2]; csc = cv->xs[3];
                    }
                    rc = gpuml__cpu_gemm(ctx->pool, mc, cv->ncol, cv->kg, 1.0f, a, at, rsa, csa, wg, wt, cv->ncol, 1, 0.0f, c, rsc, csc);
                    if (rc == 0 && !dx_direct)
                        gpuml__parallel_for(ctx->pool, c2i_scatter ? GPUML__MAX(mc / pq, (int64_t)1) * (j.he - j.hs) : (mc / pq) * cv->h, 1,
                                            c2i_scatter ? gpuml__cv_col2im_scatter : gpuml__cv_col2im_rows, &j);
                } else {
                    /* dw (or its f32 buffer) = sum over chunks of dy^T @ col: the first chunk writes it */
                    float *c = dw_direct ? (float *)gpuml_tensor_data(cv->wt) + g * cv->kg * cv->ncol : j.wp + g * cv->kg * cv->ncol;
                    const void *bm = j.col;
                    int bt = GPUML__GEMM_F32;
                    int64_t rsb = cv->ncol, csb = 1;
                    if (xcol_direct) {
                        bm = (const char *)gpuml_tensor_data(cv->x) + (m0 * cv->xs[2] + g * cv->cg * cv->xs[3]) * es;
                        bt = gt; rsb = cv->xs[2]; csb = cv->xs[3];
                    } else if (bgather) {
                        ga.m0 = m0;
                        ga.x = (xcopy ? xp : (const float *)gpuml_tensor_data(cv->x)) + g * cv->cg * (xcopy ? 1 : cv->xs[3]);
                        bm = NULL; rsb = csb = 0;
                    } else {
                        gpuml__parallel_for(ctx->pool, mc, 16, gpuml__cv_im2col_rows, &j);
                    }
                    rc = gpuml__cpu_gemm_ex(ctx->pool, cv->kg, cv->ncol, mc, 1.0f, a, at, csa, rsa, bm, bt, rsb, csb,
                                            m0 == 0 ? 0.0f : 1.0f, c, cv->ncol, 1, 0, NULL, bgather ? &gg : NULL);
                }
            }
        }
    }
    if (rc == 0 && kind == 2 && !dw_direct) gpuml__cv_pack(ctx, cv, j.wp, 1);
    gpuml__aligned_free(xp);
    gpuml__aligned_free(zero);
    gpuml__aligned_free(j.col);
    gpuml__aligned_free(j.t);
    gpuml__free(j.c2i);
    gpuml__aligned_free(j.wp);
    if (rc != 0) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the im2col buffers", op);
    return GPUML_SUCCESS;
}

#ifndef GPUML_NO_CUDA
/* the params struct of kernels/conv.cu */
typedef struct gpuml__conv_params {
    int64_t n, h, w, c, k, r, s, p, q, cg, kg;
    int sh, sw, ph, pw, dh, dw, order, count_pad;
    int64_t xn, xh, xw, xc, wk, wr, ws, wc, yn, yp, yq, yk, rn, rp, rq, rk;
    gpuml__CUdeviceptr x, wt, y, bias, res, col;
    int64_t ldcol, n0, g, total, mrows;
} gpuml__conv_params;

GPUML__FN void gpuml__cv_kparams(const gpuml__cv *cv, gpuml__conv_params *kp)
{
    memset(kp, 0, sizeof *kp);
    kp->n = cv->n; kp->h = cv->h; kp->w = cv->w; kp->c = cv->c; kp->k = cv->k; kp->r = cv->r; kp->s = cv->s;
    kp->p = cv->p; kp->q = cv->q; kp->cg = cv->cg; kp->kg = cv->kg;
    kp->sh = cv->sh; kp->sw = cv->sw; kp->ph = cv->pt; kp->pw = cv->pl; kp->dh = cv->dh; kp->dw = cv->dw;
    kp->order = cv->layout == GPUML_LAYOUT_NCHW;
    kp->xn = cv->xs[0]; kp->xh = cv->xs[1]; kp->xw = cv->xs[2]; kp->xc = cv->xs[3];
    kp->wk = cv->ws[0]; kp->wr = cv->ws[1]; kp->ws = cv->ws[2]; kp->wc = cv->ws[3];
    kp->yn = cv->ys[0]; kp->yp = cv->ys[1]; kp->yq = cv->ys[2]; kp->yk = cv->ys[3];
    kp->rn = cv->rs[0]; kp->rp = cv->rs[1]; kp->rq = cv->rs[2]; kp->rk = cv->rs[3];
    kp->x = gpuml__dptr(cv->x); kp->wt = gpuml__dptr(cv->wt); kp->y = gpuml__dptr(cv->y);
    kp->bias = cv->bias ? gpuml__dptr(cv->bias) : 0;
    kp->res = cv->res ? gpuml__dptr(cv->res) : 0;
}
/* 1 when every offset a kernel forms fits in 31 bits (32-bit index math) */
GPUML__FN int gpuml__cv_fits32(const gpuml__cv *cv, int64_t extra)
{
    const gpuml_tensor *t[4];
    int i;
    t[0] = cv->x; t[1] = cv->wt; t[2] = cv->y; t[3] = cv->res;
    for (i = 0; i < 4; i++) {
        int64_t lo, hi, j;
        if (!t[i]) continue;
        gpuml__span(t[i], &lo, &hi);
        if (hi - t[i]->offset >= INT32_MAX || lo < t[i]->offset) return 0;   /* negative strides: 64-bit */
        for (j = 0; j < 4; j++) if (t[i]->strides[j] < 0) return 0;
    }
    return extra < INT32_MAX;
}
GPUML__FN gpuml_status gpuml__cv_launch_x(gpuml_ctx *ctx, const gpuml__cv *cv, const char *name, gpuml__conv_params *kp,
                                          int epi, int pool_max, int64_t col_elems, const char *extra, const char *op)
{
    char opts[300];
    gpuml__CUfunction fn;
    unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
    void *args[1];
    int bf = strcmp(name, "gpuml_conv_bwd_filter") == 0, tr = strcmp(name, "gpuml_conv_bwf_dyt") == 0;
    int sm = strcmp(name, "gpuml_conv_bwf_sum") == 0, wph = strcmp(name, "gpuml_conv_wphase") == 0;
    int wft = strcmp(name, "gpuml_conv_wflip_t") == 0;
    snprintf(opts, sizeof opts, "-DCONV_DT=%d -DCONV_EPI=%d -DCONV_BIAS=%d -DCONV_RES=%d -DCONV_I32=%d -DPOOL_MAX=%d%s", (int)cv->dt,
             epi ? cv->act : 0, epi && cv->bias != NULL, epi && cv->res != NULL,
             gpuml__cv_fits32(cv, GPUML__MAX(col_elems, kp->total)), pool_max, extra);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, name, &fn));
    if (kp->total <= 0) return GPUML_SUCCESS;
    grid[0] = bf ? (unsigned)GPUML__MIN(kp->total, (int64_t)GPUML__MAX(ctx->sm_count, 1) * 64) : gpuml__grid_for(ctx, kp->total, 256);
    if (tr) {   /* 32 x 32 tiles of (l, k) per slice of ldcol rows: total = slices * kg * ldcol */
        grid[0] = (unsigned)((kp->ldcol + 31) / 32); grid[1] = (unsigned)((kp->kg + 31) / 32);
        grid[2] = (unsigned)(kp->total / (kp->kg * kp->ldcol));
        block[0] = 32; block[1] = 8;
    }
    if (wph) {   /* 32 x 32 tiles of (k, c) per phase and window tap: total = taps * kg * c */
        grid[0] = (unsigned)((kp->kg + 31) / 32); grid[1] = (unsigned)((kp->c + 31) / 32);
        grid[2] = (unsigned)(kp->total / (kp->kg * kp->c));
        block[0] = 32; block[1] = 8;
    }
    if (wft) {   /* 32 x 32 tiles of (k, c) per group and tap: total = groups * R * S * kg * cg */
        grid[0] = (unsigned)((kp->kg + 31) / 32); grid[1] = (unsigned)((kp->cg + 31) / 32);
        grid[2] = (unsigned)(kp->total / (kp->kg * kp->cg));
        block[0] = 32; block[1] = 8;
    }
    if (sm) {   /* 32 outputs a block */
        grid[0] = (unsigned)((kp->total + 31) / 32);
        block[0] = 32; block[1] = 8;
    }
    args[0] = kp;
    return gpuml__launch(ctx, fn, grid, block, 0, args, op);
}
GPUML__FN gpuml_status gpuml__cv_launch(gpuml_ctx *ctx, const gpuml__cv *cv, const char *name, gpuml__conv_params *kp,
                                        int epi, int pool_max, int64_t col_elems, const char *op)
{
    return gpuml__cv_launch_x(ctx, cv, name, kp, epi, pool_max, col_elems, "", op);
}

/* depthwise with multiplier 1 through the register-blocked kernel (16-byte channel vectors
   where the layout allows); NOT_SUPPORTED (no message) for other shapes */
GPUML__FN gpuml_status gpuml__cv_dw_fast(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__conv_params kp;
    char extra[120];
    int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], vec = 16 / es, qt, i, span;
    int ok_vec = 1;
    if (cv->cg != 1 || cv->kg != 1 || cv->s > 7 || cv->sw > 4 || cv->dw > 4) return GPUML_ERROR_NOT_SUPPORTED;
    /* 16-byte vectors along c: unit channel strides, aligned rows */
    if (cv->xs[3] != 1 || cv->ys[3] != 1 || (cv->res && cv->rs[3] != 1) || cv->c % vec) ok_vec = 0;
    for (i = 0; ok_vec && i < 3; i++)
        if (cv->xs[i] % vec || cv->ys[i] % vec || (cv->res && cv->rs[i] % vec)) ok_vec = 0;
    if (ok_vec && ((gpuml__dptr(cv->x) | gpuml__dptr(cv->y) | (cv->res ? gpuml__dptr(cv->res) : 0)) & 15)) ok_vec = 0;
    if (!ok_vec) vec = 1;
    qt = vec == 8 ? 2 : 4;
    span = (qt - 1) * cv->sw + (cv->s - 1) * cv->dw + 1;
    if (span * vec > 48 || span > 16) return GPUML_ERROR_NOT_SUPPORTED;   /* registers (measured spill-free up to here) */
    gpuml__cv_kparams(cv, &kp);
    kp.order = vec == 1 && cv->xs[2] == 1;   /* q-blocks fastest where w is the unit-stride dim (NCHW) */
    kp.total = cv->n * cv->p * ((cv->q + qt - 1) / qt) * (cv->k / vec);
    snprintf(extra, sizeof extra, " -DDW_VEC=%d -DDW_QT=%d -DDW_S=%d -DDW_SW=%d -DDW_DW=%d", (int)vec, (int)qt, (int)cv->s, cv->sw, cv->dw);
    return gpuml__cv_launch_x(ctx, cv, "gpuml_conv_dw_fast", &kp, 1, 0, 0, extra, op);
}

/* the staged depthwise kernel's band height, column block, ring slots, resident blocks per SM
   (the register bound) and, NHWC, its grid (> 0: that many blocks, < 0: that many per SM, each
   streaming its share of the bands) and output columns a thread (1 or 2) for tests and A/B timing
   (0: chosen); the environment variable GPUML_CONV_DW_CFG ("tp,tq,r,minb,grid,qt") does the same
   where these are 0 */
static int gpuml__cv_dw3s_cfg[6];
static long gpuml__cv_dw3s_calls;   /* launches (tests check that the kernel ran) */
static int gpuml__cv_dw3s_stream = -1;   /* f32 NHWC streaming for tests (0 / 1 / 2 as GPUML_CONV_DW_STREAM; -1: chosen) */
/* depthwise 3x3 through the staged kernels (sm_80+; the caller checked the 3x3 shape):
   gpuml_conv_dw3s for NHWC-style tensors (unit channel strides, C and the pixel strides in
   16-byte steps, 16-byte aligned tensors), gpuml_conv_dw3sc for NCHW-style ones (unit column
   strides, x 16-byte aligned); NOT_SUPPORTED (no message) otherwise, and, unless forced (or
   a configuration is given), where the register kernel measured faster */
GPUML__FN gpuml_status gpuml__cv_dw3s(gpuml_ctx *ctx, const gpuml__cv *cv, int force, const char *op)
{
    gpuml__conv_params kp;
    char opts[300];
    gpuml__CUfunction fn;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    void *args[1];
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], epc = 16 / es;
    int64_t cb, ncv, tq = 1, tp, nqb = 1, ncb, nb, nb0, slot, r, target, nthr, nchunk, nunit, g, res, slots, i;
    int cfg[6], set, nhwc = 1, stream, fits32, minb, qt = 1;   /* set: a configuration is given */
    const char *env = gpuml__getenv("GPUML_CONV_DW_CFG"), *env_st = gpuml__getenv("GPUML_CONV_DW_STREAM");
    /* f32 NHWC streamed (see stream below) with 2 output columns a thread (1 where the copies would
       not fit) below 112 output rows, one block a band from there (H100, MobileNetV2 layers at batch
       32, bench/NOTES_conv.md "f32 NHWC streamed": c32 @112 42.4 vs 43.0 us, c144 @56 53.9 -> 52.1,
       c576 @14 18.6 -> 16.0); GPUML_CONV_DW_STREAM=0 / 1 / 2 (A/B runs): one block a band, streamed
       with 1 column, streamed with 2 */
    const int f32_stream = gpuml__cv_dw3s_stream >= 0 && gpuml__cv_dw3s_stream <= 2 ? gpuml__cv_dw3s_stream :
                           env_st && env_st[0] >= '0' && env_st[0] <= '2' ? env_st[0] - '0' : cv->p < 112 ? 2 : 0;
    uint64_t addr = gpuml__dptr(cv->x) | gpuml__dptr(cv->y) | (cv->res ? gpuml__dptr(cv->res) : 0);
    if (ctx->arch < 80 || es > 4) return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->xs[3] != 1 || cv->ys[3] != 1 || (cv->res && cv->rs[3] != 1) || (cv->c * es) % 16 || (addr & 15)) nhwc = 0;
    for (i = 0; nhwc && i < 3; i++)
        if ((cv->xs[i] * es) % 16 || (cv->ys[i] * es) % 16 || (cv->res && (cv->rs[i] * es) % 16)) nhwc = 0;
    if (nhwc && cv->w * cv->xs[2] + cv->c > INT32_MAX) nhwc = 0;   /* offsets within a row: 31 bits */
    if (!nhwc && (cv->xs[2] != 1 || cv->ys[2] != 1 || (cv->res && cv->rs[2] != 1) || (gpuml__dptr(cv->x) & 15) || cv->q > 512 || cv->w > 65536))
        return GPUML_ERROR_NOT_SUPPORTED;
    for (i = 0, set = 0; i < 6; i++) set |= (cfg[i] = gpuml__cv_dw3s_cfg[i]) != 0;
    if (!set && env && sscanf(env, "%d,%d,%d,%d,%d,%d", &cfg[0], &cfg[1], &cfg[2], &cfg[3], &cfg[4], &cfg[5]) >= 1)
        for (i = 0; i < 6; i++) set |= cfg[i] != 0;
    else if (!set)
        for (i = 0; i < 6; i++) cfg[i] = 0;
    /* where the staged kernels measured faster than gpuml_conv_dw3 (H100, the MobileNetV2 layers at
       batch 32, bench/NOTES_conv.md "staged"; a rule fitted to those 32 rows, 16-bit ones from f16):
       f32 NHWC from 29 output rows one block a band (below that streamed, see f32_stream); f32 NCHW
       at stride 1 from 56 rows (c144 @56: 50.7 vs 54.1 us; @112 a tie; stride 2 and 28 rows and
       fewer: 6-11% slower than gpuml_conv_dw3); 16-bit NCHW never
       (c144 @56: 50.9 vs 42.8 us).  (The 2026-11-26 A/B against gpuml_conv_dw3 as rewritten that day,
       bench/NOTES_conv.md.)  16-bit NHWC from 8 output rows since the kernel streams its bands and sums
       2 columns a thread (sixteenth session, bench/NOTES_conv.md "streaming": c960 @7 8.3 vs 7.7 us).
       f32 NHWC streamed (below 112 rows): at every size (c960 @7 in one band 9.9 vs 12.4 us, c192 @28
       19.2 vs 21.5; seventeenth session, bench/NOTES_conv.md "f32 NHWC streamed"). */
    if (!force && !set &&
        !(es == 4 ? (nhwc ? f32_stream || cv->p > 28 : cv->sh == 1 && cv->p >= 56) : nhwc && cv->p > 7))
        return GPUML_ERROR_NOT_SUPPORTED;
    if (nhwc) {
        /* channels per block: a whole pixel up to 512 bytes, else the largest divisor of C in 16-byte
           steps up to 512 bytes (none from 128 bytes up: 512-byte blocks, the last one partial) */
        cb = cv->c;
        if (cb * es > 512) {
            for (cb = 512 / es; cb >= 128 / es && cv->c % cb; cb -= epc) {}
            if (cb < 128 / es) cb = 512 / es;
        }
        ncv = cb / 4;
        ncb = (cv->c + cb - 1) / cb;
        /* output columns a thread (cfg[5]): 2 for 16-bit types (fewer instructions an output: the
           kernel is issue-bound there), f32 as f32_stream says (1 one block a band) */
        qt = cfg[5] == 1 || cfg[5] == 2 ? cfg[5] : es < 4 ? 2 : f32_stream ? f32_stream : 1;
        for (;;) {
            /* output columns per block (cfg[1]): up to 256 threads, the column blocks evened out, a
               multiple of qt */
            tq = cfg[1] > 0 ? GPUML__MIN((int64_t)cfg[1], 256 / ncv * qt) : 256 / ncv * qt;
            tq = GPUML__MAX(GPUML__MIN(tq, cv->q), (int64_t)1);
            nqb = (cv->q + tq - 1) / tq;
            tq = (cv->q + nqb - 1) / nqb;
            tq = (tq + qt - 1) / qt * qt;
            nthr = ncv * (tq / qt);
            slot = ((tq - 1) * cv->sh + 3) * cb * es;
            nchunk = ((tq - 1) * cv->sh + 3) * cb / epc;
            if (qt == 1 || nchunk <= 3 * nthr) break;
            qt = 1;   /* more copies a thread than the kernel issues (f32 at stride 2) */
        }
    } else {
        /* channel planes per block (cfg[1]): up to 256 threads of 2 columns, the blocks evened out */
        int64_t nqv = (cv->q + 1) / 2, ckr = (cv->w + epc - 1) / epc + 1;
        cb = cfg[1] > 0 ? GPUML__MIN((int64_t)cfg[1], 256 / nqv) : 256 / nqv;
        cb = GPUML__MAX(GPUML__MIN(cb, cv->c), (int64_t)1);
        ncb = (cv->c + cb - 1) / cb;
        cb = (cv->c + ncb - 1) / ncb;
        nthr = cb * nqv;
        slot = cb * ckr * 16;
        nchunk = cb * ckr;
    }
    /* NHWC: a grid of the resident blocks, each streaming its bands through a 4-slot ring (H100,
       MobileNetV2 layers at batch 32, bench/NOTES_conv.md "streaming"); f32 from 112 rows one block a
       band (streamed with 1 column it measured flat or slower there) */
    stream = nhwc && (es < 4 || f32_stream);
    /* ring slots (cfg[2]): ~12 KB or more of input in flight per block */
    r = cfg[2] == 2 || cfg[2] == 4 || cfg[2] == 8 || cfg[2] == 16 ? cfg[2] : stream ? 4 : slot >= 4096 ? 4 : slot >= 2048 ? 8 : 16;
    nb0 = cv->n * nqb * ncb;
    /* resident blocks a SM: the kernel's register bound (DW3S_MINB: 256-thread blocks) gives at most
       80 or 128 registers a thread; 64K registers, 64 warps and the shared memory of an SM (the
       32-bit index test with the most bands, an upper bound) */
    minb = cfg[3] == 2 || cfg[3] == 3 ? cfg[3] :
           ctx->arch >= 90 && !cv->res && cv->act < 2 && gpuml__cv_fits32(cv, nb0 * cv->p * nthr) && qt == 1 ? 3 : 2;
    res = 65536 / ((minb == 3 ? 80 : 128) * 32 * ((nthr + 31) / 32));
    res = GPUML__MIN(res, 64 / ((nthr + 31) / 32));
    res = GPUML__MAX((int64_t)1, GPUML__MIN(res, (int64_t)ctx->smem_optin / (r * slot + 1024)));
    slots = res * GPUML__MAX(ctx->sm_count, 1);
    /* output rows per block (cfg[0]) */
    if (cfg[0] > 0) {
        tp = GPUML__MIN((int64_t)cfg[0], cv->p);
    } else if (stream) {
        /* streamed: the band height (of those that split P evenly) with the fewest input rows on the
           busiest block, rounds of bands x rows a band (the halo rows included): tall bands where
           they still fill the resident blocks, shorter ones where the last round would run few; planes
           of up to 7 rows in one band (c960 @7: 7-row bands 9.9 us f32, 7.4-7.7 f16, against 12.2 and
           8.3 for the model's 4: it ignores the set-up of a unit and the re-read halo rows) */
        int64_t t, cost, best = -1;
        tp = cv->p <= 7 ? cv->p : 1;
        for (t = 1; cv->p > 7 && t <= GPUML__MIN(cv->p, (int64_t)256); t++) {
            nb = (cv->p + t - 1) / t;
            if ((cv->p + nb - 1) / nb != t) continue;
            cost = (nb0 * nb + slots - 1) / slots * ((t - 1) * cv->sh + 3);
            if (best < 0 || cost <= best) best = cost, tp = t;
        }
    } else {
        /* bands short enough for ~12 blocks per SM (4 waves of 3 resident), at least 4 rows (the
           2 halo rows a band reads twice) */
        target = (int64_t)GPUML__MAX(ctx->sm_count, 1) * 12;
        nb = GPUML__MAX((int64_t)1, GPUML__MIN(cv->p, (target + nb0 - 1) / nb0));
        tp = GPUML__MAX((cv->p + nb - 1) / nb, GPUML__MIN(cv->p, (int64_t)4));
    }
    nb = (cv->p + tp - 1) / tp;
    if (nb0 * nb > INT32_MAX || ncb > 65535 || r * slot > ctx->smem_optin || nchunk > 3 * nthr) return GPUML_ERROR_NOT_SUPPORTED;
    /* NHWC grid (cfg[4]): one block per unit (n, column block, band), or fewer, each streaming
       units blockIdx.x, + gridDim.x, ... (their input rows in int); grid y is the channel blocks */
    nunit = cv->n * nqb * nb;
    fits32 = gpuml__cv_fits32(cv, nb0 * nb * nthr);
    g = nunit;
    if (nhwc && cfg[4]) g = GPUML__MAX((int64_t)1, GPUML__MIN(nunit, cfg[4] > 0 ? (int64_t)cfg[4] : (int64_t)-cfg[4] * GPUML__MAX(ctx->sm_count, 1)));
    else if (stream) g = GPUML__MIN(nunit, (slots + ncb - 1) / ncb);
    if (g > 0 && (nunit + g - 1) / g * ((tp - 1) * cv->sh + 3) > INT32_MAX) return GPUML_ERROR_NOT_SUPPORTED;
    gpuml__cv_kparams(cv, &kp);
    kp.ldcol = cb; kp.g = tq; kp.n0 = tp;
    kp.total = nb0 * nb * nthr;
    grid[0] = (unsigned)g;
    grid[1] = (unsigned)ncb;
    block[0] = (unsigned)nthr;
    snprintf(opts, sizeof opts, "-DCONV_DT=%d -DCONV_EPI=%d -DCONV_BIAS=%d -DCONV_RES=%d -DCONV_I32=%d -DPOOL_MAX=1 -DDW3_ST=%d -DDW3S_R=%d%s%s",
             (int)cv->dt, cv->act, cv->bias != NULL, cv->res != NULL, fits32, cv->sh, (int)r,
             cfg[3] == 2 ? " -DDW3S_MINB=2" : cfg[3] == 3 ? " -DDW3S_MINB=3" : "", qt == 2 ? " -DDW3S_QT=2" : "");
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, nhwc ? "gpuml_conv_dw3s" : "gpuml_conv_dw3sc", &fn));
    if (grid[0] == 0) return GPUML_SUCCESS;
    args[0] = &kp;
    gpuml__cv_dw3s_calls++;
    return gpuml__launch(ctx, fn, grid, block, (unsigned)(r * slot), args, op);
}

/* rows a thread and chunk bytes for gpuml_conv_dw3f (tests and A/B timing: 2, 4 or 8 rows; 16, 8
   or 4 bytes, at most what the tensors allow; 0 chosen, or GPUML_CONV_DW3F_R / GPUML_CONV_DW3F_B) and
   its launches (tests check that it ran) */
static int gpuml__cv_dw3f_r, gpuml__cv_dw3f_b;
static long gpuml__cv_dw3f_calls;
/* depthwise 3x3, stride 1 or 2 (both axes), top and left padding 1, through gpuml_conv_dw3f:
   w-contiguous (NCHW-style) tensors whose rows are whole 16-, 8- or 4-byte chunks (Q, the row,
   plane and image strides of x, y and the residual whole chunks; aligned to one) and W = stride
   * Q; NOT_SUPPORTED (no message) otherwise */
GPUML__FN gpuml_status gpuml__cv_dw3f(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__conv_params kp;
    char opts[200];
    gpuml__CUfunction fn;
    unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
    void *args[1];
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
    const char *env = gpuml__getenv("GPUML_CONV_DW3F_R"), *envb = gpuml__getenv("GPUML_CONV_DW3F_B");
    const int64_t bmax = gpuml__cv_dw3f_b == 4 || gpuml__cv_dw3f_b == 8 || gpuml__cv_dw3f_b == 16 ? gpuml__cv_dw3f_b :
                         envb && (atoi(envb) == 4 || atoi(envb) == 8 || atoi(envb) == 16) ? atoi(envb) : 16;
    int64_t rows, nbd, total, i, b, v = 1;
    uint64_t addr = gpuml__dptr(cv->x) | gpuml__dptr(cv->y) | (cv->res ? gpuml__dptr(cv->res) : 0);
    if (es > 4 || cv->cg != 1 || cv->kg != 1 || cv->sh != cv->sw || cv->sh > 2 || cv->pt != 1 || cv->pl != 1 ||
        cv->w != cv->sw * cv->q)
        return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->xs[2] != 1 || cv->ys[2] != 1 || (cv->res && cv->rs[2] != 1)) return GPUML_ERROR_NOT_SUPPORTED;
    /* the widest chunk the row width, the strides and the addresses allow */
    for (b = bmax; b >= 4 && b >= es; b /= 2) {
        int ok = (cv->q * es) % b == 0 && (addr & (uint64_t)(b - 1)) == 0;
        v = b / es;
        for (i = 0; ok && i < 4; i++)
            if (i != 2 && (cv->xs[i] % v || cv->ys[i] % v || (cv->res && cv->rs[i] % v))) ok = 0;
        if (ok) break;
    }
    if (b < 4 || b < es) return GPUML_ERROR_NOT_SUPPORTED;
    /* output rows a thread (H100, MobileNetV2 layers at batch 32, bench/NOTES_conv.md "dw3f"):
       stride 2 always 2 (f16 c144 @56 s2, 8-byte chunks: 22.3 us against 30.0 for 4; 16-byte chunks
       hold at most 2 under the 128-register bound); stride 1 4 (since the set-up trim: f16 c32 @112
       26.2 against 28.0 for 2, c144 @56 30.1 against 31.4; f32 level with 8 within 0.3%), 2 on
       planes of 2 rows or fewer */
    rows = gpuml__cv_dw3f_r == 2 || gpuml__cv_dw3f_r == 4 || gpuml__cv_dw3f_r == 8 ? gpuml__cv_dw3f_r :
           env && (env[0] == '2' || env[0] == '4' || env[0] == '8') && !env[1] ? env[0] - '0' :
           cv->sh == 2 || cv->p <= 2 ? 2 : 4;
    if (cv->sh == 2) rows = GPUML__MIN(rows, b == 16 ? (int64_t)2 : (int64_t)4);
    nbd = (cv->p + rows - 1) / rows;
    total = cv->n * cv->c * nbd * (cv->q / v);
    if ((total + 255) / 256 > INT32_MAX) return GPUML_ERROR_NOT_SUPPORTED;
    gpuml__cv_kparams(cv, &kp);
    kp.total = total;
    grid[0] = (unsigned)((total + 255) / 256);
    snprintf(opts, sizeof opts, "-DCONV_DT=%d -DCONV_EPI=%d -DCONV_BIAS=%d -DCONV_RES=%d -DCONV_I32=%d -DPOOL_MAX=1 -DDW3_ST=%d -DDW3F_R=%d -DDW3F_B=%d",
             (int)cv->dt, cv->act, cv->bias != NULL, cv->res != NULL, gpuml__cv_fits32(cv, total + 256), cv->sh, (int)rows, (int)b);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, "gpuml_conv_dw3f", &fn));
    if (grid[0] == 0) return GPUML_SUCCESS;
    args[0] = &kp;
    gpuml__cv_dw3f_calls++;
    return gpuml__launch(ctx, fn, grid, block, 0, args, op);
}

/* the depthwise 3x3 kernel's configuration, for tests and A/B timing: 0 chosen by shape (the
   staged gpuml_conv_dw3s / gpuml_conv_dw3sc where they measured faster, else gpuml_conv_dw3);
   5 the staged kernels wherever they apply; 6 gpuml_conv_dw3f where it applies (else as 0); 3
   gpuml_conv_dw3 chosen by size; 1 / 2 / 4 gpuml_conv_dw3 with the tile height forced; -1 the
   older kernels (gpuml_conv_dw_fast / gpuml_conv_depthwise).  The environment variable
   GPUML_CONV_DW (old, reg, staged, flat, 1, 2 or 4) does the same where this is 0.
   gpuml__cv_dw3_cfg (or GPUML_CONV_DW3_CFG=vec,tp,qt,pf,minb where it is all 0) forces
   gpuml_conv_dw3's channel vector width (8 for 16-bit types: 16-byte loads; 2 or 4 otherwise),
   tile height, tile width, rows loaded ahead (1-3), the resident 128-thread blocks its registers
   must allow (1-8) and where the weights are read (1: shared memory at each use, 2: registers);
   0 = chosen. */
static int gpuml__cv_dw3_mode;
static int gpuml__cv_dw3_cfg[6];
static long gpuml__cv_dw3_calls;   /* launches of gpuml_conv_dw3 (tests check that it ran) */
/* depthwise 3x3, multiplier 1, dilation 1, equal strides 1 or 2, through gpuml_conv_dw3:
   NHWC-style (unit channel strides, C % 2 == 0, aligned rows) with 4 (or 2) channels per
   thread, or w-contiguous (NCHW) with 4 columns per thread; NOT_SUPPORTED (no message) for
   other shapes */
GPUML__FN gpuml_status gpuml__cv_dw3(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__conv_params kp;
    char opts[300];
    gpuml__CUfunction fn;
    unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};   /* the kernel's launch bound */
    void *args[1];
    int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], vec = 0, tp, qt, pf, ntile, nqt, ncv = 1, cvb = 1, i;
    const char *env = gpuml__getenv("GPUML_CONV_DW");
    int mode = gpuml__cv_dw3_mode, cfg[6];
    char minb[40] = "";
    const char *cenv = gpuml__getenv("GPUML_CONV_DW3_CFG");
    if (!mode && env)
        mode = strcmp(env, "old") == 0 ? -1 : strcmp(env, "reg") == 0 ? 3 : strcmp(env, "staged") == 0 ? 5 : strcmp(env, "flat") == 0 ? 6 :
               (env[0] == '1' || env[0] == '2' || env[0] == '4') && !env[1] ? env[0] - '0' : 0;
    if (mode < 0) return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->cg != 1 || cv->kg != 1 || cv->r != 3 || cv->s != 3 || cv->dh != 1 || cv->dw != 1 || cv->sh != cv->sw || cv->sh > 2)
        return GPUML_ERROR_NOT_SUPPORTED;
    /* NCHW rows of whole chunks: gpuml_conv_dw3f wherever it applies (H100, MobileNetV2 layers at
       batch 32: ahead of the register and staged kernels on all 8 in f16, on 7 in f32, c960 @7
       12.0-12.2 against 11.6 us; bench/NOTES_conv.md "dw3f") */
    if (!mode || mode == 6) {
        gpuml_status st = gpuml__cv_dw3f(ctx, cv, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        mode = 0;
    }
    if (!mode || mode == 5) {
        gpuml_status st = gpuml__cv_dw3s(ctx, cv, mode == 5, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
    }
    if (mode == 3 || mode == 5) mode = 0;
    memcpy(cfg, gpuml__cv_dw3_cfg, sizeof cfg);
    if (!cfg[0] && !cfg[1] && !cfg[2] && !cfg[3] && !cfg[4] && !cfg[5] && cenv &&
        sscanf(cenv, "%d,%d,%d,%d,%d,%d", &cfg[0], &cfg[1], &cfg[2], &cfg[3], &cfg[4], &cfg[5]) < 1)
        cfg[0] = 0;
    if (cv->xs[3] == 1 && cv->ys[3] == 1 && (!cv->res || cv->rs[3] == 1)) {
        /* channel vectors of 4 (else 2; 8 when forced for 16-bit types): unit channel strides,
           aligned pixel rows and pointers */
        uint64_t addr = gpuml__dptr(cv->x) | gpuml__dptr(cv->y) | (cv->res ? gpuml__dptr(cv->res) : 0);
        for (vec = cfg[0] == 8 && es <= 2 ? 8 : cfg[0] == 2 || (!cfg[0] && es == 2 && cv->p <= 28) ? 2 : 4; vec >= 2; vec /= 2) {
            int ok = cv->c % vec == 0 && (addr & (uint64_t)(vec * es - 1)) == 0;
            for (i = 0; ok && i < 3; i++)
                if (cv->xs[i] % vec || cv->ys[i] % vec || (cv->res && cv->rs[i] % vec)) ok = 0;
            if (ok) break;
        }
        ncv = cv->c / GPUML__MAX(vec, 1);
    }
    if (vec < 2) {   /* else w contiguous (NCHW): 4 columns per thread */
        if (cv->xs[2] != 1 || cv->ys[2] != 1) return GPUML_ERROR_NOT_SUPPORTED;
        vec = 1;
    }
    /* (the defaults below: the fastest configurations measured on the H100, MobileNetV2 layers at
       batch 32, bench/NOTES_conv.md "Depthwise 3x3: issue-bound, then latency-bound") */
    qt = cfg[2] > 0 && cfg[2] <= 8 ? cfg[2] : 2;
    /* rows loaded ahead: 2 at stride 1, 3 at stride 2 (then the unrolled loop body is 3 or 4 input
       rows; 1 gives 6 or 4) */
    pf = cfg[3] >= 1 && cfg[3] <= 3 ? cfg[3] : cv->sh == 1 ? 2 : 3;
    if (pf == 3 && cv->sh == 1) pf = 2;
    if (pf == 2 && cv->sh == 2) pf = 3;
    nqt = (cv->q + qt - 1) / qt;
    /* tile height: a thread walks down tp output rows (its set-up -- weights, indices -- paid once;
       3 (stride 1) or 2 (stride 2) rows of accumulators live whatever tp), bands evened out over P.
       Channel vectors: bands of up to 16 rows (planes of <= 28 rows: 1 or 2 bands, one block wave or
       less, fastest by 10-25% over shorter bands).  NCHW: as tall as leaves ~3 waves of 128-thread
       blocks at 4 per SM (the 2-row tiles of the first version: issue-bound on their set-up). */
    if (vec > 1) tp = 16;
    else {
        const int64_t per = cv->c * nqt * cv->n, want = (int64_t)GPUML__MAX(ctx->sm_count, 1) * 512 * 3;   /* threads a band */
        tp = GPUML__MIN(GPUML__MAX((int64_t)1, per * cv->p / want), (int64_t)16);
    }
    /* f16 planes of <= 28 rows at 2 channels a thread (6 blocks a SM below, sm_90): as many bands as
       fill one wave of blocks, each as tall as that leaves (c384 @14: 2 bands of 7, 10.4-10.6 us
       against 12.4-12.5 for one; the other small planes unchanged).  Elsewhere measured slower (c32
       @112 f16 42.4 vs 32.7 us, f32 c960 @7 17.0 vs 12.5); GPUML_CONV_DW3_WAVE=1 takes it for every
       channel-vector conv (A/B; blocks a SM assumed ~4 for 4-wide vectors at ~128 registers, else 5) */
    if (vec > 1 && ((vec == 2 && cv->dt == GPUML_F16 && cv->p <= 28 && ctx->arch >= 90 && cv->act != GPUML_ACT_GELU && !cfg[4]) ||
                    gpuml__getenv("GPUML_CONV_DW3_WAVE"))) {
        /* (blocks a band: the channel-vector chunk taken as 32 wide, as below where 32 divides the count) */
        int64_t cvb0 = ncv <= 32 ? ncv : 32, bpb = (cv->n * nqt + 128 / cvb0 - 1) / (128 / cvb0) * ((ncv + cvb0 - 1) / cvb0);
        int64_t cap = (int64_t)GPUML__MAX(ctx->sm_count, 1) * (vec >= 4 ? 4 : cv->dt == GPUML_F16 && cv->p <= 28 ? 6 : 5);
        int64_t nb = GPUML__MAX((int64_t)1, cap / GPUML__MAX(bpb, (int64_t)1));
        tp = (cv->p + nb - 1) / nb;
    }
    if (mode > 0) tp = mode;
    if (cfg[1] > 0) tp = cfg[1];
    tp = GPUML__MIN(tp, cv->p);
    tp = (cv->p + (cv->p + tp - 1) / tp - 1) / ((cv->p + tp - 1) / tp);
    ntile = cv->n * ((cv->p + tp - 1) / tp) * nqt;
    gpuml__cv_kparams(cv, &kp);
    kp.n0 = tp;
    if (vec > 1) {
        /* a block: cvb channel vectors x (128 / cvb) tiles; cvb divides the vector count where it can */
        if (ncv <= 32) cvb = ncv;
        else {
            for (cvb = 32; cvb >= 8 && ncv % cvb; cvb--) {}
            if (cvb < 8) cvb = 32;
        }
        block[0] = (unsigned)(cvb * (128 / cvb));
        grid[1] = (unsigned)((ncv + cvb - 1) / cvb);
        if ((ntile + 128 / cvb - 1) / (128 / cvb) > INT32_MAX || grid[1] > 65535) return GPUML_ERROR_NOT_SUPPORTED;
        grid[0] = (unsigned)((ntile + 128 / cvb - 1) / (128 / cvb));
        kp.ldcol = cvb;
        kp.total = ntile;
    } else {
        kp.total = ntile * cv->c;
        grid[0] = gpuml__grid_for(ctx, kp.total, 128);
    }
    /* channel vectors: the weights read from shared memory (the kernel's default: fewer registers);
       the register bound: 3 blocks a SM (4 spilled), f16 planes of <= 28 rows
       at 2 channels a thread 6 (80 registers: c192 @28, 672 blocks, fits one wave at 6 a SM, 18.1
       us, not at 5, 23.4 us) where that does not spill (sm_90, 32-bit indices, no gelu), else 5 */
    if (!cfg[4] && vec == 2 && cv->dt == GPUML_F16 && cv->p <= 28)
        cfg[4] = gpuml__cv_fits32(cv, kp.total) && ctx->arch >= 90 && cv->act != GPUML_ACT_GELU ? 6 : 5;
    if (cfg[4] >= 1 && cfg[4] <= 8) snprintf(minb, sizeof minb, " -DDW3_MINB=%d", cfg[4]);
    if (cfg[5] == 2 && vec > 1) strcat(minb, " -DDW3_WS=0");
    snprintf(opts, sizeof opts, "-DCONV_DT=%d -DCONV_EPI=%d -DCONV_BIAS=%d -DCONV_RES=%d -DCONV_I32=%d -DPOOL_MAX=1 -DDW3_VEC=%d -DDW3_QT=%d "
             "-DDW3_ST=%d -DDW3_PF=%d%s", (int)cv->dt, cv->act, cv->bias != NULL, cv->res != NULL,
             gpuml__cv_fits32(cv, kp.total), (int)vec, (int)qt, cv->sh, (int)pf,
             minb);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, "gpuml_conv_dw3", &fn));
    if (kp.total <= 0) return GPUML_SUCCESS;
    args[0] = &kp;
    gpuml__cv_dw3_calls++;
    return gpuml__launch(ctx, fn, grid, block, 0, args, op);
}

/* weights as a contiguous [K][R][S][cg] tensor of the problem's dtype: w itself when it is one
   already, else a copy into *tmp (freed by the caller) */
GPUML__FN gpuml_status gpuml__cv_krsc(gpuml_ctx *ctx, const gpuml__cv *cv, const gpuml_tensor *w, gpuml_tensor **tmp,
                                      const gpuml_tensor **out, gpuml_dtype dt, const char *op)
{
    int64_t shape[4], st[4], dims[4], strides[4];
    gpuml_tensor v;
    int i;
    static const int perm[2][4] = { { 0, 1, 2, 3 }, { 0, 2, 3, 1 } };
    *tmp = NULL;
    if (w && w->dtype == dt && cv->ws[3] == 1 && cv->ws[2] == cv->cg && cv->ws[1] == cv->s * cv->cg && cv->ws[0] == cv->ncol) {
        *out = w;
        return GPUML_SUCCESS;
    }
    shape[0] = cv->k; shape[1] = cv->r; shape[2] = cv->s; shape[3] = cv->cg;
    *tmp = gpuml__tensor_new(ctx, dt, 4, shape, op);
    if (!*tmp) return ctx->status;
    *out = *tmp;
    if (!w) return GPUML_SUCCESS;
    /* the contiguous KRSC strides, seen in w's own dim order */
    st[0] = cv->ncol; st[1] = cv->s * cv->cg; st[2] = cv->cg; st[3] = 1;
    for (i = 0; i < 4; i++) { dims[perm[cv->layout][i]] = shape[i]; strides[perm[cv->layout][i]] = st[i]; }
    v = gpuml__cv_view(*tmp, 4, dims, strides, 0);
    return gpuml__copy(ctx, &v, w);
}

/* Device budget of one im2col chunk, in elements (256 MiB of f32; tests make it small). */
#ifndef GPUML__CV_GPU_COL
#define GPUML__CV_GPU_COL ((int64_t)64 << 20)
#endif

/* f32 NCHW 1x1 stride-1 unpadded conv with groups 1, x read as it is (gpuml_conv_1x1s in
   kernels/conv.cu: per image y[n] = w @ x[n], bias / act / residual fused).  mode 1: CUDA cores
   (f32 FMA, 64 x 256 tiles); 2: tf32 tensor cores (mma.sync, sm_80+; allow_tf32), its ring depth
   and pixel tile from gpuml__cv_1x1s_cfg or GPUML_CONV_1X1S_CFG=stages,pixels (0: 4 x 256, the
   H100's best; fewer stages where the device's shared memory per block is smaller).
   NOT_SUPPORTED (no message) where its layout preconditions do not hold */
static int gpuml__cv_1x1s_cfg[2];
GPUML__FN gpuml_status gpuml__cv_1x1s(gpuml_ctx *ctx, const gpuml__cv *cv, int mode, const char *op)
{
    gpuml__conv_params kp;
    gpuml__CUfunction fn;
    char opts[240];
    unsigned grid[3], block[3] = {256, 1, 1}, smem = 0;
    void *args[1];
    int64_t pq = cv->p * cv->q;
    const int64_t *st[3];
    const gpuml_tensor *t[3];
    int i, stages = 4, tn = 256;
    if (cv->dt != GPUML_F32 || cv->layout != GPUML_LAYOUT_NCHW || cv->groups != 1 || cv->r != 1 || cv->s != 1 || cv->sh != 1 ||
        cv->sw != 1 || cv->pt || cv->pb || cv->pl || cv->pr || pq % 4 || pq > INT32_MAX || cv->k > INT32_MAX || cv->c > INT32_MAX ||
        cv->n > 65535 || (cv->k + 63) / 64 > 65535 || mode < 1 || mode > 2 || (mode == 2 && ctx->arch < 80))
        return GPUML_ERROR_NOT_SUPPORTED;
    /* x, y, res: the pixels of one (n, c) row contiguous, rows 16-byte aligned */
    t[0] = cv->x; t[1] = cv->y; t[2] = cv->res; st[0] = cv->xs; st[1] = cv->ys; st[2] = cv->rs;
    for (i = 0; i < 3; i++) {
        if (!t[i]) continue;
        if (st[i][2] != 1 || (st[i][1] != cv->q && cv->p != 1) || st[i][0] % 4 || st[i][3] % 4 || !gpuml__aligned16(gpuml__dptr(t[i])))
            return GPUML_ERROR_NOT_SUPPORTED;
    }
    gpuml__cv_kparams(cv, &kp);
    snprintf(opts, sizeof opts, "-DCONV_DT=0 -DCONV_EPI=%d -DCONV_BIAS=%d -DCONV_RES=%d -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_1X1=%d",
             cv->act, cv->bias != NULL, cv->res != NULL, mode);
    if (mode == 2) {
        const char *env = gpuml__getenv("GPUML_CONV_1X1S_CFG");
        int cfg[2], stage_bytes;
        cfg[0] = gpuml__cv_1x1s_cfg[0]; cfg[1] = gpuml__cv_1x1s_cfg[1];
        if (env && !cfg[0]) sscanf(env, "%d,%d", &cfg[0], &cfg[1]);
        if (cfg[0] >= 2 && cfg[0] <= 8) stages = cfg[0];
        if (cfg[1] == 128 || cfg[1] == 256) tn = cfg[1];
        stage_bytes = (64 * 20 + 16 * (tn + 8)) * 4;   /* a w tile and an x tile, padded rows */
        while (stages > 2 && stages * stage_bytes > ctx->smem_optin) stages--;
        smem = (unsigned)(stages * stage_bytes);
        if ((int)smem > ctx->smem_optin) return GPUML_ERROR_NOT_SUPPORTED;
        snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " -DC1T_ST=%d -DC1T_TN=%d", stages, tn);
    }
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, "gpuml_conv_1x1s", &fn));
    if (cv->n == 0 || pq == 0 || cv->k == 0) return GPUML_SUCCESS;
    grid[0] = (unsigned)((pq + tn - 1) / tn); grid[1] = (unsigned)((cv->k + 63) / 64); grid[2] = (unsigned)cv->n;
    args[0] = &kp;
    return gpuml__launch(ctx, fn, grid, block, smem, args, op);
}

/* f32 NCHW 1x1 stride-1 unpadded conv with groups 1 on Hopper's tensor cores for allow_tf32, x read
   as it is (gpuml_conv_1x1w in kernels/conv_1x1w.cu: y^T = x^T w^T by wgmma, x^T's fragments in
   registers; bias / act / residual fused).  Tile configurations {warpgroups (64 pixels each),
   output channels, ring depth, blocks an SM}; cfg 1..9 picks one (tests, GPUML_CONV_1X1W_CFG=n),
   0 the rule below.  Two forms, each on unless turned off (gpuml__cv_1x1w_var = 1 + tma + 2 eps,
   or GPUML_CONV_1X1W_VAR=tma,eps): w's tiles by TMA (else cp.async), the epilogue staged through
   shared memory for 16-byte stores (else 4-byte stores from the accumulators).
   NOT_SUPPORTED (no message) where the device or the layout does not fit */
static const int gpuml__c1w_cfgs[][4] = {
    { 2, 128, 3, 2 }, { 2, 256, 3, 1 }, { 1, 128, 4, 2 }, { 1, 256, 2, 2 }, { 1, 64, 4, 3 }, { 2, 64, 4, 2 },
    /* two-slot rings, more blocks an SM: short channel loops (C <= 64), where a block's life is its loads */
    { 2, 64, 2, 3 }, { 1, 128, 2, 4 }, { 1, 64, 2, 6 },
};
static int gpuml__cv_1x1w_cfg, gpuml__cv_1x1w_var, gpuml__cv_1x1w_img, gpuml__cv_1x1w_split;
static int gpuml__cv_1x1w_split_last;   /* the tiles the last launch split (tests) */
GPUML__FN unsigned gpuml__c1w_smem(int c)
{
    const int *f = gpuml__c1w_cfgs[c];
    return (unsigned)(1024 + f[2] * (f[1] * 128 + 32 * (64 * f[0] + 8) * 4) + 64);   /* + the slots' mbarriers */
}
GPUML__FN gpuml_status gpuml__cv_1x1w(gpuml_ctx *ctx, const gpuml__cv *cv, int cfg, const char *op)
{
    gpuml__conv_params kp;
    gpuml__CUfunction fn;
    char opts[280];
    unsigned char mapbuf[128 + 64];
    void *map = mapbuf + (64 - ((uintptr_t)mapbuf & 63)) % 64;
    unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
    void *args[3];
    int64_t pq = cv->p * cv->q, np = cv->n * pq, tiles;
    const int64_t *st[3];
    const gpuml_tensor *t[3];
    const int *f;
    int i, tma = 1, eps = 1, v16 = 1, img = 0, pipe = 0, split = 0;
    struct { gpuml__CUdeviceptr cnt, ws; int full, pad; } sk;
    gpuml_tensor *ws = NULL;
    gpuml_status rc;
    if (ctx->arch != 90 || cv->dt != GPUML_F32 || cv->layout != GPUML_LAYOUT_NCHW || cv->groups != 1 || cv->r != 1 || cv->s != 1 ||
        cv->sh != 1 || cv->sw != 1 || cv->pt || cv->pb || cv->pl || cv->pr || np > INT32_MAX - 256 || cv->k > INT32_MAX ||
        cv->c > INT32_MAX || cv->c % 4 || cv->ws[3] != 1 || cv->ws[0] % 4 || !gpuml__aligned16(gpuml__dptr(cv->wt)))
        return GPUML_ERROR_NOT_SUPPORTED;
    t[0] = cv->x; t[1] = cv->y; t[2] = cv->res; st[0] = cv->xs; st[1] = cv->ys; st[2] = cv->rs;
    if (cv->up2 && (cv->res || cv->q % 2 || cv->ys[2] != 2 || cv->ys[1] % 4 || cv->ys[1] < 4 * cv->q)) return GPUML_ERROR_NOT_SUPPORTED;
    for (i = 0; i < 3; i++) {   /* the pixels of one (n, c) row contiguous; 16-byte copies: rows 16-byte aligned */
        if (!t[i]) continue;
        if (i == 1 && cv->up2) {   /* y: every other pixel of every other row of a dx; 16-byte stores of pixel pairs (Q even) */
            if (pq % 4 || st[i][0] % 4 || st[i][3] % 4 || !gpuml__aligned16(gpuml__dptr(t[i]))) return GPUML_ERROR_NOT_SUPPORTED;
            continue;
        }
        if (st[i][2] != 1 || (st[i][1] != cv->q && cv->p != 1)) return GPUML_ERROR_NOT_SUPPORTED;
        if (pq % 4 || st[i][0] % 4 || st[i][3] % 4 || !gpuml__aligned16(gpuml__dptr(t[i]))) v16 = 0;
    }
    if (gpuml__cv_1x1w_var >= 1 && gpuml__cv_1x1w_var <= 4) {
        tma = (gpuml__cv_1x1w_var - 1) & 1; eps = (gpuml__cv_1x1w_var - 1) >> 1;
    } else {
        const char *env = gpuml__getenv("GPUML_CONV_1X1W_VAR");
        if (env) sscanf(env, "%d,%d", &tma, &eps);
    }
    if (!ctx->cu.TensorMapEncodeTiled) tma = 0;
    /* small images (PQ <= the pixel tile) whose x rows are not 16-byte copies (the 7 x 7 layers): a
       block an image, x's step (32 channel rows of PQ pixels, contiguous) by one bulk copy beside w's
       TMA tile (H100, batch 32, us, against the NCHW -> NHWC pass + wgmma implicit GEMM they took
       before: 2048->512 @7 51.6 -> 33.4, 512->2048 @7 34.7 -> 30.1 with the rule below; cuDNN 37.9 / 34.9;
       bench/NOTES_conv.md).  GPUML_CONV_1X1W_IMG=off / on (gpuml__cv_1x1w_img -1 / 1; on: also for
       16-byte rows).  Rows that are neither: declined (the previous routes) */
    if (tma && cv->c % 32 == 0 && cv->xs[3] == pq && cv->xs[0] % 4 == 0 && gpuml__aligned16(gpuml__dptr(cv->x))) {
        const char *env = gpuml__getenv("GPUML_CONV_1X1W_IMG");
        int on = gpuml__cv_1x1w_img ? gpuml__cv_1x1w_img : env && strcmp(env, "on") == 0 ? 1 : env && strcmp(env, "off") == 0 ? -1 : 0;
        img = on > 0 || (on == 0 && !v16);
    }
    if (cfg < 1 || cfg > (int)(sizeof gpuml__c1w_cfgs / sizeof gpuml__c1w_cfgs[0])) {
        const char *env = gpuml__getenv("GPUML_CONV_1X1W_CFG");
        cfg = gpuml__cv_1x1w_cfg ? gpuml__cv_1x1w_cfg : env ? atoi(env) : 0;
        /* the rule (H100, ResNet-50's 1x1 layers at batch 32, every configuration forced: 128 x 128
           tiles fastest on all but the K = 64 layers, where 128 x 64 tiles are 3-6% faster;
           bench/NOTES_conv.md); one image a block: 64-pixel tiles, 256 output channels where K >=
           1024, else 64 (512->2048 @7 30.1 us against 32.5 with 128; 2048->512 @7 33.1 against 34.9).
           K <= 64 or C <= 64 (short loops or narrow tiles: a block's life is mostly its loads and
           stores): 64 x 64 tiles in a two-slot ring, six blocks an SM (H200, batch 32, us: 64->64 @56
           23.3 -> 20.1, 64->256 @56 56.5 -> 49.9, 256->64 @56 42.3 -> 39.9; bench/NOTES_conv.md) */
        if (cfg < 1 || cfg > (int)(sizeof gpuml__c1w_cfgs / sizeof gpuml__c1w_cfgs[0])) {
            cfg = img && pq <= 64 ? (cv->k >= 1024 ? 4 : 5) : (cv->k <= 64 || cv->c <= 64) && !img ? 9 : cv->k <= 64 ? 6 : 1;
            /* 128 x 128 tiles that leave SMs idle: 64 x 128 ones, twice the blocks (1024->256 @14:
               98 blocks on 132 SMs, 33.4-34.0 us; 196 blocks 29.3-30.3 us, three calls, H100) */
            if (cfg == 1 && !img && (np + 127) / 128 * ((cv->k + 127) / 128) < GPUML__MAX(ctx->sm_count, 1)) cfg = 3;
        }
    }
    f = gpuml__c1w_cfgs[cfg - 1];
    if (pq > 64 * f[0] || cv->up2) img = 0;
    if (!v16 && !img) return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->up2) eps = 1;   /* the spread store is the staged epilogue's */
    if (img) eps = 0;   /* one image a block: 4-byte stores (any PQ) */
    if ((int)gpuml__c1w_smem(cfg - 1) > ctx->smem_optin) return GPUML_ERROR_NOT_SUPPORTED;
    tiles = (img ? cv->n : (np + 64 * f[0] - 1) / (64 * f[0])) * ((cv->k + f[1] - 1) / f[1]);
    if (tiles > INT32_MAX) return GPUML_ERROR_NOT_SUPPORTED;
    gpuml__cv_kparams(cv, &kp);
    memset(map, 0, 128);
    /* w as a [K][C] matrix of f32, boxes of 32 channels x BN rows, 128-byte swizzle (rows past K and
       channels past C read as 0) */
    if (tma && !gpuml__tmap(ctx, map, 7 /* FLOAT32 */, kp.wt, cv->c, cv->k, cv->ws[0] * 4, 32, (unsigned)f[1])) tma = 0;
    if (!tma && img) {   /* no tensor map after all: the pixel tiles, where x's rows allow them */
        if (!v16) return GPUML_ERROR_NOT_SUPPORTED;
        img = 0;
        tiles = (np + 64 * f[0] - 1) / (64 * f[0]) * ((cv->k + f[1] - 1) / f[1]);
    }
    {   /* a tail of tiles that would leave most block slots idle in the last wave (tiles % slots <=
           slots / 2): its tiles split in two along the channel steps, each half a block, the pair's
           second finisher adding the first's partial sums (the gpuml__c1w_split comment in
           kernels/conv_1x1w.cu), so the tail costs about half a wave (H200, 512->256 @28 at batch 32:
           392 tiles of 128 x 128 on 264 slots took 49.4 us, 258 tiles at batch 21 26.8, split 45.4;
           at 8 channel steps a tile, 256->1024 @14, no gain: 16 steps or more; bench/NOTES_conv.md).  gpuml__cv_1x1w_split / GPUML_CONV_1X1W_SPLIT: n > 0 splits the last
           n tiles (tests), -1 (off) never */
        const char *env = gpuml__getenv("GPUML_CONV_1X1W_SPLIT");
        int64_t slots = (int64_t)GPUML__MAX(ctx->sm_count, 1) * GPUML__MIN(f[3], (ctx->smem_optin + 1024) / (int)gpuml__c1w_smem(cfg - 1));
        int force = gpuml__cv_1x1w_split ? gpuml__cv_1x1w_split : env ? (strcmp(env, "off") == 0 ? -1 : atoi(env)) : 0;
        if (force > 0) split = (int)GPUML__MIN((int64_t)force, tiles);
        else if (force == 0 && tiles > slots && (cv->c + 31) / 32 >= 16 && tiles % slots * 2 <= slots) split = (int)(tiles % slots);
        if (split > GPUML__TAIL_CNT) split = 0;
        if (split > 0 && !gpuml__tail_counters(ctx)) split = 0;
        gpuml__cv_1x1w_split_last = split;
    }
    {   /* a step's wgmmas in flight across the next step's fragment loads (two fragment register sets):
           on for one-warpgroup tiles (H100: 1024->256 @14, 64 x 128 tiles, 29.5 -> 28.4 us; 2048->512 @7,
           one image a block, 33.4 -> 29.7), off for two (512->256 @28, 128 x 128 tiles, 50.5 -> 55.2:
           the extra registers); GPUML_CONV_1X1W_PIPE=0 / 1 overrides.  Needs a ring of 3+ slots */
        const char *env = gpuml__getenv("GPUML_CONV_1X1W_PIPE");
        pipe = (env ? atoi(env) > 0 : f[0] == 1) && f[2] >= 3;
    }
    snprintf(opts, sizeof opts, "-DGPUML_C1W=1 -DCONV_EPI=%d -DCONV_BIAS=%d -DCONV_RES=%d -DC1W_WG=%d -DC1W_BN=%d -DC1W_ST=%d -DC1W_MINB=%d "
             "-DC1W_TMA=%d -DC1W_EPS=%d -DC1W_IMG=%d -DC1W_PIPE=%d -DC1W_SPLIT=%d%s", cv->act, cv->bias != NULL, cv->res != NULL, f[0], f[1], f[2], f[3],
             tma != 0, eps != 0, img, pipe, split > 0, cv->up2 ? " -DC1W_UP=1" : "");
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_1x1w, opts, "gpuml_conv_1x1w", &fn));
    if (np == 0 || cv->k == 0) return GPUML_SUCCESS;
    grid[0] = (unsigned)(tiles + split); block[0] = (unsigned)(128 * f[0]);
    args[0] = map; args[1] = &kp; args[2] = &sk;
    memset(&sk, 0, sizeof sk);
    if (split > 0) {   /* the first finisher of each pair leaves its BN x BP partial sums here */
        int64_t n = (int64_t)split * f[1] * 64 * f[0];
        ws = gpuml__tensor_new(ctx, GPUML_F32, 1, &n, "gpuml_conv2d (split tail)");
        if (!ws) return ctx->status;
        sk.cnt = ctx->tail_cnt; sk.ws = gpuml__dptr(ws); sk.full = (int)(tiles - split);
    }
    rc = gpuml__launch(ctx, fn, grid, block, gpuml__c1w_smem(cfg - 1), args, op);
    gpuml_tensor_free(ws);   /* stream-ordered: the next user of the block runs after the kernel */
    return rc;
}

/* f32 backward filter of a 1x1 stride-1 unpadded conv (groups 1) on the tensor cores with x and dy
   read as they are (gpuml_conv_bwf1x1 in kernels/conv.cu: 64 x 128 output tiles, each over a run
   of the pixel steps, partial sums per run), then the runs summed into dw (gpuml_conv_bwf1x1_sum;
   deterministic; in 3xTF32 it recomputes the outputs that read NaN in plain f32: IEEE's +-Inf for
   Inf inputs, which the split would make NaN).  Two flavours: pixels contiguous (NCHW: steps of 32 pixels of an image, PQ % 4
   == 0) and channels contiguous with the pixels merging into one dim (NHWC: steps of 32 of the N *
   P * Q pixels, C % 4 == 0, K % 4 == 0); tf32 with allow_tf32, else 3xTF32 in the kernel's
   registers (f32-level error).  sm_80+.  gpuml__cv_bwf1x1_on: tests / A/B, 1 takes it wherever it
   can run, -1 never (GPUML_CONV_BWF1X1=on / off likewise).  NOT_SUPPORTED (no message) where its
   preconditions do not hold */
static int gpuml__cv_bwf1x1_on;
static long gpuml__cv_bwf1x1_calls;
/* 1 NCHW flavour, 2 NHWC flavour, 0 neither */
GPUML__FN int gpuml__cv_bwf1x1_kind(gpuml_ctx *ctx, const gpuml__cv *cv)
{
    if (cv->dt != GPUML_F32 || ctx->arch < 80 || cv->groups != 1 || cv->r != 1 || cv->s != 1 || cv->sh != 1 ||
        cv->sw != 1 || cv->pt || cv->pb || cv->pl || cv->pr || cv->p * cv->q > INT32_MAX || cv->k > INT32_MAX ||
        cv->c > INT32_MAX || cv->k * cv->c > INT32_MAX - 128 || (cv->k + 63) / 64 > 65535 || cv->wt->dtype != GPUML_F32 ||
        !gpuml__aligned16(gpuml__dptr(cv->x)) || !gpuml__aligned16(gpuml__dptr(cv->y)))
        return 0;
    if (cv->xs[2] == 1 && (cv->xs[1] == cv->w || cv->h == 1) && cv->ys[2] == 1 && (cv->ys[1] == cv->q || cv->p == 1) &&
        (cv->p * cv->q) % 4 == 0 && cv->xs[0] % 4 == 0 && cv->xs[3] % 4 == 0 && cv->ys[0] % 4 == 0 && cv->ys[3] % 4 == 0)
        return 1;
    if (cv->xs[3] == 1 && cv->ys[3] == 1 && cv->c % 4 == 0 && cv->k % 4 == 0 && cv->xs[2] % 4 == 0 && cv->ys[2] % 4 == 0 &&
        (cv->xs[1] == cv->w * cv->xs[2] || cv->h == 1) && (cv->xs[0] == cv->h * cv->w * cv->xs[2] || cv->n == 1) &&
        (cv->ys[1] == cv->q * cv->ys[2] || cv->p == 1) && (cv->ys[0] == cv->p * cv->q * cv->ys[2] || cv->n == 1))
        return 2;
    return 0;
}
GPUML__FN gpuml_status gpuml__cv_bwf1x1(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__conv_params kp;
    gpuml__CUfunction fn, fsum;
    gpuml_tensor *part, dwv;
    gpuml_status st;
    unsigned grid[3], block[3] = {256, 1, 1}, smem;
    void *args[1];
    int64_t pq = cv->p * cv->q, steps, tiles, runs, per, shape[3], dd[2], ds[2];
    int stages = 4, kind = gpuml__cv_bwf1x1_kind(ctx, cv);
    /* a dy tile and an x tile: NCHW rows of 36 floats, NHWC 32 pixel rows of 72 and 136 floats */
    const int stage_bytes = kind == 2 ? 32 * (72 + 136) * 4 : (64 + 128) * 36 * 4;
    char opts[200];
    if (!kind) return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->k == 0 || cv->c == 0) return GPUML_SUCCESS;   /* dw is empty */
    dd[0] = cv->k; dd[1] = cv->c; ds[0] = cv->ws[0]; ds[1] = cv->ws[3];
    dwv = gpuml__cv_view(cv->wt, 2, dd, ds, 0);   /* dw[k][c] in its own strides (KCRS or KRSC) */
    steps = kind == 2 ? (cv->n * pq + 31) / 32 : cv->n * ((pq + 31) / 32);
    if (steps == 0) return gpuml_fill(ctx, &dwv, 0.0);   /* no images or no pixels: dw = 0 */
    tiles = ((cv->c + 127) / 128) * ((cv->k + 63) / 64);
    /* about two blocks an SM in all, each over at least 4 steps */
    runs = GPUML__MAX((int64_t)1, GPUML__MIN((2 * (int64_t)GPUML__MAX(ctx->sm_count, 1) + tiles - 1) / tiles, steps / 4));
    runs = GPUML__MIN(runs, (int64_t)65535);
    per = (steps + runs - 1) / runs;
    runs = (steps + per - 1) / per;
    /* 4 stages (104-108 KB) where the device allows it (sm_86 / sm_89 give a block 99 KB: 3) */
    while (stages > 2 && stages * stage_bytes > ctx->smem_optin) stages--;
    if (stages * stage_bytes > ctx->smem_optin) return GPUML_ERROR_NOT_SUPPORTED;
    snprintf(opts, sizeof opts, "-DCONV_DT=0 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_BWF1X1=1 -DBWF_ST=%d "
             "-DBWF_NHWC=%d -DBWF_3X=%d", stages, kind == 2, !cv->tf32);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, "gpuml_conv_bwf1x1", &fn));
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv, opts, "gpuml_conv_bwf1x1_sum", &fsum));
    shape[0] = runs; shape[1] = cv->k; shape[2] = cv->c;
    part = gpuml__tensor_new(ctx, GPUML_F32, 3, shape, op);
    if (!part) return ctx->status;
    gpuml__cv_kparams(cv, &kp);
    kp.col = gpuml__dptr(part); kp.total = steps; kp.n0 = per; kp.ldcol = cv->n * pq;
    grid[0] = (unsigned)((cv->c + 127) / 128); grid[1] = (unsigned)((cv->k + 63) / 64); grid[2] = (unsigned)runs;
    smem = (unsigned)(stages * stage_bytes);
    args[0] = &kp;
    st = gpuml__launch(ctx, fn, grid, block, smem, args, op);
    if (st == GPUML_SUCCESS) {   /* dw = the sum over the runs (3xTF32: NaN outputs recomputed in f32) */
        kp.ldcol = runs;   /* kp.wt, wk, wc: dw (gpuml__cv_kparams) */
        grid[0] = (unsigned)((cv->k * cv->c + 127) / 128); grid[1] = grid[2] = 1;
        block[0] = 32; block[1] = 8;
        st = gpuml__launch(ctx, fsum, grid, block, 0, args, op);
        if (st == GPUML_SUCCESS) gpuml__cv_bwf1x1_calls++;
    }
    gpuml_tensor_free(part);   /* stream-ordered */
    return st;
}

/* tf32 backward filter of a 1x1 stride-1 unpadded NCHW conv on the wgmma matmul kernel: dw [K x C]
   = the sum over images and pixels of dy[n][k][pix] x[n][c][pix], both operands K-major (pixels
   contiguous) as tf32 wgmma reads them, so no layout pass.  gpuml_matmul_sm90 split-K with rank-3
   tensor maps (GPUML_MM_K3D: a k block is 32 pixels of one image, {pixels, channels, images}
   boxes, pixels past an image's end read as zero), 128 x 256 output tiles, the k blocks of all
   images split so that the units fill the SMs; gpuml_mm_splitk_epi sums the splits' f32 partials
   in a fixed order into dw (deterministic).  Operands enter the tensor cores as stored (the top 19
   bits: tf32 truncation, as in the tf32 matmul).  sm_90 with tensor maps, allow_tf32, f32 dw,
   the NCHW flavour's preconditions (gpuml__cv_bwf1x1_kind 1).  gpuml__cv_bwf1x1w_on: tests / A/B,
   1 takes it wherever it can run, -1 never (GPUML_CONV_BWF1X1W=on / off likewise).
   NOT_SUPPORTED (no message) where it cannot run. */
static int gpuml__cv_bwf1x1w_on;
static long gpuml__cv_bwf1x1w_calls;
GPUML__FN gpuml_status gpuml__cv_bwf1x1w(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    unsigned char mapbuf[3][128 + 64];
    void *maps[3];
    gpuml__mm_params ep;
    int64_t pq = cv->p * cv->q, kbi = (pq + 31) / 32, nkb = cv->n * kbi, units, sm = GPUML__MAX(ctx->sm_count, 1), s, per, ldw;
    int splits, kb_split, i;
    gpuml_status st;
    if (!cv->tf32 || !gpuml__sm90_device(ctx) || gpuml__cv_bwf1x1_kind(ctx, cv) != 1 || nkb * 32 > INT32_MAX || cv->n > INT32_MAX)
        return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->k == 0 || cv->c == 0) return GPUML_SUCCESS;   /* dw is empty */
    if (nkb == 0) return GPUML_ERROR_NOT_SUPPORTED;   /* no pixels: the other route writes the zeros */
    units = ((cv->k + 127) / 128) * ((cv->c + 255) / 256);
    /* about one unit an SM in all, each split over at least 4 k blocks; the workspace under 256 MiB */
    ldw = (cv->c + 3) / 4 * 4;
    s = GPUML__MAX((int64_t)1, GPUML__MIN(sm / GPUML__MAX(units, (int64_t)1), nkb / 4));
    s = GPUML__MIN(s, GPUML__MAX(((int64_t)64 << 20) / (cv->k * ldw), (int64_t)1));
    s = GPUML__MIN(s, (int64_t)1024);
    per = (nkb + s - 1) / s;
    splits = (int)((nkb + per - 1) / per); kb_split = (int)per;
    for (i = 0; i < 3; i++) { maps[i] = mapbuf[i] + (64 - ((uintptr_t)mapbuf[i] & 63)) % 64; memset(maps[i], 0, 128); }
    /* dy {PQ, K, N}, x {PQ, C, N}: channel and image strides in bytes */
    {
        const int64_t dy_dims[3] = {pq, cv->k, cv->n}, dy_st[2] = {cv->ys[3] * 4, cv->ys[0] * 4};
        const int64_t x_dims[3] = {pq, cv->c, cv->n}, x_st[2] = {cv->xs[3] * 4, cv->xs[0] * 4};
        const unsigned dy_box[3] = {32, 128, 1}, x_box[3] = {32, 256, 1};
        if (!gpuml__tmap_rank(ctx, maps[0], 7 /* FLOAT32 */, 3, gpuml__dptr(cv->y), dy_dims, dy_st, dy_box, 3, 3) ||
            !gpuml__tmap_rank(ctx, maps[1], 7 /* FLOAT32 */, 3, gpuml__dptr(cv->x), x_dims, x_st, x_box, 3, 3))
            return GPUML_ERROR_NOT_SUPPORTED;
    }
    /* dw[k][c] in its own strides (KCRS or KRSC) = the sum over the splits */
    memset(&ep, 0, sizeof ep);
    ep.M = (int)cv->k; ep.N = (int)cv->c; ep.K = (int)(nkb * 32); ep.batch = 1;
    ep.C = gpuml__dptr(cv->wt); ep.sc_m = cv->ws[0]; ep.sc_n = cv->ws[3];
    ep.alpha = 1.0f; ep.beta = 0.0f; ep.scale = 1.0f;
    st = gpuml__sm90_splitk_launch(ctx, maps, "tf32", "tf32", 1, (int)kbi, cv->k, cv->c, nkb * 32, splits, kb_split, units, &ep,
                                   "-DGPUML_A_DT=0 -DGPUML_B_DT=0 -DGPUML_C_DT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 "
                                   "-DGPUML_BETA=0 -DGPUML_INT=0", op, 256);
    if (st == GPUML_SUCCESS) gpuml__cv_bwf1x1w_calls++;
    return st;
}

/* forward as GEMM for outputs whose q dim has unit stride (NCHW): y[n] = w_g [kg, ncol] @ col[n]
   [ncol, pq] with the transposed im2col (or x itself for 1x1 stride-1 unpadded), an NN GEMM
   with rows of y contiguous.  Without a bias, act and residual ride on the GEMM's epilogue (one
   rounding of the sum into y, no second pass over it).  With one (the GEMM's epilogue adds bias
   per column, not per row) bias, act and residual follow in one pass: over y itself for f32, and
   for f16 / bf16 from f32 sums that the GEMM writes to a scratch buffer (chunks of whole images,
   at most 64 MiB), so that y is rounded once.  Not for a residual that overlaps y (the GEMM
   overwrites it). */
GPUML__FN gpuml_status gpuml__cv_gemm_fwd_t(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml_tensor *wtmp = NULL, *col = NULL, *sums = NULL;
    const gpuml_tensor *wk;
    gpuml_status st = GPUML_SUCCESS;
    int64_t pq = cv->p * cv->q, nb, n0, g;
    int direct = cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt && !cv->pb && !cv->pl && !cv->pr &&
                 (cv->xs[1] == cv->w * cv->xs[2] || cv->h == 1), fuse = !cv->bias, f32sums = cv->bias && cv->dt != GPUML_F32;
    gpuml_matmul_desc md;
    memset(&md, 0, sizeof md);   /* allow_tf32 0, as before */
    if (fuse) md.act = (gpuml_activation)cv->act;
    GPUML__TRY(gpuml__cv_krsc(ctx, cv, cv->wt, &wtmp, &wk, cv->dt, op));
    nb = direct ? cv->n : GPUML__MAX(GPUML__MIN(GPUML__CV_GPU_COL / (pq * cv->ncol), cv->n), (int64_t)1);
    if (f32sums) nb = GPUML__MAX(GPUML__MIN(nb, GPUML__CV_GPU_COL / 4 / GPUML__MAX(pq * cv->k, (int64_t)1)), (int64_t)1);
    if (!direct) {
        int64_t shape[1];
        shape[0] = nb * pq * cv->ncol;
        col = gpuml__tensor_new(ctx, cv->dt, 1, shape, op);
        if (!col) { gpuml_tensor_free(wtmp); return ctx->status; }
    }
    if (f32sums) {
        int64_t shape[1];
        shape[0] = nb * pq * cv->k;
        sums = gpuml__tensor_new(ctx, GPUML_F32, 1, shape, op);
        if (!sums) { gpuml_tensor_free(col); gpuml_tensor_free(wtmp); return ctx->status; }
    }
    for (n0 = 0; st == GPUML_SUCCESS && n0 < cv->n; n0 += nb) {
        int64_t cnt = GPUML__MIN(nb, cv->n - n0);
        for (g = 0; st == GPUML_SUCCESS && g < cv->groups; g++) {
            gpuml_tensor a, b, c, r;
            int64_t da[2], sa[2], db[3], sb[3], dc[3], sc[3], sr[3];
            if (!direct) {
                gpuml__conv_params kp;
                gpuml__cv_kparams(cv, &kp);
                kp.col = gpuml__dptr(col); kp.ldcol = cv->ncol; kp.n0 = n0; kp.g = g; kp.total = cnt * pq * cv->ncol;
                kp.order = 1;   /* transposed: col[n][j][m] */
                st = gpuml__cv_launch(ctx, cv, "gpuml_conv_im2col", &kp, 0, 0, kp.total, op);
                if (st != GPUML_SUCCESS) break;
                db[0] = cnt; db[1] = cv->ncol; db[2] = pq; sb[0] = cv->ncol * pq; sb[1] = pq; sb[2] = 1;
                b = gpuml__cv_view(col, 3, db, sb, 0);
            } else {
                db[0] = cnt; db[1] = cv->cg; db[2] = pq; sb[0] = cv->xs[0]; sb[1] = cv->xs[3]; sb[2] = cv->xs[2];
                b = gpuml__cv_view(cv->x, 3, db, sb, n0 * cv->xs[0] + g * cv->cg * cv->xs[3]);
            }
            da[0] = cv->kg; da[1] = cv->ncol; sa[0] = cv->ncol; sa[1] = 1;
            dc[0] = cnt; dc[1] = cv->kg; dc[2] = pq; sc[0] = cv->ys[0]; sc[1] = cv->ys[3]; sc[2] = cv->ys[2];
            a = gpuml__cv_view(wk, 2, da, sa, g * cv->kg * cv->ncol);
            if (f32sums) {   /* [cnt][k][pq] f32, this group's channels */
                sc[0] = cv->k * pq; sc[1] = pq; sc[2] = 1;
                c = gpuml__cv_view(sums, 3, dc, sc, g * cv->kg * pq);
            } else {
                c = gpuml__cv_view(cv->y, 3, dc, sc, n0 * cv->ys[0] + g * cv->kg * cv->ys[3]);
            }
            if (fuse && cv->res) {
                sr[0] = cv->rs[0]; sr[1] = cv->rs[3]; sr[2] = cv->rs[2];
                r = gpuml__cv_view(cv->res, 3, dc, sr, n0 * cv->rs[0] + g * cv->kg * cv->rs[3]);
                md.residual = &r;
            }
            st = gpuml_matmul(ctx, &c, &a, &b, &md);
        }
        if (st == GPUML_SUCCESS && f32sums) {   /* y = residual + act(sums + bias), rounded once */
            gpuml__conv_params kp;
            gpuml__cv_kparams(cv, &kp);
            kp.order = 1; kp.col = gpuml__dptr(sums); kp.n0 = n0; kp.total = cnt * pq * cv->k;
            st = gpuml__cv_launch_x(ctx, cv, "gpuml_conv_epi", &kp, 1, 0, 0, " -DCONV_EPI_SRC=1", op);
        }
    }
    gpuml_tensor_free(sums);
    gpuml_tensor_free(col);
    gpuml_tensor_free(wtmp);
    if (st == GPUML_SUCCESS && !fuse && !f32sums) {
        gpuml__conv_params kp;
        gpuml__cv_kparams(cv, &kp);
        kp.order = 1;
        kp.total = cv->n * pq * cv->k;
        st = gpuml__cv_launch(ctx, cv, "gpuml_conv_epi", &kp, 1, 0, 0, op);
    }
    return st;
}

/* forward as GEMM: 1x1 stride-1 unpadded with groups 1 as one gpuml_matmul, else im2col chunks
   (whole images) + one batched gpuml_matmul per chunk and group.  NOT_SUPPORTED where y's
   (p, q) dims do not merge into one. */
GPUML__FN gpuml_status gpuml__cv_gemm_fwd(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml_matmul_desc md;
    gpuml_tensor *wtmp = NULL, *col = NULL;
    const gpuml_tensor *wk;
    gpuml_status st = GPUML_SUCCESS;
    int64_t pq = cv->p * cv->q, nb, n0, g;
    int merge_y = cv->ys[1] == cv->q * cv->ys[2] || cv->p == 1, fold;
    if (!merge_y || (cv->res && !(cv->rs[1] == cv->q * cv->rs[2] || cv->p == 1)))
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the GEMM path needs y's (and the residual's) rows and columns "
                           "to merge into one dim (NHWC or NCHW layouts)", op);
    if (cv->ys[3] != 1 && cv->ys[2] == 1 && !(cv->res && gpuml__overlap(cv->res, cv->y)))
        return gpuml__cv_gemm_fwd_t(ctx, cv, op);
    memset(&md, 0, sizeof md);
    md.act = (gpuml_activation)cv->act;
    md.allow_tf32 = cv->tf32;   /* f32 with allow_tf32: tf32 products (else 3xTF32 where the matmul takes it) */
    if (cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt && !cv->pb && !cv->pl && !cv->pr && cv->groups == 1 &&
        (cv->xs[1] == cv->w * cv->xs[2] || cv->h == 1)) {
        /* y[n][pq][k] = x[n][hw][c] @ w[k][c]^T, with the batch folded into the rows where all of them allow it */
        int64_t sa[3], sb[2], sc[3], sr[3], da[3], db[2], dc[3];
        int fold = cv->xs[0] == pq * cv->xs[2] && cv->ys[0] == pq * cv->ys[2] && (!cv->res || cv->rs[0] == pq * cv->rs[2]);
        gpuml_tensor a, b, c, r, bias;
        int nd = fold ? 2 : 3, o = fold ? 1 : 0;
        da[0] = cv->n; da[1] = pq; da[2] = cv->c; sa[0] = cv->xs[0]; sa[1] = cv->xs[2]; sa[2] = cv->xs[3];
        dc[0] = cv->n; dc[1] = pq; dc[2] = cv->k; sc[0] = cv->ys[0]; sc[1] = cv->ys[2]; sc[2] = cv->ys[3];
        sr[0] = cv->rs[0]; sr[1] = cv->rs[2]; sr[2] = cv->rs[3];
        if (fold) { da[1] = dc[1] = cv->n * pq; }
        db[0] = cv->c; db[1] = cv->k; sb[0] = cv->ws[3]; sb[1] = cv->ws[0];
        a = gpuml__cv_view(cv->x, nd, da + o, sa + o, 0);
        b = gpuml__cv_view(cv->wt, 2, db, sb, 0);
        c = gpuml__cv_view(cv->y, nd, dc + o, sc + o, 0);
        if (cv->res) { r = gpuml__cv_view(cv->res, nd, dc + o, sr + o, 0); md.residual = &r; }
        if (cv->bias) { bias = *cv->bias; md.bias = &bias; }
        return gpuml_matmul(ctx, &c, &a, &b, &md);
    }
    fold = (cv->ys[0] == pq * cv->ys[2] || cv->n == 1) && (!cv->res || cv->rs[0] == pq * cv->rs[2] || cv->n == 1);
    GPUML__TRY(gpuml__cv_krsc(ctx, cv, cv->wt, &wtmp, &wk, cv->dt, op));
    nb = GPUML__MAX(GPUML__MIN(GPUML__CV_GPU_COL / (pq * cv->ncol), cv->n), (int64_t)1);
    {
        int64_t shape[1];
        shape[0] = nb * pq * cv->ncol;
        col = gpuml__tensor_new(ctx, cv->dt, 1, shape, op);
        if (!col) { gpuml_tensor_free(wtmp); return ctx->status; }
    }
    for (n0 = 0; st == GPUML_SUCCESS && n0 < cv->n; n0 += nb) {
        int64_t cnt = GPUML__MIN(nb, cv->n - n0);
        for (g = 0; st == GPUML_SUCCESS && g < cv->groups; g++) {
            gpuml__conv_params kp;
            gpuml_tensor a, b, c, r, bias;
            int64_t da[3], sa[3], db[2], sb[2], dc[3], sc[3], sr[3], dbias[1], sbias[1];
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(col); kp.ldcol = cv->ncol; kp.n0 = n0; kp.g = g; kp.total = cnt * pq * cv->ncol;
            kp.order = 0;   /* row-major col[m][j] (the kernel's order 1 is the transposed layout) */
            st = gpuml__cv_launch(ctx, cv, "gpuml_conv_im2col", &kp, 0, 0, kp.total, op);
            if (st != GPUML_SUCCESS) break;
            da[0] = cnt; da[1] = pq; da[2] = cv->ncol; sa[0] = pq * cv->ncol; sa[1] = cv->ncol; sa[2] = 1;
            db[0] = cv->ncol; db[1] = cv->kg; sb[0] = 1; sb[1] = cv->ncol;
            dc[0] = cnt; dc[1] = pq; dc[2] = cv->kg; sc[0] = cv->ys[0]; sc[1] = cv->ys[2]; sc[2] = cv->ys[3];
            sr[0] = cv->rs[0]; sr[1] = cv->rs[2]; sr[2] = cv->rs[3];
            if (fold) da[1] = dc[1] = cnt * pq;   /* one GEMM of cnt*P*Q rows instead of a batch of images */
            a = gpuml__cv_view(col, 3 - fold, da + fold, sa + fold, 0);
            b = gpuml__cv_view(wk, 2, db, sb, g * cv->kg * cv->ncol);
            c = gpuml__cv_view(cv->y, 3 - fold, dc + fold, sc + fold, n0 * cv->ys[0] + g * cv->kg * cv->ys[3]);
            md.residual = NULL; md.bias = NULL;
            if (cv->res) { r = gpuml__cv_view(cv->res, 3 - fold, dc + fold, sr + fold, n0 * cv->rs[0] + g * cv->kg * cv->rs[3]); md.residual = &r; }
            if (cv->bias) { dbias[0] = cv->kg; sbias[0] = 1; bias = gpuml__cv_view(cv->bias, 1, dbias, sbias, g * cv->kg); md.bias = &bias; }
            st = gpuml_matmul(ctx, &c, &a, &b, &md);
        }
    }
    gpuml_tensor_free(col);
    gpuml_tensor_free(wtmp);
    return st;
}

/* GPUML_CONV_BWD=old (or gpuml__cv_bwd_old = 1, for tests and A/B runs): the backward passes as
   before the forward-conv backward data and the tensor-core backward filter; GPUML_CONV_BWD=slices
   (gpuml__cv_bwd_old = 2): the sliced mma.sync backward filter on Hopper too; GPUML_CONV_BWD=gemm:
   Hopper's backward filter as one materialized GEMM instead of the implicit GEMM (gpuml__cv_bwf_sm90) */
static int gpuml__cv_bwd_old;
static long gpuml__cv_bwd_calls[4];   /* runs of the forward-conv backward data / tensor-core backward filter / its Hopper
                                         implicit GEMM / the f32 backward filter as a conv (tests) */
GPUML__FN int gpuml__cv_bwd_is_old(void)
{
    const char *env = gpuml__getenv("GPUML_CONV_BWD");
    return gpuml__cv_bwd_old == 1 || (env && strcmp(env, "old") == 0);
}

/* gpuml_conv_dyup (kp set up for it: p.h x p.w pixels of p.k channels written to kp->col, the
   source through p.y and its strides), in 16-byte vectors where the layout allows */
GPUML__FN gpuml_status gpuml__cv_dyup(gpuml_ctx *ctx, const gpuml__cv *cv, gpuml__conv_params *kp, const char *op)
{
    int64_t ve = 16 / (int64_t)gpuml__dtype_sizes[cv->dt];
    kp->total = kp->n * kp->h * kp->w * kp->k;
    if (kp->order == 0 && kp->yk == 1 && kp->k % ve == 0 && kp->yn % ve == 0 && kp->yp % ve == 0 && kp->yq % ve == 0 &&
        !((kp->y | kp->col) & 15)) {
        int64_t elems = kp->total;
        kp->total = elems / ve;
        return gpuml__cv_launch(ctx, cv, "gpuml_conv_dyup_v", kp, 0, 0, elems, op);
    }
    return gpuml__cv_launch(ctx, cv, "gpuml_conv_dyup", kp, 0, 0, kp->total, op);
}

/* backward data of a strided, unpadded 1x1 conv (groups 1, contiguous NHWC dx and dy): the rows
   dy [N*P*Q, K] @ w [K, C] into a temporary (the fast matmul), then one pass writes all of dx: the
   GEMM's rows at (p*sh, q*sw), zeros elsewhere (gpuml_conv_dyup).  (The zero-upsampled forward conv
   below measured 1.3x slower than the GEMM + col2im route on a 1x1 stride-2 layer: 4x the MACs on
   a 1x1.)  NCHW (contiguous dx): the GEMM is a 1x1 forward conv of dy with w's channels swapped
   (w^T seen as KCRS [C][K][1][1], no copy), on the forward's f32 tensor-core paths (allow_tf32
   passed on), into an NCHW temporary, then the same scatter in NCHW order (H100, f32 NCHW
   256 -> 512 1x1 s2 at batch 32: the GEMM + col2im route took 903 us, cuDNN 286).
   NOT_SUPPORTED (no message) otherwise. */
static int gpuml__cv_bwd_up2_on;      /* tests / A/B: -1 never the fused stride-2 form below (GPUML_CONV_BWD_UP2=off) */
static long gpuml__cv_bwd_up2_calls;  /* its runs (tests) */
GPUML__FN gpuml_status gpuml__cv_bwd_data_1x1s(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__conv_params kp;
    gpuml_tensor *tmp, a, b, c;
    gpuml_status st;
    int64_t rows = cv->n * cv->p * cv->q, da[2], sa[2], db[2], sb[2], dc[2], sc[2];
    if (cv->r != 1 || cv->s != 1 || cv->pt || cv->pl || cv->groups != 1 || !gpuml__is_contig(cv->x))
        return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->layout == GPUML_LAYOUT_NCHW) {
        gpuml_conv2d_desc d;
        gpuml_tensor wv;
        int64_t wd[4], wsd[4], shape[4];
        wd[0] = cv->c; wd[1] = cv->k; wd[2] = wd[3] = 1;
        wsd[0] = cv->ws[3]; wsd[1] = cv->ws[0]; wsd[2] = cv->ws[1]; wsd[3] = cv->ws[2];
        wv = gpuml__cv_view(cv->wt, 4, wd, wsd, 0);
        const char *env = gpuml__getenv("GPUML_CONV_BWD_UP2");
        if (cv->tf32 && cv->dt == GPUML_F32 && ctx->arch == 90 && cv->sh == 2 && cv->sw == 2 && cv->h == 2 * cv->p && cv->w == 2 * cv->q &&
            (gpuml__cv_bwd_up2_on ? gpuml__cv_bwd_up2_on > 0 : !(env && strcmp(env, "off") == 0))) {
            /* stride 2 on Hopper's tensor cores, dx's height and width even: one gpuml_conv_1x1w of dy
               with w^T (copied [C][K]: TMA reads the channels contiguous) whose epilogue writes dx's
               even pixels and the zeros around them, instead of the conv into a temporary and the
               scatter pass (H200, batch 32, 256 <- 512 @56: bench/NOTES_conv.md) */
            gpuml__cv c2;
            gpuml_tensor *wc, yv;
            int64_t yd[4], ysd[4];
            wc = gpuml__tensor_new(ctx, GPUML_F32, 4, wd, op);
            if (!wc) return ctx->status;
            st = gpuml_copy(ctx, wc, &wv);
            yd[0] = cv->n; yd[1] = cv->c; yd[2] = cv->p; yd[3] = cv->q;
            ysd[0] = cv->xs[0]; ysd[1] = cv->xs[3]; ysd[2] = 2 * cv->xs[1]; ysd[3] = 2 * cv->xs[2];
            yv = gpuml__cv_view(cv->x, 4, yd, ysd, 0);
            memset(&d, 0, sizeof d);
            d.stride[0] = d.stride[1] = 1; d.dilation[0] = d.dilation[1] = 1; d.groups = 1;
            d.layout = GPUML_LAYOUT_NCHW; d.allow_tf32 = 1;
            if (st == GPUML_SUCCESS) st = gpuml__cv_setup(ctx, op, 0, cv->y, wc, &yv, &d, &c2);
            if (st == GPUML_SUCCESS) {
                c2.up2 = 1;
                st = gpuml__cv_1x1w(ctx, &c2, 0, op);
                if (st == GPUML_SUCCESS) { gpuml__cv_bwd_up2_calls++; gpuml__cv_bwd_calls[0]++; }   /* a forward-conv route too */
            }
            gpuml_tensor_free(wc);   /* stream-ordered */
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;   /* declined (no message): the route below */
        }
        shape[0] = cv->n; shape[1] = cv->c; shape[2] = cv->p; shape[3] = cv->q;
        tmp = gpuml__tensor_new(ctx, cv->dt, 4, shape, op);
        if (!tmp) return ctx->status;
        gpuml__cv_bwd_calls[0]++;
        memset(&d, 0, sizeof d);
        d.stride[0] = d.stride[1] = 1; d.dilation[0] = d.dilation[1] = 1; d.groups = 1;
        d.layout = GPUML_LAYOUT_NCHW; d.allow_tf32 = cv->tf32;
        st = gpuml_conv2d(ctx, tmp, cv->y, &wv, &d);
        if (st == GPUML_SUCCESS) {
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(cv->x); kp.y = gpuml__dptr(tmp); kp.k = cv->c;
            kp.yn = cv->c * cv->p * cv->q; kp.yp = cv->q; kp.yq = 1; kp.yk = cv->p * cv->q;
            kp.order = 1;
            st = gpuml__cv_dyup(ctx, cv, &kp, op);
        }
        gpuml_tensor_free(tmp);   /* stream-ordered */
        return st;
    }
    if (!gpuml__is_contig(cv->y)) return GPUML_ERROR_NOT_SUPPORTED;   /* NHWC: dy read as a [rows][k] matrix */
    gpuml__cv_bwd_calls[0]++;
    dc[0] = rows; dc[1] = cv->c;
    tmp = gpuml__tensor_new(ctx, cv->dt, 2, dc, op);
    if (!tmp) return ctx->status;
    da[0] = rows; da[1] = cv->k; sa[0] = cv->k; sa[1] = 1;
    db[0] = cv->k; db[1] = cv->c; sb[0] = cv->ws[0]; sb[1] = cv->ws[3];
    sc[0] = cv->c; sc[1] = 1;
    a = gpuml__cv_view(cv->y, 2, da, sa, 0);
    b = gpuml__cv_view(cv->wt, 2, db, sb, 0);
    c = gpuml__cv_view(tmp, 2, dc, sc, 0);
    st = gpuml_matmul(ctx, &c, &a, &b, NULL);
    if (st == GPUML_SUCCESS) {
        gpuml__cv_kparams(cv, &kp);
        kp.col = gpuml__dptr(cv->x); kp.y = gpuml__dptr(tmp); kp.k = cv->c;
        kp.yn = cv->p * cv->q * cv->c; kp.yp = cv->q * cv->c; kp.yq = cv->c; kp.yk = 1;
        kp.order = 0;
        st = gpuml__cv_dyup(ctx, cv, &kp, op);
    }
    gpuml_tensor_free(tmp);   /* stream-ordered */
    return st;
}

/* strided backward data (groups 1, dilation 1, sh * sw <= 4) as ONE stride-1 forward conv of dy
   with sh * sw * C output channels, then a depth-to-space pass.  Output phase (a, b) = (h % sh,
   w % sw) of dx takes the taps r = r0 + sh*j (r0 = (a + pt) % sh) and s likewise: dx[sh*i + a] =
   sum_j dy[i + c0 - j] w[r0 + sh*j], c0 = (a + pt - r0) / sh, a stride-1 conv of dy with those
   taps flipped and top padding pt'(a) = R' - 1 - c0.  The phases' windows, placed in one window
   over dy (rows -PT .. RW - 1 - PT around i, PT = max pt'(a)), make one conv whose output channel
   ph*C + c (ph = a*sw + b) holds phase ph's dx channel c at pixel (i, j) (gpuml_conv_wphase builds
   its weights, zeros at the taps a phase lacks); gpuml_conv_dxsub moves those channel blocks to
   their pixels.  MACs: phases x the common window (3x3 stride 2: 4 x 2x2 = 16 taps for 9; the
   zero-upsampled route, below, does 36), in one GEMM sh*sw times wider than the phases' own.
   (An Inf / NaN in dy also reaches, as 0 x Inf, the phases whose window holds it without a tap
   there, as an Inf / NaN weight does the upsampled route's inserted zeros.)  NOT_SUPPORTED (no
   message) where the common window would need negative padding (padding wider than R - 1). */
static int gpuml__cv_bwd_sub_on;      /* tests / A/B: -1 never (the zero-upsampled route), 0 / 1 wherever it applies */
static long gpuml__cv_bwd_sub_calls;  /* runs (tests check that the route ran) */
GPUML__FN gpuml_status gpuml__cv_bwd_data_sub(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    const char *env = gpuml__getenv("GPUML_CONV_BWD_SUB");
    const int nph = cv->sh * cv->sw, nchw = cv->layout == GPUML_LAYOUT_NCHW;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt], ve = 16 / es;
    int64_t lo[2] = { INT32_MAX, INT32_MAX }, hi[2] = { INT32_MIN, INT32_MIN }, win[2], pad[4], ho, wo, shape[4], total;
    gpuml__conv_params kp;
    gpuml_tensor *wc, *y, wview;
    gpuml_conv2d_desc d;
    gpuml_status st;
    int dim, ph, vec;
    int on = gpuml__cv_bwd_sub_on ? gpuml__cv_bwd_sub_on : env && strcmp(env, "off") == 0 ? -1 : env && strcmp(env, "on") == 0 ? 1 : 0;
    if (on < 0 || cv->groups != 1 || cv->dh != 1 || cv->dw != 1 || nph > 4 || cv->pt < 0 || cv->pl < 0 || cv->pb < 0 || cv->pr < 0 ||
        cv->c > INT32_MAX / 4)
        return GPUML_ERROR_NOT_SUPPORTED;
    /* taken wherever it applies.  (Before gpuml_conv_wphase's tiles, 512@14 on tensor cores lost to
       the upsampled route, f16 78.8 vs 65.0 us, and was left to it below 4096 GEMM rows; ncu: the
       conv itself 25.9 us against the upsampled 38.8 + 21.7 of wflip, the weight pass 47 us:
       bench/NOTES_conv.md) */
    /* the common window: dy rows lo .. hi around the phase pixel i, over every phase with a tap */
    for (dim = 0; dim < 2; dim++) {
        const int st_ = dim ? cv->sw : cv->sh, pd = dim ? cv->pl : cv->pt;
        const int64_t R = dim ? cv->s : cv->r;
        for (ph = 0; ph < st_; ph++) {
            const int64_t r0 = (ph + pd) % st_, rr = r0 < R ? (R - r0 + st_ - 1) / st_ : 0, c0 = (ph + pd - r0) / st_;
            if (!rr) continue;
            lo[dim] = GPUML__MIN(lo[dim], c0 - (rr - 1)); hi[dim] = GPUML__MAX(hi[dim], c0);
        }
        if (lo[dim] > hi[dim]) return GPUML_ERROR_NOT_SUPPORTED;   /* no phase has a tap (cannot happen: r0 = 0 for some phase) */
        win[dim] = hi[dim] - lo[dim] + 1;
    }
    ho = (cv->h + cv->sh - 1) / cv->sh; wo = (cv->w + cv->sw - 1) / cv->sw;
    pad[0] = -lo[0]; pad[1] = ho - cv->p - pad[0] + win[0] - 1;
    pad[2] = -lo[1]; pad[3] = wo - cv->q - pad[2] + win[1] - 1;
    if (pad[0] < 0 || pad[1] < 0 || pad[2] < 0 || pad[3] < 0 || pad[1] > INT32_MAX || pad[3] > INT32_MAX || pad[0] > INT32_MAX || pad[2] > INT32_MAX)
        return GPUML_ERROR_NOT_SUPPORTED;
    if (cv->c > 65535 * 32 || win[0] * win[1] * nph > 65535) return GPUML_ERROR_NOT_SUPPORTED;   /* gpuml_conv_wphase's grid */
    /* the weights KRSC in memory ([nph*C][RW][SW][K]) for both layouts: NCHW gets a KCRS view of
       them, which the tf32 path reads as it is (its layout pass of the KCRS copy took 51 us at 512) */
    shape[0] = nph * cv->c; shape[1] = win[0]; shape[2] = win[1]; shape[3] = cv->k;
    wc = gpuml__tensor_new(ctx, cv->dt, 4, shape, op);
    if (!wc) return ctx->status;
    if (nchw) {
        int64_t vs[4];
        vs[0] = win[0] * win[1] * cv->k; vs[1] = 1; vs[2] = win[1] * cv->k; vs[3] = cv->k;
        shape[1] = cv->k; shape[2] = win[0]; shape[3] = win[1];
        wview = gpuml__cv_view(wc, 4, shape, vs, 0);
    } else wview = *wc;
    shape[0] = cv->n;
    if (nchw) { shape[1] = nph * cv->c; shape[2] = ho; shape[3] = wo; }
    else { shape[1] = ho; shape[2] = wo; shape[3] = nph * cv->c; }
    y = gpuml__tensor_new(ctx, cv->dt, 4, shape, op);
    if (!y) { gpuml_tensor_free(wc); return ctx->status; }
    gpuml__cv_bwd_sub_calls++;
    gpuml__cv_kparams(cv, &kp);
    kp.col = gpuml__dptr(wc); kp.ldcol = win[0]; kp.mrows = win[1]; kp.n0 = pad[0]; kp.g = pad[2];
    kp.total = gpuml_tensor_numel(wc);
    st = gpuml__cv_launch(ctx, cv, "gpuml_conv_wphase", &kp, 0, 0, kp.total, op);
    if (st == GPUML_SUCCESS) {
        memset(&d, 0, sizeof d);
        d.stride[0] = d.stride[1] = 1;
        d.pad[0] = (int)pad[0]; d.pad[1] = (int)pad[1]; d.pad[2] = (int)pad[2]; d.pad[3] = (int)pad[3];
        d.dilation[0] = d.dilation[1] = 1;
        d.groups = 1;
        d.layout = (gpuml_layout)cv->layout;
        d.allow_tf32 = cv->tf32;
        st = gpuml_conv2d(ctx, y, cv->y, &wview, &d);
    }
    if (st == GPUML_SUCCESS) {
        gpuml__cv_kparams(cv, &kp);
        kp.col = gpuml__dptr(y); kp.p = ho; kp.q = wo;
        total = kp.total = cv->n * cv->h * cv->w * cv->c;
        vec = !nchw && cv->xs[3] == 1 && cv->c % ve == 0 && cv->xs[0] % ve == 0 && cv->xs[1] % ve == 0 && cv->xs[2] % ve == 0 &&
              !((kp.x | kp.col) & 15);
        if (vec) kp.total /= ve;
        /* NCHW f32, sw 2: VE = 4 or 2 columns of both phase planes an item (gpuml_conv_dxsub_c4 / _c2) */
        if (nchw && es == 4 && cv->sw == 2 && cv->w == 2 * wo && cv->xs[2] == 1) {
            const int64_t e = wo % 4 == 0 ? 4 : wo % 2 == 0 ? 2 : 0;
            if (e && cv->xs[0] % (2 * e) == 0 && cv->xs[1] % (2 * e) == 0 && cv->xs[3] % (2 * e) == 0 && !((kp.x | kp.col) & (8 * e - 1))) {
                kp.total = total / (2 * e);
                st = gpuml__cv_launch(ctx, cv, e == 4 ? "gpuml_conv_dxsub_c4" : "gpuml_conv_dxsub_c2", &kp, 0, 0, total * nph, op);
                vec = -1;
            }
        }
        if (vec >= 0) st = gpuml__cv_launch(ctx, cv, vec ? "gpuml_conv_dxsub_v" : "gpuml_conv_dxsub", &kp, 0, 0, total * nph, op);
    }
    gpuml_tensor_free(y);    /* stream-ordered */
    gpuml_tensor_free(wc);
    return st;
}

/* backward data as a forward conv, on the forward's fast paths: dx = conv(up, wf),
   wf[g*cg + c][r][s][k] = w[g*kg + k][R-1-r][S-1-s][c] (kernel gpuml_conv_wflip), with the same
   dilation and groups, stride 1 and padding d*(R-1) - pad on top (left) -- the full correlation.
   Stride 1: up = dy.  Stride 2 (sh * sw <= 4, sm_80+): up = dy with a zero between pixels
   (gpuml_conv_dyup), (P-1)*sh + 1 rows, padded at the bottom (right) to give H (W) rows; the
   forward then does sh * sw times the MACs (three quarters on zeros; H100, 128@56 3x3 s2 f16:
   127 us against 291 for the GEMM + col2im route).  Strided 1x1: gpuml__cv_bwd_data_1x1s.
   NOT_SUPPORTED (no message) for larger strides and padding wider than the window. */
GPUML__FN gpuml_status gpuml__cv_bwd_data_fwd(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__conv_params kp;
    gpuml_conv2d_desc d;
    gpuml_tensor *wf, *up = NULL;
    gpuml_status st;
    int64_t shape[4], hu = (cv->p - 1) * cv->sh + 1, wu = (cv->q - 1) * cv->sw + 1;
    int eh = cv->dh * (int)(cv->r - 1), ew = cv->dw * (int)(cv->s - 1), strided = cv->sh != 1 || cv->sw != 1;
    if (!gpuml__cv_bwd_is_old() && strided && cv->r == 1 && cv->s == 1) return gpuml__cv_bwd_data_1x1s(ctx, cv, op);
    if (!gpuml__cv_bwd_is_old() && strided && ctx->arch >= 80) {
        gpuml_status st = gpuml__cv_bwd_data_sub(ctx, cv, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        gpuml_clear_error(ctx);
    }
    if (gpuml__cv_bwd_is_old() || cv->pt > eh || cv->pl > ew || cv->pt < 0 || cv->pb < 0 || cv->pl < 0 || cv->pr < 0 ||
        cv->r > INT32_MAX / GPUML__MAX(cv->dh, 1) || cv->s > INT32_MAX / GPUML__MAX(cv->dw, 1))
        return GPUML_ERROR_NOT_SUPPORTED;
    if (strided ? (cv->sh * cv->sw > 4 || ctx->arch < 80 || cv->h - hu + cv->pt < 0 || cv->w - wu + cv->pl < 0 ||
                   cv->h - hu + cv->pt > INT32_MAX || cv->w - wu + cv->pl > INT32_MAX)
                : (cv->pb > eh || cv->pr > ew))
        return GPUML_ERROR_NOT_SUPPORTED;
    gpuml__cv_bwd_calls[0]++;
    shape[0] = cv->c;
    if (cv->layout == GPUML_LAYOUT_NCHW) { shape[1] = cv->kg; shape[2] = cv->r; shape[3] = cv->s; }
    else { shape[1] = cv->r; shape[2] = cv->s; shape[3] = cv->kg; }
    wf = gpuml__tensor_new(ctx, cv->dt, 4, shape, op);
    if (!wf) return ctx->status;
    gpuml__cv_kparams(cv, &kp);
    kp.col = gpuml__dptr(wf);
    kp.total = cv->c * cv->r * cv->s * cv->kg;
    /* KRSC wf with 8+ channels each way in 32 x 32 tiles (gpuml_conv_wflip_t), else an element a thread */
    st = gpuml__cv_launch(ctx, cv, cv->layout == GPUML_LAYOUT_NHWC && cv->cg >= 8 && cv->kg >= 8 && cv->cg <= 65535 * 32 &&
                          cv->groups * cv->r * cv->s <= 65535 ?
                          "gpuml_conv_wflip_t" : "gpuml_conv_wflip", &kp, 0, 0, kp.total, op);
    if (st == GPUML_SUCCESS && strided) {
        shape[0] = cv->n;
        if (cv->layout == GPUML_LAYOUT_NCHW) { shape[1] = cv->k; shape[2] = hu; shape[3] = wu; }
        else { shape[1] = hu; shape[2] = wu; shape[3] = cv->k; }
        up = gpuml__tensor_new(ctx, cv->dt, 4, shape, op);
        if (!up) st = ctx->status;
        else {
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(up); kp.h = hu; kp.w = wu;
            st = gpuml__cv_dyup(ctx, cv, &kp, op);
        }
    }
    if (st == GPUML_SUCCESS) {
        memset(&d, 0, sizeof d);
        d.stride[0] = d.stride[1] = 1;
        d.pad[0] = eh - cv->pt; d.pad[2] = ew - cv->pl;
        d.pad[1] = strided ? (int)(cv->h - hu + cv->pt) : eh - cv->pb;
        d.pad[3] = strided ? (int)(cv->w - wu + cv->pl) : ew - cv->pr;
        d.dilation[0] = cv->dh; d.dilation[1] = cv->dw;
        d.groups = cv->groups;
        d.layout = (gpuml_layout)cv->layout;
        d.allow_tf32 = cv->tf32;
        st = gpuml_conv2d(ctx, (gpuml_tensor *)cv->x, up ? up : cv->y, wf, &d);
    }
    gpuml_tensor_free(up);   /* stream-ordered */
    gpuml_tensor_free(wf);
    return st;
}

/* backward filter on Hopper as one implicit GEMM (kernels/conv_sm90.cu, gpuml_conv_bwf_sm90): dy^T
   and x's im2col tiles straight from dy and x by TMA, no buffers; the pixel range split so that
   the units fill the GPU, the slices' f32 sums added in a fixed order (gpuml_conv_bwf_reduce) into
   acc (f32 [K][R*S*C]), or with acc NULL straight into dw (the caller's contiguous KRSC cv->wt,
   in its dtype).  GPUML_ERROR_NOT_SUPPORTED, recording no error, where it
   does not take the problem (f16/bf16, contiguous NHWC x and dy, groups 1, C % 64, K % 8, 16-byte
   aligned, sm_90 with TMA im2col, the window's corners in the im2col map's range). */
static int gpuml__cv_bwf_sm90_off;   /* tests: 1 skips this route, 2 only its write straight into dw */
GPUML__FN gpuml_status gpuml__cv_bwf_sm90(gpuml_ctx *ctx, const gpuml__cv *cv, gpuml_tensor *acc, const char *op)
{
#ifndef GPUML_NO_CUDA
    gpuml__conv_kparams kp;
    unsigned char mapbuf[2][128 + 64];
    void *ymap = mapbuf[0] + (64 - ((uintptr_t)mapbuf[0] & 63)) % 64, *xmap = mapbuf[1] + (64 - ((uintptr_t)mapbuf[1] & 63)) % 64, *args[3];
    int wm, tdt, s, best_s = 1;
    unsigned grid[3], block[3] = {384, 1, 1}, smem;
    char opts[200];
    gpuml__CUfunction fn, red;
    gpuml_tensor *ws = NULL;
    gpuml_status st;
    int64_t npq = cv->n * cv->p * cv->q, ks = (npq + 63) / 64, tiles, G, total, best_t = -1, per;
    const char *env = gpuml__getenv("GPUML_CONV_BWD");
    if (gpuml__cv_bwf_sm90_off == 1 || (!acc && gpuml__cv_bwf_sm90_off == 2) || (env && (strcmp(env, "gemm") == 0 || strcmp(env, "slices") == 0)) || gpuml__cv_bwd_old ||
        gpuml__cv_bwd_is_old())
        return GPUML_ERROR_NOT_SUPPORTED;
    if (!gpuml__sm90_device(ctx) || !ctx->cu.TensorMapEncodeIm2col || (cv->dt != GPUML_F16 && cv->dt != GPUML_BF16) || cv->groups != 1 ||
        cv->c % 64 || cv->k % 8 || cv->sh > 8 || cv->sw > 8 || (cv->r - 1) * cv->dh >= 65536 || (cv->s - 1) * cv->dw >= 65536 ||
        cv->xs[3] != 1 || cv->xs[2] != cv->c || cv->xs[1] != cv->w * cv->c || cv->xs[0] != cv->h * cv->w * cv->c ||
        cv->ys[3] != 1 || cv->ys[2] != cv->k || cv->ys[1] != cv->q * cv->k || cv->ys[0] != cv->p * cv->q * cv->k ||
        !gpuml__aligned16(gpuml__dptr(cv->x)) || !gpuml__aligned16(gpuml__dptr(cv->y)) || gpuml_tensor_numel(cv->x) >= ((int64_t)1 << 31) ||
        npq * cv->k >= ((int64_t)1 << 31) || cv->k * cv->ncol >= ((int64_t)1 << 31) || (!acc && (gpuml__dptr(cv->wt) & 7)))
        return GPUML_ERROR_NOT_SUPPORTED;
    wm = cv->k > 64 ? 2 : 1;
    smem = (unsigned)(1024 + (wm == 1 ? 5 * 320 : 6 * 256) * 128 + 256);
    if (ctx->smem_optin < (int)smem) return GPUML_ERROR_NOT_SUPPORTED;
    tdt = cv->dt == GPUML_F16 ? 6 : 9;
    memset(ymap, 0, 128);
    memset(xmap, 0, 128);
    if (!gpuml__tmap(ctx, ymap, tdt, gpuml__dptr(cv->y), cv->k, npq, cv->k * 2, 64, 64) ||
        !gpuml__tmap_im2col(ctx, xmap, tdt, gpuml__dptr(cv->x), cv->n, cv->h, cv->w, cv->c, 2, cv->sh, cv->sw, cv->pt, cv->pl,
                            cv->p, cv->q, 64, 64))
        return GPUML_ERROR_NOT_SUPPORTED;
    /* splits: the least of rounds x (k steps a slice + ~4 of fill and store) x 0.4 us + the partial
       sums written and read (BM x BN x 8 bytes a unit, ~2 TB/s) */
    tiles = ((cv->k + 64 * wm - 1) / (64 * wm)) * ((cv->ncol + 256 / wm - 1) / (256 / wm));
    G = GPUML__MAX(ctx->sm_count, 1);
    for (s = 1; s <= 512 && s <= ks; s++) {
        int64_t pr = (ks + s - 1) / s, units, t;
        if ((ks + pr - 1) / pr != s) continue;   /* an empty slice */
        units = tiles * s;
        t = ((units + G - 1) / G) * (pr + 4) * 400 + (s > 1 ? units * 64 * 256 * 8 / 2000 : 0);   /* ns */
        if (best_t < 0 || t < best_t) { best_t = t; best_s = s; }
    }
    per = (ks + best_s - 1) / best_s;
    GPUML__TRY(gpuml__enter(ctx));
    snprintf(opts, sizeof opts, "-DGPUML_CONV_SM90=1 -DGPUML_CONV_BWF=1 -DGPUML_CONV_DT=%d -DGPUML_BWF_WM=%d -DGPUML_CONV_YDT=%d", (int)cv->dt, wm,
             acc ? 0 : (int)cv->dt);
    GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_sm90, opts, "gpuml_conv_bwf_sm90", &fn));
    if (best_s > 1 || !acc) {   /* f32 slices, then the reduce (which also converts into dw) */
        GPUML__TRY(gpuml__kernel(ctx, &gpuml__fam_conv_sm90, opts, "gpuml_conv_bwf_reduce", &red));
        total = (int64_t)best_s * cv->k * cv->ncol;
        ws = gpuml__tensor_new(ctx, GPUML_F32, 1, &total, op);
        if (!ws) return ctx->status;
    }
    memset(&kp, 0, sizeof kp);
    kp.x = gpuml__dptr(cv->x); kp.y = ws ? gpuml__dptr(ws) : gpuml__dptr(acc);
    kp.N = (int)cv->n; kp.H = (int)cv->h; kp.W = (int)cv->w; kp.C = (int)cv->c; kp.K = (int)cv->k;
    kp.R = (int)cv->r; kp.S = (int)cv->s; kp.P = (int)cv->p; kp.Q = (int)cv->q;
    kp.stride_h = cv->sh; kp.stride_w = cv->sw; kp.pad_h = cv->pt; kp.pad_w = cv->pl; kp.dil_h = cv->dh; kp.dil_w = cv->dw;
    kp.M = (int)npq; kp.Kg = (int)cv->ncol; kp.splits = (int)((ks + per - 1) / per);
    grid[0] = (unsigned)GPUML__MIN(tiles * kp.splits, G); grid[1] = grid[2] = 1;
    args[0] = ymap; args[1] = xmap; args[2] = &kp;
    gpuml__cv_bwd_calls[2]++;
    st = gpuml__launch(ctx, fn, grid, block, smem, args, "conv2d backward filter (wgmma implicit GEMM)");
    if (st == GPUML_SUCCESS && ws) {
        /* out[k][j] = the sum over the slices z of ws[z][k][j] (kp.K = K, kp.Kg = R*S*C); a block takes
           8 / zw groups of 128 outputs, zw as the kernel's gpuml__bwf_zw */
        unsigned rgrid[3], rblock[3] = {256, 1, 1};
        void *rargs[1];
        int zw = kp.splits >= 32 ? 8 : kp.splits >= 16 ? 4 : kp.splits >= 8 ? 2 : 1;
        kp.ws = kp.y; kp.y = acc ? gpuml__dptr(acc) : gpuml__dptr(cv->wt);
        rgrid[0] = (unsigned)((cv->k * cv->ncol / 4 + 32 * (8 / zw) - 1) / (32 * (8 / zw))); rgrid[1] = rgrid[2] = 1;
        rargs[0] = &kp;
        st = gpuml__launch(ctx, red, rgrid, rblock, 0, rargs, "conv2d backward filter (split-K reduce)");
    }
    gpuml_tensor_free(ws);   /* stream-ordered */
    return st;
#else
    (void)ctx; (void)cv; (void)acc; (void)op;
    return GPUML_ERROR_NOT_SUPPORTED;
#endif
}

/* backward filter on the tensor cores (f16/bf16 on sm_80+).  Hopper: one GEMM dw_g [kg x ncol] =
   dyt [kg x rows] @ B [rows x ncol] on the wgmma kernel, split along K there (gpuml__sm90_splits);
   the same with slices elsewhere (the mma.sync kernel, which takes
   batched operands, A read along k, B along k or n): dw_g[kg][ncol] = sum over the N*P*Q rows m
   of dy[m][k] col[m][j] (col = im2col(x), row-major, rows padded to 8 elements), the rows split
   into S slices of L (a multiple of 64) so that S x the output tiles fill the GPU:
   part[b] = dyt[b] @ col[b] (f32, one batched matmul over the full slices, one more for a last
   partial slice) with dyt[b][k][l] = dy[b * L + l][k] (gpuml_conv_bwf_dyt); col by the 16-byte
   gpuml_conv_im2col_v where channels are unit-stride vectors, x itself for 1x1 stride-1 NHWC,
   acc_g (f32) = the sum over slices (gpuml_conv_bwf_sum, fixed order).  Chunks of whole images bound the buffers. */
GPUML__FN gpuml_status gpuml__cv_bwf_tc(gpuml_ctx *ctx, const gpuml__cv *cv, gpuml_tensor *acc, const char *op)
{
    gpuml_tensor *col = NULL, *dyt = NULL, *part = NULL;
    gpuml_status st = GPUML_SUCCESS;
    gpuml_matmul_desc md;
    int64_t pq = cv->p * cv->q, wg = cv->kg * cv->ncol, ld = (cv->ncol + 7) / 8 * 8, es = (int64_t)gpuml__dtype_sizes[cv->dt];
    int64_t nb, n0, g, tiles, smax, L, S, shape[3];
    /* 1x1, stride 1, unpadded, NHWC-merged x: B is x itself (rows of cg at stride xw);
       vec: the 16-byte im2col kernel (unit channel strides, whole vectors) */
    int x_direct = cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 && !cv->pt && !cv->pl && !cv->pb && !cv->pr &&
                   cv->xs[3] == 1 && cv->xs[1] == cv->w * cv->xs[2] && cv->xs[0] == cv->h * cv->xs[1] && cv->xs[2] % 8 == 0 &&
                   cv->cg % 8 == 0 && gpuml__aligned16(gpuml__dptr(cv->x));
    int vec = cv->xs[3] == 1 && (cv->cg * es) % 16 == 0 && (cv->xs[0] * es) % 16 == 0 && (cv->xs[1] * es) % 16 == 0 &&
              (cv->xs[2] * es) % 16 == 0 && gpuml__aligned16(gpuml__dptr(cv->x));
    /* one: on Hopper a single GEMM over all the rows into acc (f32 rows 16-byte aligned), which
       the wgmma kernel splits along K itself (gpuml__sm90_splits); no slices, no slice sum */
    const char *env = gpuml__getenv("GPUML_CONV_BWD");
    int one = gpuml__sm90_device(ctx) && cv->ncol % 4 == 0 && !(env && strcmp(env, "slices") == 0) && gpuml__cv_bwd_old != 2;
    gpuml__cv_bwd_calls[1]++;
    tiles = ((cv->kg + 127) / 128) * ((cv->ncol + 255) / 256);
    smax = one ? 1 : GPUML__MAX(2 * (int64_t)GPUML__MAX(ctx->sm_count, 1) / tiles, (int64_t)1);
    nb = GPUML__MAX(GPUML__MIN(GPUML__CV_GPU_COL / (pq * ((x_direct ? 0 : ld) + cv->kg)), cv->n), (int64_t)1);
    /* a chunk of r rows takes S = ceil(r / L) <= smax slices of L = ceil(r / smax) rounded up to
       64 rows: S * L < r + L, at most nb * pq + L rows */
    L = ((nb * pq + smax - 1) / smax + 63) / 64 * 64;
    S = nb * pq + L;
    shape[0] = x_direct ? 1 : S * ld;
    col = gpuml__tensor_new(ctx, cv->dt, 1, shape, op);
    shape[0] = S * cv->kg;
    dyt = col ? gpuml__tensor_new(ctx, cv->dt, 1, shape, op) : NULL;
    shape[0] = one ? 1 : smax; shape[1] = one ? 1 : cv->kg; shape[2] = one ? 1 : cv->ncol;
    part = dyt ? gpuml__tensor_new(ctx, GPUML_F32, 3, shape, op) : NULL;
    if (!col || !dyt || !part) {
        st = ctx->status;
        goto done;
    }
    memset(&md, 0, sizeof md);
    md.path = one ? GPUML_MATMUL_AUTO : GPUML_MATMUL_MMA;
    for (n0 = 0; st == GPUML_SUCCESS && n0 < cv->n; n0 += nb) {
        int64_t cnt = GPUML__MIN(nb, cv->n - n0), rows = cnt * pq, Lc, Sc, Sf, rem;
        Lc = ((rows + smax - 1) / smax + 63) / 64 * 64;
        Sc = (rows + Lc - 1) / Lc;
        Sf = rows / Lc; rem = rows - Sf * Lc;   /* full slices, and the rows of a last partial one */
        if (!x_direct && rem > 0 && !one) {
            /* col has room for Sc * Lc rows: zero the last slice's rows past the data, one batched
               matmul then takes every slice (a separate launch for the partial one cost ~8 us) */
            gpuml_tensor tail;
            int64_t dt_[1], st_[1] = {1};
            dt_[0] = (Sc * Lc - rows) * ld;
            tail = gpuml__cv_view(col, 1, dt_, st_, rows * ld);
            st = gpuml_fill(ctx, &tail, 0.0);
            if (st != GPUML_SUCCESS) break;
            Sf = Sc; rem = 0;
        }
        for (g = 0; st == GPUML_SUCCESS && g < cv->groups; g++) {
            gpuml__conv_params kp;
            gpuml_tensor a, b, c, bsrc;
            int64_t da[3], sa[3], db[3], sb[3], dc[3], sc[3], ldb, unit = 1, boff;
            if (x_direct) {
                bsrc = gpuml__cv_view(cv->x, 1, &unit, &unit, 0);
                ldb = cv->xs[2]; boff = n0 * cv->xs[0] + g * cv->cg;
            } else {
                gpuml__cv_kparams(cv, &kp);
                kp.col = gpuml__dptr(col); kp.ldcol = ld; kp.n0 = n0; kp.g = g; kp.mrows = rows;
                if (vec) {
                    kp.total = rows * 32;
                    st = gpuml__cv_launch(ctx, cv, "gpuml_conv_im2col_v", &kp, 0, 0, rows * ld, op);
                } else {
                    kp.total = rows * cv->ncol;
                    kp.order = 0;   /* row-major col[m][j] */
                    st = gpuml__cv_launch(ctx, cv, "gpuml_conv_im2col", &kp, 0, 0, rows * ld, op);
                }
                if (st != GPUML_SUCCESS) break;
                bsrc = *col; ldb = ld; boff = 0;
            }
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(dyt); kp.ldcol = Lc; kp.n0 = n0; kp.g = g; kp.mrows = rows; kp.total = Sc * Lc * cv->kg;
            st = gpuml__cv_launch(ctx, cv, "gpuml_conv_bwf_dyt", &kp, 0, 0, kp.total, op);
            if (st != GPUML_SUCCESS) break;
            if (one) {   /* acc_g (+)= dyt [kg x rows] @ B [rows x ncol] */
                da[0] = cv->kg; da[1] = rows; sa[0] = Lc; sa[1] = 1;
                db[0] = rows; db[1] = cv->ncol; sb[0] = ldb; sb[1] = 1;
                dc[0] = cv->kg; dc[1] = cv->ncol; sc[0] = cv->ncol; sc[1] = 1;
                a = gpuml__cv_view(dyt, 2, da, sa, 0);
                b = gpuml__cv_view(&bsrc, 2, db, sb, boff);
                c = gpuml__cv_view(acc, 2, dc, sc, g * wg);
                md.beta = n0 > 0 ? 1.0f : 0.0f;
                st = gpuml_matmul(ctx, &c, &a, &b, &md);
                continue;
            }
            /* part[b] = dyt[b] [kg x Lc] @ B rows [b*Lc, b*Lc + Lc) for the full slices, then the last
               partial slice (K = rem) on its own */
            da[0] = Sf; da[1] = cv->kg; da[2] = Lc; sa[0] = cv->kg * Lc; sa[1] = Lc; sa[2] = 1;
            db[0] = Sf; db[1] = Lc; db[2] = cv->ncol; sb[0] = Lc * ldb; sb[1] = ldb; sb[2] = 1;
            dc[0] = Sf; dc[1] = cv->kg; dc[2] = cv->ncol; sc[0] = wg; sc[1] = cv->ncol; sc[2] = 1;
            if (Sf > 0) {
                a = gpuml__cv_view(dyt, 3, da, sa, 0);
                b = gpuml__cv_view(&bsrc, 3, db, sb, boff);
                c = gpuml__cv_view(part, 3, dc, sc, 0);
                st = gpuml_matmul(ctx, &c, &a, &b, &md);
                if (st != GPUML_SUCCESS) break;
            }
            if (rem > 0) {
                da[2] = rem; db[1] = rem;
                a = gpuml__cv_view(dyt, 2, da + 1, sa + 1, Sf * cv->kg * Lc);
                b = gpuml__cv_view(&bsrc, 2, db + 1, sb + 1, boff + Sf * Lc * ldb);
                c = gpuml__cv_view(part, 2, dc + 1, sc + 1, Sf * wg);
                st = gpuml_matmul(ctx, &c, &a, &b, &md);
                if (st != GPUML_SUCCESS) break;
            }
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(part); kp.res = gpuml__dptr(acc) + (gpuml__u64)(g * wg * 4);
            kp.total = wg; kp.ldcol = Sc; kp.order = n0 > 0;
            st = gpuml__cv_launch(ctx, cv, "gpuml_conv_bwf_sum", &kp, 0, 0, Sc * wg, op);
        }
    }
done:
    gpuml_tensor_free(part);   /* stream-ordered */
    gpuml_tensor_free(dyt);
    gpuml_tensor_free(col);
    return st;
}

/* backward data as GEMM: dcol (f32) = dy @ w per chunk of whole images and group, then a
   gather col2im.  NOT_SUPPORTED where dy's (p, q) do not merge. */
GPUML__FN gpuml_status gpuml__cv_gemm_bwd_data(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml_tensor *wtmp = NULL, *col = NULL;
    const gpuml_tensor *wk;
    gpuml_status st = GPUML_SUCCESS;
    int64_t pq = cv->p * cv->q, nb, n0, g, shape[1];
    int fold = cv->ys[0] == pq * cv->ys[2] || cv->n == 1;
    if (!(cv->ys[1] == cv->q * cv->ys[2] || cv->p == 1))
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the GEMM path needs dy's rows and columns to merge into one dim", op);
    GPUML__TRY(gpuml__cv_krsc(ctx, cv, cv->wt, &wtmp, &wk, cv->dt, op));
    nb = GPUML__MAX(GPUML__MIN(GPUML__CV_GPU_COL / (pq * cv->ncol), cv->n), (int64_t)1);
    shape[0] = nb * pq * cv->ncol;
    col = gpuml__tensor_new(ctx, GPUML_F32, 1, shape, op);
    if (!col) { gpuml_tensor_free(wtmp); return ctx->status; }
    for (n0 = 0; st == GPUML_SUCCESS && n0 < cv->n; n0 += nb) {
        int64_t cnt = GPUML__MIN(nb, cv->n - n0);
        for (g = 0; st == GPUML_SUCCESS && g < cv->groups; g++) {
            gpuml__conv_params kp;
            gpuml_tensor a, b, c;
            int64_t da[3], sa[3], db[2], sb[2], dc[3], sc[3];
            da[0] = cnt; da[1] = pq; da[2] = cv->kg; sa[0] = cv->ys[0]; sa[1] = cv->ys[2]; sa[2] = cv->ys[3];
            db[0] = cv->kg; db[1] = cv->ncol; sb[0] = cv->ncol; sb[1] = 1;
            dc[0] = cnt; dc[1] = pq; dc[2] = cv->ncol; sc[0] = pq * cv->ncol; sc[1] = cv->ncol; sc[2] = 1;
            if (fold) da[1] = dc[1] = cnt * pq;
            a = gpuml__cv_view(cv->y, 3 - fold, da + fold, sa + fold, n0 * cv->ys[0] + g * cv->kg * cv->ys[3]);
            b = gpuml__cv_view(wk, 2, db, sb, g * cv->kg * cv->ncol);
            c = gpuml__cv_view(col, 3 - fold, dc + fold, sc + fold, 0);
            st = gpuml_matmul(ctx, &c, &a, &b, NULL);
            if (st != GPUML_SUCCESS) break;
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(col); kp.ldcol = cv->ncol; kp.n0 = n0; kp.g = g; kp.total = cnt * cv->h * cv->w * cv->cg;
            st = gpuml__cv_launch(ctx, cv, "gpuml_conv_col2im", &kp, 0, 0, cnt * pq * cv->ncol, op);
        }
    }
    gpuml_tensor_free(col);
    gpuml_tensor_free(wtmp);
    return st;
}

/* dw (cv->wt, any dtype and strides) = src (f32), src seen through the strides st4 of its (k, r,
   s, c) dims: a view in dw's own dim order (KRSC or KCRS) and one cast-and-copy */
GPUML__FN gpuml_status gpuml__cv_put_dw(gpuml_ctx *ctx, const gpuml__cv *cv, const gpuml_tensor *src, const int64_t st4[4])
{
    static const int perm[2][4] = { { 0, 1, 2, 3 }, { 0, 2, 3, 1 } };
    int64_t dims[4], strides[4], sh4[4];
    gpuml_tensor v;
    int i;
    sh4[0] = cv->k; sh4[1] = cv->r; sh4[2] = cv->s; sh4[3] = cv->cg;
    for (i = 0; i < 4; i++) { dims[perm[cv->layout][i]] = sh4[i]; strides[perm[cv->layout][i]] = st4[i]; }
    v = gpuml__cv_view(src, 4, dims, strides, 0);
    return gpuml__copy(ctx, (gpuml_tensor *)cv->wt, &v);
}
/* backward filter as GEMM: per image n, part[n] = dy[n]^T [kg, pq] @ im2col(x[n]) [pq, ncol] as one
   batched gpuml_matmul over the images of a chunk (a single GEMM over all N*P*Q rows would give
   only kg*ncol outputs to parallelize), then dw (f32 [K][R][S][cg]) = the sum over images
   (gpuml_reduce), cast into dw at the end */
GPUML__FN gpuml_status gpuml__cv_gemm_bwd_filter(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml_tensor *acc = NULL, *col = NULL, *part = NULL, *sum = NULL;
    const gpuml_tensor *acc_c;
    gpuml_status st = GPUML_SUCCESS;
    int64_t pq = cv->p * cv->q, wg = cv->kg * cv->ncol, nb, n0, g, shape[3];
    int axis0 = 0;
    if (!(cv->ys[1] == cv->q * cv->ys[2] || cv->p == 1))
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the GEMM path needs dy's rows and columns to merge into one dim", op);
    if (cv->layout == GPUML_LAYOUT_NHWC && gpuml__is_contig(cv->wt)) {   /* Hopper: straight into dw (KRSC) */
        st = gpuml__cv_bwf_sm90(ctx, cv, NULL, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        st = GPUML_SUCCESS;
    }
    GPUML__TRY(gpuml__cv_krsc(ctx, cv, NULL, &acc, &acc_c, GPUML_F32, op));
    if (!gpuml__cv_bwd_is_old() && (cv->dt == GPUML_F16 || cv->dt == GPUML_BF16) && ctx->arch >= 80 && ctx->smem_optin >= 98304) {
        st = gpuml__cv_bwf_sm90(ctx, cv, acc, op);
        if (st == GPUML_ERROR_NOT_SUPPORTED) st = gpuml__cv_bwf_tc(ctx, cv, acc, op);
        goto cast;
    }
    nb = GPUML__MIN(GPUML__CV_GPU_COL / (pq * cv->ncol), GPUML__CV_GPU_COL / wg);
    nb = GPUML__MAX(GPUML__MIN(nb, cv->n), (int64_t)1);
    shape[0] = nb * pq * cv->ncol;
    col = gpuml__tensor_new(ctx, cv->dt, 1, shape, op);
    shape[0] = nb; shape[1] = cv->kg; shape[2] = cv->ncol;
    part = col ? gpuml__tensor_new(ctx, GPUML_F32, 3, shape, op) : NULL;
    sum = part && nb < cv->n ? gpuml__tensor_new(ctx, GPUML_F32, 2, shape + 1, op) : NULL;
    if (!col || !part || (nb < cv->n && !sum)) {
        st = ctx->status;
        gpuml_tensor_free(col); gpuml_tensor_free(part); gpuml_tensor_free(acc);
        return st;
    }
    for (n0 = 0; st == GPUML_SUCCESS && n0 < cv->n; n0 += nb) {
        int64_t cnt = GPUML__MIN(nb, cv->n - n0);
        for (g = 0; st == GPUML_SUCCESS && g < cv->groups; g++) {
            gpuml__conv_params kp;
            gpuml_tensor a, b, c, accg;
            int64_t da[3], sa[3], db[3], sb[3], dc[3], sc[3];
            gpuml__cv_kparams(cv, &kp);
            kp.col = gpuml__dptr(col); kp.ldcol = cv->ncol; kp.n0 = n0; kp.g = g; kp.total = cnt * pq * cv->ncol;
            kp.order = 0;   /* row-major col[m][j] (the kernel's order 1 is the transposed layout) */
            st = gpuml__cv_launch(ctx, cv, "gpuml_conv_im2col", &kp, 0, 0, kp.total, op);
            if (st != GPUML_SUCCESS) break;
            da[0] = cnt; da[1] = cv->kg; da[2] = pq; sa[0] = cv->ys[0]; sa[1] = cv->ys[3]; sa[2] = cv->ys[2];
            db[0] = cnt; db[1] = pq; db[2] = cv->ncol; sb[0] = pq * cv->ncol; sb[1] = cv->ncol; sb[2] = 1;
            dc[0] = cnt; dc[1] = cv->kg; dc[2] = cv->ncol; sc[0] = wg; sc[1] = cv->ncol; sc[2] = 1;
            a = gpuml__cv_view(cv->y, 3, da, sa, n0 * cv->ys[0] + g * cv->kg * cv->ys[3]);
            b = gpuml__cv_view(col, 3, db, sb, 0);
            c = gpuml__cv_view(part, 3, dc, sc, 0);
            st = gpuml_matmul(ctx, &c, &a, &b, NULL);
            if (st != GPUML_SUCCESS) break;
            accg = gpuml__cv_view(acc, 2, dc + 1, sc + 1, g * wg);
            if (n0 == 0) {
                st = gpuml_reduce(ctx, GPUML_REDUCE_SUM, &accg, &c, &axis0, 1, 0);
            } else {
                st = gpuml_reduce(ctx, GPUML_REDUCE_SUM, sum, &c, &axis0, 1, 0);
                if (st == GPUML_SUCCESS) st = gpuml_add(ctx, &accg, &accg, sum);
            }
        }
    }
cast:
    if (st == GPUML_SUCCESS) {   /* acc (k, r, s, c) contiguous */
        const int64_t st4[4] = { cv->ncol, cv->s * cv->cg, cv->cg, 1 };
        st = gpuml__cv_put_dw(ctx, cv, acc, st4);
    }
    gpuml_tensor_free(sum);
    gpuml_tensor_free(part);
    gpuml_tensor_free(col);
    gpuml_tensor_free(acc);
    return st;
}

/* the contiguous NHWC problem for the implicit-GEMM kernel, or 0 where it cannot be one */
GPUML__FN int gpuml__cv_igemm_problem(const gpuml__cv *cv, gpuml__conv_problem *pr)
{
    if (cv->layout != GPUML_LAYOUT_NHWC || !gpuml__is_contig(cv->x) || !gpuml__is_contig(cv->wt) || !gpuml__is_contig(cv->y) ||
        (cv->res && !gpuml__is_contig(cv->res)) || cv->pb < 0 || cv->pr < 0)
        return 0;
    memset(pr, 0, sizeof *pr);
    pr->n = cv->n; pr->h = cv->h; pr->w = cv->w; pr->c = cv->c; pr->k = cv->k; pr->r = cv->r; pr->s = cv->s; pr->p = cv->p; pr->q = cv->q;
    pr->stride_h = cv->sh; pr->stride_w = cv->sw; pr->pad_h = cv->pt; pr->pad_w = cv->pl; pr->dil_h = cv->dh; pr->dil_w = cv->dw;
    pr->groups = cv->groups;
    pr->x = cv->x; pr->wt = cv->wt; pr->y = cv->y; pr->bias = cv->bias; pr->residual = cv->res; pr->act = cv->act;
    return 1;
}

#ifndef GPUML__CV_TF32_MIN
#define GPUML__CV_TF32_MIN 16777216.0   /* multiply-adds from which AUTO takes the tensor cores for f32 */
#endif
/* f32 forward (groups 1) on the mma.sync implicit GEMM, sm_80+: mode 1 tf32 (x and w rounded to
   tf32 in the kernel), mode 2 3xTF32 (f32-level error: the prep kernel writes x' = [small | bigf |
   big] and w' = [bigf | small | big] along channels, C' = 3C rounded up to 4, and one tf32 conv
   over C' sums small_x*big_w + big_x*small_w + big_x*big_w, each k tile's sum added into the
   accumulators round-to-nearest), mode 3 the same summed in the tensor cores' (truncating)
   accumulators (A/B only), mode 4 3xTF32 split in the kernel's registers (x and w as for tf32:
   no 3x copies).  cfg / splits as gpuml__conv2d_igemm_cfg (-1 / 0: chosen).  NCHW x and w are
   transposed by the same pass (NHWC, KRSC); an NCHW y is written by the kernel's epilogue
   directly.  Modes 1 and 4 read NHWC x with C % 4 == 0 and KRSC w as they are.  NOT_SUPPORTED
   (no message) where the kernel does not take the problem.  Zero padding takes part in the sums
   (0 * an Inf weight is NaN there; the CUDA-core kernels skip padding taps).
   On sm_90 the same modes 1-3 run on the wgmma implicit GEMM (kernels/conv_sm90.cu, f32 = tf32
   there): mode | GPUML__CV_WGMMA forces it (cfg: its configuration, with GPUML__CW_* flags),
   mode | GPUML__CV_MMA forces the mma.sync kernel; neither with cfg < 0: wgmma where it takes
   the problem (unless GPUML_CONV_F32=old), else mma.sync; neither with cfg >= 0: mma.sync.  For
   wgmma, channels are padded with zeros to C' % 32 == 0 (the prep pass; tf32 NHWC with C % 32
   == 0 and KRSC w are read as they are), mode 2 sums every GPUML__CW_RN k tiles apart. */
#define GPUML__CV_WGMMA 16
#define GPUML__CV_MMA 32
/* GPUML_CONV_F32=old: f32 forward as before the wgmma f32 kernel (A/B runs) */
GPUML__FN int gpuml__cv_f32_old(void)
{
    const char *env = gpuml__getenv("GPUML_CONV_F32");
    return env && strcmp(env, "old") == 0;
}
/* the f32 tensor-core convs with few channels: 1 where the window's S columns are better
   unfolded into the channels by the prep pass (an R x 1 conv over S*C channels a part), i.e.
   where that pads fewer channels to the kernel's multiple al (the C = 3 7x7 stem: 3 x 21 = 63 of
   64 channels in 3xTF32 on wgmma, against 7 x 32 for 7 x 9) */
GPUML__FN int gpuml__cv_unfold(const gpuml__cv *cv, int parts, int al)
{
    int64_t cs = cv->c * cv->s;
    if (cv->s <= 1 || cs > 256 || cv->q > INT32_MAX / 8 || cv->h * cv->q > INT32_MAX || cv->w > INT32_MAX / 2) return 0;
    return (parts * cs + al - 1) / al * al < cv->s * ((parts * cv->c + al - 1) / al * al);
}
GPUML__FN gpuml_status gpuml__cv_tf32(gpuml_ctx *ctx, const gpuml__cv *cv, int mode, int cfg, int splits, const char *op)
{
    gpuml__conv_problem pr;
    gpuml_tensor *tmp[2] = { NULL, NULL }, fake[2], wflat;
    const gpuml_tensor *src[2];
    gpuml_status st = GPUML_SUCCESS;
    int wg = (mode & GPUML__CV_WGMMA) != 0, forced_mma = (mode & GPUML__CV_MMA) != 0;
    int parts, direct[2], i, sub, unf, al;
    int64_t cp, cv_c, len[2], one = 1;
    mode &= ~(GPUML__CV_WGMMA | GPUML__CV_MMA);
    /* the automatic choice skips the wgmma kernel where padding to 32 channels adds more than a
       quarter to the MACs: the C = 3 stem ran 1.2x (3xTF32) / 2x (tf32) slower there (H100) --
       counted after the unfolding below (the stem's 3 x 7 = 21 channels a part: 63 of 64 in 3xTF32) */
    parts = mode == 1 || mode == 4 ? 1 : 3;
    cv_c = gpuml__cv_unfold(cv, parts, 32) ? cv->c * cv->s : cv->c;
    if (!wg && !forced_mma && cfg < 0 && ctx->arch == 90 && mode >= 1 && mode <= 3 && !gpuml__cv_f32_old() &&
        ((parts * cv_c + 31) / 32 * 32) * 4 <= parts * cv_c * 5) {
        st = gpuml__cv_tf32(ctx, cv, mode | GPUML__CV_WGMMA, -1, 0, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        gpuml_clear_error(ctx);
        st = GPUML_SUCCESS;
    }
    if (wg && (mode < 1 || mode > 3)) return GPUML_ERROR_NOT_SUPPORTED;
    al = wg ? 32 : 4;
    unf = gpuml__cv_unfold(cv, parts, al);
    cv_c = unf ? cv->c * cv->s : cv->c;
    cp = (parts * cv_c + al - 1) / al * al;
    if (cv->dt != GPUML_F32 || cv->groups != 1 || ctx->arch < 80 || cv->pb < 0 || cv->pr < 0 || !gpuml__is_contig(cv->y) ||
        (cv->res && !gpuml__is_contig(cv->res)) || cv->n > INT32_MAX || cv->k > INT32_MAX || cv->h * cv->w > INT32_MAX ||
        cv->r * cv->s > INT32_MAX || cp > INT32_MAX)
        return GPUML_ERROR_NOT_SUPPORTED;
    /* tf32 reads NHWC x (C % 4 == 0) and KRSC w as they are; the rest goes through the prep kernel */
    direct[0] = !unf && parts == 1 && cv->layout == GPUML_LAYOUT_NHWC && gpuml__is_contig(cv->x) && cp == cv->c && gpuml__aligned16(gpuml__dptr(cv->x));
    direct[1] = !unf && parts == 1 && cv->ws[3] == 1 && cv->ws[2] == cv->c && cv->ws[1] == cv->s * cv->c && cv->ws[0] == cv->ncol &&
                cp == cv->c && gpuml__aligned16(gpuml__dptr(cv->wt));
    src[0] = cv->x; src[1] = cv->wt;
    memset(&pr, 0, sizeof pr);
    pr.n = cv->n; pr.h = cv->h; pr.w = cv->w; pr.c = cp; pr.k = cv->k; pr.r = cv->r; pr.s = cv->s; pr.p = cv->p; pr.q = cv->q;
    pr.stride_h = cv->sh; pr.stride_w = cv->sw; pr.pad_h = cv->pt; pr.pad_w = cv->pl; pr.dil_h = cv->dh; pr.dil_w = cv->dw;
    pr.groups = 1; pr.y = cv->y; pr.bias = cv->bias; pr.residual = cv->res; pr.act = cv->act;
    pr.tf32 = mode;
    pr.y_nchw = cv->layout == GPUML_LAYOUT_NCHW;
    pr.max_splits = cv->max_splits;
    /* a strided 1x1 unpadded conv reads every sh-th row and sw-th column of x only: the prep pass
       copies just those pixels (1/(sh*sw) of x) and the kernel runs a stride-1 conv on the P x Q
       image it wrote */
    sub = !direct[0] && cv->r == 1 && cv->s == 1 && (cv->sh > 1 || cv->sw > 1) && cv->pt == 0 && cv->pb == 0 && cv->pl == 0 && cv->pr == 0;
    if (sub) { pr.h = cv->p; pr.w = cv->q; pr.stride_h = pr.stride_w = 1; }
    /* unfolded columns: an R x 1 conv, stride 1 and no padding along w, over the Q columns the
       prep pass wrote (each holding its S taps' channels) */
    if (unf) { pr.w = cv->q; pr.s = 1; pr.stride_w = 1; pr.pad_w = 0; pr.dil_w = 1; }
    /* the kernel's own checks first (sizes, shared memory), on operands shaped as it would get them */
    len[0] = cv->n * pr.h * pr.w * cp; len[1] = cv->k * cv->r * pr.s * cp;
    for (i = 0; i < 2; i++) fake[i] = gpuml__cv_view(src[i], 1, &len[i], &one, -src[i]->offset);
    /* directly-read weights as a flat view of their KRSC elements: a KCRS-shaped view of KRSC
       memory (the strided backward data's phase weights) is not contiguous in its own shape, and
       the kernels' checks would send it to the CUDA-core path */
    wflat = gpuml__cv_view(cv->wt, 1, &len[1], &one, 0);
    pr.x = direct[0] ? cv->x : &fake[0];
    pr.wt = direct[1] ? &wflat : &fake[1];
    if (mode < 1 || mode > 4) return GPUML_ERROR_NOT_SUPPORTED;
    if (wg ? (cfg >= 0 ? gpuml__conv_sm90_why(ctx, &pr, cfg) != NULL : gpuml__conv_sm90_choose(ctx, &pr, NULL, NULL) < 0)
           : (cfg >= 0 ? gpuml__conv_igemm_why(ctx, &pr, cfg) != NULL : gpuml__conv_igemm_choose(ctx, &pr, NULL) == GPUML__CONV_GATHER_CFG))
        return GPUML_ERROR_NOT_SUPPORTED;
    for (i = 0; i < 2 && st == GPUML_SUCCESS; i++) {
        gpuml__conv_prep_kparams kp;
        gpuml__CUfunction fn;
        unsigned grid[3], block[3] = {32, 8, 1};
        void *args[1];
        const int64_t *sx = i ? cv->ws : cv->xs;
        if (direct[i]) continue;
        memset(&kp, 0, sizeof kp);
        kp.s0 = sx[0]; kp.s1 = sx[1]; kp.s2 = sx[2]; kp.s3 = sx[3];
        kp.n = (int)(i ? cv->k : cv->n); kp.hw = (int)(i ? cv->r * cv->s : cv->h * cv->w); kp.w = (int)(i ? cv->s : cv->w);
        kp.c = (int)cv->c; kp.cp = (int)cp; kp.parts = parts; kp.role = i;
        kp.c0 = (int)cv->c; kp.taps = 1; kp.tstep = 1; kp.tdil = 0; kp.tpad = 0; kp.wsrc = INT32_MAX;
        if (!i && sub) { kp.hw = (int)(pr.h * pr.w); kp.w = (int)pr.w; kp.s1 = sx[1] * cv->sh; kp.s2 = sx[2] * cv->sw; }
        if (unf) {
            kp.c = (int)cv_c; kp.taps = (int)cv->s; kp.wsrc = (int)(i ? cv->s : cv->w);
            if (i) { kp.hw = (int)cv->r; kp.w = 1; kp.tstep = 0; kp.tdil = 1; }   /* w[k][r][t][c] */
            else { kp.hw = (int)(cv->h * cv->q); kp.w = (int)cv->q; kp.tstep = cv->sw; kp.tdil = cv->dw; kp.tpad = (int)cv->pl; }
        }
        if (kp.hw == 1 && kp.taps == 1) {
            /* 1x1 weights (or 1x1 images): the rows as the pixels of one image, so a tile spans
               64 of them (a tile per row left 63 of its 64 pixel slots idle: 22 us for 1 MB) */
            kp.s2 = kp.s0; kp.s1 = 0; kp.hw = kp.w = kp.n; kp.n = 1;
        }
        grid[0] = (unsigned)((kp.hw + 63) / 64); grid[1] = (unsigned)((kp.c + 63) / 64); grid[2] = (unsigned)kp.n;
        /* the source's unit stride along n (the backward filter as a conv of NHWC x's channel
           planes): a block per pixel x 64 channels x 32 of the n, read along n */
        kp.nfast = kp.s0 == 1 && kp.s2 != 1 && kp.s3 != 1 && kp.taps == 1 && kp.n > 1;
        if (kp.nfast) { grid[0] = (unsigned)kp.hw; grid[2] = (unsigned)((kp.n + 31) / 32); }
        if (grid[1] > 65535 || grid[2] > 65535) { st = GPUML_ERROR_NOT_SUPPORTED; break; }
        st = gpuml__kernel(ctx, &gpuml__fam_conv_igemm, "-DGPUML_CONV_PREP=1", "gpuml_conv_tf32_prep", &fn);
        if (st != GPUML_SUCCESS) break;
        tmp[i] = gpuml__tensor_new(ctx, GPUML_F32, 1, &len[i], op);
        if (!tmp[i]) { st = ctx->status; break; }
        kp.src = gpuml__dptr(src[i]); kp.dst = gpuml__dptr(tmp[i]);
        args[0] = &kp;
        st = gpuml__launch(ctx, fn, grid, block, 0, args, parts == 1 ? "conv2d (f32 operand layout)" : "conv2d (3xTF32 split)");
        if (i) pr.wt = tmp[i]; else pr.x = tmp[i];
    }
    if (st == GPUML_SUCCESS) st = wg ? gpuml__conv2d_sm90_cfg(ctx, &pr, cfg, splits) : gpuml__conv2d_igemm_cfg(ctx, &pr, cfg, splits);
    gpuml_tensor_free(tmp[0]);   /* stream-ordered */
    gpuml_tensor_free(tmp[1]);
    return st;
}

/* Backward filter as a forward conv (f32 on sm_90: 3xTF32, or tf32 with allow_tf32, through
   gpuml__cv_tf32 and so on the wgmma implicit GEMM).  dw[k][r][s][c] = the sum over n, p, q of
   dy[n][p][q][k] * x[n][p*sh + r*dh - pt][q*sw + s*dw - pl][c] is itself a conv: its images are
   x's C channel planes (H x W, the N images as its channels), its K filters dy's channel planes
   (P x Q taps of N channels), stride dh, dilation sh, the same top / left padding, and its output
   [C][K][R][S] (the kernel's NCHW epilogue) is dw permuted, copied into dw at the end (K*C*R*S
   elements).  The prep pass that splits x and w for 3xTF32 reads through any strides, so the
   swapped views cost nothing more.  Its GEMM has M = C*R*S, N = K and a long K_gemm = N*P*Q: few
   output tiles, split up to GPUML__CONV_SPLITS_CAP ways.  NOT_SUPPORTED (no message) where the
   forward paths decline it.  The route the f32 backward filter took before (im2col + batched
   matmul + reduce, gpuml__cv_gemm_bwd_filter) ran 0.24-0.57x cuDNN f32 on ResNet-50 layers.
   gpuml__cv_bwf_conv_on: tests / A/B, 1 takes it below the size threshold too, -1 never
   (GPUML_CONV_BWF=gemm in the environment: never either). */
static int gpuml__cv_bwf_conv_on;
GPUML__FN int gpuml__cv_bwf_conv_wanted(gpuml_ctx *ctx, const gpuml__cv *cv)
{
    const char *env = gpuml__getenv("GPUML_CONV_BWF");
    if (gpuml__cv_bwf_conv_on < 0 || (env && strcmp(env, "gemm") == 0) || gpuml__cv_bwd_is_old()) return 0;
    if (cv->dt != GPUML_F32 || cv->groups != 1 || ctx->arch != 90) return 0;
    return gpuml__cv_bwf_conv_on > 0 || (double)cv->n * cv->p * cv->q * cv->k * cv->ncol >= GPUML__CV_TF32_MIN;
}
GPUML__FN gpuml_status gpuml__cv_bwf_conv(gpuml_ctx *ctx, const gpuml__cv *cv, const char *op)
{
    gpuml__cv t;
    gpuml_tensor *out;
    gpuml_status st;
    int64_t shape[4], pb, pr;
    if (cv->p > INT32_MAX || cv->q > INT32_MAX || cv->r > INT32_MAX || cv->s > INT32_MAX) return GPUML_ERROR_NOT_SUPPORTED;
    /* bottom / right padding for exactly R (S) outputs: the original conv may leave the last rows
       unread (then < 0: the swapped conv reads no row past its R-th window either way) */
    pb = (int64_t)cv->dh * (cv->r - 1) + (int64_t)cv->sh * (cv->p - 1) + 1 - cv->h - cv->pt;
    pr = (int64_t)cv->dw * (cv->s - 1) + (int64_t)cv->sw * (cv->q - 1) + 1 - cv->w - cv->pl;
    memset(&t, 0, sizeof t);
    t.n = cv->c; t.h = cv->h; t.w = cv->w; t.c = cv->n; t.k = cv->k;
    t.r = cv->p; t.s = cv->q; t.p = cv->r; t.q = cv->s;
    t.cg = t.c; t.kg = t.k; t.ncol = t.r * t.s * t.c;
    t.sh = cv->dh; t.sw = cv->dw; t.dh = cv->sh; t.dw = cv->sw;
    t.pt = cv->pt; t.pl = cv->pl; t.pb = (int)GPUML__MAX(pb, (int64_t)0); t.pr = (int)GPUML__MAX(pr, (int64_t)0);
    t.groups = 1; t.act = GPUML_ACT_NONE;
    /* NCHW: y written [n][k][p][q] by the epilogue, and x never read in place as NHWC */
    t.layout = GPUML_LAYOUT_NCHW;
    /* logical (n, h, w, c) of the swapped problem: x's (c, h, w, n), dy's (k, p, q, n) */
    t.xs[0] = cv->xs[3]; t.xs[1] = cv->xs[1]; t.xs[2] = cv->xs[2]; t.xs[3] = cv->xs[0];
    t.ws[0] = cv->ys[3]; t.ws[1] = cv->ys[1]; t.ws[2] = cv->ys[2]; t.ws[3] = cv->ys[0];
    shape[0] = cv->c; shape[1] = cv->k; shape[2] = cv->r; shape[3] = cv->s;
    t.x = cv->x; t.wt = cv->y;
    t.dt = GPUML_F32; t.tf32 = cv->tf32;
    t.max_splits = GPUML__CONV_SPLITS_CAP;
    if (cv->r == 1 && cv->s == 1 && cv->pt == 0 && cv->pl == 0 && (cv->sh > 1 || cv->sw > 1)) {
        /* strided 1x1, unpadded on top / left: only every sh-th row and sw-th column of x takes part,
           so the images are that P x Q subsample (a strided view: the prep pass then copies a
           quarter of x at stride 2) and the swapped conv has dilation 1 */
        t.h = GPUML__MIN(cv->p, (cv->h - 1) / cv->sh + 1); t.w = GPUML__MIN(cv->q, (cv->w - 1) / cv->sw + 1);
        t.xs[1] = cv->xs[1] * cv->sh; t.xs[2] = cv->xs[2] * cv->sw;
        t.dh = t.dw = 1;
        t.pb = (int)(cv->p - t.h); t.pr = (int)(cv->q - t.w);   /* outputs over bottom / right padding: taps on zeros */
    }
    out = gpuml__tensor_new(ctx, GPUML_F32, 4, shape, op);
    if (!out) return ctx->status;
    t.y = out;
    st = gpuml__cv_tf32(ctx, &t, cv->tf32 ? 1 : 2, -1, 0, op);
    if (st == GPUML_SUCCESS) {   /* out [c][k][r][s] (groups 1: cg = c) */
        const int64_t st4[4] = { cv->r * cv->s, cv->s, 1, cv->k * cv->r * cv->s };
        gpuml__cv_bwd_calls[3]++;
        st = gpuml__cv_put_dw(ctx, cv, out, st4);
    }
    gpuml_tensor_free(out);   /* stream-ordered */
    return st;
}

GPUML__FN gpuml_status gpuml__cv_cuda(gpuml_ctx *ctx, const gpuml__cv *cv, int kind, gpuml_conv_path path, const char *op)
{
    gpuml__conv_params kp;
    /* AUTO on Hopper: a 1x1, stride-1, unpadded conv with C >= 512 is one plain GEMM, which the
       wgmma matmul runs faster than the mma.sync implicit GEMM; below that the implicit GEMM's
       smaller tiles win (H200, ResNet-50 1x1 layers at batch 32: bench/NOTES_conv.md).  The
       wgmma implicit GEMM (C % 64 == 0, f16/bf16 NHWC) beats both: 13.8-15.4 vs 20.9 us at
       1024->256, 19.7 vs 23.8 at 1024->512, 14.2 vs 16.8 at 512->2048 (bench/NOTES_conv_igemm.md) */
    int gemm_1x1 = path == GPUML_CONV_AUTO && ctx->arch == 90 && cv->r == 1 && cv->s == 1 && cv->sh == 1 && cv->sw == 1 &&
                   cv->pt == 0 && cv->pb == 0 && cv->pl == 0 && cv->pr == 0 && cv->groups == 1 && cv->c >= 512 &&
                   !(cv->c % 64 == 0 && cv->dt != GPUML_F32 && cv->layout == GPUML_LAYOUT_NHWC);
    /* f32 forward on sm_80+: tf32 / 3xTF32 on the tensor cores (gpuml__cv_tf32: on sm_90 the
       wgmma implicit GEMM, else mma.sync), forced, or AUTO from GPUML__CV_TF32_MIN multiply-adds
       on: with allow_tf32 always; 3xTF32 only where it beat the GEMM path on the H100
       (bench/NOTES_conv.md, ResNet-50 batch 32).  sm_90: NCHW except 1x1 with K <= 128 and
       M >= 16384 (there the GEMM path is 1.1-1.4x faster: the 3x split copy of x costs more
       than the GEMM), NHWC with a window larger than 1x1 (2-5x the GEMM path; NHWC 1x1 is one
       3xTF32 matmul, faster).  Other archs: NCHW with a window larger than 1x1 (2.6-3.1x the
       GEMM path's speed), or 1x1 with K >= 4C or C >= 2048; NHWC keeps the GEMM path */
    int tc_3x = ctx->arch == 90 && !gpuml__cv_f32_old() ? (cv->layout == GPUML_LAYOUT_NCHW ? cv->r * cv->s > 1 || cv->k > 128 || cv->n * cv->p * cv->q < 16384
                                                                   : cv->r * cv->s > 1)
                                : cv->layout == GPUML_LAYOUT_NCHW && (cv->r * cv->s > 1 || cv->k >= 4 * cv->c || cv->c >= 2048);
    /* f32 NCHW 1x1 (stride 1, unpadded) with allow_tf32 on sm_90: the wgmma kernel that reads x as
       it is (gpuml__cv_1x1w: 0.98-1.63x the routes below on ResNet-50's 1x1 layers, bench/NOTES_conv.md);
       GPUML_CONV_1X1W=off skips it (and lets GPUML_CONV_1X1S=on reach the mma.sync kernel) */
    if (kind == 0 && path == GPUML_CONV_AUTO && cv->dt == GPUML_F32 && cv->layout == GPUML_LAYOUT_NCHW && cv->tf32 && ctx->arch == 90) {
        const char *env = gpuml__getenv("GPUML_CONV_1X1W");
        if (!(env && strcmp(env, "off") == 0)) {
            gpuml_status st = gpuml__cv_1x1w(ctx, cv, 0, op);
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
            gpuml_clear_error(ctx);
        }
    }
    /* f32 NCHW 1x1 (stride 1, unpadded) with x read as it is (gpuml__cv_1x1s), no layout pass.
       allow_tf32 (sm_80+): the tf32 mma.sync form where C * K <= 65536, where reading x once
       beats the NCHW -> NHWC pass + wgmma implicit GEMM (H100, batch 32, us, this vs that: 64->64
       @56 28.3 vs 48.2, 64->256 @56 64.7 vs 96.6, 256->64 @56 59.6 vs 126, 256->128 @56 80.8 vs
       143, 128->512 @28 50.7 vs 58.7, 512->128 @28 43.7 vs 68.0; 512->256 @28 83 vs 82, and the
       larger C * K layers lose: 1024->256 @14 52 vs 45; bench/NOTES_conv.md).
       f32: few output channels (K <= 128, C <= 512) or C * K <= 16384 on CUDA cores, where the
       3xTF32 split copies of x cost more than the products save (H100, batch 32, us, this kernel
       vs 3xTF32: 64->64 @56 34.8 vs 87.8, 64->256 100.5 vs 171, 256->64 104 vs 240, 256->128 177
       vs 337, 512->128 @28 103 vs 174; even at 128->512 @28 (91 vs 91) and 512->256 @28 (169 vs
       168); 3xTF32 wins the larger-C layers, 1024->256 @14 93 vs 107: bench/NOTES_conv.md).
       GPUML_CONV_1X1S=off skips it, =on takes it for every such conv */
    if (kind == 0 && path == GPUML_CONV_AUTO && cv->dt == GPUML_F32 && cv->layout == GPUML_LAYOUT_NCHW) {
        const char *env = gpuml__getenv("GPUML_CONV_1X1S");
        int mode = env && strcmp(env, "off") == 0 ? -1 : env && strcmp(env, "on") == 0 ? 1 : 0;
        int take = mode > 0 || (mode == 0 && (cv->tf32 ? ctx->arch >= 80 && cv->c * cv->k <= 65536
                                                      : (cv->k <= 128 && cv->c <= 512) || cv->c * cv->k <= 16384));
        if (take) {
            gpuml_status st = gpuml__cv_1x1s(ctx, cv, cv->tf32 ? 2 : 1, op);
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
            gpuml_clear_error(ctx);
        }
    }
    if (kind == 0 && cv->dt == GPUML_F32 && ctx->arch >= 80 && cv->groups == 1 &&
        (path == GPUML_CONV_IGEMM ||
         (path == GPUML_CONV_AUTO && (double)cv->n * cv->p * cv->q * cv->k * cv->ncol >= GPUML__CV_TF32_MIN && (cv->tf32 || tc_3x)))) {
        gpuml_status st = gpuml__cv_tf32(ctx, cv, cv->tf32 ? 1 : 2, -1, 0, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        gpuml_clear_error(ctx);
    }
    if (kind == 0 && !gemm_1x1 && (path == GPUML_CONV_AUTO || path == GPUML_CONV_IGEMM)) {
        gpuml__conv_problem pr;
        if (gpuml__cv_igemm_problem(cv, &pr)) {
            gpuml_status st = gpuml__conv2d_igemm(ctx, &pr);
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
            gpuml_clear_error(ctx);
        }
        if (path == GPUML_CONV_IGEMM)
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the implicit-GEMM path cannot take this problem (it needs "
                               "f16/bf16 with contiguous NHWC x, y and residual and contiguous KRSC weights, or f32 with groups 1 "
                               "and contiguous y and residual; sm_80+; %s on sm_%d)", op, gpuml__dtype_names[cv->dt], ctx->arch);
    }
    if (kind == 0 && path == GPUML_CONV_WGMMA && cv->dt == GPUML_F32) {
        /* f32: tf32 (allow_tf32) or 3xTF32 on the wgmma kernel, any layout (the prep pass pads C) */
        gpuml_status st = gpuml__cv_tf32(ctx, cv, (cv->tf32 ? 1 : 2) | GPUML__CV_WGMMA, -1, 0, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        gpuml_clear_error(ctx);
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the wgmma path cannot take this f32 problem (it needs groups 1, "
                           "contiguous y and residual, sm_90; here sm_%d)", op, ctx->arch);
    }
    if (kind == 0 && path == GPUML_CONV_WGMMA) {
        gpuml__conv_problem pr;
        const char *why = "it needs contiguous NHWC x, y and residual and contiguous KRSC weights";
        if (gpuml__cv_igemm_problem(cv, &pr)) {
            gpuml_status st = gpuml__conv2d_sm90(ctx, &pr);
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
            gpuml_clear_error(ctx);
            why = gpuml__conv_sm90_why(ctx, &pr, 1);
            if (!why) why = "no split of its k tiles fits";
        }
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the wgmma path cannot take this problem: %s (f16/bf16, C %% 64 == 0, "
                           "sm_90; here %s on sm_%d)", op, why, gpuml__dtype_names[cv->dt], ctx->arch);
    }
    if (kind != 0 && (path == GPUML_CONV_IGEMM || path == GPUML_CONV_WGMMA))
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: the implicit-GEMM paths are forward only", op);
    /* AUTO backward data with stride 1 (2 on sm_80+): the forward conv of dy (zero-upsampled) with
       the flipped weights, on the forward's paths (tensor cores, the depthwise kernels) */
    if (kind == 1 && path == GPUML_CONV_AUTO) {
        gpuml_status st = gpuml__cv_bwd_data_fwd(ctx, cv, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        gpuml_clear_error(ctx);
    }
    /* AUTO tf32 backward filter of a 1x1 stride-1 NCHW conv on Hopper with C * K >= 16384: the
       wgmma matmul over images x pixels (gpuml__cv_bwf1x1w; H100, batch 32, us, this vs the routes
       below: 512->256 @28 52.6 vs 98.3, 1024->512 @14 55.0 vs 82.2, 256->1024 @14 36.6 vs 69.3,
       256->64 @56 59.5 vs 68.7; 64->64 @56, half its 128-row tile empty, 38.1 vs 36.9:
       bench/NOTES_conv.md) */
    if (kind == 2 && path == GPUML_CONV_AUTO && cv->dt == GPUML_F32 && cv->tf32) {
        const char *env = gpuml__getenv("GPUML_CONV_BWF1X1W");
        int on = gpuml__cv_bwf1x1w_on ? gpuml__cv_bwf1x1w_on : env && strcmp(env, "on") == 0 ? 1 : env && strcmp(env, "off") == 0 ? -1 : 0;
        if (on > 0 || (on == 0 && cv->c * cv->k >= 16384)) {
            gpuml_status st = gpuml__cv_bwf1x1w(ctx, cv, op);
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
            gpuml_clear_error(ctx);
        }
    }
    /* AUTO f32 backward filter of a 1x1 stride-1 conv with x and dy read as they are
       (gpuml__cv_bwf1x1); the swapped-conv route below transposes both first.  tf32 NCHW where C <=
       512 (sm_80+; H100, batch 32, us, this vs that: 64->64 @56 37.4 vs 88.3, 256->64 69.6 vs 159,
       512->256 @28 108 vs 110; C = 1024 loses: 1024->512 @14 120 vs 83).  sm_90: 3xTF32 NCHW where
       C * K <= 131072 (64->64 @56 50 vs 154, 256->64 90 vs 341, 512->256 @28 210 vs 218; 256->1024
       @14 126 vs 108), NHWC (tf32 and 3xTF32) where C * K <= 262144 (f32 256->64 @56 86 vs 354,
       256->1024 @14 106 vs 107, 1024->512 183 vs 141; tf32 256->64 64 vs 178, 1024->512 96 vs 85):
       bench/NOTES_conv.md, "f32 1x1 backward filter" */
    if (kind == 2 && path == GPUML_CONV_AUTO && cv->dt == GPUML_F32) {
        const char *env = gpuml__getenv("GPUML_CONV_BWF1X1");
        int on = gpuml__cv_bwf1x1_on ? gpuml__cv_bwf1x1_on : env && strcmp(env, "on") == 0 ? 1 : env && strcmp(env, "off") == 0 ? -1 : 0;
        int fl = gpuml__cv_bwf1x1_kind(ctx, cv);
        if (on > 0 || (on == 0 && fl && (cv->tf32 && fl == 1 ? cv->c <= 512
                                                              : ctx->arch == 90 && cv->c * cv->k <= (fl == 1 ? 131072 : 262144)))) {
            gpuml_status st = gpuml__cv_bwf1x1(ctx, cv, op);
            if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
            gpuml_clear_error(ctx);
        }
    }
    /* AUTO backward filter in f32 on Hopper: the forward conv of x's and dy's channel planes */
    if (kind == 2 && path == GPUML_CONV_AUTO && gpuml__cv_bwf_conv_wanted(ctx, cv)) {
        gpuml_status st = gpuml__cv_bwf_conv(ctx, cv, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
        gpuml_clear_error(ctx);
    }
    /* AUTO takes GEMM for groups 1 (tensor cores / the tuned matmul); grouped and depthwise
       convs go to the direct kernels, whose per-group GEMMs would be tiny */
    if (path == GPUML_CONV_GEMM || (path == GPUML_CONV_AUTO && cv->groups == 1)) {
        gpuml_status st = kind == 0 ? gpuml__cv_gemm_fwd(ctx, cv, op) : kind == 1 ? gpuml__cv_gemm_bwd_data(ctx, cv, op)
                                                                                  : gpuml__cv_gemm_bwd_filter(ctx, cv, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED || path == GPUML_CONV_GEMM) return st;
        gpuml_clear_error(ctx);
    }
    if (kind == 0 && path == GPUML_CONV_AUTO && cv->cg == 1) {
        gpuml_status st = gpuml__cv_dw3(ctx, cv, op);
        if (st == GPUML_ERROR_NOT_SUPPORTED) st = gpuml__cv_dw_fast(ctx, cv, op);
        if (st != GPUML_ERROR_NOT_SUPPORTED) return st;
    }
    gpuml__cv_kparams(cv, &kp);
    if (kind == 0) {
        kp.total = cv->n * cv->p * cv->q * cv->k;
        return gpuml__cv_launch(ctx, cv, path == GPUML_CONV_AUTO && cv->cg == 1 ? "gpuml_conv_depthwise" : "gpuml_conv_direct",
                                &kp, 1, 0, 0, op);
    }
    if (kind == 1) {
        kp.total = cv->n * cv->h * cv->w * cv->c;
        return gpuml__cv_launch(ctx, cv, "gpuml_conv_bwd_data", &kp, 0, 0, 0, op);
    }
    kp.total = cv->k * cv->ncol;
    return gpuml__cv_launch(ctx, cv, "gpuml_conv_bwd_filter", &kp, 0, 0, cv->n * cv->p * cv->q, op);
}
#endif

GPUML__FN gpuml_status gpuml__cv_run(gpuml_ctx *ctx, const char *op, int kind, const gpuml_tensor *x, const gpuml_tensor *w,
                                     const gpuml_tensor *y, const gpuml_conv2d_desc *desc)
{
    gpuml__cv cv;
    gpuml_conv_path path = desc ? desc->path : GPUML_CONV_AUTO;
    GPUML__TRY(gpuml__enter(ctx));
    GPUML__TRY(gpuml__cv_setup(ctx, op, kind, x, w, y, desc, &cv));
    if (cv.n == 0 || cv.k == 0 || cv.c == 0) {
        /* nothing to sum: the written tensor is zero (or, forward, the epilogue of zero) */
        if (kind == 0 && cv.n * cv.p * cv.q * cv.k > 0 && (cv.bias || cv.act || cv.res))
            return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: an epilogue over zero input channels", op);
        return gpuml__numel(kind == 0 ? y : kind == 1 ? x : w) ? gpuml_fill(ctx, (gpuml_tensor *)(kind == 0 ? y : kind == 1 ? x : w), 0.0)
                                                               : GPUML_SUCCESS;
    }
    {
        /* profiler record: 2*N*P*Q*K*(R*S*C/groups) FLOPs for every pass; named by op less "gpuml_" */
        const gpuml_tensor *t0 = kind == 1 ? y : x, *t1 = kind == 2 ? y : w, *out = kind == 0 ? y : kind == 1 ? x : w;
#define GPUML__CV_PROF(call) GPUML__PROF(ctx, call, op + 6, cv.dt == GPUML_F32 ? GPUML_UNIT_FP32 : GPUML_UNIT_F16_TENSOR, \
                                         2.0 * (double)cv.n * (double)cv.p * (double)cv.q * (double)cv.k * (double)cv.ncol, \
                                         gpuml__tb(x) + gpuml__tb(w) + gpuml__tb(y), t0, t1, out)
        if (ctx->backend == GPUML_BACKEND_CPU) {
            if (path != GPUML_CONV_AUTO && path != GPUML_CONV_GEMM)
                return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: path %d is a GPU kernel; this context runs on the CPU", op, (int)path);
            if (kind == 1 && gpuml__cv_cpu_bwd_data_fwd_ok(&cv)) return GPUML__CV_PROF(gpuml__cv_cpu_bwd_data_fwd(ctx, &cv, op));
            return GPUML__CV_PROF(gpuml__cv_cpu_run(ctx, &cv, kind, op));
        }
#ifndef GPUML_NO_CUDA
        return GPUML__CV_PROF(gpuml__cv_cuda(ctx, &cv, kind, path, op));
#else
        (void)t0; (void)t1; (void)out;
        return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
#undef GPUML__CV_PROF
    }
}

GPUML__DEF gpuml_status gpuml_conv2d(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *w,
                                     const gpuml_conv2d_desc *desc)
{
    return gpuml__cv_run(ctx, "gpuml_conv2d", 0, x, w, y, desc);
}
GPUML__DEF gpuml_status gpuml_conv2d_backward_data(gpuml_ctx *ctx, gpuml_tensor *dx, const gpuml_tensor *dy, const gpuml_tensor *w,
                                                   const gpuml_conv2d_desc *desc)
{
    return gpuml__cv_run(ctx, "gpuml_conv2d_backward_data", 1, dx, w, dy, desc);
}
GPUML__DEF gpuml_status gpuml_conv2d_backward_filter(gpuml_ctx *ctx, gpuml_tensor *dw, const gpuml_tensor *x, const gpuml_tensor *dy,
                                                     const gpuml_conv2d_desc *desc)
{
    return gpuml__cv_run(ctx, "gpuml_conv2d_backward_filter", 2, x, dw, dy, desc);
}

GPUML__DEF gpuml_status gpuml_conv1d(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_tensor *w,
                                     const gpuml_conv2d_desc *desc)
{
    static const char op[] = "gpuml_conv1d";
    const gpuml_tensor *t[4];
    gpuml_tensor v[4];
    gpuml_conv2d_desc d;
    char s1[200];
    int i;
    GPUML__TRY(gpuml__enter(ctx));
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    t[0] = y; t[1] = x; t[2] = w; t[3] = d.residual;
    for (i = 0; i < 4; i++) {
        int64_t sh[4], st[4];
        int at = d.layout == GPUML_LAYOUT_NCHW ? 2 : 1, j, o = 0;
        if (!t[i]) continue;
        GPUML__TRY(gpuml__check_tensor(ctx, t[i], op, i == 0 ? "y" : i == 1 ? "x" : i == 2 ? "w" : "desc.residual"));
        if (t[i]->ndim != 3)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but must be 3-D (%s)", op, i == 0 ? "y" : i == 1 ? "x" : i == 2 ? "w" : "residual",
                               gpuml__shape_str(t[i], s1, sizeof s1), d.layout == GPUML_LAYOUT_NCHW ? "NCW, weights KCS" : "NWC, weights KSC");
        for (j = 0; j < 4; j++) {
            if (j == at) { sh[j] = 1; st[j] = t[i]->strides[at] * t[i]->shape[at]; continue; }
            sh[j] = t[i]->shape[o]; st[j] = t[i]->strides[o]; o++;
        }
        v[i] = gpuml__cv_view(t[i], 4, sh, st, 0);
    }
    if ((d.stride[0] > 1) || d.pad[0] || d.pad[1] || d.dilation[0] > 1)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: the height fields of desc (stride[0], pad[0..1], dilation[0]) must be "
                           "0 (or 1) for conv1d", op);
    if (d.residual) d.residual = &v[3];
    return gpuml_conv2d(ctx, &v[0], &v[1], &v[2], &d);
}

/* ------------------------------------------------------------------ pooling ---- */
/* an average window's divisor: the window at (h0, w0) clipped to the image, or with count_pad to
   the padded image (the GPU kernels compute the same) */
GPUML__FN float gpuml__pool_count(const gpuml__cv *cv, int64_t h0, int64_t w0, int count_pad)
{
    if (count_pad) return (float)((GPUML__MIN(h0 + cv->r, cv->h + cv->pb) - h0) * (GPUML__MIN(w0 + cv->s, cv->w + cv->pr) - w0));
    return (float)((GPUML__MIN(h0 + cv->r, cv->h) - GPUML__MAX(h0, (int64_t)0)) * (GPUML__MIN(w0 + cv->s, cv->w) - GPUML__MAX(w0, (int64_t)0)));
}
GPUML__FN void gpuml__pool_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    int is_max = j->pool_max, count_pad = j->count_pad;
    const float *xf = cv->dt == GPUML_F32 ? (const float *)gpuml_tensor_data(cv->x) : NULL;
    float *yf = cv->dt == GPUML_F32 ? (float *)gpuml_tensor_data(cv->y) : NULL;
    int64_t np, q, c, h, w;
    (void)tid;
    for (np = b; np < e; np++) {
        int64_t n = np / cv->p, p = np % cv->p;
        int64_t h0 = p * cv->sh - cv->pt, hs = GPUML__MAX(h0, (int64_t)0), he = GPUML__MIN(h0 + cv->r, cv->h);
        for (q = 0; q < cv->q; q++) {
            int64_t w0 = q * cv->sw - cv->pl, ws = GPUML__MAX(w0, (int64_t)0), we = GPUML__MIN(w0 + cv->s, cv->w);
            for (c = 0; c < cv->c; c++) {
                int64_t xo = n * cv->xs[0] + c * cv->xs[3];
                float acc = is_max ? -INFINITY : 0.0f;
                int at = (int)(hs * cv->w + ws);
                for (h = hs; h < he; h++)
                    for (w = ws; w < we; w++) {
                        /* (f32 read directly: a dtype-dispatched call an element was most of an NCHW pool) */
                        float v = xf ? xf[xo + h * cv->xs[1] + w * cv->xs[2]] : gpuml__cv_ld(cv->dt, cv->x, xo + h * cv->xs[1] + w * cv->xs[2]);
                        if (!is_max) acc += v;
                        else if (v > acc || v != v) { acc = v; at = (int)(h * cv->w + w); }   /* NaN propagates */
                    }
                if (j->arg) {   /* the backward's first pass: the element chosen, [n][p][q][c] */
                    j->arg[((np * cv->q) + q) * cv->c + c] = at;
                    continue;
                }
                if (!is_max) acc = acc / gpuml__pool_count(cv, h0, w0, count_pad);
                if (yf) yf[n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] + c * cv->ys[3]] = acc;
                else gpuml__cv_st(cv->dt, cv->y, n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] + c * cv->ys[3], acc);
            }
        }
    }
}

/* The CPU pooling passes on f32 with channels contiguous (NHWC), the channels as vectors: the
   per-element loops above cost a dtype-dispatched load an element and tap (0.2-0.9 GB/s on the
   stem's 3x3 / 2 max pool).  Same results bit for bit: the max keeps the scalar loop's test (v > m
   or v is NaN), the first such element's index; the average sums in the same order and divides. */
#if GPUML__HAVE_AVX2_PATH
GPUML__AVX2_TARGET GPUML__FN void gpuml__pool_max_avx2(float *m, int *at, const float *v, int id, int64_t n)
{
    const __m256i vid = _mm256_set1_epi32(id);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(v + i), a = _mm256_loadu_ps(m + i);
        const __m256 t = _mm256_or_ps(_mm256_cmp_ps(x, a, _CMP_GT_OQ), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        _mm256_storeu_ps(m + i, _mm256_blendv_ps(a, x, t));
        if (at) {
            const __m256i k = _mm256_loadu_si256((const __m256i *)(const void *)(at + i));
            _mm256_storeu_si256((__m256i *)(void *)(at + i), _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(k), _mm256_castsi256_ps(vid), t)));
        }
    }
    for (; i < n; i++)
        if (v[i] > m[i] || v[i] != v[i]) { m[i] = v[i]; if (at) at[i] = id; }
}
/* backward: a[i] += (at[i] == id ? g[i] : 0) (max), or g[i] * r (average, at NULL); first: a[i] = 0 + that
   (the sum's first term without a zeroing pass) */
GPUML__AVX2_TARGET GPUML__FN void gpuml__pool_bacc_avx2(float *a, const float *g, const int *at, int id, float r, int64_t n, int first)
{
    const __m256i vid = _mm256_set1_epi32(id);
    const __m256 vr = _mm256_set1_ps(r);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        __m256 t;
        if (at) t = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(at + i)), vid)));
        else t = _mm256_mul_ps(x, vr);
        _mm256_storeu_ps(a + i, _mm256_add_ps(first ? _mm256_setzero_ps() : _mm256_loadu_ps(a + i), t));
    }
    for (; i < n; i++) {
        const float v = at ? (at[i] == id ? g[i] : 0.0f) : g[i] * r;
        a[i] = (first ? 0.0f : a[i]) + v;
    }
}
#endif
GPUML__FN void gpuml__pool_max_run(float *m, int *at, const float *v, int id, int64_t n)
{
    int64_t i;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 1) { gpuml__pool_max_avx2(m, at, v, id, n); return; }
#endif
    for (i = 0; i < n; i++)
        if (v[i] > m[i] || v[i] != v[i]) { m[i] = v[i]; if (at) at[i] = id; }
}
GPUML__FN void gpuml__pool_bacc_run(float *a, const float *g, const int *at, int id, float r, int64_t n, int first)
{
    int64_t i;
#if GPUML__HAVE_AVX2_PATH
    if (gpuml__cpu_simd() >= 1) { gpuml__pool_bacc_avx2(a, g, at, id, r, n, first); return; }
#endif
    for (i = 0; i < n; i++) {
        const float v = at ? (at[i] == id ? g[i] : 0.0f) : g[i] * r;
        a[i] = (first ? 0.0f : a[i]) + v;
    }
}
static int gpuml__pool_cpu_scalar;   /* tests: 1 keeps the CPU pooling on the per-element loops */
static int gpuml__pool_cpu_rows_nchw;   /* tests: 1 keeps the NCHW forward on the transposed channel rows (not in planes) */
/* the channel-vector loops apply (16-bit runs through the vector conversions, a tile of channels at a
   time; layouts whose channels are not contiguous through converted rows) */
GPUML__FN int gpuml__pool_cpu_vec(const gpuml__cv *cv)
{
    /* (converted rows: a thread's buffers within 4M floats -- global pooling of a large NCHW image
       keeps the element loops, which read each plane in order) */
    return !gpuml__pool_cpu_scalar && cv->h * cv->w <= INT32_MAX &&
           ((cv->xs[3] == 1 && cv->ys[3] == 1) || (2 * cv->r + 1) * GPUML__MAX(cv->w, cv->q) * cv->c <= ((int64_t)4 << 20));
}
/* floats a thread for the converted rows: forward R rows of x, a row of y, a plane row; backward
   R + 1 rows of dy, a row of dx, a plane row */
GPUML__FN int64_t gpuml__pool_cpu_per(const gpuml__cv *cv, int bwd)
{
    const int64_t tw = GPUML__MAX(cv->w, cv->q) + 16;
    return bwd ? (cv->r + 1) * cv->q * cv->c + cv->w * cv->c + tw : cv->r * cv->w * cv->c + cv->q * cv->c + tw;
}
/* forward rows (n, p) [b, e), as gpuml__pool_rows (j->arg: the max's indices instead of y) */
GPUML__FN void gpuml__pool_rows_vec(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
    const char *xb = (const char *)gpuml_tensor_data(cv->x);
    char *yb = (char *)gpuml_tensor_data(cv->y);
    /* x / y read and written in place where their channels are contiguous, else through rows
       converted to f32 [W][C] (rb: x's rows hs .. he - 1, ob: y's row) */
    const int xd = cv->xs[3] == 1, yd = cv->ys[3] == 1 || j->arg;
    float *rb = xd && yd ? NULL : j->col + tid * j->ldt, *ob = rb ? rb + cv->r * cv->w * cv->c : NULL, *tw = ob ? ob + cv->q * cv->c : NULL;
    float buf[GPUML__TILE], tmp[GPUML__TILE];
    int64_t np, q, h, w, c0, c;
    for (np = b; np < e; np++) {
        const int64_t n = np / cv->p, p = np % cv->p;
        const int64_t h0 = p * cv->sh - cv->pt, hs = GPUML__MAX(h0, (int64_t)0), he = GPUML__MIN(h0 + cv->r, cv->h);
        if (!xd)
            for (h = hs; h < he; h++) gpuml__pool_row_ld(cv, cv->x, cv->xs, cv->w, n, h, rb + (h - hs) * cv->w * cv->c, tw);
        for (q = 0; q < cv->q; q++) {
            const int64_t w0 = q * cv->sw - cv->pl, ws = GPUML__MAX(w0, (int64_t)0), we = GPUML__MIN(w0 + cv->s, cv->w);
            for (c0 = 0; c0 < cv->c; c0 += GPUML__TILE) {
                const int64_t cn = GPUML__MIN((int64_t)GPUML__TILE, cv->c - c0);
                int *at = j->arg ? j->arg + ((np * cv->q) + q) * cv->c + c0 : NULL;
                char *yo = yb + (n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] + c0) * es;
                float *m = j->arg || (yd && cv->dt != GPUML_F32) ? buf : yd ? (float *)(void *)yo : ob + q * cv->c + c0;
                for (c = 0; c < cn; c++) m[c] = j->pool_max ? -INFINITY : 0.0f;
                if (at) for (c = 0; c < cn; c++) at[c] = (int)(hs * cv->w + ws);
                for (h = hs; h < he; h++)
                    for (w = ws; w < we; w++) {
                        const char *xp = xb + (n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2] + c0) * es;
                        const float *v = !xd ? rb + ((h - hs) * cv->w + w) * cv->c + c0
                                         : cv->dt == GPUML_F32 ? (const float *)(const void *)xp : gpuml__cpu_ld(cv->dt, xp, es, cn, tmp);
                        if (j->pool_max) gpuml__pool_max_run(m, at, v, (int)(h * cv->w + w), cn);
                        else gpuml__vacc(m, v, cn);
                    }
                if (!j->pool_max) {
                    const float cnt = gpuml__pool_count(cv, h0, w0, j->count_pad);
                    for (c = 0; c < cn; c++) m[c] = m[c] / cnt;
                }
                if (!j->arg && m == buf) gpuml__cpu_st(cv->dt, yo, es, cn, m);
            }
        }
        if (!yd) gpuml__pool_row_st(cv, cv->y, cv->ys, cv->q, n, p, ob, tw);
    }
}
/* backward rows (n, h) [b, e) of dx, as gpuml__pool_bwd_rows */
GPUML__FN void gpuml__pool_bwd_rows_vec(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const int64_t es = (int64_t)gpuml__dtype_sizes[cv->dt];
    const char *yb = (const char *)gpuml_tensor_data(cv->y);
    char *xb = (char *)gpuml_tensor_data(cv->x);
    /* dx / dy in place where their channels are contiguous, else through rows converted to f32 [W][C]
       (rb: dy's rows p0 .. p1, ob: dx's row) */
    const int xd = cv->xs[3] == 1, yd = cv->ys[3] == 1;
    float *rb = xd && yd ? NULL : j->col + tid * j->ldt, *ob = rb ? rb + (cv->r + 1) * cv->q * cv->c : NULL, *tw = ob ? ob + cv->w * cv->c : NULL;
    float buf[GPUML__TILE], tmp[GPUML__TILE];
    int64_t nh, w, p, q, c0;
    for (nh = b; nh < e; nh++) {
        const int64_t n = nh / cv->h, h = nh % cv->h, ah = h + cv->pt - cv->r + 1;
        const int64_t p0 = ah > 0 ? (ah + cv->sh - 1) / cv->sh : 0, p1 = GPUML__MIN((h + cv->pt) / cv->sh, cv->p - 1);
        if (!yd)
            for (p = p0; p <= p1; p++) gpuml__pool_row_ld(cv, cv->y, cv->ys, cv->q, n, p, rb + (p - p0) * cv->q * cv->c, tw);
        for (w = 0; w < cv->w; w++) {
            const int64_t aw = w + cv->pl - cv->s + 1;
            const int64_t q0 = aw > 0 ? (aw + cv->sw - 1) / cv->sw : 0, q1 = GPUML__MIN((w + cv->pl) / cv->sw, cv->q - 1);
            for (c0 = 0; c0 < cv->c; c0 += GPUML__TILE) {
                const int64_t cn = GPUML__MIN((int64_t)GPUML__TILE, cv->c - c0);
                char *xo = xb + (n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2] + c0) * es;
                float *a = !xd ? ob + w * cv->c + c0 : cv->dt == GPUML_F32 ? (float *)(void *)xo : buf;
                if (p0 > p1 || q0 > q1) memset(a, 0, sizeof(float) * (size_t)cn);   /* no window covers it (else the first term writes a) */
                for (p = p0; p <= p1; p++)
                    for (q = q0; q <= q1; q++) {
                        const char *gp = yb + (n * cv->ys[0] + p * cv->ys[1] + q * cv->ys[2] + c0) * es;
                        const float *g = !yd ? rb + ((p - p0) * cv->q + q) * cv->c + c0
                                         : cv->dt == GPUML_F32 ? (const float *)(const void *)gp : gpuml__cpu_ld(cv->dt, gp, es, cn, tmp);
                        if (j->pool_max)
                            gpuml__pool_bacc_run(a, g, j->arg + ((n * cv->p + p) * cv->q + q) * cv->c + c0, (int)(h * cv->w + w), 0.0f, cn,
                                                 p == p0 && q == q0);
                        else
                            gpuml__pool_bacc_run(a, g, NULL, 0, 1.0f / gpuml__pool_count(cv, p * cv->sh - cv->pt, q * cv->sw - cv->pl, j->count_pad), cn,
                                                 p == p0 && q == q0);
                    }
                if (a == buf) gpuml__cpu_st(cv->dt, xo, es, cn, a);
            }
        }
        if (!xd) gpuml__pool_row_st(cv, cv->x, cv->xs, cv->w, n, h, ob, tw);
    }
}

#ifndef GPUML_NO_CUDA
/* 1 when the pooling kernels' 16-byte channel-vector forms (gpuml_pool_v, gpuml_pool_arg_v,
   gpuml_pool_bwd_v) can read and write these 4-D tensors (NHWC-ordered dims {n, h, w, c} with
   strides s[i]): unit channel strides, C and the other strides multiples of the vector, 16-byte
   aligned.  GPUML_POOL_VEC=off or gpuml__pool_vec_force < 0: never; gpuml__pool_vec_force > 0
   (tests): wherever they can run, past the callers' size rules */
static int gpuml__pool_vec_force;
GPUML__FN int gpuml__pool_vec(const gpuml__cv *cv, const gpuml_tensor *const *t, const int64_t *const *st, int nt)
{
    const char *env = gpuml__getenv("GPUML_POOL_VEC");
    int64_t v = 16 / (int64_t)gpuml__dtype_sizes[cv->dt];
    int i, j;
    if (gpuml__pool_vec_force < 0 || (env && strcmp(env, "off") == 0) || cv->layout != GPUML_LAYOUT_NHWC || cv->c % v) return 0;
    for (i = 0; i < nt; i++) {
        if (!t[i]) continue;
        if (st[i][3] != 1 || !gpuml__aligned16(gpuml__dptr(t[i]))) return 0;
        for (j = 0; j < 3; j++) if (st[i][j] % v) return 0;
    }
    return 1;
}
#endif

#ifndef GPUML_NO_CUDA
/* 1 when the pooling kernels' NCHW run forms (gpuml_pool_r, gpuml_pool_arg_r, gpuml_pool_bwd_r: 4
   consecutive elements of a row a thread) can write tensor t (NHWC-ordered dims {n, h, w, c},
   strides st; t NULL: the dense index array) whose rows are len long: NCHW, unit w strides, len
   and the other strides multiples of 4, aligned to 4 elements.  GPUML_POOL_RUN=off or
   gpuml__pool_run_force < 0 (tests): never */
static int gpuml__pool_run_force;
static long gpuml__pool_run_calls;   /* launches of the run forms (tests: the form ran where it should) */
GPUML__FN int gpuml__pool_run(const gpuml__cv *cv, const gpuml_tensor *t, const int64_t *st, int64_t len)
{
    const char *env = gpuml__getenv("GPUML_POOL_RUN");
    if (gpuml__pool_run_force < 0 || (env && strcmp(env, "off") == 0) || cv->layout != GPUML_LAYOUT_NCHW || len % 4) return 0;
    if (!t) return 1;
    return st[2] == 1 && st[0] % 4 == 0 && st[1] % 4 == 0 && st[3] % 4 == 0 &&
           gpuml__dptr(t) % (gpuml__CUdeviceptr)(4 * (int64_t)gpuml__dtype_sizes[cv->dt]) == 0;
}
#endif

/* the checks and the problem of gpuml_pool2d and its backward: x (or dx) input-shaped, y (or dy)
   output-shaped, both of x's dtype; *d completed (global window, default strides) */
GPUML__FN gpuml_status gpuml__pool_setup(gpuml_ctx *ctx, const char *op, gpuml_pool2d_desc *d, const gpuml_tensor *x,
                                         const gpuml_tensor *y, const char *xn, const char *yn, gpuml__cv *cv)
{
    int64_t xd[4], yd[4];
    char s1[200], s2[200];
    int i;
    if ((unsigned)d->layout > GPUML_LAYOUT_NCHW) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: unknown layout %d", op, (int)d->layout);
    if ((unsigned)d->op > GPUML_POOL_AVG) return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: unknown pooling op %d", op, (int)d->op);
    if (x->ndim != 4 || y->ndim != 4)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s %s and %s %s must be 4-D (%s)", op, xn, gpuml__shape_str(x, s1, sizeof s1),
                           yn, gpuml__shape_str(y, s2, sizeof s2), d->layout == GPUML_LAYOUT_NCHW ? "NCHW" : "NHWC");
    GPUML__TRY(gpuml__need_float(ctx, x, op, xn));
    GPUML__TRY(gpuml__need_dtype(ctx, y, x->dtype, op, yn));
    memset(cv, 0, sizeof *cv);
    cv->layout = (int)d->layout;
    gpuml__cv_dims(x, cv->layout, xd, cv->xs);
    gpuml__cv_dims(y, cv->layout, yd, cv->ys);
    cv->n = xd[0]; cv->h = xd[1]; cv->w = xd[2]; cv->c = cv->k = xd[3];
    if (d->global) {
        if (d->window[0] || d->window[1] || d->stride[0] || d->stride[1] || d->pad[0] || d->pad[1] || d->pad[2] || d->pad[3])
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: global pooling takes no window, stride or padding", op);
        if (cv->h > INT32_MAX || cv->w > INT32_MAX || cv->h == 0 || cv->w == 0)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: global pooling of an empty image %s", op, gpuml__shape_str(x, s1, sizeof s1));
        d->window[0] = (int)cv->h; d->window[1] = (int)cv->w;
    }
    if (d->window[0] <= 0 || d->window[1] <= 0 || d->stride[0] < 0 || d->stride[1] < 0)
        return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: window {%d,%d} must be positive and stride {%d,%d} not negative", op,
                           d->window[0], d->window[1], d->stride[0], d->stride[1]);
    for (i = 0; i < 4; i++)
        if (d->pad[i] < 0 || d->pad[i] >= d->window[i / 2])
            return gpuml__fail(ctx, GPUML_ERROR_INVALID_ARGUMENT, "%s: padding {%d,%d,%d,%d} must be at least 0 and below the window {%d,%d}",
                               op, d->pad[0], d->pad[1], d->pad[2], d->pad[3], d->window[0], d->window[1]);
    cv->r = d->window[0]; cv->s = d->window[1];
    cv->sh = d->stride[0] ? d->stride[0] : d->window[0]; cv->sw = d->stride[1] ? d->stride[1] : d->window[1];
    cv->pt = d->pad[0]; cv->pb = d->pad[1]; cv->pl = d->pad[2]; cv->pr = d->pad[3];
    cv->dh = cv->dw = 1;
    cv->p = gpuml_conv2d_out_dim(cv->h, cv->r, cv->sh, cv->pt, cv->pb, 1);
    cv->q = gpuml_conv2d_out_dim(cv->w, cv->s, cv->sw, cv->pl, cv->pr, 1);
    cv->dt = x->dtype;
    cv->cg = cv->kg = 1; cv->groups = 1;
    if (cv->p <= 0 || cv->q <= 0)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: the output would be empty: input %lldx%lld, window %dx%d, padding {%d,%d,%d,%d}",
                           op, (long long)cv->h, (long long)cv->w, d->window[0], d->window[1], cv->pt, cv->pb, cv->pl, cv->pr);
    if (yd[0] != cv->n || yd[1] != cv->p || yd[2] != cv->q || yd[3] != cv->c)
        return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: %s is %s but %s %s gives [%lld,%lld,%lld,%lld] (%s)", op, yn, gpuml__shape_str(y, s1, sizeof s1),
                           xn, gpuml__shape_str(x, s2, sizeof s2), (long long)cv->n, (long long)(d->layout ? cv->c : cv->p),
                           (long long)(d->layout ? cv->p : cv->q), (long long)(d->layout ? cv->q : cv->c), d->layout == GPUML_LAYOUT_NCHW ? "NCHW" : "NHWC");
    return GPUML_SUCCESS;
}

GPUML__DEF gpuml_status gpuml_pool2d(gpuml_ctx *ctx, gpuml_tensor *y, const gpuml_tensor *x, const gpuml_pool2d_desc *desc)
{
    static const char op[] = "gpuml_pool2d";
    gpuml_pool2d_desc d;
    gpuml__cv cv;
    GPUML__TRY(gpuml__enter(ctx));
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    GPUML__TRY(gpuml__check_tensor(ctx, y, op, "y"));
    GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x"));
    GPUML__TRY(gpuml__check_output(ctx, y, op));
    GPUML__TRY(gpuml__pool_setup(ctx, op, &d, x, y, "x", "y", &cv));
    if (gpuml__overlap(y, x)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: y overlaps x", op);
    cv.x = x; cv.y = y;
    if (gpuml__numel(y) == 0) return GPUML_SUCCESS;
#define GPUML__POOL_PROF(call) GPUML__PROF(ctx, call, "pool2d", GPUML_UNIT_FP32, \
                                           (double)gpuml__numel(y) * (double)d.window[0] * (double)d.window[1], \
                                           gpuml__tb(x) + gpuml__tb(y), x, NULL, y)
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__cv_cpu j;
        memset(&j, 0, sizeof j);
        int vec = gpuml__pool_cpu_vec(&cv);
        gpuml_status st;
        j.cv = &cv; j.pool_max = d.op == GPUML_POOL_MAX; j.count_pad = d.count_include_pad != 0;
        if (vec && cv.xs[3] != 1 && cv.sw <= 2 && !gpuml__pool_cpu_rows_nchw) {   /* NCHW: in planes (as the depthwise conv; strides
                                                                                    of 3+, global pooling among them, split rows by scalar loops) */
            int ran = 0;
            st = GPUML__POOL_PROF((ran = gpuml__dwp_run_p(ctx, &cv, 0, j.pool_max ? 1 : 2, j.count_pad, &st, op), st));
            if (ran) return st;
        }
        if (vec && (cv.xs[3] != 1 || cv.ys[3] != 1)) {   /* per-thread row buffers */
            j.ldt = gpuml__pool_cpu_per(&cv, 0);
            j.col = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(j.ldt * gpuml__pool_size(ctx->pool)));
            if (!j.col) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op);
        }
        st = GPUML__POOL_PROF((gpuml__parallel_for(ctx->pool, cv.n * cv.p, 1, vec ? gpuml__pool_rows_vec : gpuml__pool_rows, &j), GPUML_SUCCESS));
        gpuml__aligned_free(j.col);
        return st;
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__conv_params kp;
        cv.wt = x;   /* no weights: keep the offset checks on real tensors */
        gpuml__cv_kparams(&cv, &kp);
        kp.wt = 0;
        kp.dh = cv.pb; kp.dw = cv.pr;   /* the pool kernel reads the bottom/right pads here */
        kp.count_pad = d.count_include_pad != 0;
        const gpuml_tensor *tv[2];
        const int64_t *sv[2];
        int vec, run;
        tv[0] = x; tv[1] = y; sv[0] = cv.xs; sv[1] = cv.ys;
        /* the vector form where its items fill the GPU (H100, batch 32: the stem's 3x3 / 2 max pool,
           f16 NHWC, 98.7 -> 29.4 us, 0.8M items; global average of 2048 x 7 x 7, 8192 items, 7.5 -> 10.1) */
        vec = gpuml__pool_vec(&cv, tv, sv, 2) && (gpuml__pool_vec_force > 0 || cv.n * cv.p * cv.q * cv.c / (16 / (int64_t)gpuml__dtype_sizes[cv.dt]) >=
                                                  (int64_t)GPUML__MAX(ctx->sm_count, 1) * 2048);
        /* NCHW: 4 outputs of a row a thread where y's rows allow (H100, batch 32, the stem's 3x3 / 2
           max pool, f32: 78.8 -> 77.0 us; the backward's two passes 367 -> 194; bench/NOTES_conv.md
           "Pooling: no divisions in the loop, NCHW run forms") */
        run = !vec && gpuml__pool_run(&cv, y, cv.ys, cv.q);
        gpuml__pool_run_calls += run;
        kp.total = cv.n * cv.p * cv.q * (vec ? cv.c / (16 / (int64_t)gpuml__dtype_sizes[cv.dt]) : cv.c) / (run ? 4 : 1);
        return GPUML__POOL_PROF(gpuml__cv_launch(ctx, &cv, vec ? "gpuml_pool_v" : run ? "gpuml_pool_r" : "gpuml_pool", &kp, 0,
                                                 d.op == GPUML_POOL_MAX, 0, op));
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
#undef GPUML__POOL_PROF
}

/* pooling backward on the CPU, the GPU kernels' two passes (gpuml_pool_arg, gpuml_pool_bwd in
   kernels/conv.cu) with the same orders: for max, first gpuml__pool_rows with j->arg (the plane
   index of the element each window's forward returned), then this pass over rows (n, h) of dx
   (cv->x, written): the windows that cover each element */
GPUML__FN void gpuml__pool_bwd_rows(void *arg, int64_t b, int64_t e, int tid)
{
    const gpuml__cv_cpu *j = (const gpuml__cv_cpu *)arg;
    const gpuml__cv *cv = j->cv;
    const float *yf = cv->dt == GPUML_F32 ? (const float *)gpuml_tensor_data(cv->y) : NULL;
    float *xf = cv->dt == GPUML_F32 ? (float *)gpuml_tensor_data(cv->x) : NULL;
    int64_t nh, w, c, p, q;
    (void)tid;
    for (nh = b; nh < e; nh++) {
        int64_t n = nh / cv->h, h = nh % cv->h, ah = h + cv->pt - cv->r + 1;
        int64_t p0 = ah > 0 ? (ah + cv->sh - 1) / cv->sh : 0, p1 = GPUML__MIN((h + cv->pt) / cv->sh, cv->p - 1);
        for (w = 0; w < cv->w; w++) {
            int64_t aw = w + cv->pl - cv->s + 1;
            int64_t q0 = aw > 0 ? (aw + cv->sw - 1) / cv->sw : 0, q1 = GPUML__MIN((w + cv->pl) / cv->sw, cv->q - 1);
            for (c = 0; c < cv->c; c++) {
                int64_t yo = n * cv->ys[0] + c * cv->ys[3];
                float acc = 0.0f;
                for (p = p0; p <= p1; p++)
                    for (q = q0; q <= q1; q++) {
                        float g = yf ? yf[yo + p * cv->ys[1] + q * cv->ys[2]] : gpuml__cv_ld(cv->dt, cv->y, yo + p * cv->ys[1] + q * cv->ys[2]);
                        if (j->pool_max) {
                            if (j->arg[((n * cv->p + p) * cv->q + q) * cv->c + c] == (int)(h * cv->w + w)) acc += g;
                        } else {
                            float cnt = gpuml__pool_count(cv, p * cv->sh - cv->pt, q * cv->sw - cv->pl, j->count_pad);
                            acc += g * (1.0f / cnt);   /* as the GPU kernel (a correctly rounded reciprocal) */
                        }
                    }
                if (xf) xf[n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2] + c * cv->xs[3]] = acc;
                else gpuml__cv_st(cv->dt, cv->x, n * cv->xs[0] + h * cv->xs[1] + w * cv->xs[2] + c * cv->xs[3], acc);
            }
        }
    }
}

GPUML__DEF gpuml_status gpuml_pool2d_backward(gpuml_ctx *ctx, gpuml_tensor *dx, const gpuml_tensor *dy, const gpuml_tensor *x,
                                              const gpuml_pool2d_desc *desc)
{
    static const char op[] = "gpuml_pool2d_backward";
    gpuml_pool2d_desc d;
    gpuml__cv cv;
    int64_t xs[4], xd[4];
    char s1[200], s2[200];
    int i, is_max;
    GPUML__TRY(gpuml__enter(ctx));
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    is_max = d.op == GPUML_POOL_MAX;
    GPUML__TRY(gpuml__check_tensor(ctx, dx, op, "dx"));
    GPUML__TRY(gpuml__check_tensor(ctx, dy, op, "dy"));
    if (is_max || x) GPUML__TRY(gpuml__check_tensor(ctx, x, op, "x (max pooling needs the forward's input)"));
    GPUML__TRY(gpuml__check_output(ctx, dx, op));
    GPUML__TRY(gpuml__pool_setup(ctx, op, &d, dx, dy, "dx", "dy", &cv));
    if (x) {
        GPUML__TRY(gpuml__need_dtype(ctx, x, dx->dtype, op, "x"));
        for (i = 0; i < 4 && x->ndim == 4; i++) if (x->shape[i] != dx->shape[i]) break;
        if (i < 4)
            return gpuml__fail(ctx, GPUML_ERROR_SHAPE, "%s: x is %s but dx is %s (they must match)", op, gpuml__shape_str(x, s1, sizeof s1),
                               gpuml__shape_str(dx, s2, sizeof s2));
        if (gpuml__overlap(dx, x)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dx overlaps x", op);
        gpuml__cv_dims(x, cv.layout, xd, xs);
    }
    if (gpuml__overlap(dx, dy)) return gpuml__fail(ctx, GPUML_ERROR_ALIAS, "%s: dx overlaps dy", op);
    if ((is_max && cv.h * cv.w > INT32_MAX) || cv.h + cv.r > INT32_MAX || cv.w + cv.s > INT32_MAX)
        return gpuml__fail(ctx, GPUML_ERROR_NOT_SUPPORTED, "%s: images of more than 2^31 - 1 pixels (max) or rows / columns "
                           "(plus the window) are not supported", op);
    cv.x = dx; cv.y = dy;
    if (gpuml__numel(dx) == 0) return GPUML_SUCCESS;
#define GPUML__POOLB_PROF(call) GPUML__PROF(ctx, call, "pool2d_backward", GPUML_UNIT_FP32, -1.0, \
                                            gpuml__tb(dx) + gpuml__tb(dy) + gpuml__tb(x), dy, x, dx)
    if (ctx->backend == GPUML_BACKEND_CPU) {
        gpuml__cv_cpu j;
        gpuml__cv cx = cv;
        memset(&j, 0, sizeof j);
        int vec = gpuml__pool_cpu_vec(&cv);
        j.pool_max = is_max; j.count_pad = d.count_include_pad != 0;
        if (vec && (cv.xs[3] != 1 || cv.ys[3] != 1 || (is_max && xs[3] != 1))) {   /* per-thread row buffers, for either pass */
            j.ldt = GPUML__MAX(gpuml__pool_cpu_per(&cv, 0), gpuml__pool_cpu_per(&cv, 1));
            j.col = (float *)gpuml__aligned_alloc(sizeof(float) * (size_t)(j.ldt * gpuml__pool_size(ctx->pool)));
            if (!j.col) return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory", op);
        }
        if (is_max && vec && cv.xs[3] != 1 && xs[3] != 1 && !gpuml__pool_cpu_rows_nchw) {   /* NCHW: in planes */
            gpuml_status st = GPUML_SUCCESS;
            int ran = 0;
            cx.x = x; memcpy(cx.xs, xs, sizeof xs);
            st = GPUML__POOLB_PROF((ran = gpuml__dwp_pool_maxb(ctx, &cx, dx, cv.xs, &st, op), st));
            if (ran) { gpuml__aligned_free(j.col); return st; }
        }
        if (is_max) {
            j.arg = (int *)gpuml__malloc((size_t)gpuml__numel(dy) * sizeof(int));
            if (!j.arg) {
                gpuml__aligned_free(j.col);
                return gpuml__fail(ctx, GPUML_ERROR_OUT_OF_MEMORY, "%s: out of host memory (%lld indices)", op, (long long)gpuml__numel(dy));
            }
            cx.x = x; memcpy(cx.xs, xs, sizeof xs);
            j.cv = &cx;
            gpuml__parallel_for(ctx->pool, cv.n * cv.p, 1, vec ? gpuml__pool_rows_vec : gpuml__pool_rows, &j);
        }
        j.cv = &cv;
        GPUML__POOLB_PROF((gpuml__parallel_for(ctx->pool, cv.n * cv.h, 1, vec ? gpuml__pool_bwd_rows_vec : gpuml__pool_bwd_rows, &j),
                           GPUML_SUCCESS));
        gpuml__free(j.arg);
        gpuml__aligned_free(j.col);
        return GPUML_SUCCESS;
    }
#ifndef GPUML_NO_CUDA
    {
        gpuml__conv_params kp;
        gpuml_tensor *arg = NULL;
        int64_t ny = gpuml__numel(dy);
        gpuml_status st = GPUML_SUCCESS;
        const gpuml_tensor *tv[3];
        const int64_t *sv[3];
        int64_t pv;
        tv[0] = dx; tv[1] = dy; tv[2] = x; sv[0] = cv.xs; sv[1] = cv.ys; sv[2] = xs;
        pv = gpuml__pool_vec(&cv, tv, sv, x ? 3 : 2) ? 16 / (int64_t)gpuml__dtype_sizes[cv.dt] : 1;   /* channels a thread */
        if (is_max) {
            gpuml__cv cx = cv;
            arg = gpuml__tensor_new(ctx, GPUML_I32, 1, &ny, op);
            if (!arg) return ctx->status;
            cx.x = x; memcpy(cx.xs, xs, sizeof xs); cx.wt = x; cx.y = arg;   /* offsets checked on real tensors */
            gpuml__cv_kparams(&cx, &kp);
            kp.wt = 0; kp.y = 0; kp.col = gpuml__dptr(arg);
            {   /* as in the forward: the vector form where its items fill the GPU (the same layout either way) */
                int av = pv > 1 && (gpuml__pool_vec_force > 0 || ny / pv >= (int64_t)GPUML__MAX(ctx->sm_count, 1) * 2048);
                int ar = !av && gpuml__pool_run(&cv, NULL, NULL, cv.q);   /* NCHW: 4 outputs a thread */
                gpuml__pool_run_calls += ar;
                kp.total = av ? ny / pv : ar ? ny / 4 : ny;
                st = gpuml__cv_launch(ctx, &cx, av ? "gpuml_pool_arg_v" : ar ? "gpuml_pool_arg_r" : "gpuml_pool_arg", &kp, 0, 1, ny, op);
            }
        }
        if (st == GPUML_SUCCESS) {
            cv.wt = dx;
            gpuml__cv_kparams(&cv, &kp);
            kp.wt = 0;
            kp.col = arg ? gpuml__dptr(arg) : 0;
            kp.dh = cv.pb; kp.dw = cv.pr;   /* the bottom/right pads, as in gpuml_pool */
            kp.count_pad = d.count_include_pad != 0;
            int br = pv == 1 && gpuml__pool_run(&cv, dx, cv.xs, cv.w);   /* NCHW: 4 elements of a row a thread */
            gpuml__pool_run_calls += br;
            kp.total = gpuml__numel(dx) / (br ? 4 : pv);
            st = GPUML__POOLB_PROF(gpuml__cv_launch(ctx, &cv, pv > 1 ? "gpuml_pool_bwd_v" : br ? "gpuml_pool_bwd_r" : "gpuml_pool_bwd", &kp,
                                                    0, is_max, ny, op));
        }
        gpuml_tensor_free(arg);   /* stream-ordered */
        return st;
    }
#else
    return GPUML_ERROR_BACKEND_UNAVAILABLE;
#endif
#undef GPUML__POOLB_PROF
}

#define GPUML__CONV_FAMILIES &gpuml__fam_conv, &gpuml__fam_conv_1x1w,
#define GPUML__CONV_VARIANTS \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DC1W_WG=2 -DC1W_BN=128 -DC1W_ST=3 -DC1W_MINB=2 -DC1W_TMA=1 -DC1W_EPS=1 -DC1W_SPLIT=1" }, \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DC1W_WG=2 -DC1W_BN=256 -DC1W_ST=3 -DC1W_MINB=1 -DC1W_TMA=0 -DC1W_EPS=1" }, \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=0 -DC1W_WG=1 -DC1W_BN=64 -DC1W_ST=2 -DC1W_MINB=6 -DC1W_TMA=1 -DC1W_EPS=1" }, \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DC1W_WG=2 -DC1W_BN=128 -DC1W_ST=3 -DC1W_MINB=2 -DC1W_TMA=1 -DC1W_EPS=1 -DC1W_SPLIT=1 -DC1W_UP=1" }, \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=3 -DCONV_BIAS=1 -DCONV_RES=1 -DC1W_WG=1 -DC1W_BN=64 -DC1W_ST=4 -DC1W_MINB=3 -DC1W_TMA=1 -DC1W_EPS=0 -DC1W_PIPE=1 -DC1W_SPLIT=1" }, \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=0 -DC1W_WG=1 -DC1W_BN=64 -DC1W_ST=4 -DC1W_MINB=3 -DC1W_TMA=1 -DC1W_EPS=0 -DC1W_IMG=1" }, \
    { "conv_1x1w", "-DGPUML_C1W=1 -DCONV_EPI=0 -DCONV_BIAS=1 -DCONV_RES=1 -DC1W_WG=1 -DC1W_BN=256 -DC1W_ST=2 -DC1W_MINB=2 -DC1W_TMA=1 -DC1W_EPS=0 -DC1W_IMG=1" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=0 -DCONV_I32=1 -DPOOL_MAX=0" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=0 -DCONV_EPI_SRC=1" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=3 -DCONV_BIAS=0 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=1 -DPOOL_MAX=0" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_1X1=1" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_1X1=1" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_1X1=2 -DC1T_ST=4 -DC1T_TN=256" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=3 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_1X1=2 -DC1T_ST=3 -DC1T_TN=128" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_BWF1X1=1 -DBWF_ST=4 -DBWF_NHWC=0 -DBWF_3X=0" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_BWF1X1=1 -DBWF_ST=3 -DBWF_NHWC=1 -DBWF_3X=1" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_BWF1X1=1 -DBWF_ST=4 -DBWF_NHWC=0 -DBWF_3X=1" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=0 -DCONV_BIAS=0 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DCONV_BWF1X1=1 -DBWF_ST=4 -DBWF_NHWC=1 -DBWF_3X=0" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW_VEC=4 -DDW_QT=4 -DDW_S=3 -DDW_SW=1 -DDW_DW=1" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=3 -DCONV_BIAS=0 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW_VEC=8 -DDW_QT=2 -DDW_S=3 -DDW_SW=2 -DDW_DW=1" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=0 -DCONV_BIAS=1 -DCONV_RES=0 -DCONV_I32=0 -DPOOL_MAX=1 -DDW_VEC=1 -DDW_QT=4 -DDW_S=5 -DDW_SW=1 -DDW_DW=2" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3_VEC=4 -DDW3_QT=2 -DDW3_ST=1 -DDW3_PF=2" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=4 -DDW3_QT=2 -DDW3_ST=1 -DDW3_PF=2" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=3 -DCONV_BIAS=0 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=4 -DDW3_QT=2 -DDW3_ST=2 -DDW3_PF=1" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=4 -DDW3_QT=2 -DDW3_ST=1 -DDW3_PF=2" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=0 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3_VEC=2 -DDW3_QT=2 -DDW3_ST=1 -DDW3_PF=2" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=1 -DDW3_QT=4 -DDW3_ST=2 -DDW3_PF=3" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=1 -DDW3_QT=4 -DDW3_ST=1 -DDW3_PF=2" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=2 -DDW3_QT=2 -DDW3_ST=2 -DDW3_PF=1" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=8 -DDW3_QT=1 -DDW3_ST=2 -DDW3_PF=3 -DDW3_MINB=2" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3_VEC=2 -DDW3_QT=2 -DDW3_ST=1 -DDW3_PF=2 -DDW3_MINB=5" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=3 -DCONV_BIAS=0 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_VEC=4 -DDW3_QT=2 -DDW3_ST=2 -DDW3_PF=3" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_ST=1 -DDW3S_R=4" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_ST=2 -DDW3S_R=8" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=3 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3_ST=1 -DDW3S_R=16" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_ST=2 -DDW3S_R=4 -DDW3S_QT=2" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=0 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3_ST=1 -DDW3S_R=4 -DDW3S_QT=2" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3F_R=8" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=1 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3F_R=8" }, \
    { "conv", "-DCONV_DT=2 -DCONV_EPI=3 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3F_R=8 -DDW3F_B=8" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=0 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3F_R=2 -DDW3F_B=4" }, \
    { "conv", "-DCONV_DT=1 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=0 -DPOOL_MAX=1 -DDW3_ST=2 -DDW3F_R=2 -DDW3F_B=16" }, \
    { "conv", "-DCONV_DT=0 -DCONV_EPI=2 -DCONV_BIAS=1 -DCONV_RES=1 -DCONV_I32=1 -DPOOL_MAX=1 -DDW3_ST=2 -DDW3F_R=4 -DDW3F_B=8" },

/* every kernel family, for the compile checks (tests/test_jit.c) */
static const gpuml__family *const gpuml__all_families[] = { &gpuml__fam_copy, &gpuml__fam_matmul, &gpuml__fam_matmul_sm90, &gpuml__fam_matmul_mma, &gpuml__fam_matmul_small, &gpuml__fam_matmul_small_cl, &gpuml__fam_conv_igemm, &gpuml__fam_conv_sm90, &gpuml__fam_conv_stem, GPUML__OPS_FAMILIES GPUML__CONV_FAMILIES 0 };
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
    { "matmul_sm90", "-DGPUML_IN_T=tf32 -DGPUML_IN_TB=tf32 -DGPUML_OUT=f32 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=1 -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=1" },
    { "matmul_sm90", "-DGPUML_IN_T=tf32 -DGPUML_IN_TB=tf32 -DGPUML_OUT=f32 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_B_KMAJOR=0 -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=1 -DGPUML_TF32_NN=1" },
    { "matmul_sm90", "-DGPUML_IN_T=tf32 -DGPUML_IN_TB=tf32 -DGPUML_OUT=f32 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=0 -DGPUML_MM_TMA_STORE=0 -DGPUML_MM_CLUSTER=1 -DGPUML_TF32_NN=1" },
    { "matmul_sm90", "-DGPUML_IN_T=f16 -DGPUML_IN_TB=f16 -DGPUML_OUT=f32 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=0 -DGPUML_MM_TMA_STORE=0 -DGPUML_MM_CLUSTER=1 -DGPUML_MM_SPLITK=1" },
    { "matmul_sm90", "-DGPUML_IN_T=bf16 -DGPUML_IN_TB=bf16 -DGPUML_OUT=f32 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=1 -DGPUML_MM_TMA_STORE=0 -DGPUML_MM_CLUSTER=1 -DGPUML_MM_SPLITK=1" },
    { "matmul_sm90", "-DGPUML_IN_T=tf32 -DGPUML_IN_TB=tf32 -DGPUML_OUT=f32 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=1 -DGPUML_MM_TMA_STORE=0 -DGPUML_MM_CLUSTER=1 -DGPUML_MM_SPLITK=1 -DGPUML_MM_K3D=1" },
    { "matmul_sm90", "-DGPUML_IN_T=e4m3 -DGPUML_IN_TB=e5m2 -DGPUML_OUT=bf16 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_B_KMAJOR=1 -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=1" },
    { "matmul_sm90", "-DGPUML_IN_T=e4m3 -DGPUML_IN_TB=e4m3 -DGPUML_OUT=f16 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_B_KMAJOR=1 -DGPUML_MM_TMA_STORE=1 -DGPUML_MM_CLUSTER=1" },
    { "matmul_mma", "-DGPUML_A_DT=2 -DGPUML_B_DT=2 -DGPUML_C_DT=2 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_B_NMAJOR=1" },
    { "matmul_mma", "-DGPUML_A_DT=1 -DGPUML_B_DT=1 -DGPUML_C_DT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_BETA=1 -DGPUML_B_NMAJOR=0" },
    { "matmul_mma", "-DGPUML_A_DT=1 -DGPUML_B_DT=1 -DGPUML_C_DT=1 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_B_NMAJOR=1" },
    { "matmul_small", "-DGPUML_A_DT=1 -DGPUML_C_DT=1 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_SM_MT=1 -DGPUML_SM_RT=1 -DGPUML_SM_W=8 -DGPUML_SM_U=4" },
    { "matmul_small", "-DGPUML_A_DT=2 -DGPUML_C_DT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_BETA=1 -DGPUML_SM_MT=2 -DGPUML_SM_RT=2 -DGPUML_SM_W=8 -DGPUML_SM_U=2" },
    { "matmul_small", "-DGPUML_A_DT=1 -DGPUML_C_DT=2 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_SM_MT=2 -DGPUML_SM_RT=4 -DGPUML_SM_W=8 -DGPUML_SM_U=1" },
    { "matmul_small", "-DGPUML_A_DT=2 -DGPUML_C_DT=2 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_BETA=1 -DGPUML_SM_MT=1 -DGPUML_SM_RT=4 -DGPUML_SM_W=4 -DGPUML_SM_U=2" },
    { "matmul_small_cl", "-DGPUML_A_DT=1 -DGPUML_C_DT=1 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_BETA=1 -DGPUML_SM_MT=2 -DGPUML_SM_RT=4 -DGPUML_SM_W=4 -DGPUML_SM_U=1 -DGPUML_SM_CL=4" },
    { "matmul_small_cl", "-DGPUML_A_DT=2 -DGPUML_C_DT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_BETA=0 -DGPUML_SM_MT=1 -DGPUML_SM_RT=1 -DGPUML_SM_W=8 -DGPUML_SM_U=4 -DGPUML_SM_CL=2" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=0" },
    { "conv_igemm", "-DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=2 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=2" },
    { "conv_igemm", "-DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=1 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=3" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=2 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=4" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=5" },
    { "conv_igemm", "-DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=5" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=6" },
    { "conv_igemm", "-DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=7" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=2 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=8" },
    { "conv_igemm", "-DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=9" },
    { "conv_igemm", "-DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=10" },
    { "conv_stem", "-DGPUML_STEM_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_STEM_TQ=16" },
    { "conv_stem", "-DGPUML_STEM_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_STEM_TQ=8" },
    { "conv_stem", "-DGPUML_STEM_DT=1 -DGPUML_CONV_YDT=2 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_STEM_TQ=16 -DGPUML_STEM_PF=1" },
    { "conv_stem", "-DGPUML_STEM_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_STEM_TQ=8 -DGPUML_STEM_PF=0" },
    { "conv_stem", "-DGPUML_STEM_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_STEM_TQ=16 -DGPUML_STEM_PF=0 -DGPUML_STEM_TMA=1" },
    { "conv_stem", "-DGPUML_STEM_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_STEM_TQ=8 -DGPUML_STEM_PF=0 -DGPUML_STEM_TMA=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=1 -DGPUML_CONV_TF32=1 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=0" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=1 -DGPUML_CONV_TF32=0 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=2 -DGPUML_CONV_TF32=1 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=0" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=3 -DGPUML_CONV_TF32=1 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=4 -DGPUML_CONV_TF32=0 -DGPUML_CONV_RN=1 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=6 -DGPUML_CONV_TF32=1 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=7 -DGPUML_CONV_TF32=0 -DGPUML_CONV_RN=1 -DGPUML_CONV_YNCHW=0" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=10 -DGPUML_CONV_TF32=1 -DGPUML_CONV_RN=0 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=3 -DGPUML_CONV_TF32=0 -DGPUML_CONV_RN=1 -DGPUML_CONV_YNCHW=0" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CONV_CFG=3 -DGPUML_CONV_TF32=2 -DGPUML_CONV_RN=1 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=7 -DGPUML_CONV_TF32=2 -DGPUML_CONV_RN=1 -DGPUML_CONV_YNCHW=0" },
    { "conv_igemm", "-DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CONV_CFG=4 -DGPUML_CONV_TF32=2 -DGPUML_CONV_RN=1 -DGPUML_CONV_YNCHW=1" },
    { "conv_igemm", "-DGPUML_CONV_PREP=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=0" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=2 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=1 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=3" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=4" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=0 -DGPUML_CW_TMA_A=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=3 -DGPUML_CW_TMA_A=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=0 -DGPUML_CW_TMA_A=1 -DGPUML_CW_TMA_Y=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=2 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=1 -DGPUML_CW_TMA_A=2 -DGPUML_CW_TMA_Y=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=2 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=2 -DGPUML_CW_TMA_Y=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=1 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=3 -DGPUML_CW_TMA_A=1 -DGPUML_CW_TMA_Y=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=4 -DGPUML_CW_TMA_A=1 -DGPUML_CW_TMA_Y=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=3 -DGPUML_CW_TMA_A=2 -DGPUML_CW_TMA_Y=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=2 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=3 -DGPUML_CW_TMA_A=1 -DGPUML_CW_TMA_Y=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=1 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=1 -DGPUML_CW_TMA_A=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=4 -DGPUML_CW_TMA_A=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=0 -DGPUML_CW_TMA_A=0 -DGPUML_CONV_YNCHW=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=1 -DGPUML_CW_TMA_A=2 -DGPUML_CONV_YNCHW=1 -DGPUML_CW_RN=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=3 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=2 -DGPUML_CW_TMA_A=1 -DGPUML_CONV_YNCHW=0 -DGPUML_CW_RN=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=1 -DGPUML_CONV_YDT=1 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=5 -DGPUML_CW_TMA_A=1 -DGPUML_CW_TMA_Y=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=2 -DGPUML_CONV_YDT=2 -DGPUML_EPI=2 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=5 -DGPUML_CW_TMA_A=0" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=1 -DGPUML_CW_CFG=5 -DGPUML_CW_TMA_A=2 -DGPUML_CONV_YNCHW=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_BWF=1 -DGPUML_CONV_DT=1 -DGPUML_BWF_WM=1 -DGPUML_CONV_YDT=1" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_BWF=1 -DGPUML_CONV_DT=2 -DGPUML_BWF_WM=2 -DGPUML_CONV_YDT=0" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_BWF=1 -DGPUML_CONV_DT=2 -DGPUML_BWF_WM=1 -DGPUML_CONV_YDT=2" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=0 -DGPUML_HAS_BIAS=0 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=3 -DGPUML_CW_TMA_A=1 -DGPUML_CONV_YNCHW=0" },
    { "conv_sm90", "-DGPUML_CONV_SM90=1 -DGPUML_CONV_DT=0 -DGPUML_CONV_YDT=0 -DGPUML_EPI=1 -DGPUML_HAS_BIAS=1 -DGPUML_HAS_RESID=0 -DGPUML_CW_CFG=4 -DGPUML_CW_TMA_A=0 -DGPUML_CONV_YNCHW=1 -DGPUML_CW_RN=2" },
#ifdef GPUML__OPS_VARIANTS
    GPUML__OPS_VARIANTS
#endif
    GPUML__CONV_VARIANTS
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
        if (ctx->tail_cnt) ctx->cu.MemFree(ctx->tail_cnt);
        for (m = ctx->modules; m; m = mn) { mn = m->next; ctx->cu.ModuleUnload(m->mod); gpuml__free(m); }
        if (ctx->stream) ctx->cu.StreamDestroy(ctx->stream);
        ctx->cu.PrimaryCtxRelease(ctx->dev);
    }
    for (f = ctx->fns; f; f = fn) { fn = f->next; gpuml__free(f); }
    ctx->fns = NULL;
    ctx->modules = NULL;
    ctx->stage = NULL;
    ctx->stage_event = NULL;
    ctx->tail_cnt = 0;
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
    /* profiler and graphs */
    env = gpuml__getenv("GPUML_PROFILE");
    ctx->prof_print_at_exit = env && strcmp(env, "0") != 0 && strcmp(env, "off") != 0;
    ctx->prof_on = d.profile || ctx->prof_print_at_exit;
    env = d.trace_file ? d.trace_file : gpuml__getenv("GPUML_TRACE");
    if (env) { snprintf(ctx->trace_path, sizeof ctx->trace_path, "%s", env); ctx->prof_on = 1; }
    env = gpuml__getenv("GPUML_GRAPHS");
    ctx->graphs_off = d.graphs_off || (env && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0));
    ctx->prof_t0 = gpuml__now_us();

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
        snprintf(ctx->device_name, sizeof ctx->device_name, "CPU (%d threads%s)", nthreads,   /* the ops' SIMD level */
                 gpuml__cpu_simd() == 2 ? ", AVX-512" : gpuml__cpu_simd() == 1 ? ", AVX2+FMA" : "");
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
    gpuml__prof_close(ctx);
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
