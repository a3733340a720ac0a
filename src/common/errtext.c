/* SPDX-License-Identifier: BSD-2-Clause */
/* errtext.c: filling a parser's error text (errtext.h). */
#include <stdarg.h>
#include <stdio.h>
#include "common/errtext.h"

void pb_errtext__set(struct pb_errtext *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

void pb_errtext__set_at(struct pb_errtext *e, int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}
