/* SPDX-License-Identifier: BSD-2-Clause */
/* log.h: one levelled print callback for the whole program (the
 * libbpf_set_print pattern). Library code never prints directly.
 */
#ifndef PROBITY_LOG_H
#define PROBITY_LOG_H

#include <stdarg.h>

enum pb_log_level {
	PB_LOG_ERROR = 0,
	PB_LOG_WARN,
	PB_LOG_INFO,
	PB_LOG_DEBUG,
};

typedef int (*pb_print_fn_t)(enum pb_log_level level, const char *fmt, va_list ap);

/* Install a print callback; returns the previous one. NULL silences. */
pb_print_fn_t pb_set_print(pb_print_fn_t fn);
/* Default callback: writes to stderr, filtered by pb_set_log_level(). */
int pb_default_print(enum pb_log_level level, const char *fmt, va_list ap);
void pb_set_log_level(enum pb_log_level max_level);

void pb_log(enum pb_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(fmt, ...)   pb_log(PB_LOG_ERROR, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)  pb_log(PB_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  pb_log(PB_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) pb_log(PB_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif
