/* runtime_int.h: what the parts of `probity rejit`'s runtime share
 * (runtime.c: setup, loop, swaps, summary; traffic.c: namespace and
 * traffic; candidate.c: rewrite, verdict check, receipt). Not an API.
 */
#ifndef PROBITY_REJIT_RUNTIME_INT_H
#define PROBITY_REJIT_RUNTIME_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <linux/types.h>
#include "probity/receipts.h"
#include "rejit/lb_xdp.h"
#include "rejit/runtime.h"
#include "rejit/script.h"

#define NS_PER_MS 1000000ull
#define OPTIMIZER_NAME "probity-rejit"

struct lb_xdp_bpf;
struct bpf_insn;

extern const char *const rt_site_names[LB_NSITES];

/* traffic classes */
enum { C_VIP, C_BLOCKED, C_TCP, C_OTHER, C_ARP, C_N,
       /* probe-only frames for the verdict check */
       C_SHORT_IP = C_N, C_IHL6, C_TRUNC_UDP, C_ALL };
extern const char *const rt_class_names[C_ALL];

struct rj_gen {
	int ordinal;
	bool generic, logged, closed, spiked;
	struct pb_generation *g;
	int fd;			/* -1 once closed (generation 0: the skeleton's) */
	uint32_t prog_id;
	uint32_t insns;
	uint32_t spec_mask, hot_mask;	/* sites specialized; hot side taken */
	uint32_t cfg_epoch;
	struct lb_cfg cfg;	/* the configuration it inlined */
	json_t *transforms, *assumptions, *retired, *equivalence;
	int activations;
	uint64_t run_cnt, run_time_ns;
	uint64_t loaded_ms;
};

struct rejit {
	struct rejit_opts o;
	struct pb_store *store;
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
	struct rj_gen *gens;
	size_t n_gens, cap_gens;
	struct rj_gen *active;
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
	json_t *swaps, *epochs, *steps_done;
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
};

struct plan {
	uint32_t spec_mask, hot_mask;
	bool spike;
	uint64_t taken[LB_NSITES], not_taken[LB_NSITES];
};

/* runtime.c */
void rt_progress(struct rejit *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_cfg_read(struct rejit *r, struct lb_cfg *out);
uint32_t rt_cfg_get(const struct lb_cfg *c, uint32_t field);
json_t *rt_cfg_json(const struct lb_cfg *c);
void rt_prof_read(struct rejit *r, struct lb_prof *out);
uint64_t rt_guard_total(const struct lb_prof *p);
struct rj_gen *rt_gen_add(struct rejit *r);
/* Swap `to` in for the active generation; reason: why the active one goes. */
int rt_activate(struct rejit *r, struct rj_gen *to, const char *reason);
/* Close a generation no longer attached; log its unload. */
void rt_gen_close(struct rejit *r, struct rj_gen *g);

/* traffic.c */
/* netns and device names: 1-15 of [A-Za-z0-9_.-], not starting with - or . */
bool rt_name_ok(const char *s);
int rt_netns_setup(struct rejit *r, char *err, size_t errsz);
void rt_netns_teardown(struct rejit *r);
/* One frame of class c into buf (>= 128 bytes); its length. */
size_t rt_build_frame(uint8_t *buf, int c, const struct lb_cfg *cfg, const uint8_t *dmac,
		      const uint8_t *smac, uint32_t *rnd);
void *rt_traffic_main(void *arg);

/* candidate.c */
/* Rewrite generation 0 by plan, load, check verdicts, record, swap. */
int rt_specialize(struct rejit *r, const struct plan *pl);
/* json_dumps (sorted, compact) and decref */
char *rt_dump_json(json_t *j);

#endif
