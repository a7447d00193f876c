/* ... and the API used from another (declarations only) */
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>
int two_tu_b(void)
{
    gpuml_ctx *ctx;
    gpuml_desc d;
    int64_t shape[2] = {2, 3};
    gpuml_tensor *t;
    float v[6];
    int rc;
    /* every field: the ones added later (profile, trace_file, graphs_off) were once left as stack
       garbage here, and a garbage trace_file crashed at shutdown on the GPU host */
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CPU; d.device = 0; d.cuda_lib = NULL; d.nvrtc_lib = NULL; d.cache_dir = NULL;
    d.num_threads = 1; d.log_fn = NULL; d.log_user = NULL; d.log_level = GPUML_LOG_WARN;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("%s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 1; }
    t = gpuml_tensor_new(ctx, GPUML_F32, 2, shape);
    rc = gpuml_fill(ctx, t, 1.5) != GPUML_SUCCESS || gpuml_tensor_read(t, v, sizeof v) != GPUML_SUCCESS || v[5] != 1.5f;
    gpuml_tensor_free(t);
    gpuml_shutdown(ctx);
    return rc;
}
