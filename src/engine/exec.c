/*
 * exec.c - the task lifecycle (sim_internal.h): a task starts when it is at the head of its
 * stream, the stream is idle and its dependencies are done (exec_ready()), as CUDA streams
 * behave; it ends by an event (compute, host work), when its flow has moved its bytes (copies,
 * transfer.c) or when its communicator's operation ends (comms.c); marks end at once. A compute
 * kernel runs at the share of SMs the active collectives leave it (exec_sm_change()).
 */

#include "engine/sim_internal.h"

static void ev_task_done(struct engine *e, void *ctx, int64_t data);
static void ev_compute_done(struct engine *e, void *ctx, int64_t data);

void exec_compute_schedule(struct sim *sm, int ri)
{
    struct srank *r = &sm->r[ri];
    sim_time dt;

    r->cmp_gen++; /* a pending end event is stale now */
    if (!(r->cmp_rate > 0))
        return; /* stalled: exec_sm_change() reschedules it when a collective ends */
    dt = time_from_ns(r->cmp_left / r->cmp_rate - 1e-6);
    engine_after(&sm->eng, dt, ev_compute_done, sm, ((int64_t)ri << 32) | (int64_t)r->cmp_gen);
}

static inline void compute_start(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    sim_time dur = r->prog->tasks[ti].dur;

    r->cmp_task = ti;
    r->cmp_left = (double)dur;
    r->cmp_rate = exec_compute_rate(sm, ri);
    r->cmp_t = sm->eng.now;
    if (!(r->cmp_rate < 1.0 || r->cmp_rate > 1.0) && dur < ((sim_time)1 << 52)) {
        /* full speed: exec_compute_schedule()'s ceil(dur - 1e-6) is dur for an integer dur < 2^52
         */
        r->cmp_gen++;
        engine_after(&sm->eng, dur, ev_compute_done, sm, ((int64_t)ri << 32) | (int64_t)r->cmp_gen);
        return;
    }
    exec_compute_schedule(sm, ri);
}

static void push_complete(struct sim *sm, int ri, int ti)
{
    grow_array((void **)&sm->stack, &sm->cap_stack, sm->nstack + 1, sizeof(*sm->stack));
    sm->stack[sm->nstack++] = ((int64_t)ri << 32) | (int64_t)ti;
}

static void start(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    const struct task *t = &r->prog->tasks[ti];
    sim_time dur;

#if defined(__GNUC__)
    __builtin_prefetch(&r->prog->succs[t->succ0]); /* read when it completes */
#endif
    r->running[t->stream] = 1;
    r->start_of[t->stream] = sm->eng.now;
    if (t->mem0)
        memtrack_apply(sm, ri, t->mcat0, t->mem0,
                       t->mtag ? r->prog->mtags[t->mtag - 1].bytes[0] : NULL);
    switch (t->kind) {
    case TASK_COMPUTE:
    case TASK_HOST:
        exec_account(sm, ri);
        if (t->stream == ST_COMPUTE && t->kind == TASK_COMPUTE) {
            r->compute_tcat = t->tcat;
            compute_start(sm, ri, ti);
            break;
        }
        if (t->stream == ST_COMPUTE)
            r->compute_tcat = t->tcat;
        else if (t->tcat != TC_HOST) /* the host's issue is no GPU activity: host_wait says */
            r->inflight[t->tcat]++;
        dur = t->dur;
        if (t->kind == TASK_COMPUTE &&
            (sm->res->ranks[ri].slowdown > 1.0 || sm->res->ranks[ri].slowdown < 1.0))
            dur = time_from_ns((double)dur * sm->res->ranks[ri].slowdown);
        else if (t->kind == TASK_HOST &&
                 (sm->res->ranks[ri].host_slowdown > 1.0 || sm->res->ranks[ri].host_slowdown < 1.0))
            dur = time_from_ns((double)dur * sm->res->ranks[ri].host_slowdown);
        engine_after(&sm->eng, dur, ev_task_done, sm, ((int64_t)ri << 32) | ti);
        break;
    case TASK_COPY:
        exec_account(sm, ri);
        r->inflight[t->tcat]++;
        transfer_copy(sm, ri, ti);
        break;
    case TASK_COLL:
    case TASK_SEND:
    case TASK_RECV:
        comms_arrive(sm, ri, ti);
        break;
    default:
        push_complete(sm, ri, ti);
        break;
    }
}

/* Does task ti wait for a host task not done yet (the CPU has not issued it)? */
static bool waits_for_host(const struct srank *r, int ti)
{
    const struct prog *p = r->prog;

    for (int32_t i = p->pstart[ti]; i < p->pstart[ti + 1]; i++) {
        int d = p->preds[i];
        if (p->stream_of[d] == ST_HOST && r->head[ST_HOST] <= d)
            return true;
    }
    return false;
}

static void try_start(struct sim *sm, int ri, int st)
{
    struct srank *r = &sm->r[ri];
    int32_t ti = r->head[st];

    if (r->running[st] || ti >= r->ntasks)
        return;
    if (!exec_ready(r, ti)) {
        if (st == ST_COMPUTE && r->head[ST_HOST] < r->ntasks) {
            bool w = waits_for_host(r, ti);
            if (w != r->host_wait) {
                exec_account(sm, ri); /* the time so far was spent as the flag said */
                r->host_wait = w;
            }
        }
        return;
    }
    if (st == ST_COMPUTE && r->host_wait) {
        exec_account(sm, ri);
        r->host_wait = false;
    }
    start(sm, ri, ti);
}

void exec_complete(struct sim *sm, int ri, int ti)
{
    struct srank *r = &sm->r[ri];
    struct rank_result *rr = &sm->res->ranks[ri];
    const struct task *t = &r->prog->tasks[ti];
    const int32_t *succ = r->prog->succs + t->succ0;
    unsigned tried = 0; /* streams poked, a bit each */
    int i;

    if (t->kind != TASK_MARK) {
        exec_account(sm, ri);
        rr->busy[t->tcat] += sm->eng.now - r->start_of[t->stream];
        if (t->stream == ST_COMPUTE && (t->kind == TASK_COMPUTE || t->kind == TASK_HOST))
            r->compute_tcat = -1;
        else if ((t->kind == TASK_COMPUTE || t->kind == TASK_HOST || t->kind == TASK_COPY) &&
                 t->tcat != TC_HOST)
            r->inflight[t->tcat]--;
        notes_task(sm, ri, ti, r->start_of[t->stream]);
    }
    if (t->mem1)
        memtrack_apply(sm, ri, t->mcat1, t->mem1,
                       t->mtag ? r->prog->mtags[t->mtag - 1].bytes[1] : NULL);
    assert(r->head[t->stream] == ti);
    r->running[t->stream] = 0;
    r->head[t->stream] = r->snext[ti];
#if defined(__GNUC__)
    /*
     * The stream's next tasks start soon: fetch the next two, the next one's dependency list
     * and the one after's readiness data. The simulator walks each stream in index order long
     * after the builder wrote it (megabytes per stage, out of cache); waiting for those cache
     * lines cost 8-10 ms of the flagship's ~55 (measured, docs/performance.md). Written out
     * here: GCC 12 deletes a helper function holding only prefetches as a pure call.
     */
    if (r->head[t->stream] < r->ntasks) {
        const struct prog *p = r->prog;
        int32_t n = r->head[t->stream], n2 = r->snext[n];
        __builtin_prefetch(&p->tasks[n]);
        __builtin_prefetch(&p->preds[p->pstart[n]]);
        if (n2 < r->ntasks) {
            __builtin_prefetch(&p->tasks[n2]);
            __builtin_prefetch(&p->pstart[n2]);
            __builtin_prefetch(&r->snext[n2]);
        }
    }
#endif
    rr->end = sm->eng.now;
    /*
     * Poke the streams of the successors, then this task's own. Nothing completes while
     * they start (completions come from events and the drained stack), so the heads and
     * readiness stay put: a stream poked once is not poked again.
     */
    for (i = 0; i < t->nsucc; i++) {
        int st = r->prog->stream_of[succ[i]];
        if (tried & (1u << st))
            continue;
        tried |= 1u << st;
        try_start(sm, ri, st);
    }
    if (!(tried & (1u << t->stream)))
        try_start(sm, ri, t->stream);
}

static void ev_task_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;

    (void)e;
    exec_complete(sm, (int)(data >> 32), (int)(data & 0xffffffff));
    exec_drain(sm);
}

static void ev_compute_done(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int ri = (int)(data >> 32), ti;
    struct srank *r = &sm->r[ri];

    (void)e;
    if ((uint32_t)(data & 0xffffffff) != r->cmp_gen || r->cmp_task < 0)
        return; /* superseded by a rate change */
    ti = r->cmp_task;
    r->cmp_task = -1;
    exec_complete(sm, ri, ti);
    exec_drain(sm);
}

static void ev_kickoff(struct engine *e, void *ctx, int64_t data)
{
    struct sim *sm = ctx;
    int st;

    (void)e;
    for (st = 0; st < ST_COUNT; st++)
        try_start(sm, (int)data, st);
    exec_drain(sm);
}

void exec_kickoff(struct sim *sm)
{
    int ri;

    for (ri = 0; ri < sm->nr; ri++)
        engine_at(&sm->eng, 0, ev_kickoff, sm, ri);
}
