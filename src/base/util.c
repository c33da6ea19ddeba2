/* util.c - see util.h. */
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "simtrain: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *xasprintf(const char *fmt, ...)
{
    struct strbuf sb;
    va_list ap;

    sb_init(&sb);
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    return sb_detach(&sb);
}

void grow_array_slow(void **items, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap ? *cap : 8;

    while (n < need)
        n *= 2;
    *items = xrealloc(*items, n * size);
    *cap = n;
}

/* ---- arena ---------------------------------------------------------------- */

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void arena_init(struct arena *a)
{
    a->head = NULL;
}

void arena_release(struct arena *a)
{
    struct arena_block *b = a->head;

    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

void *arena_alloc(struct arena *a, size_t n)
{
    struct arena_block *b = a->head;
    void *p;

    n = (n + 15) & ~(size_t)15;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = xmalloc(sizeof(*b) + cap);
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = arena_alloc(a, n);

    memcpy(d, s, n);
    return d;
}

/* ---- strbuf --------------------------------------------------------------- */

void sb_init(struct strbuf *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void sb_release(struct strbuf *sb)
{
    free(sb->buf);
    sb_init(sb);
}

static void sb_reserve(struct strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;

    if (need <= sb->cap)
        return;
    grow_array((void **)&sb->buf, &sb->cap, need, 1);
}

void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    sb_reserve(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
    sb_reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
    sb_add(sb, s, strlen(s));
}

char *sb_detach(struct strbuf *sb)
{
    char *s = sb->buf ? sb->buf : xstrdup("");

    sb_init(sb);
    return s;
}

void fput_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

char *read_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    struct strbuf sb;
    char chunk[65536];
    size_t n;

    if (!f)
        return NULL;
    sb_init(&sb);
    sb_reserve(&sb, 0);
    sb.buf[0] = '\0';
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        sb_add(&sb, chunk, n);
    if (ferror(f)) {
        int err = errno;
        fclose(f);
        sb_release(&sb);
        errno = err;
        return NULL;
    }
    fclose(f);
    if (len_out)
        *len_out = sb.len;
    return sb_detach(&sb);
}

sim_time ns_from_s(double seconds)
{
    double ns;

    if (!(seconds > 0))
        return 0;
    ns = ceil(seconds * NS_PER_S - 1e-6);
    if (ns >= (double)SIM_TIME_MAX)
        return SIM_TIME_MAX;
    return (sim_time)ns;
}

uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double rng_uniform(uint64_t *state)
{
    return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}
