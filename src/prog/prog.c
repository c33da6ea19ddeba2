/* prog.c - see prog.h. */
#include "prog/prog.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "prog/prog_internal.h"

/* Bytes of the block prog_seal() allocates: preds, succs, snext, pstart, then stream_of. */
static size_t sealed_bytes(const struct prog *p)
{
    return sizeof(int32_t) * (2 * (size_t)p->npreds + 2 * (size_t)p->ntasks + 1) +
           (size_t)p->ntasks;
}

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
    free(g->lth);
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
    big_free(p->tasks, p->cap_tasks * sizeof(*p->tasks));
    if (p->sealed && !p->seal_in_edges)
        big_free(p->preds, sealed_bytes(p)); /* the other sealed arrays share its block */
    big_free(p->edges, p->cap_edges * sizeof(*p->edges));
    free(p->mtags);
    free(p);
}

int prog_add(struct prog *p, const struct task *t)
{
    struct task *n;

    assert(!p->sealed);
    if ((size_t)p->ntasks + 1 > p->cap_tasks)
        big_grow((void **)&p->tasks, &p->cap_tasks, (size_t)p->ntasks + 1, sizeof(*p->tasks));
    n = &p->tasks[p->ntasks];
    *n = *t;
    n->npred = n->nsucc = 0; /* counted by prog_dep(), placed by prog_seal() */
    return p->ntasks++;
}

void prog_reserve(struct prog *p, int ntasks, int nedges)
{
    assert(!p->sealed);
    if (ntasks > 0)
        big_grow((void **)&p->tasks, &p->cap_tasks, (size_t)ntasks, sizeof(*p->tasks));
    if (nedges > 0)
        big_grow((void **)&p->edges, &p->cap_edges, (size_t)nedges, sizeof(*p->edges));
}

void prog_dep(struct prog *p, int t, int dep)
{
    assert(!p->sealed);
    assert(dep >= 0 && dep < t && t < p->ntasks);
    if ((size_t)p->nedges + 1 > p->cap_edges)
        big_grow((void **)&p->edges, &p->cap_edges, (size_t)p->nedges + 1, sizeof(*p->edges));
    p->edges[p->nedges].from = dep;
    p->edges[p->nedges].to = t;
    p->nedges++;
    p->tasks[t].npred++;
    p->tasks[dep].nsucc++;
}

/*
 * Labels are interned by their text and argument, never by where the text is stored: the
 * table's hash and probe sequence depend only on the bytes (a hash of the pointer made
 * --set workload.layers=100000 take 1.7 s to over 100 s with address-space randomisation).
 * In front of it, a direct-mapped memo of recent (pointer, argument) pairs saves the
 * builders' repeated lookups; a miss there costs one pass over the text, never a longer
 * probe, and changes no result.
 */

/* FNV-1a of a label's format text: equal texts hash equal wherever they are stored. */
static uint32_t text_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The splitmix64 finalizer: spreads (text hash, argument) over the table's slots. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/*
 * The slot of label (fmt, arg) whose text hashes to th: its own, or the empty one it would
 * take; *passed counts the occupied slots passed on the way.
 */
static size_t label_slot(const struct prog *p, const char *fmt, uint32_t th, int arg,
                         uint64_t *passed)
{
    size_t mask = p->label_hash_cap - 1, i;

    for (i = mix64((uint64_t)th << 32 | (uint32_t)arg) & mask;; i = (i + 1) & mask) {
        int id = p->label_hash[i];
        const struct prog_label *l;
        if (id < 0)
            return i;
        l = &p->labels[id];
        if (l->text_hash == th && l->arg == arg && (l->fmt == fmt || strcmp(l->fmt, fmt) == 0))
            return i;
        ++*passed;
    }
}

/* The index of label (fmt, arg), whose text hashes to th, interned when new. */
static int label_intern(struct prog *p, const char *fmt, uint32_t th, int arg)
{
    uint64_t passed = 0;
    size_t i;

    if (2 * ((size_t)p->nlabels + 1) > p->label_hash_cap) {
        size_t cap = p->label_hash_cap ? 2 * p->label_hash_cap : 256;
        int k;
        free(p->label_hash);
        p->label_hash = xmalloc(cap * sizeof(int));
        p->label_hash_cap = cap;
        for (i = 0; i < cap; i++)
            p->label_hash[i] = -1;
        for (k = 0; k < p->nlabels; k++) {
            const struct prog_label *l = &p->labels[k];
            p->label_hash[label_slot(p, l->fmt, l->text_hash, l->arg, &passed)] = k;
        }
    }
    passed = 0;
    i = label_slot(p, fmt, th, arg, &passed);
    if (p->label_hash[i] >= 0)
        return p->label_hash[i];
    p->label_probes += passed; /* only when interning: a count the addresses cannot change */
    grow_array((void **)&p->labels, &p->cap_labels, (size_t)p->nlabels + 1, sizeof(*p->labels));
    p->labels[p->nlabels].fmt = fmt;
    p->labels[p->nlabels].arg = arg;
    p->labels[p->nlabels].text_hash = th;
    p->label_hash[i] = p->nlabels;
    return p->nlabels++;
}

/* The memo's slot for (fmt, arg): by pointer, which decides only what the memo keeps. */
static inline size_t memo_slot(const char *fmt, int arg)
{
    return (size_t)((((uintptr_t)fmt * 0x9E3779B97F4A7C15ull) >> 40) ^
                    (uint64_t)(unsigned)arg * 0x85EBCA6Bu) &
           (PROG_LCACHE - 1);
}

static inline void memo_put(struct prog *p, size_t c, const char *fmt, int arg, int id)
{
    p->lcache[c].fmt = fmt;
    p->lcache[c].arg = arg;
    p->lcache[c].id = id;
}

int prog_label(struct prog *p, const char *fmt, int arg)
{
    size_t c = memo_slot(fmt, arg);
    int id;

    /* builders ask for the same few labels over and over: the memo first */
    if (p->lcache[c].fmt == fmt && p->lcache[c].arg == arg)
        return p->lcache[c].id;
    id = label_intern(p, fmt, text_hash(fmt), arg);
    memo_put(p, c, fmt, arg, id);
    return id;
}

/* prog_label() for a label whose text hash is known (a segment's: no pass over the text). */
static int label_hashed(struct prog *p, const char *fmt, uint32_t th, int arg)
{
    size_t c = memo_slot(fmt, arg);
    int id;

    if (p->lcache[c].fmt == fmt && p->lcache[c].arg == arg)
        return p->lcache[c].id;
    id = label_intern(p, fmt, th, arg);
    memo_put(p, c, fmt, arg, id);
    return id;
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
 * arrays (prog_dep() counted each task's edges), each in the order of the edges;
 * the stream order links each task to the next on its stream.
 */
void prog_seal(struct prog *p)
{
    int32_t np = 0, ns = 0, last[ST_COUNT];
    int i;

    assert(!p->sealed);
    p->npreds = p->nedges;
    /* one block: preds, succs, snext, pstart, stream_of; when the edge list has a big mapping,
     * in its room after the list (which the sort below still reads) */
    p->seal_in_edges = big_is_big(p->cap_edges * sizeof(*p->edges)) &&
                       (p->cap_edges - (size_t)p->nedges) * sizeof(*p->edges) >= sealed_bytes(p);
    p->preds = p->seal_in_edges ? (int32_t *)(p->edges + p->nedges) : big_alloc(sealed_bytes(p));
    p->succs = p->preds + p->nedges;
    p->snext = p->succs + p->nedges;
    p->pstart = p->snext + p->ntasks;
    p->stream_of = (uint8_t *)(p->pstart + p->ntasks + 1);
    for (i = 0; i < ST_COUNT; i++)
        last[i] = -1;
    /* each list's end, then filled backwards from it over the edges in reverse: in edge order */
    for (i = 0; i < p->ntasks; i++) {
        struct task *t = &p->tasks[i];
        np += t->npred;
        ns += t->nsucc;
        p->pstart[i] = np - t->npred;
        t->pred0 = np;
        t->succ0 = ns;
        p->stream_of[i] = t->stream;
        if (t->kind == TASK_COLL || t->kind == TASK_SEND || t->kind == TASK_RECV) {
            uint32_t *used = t->kind == TASK_COLL   ? &p->coll_comms
                             : t->kind == TASK_SEND ? &p->send_comms
                                                    : &p->recv_comms;
            assert(t->comm < 32);
            *used |= 1u << t->comm;
        }
        if (last[t->stream] >= 0)
            p->snext[last[t->stream]] = i;
        else
            p->sfirst[t->stream] = i;
        last[t->stream] = i;
    }
    p->pstart[p->ntasks] = np;
    for (i = 0; i < ST_COUNT; i++) {
        if (last[i] >= 0)
            p->snext[last[i]] = p->ntasks;
        else
            p->sfirst[i] = p->ntasks;
    }
    for (i = p->nedges - 1; i >= 0; i--) {
        int32_t from = p->edges[i].from, to = p->edges[i].to;
        p->preds[--p->tasks[to].pred0] = from;
        p->succs[--p->tasks[from].succ0] = to;
    }
    if (!p->seal_in_edges) {
        big_free(p->edges, p->cap_edges * sizeof(*p->edges));
        p->edges = NULL;
        p->cap_edges = 0;
    }
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
    g->lth = xmalloc(sizeof(*g->lth) * (size_t)(n ? n : 1));
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
            g->lth[k] = l->text_hash;
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
        if (!g->ok)
            break;
        /* the counts the segment's own edges give its tasks, stamped with them */
        g->tasks[g->e[i].to].npred++;
        if (g->e[i].from >= 0)
            g->tasks[g->e[i].from].nsucc++;
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
        row[i] = label_hashed(p, g->lfmt[i], g->lth[i], g->larg[i] == INT32_MIN ? arg : g->larg[i]);
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
    if ((size_t)(t0 + g->ntasks) > p->cap_tasks)
        big_grow((void **)&p->tasks, &p->cap_tasks, (size_t)(t0 + g->ntasks), sizeof(*p->tasks));
    if ((size_t)(p->nedges + g->nedges) > p->cap_edges)
        big_grow((void **)&p->edges, &p->cap_edges, (size_t)(p->nedges + g->nedges),
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
        if (g->e[i].from < 0) /* an external source; the segment's counts came with its tasks */
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

int prog_host(struct prog *p, int tcat, sim_time dur, int label, int mb)
{
    struct task t = task_init(TASK_HOST, ST_HOST, tcat, label, mb);

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
    t->mem0 = mem_add(t->mem0, bytes);
}

void task_mem_end(struct task *t, int cat, int64_t bytes)
{
    assert(t->mem1 == 0 || t->mcat1 == cat);
    t->mcat1 = (uint8_t)cat;
    t->mem1 = mem_add(t->mem1, bytes);
}

static uint64_t mtag_hash(const struct prog_mtag *m)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (int k = 0; k < 2; k++)
        for (int i = 0; i < MM_COUNT; i++)
            h = (h ^ (uint64_t)m->bytes[k][i]) * 0x100000001b3u;
    return h;
}

/* The mtag of `from` (an mtag, 0 for none) with `sign` * bytes added to slot `at_end`. */
static int mtag_add(struct prog *p, int from, bool at_end, const int64_t bytes[MM_COUNT], int sign)
{
    struct prog_mtag m;
    int i;

    if (from)
        m = p->mtags[from - 1];
    else
        memset(&m, 0, sizeof(m));
    for (i = 0; i < MM_COUNT; i++)
        m.bytes[at_end][i] += sign * bytes[i];
    m.hash = mtag_hash(&m);
    /* A program holds a few dozen distinct attributions: a scan of their hashes is enough. */
    for (i = 0; i < p->nmtags; i++)
        if (p->mtags[i].hash == m.hash && memcmp(p->mtags[i].bytes, m.bytes, sizeof(m.bytes)) == 0)
            return i + 1;
    if (p->nmtags >= PROG_MAX_MTAGS) {
        p->mtag_overflow = true;
        return 0;
    }
    grow_array((void **)&p->mtags, &p->cap_mtags, (size_t)p->nmtags + 1, sizeof(*p->mtags));
    p->mtags[p->nmtags++] = m;
    return p->nmtags;
}

void prog_mem_modules(struct prog *p, int ti, bool at_end, const int64_t bytes[MM_COUNT], int sign,
                      uint32_t key)
{
    struct task *t = &p->tasks[ti];
    uint32_t k = ((key << 9) | ((uint32_t)at_end << 8) | t->mtag) + 1;
    uint32_t h = (k * 2654435761u) >> 24; /* Knuth's multiplicative hash, 8 bits */
    int tag;

    for (int probe = 0; key && probe < 8; probe++) {
        struct prog_mmemo *e = &p->mmemo[(h + (uint32_t)probe) & (PROG_MMEMO - 1)];
        if (e->key == k) {
            t->mtag = e->mtag;
            return;
        }
        if (e->key == 0)
            break;
    }
    tag = mtag_add(p, t->mtag, at_end, bytes, sign);
    if (key && tag)
        for (int probe = 0; probe < 8; probe++) {
            struct prog_mmemo *e = &p->mmemo[(h + (uint32_t)probe) & (PROG_MMEMO - 1)];
            if (e->key == 0) {
                e->key = k;
                e->mtag = (uint8_t)tag;
                break;
            }
        }
    t->mtag = (uint8_t)tag;
}

#define NAME_OF(table, v) ((unsigned)(v) < ARRAY_LEN(table) && table[v] ? table[v] : "?")

const char *tcat_name(int tcat)
{
    static const char *const n[] = { "forward", "backward", "recompute", "optimizer",
                                     "tp comm", "cp comm",  "ep comm",   "pp comm",
                                     "dp comm", "offload",  "host",      "idle" };
    return NAME_OF(n, tcat);
}

const char *mcat_name(int mcat)
{
    static const char *const n[] = { "parameters",       "master weights",   "gradients",
                                     "optimizer states", "activations",      "logits/loss",
                                     "gathered params",  "comm buffers",     "workspace",
                                     "context/NCCL",     "allocator reserve" };
    return NAME_OF(n, mcat);
}

const char *mmod_name(int mmod)
{
    static const char *const n[] = { "embedding", "attention", "MLP",
                                     "norms",     "head/loss", "layer inputs (checkpoints)" };
    return NAME_OF(n, mmod);
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
