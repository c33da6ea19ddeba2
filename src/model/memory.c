/* memory.c - see memory.h for the model and its sources. */
#include "model/memory.h"

#include "model/fp8.h"

#include <math.h>
#include <string.h>

#include "model/layout.h"
#include "model/workload.h"

/* ---- bytes per parameter ------------------------------------------------------ */

/*
 * Optimizer state bytes per parameter:
 * AdamW: fp32 m and v, 8 B (ZERO §3.1, K = 12 with the 4 B master copy);
 * without a master copy (pure bf16) the moments take the parameter dtype.
 * 8-bit Adam (bitsandbytes): uint8 state1 and state2 plus one fp32 absmax per
 * 256-element block for each: 2 + 2 * 4 / 256 = 2.03125 B (BNB optimizer.py,
 * blocksize 256; formulas.md §2.8).
 * torchao's low-bit AdamW (pytorch/ao torchao/optim/subclass_8bit.py, subclass_4bit.py,
 * subclass_fp8.py: OptimState*.zeros(); block sizes from torchao/optim/README.md and adam.py):
 * each of m and v is a codes tensor plus one fp32 scale per block. AdamW8bit: 1 B uint8 codes
 * + 4 B per 256, 2 x 1.015625 = 2.03125 B; AdamWFp8: float8_e4m3fn codes, the same 2.03125 B;
 * AdamW4bit: two 4-bit codes packed per uint8 (0.5 B) + 4 B per 128, 2 x 0.53125 = 1.0625 B.
 * (Tensors under 4,096 elements keep fp32 states: norms and biases, left out here.)
 * SGD with momentum: one momentum buffer (torch.optim.SGD clones the gradient:
 * fp32 under mixed precision, else the parameter dtype).
 * Adafactor: factored second moment (row and column statistics), no first
 * moment by default: about 4 * (1/rows + 1/cols) per element of a matrix;
 * for transformer matrices this is below 0.01 B; counted as 0.01 B (estimate).
 */
static double optim_bytes(const struct scenario *s, double param_bytes)
{
    switch (s->train.optimizer) {
    case OPT_ADAM8BIT:
    case OPT_TORCHAO_ADAMW8BIT:
    case OPT_TORCHAO_ADAMWFP8:
        return 2.0 + 2.0 * 4.0 / 256.0;
    case OPT_TORCHAO_ADAMW4BIT:
        return 2.0 * (0.5 + 4.0 / 128.0);
    case OPT_SGD:
        return s->train.master_weights ? 4.0 : param_bytes;
    case OPT_ADAFACTOR:
        return 0.01;
    case OPT_ADAMW:
    default:
        return s->train.master_weights ? 8.0 : 2.0 * param_bytes;
    }
}

static double compute_param_bytes(const struct scenario *s)
{
    double p = dtype_bytes(s->train.precision);

    return p < 2 ? 2 : p; /* fp8 training keeps 16-bit weights and casts per GEMM */
}

/* The projection weights' share of the model's parameters (fp8.h: the FP8 linears). */
static double linear_share(const struct scenario *s)
{
    double total = workload_params_total(&s->model);

    return total > 0 ? s->model.layers * workload_linear_params_layer(&s->model, false) / total : 0;
}

/*
 * Persistent FP8 copies of the projection weights, per parameter of the model: Transformer
 * Engine through Megatron's modules caches the FP8 weight and its transpose across
 * micro-batches (fp8.h), 2 B per projection weight, spread over all parameters here.
 *
 * With FP8 parameters (training.fp8_params: TE fp8_model_init, Megatron --fp8-param-gather,
 * NeMo / Megatron-Bridge fp8_param_gather) a projection weight is a Float8Tensor, its FP8 data
 * (1 B) and the FP8 transpose TE keeps beside it (1 B), with no 16-bit copy: 2 B where the
 * 16-bit weight and its two FP8 caches take 4 B, so the caches' 2 B fall away. The
 * distributed optimizer all-gathers the updated shards in FP8, 1 B per projection weight
 * (Megatron-Core distributed/param_and_grad_buffer.py: the FP8 parameters' buffer is uint8).
 */
static double fp8_copies(const struct scenario *s)
{
    double b = fp8_weight_copy_bytes(s, scenario_model_code(s) == CODE_MEGATRON);

    if (!(b > 0) || s->train.fp8_params) /* skip the per-layer walk (plan: per candidate) */
        return 0;
    return b * linear_share(s);
}

void memory_state_bytes(const struct scenario *s, struct state_bytes *out)
{
    double p = compute_param_bytes(s);

    out->params = p;
    out->fp8_copies = fp8_copies(s);
    out->gathered = s->train.fp8_params ? p - (p - 1) * linear_share(s) : p;
    out->master = s->train.master_weights && p < 4 ? 4.0 : 0.0;
    out->grads = dtype_bytes(s->train.grad_dtype);
    out->optim = optim_bytes(s, p);
}

bool memory_quantized_base(const struct scenario *s)
{
    return s->train.finetune == FT_QLORA || s->train.finetune == FT_LORA_INT8;
}

/*
 * LLM.int8 (bitsandbytes Int8Params, functional.py int8_vectorwise_quant):
 * one int8 per weight and one fp32 absmax (SCB) per output row, 4 / d_in B per
 * weight; counted with d_in = hidden, the input width of every projection but
 * the down projection's (4 / f there: at most 0.1 % of 1 B).
 */
static double int8_bytes(const struct scenario *s)
{
    return 1.0 + 4.0 / s->model.hidden;
}

/* The packed weight bytes of a quantized base, without its constants: NF4 0.5 B, int8 1 B. */
static double quant_payload_bytes(const struct scenario *s)
{
    return s->train.finetune == FT_LORA_INT8 ? 1.0 : 0.5;
}

double memory_frozen_bytes(const struct scenario *s, bool quantized)
{
    if (!quantized || !memory_quantized_base(s))
        return compute_param_bytes(s);
    if (s->train.finetune == FT_LORA_INT8)
        return int8_bytes(s);
    return workload_nf4_bytes(s->train.lora.double_quant); /* QLORA §3 */
}

/*
 * Bytes per parameter the optimizer step moves. Fused (one kernel per group of tensors):
 * read gradient, states and master; write states, master and the compute copy. AdamW one op
 * at a time (training.optimizer_impl), with m the updated weight, s one moment and g the
 * gradient, each op reading its inputs and writing its output:
 *   for_loop (Composer DecoupledAdamW.adamw, composer/optim/decoupled_weight_decay.py
 *   @v0.17.2): param.mul_ 2m; exp_avg.mul_ 2s, .add_(grad) 2s + g; exp_avg_sq.mul_ 2s,
 *   .addcmul_(grad, grad) 2s + 2g; sqrt, / sqrt(bc2), .add_(eps) 3 x 2s; param.addcdiv_
 *   2m + 2s: 4m + 16s + 3g.
 *   foreach (torch.optim.adamw _multi_tensor_adamw): _foreach_lerp_ replaces the first
 *   moment's mul_ + add_ (2s + g): 4m + 14s + 3g.
 * The compute copy is written as in the fused case when a master copy exists.
 */
double memory_optimizer_traffic(const struct scenario *s)
{
    struct state_bytes sb;
    double m, sm;

    memory_state_bytes(s, &sb);
    if (s->train.optimizer != OPT_ADAMW || s->train.optimizer_impl == OPT_IMPL_FUSED ||
        sb.optim <= 0)
        return sb.grads + 2 * (sb.optim + sb.master) + sb.params;
    m = sb.master > 0 ? sb.master : sb.params;
    sm = sb.optim / 2;
    return 4 * m + (s->train.optimizer_impl == OPT_IMPL_FOREACH ? 14 : 16) * sm + 3 * sb.grads +
           (sb.master > 0 ? sb.params : 0);
}

/* ---- sharding and offload ---------------------------------------------------------- */

double memory_shard_degree(const struct scenario *s)
{
    struct layout l;

    switch (s->par.sharding) {
    case SHARD_NONE:
    case SHARD_FSDP_NO_SHARD:
        return 1;
    case SHARD_HSDP:
        layout_init(&l, s);
        return l.hsdp_shard > 0 ? l.hsdp_shard : 1;
    default:
        return (double)s->par.dp * s->par.cp;
    }
}

/* Which categories CPU offload (or a paged optimizer) keeps in host memory. */
struct placement {
    bool params, master, grads, optim;
};

static void host_placement(const struct scenario *s, struct placement *h)
{
    enum sharding sh = s->par.sharding;
    bool grads_partitioned = sh != SHARD_NONE && sh != SHARD_FSDP_NO_SHARD && sh != SHARD_ZERO1;

    memset(h, 0, sizeof(*h));
    if (s->train.offload == OFFLOAD_PARAMS)
        h->params = h->master = h->grads = h->optim = true;
    if (s->train.offload == OFFLOAD_PARAMS_ONLY)
        h->params = true; /* DeepSpeed offload_param alone: master, grads, states stay */
    if (s->train.offload == OFFLOAD_OPTIMIZER) {
        h->master = h->optim = true;
        h->grads = grads_partitioned;
    }
    if (s->train.paged_optimizer || (s->train.finetune != FT_FULL && s->train.lora.paged_optimizer))
        h->optim = true;
}

static void sharded_factors(const struct scenario *s, struct shard_factors *f)
{
    double n = memory_shard_degree(s);
    enum sharding sh = s->par.sharding;

    f->params = f->master = f->grads = f->optim = 1;
    if (sh != SHARD_NONE && sh != SHARD_FSDP_NO_SHARD)
        f->master = f->optim = n; /* every sharded stage partitions the optimizer states */
    if (sh != SHARD_NONE && sh != SHARD_FSDP_NO_SHARD && sh != SHARD_ZERO1)
        f->grads = n;
    if (sh == SHARD_ZERO3 || sh == SHARD_FSDP || sh == SHARD_HSDP || sh == SHARD_FSDP_GRAD_OP)
        f->params = n;
}

void memory_on_device(const struct scenario *s, const struct shard_factors *f,
                      struct shard_factors *out)
{
    struct placement h;

    host_placement(s, &h);
    *out = *f;
    if (h.params)
        out->params = INFINITY;
    if (h.master)
        out->master = INFINITY;
    if (h.grads)
        out->grads = INFINITY;
    if (h.optim)
        out->optim = INFINITY;
}

void memory_shard_factors(const struct scenario *s, struct shard_factors *f)
{
    sharded_factors(s, f);
    memory_on_device(s, f, f);
}

/* ---- parameter roles ------------------------------------------------------------------ */

void memory_roles(const struct scenario *s, double base, double linear, double adapters,
                  double expert, struct param_roles *out)
{
    memset(out, 0, sizeof(*out));
    out->expert = expert;
    switch (s->train.finetune) {
    case FT_LORA:
        out->frozen = base;
        out->trainable = adapters;
        break;
    case FT_QLORA:
    case FT_LORA_INT8:
        out->frozen = base - linear;
        out->frozen_quant = linear;
        out->trainable = adapters;
        break;
    case FT_FULL:
    default: /* a frozen share keeps its weights only (Axolotl unfrozen_parameters) */
        out->trainable = base * s->train.trainable_fraction;
        out->frozen = base - out->trainable;
        break;
    }
}

void memory_add_roles(struct param_roles *acc, const struct param_roles *r, double times)
{
    acc->trainable += times * r->trainable;
    acc->frozen += times * r->frozen;
    acc->frozen_quant += times * r->frozen_quant;
    acc->expert += times * r->expert;
}

void memory_model_roles(const struct scenario *s, struct param_roles *out)
{
    const struct model *m = &s->model;
    struct param_roles r;
    int i;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < m->layers; i++) {
        bool moe = workload_is_moe(m, i);
        double expert = moe ? workload_params_expert(m) * m->moe.experts : 0;
        memory_roles(s, workload_params_layer(m, moe), workload_linear_params_layer(m, moe),
                     workload_lora_params_layer(s, moe), expert, &r);
        memory_add_roles(out, &r, 1);
    }
    memory_roles(s, workload_params_embedding(m) + workload_params_head(m), 0, 0, 0, &r);
    r.trainable += workload_saved_module_params(s, true) + workload_saved_module_params(s, false);
    memory_add_roles(out, &r, 1);
}

/* ---- bytes by category ------------------------------------------------------------------ */

/* The divisor of expert parameters for a category sharded `d` ways: the EDP group is N / ep. */
static double expert_div(const struct scenario *s, double d)
{
    double e = d / s->par.ep;

    return d <= 1 ? 1 : (e < 1 ? 1 : e);
}

/* `bytes` divided `d` ways (INFINITY: none on this GPU), expert parameters by the EDP share. */
static double divide(const struct scenario *s, const struct param_roles *r, double bytes, double d)
{
    double total = r->trainable + r->frozen + r->frozen_quant;
    double ef = total > 0 ? r->expert / total : 0;

    if (isinf(d) || bytes <= 0)
        return 0;
    if (d < 1)
        d = 1;
    return bytes * ((1 - ef) / d + ef / expert_div(s, d));
}

/* Unsharded bytes of each model-state category (MC_PARAMS .. MC_OPTIM) for parameters `r`. */
static void raw_states(const struct scenario *s, const struct param_roles *r,
                       const struct state_bytes *sb, double raw[MC_COUNT])
{
    int i;

    for (i = 0; i < MC_COUNT; i++)
        raw[i] = 0;
    raw[MC_PARAMS] = r->trainable * (sb->params + sb->fp8_copies) +
                     r->frozen * memory_frozen_bytes(s, false) +
                     r->frozen_quant * memory_frozen_bytes(s, true);
    raw[MC_MASTER] = r->trainable * sb->master;
    raw[MC_GRADS] = r->trainable * sb->grads;
    raw[MC_OPTIM] = r->trainable * sb->optim;
}

double memory_quant_constants_bytes(const struct scenario *s, const struct param_roles *r)
{
    if (!memory_quantized_base(s))
        return 0;
    return r->frozen_quant * (memory_frozen_bytes(s, true) - quant_payload_bytes(s));
}

/*
 * The parameter bytes on this GPU: the partitionable storage divided by `d`,
 * plus QLoRA's block constants, which stay whole on every GPU however the
 * parameters are partitioned or offloaded (memory_quant_constants_bytes()).
 */
static double param_bytes_on_gpu(const struct scenario *s, const struct param_roles *r,
                                 double raw_params, double d)
{
    double whole = d > 1 ? memory_quant_constants_bytes(s, r) : 0; /* INFINITY: offloaded */

    return divide(s, r, raw_params - whole, d) + whole;
}

static void states(const struct scenario *s, const struct param_roles *r,
                   const struct state_bytes *sb, const struct shard_factors *f,
                   double out[MC_COUNT])
{
    double raw[MC_COUNT];

    raw_states(s, r, sb, raw);
    out[MC_PARAMS] = param_bytes_on_gpu(s, r, raw[MC_PARAMS], f->params);
    out[MC_MASTER] = divide(s, r, raw[MC_MASTER], f->master);
    out[MC_GRADS] = divide(s, r, raw[MC_GRADS], f->grads);
    out[MC_OPTIM] = divide(s, r, raw[MC_OPTIM], f->optim);
}

void memory_model_states(const struct scenario *s, const struct param_roles *r,
                         const struct shard_factors *f, double out[MC_COUNT])
{
    struct state_bytes sb;
    int i;

    for (i = 0; i < MC_COUNT; i++)
        out[i] = 0;
    memory_state_bytes(s, &sb);
    states(s, r, &sb, f, out);
}

double memory_host_bytes(const struct scenario *s, const struct param_roles *r)
{
    struct state_bytes sb;
    struct shard_factors f;
    struct placement h;
    double raw[MC_COUNT];

    memory_state_bytes(s, &sb);
    raw_states(s, r, &sb, raw);
    sharded_factors(s, &f);
    host_placement(s, &h);
    return (h.params ? divide(s, r, raw[MC_PARAMS] - memory_quant_constants_bytes(s, r), f.params)
                     : 0) +
           (h.master ? divide(s, r, raw[MC_MASTER], f.master) : 0) +
           (h.grads ? divide(s, r, raw[MC_GRADS], f.grads) : 0) +
           (h.optim ? divide(s, r, raw[MC_OPTIM], f.optim) : 0);
}

double memory_dequant_bytes(const struct scenario *s)
{
    const struct model *m = &s->model;
    double h = m->hidden, d = m->head_dim, tp = s->par.tp;
    double qkv = h * (m->heads * d + 2.0 * m->kv_heads * d);
    double f =
        m->moe.experts > 0 && m->moe.ffn_hidden > m->ffn_hidden ? m->moe.ffn_hidden : m->ffn_hidden;
    double widest = qkv > h * f ? qkv : h * f;

    if (!memory_quantized_base(s))
        return 0;
    return widest / tp * compute_param_bytes(s);
}

double memory_dora_bytes(const struct scenario *s)
{
    const struct model *m = &s->model;
    double h = m->hidden, tp = s->par.tp, widest = 0;
    double q = (double)m->heads * m->head_dim, kv = (double)m->kv_heads * m->head_dim;
    double f =
        m->moe.experts > 0 && m->moe.ffn_hidden > m->ffn_hidden ? m->moe.ffn_hidden : m->ffn_hidden;
    unsigned tg = s->train.lora.targets;
    /* (d_in, d_out) of each target, column-parallel outputs and row-parallel inputs per rank */
    const double shapes[7][2] = { { h, q / tp }, { h, kv / tp }, { h, kv / tp }, { q / tp, h },
                                  { h, f / tp }, { h, f / tp },  { f / tp, h } };

    if (s->train.finetune == FT_FULL || !s->train.lora.dora)
        return 0;
    for (int i = 0; i < 7; i++) {
        double d_in = shapes[i][0], d_out = shapes[i][1];
        /* eye(d_in) and lora_B(lora_A(eye)) in fp32, then two 16-bit weight-sized temporaries */
        double ws = 4 * d_in * d_in + 4 * d_in * d_out + 2 * 2 * d_in * d_out;
        if ((tg & (1u << i)) && !(i == 4 && workload_mlp_matrices(m) == 2) && ws > widest)
            widest = ws;
    }
    return widest;
}

/* ---- QLoRA: the whole model at load, the previous micro-batch's inputs ------------------ */

/*
 * Is the training loop LitGPT's (finetune/lora.py), which keeps the last
 * micro-batch's graph alive until the next one's loss? training.model_code
 * litgpt, which `auto` gives eager runs other than adapters under DeepSpeed.
 */
static bool litgpt_loop(const struct scenario *s)
{
    return scenario_model_code(s) == CODE_LITGPT;
}

double memory_qlora_load_bytes(const struct scenario *s, const struct param_roles *r)
{
    struct state_bytes sb;
    double raw[MC_COUNT];

    if (!memory_quantized_base(s) || s->par.sharding != SHARD_ZERO3)
        return 0;
    memory_state_bytes(s, &sb);
    raw_states(s, r, &sb, raw);
    return raw[MC_PARAMS];
}

double memory_qlora_retained_bytes(const struct scenario *s, double layers)
{
    const struct model *m = &s->model;
    double T = (double)s->train.micro_batch * s->train.seq_len / s->par.cp;
    double p = compute_param_bytes(s), tp = s->par.tp;

    if (s->train.finetune != FT_QLORA || !litgpt_loop(s) || s->train.recompute != RC_NONE)
        return 0;
    /* the inputs of QKV and the MLP's first projections (one tensor), of out-proj and down-proj */
    return layers * p * T * (2.0 * m->hidden + (m->heads * m->head_dim + m->ffn_hidden) / tp);
}

double memory_ddp_bucket_bytes(const struct scenario *s, double grad_bytes)
{
    /* the DDP ddp.c runs: `auto` is Megatron's for any model parallelism, cp and ep too */
    bool megatron = scenario_megatron_ddp(s);
    /* DeepSpeed's engine flattens one 5e8-element buffer at a time after backward, a transient
     * ddp.c allocates (strategy/rules.c rules_deepspeed_engine_ddp) */
    bool deepspeed = s->par.sharding == SHARD_NONE && scenario_framework(s) == FW_DEEPSPEED;

    if (megatron || deepspeed || (double)s->par.dp * s->par.cp <= 1)
        return 0;
    return grad_bytes;
}
