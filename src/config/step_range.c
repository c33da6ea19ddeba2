/*
 * step_range.c - no setting may put a step beyond SIM_STEP_LIMIT (base/util.h), where
 * durations would saturate: checked when a scenario is finalized, before anything is built,
 * so that the refusal names the key that makes the step that long (file:line:col and caret),
 * not the scenario file after a run. The engine still refuses a step past the limit
 * (engine/diagnose.c) for what these estimates do not cover.
 *
 * Each estimate is a lower bound of the step on the busiest GPU, from work every step does
 * whatever the strategy (docs/yaml-reference.md "Cross-field rules"):
 *
 *   compute   the model FLOPs of one step over every GPU's dense peak (100 % MFU);
 *   GPU       per micro-batch, each layer of the largest pipeline stage runs forward two
 *             norms and two residual adds (memory-bound kernels, workload_layer.c: 4
 *             launches; the norms read their input, the adds two inputs and their output,
 *             8 x tokens / (tp * cp) x hidden elements) and GEMMs: forward the attention's
 *             q, k, v and output projections (2 GEMMs at least, 4 with a dense MLP's two),
 *             each reading its weights and input once and writing its output (the memory
 *             roofline of cost_gemm(): the whole layer's linear weights / tp, the attention's
 *             alone for MoE; tokens / (tp * cp) rows), and backward as many input-gradient
 *             GEMMs moving as much again (all but the model's first layer, whose input may
 *             need no gradient) and, when every weight trains, weight-gradient GEMMs writing
 *             a weight-sized output; one byte per element for FP8, two otherwise, the
 *             smallest a kernel of that precision moves; and the optimizer on the GPU reads
 *             and writes every trainable parameter's 16-bit weight at least (4 B each, the
 *             average share per GPU: workload_optimizer_time() is memory-bound);
 *   host      an eager job without host jitter (workload_host.c) issues per layer at least
 *             12 kernels (host.kernel_launch: forward the norm, q/k/v GEMM, attention,
 *             output GEMM and residual add, then the MLP's norm, a GEMM and its add;
 *             backward the attention's three and the output projection's input gradient),
 *             19 Python ops (host.python_op: 12 + 4 forward, 2 + 1 backward) and, in
 *             backward, 8 autograd nodes (host.autograd_node: the operators above) - not
 *             under torch.compile, whose costs are fixed;
 *   optimizer with the optimizer offloaded, the CPU updates every trainable parameter once:
 *             its average share per GPU at host.adam_throughput;
 *
 * and simulation.step_overhead adds to any of them. The refusal names the key with the largest
 * share of the estimate that passes the limit.
 */
#include <stdbool.h>
#include <stdio.h>

#include "base/units.h"
#include "config/schema.h"
#include "model/cost.h"
#include "model/workload.h"

/* One lower bound's term: the key that sets it, its seconds, and the value as written. */
struct step_term {
    const char *key;
    double s;       /* seconds of the step this key accounts for */
    char what[200]; /* "hardware.efficiency.launch = 1000 s per memory-bound kernel, ..." */
    bool usual;     /* the value is within what real systems have: the workload is the cause */
};

static void term_time(struct step_term *t, const char *key, sim_time per, double count,
                      const char *unit_what)
{
    char v[48];

    t->key = key;
    t->s = (double)per / NS_PER_S * count;
    t->usual = per <= 1000000; /* 1 ms: a hundred times any per-kernel or per-op cost */
    units_format((double)per / NS_PER_S, UNIT_TIME, v, sizeof(v));
    snprintf(t->what, sizeof(t->what), "%s = %s per %s, %.3g of them on the busiest GPU,", key, v,
             unit_what, count);
}

/* The FLOP bound (refused at the peak's key below 1 TFLOP/s, else at the workload). */
static int check_flops(const struct scenario *s, double overhead_s, struct cfg_error *err)
{
    const struct gpu_spec *g = &s->hw.gpu;
    enum dtype dt = s->train.precision;
    double limit_s = (double)SIM_STEP_LIMIT / NS_PER_S, peak = cost_peak_flops(g, dt), least;
    char path[64], rate[48];

    if (!(g->flops[dt] > 0))
        dt = g->flops[DT_BF16] > 0 ? DT_BF16 : DT_FP16;
    least = workload_model_flops(s) / ((double)s->gpus * peak);
    if (least + overhead_s <= limit_s)
        return 0;
    if (overhead_s > least)
        return 1; /* the overhead's: reported by the caller */
    snprintf(path, sizeof(path), "hardware.gpu.flops.%s", dtype_name(dt));
    units_format(peak, UNIT_FLOPS, rate, sizeof(rate));
    if (peak >= 1e12)
        return cfg_fail(
            err, "workload",
            "one step of '%s' (%.3g model FLOPs) lasts at least %.3g s on %d GPU%s of %s "
            "%s even at 100 %% MFU; a step may last at most %.0f s (%.1f days)",
            s->model.name ? s->model.name : "?", workload_model_flops(s), least, s->gpus,
            s->gpus == 1 ? "" : "s", rate, dtype_name(dt), limit_s, limit_s / 86400);
    return cfg_fail(
        err, path,
        "a %s peak of %s makes one step last at least %.3g s even at 100 %% MFU; a step "
        "may last at most %.0f s (%.1f days)",
        dtype_name(dt), rate, least, limit_s, limit_s / 86400);
}

/* Refuse at the largest of n terms when their sum and the overhead pass the limit. */
static int check_terms(const struct scenario *s, double passes, const struct step_term *t, int n,
                       double overhead_s, const char *stream, struct cfg_error *err)
{
    double limit_s = (double)SIM_STEP_LIMIT / NS_PER_S, sum = overhead_s;
    int big = 0;

    for (int i = 0; i < n; i++)
        sum += t[i].s;
    if (sum <= limit_s)
        return 0;
    for (int i = 1; i < n; i++)
        if (t[i].s > t[big].s)
            big = i;
    if (n == 0 || overhead_s > t[big].s)
        return 1;
    if (t[big].usual)
        return cfg_fail(err, "workload",
                        "one step of '%s' lasts at least %.3g s (%s: %.3g layer forwards on the "
                        "busiest GPU at the hardware's own rates); a step may last at most %.0f s "
                        "(%.1f days)",
                        s->model.name ? s->model.name : "?", sum, stream, passes, limit_s,
                        limit_s / 86400);
    return cfg_fail(err, t[big].key,
                    "%s makes one step last at least %.3g s (%s); a step may last at most "
                    "%.0f s (%.1f days)",
                    t[big].what, sum, stream, limit_s, limit_s / 86400);
}

/* The step_overhead alone leaves the step's own work no room. */
static int overhead_fail(const struct scenario *s, struct cfg_error *err)
{
    double limit_s = (double)SIM_STEP_LIMIT / NS_PER_S;
    char v[48];

    units_format((double)s->sim.step_overhead / NS_PER_S, UNIT_TIME, v, sizeof(v));
    return cfg_fail(err, "simulation.step_overhead",
                    "a step_overhead of %s leaves no room for the step's own work; a step may "
                    "last at most %.0f s (%.1f days)",
                    v, limit_s, limit_s / 86400);
}

int cfg_check_step_flops(struct scenario *s, struct cfg_error *err)
{
    int rc = check_flops(s, (double)s->sim.step_overhead / NS_PER_S, err);

    return rc > 0 ? overhead_fail(s, err) : rc;
}

/* Bytes the busiest GPU moves per step at least (see the top of the file). */
static double gpu_bytes(const struct scenario *s, double passes, double mbs)
{
    const struct model *m = &s->model;
    int tp = s->par.tp > 0 ? s->par.tp : 1, cp = s->par.cp > 0 ? s->par.cp : 1;
    bool dense = !(m->moe.experts > 0);
    bool every_weight_trains = s->train.finetune == FT_FULL && !(s->train.trainable_fraction < 1);
    double tokens = (double)s->train.micro_batch * s->train.seq_len / ((double)tp * cp);
    double hid = m->hidden, elem = s->train.precision == DT_FP8 ? 1 : 2;
    double qw = (double)m->heads * m->head_dim / tp, kvw = (double)m->kv_heads * m->head_dim / tp;
    double weights = dense ? workload_linear_params_layer(m, false)
                           : (double)m->hidden * m->head_dim * (2.0 * m->heads + 2.0 * m->kv_heads);
    double gemm_io = tokens * ((hid + qw + 2 * kvw) + (qw + hid)), bytes;

    if (dense)
        gemm_io += tokens * ((hid + (workload_mlp_matrices(m) - 1.0) * m->ffn_hidden / tp) +
                             ((double)m->ffn_hidden / tp + hid));
    bytes = elem * (8 * passes * tokens * hid + (2 * passes - mbs) * (gemm_io + weights / tp) +
                    (every_weight_trains ? passes * weights / tp : 0));
    if (s->train.offload == OFFLOAD_NONE || s->train.offload == OFFLOAD_PARAMS_ONLY)
        bytes += 4 * workload_params_trainable(s) / s->gpus;
    return bytes;
}

int cfg_check_step_range(struct scenario *s, struct cfg_error *err)
{
    const struct model *m = &s->model;
    const struct efficiency *e = &s->hw.eff;
    const struct host_cfg *h = &s->host;
    int pp = s->par.pp > 0 ? s->par.pp : 1, dp = s->par.dp > 0 ? s->par.dp : 1;
    double overhead_s = (double)s->sim.step_overhead / NS_PER_S;
    double mbs = (double)s->train.global_batch / ((double)s->train.micro_batch * dp);
    double passes = mbs * ((m->layers + pp - 1) / pp); /* layer forwards on the busiest GPU */
    double bytes = gpu_bytes(s, passes, mbs), rate = s->hw.gpu.mem_bw_Bps * e->mem_bw;
    struct step_term t[3];
    char v[48];
    int rc;

    /* the GPU's stream: norms' launches, GEMMs' latencies, the bytes they move */
    term_time(&t[0], "hardware.efficiency.launch", e->launch, 4 * passes, "memory-bound kernel");
    term_time(&t[1], "hardware.efficiency.gemm_latency", e->gemm_latency,
              (m->moe.experts > 0 ? 2 : 4) * (2 * passes - mbs), "GEMM");
    t[2].key = e->mem_bw < 0.1 ? "hardware.efficiency.mem_bw" : "hardware.gpu.memory_bandwidth";
    t[2].s = rate > 0 ? bytes / rate : 0; /* 0: a struct built in code, no efficiency given */
    t[2].usual = rate >= 1e10;            /* 10 GB/s: below any GPU's memory since 2005 */
    units_format(rate, UNIT_BANDWIDTH, v, sizeof(v));
    snprintf(t[2].what, sizeof(t[2].what),
             "a memory bandwidth of %s (memory_bandwidth x efficiency.mem_bw) for %.3g B on the "
             "busiest GPU",
             v, bytes);
    rc = check_terms(s, passes, t, 3, overhead_s, "memory-bound kernels and GEMMs", err);
    /* the host's stream: an eager job issuing the layers */
    if (rc == 0 && !s->train.compile && !(h->jitter > 0)) {
        term_time(&t[0], "host.kernel_launch", h->kernel_launch, 12 * passes, "kernel");
        term_time(&t[1], "host.python_op", h->python_op, 19 * passes, "Python op");
        term_time(&t[2], "host.autograd_node", h->autograd_node, 8 * passes, "autograd node");
        rc = check_terms(s, passes, t, 3, overhead_s, "the host issuing the layers", err);
    }
    /* the CPU optimizer */
    if (rc == 0 && s->train.offload != OFFLOAD_NONE && s->train.offload != OFFLOAD_PARAMS_ONLY) {
        double params = workload_params_trainable(s) / s->gpus;

        t[0].key = "hardware.node.host.adam_throughput";
        t[0].s = s->hw.host.adam_Pps > 0 ? params / s->hw.host.adam_Pps : 0;
        t[0].usual = s->hw.host.adam_Pps >= 1e7; /* a single core runs Adam faster */
        units_format(s->hw.host.adam_Pps, UNIT_RATE, v, sizeof(v));
        snprintf(t[0].what, sizeof(t[0].what),
                 "a CPU Adam throughput of %s for %.3g trainable parameters per GPU", v, params);
        rc = check_terms(s, passes, t, 1, overhead_s, "the offloaded optimizer step", err);
    }
    return rc > 0 ? overhead_fail(s, err) : rc;
}
