/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* lb_xdp.h: records shared by the rejit XDP program (lb_xdp.bpf.c) and
 * its specializer (src/specializer/): the configuration (a global in its own
 * data section, .data.cfg, so every read compiles to
 * `ld_imm64 map_value(cfg)+off; ldx`) and the profile (per-site branch
 * counters, guard failures, verdicts) in .bss. Fixed-width fields only;
 * each starts with a type tag and a version.
 */
#ifndef PROBITY_SPECIALIZER_LB_XDP_H
#define PROBITY_SPECIALIZER_LB_XDP_H

#define LB_CFG_TAG	0x4c424346u	/* "LBCF" */
#define LB_PROF_TAG	0x4c425046u	/* "LBPF" */
#define LB_VERSION	1
#define LB_MAX_BACKENDS	8

/* Profiled branch sites: counter [site][0] counts "taken" (the condition
 * held), [site][1] "not taken". */
enum lb_site {
	LB_SITE_IPV4 = 0,	/* ethertype is IPv4 */
	LB_SITE_UDP = 1,	/* IPv4 protocol is UDP */
	LB_SITE_VIP = 2,	/* UDP destination port is the service port */
	LB_SITE_ACL = 3,	/* source is in the blocked /24 (feature_acl) */
	LB_NSITES = 4,
};

struct lb_cfg {
	__u32 tag;		/* LB_CFG_TAG */
	__u32 version;		/* LB_VERSION */
	__u32 feature_acl;	/* 1: drop UDP from acl_prefix/24 */
	__u32 feature_stats;	/* 1: count packets and bytes per backend */
	__u32 n_backends;	/* 1..LB_MAX_BACKENDS */
	__u32 vip_port;		/* UDP destination port of the service, host order */
	__u32 acl_prefix;	/* blocked source /24, host order (a.b.c.0) */
	__u32 default_verdict;	/* verdict for non-IPv4 frames */
};

struct lb_prof {
	__u32 tag;		/* LB_PROF_TAG, set by user space */
	__u32 version;
	__u64 site[LB_NSITES][2];
	__u64 guard_fail[LB_NSITES];	/* written by specialized generations only */
	__u64 fallback_failed;		/* tail call into the generic generation failed */
	__u64 verdict[5];		/* XDP_ABORTED..XDP_REDIRECT */
	__u64 backend_pkts[LB_MAX_BACKENDS];
	__u64 backend_bytes[LB_MAX_BACKENDS];
};

#endif
