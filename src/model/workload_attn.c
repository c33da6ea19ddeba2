/*
 * workload_attn.c - the durations of the fused attention core of one layer: one kernel, or
 * under context parallelism the per-chunk kernels and log-sum-exp merges the ring runs
 * (wl_flash_core(); see workload.h for the model and its sources).
 *
 * Context parallelism with the load-balanced causal split (each rank holds sequence chunks r
 * and 2cp-1-r: Megatron context_parallel.md; torch/distributed/tensor/experimental/
 * _attention.py `_RoundRobinLoadBalancer`, pytorch f2127dbd, torchtitan's default) runs, per
 * rank, cp kernel calls instead of one (`_templated_ring_attention`):
 *   step 0   the local Q against the local K/V, causal: (s/cp)^2 / 2 pairs at the causal rate
 *            of sequence s/cp;
 *   step i   a received K/V chunk, not causal: for an earlier rank's chunk all of Q against
 *            its first half, for a later rank's the second half of Q against all of it; either
 *            way (s/cp) x (s/2cp) pairs at the non-causal rate (of sequence s/cp, the longer
 *            side) -- the same total as the causal s^2 / 2cp of one big kernel.
 * Each step's output is merged into the running one with its fp32 log-sum-exp. PyTorch
 * (`_SDPAMerger`, same file, read at 0123248) does it as eager tensor ops: the step's output
 * cast to fp32 (p + 4 bytes per element), then `out - sigmoid(lse_i - lse) * (out - out_i)`
 * (three passes: 12, 8 and 12), 36 + p in all; a later rank's K/V touches the second half of
 * the rows and `_partial_update` then copies the whole fp32 output again with torch.cat (8), so
 * over the ranks a step averages 3/4 (36 + p) + 4; the first output is cast in and the result
 * cast out (p + 4 each). Before each exchange the K and V are concatenated into one buffer
 * (torch.cat, 2p per K/V element). Backward (`_templated_ring_attention_backward`) zeroes fp32
 * dQ, dK, dV (4 per element), then per step adds the kernel's dQ (read 4 + p, write 4: 8 + p)
 * and dK, dV (8 + p, the partial ones followed by a cat of the whole, about the same), copies
 * dK, dV into the fp32 buffer the ring passes on (8) and K, V into the bf16 one (2p), and casts
 * dQ and the final dK, dV back (4 + p). Transformer Engine (AttnFuncWithCPAndKVP2P, Megatron)
 * corrects the output in one fused kernel per step (read the fp32 output and the step's, write
 * fp32: 8 + p) and adds dQ, dK, dV per step (8 + p each).
 */
#include "model/workload_internal.h"

#include <math.h>

#include "model/cost.h"

/* `k` kernels moving `bytes` together. */
static sim_time passes(const struct ctx *c, double bytes, int k)
{
    return k > 0 ? time_mul(cost_membound(c->gpu, c->eff, bytes / k), k) : 0;
}

/* A fused-attention kernel on `pairs` query-key pairs per head, at the rate of `sh`. */
static sim_time kernel(const struct ctx *c, const struct attn_shape *sh, double pairs, double q,
                       double io, double times)
{
    enum attn_impl impl = c->s->train.attention_impl;

    return cost_flash_attention(c->gpu, c->eff, c->dt, impl, sh, times * 4 * pairs * q, io);
}

void wl_flash_core(const struct ctx *c, struct op *o, double b, double s, int cp, double q,
                   double qkv_elems)
{
    const struct model *m = &c->s->model;
    double d = m->head_dim, p = c->p, io = p * (qkv_elems + c->T * q);
    double chunk = s / cp, T = c->T, kvq = qkv_elems / T - q; /* K and V widths together */
    struct attn_shape causal = { d, chunk, true }, full = { d, chunk, false };
    double merge_f, merge_b, share = 0.75; /* of the output a later step touches */
    int kf, kb;
    sim_time f, g;

    o->extra_kernels_fwd = 0;
    o->extra_kernels_bwd = 0;
    if (cp <= 1) {
        causal.seq = s;
        o->t_fwd = kernel(c, &causal, b * s * s / 2 * c->window, q, io, 1);
        o->t_dgrad = kernel(c, &causal, b * s * s / 2 * c->window, q, 2 * io, 2.5);
        return;
    }
    f = kernel(c, &causal, b * chunk * chunk / 2 * c->window, q, io / cp, 1);
    g = kernel(c, &causal, b * chunk * chunk / 2 * c->window, q, 2 * io / cp, 2.5);
    for (int i = 1; i < cp; i++) {
        f = time_add(f, kernel(c, &full, b * chunk * chunk / 2 * c->window, q, io / cp, 1));
        g = time_add(g, kernel(c, &full, b * chunk * chunk / 2 * c->window, q, 2 * io / cp, 2.5));
    }
    if (c->eager) { /* _SDPAMerger and the ring's buffers (above), per element of Q */
        merge_f = (cp - 1) * (share * (36 + p) + 4 + 2 * p * kvq / q) + 2 * (p + 4);
        merge_b = 4 * (q + kvq) / q + (cp - 1) * ((8 + p) + (16 + 3 * p) * kvq / q) +
                  (4 + p) * (q + kvq) / q;
        kf = 5 * (cp - 1) + 2;
        kb = 7 * (cp - 1) + 6;
    } else { /* one fused correction a step; dQ, dK, dV added */
        merge_f = (cp - 1) * (8 + p);
        merge_b = (cp - 1) * (8 + p) * (q + kvq) / q;
        kf = cp - 1;
        kb = 3 * (cp - 1);
    }
    o->t_fwd = time_add(f, passes(c, merge_f * T * q, kf));
    o->t_dgrad = time_add(g, passes(c, merge_b * T * q, kb));
    o->extra_kernels_fwd = kf + cp - 1; /* the merges, the sub-SDPA calls beyond the first */
    o->extra_kernels_bwd = kb + cp - 1;
}
