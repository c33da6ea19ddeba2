/*
 * sim.h - executes per-rank programs (prog.h) on the event engine.
 *
 * Each simulated rank runs its role's program: a task starts when it is at
 * the head of its stream, the stream is idle, and its dependencies are done.
 * Collectives and send/recv are matched per communicator in issue order and
 * start when every simulated member has arrived; a communicator runs one
 * operation at a time, as one NCCL stream per process group does. An
 * operation costs the collective model's latency, then moves its bus bytes
 * as one flow over the link resources of its members; concurrent flows
 * share links by max-min fairness (flow.h), re-solved when a flow starts or
 * ends, only for the flows connected to it through shared links, and once
 * per simulated instant.
 *
 * While a collective runs, its NCCL kernel holds one thread block per
 * channel (NCCL src/enqueue.cc): a kernel on the compute stream progresses at
 * the share of SMs left (re-rated when collectives start or end), so
 * overlapped communication is not free.
 *
 * Symmetric mode simulates one representative rank per pipeline stage (the
 * rank with tp = cp = dp = 0); its collectives are costed for the full group.
 * All-ranks mode simulates every rank with the same programs, so symmetric
 * configurations give identical answers. A rank's state is its stream heads:
 * a task is ready when the stream of each of its predecessors has moved past
 * it (tasks leave their stream's head when they complete, in order).
 *
 * Accounting per rank: an exclusive breakdown of the step into categories
 * (compute of the running compute task, else the highest-priority
 * communication in flight, else idle), which sums to the step time; total
 * busy time per category; a memory tracker with peak, per-category shares at
 * the peak, and optionally the timeline.
 */
#ifndef SIMTRAIN_SIM_H
#define SIMTRAIN_SIM_H

#include <stdbool.h>

#include "model/scenario.h"
#include "model/layout.h"
#include "prog/prog.h"

struct sim_opts {
    bool all_ranks;         /* simulate every rank instead of one per stage */
    bool trace;             /* record task intervals and the memory timeline */
    const int *trace_ranks; /* with trace: the global ranks to record, ascending (others are
                               left out); NULL = every simulated rank */
    int ntrace_ranks;
};

/*
 * A trace is refused, before the step runs, when its Chrome JSON would take more than
 * SIM_TRACE_MAX_BYTES: SIM_TRACE_BYTES_PER_TASK per task of every traced rank's program
 * (measured: the flagship's 64-rank trace is 626 MB for 3.55 M tasks, 177 B each with its
 * memory samples). The flagship's 256 ranks take about 2.6 GB; the 405B job's 16,384 ranks
 * would take hundreds of GB. Records held in memory are 24 B per task.
 */
#define SIM_TRACE_MAX_BYTES      ((double)4 * 1024 * 1024 * 1024)
#define SIM_TRACE_BYTES_PER_TASK 180.0

/*
 * A step is refused, before any rank is set up, when its simulated ranks would run more than
 * SIM_MAX_TASK_RUNS tasks in all, each rank counted SIM_RANK_TASKS more for its own state
 * (about 1 KB: its result, streams and memory tracker) and one more per member of each of its
 * communicators (listed when they are set up): 2^27, about a minute of simulation and a few
 * GiB. The 405B job's 16,384 ranks take 7e7 (26 s); --ranks all over a million GPUs would
 * take billions, or 10^12 with one data-parallel group of them all.
 */
#define SIM_MAX_TASK_RUNS ((double)(1 << 27))
#define SIM_RANK_TASKS    64.0

/*
 * A bound on the work of several steps (`simtrain serve` sets one per request in
 * scenario.sim.budget; plan and memory simulate copies of the scenario, which share it). Each
 * step takes its task runs (as counted for SIM_MAX_TASK_RUNS) out of task_runs_left before
 * it runs, and no step starts past the deadline; a step refused for either is not run, and
 * `spent` says so, so that the caller can tell a result cut short by the bound from a
 * complete one (the server then answers with the bound, never with a partial result: the
 * deadline is the one place where wall-clock time decides anything, and only whether).
 */
struct sim_budget {
    double task_runs_left; /* task runs the next steps may still take */
    double deadline_s;     /* CLOCK_MONOTONIC time after which no step starts, s; 0 = none */
    bool spent;            /* a step was refused for want of budget */
};

/* The CLOCK_MONOTONIC time now, seconds (for sim_budget.deadline_s). */
double sim_clock_s(void);

struct trace_rec {
    int32_t rank_idx; /* index into result->ranks */
    int32_t task;     /* task index in the rank's program */
    sim_time t0, t1;  /* start and end, ns (t0 = transfer start for communication) */
};

struct mem_sample {
    sim_time t;
    int64_t cur[MC_COUNT]; /* bytes per category after the change at t */
};

struct rank_result {
    int rank; /* global rank */
    int coords[DIM_COUNT];
    const struct prog *prog;            /* its program (owned by the caller) */
    sim_time end;                       /* when its last task finished */
    sim_time bucket[TC_COUNT];          /* exclusive breakdown; sums to the step time */
    sim_time busy[TC_COUNT];            /* busy time per category, overlapped or not */
    double comm_bytes[COMM_KIND_COUNT]; /* bus bytes moved, per communicator kind */
    int64_t peak;                       /* peak bytes allocated */
    sim_time peak_t;
    int64_t at_peak[MC_COUNT];     /* per-category bytes at the peak */
    int64_t mod_cur[MM_COUNT];     /* bytes per model module now (attributed marks, prog.h) */
    int64_t mod_at_peak[MM_COUNT]; /* per-module bytes at the peak: activations and logits */
    int64_t reserve_short;         /* most allocator reserve the GPU had no room for (sim.c) */
    int64_t peak_allocated;        /* most bytes in tensors at once (max_memory_allocated) */
    int64_t peak_reserved;         /* most bytes the caching allocator held (max_memory_reserved):
                                      tensors and reserve, without the CUDA context and NCCL */
    int64_t cur[MC_COUNT];         /* bytes per category at the end of the step */
    struct mem_sample *tl;         /* memory timeline (trace mode) */
    size_t ntl, cap_tl;
    double slowdown;      /* compute time multiplier (straggler) */
    double host_slowdown; /* host time multiplier: its CPU's speed draw (host.jitter) */
    bool traced;          /* its tasks and memory are in the trace (sim_opts.trace_ranks) */
};

/*
 * One distinct collective shape seen, for reports (at most SIM_MAX_NOTES, first seen first).
 * Per rank: count is the operations the simulated groups ran, which grows with the ranks
 * simulated; per_rank is what one GPU takes part in, the same with --ranks all as with one
 * rank per stage on a symmetric layout (the simulated members' part over the ranks taking
 * part; a mean where the stages differ).
 */
#define SIM_MAX_NOTES 256

struct coll_note {
    int comm_kind;
    int op;
    int nranks, nnodes;
    int algo, proto;
    const char *path;
    double bytes;
    sim_time time;
    int count;         /* operations of the simulated groups */
    double member_ops; /* operations times their simulated members */
    int ranks;         /* simulated ranks that took part */
    double per_rank;   /* member_ops / ranks: operations per GPU per step */
};

struct sim_result {
    sim_time step; /* makespan of the step over simulated ranks, ns */
    int nranks;    /* simulated ranks */
    struct rank_result *ranks;
    uint64_t events;         /* engine events */
    struct trace_rec *trace; /* task intervals (trace mode) */
    size_t ntrace, cap_trace;
    struct coll_note *notes; /* distinct collectives, in first-seen order */
    int nnotes;
    size_t cap_notes;
};

/*
 * Simulate one step: prog_of_stage[s] is the program of pipeline stage s (all
 * sealed), run by every simulated rank of that stage. Returns 0, or -1 with a
 * reason when the programs deadlock (a strategy bug; SIMTRAIN_DEBUG_STUCK=1
 * prints every rank's stream heads), the step outlasts SIM_STEP_LIMIT, the ranks
 * would run more than SIM_MAX_TASK_RUNS tasks, or the trace asked for would exceed
 * SIM_TRACE_MAX_BYTES (both checked before the step runs). The caller owns
 * `res`, filled in either case, and frees it with sim_result_release().
 */
int sim_run(const struct scenario *s, const struct layout *l, struct prog *const *prog_of_stage,
            const struct sim_opts *opts, struct sim_result *res, char *reason, size_t reason_len);

void sim_result_release(struct sim_result *res);

#endif
