/*
 * sweep.c - axes, points and scaling efficiency of `simtrain sweep` (see
 * sweep.h). Its CSV, JSON and text outputs and the merge of shard files are
 * sweep_io.c; the command line is cmd_sweep.c.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream() for reload diagnostics */

#include "whatif/sweep.h"

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/schema.h"
#include "report/band.h"
#include "run/run.h"

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

void sweep_set_text(struct sweep *sw, const char *name, const char *text, size_t len)
{
    sw->text = text;
    sw->text_name = name;
    sw->text_len = len;
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

bool sweep_is_size_key(const char *key)
{
    for (size_t i = 0; i < ARRAY_LEN(size_keys); i++)
        if (strcmp(key, size_keys[i]) == 0)
            return true;
    return false;
}

/* Append an axis; the sweep owns its strings from then on. */
static void keep_axis(struct sweep *sw, const struct sweep_axis *ax)
{
    sw->axes = xrealloc(sw->axes, sizeof(*sw->axes) * (size_t)(sw->naxes + 1));
    sw->axes[sw->naxes++] = *ax;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A value given twice on one axis would simulate the same point twice: refused, naming the
 * first repeated value (found in n log n on a sorted copy, so 10^4 values are answered at once).
 */
static int repeated_value(const struct sweep_axis *ax, char *msg, size_t msglen)
{
    char **sorted = xcalloc((size_t)(ax->nvalues ? ax->nvalues : 1), sizeof(*sorted));
    const char *dup = NULL;

    memcpy(sorted, ax->values, (size_t)ax->nvalues * sizeof(*sorted));
    qsort(sorted, (size_t)ax->nvalues, sizeof(*sorted), by_text);
    for (int v = 1; v < ax->nvalues && !dup; v++)
        if (strcmp(sorted[v], sorted[v - 1]) == 0 && sorted[v][0])
            dup = sorted[v];
    if (dup)
        snprintf(msg, msglen, "--vary %s: value '%s' is given twice", ax->key, dup);
    free(sorted);
    return dup ? -1 : 0;
}

/*
 * A hardware or workload name (or path) a --vary value gives must resolve: a file that is not
 * there is bad input, not a point's verdict. 0, or -1 with the loader's first diagnostic line.
 */
static int check_ref_value(const char *key, const char *value, char *msg, size_t msglen)
{
    char *diag = NULL;
    size_t dlen = 0;
    FILE *f = open_memstream(&diag, &dlen);
    bool ok;

    if (strcmp(key, "hardware") == 0) {
        struct hardware *hw = cfg_load_hardware(value, f);
        ok = hw != NULL;
        cfg_free_hw(hw);
    } else if (strcmp(key, "workload") == 0) {
        struct model *m = cfg_load_model(value, f);
        ok = m != NULL;
        cfg_free_model(m);
    } else {
        ok = true;
    }
    if (f)
        fclose(f);
    if (!ok) {
        const char *d = diag ? diag : "";
        const char *e = strstr(d, "error: ");
        size_t n = strcspn(e ? e + 7 : d, "\n");
        snprintf(msg, msglen, "--vary %s: value '%s': %.*s", key, value, (int)n, e ? e + 7 : d);
    }
    free(diag);
    return ok ? 0 : -1;
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
    /* A file reference, or the framework profile (its defaults bind when the file loads):
     * both reload the scenario with the value as a --set override. */
    ax.ref = f->type == FT_REF || strncmp(ax.key, "training.framework", 18) == 0;
    ax.size = sweep_is_size_key(ax.key);
    ax.nvalues = split_values(eq + 1, &ax.values);
    if (repeated_value(&ax, msg, msglen)) {
        keep_axis(sw, &ax); /* released with the sweep */
        return -1;
    }
    for (int v = 0; v < ax.nvalues && ax.ref; v++)
        if (ax.values[v][0] == '\0' || check_ref_value(ax.key, ax.values[v], msg, msglen) != 0) {
            if (ax.values[v][0] == '\0')
                snprintf(msg, msglen, "--vary %s: empty value", ax.key);
            keep_axis(sw, &ax); /* released with the sweep */
            return -1;
        }
    for (int v = 0; v < ax.nvalues && !ax.ref; v++) {
        struct scenario copy = *sw->base;
        struct cfg_error err;
        if (ax.values[v][0] == '\0' || cfg_set(&copy, ax.key, ax.values[v], &err) != 0) {
            snprintf(msg, msglen, "--vary %s: value '%s': %s", ax.key, ax.values[v],
                     ax.values[v][0] ? err.msg : "empty value");
            keep_axis(sw, &ax); /* released with the sweep */
            return -1;
        }
    }
    if (sw->npoints * ax.nvalues > SWEEP_MAX_POINTS) {
        snprintf(msg, msglen,
                 "the sweep would have more than %ld points, the most even with --force",
                 SWEEP_MAX_POINTS);
        keep_axis(sw, &ax);
        return -1;
    }
    sw->npoints *= ax.nvalues;
    sw->dp_axis |= strcmp(ax.key, "parallelism.dp") == 0;
    keep_axis(sw, &ax);
    return 0;
}

void sweep_note_inputs(const struct sweep *sw)
{
    long stride = 1;

    for (int a = sw->naxes - 1; a >= 0; a--) {
        for (int v = 0; v < sw->axes[a].nvalues && sw->axes[a].ref; v++) {
            struct scenario s, *owned;
            char msg[256];
            (void)sweep_point_scenario(sw, v * stride, &s, &owned, msg, sizeof(msg));
            cfg_free(owned);
        }
        stride *= sw->axes[a].nvalues;
    }
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
    s = sw->text ? cfg_load_scenario_mem(sw->text_name, sw->text, sw->text_len, o, n,
                                         diag ? diag : stderr)
                 : cfg_load_scenario(sw->path, o, n, diag ? diag : stderr);
    if (s && sw->text)
        s->path = sw->path;
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
    struct band b;

    pt->step_s = r->step_s;
    band_lookup(r->s, r->step_s, &b);
    pt->step_lo_s = b.lo_s;
    pt->step_hi_s = b.hi_s;
    pt->tokens_per_s = r->tokens_per_s;
    pt->tokens_per_s_per_gpu = r->tokens_per_s_per_gpu;
    pt->mfu = r->mfu;
    pt->peak_bytes = r->peak_bytes;
    pt->capacity_bytes = r->capacity_bytes;
    memcpy(pt->breakdown_s, run_metrics(r)->breakdown_s, sizeof(pt->breakdown_s));
    for (int c = 0; c < MC_COUNT; c++)
        pt->mem_bytes[c] = (double)r->sim.ranks[r->peak_idx].at_peak[c];
    pt->tt = run_metrics(r)->totals;
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
            if (sweep_point_simulated(&pts[i]))
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

bool sweep_point_simulated(const struct sweep_point *p)
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
            if (base < 0 || !sweep_point_simulated(p) || p->step_s <= 0)
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
