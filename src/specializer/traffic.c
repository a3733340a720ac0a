/* traffic.c: the network namespace of `probity rejit` (created with a
 * veth pair, or an existing one) and the traffic it drives through the
 * XDP device: AF_PACKET frames from the peer, in batches every 5 ms, by
 * the mix the script selects; and the frames of the verdict check.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "rejit/runtime_int.h"

/* per 1000 packets, per mix */
static const uint16_t mix_share[RJ_N_MIX][C_N] = {
	[RJ_MIX_NORMAL] = { 982, 5, 5, 5, 3 },
	[RJ_MIX_SHIFT] = { 500, 5, 450, 30, 15 },
};


static int run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_cmd(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == 0 ? 0 : -EIO;
}

bool rt_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n < 16 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n &&
	       s[0] != '-' && s[0] != '.';
}

static int get_mac(int sock, const char *dev, uint8_t mac[6])
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(sock, SIOCGIFHWADDR, &ifr))
		return -errno;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

int rt_netns_setup(struct rejit *r, char *err, size_t errsz)
{
	char path[128];
	int fd, e = 0;

	if (r->o.netns) {
		snprintf(r->netns, sizeof(r->netns), "%s", r->o.netns);
	} else {
		snprintf(r->netns, sizeof(r->netns), "pbrejit%d", (int)getpid());
		if (run_cmd("ip netns add %s && ip -n %s link add %s type veth peer name %s && "
			    "ip -n %s link set %s up && ip -n %s link set %s up",
			    r->netns, r->netns, r->o.dev, r->o.peer, r->netns, r->o.dev, r->netns,
			    r->o.peer)) {
			run_cmd("ip netns del %s 2>/dev/null", r->netns);
			snprintf(err, errsz, "cannot create network namespace %s with veth %s/%s "
				 "(ip netns add / ip link add failed)", r->netns, r->o.dev, r->o.peer);
			return -EIO;
		}
		r->created_ns = true;
	}
	r->orig_ns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/var/run/netns/%s", r->netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || r->orig_ns_fd < 0 || setns(fd, CLONE_NEWNET)) {
		e = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errsz, "cannot enter network namespace %s (%s): %s", r->netns, path,
			 strerror(-e));
		return e;
	}
	close(fd);
	r->ifindex = (int)if_nametoindex(r->o.dev);
	r->peer_ifindex = (int)if_nametoindex(r->o.peer);
	if (!r->ifindex || !r->peer_ifindex) {
		snprintf(err, errsz, "network namespace %s has no device %s or %s", r->netns,
			 r->o.dev, r->o.peer);
		return -ENODEV;
	}
	r->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (r->pkt_fd < 0 || (e = get_mac(r->pkt_fd, r->o.dev, r->dev_mac)) ||
	    (e = get_mac(r->pkt_fd, r->o.peer, r->peer_mac))) {
		e = r->pkt_fd < 0 ? -errno : e;
		snprintf(err, errsz, "cannot open a packet socket on %s: %s", r->o.peer, strerror(-e));
		return e;
	}
	return 0;
}

void rt_netns_teardown(struct rejit *r)
{
	if (r->pkt_fd > 0) {
		close(r->pkt_fd);
		r->pkt_fd = -1;
	}
	if (r->orig_ns_fd >= 0) {
		if (setns(r->orig_ns_fd, CLONE_NEWNET)) { /* delete it anyway */ }
		close(r->orig_ns_fd);
		r->orig_ns_fd = -1;
	}
	if (r->created_ns) {
		run_cmd("ip netns del %s 2>/dev/null", r->netns);
		r->created_ns = false;
	}
}

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
size_t rt_build_frame(uint8_t *buf, int c, const struct lb_cfg *cfg, const uint8_t *dmac,
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

void *rt_traffic_main(void *arg)
{
	struct rejit *r = arg;
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

		rt_cfg_read(r, &cfg);
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
			len = rt_build_frame(buf, c, &cfg, r->dev_mac, r->peer_mac, &rnd);
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
