/* candidate.c: one specialization of `probity rejit`: rewrite
 * generation 0's relocated instructions by the plan (src/rejit/passes.c),
 * load with bpf_prog_load (BPF_LOG_STATS), compare verdicts and output
 * frames with generation 0 through BPF_PROG_TEST_RUN, write the receipt
 * (transforms, assumptions, evidence) and swap it in.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/version.h"
#include "receipts/receipts_int.h"
#include "rejit/rejit.h"
#include "rejit/runtime_int.h"
#include "lb_xdp.skel.h"

#define VLOG_SIZE (256 * 1024)


char *rt_dump_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	return s;
}


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
	struct step s[24];
	int n;
};

static void steps_add(struct steps *st, bool transform, const char *id, char *evidence,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void steps_add(struct steps *st, bool transform, const char *id, char *evidence,
		      const char *fmt, ...)
{
	struct step *s;
	va_list ap;

	if (st->n == 24) {
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
		       "config", rt_cfg_json(cfg), "pass", report_json(&rep));
	steps_add(st, true, "const-inline/cfg", rt_dump_json(ev),
		  "%u loads of the configuration map (.data.cfg) replaced by their values", rep.n_edits);
	/* 2. disabled features and constant branches go */
	if ((e = rj_pass_fold_dce(p, &rep))) {
		snprintf(err, errsz, "dead-path: %s", strerror(-e));
		return e;
	}
	{
		char dis[128] = "";

		for (i = 0; i < rj_n_cfg_fields; i++)
			if (!strncmp(rj_cfg_fields[i].name, "feature_", 8) && !rt_cfg_get(cfg, i))
				snprintf(dis + strlen(dis), sizeof(dis) - strlen(dis), "%s%s=0",
					 *dis ? " " : "", rj_cfg_fields[i].name);
		ev = json_pack("{s:s, s:s, s:s, s:o}", "schema", "probity.rejit.transform/v1",
			       "transform", "dead-path/cfg", "disabled_features", dis, "pass",
			       report_json(&rep));
		steps_add(st, true, "dead-path/cfg", rt_dump_json(ev),
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
		steps_add(st, true, "guard/ctx-spill", rt_dump_json(ev),
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
				snprintf(err, errsz, "branch-spec/%s: %s", rt_site_names[s], strerror(-e));
				return e;
			}
			snprintf(id, sizeof(id), "branch-spec/%s", rt_site_names[s]);
			ev = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:o}", "schema",
				       "probity.rejit.transform/v1", "transform", id, "site", rt_site_names[s],
				       "jmp_insn", (json_int_t)site.jmp, "hot", hot ? "taken" : "not-taken",
				       "taken", (json_int_t)pl->taken[s], "not_taken",
				       (json_int_t)pl->not_taken[s], "bias_permille",
				       (json_int_t)(tot ? (hot ? pl->taken[s] : pl->not_taken[s]) * 1000 / tot : 0),
				       "profile_epoch", (json_int_t)r->last_profile_epoch, "pass",
				       report_json(&rep));
			steps_add(st, true, id, rt_dump_json(ev),
				  "branch %s (insn %u) specialized to %s; the other side is a guard: "
				  "count, tail call into generation 0", rt_site_names[s], site.jmp,
				  hot ? "taken" : "not taken");
			snprintf(id, sizeof(id), "profile/epoch-%u/%s", r->last_profile_epoch, rt_site_names[s]);
			steps_add(st, false, id, strdup(r->last_profile ? r->last_profile : "{}"),
				  "%s %s in >= %u.%u%% of packets: observed %llu of %llu in epoch %u",
				  rt_site_names[s], hot ? "taken" : "not taken", r->o.bias_permille / 10,
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
		steps_add(st, true, "dead-path/cold", rt_dump_json(ev),
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
		steps_add(st, true, id, rt_dump_json(ev),
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
				      (int)r->cfg_epoch, "config", rt_cfg_json(cfg));

		snprintf(id, sizeof(id), "config/epoch-%u", r->cfg_epoch);
		steps_add(st, false, id, rt_dump_json(c),
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
		size_t len = rt_build_frame(buf, c % C_ALL, cfg, r->dev_mac, r->peer_mac, &seed);
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
		json_array_append_new(rows, json_pack("{s:s, s:I, s:I, s:b}", "packet", rt_class_names[c % C_ALL],
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

int rt_specialize(struct rejit *r, const struct plan *pl)
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

	rt_cfg_read(r, &cfg);
	e = rewrite(r, pl, &cfg, &p, &st, err, sizeof(err));
	if (e) {
		rt_progress(r, "rewrite refused: %s", err);
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
		rt_progress(r, "verifier rejected the candidate (%s); log tail: %.300s", strerror(-e),
			 strlen(vlog) > 300 ? vlog + strlen(vlog) - 300 : vlog);
		if (fd >= 0)
			close(fd);
		fd = -1;
		goto fail;
	}
	/* the probes count in lb_prof: keep them out of the profile */
	rt_prof_read(r, &before);
	e = verdict_check(r, fd, &cfg, &equiv);
	rt_prof_read(r, &after);
	{
		__u64 *bb = &r->base.site[0][0];
		const __u64 *x = &before.site[0][0], *y = &after.site[0][0];
		size_t k, n = (sizeof(before) - offsetof(struct lb_prof, site)) / 8;

		for (k = 0; k < n; k++)
			bb[k] += y[k] - x[k];
		r->guard_base += rt_guard_total(&after) - rt_guard_total(&before);
	}
	if (e) {
		char *s = json_dumps(equiv, JSON_COMPACT);

		rt_progress(r, "candidate refused: verdicts differ from generation 0: %s", s ? s : "");
		free(s);
		goto fail;
	}
	g = rt_gen_add(r);
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
			rt_progress(r, "cannot record generation %d: %s", g->ordinal, strerror(-e));
			goto drop_gen;
		}
		g->logged = true;
		json_array_append_new(g->assumptions, json_string("verdicts/test-run"));
	}
	e = rt_activate(r, g, "replaced");
	if (e) {
		rt_progress(r, "swap to gen %d failed: %s", g->ordinal, strerror(-e));
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
		rt_progress(r, "gen %d (prog %u, %u->%u insns) active%s: %s", g->ordinal, g->prog_id,
			 (unsigned)r->generic_n, g->insns,
			 drop ? " WITHOUT lifecycle records (--inject-drop-handoff)" : "", ids);
	}
	for (i = 0; i < (int)r->n_gens; i++) {	/* the one it replaced, if specialized */
		struct rj_gen *o = &r->gens[i];

		if (o != g && !o->generic && !o->closed)
			rt_gen_close(r, o);
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
	rt_gen_close(r, g);
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
