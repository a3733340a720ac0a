/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_bench.c: engine benchmarks (bench/run.sh runs them; see
 * bench/README.md). One binary, three modes, each printing one JSON object:
 *
 *   engine_bench cost MANIFEST N ROUNDS
 *	Per-call time of the eight target functions below (the binary probes
 *	itself) with no probe, an empty uprobe_multi program on the same
 *	sites, the engine in aggregate mode and the engine with --events
 *	(ring buffer drained by a second thread), interleaved for ROUNDS
 *	rounds; then a ring-buffer drain burst.
 *   engine_bench loop N
 *	Call the nop5 entry ACQUIRE/RELEASE pair N times (an --events trace
 *	of 2N resource records for the `report` throughput bench).
 *   engine_bench attach SITES_BINARY MULTI_ROUNDS SINGLE_ROUNDS
 *	Attach an empty program to every f_NNNN function of SITES_BINARY:
 *	one uprobe_multi link vs one single uprobe link per function; time
 *	attach and detach.
 *
 * Target functions: bench_push_* start with `push %rbp` (1 byte; this file
 * one byte), bench_nop5_* with one 5-byte nop
 * (0f 1f 44 00 00). Each returns its argument plus one.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "common/diag.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "elf/elf_image.h"
#include "engine/engine.h"
#include "bench_empty.skel.h"

/* Written in assembly so the first instruction does not depend on the
 * compiler's frame-pointer and CET defaults. */
#define PUSH_FN(name) \
	__asm__(".text\n.globl " #name "\n.type " #name ",@function\n.p2align 4\n" #name ":\n" \
		"push %rbp\nmov %rsp,%rbp\nleaq 1(%rdi),%rax\npop %rbp\nret\n" \
		".size " #name ",.-" #name "\n"); \
	uint64_t name(uint64_t x);
PUSH_FN(bench_push_entry_acq)
PUSH_FN(bench_push_entry_rel)
PUSH_FN(bench_push_return_acq)
PUSH_FN(bench_push_return_rel)

#define NOP5_FN(name) \
	__asm__(".text\n.globl " #name "\n.type " #name ",@function\n.p2align 4\n" #name ":\n" \
		".byte 0x0f,0x1f,0x44,0x00,0x00\n" \
		"leaq 1(%rdi),%rax\nret\n.size " #name ",.-" #name "\n"); \
	uint64_t name(uint64_t x);
NOP5_FN(bench_nop5_entry_acq)
NOP5_FN(bench_nop5_entry_rel)
NOP5_FN(bench_nop5_return_acq)
NOP5_FN(bench_nop5_return_rel)

typedef uint64_t (*bench_fn)(uint64_t);

struct combo {
	const char *name;
	bench_fn acq, rel;
};
static const struct combo combos[] = {
	{ "push_entry", bench_push_entry_acq, bench_push_entry_rel },
	{ "push_return", bench_push_return_acq, bench_push_return_rel },
	{ "nop5_entry", bench_nop5_entry_acq, bench_nop5_entry_rel },
	{ "nop5_return", bench_nop5_return_acq, bench_nop5_return_rel },
};
#define NCOMBO (sizeof(combos) / sizeof(combos[0]))

enum mode { M_NONE, M_EMPTY, M_AGG, M_EVENTS, M__N };
static const char *mode_names[] = { "none", "empty", "engine_aggregate", "engine_events" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "engine_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ns per call: n pairs of (acq(x), rel(x)), the same instance each time */
static double run_combo(const struct combo *c, long n)
{
	bench_fn volatile acq = c->acq, rel = c->rel;
	uint64_t x = 0x10000, s = 0;
	double t0 = now_s(), t1;

	for (long i = 0; i < n; i++) {
		s += acq(x) - 1;	/* returns x + 1: instance at return = x + 1 */
		s += rel(x);
	}
	t1 = now_s();
	__asm__ volatile("" : : "r"(s));
	return (t1 - t0) * 1e9 / (double)(2 * n);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- ring-buffer drainer --------------------------------------------- */
struct drainer {
	struct engine *e;
	atomic_int stop;
	uint64_t records;
	double busy_s;		/* time inside engine__poll calls that returned records */
	pthread_t th;
};

static int count_rec(const void *rec, size_t len, void *ctx)
{
	(*(uint64_t *)ctx)++;
	return 0;
}

static void *drain_main(void *arg)
{
	struct drainer *d = arg;

	while (!atomic_load(&d->stop)) {
		double t0 = now_s();
		int n = engine__poll(d->e, 1, count_rec, &d->records);

		if (n > 0)
			d->busy_s += now_s() - t0;
	}
	while (engine__poll(d->e, 0, count_rec, &d->records) > 0)
		;
	return NULL;
}

static char self_path[PATH_MAX];
#define BURST_RING (32u << 20)	/* drain burst: ring buffer bytes */

static struct engine *engine_up(const struct plan *p, bool events)
{
	struct engine_opts eo = { .pid = getpid(), .events = events };
	struct engine *e = engine__new(p, &eo);

	if (!e)
		die("engine__new");
	return e;
}

static int cmd_cost(const char *manifest_path, long n, int rounds)
{
	struct diags *d = diags__new();
	struct manifest *m = NULL;
	struct plan *p = NULL;
	const char *bins[1] = { self_path };
	struct plan_opts po = { .binaries = bins, .n_binaries = 1 };
	size_t ent_off[16], ret_off[16], n_ent = 0, n_ret = 0;
	static double ns[M__N][NCOMBO][64];
	double load_s[M__N][64] = { { 0 } };
	uint64_t ev_records = 0, ev_drops = 0, ev_submitted = 0;
	double ev_busy = 0, ev_wall = 0;
	long n_none = n * 10;

	if (rounds > 64)
		rounds = 64;
	if (!d || manifest__load(manifest_path, &m, d) || plan__build(m, &po, &p, d)) {
		diags__print(d, stderr);
		fprintf(stderr, "engine_bench: cannot plan %s\n", manifest_path);
		return 1;
	}
	diags__free(d);
	for (size_t i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];

		if (s->cookie & PLAN_COOKIE_STASH)
			continue;
		if (s->retprobe && n_ret < 16)
			ret_off[n_ret++] = s->file_offset;
		else if (!s->retprobe && n_ent < 16)
			ent_off[n_ent++] = s->file_offset;
	}
	/* warm up: page in the code, settle the CPU frequency */
	for (size_t c = 0; c < NCOMBO; c++)
		run_combo(&combos[c], n_none);

	for (int r = 0; r < rounds; r++) {
		for (int mode = 0; mode < M__N; mode++) {
			struct bench_empty_bpf *sk = NULL;
			struct bpf_link *le = NULL, *lr = NULL;
			struct engine *e = NULL;
			struct drainer dr = { 0 };
			double t0 = now_s(), tw;

			if (mode == M_EMPTY) {
				LIBBPF_OPTS(bpf_uprobe_multi_opts, oe, .offsets = ent_off, .cnt = n_ent);
				LIBBPF_OPTS(bpf_uprobe_multi_opts, or_, .offsets = ret_off, .cnt = n_ret,
					    .retprobe = true);

				sk = bench_empty_bpf__open_and_load();
				if (!sk)
					die("bench_empty load");
				le = bpf_program__attach_uprobe_multi(sk->progs.empty_entry, getpid(),
								      self_path, NULL, &oe);
				lr = bpf_program__attach_uprobe_multi(sk->progs.empty_return, getpid(),
								      self_path, NULL, &or_);
				if (!le || !lr)
					die("attach empty uprobe_multi");
			} else if (mode == M_AGG || mode == M_EVENTS) {
				e = engine_up(p, mode == M_EVENTS);
				if (mode == M_EVENTS) {
					dr.e = e;
					if (pthread_create(&dr.th, NULL, drain_main, &dr))
						die("pthread_create");
				}
			}
			load_s[mode][r] = now_s() - t0;
			tw = now_s();
			for (size_t c = 0; c < NCOMBO; c++)
				ns[mode][c][r] = run_combo(&combos[c], mode == M_NONE ? n_none : n);
			if (mode == M_EVENTS) {
				struct engine_snapshot snap;

				atomic_store(&dr.stop, 1);
				pthread_join(dr.th, NULL);
				ev_wall += now_s() - tw;
				if (engine__snapshot(e, &snap) == 0) {
					ev_drops += snap.engine.ringbuf_drops;
					ev_submitted += snap.engine.records;
				}
				ev_records += dr.records;
				ev_busy += dr.busy_s;
			}
			bpf_link__destroy(le);
			bpf_link__destroy(lr);
			bench_empty_bpf__destroy(sk);
			engine__free(e);
		}
	}

	/* drain burst: fill the ring buffer with no reader, then time the
	 * drain; BURSTS times, median rate */
#define BURSTS 3
	double burst_s = 0, burst_fill_s = 0, burst_rate[BURSTS], burst_rates[BURSTS];
	uint64_t burst_recs = 0, burst_drops = 0;
	long burst_pairs = 0;
	for (int b = 0; b < BURSTS; b++) {
		struct engine_opts eo = { .pid = getpid(), .events = true,
					  .ringbuf_bytes = BURST_RING };
		struct engine *e = engine__new(p, &eo);
		struct engine_snapshot snap;
		size_t recsz = (sizeof(struct pb_rec_resource) + 8 + 7) & ~(size_t)7;
		uint64_t recs = 0;
		double t0, dt;

		if (!e)
			die("engine__new (burst)");
		/* 3/4 of the ring: nothing should drop */
		burst_pairs = (long)((eo.ringbuf_bytes / recsz) * 3 / 4 / 2);
		t0 = now_s();
		run_combo(&combos[2], burst_pairs);	/* nop5_entry: fastest fill */
		burst_fill_s += now_s() - t0;
		t0 = now_s();
		while (engine__poll(e, 0, count_rec, &recs) > 0)
			;
		dt = now_s() - t0;
		burst_s += dt;
		burst_recs += recs;
		burst_rate[b] = burst_rates[b] = dt > 0 ? (double)recs / dt : 0;
		if (engine__snapshot(e, &snap) == 0)
			burst_drops += snap.engine.ringbuf_drops;
		engine__free(e);
	}

	printf("{\n  \"calls_per_round\": {\"none\": %ld, \"probed\": %ld},\n  \"rounds\": %d,\n",
	       2 * n_none, 2 * n, rounds);
	printf("  \"sites\": {");
	for (size_t i = 0; i < p->n_sites; i++)
		printf("%s\"%s%s\": {\"insn_len\": %u, \"insn\": \"%s\", \"note\": \"%s\"}",
		       i ? ", " : "", p->manifest->events[p->sites[i].descriptor].id,
		       p->sites[i].retprobe ? "@return" : "", p->sites[i].insn_len,
		       p->sites[i].insn_text, p->sites[i].note ? p->sites[i].note : "");
	printf("},\n  \"ns_per_call_median\": {\n");
	double med[M__N][NCOMBO];
	for (int mode = 0; mode < M__N; mode++) {
		printf("    \"%s\": {", mode_names[mode]);
		for (size_t c = 0; c < NCOMBO; c++) {
			double v[64];

			memcpy(v, ns[mode][c], sizeof(double) * (size_t)rounds);
			med[mode][c] = median(v, rounds);
			printf("%s\"%s\": %.2f", c ? ", " : "", combos[c].name, med[mode][c]);
		}
		printf("}%s\n", mode + 1 < M__N ? "," : "");
	}
	printf("  },\n  \"ns_per_call_all_rounds\": {\n");
	for (int mode = 0; mode < M__N; mode++) {
		printf("    \"%s\": {", mode_names[mode]);
		for (size_t c = 0; c < NCOMBO; c++) {
			printf("%s\"%s\": [", c ? ", " : "", combos[c].name);
			for (int r = 0; r < rounds; r++)
				printf("%s%.2f", r ? ", " : "", ns[mode][c][r]);
			printf("]");
		}
		printf("}%s\n", mode + 1 < M__N ? "," : "");
	}
	printf("  },\n  \"ratio_to_empty_probe\": {\n");
	for (int mode = M_AGG; mode < M__N; mode++) {
		printf("    \"%s\": {", mode_names[mode]);
		for (size_t c = 0; c < NCOMBO; c++) {
			double den = med[M_EMPTY][c] - med[M_NONE][c];
			double num = med[mode][c] - med[M_NONE][c];

			printf("%s\"%s\": %.3f", c ? ", " : "", combos[c].name, den > 0 ? num / den : -1.0);
		}
		printf("}%s\n", mode + 1 < M__N ? "," : "");
	}
	printf("  },\n  \"setup_s_median\": {");
	for (int mode = 0; mode < M__N; mode++)
		printf("%s\"%s\": %.4f", mode ? ", " : "", mode_names[mode], median(load_s[mode], rounds));
	printf("},\n");
	printf("  \"events_mode_concurrent_drain\": {\"records_drained\": %llu, \"records_submitted\": %llu, "
	       "\"drops\": %llu, \"wall_s\": %.4f, \"records_per_s_wall\": %.0f, "
	       "\"drainer_busy_s\": %.4f, \"records_per_s_busy\": %.0f},\n",
	       (unsigned long long)ev_records, (unsigned long long)ev_submitted,
	       (unsigned long long)ev_drops, ev_wall, ev_wall > 0 ? ev_records / ev_wall : 0,
	       ev_busy, ev_busy > 0 ? ev_records / ev_busy : 0);
	printf("  \"drain_burst\": {\"ringbuf_bytes\": %u, \"record_bytes\": %zu, \"bursts\": %d, "
	       "\"calls_per_burst\": %ld, \"fill_s_total\": %.4f, \"records_drained_total\": %llu, "
	       "\"drops_total\": %llu, \"drain_s_total\": %.4f, \"records_per_s_each\": [",
	       BURST_RING, sizeof(struct pb_rec_resource), BURSTS, 2 * burst_pairs, burst_fill_s,
	       (unsigned long long)burst_recs, (unsigned long long)burst_drops, burst_s);
	for (int b = 0; b < BURSTS; b++)
		printf("%s%.0f", b ? ", " : "", burst_rates[b]);
	printf("], \"records_per_s\": %.0f}\n}\n", median(burst_rate, BURSTS));
	plan__free(p);
	manifest__free(m);
	return 0;
}

static int cmd_loop(long n)
{
	double ns = run_combo(&combos[2], n);	/* nop5_entry: the cheapest probe */

	printf("{\"calls\": %ld, \"ns_per_call\": %.2f}\n", 2 * n, ns);
	return 0;
}

static int cmd_attach(const char *bin, int rounds, int srounds)
{
	struct elf_image *img = elf_image__open(bin);
	size_t nsym, n = 0, cap = 0;
	uint64_t *offs = NULL;
	double am[64], dm[64], as[64], ds[64];
	int r;
	struct bench_empty_bpf *sk;

	if (!img)
		die("elf_image__open");
	if (rounds > 64)
		rounds = 64;
	if (srounds > 64)
		srounds = 64;
	if (rounds < 1 || srounds < 1)
		return 2;
	nsym = elf_image__symbol_count(img);
	for (size_t i = 0; i < nsym; i++) {
		struct elf_symbol s;

		if (elf_image__symbol_by_index(img, i, &s) || strncmp(s.name, "f_", 2) ||
		    s.from_dynsym)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			offs = realloc(offs, cap * sizeof(*offs));
			if (!offs)
				die("realloc");
		}
		offs[n++] = s.file_offset;
	}
	elf_image__free(img);
	sk = bench_empty_bpf__open_and_load();
	if (!sk)
		die("bench_empty load");
	struct bpf_link **links = calloc(n, sizeof(*links));

	for (r = 0; r < rounds; r++) {
		LIBBPF_OPTS(bpf_uprobe_multi_opts, mo, .offsets = (size_t *)offs, .cnt = n);
		struct bpf_link *l;
		double t0 = now_s();

		l = bpf_program__attach_uprobe_multi(sk->progs.empty_entry, -1, bin, NULL, &mo);
		if (!l)
			die("attach uprobe_multi");
		am[r] = now_s() - t0;
		t0 = now_s();
		bpf_link__destroy(l);
		dm[r] = now_s() - t0;
	}
	/* single links: detaching each one costs a synchronous uprobe
	 * unregister, so these rounds are few */
	for (r = 0; r < srounds; r++) {
		double t0 = now_s();

		for (size_t i = 0; i < n; i++) {
			links[i] = bpf_program__attach_uprobe(sk->progs.empty_single, false, -1, bin,
							      offs[i]);
			if (!links[i])
				die("attach single uprobe");
		}
		as[r] = now_s() - t0;
		t0 = now_s();
		for (size_t i = 0; i < n; i++)
			bpf_link__destroy(links[i]);
		ds[r] = now_s() - t0;
	}
	bench_empty_bpf__destroy(sk);
	double a1 = median(am, rounds), d1 = median(dm, rounds);
	double a2 = median(as, srounds), d2 = median(ds, srounds);

	printf("{\"sites\": %zu, \"rounds_multi\": %d, \"rounds_single\": %d,\n"
	       " \"uprobe_multi_one_link\": {\"attach_ms\": %.3f, \"detach_ms\": %.3f},\n"
	       " \"single_links\": {\"attach_ms\": %.3f, \"detach_ms\": %.3f},\n"
	       " \"ratio_single_over_multi\": {\"attach\": %.2f, \"detach\": %.2f}}\n",
	       n, rounds, srounds, a1 * 1e3, d1 * 1e3, a2 * 1e3, d2 * 1e3, a2 / a1, d2 / d1);
	free(links);
	free(offs);
	return 0;
}

int main(int argc, char **argv)
{
	ssize_t k = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	if (k <= 0)
		die("readlink /proc/self/exe");
	self_path[k] = 0;
	libbpf_set_print(NULL);
	if (argc == 5 && !strcmp(argv[1], "cost"))
		return cmd_cost(argv[2], atol(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "loop"))
		return cmd_loop(atol(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "attach"))
		return cmd_attach(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: engine_bench cost MANIFEST N ROUNDS | loop N | attach BINARY MULTI_ROUNDS SINGLE_ROUNDS\n");
	return 2;
}
