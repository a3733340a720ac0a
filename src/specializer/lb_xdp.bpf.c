// SPDX-License-Identifier: GPL-2.0-only
/* lb_xdp.bpf.c: the XDP program `probity rejit` specializes (docs/rejit.md).
 *
 * A small classifier / UDP load balancer: non-IPv4 frames get the
 * configured default verdict; IPv4 UDP to the service port (the VIP
 * traffic) is optionally filtered by a blocked source /24 (feature_acl),
 * given a backend by a hash of the source address and port, optionally
 * counted per backend (feature_stats) and bounced (XDP_TX) to the
 * backend's MAC address (02:00:00:00:00:<backend>); everything
 * else passes. Every profiled branch increments one counter per side
 * (struct lb_prof), so the specializer can find the branch in the
 * bytecode and measure its bias. The configuration is read through
 * volatile loads of a global in .data.cfg: each read is one
 * `ld_imm64 map_value + ldx` that constant inlining can replace.
 * No bpf-to-bpf calls (everything __always_inline): the specializer
 * rewrites one flat instruction array.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "specializer/lb_xdp.h"

#define ETH_P_IP 0x0800
#define IPPROTO_UDP_ 17

struct lb_cfg lb_cfg SEC(".data.cfg") = {
	.tag = LB_CFG_TAG,
	.version = LB_VERSION,
	.feature_acl = 1,
	.feature_stats = 1,
	.n_backends = 4,
	.vip_port = 4242,
	.acl_prefix = 0x0a0b0c00,	/* 10.11.12.0/24 */
	.default_verdict = XDP_PASS,
};

struct lb_prof lb_prof;

/* the guard fallback: slot 0 holds the generic generation */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lb_fallback SEC(".maps");

#define CFG(f) (*(volatile __u32 *)&lb_cfg.f)
#define COUNT(p) __sync_fetch_and_add(&(p), 1)

static __always_inline int verdict(int v)
{
	COUNT(lb_prof.verdict[v]);
	return v;
}

SEC("xdp")
int lb_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u32 saddr, h, b;

	if ((void *)(eth + 1) > data_end)
		return verdict(XDP_DROP);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		COUNT(lb_prof.site[LB_SITE_IPV4][0]);
	} else {
		COUNT(lb_prof.site[LB_SITE_IPV4][1]);
		return verdict(CFG(default_verdict) & 3);
	}
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return verdict(XDP_DROP);
	if (ip->protocol == IPPROTO_UDP_) {
		COUNT(lb_prof.site[LB_SITE_UDP][0]);
	} else {
		COUNT(lb_prof.site[LB_SITE_UDP][1]);
		return verdict(XDP_PASS);
	}
	udp = (void *)(ip + 1);	/* options are not supported: ihl must be 5 */
	if ((void *)(udp + 1) > data_end || ip->ihl != 5)
		return verdict(XDP_DROP);
	if (bpf_ntohs(udp->dest) == CFG(vip_port)) {
		COUNT(lb_prof.site[LB_SITE_VIP][0]);
	} else {
		COUNT(lb_prof.site[LB_SITE_VIP][1]);
		return verdict(XDP_PASS);
	}
	saddr = bpf_ntohl(ip->saddr);
	if (CFG(feature_acl)) {
		if ((saddr & 0xffffff00) == CFG(acl_prefix)) {
			COUNT(lb_prof.site[LB_SITE_ACL][0]);
			return verdict(XDP_DROP);
		} else {
			COUNT(lb_prof.site[LB_SITE_ACL][1]);
		}
	}
	h = saddr * 0x9e3779b1u ^ (__u32)udp->source * 0x85ebca6bu;
	h ^= h >> 15;
	b = h % (CFG(n_backends) ?: 1);
	if (CFG(feature_stats) && b < LB_MAX_BACKENDS) {
		COUNT(lb_prof.backend_pkts[b]);
		__sync_fetch_and_add(&lb_prof.backend_bytes[b], (__u64)(data_end - data));
	}
	/* to the backend's MAC, 02:00:00:00:00:<b>; only after every
	 * decision, so a guard that reruns the packet in the generic
	 * program hands it over unmodified */
	eth->h_dest[0] = 0x02;
	eth->h_dest[1] = eth->h_dest[2] = eth->h_dest[3] = eth->h_dest[4] = 0;
	eth->h_dest[5] = (__u8)b;
	return verdict(XDP_TX);
}

char LICENSE[] SEC("license") = "GPL";
