/* Code shared verbatim by the CPU backend (as C99/C++) and the CUDA kernels (as CUDA C++).
   It defines the bit-exact pieces that must give identical results on both backends:
   dtype conversions (round-to-nearest-even) and the counter-based random generator.
   Rules for this file: integer and IEEE-exact float operations only (+ - * / sqrtf fmaf);
   never write a*b+c (a compiler may fuse it on one backend and not the other): use fmaf.
   A device-only form (GPUML__KERNEL_CODE, from prelude.cuh) must give the same bits as the
   portable one it stands for.
   Needs: gpuml__u8/u16/u32/u64/i32 typedefs and GPUML__HD (function qualifier). */

GPUML__HD gpuml__u32 gpuml__fbits(float f) { union { float f; gpuml__u32 u; } c; c.f = f; return c.u; }
GPUML__HD float gpuml__bitsf(gpuml__u32 u) { union { float f; gpuml__u32 u; } c; c.u = u; return c.f; }

/* f32 -> small float (f16, fp8 e4m3, fp8 e5m2), round to nearest even.
   mbits/bias describe the target; max_bits is its largest finite magnitude; overflow gives
   inf_bits (sat == 0) or max_bits (sat != 0, PTX "satfinite"); NaN gives nan_bits. */
GPUML__HD gpuml__u32 gpuml__f32_to_small(float f, int ebits, int mbits, int bias,
                                         gpuml__u32 max_bits, gpuml__u32 inf_bits,
                                         gpuml__u32 nan_bits, int sat)
{
    gpuml__u32 x = gpuml__fbits(f);
    gpuml__u32 sign = (x >> 31) << (ebits + mbits);
    gpuml__u32 ax = x & 0x7fffffffu, m, t, rem, half;
    int e, emin = 1 - bias, sh;
    if (ax > 0x7f800000u) return nan_bits;
    if (ax == 0x7f800000u) return sign | (sat ? max_bits : inf_bits);
    if (ax < 0x00800000u) { e = -126; m = ax; }            /* f32 subnormal */
    else { e = (int)(ax >> 23) - 127; m = (ax & 0x7fffffu) | 0x800000u; }
    if (e >= emin) {                                        /* normal in the target */
        sh = 23 - mbits;
        t = ((gpuml__u32)(e + bias) << mbits) | ((m & 0x7fffffu) >> sh);
    } else {                                                /* subnormal in the target */
        sh = 23 + emin - mbits - e;
        if (sh > 24) return sign;
        t = m >> sh;
    }
    rem = m & ((1u << sh) - 1u);
    half = 1u << (sh - 1);
    if (rem > half || (rem == half && (t & 1u))) t++;       /* a carry rolls into the exponent */
    if (t > max_bits) t = sat ? max_bits : inf_bits;
    return sign | t;
}

/* small float -> f32 (exact). ieee: the all-ones exponent means inf/NaN (f16, e5m2);
   otherwise only the all-ones pattern is NaN (e4m3). */
GPUML__HD float gpuml__small_to_f32(gpuml__u32 h, int ebits, int mbits, int bias, int ieee)
{
    gpuml__u32 sign = (h >> (ebits + mbits)) & 1u;
    gpuml__u32 ex = (h >> mbits) & ((1u << ebits) - 1u);
    gpuml__u32 mant = h & ((1u << mbits) - 1u);
    gpuml__u32 emax = (1u << ebits) - 1u;
    float v;
    if (ieee && ex == emax)
        return gpuml__bitsf((sign << 31) | 0x7f800000u | (mant ? 0x400000u : 0u));
    if (!ieee && ex == emax && mant == (1u << mbits) - 1u)
        return gpuml__bitsf(0x7fc00000u);
    if (ex == 0) {                                          /* subnormal: mant * 2^(1-bias-mbits) */
        v = (float)mant * gpuml__bitsf((gpuml__u32)(127 + 1 - bias - mbits) << 23);
        return sign ? -v : v;
    }
    return gpuml__bitsf((sign << 31) | ((ex - (gpuml__u32)bias + 127u) << 23) | (mant << (23 - mbits)));
}

/* f16 <-> f32.  On the GPU one cvt each (exact, or IEEE round to nearest even), with the NaNs
   brought to the portable code's (loads: sign | 0x7fc00000, stores: 0x7fff): the portable code
   is ~20 integer instructions a conversion, which made f16 elementwise kernels issue-bound
   (y[M][4][64] = a[M][1][64] + b[4][64] at 0.22 of copy on an H200, 72% of SM issue busy) */
GPUML__HD gpuml__u16 gpuml__f32_to_f16(float f)
{
#if defined(GPUML__KERNEL_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    gpuml__u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return (gpuml__fbits(f) & 0x7fffffffu) > 0x7f800000u ? (gpuml__u16)0x7fffu : h;
#else
    return (gpuml__u16)gpuml__f32_to_small(f, 5, 10, 15, 0x7bffu, 0x7c00u, 0x7fffu, 0);
#endif
}
GPUML__HD float gpuml__f16_to_f32(gpuml__u16 h)
{
#if defined(GPUML__KERNEL_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return (h & 0x7fffu) > 0x7c00u ? gpuml__bitsf(((gpuml__u32)(h & 0x8000u) << 16) | 0x7fc00000u) : f;
#else
    return gpuml__small_to_f32(h, 5, 10, 15, 1);
#endif
}
GPUML__HD gpuml__u16 gpuml__f32_to_bf16(float f)
{
    gpuml__u32 x = gpuml__fbits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (gpuml__u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
GPUML__HD float gpuml__bf16_to_f32(gpuml__u16 h) { return gpuml__bitsf((gpuml__u32)h << 16); }
GPUML__HD gpuml__u8 gpuml__f32_to_e4m3(float f)
{ return (gpuml__u8)gpuml__f32_to_small(f, 4, 3, 7, 0x7eu, 0x7eu, 0x7fu, 1); }
GPUML__HD float gpuml__e4m3_to_f32(gpuml__u8 h) { return gpuml__small_to_f32(h, 4, 3, 7, 0); }
GPUML__HD gpuml__u8 gpuml__f32_to_e5m2(float f)
{ return (gpuml__u8)gpuml__f32_to_small(f, 5, 2, 15, 0x7bu, 0x7bu, 0x7fu, 1); }
GPUML__HD float gpuml__e5m2_to_f32(gpuml__u8 h) { return gpuml__small_to_f32(h, 5, 2, 15, 1); }

/* float -> integer with round-to-nearest-even and saturation; NaN gives 0. */
GPUML__HD float gpuml__rint(float v)
{
    /* adding and subtracting 2^23 rounds to an integer with the current (nearest-even) mode */
    float a = v < 0.0f ? -v : v, r;
    if (!(a < 8388608.0f)) return v;
    r = (a + 8388608.0f) - 8388608.0f;
    return v < 0.0f ? -r : r;
}
GPUML__HD gpuml__i32 gpuml__f32_to_i32(float v)
{
    if (v != v) return 0;
    if (v >= 2147483520.0f) return 2147483647;
    if (v <= -2147483648.0f) return (gpuml__i32)(-2147483647 - 1);
    return (gpuml__i32)gpuml__rint(v);
}
GPUML__HD gpuml__i32 gpuml__f32_to_int_sat(float v, gpuml__i32 lo, gpuml__i32 hi)
{
    if (v != v) return 0;
    v = gpuml__rint(v);
    if (v <= (float)lo) return lo;
    if (v >= (float)hi) return hi;
    return (gpuml__i32)v;
}

/* ---- counter-based random numbers: Philox4x32-10 ---- */
typedef struct gpuml__u32x4 { gpuml__u32 v[4]; } gpuml__u32x4;
GPUML__HD gpuml__u32x4 gpuml__philox(gpuml__u64 counter, gpuml__u64 seed)
{
    gpuml__u32 c0 = (gpuml__u32)counter, c1 = (gpuml__u32)(counter >> 32), c2 = 0x5bd1e995u, c3 = 0;
    gpuml__u32 k0 = (gpuml__u32)seed, k1 = (gpuml__u32)(seed >> 32);
    gpuml__u32x4 r;
    int i;
    for (i = 0; i < 10; i++) {
        gpuml__u64 p0 = (gpuml__u64)0xD2511F53u * c0, p1 = (gpuml__u64)0xCD9E8D57u * c2;
        gpuml__u32 n0 = (gpuml__u32)(p1 >> 32) ^ c1 ^ k0, n2 = (gpuml__u32)(p0 >> 32) ^ c3 ^ k1;
        c1 = (gpuml__u32)p1; c3 = (gpuml__u32)p0; c0 = n0; c2 = n2;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    r.v[0] = c0; r.v[1] = c1; r.v[2] = c2; r.v[3] = c3;
    return r;
}
/* [0,1) with 24 random bits: exact on every backend */
GPUML__HD float gpuml__u01(gpuml__u32 x) { return (float)(x >> 8) * 5.9604644775390625e-8f; }

/* ln(x) for x > 0 finite, ~1 ulp, from IEEE-exact operations only */
GPUML__HD float gpuml__logf_exact(float x)
{
    gpuml__u32 b = gpuml__fbits(x);
    int e;
    float m, s, z, p;
    if (b < 0x00800000u) { x = x * 16777216.0f; b = gpuml__fbits(x); e = -24; } else e = 0;
    e += (int)(b >> 23) - 127;
    m = gpuml__bitsf((b & 0x7fffffu) | 0x3f800000u);        /* [1,2) */
    if (m > 1.41421356f) { m = m * 0.5f; e += 1; }          /* [0.707,1.414] */
    s = (m - 1.0f) / (m + 1.0f);                            /* ln m = 2 atanh s */
    z = s * s;
    p = fmaf(z, 0.18181818f, 0.22222222f);
    p = fmaf(p, z, 0.28571429f);
    p = fmaf(p, z, 0.4f);
    p = fmaf(p, z, 0.66666667f);
    p = fmaf(p, z, 2.0f);
    return fmaf((float)e, 0.693147180559945f, s * p);
}
/* cos(2*pi*t) and sin(2*pi*t) for t in [0,1) */
GPUML__HD void gpuml__sincos2pi(float t, float *sn, float *cs)
{
    float q4 = t * 4.0f, x, x2, ps, pc, s, c;
    int q = (int)q4;
    x = (q4 - (float)q) * 1.57079632679f;                   /* [0, pi/2) */
    x2 = x * x;
    ps = fmaf(x2, -2.5052108e-8f, 2.7557319e-6f);
    ps = fmaf(ps, x2, -1.9841270e-4f);
    ps = fmaf(ps, x2, 8.3333333e-3f);
    ps = fmaf(ps, x2, -1.6666667e-1f);
    ps = fmaf(ps, x2, 1.0f);
    s = x * ps;
    pc = fmaf(x2, -1.1470746e-11f, 2.0876757e-9f);
    pc = fmaf(pc, x2, -2.7557319e-7f);
    pc = fmaf(pc, x2, 2.4801587e-5f);
    pc = fmaf(pc, x2, -1.3888889e-3f);
    pc = fmaf(pc, x2, 4.1666667e-2f);
    pc = fmaf(pc, x2, -0.5f);
    c = fmaf(pc, x2, 1.0f);
    switch (q & 3) {
    case 0: *cs = c; *sn = s; break;
    case 1: *cs = -s; *sn = c; break;
    case 2: *cs = -c; *sn = -s; break;
    default: *cs = s; *sn = -c; break;
    }
}
/* element i of the stream `seed`: uniform in [lo,hi) */
GPUML__HD float gpuml__rand_uniform(gpuml__u64 seed, gpuml__u64 i, float lo, float hi)
{
    gpuml__u32x4 r = gpuml__philox(i, seed);
    return fmaf(hi - lo, gpuml__u01(r.v[0]), lo);
}
/* element i of the stream `seed`: normal(mean, std) by Box-Muller on one Philox block */
GPUML__HD float gpuml__rand_normal(gpuml__u64 seed, gpuml__u64 i, float mean, float std)
{
    gpuml__u32x4 r = gpuml__philox(i, seed);
    float u1 = (float)((r.v[0] >> 8) + 1u) * 5.9604644775390625e-8f;   /* (0,1] */
    float rad = sqrtf(-2.0f * gpuml__logf_exact(u1)), sn, cs;
    gpuml__sincos2pi(gpuml__u01(r.v[1]), &sn, &cs);
    return fmaf(std, rad * cs, mean);
}

/* The schedule of the Hopper matmul kernels (kernels/matmul_sm90.cu): what CTA cid of ncl computes,
   piece by piece: whole tiles cid, cid + ncl, ... below sk_dp (all num_units of them when
   sk_iters == 0), then with a stream-K tail (sk_iters > 0: the k blocks of tiles sk_dp.. laid end
   to end) its range [cid sk_iters / ncl, (cid + 1) sk_iters / ncl): [tail of tile t0 from k block
   a] [tiles f..t1-1] [head of tile t1 up to k block b].  Taken in the order whole tiles, head,
   tail: every CTA then walks k from 0 at the same time (the head and tail together skip a stretch
   shorter than a tile of k blocks), so concurrent CTAs share the A and B panels in L2 as in the
   whole waves (taken in range order, each CTA at its own k: the tail ran at half speed from DRAM,
   tf32 4096^3 -30%).  Here so that the CPU tests check the partition the kernels run
   (test_matmul streamk_partition). */
typedef struct gpuml__mm_walk {
    int u, ph;     /* ph 0: whole tiles round robin (u: the next); 1: the tail's whole tiles (u: the next, -1
                      before the first); 2: its head; 3: its tail; 4: done */
    int pos, end;  /* this CTA's k-block range of the tail */
} gpuml__mm_walk;
GPUML__HD void gpuml__walk_init(gpuml__mm_walk *w, int sk_iters, int cid, int ncl)
{
    w->u = cid;
    w->ph = 0;
    w->pos = (int)((long long)cid * sk_iters / ncl);
    w->end = (int)((long long)(cid + 1) * sk_iters / ncl);
}
/* the next piece: tile *u, k blocks [*kb0, *kb1); 0 when there is none */
GPUML__HD int gpuml__walk_next(gpuml__mm_walk *w, int sk_dp, int sk_iters, int ncl, int num_units, int num_kb, int *u,
                               int *kb0, int *kb1)
{
    int t0, a, t1, b;
    *kb0 = 0;
    *kb1 = num_kb;
    if (w->ph == 0) {
        if (w->u < (sk_iters > 0 ? sk_dp : num_units)) {
            *u = w->u;
            w->u += ncl;
            return 1;
        }
        if (sk_iters <= 0)
            return 0;
        w->ph = 1;
        w->u = -1;
    }
    t0 = w->pos / num_kb;
    a = w->pos - t0 * num_kb;
    t1 = w->end / num_kb;
    b = w->end - t1 * num_kb;
    if (w->ph == 1) {
        if (w->u < 0)
            w->u = a > 0 ? t0 + 1 : t0;
        if (w->u < t1) {
            *u = sk_dp + w->u++;
            return 1;
        }
        w->ph = 2;
    }
    if (w->ph == 2) {
        w->ph = 3;
        if (b > 0) {
            *u = sk_dp + t1;
            *kb1 = b;
            return 1;
        }
    }
    if (w->ph == 3) {
        w->ph = 4;
        if (a > 0) {
            *u = sk_dp + t0;
            *kb0 = a;
            return 1;
        }
    }
    return 0;
}
/* after a piece: the seam where its tile's other piece is another CTA's, or -1 (a whole tile).  The
   head (ph 3) ends this CTA's range: seam cid + 1; the tail (ph 4) starts it: seam cid */
GPUML__HD int gpuml__walk_seam(const gpuml__mm_walk *w, int cid)
{
    return w->ph == 3 ? cid + 1 : w->ph == 4 ? cid : -1;
}
