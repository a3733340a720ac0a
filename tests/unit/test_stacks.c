// SPDX-License-Identifier: BSD-2-Clause
/* test_stacks.c: stack folding and offline symbolization (analyze/stacks.c,
 * elf/symbolize.c, the TRACE_CHUNK_MAPS chunk) on synthetic stack records
 * whose return addresses point into this very binary, mapped as
 * /proc/self/maps says: names from its symbol table, module+0xOFF for a
 * file whose build-id no longer matches, [unknown] outside every mapping,
 * equal stacks merged, holds tied to their RELEASE. */
#include <stdint.h>
#include "harness.h"
#include "analyze/stacks.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "elf/elf_image.h"
#include "trace/trace.h"

volatile int stk_sink;

__attribute__((noinline)) void stk_outer_fn(void)
{
	for (int i = 0; i < 8; i++)
		stk_sink += i * 3;
}

__attribute__((noinline)) void stk_inner_fn(void)
{
	for (int i = 0; i < 8; i++)
		stk_sink ^= i * 5;
}

/* This binary's executable mapping, as record's maps.c would write it. */
static int self_map(struct trace_map *m, uint32_t pid)
{
	char line[512], exe[256], path[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long s, e, off;
	char perm[8];
	int found = -1;

	if (n <= 0 || !f)
		return -1;
	exe[n] = 0;
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &s, &e, perm, &off, path) < 4)
			continue;
		if (perm[2] != 'x' || strcmp(path, exe))
			continue;
		memset(m, 0, sizeof(*m));
		m->pid = pid;
		m->start = s;
		m->end = e;
		m->offset = off;
		snprintf(m->path, sizeof(m->path), "%s", exe);
		found = 0;
		break;
	}
	fclose(f);
	if (!found) {
		struct elf_image *img = elf_image__open(exe);
		int l = img ? elf_image__build_id(img, m->build_id, sizeof(m->build_id)) : -1;

		m->build_id_len = l > 0 ? (uint32_t)l : 0;
		elf_image__free(img);
	}
	return found;
}

static struct pb_rec_stack mk_stack(uint32_t pid, uint8_t kind, uint64_t dur, uint64_t inst,
				    uint64_t gen)
{
	struct pb_rec_stack k = { 0 };

	k.hdr.type = PB_REC_STACK;
	k.hdr.version = PB_EVENTS_VERSION;
	k.hdr.size = sizeof(k);
	k.hdr.pid = pid;
	k.hdr.tid = pid;
	k.descriptor = 1;
	k.kind = kind;
	k.duration_ns = dur;
	k.instance = inst;
	k.generation = gen;
	/* innermost first: a return address inside each function */
	k.ips[0] = (uintptr_t)stk_inner_fn + 4;
	k.ips[1] = (uintptr_t)stk_outer_fn + 4;
	k.n_frames = 2;
	return k;
}

static const char *const names[] = { "ev0", "pool_get" };

TEST(test_fold_waits_named_and_merged)
{
	struct stack_set *s = stack_set__new();
	struct trace_map m;
	struct stack_folds f;
	struct pb_rec_stack k;

	ASSERT_NOT_NULL(s);
	ASSERT_OK(self_map(&m, 100));
	ASSERT_GT(m.build_id_len, 0);
	ASSERT_OK(stack_set__add_maps(s, &m, 1));
	k = mk_stack(100, 0, 1000, 0, 0);
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	k = mk_stack(100, 0, 500, 0, 0);
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	k = mk_stack(100, 0, 7, 0, 0);	/* outer frame outside every mapping */
	k.ips[1] = 0x10;
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	ASSERT_EQ(stack_set__count(s), 3);
	ASSERT_OK(stack_set__fold(s, STACK_WAITS, 0, names, 2, &f));
	ASSERT_EQ(f.n, 2);
	ASSERT_STREQ(f.v[0].stack, "stk_outer_fn;stk_inner_fn;[wait:pool_get]");
	ASSERT_U64_EQ(f.v[0].value, 1500);
	ASSERT_EQ(f.v[0].count, 2);
	ASSERT_STREQ(f.v[1].stack, "[unknown];stk_inner_fn;[wait:pool_get]");
	ASSERT_U64_EQ(f.total, 1507);
	ASSERT_EQ(f.stacks, 3);
	ASSERT_EQ(f.frames, 6);
	ASSERT_EQ(f.frames_unknown, 1);
	ASSERT_EQ(f.frames_module, 0);
	stack_folds__release(&f);
	stack_set__free(s);
}

TEST(test_fold_build_id_mismatch_is_module_offset)
{
	struct stack_set *s = stack_set__new();
	struct trace_map m;
	struct stack_folds f;
	struct pb_rec_stack k;
	char want[64];

	ASSERT_OK(self_map(&m, 7));
	m.build_id[0] ^= 0xff;	/* the file on disk is not the one recorded */
	ASSERT_OK(stack_set__add_maps(s, &m, 1));
	k = mk_stack(7, 0, 10, 0, 0);
	k.n_frames = 1;
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	ASSERT_OK(stack_set__fold(s, STACK_WAITS, 0, NULL, 0, &f));
	ASSERT_EQ(f.n, 1);
	snprintf(want, sizeof(want), "+0x%llx;[wait:desc1]",
		 (unsigned long long)(k.ips[0] - m.start + m.offset));
	ASSERT_STRSTR(f.v[0].stack, want);
	ASSERT_EQ(f.frames_module, 1);
	stack_folds__release(&f);
	stack_set__free(s);
}

TEST(test_fold_holds_from_release)
{
	struct stack_set *s = stack_set__new();
	struct pb_rec_resource r = { 0 };
	struct trace_map m;
	struct stack_folds f;
	struct pb_rec_stack k;

	ASSERT_OK(self_map(&m, 9));
	ASSERT_OK(stack_set__add_maps(s, &m, 1));
	k = mk_stack(9, 1, 0, 0xabc, 3);	/* ACQUIRE of 0xabc, generation 3 */
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	k = mk_stack(9, 1, 0, 0xdef, 1);	/* never released */
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	r.hdr.type = PB_REC_RESOURCE;
	r.hdr.version = PB_EVENTS_VERSION;
	r.hdr.size = sizeof(r);
	r.kind = 3;	/* RELEASE */
	r.instance = 0xabc;
	r.generation = 3;
	r.duration_ns = 4242;
	ASSERT_OK(stack_set__add_record(s, &r.hdr, sizeof(r)));
	ASSERT_OK(stack_set__fold(s, STACK_HOLDS, 0, names, 2, &f));
	ASSERT_EQ(f.n, 1);
	ASSERT_STREQ(f.v[0].stack, "stk_outer_fn;stk_inner_fn;[hold:pool_get]");
	ASSERT_U64_EQ(f.v[0].value, 4242);
	ASSERT_EQ(f.holds_unmatched, 1);
	stack_folds__release(&f);
	/* only the long holds: 4242 ns is shorter than 5000 */
	ASSERT_OK(stack_set__fold(s, STACK_HOLDS, 5000, names, 2, &f));
	ASSERT_EQ(f.n, 0);
	ASSERT_EQ(f.holds_short, 1);
	stack_folds__release(&f);
	ASSERT_OK(stack_set__fold(s, STACK_WAITS, 0, names, 2, &f));
	ASSERT_EQ(f.n, 0);	/* no WAIT stacks */
	stack_folds__release(&f);
	stack_set__free(s);
}

TEST(test_maps_chunk_roundtrip)
{
	char path[] = "/tmp/pb_test_stacks_XXXXXX";
	struct trace_header h = { .clock_id = 1, .pid = 5 };
	struct manifest mf = { .n_resources = 1 };
	struct plan p = { .manifest = &mf };
	struct trace_map m[2];
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_item it;
	int fd = mkstemp(path), got = 0;

	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_OK(self_map(&m[0], 5));
	m[1] = m[0];
	m[1].start += 0x1000;
	w = trace_writer__create(path, &h);
	ASSERT_NOT_NULL(w);
	ASSERT_OK(trace_writer__manifest(w, "x", 1));
	ASSERT_OK(trace_writer__plan(w, &p));
	ASSERT_OK(trace_writer__maps(w, m, 2));
	ASSERT_OK(trace_writer__close(w));
	r = trace_reader__open(path);
	ASSERT_NOT_NULL(r);
	while (trace_reader__next(r, &it) > 0)
		if (it.type == TRACE_ITEM_MAPS) {
			got++;
			ASSERT_EQ(it.n_maps, 2);
			ASSERT_STREQ(it.maps[0].path, m[0].path);
			ASSERT_U64_EQ(it.maps[1].start, m[1].start);
			ASSERT_EQ(it.maps[0].build_id_len, m[0].build_id_len);
		}
	ASSERT_EQ(got, 1);
	ASSERT_EQ(trace_reader__unknown_chunks(r, NULL, NULL), 0);
	trace_reader__free(r);
	unlink(path);
}

TEST(test_two_processes_share_one_file)
{
	struct stack_set *s = stack_set__new();
	struct trace_map m[2];
	struct stack_folds f;
	struct pb_rec_stack k;

	ASSERT_OK(self_map(&m[0], 200));
	m[1] = m[0];
	m[1].pid = 201;	/* the same file at the same place in a second process */
	ASSERT_OK(stack_set__add_maps(s, &m[0], 1));
	ASSERT_OK(stack_set__add_maps(s, &m[1], 1));
	k = mk_stack(200, 0, 1, 0, 0);
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	k = mk_stack(201, 0, 2, 0, 0);
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	k = mk_stack(202, 0, 4, 0, 0);	/* a process without mappings */
	ASSERT_OK(stack_set__add_record(s, &k.hdr, sizeof(k)));
	ASSERT_OK(stack_set__fold(s, STACK_WAITS, 0, names, 2, &f));
	ASSERT_EQ(f.n, 2);
	ASSERT_STREQ(f.v[0].stack, "[unknown];[unknown];[wait:pool_get]");
	ASSERT_STREQ(f.v[1].stack, "stk_outer_fn;stk_inner_fn;[wait:pool_get]");
	ASSERT_U64_EQ(f.v[1].value, 3);
	ASSERT_EQ(f.frames_unknown, 2);
	stack_folds__release(&f);
	/* 202 was forked by 201 (and exited before its mappings were read):
	 * it inherited 201's */
	{
		struct trace_proc pr[2] = { { .pid = 201, .tid = 201 },
					    { .pid = 202, .tid = 202, .ppid = 201 } };

		ASSERT_OK(stack_set__set_parents(s, pr, 2));
	}
	ASSERT_OK(stack_set__fold(s, STACK_WAITS, 0, names, 2, &f));
	ASSERT_EQ(f.n, 1);
	ASSERT_U64_EQ(f.v[0].value, 7);
	ASSERT_EQ(f.frames_unknown, 0);
	stack_folds__release(&f);
	stack_set__free(s);
}
