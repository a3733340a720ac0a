/* SPDX-License-Identifier: BSD-2-Clause */
/* cli.h: what every probity subcommand shares: global flags, the command
 * table type, and error printing that becomes JSON under -j.
 */
#ifndef PROBITY_CLI_H
#define PROBITY_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

/* Exit codes (documented in probity(1), README). */
#define EXIT_OK		0	/* success, nothing found */
#define EXIT_FINDINGS	1	/* ran fine, reported findings (lint errors, refusals) */
#define EXIT_USAGE	2	/* bad usage or unreadable input */
#define EXIT_FAILURE_RT	3	/* runtime failure (BPF load/attach, I/O) */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* one line for the command list */
};

extern bool json_output;
extern bool pretty_output;
/* Under -j a command prints one JSON document; one that streams (health
 * --follow) sets this first and prints JSON Lines: one compact document
 * per json_print_and_free, as many as it needs. */
extern bool json_lines;
extern int verbose;
extern const char *bin_name;

/* Dispatch argv[0] among cmds; prints help for "help"/no command. */
int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       const char *noun, void (*help)(FILE *out));

/* Error that is plain text, or {"error": "..."} under -j. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a JSON document to stdout (pretty with --pretty) and free it. */
void json_print_and_free(json_t *doc);

/* subcommand entry points */
int do_manifest(int argc, char **argv);
int do_plan(int argc, char **argv);
int do_probes(int argc, char **argv);
int do_version(int argc, char **argv);
int do_record(int argc, char **argv);		/* src/cli/record.c */
int do_report(int argc, char **argv);		/* src/cli/report.c */
int do_export(int argc, char **argv);		/* src/cli/export.c */
int do_receipts(int argc, char **argv);		/* src/cli/receipts.c */
int cmd_receipts_export(int argc, char **argv);	/* src/cli/receipts_sign.c */
int cmd_receipts_checkpoint(int argc, char **argv);
int do_watch(int argc, char **argv);		/* src/cli/watch.c */
/* src/cli/stop.c: SIGINT/SIGTERM only set cli_stop_signal (the signal);
 * long-running commands poll it and stop cleanly */
extern volatile sig_atomic_t cli_stop_signal;
void cli_stop_install(void);
void cli_stop_restore(void);	/* back to the default actions */

int do_health(int argc, char **argv);		/* src/cli/health.c */
int do_rejit(int argc, char **argv);		/* src/cli/rejit.c */
int do_train(int argc, char **argv);		/* src/cli/train.c */
int do_sample(int argc, char **argv);		/* src/cli/sample.c */
int do_attribute(int argc, char **argv);	/* src/cli/attribute.c */
int do_agent(int argc, char **argv);		/* src/cli/agent.c */
int do_metrics(int argc, char **argv);		/* src/cli/metrics.c */
int do_script(int argc, char **argv);		/* src/cli/script.c */

#endif
