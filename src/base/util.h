/*
 * util.h - allocation that never returns NULL, a bump arena for load-time data,
 * a growable string buffer, and small helpers shared by every module.
 *
 * Out of memory is not an error path: xmalloc() and friends print a message
 * and abort (STYLE.md, "Errors"), so model code never checks for NULL.
 */
#ifndef SIMTRAIN_UTIL_H
#define SIMTRAIN_UTIL_H

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

/* Simulated time in integer nanoseconds (STYLE.md, "Time and determinism"). */
typedef int64_t sim_time;

#define SIM_TIME_MAX INT64_MAX
#define NS_PER_S     1000000000.0

/*
 * The longest step the simulator answers for: 1e6 s (11.6 days), the largest value a time
 * key takes (config/extract.c), 9,000 times below the clock's 292 years. The load-time
 * checks refuse inputs that would make a step longer (config/check.c), and the engine
 * refuses a simulated step beyond it (sim.c), so a saturated duration is never reported.
 */
#define SIM_STEP_LIMIT ((sim_time)1000000 * 1000000000)

/*
 * The most GPUs a simulated job may span: 2^20, ten times the largest clusters built (about
 * 10^5 GPUs). Layouts, topologies and the engine keep state per GPU (config/limits.c).
 */
#define SIM_MAX_GPUS (1 << 20)

/*
 * Bytes per GPU the simulator answers for: 2^58 (256 PiB), a million times any GPU's memory.
 * A memory mark is at most SIM_MARK_MAX (2^56) and the tracker adds marks with mem_add(),
 * which saturates at +-2^62 where a sum would overflow, so no byte count wraps; a peak beyond
 * SIM_MEM_LIMIT is refused after the run (engine/diagnose.c) as a step beyond SIM_STEP_LIMIT is.
 */
#define SIM_MEM_LIMIT ((int64_t)1 << 58)
#define SIM_MARK_MAX  ((int64_t)1 << 56)
#define SIM_MEM_SAT   ((int64_t)1 << 62)

/* a + b for byte counts, saturating at +-SIM_MEM_SAT where it would overflow. */
static inline int64_t mem_add(int64_t a, int64_t b)
{
    int64_t r;

#if defined(__GNUC__)
    if (__builtin_add_overflow(a, b, &r))
        r = b > 0 ? SIM_MEM_SAT : -SIM_MEM_SAT;
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        r = b > 0 ? SIM_MEM_SAT : -SIM_MEM_SAT;
    else
        r = a + b;
#endif
    return r;
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)    ((a) < (b) ? (a) : (b))
#define MAX(a, b)    ((a) > (b) ? (a) : (b))

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh heap string; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Grow a dynamic array: ensure (*items) has room for `need` elements of `size`
 * bytes, doubling *cap as needed.
 */
void grow_array_slow(void **items, size_t *cap, size_t need, size_t size);
static inline void grow_array(void **items, size_t *cap, size_t need, size_t size)
{
    if (need > *cap)
        grow_array_slow(items, cap, need, size);
}
#define VEC_PUSH(items, count, cap, value)                                                         \
    do {                                                                                           \
        grow_array((void **)&(items), &(cap), (count) + 1, sizeof(*(items)));                      \
        (items)[(count)++] = (value);                                                              \
    } while (0)

/*
 * Arena: a bump allocator for data that lives as long as a loaded configuration
 * (STYLE.md, "Memory ownership"). arena_release() frees every block at once.
 */
struct arena_block;
struct arena {
    struct arena_block *head;
};
void arena_init(struct arena *a);
void arena_release(struct arena *a);
void *arena_alloc(struct arena *a, size_t n); /* zeroed, 16-byte aligned */
char *arena_strdup(struct arena *a, const char *s);

/* A growable NUL-terminated string. */
struct strbuf {
    char *buf;  /* always NUL-terminated once anything is added */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
};
void sb_init(struct strbuf *sb);
void sb_release(struct strbuf *sb);
void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
/* Detach the buffer (never NULL); the caller frees it. */
char *sb_detach(struct strbuf *sb);

/*
 * Write `s` as a JSON string literal (quotes, backslash, newline and other
 * control characters escaped) to f. For writers that stream JSON by hand
 * (traces, sweep and plan outputs); the structured JSON result uses cJSON.
 */
void fput_json_string(FILE *f, const char *s);

/* Read a whole file into a NUL-terminated heap buffer; NULL (errno set) on failure. */
char *read_file(const char *path, size_t *len_out);

/* Ceiling division for positive integers. */
static inline int64_t div_ceil(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Seconds (double) to integer nanoseconds, rounded up once at the edge (STYLE.md). */
sim_time ns_from_s(double seconds);

/*
 * Duration arithmetic that cannot wrap: every sum or multiple of durations (ns, >= 0) goes
 * through these, and a result beyond the clock is SIM_TIME_MAX instead of a negative or
 * small number (a saturated duration then fails the engine's SIM_STEP_LIMIT check).
 */
static inline sim_time time_add(sim_time a, sim_time b)
{
    assert(a >= 0 && b >= 0 && "durations are not negative");
#if defined(__GNUC__)
    sim_time r; /* the engine adds per event: the overflow flag, two instructions */
    return __builtin_add_overflow(a, b, &r) ? SIM_TIME_MAX : r;
#else
    return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
#endif
}

/* t * n for a count n >= 0, saturating. */
static inline sim_time time_mul(sim_time t, int64_t n)
{
    assert(t >= 0 && n >= 0 && "durations are not negative");
    return n > 0 && t > SIM_TIME_MAX / n ? SIM_TIME_MAX : t * n;
}

/* t scaled by f >= 0, rounded to the nearest ns (halves up), saturating. */
static inline sim_time time_scale(sim_time t, double f)
{
    double x = (double)t * f + 0.5;

    if (!(x > 0))
        return 0;
    return x >= (double)SIM_TIME_MAX ? SIM_TIME_MAX : (sim_time)x;
}

/* A duration in ns given as a double (a rate's quotient, a scaled duration), rounded up,
   saturating; 0 for a non-positive or NaN argument. */
static inline sim_time time_from_ns(double ns)
{
    if (!(ns > 0))
        return 0;
    if (ns >= (double)SIM_TIME_MAX)
        return SIM_TIME_MAX;
    return (sim_time)ceil(ns);
}

/* A small deterministic PRNG (splitmix64) for tests and benchmarks; never seeded by time. */
uint64_t rng_next(uint64_t *state);
double rng_uniform(uint64_t *state); /* [0, 1) */

#endif
