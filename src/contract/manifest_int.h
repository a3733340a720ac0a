/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_int.h: what the manifest reader's stages share (internal to
 * src/contract): the YAML tree -> model builder (manifest_parse.c) and its
 * typed field access (manifest_fields.c), the cross-field checks
 * (manifest_check.c) and the driver (manifest.c).
 *
 * The builder keeps, per target / resource / event, the YAML nodes of
 * every field it saw, so the checks can point at the exact key or value
 * without the public model carrying a position for each field.
 */
#ifndef PROBITY_MANIFEST_INT_H
#define PROBITY_MANIFEST_INT_H

#include "contract/manifest.h"
#include "contract/yaml_tree.h"

#define MAX_FINDINGS	200	/* then one "too many errors" line */

enum root_key { RK_MANIFEST, RK_NAME, RK_DESCRIPTION, RK_TARGETS, RK_RESOURCES, RK_EVENTS,
		RK__COUNT };
enum target_key { TK_ID, TK_BINARY, TK_BUILD_ID, TK__COUNT };
enum resource_key { RSK_NAME, RSK_CLASS, RSK_UNITS, RSK_CAPACITY, RSK_SHARED,
		    RSK_EXTERNALLY_OWNED, RSK_GENERATION, RSK_DESCRIPTION, RSK__COUNT };
enum event_key { EK_ID, EK_RESOURCE, EK_KIND, EK_SITE, EK_INSTANCE, EK_UNITS, EK_TARGET,
		 EK_TARGET_RESOURCE, EK_WHEN, EK_GENERATION, EK_RETURNS, EK_EXPECT,
		 EK_CONFIDENCE, EK_PROVENANCE, EK_DESCRIPTION, EK_PREDICTS, EK__COUNT };
enum site_key { SK_TARGET, SK_SYMBOL, SK_OFFSET, SK_USDT, SK_AT, SK__COUNT };
enum expect_key { XK_NEXT, XK_WITHIN, XK__COUNT };
enum prov_key { PK_SOURCE, PK_EVIDENCE, PK_DATE, PK__COUNT };
enum predict_key { PRK_EFFECT, PRK_MIN_DURATION, PRK_WAITER, PRK__COUNT };

/* The keys and values of one mapping, indexed by the enums above. */
struct fields {
	const struct ynode *key[24];
	const struct ynode *val[24];
	const char *const *known;	/* the mapping's field names */
	size_t n_known;
	uint32_t hinted;	/* bit k: an unknown key was suggested to be known[k] */
};

/* Per-item facts the checks need: the nodes, and which fields parsed
 * cleanly (a field that already produced an error is not checked again,
 * so one mistake gives one finding). */
struct target_info {
	struct fields f;
};

struct resource_info {
	struct fields f;
	bool name_ok;
};

struct event_info {
	struct fields f;
	struct fields site;
	struct pb_loc site_loc;	/* of the site mapping (site.loc is its symbol) */
	bool is_map;		/* the event is a mapping at all */
	bool has_site;		/* site mapping present and usable */
	bool kind_ok;
	bool at_ok;		/* site.at parsed (or defaulted) */
	bool at_explicit;
	bool site_kind_ok;	/* exactly one of symbol / usdt */
	bool instance_ok, units_ok, target_ok, when_ok, generation_ok;
	bool returns_ok;
	bool site_target_given;
	/* per predicts[] entry: the nodes of its fields (NULL entries when
	 * the item did not parse); n_predicts entries */
	struct fields *pred;
};

struct mctx {
	const char *file;
	struct diags *d;	/* private list, sorted and handed over at the end */
	size_t n_findings;
	size_t n_errors;
	bool oom;
	bool capped;
	struct manifest *m;
	struct target_info *ti;
	struct resource_info *ri;
	struct event_info *ei;
	size_t n_ei;		/* entries of ei */
	struct fields root;
	bool bad_target_id;	/* some target id or resource name did not parse */
	bool bad_resource_name;
};

/* Report a finding at loc for field "parent.key" (either may be NULL). */
void mctx__report(struct mctx *c, enum diag_severity sev, struct pb_loc loc, const char *parent,
		  const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define merr(c, loc, parent, key, ...) mctx__report(c, DIAG_ERROR, loc, parent, key, __VA_ARGS__)
#define mwarn(c, loc, parent, key, ...) mctx__report(c, DIAG_WARNING, loc, parent, key, __VA_ARGS__)

/* "; did you mean 'x'?" for the closest candidate, or "" (buf); returns
 * the candidate's index or -1. */
int suggest(const char *word, size_t word_len, const char *const *cands, size_t n,
	    bool ignore_case, char *buf, size_t sz);

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Typed field access (manifest_fields.c): each returns true when the node
 * is valid (and fills *out), else reports at the node and returns false.
 * parent.key names the field in messages. */
bool mf_want_scalar(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		    const char *what);
bool mf_want_map(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 const char *example);
bool mf_want_list(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		  const char *one, const char *many, size_t max);
/* Split a mapping into the known fields; unknown and duplicate keys are
 * reported (with a "did you mean" when one is close). */
bool mf_map_fields(struct mctx *c, const struct ynode *map, const char *path,
		   const char *const *known, size_t n_known, struct fields *f);
/* "required field is missing", unless an unknown key was already
 * suggested to be this one */
void mf_missing(struct mctx *c, const struct fields *f, struct pb_loc loc, const char *parent,
		const char *key, const char *hint);

bool mf_get_string(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		   char **out);
bool mf_get_name(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 const char *extra, const char *what, char **out);
bool mf_get_u64(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		const char *what, uint64_t *out);
bool mf_get_bool(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 bool *out);
bool mf_get_enum(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 const char *const *names, size_t n, size_t n_shown, int *out);
bool mf_get_value(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		  struct pb_value *out);
bool mf_get_guard(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		  struct pb_guard *out);
bool mf_get_duration(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		     uint64_t *out);
bool mf_get_date(struct mctx *c, const struct ynode *v, const char *parent, const char *key,
		 char **out);

bool mf_has_nul(const struct ynode *v);
bool mf_name_char(char ch, const char *extra);
int mf_dup_str(struct mctx *c, const struct ynode *v, char **out);
/* file position of byte col of a scalar's text */
struct pb_loc mf_text_loc(const struct ynode *v, int col);

/* Stage 2: root node -> c->m (allocated even when errors are found). */
int manifest__build(struct mctx *c, const struct ynode *root);
/* Stage 3: cross-field and cross-item checks on c->m. */
void manifest__check(struct mctx *c);

/* The parser's field-name and enum tables (manifest_parse.c), for the
 * JSON Schema and the "left to fill" hints (manifest_schema.c). */
struct mf_table {
	const char *name;	/* "event", "site", ... or the enum: "kind", ... */
	const char *const *items;
	size_t n;
	bool is_enum;
};
extern const struct mf_table mf_tables[];	/* ends with a NULL name */
/* What a field of table obj expects, for a "left to fill" finding
 * (manifest_schema.c); "" when unknown. */
void mf_field_hint(const char *obj, const char *key, char *buf, size_t sz);

#endif
