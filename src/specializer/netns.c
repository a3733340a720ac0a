/* SPDX-License-Identifier: BSD-2-Clause */
/* netns.c: the network namespace of `probity rejit` (netns.h): created
 * with a veth pair, or an existing one; entered for the run, left (and
 * deleted if created) at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "common/log.h"
#include "specializer/netns.h"

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

bool sp_name_ok(const char *s)
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

int sp_netns__setup(struct specializer *r)
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
			pr_err("cannot create network namespace %s with veth %s/%s "
			       "(ip netns add / ip link add failed)\n", r->netns, r->o.dev, r->o.peer);
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
		pr_err("cannot enter network namespace %s (%s): %s\n", r->netns, path,
		       strerror(-e));
		return e;
	}
	close(fd);
	r->ifindex = (int)if_nametoindex(r->o.dev);
	r->peer_ifindex = (int)if_nametoindex(r->o.peer);
	if (!r->ifindex || !r->peer_ifindex) {
		pr_err("network namespace %s has no device %s or %s\n", r->netns, r->o.dev,
		       r->o.peer);
		return -ENODEV;
	}
	r->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (r->pkt_fd < 0 || (e = get_mac(r->pkt_fd, r->o.dev, r->dev_mac)) ||
	    (e = get_mac(r->pkt_fd, r->o.peer, r->peer_mac))) {
		e = r->pkt_fd < 0 ? -errno : e;
		pr_err("cannot open a packet socket on %s: %s\n", r->o.peer, strerror(-e));
		return e;
	}
	return 0;
}

void sp_netns__teardown(struct specializer *r)
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

