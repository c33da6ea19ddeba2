/*
 * profile_internal.h - the parsed form of a profile file, shared by profile.c (loading and
 * selection), profile_apply.c (binding and application) and profile_doc.c (the listing).
 * Private to src/config/.
 */
#ifndef SIMTRAIN_CONFIG_PROFILE_INTERNAL_H
#define SIMTRAIN_CONFIG_PROFILE_INTERNAL_H

#include "config/profile.h"

#define FW_MAX_VALUES 8 /* alternatives of one condition */

enum fw_op {
    FW_EQ,
    FW_NE,
    FW_GT,
    FW_GE,
    FW_LT,
    FW_LE
};

/* One condition of a rule: the key's value compared with the listed values. */
struct fw_cond {
    const struct field *f;
    size_t off; /* of the value in struct scenario */
    int op;     /* enum fw_op */
    int nvals;
    double vals[FW_MAX_VALUES]; /* FW_EQ: any of them; the others: vals[0] */
};

/* config/'s side of a struct fw_setting (its `impl`). */
struct fw_impl {
    const struct field *f;
    size_t off;           /* of the value in struct scenario */
    unsigned char val[8]; /* the value, converted at load */
    const struct fw_cond *cond;
    int ncond; /* 0 for a default */
};

/*
 * A date as the number yyyymmdd; a partial one ("2024", "2024-07") is the range of days it
 * names, [lo, hi] (hi may be a day past the month's last, e.g. 20240231: it only compares).
 */
struct fw_date {
    int lo, hi; /* yyyymmdd */
};

/*
 * A release number as a stack writes it: an optional series prefix ("core_r", "core_v": series
 * "core"; "v", "r" or none: series ""), 1 to 4 numbers, an optional pre-release (rc1, a2, b,
 * .dev3, which sorts before the release) and an ignored post-release or local part (.post1,
 * +cu121).
 */
#define FW_REL_PARTS 4
struct fw_relnum {
    char series[16];
    int n;                 /* numbers given */
    int num[FW_REL_PARTS]; /* the rest 0 */
    int pre;               /* 0: a release; else 1 + the pre-release's number */
};

/* One entry of a profile's release calendar: a release of the stack and its date. */
struct fw_release {
    const char *id; /* as written, "v0.16.0" */
    struct fw_relnum num;
    struct fw_date date;
    const char *when; /* the date as written */
};

/* One version of a profile file. */
struct fw_version {
    const char *name;
    const char **aliases;
    int naliases;
    const char **releases; /* the stack's identifiers of the release read ("v0.16.0", "24.09") */
    int nreleases;
    const char *released, *read, *note, *inherits;
    const char *since, *since_source; /* the first release it describes, and why (optional) */
    struct fw_date start;    /* since's date, else released's; lo 0 when neither is given */
    struct diag_mark at;     /* its `name`, for errors */
    struct diag_mark inh_at; /* its `inherits` value */
    struct fw_setting *own;  /* its own settings: defaults, then the rules' */
    int nown;
    const char **notes; /* not modelled, with sources */
    int nnotes;
    struct fw_setting *all; /* inherited then own, once resolved */
    int nall;
    int state; /* 0 unresolved, 1 resolving (cycle check), 2 resolved */
};

/* A loaded profile file. */
struct fw_file {
    const char *name, *description, *current, *path;
    struct fw_version *v; /* oldest first */
    int nv;
    struct fw_release *cal; /* the stack's releases with their dates, oldest first */
    int ncal;
    const char *cal_source;
};

/*
 * Load frameworks/NAME.yaml (errors at `at` when it does not exist, inside the file for its
 * content); NULL on error. The result and its strings live in c->a.
 */
struct fw_file *profile_load_file(struct schema_ctx *c, const char *name, struct diag_mark at);

/* The version of f named (or aliased) `word`, or NULL. */
struct fw_version *profile_find_version(const struct fw_file *f, const char *word);

/* ---- version strings (profile_version.c) --------------------------------------------------- */

/* "2024", "2024-07", "2024-07-15" into *d; 0, or -1 when s is no such date. */
int profile_parse_date(const char *s, struct fw_date *d);

/* A release number (see struct fw_relnum) into *r; 0, or -1 when s is none. */
int profile_parse_release(const char *s, struct fw_relnum *r);

/*
 * Read a profile file's `calendar:` mapping ({source: TEXT, releases: {ID: DATE, ...}}) into f
 * (NULL node: none); a version mapping's release keys (released, releases, since) into v; and
 * check that f's versions are in date order. Errors at their places; 0 or -1.
 */
int profile_read_calendar(struct schema_ctx *c, struct fw_file *f, const struct yt_node *cal);
int profile_read_release(struct schema_ctx *c, struct fw_version *v, const struct yt_node *m);
int profile_check_order(struct schema_ctx *c, const struct fw_file *f);

/*
 * The version of f that a version string selects: its name, an alias or release identifier,
 * main/latest (the newest), or a release number, container tag (YY.MM[.patch]) or date placed
 * on the stack's calendar, which selects the newest version released on or before it (the
 * oldest when older than all). Returns NULL when `word` has none of these forms, with the
 * message in why[]. *note (arena string) says how a word other than the version's name was
 * read, NULL for the name itself.
 */
struct fw_version *profile_pick_version(struct arena *a, const struct fw_file *f, const char *word,
                                        const char **note, char *why, size_t why_len);

/* The value of field f stored at p, as a number (ints, enums and booleans included). */
double profile_read(const struct field *f, const void *p);

/* Resolve v's settings with what it inherits (loading other files through c). 0 or -1. */
int profile_resolve(struct schema_ctx *c, struct fw_file *f, struct fw_version *v);

#endif
