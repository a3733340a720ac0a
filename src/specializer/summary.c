/* SPDX-License-Identifier: BSD-2-Clause */
/* summary.c: what a run did (specializer.h's struct sp_summary), read
 * from the specializer's state, and its JSON form (`probity -j rejit`,
 * docs/rejit.md): key order is the order it has always had.
 */
#include <errno.h>
#include <stdlib.h>
#include "specializer/state.h"

static void gen_summary(const struct sp_gen *g, struct sp_gen_summary *o)
{
	o->ordinal = g->ordinal;
	o->generic = g->generic;
	o->generation_id = g->logged ? pb_generation__id(g->g) : NULL;
	o->receipt = g->logged ? pb_generation__receipt_digest(g->g) : NULL;
	o->prog_id = g->prog_id;
	o->insns = g->insns;
	o->logged = g->logged;
	o->unloaded = g->closed;
	o->planted_spike = g->spiked;
	o->transforms = &g->transforms;
	o->assumptions = &g->assumptions;
	o->retired = &g->retired;
	o->activations = g->activations;
	o->loaded_t_ms = g->loaded_ms;
	o->run_cnt = g->run_cnt;
	o->run_time_ns = g->run_time_ns;
	o->equivalence = g->equivalence;
}

const struct sp_summary *specializer__summary(struct specializer *s)
{
	struct sp_summary *o = &s->summary;
	struct sp_gen_summary *gens;
	size_t i;

	gens = realloc(s->summary_gens, (s->n_gens ? s->n_gens : 1) * sizeof(*gens));
	if (!gens) {
		errno = ENOMEM;
		return NULL;
	}
	s->summary_gens = gens;
	for (i = 0; i < s->n_gens; i++)
		gen_summary(&s->gens[i], &gens[i]);
	o->store = s->o.store_dir;
	o->netns = s->netns;
	o->dev = s->o.dev;
	o->ifindex = s->ifindex;
	o->epochs = s->epoch;
	o->gens = gens;
	o->n_gens = s->n_gens;
	o->swaps = s->swaps;
	o->n_swaps = s->n_swaps;
	/* the counters as last read (the maps are gone after stop) */
	o->site_names = sp_site_names;
	for (i = 0; i < LB_NSITES; i++)
		o->guard_fail[i] = s->last_prof.guard_fail[i];
	o->fallback_failed = s->last_prof.fallback_failed;
	o->deopts = s->deopts;
	o->rejected_candidates = s->rejected;
	o->specialized = s->n_specialized;
	o->profile = s->epochs;
	o->n_profile = s->n_epochs;
	o->script_steps = s->steps_done;
	o->n_script_steps = s->n_steps_done;
	o->sent = atomic_load(&s->sent);
	o->send_errors = atomic_load(&s->send_errors);
	return o;
}

static json_t *strs_json(const struct sp_strs *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(a, json_string(l->v[i]));
	return a;
}

static json_t *gen_json(const struct sp_gen_summary *g)
{
	return json_pack(
		"{s:i, s:s, s:o, s:o, s:I, s:b, s:I, s:o, s:o, s:i, s:o, s:b, s:b, s:I, s:I, s:I, s:o}",
		"ordinal", g->ordinal, "kind", g->generic ? "generic" : "specialized",
		"generation_id", g->generation_id ? json_string(g->generation_id) : json_null(),
		"receipt", g->receipt ? json_string(g->receipt) : json_null(),
		"prog_id", (json_int_t)g->prog_id, "logged", g->logged,
		"insns", (json_int_t)g->insns,
		"transforms", strs_json(g->transforms), "assumptions", strs_json(g->assumptions),
		"activations", g->activations, "retired", strs_json(g->retired),
		"unloaded", g->unloaded, "planted_spike", g->planted_spike,
		"loaded_t_ms", (json_int_t)g->loaded_t_ms,
		"run_cnt", (json_int_t)g->run_cnt, "run_time_ns", (json_int_t)g->run_time_ns,
		"equivalence", g->equivalence ? json_deep_copy(g->equivalence) : json_null());
}

static json_t *guards_json(const struct sp_summary *sum)
{
	json_t *guards = json_object(), *gf = json_object();
	int i;

	for (i = 0; i < SP_NSITES; i++)
		json_object_set_new(gf, sum->site_names[i], json_integer((json_int_t)sum->guard_fail[i]));
	json_object_set_new(guards, "failures", gf);
	json_object_set_new(guards, "fallback_failed", json_integer((json_int_t)sum->fallback_failed));
	return guards;
}

json_t *sp_summary__to_json(const struct sp_summary *sum)
{
	json_t *gens = json_array(), *swaps = json_array(), *prof = json_array(), *steps = json_array();
	size_t i;

	for (i = 0; i < sum->n_gens; i++)
		json_array_append_new(gens, gen_json(&sum->gens[i]));
	for (i = 0; i < sum->n_swaps; i++) {
		const struct sp_swap *w = &sum->swaps[i];

		json_array_append_new(swaps, json_pack("{s:I, s:i, s:i, s:s, s:b}", "t_ms",
						       (json_int_t)w->t_ms, "from", w->from, "to", w->to,
						       "reason", w->reason, "logged", w->logged));
	}
	for (i = 0; i < sum->n_profile; i++) {
		const struct sp_epoch_plan *e = &sum->profile[i];

		json_array_append_new(prof, json_pack("{s:I, s:I, s:I, s:i}", "epoch",
						      (json_int_t)e->epoch, "spec_mask",
						      (json_int_t)e->spec_mask, "hot_mask",
						      (json_int_t)e->hot_mask, "active", e->active));
	}
	for (i = 0; i < sum->n_script_steps; i++) {
		const struct sp_step_done *st = &sum->script_steps[i];

		json_array_append_new(steps, json_pack("{s:I, s:I, s:s}", "t_ms", (json_int_t)st->t_ms,
						       "line", (json_int_t)st->line, "kind",
						       st->kind == SP_STEP_CONFIG ? "config" : "traffic"));
	}
	return json_pack("{s:s, s:s, s:s, s:i, s:I, s:o, s:o, s:o, s:I, s:I, s:I, s:o, s:o, s:{s:I, s:I}}",
			 "store", sum->store, "netns", sum->netns, "dev", sum->dev,
			 "ifindex", sum->ifindex, "epochs", (json_int_t)sum->epochs,
			 "generations", gens, "swaps", swaps, "guards", guards_json(sum),
			 "deopts", (json_int_t)sum->deopts,
			 "rejected_candidates", (json_int_t)sum->rejected_candidates,
			 "specialized", (json_int_t)sum->specialized,
			 "profile", prof, "script_steps", steps,
			 "traffic", "sent", (json_int_t)sum->sent, "send_errors",
			 (json_int_t)sum->send_errors);
}
