/* prog_big.c - storage of a program's large per-task arrays (prog_internal.h). */
#if defined(__linux__)
#define _GNU_SOURCE /* mmap's MAP_ANONYMOUS, madvise's MADV_HUGEPAGE */
#endif
#include "prog/prog_internal.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <pthread.h>
#include <sys/mman.h>
#endif

#include "base/util.h"

/*
 * The flagship's four stage programs hold 221,000 tasks (64 bytes each) and 283,000
 * dependencies, and the first write to each 4 KiB page of fresh memory is a page fault: about
 * 3.5 us each on the development VM (measured: 12.5 ms to touch 14 MiB, more than building the
 * tasks takes). Arrays of BIG_MIN bytes or more therefore get an anonymous mapping of their own,
 * aligned to and advised for transparent huge pages (madvise(2) MADV_HUGEPAGE: one fault per
 * 2 MiB, 2.1 ms for the same 14 MiB; "madvise" is Debian 12's default THP mode). The kernel
 * zeroes every huge page written (about 3.5 GB/s here), so a mapping reserves BIG_ROOM of
 * address space, where the array grows in place and only the pages written cost anything, and
 * prog_seal() puts the sealed arrays after the dependency list in its mapping. Smaller arrays,
 * and systems without madvise, use malloc.
 */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define BIG_PAGE ((size_t)2 << 20) /* the huge page of x86-64 and arm64 (4 KiB granule) */
#define BIG_MIN  ((size_t)512 << 10)
#define BIG_ROOM ((size_t)16 << 20) /* address space, not memory (MAP_NORESERVE) */
#else
#define BIG_PAGE ((size_t)1)
#define BIG_MIN  SIZE_MAX
#define BIG_ROOM ((size_t)0)
#endif

static size_t big_len(size_t bytes)
{
    return (bytes + BIG_PAGE - 1) / BIG_PAGE * BIG_PAGE;
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
/*
 * Mappings freed by one thread, kept for its next programs: `validate`, `sweep` and `plan`
 * build programs of the same sizes one configuration after another, and a kept mapping's pages
 * are already faulted in and zeroed (the kernel's zeroing of fresh huge pages was 19 % of
 * `validate`: a pipeline of 64 stages maps 128 arrays, each touching at least one 2 MiB page).
 * At most BIG_KEEP mappings of at most BIG_KEEP_BYTES of address space in all per thread, so
 * what is kept is at most what the thread's largest step had mapped at once; unmapped when
 * the thread ends.
 */
#define BIG_KEEP       512
#define BIG_KEEP_BYTES ((size_t)16 << 30)

struct big_pool {
    void *p[BIG_KEEP];
    size_t len[BIG_KEEP];
    int n;
    size_t bytes;
};

static _Thread_local struct big_pool *pool;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_drop(void *arg)
{
    struct big_pool *bp = arg;

    for (int i = 0; i < bp->n; i++)
        munmap(bp->p[i], bp->len[i]);
    free(bp);
}

static void pool_key_init(void)
{
    (void)pthread_key_create(&pool_key, pool_drop);
}

/* A kept mapping of exactly `len` bytes, or NULL. */
static void *pool_take(size_t len)
{
    struct big_pool *bp = pool;

    for (int i = bp ? bp->n - 1 : -1; i >= 0; i--)
        if (bp->len[i] == len) {
            void *m = bp->p[i];
            bp->n--;
            bp->p[i] = bp->p[bp->n];
            bp->len[i] = bp->len[bp->n];
            bp->bytes -= len;
            return m;
        }
    return NULL;
}

/* Keep mapping m of `len` bytes for this thread; false when the pool is full. */
static bool pool_keep(void *m, size_t len)
{
    struct big_pool *bp = pool;

    if (!bp) {
        pthread_once(&pool_once, pool_key_init);
        bp = pool = xcalloc(1, sizeof(*bp));
        (void)pthread_setspecific(pool_key, bp); /* pool_drop() at the thread's end */
    }
    if (bp->n == BIG_KEEP || bp->bytes + len > BIG_KEEP_BYTES)
        return false;
    bp->p[bp->n] = m;
    bp->len[bp->n++] = len;
    bp->bytes += len;
    return true;
}
#endif

/* A mapping of big_len(bytes), aligned to BIG_PAGE, contents undefined (a kept one, or fresh
 * and zeroed); aborts when out of memory. */
static void *big_map(size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    size_t len = big_len(bytes);
    char *a = pool_take(len), *m;

    if (a)
        return a;
    m = mmap(NULL, len + BIG_PAGE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "simtrain: out of memory allocating %zu bytes\n", len);
        abort();
    }
    a = (char *)(((uintptr_t)m + BIG_PAGE - 1) & ~(uintptr_t)(BIG_PAGE - 1));
    if (a > m)
        munmap(m, (size_t)(a - m));
    munmap(a + len, (size_t)(m + BIG_PAGE - a)); /* the unaligned tail */
    (void)madvise(a, len, MADV_HUGEPAGE);        /* advice: without it, 4 KiB pages */
    return a;
#else
    (void)bytes;
    assert(0 && "no big mappings on this system");
    return NULL;
#endif
}

/* Free an array of `bytes` capacity allocated by big_alloc() or big_grow(); NULL is fine. */
void big_free(void *p, size_t bytes)
{
    if (!p)
        return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= BIG_MIN) {
        if (!pool_keep(p, big_len(bytes)))
            munmap(p, big_len(bytes));
        return;
    }
#endif
    free(p);
}

/* An uninitialised array of `bytes`, big or from malloc by size; free with big_free(p, bytes). */
void *big_alloc(size_t bytes)
{
    return bytes >= BIG_MIN ? big_map(bytes) : xmalloc(bytes);
}

/* grow_array() for big arrays: room for `need` elements of `size` bytes, contents kept. */
void big_grow(void **items, size_t *cap, size_t need, size_t size)
{
    size_t n = *cap ? *cap : 8;
    void *m;

    if (need <= *cap)
        return;
    while (n < need)
        n *= 2;
    if (n * size < BIG_MIN) {
        *items = xrealloc(*items, n * size);
        *cap = n;
        return;
    }
    n = big_len(MAX(n * size, BIG_ROOM)) / size; /* the whole mapping */
    m = big_map(n * size);
    if (*cap > 0)
        memcpy(m, *items, *cap * size);
    big_free(*items, *cap * size);
    *items = m;
    *cap = n;
}

bool big_is_big(size_t bytes)
{
    return bytes >= BIG_MIN;
}
