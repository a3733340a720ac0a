/* SPDX-License-Identifier: BSD-2-Clause */
/* traffic.c: the traffic `probity rejit` drives through the XDP device
 * (traffic.h): AF_PACKET frames from the peer, in batches every 5 ms, by
 * the mix the script selects; and the frames of the verdict check.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include "specializer/profile.h"
#include "specializer/traffic.h"

/* per 1000 packets, per mix */
static const uint16_t mix_share[SP_N_MIX][C_N] = {
	[SP_MIX_NORMAL] = { 982, 5, 5, 5, 3 },
	[SP_MIX_SHIFT] = { 500, 5, 450, 30, 15 },
};

static uint32_t xorshift(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void put16(uint8_t *p, uint16_t v) { v = htons(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htonl(v); memcpy(p, &v, 4); }

/* One frame of class c into buf (>= 128 bytes); its length. */
size_t sp_build_frame(uint8_t *buf, int c, const struct lb_cfg *cfg, const uint8_t *dmac,
		      const uint8_t *smac, uint32_t *rnd)
{
	uint8_t *ip = buf + 14, *l4 = ip + 20;
	uint32_t saddr = 0x0a010000 | (xorshift(rnd) & 0xffff);

	memset(buf, 0, 128);
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	if (c == C_ARP) {
		put16(buf + 12, ETH_P_ARP);
		put16(buf + 14, 1);
		put16(buf + 16, ETH_P_IP);
		buf[18] = 6;
		buf[19] = 4;
		put16(buf + 20, 1);
		return 14 + 28;
	}
	put16(buf + 12, ETH_P_IP);
	if (c == C_SHORT_IP)
		return 14;
	ip[0] = c == C_IHL6 ? 0x46 : 0x45;
	ip[8] = 64;
	ip[9] = c == C_TCP ? 6 : 17;
	if (c == C_BLOCKED)
		saddr = (cfg->acl_prefix & 0xffffff00) | (xorshift(rnd) & 0xff);
	put32(ip + 12, saddr);
	put32(ip + 16, 0x0a000002);
	if (c == C_TRUNC_UDP) {
		put16(ip + 2, 20);
		return 34;
	}
	if (c == C_IHL6)
		l4 += 4;
	put16(l4, (uint16_t)(1024 + (xorshift(rnd) & 0x7fff)));
	put16(l4 + 2, c == C_TCP ? 80 : c == C_OTHER ? 53 : (uint16_t)cfg->vip_port);
	if (c == C_TCP) {
		l4[12] = 5 << 4;
		put16(ip + 2, 40);
		return 14 + 40;
	}
	put16(l4 + 4, 8 + 18);
	put16(ip + 2, (uint16_t)(l4 - ip + 8 + 18));
	return (size_t)(l4 - buf) + 8 + 18;
}

void *sp_traffic_main(void *arg)
{
	struct specializer *r = arg;
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = r->peer_ifindex,
				  .sll_halen = 6 };
	uint32_t rnd = 0x9e3779b9u ^ (uint32_t)getpid();
	struct timespec next;
	double carry = 0;
	uint8_t buf[128];

	memcpy(to.sll_addr, r->dev_mac, 6);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&r->traffic_stop)) {
		const uint16_t *share = mix_share[atomic_load(&r->mix)];
		struct lb_cfg cfg;
		int i, n;

		sp_cfg_read(r, &cfg);
		carry += r->o.rate_pps / 200.0;	/* a batch every 5 ms */
		n = (int)carry;
		carry -= n;
		for (i = 0; i < n; i++) {
			uint32_t pick = xorshift(&rnd) % 1000, acc = 0;
			int c;
			size_t len;

			for (c = 0; c < C_N - 1; c++) {
				acc += share[c];
				if (pick < acc)
					break;
			}
			len = sp_build_frame(buf, c, &cfg, r->dev_mac, r->peer_mac, &rnd);
			if (sendto(r->pkt_fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
				atomic_fetch_add(&r->send_errors, 1);
			else
				atomic_fetch_add(&r->sent, 1);
		}
		next.tv_nsec += 5 * 1000 * 1000;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}
