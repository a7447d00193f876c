/* GPU timing shared by the benchmark programs (not part of the library): CUDA events around
   back-to-back calls.  One window of 'iters' calls estimates the time; then windows of >= 3 ms (so
   a short kernel is timed over many back-to-back launches, not over the host's first few), median
   of 3.  run_n(arg, n) issues n calls; the caller has warmed up (JIT) and synchronized.
   Include after gpuml.h with GPUML_IMPLEMENTATION (it uses the internal event helpers). */
#ifndef GPUML_BENCH_TIMING_H
#define GPUML_BENCH_TIMING_H
#ifndef GPUML_NO_CUDA
static double bench_gpu_seconds(gpuml_ctx *ctx, void (*run_n)(void *arg, int n), void *arg, int iters)
{
    double w[3], t;
    int k, n = iters;
    for (k = -1; k < 3; k++) {
        gpuml__CUevent a, b;
        gpuml__bench_event(ctx, &a);
        run_n(arg, n);
        gpuml__bench_event(ctx, &b);
        t = gpuml__bench_elapsed(ctx, a, b) * 1e-3 / n;
        if (k < 0) { if (t > 0 && 3e-3 / t > n) n = 3e-3 / t > 4000 ? 4000 : (int)(3e-3 / t); }
        else w[k] = t;
    }
    if (w[0] > w[1]) { t = w[0]; w[0] = w[1]; w[1] = t; }
    if (w[1] > w[2]) { t = w[1]; w[1] = w[2]; w[2] = t; }
    if (w[0] > w[1]) { t = w[0]; w[0] = w[1]; w[1] = t; }
    return w[1];
}
#endif
#endif
