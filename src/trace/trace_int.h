/* SPDX-License-Identifier: BSD-2-Clause */
/* trace_int.h: helpers private to src/trace/ (the cost chunk's encoding,
 * trace_cost.c, used by the writer and reader in trace.c). */
#ifndef PROBITY_TRACE_INT_H
#define PROBITY_TRACE_INT_H

#include <stddef.h>
#include "trace/trace.h"

/* The TRACE_CHUNK_COST payload in a new buffer (*buf, *len). 0 or -ENOMEM. */
int trace_cost__encode(const struct trace_cost_hdr *h, const struct trace_cost_class *cls,
		       const struct trace_cost_desc *desc, void **buf, size_t *len);
/* Decode a payload into it->cost*, the entries copied into *store
 * (realloc'd). 0, -EBADMSG (malformed) or -ENOMEM. */
int trace_cost__decode(const void *buf, size_t len, struct trace_item *it,
		       struct trace_cost_desc **store);

#endif
