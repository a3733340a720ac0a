/* SPDX-License-Identifier: BSD-2-Clause */
/* state.h: the specializer's state, shared by its files (not an API).
 *
 * Files and who uses whom (each only includes what is below it):
 *
 *   runtime.c     setup, the loop, stop                 (top)
 *   summary.c     the typed summary and its JSON
 *   candidate.c   load, verdict check, receipt, swap of one plan
 *   rewrite.c     plan -> instructions + receipt steps (src/bpfrewrite/)
 *   traffic.c     frames and the traffic thread
 *   netns.c       the network namespace and its devices
 *   generation.c  generations: add, activate (swap), close, deopt
 *   profile.c     configuration and profile maps, program stats
 *   state.c       progress lines, clock, names, string lists (bottom)
 */
#ifndef PROBITY_SPECIALIZER_STATE_H
#define PROBITY_SPECIALIZER_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <linux/types.h>
#include "probity/receipts.h"
#include "specializer/lb_xdp.h"
#include "specializer/script.h"
#include "specializer/specializer.h"

_Static_assert(SP_NSITES == LB_NSITES, "specializer.h's SP_NSITES is lb_xdp.h's LB_NSITES");

#define NS_PER_MS 1000000ull
#define OPTIMIZER_NAME "probity-rejit"

struct lb_xdp_bpf;
struct bpf_insn;

extern const char *const sp_site_names[LB_NSITES];

/* traffic classes */
enum { C_VIP, C_BLOCKED, C_TCP, C_OTHER, C_ARP, C_N,
       /* probe-only frames for the verdict check */
       C_SHORT_IP = C_N, C_IHL6, C_TRUNC_UDP, C_ALL };
extern const char *const sp_class_names[C_ALL];

struct sp_gen {
	int ordinal;
	bool generic, logged, closed, spiked;
	struct pb_generation *g;
	int fd;			/* -1 once closed (generation 0: the skeleton's) */
	uint32_t prog_id;
	uint32_t insns;
	uint32_t spec_mask, hot_mask;	/* sites specialized; hot side taken */
	uint32_t cfg_epoch;
	struct lb_cfg cfg;	/* the configuration it inlined */
	struct sp_strs transforms, assumptions, retired;
	json_t *equivalence;
	int activations;
	uint64_t run_cnt, run_time_ns;
	uint64_t loaded_ms;
};

struct specializer {
	struct specializer_opts o;
	struct pb_store *store;
	unsigned int sync_errors;		/* group commit syncs that failed */
	struct lb_xdp_bpf *skel;		/* lb_xdp.skel.h */
	/* the kernel's .data.cfg and .bss, mapped after load (the skeleton's
	 * pointers are libbpf 1.4's pre-load copies when the object is loaded
	 * by pb_generation__load rather than the skeleton's load) */
	struct lb_cfg *cfg_map;
	struct lb_prof *prof_map;
	size_t cfg_map_sz, prof_map_sz;
	char optimizer_build_id[64];
	char source_id[80];
	/* namespace */
	char netns[64];
	bool created_ns;
	int orig_ns_fd;
	int ifindex, peer_ifindex;
	uint8_t dev_mac[6], peer_mac[6];
	int link_fd;
	int stats_fd;
	/* generations */
	struct sp_gen *gens;
	size_t n_gens, cap_gens;
	struct sp_gen *active;
	struct bpf_insn *generic_insns;
	size_t generic_n;
	/* loop state */
	uint64_t t0;
	uint32_t epoch, cfg_epoch;
	uint64_t window_start;		/* CLOCK_MONOTONIC start of the epoch */
	struct lb_prof base;		/* profile baseline (start of the epoch) */
	struct lb_prof last_prof;	/* the counters when the run stopped */
	uint64_t guard_base;		/* guard failures at the start of the window */
	uint32_t handoffs, n_specialized, rejected, deopts;
	struct sp_swap *swaps;
	size_t n_swaps, cap_swaps;
	struct sp_epoch_plan *epochs;
	size_t n_epochs, cap_epochs;
	struct sp_step_done *steps_done;
	size_t n_steps_done, cap_steps_done;
	char *last_profile;		/* JSON of the last clean epoch */
	uint32_t last_profile_epoch;
	/* traffic */
	pthread_t traffic;
	bool traffic_started;
	atomic_int traffic_stop;
	atomic_int mix;
	atomic_ullong sent, send_errors;
	int pkt_fd;
	bool stopped;
	/* specializer__summary's storage */
	struct sp_summary summary;
	struct sp_gen_summary *summary_gens;
};

/* What one epoch's profile asks for (runtime.c -> candidate.c). */
struct spec_plan {
	uint32_t spec_mask, hot_mask;
	bool spike;
	uint64_t taken[LB_NSITES], not_taken[LB_NSITES];
};

/* state.c */
/* A progress line ("t=1.23s ...") through opts.progress. */
void sp_progress(struct specializer *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Milliseconds since the loop started (0 before). */
uint64_t sp_now_ms(const struct specializer *s);
/* Append a copy of str; 0 or -ENOMEM. */
int sp_strs_push(struct sp_strs *l, const char *str);
void sp_strs_release(struct sp_strs *l);
/* json_dumps (sorted, compact) and decref */
char *sp_dump_json(json_t *j);

#endif
