/* SPDX-License-Identifier: BSD-2-Clause */
/* test_attribute.c: the generation interval table on synthetic lifecycle
 * logs and kernel records (swap with overlap, JIT address reuse under the
 * same symbol name, a dropped activation, lost records, tail-call
 * spanning, no receipt, ambiguity), the sample file, the perf script and
 * time parsers; and a real-BPF scenario (test_burn_generations) that
 * loads, swaps and burns three generations of tests/bpf/attr_burn.bpf.c
 * plus one program without receipts.
 *
 * PB_ATTR_STORE=DIR keeps the scenario's store in DIR and writes its
 * timeline to DIR.timeline (tests/cli/attribute_cli.sh samples the
 * machine meanwhile and checks the attribution against it).
 */
#include "harness.h"
#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <net/if.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attribute/itable.h"
#include "attribute/perfscript.h"
#include "attribute/samples.h"
#include "attribute/timespec.h"
#include "probity/receipts.h"
#include "receipts/lifelog.h"
#include "attr_burn.skel.h"

#define GA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define GB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define GC "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define GG "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define TAG1 "0123456789abcdef"

/* ---------------------------- synthetic logs ---------------------------- */

static json_t *loaded(const char *gen, unsigned prog, const char *tag, const char *addr, unsigned len,
		      uint64_t mono)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:[{s:s, s:I}], s:I, s:I, s:s, s:{s:I, s:I}}", "kind", "loaded",
			 "generation_id", gen, "prog_id", (json_int_t)prog, "prog_tag", tag, "jit_ranges",
			 "addr", addr, "len", (json_int_t)len, "mono_ns", (json_int_t)mono,
			 "realtime_ns", (json_int_t)(mono + 1000000000000ull), "source", "library", "timing",
			 "load_ns", (json_int_t)5, "capture_ns", (json_int_t)5);
}

static json_t *activated(const char *gen, unsigned prog, unsigned link, uint64_t b, uint64_t e,
			 const char *replaces)
{
	return json_pack("{s:s, s:s, s:I, s:{s:I, s:I}, s:I, s:I, s:I, s:o}", "kind", "activated",
			 "generation_id", gen, "prog_id", (json_int_t)prog, "link", "id", (json_int_t)link,
			 "type", (json_int_t)2, "swap_begin_mono_ns", (json_int_t)b, "swap_end_mono_ns",
			 (json_int_t)e, "mono_ns", (json_int_t)e,
			 "replaces", replaces ? json_string(replaces) : json_null());
}

static json_t *retired(const char *gen, unsigned prog, uint64_t mono, const char *reason)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:s}", "kind", "retired", "generation_id", gen, "prog_id",
			 (json_int_t)prog, "mono_ns", (json_int_t)mono, "reason", reason);
}

static json_t *unloaded(const char *gen, unsigned prog, uint64_t mono, const char *addr, uint64_t unreg)
{
	json_t *e = json_pack("{s:s, s:s, s:I, s:I}", "kind", "unloaded", "generation_id", gen, "prog_id",
			      (json_int_t)prog, "mono_ns", (json_int_t)mono);

	if (addr)
		json_object_set_new(e, "ksymbols_unregistered",
				    json_pack("[{s:s, s:I, s:s, s:I}]", "addr", addr, "len", (json_int_t)0x100,
					      "name", "bpf_prog_" TAG1 "_x", "mono_ns", (json_int_t)unreg));
	return e;
}

static struct attr_table *table_of(json_t *entries)
{
	struct attr_table *t = attr_table__new();

	if (!t || attr_table__add_lifelog(t, entries) || attr_table__build(t)) {
		attr_table__free(t);
		t = NULL;
	}
	json_decref(entries);
	return t;
}

static const char *gen_at(struct attr_table *t, uint64_t time, uint64_t ip, struct attr_result *r)
{
	attr_table__lookup(t, time, ip, NULL, r);
	return r->status == ATTR_GENERATION ? r->generation_id : NULL;
}

/* A swapped for B on link 5; both images alive until A's ksymbol goes:
 * a sample in A's code after the swap is A's (other CPUs finish the old
 * image), one in B's code is B's; the link says B after the swap window
 * and "inside swap window" within it. */
TEST(test_swap_with_overlap)
{
	struct attr_table *t = table_of(json_pack("[o, o, o, o, o, o]",
		loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
		activated(GA, 10, 5, 100, 110, NULL),
		loaded(GB, 11, "1111111111111111", "0x2000", 0x100, 150),
		activated(GB, 11, 5, 200, 210, GA),
		retired(GA, 10, 210, "replaced"),
		unloaded(GA, 10, 300, "0x1000", 290)));
	struct attr_result r;
	json_t *segs;

	ASSERT_NOT_NULL(t);
	ASSERT_STREQ(gen_at(t, 150, 0x1010, &r), GA);
	ASSERT_TRUE(r.definite);
	ASSERT_STREQ(gen_at(t, 250, 0x1010, &r), GA);	/* old image, after the swap */
	ASSERT_STREQ(gen_at(t, 250, 0x2010, &r), GB);
	ASSERT_EQ(gen_at(t, 350, 0x1010, &r) == NULL, 1);
	ASSERT_EQ(r.status, ATTR_NOT_BPF);		/* unregistered at 290 */
	ASSERT_EQ(gen_at(t, 150, 0x5000, &r) == NULL, 1);
	ASSERT_EQ(r.status, ATTR_NOT_BPF);
	ASSERT_OK(attr_table__at(t, "link:5", 150, &r, NULL));
	ASSERT_EQ(r.status, ATTR_GENERATION);
	ASSERT_STREQ(r.generation_id, GA);
	ASSERT_OK(attr_table__at(t, "link:5", 205, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_SWAP_WINDOW);
	ASSERT_OK(attr_table__at(t, "link:5", 250, &r, NULL));
	ASSERT_STREQ(r.generation_id, GB);
	ASSERT_EQ(attr_table__at(t, "link:9", 250, &r, NULL), -ENOENT);
	segs = attr_table__window(t, "link:5", 150, 250);
	ASSERT_NOT_NULL(segs);
	ASSERT_EQ(json_array_size(segs), 2);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(segs, 0), "generation_id")), GA);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(segs, 1), "generation_id")), GB);
	ASSERT_EQ(json_integer_value(json_object_get(json_object_get(json_array_get(segs, 1), "start"),
						     "earliest")), 200);
	ASSERT_EQ(json_integer_value(json_object_get(json_array_get(segs, 0), "old_image_alive_until")), 290);
	json_decref(segs);
	attr_table__free(t);
}

/* The same bytecode loaded again after the first copy was unloaded gets
 * the same symbol name and here the same JIT address: time decides. */
TEST(test_jit_reuse_same_name)
{
	struct attr_table *t = table_of(json_pack("[o, o, o]",
		loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
		unloaded(GA, 10, 300, "0x1000", 290),
		loaded(GC, 12, TAG1, "0x1000", 0x100, 400)));
	struct attr_result r;

	ASSERT_NOT_NULL(t);
	ASSERT_STREQ(gen_at(t, 200, 0x1010, &r), GA);
	ASSERT_STREQ(gen_at(t, 500, 0x1010, &r), GC);
	ASSERT_EQ(r.prog_id, 12);
	ASSERT_EQ(gen_at(t, 350, 0x1010, &r) == NULL, 1);	/* between the two */
	attr_table__free(t);
}

/* Group commit: the log's entries get seq numbers; a watermark says
 * which are durable. */
static json_t *seqd(json_t *entries)
{
	json_t *e;
	size_t i;

	json_array_foreach(entries, i, e)
		json_object_set_new(e, "seq", json_integer((json_int_t)i));
	return entries;
}

static json_t *durable(const char *state, long long through, uint64_t mono)
{
	return json_pack("{s:s, s:s, s:I, s:I}", "kind", "durable", "state", state, "through_seq",
			 (json_int_t)through, "mono_ns", (json_int_t)mono);
}

/* A group-committing writer died after its watermark covered A's load
 * and activation but before B's swap was synced: time after A's
 * activation entry is unknown ("after the last durable log entry"), never
 * A (whose interval the lost entries would have closed). With the final
 * watermark, the same entries are all durable. */
TEST(test_group_commit_horizon)
{
	json_t *log = seqd(json_pack("[o, o, o, o, o, o, o]",
		durable("open", -1, 10),
		loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
		activated(GA, 10, 5, 100, 110, NULL),
		durable("sync", 2, 120),
		loaded(GB, 11, "1111111111111111", "0x2000", 0x100, 150),
		activated(GB, 11, 5, 200, 210, GA),
		retired(GA, 10, 210, "replaced")));
	struct attr_table *t;
	struct attr_result r;
	json_t *st;

	json_incref(log);
	t = table_of(log);
	ASSERT_NOT_NULL(t);
	ASSERT_STREQ(gen_at(t, 105, 0x1010, &r), GA);
	ASSERT_EQ(gen_at(t, 250, 0x1010, &r) == NULL, 1);
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_NOT_DURABLE);
	ASSERT_EQ(gen_at(t, 250, 0x2010, &r) == NULL, 1);	/* B never durably loaded */
	ASSERT_OK(attr_table__at(t, "link:5", 105, &r, NULL));
	ASSERT_STREQ(r.generation_id, GA);
	ASSERT_OK(attr_table__at(t, "link:5", 250, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_NOT_DURABLE);
	st = attr_table__stats(t);
	ASSERT_EQ(json_integer_value(json_object_get(st, "entries_not_durable")), 4);
	ASSERT_EQ(json_integer_value(json_object_get(st, "durable_horizon_mono_ns")), 110);
	json_decref(st);
	attr_table__free(t);

	/* the writer ended its group: everything is durable */
	json_array_append_new(log, durable("final", 7, 300));
	t = table_of(seqd(log));
	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:5", 250, &r, NULL));
	ASSERT_STREQ(r.generation_id, GB);
	ASSERT_STREQ(gen_at(t, 250, 0x2010, &r), GB);
	attr_table__free(t);
}

/* The same through a real store and a real crash: a child writes in
 * group-commit mode, syncs once, writes two more entries and is killed
 * (PROBITY_TEST_CRASH=group-before-sync) at the next sync. The log reads
 * back whole; its last watermark covers what was synced; attribution
 * keeps the rest out and counts it. */
TEST(test_group_commit_crash)
{
	char dir[] = "/tmp/pbgroup.XXXXXX";
	struct pb_store *s = NULL;
	struct attr_table *t;
	json_t *entries = NULL, *st;
	int status = 0, i;
	pid_t pid;

	ASSERT_NOT_NULL(mkdtemp(dir));
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		if (pb_store__open(dir, NULL, &s) || pb_store__group_begin(s))
			_exit(2);
		for (i = 0; i < 4; i++) {
			json_t *e = retired(GA, 10, 100 + i, "replaced");

			if (lifelog__append(s, LIFE_RETIRED, e, NULL))
				_exit(3);
			json_decref(e);
			if (i == 1 && pb_store__group_sync(s))
				_exit(4);
		}
		setenv("PROBITY_TEST_CRASH", "group-before-sync", 1);
		pb_store__group_sync(s);
		_exit(5);	/* not reached */
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_EQ(lifelog__read(s, &entries, NULL), 0);
	/* open(0), two retired(1, 2), sync(3, through 2), two retired(4, 5) */
	ASSERT_EQ(json_array_size(entries), 6);
	t = attr_table__new();
	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__add_lifelog(t, entries));
	ASSERT_OK(attr_table__build(t));
	st = attr_table__stats(t);
	ASSERT_EQ(json_integer_value(json_object_get(st, "entries_not_durable")), 3);
	json_decref(st);
	attr_table__free(t);
	json_decref(entries);
	pb_store__free(s);
	/* a clean close writes the final watermark: nothing is left out */
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_OK(pb_store__group_begin(s));
	pb_store__free(s);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_EQ(lifelog__read(s, &entries, NULL), 0);
	t = attr_table__new();
	ASSERT_OK(attr_table__add_lifelog(t, entries));
	ASSERT_OK(attr_table__build(t));
	st = attr_table__stats(t);
	ASSERT_EQ(json_integer_value(json_object_get(st, "entries_not_durable")), 0);
	json_decref(st);
	attr_table__free(t);
	json_decref(entries);
	pb_store__free(s);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ASSERT_OK(system(cmd));
	}
}

/* the same through a sample file's kernel records: register, unregister,
 * register again at the address, same name; the bpf_event names the id */
TEST(test_jit_reuse_kernel_records)
{
	struct attr_table *t = attr_table__new();
	struct sf_record r = { 0 };
	struct attr_result res;
	uint8_t tag[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	json_t *e = json_pack("[o, o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 60),
			      loaded(GC, 12, TAG1, "0x1000", 0x100, 410));

	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__add_lifelog(t, e));
	json_decref(e);
	r.type = SF_REC_KSYMBOL;
	r.time = 50;
	r.ksym.addr = 0x1000;
	r.ksym.len = 0x100;
	r.ksym.ksym_type = 1;
	r.ksym.name = "bpf_prog_" TAG1 "_x";
	ASSERT_OK(attr_table__add_record(t, &r));
	r.time = 400;	/* the second registration, recorded before the first unregister in file order */
	ASSERT_OK(attr_table__add_record(t, &r));
	r.time = 290;
	r.ksym.flags = 1;
	ASSERT_OK(attr_table__add_record(t, &r));
	memset(&r, 0, sizeof(r));
	r.type = SF_REC_BPF_EVENT;
	r.time = 51;
	r.bpf.event = 1;
	r.bpf.prog_id = 10;
	memcpy(r.bpf.tag, tag, 8);
	ASSERT_OK(attr_table__add_record(t, &r));
	r.time = 401;
	r.bpf.prog_id = 12;
	ASSERT_OK(attr_table__add_record(t, &r));
	ASSERT_OK(attr_table__build(t));
	ASSERT_STREQ(gen_at(t, 200, 0x1010, &res), GA);
	ASSERT_TRUE(res.definite);
	ASSERT_STREQ(gen_at(t, 500, 0x10ff, &res), GC);
	ASSERT_EQ(gen_at(t, 350, 0x1010, &res) == NULL, 1);
	ASSERT_EQ(res.status, ATTR_NOT_BPF);
	attr_table__free(t);
}

/* A then C on link 5, but C's activation says it replaced B: B's
 * activation was lost. Between them the link is unknown, not C. */
TEST(test_dropped_activation_unknown)
{
	struct attr_table *t = table_of(json_pack("[o, o, o, o, o]",
		loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
		activated(GA, 10, 5, 100, 110, NULL),
		loaded(GB, 11, "1111111111111111", "0x2000", 0x100, 150),
		loaded(GC, 12, "2222222222222222", "0x3000", 0x100, 350),
		activated(GC, 12, 5, 400, 410, GB)));
	struct attr_result r;
	json_t *segs, *v;
	size_t i;
	int unknown = 0;

	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:5", 250, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_HANDOFF_LOST);
	ASSERT_OK(attr_table__at(t, "link:5", 150, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);	/* A or B: never the newest by default */
	ASSERT_OK(attr_table__at(t, "link:5", 500, &r, NULL));
	ASSERT_STREQ(r.generation_id, GC);
	segs = attr_table__window(t, "link:5", 0, 1000);
	ASSERT_NOT_NULL(segs);
	json_array_foreach(segs, i, v) {
		if (!strcmp(json_string_value(json_object_get(v, "status")), "unknown")) {
			unknown++;
			ASSERT_STREQ(json_string_value(json_object_get(v, "reason")), "handoff not recorded");
			ASSERT_STREQ(json_string_value(json_array_get(json_object_get(v, "candidates"), 0)), GA);
			ASSERT_STREQ(json_string_value(json_array_get(json_object_get(v, "candidates"), 1)), GB);
		}
	}
	ASSERT_EQ(unknown, 1);
	json_decref(segs);
	/* samples still go by address: B's code is B's */
	ASSERT_STREQ(gen_at(t, 250, 0x2010, &r), GB);
	attr_table__free(t);
}

/* The swapper lost a handoff entirely (A -> X, X has no record at all)
 * and later swaps A back in without knowing what it replaced
 * (replaces: null), but the kernel told it which program the link ran
 * (old_prog_id = X's id): the span in between is unknown, never A. Without
 * old_prog_id nothing tells the gap, and A stays (the limit documented). */
TEST(test_dropped_handoff_old_prog_id)
{
	json_t *back = activated(GA, 10, 5, 400, 410, NULL);
	struct attr_table *t;
	struct attr_result r;

	json_object_set_new(back, "old_prog_id", json_integer(77));
	t = table_of(json_pack("[o, o, o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
			       activated(GA, 10, 5, 100, 110, NULL), back));
	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:5", 250, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_HANDOFF_LOST);
	ASSERT_OK(attr_table__at(t, "link:5", 500, &r, NULL));
	ASSERT_STREQ(r.generation_id, GA);
	attr_table__free(t);
	/* the kernel's word agrees with the record: continuous */
	back = activated(GB, 11, 5, 400, 410, NULL);
	json_object_set_new(back, "old_prog_id", json_integer(10));
	t = table_of(json_pack("[o, o, o, o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
			       loaded(GB, 11, "1111111111111111", "0x2000", 0x100, 150),
			       activated(GA, 10, 5, 100, 110, NULL), back));
	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:5", 250, &r, NULL));
	ASSERT_STREQ(r.generation_id, GA);
	attr_table__free(t);
}

/* A generation retired with no recorded successor: after it, unknown. */
TEST(test_retired_without_successor)
{
	struct attr_table *t = table_of(json_pack("[o, o, o]",
		loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
		activated(GA, 10, 5, 100, 110, NULL),
		retired(GA, 10, 300, "detached")));
	struct attr_result r;

	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:5", 200, &r, NULL));
	ASSERT_STREQ(r.generation_id, GA);
	ASSERT_OK(attr_table__at(t, "link:5", 400, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_NO_ACTIVATION);
	attr_table__free(t);
	/* the same generation loaded twice (prog 10, then prog 13 on link 8):
	 * the first load's unload does not end the second's activation */
	t = table_of(json_pack("[o, o, o, o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 50),
			       loaded(GA, 13, TAG1, "0x5000", 0x100, 60),
			       activated(GA, 13, 8, 100, 110, NULL), unloaded(GA, 10, 200, NULL, 0)));
	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:8", 300, &r, NULL));
	ASSERT_EQ(r.status, ATTR_GENERATION);
	ASSERT_STREQ(r.generation_id, GA);
	attr_table__free(t);
	/* unloaded while installed, no retirement: when it was detached is
	 * unknown anywhere between its activation and the unload */
	t = table_of(json_pack("[o, o, o]", loaded(GB, 11, TAG1, "0x2000", 0x100, 50),
			       activated(GB, 11, 6, 100, 110, NULL), unloaded(GB, 11, 500, NULL, 0)));
	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__at(t, "link:6", 300, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_OK(attr_table__at(t, "link:6", 600, &r, NULL));
	ASSERT_EQ(r.status, ATTR_UNKNOWN);
	ASSERT_EQ(r.reason, ATTR_R_NO_ACTIVATION);
	attr_table__free(t);
}

/* Kernel records lost while the sampler ran: a sample after the loss in
 * an image whose unregistration was not seen is unknown; before the
 * loss, or in an image seen unregistered later, it is attributed. */
TEST(test_lost_records_unknown)
{
	struct attr_table *t = attr_table__new();
	json_t *e = json_pack("[o, o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 20),
			      loaded(GB, 11, "1111111111111111", "0x2000", 0x100, 20));
	json_t *snap = json_pack("{s:I, s:[{s:I, s:s, s:[{s:s, s:I}]}, {s:I, s:s, s:[{s:s, s:I}]}]}",
				 "mono_ns", (json_int_t)100,
				 "progs", "id", (json_int_t)10, "tag", TAG1, "jit_ranges", "addr", "0x1000", "len", (json_int_t)0x100,
				 "id", (json_int_t)11, "tag", "1111111111111111", "jit_ranges", "addr", "0x2000", "len", (json_int_t)0x100);
	struct sf_record r = { 0 };
	struct attr_result res;

	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__add_lifelog(t, e));
	json_decref(e);
	ASSERT_OK(attr_table__add_snapshot(t, snap));
	json_decref(snap);
	r.type = SF_REC_LOST;
	r.time = 300;
	r.lost.since = 200;
	r.lost.lost = 7;
	ASSERT_OK(attr_table__add_record(t, &r));
	memset(&r, 0, sizeof(r));
	r.type = SF_REC_KSYMBOL;
	r.time = 900;
	r.ksym.addr = 0x2000;
	r.ksym.len = 0x100;
	r.ksym.ksym_type = 1;
	r.ksym.flags = 1;
	r.ksym.name = "bpf_prog_1111111111111111_y";
	ASSERT_OK(attr_table__add_record(t, &r));
	r.type = SF_REC_SAMPLE;
	r.time = 1000;
	ASSERT_OK(attr_table__add_record(t, &r));
	ASSERT_OK(attr_table__build(t));
	ASSERT_STREQ(gen_at(t, 150, 0x1010, &res), GA);
	ASSERT_EQ(gen_at(t, 350, 0x1010, &res) == NULL, 1);
	ASSERT_EQ(res.status, ATTR_UNKNOWN);
	ASSERT_EQ(res.reason, ATTR_R_RECORDS_LOST);
	ASSERT_STREQ(gen_at(t, 350, 0x2010, &res), GB);	/* seen alive until 900 */
	/* between the recorded images, in none: before the loss it is not
	 * BPF code anyone recorded; after it, the lost records may have
	 * held its registration (unknown, never "not BPF"); outside the
	 * span of the recorded images it stays not-BPF */
	ASSERT_EQ(gen_at(t, 150, 0x1800, &res) == NULL, 1);
	ASSERT_EQ(res.status, ATTR_NOT_BPF);
	ASSERT_EQ(gen_at(t, 350, 0x1800, &res) == NULL, 1);
	ASSERT_EQ(res.status, ATTR_UNKNOWN);
	ASSERT_EQ(res.reason, ATTR_R_RECORDS_LOST);
	ASSERT_EQ(gen_at(t, 350, 0x3000, &res) == NULL, 1);
	ASSERT_EQ(res.status, ATTR_NOT_BPF);
	attr_table__free(t);
}

/* Specialized code (S, active on the link) tail-calls the generic
 * program (G, loaded, never activated): one packet spans both. Each
 * sample goes to the image it is in; the link names S only. */
TEST(test_tail_call_spanning)
{
	struct attr_table *t = table_of(json_pack("[o, o, o]",
		loaded(GG, 21, "3333333333333333", "0x4000", 0x200, 40),
		loaded(GA, 20, TAG1, "0x3000", 0x100, 50),
		activated(GA, 20, 7, 100, 110, NULL)));
	struct attr_result r;
	json_t *segs;

	ASSERT_NOT_NULL(t);
	ASSERT_STREQ(gen_at(t, 500, 0x3040, &r), GA);
	ASSERT_STREQ(gen_at(t, 500, 0x4100, &r), GG);
	segs = attr_table__window(t, "link:7", 400, 600);
	ASSERT_NOT_NULL(segs);
	ASSERT_EQ(json_array_size(segs), 1);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(segs, 0), "generation_id")), GA);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(segs, 0), "in_window")), "whole");
	json_decref(segs);
	attr_table__free(t);
}

/* A program with no lifecycle entry: "no receipt for prog N"; two
 * lifelog intervals at one address with no unload between: ambiguous;
 * a perf symbol naming another tag excludes a candidate. */
TEST(test_no_receipt_and_ambiguous)
{
	struct attr_table *t = attr_table__new();
	json_t *e = json_pack("[o, o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 100),
			      loaded(GC, 12, "2222222222222222", "0x1000", 0x100, 400));
	struct sf_record r = { 0 };
	struct attr_result res;

	ASSERT_NOT_NULL(t);
	ASSERT_OK(attr_table__add_lifelog(t, e));
	json_decref(e);
	r.type = SF_REC_KSYMBOL;
	r.time = 50;
	r.ksym.addr = 0x9000;
	r.ksym.len = 0x80;
	r.ksym.ksym_type = 1;
	r.ksym.name = "bpf_prog_ffffffffffffffff_z";
	ASSERT_OK(attr_table__add_record(t, &r));
	memset(&r, 0, sizeof(r));
	r.type = SF_REC_BPF_EVENT;
	r.time = 50;
	r.bpf.event = 1;
	r.bpf.prog_id = 99;
	ASSERT_OK(attr_table__add_record(t, &r));
	ASSERT_OK(attr_table__build(t));
	ASSERT_EQ(gen_at(t, 60, 0x9010, &res) == NULL, 1);
	ASSERT_EQ(res.status, ATTR_UNKNOWN);
	ASSERT_EQ(res.reason, ATTR_R_NO_RECEIPT);
	ASSERT_STRSTR(res.detail, "no receipt for prog 99");
	ASSERT_EQ(gen_at(t, 500, 0x1010, &res) == NULL, 1);
	ASSERT_EQ(res.reason, ATTR_R_AMBIGUOUS);
	attr_table__lookup(t, 500, 0x1010, "bpf_prog_2222222222222222_c", &res);
	ASSERT_EQ(res.status, ATTR_GENERATION);
	ASSERT_STREQ(res.generation_id, GC);
	attr_table__lookup(t, 500, 0x7010, "bpf_prog_4444444444444444_q", &res);
	ASSERT_EQ(res.status, ATTR_UNKNOWN);
	ASSERT_EQ(res.reason, ATTR_R_NO_RECEIPT);
	attr_table__free(t);
}

/* ------------------------------ parsers ------------------------------ */

struct ps_got {
	int n;
	struct ps_sample s[4];
	char sym[4][64];
};

static int ps_cb(void *ctx, const struct ps_sample *s)
{
	struct ps_got *g = ctx;

	if (g->n < 4) {
		g->s[g->n] = *s;
		snprintf(g->sym[g->n], 64, "%s", s->sym ?: "");
		g->s[g->n].sym = g->sym[g->n];
	}
	g->n++;
	return 0;
}

TEST(test_perf_script_parse)
{
	const char *fields =
		"# header line\n"
		"   6483/6484    [001]  9653.028154:  ffffffffa0001234 bpf_prog_0123456789abcdef_attr_burn\n"
		"\n"
		"      0/0       [000]  9653.030053123:  ffffffff8225fd65 pvm_safe_halt_hc\n";
	const char *deflt =
		"       perf-exec    6483 [001]  9653.028154:    2004008 cpu-clock:ppp:  ffffffff813c84b5 sched_balance_softirq+0x5 ([kernel.kallsyms])\n"
		"\t    7fa318d94a60 __x86_cacheinfo_ifunc+0x0 (/usr/lib/libc.so.6)\n"
		"           sleep    6483 [001]  9653.030160:    2004008 cpu-clock:ppp:      7fa318d94a60 [unknown] (/usr/lib/libc.so.6)\n";
	struct ps_got g = { 0 };
	struct pb_errtext err;

	ASSERT_OK(perfscript__parse(fields, strlen(fields), ps_cb, &g, &err));
	ASSERT_EQ(g.n, 2);
	ASSERT_U64_EQ(g.s[0].time, 9653028154000ull);
	ASSERT_U64_EQ(g.s[0].ip, 0xffffffffa0001234ull);
	ASSERT_EQ(g.s[0].pid, 6483);
	ASSERT_EQ(g.s[0].tid, 6484);
	ASSERT_EQ(g.s[0].cpu, 1);
	ASSERT_STREQ(g.s[0].sym, "bpf_prog_0123456789abcdef_attr_burn");
	ASSERT_U64_EQ(g.s[1].time, 9653030053123ull);
	memset(&g, 0, sizeof(g));
	ASSERT_OK(perfscript__parse(deflt, strlen(deflt), ps_cb, &g, &err));
	ASSERT_EQ(g.n, 2);	/* the call-chain line is not a sample */
	ASSERT_U64_EQ(g.s[0].ip, 0xffffffff813c84b5ull);
	ASSERT_STREQ(g.s[0].sym, "sched_balance_softirq");
	ASSERT_EQ(g.s[0].tid, 6483);
	ASSERT_STREQ(g.sym[1], "");	/* [unknown] */
	ASSERT_ERR(perfscript__parse("x 1 [0] 12.5: zzzz sym\n", 22, ps_cb, &g, &err), -EBADMSG);
	ASSERT_STRSTR(err.msg, "line 1");
	ASSERT_STRSTR(err.msg, "instruction pointer");
}

TEST(test_time_parse)
{
	struct pb_time a, b;
	struct pb_errtext err;

	ASSERT_OK(pb_time__parse("123456789", &a, &err));
	ASSERT_U64_EQ(a.ns, 123456789ull);
	ASSERT_FALSE(a.realtime);
	ASSERT_OK(pb_time__parse("mono:9653.028154", &a, &err));
	ASSERT_U64_EQ(a.ns, 9653028154000ull);
	ASSERT_OK(pb_time__parse("9653.028154123", &a, &err));
	ASSERT_U64_EQ(a.ns, 9653028154123ull);
	ASSERT_FALSE(a.realtime);
	ASSERT_ERR(pb_time__parse("9653.", &a, &err), -EINVAL);
	ASSERT_OK(pb_time__parse("@1700000000.5", &a, &err));
	ASSERT_TRUE(a.realtime);
	ASSERT_U64_EQ(a.ns, 1700000000500000000ull);
	ASSERT_OK(pb_time__parse("2023-11-14T22:13:20.25Z", &a, &err));
	ASSERT_U64_EQ(a.ns, 1700000000250000000ull);
	ASSERT_ERR(pb_time__parse("2023-11-14T22:13:20+02:00", &a, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "UTC");
	ASSERT_ERR(pb_time__parse("soon", &a, &err), -EINVAL);
	ASSERT_ERR(pb_time__parse("99999999999999999999999", &a, &err), -EINVAL);
	ASSERT_OK(pb_time__parse_window("100..200", &a, &b, &err));
	ASSERT_U64_EQ(b.ns, 200);
	ASSERT_ERR(pb_time__parse_window("200..100", &a, &b, &err), -EINVAL);
	ASSERT_ERR(pb_time__parse_window("..100", &a, &b, &err), -EINVAL);
}

struct sf_got {
	int samples, ksyms, bpf, lost, header, snap, end;
	uint64_t last_ip;
	char name[64];
};

static int sf_hdr(void *c, const json_t *j) { ((struct sf_got *)c)->header++; return 0; }
static int sf_snap(void *c, const json_t *j) { ((struct sf_got *)c)->snap++; return 0; }
static int sf_end(void *c, const json_t *j) { ((struct sf_got *)c)->end++; return 0; }
static int sf_rec(void *c, const struct sf_record *r)
{
	struct sf_got *g = c;

	switch (r->type) {
	case SF_REC_SAMPLE: g->samples++; g->last_ip = r->sample.ip; break;
	case SF_REC_KSYMBOL: g->ksyms++; snprintf(g->name, sizeof(g->name), "%s", r->ksym.name); break;
	case SF_REC_BPF_EVENT: g->bpf++; break;
	case SF_REC_LOST: g->lost++; break;
	}
	return 0;
}

TEST(test_sample_file_roundtrip_and_torn_tail)
{
	char path[] = "/tmp/pbattr.XXXXXX";
	struct samples_writer *w;
	struct samples_read_cb cb = { sf_hdr, sf_snap, sf_rec, sf_end, NULL };
	struct sf_got g = { 0 };
	uint8_t tag[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	json_t *h = json_pack("{s:s}", "clock", "CLOCK_MONOTONIC"), *snap = json_pack("{s:[]}", "progs");
	struct pb_errtext err;
	struct stat st;
	int fd = mkstemp(path), i;

	ASSERT_GE(fd, 0);
	close(fd);
	cb.ctx = &g;
	ASSERT_OK(samples_writer__create(path, h, &w));
	ASSERT_OK(samples_writer__snapshot(w, snap));
	for (i = 0; i < 5000; i++)
		ASSERT_OK(samples_writer__sample(w, i & 1, 1000 + i, 0xffffffffa0000000ull + i, 7, 8, SF_MODE_KERNEL));
	ASSERT_OK(samples_writer__ksymbol(w, 0, 9000, 9000, 0xffffffffa0001000ull, 64, 1, 0, "bpf_prog_0102030405060708_f"));
	ASSERT_OK(samples_writer__bpf_event(w, 0, 9001, 9002, 1, 42, tag));
	ASSERT_OK(samples_writer__lost(w, 1, 9002, 3, 8000));
	ASSERT_OK(samples_writer__close(w, h));
	ASSERT_EQ(samples__read(path, &cb, &err), 0);
	ASSERT_EQ(g.header, 1);
	ASSERT_EQ(g.snap, 1);
	ASSERT_EQ(g.end, 1);
	ASSERT_EQ(g.samples, 5000);
	ASSERT_U64_EQ(g.last_ip, 0xffffffffa0000000ull + 4999);
	ASSERT_EQ(g.ksyms, 1);
	ASSERT_STREQ(g.name, "bpf_prog_0102030405060708_f");
	ASSERT_EQ(g.bpf, 1);
	ASSERT_EQ(g.lost, 1);
	ASSERT_TRUE(samples__is_sample_file(path));
	/* cut inside the end chunk: everything before it still reads */
	ASSERT_OK(stat(path, &st));
	ASSERT_OK(truncate(path, st.st_size - 5));
	memset(&g, 0, sizeof(g));
	ASSERT_EQ(samples__read(path, &cb, &err), 1);
	ASSERT_STRSTR(err.msg, "torn");
	ASSERT_EQ(g.samples, 5000);
	ASSERT_EQ(g.end, 0);
	/* not a sample file */
	fd = open(path, O_WRONLY | O_TRUNC);
	ASSERT_EQ(write(fd, "hello world, not samples", 24), 24);
	close(fd);
	ASSERT_ERR(samples__read(path, &cb, &err), -EBADMSG);
	ASSERT_STRSTR(err.msg, "not a probity sample file");
	unlink(path);
	json_decref(h);
	json_decref(snap);
}

TEST(test_realtime_to_mono)
{
	struct attr_table *t = table_of(json_pack("[o]", loaded(GA, 10, TAG1, "0x1000", 0x100, 5000)));
	uint64_t mono;

	ASSERT_NOT_NULL(t);
	ASSERT_TRUE(attr_table__realtime_to_mono(t, 1000000000000ull + 7000, &mono));
	ASSERT_U64_EQ(mono, 7000);
	attr_table__free(t);
}

/* ------------------------------ real BPF ------------------------------ */

#define ATTR_MARK 0x7a11ed
#define BURN_MS 700

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int rewrite_mark(struct bpf_program *prog, int delta)
{
	size_t cnt = bpf_program__insn_cnt(prog), i;
	struct bpf_insn *insns = calloc(cnt, sizeof(*insns));
	int found = 0, err;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
	for (i = 0; i < cnt; i++) {
		if (insns[i].imm == ATTR_MARK && insns[i].code == (BPF_ALU64 | BPF_MOV | BPF_K)) {
			insns[i].imm += delta;
			found = 1;
		}
	}
	err = found ? bpf_program__set_insns(prog, insns, cnt) : -ENOENT;
	free(insns);
	return err;
}

struct burn_gen {
	struct attr_burn_bpf *skel;
	struct pb_generation *g;
};

static int load_gen(struct pb_store *s, const char *parent, int delta, struct burn_gen *out)
{
	struct pb_generation_opts o = { .sz = sizeof(o), .parent_generation_id = parent,
					.source_build_id = "attr_burn.bpf.o-test",
					.optimizer_name = "probity-test", .optimizer_version = "1.0",
					.optimizer_build_id = "test-build-1" };
	char desc[64];
	int err;

	memset(out, 0, sizeof(*out));
	out->skel = attr_burn_bpf__open();
	if (!out->skel)
		return -errno;
	err = rewrite_mark(out->skel->progs.attr_burn, delta);
	if (err)
		return err;
	if (!s)
		return attr_burn_bpf__load(out->skel);	/* no receipt, no lifecycle entry */
	err = pb_generation__begin(s, &o, &out->g);
	if (err)
		return err;
	if (delta) {
		snprintf(desc, sizeof(desc), "mark := 0x%x", ATTR_MARK + delta);
		err = pb_generation__add_transform(out->g, "const-inline/mark", desc, desc, strlen(desc));
		if (err)
			return err;
	}
	return pb_generation__load(out->g, out->skel->obj, out->skel->progs.attr_burn);
}

/* BPF_PROG_TEST_RUN in a loop for BURN_MS; [t0, t1] goes to the timeline */
static int burn(int prog_fd, FILE *tl, const char *label, const char *gen, uint32_t prog_id)
{
	uint8_t pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt), .repeat = 2000);
	uint64_t t0 = mono_ns(), t1;
	int err;

	do {
		err = bpf_prog_test_run_opts(prog_fd, &o);
		if (err)
			return err;
		t1 = mono_ns();
	} while (t1 - t0 < BURN_MS * 1000000ull);
	if (tl)
		fprintf(tl, "%s %s %u %llu %llu\n", label, gen ?: "-", prog_id, (unsigned long long)t0,
			(unsigned long long)t1);
	return 0;
}

static uint32_t fd_prog_id(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_prog_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

struct xdp_swap {
	struct bpf_link *link;
	struct bpf_program *prog;
	int ifindex;
	struct pb_activation_opts *ao;
};

static int do_attach(void *c)
{
	struct xdp_swap *x = c;

	x->link = bpf_program__attach_xdp(x->prog, x->ifindex);
	if (!x->link)
		return -errno;
	x->ao->link_fd = bpf_link__fd(x->link);
	return 0;
}

static int do_update(void *c)
{
	struct xdp_swap *x = c;

	return bpf_link__update_program(x->link, x->prog);
}

static uint32_t link_id(int fd)
{
	struct bpf_link_info li;
	__u32 len = sizeof(li);

	memset(&li, 0, sizeof(li));
	return bpf_link_get_info_by_fd(fd, &li, &len) ? 0 : li.id;
}

static char g_ns[32];
static int g_orig_ns = -1;

static int enter_ns(int *ifindex)
{
	char cmd[256], path[64];
	int fd;

	snprintf(g_ns, sizeof(g_ns), "pbattr%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "ip netns add %s && ip -n %s link add pba0 type veth peer name pba1 && ip -n %s link set pba0 up",
		 g_ns, g_ns, g_ns);
	if (system(cmd))
		return -EIO;
	g_orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/var/run/netns/%s", g_ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || g_orig_ns < 0 || setns(fd, CLONE_NEWNET)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	close(fd);
	*ifindex = if_nametoindex("pba0");
	return *ifindex ? 0 : -ENODEV;
}

static void leave_ns(void)
{
	char cmd[128];

	if (g_orig_ns >= 0) {
		if (setns(g_orig_ns, CLONE_NEWNET)) { /* delete it anyway */ }
		close(g_orig_ns);
		g_orig_ns = -1;
	}
	if (g_ns[0]) {
		snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", g_ns);
		if (system(cmd)) { /* already gone */ }
		g_ns[0] = 0;
	}
}

/* PB_ATTR_SYNC=PATH: after generation 0 is loaded and attached, create
 * PATH.ready and wait (up to 60 s) for PATH.go, so that a sampler started
 * in between finds generation 0 in its snapshot, not in its stream. */
static int sync_point(void)
{
	const char *sync = getenv("PB_ATTR_SYNC");
	char p[4200];
	int i, fd;

	if (!sync)
		return 0;
	snprintf(p, sizeof(p), "%s.ready", sync);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	snprintf(p, sizeof(p), "%s.go", sync);
	for (i = 0; i < 600 && access(p, F_OK); i++)
		usleep(100000);
	return access(p, F_OK) ? -ETIMEDOUT : 0;
}

static struct burn_gen g_bg[4];
static struct xdp_swap g_xs;

static void burn_body(const char *dir, FILE *tl)
{
	struct pb_activation_opts ao = { .sz = sizeof(ao), .link_fd = -1 };
	struct pb_store *s = NULL;
	int i, ifindex = 0;

	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_OK(enter_ns(&ifindex));
	for (i = 0; i < 3; i++) {
		ASSERT_OK(load_gen(s, i ? pb_generation__id(g_bg[i - 1].g) : NULL, i, &g_bg[i]));
		g_xs.prog = g_bg[i].skel->progs.attr_burn;
		g_xs.ifindex = ifindex;
		g_xs.ao = &ao;
		ao.replaces = i ? g_bg[i - 1].g : NULL;
		ASSERT_OK(pb_generation__activate(g_bg[i].g, &ao, i ? do_update : do_attach, &g_xs));
		if (i == 0)
			ASSERT_OK(sync_point());
		ASSERT_OK(burn(bpf_program__fd(g_xs.prog), tl, "burn", pb_generation__id(g_bg[i].g),
			       pb_generation__prog_id(g_bg[i].g)));
		if (i == 1) {
			/* the retired generation 0 still runs (by test run):
			 * its samples are its own, not the active one's */
			ASSERT_OK(burn(bpf_program__fd(g_bg[0].skel->progs.attr_burn), tl, "burn",
				       pb_generation__id(g_bg[0].g), pb_generation__prog_id(g_bg[0].g)));
			attr_burn_bpf__destroy(g_bg[0].skel);
			g_bg[0].skel = NULL;
			ASSERT_OK(pb_generation__record_unloaded(g_bg[0].g));
		}
	}
	/* a program loaded without any receipt or lifecycle entry */
	ASSERT_OK(load_gen(NULL, NULL, 99, &g_bg[3]));
	ASSERT_OK(burn(bpf_program__fd(g_bg[3].skel->progs.attr_burn), tl, "norcpt", NULL,
		       fd_prog_id(bpf_program__fd(g_bg[3].skel->progs.attr_burn))));
	if (tl)
		fprintf(tl, "link %u\npid %d\n", link_id(bpf_link__fd(g_xs.link)), (int)getpid());
	/* teardown while the store is open: the unloads are logged */
	bpf_link__destroy(g_xs.link);
	g_xs.link = NULL;
	ASSERT_OK(pb_generation__retire(g_bg[2].g, "detached"));
	for (i = 1; i < 3; i++) {
		attr_burn_bpf__destroy(g_bg[i].skel);
		g_bg[i].skel = NULL;
		ASSERT_OK(pb_generation__record_unloaded(g_bg[i].g));
	}
	pb_store__free(s);
}

TEST(test_burn_generations)
{
	const char *keep = getenv("PB_ATTR_STORE");
	char dir[64] = "/tmp/pbattr.XXXXXX", tlpath[4200];
	FILE *tl = NULL;
	int i;

	REQUIRE_BPF();
	if (keep) {
		snprintf(tlpath, sizeof(tlpath), "%s.timeline", keep);
		tl = fopen(tlpath, "w");
		ASSERT_NOT_NULL(tl);
	} else {
		ASSERT_NOT_NULL(mkdtemp(dir));
	}
	burn_body(keep ?: dir, tl);
	if (tl)
		fclose(tl);
	bpf_link__destroy(g_xs.link);
	g_xs.link = NULL;
	for (i = 0; i < 4; i++) {
		attr_burn_bpf__destroy(g_bg[i].skel);
		pb_generation__free(g_bg[i].g);
		memset(&g_bg[i], 0, sizeof(g_bg[i]));
	}
	leave_ns();
	if (!keep) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd)) { /* best effort */ }
	}
}

