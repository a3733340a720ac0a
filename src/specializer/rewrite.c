/* SPDX-License-Identifier: BSD-2-Clause */
/* rewrite.c: a plan into instructions and receipt steps (rewrite.h). The
 * stages run in this order; each adds its transform (with the pass's
 * report as evidence) and, where the transform rests on an observation,
 * the assumption:
 *
 *   1. const-inline/cfg      configuration values become immediates
 *   2. dead-path/cfg         disabled features and constant branches go
 *   3. guard/ctx-spill, branch-spec/<site>, dead-path/cold
 *                            biased branches behind guards (plan sites)
 *   4. hash-unroll/flow-rN   the planted slow transform (--plant-spike)
 *   5. config/epoch-N        what every inlined value relies on
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "specializer/profile.h"
#include "specializer/rewrite.h"
#include "lb_xdp.skel.h"

#define TRANSFORM_SCHEMA "probity.rejit.transform/v1"

static void steps_add(struct sp_receipt_steps *st, bool transform, const char *id, char *evidence,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void steps_add(struct sp_receipt_steps *st, bool transform, const char *id, char *evidence,
		      const char *fmt, ...)
{
	struct sp_receipt_step *s;
	va_list ap;

	if (st->n == SP_MAX_RECEIPT_STEPS) {
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

void sp_receipt_steps__release(struct sp_receipt_steps *st)
{
	while (st->n)
		free(st->s[--st->n].evidence);
}

static json_t *report_json(const struct rw_report *rep)
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

static int refused(struct specializer *s, const char *what, int err)
{
	sp_progress(s, "rewrite refused: %s: %s", what, strerror(-err));
	return err;
}

/* 1. configuration values become immediates */
static int stage_const_inline(struct specializer *s, const struct lb_cfg *cfg, struct rw_insns *p,
			      struct sp_receipt_steps *st)
{
	struct rw_report rep;
	json_t *fields, *ev;
	uint32_t i;
	int e;

	e = rw_pass_const_inline(p, bpf_map__fd(s->skel->maps.data_cfg), cfg, sizeof(*cfg), &rep);
	if (e)
		return refused(s, "const-inline", e);
	fields = json_array();
	for (i = 0; i < rep.n_edits; i++) {
		const struct sp_cfg_field *f = sp_cfg_field_at((uint32_t)rep.edits[i].a);

		json_array_append_new(fields, json_pack("{s:I, s:s, s:I, s:I}", "insn",
							(json_int_t)rep.edits[i].insn, "field",
							f ? f->name : "?", "size", (json_int_t)rep.edits[i].b,
							"value", (json_int_t)rep.edits[i].c));
	}
	ev = json_pack("{s:s, s:s, s:i, s:o, s:o, s:o}", "schema", TRANSFORM_SCHEMA,
		       "transform", "const-inline/cfg", "config_epoch", (int)s->cfg_epoch, "loads", fields,
		       "config", sp_cfg_json(cfg), "pass", report_json(&rep));
	steps_add(st, true, "const-inline/cfg", sp_dump_json(ev),
		  "%u loads of the configuration map (.data.cfg) replaced by their values", rep.n_edits);
	return 0;
}

/* 2. disabled features and constant branches go */
static int stage_dead_path_cfg(struct specializer *s, const struct lb_cfg *cfg, struct rw_insns *p,
			       struct sp_receipt_steps *st)
{
	struct rw_report rep;
	char dis[128] = "";
	json_t *ev;
	uint32_t i;
	int e;

	if ((e = rw_pass_fold_dce(p, &rep)))
		return refused(s, "dead-path", e);
	for (i = 0; i < sp_n_cfg_fields; i++)
		if (!strncmp(sp_cfg_fields[i].name, "feature_", 8) && !sp_cfg_get(cfg, i))
			snprintf(dis + strlen(dis), sizeof(dis) - strlen(dis), "%s%s=0",
				 *dis ? " " : "", sp_cfg_fields[i].name);
	ev = json_pack("{s:s, s:s, s:s, s:o}", "schema", TRANSFORM_SCHEMA,
		       "transform", "dead-path/cfg", "disabled_features", dis, "pass",
		       report_json(&rep));
	steps_add(st, true, "dead-path/cfg", sp_dump_json(ev),
		  "%u constant branches folded, %u dead instructions removed (disabled: %s)",
		  rep.folded, rep.removed, *dis ? dis : "none");
	return 0;
}

/* 3b. one biased site behind its guard, with the profile it rests on */
static int stage_site(struct specializer *s, const struct spec_plan *pl, int site_no,
		      struct rw_guard *g, struct rw_insns *p, struct sp_receipt_steps *st)
{
	const char *name = sp_site_names[site_no];
	bool hot = pl->hot_mask & (1u << site_no);
	uint64_t taken = pl->taken[site_no], not_taken = pl->not_taken[site_no];
	uint64_t tot = taken + not_taken, hot_n = hot ? taken : not_taken;
	size_t site_off = offsetof(struct lb_prof, site) + 16 * (size_t)site_no;
	struct rw_report rep;
	struct rw_site site;
	char id[64];
	json_t *ev;
	int e;

	g->guard_fail_off = offsetof(struct lb_prof, guard_fail) + 8 * (size_t)site_no;
	e = rw_find_site(p, g->prof_fd, site_off, site_off + 8, &site);
	if (!e)
		e = rw_pass_branch_spec(p, &site, hot, g, &rep);
	if (e) {
		snprintf(id, sizeof(id), "branch-spec/%s", name);
		return refused(s, id, e);
	}
	snprintf(id, sizeof(id), "branch-spec/%s", name);
	ev = json_pack("{s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:o}", "schema",
		       TRANSFORM_SCHEMA, "transform", id, "site", name,
		       "jmp_insn", (json_int_t)site.jmp, "hot", hot ? "taken" : "not-taken",
		       "taken", (json_int_t)taken, "not_taken", (json_int_t)not_taken,
		       "bias_permille", (json_int_t)(tot ? hot_n * 1000 / tot : 0),
		       "profile_epoch", (json_int_t)s->last_profile_epoch, "pass", report_json(&rep));
	steps_add(st, true, id, sp_dump_json(ev),
		  "branch %s (insn %u) specialized to %s; the other side is a guard: "
		  "count, tail call into generation 0", name, site.jmp, hot ? "taken" : "not taken");
	snprintf(id, sizeof(id), "profile/epoch-%u/%s", s->last_profile_epoch, name);
	steps_add(st, false, id, strdup(s->last_profile ? s->last_profile : "{}"),
		  "%s %s in >= %u.%u%% of packets: observed %llu of %llu in epoch %u",
		  name, hot ? "taken" : "not taken", s->o.bias_permille / 10,
		  s->o.bias_permille % 10, (unsigned long long)hot_n, (unsigned long long)tot,
		  s->last_profile_epoch);
	return 0;
}

/* 3. biased branches behind guards: the ctx spill the guards' tail call
 * needs, every plan site, then the cold code they cut off */
static int stage_guards(struct specializer *s, const struct spec_plan *pl, struct rw_insns *p,
			struct sp_receipt_steps *st)
{
	struct rw_guard g = {
		.prof_fd = bpf_map__fd(s->skel->maps.bss),
		.fallback_failed_off = offsetof(struct lb_prof, fallback_failed),
		.prog_array_fd = bpf_map__fd(s->skel->maps.lb_fallback),
		.fallback_verdict = XDP_PASS,
	};
	struct rw_report rep;
	json_t *ev;
	int e, i;

	if ((e = rw_free_stack_slot(p, &g.ctx_slot)) || (e = rw_pass_spill_ctx(p, g.ctx_slot, &rep)))
		return refused(s, "guard/ctx-spill", e);
	ev = json_pack("{s:s, s:s, s:i, s:o}", "schema", TRANSFORM_SCHEMA,
		       "transform", "guard/ctx-spill", "slot", g.ctx_slot, "pass", report_json(&rep));
	steps_add(st, true, "guard/ctx-spill", sp_dump_json(ev),
		  "ctx saved at r10%+d on entry, for the guards' tail call into generation 0",
		  g.ctx_slot);
	for (i = 0; i < LB_NSITES; i++)
		if ((pl->spec_mask & (1u << i)) && (e = stage_site(s, pl, i, &g, p, st)))
			return e;
	if ((e = rw_pass_fold_dce(p, &rep)))
		return refused(s, "dead-path/cold", e);
	ev = json_pack("{s:s, s:s, s:o}", "schema", TRANSFORM_SCHEMA, "transform",
		       "dead-path/cold", "pass", report_json(&rep));
	steps_add(st, true, "dead-path/cold", sp_dump_json(ev),
		  "%u instructions only reachable through guarded cold sides removed", rep.removed);
	return 0;
}

/* 4. the planted slow transform (--plant-spike) */
static int stage_spike(struct specializer *s, struct rw_insns *p, struct sp_receipt_steps *st)
{
	struct rw_report rep;
	char id[64];
	json_t *ev;
	int e;

	if ((e = rw_pass_hash_unroll(p, s->o.spike_rounds, &rep)))
		return refused(s, "hash-unroll", e);
	snprintf(id, sizeof(id), "hash-unroll/flow-r%u", s->o.spike_rounds);
	ev = json_pack("{s:s, s:s, s:I, s:b, s:o}", "schema", TRANSFORM_SCHEMA,
		       "transform", id, "rounds", (json_int_t)s->o.spike_rounds, "planted", 1,
		       "pass", report_json(&rep));
	steps_add(st, true, id, sp_dump_json(ev),
		  "flow hash unrolled into %u mixing rounds at entry (planted slow transform, "
		  "--plant-spike)", s->o.spike_rounds);
	snprintf(id, sizeof(id), "profile/epoch-%u/hash-cost", s->last_profile_epoch);
	steps_add(st, false, id, strdup(s->last_profile ? s->last_profile : "{}"),
		  "an unrolled flow hash is cheaper than the generic one at the profiled "
		  "rate (epoch %u) -- false: planted for the attribution demo",
		  s->last_profile_epoch);
	return 0;
}

/* 5. what every inlined value relies on */
static void stage_config_assumption(struct specializer *s, const struct lb_cfg *cfg,
				    struct sp_receipt_steps *st)
{
	char id[64];
	json_t *c = json_pack("{s:s, s:i, s:o}", "schema", "probity.rejit.config/v1", "config_epoch",
			      (int)s->cfg_epoch, "config", sp_cfg_json(cfg));

	snprintf(id, sizeof(id), "config/epoch-%u", s->cfg_epoch);
	steps_add(st, false, id, sp_dump_json(c),
		  "the configuration map keeps the values of config epoch %u (a change "
		  "deoptimizes first)", s->cfg_epoch);
}

int sp_rewrite(struct specializer *s, const struct spec_plan *pl, const struct lb_cfg *cfg,
	       struct rw_insns *p, struct sp_receipt_steps *st)
{
	int e;

	if ((e = rw_insns__init(p, s->generic_insns, s->generic_n)))
		return refused(s, "init", e);
	if ((e = stage_const_inline(s, cfg, p, st)) || (e = stage_dead_path_cfg(s, cfg, p, st)))
		return e;
	if (pl->spec_mask && (e = stage_guards(s, pl, p, st)))
		return e;
	if (pl->spike && (e = stage_spike(s, p, st)))
		return e;
	stage_config_assumption(s, cfg, st);
	return 0;
}
