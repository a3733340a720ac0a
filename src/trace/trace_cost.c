// SPDX-License-Identifier: BSD-2-Clause
/* trace_cost.c: the TRACE_CHUNK_COST payload (trace.h): the calibrated cost
 * per site class and the overhead estimated per descriptor. Sizes are
 * stored, so a newer writer's longer entries still read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "trace/trace_int.h"

int trace_cost__encode(const struct trace_cost_hdr *h, const struct trace_cost_class *cls,
		       const struct trace_cost_desc *desc, void **buf, size_t *len)
{
	struct trace_cost_hdr hh = *h;
	size_t cl = (size_t)h->n_classes * sizeof(*cls), dl = (size_t)h->n_desc * sizeof(*desc);
	uint8_t *b;

	hh.class_size = sizeof(*cls);
	hh.desc_size = sizeof(*desc);
	*len = sizeof(hh) + cl + dl;
	b = malloc(*len);
	if (!b)
		return -ENOMEM;
	memcpy(b, &hh, sizeof(hh));
	if (cl)
		memcpy(b + sizeof(hh), cls, cl);
	if (dl)
		memcpy(b + sizeof(hh) + cl, desc, dl);
	*buf = b;
	return 0;
}

int trace_cost__decode(const void *buf, size_t len, struct trace_item *it,
		       struct trace_cost_desc **store)
{
	const uint8_t *b = buf;
	struct trace_cost_hdr h;
	struct trace_cost_desc *d;
	size_t i, n, csz, dsz, need;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, b, sizeof(h));
	if (!h.class_size || h.class_size > 4096 || !h.desc_size || h.desc_size > 4096 ||
	    h.n_classes > 64 || h.n_desc > (1u << 24))
		return -EBADMSG;
	need = sizeof(h) + (size_t)h.n_classes * h.class_size + (size_t)h.n_desc * h.desc_size;
	if (len < need)
		return -EBADMSG;
	memset(it->cost_classes, 0, sizeof(it->cost_classes));
	n = h.n_classes < TRACE_COST_CLASSES ? h.n_classes : TRACE_COST_CLASSES;
	csz = h.class_size < sizeof(it->cost_classes[0]) ? h.class_size : sizeof(it->cost_classes[0]);
	for (i = 0; i < n; i++)
		memcpy(&it->cost_classes[i], b + sizeof(h) + i * h.class_size, csz);
	d = realloc(*store, ((size_t)h.n_desc + 1) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	*store = d;
	memset(d, 0, ((size_t)h.n_desc + 1) * sizeof(*d));
	dsz = h.desc_size < sizeof(*d) ? h.desc_size : sizeof(*d);
	for (i = 0; i < h.n_desc; i++)
		memcpy(&d[i], b + sizeof(h) + (size_t)h.n_classes * h.class_size + i * h.desc_size,
		       dsz);
	h.n_classes = (uint32_t)n;
	h.class_size = sizeof(it->cost_classes[0]);
	h.desc_size = sizeof(*d);
	it->cost = h;
	it->cost_desc = d;
	return 0;
}
