/* public declarations of the elementwise, reduction, normalization and training ops (spliced into gpuml.h) */

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

/* Elementwise unary ops: out has x's shape and dtype. */
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
