/* conv2d implicit-GEMM benchmark (not a test): the ResNet-50 conv layers at batch 32, f16 NHWC,
   through gpuml__conv2d_igemm (the configuration it chooses, and each configuration forced) and
   the Hopper wgmma kernel gpuml__conv2d_sm90_cfg (likewise, after the "W" column; -1 where declined),
   timed with device events around back-to-back launches after a warm-up, rotating through
   enough copies of x and y that the working set exceeds L2.  Prints one line per layer
   (read by bench/conv_igemm_torch.py, which times cuDNN on the same shapes and prints the table).
   us_auto is what gpuml_conv2d's AUTO runs (gpuml__conv2d_igemm: the wgmma kernel on Hopper where
   it takes the layer); cfg_auto / splits_auto are the mma.sync kernel's own choice.
   Usage: bench_conv_igemm [layer-name-substring ["quick" | "split"]]
   split: the wgmma kernel's sweep (one "split" line per layer: AUTO, then every configuration
   at 1-4 k slices, measured / modeled us), nothing else.
   quick: only AUTO, and the element-gather configuration (cfg 5) where C % 8 != 0 (the stem: the
   small-C kernel AUTO runs against the gather it replaced); every other column prints -1. */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
#include <string.h>

typedef struct layer { const char *name; int h, c, k, r, stride, pad; } layer;
static const layer layers[] = {
    {"stem_7x7s2", 224, 3, 64, 7, 2, 3},
    {"l1_1x1_64_64", 56, 64, 64, 1, 1, 0},     {"l1_3x3_64", 56, 64, 64, 3, 1, 1},
    {"l1_1x1_64_256", 56, 64, 256, 1, 1, 0},   {"l1_1x1_256_64", 56, 256, 64, 1, 1, 0},
    {"l2_1x1_256_128", 56, 256, 128, 1, 1, 0}, {"l2_3x3_128_s2", 56, 128, 128, 3, 2, 1},
    {"l2_3x3_128", 28, 128, 128, 3, 1, 1},     {"l2_1x1_128_512", 28, 128, 512, 1, 1, 0},
    {"l2_1x1_512_128", 28, 512, 128, 1, 1, 0}, {"l2_ds_256_512_s2", 56, 256, 512, 1, 2, 0},
    {"l3_1x1_512_256", 28, 512, 256, 1, 1, 0}, {"l3_3x3_256_s2", 28, 256, 256, 3, 2, 1},
    {"l3_3x3_256", 14, 256, 256, 3, 1, 1},     {"l3_1x1_256_1024", 14, 256, 1024, 1, 1, 0},
    {"l3_1x1_1024_256", 14, 1024, 256, 1, 1, 0}, {"l3_ds_512_1024_s2", 28, 512, 1024, 1, 2, 0},
    {"l4_1x1_1024_512", 14, 1024, 512, 1, 1, 0}, {"l4_3x3_512_s2", 14, 512, 512, 3, 2, 1},
    {"l4_3x3_512", 7, 512, 512, 3, 1, 1},      {"l4_1x1_512_2048", 7, 512, 2048, 1, 1, 0},
    {"l4_1x1_2048_512", 7, 2048, 512, 1, 1, 0}, {"l4_ds_1024_2048_s2", 14, 1024, 2048, 1, 2, 0},
};
#define NB 32
#define MAXCOPIES 16

typedef gpuml_status (*conv_fn)(gpuml_ctx *, const gpuml__conv_problem *, int, int);
static conv_fn run_fn = gpuml__conv2d_igemm_cfg;   /* or gpuml__conv2d_sm90_cfg (the wgmma kernel) */
/* what gpuml_conv2d's AUTO runs for these layers (the wgmma kernel on Hopper where it takes them) */
static gpuml_status auto_fn(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
    (void)cfg; (void)splits;
    return gpuml__conv2d_igemm(ctx, p);
}

static gpuml_status stem_pf0(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
    (void)cfg; (void)splits;
    return gpuml__conv2d_stem_pf(ctx, p, 0);
}
static gpuml_status stem_pf1(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
    (void)cfg; (void)splits;
    return gpuml__conv2d_stem_pf(ctx, p, 1);
}
static gpuml_status stem_tma(gpuml_ctx *ctx, const gpuml__conv_problem *p, int cfg, int splits)
{
    (void)cfg; (void)splits;
    return gpuml__conv2d_stem_pf(ctx, p, 2);
}

/* mean microseconds per call over `reps` back-to-back calls, rotating the copies; -1 if declined */
static double time_us(gpuml_ctx *ctx, gpuml__conv_problem *p, gpuml_tensor **xs, gpuml_tensor **ys, int copies, int cfg, int splits, int reps)
{
    gpuml__CUevent e0, e1;
    double ms;
    int i;
    p->x = xs[0]; p->y = ys[0];
    if (run_fn(ctx, p, cfg, splits) != GPUML_SUCCESS) { gpuml_clear_error(ctx); return -1; }
    for (i = 0; i < 3; i++) { p->x = xs[i % copies]; p->y = ys[i % copies]; run_fn(ctx, p, cfg, splits); }
    if (gpuml_sync(ctx) != GPUML_SUCCESS) return -1;
    gpuml__bench_event(ctx, &e0);
    for (i = 0; i < reps; i++) { p->x = xs[i % copies]; p->y = ys[i % copies]; run_fn(ctx, p, cfg, splits); }
    gpuml__bench_event(ctx, &e1);
    ms = gpuml__bench_elapsed(ctx, e0, e1);
    if (gpuml_sync(ctx) != GPUML_SUCCESS) return -1;
    return ms * 1000.0 / reps;
}

int main(int argc, char **argv)
{
    gpuml_ctx *ctx = NULL;
    gpuml_desc d;
    size_t li;
    int quick = argc > 2 && strcmp(argv[2], "quick") == 0, split = argc > 2 && strcmp(argv[2], "split") == 0;
    memset(&d, 0, sizeof d);
    d.backend = GPUML_BACKEND_CUDA;
    if (gpuml_init(&ctx, &d) != GPUML_SUCCESS) { printf("no GPU: %s\n", gpuml_last_error(ctx)); gpuml_shutdown(ctx); return 0; }
    printf("# gpuml conv_igemm on %s (sm_%d, %d SMs); batch %d, f16 NHWC in/out, no epilogue\n", gpuml_device_name(ctx),
           gpuml_device_arch(ctx), ctx->sm_count, NB);
    printf("# name n h w c k r s stride pad p q gflop us_auto cfg_auto splits_auto us_cfg0..us_cfg%d (unsplit) us_cfg1_s2 us_cfg1_s4 us_cfg3_s2 us_cfg3_s4"
           " W wg_us_auto wg_cfg_auto wg_splits_auto wg_us_cfg0..wg_us_cfg%d (unsplit) wg_cfg1_s2 wg_cfg1_s4 wg_cfg3_s2 wg_cfg3_s4 wg_auto_gathered wg_auto_im2col (-1: declined; the last two: the chosen configuration with x always gathered, and with TMA im2col loads)\n",
           GPUML__CONV_NCFG - 1, GPUML__CW_NCFG - 1);
    for (li = 0; li < sizeof layers / sizeof layers[0]; li++) {
        const layer *L = &layers[li];
        int64_t P = (L->h + 2 * L->pad - L->r) / L->stride + 1, xs4[4], ws4[4], ys4[4];
        gpuml_tensor *xs[MAXCOPIES], *ys[MAXCOPIES], *w;
        gpuml__conv_problem p;
        double bytes, gflop, us, uc[GPUML__CONV_NCFG], us_split[4], wus, wc[GPUML__CW_NCFG], ws_split[4], wgather, wim2col;
        int copies, i, reps, cfg, splits, wcfg, wsplits;
        if (argc > 1 && !strstr(L->name, argv[1])) continue;
        xs4[0] = NB; xs4[1] = L->h; xs4[2] = L->h; xs4[3] = L->c;
        ws4[0] = L->k; ws4[1] = L->r; ws4[2] = L->r; ws4[3] = L->c;
        ys4[0] = NB; ys4[1] = P; ys4[2] = P; ys4[3] = L->k;
        bytes = 2.0 * NB * ((double)L->h * L->h * L->c + (double)P * P * L->k);
        copies = (int)(3.0 * (double)ctx->l2_bytes / bytes) + 1;
        if (copies > MAXCOPIES) copies = MAXCOPIES;
        w = gpuml_tensor_new(ctx, GPUML_F16, 4, ws4);
        gpuml_rand_normal(ctx, w, 7, 0, 0.05);
        for (i = 0; i < copies; i++) {
            xs[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, xs4);
            ys[i] = gpuml_tensor_new(ctx, GPUML_F16, 4, ys4);
            if (!xs[i] || !ys[i]) { printf("alloc: %s\n", gpuml_last_error(ctx)); return 1; }
            gpuml_rand_normal(ctx, xs[i], 100 + (uint64_t)i, 0, 1);
        }
        memset(&p, 0, sizeof p);
        p.n = NB; p.h = L->h; p.w = L->h; p.c = L->c; p.k = L->k; p.r = L->r; p.s = L->r; p.p = P; p.q = P;
        p.stride_h = p.stride_w = L->stride; p.pad_h = p.pad_w = L->pad; p.dil_h = p.dil_w = 1; p.groups = 1;
        p.wt = w;
        gflop = 2.0 * NB * (double)P * P * L->k * (double)L->r * L->r * L->c / 1e9;
        reps = gflop > 20 ? 20 : gflop > 5 ? 50 : 100;
        p.x = xs[0];
        p.y = ys[0];
        if (split) {
            /* the wgmma kernel's sweep: every configuration at 1-4 k slices (x by TMA im2col where
               AUTO would), each as "measured/modeled" us (-1: declined), for fitting the chooser's model */
            double model;
            int j;
            wcfg = gpuml__conv_sm90_choose(ctx, &p, &wsplits, &model);
            run_fn = auto_fn;
            us = time_us(ctx, &p, xs, ys, copies, -1, 0, reps);
            printf("split %s auto %.2f cfg %d s %d model %.2f |", L->name, us, wcfg, wsplits, model);
            run_fn = gpuml__conv2d_sm90_cfg;
            for (i = 0; i < GPUML__CW_NCFG; i++) {
                for (j = 1; j <= 4; j++) {
                    double m = gpuml__conv_sm90_why(ctx, &p, i) ? -1 : gpuml__conv_sm90_model(ctx, &p, i, j);
                    printf(" %.2f/%.2f", m < 0 ? -1.0 : time_us(ctx, &p, xs, ys, copies, i | GPUML__CW_IM2COL, j, reps), m);
                }
                printf(" |");
            }
            printf("\n");
            fflush(stdout);
            for (i = 0; i < copies; i++) { gpuml_tensor_free(xs[i]); gpuml_tensor_free(ys[i]); }
            gpuml_tensor_free(w);
            continue;
        }
        cfg = gpuml__conv_igemm_choose(ctx, &p, &splits);
        run_fn = auto_fn;
        us = time_us(ctx, &p, xs, ys, copies, -1, 0, reps);
        run_fn = gpuml__conv2d_igemm_cfg;
        for (i = 0; i < GPUML__CONV_NCFG; i++)
            uc[i] = !quick || (i == GPUML__CONV_GATHER_CFG && L->c % 8) ? time_us(ctx, &p, xs, ys, copies, i, 1, reps) : -1;
        for (i = 0; i < 4; i++) us_split[i] = quick ? -1 : time_us(ctx, &p, xs, ys, copies, i < 2 ? 1 : 3, i % 2 ? 4 : 2, reps);
        wcfg = gpuml__conv_sm90_choose(ctx, &p, &wsplits, NULL);
        run_fn = gpuml__conv2d_sm90_cfg;
        wus = quick ? -1 : time_us(ctx, &p, xs, ys, copies, -1, 0, reps);
        for (i = 0; i < GPUML__CW_NCFG; i++) wc[i] = quick ? -1 : time_us(ctx, &p, xs, ys, copies, i, 1, reps);
        for (i = 0; i < 4; i++) ws_split[i] = quick ? -1 : time_us(ctx, &p, xs, ys, copies, i < 2 ? 1 : 3, i % 2 ? 4 : 2, reps);
        wgather = !quick && wcfg >= 0 ? time_us(ctx, &p, xs, ys, copies, wcfg | GPUML__CW_GATHER, wsplits, reps) : -1;
        wim2col = !quick && wcfg >= 0 ? time_us(ctx, &p, xs, ys, copies, wcfg | GPUML__CW_IM2COL, wsplits, reps) : -1;
        printf("%s %d %d %d %d %d %d %d %d %d %lld %lld %.4f %.2f %d %d", L->name, NB, L->h, L->h, L->c, L->k, L->r, L->r, L->stride, L->pad,
               (long long)P, (long long)P, gflop, us, cfg, splits);
        for (i = 0; i < GPUML__CONV_NCFG; i++) printf(" %.2f", uc[i]);
        for (i = 0; i < 4; i++) printf(" %.2f", us_split[i]);
        printf(" W %.2f %d %d", wus, wcfg, wsplits);
        for (i = 0; i < GPUML__CW_NCFG; i++) printf(" %.2f", wc[i]);
        for (i = 0; i < 4; i++) printf(" %.2f", ws_split[i]);
        printf(" %.2f %.2f\n", wgather, wim2col);
        if (L->c % 8) {   /* the small-C kernel's variants (without / with the next window loaded into registers during the mma; TMA windows) */
            double pf0, pf1, tma;
            run_fn = stem_pf0; pf0 = time_us(ctx, &p, xs, ys, copies, 0, 1, reps);
            run_fn = stem_pf1; pf1 = time_us(ctx, &p, xs, ys, copies, 0, 1, reps);
            run_fn = stem_tma; tma = time_us(ctx, &p, xs, ys, copies, 0, 1, reps);
            printf("# %s small-C kernel: pf0 %.2f us, pf1 %.2f us, tma %.2f us (AUTO: tma where it runs, else pf %d); element gather (cfg %d) %.2f us\n",
                   L->name, pf0, pf1, tma, GPUML__STEM_PF_DEFAULT, GPUML__CONV_GATHER_CFG, uc[GPUML__CONV_GATHER_CFG]);
        }
        fflush(stdout);
        if (us < 0) printf("# %s: %s\n", L->name, gpuml_last_error(ctx));
        for (i = 0; i < copies; i++) { gpuml_tensor_free(xs[i]); gpuml_tensor_free(ys[i]); }
        gpuml_tensor_free(w);
    }
    gpuml_shutdown(ctx);
    return 0;
}
