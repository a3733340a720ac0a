/* SPDX-License-Identifier: BSD-2-Clause */
/* state.c: the bottom of the specializer (state.h): progress lines, the
 * run's clock, the site and traffic-class names, string lists.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/clock.h"
#include "specializer/state.h"

const char *const sp_site_names[LB_NSITES] = { "ipv4", "udp", "vip", "acl" };
const char *const sp_class_names[C_ALL] = { "vip", "blocked", "tcp", "udp-other", "arp",
					    "short-ipv4", "ihl6", "truncated-udp" };

void sp_progress(struct specializer *s, const char *fmt, ...)
{
	char line[512];
	int n;
	va_list ap;

	if (!s->o.progress)
		return;
	n = snprintf(line, sizeof(line), "t=%.2fs ",
		     s->t0 ? (double)(pb_mono_ns() - s->t0) / 1e9 : 0.0);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	s->o.progress(s->o.progress_ctx, line);
}

uint64_t sp_now_ms(const struct specializer *s)
{
	return s->t0 ? (pb_mono_ns() - s->t0) / NS_PER_MS : 0;
}

int sp_strs_push(struct sp_strs *l, const char *str)
{
	char *c;
	int err;

	err = PB_ARRAY_RESERVE_ONE(l->v, l->n, l->cap);
	if (err)
		return err;
	c = strdup(str);
	if (!c)
		return -ENOMEM;
	l->v[l->n++] = c;
	return 0;
}

void sp_strs_release(struct sp_strs *l)
{
	while (l->n)
		free(l->v[--l->n]);
	free(l->v);
	l->v = NULL;
	l->cap = 0;
}

char *sp_dump_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	return s;
}
