/*
 * prog.h - per-rank programs: the tasks one GPU executes in a training step,
 * on streams, with dependencies and memory alloc/free marks.
 *
 * A strategy (src/strategy/) builds one program per distinct role (e.g. one
 * per pipeline stage); every simulated rank runs the program of its role.
 * Tasks on one stream run in the order they were added (a CUDA stream); a
 * task also waits for its dependencies, which may be on other streams of the
 * same rank. Ranks interact only through collectives and send/recv, which
 * are matched per communicator in issue order (NCCL semantics).
 *
 * Memory: a task may allocate or free bytes of a category when it starts
 * (mem0) and when it ends (mem1); the engine's tracker turns these into the
 * per-rank timeline and peak. A mark may also say which module of the model
 * its bytes belong to (prog_mem_modules()), for the per-module view of the peak.
 *
 * The communicator kinds, time categories and memory categories tasks carry are the shared
 * vocabulary of model/kinds.h.
 *
 * Ownership: prog_new() returns a program the caller frees with prog_free().
 */
#ifndef SIMTRAIN_PROG_H
#define SIMTRAIN_PROG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"
#include "model/kinds.h"

enum task_kind {
    TASK_COMPUTE, /* runs for dur ns on its stream */
    TASK_COLL,    /* collective on communicator `comm`; starts when all members arrive */
    TASK_SEND,    /* point-to-point send to the peer named by `comm` */
    TASK_RECV,    /* matching receive */
    TASK_COPY,    /* host<->device copy of `bytes` over the GPU's PCIe link */
    TASK_HOST,    /* host CPU work for dur ns (CPU optimizer step) */
    TASK_MARK     /* zero duration: memory marks and phase boundaries */
};

/* Streams of one rank (CUDA streams / NCCL channels / host threads). */
enum stream_id {
    ST_COMPUTE,
    ST_TP,        /* tensor/sequence-parallel collectives */
    ST_CP,        /* context-parallel ring exchange */
    ST_EP,        /* expert-parallel all-to-all */
    ST_DP,        /* data-parallel gradient reduction */
    ST_DP_GATHER, /* parameter all-gathers (ZeRO-3 / FSDP / ZeRO-1 param sync) */
    ST_PP_SEND_NEXT,
    ST_PP_SEND_PREV,
    ST_PP_RECV_PREV,
    ST_PP_RECV_NEXT,
    ST_H2D,
    ST_D2H,
    ST_HOST,
    ST_COUNT
};

struct task {
    uint8_t kind;   /* enum task_kind */
    uint8_t stream; /* enum stream_id */
    uint8_t tcat;   /* enum time_cat */
    uint8_t comm;   /* enum comm_kind (COLL/SEND/RECV) */
    uint8_t op;     /* enum coll_op (COLL) */
    uint8_t mcat0;  /* enum mem_cat of mem0 */
    uint8_t mcat1;  /* enum mem_cat of mem1 */
    uint8_t mtag;   /* 1 + index into prog->mtags: its marks by module; 0 = not attributed */
    int32_t label;  /* index into prog->labels */
    int32_t mb;     /* micro-batch index for the trace, -1 if none */
    int32_t pred0;  /* dependencies: prog->preds[pred0 .. pred0 + npred) */
    int32_t npred;
    int32_t succ0; /* successors (filled by prog_seal) */
    int32_t nsucc;
    sim_time dur; /* COMPUTE/HOST duration, ns */
    double bytes; /* COLL/SEND/RECV/COPY payload, bytes (nccl-tests size) */
    int64_t mem0; /* bytes allocated (> 0) or freed (< 0) when the task starts */
    int64_t mem1; /* bytes allocated (> 0) or freed (< 0) when the task ends */
};

#define PROG_LCACHE 256 /* entries of the label cache, a power of two */
#define PROG_MMEMO  256 /* entries of the attribution memo, a power of two */

struct prog {
    char role[48]; /* e.g. "stage 0" */
    struct task *tasks;
    int ntasks;
    size_t cap_tasks;
    int32_t *preds; /* dependency lists, by task */
    int32_t *succs; /* successor lists (after prog_seal) */
    int npreds;
    /* Stream order (after prog_seal): a stream's tasks in index order, linked. */
    int32_t *snext;           /* per task: the next task on its stream, or ntasks */
    int32_t sfirst[ST_COUNT]; /* per stream: its first task, or ntasks */
    /* Dense copies for the simulator's readiness checks, which would otherwise touch a
     * task's 64 bytes long after the builder wrote them (a cache miss per task). */
    int32_t *pstart;    /* per task and one more: its dependencies are preds[pstart[i] ..
                           pstart[i + 1]) (= tasks[i].pred0, .npred) */
    uint8_t *stream_of; /* per task: its stream */
    /* Communicators used (after prog_seal), a bit per enum comm_kind: by collectives, sends
     * and receives (the simulator creates only these, without scanning the tasks per rank). */
    uint32_t coll_comms, send_comms, recv_comms;
    size_t cap_preds;
    struct prog_edge {
        int32_t from, to;
    } * edges; /* pending edges while building */
    int nedges;
    size_t cap_edges;
    bool seal_in_edges; /* the sealed arrays (preds ...) live in the edges' storage */
    struct prog_label {
        const char *fmt;    /* static text, at most one %d */
        int arg;            /* the %d value */
        uint32_t text_hash; /* of the text at fmt (prog.c): the table never hashes pointers */
    } * labels;             /* interned task labels */
    int nlabels;
    size_t cap_labels;
    int *label_hash; /* open addressing over labels by (text, arg), -1 = empty */
    size_t label_hash_cap;
    uint64_t label_probes; /* occupied slots passed while interning new labels (for tests) */
    struct prog_lcache {   /* recently interned labels, direct-mapped: a memo, no result */
        const char *fmt;
        int arg, id;
    } lcache[PROG_LCACHE];
    struct prog_seg *segs; /* recorded segments for stamping (freed by prog_seal) */
    int nsegs;
    size_t cap_segs;
    int rec_seg;        /* 1 + the segment being recorded, 0 = none */
    int rec_t0, rec_e0; /* where its tasks and dependencies begin */
    int sealed;
    /* Module attributions of memory marks (prog_mem_modules()): distinct (start, end) pairs of
     * bytes per module, which tasks name by mtag. */
    struct prog_mtag {
        int64_t bytes[2][MM_COUNT]; /* [0] of mem0, [1] of mem1, signed as the marks */
        uint64_t hash;
    } * mtags;
    int nmtags;
    size_t cap_mtags;
    bool mtag_overflow; /* more than PROG_MAX_MTAGS pairs: some marks left unattributed */
    struct prog_mmemo { /* (previous mtag, slot, caller's key) -> mtag: a memo, no result */
        uint32_t key;   /* 0 = empty */
        uint8_t mtag;
    } mmemo[PROG_MMEMO];
};

#define PROG_MAX_MTAGS 255 /* distinct attributions a program holds (mtag is a byte) */

struct prog *prog_new(const char *role);
void prog_free(struct prog *p);

/* Append a task (stream order = order of addition); returns its index. */
int prog_add(struct prog *p, const struct task *t);

/* Make task `t` wait for task `dep` (dep < t is asserted: programs are built in order). */
void prog_dep(struct prog *p, int t, int dep);

/* Make room for `ntasks` tasks and `nedges` dependencies in all (a hint; never required). */
void prog_reserve(struct prog *p, int ntasks, int nedges);

/*
 * Intern a label: `fmt` is static text (a string literal: only the pointer is
 * kept) with at most one "%d", expanded with `arg` when the label is printed.
 * Returns its index; equal texts with equal arguments are one label wherever
 * the texts are stored, and the time taken does not depend on their addresses.
 * Labels are formatted lazily because a large program has hundreds of
 * thousands of tasks and only traces print them.
 */
int prog_label(struct prog *p, const char *fmt, int arg);

/* The text of label `id` into buf. */
void prog_label_text(const struct prog *p, int id, char *buf, size_t n);

/* Build dependency and successor lists and the stream order (snext, sfirst); no tasks may be
 * added afterwards. */
void prog_seal(struct prog *p);

/*
 * Stamping. A builder emits the same pattern of tasks many times (a layer, per
 * micro-batch and per layer): it records the pattern once as a segment and
 * stamps copies of it, which adds exactly the tasks, labels and dependencies
 * the same calls would have added, in the same order, at a fraction of the cost.
 *
 * prog_seg_begin() starts recording under `key` (unique per pattern); the tasks
 * and dependencies added until prog_seg_end() form the segment. Every label of
 * the segment whose argument is `arg`, and every task whose micro-batch is `mb`,
 * take the stamp's values. The segment's tasks may depend only on each other and
 * on the tasks in ext[0 .. PROG_SEG_EXT) (-1 = unused); otherwise it is not
 * stampable and prog_seg_find() never returns it. prog_seg_end() also records
 * `nout` task indices of the caller's results (in the segment, in ext, or -1)
 * and an opaque `aux` value; prog_seg_stamp() returns them translated.
 * Segments are freed by prog_seal().
 */
#define PROG_SEG_EXT 2
#define PROG_SEG_OUT 3

struct prog_seg {
    uint64_t key;
    bool ok;            /* stampable */
    struct task *tasks; /* the recorded tasks, as added (dependency counts zero) */
    int ntasks;         /* tasks recorded */
    int32_t *lslot;     /* per task: its label, an index into lfmt / larg */
    const char **lfmt;  /* distinct labels of the segment, in order of first use: format */
    int32_t *larg;      /*   argument, or INT32_MIN for the stamp's */
    uint32_t *lth;      /*   hash of the format's text (prog.c) */
    int nlab;
    int32_t *lid; /* label indices per stamp argument: rows of nlab + 1 (the argument last), */
    int lid_rows; /*   row a for argument a in [0, lid_rows), row lid_rows for the others */
    struct prog_edge *e; /* dependencies: from >= 0 in the segment, -1 - k for ext[k] */
    int nedges;
    int out[PROG_SEG_OUT]; /* results, encoded as e->from (INT32_MIN = -1) */
    int aux;
    int ext[PROG_SEG_EXT]; /* the recording's external tasks */
    int arg, mb;           /* the recording's label argument and micro-batch */
};

/* The stampable segment recorded under `key`, or -1 (always -1 while stamping is off). */
int prog_seg_find(const struct prog *p, uint64_t key);

/* Turn stamping on (the default) or off process-wide: with it off every layer is emitted afresh,
 * which tests use as the reference for stamped programs. */
void prog_set_stamping(bool on);

/* Start recording a segment under `key` (one at a time; see above). */
void prog_seg_begin(struct prog *p, uint64_t key, const int ext[PROG_SEG_EXT], int arg, int mb);

/* Stop recording; `out` (nout <= PROG_SEG_OUT task indices) and `aux` are the caller's results. */
void prog_seg_end(struct prog *p, const int *out, int nout, int aux);

/*
 * Add a copy of segment `seg` depending on ext[] instead of the recorded ones
 * (ext must have the recording's pattern: the same entries -1, the same entries
 * equal), with label argument `arg` and micro-batch `mb`. Writes its results to out[0 ..
 * nout) and returns its aux value.
 */
int prog_seg_stamp(struct prog *p, int seg, const int ext[PROG_SEG_EXT], int arg, int mb, int *out,
                   int nout);

/* Convenience constructors; each returns the new task's index. */
int prog_compute(struct prog *p, int stream, int tcat, sim_time dur, int label, int mb);
/* Host CPU work of `dur` ns on ST_HOST (the framework's issue, a CPU optimizer step). */
int prog_host(struct prog *p, int tcat, sim_time dur, int label, int mb);
int prog_coll(struct prog *p, int stream, int tcat, int comm, int op, double bytes, int label,
              int mb);
int prog_mark(struct prog *p, int stream, int label);

/* Attach memory marks to a task. */
void task_mem_start(struct task *t, int cat, int64_t bytes);
void task_mem_end(struct task *t, int cat, int64_t bytes);

/*
 * Say which modules the bytes of task `ti`'s start (at_end false) or end mark belong to:
 * sign * bytes[m] more bytes of module m (enum mem_module; sign -1 for a free). A mark
 * attributed in pieces sums them; every piece must be matched by the same bytes passed to
 * task_mem_start() / task_mem_end(), so that the modules sum to the attributed categories at
 * every moment. `key` (> 0) is the caller's name for (bytes, sign): equal keys, equal pieces;
 * it lets a builder that attributes the same pieces thousands of times skip the search (0:
 * search every time). Past PROG_MAX_MTAGS distinct attributions the task stays unattributed
 * and mtag_overflow is set (the per-module view is then incomplete).
 */
void prog_mem_modules(struct prog *p, int ti, bool at_end, const int64_t bytes[MM_COUNT], int sign,
                      uint32_t key);

const char *tcat_name(int tcat);
const char *mcat_name(int mcat);
const char *mmod_name(int mmod);
const char *stream_name(int stream);
const char *comm_kind_name(int comm);

#endif
