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

void prog_free(struct prog *p)
{
    if (!p)
        return;
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
 * arrays (prog_dep() counted each task's edges).
 */
void prog_seal(struct prog *p)
{
    int32_t *pos;
    int i;

    assert(!p->sealed);
    p->preds = xmalloc(sizeof(int32_t) * (size_t)(p->nedges ? p->nedges : 1));
    p->succs = xmalloc(sizeof(int32_t) * (size_t)(p->nedges ? p->nedges : 1));
    p->npreds = p->nedges;
    {
        int32_t np = 0, ns = 0;
        for (i = 0; i < p->ntasks; i++) {
            p->tasks[i].pred0 = np;
            p->tasks[i].succ0 = ns;
            np += p->tasks[i].npred;
            ns += p->tasks[i].nsucc;
        }
    }
    pos = xcalloc((size_t)p->ntasks + 1, 2 * sizeof(int32_t));
    for (i = 0; i < p->nedges; i++) {
        int32_t from = p->edges[i].from, to = p->edges[i].to;
        p->preds[p->tasks[to].pred0 + pos[2 * to]++] = from;
        p->succs[p->tasks[from].succ0 + pos[2 * from + 1]++] = to;
    }
    free(pos);
    free(p->edges);
    p->edges = NULL;
    p->sealed = 1;
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
