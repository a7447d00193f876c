/* The argument block of the CUDA-core conv kernels (kernels/conv.cu) and of gpuml_conv_1x1w
   (kernels/conv_1x1w.cu) -- mirrored by gpuml__conv_params in gpuml.h -- and the fused activation
   (CONV_EPI: 0 none, 1 relu, 2 gelu (tanh form), 3 silu), with the epilogue macros' defaults
   (CONV_EPI, CONV_BIAS, CONV_RES: 0).  tools/gen_kernels.sh emits this file in front of both. */
#ifndef CONV_EPI
#define CONV_EPI 0
#endif
#ifndef CONV_BIAS
#define CONV_BIAS 0
#endif
#ifndef CONV_RES
#define CONV_RES 0
#endif

struct gpuml__conv_params {
    gpuml__i64 n, h, w, c, k, r, s, p, q, cg, kg;   /* cg, kg: channels per group in x, y */
    int sh, sw, ph, pw, dh, dw;                     /* stride, top/left padding, dilation */
    int order;                                      /* item order: 0 channel fastest, 1 (n, channel, row, col) */
    int count_pad;                                  /* pool: average counts padding (within the padded image) */
    gpuml__i64 xn, xh, xw, xc;                      /* x (or dx) strides, elements */
    gpuml__i64 wk, wr, ws, wc;                      /* w (or dw) strides */
    gpuml__i64 yn, yp, yq, yk;                      /* y (or dy) strides */
    gpuml__i64 rn, rp, rq, rk;                      /* residual strides */
    const void *x, *wt, *y;                         /* the one written depends on the kernel */
    const float *bias;
    const void *res;
    void *col;                                      /* im2col / col2im buffer */
    gpuml__i64 ldcol, n0, g;                        /* its row stride; first image; group */
    gpuml__i64 total;                               /* work items */
    gpuml__i64 mrows;                               /* backward filter packing: the GEMM rows that exist */
};

static __device__ __forceinline__ float gpuml__conv_act(float v)
{
#if CONV_EPI == 1
    return v > 0.0f ? v : 0.0f;
#elif CONV_EPI == 2
    return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
#elif CONV_EPI == 3
    return v / (1.0f + expf(-v));
#else
    return v;
#endif
}
