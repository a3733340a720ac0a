/* SPDX-License-Identifier: BSD-2-Clause */
/* test_detach.c: record --budget's close, for real (root): every link of
 * a set of descriptors, entry and return links alike, detached at once
 * (engine__detach_descs) on the running demo; no probe of them fires once
 * it returns, and each re-attaches. */
#include "harness.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "contract/manifest.h"
#include "contract/plan.h"
#include "engine/engine.h"

#include "demo_paths.h"

static void sum_hits(struct engine *e, const uint32_t *d, size_t n, uint64_t *hits, size_t n_desc,
		     uint64_t *out)
{
	*out = 0;
	if (engine__desc_hits(e, hits, n_desc))
		return;
	for (size_t i = 0; i < n; i++)
		*out += hits[d[i]];
}

TEST(detach_descs_stops_every_link_at_once_and_reattaches)
{
	const char *bins[1];
	struct plan_opts po = { .n_binaries = 1 };
	struct manifest *m = NULL;
	struct plan *p = NULL;
	struct engine_opts eo = { .split_links = true };
	struct engine *e;
	struct diags *d = diags__new();
	uint64_t *hits, h1, h2, h3;
	uint32_t *descs;
	size_t i, n = 0, n_desc, changed = 0, links = 0, c;
	int go[2];
	pid_t pid;
	char ch;

	REQUIRE_BPF();
	paths();
	bins[0] = demo_bin;
	po.binaries = bins;
	ASSERT_NOT_NULL(d);
	ASSERT_OK(manifest__load(demo_manifest, &m, d));
	ASSERT_OK(plan__build(m, &po, &p, d));
	diags__free(d);
	n_desc = p->n_descriptors;
	hits = calloc(n_desc, sizeof(*hits));
	descs = calloc(n_desc, sizeof(*descs));
	ASSERT_NOT_NULL(hits);
	ASSERT_NOT_NULL(descs);
	ASSERT_OK(pipe(go));
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(126);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(demo_bin, "probity-demo", "--clients", "2", "--duration", "4", "-q",
		      (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	eo.pid = pid;
	e = engine__new(p, &eo);
	ASSERT_NOT_NULL(e);
	ASSERT_EQ(write(go[1], "g", 1), 1);
	close(go[1]);
	usleep(500 * 1000);
	/* every descriptor that fired: the demo's spans (entry and return
	 * links) among them */
	ASSERT_OK(engine__desc_hits(e, hits, n_desc));
	for (i = 0; i < n_desc; i++)
		if (hits[i])
			descs[n++] = (uint32_t)i;
	ASSERT_GT(n, 3);
	ASSERT_OK(engine__detach_descs(e, descs, n, &changed));
	/* at least one link each, more for a span */
	ASSERT_GT(changed, n);
	sum_hits(e, descs, n, hits, n_desc, &h1);
	usleep(200 * 1000);
	sum_hits(e, descs, n, hits, n_desc, &h2);
	ASSERT_U64_EQ(h2, h1);
	ASSERT_OK(engine__detach_descs(e, descs, n, &c));
	ASSERT_EQ(c, 0);	/* nothing left attached */
	for (i = 0; i < n; i++) {
		ASSERT_OK(engine__set_desc(e, descs[i], true, &c));
		links += c;
	}
	ASSERT_EQ(links, changed);
	usleep(200 * 1000);
	sum_hits(e, descs, n, hits, n_desc, &h3);
	ASSERT_GT(h3, h2);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	engine__free(e);
	plan__free(p);
	manifest__free(m);
	free(hits);
	free(descs);
}
