/*
 * plan.h - `simtrain plan`: search the parallel layouts of a scenario that fit
 * in GPU memory, rank them by step time or cost, and say why the others were
 * rejected.
 *
 * The search space, for each GPU count asked for: tp, pp and cp over the
 * divisors of the GPU count (dp = GPUs / (tp pp cp)); vpp over the divisors
 * of layers / pp with the interleaved schedule, and for vpp = 1 the 1F1B,
 * GPipe and ZB-H1 schedules; ep over the divisors of dp (MoE models); every
 * sharding strategy; micro-batches 1, 2, 4, ... up to global_batch / dp (at
 * most 64); recompute none, selective and full; sequence parallelism on and
 * off when tp > 1. The model, hardware, precision, optimizer, batch and the
 * rest of the scenario are kept as given.
 *
 * Two passes. Every candidate is checked by scenario_finalize() (the loader's
 * divisibility and combination rules), then by a probe of the strategy
 * builder (once per kind of candidate: what is "not modelled yet" is skipped
 * with the builder's reason, so features are picked up as they land), then
 * estimated in closed form (estimate.h) for step time and peak memory; those
 * over the GPU's capacity are rejected. The survivors are ranked by the
 * estimate, and the best are simulated by the engine in order until `top`
 * of them fit (or `simulate` simulations were spent); the final ranking is
 * by the simulated figures. Both numbers are reported, and which is which.
 *
 * Sharding the search (`--shard K/N`): candidates are numbered in
 * enumeration order and shard K evaluates those with number % N == K; each
 * shard simulates its own best, and the CSV files merge (cmd_plan.c).
 *
 * Memory: plan_search() fills a struct plan_result that owns its arrays;
 * release it with plan_result_release().
 */
#ifndef SIMTRAIN_PLAN_H
#define SIMTRAIN_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "model/scenario.h"
#include "whatif/estimate.h"
#include "prog/prog.h"
#include "run/totals.h"

enum plan_reject {
    PR_DIVISIBILITY,  /* a degree does not divide what it splits (finalize) */
    PR_COMBINATION,   /* another cross-field rule (finalize) */
    PR_NOT_MODELLED,  /* the strategy builder declines the combination */
    PR_DUPLICATE,     /* a knob with no effect here: same as another candidate */
    PR_OOM_ESTIMATE,  /* the closed-form peak exceeds the GPU memory */
    PR_OOM_SIMULATED, /* the engine's peak exceeds the GPU memory */
    PR_SIM_FAILED,    /* the engine declined it (other reason) */
    PR_COUNT
};

enum plan_objective {
    PLAN_BY_TIME, /* step time (time to train) */
    PLAN_BY_COST  /* GPU-hours x price (differs from time across GPU counts) */
};

#define PLAN_MAX_GPU_COUNTS 16

struct plan_opts {
    int gpus[PLAN_MAX_GPU_COUNTS]; /* GPU counts to plan for; none = the scenario's */
    int ngpus;
    int top;      /* layouts wanted in the final ranking */
    int simulate; /* most engine runs; 0 = 3 * top + 2 */
    enum plan_objective objective;
    int shard_k, shard_n; /* this process evaluates candidates with number % n == k */
    int max_micro_batch;  /* 0 = 64 */
};

/* One candidate layout and what became of it. */
struct plan_cand {
    long number; /* enumeration number */
    int gpus, nodes;
    int dp, tp, pp, vpp, cp, ep;
    bool sp;
    int schedule; /* enum pp_schedule */
    int sharding; /* enum sharding */
    int micro_batch;
    int recompute; /* enum recompute */
    struct estimate est;
    double est_objective; /* step time or cost per step by the estimate */
    bool simulated;
    int sim_status; /* -1 = fits; else enum plan_reject */
    double sim_step_s, sim_peak_bytes, sim_mfu, sim_tokens_per_s;
    double sim_breakdown_s[TC_COUNT];
    double sim_objective;
    struct train_totals tt; /* from the simulated step when simulated, else the estimate */
};

struct plan_result {
    const struct scenario *base;
    enum plan_objective objective;
    double capacity_bytes;
    long enumerated;             /* candidates numbered (all shards) */
    long evaluated;              /* candidates of this shard */
    long estimated;              /* passed the rules and the builder probe */
    long rejected[PR_COUNT];     /* by reason */
    char example[PR_COUNT][320]; /* first rejection of each kind, with its candidate */
    struct plan_cand *fit;       /* fit by estimate, best estimate first */
    long nfit;
    int nsimulated;
    struct plan_cand *final; /* simulated and fitting, best first */
    int nfinal;
    double search_s, simulate_s; /* wall time of the two passes */
};

/*
 * Search the layouts of `base` (a loaded, finalized scenario). Returns 0, or
 * -1 with a message when the options are unusable (e.g. a GPU count the
 * hardware cannot form). `progress` (may be NULL) receives a line per engine
 * run.
 */
int plan_search(const struct scenario *base, const struct plan_opts *o, struct plan_result *out,
                FILE *progress, char *msg, size_t msglen);

void plan_result_release(struct plan_result *r);

/* The base scenario with candidate c applied (not finalized). */
void plan_apply(const struct scenario *base, const struct plan_cand *c, struct scenario *out);

/* "dp 8 tp 8 pp 4 vpp 5 sp interleaved zero1 mb 1 selective" */
void plan_describe(const struct plan_cand *c, char *buf, size_t n);

const char *plan_reject_name(int reason);

/* ---- outputs (plan_io.c) ---------------------------------------------------------------- */

/* The text report of a search of scenario file `path`: header, top o->top, rejections. */
void plan_print(FILE *f, const char *path, const struct plan_result *r, const struct plan_opts *o);

/*
 * CSV: one row per layout that fit by estimate (simulated or not), the format
 * plan_merge() reads back. JSON: the search's counts and the final ranking's
 * top `top`. Return 0, or -1 when f has an error.
 */
int plan_write_csv(const struct plan_result *r, FILE *f);
int plan_write_json(const char *path, const struct plan_result *r, int top, FILE *f);

/*
 * Read the CSV files of shards (plan_write_csv()) and rank their simulated
 * layouts that fit by `objective`, best first, ties by candidate number: the
 * caller frees *out. Returns 0, or -1 with a message (file:line: ... for an
 * unreadable file, the missing column for a file that is not a plan CSV).
 */
int plan_merge(const char *const *paths, int npaths, enum plan_objective objective,
               struct plan_cand **out, long *n, char *msg, size_t msglen);

/* The merged ranking's text: its count, then the top `top` in the report's table. */
void plan_print_merged(FILE *f, const struct plan_cand *c, long n, int nfiles, int top);

#endif
