/* SPDX-License-Identifier: BSD-2-Clause */
/* test_plan.c: manifest -> attach plan, against the real demo binary, and
 * (as root) the plan attached for real with uprobe_multi links whose
 * cookies must reach the BPF program. */
#include "harness.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "contract/manifest.h"
#include "contract/plan.h"
#include "elf/elf_image.h"
#include "elf/insn.h"
#include "engine/attach.h"
#include "site_count.skel.h"

#include "demo_paths.h"

static struct manifest *load_demo(struct diags *d)
{
	struct manifest *m = NULL;

	paths();
	if (manifest__load(demo_manifest, &m, d)) {
		diags__print(d, stderr);
		return NULL;
	}
	return m;
}

/* Parse a manifest from text, naming the file "mem.yaml" in a directory
 * where relative binaries resolve like the demo manifest's. */
static struct manifest *parse_text(const char *text, struct diags *d)
{
	struct manifest *m = NULL;

	if (manifest__parse("mem.yaml", text, strlen(text), &m, d)) {
		diags__print(d, stderr);
		return NULL;
	}
	return m;
}

static bool notes_contain(const struct plan *p, const char *needle)
{
	size_t i;

	for (i = 0; i < diags__count(p->notes); i++)
		if (strstr(diags__get(p->notes, i)->msg, needle))
			return true;
	return false;
}

TEST(demo_plan_resolves_every_descriptor)
{
	struct diags *d = diags__new();
	struct manifest *m = load_demo(d);
	struct plan *p = NULL;
	size_t i, n_multi = 0;

	ASSERT_NOT_NULL(m);
	ASSERT_OK(plan__build(m, NULL, &p, d));
	ASSERT_EQ(p->n_refused, 0);
	ASSERT_EQ(p->n_descriptors, m->n_events);
	ASSERT_TRUE(p->targets[0].build_id_match);
	for (i = 0; i < p->n_descriptors; i++)
		ASSERT_GE(p->descriptors[i].n_sites, 1);
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];

		/* the cookie indexes the descriptor table */
		ASSERT_EQ(s->cookie & PLAN_COOKIE_DESC_MASK, s->descriptor);
		ASSERT_EQ(!!(s->cookie & PLAN_COOKIE_RETURN), s->retprobe);
		ASSERT_TRUE(s->link >= 0 && s->link < (int)p->n_links);
		ASSERT_GT(s->file_offset, 0);
	}
	/* fewest links: one entry and one return uprobe_multi link */
	for (i = 0; i < p->n_links; i++)
		n_multi += p->links[i].type != PLAN_LINK_USDT;
	ASSERT_EQ(n_multi, 2);
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}

TEST(file_offsets_point_at_the_symbol_bytes)
{
	struct diags *d = diags__new();
	struct manifest *m = load_demo(d);
	struct elf_image *img;
	struct plan *p = NULL;
	size_t i;

	ASSERT_NOT_NULL(m);
	ASSERT_OK(plan__build(m, NULL, &p, d));
	img = elf_image__open(p->targets[0].path);
	ASSERT_NOT_NULL(img);
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];
		unsigned char a[8], b[8];
		FILE *f;

		ASSERT_OK(elf_image__read(img, s->vaddr, a, sizeof(a)));
		f = fopen(p->targets[0].path, "rb");
		ASSERT_NOT_NULL(f);
		ASSERT_OK(fseek(f, (long)s->file_offset, SEEK_SET));
		ASSERT_EQ(fread(b, 1, sizeof(b), f), sizeof(b));
		fclose(f);
		ASSERT_OK(memcmp(a, b, sizeof(a)));
	}
	elf_image__free(img);
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}

static char *demo_manifest_with(const char *from, const char *to)
{
	FILE *f;
	char *buf, *pos, *out;
	long n;

	paths();
	f = fopen(demo_manifest, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	pos = strstr(buf, from);
	if (!pos) {
		free(buf);
		return NULL;
	}
	out = calloc(1, n + strlen(to) + 1);
	memcpy(out, buf, pos - buf);
	strcat(out, to);
	strcat(out, pos + strlen(from));
	free(buf);
	return out;
}

static char *demo_build_id(void)
{
	static char hex[160];
	struct elf_image *img;

	paths();
	img = elf_image__open(demo_bin);
	if (!img)
		return NULL;
	elf_image__build_id_hex(img, hex, sizeof(hex));
	elf_image__free(img);
	return hex;
}

TEST(wrong_build_id_is_refused)
{
	struct diags *d = diags__new();
	char *bid = demo_build_id(), *text, wrong[160];
	struct manifest *m;
	struct plan *p = NULL;
	size_t i;

	ASSERT_NOT_NULL(bid);
	snprintf(wrong, sizeof(wrong), "%s", bid);
	wrong[0] = wrong[0] == '0' ? '1' : '0';
	text = demo_manifest_with(bid, wrong);
	ASSERT_NOT_NULL(text);
	m = parse_text(text, d);
	ASSERT_NOT_NULL(m);
	{
		const char *bins[] = { demo_bin };
		struct plan_opts o = { .binaries = bins, .n_binaries = 1 };

		ASSERT_ERR(plan__build(m, &o, &p, d), -EPERM);
	}
	ASSERT_NOT_NULL(p);
	ASSERT_EQ(p->n_refused, m->n_events);
	ASSERT_EQ(p->n_sites, 0);
	ASSERT_FALSE(p->targets[0].build_id_match);
	ASSERT_TRUE(notes_contain(p, "build-id mismatch"));
	for (i = 0; i < p->n_descriptors; i++)
		ASSERT_EQ(p->descriptors[i].status, PLAN_DESC_REFUSED);
	plan__free(p);
	p = NULL;

	/* --rebind: re-resolved by name, every descriptor degraded */
	{
		const char *bins[] = { demo_bin };
		struct plan_opts o = { .binaries = bins, .n_binaries = 1,
				       .rebind = true };

		ASSERT_OK(plan__build(m, &o, &p, d));
	}
	ASSERT_TRUE(p->targets[0].rebound);
	for (i = 0; i < p->n_descriptors; i++)
		ASSERT_EQ(p->descriptors[i].confidence, PB_CONF_DEGRADED);
	plan__free(p);
	manifest__free(m);
	free(text);
	diags__free(d);
}

/* An offset of 1 into a function whose first instruction is longer than
 * one byte lands mid-instruction and must be refused with a listing. */
TEST(mid_instruction_offset_is_refused)
{
	struct diags *d = diags__new();
	struct manifest *m = load_demo(d), *m2;
	struct insn_site_check chk = {};
	struct elf_symbol sym;
	struct elf_image *img;
	const char *fn = NULL;
	char from[256], to[256], *text;
	struct plan *p = NULL;
	size_t i;

	ASSERT_NOT_NULL(m);
	img = elf_image__open(demo_bin);
	ASSERT_NOT_NULL(img);
	/* pick an entry-site event whose first instruction is >= 2 bytes */
	for (i = 0; i < m->n_events && !fn; i++) {
		const struct pb_event *e = &m->events[i];

		if (!e->site.symbol || e->site.at != PB_AT_ENTRY || e->site.offset)
			continue;
		ASSERT_OK(elf_image__find_symbol(img, e->site.symbol, &sym));
		ASSERT_OK(elf_image__check_insn_boundary(img, &sym, 0, &chk));
		if (chk.insn_len >= 2)
			fn = e->site.symbol;
		insn_site_check__clear(&chk);
	}
	elf_image__free(img);
	ASSERT_NOT_NULL(fn);
	snprintf(from, sizeof(from), "symbol: %s\n", fn);
	snprintf(to, sizeof(to), "symbol: %s\n      offset: 1\n", fn);
	text = demo_manifest_with(from, to);
	ASSERT_NOT_NULL(text);
	m2 = parse_text(text, d);
	ASSERT_NOT_NULL(m2);
	{
		const char *bins[] = { demo_bin };
		struct plan_opts o = { .binaries = bins, .n_binaries = 1 };

		ASSERT_ERR(plan__build(m2, &o, &p, d), -EPERM);
	}
	ASSERT_EQ(p->n_refused, 1);
	ASSERT_TRUE(notes_contain(p, "not an instruction boundary"));
	ASSERT_TRUE(notes_contain(p, "=>"));
	plan__free(p);
	manifest__free(m2);
	manifest__free(m);
	free(text);
	diags__free(d);
}

TEST(missing_symbol_is_refused)
{
	struct diags *d = diags__new();
	struct manifest *m = load_demo(d), *m2;
	char from[256], *text;
	struct plan *p = NULL;
	size_t i;

	ASSERT_NOT_NULL(m);
	for (i = 0; i < m->n_events && !m->events[i].site.symbol; i++)
		;
	ASSERT_TRUE(i < m->n_events);
	snprintf(from, sizeof(from), "symbol: %s\n", m->events[i].site.symbol);
	text = demo_manifest_with(from, "symbol: no_such_function_xyz\n");
	ASSERT_NOT_NULL(text);
	m2 = parse_text(text, d);
	ASSERT_NOT_NULL(m2);
	{
		const char *bins[] = { demo_bin };
		struct plan_opts o = { .binaries = bins, .n_binaries = 1 };

		ASSERT_ERR(plan__build(m2, &o, &p, d), -EPERM);
	}
	ASSERT_EQ(p->n_refused, 1);
	ASSERT_TRUE(notes_contain(p, "no_such_function_xyz"));
	plan__free(p);
	manifest__free(m2);
	manifest__free(m);
	free(text);
	diags__free(d);
}

static pid_t spawn_demo(const char *const *args)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(demo_bin, (char *const *)args);
		_exit(127);
	}
	return pid;
}

TEST(plan_by_pid_finds_the_process)
{
	const char *args[] = { "probity-demo", "--clients", "1", "--duration", "3", NULL };
	struct diags *d = diags__new();
	struct manifest *m = load_demo(d);
	struct plan *p = NULL;
	struct plan_opts o = { 0 };
	int status, err;
	pid_t pid;

	ASSERT_NOT_NULL(m);
	pid = spawn_demo(args);
	ASSERT_GT(pid, 0);
	usleep(200 * 1000);
	o.pid = pid;
	err = plan__build(m, &o, &p, d);
	kill(pid, SIGINT);
	waitpid(pid, &status, 0);
	ASSERT_OK(err);
	ASSERT_TRUE(p->targets[0].build_id_match);
	ASSERT_EQ(p->n_refused, 0);
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}

/* The plan attached for real: every non-WAIT descriptor's sites fire in a
 * demo run, return sites carry the return bit, nothing else is hit. */
TEST(plan_attaches_and_cookies_reach_bpf)
{
	const char *args[] = { "probity-demo", "--clients", "2", "--requests", "300", NULL };
	struct diags *d;
	struct manifest *m;
	struct site_count_bpf *skel = NULL;
	struct attacher *a = NULL;
	struct plan *p = NULL;
	int status, efd, rfd;
	size_t i;
	pid_t pid;

	REQUIRE_BPF();
	d = diags__new();
	m = load_demo(d);
	ASSERT_NOT_NULL(m);
	ASSERT_OK(plan__build(m, NULL, &p, d));
	skel = site_count_bpf__open_and_load();
	ASSERT_NOT_NULL(skel);
	{
		struct attacher_opts o = { .entry_prog = skel->progs.count_entry,
			.return_prog = skel->progs.count_return,
			.usdt_prog = skel->progs.count_usdt, .pid = -1 };

		a = attacher__new(p, &o);
	}
	ASSERT_NOT_NULL(a);
	ASSERT_EQ(attacher__n_links(a), p->n_links);
	pid = spawn_demo(args);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	efd = bpf_map__fd(skel->maps.entry_hits);
	rfd = bpf_map__fd(skel->maps.return_hits);
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];
		const struct pb_event *e = &m->events[s->descriptor];
		__u32 key = s->descriptor;
		__u64 hits = 0;

		ASSERT_OK(bpf_map_lookup_elem(s->retprobe ? rfd : efd, &key, &hits));
		if (e->kind != PB_EV_WAIT && hits == 0) {
			PB_FAIL("descriptor %d (%s, %s site) never fired", s->descriptor, e->id,
				s->retprobe ? "return" : "entry");
			break;
		}
	}
	for (i = m->n_events; i < 256; i++) {
		__u32 key = i;
		__u64 h1 = 0, h2 = 0;

		bpf_map_lookup_elem(efd, &key, &h1);
		bpf_map_lookup_elem(rfd, &key, &h2);
		ASSERT_EQ(h1 + h2, 0);
	}
	/* the demo plan has return sites, and they fired (checked above) */
	ASSERT_TRUE(skel->bss->last_return_cookie & PLAN_COOKIE_RETURN);
	attacher__free(a);
	site_count_bpf__destroy(skel);
	plan__free(p);
	manifest__free(m);
	diags__free(d);
}

/* docs/examples/postgres-lwlock.yaml against the LWLock stand-in (same
 * function names and USDT probes as postgres 15), attached for real:
 * LWLockAcquire carries a WAIT span and an ACQUIRE whose entry site saves
 * arguments, on the same instruction in the same link, and both cookies
 * must count every call. */
TEST(postgres_example_attaches_to_lwlock_standin)
{
	char fixture[4096], *text = NULL, bid[160], *pos;
	const char *args[] = { "fake_lwlock", "many", NULL };
	struct diags *d;
	struct manifest *m = NULL;
	struct site_count_bpf *skel = NULL;
	struct attacher *a = NULL;
	struct elf_image *img;
	struct plan *p = NULL;
	int status, efd, rfd, ufd, i, wait_d = -1, acq_d = -1, cond_d = -1, usdt_d = -1;
	__u64 v;
	pid_t pid;
	FILE *f;
	long n;

	REQUIRE_BPF();
	d = diags__new();
	snprintf(fixture, sizeof(fixture), "%s/fixtures/fake_lwlock", build_dir());
	img = elf_image__open(fixture);
	ASSERT_NOT_NULL(img);
	elf_image__build_id_hex(img, bid, sizeof(bid));
	elf_image__free(img);
	f = fopen("docs/examples/postgres-lwlock.yaml", "rb");
	ASSERT_NOT_NULL(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, n + 1);
	ASSERT_EQ(fread(text, 1, n, f), n);
	fclose(f);
	/* bind the example to the stand-in's build (same length: sha1) */
	pos = strstr(text, "build_id: 44c007cfee140e4c25e8a434008096828e70a92c");
	ASSERT_NOT_NULL(pos);
	ASSERT_EQ(strlen(bid), 40);
	memcpy(pos + strlen("build_id: "), bid, 40);
	m = parse_text(text, d);
	ASSERT_NOT_NULL(m);
	{
		const char *bins[] = { fixture };
		struct plan_opts o = { .binaries = bins, .n_binaries = 1 };

		ASSERT_OK(plan__build(m, &o, &p, d));
	}
	ASSERT_EQ(p->n_links, 3); /* entry, return, usdt */
	for (i = 0; i < (int)m->n_events; i++) {
		const char *id = m->events[i].id;

		if (!strcmp(id, "lwlock_wait")) wait_d = i;
		if (!strcmp(id, "lwlock_acquire")) acq_d = i;
		if (!strcmp(id, "lwlock_cond_acquire")) cond_d = i;
		if (!strcmp(id, "lwlock_wait_start")) usdt_d = i;
	}
	ASSERT_TRUE(wait_d >= 0 && acq_d >= 0 && cond_d >= 0 && usdt_d >= 0);
	skel = site_count_bpf__open_and_load();
	ASSERT_NOT_NULL(skel);
	{
		struct attacher_opts o = { .entry_prog = skel->progs.count_entry,
			.return_prog = skel->progs.count_return,
			.usdt_prog = skel->progs.count_usdt, .pid = -1 };

		a = attacher__new(p, &o);
	}
	ASSERT_NOT_NULL(a);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		execv(fixture, (char *const *)args);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	efd = bpf_map__fd(skel->maps.entry_hits);
	rfd = bpf_map__fd(skel->maps.return_hits);
	ufd = bpf_map__fd(skel->maps.usdt_hits);
	/* main() calls LWLockAcquire twice and LWLockConditionalAcquire once
	 * per iteration, 1000 iterations */
	v = 0; bpf_map_lookup_elem(efd, &(__u32){ wait_d }, &v); ASSERT_EQ(v, 2000);
	v = 0; bpf_map_lookup_elem(rfd, &(__u32){ wait_d }, &v); ASSERT_EQ(v, 2000);
	v = 0; bpf_map_lookup_elem(efd, &(__u32){ acq_d }, &v); ASSERT_EQ(v, 2000);
	v = 0; bpf_map_lookup_elem(rfd, &(__u32){ acq_d }, &v); ASSERT_EQ(v, 2000);
	v = 0; bpf_map_lookup_elem(efd, &(__u32){ cond_d }, &v); ASSERT_EQ(v, 1000);
	v = 0; bpf_map_lookup_elem(rfd, &(__u32){ cond_d }, &v); ASSERT_EQ(v, 1000);
	/* the second, exclusive LWLockAcquire of each iteration always finds
	 * the lock held by the first and takes the wait path */
	v = 0; bpf_map_lookup_elem(ufd, &(__u32){ usdt_d }, &v); ASSERT_EQ(v, 1000);
	attacher__free(a);
	site_count_bpf__destroy(skel);
	plan__free(p);
	manifest__free(m);
	free(text);
	diags__free(d);
}
