/* fp8.c - FP8 recipes per projection; see fp8.h for the model and its sources. */
#include "model/fp8.h"

#include <math.h>
#include <string.h>

#include "model/cost.h"

static bool multiple_of_16(double x)
{
    return !(fabs(fmod(x, 16.0)) > 0);
}

/* torchao auto_filter_small_kn (float8_linear_utils.py @36027d8 lines 183-188, 213-214). */
static bool filtered(enum fp8_recipe r, double k, double n)
{
    if (!multiple_of_16(k) || !multiple_of_16(n))
        return true;
    if (r == FP8_TORCHAO_TENSORWISE)
        return k <= 4096 && n <= 1024;
    if (r == FP8_TORCHAO_ROWWISE)
        return n <= 2048 || k <= 1024 || (n <= 4096 && k <= 2048);
    return false;
}

/* `kernels` memory-bound kernels moving `bytes` in all: one roofline pass, a launch each. */
static sim_time passes(const struct scenario *s, double bytes, int kernels)
{
    const struct gpu_spec *g = &s->hw.gpu;
    const struct efficiency *e = &s->hw.eff;
    sim_time t = bytes > 0 ? cost_membound(g, e, bytes) : e->launch;

    return time_add(t, time_mul(e->launch, kernels > 1 ? kernels - 1 : 0));
}

static void te(const struct scenario *s, bool megatron, const struct fp8_proj *pr, double x,
               double w, double y, struct fp8_cost *out)
{
    bool current = s->train.fp8_recipe == FP8_TE_CURRENT;
    bool fused_norm = megatron && pr->after_norm;
    sim_time wcast = passes(s, (current ? 6 : 4) * w, current ? 2 : 1);

    /* X: the fused norm writes FP8 and the linear transposes it; else cast + transpose */
    out->fwd = fused_norm ? passes(s, 2 * x, 1) : passes(s, (current ? 6 : 4) * x, current ? 2 : 1);
    /* W: cast + transpose, once per step when cached (is_first_microbatch), else every call */
    if (megatron && pr->micro_batches > 1)
        wcast = (sim_time)ceil((double)wcast / pr->micro_batches);
    out->fwd = time_add(out->fwd, wcast);
    out->bwd = passes(s, (current ? 6 : 4) * y, current ? 2 : 1);
    if (!current) { /* amax_and_scale_update, forward and backward (fp8.py 489-533) */
        out->fwd = time_add(out->fwd, s->hw.eff.launch);
        out->bwd = time_add(out->bwd, s->hw.eff.launch);
    }
    /* X (1, or amax + cast), W (likewise), the amax update (delayed only); dY, update */
    out->kernels_fwd = (fused_norm || !current ? 1 : 2) + (current ? 2 : 1) + (current ? 0 : 1);
    out->kernels_bwd = 2;
    out->input_bytes = 1;
    out->weight_saved = megatron ? 0 : w;
    out->bias_grad_fused = true;
}

static void torchao(const struct scenario *s, const struct fp8_proj *pr, double x, double w,
                    double y, struct fp8_cost *out)
{
    bool fuse = s->train.compile;

    (void)pr;
    if (s->train.fp8_recipe == FP8_TORCHAO_TENSORWISE) {
        out->fwd = time_add(fuse ? passes(s, 4 * x, 2) : passes(s, 6 * x, 3), passes(s, 5 * w, 3));
        out->bwd = time_add(passes(s, 3 * w, 1), fuse ? passes(s, 4 * y, 2) : passes(s, 6 * y, 3));
        out->kernels_fwd = (fuse ? 2 : 3) + 3;
        out->kernels_bwd = 1 + (fuse ? 2 : 3);
    } else {
        out->fwd = time_add(passes(s, (fuse ? 6 : 8) * x, 2), passes(s, 3 * w, 1));
        out->bwd = time_add(passes(s, 7 * w, 2), passes(s, (fuse ? 6 : 8) * y, 2));
        out->kernels_fwd = 3;
        out->kernels_bwd = 4;
    }
}

void fp8_projection(const struct scenario *s, bool megatron, const struct fp8_proj *pr,
                    struct fp8_cost *out)
{
    enum fp8_recipe r = s->train.fp8_recipe;
    double x = pr->m * pr->k * pr->batch, w = pr->k * pr->n * pr->batch;
    double y = pr->m * pr->n * pr->batch;

    memset(out, 0, sizeof(*out));
    if (s->train.precision != DT_FP8 || r == FP8_NONE)
        return;
    if ((r == FP8_TORCHAO_TENSORWISE || r == FP8_TORCHAO_ROWWISE) && s->train.fp8_filter_small &&
        filtered(r, pr->k_glob, pr->n_glob))
        return;
    if (!multiple_of_16(pr->k_glob) || !multiple_of_16(pr->n_glob))
        return; /* FP8 GEMMs need dimensions divisible by 16 (TE and torch._scaled_mm) */
    out->fp8 = true;
    if (r == FP8_TE_DELAYED || r == FP8_TE_CURRENT)
        te(s, megatron, pr, x, w, y, out);
    else
        torchao(s, pr, x, w, y, out);
}

double fp8_weight_copy_bytes(const struct scenario *s, bool megatron)
{
    bool te_recipe = s->train.fp8_recipe == FP8_TE_DELAYED || s->train.fp8_recipe == FP8_TE_CURRENT;

    return s->train.precision == DT_FP8 && te_recipe && megatron ? 2.0 : 0.0;
}
