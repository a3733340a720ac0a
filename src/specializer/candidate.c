/* SPDX-License-Identifier: BSD-2-Clause */
/* candidate.c: one specialization of `probity rejit` (candidate.h):
 * rewrite generation 0's relocated instructions by the plan (rewrite.c),
 * load with bpf_prog_load (BPF_LOG_STATS), compare verdicts and output
 * frames with generation 0 through BPF_PROG_TEST_RUN, write the receipt
 * (transforms, assumptions, evidence) and swap it in.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/clock.h"
#include "common/version.h"
#include "specializer/candidate.h"
#include "specializer/generation.h"
#include "specializer/profile.h"
#include "specializer/rewrite.h"
#include "specializer/traffic.h"

#define VLOG_SIZE (256 * 1024)

/* What one candidate is made of until it becomes a generation. */
struct candidate {
	struct lb_cfg cfg;
	struct rw_insns p;
	struct sp_receipt_steps st;
	char *vlog;		/* the verifier log (BPF_LOG_STATS) */
	uint64_t load_ns;
	int fd;
	json_t *equiv;		/* the verdict check */
};

/* Load the rewritten instructions; on a verifier refusal, reload at log
 * level 1 for the log tail. 0 or -errno. */
static int load(struct specializer *s, struct candidate *c)
{
	char name[16];
	uint64_t t0;
	int e;
	LIBBPF_OPTS(bpf_prog_load_opts, lo);

	c->vlog = calloc(1, VLOG_SIZE);
	if (!c->vlog)
		return -ENOMEM;
	snprintf(name, sizeof(name), "lb_xdp_g%zu", s->n_gens);
	lo.log_buf = c->vlog;
	lo.log_size = VLOG_SIZE;
	lo.log_level = 4;	/* BPF_LOG_STATS, as pb_generation__load */
	lo.expected_attach_type = BPF_XDP;
	t0 = pb_mono_ns();
	c->fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", c->p.v, c->p.n, &lo);
	c->load_ns = pb_mono_ns() - t0;
	if (c->fd >= 0)
		return 0;
	e = -errno;
	lo.log_level = 1;
	memset(c->vlog, 0, VLOG_SIZE);
	c->fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", c->p.v, c->p.n, &lo);
	sp_progress(s, "verifier rejected the candidate (%s); log tail: %.300s", strerror(-e),
		    strlen(c->vlog) > 300 ? c->vlog + strlen(c->vlog) - 300 : c->vlog);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	return e;
}

/* Verdicts of generation 0 and the candidate on the same probe frames
 * (BPF_PROG_TEST_RUN), including every guard-failure class. */
static int verdict_check(struct specializer *s, int fd, const struct lb_cfg *cfg, json_t **out)
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
		size_t len = sp_build_frame(buf, c % C_ALL, cfg, s->dev_mac, s->peer_mac, &seed);
		bool same;

		a.data_in = b.data_in = buf;
		a.data_size_in = b.data_size_in = (__u32)len;
		a.data_out = out_a;
		b.data_out = out_b;
		a.data_size_out = b.data_size_out = sizeof(out_a);
		if (bpf_prog_test_run_opts(s->gens[0].fd, &a) || bpf_prog_test_run_opts(fd, &b)) {
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
		json_array_append_new(rows, json_pack("{s:s, s:I, s:I, s:b}", "packet", sp_class_names[c % C_ALL],
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

/* The verdict check, with its probe frames kept out of the profile (they
 * count in lb_prof like any packet). */
static int check(struct specializer *s, struct candidate *c)
{
	struct lb_prof before, after;
	__u64 *bb = &s->base.site[0][0];
	const __u64 *x = &before.site[0][0], *y = &after.site[0][0];
	size_t k, n = (sizeof(before) - offsetof(struct lb_prof, site)) / 8;
	int e;

	sp_prof_read(s, &before);
	e = verdict_check(s, c->fd, &c->cfg, &c->equiv);
	sp_prof_read(s, &after);
	for (k = 0; k < n; k++)
		bb[k] += y[k] - x[k];
	s->guard_base += sp_guard_total(&after) - sp_guard_total(&before);
	if (e) {
		char *j = json_dumps(c->equiv, JSON_COMPACT);

		sp_progress(s, "candidate refused: verdicts differ from generation 0: %s", j ? j : "");
		free(j);
	}
	return e;
}

/* The candidate becomes generation g (g takes its fd and verdicts). */
static void adopt(struct specializer *s, const struct spec_plan *pl, struct candidate *c,
		  struct sp_gen *g)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int i;

	g->fd = c->fd;
	c->fd = -1;
	g->spec_mask = pl->spec_mask;
	g->hot_mask = pl->hot_mask;
	g->spiked = pl->spike;
	g->cfg = c->cfg;
	g->cfg_epoch = s->cfg_epoch;
	g->insns = (uint32_t)c->p.n;
	g->equivalence = c->equiv;
	c->equiv = NULL;
	for (i = 0; i < c->st.n; i++)
		sp_strs_push(c->st.s[i].transform ? &g->transforms : &g->assumptions, c->st.s[i].id);
	memset(&info, 0, sizeof(info));
	if (!bpf_prog_get_info_by_fd(g->fd, &info, &len))
		g->prog_id = info.id;
}

/* Receipt and 'loaded' entry of g: its steps, the verdict check, the
 * submitted instructions and the verifier log. 0 or -errno. */
static int record(struct specializer *s, struct candidate *c, struct sp_gen *g)
{
	struct pb_generation_opts go = { .sz = sizeof(go),
		.parent_generation_id = pb_generation__id(s->gens[0].g),
		.source_build_id = s->source_id, .optimizer_name = OPTIMIZER_NAME,
		.optimizer_version = PROBITY_VERSION,
		.optimizer_build_id = s->optimizer_build_id };
	struct pb_capture_opts co = { .sz = sizeof(co), .submitted_insns = c->p.v,
		.submitted_len = c->p.n * sizeof(*c->p.v), .verifier_log = c->vlog,
		.log_level = 4, .load_ns = c->load_ns };
	char *eqs = json_dumps(g->equivalence, JSON_COMPACT | JSON_SORT_KEYS);
	int e, i;

	e = pb_generation__begin(s->store, &go, &g->g);
	for (i = 0; !e && i < c->st.n; i++) {
		const struct sp_receipt_step *st = &c->st.s[i];
		size_t len = st->evidence ? strlen(st->evidence) : 0;

		e = st->transform
			    ? pb_generation__add_transform(g->g, st->id, st->desc, st->evidence, len)
			    : pb_generation__add_assumption(g->g, st->id, st->desc, st->evidence, len);
	}
	if (!e)
		e = pb_generation__add_assumption(g->g, "verdicts/test-run",
						  "same XDP verdicts as generation 0 on every "
						  "probe frame (BPF_PROG_TEST_RUN)", eqs,
						  eqs ? strlen(eqs) : 0);
	free(eqs);
	if (!e)
		e = pb_generation__capture_fd_opts(g->g, g->fd, &co);
	if (e) {
		sp_progress(s, "cannot record generation %d: %s", g->ordinal, strerror(-e));
		return e;
	}
	g->logged = true;
	sp_strs_push(&g->assumptions, "verdicts/test-run");
	return 0;
}

/* g is active: say so, and close the specialized one it replaced. */
static void activated(struct specializer *s, struct sp_gen *g, bool drop)
{
	char ids[512] = "";
	size_t k;

	for (k = 0; k < g->transforms.n; k++)
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s", k ? " " : "",
			 g->transforms.v[k]);
	sp_progress(s, "gen %d (prog %u, %u->%u insns) active%s: %s", g->ordinal, g->prog_id,
		    (unsigned)s->generic_n, g->insns,
		    drop ? " WITHOUT lifecycle records (--inject-drop-handoff)" : "", ids);
	for (k = 0; k < s->n_gens; k++) {
		struct sp_gen *o = &s->gens[k];

		if (o != g && !o->generic && !o->closed)
			sp_gen__close(s, o);
	}
}

/* Recorded (unless the handoff is dropped) and swapped in. When this
 * fails, g is closed (its unload logged if it was recorded). */
static int install(struct specializer *s, struct candidate *c, struct sp_gen *g)
{
	bool drop = s->o.inject_drop_handoff && s->handoffs + 1 == s->o.inject_drop_handoff;
	int e = 0;

	if (!drop)
		e = record(s, c, g);
	if (!e) {
		e = sp_gen__activate(s, g, "replaced");
		if (e)
			sp_progress(s, "swap to gen %d failed: %s", g->ordinal, strerror(-e));
	}
	if (e) {
		/* not attached: close it (logging the unload if it was recorded) */
		if (g->logged) {
			pb_generation__retire(g->g, "refused: swap failed");
			sp_strs_push(&g->retired, "refused: swap failed");
		}
		sp_gen__close(s, g);
		return e;
	}
	s->handoffs++;
	s->n_specialized++;
	activated(s, g, drop);
	return 0;
}

int sp_specialize(struct specializer *s, const struct spec_plan *pl)
{
	struct candidate c = { .fd = -1 };
	struct sp_gen *g;
	int e;

	sp_cfg_read(s, &c.cfg);
	e = sp_rewrite(s, pl, &c.cfg, &c.p, &c.st);
	if (!e)
		e = load(s, &c);
	if (!e)
		e = check(s, &c);
	if (!e) {
		g = sp_gen__new(s);
		if (g) {
			adopt(s, pl, &c, g);
			e = install(s, &c, g);
		} else {
			e = -ENOMEM;
		}
	}
	if (e)
		s->rejected++;
	if (c.fd >= 0)
		close(c.fd);
	json_decref(c.equiv);
	sp_receipt_steps__release(&c.st);
	rw_insns__release(&c.p);
	free(c.vlog);
	return e;
}
