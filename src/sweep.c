/*
 * sweep.c - axes, points and scaling efficiency of `simtrain sweep`, its CSV,
 * JSON and text outputs, and the merge of shard files (see sweep.h). The
 * command line is cmd_sweep.c.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream() for reload diagnostics */

#include "sweep.h"

#include <stdlib.h>
#include <string.h>

#include "config_schema.h"
#include "csv.h"
#include "report.h"
#include "run.h"

static const char *const size_keys[] = { "cluster.nodes", "cluster.gpus", "hardware.nodes",
                                         "hardware.node.gpus" };

void sweep_init(struct sweep *sw, const char *path, const struct scenario *base,
                const struct cfg_override *ovr, int novr, bool weak)
{
    memset(sw, 0, sizeof(*sw));
    sw->path = path;
    sw->base = base;
    sw->ovr = ovr;
    sw->novr = novr;
    sw->weak = weak;
    sw->npoints = 1;
}

void sweep_release(struct sweep *sw)
{
    for (int a = 0; a < sw->naxes; a++) {
        for (int v = 0; v < sw->axes[a].nvalues; v++)
            free(sw->axes[a].values[v]);
        free(sw->axes[a].values);
        free(sw->axes[a].key);
    }
    free(sw->axes);
    sw->axes = NULL;
    sw->naxes = 0;
}

/* Split "a,b,[c,d],{e: f}" at top-level commas; returns the count, values in *out. */
static int split_values(const char *text, char ***out)
{
    char **v = NULL;
    size_t cap = 0;
    int n = 0, depth = 0;
    const char *start = text;
    char quote = 0;

    for (const char *p = text;; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
            else if (*p == '\0')
                quote = 0; /* unterminated: cfg_set reports it */
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if ((*p == ']' || *p == '}') && depth > 0) {
            depth--;
        }
        if (*p == '\0' || (*p == ',' && depth == 0 && !quote)) {
            grow_array((void **)&v, &cap, (size_t)n + 1, sizeof(*v));
            v[n++] = xstrndup(start, (size_t)(p - start));
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    *out = v;
    return n;
}

static bool is_size_key(const char *key)
{
    for (size_t i = 0; i < ARRAY_LEN(size_keys); i++)
        if (strcmp(key, size_keys[i]) == 0)
            return true;
    return false;
}

int sweep_add_axis(struct sweep *sw, const char *arg, char *msg, size_t msglen)
{
    const char *eq = strchr(arg, '=');
    struct sweep_axis ax;
    const struct field *f;
    size_t base_off, bad_at, bad_len;

    memset(&ax, 0, sizeof(ax));
    if (!eq || eq == arg || eq[1] == '\0') {
        snprintf(msg, msglen, "--vary takes KEY=V1,V2,..., got '%s'", arg);
        return -1;
    }
    if (sw->naxes >= SWEEP_MAX_AXES) {
        snprintf(msg, msglen, "at most %d --vary axes", SWEEP_MAX_AXES);
        return -1;
    }
    ax.key = xstrndup(arg, (size_t)(eq - arg));
    for (int a = 0; a < sw->naxes; a++)
        if (strcmp(sw->axes[a].key, ax.key) == 0) {
            snprintf(msg, msglen, "'%s' is varied twice", ax.key);
            free(ax.key);
            return -1;
        }
    f = schema_lookup(ax.key, &base_off, &bad_at, &bad_len, msg, msglen);
    if (!f) {
        free(ax.key);
        return -1;
    }
    ax.ref = f->type == FT_REF;
    ax.size = is_size_key(ax.key);
    ax.nvalues = split_values(eq + 1, &ax.values);
    for (int v = 0; v < ax.nvalues && !ax.ref; v++) {
        struct scenario copy = *sw->base;
        struct cfg_error err;
        if (ax.values[v][0] == '\0' || cfg_set(&copy, ax.key, ax.values[v], &err) != 0) {
            snprintf(msg, msglen, "--vary %s: value '%s': %s", ax.key, ax.values[v],
                     ax.values[v][0] ? err.msg : "empty value");
            sw->axes = xrealloc(sw->axes, sizeof(*sw->axes) * (size_t)(sw->naxes + 1));
            sw->axes[sw->naxes++] = ax; /* released with the sweep */
            return -1;
        }
    }
    if (sw->npoints * ax.nvalues > SWEEP_MAX_POINTS) {
        snprintf(msg, msglen, "the sweep would have more than %ld points", SWEEP_MAX_POINTS);
        sw->axes = xrealloc(sw->axes, sizeof(*sw->axes) * (size_t)(sw->naxes + 1));
        sw->axes[sw->naxes++] = ax;
        return -1;
    }
    sw->npoints *= ax.nvalues;
    sw->dp_axis |= strcmp(ax.key, "parallelism.dp") == 0;
    sw->axes = xrealloc(sw->axes, sizeof(*sw->axes) * (size_t)(sw->naxes + 1));
    sw->axes[sw->naxes++] = ax;
    return 0;
}

int sweep_value_index(const struct sweep *sw, long index, int a)
{
    for (int b = sw->naxes - 1; b > a; b--)
        index /= sw->axes[b].nvalues;
    return (int)(index % sw->axes[a].nvalues);
}

/* The first line of a diagnostic text, without "file:line:col: error: " noise kept short. */
static void first_line(const char *text, char *msg, size_t msglen)
{
    const char *e = strstr(text, "error: ");
    const char *start = e ? e + 7 : text;
    size_t n = strcspn(start, "\n");

    snprintf(msg, msglen, "%.*s", (int)n, start);
}

/* Reload the scenario with the base overrides and every axis value as --set overrides. */
static struct scenario *reload(const struct sweep *sw, long index, char *msg, size_t msglen)
{
    int n = sw->novr + sw->naxes;
    struct cfg_override *o = xcalloc((size_t)n, sizeof(*o));
    char **args = xcalloc((size_t)sw->naxes, sizeof(*args));
    struct scenario *s;
    char *text = NULL;
    size_t len = 0;
    FILE *diag = open_memstream(&text, &len);

    for (int i = 0; i < sw->novr; i++)
        o[i] = sw->ovr[i];
    for (int a = 0; a < sw->naxes; a++) {
        const struct sweep_axis *ax = &sw->axes[a];
        const char *val = ax->values[sweep_value_index(sw, index, a)];
        args[a] = xasprintf("%s=%s", ax->key, val);
        o[sw->novr + a] = (struct cfg_override){ ax->key, val, args[a] };
    }
    s = cfg_load_scenario(sw->path, o, n, diag ? diag : stderr);
    if (diag)
        fclose(diag);
    if (!s)
        first_line(text ? text : "cannot load the scenario", msg, msglen);
    free(text);
    for (int a = 0; a < sw->naxes; a++)
        free(args[a]);
    free(args);
    free(o);
    return s;
}

/* Scale the global batch with the GPU count (weak scaling). */
static int weak_batch(const struct sweep *sw, struct scenario *s, char *msg, size_t msglen)
{
    struct scenario probe = *s;
    struct cfg_error err;
    long long gb;

    (void)scenario_finalize(&probe, &err); /* only to derive the GPU count */
    if (probe.gpus <= 0)
        return 0; /* the real finalize reports it */
    gb = (long long)sw->base->train.global_batch * probe.gpus;
    if (gb % sw->base->gpus) {
        snprintf(msg, msglen,
                 "weak scaling: global_batch %d * %d GPUs / %d GPUs is not a whole number",
                 sw->base->train.global_batch, probe.gpus, sw->base->gpus);
        return -1;
    }
    s->train.global_batch = (int)(gb / sw->base->gpus);
    return 0;
}

int sweep_point_scenario(const struct sweep *sw, long index, struct scenario *out,
                         struct scenario **owned, char *msg, size_t msglen)
{
    bool degree = false, ref = false;
    struct cfg_error err;

    *owned = NULL;
    for (int a = 0; a < sw->naxes; a++) {
        const char *k = sw->axes[a].key;
        degree |= sw->axes[a].size || strcmp(k, "parallelism.tp") == 0 ||
                  strcmp(k, "parallelism.pp") == 0 || strcmp(k, "parallelism.cp") == 0;
        ref |= sw->axes[a].ref;
    }
    if (ref) {
        *owned = reload(sw, index, msg, msglen);
        if (!*owned)
            return -1;
        *out = **owned;
    } else {
        *out = *sw->base;
        for (int a = 0; a < sw->naxes; a++) {
            const struct sweep_axis *ax = &sw->axes[a];
            if (cfg_set(out, ax->key, ax->values[sweep_value_index(sw, index, a)], &err) != 0) {
                snprintf(msg, msglen, "%s: %s", ax->key, err.msg);
                return -1;
            }
        }
    }
    if (degree && !sw->dp_axis)
        out->par.dp = 0;
    if (sw->weak && weak_batch(sw, out, msg, msglen) != 0)
        return -1;
    if (scenario_finalize(out, &err) != 0) {
        snprintf(msg, msglen, "%s", err.msg);
        return -1;
    }
    return 0;
}

static void measure(const struct run *r, struct sweep_point *pt)
{
    const struct scenario *s = r->s;

    pt->step_s = r->step_s;
    pt->tokens_per_s = r->tokens_per_s;
    pt->tokens_per_s_per_gpu = r->tokens_per_s_per_gpu;
    pt->mfu = r->mfu;
    pt->peak_bytes = r->peak_bytes;
    pt->capacity_bytes = r->capacity_bytes;
    report_breakdown(r, pt->breakdown_s);
    for (int c = 0; c < MC_COUNT; c++)
        pt->mem_bytes[c] = (double)r->sim.ranks[r->peak_idx].at_peak[c];
    train_totals(s, r->step_s, &pt->tt);
    pt->status = r->fits ? SP_OK : SP_OOM;
}

void sweep_run_point(const struct sweep *sw, long index, struct sweep_point *pt)
{
    struct scenario s, *owned;
    struct sim_opts opts = { 0 };
    struct run r;

    memset(pt, 0, sizeof(*pt));
    pt->index = index;
    pt->base = -1;
    for (int a = 0; a < sw->naxes; a++)
        pt->vidx[a] = sweep_value_index(sw, index, a);
    if (sweep_point_scenario(sw, index, &s, &owned, pt->reason, sizeof(pt->reason)) != 0) {
        pt->status = SP_INVALID;
        cfg_free(owned);
        return;
    }
    pt->gpus = s.gpus;
    pt->nodes = s.nodes;
    pt->dp = s.par.dp;
    pt->tp = s.par.tp;
    pt->pp = s.par.pp;
    pt->vpp = s.par.vpp;
    pt->cp = s.par.cp;
    pt->ep = s.par.ep;
    pt->micro_batch = s.train.micro_batch;
    pt->global_batch = s.train.global_batch;
    if (run_scenario(&s, &opts, &r, pt->reason, sizeof(pt->reason)) != 0) {
        pt->status = SP_DECLINED;
    } else {
        measure(&r, pt);
        run_release(&r);
    }
    cfg_free(owned);
}

void sweep_run(const struct sweep *sw, int k, int n, struct sweep_point *pts, FILE *progress)
{
    for (long i = 0; i < sw->npoints; i++) {
        if (i % n != k) {
            memset(&pts[i], 0, sizeof(pts[i]));
            pts[i].index = i;
            pts[i].base = -1;
            pts[i].status = SP_NOT_RUN;
            continue;
        }
        sweep_run_point(sw, i, &pts[i]);
        if (progress) {
            fprintf(progress, "simtrain sweep: point %ld/%ld", i + 1, sw->npoints);
            for (int a = 0; a < sw->naxes; a++)
                fprintf(progress, " %s=%s", sw->axes[a].key, sw->axes[a].values[pts[i].vidx[a]]);
            if (pts[i].status == SP_OK || pts[i].status == SP_OOM)
                fprintf(progress, ": %.4g s per step\n", pts[i].step_s);
            else
                fprintf(progress, ": %s\n", pts[i].reason);
        }
    }
}

/* ---- scaling efficiency ---------------------------------------------------------------- */

static bool same_group(const struct sweep *sw, const struct sweep_point *a,
                       const struct sweep_point *b, bool by_size)
{
    if (!by_size)
        return true;
    for (int x = 0; x < sw->naxes; x++)
        if (!sw->axes[x].size && a->vidx[x] != b->vidx[x])
            return false;
    return true;
}

static bool simulated(const struct sweep_point *p)
{
    return p->status == SP_OK || p->status == SP_OOM;
}

void sweep_efficiency(const struct sweep *sw, struct sweep_point *pts, long n)
{
    bool by_size = false;
    int groups = 0;

    for (int x = 0; x < sw->naxes; x++)
        by_size |= sw->axes[x].size;
    for (long i = 0; i < n; i++)
        pts[i].group = -1;
    for (long i = 0; i < n; i++) {
        long base = -1;
        if (pts[i].group >= 0 || pts[i].status == SP_NOT_RUN)
            continue;
        for (long j = i; j < n; j++) {
            if (pts[j].group >= 0 || pts[j].status == SP_NOT_RUN ||
                !same_group(sw, &pts[i], &pts[j], by_size))
                continue;
            pts[j].group = groups;
            if (pts[j].status == SP_OK && (base < 0 || pts[j].gpus < pts[base].gpus))
                base = j;
        }
        for (long j = i; j < n; j++) {
            struct sweep_point *p = &pts[j];
            if (p->group != groups)
                continue;
            p->base = base >= 0 ? pts[base].index : -1;
            if (base < 0 || !simulated(p) || p->step_s <= 0)
                continue;
            p->speedup = pts[base].step_s / p->step_s;
            p->weak_eff = p->speedup;
            p->strong_eff = pts[base].step_s * pts[base].gpus / (p->step_s * p->gpus);
        }
        groups++;
    }
}

const char *sweep_status_name(int status)
{
    static const char *const n[SP_STATUS_COUNT] = { "ok", "out_of_memory", "invalid",
                                                    "not_simulated", "other_shard" };
    return status >= 0 && status < SP_STATUS_COUNT ? n[status] : "?";
}

/* ---- outputs ------------------------------------------------------------------------- */

static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void json_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void underscores(char *buf)
{
    for (size_t i = 0; buf[i]; i++)
        if (buf[i] == ' ' || buf[i] == '/')
            buf[i] = '_';
}

/* Column name of a time category: "time_tp_comm_s". */
static void tcat_column(int c, char *buf, size_t n)
{
    snprintf(buf, n, "time_%s_s", tcat_name(c));
    underscores(buf);
}

/* Column name of a memory category: "memory_optimizer_states_bytes". */
static void mcat_column(int c, char *buf, size_t n)
{
    snprintf(buf, n, "memory_%s_bytes", mcat_name(c));
    underscores(buf);
}

static const char *const metric_cols[] = {
    "gpus",
    "nodes",
    "dp",
    "tp",
    "pp",
    "vpp",
    "cp",
    "ep",
    "micro_batch",
    "global_batch",
    "step_time_s",
    "tokens_per_s",
    "tokens_per_s_per_gpu",
    "mfu",
    "peak_memory_bytes",
    "capacity_bytes",
    "group",
    "base_index",
    "speedup",
    "strong_scaling_eff",
    "weak_scaling_eff",
    "time_to_train_s",
    "gpu_hours",
    "cost_usd",
    "energy_J",
};

/* The numbers of a point in metric_cols order; *ok[i] false = empty field. */
static int point_numbers(const struct sweep_point *p, double *v, bool *ok)
{
    bool sim = p->status == SP_OK || p->status == SP_OOM, lay = p->gpus > 0;
    bool eff = sim && p->base >= 0;
    int n = 0;

#define PUT(val, cond) (v[n] = (val), ok[n++] = (cond))
    PUT(p->gpus, lay);
    PUT(p->nodes, lay);
    PUT(p->dp, lay);
    PUT(p->tp, lay);
    PUT(p->pp, lay);
    PUT(p->vpp, lay);
    PUT(p->cp, lay);
    PUT(p->ep, lay);
    PUT(p->micro_batch, lay);
    PUT(p->global_batch, lay);
    PUT(p->step_s, sim);
    PUT(p->tokens_per_s, sim);
    PUT(p->tokens_per_s_per_gpu, sim);
    PUT(p->mfu, sim);
    PUT(p->peak_bytes, sim);
    PUT(p->capacity_bytes, sim);
    PUT(p->group, p->group >= 0);
    PUT((double)p->base, p->base >= 0);
    PUT(p->speedup, eff);
    PUT(p->strong_eff, eff);
    PUT(p->weak_eff, eff);
    PUT(p->tt.seconds, sim && p->tt.have_tokens);
    PUT(p->tt.gpu_hours, sim && p->tt.have_tokens);
    PUT(p->tt.cost_usd, sim && p->tt.have_tokens && p->tt.have_price);
    PUT(p->tt.energy_J, sim && p->tt.have_tokens && p->tt.have_power);
#undef PUT
    return n;
}

static void num_field(FILE *f, bool ok, double v)
{
    if (ok)
        fprintf(f, ",%.10g", v);
    else
        fputc(',', f);
}

int sweep_write_csv(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f)
{
    double v[ARRAY_LEN(metric_cols)];
    bool ok[ARRAY_LEN(metric_cols)];
    char col[48];

    fputs("index", f);
    for (int a = 0; a < sw->naxes; a++) {
        fputc(',', f);
        csv_text(f, sw->axes[a].key);
    }
    fputs(",status,scaling", f);
    for (size_t c = 0; c < ARRAY_LEN(metric_cols); c++)
        fprintf(f, ",%s", metric_cols[c]);
    for (int c = 0; c < TC_COUNT; c++) {
        tcat_column(c, col, sizeof(col));
        fprintf(f, ",%s", col);
    }
    for (int c = 0; c < MC_COUNT; c++) {
        mcat_column(c, col, sizeof(col));
        fprintf(f, ",%s", col);
    }
    fputs(",reason\n", f);
    for (long i = 0; i < n; i++) {
        const struct sweep_point *p = &pts[i];
        bool sim = p->status == SP_OK || p->status == SP_OOM;
        int m;
        if (p->status == SP_NOT_RUN)
            continue;
        fprintf(f, "%ld", p->index);
        for (int a = 0; a < sw->naxes; a++) {
            fputc(',', f);
            csv_text(f, sw->axes[a].values[p->vidx[a]]);
        }
        fprintf(f, ",%s,%s", sweep_status_name(p->status), sw->weak ? "weak" : "strong");
        m = point_numbers(p, v, ok);
        for (int c = 0; c < m; c++)
            num_field(f, ok[c], v[c]);
        for (int c = 0; c < TC_COUNT; c++)
            num_field(f, sim, p->breakdown_s[c]);
        for (int c = 0; c < MC_COUNT; c++)
            num_field(f, sim, p->mem_bytes[c]);
        fputc(',', f);
        csv_text(f, p->reason);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

int sweep_write_json(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f)
{
    double v[ARRAY_LEN(metric_cols)];
    bool ok[ARRAY_LEN(metric_cols)];
    bool first = true;

    fputs("{\n  \"scenario\": ", f);
    json_text(f, sw->path ? sw->path : "");
    fprintf(f, ",\n  \"scaling\": \"%s\",\n  \"axes\": [", sw->weak ? "weak" : "strong");
    for (int a = 0; a < sw->naxes; a++) {
        fprintf(f, "%s\n    {\"key\": ", a ? "," : "");
        json_text(f, sw->axes[a].key);
        fputs(", \"values\": [", f);
        for (int x = 0; x < sw->axes[a].nvalues; x++) {
            fputs(x ? ", " : "", f);
            json_text(f, sw->axes[a].values[x]);
        }
        fputs("]}", f);
    }
    fputs("\n  ],\n  \"points\": [", f);
    for (long i = 0; i < n; i++) {
        const struct sweep_point *p = &pts[i];
        int m;
        if (p->status == SP_NOT_RUN)
            continue;
        fprintf(f, "%s\n    {\"index\": %ld, \"values\": {", first ? "" : ",", p->index);
        first = false;
        for (int a = 0; a < sw->naxes; a++) {
            fputs(a ? ", " : "", f);
            json_text(f, sw->axes[a].key);
            fputs(": ", f);
            json_text(f, sw->axes[a].values[p->vidx[a]]);
        }
        fprintf(f, "}, \"status\": \"%s\"", sweep_status_name(p->status));
        m = point_numbers(p, v, ok);
        for (int c = 0; c < m; c++)
            if (ok[c])
                fprintf(f, ", \"%s\": %.10g", metric_cols[c], v[c]);
        if (p->status == SP_OK || p->status == SP_OOM) {
            fputs(", \"breakdown_s\": {", f);
            for (int c = 0; c < TC_COUNT; c++)
                fprintf(f, "%s\"%s\": %.9g", c ? ", " : "", tcat_name(c), p->breakdown_s[c]);
            fputs("}, \"memory_at_peak_bytes\": {", f);
            for (int c = 0; c < MC_COUNT; c++)
                fprintf(f, "%s\"%s\": %.9g", c ? ", " : "", mcat_name(c), p->mem_bytes[c]);
            fputc('}', f);
        }
        if (p->reason[0]) {
            fputs(", \"reason\": ", f);
            json_text(f, p->reason);
        }
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
    return ferror(f) ? -1 : 0;
}

void sweep_print(const struct sweep *sw, const struct sweep_point *pts, long n, FILE *f)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    int w[SWEEP_MAX_AXES];
    bool size = false;

    for (int a = 0; a < sw->naxes; a++) {
        size |= sw->axes[a].size;
        w[a] = (int)strlen(sw->axes[a].key);
        for (int x = 0; x < sw->axes[a].nvalues; x++)
            if ((int)strlen(sw->axes[a].values[x]) > w[a])
                w[a] = (int)strlen(sw->axes[a].values[x]);
    }
    for (int a = 0; a < sw->naxes; a++)
        fprintf(f, "%-*s  ", w[a], sw->axes[a].key);
    fprintf(f, "%5s  %-12s %10s %10s %6s %9s %8s %7s %10s %9s\n", "GPUs", "dp x tp x pp", "step",
            "tok/s/GPU", "MFU", "memory", size ? "speedup" : "vs base",
            size ? (sw->weak ? "weak" : "strong") : "", "to train", "cost");
    for (long i = 0; i < n; i++) {
        const struct sweep_point *p = &pts[i];
        char lay[32], step[32], dur[32], cost[32];
        if (p->status == SP_NOT_RUN)
            continue;
        for (int a = 0; a < sw->naxes; a++)
            fprintf(f, "%-*s  ", w[a], sw->axes[a].values[p->vidx[a]]);
        if (p->status != SP_OK && p->status != SP_OOM) {
            fprintf(f, "%s: %s\n", p->status == SP_INVALID ? "invalid" : "not simulated",
                    p->reason);
            continue;
        }
        snprintf(lay, sizeof(lay), "%d x %d x %d", p->dp, p->tp, p->pp);
        report_fmt_time(p->step_s, step, sizeof(step));
        totals_fmt_duration(&p->tt, dur, sizeof(dur));
        totals_fmt_cost(&p->tt, cost, sizeof(cost));
        fprintf(f, "%5d  %-12s %10s %10.0f %5.1f%% %5.1f GiB", p->gpus, lay, step,
                p->tokens_per_s_per_gpu, 100 * p->mfu, p->peak_bytes / gib);
        if (p->base >= 0 && size)
            fprintf(f, " %7.2fx %6.1f%%", p->speedup,
                    100 * (sw->weak ? p->weak_eff : p->strong_eff));
        else if (p->base >= 0)
            fprintf(f, " %7.2fx %7s", p->speedup, "");
        else
            fprintf(f, " %8s %7s", "-", "");
        fprintf(f, " %10s %9s%s\n", dur, cost, p->status == SP_OOM ? "  OUT OF MEMORY" : "");
    }
    if (!size)
        fprintf(f, "vs base: step-time speedup against the first point that fits\n");
}

/* ---- merging shard files ------------------------------------------------------------- */

static int axis_value(struct sweep_axis *ax, const char *text)
{
    for (int x = 0; x < ax->nvalues; x++)
        if (strcmp(ax->values[x], text) == 0)
            return x;
    ax->values = xrealloc(ax->values, sizeof(char *) * (size_t)(ax->nvalues + 1));
    ax->values[ax->nvalues] = xstrdup(text);
    return ax->nvalues++;
}

static int status_of(const char *text)
{
    for (int s = 0; s < SP_STATUS_COUNT; s++)
        if (strcmp(text, sweep_status_name(s)) == 0)
            return s;
    return -1;
}

static void merge_row(const struct csv_table *t, int row, struct sweep *sw, struct sweep_point *p)
{
    double v[ARRAY_LEN(metric_cols)];
    char col[48];

    memset(p, 0, sizeof(*p));
    p->index = strtol(csv_field(t, row, 0), NULL, 10);
    for (int a = 0; a < sw->naxes; a++)
        p->vidx[a] = axis_value(&sw->axes[a], csv_field(t, row, 1 + a));
    p->status = status_of(csv_field(t, row, 1 + sw->naxes));
    sw->weak |= strcmp(csv_field(t, row, 2 + sw->naxes), "weak") == 0;
    for (size_t c = 0; c < ARRAY_LEN(metric_cols); c++)
        v[c] = strtod(csv_field(t, row, csv_column(t, metric_cols[c])), NULL);
    p->gpus = (int)v[0];
    p->nodes = (int)v[1];
    p->dp = (int)v[2];
    p->tp = (int)v[3];
    p->pp = (int)v[4];
    p->vpp = (int)v[5];
    p->cp = (int)v[6];
    p->ep = (int)v[7];
    p->micro_batch = (int)v[8];
    p->global_batch = (int)v[9];
    p->step_s = v[10];
    p->tokens_per_s = v[11];
    p->tokens_per_s_per_gpu = v[12];
    p->mfu = v[13];
    p->peak_bytes = v[14];
    p->capacity_bytes = v[15];
    p->tt.have_tokens = csv_field(t, row, csv_column(t, "time_to_train_s"))[0] != '\0';
    p->tt.seconds = v[21];
    p->tt.gpu_hours = v[22];
    p->tt.have_price = csv_field(t, row, csv_column(t, "cost_usd"))[0] != '\0';
    p->tt.cost_usd = v[23];
    p->tt.have_power = csv_field(t, row, csv_column(t, "energy_J"))[0] != '\0';
    p->tt.energy_J = v[24];
    for (int c = 0; c < TC_COUNT; c++) {
        tcat_column(c, col, sizeof(col));
        p->breakdown_s[c] = strtod(csv_field(t, row, csv_column(t, col)), NULL);
    }
    for (int c = 0; c < MC_COUNT; c++) {
        mcat_column(c, col, sizeof(col));
        p->mem_bytes[c] = strtod(csv_field(t, row, csv_column(t, col)), NULL);
    }
    snprintf(p->reason, sizeof(p->reason), "%s", csv_field(t, row, csv_column(t, "reason")));
}

static int by_index(const void *a, const void *b)
{
    const struct sweep_point *x = a, *y = b;

    return (x->index > y->index) - (x->index < y->index);
}

int sweep_merge(char **paths, int npaths, struct sweep *sw, struct sweep_point **pts, long *n,
                char *msg, size_t msglen)
{
    size_t cap = 0;

    memset(sw, 0, sizeof(*sw));
    *pts = NULL;
    *n = 0;
    for (int k = 0; k < npaths; k++) {
        struct csv_error err;
        struct csv_table *t = csv_read_file(paths[k], &err);
        int st;
        if (!t) {
            snprintf(msg, msglen, "%s:%d: %s", paths[k], err.line, err.msg);
            return -1;
        }
        st = csv_column(t, "status");
        if (st < 1 || csv_column(t, "index") != 0 || csv_column(t, "energy_J") < 0 ||
            st - 1 > SWEEP_MAX_AXES || (k > 0 && st - 1 != sw->naxes)) {
            snprintf(msg, msglen, "%s: not a sweep CSV of the same axes (written by --csv)",
                     paths[k]);
            csv_free(t);
            return -1;
        }
        if (k == 0) {
            sw->naxes = st - 1;
            sw->axes = xcalloc((size_t)sw->naxes, sizeof(*sw->axes));
            for (int a = 0; a < sw->naxes; a++) {
                sw->axes[a].key = xstrdup(t->header[1 + a]);
                sw->axes[a].size = strcmp(t->header[1 + a], "cluster.nodes") == 0 ||
                                   strcmp(t->header[1 + a], "cluster.gpus") == 0 ||
                                   strcmp(t->header[1 + a], "hardware.nodes") == 0 ||
                                   strcmp(t->header[1 + a], "hardware.node.gpus") == 0;
            }
        } else {
            for (int a = 0; a < sw->naxes; a++)
                if (strcmp(sw->axes[a].key, t->header[1 + a]) != 0) {
                    snprintf(msg, msglen, "%s: axis '%s' differs from the first file's '%s'",
                             paths[k], t->header[1 + a], sw->axes[a].key);
                    csv_free(t);
                    return -1;
                }
        }
        for (int r = 0; r < t->nrows; r++) {
            grow_array((void **)pts, &cap, (size_t)*n + 1, sizeof(**pts));
            merge_row(t, r, sw, &(*pts)[(*n)++]);
        }
        csv_free(t);
    }
    if (*n > 0)
        qsort(*pts, (size_t)*n, sizeof(**pts), by_index);
    for (long i = 1; i < *n; i++)
        if ((*pts)[i].index == (*pts)[i - 1].index) {
            snprintf(msg, msglen, "point %ld appears twice (overlapping shards?)", (*pts)[i].index);
            return -1;
        }
    sw->npoints = *n;
    return 0;
}
