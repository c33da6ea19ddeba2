/*
 * estimate_internal.h - the parts of the closed-form estimate (estimate.h) that
 * its files share: estimate.c (the estimator's memo tables, the memoized
 * ingredients of a candidate and the composition of a step), estimate_time.c
 * (stage times, the pipeline, the exposed data-parallel tail) and
 * estimate_memory.c (peak memory per stage). Internal to those files.
 */
#ifndef SIMTRAIN_ESTIMATE_INTERNAL_H
#define SIMTRAIN_ESTIMATE_INTERNAL_H

#include <stdbool.h>

#include "net/collective.h"
#include "whatif/estimate.h"
#include "model/memory.h"

/* One transformer layer for one micro-batch on one rank, seconds and bytes. */
struct layer_sum {
    double fwd, bwd, rc_sel; /* forward, backward (dgrad + wgrad), selective recompute, s */
    double wgrad;            /* of the backward, the weight gradients, s */
    double attn_fwd;         /* attention core forward, s (context-parallel overlap) */
    double attn_bwd;         /* attention core backward, s */
    double act[3];           /* saved bytes by enum recompute */
    double params;           /* per rank, elements */
    double tp_bytes;         /* one TP collective, bytes */
    double a2a_bytes;        /* one MoE all-to-all, bytes */
    double bwd_transient;    /* the MLP backward's activation gradients, bytes */
};

/* Embedding and head + loss for one micro-batch. */
struct edge_sum {
    double e_time, e_act, e_params; /* embedding: fwd + bwd s, bytes, elems */
    double h_time, h_act, h_logits, h_transient, h_params; /* head */
};

/*
 * Micro-batch-chunks in flight on a stage at its worst moment, from its
 * schedule. A layer's saved tensors live from its forward to its weight
 * gradients (B, or W when the backward is split); the embedding's and the
 * head's to the input-gradient pass, which does their weight gradients too
 * (build.c).
 */
struct sched_profile {
    int max_layers; /* any chunk, freed at B or W */
    int max_first;  /* chunk 0, freed at B or BI */
    int max_last;   /* chunk v - 1, freed at B or BI */
};

/* Everything about one candidate that the stage loop and the memory model share. */
struct cand {
    const struct scenario *s;
    struct estimator *e;
    int m;                       /* micro-batches per step */
    const struct layer_sum *ld;  /* dense layer */
    const struct layer_sum *lm;  /* MoE layer (== ld for dense models) */
    const struct layer_sum *lw;  /* dense layer with windowed attention (== ld without a window) */
    const struct layer_sum *lmw; /* MoE layer with windowed attention (== lm without a window) */
    const struct edge_sum *edge; /* embedding, head */
    double t_block;              /* TP collectives of one block, s */
    double t_a2a;                /* one MoE all-to-all, s */
    double t_cp_f, t_cp_b;       /* exposed context-parallel comm per layer, s */
    struct comm_group dp_g;      /* gradient group */
    struct shard_factors f;      /* model-state sharding (memory.c) */
    struct param_roles roles;    /* the whole model's parameters by role (memory.c) */
    double model_params;         /* the whole model's parameters (unsharded), elements */
};

/* One pipeline stage of a candidate: its layers and per-micro-batch sums. */
struct stage_sum {
    int dense, moe;  /* layers */
    double t, t_bwd; /* per micro-batch: total, backward part, s */
    double t_w;      /* per micro-batch: the weight gradients of the backward, s */
    double comp, tp; /* per micro-batch: compute, exposed TP, s */
    double cpep;     /* per micro-batch: exposed CP + EP, s */
    double params;   /* per rank, elements */
    double act;      /* saved bytes of one micro-batch over all layers of the stage */
};

/* Nanoseconds of simulated time to seconds. */
static inline double est_sec(sim_time t)
{
    return (double)t / NS_PER_S;
}

/* ---- estimate.c: memoized ingredients ---------------------------------------------- */

/*
 * Shape of rank 0's communicator of `kind`, as the engine sees it
 * (layout_group_shape(): members per node, nodes spanned, rail alignment).
 */
struct comm_group est_group(struct estimator *e, const struct scenario *s, int kind);

/* Seconds for one collective of `bytes` on group g, in isolation. */
double est_coll_s(struct estimator *e, const struct scenario *s, const struct comm_group *g,
                  enum coll_op op, double bytes);

/* Micro-batch-chunks in flight on `stage` at its worst moment over m micro-batches. */
struct sched_profile est_sched_profile(struct estimator *e, const struct scenario *s, int stage,
                                       int m);

/* ---- estimate_time.c ------------------------------------------------------------------ */

/* Layers, parameters, activations and per-micro-batch times of each of the pp stages. */
void est_stage_sums(const struct cand *c, int pp, struct stage_sum *st);

/* Pipeline time of m micro-batches over the stages; the fill and drain into *bubble. */
double est_pipeline_s(const struct scenario *s, int m, const struct stage_sum *st, double *bubble);

/* Exposed data-parallel time of a stage; the optimizer step's time into *opt_s. */
double est_dp_tail_s(const struct cand *c, const struct stage_sum *st, double *opt_s);

/* Point-to-point time of one activation transfer between neighbouring stages. */
double est_p2p_s(const struct cand *c);

/* ---- estimate_memory.c --------------------------------------------------------------- */

/* The parameters of a stage by role, in the proportion of the stage's share of the model. */
void est_stage_roles(const struct cand *c, const struct stage_sum *st, struct param_roles *r);

/* Peak memory of one stage, per category into mem[] (prog.h); returns the total, bytes. */
double est_stage_memory(const struct cand *c, const struct stage_sum *st, int stage,
                        double mem[MC_COUNT]);

#endif
