/* gpuml -- Hopper (sm_90a) PTX wrappers shared by the wgmma kernels (matmul_sm90.cu, conv_sm90.cu):
   mbarriers, 2-D TMA loads and stores, bulk-group waits, named barriers, the async-proxy fence, wgmma fence / commit / wait and
   the shared-memory matrix descriptor.  Plain types only (no gpuml typedefs), so the standalone
   harness (bench/gemm_sm90_standalone.cu) can include it before matmul_sm90.cu. */
#ifndef GPUML__SM90_CUH
#define GPUML__SM90_CUH

static __device__ __forceinline__ void gpuml__mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void gpuml__mbar_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void gpuml__mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
static __device__ __forceinline__ void gpuml__mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
/* box at coordinates (c0, c1) of the tensor map (a __grid_constant__ kernel parameter) -> shared
   memory at dst; completes 'bytes' of the barrier's expected transaction count */
static __device__ __forceinline__ void gpuml__tma_load_2d(unsigned dst, const void *map, int c0, int c1, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}
/* box at coordinates (c0, c1, c2) of a rank-3 tensor map -> shared memory at dst (as the 2-D load) */
static __device__ __forceinline__ void gpuml__tma_load_3d(unsigned dst, const void *map, int c0, int c1, int c2, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}
/* 2-D TMA store: shared memory at src -> the box at coordinates (c0, c1) of the tensor map (a
   __grid_constant__ kernel parameter); elements outside the tensor are not written.  Issued into
   the thread's current bulk group (commit with gpuml__bulk_commit). */
static __device__ __forceinline__ void gpuml__tma_store_2d(const void *map, unsigned src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                     (unsigned long long)map),
                 "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}
static __device__ __forceinline__ void gpuml__bulk_commit(void)
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/* all but the newest N of this thread's bulk groups have read their shared memory source */
template <int N> static __device__ __forceinline__ void gpuml__bulk_wait_read(void)
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
/* all of this thread's bulk groups are complete (their writes done) */
static __device__ __forceinline__ void gpuml__bulk_wait_all(void)
{
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
static __device__ __forceinline__ void gpuml__named_bar(int id, int count)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
/* generic-proxy writes to shared memory become visible to the async proxy (wgmma, TMA store) */
static __device__ __forceinline__ void gpuml__proxy_fence(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
static __device__ __forceinline__ void gpuml__wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
static __device__ __forceinline__ void gpuml__wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> static __device__ __forceinline__ void gpuml__wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
/* Shared-memory matrix descriptor, 128-byte swizzle (layout type 1 in bits 62-63), lbo/sbo in bytes.
   K-major operands: sbo = 1024 (8 rows of 128 B), lbo unused (16).
   MN-major B: lbo = 8192 (next 64-column block), sbo = 1024 (next 8 k-rows). */
static __device__ __forceinline__ unsigned long long gpuml__smem_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

/* the f32 accumulators of an m64nN wgmma (N = 64, 128, 256: 32, 64, 128 registers a thread): the
   operand list "%0, ..., %(R-1)" and its read-write constraints over d[0..R-1] */
#define GPUML__D32_STR \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GPUML__D32(d) \
    "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
    "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
    "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
    "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31])
#define GPUML__D64_STR GPUML__D32_STR ", " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define GPUML__D64(d) GPUML__D32(d), \
    "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
    "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
    "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
    "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63])
#define GPUML__D128_STR GPUML__D64_STR ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define GPUML__D128(d) GPUML__D64(d), \
    "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]), \
    "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]), \
    "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]), \
    "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95]), \
    "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]), \
    "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111]), \
    "+f"((d)[112]), "+f"((d)[113]), "+f"((d)[114]), "+f"((d)[115]), "+f"((d)[116]), "+f"((d)[117]), "+f"((d)[118]), "+f"((d)[119]), \
    "+f"((d)[120]), "+f"((d)[121]), "+f"((d)[122]), "+f"((d)[123]), "+f"((d)[124]), "+f"((d)[125]), "+f"((d)[126]), "+f"((d)[127])

#endif
