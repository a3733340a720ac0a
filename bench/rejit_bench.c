/* SPDX-License-Identifier: BSD-2-Clause */
/* rejit_bench.c: activation overhead for bench/results/rejit.json (run by
 * bench/rejit.sh inside a network namespace it creates).
 *
 *   rejit_bench swap STORE DEV N ROUNDS
 *
 * Two receipted generations of tests/bpf/rcpt_xdp.bpf.c (one immediate
 * apart) are loaded into STORE and attached to DEV with an XDP link. Then,
 * in ROUNDS interleaved rounds of N swaps each:
 *   raw:        bpf_link_update() alone, alternating the two programs;
 *   receipted:  pb_generation__activate() around the same bpf_link_update()
 *               (link query, clocks, 'activated' + 'retired' entries appended
 *               to the hash-chained lifecycle log with fsync).
 * The swap inside pb_generation__activate is timed too, so the overhead is
 * (activate total - its swap) and the ratio is that over the raw swap.
 * Prints one JSON object (medians over every swap).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probity/receipts.h"
#include "common/clock.h"
#include "rcpt_xdp.skel.h"

#define RCPT_MARK 0x5eed01

struct swap_ctx {
	int link_fd;
	int prog_fd;
	uint64_t ns;		/* the bpf_link_update alone */
};

static int do_swap(void *ctx)
{
	struct swap_ctx *c = ctx;
	uint64_t t0 = pb_mono_ns();
	int err = bpf_link_update(c->link_fd, c->prog_fd, NULL);

	c->ns = pb_mono_ns() - t0;
	return err ? -errno : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n ? v[n / 2] : 0;
}

static int load_gen(struct pb_store *s, const char *parent, int delta, struct rcpt_xdp_bpf **skel,
		    struct pb_generation **g)
{
	struct pb_generation_opts o = { .sz = sizeof(o), .parent_generation_id = parent,
					.optimizer_name = "bench", .optimizer_version = "1" };
	struct bpf_program *prog;
	struct bpf_insn *insns;
	size_t i, cnt;
	int err;

	*skel = rcpt_xdp_bpf__open();
	if (!*skel)
		return -errno;
	prog = (*skel)->progs.rcpt_xdp;
	cnt = bpf_program__insn_cnt(prog);
	insns = malloc(cnt * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
	for (i = 0; i < cnt; i++)
		if (insns[i].imm == RCPT_MARK)
			insns[i].imm += delta;
	bpf_program__set_insns(prog, insns, cnt);
	free(insns);
	if ((err = pb_generation__begin(s, &o, g)))
		return err;
	if (parent && (err = pb_generation__add_transform(*g, "const-inline/mark", "bench", "x", 1)))
		return err;
	return pb_generation__load(*g, (*skel)->obj, prog);
}

static int bench_swap(const char *dir, const char *dev, int n, int rounds)
{
	struct rcpt_xdp_bpf *sk[2] = { NULL, NULL };
	struct pb_generation *g[2] = { NULL, NULL };
	uint64_t *raw = NULL, *tot = NULL, *in = NULL, *over = NULL;
	struct pb_store *s = NULL;
	struct swap_ctx sc = { .link_fd = -1 };
	int ifindex = (int)if_nametoindex(dev), cur = 0, err, r, i;
	size_t nr = 0, na = 0;

	if (!ifindex || n <= 0 || rounds <= 0)
		return -EINVAL;
	raw = calloc((size_t)n * rounds, sizeof(*raw));
	tot = calloc((size_t)n * rounds, sizeof(*tot));
	in = calloc((size_t)n * rounds, sizeof(*in));
	over = calloc((size_t)n * rounds, sizeof(*over));
	if (!raw || !tot || !in || !over) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = pb_store__open(dir, NULL, &s)) || (err = load_gen(s, NULL, 0, &sk[0], &g[0])) ||
	    (err = load_gen(s, pb_generation__id(g[0]), 1, &sk[1], &g[1])))
		goto out;
	sc.link_fd = bpf_link_create(bpf_program__fd(sk[0]->progs.rcpt_xdp), ifindex, BPF_XDP, NULL);
	if (sc.link_fd < 0) {
		err = -errno;
		goto out;
	}
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++) {	/* raw */
			cur ^= 1;
			sc.prog_fd = bpf_program__fd(sk[cur]->progs.rcpt_xdp);
			if ((err = do_swap(&sc)))
				goto out;
			raw[nr++] = sc.ns;
		}
		for (i = 0; i < n; i++) {	/* receipted */
			struct pb_activation_opts ao = { .sz = sizeof(ao), .link_fd = sc.link_fd,
							 .replaces = g[cur] };
			uint64_t t0;

			cur ^= 1;
			sc.prog_fd = bpf_program__fd(sk[cur]->progs.rcpt_xdp);
			t0 = pb_mono_ns();
			if ((err = pb_generation__activate(g[cur], &ao, do_swap, &sc)))
				goto out;
			tot[na] = pb_mono_ns() - t0;
			in[na] = sc.ns;
			over[na] = tot[na] - sc.ns;
			na++;
		}
	}
	{
		uint64_t mr = median(raw, nr), mt = median(tot, na), mi = median(in, na),
			 mo = median(over, na);

		printf("{\"swaps_per_mode\": %zu, \"rounds\": %d, \"raw_swap_ns_median\": %llu, "
		       "\"activate_total_ns_median\": %llu, \"swap_inside_activate_ns_median\": %llu, "
		       "\"overhead_ns_median\": %llu, \"overhead_to_swap_ratio\": %.3f}\n",
		       nr, rounds, (unsigned long long)mr, (unsigned long long)mt, (unsigned long long)mi,
		       (unsigned long long)mo, mr ? (double)mo / (double)mr : 0.0);
	}
out:
	if (sc.link_fd >= 0)
		close(sc.link_fd);
	for (i = 0; i < 2; i++) {
		rcpt_xdp_bpf__destroy(sk[i]);
		if (g[i] && sk[i])
			pb_generation__record_unloaded(g[i]);
		pb_generation__free(g[i]);
	}
	pb_store__free(s);
	free(raw);
	free(tot);
	free(in);
	free(over);
	return err;
}

int main(int argc, char **argv)
{
	int err;

	if (argc != 6 || strcmp(argv[1], "swap")) {
		fprintf(stderr, "usage: %s swap STORE DEV N ROUNDS\n", argv[0]);
		return 2;
	}
	err = bench_swap(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (err) {
		fprintf(stderr, "rejit_bench: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
