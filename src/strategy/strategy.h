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

#include "model/scenario.h"
#include "model/layout.h"
#include "model/memory.h"
#include "model/partition.h"
#include "prog/prog.h"
#include "model/workload.h"

/* A parameter unit: the granularity of gradient readiness and parameter gathers. */
enum param_unit {
    UNIT_EMBED,
    UNIT_LAYER,
    UNIT_HEAD
};

struct unit {
    int kind;  /* enum param_unit */
    int layer; /* global layer index (UNIT_LAYER) */
    int chunk; /* model chunk on this stage (interleaved schedules) */
    bool moe;
    bool window;          /* sliding-window attention (workload_is_windowed()) */
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

/*
 * Durations of the pieces of one layer part between which communication can
 * happen (layer.c): the norm before the first projection, the MoE router, the
 * column-parallel projection (QKV, FC1 / gate-up), what lies between it and the
 * attention core (rope, activation), the core, the row-parallel projection
 * (output, FC2 / down) and the residual after it. Each sums to the part's time.
 */
struct seg_times {
    sim_time pre, gate, col, mid, core, row, post; /* ns */
};

struct part_split {
    struct seg_times fwd, dgrad, wgrad;
};

/* The per-module attribution of a layer's activation marks (modules.c), by recompute. */
struct layer_mods {
    int64_t saved[3][MM_COUNT];  /* saved for backward, by enum recompute */
    int64_t extra[3][MM_COUNT];  /* brought back by the recomputation before backward */
    int64_t transient[MM_COUNT]; /* the backward's temporaries */
};

/* What build.c attributes to modules in a stage program (strategy_modules_init()). */
struct build_mods {
    struct layer_mods layer[2]; /* dense, MoE */
    int64_t embed[MM_COUNT], head_act[MM_COUNT], logits[MM_COUNT], logits_transient[MM_COUNT];
    int64_t w_pending[4][MM_COUNT]; /* zero-bubble: a B pass's bytes kept for its W, by variant */
    int64_t w_pending_bytes[4];     /* their sum */
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
    struct layer_cost layer_win, layer_moe_win; /* windowed attention (models with a window) */
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
    /* model-parallel state (build.c, layer.c) */
    int *chunk_layers;                      /* layers of each chunk on this stage, size v */
    struct part_split split[4][PART_COUNT]; /* [strategy_unit_variant()][part] piece durations */
    double kv_bytes;                        /* CP: one K/V chunk passed around the ring, bytes */
    double a2a_bytes;                       /* EP: one dispatch (or combine) per rank, bytes */
    double moe_imbalance;                   /* EP: busiest expert rank's load / mean, >= 1 */
    int step_last;                          /* last task of the previous pipeline step, or -1 */
    int step_prev;                          /* last task of the step before it, or -1 */
    bool host_hidden; /* every layer pass's host issue is shorter than its GPU work (build.c) */
    bool pre_folded;  /* the next layer's forward norm was emitted with this layer (layer.c) */
    bool post_folded; /* the next layer's first backward piece was emitted with this layer */
    struct build_mods mods; /* activation marks by module (modules.c) */
    int act_d2h;            /* activation offload: the last layer's copy to the host, or -1 */
};

/* ---- modules of the activation marks (modules.c) ------------------------------------ */

/* The module an operator's saved tensors belong to (enum mem_module); `layer` for the ops of a
 * transformer layer, else of the embedding or the head. */
int strategy_op_module(const struct op *o, bool layer);

/* Bytes a layer saves for backward at recompute `rc`, by module (sums to lc->act[rc]). */
void strategy_layer_modules(const struct layer_cost *lc, enum recompute rc, double out[MM_COUNT]);

/* Bytes the embedding or the head saves, by module (sums to ec->act). */
void strategy_edge_modules(const struct edge_cost *ec, bool layer, double out[MM_COUNT]);

/* v[] in whole bytes summing to exactly bytes_i64(total), as the mark counts it: each
 * rounded, what rounding leaves over given to the largest. */
void strategy_modules_whole(const double v[MM_COUNT], double total, int64_t out[MM_COUNT]);

/* Fill b->mods from the stage's costs (b->layer, layer_moe, embed, head). */
void strategy_modules_init(struct build *b);

/* Attribute `sign` times bytes[] (a member of b->mods) to the start (at_end false) or end mark
 * of task `task` (prog_mem_modules(), memoized by the member). */
void strategy_mark_modules(struct build *b, int task, bool at_end, const int64_t bytes[MM_COUNT],
                           int sign);

/* A layer unit's cost variant: bit 0 MoE, bit 1 windowed attention (index of build.split). */
static inline int strategy_unit_variant(const struct unit *u)
{
    return (u->moe ? 1 : 0) | (u->window ? 2 : 0);
}

/* The cost of a layer unit: dense or MoE, full or windowed attention. */
static inline const struct layer_cost *strategy_unit_cost(const struct build *b,
                                                          const struct unit *u)
{
    if (u->window)
        return u->moe ? &b->layer_moe_win : &b->layer_win;
    return u->moe ? &b->layer_moe : &b->layer;
}

/* The layer split over stages and chunks is in partition.h (pp_partition). */

/* Layers of stage `stage` (sum over its chunks) under the scenario's split. */
int strategy_stage_layers(const struct scenario *s, int stage);

/*
 * The layer emitters (layer.c): forward (tcat TC_FWD, or TC_RECOMPUTE for a
 * full recomputation) and backward of transformer layer unit `ui`, after task
 * `prev` (-1 = none) and `dep` (a data-parallel hook's task, -1 = none).
 * They add the tensor-, context- and expert-parallel communication and return
 * the task the next step must wait for; *first and *last receive the first
 * and last compute tasks (for memory marks and the data-parallel hooks).
 * `mode` is 0 for a whole backward, 1 for input gradients only and 2 for
 * weight gradients only (zero-bubble schedules).
 */
int layer_forward(struct build *b, int ui, int mb, int tcat, int prev, int dep, int *first,
                  int *last);
int layer_backward(struct build *b, int ui, int mb, int mode, int prev, int dep, int *first,
                   int *last);

/*
 * Recomputation of unit `ui`: the configured kind resolved per block (rules.h
 * rules_layer_recompute(): recompute_layers, recompute_every, recompute_fraction).
 */
enum recompute strategy_unit_recompute(const struct build *b, int ui);

/* Fill b->split from the workload's operators (pieces.c). */
void layer_split(struct build *b);

/*
 * Bytes a zero-bubble B pass of a layer costing `lc` leaves alive until its W pass, by
 * module (pieces.c): the weight GEMMs' inputs and output gradients.
 */
void layer_w_pending(const struct layer_cost *lc, const struct shard *sh, double out[MM_COUNT]);

/*
 * Build the program of every pipeline stage: out[s] for s in [0, pp). Returns
 * 0, or -1 with a reason for combinations not modelled. The caller frees the
 * programs with prog_free().
 */
int strategy_build(const struct scenario *s, const struct layout *l, struct prog **out,
                   char *reason, size_t reason_len);

/* The data-parallel strategies. */
extern const struct dp_ops dp_ddp;    /* PyTorch DDP / Megatron DDP (no sharding) */
extern const struct dp_ops dp_zero12; /* DeepSpeed ZeRO stage 1 and 2 (strategy/zero.c) */
extern const struct dp_ops dp_zero3;  /* DeepSpeed ZeRO stage 3 (strategy/zero.c) */
extern const struct dp_ops dp_fsdp;   /* PyTorch FSDP and FSDP2, every ShardingStrategy (fsdp.c) */

/* Pick the dp_ops for a scenario's sharding; NULL (and reason) when not modelled. */
const struct dp_ops *strategy_dp_ops(const struct scenario *s, char *reason, size_t reason_len);

/* ---- model states (states.c) ---------------------------------------------------- */

/*
 * Roles of the parameters of unit `unit` of a build (full fine-tuning: all
 * trainable; LoRA: base frozen, adapters trainable; memory_roles()).
 * states_unit_trainable() is the element count whose gradients a
 * data-parallel strategy reduces.
 */
void states_unit_roles(const struct build *b, int unit, struct param_roles *out);
double states_unit_trainable(const struct build *b, int unit);

/* The roles summed over all of a build's units. */
void states_build_roles(const struct build *b, struct param_roles *out);

/*
 * Allocate at time zero the model states of every unit of `b` (MC_PARAMS,
 * MC_MASTER, MC_GRADS, MC_OPTIM), per memory_model_states(), and QLoRA's
 * dequantization buffer (MC_WORKSPACE, memory_dequant_bytes()). Categories the
 * scenario's offload or paged optimizer keeps on the host are not allocated
 * on the GPU, whatever divisors `f` gives (memory_on_device()). QLoRA adds the
 * whole model at load under ZeRO-3 (memory_qlora_load_bytes(), a transient at
 * time zero on top of the states just allocated) and the previous
 * micro-batch's retained inputs (memory_qlora_retained_bytes(), MC_ACT for the
 * whole step).
 */
void states_emit_model_states(struct build *b, const struct shard_factors *f);

/* Allocate `bytes` of category `cat` at time zero, labelled (a string literal) for the trace. */
void states_emit_static(struct build *b, int cat, double bytes, const char *label);

/* ---- helpers for strategies ------------------------------------------------------ */
/* Bytes as the integer a memory mark carries, rounded to nearest. */
int64_t bytes_i64(double bytes);
/* Gradient bytes of unit `unit` on this rank: its trainable parameters at training.grad_dtype. */
double unit_grad_bytes(const struct build *b, int unit);
/* A compute task on the compute stream of the optimizer step. */
int emit_optimizer(struct build *b, double params, double bytes_per_param, int dep);

#endif
