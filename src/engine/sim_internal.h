/*
 * sim_internal.h - the simulator's state and the helpers its files share. Private to
 * src/engine/ (see README.md there); nothing outside the folder includes it.
 *
 * sim_run() (sim.c) owns one struct sim for the length of a step. Its files, one concern
 * each, name their shared functions after themselves:
 *   sim.c       the run loop, phase by phase: ranks, communicators, links, events, totals
 *   exec.c      the task lifecycle: readiness, start, completion; time accounting; SM
 *               contention of the compute stream with NCCL kernels
 *   comms.c     communicators: creation, collective matching in issue order, cost lookups
 *   transfer.c  link resources and flows: bytes moved under max-min sharing (net/flow.h)
 *   memtrack.c  the per-rank memory tracker and the caching allocator's reserve
 *   notes.c     trace records, the memory timeline, the distinct-collective notes
 *   diagnose.c  what a deadlocked step reports
 * The few helpers every task start and end calls are inline here (exec_account(),
 * exec_ready(), exec_sm_change(), exec_drain(), notes_task()): a call per use would cost the
 * flagship a few percent (docs/performance.md).
 */
#ifndef SIMTRAIN_SIM_INTERNAL_H
#define SIMTRAIN_SIM_INTERNAL_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/sim.h"
#include "model/cost.h"
#include "net/collective.h"

/* Communicator slots of a rank: one per collective kind, four for point-to-point. */
enum {
    SLOT_SEND_NEXT = COMM_KIND_COUNT,
    SLOT_SEND_PREV,
    SLOT_RECV_PREV,
    SLOT_RECV_NEXT,
    NSLOT
};

struct inst {    /* one operation of a communicator, while its members arrive */
    int arrived; /* members that issued it so far */
    uint8_t op, tcat;
    double bytes; /* the largest size a member issued, bytes */
};

#define COMM_MEMO 4 /* cost entries remembered per communicator */

struct comm {
    struct comm_group g;
    int kind;     /* enum comm_kind */
    int nsim;     /* simulated members */
    int *members; /* rank indices of simulated members */
    int p2p;
    struct inst *q; /* pending instances, ring buffer of qcap */
    int32_t *qtask; /* per instance, per member: the member's task index */
    int64_t qbase;  /* seq of the oldest pending instance (= next to start) */
    int qcap;
    int64_t qmax; /* highest seq seen + 1 */
    int active;
    struct coll_cost cost; /* of the active instance */
    double sm_frac;        /* SM share its kernel holds on each member */
    /* its last few cost entries (a layer alternates its operations and sizes) */
    uint32_t memo_gen; /* sim.cache_gen when they were looked up (0 = never: it starts at 1) */
    int memo_next;     /* the slot the next miss replaces */
    struct comm_memo {
        int op; /* operation and bytes of the entry */
        double bytes;
        size_t ent; /* index into sim.cache */
    } memo[COMM_MEMO];
    uint64_t noted[SIM_MAX_NOTES / 64]; /* a bit per coll_note it ran (not p2p: notes.c) */
};

struct sflow {
    int comm;       /* communicator, or -1 for a copy */
    int rank, task; /* for copies */
    double cap;     /* rate in isolation, bytes/s */
    uint32_t mark;  /* component search stamp */
    int nres, res[2 * 4];
    int *res_many;    /* when more than 8 resources */
    int cap_many;     /* entries allocated at res_many */
    double remaining; /* bus bytes left */
    double rate;      /* bytes/s */
    sim_time last;    /* when remaining was last updated */
    uint32_t gen;
    int active;
};

struct srank {
    const struct prog *prog;
    const int32_t *snext;   /* the program's stream order (prog.h) */
    int32_t ntasks;         /* the program's tasks */
    int32_t head[ST_COUNT]; /* per stream: the task at its head, or ntasks when done */
    int8_t running[ST_COUNT];
    bool traced;    /* its tasks and memory samples are recorded (notes.c); in running's padding */
    bool host_wait; /* the compute stream's head waits for the host's issue (exec.c) */
    int comm[NSLOT];
    int midx[NSLOT]; /* this rank's member index in comm[slot] */
    int64_t seq[NSLOT];
    int compute_tcat;            /* tcat of the running compute task, or -1 */
    int inflight[TC_COUNT];      /* transferring communication / offload, by category */
    sim_time last;               /* last accounting time */
    sim_time start_of[ST_COUNT]; /* start time of the running task per stream */
    int res[TIER_COUNT + 2];     /* link resources: tiers (-1: none), then PCIe h2d and d2h */
    /* the running compute-stream kernel, slowed while collectives hold SMs */
    int cmp_task;     /* task index, or -1 */
    double cmp_left;  /* work left, ns at full speed */
    double cmp_rate;  /* progress per ns, [0, 1]: 0 while collectives hold every SM */
    sim_time cmp_t;   /* when cmp_left was last updated */
    uint32_t cmp_gen; /* generation of its completion event */
    double sm_busy;   /* fraction of SMs held by active collectives */
    int64_t mem;      /* bytes held now: the sum of rank_result.cur */
    int64_t churn;    /* bytes of the categories allocated and freed within the step */
    uint64_t noted[SIM_MAX_NOTES / 64]; /* a bit per coll_note this rank took part in */
};

struct cost_key {
    int nranks, nnodes, ppn, rail, op;
    double bytes;
};

struct cost_ent {
    struct cost_key k;
    struct coll_cost c;
    double sm_frac; /* fraction of the GPU's SMs its NCCL kernel holds */
    int used;
    int note[COMM_KIND_COUNT]; /* index into result->notes per communicator kind, -1 = none */
};

struct sim {
    const struct scenario *sc;
    double reserve_per_byte; /* allocator reserve per churned byte: f / (1 - f) */
    int64_t capacity;        /* GPU memory, bytes: the reserve's ceiling */
    const struct layout *lay;
    const struct sim_opts *opts;
    struct engine eng;
    struct sim_result *res;
    struct srank *r;
    int nr;
    struct comm *comms;
    int ncomms;
    size_t cap_comms;
    struct flow_net *net; /* every resource as a link; only a component's flows while solving */
    struct rflows {       /* active flows crossing a resource (n: how many) */
        int *f;
        int n, cap;
    } * res_flows;
    int *comp, *seeds, *fids; /* scratch: a component's flows, search seeds, net flow ids */
    size_t cap_comp, cap_seeds, cap_fids;
    int *pending; /* flows whose component must be re-solved before time moves on */
    int npending;
    size_t cap_pending;
    uint32_t stamp;
    int nres;
    struct sflow *flows;
    int nflows;
    size_t cap_flows;
    int *free_flows;
    int nfree;
    size_t cap_free;
    struct cost_ent *cache;
    size_t cache_cap, cache_n;
    uint32_t cache_gen; /* from 1, bumped whenever the cache is rehashed (entries move) */
    int64_t *stack;     /* (rank << 32 | task) tasks to complete now */
    size_t nstack, cap_stack;
};

/* ---- exec.c: the task lifecycle --------------------------------------------------------- */

/* Queue every simulated rank's first tasks at time zero. */
void exec_kickoff(struct sim *sm);

/* Task ti of rank index ri ends now: accounting, memory marks, its successors start. */
void exec_complete(struct sim *sm, int ri, int ti);

/* (Re)schedule the end of rank ri's running compute kernel at its current rate. */
void exec_compute_schedule(struct sim *sm, int ri);

/*
 * Charge rank ri's time since its last accounting to one category: its running compute
 * task's, else the highest-priority communication in flight, else idle. Call before any
 * change of what the rank runs.
 */
static inline void exec_account(struct sim *sm, int ri)
{
    /* priority of exposed communication when several are in flight */
    static const int order[] = { TC_COMM_TP, TC_COMM_CP, TC_COMM_EP,
                                 TC_COMM_PP, TC_COMM_DP, TC_OFFLOAD };
    struct srank *r = &sm->r[ri];
    sim_time now = sm->eng.now, dt = now - r->last;
    int cat = TC_IDLE;
    size_t i;

    if (dt <= 0) /* already accounted at this instant */
        return;
    if (r->compute_tcat >= 0) {
        cat = r->compute_tcat;
    } else {
        for (i = 0; i < ARRAY_LEN(order); i++)
            if (r->inflight[order[i]] > 0) {
                cat = order[i];
                break;
            }
        if (cat == TC_IDLE && r->host_wait)
            cat = TC_HOST; /* host-bound: the GPU waits for the CPU to issue its next kernel */
    }
    sm->res->ranks[ri].bucket[cat] += dt;
    r->last = now;
}

/*
 * Are all of task ti's dependencies done? Tasks leave the head of their
 * stream exactly when they complete, in stream order (= index order), so a
 * predecessor is done when its stream's head has passed it: no per-rank
 * counters (the state of a rank is its stream heads, which keeps --ranks all
 * small and cached).
 */
static inline bool exec_ready(const struct srank *r, int ti)
{
    const struct prog *p = r->prog;
    int32_t i, end = p->pstart[ti + 1];

    for (i = p->pstart[ti]; i < end; i++) {
        int d = p->preds[i];
        if (r->head[p->stream_of[d]] <= d)
            return false;
    }
    return true;
}

/*
 * SM contention. An NCCL kernel runs one thread block per channel (NCCL
 * src/enqueue.cc: the launch grid is the channel count), so while a
 * collective is active on a rank its blocks hold that share of the SMs and a
 * kernel on the compute stream progresses at the rate cost_overlap_rate()
 * gives: the free share, or on Hopper the waves of its persistent GEMM blocks
 * (docs/parallelism.md). When the active collectives hold every SM the kernel
 * makes no progress until one of them ends (rate 0; they end on their own, so
 * it always resumes). The straggler multiplier applies on top.
 */
static inline double exec_compute_rate(const struct sim *sm, int ri)
{
    double held = sm->r[ri].sm_busy;
    double rate = held > 0 ? cost_overlap_rate(&sm->sc->hw.gpu, held) : 1.0; /* no call when free */

    if (!(rate > 0))
        return 0;
    return rate / sm->res->ranks[ri].slowdown;
}

/* The SMs held by collectives on rank ri changed by `delta`: re-rate its kernel. */
static inline void exec_sm_change(struct sim *sm, int ri, double delta)
{
    struct srank *r = &sm->r[ri];
    double rate;

    r->sm_busy += delta;
    if (r->sm_busy < 1e-9)
        r->sm_busy = 0;
    if (r->cmp_task < 0)
        return;
    rate = exec_compute_rate(sm, ri);
    if (!(rate < r->cmp_rate || rate > r->cmp_rate))
        return;
    r->cmp_left -= (double)(sm->eng.now - r->cmp_t) * r->cmp_rate;
    if (r->cmp_left < 0)
        r->cmp_left = 0;
    r->cmp_t = sm->eng.now;
    r->cmp_rate = rate;
    exec_compute_schedule(sm, ri);
}

/* Complete the tasks queued to end at this instant (marks), and what they start. */
static inline void exec_drain(struct sim *sm)
{
    while (sm->nstack > 0) {
        int64_t v = sm->stack[--sm->nstack];
        exec_complete(sm, (int)(v >> 32), (int)(v & 0xffffffff));
    }
}

/* ---- comms.c: communicators and collective matching ---------------------------------- */

/*
 * Create the communicators the simulated ranks' programs use; sim_of_rank[rank] is a
 * global rank's index among the simulated ones, or -1.
 */
void comms_setup(struct sim *sm, const int *sim_of_rank);

/* Task ti of rank ri (a collective, send or receive) reaches the head of its stream. */
void comms_arrive(struct sim *sm, int ri, int ti);

/* The active operation of communicator ci has moved its bytes: its members' tasks end. */
void comms_finish(struct sim *sm, int ci);

void comms_release(struct sim *sm);

/* ---- transfer.c: link resources and flows ------------------------------------------------ */

/* One link per rank and tier, then its PCIe host-to-device and device-to-host directions. */
void transfer_setup(struct sim *sm);

/*
 * Move the bus bytes of communicator ci's active operation over its members' links, from
 * now + delay (its latency); comms_finish() runs when they have moved.
 */
void transfer_coll(struct sim *sm, int ci, sim_time delay);

/* Move copy task ti of rank ri over its PCIe direction; the task completes when done. */
void transfer_copy(struct sim *sm, int ri, int ti);

void transfer_release(struct sim *sm);

/* ---- memtrack.c: the memory tracker ---------------------------------------------------- */

/* Set up the allocator-reserve policy of the scenario (its fragmentation and GPU memory). */
void memtrack_init(struct sim *sm);

/* Rank ri allocates (delta > 0) or frees (delta < 0) bytes of category cat now. */
void memtrack_apply(struct sim *sm, int ri, int cat, int64_t delta, const int64_t *mod);

/* ---- notes.c: trace records and collective notes ---------------------------------------- */

/*
 * Mark the ranks sim_opts asks to trace; 0, or -1 with the reason when their trace would
 * exceed SIM_TRACE_MAX_BYTES (sim.h).
 */
int notes_select(struct sim *sm, char *reason, size_t reason_len);

void notes_task_record(struct sim *sm, int ri, int task, sim_time t0);
void notes_memory(struct sim *sm, int ri);
/* A new note for the first operation of its shape on `c`'s kind: its index, or -1 when
 * SIM_MAX_NOTES are taken. */
int notes_coll_first(struct sim *sm, const struct comm *c, const struct inst *in,
                     struct cost_ent *ent);

/* Record task `task` of rank ri, which ran from t0 to now, when the rank is traced. */
static inline void notes_task(struct sim *sm, int ri, int task, sim_time t0)
{
    if (sm->r[ri].traced)
        notes_task_record(sm, ri, task, t0);
}

/* Count one operation of communicator c (cost entry ent) in the report's list of shapes. */
static inline void notes_coll(struct sim *sm, struct comm *c, const struct inst *in,
                              struct cost_ent *ent)
{
    struct coll_note *n;
    int k = ent->note[c->kind];

    if (k >= 0)
        sm->res->notes[k].count++;
    else
        k = notes_coll_first(sm, c, in, ent);
    if (k < 0)
        return;
    /*
     * Per rank: the simulated members' part in it, over the ranks that take part (sim.h). A
     * rank is in one group of each collective kind, so a group's bit counts its members once,
     * at the end (notes_count_ranks()); a rank is in two point-to-point pairs of a kind
     * (before and after it), so pairs mark their members.
     */
    n = &sm->res->notes[k];
    n->member_ops += c->nsim;
    if (!c->p2p) {
        c->noted[k / 64] |= (uint64_t)1 << (k % 64);
        return;
    }
    for (int i = 0; i < c->nsim; i++) {
        uint64_t *w = &sm->r[c->members[i]].noted[k / 64], bit = (uint64_t)1 << (k % 64);

        if (!(*w & bit)) {
            *w |= bit;
            n->ranks++;
        }
    }
}

/* After the step: the ranks of every group that ran each note, and the counts per rank. */
void notes_count_ranks(struct sim *sm);

/* ---- diagnose.c ------------------------------------------------------------------------- */

/*
 * 0 when every rank ran its program to the end; else -1 with the first stuck rank's task
 * in `reason` (and, with SIMTRAIN_DEBUG_STUCK=1, every rank's stream heads on stderr).
 */
int diagnose_deadlock(const struct sim *sm, char *reason, size_t reason_len);

/* 0 when the step (after finish) is within SIM_STEP_LIMIT; else -1 with the reason. */
int diagnose_step_range(const struct sim *sm, char *reason, size_t reason_len);

/* 0 when every rank's peak is within SIM_MEM_LIMIT (util.h); else -1 with the reason. */
int diagnose_memory_range(const struct sim *sm, char *reason, size_t reason_len);

#endif
