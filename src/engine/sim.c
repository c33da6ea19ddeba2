/*
 * sim.c - see sim.h. The run loop, one named helper per phase (as libuv's uv_run()): set up
 * the simulated ranks, their communicators and link resources; queue every rank's first
 * tasks; run events until none is left; check that every program ran to its end; total the
 * step; release. The phases' work lives in the files sim_internal.h lists.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/sim_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void init(struct sim *sm, const struct scenario *s, const struct layout *l,
                 const struct sim_opts *opts, struct sim_result *res)
{
    memset(sm, 0, sizeof(*sm));
    memset(res, 0, sizeof(*res));
    sm->sc = s;
    sm->lay = l;
    sm->opts = opts;
    sm->res = res;
    sm->cache_gen = 1;
    memtrack_init(sm);
    engine_init(&sm->eng);
}

/*
 * Rank `rank`'s host speed: a log-normal multiplier of mean 1 and coefficient of variation
 * host.jitter (1 without jitter), a function of (seed, rank) alone, so that a rank draws the
 * same speed whichever ranks are simulated (Box-Muller on two splitmix64 draws, base/util.h).
 */
static double host_draw(const struct host_cfg *h, int rank)
{
    uint64_t state = ((uint64_t)(uint32_t)h->seed << 32) | (uint32_t)rank, a;
    double u1, u2, z, sigma;

    if (!(h->jitter > 0))
        return 1.0;
    a = rng_next(&state);
    u1 = ((double)(a >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
    u2 = rng_uniform(&a); /* the second draw: splitmix64 seeded with the first */
    z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
    sigma = sqrt(log(1 + h->jitter * h->jitter));
    return exp(sigma * z - sigma * sigma / 2);
}

/* Is this rank simulated? Every rank with --ranks all, else one per pipeline stage. */
static bool simulated(const struct sim *sm, int rank)
{
    int c[DIM_COUNT];

    if (sm->opts->all_ranks)
        return true;
    layout_coords(sm->lay, rank, c);
    return c[DIM_TP] == 0 && c[DIM_CP] == 0 && c[DIM_DP] == 0;
}

static void init_rank(struct sim *sm, int ri, int rank, struct prog *const *prog_of_stage)
{
    struct rank_result *rr = &sm->res->ranks[ri];
    struct srank *r = &sm->r[ri];
    int i;

    rr->rank = rank;
    layout_coords(sm->lay, rank, rr->coords);
    rr->prog = prog_of_stage[rr->coords[DIM_PP]];
    rr->slowdown = 1.0;
    if (sm->opts->all_ranks && rank == sm->sc->sim.straggler_rank)
        rr->slowdown = sm->sc->sim.straggler_slowdown;
    rr->host_slowdown = host_draw(&sm->sc->host, rank);
    r->prog = rr->prog;
    r->snext = r->prog->snext;
    r->ntasks = r->prog->ntasks;
    r->compute_tcat = -1;
    r->cmp_task = -1;
    for (i = 0; i < ST_COUNT; i++)
        r->head[i] = r->prog->sfirst[i];
}

/*
 * The simulated ranks, in global rank order, each at the head of its stage's program.
 * Returns sim_of_rank (the caller frees it): a global rank's index among them, or -1.
 */
static int *setup_ranks(struct sim *sm, struct prog *const *prog_of_stage)
{
    int world = sm->lay->world, *sim_of_rank = xmalloc(sizeof(int) * (size_t)world), rank;

    sm->nr = 0;
    for (rank = 0; rank < world; rank++)
        sim_of_rank[rank] = simulated(sm, rank) ? sm->nr++ : -1;
    sm->res->nranks = sm->nr;
    sm->res->ranks = xcalloc((size_t)sm->nr, sizeof(struct rank_result));
    sm->r = xcalloc((size_t)sm->nr, sizeof(struct srank));
    for (rank = 0; rank < world; rank++)
        if (sim_of_rank[rank] >= 0)
            init_rank(sm, sim_of_rank[rank], rank, prog_of_stage);
    return sim_of_rank;
}

/* The step ends with the last rank; every rank's time up to it is accounted. */
static void finish(struct sim *sm)
{
    struct sim_result *res = sm->res;
    int ri;

    res->events = sm->eng.fired;
    res->step = 0;
    for (ri = 0; ri < sm->nr; ri++)
        if (res->ranks[ri].end > res->step)
            res->step = res->ranks[ri].end;
    sm->eng.now = res->step;
    for (ri = 0; ri < sm->nr; ri++)
        exec_account(sm, ri);
    notes_count_ranks(sm);
}

static void release(struct sim *sm)
{
    comms_release(sm);
    transfer_release(sm);
    free(sm->r);
    free(sm->stack);
    engine_release(&sm->eng);
}

double sim_clock_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Take `runs` out of the budget (none: always true); false, the budget spent and why not. */
static bool budget_take(struct sim_budget *b, double runs, char *reason, size_t reason_len)
{
    if (!b)
        return true;
    if (b->deadline_s > 0 && sim_clock_s() > b->deadline_s) {
        b->spent = true;
        snprintf(reason, reason_len, "the request ran past the time it may take");
        return false;
    }
    if (runs <= b->task_runs_left) {
        b->task_runs_left -= runs;
        return true;
    }
    b->spent = true;
    snprintf(reason, reason_len,
             "this step would take %.3g task runs, more than the %.3g left of the bound on the "
             "work of one request",
             runs, b->task_runs_left);
    return false;
}

/*
 * The work of the simulated ranks, within SIM_MAX_TASK_RUNS: the tasks each runs, its own
 * state, and the members of each communicator it joins (comms_setup() lists every group
 * member of every simulated rank: --ranks all over a data-parallel group of a million GPUs
 * is 10^12 of them). 0, or -1 and why not.
 */
static int check_task_runs(const struct sim *sm, struct prog *const *prog_of_stage, char *reason,
                           size_t reason_len)
{
    int pp = sm->sc->par.pp;
    double per_stage = sm->opts->all_ranks ? (double)sm->lay->world / pp : 1, runs = 0;

    for (int st = 0; st < pp; st++) {
        const struct prog *p = prog_of_stage[st];
        uint32_t kinds = p->coll_comms | p->send_comms | p->recv_comms;
        double members = 0;

        for (int k = 0; k < COMM_KIND_COUNT; k++)
            if (kinds & (1u << k))
                members += layout_group_size(sm->lay, k);
        runs += per_stage * (p->ntasks + SIM_RANK_TASKS + members);
    }
    if (runs <= SIM_MAX_TASK_RUNS && budget_take(sm->sc->sim.budget, runs, reason, reason_len))
        return 0;
    if (runs <= SIM_MAX_TASK_RUNS)
        return -1;
    snprintf(reason, reason_len,
             "simulating %.0f ranks would take %.3g task runs and communicator members, more "
             "than the %.0f (2^27, about a minute) a step may take; simulate one rank per "
             "pipeline stage (--ranks stage)",
             per_stage * pp, runs, SIM_MAX_TASK_RUNS);
    return -1;
}

int sim_run(const struct scenario *s, const struct layout *l, struct prog *const *prog_of_stage,
            const struct sim_opts *opts, struct sim_result *res, char *reason, size_t reason_len)
{
    struct sim sm;
    int *sim_of_rank, rc;

    init(&sm, s, l, opts, res);
    if (check_task_runs(&sm, prog_of_stage, reason, reason_len) != 0) {
        release(&sm);
        return -1;
    }
    sim_of_rank = setup_ranks(&sm, prog_of_stage);
    if (notes_select(&sm, reason, reason_len) != 0) {
        free(sim_of_rank);
        release(&sm);
        return -1;
    }
    comms_setup(&sm, sim_of_rank);
    free(sim_of_rank);
    transfer_setup(&sm);
    exec_kickoff(&sm);
    engine_run(&sm.eng);
    rc = diagnose_deadlock(&sm, reason, reason_len);
    finish(&sm);
    if (rc == 0)
        rc = diagnose_step_range(&sm, reason, reason_len);
    if (rc == 0)
        rc = diagnose_memory_range(&sm, reason, reason_len);
    release(&sm);
    return rc;
}

void sim_result_release(struct sim_result *res)
{
    int i;

    for (i = 0; i < res->nranks; i++)
        free(res->ranks[i].tl);
    free(res->ranks);
    free(res->trace);
    free(res->notes);
    memset(res, 0, sizeof(*res));
}
