/* SPDX-License-Identifier: BSD-2-Clause */
/* array.h: growable arrays. One helper instead of a realloc dance per
 * module: pb_array_grow(&items, &cap, need, sizeof(*items)) makes room for
 * at least `need` elements (doubling, at least 8), zeroing the new tail.
 */
#ifndef PROBITY_ARRAY_H
#define PROBITY_ARRAY_H

#include <stddef.h>

/* 0, or -ENOMEM (then *items and *cap are unchanged), or -EOVERFLOW. */
int pb_array_grow(void *items, size_t *cap, size_t need, size_t elem_size);

/* Append-one convenience: room for n + 1 elements of arr. */
#define PB_ARRAY_RESERVE_ONE(arr, n, cap) pb_array_grow(&(arr), &(cap), (n) + 1, sizeof(*(arr)))

#endif
