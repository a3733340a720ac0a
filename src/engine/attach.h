/* SPDX-License-Identifier: BSD-2-Clause */
/* attach.h: attach BPF programs to every link of an attach plan.
 *
 * The one place that turns a plan into kernel links: uprobe_multi links
 * (entry and return, per-site cookies and USDT-style ref counters) and
 * libbpf USDT attachments (with the descriptor index as USDT cookie). The
 * caller provides the programs; the engine (and tests) reuse this module.
 */
#ifndef PROBITY_ATTACH_H
#define PROBITY_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "contract/plan.h"

struct bpf_program;
struct attacher;

struct attacher_opts {
	struct bpf_program *entry_prog;		/* SEC("uprobe.multi") */
	struct bpf_program *return_prog;	/* SEC("uretprobe.multi") */
	struct bpf_program *usdt_prog;		/* SEC("usdt"); may be NULL when
						 * the plan has no USDT links */
	pid_t pid;				/* -1 or 0: every process */
	bool split;				/* one link per descriptor of each
						 * uprobe_multi plan link, so that
						 * attacher__set_desc() can detach
						 * one descriptor (record --budget) */
};

/* Attach every link of the plan. Returns NULL with errno set when any
 * link fails (links made so far are detached); the reason is logged
 * with the link index, its type and the target path. */
struct attacher *attacher__new(const struct plan *p, const struct attacher_opts *opts);
size_t attacher__n_links(const struct attacher *a);
/* opts.split only: detach (on = false) or re-attach every link of
 * descriptor desc; *changed = links changed. A detach returns once no
 * probe of the link runs. 0 or -errno (-EOPNOTSUPP without split). */
int attacher__set_desc(struct attacher *a, int desc, bool on, size_t *changed);
/* opts.split only: detach every link of descs[0..n_descs) at once, entry
 * and return links alike, each by its own thread; returns once no probe
 * of them runs. A call whose entry fired and whose return did not leaves
 * an argument stash: the caller drops them (engine__detach_descs).
 * *changed = links detached. 0 or -errno. */
int attacher__detach_descs(struct attacher *a, const uint32_t *descs, size_t n_descs,
			   size_t *changed);
void attacher__free(struct attacher *a);

#endif
