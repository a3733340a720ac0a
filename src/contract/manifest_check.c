/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_check.c: the checks that relate fields and items to each other
 * (docs/manifest.md, "Checks"): unique names, references that resolve,
 * site/kind combinations that can be attached and read correctly, and the
 * generation rule. Each check reports at the field that has to change.
 *
 * Fields that already failed in manifest_parse.c are skipped (the *_ok
 * flags), so one mistake produces one finding.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest_int.h"

/* Names sorted for duplicate detection and look-up in O(n log n): a
 * manifest may hold 10000 events, and the fuzzer must not time out. */
struct name_ref {
	const char *name;
	int idx;
};

struct name_index {
	struct name_ref *v;
	size_t n;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int index_build(struct name_index *ix, size_t n, const char *(*get)(void *, size_t),
		       void *arg)
{
	size_t i;

	ix->n = 0;
	ix->v = calloc(n ? n : 1, sizeof(*ix->v));
	if (!ix->v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name = get(arg, i);

		if (name)
			ix->v[ix->n++] = (struct name_ref){ name, (int)i };
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), name_ref_cmp);
	return 0;
}

/* First (lowest index) item named name, or -1. */
static int index_find(const struct name_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && !strcmp(ix->v[lo].name, name) ? ix->v[lo].idx : -1;
}

/* "a, b, c" (at most 8, then ", ...") plus " (did you mean 'x'?)". */
static void known_names(const struct mctx *c, const struct name_index *ix, const char *word,
			char *list, size_t lsz, char *hint, size_t hsz)
{
	const char *cands[64];
	size_t i, o = 0, n = 0;

	list[0] = '\0';
	hint[0] = '\0';
	/* nothing is printed once capped: skip the edit distances */
	if (c->capped)
		return;
	for (i = 0; i < ix->n && o < lsz; i++) {
		if (i == 8) {
			snprintf(list + o, lsz - o, ", ...");
			break;
		}
		o += snprintf(list + o, lsz - o, "%s%s", i ? ", " : "", ix->v[i].name);
	}
	for (i = 0; i < ix->n && n < 64; i++)
		cands[n++] = ix->v[i].name;
	if (word)
		suggest(word, strlen(word), cands, n, false, hint, hsz);
}

static const char *target_id(void *arg, size_t i)
{
	return ((struct manifest *)arg)->targets[i].id;
}

static const char *resource_name(void *arg, size_t i)
{
	return ((struct manifest *)arg)->resources[i].name;
}

static const char *event_id(void *arg, size_t i)
{
	return ((struct manifest *)arg)->events[i].id;
}

typedef struct fields *(*fields_of_fn)(struct mctx *c, size_t i);

static void report_duplicates(struct mctx *c, const struct name_index *ix, const char *list,
			      const char *key, const char *what, fields_of_fn fields_of,
			      int key_idx)
{
	char path[64];
	size_t i;

	for (i = 1; i < ix->n; i++) {
		const struct name_ref *first, *dup = &ix->v[i];
		const struct ynode *fv, *dv;

		if (strcmp(ix->v[i - 1].name, dup->name))
			continue;
		/* the first of the run is the original */
		first = &ix->v[i - 1];
		while (first > ix->v && !strcmp((first - 1)->name, dup->name))
			first--;
		fv = fields_of(c, first->idx)->val[key_idx];
		dv = fields_of(c, dup->idx)->val[key_idx];
		snprintf(path, sizeof(path), "%s[%d]", list, dup->idx);
		merr(c, dv ? dv->loc : (struct pb_loc){ 0, 0 }, path, key,
		     "duplicate %s '%s' (first used by %s[%d] at %d:%d)", what, dup->name, list,
		     first->idx, fv ? fv->loc.line : 0, fv ? fv->loc.col : 0);
	}
}

static struct fields *target_fields(struct mctx *c, size_t i)
{
	return &c->ti[i].f;
}

static struct fields *resource_fields(struct mctx *c, size_t i)
{
	return &c->ri[i].f;
}

static struct fields *event_fields(struct mctx *c, size_t i)
{
	return &c->ei[i].f;
}

static void check_targets(struct mctx *c, struct name_index *tix)
{
	struct manifest *m = c->m;
	char path[64];
	size_t i;

	if (m->n_targets == 1 && !m->targets[0].id && !c->ti[0].f.val[TK_ID]) {
		m->targets[0].id = strdup("main");
		if (!m->targets[0].id)
			c->oom = true;
	}
	for (i = 0; m->n_targets > 1 && i < m->n_targets; i++) {
		if (c->ti[i].f.val[TK_ID])
			continue;
		snprintf(path, sizeof(path), "targets[%zu]", i);
		merr(c, m->targets[i].loc, path, "id",
		     "required when the manifest has several targets (events name their target with site.target)");
	}
	if (index_build(tix, m->n_targets, target_id, m)) {
		c->oom = true;
		return;
	}
	report_duplicates(c, tix, "targets", "id", "target id", target_fields, TK_ID);
}

/* ---- per-event checks ---------------------------------------------------- */

struct value_use {
	const char *key;
	const struct pb_value *v;
	struct pb_loc loc;
};

/* the values of an event that parsed, with where they were written */
static size_t event_values(const struct pb_event *e, const struct event_info *ei,
			   struct value_use *out)
{
	size_t n = 0;

	if (ei->instance_ok)
		out[n++] = (struct value_use){ "instance", &e->instance, e->instance.loc };
	if (ei->units_ok && ei->f.val[EK_UNITS])
		out[n++] = (struct value_use){ "units", &e->units, e->units.loc };
	if (ei->target_ok)
		out[n++] = (struct value_use){ "target", &e->target, e->target.loc };
	if (ei->when_ok)
		out[n++] = (struct value_use){ "when", &e->when.lhs, e->when.loc };
	if (ei->generation_ok)
		out[n++] = (struct value_use){ "generation", &e->generation, e->generation.loc };
	return n;
}

static void check_site(struct mctx *c, struct pb_event *e, struct event_info *ei,
		       const char *path, const struct name_index *tix)
{
	struct manifest *m = c->m;
	const struct ynode *tv = ei->site.val[SK_TARGET];
	char spath[96], list[200], hint[80];
	bool usdt = e->site.usdt_provider != NULL;

	snprintf(spath, sizeof(spath), "%s.site", path);
	/* which target */
	if (ei->site_target_given) {
		e->site.target_idx = m->n_targets ? index_find(tix, tv->str) : -1;
		if (m->n_targets && e->site.target_idx < 0 && !c->bad_target_id) {
			known_names(c, tix, tv->str, list, sizeof(list), hint, sizeof(hint));
			merr(c, tv->loc, spath, "target", "unknown target '%s' (targets: %s)%s", tv->str,
			     list, hint);
		}
	} else if (m->n_targets == 1) {
		e->site.target_idx = 0;
	} else if (m->n_targets > 1) {
		known_names(c, tix, NULL, list, sizeof(list), hint, sizeof(hint));
		merr(c, ei->site_loc, spath, "target",
		     "required when the manifest has several targets (one of: %s)", list);
	}
	if (!ei->site_kind_ok || !ei->kind_ok || !ei->at_ok)
		return;

	if (!ei->at_explicit)
		e->site.at = e->kind == PB_EV_WAIT && !usdt ? PB_AT_SPAN : PB_AT_ENTRY;

	if (usdt) {
		if (ei->at_explicit && e->site.at != PB_AT_ENTRY)
			merr(c, ei->site.val[SK_AT]->loc, spath, "at",
			     "a USDT probe fires at one point in the code: at must be entry, found '%s'",
			     pb_site_at_str(e->site.at));
		if (ei->site.val[SK_OFFSET])
			merr(c, ei->site.key[SK_OFFSET]->loc, spath, "offset",
			     "offset is only valid with symbol (a USDT probe has its own address)");
		return;
	}
	if (e->site.at == PB_AT_SPAN && e->kind != PB_EV_WAIT)
		merr(c, ei->site.val[SK_AT]->loc, spath, "at",
		     "at: span is only for WAIT events (the call's duration is the wait), not %s; use entry or return",
		     pb_event_kind_str(e->kind));
	if (e->site.at == PB_AT_RETURN && e->kind == PB_EV_WAIT)
		merr(c, ei->site.val[SK_AT]->loc, spath, "at",
		     "a WAIT is at: span (the whole call) or at: entry (a point marker), found 'return'");
	if (e->site.offset && e->site.at != PB_AT_ENTRY)
		merr(c, ei->site.val[SK_OFFSET]->loc, spath, "offset",
		     "offset %" PRIu64 " with at: %s%s: return probes attach at the function entry, so offset must be 0 (use at: entry for symbol+offset)",
		     e->site.offset, pb_site_at_str(e->site.at),
		     ei->at_explicit ? "" : " (the default for WAIT)");
}

static void check_values(struct mctx *c, struct pb_event *e, struct event_info *ei,
			 const char *path)
{
	struct value_use uses[5];
	bool usdt = e->site.usdt_provider != NULL;
	int max_arg = usdt ? PB_MAX_USDT_ARG : PB_MAX_UPROBE_ARG;
	size_t i, n = event_values(e, ei, uses);

	for (i = 0; i < n; i++) {
		const struct pb_value *v = uses[i].v;

		if (v->base == PB_VAL_ARG && ei->site_kind_ok && v->arg > max_arg) {
			if (usdt)
				merr(c, uses[i].loc, path, uses[i].key,
				     "arg%u is out of range: a USDT probe has at most %d arguments (arg0..arg%d)",
				     v->arg, PB_MAX_USDT_ARG + 1, PB_MAX_USDT_ARG);
			else
				merr(c, uses[i].loc, path, uses[i].key,
				     "arg%u is out of range at a symbol site: x86-64 passes the first 6 integer arguments in registers (arg0..arg%d)",
				     v->arg, PB_MAX_UPROBE_ARG);
		}
		if (!pb_value__uses_retval(v))
			continue;
		if (ei->returns_ok && e->returns == PB_RET_VOID) {
			merr(c, uses[i].loc, path, uses[i].key,
			     "retval is used but the event declares returns: void (a void function leaves garbage in the return register)");
			continue;
		}
		if (!ei->site_kind_ok)
			continue;
		if (usdt) {
			merr(c, uses[i].loc, path, uses[i].key,
			     "retval is not available at a USDT probe (use the probe's arguments, arg0..arg%d)",
			     PB_MAX_USDT_ARG);
			continue;
		}
		if (!ei->at_ok || !ei->kind_ok)
			continue;
		if (e->site.at == PB_AT_ENTRY) {
			merr(c, uses[i].loc, path, uses[i].key,
			     "retval with at: entry: the function has not returned yet (use at: return%s)",
			     e->kind == PB_EV_WAIT ? " or at: span" : "");
			continue;
		}
		if (e->kind == PB_EV_RELEASE && e->site.at == PB_AT_RETURN &&
		    e->returns != PB_RET_VALUE)
			merr(c, uses[i].loc, path, uses[i].key,
			     "a RELEASE at return that reads retval needs 'returns: value' on the event: release functions are usually void, and then the return register holds garbage");
	}
}

static void check_refs(struct mctx *c, struct pb_event *e, struct event_info *ei,
		       const char *path, const struct name_index *rix)
{
	const struct ynode *rv = ei->f.val[EK_RESOURCE], *trv = ei->f.val[EK_TARGET_RESOURCE];
	char list[200], hint[80];

	if (e->resource) {
		e->resource_idx = index_find(rix, e->resource);
		if (e->resource_idx < 0 && c->m->n_resources && !c->bad_resource_name) {
			known_names(c, rix, e->resource, list, sizeof(list), hint, sizeof(hint));
			merr(c, rv->loc, path, "resource", "unknown resource '%s' (resources: %s)%s",
			     e->resource, list, hint);
		}
	}
	if (e->target_resource) {
		e->target_resource_idx = index_find(rix, e->target_resource);
		if (e->target_resource_idx < 0 && c->m->n_resources && !c->bad_resource_name) {
			known_names(c, rix, e->target_resource, list, sizeof(list), hint,
				    sizeof(hint));
			merr(c, trv->loc, path, "target_resource",
			     "unknown resource '%s' (resources: %s)%s", e->target_resource, list, hint);
		}
	}
	if (!ei->kind_ok)
		return;
	if (e->kind != PB_EV_USE) {
		if (ei->f.key[EK_TARGET])
			merr(c, ei->f.key[EK_TARGET]->loc, path, "target",
			     "target is only for USE events (the instance used on or for), not %s",
			     pb_event_kind_str(e->kind));
		if (ei->f.key[EK_TARGET_RESOURCE])
			merr(c, ei->f.key[EK_TARGET_RESOURCE]->loc, path, "target_resource",
			     "target_resource is only for USE events, not %s",
			     pb_event_kind_str(e->kind));
	} else if (ei->f.key[EK_TARGET_RESOURCE] && !ei->f.key[EK_TARGET]) {
		merr(c, ei->f.key[EK_TARGET_RESOURCE]->loc, path, "target_resource",
		     "target_resource names the resource of 'target', but the event has no target");
	}
}

static void check_generation(struct mctx *c, struct pb_event *e, struct event_info *ei,
			     const char *path)
{
	const struct pb_resource *r;
	const struct ynode *gk = ei->f.key[EK_GENERATION];

	if (!ei->kind_ok)
		return;
	if (e->kind == PB_EV_WAIT) {
		if (gk)
			merr(c, gk->loc, path, "generation",
			     "generation is not read on WAIT events (an instance gets its generation when it is acquired)");
		return;
	}
	if (e->resource_idx < 0)
		return;
	r = &c->m->resources[e->resource_idx];
	if (!c->ri[e->resource_idx].f.val[RSK_GENERATION] ||
	    r->generation == PB_GEN_ON_ACQUIRE) {
		if (gk)
			merr(c, gk->loc, path, "generation",
			     "not allowed: resource '%s' has generation: on_acquire (probity numbers generations itself); declare generation: counter on the resource to read them from the program",
			     r->name);
	} else if (!gk) {
		merr(c, e->loc, path, "generation",
		     "required: resource '%s' has generation: counter, so every %s event must say where the generation is read (e.g. generation: \"*u32(arg0 + 8)\")",
		     r->name, pb_event_kind_str(e->kind));
	}
}

static void check_units_and_guard(struct mctx *c, struct pb_event *e, struct event_info *ei,
				  const char *path)
{
	int64_t k;

	if (ei->units_ok && ei->f.val[EK_UNITS] && pb_value__const(&e->units, &k) && k <= 0)
		merr(c, e->units.loc, path, "units", "a constant units must be > 0, found %" PRId64,
		     k);
	/* a negative constant against a value that is not sign-extended is
	 * compared as a huge unsigned number: `retval == -1` on an int
	 * function never matches, since the upper half of rax is not -1 */
	if (ei->when_ok && e->when.rhs < 0 && !e->when.lhs.cast_signed)
		mwarn(c, e->when.loc, path, "when",
		      "'%s' compares an unsigned 64-bit value with %" PRId64 "; cast it to its C type, e.g. s32(%s) %s %" PRId64,
		      e->when.text, e->when.rhs, e->when.lhs.text, pb_cmp_op_str(e->when.op),
		      e->when.rhs);
}

/* wakes_waiter names the WAIT span it wakes (`waiter`), by default the
 * resource's only WAIT span; it must be a WAIT at: span of the same
 * resource (a blocked waiter is observed inside such a span). */
static void check_waiter(struct mctx *c, struct pb_event *e, struct pb_prediction *p,
			 const struct fields *f, const char *ppath, struct pb_loc at,
			 const struct name_index *eix)
{
	const struct manifest *m = c->m;
	char list[200], hint[80];
	size_t i, o = 0, n = 0;
	int w = -1;

	if (e->resource_idx < 0)
		return;
	if (p->waiter) {
		w = index_find(eix, p->waiter);
		if (w < 0) {
			known_names(c, eix, p->waiter, list, sizeof(list), hint, sizeof(hint));
			merr(c, f->val[PRK_WAITER]->loc, ppath, "waiter",
			     "unknown event '%s' (events: %s)%s", p->waiter, list, hint);
			return;
		}
		if (!c->ei[w].kind_ok || !c->ei[w].at_ok || !c->ei[w].site_kind_ok)
			return;
		if (m->events[w].kind != PB_EV_WAIT || m->events[w].site.at != PB_AT_SPAN ||
		    m->events[w].resource_idx != e->resource_idx) {
			merr(c, f->val[PRK_WAITER]->loc, ppath, "waiter",
			     "expected a WAIT at: span of resource '%s' (a blocked waiter is seen inside its span), found %s '%s' (%s at: %s)",
			     m->resources[e->resource_idx].name,
			     m->events[w].resource_idx == e->resource_idx ? "event" :
									    "another resource's event",
			     p->waiter, pb_event_kind_str(m->events[w].kind),
			     pb_site_at_str(m->events[w].site.at));
			return;
		}
		p->waiter_idx = w;
		return;
	}
	list[0] = '\0';
	for (i = 0; i < m->n_events; i++) {
		if (m->events[i].resource_idx != e->resource_idx || !c->ei[i].kind_ok ||
		    !c->ei[i].at_ok || !c->ei[i].site_kind_ok || m->events[i].kind != PB_EV_WAIT ||
		    m->events[i].site.at != PB_AT_SPAN)
			continue;
		if (!n++)
			w = (int)i;
		if (o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", n > 1 ? ", " : "",
					      m->events[i].id ? m->events[i].id : "?");
	}
	if (n == 1)
		p->waiter_idx = w;
	else if (!n)
		merr(c, at, ppath, "effect",
		     "resource '%s' has no WAIT event at: span, so a blocked waiter can never be observed and wakes_waiter can never be judged",
		     m->resources[e->resource_idx].name);
	else
		merr(c, at, ppath, "waiter",
		     "required: resource '%s' has several WAIT spans (%s); say which one this RELEASE wakes, e.g. waiter: %s",
		     m->resources[e->resource_idx].name, list, m->events[w].id ? m->events[w].id : "ID");
}

/* predicts: each effect once; wakes_waiter only on a RELEASE (without
 * min_duration, with a waiter); the in-call effects need a call to be
 * judged over (at: span or at: return). */
static void check_predicts(struct mctx *c, struct pb_event *e, struct event_info *ei,
			   const char *path, const struct name_index *eix)
{
	const struct pb_prediction *seen[PB_FX__COUNT] = { 0 };
	char ppath[96];
	size_t i;

	for (i = 0; i < e->n_predicts; i++) {
		struct pb_prediction *p = &e->predicts[i];
		const struct fields *f = &ei->pred[i];
		struct pb_loc at = f->val[PRK_EFFECT] ? f->val[PRK_EFFECT]->loc : p->loc;

		if (p->effect >= PB_FX__COUNT)
			continue;	/* already reported */
		snprintf(ppath, sizeof(ppath), "%s.predicts[%zu]", path, i);
		if (seen[p->effect]) {
			merr(c, at, ppath, "effect",
			     "effect '%s' is already predicted (at %d:%d); give each effect once",
			     pb_effect_str(p->effect), seen[p->effect]->loc.line,
			     seen[p->effect]->loc.col);
			continue;
		}
		seen[p->effect] = p;
		if (p->effect != PB_FX_WAKES_WAITER && f->key[PRK_WAITER])
			merr(c, f->key[PRK_WAITER]->loc, ppath, "waiter",
			     "waiter names the WAIT a RELEASE wakes: only for effect: wakes_waiter, not %s",
			     pb_effect_str(p->effect));
		if (!ei->kind_ok)
			continue;
		if (p->effect == PB_FX_WAKES_WAITER) {
			if (e->kind != PB_EV_RELEASE) {
				merr(c, at, ppath, "effect",
				     "wakes_waiter is predicted of a RELEASE (the unit it hands back wakes a waiter), not of %s",
				     pb_event_kind_str(e->kind));
				continue;
			}
			if (f->key[PRK_MIN_DURATION])
				merr(c, f->key[PRK_MIN_DURATION]->loc, ppath, "min_duration",
				     "min_duration bounds the probed call, but wakes_waiter is judged after the RELEASE whatever its call lasted; leave it out");
			if (!f->key[PRK_WAITER] || p->waiter)
				check_waiter(c, e, p, f, ppath, at, eix);
			continue;
		}
		if (!ei->has_site || !ei->site_kind_ok || !ei->at_ok)
			continue;
		if (e->site.usdt_provider)
			merr(c, at, ppath, "effect",
			     "%s is judged over the probed call, from its entry to its return, but a USDT probe is one point in the code; probe the function (at: span or at: return)",
			     pb_effect_str(p->effect));
		else if (e->site.at == PB_AT_ENTRY)
			merr(c, at, ppath, "effect",
			     "%s is judged over the probed call, from its entry to its return: the event needs at: %s, found at: entry",
			     pb_effect_str(p->effect), e->kind == PB_EV_WAIT ? "span" : "return");
	}
}

void manifest__check(struct mctx *c)
{
	struct name_index tix = { 0 }, rix = { 0 }, eix = { 0 };
	struct manifest *m = c->m;
	char path[32];
	size_t i, *uses = NULL;

	/* an unknown name may be one that did not parse: say nothing then */
	for (i = 0; i < m->n_targets; i++)
		c->bad_target_id |= c->ti[i].f.val[TK_ID] && !m->targets[i].id;
	for (i = 0; i < m->n_resources; i++)
		c->bad_resource_name |= c->ri[i].f.val[RSK_NAME] && !m->resources[i].name;
	check_targets(c, &tix);
	if (index_build(&rix, m->n_resources, resource_name, m) ||
	    index_build(&eix, m->n_events, event_id, m)) {
		c->oom = true;
		goto out;
	}
	report_duplicates(c, &rix, "resources", "name", "resource name", resource_fields, RSK_NAME);
	report_duplicates(c, &eix, "events", "id", "event id", event_fields, EK_ID);

	for (i = 0; i < m->n_events && !c->oom; i++) {
		struct pb_event *e = &m->events[i];
		struct event_info *ei = &c->ei[i];

		if (!ei->is_map)
			continue; /* already reported */
		snprintf(path, sizeof(path), "events[%zu]", i);
		check_refs(c, e, ei, path, &rix);
		if (ei->has_site)
			check_site(c, e, ei, path, &tix);
		check_values(c, e, ei, path);
		check_generation(c, e, ei, path);
		check_units_and_guard(c, e, ei, path);
	}

	/* cross-layer predictions, once every site's `at` is known */
	for (i = 0; i < m->n_events && !c->oom; i++) {
		if (!c->ei[i].is_map || !m->events[i].n_predicts)
			continue;
		snprintf(path, sizeof(path), "events[%zu]", i);
		check_predicts(c, &m->events[i], &c->ei[i], path, &eix);
	}

	/* a resource no event refers to is probably a typo elsewhere */
	uses = calloc(m->n_resources ? m->n_resources : 1, sizeof(*uses));
	if (!uses) {
		c->oom = true;
		goto out;
	}
	for (i = 0; i < m->n_events; i++) {
		if (m->events[i].resource_idx >= 0)
			uses[m->events[i].resource_idx]++;
		if (m->events[i].target_resource_idx >= 0)
			uses[m->events[i].target_resource_idx]++;
	}
	for (i = 0; i < m->n_resources && m->n_events; i++) {
		if (uses[i] || !m->resources[i].name ||
		    index_find(&rix, m->resources[i].name) != (int)i)
			continue;
		snprintf(path, sizeof(path), "resources[%zu]", i);
		mwarn(c, c->ri[i].f.val[RSK_NAME]->loc, path, "name",
		      "resource '%s' is not used by any event", m->resources[i].name);
	}
out:
	free(uses);
	free(tix.v);
	free(rix.v);
	free(eix.v);
}
