/*
 * plan_knobs.c - what `simtrain plan` varies beside the parallel layout (plan.h): the
 * recompute policies, CPU offload of model states and of activations, and the
 * communication-overlap options, which values of each
 * apply to a layout, which one is tried first, and the "changed from the scenario" text.
 *
 * A knob's values are tried in the table's order with the preferred value first: the fastest
 * (no offload, overlap on, prefetch on). The others trade time for memory (offload moves model
 * states to the host; without overlap DeepSpeed keeps one gradient bucket instead of two;
 * without prefetch FSDP holds fewer gathered units), so plan estimates them only for a layout
 * whose preferred setting does not fit (plan.c).
 *
 * Adding a knob: a row of plan_knobs[] (its values, when each applies, how it is set and
 * read) and an enum plan_knob_id; adding a value to a knob (a framework's recompute policy):
 * a name in its row and a case in its valid() and set().
 */
#include "whatif/plan.h"

#include <string.h>

#include "model/memory.h"
#include "run/run.h"
#include "strategy/rules.h"

/* ---- recompute: the policies of the scenario's framework, a list that grows --------------- */

const int plan_recompute_policies[] = { RC_NONE, RC_SELECTIVE, RC_FULL };
const int plan_n_recompute_policies =
    (int)(sizeof(plan_recompute_policies) / sizeof(plan_recompute_policies[0]));

/* ---- the knobs ------------------------------------------------------------------------------ */

static bool always(const struct scenario *s)
{
    (void)s;
    return true;
}

/* Offload: none everywhere; the optimizer states with a ZeRO stage (ZeRO-Offload), the
 * parameters too with ZeRO-3 or FSDP (ZeRO-Infinity's CPU tier, FSDP CPUOffload): the
 * loader's rules (config/check.c). */
static bool offload_valid(const struct scenario *s, int v)
{
    enum sharding sh = s->par.sharding;

    switch (v) {
    case OFFLOAD_NONE:
        return true;
    case OFFLOAD_OPTIMIZER:
        return sh == SHARD_ZERO1 || sh == SHARD_ZERO2 || sh == SHARD_ZERO3;
    case OFFLOAD_PARAMS:
        return sh == SHARD_ZERO3 || sh == SHARD_FSDP || sh == SHARD_FSDP_GRAD_OP ||
               sh == SHARD_HSDP;
    default:
        return false;
    }
}
static void offload_set(struct scenario *s, int v)
{
    s->train.offload = (enum offload)v;
}
static int offload_get(const struct scenario *s)
{
    return s->train.offload;
}

/* Transformer Engine's userbuffers overlap of the TP collectives: Megatron, with sequence
 * parallelism (arguments.py). */
static bool tp_overlap_relevant(const struct scenario *s)
{
    return s->par.tp > 1;
}
static bool tp_overlap_valid(const struct scenario *s, int v)
{
    return !v || (s->par.sequence_parallel && scenario_framework(s) == FW_MEGATRON);
}
static void tp_overlap_set(struct scenario *s, int v)
{
    s->par.tp_comm_overlap = v;
}
static int tp_overlap_get(const struct scenario *s)
{
    return s->par.tp_comm_overlap;
}

static bool has_dp(const struct scenario *s)
{
    return (long)s->par.dp * s->par.cp > 1;
}

/* DDP's (and Megatron's) gradient all-reduce during backward (ddp.c). */
static bool ddp_overlap_relevant(const struct scenario *s)
{
    return rules_dp_impl(s) == DPI_DDP && has_dp(s);
}
static bool any_value(const struct scenario *s, int v)
{
    (void)s;
    (void)v;
    return true;
}
static void ddp_overlap_set(struct scenario *s, int v)
{
    s->ddp.overlap = v;
}
static int ddp_overlap_get(const struct scenario *s)
{
    return s->ddp.overlap;
}

/* DeepSpeed's overlap_comm: reductions on a side stream, two gradient buckets (zero.c). */
static bool zero_overlap_relevant(const struct scenario *s)
{
    enum dp_impl d = rules_dp_impl(s);

    return (d == DPI_ZERO12 || d == DPI_ZERO3) && has_dp(s);
}
static void zero_overlap_set(struct scenario *s, int v)
{
    s->zero.overlap_comm = v;
}
static int zero_overlap_get(const struct scenario *s)
{
    return s->zero.overlap_comm;
}

/* FSDP (version 1) prefetch: backward_prefetch and forward_prefetch (fsdp.c); FSDP2 always
 * prefetches, NO_SHARD gathers nothing. */
static bool fsdp_prefetch_relevant(const struct scenario *s)
{
    return rules_dp_impl(s) == DPI_FSDP && s->par.sharding != SHARD_FSDP_NO_SHARD &&
           s->fsdp.version == 1 && has_dp(s);
}
static void bwd_prefetch_set(struct scenario *s, int v)
{
    s->fsdp.backward_prefetch = (enum backward_prefetch)v;
}
static int bwd_prefetch_get(const struct scenario *s)
{
    return s->fsdp.backward_prefetch;
}
static void fwd_prefetch_set(struct scenario *s, int v)
{
    s->fsdp.forward_prefetch = v;
}
static int fwd_prefetch_get(const struct scenario *s)
{
    return s->fsdp.forward_prefetch;
}

/* Activation offload (training.activation_offload): the saved tensors of each layer copied to
 * the host on a side stream and back before its backward (TRL / torchtune OffloadActivations,
 * Axolotl offload_activations). plan tries the side-stream copies only: the compute-stream
 * variant moves the same bytes, slower. */
static bool act_offload_valid(const struct scenario *s, int v)
{
    return v == ACT_OFFLOAD_NONE || (v == ACT_OFFLOAD_STREAMS && s->hw.pcie.bw_Bps > 0);
}
static void act_offload_set(struct scenario *s, int v)
{
    s->train.activation_offload = (enum act_offload)v;
}
static int act_offload_get(const struct scenario *s)
{
    return s->train.activation_offload;
}

const struct plan_knob plan_knobs[PK_COUNT] = {
    [PK_OFFLOAD] = { "offload",
                     3,
                     { "none", "optimizer", "params" },
                     OFFLOAD_NONE,
                     always,
                     offload_valid,
                     offload_set,
                     offload_get,
                     true },
    [PK_TP_OVERLAP] = { "tp_comm_overlap",
                        2,
                        { "off", "on" },
                        1,
                        tp_overlap_relevant,
                        tp_overlap_valid,
                        tp_overlap_set,
                        tp_overlap_get,
                        true },
    [PK_DDP_OVERLAP] = { "ddp.overlap",
                         2,
                         { "off", "on" },
                         1,
                         ddp_overlap_relevant,
                         any_value,
                         ddp_overlap_set,
                         ddp_overlap_get,
                         false },
    [PK_ZERO_OVERLAP] = { "zero.overlap_comm",
                          2,
                          { "off", "on" },
                          1,
                          zero_overlap_relevant,
                          any_value,
                          zero_overlap_set,
                          zero_overlap_get,
                          false },
    [PK_BWD_PREFETCH] = { "fsdp.backward_prefetch",
                          3,
                          { "pre", "post", "none" },
                          BWD_PREFETCH_PRE,
                          fsdp_prefetch_relevant,
                          any_value,
                          bwd_prefetch_set,
                          bwd_prefetch_get,
                          false },
    [PK_FWD_PREFETCH] = { "fsdp.forward_prefetch",
                          2,
                          { "off", "on" },
                          1,
                          fsdp_prefetch_relevant,
                          any_value,
                          fwd_prefetch_set,
                          fwd_prefetch_get,
                          false },
    [PK_ACT_OFFLOAD] = { "activation_offload",
                         3,
                         { "none", "streams", "sync" },
                         ACT_OFFLOAD_NONE,
                         always,
                         act_offload_valid,
                         act_offload_set,
                         act_offload_get,
                         true },
};

int plan_knob_values(const struct scenario *s, int k, int *vals)
{
    const struct plan_knob *kn = &plan_knobs[k];
    int n = 0;

    if (!kn->relevant(s))
        return 0;
    if (kn->valid(s, kn->preferred))
        vals[n++] = kn->preferred;
    for (int v = 0; v < kn->nvalues; v++)
        if (v != kn->preferred && kn->valid(s, v))
            vals[n++] = v;
    return n;
}

void plan_knobs_apply(const unsigned char *knob, struct scenario *s)
{
    for (int k = 0; k < PK_COUNT; k++)
        if (knob[k] > 0)
            plan_knobs[k].set(s, knob[k] - 1);
}

bool plan_knobs_need_check(const unsigned char *knob, const struct scenario *s)
{
    for (int k = 0; k < PK_COUNT; k++)
        if (knob[k] > 0 && plan_knobs[k].checked && knob[k] - 1 != plan_knobs[k].get(s))
            return true;
    return false;
}

/* ---- what a candidate changed ------------------------------------------------------------ */

#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (len < n)                                                                               \
            len += (size_t)snprintf(buf + len, n - len, "%s", len ? ", " : "");                    \
        if (len < n)                                                                               \
            len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__);                              \
    } while (0)

void plan_changes(const struct scenario *b, const struct scenario *d, const struct scenario *c,
                  char *buf, size_t n)
{
    const struct parallelism *p = &c->par, *q = &b->par;
    size_t len = 0;

    buf[0] = '\0';
    if (c->gpus != b->gpus)
        ADD("gpus=%d", c->gpus);
    if (p->tp != q->tp)
        ADD("tp=%d", p->tp);
    if (p->pp != q->pp)
        ADD("pp=%d", p->pp);
    if (p->vpp != q->vpp && p->pp > 1)
        ADD("vpp=%d", p->vpp);
    if (p->cp != q->cp)
        ADD("cp=%d", p->cp);
    if (p->ep != q->ep)
        ADD("ep=%d", p->ep);
    if (p->dp != q->dp)
        ADD("dp=%d", p->dp);
    if (p->sequence_parallel != q->sequence_parallel)
        ADD("sp=%s", p->sequence_parallel ? "on" : "off");
    if (p->pp > 1 && p->schedule != q->schedule)
        ADD("schedule=%s", schedule_name(p->schedule));
    if (p->sharding != q->sharding)
        ADD("sharding=%s", sharding_name(p->sharding));
    if (c->train.micro_batch != b->train.micro_batch)
        ADD("mb=%d", c->train.micro_batch);
    if (c->train.recompute != b->train.recompute)
        ADD("recompute=%s", recompute_name(c->train.recompute));
    for (int k = 0; k < PK_COUNT; k++) {
        const struct plan_knob *kn = &plan_knobs[k];
        int v = kn->get(c);
        if (v != kn->get(d) && kn->relevant(c) && v >= 0 && v < kn->nvalues)
            ADD("%s=%s", kn->name, kn->values[v]);
    }
    if (!len)
        snprintf(buf, n, "(as configured)");
}
#undef ADD

/* ---- what offload needs of the host ------------------------------------------------------- */

static double gpus_per_node(const struct scenario *s)
{
    return s->gpus < s->hw.gpus_per_node ? s->gpus : s->hw.gpus_per_node;
}

double plan_host_bytes_node(const struct scenario *s)
{
    struct param_roles r;

    if (s->train.offload == OFFLOAD_NONE &&
        !(s->train.finetune == FT_QLORA && s->train.lora.paged_optimizer))
        return 0;
    memory_model_roles(s, &r);
    return memory_host_bytes(s, &r) / ((double)s->par.tp * s->par.pp) * gpus_per_node(s);
}

void plan_offload_needs(const struct scenario *s, const struct run *r, struct plan_needs *out)
{
    const struct metrics_dp *dp = &run_metrics(r)->dp;
    struct param_roles roles;
    double step = r->step_s > 0 ? r->step_s : 1, stepped;

    memset(out, 0, sizeof(*out));
    out->h2d_bytes = dp->h2d_bytes;
    out->d2h_bytes = dp->d2h_bytes;
    out->pcie_need_Bps = (dp->h2d_bytes > dp->d2h_bytes ? dp->h2d_bytes : dp->d2h_bytes) / step;
    out->pcie_Bps = s->hw.pcie.bw_Bps;
    out->exposed_s = dp->offload_s;
    out->host_bytes_node = plan_host_bytes_node(s);
    out->host_capacity = s->hw.host.mem_bytes;
    /* The CPU optimizer reads and writes its states for the parameters each GPU steps (the
     * rank's shard), and the copies land in host memory too. */
    memory_model_roles(s, &roles);
    stepped = roles.trainable / ((double)s->par.tp * s->par.pp) / memory_shard_degree(s);
    out->host_bw_need_Bps =
        (stepped * memory_optimizer_traffic(s) + dp->h2d_bytes + dp->d2h_bytes) * gpus_per_node(s) /
        step;
    out->host_bw_Bps = s->hw.host.mem_bw_Bps;
}
