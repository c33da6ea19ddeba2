/*
 * estimate_time.c - the step time of the closed-form estimate (estimate.h):
 * per-stage compute and exposed tensor-, context- and expert-parallel
 * communication per micro-batch, the pipeline schedule's fill and drain, the
 * exposed data-parallel tail and the optimizer step.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "whatif/estimate_internal.h"
#include "model/partition.h"
#include "strategy/rules.h"
#include "strategy/strategy.h"
#include "model/workload.h"

/*
 * Layers of each (chunk, stage), out[c * pp + stage], as the builder splits
 * them (partition.h pp_layers(): parallelism.pp_split's rule).
 */
static void split_layers(const struct scenario *s, int *out)
{
    int pp = s->par.pp, v = s->par.vpp, n = pp * v, L = s->model.layers;
    char reason[160];

    if (pp_layers(s, out, reason, sizeof(reason)) != 0)
        for (int i = 0; i < n; i++)
            out[i] = L / n + (i < L % n); /* not reached for finalized scenarios */
}

/*
 * Gradient accumulation outside the GEMMs, per micro-batch on average, for
 * `params` of a stage under ddp.c's data parallelism (rules_ddp_grad_accum_bytes():
 * the first micro-batch's pass, and every later one's).
 */
static double grad_accum_s(const struct cand *c, double params)
{
    const struct scenario *s = c->s;
    double first, later;

    if (rules_dp_impl(s) != DPI_DDP || params <= 0 || c->model_params <= 0)
        return 0;
    params *= c->roles.trainable / c->model_params;
    first =
        est_sec(cost_membound(&s->hw.gpu, &s->hw.eff, rules_ddp_grad_accum_bytes(s, params, 0)));
    later =
        est_sec(cost_membound(&s->hw.gpu, &s->hw.eff, rules_ddp_grad_accum_bytes(s, params, 1)));
    return (first + (c->m - 1) * later) / c->m;
}

/*
 * Activation offloading's exposed copy time per layer and micro-batch (build.c
 * offload_activations()): the backward waits for the copy back; synchronous
 * copies block the forward too. Approximation: the PCIe link alone, no contention.
 */
static double act_offload_s(const struct scenario *s, double bytes)
{
    double bw = hw_host_copy_Bps(&s->hw, s->gpus);

    if (s->train.activation_offload == ACT_OFFLOAD_NONE || !(bw > 0))
        return 0;
    return bytes / bw * (s->train.activation_offload == ACT_OFFLOAD_SYNC ? 2 : 1);
}

void est_stage_sums(const struct cand *c, int pp, struct stage_sum *st)
{
    const struct scenario *s = c->s;
    int v = s->par.vpp, l = 0, *part = xmalloc(sizeof(int) * (size_t)(pp * v));

    memset(st, 0, sizeof(*st) * (size_t)pp);
    split_layers(s, part);
    for (int ch = 0; ch < v; ch++)
        for (int k = 0; k < pp; k++)
            for (int i = 0; i < part[ch * pp + k]; i++, l++) {
                bool moe = workload_is_moe(&s->model, l);
                bool win = workload_is_windowed(s, l);
                const struct layer_sum *ls = win ? (moe ? c->lmw : c->lw) : moe ? c->lm : c->ld;
                enum recompute rc = rules_layer_recompute(s, l, i); /* as build.c */
                double re = rc == RC_FULL ? ls->fwd : rc == RC_SELECTIVE ? ls->rc_sel : 0;
                int blocks = rc == RC_FULL ? 6 : 4;
                double off = act_offload_s(s, ls->act[rc]);
                st[k].moe += moe;
                st[k].dense += !moe;
                st[k].comp += ls->fwd + ls->bwd + re + off;
                st[k].t_bwd += ls->bwd + re + c->t_block * (blocks - 2) + c->t_cp_b + off;
                st[k].t_w += ls->wgrad;
                st[k].tp += c->t_block * blocks;
                st[k].cpep += c->t_cp_f + c->t_cp_b + (moe ? 4 * c->t_a2a : 0);
                st[k].params += ls->params;
                st[k].act += ls->act[rc];
            }
    free(part);
    st[0].comp += c->edge->e_time;
    st[0].params += c->edge->e_params;
    st[pp - 1].comp += c->edge->h_time;
    st[pp - 1].params += c->edge->h_params;
    for (int k = 0; k < pp; k++) {
        double acc = grad_accum_s(c, st[k].params);
        st[k].comp += acc;
        st[k].t_bwd += acc;
        st[k].t = st[k].comp + st[k].tp + st[k].cpep;
    }
}

/*
 * ZB-H1's fill and drain: each stage but the slowest adds F + B - W instead of 1F1B's
 * F + B + W, its deferred weight gradients filling the drain: (p - 1)(F + B - W), what its
 * order gives with fixed pass times (tests/test_schedule.c), a third at F = B = W (ZB §2.1).
 */
static double zb_h1_fill(const struct stage_sum *st, int pp)
{
    double fill = 0;
    int top = 0;

    for (int k = 0; k < pp; k++) {
        double f = st[k].t - 2 * st[k].t_w;
        fill += f > 0 ? f : 0;
        top = st[k].t > st[top].t ? k : top;
    }
    return fill - (st[top].t - 2 * st[top].t_w > 0 ? st[top].t - 2 * st[top].t_w : 0);
}

/* Pipeline time (formulas.md §4). */
double est_pipeline_s(const struct scenario *s, int m, const struct stage_sum *st, double *bubble)
{
    int pp = s->par.pp;
    double tmax = 0, tsum = 0, tot;

    for (int k = 0; k < pp; k++) {
        tmax = st[k].t > tmax ? st[k].t : tmax;
        tsum += st[k].t;
    }
    if (pp == 1)
        tot = m * tmax;
    else if (s->par.schedule == SCHED_INTERLEAVED)
        tot = m * tmax + (tsum - tmax) / s->par.vpp;
    else if (s->par.schedule == SCHED_ZB_H1)
        tot = m * tmax + zb_h1_fill(st, pp);
    else
        tot = (m - 1) * tmax + tsum;
    *bubble = tot - m * tmax;
    return tot;
}

/*
 * Bucketed reduction of `bytes` in ddp.c's buckets (rules_ddp_buckets()), seconds in total and
 * for the last bucket. Approximation: DeepSpeed's ZeRO-1/2 reduce in reduce_bucket_size
 * buckets and gather their partitions in one collective (zero.c); the estimate applies DDP's
 * buckets to them too.
 */
static double buckets_s(const struct cand *c, enum coll_op op, double bytes, double *last)
{
    const struct scenario *s = c->s;
    double cap, first, t = 0, full;

    rules_ddp_buckets(s, &first, &cap);
    *last = 0;
    if (bytes <= 0)
        return 0;
    if (bytes <= first) {
        *last = est_coll_s(c->e, s, &c->dp_g, op, bytes);
        return *last;
    }
    t = est_coll_s(c->e, s, &c->dp_g, op, first);
    bytes -= first;
    full = (double)(int64_t)(bytes / cap);
    t += full * est_coll_s(c->e, s, &c->dp_g, op, cap);
    bytes -= full * cap;
    *last = bytes > 0 ? est_coll_s(c->e, s, &c->dp_g, op, bytes)
                      : est_coll_s(c->e, s, &c->dp_g, op, cap);
    return t + (bytes > 0 ? *last : 0);
}

/*
 * One layer of DeepSpeed's 2021 ZeRO-3 per micro-batch (zero.c, zero.stage3_gather
 * per_param_sync), seconds: its four weight tensors (QKV, out-projection, MLP in, MLP out:
 * rules_zero3_weight_tensors() of a dense layer, which MoE layers approximate) gathered one
 * at a time for forward and again for backward, each after zero-filling its buffer and
 * followed by world_size copy kernels, and reduced one at a time, each after world_size copy
 * kernels; `gather` and `reduce` are the layer's bytes.
 */
static double ds2021_layer_s(const struct cand *c, const struct comm_group *g, double gather,
                             double reduce)
{
    const struct scenario *s = c->s;
    double share[4], sum = 0;
    double n = g->nranks > 1 ? g->nranks : 1, t = 0;
    int k = rules_zero3_weight_tensors(s, UNIT_LAYER, false, share);

    for (int i = 0; i < k; i++)
        sum += share[i];
    for (int i = 0; i < k; i++) {
        double ag = gather * share[i] / sum, rs = reduce * share[i] / sum;
        double copies_ag = n * est_sec(cost_membound(&s->hw.gpu, &s->hw.eff, 2 * ag / n));
        double copies_rs = n * est_sec(cost_membound(&s->hw.gpu, &s->hw.eff, 2 * rs / n));
        double fill = est_sec(cost_membound(&s->hw.gpu, &s->hw.eff, ag));
        t += 2 * (fill + est_coll_s(c->e, s, g, COLL_ALL_GATHER, ag) + copies_ag) + copies_rs +
             est_coll_s(c->e, s, g, COLL_REDUCE_SCATTER, rs);
    }
    return t;
}

/*
 * Compute lost beside `hidden` s of overlapped collectives: the kernels run at
 * cost_overlap_rate() meanwhile (engine/exec.c), at a DGX's 16 NCCL channels (one SM each:
 * NVIDIA/nccl #689, "on DGX with 8 NICs ... it would use 16 SMs").
 */
static double overlap_loss_s(const struct scenario *s, double hidden)
{
    double held = s->hw.gpu.sm_count > 16 ? 16.0 / s->hw.gpu.sm_count : 0.5;

    return hidden > 0 ? (1 - cost_overlap_rate(&s->hw.gpu, held)) * hidden : 0;
}

double est_dp_tail_s(const struct cand *c, const struct stage_sum *st, double *opt_s)
{
    const struct scenario *s = c->s;
    enum sharding sh = s->par.sharding;
    struct comm_group shard_g = c->dp_g;
    struct param_roles roles;
    struct state_bytes sb;
    double gbytes, pbytes, opt_params, last, t = 0;

    est_stage_roles(c, st, &roles);
    memory_state_bytes(s, &sb);
    /* FSDP communicates gradients in MixedPrecision.reduce_dtype (PyTorch fsdp/api.py).
     * Approximation: DeepSpeed's ZeRO (zero.c) reduces at the 16-bit parameter dtype, the
     * estimate at training.grad_dtype. */
    gbytes = roles.trainable *
             (rules_dp_impl(s) == DPI_FSDP ? dtype_bytes(s->fsdp.reduce_dtype) : sb.grads);
    pbytes = roles.trainable * sb.gathered; /* the 16-bit (or FP8) parameters gathered */
    /* The optimizer updates this rank's shard; on the host under offload (INFINITY). */
    opt_params = roles.trainable /
                 (isinf(c->f.optim)
                      ? (sh == SHARD_NONE || sh == SHARD_FSDP_NO_SHARD ? 1 : memory_shard_degree(s))
                      : c->f.optim);
    *opt_s = est_sec(workload_optimizer_time(s, opt_params, memory_optimizer_traffic(s)));
    if (isinf(c->f.optim) && hw_host_copy_Bps(&s->hw, s->gpus) > 0)
        *opt_s = est_sec(rules_host_step_time(s, opt_params)) +
                 opt_params * (sb.grads + sb.params) /
                     hw_host_copy_Bps(&s->hw, s->gpus); /* ZeRO-Offload */
    if (rules_shard_comm(s) != COMM_DP)                 /* HSDP: shard within the node */
        shard_g = est_group(c->e, s, rules_shard_comm(s));
    if (c->dp_g.nranks <= 1 || gbytes <= 0)
        return 0;
    if (!rules_gathers_per_unit(s)) {
        double red = buckets_s(c, rules_grad_reduce_op(s), gbytes, &last);
        /* Approximation: ddp.overlap stands for every strategy here (DeepSpeed's ZeRO-1/2
         * overlap by zero.overlap_comm, FSDP NO_SHARD always; zero.c, fsdp.c). */
        double window = s->ddp.overlap ? st->t_bwd : 0;
        /* reduced once per step, or after every micro-batch's backward */
        int times = rules_reduce_every_microbatch(s) ? c->m : 1;
        if (times > 1) /* the reductions run beside the later micro-batches' compute */
            window = (c->m - 1) * st->t + window;
        t = times * red - window > last ? times * red - window : last;
        t += overlap_loss_s(s, times * red - t < window ? times * red - t : window);
        if (rules_param_gather_after_step(s))
            t += buckets_s(c, COLL_ALL_GATHER, pbytes, &last);
        return t;
    }
    {
        /* Per layer and micro-batch: gather for forward (and again for backward when resharded
         * after forward), reduce-scatter the gradients; prefetch overlaps them with compute.
         * Approximation: fsdp.param_dtype and reduce_dtype stand for ZeRO-3's 16-bit
         * parameter dtype too (zero.c). */
        int layers = st->dense + st->moe > 0 ? st->dense + st->moe : 1;
        double lp = st->params / layers, lt = roles.trainable / layers;
        double ag =
            est_coll_s(c->e, s, &shard_g, COLL_ALL_GATHER, lp * dtype_bytes(s->fsdp.param_dtype));
        double rs = est_coll_s(c->e, s, &shard_g, COLL_REDUCE_SCATTER,
                               lt * dtype_bytes(s->fsdp.reduce_dtype));
        if (s->train.offload == OFFLOAD_PARAMS && s->hw.pcie.bw_Bps > 0) {
            /* Parameter offload: each gather waits for the rank's partition to come over PCIe
             * (FSDP CPUOffload in fp32, ZeRO-3 at the 16-bit dtype) and each reduced gradient
             * partition goes back (fsdp.c, zero.c); copies ride with the collectives. */
            bool fsdp = rules_dp_impl(s) == DPI_FSDP;
            double n = shard_g.nranks > 1 ? shard_g.nranks : 1;
            ag += lp / n * (fsdp ? 4.0 : dtype_bytes(s->fsdp.param_dtype)) / s->hw.pcie.bw_Bps;
            rs += lt / n * (fsdp ? 4.0 : dtype_bytes(s->fsdp.param_dtype)) / s->hw.pcie.bw_Bps;
        }
        double per_mb = layers * ((rules_reshard_after_forward(s) ? 2 : 1) * ag + rs);
        double exposed = per_mb > st->t ? per_mb - st->t : 0;
        if (rules_dp_impl(s) == DPI_ZERO3 && s->zero.stage3_gather == ZERO3_GATHER_PER_PARAM_SYNC) {
            /* DeepSpeed 2021 (zero.c): nothing overlaps the compute */
            per_mb = layers * ds2021_layer_s(c, &shard_g, lp * dtype_bytes(s->fsdp.param_dtype),
                                             lt * dtype_bytes(s->fsdp.reduce_dtype));
            exposed = per_mb;
        }
        t = c->m * exposed + ag + c->m * overlap_loss_s(s, per_mb - exposed);
        if (rules_fsdp_pipelined(s)) {
            /* FSDP2 under pipelining (fsdp.c): gathered once a step (each micro-batch again
             * when resharded after forward), overlapping the forward; one reduce-scatter per
             * unit after its last backward, beside the remaining units' backward. */
            double g = layers * (rules_reshard_after_forward(s) ? c->m + 1 : 1) * ag;
            double red = layers * rs, fwd = c->m * st->t;
            t = (g > fwd ? g - fwd : 0) + ag + (red > st->t_bwd ? red - st->t_bwd : rs);
        }
        if (rules_shard_comm(s) == COMM_DP_INTRA) { /* HSDP: all-reduce across nodes */
            struct comm_group inter = est_group(c->e, s, COMM_DP_INTER);
            t += est_coll_s(c->e, s, &inter, COLL_ALL_REDUCE, gbytes / shard_g.nranks);
        }
        return t;
    }
}

double est_p2p_s(const struct cand *c)
{
    const struct scenario *s = c->s;
    struct comm_group g;

    if (s->par.pp <= 1)
        return 0;
    g = est_group(c->e, s, COMM_PP_NEXT);
    return est_coll_s(c->e, s, &g, COLL_SEND_RECV, rules_pp_send_bytes(s));
}
