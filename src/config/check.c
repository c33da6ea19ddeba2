/*
 * check.c - defaults for scenarios built in code, derived values, and
 * the cross-field rules of docs/yaml-reference.md ("Cross-field rules").
 *
 * scenario_finalize() works on the typed struct alone (no YAML), so sweep and
 * plan can mutate a copy and re-check it cheaply. It never trusts the struct:
 * every divisor is checked first, and products of degrees are computed in
 * 64 bits with saturation, so any input gives an error rather than a crash.
 */
#include "config/config.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "base/units.h"
#include "config/schema.h"
#include "model/attn_table.h"
#include "model/cost.h"
#include "model/layout.h"
#include "model/partition.h"
#include "model/workload.h"
#include "net/collective.h"
#include "strategy/rules.h"

#define PRODUCT_CAP ((int64_t)1 << 50) /* saturation of degree products */

/* See config.h. */
int cfg_fail(struct cfg_error *err, const char *path, const char *fmt, ...)
{
    va_list ap;

    snprintf(err->path, sizeof(err->path), "%s", path);
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

static int64_t mul(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0)
        return 0;
    return a > PRODUCT_CAP / b ? PRODUCT_CAP : a * b;
}

static const char *hw_name(const struct hardware *hw)
{
    return hw->name && *hw->name ? hw->name : "(unnamed)";
}

void scenario_defaults(struct scenario *s)
{
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < schema_scenario.nfields; i++) {
        const struct field *f = &schema_scenario.fields[i];

        if (f->type == FT_SECTION)
            schema_defaults(f->sub, (char *)s + f->off, NULL);
    }
    s->name = "";
    s->path = "";
    s->description = "";
}

void cfg_derive_defaults(struct scenario *s, unsigned given)
{
    enum dtype p = s->train.precision;
    enum dtype mp = p == DT_FP32 || p == DT_FP16 ? p : DT_BF16; /* fp8 training keeps bf16 */

    if (!(given & GIVEN_LORA_ALPHA))
        s->train.lora.alpha = 2.0 * s->train.lora.rank;
    if (!(given & GIVEN_PARAM_DTYPE))
        s->fsdp.param_dtype = mp;
    if (!(given & GIVEN_REDUCE_DTYPE))
        s->fsdp.reduce_dtype = mp;
    if (!(given & GIVEN_BUFFER_DTYPE))
        s->fsdp.buffer_dtype = mp;
    /*
     * DeepSpeed: overlap_comm defaults to true only for stage 3 (formulas.md §2.3); the
     * 2021 releases that gathered per parameter defaulted it to false for every stage
     * (constants.py ZERO_OPTIMIZATION_OVERLAP_COMM_DEFAULT = False).
     */
    if (!(given & GIVEN_OVERLAP_COMM))
        s->zero.overlap_comm =
            s->par.sharding == SHARD_ZERO3 && s->zero.stage3_gather != ZERO3_GATHER_PER_PARAM_SYNC;
    /*
     * Megatron-LM: overlap_grad_reduce defaults to False (formulas.md §3.1); KOR22 §6.3 ran
     * without overlapping the gradient all-reduce. DeepSpeed's engine at ZeRO stage 0 reduces
     * after backward (strategy/rules.c rules_deepspeed_engine_ddp). PyTorch DDP always overlaps.
     */
    if (!(given & GIVEN_DDP_OVERLAP))
        s->ddp.overlap = !scenario_megatron_ddp(s) && !rules_deepspeed_engine_ddp(s);
    /* FP8 without a named recipe: Transformer Engine's default, delayed scaling. */
    if (!(given & GIVEN_FP8_RECIPE))
        s->train.fp8_recipe = p == DT_FP8 ? FP8_TE_DELAYED : FP8_NONE;
}

void cfg_read_words(struct scenario *s, unsigned given)
{
    struct parallelism *p = &s->par;
    enum zero2_impl z = p->zero2_impl;

    if (p->sharding != SHARD_ZERO2)
        return;
    /* Without a profile, pipelining takes FSDP2 (torch.distributed.pipelining drives FSDP2
       modules; DeepSpeed's pipeline engine refuses stage 2): the Llama 3 paper's reading
       (arXiv:2407.21783 §3.3.2, no reshard after forward under PP). */
    if (z == Z2_AUTO)
        z = s->fw.nsettings == 0 && p->pp > 1 ? Z2_FSDP : Z2_DEEPSPEED;
    if (z != Z2_FSDP)
        return;
    p->sharding = SHARD_FSDP_GRAD_OP;
    p->zero2_read = true;
    if (p->pp > 1 && !(given & GIVEN_FSDP_VERSION))
        s->fsdp.version = 2;
}

/* ---- model --------------------------------------------------------------------------------- */

static int positive(struct cfg_error *err, const char *path, const char *name, int v)
{
    if (v < 1)
        return cfg_fail(err, path, "%s (%d) must be positive", name, v);
    return 0;
}

static int check_moe(struct model *m, struct cfg_error *err)
{
    struct moe_spec *e = &m->moe;

    if (e->experts < 0)
        return cfg_fail(err, "workload.moe.experts", "moe.experts (%d) must not be negative",
                        e->experts);
    if (e->experts == 0)
        return 0;
    if (e->topk < 1 || e->topk > e->experts)
        return cfg_fail(err, "workload.moe.topk",
                        "moe.topk (%d) must be between 1 and moe.experts (%d)", e->topk,
                        e->experts);
    if (e->ffn_hidden == 0)
        e->ffn_hidden = m->ffn_hidden;
    if (e->layer_freq == 0)
        e->layer_freq = 1;
    if (positive(err, "workload.moe.ffn_hidden", "moe.ffn_hidden", e->ffn_hidden) ||
        positive(err, "workload.moe.layer_freq", "moe.layer_freq", e->layer_freq))
        return -1;
    if (e->layer_freq > m->layers)
        return cfg_fail(err, "workload.moe.layer_freq", "moe.layer_freq (%d) exceeds layers (%d)",
                        e->layer_freq, m->layers);
    if (e->shared_experts < 0 || !(e->capacity_factor >= 0))
        return cfg_fail(err, "workload.moe",
                        "moe.shared_experts and moe.capacity_factor must not be "
                        "negative");
    return 0;
}

/* Sliding-window attention: a pattern needs a window and must leave some layer windowed. */
static int check_window(const struct model *m, struct cfg_error *err)
{
    if (m->window < 0 || m->window_pattern < 0)
        return cfg_fail(err,
                        m->window < 0 ? "workload.attention_window" : "workload.window_pattern",
                        "attention_window (%d) and window_pattern (%d) must not be negative",
                        m->window, m->window_pattern);
    if (m->window_pattern > 0 && m->window == 0)
        return cfg_fail(
            err, "workload.window_pattern",
            "window_pattern (%d) needs attention_window (the keys a windowed layer sees)",
            m->window_pattern);
    if (m->window_pattern == 1)
        return cfg_fail(err, "workload.window_pattern",
                        "window_pattern 1 makes every layer global; drop attention_window instead");
    return 0;
}

int cfg_model_finalize(struct model *m, struct cfg_error *err)
{
    if (positive(err, "workload.layers", "layers", m->layers) ||
        positive(err, "workload.hidden", "hidden", m->hidden) ||
        positive(err, "workload.heads", "heads", m->heads) ||
        positive(err, "workload.vocab", "vocab", m->vocab))
        return -1;
    if (m->kv_heads == 0)
        m->kv_heads = m->heads;
    if (m->kv_heads < 0 || m->heads % m->kv_heads)
        return cfg_fail(err, "workload.kv_heads", "kv_heads (%d) does not divide heads (%d)",
                        m->kv_heads, m->heads);
    if (m->head_dim == 0) {
        if (m->hidden % m->heads)
            return cfg_fail(err, "workload.heads",
                            "heads (%d) does not divide hidden (%d); set head_dim", m->heads,
                            m->hidden);
        m->head_dim = m->hidden / m->heads;
    }
    if (m->ffn_hidden == 0) {
        if (m->hidden > INT_MAX / 4)
            return cfg_fail(err, "workload.hidden",
                            "hidden (%d) is too large for the default "
                            "ffn_hidden (4 * hidden)",
                            m->hidden);
        m->ffn_hidden = 4 * m->hidden;
    }
    if (positive(err, "workload.head_dim", "head_dim", m->head_dim) ||
        positive(err, "workload.ffn_hidden", "ffn_hidden", m->ffn_hidden))
        return -1;
    if (m->max_seq < 0)
        return cfg_fail(err, "workload.max_seq", "max_seq (%d) must be positive", m->max_seq);
    if (check_window(m, err))
        return -1;
    return check_moe(m, err);
}

/* ---- cluster and layout -----------------------------------------------------------------------
 */

static int derive_cluster(struct scenario *s, struct cfg_error *err)
{
    const struct hardware *hw = &s->hw;
    int gpn = hw->gpus_per_node;
    int64_t cap;

    if (gpn < 1)
        return cfg_fail(err, "hardware.node.gpus", "hardware '%s' has no GPUs per node",
                        hw_name(hw));
    if (s->nodes < 0 || s->gpus < 0)
        return cfg_fail(err, s->nodes < 0 ? "cluster.nodes" : "cluster.gpus",
                        "nodes (%d) and gpus (%d) must be positive", s->nodes, s->gpus);
    if (s->nodes == 0)
        s->nodes = s->gpus > 0 ? (int)div_ceil(s->gpus, gpn) : hw->nodes > 0 ? hw->nodes : 1;
    cap = mul(s->nodes, gpn);
    if (s->gpus == 0) {
        if (cap > INT_MAX)
            return cfg_fail(err, "cluster.nodes", "nodes * GPUs per node (%d * %d) is too large",
                            s->nodes, gpn);
        s->gpus = (int)cap;
    } else if (s->gpus > cap) {
        return cfg_fail(err, "cluster.gpus",
                        "gpus (%d) exceeds nodes * GPUs per node (%d * %d = %lld)", s->gpus,
                        s->nodes, gpn, (long long)cap);
    } else if (s->nodes > 1 && s->gpus != cap) {
        return cfg_fail(err, "cluster.gpus",
                        "gpus (%d) must fill every node when the job spans %d nodes (%lld GPUs)",
                        s->gpus, s->nodes, (long long)cap);
    }
    if (s->nodes > 1 && (hw->net.nics_per_node < 1 || !(hw->net.nic_bw_Bps > 0)))
        return cfg_fail(err, "cluster.nodes",
                        "the job spans %d nodes but hardware '%s' has no network", s->nodes,
                        hw_name(hw));
    return 0;
}

static int check_degrees(const struct parallelism *p, struct cfg_error *err)
{
    static const char *const order_names[DIM_COUNT] = { "tp", "cp", "ep", "dp", "pp" };
    unsigned seen = 0;

    if (positive(err, "parallelism.tp", "tp", p->tp) ||
        positive(err, "parallelism.pp", "pp", p->pp) ||
        positive(err, "parallelism.cp", "cp", p->cp) ||
        positive(err, "parallelism.ep", "ep", p->ep) ||
        positive(err, "parallelism.vpp", "vpp", p->vpp))
        return -1;
    if (p->dp < 0)
        return cfg_fail(err, "parallelism.dp", "dp (%d) must be positive", p->dp);
    for (int i = 0; i < DIM_COUNT; i++)
        if (p->order[i] >= 0 && p->order[i] < DIM_COUNT)
            seen |= 1u << p->order[i];
    if (seen != (1u << DIM_COUNT) - 1)
        return cfg_fail(err, "parallelism.order",
                        "order must name each of %s, %s, %s, %s and %s once", order_names[0],
                        order_names[1], order_names[2], order_names[3], order_names[4]);
    return 0;
}

static int derive_layout(struct scenario *s, struct cfg_error *err)
{
    struct parallelism *p = &s->par;
    int64_t tpc, total;

    if (check_degrees(p, err))
        return -1;
    tpc = mul(mul(p->tp, p->pp), p->cp);
    if (p->dp == 0) {
        if (tpc > s->gpus || s->gpus % tpc)
            return cfg_fail(err, "parallelism.tp",
                            "tp * pp * cp (%d * %d * %d = %lld) does not divide the GPU count (%d)",
                            p->tp, p->pp, p->cp, (long long)tpc, s->gpus);
        p->dp = (int)(s->gpus / tpc);
    }
    total = mul(p->dp, tpc);
    if (total != s->gpus)
        return cfg_fail(
            err, "parallelism.dp",
            "dp * tp * pp * cp = %d * %d * %d * %d = %s%lld does not match the GPU count "
            "(%d)",
            p->dp, p->tp, p->pp, p->cp, total >= PRODUCT_CAP ? "more than " : "", (long long)total,
            s->gpus);
    if (p->dp % p->ep)
        return cfg_fail(err, "parallelism.ep", "ep (%d) does not divide dp (%d)", p->ep, p->dp);
    return 0;
}

static int check_model_split(struct scenario *s, struct cfg_error *err)
{
    struct parallelism *p = &s->par;
    const struct model *m = &s->model;
    int64_t stages = mul(p->pp, p->vpp);

    if (p->ep > 1 && m->moe.experts == 0)
        return cfg_fail(err, "parallelism.ep",
                        "ep (%d) needs a mixture-of-experts workload ('%s' has "
                        "no moe section)",
                        p->ep, m->name ? m->name : "?");
    if (p->ep > 1 && m->moe.experts % p->ep)
        return cfg_fail(err, "parallelism.ep", "ep (%d) does not divide moe.experts (%d)", p->ep,
                        m->moe.experts);
    if (m->heads % p->tp)
        return cfg_fail(err, "parallelism.tp", "tp (%d) does not divide heads (%d)", p->tp,
                        m->heads);
    if (m->kv_heads % p->tp)
        return cfg_fail(err, "parallelism.tp", "tp (%d) does not divide kv_heads (%d)", p->tp,
                        m->kv_heads);
    if (p->vpp > 1 && p->pp == 1)
        return cfg_fail(err, "parallelism.vpp", "vpp (%d) needs pp > 1", p->vpp);
    /* Otherwise the embedding and the loss count as one layer each (Megatron's
       account_for_embedding/loss_in_pipeline_split; Llama 3 405B, 126 layers on 16 stages). */
    if ((p->first_stage_layers > 0 || p->last_stage_layers > 0) && p->pp == 1)
        return cfg_fail(err,
                        p->first_stage_layers > 0 ? "parallelism.first_stage_layers"
                                                  : "parallelism.last_stage_layers",
                        "first_stage_layers and last_stage_layers need pp > 1");
    if (p->first_stage_layers == 0 && p->last_stage_layers == 0 && m->layers % stages &&
        (p->pp == 1 || (p->pp_split == SPLIT_AUTO && (m->layers + 2) % stages))) {
        if (p->vpp > 1)
            return cfg_fail(err, "parallelism.pp",
                            "pp * vpp (%d * %d = %lld) divides neither layers (%d) nor layers + 2 "
                            "(embedding and loss counted as layers)",
                            p->pp, p->vpp, (long long)stages, m->layers);
        if (p->pp == 1)
            return cfg_fail(err, "parallelism.pp", "pp (%d) does not divide layers (%d)", p->pp,
                            m->layers);
        return cfg_fail(err, "parallelism.pp",
                        "pp (%d) divides neither layers (%d) nor layers + 2 (embedding and loss "
                        "counted as layers)",
                        p->pp, m->layers);
    }
    {
        char why[160];
        if (pp_check(s, why, sizeof(why)) != 0)
            return cfg_fail(err,
                            p->first_stage_layers > 0   ? "parallelism.first_stage_layers"
                            : p->last_stage_layers > 0  ? "parallelism.last_stage_layers"
                            : p->pp_split != SPLIT_AUTO ? "parallelism.pp_split"
                                                        : "parallelism.pp",
                            "%s", why);
    }
    if (p->vpp > 1 && p->schedule == SCHED_1F1B)
        p->schedule = SCHED_INTERLEAVED;
    if (p->vpp > 1 && p->schedule != SCHED_INTERLEAVED)
        return cfg_fail(err, "parallelism.schedule",
                        "schedule '%s' cannot use vpp > 1 (use 'interleaved')",
                        schedule_name(p->schedule));
    if (p->schedule == SCHED_INTERLEAVED && p->vpp == 1)
        return cfg_fail(err, "parallelism.schedule", "schedule 'interleaved' needs vpp > 1");
    return 0;
}

static int check_batch(struct scenario *s, struct cfg_error *err)
{
    const struct parallelism *p = &s->par;
    const struct training *t = &s->train;
    const struct model *m = &s->model;
    int64_t per_step, micro;

    if (positive(err, "training.seq_len", "seq_len", t->seq_len) ||
        positive(err, "training.global_batch", "global_batch", t->global_batch) ||
        positive(err, "training.micro_batch", "micro_batch", t->micro_batch))
        return -1;
    per_step = mul(t->micro_batch, p->dp);
    if (t->global_batch % per_step)
        return cfg_fail(err, "training.global_batch",
                        "micro_batch * dp (%d * %d = %lld) does not divide global_batch (%d)",
                        t->micro_batch, p->dp, (long long)per_step, t->global_batch);
    micro = t->global_batch / per_step;
    if (p->schedule == SCHED_INTERLEAVED && micro % p->pp)
        return cfg_fail(err, "parallelism.schedule",
                        "interleaved schedule needs the micro-batch count per step (%lld) to be a "
                        "multiple of pp (%d)",
                        (long long)micro, p->pp);
    if (p->cp > 1 && t->seq_len % (2 * (int64_t)p->cp))
        return cfg_fail(err, "parallelism.cp", "seq_len (%d) is not divisible by 2 * cp (%lld)",
                        t->seq_len, 2 * (long long)p->cp);
    if (p->sequence_parallel && p->tp == 1)
        return cfg_fail(err, "parallelism.sequence_parallel", "sequence_parallel needs tp > 1");
    if (p->sequence_parallel && t->seq_len % p->tp)
        return cfg_fail(err, "training.seq_len",
                        "seq_len (%d) is not divisible by tp (%d) as sequence parallelism needs",
                        t->seq_len, p->tp);
    if (p->sequence_parallel && p->cp > 1 && (t->seq_len / p->cp) % p->tp)
        return cfg_fail(
            err, "training.seq_len",
            "seq_len / cp (%d / %d) is not divisible by tp (%d) as sequence parallelism "
            "needs",
            t->seq_len, p->cp, p->tp);
    /* Megatron MoE README: "When using MoE with expert parallelism and tensor parallelism,
       sequence parallelism must be enabled". */
    if (p->ep > 1 && p->tp > 1 && !p->sequence_parallel)
        return cfg_fail(err, "parallelism.ep", "ep (%d) with tp (%d) needs sequence_parallel",
                        p->ep, p->tp);
    /* Megatron arguments.py: TP communication overlap needs sequence parallelism. */
    if (p->tp_comm_overlap && !p->sequence_parallel)
        return cfg_fail(err, "parallelism.tp_comm_overlap",
                        "tp_comm_overlap needs sequence_parallel");
    /* Megatron's distributed optimizer (zero1) works on its own DDP's gradient buffer. */
    if (s->ddp.impl == DDP_IMPL_PYTORCH && p->sharding != SHARD_NONE)
        return cfg_fail(err, "ddp.impl",
                        "ddp.impl pytorch reduces unsharded gradients; sharding is %s",
                        sharding_name(p->sharding));
    if (s->ddp.impl == DDP_IMPL_MEGATRON && p->sharding != SHARD_NONE &&
        !(p->sharding == SHARD_ZERO1 && scenario_framework(s) == FW_MEGATRON))
        return cfg_fail(err, "ddp.impl",
                        "ddp.impl megatron runs with sharding none, or zero1 under the megatron "
                        "framework (its distributed optimizer), not %s",
                        sharding_name(p->sharding));
    if (m->pos == POS_LEARNED && m->max_seq > 0 && t->seq_len > m->max_seq)
        return cfg_fail(err, "training.seq_len",
                        "seq_len (%d) exceeds the workload's max_seq (%d) for learned positions",
                        t->seq_len, m->max_seq);
    return 0;
}

static bool shards_grads(enum sharding sh)
{
    return sh == SHARD_ZERO2 || sh == SHARD_ZERO3 || sh == SHARD_FSDP || sh == SHARD_FSDP_GRAD_OP ||
           sh == SHARD_HSDP;
}

/* The features imported configs use (issue 16): offload_param alone, LLM.int8, saved modules, DoRA.
 */
static int check_adapter_features(const struct scenario *s, struct cfg_error *err)
{
    const struct training *t = &s->train;

    if (t->offload == OFFLOAD_PARAMS_ONLY && s->par.sharding != SHARD_ZERO3)
        return cfg_fail(err, "training.offload",
                        "offload 'params_only' needs sharding zero3 (DeepSpeed offload_param is a "
                        "stage 3 feature)");
    if (t->finetune == FT_LORA_INT8 && !(s->hw.gpu.flops[DT_INT8] > 0))
        return cfg_fail(
            err, "training.finetune",
            "finetune 'lora_int8' needs the hardware's int8 peak (gpu.flops.int8 of '%s')",
            hw_name(&s->hw));
    if (t->finetune == FT_FULL && t->lora.modules_to_save)
        return cfg_fail(err, "training.lora.modules_to_save",
                        "lora.modules_to_save needs finetune lora, qlora or lora_int8");
    if (t->finetune == FT_FULL && t->lora.dora)
        return cfg_fail(err, "training.lora.dora",
                        "lora.dora needs finetune lora, qlora or lora_int8");
    return 0;
}

static int check_memory_features(struct scenario *s, struct cfg_error *err)
{
    const struct parallelism *p = &s->par;
    const struct training *t = &s->train;
    enum sharding sh = p->sharding;

    if (shards_grads(sh) && p->pp > 1) {
        bool fsdp = sh == SHARD_FSDP || sh == SHARD_FSDP_GRAD_OP || sh == SHARD_HSDP;

        /* torch.distributed.pipelining drives FSDP2 modules only (stage.py
           backward_maybe_with_nosync: FSDPModule); DeepSpeed's PipelineEngine asserts
           zero_optimization_stage() < 2 (deepspeed/runtime/pipe/engine.py L78 @v0.16.0). */
        if (fsdp && s->fsdp.version == 1)
            return cfg_fail(
                err, "parallelism.sharding",
                "FSDP1 (fsdp.version 1) has no pipeline-parallel composition; with pp > 1 "
                "FSDP is FSDP2 under torch.distributed.pipelining (fsdp.version 2, as "
                "torchtitan)");
        if (!fsdp)
            return cfg_fail(err, "parallelism.sharding",
                            "sharding '%s' as DeepSpeed's stage cannot be combined with pp > 1 "
                            "(its pipeline engine allows ZeRO stages 0 and 1); PyTorch shards "
                            "gradients under pipelining with FSDP2: sharding fsdp, or zero2 with "
                            "parallelism.zero2_impl fsdp (no reshard after forward)",
                            sharding_name(sh));
    }
    if (s->fsdp.shard_group < 0)
        return cfg_fail(err, "fsdp.shard_group", "shard_group (%d) must not be negative",
                        s->fsdp.shard_group);
    if (s->fsdp.shard_group > 0 && sh != SHARD_HSDP)
        return cfg_fail(err, "fsdp.shard_group", "fsdp.shard_group needs sharding 'hsdp'");
    if (s->fsdp.shard_group > 0 && (s->fsdp.shard_group > p->dp || p->dp % s->fsdp.shard_group))
        return cfg_fail(err, "fsdp.shard_group", "fsdp.shard_group (%d) does not divide dp (%d)",
                        s->fsdp.shard_group, p->dp);
    if (sh == SHARD_HSDP) {
        /* The shard group is the data-parallel peers on one node (layout.c); the replicate
           group takes one of each, so the shard group must divide dp (PyTorch's 2-D device
           mesh of HYBRID_SHARD). */
        struct layout l;
        layout_init(&l, s);
        if (p->dp % l.hsdp_shard)
            return cfg_fail(
                err, "parallelism.sharding",
                "sharding 'hsdp' needs the data-parallel peers on one node (%d) to divide "
                "dp (%d)",
                l.hsdp_shard, p->dp);
    }
    if (t->offload == OFFLOAD_OPTIMIZER && sh != SHARD_ZERO1 && sh != SHARD_ZERO2 &&
        sh != SHARD_ZERO3)
        return cfg_fail(err, "training.offload",
                        "offload 'optimizer' needs sharding zero1, zero2 or zero3");
    if (t->offload == OFFLOAD_PARAMS && sh != SHARD_ZERO3 && sh != SHARD_FSDP &&
        sh != SHARD_FSDP_GRAD_OP && sh != SHARD_HSDP)
        return cfg_fail(err, "training.offload",
                        "offload 'params' needs sharding zero3, fsdp, fsdp_grad_op or hsdp");
    if (t->trainable_fraction < 1 && t->finetune != FT_FULL)
        return cfg_fail(err, "training.trainable_fraction",
                        "trainable_fraction needs finetune 'full' (adapters freeze the base)");
    if (t->recompute_layers < 0)
        return cfg_fail(err, "training.recompute_layers",
                        "recompute_layers (%d) must not be negative", t->recompute_layers);
    if (t->recompute_layers > 0 && t->recompute != RC_FULL)
        return cfg_fail(err, "training.recompute_layers",
                        "recompute_layers needs recompute 'full'");
    if ((t->recompute_every > 0 || t->recompute_fraction < 1) &&
        !(t->recompute == RC_FULL || (t->recompute == RC_SELECTIVE && t->selective == SEL_BLOCKS)))
        return cfg_fail(err,
                        t->recompute_every > 0 ? "training.recompute_every"
                                               : "training.recompute_fraction",
                        "recompute_every and recompute_fraction choose whole blocks: they need "
                        "recompute 'full', or 'selective' with selective_policy 'blocks'");
    if ((t->recompute_every > 0 || t->recompute_fraction < 1) && t->recompute_layers > 0)
        return cfg_fail(err, "training.recompute_layers",
                        "recompute_layers cannot be combined with recompute_every or "
                        "recompute_fraction");
    if (t->recompute_every > 0 && t->recompute_fraction < 1)
        return cfg_fail(err, "training.recompute_fraction",
                        "recompute_fraction cannot be combined with recompute_every");
    if (t->recompute_layers > s->model.layers / p->pp)
        return cfg_fail(err, "training.recompute_layers",
                        "recompute_layers (%d) exceeds the layers per pipeline stage (%d)",
                        t->recompute_layers, s->model.layers / p->pp);
    if (t->finetune != FT_FULL && !t->lora.targets)
        return cfg_fail(err, "training.lora.targets",
                        "finetune '%s' needs at least one lora target", finetune_name(t->finetune));
    if (t->finetune != FT_FULL && (t->lora.rank < 1 || !(t->lora.alpha > 0)))
        return cfg_fail(err, "training.lora.rank", "lora rank (%d) and alpha (%g) must be positive",
                        t->lora.rank, t->lora.alpha);
    if (!(t->lora.dropout >= 0 && t->lora.dropout <= 1))
        return cfg_fail(err, "training.lora.dropout", "lora dropout (%g) must be between 0 and 1",
                        t->lora.dropout);
    if (t->attention_impl != ATTN_IMPL_CUDA && t->attention != ATTN_FLASH)
        return cfg_fail(err, "training.attention_impl",
                        "attention_impl '%s' needs attention 'flash'",
                        attn_impl_name(t->attention_impl));
    return check_adapter_features(s, err);
}

static bool trains_in(enum dtype d)
{
    return d == DT_BF16 || d == DT_FP16 || d == DT_FP8 || d == DT_FP32;
}

/* nccl.version "MAJOR.MINOR[.PATCH]" into nccl.version (major*10000 + minor*100 + patch). */
static int check_nccl_version(struct scenario *s, struct cfg_error *err)
{
    const char *t = s->nccl.version_text;
    int major = 0, minor = 0, patch = 0, used = 0, more = 0;
    bool ok;

    if (!t)
        return 0;
    ok = sscanf(t, "%d.%d%n", &major, &minor, &used) == 2;
    if (ok && t[used])
        ok = sscanf(t + used, ".%d%n", &patch, &more) == 1 && t[used + more] == '\0';
    if (!ok || major != 2 || minor < 0 || minor > 99 || patch < 0 || patch > 99)
        return cfg_fail(err, "nccl.version",
                        "nccl version '%s' is not a 2.x NCCL release like 2.18.1", t);
    s->nccl.version = major * 10000 + minor * 100 + patch;
    return 0;
}

static int check_hardware_features(struct scenario *s, struct cfg_error *err)
{
    const struct hardware *hw = &s->hw;
    const struct training *t = &s->train;
    enum coll_algo algo = s->nccl.algo;

    if (!trains_in(t->precision))
        return cfg_fail(err, "training.precision", "precision '%s' is not a training precision",
                        dtype_name(t->precision));
    if (t->precision == DT_FP8 && !(hw->gpu.flops[DT_FP8] > 0))
        return cfg_fail(err, "training.precision",
                        "precision 'fp8' needs an fp8 peak in hardware '%s'", hw_name(hw));
    if (t->precision == DT_FP8 && t->fp8_recipe == FP8_NONE)
        return cfg_fail(err, "training.fp8_recipe",
                        "precision 'fp8' needs an fp8_recipe other than 'none'");
    if (t->precision != DT_FP8 && t->fp8_recipe != FP8_NONE)
        return cfg_fail(err, "training.fp8_recipe",
                        "fp8_recipe '%s' needs precision 'fp8' (precision is '%s')",
                        fp8_recipe_name(t->fp8_recipe), dtype_name(t->precision));
    /* FP8 parameters are Transformer Engine's Float8Tensor (fp8_model_init). */
    if (t->fp8_params && t->fp8_recipe != FP8_TE_DELAYED && t->fp8_recipe != FP8_TE_CURRENT)
        return cfg_fail(err, "training.fp8_params",
                        "fp8_params needs precision 'fp8' with a Transformer Engine fp8_recipe "
                        "(te_delayed or te_current), not '%s'",
                        fp8_recipe_name(t->fp8_recipe));
    if (!attn_impl_available(hw->gpu.arch, t->attention_impl))
        return cfg_fail(err, "training.attention_impl",
                        "attention_impl '%s' needs a Hopper GPU (hardware '%s' is %s)",
                        attn_impl_name(t->attention_impl), hw_name(hw), arch_name(hw->gpu.arch));
    if (!coll_algo_available(hw, algo))
        return cfg_fail(err, "nccl.algo",
                        "nccl algo '%s' needs an NVSwitch system of the Hopper generation or later",
                        algo_name(algo));
    return 0;
}

static int check_simulation(struct scenario *s, struct cfg_error *err)
{
    const struct sim_cfg *sim = &s->sim;

    if (sim->straggler_rank < -1)
        return cfg_fail(err, "simulation.straggler_rank",
                        "straggler_rank (%d) must be -1 (none) or a rank", sim->straggler_rank);
    if (sim->straggler_rank >= s->gpus)
        return cfg_fail(err, "simulation.straggler_rank",
                        "straggler_rank (%d) is not below the GPU count (%d)", sim->straggler_rank,
                        s->gpus);
    if (!(sim->straggler_slowdown >= 1))
        return cfg_fail(err, "simulation.straggler_slowdown",
                        "straggler_slowdown (%g) must be at least 1", sim->straggler_slowdown);
    if (sim->step_overhead < 0)
        return cfg_fail(err, "simulation.step_overhead", "step_overhead must not be negative");
    if (s->fsdp.version < 1 || s->fsdp.version > 2)
        return cfg_fail(err, "fsdp.version", "fsdp version (%d) must be 1 or 2", s->fsdp.version);
    return 0;
}

int scenario_finalize(struct scenario *s, struct cfg_error *err)
{
    memset(err, 0, sizeof(*err));
    if (cfg_model_finalize(&s->model, err) || derive_cluster(s, err) || derive_layout(s, err) ||
        check_model_split(s, err) || check_batch(s, err) || check_memory_features(s, err) ||
        check_hardware_features(s, err) || check_nccl_version(s, err) || check_simulation(s, err) ||
        cfg_check_step_flops(s, err) || cfg_check_limits(s, err) || cfg_check_step_range(s, err))
        return -1;
    return 0;
}
