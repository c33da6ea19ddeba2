/*
 * prog_internal.h - private to src/prog/: storage of a program's large per-task arrays
 * (prog_big.c). Arrays of a few hundred KiB or more get an anonymous mapping of their own,
 * advised for transparent huge pages and kept per thread for the next program; smaller ones
 * come from malloc. Nothing outside the folder includes this.
 */
#ifndef SIMTRAIN_PROG_INTERNAL_H
#define SIMTRAIN_PROG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* An uninitialised array of `bytes`, big or from malloc by size; free with big_free(p, bytes). */
void *big_alloc(size_t bytes);
/* Free an array of `bytes` capacity allocated by big_alloc() or big_grow(); NULL is fine. */
void big_free(void *p, size_t bytes);
/* grow_array() for big arrays: room for `need` elements of `size` bytes, contents kept. */
void big_grow(void **items, size_t *cap, size_t need, size_t size);
/* Does an array of `bytes` get a mapping of its own (big_alloc, big_grow)? */
bool big_is_big(size_t bytes);

#endif
