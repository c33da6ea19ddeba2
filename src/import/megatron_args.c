/*
 * megatron_args.c - a file of Megatron-LM command-line arguments as a list of flags with their
 * positions: `--flag value`, `--flag=value`, `--store-true-flag`, NeMo 1 Hydra overrides
 * (`model.num_layers=32`), `\` line continuations and `#` comments; a launcher before the
 * script (`torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py`) gives the GPU count.
 * Quotes group a value as a shell does; `$VAR` is a shell variable simtrain cannot expand and
 * is refused. The meaning of each flag is megatron.c's.
 */
#include <string.h>

#include "import/megatron_internal.h"

static bool space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One shell word from text[*p]; NULL at the end. Its node spans the word as written. */
static struct yt_node *word(struct imp *im, const struct diag_src *src, size_t *p)
{
    const char *t = src->text;
    size_t n = src->len, i = *p, start;
    char *buf = arena_alloc(&im->a, n + 1);
    size_t len = 0;
    struct yt_node *w;

    for (;;) {
        while (i < n && space(t[i]))
            i++;
        if (i + 1 < n && t[i] == '\\' && (t[i + 1] == '\n' || t[i + 1] == '\r')) {
            i += 2; /* a line continuation between words */
            continue;
        }
        if (i < n && t[i] == '#') {
            while (i < n && t[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    if (i >= n) {
        *p = i;
        return NULL;
    }
    start = i;
    while (i < n && !space(t[i])) {
        if (t[i] == '\'' || t[i] == '"') {
            size_t open = i;
            char q = t[i++];
            while (i < n && t[i] != q)
                buf[len++] = t[i++];
            if (i >= n) {
                imp_error(im, yt_new_scalar(&im->a, src, "", 0, open, open + 1),
                          "unterminated %s quote (a shell would wait for its end)",
                          q == '"' ? "double" : "single");
                *p = n;
                return NULL;
            }
            i++;
            continue;
        }
        if (t[i] == '\\' && i + 1 < n && (t[i + 1] == '\n' || t[i + 1] == '\r'))
            break;
        buf[len++] = t[i++];
    }
    w = yt_new_scalar(&im->a, src, buf, len, start, i);
    *p = i;
    return w;
}

int meg_words(struct imp *im, const struct imp_file *f, struct meg_args *out)
{
    const struct diag_src *src = &f->doc->src;
    struct yt_node *w;
    size_t p = 0;

    int before = im->errors;

    memset(out, 0, sizeof(*out));
    while ((w = word(im, src, &p))) {
        if (strchr(w->text, '$'))
            return imp_error(im, w,
                             "'%s': a shell variable simtrain cannot expand; write its "
                             "value",
                             w->text);
        grow_array((void **)&out->w, &out->cap, out->n + 1, sizeof(*out->w));
        out->w[out->n++] = w;
    }
    return im->errors > before ? -1 : 0;
}
