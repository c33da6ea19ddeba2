/*
 * plan_goal.c - goal-seeking over GPU counts (plan_goal.h): the fewest whole nodes whose best
 * plan trains the tokens by a deadline, or the cheapest plan within a budget.
 */
#include "whatif/plan_goal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "model/cost.h"
#include "model/workload.h"
#include "report/report.h"

#define DAY 86400.0

struct gctx {
    const struct plan_opts *o;
    const struct plan_goal *g;
    struct plan_goal_result *r;
    FILE *progress;
    int gpn;
    bool budget_mode; /* ranked by cost, answer by cost */
};

/* A deadline is met by time alone (a budget is checked on the answer); a budget alone by cost. */
static bool meets(const struct gctx *c, const struct goal_try *t)
{
    if (!t->fits)
        return false;
    if (c->g->days > 0)
        return t->seconds <= c->g->days * DAY;
    return t->cost_usd <= c->g->budget;
}

/* The try of `nodes` nodes, running its plan search unless it was tried. */
static int try_nodes(struct gctx *c, int nodes)
{
    struct plan_goal_result *r = c->r;
    struct plan_opts po = *c->o;
    struct plan_result pr;
    struct goal_try t;
    char msg[256];

    for (int i = 0; i < r->ntries; i++)
        if (r->tries[i].nodes == nodes)
            return i;
    memset(&t, 0, sizeof(t));
    t.nodes = nodes;
    t.gpus = nodes * c->gpn;
    po.ngpus = 1;
    po.gpus[0] = t.gpus;
    if (po.top < 5) /* each count's best needs the engine on as many as a default plan */
        po.top = 5;
    po.shard_k = 0;
    po.shard_n = 1;
    po.objective = c->budget_mode ? PLAN_BY_COST : c->o->objective;
    if (plan_search(&r->goal_base, &po, &pr, NULL, msg, sizeof(msg)) == 0) {
        t.candidates = pr.evaluated;
        t.fits = pr.nfinal > 0;
        if (t.fits) {
            t.best = pr.final[0];
            t.seconds = t.best.tt.seconds;
            t.cost_usd = t.best.tt.cost_usd;
        }
    } else {
        memset(&pr, 0, sizeof(pr));
    }
    t.meets = meets(c, &t);
    if (c->progress)
        fprintf(c->progress, "simtrain plan: %d nodes (%d GPUs): %s\n", nodes, t.gpus,
                !t.fits   ? "no layout fits"
                : t.meets ? "meets the goal"
                          : "misses the goal");
    /* Keep the search of the best answer so far: the fewest nodes that meet the deadline, or
     * the cheapest plan. */
    if (t.meets && (r->chosen < 0 || (c->budget_mode ? t.cost_usd < r->tries[r->chosen].cost_usd
                                                     : t.nodes < r->tries[r->chosen].nodes))) {
        if (r->have_plan)
            plan_result_release(&r->plan);
        r->plan = pr;
        r->have_plan = true;
        r->chosen = r->ntries;
    } else {
        plan_result_release(&pr);
    }
    if (t.fits && (r->fastest < 0 || t.seconds < r->tries[r->fastest].seconds))
        r->fastest = r->ntries;
    grow_array((void **)&r->tries, &r->cap_tries, (size_t)r->ntries + 1, sizeof(*r->tries));
    r->tries[r->ntries] = t;
    return r->ntries++;
}

/* Whether `nodes` nodes meet the goal (tried now unless they were). The index first: trying
 * may move c->r->tries. */
static bool met(struct gctx *c, int nodes)
{
    int i = try_nodes(c, nodes);

    return c->r->tries[i].meets;
}

/*
 * Can G GPUs form any layout at all? Necessary conditions of the loader's rules (config/check.c)
 * over the splits plan searches, G = dp x tp x pp x cp: tp divides heads and kv_heads, pp
 * divides layers or layers + 2 (unless the scenario places stage layers itself), cp > 1
 * divides seq_len / 2, dp divides the global batch (a micro-batch is at least one sequence).
 * A count that fails them has no layout; one that passes may still have none that fits.
 */
static bool dp_cp_possible(const struct scenario *s, long r, long cp)
{
    return (cp == 1 || s->train.seq_len % (2 * cp) == 0) && s->train.global_batch % (r / cp) == 0;
}

static bool layout_possible(const struct scenario *s, long g)
{
    const struct model *m = &s->model;
    bool placed = s->par.first_stage_layers > 0 || s->par.last_stage_layers > 0;

    for (long tp = 1; tp <= g && tp <= m->heads; tp++) {
        if (g % tp || m->heads % tp || m->kv_heads % tp)
            continue;
        for (long pp = 1; pp <= g / tp && pp <= m->layers + 2; pp++) {
            long r = g / tp / pp; /* dp x cp */
            if ((g / tp) % pp || (!placed && m->layers % pp && (pp == 1 || (m->layers + 2) % pp)))
                continue;
            for (long d = 1; d * d <= r; d++) /* cp over the divisors of r, in pairs */
                if (r % d == 0 && (dp_cp_possible(s, r, d) || dp_cp_possible(s, r, r / d)))
                    return true;
        }
    }
    return false;
}

/* The node counts, ascending, at which a layout is possible, up to max_nodes. */
static int possible_counts(const struct gctx *c, int max_nodes, int *out)
{
    int n = 0;

    for (int k = 1; k <= max_nodes; k++)
        if (layout_possible(&c->r->goal_base, (long)k * c->gpn))
            out[n++] = k;
    return n;
}

/*
 * The fewest nodes that meet the deadline, over the counts at which a layout is possible: from
 * the first at or above the 100 % MFU bound, doubling, then bisection between the last count
 * that missed and the first that met; the possible count below the answer is tried too.
 */
static int deadline_search(struct gctx *c, int n0, int max_nodes, char *msg, size_t msglen)
{
    struct plan_goal_result *r = c->r;
    int *v = xmalloc(sizeof(int) * (size_t)max_nodes), nv = possible_counts(c, max_nodes, v);
    int lo = -1, hi = -1, i = 0; /* indices into v: lo misses (or is below the bound), hi meets */

    while (i < nv && v[i] < n0)
        i++;
    lo = i - 1; /* below the bound: cannot meet the deadline even at 100 % MFU */
    while (i < nv) {
        int j = i;
        if (met(c, v[i])) {
            hi = i;
            break;
        }
        lo = i;
        while (j < nv && v[j] < 2 * v[i])
            j++;
        if (j == nv && i < nv - 1)
            j = nv - 1;
        else if (j == nv)
            break;
        i = j;
    }
    if (hi < 0) {
        free(v);
        if (r->fastest >= 0) {
            const struct goal_try *f = &r->tries[r->fastest];
            snprintf(msg, msglen,
                     "no plan meets the goal on up to %d nodes: the fastest found, %d GPUs, "
                     "takes %.1f days",
                     max_nodes, f->gpus, f->seconds / DAY);
        } else {
            snprintf(msg, msglen, "no layout fits on any GPU count tried (up to %d nodes)",
                     max_nodes);
        }
        return 3;
    }
    for (;;) {
        while (hi - lo > 1) {
            int mid = lo + (hi - lo) / 2;
            if (met(c, v[mid]))
                hi = mid;
            else
                lo = mid;
        }
        if (hi == 0 || !met(c, v[hi - 1]))
            break;
        hi--; /* the count below met it too (beyond the bound's promise): go on down */
        lo = hi - 1;
    }
    r->chosen = try_nodes(c, v[hi]);
    r->below = hi > 0 ? try_nodes(c, v[hi - 1]) : -1;
    r->gap = hi > 0 && v[hi - 1] < v[hi] - 1; /* counts between admit no layout */
    free(v);
    return 0;
}

/* The cheapest plan over node counts 1, 2, 4, ... up to twice the scenario's. */
static int budget_search(struct gctx *c, int max_nodes, char *msg, size_t msglen)
{
    struct plan_goal_result *r = c->r;
    int top = 2 * c->r->goal_base.nodes, cheapest = -1;

    top = top < max_nodes ? top : max_nodes;
    for (int n = 1, k = 0; n <= top && k < 16; n *= 2, k++) {
        int i = try_nodes(c, n);
        if (r->tries[i].fits &&
            (cheapest < 0 || r->tries[i].cost_usd < r->tries[cheapest].cost_usd))
            cheapest = i;
    }
    if (cheapest < 0) {
        snprintf(msg, msglen, "no layout fits on 1 to %d nodes", top);
        return 3;
    }
    if (r->tries[cheapest].cost_usd > c->g->budget) {
        const struct goal_try *t = &r->tries[cheapest];
        snprintf(msg, msglen,
                 "no plan within $%.4g: the cheapest found, %d GPUs, costs $%.4g (%.1f days)",
                 c->g->budget, t->gpus, t->cost_usd, t->seconds / DAY);
        return 3;
    }
    r->chosen = cheapest;
    return 0;
}

int plan_goal_search(const struct scenario *base, const struct plan_opts *o,
                     const struct plan_goal *g, struct plan_goal_result *out, FILE *progress,
                     char *msg, size_t msglen)
{
    struct gctx c = { o, g, out, progress, base->hw.gpus_per_node, false };
    struct scenario *s = &out->goal_base;
    double steps, peak, flops;
    int rc, max_nodes = base->hw.net.nics_per_node > 0 ? PLAN_GOAL_MAX_NODES : 1;

    memset(out, 0, sizeof(*out));
    out->chosen = out->below = out->fastest = -1;
    *s = *base;
    out->tokens = g->tokens > 0 ? g->tokens : base->train.tokens;
    out->price = g->price > 0 ? g->price : base->train.price_gpu_hour;
    if (!(out->tokens > 0)) {
        snprintf(msg, msglen, "a goal needs the tokens to train: --tokens N or training.tokens");
        return -1;
    }
    if (g->budget > 0 && !(out->price > 0)) {
        snprintf(msg, msglen,
                 "--budget needs a price per GPU-hour: --price USD or training.price_per_gpu_hour");
        return -1;
    }
    s->train.tokens = out->tokens;
    s->train.price_gpu_hour = out->price;
    /* The closed-form bracket: model FLOPs at the GPU's peak (100 % MFU). */
    steps = out->tokens / ((double)s->train.global_batch * s->train.seq_len);
    peak = cost_peak_flops(&s->hw.gpu, s->train.precision);
    flops = workload_model_flops(s) * steps;
    out->ideal_cost_usd = flops / peak / 3600 * out->price;
    if (g->days > 0) {
        double n0;
        out->ideal_gpus = flops / (peak * g->days * DAY);
        n0 = ceil(out->ideal_gpus / c.gpn);
        if (n0 > max_nodes) {
            snprintf(msg, msglen,
                     "cannot train %.3g tokens in %g days: even at 100 %% MFU that needs %.0f GPUs "
                     "(%.0f nodes of %d), more than the %d node%s searched%s",
                     out->tokens, g->days, ceil(out->ideal_gpus), n0, c.gpn, max_nodes,
                     max_nodes == 1 ? "" : "s",
                     max_nodes == 1 ? " (the hardware has no network)" : "");
            return 3;
        }
        if (g->budget > 0 && g->budget < out->ideal_cost_usd) {
            snprintf(msg, msglen,
                     "no plan within $%.4g: even at 100 %% MFU the training costs $%.4g", g->budget,
                     out->ideal_cost_usd);
            return 3;
        }
        rc = deadline_search(&c, n0 > 1 ? (int)n0 : 1, max_nodes, msg, msglen);
        if (rc == 0 && g->budget > 0 && out->tries[out->chosen].cost_usd > g->budget) {
            const struct goal_try *t = &out->tries[out->chosen];
            snprintf(msg, msglen,
                     "the fewest GPUs that meet %g days, %d, cost $%.4g: more than the budget "
                     "$%.4g (more GPUs cost more per token here)",
                     g->days, t->gpus, t->cost_usd, g->budget);
            return 3;
        }
        return rc;
    }
    if (g->budget < out->ideal_cost_usd) {
        snprintf(msg, msglen, "no plan within $%.4g: even at 100 %% MFU the training costs $%.4g",
                 g->budget, out->ideal_cost_usd);
        return 3;
    }
    c.budget_mode = true;
    return budget_search(&c, max_nodes, msg, msglen);
}

void plan_goal_release(struct plan_goal_result *r)
{
    free(r->tries);
    if (r->have_plan)
        plan_result_release(&r->plan);
    memset(r, 0, sizeof(*r));
}

/* ---- outputs ------------------------------------------------------------------------------ */

static int by_gpus(const void *a, const void *b)
{
    const struct goal_try *x = *(const struct goal_try *const *)a;
    const struct goal_try *y = *(const struct goal_try *const *)b;

    return (x->gpus > y->gpus) - (x->gpus < y->gpus);
}

static void fmt_usd(double v, char *buf, size_t n)
{
    struct train_totals t = { .have_tokens = true, .have_price = true, .cost_usd = v };

    totals_fmt_cost(&t, buf, n);
}

static void fmt_days(double s, char *buf, size_t n)
{
    struct train_totals t = { .have_tokens = true, .seconds = s };

    totals_fmt_duration(&t, buf, n);
}

void plan_goal_print(FILE *f, const char *path, const struct plan_goal *g,
                     const struct plan_goal_result *r, const struct plan_opts *o)
{
    const struct goal_try **order = xmalloc(sizeof(*order) * (size_t)(r->ntries + 1));
    char a[32], b[32], c[32], d[160];

    units_format(r->tokens, UNIT_COUNT, a, sizeof(a));
    fprintf(f, "simtrain plan: %s\n  goal: %s tokens", path, a);
    if (g->days > 0)
        fprintf(f, " within %g day%s", g->days, g->days > 1 || g->days < 1 ? "s" : "");
    if (g->budget > 0) {
        fmt_usd(g->budget, a, sizeof(a));
        fprintf(f, "%s within %s at $%.4g per GPU-hour", g->days > 0 ? " and" : "", a, r->price);
    }
    fputc('\n', f);
    if (g->days > 0)
        fprintf(f,
                "  at 100 %% MFU the deadline needs at least %.0f GPUs: the search starts at %d "
                "node%s and tries whole nodes\n",
                ceil(r->ideal_gpus), r->ntries ? r->tries[0].nodes : 0,
                r->ntries && r->tries[0].nodes == 1 ? "" : "s");
    if (r->price > 0) {
        fmt_usd(r->ideal_cost_usd, a, sizeof(a));
        fprintf(f, "  at 100 %% MFU the training costs %s\n", a);
    }
    fprintf(f, "\n  %5s %6s %10s %9s %9s  %-5s  %s\n", "nodes", "GPUs", "step (sim)", "to train",
            "cost", "meets", "best layout (simulated)");
    for (int i = 0; i < r->ntries; i++)
        order[i] = &r->tries[i];
    qsort(order, (size_t)r->ntries, sizeof(*order), by_gpus);
    for (int i = 0; i < r->ntries; i++) {
        const struct goal_try *t = order[i];
        if (!t->fits) {
            fprintf(f, "  %5d %6d %10s %9s %9s  %-5s  no layout fits\n", t->nodes, t->gpus, "-",
                    "-", "-", "no");
            continue;
        }
        report_fmt_time(t->best.sim_step_s, a, sizeof(a));
        fmt_days(t->seconds, b, sizeof(b));
        fmt_usd(t->cost_usd, c, sizeof(c));
        plan_describe(&t->best, d, sizeof(d));
        fprintf(f, "  %5d %6d %10s %9s %9s  %-5s  %s\n", t->nodes, t->gpus, a, b,
                r->price > 0 ? c : "-", t->meets ? "yes" : "no", d);
    }
    free(order);
    if (r->chosen >= 0) {
        const struct goal_try *t = &r->tries[r->chosen];
        fmt_days(t->seconds, b, sizeof(b));
        fmt_usd(t->cost_usd, c, sizeof(c));
        if (g->days > 0)
            fprintf(f, "\n  Fewest GPUs that meet %g days: %d (%d node%s), %s to train", g->days,
                    t->gpus, t->nodes, t->nodes == 1 ? "" : "s", b);
        else
            fprintf(f, "\n  Cheapest plan within the budget: %d GPUs (%d node%s), %s to train",
                    t->gpus, t->nodes, t->nodes == 1 ? "" : "s", b);
        fprintf(f, "%s%s.\n", r->price > 0 ? ", " : "", r->price > 0 ? c : "");
        if (g->days > 0 && r->below >= 0) {
            const struct goal_try *u = &r->tries[r->below];
            if (u->fits) {
                fmt_days(u->seconds, b, sizeof(b));
                fprintf(f, "  The next smaller count tried, %d GPUs (%d node%s), misses it: %s.\n",
                        u->gpus, u->nodes, u->nodes == 1 ? "" : "s", b);
                if (r->gap)
                    fprintf(f, "  (The node counts between admit no layout: dp must divide the "
                               "global batch, tp the heads,\n  pp the layers, cp the sequence.)\n");
            } else {
                fprintf(f,
                        "  The next smaller count tried, %d GPUs (%d node%s), misses it: no "
                        "layout fits.\n",
                        u->gpus, u->nodes, u->nodes == 1 ? "" : "s");
            }
            if (r->gap && !u->fits)
                fprintf(f, "  (The node counts between admit no layout: dp must divide the "
                           "global batch, tp the heads,\n  pp the layers, cp the sequence.)\n");
        } else if (g->days > 0) {
            fprintf(f, "  (No smaller count can form a layout, or one node is the answer.)\n");
        }
        fprintf(f, "\n");
        if (r->have_plan)
            plan_print(f, path, &r->plan,
                       &(struct plan_opts){ .top = o->top,
                                            .ngpus = 1,
                                            .gpus = { t->gpus },
                                            .objective = o->objective,
                                            .shard_n = 1 });
    }
}

static void json_try(FILE *f, const struct goal_try *t, bool last)
{
    fprintf(f, "    {\"nodes\": %d, \"gpus\": %d, \"fits\": %s, \"meets\": %s", t->nodes, t->gpus,
            t->fits ? "true" : "false", t->meets ? "true" : "false");
    if (t->fits) {
        char d[160];
        plan_describe(&t->best, d, sizeof(d));
        fprintf(f, ", \"step_time_s\": %.6g, \"time_to_train_s\": %.6g, \"days\": %.6g",
                t->best.sim_step_s, t->seconds, t->seconds / DAY);
        if (t->best.tt.have_price)
            fprintf(f, ", \"cost_usd\": %.6g", t->cost_usd);
        fputs(", \"layout\": ", f);
        fput_json_string(f, d);
        fputs(", \"changes\": ", f);
        fput_json_string(f, t->best.changes);
    }
    fprintf(f, "}%s\n", last ? "" : ",");
}

int plan_goal_write_json(FILE *f, const char *path, const struct plan_goal *g,
                         const struct plan_goal_result *r)
{
    fputs("{\n  \"scenario\": ", f);
    fput_json_string(f, path);
    fprintf(f, ",\n  \"goal\": {\"tokens\": %.6g", r->tokens);
    if (g->days > 0)
        fprintf(f, ", \"days\": %.6g", g->days);
    if (g->budget > 0)
        fprintf(f, ", \"budget_usd\": %.6g", g->budget);
    if (r->price > 0)
        fprintf(f, ", \"price_per_gpu_hour\": %.6g", r->price);
    fprintf(f, "},\n  \"ideal_gpus\": %.6g,\n  \"ideal_cost_usd\": %.6g,\n  \"tries\": [\n",
            r->ideal_gpus, r->ideal_cost_usd);
    for (int i = 0; i < r->ntries; i++)
        json_try(f, &r->tries[i], i + 1 == r->ntries);
    fputs("  ],\n  \"answer\": ", f);
    if (r->chosen >= 0)
        fprintf(f, "{\"gpus\": %d, \"nodes\": %d}", r->tries[r->chosen].gpus,
                r->tries[r->chosen].nodes);
    else
        fputs("null", f);
    fputs(",\n  \"below\": ", f);
    if (r->below >= 0)
        fprintf(f, "{\"gpus\": %d, \"nodes\": %d, \"meets\": %s}", r->tries[r->below].gpus,
                r->tries[r->below].nodes, r->tries[r->below].meets ? "true" : "false");
    else
        fputs("null", f);
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}
