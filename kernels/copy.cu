/* Family "copy": strided copy with dtype conversion, fill and random numbers.
   Specialized by -DGPUML_SRC_DT / -DGPUML_DST_DT (gpuml_dtype values) or -DGPUML_ELEM_BYTES. */

#ifdef GPUML_DST_DT
typedef gpuml__dt<GPUML_DST_DT> gpuml__D;

#ifdef GPUML_SRC_DT
typedef gpuml__dt<GPUML_SRC_DT> gpuml__S;
/* dst[i] = convert(src[i]) over any two strided views of the same shape */
extern "C" __global__ void gpuml_cast(gpuml__kshape s, gpuml__kview dv, gpuml__kview sv,
                                      gpuml__D::T *dst, const gpuml__S::T *src)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
         i += (gpuml__i64)gridDim.x * blockDim.x)
        dst[gpuml__offset(s, dv, i)] = gpuml__D::st(gpuml__S::ld(src[gpuml__offset(s, sv, i)]));
}
/* the same, both views contiguous */
extern "C" __global__ void gpuml_cast_contig(gpuml__i64 n, gpuml__D::T *dst, const gpuml__S::T *src)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (gpuml__i64)gridDim.x * blockDim.x)
        dst[i] = gpuml__D::st(gpuml__S::ld(src[i]));
}
#endif

/* kind 0: uniform in [a,b); kind 1: normal(a, b). Element i of the logical (row-major) order
   draws counter i, so the numbers do not depend on the layout or the backend. */
extern "C" __global__ void gpuml_rand(gpuml__kshape s, gpuml__kview dv, gpuml__D::T *dst,
                                      gpuml__u64 seed, float a, float b, int kind)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
         i += (gpuml__i64)gridDim.x * blockDim.x) {
        float v = kind == 0 ? gpuml__rand_uniform(seed, (gpuml__u64)i, a, b)
                            : gpuml__rand_normal(seed, (gpuml__u64)i, a, b);
        dst[gpuml__offset(s, dv, i)] = gpuml__D::st(v);
    }
}
#endif

#ifdef GPUML_ELEM_BYTES
#if GPUML_ELEM_BYTES == 1
typedef gpuml__u8 gpuml__E;
#elif GPUML_ELEM_BYTES == 2
typedef gpuml__u16 gpuml__E;
#else
typedef gpuml__u32 gpuml__E;
#endif
/* raw element copy between strided views (same dtype: bit-exact for every dtype) */
extern "C" __global__ void gpuml_copy_raw(gpuml__kshape s, gpuml__kview dv, gpuml__kview sv,
                                          gpuml__E *dst, const gpuml__E *src)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
         i += (gpuml__i64)gridDim.x * blockDim.x)
        dst[gpuml__offset(s, dv, i)] = src[gpuml__offset(s, sv, i)];
}
/* a transpose: src is unit-stride along u, dst along v (dst[u*du + v] = src[v*sv + u]), batch z
   with strides dz / sz.  64 x 64 tiles through shared memory, so that both the reads and the
   writes run along each side's unit dim.  Block (256); grid (ceil(nv/64), ceil(nu/64), batch). */
extern "C" __global__ void __launch_bounds__(256) gpuml_copy_t(gpuml__i64 nu, gpuml__i64 nv, gpuml__i64 sv, gpuml__i64 du,
                                                               gpuml__i64 sz, gpuml__i64 dz, gpuml__E *dst, const gpuml__E *src)
{
    __shared__ gpuml__E tile[64][65];
    const gpuml__i64 u0 = (gpuml__i64)blockIdx.y * 64, v0 = (gpuml__i64)blockIdx.x * 64;
    const int tx = (int)(threadIdx.x & 63), ty = (int)(threadIdx.x >> 6);
    src += (gpuml__i64)blockIdx.z * sz;
    dst += (gpuml__i64)blockIdx.z * dz;
    for (int j = ty; j < 64; j += 4) {
        const gpuml__i64 u = u0 + tx, v = v0 + j;
        if (u < nu && v < nv) tile[j][tx] = src[v * sv + u];
    }
    __syncthreads();
    for (int j = ty; j < 64; j += 4) {
        const gpuml__i64 u = u0 + j, v = v0 + tx;
        if (u < nu && v < nv) dst[u * du + v] = tile[tx][j];
    }
}
/* n contiguous elements from dst set to one bit pattern: 16-byte stores from the first 16-byte
   boundary, element stores for the head before it and the tail (a strided store of 2 bytes a
   thread filled 51 MB of f16 at 0.22 of copy on an H200) */
extern "C" __global__ void gpuml_fill_contig(gpuml__E *dst, gpuml__i64 n, gpuml__u32 bits)
{
    constexpr int PER = 16 / (int)sizeof(gpuml__E);
    gpuml__i64 head = (gpuml__i64)(((16u - ((unsigned)(gpuml__u64)dst & 15u)) & 15u) / sizeof(gpuml__E));
    if (head > n) head = n;
    const gpuml__i64 nv = (n - head) / PER, tid = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x;
    const gpuml__i64 stride = (gpuml__i64)gridDim.x * blockDim.x;
    const gpuml__u32 w = sizeof(gpuml__E) == 1 ? (bits & 0xffu) * 0x01010101u : sizeof(gpuml__E) == 2 ? (bits & 0xffffu) * 0x00010001u : bits;
    uint4 pat;
    pat.x = pat.y = pat.z = pat.w = w;
    uint4 *vp = (uint4 *)(dst + head);
    for (gpuml__i64 i = tid; i < nv; i += stride) vp[i] = pat;
    if (tid < head) dst[tid] = (gpuml__E)bits;
    for (gpuml__i64 i = head + nv * PER + tid; i < n; i += stride) dst[i] = (gpuml__E)bits;
}
/* every element of a strided view set to one bit pattern */
extern "C" __global__ void gpuml_fill(gpuml__kshape s, gpuml__kview dv, gpuml__E *dst, gpuml__u32 bits)
{
    for (gpuml__i64 i = (gpuml__i64)blockIdx.x * blockDim.x + threadIdx.x; i < s.n;
         i += (gpuml__i64)gridDim.x * blockDim.x)
        dst[gpuml__offset(s, dv, i)] = (gpuml__E)bits;
}
#endif
