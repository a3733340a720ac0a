/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_schema.c: the JSON Schema of manifest v1 (see manifest_schema.h).
 *
 * The field names of every mapping and the words of every enum come from
 * the parser's own tables (mf_tables, manifest_parse.c), so a field added
 * to the parser appears in the schema at once; this file only adds what
 * the tables do not say: each field's type, whether it is required, and a
 * description (which lint also prints for a field left as TODO). A parser
 * field without a line here is reported by manifest__schema_gaps() (a unit
 * test fails on it) and appears untyped rather than missing.
 *
 * The schema checks what a YAML reader can see field by field (types,
 * patterns, enums, required fields, unknown fields); the cross-field rules
 * (references resolve, at: span only for WAIT, ...) are lint's alone.
 */
#include <stdio.h>
#include <string.h>

#include "contract/manifest_int.h"
#include "contract/manifest_schema.h"

enum ftype {
	FT_VERSION,	/* the constant 1 */
	FT_COUNT,	/* integer >= 0 */
	FT_POSITIVE,	/* integer > 0 */
	FT_STRING,
	FT_ID,
	FT_RNAME,
	FT_UNITS,
	FT_BOOL,
	FT_ENUM,	/* ref: the enum table */
	FT_ENUM_LIST,	/* ref: the enum table */
	FT_VALUE,
	FT_GUARD,
	FT_DURATION,
	FT_DATE,
	FT_BUILD_ID,
	FT_USDT,
	FT_SYMBOL,
	FT_OBJECT,	/* ref: the object table */
	FT_LIST,	/* ref: the object table of each item */
};

struct fspec {
	const char *obj, *key;
	enum ftype type;
	const char *ref;
	bool required;
	const char *desc;
};

static const struct fspec specs[] = {
	{ "root", "manifest", FT_VERSION, NULL, true, "schema version: 1" },
	{ "root", "name", FT_STRING, NULL, true, "a name for this manifest" },
	{ "root", "description", FT_STRING, NULL, false, "free text" },
	{ "root", "targets", FT_LIST, "target", true, "the ELF files probed: {id, binary, build_id}" },
	{ "root", "resources", FT_LIST, "resource", true, "the resources: {name, class, units, ...}" },
	{ "root", "events", FT_LIST, "event", true, "where WAIT/ACQUIRE/USE/RELEASE happen" },
	{ "target", "id", FT_ID, NULL, false, "how site.target names this target ([A-Za-z0-9_.-])" },
	{ "target", "binary", FT_STRING, NULL, true, "a path (relative to the manifest) or a soname such as libc.so.6" },
	{ "target", "build_id", FT_BUILD_ID, NULL, true, "the GNU build-id in hex (probity probes BINARY prints it)" },
	{ "resource", "name", FT_RNAME, NULL, true, "a unique resource name, e.g. app.pool.page ([A-Za-z0-9_.:-])" },
	{ "resource", "class", FT_ENUM, "class", true, "what kind of resource" },
	{ "resource", "units", FT_UNITS, NULL, true, "a word naming what is counted, e.g. pages, bytes, holders" },
	{ "resource", "capacity", FT_POSITIVE, NULL, false, "total capacity in units (omit when unknown)" },
	{ "resource", "shared", FT_BOOL, NULL, false, "an instance may be held by several owners at once" },
	{ "resource", "externally_owned", FT_BOOL, NULL, false, "USE may name instances never ACQUIREd" },
	{ "resource", "generation", FT_ENUM, "generation", false, "how lifetimes of one instance are told apart" },
	{ "resource", "description", FT_STRING, NULL, false, "free text" },
	{ "event", "id", FT_ID, NULL, true, "a unique event id ([A-Za-z0-9_.-])" },
	{ "event", "resource", FT_RNAME, NULL, true, "the name of a resource listed under resources:" },
	{ "event", "kind", FT_ENUM, "kind", true, "the transition this site is" },
	{ "event", "site", FT_OBJECT, "site", true, "where: symbol or usdt, and at" },
	{ "event", "instance", FT_VALUE, NULL, true, "which instance: a value expression such as arg0, retval (at: return) or \"*u64(arg0 + 16)\"" },
	{ "event", "units", FT_VALUE, NULL, false, "how many units (default 1)" },
	{ "event", "target", FT_VALUE, NULL, false, "USE only: the instance used on or for" },
	{ "event", "target_resource", FT_RNAME, NULL, false, "USE only: the resource of target" },
	{ "event", "when", FT_GUARD, NULL, false, "a guard: <value> <op> <integer>, e.g. s32(retval) == 0" },
	{ "event", "generation", FT_VALUE, NULL, false, "where the generation is read (resources with generation: counter)" },
	{ "event", "returns", FT_ENUM, "returns", false, "whether the probed function returns a value" },
	{ "event", "expect", FT_LIST, "expect", false, "expected next transitions" },
	{ "event", "confidence", FT_ENUM, "confidence", false, "how much the event is trusted (default candidate)" },
	{ "event", "provenance", FT_OBJECT, "provenance", false, "who proposed the event, on what evidence" },
	{ "event", "description", FT_STRING, NULL, false, "free text" },
	{ "event", "predicts", FT_LIST, "predict", false, "OS effects an occurrence should have" },
	{ "site", "target", FT_ID, NULL, false, "the target id (required with several targets)" },
	{ "site", "symbol", FT_SYMBOL, NULL, false, "a function symbol, as in the symbol table (C++ mangled)" },
	{ "site", "offset", FT_COUNT, NULL, false, "bytes from the symbol's start (at: entry only)" },
	{ "site", "usdt", FT_USDT, NULL, false, "a USDT probe PROVIDER:NAME (probity probes BINARY lists them)" },
	{ "site", "at", FT_ENUM, "at", false, "when the event fires (default span for a WAIT on a symbol, else entry)" },
	{ "expect", "next", FT_ENUM_LIST, "kind", true, "the kinds allowed next" },
	{ "expect", "within", FT_DURATION, NULL, false, "time bound, e.g. 500ms" },
	{ "provenance", "source", FT_ENUM, "source", true, "who or what proposed the event" },
	{ "provenance", "evidence", FT_STRING, NULL, false, "free text: a source line, a commit, a disassembly" },
	{ "provenance", "date", FT_DATE, NULL, false, "YYYY-MM-DD" },
	{ "predict", "effect", FT_ENUM, "effect", true, "the predicted OS effect" },
	{ "predict", "min_duration", FT_DURATION, NULL, false, "only calls at least this long are judged" },
	{ "predict", "waiter", FT_ID, NULL, false, "wakes_waiter only: the WAIT event woken" },
};

static const struct mf_table *table(const char *name)
{
	const struct mf_table *t;

	for (t = mf_tables; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

static const struct fspec *spec(const char *obj, const char *key)
{
	size_t i;

	for (i = 0; i < N(specs); i++)
		if (!strcmp(specs[i].obj, obj) && !strcmp(specs[i].key, key))
			return &specs[i];
	return NULL;
}

static void join(const struct mf_table *t, char *buf, size_t sz)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; t && i < t->n && o < sz; i++)
		o += snprintf(buf + o, sz - o, "%s%s", i ? (i + 1 == t->n ? " or " : ", ") : "",
			      t->items[i]);
}

void mf_field_hint(const char *obj, const char *key, char *buf, size_t sz)
{
	const struct fspec *s = spec(obj, key);
	char words[200];

	if (!s) {
		snprintf(buf, sz, "%s", "");
	} else if (s->type == FT_ENUM || s->type == FT_ENUM_LIST) {
		join(table(s->ref), words, sizeof(words));
		snprintf(buf, sz, "%s: one of %s", s->desc, words);
	} else {
		snprintf(buf, sz, "%s", s->desc);
	}
}

static json_t *enum_json(const char *ref)
{
	const struct mf_table *t = table(ref);
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && t && i < t->n; i++)
		json_array_append_new(a, json_string(t->items[i]));
	return a;
}

/* A string that may not be the placeholder `manifest init` writes. */
static json_t *str_type(const char *pattern)
{
	json_t *o = json_pack("{s:s, s:i, s:{s:s}}", "type", "string", "minLength", 1, "not",
			      "const", MANIFEST_PLACEHOLDER);

	if (o && pattern)
		json_object_set_new(o, "pattern", json_string(pattern));
	return o;
}

/* The schema of one field, by its type. */
static json_t *type_json(const struct fspec *s)
{
	switch (s->type) {
	case FT_VERSION:
		return json_pack("{s:i}", "const", MANIFEST_VERSION);
	case FT_COUNT:
		return json_pack("{s:s, s:i}", "type", "integer", "minimum", 0);
	case FT_POSITIVE:
		return json_pack("{s:s, s:i}", "type", "integer", "minimum", 1);
	case FT_STRING:
		return str_type(NULL);
	case FT_ID:
		return str_type("^[A-Za-z0-9_.-]+$");
	case FT_RNAME:
		return str_type("^[A-Za-z0-9_.:-]+$");
	case FT_UNITS:
		return str_type("^[A-Za-z0-9_./-]+$");
	case FT_BOOL:
		return json_pack("{s:s}", "type", "boolean");
	case FT_ENUM:
		return json_pack("{s:o}", "enum", enum_json(s->ref));
	case FT_ENUM_LIST:
		return json_pack("{s:s, s:i, s:{s:o}}", "type", "array", "minItems", 1, "items",
				 "enum", enum_json(s->ref));
	case FT_VALUE:
		/* a bare constant (units: 64) reads as a YAML integer */
		return json_pack("{s:[{s:s}, {s:s, s:i, s:{s:s}}]}", "anyOf", "type", "integer",
				 "type", "string", "minLength", 1, "not", "const",
				 MANIFEST_PLACEHOLDER);
	case FT_GUARD:
		return str_type("(==|!=|<|>)");
	case FT_DURATION:
		return str_type("^[0-9]+ ?(ns|us|ms|s)$");
	case FT_DATE:
		return str_type("^[0-9]{4}-[0-9]{2}-[0-9]{2}$");
	case FT_BUILD_ID:
		return str_type("^([0-9a-fA-F]{2}){4,64}$");
	case FT_USDT:
		return str_type("^[A-Za-z0-9_]+:[A-Za-z0-9_]+$");
	case FT_SYMBOL:
		return str_type("^[^\\s]+$");
	case FT_OBJECT:
		return json_pack("{s:s+}", "$ref", "#/$defs/", s->ref);
	case FT_LIST:
		return json_pack("{s:s, s:i, s:{s:s+}}", "type", "array", "minItems", 1, "items",
				 "$ref", "#/$defs/", s->ref);
	}
	return json_object();
}

/* One mapping's schema: its fields from the parser's table. */
static json_t *object_json(const struct mf_table *t)
{
	json_t *o, *props = json_object(), *req = json_array();
	char hint[300];
	size_t i;

	for (i = 0; props && req && i < t->n; i++) {
		const struct fspec *s = spec(t->name, t->items[i]);
		json_t *p = s ? type_json(s) : json_object();

		if (!p)
			continue;
		mf_field_hint(t->name, t->items[i], hint, sizeof(hint));
		json_object_set_new(p, "description",
				    json_string(s ? hint : "(no type in manifest_schema.c yet)"));
		json_object_set_new(props, t->items[i], p);
		if (s && s->required)
			json_array_append_new(req, json_string(t->items[i]));
	}
	o = json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props, "required",
		      req, "additionalProperties", 0);
	/* a site is a symbol or a USDT probe, never both */
	if (o && !strcmp(t->name, "site"))
		json_object_set_new(o, "oneOf", json_pack("[{s:[s]}, {s:[s]}]", "required", "symbol",
							   "required", "usdt"));
	return o;
}

json_t *manifest__schema(void)
{
	const struct mf_table *t;
	json_t *doc, *defs = json_object();

	for (t = mf_tables; defs && t->name; t++)
		if (!t->is_enum && strcmp(t->name, "root"))
			json_object_set_new(defs, t->name, object_json(t));
	doc = object_json(table("root"));
	if (!doc || !defs) {
		json_decref(doc);
		json_decref(defs);
		return NULL;
	}
	json_object_set_new(doc, "$schema", json_string("https://json-schema.org/draft/2020-12/schema"));
	json_object_set_new(doc, "$id", json_string("https://probity.invalid/schema/manifest-v1.json"));
	json_object_set_new(doc, "title", json_string("probity resource manifest, schema version 1"));
	json_object_set_new(doc, "description",
			    json_string("Generated by `probity manifest schema` from the parser's tables; docs/manifest.md documents every field. Cross-field rules are checked by `probity manifest lint` only."));
	json_object_set_new(doc, "$defs", defs);
	return doc;
}

int manifest__schema_gaps(char *buf, size_t sz)
{
	const struct mf_table *t;
	size_t i, o = 0;
	int n = 0;

	if (sz)
		buf[0] = '\0';
	for (t = mf_tables; t->name; t++) {
		for (i = 0; !t->is_enum && i < t->n; i++) {
			if (spec(t->name, t->items[i]))
				continue;
			n++;
			if (o < sz)
				o += snprintf(buf + o, sz - o, "%s%s.%s", o ? ", " : "", t->name,
					      t->items[i]);
		}
	}
	return n;
}
