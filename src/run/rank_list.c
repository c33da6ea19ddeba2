/* rank_list.c - see rank_list.h. */
#include "run/rank_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* A decimal rank at *p (digits only), advancing *p; -1 when there is none or it overflows. */
static long long number(const char **p)
{
    long long v = 0;
    const char *s = *p;

    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > 1000000000)
            return -1;
    }
    *p = s;
    return v;
}

int rank_list_parse(const char *flag, const char *text, int world, struct rank_list *out, char *err,
                    size_t errlen)
{
    unsigned char *keep = xcalloc((size_t)(world > 0 ? world : 1), 1);
    const char *p = text;
    int r, n = 0;

    memset(out, 0, sizeof(*out));
    for (;;) {
        const char *item = p, *end = strchr(p, ',');
        int shown = (int)(end ? (size_t)(end - item) : strlen(item));
        long long a = number(&p), b = a;

        if (a >= 0 && *p == '-') {
            p++;
            b = number(&p);
        }
        if (a < 0 || b < 0 || (*p != ',' && *p != '\0')) {
            snprintf(err, errlen,
                     "%s: '%.*s' is not a rank or a range of ranks (expected a list such as "
                     "0-7,64)",
                     flag, MIN(shown, 40), item);
            break;
        }
        if (b < a) {
            snprintf(err, errlen, "%s: range '%.*s' is empty (%lld > %lld)", flag, shown, item, a,
                     b);
            break;
        }
        if (b >= world) {
            snprintf(err, errlen, "%s: rank %lld is out of range: the job has %d ranks (0-%d)",
                     flag, b, world, world - 1);
            break;
        }
        for (r = (int)a; r <= (int)b; r++)
            keep[r] = 1;
        if (*p == '\0') {
            for (r = 0; r < world; r++)
                n += keep[r];
            out->ranks = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
            for (r = 0; r < world; r++)
                if (keep[r])
                    out->ranks[out->n++] = r;
            free(keep);
            return 0;
        }
        p++;
    }
    free(keep);
    return -1;
}

void rank_list_release(struct rank_list *l)
{
    free(l->ranks);
    memset(l, 0, sizeof(*l));
}

void rank_list_format(const int *ranks, int n, char *buf, size_t len)
{
    size_t o = 0;
    int i = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    while (i < n && o < len) {
        int j = i, w;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        w = j > i ? snprintf(buf + o, len - o, "%s%d-%d", i ? "," : "", ranks[i], ranks[j])
                  : snprintf(buf + o, len - o, "%s%d", i ? "," : "", ranks[i]);
        o += w > 0 ? (size_t)w : 0;
        i = j + 1;
    }
}

int rank_list_traced(const struct sim_result *res, char *buf, size_t len)
{
    int *kept = xmalloc(sizeof(int) * (size_t)(res->nranks ? res->nranks : 1)), n = 0, i;

    for (i = 0; i < res->nranks; i++)
        if (res->ranks[i].traced)
            kept[n++] = res->ranks[i].rank;
    rank_list_format(kept, n, buf, len);
    free(kept);
    return n;
}
