/*
 * plan_goal.h - goal-seeking on top of `simtrain plan`: the fewest GPUs whose simulated time
 * to train meets a deadline (`--tokens 2T --days 30`), and the cheapest plan within a budget
 * (`--budget USD`, at training.price_per_gpu_hour or --price).
 *
 * Deadline: GPU counts are whole nodes at which some layout is possible (a necessary check of
 * the loader's rules: dp must divide the global batch, tp the heads, pp the layers, cp the
 * sequence; others cannot run the batch at all). The closed form brackets the search: at
 * 100 % MFU the tokens need at least model FLOPs / (peak x deadline) GPUs, so the search starts
 * at the first such count at or above that (fewer cannot meet it); each count tried is a full
 * plan search (plan.h: layouts, knobs, the engine on the best, at least as many as a default
 * plan simulates whatever --top) whose best simulated layout gives the time to train. Counts
 * double until one meets the deadline, then bisection between the last count that missed and
 * the first that met leaves two neighbouring possible counts:
 * the answer meets the deadline and the possible count below it, tried, misses it (printed,
 * with whether the counts between admit no layout). With a budget too, the answer must also
 * cost no more than the budget. Time to train is not always monotone in the GPU count (a count
 * whose divisors allow no good layout can be slower than a smaller one): the answer is the
 * boundary the bisection found, and every count tried is listed.
 *
 * Budget alone: node counts 1, 2, 4, ... up to twice the scenario's (at most 16 counts), each a
 * plan search ranked by cost; the cheapest plan, if it is within the budget.
 *
 * Impossible goals are refused with the figure that rules them out: a deadline that would
 * need more than PLAN_GOAL_MAX_NODES nodes at 100 % MFU (or more than one node of hardware
 * without a network), a budget below the cost at 100 % MFU, a deadline no count up to the
 * maximum meets (with the fastest found), a deadline met only above the budget.
 *
 * Memory: plan_goal_search() fills a struct plan_goal_result that owns its tries and the
 * chosen count's search; release it with plan_goal_release().
 */
#ifndef SIMTRAIN_PLAN_GOAL_H
#define SIMTRAIN_PLAN_GOAL_H

#include "whatif/plan.h"

#define PLAN_GOAL_MAX_NODES 8192 /* most nodes a deadline search tries */

struct plan_goal {
    double tokens; /* tokens to train; 0 = training.tokens */
    double days;   /* deadline, days; 0 = none */
    double budget; /* USD; 0 = none */
    double price;  /* USD per GPU-hour; 0 = training.price_per_gpu_hour */
};

/* One GPU count tried. */
struct goal_try {
    int nodes, gpus;
    bool fits;             /* some layout fits by simulation */
    struct plan_cand best; /* the best simulated layout (when fits) */
    double seconds;        /* its time to train */
    double cost_usd;       /* its cost (when priced) */
    bool meets;            /* the goal is met */
    long candidates;       /* candidates searched */
};

struct plan_goal_result {
    struct scenario goal_base; /* the scenario with the goal's tokens and price */
    double tokens, price;
    double ideal_gpus;      /* GPUs the deadline needs at 100 % MFU */
    double ideal_cost_usd;  /* the cost at 100 % MFU */
    struct goal_try *tries; /* in the order tried */
    int ntries;
    size_t cap_tries;
    int chosen;  /* index of the answer, -1 = none */
    int below;   /* the next smaller count tried (a miss), -1 = none: the answer is 1 node */
    bool gap;    /* the node counts between below and the answer admit no layout at all */
    int fastest; /* the fastest count tried, -1 = none fits anywhere */
    struct plan_result plan; /* the chosen count's search */
    bool have_plan;
};

/*
 * Search for goal g of scenario base (loaded, finalized) with plan options o (top, simulate,
 * rank, max micro-batch; not gpus or shards). Returns 0 with an answer, 3 when the goal cannot
 * be met (msg says why, with figures; the tries are kept), -1 when the goal is unusable (msg:
 * no tokens, no price for a budget). `progress` (or NULL) gets a line per count tried.
 */
int plan_goal_search(const struct scenario *base, const struct plan_opts *o,
                     const struct plan_goal *g, struct plan_goal_result *out, FILE *progress,
                     char *msg, size_t msglen);

void plan_goal_release(struct plan_goal_result *r);

/* The text: the goal, the counts tried, the answer and the count below it, then the chosen
 * count's plan table. */
void plan_goal_print(FILE *f, const char *path, const struct plan_goal *g,
                     const struct plan_goal_result *r, const struct plan_opts *o);

/* JSON: the goal, every count tried and the answer (docs/json-schema.md). 0, or -1. */
int plan_goal_write_json(FILE *f, const char *path, const struct plan_goal *g,
                         const struct plan_goal_result *r);

#endif
