/* SPDX-License-Identifier: BSD-2-Clause */
/* test_receipts.c: execution receipts: canonical encoding, the object
 * store (dedup, crash before rename), the hash-chained lifecycle log
 * (torn tail, concurrent writers, rewritten entries), and with real BPF:
 * three generations of an XDP program swapped on a veth in a private
 * network namespace, the middle one unloaded, then reconstructed and
 * verified; identical loads give the same normalized native digest;
 * tampering is named by verify.
 *
 * PB_RCPT_STORE=DIR keeps the store of test_three_generations in DIR and
 * writes the three generation ids to DIR.gens (tests/cli/receipts_cli.sh
 * drives the CLI and the observer on it).
 */
#include "harness.h"
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/framing.h"
#include "receipts/canon.h"
#include "receipts/lifelog.h"
#include "receipts/receipt.h"
#include "receipts/store.h"
#include "receipts/verify.h"
#include "rcpt_xdp.skel.h"

#define RCPT_MARK 0x5eed01

static char *tmp_store(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/pbrcpt.XXXXXX");
	if (!mkdtemp(dir))
		return NULL;
	return dir;
}

static void rm_rf(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) { /* best effort */ }
}

static int verify_problems(struct pb_store *s, struct verify_result *r)
{
	int err = verify__store(s, r);

	if (err)
		return err;
	return (int)json_array_size(r->problems);
}

/* first problem whose where/what contains needle, or NULL */
static const char *find_problem(struct verify_result *r, const char *needle)
{
	static char buf[1024];
	json_t *p;
	size_t i;

	json_array_foreach(r->problems, i, p) {
		snprintf(buf, sizeof(buf), "%s: %s", json_string_value(json_object_get(p, "where")),
			 json_string_value(json_object_get(p, "what")));
		if (strstr(buf, needle))
			return buf;
	}
	return NULL;
}

static void dump_problems(struct verify_result *r)
{
	json_t *p;
	size_t i;

	json_array_foreach(r->problems, i, p)
		fprintf(stderr, "  problem: %s: %s\n", json_string_value(json_object_get(p, "where")),
			json_string_value(json_object_get(p, "what")));
}

/* ---------------------------------------------------------------- */

TEST(test_canonical_json)
{
	json_t *j = json_pack("{s:i, s:[i, s], s:{s:b, s:n}}", "zeta", 1, "alpha", 2, "x", "mid",
			      "k", 1, "a", 0);
	char *out = NULL, hex[PB_DIGEST_HEX_LEN];

	ASSERT_NOT_NULL(j);
	ASSERT_OK(canon__encode(j, &out, NULL));
	ASSERT_STREQ(out, "{\"alpha\":[2,\"x\"],\"mid\":{\"a\":null,\"k\":true},\"zeta\":1}");
	ASSERT_OK(canon__digest(j, hex));
	ASSERT_TRUE(pb_is_digest_hex(hex));
	free(out);
	json_object_set_new(j, "r", json_real(1.5));
	ASSERT_ERR(canon__encode(j, &out, NULL), -EINVAL);
	json_decref(j);
}

/* ---- typed decoders (receipts/decode.c) ---- */

TEST(test_decode_lifelog_entry)
{
	json_t *j = json_loads("{\"kind\":\"loaded\",\"seq\":3,\"prev\":\"ab\",\"mono_ns\":100,"
			       "\"realtime_ns\":200,\"pid\":7,\"generation_id\":\"g\",\"receipt\":\"r\","
			       "\"prog_id\":42,\"prog_tag\":\"0011\",\"source\":\"observer\","
			       "\"jit_ranges\":[{\"addr\":\"0xffffffffa0001000\",\"len\":64}],"
			       "\"timing\":{\"load_ns\":5,\"capture_ns\":6},"
			       "\"loader\":{\"pid\":9,\"tid\":10,\"comm\":\"x\"},\"replaces\":null,"
			       "\"_hash\":\"h\",\"_offset\":16}", 0, NULL);
	struct lifelog_jit_range jr;
	struct lifelog_entry e;
	json_error_t err;

	ASSERT_NOT_NULL(j);
	ASSERT_OK(lifelog_entry__decode(j, &e, &err));
	ASSERT_EQ(e.kind, LIFE_LOADED);
	ASSERT_STREQ(e.kind_name, "loaded");
	ASSERT_EQ(e.seq, 3);
	ASSERT_STREQ(e.prev, "ab");
	ASSERT_U64_EQ(e.mono_ns, 100);
	ASSERT_U64_EQ(e.realtime_ns, 200);
	ASSERT_EQ(e.pid, 7);
	ASSERT_STREQ(e.generation_id, "g");
	ASSERT_STREQ(e.receipt, "r");
	ASSERT_EQ(e.prog_id, 42);
	ASSERT_STREQ(e.source, "observer");
	ASSERT_U64_EQ(e.load_ns, 5);
	ASSERT_U64_EQ(e.capture_ns, 6);
	ASSERT_TRUE(e.has_loader);
	ASSERT_EQ(e.loader.pid, 9);
	ASSERT_STREQ(e.loader.comm, "x");
	ASSERT_NULL(e.replaces);	/* null reads as absent */
	ASSERT_STREQ(e.hash, "h");
	ASSERT_EQ(e.offset, 16);
	ASSERT_EQ(e.ifindex, -1);
	ASSERT_FALSE(e.has_link);
	ASSERT_EQ(json_array_size(e.jit_ranges), 1);
	ASSERT_OK(lifelog_jit_range__decode(json_array_get(e.jit_ranges, 0), &jr, &err));
	ASSERT_U64_EQ(jr.addr, 0xffffffffa0001000ull);
	ASSERT_EQ(jr.len, 64);
	/* a missing required field is named */
	json_object_del(j, "seq");
	ASSERT_ERR(lifelog_entry__decode(j, &e, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "seq");
	ASSERT_STREQ(e.prev, "ab");	/* what did decode is still filled */
	/* a wrong type is named, with what was expected */
	json_object_set_new(j, "seq", json_integer(3));
	json_object_set_new(j, "prog_id", json_string("42"));
	ASSERT_ERR(lifelog_entry__decode(j, &e, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "prog_id");
	ASSERT_STRSTR(err.text, "Expected integer");
	/* nested: the path names the object too */
	json_object_set_new(j, "prog_id", json_integer(42));
	json_object_set_new(json_object_get(j, "loader"), "pid", json_string("9"));
	ASSERT_ERR(lifelog_entry__decode(j, &e, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "loader.pid");
	/* an address that is not one */
	json_object_set_new(json_array_get(json_object_get(j, "jit_ranges"), 0), "addr",
			    json_string("ffff"));
	ASSERT_ERR(lifelog_jit_range__decode(json_array_get(json_object_get(j, "jit_ranges"), 0), &jr,
					     &err), -EINVAL);
	ASSERT_STRSTR(err.text, "addr");
	ASSERT_ERR(lifelog_entry__decode(NULL, &e, &err), -EINVAL);
	json_decref(j);
}

TEST(test_decode_lifelog_link_and_observer)
{
	struct lifelog_observer_stats st = { .bpf_syscalls = 4, .captured = 2 }, back;
	json_t *j = json_loads("{\"kind\":\"activated\",\"seq\":0,\"prev\":\"00\","
			       "\"link\":{\"id\":5,\"type\":6,\"prog_id\":7,\"ifindex\":3},"
			       "\"swap_begin_mono_ns\":10,\"swap_end_mono_ns\":12,\"old_prog_id\":4}",
			       0, NULL);
	struct lifelog_entry e;
	json_error_t err;
	json_t *sj, *obs;

	ASSERT_NOT_NULL(j);
	ASSERT_OK(lifelog_entry__decode(j, &e, &err));
	ASSERT_EQ(e.kind, LIFE_ACTIVATED);
	ASSERT_TRUE(e.has_link);
	ASSERT_EQ(e.link.id, 5);
	ASSERT_EQ(e.link.ifindex, 3);
	ASSERT_U64_EQ(e.swap_end_mono_ns, 12);
	ASSERT_EQ(e.old_prog_id, 4);
	json_object_set_new(json_object_get(j, "link"), "id", json_integer(-1));
	ASSERT_ERR(lifelog_entry__decode(j, &e, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "link.id");
	json_decref(j);
	/* observer counters: encode and decode agree */
	st.missed.perf_records_lost = 9;
	sj = lifelog_observer_stats__encode(&st);
	ASSERT_NOT_NULL(sj);
	ASSERT_OK(lifelog_observer_stats__decode(sj, &back, &err));
	ASSERT_U64_EQ(back.bpf_syscalls, 4);
	ASSERT_U64_EQ(back.captured, 2);
	ASSERT_U64_EQ(back.missed.perf_records_lost, 9);
	obs = json_pack("{s:s, s:i, s:s, s:s, s:O}", "kind", "observer", "seq", 1, "prev", "x",
			"event", "stop", "stats", sj);
	ASSERT_OK(lifelog_entry__decode(obs, &e, &err));
	ASSERT_TRUE(e.has_stats);
	ASSERT_STREQ(e.event, "stop");
	ASSERT_U64_EQ(e.stats.missed.perf_records_lost, 9);
	json_object_set_new(json_object_get(sj, "missed"), "ringbuf_dropped", json_true());
	ASSERT_ERR(lifelog_entry__decode(obs, &e, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "stats.missed.ringbuf_dropped");
	json_decref(obs);
	json_decref(sj);
}

TEST(test_decode_receipt)
{
	json_t *j = json_loads("{\"_type\":\"https://in-toto.io/Statement/v1\","
			       "\"predicateType\":\"https://probity.dev/receipt/v1\","
			       "\"subject\":[{\"name\":\"jit/native-image\",\"digest\":{\"sha256\":\"n\"}}],"
			       "\"predicate\":{\"generation_id\":\"g\",\"parent_generation_id\":null,"
			       "\"native_image_digest\":\"n\","
			       "\"generation\":{\"provenance\":\"recorded\",\"optimizer\":{\"name\":\"o\"},"
			       "\"transforms\":[{\"id\":\"t1\",\"description\":\"d\",\"evidence\":null}],"
			       "\"program\":{\"name\":\"p\",\"type\":6},"
			       "\"target\":{\"kernel_release\":\"6.18\",\"bpf_jit_harden\":null}},"
			       "\"verifier\":{\"accepted\":true,\"log_level\":4,\"verified_insns\":12,"
			       "\"log_normalized_digest\":\"v\",\"log\":null},"
			       "\"jit\":{\"image\":\"i\",\"image_len\":99,\"func_lens\":[99]},"
			       "\"artifacts\":{\"jit_image\":\"i\",\"xlated_insns\":\"x\"}}}", 0, NULL);
	struct receipt_subject subj;
	struct receipt_step step;
	struct receipt_view v;
	json_error_t err;

	ASSERT_NOT_NULL(j);
	ASSERT_OK(receipt__decode(j, &v, &err));
	ASSERT_TRUE(receipt__is_receipt(j));
	ASSERT_STREQ(v.generation_id, "g");
	ASSERT_NULL(v.parent_generation_id);
	ASSERT_TRUE(v.has_generation);
	ASSERT_STREQ(v.generation.provenance, "recorded");
	ASSERT_STREQ(v.generation.optimizer.name, "o");
	ASSERT_EQ(v.generation.program.type, 6);
	ASSERT_STREQ(v.generation.target.kernel_release, "6.18");
	ASSERT_EQ(v.generation.target.bpf_jit_harden, -1);
	ASSERT_TRUE(v.verifier.present);
	ASSERT_TRUE(v.verifier.accepted);
	ASSERT_EQ(v.verifier.verified_insns, 12);
	ASSERT_NULL(v.verifier.log);
	ASSERT_EQ(v.jit.image_len, 99);
	ASSERT_STREQ(v.artifacts.jit_image, "i");
	ASSERT_NULL(v.artifacts.btf);
	ASSERT_OK(receipt_step__decode(json_array_get(v.generation.transforms, 0), &step, &err));
	ASSERT_STREQ(step.id, "t1");
	ASSERT_NULL(step.evidence);
	ASSERT_OK(receipt_subject__decode(json_array_get(v.subjects, 0), &subj, &err));
	ASSERT_STREQ(subj.sha256, "n");
	/* wrong type deep inside: the whole path is named */
	json_object_set_new(json_object_get(json_object_get(j, "predicate"), "jit"), "image_len",
			    json_string("99"));
	ASSERT_ERR(receipt__decode(j, &v, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "predicate.jit.image_len");
	ASSERT_STRSTR(err.text, "Expected integer, got string");
	ASSERT_STREQ(v.generation_id, "g");
	/* an incomplete verifier result is named and not present */
	json_object_set_new(json_object_get(json_object_get(j, "predicate"), "jit"), "image_len",
			    json_integer(99));
	json_object_del(json_object_get(json_object_get(j, "predicate"), "verifier"), "accepted");
	ASSERT_ERR(receipt__decode(j, &v, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "predicate.verifier");
	ASSERT_STRSTR(err.text, "accepted");
	ASSERT_FALSE(v.verifier.present);
	/* a missing required field */
	json_object_del(j, "predicate");
	ASSERT_ERR(receipt__decode(j, &v, &err), -EINVAL);
	ASSERT_STRSTR(err.text, "predicate");
	json_decref(j);
}

TEST(test_store_put_dedup)
{
	char *dir = tmp_store(), hex[PB_DIGEST_HEX_LEN], hex2[PB_DIGEST_HEX_LEN], path[4096];
	struct pb_store *s = NULL;
	struct stat st;
	void *buf;
	size_t len;

	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_OK(pb_store__put(s, "hello", 5, hex));
	/* sha256("hello") */
	ASSERT_STREQ(hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
	snprintf(path, sizeof(path), "%s/objects/2c/f24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", dir);
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0444);
	ASSERT_OK(pb_store__put(s, "hello", 5, hex2));
	ASSERT_STREQ(hex2, hex);
	ASSERT_OK(pb_store__get(s, hex, &buf, &len));
	ASSERT_EQ(len, 5);
	ASSERT_TRUE(!memcmp(buf, "hello", 5));
	free(buf);
	ASSERT_ERR(pb_store__get(s, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9825", &buf, &len),
		   -ENOENT);
	pb_store__free(s);
	rm_rf(dir);
}

TEST(test_store_crash_before_rename)
{
	char *dir = tmp_store(), hex[PB_DIGEST_HEX_LEN], path[4096];
	struct verify_result r;
	struct pb_store *s = NULL;
	int status;
	pid_t pid;

	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	pid = fork();
	if (pid == 0) {
		setenv(PB_CRASH_ENV, "store-before-rename", 1);
		pb_store__put(s, "a receipt", 9, hex);
		_exit(0);	/* not reached: the hook kills us */
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	pb_sha256_hex("a receipt", 9, hex);
	store__object_path(s, hex, path, sizeof(path));
	ASSERT_NE(access(path, F_OK), 0);	/* nothing visible */
	ASSERT_FALSE(store__has(s, hex));
	ASSERT_EQ(verify_problems(s, &r), 0);
	ASSERT_EQ(json_array_size(r.notes), 1);	/* the tmp leftover */
	ASSERT_STRSTR(json_string_value(json_object_get(json_array_get(r.notes, 0), "where")), "tmp/");
	verify_result__clear(&r);
	/* a later writer still succeeds */
	ASSERT_OK(pb_store__put(s, "a receipt", 9, hex));
	ASSERT_TRUE(store__has(s, hex));
	pb_store__free(s);
	rm_rf(dir);
}

/* The batch path (used for a generation's artifacts + receipt): a crash
 * after the syncfs, before the renames, leaves none of them visible. */
TEST(test_store_batch_crash_before_rename)
{
	char *dir = tmp_store(), hex[PB_DIGEST_HEX_LEN];
	struct verify_result r;
	struct pb_store *s = NULL;
	const char *objs[] = { "artifact one", "artifact two", "{\"_type\":\"receipt\"}" };
	int status, i;
	pid_t pid;

	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	pid = fork();
	if (pid == 0) {
		setenv(PB_CRASH_ENV, "store-before-rename", 1);
		store__batch_begin(s);
		for (i = 0; i < 3; i++)
			pb_store__put(s, objs[i], strlen(objs[i]), hex);
		store__batch_commit(s);
		_exit(0);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	for (i = 0; i < 3; i++) {
		pb_sha256_hex(objs[i], strlen(objs[i]), hex);
		ASSERT_FALSE(store__has(s, hex));
	}
	ASSERT_EQ(verify_problems(s, &r), 0);
	ASSERT_EQ(json_array_size(r.notes), 3);
	verify_result__clear(&r);
	/* the same batch without the hook commits all three */
	store__batch_begin(s);
	for (i = 0; i < 3; i++)
		ASSERT_OK(pb_store__put(s, objs[i], strlen(objs[i]), hex));
	ASSERT_FALSE(store__has(s, hex));	/* not before commit */
	ASSERT_OK(store__batch_commit(s));
	for (i = 0; i < 3; i++) {
		pb_sha256_hex(objs[i], strlen(objs[i]), hex);
		ASSERT_TRUE(store__has(s, hex));
	}
	pb_store__free(s);
	rm_rf(dir);
}

static int append_note(struct pb_store *s, int i)
{
	json_t *e = json_pack("{s:i}", "note", i);
	int err = lifelog__append(s, LIFE_OBSERVER, e, NULL);

	json_decref(e);
	return err;
}

TEST(test_lifelog_chain_and_torn_tail)
{
	char *dir = tmp_store(), path[4096];
	struct verify_result r;
	struct pb_store *s = NULL;
	json_t *entries;
	struct stat st;
	int i;

	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	for (i = 0; i < 3; i++)
		ASSERT_OK(append_note(s, i));
	ASSERT_EQ(lifelog__read(s, &entries, NULL), 0);
	ASSERT_EQ(json_array_size(entries), 3);
	ASSERT_STREQ(json_string_value(json_object_get(json_array_get(entries, 1), "prev")),
		     json_string_value(json_object_get(json_array_get(entries, 0), "_hash")));
	json_decref(entries);
	/* cut the last chunk short: reported, never extended */
	snprintf(path, sizeof(path), "%s/%s", dir, PB_LIFELOG_NAME);
	ASSERT_OK(stat(path, &st));
	ASSERT_OK(truncate(path, st.st_size - 5));
	ASSERT_EQ(verify_problems(s, &r), 1);
	ASSERT_NOT_NULL(find_problem(&r, "entry #2"));
	ASSERT_NOT_NULL(find_problem(&r, "torn or corrupt"));
	verify_result__clear(&r);
	ASSERT_ERR(append_note(s, 9), -EBADMSG);
	pb_store__free(s);
	rm_rf(dir);
}

TEST(test_lifelog_concurrent_writers)
{
	char *dir = tmp_store();
	struct verify_result r;
	struct pb_store *s = NULL;
	json_t *entries;
	int i, k, status, ok = 1;

	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	for (k = 0; k < 4; k++) {
		if (fork() == 0) {
			for (i = 0; i < 25; i++)
				if (append_note(s, k * 100 + i))
					_exit(1);
			_exit(0);
		}
	}
	for (k = 0; k < 4; k++) {
		wait(&status);
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	ASSERT_TRUE(ok);
	ASSERT_EQ(lifelog__read(s, &entries, NULL), 0);
	ASSERT_EQ(json_array_size(entries), 100);
	json_decref(entries);
	ASSERT_EQ(verify_problems(s, &r), 0);
	verify_result__clear(&r);
	pb_store__free(s);
	rm_rf(dir);
}

/* Rewrite entry #1 with a fresh, valid CRC: only the chain can tell. */
TEST(test_lifelog_rewritten_entry_breaks_chain)
{
	char *dir = tmp_store(), path[4096], path2[4200];
	struct frame_reader *rd;
	struct frame_writer *w;
	struct verify_result r;
	struct pb_store *s = NULL;
	const void *hdr, *buf;
	size_t hl, len;
	uint32_t ver, type;
	int i, n = 0;

	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	for (i = 0; i < 3; i++)
		ASSERT_OK(append_note(s, i));
	snprintf(path, sizeof(path), "%s/%s", dir, PB_LIFELOG_NAME);
	snprintf(path2, sizeof(path2), "%s.new", path);
	rd = frame_reader__open(path, PB_LIFELOG_MAGIC, 1, &ver, &hdr, &hl);
	ASSERT_NOT_NULL(rd);
	w = frame_writer__create(path2, PB_LIFELOG_MAGIC, 1, NULL, 0, NULL);
	ASSERT_NOT_NULL(w);
	while (frame_reader__next(rd, &type, &buf, &len) == 1) {
		char *copy = strndup(buf, len), *p;

		if (n++ == 1 && (p = strstr(copy, "\"note\":1")))
			p[7] = '7';	/* "note":7 */
		ASSERT_OK(frame_writer__append(w, type, copy, len));
		free(copy);
	}
	frame_reader__free(rd);
	ASSERT_OK(frame_writer__close(w));
	ASSERT_OK(rename(path2, path));
	ASSERT_GT(verify_problems(s, &r), 0);
	ASSERT_NOT_NULL(find_problem(&r, "entry #2"));
	ASSERT_NOT_NULL(find_problem(&r, "hash chain broken"));
	verify_result__clear(&r);
	pb_store__free(s);
	rm_rf(dir);
}

/* ------------------------------ real BPF ------------------------------ */

struct gen_load {
	struct rcpt_xdp_bpf *skel;
	struct pb_generation *g;
};

static int load_generation(struct pb_store *s, const char *parent, int delta, const char *opt_version,
			   struct gen_load *out)
{
	struct pb_generation_opts o = { .sz = sizeof(o), .parent_generation_id = parent,
					.source_build_id = "rcpt_xdp.bpf.o-test",
					.optimizer_name = "probity-test",
					.optimizer_version = opt_version,
					.optimizer_build_id = "test-build-1" };
	struct bpf_program *prog;
	struct bpf_insn *insns;
	size_t i, cnt;
	char desc[64], ev[64];
	int err, found = 0;

	memset(out, 0, sizeof(*out));
	out->skel = rcpt_xdp_bpf__open();
	if (!out->skel)
		return -errno;
	prog = out->skel->progs.rcpt_xdp;
	cnt = bpf_program__insn_cnt(prog);
	insns = calloc(cnt, sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), cnt * sizeof(*insns));
	for (i = 0; i < cnt; i++) {
		if (insns[i].imm == RCPT_MARK && insns[i].code == (BPF_ALU64 | BPF_MOV | BPF_K)) {
			insns[i].imm += delta;
			found = 1;
		}
	}
	err = found ? bpf_program__set_insns(prog, insns, cnt) : -ENOENT;
	free(insns);
	if (err)
		return err;
	err = pb_generation__begin(s, &o, &out->g);
	if (err)
		return err;
	if (delta) {
		snprintf(desc, sizeof(desc), "mark immediate := 0x%x", RCPT_MARK + delta);
		snprintf(ev, sizeof(ev), "profile epoch %d: mark bias observed", delta);
		if ((err = pb_generation__add_transform(out->g, "const-inline/mark", desc, desc, strlen(desc))) ||
		    (err = pb_generation__add_assumption(out->g, "profile-epoch", ev, ev, strlen(ev))))
			return err;
	}
	return pb_generation__load(out->g, out->skel->obj, prog);
}

static void gen_unload(struct gen_load *gl)
{
	rcpt_xdp_bpf__destroy(gl->skel);
	gl->skel = NULL;
}

static void gen_free(struct gen_load *gl)
{
	rcpt_xdp_bpf__destroy(gl->skel);
	pb_generation__free(gl->g);
	memset(gl, 0, sizeof(*gl));
}

struct netns {
	char name[32];
	int orig_fd;
	int ifindex;
};

static int netns_enter(struct netns *ns)
{
	char cmd[256], path[64];
	int fd;

	snprintf(ns->name, sizeof(ns->name), "pbrcpt%d", (int)getpid());
	ns->orig_fd = -1;
	snprintf(cmd, sizeof(cmd),
		 "ip netns add %s && ip -n %s link add pbr0 type veth peer name pbr1 && "
		 "ip -n %s link set pbr0 up && ip -n %s link set pbr1 up",
		 ns->name, ns->name, ns->name, ns->name);
	if (system(cmd))
		return -EIO;
	ns->orig_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/var/run/netns/%s", ns->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ns->orig_fd < 0 || setns(fd, CLONE_NEWNET)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	close(fd);
	ns->ifindex = if_nametoindex("pbr0");
	return ns->ifindex ? 0 : -ENODEV;
}

static void netns_leave(struct netns *ns)
{
	char cmd[128];

	if (ns->orig_fd >= 0) {
		if (setns(ns->orig_fd, CLONE_NEWNET)) { /* keep going: delete it anyway */ }
		close(ns->orig_fd);
		ns->orig_fd = -1;
	}
	if (ns->name[0]) {
		snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", ns->name);
		if (system(cmd)) { /* already gone */ }
	}
}

struct swap_ctx {
	struct bpf_link *link;
	struct bpf_program *prog;
	int ifindex;
	struct pb_activation_opts *aopts;
};

static int swap_attach(void *c)
{
	struct swap_ctx *sc = c;

	sc->link = bpf_program__attach_xdp(sc->prog, sc->ifindex);
	if (!sc->link)
		return -errno;
	sc->aopts->link_fd = bpf_link__fd(sc->link);
	return 0;
}

static int swap_update(void *c)
{
	struct swap_ctx *sc = c;

	return bpf_link__update_program(sc->link, sc->prog);
}

static bool prog_gone(uint32_t id)
{
	int i, fd;

	for (i = 0; i < 200; i++) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			return true;
		close(fd);
		usleep(10000);
	}
	return false;
}

static int count_kind(json_t *entries, const char *kind, const char *gen)
{
	json_t *e;
	size_t i;
	int n = 0;

	json_array_foreach(entries, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "kind")), kind) &&
		    (!gen || !strcmp(json_string_value(json_object_get(e, "generation_id")) ?: "", gen)))
			n++;
	return n;
}

static struct netns g_ns;
static struct gen_load g_gen[3];
static struct swap_ctx g_sc;

static void three_generations_body(const char *dir)
{
	struct pb_activation_opts ao = { .sz = sizeof(ao), .link_fd = -1 };
	char gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN], ids[3][PB_DIGEST_HEX_LEN];
	struct verify_result r;
	struct pb_store *s = NULL;
	json_t *entries, *stmt, *pred;
	uint32_t mid_id;
	int i;

	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_OK(netns_enter(&g_ns));
	/* generation 0: the portable program, attached */
	ASSERT_OK(load_generation(s, NULL, 0, "1.0", &g_gen[0]));
	g_sc = (struct swap_ctx){ .prog = g_gen[0].skel->progs.rcpt_xdp, .ifindex = g_ns.ifindex,
				  .aopts = &ao };
	ASSERT_OK(pb_generation__activate(g_gen[0].g, &ao, swap_attach, &g_sc));
	/* generations 1, 2: one immediate rewritten each, swapped in */
	for (i = 1; i < 3; i++) {
		ASSERT_OK(load_generation(s, pb_generation__id(g_gen[i - 1].g), i, "1.0", &g_gen[i]));
		ao.replaces = g_gen[i - 1].g;
		g_sc.prog = g_gen[i].skel->progs.rcpt_xdp;
		ASSERT_OK(pb_generation__activate(g_gen[i].g, &ao, swap_update, &g_sc));
		if (i == 2) {	/* the middle one goes away */
			mid_id = pb_generation__prog_id(g_gen[1].g);
			gen_unload(&g_gen[1]);
			ASSERT_OK(pb_generation__record_unloaded(g_gen[1].g));
			ASSERT_TRUE(prog_gone(mid_id));
		}
	}
	for (i = 0; i < 3; i++)
		snprintf(ids[i], sizeof(ids[i]), "%s", pb_generation__id(g_gen[i].g));
	ASSERT_TRUE(strcmp(ids[0], ids[1]) && strcmp(ids[1], ids[2]));
	/* the unloaded middle generation is fully reconstructible */
	ASSERT_OK(receipts__find_generation(s, ids[1], gen, rec));
	ASSERT_STREQ(rec, pb_generation__receipt_digest(g_gen[1].g));
	ASSERT_OK(store__get_json(s, rec, &stmt));
	ASSERT_TRUE(receipt__is_receipt(stmt));
	pred = json_object_get(stmt, "predicate");
	ASSERT_STREQ(json_string_value(json_object_get(pred, "parent_generation_id")), ids[0]);
	ASSERT_STREQ(json_string_value(json_array_get(json_object_get(pred, "transform_ids"), 0)),
		     "const-inline/mark");
	ASSERT_STREQ(json_string_value(json_array_get(json_object_get(pred, "assumption_ids"), 0)),
		     "profile-epoch");
	ASSERT_TRUE(json_is_true(json_object_get(json_object_get(pred, "verifier"), "accepted")));
	ASSERT_GT(json_integer_value(json_object_get(json_object_get(pred, "verifier"), "verified_insns")), 0);
	ASSERT_EQ(strlen(json_string_value(json_object_get(pred, "kernel_build_id")) ?: ""), 40);
	ASSERT_TRUE(json_is_integer(json_object_get(json_object_get(json_object_get(pred, "generation"), "target"),
						    "bpf_jit_harden")));
	{	/* original_bpf_tag is the root generation's kernel tag */
		json_t *root = NULL;

		ASSERT_OK(store__get_json(s, pb_generation__receipt_digest(g_gen[0].g), &root));
		ASSERT_STREQ(json_string_value(json_object_get(pred, "original_bpf_tag")),
			     json_string_value(json_object_get(json_object_get(root, "predicate"),
							       "specialized_bpf_tag")));
		json_decref(root);
	}
	json_decref(stmt);
	ASSERT_EQ(lifelog__read(s, &entries, NULL), 0);
	ASSERT_EQ(count_kind(entries, "loaded", NULL), 3);
	ASSERT_EQ(count_kind(entries, "activated", NULL), 3);
	ASSERT_EQ(count_kind(entries, "retired", ids[0]), 1);
	ASSERT_EQ(count_kind(entries, "retired", ids[1]), 1);
	ASSERT_EQ(count_kind(entries, "unloaded", ids[1]), 1);
	ASSERT_EQ(count_kind(entries, "retired", ids[2]), 0);
	{	/* activation of generation 1 names the XDP link and its swap window */
		json_t *e;
		size_t k;

		json_array_foreach(entries, k, e) {
			if (strcmp(json_string_value(json_object_get(e, "kind")), "activated") ||
			    strcmp(json_string_value(json_object_get(e, "generation_id")), ids[1]))
				continue;
			ASSERT_EQ(json_integer_value(json_object_get(json_object_get(e, "link"), "ifindex")),
				  g_ns.ifindex);
			ASSERT_GE(json_integer_value(json_object_get(e, "swap_end_mono_ns")),
				  json_integer_value(json_object_get(e, "swap_begin_mono_ns")));
			ASSERT_STREQ(json_string_value(json_object_get(e, "replaces")), ids[0]);
			ASSERT_EQ(json_array_size(json_object_get(e, "jit_ranges")), 1);
		}
	}
	json_decref(entries);
	ASSERT_EQ(verify_problems(s, &r), 0);
	ASSERT_EQ(r.n_receipts, 3);
	verify_result__clear(&r);
	{
		char p[4200];
		FILE *f;

		snprintf(p, sizeof(p), "%s.gens", dir);
		f = fopen(p, "w");
		ASSERT_NOT_NULL(f);
		for (i = 0; i < 3; i++)
			fprintf(f, "%s\n", ids[i]);
		fprintf(f, "%u\n", pb_generation__prog_id(g_gen[2].g));
		fclose(f);
	}
	pb_store__free(s);
}

TEST(test_three_generations)
{
	const char *keep = getenv("PB_RCPT_STORE");
	char *dir;
	int i;

	REQUIRE_BPF();
	dir = keep ? (char *)keep : tmp_store();
	ASSERT_NOT_NULL(dir);
	memset(&g_ns, 0, sizeof(g_ns));
	three_generations_body(dir);
	bpf_link__destroy(g_sc.link);
	g_sc.link = NULL;
	for (i = 0; i < 3; i++)
		gen_free(&g_gen[i]);
	netns_leave(&g_ns);
	if (!keep)
		rm_rf(dir);
}

TEST(test_identical_loads_same_native_digest)
{
	char *dir;
	struct gen_load a = { 0 }, b = { 0 }, c = { 0 };
	struct pb_store *s = NULL;
	json_t *ra = NULL, *rb = NULL;
	const char *ja, *jb;

	REQUIRE_BPF();
	dir = tmp_store();
	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_OK(load_generation(s, NULL, 0, "1.0", &a));
	ASSERT_OK(load_generation(s, NULL, 0, "1.0", &b));
	ASSERT_NE(pb_generation__prog_id(a.g), pb_generation__prog_id(b.g));
	ASSERT_STREQ(pb_generation__native_digest(a.g), pb_generation__native_digest(b.g));
	ASSERT_STREQ(pb_generation__id(a.g), pb_generation__id(b.g));
	/* the raw images differ (map address): normalization did the work */
	ASSERT_OK(store__get_json(s, pb_generation__receipt_digest(a.g), &ra));
	ASSERT_OK(store__get_json(s, pb_generation__receipt_digest(b.g), &rb));
	ja = json_string_value(json_object_get(json_object_get(json_object_get(ra, "predicate"), "jit"), "image"));
	jb = json_string_value(json_object_get(json_object_get(json_object_get(rb, "predicate"), "jit"), "image"));
	ASSERT_TRUE(ja && jb && strcmp(ja, jb));
	ASSERT_GT(json_integer_value(json_object_get(json_object_get(json_object_get(ra, "predicate"), "jit"),
						     "masked_operands")), 0);
	/* same bytes, different optimizer version: a different generation */
	ASSERT_OK(load_generation(s, NULL, 0, "2.0", &c));
	ASSERT_TRUE(strcmp(pb_generation__id(a.g), pb_generation__id(c.g)));
	ASSERT_STREQ(pb_generation__native_digest(a.g), pb_generation__native_digest(c.g));
	json_decref(ra);
	json_decref(rb);
	gen_free(&a);
	gen_free(&b);
	gen_free(&c);
	pb_store__free(s);
	rm_rf(dir);
}

static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	chmod(path, 0644);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return;
	if (pread(fd, &b, 1, off) == 1) {
		b ^= 0x20;
		if (pwrite(fd, &b, 1, off) != 1) { /* checked by verify below */ }
	}
	close(fd);
}

TEST(test_tamper_named_by_verify)
{
	char *dir, path[4096];
	struct gen_load a = { 0 };
	struct verify_result r;
	struct pb_store *s = NULL;
	json_t *rec = NULL, *entries;
	const char *jit;
	char want[128];

	REQUIRE_BPF();
	dir = tmp_store();
	ASSERT_NOT_NULL(dir);
	ASSERT_OK(pb_store__open(dir, NULL, &s));
	ASSERT_OK(load_generation(s, NULL, 0, "1.0", &a));
	ASSERT_OK(pb_generation__retire(a.g, "test"));
	ASSERT_EQ(verify_problems(s, &r), 0);
	verify_result__clear(&r);
	/* alter the JIT image artifact */
	ASSERT_OK(store__get_json(s, pb_generation__receipt_digest(a.g), &rec));
	jit = json_string_value(json_object_get(json_object_get(json_object_get(rec, "predicate"), "jit"), "image"));
	ASSERT_NOT_NULL(jit);
	store__object_path(s, jit, path, sizeof(path));
	flip_byte(path, 3);
	ASSERT_GT(verify_problems(s, &r), 0);
	snprintf(want, sizeof(want), "object %s: altered", jit);
	ASSERT_NOT_NULL(find_problem(&r, want));
	snprintf(want, sizeof(want), "jit_image: artifact %s is altered", jit);
	ASSERT_NOT_NULL(find_problem(&r, want));
	verify_result__clear(&r);
	flip_byte(path, 3);	/* restore */
	ASSERT_EQ(verify_problems(s, &r), 0);
	verify_result__clear(&r);
	/* delete it: missing */
	unlink(path);
	ASSERT_GT(verify_problems(s, &r), 0);
	snprintf(want, sizeof(want), "jit_image: artifact %s is missing", jit);
	ASSERT_NOT_NULL(find_problem(&r, want));
	verify_result__clear(&r);
	/* alter the first log entry's payload */
	ASSERT_EQ(lifelog__read(s, &entries, NULL), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, PB_LIFELOG_NAME);
	flip_byte(path, json_integer_value(json_object_get(json_array_get(entries, 0), "_offset")) + 30);
	json_decref(entries);
	ASSERT_GT(verify_problems(s, &r), 0);
	ASSERT_NOT_NULL(find_problem(&r, "lifecycle.log entry #0"));
	verify_result__clear(&r);
	json_decref(rec);
	gen_free(&a);
	pb_store__free(s);
	rm_rf(dir);
	(void)dump_problems;
}
