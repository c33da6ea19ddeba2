/*
 * schema.h - the declarative description of every YAML key simtrain
 * reads (hardware, workload, scenario and calibration files), and the generic
 * code that moves a YAML tree into the structs of config.h through it.
 *
 * One table row per key: its type, where it is stored, its unit, enumeration
 * words, bounds, default (as YAML text, parsed by the same code as file input)
 * and a one-line description. Unknown keys, wrong types, bad units, ranges and
 * missing required keys are therefore checked in one place, and the Markdown
 * reference (`simtrain schema`) is generated from the same rows.
 *
 * Also declared here: entry points of load.c beyond config.h (loading from
 * memory for the fuzzer, parsing `--set` arguments, writing the reference).
 * The lead may move them to config.h.
 */
#ifndef SIMTRAIN_CONFIG_SCHEMA_H
#define SIMTRAIN_CONFIG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config/config.h"
#include "base/units.h"
#include "config/yamltree.h"

enum ftype {
    FT_SECTION, /* nested mapping described by `sub` */
    FT_INT,     /* int: plain whole number */
    FT_FLOAT,   /* double: plain number */
    FT_QTY,     /* double, or sim_time ns for UNIT_TIME: quantity with a unit */
    FT_BOOL,    /* bool: true | false */
    FT_ENUM,    /* int-sized enum or bool, from `names` */
    FT_FLAGS,   /* unsigned bitmask from a list of `names` */
    FT_STR,     /* const char * (arena copy); NO_STORE: checked, then dropped */
    FT_ORDER,   /* "tp-cp-ep-dp-pp" into int order[DIM_COUNT] */
    FT_REF,     /* hardware / workload reference: name, path or inline mapping */
    FT_TABLE,   /* list of mappings described by `sub`, into an arena array */
    FT_ANY      /* anything; ignored (free-form informational keys) */
};

struct enum_name {
    const char *name;
    int value;
};

/* Field flags. */
#define F_REQUIRED 0x1u /* an error when absent (inside a present section) */
#define F_NO_DOC   0x2u /* not listed in the generated reference */
#define F_ZERO_OK  0x4u /* numbers and quantities: 0 allowed (they must be > 0 otherwise) */

#define NO_STORE ((size_t)-1)

struct section;

struct field {
    const char *key;
    enum ftype type;
    size_t off;                    /* offset from the section's base; NO_STORE */
    size_t size;                   /* bytes of the member (enums, bools, ints) */
    enum unit_kind unit;           /* FT_QTY */
    const struct enum_name *names; /* FT_ENUM, FT_FLAGS: NULL-name terminated */
    const struct section *sub;     /* FT_SECTION, FT_TABLE */
    unsigned flags;                /* F_* */
    double min, max;               /* inclusive bounds, in base units */
    const char *def;               /* default as YAML text; NULL: zero or derived */
    const char *def_doc;           /* default as documented when it is derived */
    unsigned given;                /* GIVEN_* bit recorded when the key is present */
    size_t count_off;              /* FT_TABLE: offset of the int element count */
    const char *doc;               /* one line for the reference */
};

/* Section flags. */
#define S_ABSENT_IS_NONE 0x1u /* absent section: all zero, no defaults (nvlink, network, moe) */

struct section {
    const char *name; /* dotted path for messages, "" for a file's top level */
    const struct field *fields;
    size_t nfields;
    unsigned flags;
    size_t elem_size; /* FT_TABLE element size */
};

/* Keys whose presence matters after loading (derived defaults; cfg_set re-derives). */
enum cfg_given {
    GIVEN_NODES = 1u << 0,
    GIVEN_GPUS = 1u << 1,
    GIVEN_DP = 1u << 2,
    GIVEN_SCHEDULE = 1u << 3,
    GIVEN_LORA_ALPHA = 1u << 4,
    GIVEN_OVERLAP_COMM = 1u << 5,
    GIVEN_PARAM_DTYPE = 1u << 6,
    GIVEN_REDUCE_DTYPE = 1u << 7,
    GIVEN_BUFFER_DTYPE = 1u << 8,
    GIVEN_KV_HEADS = 1u << 9,
    GIVEN_HEAD_DIM = 1u << 10,
    GIVEN_FFN_HIDDEN = 1u << 11,
    GIVEN_MOE_FFN_HIDDEN = 1u << 12,
    GIVEN_DDP_OVERLAP = 1u << 13,
    GIVEN_FP8_RECIPE = 1u << 14,
    GIVEN_FSDP_VERSION = 1u << 15
};

/* File-level sections. */
extern const struct section schema_scenario;
extern const struct section schema_hardware;
extern const struct section schema_workload;
extern const struct section schema_calibration;
extern const struct section schema_efficiency;

/* ---- extraction (extract.c) ----------------------------------------------------- */

/* Load-time context: where diagnostics go, how many were printed, what was given. */
struct schema_ctx {
    FILE *diag;        /* NULL: count errors silently */
    int errors;        /* diagnostics printed so far */
    struct arena *a;   /* strings and tables */
    unsigned given;    /* enum cfg_given bits of keys seen */
    bool no_defaults;  /* calibration files: leave absent keys untouched */
    bool library_only; /* references written in the posted text or an override name shipped
                          files only, never paths (cfg_resolve) */
    const struct diag_src *posted; /* library_only: the posted text */
    char *msg;                     /* if set, the first error's message is also copied here */
    size_t msglen;
};

/* Stop reporting after this many errors in one load. */
#define SCHEMA_MAX_ERRORS 20

/* Report an error at mark m (counted; printed while under SCHEMA_MAX_ERRORS). */
void schema_error(struct schema_ctx *c, struct diag_mark m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Move mapping `map` into the struct at `base` through `sec`: every key must be
 * known, every value valid; absent keys get their defaults; absent required
 * keys are errors at `where` (the key naming the section; NULL: the map
 * itself). FT_REF fields are left to the caller. Returns the number of errors.
 */
int schema_extract(struct schema_ctx *c, const struct section *sec, const struct yt_node *map,
                   const struct yt_node *where, void *base);

/* Move one value node into field f at base (a scalar, a section, a list). */
void schema_extract_value(struct schema_ctx *c, const struct field *f, const struct yt_node *key,
                          const struct yt_node *val, void *base);

/* Fill every default of `sec` (and its sections) at `base`, as for absent keys. */
void schema_defaults(const struct section *sec, void *base, struct arena *a);

/*
 * Convert one scalar `text` (len bytes, written in `style`) for field f into
 * base. On error returns -1 with the message and the byte range inside text.
 */
struct conv_error {
    size_t off, len;
    char msg[320];
};
int schema_convert(const struct field *f, const char *text, size_t len, enum yt_style style,
                   void *base, struct arena *a, struct conv_error *e);

/* Field `key` of a section (NULL if unknown); fills *suggest with a near key or NULL. */
const struct field *schema_find(const struct section *sec, const char *key, size_t len,
                                const char **suggest);

/*
 * Find a dotted key in the scenario schema ("parallelism.dp", "hardware.gpu.memory").
 * Returns the field, or NULL with *bad_at (byte offset of the unknown component)
 * and msg filled. *base_off is the byte offset of the field's base from struct
 * scenario (for typed access, cfg_set).
 */
const struct field *schema_lookup(const char *key, size_t *base_off, size_t *bad_at,
                                  size_t *bad_len, char *msg, size_t msglen);

/* ---- derivation (check.c) ------------------------------------------------------ */

/*
 * Defaults that follow other keys, for keys not in `given` (enum cfg_given):
 * lora.alpha = 2 * rank, fsdp dtypes = training.precision, zero.overlap_comm =
 * (sharding == zero3).
 */
void cfg_derive_defaults(struct scenario *s, unsigned given);

/*
 * The scenario's words in the stack's own terms (docs/sharding.md), once the profile is applied:
 * sharding zero2 where parallelism.zero2_impl says fsdp (or, without a profile, under pp > 1)
 * is FSDP without resharding after forward, sharding fsdp_grad_op (FSDP2 under pp > 1 unless
 * fsdp.version is in `given`), and par.zero2_read remembers it. Call when the word is given
 * (load, a runs-file row, cfg_set of the key).
 */
void cfg_read_words(struct scenario *s, unsigned given);

/* Derive kv_heads, head_dim, ffn_hidden, moe.ffn_hidden and check the model alone. */
int cfg_model_finalize(struct model *m, struct cfg_error *err);

/*
 * The sizes a simulation may reach (limits.c): GPUs, tasks per program (strategy/size.h),
 * tokens to train. 0, or -1 with *err naming the setting, the limit and its reason. Called
 * by scenario_finalize() once the layout and the batch are checked.
 */
int cfg_check_limits(struct scenario *s, struct cfg_error *err);

/*
 * No setting may put a step beyond SIM_STEP_LIMIT (step_range.c): a lower bound of the step from
 * the model FLOPs at the dense peak (cfg_check_step_flops(), before cfg_check_limits()), then
 * from the kernels and bytes every layer runs, the host's issue of an eager job and the
 * offloaded optimizer (cfg_check_step_range(), after it), refused at the key with the largest
 * share, or at the workload when every rate is a real system's. 0, or -1 with *err.
 */
int cfg_check_step_flops(struct scenario *s, struct cfg_error *err);
int cfg_check_step_range(struct scenario *s, struct cfg_error *err);

/* ---- loaded scenarios (load.c, set.c) ----------------------------------------- */

#define CMDLINE "<command line>" /* the "file" of --set diagnostics */

/* The parsed YAML behind a loaded scenario, kept for diagnostics after loading. */
struct cfg_source {
    struct arena arena;            /* every node, string and table of the scenario */
    const struct yt_node *scen;    /* scenario top-level mapping */
    const struct yt_node *hw;      /* hardware mapping (a file's root, or inline) */
    const struct yt_node *model;   /* workload mapping */
    const struct yt_node *hw_ref;  /* the scenario's `hardware:` value */
    const struct yt_node *mdl_ref; /* the scenario's `workload:` value */
};

/* ---- files and references (ref.c) ------------------------------------------------ */

/* A file found by cfg_resolve(): its cleaned path (arena) and contents (heap; caller frees). */
struct cfg_found {
    const char *path;
    char *text;
    size_t len;
};

/*
 * Find the file a reference names, report an error at `at` when there is none.
 * A path (with '/' or ending in .yaml) is relative to the referencing file
 * `from` (the working directory when there is none, or when the reference was
 * typed on the command line); a bare name is looked up as SUBDIR/NAME.yaml
 * next to the referencing file's folder, then in $SIMTRAIN_DATA, then in
 * cfg_data_dir(). Returns 0 or -1.
 *
 * With c->library_only (a scenario posted to `simtrain serve`), a reference written in the
 * posted text (c->posted) or in an override must be a bare name, looked up in $SIMTRAIN_DATA
 * and cfg_data_dir() only: a path is refused before any file is opened, and no diagnostic
 * names a file of the machine. References inside the shipped files found so (a hardware
 * file's calibration) resolve as usual.
 */
int cfg_resolve(struct schema_ctx *c, const char *what, const char *subdir, const char *ref,
                struct diag_mark at, const char *from, struct cfg_found *out);

/* Read a regular file of at most 16 MiB (heap); NULL with *why (static text) on failure. */
char *cfg_read_file(const char *path, size_t *len, const char **why);

/*
 * Where a scenario path given on the command line is: `path` itself when it
 * exists (or is absolute), else the first of $SIMTRAIN_DATA/path and
 * cfg_data_dir()/path that exists, so that `simtrain scenarios/x.yaml` works
 * from any directory. Heap string, or NULL when none exists (the caller
 * reports `path`).
 */
char *cfg_locate_input(const char *path);

/* "dir/dgx-h100.yaml" -> "dgx-h100", in the arena. */
char *cfg_stem(struct arena *a, const char *path);

/* ---- extra entry points (load.c) ------------------------------------------------------ */

/* cfg_load_scenario() on a buffer: `path` names it in diagnostics and anchors references. */
struct scenario *cfg_load_scenario_mem(const char *path, const char *text, size_t len,
                                       const struct cfg_override *ovr, int novr, FILE *diag);
/* cfg_load_hardware() / cfg_load_model() on a buffer. */
struct hardware *cfg_load_hardware_mem(const char *path, const char *text, size_t len, FILE *diag);
struct model *cfg_load_model_mem(const char *path, const char *text, size_t len, FILE *diag);

/*
 * Split a `key=value` command-line argument. Returns 0, or -1 (and a
 * diagnostic on `diag`) when there is no '=' or the key is empty. `o` points
 * into a copy owned by it: release with cfg_override_release().
 */
int cfg_override_init(struct cfg_override *o, const char *arg, FILE *diag);
void cfg_override_release(struct cfg_override *o);

/* Write the key reference of every file kind as Markdown (`simtrain schema`). */
void cfg_write_reference(FILE *out);

#endif
