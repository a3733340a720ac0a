/* SPDX-License-Identifier: BSD-2-Clause */
/* errtext.c: filling a parser's error text (errtext.h). */
#include <stdarg.h>
#include <stdio.h>
#include "attribute/errtext.h"

void attr_errtext__set(struct attr_errtext *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}
