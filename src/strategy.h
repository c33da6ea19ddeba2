/*
 * strategy.h - turns a scenario into per-stage programs (prog.h).
 *
 * The model-parallel builder (strategy/build.c) walks each pipeline stage's
 * schedule (strategy/schedule.c) and emits, per micro-batch and model chunk,
 * the receive of activations, each parameter unit's forward compute with its
 * tensor-parallel collectives, the send; then the backward in reverse, with
 * recomputation as configured; then the optimizer step. Memory marks follow
 * the tensors: activations saved at forward, freed at backward.
 *
 * Data-parallel behaviour (DDP buckets, ZeRO stages, FSDP units, offload) is
 * a set of hooks (struct dp_ops) the builder calls around each unit, so each
 * strategy lives in its own file (strategy/ddp.c, zero.c, fsdp.c) and says
 * only what it adds: static state memory, parameter gathers, gradient
 * reduction and the optimizer step.
 */
#ifndef SIMTRAIN_STRATEGY_H
#define SIMTRAIN_STRATEGY_H

#include "config.h"
#include "layout.h"
#include "prog.h"
#include "workload.h"

/* A parameter unit: the granularity of gradient readiness and parameter gathers. */
enum unit_kind {
    UNIT_EMBED,
    UNIT_LAYER,
    UNIT_HEAD
};

struct unit {
    int kind;  /* enum unit_kind */
    int layer; /* global layer index (UNIT_LAYER) */
    int chunk; /* model chunk on this stage (interleaved schedules) */
    bool moe;
    double params;        /* parameters held by this rank before DP sharding, elements */
    double expert_params; /* of which expert parameters (sharded by EP, reduced over EDP) */
};

/* One step of a stage's pipeline schedule. */
enum pp_step_kind {
    STEP_F,  /* forward of (mb, chunk) */
    STEP_B,  /* backward (input and weight gradients together) */
    STEP_BI, /* backward input gradients only (zero-bubble) */
    STEP_W   /* weight gradients only (zero-bubble) */
};

struct pp_step {
    int kind;  /* enum pp_step_kind */
    int mb;    /* micro-batch */
    int chunk; /* model chunk on this stage */
};

/*
 * The schedule of one stage: p stages, m micro-batches, v chunks per stage.
 * Writes at most max steps into out; returns the count. Pure and testable.
 */
int schedule_steps(enum pp_schedule sched, int p, int stage, int m, int v, struct pp_step *out,
                   int max);

struct build;

/* Data-parallel strategy hooks; any may be NULL. Task indices refer to b->p. */
struct dp_ops {
    const char *name;
    /* Static model-state memory, at time zero. */
    void (*init)(struct build *b);
    /* Before a unit's forward compute: returns a task the compute must wait for, or -1. */
    int (*pre_forward)(struct build *b, int unit, int mb);
    /* After a unit's forward compute (e.g. reshard after forward). */
    void (*post_forward)(struct build *b, int unit, int mb, int fwd_task);
    /* Before a unit's backward compute. */
    int (*pre_backward)(struct build *b, int unit, int mb);
    /* After a unit's weight gradients are complete for this micro-batch. */
    void (*post_backward)(struct build *b, int unit, int mb, int grad_task);
    /* After the last backward: gradient sync remainder, optimizer step, parameter sync. */
    void (*step)(struct build *b);
    /* Free the strategy's private state. */
    void (*release)(struct build *b);
};

struct build {
    const struct scenario *s;
    const struct layout *l;
    struct prog *p;
    int stage; /* pipeline stage */
    int m;     /* micro-batches per step */
    int v;     /* model chunks per stage */
    struct shard sh;
    struct layer_cost layer, layer_moe;
    struct edge_cost embed, head;
    struct unit *units; /* this stage's units, forward order (chunk-major) */
    int nunits;
    int *chunk_first; /* first unit index of each chunk, size v + 1 */
    const struct dp_ops *dp;
    void *dp_state;
    int last_bwd;    /* last backward compute task, -1 before any */
    int last_fwd;    /* last forward compute task */
    int grads_ready; /* task after which every gradient of the step exists */
    double tp_bytes; /* one TP collective */
};

/*
 * Build the program of every pipeline stage: out[s] for s in [0, pp). Returns
 * 0, or -1 with a reason for combinations not modelled. The caller frees the
 * programs with prog_free().
 */
int strategy_build(const struct scenario *s, const struct layout *l, struct prog **out,
                   char *reason, size_t reason_len);

/* The data-parallel strategies. */
extern const struct dp_ops dp_ddp; /* PyTorch DDP / Megatron DDP (no sharding) */

/* Pick the dp_ops for a scenario's sharding; NULL (and reason) when not modelled. */
const struct dp_ops *strategy_dp_ops(const struct scenario *s, char *reason, size_t reason_len);

/* Helpers for strategies. */
int64_t bytes_i64(double bytes);
/* Parameters of a unit this rank stores, by dtype of the param storage (bytes/param). */
double unit_grad_bytes(const struct build *b, int unit);
/* A compute task on the compute stream of the optimizer step. */
int emit_optimizer(struct build *b, double params, double bytes_per_param, int dep);

#endif
