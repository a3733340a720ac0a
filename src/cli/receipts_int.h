/* SPDX-License-Identifier: BSD-2-Clause */
/* receipts_int.h (cli): what the `probity receipts` command files
 * (receipts.c, receipts_diff.c) share: their options and the store and
 * generation lookups. Private to src/cli. */
#ifndef PROBITY_CLI_RECEIPTS_INT_H
#define PROBITY_CLI_RECEIPTS_INT_H

#include <stdbool.h>
#include "common/digest.h"
#include "receipts/store.h"

struct ropts {
	const char *store;
	const char *generation;
	long min_age;
	bool dry_run;
	const char *at, *link;
};

/* Parse the options shared by every receipts command; returns the index
 * of the first positional argument or -1 (usage error) / -2 (help). */
int receipts_parse_opts(int argc, char **argv, struct ropts *o);
int receipts_open_store(const struct ropts *o, struct pb_store **s);
int receipts_resolve(struct pb_store *s, const char *what, char gen[PB_DIGEST_HEX_LEN],
		     char rec[PB_DIGEST_HEX_LEN]);
int cmd_receipts_diff(int argc, char **argv);

#endif
