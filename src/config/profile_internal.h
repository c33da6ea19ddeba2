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

/* One version of a profile file. */
struct fw_version {
    const char *name;
    const char **aliases;
    int naliases;
    const char *released, *read, *note, *inherits;
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
    struct fw_version *v;
    int nv;
};

/*
 * Load frameworks/NAME.yaml (errors at `at` when it does not exist, inside the file for its
 * content); NULL on error. The result and its strings live in c->a.
 */
struct fw_file *profile_load_file(struct schema_ctx *c, const char *name, struct diag_mark at);

/* The version of f named (or aliased) `word`, or NULL. */
struct fw_version *profile_find_version(const struct fw_file *f, const char *word);

/* The value of field f stored at p, as a number (ints, enums and booleans included). */
double profile_read(const struct field *f, const void *p);

/* Resolve v's settings with what it inherits (loading other files through c). 0 or -1. */
int profile_resolve(struct schema_ctx *c, struct fw_file *f, struct fw_version *v);

#endif
