/* SPDX-License-Identifier: BSD-2-Clause */
/* summary.h: the one-line exit summary, as text or JSON. */
#ifndef DEMO_SUMMARY_H
#define DEMO_SUMMARY_H

#include <stdio.h>

#include "service.h"

#define DEMO_VERSION "0.1.0"

void summary_print_text(FILE *out, const struct service_opts *opts,
			const struct service_report *rep);
void summary_print_json(FILE *out, const struct service_opts *opts,
			const struct service_report *rep, double duration_s);

#endif /* DEMO_SUMMARY_H */
