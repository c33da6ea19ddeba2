/*
 * sweep_stream.c - a sweep evaluated and written point by point, in index
 * order, with the scaling efficiencies of the whole sweep (sweep.h,
 * sweep_stream()).
 *
 * The efficiencies of a point need its group's base: the valid point of the
 * group with the fewest GPUs that fits, the lowest index on ties
 * (sweep_efficiency()). When the first point of a group comes up, the base is
 * sought before anything of the group is written: the group's points are
 * built (not simulated) to learn their GPU counts, and those with the fewest
 * GPUs are simulated in index order until one fits; if none does, the next
 * GPU count is tried. When no axis can change the GPU count (no size axis, no
 * file reference), the points are simply tried in index order. The points simulated ahead of their
 * turn are held until it comes (at most SWEEP_STREAM_HELD; later ones are simulated again), so the
 * rows leave in index order as soon as they are final.
 *
 * Groups: with an axis that changes the GPU count, the points sharing every
 * other axis's value, numbered in the order of their first point (the mixed
 * radix of the other axes' value indices); without one, a single group.
 */
#include "whatif/sweep.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/par.h"
#include "config/config.h"

struct group_base {
    bool known;    /* sought already */
    long index;    /* the base point, -1 when no point of the group fits */
    double step_s; /* its step time, s */
    int gpus;
};

struct stream {
    const struct sweep *sw;
    FILE *progress;
    bool by_size;
    bool uniform; /* every valid point has the base's GPU count: no axis changes it */
    long stride[SWEEP_MAX_AXES]; /* point index = sum of value index x stride */
    struct group_base *base;     /* per group */
    struct sweep_point *held;    /* simulated ahead of their turn, by index */
    long nheld;
    size_t cap_held;
    int k, n; /* the shard */
    /* With sw->jobs > 1: points simulated in parallel before anything asked for them, by
     * index (a point is a function of its index alone, so taking one here is the same as
     * simulating it at its turn). */
    struct sweep_point *ahead;
    long nahead;
};

static long group_of(const struct stream *st, long index)
{
    long g = 0;

    if (!st->by_size)
        return 0;
    for (int a = 0; a < st->sw->naxes; a++)
        if (!st->sw->axes[a].size)
            g = g * st->sw->axes[a].nvalues + sweep_value_index(st->sw, index, a);
    return g;
}

/*
 * The m-th point (in index order) of the group of point `first`: the size axes' values
 * counted in mixed radix, the other axes' values those of `first`. -1 past the last.
 */
static long member(const struct stream *st, long first, long m)
{
    const struct sweep *sw = st->sw;
    long index = 0;

    if (!st->by_size)
        return m < sw->npoints ? m : -1;
    for (int a = sw->naxes - 1; a >= 0; a--) {
        long v;
        if (sw->axes[a].size) {
            v = m % sw->axes[a].nvalues;
            m /= sw->axes[a].nvalues;
        } else {
            v = sweep_value_index(sw, first, a);
        }
        index += v * st->stride[a];
    }
    return m == 0 ? index : -1;
}

/* The GPU count of point `index` from its scenario alone (no simulation); -1 when invalid. */
static int point_gpus(const struct sweep *sw, long index)
{
    struct scenario s, *owned;
    char msg[256];
    int gpus = -1;

    if (sweep_point_scenario(sw, index, &s, &owned, msg, sizeof(msg)) == 0)
        gpus = s.gpus;
    cfg_free(owned);
    return gpus;
}

static void progress_line(const struct stream *st, const struct sweep_point *p)
{
    const struct sweep *sw = st->sw;

    if (!st->progress)
        return;
    fprintf(st->progress, "simtrain sweep: point %ld/%ld", p->index + 1, sw->npoints);
    for (int a = 0; a < sw->naxes; a++)
        fprintf(st->progress, " %s=%s", sw->axes[a].key, sw->axes[a].values[p->vidx[a]]);
    if (sweep_point_simulated(p))
        fprintf(st->progress, ": %.4g s per step\n", p->step_s);
    else
        fprintf(st->progress, ": %s\n", p->reason);
}

struct batch {
    const struct sweep *sw;
    struct sweep_point *pts;
    const long *index;
};

static void run_one(void *ctx, long i)
{
    const struct batch *b = ctx;

    sweep_run_point(b->sw, b->index[i], &b->pts[i]);
}

/*
 * Point `index` from the points simulated ahead; on a miss, simulate it and the next points
 * of the shard (jobs x 4 in all, on sw->jobs threads) first.
 */
static void take_ahead(struct stream *st, long index, struct sweep_point *p)
{
    const struct sweep *sw = st->sw;
    long want = (long)sw->jobs * 4, *idx;
    struct batch b = { .sw = sw };

    for (long i = 0; i < st->nahead; i++)
        if (st->ahead[i].index == index) {
            *p = st->ahead[i];
            return;
        }
    free(st->ahead);
    idx = xcalloc((size_t)want, sizeof(*idx));
    st->nahead = 0;
    for (long j = index; j < sw->npoints && st->nahead < want; j++)
        if (j % st->n == st->k)
            idx[st->nahead++] = j;
    st->ahead = xcalloc((size_t)st->nahead, sizeof(*st->ahead));
    b.pts = st->ahead;
    b.index = idx;
    par_for(sw->jobs, st->nahead, run_one, &b);
    free(idx);
    *p = st->ahead[0];
}

static void evaluate(struct stream *st, long index, struct sweep_point *p)
{
    if (st->sw->jobs > 1)
        take_ahead(st, index, p);
    else
        sweep_run_point(st->sw, index, p);
    progress_line(st, p);
}

/* Hold a point simulated ahead of its turn, keeping the list sorted by index. */
static void hold(struct stream *st, const struct sweep_point *p)
{
    long at = st->nheld;

    if (st->nheld >= SWEEP_STREAM_HELD)
        return; /* simulated again at its turn: memory stays bounded */
    grow_array((void **)&st->held, &st->cap_held, (size_t)st->nheld + 1, sizeof(*st->held));
    while (at > 0 && st->held[at - 1].index > p->index)
        at--;
    memmove(&st->held[at + 1], &st->held[at], sizeof(*st->held) * (size_t)(st->nheld - at));
    st->held[at] = *p;
    st->nheld++;
}

/* Take point `index` from the held ones into *p; false when it is not held. */
static bool take_held(struct stream *st, long index, struct sweep_point *p)
{
    for (long i = 0; i < st->nheld && st->held[i].index <= index; i++)
        if (st->held[i].index == index) {
            *p = st->held[i];
            memmove(&st->held[i], &st->held[i + 1],
                    sizeof(*st->held) * (size_t)(st->nheld - i - 1));
            st->nheld--;
            return true;
        }
    return false;
}

/*
 * Find the base of the group whose first point is `first`. The points simulated on the way
 * are held, except `first` itself, returned in *cur (*have_cur set) to be written at once.
 */
static void seek_base(struct stream *st, long first, struct group_base *b, struct sweep_point *cur,
                      bool *have_cur)
{
    int tried = 0; /* GPU counts up to this one are exhausted */

    b->known = true;
    b->index = -1;
    for (;;) {
        int fewest = st->uniform ? 0 : INT_MAX;
        for (long m = 0, j; !st->uniform && (j = member(st, first, m)) >= 0; m++) {
            int g = point_gpus(st->sw, j);
            if (g > tried && g < fewest)
                fewest = g;
        }
        if (fewest == INT_MAX)
            return; /* no point of the group fits */
        for (long m = 0, j; (j = member(st, first, m)) >= 0; m++) {
            struct sweep_point p;
            if (!st->uniform && point_gpus(st->sw, j) != fewest)
                continue;
            evaluate(st, j, &p);
            if (j == first) {
                *cur = p;
                *have_cur = true;
            } else {
                hold(st, &p);
            }
            if (p.status == SP_OK) {
                b->index = j;
                b->step_s = p.step_s;
                b->gpus = p.gpus;
                return;
            }
        }
        if (st->uniform)
            return; /* every point tried, none fits */
        tried = fewest;
    }
}

/* The efficiency fields of p, as sweep_efficiency() computes them. */
static void apply_base(const struct group_base *b, long group, struct sweep_point *p)
{
    p->group = (int)group;
    p->base = b->index;
    if (b->index < 0 || !sweep_point_simulated(p) || p->step_s <= 0)
        return;
    p->speedup = b->step_s / p->step_s;
    p->weak_eff = p->speedup;
    p->strong_eff = b->step_s * b->gpus / (p->step_s * p->gpus);
}

static void init(struct stream *st, const struct sweep *sw, int k, int n, FILE *progress)
{
    long groups = 1;

    memset(st, 0, sizeof(*st));
    st->sw = sw;
    st->k = k;
    st->n = n;
    st->progress = progress;
    st->uniform = true;
    for (int a = sw->naxes - 1; a >= 0; a--) {
        st->stride[a] = a == sw->naxes - 1 ? 1 : st->stride[a + 1] * sw->axes[a + 1].nvalues;
        st->by_size |= sw->axes[a].size;
        st->uniform &= !sw->axes[a].size && !sw->axes[a].ref;
    }
    for (int a = 0; a < sw->naxes && st->by_size; a++)
        if (!sw->axes[a].size)
            groups *= sw->axes[a].nvalues;
    st->base = xcalloc((size_t)groups, sizeof(*st->base));
}

void sweep_stream(const struct sweep *sw, int k, int n, const struct sweep_sink *sink,
                  FILE *progress)
{
    struct stream st;

    init(&st, sw, k, n, progress);
    for (long i = 0; i < sw->npoints; i++) {
        struct sweep_point p;
        bool have = false;
        long g;
        if (i % n != k)
            continue;
        if (n > 1) { /* a shard: the merge computes the efficiencies */
            evaluate(&st, i, &p);
            sink->point(sink->ctx, sw, &p);
            continue;
        }
        g = group_of(&st, i);
        if (!st.base[g].known)
            seek_base(&st, i, &st.base[g], &p, &have);
        if (!have && !take_held(&st, i, &p))
            evaluate(&st, i, &p);
        apply_base(&st.base[g], g, &p);
        sink->point(sink->ctx, sw, &p);
    }
    free(st.held);
    free(st.ahead);
    free(st.base);
}
