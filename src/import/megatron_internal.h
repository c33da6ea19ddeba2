/*
 * megatron_internal.h - the words of a Megatron-LM / NeMo argument file (megatron_args.c) and
 * the flags they set (megatron_flags.c) for the translation (megatron.c). Private to
 * src/import/.
 */
#ifndef SIMTRAIN_IMPORT_MEGATRON_INTERNAL_H
#define SIMTRAIN_IMPORT_MEGATRON_INTERNAL_H

#include "import/import_internal.h"

struct meg_args {
    struct yt_node **w; /* the words, each a scalar node over its text */
    size_t n, cap;
};

/* The shell words of file f (quotes removed, comments and continuations skipped). */
int meg_words(struct imp *im, const struct imp_file *f, struct meg_args *out);

struct meg_flag; /* one flag simtrain reads (megatron_flags.c) */

#define MEG_NFLAGS 90 /* the flags simtrain reads: the table of megatron_flags.c */

/* One flag as given: the word of the flag, and of its value (NULL for a store_true flag). */
struct meg_opt {
    const struct meg_flag *f;
    const struct yt_node *key, *val;
};

/* One Megatron import: the flags given, indexed as the table, and the launcher's GPU count. */
struct meg {
    struct imp *im;
    const struct imp_file *file;
    struct meg_opt opts[MEG_NFLAGS];
    int launcher_gpus;
    const struct yt_node *launcher_at;
};

/* The index of flag `name` (without "--") in the table, or -1 when simtrain does not read it. */
int meg_flag_index(const char *name);

/*
 * Match words `a` to the flags into m->opts (the last given wins) and m->launcher_*; list the
 * flags of no cost and those not known; 0, or -1 after a diagnostic (a misspelt flag, a flag
 * without its value, a word that is neither a flag nor a NeMo key=value).
 */
int meg_read_flags(struct meg *m, const struct meg_args *a);

#endif
