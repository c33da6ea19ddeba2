/*
 * json_out.c - the JSON result of a run (schema: docs/json-schema.md). The
 * only file that writes JSON with cJSON (import/jsontree.c is the one that reads
 * it): children are attached to their parent as soon as they are created, so
 * one cJSON_Delete(root) frees everything.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base/files.h"
#include "base/util.h"
#include "report/report.h"
#include "report/band.h"
#include "model/layout.h"
#include "model/workload.h"

static cJSON *obj(cJSON *parent, const char *name)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddItemToObject(parent, name, o);
    return o;
}

static void config_json(cJSON *root, const struct scenario *s)
{
    cJSON *c = obj(root, "config");
    cJSON *m, *p, *t;

    cJSON_AddStringToObject(c, "scenario", s->name);
    cJSON_AddStringToObject(c, "hardware", s->hw.name);
    cJSON_AddNumberToObject(c, "nodes", s->nodes);
    cJSON_AddNumberToObject(c, "gpus", s->gpus);
    m = obj(c, "model");
    cJSON_AddStringToObject(m, "name", s->model.name);
    cJSON_AddNumberToObject(m, "layers", s->model.layers);
    cJSON_AddNumberToObject(m, "hidden", s->model.hidden);
    cJSON_AddNumberToObject(m, "heads", s->model.heads);
    cJSON_AddNumberToObject(m, "kv_heads", s->model.kv_heads);
    cJSON_AddNumberToObject(m, "params", workload_params_total(&s->model));
    t = obj(c, "training");
    cJSON_AddNumberToObject(t, "seq_len", s->train.seq_len);
    cJSON_AddNumberToObject(t, "global_batch", s->train.global_batch);
    cJSON_AddNumberToObject(t, "micro_batch", s->train.micro_batch);
    cJSON_AddStringToObject(t, "precision", dtype_name(s->train.precision));
    cJSON_AddStringToObject(t, "optimizer", optimizer_name(s->train.optimizer));
    cJSON_AddStringToObject(t, "recompute", recompute_name(s->train.recompute));
    cJSON_AddStringToObject(t, "finetune", finetune_name(s->train.finetune));
    p = obj(c, "parallelism");
    cJSON_AddNumberToObject(p, "dp", s->par.dp);
    cJSON_AddNumberToObject(p, "tp", s->par.tp);
    cJSON_AddNumberToObject(p, "pp", s->par.pp);
    cJSON_AddNumberToObject(p, "vpp", s->par.vpp);
    cJSON_AddNumberToObject(p, "cp", s->par.cp);
    cJSON_AddNumberToObject(p, "ep", s->par.ep);
    cJSON_AddBoolToObject(p, "sequence_parallel", s->par.sequence_parallel);
    cJSON_AddStringToObject(p, "schedule", schedule_name(s->par.schedule));
    cJSON_AddStringToObject(p, "sharding", sharding_name(s->par.sharding));
    if (layout_sharding_reading(s))
        cJSON_AddStringToObject(p, "sharding_reading", layout_sharding_reading(s));
}

/* The framework profile: name, version, and every setting with what became of it. */
static void framework_json(cJSON *root, const struct scenario *s)
{
    const struct fw_state *fw = &s->fw;
    cJSON *o = obj(root, "framework"), *arr;

    cJSON_AddStringToObject(o, "name", fw->name ? fw->name : "other");
    cJSON_AddStringToObject(o, "version", fw->version ? fw->version : "");
    if (fw->asked)
        cJSON_AddStringToObject(o, "version_asked", fw->asked);
    if (fw->reading)
        cJSON_AddStringToObject(o, "version_reading", fw->reading);
    cJSON_AddStringToObject(o, "read", fw->read ? fw->read : "");
    if (fw->note)
        cJSON_AddStringToObject(o, "note", fw->note);
    arr = cJSON_AddArrayToObject(o, "settings");
    for (int i = 0; i < fw->nsettings; i++) {
        const struct fw_setting *st = &fw->settings[i];
        cJSON *e = cJSON_CreateObject();

        cJSON_AddItemToArray(arr, e);
        cJSON_AddStringToObject(e, "key", st->key);
        cJSON_AddStringToObject(e, "value", st->value);
        if (st->when)
            cJSON_AddStringToObject(e, "when", st->when);
        cJSON_AddStringToObject(e, "status", fw_status_name(fw_setting_status(fw, i)));
        cJSON_AddStringToObject(e, "source", st->source);
    }
}

static void categories(cJSON *parent, const char *name, const sim_time *v, double scale)
{
    cJSON *o = obj(parent, name);
    int c;

    for (c = 0; c < TC_COUNT; c++)
        cJSON_AddNumberToObject(o, tcat_name(c), (double)v[c] / scale);
}

static void rank_json(cJSON *arr, const struct rank_result *rr)
{
    cJSON *o = cJSON_CreateObject(), *mem, *at, *cb;
    int c;

    cJSON_AddItemToArray(arr, o);
    cJSON_AddNumberToObject(o, "rank", rr->rank);
    cJSON_AddNumberToObject(o, "stage", rr->coords[DIM_PP]);
    cJSON_AddNumberToObject(o, "end_s", (double)rr->end / NS_PER_S);
    categories(o, "breakdown_s", rr->bucket, NS_PER_S);
    categories(o, "busy_s", rr->busy, NS_PER_S);
    mem = obj(o, "memory");
    cJSON_AddNumberToObject(mem, "peak_bytes", (double)rr->peak);
    cJSON_AddNumberToObject(mem, "peak_allocated_bytes", (double)rr->peak_allocated);
    cJSON_AddNumberToObject(mem, "peak_reserved_bytes", (double)rr->peak_reserved);
    cJSON_AddNumberToObject(mem, "peak_time_s", (double)rr->peak_t / NS_PER_S);
    cJSON_AddNumberToObject(mem, "reserve_short_bytes", (double)rr->reserve_short);
    at = obj(mem, "at_peak_bytes");
    for (c = 0; c < MC_COUNT; c++)
        cJSON_AddNumberToObject(at, mcat_name(c), (double)rr->at_peak[c]);
    cb = obj(o, "comm_bus_bytes");
    for (c = 0; c < COMM_KIND_COUNT; c++)
        if (rr->comm_bytes[c] > 0)
            cJSON_AddNumberToObject(cb, comm_kind_name(c), rr->comm_bytes[c]);
}

/* Time to train, cost and energy: present only when their inputs are (totals.h). */
static void totals_json(cJSON *res, const struct run *r)
{
    const struct train_totals *t = &run_metrics(r)->totals;
    cJSON *o;

    if (!t->have_tokens)
        return;
    o = obj(res, "time_to_train");
    cJSON_AddNumberToObject(o, "tokens", t->tokens);
    cJSON_AddNumberToObject(o, "steps", t->steps);
    cJSON_AddNumberToObject(o, "seconds", t->seconds);
    cJSON_AddNumberToObject(o, "days", t->seconds / 86400.0);
    cJSON_AddNumberToObject(o, "gpu_hours", t->gpu_hours);
    if (t->have_price)
        cJSON_AddNumberToObject(o, "cost_usd", t->cost_usd);
    if (t->have_power)
        cJSON_AddNumberToObject(o, "energy_J", t->energy_J);
}

/* result.step_time_interval_s and result.interval_basis (band.h). */
static void interval_json(cJSON *res, const struct run *r)
{
    struct band b;
    cJSON *basis, *regime, *relaxed;

    band_lookup(r->s, r->step_s, &b);
    if (b.found) {
        cJSON *iv = cJSON_AddArrayToObject(res, "step_time_interval_s");
        cJSON_AddItemToArray(iv, cJSON_CreateNumber(b.lo_s));
        cJSON_AddItemToArray(iv, cJSON_CreateNumber(b.hi_s));
    } else {
        cJSON_AddNullToObject(res, "step_time_interval_s");
    }
    basis = obj(res, "interval_basis");
    if (b.found)
        cJSON_AddStringToObject(basis, "set", b.sets);
    else
        cJSON_AddNullToObject(basis, "set");
    regime = obj(basis, "regime");
    relaxed = cJSON_AddArrayToObject(basis, "not_matched");
    for (int d = 0; d < BD_COUNT; d++) {
        cJSON_AddStringToObject(regime, band_dim_name((enum band_dim)d), b.regime.word[d]);
        if (b.relaxed & (1u << d))
            cJSON_AddItemToArray(relaxed, cJSON_CreateString(band_dim_name((enum band_dim)d)));
    }
    cJSON_AddNumberToObject(basis, "n", b.n);
    if (b.found) {
        cJSON_AddNumberToObject(basis, "p10_measured_over_predicted", b.q10);
        cJSON_AddNumberToObject(basis, "p90_measured_over_predicted", b.q90);
    } else {
        char why[256];
        band_basis_text(&b, why, sizeof(why));
        cJSON_AddStringToObject(basis, "none_because", why);
    }
}

static cJSON *build(const struct run *r)
{
    cJSON *root = cJSON_CreateObject(), *res, *ranks, *colls;
    const struct run_metrics *mt = run_metrics(r);
    int i, c;

    cJSON_AddStringToObject(root, "simtrain_version", SIMTRAIN_VERSION_STRING);
    config_json(root, r->s);
    framework_json(root, r->s);
    res = obj(root, "result");
    cJSON_AddNumberToObject(res, "step_time_s", r->step_s);
    interval_json(res, r);
    cJSON_AddNumberToObject(res, "tokens_per_step", r->tokens_per_step);
    cJSON_AddNumberToObject(res, "tokens_per_s", r->tokens_per_s);
    cJSON_AddNumberToObject(res, "tokens_per_s_per_gpu", r->tokens_per_s_per_gpu);
    cJSON_AddNumberToObject(res, "model_flops_per_step", r->model_flops);
    cJSON_AddNumberToObject(res, "mfu", r->mfu);
    cJSON_AddNumberToObject(res, "hardware_flops_per_step", r->hw_flops);
    cJSON_AddNumberToObject(res, "hfu", r->hfu);
    cJSON_AddStringToObject(res, "flops_convention", workload_flops_convention(r->s));
    cJSON_AddNumberToObject(res, "peak_memory_bytes", r->peak_bytes);
    cJSON_AddNumberToObject(res, "peak_allocated_bytes", r->peak_allocated_bytes);
    cJSON_AddNumberToObject(res, "peak_reserved_bytes", r->peak_reserved_bytes);
    cJSON_AddNumberToObject(res, "memory_capacity_bytes", r->capacity_bytes);
    cJSON_AddBoolToObject(res, "fits", r->fits);
    cJSON_AddNumberToObject(res, "simulated_ranks", r->sim.nranks);
    cJSON_AddNumberToObject(res, "events", (double)r->sim.events);
    totals_json(res, r);
    {
        cJSON *o = obj(res, "breakdown_s");
        for (c = 0; c < TC_COUNT; c++)
            cJSON_AddNumberToObject(o, tcat_name(c), mt->breakdown_s[c]);
    }
    {
        const struct metrics_dp d = mt->dp;
        cJSON *o = obj(res, "data_parallel");
        cJSON_AddNumberToObject(o, "volume_bytes", d.volume_bytes);
        cJSON_AddNumberToObject(o, "psi_bytes", d.psi_bytes);
        cJSON_AddNumberToObject(o, "volume_psi",
                                d.psi_bytes > 0 ? d.volume_bytes / d.psi_bytes : 0);
        cJSON_AddNumberToObject(o, "collectives", d.collectives);
        cJSON_AddNumberToObject(o, "link_bytes", d.link_bytes);
        cJSON_AddNumberToObject(o, "nic_bytes", d.nic_bytes);
        cJSON_AddNumberToObject(o, "exposed_s", d.exposed_s);
        cJSON_AddNumberToObject(o, "offload_h2d_bytes", d.h2d_bytes);
        cJSON_AddNumberToObject(o, "offload_d2h_bytes", d.d2h_bytes);
        cJSON_AddNumberToObject(o, "offload_exposed_s", d.offload_s);
    }
    ranks = cJSON_AddArrayToObject(root, "ranks");
    for (i = 0; i < r->sim.nranks; i++)
        rank_json(ranks, &r->sim.ranks[i]);
    colls = cJSON_AddArrayToObject(root, "collectives");
    for (i = 0; i < r->sim.nnotes; i++) {
        const struct coll_note *n = &r->sim.notes[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(colls, o);
        cJSON_AddStringToObject(o, "group", comm_kind_name(n->comm_kind));
        cJSON_AddStringToObject(o, "op", coll_op_name((enum coll_op)n->op));
        cJSON_AddNumberToObject(o, "bytes", n->bytes);
        cJSON_AddNumberToObject(o, "ranks", n->nranks);
        cJSON_AddNumberToObject(o, "nodes", n->nnodes);
        cJSON_AddStringToObject(o, "algo",
                                n->algo == ALGO_AUTO ? "p2p" : algo_name((enum coll_algo)n->algo));
        cJSON_AddStringToObject(o, "proto", proto_name((enum coll_proto)n->proto));
        cJSON_AddStringToObject(o, "path", n->path ? n->path : "");
        cJSON_AddNumberToObject(o, "time_s", (double)n->time / NS_PER_S);
        cJSON_AddNumberToObject(o, "count", n->per_rank);
    }
    return root;
}

char *report_json_text(const struct run *r)
{
    cJSON *root = build(r);
    char *text = cJSON_Print(root);
    size_t n = strlen(text);
    char *out = xmalloc(n + 2);

    memcpy(out, text, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    free(text);
    cJSON_Delete(root);
    return out;
}

int report_json(const char *path, const struct run *r)
{
    char *text = report_json_text(r);
    FILE *f = files_open_output(path);
    int rc = 0;

    if (!f) {
        rc = -1;
    } else {
        fputs(text, f);
        rc = files_close_output(f);
    }
    free(text);
    return rc;
}
