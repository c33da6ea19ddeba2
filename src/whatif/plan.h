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
 * most 64); the recompute policies (plan_recompute_policies[]); sequence
 * parallelism on and off when tp > 1. Those make a layout; beside it the
 * knobs (plan_knobs.c): CPU offload of the optimizer states or of the
 * parameters too, TP communication overlap, DDP's and DeepSpeed's gradient
 * overlap, FSDP's prefetch, activation offload, each where it applies. A layout's preferred
 * knob setting (no offload, overlap and prefetch on) is estimated first;
 * when it fits, its other settings are dominated (slower, and memory is not
 * what they would buy) and counted as such; when it does not, each other
 * setting whose memory could fit (the preferred estimate less what the
 * setting can remove) is a candidate of its own. Offload candidates are
 * refused when the host RAM of a node cannot hold what its GPUs offload.
 * The model, hardware, precision, optimizer, batch and the rest of the
 * scenario are kept as given.
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
    PR_DOMINATED,     /* a slower knob setting of a layout whose preferred setting fits */
    PR_HOST_MEMORY,   /* offload: the node's host RAM cannot hold what its GPUs offload */
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

/* ---- knobs beside the layout (plan_knobs.c) ---------------------------------------------- */

enum plan_knob_id {
    PK_OFFLOAD,      /* training.offload */
    PK_TP_OVERLAP,   /* parallelism.tp_comm_overlap */
    PK_DDP_OVERLAP,  /* ddp.overlap */
    PK_ZERO_OVERLAP, /* zero.overlap_comm */
    PK_BWD_PREFETCH, /* fsdp.backward_prefetch */
    PK_FWD_PREFETCH, /* fsdp.forward_prefetch */
    PK_ACT_OFFLOAD,  /* training.activation_offload */
    PK_COUNT
};

#define PK_MAX_VALUES 4

struct plan_knob {
    const char *name; /* as the "changed" column writes it: "offload" */
    int nvalues;
    const char *values[PK_MAX_VALUES];              /* value names, by the field's integer value */
    int preferred;                                  /* tried first: the fastest */
    bool (*relevant)(const struct scenario *s);     /* the knob changes anything in this layout */
    bool (*valid)(const struct scenario *s, int v); /* the loader accepts value v here */
    void (*set)(struct scenario *s, int v);
    int (*get)(const struct scenario *s);
    bool checked; /* the loader checks it (finalize again after setting it) */
};

extern const struct plan_knob plan_knobs[PK_COUNT];

/* The recompute policies searched, in order (a list the frameworks' policies extend). */
extern const int plan_recompute_policies[];
extern const int plan_n_recompute_policies;

/* Values of knob k that apply to layout s, preferred first, into vals; 0 when the knob is
 * not relevant there (it keeps the scenario's value). */
int plan_knob_values(const struct scenario *s, int k, int *vals);

/* Set the knobs of knob[] (1 + value, 0 = keep) on s; whether a set knob needs the loader's
 * check. */
void plan_knobs_apply(const unsigned char *knob, struct scenario *s);
bool plan_knobs_need_check(const unsigned char *knob, const struct scenario *s);

/*
 * "tp=2, sharding=zero3, offload=optimizer": what candidate c changed from base b: its layout
 * against b's, its knobs against d, the same layout with b's own knob settings as the loader
 * derives them (so a default that follows the layout, zero.overlap_comm with ZeRO-3, is no
 * change).
 */
void plan_changes(const struct scenario *b, const struct scenario *d, const struct scenario *c,
                  char *buf, size_t n);

/* What an offload candidate needs of the host, from its simulated step (run_metrics). */
struct plan_needs {
    double h2d_bytes, d2h_bytes; /* PCIe copies per GPU per step */
    double pcie_need_Bps;        /* the busier direction's bytes over the step */
    double pcie_Bps;             /* the link's rate per direction (hardware pcie) */
    double exposed_s;            /* offload time not hidden by compute (PCIe, CPU step) */
    double host_bytes_node;      /* host RAM the node's GPUs offload into */
    double host_capacity;        /* host RAM per node (hardware host.memory) */
    double host_bw_need_Bps;     /* host memory traffic of CPU optimizer and copies, per node */
    double host_bw_Bps;          /* host memory bandwidth per node */
};

/* Host bytes per node that scenario s offloads (0 without offload). */
double plan_host_bytes_node(const struct scenario *s);

struct run;
/* The needs of offload scenario s from its simulated step r. */
void plan_offload_needs(const struct scenario *s, const struct run *r, struct plan_needs *out);

struct plan_opts {
    int gpus[PLAN_MAX_GPU_COUNTS]; /* GPU counts to plan for; none = the scenario's */
    int ngpus;
    int top;      /* layouts wanted in the final ranking */
    int simulate; /* most engine runs; 0 = 3 * top + 2 */
    enum plan_objective objective;
    int shard_k, shard_n; /* this process evaluates candidates with number % n == k */
    int max_micro_batch;  /* 0 = 64 */
    long max_layouts;     /* 0 = no bound; else plan_search() fails past this many layouts
                             (simtrain serve's bound on the work of one request) */
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
    int recompute;                /* enum recompute */
    unsigned char knob[PK_COUNT]; /* 1 + each knob's value (plan_knobs); 0 = the scenario's */
    int variant;                  /* knob setting of the layout: 0 = the preferred one */
    struct estimate est;
    double est_objective; /* step time or cost per step by the estimate */
    bool simulated;
    int sim_status; /* -1 = fits; else enum plan_reject */
    double sim_step_s, sim_peak_bytes, sim_mfu, sim_tokens_per_s;
    double sim_lo_s, sim_hi_s; /* the step time's interval (report/band.h); 0 = none or not
                                  known (after a merge: no CSV column) */
    bool sim_tight;            /* fits only with less allocator reserve than usual (run.h) */
    double sim_breakdown_s[TC_COUNT];
    double sim_objective;
    bool offload;            /* moves states to the host: needs are filled when simulated */
    char changes[160];       /* what it changed from the scenario: simulated ones (plan_changes) */
    struct plan_needs needs; /* of an offload candidate, from its simulated step */
    struct train_totals tt;  /* from the simulated step when simulated, else the estimate */
};

struct plan_result {
    const struct scenario *base;
    enum plan_objective objective;
    double capacity_bytes;
    long enumerated;             /* layouts numbered (all shards) */
    long layouts;                /* layouts of this shard */
    long evaluated;              /* candidates of this shard: layouts x their knob settings */
    long estimated;              /* passed the rules and the builder probe */
    long rejected[PR_COUNT];     /* by reason */
    char example[PR_COUNT][320]; /* first rejection of each kind, with its candidate */
    struct plan_cand *fit;       /* fit by estimate, best estimate first */
    long nfit;
    int nsimulated;
    struct plan_cand *final; /* simulated and fitting, best first */
    int nfinal;
    double search_s, simulate_s; /* wall time of the two passes */
    /* |estimate / engine - 1| over the simulated candidates (those the engine ran), by the
     * estimator's own ranking's best: step time and peak memory, median and maximum. */
    int nerr;
    double err_step_median, err_step_max, err_mem_median, err_mem_max;
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

/* "dp 8 tp 8 pp 4 vpp 5 sp interleaved zero1 mb 1 selective offload optimizer" */
void plan_describe(const struct plan_cand *c, char *buf, size_t n);

/* What candidate c changed from the base scenario ("(as configured)" for nothing). */
void plan_cand_changes(const struct scenario *base, const struct plan_cand *c, char *buf, size_t n);

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
