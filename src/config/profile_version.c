/*
 * profile_version.c - the version strings users write for a framework (profile.h): a profile
 * version's name or alias, main / latest, a release number (0.14.4, v0.16.0, core_r0.8.0,
 * 2.0.0rc1), an NGC container tag (24.09, 26.04.01, nvcr.io/nvidia/nemo:24.09) or a date
 * (2024, 2024-05, 2024-05-17). Each is placed on the stack's release calendar (the profile
 * file's `calendar:`, the dates of its releases) and selects the newest profile version in
 * effect by then: the one with the latest start (`since`, else `released`) on or before it.
 */
#include "config/profile_internal.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ---------------------------------------------------------------------------- */

/* Up to `max` decimal digits at *s into *v (advancing *s); the count read. */
static int digits(const char **s, int max, int *v)
{
    int n = 0;

    *v = 0;
    while (n < max && isdigit((unsigned char)**s)) {
        *v = *v * 10 + (**s - '0');
        (*s)++;
        n++;
    }
    return n;
}

static int month_days(int y, int m)
{
    static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : days[m - 1];
}

int profile_parse_date(const char *s, struct fw_date *d)
{
    int y, m = 0, day = 0;

    if (digits(&s, 4, &y) != 4 || y < 1990 || y > 2199)
        return -1;
    if (*s == '-') {
        s++;
        if (digits(&s, 2, &m) != 2 || m < 1 || m > 12)
            return -1;
        if (*s == '-') {
            s++;
            if (digits(&s, 2, &day) != 2 || day < 1 || day > month_days(y, m))
                return -1;
        }
    }
    if (*s)
        return -1;
    d->lo = y * 10000 + (m ? m : 1) * 100 + (day ? day : 1);
    d->hi = y * 10000 + (m ? m : 12) * 100 + (day ? day : 31);
    return 0;
}

/*
 * An NGC container tag: YY.MM with an optional .patch and a suffix (-py3, .framework, .rc1),
 * after an optional image name ending in ':'. Its date is the month 20YY-MM.
 */
static int parse_container(const char *s, struct fw_date *d)
{
    const char *colon = strrchr(s, ':');
    int yy, mm, patch;

    if (colon)
        s = colon + 1;
    if (digits(&s, 2, &yy) != 2 || *s != '.' || yy < 17)
        return -1;
    s++;
    if (digits(&s, 2, &mm) != 2 || mm < 1 || mm > 12 || isdigit((unsigned char)*s))
        return -1;
    if (*s == '.' && isdigit((unsigned char)s[1])) {
        s++;
        if (digits(&s, 2, &patch) < 1 || isdigit((unsigned char)*s))
            return -1;
    }
    if (*s && *s != '-' && *s != '.')
        return -1;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
            return -1;
    d->lo = (2000 + yy) * 10000 + mm * 100 + 1;
    d->hi = (2000 + yy) * 10000 + mm * 100 + 31;
    return 0;
}

/* "core_r" -> "core", "v" / "r" / "" -> "": the series a prefix names, into out. 0 or -1. */
static int series_of(const char *p, size_t len, char *out, size_t cap)
{
    size_t n = 0;

    while (len > 0 && (p[len - 1] == '-' || p[len - 1] == '_' || p[len - 1] == ' '))
        len--;
    if (len > 0 && (tolower((unsigned char)p[len - 1]) == 'v' || p[len - 1] == 'r') &&
        (len == 1 || p[len - 2] == '_' || p[len - 2] == '-')) {
        len--;
        while (len > 0 && (p[len - 1] == '-' || p[len - 1] == '_'))
            len--;
    }
    if (len >= cap)
        return -1;
    for (; n < len; n++) {
        if (!isalpha((unsigned char)p[n]) && p[n] != '-' && p[n] != '_')
            return -1;
        out[n] = (char)tolower((unsigned char)p[n]);
    }
    out[n] = '\0';
    return 0;
}

/* The pre-release part at *s (rc1, a2, b, alpha, beta, dev3, pre), after an optional . or -. */
static int pre_release(const char **s, int *pre)
{
    static const char *const words[] = { "alpha", "beta", "dev", "pre", "rc", "a", "b" };
    const char *p = *s + (**s == '.' || **s == '-');
    int num = 0;

    for (size_t i = 0; i < ARRAY_LEN(words); i++) {
        size_t len = strlen(words[i]);
        if (strncmp(p, words[i], len) == 0 && !isalpha((unsigned char)p[len])) {
            p += len;
            if (*p == '.' && isdigit((unsigned char)p[1]))
                p++;
            digits(&p, 9, &num);
            *pre = 1 + num;
            *s = p;
            return 0;
        }
    }
    return -1;
}

int profile_parse_release(const char *s, struct fw_relnum *r)
{
    const char *p = s;
    int v;

    memset(r, 0, sizeof(*r));
    while (*p && !isdigit((unsigned char)*p))
        p++;
    if (!*p || series_of(s, (size_t)(p - s), r->series, sizeof(r->series)))
        return -1;
    do {
        if (r->n == FW_REL_PARTS || digits(&p, 9, &v) < 1)
            return -1;
        r->num[r->n++] = v;
    } while (*p == '.' && isdigit((unsigned char)p[1]) && p++);
    if (*p && pre_release(&p, &r->pre) != 0 && *p != '+' && strncmp(p, ".post", 5) != 0 &&
        strncmp(p, "-post", 5) != 0)
        return -1;
    if (strncmp(p, ".post", 5) == 0 || strncmp(p, "-post", 5) == 0) {
        p += 5;
        digits(&p, 9, &v);
    }
    if (*p == '+') {
        for (p++; *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '.')
                return -1;
    }
    return *p ? -1 : 0;
}

/* <0, 0, >0 as release a is older, the same, newer than b (series not compared). */
static int rel_cmp(const struct fw_relnum *a, const struct fw_relnum *b)
{
    for (int i = 0; i < FW_REL_PARTS; i++)
        if (a->num[i] != b->num[i])
            return a->num[i] < b->num[i] ? -1 : 1;
    {
        int pa = a->pre ? a->pre : INT_MAX, pb = b->pre ? b->pre : INT_MAX;
        return (pa > pb) - (pa < pb);
    }
}

/* ---- reading the profile file's dates ----------------------------------------------------- */

static bool scalar(const struct yt_node *n)
{
    return n && n->kind == YT_SCALAR && !yt_is_null(n) && strlen(n->text) == n->len && n->len;
}

int profile_read_calendar(struct schema_ctx *c, struct fw_file *f, const struct yt_node *cal)
{
    const struct yt_node *src, *rel;

    if (!cal)
        return 0;
    src = yt_map_get(cal, "source");
    rel = yt_map_get(cal, "releases");
    if (cal->kind != YT_MAP || cal->count != 2 || !scalar(src) || !rel || rel->kind != YT_MAP) {
        schema_error(c, yt_mark(cal),
                     "expected a calendar {source: TEXT, releases: {RELEASE: DATE, ...}}");
        return -1;
    }
    f->cal_source = arena_strdup(c->a, src->text);
    f->cal = arena_alloc(c->a, sizeof(*f->cal) * (rel->count ? rel->count : 1));
    for (size_t i = 0; i < rel->count; i++) {
        const struct yt_pair *kv = &rel->pairs[i];
        struct fw_release *e = &f->cal[f->ncal];

        e->id = arena_strdup(c->a, kv->key->text);
        if (profile_parse_release(e->id, &e->num)) {
            schema_error(c, yt_mark(kv->key), "'%s' is not a release number", e->id);
            return -1;
        }
        if (!scalar(kv->value) || profile_parse_date(kv->value->text, &e->date)) {
            schema_error(c, yt_mark(kv->value ? kv->value : kv->key),
                         "expected the date of release '%s' (YYYY-MM-DD, YYYY-MM)", e->id);
            return -1;
        }
        e->when = arena_strdup(c->a, kv->value->text);
        f->ncal++;
    }
    return 0;
}

/* A date at key `key` of m into *d (absent: d untouched). 0 or -1. */
static int date_at(struct schema_ctx *c, const struct yt_node *m, const char *key,
                   struct fw_date *d)
{
    const struct yt_node *n = yt_map_get(m, key);

    if (!n)
        return 0;
    if (!scalar(n) || profile_parse_date(n->text, d)) {
        schema_error(c, yt_mark(n), "expected a date for '%s' (YYYY-MM-DD, YYYY-MM or YYYY)", key);
        return -1;
    }
    return 0;
}

int profile_read_release(struct schema_ctx *c, struct fw_version *v, const struct yt_node *m)
{
    const struct yt_node *since = yt_map_get(m, "since");
    struct fw_date rel = { 0, 0 }, from = { 0, 0 };

    if (date_at(c, m, "released", &rel))
        return -1;
    for (int i = 0; i < v->nreleases; i++) {
        struct fw_relnum r;
        struct fw_date d;
        if (profile_parse_release(v->releases[i], &r) && parse_container(v->releases[i], &d)) {
            schema_error(c, yt_mark(yt_map_get(m, "releases")),
                         "release '%s' is neither a release number nor a container tag",
                         v->releases[i]);
            return -1;
        }
    }
    v->start = rel;
    if (!since)
        return 0;
    if (since->kind != YT_MAP || since->count != 3 || !scalar(yt_map_get(since, "release")) ||
        !scalar(yt_map_get(since, "source")) || !yt_map_get(since, "date")) {
        schema_error(c, yt_mark(since), "expected since: {release: ID, date: DATE, source: TEXT}");
        return -1;
    }
    if (date_at(c, since, "date", &from))
        return -1;
    if (rel.lo && from.lo > rel.lo) {
        schema_error(c, yt_mark(yt_map_get(since, "date")),
                     "a version's 'since' cannot be later than its 'released'");
        return -1;
    }
    v->since = arena_strdup(c->a, yt_map_get(since, "release")->text);
    v->since_source = arena_strdup(c->a, yt_map_get(since, "source")->text);
    v->start = from;
    return 0;
}

int profile_check_order(struct schema_ctx *c, const struct fw_file *f)
{
    for (int i = 0; f->nv > 1 && i < f->nv; i++) {
        if (!f->v[i].start.lo) {
            schema_error(c, f->v[i].at,
                         "version '%s' needs 'released' (or 'since'): a version string is "
                         "placed among the versions by their dates",
                         f->v[i].name);
            return -1;
        }
        if (i > 0 && f->v[i].start.lo < f->v[i - 1].start.lo) {
            schema_error(c, f->v[i].at,
                         "version '%s' starts before '%s' listed above it: list the versions "
                         "oldest first",
                         f->v[i].name, f->v[i - 1].name);
            return -1;
        }
    }
    return 0;
}

/* ---- picking the version -------------------------------------------------------------------- */

/* Where a version string lies on the stack's calendar. */
struct point {
    int hi;                        /* yyyymmdd: versions starting on or before it qualify */
    const struct fw_release *near; /* the calendar release it was placed by, or NULL */
    bool newest;                   /* main / latest, or newer than the whole calendar */
};

static bool newest_word(const char *w)
{
    static const char *const words[] = { "main", "master", "latest", "nightly", "head" };
    char low[16];
    size_t n = strlen(w);

    if (n >= sizeof(low))
        return false;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)w[i]);
    for (size_t i = 0; i < ARRAY_LEN(words); i++)
        if (strcmp(low, words[i]) == 0)
            return true;
    return false;
}

/* Is calendar entry e a candidate for r: of r's series (any series for an unprefixed r)? */
static bool candidate(const struct fw_release *e, const struct fw_relnum *r)
{
    return !*r->series || strcmp(e->num.series, r->series) == 0;
}

/*
 * Place release number r on f's calendar: among the releases of r's series and major number
 * (or of any major when none shares r's), the newest one r is on or after gives the date; r
 * older than all of them lies before the earliest. 0, or -1 with why[] filled.
 */
static int place_release(const struct fw_file *f, const struct fw_relnum *r, struct point *pt,
                         char *why, size_t n)
{
    const struct fw_release *best = NULL, *first = NULL, *top = NULL;
    bool any = false, major = false;

    for (int i = 0; i < f->ncal; i++)
        if (candidate(&f->cal[i], r)) {
            any = true;
            major |= f->cal[i].num.num[0] == r->num[0];
            if (!top || rel_cmp(&f->cal[i].num, &top->num) > 0)
                top = &f->cal[i];
        }
    if (!any) {
        snprintf(why, n, "framework '%s' lists no release%s%s%s in its calendar", f->name,
                 *r->series ? " of the series '" : "", r->series, *r->series ? "'" : "");
        return -1;
    }
    for (int i = 0; i < f->ncal; i++) {
        const struct fw_release *e = &f->cal[i];
        if (!candidate(e, r) || (major && e->num.num[0] != r->num[0]))
            continue;
        if (rel_cmp(&e->num, r) <= 0 && (!best || rel_cmp(&e->num, &best->num) > 0))
            best = e;
        if (!first || e->date.lo < first->date.lo)
            first = e;
    }
    pt->near = best ? best : first;
    pt->hi = best ? best->date.hi : first->date.lo - 1;
    pt->newest = rel_cmp(r, &top->num) > 0; /* newer than every release of the series */
    return 0;
}

/* The newest version of f starting on or before day `hi`; the oldest when none does. */
static struct fw_version *by_date(const struct fw_file *f, int hi, bool *older)
{
    for (int i = f->nv - 1; i >= 0; i--)
        if (f->v[i].start.lo <= hi) {
            *older = false;
            return &f->v[i];
        }
    *older = true;
    return &f->v[0];
}

/* "(v0.16.0, 2024-11-25; in effect since v0.5.5)" of v. */
static void version_label(struct strbuf *sb, const struct fw_version *v)
{
    const char *rel = v->nreleases ? v->releases[0] : NULL;

    sb_addf(sb, " (%s%s%s", rel ? rel : "", rel && v->released ? ", " : "",
            v->released ? v->released : "");
    if (v->since)
        sb_addf(sb, "; in effect since %s", v->since);
    sb_puts(sb, ")");
}

static const char *finish_note(struct arena *a, const struct fw_file *f, const char *word,
                               const struct fw_version *v, const char *reason)
{
    struct strbuf sb;
    const char *r;

    sb_init(&sb);
    sb_addf(&sb, "%s %s -> profile '%s'", f->name, word, v->name);
    if (v->nreleases || v->released)
        version_label(&sb, v);
    sb_addf(&sb, ": %s", reason);
    r = arena_strdup(a, sb.buf);
    sb_release(&sb);
    return r;
}

struct fw_version *profile_pick_version(struct arena *a, const struct fw_file *f, const char *word,
                                        const char **note, char *why, size_t why_len)
{
    struct fw_relnum r;
    struct fw_date d;
    struct point pt = { 0, NULL, false };
    struct fw_version *v;
    char reason[200];
    bool older = false;

    *note = NULL;
    for (int i = 0; i < f->nv; i++) {
        if (strcmp(f->v[i].name, word) == 0)
            return &f->v[i];
        for (int k = 0; k < f->v[i].nreleases; k++)
            if (strcmp(f->v[i].releases[k], word) == 0) {
                *note = finish_note(a, f, word, &f->v[i], "a release of it");
                return &f->v[i];
            }
    }
    if ((v = profile_find_version(f, word)) != NULL) {
        *note = finish_note(a, f, word, v, "an alias of it");
        return v;
    }
    if (newest_word(word)) {
        pt.newest = true;
        snprintf(reason, sizeof(reason), "the newest version");
    } else if (profile_parse_date(word, &d) == 0 || parse_container(word, &d) == 0) {
        pt.hi = d.hi;
        snprintf(reason, sizeof(reason), "the newest version in effect by %s", word);
    } else if (profile_parse_release(word, &r) == 0) {
        if (f->nv > 1 && place_release(f, &r, &pt, why, why_len))
            return NULL;
        if (pt.newest)
            snprintf(reason, sizeof(reason),
                     "newer than every release in the calendar (%s): the newest version",
                     pt.near->id);
        else if (pt.near && pt.hi >= pt.near->date.lo)
            snprintf(reason, sizeof(reason),
                     "the newest version in effect by %s (on or after %s of %s in the release "
                     "calendar)",
                     word, pt.near->id, pt.near->when);
        else if (pt.near)
            snprintf(reason, sizeof(reason),
                     "older than %s of %s, the first of its releases in the calendar: the newest "
                     "version before it",
                     pt.near->id, pt.near->when);
    } else {
        snprintf(why, why_len, "'%s' is no version form", word);
        return NULL;
    }
    if (f->nv == 1) {
        *note = finish_note(a, f, word, &f->v[0], "the profile's only version");
        return &f->v[0];
    }
    v = pt.newest ? &f->v[f->nv - 1] : by_date(f, pt.hi, &older);
    if (older)
        snprintf(reason, sizeof(reason), "older than every version: the oldest");
    *note = finish_note(a, f, word, v, reason);
    return v;
}
