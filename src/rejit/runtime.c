/* runtime.c: `probity rejit`'s loop (runtime.h, docs/rejit.md).
 *
 *   setup      store, netns + veth, generation 0 (generic lb_xdp, loaded
 *              through pb_generation__load, put in the fallback prog
 *              array, attached with an XDP link), traffic thread
 *   each tick  scripted steps (config writes deoptimize first; traffic
 *              mix changes), guard-failure check (deopt above threshold)
 *   each epoch profile delta -> plan (sites >= bias threshold) -> if it
 *              differs from the active generation: rewrite generation 0's
 *              relocated instructions (src/rejit/passes.c), load with
 *              bpf_prog_load, compare verdicts with generation 0 through
 *              BPF_PROG_TEST_RUN, write the receipt, swap (bpf_link_update)
 *   stop       retire, detach, close, log unloads, delete the netns
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/version.h"
#include "elf/elf_image.h"
#include "receipts/receipts_int.h"
#include "rejit/lb_xdp.h"
#include "rejit/rejit.h"
#include "rejit/runtime.h"
#include "lb_xdp.skel.h"

#define NS_PER_MS 1000000ull
#define VLOG_SIZE (256 * 1024)
#define OPTIMIZER_NAME "probity-rejit"

static const char *const site_names[LB_NSITES] = { "ipv4", "udp", "vip", "acl" };

/* traffic classes */
enum { C_VIP, C_BLOCKED, C_TCP, C_OTHER, C_ARP, C_N,
       /* probe-only frames for the verdict check */
       C_SHORT_IP = C_N, C_IHL6, C_TRUNC_UDP, C_ALL };
static const char *const class_names[C_ALL] = { "vip", "blocked", "tcp", "udp-other", "arp",
						"short-ipv4", "ihl6", "truncated-udp" };
/* per 1000 packets, per mix */
static const uint16_t mix_share[RJ_N_MIX][C_N] = {
	[RJ_MIX_NORMAL] = { 982, 5, 5, 5, 3 },
	[RJ_MIX_SHIFT] = { 500, 5, 450, 30, 15 },
};

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
	struct lb_xdp_bpf *skel;
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

static void progress(struct rejit *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(struct rejit *r, const char *fmt, ...)
{
	char line[512];
	int n;
	va_list ap;

	if (!r->o.progress)
		return;
	n = snprintf(line, sizeof(line), "t=%.2fs ",
		     r->t0 ? (double)(pb_mono_ns() - r->t0) / 1e9 : 0.0);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	r->o.progress(r->o.progress_ctx, line);
}

static uint64_t now_ms(const struct rejit *r)
{
	return r->t0 ? (pb_mono_ns() - r->t0) / NS_PER_MS : 0;
}

/* ---- configuration and profile ------------------------------------------ */

static volatile struct lb_cfg *cfg_live(struct rejit *r)
{
	return (volatile struct lb_cfg *)r->cfg_map;
}

static void cfg_read(struct rejit *r, struct lb_cfg *out)
{
	volatile struct lb_cfg *c = cfg_live(r);

	out->tag = c->tag;
	out->version = c->version;
	out->feature_acl = c->feature_acl;
	out->feature_stats = c->feature_stats;
	out->n_backends = c->n_backends;
	out->vip_port = c->vip_port;
	out->acl_prefix = c->acl_prefix;
	out->default_verdict = c->default_verdict;
}

static uint32_t cfg_get(const struct lb_cfg *c, uint32_t field)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)c + rj_cfg_fields[field].offset, 4);
	return v;
}

static void cfg_set(struct rejit *r, uint32_t field, uint32_t v)
{
	volatile uint32_t *p = (volatile uint32_t *)((volatile uint8_t *)cfg_live(r) +
						     rj_cfg_fields[field].offset);

	*p = v;
}

static json_t *cfg_json(const struct lb_cfg *c)
{
	json_t *j = json_object();
	size_t i;

	for (i = 0; i < rj_n_cfg_fields; i++)
		json_object_set_new(j, rj_cfg_fields[i].name, json_integer(cfg_get(c, (uint32_t)i)));
	return j;
}

static void prof_read(struct rejit *r, struct lb_prof *out)
{
	memcpy(out, (const void *)r->prof_map, sizeof(*out));
}

static uint64_t guard_total(const struct lb_prof *p)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < LB_NSITES; i++)
		t += p->guard_fail[i];
	return t;
}

static void prof_delta(const struct lb_prof *a, const struct lb_prof *b, struct lb_prof *d)
{
	/* __u64, not uint64_t (unsigned long): the same type as the fields,
	 * or strict aliasing lets the compiler drop the stores */
	const __u64 *x = &a->site[0][0], *y = &b->site[0][0];
	__u64 *z = &d->site[0][0];
	size_t i, n = (sizeof(*a) - offsetof(struct lb_prof, site)) / 8;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++)
		z[i] = y[i] - x[i];
}

static void prog_stats(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd >= 0 && !bpf_prog_get_info_by_fd(fd, &info, &len)) {
		*cnt = info.run_cnt;
		*ns = info.run_time_ns;
	}
}

/* ---- namespace and traffic ---------------------------------------------- */

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

static bool name_ok(const char *s)
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

static int netns_setup(struct rejit *r, char *err, size_t errsz)
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

static void netns_teardown(struct rejit *r)
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
static size_t build_frame(uint8_t *buf, int c, const struct lb_cfg *cfg, const uint8_t *dmac,
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

static void *traffic_main(void *arg)
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

		cfg_read(r, &cfg);
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
			len = build_frame(buf, c, &cfg, r->dev_mac, r->peer_mac, &rnd);
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

/* ---- generations -------------------------------------------------------- */

static struct rj_gen *gen_add(struct rejit *r)
{
	struct rj_gen *g;

	if (r->n_gens == r->cap_gens) {
		size_t nc = r->cap_gens ? r->cap_gens * 2 : 16;
		struct rj_gen *ng = realloc(r->gens, nc * sizeof(*ng));

		if (!ng)
			return NULL;
		/* r->active points into the array */
		if (r->active)
			r->active = ng + (r->active - r->gens);
		r->gens = ng;
		r->cap_gens = nc;
	}
	g = &r->gens[r->n_gens];
	memset(g, 0, sizeof(*g));
	g->ordinal = (int)r->n_gens;
	g->fd = -1;
	g->transforms = json_array();
	g->assumptions = json_array();
	g->retired = json_array();
	g->loaded_ms = now_ms(r);
	r->n_gens++;
	return g;
}

struct swap_ctx {
	struct rejit *r;
	int new_fd;
	struct pb_activation_opts *ao;
};

static int swap_fn(void *c)
{
	struct swap_ctx *s = c;
	struct rejit *r = s->r;

	if (r->link_fd < 0) {
		LIBBPF_OPTS(bpf_link_create_opts, lo);
		int fd = bpf_link_create(s->new_fd, r->ifindex, BPF_XDP, &lo);

		if (fd < 0)
			return -errno;
		r->link_fd = fd;
		if (s->ao)
			s->ao->link_fd = fd;
		return 0;
	}
	return bpf_link_update(r->link_fd, s->new_fd, NULL) ? -errno : 0;
}

/* Swap `to` in for the active generation; `reason` is why the active one
 * goes. Unlogged (injected) handoffs swap without any entry. */
static int activate(struct rejit *r, struct rj_gen *to, const char *reason)
{
	struct rj_gen *from = r->active;
	struct pb_activation_opts ao = { .sz = sizeof(ao), .link_fd = r->link_fd,
					 .hook = "xdp", .retire_reason = reason };
	struct swap_ctx sc = { .r = r, .new_fd = to->fd, .ao = &ao };
	char hook[96];
	int err;

	snprintf(hook, sizeof(hook), "xdp:%s@netns:%s", r->o.dev, r->netns);
	ao.hook = hook;
	if (to->logged) {
		ao.replaces = from && from->logged ? from->g : NULL;
		err = pb_generation__activate(to->g, &ao, swap_fn, &sc);
	} else {
		err = swap_fn(&sc);
	}
	if (err)
		return err;
	to->activations++;
	if (from)
		json_array_append_new(from->retired, json_string(reason));
	json_array_append_new(r->swaps, json_pack("{s:I, s:i, s:i, s:s, s:b}", "t_ms",
						  (json_int_t)now_ms(r), "from",
						  from ? from->ordinal : -1, "to", to->ordinal,
						  "reason", from ? reason : "attach",
						  "logged", to->logged));
	r->active = to;
	/* a new guard window */
	{
		struct lb_prof p;

		prof_read(r, &p);
		r->guard_base = guard_total(&p);
	}
	return 0;
}

static bool prog_gone(uint32_t id, int wait_ms)
{
	int i, fd;

	for (i = 0; i <= wait_ms; i += 5) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			return true;
		close(fd);
		usleep(5000);
	}
	return false;
}

/* Close a generation that is no longer attached and log its unload. */
static void gen_close(struct rejit *r, struct rj_gen *g)
{
	int err;

	if (g->closed || g->generic)
		return;
	prog_stats(g->fd, &g->run_cnt, &g->run_time_ns);
	close(g->fd);
	g->fd = -1;
	g->closed = true;
	if (!prog_gone(g->prog_id, 1000))
		progress(r, "gen %d (prog %u) still held by the kernel after close", g->ordinal, g->prog_id);
	if (g->logged && (err = pb_generation__record_unloaded(g->g)))
		progress(r, "gen %d: cannot log 'unloaded': %s", g->ordinal, strerror(-err));
}

static int deopt(struct rejit *r, const char *reason)
{
	struct rj_gen *old = r->active;
	int err;

	if (!old || old->generic)
		return 0;
	err = activate(r, &r->gens[0], reason);
	if (err) {
		progress(r, "deopt of gen %d failed: %s", old->ordinal, strerror(-err));
		return err;
	}
	r->deopts++;
	progress(r, "deopt: gen %d -> gen 0 (%s)", old->ordinal, reason);
	gen_close(r, old);
	return 0;
}

/* ---- candidates ---------------------------------------------------------- */

static char *dump_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	return s;
}

struct plan {
	uint32_t spec_mask, hot_mask;
	bool spike;
	uint64_t taken[LB_NSITES], not_taken[LB_NSITES];
};

static json_t *report_json(const struct rj_report *rep)
{
	json_t *e = json_array();
	uint32_t i;

	for (i = 0; i < rep->n_edits; i++)
		json_array_append_new(e, json_pack("{s:I, s:I, s:I, s:I}", "insn",
						   (json_int_t)rep->edits[i].insn, "a",
						   (json_int_t)rep->edits[i].a, "b",
						   (json_int_t)rep->edits[i].b, "c",
						   (json_int_t)rep->edits[i].c));
	return json_pack("{s:I, s:I, s:I, s:I, s:o}", "insns_before", (json_int_t)rep->insns_before,
			 "insns_after", (json_int_t)rep->insns_after, "removed",
			 (json_int_t)rep->removed, "folded", (json_int_t)rep->folded, "edits", e);
}

/* A pending receipt step (added to the generation after the load). */
struct step {
	bool transform;
	char id[64];
	char desc[256];
	char *evidence;
};

struct steps {
	struct step s[16];
	int n;
};

static void steps_add(struct steps *st, bool transform, const char *id, char *evidence,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void steps_add(struct steps *st, bool transform, const char *id, char *evidence,
		      const char *fmt, ...)
{
	struct step *s;
	va_list ap;

	if (st->n == 16) {
		free(evidence);
		return;
	}
	s = &st->s[st->n++];
	s->transform = transform;
	snprintf(s->id, sizeof(s->id), "%s", id);
	va_start(ap, fmt);
	vsnprintf(s->desc, sizeof(s->desc), fmt, ap);
	va_end(ap);
	s->evidence = evidence;
}

static void steps_free(struct steps *st)
{
	while (st->n)
		free(st->s[--st->n].evidence);
}

static int rewrite(struct rejit *r, const struct plan *pl, const struct lb_cfg *cfg,
		   struct rj_insns *p, struct steps *st, char *err, size_t errsz)
{
	struct rj_report rep;
	json_t *fields, *ev;
	int e, s;
	uint32_t i;

	if ((e = rj_insns__init(p, r->generic_insns, r->generic_n)))
		return e;
	/* 1. configuration values become immediates */
	if ((e = rj_pass_const_inline(p, bpf_map__fd(r->skel->maps.data_cfg), cfg, sizeof(*cfg), &rep))) {
		snprintf(err, errsz, "const-inline: %s", strerror(-e));
		return e;
	}
	fields = json_array();
	for (i = 0; i < rep.n_edits; i++) {
		const struct rj_cfg_field *f = rj_cfg_field_at((uint32_t)rep.edits[i].a);

		json_array_append_new(fields, json_pack("{s:I, s:s, s:I, s:I}", "insn",
							(json_int_t)rep.edits[i].insn, "field",
							f ? f->name : "?", "size", (json_int_t)rep.edits[i].b,
							"value", (json_int_t)rep.edits[i].c));
	}
	ev = json_pack("{s:s, s:s, s:i, s:o, s:o, s:o}", "schema", "probity.rejit.transform/v1",
		       "transform", "const-inline/cfg", "config_epoch", (int)r->cfg_epoch, "loads", fields,
		       "config", cfg_json(cfg), "pass", report_json(&rep));
	steps_add(st, true, "const-inline/cfg", dump_json(ev),
		  "%u loads of the configuration map (.data.cfg) replaced by their values", rep.n_edits);
	/* 2. disabled features and constant branches go */
	if ((e = rj_pass_fold_dce(p, &rep))) {
		snprintf(err, errsz, "dead-path: %s", strerror(-e));
		return e;
	}
	{
		char dis[128] = "";

		for (i = 0; i < rj_n_cfg_fields; i++)
			if (!strncmp(rj_cfg_fields[i].name, "feature_", 8) && !cfg_get(cfg, i))
				snprintf(dis + strlen(dis), sizeof(dis) - strlen(dis), "%s%s=0",
					 *dis ? " " : "", rj_cfg_fields[i].name);
		ev = json_pack("{s:s, s:s, s:s, s:o}", "schema", "probity.rejit.transform/v1",
			       "transform", "dead-path/cfg", "disabled_features", dis, "pass",
			       report_json(&rep));
		steps_add(st, true, "dead-path/cfg", dump_json(ev),
			  "%u constant branches folded, %u dead instructions removed (disabled: %s)",
			  rep.folded, rep.removed, *dis ? dis : "none");
	}
	/* 3. biased branches behind guards */
	if (pl->spec_mask) {
		struct rj_guard g = {
			.prof_fd = bpf_map__fd(r->skel->maps.bss),
			.fallback_failed_off = offsetof(struct lb_prof, fallback_failed),
			.prog_array_fd = bpf_map__fd(r->skel->maps.lb_fallback),
			.fallback_verdict = XDP_PASS,
		};

		if ((e = rj_free_stack_slot(p, &g.ctx_slot)) || (e = rj_pass_spill_ctx(p, g.ctx_slot, &rep))) {
			snprintf(err, errsz, "guard/ctx-spill: %s", strerror(-e));
			return e;
		}
		ev = json_pack("{s:s, s:s, s:i, s:o}", "schema", "probity.rejit.transform/v1",
			       "transform", "guard/ctx-spill", "slot", g.ctx_slot, "pass", report_json(&rep));
		steps_add(st, true, "guard/ctx-spill", dump_json(ev),
			  "ctx saved at r10%+d on entry, for the guards' tail call into generation 0",
			  g.ctx_slot);
		for (s = 0; s < LB_NSITES; s++) {
			struct rj_site site;
			bool hot = pl->hot_mask & (1u << s);
			uint64_t tot = pl->taken[s] + pl->not_taken[s];
			char id[64];

			if (!(pl->spec_mask & (1u << s)))
				continue;
			g.guard_fail_off = offsetof(struct lb_prof, guard_fail) + 8 * (size_t)s;
			e = rj_find_site(p, g.prof_fd, offsetof(struct lb_prof, site) + 16 * (size_t)s,
					 offsetof(struct lb_prof, site) + 16 * (size_t)s + 8, &site);
			if (!e)
				e = rj_pass_branch_spec(p, &site, hot, &g, &rep);
			if (e) {
				snprintf(err, errsz, "branch-spec/%s: %s", site_names[s], strerror(-e));
				return e;
			}
			snprintf(id, sizeof(id), "branch-spec/%s", site_names[s]);
			ev = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:o}", "schema",
				       "probity.rejit.transform/v1", "transform", id, "site", site_names[s],
				       "jmp_insn", (json_int_t)site.jmp, "hot", hot ? "taken" : "not-taken",
				       "taken", (json_int_t)pl->taken[s], "not_taken",
				       (json_int_t)pl->not_taken[s], "bias_permille",
				       (json_int_t)(tot ? (hot ? pl->taken[s] : pl->not_taken[s]) * 1000 / tot : 0),
				       "profile_epoch", (json_int_t)r->last_profile_epoch, "pass",
				       report_json(&rep));
			steps_add(st, true, id, dump_json(ev),
				  "branch %s (insn %u) specialized to %s; the other side is a guard: "
				  "count, tail call into generation 0", site_names[s], site.jmp,
				  hot ? "taken" : "not taken");
			snprintf(id, sizeof(id), "profile/epoch-%u/%s", r->last_profile_epoch, site_names[s]);
			steps_add(st, false, id, strdup(r->last_profile ? r->last_profile : "{}"),
				  "%s %s in >= %u.%u%% of packets: observed %llu of %llu in epoch %u",
				  site_names[s], hot ? "taken" : "not taken", r->o.bias_permille / 10,
				  r->o.bias_permille % 10,
				  (unsigned long long)(hot ? pl->taken[s] : pl->not_taken[s]),
				  (unsigned long long)tot, r->last_profile_epoch);
		}
		if ((e = rj_pass_fold_dce(p, &rep))) {
			snprintf(err, errsz, "dead-path/cold: %s", strerror(-e));
			return e;
		}
		ev = json_pack("{s:s, s:s, s:o}", "schema", "probity.rejit.transform/v1", "transform",
			       "dead-path/cold", "pass", report_json(&rep));
		steps_add(st, true, "dead-path/cold", dump_json(ev),
			  "%u instructions only reachable through guarded cold sides removed", rep.removed);
	}
	/* 4. the planted slow transform (--plant-spike) */
	if (pl->spike) {
		char id[64];

		if ((e = rj_pass_hash_unroll(p, r->o.spike_rounds, &rep))) {
			snprintf(err, errsz, "hash-unroll: %s", strerror(-e));
			return e;
		}
		snprintf(id, sizeof(id), "hash-unroll/flow-r%u", r->o.spike_rounds);
		ev = json_pack("{s:s, s:s, s:I, s:b, s:o}", "schema", "probity.rejit.transform/v1",
			       "transform", id, "rounds", (json_int_t)r->o.spike_rounds, "planted", 1,
			       "pass", report_json(&rep));
		steps_add(st, true, id, dump_json(ev),
			  "flow hash unrolled into %u mixing rounds at entry (planted slow transform, "
			  "--plant-spike)", r->o.spike_rounds);
		snprintf(id, sizeof(id), "profile/epoch-%u/hash-cost", r->last_profile_epoch);
		steps_add(st, false, id, strdup(r->last_profile ? r->last_profile : "{}"),
			  "an unrolled flow hash is cheaper than the generic one at the profiled "
			  "rate (epoch %u) -- false: planted for the attribution demo",
			  r->last_profile_epoch);
	}
	/* what every inlined value relies on */
	{
		char id[64];
		json_t *c = json_pack("{s:s, s:i, s:o}", "schema", "probity.rejit.config/v1", "config_epoch",
				      (int)r->cfg_epoch, "config", cfg_json(cfg));

		snprintf(id, sizeof(id), "config/epoch-%u", r->cfg_epoch);
		steps_add(st, false, id, dump_json(c),
			  "the configuration map keeps the values of config epoch %u (a change "
			  "deoptimizes first)", r->cfg_epoch);
	}
	return 0;
}

/* Verdicts of generation 0 and the candidate on the same probe frames
 * (BPF_PROG_TEST_RUN), including every guard-failure class. */
static int verdict_check(struct rejit *r, int fd, const struct lb_cfg *cfg, json_t **out)
{
	uint8_t buf[128];
	uint32_t rnd = 12345;
	json_t *rows = json_array();
	int c, mism = 0, err = 0;

	for (c = 0; c < C_ALL * 4; c++) {
		LIBBPF_OPTS(bpf_test_run_opts, a);
		LIBBPF_OPTS(bpf_test_run_opts, b);
		uint8_t out_a[128], out_b[128];
		uint32_t seed = rnd;
		size_t len = build_frame(buf, c % C_ALL, cfg, r->dev_mac, r->peer_mac, &seed);
		bool same;

		a.data_in = b.data_in = buf;
		a.data_size_in = b.data_size_in = (__u32)len;
		a.data_out = out_a;
		b.data_out = out_b;
		a.data_size_out = b.data_size_out = sizeof(out_a);
		if (bpf_prog_test_run_opts(r->gens[0].fd, &a) || bpf_prog_test_run_opts(fd, &b)) {
			err = -errno;
			break;
		}
		/* the verdict, and the frame as it leaves (the backend MAC) */
		same = a.retval == b.retval && a.data_size_out == b.data_size_out &&
		       !memcmp(out_a, out_b, a.data_size_out);
		mism += !same;
		rnd = seed;
		if (c >= C_ALL && same)
			continue;	/* more sources for the backend choice; rows for the first round */
		json_array_append_new(rows, json_pack("{s:s, s:I, s:I, s:b}", "packet", class_names[c % C_ALL],
						      "generic", (json_int_t)a.retval, "candidate",
						      (json_int_t)b.retval, "same_frame_out",
						      a.data_size_out == b.data_size_out &&
						      !memcmp(out_a, out_b, a.data_size_out)));
	}
	*out = json_pack("{s:s, s:i, s:i, s:o}", "method", "BPF_PROG_TEST_RUN", "packets", C_ALL * 4,
			 "mismatches", mism, "verdicts", rows);
	if (err)
		return err;
	return mism ? -EPROTO : 0;
}

static int specialize(struct rejit *r, const struct plan *pl)
{
	struct lb_cfg cfg;
	struct rj_insns p = { 0 };
	struct steps st = { .n = 0 };
	struct lb_prof before, after;
	char err[256] = "", name[16], *vlog = NULL;
	json_t *equiv = NULL;
	struct rj_gen *g = NULL;
	bool drop;
	uint64_t t0, load_ns;
	int fd = -1, e, i;
	LIBBPF_OPTS(bpf_prog_load_opts, lo);

	cfg_read(r, &cfg);
	e = rewrite(r, pl, &cfg, &p, &st, err, sizeof(err));
	if (e) {
		progress(r, "rewrite refused: %s", err);
		goto fail;
	}
	vlog = calloc(1, VLOG_SIZE);
	if (!vlog) {
		e = -ENOMEM;
		goto fail;
	}
	snprintf(name, sizeof(name), "lb_xdp_g%zu", r->n_gens);
	lo.log_buf = vlog;
	lo.log_size = VLOG_SIZE;
	lo.log_level = 4;	/* BPF_LOG_STATS, as pb_generation__load */
	lo.expected_attach_type = BPF_XDP;
	t0 = pb_mono_ns();
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", p.v, p.n, &lo);
	load_ns = pb_mono_ns() - t0;
	if (fd < 0) {
		e = -errno;
		lo.log_level = 1;
		memset(vlog, 0, VLOG_SIZE);
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", p.v, p.n, &lo);
		progress(r, "verifier rejected the candidate (%s); log tail: %.300s", strerror(-e),
			 strlen(vlog) > 300 ? vlog + strlen(vlog) - 300 : vlog);
		if (fd >= 0)
			close(fd);
		fd = -1;
		goto fail;
	}
	/* the probes count in lb_prof: keep them out of the profile */
	prof_read(r, &before);
	e = verdict_check(r, fd, &cfg, &equiv);
	prof_read(r, &after);
	{
		__u64 *bb = &r->base.site[0][0];
		const __u64 *x = &before.site[0][0], *y = &after.site[0][0];
		size_t k, n = (sizeof(before) - offsetof(struct lb_prof, site)) / 8;

		for (k = 0; k < n; k++)
			bb[k] += y[k] - x[k];
		r->guard_base += guard_total(&after) - guard_total(&before);
	}
	if (e) {
		char *s = json_dumps(equiv, JSON_COMPACT);

		progress(r, "candidate refused: verdicts differ from generation 0: %s", s ? s : "");
		free(s);
		goto fail;
	}
	g = gen_add(r);
	if (!g) {
		e = -ENOMEM;
		goto fail;
	}
	g->fd = fd;
	fd = -1;
	g->spec_mask = pl->spec_mask;
	g->hot_mask = pl->hot_mask;
	g->spiked = pl->spike;
	g->cfg = cfg;
	g->cfg_epoch = r->cfg_epoch;
	g->insns = (uint32_t)p.n;
	g->equivalence = equiv;
	equiv = NULL;
	for (i = 0; i < st.n; i++)
		json_array_append_new(st.s[i].transform ? g->transforms : g->assumptions,
				      json_string(st.s[i].id));
	drop = r->o.inject_drop_handoff && r->handoffs + 1 == r->o.inject_drop_handoff;
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (!bpf_prog_get_info_by_fd(g->fd, &info, &len))
			g->prog_id = info.id;
	}
	if (!drop) {
		struct pb_generation_opts go = { .sz = sizeof(go),
			.parent_generation_id = pb_generation__id(r->gens[0].g),
			.source_build_id = r->source_id, .optimizer_name = OPTIMIZER_NAME,
			.optimizer_version = PROBITY_VERSION,
			.optimizer_build_id = r->optimizer_build_id };
		struct pb_capture_opts co = { .sz = sizeof(co), .submitted_insns = p.v,
			.submitted_len = p.n * sizeof(*p.v), .verifier_log = vlog,
			.log_level = 4, .load_ns = load_ns };
		char *eqs = json_dumps(g->equivalence, JSON_COMPACT | JSON_SORT_KEYS);

		e = pb_generation__begin(r->store, &go, &g->g);
		for (i = 0; !e && i < st.n; i++)
			e = st.s[i].transform
				    ? pb_generation__add_transform(g->g, st.s[i].id, st.s[i].desc,
								  st.s[i].evidence,
								  st.s[i].evidence ? strlen(st.s[i].evidence) : 0)
				    : pb_generation__add_assumption(g->g, st.s[i].id, st.s[i].desc,
								   st.s[i].evidence,
								   st.s[i].evidence ? strlen(st.s[i].evidence) : 0);
		if (!e)
			e = pb_generation__add_assumption(g->g, "verdicts/test-run",
							  "same XDP verdicts as generation 0 on every "
							  "probe frame (BPF_PROG_TEST_RUN)", eqs,
							  eqs ? strlen(eqs) : 0);
		free(eqs);
		if (!e)
			e = pb_generation__capture_fd_opts(g->g, g->fd, &co);
		if (e) {
			progress(r, "cannot record generation %d: %s", g->ordinal, strerror(-e));
			goto drop_gen;
		}
		g->logged = true;
		json_array_append_new(g->assumptions, json_string("verdicts/test-run"));
	}
	e = activate(r, g, "replaced");
	if (e) {
		progress(r, "swap to gen %d failed: %s", g->ordinal, strerror(-e));
		goto drop_gen;
	}
	r->handoffs++;
	r->n_specialized++;
	{
		char ids[512] = "";
		size_t k;
		json_t *v;

		json_array_foreach(g->transforms, k, v)
			snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s", k ? " " : "",
				 json_string_value(v));
		progress(r, "gen %d (prog %u, %u->%u insns) active%s: %s", g->ordinal, g->prog_id,
			 (unsigned)r->generic_n, g->insns,
			 drop ? " WITHOUT lifecycle records (--inject-drop-handoff)" : "", ids);
	}
	for (i = 0; i < (int)r->n_gens; i++) {	/* the one it replaced, if specialized */
		struct rj_gen *o = &r->gens[i];

		if (o != g && !o->generic && !o->closed)
			gen_close(r, o);
	}
	steps_free(&st);
	rj_insns__release(&p);
	free(vlog);
	return 0;
drop_gen:
	/* not attached: close it (logging the unload if it was recorded) */
	if (g->logged) {
		pb_generation__retire(g->g, "refused: swap failed");
		json_array_append_new(g->retired, json_string("refused: swap failed"));
	}
	gen_close(r, g);
fail:
	r->rejected++;
	if (fd >= 0)
		close(fd);
	json_decref(equiv);
	steps_free(&st);
	rj_insns__release(&p);
	free(vlog);
	return e;
}

/* ---- the loop ------------------------------------------------------------ */

static void epoch_tick(struct rejit *r)
{
	struct lb_prof now, d;
	struct plan pl = { 0 };
	json_t *sites = json_object(), *gf = json_object(), *prof;
	uint64_t run_cnt = 0, run_ns = 0, wstart = r->window_start;
	struct lb_cfg cfg;
	char line[256] = "";
	int s;

	prof_read(r, &now);
	prof_delta(&r->base, &now, &d);
	r->base = now;
	r->epoch++;
	r->window_start = pb_mono_ns();
	prog_stats(r->active->fd, &run_cnt, &run_ns);
	cfg_read(r, &cfg);
	for (s = 0; s < LB_NSITES; s++) {
		uint64_t t = d.site[s][0], n = d.site[s][1], tot = t + n;

		pl.taken[s] = t;
		pl.not_taken[s] = n;
		json_object_set_new(sites, site_names[s], json_pack("{s:I, s:I}", "taken", (json_int_t)t,
								   "not_taken", (json_int_t)n));
		json_object_set_new(gf, site_names[s], json_integer((json_int_t)d.guard_fail[s]));
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s %llu/%llu", site_names[s],
			 (unsigned long long)t, (unsigned long long)tot);
		if (tot >= r->o.min_samples &&
		    (t > n ? t : n) * 1000 >= (uint64_t)r->o.bias_permille * tot) {
			pl.spec_mask |= 1u << s;
			if (t > n)
				pl.hot_mask |= 1u << s;
		}
	}
	prof = json_pack("{s:s, s:I, s:I, s:I, s:i, s:s, s:o, s:o, s:I, s:{s:I, s:I, s:I}, s:o, s:s}",
			 "schema", "probity.rejit.profile/v1", "epoch", (json_int_t)r->epoch,
			 "window_start_mono_ns", (json_int_t)wstart, "window_end_mono_ns",
			 (json_int_t)r->window_start, "active_generation",
			 r->active->ordinal, "active_generation_id",
			 r->active->logged ? pb_generation__id(r->active->g) : "unlogged",
			 "sites", sites, "guard_fail", gf, "fallback_failed",
			 (json_int_t)d.fallback_failed, "run", "prog_id", (json_int_t)r->active->prog_id,
			 "run_cnt", (json_int_t)run_cnt, "run_time_ns", (json_int_t)run_ns,
			 "config", cfg_json(&cfg), "traffic_mix", rj_mix_names[atomic_load(&r->mix)]);
	json_array_append_new(r->epochs, json_pack("{s:I, s:I, s:I, s:i}", "epoch",
						   (json_int_t)r->epoch, "spec_mask",
						   (json_int_t)pl.spec_mask, "hot_mask",
						   (json_int_t)pl.hot_mask, "active", r->active->ordinal));
	progress(r, "epoch %u:%s guard-fails %llu (gen %d)", r->epoch, line,
		 (unsigned long long)guard_total(&d), r->active->ordinal);
	free(r->last_profile);
	r->last_profile = dump_json(prof);
	r->last_profile_epoch = r->epoch;
	pl.spike = r->o.plant_spike && r->n_specialized + 1 == r->o.plant_spike;
	if (!r->active->generic && r->active->spec_mask == pl.spec_mask &&
	    r->active->hot_mask == pl.hot_mask && r->active->cfg_epoch == r->cfg_epoch)
		return;	/* the active generation still fits the profile */
	specialize(r, &pl);
}

static void apply_step(struct rejit *r, const struct rj_step *st)
{
	char reason[160];

	json_array_append_new(r->steps_done, json_pack("{s:I, s:I, s:s}", "t_ms", (json_int_t)st->t_ms,
						       "line", (json_int_t)st->line, "kind",
						       st->kind == RJ_STEP_CONFIG ? "config" : "traffic"));
	if (st->kind == RJ_STEP_TRAFFIC) {
		progress(r, "script line %u: traffic %s", st->line, rj_mix_names[st->mix]);
		atomic_store(&r->mix, (int)st->mix);
		return;
	}
	{
		struct lb_cfg cfg;
		uint32_t old;

		cfg_read(r, &cfg);
		old = cfg_get(&cfg, st->field);
		progress(r, "script line %u: config %s %u -> %u", st->line, rj_cfg_fields[st->field].name,
			 old, st->value);
		if (old == st->value)
			return;
		/* the specialized code inlined the old value: leave it first */
		snprintf(reason, sizeof(reason), "deopt: config changed: %s %u -> %u",
			 rj_cfg_fields[st->field].name, old, st->value);
		deopt(r, reason);
		cfg_set(r, st->field, st->value);
		r->cfg_epoch++;
	}
}

int rejit__run(struct rejit *r, char *err, size_t errsz)
{
	uint64_t next_epoch, end;
	size_t step = 0;

	r->t0 = pb_mono_ns();
	r->window_start = r->t0;
	prof_read(r, &r->base);
	r->guard_base = guard_total(&r->base);
	next_epoch = r->t0 + r->o.profile_interval_ms * NS_PER_MS;
	end = r->o.duration_ms ? r->t0 + r->o.duration_ms * NS_PER_MS : UINT64_MAX;
	if (pthread_create(&r->traffic, NULL, traffic_main, r)) {
		snprintf(err, errsz, "cannot start the traffic thread");
		return -EAGAIN;
	}
	r->traffic_started = true;
	progress(r, "gen 0 (prog %u) attached to %s in netns %s; traffic %u pps",
		 r->gens[0].prog_id, r->o.dev, r->netns, r->o.rate_pps);
	while (!(r->o.stop && *r->o.stop)) {
		uint64_t now = pb_mono_ns();

		if (now >= end)
			break;
		if (r->o.script && step < r->o.script->n &&
		    r->t0 + r->o.script->steps[step].t_ms * NS_PER_MS <= now) {
			while (step < r->o.script->n &&
			       r->t0 + r->o.script->steps[step].t_ms * NS_PER_MS <= now)
				apply_step(r, &r->o.script->steps[step++]);
			/* the profile so far describes another traffic or
			 * configuration: a new epoch window starts here */
			prof_read(r, &r->base);
			r->window_start = pb_mono_ns();
			next_epoch = r->window_start + r->o.profile_interval_ms * NS_PER_MS;
		}
		if (!r->active->generic) {	/* a writer other than us changed the map */
			struct lb_cfg live;
			uint32_t f;

			cfg_read(r, &live);
			for (f = 0; f < rj_n_cfg_fields; f++) {
				char reason[160];

				if (cfg_get(&live, f) == cfg_get(&r->active->cfg, f))
					continue;
				snprintf(reason, sizeof(reason), "deopt: config changed: %s %u -> %u (outside writer)",
					 rj_cfg_fields[f].name, cfg_get(&r->active->cfg, f), cfg_get(&live, f));
				deopt(r, reason);
				r->cfg_epoch++;
				break;
			}
		}
		if (!r->active->generic) {
			struct lb_prof p;
			uint64_t gf;

			prof_read(r, &p);
			gf = guard_total(&p) - r->guard_base;
			if (gf > r->o.guard_threshold) {
				char reason[128];

				snprintf(reason, sizeof(reason), "deopt: guard failures %llu > threshold %llu",
					 (unsigned long long)gf, (unsigned long long)r->o.guard_threshold);
				deopt(r, reason);
			}
		}
		if (now >= next_epoch) {
			epoch_tick(r);
			next_epoch += r->o.profile_interval_ms * NS_PER_MS;
			/* a new guard window each epoch */
			if (!r->active->generic) {
				struct lb_prof p;

				prof_read(r, &p);
				r->guard_base = guard_total(&p);
			}
		}
		usleep(20000);
	}
	return 0;
}

/* ---- setup and teardown -------------------------------------------------- */

static int map_shared(const struct bpf_map *m, void **out, size_t *sz)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = ((bpf_map__value_size(m) + 7) & ~(size_t)7) * bpf_map__max_entries(m);
	void *p;

	len = (len + pg - 1) / pg * pg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	*sz = len;
	return 0;
}

static void own_build_id(char *out, size_t sz)
{
	struct elf_image *img = elf_image__open("/proc/self/exe");

	snprintf(out, sz, "unknown");
	if (img && elf_image__build_id_hex(img, out, sz) < 0)
		snprintf(out, sz, "unknown");
	elf_image__free(img);
}

int rejit__new(const struct rejit_opts *o, struct rejit **out, char *err, size_t errsz)
{
	struct rejit *r;
	struct rj_gen *g0;
	struct pb_generation_opts go = { .sz = sizeof(go), .optimizer_name = OPTIMIZER_NAME,
					 .optimizer_version = PROBITY_VERSION };
	const void *elf;
	size_t elf_sz = 0, i;
	char hex[PB_DIGEST_HEX_LEN];
	__u32 key = 0;
	int e, fd;

	*out = NULL;
	if (!o || o->sz < sizeof(size_t) || !o->store_dir) {
		snprintf(err, errsz, "invalid options");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memcpy(&r->o, o, o->sz < sizeof(r->o) ? o->sz : sizeof(r->o));
	r->orig_ns_fd = -1;
	r->link_fd = -1;
	r->stats_fd = -1;
	r->pkt_fd = -1;
	r->swaps = json_array();
	r->epochs = json_array();
	r->steps_done = json_array();
	if (!r->o.dev) r->o.dev = "pbrj1";
	if (!r->o.peer) r->o.peer = "pbrj0";
	if (!r->o.rate_pps) r->o.rate_pps = 4000;
	if (!r->o.profile_interval_ms) r->o.profile_interval_ms = 1000;
	if (!r->o.bias_permille) r->o.bias_permille = 950;
	if (!r->o.guard_threshold) r->o.guard_threshold = 200;
	if (!r->o.min_samples) r->o.min_samples = 100;
	if (!r->o.spike_rounds) r->o.spike_rounds = 16384;
	*out = r;
	if ((r->o.netns && !name_ok(r->o.netns)) || !name_ok(r->o.dev) || !name_ok(r->o.peer)) {
		snprintf(err, errsz, "netns and device names: expected 1-15 characters of "
			 "[A-Za-z0-9_.-]");
		return -EINVAL;
	}
	if ((e = pb_store__open(r->o.store_dir, NULL, &r->store))) {
		snprintf(err, errsz, "cannot open receipt store '%s': %s", r->o.store_dir, strerror(-e));
		return e;
	}
	own_build_id(r->optimizer_build_id, sizeof(r->optimizer_build_id));
	go.optimizer_build_id = r->optimizer_build_id;
	if ((e = netns_setup(r, err, errsz)))
		return e;
	/* generation 0: the generic program, as built */
	r->skel = lb_xdp_bpf__open();
	if (!r->skel) {
		e = -errno;
		snprintf(err, errsz, "cannot open the lb_xdp BPF object: %s", strerror(-e));
		return e;
	}
	elf = lb_xdp_bpf__elf_bytes(&elf_sz);
	pb_sha256_hex(elf, elf_sz, hex);
	snprintf(r->source_id, sizeof(r->source_id), "sha256:%s", hex);
	go.source_build_id = r->source_id;
	for (i = 0; i < r->o.n_cfg; i++)
		memcpy((uint8_t *)&r->skel->data_cfg->lb_cfg + rj_cfg_fields[r->o.cfg_field[i]].offset,
		       &r->o.cfg_value[i], 4);
	g0 = gen_add(r);
	if (!g0)
		return -ENOMEM;
	g0->generic = true;
	g0->logged = true;
	if ((e = pb_generation__begin(r->store, &go, &g0->g)) ||
	    (e = pb_generation__load(g0->g, r->skel->obj, r->skel->progs.lb_xdp))) {
		snprintf(err, errsz, "cannot load generation 0 (lb_xdp): %s", strerror(-e));
		return e;
	}
	g0->fd = bpf_program__fd(r->skel->progs.lb_xdp);
	g0->prog_id = pb_generation__prog_id(g0->g);
	g0->insns = (uint32_t)bpf_program__insn_cnt(r->skel->progs.lb_xdp);
	r->generic_n = bpf_program__insn_cnt(r->skel->progs.lb_xdp);
	r->generic_insns = malloc(r->generic_n * sizeof(struct bpf_insn));
	if (!r->generic_insns)
		return -ENOMEM;
	memcpy(r->generic_insns, bpf_program__insns(r->skel->progs.lb_xdp),
	       r->generic_n * sizeof(struct bpf_insn));
	if ((e = map_shared(r->skel->maps.data_cfg, (void **)&r->cfg_map, &r->cfg_map_sz)) ||
	    (e = map_shared(r->skel->maps.bss, (void **)&r->prof_map, &r->prof_map_sz))) {
		snprintf(err, errsz, "cannot map the configuration and profile maps: %s", strerror(-e));
		return e;
	}
	r->prof_map->tag = LB_PROF_TAG;
	r->prof_map->version = LB_VERSION;
	cfg_read(r, &g0->cfg);
	fd = g0->fd;
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.lb_fallback), &key, &fd, BPF_ANY)) {
		e = -errno;
		snprintf(err, errsz, "cannot put generation 0 into the fallback prog array: %s",
			 strerror(-e));
		return e;
	}
	r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* run_cnt/run_time_ns; optional */
	if ((e = activate(r, g0, "attach"))) {
		snprintf(err, errsz, "cannot attach generation 0 to %s: %s", r->o.dev, strerror(-e));
		return e;
	}
	return 0;
}

int rejit__stop(struct rejit *r)
{
	size_t i;
	int err = 0;

	if (!r || r->stopped)
		return 0;
	r->stopped = true;
	if (r->traffic_started) {
		atomic_store(&r->traffic_stop, 1);
		pthread_join(r->traffic, NULL);
		r->traffic_started = false;
	}
	/* detach first, then log the retirement: the interval the log
	 * states ends at or after the program's last invocation */
	if (r->link_fd >= 0) {
		close(r->link_fd);
		r->link_fd = -1;
	}
	if (r->active) {
		json_array_append_new(r->active->retired, json_string("stopped"));
		if (r->active->logged)
			err = pb_generation__retire(r->active->g, "stopped");
		r->active = NULL;
	}
	for (i = 1; i < r->n_gens; i++)
		gen_close(r, &r->gens[i]);
	if (r->prof_map)
		prof_read(r, &r->last_prof);
	if (r->cfg_map)
		munmap(r->cfg_map, r->cfg_map_sz);
	if (r->prof_map)
		munmap(r->prof_map, r->prof_map_sz);
	r->cfg_map = NULL;
	r->prof_map = NULL;
	if (r->n_gens && r->skel) {
		struct rj_gen *g0 = &r->gens[0];

		prog_stats(g0->fd, &g0->run_cnt, &g0->run_time_ns);
		lb_xdp_bpf__destroy(r->skel);
		r->skel = NULL;
		g0->fd = -1;
		g0->closed = true;
		if (g0->prog_id && !prog_gone(g0->prog_id, 2000))
			progress(r, "gen 0 (prog %u) still held by the kernel after close", g0->prog_id);
		if (g0->g && pb_generation__id(g0->g) && !err)
			err = pb_generation__record_unloaded(g0->g);
	}
	if (r->stats_fd >= 0) {
		close(r->stats_fd);
		r->stats_fd = -1;
	}
	netns_teardown(r);
	return err;
}

json_t *rejit__summary(const struct rejit *r)
{
	json_t *gens = json_array(), *guards = json_object(), *gf = json_object();
	size_t i;
	int s;

	/* the counters as last read (the maps are gone after stop) */
	for (s = 0; s < LB_NSITES; s++)
		json_object_set_new(gf, site_names[s], json_integer((json_int_t)r->last_prof.guard_fail[s]));
	json_object_set_new(guards, "failures", gf);
	json_object_set_new(guards, "fallback_failed", json_integer((json_int_t)r->last_prof.fallback_failed));

	for (i = 0; i < r->n_gens; i++) {
		const struct rj_gen *g = &r->gens[i];
		const char *id = g->logged ? pb_generation__id(g->g) : NULL;

		json_array_append_new(gens, json_pack(
			"{s:i, s:s, s:o, s:o, s:I, s:b, s:I, s:O, s:O, s:i, s:O, s:b, s:b, s:I, s:I, s:I, s:O}",
			"ordinal", g->ordinal, "kind", g->generic ? "generic" : "specialized",
			"generation_id", id ? json_string(id) : json_null(),
			"receipt", g->logged && pb_generation__receipt_digest(g->g)
				? json_string(pb_generation__receipt_digest(g->g)) : json_null(),
			"prog_id", (json_int_t)g->prog_id, "logged", g->logged,
			"insns", (json_int_t)g->insns,
			"transforms", g->transforms, "assumptions", g->assumptions,
			"activations", g->activations, "retired", g->retired,
			"unloaded", g->closed, "planted_spike", g->spiked,
			"loaded_t_ms", (json_int_t)g->loaded_ms,
			"run_cnt", (json_int_t)g->run_cnt, "run_time_ns", (json_int_t)g->run_time_ns,
			"equivalence", g->equivalence ? g->equivalence : json_null()));
	}
	return json_pack("{s:s, s:s, s:s, s:i, s:I, s:o, s:O, s:o, s:I, s:I, s:I, s:O, s:O, s:{s:I, s:I}}",
			 "store", r->o.store_dir, "netns", r->netns, "dev", r->o.dev,
			 "ifindex", r->ifindex, "epochs", (json_int_t)r->epoch,
			 "generations", gens, "swaps", r->swaps, "guards", guards,
			 "deopts", (json_int_t)r->deopts, "rejected_candidates", (json_int_t)r->rejected,
			 "specialized", (json_int_t)r->n_specialized,
			 "profile", r->epochs, "script_steps", r->steps_done,
			 "traffic", "sent", (json_int_t)atomic_load(&r->sent), "send_errors",
			 (json_int_t)atomic_load(&r->send_errors));
}

void rejit__free(struct rejit *r)
{
	size_t i;

	if (!r)
		return;
	rejit__stop(r);
	for (i = 0; i < r->n_gens; i++) {
		struct rj_gen *g = &r->gens[i];

		if (g->fd >= 0 && !g->generic)
			close(g->fd);
		pb_generation__free(g->g);
		json_decref(g->transforms);
		json_decref(g->assumptions);
		json_decref(g->retired);
		json_decref(g->equivalence);
	}
	free(r->gens);
	free(r->generic_insns);
	free(r->last_profile);
	json_decref(r->swaps);
	json_decref(r->epochs);
	json_decref(r->steps_done);
	pb_store__free(r->store);
	free(r);
}
