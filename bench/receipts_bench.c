/* SPDX-License-Identifier: BSD-2-Clause */
/* receipts_bench.c: numbers for docs/receipts.md and bench/results/receipts.json
 * (run through bench/receipts.sh).
 *
 *   receipts_bench chain DIR N   N generations of tests/bpf/rcpt_xdp.bpf.c,
 *                                each derived from the previous one with one
 *                                immediate rewritten, then the same generation
 *                                loaded N more times: bytes per generation
 *                                (receipt, artifacts after dedup, log) and
 *                                capture cost vs the load's verifier+JIT time
 *   receipts_bench chain DIR N B  the same with group commit, one sync per
 *                                B generations (B = 0: fsync per write);
 *                                adds the log appends and the syncs,
 *                                amortized, to the capture cost
 *   receipts_bench loads M       M plain loads+closes of a small program
 *                                (the observer-overhead workload)
 * Prints one JSON object.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/clock.h"
#include "receipts/capture.h"
#include "receipts/lifelog.h"
#include "receipts/store.h"
#include "rcpt_xdp.skel.h"

#define RCPT_MARK 0x5eed01

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n ? v[n / 2] : 0;
}

struct sizes {
	uint64_t receipts, artifacts, n_objects;
};

static int size_object(const char *hex, const char *path, void *ctx)
{
	struct sizes *sz = ctx;
	struct stat st;
	FILE *f;
	char head[64] = "";

	if (stat(path, &st))
		return 0;
	sz->n_objects++;
	f = fopen(path, "r");
	if (f) {
		if (!fgets(head, sizeof(head), f))
			head[0] = 0;
		fclose(f);
	}
	if (strstr(head, "{\"_type\":\"https://in-toto.io/Statement/v1\""))
		sz->receipts += st.st_size;
	else
		sz->artifacts += st.st_size;
	return 0;
}

static int load_one(struct pb_store *s, const char *parent, int delta, struct rcpt_xdp_bpf **skel,
		    struct pb_generation **g, uint64_t *capture_only_ns)
{
	struct pb_generation_opts o = { .sz = sizeof(o), .parent_generation_id = parent,
					.optimizer_name = "bench", .optimizer_version = "1" };
	struct bpf_program *prog;
	struct bpf_insn *insns;
	struct pb_capture *c;
	size_t i, cnt;
	uint64_t t0;
	char ev[64];
	int err;

	*skel = rcpt_xdp_bpf__open();
	if (!*skel)
		return -errno;
	prog = (*skel)->progs.rcpt_xdp;
	cnt = bpf_program__insn_cnt(prog);
	insns = malloc(cnt * sizeof(*insns));
	memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
	for (i = 0; i < cnt; i++)
		if (insns[i].imm == RCPT_MARK)
			insns[i].imm += delta;
	bpf_program__set_insns(prog, insns, cnt);
	free(insns);
	if ((err = pb_generation__begin(s, &o, g)))
		return err;
	snprintf(ev, sizeof(ev), "epoch %d", delta);
	if (parent && ((err = pb_generation__add_transform(*g, "const-inline/mark", ev, ev, strlen(ev))) ||
		       (err = pb_generation__add_assumption(*g, "profile-epoch", ev, ev, strlen(ev)))))
		return err;
	if ((err = pb_generation__load(*g, (*skel)->obj, prog)))
		return err;
	/* the bpf_prog_info read alone, without hashing and storing */
	t0 = pb_mono_ns();
	if (!capture__prog_fd(bpf_program__fd(prog), &c))
		capture__free(c);
	*capture_only_ns = pb_mono_ns() - t0;
	return 0;
}

static off_t file_size(const char *dir, const char *name)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) ? 0 : st.st_size;
}

static int bench_chain(const char *dir, int n, int batch)
{
	uint64_t sync_ns = 0, append_ns = 0, t1;
	uint64_t *load = calloc(2 * n, 8), *cap = calloc(2 * n, 8), *caponly = calloc(2 * n, 8);
	struct sizes after_chain = { 0 }, after_reloads = { 0 };
	char parent[PB_DIGEST_HEX_LEN] = "";
	struct pb_store *s;
	json_t *entries, *e;
	off_t log_chain = 0, log_all;
	size_t k;
	int i, err, m = 0;

	if ((err = pb_store__open(dir, NULL, &s)))
		return err;
	if (batch && (err = pb_store__group_begin(s)))
		return err;
	for (i = 0; i < 2 * n; i++) {
		struct rcpt_xdp_bpf *skel;
		struct pb_generation *g;
		bool reload = i >= n;	/* second half: the last generation again */

		err = load_one(s, parent[0] ? parent : NULL, reload ? n - 1 : i, &skel, &g, &caponly[i]);
		if (err) {
			fprintf(stderr, "load %d: %s\n", i, strerror(-err));
			return err;
		}
		if (!reload)
			snprintf(parent, sizeof(parent), "%s", pb_generation__id(g));
		if (i == n - 1) {
			/* reloads derive from the same parent as the last one */
			json_t *r;

			store__get_json(s, pb_generation__receipt_digest(g), &r);
			snprintf(parent, sizeof(parent), "%s",
				 json_string_value(json_object_get(json_object_get(r, "predicate"),
								   "parent_generation_id")) ?: "");
			json_decref(r);
		}
		rcpt_xdp_bpf__destroy(skel);
		t1 = pb_mono_ns();
		pb_generation__record_unloaded(g);
		append_ns += pb_mono_ns() - t1;
		pb_generation__free(g);
		if (batch && (i + 1) % batch == 0) {
			t1 = pb_mono_ns();
			if ((err = pb_store__group_sync(s)))
				return err;
			sync_ns += pb_mono_ns() - t1;
		}
		if (i == n - 1) {
			store__for_each_object(s, size_object, &after_chain);
			log_chain = file_size(dir, PB_LIFELOG_NAME);
		}
	}
	t1 = pb_mono_ns();
	if (batch && (err = pb_store__group_end(s)))
		return err;
	sync_ns += pb_mono_ns() - t1;
	store__for_each_object(s, size_object, &after_reloads);
	log_all = file_size(dir, PB_LIFELOG_NAME);
	lifelog__read(s, &entries, NULL);
	json_array_foreach(entries, k, e) {
		json_t *t = json_object_get(e, "timing");

		if (!t)
			continue;
		load[m] = json_integer_value(json_object_get(t, "load_ns"));
		cap[m] = json_integer_value(json_object_get(t, "capture_ns"));
		m++;
	}
	json_decref(entries);
	{
		uint64_t ml = median(load, m), mc = median(cap, m), mo = median(caponly, 2 * n);
		/* durable cost per generation: capture + objects, its log
		 * appends ('loaded' is in capture_ns only when fsynced per
		 * entry, so both appends are counted as the 'unloaded' one),
		 * and the syncs spread over the generations */
		uint64_t dur = mc + 2 * append_ns / (2 * n) + sync_ns / (2 * n);

		printf("{\"generations\":%d,\"reloads\":%d,"
		       "\"per_generation_bytes\":{\"receipt\":%llu,\"artifacts_after_dedup\":%llu,\"log\":%llu},"
		       "\"per_identical_reload_bytes\":{\"receipt\":%llu,\"artifacts_after_dedup\":%llu,\"log\":%llu},"
		       "\"objects\":%llu,"
		       "\"median_load_ns\":%llu,\"median_capture_and_store_ns\":%llu,\"median_prog_info_read_ns\":%llu,"
		       "\"capture_and_store_to_load_ratio\":%.3f,\"prog_info_read_to_load_ratio\":%.4f,"
		       "\"group_commit_batch\":%d,\"median_log_append_ns\":%llu,\"sync_ns_per_generation\":%llu,"
		       "\"durable_capture_ns_per_generation\":%llu,\"durable_capture_to_load_ratio\":%.3f}\n",
		       n, n,
		       (unsigned long long)(after_chain.receipts / n), (unsigned long long)(after_chain.artifacts / n),
		       (unsigned long long)(log_chain / n),
		       (unsigned long long)((after_reloads.receipts - after_chain.receipts) / n),
		       (unsigned long long)((after_reloads.artifacts - after_chain.artifacts) / n),
		       (unsigned long long)((log_all - log_chain) / n),
		       (unsigned long long)after_reloads.n_objects,
		       (unsigned long long)ml, (unsigned long long)mc, (unsigned long long)mo,
		       ml ? (double)mc / ml : 0.0, ml ? (double)mo / ml : 0.0, batch,
		       (unsigned long long)(append_ns / (2 * n)), (unsigned long long)(sync_ns / (2 * n)),
		       (unsigned long long)dur, ml ? (double)dur / ml : 0.0);
	}
	pb_store__free(s);
	free(load);
	free(cap);
	free(caponly);
	return 0;
}

static int bench_loads(int m)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 2 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint64_t *t = calloc(m, 8), t0, start = pb_mono_ns();
	int i, fd;

	for (i = 0; i < m; i++) {
		t0 = pb_mono_ns();
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "bench_load", "GPL", prog, 2, NULL);
		if (fd < 0)
			return -errno;
		close(fd);
		t[i] = pb_mono_ns() - t0;
	}
	printf("{\"loads\":%d,\"median_load_close_ns\":%llu,\"total_ns\":%llu}\n", m,
	       (unsigned long long)median(t, m), (unsigned long long)(pb_mono_ns() - start));
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int err = -EINVAL;

	libbpf_set_print(NULL);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "chain"))
		err = bench_chain(argv[2], atoi(argv[3]), argc == 5 ? atoi(argv[4]) : 0);
	else if (argc == 3 && !strcmp(argv[1], "loads"))
		err = bench_loads(atoi(argv[2]));
	else
		fprintf(stderr, "usage: %s chain DIR N [BATCH] | loads M\n", argv[0]);
	if (err)
		fprintf(stderr, "receipts_bench: %s\n", strerror(-err));
	return err ? 1 : 0;
}
