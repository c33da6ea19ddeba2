/* prog.c - see prog.h. */
#include "prog.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct prog *prog_new(const char *role)
{
    struct prog *p = xcalloc(1, sizeof(*p));

    snprintf(p->role, sizeof(p->role), "%s", role);
    return p;
}

static void seg_release(struct prog_seg *g)
{
    free(g->tasks);
    free(g->lslot);
    free(g->lfmt);
    free(g->larg);
    free(g->lid);
    free(g->e);
}

static void segs_free(struct prog *p)
{
    int i;

    for (i = 0; i < p->nsegs; i++) {
        seg_release(&p->segs[i]);
    }
    free(p->segs);
    p->segs = NULL;
    p->nsegs = 0;
    p->cap_segs = 0;
}

void prog_free(struct prog *p)
{
    if (!p)
        return;
    segs_free(p);
    free(p->labels);
    free(p->label_hash);
    free(p->tasks);
    free(p->preds);
    free(p->succs);
    free(p->edges);
    free(p);
}

int prog_add(struct prog *p, const struct task *t)
{
    struct task *n;

    assert(!p->sealed);
    grow_array((void **)&p->tasks, &p->cap_tasks, (size_t)p->ntasks + 1, sizeof(*p->tasks));
    n = &p->tasks[p->ntasks];
    *n = *t;
    n->npred = n->nsucc = 0; /* counted by prog_dep(), placed by prog_seal() */
    return p->ntasks++;
}

void prog_reserve(struct prog *p, int ntasks, int nedges)
{
    assert(!p->sealed);
    if (ntasks > 0)
        grow_array((void **)&p->tasks, &p->cap_tasks, (size_t)ntasks, sizeof(*p->tasks));
    if (nedges > 0)
        grow_array((void **)&p->edges, &p->cap_edges, (size_t)nedges, sizeof(*p->edges));
}

void prog_dep(struct prog *p, int t, int dep)
{
    assert(!p->sealed);
    assert(dep >= 0 && dep < t && t < p->ntasks);
    grow_array((void **)&p->edges, &p->cap_edges, (size_t)p->nedges + 1, sizeof(*p->edges));
    p->edges[p->nedges].from = dep;
    p->edges[p->nedges].to = t;
    p->nedges++;
    p->tasks[t].npred++;
    p->tasks[dep].nsucc++;
}

static int label_intern(struct prog *p, const char *fmt, int arg);

static size_t label_slot(const struct prog *p, const char *fmt, int arg)
{
    uint64_t h = (uint64_t)(uintptr_t)fmt * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)arg;
    size_t i;

    h ^= h >> 29;
    for (i = h & (p->label_hash_cap - 1);; i = (i + 1) & (p->label_hash_cap - 1)) {
        int id = p->label_hash[i];
        if (id < 0 || (p->labels[id].fmt == fmt && p->labels[id].arg == arg))
            return i;
    }
}

int prog_label(struct prog *p, const char *fmt, int arg)
{
    size_t c = (size_t)((((uintptr_t)fmt * 0x9E3779B97F4A7C15ull) >> 40) ^
                        (uint64_t)(unsigned)arg * 0x85EBCA6Bu) &
               (PROG_LCACHE - 1);
    int id;

    /* builders ask for the same few labels over and over: a direct-mapped cache first */
    if (p->lcache[c].fmt == fmt && p->lcache[c].arg == arg)
        return p->lcache[c].id;
    id = label_intern(p, fmt, arg);
    p->lcache[c].fmt = fmt;
    p->lcache[c].arg = arg;
    p->lcache[c].id = id;
    return id;
}

static int label_intern(struct prog *p, const char *fmt, int arg)
{
    size_t i;

    if (2 * ((size_t)p->nlabels + 1) > p->label_hash_cap) {
        size_t cap = p->label_hash_cap ? 2 * p->label_hash_cap : 256;
        int k;
        free(p->label_hash);
        p->label_hash = xmalloc(cap * sizeof(int));
        p->label_hash_cap = cap;
        for (i = 0; i < cap; i++)
            p->label_hash[i] = -1;
        for (k = 0; k < p->nlabels; k++)
            p->label_hash[label_slot(p, p->labels[k].fmt, p->labels[k].arg)] = k;
    }
    i = label_slot(p, fmt, arg);
    if (p->label_hash[i] >= 0)
        return p->label_hash[i];
    grow_array((void **)&p->labels, &p->cap_labels, (size_t)p->nlabels + 1, sizeof(*p->labels));
    p->labels[p->nlabels].fmt = fmt;
    p->labels[p->nlabels].arg = arg;
    p->label_hash[i] = p->nlabels;
    return p->nlabels++;
}

void prog_label_text(const struct prog *p, int id, char *buf, size_t n)
{
    const char *f = p->labels[id].fmt;
    size_t o = 0;

    if (n == 0)
        return;
    for (; *f && o + 1 < n; f++) {
        if (f[0] == '%' && f[1] == 'd') {
            int w = snprintf(buf + o, n - o, "%d", p->labels[id].arg);
            o += w > 0 ? (size_t)w : 0;
            if (o >= n)
                o = n - 1;
            f++;
        } else {
            buf[o++] = *f;
        }
    }
    buf[o] = '\0';
}

/*
 * Counting sort of the edge list into per-task predecessor and successor
 * arrays (prog_dep() counted each task's edges), each in the order of the edges.
 */
void prog_seal(struct prog *p)
{
    int32_t np = 0, ns = 0;
    int i;

    assert(!p->sealed);
    p->preds = xmalloc(sizeof(int32_t) * (size_t)(p->nedges ? p->nedges : 1));
    p->succs = xmalloc(sizeof(int32_t) * (size_t)(p->nedges ? p->nedges : 1));
    p->npreds = p->nedges;
    /* each list's end, then filled backwards from it over the edges in reverse: in edge order */
    for (i = 0; i < p->ntasks; i++) {
        np += p->tasks[i].npred;
        ns += p->tasks[i].nsucc;
        p->tasks[i].pred0 = np;
        p->tasks[i].succ0 = ns;
    }
    for (i = p->nedges - 1; i >= 0; i--) {
        int32_t from = p->edges[i].from, to = p->edges[i].to;
        p->preds[--p->tasks[to].pred0] = from;
        p->succs[--p->tasks[from].succ0] = to;
    }
    free(p->edges);
    p->edges = NULL;
    segs_free(p);
    p->sealed = 1;
}

/* ---- stamping ------------------------------------------------------------------------------ */

static int seg_index(const struct prog *p, uint64_t key)
{
    int i;

    for (i = 0; i < p->nsegs; i++)
        if (p->segs[i].key == key)
            return i;
    return -1;
}

/* Off only in tests, which compare stamped programs with freshly emitted ones. */
static bool stamping = true;

void prog_set_stamping(bool on)
{
    stamping = on;
}

int prog_seg_find(const struct prog *p, uint64_t key)
{
    int i;

    if (!stamping)
        return -1;
    i = seg_index(p, key);

    return i >= 0 && p->segs[i].ok ? i : -1;
}

void prog_seg_begin(struct prog *p, uint64_t key, const int ext[PROG_SEG_EXT], int arg, int mb)
{
    int i = seg_index(p, key), k;
    struct prog_seg *g;

    assert(!p->sealed && p->rec_seg == 0);
    if (i < 0) {
        grow_array((void **)&p->segs, &p->cap_segs, (size_t)p->nsegs + 1, sizeof(*p->segs));
        i = p->nsegs++;
        memset(&p->segs[i], 0, sizeof(p->segs[i]));
        p->segs[i].key = key;
    }
    g = &p->segs[i];
    for (k = 0; k < PROG_SEG_EXT; k++)
        g->ext[k] = ext[k];
    g->arg = arg;
    g->mb = mb;
    p->rec_seg = i + 1;
    p->rec_t0 = p->ntasks;
    p->rec_e0 = p->nedges;
}

/* A task index of the recording as the segment stores it; false when outside it and ext. */
static bool seg_encode(const struct prog_seg *g, int t0, int t, int *code)
{
    int k;

    if (t < 0) {
        *code = INT32_MIN;
        return true;
    }
    if (t >= t0) {
        *code = t - t0;
        return true;
    }
    for (k = 0; k < PROG_SEG_EXT; k++)
        if (g->ext[k] >= 0 && g->ext[k] == t) {
            *code = -1 - k;
            return true;
        }
    return false;
}

static int seg_decode(int code, int t0, const int ext[PROG_SEG_EXT])
{
    if (code == INT32_MIN)
        return -1;
    return code >= 0 ? t0 + code : ext[-1 - code];
}

void prog_seg_end(struct prog *p, const int *out, int nout, int aux)
{
    struct prog_seg *g;
    int t0 = p->rec_t0, n, i;

    assert(p->rec_seg > 0 && nout <= PROG_SEG_OUT);
    g = &p->segs[p->rec_seg - 1];
    p->rec_seg = 0;
    n = p->ntasks - t0;
    seg_release(g);
    g->ntasks = n;
    g->tasks = xmalloc(sizeof(*g->tasks) * (size_t)(n ? n : 1));
    g->lslot = xmalloc(sizeof(*g->lslot) * (size_t)(n ? n : 1));
    g->lfmt = xmalloc(sizeof(*g->lfmt) * (size_t)(n ? n : 1));
    g->larg = xmalloc(sizeof(*g->larg) * (size_t)(n ? n : 1));
    g->lid = NULL;
    g->lid_rows = 0;
    g->nlab = 0;
    g->ok = true;
    for (i = 0; i < n; i++) {
        const struct task *t = &p->tasks[t0 + i];
        const struct prog_label *l = &p->labels[t->label];
        int32_t arg = l->arg == g->arg ? INT32_MIN : l->arg;
        int k;
        g->tasks[i] = *t;
        g->tasks[i].npred = g->tasks[i].nsucc = 0;
        for (k = 0; k < g->nlab; k++)
            if (g->lfmt[k] == l->fmt && g->larg[k] == arg)
                break;
        if (k == g->nlab) {
            g->lfmt[k] = l->fmt;
            g->larg[k] = arg;
            g->nlab++;
        }
        g->lslot[i] = k;
    }
    g->nedges = p->nedges - p->rec_e0;
    g->e = xmalloc(sizeof(*g->e) * (size_t)(g->nedges ? g->nedges : 1));
    for (i = 0; i < g->nedges; i++) {
        const struct prog_edge *e = &p->edges[p->rec_e0 + i];
        g->ok = g->ok && e->to >= t0 && seg_encode(g, t0, e->from, &g->e[i].from);
        g->e[i].to = e->to - t0;
    }
    for (i = 0; i < nout; i++)
        g->ok = g->ok && seg_encode(g, t0, out[i], &g->out[i]);
    g->aux = aux;
}

#define SEG_LID_ROWS 4096 /* stamp arguments (layer numbers) whose label indices are kept */

/*
 * The label indices of segment g's labels under stamp argument `arg`. The recorded calls
 * interned the labels in task order: interning the distinct ones in order of first use
 * assigns the same indices. Once interned they are kept, per argument.
 */
static const int32_t *seg_labels(struct prog *p, struct prog_seg *g, int arg)
{
    int w = g->nlab + 1, i;
    int32_t *row;

    if (!g->lid || (arg >= g->lid_rows && arg < SEG_LID_ROWS)) {
        int from = g->lid ? g->lid_rows : 0, rows = g->lid_rows;
        if (arg >= rows && arg < SEG_LID_ROWS)
            rows = MIN(MAX(arg + 1, 2 * rows), SEG_LID_ROWS);
        g->lid = xrealloc(g->lid, sizeof(*g->lid) * (size_t)(rows + 1) * (size_t)w);
        for (i = from * w; i < (rows + 1) * w; i++)
            g->lid[i] = INT32_MIN; /* not interned (the argument slot holds no argument) */
        g->lid_rows = rows;
    }
    row = g->lid + (size_t)(arg >= 0 && arg < g->lid_rows ? arg : g->lid_rows) * (size_t)w;
    if (row[g->nlab] == arg && arg != INT32_MIN)
        return row;
    for (i = 0; i < g->nlab; i++)
        row[i] = prog_label(p, g->lfmt[i], g->larg[i] == INT32_MIN ? arg : g->larg[i]);
    row[g->nlab] = arg;
    return row;
}

int prog_seg_stamp(struct prog *p, int seg, const int ext[PROG_SEG_EXT], int arg, int mb, int *out,
                   int nout)
{
    struct prog_seg *g = &p->segs[seg];
    const int32_t *lid;
    int t0 = p->ntasks, i;

    assert(!p->sealed && g->ok && nout <= PROG_SEG_OUT);
    assert((ext[0] < 0) == (g->ext[0] < 0) && (ext[1] < 0) == (g->ext[1] < 0) &&
           (ext[0] == ext[1]) == (g->ext[0] == g->ext[1]) &&
           "ext pattern differs from the recording");
    grow_array((void **)&p->tasks, &p->cap_tasks, (size_t)(t0 + g->ntasks), sizeof(*p->tasks));
    grow_array((void **)&p->edges, &p->cap_edges, (size_t)(p->nedges + g->nedges),
               sizeof(*p->edges));
    lid = seg_labels(p, g, arg);
    for (i = 0; i < g->ntasks; i++) {
        struct task *t = &p->tasks[t0 + i];
        *t = g->tasks[i];
        t->label = lid[g->lslot[i]];
        if (t->mb == g->mb)
            t->mb = mb;
    }
    p->ntasks += g->ntasks;
    for (i = 0; i < g->nedges; i++) {
        int from = seg_decode(g->e[i].from, t0, ext), to = t0 + g->e[i].to;
        p->edges[p->nedges].from = from;
        p->edges[p->nedges].to = to;
        p->nedges++;
        p->tasks[to].npred++;
        p->tasks[from].nsucc++;
    }
    for (i = 0; i < nout; i++)
        out[i] = seg_decode(g->out[i], t0, ext);
    return g->aux;
}

static struct task task_init(int kind, int stream, int tcat, int label, int mb)
{
    struct task t;

    memset(&t, 0, sizeof(t));
    t.kind = (uint8_t)kind;
    t.stream = (uint8_t)stream;
    t.tcat = (uint8_t)tcat;
    t.label = label;
    t.mb = mb;
    return t;
}

int prog_compute(struct prog *p, int stream, int tcat, sim_time dur, int label, int mb)
{
    struct task t = task_init(TASK_COMPUTE, stream, tcat, label, mb);

    assert(dur >= 0);
    t.dur = dur;
    return prog_add(p, &t);
}

int prog_coll(struct prog *p, int stream, int tcat, int comm, int op, double bytes, int label,
              int mb)
{
    struct task t = task_init(TASK_COLL, stream, tcat, label, mb);

    t.comm = (uint8_t)comm;
    t.op = (uint8_t)op;
    t.bytes = bytes;
    return prog_add(p, &t);
}

int prog_mark(struct prog *p, int stream, int label)
{
    struct task t = task_init(TASK_MARK, stream, TC_IDLE, label, -1);

    return prog_add(p, &t);
}

void task_mem_start(struct task *t, int cat, int64_t bytes)
{
    assert(t->mem0 == 0 || t->mcat0 == cat);
    t->mcat0 = (uint8_t)cat;
    t->mem0 += bytes;
}

void task_mem_end(struct task *t, int cat, int64_t bytes)
{
    assert(t->mem1 == 0 || t->mcat1 == cat);
    t->mcat1 = (uint8_t)cat;
    t->mem1 += bytes;
}

#define NAME_OF(table, v) ((unsigned)(v) < ARRAY_LEN(table) && table[v] ? table[v] : "?")

const char *tcat_name(int tcat)
{
    static const char *const n[] = { "forward", "backward", "recompute", "optimizer",
                                     "tp comm", "cp comm",  "ep comm",   "pp comm",
                                     "dp comm", "offload",  "idle" };
    return NAME_OF(n, tcat);
}

const char *mcat_name(int mcat)
{
    static const char *const n[] = { "parameters",       "master weights", "gradients",
                                     "optimizer states", "activations",    "logits/loss",
                                     "gathered params",  "comm buffers",   "workspace",
                                     "context/allocator" };
    return NAME_OF(n, mcat);
}

const char *stream_name(int stream)
{
    static const char *const n[] = { "compute",   "tp",        "cp",        "ep",
                                     "dp",        "dp-gather", "send-next", "send-prev",
                                     "recv-prev", "recv-next", "h2d",       "d2h",
                                     "host" };
    return NAME_OF(n, stream);
}

const char *comm_kind_name(int comm)
{
    static const char *const n[] = { "tp",       "cp",  "ep",     "dp",    "dp-intra",
                                     "dp-inter", "edp", "pp-fwd", "pp-bwd" };
    return NAME_OF(n, comm);
}
