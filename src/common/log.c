/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c: the levelled print callback behind pr_err()/pr_warn()/... */
#include <stdio.h>
#include "common/log.h"

static enum pb_log_level max_level = PB_LOG_WARN;
static pb_print_fn_t print_fn = pb_default_print;

pb_print_fn_t pb_set_print(pb_print_fn_t fn)
{
	pb_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void pb_set_log_level(enum pb_log_level level)
{
	max_level = level;
}

int pb_default_print(enum pb_log_level level, const char *fmt, va_list ap)
{
	if (level > max_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void pb_log(enum pb_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}
