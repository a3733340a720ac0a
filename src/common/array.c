/* SPDX-License-Identifier: BSD-2-Clause */
/* array.c: growable arrays (see array.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"

int pb_array_grow(void *items, size_t *cap, size_t need, size_t elem_size)
{
	void **pp = items;
	size_t ncap = *cap ? *cap : 8;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -EOVERFLOW;
		ncap *= 2;
	}
	if (elem_size && ncap > SIZE_MAX / elem_size)
		return -EOVERFLOW;
	n = realloc(*pp, ncap * elem_size);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * elem_size, 0, (ncap - *cap) * elem_size);
	*pp = n;
	*cap = ncap;
	return 0;
}
