/*
 * schedule.c - the order of forward and backward passes on one pipeline stage.
 *
 * GPipe: all forwards, then all backwards (GPIPE §2.3).
 * 1F1B (PipeDream-Flush): p - stage - 1 warm-up forwards, then one forward /
 * one backward alternately, then the remaining backwards (NAR21 §2.2.1).
 * Interleaved 1F1B: v model chunks per stage; micro-batches advance through
 * chunks in groups of p; warm-up (p - stage - 1) * 2 + (v - 1) * p
 * (NAR21 §2.2.2; Megatron-LM's forward_backward_pipelining_with_interleaving).
 * ZB-H1: 1F1B with the backward split into input-gradient (B) and
 * weight-gradient (W) passes where W is deferred into the cool-down bubble,
 * keeping 1F1B's p in-flight activations on stage 0 (Qi et al., "Zero Bubble
 * Pipeline Parallelism", ICLR 2024, §2.1; the sail-sg implementation below).
 */
#include <assert.h>

#include "strategy/strategy.h"

static int put(struct pp_step *out, int n, int max, int kind, int mb, int chunk)
{
    assert(n < max && "schedule buffer too small");
    if (n >= max)
        return n;
    out[n].kind = kind;
    out[n].mb = mb;
    out[n].chunk = chunk;
    return n + 1;
}

static int gpipe(int m, struct pp_step *out, int max)
{
    int n = 0, i;

    for (i = 0; i < m; i++)
        n = put(out, n, max, STEP_F, i, 0);
    for (i = 0; i < m; i++)
        n = put(out, n, max, STEP_B, i, 0);
    return n;
}

static int one_f_one_b(int p, int stage, int m, struct pp_step *out, int max)
{
    int warm = p - stage - 1, n = 0, f = 0, b = 0;

    if (warm > m)
        warm = m;
    while (f < warm)
        n = put(out, n, max, STEP_F, f++, 0);
    while (f < m) {
        n = put(out, n, max, STEP_F, f++, 0);
        n = put(out, n, max, STEP_B, b++, 0);
    }
    while (b < m)
        n = put(out, n, max, STEP_B, b++, 0);
    return n;
}

/* Megatron's mapping of the k-th forward (or backward) to (micro-batch, chunk). */
static void interleaved_id(int k, int p, int v, int forward, int *mb, int *chunk)
{
    int group = k / (p * v), in_group = k % (p * v);
    int c = in_group / p;

    *chunk = forward ? c : v - 1 - c;
    *mb = group * p + in_group % p;
}

static int interleaved(int p, int stage, int m, int v, struct pp_step *out, int max)
{
    int total = m * v, warm = (p - stage - 1) * 2 + (v - 1) * p, n = 0, f = 0, b = 0;
    int mb, chunk;

    if (warm > total)
        warm = total;
    while (f < warm) {
        interleaved_id(f++, p, v, 1, &mb, &chunk);
        n = put(out, n, max, STEP_F, mb, chunk);
    }
    while (f < total) {
        interleaved_id(f++, p, v, 1, &mb, &chunk);
        n = put(out, n, max, STEP_F, mb, chunk);
        interleaved_id(b++, p, v, 0, &mb, &chunk);
        n = put(out, n, max, STEP_B, mb, chunk);
    }
    while (b < total) {
        interleaved_id(b++, p, v, 0, &mb, &chunk);
        n = put(out, n, max, STEP_B, mb, chunk);
    }
    return n;
}

/*
 * ZB-H1 as sail-sg's Megatron implementation runs it (zero-bubble-pipeline-parallelism,
 * branch zb-h1-quick-start, commit 95212f70, schedules.py
 * forward_backward_pipelining_without_interleaving): 1F1B's order, with the backward
 * split into B (input gradients, sent on at once) and W (weight gradients, queued) only
 * where a W is deferred. Stage r queues the W of its first r steady-state backwards and
 * of its last one and of every cool-down backward; it runs the oldest queued W after the
 * last steady-state B (once r are queued) and after each cool-down B, and the rest at the
 * end, where 1F1B would idle. The other backwards stay whole, and stage 0 splits none:
 * "to leverage batched p2p op, to overlap grad all-reduce for tensor parallel, to avoid
 * redoing grad all-gather for sequence parallel" (the commit's comment). Stage r thus holds
 * at most p - r micro-batches of activations, as 1F1B, and at most r queued W's (ZB §2.1:
 * every stage p in all). With uniform pass times the bubble is (p - 1)(F + B - W), a third
 * of 1F1B's (p - 1)(F + B + W) when F = B = W (ZB §2.1; tests/test_schedule.c).
 */
/* The queued W's: the B passes in out[] from `scan` on, `pending` of them; FIFO. */
struct wqueue {
    int scan, pending;
};

static int zb_backward(struct pp_step *out, int n, int max, int mb, bool split, struct wqueue *q)
{
    if (!split)
        return put(out, n, max, STEP_B, mb, 0);
    q->pending++;
    return put(out, n, max, STEP_BI, mb, 0);
}

static int zb_pop(struct pp_step *out, int n, int max, struct wqueue *q)
{
    assert(q->pending > 0);
    while (out[q->scan].kind != STEP_BI)
        q->scan++;
    q->pending--;
    return put(out, n, max, STEP_W, out[q->scan++].mb, 0);
}

static int zb_h1(int p, int stage, int m, struct pp_step *out, int max)
{
    int warm = p - stage - 1, rem, n = 0, f = 0, b = 0, i;
    struct wqueue q = { 0, 0 };

    if (warm > m)
        warm = m;
    rem = m - warm;
    while (f < warm)
        n = put(out, n, max, STEP_F, f++, 0);
    for (i = 0; i < rem; i++) {
        bool last = i == rem - 1;
        n = put(out, n, max, STEP_F, f++, 0);
        n = zb_backward(out, n, max, b++, stage > 0 && (i < stage || last), &q);
        if (last && stage > 0 && i >= stage)
            n = zb_pop(out, n, max, &q);
    }
    for (i = 0; i < warm; i++) {
        n = zb_backward(out, n, max, b++, stage > 0, &q);
        if (stage > 0 && rem + i >= stage)
            n = zb_pop(out, n, max, &q);
    }
    while (q.pending > 0)
        n = zb_pop(out, n, max, &q);
    return n;
}

int schedule_steps(enum pp_schedule sched, int p, int stage, int m, int v, struct pp_step *out,
                   int max)
{
    assert(p >= 1 && stage >= 0 && stage < p && m >= 1 && v >= 1);
    switch (sched) {
    case SCHED_GPIPE:
        return gpipe(m, out, max);
    case SCHED_INTERLEAVED:
        return interleaved(p, stage, m, v, out, max);
    case SCHED_ZB_H1:
        return zb_h1(p, stage, m, out, max);
    case SCHED_1F1B:
    default:
        return one_f_one_b(p, stage, m, out, max);
    }
}
