/* SPDX-License-Identifier: BSD-2-Clause */
/* stop.c: one Ctrl-C / SIGTERM handling for the long-running commands
 * (record, train, watch, sample, rejit): the handler only notes the
 * signal; each command's loop polls cli_stop_signal and stops cleanly,
 * still writing what it recorded. */
#include <signal.h>
#include <string.h>
#include "cli/cli.h"

volatile sig_atomic_t cli_stop_signal;

static void on_stop(int sig)
{
	cli_stop_signal = sig;
}

void cli_stop_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void cli_stop_restore(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}
