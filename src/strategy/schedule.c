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
 * weight-gradient (W) passes; W passes are deferred to fill the cool-down
 * bubble, keeping at most p in-flight activations (ZB README: "ZB-H1").
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
 * ZB-H1: warm-up forwards as 1F1B; in the steady state each backward is split
 * into B then, once `stage` micro-batches of B are buffered ahead, a W; the
 * deferred W passes run in the cool-down where 1F1B would idle.
 */
static int zb_h1(int p, int stage, int m, struct pp_step *out, int max)
{
    int warm = p - stage - 1, n = 0, f = 0, bi = 0, w = 0;
    int defer = stage; /* W lag on this stage: later stages have shorter cool-down bubbles */

    if (warm > m)
        warm = m;
    while (f < warm)
        n = put(out, n, max, STEP_F, f++, 0);
    while (f < m) {
        n = put(out, n, max, STEP_F, f++, 0);
        n = put(out, n, max, STEP_BI, bi++, 0);
        if (bi - w > defer)
            n = put(out, n, max, STEP_W, w++, 0);
    }
    while (bi < m) {
        n = put(out, n, max, STEP_BI, bi++, 0);
        if (bi - w > defer)
            n = put(out, n, max, STEP_W, w++, 0);
    }
    while (w < m)
        n = put(out, n, max, STEP_W, w++, 0);
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
