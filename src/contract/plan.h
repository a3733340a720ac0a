/* SPDX-License-Identifier: BSD-2-Clause */
/* plan.h: compile a manifest into an attach plan.
 *
 * The plan binds every event descriptor of a manifest to concrete probe
 * sites in concrete files: it checks the target's GNU build-id (refusing a
 * mismatch unless asked to re-bind by symbol name), resolves symbol+offset
 * to a file offset, verifies with Capstone that the offset starts an
 * instruction inside the function, resolves USDT notes, and groups sites
 * into the fewest uprobe_multi links, each site carrying a cookie that
 * indexes the descriptor table (descriptor index = event index in the
 * manifest). The plan never needs application-specific BPF code: anything
 * that cannot be expressed is a refusal naming the descriptor and why.
 */
#ifndef PROBITY_PLAN_H
#define PROBITY_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "contract/manifest.h"
#include "common/diag.h"
#include "elf/insn.h"

struct plan_opts {
	/* "PATH" (single target, or the target whose binary basename
	 * matches) or "ID=PATH", up to PLAN_MAX_BINARY_OVERRIDES */
	const char **binaries;
	size_t n_binaries;
	pid_t pid;		/* resolve targets in this process's mappings */
	bool rebind;		/* on build-id mismatch, re-resolve by symbol name */
};

enum plan_link_type {
	PLAN_LINK_UPROBE_MULTI = 0,	/* entry probes */
	PLAN_LINK_URETPROBE_MULTI,	/* return probes */
	PLAN_LINK_USDT,			/* one libbpf USDT attachment per probe name */
};

struct plan_target {
	int manifest_idx;		/* index into manifest->targets */
	char *path;			/* file that will be probed (absolute) */
	char *display_path;		/* as the user would recognise it */
	char build_id_found[2 * PB_BUILD_ID_MAX + 1];	/* hex; "" if none */
	char build_id_expected[2 * PB_BUILD_ID_MAX + 1];
	bool build_id_match;
	bool rebound;			/* mismatch accepted under --rebind */
	bool resolved;			/* a file was found and opened */
};

struct plan_site {
	int descriptor;			/* event index in the manifest */
	int target;			/* index into plan->targets */
	bool retprobe;			/* at function return */
	bool usdt;
	uint64_t vaddr;			/* link-time address of the site */
	uint64_t file_offset;		/* what the uprobe is attached at */
	uint64_t sym_vaddr;		/* symbol start (symbol sites) */
	uint64_t offset;		/* from the symbol start */
	uint64_t ref_ctr_offset;	/* USDT semaphore file offset, 0 if none */
	char *usdt_args;		/* USDT argument spec, NULL for symbols */
	int link;			/* index into plan->links */
	uint64_t cookie;		/* descriptor index (see PLAN_COOKIE_*) */
	uint32_t insn_len;		/* first instruction at the site (symbols) */
	enum insn_exec exec;		/* how the kernel runs it: the site's cost
					 * class (engine/calib.h); UNKNOWN for USDT */
	char insn_text[96];
	char *note;			/* e.g. "5-byte nop: can be optimized" */
};

struct plan_link {
	enum plan_link_type type;
	int target;
	size_t n_sites;
	int descriptor;			/* USDT: the one descriptor; -1 otherwise */
	/* for USDT: provider/name of the probe */
	char *usdt_provider;
	char *usdt_name;
};

enum plan_desc_status {
	PLAN_DESC_OK = 0,
	PLAN_DESC_REFUSED,
};

struct plan_descriptor {
	int event;			/* index in manifest->events */
	enum pb_confidence confidence;	/* effective: degraded when rebound */
	enum plan_desc_status status;
	char *reason;			/* why refused; NULL when OK */
	size_t n_sites;
};

struct plan {
	const struct manifest *manifest;	/* not owned */
	struct plan_target *targets;
	size_t n_targets;
	struct plan_descriptor *descriptors;	/* one per manifest event */
	size_t n_descriptors;
	struct plan_site *sites;		/* sorted by link, then file offset */
	size_t n_sites;
	struct plan_link *links;
	size_t n_links;
	size_t n_refused;
	pid_t pid;
	struct diags *notes;			/* warnings and refusals, positioned
						 * at the manifest line that caused them */
};

/* Cookie layout: the low 32 bits are the descriptor index; bit 32 marks a
 * return-probe site (a WAIT span's end, or an `at: return` event). */
#define PLAN_COOKIE_DESC_MASK	0xffffffffULL
#define PLAN_COOKIE_RETURN	(1ULL << 32)
/* Bit 33 marks an entry site that only saves the arguments for an
 * `at: return` event that reads argN (registers are clobbered at return). */
#define PLAN_COOKIE_STASH	(1ULL << 33)

/* Build the plan. Returns 0 when every descriptor has its sites,
 * -EPERM when some descriptors were refused (the plan is still returned,
 * with the refusals in plan->notes and descriptor reasons), or another
 * -errno when no plan could be made (*out NULL, reason in diags). */
int plan__build(const struct manifest *m, const struct plan_opts *opts,
		struct plan **out, struct diags *diags);
void plan__free(struct plan *p);

void plan__print(const struct plan *p, FILE *out);
json_t *plan__to_json(const struct plan *p);

const char *plan_link_type_str(enum plan_link_type t);
/* A site's cost class (docs/record.md "COST MODEL"): "emulated",
 * "single-step", "nop5", "return" or "usdt" (engine/calib.h measures them). */
const char *plan_site_cost_class(const struct plan_site *s);

#endif
