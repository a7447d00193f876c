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

#endif
