/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_json.c: the parsed model as JSON (`probity -j manifest show`).
 *
 * Field names follow the YAML schema, so a tool can read either; values
 * are normalised: defaults filled in, value expressions in canonical form
 * plus their decoded parts, build-ids in lower-case hex, durations in ns,
 * and the resolved indices of every reference.
 */
#include <stdio.h>
#include "common/digest.h"
#include "contract/manifest.h"

static json_t *loc_json(struct pb_loc l)
{
	return json_pack("{s:i, s:i}", "line", l.line, "col", l.col);
}

static json_t *value_json(const struct pb_value *v)
{
	static const char *const base[] = { "none", "constant", "arg", "retval" };
	json_t *o, *derefs;
	char buf[256];
	int i;

	if (v->base == PB_VAL_NONE)
		return json_null();
	pb_value__format(v, buf, sizeof(buf));
	derefs = json_array();
	for (i = 0; derefs && i < v->n_deref; i++)
		json_array_append_new(derefs, json_pack("{s:I, s:i}", "offset",
							(json_int_t)v->deref[i].offset, "size",
							v->deref[i].size));
	o = json_pack("{s:s, s:s, s:o, s:I, s:i}", "text", buf, "base",
		      base[v->base <= PB_VAL_RETVAL ? v->base : 0], "derefs",
		      derefs ? derefs : json_array(), "offset", (json_int_t)v->final_offset,
		      "cast_size", v->cast_size);
	if (!o)
		return NULL;
	if (v->base == PB_VAL_ARG)
		json_object_set_new(o, "arg", json_integer(v->arg));
	if (v->base == PB_VAL_CONST)
		json_object_set_new(o, "constant", json_integer(v->constant));
	if (v->cast_size)
		json_object_set_new(o, "cast_signed", json_boolean(v->cast_signed));
	return o;
}

static json_t *target_json(const struct pb_target *t)
{
	char hex[2 * PB_BUILD_ID_MAX + 1];

	pb_hex(t->build_id, t->build_id_len, hex);
	return json_pack("{s:s?, s:s?, s:s, s:o}", "id", t->id, "binary", t->binary, "build_id",
			 hex, "loc", loc_json(t->loc));
}

static json_t *resource_json(const struct pb_resource *r)
{
	return json_pack("{s:s?, s:s, s:s?, s:o, s:b, s:b, s:s, s:s?, s:o, s:s}", "name", r->name,
			 "class", pb_res_class_str(r->class), "units", r->units, "capacity",
			 r->has_capacity ? json_integer((json_int_t)r->capacity) : json_null(),
			 "shared", r->shared, "externally_owned", r->externally_owned,
			 "generation", pb_gen_rule_str(r->generation), "description",
			 r->description, "loc", loc_json(r->loc), "scope", pb_scope_str(r->scope));
}

static json_t *expect_json(const struct pb_event *e)
{
	json_t *arr = json_array();
	size_t i;
	int k;

	for (i = 0; arr && i < e->n_expect; i++) {
		uint64_t ns = e->expect[i].within_ns;
		json_t *next = json_array();

		for (k = 0; next && k < PB_EV__COUNT; k++)
			if (e->expect[i].next_mask & (1u << k))
				json_array_append_new(next, json_string(pb_event_kind_str(k)));
		json_array_append_new(arr, json_pack("{s:o, s:o?}", "next",
						     next ? next : json_array(), "within_ns",
						     ns ? json_integer((json_int_t)ns) : NULL));
	}
	return arr;
}

static json_t *predicts_json(const struct manifest *m, const struct pb_event *e)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < e->n_predicts; i++) {
		const struct pb_prediction *p = &e->predicts[i];

		json_array_append_new(arr, json_pack("{s:s, s:o?, s:o?, s:i, s:o}", "effect",
						     pb_effect_str(p->effect), "min_duration_ns",
						     p->min_duration_ns ?
							     json_integer((json_int_t)p->min_duration_ns) :
							     NULL,
						     "waiter", p->waiter_idx >= 0 &&
								       m->events[p->waiter_idx].id ?
							     json_string(m->events[p->waiter_idx].id) : NULL,
						     "waiter_idx", p->waiter_idx,
						     "loc", loc_json(p->loc)));
	}
	return arr;
}

static json_t *site_json(const struct pb_site *s)
{
	json_t *o = json_pack("{s:i, s:s}", "target_idx", s->target_idx, "at",
			      pb_site_at_str(s->at));

	if (!o)
		return NULL;
	if (s->symbol) {
		json_object_set_new(o, "symbol", json_string(s->symbol));
		json_object_set_new(o, "offset", json_integer((json_int_t)s->offset));
	} else if (s->usdt_provider && s->usdt_name) {
		json_object_set_new(o, "usdt_provider", json_string(s->usdt_provider));
		json_object_set_new(o, "usdt_name", json_string(s->usdt_name));
	}
	return o;
}

static json_t *event_json(const struct manifest *m, const struct pb_event *e)
{
	json_t *o, *when = json_null();
	char buf[300];

	if (e->when.present) {
		pb_guard__format(&e->when, buf, sizeof(buf));
		when = json_pack("{s:s, s:o, s:s, s:I}", "text", buf, "value", value_json(&e->when.lhs),
				 "op", pb_cmp_op_str(e->when.op), "rhs", (json_int_t)e->when.rhs);
	}
	o = json_pack("{s:s?, s:s?, s:i, s:s, s:o, s:o, s:o, s:o, s:s?, s:i, s:o, s:o, s:s, s:o, s:s}",
		      "id", e->id, "resource", e->resource, "resource_idx", e->resource_idx,
		      "kind", pb_event_kind_str(e->kind), "site", site_json(&e->site),
		      "instance", value_json(&e->instance), "units", value_json(&e->units),
		      "target", value_json(&e->target), "target_resource", e->target_resource,
		      "target_resource_idx", e->target_resource_idx, "when", when ? when : json_null(),
		      "generation", value_json(&e->generation), "returns",
		      pb_returns_str(e->returns), "expect", expect_json(e), "confidence",
		      pb_confidence_str(e->confidence));
	if (!o)
		return NULL;
	json_object_set_new(o, "predicts", predicts_json(m, e));
	json_object_set_new(o, "provenance",
			    e->provenance.present
				    ? json_pack("{s:s, s:s?, s:s?}", "source",
						pb_prov_source_str(e->provenance.source), "evidence",
						e->provenance.evidence, "date", e->provenance.date)
				    : json_null());
	json_object_set_new(o, "description", e->description ? json_string(e->description)
							      : json_null());
	json_object_set_new(o, "loc", loc_json(e->loc));
	return o;
}

json_t *manifest__to_json(const struct manifest *m)
{
	char digest[PB_DIGEST_HEX_LEN];
	json_t *o, *targets, *resources, *events;
	size_t i;

	pb_hex(m->digest, sizeof(m->digest), digest);
	targets = json_array();
	resources = json_array();
	events = json_array();
	for (i = 0; targets && i < m->n_targets; i++)
		json_array_append_new(targets, target_json(&m->targets[i]));
	for (i = 0; resources && i < m->n_resources; i++)
		json_array_append_new(resources, resource_json(&m->resources[i]));
	for (i = 0; events && i < m->n_events; i++)
		json_array_append_new(events, event_json(m, &m->events[i]));
	o = json_pack("{s:s?, s:i, s:s?, s:s?, s:s, s:o?, s:o?, s:o?}", "path", m->path,
		      "manifest", m->version, "name", m->name, "description", m->description,
		      "digest", digest, "targets", targets, "resources", resources, "events",
		      events);
	if (!o) {
		json_decref(targets);
		json_decref(resources);
		json_decref(events);
	}
	return o;
}
