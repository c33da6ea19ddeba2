/*
 * megatron_internal.h - the words of a Megatron-LM / NeMo argument file (megatron_args.c) for
 * the translation (megatron.c). Private to src/import/.
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

#endif
