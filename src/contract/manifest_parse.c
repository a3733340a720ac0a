/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_parse.c: YAML tree -> struct manifest, one field at a time.
 *
 * Each field is checked on its own here (type, format, enum spelling,
 * value-expression syntax); everything that relates two fields or two
 * items is in manifest_check.c. The builder never stops at the first
 * problem: a bad field is reported, left at its default, and the rest of
 * the document is still read, so one lint run shows every finding.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "contract/manifest_int.h"

static const char *const root_keys[] = {
	"manifest", "name", "description", "targets", "resources", "events",
};
static const char *const target_keys[] = { "id", "binary", "build_id" };
static const char *const resource_keys[] = {
	"name", "class", "units", "capacity", "shared", "externally_owned", "generation",
	"description",
};
static const char *const event_keys[] = {
	"id", "resource", "kind", "site", "instance", "units", "target", "target_resource",
	"when", "generation", "returns", "expect", "confidence", "provenance", "description",
	"predicts",
};
static const char *const site_keys[] = { "target", "symbol", "offset", "usdt", "at" };
static const char *const expect_keys[] = { "next", "within" };
static const char *const prov_keys[] = { "source", "evidence", "date" };
static const char *const predict_keys[] = { "effect", "min_duration", "waiter" };
/* enum pb_effect order */
static const char *const effect_names[] = { "off_cpu", "block_io", "page_fault", "wakes_waiter" };

static const char *const kind_names[] = { "WAIT", "ACQUIRE", "USE", "RELEASE" };
static const char *const class_names[] = {
	"pool", "queue", "cache", "lock", "credit", "connection", "other",
};
static const char *const at_names[] = { "entry", "return", "span" };
/* "degraded" is listed so it gets its own message instead of "unknown" */
static const char *const conf_names[] = { "candidate", "validated", "suspect", "stale",
					  "degraded" };
static const char *const source_names[] = { "static_analysis", "llm", "developer", "usdt" };
static const char *const returns_names[] = { "value", "void" };	/* PB_RET_VALUE.. */
static const char *const gen_names[] = { "on_acquire", "counter" };

/* ---- targets ------------------------------------------------------------- */

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static void parse_build_id(struct mctx *c, const struct ynode *v, const char *path,
			   struct pb_target *t)
{
	static const char *const key = "build_id";
	char found[80];
	size_t i;

	if (!mf_want_scalar(c, v, path, key, "a GNU build-id in hex (readelf -n BINARY)"))
		return;
	ynode__describe(v, found, sizeof(found));
	for (i = 0; i < v->len; i++) {
		if (hexval(v->str[i]) < 0) {
			merr(c, mf_text_loc(v, (int)i), path, key,
			     "expected a GNU build-id in hex (readelf -n BINARY), found %s: '%c' at position %zu is not a hex digit",
			     found, v->str[i] >= 0x20 && v->str[i] < 0x7f ? v->str[i] : '?', i + 1);
			return;
		}
	}
	if (v->len % 2) {
		merr(c, v->loc, path, key,
		     "a build-id has an even number of hex digits (whole bytes), found %zu digits",
		     v->len);
		return;
	}
	if (v->len < 2 * PB_BUILD_ID_MIN || v->len > 2 * PB_BUILD_ID_MAX) {
		merr(c, v->loc, path, key,
		     "a build-id has %d to %d hex digits (GNU ld writes 40 for sha1), found %zu",
		     2 * PB_BUILD_ID_MIN, 2 * PB_BUILD_ID_MAX, v->len);
		return;
	}
	for (i = 0; i < v->len / 2; i++)
		t->build_id[i] = (uint8_t)(hexval(v->str[2 * i]) << 4 | hexval(v->str[2 * i + 1]));
	t->build_id_len = v->len / 2;
}

static void build_target(struct mctx *c, const struct ynode *node, size_t idx)
{
	struct pb_target *t = &c->m->targets[idx];
	struct fields *f = &c->ti[idx].f;
	char path[32];

	snprintf(path, sizeof(path), "targets[%zu]", idx);
	t->loc = node->loc;
	if (!mf_want_map(c, node, path, NULL, "id, binary, build_id"))
		return;
	mf_map_fields(c, node, path, target_keys, N(target_keys), f);
	if (f->val[TK_ID])
		mf_get_name(c, f->val[TK_ID], path, "id", "_.-", "an id made of [A-Za-z0-9_.-]",
			    &t->id);
	if (f->val[TK_BINARY]) {
		t->binary_loc = f->val[TK_BINARY]->loc;
		mf_get_string(c, f->val[TK_BINARY], path, "binary", &t->binary);
	} else {
		mf_missing(c, f, node->loc, path, "binary", "(a path, or a soname such as libc.so.6)");
	}
	if (f->val[TK_BUILD_ID]) {
		t->build_id_loc = f->val[TK_BUILD_ID]->loc;
		parse_build_id(c, f->val[TK_BUILD_ID], path, t);
	} else {
		mf_missing(c, f, node->loc, path, "build_id",
			   "(the GNU build-id in hex, from `readelf -n BINARY` or `file BINARY`)");
	}
}

/* ---- resources ----------------------------------------------------------- */

static void build_resource(struct mctx *c, const struct ynode *node, size_t idx)
{
	struct pb_resource *r = &c->m->resources[idx];
	struct resource_info *ri = &c->ri[idx];
	struct fields *f = &ri->f;
	char path[32];
	int e;

	snprintf(path, sizeof(path), "resources[%zu]", idx);
	r->loc = node->loc;
	if (!mf_want_map(c, node, path, NULL, "name, class, units, ..."))
		return;
	mf_map_fields(c, node, path, resource_keys, N(resource_keys), f);
	if (f->val[RSK_NAME])
		ri->name_ok = mf_get_name(c, f->val[RSK_NAME], path, "name", "_.:-",
					  "a name made of [A-Za-z0-9_.:-]", &r->name);
	else
		mf_missing(c, f, node->loc, path, "name", "(e.g. app.pool.page)");
	if (f->val[RSK_CLASS]) {
		if (mf_get_enum(c, f->val[RSK_CLASS], path, "class", class_names, N(class_names),
				N(class_names), &e))
			r->class = e;
	} else {
		mf_missing(c, f, node->loc, path, "class",
			   "(one of pool, queue, cache, lock, credit, connection, other)");
	}
	if (f->val[RSK_UNITS])
		mf_get_name(c, f->val[RSK_UNITS], path, "units", "_.-/",
			    "a unit word such as pages, bytes or holders", &r->units);
	else
		mf_missing(c, f, node->loc, path, "units", "(a word naming what is counted, e.g. pages)");
	if (f->val[RSK_CAPACITY]) {
		if (mf_get_u64(c, f->val[RSK_CAPACITY], path, "capacity", "an integer > 0",
			       &r->capacity)) {
			if (!r->capacity)
				merr(c, f->val[RSK_CAPACITY]->loc, path, "capacity",
				     "must be > 0, found 0 (leave capacity out when unknown)");
			else
				r->has_capacity = true;
		}
	}
	if (f->val[RSK_SHARED])
		mf_get_bool(c, f->val[RSK_SHARED], path, "shared", &r->shared);
	if (f->val[RSK_EXTERNALLY_OWNED])
		mf_get_bool(c, f->val[RSK_EXTERNALLY_OWNED], path, "externally_owned",
			    &r->externally_owned);
	if (f->val[RSK_GENERATION] &&
	    mf_get_enum(c, f->val[RSK_GENERATION], path, "generation", gen_names, N(gen_names),
			N(gen_names), &e))
		r->generation = e;
	if (f->val[RSK_DESCRIPTION])
		mf_get_string(c, f->val[RSK_DESCRIPTION], path, "description", &r->description);
}

/* ---- events -------------------------------------------------------------- */

/* site.symbol: a function name without spaces or control characters */
static void build_site_symbol(struct mctx *c, const struct ynode *v, const char *path,
			      struct pb_site *s, struct event_info *ei)
{
	char found[80];
	size_t i;

	s->loc = v->loc;
	if (!mf_want_scalar(c, v, path, "symbol", "a function symbol"))
		return;
	for (i = 0; i < v->len; i++)
		if ((unsigned char)v->str[i] <= ' ' || v->str[i] == 0x7f)
			break;
	if (i < v->len) {
		ynode__describe(v, found, sizeof(found));
		merr(c, v->loc, path, "symbol",
		     "expected a symbol name without spaces or control characters, found %s", found);
		return;
	}
	ei->site_kind_ok = !mf_dup_str(c, v, &s->symbol);
}

/* site.usdt: PROVIDER:NAME */
static void build_site_usdt(struct mctx *c, const struct ynode *v, const char *path,
			    struct pb_site *s, struct event_info *ei)
{
	const char *colon;
	char found[80];
	size_t i, plen;

	s->loc = v->loc;
	if (!mf_want_scalar(c, v, path, "usdt", "a USDT probe PROVIDER:NAME"))
		return;
	colon = mf_has_nul(v) ? NULL : strchr(v->str, ':');
	plen = colon ? (size_t)(colon - v->str) : 0;
	for (i = 0; colon && i < v->len; i++)
		if (i != plen && !mf_name_char(v->str[i], "_"))
			break;
	if (!colon || !plen || plen + 1 == v->len || i < v->len) {
		ynode__describe(v, found, sizeof(found));
		merr(c, v->loc, path, "usdt",
		     "expected PROVIDER:NAME (e.g. postgresql:lwlock__wait__start, as listed by `readelf -n`), found %s",
		     found);
		return;
	}
	s->usdt_provider = strndup(v->str, plen);
	s->usdt_name = strdup(colon + 1);
	if (!s->usdt_provider || !s->usdt_name)
		c->oom = true;
	else
		ei->site_kind_ok = true;
}

static void build_site(struct mctx *c, const struct ynode *node, const char *evpath,
		       struct pb_event *e, struct event_info *ei)
{
	struct fields *f = &ei->site;
	struct pb_site *s = &e->site;
	char path[96];
	int at;

	snprintf(path, sizeof(path), "%s.site", evpath);
	s->loc = node->loc;
	ei->site_loc = node->loc;
	s->target_idx = -1;
	if (!mf_want_map(c, node, evpath, "site", "symbol: NAME or usdt: PROVIDER:NAME, at: ..."))
		return;
	mf_map_fields(c, node, path, site_keys, N(site_keys), f);
	ei->has_site = true;
	/* resolved against the targets in manifest_check.c */
	if (f->val[SK_TARGET])
		ei->site_target_given = mf_want_scalar(c, f->val[SK_TARGET], path, "target",
						       "a target id");
	if (f->val[SK_SYMBOL] && f->val[SK_USDT])
		merr(c, f->key[SK_USDT]->loc, path, "usdt",
		     "a site is either a symbol or a USDT probe, not both (symbol given at %d:%d)",
		     f->key[SK_SYMBOL]->loc.line, f->key[SK_SYMBOL]->loc.col);
	else if (!f->val[SK_SYMBOL] && !f->val[SK_USDT])
		merr(c, node->loc, path, NULL,
		     "expected 'symbol: FUNCTION' or 'usdt: PROVIDER:NAME', found neither");
	else if (f->val[SK_SYMBOL])
		build_site_symbol(c, f->val[SK_SYMBOL], path, s, ei);
	else
		build_site_usdt(c, f->val[SK_USDT], path, s, ei);
	if (f->val[SK_OFFSET])
		mf_get_u64(c, f->val[SK_OFFSET], path, "offset", "a byte offset >= 0 (decimal or 0x hex)",
			   &s->offset);
	/* default: span for a WAIT on a function, entry otherwise (checked
	 * again once the kind is known) */
	ei->at_ok = true;
	if (f->val[SK_AT]) {
		ei->at_explicit = true;
		ei->at_ok = mf_get_enum(c, f->val[SK_AT], path, "at", at_names, N(at_names),
					N(at_names), &at);
		if (ei->at_ok)
			s->at = at;
	}
}

static void build_expect(struct mctx *c, const struct ynode *list, const char *evpath,
			 struct pb_event *e)
{
	char path[128], npath[160], found[80], hint[80];
	size_t i, k;
	int kind;

	if (!mf_want_list(c, list, evpath, "expect", "transition",
			  "transitions ({next: [KIND, ...], within: 500ms})", 64))
		return;
	e->expect = calloc(list->n, sizeof(*e->expect));
	if (!e->expect) {
		c->oom = true;
		return;
	}
	e->n_expect = list->n;
	for (i = 0; i < list->n; i++) {
		const struct ynode *item = list->items[i];
		struct pb_transition *t = &e->expect[i];
		struct fields f;

		snprintf(path, sizeof(path), "%s.expect[%zu]", evpath, i);
		t->loc = item->loc;
		if (!mf_want_map(c, item, path, NULL, "next: [USE, RELEASE], within: 500ms"))
			continue;
		mf_map_fields(c, item, path, expect_keys, N(expect_keys), &f);
		if (!f.val[XK_NEXT]) {
			mf_missing(c, &f, item->loc, path, "next", "(the kinds allowed next, e.g. [USE, RELEASE])");
		} else if (mf_want_list(c, f.val[XK_NEXT], path, "next", "event kind",
					"event kinds (e.g. [USE, RELEASE])", 16)) {
			for (k = 0; k < f.val[XK_NEXT]->n; k++) {
				const struct ynode *kv = f.val[XK_NEXT]->items[k];

				snprintf(npath, sizeof(npath), "%s.next[%zu]", path, k);
				if (kv->kind == YNODE_SCALAR && !mf_has_nul(kv)) {
					for (kind = 0; kind < PB_EV__COUNT; kind++)
						if (!strcmp(kv->str, kind_names[kind]))
							break;
					if (kind < PB_EV__COUNT) {
						t->next_mask |= 1u << kind;
						continue;
					}
				}
				ynode__describe(kv, found, sizeof(found));
				hint[0] = '\0';
				if (kv->kind == YNODE_SCALAR && !c->capped)
					suggest(kv->str, kv->len, kind_names, N(kind_names), true,
						hint, sizeof(hint));
				merr(c, kv->loc, npath, NULL,
				     "expected one of WAIT, ACQUIRE, USE, RELEASE, found %s%s", found,
				     hint);
			}
		}
		if (f.val[XK_WITHIN])
			mf_get_duration(c, f.val[XK_WITHIN], path, "within", &t->within_ns);
	}
}

/* predicts: [{effect: NAME, min_duration: DURATION}, ...]; the checks that
 * relate an effect to the event's kind and site are in manifest_check.c */
static void build_predicts(struct mctx *c, const struct ynode *list, const char *evpath,
			   struct pb_event *e, struct event_info *ei)
{
	char path[128];
	size_t i;
	int fx;

	if (!mf_want_list(c, list, evpath, "predicts", "prediction",
			  "predictions ({effect: off_cpu, min_duration: 1ms})", PB_FX__COUNT * 4))
		return;
	e->predicts = calloc(list->n, sizeof(*e->predicts));
	ei->pred = calloc(list->n, sizeof(*ei->pred));
	if (!e->predicts || !ei->pred) {
		c->oom = true;
		return;
	}
	e->n_predicts = list->n;
	for (i = 0; i < list->n; i++) {
		const struct ynode *item = list->items[i];
		struct pb_prediction *p = &e->predicts[i];
		struct fields *f = &ei->pred[i];

		snprintf(path, sizeof(path), "%s.predicts[%zu]", evpath, i);
		p->loc = item->loc;
		p->effect = PB_FX__COUNT;	/* not parsed: skipped by the checks */
		p->waiter_idx = -1;
		if (!mf_want_map(c, item, path, NULL,
				 "effect: off_cpu | block_io | page_fault | wakes_waiter, min_duration: 1ms"))
			continue;
		mf_map_fields(c, item, path, predict_keys, N(predict_keys), f);
		if (!f->val[PRK_EFFECT])
			mf_missing(c, f, item->loc, path, "effect",
				   "(one of off_cpu, block_io, page_fault, wakes_waiter)");
		else if (mf_get_enum(c, f->val[PRK_EFFECT], path, "effect", effect_names,
				     N(effect_names), N(effect_names), &fx))
			p->effect = fx;
		if (f->val[PRK_MIN_DURATION])
			mf_get_duration(c, f->val[PRK_MIN_DURATION], path, "min_duration",
					&p->min_duration_ns);
		if (f->val[PRK_WAITER])
			mf_get_name(c, f->val[PRK_WAITER], path, "waiter", "_.-",
				    "the id of a WAIT event", &p->waiter);
	}
}

static void build_provenance(struct mctx *c, const struct ynode *node, const char *evpath,
			     struct pb_event *e)
{
	struct pb_provenance *p = &e->provenance;
	char path[96];
	struct fields f;
	int src;

	snprintf(path, sizeof(path), "%s.provenance", evpath);
	p->loc = node->loc;
	if (!mf_want_map(c, node, evpath, "provenance", "source, evidence, date"))
		return;
	p->present = true;
	mf_map_fields(c, node, path, prov_keys, N(prov_keys), &f);
	if (f.val[PK_SOURCE]) {
		if (mf_get_enum(c, f.val[PK_SOURCE], path, "source", source_names, N(source_names),
				N(source_names), &src))
			p->source = src;
	} else {
		mf_missing(c, &f, node->loc, path, "source",
			   "(one of static_analysis, llm, developer, usdt)");
	}
	if (f.val[PK_EVIDENCE])
		mf_get_string(c, f.val[PK_EVIDENCE], path, "evidence", &p->evidence);
	if (f.val[PK_DATE])
		mf_get_date(c, f.val[PK_DATE], path, "date", &p->date);
}

static void build_event(struct mctx *c, const struct ynode *node, size_t idx)
{
	struct pb_event *e = &c->m->events[idx];
	struct event_info *ei = &c->ei[idx];
	struct fields *f = &ei->f;
	char path[32];
	int v;

	snprintf(path, sizeof(path), "events[%zu]", idx);
	e->loc = node->loc;
	e->resource_idx = -1;
	e->target_resource_idx = -1;
	e->site.target_idx = -1;
	if (!mf_want_map(c, node, path, NULL, "id, resource, kind, site, instance, ..."))
		return;
	ei->is_map = true;
	mf_map_fields(c, node, path, event_keys, N(event_keys), f);

	if (f->val[EK_ID])
		mf_get_name(c, f->val[EK_ID], path, "id", "_.-", "an id made of [A-Za-z0-9_.-]", &e->id);
	else
		mf_missing(c, f, node->loc, path, "id", NULL);
	if (f->val[EK_RESOURCE])
		mf_get_string(c, f->val[EK_RESOURCE], path, "resource", &e->resource);
	else
		mf_missing(c, f, node->loc, path, "resource", "(the name of a resource)");
	if (f->val[EK_KIND]) {
		ei->kind_ok = mf_get_enum(c, f->val[EK_KIND], path, "kind", kind_names,
					  N(kind_names), N(kind_names), &v);
		if (ei->kind_ok)
			e->kind = v;
	} else {
		mf_missing(c, f, node->loc, path, "kind", "(one of WAIT, ACQUIRE, USE, RELEASE)");
	}
	if (f->val[EK_SITE])
		build_site(c, f->val[EK_SITE], path, e, ei);
	else
		mf_missing(c, f, node->loc, path, "site", "(symbol: FUNCTION or usdt: PROVIDER:NAME)");
	if (f->val[EK_INSTANCE])
		ei->instance_ok = mf_get_value(c, f->val[EK_INSTANCE], path, "instance", &e->instance);
	else
		mf_missing(c, f, node->loc, path, "instance", "(a value expression such as arg0 or retval)");
	if (f->val[EK_UNITS]) {
		ei->units_ok = mf_get_value(c, f->val[EK_UNITS], path, "units", &e->units);
	} else {
		e->units.base = PB_VAL_CONST;
		e->units.constant = 1;
		ei->units_ok = true;
	}
	if (f->val[EK_TARGET])
		ei->target_ok = mf_get_value(c, f->val[EK_TARGET], path, "target", &e->target);
	if (f->val[EK_TARGET_RESOURCE])
		mf_get_string(c, f->val[EK_TARGET_RESOURCE], path, "target_resource",
			      &e->target_resource);
	if (f->val[EK_WHEN])
		ei->when_ok = mf_get_guard(c, f->val[EK_WHEN], path, "when", &e->when);
	if (f->val[EK_GENERATION])
		ei->generation_ok = mf_get_value(c, f->val[EK_GENERATION], path, "generation",
						 &e->generation);
	if (f->val[EK_RETURNS]) {
		ei->returns_ok = mf_get_enum(c, f->val[EK_RETURNS], path, "returns", returns_names,
					     N(returns_names), N(returns_names), &v);
		if (ei->returns_ok)
			e->returns = v == 0 ? PB_RET_VALUE : PB_RET_VOID;
	}
	if (f->val[EK_EXPECT])
		build_expect(c, f->val[EK_EXPECT], path, e);
	if (f->val[EK_CONFIDENCE] &&
	    mf_get_enum(c, f->val[EK_CONFIDENCE], path, "confidence", conf_names, N(conf_names),
			N(conf_names) - 1, &v)) {
		if (v == PB_CONF_DEGRADED)
			merr(c, f->val[EK_CONFIDENCE]->loc, path, "confidence",
			     "'degraded' is set only by `probity plan --rebind`, never in a file (use candidate, validated, suspect or stale)");
		else
			e->confidence = v;
	}
	if (f->val[EK_PROVENANCE])
		build_provenance(c, f->val[EK_PROVENANCE], path, e);
	if (f->val[EK_DESCRIPTION])
		mf_get_string(c, f->val[EK_DESCRIPTION], path, "description", &e->description);
	if (f->val[EK_PREDICTS])
		build_predicts(c, f->val[EK_PREDICTS], path, e, ei);
}

/* ---- the document -------------------------------------------------------- */

static bool build_list(struct mctx *c, const struct ynode *list, const char *key,
		       const char *one, const char *many, size_t max, size_t elem_sz,
		       void **items, size_t *n, size_t info_sz, void **info)
{
	if (!mf_want_list(c, list, NULL, key, one, many, max))
		return false;
	*items = calloc(list->n, elem_sz);
	*info = calloc(list->n, info_sz);
	if (!*items || !*info) {
		c->oom = true;
		return false;
	}
	*n = list->n;
	return true;
}

int manifest__build(struct mctx *c, const struct ynode *root)
{
	struct fields *f = &c->root;
	struct manifest *m = c->m;
	char found[80];
	uint64_t ver;
	size_t i;

	if (!root) {
		merr(c, (struct pb_loc){ 1, 1 }, NULL, NULL,
		     "empty file: expected a manifest (a mapping starting with 'manifest: 1')");
		return 0;
	}
	if (root->kind != YNODE_MAP) {
		ynode__describe(root, found, sizeof(found));
		merr(c, root->loc, NULL, NULL,
		     "expected a mapping at the top level (manifest: 1, name: ..., targets, resources, events), found %s%s%s",
		     root->kind == YNODE_SCALAR && !ynode__is_null(root) ? "the scalar " : "",
		     found, ynode__is_null(root) ? " (an empty document)" : "");
		return 0;
	}
	mf_map_fields(c, root, NULL, root_keys, N(root_keys), f);

	if (!f->val[RK_MANIFEST]) {
		mf_missing(c, f, root->loc, NULL, "manifest", "(the schema version: manifest: 1)");
	} else if (mf_get_u64(c, f->val[RK_MANIFEST], NULL, "manifest", "the schema version 1", &ver)) {
		if (ver != MANIFEST_VERSION)
			merr(c, f->val[RK_MANIFEST]->loc, NULL, "manifest",
			     "unsupported schema version %" PRIu64 " (this probity reads version %d)",
			     ver, MANIFEST_VERSION);
		else
			m->version = MANIFEST_VERSION;
	}
	if (f->val[RK_NAME])
		mf_get_string(c, f->val[RK_NAME], NULL, "name", &m->name);
	else
		mf_missing(c, f, root->loc, NULL, "name", "(a non-empty name for this manifest)");
	if (f->val[RK_DESCRIPTION])
		mf_get_string(c, f->val[RK_DESCRIPTION], NULL, "description", &m->description);

	if (!f->val[RK_TARGETS])
		mf_missing(c, f, root->loc, NULL, "targets", "(a list of {id, binary, build_id})");
	else if (build_list(c, f->val[RK_TARGETS], "targets", "target", "targets",
			    PB_MANIFEST_MAX_ITEMS,
			    sizeof(*m->targets), (void **)&m->targets, &m->n_targets,
			    sizeof(*c->ti), (void **)&c->ti))
		for (i = 0; i < m->n_targets; i++)
			build_target(c, f->val[RK_TARGETS]->items[i], i);

	if (!f->val[RK_RESOURCES])
		mf_missing(c, f, root->loc, NULL, "resources", "(a list of {name, class, units, ...})");
	else if (build_list(c, f->val[RK_RESOURCES], "resources", "resource", "resources",
			    PB_MANIFEST_MAX_ITEMS, sizeof(*m->resources), (void **)&m->resources,
			    &m->n_resources, sizeof(*c->ri), (void **)&c->ri))
		for (i = 0; i < m->n_resources; i++)
			build_resource(c, f->val[RK_RESOURCES]->items[i], i);

	if (!f->val[RK_EVENTS])
		mf_missing(c, f, root->loc, NULL, "events", "(a list of {id, resource, kind, site, ...})");
	else if (build_list(c, f->val[RK_EVENTS], "events", "event", "events",
			    PB_MANIFEST_MAX_EVENTS,
			    sizeof(*m->events), (void **)&m->events, &m->n_events,
			    sizeof(*c->ei), (void **)&c->ei)) {
		c->n_ei = m->n_events;
		for (i = 0; i < m->n_events && !c->oom; i++)
			build_event(c, f->val[RK_EVENTS]->items[i], i);
	}
	return c->oom ? -ENOMEM : 0;
}

/* ---- the tables, for the JSON Schema (manifest_schema.c) ------------------ */

/* What this parser accepts, table by table: the schema and the "left to
 * fill" hints are generated from these, so they cannot drift from it. */
const struct mf_table mf_tables[] = {
	{ "root", root_keys, N(root_keys), false },
	{ "target", target_keys, N(target_keys), false },
	{ "resource", resource_keys, N(resource_keys), false },
	{ "event", event_keys, N(event_keys), false },
	{ "site", site_keys, N(site_keys), false },
	{ "expect", expect_keys, N(expect_keys), false },
	{ "provenance", prov_keys, N(prov_keys), false },
	{ "predict", predict_keys, N(predict_keys), false },
	{ "kind", kind_names, N(kind_names), true },
	{ "class", class_names, N(class_names), true },
	{ "at", at_names, N(at_names), true },
	/* "degraded" is listed for its message only; never valid in a file */
	{ "confidence", conf_names, N(conf_names) - 1, true },
	{ "source", source_names, N(source_names), true },
	{ "returns", returns_names, N(returns_names), true },
	{ "generation", gen_names, N(gen_names), true },
	{ "effect", effect_names, N(effect_names), true },
	{ NULL, NULL, 0, false },
};
