/* SPDX-License-Identifier: BSD-2-Clause */
/* lineage.c: a generation's ancestors (the receipts' parent links) and
 * its activation intervals (the lifecycle log), for `receipts show`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "receipts/lineage.h"
#include "receipts/receipts_int.h"

/* ---------------------------------- lineage ---------------------------------- */

/* Prepend an item (the walk goes from the generation to the root). */
static int lineage_push(struct lineage *l, enum lineage_kind kind, const char *gen, const char *rec)
{
	struct lineage_item *items = realloc(l->items, (l->n + 1) * sizeof(*items));

	if (!items)
		return -ENOMEM;
	l->items = items;
	memmove(items + 1, items, l->n * sizeof(*items));
	items[0].kind = kind;
	items[0].generation_id = strdup(gen);
	items[0].receipt = rec ? strdup(rec) : NULL;
	l->n++;
	if (!items[0].generation_id || (rec && !items[0].receipt))
		return -ENOMEM;
	return 0;
}

int lineage__build(struct pb_store *s, const json_t *stmt, struct lineage *out)
{
	char gen[PB_DIGEST_HEX_LEN], r[PB_DIGEST_HEX_LEN];
	struct receipt_view v;
	json_t *cur = json_incref((json_t *)stmt), *rec;
	int depth = 0, err = 0;

	memset(out, 0, sizeof(*out));
	receipt__decode(stmt, &v, NULL);	/* the ids are what matter */
	if (v.generation_id)
		err = lineage_push(out, LINEAGE_SELF, v.generation_id, NULL);
	while (!err && v.parent_generation_id && depth++ < 10000) {
		const char *par = v.parent_generation_id;

		if (receipts__find_generation(s, par, gen, r) || store__get_json(s, r, &rec)) {
			err = lineage_push(out, LINEAGE_MISSING, par, NULL);
			break;
		}
		err = lineage_push(out, LINEAGE_ANCESTOR, gen, r);
		json_decref(cur);
		cur = rec;
		receipt__decode(cur, &v, NULL);
	}
	json_decref(cur);
	if (err)
		lineage__clear(out);
	return err;
}

json_t *lineage__to_json(const struct lineage *l)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < l->n; i++) {
		const struct lineage_item *it = &l->items[i];
		json_t *j = json_pack("{s:s}", PK_GENERATION_ID, it->generation_id);

		if (j && it->kind != LINEAGE_SELF)
			json_object_set_new(j, LK_RECEIPT, it->receipt ? json_string(it->receipt) : json_null());
		json_array_append_new(arr, j);
	}
	return arr;
}

void lineage__clear(struct lineage *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->items[i].generation_id);
		free(l->items[i].receipt);
	}
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* ---------------------------- activation intervals ---------------------------- */

static struct activation_interval *interval_push(struct activation_intervals *a)
{
	struct activation_interval *iv = realloc(a->iv, (a->n + 1) * sizeof(*iv));

	if (!iv)
		return NULL;
	a->iv = iv;
	iv = &a->iv[a->n++];
	memset(iv, 0, sizeof(*iv));
	return iv;
}

static int open_swapper(struct activation_intervals *a, const struct lifelog_entry *e)
{
	struct activation_interval *iv = interval_push(a);

	if (!iv)
		return -ENOMEM;
	iv->link_json = e->link_json;
	iv->has_link = e->has_link;
	iv->link = e->link;
	iv->jit_ranges = e->jit_ranges;
	iv->prog_id = e->prog_id;
	iv->start_mono_ns = e->swap_begin_mono_ns;
	iv->start_mono_ns_latest = e->swap_end_mono_ns;
	iv->start_realtime_ns = e->swap_begin_realtime_ns;
	iv->start_realtime_ns_latest = e->swap_end_realtime_ns;
	return 0;
}

/* observer entries carry syscall times in CLOCK_MONOTONIC only: map them
 * to wall time with the entry's own clock pair */
static int64_t wall_offset(const struct lifelog_entry *e)
{
	return (int64_t)e->realtime_ns - (int64_t)e->mono_ns;
}

static int open_observed(struct activation_intervals *a, const struct lifelog_entry *e)
{
	struct activation_interval *iv = interval_push(a);
	int64_t off = wall_offset(e);

	if (!iv)
		return -ENOMEM;
	iv->observed = true;
	iv->has_link = true;
	iv->link.id = e->link_id;
	iv->link.type = e->link_type;
	iv->link.ifindex = e->ifindex;
	iv->prog_id = e->new_prog_id;
	iv->start_mono_ns = e->syscall_enter_mono_ns;
	iv->start_mono_ns_latest = e->syscall_exit_mono_ns;
	iv->start_realtime_ns = e->syscall_enter_mono_ns + off;
	iv->start_realtime_ns_latest = e->syscall_exit_mono_ns + off;
	return 0;
}

int activation_intervals__build(const json_t *entries, const char *gen,
				struct activation_intervals *out)
{
	struct activation_interval *last = NULL;
	bool open = false;
	const json_t *j;
	size_t i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	json_array_foreach(entries, i, j) {
		struct lifelog_entry e;
		bool mine, lu;

		lifelog_entry__decode(j, &e, NULL);	/* absent fields read as 0 */
		mine = !strcmp(e.generation_id ?: "", gen);
		lu = e.kind == LIFE_LINK_UPDATED;
		if (mine && e.kind == LIFE_ACTIVATED) {
			err = open_swapper(out, &e);
			open = !err;
		} else if (lu && !strcmp(e.new_generation_id ?: "", gen)) {
			err = open_observed(out, &e);
			open = !err;
		} else if (last && lu && !strcmp(e.old_generation_id ?: "", gen) &&
			   (open || (last->ended && !strcmp(last->end_reason, "unloaded") &&
				     (int64_t)e.syscall_exit_mono_ns < last->end_mono_ns))) {
			/* the observer's two sources may log the unload before
			 * the update that retired the program: the update ends it */
			last->ended = true;
			last->end_mono_ns = e.syscall_exit_mono_ns;
			last->end_realtime_ns = e.syscall_exit_mono_ns + wall_offset(&e);
			last->end_reason = "replaced (observed link update)";
			open = false;
		} else if (open && mine && (e.kind == LIFE_RETIRED || e.kind == LIFE_UNLOADED)) {
			last->ended = true;
			last->end_mono_ns = e.mono_ns;
			last->end_realtime_ns = e.realtime_ns;
			last->end_reason = e.kind == LIFE_RETIRED ? e.reason ?: "retired" : "unloaded";
			open = false;
		}
		if (err)
			break;
		if (out->n)
			last = &out->iv[out->n - 1];
	}
	if (err)
		activation_intervals__clear(out);
	return err;
}

static json_t *interval_link_json(const struct activation_interval *iv)
{
	if (!iv->observed)
		return iv->link_json ? json_incref((json_t *)iv->link_json) : json_null();
	return json_pack("{s:I, s:I, s:o}", LINKK_ID, (json_int_t)iv->link.id,
			 LINKK_TYPE, (json_int_t)iv->link.type, LINKK_IFINDEX,
			 iv->link.ifindex >= 0 ? json_integer(iv->link.ifindex) : json_null());
}

static json_t *or_null(bool ended, json_int_t v)
{
	return ended ? json_integer(v) : json_null();
}

json_t *activation_intervals__to_json(const struct activation_intervals *a)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < a->n; i++) {
		const struct activation_interval *iv = &a->iv[i];

		json_array_append_new(arr, json_pack(
			"{s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
			"source", iv->observed ? "observer" : "swapper",
			"link", interval_link_json(iv),
			"jit_ranges", iv->jit_ranges ? json_incref((json_t *)iv->jit_ranges) : json_array(),
			"start_mono_ns", (json_int_t)iv->start_mono_ns,
			"start_mono_ns_latest", (json_int_t)iv->start_mono_ns_latest,
			"start_realtime_ns", (json_int_t)iv->start_realtime_ns,
			"start_realtime_ns_latest", (json_int_t)iv->start_realtime_ns_latest,
			"prog_id", (json_int_t)iv->prog_id,
			"end_mono_ns", or_null(iv->ended, iv->end_mono_ns),
			"end_realtime_ns", or_null(iv->ended, iv->end_realtime_ns),
			"end_reason", iv->ended ? json_string(iv->end_reason) : json_null()));
	}
	return arr;
}

void activation_intervals__clear(struct activation_intervals *a)
{
	free(a->iv);
	memset(a, 0, sizeof(*a));
}
